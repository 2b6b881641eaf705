"""Smoke runs of the benchmark scripts, so they never rot.

Each script's ``main`` runs in-process with ``--smoke`` (2,000 training rows,
1 run, 1 epoch, budget 20) on small sets and writes into ``tmp_path``; the
tests check that the JSON and markdown hold the expected keys and rows.
Skipped when the data folder lacks the files.
"""

import json
import math
import sys
from pathlib import Path

import pytest


BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import _harness  # noqa: E402
import bounds_paper_tables  # noqa: E402
import bsgd_paper_tables  # noqa: E402
import bsgd_vs_svc  # noqa: E402
import defaults_vs_svc  # noqa: E402
import imbalanced_weights  # noqa: E402
import margin_sgd_vs_svc  # noqa: E402
import multiclass_split  # noqa: E402
import nystrom_memory  # noqa: E402
import run_all  # noqa: E402
import small_sets_cv  # noqa: E402
import snacks_paper_tables  # noqa: E402

SETS = ["phishing", "a9a"]
SNACKS_SETS = ["a9a", "usps"]   # a paper set and the multi-class one


pytestmark = pytest.mark.data(*SETS)


def _read(out, name):
    payload = json.loads((out / f"{name}.json").read_text())
    markdown = (out / f"{name}.md").read_text()
    return payload, markdown


PAYLOAD_KEYS = {"settings", "machine", "results", "wall_s"}  # presence only; times are never asserted


def _check_common(payload):
    assert set(payload) >= PAYLOAD_KEYS
    assert payload["settings"]["smoke"] is True
    for key in ("date", "fastsvm", "platform", "cpu_count", "python"):
        assert key in payload["machine"]


def test_paper_tables_smoke(tmp_path, monkeypatch):
    monkeypatch.setattr(bsgd_paper_tables, "STEP_SIZE_SETS", ("phishing",))
    bsgd_paper_tables.main(["--smoke", "--out", str(tmp_path), "--sets", *SETS])
    payload, md = _read(tmp_path, "bsgd_paper_tables")
    _check_common(payload)
    cells = payload["results"]["cells"]
    assert [(c["set"], c["budget"]) for c in cells] == [(s, 20) for s in SETS]
    for cell in cells:
        assert set(cell["methods"]) == set(bsgd_paper_tables.METHODS)
        assert len(cell["raw"]) == len(bsgd_paper_tables.METHODS)  # 1 run x 4 methods
        for agg in cell["methods"].values():
            assert 0.5 < agg["accuracy_mean"] <= 1.0
            assert agg["median_time_fit_s"] > 0
            for key in ("median_time_maintenance_s", "median_time_section_a_s",
                        "median_time_section_b_s", "merge_frequency",
                        "median_steps_per_second", "median_us_per_merge"):
                assert key in agg
        for lookup in bsgd_paper_tables.LOOKUPS:
            assert set(cell["savings"][lookup]) == {
                "total_time_saving_of_medians", "total_time_saving_paired_median",
                "merge_time_saving_of_medians"}
    diags = payload["results"]["diagnostics"]
    assert [d["set"] for d in diags] == SETS
    for d in diags:
        assert 0.0 <= d["equal_decisions_gss_lookup_wd"] <= 1.0
        assert d["wd_factor_gss"] >= 1.0 - 1e-9
        assert "wd_factor_lookup_wd" in d and "wd_factor_lookup_h" in d
    assert "## Table 2" in md and "## Table 3" in md and "merge decisions" in md
    [steps] = payload["results"]["step_sizes"]
    assert (steps["set"], steps["budget"]) == ("phishing", 20)
    for rate in ("pegasos", "linear-decay"):
        assert 0.5 < steps[rate]["accuracy_mean"] <= 1.0 and len(steps[rate]["accuracies"]) == 1
    assert "## Step sizes" in md
    for s in SETS:
        for method in bsgd_paper_tables.METHODS:
            assert f"| {s} | 20 | {method} |" in md
    assert (tmp_path / "bsgd_paper_tables.png").stat().st_size > 0


