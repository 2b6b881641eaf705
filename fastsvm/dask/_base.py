"""What every fastsvm.dask estimator shares: the client, the global checks, prediction on
dask collections and the way back to the local estimator."""

from dataclasses import dataclass

import dask
import dask.dataframe as dd
import numpy as np
import scipy.sparse as sp
from distributed import get_client
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import _check_feature_names, _check_sample_weight, check_is_fitted

from .._packed import PackedData
from ..base import check_class_totals, check_kernel_range, dict_class_weight
from ..kernels import Kernel, uses_gamma
from ..multiclass import labels_from_decision
from ._data import _is_dask, class_counts, label_classes, map_rows, row_blocks

CLIENT_CONSTRAINT = {"client": [None, HasMethods(["submit", "gather"])]}


def partition_holders(client, parts):
    """The worker holding each partition (a future), as the scheduler knows it now: the
    first of its holders' addresses in sorted order, None where it has none (or where
    ``client``, anything with ``submit`` and ``gather``, cannot tell).  Tasks are grouped
    by it; Dask still moves a partition that has moved since."""
    if not hasattr(client, "who_has"):
        return [None] * len(parts)
    held = client.who_has(parts)
    return [min(held.get(part.key, ()), default=None) for part in parts]


class DaskMixin:
    """Mixed in before a local estimator class ``_local_class`` (whose parameters, plus
    ``client``, the Dask estimator takes)."""

    _local_class = None

    def __sklearn_clone__(self):
        """A clone shares the client (a live connection, which ``copy.deepcopy`` cannot
        copy): so GridSearchCV and the other meta-estimators work with ``client=``."""
        params = {k: clone(v, safe=False) for k, v in self._local_params().items()}
        return type(self)(client=self.client, **params)

    def __getstate__(self):
        """Pickled without its client (a live connection): the unpickled estimator uses the
        default client, or one given by ``set_params(client=...)``."""
        return {**super().__getstate__(), "client": None}

    def _client(self):
        """``client``, else the default client; a clear error where there is none."""
        if self.client is not None:
            return self.client
        try:
            return get_client()
        except ValueError as err:       # distributed's "No global client found ..."
            raise ValueError(
                f"{type(self).__name__} found no Dask client: pass client=..., or start a "
                "distributed.Client in this process first.  A client does not travel with a "
                "pickled estimator, so copies sent to other processes (GridSearchCV(n_jobs=2) "
                "and other joblib process workers) have none: run those with n_jobs=1, as the "
                "cluster already runs the partitions in parallel") from err

    def _local_params(self):
        return {k: v for k, v in self.get_params().items() if k != "client"}

    def _partitions(self, X, y, sample_weight, partition_class):
        """Validate the input and build one ``partition_class`` (a :class:`Block`) per row
        block on the worker that holds it: returns :class:`Partitions`.

        class_weight='balanced' becomes the dict S / (n_classes * S_c) of the
        sample weights of all blocks (S_c of class c; counts without weights), so
        that every block weighs its rows as a fit on all rows would.  gamma='scale' is resolved as on all rows, from the
        moments of all blocks (the blocks validate with a placeholder gamma
        too small to overflow anything).
        """
        self._validate_params()
        self._check_parameters()
        if callable(self.kernel) or self.kernel == "precomputed":
            raise ValueError(f"{type(self).__name__} needs a kernel evaluated from the "
                             "features: a kernel matrix does not split into row blocks")
        client = self._client()
        blocks = row_blocks(self, X, y, sample_weight, len(client.scheduler_info()["workers"]))
        classes = label_classes(client, blocks)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; got "
                             f"1 class: {classes.tolist()[0]!r}")
        params = self._local_params()
        if isinstance(self.class_weight, str):
            counts = class_counts(client, blocks, classes)
            check_class_totals(counts, classes)
            params["class_weight"] = dict(zip(classes.tolist(),
                                              (counts.sum() / (len(classes) * counts)).tolist()))
        if params.get("gamma") == "scale":
            params["gamma"] = np.finfo(np.float64).tiny
        local = self._local_class(**params)
        parts = client.compute([dask.delayed(partition_class)(local, Xk, yk, wk, classes)
                                for Xk, yk, wk in blocks])
        facts = client.gather([client.submit(block_facts, part) for part in parts])
        result = Partitions(client, parts, classes, *(list(column) for column in zip(*facts)),
                            class_weight=(np.ones(len(classes)) if local.class_weight is None
                                          else dict_class_weight(local.class_weight, classes)))
        check_weights(result.weight_sum, sum(result.class_totals), classes)
        return result

    def _global_kernel(self, partitions):
        """The kernel with gamma='scale' resolved as on all rows, 1 / (n_features X.var()),
        checked for overflow on the largest row norm of all blocks."""
        gamma = self.gamma
        if gamma == "scale":
            entries, total, squares = sum(partitions.moments)
            var = squares / entries - (total / entries) ** 2
            gamma = 1.0 / (self.n_features_in_ * var) if var > 0 else 1.0
        kernel = Kernel(self.kernel, float(gamma) if uses_gamma(self.kernel) else None,
                        int(self.degree), float(self.coef0))
        check_kernel_range(kernel, max(partitions.max_sq_norms))
        return kernel

    def to_local(self):
        """The fitted model as the local estimator (for ``save_model`` and the CLI)."""
        check_is_fitted(self, "intercept_")
        local = self._local_class(**self._local_params())
        for name, value in vars(self).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(local, name, value)
        return local

    def decision_function(self, X):
        """Decision values; a dask array computed on the workers for a dask collection."""
        if not _is_dask(X):
            return super().decision_function(X)
        check_is_fitted(self, "intercept_")
        check_columns(self, X)
        local = self.to_local()
        width = None if len(self.classes_) == 2 else len(self.classes_)
        return map_rows(local.decision_function, X, width, np.float64)

    def predict(self, X):
        """Predicted labels; a dask array computed on the workers for a dask collection."""
        if not _is_dask(X):
            return super().predict(X)
        check_is_fitted(self, "intercept_")
        classes = self.classes_
        return self.decision_function(X).map_blocks(
            lambda d: labels_from_decision(d, classes),
            drop_axis=None if len(classes) == 2 else 1, dtype=classes.dtype)


