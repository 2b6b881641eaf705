"""Compiled BSGD steps: Pegasos on a budget with merging (Glasmachers & Qaadan, Alg. 1).

Model and scaling
-----------------
Primal objective (paper eq. 1, no offset b; see "Offset" below), with the step weights
c_i = s_i n / S of weighted samples (1 without weights, see :mod:`fastsvm.base`):

    P(w) = lambda/2 ||w||^2 + 1/n sum_i c_i max(0, 1 - y_i <w, phi(x_i)>),

SGD step t (t = 1, 2, ...) on example i with eta_t = rho_t / lambda:

    w <- (1 - rho_t) w + [y_i <w, phi(x_i)> < 1] * c_i y_i rho_t/lambda * phi(x_i),

the unweighted step with the subgradient scaled by the sample's weight, up to
100 times the median weight; the weight above it only as far as it raises the
margin to 1 ("Heavy rows" below).

Step sizes
----------
Take rho_t = 1 - G(t-1)/G(t) for an increasing G with G(0) = 0.  Then

    w_t = 1/(lambda G(t)) sum_{s<=t} (G(s) - G(s-1)) [violation at s] c_s y_s phi(x_s),

so with w = sum_j alpha_j phi(sv_j) we store beta_j = lambda G(t) alpha_j:
the shrink factor (1 - rho_t) = G(t-1)/G(t) is absorbed exactly, no
coefficient is rescaled, a margin violation adds a support vector with
beta = c_i y_i (G(t) - G(t-1)), and alpha_j = beta_j / (lambda G(t))
(``step_mass``).

* ``horizon == 0``, Pegasos (the paper's Alg. 1): G(t) = t, eta_t = 1/(lambda t).
  Every violation ends with the same weight 1/(lambda T) after T steps.
* ``horizon == T``, linear decay: G(t) = t (2T + 1 - t), so
  rho_t = (1/t) * 2(T + 1 - t)/(2T + 1 - t), Pegasos' step times a factor
  falling from 1 to 2/(T + 1).  After T steps the violation at step s has
  the weight 2(T + 1 - s) / (lambda T (T + 1)): the weight it has in the
  linearly weighted average sum_t t w_t / sum_t t of Pegasos iterates
  (Lacoste-Julien, Schmidt & Bach 2012), because
  sum_t t w_t = 1/lambda sum_t sum_{s<=t} u_s = 1/lambda sum_s (T + 1 - s) u_s.
  The last iterate carries the averaged weights (a linearly decaying step
  as the last-iterate form of averaging: Defazio, Cutkosky, Mehta &
  Mishchenko 2023); the margins along the way are those of these iterates.

Heavy rows
----------
A violated row of step weight c_i above c_heavy, 100 times the median of the pass's
rows, takes the importance-aware step of :mod:`fastsvm._importance`: at least
c_heavy, and beyond it only as much of c_i as brings its margin after the step to 1.
In the
scaled terms above, its margin after the shrink is y_i (sum_j beta_j k(sv_j, x_i)
+ bias) / (lambda G(t)), and a step of weight 1 moves it by (k(x_i, x_i) + c^2)
(G(t) - G(t-1)) / (lambda G(t)).

Offset
------
The offset b of SVC's objective is trained as the weight of a constant
feature of value c (``intercept_scaling``, as in LIBLINEAR and scikit-learn's
``LinearSVC``): the kernel k(x, x') + c^2, the objective

    P(w, b) = lambda/2 (||w||^2 + b^2 / c^2) + 1/n sum_i c_i max(0, 1 - y_i (<w, phi(x_i)> + b)).

b is kept scaled like beta, as ``bias`` = lambda G(t) b: a violation adds c^2
times its step to it (its step times the constant feature's value c, times c
in the margin), and b = bias / (lambda G(t)).  Budget maintenance never
touches it (the constant feature is not merged).  ``bias_scale`` = c^2 = 0 is
the paper's objective without offset (an offset trained before, in an earlier
``partial_fit`` call, is then ignored).

Kernels
-------
Kernel values come from dot products (``kernel_from_dots``: linear, poly,
RBF, sigmoid) or, with ``code == PRECOMPUTED``, are looked up in the n x n
kernel matrix passed as the dense X (``sv_idx`` holds the row of each support
vector; nothing else of a support vector is stored).  Merging needs the RBF
kernel, or the linear one, where it is exact (see "Budget maintenance" below); the
estimator allows only removal for the others.
The margin before step t is f(x_i) = (sum_j beta_j k(sv_j, x_i) + bias) / (lambda G(t-1)).
Merging is linear in the coefficients, so it works on beta unchanged (every
weight degradation is scaled by the same (lambda t)^2, which does not change
which pair is best).

Storage
-------
Support vectors are kept feature-major, ``svt[f, j]`` (n_features x capacity),
so the B dot products of one step are contiguous axpy loops over j, for a
dense row (n_features axpys) or a sparse CSR row (nnz axpys).  Squared norms
are cached, ||x - sv||^2 = ||x||^2 + ||sv||^2 - 2 x.sv.

On dense rows of many features a pass over every support vector per step
is bound by memory (2,000 vectors of 300 features: 4.8 MB read per step).
There the driver gives a call a block of steps with the dot products of
their rows with the support vectors, and with each other, from one BLAS
product (:func:`fastsvm.bsgd.solver.block_dots`), and the block's steps
follow the changes to the support vectors: a row a step adds has its column
of the product, a merged vector z = h sv_a + (1 - h) sv_b gets the column
h <x, sv_a> + (1 - h) <x, sv_b> for the block's later rows
(:func:`follow_maintenance`).  So every step sees the dot products with the
vectors as they are at that step, as before up to rounding.

Budget maintenance (Alg. 1, corrected)
--------------------------------------
When B+1 support vectors exist: take a = argmin |beta_j| (ties, up to a
relative 1e-12, go to the newest vector, whose kernel row the margin
computation has just evaluated, so no kernel value is computed twice); for each b of the same sign,
m = beta_a/(beta_a + beta_b), kappa = k(sv_a, sv_b), rank by
(beta_a + beta_b)^2 wd(m, kappa); merge the best pair into
z = h sv_a + (1-h) sv_b with beta_z = (beta_a + beta_b) s(h).  If no vector
shares a's sign, a is removed.  ``maintenance=REMOVE`` always removes a.

With the linear kernel (``code == LINEAR``) a merge is exact: phi(x) = x, so
z = h sv_a + (1-h) sv_b with h = m = beta_a/(beta_a + beta_b) and
beta_z = beta_a + beta_b gives beta_z z = beta_a sv_a + beta_b sv_b, the same w
(s(h) = 1: zero degradation for every partner of the same sign).  The
partner is the largest |beta_b| of a's sign, which needs no kernel row; where
no vector shares a's sign, a becomes the smallest vector of the other sign,
of which there are at least two (B >= 2).  The model is then that of
unbudgeted steps, up to rounding, whatever the budget.

A margin violation by a training row that is still a support vector of its
own (``sv_idx``, not merged) adds the step to that vector's beta instead of
adding the row again: the same w, without spending the budget on a duplicate.
Alg. 1 adds the row again; merging then joins the two copies at zero
degradation, but only once the budget is full, so a budget above the rows
filled with copies first (and removal, which never merges, kept them).
Since s(h) >= max(m, 1-m), a merged |beta| never falls below its larger
parent's (up to rounding), so without weights and within one lambda the
vector just added (|beta| = G(t) - G(t-1), which does not grow with t) is
always a smallest one and its kernel row is always reused; with weights, or after ``partial_fit`` rescales beta for a new
lambda, an older vector can be the smallest and its row is computed.
``sv_idx`` of a merged vector is -1 (it is no training row).

Counters
--------
``stats`` (int64) and ``timers`` (int64 cycle counts) accumulate across calls;
index constants below.  Section A is the time spent computing wd (and h) of
all candidate pairs, section B the rest of budget maintenance (finding the
smallest coefficient, the kernel row, building z): Fig. 3 of the paper.
``diag`` != 0 additionally solves every merge event with GSS, Lookup-h,
Lookup-WD and GSS-precise side by side (Table 3), without changing the
training path, which follows ``method``.
"""


