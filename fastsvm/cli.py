"""Command-line interface: ``fastsvm train``, ``fastsvm predict`` and ``fastsvm warmup``.

In the spirit of LIBSVM's ``svm-train`` / ``svm-predict``, on LIBSVM
(svmlight) text files::

    fastsvm train -B 500 -e 2 a9a a9a.model.npz            # a BudgetSVC (the default solver)
    fastsvm train --solver nystrom -n 800 -w1 3 a9a m.npz  # NystromSVC, class 1 weighted 3x
    fastsvm predict a9a.t a9a.model.npz a9a.t.out          # one predicted label per line
    fastsvm warmup                                         # compile the kernels once

``--solver`` picks one of fastsvm's five estimators (``fastsvm train -h``
lists them); every option sets one estimator parameter, mostly of the same name
(``-s`` random_state, ``--nystrom-solver`` solver, ``--separate-budgets``
shared_budget=False), and an option the chosen estimator does not have is an
error; one it has but will not read with the other options (a kernel parameter
the kernel lacks, a merge method with ``--maintenance remove``) is a warning.
Options left out keep the estimator's defaults.  Class weights: ``--class-weight balanced``,
or LIBSVM's ``-wLABEL WEIGHT`` (e.g. ``-w1 5 -w-1 0.5``) for a dict.  Run
``fastsvm train -h`` / ``fastsvm predict -h`` for the options. The same
program runs as ``python -m fastsvm``. Models are written in the fastsvm
model file format (see :mod:`fastsvm.persistence`), loadable from Python
with :func:`fastsvm.persistence.load_model`; ``fastsvm predict`` takes the
model file of any estimator.

Labels are read as numbers from the data file; when all training labels are
integers the model's classes are integers, and labels are printed as
integers whenever they are integral (``1``, not ``1.0``).  Integer labels of
magnitude 2^53 or more are an error: float64 cannot tell them apart.

Exit status: 0 on success, 1 on an error (missing or unreadable file, corrupt
data or model file, invalid option value, feature count mismatch), reported
as ``fastsvm: error: <message>`` on standard error; 2 on a command-line usage
error (from argparse).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
import warnings

import numpy as np

import fastsvm

PROG = "fastsvm"

#: --solver name -> (estimator class name in :mod:`fastsvm`, one line for --help).  Only
#: the chosen estimator is imported (with scikit-learn and numba), when a command needs it.
SOLVERS = {
    "budget": ("BudgetSVC", "BudgetSVC: kernel SVM by budgeted SGD, merging support vectors "
                            "(Glasmachers & Qaadan); the default"),
    "nystrom": ("NystromSVC", "NystromSVC: Nystrom embedding + linear SVM solved to a "
                              "duality-gap certificate (Snacks)"),
    "huber": ("HuberSVC", "HuberSVC: linear SVM with a Huber hinge by L-BFGS, certified by "
                          "its duality gap, with margin bounds (Guillory & Bilmes)"),
    "pegasos": ("PegasosSVC", "PegasosSVC: mini-batch Pegasos with margin bounds, linear or "
                              "with a kernel (Guillory & Bilmes)"),
    "margin-sgd": ("MarginSGDSVC", "MarginSGDSVC: one-pass margin SGD that tunes gamma and M "
                                   "(Orchel & Suykens)"),
}
#: LIBSVM's -t kernel numbers.
LIBSVM_KERNELS = {"0": "linear", "1": "poly", "2": "rbf", "3": "sigmoid"}
#: The values of the string options, written out so that parsing the command line
#: imports no solver; tests/test_cli.py checks them against the estimators'.
MERGE_METHODS = ("gss", "gss-precise", "lookup-h", "lookup-wd")   # fastsvm.merge.METHODS
MAINTENANCE = ("merge", "remove")                   # fastsvm.bsgd.estimator.MAINTENANCE
UPDATES = ("constant", "squared-hinge")             # fastsvm.margin_sgd.solver.UPDATES
NYSTROM_SOLVERS = ("assg", "dcd", "pegasos")        # NystromSVC's solver options
HUBER_SOLVERS = ("gd", "lbfgs")                     # fastsvm.bounds.solver.HUBER_SOLVERS
#: Options that set a parameter of another name of one --solver's estimator only:
#: dest -> (--solver, parameter).
OWN_OPTIONS = {"nystrom_solver": ("nystrom", "solver"), "huber_solver": ("huber", "solver")}


class CLIError(Exception):
    """An error reported to the user as ``fastsvm: error: <message>``."""


class _ReportStream:
    """Standard output for reports (the command's lines and the estimators' verbose
    ones): when its reader goes away (``fastsvm train ... | head -1``) or it is closed,
    the lines are dropped and the work goes on, so a trained model is still saved.
    ``raw`` is the stream itself (None: closed), where predictions are written, for
    which a reader that went away is an error."""

    def __init__(self, raw):
        self.raw = raw
        self._open = raw is not None

    def write(self, text):
        if self._open:
            try:
                self.raw.write(text)
            except BrokenPipeError:
                self._open = _silence(self.raw)
        return len(text)

    def flush(self):
        if self._open:
            try:
                self.raw.flush()
            except BrokenPipeError:
                self._open = _silence(self.raw)


def _silence(stream):
    """Point ``stream``'s file descriptor at the null device, so that Python does not
    complain when it flushes the stream at exit; returns False (the stream is closed)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return False