def check_columns(estimator, X):
    """The feature names and count of the dask collection X against the fitted
    ``estimator``'s, on the client as scikit-learn checks them locally: on the workers the
    warnings stayed in their logs and the errors named the local class."""
    if isinstance(X, dd.DataFrame):
        _check_feature_names(estimator, X._meta, reset=False)
        n_features = len(X.columns)
    else:
        _check_feature_names(estimator, np.empty((0, 0)), reset=False)
        n_features = X.shape[1] if X.ndim == 2 else None    # else the workers' message
    if n_features is not None and n_features != estimator.n_features_in_:
        raise ValueError(f"X has {n_features} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")


class Block:
    """One row block's validated training data, built on the worker that holds it with the
    local estimator's own validation (``_problem``): ``problem`` (None for a block without
    a row of positive weight), its packed rows, +-1 targets and weights, and what the
    client combines (:func:`block_facts`)."""

    def __init__(self, local, X, y, weight, classes):
        self.problem = None
        self.n_rows = X.shape[0]                # as given, rows of weight 0 included
        self.n_samples = 0
        self.weight_sum = 0.0
        self.class_total = np.zeros(len(classes))
        self.moments = np.zeros(3)              # entries, sum, sum of squares of X
        self.max_sq_norm = 0.0
        self.median_weight = 0.0                # of the rows of positive weight
        if not has_positive_weight(local, X, y, weight, classes):
            return
        problem = self.problem = local._problem(X, y, weight, classes=classes, partial=True)
        self.packed = PackedData.from_matrix(problem.X)
        self.targets = problem.targets
        self.weights = problem.weights
        self.n_samples = problem.n_samples
        self.weight_sum = problem.weight_sum
        self.class_total = np.bincount(problem.y, weights=problem.weights,
                                       minlength=len(classes))
        values = problem.X.data if sp.issparse(problem.X) else problem.X
        self.moments = np.array([problem.X.shape[0] * problem.X.shape[1],
                                 float(np.sum(values, dtype=np.float64)),
                                 float(np.sum(np.square(values, dtype=np.float64)))])
        self.max_sq_norm = float(self.packed.sq_norms.max())
        self.median_weight = float(np.median(problem.weights))