import numpy as np
from numba import njit

from .._cycles import read_cycle_counter
from .._importance import heavy_weight
from .._options import JIT_OPTIONS
from .._packed import (column_axpy, kernel_from_dot, kernel_from_dots, rbf_from_dots, store_sv,
                      sv_dots)
from ..kernels import LINEAR, PRECOMPUTED
from ..merge._kernels import (GSS, GSS_PRECISE, LOOKUP_H, LOOKUP_WD, candidate_wd, merge_h,
                              s_at, wd_at)

MERGE = 0
REMOVE = 1

# stats indices
ST_STEPS = 0          # SGD steps taken
ST_ADDED = 1          # margin violations (support vectors added)
ST_MAINTENANCE = 2    # budget maintenance events
ST_MERGES = 3         # events resolved by a merge (the rest removed a vector)
ST_DIAG_EVENTS = 4    # diagnostic: merge events compared
ST_DIAG_EQUAL_GSS_WD = 5   # GSS and Lookup-WD made the same decision
ST_DIAG_EQUAL_GSS_H = 6    # GSS and Lookup-h made the same decision
N_STATS = 7

# timers indices (cycle counts)
TM_TOTAL = 0          # whole kernel call
TM_MAINTENANCE = 1    # all budget maintenance
TM_SECTION_A = 2      # computing wd / h of the candidates
N_TIMERS = 3

