"""Python drivers of the margin-bound solvers: Huber gradient descent and Pegasos.

Compiled code lives in :mod:`fastsvm.bounds._kernels`.  The cost model of the
re-sort rule (paper eqs. 3-4, ignoring constant factors as the paper does),
for n points with s*d stored entries each:

* gradient descent: SortTime = s d n + n log2 n + d, EvalTime = s d n + d;
* Pegasos (Alg. 3 refreshes the stored margins without sorting):
  SortTime = s d n + d, EvalTime = k s d + d for a batch of k;
* LossTime = s d (one point), SortPeriod = c SortTime / EvalTime and
  SortCost = SortTime / LossTime, with c = ``fastsvm._options.RESORT_C``.
"""

import time
from dataclasses import dataclass

import numpy as np

from .. import _options
from . import _kernels as K


def resort_schedule(packed, eval_points, sort=True):
    """(SortPeriod, SortCost) of eqs. (3)-(4) for evaluations of ``eval_points`` points."""
    n, d = packed.n_samples, packed.n_features
    point = max(1.0, packed.density * d)
    sort_time = point * n + (n * np.log2(max(n, 2)) if sort else 0.0) + d
    eval_time = point * eval_points + d
    return _options.RESORT_C * sort_time / eval_time, sort_time / point


@dataclass
class GDResult:
    """Outcome of :func:`solve_huber_gd` for one binary problem."""

    w: np.ndarray
    b: float
    objective: list            # objective (1) at each iterate evaluated
    examined: list             # margins computed at each iteration
    seconds: list              # wall time since the start, after each evaluation
    step_size: float           # final step size
    converged: bool
    n_sorts: int = 0
    relative_change: float = float("nan")  # |F_t - F_{t-1}| / |F_{t-1}| at the stop
    gradient_norm: float = float("nan")    # ||grad F|| at the returned iterate

    @property
    def n_iter(self):
        return len(self.objective)


class SortedMargins:
    """The state of Algorithm 1 for the two label lists (see :mod:`fastsvm.bounds._kernels`).

    Holds a copy of the data in sorted order (positive labels first, each list
    sorted by its margin at the reference model (w', b')), so Algorithm 2
    reads consecutive rows; the Boundary position and largest norm of each
    list; and either all prefix sums (while n x d doubles fit in
    ``_options.PREFIX_SUMS_MAX_BYTES``) or only Sum_Boundary (Sec. 3's
    variant for high-dimensional sparse data).
    """

    def __init__(self, packed, y, weight):
        self.packed = packed
        self.weight = weight
        positive, negative = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        self.lists = (positive, negative)
        self.list_start = np.array([0, len(positive), len(y)], dtype=np.int64)
        self.y_sorted = np.concatenate([y[positive], y[negative]])
        self.weight_sorted = np.empty(len(y))
        self.radius = np.array([np.sqrt(packed.sq_norms[idx].max(initial=0.0))
                                for idx in self.lists])
        n, d = len(y), packed.n_features
        full = 8 * n * d <= _options.PREFIX_SUMS_MAX_BYTES
        self.prefix = np.empty((n if full else 0, d))
        self.prefix_weight = np.empty(n if full else 0)
        self.boundary_sum = np.zeros((2, d))
        self.boundary_weight = np.zeros(2)
        self.sorted = None
        self.u = np.empty(n)
        self.boundary = np.zeros(2, dtype=np.int64)
        self.w_ref = np.zeros(d)
        self.b_ref = 0.0
        self.walked = np.empty(d)

    def sort(self, w, b, margins):
        """Algorithm 1 from the margins y_i (<w, x_i> + b) of every point."""
        order = np.empty(len(margins), dtype=np.int64)
        for L, idx in enumerate(self.lists):
            start, stop = self.list_start[L], self.list_start[L + 1]
            order[start:stop] = idx[np.argsort(margins[idx], kind="stable")]
            self.u[start:stop] = margins[order[start:stop]]
            self.boundary[L] = np.searchsorted(self.u[start:stop], 1.0, side="left")
        self.sorted = self.packed.take(order)
        self.weight_sorted[:] = self.weight[order]
        K.sorted_sums(*self.sorted.arrays, self.y_sorted, self.weight_sorted, self.list_start,
                      self.boundary, self.prefix, self.prefix_weight, self.boundary_sum,
                      self.boundary_weight)
        self.w_ref[:] = w
        self.b_ref = b

    def evaluate(self, w, b, h, grad):
        """Algorithm 2 (Huber, offset, both lists): (loss sum, l'y sum, margins computed)."""
        w_dist = float(np.linalg.norm(w - self.w_ref))
        return K.bounded_evaluation(*self.sorted.arrays, self.y_sorted, self.weight_sorted, w, b,
                                    h, self.u, self.list_start, self.boundary, self.radius,
                                    self.prefix, self.prefix_weight, self.boundary_sum,
                                    self.boundary_weight, self.b_ref, w_dist, grad, self.walked)


