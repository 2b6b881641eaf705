"""One-vs-one against one-vs-rest: BudgetSVC, NystromSVC, MarginSGDSVC and kernel PegasosSVC
at their defaults next to SVC.

The four estimators split more than two classes (up to 30, ``multi_class='auto'``)
one-vs-one by default, as SVC does (``'ovo'``: a model per pair of classes,
on the rows of the two classes), and one-vs-rest on request or above 30
classes (``'ovr'``: a model per class against all rows; BudgetSVC's share
one budget up to 30 classes, and each has its own above).  PegasosSVC is
measured with ``kernel='rbf'`` (its linear kernel splits one-vs-rest by
default, as LinearSVC).  This benchmark measures
the choice on multi-class sets nobody tuned for: usps (10 classes, the
shared LIBSVM set) and the generated ``multiclass`` (5 classes),
``shells`` (3 concentric shells), ``letters`` (26 classes),
``imbalanced_multi`` (6 classes of 1-50 %) and ``many_classes`` (40
classes, where 'auto' is one-vs-rest) of ``benchmarks/_generated.py``.

Every fastsvm model is built with nothing but ``random_state`` and
``multi_class``, so all else is its default; ``SVC()`` at its defaults (C =
1, gamma = 'scale') once, as it is deterministic.  Each fastsvm model is
fitted with seeds 0 .. ``--repeats`` - 1 (default 3): mean and standard
deviation of test accuracy and balanced accuracy, median fit and predict
time (the whole test set), and the model size (support vectors or
landmarks).  Before the timed fits each (set, model) is fitted once on 500
rows, untimed, so the compiled kernels are loaded.

Run ``python benchmarks/multiclass_split.py`` (about 13 minutes on two
cores, 9 of them kernel PegasosSVC's); ``--smoke`` for a check in seconds
(2,000 training rows, 1 seed).
Output: ``benchmarks/results/multiclass_split.{json,md,png}``.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _generated  # noqa: E402
import _harness as H  # noqa: E402

NAME = "multiclass_split"
SETS = ("usps", "multiclass", "shells", "letters", "imbalanced_multi", "many_classes")
SMOKE_SETS = ["multiclass", "shells"]
MODELS = ("SVC", "BudgetSVC ovo", "BudgetSVC ovr", "NystromSVC ovo", "NystromSVC ovr",
          "MarginSGDSVC ovo", "MarginSGDSVC ovr", "PegasosSVC(kernel='rbf') ovo",
          "PegasosSVC(kernel='rbf') ovr")


def parse_args(argv):
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--sets", nargs="*", default=None,
                   help="multi-class sets among " + " ".join(SETS) + " (default: all; with "
                        "--smoke: " + " ".join(SMOKE_SETS) + "); other names are ignored, so "
                        "that run_all.py can pass its --sets on to every script")
    p.add_argument("--repeats", type=int, default=3, help="seeds per fastsvm model (smoke: 1)")
    args = p.parse_args(argv)
    asked = list(args.sets or [])
    ignored = [s for s in asked if s not in SETS]
    if ignored:
        H.log(f"ignored (not a multi-class set here): {' '.join(ignored)}")
    args.sets = [s for s in SETS if s in asked] or (SMOKE_SETS if args.smoke else list(SETS))
    if args.smoke:
        args.repeats = 1
    return args


def make(model, seed):
    """The estimator ``model`` of MODELS: SVC() or a fastsvm estimator at its defaults."""
    from sklearn.svm import SVC

    from fastsvm import BudgetSVC, MarginSGDSVC, NystromSVC, PegasosSVC

    if model == "SVC":
        return SVC()
    name, multi_class = model.split()
    make = {"BudgetSVC": BudgetSVC, "NystromSVC": NystromSVC, "MarginSGDSVC": MarginSGDSVC,
            "PegasosSVC(kernel='rbf')": lambda **kw: PegasosSVC(kernel="rbf", **kw)}[name]
    return make(multi_class=multi_class, random_state=seed)


def load(name, smoke):
    """(X_train, y_train, X_test, y_test) of ``name``; smoke runs cut the training rows."""
    split = H.load_split(name) if name == "usps" else _generated.load(name)
    return H.smoke_cut(*split) if smoke else split


def model_size(clf):
    """Support vectors of a kernel expansion, landmarks of a Nystrom model."""
    if hasattr(clf, "support_vectors_"):
        return int(clf.support_vectors_.shape[0])
    return int(clf.n_components_)


def run_model(model, split, repeats):
    from sklearn.metrics import balanced_accuracy_score

    X_train, y_train, X_test, y_test = split
    make(model, 0).fit(X_train[:500], y_train[:500])       # load the compiled kernels
    runs = []
    for seed in range(1 if model == "SVC" else repeats):
        clf = make(model, seed)
        _, fit_s = H.timed(clf.fit, X_train, y_train)
        pred, predict_s = H.timed(clf.predict, X_test)
        runs.append({"accuracy": float(np.mean(pred == y_test)),
                     "balanced_accuracy": float(balanced_accuracy_score(y_test, pred)),
                     "fit_s": fit_s, "predict_s": predict_s, "size": model_size(clf)})
    acc = [r["accuracy"] for r in runs]
    return {"model": model, "runs": len(runs), "accuracy_mean": float(np.mean(acc)),
            "accuracy_std": float(np.std(acc)),
            "balanced_accuracy_mean": float(np.mean([r["balanced_accuracy"] for r in runs])),
            "fit_s": H.median([r["fit_s"] for r in runs]),
            "predict_s": H.median([r["predict_s"] for r in runs]),
            "size": int(np.median([r["size"] for r in runs]))}


def main(argv=None):
    args = parse_args(argv)
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    settings = {"smoke": args.smoke, "repeats": args.repeats, "models": list(MODELS),
                "sets": {}}
    cases = []
    for name in args.sets:
        split = load(name, args.smoke)
        X_train, y_train, X_test, _ = split
        settings["sets"][name] = {"train_rows": int(X_train.shape[0]),
                                  "test_rows": int(X_test.shape[0]),
                                  "features": int(X_train.shape[1]),
                                  "classes": int(len(np.unique(y_train)))}
        rows = []
        for model in MODELS:
            H.log(f"{name}: {model}")
            rows.append(run_model(model, split, args.repeats))
        svc = rows[0]
        for row in rows:
            row["accuracy_minus_svc"] = 100 * (row["accuracy_mean"] - svc["accuracy_mean"])
            row["svc_time_ratio"] = svc["fit_s"] / row["fit_s"]
        cases.append({"set": name, "rows": rows})
    return H.write_outputs(out, NAME, settings, {"cases": cases}, started, machine,
                           render_markdown, plot)


def render_markdown(payload):
    s, res = payload["settings"], payload["results"]
    lines = H.header_lines("One-vs-one against one-vs-rest, at the defaults, next to SVC",
                           payload)
    lines += [f"BudgetSVC, NystromSVC, MarginSGDSVC and PegasosSVC(kernel='rbf') built with "
              f"only `random_state` (seeds 0-"
              f"{s['repeats'] - 1}: mean +- sd of test accuracy, median times) and "
              "`multi_class`; `SVC()` at its defaults, once. Generated sets: "
              "`benchmarks/_generated.py` (a stratified 25 % held out). acc - SVC in "
              "percentage points; SVC/this: SVC's fit time over the model's (> 1: faster); "
              "size: support vectors, or landmarks for NystromSVC; predict: the whole "
              "test set.", ""]
    lines += [H.markdown_table(["set", "train rows", "test rows", "features", "classes"],
                               [[name, f"{v['train_rows']:,}", f"{v['test_rows']:,}",
                                 v["features"], v["classes"]]
                                for name, v in s["sets"].items()]), ""]
    rows = []
    for case in res["cases"]:
        for r in case["rows"]:
            svc = r["model"] == "SVC"
            rows.append([case["set"], r["model"],
                         f"{100 * r['accuracy_mean']:.2f}"
                         + ("" if svc else f" +- {100 * r['accuracy_std']:.2f}"),
                         "" if svc else f"{r['accuracy_minus_svc']:+.2f}",
                         f"{100 * r['balanced_accuracy_mean']:.2f}", f"{r['fit_s']:.2f}",
                         "" if svc else f"{r['svc_time_ratio']:.2g}x",
                         f"{r['predict_s']:.2f}", f"{r['size']:,}"])
    lines += [H.markdown_table(["set", "model", "acc (%)", "acc - SVC (pp)", "bal. acc (%)",
                                "fit (s)", "SVC/this", "predict (s)", "size"], rows)]
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    cases = payload["results"]["cases"]
    models = [m for m in MODELS if m != "SVC"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    x = np.arange(len(cases))
    w = 0.8 / len(models)
    for k, model in enumerate(models):
        rows = [next(r for r in c["rows"] if r["model"] == model) for c in cases]
        pos = x + (k - (len(models) - 1) / 2) * w
        axes[0].bar(pos, [r["accuracy_minus_svc"] for r in rows], w, color=f"C{k}",
                    label=model)
        axes[1].bar(pos, [r["svc_time_ratio"] for r in rows], w, color=f"C{k}", label=model)
    labels = [c["set"] for c in cases]
    axes[0].axhspan(-1, 1, color="0.92", zorder=0)    # behind the bars
    axes[0].axhline(0, color="0.6", lw=0.8)
    axes[0].set_ylabel("test accuracy - SVC's (points)")
    axes[1].axhline(1, color="0.6", lw=0.8)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("SVC fit time / fit time (> 1: faster)")
    for ax in axes:
        ax.set_xticks(x, labels, rotation=20)
    axes[0].legend(fontsize=8)
    fig.suptitle("one-vs-one against one-vs-rest at the defaults, next to SVC()", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
