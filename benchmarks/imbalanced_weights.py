"""Imbalanced data: each fastsvm estimator with and without class_weight='balanced', and SVC.

Headline: the balanced accuracy (``sklearn.metrics.balanced_accuracy_score``,
the mean recall over the classes) on the test set of each estimator fitted
with ``class_weight=None`` and with ``class_weight='balanced'`` (the weight
multiplies the sample's C, as in SVC), next to scikit-learn's
``SVC(class_weight=None)`` and ``SVC(class_weight='balanced')``.

Tasks (the registry's train/test splits, CSR input as ``load_dataset``
gives it):

* ijcnn1 (about 10 % positive) and a9a (about 24 % positive) at the BSGD
  paper's C and gamma (``fastsvm.datasets.DATASETS``);
* usps-ovr: the rarest digit of the usps training labels against all other
  digits, C = 10, gamma = 'scale';
* usps-multi: the 10-class usps problem with every training row of labels
  1..5 and a random 10 % (seed 0) of the rows of each of labels 6..10, so that the
  class sizes differ about tenfold; C = 10, gamma = 'scale'; the test set is
  the full usps test set;
* phishing (not imbalanced, not run by default; for quick checks).

gamma = 'scale' is resolved once on the task's training rows, and every
kernel method gets that number.  Estimators (each with both class weights):

* ``SVC(C, gamma, cache_size=1000)``: once (deterministic);
* ``BudgetSVC(C, gamma, budget=500, epochs=5, learning_rate='pegasos',
  intercept_scaling=0, multi_class='ovr', shared_budget=False)`` (the
  paper's Algorithm 1; 500 per class on usps-multi);
* ``NystromSVC(C, gamma, n_components=1000, solver='assg')`` (Snacks);
* ``HuberSVC(C=1)``: linear, L-BFGS to its default duality gap; deterministic, once;
* ``PegasosSVC(kernel='linear', C=0.1)``: linear (its last iterate is noisy
  at larger C);
* ``MarginSGDSVC()`` at its defaults (it tunes gamma and M itself; its
  coefficients are capped at its default C = 1).

The stochastic fastsvm estimators run ``--runs`` times (seeds 0, 1, ...),
the two class weights back to back for each seed: mean +- std of balanced
accuracy and of plain accuracy, median fit time.  ConvergenceWarnings are
caught and recorded per run, not raised.  n_jobs is left at its default
(one job).

Run ``python benchmarks/imbalanced_weights.py`` (about 16 minutes on two
cores); ``--smoke`` for a check in seconds.  Output:
``benchmarks/results/imbalanced_weights.{json,md,png}``.
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NAME = "imbalanced_weights"
USPS = dict(C=10.0, gamma="scale")
# task -> data set, and C, gamma where the registry has none, and how y is built
TASKS = {
    "ijcnn1": dict(data="ijcnn1"),
    "a9a": dict(data="a9a"),
    "usps-ovr": dict(data="usps", **USPS, rarest_vs_rest=True),
    "usps-multi": dict(data="usps", **USPS, reduced_labels=(6, 7, 8, 9, 10), keep=0.1),
    # not imbalanced and not run by default; for quick checks
    "phishing": dict(data="phishing"),
}
DEFAULT_TASKS = ["ijcnn1", "a9a", "usps-ovr", "usps-multi"]
MODELS = ("SVC", "BudgetSVC", "NystromSVC", "HuberSVC", "PegasosSVC", "MarginSGDSVC")
DETERMINISTIC = {"SVC", "HuberSVC"}
CLASS_WEIGHTS = (None, "balanced")
SVC_CACHE_MB = 1000
SUBSAMPLE_SEED = 0


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", choices=list(TASKS), default=DEFAULT_TASKS,
                   help="tasks to run")
    p.add_argument("--runs", type=int, default=3, help="runs of the stochastic models")
    p.add_argument("--budget", type=int, default=500, help="BudgetSVC budget")
    p.add_argument("--epochs", type=int, default=5, help="BudgetSVC epochs")
    p.add_argument("--components", type=int, default=1000, help="NystromSVC n_components")
    args = p.parse_args(argv)
    if args.smoke:
        args.runs, args.epochs = 1, 1
        args.budget = min(args.budget, 20)
        args.components = min(args.components, 100)
    return args


def load_task(name, smoke):
    """The task's (X_train, y_train, X_test, y_test) and a description of its labels."""
    from fastsvm.datasets import load_dataset

    cfg = TASKS[name]
    X, y, X_test, y_test = load_dataset(cfg["data"])
    info = {}
    if cfg.get("rarest_vs_rest"):
        labels, counts = np.unique(y, return_counts=True)
        rarest = labels[np.argmin(counts)]
        y, y_test = y == rarest, y_test == rarest
        info["positive_label"] = float(rarest)
    if "reduced_labels" in cfg:
        rng = np.random.default_rng(SUBSAMPLE_SEED)
        keep = [np.flatnonzero(~np.isin(y, cfg["reduced_labels"]))]
        for label in cfg["reduced_labels"]:
            rows = np.flatnonzero(y == label)
            keep.append(rng.choice(rows, int(round(cfg["keep"] * len(rows))), replace=False))
        keep = np.sort(np.concatenate(keep))
        X, y = X[keep], y[keep]
        info.update(reduced_labels=list(cfg["reduced_labels"]), keep_fraction=cfg["keep"])
    if smoke:
        X, y, X_test, y_test = H.smoke_cut(X, y, X_test, y_test)
    labels, counts = np.unique(y, return_counts=True)
    info.update(train_class_sizes={_label(lab): int(c) for lab, c in zip(labels.tolist(), counts)},
                minority_share=float(counts.min() / counts.sum()),
                size_ratio=float(counts.max() / counts.min()))
    return (X, y, X_test, y_test), info