def test_vs_svc_smoke(tmp_path):
    # The cap looks at the full training set: --svc-max-n 10000 lies between
    # phishing (8,844 rows: SVC on all smoke rows) and a9a (32,561 rows: SVC
    # capped, on a subsample), so both paths run.
    bsgd_vs_svc.main(["--smoke", "--out", str(tmp_path), "--sets", *SETS,
                      "--svc-max-n", "10000"])
    payload, md = _read(tmp_path, "bsgd_vs_svc")
    _check_common(payload)
    by_set = {e["set"]: e for e in payload["results"]}
    assert list(by_set) == SETS
    phishing = [r["model"] for r in by_set["phishing"]["rows"]]
    a9a = [r["model"] for r in by_set["a9a"]["rows"]]
    assert phishing == ["BudgetSVC", "SVC"]            # 8,844 rows: under the cap
    assert a9a == ["BudgetSVC", "BudgetSVC", "SVC"]    # 32,561 rows: SVC on a subsample
    assert by_set["a9a"]["rows"][2]["n_rows"] == 1000
    for entry in payload["results"]:
        for r in entry["rows"]:
            assert 0.5 < r["accuracy"] <= 1.0 and r["fit_s"] > 0 and r["n_support"] > 0
        assert entry["rows"][-1]["time_ratio_svc_over_budgetsvc"] > 0
        assert entry["rows"][0]["steps_per_second"] > 0
    assert "SVC capped" in md
    for s in SETS:
        assert f"| {s} | BudgetSVC |" in md and f"| {s} | SVC |" in md
    assert (tmp_path / "bsgd_vs_svc.png").stat().st_size > 0


@pytest.mark.data("usps")
def test_snacks_paper_tables_smoke(tmp_path):
    snacks_paper_tables.main(["--smoke", "--out", str(tmp_path), "--sets", *SNACKS_SETS])
    payload, md = _read(tmp_path, "snacks_paper_tables")
    _check_common(payload)
    assert "## Certified optimum" in md
    models = ["NystromSVC (ASSG)", "Pegasos", "LinearSVC", "NystromSVC (DCD)", "SVC",
              "Nystroem + SGDClassifier"]
    for entry in payload["results"]:
        assert [r["model"] for r in entry["rows"]] == models
        dcd = entry["rows"][3]
        assert dcd["duality_gap"] <= 1e-3                            # certified
        assert dcd["objective"] <= 1.001 * entry["rows"][0]["objective"]   # not above ASSG
        for r in entry["rows"]:
            assert 0.0 <= r["error"] < 50.0 and r["train_s"] > 0 and r["peak_mb"] >= 0
        snacks, pegasos, linear = entry["rows"][:3]
        assert snacks["r"] <= payload["settings"]["sets"][entry["set"]]["m"]
        assert snacks["embedding_s"] > 0 and snacks["embedding_mb"] > 0
        # the same embedding: every solver's objective lies above LIBLINEAR's (near) optimum
        for r in (snacks, pegasos):
            assert r["objective"] >= 0.99 * linear["objective"]
        assert "train_time_ratio_vs_snacks" in pegasos
    assert payload["results"][0]["paper"]["Snacks"] == [1.01, 15.2]  # a9a, Table III
    assert payload["results"][1]["rows"][0]["raw"][0]["r"] > 0   # usps, one-vs-rest
    for s in SNACKS_SETS:
        assert f"| {s} | NystromSVC (ASSG) |" in md and f"| {s} | LinearSVC |" in md
    assert (tmp_path / "snacks_paper_tables.png").stat().st_size > 0


BOUNDS_SETS = ["a9a", "phishing"]   # a sparse paper-style set and a kernel-Pegasos set


