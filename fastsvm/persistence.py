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
archive is read entry by entry with :mod:`zipfile` and NumPy's ``.npy``
header parser, nothing is ever unpickled, and every entry is checked before
an estimator is built from it, within limits on memory and time (see
*Limits* below), so a model file from an untrusted source can at worst be
rejected with :class:`ModelFormatError`.
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
    ``n_classes`` (one-vs-rest, model ``k`` scores ``classes_[k]``), or for
    a ``BudgetSVC``, ``NystromSVC``, ``MarginSGDSVC`` or ``PegasosSVC`` with
    ``multi_class='ovo'``, or 'auto' (the default) up to 30 classes (except
    PegasosSVC's with ``kernel='linear'``; a file without the parameter is
    one-vs-rest), ``n_classes (n_classes - 1) / 2``,
    one per pair of classes (i, j), i < j, in the order (0, 1), (0, 2),
    ..., positive for ``classes_[j]``; the class with most votes wins (see
    :func:`fastsvm.multiclass.ovo_scores`).
``class_weight_`` (optional)
    ``float64``, shape ``(n_classes,)``, finite and >= 0: the weight of each
    class in training, the estimator's ``class_weight_`` (a file written
    before fastsvm had that attribute loads without it).
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
    Support vectors of sparse training data (``MarginSGDSVC``, kernel
    ``PegasosSVC``) are stored instead as the CSR arrays
    ``support_vectors_data_``, ``support_vectors_indices_`` and
    ``support_vectors_indptr_`` (``n_sv + 1`` entries), as sparse landmarks below.
``support_``
    shape ``(n_sv,)``: the training row of each support vector (for
    'precomputed' the column of the kernel matrix it reads, in
    ``[0, n_features)``); ``BudgetSVC`` writes -1 for merged vectors.
``dual_coef_``
    shape ``(n_models, n_sv)``.
``n_support_``
    shape ``(n_models,)``: support vectors per binary model (``BudgetSVC``
    with separate budgets: they partition the n_sv vectors in model order;
    with a shared budget: each counts the vectors with a non-zero
    coefficient in its model).
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
needs pickle; ``meta`` has exactly the keys above, each of its type; the
format tag, version and estimator name are known and the parameters are
valid; the shapes are consistent as listed above; all numbers are finite,
``gamma_ > 0``, counts are non-negative, indices are in range and the classes
are distinct. Any failure raises :class:`ModelFormatError` (a ``ValueError``)
naming the file.

Limits
------
:func:`load_model` bounds the memory and time that any file can cost: what
an entry declares is checked before the entry is decompressed or memory is
allocated for it, and data is only ever read up to the size so checked.

*The archive.* Every entry is a ``.npy`` file, named once, neither a
directory nor encrypted, stored or deflate-compressed; the compressed
sizes of the entries add up to at most the file's size (entries that share
their data would count it again), and no entry declares more bytes than its
compression can produce from its compressed size (deflate turns a byte into
at most 1032). So the archive never yields more than about 1032 times the
file's size.

*meta* is read first, at most 32 MiB of ``.npy`` data (8 Mi characters):
a ``HuberSVC`` keeps its objective at every iteration in
``training_info`` (about 20 characters each, up to ``max_iter`` per binary
model: 10 classes and 20000 iterations take 4.4 Mi characters), so a
valid ``meta`` can take several MiB. The JSON is strict: at most 65536
objects and arrays (a valid file: tens, a few hundred with large
``MarginSGDSVC`` grids), nested at most 32 deep (a valid file: 4), no key
repeated in an object, integers within the int64 range, other numbers
finite. Parsing the largest allowed ``meta`` takes at most about 150 MB and
a second. ``meta`` has no other key than those listed above; each parameter
is a number, string, boolean or null (``class_weight`` may be a list of
``[label, weight]`` pairs, ``M_grid`` and ``gamma_grid`` lists of numbers).

*The arrays.* The header of each ``.npy`` entry (format 1.0 or 2.0, never
the ``object`` dtype) is read before its data, and its dtype and shape are
checked against the layout above: ``n_features_in_`` and ``classes_`` are
read first, and every other shape must agree with them and with the arrays
read before; the dimensions that the parameters bound must be within them:
at most ``budget`` support vectors per binary model (``BudgetSVC``; in all,
with a shared budget; ``'auto'`` resolved as in ``fit``), at most
``n_components`` landmarks (``NystromSVC``; for ``'auto'`` 8,000, every row of
a fit on 8,000 rows: ``AUTO_EXACT_ROWS``), at most ``n_features_in_``
(distinct training rows) support vectors or landmarks for
``kernel='precomputed'``. The data must be exactly as long as the header
says, which is checked against the entry's declared size before reading
and then while reading (a short entry or a bad CRC is rejected). All
arrays together hold at most 16 GiB: a model that large needs as much
memory to be used at all; the limit is there so that no header can claim
more.  :func:`save_model` refuses a model beyond these limits (arrays above
16 GiB, or a ``meta`` above 32 MiB) instead of writing a file that
:func:`load_model` would refuse.