def _tell(text):
    """One line on standard error, if the process has one."""
    if sys.stderr is not None:
        print(text, file=sys.stderr)


# --------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------


def _number_or(*words):
    """An argparse type: a float, or one of ``words``."""
    def parse(text):
        if text in words:
            return text
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number or {' or '.join(map(repr, words))}, got {text!r}") from None
    return parse


def _kernel(text):
    return LIBSVM_KERNELS.get(text, text)


def _solver_list():
    return "\n".join(f"  {name:<11} {line}" for name, (_, line) in SOLVERS.items())


def _add_estimator_options(train):
    """The estimator options; each ``dest`` is the estimator parameter it sets."""
    common = train.add_argument_group("model options (the estimator's default when left out)")
    common.add_argument("-c", "--C", type=float, dest="C",
                        help="regularisation C > 0 (lambda = 1 / (C * sum of sample weights); "
                             "margin-sgd: the cap on each coefficient)")
    common.add_argument("-t", "--kernel", type=_kernel, dest="kernel",
                        choices=["linear", "poly", "rbf", "sigmoid", "laplacian"],
                        help="kernel (LIBSVM's numbers 0-3 also work); not for huber; laplacian for "
                             "nystrom only; sigmoid for pegasos with --no-margin-bounds")
    common.add_argument("-g", "--gamma", type=_number_or("scale", "auto"), dest="gamma",
                        help="kernel width > 0, 'scale' (1 / (n_features * X.var())), or for "
                             "margin-sgd 'auto' (tuned)")
    common.add_argument("-d", "--degree", type=int, dest="degree", help="degree of 'poly'")
    common.add_argument("-r", "--coef0", type=float, dest="coef0",
                        help="constant of 'poly' and 'sigmoid'")
    common.add_argument("--class-weight", choices=["balanced"], dest="class_weight",
                        help="weight classes by n_samples / (n_classes * bincount(y))")
    common.add_argument("-w", metavar=("LABEL", "WEIGHT"), dest="weights", action="append",
                        nargs=2, help="multiply C of class LABEL by WEIGHT; repeatable; LIBSVM's "
                                      "spelling -wLABEL WEIGHT (e.g. -w1 5) works too")
    common.add_argument("-s", "--seed", type=int, dest="random_state", metavar="SEED",
                        help="random seed")
    common.add_argument("-j", "--n-jobs", type=int, dest="n_jobs", metavar="N",
                        help="threads for the binary problems of a multi-class fit")
    common.add_argument("--multi-class", choices=["auto", "ovo", "ovr"], dest="multi_class",
                        help="more than two classes (budget, nystrom, margin-sgd, pegasos): "
                             "one model per pair of classes (ovo, as SVC) or per class against "
                             "the rest (ovr); the default, auto, is ovo up to 30 classes "
                             "(pegasos with the linear kernel: ovr, as LinearSVC)")

    budget = train.add_argument_group("budget (BudgetSVC)")
    budget.add_argument("-B", "--budget", type=int, dest="budget",
                        help="maximum number of support vectors of the model (of each binary "
                             "model with ovo or --separate-budgets), >= 2; default 500, "
                             "500 sqrt(2/K) per pair of K > 2 classes, and 500 sqrt(K) "
                             "shared by K > 2 one-vs-rest models (up to 30 classes; above, "
                             "500 each); 4 times that where the "
                             "rows lie far apart in the kernel's feature space (many "
                             "informative dimensions)")
    budget.add_argument("--separate-budgets", action="store_const", const=False,
                        dest="shared_budget",
                        help="with --multi-class ovr, give each one-vs-rest model its own "
                             "budget (default: they share one up to 30 classes, and each has "
                             "its own above 30 or with the linear kernel)")
    budget.add_argument("-e", "--epochs", type=int, dest="epochs",
                        help="passes over the training data, >= 1")
    budget.add_argument("-m", "--merge-method", choices=MERGE_METHODS, dest="merge_method",
                        help="how the merge problem is solved: lookup table of WD or h, or "
                             "golden section search")
    budget.add_argument("--maintenance", choices=MAINTENANCE, dest="maintenance",
                        help="budget maintenance: merge two support vectors (RBF kernel; "
                             "exactly with the linear kernel), or remove the smallest")

    nystrom = train.add_argument_group("nystrom (NystromSVC)")
    nystrom.add_argument("-n", "--n-components", type=int, dest="n_components",
                         help="number of landmarks m")
    nystrom.add_argument("--landmarks", choices=["uniform", "leverage"], dest="landmarks",
                         help="landmark sampling")
    nystrom.add_argument("--nystrom-solver", choices=NYSTROM_SOLVERS, dest="nystrom_solver",
                         help="the linear SVM solver on the embedding (dcd: dual coordinate "
                              "descent, stops on the duality gap)")
    nystrom.add_argument("--max-stages", type=int, dest="max_stages",
                         help="maximum stages (for dcd: full passes of work)")

    iterative = train.add_argument_group("huber (HuberSVC), pegasos (PegasosSVC)")
    iterative.add_argument("--huber-solver", choices=HUBER_SOLVERS, dest="huber_solver",
                           help="huber: lbfgs (the default, stops on the duality gap) or the "
                                "paper's gradient descent gd (stops on the objective's change)")
    iterative.add_argument("--max-iter", type=int, dest="max_iter", help="maximum iterations")
    iterative.add_argument("--tol", type=float, dest="tol",
                           help="stopping tolerance (huber, nystrom)")
    iterative.add_argument("--batch-size", type=int, dest="batch_size",
                           help="points per Pegasos iteration (default 1)")
    iterative.add_argument("--no-average", action="store_const", const=False, dest="average",
                           help="pegasos: the last iterate is the model (the paper's), not the "
                                "average of the last half of the iterates")
    iterative.add_argument("--no-margin-bounds", action="store_const", const=False,
                           dest="margin_bounds",
                           help="compute every margin (the same model); pegasos needs it for "
                                "-t sigmoid, which has no feature space for the bounds")

    margin = train.add_argument_group("margin-sgd (MarginSGDSVC)")
    margin.add_argument("-M", "--margin", type=_number_or("auto"), dest="M",
                        help="margin threshold M >= 0, or 'auto' (tuned)")
    margin.add_argument("--update", choices=UPDATES, dest="update", help="update rule")
    margin.add_argument("--sampling", choices=["replacement", "permutation"], dest="sampling",
                        help="draws with replacement, or one permutation")


