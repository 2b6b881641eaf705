"""Binary problems of a multi-class fit, and class scores from their decision values.

Two classes give one binary problem (+1 for ``classes[1]``, -1 for
``classes[0]``).  For k > 2 classes:

* one-vs-rest (``'ovr'``, every estimator): k problems, problem c
  separating class c (+1) from all others (-1) on every row; the class of
  the largest decision value wins (the sign, for two classes);
* one-vs-one (``'ovo'``, BudgetSVC's, NystromSVC's, MarginSGDSVC's and
  kernel PegasosSVC's default up to 30 classes, as SVC's): k (k - 1) / 2
  problems, pair (i, j), i < j, in the order (0, 1), (0, 2), ..., (k - 2,
  k - 1), separating class j (+1) from class i (-1) on the rows of the two
  classes only.
  :func:`ovo_scores` turns their decision values into SVC's per-class
  scores, votes plus summed confidences; the class with most votes wins.

The fan-out over the problems is ``BaseSVC._fan_out``.  The problems' vectors
over all n rows (targets, a pair's step weights) are made when a solver takes
its problem, not all at once: k (k - 1) / 2 pairs of n-vectors took 16 n bytes
a pair (30 classes, 150,000 rows: 1.0 GB beyond the embedding).
"""

from collections.abc import Sequence
from functools import partial

import numpy as np

MULTI_CLASS = ("ovo", "ovr")
#: ``multi_class='auto'`` (the default of BudgetSVC, NystromSVC, MarginSGDSVC and kernel
#: PegasosSVC) is 'ovo' up to AUTO_OVO_MAX_CLASSES classes and 'ovr' above: the k (k - 1) / 2
#: pairs' models and their per-pair overhead outgrow the k one-vs-rest ones.  At 100 classes
#: (2,000 rows) BudgetSVC's dense ``dual_coef_`` (pairs x all their vectors, each vector in one
#: pair) took 5.4 GB and 20 s against one-vs-rest's 1.8 s, NystromSVC's 4,950 pairs 2.6 s
#: against 0.36 s; at 200 classes (20,000 rows) NystromSVC took 34 s.
AUTO_OVO_MAX_CLASSES = 30


def resolve_multi_class(multi_class, n_classes):
    """``multi_class`` with 'auto' resolved for ``n_classes`` classes (see
    AUTO_OVO_MAX_CLASSES)."""
    if multi_class != "auto":
        return multi_class
    return "ovo" if n_classes <= AUTO_OVO_MAX_CLASSES else "ovr"


def n_binary_models(n_classes, multi_class="ovr"):
    """Binary problems of a fit on ``n_classes`` classes."""
    if n_classes == 2:
        return 1
    if resolve_multi_class(multi_class, n_classes) == "ovo":
        return n_classes * (n_classes - 1) // 2
    return n_classes


class Problems(Sequence):
    """A sequence whose item k is ``make(k)``, made on each access and not kept (picklable
    where ``make`` is, as the module's own, which Dask partitions hold)."""

    def __init__(self, length, make):
        self._length, self._make = length, make

    def __len__(self):
        return self._length

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self._length))]
        if not -self._length <= k < self._length:
            raise IndexError(f"problem {k} of {self._length}")
        return self._make(k % self._length)


def _class_targets(y_encoded, first, k):
    """+1 on the rows of class first + k, -1 on the others (float64)."""
    return np.where(y_encoded == first + k, 1.0, -1.0)


def binary_targets(y_encoded, n_classes):
    """The +-1 float64 target vectors, one per one-vs-rest problem (one for two classes:
    +1 on class 1), as a :class:`Problems` sequence."""
    if n_classes == 2:
        return Problems(1, partial(_class_targets, y_encoded, 1))
    return Problems(n_classes, partial(_class_targets, y_encoded, 0))


def ovo_pairs(n_classes):
    """The one-vs-one pairs (i, j), i < j, in model order."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def ovo_problems(y_encoded, n_classes):
    """Per one-vs-one pair (i, j), as a :class:`Problems` sequence: (rows, targets), the
    sorted rows of classes i and j and a float64 vector over all rows, +1 on class j's, -1
    on class i's and 0 elsewhere."""
    pairs = ovo_pairs(n_classes)
    return Problems(len(pairs), partial(_pair_problem, y_encoded, pairs))


