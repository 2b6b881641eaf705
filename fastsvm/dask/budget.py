"""DaskBudgetSVC: budgeted SGD whose small model travels through the partitions."""

import copy
import time

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._importance import heavy_threshold
from ..base import regularization, step_weights
from ..bsgd.estimator import (MAINTENANCE, BudgetSVC, _dual_coef, check_steps, check_stores,
                              nearest_kernel, stack_support_vectors)
from ..bsgd.solver import run_pass
from ..merge import METHODS
from ..merge.table import load_tables
from ._base import CLIENT_CONSTRAINT, Block, DaskMixin, latest, partition_holders
from ._offset import Breakpoints, distributed_offsets


#: Rows per piece of a partition in a pass (see ``DaskBudgetSVC._travel``).
PIECE_ROWS = 1000
#: At most this many consecutive pieces of a pass, all of partitions held by one worker, are
#: one task (see ``DaskBudgetSVC._travel``).
RUN_PIECES = 16


class _Partition(Block):
    """A :class:`~fastsvm.dask._base.Block` with its class indices, and what a pass's
    pieces read: the random order of its rows, their targets and step weights."""

    def __init__(self, local, X, y, weight, classes):
        super().__init__(local, X, y, weight, classes)
        if self.problem is not None:
            self.labels = self.problem.y.astype(np.int64)

    def piece(self, seed, piece, pieces):
        """Piece ``piece`` of ``pieces`` of the random order of the rows for ``seed`` (the
        pieces of ``np.array_split``), the order kept while its pieces are visited."""
        order = latest(self, "_order", seed, lambda: np.random.RandomState(seed)
                       .permutation(self.n_samples).astype(np.int64))
        size, extra = divmod(len(order), pieces)
        start = piece * size + min(piece, extra)
        return order[start:start + size + (piece < extra)]

    def pass_inputs(self, model, shared, totals):
        """(targets, step weights) of the rows for ``model`` (its +-1 targets, or for a
        shared budget the class indices), where ``totals`` = (n, S) of all partitions make
        the step weights s_i n / S; kept for the latest model."""
        return latest(self, "_inputs", (None if shared else model, totals), lambda: (
            self.labels if shared else self.targets[model], step_weights(self.weights, *totals)))


def _local_rows(sv_idx, first, n):
    """Support vectors' global row numbers (``first`` + the row's index in its partition,
    ``first`` the rows of the partitions before it) as the indices of the partition of
    rows ``first`` .. ``first + n - 1``, in place: its own rows' indices, -2 - g for
    another partition's row g (no row of this one), -1 (no row: merged) kept."""
    own = (sv_idx >= first) & (sv_idx < first + n)
    other = (sv_idx >= 0) & ~own
    sv_idx[own] -= first
    sv_idx[other] = -2 - sv_idx[other]


def _global_rows(sv_idx, first):
    """The inverse of :func:`_local_rows`, in place."""
    own, other = sv_idx >= 0, sv_idx <= -2
    sv_idx[own] += first
    sv_idx[other] = -2 - sv_idx[other]


def _passes(state, model, visits, lam, kernel, params, totals, *parts):
    """SGD steps over consecutive pieces of a pass, on a copy of ``state`` (the input stays
    valid should Dask run the task again).  Each visit (at, seed, piece, pieces, first) is
    piece ``piece`` of ``pieces`` of a random order (from ``seed``) of the rows of
    ``parts[at]``; ``totals`` = (n, S) of all partitions make the step weights s_i n / S.

    The travelling model knows its vectors' rows by global row number, ``first`` + the
    index in the partition (``first``: the rows of the partitions before it), so that
    a row whose vector is still its own takes its steps there, in this partition's
    pieces of every epoch, as in :class:`fastsvm.BudgetSVC` (see "A row's own vector")."""
    state = copy.deepcopy(state)
    budget, maintenance, method, diagnostics, bias_scale, heavy_from = params
    for at, seed, piece, pieces, first in visits:
        part = parts[at]
        if part.n_samples == 0:
            continue
        _local_rows(state.sv_idx[:state.n_sv], first, part.n_samples)
        y, weight = part.pass_inputs(model, state.shared, totals)
        run_pass(state, part.packed, y, weight, part.piece(seed, piece, pieces), lam, kernel,
                 budget, maintenance, method, diagnostics, load_tables(),
                 bias_scale=bias_scale, heavy_from=heavy_from)
        _global_rows(state.sv_idx[:state.n_sv], first)
    return state


