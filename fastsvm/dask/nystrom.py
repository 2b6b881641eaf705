r"""DaskNystromSVC: the Nystrom embedding kept per partition, the linear SVM solved there.

The linear SVM on the embedding is solved by the local solver's algorithm,
dual coordinate descent with shrinking (:func:`fastsvm.nystrom.solver.solve_dcd`,
LIBLINEAR's), with the same passes, the same shrinking and the same
certificate, the relative duality gap; only where the rows are visited
changes.  The dual variables alpha_i stay on the worker of their row.

* **A pass over all rows** (the first, and each one after a pass that met
  the tolerance of the projected gradients) travels: w = sum_i alpha_i y_i x_i
  (r + 1 numbers) and the pass's extreme projected gradients go from piece
  to piece, each piece a share of one partition's rows in a random order,
  the pieces of all partitions in a random order too (about one per
  ``MIN_PIECE_ROWS`` rows, at most ``MAX_PIECES``).
* **The passes over the rows that shrinking kept active**, usually a few
  percent, run on one worker: those rows' embeddings and alphas are moved
  there (at most ``GATHER_BYTES``; beyond, such passes travel too), passes
  run over all of them in one random order until one meets the tolerance or
  a gap check is due, and the new alphas go back to their partitions.
* **The duality gap** is summed over the partitions (their hinge losses at
  w and their sums of alpha) while the next passes run.

Why not a data-parallel method, measured on 6,000 generated rows (C = 1,
m = 200) in 4 partitions, where the local solver certifies a gap of 1e-3 in
43-45 passes:

* CoCoA+ (Ma et al., "Adding vs. averaging in distributed primal-dual
  optimization", ICML 2015), every partition improving its block of alpha at
  once on a damped subproblem: after 400 rounds still at a gap of 1.9e-3
  (adding, sigma' = 4, with 1, 5 or 20 local passes per round), as with
  averaging; the best combination of the 4 partitions' changes, a small
  quadratic programme solved each round, reached 1.2e-3.
* Sequential passes that visit whole partitions one after another, in a
  random order of the partitions and of each one's rows: 467 passes.  The
  order matters that much: pieces of 1,000, 300, 100 and 30 rows in a
  random order needed 150, 80, 37 and 29 passes without shrinking (28 for
  a fully random order, 245 for whole partitions).
* Pieces of at least 1,000 rows for the passes over all rows, and the passes
  over the active rows on one worker, as above: 39 passes in 44 tasks that
  travel (C = 32: 629 passes against 613 locally, in 65 tasks); on 60,000
  rows, 54 passes against 55 (C = 32: 611 against 1,037).
"""

import operator
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import dask.dataframe as dd
import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _options
from ..base import (TrainingProblem, check_finite_output, objectives_text, progress_bar,
                    random_seeds, regularization)
from ..kernels import _take
from ..nystrom import _kernels
from ..nystrom.embedding import (NystromMap, _dense_if_small, cholesky_factor,
                                 inverse_factor, leverage_candidates, leverage_draw,
                                 times_inverse_factor, uniform_landmarks)
from ..nystrom.estimator import NystromSVC, auto_components, choose_landmarks, trace_residual
from ..nystrom.solver import (DCD_GAP_CHECK_PASSES, DCD_PG_TOL_FACTOR, DCD_PG_TOL_START,
                              SolverResult, dcd_check_interval, embedded_sq_norms, hinge_sum)
from ._base import CLIENT_CONSTRAINT, Block, DaskMixin, check_columns, latest
from ._data import _is_dask, map_rows


def _rows(part, local):
    """The partition's training rows ``local`` (among its rows of positive weight) and their
    positions in its block as given."""
    return part.problem.take(local), part.problem.rows[local]


