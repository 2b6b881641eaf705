"""Python driver of budgeted SGD: epochs, chunks, progress and the paper's instruments.

One :class:`BSGDState` holds the model of one binary problem, or the K
one-vs-rest models of a multi-class problem that share one budget of support
vectors; :func:`run_pass` runs SGD steps over a given order of examples in
chunks of ``fastsvm._options.CHUNK_STEPS`` compiled steps, advancing a
progress bar between chunks.  Compiled code lives in
:mod:`fastsvm.bsgd._kernels` (binary) and :mod:`fastsvm.bsgd._shared_kernels`
(shared budget).
"""

from dataclasses import dataclass, field

import numpy as np

from .. import _options
from .._blas import serial_numpy_blas
from .._importance import heavy_threshold
from ..base import check_dense_vectors, regularization, step_weights
from .._cycles import ticks_per_second
from . import _kernels as K
from ._shared_kernels import sgd_steps_shared

#: Dense copies of a support-vector store that a fit holds at once, for
#: ``_options.DENSE_VECTORS_MAX_BYTES``: the store, the ``support_vectors_`` published from
#: it, and their transpose, which the exact offsets (and predictions) of sparse rows read
#: (:meth:`fastsvm.kernels.Kernel.expansion`; dense rows need none, counted alike): 2,000
#: vectors of 131,072 features, 2 GB each, peaked at 6.3 GB.
STORE_COPIES = 3

#: Steps per compiled call on dense rows of at least DOT_BLOCK_MIN_FEATURES features, whose
#: dot products with the support vectors one BLAS product gives (:func:`block_dots`).
#: Fit time against a pass over the support vectors per step (8,000 rows of
#: ``make_classification``, budgets 100 and 500, medians of 5 fits): 5 features 1.03-1.18x,
#: 10 1.05-1.07x, 16 0.71-0.96x, 20 0.73-0.89x, 40 0.76-0.95x, 100 0.49-0.75x, 300
#: 0.48-0.65x; 6,000 x 300 at a budget of 2,000 (dense_wide) 4.77 s against 0.88 s.
DOT_BLOCK = 64
DOT_BLOCK_MIN_FEATURES = 16
NO_DOTS = np.empty((0, 0))