def huber_objective(loss_sum, w, lam, weight_sum):
    """Objective (1), averaged: lambda/2 ||w||^2 + 1/S sum_i s_i l(y_i (<w, x_i> + b))."""
    return loss_sum / weight_sum + 0.5 * lam * float(w @ w)


class HuberEvaluator:
    """Loss and gradient sums of the Huber SVM over one set of rows, with the margin bounds.

    ``evaluate(it, w, b, grad)`` returns (sum_i s_i l(m_i), sum_i s_i l'(m_i) y_i,
    margins computed) and writes sum_i s_i l'(m_i) y_i x_i into ``grad``, at
    iteration ``it`` of the descent: from Algorithm 2 between re-sorts
    (Algorithm 1) that follow the rule of Sec. 3, where an iteration that
    prunes nothing switches to plain evaluation until the next re-sort; or
    plainly, without ``margin_bounds``.  The sums are the same either way, up
    to rounding.  ``full`` evaluates plainly.  One evaluator serves a whole
    data set (:func:`solve_huber_gd`) or one partition of it
    (:mod:`fastsvm.dask`), whose rule then follows its own rows.
    """

    def __init__(self, packed, y, weight, h, margin_bounds):
        self.packed, self.y, self.weight, self.h = packed, y, weight, h
        n = packed.n_samples
        self.margins = np.empty(n)
        self.sorter = SortedMargins(packed, y, weight) if margin_bounds else None
        self.rule = K.new_rule(*resort_schedule(packed, n))
        self.n_sorts = 0

    def evaluate(self, it, w, b, grad):
        n = self.packed.n_samples
        sorter = self.sorter
        mode = "plain"
        if sorter is not None:
            if sorter.sorted is None or K.resort_due(self.rule, it, n):   # first (or lost)
                mode = "sort"
            elif self.rule[K.R_PLAIN] == 0.0:
                mode = "bounded"
        if mode == "bounded":
            loss, grad_b, examined = sorter.evaluate(w, b, self.h, grad)
            K.record_pruned(self.rule, n - examined)
            return loss, grad_b, examined
        loss, grad_b = self.full(w, b, grad)
        if mode == "sort":
            sorter.sort(w, b, self.margins)
            K.record_resort(self.rule, it)
            self.n_sorts += 1
        elif sorter is not None:
            K.record_pruned(self.rule, 0)
        return loss, grad_b, n

    def full(self, w, b, grad):
        """(loss sum, l'y sum) of every row, margins kept in ``self.margins``."""
        return K.full_evaluation(*self.packed.arrays, self.y, self.weight, w, b, self.h,
                                 self.margins, grad)


def solve_huber_gd(packed, y, weight, lam, h, fit_intercept, eta0, tol, max_iter, margin_bounds,
                   progress=None):
    """Gradient descent on the Huber-loss SVM, Sec. 4.2 of the paper, over ``packed``'s rows
    (see :func:`huber_gradient_descent` and :class:`HuberEvaluator`)."""
    evaluator = HuberEvaluator(packed, y, weight, h, margin_bounds)
    result = huber_gradient_descent(evaluator, packed.n_features, lam, float(weight.sum()),
                                    fit_intercept, eta0, tol, max_iter, progress)
    result.n_sorts = evaluator.n_sorts
    return result


