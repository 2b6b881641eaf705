"""Saving and loading fitted models: the fastsvm model file format.

Any fitted fastsvm estimator (:class:`~fastsvm.BudgetSVC`,
:class:`~fastsvm.NystromSVC`, :class:`~fastsvm.HuberSVC`,
:class:`~fastsvm.PegasosSVC`, :class:`~fastsvm.MarginSGDSVC`) is saved with
:func:`save_model` and read back with :func:`load_model`::

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
the machine that wrote it.  A model with a callable kernel cannot be saved
(a file holds no code): save one trained with ``kernel='precomputed'``.

File format, version 2
----------------------
A model file is a ZIP archive written by :func:`numpy.savez_compressed` (the
usual extension is ``.npz``, but any name is accepted). Each entry is one
``.npy`` array; none has the ``object`` dtype. Every file holds:

``meta``
    0-d unicode array (dtype ``<U``) holding one JSON object (UTF-8 text,
    strict JSON: no ``NaN``/``Infinity``) with the keys

    ``"format"``
        always the string ``"fastsvm-model"``.
    ``"version"``
        integer format version, currently ``2``. A reader refuses versions
        newer than the one it supports; version 1 files (``BudgetSVC`` only,
        ``dual_coef_`` of shape ``(n_sv_total,)``) are still read.
    ``"estimator"``
        name of the estimator class: ``"BudgetSVC"``, ``"NystromSVC"``,
        ``"HuberSVC"``, ``"PegasosSVC"`` or ``"MarginSGDSVC"``.
    ``"params"``
        object: the estimator's constructor parameters as returned by
        ``get_params()``; the loaded estimator is built as
        ``Estimator(**params)`` and its parameters are validated.  A dict
        ``class_weight`` is stored as a list of ``[label, weight]`` pairs
        (JSON object keys would turn integer labels into strings).  A value
        that has no JSON form (e.g. a ``numpy.random.RandomState`` instance
        as ``random_state``) is stored as ``null`` with a warning.
    ``"classes_dtype"``
        the NumPy dtype string of the estimator's ``classes_`` (e.g.
        ``"<i8"``, ``"<f8"``, ``"<U5"``, ``"|b1"``, ``"|O"``); the loaded
        ``classes_`` gets this dtype back (``"|O"`` labels are stored as a
        unicode or numeric array and turned back into an object array).
    ``"training_info"``
        object: the estimator's ``training_info_``. Numbers, strings,
        booleans, lists and nested objects; non-finite floats are ``null``.

``classes_``
    shape ``(n_classes,)``, ``n_classes >= 2``: the sorted, distinct class
    labels. Integer, float, boolean or unicode dtype (never objects).
``n_features_in_``
    0-d ``int64``: the number of features the model expects (for
    ``kernel='precomputed'``: the number of training rows, the columns of
    the kernel matrix passed to ``predict``).
``intercept_``
    ``float64``, shape ``(n_models,)``: the offset b of each binary model;
    ``n_models`` is 1 for two classes (positive class ``classes_[1]``), else
    ``n_classes`` (one-vs-rest, model ``k`` scores ``classes_[k]``).
``feature_names_in_`` (optional)
    unicode array of shape ``(n_features,)``, for a model fitted on a pandas
    DataFrame.
``gamma_``
    0-d ``float64`` > 0: the resolved kernel width, for the kernels that
    have one ('rbf', 'poly', 'sigmoid', 'laplacian'); absent otherwise.

and, per kind of model (``float64`` and ``int64`` arrays, all finite):

*Kernel expansions* (``BudgetSVC``, ``MarginSGDSVC``, ``PegasosSVC`` with a
kernel other than 'linear'): f_k(x) = sum_j dual_coef_[k, j] k(sv_j, x) + intercept_[k].

``support_vectors_``
    shape ``(n_sv, n_features)``; ``(0, 0)`` for ``kernel='precomputed'``.
``support_``
    shape ``(n_sv,)``: the training row of each support vector (for
    'precomputed' the column of the kernel matrix it reads, in
    ``[0, n_features)``); ``BudgetSVC`` writes -1 for merged vectors.
``dual_coef_``
    shape ``(n_models, n_sv)``.
``n_support_``
    shape ``(n_models,)``: support vectors per binary model (``BudgetSVC``:
    they partition the n_sv vectors in model order).
``n_iter_`` (``PegasosSVC``), ``M_`` (``MarginSGDSVC``, 0-d, >= 0).

*Linear models* (``HuberSVC``, ``PegasosSVC(kernel='linear')``):
f_k(x) = <coef_[k], x> + intercept_[k].

``coef_``
    shape ``(n_models, n_features)``.
``n_iter_``
    shape ``(n_models,)``.

*Nystrom models* (``NystromSVC``): f_k(x) = K(x, landmarks) normalization_ coef_[k] + intercept_[k].

``components_``
    the landmarks, shape ``(m, n_features)`` (``(0, 0)`` for
    'precomputed'); sparse landmarks are stored instead as the CSR arrays
    ``components_data_`` (float64), ``components_indices_`` (int64, in
    ``[0, n_features)``) and ``components_indptr_`` (int64, ``m + 1``
    entries).
``component_indices_``
    shape ``(m,)``: their training rows (the columns read for 'precomputed').
``normalization_``
    shape ``(m, r)``.
``coef_``
    shape ``(n_models, r)``.
``n_iter_``
    shape ``(n_models,)``.

These arrays are all that prediction uses, so other tools can evaluate a
fastsvm model from the file alone.

Checks made by :func:`load_model`: the file is a readable ZIP/npz archive;
``meta`` and all required arrays are present, no other entry is, and none
needs pickle; the format tag, version and estimator name are known and the
parameters are valid; the shapes are consistent as listed above; all numbers
are finite, ``gamma_ > 0``, counts are non-negative, indices are in range and
the classes are distinct. Any failure raises :class:`ModelFormatError` (a
``ValueError``) naming the file.
"""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from .kernels import uses_gamma

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
FORMAT_VERSION = 2