@dataclass
class BSGDState:
    """Model and counters of one binary problem (see :mod:`fastsvm.bsgd._kernels`), or of
    K one-vs-rest models on one shared budget (:mod:`fastsvm.bsgd._shared_kernels`).

    ``beta`` stores lambda G(t) alpha: alpha = beta / (lambda G(t)).
    """

    svt: np.ndarray                 # (n_features, capacity), feature-major support vectors
    sv_sq: np.ndarray               # (capacity,) squared norms
    beta: np.ndarray                # (capacity,) scaled coefficients; (capacity, K) if shared
    sv_idx: np.ndarray              # (capacity,) training row of each vector, -1 if merged
    bias: np.ndarray                # (1,) scaled offset lambda G(t) b; (K,) if shared
    n_sv: int = 0
    t: int = 0                      # SGD steps taken
    horizon: int = 0                # T of the linear-decay steps, 0 for Pegasos steps
    stats: np.ndarray = field(default_factory=lambda: np.zeros(K.N_STATS, dtype=np.int64))
    timers: np.ndarray = field(default_factory=lambda: np.zeros(K.N_TIMERS, dtype=np.int64))
    diag_sums: np.ndarray = field(default_factory=lambda: np.zeros(K.N_DIAG))

    @classmethod
    def empty(cls, n_features, size, shared_models=0):
        """A model without support vectors, room for ``size`` of them (plus the one a step
        adds before budget maintenance); ``n_features=0`` for a kernel matrix (only
        ``sv_idx`` identifies a support vector).  ``shared_models`` = K > 0 makes the K
        one-vs-rest models of a shared budget, 0 one binary model."""
        beta = np.zeros((0, shared_models)) if shared_models else np.zeros(0)
        state = cls(np.zeros((n_features, 0)), np.zeros(0), beta, np.zeros(0, dtype=np.int64),
                    np.zeros(max(shared_models, 1)))
        state.reserve(size)
        return state

    @property
    def shared(self):
        """Whether this state holds the K models of a shared budget."""
        return self.beta.ndim == 2

    @property
    def n_models(self):
        """How many one-vs-rest models share this state's budget (1 for a binary model)."""
        return self.beta.shape[1] if self.shared else 1

    def reserve(self, size):
        """Make room for ``size`` support vectors (plus one), keeping the current ones.

        Room grows with need, min(budget, support vectors + rows of the next
        pass that are not yet vectors), so a budget far above the data costs
        nothing.
        """
        capacity = size + 1
        if self.sv_sq.shape[0] >= capacity:
            return
        check_dense_vectors(capacity, self.svt.shape[0], copies=STORE_COPIES)
        n = self.n_sv
        svt = np.zeros((self.svt.shape[0], capacity))
        svt[:, :n] = self.svt[:, :n]
        sv_sq, beta = np.zeros(capacity), np.zeros((capacity,) + self.beta.shape[1:])
        sv_sq[:n], beta[:n] = self.sv_sq[:n], self.beta[:n]
        sv_idx = np.full(capacity, -1, dtype=np.int64)
        sv_idx[:n] = self.sv_idx[:n]
        self.svt, self.sv_sq, self.beta, self.sv_idx = svt, sv_sq, beta, sv_idx

    def forget_rows(self):
        """Mark every support vector as no row of the data the next steps run on (``sv_idx``
        -1): a row index names a row of one batch (``partial_fit``) or one Dask partition,
        and the same index in the next would otherwise take the steps of a different row
        into this vector (see "Budget maintenance" in :mod:`fastsvm.bsgd._kernels`)."""
        self.sv_idx[:] = -1

    def to_pegasos_steps(self):
        """Continue with Pegasos steps (``horizon`` 0) from the model of linear-decay steps,
        alpha unchanged: beta = lambda G(t) alpha scales by t / G_T(t).  ``partial_fit``
        after ``fit`` needs it: past its horizon T the linear decay's factor turns
        negative (the steps then unlearn) and at 2T + 1 its G is 0."""
        if self.horizon > 0 and self.t > 0:
            factor = K.step_mass(self.t, 0) / K.step_mass(self.t, self.horizon)
            self.beta[: self.n_sv] *= factor
            self.bias *= factor
        self.horizon = 0

    def rescale_lambda(self, lam_old, lam_new):
        """Keep alpha and b fixed when lambda changes (partial_fit): beta and bias scale
        with lambda."""
        self.beta[: self.n_sv] *= lam_new / lam_old
        self.bias *= lam_new / lam_old

    def alpha(self, lam):
        """Coefficients alpha_j = beta_j / (lambda G(t)) of the current support vectors
        (rows of shape (K,) for a shared budget)."""
        if self.t == 0:
            return np.zeros((0,) + self.beta.shape[1:])
        return self.beta[: self.n_sv] / (lam * K.step_mass(self.t, self.horizon))

    def offset(self, lam):
        """The offset b = bias / (lambda G(t)) trained with the steps (shape (1,), (K,) for a
        shared budget; zeros where no step trained one)."""
        if self.t == 0:
            return np.zeros_like(self.bias)
        return self.bias / (lam * K.step_mass(self.t, self.horizon))

    def support_vectors(self):
        return self.svt[:, : self.n_sv].T.copy()


@dataclass
class BSGDStream:
    """Everything training continues from across ``partial_fit`` calls.

    ``lam`` = 1 / (C S_seen) and the step weights s_i n_seen / S_seen follow
    the rows and weight seen so far; the kernel (gamma resolved on the first
    batch) and the budget (``budget='auto'`` resolved on it, with the
    ``nearest_kernel`` statistic that resolved it) stay fixed.
    """

    states: list
    kernel: object
    rng: np.random.RandomState
    intercept: np.ndarray
    lam: float = None
    n_seen: int = 0
    weight_seen: float = 0.0
    wall_s: float = 0.0
    budget: int = None
    nearest_kernel: float = None
    params: dict = None             # the estimator's parameters that shape the stream

    def see(self, weights, C):
        """Count a batch of sample weights in; rescale the states for the new lambda."""
        self.n_seen += len(weights)
        self.weight_seen += float(weights.sum())
        lam = regularization(C, self.weight_seen)
        if self.lam is not None:
            for state in self.states:
                state.rescale_lambda(self.lam, lam)
        self.lam = lam

    def step_weights(self, weights):
        """s_i n_seen / S_seen: exactly 1 for unit weights."""
        return step_weights(weights, self.n_seen, self.weight_seen)


def entering_rows(order, sv_rows, n_rows):
    """How many support vectors a pass over the rows ``order`` (indices below ``n_rows``)
    can add: its distinct rows that are not yet vectors of their own (``sv_rows``; merged
    vectors are -1, a Dask partition's vectors of other partitions' rows -2 - g), since
    such a row takes its steps in its own vector.  By a mask over the rows, in
    O(n_rows + len(order)): ``np.setdiff1d`` sorts both, which took 14 % of a
    one-vs-one fit on 26 classes (325 pairs, 5 passes each)."""
    new = np.zeros(n_rows, dtype=bool)
    new[order] = True
    new[sv_rows[(sv_rows >= 0) & (sv_rows < n_rows)]] = False
    return int(np.count_nonzero(new))