def worker_runs(visits, holders, longest):
    """``visits`` (partition, piece) cut into runs of consecutive visits, at most ``longest``
    each, whose partitions one worker holds (``holders[p]``: partition p's worker, None
    where unknown: a run of its own)."""
    runs = []
    for p, k in visits:
        if (runs and len(runs[-1]) < longest and holders[p] is not None
                and holders[runs[-1][-1][0]] == holders[p]):
            runs[-1].append((p, k))
        else:
            runs.append([(p, k)])
    return runs


def _nearest_kernel(part, kernel):
    return None if part.n_samples == 0 else nearest_kernel(kernel, part.problem.X)


def _breakpoints(part, n_models, support_vectors, dual_coef, kernel):
    if part.n_samples == 0:
        return Breakpoints(np.zeros((0, n_models)), [np.zeros(0)] * n_models, np.zeros(0))
    f = kernel.expansion(part.problem.X, support_vectors, dual_coef.T)
    return Breakpoints(f, part.targets, part.weights)


class DaskBudgetSVC(DaskMixin, BudgetSVC):
    r"""BudgetSVC trained on a Dask cluster: the model travels, the data stays.

    Each epoch visits the partitions in a random order, and each partition's
    rows in a random order of their own: one task per partition takes the
    model (at most ``budget`` support vectors), runs BudgetSVC's SGD steps
    over the rows its worker holds, and hands the model on (in the manner of
    dask-ml's ``Incremental``).  Step sizes, weights, lambda, the
    linear-decay horizon and the weight above which a row's step is
    importance-aware (from the blocks' medians) are those of a fit on all rows;
    only the visiting
    order differs from BudgetSVC's single permutation, so the model is not
    the same but its accuracy is (see the tests).  Separate one-vs-rest
    budgets (``shared_budget=False``, and 'auto' above 30 classes or with the
    linear kernel, as in BudgetSVC) travel as independent chains of tasks,
    concurrently.  gamma='scale' is resolved from the moments of all blocks,
    and ``budget='auto'``'s test for spread data on the largest partition;
    the offset is the exact hinge minimiser of :class:`fastsvm.BudgetSVC`,
    found without gathering a row (:mod:`fastsvm.dask._offset`).

    The model knows the rows of its vectors by global row number (the
    partitions' rows in order), so a row whose vector is still its own takes
    its steps there in every piece and epoch, as in BudgetSVC (see "A row's
    own vector" there; forgetting them at every piece, the model filled its
    budget with copies, and with ``maintenance='remove'`` lost the 5-class
    set of ``benchmarks/_generated.py``: 60.95 % against the local 80.10 %,
    now 80.40 %).  ``support_`` is -1 for every support vector: the numbers
    count the rows of positive weight, not the rows as given.  Kernels are
    those evaluated from the features ('rbf', 'linear', 'poly', 'sigmoid'); a
    kernel matrix does not split into row blocks.  ``partial_fit`` is not
    offered.  Multi-class problems are split one-vs-rest only
    (``multi_class='ovr'``, the default here): each model travels through all
    partitions, which one-vs-one's k (k - 1) / 2 models over a few rows each
    would multiply.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The cluster to run on; None takes the current default client.
    **others
        Those of :class:`fastsvm.BudgetSVC` (``n_jobs`` is not used).
    """

    _local_class = BudgetSVC
    _parameter_constraints = {**BudgetSVC._parameter_constraints,
                              "multi_class": [StrOptions({"ovr"})], **CLIENT_CONSTRAINT}

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, budget="auto",
                 epochs=5, maintenance="merge", merge_method="lookup-wd",
                 learning_rate="linear-decay", multi_class="ovr", shared_budget="auto",
                 fit_intercept=True, intercept_scaling=0.25, class_weight=None,
                 diagnostics=False, n_jobs=None, random_state=None, verbose=0, client=None):
        super().__init__(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         budget=budget, epochs=epochs, maintenance=maintenance,
                         merge_method=merge_method, learning_rate=learning_rate,
                         multi_class=multi_class, shared_budget=shared_budget,
                         fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                         class_weight=class_weight, diagnostics=diagnostics, n_jobs=n_jobs,
                         random_state=random_state, verbose=verbose)
        self.client = client

    @property
    def partial_fit(self):
        raise AttributeError("DaskBudgetSVC has no partial_fit: its fit already streams the "
                             "partitions; use BudgetSVC.partial_fit on batches you hold")

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
            n, weight_sum, n_models = partitions.n, partitions.weight_sum, partitions.n_models
            check_steps(self.epochs, n)
            kernel = self._global_kernel(partitions)
            stream = self._new_stream(kernel, self.n_features_in_, n_models)
            if self.budget == "auto":       # on the largest partition's rows, where they lie
                largest = parts[int(np.argmax(partitions.n_samples))]
                stream.nearest_kernel = client.submit(_nearest_kernel, largest, kernel).result()
            stream.budget = self._auto_budget(len(classes), self.n_features_in_,
                                              stream.nearest_kernel, kernel)
            stream.n_seen, stream.weight_seen = n, weight_sum
            stream.lam = regularization(self.C, weight_sum)
            if self.learning_rate == "linear-decay":
                for state in stream.states:
                    state.horizon = self.epochs * n
            median = step_weights(np.array([partitions.median_weight]), n, weight_sum)
            self._travel(client, parts, stream, partitions.n_samples, (n, weight_sum),
                         heavy_threshold(median))
            dual_coef = _dual_coef([stream])
            support_vectors = stack_support_vectors(stream.states, self.n_features_in_)
            if self.fit_intercept:
                points = [client.submit(_breakpoints, part, n_models, support_vectors,
                                        dual_coef, kernel) for part in parts]
                stream.intercept[:] = distributed_offsets(client, points, n_models)
            support = np.full(len(support_vectors), -1, dtype=np.int64)
            self._publish(self._assemble([stream], classes, dual_coef, support, support_vectors,
                                         started), partitions.class_weight)
        return self

    def _travel(self, client, parts, stream, sizes, totals, heavy_from):
        """``epochs`` passes: each model (one for a shared budget) travels through the
        partitions; the chains of separate models run concurrently.

        A pass visits each partition's rows in a random order of its own, cut
        into pieces of about ``PIECE_ROWS`` rows, and the pieces of all
        partitions in a random order: partitions that are not random samples
        of the data (a file sorted by class or time, cut into blocks) are
        then interleaved as a global permutation would mix them.  Visiting
        whole partitions one after another lost 0.5-0.7 points on ijcnn1.

        Consecutive pieces of partitions that one worker holds are one task, up to
        ``RUN_PIECES`` of them (:func:`worker_runs`): the same steps in the same order,
        so the same model, without a scheduler round trip per piece.  On one worker
        process a 1,000-row task had cost about 10 ms beyond its steps.

        ``totals`` = (n, S) of all blocks make the step weights; a row whose step weight
        is above ``heavy_from`` (from :attr:`Partitions.median_weight`) takes the
        importance-aware step of :mod:`fastsvm._importance`, as in BudgetSVC.
        """
        params = (stream.budget, MAINTENANCE[self.maintenance], METHODS[self.merge_method],
                  self.diagnostics, self._bias_scale(), heavy_from)
        n = int(np.sum(sizes))
        check_stores(stream.states, params[0], {id(state): n for state in stream.states},
                     self.n_features_in_)
        pieces = [max(1, -(-size // PIECE_ROWS)) for size in sizes]
        firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        visits = np.array([(p, k) for p, count in enumerate(pieces) for k in range(count)])
        holders = partition_holders(client, parts)
        chains = []
        for model, state in enumerate(stream.states):
            rng = np.random.RandomState(stream.rng.randint(np.iinfo(np.int32).max))
            future = state
            for _ in range(self.epochs):
                seeds = rng.randint(np.iinfo(np.int32).max, size=len(parts))
                for run in worker_runs(visits[rng.permutation(len(visits))].tolist(), holders,
                                       RUN_PIECES):
                    held = list(dict.fromkeys(p for p, _ in run))   # its partitions, once
                    steps = [(held.index(p), int(seeds[p]), k, pieces[p], int(firsts[p]))
                             for p, k in run]
                    future = client.submit(_passes, future, model, steps, stream.lam,
                                           stream.kernel, params, totals,
                                           *(parts[p] for p in held), pure=False)
            chains.append(future)
        stream.states = client.gather(chains)