# diag_sums indices: sum over events of the degradation each method's decision incurs
DG_GSS = 0
DG_LOOKUP_H = 1
DG_LOOKUP_WD = 2
DG_GSS_PRECISE = 3
N_DIAG = 4


@njit(**JIT_OPTIONS)
def step_mass(t, horizon):
    """G(t), with beta = lambda G(t) alpha after step t: t (Pegasos, ``horizon == 0``) or
    t (2 horizon + 1 - t) (linear decay over ``horizon`` steps); see "Step sizes" above."""
    if horizon == 0:
        return float(t)
    return float(t) * float(2 * horizon + 1 - t)


@njit(**JIT_OPTIONS)
def self_kernel(X, i, sq_norm, code, gamma, degree, coef0):
    """k(x_i, x_i): looked up on the diagonal of the kernel matrix X for ``PRECOMPUTED``,
    else from the row's squared norm."""
    if code == PRECOMPUTED:
        return X[i, i]
    return kernel_from_dot(code, sq_norm, sq_norm, sq_norm, gamma, degree, coef0)


@njit(**JIT_OPTIONS)
def _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, slot):
    """Remove support vector ``slot`` by moving the last one into it; returns n_sv - 1."""
    last = n_sv - 1
    if slot != last:
        for f in range(svt.shape[0]):
            svt[f, slot] = svt[f, last]
        sv_sq[slot] = sv_sq[last]
        beta[slot] = beta[last]
        sv_idx[slot] = sv_idx[last]
    return last


@njit(**JIT_OPTIONS)
def _argmin_abs(beta, n_sv):
    """Index of the smallest |beta_j|.

    Ties go to the vector just added (the last slot), whose kernel row is
    already known; a magnitude counts as smaller only by more than a relative
    1e-12, so a merged coefficient that rounds one ulp below an equal one
    does not flip the choice.  Among older vectors the lowest slot wins.
    """
    best = n_sv - 1
    best_val = abs(beta[best])
    for j in range(n_sv - 1):
        v = abs(beta[j])
        if v < best_val * (1.0 - 1e-12):
            best, best_val = j, v
    return best


@njit(**JIT_OPTIONS)
def slot_of_row(sv_idx, n_sv, i):
    """The slot of the support vector that is training row i (unmerged), or -1."""
    for j in range(n_sv):
        if sv_idx[j] == i:
            return j
    return -1


@njit(**JIT_OPTIONS)
def _same_decision(j0, w0, j1, w1):
    """Same partner, or the same degradation (a duplicate point: an equivalent merge)."""
    return j0 == j1 or abs(w0 - w1) <= 1e-9 * max(w0, w1)