def test_bounds_paper_tables_smoke(tmp_path):
    bounds_paper_tables.main(["--smoke", "--out", str(tmp_path), "--sets", *BOUNDS_SETS,
                              "--kernel-sets", "phishing"])
    payload, md = _read(tmp_path, "bounds_paper_tables")
    _check_common(payload)
    entries = payload["results"]["sets"]
    assert [e["set"] for e in entries] == BOUNDS_SETS
    for e in entries:
        assert [g["tol"] for g in e["gd"]] == list(bounds_paper_tables.TOLS)
        iterations = [g["iterations"] for g in e["gd"]]
        assert iterations == sorted(iterations)          # a looser epsilon stops no later
        for g in e["gd"]:
            assert 0 < g["examined_per_iteration"] <= 1 and g["speedup"] > 0
            assert 0 <= g["test_error"] < 50
        assert "max_coef_rel_diff" in e["gd"][-1]
        assert [p["k"] for p in e["pegasos"]] == list(bounds_paper_tables.BATCHES)
        for p in e["pegasos"]:
            assert p["identical"]                         # the bounds never change the model
            assert p["examined_alg3"] > 0 and p["examined_scaled"] > 0
    (kernel,) = payload["results"]["kernel"]
    assert kernel["set"] == "phishing" and kernel["identical"] and kernel["n_support"] > 0
    assert "## Table 2" in md and "## Table 3" in md and "## Kernel Pegasos" in md
    for s in BOUNDS_SETS:
        assert f"| {s} | 1e-06 |" in md
    assert (tmp_path / "bounds_paper_tables.png").stat().st_size > 0


MARGIN_SETS = ["phishing", "usps"]   # binary and multi-class


def test_margin_sgd_vs_svc_smoke(tmp_path):
    margin_sgd_vs_svc.main(["--smoke", "--out", str(tmp_path), "--sets", *MARGIN_SETS])
    payload, md = _read(tmp_path, "margin_sgd_vs_svc")
    _check_common(payload)
    assert [e["set"] for e in payload["results"]] == MARGIN_SETS
    for entry in payload["results"]:
        rows = entry["rows"]
        assert [r["model"] for r in rows] == ["SVC", "BudgetSVC"] + ["MarginSGDSVC"] * 5
        # halving: all 27 candidates pass over a subsample, the survivors over more rows
        assert rows[2]["n_passes"] > 27 and all(r["n_passes"] == 3 for r in rows[3:])
        gamma = rows[2]["raw"][0]["gamma"]              # the variants reuse the tuned gamma
        assert all(g == gamma for r in rows[3:] for g, _ in r["chosen"])
        assert {(r["update"], r["sampling"]) for r in rows[3:]} == set(margin_sgd_vs_svc.VARIANTS)
        for r in rows:
            assert 0.5 < r["accuracy"] <= 1.0 and r["fit_s"] > 0 and r["n_support"] > 0
            assert r["time_ratio_svc"] > 0
    for s in MARGIN_SETS:
        assert f"| {s} | SVC |" in md and f"| {s} | MarginSGDSVC | defaults" in md
    assert (tmp_path / "margin_sgd_vs_svc.png").stat().st_size > 0


def test_run_all_passes_the_arguments_to_every_script_in_turn(monkeypatch):
    """run_all calls each script's ``main`` once, in order, with the same arguments and one
    shared smoke folder; each script's own smoke run is tested above and below, so here
    each stand-in only checks that the script's parser accepts them."""
    parsers = {name: getattr(run_all, name) for name in run_all.SCRIPTS}   # the modules
    calls = []

    def stand_in(name):
        def main(argv):
            assert parsers[name].parse_args(argv).smoke
            calls.append((name, list(argv)))
            return name
        return main

    monkeypatch.setattr(run_all, "SCRIPTS", {name: stand_in(name) for name in run_all.SCRIPTS})
    payloads = run_all.main(["--smoke", "--sets", "phishing"])
    assert payloads == {name: name for name in run_all.SCRIPTS}
    assert [name for name, _ in calls] == list(run_all.SCRIPTS)
    (argv,) = {tuple(argv) for _, argv in calls}          # the same arguments for every script
    assert argv[:3] == ("--smoke", "--sets", "phishing") and argv[3] == "--out"
    assert Path(argv[4]).is_dir()                          # one temporary folder for all outputs
    calls.clear()
    assert run_all.main(["--only", "defaults_vs_svc", "small_sets_cv", "--smoke", "--out", "x",
                         "--sets", "phishing"]) == {"defaults_vs_svc": "defaults_vs_svc",
                                                     "small_sets_cv": "small_sets_cv"}
    assert calls == [(name, ["--smoke", "--out", "x", "--sets", "phishing"])
                     for name in ("defaults_vs_svc", "small_sets_cv")]