#: The ``dest`` of every estimator option (filled by :func:`_build_parser`).
_ESTIMATOR_OPTIONS = {}


class _IntermixedParser(argparse.ArgumentParser):
    """A command's parser that takes options between its positional arguments.

    argparse's plain parsing fills positionals in runs: in ``train data.txt -q m.npz`` the
    run before ``-q`` gives ``data.txt`` to ``data_file`` and nothing to the optional
    ``model_file``, and ``m.npz`` is then an unrecognised argument (a usage error).
    :meth:`~argparse.ArgumentParser.parse_known_intermixed_args` reads the options first
    and the positionals after, as ``svm-train``'s users expect; it parses by calling
    ``parse_known_args`` itself, which must then parse plainly."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Fast large-scale kernel SVM training on LIBSVM data files.",
        epilog="solvers of 'fastsvm train --solver':\n" + _solver_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {fastsvm.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=_IntermixedParser)

    train = sub.add_parser(
        "train",
        help="train a model on a LIBSVM data file and save it",
        description=("Train one of fastsvm's SVMs on a LIBSVM data file and save it as a "
                     "fastsvm model file.\n\nsolvers (--solver):\n" + _solver_list()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("data_file", help="training data in LIBSVM format")
    train.add_argument(
        "model_file",
        nargs="?",
        help="output model file (default: <data_file basename>.model.npz in the current directory)",
    )
    train.add_argument("--solver", choices=list(SOLVERS), default="budget", dest="estimator",
                       help="the estimator to train (default: %(default)s)")
    before = {action.dest for action in train._actions}
    _add_estimator_options(train)
    _ESTIMATOR_OPTIONS.update({action.dest: "/".join(action.option_strings)
                               for action in train._actions if action.dest not in before})
    train.add_argument("--zero-based", action="store_true",
                       help="feature indices of the data file start at 0 (LIBSVM's start at 1; "
                       "index 0 is otherwise an error, never guessed)")
    train.add_argument("--n-features", type=int, metavar="N",
                       help="the model's number of features, when files to predict may use "
                       "features the training file does not (default: the training file's "
                       "largest feature index)")
    train.add_argument("-q", "--quiet", action="store_true", help="quiet mode: no progress and no report")
    train.set_defaults(func=_train)

    predict = sub.add_parser(
        "predict",
        help="predict the labels of a LIBSVM data file with a saved model",
        description=(
            "Predict the labels of a LIBSVM data file with a model saved by 'fastsvm train' "
            "(or save_model, any estimator), writing one label per line, and report the "
            "accuracy against the file's labels."
        ),
    )
    predict.add_argument("data_file", help="data in LIBSVM format")
    predict.add_argument("model_file", help="model file written by 'fastsvm train' (or save_model)")
    predict.add_argument(
        "output_file", nargs="?",
        help="where to write the predicted labels (default, or '-': standard output; the "
        "accuracy then goes to standard error)",
    )
    base = predict.add_mutually_exclusive_group()
    base.add_argument("--zero-based", action="store_const", const=True, dest="zero_based",
                      help="feature indices of the data file start at 0 (default: as in the "
                      "model's training file; LIBSVM's start at 1)")
    base.add_argument("--one-based", action="store_const", const=False, dest="zero_based",
                      help="feature indices of the data file start at 1, as LIBSVM's (the "
                      "default unless the model was trained with --zero-based)")
    predict.add_argument("-q", "--quiet", action="store_true", help="quiet mode: do not report the accuracy")
    predict.set_defaults(func=_predict)

    warmup = sub.add_parser(
        "warmup",
        help="compile fastsvm's kernels into numba's disk cache (once after installing)",
        description=("Compile every solver's kernels for every input type into numba's "
                     "on-disk cache, so that no later fit pays compilation (seconds per "
                     "solver). Run it once after installing fastsvm."),
    )
    warmup.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    warmup.set_defaults(func=_warmup)
    return parser


def _expand_libsvm_weights(argv):
    """LIBSVM's ``-wLABEL WEIGHT`` (e.g. ``-w1 5``, ``-w-1 0.5``) as ``-w LABEL WEIGHT``."""
    out = []
    for token in argv:
        match = re.fullmatch(r"-w(.+)", token)
        out += ["-w", match.group(1)] if match else [token]
    return out