def latest(holder, name, key, make):
    """``make()``, kept in ``holder``'s attribute ``name`` for the latest ``key``.

    A chain of tasks asks a partition for the same inputs at each of its pieces (its
    pass's random order, its model's +-1 targets over all rows): making them again took
    several milliseconds of every 1,000-row piece of a 500,000-row partition.  The
    (key, value) pair is read once, since a worker's other threads (other models'
    chains) may replace it meanwhile.  Callers must not modify the value."""
    kept = getattr(holder, name, None)
    if kept is None or kept[0] != key:
        kept = (key, make())
        setattr(holder, name, kept)
    return kept[1]


def block_facts(block):
    """What the client combines of a :class:`Block`, in the order of :class:`Partitions`."""
    return (block.n_rows, block.n_samples, block.weight_sum, block.class_total, block.moments,
            block.max_sq_norm, block.median_weight)


@dataclass
class Partitions:
    """The futures of a fit's partitions (on their workers), their facts per block
    (``class_totals``: the weight of each class in the block) and ``class_weight``, the
    weight of each class (the estimator's ``class_weight_``)."""

    client: object
    parts: list
    classes: np.ndarray
    n_rows: list
    n_samples: list
    weight_sums: list
    class_totals: list
    moments: list
    max_sq_norms: list
    median_weights: list
    class_weight: np.ndarray

    @property
    def n(self):
        """Rows of positive weight in all blocks."""
        return sum(self.n_samples)

    @property
    def weight_sum(self):
        return float(sum(self.weight_sums))

    @property
    def median_weight(self):
        """The median of the blocks' median weights, each block counted for its rows of
        positive weight: the median weight of all rows where the blocks are alike, and
        one of the blocks' medians where they are not (blocks sorted by class).  What
        :mod:`fastsvm._importance`'s heavy rows are measured against."""
        counts = np.asarray(self.n_samples, dtype=np.float64)
        kept = counts > 0
        medians, counts = np.asarray(self.median_weights)[kept], counts[kept]
        order = np.argsort(medians)
        cumulative = np.cumsum(counts[order])
        return float(medians[order][np.searchsorted(cumulative, cumulative[-1] / 2)])

    @property
    def n_models(self):
        return 1 if len(self.classes) == 2 else len(self.classes)


def has_positive_weight(local, X, y, weight, classes):
    """Whether a block has a row of positive weight (sample weight times class weight);
    a block without one adds nothing, as rows of weight 0 add nothing locally."""
    if X.shape[0] == 0:
        return False
    if weight is not None and np.shape(weight) == (X.shape[0],) and not np.any(weight):
        return False    # scikit-learn's check refuses all-zero weights, here only this block's
    sample = _check_sample_weight(weight, X, dtype=np.float64, ensure_non_negative=True)
    if local.class_weight is None:
        return bool(np.any(sample > 0))
    per_class = dict_class_weight(local.class_weight, classes)
    labels = np.minimum(np.searchsorted(classes, np.asarray(y)), len(classes) - 1)
    return bool(np.any(sample * per_class[labels] > 0))


def check_weights(weight_sum, per_class, classes):
    """The global checks of the weights that a single block cannot make."""
    if not np.isfinite(weight_sum):
        raise ValueError("the sample weights (times class_weight) sum to infinity; scale them "
                         "down")
    if weight_sum == 0:
        raise ValueError("all samples have zero weight (sample_weight times class_weight)")
    empty = classes[per_class == 0]
    if len(empty):
        raise ValueError(f"every sample of class {empty.tolist()[0]!r} has weight 0 "
                         "(sample_weight times class_weight): give them positive weights or "
                         "remove the class from y")