def test_smoke_never_writes_results_dir():
    args = bsgd_paper_tables.parse_args(["--smoke", "--out", str(_harness.RESULTS_DIR)])
    with pytest.raises(SystemExit):
        _harness.output_dir(args)
    default = _harness.output_dir(bsgd_vs_svc.parse_args(["--smoke"]))
    assert default.resolve() != _harness.RESULTS_DIR.resolve()
    default.rmdir()


IMBALANCED_TASKS = ["usps-ovr"]   # the smallest task: usps's rarest digit vs rest


@pytest.mark.data("usps")
def test_imbalanced_weights_smoke(tmp_path):
    imbalanced_weights.main(["--smoke", "--out", str(tmp_path), "--sets", *IMBALANCED_TASKS])
    payload, md = _read(tmp_path, "imbalanced_weights")
    _check_common(payload)
    task = payload["settings"]["tasks"]["usps-ovr"]
    assert task["positive_label"] == 9.0                 # digit 8: 542 of 7,291 training rows
    assert task["n_train"] == _harness.SMOKE_TRAIN_ROWS and task["minority_share"] < 0.1
    (entry,) = payload["results"]
    assert entry["task"] == "usps-ovr"
    assert [r["model"] for r in entry["rows"]] == list(imbalanced_weights.MODELS)
    for r in entry["rows"]:
        assert r["runs"] == 1
        for key in ("None", "balanced"):
            assert 0.5 < r[key]["balanced_accuracy"] <= 1.0 and 0.5 < r[key]["accuracy"] <= 1.0
            assert r[key]["fit_s"] > 0 and len(r["raw"][key]) == 1
        change = 100 * (r["balanced"]["balanced_accuracy"] - r["None"]["balanced_accuracy"])
        assert r["change_points"] == pytest.approx(change)
    for model in imbalanced_weights.MODELS:
        assert f"| usps-ovr | {model} | 1 |" in md
    assert "bal. acc, 'balanced'" in md
    assert (tmp_path / "imbalanced_weights.png").stat().st_size > 0


def test_defaults_vs_svc_smoke(tmp_path):
    # the generated smoke sets: dense binary, CSR, 5 classes
    defaults_vs_svc.main(["--smoke", "--out", str(tmp_path)])
    payload, md = _read(tmp_path, "defaults_vs_svc")
    _check_common(payload)
    settings, results = payload["settings"], payload["results"]
    assert list(settings["sets"]) == defaults_vs_svc.SMOKE_SETS
    assert settings["sets"]["wide_sparse"]["sparse"] and not settings["sets"]["small"]["sparse"]
    assert settings["sets"]["multiclass"]["n_classes"] == 5
    for info in settings["sets"].values():
        assert info["n_train"] <= defaults_vs_svc.SMOKE_ROWS
    labels = list(settings["estimators"])
    assert "PegasosSVC(kernel='rbf')" in labels and "BudgetSVC" in labels
    for label, est in settings["estimators"].items():
        # nothing but random_state (and the kernel of the rbf Pegasos row) is set
        assert set(est["arguments"]) <= {"random_state", "kernel"}
        assert est["arguments"].get("random_state", 0) == 0
    assert settings["svc_params"]["C"] == 1.0 and settings["svc_params"]["gamma"] == "scale"
    for entry in results["sets"]:
        rows = entry["rows"]
        # the linear estimators' reference, scikit-learn's LinearSVC, after SVC
        assert [r["model"] for r in rows] == ["SVC", "LinearSVC"] + labels
        assert rows[0]["accuracy_minus_svc"] == 0 and rows[0]["time_ratio_svc"] == 1
        gaps = {r["model"]: r["accuracy_minus_linear"] for r in rows
                if "accuracy_minus_linear" in r}
        assert set(gaps) == {"PegasosSVC", "HuberSVC"}
        assert gaps["HuberSVC"] == pytest.approx(100 * (rows[-1]["accuracy"]
                                                        - rows[1]["accuracy"]))
        for r in rows:
            assert 0.0 <= r["accuracy"] <= 1.0 and 0.0 <= r["balanced_accuracy"] <= 1.0
            assert r["fit_s"] > 0 and r["predict_s"] > 0 and r["time_ratio_svc"] > 0
            assert r["repeats"] == 1 and isinstance(r["warnings"], dict)
    assert [s["model"] for s in results["summary"]] == labels
    for s in results["summary"]:
        assert 0 <= s["within"] <= s["n_sets"] == len(defaults_vs_svc.SMOKE_SETS)
        assert (s["within_linear"] is None) == (s["model"] not in gaps)
        assert s["n_large"] == 0        # smoke sets have fewer than 5,000 training rows
    assert results["warmup_command_s"] > 0
    assert [r["model"] for r in results["first_fit"]] == labels[:1]    # the first only
    for r in results["first_fit"]:
        assert r["cold_fit_s"] > 0 and r["warm_fit_s"] > 0 and r["import_s"] >= 0
        assert "no_cache_fit_s" not in r            # smoke runs skip the empty-cache fits
    assert "## Summary" in md and "## First fit: cold against warm" in md
    for s in defaults_vs_svc.SMOKE_SETS:
        assert f"| {s} | SVC |" in md and f"| {s} | BudgetSVC |" in md
    assert (tmp_path / "defaults_vs_svc.png").stat().st_size > 0


