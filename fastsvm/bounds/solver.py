"""Python drivers of the margin-bound solvers: Huber gradient descent and Pegasos.

Compiled code lives in :mod:`fastsvm.bounds._kernels`.  The cost model of the
re-sort rule (paper eqs. 3-4, ignoring constant factors as the paper does),
for n points with s*d stored entries each:

* gradient descent: SortTime = s d n + n log2 n + d, EvalTime = s d n + d;
* Pegasos (Alg. 3 refreshes the stored margins without sorting):
  SortTime = s d n + d, EvalTime = k s d for a batch of k (its w is kept
  scaled, so an iteration touches only its batch's entries);
* LossTime = s d (one point), SortPeriod = c SortTime / EvalTime and
  SortCost = SortTime / LossTime, with c = ``fastsvm._options.RESORT_C``.
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from .. import _options
from .._importance import heavy_threshold
from . import _kernels as K


def resort_schedule(packed, eval_points, pegasos=False):
    """(SortPeriod, SortCost) of eqs. (3)-(4) for evaluations of ``eval_points`` points, by
    gradient descent or, with ``pegasos``, by Pegasos (module docstring)."""
    n, d = packed.n_samples, packed.n_features
    point = max(1.0, packed.density * d)
    sort_time = point * n + (0.0 if pegasos else n * np.log2(max(n, 2))) + d
    eval_time = point * eval_points + (0.0 if pegasos else d)
    return _options.RESORT_C * sort_time / eval_time, sort_time / point


#: The solvers of the Huber SVM: L-BFGS (stops on the duality gap) and the paper's gradient
#: descent (stops on the objective's relative change), with their default ``tol``.
HUBER_SOLVERS = {"lbfgs": 1e-3, "gd": 1e-5}


@dataclass
class HuberResult:
    """Outcome of :func:`solve_huber` for one binary problem."""

    w: np.ndarray
    b: float
    objective: list            # objective (1) at each point evaluated
    examined: list             # margins computed at each evaluation
    seconds: list              # wall time since the start, after each evaluation
    step_size: float           # final step size (gradient descent; nan for L-BFGS)
    converged: bool
    n_sorts: int = 0
    relative_change: float = float("nan")  # gradient descent: |F_t - F_{t-1}| / |F_{t-1}| at the stop
    gradient_norm: float = float("nan")    # ||grad F|| at the returned model
    duality_gap: float = float("nan")      # (F - D) / |F| at the returned model (huber_duality)
    exhausted: bool = False                # stopped unconverged by max_iter (not by L-BFGS)

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
    data set (:func:`solve_huber`) or one partition of it
    (:mod:`fastsvm.dask`), whose rule then follows its own rows.
    """

    def __init__(self, packed, y, weight, h, margin_bounds):
        self.packed, self.y, self.weight, self.h = packed, y, weight, h
        n = packed.n_samples
        self.margins = np.empty(n)
        self.sorter = SortedMargins(packed, y, weight) if margin_bounds else None
        self.rule = K.new_rule(*resort_schedule(packed, n))
        self.n_sorts = 0

    def dual_sums(self, w, b):
        """(loss sum, alpha sums, alpha^2 sums, alpha x sums) per label at (w, b), plainly: see
        :func:`fastsvm.bounds._kernels.dual_sums` and :func:`huber_duality`."""
        alpha_sum, alpha_sq = np.empty(2), np.empty(2)
        alpha_x = np.empty((2, self.packed.n_features))
        loss = K.dual_sums(*self.packed.arrays, self.y, self.weight, w, b, self.h, alpha_sum,
                           alpha_sq, alpha_x)
        return loss, alpha_sum, alpha_sq, alpha_x

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

    def column_moments(self):
        """(sum_i s_i x_ij, sum_i s_i x_ij^2) of every feature j (float64): the features'
        means and scales, which :func:`huber_lbfgs` preconditions by."""
        packed = self.packed
        if packed.is_sparse:
            rows = np.repeat(self.weight, np.diff(packed.indptr))
            data = packed.data.astype(float)
            return tuple(np.bincount(packed.indices, weights=rows * data ** k,
                                     minlength=packed.n_features) for k in (1, 2))
        X = packed.dense.astype(float, copy=False)
        return self.weight @ X, self.weight @ np.square(X)

    def full(self, w, b, grad):
        """(loss sum, l'y sum) of every row, margins kept in ``self.margins``."""
        return K.full_evaluation(*self.packed.arrays, self.y, self.weight, w, b, self.h,
                                 self.margins, grad)