def _label(label):
    """A class label as text: 'True' / 'False' for the one-vs-rest tasks, else short."""
    return str(label) if isinstance(label, bool) else f"{label:g}"


def make_model(name, C, gamma, class_weight, seed, args):
    """A fresh estimator ``name`` with the task's C and gamma where it takes them."""
    from sklearn.svm import SVC

    from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

    if name == "SVC":
        return SVC(C=C, gamma=gamma, class_weight=class_weight, cache_size=SVC_CACHE_MB)
    if name == "BudgetSVC":
        return BudgetSVC(C=C, gamma=gamma, budget=args.budget, epochs=args.epochs,
                         learning_rate="pegasos", intercept_scaling=0.0, multi_class="ovr",
                         shared_budget=False, class_weight=class_weight, random_state=seed)
    if name == "NystromSVC":
        return NystromSVC(C=C, gamma=gamma, n_components=args.components, solver="assg",
                          class_weight=class_weight, random_state=seed)
    if name == "HuberSVC":
        return HuberSVC(C=1.0, class_weight=class_weight)
    if name == "PegasosSVC":
        return PegasosSVC(kernel="linear", C=0.1, class_weight=class_weight, random_state=seed)
    return MarginSGDSVC(class_weight=class_weight, random_state=seed)


def model_settings(args):
    """What each model was run with (for the settings and the markdown)."""
    return {
        "SVC": f"C, gamma of the task, cache_size={SVC_CACHE_MB}",
        "BudgetSVC": f"C, gamma of the task, budget={args.budget}, epochs={args.epochs}, "
                     "learning_rate='pegasos', intercept_scaling=0",
        "NystromSVC": f"C, gamma of the task, n_components={args.components}",
        "HuberSVC": "C=1, linear, default tol",
        "PegasosSVC": "C=0.1, linear",
        "MarginSGDSVC": "defaults (gamma and M tuned; coefficients capped at C = 1)",
    }