def test_multiclass_split_smoke(tmp_path):
    multiclass_split.main(["--smoke", "--out", str(tmp_path), "--sets", "phishing"])
    payload, md = _read(tmp_path, "multiclass_split")
    _check_common(payload)
    settings, cases = payload["settings"], payload["results"]["cases"]
    assert list(settings["sets"]) == multiclass_split.SMOKE_SETS    # phishing ignored
    assert settings["repeats"] == 1
    for case in cases:
        info = settings["sets"][case["set"]]
        assert info["train_rows"] <= 2000 and info["classes"] >= 3
        rows = case["rows"]
        assert [r["model"] for r in rows] == list(multiclass_split.MODELS)
        assert rows[0]["accuracy_minus_svc"] == 0
        for r in rows:
            assert r["runs"] == 1 and 0 < r["accuracy_mean"] <= 1 and r["size"] > 0
            assert r["accuracy_minus_svc"] == pytest.approx(
                100 * (r["accuracy_mean"] - rows[0]["accuracy_mean"]))
        assert f"| {case['set']} | BudgetSVC ovo |" in md
    assert (tmp_path / "multiclass_split.png").stat().st_size > 0


def test_small_sets_cv_smoke(tmp_path):
    # scikit-learn's bundled iris and wine; no data folder needed
    small_sets_cv.main(["--smoke", "--out", str(tmp_path)])
    payload, md = _read(tmp_path, "small_sets_cv")
    _check_common(payload)
    settings, results = payload["settings"], payload["results"]
    sets = small_sets_cv.SMOKE_SETS
    assert list(settings["sets"]) == sets
    assert settings["repeats"] == 1 and settings["folds"] == small_sets_cv.SMOKE_FOLDS
    iris, wine = settings["sets"]["iris"], settings["sets"]["wine"]
    assert (iris["n_samples"], iris["n_features"], iris["n_classes"]) == (150, 4, 3)
    assert (wine["n_samples"], wine["n_features"], wine["n_classes"]) == (178, 13, 3)
    labels = list(small_sets_cv.ESTIMATORS)
    assert list(settings["estimators"]) == labels
    assert "PegasosSVC(kernel='rbf')" in labels and "HuberSVC" not in labels
    for label, est in settings["estimators"].items():
        # nothing but random_state (and the kernel of the rbf Pegasos) is set
        assert set(est["arguments"]) <= {"kernel"} and est["random_state"] == "rep"
        assert est["params"]["random_state"] == 0 and est["params"]["kernel"] == "rbf"
    assert settings["svc_params"]["C"] == 1.0 and settings["svc_params"]["gamma"] == "scale"
    cases = results["cases"]
    assert [(c["variant"], c["set"]) for c in cases] == [
        (v, s) for v in small_sets_cv.VARIANTS for s in sets]
    for case in cases:
        rows = case["rows"]
        assert [r["model"] for r in rows] == ["SVC"] + labels
        assert rows[0]["accuracy_minus_svc"] == 0
        for r in rows:
            assert r["n_fits"] == len(r["folds"]) == small_sets_cv.SMOKE_FOLDS
            assert [f["fold"] for f in r["folds"]] == list(range(small_sets_cv.SMOKE_FOLDS))
            accs = [f["accuracy"] for f in r["folds"]]
            assert all(0.0 <= a <= 1.0 for a in accs)
            assert r["accuracy_mean"] == pytest.approx(sum(accs) / len(accs))
            assert r["repeat_means"] == [pytest.approx(r["accuracy_mean"])]
            assert r["accuracy_std_repeats"] == 0 and r["gap_std_repeats"] == 0  # one repeat
            assert r["accuracy_minus_svc"] == pytest.approx(
                100 * (r["accuracy_mean"] - rows[0]["accuracy_mean"]))
            assert r["fit_s_median"] > 0 and r["time_ratio_svc"] > 0
            assert isinstance(r["warnings"], dict)
            assert r["n_warnings"] == sum(r["warnings"].values())
        if case["variant"] == "scaled" or case["set"] == "iris":
            assert rows[0]["accuracy_mean"] > 0.85     # SVC() on iris, or standardised
    assert [s["model"] for s in results["summary"]] == labels
    n_cases = len(small_sets_cv.VARIANTS) * len(sets)
    for s in results["summary"]:
        gaps = [r["accuracy_minus_svc"] for c in cases for r in c["rows"]
                if r["model"] == s["model"]]
        assert s["n_cases"] == n_cases
        assert s["within"] == sum(g >= -small_sets_cv.WITHIN_PP for g in gaps)
        assert s["worst_gap"] == pytest.approx(min(gaps))
        assert s["mean_gap"] == pytest.approx(sum(gaps) / len(gaps))
        assert f"| {s['model']} | {s['within']} / {n_cases} |" in md
    assert "## Summary" in md and "## Results" in md
    for v in small_sets_cv.VARIANTS:
        for s in sets:
            assert f"| {v} | {s} | SVC |" in md and f"| {v} | {s} | BudgetSVC |" in md
    assert (tmp_path / "small_sets_cv.png").stat().st_size > 0
    # names of other scripts' sets (run_all passes --sets on) are ignored
    args = small_sets_cv.parse_args(["--smoke", "--sets", "phishing"])
    assert args.sets == sets and args.ignored_sets == ["phishing"]
    assert small_sets_cv.parse_args(["--sets", "wine", "digits"]).sets == ["digits", "wine"]
    full = small_sets_cv.parse_args([])
    assert full.sets == list(small_sets_cv.SETS) and (full.repeats, full.folds) == (3, 5)