Together: a "zip bomb" that claims a huge shape or size is rejected before
its data is decompressed, and no file makes :func:`load_model` allocate more
than about ``min(16 GiB, 1032 x its size)`` for arrays (the support vectors
of ``PegasosSVC`` and ``MarginSGDSVC`` and the number of features and of
classes have no bound from the parameters, so a file of mostly zeros can
declare and hold that much).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import stat
import tempfile
import warnings
import zipfile
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.lib import format as npy_format
from sklearn.exceptions import NotFittedError

from .kernels import uses_gamma
from .multiclass import n_binary_models

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

# The keys of 'meta' and the JSON type of each.
_META_TYPES = {"format": str, "version": int, "estimator": str, "params": dict,
               "classes_dtype": str, "training_info": dict}
_META_KEYS = tuple(_META_TYPES)
_JSON_NAMES = {str: "string", int: "integer", dict: "object"}
# dtype kinds accepted for class labels: bool, signed/unsigned int, float, unicode.
_CLASS_KINDS = "biufU"

# Limits of load_model (see "Limits" in the module docstring).
#: Most bytes of .npy data in 'meta' (4 bytes per character).
_MAX_META_BYTES = 32 << 20
#: Deepest nesting of JSON objects and arrays in 'meta', and most objects and arrays.
_MAX_JSON_DEPTH = 32
_MAX_JSON_CONTAINERS = 1 << 16
#: Most bytes of data of all arrays of a file together.
_MAX_ARRAY_BYTES = 16 << 30
#: Most bytes deflate produces per compressed byte (258-byte matches coded in 2 bits), and
#: a margin for the block headers of a short entry.
_DEFLATE_MAX_RATIO = 1032
_DEFLATE_SLACK = 4096
#: Bytes decompressed at a time while reading an array.
_READ_CHUNK = 16 << 20


class ModelFormatError(ValueError):
    """A model file is not a valid fastsvm model file (corrupt, truncated,
    inconsistent, or written by a newer fastsvm)."""


#: The estimator names stored in ``meta["estimator"]``.
ESTIMATOR_NAMES = ("BudgetSVC", "HuberSVC", "MarginSGDSVC", "NystromSVC", "PegasosSVC")


def _estimator_class(name):
    """The estimator class of a name of ``ESTIMATOR_NAMES``, importing its solver only."""
    import fastsvm

    return getattr(fastsvm, name)