def block_dots(X, rows, svt, n_sv, buffer):
    """The dot products of the dense rows X[rows] with the support vectors (the first n_sv
    columns of ``svt``) and with each other, for the compiled steps over ``rows`` (see
    "Storage" in :mod:`fastsvm.bsgd._kernels`): E of shape (b, n_sv + 2 b) for b rows,
    E[r, j] = <x_r, sv_j> for j < n_sv, E[r, n_sv + q] = <x_r, x_q>, and b columns free
    for the vectors that merges create during the steps.

    E is written into the start of ``buffer`` (float64, at least b (n_sv + 2 b)
    entries), which a pass reuses from block to block: a new E of 0.3-1 MB per block
    (budgets of 500-2,000) came from fresh pages, whose faults made the product of
    64 rows of 28 features with 2,000 support vectors take 935 us instead of 134 us."""
    b = len(rows)
    block = np.asarray(X[rows], dtype=np.float64)
    E = buffer[:b * (n_sv + 2 * b)].reshape(b, n_sv + 2 * b)
    np.matmul(block, svt[:, :n_sv], out=E[:, :n_sv])
    np.matmul(block, block.T, out=E[:, n_sv:n_sv + b])
    return E


def run_pass(state, packed, y, weight, order, lam, kernel, budget, maintenance, method, diag,
             tables, progress=None, bias_scale=0.0, heavy_from=None):
    """Run one SGD step per index in ``order`` on ``state``, in compiled chunks.

    ``y`` holds +-1 floats (the class index of every row, int64, for a shared
    budget), ``weight`` the step weight of every row (see
    :mod:`fastsvm.bsgd._kernels`; rows above ``heavy_from``, by default
    :func:`~fastsvm._importance.heavy_threshold` of ``order``'s rows, take the
    importance-aware step of its "Heavy rows"); ``order``
    int64 indices into the rows of ``packed`` (validated by the caller: the kernel does
    not bounds-check).
    ``kernel`` is a :class:`fastsvm.kernels.Kernel`; for a kernel matrix
    ('precomputed', callable) ``packed`` holds that matrix.
    ``progress`` is a tqdm-like object advanced by the number of steps done.  Dense rows
    of at least ``DOT_BLOCK_MIN_FEATURES`` features go to the compiled steps in blocks of
    ``DOT_BLOCK`` with their dot products (:func:`block_dots`).
    ``bias_scale`` is c^2 of the trained offset (see :mod:`fastsvm.bsgd._kernels`; 0: the
    paper's objective, without one).
    """
    table_h, table_wd = tables
    if heavy_from is None:
        heavy_from = heavy_threshold(weight[order])
    state.reserve(min(budget, state.n_sv + entering_rows(order, state.sv_idx[:state.n_sv],
                                                         packed.n_samples)))
    step = _options.CHUNK_STEPS
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    blocked = (not packed.is_sparse and not kernel.on_gram
               and packed.n_features >= DOT_BLOCK_MIN_FEATURES)
    # block_dots' E for every block (n_sv is at most the store's capacity)
    buffer = np.empty(DOT_BLOCK * (state.svt.shape[1] + 2 * DOT_BLOCK) if blocked else 0)
    # the largest product: DOT_BLOCK rows against the store's capacity
    with serial_numpy_blas(DOT_BLOCK * packed.n_features * state.svt.shape[1] if blocked else 0):
        for start in range(0, order.shape[0], step):
            chunk = order[start:start + step]
            for first in range(0, chunk.shape[0], DOT_BLOCK if blocked else step):
                rows = chunk[first:first + DOT_BLOCK] if blocked else chunk
                dots = (block_dots(packed.dense, rows, state.svt, state.n_sv, buffer) if blocked
                        else NO_DOTS)
                if state.shared:
                    state.n_sv = sgd_steps_shared(
                        *packed.arrays, packed.sq_norms, y, weight, heavy_from, rows, dots,
                        state.t, lam, kernel.code, gamma, kernel.degree, kernel.coef0, budget,
                        state.horizon, state.svt, state.sv_sq, state.beta, state.sv_idx,
                        state.n_sv, state.bias, bias_scale, maintenance, method, table_wd,
                        state.stats, state.timers)
                else:
                    state.n_sv = K.sgd_steps(
                        *packed.arrays, packed.sq_norms, y, weight, heavy_from, rows, dots,
                        state.t, lam, kernel.code, gamma, kernel.degree, kernel.coef0, budget,
                        state.horizon, state.svt, state.sv_sq, state.beta, state.sv_idx,
                        state.n_sv, state.bias, bias_scale, maintenance, method, diag, table_h,
                        table_wd, state.stats, state.timers, state.diag_sums)
                state.t += rows.shape[0]
            if progress is not None:
                progress.update(chunk.shape[0])


