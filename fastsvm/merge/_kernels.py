"""Compiled solvers of the merge problem (Glasmachers & Qaadan, Sec. 2-3).

Merging two support vectors x_a, x_b of equal sign into z = h*x_a + (1-h)*x_b
under the Gaussian kernel k(x, x') = exp(-gamma ||x - x'||^2) uses only
kappa = k(x_a, x_b) and m = alpha_a / (alpha_a + alpha_b), because

    k(x_a, z) = kappa^((1-h)^2),    k(x_b, z) = kappa^(h^2).

The best coefficient of z is alpha_z = (alpha_a + alpha_b) * s(h) with

    s(h) = m * kappa^((1-h)^2) + (1-m) * kappa^(h^2),

and the squared weight degradation
||alpha_a phi(x_a) + alpha_b phi(x_b) - alpha_z phi(z)||^2 equals
(alpha_a + alpha_b)^2 * wd with

    wd(m, kappa) = m^2 + (1-m)^2 + 2 m (1-m) kappa - s(h)^2.

(The paper's text drops the alpha_a*alpha_b factor of the kappa term and mixes
up which kappa power m weights; the formulas here are checked against a brute
force evaluation from kernel values in ``tests/test_merge.py``.)

The best h maximises s on [0, 1].  For kappa >= e^-2 s is unimodal; for
kappa < e^-2 it can have two modes (Lemma 1), one in [0, 1/2] and one in
[1/2, 1], so golden section search runs on both halves and keeps the better
maximiser: the global one, not whichever local one a single search meets.
"""

import math

import numpy as np
from numba import njit

from .._options import JIT_OPTIONS

# Method codes; the estimator maps its strings to these (see fastsvm.merge.METHODS).
GSS = 0
GSS_PRECISE = 1
LOOKUP_H = 2
LOOKUP_WD = 3

EPS_GSS = 0.01
EPS_GSS_PRECISE = 1e-10
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0
_LOG_TWO_MODES = -2.0  # log(e^-2): below it s may have two modes


@njit(**JIT_OPTIONS)
def s_value(h, m, log_kappa):
    """s(h) = m kappa^((1-h)^2) + (1-m) kappa^(h^2), kappa given as its log."""
    return m * math.exp(log_kappa * (1.0 - h) ** 2) + (1.0 - m) * math.exp(log_kappa * h * h)


@njit(**JIT_OPTIONS)
def _golden_max(m, log_kappa, lo, hi, eps):
    """Golden section search for a maximiser of s on [lo, hi], to width eps."""
    a, b = lo, hi
    c = b - _INV_PHI * (b - a)
    d = a + _INV_PHI * (b - a)
    fc = s_value(c, m, log_kappa)
    fd = s_value(d, m, log_kappa)
    while b - a > eps:
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - _INV_PHI * (b - a)
            fc = s_value(c, m, log_kappa)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_PHI * (b - a)
            fd = s_value(d, m, log_kappa)
    return 0.5 * (a + b)


@njit(**JIT_OPTIONS)
def solve_h(m, kappa, eps):
    """Global maximiser h of s on [0, 1] by golden section search to width eps.

    Like the reference BSGD implementation, the search returns the midpoint
    of its final bracket and never evaluates the ends h = 0, 1 themselves.
    When m -> 0 the optimum h ~ m lies below the resolution 0.01 of 'gss',
    which then overshoots (h ~ 0.003: the weight degradation exceeds the
    optimum many times over, see the benchmarks' Table 3).  Snapping to the
    end h = 0 instead was tried and measured worse: merged support vectors
    then stop drifting toward new data (a9a, budget 100: 81.8 % vs 83.9 %
    test accuracy).  Edge cases in closed form: kappa <= 0 (infinitely
    distant points) keeps the heavier point (h = 1 if m > 1/2 else 0);
    kappa >= 1 (identical points) gives the limit h = m.
    """
    if kappa <= 0.0:
        return 1.0 if m > 0.5 else 0.0
    if kappa >= 1.0:
        return m
    log_kappa = math.log(kappa)
    if log_kappa >= _LOG_TWO_MODES:
        return _golden_max(m, log_kappa, 0.0, 1.0, eps)
    h0 = _golden_max(m, log_kappa, 0.0, 0.5, eps)
    h1 = _golden_max(m, log_kappa, 0.5, 1.0, eps)
    # Near-ties (m ~ 1/2: both modes equally good) go to the lower mode, so the
    # choice does not flip with rounding in m or kappa.
    if s_value(h1, m, log_kappa) > s_value(h0, m, log_kappa) * (1.0 + 1e-12):
        return h1
    return h0