_META_KEYS = ("format", "version", "estimator", "params", "classes_dtype", "training_info")
# dtype kinds accepted for class labels: bool, signed/unsigned int, float, unicode.
_CLASS_KINDS = "biufU"
_SPARSE_COMPONENTS = ("components_data_", "components_indices_", "components_indptr_")


class ModelFormatError(ValueError):
    """A model file is not a valid fastsvm model file (corrupt, truncated,
    inconsistent, or written by a newer fastsvm)."""


def _estimator_classes():
    """Estimator name (as stored in ``meta["estimator"]``) -> class."""
    from . import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

    return {cls.__name__: cls for cls in (BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC,
                                          PegasosSVC)}


def _estimator_name(estimator):
    """The registered name of ``estimator``'s class (subclasses included)."""
    for name, cls in _estimator_classes().items():
        if isinstance(estimator, cls):
            return name
    raise TypeError(
        f"cannot save a {type(estimator).__name__}: save_model supports "
        f"{', '.join(sorted(_estimator_classes()))} estimators"
    )


# --------------------------------------------------------------------------
# The arrays of each kind of model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Array:
    """One fitted array: name, dtype kind ('f' float64, 'i' int64) and shape, whose entries
    are sizes or dimension names bound consistently across a file."""

    name: str
    kind: str
    shape: tuple


def _layout(name, params):
    """The fitted arrays of estimator ``name`` with parameters ``params`` (see the module
    docstring), besides classes_, n_features_in_ and feature_names_in_."""
    kernel = params.get("kernel", "linear")
    precomputed = kernel == "precomputed"
    arrays = [_Array("intercept_", "f", ("n_models",))]
    if uses_gamma(kernel):
        arrays.append(_Array("gamma_", "f", ()))
    if name == "HuberSVC" or (name == "PegasosSVC" and kernel == "linear"):
        return arrays + [_Array("coef_", "f", ("n_models", "n_features")),
                         _Array("n_iter_", "i", ("n_models",))]
    if name == "NystromSVC":
        return arrays + [
            _Array("components_", "f", (0, 0) if precomputed else ("m", "n_features")),
            _Array("component_indices_", "i", ("m",)),
            _Array("normalization_", "f", ("m", "r")),
            _Array("coef_", "f", ("n_models", "r")),
            _Array("n_iter_", "i", ("n_models",))]
    arrays += [_Array("support_vectors_", "f", (0, 0) if precomputed else ("n_sv", "n_features")),
               _Array("support_", "i", ("n_sv",)),
               _Array("dual_coef_", "f", ("n_models", "n_sv")),
               _Array("n_support_", "i", ("n_models",))]
    if name == "PegasosSVC":
        arrays.append(_Array("n_iter_", "i", ("n_models",)))
    if name == "MarginSGDSVC":
        arrays.append(_Array("M_", "f", ()))
    return arrays