def _estimator(args):
    """The estimator of ``--solver`` with the options given; an option it lacks is an error."""
    cls = getattr(fastsvm, SOLVERS[args.estimator][0])
    accepted = cls().get_params()
    params = {}
    for dest, flags in _ESTIMATOR_OPTIONS.items():
        value = getattr(args, dest)
        if value is None or dest == "weights":
            continue
        owner, param = OWN_OPTIONS.get(dest, (args.estimator, dest))
        if owner != args.estimator:
            raise CLIError(f"option {flags} does not apply to --solver {args.estimator} "
                           f"(only to --solver {owner})")
        dest = param
        if dest not in accepted:
            raise CLIError(f"option {flags} does not apply to --solver {args.estimator} "
                           f"({cls.__name__} has no parameter {dest!r})")
        params[dest] = value
    if args.weights is not None and "class_weight" in params:
        raise CLIError("give either --class-weight balanced or -wLABEL WEIGHT, not both")
    clf = cls(**params, verbose=0 if args.quiet else 1)
    # Reject bad option values (C <= 0, budget < 2, ...) before reading the data;
    # fit validates them again (InvalidParameterError, a ValueError).
    clf._validate_params()
    clf._check_parameters()
    _warn_unread_options(clf.get_params(), params)
    return clf


def _warn_unread_options(settings, given):
    """Warn about options in ``given`` that the estimator of parameters ``settings`` takes
    but will not read (LIBSVM's svm-train ignores them silently, as SVC ignores gamma
    under the linear kernel): a kernel parameter the kernel has not, a merge method
    where support vectors are removed, not merged."""
    from fastsvm.kernels import kernel_parameters

    kernel = settings.get("kernel")
    for param in ("gamma", "degree", "coef0"):
        if param in given and kernel is not None and param not in kernel_parameters(kernel):
            warnings.warn(f"option {_ESTIMATOR_OPTIONS[param]} has no effect: kernel "
                          f"{kernel!r} has no {param}")
    if "merge_method" in given and settings.get("maintenance") == "remove":
        warnings.warn(f"option {_ESTIMATOR_OPTIONS['merge_method']} has no effect: "
                      "--maintenance remove removes support vectors instead of merging them")