@njit(**JIT_OPTIONS)
def s_at(h, m, kappa):
    """s(h) for a kernel value kappa in [0, 1], including kappa = 0 (kappa^0 = 1)."""
    if kappa <= 0.0:
        return (m if h == 1.0 else 0.0) + ((1.0 - m) if h == 0.0 else 0.0)
    return s_value(h, m, math.log(kappa))


@njit(**JIT_OPTIONS)
def wd_at(h, m, kappa):
    """wd(m, kappa) for a given h, with the kappa = 0 edge case handled."""
    s = s_at(h, m, kappa)
    return max(m * m + (1.0 - m) ** 2 + 2.0 * m * (1.0 - m) * kappa - s * s, 0.0)


@njit(**JIT_OPTIONS)
def bilinear(table, m, kappa):
    """Bilinear interpolation of table[i, j] ~ f(m_i, kappa_j) on the uniform grid of [0, 1]^2."""
    g = table.shape[0] - 1
    u = min(max(m, 0.0), 1.0) * g
    v = min(max(kappa, 0.0), 1.0) * g
    i = min(int(u), g - 1)
    j = min(int(v), g - 1)
    fu = u - i
    fv = v - j
    return ((1.0 - fu) * ((1.0 - fv) * table[i, j] + fv * table[i, j + 1])
            + fu * ((1.0 - fv) * table[i + 1, j] + fv * table[i + 1, j + 1]))


@njit(**JIT_OPTIONS)
def solve_one(method, m, kappa, table_h, table_wd):
    """(h, wd) for one merge problem by the method code (see module constants).

    Lookup-WD reads wd from its table; the h of that method is only needed for
    the one pair that is finally merged, and is then solved precisely
    (see :func:`merge_h`), so here it returns the precise h too.
    """
    if method == GSS:
        h = solve_h(m, kappa, EPS_GSS)
        return h, wd_at(h, m, kappa)
    if method == GSS_PRECISE:
        h = solve_h(m, kappa, EPS_GSS_PRECISE)
        return h, wd_at(h, m, kappa)
    if method == LOOKUP_H:
        h = bilinear(table_h, m, kappa)
        return h, wd_at(h, m, kappa)
    return solve_h(m, kappa, EPS_GSS_PRECISE), max(bilinear(table_wd, m, kappa), 0.0)


@njit(**JIT_OPTIONS)
def candidate_wd(method, m, kappa, table_h, table_wd):
    """wd used to rank merge partners: the cheapest path of each method."""
    if method == LOOKUP_WD:
        return max(bilinear(table_wd, m, kappa), 0.0)
    return solve_one(method, m, kappa, table_h, table_wd)[1]


@njit(**JIT_OPTIONS)
def merge_h(method, m, kappa, table_h):
    """h of the pair finally merged (Lookup-WD solves it precisely: once per merge)."""
    if method == GSS:
        return solve_h(m, kappa, EPS_GSS)
    if method == LOOKUP_H:
        return bilinear(table_h, m, kappa)
    return solve_h(m, kappa, EPS_GSS_PRECISE)


@njit(**JIT_OPTIONS)
def solve_many(method, m, kappa, table_h, table_wd, h_out, wd_out):
    """Vectorised :func:`solve_one` over flat arrays."""
    for i in range(m.shape[0]):
        h_out[i], wd_out[i] = solve_one(method, m[i], kappa[i], table_h, table_wd)


@njit(**JIT_OPTIONS)
def build_tables(size):
    """h and wd on the uniform size x size grid of [0, 1]^2 by precise GSS (eps 1e-10)."""
    table_h = np.empty((size, size))
    table_wd = np.empty((size, size))
    for i in range(size):
        m = i / (size - 1)
        for j in range(size):
            kappa = j / (size - 1)
            h = solve_h(m, kappa, EPS_GSS_PRECISE)
            table_h[i, j] = h
            table_wd[i, j] = wd_at(h, m, kappa)
    return table_h, table_wd
