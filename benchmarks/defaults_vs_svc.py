"""Every fastsvm estimator at its defaults next to scikit-learn's SVC at its defaults.

What a new user gets without tuning.  Estimators (``ESTIMATORS``), each
built with nothing but ``random_state=0`` (HuberSVC takes none), so every
other setting is the estimator's own default, recorded in the JSON as
``get_params()`` reported it: BudgetSVC, NystromSVC, MarginSGDSVC,
``PegasosSVC(kernel='rbf')`` (the kernel Pegasos the issue names),
PegasosSVC at its default kernel (left out when that is 'rbf' too) and
HuberSVC; next to ``sklearn.svm.SVC()`` (C = 1, gamma = 'scale',
cache_size = 200 MB: its defaults too).  The linear estimators (PegasosSVC at
its default linear kernel, HuberSVC) learn a linear rule, which no setting
brings to an RBF SVC's accuracy on non-linear data: they are also set against
scikit-learn's linear SVM at its defaults, ``sklearn.svm.LinearSVC()``
(C = 1), the tool a user would otherwise pick for that model.

Sets: the shared a9a, ijcnn1, phishing, usps (10 classes), skin_nonskin and
covtype (``fastsvm.datasets.load_dataset``: the registry's splits; sets
without a test file get its stratified hold-out, seed 0) and the
generated small, wide_sparse (CSR), imbalanced, multiclass, noisy_moons,
dense_wide and sphere (``_generated.py``).  SVC is quadratic to cubic in n, so a set with more
than ``--max-train-rows`` training rows (default 30,000: skin_nonskin's
183,792, covtype's 464,809, ijcnn1's 49,990 and a9a's 32,561) is cut to a
stratified subsample of that many rows (seed 0) for every method alike, and
a test set above ``--max-test-rows`` (default 20,000) to a stratified test
subsample; the tables say which sets were cut.  All methods get the same
matrices (CSR for the shared sets and wide_sparse, dense for the other
generated sets).

Per (set, estimator): fit time, predict time (``predict`` on the test
rows), test accuracy and balanced accuracy (mean recall over the classes,
the measure for the imbalanced sets), accuracy minus SVC's in percentage
points, and SVC's fit time over the estimator's (> 1: faster than SVC).
One fit per (set, estimator); a fit that takes under a second is repeated,
and its fit and predict times are the median of ``--repeats`` (default 3)
identical fits (same random_state, same model): short times are the
noisiest.  Every estimator is fitted once on a
300-row sample of each set first, so that the timed fits run compiled code
already loaded.  Warnings raised by a fit are recorded with their counts.

First fit, cold against warm, on ``--first-fit-set`` (default a9a, cut to
``--first-fit-rows`` = 5,000 training rows), each estimator in a new Python
process that imports fastsvm, loads the data and fits twice:

* cold: the first fit in that process, with the compiled kernels loaded
  from numba's disk cache (the package's ``__pycache__`` folders), filled
  by ``python -m fastsvm warmup``, which the run calls at its start (what a
  user has after installing and warming up);
* warm: a second, identical fit in the same process;
* no cache: the first fit in a process whose ``NUMBA_CACHE_DIR`` is a new
  empty folder, so numba compiles every kernel the fit needs: what the
  warm-up saves (skipped with ``--no-compile`` and in smoke runs).

Beside them: the time of ``from fastsvm import <estimator>`` in that
process (numpy, scipy and scikit-learn already loaded).

Run ``python benchmarks/defaults_vs_svc.py`` (about 10 minutes on two
cores, most of it SVC and kernel Pegasos on the larger sets); ``--smoke``
for a check in seconds (500 training and 500 test rows of small,
wide_sparse and multiclass; first fits of the first estimator only, without
the empty-cache run).
Output:
``benchmarks/results/defaults_vs_svc.{json,md,png}``.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _generated  # noqa: E402
import _harness as H  # noqa: E402

NAME = "defaults_vs_svc"
SHARED_SETS = ("a9a", "ijcnn1", "phishing", "usps", "skin_nonskin", "covtype")
SETS = SHARED_SETS + tuple(_generated.GENERATORS)
SMOKE_SETS = ["small", "wide_sparse", "multiclass"]   # dense, CSR, 5 classes; no data folder
SMOKE_ROWS = 500   # training and test rows per set in smoke runs (seven models per set)
# label -> (fastsvm class, arguments besides random_state); the order is the tables'
ESTIMATORS = {
    "BudgetSVC": ("BudgetSVC", {}),
    "NystromSVC": ("NystromSVC", {}),
    "MarginSGDSVC": ("MarginSGDSVC", {}),
    "PegasosSVC(kernel='rbf')": ("PegasosSVC", {"kernel": "rbf"}),
    "PegasosSVC": ("PegasosSVC", {}),
    "HuberSVC": ("HuberSVC", {}),
}
SEED = 0
WARM_UP_ROWS = 300
REPEAT_UNDER_S = 1.0           # a fit faster than this is repeated (--repeats fits, median)
FAST_FROM_ROWS = 5_000         # the speed criterion counts sets from this many training rows
WITHIN_PP = 1.0                # the accuracy criterion: at most this many points below SVC
PLOT_FLOOR_PP = -10.0          # the plot draws larger accuracy gaps on this line
LINEAR_REFERENCE = "LinearSVC"   # the linear estimators' reference, at its defaults
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")   # recorded: BLAS threads change NystromSVC's times


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", choices=SETS, default=None,
                   help="data sets (default: all; with --smoke: " + " ".join(SMOKE_SETS) + ")")
    p.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS),
                   default=list(ESTIMATORS))
    p.add_argument("--max-train-rows", type=int, default=30_000,
                   help="stratified subsample of the training rows above this, for all methods")
    p.add_argument("--max-test-rows", type=int, default=20_000,
                   help="stratified subsample of the test rows above this")
    p.add_argument("--repeats", type=int, default=3,
                   help=f"fits of an estimator whose first fit took under {REPEAT_UNDER_S:g} s "
                        "(median)")
    p.add_argument("--first-fit-set", choices=SETS, default="a9a",
                   help="set of the cold / warm first-fit measurement")
    p.add_argument("--first-fit-rows", type=int, default=5000,
                   help="training rows of the first-fit measurement")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the first fits with an empty numba cache")
    args = p.parse_args(argv)
    if args.sets is None:
        args.sets = SMOKE_SETS if args.smoke else list(SETS)
    if args.smoke:
        args.repeats = 1
        args.max_train_rows = min(args.max_train_rows, SMOKE_ROWS)
        args.max_test_rows = min(args.max_test_rows, SMOKE_ROWS)
        args.first_fit_set = args.sets[0]
        args.first_fit_rows = min(args.first_fit_rows, SMOKE_ROWS)
        args.no_compile = True
    return args


# -------------------------------------------------------------- estimators
def estimator_params():
    """label -> constructor arguments of the estimators at their defaults.

    ``random_state=0`` where the estimator takes one; a label whose
    estimator has the same parameters as an earlier one (PegasosSVC when its
    default kernel is 'rbf') is left out.
    """
    import fastsvm

    params, seen = {}, []
    for label, (cls_name, extra) in ESTIMATORS.items():
        cls = getattr(fastsvm, cls_name)
        kwargs = dict(extra)
        if "random_state" in cls().get_params():
            kwargs["random_state"] = SEED
        full = (cls_name, cls(**kwargs).get_params())
        if full not in seen:
            seen.append(full)
            params[label] = kwargs
    return params


def make(label, kwargs):
    """A fresh estimator: ``SVC()`` for 'SVC', else the fastsvm class of ``label``."""
    if label == "SVC":
        from sklearn.svm import SVC

        return SVC()
    if label == LINEAR_REFERENCE:
        from sklearn.svm import LinearSVC

        return LinearSVC()
    import fastsvm

    return getattr(fastsvm, ESTIMATORS[label][0])(**kwargs)


# -------------------------------------------------------------------- data
def load(name, max_train, max_test):
    """(X_train, y_train, X_test, y_test) of ``name``, cut to the row caps; its description."""
    split = _generated.load(name) if name in _generated.GENERATORS else H.load_split(name)
    X_train, y_train, X_test, y_test = split
    info = {"n_train_full": int(X_train.shape[0]), "n_test_full": int(X_test.shape[0])}
    X_train, y_train = H.subsample(X_train, y_train, max_train, seed=SEED)
    X_test, y_test = H.subsample(X_test, y_test, max_test, seed=SEED)
    labels, counts = np.unique(y_train, return_counts=True)
    info.update(n_train=int(X_train.shape[0]), n_test=int(X_test.shape[0]),
                n_features=int(X_train.shape[1]), n_classes=int(labels.size),
                minority_share=float(counts.min() / counts.sum()),
                sparse=sp.issparse(X_train))
    return (X_train, y_train, X_test, y_test), info


# ------------------------------------------------------------------- runs
def fit_and_score(clf, split):
    """Fit ``clf`` and predict the test rows; times, accuracies, warnings, fitted facts."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    X_train, y_train, X_test, y_test = split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, fit_s = H.timed(clf.fit, X_train, y_train)
        pred, predict_s = H.timed(clf.predict, X_test)
    return {"fit_s": fit_s, "predict_s": predict_s,
            "accuracy": float(accuracy_score(y_test, pred)),
            "balanced_accuracy": float(balanced_accuracy_score(y_test, pred)),
            "warnings": dict(Counter(f"{w.category.__name__}: {w.message}" for w in caught)),
            "fitted": fitted_facts(clf)}