def solve_huber(packed, y, weight, lam, h, fit_intercept, solver, eta0, tol, max_iter,
                margin_bounds, progress=None):
    """The Huber-loss SVM over ``packed``'s rows by ``solver`` (see :func:`huber_descent`
    and :class:`HuberEvaluator`)."""
    evaluator = HuberEvaluator(packed, y, weight, h, margin_bounds)
    result = huber_descent(evaluator, solver, packed.n_features, lam, h, float(weight.sum()),
                           fit_intercept, eta0, tol, max_iter, progress)
    result.n_sorts = evaluator.n_sorts
    return result


def huber_descent(evaluator, solver, n_features, lam, h, weight_sum, fit_intercept, eta0, tol,
                  max_iter, progress=None):
    """Minimise the Huber SVM's F(w, b) with the sums from ``evaluator`` (a
    :class:`HuberEvaluator`, or anything with its ``evaluate``, ``full``, ``dual_sums`` and
    ``column_moments``) by
    ``solver``, 'lbfgs' (:func:`huber_lbfgs`) or 'gd' (:func:`huber_gradient_descent`).
    Either way the result reports the relative duality gap and ||grad F|| at the returned
    model."""
    if solver == "lbfgs":
        result = huber_lbfgs(evaluator, n_features, lam, h, weight_sum, fit_intercept, tol,
                             max_iter, progress)
    else:
        result = huber_gradient_descent(evaluator, n_features, lam, weight_sum, fit_intercept,
                                        eta0, tol, max_iter, progress)
    grad = np.empty(n_features)
    _, grad_b = evaluator.full(result.w, result.b, grad)
    gradient = np.append(lam * result.w + grad / weight_sum,
                         grad_b / weight_sum if fit_intercept else 0.0)
    result.gradient_norm = float(np.linalg.norm(gradient))
    if solver == "gd":
        result.duality_gap = relative_gap(evaluator, result.w, result.b, lam, h, weight_sum,
                                          fit_intercept)
    return result


def huber_duality(loss, alpha_sum, alpha_sq, alpha_x, w, lam, h, weight_sum, fit_intercept):
    r"""(F(w, b), D(alpha)): the objective and a lower bound on its minimum, from the sums of
    :meth:`HuberEvaluator.dual_sums` at (w, b).

    Since :math:`l_h(z) = \max_{a \in [0, 1]} a(1 + h - z) - h a^2` (at a = -l'(z)),
    minimising the Lagrangian over w and b gives the dual

    .. math::

        D(\alpha) = \frac{1}{S}\sum_i s_i((1 + h)\alpha_i - h\alpha_i^2)
        - \frac{1}{2\lambda}\Big\|\frac{1}{S}\sum_i s_i\alpha_i y_i x_i\Big\|^2,
        \qquad \alpha \in [0, 1]^n,

    with the constraint :math:`\sum_i s_i \alpha_i y_i = 0` when the (unregularised)
    offset is fitted.  Weak duality: D(alpha) <= F* <= F(w, b) for every feasible alpha.
    Here alpha_i = -l'(z_i) at (w, b), the list of the label whose sum of s_i alpha_i is
    larger scaled down to meet the constraint: at the optimum the constraint holds
    (dF/db = 0), nothing is scaled and F = D, so F - D -> 0 as (w, b) -> the optimum.
    """
    primal = huber_objective(loss, w, lam, weight_sum)
    scale = np.ones(2)
    if fit_intercept:
        larger = int(alpha_sum[1] > alpha_sum[0])
        if alpha_sum[larger] > 0:
            scale[larger] = alpha_sum[1 - larger] / alpha_sum[larger]
    v = (scale[0] * alpha_x[0] - scale[1] * alpha_x[1]) / weight_sum
    dual = (((1.0 + h) * float(scale @ alpha_sum) - h * float(scale ** 2 @ alpha_sq)) / weight_sum
            - float(v @ v) / (2.0 * lam))
    return primal, dual


def relative_gap(evaluator, w, b, lam, h, weight_sum, fit_intercept):
    """(F - D) / |F| at (w, b) (:func:`huber_duality`): F - F* is at most this share of F."""
    primal, dual = huber_duality(*evaluator.dual_sums(w, b), w, lam, h, weight_sum,
                                 fit_intercept)
    return (primal - dual) / abs(primal) if primal != 0.0 else 0.0


#: After a duality gap above tol at L-BFGS iteration k, the next is computed at iteration
#: k + 1 + int(CHECK_SPACING k): O(log) passes for the gap instead of one per iteration
#: (which doubled the cost of a fit), at the price of at most a share CHECK_SPACING more
#: iterations than needed.
CHECK_SPACING = 0.2


