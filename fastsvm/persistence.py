"""Saving and loading fitted models: the fastsvm model file format.

A fitted :class:`fastsvm.BudgetSVC` is saved with :func:`save_model` and read
back with :func:`load_model`::

    from fastsvm import BudgetSVC
    from fastsvm.persistence import save_model, load_model

    clf = BudgetSVC(budget=200).fit(X, y)
    save_model(clf, "adult.model.npz")
    clf2 = load_model("adult.model.npz")      # predicts exactly like clf

Unlike ``pickle``/``joblib``, loading a model file never executes code: the
file is read with ``numpy.load(path, allow_pickle=False)`` and every entry is
checked before an estimator is built from it, so a model file from an
untrusted source can at worst be rejected with :class:`ModelFormatError`.
The format is also independent of the Python, NumPy and fastsvm internals of
the machine that wrote it.

File format, version 1
----------------------
A model file is a ZIP archive written by :func:`numpy.savez_compressed` (the
usual extension is ``.npz``, but any name is accepted). Each entry is one
``.npy`` array; none has the ``object`` dtype. The entries are:

``meta``
    0-d unicode array (dtype ``<U``) holding one JSON object (UTF-8 text,
    strict JSON: no ``NaN``/``Infinity``) with the keys

    ``"format"``
        always the string ``"fastsvm-model"``.
    ``"version"``
        integer format version, currently ``1``. A reader refuses versions
        newer than the one it supports.
    ``"estimator"``
        name of the estimator class, currently always ``"BudgetSVC"``.
    ``"params"``
        object: the estimator's constructor parameters as returned by
        ``get_params()`` (``C``, ``gamma``, ``budget``, ``epochs``,
        ``maintenance``, ``merge_method``, ``diagnostics``, ``random_state``,
        ``verbose``). The loaded estimator is built as
        ``BudgetSVC(**params)``. A parameter value that has no JSON form
        (e.g. a ``numpy.random.RandomState`` instance as ``random_state``)
        is stored as ``null`` and a warning is issued when saving.
    ``"classes_dtype"``
        the NumPy dtype string of the estimator's ``classes_`` (e.g.
        ``"<i8"``, ``"<f8"``, ``"<U5"``, ``"|b1"``, ``"|O"``); the loaded
        ``classes_`` gets this dtype back (``"|O"`` labels are stored as a
        unicode or numeric array and turned back into an object array).
    ``"training_info"``
        object: the estimator's ``training_info_`` (merge counts, timings,
        steps, ...). Numbers, strings, booleans, lists and nested objects;
        non-finite floats are stored as ``null``.

``classes_``
    shape ``(n_classes,)``, ``n_classes >= 2``: the sorted, distinct class
    labels. Integer (``<i8``...), float (``<f8``), boolean (``|b1``) or
    unicode (``<Uk``) dtype; string labels are always stored as unicode,
    never as objects.

``n_features_in_``
    0-d ``int64``: the number of features ``n_features`` the model expects.

``gamma_``
    0-d ``float64``: the resolved RBF kernel width (``> 0``).

``support_vectors_``
    ``float64``, shape ``(n_sv_total, n_features)``: the support vectors of
    all binary models, stacked in model order.

``dual_coef_``
    ``float64``, shape ``(n_sv_total,)``: the coefficient ``alpha_j`` of each
    support vector.

``n_support_``
    ``int64``, shape ``(n_models,)``: the number of support vectors of each
    binary model, in order; ``sum(n_support_) == n_sv_total``. For two
    classes ``n_models == 1`` (positive class ``classes_[1]``); for more
    classes ``n_models == n_classes`` (one-vs-rest, model ``k`` scores
    ``classes_[k]``).

``intercept_``
    ``float64``, shape ``(n_models,)``: the offset ``b`` of each binary model.

``feature_names_in_`` (optional)
    unicode array, shape ``(n_features,)``: the feature names seen during
    fit (only present when the model was fitted on a pandas DataFrame).

Binary model ``k`` owns the rows ``s_k = sum(n_support_[:k])`` to
``s_k + n_support_[k] - 1`` of ``support_vectors_`` and ``dual_coef_``; its
decision function is
``f_k(x) = sum_j alpha_j * exp(-gamma_ * ||sv_j - x||^2) + intercept_[k]``
over those rows. These arrays are all that prediction uses, so
other tools can evaluate a fastsvm model from the file alone.

Checks made by :func:`load_model`: the file is a readable ZIP/npz archive;
``meta`` and all required arrays are present and none needs pickle; the format
tag, version and estimator name are known; the shapes are consistent
(``support_vectors_`` has ``n_features_in_`` columns and as many rows as
``dual_coef_``, ``sum(n_support_) == len(dual_coef_)``, ``n_models`` matches
``n_classes``); all numbers are finite, ``gamma_ > 0``, ``n_support_ >= 0``
and the classes are distinct. Any failure raises :class:`ModelFormatError`
(a ``ValueError``) naming the file.

Only the fitted state listed above is saved: diagnostic attributes recorded
with ``diagnostics=True`` other than ``training_info_`` are not kept.
"""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ModelFormatError",
    "load_model",
    "save_model",
]