class _Embedded:
    """A partition's n_k x r embedding (``EMBED_DTYPE``), computed on its worker, with what
    the coordinate steps read: the +-1 targets of each model, the box U_i = C s_i and the
    diagonal ||x_i||^2 (the constant feature included); and the sums that give the
    kernel residual."""

    def __init__(self, part, nystrom_map, C, bias_feature):
        self.n_samples = part.n_samples
        self.bias_feature = bias_feature
        self.Phi = nystrom_map.transform(part.problem.X, np.dtype(_options.EMBED_DTYPE))
        check_finite_output(self.Phi, "embedding")
        self.targets = part.targets
        self.weights = part.weights
        self.upper = C * part.weights
        sq_norms = embedded_sq_norms(self.Phi)
        self.q_diag = np.maximum(sq_norms + bias_feature ** 2, np.finfo(np.float64).tiny)
        self.captured = float(sq_norms.sum())
        self.trace = float(part.problem.diagonal(np.arange(self.n_samples)).sum())
        self.column_sum = self.Phi.sum(axis=0, dtype=np.float64)

    def target(self, model):
        """The +-1 targets of ``model`` over the rows, kept for the latest model (a pass
        asks for them at each of its pieces)."""
        return latest(self, "_target", model, lambda: self.targets[model])


def _sums(embedded):
    return embedded.captured, embedded.trace, embedded.column_sum


#: A pass visits the active rows of all partitions in pieces of at least ``MIN_PIECE_ROWS``
#: rows, at most ``MAX_PIECES`` pieces in all, in a random order (see the module docstring).
MIN_PIECE_ROWS = 1000
MAX_PIECES = 64
#: Passes over shrunk active rows whose embedding takes at most this many bytes run on one
#: worker, the rows moved there (see ``_shrunk_passes``).
GATHER_BYTES = 2**28


@dataclass
class _Dual:
    """A partition's block of alpha for one binary model, and its rows in the current pass:
    ``order`` (its active rows in this pass's random order) and ``kept`` (those its
    pieces so far kept active for the next pass)."""

    alpha: np.ndarray
    order: np.ndarray
    kept: list


@dataclass
class _Pass:
    """What travels with a pass: w, the bounds of the projected gradients that shrink
    (those of the previous pass), their extremes so far in this pass, the rows visited
    so far and, per partition, the rows its pieces kept active."""

    w: np.ndarray
    pg_max_old: float
    pg_min_old: float
    kept: np.ndarray
    pg_max: float = -np.inf
    pg_min: float = np.inf
    visited: int = 0


def _visit(embedded, dual, travelling, model, k, seed, piece, pieces, reset):
    """Piece ``piece`` of ``pieces`` of partition ``k``'s pass: one
    :func:`~fastsvm.nystrom._kernels.dcd_epoch` over that share of its active rows, in
    the pass's random order (drawn from ``seed`` at piece 0, from all rows after a
    ``reset`` or at the first pass): (new :class:`_Dual`, new :class:`_Pass`).  The
    inputs are not modified, should Dask run the task again."""
    n = embedded.n_samples
    if piece == 0:
        active = (np.arange(n, dtype=np.int64) if dual is None or reset
                  else np.concatenate(dual.kept))
        dual = _Dual(np.zeros(n) if dual is None else dual.alpha,
                     np.random.default_rng(seed).permutation(active), [])
    alpha, w = dual.alpha.copy(), travelling.w.copy()
    rows = np.array_split(dual.order, pieces)[piece].copy()
    n_kept, pg_max, pg_min = _kernels.dcd_epoch(
        embedded.Phi, embedded.target(model), embedded.bias_feature, embedded.upper,
        embedded.q_diag, rows, len(rows), travelling.pg_max_old, travelling.pg_min_old, alpha, w)
    kept = travelling.kept.copy()
    kept[k] += n_kept
    return _Dual(alpha, dual.order, dual.kept + [rows[:n_kept]]), _Pass(
        w, travelling.pg_max_old, travelling.pg_min_old, kept, max(travelling.pg_max, pg_max),
        min(travelling.pg_min, pg_min), travelling.visited + len(rows))


@dataclass
class _ActiveRows:
    """A partition's rows kept active by its last pass: their embedding, model targets,
    box, diagonal and alpha, and their indices in the partition."""

    Phi: np.ndarray
    y: np.ndarray
    upper: np.ndarray
    q_diag: np.ndarray
    alpha: np.ndarray
    rows: np.ndarray


def _active_rows(embedded, dual, model):
    rows = np.concatenate(dual.kept)
    return _ActiveRows(embedded.Phi[rows], embedded.target(model)[rows], embedded.upper[rows],
                       embedded.q_diag[rows], dual.alpha[rows], rows)