def _fitted_arrays(estimator, layout):
    """The estimator's fitted arrays for the file (sparse landmarks as CSR arrays)."""
    arrays = {}
    for spec in layout:
        value = getattr(estimator, spec.name)
        if spec.name == "components_" and sp.issparse(value):
            value = value.tocsr()
            arrays.update(components_data_=value.data, components_indices_=value.indices,
                          components_indptr_=value.indptr)
            continue
        arrays[spec.name] = value
    return arrays


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


def _check_classes(classes, fail):
    classes = np.asarray(classes)
    if classes.ndim != 1:
        fail(f"classes_ must be 1-d, got shape {classes.shape}")
    if classes.dtype.kind not in _CLASS_KINDS:
        fail(f"classes_ has unsupported dtype {classes.dtype.str}")
    if classes.shape[0] < 2:
        fail(f"classes_ must hold at least 2 classes, got {classes.shape[0]}")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        fail("classes_ contains non-finite values")
    if np.unique(classes).shape[0] != classes.shape[0]:
        fail("classes_ contains duplicate labels")
    return classes


def _check_count(value, name, fail):
    value = np.asarray(value)
    if value.shape != () or value.dtype.kind not in "iu":
        fail(f"{name} must be an integer scalar, got {value.dtype.str} array of shape "
             f"{value.shape}")
    if int(value) < 1:
        fail(f"{name} must be >= 1, got {int(value)}")
    return int(value)


def _check_array(spec, value, dims, fail):
    """One array against its spec: dtype kind, dimensions (binding new names), finiteness."""
    value = np.asarray(value)
    kinds = "iuf" if spec.kind == "f" else "iu"
    if value.dtype.kind not in kinds or value.ndim != len(spec.shape):
        fail(f"{spec.name} must be a {len(spec.shape)}-d {'real' if spec.kind == 'f' else 'integer'} "
             f"array, got {value.dtype.str} array of shape {value.shape}")
    for axis, (size, want) in enumerate(zip(value.shape, spec.shape)):
        if isinstance(want, str):
            bound = dims.setdefault(want, size)
        else:
            bound = want
        if size != bound:
            note = (" (one binary model for 2 classes, else one per class)" if want == "n_models"
                    else "")
            fail(f"{spec.name} has {size} entries along axis {axis} but {want} is "
                 f"{bound}{note}")
    value = np.array(value, dtype=np.float64 if spec.kind == "f" else np.int64, order="C")
    if spec.kind == "f" and not np.all(np.isfinite(value)):
        fail(f"{spec.name} contains non-finite values")
    return value


def _check_model(name, params, arrays, fail):
    """Check the fitted arrays of one model for consistency; return them normalised."""
    classes = _check_classes(arrays["classes_"], fail)
    n_features = _check_count(arrays["n_features_in_"], "n_features_in_", fail)
    n_models = 1 if len(classes) == 2 else len(classes)
    dims = {"n_models": n_models, "n_features": n_features}
    out = {"classes_": classes, "n_features_in_": n_features}
    kernel = params.get("kernel", "linear")
    for spec in _layout(name, params):
        if spec.name == "components_" and spec.name not in arrays and _SPARSE_COMPONENTS[0] in arrays:
            out["components_"] = _sparse_components(arrays, dims, n_features, fail)
            continue
        if spec.name not in arrays:
            fail(f"missing array {spec.name}")
        out[spec.name] = _check_array(spec, arrays[spec.name], dims, fail)
    if "gamma_" in out:
        if not out["gamma_"] > 0:
            fail(f"gamma_ must be > 0, got {float(out['gamma_'])}")
        out["gamma_"] = float(out["gamma_"])
    if "M_" in out:
        if not out["M_"] >= 0:
            fail(f"M_ must be >= 0, got {float(out['M_'])}")
        out["M_"] = float(out["M_"])
    for key in ("n_support_", "n_iter_"):
        if key in out and np.any(out[key] < 0):
            fail(f"{key} contains negative counts")
    if "n_support_" in out:
        n_sv = dims["n_sv"]
        if np.any(out["n_support_"] > n_sv):
            fail(f"n_support_ counts more support vectors than the {n_sv} stored")
        if name == "BudgetSVC" and int(out["n_support_"].sum()) != n_sv:
            fail(f"sum(n_support_) = {int(out['n_support_'].sum())} but {n_sv} support vectors "
                 "are stored")
    for key in ("support_", "component_indices_"):
        if key in out:
            low = -1 if name == "BudgetSVC" and kernel != "precomputed" else 0
            high = n_features if kernel == "precomputed" else np.inf
            if np.any(out[key] < low) or np.any(out[key] >= high):
                fail(f"{key} holds indices outside [{low}, {high})")
    if "n_components_" not in out and "r" in dims:
        out["n_components_"] = dims["r"]
    names = arrays.get("feature_names_in_")
    if names is not None:
        names = np.asarray(names)
        if names.dtype.kind != "U" or names.shape != (n_features,):
            fail(f"feature_names_in_ must be {n_features} strings, got {names.dtype.str} array "
                 f"of shape {names.shape}")
        out["feature_names_in_"] = names
    return out