#: Value of the ``"format"`` key of a model file's ``meta`` entry.
FORMAT_NAME = "fastsvm-model"
#: Newest model file format version this module writes and reads.
FORMAT_VERSION = 1

# Fitted attributes every saved model holds, in file order.
_REQUIRED_ARRAYS = (
    "classes_",
    "n_features_in_",
    "gamma_",
    "support_vectors_",
    "dual_coef_",
    "n_support_",
    "intercept_",
)
_OPTIONAL_ARRAYS = ("feature_names_in_",)
_META_KEYS = ("format", "version", "estimator", "params", "classes_dtype", "training_info")
# dtype kinds accepted for class labels: bool, signed/unsigned int, float, unicode.
_CLASS_KINDS = "biufU"


class ModelFormatError(ValueError):
    """A model file is not a valid fastsvm model file (corrupt, truncated,
    inconsistent, or written by a newer fastsvm)."""


def _budget_svc():
    from fastsvm.bsgd.estimator import BudgetSVC

    return BudgetSVC


# Estimator name (as stored in ``meta["estimator"]``) -> class factory.
_ESTIMATORS = {"BudgetSVC": _budget_svc}


def _estimator_class(name):
    return _ESTIMATORS[name]()


def _estimator_name(estimator):
    """The registered name of ``estimator``'s class (subclasses included)."""
    for name, factory in _ESTIMATORS.items():
        try:
            cls = factory()
        except ImportError:  # pragma: no cover - the estimator module is missing
            continue
        if isinstance(estimator, cls):
            return name
    raise TypeError(
        f"cannot save a {type(estimator).__name__}: save_model supports "
        f"{', '.join(sorted(_ESTIMATORS))} estimators"
    )


# --------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------

_UNSET = object()
_UNSET_PARAM = object()