def huber_gradient_descent(evaluator, n_features, lam, weight_sum, fit_intercept, eta0, tol,
                           max_iter, progress=None):
    """Gradient descent on the Huber-loss SVM, Sec. 4.2 of the paper.

    Minimises F(w, b) = lambda/2 ||w||^2 + 1/S sum_i s_i l(y_i (<w, x_i> + b)),
    s the sample weights, S = ``weight_sum`` (the offset is not regularised;
    ``fit_intercept=False`` keeps b = 0), with the sums from ``evaluator``
    (a :class:`HuberEvaluator`, or anything with its ``evaluate`` and ``full``).
    Step rule: w <- w - eta grad F with eta = min(``eta0``, 1/lambda) at first, halved
    whenever F rose since the previous iterate; stop when
    |F_t - F_{t-1}| <= tol |F_{t-1}| (the model returned is the last iterate
    evaluated) or after ``max_iter`` evaluations.  The result reports the
    measure the rule stops on (``relative_change``) and ``gradient_norm`` =
    ||grad F|| at the returned (w, b): F is smooth, so the gradient vanishes
    exactly at the optimum, and without the
    (unregularised) offset F is lambda-strongly convex, so that
    F(w) - F* <= ||grad F(w)||^2 / (2 lambda).
    """
    w = np.zeros(n_features)
    b = 0.0
    grad = np.empty(n_features)
    result = GDResult(w, b, [], [], [], eta0, False)
    started = time.perf_counter()
    eta = min(eta0, 1.0 / lam)     # eta lam <= 1: the regulariser alone cannot diverge
    for it in range(max_iter):
        loss, grad_b, examined = evaluator.evaluate(it, w, b, grad)
        objective = huber_objective(loss, w, lam, weight_sum)
        result.objective.append(objective)
        result.examined.append(int(examined))
        result.seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress.update(1)
        if it > 0:
            previous = result.objective[-2]
            if objective > previous:
                eta *= 0.5
            result.relative_change = abs(previous - objective) / abs(previous)
            if abs(previous - objective) <= tol * abs(previous):
                result.converged = True
                break
        gradient_w = lam * w + grad / weight_sum
        w -= eta * gradient_w
        if fit_intercept:
            b -= eta * grad_b / weight_sum
    result.w, result.b, result.step_size = w, b, eta
    if not result.converged:    # a step followed the last evaluation: evaluate its result
        _, grad_b = evaluator.full(w, b, grad)
    gradient = np.append(lam * w + grad / weight_sum, grad_b / weight_sum if fit_intercept else 0.0)
    result.gradient_norm = float(np.linalg.norm(gradient))
    return result


@dataclass
class PegasosResult:
    """Outcome of :func:`solve_pegasos` for one binary problem."""

    w: np.ndarray                       # (n_features + 1,), the last entry is the offset weight
    n_iter: int
    dual: np.ndarray                    # alpha: w = (1/lambda) sum_i alpha_i y_i (x_i, offset)
    counters: np.ndarray


def average_from(n_iter, average):
    """The first iteration of the suffix average of ``n_iter`` iterations: the last half with
    ``average`` (Rakhlin, Shamir & Sridharan, ICML 2012: the average of the last half of the
    iterates of SGD with steps 1/(lambda t) on a lambda-strongly convex objective is within
    O(1/(lambda T)) of the optimum in expectation, where the last iterate is only shown within
    O(log(T)/(lambda T)), Shamir & Zhang, ICML 2013), else the last iterate alone."""
    return n_iter // 2 + 1 if average else n_iter


