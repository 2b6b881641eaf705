"""Training data as aligned row blocks on the workers, and predictions as dask arrays.

Nothing here computes a block on the client: the blocks are ``dask.delayed``
objects (of a dask array or DataFrame, or of NumPy / SciPy input cut into
row blocks), and the only results brought back are per-block label counts.
"""

import warnings

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_feature_names, _check_sample_weight, column_or_1d

#: Row blocks NumPy / SciPy input is cut into (per worker, at least one).
BLOCKS_PER_WORKER = 2


def _as_dask(values, name):
    """A dask array from a dask array, DataFrame or Series (None stays None)."""
    if values is None or isinstance(values, da.Array):
        return values
    if isinstance(values, dd.DataFrame):  # nullable numbers: pd.NA as NaN, which fit refuses
        nullable = {c: "float64" for c, dtype in values.dtypes.items()
                    if isinstance(dtype, pd.api.extensions.ExtensionDtype)
                    and pd.api.types.is_numeric_dtype(dtype)}
        return (values.astype(nullable) if nullable else values).to_dask_array(lengths=True)
    if isinstance(values, dd.Series):
        return values.to_dask_array(lengths=True)
    raise TypeError(f"{name} must be a dask array, DataFrame or Series when X is one; got "
                    f"{type(values).__name__} (give X, y and sample_weight all as dask "
                    "collections, or none)")


def _is_dask(values):
    return isinstance(values, (da.Array, dd.DataFrame, dd.Series))


def row_blocks(estimator, X, y, sample_weight, n_workers):
    """Aligned delayed row blocks [(X_k, y_k, w_k)] of the training data.

    Sets ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame with
    string column names) on ``estimator``, as ``validate_data`` does.
    """
    if not _is_dask(X):                 # NumPy / SciPy / lists, for convenience
        if _is_dask(y) or _is_dask(sample_weight):
            raise TypeError("give X, y and sample_weight all as dask collections, or none")
        _check_feature_names(estimator, X, reset=True)   # before a DataFrame loses its names
        X = X if sp.issparse(X) else np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
        _check_rows(estimator, X)
        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                             f"[{X.shape[0]}, {len(y)}]")
        # a number for every row, a wrong length or shape refused: as the local estimators
        weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        edges = np.linspace(0, X.shape[0], max(1, BLOCKS_PER_WORKER * n_workers) + 1).astype(int)
        blocks = [(dask.delayed(X[a:b]), dask.delayed(y[a:b]),
                   None if weight is None else dask.delayed(weight[a:b]))
                  for a, b in zip(edges[:-1], edges[1:]) if b > a]
        estimator.n_features_in_ = X.shape[1]
        return blocks
    if isinstance(X, dd.DataFrame):
        _check_feature_names(estimator, X._meta, reset=True)
    else:
        _check_feature_names(estimator, np.empty((0, 0)), reset=True)
    X = _as_dask(X, "X")
    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
    y = _as_dask(y, "y")
    weight = _as_dask(sample_weight, "sample_weight")
    for name, values in (("X", X), ("y", y), ("sample_weight", weight)):
        if values is not None and np.isnan(values.shape[0]):
            raise ValueError(f"{name} has unknown chunk sizes (rows selected by a boolean "
                             f"mask, for example): call {name}.compute_chunk_sizes() first")
    _check_rows(estimator, X)
    if y is not None and y.ndim == 2 and y.shape[1] == 1:      # as column_or_1d locally
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples, ), for example using ravel().",
                      DataConversionWarning, stacklevel=3)
        y = y[:, 0]
    if y is None or y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be one label per row of X ({X.shape[0]} rows); got shape "
                         f"{None if y is None else y.shape}")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != X.shape[0]):
        raise ValueError(f"sample_weight must be one weight per row of X; got shape "
                         f"{weight.shape}")
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],))
    estimator.n_features_in_ = X.shape[1]
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    ws = [None] * len(xs) if weight is None else weight.rechunk((X.chunks[0],)).to_delayed().ravel()
    return list(zip(xs, ys, ws))


def _check_rows(estimator, X):
    """Refuse X of no rows, with the local estimators' message."""
    if X.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of "
                         f"1 is required by {type(estimator).__name__}.")


def _distinct_labels(y):
    """The sorted distinct labels of one block, checked as the local estimators check y."""
    y = np.asarray(y)
    if len(y):
        check_classification_targets(y)
    return np.unique(y)


def label_classes(client, blocks):
    """The sorted distinct labels of all blocks (their union, computed on the workers)."""
    uniques = client.compute([dask.delayed(_distinct_labels)(y) for _, y, _ in blocks],
                             sync=True)
    return np.unique(np.concatenate(uniques))


def class_counts(client, blocks, classes):
    """The sample weight of each class (its number of rows without weights), summed on the
    workers."""
    def count(y, w):
        return np.bincount(np.searchsorted(classes, np.asarray(y)),
                           weights=None if w is None else np.asarray(w, dtype=np.float64),
                           minlength=len(classes))

    return np.sum(client.compute([dask.delayed(count)(y, w) for _, y, w in blocks], sync=True),
                  axis=0)


def map_rows(func, X, width, dtype):
    """``func`` applied to every row block of the dask collection X on the workers: a dask
    array of shape (n,) (``width`` None) or (n, width).  An empty block (a filter's, or
    chunks such as (50, 0, 50)) gives an empty result without calling ``func``, whose
    validation refuses zero rows."""
    tail = () if width is None else (width,)

    def apply(block):
        return np.empty((0,) + tail, dtype=dtype) if block.shape[0] == 0 else func(block)

    if isinstance(X, dd.DataFrame):     # blocks stay DataFrames: feature names are checked
        parts = X.to_delayed()
        lengths = X.map_partitions(len).compute()
        return da.concatenate([da.from_delayed(dask.delayed(apply)(part), (int(length),) + tail,
                                               dtype=dtype)
                               for part, length in zip(parts, lengths)])
    X = _as_dask(X, "X").rechunk({1: -1})
    if width is None:
        return X.map_blocks(apply, drop_axis=1, dtype=dtype)
    return X.map_blocks(apply, chunks=(X.chunks[0], (width,)), dtype=dtype)