@njit(**JIT_OPTIONS)
def _diagnose(a, n_sv, beta, kappa_row, m_row, table_h, table_wd, stats, diag_sums):
    """Table 3: decisions of GSS, Lookup-h, Lookup-WD and GSS-precise on one event.

    Accumulates, per method, the squared weight degradation its decision
    actually incurs (the chosen pair merged at the method's h), so that
    sum(method) / sum(GSS-precise) is the factor by which the method's
    degradation exceeds the precise optimum.
    """
    best = np.full(4, -1)
    best_wd = np.full(4, np.inf)     # each method's own ranking value
    incurred = np.zeros(4)           # true degradation of each method's choice
    for j in range(n_sv):
        if j == a or beta[j] * beta[a] <= 0.0:
            continue
        m, kappa = m_row[j], kappa_row[j]
        scale = (beta[a] + beta[j]) ** 2
        for k, method in enumerate((GSS, LOOKUP_H, LOOKUP_WD, GSS_PRECISE)):
            w = scale * candidate_wd(method, m, kappa, table_h, table_wd)
            if w < best_wd[k]:
                best_wd[k] = w
                best[k] = j
                incurred[k] = scale * wd_at(merge_h(method, m, kappa, table_h), m, kappa)
    if best[3] < 0:
        return
    stats[ST_DIAG_EVENTS] += 1
    if _same_decision(best[0], incurred[0], best[2], incurred[2]):
        stats[ST_DIAG_EQUAL_GSS_WD] += 1
    if _same_decision(best[0], incurred[0], best[1], incurred[1]):
        stats[ST_DIAG_EQUAL_GSS_H] += 1
    for k in range(4):
        diag_sums[k] += incurred[k]


@njit(**JIT_OPTIONS)
def place_merged(svt, sv_sq, sv_idx, a, b, h):
    """Slot b becomes the merged vector z = h sv_a + (1-h) sv_b (no training row), its
    squared norm cached; the caller sets its coefficient and deletes slot a."""
    sq = 0.0
    for f in range(svt.shape[0]):
        z = h * svt[f, a] + (1.0 - h) * svt[f, b]
        svt[f, b] = z
        sq += z * z
    sv_sq[b] = sq
    sv_idx[b] = -1


@njit(**JIT_OPTIONS)
def _largest_of_sign(beta, n_sv, a):
    """The slot j != a of the largest |beta_j| with beta_a's sign, or -1."""
    b = -1
    for j in range(n_sv):
        if j != a and beta[j] * beta[a] > 0.0 and (b < 0 or abs(beta[j]) > abs(beta[b])):
            b = j
    return b


@njit(**JIT_OPTIONS)
def _merge_linear(svt, sv_sq, beta, sv_idx, n_sv, a):
    """The linear kernel's exact merge of the smallest vector a, beta_a != 0 (see "Budget
    maintenance" above); returns what :func:`_maintain` returns."""
    b = _largest_of_sign(beta, n_sv, a)
    if b < 0:       # every other vector has the other sign, and |beta_j| >= |beta_a| > 0
        other = -1
        for j in range(n_sv):
            if j != a and (other < 0 or abs(beta[j]) < abs(beta[other])):
                other = j
        a = other
        b = _largest_of_sign(beta, n_sv, a)
    h = beta[a] / (beta[a] + beta[b])
    place_merged(svt, sv_sq, sv_idx, a, b, h)
    beta[b] += beta[a]
    return _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a), a, b, h