def _estimator_name(estimator):
    """The registered name of ``estimator``'s class (subclasses included)."""
    for cls in type(estimator).__mro__:
        if cls.__name__ in ESTIMATOR_NAMES and _estimator_class(cls.__name__) is cls:
            return cls.__name__
    raise TypeError(
        f"cannot save a {type(estimator).__name__}: save_model supports "
        f"{', '.join(ESTIMATOR_NAMES)} estimators"
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


# The optional array of every model (see the module docstring).
_CLASS_WEIGHT = _Array("class_weight_", "f", ("n_classes",))

# The matrices a model may hold as sparse (CSR) rows, with the dimension of their rows:
# a NystromSVC's landmarks, the support vectors of a kernel expansion fitted on sparse data.
_SPARSE_ROWS = {"components_": "m", "support_vectors_": "n_sv"}


def _sparse_specs(matrix):
    """The three arrays that hold the CSR ``matrix`` (a key of _SPARSE_ROWS) in a file."""
    rows = _SPARSE_ROWS[matrix]
    return (_Array(f"{matrix}data_", "f", ("nnz",)), _Array(f"{matrix}indices_", "i", ("nnz",)),
            _Array(f"{matrix}indptr_", "i", (f"{rows}+1",)))


_SPARSE_ARRAYS = {spec.name for matrix in _SPARSE_ROWS for spec in _sparse_specs(matrix)}


def _stored_sparse(matrix, entries):
    """Whether a file (its entry names) holds ``matrix`` as CSR arrays instead of dense."""
    return matrix in _SPARSE_ROWS and matrix not in entries and f"{matrix}data_" in entries


def _layout(name, params):
    """The fitted arrays of estimator ``name`` with parameters ``params`` (see the module
    docstring), besides classes_, n_features_in_ and the optional class_weight_ and
    feature_names_in_."""
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
    """The estimator's fitted arrays for the file (sparse rows as CSR arrays)."""
    arrays = {}
    for spec in layout:
        value = getattr(estimator, spec.name)
        if spec.name in _SPARSE_ROWS and sp.issparse(value):
            value = value.tocsr()
            data, indices, indptr = _sparse_specs(spec.name)
            arrays.update({data.name: value.data, indices.name: value.indices,
                           indptr.name: value.indptr})
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
    distinct = np.unique(classes)
    if distinct.shape[0] != classes.shape[0]:
        fail("classes_ contains duplicate labels")
    if not np.array_equal(distinct, classes):
        # the binary models score classes_[1] against classes_[0] (or each class in turn)
        # in this order: a file with another would swap every prediction
        fail("classes_ must be sorted, as np.unique gives them")
    return classes


def _check_count(value, name, fail):
    value = np.asarray(value)
    if value.shape != () or value.dtype.kind not in "iu":
        fail(f"{name} must be an integer scalar, got {value.dtype.str} array of shape "
             f"{value.shape}")
    if int(value) < 1:
        fail(f"{name} must be >= 1, got {int(value)}")
    return int(value)


def _check_shape(spec, dtype, shape, dims, bounds, fail):
    """An array's dtype kind and shape against its spec.

    A dimension name seen for the first time is bound to its size in ``dims``, after
    checking the size against its bound in ``bounds`` (see :func:`_dim_bounds`), if any.
    """
    kinds = "iuf" if spec.kind == "f" else "iu"
    if dtype.kind not in kinds or len(shape) != len(spec.shape):
        fail(f"{spec.name} must be a {len(spec.shape)}-d {'real' if spec.kind == 'f' else 'integer'} "
             f"array, got {dtype.str} array of shape {shape}")
    for axis, (size, want) in enumerate(zip(shape, spec.shape)):
        if isinstance(want, str):
            if want not in dims and want in bounds and size > bounds[want][0]:
                bound, reason = bounds[want]
                fail(f"{spec.name} has {size} entries along axis {axis} but {want} is at most "
                     f"{bound} ({reason})")
            bound = dims.setdefault(want, size)
        else:
            bound = want
        if size != bound:
            note = (" (one binary model for 2 classes, else one per class, or per pair of "
                    "classes for one-vs-one)" if want == "n_models" else "")
            fail(f"{spec.name} has {size} entries along axis {axis} but {want} is "
                 f"{bound}{note}")


def _check_array(spec, value, dims, bounds, fail):
    """One array against its spec: dtype kind, dimensions (see :func:`_check_shape`),
    finiteness; returns it as a C-ordered float64 or int64 array."""
    value = np.asarray(value)
    _check_shape(spec, value.dtype, value.shape, dims, bounds, fail)
    value = np.array(value, dtype=np.float64 if spec.kind == "f" else np.int64, order="C")
    if spec.kind == "f" and not np.all(np.isfinite(value)):
        fail(f"{spec.name} contains non-finite values")
    return value


def _n_models(name, params, n_classes):
    """Binary models of a fit on ``n_classes`` classes: one-vs-one pairs for an estimator
    with ``multi_class='ovo'`` ('auto': up to 30 classes, except PegasosSVC's with
    ``kernel='linear'``), else one-vs-rest (see :mod:`fastsvm.multiclass`)."""
    multi_class = params.get("multi_class", "ovr")
    if name == "PegasosSVC":
        from .bounds.estimator import pegasos_multi_class
        multi_class = pegasos_multi_class(multi_class, params.get("kernel", "linear"))
    return n_binary_models(n_classes, multi_class)


def _shared_budget(params, n_classes, n_features):
    """Whether a BudgetSVC's binary models share one budget of support vectors."""
    from .bsgd.estimator import resolve_shared_budget
    kernel = params.get("kernel", "rbf")
    return resolve_shared_budget(params["shared_budget"], n_classes, params["multi_class"],
                                 kernel, params.get("maintenance", "merge"), params["budget"],
                                 0 if kernel == "precomputed" else n_features)


def _dim_bounds(name, params, n_classes, n_features):
    """Upper bounds that the parameters put on the dimensions they imply, as
    ``{dimension: (bound, reason)}``.

    A fitted model never exceeds them; :func:`load_model` checks them against the
    ``.npy`` headers before reading any data, so that a file cannot claim, say, a
    million support vectors for a ``BudgetSVC(budget=100)``.
    """
    kernel = params.get("kernel", "linear")
    n_models = _n_models(name, params, n_classes)
    if name == "NystromSVC":
        m, reason = params["n_components"], f"n_components={params['n_components']}"
        if m == "auto":
            from .nystrom.estimator import AUTO_EXACT_ROWS
            m = AUTO_EXACT_ROWS
            reason = f"n_components='auto' (at most {m} landmarks)"
        if kernel == "precomputed" and n_features < m:
            m, reason = n_features, f"n_features_in_={n_features} training rows"
        return {"m": (m, reason), "m+1": (m + 1, reason), "r": (m, reason),
                "nnz": (m * n_features, f"{reason}, {n_features} features")}
    if name == "BudgetSVC":
        from .bsgd.estimator import resolve_budget
        shared = _shared_budget(params, n_classes, n_features)
        budget = resolve_budget(params["budget"], n_classes, params["multi_class"], shared,
                                spread=True)   # 'auto' at its largest
        if shared:
            n_sv, reason = budget, (f"budget={params['budget']!r} ({budget}) shared by the "
                                    f"{n_models} binary models")
        else:
            n_sv, reason = budget * n_models, (
                f"budget={params['budget']!r} ({budget}) per binary model, {n_models} "
                f"binary model{'s' if n_models > 1 else ''}")
        return {"n_sv": (n_sv, reason), "n_sv+1": (n_sv + 1, reason),
                "nnz": (n_sv * n_features, f"{reason}, {n_features} features")}
    if kernel == "precomputed":
        return {"n_sv": (n_features, f"n_features_in_={n_features} training rows")}
    return {}


def _check_model(name, params, arrays, fail):
    """Check the fitted arrays of one model for consistency; return them normalised."""
    classes = _check_classes(arrays["classes_"], fail)
    n_features = _check_count(arrays["n_features_in_"], "n_features_in_", fail)
    n_models = _n_models(name, params, len(classes))
    dims = {"n_models": n_models, "n_features": n_features, "n_classes": len(classes)}
    bounds = _dim_bounds(name, params, len(classes), n_features)
    out = {"classes_": classes, "n_features_in_": n_features}
    if _CLASS_WEIGHT.name in arrays:
        out[_CLASS_WEIGHT.name] = _check_array(_CLASS_WEIGHT, arrays[_CLASS_WEIGHT.name], dims,
                                               bounds, fail)
        if np.any(out[_CLASS_WEIGHT.name] < 0):
            fail("class_weight_ contains negative weights")
    kernel = params.get("kernel", "linear")
    for spec in _layout(name, params):
        if _stored_sparse(spec.name, arrays):
            out[spec.name] = _sparse_rows(spec.name, arrays, dims, bounds, n_features, fail)
            continue
        if spec.name not in arrays:
            fail(f"missing array {spec.name}")
        out[spec.name] = _check_array(spec, arrays[spec.name], dims, bounds, fail)
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
        if (name == "BudgetSVC" and not _shared_budget(params, len(classes), n_features)
                and int(out["n_support_"].sum()) != n_sv):
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


def _sparse_rows(matrix, arrays, dims, bounds, n_features, fail):
    """The CSR ``matrix`` from its three arrays, with the structure checked."""
    specs = _sparse_specs(matrix)
    missing = [spec.name for spec in specs if spec.name not in arrays]
    if missing:
        fail(f"missing array(s) {', '.join(missing)}")
    data, indices, indptr = (_check_array(spec, arrays[spec.name], dims, bounds, fail)
                             for spec in specs)
    rows, n_rows = _SPARSE_ROWS[matrix], len(indptr) - 1
    if n_rows < 1 or dims.setdefault(rows, n_rows) != n_rows:
        fail(f"{specs[2].name} has {len(indptr)} entries, expected {rows} + 1")
    if (indptr[0] != 0 or indptr[-1] != len(data) or np.any(np.diff(indptr) < 0)
            or np.any(indices < 0) or np.any(indices >= n_features)):
        fail(f"{matrix} is not a valid CSR matrix (indptr or indices out of range)")
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))


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


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _params_from_json(cls, params, fail):
    """The constructor parameters of a file, type-checked (class_weight pairs back to a dict).

    Each parameter is one of ``cls``'s and a JSON scalar, except that ``class_weight`` may be
    a list of ``[label, weight]`` pairs and ``M_grid``/``gamma_grid`` lists of numbers; the
    estimator checks the values.
    """
    unknown = sorted(set(params) - set(cls().get_params(deep=False)))
    if unknown:
        fail(f"parameters not accepted by {cls.__name__} (unknown parameter(s) "
             f"{_clip(', '.join(unknown))})")
    params = dict(params)
    for key, value in params.items():
        if key == "class_weight" and isinstance(value, list):
            if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], (str, int, float))
                       and _is_number(p[1]) for p in value):
                fail("class_weight in 'params' must be a list of [label, weight] pairs")
        elif key.endswith("_grid") and isinstance(value, list):
            if not all(_is_number(v) for v in value):
                fail(f"{key} in 'params' must be a list of numbers")
        elif value is not None and not isinstance(value, (bool, int, float, str)):
            fail(f"parameter {key} in 'params' must be a number, string, boolean or null, "
                 f"got {type(value).__name__}")
    if isinstance(params.get("class_weight"), list):
        params["class_weight"] = {label: weight for label, weight in params["class_weight"]}
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
    if hasattr(estimator, _CLASS_WEIGHT.name):
        raw[_CLASS_WEIGHT.name] = estimator.class_weight_
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
        if key in _SPARSE_ARRAYS:
            entries[key] = np.asarray(raw[key], dtype=np.float64 if key.endswith("data_")
                                      else np.int64)
        else:
            entries[key] = np.asarray(checked[key])
    # what load_model would refuse is not written
    data = sum(entry.nbytes for key, entry in entries.items() if key != "meta")
    if data > _MAX_ARRAY_BYTES:
        fail(f"its arrays hold {data} bytes of data, more than the {_MAX_ARRAY_BYTES} a model "
             "file may hold")
    if entries["meta"].nbytes > _MAX_META_BYTES:
        fail(f"its parameters and training_info_ take {entries['meta'].nbytes} bytes, more "
             f"than the {_MAX_META_BYTES} a model file's 'meta' may hold")
    write_atomically(path, lambda fh: np.savez_compressed(fh, **entries), "the model")