def test_nystrom_memory_smoke(tmp_path):
    # generated data, every fit in its own process; no data folder needed
    nystrom_memory.main(["--smoke", "--out", str(tmp_path)])
    payload, md = _read(tmp_path, "nystrom_memory")
    _check_common(payload)
    settings, results = payload["settings"], payload["results"]
    sizes = nystrom_memory.SMOKE_SIZES
    assert settings["sizes"] == sizes and settings["n_components"] == 50
    assert [(r["n"], r["mode"]) for r in results] == [
        (n, mode) for n in sizes for mode in nystrom_memory.MODES]
    for r in results:
        assert "error" not in r and "skipped" not in r, r
        assert 0.5 < r["accuracy"] <= 1.0 and r["fit_s"] > 0 and r["samples"] >= 2
        for key in ("baseline_anon_mb", "baseline_rss_mb", "peak_anon_mb", "peak_rss_mb"):
            assert math.isfinite(r[key]) and r[key] > 0
        # a peak over the fit is never below the baseline taken just before it
        assert r["peak_anon_increase_mb"] >= 0 and r["peak_rss_increase_mb"] >= 0
        assert math.isfinite(r["peak_anon_increase_mb"] + r["peak_rss_increase_mb"])
    for n in sizes:
        by_mode = {r["mode"]: r for r in results if r["n"] == n}
        memory, file = by_mode["memory"], by_mode["file"]
        assert memory["embedding_in_memory"] is True and file["embedding_in_memory"] is False
        assert memory["embedding_shape"] == file["embedding_shape"]
        rows, r = memory["embedding_shape"]
        assert rows == n and 0 < r <= 50
        assert memory["embedding_mb"] == file["embedding_mb"] == pytest.approx(n * r * 4 / 2**20)
        assert file["embedding_mb"] > settings["max_embedding_mb"]["file"]
        # the budget never changes the model
        assert memory["accuracy"] == file["accuracy"]
        assert memory["model_sha256"] == file["model_sha256"]
        assert memory["n_iter"] == file["n_iter"] > 0
        assert by_mode["BudgetSVC"]["n_support"] > 0
        assert f"| {n:,} | memory |" in md and f"| {n:,} | file |" in md
        assert f"- n = {n:,}: identical;" in md
    assert "peak anon +" in md
    assert (tmp_path / "nystrom_memory.png").stat().st_size > 0