def _class_weight(pairs, classes):
    """The dict of ``-wLABEL WEIGHT`` options, keyed like the model's classes."""
    weights = {}
    for label, weight in pairs:
        try:
            value = float(weight)
        except ValueError:
            raise CLIError(f"-w{label}: the weight must be a number, got {weight!r}") from None
        try:
            number = float(label)
        except ValueError:
            raise CLIError(f"-w{label}: the label must be a number, as in the data file") from None
        key = int(number) if classes.dtype.kind == "i" and number.is_integer() else format_label(number)
        if key not in classes.tolist():
            raise CLIError(f"-w{label}: {label} is not a class of the data (classes: "
                           f"{_format_classes(classes)})")
        weights[key] = value
    return weights


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def format_label(value):
    """A label as text: integral numbers as integers (``1``, not ``1.0``)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


def _training_labels(y, path):
    """The labels of a LIBSVM file as class labels for the estimator.

    Integral labels (the usual case) become int64. Other numbers (e.g. 0.5)
    are not accepted as classes by scikit-learn estimators ("continuous"
    targets), so they become their text form (``"0.5"``), which is also how
    they are printed.  Labels are read as float64 (as LIBSVM reads them), in
    which integers of magnitude 2^53 or more are not all distinct
    (9007199254740993 reads as 9007199254740992): such labels are an error
    (``path`` names the file), not classes silently merged.
    """
    y = np.asarray(y, dtype=np.float64)
    integral = y == np.round(y)
    if np.any(integral & (np.abs(y) >= 2.0**53)):
        raise CLIError(f"{path}: labels of magnitude 2^53 (9007199254740992) or more are read as "
                       "floating-point numbers, which cannot tell neighbouring integers apart, "
                       "so distinct classes could merge; number the classes with smaller "
                       "integers")
    if np.all(integral):
        return y.astype(np.int64)
    return np.array([format_label(v) for v in y], dtype=str)


def _format_classes(classes, limit=10):
    shown = " ".join(format_label(c) for c in classes[:limit])
    if len(classes) > limit:
        shown += f" ... ({len(classes) - limit} more)"
    return shown


def _accuracy(pred, y):
    """(n_correct, n) of predictions against the file's numeric labels, or None
    when the predictions are not numbers."""
    try:
        pred = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return int(np.count_nonzero(pred == np.asarray(y, dtype=np.float64))), int(len(y))


def _read_data(path, n_features=None, zero_based=False):
    from fastsvm.datasets import DataFormatError, load_svmlight

    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, not a data file")
    try:
        X, y = load_svmlight(path, n_features=n_features, zero_based=zero_based)
    except DataFormatError as exc:
        msg = str(exc)
        raise CLIError(msg if path in msg else f"{path}: {msg}") from None
    if X.shape[0] == 0:
        raise CLIError(f"{path}: no samples in the data file")
    return X, y


def _check_writable(path, inputs, model=False):
    """Fail early when ``path`` cannot be written (its directory is missing...), would
    overwrite one of the ``inputs`` files, or, for a ``model`` file (which replaces what
    is there), names a device or FIFO."""
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory")
    for other in inputs:
        if os.path.exists(path) and os.path.exists(other) and os.path.samefile(path, other):
            raise CLIError(f"{path}: is the input file {other}; give another output file")
    if model and os.path.exists(path) and not os.path.isfile(path):
        raise CLIError(f"{path}: is not a regular file (a device or FIFO), which saving a "
                       "model would replace")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CLIError(f"{path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise CLIError(f"{path}: directory {directory} is not writable")


def _describe(exc):
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, MemoryError):
        return "out of memory"
    text = str(exc)
    return text if text else type(exc).__name__


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------


def _model_size(clf):
    """One line on the size of a fitted model."""
    if hasattr(clf, "dual_coef_"):
        n_support = np.asarray(clf.n_support_)
        per_model = ""
        if len(n_support) > 1:
            per_model = f" ({' + '.join(str(int(n)) for n in n_support[:10])}"
            per_model += " + ...)" if len(n_support) > 10 else ")"
        return f"Support vectors: {clf.dual_coef_.shape[1]}{per_model}"
    if hasattr(clf, "normalization_"):
        return (f"Landmarks: {len(clf.component_indices_)} (embedding of {clf.n_components_} "
                "dimensions)")
    return f"Linear model: {clf.coef_.shape[1]} weights per binary model"


def _train(args, out):
    from fastsvm.persistence import save_model

    clf = _estimator(args)
    model_file = args.model_file or os.path.basename(args.data_file) + ".model.npz"
    _check_writable(model_file, [args.data_file], model=True)  # before training, not after

    if args.n_features is not None and args.n_features < 1:
        raise CLIError(f"--n-features must be at least 1, got {args.n_features}")
    X, y = _read_data(args.data_file, n_features=args.n_features, zero_based=args.zero_based)
    y = _training_labels(y, args.data_file)
    classes = np.unique(y)
    if len(classes) < 2:
        raise CLIError(
            f"{args.data_file}: the data holds a single class ({format_label(classes[0])}); "
            "training needs at least 2"
        )
    if args.weights is not None:
        clf.set_params(class_weight=_class_weight(args.weights, classes))
    if getattr(clf, "shared_budget", True) is False:
        from fastsvm.multiclass import resolve_multi_class

        split = resolve_multi_class(clf.multi_class, len(classes))
        if len(classes) == 2 or split != "ovr":
            models = ("one model" if len(classes) == 2 else
                      "one-vs-one pairs (each with its own budget; --multi-class ovr splits "
                      "one-vs-rest)")
            warnings.warn("--separate-budgets has no effect: it gives each one-vs-rest model "
                          f"of more than two classes its own budget, and these {len(classes)} "
                          f"classes make {models}")
    if not args.quiet:
        print(
            f"Data: {args.data_file}: {X.shape[0]} samples x {X.shape[1]} features, "
            f"{len(classes)} classes: {_format_classes(classes)}",
            file=out, flush=True,
        )

    t0 = time.perf_counter()
    clf.fit(X, y)
    elapsed = time.perf_counter() - t0
    # predict reads files with the same index base unless told otherwise
    clf.training_info_["zero_based"] = bool(args.zero_based)
    save_model(clf, model_file)

    if not args.quiet:
        pred = clf.predict(X)
        acc = _accuracy(pred, y)
        print(f"Solver: {type(clf).__name__}", file=out)
        print(f"Training time: {elapsed:.3f} s", file=out)
        print(_model_size(clf), file=out)
        if acc is not None:
            correct, n = acc
            print(f"Training accuracy: {100.0 * correct / n:.4f}% ({correct}/{n})", file=out)
        print(f"Model saved to {model_file}", file=out, flush=True)
    return 0


def _warmup(args, out):
    from fastsvm.warmup import warm_up

    seconds = warm_up(None if args.quiet else lambda line: print(line, file=out))
    if not args.quiet:
        print(f"compiled kernels cached in {seconds:.1f} s", file=out)
    return 0


def _predict(args, out):
    from fastsvm.persistence import load_model

    if os.path.isdir(args.model_file):
        raise CLIError(f"{args.model_file}: is a directory, not a model file")
    if args.output_file == "-":
        args.output_file = None
    if args.output_file is not None:
        _check_writable(args.output_file, [args.data_file, args.model_file])
    elif out.raw is None:
        raise CLIError("standard output is closed: give an output file for the predictions")
    model = load_model(args.model_file)
    if any("\n" in label or "\r" in label for label in map(format_label, model.classes_)):
        raise CLIError(f"{args.model_file}: a class label holds a line break, so the "
                       "predictions cannot be written one per line (predict from Python)")
    n_model = int(model.n_features_in_)

    zero_based = args.zero_based
    if zero_based is None:      # as the model's training file ('fastsvm train' records it)
        zero_based = bool(getattr(model, "training_info_", {}).get("zero_based", False))
    X, y = _read_data(args.data_file, zero_based=zero_based)
    if X.shape[1] > n_model:
        extra = X[:, n_model:]
        if np.any(extra.data if hasattr(extra, "nnz") else extra):
            raise CLIError(
                f"{args.data_file}: the data has values in features beyond the {n_model} "
                f"that the model {args.model_file} was trained on ({X.shape[1]} features); "
                f"train with --n-features {X.shape[1]} or more to predict it")
        X = X[:, :n_model]      # explicit zeros there: the same rows
    if X.shape[1] < n_model:
        # LIBSVM files omit trailing zero features: widen the matrix.
        import scipy.sparse as sp

        if sp.issparse(X):
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_model))
        else:
            X = np.hstack([X, np.zeros((X.shape[0], n_model - X.shape[1]), dtype=X.dtype)])
    if getattr(model, "kernel", None) == "precomputed":
        # the file holds the kernel values against the training rows, which a model
        # takes as a dense matrix
        X = X.toarray() if hasattr(X, "toarray") else X

    pred = model.predict(X)
    text = "".join(format_label(p) + "\n" for p in pred)
    if args.output_file is None:
        out.raw.write(text)
        out.raw.flush()
        report = sys.stderr
    else:
        _write_predictions(args.output_file, text)
        report = out

    if not args.quiet and report is not None:     # None: standard error is closed
        acc = _accuracy(pred, y)
        if acc is None:
            print("Accuracy: not computed (the model's labels are not numbers)", file=report)
        else:
            correct, n = acc
            print(f"Accuracy = {100.0 * correct / n:.4f}% ({correct}/{n})", file=report, flush=True)
    return 0


def _write_predictions(path, text):
    """The predictions into ``path``: a regular (or new) file whole or not at all, through a
    temporary file renamed over it, so that a failed write (a full disk, a file size
    limit) leaves what was there; a device or FIFO (/dev/null, a named pipe) directly.
    Errors name ``path``."""
    from fastsvm.persistence import write_atomically

    data = text.encode("utf-8")
    if os.path.exists(path) and not os.path.isfile(path):
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise CLIError(f"{path}: cannot write the predictions: {exc.strerror or exc}") \
                from exc
    else:
        write_atomically(path, lambda fh: fh.write(data), "the predictions")


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _tell(f"{PROG}: warning: {message}")


def main(argv=None):
    """Run the ``fastsvm`` command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (without the program name); default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an error (reported on standard error as
        ``fastsvm: error: <message>``), 2 on a usage error.
    """
    parser = _build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(_expand_libsvm_weights(argv))
    except SystemExit as exc:  # usage error (2), --help / --version (0)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)

    out = _ReportStream(sys.stdout)
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.showwarning = _show_warning
        try:
            return args.func(args, out)
        except KeyboardInterrupt:
            _tell(f"{PROG}: interrupted")
            return 130
        except BrokenPipeError:
            # The reader of the predictions went away (`fastsvm predict ... | head`): stop
            # quietly, with the status of an incomplete output.
            _silence(out.raw)
            return 1
        except (CLIError, OSError, ValueError, MemoryError) as exc:
            # ValueError covers corrupt data files (DataFormatError), corrupt model
            # files (ModelFormatError) and invalid estimator parameters.
            out.flush()
            _tell(f"{PROG}: error: {_describe(exc)}")
            return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