def write_atomically(path, write, what):
    """Call ``write`` on a temporary binary file beside ``path``, renamed over ``path`` when
    complete: a failure (a full disk, a file size limit) leaves what was there.

    A symbolic link is written through (the file it names is replaced, the link
    stays), an existing file keeps its permissions, and a path that names
    something other than a regular file (a FIFO, a device such as /dev/null) is
    refused rather than replaced by a file.  Errors are OSErrors whose filename is
    ``path`` and whose message names ``what`` is saved ('the model').
    """
    path = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"cannot save {what}: no directory {directory}",
                                path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, f"cannot save {what}: the path is a directory",
                                path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise OSError(errno.EINVAL, f"cannot save {what}: the path is not a regular file "
                                    "(a device or FIFO)", path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask       # a new file's usual permissions
    try:
        fd, tmp = tempfile.mkstemp(prefix=".fastsvm-", suffix=".tmp", dir=directory)
    except OSError as exc:  # name the target, not the temporary file that was not made
        raise type(exc)(exc.errno, f"cannot save {what}: {exc.strerror} (writing into "
                                   f"{directory})", path) from exc
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
        except OSError as exc:      # the target, not the temporary file, in the message
            raise type(exc)(exc.errno, f"cannot save {what}: {exc.strerror or exc}",
                            path) from exc
        try:
            os.chmod(tmp, mode)     # mkstemp made it 0600
        except OSError:  # pragma: no cover  (a file system without permissions)
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _contains(value, marker):
    if value is marker:
        return True
    if isinstance(value, dict):
        return any(_contains(v, marker) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, marker) for v in value)
    return False