@njit(**JIT_OPTIONS)
def _maintain(svt, sv_sq, beta, sv_idx, n_sv, kvals, code, gamma, maintenance, method, diag,
              table_h, table_wd, kappa_row, m_row, wd_row, dots, bits, stats, timers, diag_sums):
    """Reduce n_sv = B+1 support vectors to B (Alg. 1); returns (the new n_sv, the slot a
    deleted (the last vector moved into it), the slot b that now holds the merged vector
    z = h sv_a + (1 - h) sv_b, or -1 where sv_a was removed, and h)."""
    t_start = read_cycle_counter()
    stats[ST_MAINTENANCE] += 1
    a = _argmin_abs(beta, n_sv)
    if maintenance == REMOVE or beta[a] == 0.0:
        n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
        timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
        return n_sv, a, -1, 0.0
    if code == LINEAR:
        n_sv, a, b, h = _merge_linear(svt, sv_sq, beta, sv_idx, n_sv, a)
        stats[ST_MERGES] += 1
        timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
        return n_sv, a, b, h
    # kernel row of sv_a: reuse the margin computation's row when a is the new vector
    if a == n_sv - 1:
        for j in range(n_sv - 1):
            kappa_row[j] = kvals[j]
    else:
        for j in range(n_sv):
            dots[j] = 0.0
        for f in range(svt.shape[0]):
            if svt[f, a] != 0.0:
                column_axpy(svt[f, a], svt[f], n_sv, dots)
        rbf_from_dots(dots, sv_sq[a], sv_sq, gamma, n_sv, kappa_row, bits)
    kappa_row[a] = 1.0
    for j in range(n_sv):
        m_row[j] = beta[a] / (beta[a] + beta[j]) if beta[j] * beta[a] > 0.0 else -1.0
    # section A: the merge problems of all candidate partners.  Lookup-WD looks up every
    # slot, the others' too (m_row -1 reads the table's m = 0 edge), without a branch on
    # the partner's sign: in random order, a mispredicted branch for about every other
    # slot cost more than the lookup itself
    t_a = read_cycle_counter()
    if method == LOOKUP_WD:
        for j in range(n_sv):
            wd_row[j] = candidate_wd(LOOKUP_WD, m_row[j], kappa_row[j], table_h, table_wd)
    else:
        for j in range(n_sv):
            if j != a and m_row[j] >= 0.0:
                wd_row[j] = candidate_wd(method, m_row[j], kappa_row[j], table_h, table_wd)
    timers[TM_SECTION_A] += read_cycle_counter() - t_a
    b = -1
    best = np.inf
    for j in range(n_sv):
        w = (beta[a] + beta[j]) ** 2 * wd_row[j] if j != a and m_row[j] >= 0.0 else np.inf
        if w < best:
            best, b = w, j
    if diag:
        _diagnose(a, n_sv, beta, kappa_row, m_row, table_h, table_wd, stats, diag_sums)
    if b < 0:  # no partner of the same sign: remove
        n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
        timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
        return n_sv, a, -1, 0.0
    t_h = read_cycle_counter()
    m, kappa = m_row[b], kappa_row[b]
    h = merge_h(method, m, kappa, table_h)
    timers[TM_SECTION_A] += read_cycle_counter() - t_h
    place_merged(svt, sv_sq, sv_idx, a, b, h)
    beta[b] = (beta[a] + beta[b]) * s_at(h, m, kappa)
    n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
    stats[ST_MERGES] += 1
    timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
    return n_sv, a, b, h


@njit(**JIT_OPTIONS)
def follow_maintenance(E, col, r, n_sv, a, b, h, free):
    """Follow a maintenance event of :func:`_maintain` at block step r in ``col`` (see
    :func:`sgd_steps`): slot b now holds z = h sv_a + (1 - h) sv_b (b >= 0), whose dot
    products with the block's later rows are h <x, sv_a> + (1 - h) <x, sv_b> (written to
    column ``free``), and slot a the vector of slot n_sv (the new number of vectors).
    Returns the next free column."""
    if b >= 0:
        ca, cb = col[a], col[b]
        for q in range(r + 1, E.shape[0]):
            E[q, free] = h * E[q, ca] + (1.0 - h) * E[q, cb]
        col[b] = free
        free += 1
    col[a] = col[n_sv]
    return free