def fitted_facts(clf):
    """What the fit chose or reached: support vectors, gamma_, M_, iterations, scalars of
    ``training_info_`` and its per-problem ``converged`` flags."""
    facts = {}
    if hasattr(clf, "support_vectors_"):     # the model's size: shared vectors counted once
        facts["n_support"] = int(clf.support_vectors_.shape[0])
    for attr in ("gamma_", "M_", "n_components_", "n_iter_"):
        value = getattr(clf, attr, None)
        if value is not None:
            facts[attr.rstrip("_")] = np.asarray(value).tolist()
    for key, value in getattr(clf, "training_info_", {}).items():
        if np.isscalar(value) or key == "converged":
            facts[key] = np.asarray(value).tolist()
    return facts


def run_model(label, kwargs, split, repeats):
    """Fit a fresh estimator; ``repeats`` times if the first fit took under REPEAT_UNDER_S.
    The first fit's result and warnings, the median times."""
    runs = [fit_and_score(make(label, kwargs), split)]
    if runs[0]["fit_s"] < REPEAT_UNDER_S:
        runs += [fit_and_score(make(label, kwargs), split) for _ in range(repeats - 1)]
    row = {**runs[0], "model": label, "repeats": len(runs),
           "fit_s": H.median([r["fit_s"] for r in runs]),
           "predict_s": H.median([r["predict_s"] for r in runs]),
           "raw_fit_s": [r["fit_s"] for r in runs],
           "raw_accuracy": [r["accuracy"] for r in runs]}
    H.log(f"    {label}: fit {row['fit_s']:.2f} s, predict {row['predict_s']:.2f} s, "
          f"acc {100 * row['accuracy']:.2f} %"
          + (f", warnings {row['warnings']}" if row["warnings"] else ""))
    return row