class _Certified(Exception):
    """The duality gap at the L-BFGS iterate ``x`` is within tolerance."""

    def __init__(self, x, gap):
        super().__init__()
        self.x, self.gap = x, gap


def huber_lbfgs(evaluator, n_features, lam, h, weight_sum, fit_intercept, tol, max_iter,
                progress=None):
    """L-BFGS (scipy's L-BFGS-B, no bounds) on the Huber-loss SVM, stopped on the duality gap.

    Minimises the same F(w, b) as :func:`huber_gradient_descent`, from w = 0, b = 0.  F has
    a Lipschitz-continuous gradient, so a quasi-Newton method converges where gradient
    descent crawls: lambda = 1/(SC) makes F badly conditioned (on 6,000 sparse rows the
    paper's descent stopped 6 % above F*, on unscaled features 5x above it).  Every
    function evaluation is one ``evaluator.evaluate`` (with the margin bounds when it has
    them; they hold for any w).  After an iteration that lowered F by at most ``tol`` |F|
    (then at iterations spaced by ``CHECK_SPACING``) the relative duality gap of
    :func:`huber_duality` (one plain pass) decides: stop once (F - D) / |F| <= ``tol``, a
    certificate that F - F* <= tol |F|; else stop unconverged after ``max_iter``
    iterations or evaluations, or when the line search can make no more progress.
    The line search may try 100 steps (scipy's default is 20): L-BFGS's first step moves
    w by 1, so on features of 1e12 it must shrink by 1e-12, and with 20 trials it
    stopped at w = 0.

    Preconditioned: L-BFGS runs on v, with w = D v_w and b = s v_b - <mu, w>,
    mu_j = sum_i s_i x_ij / S the features' weighted means (0 without the
    offset).  In v the features are centred, and D_j = sqrt(c / c_j) evens
    the diagonal of F's Hessian, estimated as c_j = lambda + sigma_j, sigma_j
    the feature's weighted variance (the Huber loss's curvature is at most 1
    at h = 0.5), c the median over the features that vary, the offset's
    (s, with sigma = 1) among them; D_j = 1 for a feature that does not vary
    (it never moves from 0).  Features on different scales, or of one sign
    far from 0 (which move with the offset), make F badly conditioned, and v
    evens them.  The minimiser, F and the certificate are those of (w, b),
    and on standardised features v is about (w, b) itself.  Measured (L-BFGS
    iterations to tol at the defaults, before -> after): 2,250 rows of 20
    features scaled by 10^-3 to 10^3, 20,000 (15 s, stopped short of tol at a
    gap of 0.047) -> 64 (0.4 s; LinearSVC 0.03 s); scikit-learn's digits as
    given (pixels 0-16), 1,000-3,200 per class -> 150-710 (standardised:
    56-146; correlated pixels, which no diagonal evens); on the sets of
    ``benchmarks/defaults_vs_svc.py`` a9a 116 -> 36, covtype 184 -> 25,
    dense_wide 82 -> 23, usps 430-640 -> 150-280, ijcnn1 36 -> 18, phishing
    37 -> 20, wide_sparse 26 -> 10, at the same accuracies (within 0.4
    points).  Fewer, longer steps leave the margin bounds less to spare: on
    a9a at the demo's C, 117 evaluations of which the bounds spared 29 % of
    the margins became 34 sparing 4 %.
    """
    d = n_features
    result = HuberResult(np.zeros(d), 0.0, [], [], [], float("nan"), False)
    grad = np.empty(d)
    started = time.perf_counter()
    scale, mean = preconditioner(*evaluator.column_moments(), weight_sum, lam, fit_intercept)

    def split(v):
        w = scale[:d] * v[:d]
        return w, (float(scale[d] * v[d] - mean @ w) if fit_intercept else 0.0)

    def objective(v):
        w, b = split(v)
        loss, grad_b, examined = evaluator.evaluate(len(result.objective), w, b, grad)
        result.objective.append(huber_objective(loss, w, lam, weight_sum))
        result.examined.append(int(examined))
        result.seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress.update(1)
        gradient = np.empty(len(v))             # of F in v, by the chain rule
        gradient[:d] = lam * w + grad / weight_sum
        if fit_intercept:
            gradient[d] = grad_b / weight_sum     # the offset is not regularised
            gradient[:d] -= mean * gradient[d]
        return result.objective[-1], scale * gradient

    state = {"iteration": 0, "next_check": 1, "objective": np.inf}

    def certify(v):
        state["iteration"] += 1
        previous, state["objective"] = state["objective"], result.objective[-1]
        # F - D >= F - F*, at least the next decrease: while an iteration still lowers F by
        # more than tol F the gap is not worth its pass
        if (state["iteration"] < state["next_check"]
                or previous - state["objective"] > tol * abs(state["objective"])):
            return
        gap = relative_gap(evaluator, *split(v), lam, h, weight_sum, fit_intercept)
        if gap <= tol:
            raise _Certified(v.copy(), gap)
        state["next_check"] = state["iteration"] + 1 + int(CHECK_SPACING * state["iteration"])

    try:
        solution = scipy.optimize.minimize(objective, np.zeros(d + int(fit_intercept)),
                                           jac=True, method="L-BFGS-B", callback=certify,
                                           options={"maxiter": max_iter, "maxfun": max_iter,
                                                    "ftol": 0.0, "gtol": 0.0, "maxls": 100})
        # out of iterations, or no more progress (at the optimum, or short of tol)
        v = solution.x
        result.duality_gap = relative_gap(evaluator, *split(v), lam, h, weight_sum,
                                          fit_intercept)
        result.converged = bool(result.duality_gap <= tol)
        result.exhausted = max(solution.nit, solution.nfev) >= max_iter
    except _Certified as stop:
        v, result.duality_gap, result.converged = stop.x, stop.gap, True
    w, b = split(v)
    result.w, result.b = w.copy(), b
    return result