def _sparse_components(arrays, dims, n_features, fail):
    """CSR landmarks from their three arrays, with the structure checked."""
    missing = [k for k in _SPARSE_COMPONENTS if k not in arrays]
    if missing:
        fail(f"missing array(s) {', '.join(missing)}")
    data = _check_array(_Array("components_data_", "f", ("nnz",)), arrays["components_data_"],
                        dims, fail)
    indices = _check_array(_Array("components_indices_", "i", ("nnz",)),
                           arrays["components_indices_"], dims, fail)
    indptr = _check_array(_Array("components_indptr_", "i", ("m+1",)),
                          arrays["components_indptr_"], dims, fail)
    m = len(indptr) - 1
    if m < 1 or dims.setdefault("m", m) != m:
        fail(f"components_indptr_ has {len(indptr)} entries, expected m + 1")
    if (indptr[0] != 0 or indptr[-1] != len(data) or np.any(np.diff(indptr) < 0)
            or np.any(indices < 0) or np.any(indices >= n_features)):
        fail("components_ is not a valid CSR matrix (indptr or indices out of range)")
    return sp.csr_matrix((data, indices, indptr), shape=(m, n_features))


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
# Parameters
# --------------------------------------------------------------------------


def _params_to_json(estimator):
    """get_params() as JSON values (class_weight dicts as [label, weight] pairs)."""
    params = {}
    for key, value in estimator.get_params(deep=False).items():
        if callable(value) and key == "kernel":
            raise ValueError(f"cannot save {type(estimator).__name__} with a callable kernel: "
                             "a model file holds no code; train with kernel='precomputed' to "
                             "save the model")
        if key == "class_weight" and isinstance(value, dict):
            value = [[k, v] for k, v in value.items()]
        converted = _to_json(value, on_unknown=_UNSET_PARAM)
        if converted is _UNSET_PARAM or _contains(converted, _UNSET_PARAM):
            warnings.warn(
                f"parameter {key}={value!r} has no JSON form and is saved as None",
                UserWarning,
                stacklevel=3,
            )
            converted = None
        params[key] = converted
    return params


def _params_from_json(params, fail):
    """The constructor parameters of a file (class_weight pairs back to a dict)."""
    params = dict(params)
    pairs = params.get("class_weight")
    if isinstance(pairs, list):
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            fail("class_weight in 'params' must be a list of [label, weight] pairs")
        params["class_weight"] = {label: weight for label, weight in pairs}
    return params


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def save_model(estimator, path):
    """Save a fitted estimator to a fastsvm model file (see the module docs).

    Parameters
    ----------
    estimator : BudgetSVC, NystromSVC, HuberSVC, PegasosSVC or MarginSGDSVC
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
        If the fitted state cannot be stored (a callable kernel, non-finite
        coefficients, class labels that are neither numbers nor strings).
    """
    name = _estimator_name(estimator)
    if not hasattr(estimator, "intercept_"):
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before saving it.")
    params = _params_to_json(estimator)

    def fail(msg):
        raise ValueError(f"cannot save {type(estimator).__name__}: {msg}")

    classes, classes_dtype = _storable_classes(estimator.classes_)
    raw = _fitted_arrays(estimator, _layout(name, params))
    raw.update(classes_=classes, n_features_in_=np.asarray(estimator.n_features_in_))
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        raw["feature_names_in_"] = np.asarray(np.asarray(names).tolist(), dtype=str)
    checked = _check_model(name, params, raw, fail)

    meta = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "estimator": name,
        "params": params,
        "classes_dtype": classes_dtype,
        "training_info": _to_json(dict(getattr(estimator, "training_info_", None) or {}),
                                  on_unknown=None),
    }
    entries = {"meta": np.array(json.dumps(meta, allow_nan=False))}
    for key in raw:
        if key in _SPARSE_COMPONENTS:
            entries[key] = np.asarray(raw[key], dtype=np.float64 if key.endswith("data_")
                                      else np.int64)
        else:
            entries[key] = np.asarray(checked[key])
    _write_atomically(path, entries)


def _write_atomically(path, entries):
    """``np.savez_compressed`` into a temporary file, renamed over ``path`` when complete."""
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


