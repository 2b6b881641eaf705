"""Every kernel estimator at its defaults next to SVC at its defaults on small real sets, by CV.

Data nobody tuned the library for: scikit-learn's bundled sets, which need
no download (``sklearn.datasets``): breast_cancer (569 rows, 30 features,
2 classes, features on very different scales), digits (1,797 rows, 64 pixel
features 0..16, 10 classes), wine (178 rows, 13 features, 3 classes, very
different scales) and iris (150 rows, 4 features, 3 classes).  Each is used
in two variants, both of which a user may hand in: "raw", the features as
given, and "scaled", standardised inside the model by
``make_pipeline(StandardScaler(), est)`` (fitted on the training folds
only).

Estimators (``ESTIMATORS``), each built with nothing but
``random_state=rep`` (rep = the repeat: 0, 1, 2), so every other setting is
its own default, recorded in the JSON as ``get_params()`` reported it:
BudgetSVC, NystromSVC, MarginSGDSVC and ``PegasosSVC(kernel='rbf')``; next
to ``sklearn.svm.SVC()`` (C = 1, gamma = 'scale': its defaults; its
random_state only matters with probability=True, so it is left alone).
The linear PegasosSVC and HuberSVC are left out: an RBF SVC is not their
reference.

On sets this small a single split's accuracy is noise, so each
(variant, set) runs repeated stratified cross-validation:
``StratifiedKFold(5, shuffle=True, random_state=rep)`` for rep in
0 .. ``--repeats`` - 1 (default 3; ``--folds``, default 5), every estimator
on the same folds, one after the other within each fold.  Per (variant,
set, estimator): the mean test accuracy over all folds (15), the standard
deviation of the repeats' means (how much the split moves it), accuracy
minus SVC's in percentage points (and the standard deviation of that gap
over the repeats: the paired noise), the median fit time per fold and the
warnings raised by the fits (counted).  Before the folds of each (variant,
set), every estimator is fitted once on the whole set, untimed, so that
the timed fits run compiled code already loaded.  The summary counts, per
estimator, the 8 (variant, set) cases within 1 point of SVC
(acc - SVC >= -1), the worst gap and the mean gap.

Run ``python benchmarks/small_sets_cv.py`` (about 3 minutes on two cores,
most of it kernel Pegasos, MarginSGDSVC and NystromSVC on digits);
``--smoke`` for a check in seconds (iris and wine, 1 repeat of 3 folds).  Output:
``benchmarks/results/small_sets_cv.{json,md,png}``.
"""

import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NAME = "small_sets_cv"
# name -> loader in sklearn.datasets; the order is the tables'
SETS = {
    "breast_cancer": "load_breast_cancer",
    "digits": "load_digits",
    "wine": "load_wine",
    "iris": "load_iris",
}
SMOKE_SETS = ["iris", "wine"]
SMOKE_FOLDS = 3
VARIANTS = ("raw", "scaled")
# label -> (fastsvm class, arguments besides random_state); the order is the tables'
ESTIMATORS = {
    "BudgetSVC": ("BudgetSVC", {}),
    "NystromSVC": ("NystromSVC", {}),
    "MarginSGDSVC": ("MarginSGDSVC", {}),
    "PegasosSVC(kernel='rbf')": ("PegasosSVC", {"kernel": "rbf"}),
}
WITHIN_PP = 1.0                # the accuracy criterion: at most this many points below SVC
PLOT_FLOOR_PP = -15.0          # the plot draws larger accuracy gaps on this line


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="*", default=None,
                   help="bundled sets among " + " ".join(SETS) + " (default: all; with "
                        "--smoke: " + " ".join(SMOKE_SETS) + "); other names are ignored, so "
                        "that run_all.py can pass its --sets on to every script")
    p.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS),
                   default=list(ESTIMATORS))
    p.add_argument("--repeats", type=int, default=3,
                   help="cross-validation repeats, seeds 0 .. repeats - 1 (smoke: 1)")
    p.add_argument("--folds", type=int, default=5,
                   help=f"folds of each repeat (smoke: {SMOKE_FOLDS})")
    args = p.parse_args(argv)
    asked = list(args.sets or [])
    args.ignored_sets = [s for s in asked if s not in SETS]
    if args.ignored_sets:
        H.log(f"ignored (not a bundled set): {' '.join(args.ignored_sets)}")
    args.sets = [s for s in SETS if s in asked] or (SMOKE_SETS if args.smoke else list(SETS))
    if args.smoke:
        args.repeats = 1
        args.folds = SMOKE_FOLDS
    return args


