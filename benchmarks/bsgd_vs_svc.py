"""BudgetSVC (BSGD, lookup-wd merging) next to scikit-learn's exact SVC.

On the same train/test splits (``fastsvm.datasets.load_dataset``) and with
the same C and gamma (the BSGD paper's, from the registry; covtype: C = 2^5,
gamma = 2^-2 as in ``bsgd_paper_tables.py``):

* BudgetSVC(merge_method='lookup-wd', budget=500) at its default
  ``learning_rate='linear-decay'`` (``bsgd_paper_tables.py`` reproduces the
  paper with its steps, 'pegasos'), 20 epochs (covtype: one pass), 5 runs
  with seeds 0-4: median training time, mean +- std test accuracy, SGD steps
  per second and microseconds per merge (medians);
* SVC(C, gamma, cache_size=1000) once (it is deterministic and slow):
  training time, test accuracy, number of support vectors.

Training and prediction times are wall times of ``fit`` and ``score`` by
``time.perf_counter``, the same for both; both get the same CSR matrices.

SVC's cost: its time grows quadratically to cubically with n, so it is
capped.  Sets with more than ``--svc-max-n`` training rows (default 200,000:
covtype's 464,809) train SVC on a stratified random subsample of
``--svc-subsample`` rows (default 50,000) instead, and BudgetSVC is then
trained on that same subsample as well, so that one pair of rows compares
like with like; the test set is always the full one.  skin_nonskin (183,792
rows) stays under the cap: SVC takes about 8-9 minutes on it.

Run ``python benchmarks/bsgd_vs_svc.py`` (about 13 minutes on two cores,
most of it SVC); ``--smoke`` for a check in seconds.  Output:
``benchmarks/results/bsgd_vs_svc.{json,md,png}``.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NAME = "bsgd_vs_svc"
# set -> epochs (and C, gamma where the registry has none; see bsgd_paper_tables.py)
SETS = {
    "a9a": dict(epochs=20),
    "ijcnn1": dict(epochs=20),
    "phishing": dict(epochs=20),
    "skin_nonskin": dict(epochs=20),
    "covtype": dict(epochs=1, C=2.0**5, gamma=2.0**-2),
}
SVC_CACHE_MB = 1000


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    p.add_argument("--budget", type=int, default=500)
    p.add_argument("--runs", type=int, default=5, help="BudgetSVC runs (seeds 0..runs-1)")
    p.add_argument("--epochs", type=int, default=None,
                   help="BudgetSVC epochs for every set (default: 20, covtype 1)")
    p.add_argument("--svc-max-n", type=int, default=200_000,
                   help="train SVC on a subsample when n_train exceeds this")
    p.add_argument("--svc-subsample", type=int, default=50_000,
                   help="rows of the subsample SVC trains on above --svc-max-n")
    p.add_argument("--no-svc", action="store_true", help="BudgetSVC only")
    args = p.parse_args(argv)
    if args.smoke:
        args.runs, args.epochs = 1, 1
        args.budget = min(args.budget, 20)
        args.svc_subsample = min(args.svc_subsample, 1000)
    return args


def run_budget_svc(X_train, y_train, X_test, y_test, C, gamma, budget, epochs, runs):
    from fastsvm import BudgetSVC

    rows = []
    for seed in range(runs):
        clf = BudgetSVC(C=C, gamma=gamma, budget=budget, epochs=epochs,
                        merge_method="lookup-wd", random_state=seed)
        _, fit_s = H.timed(clf.fit, X_train, y_train)
        acc, pred_s = H.timed(clf.score, X_test, y_test)
        info = clf.training_info_
        rows.append({"seed": seed, "fit_s": fit_s, "predict_s": pred_s, "accuracy": float(acc),
                     "n_support": int(clf.dual_coef_.shape[1]),
                     **{k: info[k] for k in ("time_fit_s", "time_maintenance_s", "merges",
                                             "merge_frequency", "steps_per_second",
                                             "us_per_merge")}})
        H.log(f"    BudgetSVC seed={seed} fit={fit_s:.2f}s acc={acc:.4f}")
    acc_mean, acc_std = H.mean_std([r["accuracy"] for r in rows])
    return {
        "model": "BudgetSVC", "runs": runs, "n_rows": int(X_train.shape[0]),
        "fit_s": H.median([r["fit_s"] for r in rows]),
        "predict_s": H.median([r["predict_s"] for r in rows]),
        "accuracy": acc_mean, "accuracy_std": acc_std,
        "n_support": int(np.median([r["n_support"] for r in rows])),
        "steps_per_second": H.median([r["steps_per_second"] for r in rows]),
        "us_per_merge": H.median([r["us_per_merge"] for r in rows]),
        "merge_frequency": float(np.mean([r["merge_frequency"] for r in rows])),
        "raw": rows,
    }


def run_svc(X_train, y_train, X_test, y_test, C, gamma):
    from sklearn.svm import SVC

    clf = SVC(C=C, gamma=gamma, cache_size=SVC_CACHE_MB)
    _, fit_s = H.timed(clf.fit, X_train, y_train)
    acc, pred_s = H.timed(clf.score, X_test, y_test)
    H.log(f"    SVC on {X_train.shape[0]} rows fit={fit_s:.1f}s acc={acc:.4f}")
    return {"model": "SVC", "runs": 1, "n_rows": int(X_train.shape[0]), "fit_s": fit_s,
            "predict_s": pred_s, "accuracy": float(acc), "accuracy_std": None,
            "n_support": int(clf.n_support_.sum())}


def warm_up(X, y, C, gamma):
    from fastsvm import BudgetSVC

    n = min(X.shape[0], 400)
    BudgetSVC(C=C, gamma=gamma, budget=20, epochs=1, merge_method="lookup-wd",
              random_state=0).fit(X[:n], y[:n]).score(X[:n], y[:n])


def main(argv=None):
    from fastsvm.datasets import DATASETS, load_dataset

    args = parse_args(argv)
    out = H.output_dir(args)
    machine = H.machine_info()  # before the run: the code that runs
    started = time.perf_counter()
    settings = {"sets": {}, "budget": args.budget, "runs": args.runs,
                "merge_method": "lookup-wd", "svc_max_n": args.svc_max_n,
                "svc_subsample": args.svc_subsample, "svc_cache_mb": SVC_CACHE_MB,
                "svc": not args.no_svc, "smoke": args.smoke}
    results = []
    for name in args.sets:
        cfg = SETS[name]
        C = cfg.get("C", DATASETS[name].C)
        gamma = cfg.get("gamma", DATASETS[name].gamma)
        epochs = args.epochs if args.epochs is not None else cfg["epochs"]
        H.log(f"{name}: loading")
        split = load_dataset(name)
        n_full = split[0].shape[0]
        # The SVC cap looks at the full set, also in smoke mode (then on smoke-sized rows).
        X_train, y_train, X_test, y_test = H.smoke_cut(*split) if args.smoke else split
        n = X_train.shape[0]
        settings["sets"][name] = {"C": C, "gamma": gamma, "epochs": epochs, "n_train": n,
                                  "n_train_full": n_full, "n_test": int(X_test.shape[0]),
                                  "n_features": int(X_train.shape[1])}
        warm_up(X_train, y_train, C, gamma)
        entry = {"set": name, "n_train": n, "rows": []}
        H.log(f"  BudgetSVC on all {n} rows")
        full = run_budget_svc(X_train, y_train, X_test, y_test, C, gamma, args.budget, epochs,
                              args.runs)
        full["note"] = "all training rows"
        entry["rows"].append(full)
        if not args.no_svc:
            if n_full <= args.svc_max_n:
                svc = run_svc(X_train, y_train, X_test, y_test, C, gamma)
                svc["note"] = "all training rows"
                svc["time_ratio_svc_over_budgetsvc"] = svc["fit_s"] / full["fit_s"]
                entry["rows"].append(svc)
            else:
                X_sub, y_sub = H.subsample(X_train, y_train, args.svc_subsample, seed=0)
                note = (f"SVC capped (n_train {n_full:,} > {args.svc_max_n:,}): stratified "
                        f"subsample of {X_sub.shape[0]:,} rows")
                H.log(f"  {note}")
                sub = run_budget_svc(X_sub, y_sub, X_test, y_test, C, gamma, args.budget, epochs,
                                     args.runs)
                sub["note"] = note
                svc = run_svc(X_sub, y_sub, X_test, y_test, C, gamma)
                svc["note"] = note
                svc["time_ratio_svc_over_budgetsvc"] = svc["fit_s"] / sub["fit_s"]
                entry["rows"] += [sub, svc]
        results.append(entry)
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


def render_markdown(payload):
    s = payload["settings"]
    lines = H.header_lines("BudgetSVC (BSGD, lookup-wd) vs scikit-learn SVC", payload)
    if s["smoke"]:
        lines += ["**Smoke run** (tiny subsample, 1 run, 1 epoch): numbers are meaningless.", ""]
    lines += [f"BudgetSVC: merge_method='lookup-wd', budget {s['budget']}, its default "
              "learning_rate='linear-decay', median of "
              f"{s['runs']} runs (seeds 0..{s['runs'] - 1}) for times, mean +- std for accuracy. "
              f"SVC: one run, cache_size={s['svc_cache_mb']} MB. Same C, gamma, splits and CSR "
              "input for both; times are wall times of fit / score. SVC trains on a stratified "
              f"subsample of {s['svc_subsample']:,} rows where n_train > {s['svc_max_n']:,}; "
              "BudgetSVC is then also run on that subsample (like-for-like rows). "
              "time ratio: SVC fit time / BudgetSVC fit time on the same rows.", ""]
    lines.append(H.markdown_table(
        ["set", "C", "gamma", "epochs", "n train", "n test"],
        [[n, H.pow2(v["C"]), H.pow2(v["gamma"]), v["epochs"], f"{v['n_train']:,}",
          f"{v['n_test']:,}"] for n, v in s["sets"].items()]))
    lines += ["", "## Results", ""]
    rows = []
    for entry in payload["results"]:
        for r in entry["rows"]:
            acc = f"{100 * r['accuracy']:.2f}"
            if r["accuracy_std"] is not None:
                acc += f" +- {100 * r['accuracy_std']:.2f}"
            ratio = r.get("time_ratio_svc_over_budgetsvc")
            rows.append([entry["set"], r["model"], f"{r['n_rows']:,}", r["note"], r["runs"],
                         f"{r['fit_s']:.2f}", f"{r['predict_s']:.2f}", acc, f"{r['n_support']:,}",
                         "" if ratio is None else f"{ratio:.1f}x",
                         f"{r['steps_per_second']:,.0f}" if "steps_per_second" in r else "",
                         f"{r['us_per_merge']:.2f}" if "us_per_merge" in r else "",
                         f"{100 * r['merge_frequency']:.1f}%" if "merge_frequency" in r else ""])
    if not s["svc"]:
        lines += ["SVC not run (--no-svc).", ""]
    lines.append(H.markdown_table(
        ["set", "model", "rows trained on", "note", "runs", "fit (s)", "predict (s)",
         "test acc (%)", "#SV", "time ratio SVC/BudgetSVC", "steps/s", "us/merge",
         "merge freq"], rows))
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    labels, budget_t, svc_t, budget_a, svc_a = [], [], [], [], []
    for entry in payload["results"]:
        rows = entry["rows"]
        svc = [r for r in rows if r["model"] == "SVC"]
        # Compare on the rows SVC saw (the subsample where SVC was capped).
        bsv = [r for r in rows if r["model"] == "BudgetSVC"][-1 if svc else 0]
        suffix = f"\n({bsv['n_rows']:,} rows)"
        labels.append(entry["set"] + suffix)
        budget_t.append(bsv["fit_s"])
        budget_a.append(100 * bsv["accuracy"])
        svc_t.append(svc[0]["fit_s"] if svc else np.nan)
        svc_a.append(100 * svc[0]["accuracy"] if svc else np.nan)
    x = np.arange(len(labels))
    w = 0.38
    left.bar(x - w / 2, budget_t, w, label="BudgetSVC (lookup-wd)", color="tab:orange")
    left.bar(x + w / 2, svc_t, w, label="SVC", color="tab:gray")
    left.set_yscale("log")
    left.set_ylabel("training time (s, log scale)")
    left.set_xticks(x, labels, fontsize=8)
    left.legend(fontsize=8)
    left.set_title("training time")
    right.bar(x - w / 2, budget_a, w, label="BudgetSVC (lookup-wd)", color="tab:orange")
    right.bar(x + w / 2, svc_a, w, label="SVC", color="tab:gray")
    low = np.nanmin(budget_a + svc_a)
    right.set_ylim(max(0.0, low - 5), 100)
    right.set_ylabel("test accuracy (%)")
    right.set_xticks(x, labels, fontsize=8)
    right.set_title("test accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