def preconditioner(first, second, weight_sum, lam, fit_intercept):
    """(scale, mean) of :func:`huber_lbfgs`'s change of variables from the features'
    weighted sums sum_i s_i x_ij (``first``) and sum_i s_i x_ij^2 (``second``): the
    scale of each feature's v (and of the offset's, last, when it is fitted) and the
    means that centre them (zeros without the offset, whose column would absorb them)."""
    mean = first / weight_sum if fit_intercept else np.zeros(len(first))
    spread = second / weight_sum - mean ** 2
    varies = spread > 1e-12 * second / weight_sum       # not constant (nor cancelled away)
    if fit_intercept:
        spread, varies = np.append(spread, 1.0), np.append(varies, True)
    scale = np.ones(len(spread))
    if np.any(varies):
        curvature = lam + spread[varies]
        scale[varies] = np.sqrt(np.median(curvature) / curvature)
    return scale, mean


def huber_gradient_descent(evaluator, n_features, lam, weight_sum, fit_intercept, eta0, tol,
                           max_iter, progress=None):
    """Gradient descent on the Huber-loss SVM, Sec. 4.2 of the paper.

    Minimises F(w, b) = lambda/2 ||w||^2 + 1/S sum_i s_i l(y_i (<w, x_i> + b)),
    s the sample weights, S = ``weight_sum`` (the offset is not regularised;
    ``fit_intercept=False`` keeps b = 0), with the sums from ``evaluator``
    (a :class:`HuberEvaluator`, or anything with its ``evaluate``).
    Step rule: w <- w - eta grad F with eta = min(``eta0``, 1/lambda) at first, halved
    whenever F rose since the previous iterate; stop when
    |F_t - F_{t-1}| <= tol |F_{t-1}| (the model returned is the last iterate
    evaluated) or after ``max_iter`` evaluations.  The result reports the
    measure the rule stops on (``relative_change``).  The rule stops on stagnation, not on
    nearness to the optimum: with a small lambda the steps crawl (see :func:`huber_lbfgs`).
    """
    w = np.zeros(n_features)
    b = 0.0
    grad = np.empty(n_features)
    result = HuberResult(w, b, [], [], [], eta0, False)
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
        if it == max_iter - 1:      # no step past the last evaluation: that model is returned
            break
        gradient_w = lam * w + grad / weight_sum
        w -= eta * gradient_w
        if fit_intercept:
            b -= eta * grad_b / weight_sum
    result.w, result.b, result.step_size = w, b, eta
    result.exhausted = not result.converged
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
    replacement, each violator's step scaled by its step weight ``weight`` (above
    100 times the median weight as :mod:`fastsvm._importance` takes it);
    see :func:`fastsvm.bounds._kernels.pegasos_steps`.  The
    batches are drawn from ``rng`` in the same way with and without bounds,
    so both runs give the same model.  The model is the last iterate, or with
    ``average`` the average of the last half of the iterates (:func:`average_from`),
    and ``dual`` the same average of the dual iterates: the pair still satisfies
    w = (1/lambda) sum_i alpha_i y_i (x_i, offset).
    """
    n, d = packed.n_samples, packed.n_features
    norms = np.sqrt(packed.sq_norms + bias_feature ** 2)
    v = np.zeros(d + 1)                 # w = dual_scale[0] * v
    w_ref = np.zeros(d + 1)
    u = np.zeros(n)                     # margins of w_ref = 0
    update = np.zeros(d + 1)
    touched = np.empty(d + 1, dtype=np.int64)
    mark = np.zeros(d + 1, dtype=np.int64)
    rule = K.new_rule(*resort_schedule(packed, batch_size, pegasos=True), last=n_iter)
    dual = np.zeros(n)
    dual_scale = np.ones(1)
    first = average_from(n_iter, average)
    dual_lag, scale_sum = np.zeros(n), np.zeros(1)
    counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
    heavy_from = heavy_threshold(weight)
    chunk = max(1, _options.CHUNK_STEPS // batch_size)
    for t0 in range(0, n_iter, chunk):
        batches = rng.integers(0, n, size=(min(chunk, n_iter - t0), batch_size), dtype=np.int64)
        if not K.pegasos_steps(*packed.arrays, norms, y, weight, heavy_from, batches, t0, lam,
                               bias_feature, margin_bounds, _options.SCALED_REFERENCE, rule, u,
                               w_ref, v, update, touched, mark, dual, dual_scale, first,
                               dual_lag, scale_sum, counters):
            # ||w|| overflowed: a non-finite model, which the estimator reports as overflow
            return PegasosResult(np.full(d + 1, np.nan), n_iter, np.full(n, np.nan), counters)
        if progress is not None:
            progress.update(batches.shape[0])
    dual = (scale_sum[0] * dual - dual_lag) / (n_iter - first + 1)
    w = np.zeros(d + 1)                 # the averaged w = (1/lambda) sum_i alpha_i y_i (x_i, b)
    K.combine_rows(*packed.arrays, dual * y / lam, bias_feature, w)
    return PegasosResult(w, n_iter, dual, counters)


def hinge_duality(margins, lam_w_norm2, dual, dual_norm2, upper, lam):
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

    The dual objective returned is that of the best multiple theta alpha in the
    box: D(theta alpha) = theta A - theta^2 Q / (2 lambda), A = sum_i alpha_i and
    Q = ``dual_norm2``, is concave in theta, so its maximum over 0 <= theta <=
    min_i u_i / alpha_i is at theta = lambda A / Q clipped to that range.  theta = 1
    is in it, so this is at least D(alpha), and as valid a bound.  Pegasos' dual
    variables overshoot in scale (a9a, linear, at the defaults: theta = 0.2,
    which halves the gap).

    Parameters
    ----------
    margins : ndarray of shape (n_models, n)
        y_i <w, phi'(x_i)> of each model.
    lam_w_norm2 : ndarray of shape (n_models,)
        lambda ||w||^2 (offset included), formed by the caller so that a huge w at a tiny
        lambda (C = 1e160) does not overflow on the way.
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
    primal = 0.5 * lam_w_norm2 + np.maximum(0.0, 1.0 - margins) @ upper
    total = dual.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        most = np.where(dual > 0, upper / dual, np.inf).min(axis=1)
        theta = np.where(dual_norm2 > 0, lam * total / dual_norm2, np.inf)
    theta = np.clip(theta, 0.0, np.where(np.isfinite(most), most, 1.0))
    return primal, theta * total - 0.5 * theta * theta * dual_norm2 / lam


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
    rule = K.new_rule(_options.RESORT_C * n / batch_size, float(n), last=n_iter)
    heavy_from = heavy_threshold(weight)
    n_sv = 0
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    chunk = max(1, _options.CHUNK_STEPS // batch_size)
    for t0 in range(0, n_iter, chunk):
        batches = rng.integers(0, n, size=(min(chunk, n_iter - t0), batch_size), dtype=np.int64)
        n_sv = K.kernel_pegasos_steps(*packed.arrays, packed.sq_norms, norms, y, weight,
                                      heavy_from, batches, t0, lam, kernel.code, gamma,
                                      kernel.degree, kernel.coef0, bias2, margin_bounds,
                                      _options.SCALED_REFERENCE, rule, u, svt, sv_sq, sv_row,
                                      coef, slot_of, n_sv, state, first, coef_lag, counters)
        if progress is not None:
            progress.update(batches.shape[0])
    averaged = n_iter - first + 1
    dual = (state[K.KS_SCALE_SUM] * coef[:n_sv] - coef_lag[:n_sv]) / averaged
    return KernelPegasosResult(sv_row[:n_sv].copy(), dual, n_iter, counters)
