r"""Python drivers of the linear SVM solvers on a Nystrom embedding: ASSG, Pegasos and
dual coordinate descent.

All three minimise, over w in R^(r+1) (the last entry weighs the constant
feature ``bias_feature``),

.. math::

    P(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{n}\sum_{i=1}^n
    c_i \max(0, 1 - y_i \langle w, x_i\rangle), \qquad \lambda = \frac{1}{SC},

with step weights c_i = s_i n / S of the sample weights s_i, S = sum_i s_i
(all 1 without weights, and then lambda = 1/(nC)), which is scikit-learn's
``LinearSVC(C, loss='hinge')`` objective
:math:`\frac12\|w\|^2 + C\sum_i s_i \max(0, 1 - y_i\langle w, x_i\rangle)` divided
by SC (the offset regularised like LIBLINEAR's, with ``intercept_scaling`` =
``bias_feature``).  The Snacks paper writes the objective with
:math:`\lambda\|w\|^2` but its subgradient (8) with :math:`\lambda w`; we use
:math:`\frac{\lambda}{2}\|w\|^2`, for which (8) is the subgradient.

ASSG and Pegasos run in *stages* of T stochastic steps (examples drawn uniformly with
replacement) between which the driver evaluates P on the full training set
(one matrix-vector product, cheap next to T steps) and stops when

.. math::

    |P_{k-1} - P_k| \le \mathrm{tol} \cdot P_k,

or after ``max_stages`` stages; ``tol=None`` runs exactly ``max_stages``
stages (the paper's fixed budget K x T).  The objective stagnates when the
steps shrink, not only near the optimum, so this rule certifies nothing.

Dual coordinate descent (:func:`solve_dcd`, LIBLINEAR's algorithm for
``LinearSVC(loss='hinge')``, with shrinking) keeps a dual feasible point
alpha with w = w(alpha), so it can evaluate the duality gap P(w) - D(alpha)
>= P(w) - P*, a certificate: it stops when the gap is at most ``tol`` times
P(w).

Each solver takes ``rows``, the embedding's rows of its problem (None: all of
them): a one-vs-one pair of classes is solved on its rows of the shared
embedding, without a copy.  Then n is ``len(rows)``, and ``y`` and
``weight``, indexed by the embedding's rows, are read at ``rows`` only.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .. import _options
from .._importance import heavy_threshold
from . import _kernels


def embedded_sq_norms(Phi):
    """||phi_i||^2 of every row of the embedding, summed in float64 by the compiled loop
    (:func:`~fastsvm.nystrom._kernels.sq_norms_at`): 7x faster than NumPy's einsum with a
    float64 result on float32 rows, which converts element by element."""
    out = np.zeros(Phi.shape[0])
    _kernels.sq_norms_at(Phi, np.arange(Phi.shape[0]), out)
    return out


def hinge_sum(Phi, y, weight, w, bias_feature, rows=None):
    """sum_i weight_i max(0, 1 - y_i <w, (phi_i, bias_feature)>) over the rows ``rows`` of
    the embedding (all if None), read in place by the compiled loop with every margin
    summed in float64; for w = 0 (every margin 0) the sum of the weights, without a pass
    over the rows.  Float32 margins (BLAS's sgemv) erred by about 1e-7 ||w|| ||phi_i||
    each, which is most of P(w) where P is small (a large C on nearly separable rows:
    0.9 % of P = 5.9e-6, nine times the duality gap then certified); the compiled loop
    is also faster (30,000 x 1,000 rows: 0.014 s against 0.017-0.030 s)."""
    if not w.any():
        return float(np.sum(weight if rows is None else weight[rows]))
    rows = np.arange(Phi.shape[0]) if rows is None else rows
    return _kernels.hinge_at(Phi, rows, y, weight, w, bias_feature)


def primal_objective(Phi, y, weight, w, bias_feature, lam, rows=None):
    """P(w) on the rows ``rows`` of the embedding (all if None), float64."""
    n = len(y) if rows is None else len(rows)
    return 0.5 * lam * float(w @ w) + hinge_sum(Phi, y, weight, w, bias_feature, rows) / n


def _problem_rows(Phi, rows):
    """(n, rows): the problem's size and its rows as int64 indices (None: all rows)."""
    if rows is None:
        return Phi.shape[0], None
    return len(rows), np.asarray(rows, dtype=np.int64)


def _heavy_from(weight, rows):
    """c_heavy of the problem's rows (all rows if None): a violator above it takes the
    importance-aware step of :mod:`fastsvm._importance`."""
    return heavy_threshold(weight if rows is None else weight[rows])


@dataclass
class SolverResult:
    """What a solver returns: the weights and a record of the run."""

    w: np.ndarray
    objective: list = field(default_factory=list)   # P after each stage, P(0) first
    violations: list = field(default_factory=list)  # margin violations per stage
    converged: bool = False
    eta0: float = None                              # ASSG's first step size
    gap: list = field(default_factory=list)         # DCD: (P - D) / P at each check
    epochs: int = 0                                  # DCD: passes over the (active) variables

    @property
    def n_stages(self):
        return len(self.objective) - 1


def _orders(n, rows, steps, rng, progress):
    """``steps`` example indices drawn uniformly from the n rows ``rows`` (0..n-1 if None),
    in chunks of ``CHUNK_STEPS``, advancing ``progress``."""
    for start in range(0, steps, _options.CHUNK_STEPS):
        size = min(_options.CHUNK_STEPS, steps - start)
        drawn = rng.integers(0, n, size=size, dtype=np.int64)
        yield drawn if rows is None else rows[drawn]
        if progress is not None:
            progress.update(size)


def _converged(result, tol):
    previous, current = result.objective[-2:]
    return tol is not None and abs(previous - current) <= tol * current


def _assg_stage(Phi, rows, y, weight, bias_feature, lam, w, eta, radius, steps, rng, progress):
    """One ASSG stage from ``w`` over the rows ``rows``: returns (average of the projected
    iterates, violations)."""
    center = w.copy()
    w = w.copy()
    w_avg = np.zeros_like(w)
    violations = 0
    n, rows = _problem_rows(Phi, rows)
    heavy_from = _heavy_from(weight, rows)
    for order in _orders(n, rows, steps, rng, progress):
        violations += _kernels.assg_steps(Phi, y, weight, heavy_from, bias_feature, order, lam,
                                          eta, center, radius, w, w_avg, 1.0 / steps)
    return w_avg, violations


#: Step sizes tried by ``eta0=None`` (calibration) start here and move by this factor.
ETA_CALIBRATION_START = 1.0
ETA_CALIBRATION_FACTOR = 4.0
ETA_CALIBRATION_MAX_TRIALS = 8


def _calibrate_eta(Phi, rows, y, weight, bias_feature, lam, radius, steps, rng, progress):
    """Choose eta_1 by trying the first stage with several step sizes (Bottou's calibration).

    All trials run stage 1 from w = 0 on the same examples; starting at
    ``ETA_CALIBRATION_START``, the step size is multiplied (or, if that is
    worse, divided) by ``ETA_CALIBRATION_FACTOR`` while the objective after
    the stage improves.  Returns (eta, stage-1 average, violations,
    objective) of the best trial, so the best trial's stage is not wasted.
    """
    seed = int(rng.integers(np.iinfo(np.int64).max))
    w0 = np.zeros(Phi.shape[1] + 1)

    def trial(eta):
        w, violations = _assg_stage(Phi, rows, y, weight, bias_feature, lam, w0, eta, radius,
                                    steps, np.random.default_rng(seed), progress)
        return eta, w, violations, primal_objective(Phi, y, weight, w, bias_feature, lam, rows)

    best = trial(ETA_CALIBRATION_START)
    for direction in (ETA_CALIBRATION_FACTOR, 1.0 / ETA_CALIBRATION_FACTOR):
        moved = False
        for _ in range(ETA_CALIBRATION_MAX_TRIALS):
            candidate = trial(best[0] * direction)
            if not candidate[3] < best[3]:
                break
            best, moved = candidate, True
        if moved:
            break
    return best


def solve_assg(Phi, y, weight, bias_feature, lam, eta0, radius0, omega, stage_steps, max_stages,
               tol, rng, progress=None, rows=None):
    """Accelerated stochastic subgradient (ASSG), Snacks Algorithm 1.

    Stage k starts from the previous stage's averaged iterate c = w_{k-1},
    takes T projected steps (7) w <- Pi_{B(c, D)}[w - eta g(w)] and returns the
    average of the T projected iterates; then D <- D / omega and
    eta <- eta / omega.  (Lines 5-6 of the printed Algorithm 1 average
    projected copies of an unprojected sequence; we follow step (7) and the
    authors' code, which project the iterate itself.)  w_0 = 0, eta_1 =
    ``eta0``, D_1 = ``radius0``.

    ``eta0=None`` calibrates eta_1 on stage 1 (:func:`_calibrate_eta`): the
    paper tunes it per data set by hand, and the best value moves by a factor
    of 4 or more between data sets (a9a 0.5, ijcnn1 2).
    """
    _, rows = _problem_rows(Phi, rows)
    w = np.zeros(Phi.shape[1] + 1)
    result = SolverResult(w, [primal_objective(Phi, y, weight, w, bias_feature, lam, rows)])
    eta, radius = eta0, radius0
    if eta is None:
        eta, w, violations, objective = _calibrate_eta(Phi, rows, y, weight, bias_feature, lam,
                                                       radius, stage_steps, rng, progress)
        result.violations.append(violations)
        result.objective.append(objective)
        eta, radius = eta / omega, radius / omega
    result.eta0 = eta * omega ** len(result.violations)
    while result.n_stages < max_stages and not (result.n_stages and _converged(result, tol)):
        w, violations = _assg_stage(Phi, rows, y, weight, bias_feature, lam, w, eta, radius,
                                    stage_steps, rng, progress)
        result.violations.append(violations)
        result.objective.append(primal_objective(Phi, y, weight, w, bias_feature, lam, rows))
        eta, radius = eta / omega, radius / omega
    result.converged = _converged(result, tol)
    result.w = w
    return result


def solve_pegasos(Phi, y, weight, bias_feature, lam, stage_steps, max_stages, tol, rng,
                  progress=None, rows=None):
    """Pegasos (step 1 / (lambda t), projection onto the ball of radius 1/sqrt(lambda)).

    The baseline of the Snacks paper on the same embedding; returns the last
    iterate.  Stages only mark where the stopping rule is checked.
    """
    n, rows = _problem_rows(Phi, rows)
    heavy_from = _heavy_from(weight, rows)
    w = np.zeros(Phi.shape[1] + 1)
    result = SolverResult(w, [primal_objective(Phi, y, weight, w, bias_feature, lam, rows)])
    t = 0
    while result.n_stages < max_stages and not (result.n_stages and _converged(result, tol)):
        violations = 0
        for order in _orders(n, rows, stage_steps, rng, progress):
            violations += _kernels.pegasos_steps(Phi, y, weight, heavy_from, bias_feature, order,
                                                 lam, t, True, w)
            t += order.shape[0]
        result.violations.append(violations)
        result.objective.append(primal_objective(Phi, y, weight, w, bias_feature, lam, rows))
    result.converged = _converged(result, tol)
    return result


#: Dual coordinate descent checks the duality gap when the projected gradients of a full
#: pass span at most a tolerance that starts at ``DCD_PG_TOL_START`` and is divided by
#: ``DCD_PG_TOL_FACTOR`` each time the gap is still above ``tol``, and in any case once
#: the coordinate updates since the last check reach :func:`dcd_check_interval` (at
#: least ``DCD_GAP_CHECK_PASSES`` times n; a check costs a third of a full pass to one).
#: LIBLINEAR stops at a spread of 0.1; there the relative gap was still above 0.1 in
#: every one of the letters-like set's 325 one-vs-one problems, so checking from 0.01 on
#: spares that check and the reset of the shrinking it brings: passes' row visits -18 %
#: on it and -20 % on usps (0.001 gains little more).
DCD_PG_TOL_START = 0.01
DCD_PG_TOL_FACTOR = 10.0
DCD_GAP_CHECK_PASSES = 2
#: Within ``DCD_GAP_NEAR`` times ``tol`` the gap is checked every ``DCD_GAP_CHECK_PASSES``
#: * n updates again: P(w) of the iterates goes up and down, and the smallest P seen at a
#: check is what certifies, so checks there pay.  Predicted intervals all the way to
#: ``tol`` took a9a (m = 800, C = 32) 195 full passes' worth of updates to certify
#: instead of 170.
DCD_GAP_NEAR = 10.0


#: Dual coordinate descent checks the duality gap in a second thread, beside its passes,
#: from this many embedded values (problem rows x embedding columns; 16 MB of float32):
#: a check then reads for a few milliseconds, and handing it to a thread (tens of
#: microseconds) is a small part of that (see :func:`solve_dcd`).
DCD_THREAD_CHECK_VALUES = 2 ** 22


def dcd_check_interval(n, gaps, updates, done, tol):
    """Coordinate updates from a duality-gap check of dual coordinate descent to the next
    periodic one, given the ``gaps`` of the checks so far (the last one just made).

    DCD converges linearly (Hsieh et al. 2008, Theorem 1): log(gap) falls about
    in proportion to the updates.  At the rate of the last ``updates`` (from the
    check before, or from alpha = 0, whose relative gap is 1, to the last
    gap), reaching ``tol`` takes R = log(gap / tol) /
    rate more updates; the next check comes after R / 2, so that the checks
    close in on the predicted end.  At least ``DCD_GAP_CHECK_PASSES`` * n, and
    at most half the ``done`` updates of the whole run so far: DCD is slow
    until the free variables settle and then speeds up, so the early rates
    overestimate R, and the cap keeps a sudden speed-up from overshooting
    ``tol`` by more than a third of the work.  Within ``DCD_GAP_NEAR`` *
    ``tol``, every 2n updates.  Checking every 2n updates throughout cost
    13-24 % of the solve at the paper settings, while log(gap) fell steadily
    from check to check: a9a at m = 800 checked 71 times (0.47 of 3.3 s),
    19 times with these intervals (0.13 s) for the same 170 passes' worth of
    updates; ijcnn1 at m = 5,000 42 times (3.3 of 13.5 s), 16 times (1.2 of
    10.9 s, and 84 passes' worth of updates instead of 90).
    """
    least = DCD_GAP_CHECK_PASSES * n
    gap, gap_before = gaps[-1], (gaps[-2] if len(gaps) > 1 else 1.0)
    if gap <= DCD_GAP_NEAR * tol:
        return least
    cap = max(least, 0.5 * done)
    fall = np.log(gap_before / gap)                 # gap_before >= gap > 0 here
    if not (fall > 0 and tol > 0):                  # no progress, or tol = 0: never near
        return cap
    remaining = np.log(gap / tol) / fall * updates
    return min(max(least, 0.5 * remaining), cap)


def solve_dcd(Phi, y, weight, bias_feature, lam, max_passes, tol, rng, progress=None,
              rows=None, sq_norms=None):
    """Dual coordinate descent with shrinking (Hsieh et al. 2008, Alg. 1 and Sec. 3.2;
    see :func:`fastsvm.nystrom._kernels.dcd_epoch`), each pass in a fresh random
    order of the active variables.

    Stopping, on a certificate: D(alpha) = lambda (sum_i alpha_i - ||w(alpha)||^2 / 2)
    is the dual objective in the scale of P, with box 0 <= alpha_i <= c_i / (lambda n)
    (= s_i C), and P(w) - D(alpha) >= P(w) - P* for the feasible alpha.  It
    stops when (P - D) / P <= ``tol``.  P(w) of the iterates is not monotone
    (D(alpha) is), so the w of the smallest P seen at the checks is kept and
    returned, with the gap of that P to the D of its check.  Computing P costs a
    product with every row, so the gap is checked when a pass over all
    variables has projected gradients within ``pg_tol`` of each other
    (LIBLINEAR's own stopping rule, with ``pg_tol`` = ``DCD_PG_TOL_START`` at
    first and divided by 10 after each failed check), and otherwise after the
    coordinate updates that :func:`dcd_check_interval` sets from the gap's
    progress (at least 2n, at most half the work so far).  As in
    LIBLINEAR, when the shrunk variables meet ``pg_tol`` all are made active
    again for a full pass.  The work is bounded by ``max_passes`` full passes'
    worth of coordinate updates, ``max_passes`` * n row visits, a pass over the
    variables shrinking left active counting as its share of one (a bound on passes
    of any size would stop a run whose last hundreds of passes visit a few percent
    of the rows: ijcnn1 at C = 32, m = 5,000 needs 1,276 passes, the work of 81 full
    ones, to certify 1e-3).  When it is spent the gap is computed once more and the
    run ends unconverged; ``tol=None`` spends all of it.  ``sq_norms``, ||phi_i||^2 of
    every row of the embedding (float64, :func:`embedded_sq_norms`), may be passed
    when they are known (the fit computes them as it writes the embedding), so they
    are computed once instead of once per problem.

    A check of a problem of at least ``DCD_THREAD_CHECK_VALUES`` embedded values runs in
    a second thread (the compiled loop releases the GIL) on a copy of w, while the
    passes go on; its result is taken once they have visited n rows (by then a check,
    one sequential read of every row, is done), or when the next check is due, so
    when a run stops does not depend on the threads' timing.  The checks had been
    22 % of skin_nonskin's solve at C = 32, m = 1,000 (190 checks, 12 s of 55 s), and
    a pass beside a check was as fast as alone (0.12 s; the check 0.065 s).  A
    converged check's w is returned, whatever the passes did after it; those passes
    count in ``epochs`` (``n_iter_``): at most two full passes' worth of updates, but
    many passes where shrinking leaves few rows active (at C = 1 on 250,000-2,000,000
    generated rows, 77-87 passes became 170-226, in less solve time).
    """
    n, rows = _problem_rows(Phi, rows)
    upper = weight / (lam * n)
    alpha = np.zeros(Phi.shape[0])          # alpha_i of the embedding's row i (0 off rows)
    w = np.zeros(Phi.shape[1] + 1)
    if sq_norms is not None:
        q_diag = sq_norms
    elif rows is None:
        q_diag = embedded_sq_norms(Phi)
    else:
        q_diag = np.zeros(Phi.shape[0])
        _kernels.sq_norms_at(Phi, rows, q_diag)
    q_diag = np.maximum(q_diag + bias_feature ** 2, np.finfo(np.float64).tiny)  # 0 never moves
    result = SolverResult(w.copy(), [primal_objective(Phi, y, weight, w, bias_feature, lam,
                                                      rows)])
    threads = (ThreadPoolExecutor(max_workers=1)
               if tol is not None and n * Phi.shape[1] >= DCD_THREAD_CHECK_VALUES else None)

    def start_check():
        """P(w) of a copy of w (a future when checks run in a thread), that copy, and
        D(alpha) now."""
        point = w.copy()
        dual = lam * (alpha.sum() - 0.5 * float(point @ point))
        args = (Phi, y, weight, point, bias_feature, lam, rows)
        primal = threads.submit(primal_objective, *args) if threads else primal_objective(*args)
        return primal, point, dual

    def finish_check(primal, point, dual):
        """Keep the best primal point so far; whether its gap to the check's (monotone)
        dual meets ``tol``."""
        primal = primal.result() if threads else primal
        if primal < result.objective[-1]:
            result.w = point
        best = min(primal, result.objective[-1])
        result.objective.append(best)
        result.gap.append((best - dual) / best)
        return tol is not None and result.gap[-1] <= tol

    active = np.arange(n, dtype=np.int64) if rows is None else rows.copy()
    n_active, pg_max_old, pg_min_old = n, np.inf, -np.inf
    pg_tol = DCD_PG_TOL_START
    updates = 0                                      # coordinate updates since the last check
    interval = DCD_GAP_CHECK_PASSES * n              # updates from one check to the next
    budget = max_passes * n                          # row visits left

    def conclude(check):
        """Finish ``check`` (start_check()'s values, the updates before it, the work done
        then, whether a pass over all variables met pg_tol); unless it meets ``tol``, set
        the interval to the next check, and pg_tol."""
        nonlocal interval, pg_tol
        begun, before, done, on_met = check
        if finish_check(*begun):
            return True
        interval = dcd_check_interval(n, result.gap, before, done, tol)
        if on_met:
            pg_tol /= DCD_PG_TOL_FACTOR
        return False

    pending = None                                   # a check under way
    try:
        while budget > 0:
            rng.shuffle(active[:n_active])
            visited = n_active
            budget -= visited
            n_active, pg_max, pg_min = _kernels.dcd_epoch(Phi, y, bias_feature, upper, q_diag,
                                                          active, n_active, pg_max_old,
                                                          pg_min_old, alpha, w)
            result.epochs += 1
            updates += visited
            if progress is not None:
                progress.update(visited)
            met = pg_max - pg_min <= pg_tol
            due = tol is not None and ((met and visited == n) or updates >= interval)
            if pending is not None and (due or updates >= n):
                check, pending = pending, None
                if conclude(check):
                    result.converged = True
                    break
            if due:
                pending = (start_check(), updates, max_passes * n - budget, met and visited == n)
                updates = 0
            if pending is not None and threads is None:      # done already: concluded now
                check, pending = pending, None
                if conclude(check):
                    result.converged = True
                    break
            if met:
                n_active, pg_max_old, pg_min_old = n, np.inf, -np.inf
            else:   # as LIBLINEAR: a bound that nothing crossed shrinks nothing next pass
                pg_max_old = pg_max if pg_max > 0 else np.inf
                pg_min_old = pg_min if pg_min < 0 else -np.inf
        if pending is not None:     # the work is spent with a check under way
            result.converged = finish_check(*pending[0])
        if not result.converged:    # the work is spent: the last check may still meet tol
            result.converged = finish_check(*start_check())
    finally:
        if threads is not None:
            threads.shutdown()
    return result