def _pair_problem(y_encoded, pairs, k):
    """(rows, targets) of the one-vs-one pair ``pairs[k]`` (see :func:`ovo_problems`)."""
    i, j = pairs[k]
    rows = np.flatnonzero((y_encoded == i) | (y_encoded == j))
    targets = np.zeros(len(y_encoded))
    targets[rows] = np.where(y_encoded[rows] == j, 1.0, -1.0)
    return rows, targets


def ovo_partners(n_classes):
    """partners[c, t]: the model index of the one-vs-one pair of class c with its t-th
    other class (the classes other than c in increasing order), shape (n_classes,
    n_classes - 1): the k - 1 pairs in which a row of class c has a target."""
    index = {pair: k for k, pair in enumerate(ovo_pairs(n_classes))}
    return np.array([[index[min(c, o), max(c, o)] for o in range(n_classes) if o != c]
                     for c in range(n_classes)], dtype=np.int64).reshape(n_classes, -1)


class TargetRows:
    """The targets of every binary problem (see the module docstring) at any rows:
    ``targets[:, rows]`` is a float64 array (n_models, len(rows)), +1, -1, or 0 on the
    rows outside a one-vs-one pair, made on demand, as an (n_models, n) array would
    give it, without holding the n_models x n values (30 classes' 435 pairs: 3.5 kB a
    row)."""

    def __init__(self, y_encoded, n_classes, multi_class="ovr"):
        self.y = y_encoded
        self.n_classes = n_classes
        self.ovo = n_classes > 2 and resolve_multi_class(multi_class, n_classes) == "ovo"
        self._pairs = np.array(ovo_pairs(n_classes)) if self.ovo else None

    def __len__(self):
        return n_binary_models(self.n_classes, "ovo" if self.ovo else "ovr")

    def __getitem__(self, index):
        everything, rows = index
        if everything != slice(None):
            raise IndexError("targets are indexed as targets[:, rows]")
        y = self.y[rows]
        if self.n_classes == 2:
            return np.where(y == 1, 1.0, -1.0)[None]
        if not self.ovo:
            return np.where(y == np.arange(self.n_classes)[:, None], 1.0, -1.0)
        return (y == self._pairs[:, 1:]).astype(np.float64) - (y == self._pairs[:, :1])


def ovo_scores(decision, n_classes):
    """Per-class scores (n, n_classes) from one-vs-one decision values (n, n_pairs), as
    SVC's ``decision_function_shape='ovr'``: the votes of the pairs (a positive value
    votes for j, else for i) plus the sum of each class's confidences (+f for j, -f for
    i) mapped into (-1/3, 1/3) by s / (3 (|s| + 1)), which breaks ties between equal
    votes and never outweighs a vote.  A sum beyond 1e300 (decision values near float64's
    largest, whose sums overflow) maps to its limit +-1/3."""
    votes = np.zeros((decision.shape[0], n_classes))
    confidence = np.zeros((decision.shape[0], n_classes))
    with np.errstate(over="ignore"):
        for k, (i, j) in enumerate(ovo_pairs(n_classes)):
            positive = decision[:, k] > 0
            votes[:, j] += positive
            votes[:, i] += ~positive
            confidence[:, j] += decision[:, k]
            confidence[:, i] -= decision[:, k]
    with np.errstate(over="ignore", invalid="ignore"):
        tie_break = np.where(np.abs(confidence) < 1e300,
                             confidence / (3.0 * (np.abs(confidence) + 1.0)),
                             np.sign(confidence) / 3.0)
    return votes + tie_break


def labels_from_decision(decision, classes):
    """Predicted labels from decision values of shape (n,) or per-class scores
    (n, n_classes).

    A binary decision of exactly 0 (a row far from every support vector of a model
    without an offset, for example) predicts ``classes[0]``, as a one-vs-one pair's tie
    votes for its first class (:func:`ovo_scores`, as SVC's scores of
    ``decision_function_shape='ovr'``) and as scikit-learn's linear classifiers predict.
    SVC's ``predict`` (LIBSVM's) sends a binary tie to ``classes[1]``; its models have an
    offset, so exact ties arise there rarely."""
    if decision.ndim == 1:
        return classes[(decision > 0).astype(np.intp)]
    return classes[np.argmax(decision, axis=1)]