# -------------------------------------------------------------- estimators
def takes_random_state(label):
    import fastsvm

    return "random_state" in getattr(fastsvm, ESTIMATORS[label][0])().get_params()


def make(label, variant, seed):
    """A fresh estimator for one fit: ``SVC()`` for 'SVC', else the fastsvm class of
    ``label`` with ``random_state=seed`` where it takes one; behind a StandardScaler for
    the 'scaled' variant."""
    if label == "SVC":
        from sklearn.svm import SVC

        est = SVC()
    else:
        import fastsvm

        cls_name, extra = ESTIMATORS[label]
        kwargs = dict(extra)
        if takes_random_state(label):
            kwargs["random_state"] = seed
        est = getattr(fastsvm, cls_name)(**kwargs)
    if variant == "scaled":
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), est)
    return est


# -------------------------------------------------------------------- data
def load(name):
    """(X, y) of a bundled set as float64 / its labels, and its description."""
    import sklearn.datasets

    X, y = getattr(sklearn.datasets, SETS[name])(return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    labels, counts = np.unique(y, return_counts=True)
    sd = X.std(axis=0)
    info = {"loader": f"sklearn.datasets.{SETS[name]}", "n_samples": int(X.shape[0]),
            "n_features": int(X.shape[1]), "n_classes": int(labels.size),
            "minority_share": float(counts.min() / counts.sum()),
            "feature_sd_min": float(sd[sd > 0].min()), "feature_sd_max": float(sd.max()),
            "constant_features": int((sd == 0).sum())}
    return X, y, info


# ------------------------------------------------------------------- runs
def fit_and_score(clf, X_train, y_train, X_test, y_test):
    """Fit ``clf`` and predict the test fold: times, accuracy, warnings (counted)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, fit_s = H.timed(clf.fit, X_train, y_train)
        pred, predict_s = H.timed(clf.predict, X_test)
    return {"fit_s": fit_s, "predict_s": predict_s,
            "accuracy": float(np.mean(pred == y_test)),
            "warnings": Counter(f"{w.category.__name__}: {w.message}" for w in caught)}


def warm_up(X, y, labels, variant):
    """Fit every estimator once on the whole set (untimed), so timed fits find code loaded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label in labels:
            make(label, variant, 0).fit(X, y).predict(X[:10])


def run_case(X, y, variant, labels, repeats, folds):
    """Repeated stratified CV of SVC and ``labels`` on (X, y): one row per estimator."""
    from sklearn.model_selection import StratifiedKFold

    labels = ["SVC"] + list(labels)
    warm_up(X, y, labels, variant)
    raw = {label: [] for label in labels}
    caught = {label: Counter() for label in labels}
    for rep in range(repeats):
        cv = StratifiedKFold(folds, shuffle=True, random_state=rep)
        for fold, (train, test) in enumerate(cv.split(X, y)):
            for label in labels:
                r = fit_and_score(make(label, variant, rep), X[train], y[train], X[test],
                                  y[test])
                caught[label].update(r.pop("warnings"))
                raw[label].append({"repeat": rep, "fold": fold, **r})
    rows = []
    for label in labels:
        runs = raw[label]
        means = [float(np.mean([r["accuracy"] for r in runs if r["repeat"] == rep]))
                 for rep in range(repeats)]
        rows.append({"model": label, "n_fits": len(runs),
                     "accuracy_mean": float(np.mean([r["accuracy"] for r in runs])),
                     "repeat_means": means,
                     "accuracy_std_repeats": H.mean_std(means)[1],
                     "fit_s_median": H.median([r["fit_s"] for r in runs]),
                     "predict_s_median": H.median([r["predict_s"] for r in runs]),
                     "warnings": dict(caught[label]),
                     "n_warnings": int(sum(caught[label].values())),
                     "folds": runs})
    svc = rows[0]
    for r in rows:
        gaps = 100 * (np.asarray(r["repeat_means"]) - np.asarray(svc["repeat_means"]))
        r["accuracy_minus_svc"] = 100 * (r["accuracy_mean"] - svc["accuracy_mean"])
        r["gap_std_repeats"] = H.mean_std(gaps)[1]
        r["time_ratio_svc"] = svc["fit_s_median"] / r["fit_s_median"]
        H.log(f"    {r['model']}: acc {100 * r['accuracy_mean']:.2f} % "
              f"({r['accuracy_minus_svc']:+.2f} pp), fit {1000 * r['fit_s_median']:.1f} ms"
              + (f", {r['n_warnings']} warnings" if r["n_warnings"] else ""))
    return rows


# -------------------------------------------------------------------- main
def main(argv=None):
    args = parse_args(argv)
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    labels = list(args.estimators)
    settings = {"smoke": args.smoke, "repeats": args.repeats, "folds": args.folds,
                "cv": f"StratifiedKFold({args.folds}, shuffle=True, random_state=rep), "
                      f"rep = 0..{args.repeats - 1}",
                "variants": {"raw": "features as given",
                             "scaled": "make_pipeline(StandardScaler(), est)"},
                "within_pp": WITHIN_PP, "ignored_sets": args.ignored_sets,
                "estimators": {label: {"class": ESTIMATORS[label][0],
                                       "arguments": ESTIMATORS[label][1],
                                       "random_state": ("rep" if takes_random_state(label)
                                                        else None),
                                       "params": make(label, "raw", 0).get_params()}
                               for label in labels},
                "svc_params": make("SVC", "raw", 0).get_params(), "sets": {}}
    data = {}
    for name in args.sets:
        X, y, info = load(name)
        data[name] = (X, y)
        settings["sets"][name] = info
    cases = []
    for variant in VARIANTS:
        for name in args.sets:
            H.log(f"{variant} {name}: {args.repeats} x {args.folds}-fold CV")
            rows = run_case(*data[name], variant, labels, args.repeats, args.folds)
            cases.append({"variant": variant, "set": name, "rows": rows})
    results = {"cases": cases, "summary": summarise(cases, labels)}
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


def summarise(cases, labels):
    """Per estimator: cases within WITHIN_PP of SVC, the worst and the mean accuracy gap, the
    median fit-time ratio."""
    summary = []
    for label in labels:
        rows = [(f"{c['variant']} {c['set']}", r) for c in cases for r in c["rows"]
                if r["model"] == label]
        worst_case, worst = min(rows, key=lambda cr: cr[1]["accuracy_minus_svc"])
        gaps = [r["accuracy_minus_svc"] for _, r in rows]
        summary.append({
            "model": label, "n_cases": len(rows),
            "within": int(sum(g >= -WITHIN_PP for g in gaps)),
            "worst_gap": worst["accuracy_minus_svc"], "worst_case": worst_case,
            "mean_gap": float(np.mean(gaps)),
            "median_time_ratio": H.median([r["time_ratio_svc"] for _, r in rows]),
            "n_warnings": int(sum(r["n_warnings"] for _, r in rows))})
    return summary


# ----------------------------------------------------------------- output
def render_markdown(payload):
    s, res = payload["settings"], payload["results"]
    n_folds = s["repeats"] * s["folds"]
    lines = H.header_lines("Every kernel estimator at its defaults vs SVC on small real sets "
                           "(repeated CV)", payload)
    if s["smoke"]:
        lines += ["**Smoke run** (two sets, 1 repeat): numbers are meaningless.", ""]
    lines += [
        "scikit-learn's bundled sets, no tuning. Each fastsvm estimator built with only "
        "`random_state=rep` (rep = the repeat); `SVC()` at its defaults (C = 1, "
        "gamma = 'scale'). raw: the features as given; scaled: "
        "`make_pipeline(StandardScaler(), est)`. "
        f"{s['cv']}: every estimator on the same folds. acc: the mean test accuracy over "
        f"all {n_folds} folds; sd: the standard deviation of the {s['repeats']} repeats' "
        "means (0 for one repeat); acc - SVC: the mean accuracy minus SVC's, in percentage "
        "points, with the standard deviation of that gap over the repeats (the paired "
        "noise); fit / fold: the median fit time of one fold.", ""]
    lines.append(H.markdown_table(
        ["set", "rows", "features", "classes", "smallest class", "feature sd (min .. max)"],
        [[n, f"{v['n_samples']:,}", v["n_features"], v["n_classes"],
          f"{100 * v['minority_share']:.1f} %",
          f"{v['feature_sd_min']:.3g} .. {v['feature_sd_max']:.3g}"
          + (f" ({v['constant_features']} constant)" if v["constant_features"] else "")]
         for n, v in s["sets"].items()]))
    n_cases = len(res["cases"])
    lines += ["", "## Summary", "",
              f"Cases ((variant, set) pairs, {n_cases} in all) within {WITHIN_PP:g} point of "
              f"SVC's accuracy (acc - SVC >= -{WITHIN_PP:g}), the largest and the mean gap to "
              "SVC, the median over the cases of SVC's fit time over the estimator's "
              "(> 1: faster than SVC), and the warnings the fits raised.", ""]
    lines.append(H.markdown_table(
        ["estimator", f"within {WITHIN_PP:g} pp of SVC", "worst acc - SVC (pp)",
         "mean acc - SVC (pp)", "median SVC/this", "warnings"],
        [[r["model"], f"{r['within']} / {r['n_cases']}",
          f"{r['worst_gap']:+.2f} ({r['worst_case']})", f"{r['mean_gap']:+.2f}",
          f"{r['median_time_ratio']:.3g}x", r["n_warnings"]]
         for r in res["summary"]]))
    lines += ["", "## Results", ""]
    table, notes = [], []
    for case in res["cases"]:
        for r in case["rows"]:
            is_svc = r["model"] == "SVC"
            table.append([case["variant"], case["set"], r["model"],
                          f"{100 * r['accuracy_mean']:.2f}",
                          f"{100 * r['accuracy_std_repeats']:.2f}",
                          "" if is_svc else (f"{r['accuracy_minus_svc']:+.2f} "
                                             f"+- {r['gap_std_repeats']:.2f}"),
                          f"{1000 * r['fit_s_median']:.1f}",
                          "" if is_svc else f"{r['time_ratio_svc']:.3g}x",
                          r["n_warnings"]])
            notes += [f"- {case['variant']} {case['set']}, {r['model']}: {message} ({count}x)"
                      for message, count in r["warnings"].items()]
    lines.append(H.markdown_table(
        ["variant", "set", "estimator", "acc (%)", "sd (pp)", "acc - SVC (pp)",
         "fit / fold (ms)", "SVC/this", "warnings"], table))
    if notes:
        lines += ["", f"Warnings raised by the fits (counts over the {n_folds} folds):", ""]
        lines += notes
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    res = payload["results"]
    labels = [r["model"] for r in res["summary"]]
    variants = [v for v in VARIANTS if any(c["variant"] == v for c in res["cases"])]
    fig, axes = plt.subplots(1, len(variants), figsize=(6.5 * len(variants), 4.8),
                             sharey=True, squeeze=False)
    w = 0.8 / len(labels)
    lows = [r["accuracy_minus_svc"] - r["gap_std_repeats"] for c in res["cases"]
            for r in c["rows"]]
    bottom = max(PLOT_FLOOR_PP - 2, min([-WITHIN_PP] + lows) - 1)
    for ax, variant in zip(axes[0], variants):
        cases = [c for c in res["cases"] if c["variant"] == variant]
        x = np.arange(len(cases))
        ax.axhspan(-WITHIN_PP, WITHIN_PP, color="0.92")
        ax.axhline(0, color="0.6", lw=0.8)
        for k, label in enumerate(labels):
            rows = [next(r for r in c["rows"] if r["model"] == label) for c in cases]
            gaps = np.array([r["accuracy_minus_svc"] for r in rows])
            err = [r["gap_std_repeats"] for r in rows]
            pos = x + (k - (len(labels) - 1) / 2) * w
            ax.bar(pos, np.maximum(gaps, PLOT_FLOOR_PP), w, yerr=err, capsize=2,
                   color=f"C{k}", label=label)
            for p, g in zip(pos, gaps):
                if g < PLOT_FLOOR_PP:
                    ax.text(p, PLOT_FLOOR_PP, f"{g:.0f}", ha="center", va="top", fontsize=7)
        svc = [100 * c["rows"][0]["accuracy_mean"] for c in cases]
        ax.set_xticks(x, [f"{c['set']}\nSVC {a:.1f} %" for c, a in zip(cases, svc)])
        ax.set_title(f"{variant} features")
        ax.set_ylim(bottom, None)
    axes[0][0].set_ylabel(f"mean CV accuracy - SVC's (points; below {PLOT_FLOOR_PP:g} drawn "
                          f"at {PLOT_FLOOR_PP:g})")
    axes[0][0].legend(fontsize=8)
    s = payload["settings"]
    fig.suptitle(f"estimators at their defaults vs SVC(): {s['repeats']} x {s['folds']}-fold "
                 "stratified CV (bars: +- sd of the gap over repeats; band: +- 1 point)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