def _upgrade_v1(entries, fail):
    """A version 1 file (BudgetSVC, dual_coef_ stacked over models) as version 2 arrays."""
    coef, n_support = entries.get("dual_coef_"), entries.get("n_support_")
    if coef is None or n_support is None:
        fail("missing array(s) dual_coef_ or n_support_")
    coef, n_support = np.asarray(coef), np.asarray(n_support)
    if coef.ndim != 1 or n_support.ndim != 1 or n_support.dtype.kind not in "iu":
        fail(f"version 1 dual_coef_ and n_support_ must be 1-d, got shapes {coef.shape} and "
             f"{n_support.shape}")
    if np.any(n_support < 0) or int(n_support.sum()) != len(coef):
        fail(f"sum(n_support_) = {int(n_support.sum())} but dual_coef_ has {len(coef)} entries")
    bounds = np.concatenate([[0], np.cumsum(n_support)])
    block = np.zeros((len(n_support), len(coef)))
    for k in range(len(n_support)):
        block[k, bounds[k]:bounds[k + 1]] = coef[bounds[k]:bounds[k + 1]]
    return dict(entries, dual_coef_=block, support_=np.full(len(coef), -1, dtype=np.int64))


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
    estimator : BudgetSVC, NystromSVC, HuberSVC, PegasosSVC or MarginSGDSVC
        A fitted estimator whose ``predict`` and ``decision_function`` give
        exactly the results of the saved one.

    Raises
    ------
    ModelFormatError
        If the file is not a valid fastsvm model file (corrupt or truncated,
        missing or unexpected entries, unknown format/version/estimator,
        invalid parameters, inconsistent shapes, non-finite values). The
        message names the file.
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
            if "meta" not in npz.files:
                fail("not a fastsvm model file (no 'meta' entry)")
            for key in npz.files:
                entries[key] = npz[key]
    except ModelFormatError:
        raise
    except Exception as exc:
        # zipfile.BadZipFile, zlib.error, EOFError, struct.error, OSError, ...;
        # ValueError: a bad .npy header, or an entry that would need pickle.
        fail(f"corrupt or truncated model file ({type(exc).__name__}: {exc})")
    meta_arr = entries.pop("meta")

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
    classes_by_name = _estimator_classes()
    if not isinstance(est_name, str) or est_name not in classes_by_name:
        fail(f"unknown estimator {est_name!r} (supported: {', '.join(sorted(classes_by_name))})")
    if version == 1 and est_name != "BudgetSVC":
        fail(f"version 1 files hold BudgetSVC models only, not {est_name}")
    if not isinstance(meta["params"], dict):
        fail("'params' in 'meta' must be a JSON object")
    params = _params_from_json(meta["params"], fail)
    training_info = meta["training_info"]
    if not isinstance(training_info, dict):
        fail("'training_info' in 'meta' must be a JSON object")
    try:
        classes_dtype = np.dtype(meta["classes_dtype"])
    except (TypeError, ValueError):
        fail(f"invalid classes_dtype {meta['classes_dtype']!r}")
    if classes_dtype.kind not in _CLASS_KINDS + "OS":
        fail(f"unsupported classes_dtype {meta['classes_dtype']!r}")

    # --- estimator and arrays ---
    try:
        estimator = classes_by_name[est_name](**params)
        estimator._validate_params()
    except (TypeError, ValueError) as exc:
        fail(f"parameters not accepted by {est_name} ({exc})")
    for key in ("classes_", "n_features_in_"):
        if key not in entries:
            fail(f"missing array {key}")
    if version == 1:
        entries = _upgrade_v1(entries, fail)
    params = estimator.get_params(deep=False)       # with the defaults of missing parameters
    arrays = _check_model(est_name, params, entries, fail)
    expected = {spec.name for spec in _layout(est_name, params)} | {
        "classes_", "n_features_in_", "feature_names_in_", *_SPARSE_COMPONENTS}
    unexpected = sorted(set(entries) - expected)
    if unexpected:
        fail(f"unexpected entr{'y' if len(unexpected) == 1 else 'ies'} {', '.join(unexpected)}")

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
    arrays["classes_"] = classes
    if "feature_names_in_" in arrays:
        arrays["feature_names_in_"] = np.asarray(arrays["feature_names_in_"].tolist(), dtype=object)
    if "gamma_" not in arrays and hasattr(estimator, "gamma"):
        arrays["gamma_"] = None
    arrays["training_info_"] = training_info
    for key, value in arrays.items():
        setattr(estimator, key, value)
    return estimator
