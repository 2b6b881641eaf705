"""Compiled BSGD steps of K one-vs-rest models that share one budget of support vectors.

Model
-----
The K > 2 class problem is split one-vs-rest as in :mod:`fastsvm.multiclass`:
model c separates class c (y_ic = +1) from the others (y_ic = -1), and the
objective is the sum of the K binary objectives of :mod:`fastsvm.bsgd._kernels`,

    sum_c [ lambda/2 ||w_c||^2 + 1/n sum_i c_i max(0, 1 - y_ic <w_c, phi(x_i)>) ],

but every w_c lives in the span of the same B support vectors,
w_c = sum_j alpha_jc phi(sv_j).  One SGD step on example i computes the B
kernel values k(x_i, sv_j) once and all K margins from them (B x K
multiply-adds), and takes each model's step of the binary algorithm: where
model c's margin is below 1 the new support vector x_i gets
beta_ic = c_i y_ic (G(t) - G(t-1)), elsewhere 0.  The scaling
beta = lambda G(t) alpha and the step sizes are those of the binary kernel
(``step_mass``).  Against K separate budgets of B this costs one kernel row
per step instead of K and adds at most one support vector per step instead
of one per violated model.

Budget maintenance with coefficient vectors
-------------------------------------------
Merging sv_a and sv_b into z = h sv_a + (1-h) sv_b with the best coefficient
of z in every model, beta_zc = beta_ac u + beta_bc v with u = k(sv_a, z) =
kappa^((1-h)^2), v = k(sv_b, z) = kappa^(h^2), degrades the K models by

    sum_c ||beta_ac phi(a) + beta_bc phi(b) - beta_zc phi(z)||^2
        = |beta_a|^2 + |beta_b|^2 + 2 kappa <beta_a, beta_b> - S(h),
    S(h) = |beta_a u + beta_b v|^2 = |beta_a|^2 u^2 + 2 <beta_a, beta_b> u v + |beta_b|^2 v^2,

(vectors over the K models), the binary merge problem when K = 1.  a is the
vector of the smallest |beta_a| (ties to the newest, whose kernel row is
known); a partner b must point the same way, <beta_a, beta_b> > 0 (the
analogue of equal signs), else a is removed.

Ranking B candidates by a search over h each would cost more than the step
itself, so candidates are first bounded from below with the binary table:
split beta_b = p beta_a / |beta_a| + q with p = <beta_a, beta_b> / |beta_a| and
q orthogonal to beta_a.  At any h the degradation is exactly

    (|beta_a| + p)^2 wd_h(m, kappa) + |q|^2 (1 - kappa^(2 h^2)),   m = |beta_a| / (|beta_a| + p),

the binary merge problem of the parallel parts (degradation wd_h at that h)
plus the loss of q, which z can only carry as q v.  Both terms are >= 0, so
(|beta_a| + p)^2 wd(m, kappa), the binary optimum read from the lookup
table, is a lower bound.  The candidate of the smallest bound gets an exact
value (golden section search of S to 0.01), and so does every candidate
whose bound is below the best exact value so far; the rest cannot win
(up to the table's interpolation error).  The ranking is thus exact up to
the search's resolution and that error, at the price of a
table lookup per candidate plus a few searches (about 20 per merge on a
5-class set at B = 500).  Both lookup methods rank this way; 'gss' and
'gss-precise' search every candidate (to 0.01 and 1e-10).  The pair chosen
is merged at the h that maximises S, searched on [0, 1] (on both halves
when kappa < e^-2, as in :mod:`fastsvm.merge`) to 1e-10 ('gss': 0.01).

With K = 1 (never used: two classes take the binary kernel) the bound is
the exact optimum.  The golden section search here maximises S rather than
the binary s(h); keeping the binary kernel's own search leaves the paper's
algorithm untouched.
"""

import math

import numpy as np
from numba import njit

from .._cycles import read_cycle_counter
from .._importance import heavy_weight
from .._options import JIT_OPTIONS
from .._packed import column_axpy, kernel_from_dots, rbf_from_dots, store_sv, sv_dots
from ..kernels import PRECOMPUTED
from ..merge._kernels import EPS_GSS, EPS_GSS_PRECISE, GSS, GSS_PRECISE, bilinear
from ._kernels import (REMOVE, ST_ADDED, ST_MAINTENANCE, ST_MERGES, ST_STEPS, TM_MAINTENANCE,
                       TM_SECTION_A, TM_TOTAL, _delete_slot, follow_maintenance, place_merged,
                       self_kernel, slot_of_row, step_mass)

_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0
_LOG_TWO_MODES = -2.0


@njit(**JIT_OPTIONS)
def _s_vector(h, log_kappa, aa, ab, bb):
    """S(h) = aa u^2 + 2 ab u v + bb v^2, u = kappa^((1-h)^2), v = kappa^(h^2)."""
    u = math.exp(log_kappa * (1.0 - h) ** 2)
    v = math.exp(log_kappa * h * h)
    return aa * u * u + 2.0 * ab * u * v + bb * v * v