def mean_hinge(f, y, weight):
    """sum_i s_i max(0, 1 - y_i f_i) / sum_i s_i."""
    return float(np.dot(weight, np.maximum(0.0, 1.0 - y * f)) / weight.sum())


def hinge_offset(f, y, weight=None):
    """Exact minimiser b of sum_i s_i max(0, 1 - y_i (f_i + b)) for fixed decision values f.

    The sum is convex and piecewise linear in b with breakpoints
    b_i = y_i - f_i (a positive sample's term falls to 0 at its breakpoint, a
    negative one's rises from it), so its slope is -S_pos plus the weight of
    the breakpoints below b, with S_pos the positive samples' weight s_i
    (default 1).  b is the breakpoint where the cumulative weight of the
    sorted breakpoints first reaches S_pos; where it reaches S_pos exactly
    (always, for unit weights: the n_pos-th breakpoint), every b up to the
    next breakpoint is optimal and the midpoint of that interval is returned.
    """
    positive = y > 0
    if not positive.any() or positive.all():
        raise ValueError("the offset needs both classes among the samples")
    breaks = y - f
    if weight is None:
        n_pos = int(np.count_nonzero(positive))
        breaks = np.partition(breaks, (n_pos - 1, n_pos))
        return 0.5 * (breaks[n_pos - 1] + breaks[n_pos])
    order = np.argsort(breaks, kind="stable")
    breaks, cumulative = breaks[order], np.cumsum(weight[order])
    target = float(weight[positive].sum())
    k = min(int(np.searchsorted(cumulative, target * (1.0 - 1e-12))), len(breaks) - 1)
    if abs(cumulative[k] - target) <= 1e-12 * target and k + 1 < len(breaks):
        return 0.5 * (breaks[k] + breaks[k + 1])
    return float(breaks[k])


def summarize(states, diag):
    """The paper's instruments, summed over binary problems, as a JSON-ready dict.

    Times are seconds measured with the CPU cycle counter inside compiled code:
    ``time_sgd_s`` is all compiled work, ``time_maintenance_s`` its budget
    maintenance part, split into ``time_section_a_s`` (computing h / wd of all
    candidate pairs: Fig. 3, section A) and ``time_section_b_s`` (the rest).
    With ``diag``: the fraction of merge events where GSS and each lookup
    made the same decision (same partner, or one of equal degradation) and,
    per method, the total squared weight degradation its decisions incur
    divided by that of GSS-precise (Table 3's factors).
    """
    stats = sum(s.stats for s in states)
    timers = sum(s.timers for s in states)
    tps = ticks_per_second() or np.inf
    steps = int(stats[K.ST_STEPS])
    merges = int(stats[K.ST_MERGES])
    info = {
        "steps": steps,
        "support_vectors_added": int(stats[K.ST_ADDED]),
        "maintenance_events": int(stats[K.ST_MAINTENANCE]),
        "merges": merges,
        "merge_frequency": merges / steps if steps else 0.0,
        "time_sgd_s": float(timers[K.TM_TOTAL] / tps),
        "time_maintenance_s": float(timers[K.TM_MAINTENANCE] / tps),
        "time_section_a_s": float(timers[K.TM_SECTION_A] / tps),
        "time_section_b_s": float((timers[K.TM_MAINTENANCE] - timers[K.TM_SECTION_A]) / tps),
    }
    info["steps_per_second"] = steps / info["time_sgd_s"] if info["time_sgd_s"] > 0 else 0.0
    info["us_per_merge"] = 1e6 * info["time_maintenance_s"] / merges if merges else 0.0
    if diag:
        events = int(stats[K.ST_DIAG_EVENTS])
        sums = sum(s.diag_sums for s in states)
        optimum = sums[K.DG_GSS_PRECISE]
        info["diag_events"] = events
        info["equal_decisions_gss_lookup_wd"] = float(stats[K.ST_DIAG_EQUAL_GSS_WD] / events) if events else 1.0
        info["equal_decisions_gss_lookup_h"] = float(stats[K.ST_DIAG_EQUAL_GSS_H] / events) if events else 1.0
        for key, idx in (("gss", K.DG_GSS), ("lookup_h", K.DG_LOOKUP_H), ("lookup_wd", K.DG_LOOKUP_WD)):
            info[f"wd_factor_{key}"] = float(sums[idx] / optimum) if optimum > 0 else 1.0
    return info