def warm_up(split, params):
    """Fit every estimator on a small sample, so that timed fits find their code loaded."""
    X, y = H.subsample(split[0], split[1], WARM_UP_ROWS, seed=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, kwargs in params.items():
            make(label, kwargs).fit(X, y).predict(split[2][:10])


def run_set(split, params, repeats):
    warm_up(split, params)
    rows = [run_model("SVC", {}, split, repeats)]
    linear = [label for label, kwargs in params.items()
              if make(label, kwargs).get_params().get("kernel") == "linear"]
    reference = run_model(LINEAR_REFERENCE, {}, split, repeats) if linear else None
    rows += [reference] if linear else []
    rows += [run_model(label, kwargs, split, repeats) for label, kwargs in params.items()]
    svc = rows[0]
    for r in rows:
        if r["model"] in linear:
            r["accuracy_minus_linear"] = 100 * (r["accuracy"] - reference["accuracy"])
        r["accuracy_minus_svc"] = 100 * (r["accuracy"] - svc["accuracy"])
        r["balanced_accuracy_minus_svc"] = 100 * (r["balanced_accuracy"]
                                                  - svc["balanced_accuracy"])
        r["time_ratio_svc"] = svc["fit_s"] / r["fit_s"]
    return rows


# ------------------------------------------------------- cold / warm fits
def warmup_command():
    """Run ``python -m fastsvm warmup`` (fills numba's disk cache); its wall seconds."""
    _, seconds = H.timed(subprocess.run, [sys.executable, "-m", "fastsvm", "warmup", "-q"],
                         check=True)
    H.log(f"python -m fastsvm warmup: {seconds:.1f} s")
    return seconds


def first_fits(params, args):
    """Per estimator (the first only in smoke runs): import time, cold and warm fit in a new
    process (cached kernels), and the first fit with an empty numba cache."""
    rows = []
    for label, kwargs in list(params.items())[:1 if args.smoke else None]:
        row = {"model": label, **child_fits(label, kwargs, args)}
        if not args.no_compile:
            with tempfile.TemporaryDirectory(prefix="fastsvm-numba-") as cache:
                empty = child_fits(label, kwargs, args, {"NUMBA_CACHE_DIR": cache})
            row.update(no_cache_import_s=empty["import_s"], no_cache_fit_s=empty["cold_fit_s"])
        H.log(f"    {label}: import {row['import_s']:.2f} s, cold {row['cold_fit_s']:.2f} s, "
              f"warm {row['warm_fit_s']:.2f} s"
              + (f", no cache {row['no_cache_fit_s']:.2f} s" if "no_cache_fit_s" in row else ""))
        rows.append(row)
    return rows


def child_fits(label, kwargs, args, env=None):
    """Run ``first_fit_child`` in a new Python process (``env``: extra environment
    variables); its JSON answer."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import {NAME}; {NAME}.first_fit_child({label!r}, {kwargs!r}, "
            f"{args.first_fit_set!r}, {args.first_fit_rows!r})")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_fit_child(label, kwargs, set_name, rows):
    """In a new process: time the import of the estimator's class, then two identical fits;
    print JSON."""
    _, import_s = H.timed(lambda: getattr(__import__("fastsvm"), ESTIMATORS[label][0]))
    X, y, _, _ = load(set_name, rows, None)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, cold = H.timed(make(label, kwargs).fit, X, y)
        _, warm = H.timed(make(label, kwargs).fit, X, y)
    print(json.dumps({"import_s": import_s, "cold_fit_s": cold, "warm_fit_s": warm}))


# -------------------------------------------------------------------- main
def main(argv=None):
    args = parse_args(argv)
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    params = estimator_params()
    params = {label: params[label] for label in args.estimators if label in params}
    settings = {"smoke": args.smoke, "repeats": args.repeats,
                "repeat_under_s": REPEAT_UNDER_S, "max_train_rows": args.max_train_rows,
                "max_test_rows": args.max_test_rows, "seed": SEED,
                "estimators": {label: {"class": ESTIMATORS[label][0], "arguments": kwargs,
                                       "params": make(label, kwargs).get_params()}
                               for label, kwargs in params.items()},
                "svc_params": make("SVC", {}).get_params(), "sets": {},
                "threads": {var: os.environ.get(var) for var in THREAD_VARIABLES},
                "first_fit": {"set": args.first_fit_set, "rows": args.first_fit_rows,
                              "no_cache": not args.no_compile}}
    results = {"warmup_command_s": warmup_command(), "sets": []}
    for name in args.sets:
        H.log(f"{name}: loading")
        split, info = load(name, args.max_train_rows, args.max_test_rows)
        settings["sets"][name] = info
        H.log(f"  {info['n_train']:,} training rows, {info['n_test']:,} test rows")
        results["sets"].append({"set": name, "rows": run_set(split, params, args.repeats)})
    H.log(f"first fits on {args.first_fit_set} ({args.first_fit_rows:,} rows)")
    results["first_fit"] = first_fits(params, args)
    results["summary"] = summarise(results["sets"], settings["sets"], list(params))
    settings["linear_reference"] = LINEAR_REFERENCE
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


def summarise(entries, sets, labels):
    """Per estimator: sets within WITHIN_PP of SVC, sets faster than SVC from FAST_FROM_ROWS
    training rows, the worst accuracy gap and the median time ratio; for a linear estimator
    also the sets within WITHIN_PP of LINEAR_REFERENCE and the worst gap to it (else None)."""
    summary = []
    for label in labels:
        rows = [(e["set"], r) for e in entries for r in e["rows"] if r["model"] == label]
        large = [(s, r) for s, r in rows if sets[s]["n_train"] >= FAST_FROM_ROWS]
        worst_set, worst = min(rows, key=lambda sr: sr[1]["accuracy_minus_svc"])
        linear = [r["accuracy_minus_linear"] for _, r in rows if "accuracy_minus_linear" in r]
        summary.append({
            "model": label, "n_sets": len(rows),
            "within": sum(r["accuracy_minus_svc"] >= -WITHIN_PP for _, r in rows),
            "within_linear": (sum(g >= -WITHIN_PP for g in linear) if linear else None),
            "worst_gap_linear": min(linear) if linear else None,
            "n_large": len(large), "faster_large": sum(r["time_ratio_svc"] > 1 for _, r in large),
            "worst_gap": worst["accuracy_minus_svc"], "worst_set": worst_set,
            "median_time_ratio": H.median([r["time_ratio_svc"] for _, r in rows])})
    return summary


# ----------------------------------------------------------------- output
def render_markdown(payload):
    s, res = payload["settings"], payload["results"]
    lines = H.header_lines("Every estimator at its defaults vs SVC at its defaults", payload)
    if s["smoke"]:
        lines += ["**Smoke run** (tiny subsamples, 1 run): numbers are meaningless.", ""]
    lines += [
        "Each fastsvm estimator built with only `random_state=0` (HuberSVC takes none); "
        "`SVC()` at its defaults (C = 1, gamma = 'scale', cache 200 MB). One fit per "
        "(set, estimator)"
        + (f"; a fit under {s['repeat_under_s']:g} s is repeated and its times are the "
           f"median of {s['repeats']} identical fits (fits column)" if s["repeats"] > 1 else "")
        + f". Training rows above "
        f"{s['max_train_rows']:,} and test rows above {s['max_test_rows']:,} are cut to a "
        "stratified subsample (seed 0), the same for every method (marked *). "
        "acc - SVC: test accuracy minus SVC's, in percentage points; "
        "SVC/this: SVC's fit time over the estimator's (> 1: faster than SVC). "
        "bal. acc: balanced accuracy (mean recall over the classes).", ""]
    lines.append(H.markdown_table(
        ["set", "train rows", "test rows", "features", "classes", "smallest class", "input"],
        [[n + (" *" if v["n_train"] < v["n_train_full"] or v["n_test"] < v["n_test_full"]
               else ""),
          f"{v['n_train']:,}" + (f" of {v['n_train_full']:,}"
                                 if v["n_train"] < v["n_train_full"] else ""),
          f"{v['n_test']:,}" + (f" of {v['n_test_full']:,}"
                                if v["n_test"] < v["n_test_full"] else ""),
          f"{v['n_features']:,}", v["n_classes"], f"{100 * v['minority_share']:.1f} %",
          "CSR" if v["sparse"] else "dense"] for n, v in s["sets"].items()]))
    lines += ["", "## Summary", "",
              f"Sets within {WITHIN_PP:g} point of SVC's accuracy (or above it), sets fitted "
              f"faster than SVC among those with at least {FAST_FROM_ROWS:,} training rows, "
              "the largest accuracy gap to SVC and the median fit-time ratio; for the linear "
              f"estimators also the sets within {WITHIN_PP:g} point of scikit-learn's linear SVM "
              f"at its defaults (`{LINEAR_REFERENCE}()`, C = 1) and the largest gap to it.", ""]
    lines.append(H.markdown_table(
        ["estimator", f"within {WITHIN_PP:g} pp of SVC",
         f"faster than SVC (>= {FAST_FROM_ROWS:,} rows)", "worst acc - SVC (pp)",
         "median SVC/this", f"within {WITHIN_PP:g} pp of {LINEAR_REFERENCE}",
         f"worst acc - {LINEAR_REFERENCE} (pp)"],
        [[r["model"], f"{r['within']} / {r['n_sets']}", f"{r['faster_large']} / {r['n_large']}",
          f"{r['worst_gap']:+.2f} ({r['worst_set']})", f"{r['median_time_ratio']:.3g}x",
          "" if r.get("within_linear") is None else f"{r['within_linear']} / {r['n_sets']}",
          "" if r.get("worst_gap_linear") is None else f"{r['worst_gap_linear']:+.2f}"]
         for r in res["summary"]]))
    lines += ["", "## Results", ""]
    table, notes = [], []
    for entry in res["sets"]:
        for r in entry["rows"]:
            table.append([entry["set"], r["model"], r["repeats"], f"{r['fit_s']:.2f}",
                          f"{r['predict_s']:.2f}",
                          f"{100 * r['accuracy']:.2f}",
                          "" if r["model"] == "SVC" else f"{r['accuracy_minus_svc']:+.2f}",
                          "" if "accuracy_minus_linear" not in r
                          else f"{r['accuracy_minus_linear']:+.2f}",
                          f"{100 * r['balanced_accuracy']:.2f}",
                          "" if r["model"] == "SVC" else f"{r['time_ratio_svc']:.3g}x",
                          f"{r['fitted']['n_support']:,}" if "n_support" in r["fitted"] else ""])
            notes += [f"- {entry['set']}, {r['model']}: {message} ({count}x)"
                      for message, count in r["warnings"].items()]
    lines.append(H.markdown_table(
        ["set", "estimator", "fits", "fit (s)", "predict (s)", "acc (%)", "acc - SVC (pp)",
         f"acc - {LINEAR_REFERENCE} (pp)", "bal. acc (%)", "SVC/this", "#SV"], table))
    if notes:
        lines += ["", "Warnings raised by the fits:", ""] + notes
    fs = s["first_fit"]
    lines += ["", "## First fit: cold against warm", "",
              f"On {fs['set']} ({fs['rows']:,} training rows), each estimator in a new Python "
              "process: `from fastsvm import <estimator>` (import), then two identical fits. "
              "cold: the first fit, with the kernels loaded from numba's disk cache filled by "
              "`python -m fastsvm warmup` "
              f"(which took {res['warmup_command_s']:.1f} s at the start of this run); warm: the "
              "second fit in the same process; cold - warm: the cost of the first fit."
              + (" no cache: the first fit in a process with an empty `NUMBA_CACHE_DIR`, "
                 "which compiles every kernel it needs (what the warm-up saves)."
                 if fs["no_cache"] else ""), ""]
    headers = ["estimator", "import (s)", "cold fit (s)", "warm fit (s)",
               "cold - warm (s)"] + (["no cache: fit (s)"] if fs["no_cache"] else [])
    lines.append(H.markdown_table(headers, [
        [r["model"], f"{r['import_s']:.2f}", f"{r['cold_fit_s']:.2f}", f"{r['warm_fit_s']:.2f}",
         f"{r['cold_fit_s'] - r['warm_fit_s']:+.2f}"]
        + ([f"{r['no_cache_fit_s']:.2f}"] if fs["no_cache"] else []) for r in res["first_fit"]]))
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    res = payload["results"]
    labels = [r["model"] for r in res["summary"]]
    markers = dict(zip(labels, "osD^vP"))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), width_ratios=(3, 2))
    left.axhspan(-WITHIN_PP, WITHIN_PP, color="0.92")
    left.axhline(0, color="0.6", lw=0.8)
    left.axvline(1, color="0.6", lw=0.8)
    for k, label in enumerate(labels):
        points = [(r["time_ratio_svc"], r["accuracy_minus_svc"])
                  for e in res["sets"] for r in e["rows"] if r["model"] == label]
        x, y = zip(*points)
        left.scatter(x, np.maximum(y, PLOT_FLOOR_PP), marker=markers[label], color=f"C{k}",
                     label=label, alpha=0.8)
    left.set_xscale("log")
    left.set_xlabel("SVC fit time / estimator fit time (log; > 1: faster than SVC)")
    left.set_ylabel(f"test accuracy - SVC's (points; below {PLOT_FLOOR_PP:g} drawn at "
                    f"{PLOT_FLOOR_PP:g})")
    left.set_title("at defaults, one point per data set")
    left.legend(fontsize=8)
    rows = res["first_fit"]
    y = np.arange(len(rows))
    h = 0.27
    bars = [("warm_fit_s", "warm (second fit)"), ("cold_fit_s", "cold (cached kernels)")]
    if "no_cache_fit_s" in rows[0]:
        bars.append(("no_cache_fit_s", "no cache (compiles)"))
    for k, (key, text) in enumerate(bars):
        right.barh(y + (k - (len(bars) - 1) / 2) * h, [r[key] for r in rows], h, label=text)
    right.set_yticks(y, [r["model"] for r in rows], fontsize=8)
    right.invert_yaxis()
    right.set_xlabel("fit time (s)")
    right.set_title(f"first fit in a new process ({payload['settings']['first_fit']['set']})")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