@njit(**JIT_OPTIONS)
def _golden_max(log_kappa, aa, ab, bb, lo, hi, eps):
    """Golden section search for a maximiser of S on [lo, hi], to width eps."""
    a, b = lo, hi
    c = b - _INV_PHI * (b - a)
    d = a + _INV_PHI * (b - a)
    fc = _s_vector(c, log_kappa, aa, ab, bb)
    fd = _s_vector(d, log_kappa, aa, ab, bb)
    while b - a > eps:
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - _INV_PHI * (b - a)
            fc = _s_vector(c, log_kappa, aa, ab, bb)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_PHI * (b - a)
            fd = _s_vector(d, log_kappa, aa, ab, bb)
    return 0.5 * (a + b)


@njit(**JIT_OPTIONS)
def solve_h_vector(log_kappa, aa, ab, bb, eps):
    """Maximiser h of S on [0, 1] (see the module docstring); log_kappa <= 0 finite."""
    if log_kappa >= 0.0:           # identical points: any z = sv_a = sv_b
        return 0.5
    if log_kappa >= _LOG_TWO_MODES:
        return _golden_max(log_kappa, aa, ab, bb, 0.0, 1.0, eps)
    h0 = _golden_max(log_kappa, aa, ab, bb, 0.0, 0.5, eps)
    h1 = _golden_max(log_kappa, aa, ab, bb, 0.5, 1.0, eps)
    if _s_vector(h1, log_kappa, aa, ab, bb) > _s_vector(h0, log_kappa, aa, ab, bb) * (1.0 + 1e-12):
        return h1
    return h0


@njit(**JIT_OPTIONS)
def merge_degradation(h, log_kappa, aa, ab, bb):
    """Summed squared weight degradation of merging at h (module docstring), >= 0."""
    return max(aa + bb + 2.0 * math.exp(log_kappa) * ab - _s_vector(h, log_kappa, aa, ab, bb),
               0.0)


@njit(**JIT_OPTIONS)
def _dot(beta, i, j):
    """<beta_i, beta_j> over the K models."""
    acc = 0.0
    for c in range(beta.shape[1]):
        acc += beta[i, c] * beta[j, c]
    return acc


@njit(**JIT_OPTIONS)
def _candidate_degradation(beta, a, b, aa, log_kappa, eps):
    """Degradation of merging a and b at the h a golden section search to ``eps`` finds."""
    ab = _dot(beta, a, b)
    bb = _dot(beta, b, b)
    return merge_degradation(solve_h_vector(log_kappa, aa, ab, bb, eps), log_kappa, aa, ab, bb)


@njit(**JIT_OPTIONS)
def _argmin_norm(beta, n_sv):
    """Slot of the smallest |beta_j| (ties, to a relative 1e-12, to the newest vector)."""
    best = n_sv - 1
    best_val = _dot(beta, best, best)
    for j in range(n_sv - 1):
        v = _dot(beta, j, j)
        if v < best_val * (1.0 - 2e-12):
            best, best_val = j, v
    return best


@njit(**JIT_OPTIONS)
def _maintain(svt, sv_sq, beta, sv_idx, n_sv, kvals, gamma, maintenance, method, table_wd,
              lb_row, dots, bits, stats, timers):
    """Reduce n_sv = B+1 support vectors to B by one merge (or removal); returns what
    :func:`fastsvm.bsgd._kernels._maintain` returns: (n_sv, a, b, h).

    ``kvals`` and ``dots`` hold the kernel row of the new vector and its RBF exponents
    (log kernel values), as the margin computation left them.
    """
    t_start = read_cycle_counter()
    stats[ST_MAINTENANCE] += 1
    a = _argmin_norm(beta, n_sv)
    aa = _dot(beta, a, a)
    if maintenance == REMOVE or aa == 0.0:
        n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
        timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
        return n_sv, a, -1, 0.0
    # kernel row of sv_a (kvals) and its exponents (dots): those of the margin computation
    # when a is the new vector, else computed here
    if a != n_sv - 1:
        for j in range(n_sv):
            dots[j] = 0.0
        for f in range(svt.shape[0]):
            if svt[f, a] != 0.0:
                column_axpy(svt[f, a], svt[f], n_sv, dots)
        rbf_from_dots(dots, sv_sq[a], sv_sq, gamma, n_sv, kvals, bits)
    log_kappa_row = dots
    t_a = read_cycle_counter()
    norm_a = math.sqrt(aa)
    rank_eps = EPS_GSS_PRECISE if method == GSS_PRECISE else EPS_GSS
    # lower bounds of every candidate's degradation (inf: not a candidate)
    b = -1
    best_lb = np.inf
    for j in range(n_sv):
        lb_row[j] = np.inf
        if j == a:
            continue
        ab = _dot(beta, a, j)
        if ab <= 0.0:
            continue
        if method == GSS or method == GSS_PRECISE:
            lb = 0.0
        else:
            p = ab / norm_a
            lb = (norm_a + p) ** 2 * max(bilinear(table_wd, norm_a / (norm_a + p), kvals[j]),
                                         0.0)
        lb_row[j] = lb
        if lb < best_lb:
            best_lb, b = lb, j
    best = np.inf
    if b >= 0:
        best = _candidate_degradation(beta, a, b, aa, log_kappa_row[b], rank_eps)
        for j in range(n_sv):
            if lb_row[j] < best and j != b:
                w = _candidate_degradation(beta, a, j, aa, log_kappa_row[j], rank_eps)
                if w < best:
                    best, b = w, j
    if b < 0:  # no partner pointing the same way: remove
        timers[TM_SECTION_A] += read_cycle_counter() - t_a
        n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
        timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
        return n_sv, a, -1, 0.0
    log_kappa = log_kappa_row[b]
    ab = _dot(beta, a, b)
    bb = _dot(beta, b, b)
    h = solve_h_vector(log_kappa, aa, ab, bb, EPS_GSS if method == GSS else EPS_GSS_PRECISE)
    timers[TM_SECTION_A] += read_cycle_counter() - t_a
    u = math.exp(log_kappa * (1.0 - h) ** 2)
    v = math.exp(log_kappa * h * h)
    place_merged(svt, sv_sq, sv_idx, a, b, h)
    for c in range(beta.shape[1]):
        beta[b, c] = beta[a, c] * u + beta[b, c] * v
    n_sv = _delete_slot(svt, sv_sq, beta, sv_idx, n_sv, a)
    stats[ST_MERGES] += 1
    timers[TM_MAINTENANCE] += read_cycle_counter() - t_start
    return n_sv, a, b, h