def fit_and_score(clf, split):
    """Fit and score ``clf``; the run's numbers and the warnings the fit raised."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    X_train, y_train, X_test, y_test = split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, fit_s = H.timed(clf.fit, X_train, y_train)
    pred = clf.predict(X_test)
    messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return {"fit_s": fit_s, "balanced_accuracy": float(balanced_accuracy_score(y_test, pred)),
            "accuracy": float(accuracy_score(y_test, pred)), "warnings": messages}


def run_task(name, split, args):
    """Every model with both class weights on one task; the task's parameters and rows."""
    from fastsvm.datasets import DATASETS
    from fastsvm.kernels import resolve_gamma

    cfg = TASKS[name]
    spec = DATASETS[cfg["data"]]
    C = cfg.get("C", spec.C)
    gamma = resolve_gamma(cfg.get("gamma", spec.gamma), split[0])
    rows = []
    for model in MODELS:
        runs = 1 if model in DETERMINISTIC else args.runs
        raw = {str(cw): [] for cw in CLASS_WEIGHTS}
        for seed in range(runs):
            for cw in CLASS_WEIGHTS:
                run = fit_and_score(make_model(model, C, gamma, cw, seed, args), split)
                raw[str(cw)].append({"seed": seed, **run})
                H.log(f"    {model} class_weight={cw} seed={seed} fit={run['fit_s']:.2f}s "
                      f"bal.acc={run['balanced_accuracy']:.4f} acc={run['accuracy']:.4f}"
                      + (f" [{len(run['warnings'])} warning(s)]" if run["warnings"] else ""))
        rows.append(summarise(model, runs, raw))
    return {"C": C, "gamma": gamma}, rows


def summarise(model, runs, raw):
    """One row: mean +- std of both accuracies and median fit time per class weight."""
    row = {"model": model, "runs": runs, "raw": raw}
    for key, runs_cw in raw.items():
        bal, bal_std = H.mean_std([r["balanced_accuracy"] for r in runs_cw])
        acc, acc_std = H.mean_std([r["accuracy"] for r in runs_cw])
        row[key] = {"balanced_accuracy": bal, "balanced_accuracy_std": bal_std,
                    "accuracy": acc, "accuracy_std": acc_std,
                    "fit_s": H.median([r["fit_s"] for r in runs_cw]),
                    "runs_with_warnings": sum(bool(r["warnings"]) for r in runs_cw)}
    row["change_points"] = 100 * (row["balanced"]["balanced_accuracy"]
                                  - row["None"]["balanced_accuracy"])
    return row