def _upgrade_v1(arrays, fail):
    """The arrays of a version 1 file (BudgetSVC; ``dual_coef_`` 1-d, stacked over the binary
    models in ``n_support_`` order; no ``support_``) as version 2 arrays."""
    coef = arrays["dual_coef_"]
    counts = [int(n) for n in arrays["n_support_"]]
    if min(counts) < 0 or sum(counts) != len(coef):
        fail(f"sum(n_support_) = {sum(counts)} but dual_coef_ has {len(coef)} entries")
    block = np.zeros((len(counts), len(coef)))
    start = 0
    for k, count in enumerate(counts):
        block[k, start:start + count] = coef[start:start + count]
        start += count
    return dict(arrays, dual_coef_=block, support_=np.full(len(coef), -1, dtype=np.int64))


# --------------------------------------------------------------------------
# Reading a model file within limits (see "Limits" in the module docstring)
# --------------------------------------------------------------------------


def _clip(text, limit=200):
    """``text`` on one line and at most ``limit`` characters: messages quote untrusted values."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


@contextlib.contextmanager
def _archive_errors(fail):
    """Report what zipfile, zlib and NumPy's .npy header parser raise on a damaged archive
    (BadZipFile, zlib.error, EOFError, OSError, ValueError, ...) as a ModelFormatError."""
    try:
        yield
    except (ModelFormatError, MemoryError):
        raise
    except Exception as exc:
        fail(f"corrupt or truncated model file ({type(exc).__name__}: {_clip(str(exc))})")


def _archive_entries(archive, file_size, fail):
    """The archive's entries by array name, checked before any is read: '.npy' files, each
    once, neither directories nor encrypted, stored or deflated, not overlapping, and none
    declaring more bytes than its compressed size can produce."""
    if "meta.npy" not in archive.namelist():
        fail("not a fastsvm model file (no 'meta' entry)")
    entries = {}
    compressed = 0
    for info in archive.infolist():
        name = _clip(repr(info.filename))
        if info.is_dir():
            fail(f"entry {name} is a directory")
        if info.flag_bits & 0x1:
            fail(f"entry {name} is encrypted")
        if not info.filename.endswith(".npy"):
            fail(f"unexpected entry {name} (not a .npy array)")
        key = info.filename[:-len(".npy")]
        if key in entries:
            fail(f"duplicate entry {name}")
        if info.compress_type == zipfile.ZIP_STORED:
            most = info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            most = _DEFLATE_MAX_RATIO * info.compress_size + _DEFLATE_SLACK
        else:
            fail(f"entry {name} uses compression method {info.compress_type}; only stored "
                 "and deflated entries are read")
        if info.file_size > most:
            fail(f"entry {name} declares {info.file_size} bytes but its {info.compress_size} "
                 "compressed bytes cannot hold that much")
        compressed += info.compress_size
        entries[key] = info
    if compressed > file_size:
        fail(f"the entries declare {compressed} bytes of compressed data but the file holds "
             f"{file_size} bytes")
    return entries


def _read_entry(archive, info, check, max_bytes, fail):
    """One ``.npy`` entry as an array, never unpickled, never larger than ``max_bytes``.

    The ``.npy`` header is read first: ``check(dtype, shape)`` must accept the dtype and shape
    before any data is decompressed. The data must be exactly as long as the header says
    (checked against the entry's declared size, then while reading it in chunks, with its CRC).
    """
    key = info.filename[:-len(".npy")]
    with _archive_errors(fail):
        stream = archive.open(info)
    with stream:
        with _archive_errors(fail):
            version = npy_format.read_magic(stream)
            if version == (1, 0):
                shape, fortran_order, dtype = npy_format.read_array_header_1_0(stream)
            elif version == (2, 0):
                shape, fortran_order, dtype = npy_format.read_array_header_2_0(stream)
            else:
                fail(f"{key} is in .npy format version {version[0]}.{version[1]}; "
                     "1.0 and 2.0 are read")
            header_size = stream.tell()
        if dtype.hasobject:
            fail(f"{key} has the object dtype: reading it would need pickle")
        if dtype.itemsize == 0 or any(size < 0 for size in shape):
            fail(f"{key} has an invalid dtype or shape ({dtype.str}, {_clip(repr(shape))})")
        check(dtype, shape)
        count = math.prod(shape)
        nbytes = dtype.itemsize * count
        if nbytes > max_bytes:
            fail(f"{key} declares {nbytes} bytes of data, more than the {max_bytes} allowed")
        if header_size + nbytes != info.file_size:
            fail(f"{key}: the .npy header declares {nbytes} bytes of data but the entry holds "
                 f"{info.file_size - header_size}")
        data = bytearray(nbytes)
        view = memoryview(data)
        done = 0
        with _archive_errors(fail):
            while done < nbytes:
                got = stream.readinto(view[done:done + _READ_CHUNK])
                if not got:
                    fail(f"{key} is truncated")
                done += got
    array = np.frombuffer(data, dtype=dtype, count=count)
    return array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)


def _json_int(text):
    """A JSON integer, within the int64 range (checked on the text first: converting a long
    literal takes quadratic time)."""
    if len(text) > 20 or not -(2**63) <= int(text) < 2**63:
        raise ValueError(f"integer {_clip(text, 40)} is outside the int64 range")
    return int(text)


def _json_float(text):
    """A finite JSON number (``1e999`` would parse as infinity)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {_clip(text, 40)} is not finite")
    return value


def _json_object(pairs):
    """A JSON object whose keys are distinct."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("an object repeats a key")
    return value


def _check_depth(value, depth, fail):
    """Fail if JSON objects and arrays nest more than _MAX_JSON_DEPTH deep; ``value`` is at
    level ``depth``."""
    if depth > _MAX_JSON_DEPTH:
        fail(f"'meta' nests JSON objects and arrays more than {_MAX_JSON_DEPTH} deep")
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (dict, list)):
            _check_depth(item, depth + 1, fail)


def _read_meta(archive, info, fail):
    """The 'meta' entry as a JSON object with the keys and types of the format (strict JSON,
    within the limits of the module docstring)."""

    def check(dtype, shape):
        if dtype.kind != "U" or shape != ():
            fail(f"'meta' must be a 0-d unicode array, got {dtype.str} array of shape {shape}")

    array = _read_entry(archive, info, check, _MAX_META_BYTES, fail)
    try:  # .npy unicode is UTF-32, which may hold code points that are no characters
        text = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes().decode(
            "utf-32-le")
    except UnicodeDecodeError as exc:
        fail(f"'meta' is not unicode text ({_clip(str(exc))})")
    # Each object or array costs ~60 bytes parsed: count them (an upper bound, as brackets
    # in strings count too) before parsing.
    if text.count("[") + text.count("{") > _MAX_JSON_CONTAINERS:
        fail(f"'meta' holds more than {_MAX_JSON_CONTAINERS} JSON objects and arrays")
    try:
        meta = json.loads(text.rstrip("\0"), object_pairs_hook=_json_object,
                          parse_float=_json_float, parse_int=_json_int,
                          parse_constant=_reject_constant)
    except RecursionError:
        fail(f"'meta' nests JSON objects and arrays more than {_MAX_JSON_DEPTH} deep")
    except ValueError as exc:
        fail(f"'meta' is not valid JSON ({_clip(str(exc))})")
    if not isinstance(meta, dict):
        fail("'meta' must be a JSON object")
    _check_depth(meta, 1, fail)
    if meta.get("format") != FORMAT_NAME:
        fail(f"not a fastsvm model file (format tag {_clip(repr(meta.get('format')))}, "
             f"expected {FORMAT_NAME!r})")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        fail(f"invalid format version {_clip(repr(version))}")
    if version > FORMAT_VERSION:
        fail(
            f"model file format version {version} is newer than the newest supported "
            f"version ({FORMAT_VERSION}); upgrade fastsvm to load it"
        )
    missing = [key for key in _META_KEYS if key not in meta]
    if missing:
        fail(f"'meta' lacks the key(s) {', '.join(missing)}")
    unknown = sorted(set(meta) - set(_META_KEYS))
    if unknown:
        fail(f"'meta' has unknown key(s) {_clip(', '.join(unknown))}")
    for key, kind in _META_TYPES.items():
        if not isinstance(meta[key], kind):
            fail(f"'{key}' in 'meta' must be a JSON {_JSON_NAMES[kind]}, got "
                 f"{type(meta[key]).__name__}")
    if meta["estimator"] not in ESTIMATOR_NAMES:
        fail(f"unknown estimator {_clip(repr(meta['estimator']))} (supported: "
             f"{', '.join(ESTIMATOR_NAMES)})")
    if version == 1 and meta["estimator"] != "BudgetSVC":
        fail(f"version 1 files hold BudgetSVC models only, not {meta['estimator']}")
    return meta


def _classes_dtype(text, fail):
    """The dtype named by meta's ``classes_dtype``: a NumPy dtype string (``dtype.str``) of a
    kind that class labels have."""
    if not re.fullmatch(r"[<>|=]?[biufUSO][0-9]{0,9}", text):
        fail(f"unsupported classes_dtype {_clip(repr(text))}")
    try:
        return np.dtype(text)
    except (TypeError, ValueError):
        fail(f"invalid classes_dtype {_clip(repr(text))}")


def _read_arrays(archive, entries, version, name, params, fail):
    """The arrays of a model file, each ``.npy`` header checked before its data is read:
    n_features_in_ and classes_ first, then the others from the smallest declared size up,
    each shape against the layout, the dimensions bound so far and their bounds, and all
    data together within _MAX_ARRAY_BYTES."""
    layout = _layout(name, params)
    if version == 1:    # dual_coef_ stacked over the binary models, no support_
        layout = [_Array("dual_coef_", "f", ("n_sv",)) if spec.name == "dual_coef_" else spec
                  for spec in layout if spec.name != "support_"]
    for matrix in [spec.name for spec in layout if _stored_sparse(spec.name, entries)]:
        layout = [spec for spec in layout if spec.name != matrix] + list(_sparse_specs(matrix))
    specs = {spec.name: spec for spec in layout}
    specs[_CLASS_WEIGHT.name] = _CLASS_WEIGHT
    unexpected = sorted(set(entries) - {"n_features_in_", "classes_", "feature_names_in_", *specs})
    if unexpected:
        fail(f"unexpected entr{'y' if len(unexpected) == 1 else 'ies'} "
             f"{_clip(', '.join(unexpected))}")
    missing = [key for key in ("classes_", "n_features_in_", *specs)
               if key not in entries and key != _CLASS_WEIGHT.name]
    if missing:
        fail(f"missing array(s) {', '.join(missing)}")

    arrays = {}
    left = _MAX_ARRAY_BYTES

    def read(key, check):
        nonlocal left
        arrays[key] = _read_entry(archive, entries[key], check, left, fail)
        left -= arrays[key].nbytes

    def check_classes(dtype, shape):
        if dtype.kind not in _CLASS_KINDS or len(shape) != 1:
            fail(f"classes_ must be a 1-d array of numbers, booleans or strings, got "
                 f"{dtype.str} array of shape {shape}")

    read("n_features_in_", lambda dtype, shape: _check_shape(
        _Array("n_features_in_", "i", ()), dtype, shape, {}, {}, fail))
    n_features = _check_count(arrays["n_features_in_"], "n_features_in_", fail)
    read("classes_", check_classes)
    n_classes = len(_check_classes(arrays["classes_"], fail))
    n_models = _n_models(name, params, n_classes)
    dims = {"n_models": n_models, "n_features": n_features, "n_classes": n_classes}
    bounds = _dim_bounds(name, params, n_classes, n_features)

    def check(key, dtype, shape):
        if key != "feature_names_in_":
            _check_shape(specs[key], dtype, shape, dims, bounds, fail)
        elif dtype.kind != "U" or shape != (n_features,):
            fail(f"feature_names_in_ must be {n_features} strings, got {dtype.str} array "
                 f"of shape {shape}")

    for key in sorted(set(entries) - set(arrays), key=lambda key: entries[key].file_size):
        read(key, lambda dtype, shape, key=key: check(key, dtype, shape))
    if version == 1:
        if 8 * n_models * dims["n_sv"] > left:
            fail(f"dual_coef_ of {n_models} x {dims['n_sv']} would exceed the "
                 f"{_MAX_ARRAY_BYTES} bytes of data a model file may hold")
        arrays = _upgrade_v1(arrays, fail)
    return arrays


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------


def load_model(path):
    """Load an estimator saved by :func:`save_model`.

    No code from the file is ever executed (nothing is unpickled), and what the file
    declares is checked before it is decompressed, so that memory and time stay bounded
    on any file (see *Limits* in the module docstring).

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
        missing, unexpected or duplicate entries, unknown format/version/estimator,
        malformed ``meta``, invalid parameters, inconsistent shapes, non-finite
        values, beyond the limits). The message names the file.
    OSError
        If the file cannot be opened (e.g. ``FileNotFoundError``).
    """
    path = os.fspath(path)

    def fail(msg):
        raise ModelFormatError(f"{path}: {msg}")

    with open(path, "rb") as fh:  # OSError (missing file...) propagates as is
        if fh.read(2) != b"PK":
            fail("not a fastsvm model file (not an npz/zip archive)")
        with _archive_errors(fail):
            archive = zipfile.ZipFile(fh)
        with archive:
            entries = _archive_entries(archive, os.fstat(fh.fileno()).st_size, fail)
            meta = _read_meta(archive, entries.pop("meta"), fail)
            est_name = meta["estimator"]
            cls = _estimator_class(est_name)
            params = _params_from_json(cls, meta["params"], fail)
            if est_name == "BudgetSVC":     # files from before shared budgets had none,
                params.setdefault("shared_budget", False)   # and from before one-vs-one
                params.setdefault("multi_class", "ovr")
            if est_name in ("NystromSVC", "MarginSGDSVC", "PegasosSVC"):  # files from before
                params.setdefault("multi_class", "ovr")     # one-vs-one were one-vs-rest
            if est_name == "MarginSGDSVC":  # files from before the cap were uncapped
                params.setdefault("C", None)
            try:
                estimator = cls(**params)
                estimator._validate_params()
                estimator._check_parameters()
            except (TypeError, ValueError) as exc:
                fail(f"parameters not accepted by {est_name} ({_clip(str(exc))})")
            params = estimator.get_params(deep=False)   # with the defaults of missing parameters
            classes_dtype = _classes_dtype(meta["classes_dtype"], fail)
            arrays = _read_arrays(archive, entries, meta["version"], est_name, params, fail)
    arrays = _check_model(est_name, params, arrays, fail)

    classes = arrays["classes_"]
    if classes_dtype.kind == "O":
        restored = np.empty(classes.shape[0], dtype=object)
        restored[:] = classes.tolist()
        classes = restored
    elif classes_dtype.kind == "S":
        if classes.dtype.kind != "U":
            fail(f"classes_ of dtype {classes.dtype.str} does not match classes_dtype {classes_dtype.str}")
        classes = np.char.encode(classes, "utf-8")
    elif classes_dtype.kind == "U":  # stored as is: no conversion to another width
        if classes_dtype != classes.dtype:
            fail(f"classes_ of dtype {classes.dtype.str} does not match classes_dtype {classes_dtype.str}")
    elif classes_dtype != classes.dtype:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                converted = classes.astype(classes_dtype)
        except (TypeError, ValueError, OverflowError, RuntimeWarning) as exc:
            fail(f"classes_ cannot be converted to classes_dtype {classes_dtype.str} ({_clip(str(exc))})")
        # the same values, compared as NumPy compares across types: a round trip alone
        # passed int64 -1 as uint64 2^64 - 1, which wraps back to -1
        if np.unique(converted).shape[0] != classes.shape[0] or not (
            np.array_equal(converted.astype(classes.dtype), classes)
            and np.array_equal(converted, classes)
        ):
            fail(f"classes_ is not representable in classes_dtype {classes_dtype.str}")
        classes = converted
    arrays["classes_"] = classes
    if "feature_names_in_" in arrays:
        arrays["feature_names_in_"] = np.asarray(arrays["feature_names_in_"].tolist(), dtype=object)
    # as fit sets it: None for kernels without a width, absent for linear PegasosSVC's w
    if ("gamma_" not in arrays and hasattr(estimator, "gamma")
            and not (est_name == "PegasosSVC" and params.get("kernel") == "linear")):
        arrays["gamma_"] = None
    arrays["training_info_"] = meta["training_info"]
    for key, value in arrays.items():
        setattr(estimator, key, value)
    return estimator