@njit(**JIT_OPTIONS)
def sgd_steps_shared(X, data, indices, indptr, is_sparse, sq_norms, y, weight, heavy_from, order,
                     E, t0, lam, code, gamma, degree, coef0, budget, horizon, svt, sv_sq, beta,
                     sv_idx, n_sv, bias, bias_scale, maintenance, method, table_wd, stats,
                     timers):
    """One SGD step of all K models per entry of ``order``, from step t0 + 1.

    As :func:`fastsvm.bsgd._kernels.sgd_steps`, with ``y`` the class index
    (int64, 0..K-1) of every example, ``beta`` of shape (capacity, K) and ``bias`` of
    shape (K,), each model's scaled offset.
    Returns the new number of support vectors.
    """
    t_start = read_cycle_counter()
    cap = sv_sq.shape[0]
    n_models = beta.shape[1]
    dots = np.empty(cap)
    kvals = np.empty(cap)
    lb_row = np.empty(cap)
    bits = np.empty(cap, dtype=np.int64)
    f = np.empty(n_models)
    blocked = E.shape[0] > 0
    col = np.arange(cap)            # as in sgd_steps
    free = n_sv + order.shape[0]
    t = t0
    for k in range(order.shape[0]):
        i = order[k]
        t += 1
        for c in range(n_models):
            f[c] = bias[c] if bias_scale > 0.0 else 0.0
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
                kj = kvals[j]
                for c in range(n_models):
                    f[c] += beta[j, c] * kj
        scale = 1.0 / (lam * step_mass(t - 1, horizon)) if t > 1 else 0.0
        mass = step_mass(t, horizon) - step_mass(t - 1, horizon)
        self_k = -1.0                   # k(x_i, x_i) + c^2, once a heavy row needs it
        violated = False
        for c in range(n_models):
            y_c = 1.0 if y[i] == c else -1.0
            if y_c * f[c] * scale < 1.0:
                weight_c = weight[i]
                if weight_c > heavy_from:
                    if self_k < 0.0:
                        self_k = self_kernel(X, i, sq_norms[i], code, gamma, degree,
                                             coef0) + bias_scale
                    scaled = lam * step_mass(t, horizon)
                    weight_c = heavy_weight(weight_c, heavy_from, y_c * f[c] / scaled,
                                            self_k * mass / scaled)
                step = weight_c * mass
                beta[n_sv, c] = y_c * step
                bias[c] += bias_scale * y_c * step
                violated = True
            else:
                beta[n_sv, c] = 0.0
        slot = slot_of_row(sv_idx, n_sv, i) if violated else -1
        if slot >= 0:           # the row's own vector takes the steps
            for c in range(n_models):
                beta[slot, c] += beta[n_sv, c]
            stats[ST_ADDED] += 1
        elif violated:
            if code != PRECOMPUTED:
                store_sv(X, data, indices, indptr, is_sparse, i, svt, n_sv)
            sv_sq[n_sv] = sq_norms[i]
            sv_idx[n_sv] = i
            kvals[n_sv] = 1.0
            if blocked:
                col[n_sv] = E.shape[1] - 2 * E.shape[0] + k      # row k's column
            n_sv += 1
            stats[ST_ADDED] += 1
            if n_sv > budget:
                n_sv, a, b, h = _maintain(svt, sv_sq, beta, sv_idx, n_sv, kvals, gamma,
                                          maintenance, method, table_wd, lb_row, dots, bits,
                                          stats, timers)
                if blocked:
                    free = follow_maintenance(E, col, k, n_sv, a, b, h, free)
    stats[ST_STEPS] += order.shape[0]
    timers[TM_TOTAL] += read_cycle_counter() - t_start
    return n_sv