def warm_up(split):
    """Compile the numba kernels outside the timings."""
    from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

    X, y = H.subsample(split[0], split[1], 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for clf in (BudgetSVC(budget=20, epochs=1, random_state=0),
                    NystromSVC(n_components=50, random_state=0), HuberSVC(),
                    PegasosSVC(random_state=0), MarginSGDSVC(random_state=0)):
            for cw in CLASS_WEIGHTS:
                clf.set_params(class_weight=cw).fit(X, y).predict(X)


def main(argv=None):
    args = parse_args(argv)
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    settings = {"tasks": {}, "runs": args.runs, "budget": args.budget, "epochs": args.epochs,
                "n_components": args.components, "models": model_settings(args),
                "subsample_seed": SUBSAMPLE_SEED, "svc_cache_mb": SVC_CACHE_MB,
                "smoke": args.smoke}
    results = []
    for name in args.sets:
        H.log(f"{name}: loading")
        split, info = load_task(name, args.smoke)
        warm_up(split)
        params, rows = run_task(name, split, args)
        settings["tasks"][name] = {"data": TASKS[name]["data"], **params, **info,
                                   "n_train": int(split[0].shape[0]),
                                   "n_test": int(split[2].shape[0]),
                                   "n_features": int(split[0].shape[1])}
        results.append({"task": name, "rows": rows})
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


def _pm(mean, std, runs):
    """'mean +- std' in percent (the std only for several runs)."""
    return f"{100 * mean:.2f}" + (f" +- {100 * std:.2f}" if runs > 1 else "")


def describe_task(name, t):
    """A short description of a task's labels."""
    if "positive_label" in t:
        return f"label {t['positive_label']:g} (digit {t['positive_label'] - 1:g}) vs rest"
    if "reduced_labels" in t:
        labels = t["reduced_labels"]
        return (f"10 classes; labels {labels[0]}..{labels[-1]} cut to "
                f"{100 * t['keep_fraction']:g} % of their rows (seed {SUBSAMPLE_SEED})")
    return "binary"


def render_markdown(payload):
    s = payload["settings"]
    lines = H.header_lines("Class weights on imbalanced data: class_weight=None vs 'balanced'",
                           payload)
    if s["smoke"]:
        lines += ["**Smoke run** (tiny subsample, 1 run, 1 epoch): numbers are meaningless.", ""]
    lines += ["Headline: balanced accuracy (mean recall over the classes) on the test set, in %. "
              f"Stochastic models: mean +- std over {s['runs']} runs (seeds 0..{s['runs'] - 1}), "
              "the two class weights back to back per seed; SVC and HuberSVC: one run "
              "(deterministic). change: balanced accuracy with 'balanced' minus without, in "
              "points. fit: median wall time of fit, without / with. Every model gets the "
              "same CSR matrices; gamma = 'scale' is resolved once per task on its training "
              "rows.", ""]
    lines.append(H.markdown_table(
        ["task", "data", "labels", "train class sizes", "minority share", "C", "gamma",
         "n train", "n test"],
        [[n, t["data"], describe_task(n, t),
          ", ".join(f"{lab}: {c:,}" for lab, c in t["train_class_sizes"].items()),
          f"{100 * t['minority_share']:.1f} %", H.pow2(t["C"]), H.pow2(t["gamma"]),
          f"{t['n_train']:,}", f"{t['n_test']:,}"] for n, t in s["tasks"].items()]))
    lines += ["", "Models: " + "; ".join(f"{m}: {v}" for m, v in s["models"].items()) + ".",
              "", "## Results", ""]
    table, warned = [], []
    for entry in payload["results"]:
        for r in entry["rows"]:
            none, bal = r["None"], r["balanced"]
            table.append([
                entry["task"], r["model"], r["runs"],
                _pm(none["balanced_accuracy"], none["balanced_accuracy_std"], r["runs"]),
                _pm(bal["balanced_accuracy"], bal["balanced_accuracy_std"], r["runs"]),
                f"{r['change_points']:+.2f}",
                f"{100 * none['accuracy']:.2f} / {100 * bal['accuracy']:.2f}",
                f"{none['fit_s']:.2f} / {bal['fit_s']:.2f}"])
            for key in ("None", "balanced"):
                messages = sorted({m for run in r["raw"][key] for m in run["warnings"]})
                if messages:
                    warned.append(f"- {entry['task']}, {r['model']}, class_weight={key}: "
                                  f"{r[key]['runs_with_warnings']} of {r['runs']} runs: "
                                  + "; ".join(messages))
    lines.append(H.markdown_table(
        ["task", "model", "runs", "bal. acc, no weights", "bal. acc, 'balanced'",
         "change (points)", "acc no weights / 'balanced'", "fit (s) no weights / 'balanced'"],
        table))
    lines += ["", "Warnings raised by fit (caught and recorded, not raised):", ""]
    lines += warned or ["- none"]
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    entries = payload["results"]
    fig, axes = plt.subplots(1, len(entries), figsize=(4.6 * len(entries), 4.6), squeeze=False)
    w = 0.38
    for ax, entry in zip(axes[0], entries):
        rows = entry["rows"]
        x = np.arange(len(rows))
        for k, (key, label, color) in enumerate([("None", "class_weight=None", "tab:gray"),
                                                 ("balanced", "class_weight='balanced'",
                                                  "tab:orange")]):
            ax.bar(x + (k - 0.5) * w, [100 * r[key]["balanced_accuracy"] for r in rows], w,
                   yerr=[100 * r[key]["balanced_accuracy_std"] for r in rows], capsize=2,
                   label=label, color=color)
        low = min(100 * r[key]["balanced_accuracy"] for r in rows for key in ("None", "balanced"))
        ax.set_ylim(max(0.0, low - 5), 100)
        ax.set_xticks(x, [r["model"] for r in rows], rotation=40, ha="right", fontsize=8)
        ax.set_title(entry["task"])
    axes[0][0].set_ylabel("test balanced accuracy (%)")
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
