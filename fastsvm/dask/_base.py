"""What every fastsvm.dask estimator shares: the client, the global checks, prediction on
dask collections and the way back to the local estimator."""

import numpy as np
from distributed import get_client
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._packed import PackedData
from ..multiclass import labels_from_decision
from ._data import _is_dask, class_counts, label_classes, map_rows, row_blocks

CLIENT_CONSTRAINT = {"client": [None, HasMethods(["submit", "gather"])]}


class DaskMixin:
    """Mixed in before a local estimator class ``_local_class`` (whose parameters, plus
    ``client``, the Dask estimator takes)."""

    _local_class = None

    def _local_params(self):
        return {k: v for k, v in self.get_params().items() if k != "client"}

    def _blocks(self, X, y, sample_weight):
        """(client, row blocks, classes, local estimator the workers validate with).

        class_weight='balanced' becomes the dict n / (n_classes * count) of the
        counts of all blocks, so that every block weighs its rows as a fit on
        all rows would.
        """
        self._validate_params()
        self._check_parameters()
        client = self.client or get_client()
        blocks = row_blocks(self, X, y, sample_weight, len(client.scheduler_info()["workers"]))
        classes = label_classes(client, blocks)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; got "
                             f"1 class: {classes.tolist()[0]!r}")
        params = self._local_params()
        if isinstance(self.class_weight, str):
            counts = class_counts(client, blocks, classes)
            params["class_weight"] = dict(zip(classes.tolist(),
                                              (counts.sum() / (len(classes) * counts)).tolist()))
        return client, blocks, classes, self._local_class(**params)

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
        local = self.to_local()
        width = None if len(self.classes_) == 2 else len(self.classes_)
        return map_rows(local.decision_function, X, width, np.float64)

    def predict(self, X):
        """Predicted labels; a dask array computed on the workers for a dask collection."""
        if not _is_dask(X):
            return super().predict(X)
        classes = self.classes_
        return self.decision_function(X).map_blocks(
            lambda d: labels_from_decision(d, classes),
            drop_axis=None if len(classes) == 2 else 1, dtype=classes.dtype)


class Block:
    """One row block's validated training data, built on the worker that holds it with the
    local estimator's own validation (``_problem``): ``problem`` (None for a block without
    a row of positive weight), its packed rows, +-1 targets and weights, and the sums the
    client combines (rows, weight, weight per class)."""

    def __init__(self, local, X, y, weight, classes):
        self.problem = None
        self.n_samples = 0
        self.weight_sum = 0.0
        self.class_weight = np.zeros(len(classes))
        if not has_positive_weight(local, X, y, weight, classes):
            return
        problem = self.problem = local._problem(X, y, weight, classes=classes, partial=True)
        self.packed = PackedData.from_matrix(problem.X)
        self.targets = problem.targets
        self.weights = problem.weights
        self.n_samples = problem.n_samples
        self.weight_sum = problem.weight_sum
        self.class_weight = np.bincount(problem.y, weights=problem.weights,
                                        minlength=len(classes))


def block_facts(block):
    """(rows, weight, weight per class) of a :class:`Block`."""
    return block.n_samples, block.weight_sum, block.class_weight


def has_positive_weight(local, X, y, weight, classes):
    """Whether a block has a row of positive weight (sample weight times class weight);
    a block without one adds nothing, as rows of weight 0 add nothing locally."""
    if X.shape[0] == 0:
        return False
    sample = _check_sample_weight(weight, X, dtype=np.float64, ensure_non_negative=True)
    if local.class_weight is None:
        return bool(np.any(sample > 0))
    per_class = np.array([float(local.class_weight.get(c, 1.0)) for c in classes.tolist()])
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