@dataclass
class _Shrunk:
    """The result of :func:`_shrunk_passes`: per block, the new alpha of its active rows
    and its rows still active; w; the bounds of the projected gradients for the next
    pass; passes run, coordinate updates, and whether the last pass met ``pg_tol``."""

    alpha: list
    kept: list
    w: np.ndarray
    pg_max_old: float
    pg_min_old: float
    passes: int
    updates: int
    met: bool


def _shrunk_passes(bias_feature, w, pg_max_old, pg_min_old, pg_tol, seed, max_updates,
                   *blocks):
    """Passes of the local solver over the active rows of all partitions (the
    :class:`_ActiveRows` ``blocks``, moved to this worker), each in a random order of
    them all, until one meets ``pg_tol`` (then all rows become active again, a pass
    over the partitions), or the updates reach ``max_updates`` (a gap check is due, or
    the solver's budget is spent)."""
    Phi = np.concatenate([b.Phi for b in blocks])
    y = np.concatenate([b.y for b in blocks])
    upper = np.concatenate([b.upper for b in blocks])
    q_diag = np.concatenate([b.q_diag for b in blocks])
    alpha = np.concatenate([b.alpha for b in blocks])
    w = w.copy()
    rng = np.random.default_rng(seed)
    active = np.arange(len(y), dtype=np.int64)
    n_active, passes, updates, met = len(y), 0, 0, False
    while updates < max_updates:
        rng.shuffle(active[:n_active])
        updates += n_active
        n_active, pg_max, pg_min = _kernels.dcd_epoch(Phi, y, bias_feature, upper, q_diag, active,
                                                      n_active, pg_max_old, pg_min_old, alpha, w)
        passes += 1
        met = pg_max - pg_min <= pg_tol
        if met:
            break
        pg_max_old = pg_max if pg_max > 0 else np.inf
        pg_min_old = pg_min if pg_min < 0 else -np.inf
    still = np.zeros(len(y), dtype=bool)
    still[active[:n_active]] = True
    edges = np.cumsum([0] + [len(b.y) for b in blocks])
    return _Shrunk([alpha[a:b] for a, b in zip(edges[:-1], edges[1:])],
                   [block.rows[still[a:b]] for block, a, b in zip(blocks, edges[:-1], edges[1:])],
                   w, pg_max_old, pg_min_old, passes, updates, met)


def _apply_shrunk(dual, shrunk, block):
    """The partition's :class:`_Dual` with the alpha of its active rows from ``shrunk``
    (its ``block``-th block) and its rows still active."""
    alpha = dual.alpha.copy()
    rows = np.concatenate(dual.kept)
    alpha[rows] = shrunk.alpha[block]
    return _Dual(alpha, dual.order, [shrunk.kept[block]])


def _shrunk_summary(shrunk, held, k):
    """What the client needs of a :class:`_Shrunk` (rows still active per partition of
    ``k``, of which those ``held`` had blocks)."""
    active = np.zeros(k, dtype=np.int64)
    active[held] = [len(kept) for kept in shrunk.kept]
    return (shrunk.w, shrunk.pg_max_old, shrunk.pg_min_old, shrunk.passes, shrunk.updates,
            shrunk.met, active)


def _gap_terms(embedded, dual, model, w):
    """(sum_i s_i max(0, 1 - y_i <w, x_i>), sum_i alpha_i) over the partition's rows."""
    return (hinge_sum(embedded.Phi, embedded.target(model), embedded.weights, w,
                      embedded.bias_feature),
            0.0 if dual is None else float(dual.alpha.sum()))