def test_dask_scaling_smoke(tmp_path):
    # data generated on the workers of two LocalClusters (1 and 2 worker processes)
    pytest.importorskip("distributed")
    import dask_scaling

    dask_scaling.main(["--smoke", "--out", str(tmp_path)])
    payload, md = _read(tmp_path, "dask_scaling")
    _check_common(payload)
    settings, results = payload["settings"], payload["results"]
    assert settings["rows"] == dask_scaling.SMOKE_ROWS and settings["workers"] == [1, 2]
    assert [(r["estimator"], r["workers"]) for r in results["runs"]] == [
        (name, k) for k in (1, 2) for name in dask_scaling.ESTIMATORS]
    for r in results["runs"]:
        assert r["rows"] == dask_scaling.SMOKE_ROWS and r["partitions"] == 4
        assert 0.6 < r["accuracy"] <= 1.0 and r["fit_s"] > 0 and r["pass_s"] > 0
        assert len(r["worker_peak_mb"]) == len(r["worker_baseline_mb"]) == r["workers"]
        # a peak over the fit is never below the RSS taken just before it
        assert r["client_increase_mb"] >= 0 and min(r["worker_increase_mb"]) >= 0
        assert all(math.isfinite(v) and v > 0 for v in r["worker_peak_mb"])
        assert f"| {r['estimator']} | {r['workers']} | {r['rows']:,} |" in md
    huber = [r for r in results["runs"] if r["estimator"] == "DaskHuberSVC"]
    assert all(r["passes"] == r["n_iter"] == dask_scaling.SMOKE_HUBER_ITERS for r in huber)
    assert all(0 < r["examined_fraction"] <= 1 for r in huber)
    # the number of workers changes DaskHuberSVC's sums at most by rounding
    agreement = {g["estimator"]: g for g in results["agreement"]}
    assert set(agreement) == set(dask_scaling.ESTIMATORS)
    assert all(math.isfinite(g["decision_difference"]) for g in agreement.values())
    assert agreement["DaskHuberSVC"]["decision_difference"] < 1e-9
    assert [r["estimator"] for r in results["local"]] == list(dask_scaling.ESTIMATORS)
    for r in results["local"]:
        assert r["rows"] == dask_scaling.SMOKE_LOCAL_ROWS and r["workers"] == 2
        assert r["local"]["accuracy"] > 0.6 and r["dask"]["accuracy"] > 0.6
        assert f"| {r['local_estimator']} | {r['estimator']} | {r['rows']:,} |" in md
    assert "## Speed-up from 1 worker to 2 workers" in md and "## Peak memory" in md
    assert (tmp_path / "dask_scaling.png").stat().st_size > 0