@njit(**JIT_OPTIONS)
def sgd_steps(X, data, indices, indptr, is_sparse, sq_norms, y, weight, heavy_from, order, E, t0,
              lam, code, gamma, degree, coef0, budget, horizon, svt, sv_sq, beta, sv_idx, n_sv,
              bias, bias_scale, maintenance, method, diag, table_h, table_wd, stats, timers,
              diag_sums):
    """Run one SGD step per entry of ``order`` (example indices), from step t0 + 1.

    Parameters are arrays and scalars only (see the module docstring);
    ``weight`` holds the step weight c_i of every example, ``heavy_from`` the weight
    c_heavy above which a row is heavy (see "Heavy rows"), ``horizon`` selects
    the step sizes (0: Pegasos, T: linear decay over T steps) and ``code`` the
    kernel (with ``PRECOMPUTED``, X is the kernel matrix and ``svt`` has no
    rows).  The state ``svt``, ``sv_sq``, ``beta``, ``sv_idx`` (capacity at
    least min(budget, n_sv + the rows of ``order`` not in ``sv_idx``) + 1) and
    ``bias`` (shape (1,), the scaled offset; see "Offset" above, ``bias_scale``
    = c^2, 0 for none) is updated in place; returns
    the new number of support vectors.  Indices in ``order`` and in ``indices`` must be valid: nothing
    here is bounds-checked.

    ``E`` is empty, or (dense rows, see "Storage" above) the dot products of the rows of
    ``order`` with the support vectors and each other,
    :func:`fastsvm.bsgd.solver.block_dots`: then a step's dot products are looked up
    there (``col[j]``: the column of the vector in slot j) instead of computed.
    """
    t_start = read_cycle_counter()
    cap = sv_sq.shape[0]
    dots = np.empty(cap)
    kvals = np.empty(cap)
    kappa_row = np.empty(cap)
    m_row = np.empty(cap)
    wd_row = np.empty(cap)
    bits = np.empty(cap, dtype=np.int64)
    blocked = E.shape[0] > 0
    col = np.arange(cap)            # slot j's column of E: its vector's at the start
    free = n_sv + order.shape[0]    # E's next column for a merged vector
    t = t0
    for k in range(order.shape[0]):
        i = order[k]
        t += 1
        acc = bias[0] if bias_scale > 0.0 else 0.0
        if n_sv > 0:
            if code == PRECOMPUTED:
                for j in range(n_sv):
                    kvals[j] = X[i, sv_idx[j]]
            else:
                if blocked:
                    for j in range(n_sv):
                        dots[j] = E[k, col[j]]
                else:
                    sv_dots(X, data, indices, indptr, is_sparse, i, svt, n_sv, dots)
                kernel_from_dots(code, dots, sq_norms[i], sv_sq, gamma, degree, coef0, n_sv,
                                 kvals, bits)
            for j in range(n_sv):
                acc += beta[j] * kvals[j]
        # acc is 0 before the first step (t = 1, where G(t - 1) = 0)
        margin = y[i] * acc / (lam * step_mass(t - 1, horizon)) if acc != 0.0 else 0.0
        if margin < 1.0:
            mass = step_mass(t, horizon) - step_mass(t - 1, horizon)
            c = weight[i]
            if c > heavy_from:          # see "Heavy rows"
                scaled = lam * step_mass(t, horizon)
                self_k = self_kernel(X, i, sq_norms[i], code, gamma, degree, coef0) + bias_scale
                c = heavy_weight(c, heavy_from, y[i] * acc / scaled, self_k * mass / scaled)
            step = c * y[i] * mass
            bias[0] += bias_scale * step
            slot = slot_of_row(sv_idx, n_sv, i)
            if slot >= 0:       # the row's own vector takes the step (see above)
                beta[slot] += step
                stats[ST_ADDED] += 1
                continue
            if code != PRECOMPUTED:
                store_sv(X, data, indices, indptr, is_sparse, i, svt, n_sv)
            sv_sq[n_sv] = sq_norms[i]
            beta[n_sv] = step
            sv_idx[n_sv] = i
            kvals[n_sv] = 1.0           # k(x_i, x_i) of the RBF kernel, which merging reads
            if blocked:
                col[n_sv] = E.shape[1] - 2 * E.shape[0] + k      # row k's column
            n_sv += 1
            stats[ST_ADDED] += 1
            if n_sv > budget:
                n_sv, a, b, h = _maintain(svt, sv_sq, beta, sv_idx, n_sv, kvals, code, gamma,
                                          maintenance, method, diag, table_h, table_wd,
                                          kappa_row, m_row, wd_row, dots, bits, stats, timers,
                                          diag_sums)
                if blocked:
                    free = follow_maintenance(E, col, k, n_sv, a, b, h, free)
    stats[ST_STEPS] += order.shape[0]
    timers[TM_TOTAL] += read_cycle_counter() - t_start
    return n_sv
