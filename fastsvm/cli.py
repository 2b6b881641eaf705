"""Command-line interface: ``fastsvm train`` and ``fastsvm predict``.

In the spirit of LIBSVM's ``svm-train`` / ``svm-predict``, on LIBSVM
(svmlight) text files::

    fastsvm train -B 500 -e 2 a9a a9a.model.npz     # train a BudgetSVC, save it
    fastsvm predict a9a.t a9a.model.npz a9a.t.out    # one predicted label per line

Run ``fastsvm train -h`` / ``fastsvm predict -h`` for the options. The same
program runs as ``python -m fastsvm``. Models are written in the fastsvm model
file format (see :mod:`fastsvm.persistence`), loadable from Python with
:func:`fastsvm.persistence.load_model`.

Labels are read as numbers from the data file; when all training labels are
integers the model's classes are integers, and labels are printed as
integers whenever they are integral (``1``, not ``1.0``).

Exit status: 0 on success, 1 on an error (missing or unreadable file, corrupt
data or model file, invalid option value, feature count mismatch), reported
as ``fastsvm: error: <message>`` on standard error; 2 on a command-line usage
error (from argparse).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

from fastsvm import __version__
from fastsvm.bsgd.estimator import MAINTENANCE, BudgetSVC
from fastsvm.merge import METHODS

PROG = "fastsvm"


class CLIError(Exception):
    """An error reported to the user as ``fastsvm: error: <message>``."""


# --------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------


def _gamma(text):
    if text == "scale":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'scale', got {text!r}") from None


def _build_parser():
    # Option defaults are the estimator's, so the two never disagree.
    defaults = BudgetSVC().get_params()
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Fast large-scale kernel SVM training (budgeted SGD) on LIBSVM data files.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    train = sub.add_parser(
        "train",
        help="train a BudgetSVC on a LIBSVM data file and save the model",
        description=(
            "Train a BudgetSVC (RBF-kernel SVM by budgeted stochastic gradient descent) "
            "on a LIBSVM data file and save it as a fastsvm model file."
        ),
    )
    train.add_argument("data_file", help="training data in LIBSVM format")
    train.add_argument(
        "model_file",
        nargs="?",
        help="output model file (default: <data_file basename>.model.npz in the current directory)",
    )
    train.add_argument(
        "-c", "--C", type=float, default=defaults["C"],
        help="regularisation parameter C > 0, lambda = 1 / (n_samples * C) (default: %(default)s)",
    )
    train.add_argument(
        "-g", "--gamma", type=_gamma, default=defaults["gamma"],
        help="RBF kernel width gamma > 0, or 'scale' for 1 / (n_features * X.var()) (default: %(default)s)",
    )
    train.add_argument(
        "-B", "--budget", type=int, default=defaults["budget"],
        help="maximum number of support vectors per binary model, >= 2 (default: %(default)s)",
    )
    train.add_argument(
        "-e", "--epochs", type=int, default=defaults["epochs"],
        help="passes over the training data, >= 1 (default: %(default)s)",
    )
    train.add_argument(
        "-m", "--merge-method", choices=sorted(METHODS), default=defaults["merge_method"],
        help="how the merge problem is solved: lookup table of WD or h, or golden section "
        "search (default: %(default)s)",
    )
    train.add_argument(
        "--maintenance", choices=sorted(MAINTENANCE), default=defaults["maintenance"],
        help="budget maintenance: merge two support vectors, or remove the smallest "
        "(default: %(default)s)",
    )
    train.add_argument("-s", "--seed", type=int, default=None, help="random seed (default: none)")
    train.add_argument("-q", "--quiet", action="store_true", help="quiet mode: no progress and no report")
    train.set_defaults(func=_train)

    predict = sub.add_parser(
        "predict",
        help="predict the labels of a LIBSVM data file with a saved model",
        description=(
            "Predict the labels of a LIBSVM data file with a model saved by 'fastsvm train', "
            "writing one label per line, and report the accuracy against the file's labels."
        ),
    )
    predict.add_argument("data_file", help="data in LIBSVM format")
    predict.add_argument("model_file", help="model file written by 'fastsvm train' (or save_model)")
    predict.add_argument(
        "output_file", nargs="?",
        help="where to write the predicted labels (default: standard output; the accuracy then "
        "goes to standard error)",
    )
    predict.add_argument("-q", "--quiet", action="store_true", help="quiet mode: do not report the accuracy")
    predict.set_defaults(func=_predict)
    return parser


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


def _training_labels(y):
    """The labels of a LIBSVM file as class labels for the estimator.

    Integral labels (the usual case) become int64. Other numbers (e.g. 0.5)
    are not accepted as classes by scikit-learn estimators ("continuous"
    targets), so they become their text form (``"0.5"``), which is also how
    they are printed.
    """
    y = np.asarray(y, dtype=np.float64)
    if np.all(y == np.round(y)) and np.all(np.abs(y) < 2.0**53):
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


def _read_data(path, n_features=None):
    from fastsvm.datasets import DataFormatError, load_svmlight

    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, not a data file")
    try:
        X, y = load_svmlight(path, n_features=n_features)
    except DataFormatError as exc:
        msg = str(exc)
        raise CLIError(msg if path in msg else f"{path}: {msg}") from None
    if X.shape[0] == 0:
        raise CLIError(f"{path}: no samples in the data file")
    return X, y


def _check_writable(path):
    """Fail early when ``path`` cannot be written (its directory is missing...)."""
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory")
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


def _train(args, out):
    from fastsvm.persistence import save_model

    clf = BudgetSVC(
        C=args.C,
        gamma=args.gamma,
        budget=args.budget,
        epochs=args.epochs,
        maintenance=args.maintenance,
        merge_method=args.merge_method,
        random_state=args.seed,
        verbose=0 if args.quiet else 1,
    )
    # Reject bad option values (C <= 0, budget < 2, ...) before reading the data;
    # fit validates them again (InvalidParameterError, a ValueError).
    if hasattr(clf, "_validate_params"):
        clf._validate_params()
    model_file = args.model_file or os.path.basename(args.data_file) + ".model.npz"
    _check_writable(model_file)  # before training, not after

    X, y = _read_data(args.data_file)
    y = _training_labels(y)
    classes = np.unique(y)
    if len(classes) < 2:
        raise CLIError(
            f"{args.data_file}: the data holds a single class ({format_label(classes[0])}); "
            "training needs at least 2"
        )
    if not args.quiet:
        print(
            f"Data: {args.data_file}: {X.shape[0]} samples x {X.shape[1]} features, "
            f"{len(classes)} classes: {_format_classes(classes)}",
            file=out, flush=True,
        )

    t0 = time.perf_counter()
    clf.fit(X, y)
    elapsed = time.perf_counter() - t0
    save_model(clf, model_file)

    if not args.quiet:
        n_support = np.asarray(clf.n_support_)
        per_model = ""
        if len(n_support) > 1:
            per_model = f" ({' + '.join(str(int(n)) for n in n_support[:10])}"
            per_model += " + ...)" if len(n_support) > 10 else ")"
        pred = clf.predict(X)
        acc = _accuracy(pred, y)
        print(f"Training time: {elapsed:.3f} s", file=out)
        print(f"Support vectors: {int(n_support.sum())}{per_model}", file=out)
        if acc is not None:
            correct, n = acc
            print(f"Training accuracy: {100.0 * correct / n:.4f}% ({correct}/{n})", file=out)
        print(f"Model saved to {model_file}", file=out, flush=True)
    return 0


def _predict(args, out):
    from fastsvm.persistence import load_model

    if os.path.isdir(args.model_file):
        raise CLIError(f"{args.model_file}: is a directory, not a model file")
    if args.output_file is not None:
        _check_writable(args.output_file)
    model = load_model(args.model_file)
    n_model = int(model.n_features_in_)

    X, y = _read_data(args.data_file)
    if X.shape[1] > n_model:
        raise CLIError(
            f"{args.data_file}: the data has {X.shape[1]} features but the model "
            f"{args.model_file} was trained on {n_model}"
        )
    if X.shape[1] < n_model:
        # LIBSVM files omit trailing zero features: widen the matrix.
        import scipy.sparse as sp

        if sp.issparse(X):
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_model))
        else:
            X = np.hstack([X, np.zeros((X.shape[0], n_model - X.shape[1]), dtype=X.dtype)])

    pred = model.predict(X)
    text = "".join(format_label(p) + "\n" for p in pred)
    if args.output_file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        report = sys.stderr
    else:
        with open(args.output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
        report = out

    if not args.quiet:
        acc = _accuracy(pred, y)
        if acc is None:
            print("Accuracy: not computed (the model's labels are not numbers)", file=report)
        else:
            correct, n = acc
            print(f"Accuracy = {100.0 * correct / n:.4f}% ({correct}/{n})", file=report, flush=True)
    return 0


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr)


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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage error (2), --help / --version (0)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)

    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.func(args, sys.stdout)
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            # The reader of standard output went away (e.g. `fastsvm predict ... | head`):
            # stop quietly, and keep Python from complaining when it flushes stdout at exit.
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError, AttributeError):
                pass
            return 1
        except (CLIError, OSError, ValueError, MemoryError) as exc:
            # ValueError covers corrupt data files (DataFormatError), corrupt model
            # files (ModelFormatError) and invalid estimator parameters.
            sys.stdout.flush()
            print(f"{PROG}: error: {_describe(exc)}", file=sys.stderr)
            return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