def _to_json(value, on_unknown=_UNSET):
    """Convert ``value`` to plain JSON types (numpy scalars/arrays included).

    Non-finite floats become ``None``. Values with no JSON form return
    ``on_unknown`` if given, else raise ``TypeError``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.str_):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _to_json(v, on_unknown) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return [_to_json(v, on_unknown) for v in items]
    if on_unknown is not _UNSET:
        return on_unknown
    raise TypeError(f"{type(value).__name__} value {value!r} has no JSON form")


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


# --------------------------------------------------------------------------
# Validation shared by save and load
# --------------------------------------------------------------------------


def _check_arrays(arrays, fail):
    """Check fitted arrays for consistency; return them normalised.

    ``arrays`` maps the names of ``_REQUIRED_ARRAYS`` (and optionally
    ``_OPTIONAL_ARRAYS``) to arrays. ``fail(msg)`` must raise.
    """
    out = {}

    classes = np.asarray(arrays["classes_"])
    if classes.ndim != 1:
        fail(f"classes_ must be 1-d, got shape {classes.shape}")
    if classes.dtype.kind not in _CLASS_KINDS:
        fail(f"classes_ has unsupported dtype {classes.dtype.str}")
    n_classes = classes.shape[0]
    if n_classes < 2:
        fail(f"classes_ must hold at least 2 classes, got {n_classes}")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        fail("classes_ contains non-finite values")
    if np.unique(classes).shape[0] != n_classes:
        fail("classes_ contains duplicate labels")
    out["classes_"] = classes

    n_features = np.asarray(arrays["n_features_in_"])
    if n_features.shape != () or n_features.dtype.kind not in "iu":
        fail(f"n_features_in_ must be an integer scalar, got {n_features.dtype.str} array of shape {n_features.shape}")
    n_features = int(n_features)
    if n_features < 1:
        fail(f"n_features_in_ must be >= 1, got {n_features}")
    out["n_features_in_"] = n_features

    gamma = np.asarray(arrays["gamma_"])
    if gamma.shape != () or gamma.dtype.kind not in "iuf":
        fail(f"gamma_ must be a real scalar, got {gamma.dtype.str} array of shape {gamma.shape}")
    gamma = float(gamma)
    if not math.isfinite(gamma):
        fail(f"gamma_ is not finite ({gamma})")
    if gamma <= 0:
        fail(f"gamma_ must be > 0, got {gamma}")
    out["gamma_"] = gamma

    sv = np.asarray(arrays["support_vectors_"])
    if sv.ndim != 2 or sv.dtype.kind not in "iuf":
        fail(f"support_vectors_ must be a 2-d real array, got {sv.dtype.str} array of shape {sv.shape}")
    if sv.shape[1] != n_features:
        fail(f"support_vectors_ has {sv.shape[1]} columns but n_features_in_ is {n_features}")
    sv = np.ascontiguousarray(sv, dtype=np.float64)
    if not np.all(np.isfinite(sv)):
        fail("support_vectors_ contains non-finite values")
    out["support_vectors_"] = sv

    coef = np.asarray(arrays["dual_coef_"])
    if coef.ndim != 1 or coef.dtype.kind not in "iuf":
        fail(f"dual_coef_ must be a 1-d real array, got {coef.dtype.str} array of shape {coef.shape}")
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if not np.all(np.isfinite(coef)):
        fail("dual_coef_ contains non-finite values")
    if coef.shape[0] != sv.shape[0]:
        fail(f"dual_coef_ has {coef.shape[0]} entries but support_vectors_ has {sv.shape[0]} rows")
    out["dual_coef_"] = coef

    n_support = np.asarray(arrays["n_support_"])
    if n_support.ndim != 1 or n_support.dtype.kind not in "iu":
        fail(f"n_support_ must be a 1-d integer array, got {n_support.dtype.str} array of shape {n_support.shape}")
    n_support = n_support.astype(np.int64)
    if np.any(n_support < 0):
        fail("n_support_ contains negative counts")
    n_models = 1 if n_classes == 2 else n_classes
    if n_support.shape[0] != n_models:
        fail(
            f"n_support_ has {n_support.shape[0]} binary models but {n_classes} classes "
            f"need {n_models}"
        )
    if int(n_support.sum()) != coef.shape[0]:
        fail(f"sum(n_support_) = {int(n_support.sum())} but dual_coef_ has {coef.shape[0]} entries")
    out["n_support_"] = n_support

    intercept = np.asarray(arrays["intercept_"])
    if intercept.shape != (n_models,) or intercept.dtype.kind not in "iuf":
        fail(f"intercept_ must be a real array of shape ({n_models},), got {intercept.dtype.str} "
             f"array of shape {intercept.shape}")
    intercept = intercept.astype(np.float64)
    if not np.all(np.isfinite(intercept)):
        fail("intercept_ contains non-finite values")
    out["intercept_"] = intercept

    names = arrays.get("feature_names_in_")
    if names is not None:
        names = np.asarray(names)
        if names.dtype.kind != "U" or names.shape != (n_features,):
            fail(f"feature_names_in_ must be {n_features} strings, got {names.dtype.str} array of shape {names.shape}")
        out["feature_names_in_"] = names
    return out


def _storable_classes(classes):
    """``classes_`` as a non-object array for the file, and its original dtype string."""
    classes = np.asarray(classes)
    dtype_str = classes.dtype.str
    if classes.dtype.kind == "O":
        values = classes.tolist()
        if all(isinstance(v, str) for v in values):
            classes = np.array(values, dtype=str)
        elif all(isinstance(v, (bool, np.bool_)) for v in values):
            classes = np.array(values, dtype=bool)
        elif all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
            classes = np.array(values, dtype=np.int64)
        elif all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
            classes = np.array(values, dtype=np.float64)
        else:
            raise ValueError(
                "cannot save class labels of types "
                f"{sorted({type(v).__name__ for v in values})}: labels must be all strings or all numbers"
            )
    elif classes.dtype.kind == "S":
        try:
            classes = np.char.decode(classes, "utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"cannot save byte-string class labels that are not UTF-8: {exc}") from None
    if classes.dtype.kind not in _CLASS_KINDS:
        raise ValueError(f"cannot save class labels of dtype {classes.dtype}")
    return classes, dtype_str


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def save_model(estimator, path):
    """Save a fitted estimator to a fastsvm model file (see the module docs).

    Parameters
    ----------
    estimator : BudgetSVC
        A fitted estimator.
    path : str or os.PathLike
        Destination file, written as is (no extension is added; ``.npz`` or
        ``.model.npz`` is customary). An existing file is replaced atomically.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    TypeError
        If the estimator is not of a supported class.
    ValueError
        If the fitted state cannot be stored (e.g. non-finite coefficients,
        class labels that are neither numbers nor strings).
    """
    name = _estimator_name(estimator)
    missing = [a for a in _REQUIRED_ARRAYS if not hasattr(estimator, a)]
    if missing:
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet (it has no "
            f"{', '.join(missing)}). Call 'fit' with appropriate arguments before saving it."
        )

    classes, classes_dtype = _storable_classes(estimator.classes_)
    raw = {a: getattr(estimator, a) for a in _REQUIRED_ARRAYS}
    raw["classes_"] = classes
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        raw["feature_names_in_"] = np.asarray(np.asarray(names).tolist(), dtype=str)

    def fail(msg):
        raise ValueError(f"cannot save {type(estimator).__name__}: {msg}")

    arrays = _check_arrays(raw, fail)

    params = {}
    for key, value in estimator.get_params(deep=False).items():
        converted = _to_json(value, on_unknown=_UNSET_PARAM)
        if converted is _UNSET_PARAM or _contains(converted, _UNSET_PARAM):
            warnings.warn(
                f"parameter {key}={value!r} has no JSON form and is saved as None",
                UserWarning,
                stacklevel=2,
            )
            converted = None
        params[key] = converted

    training_info = getattr(estimator, "training_info_", None) or {}
    meta = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "estimator": name,
        "params": params,
        "classes_dtype": classes_dtype,
        "training_info": _to_json(dict(training_info), on_unknown=None),
    }
    entries = {
        "meta": np.array(json.dumps(meta, allow_nan=False)),
        "classes_": arrays["classes_"],
        "n_features_in_": np.array(arrays["n_features_in_"], dtype=np.int64),
        "gamma_": np.array(arrays["gamma_"], dtype=np.float64),
        "support_vectors_": arrays["support_vectors_"],
        "dual_coef_": arrays["dual_coef_"],
        "n_support_": arrays["n_support_"],
        "intercept_": arrays["intercept_"],
    }
    if "feature_names_in_" in arrays:
        entries["feature_names_in_"] = arrays["feature_names_in_"]

    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"cannot save the model: no directory {directory}", path)
    fd, tmp = tempfile.mkstemp(prefix=".fastsvm-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **entries)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # mkstemp creates the file 0600; give it the usual permissions
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)
    except OSError:  # pragma: no cover
        pass


def _contains(value, marker):
    if value is marker:
        return True
    if isinstance(value, dict):
        return any(_contains(v, marker) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, marker) for v in value)
    return False


def load_model(path):
    """Load an estimator saved by :func:`save_model`.

    The file is read with ``numpy.load(..., allow_pickle=False)``: no code
    from the file is ever executed.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    estimator : BudgetSVC
        A fitted estimator whose ``predict`` and ``decision_function`` give
        exactly the results of the saved one.

    Raises
    ------
    ModelFormatError
        If the file is not a valid fastsvm model file (corrupt or truncated,
        missing entries, unknown format/version/estimator, inconsistent
        shapes, non-finite values). The message names the file.
    OSError
        If the file cannot be read (e.g. ``FileNotFoundError``).
    """
    path = os.fspath(path)

    def fail(msg):
        raise ModelFormatError(f"{path}: {msg}")

    with open(path, "rb") as fh:  # OSError (missing file...) propagates as is
        head = fh.read(4)
    if head[:2] != b"PK":
        fail("not a fastsvm model file (not an npz/zip archive)")

    entries = {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            present = set(npz.files)
            if "meta" not in present:
                fail("not a fastsvm model file (no 'meta' entry)")
            meta_arr = npz["meta"]
            for key in _REQUIRED_ARRAYS + _OPTIONAL_ARRAYS:
                if key in present:
                    entries[key] = npz[key]
    except ModelFormatError:
        raise
    except Exception as exc:
        # zipfile.BadZipFile, zlib.error, EOFError, struct.error, OSError, ...;
        # ValueError: a bad .npy header, or an entry that would need pickle.
        fail(f"corrupt or truncated model file ({type(exc).__name__}: {exc})")

    # --- meta ---
    if meta_arr.shape != () or meta_arr.dtype.kind != "U":
        fail(f"'meta' must be a 0-d unicode array, got {meta_arr.dtype.str} array of shape {meta_arr.shape}")
    try:
        meta = json.loads(str(meta_arr), parse_constant=_reject_constant)
    except ValueError as exc:
        fail(f"'meta' is not valid JSON ({exc})")
    if not isinstance(meta, dict):
        fail("'meta' must be a JSON object")
    if meta.get("format") != FORMAT_NAME:
        fail(f"not a fastsvm model file (format tag {meta.get('format')!r}, expected {FORMAT_NAME!r})")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        fail(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        fail(
            f"model file format version {version} is newer than the newest supported "
            f"version ({FORMAT_VERSION}); upgrade fastsvm to load it"
        )
    missing_keys = [k for k in _META_KEYS if k not in meta]
    if missing_keys:
        fail(f"'meta' lacks the key(s) {', '.join(missing_keys)}")
    est_name = meta["estimator"]
    if est_name not in _ESTIMATORS:
        fail(f"unknown estimator {est_name!r} (supported: {', '.join(sorted(_ESTIMATORS))})")
    params = meta["params"]
    if not isinstance(params, dict):
        fail("'params' in 'meta' must be a JSON object")
    training_info = meta["training_info"]
    if not isinstance(training_info, dict):
        fail("'training_info' in 'meta' must be a JSON object")
    try:
        classes_dtype = np.dtype(meta["classes_dtype"])
    except (TypeError, ValueError):
        fail(f"invalid classes_dtype {meta['classes_dtype']!r}")
    if classes_dtype.kind not in _CLASS_KINDS + "OS":
        fail(f"unsupported classes_dtype {meta['classes_dtype']!r}")

    # --- arrays ---
    missing = [k for k in _REQUIRED_ARRAYS if k not in entries]
    if missing:
        fail(f"missing array(s) {', '.join(missing)}")
    arrays = _check_arrays(entries, fail)

    classes = arrays["classes_"]
    if classes_dtype.kind == "O":
        restored = np.empty(classes.shape[0], dtype=object)
        restored[:] = classes.tolist()
        classes = restored
    elif classes_dtype.kind == "S":
        if classes.dtype.kind != "U":
            fail(f"classes_ of dtype {classes.dtype.str} does not match classes_dtype {classes_dtype.str}")
        classes = np.char.encode(classes, "utf-8")
    elif classes_dtype != classes.dtype:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                converted = classes.astype(classes_dtype)
        except (TypeError, ValueError, OverflowError, RuntimeWarning) as exc:
            fail(f"classes_ cannot be converted to classes_dtype {classes_dtype.str} ({exc})")
        if np.unique(converted).shape[0] != classes.shape[0] or not np.array_equal(
            converted.astype(classes.dtype), classes
        ):
            fail(f"classes_ is not representable in classes_dtype {classes_dtype.str}")
        classes = converted

    # --- estimator ---
    try:
        cls = _estimator_class(est_name)
    except ImportError as exc:  # pragma: no cover - broken installation
        raise ImportError(f"{path}: cannot import estimator {est_name}: {exc}") from exc
    try:
        estimator = cls(**params)
    except TypeError as exc:
        fail(f"parameters not accepted by {est_name} ({exc})")
    estimator.classes_ = classes
    estimator.n_features_in_ = arrays["n_features_in_"]
    estimator.gamma_ = arrays["gamma_"]
    estimator.support_vectors_ = arrays["support_vectors_"]
    estimator.dual_coef_ = arrays["dual_coef_"]
    estimator.n_support_ = arrays["n_support_"]
    estimator.intercept_ = arrays["intercept_"]
    estimator.training_info_ = training_info
    if "feature_names_in_" in arrays:
        estimator.feature_names_in_ = np.asarray(arrays["feature_names_in_"].tolist(), dtype=object)
    return estimator
