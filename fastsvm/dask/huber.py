"""DaskHuberSVC: HuberSVC's solvers with the loss and gradient summed on the workers."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import check_dense_vectors, regularization
from ..bounds.estimator import COEF, HuberSVC
from ..bounds.solver import HuberEvaluator, huber_descent
from ._base import CLIENT_CONSTRAINT, Block, DaskMixin


class _Partition(Block):
    """A :class:`~fastsvm.dask._base.Block` and the state of the margin bounds of each
    binary model (created at the model's first evaluation).

    The state only decides which rows' margins are computed, never the sums
    returned, so a partition rebuilt from its inputs after a worker was lost
    (Dask recomputes lost results) gives the same sums.  A copy sent to
    another worker (work stealing, replication) leaves the state behind and
    starts afresh too: the worker may be serialising the partition while a
    task of another binary model re-sorts that model's lists, and a copy
    of the lists half re-sorted would give wrong sums.
    """

    def __init__(self, local, X, y, weight, classes):
        super().__init__(local, X, y, weight, classes)
        self.h = local.h
        self.margin_bounds = local.margin_bounds
        self.evaluators = {}

    def __getstate__(self):
        return {**vars(self), "evaluators": {}}

    def evaluator(self, model):
        if model not in self.evaluators:
            self.evaluators[model] = HuberEvaluator(self.packed, self.targets[model],
                                                    self.weights, self.h, self.margin_bounds)
        return self.evaluators[model]


def _evaluate(part, model, it, w, b):
    if part.n_samples == 0:
        return 0.0, np.zeros_like(w), 0.0, 0
    grad = np.empty_like(w)
    loss, grad_b, examined = part.evaluator(model).evaluate(it, w, b, grad)
    return loss, grad, grad_b, examined


def _full(part, model, w, b):
    if part.n_samples == 0:
        return 0.0, np.zeros_like(w), 0.0
    grad = np.empty_like(w)
    loss, grad_b = part.evaluator(model).full(w, b, grad)
    return loss, grad, grad_b


def _column_moments(part, model):
    if part.n_samples == 0:
        return 0.0, 0.0
    return part.evaluator(model).column_moments()


def _dual_sums(part, model, w, b):
    if part.n_samples == 0:
        return 0.0, np.zeros(2), np.zeros(2), np.zeros((2, len(w)))
    return part.evaluator(model).dual_sums(w, b)


def _n_sorts(part, model):
    return part.evaluators[model].n_sorts if model in part.evaluators else 0


class _DaskEvaluator:
    """:class:`~fastsvm.bounds.solver.HuberEvaluator`'s interface over the partitions:
    each sum is the sum, in partition order, of the partitions' sums."""

    def __init__(self, client, parts, model):
        self.client, self.parts, self.model = client, parts, model

    def _sum(self, func, *args):
        results = self.client.gather([self.client.submit(func, part, self.model, *args,
                                                         pure=False) for part in self.parts])
        return [sum(values[k] for values in results) for k in range(len(results[0]))]

    def evaluate(self, it, w, b, grad):
        loss, grad[:], grad_b, examined = self._sum(_evaluate, it, w, b)
        return loss, grad_b, int(examined)

    def full(self, w, b, grad):
        loss, grad[:], grad_b = self._sum(_full, w, b)
        return loss, grad_b

    def dual_sums(self, w, b):
        return tuple(self._sum(_dual_sums, w, b))

    def column_moments(self):
        return tuple(self._sum(_column_moments))

    def n_sorts(self):
        return int(sum(self.client.gather([self.client.submit(_n_sorts, part, self.model,
                                                              pure=False)
                                           for part in self.parts])))


class DaskHuberSVC(DaskMixin, HuberSVC):
    r"""HuberSVC trained on a Dask cluster, the data staying in its partitions.

    The same objective, solvers and stopping rules as
    :class:`fastsvm.HuberSVC`: at every evaluation the client sends (w, b) to
    the workers, each partition returns its sums of the loss, of
    l'(m_i) y_i x_i and of l'(m_i) y_i, computed with the margin bounds of its
    own rows (its own sorted lists, re-sorted by the rule of Sec. 3 for its
    own size), and the client adds them up and takes the step; the duality
    gap's sums are added up alike.  The model is
    the local one up to the order of summation: 1e-14 relative in the tests,
    at a step size that descends smoothly.  With ``solver='gd'`` the paper's
    eta0 = 100 makes the
    objective oscillate, which amplifies rounding into another path (as
    switching ``margin_bounds`` does locally), and the stopping rule, on the
    objective's relative change, can then stop elsewhere: on a generated
    800-row set the local fit stopped 1e-4 above the optimum and this one
    3 % above; ``training_info_['duality_gap']`` tells.  ``training_info_['examined_fraction']`` is the share of
    margins computed per iteration, summed over the partitions.

    Multi-class problems run their one-vs-rest descents concurrently, each
    sending its own tasks.  A partition lost with its worker is rebuilt by
    Dask from its inputs; its bounds then start afresh, which changes which
    margins are computed, not the sums.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The cluster to run on; None takes the current default client
        (``distributed.get_client()``).
    **others
        Those of :class:`fastsvm.HuberSVC`; ``n_jobs`` is not used (the
        cluster runs the partitions).

    Attributes
    ----------
    Those of :class:`fastsvm.HuberSVC`.
    """

    _local_class = HuberSVC
    _parameter_constraints = {**HuberSVC._parameter_constraints, **CLIENT_CONSTRAINT}

    def __init__(self, C=1.0, kernel="linear", h=0.5, solver="lbfgs", tol=None, max_iter=20000,
                 eta0=100.0, fit_intercept=True, class_weight=None, margin_bounds=True,
                 n_jobs=None, verbose=0, client=None):
        super().__init__(C=C, kernel=kernel, h=h, solver=solver, tol=tol, max_iter=max_iter,
                         eta0=eta0, fit_intercept=fit_intercept, class_weight=class_weight,
                         margin_bounds=margin_bounds, n_jobs=n_jobs, verbose=verbose)
        self.client = client

    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y) where they lie: dask arrays, DataFrames or Series (or NumPy /
        SciPy input, cut into row blocks).

        Returns
        -------
        self
        """
        with self._fitting():
            started = time.perf_counter()
            partitions = self._partitions(X, y, sample_weight, _Partition)
            client, parts, classes = partitions.client, partitions.parts, partitions.classes
            lam = regularization(self.C, partitions.weight_sum)
            weight_sum, n_models = partitions.weight_sum, partitions.n_models
            check_dense_vectors(n_models, self.n_features_in_, what=COEF)

            def solve_one(model):
                evaluator = _DaskEvaluator(client, parts, model)
                result = huber_descent(evaluator, self.solver, self.n_features_in_, lam, self.h,
                                       weight_sum, self.fit_intercept, self.eta0, self._tol(),
                                       self.max_iter)
                result.n_sorts = evaluator.n_sorts()
                return result

            with ThreadPoolExecutor(max_workers=n_models) as pool:
                results = list(pool.map(solve_one, range(n_models)))
            self._publish(self._fitted(results, classes, lam, partitions.n, started),
                          partitions.class_weight)
        return self