def solve_pegasos(packed, y, weight, lam, batch_size, n_iter, bias_feature, margin_bounds, rng,
                  progress=None, average=False):
    """Mini-batch Pegasos (Shalev-Shwartz et al. 2007) with Algorithm 3's sampled bounds.

    ``n_iter`` iterations of ``batch_size`` points drawn uniformly with
    replacement, each violator's step scaled by its step weight ``weight``;
    see :func:`fastsvm.bounds._kernels.pegasos_steps`.  The
    batches are drawn from ``rng`` in the same way with and without bounds,
    so both runs give the same model.  The model is the last iterate, or with
    ``average`` the average of the last half of the iterates (:func:`average_from`),
    and ``dual`` the same average of the dual iterates: the pair still satisfies
    w = (1/lambda) sum_i alpha_i y_i (x_i, offset).
    """
    n, d = packed.n_samples, packed.n_features
    norms = np.sqrt(packed.sq_norms + bias_feature ** 2)
    w = np.zeros(d + 1)
    w_ref = np.zeros(d + 1)
    u = np.zeros(n)                     # margins of w_ref = 0
    update = np.empty(d + 1)
    rule = K.new_rule(*resort_schedule(packed, batch_size, sort=False))
    dual = np.zeros(n)
    dual_scale = np.ones(1)
    first = average_from(n_iter, average)
    w_sum, dual_lag, scale_sum = np.zeros(d + 1), np.zeros(n), np.zeros(1)
    counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
    chunk = max(1, _options.CHUNK_STEPS // batch_size)
    for t0 in range(0, n_iter, chunk):
        batches = rng.integers(0, n, size=(min(chunk, n_iter - t0), batch_size), dtype=np.int64)
        K.pegasos_steps(*packed.arrays, norms, y, weight, batches, t0, lam, bias_feature,
                        margin_bounds, _options.SCALED_REFERENCE, rule, u, w_ref, w, update,
                        dual, dual_scale, first, w_sum, dual_lag, scale_sum, counters)
        if progress is not None:
            progress.update(batches.shape[0])
    averaged = n_iter - first + 1
    return PegasosResult(w_sum / averaged, n_iter, (scale_sum[0] * dual - dual_lag) / averaged,
                         counters)


def hinge_duality(margins, w_norm2, dual, dual_norm2, upper, lam):
    r"""Primal and dual objectives of Pegasos' problem, for each of the models (rows).

    The primal (Shalev-Shwartz et al. 2007, eq. 1, with the sample weights
    s_i and S = sum_i s_i of :mod:`fastsvm.base`; phi'(x) = (phi(x), offset
    feature), so the offset is regularised) and its Lagrange dual:

    .. math::

        P(w) = \frac{\lambda}{2}\|w\|^2 + \sum_i u_i \max(0, 1 - y_i\langle w,
        \phi'(x_i)\rangle), \qquad
        D(\alpha) = \sum_i \alpha_i - \frac{1}{2\lambda}\Big\|\sum_i \alpha_i y_i
        \phi'(x_i)\Big\|^2, \qquad 0 \le \alpha_i \le u_i = \frac{s_i}{S}.

    For every w and every alpha in the box, D(alpha) <= P* <= P(w) (weak
    duality), so P(w) - D(alpha) bounds P(w) - P* from above; it is 0 exactly
    at a primal-dual optimal pair, where w = (1/lambda) sum_i alpha_i y_i phi'(x_i).

    Parameters
    ----------
    margins : ndarray of shape (n_models, n)
        y_i <w, phi'(x_i)> of each model.
    w_norm2 : ndarray of shape (n_models,)
        ||w||^2 (offset included).
    dual : ndarray of shape (n_models, n)
        A point alpha of the box.
    dual_norm2 : ndarray of shape (n_models,)
        ||sum_i alpha_i y_i phi'(x_i)||^2.
    upper : ndarray of shape (n,)
        u = s / S.
    lam : float

    Returns
    -------
    primal, dual_objective : ndarrays of shape (n_models,)
    """
    primal = 0.5 * lam * w_norm2 + np.maximum(0.0, 1.0 - margins) @ upper
    return primal, dual.sum(axis=1) - 0.5 * dual_norm2 / lam


@dataclass
class KernelPegasosResult:
    """Outcome of :func:`solve_kernel_pegasos`: f(x) = sum_s dual_s (k(x_support_s, x) + bias2)."""

    support: np.ndarray                 # training indices of the support vectors
    dual: np.ndarray                    # their coefficients
    n_iter: int
    counters: np.ndarray


def solve_kernel_pegasos(packed, y, weight, lam, kernel, diagonal, batch_size, n_iter, bias2,
                         margin_bounds, rng, progress=None, average=False):
    """Mini-batch kernel Pegasos with the bounds of eq. (6); see
    :func:`fastsvm.bounds._kernels.kernel_pegasos_steps`.  ``kernel`` is a
    :class:`fastsvm.kernels.Kernel` (for a kernel matrix, ``packed`` holds it)
    and ``diagonal`` k(x_i, x_i) of every row.  Same batches, same model with
    and without bounds: the last iterate, or with ``average`` the average of the
    last half of the iterates (:func:`average_from`)."""
    n = packed.n_samples
    capacity = min(n, n_iter * batch_size)
    svt = np.zeros((0 if kernel.on_gram else packed.n_features, capacity))
    sv_sq = np.zeros(capacity)
    sv_row = np.zeros(capacity, dtype=np.int64)
    coef = np.zeros(capacity)
    slot_of = np.full(n, -1, dtype=np.int64)
    norms = np.sqrt(np.maximum(diagonal, 0.0) + bias2)
    state = np.zeros(K.N_KSTATE)
    state[K.KS_SCALE] = 1.0
    first = average_from(n_iter, average)
    coef_lag = np.zeros(capacity)
    u = np.zeros(n)
    counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
    # a refresh costs n margins of n_sv kernel values, an iteration k of them
    rule = K.new_rule(_options.RESORT_C * n / batch_size, float(n))
    n_sv = 0
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    chunk = max(1, _options.CHUNK_STEPS // batch_size)
    for t0 in range(0, n_iter, chunk):
        batches = rng.integers(0, n, size=(min(chunk, n_iter - t0), batch_size), dtype=np.int64)
        n_sv = K.kernel_pegasos_steps(*packed.arrays, packed.sq_norms, norms, y, weight, batches,
                                      t0, lam, kernel.code, gamma, kernel.degree, kernel.coef0,
                                      bias2, margin_bounds, _options.SCALED_REFERENCE, rule, u,
                                      svt, sv_sq, sv_row, coef, slot_of, n_sv, state, first,
                                      coef_lag, counters)
        if progress is not None:
            progress.update(batches.shape[0])
    averaged = n_iter - first + 1
    dual = (state[K.KS_SCALE_SUM] * coef[:n_sv] - coef_lag[:n_sv]) / averaged
    return KernelPegasosResult(sv_row[:n_sv].copy(), dual, n_iter, counters)