def piece_counts(active):
    """Pieces per partition for a pass over ``active`` rows per partition: about one per
    ``MIN_PIECE_ROWS`` rows, at most ``MAX_PIECES`` in all, shared in proportion to the
    active rows, and one for a partition with a few."""
    total = int(active.sum())
    wanted = min(MAX_PIECES, max(1, total // MIN_PIECE_ROWS))
    return np.where(active > 0, np.maximum(1, np.round(wanted * active / max(total, 1))),
                    0).astype(int)


class _Travelling:
    """The client's side of :func:`solve_dcd_travelling` for one binary model: the futures
    of the partitions' :class:`_Dual`, w, and the shrinking state."""

    def __init__(self, client, embedded, sizes, model, r, bias_feature, rng):
        self.client, self.embedded, self.model = client, embedded, model
        self.sizes = np.asarray(sizes)
        self.bias_feature, self.rng = bias_feature, rng
        self.duals = [None] * len(embedded)
        self.w = np.zeros(r + 1)
        self.active = self.sizes.copy()         # rows each partition's next pass visits
        self.reset = True                       # the next pass visits all rows
        self.pg_max_old, self.pg_min_old = np.inf, -np.inf

    def gathers(self):
        """Whether the next passes run over the active rows moved to one worker: after a
        pass that shrank them to at most ``GATHER_BYTES`` of embedding."""
        total = int(self.active.sum())
        return (not self.reset and 0 < total < self.sizes.sum()
                and total * len(self.w) * 4 <= GATHER_BYTES)

    def travel(self):
        """Submit one pass over the partitions in pieces: (new dual futures, future of the
        final :class:`_Pass`)."""
        client, k = self.client, len(self.embedded)
        travelling = _Pass(self.w, self.pg_max_old, self.pg_min_old, np.zeros(k, dtype=np.int64))
        visited = list(self.duals)
        seeds = self.rng.integers(np.iinfo(np.int32).max, size=k)
        counts = piece_counts(self.active)
        done = np.zeros(k, dtype=int)
        for p in self.rng.permutation(np.repeat(np.arange(k), counts)):
            step = client.submit(_visit, self.embedded[p], visited[p], travelling, self.model, p,
                                 seeds[p], done[p], counts[p], self.reset, pure=False)
            done[p] += 1
            visited[p] = client.submit(operator.itemgetter(0), step)
            travelling = client.submit(operator.itemgetter(1), step)
        return visited, travelling

    def shrunk(self, pg_tol, max_updates):
        """Submit passes over the active rows gathered on one worker (:func:`_shrunk_passes`):
        (new dual futures, future of its summary)."""
        client = self.client
        held = [p for p in range(len(self.embedded)) if self.active[p] > 0]
        blocks = [client.submit(_active_rows, self.embedded[p], self.duals[p], self.model)
                  for p in held]
        shrunk = client.submit(_shrunk_passes, self.bias_feature, self.w, self.pg_max_old,
                               self.pg_min_old, pg_tol, self.rng.integers(np.iinfo(np.int32).max),
                               max_updates, *blocks, pure=False)
        duals = list(self.duals)
        for block, p in enumerate(held):
            duals[p] = client.submit(_apply_shrunk, self.duals[p], shrunk, block)
        return duals, client.submit(_shrunk_summary, shrunk, held, len(self.embedded))

    def gap_terms(self):
        """Futures of the partitions' :func:`_gap_terms` at the current w and alpha."""
        return [self.client.submit(_gap_terms, part, dual, self.model, self.w, pure=False)
                for part, dual in zip(self.embedded, self.duals)]

    def passed(self, met, pg_max, pg_min):
        """After a pass (or the last of several): shrink by its bounds, or all rows active
        again if it met the tolerance (as the local solver)."""
        self.reset = met
        if met:
            self.active, self.pg_max_old, self.pg_min_old = self.sizes.copy(), np.inf, -np.inf
        else:   # as LIBLINEAR: a bound that nothing crossed shrinks nothing next pass
            self.pg_max_old = pg_max if pg_max > 0 else np.inf
            self.pg_min_old = pg_min if pg_min < 0 else -np.inf


def solve_dcd_travelling(client, embedded, sizes, model, r, bias_feature, lam, weight_sum,
                         max_passes, tol, rng, progress=None):
    """:func:`~fastsvm.nystrom.solver.solve_dcd` for binary model ``model`` over the
    partitions ``embedded`` (of ``sizes`` rows; see the module docstring): the same
    shrinking, the same rule for when the gap is checked and the same result, a
    :class:`~fastsvm.nystrom.solver.SolverResult` holding the w of the smallest primal
    objective seen at the checks.  A check is computed by the partitions while the
    next passes run; if it meets ``tol``, they are dropped, and otherwise its gap sets
    the interval to the next check as locally, from then on
    (:func:`~fastsvm.nystrom.solver.dcd_check_interval`).  The work is bounded as
    locally: ``max_passes`` * n row visits.
    """
    state = _Travelling(client, embedded, sizes, model, r, bias_feature, rng)
    n = int(state.sizes.sum())
    result = SolverResult(state.w.copy(), [1.0])      # P(0) = (1/S) sum_i s_i = 1
    pg_tol = DCD_PG_TOL_START
    updates, terms, full_and_met = 0, None, False
    interval = DCD_GAP_CHECK_PASSES * n                 # updates from one check to the next
    budget = max_passes * n                             # row visits left

    def checked(terms, w):
        """Record the check of ``w`` from the partitions' ``terms``; True if converged."""
        hinge, alpha_sum = np.sum(client.gather(terms), axis=0)
        primal = 0.5 * lam * float(w @ w) + hinge / weight_sum
        if primal < result.objective[-1]:
            result.w = w.copy()
        best = min(primal, result.objective[-1])
        result.objective.append(best)
        result.gap.append((best - lam * (alpha_sum - 0.5 * float(w @ w))) / best)
        return tol is not None and result.gap[-1] <= tol

    while budget > 0:
        to_check = interval - updates if tol is not None else np.inf
        gathered = state.gathers()
        if gathered:
            duals, summary = state.shrunk(pg_tol, min(to_check, budget))
        else:
            duals, summary = state.travel()
        if terms is not None:
            result.converged = checked(terms, state.w)
            if result.converged:
                client.cancel(duals + [summary])
                return result
            if full_and_met:
                pg_tol /= DCD_PG_TOL_FACTOR
            interval = dcd_check_interval(n, result.gap, span, done, tol)
        state.duals = duals
        if gathered:
            state.w, pg_max, pg_min, passes, visited, met, state.active = summary.result()
        else:
            done = summary.result()
            state.w, pg_max, pg_min, passes, visited = (done.w, done.pg_max, done.pg_min, 1,
                                                        done.visited)
            met = pg_max - pg_min <= pg_tol
            state.active = done.kept
        result.epochs += passes
        updates += visited
        budget -= visited
        if progress is not None:
            progress.update(visited)
        full_and_met = met and visited == n and passes == 1
        terms = None
        if tol is not None and (full_and_met or updates >= interval):
            span, done, updates = updates, max_passes * n - budget, 0
            terms = state.gap_terms()
        state.passed(met, pg_max, pg_min)
    if terms is None:
        terms = state.gap_terms()
    result.converged = checked(terms, state.w)
    return result


class DaskNystromSVC(DaskMixin, NystromSVC):
    r"""NystromSVC trained on a Dask cluster: each partition is embedded and kept on its
    worker, and the linear SVM on the embedding is solved there.

    The same model as :class:`fastsvm.NystromSVC` up to its certificate:

    * the landmarks are the local ones: the same random draw picks the same
      rows among all partitions' rows of positive weight, in partition order
      (uniform, or ``landmarks='leverage'``, whose sketch and pool rows are
      gathered to the client, a few times m rows);
    * K_mm is factored once, on the client, and the map (the r kept
      landmarks and the r x r matrix P) is sent to the workers as a task
      result, so that Dask can rebuild it;
    * each partition's embedding is computed and kept on its worker;
    * the linear SVM is solved by the local dual coordinate descent, its
      passes travelling through the partitions while alpha stays with the
      rows (see :mod:`fastsvm.dask.nystrom`), to the same relative duality
      gap ``tol``: both models are certified within ``tol`` of the same
      optimum.

    Only ``solver='dcd'`` is offered (the stochastic solvers visit rows at
    random across all partitions), and multi-class problems are split
    one-vs-rest only (``multi_class='ovr'``, the default here): each model's
    passes travel through all partitions, which one-vs-one's k (k - 1) / 2
    models over a few rows each would multiply.  ``max_stages`` bounds the work (row
    visits), as locally.  ``n_jobs`` is not used (the cluster runs the partitions), and
    ``max_embedding_mb`` only bounds the landmarks ``n_components='auto'``
    may draw, as locally: each embedding stays in its worker's memory,
    which Dask manages.
    ``component_indices_`` are row positions in the whole input, as given.
    Kernels are those evaluated from the features.

    A partition lost with its worker is rebuilt by Dask from its inputs:
    the embedding, and each model's block of alpha from the rounds that
    made it, so the fit goes on to the same model.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The cluster to run on; None takes the current default client.
    **others
        Those of :class:`fastsvm.NystromSVC`.

    Attributes
    ----------
    Those of :class:`fastsvm.NystromSVC`; ``n_iter_`` counts passes.
    """

    _local_class = NystromSVC
    _parameter_constraints = {**NystromSVC._parameter_constraints,
                              "multi_class": [StrOptions({"ovr"})], **CLIENT_CONSTRAINT}

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_components="auto", landmarks="uniform", solver="dcd", eta0="auto", radius0=None,
                 omega=2.0, stage_steps=None, max_stages="auto", tol=1e-3, max_embedding_mb="auto",
                 fit_intercept=True, multi_class="ovr", class_weight=None, n_jobs=None,
                 random_state=None, verbose=0, client=None):
        super().__init__(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         n_components=n_components, landmarks=landmarks, solver=solver,
                         eta0=eta0, radius0=radius0, omega=omega, stage_steps=stage_steps,
                         max_stages=max_stages, tol=tol, max_embedding_mb=max_embedding_mb,
                         fit_intercept=fit_intercept, multi_class=multi_class,
                         class_weight=class_weight, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose)
        self.client = client

    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y) where they lie: dask arrays, DataFrames or Series (or NumPy /
        SciPy input, cut into row blocks).

        Returns
        -------
        self
        """
        with self._fitting():
            if self.solver != "dcd":
                raise ValueError(f"{type(self).__name__} solves by distributed dual coordinate "
                                 f"descent (solver='dcd'); solver={self.solver!r} is local only")
            started = time.perf_counter()
            partitions = self._partitions(X, y, sample_weight, Block)
            client, classes = partitions.client, partitions.classes
            kernel = self._global_kernel(partitions)
            n, n_models = partitions.n, partitions.n_models
            m = grow_to = self.n_components
            if m == "auto":
                m, grow_to = auto_components(n, self._embedding_budget())
            if m > n:
                warnings.warn(f"n_components={m} is larger than the {n} training rows (of "
                              f"nonzero weight): every row is a landmark, n_components_ <= {n}",
                              UserWarning)
                m = grow_to = n
            seed_landmarks, *seeds = random_seeds(self.random_state, 1 + n_models)
            rng = np.random.default_rng(seed_landmarks)
            drawn = {}                  # the rows of the latest draw and of the sample

            def factor(idx):
                drawn["idx"] = idx
                drawn["rows"], drawn["positions"] = self._gather_rows(partitions, idx)
                rows = _dense_if_small(drawn["rows"])
                return cholesky_factor(kernel(rows, rows))

            def residual(sample, idx, L):
                if "sample" not in drawn:
                    drawn["sample"] = _dense_if_small(self._gather_rows(partitions, sample)[0])
                landmarks = _take(drawn["rows"], np.searchsorted(drawn["idx"], idx))
                embedded = times_inverse_factor(
                    kernel(drawn["sample"], _dense_if_small(landmarks)), L)
                return trace_residual(float(np.einsum("ij,ij->", embedded, embedded)),
                                      float(kernel.diagonal(drawn["sample"]).sum()))

            info = {"multi_class": self.multi_class}        # 'ovr', as NystromSVC reports it
            _, kept, L, info["landmarks_drawn"] = choose_landmarks(
                n, m, grow_to, lambda m: self._landmark_indices(partitions, kernel, m, rng),
                factor, residual, rng)
            projection = inverse_factor(L)
            indices, components = drawn["positions"], _take(drawn["rows"], kept)
            nystrom_map = client.submit(NystromMap, kernel, _dense_if_small(components),
                                        projection, pure=False)
            info["time_landmarks_s"] = time.perf_counter() - started

            start = time.perf_counter()
            bias_feature = 1.0 if self.fit_intercept else 0.0
            sizes = [size for size in partitions.n_samples if size > 0]
            embedded = [client.submit(_Embedded, part, nystrom_map, self.C, bias_feature,
                                      pure=False)
                        for part, size in zip(partitions.parts, partitions.n_samples) if size > 0]
            sums = client.gather([client.submit(_sums, e) for e in embedded])
            partitions.parts.clear()       # the embeddings are all the solver needs
            r = projection.shape[1]
            info["time_embedding_s"] = time.perf_counter() - start
            captured, trace, column_sum = (sum(values) for values in zip(*sums))
            info.update(self._kernel_residual(captured, trace, column_sum, n))
            info["embedding_shape"] = [n, r]
            info["embedding_bytes"] = n * r * np.dtype(_options.EMBED_DTYPE).itemsize
            info["embedding_in_memory"] = True

            start = time.perf_counter()
            lam = regularization(self.C, partitions.weight_sum)
            max_passes = self._max_stages()
            with progress_bar(self.verbose, max_passes * n * n_models, "row",
                              type(self).__name__) as bar:
                def solve_one(item):
                    model, seed = item
                    return solve_dcd_travelling(client, embedded, sizes, model, r,
                                                bias_feature, lam, partitions.weight_sum,
                                                max_passes, self.tol,
                                                np.random.default_rng(seed), bar)

                with ThreadPoolExecutor(max_workers=n_models) as pool:
                    results = list(pool.map(solve_one, enumerate(seeds)))
            info["time_solver_s"] = time.perf_counter() - start
            info["time_fit_s"] = time.perf_counter() - started
            fitted = self._fitted(results, classes, kernel, indices[kept], components,
                                  projection, info)
            if self.verbose:
                print(f"{type(self).__name__}: embedding {n} x {r} on {len(embedded)} partitions "
                      f"in {info['time_embedding_s']:.2f} s, {fitted['n_iter_'].max()} "
                      f"passes in {info['time_solver_s']:.2f} s, "
                      f"{objectives_text([r.objective[-1] for r in results], 5)}")
            self._publish(fitted, partitions.class_weight)
        return self

    def _landmark_indices(self, partitions, kernel, m, rng):
        """The sorted indices, among all partitions' rows of positive weight in partition
        order, of the m landmarks: the rows :func:`~fastsvm.nystrom.embedding.sample_landmarks`
        draws locally from the same ``rng``."""
        n = partitions.n
        if self.landmarks == "uniform":
            return uniform_landmarks(n, m, rng)
        sketch, pool = leverage_candidates(n, m, rng)
        needed = np.unique(np.concatenate([sketch, pool]))
        rows, _ = self._gather_rows(partitions, needed)
        held = TrainingProblem(rows, np.zeros(len(needed), dtype=np.intp), partitions.classes,
                               np.ones(len(needed)), needed, kernel)
        chosen = leverage_draw(held, np.searchsorted(needed, sketch),
                               np.searchsorted(needed, pool), n, m, rng)
        return np.sort(pool[chosen])

    def _gather_rows(self, partitions, idx):
        """(rows, positions in the whole input) of the sorted indices ``idx`` among all
        partitions' rows of positive weight: only these rows travel to the client."""
        first = np.concatenate([[0], np.cumsum(partitions.n_samples)])
        offsets = np.concatenate([[0], np.cumsum(partitions.n_rows)])
        client, wanted = partitions.client, []
        for k, part in enumerate(partitions.parts):
            local = idx[(idx >= first[k]) & (idx < first[k + 1])] - first[k]
            if len(local):
                wanted.append((k, client.submit(_rows, part, local, pure=False)))
        pieces = client.gather([future for _, future in wanted])
        rows = [piece[0] for piece in pieces]
        positions = np.concatenate([piece[1] + offsets[k]
                                    for (k, _), piece in zip(wanted, pieces)])
        return (sp.vstack(rows, format="csr") if sp.issparse(rows[0])
                else np.concatenate(rows)), positions

    def fit_transform(self, X, y, sample_weight=None):
        """Fit on (X, y) and return the embedding of X (a dask array for a dask collection)."""
        return self.fit(X, y, sample_weight).transform(X)

    def transform(self, X):
        """The Nystrom embedding of X; a dask array computed on the workers for a dask
        collection."""
        if not _is_dask(X):
            return super().transform(X)
        check_is_fitted(self, "intercept_")
        check_columns(self, X)
        # the local transform keeps float32 input (a DataFrame's: all its columns float32)
        dtypes = list(X.dtypes) if isinstance(X, dd.DataFrame) else [getattr(X, "dtype", None)]
        single = all(dtype == np.float32 for dtype in dtypes)
        return map_rows(self.to_local().transform, X, self.n_components_,
                        np.float32 if single else np.float64)
