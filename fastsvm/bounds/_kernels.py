"""Compiled kernels of the margin bounds (Guillory & Bilmes, "Practical Methods for
Exploiting Bounds on Change in the Margin").

The bound (paper eq. 2)
-----------------------
For a reference model w' whose margins u_i = y_i <w', x_i> were stored, and any w,

    u_i - ||w - w'|| ||x_i||  <=  y_i <w, x_i>  <=  u_i + ||w - w'|| ||x_i||     (Cauchy-Schwarz).

A point whose bounds fall inside one piece of the loss need not be looked at.

Huber loss (eq. 5, Chapelle 2007), margin z, width h:

    l(z) = 1 - z                  for z <= 1 - h,
           (1 + h - z)^2 / (4h)   for 1 - h < z < 1 + h,
           0                      for z >= 1 + h,

with derivative -1, -(1 + h - z) / (2h), 0.  It is continuous with a
continuous derivative, so a point put into the neighbouring piece by rounding
changes loss and gradient by O(eps^2 / h): the pruned evaluation is exact to
rounding without any safety margin.

Sorted evaluation (Algorithms 1 and 2, with the offset of Sec. 3)
-----------------------------------------------------------------
The points are kept in two lists, positive and negative labels, each sorted by
its stored margin u_i = y_i (<w', x_i> + b').  Within a list of label s the
offset moves every margin by the same s (b - b'), so with
v_i = u_i + s (b - b') and m_delta = ||w - w'|| max_list ||x_i||:

* v_i - m_delta >= 1 + h: zero loss, and so is every later point;
* v_i + m_delta <= 1 - h: linear loss, and so is every earlier point.  The
  p points of the prefix contribute loss W_p - <w, Sum_p> - s b W_p and
  gradient -Sum_p (-s W_p for b), where Sum_p = sum_{j < p} c_j y_j x_j and
  W_p = sum_{j < p} c_j in sorted order, c_j the sample weights (all 1
  without weights: then W_p = p, the paper's count).

Algorithm 2 walks forward and backward from ``Boundary`` (the first sorted
position with u >= 1 at the last sort) and computes the margin of every point
it passes until those exits.  ``Sum_p`` and ``W_p`` are either read from
stored prefix sums (dense variant) or, for sparse data (Sec. 3), obtained
from the stored ``Sum_Boundary`` and ``W_Boundary`` by subtracting the points
walked over.  Weights change no decision of the walk, only the sums, so the
weighted evaluation is as exact as the unweighted one.

The re-sort rule (Sec. 3)
-------------------------
State in a small float64 array (indices R_*): re-sort when at least
SortPeriod iterations passed since the last sort and either (a) the last
iteration pruned fewer than half of the points it had to evaluate, or
(b) pruned_since_sort - iterations_since_sort * pruned_last > SortCost.
An iteration that prunes nothing switches to plain evaluation until the next
re-sort (Sec. 4.2).  Ours: no re-sort where the points left to evaluate up to
the last iteration (``R_LAST``; Pegasos' T, none for gradient descent) are
fewer than SortCost, since it could not pay for itself (Pegasos' refresh due
at its last iteration had cost 5 % of the margins at one point per step).
"""

import numpy as np
from numba import njit

from .._importance import heavy_weight
from .._options import JIT_OPTIONS
from .._packed import kernel_from_dot, kernel_from_dots, row_axpy, row_dot, store_sv, sv_dots
from ..kernels import PRECOMPUTED

# re-sort rule state indices
R_PERIOD = 0          # SortPeriod, iterations
R_COST = 1            # SortCost, in points
R_LAST_SORT = 2       # iteration of the last sort
R_PRUNED_SINCE = 3    # points pruned since the last sort
R_PRUNED_LAST = 4     # points pruned by the last iteration
R_PLAIN = 5           # 1.0 while plain evaluation is used
R_LAST = 6            # the last iteration (inf: not known)
N_RULE = 7

# Pegasos counters
PC_EXAMINED = 0       # margins computed for batch points
PC_REFRESHED = 1      # margins computed to refresh the stored margins
PC_REFRESHES = 2      # number of refreshes
N_PEGASOS_COUNTERS = 3

#: Relative safety margin of the Pegasos bound tests: the hinge's subgradient
#: jumps at margin 1, so a point is only pruned when its bound clears 1 by more
#: than the rounding error of a stored margin.
HINGE_SLACK = 1e-9

#: Relative slack on ||w - w_ref||^2 = ||w||^2 - 2 <w, w_ref> + ||w_ref||^2, whose three
#: terms are updated incrementally: it covers their cancellation and drift.
DIST_SLACK = 1e-9

#: The largest float64: :func:`pegasos_steps` stops where ||v||^2 is not at most this.
FLOAT_MAX = np.finfo(np.float64).max

#: A scale of the dual variables and of w (alpha = scale * stored values, w = scale * v or
#: scale * sum_s coef_s phi(sv_s)) below this is folded into the stored values (see
#: :func:`pegasos_steps` and :func:`kernel_pegasos_steps`).  Between two folds the scale
#: then spans at most six orders of magnitude, which keeps the lazily averaged sums (scale
#: sum times stored value, minus the lag) accurate to about 1e-10: with a floor of 1e-100,
#: on unscaled features (skin_nonskin's 0-255, projected at every step) they lost every
#: digit.  Without projections the scale is about t_fold / t, so a fold comes after a
#: millionfold t: never.
SCALE_FLOOR = 1e-6


def new_rule(period, cost, last=np.inf):
    """Re-sort rule state for SortPeriod ``period``, SortCost ``cost`` and the ``last``
    iteration."""
    rule = np.zeros(N_RULE)
    rule[R_PERIOD] = period
    rule[R_COST] = cost
    rule[R_LAST] = last
    return rule


@njit(**JIT_OPTIONS)
def resort_due(rule, t, n_eval):
    """Whether iteration t (which evaluates n_eval points) should re-sort first."""
    since = t - rule[R_LAST_SORT]
    if since < rule[R_PERIOD] or (rule[R_LAST] - t + 1) * n_eval < rule[R_COST]:
        return False
    if rule[R_PRUNED_LAST] < 0.5 * n_eval:
        return True
    return rule[R_PRUNED_SINCE] - since * rule[R_PRUNED_LAST] > rule[R_COST]


@njit(**JIT_OPTIONS)
def record_resort(rule, t):
    rule[R_LAST_SORT] = t
    rule[R_PRUNED_SINCE] = 0.0
    rule[R_PRUNED_LAST] = 0.0
    rule[R_PLAIN] = 0.0


@njit(**JIT_OPTIONS)
def record_pruned(rule, pruned):
    rule[R_PRUNED_SINCE] += pruned
    rule[R_PRUNED_LAST] = pruned
    if pruned == 0:
        rule[R_PLAIN] = 1.0


@njit(**JIT_OPTIONS)
def huber(z, h):
    """(l(z), l'(z)) of the Huber loss of eq. (5)."""
    if z <= 1.0 - h:
        return 1.0 - z, -1.0
    if z >= 1.0 + h:
        return 0.0, 0.0
    r = 1.0 + h - z
    return r * r / (4.0 * h), -r / (2.0 * h)


@njit(**JIT_OPTIONS)
def full_evaluation(X, data, indices, indptr, is_sparse, y, weight, w, b, h, margins, grad):
    """Plain evaluation over all points.

    Writes margins[i] = y_i (<w, x_i> + b) and grad = sum_i c_i l'(z_i) y_i x_i;
    returns (sum_i c_i l(z_i), sum_i c_i l'(z_i) y_i), c = ``weight``.
    """
    grad[:] = 0.0
    loss = 0.0
    grad_b = 0.0
    for i in range(margins.shape[0]):
        z = y[i] * (row_dot(X, data, indices, indptr, is_sparse, i, w) + b)
        margins[i] = z
        value, slope = huber(z, h)
        loss += weight[i] * value
        if slope != 0.0:
            g = weight[i] * slope * y[i]
            row_axpy(X, data, indices, indptr, is_sparse, i, g, grad)
            grad_b += g
    return loss, grad_b


@njit(**JIT_OPTIONS)
def dual_sums(X, data, indices, indptr, is_sparse, y, weight, w, b, h, alpha_sum, alpha_sq,
              alpha_x):
    """The sums of the dual point alpha_i = -l'(z_i) of (w, b), per label, for the duality gap.

    l(z) = max over a in [0, 1] of a (1 + h - z) - h a^2, attained at a = -l'(z);
    for L = 0 (y_i > 0) and 1 (y_i < 0) writes alpha_sum[L] = sum_i c_i alpha_i,
    alpha_sq[L] = sum_i c_i alpha_i^2 and alpha_x[L] = sum_i c_i alpha_i x_i over the
    list's points, c = ``weight``; returns sum_i c_i l(z_i) over all points.
    """
    alpha_sum[:] = 0.0
    alpha_sq[:] = 0.0
    alpha_x[:, :] = 0.0
    loss = 0.0
    for i in range(y.shape[0]):
        z = y[i] * (row_dot(X, data, indices, indptr, is_sparse, i, w) + b)
        value, slope = huber(z, h)
        loss += weight[i] * value
        if slope != 0.0:
            L = 0 if y[i] > 0 else 1
            a = weight[i] * -slope
            alpha_sum[L] += a
            alpha_sq[L] += a * -slope
            row_axpy(X, data, indices, indptr, is_sparse, i, a, alpha_x[L])
    return loss


@njit(**JIT_OPTIONS)
def sorted_sums(X, data, indices, indptr, is_sparse, y, weight, list_start, boundary, prefix,
                prefix_weight, boundary_sum, boundary_weight):
    """Sums of c_j y_j x_j and of c_j in sorted order, per list, for X, y and the
    weights c stored in sorted order.

    With ``prefix`` of shape (n, d): prefix[k] and prefix_weight[k] sum the
    list's points at sorted positions <= k (inclusive prefix sums, Alg. 1
    line 5).  With an empty ``prefix``: boundary_sum[L] and
    boundary_weight[L] = Sum_Boundary and W_Boundary of list L only (Sec. 3).
    """
    full = prefix.shape[0] > 0
    boundary_sum[:, :] = 0.0
    boundary_weight[:] = 0.0
    for L in range(2):
        start = list_start[L]
        stop = list_start[L + 1] if full else start + boundary[L]
        acc = boundary_sum[L]
        for k in range(start, stop):
            row_axpy(X, data, indices, indptr, is_sparse, k, weight[k] * y[k], acc)
            boundary_weight[L] += weight[k]
            if full:
                prefix[k, :] = acc
                prefix_weight[k] = boundary_weight[L]
        if full:
            acc[:] = 0.0
            boundary_weight[L] = 0.0


@njit(**JIT_OPTIONS)
def _walk_point(X, data, indices, indptr, is_sparse, y, weight, w, b, h, i, grad):
    """Margin, loss and gradient contribution of one examined point; returns (c l, c l' y)."""
    z = y[i] * (row_dot(X, data, indices, indptr, is_sparse, i, w) + b)
    value, slope = huber(z, h)
    g = weight[i] * slope * y[i]
    if slope != 0.0:
        row_axpy(X, data, indices, indptr, is_sparse, i, g, grad)
    return weight[i] * value, g


@njit(**JIT_OPTIONS)
def bounded_evaluation(X, data, indices, indptr, is_sparse, y, weight, w, b, h, u, list_start,
                       boundary, radius, prefix, prefix_weight, boundary_sum, boundary_weight,
                       b_ref, w_dist, grad, walked):
    """Algorithm 2 for the Huber loss with an offset: the same loss and gradient as
    :func:`full_evaluation`, computing margins only where the bounds do not decide.

    X, y, the weights and the stored margins u hold the two lists in sorted
    order (positive labels at ``list_start[0]:list_start[1]``, negative
    after), so the walks read consecutive rows; ``boundary[L]``: first sorted
    position with u >= 1 within list L; ``radius[L]``: max ||x_i|| over the
    list; ``w_dist`` = ||w - w'||; ``walked``: scratch of length d.
    Returns (sum of losses, sum of l' y, number of margins computed).
    """
    full = prefix.shape[0] > 0
    grad[:] = 0.0
    loss = 0.0
    grad_b = 0.0
    examined = 0
    for L in range(2):
        start = list_start[L]
        size = list_start[L + 1] - start
        sign = 1.0 if L == 0 else -1.0
        shift = sign * (b - b_ref)
        m_delta = w_dist * radius[L]
        # forward from Boundary: stop where the rest has zero loss (Alg. 2 lines 6-13)
        for k in range(start + boundary[L], start + size):
            if u[k] + shift - m_delta >= 1.0 + h:
                break
            value, slope = _walk_point(X, data, indices, indptr, is_sparse, y, weight, w, b, h,
                                       k, grad)
            loss += value
            grad_b += slope
            examined += 1
        # backward: stop where the rest is in the linear piece (lines 14-23)
        if not full:
            walked[:] = 0.0
        walked_weight = 0.0
        n_linear = 0
        for k in range(start + boundary[L] - 1, start - 1, -1):
            if u[k] + shift + m_delta <= 1.0 - h:
                n_linear = k - start + 1
                break
            value, slope = _walk_point(X, data, indices, indptr, is_sparse, y, weight, w, b, h,
                                       k, grad)
            loss += value
            grad_b += slope
            examined += 1
            if not full:
                row_axpy(X, data, indices, indptr, is_sparse, k, weight[k] * y[k], walked)
                walked_weight += weight[k]
        if n_linear > 0:
            # Sums over the linear prefix: stored, or the boundary's minus the points walked over
            last = start + n_linear - 1
            weight_sum = prefix_weight[last] if full else boundary_weight[L] - walked_weight
            dot = 0.0
            for f in range(grad.shape[0]):
                s = prefix[last, f] if full else boundary_sum[L, f] - walked[f]
                dot += w[f] * s
                grad[f] -= s
            loss += weight_sum - dot - sign * b * weight_sum
            grad_b -= sign * weight_sum
    return loss, grad_b, examined


@njit(**JIT_OPTIONS)
def _margin(X, data, indices, indptr, is_sparse, y, w, bias_feature, i):
    """y_i <w, (x_i, bias_feature)>, the offset stored as w[-1]."""
    return y[i] * (row_dot(X, data, indices, indptr, is_sparse, i, w)
                   + bias_feature * w[w.shape[0] - 1])


@njit(**JIT_OPTIONS)
def pegasos_steps(X, data, indices, indptr, is_sparse, norms, y, weight, heavy_from, batches, t0,
                  lam, bias_feature, use_bounds, scaled, rule, u, w_ref, v, update, touched,
                  mark, dual, dual_scale, average_from, dual_lag, scale_sum, counters):
    """Mini-batch Pegasos iterations t0 + 1, ..., t0 + len(batches), with Algorithm 3's bounds.

    Iteration t on the batch A_t (k indices, drawn with replacement):

        A+ = {i in A_t : y_i <w_t, x_i> < 1},
        w <- (1 - 1/t) w + 1/(lambda t k) sum_{i in A+} c_i y_i x_i,
        w <- min(1, 1 / (sqrt(lambda) ||w||)) w,

    with the step weights c_i = ``weight`` (1 without sample weights); a violator
    weighing more than ``heavy_from`` (c_heavy, 100 times the median c_i) takes the
    importance-aware weight of :mod:`fastsvm._importance` instead of c_i, from its
    margin, which is then computed even where the bound decides the violation.

    The same steps on the dual variables alpha of w = (1/lambda) sum_i
    alpha_i y_i x_i: alpha <- (1 - 1/t) alpha + 1/(t k) sum_{i in A+} c_i e_i,
    times the projection's factor.  Without projections alpha_i = c_i a_i / (T k)
    after T iterations, a_i the number of draws of i that were in A+.

    **Lazy scale.**  Both are kept scaled: alpha = s ``dual``, w = s ``v`` with
    v = (1/lambda) sum_i dual_i y_i x_i and s = ``dual_scale[0]``, so the shrink
    and the projection only change s, and an iteration costs the non-zeros of
    its batch's rows, not n_features (see :func:`kernel_pegasos_steps`).  The
    violators' sum Delta = sum_{A+} c_i y_i x_i is gathered in ``update``, which
    is zero between iterations, on the columns listed in ``touched`` (every
    column for dense rows; ``mark[f]`` is the last iteration that listed column
    f), and v += Delta / (lambda t k s) there.  ||v||^2 and
    <v, w_ref> follow from <v, Delta>, ||Delta||^2 and <w_ref, Delta> on those
    columns; they are computed afresh at each call (and <v, w_ref> at each
    refresh).  A scale
    below ``SCALE_FLOOR`` is folded into v and ``dual``.  Returns False, and
    stops, when ||v||^2 overflows (features or weights too extreme for float64:
    the iterates would be lost), else True.

    ``v`` has n_features + 1 entries; the last multiplies ``bias_feature``
    (1.0 for a regularised offset, 0.0 for none).  With ``use_bounds`` the
    stored margins ``u`` of ``w_ref`` and the norms ``norms`` (of (x_i,
    bias_feature)) decide a point without its margin when its bound clears 1;
    the stored margins are refreshed by the re-sort rule (no sorting: Alg. 3).
    A+ is the same set either way, added in the same order, so the iterates
    are identical.

    The bound is Algorithm 3's, y_i <w, x_i> in u_i -/+ ||w - w_ref|| ||x_i||,
    or with ``scaled`` the same bound around a multiple of the reference:
    for any a, y_i <w, x_i> = a u_i + y_i <w - a w_ref, x_i>, so

        a u_i - ||w - a w_ref|| ||x_i||  <=  y_i <w, x_i>  <=  a u_i + ||w - a w_ref|| ||x_i||,

    tightest for a = <w, w_ref> / ||w_ref||^2.  Pegasos shrinks w by
    (1 - 1/t) every step, which the paper's bound (a = 1) counts as change
    in w; the scaled bound only sees the change in direction.
    ||w - a w_ref||^2 = ||w||^2 - 2 a <w, w_ref> + a^2 ||w_ref||^2 from the
    three kept terms, with the slack ``DIST_SLACK`` for their rounding.

    Averaging: from iteration ``average_from`` on, the sum of the dual iterates
    alpha_t = s_t d(t) (d = ``dual``) is kept lazily: with S_t = sum of s_tau
    over the averaged tau <= t (``scale_sum[0]``), sum_t s_t d_i(t) = S_T d_i(T)
    - sum of inc S_(tau-1) over the increments inc of d_i in iterations tau,
    the latter sum kept in ``dual_lag[i]``, so an iteration costs O(1) per
    violator; the averaged w is (1/lambda) sum_i alpha_i y_i x_i of that average
    (see :func:`fastsvm.bounds.solver.solve_pegasos`).
    """
    n = u.shape[0]
    k = batches.shape[1]
    d1 = v.shape[0]
    last = d1 - 1
    radius2 = 1.0 / lam
    v_norm2 = np.sum(v * v)
    v_cross = np.sum(v * w_ref)         # <v, w_ref>
    ref_norm2 = np.sum(w_ref * w_ref)
    n_touched = 0
    if not is_sparse:
        for f in range(d1):
            touched[f] = f
    for it in range(batches.shape[0]):
        t = t0 + it + 1
        scale = dual_scale[0]           # w_t = scale v
        # w_(t+1) = shrunk (v + Delta / (lambda t k shrunk)), then projected
        shrunk = scale * (1.0 - 1.0 / t) if t > 1 else 1.0    # w_1 = 0: no scale before
        dual_step = 1.0 / (t * k * shrunk)
        step = dual_step / lam
        bounded = use_bounds
        w_dist = 0.0
        reach0 = 0.0
        a = 1.0
        if use_bounds:
            if resort_due(rule, t, k):
                for i in range(n):
                    u[i] = scale * _margin(X, data, indices, indptr, is_sparse, y, v,
                                           bias_feature, i)
                for f in range(d1):
                    w_ref[f] = scale * v[f]
                # (||v||^2 is left as it runs: recomputed here, it would round the iterates
                # apart from those without bounds)
                v_cross = np.sum(v * w_ref)
                ref_norm2 = np.sum(w_ref * w_ref)
                record_resort(rule, t)
                counters[PC_REFRESHED] += n
                counters[PC_REFRESHES] += 1
            bounded = rule[R_PLAIN] == 0.0
            if bounded:
                nw2, cross = scale * scale * v_norm2, scale * v_cross
                a = cross / ref_norm2 if scaled and ref_norm2 > 0.0 else 1.0
                d2 = (max(nw2 - 2.0 * a * cross + a * a * ref_norm2, 0.0)
                      + DIST_SLACK * (nw2 + a * a * ref_norm2))
                w_dist = np.sqrt(d2)
                reach0 = abs(a) * np.sqrt(ref_norm2) + w_dist
        examined = 0
        any_violator = False
        for j in range(k):
            i = batches[it, j]
            margin = 0.0                # y_i <w_t, x_i>, once computed
            known = False
            if bounded:
                center = a * u[i]
                reach = w_dist * norms[i] + HINGE_SLACK * (1.0 + reach0 * norms[i])
                if center - reach > 1.0:
                    continue
                violates = center + reach < 1.0
            if not bounded or not violates:
                examined += 1
                margin = scale * _margin(X, data, indices, indptr, is_sparse, y, v,
                                         bias_feature, i)
                known = True
                violates = margin < 1.0
            if violates:
                any_violator = True
                weight_i = weight[i]
                if weight_i > heavy_from:
                    if not known:       # decided by the bound: computed for the weight
                        examined += 1
                        margin = scale * _margin(X, data, indices, indptr, is_sparse, y, v,
                                                 bias_feature, i)
                    weight_i = heavy_weight(weight_i, heavy_from, (1.0 - 1.0 / t) * margin,
                                            norms[i] * norms[i] / (lam * t * k))
                dual[i] += weight_i * dual_step
                dual_lag[i] += weight_i * dual_step * scale_sum[0]
                c = weight_i * y[i]
                if is_sparse:
                    for p in range(indptr[i], indptr[i + 1]):
                        f = indices[p]
                        if mark[f] != t:
                            mark[f] = t
                            touched[n_touched] = f
                            n_touched += 1
                        update[f] += c * data[p]
                else:
                    row_axpy(X, data, indices, indptr, is_sparse, i, c, update)
                update[last] += c * bias_feature
        counters[PC_EXAMINED] += examined
        if use_bounds:
            record_pruned(rule, k - examined)
        scale = shrunk
        if any_violator:
            if is_sparse:
                touched[n_touched] = last
                n_touched += 1
            else:
                n_touched = d1          # every column (listed in order above)
            vd = 0.0
            dd = 0.0
            rd = 0.0
            for q in range(n_touched):
                f = touched[q]
                g = update[f]
                vd += v[f] * g
                dd += g * g
                rd += w_ref[f] * g
                v[f] += step * g
                update[f] = 0.0
            n_touched = 0
            v_norm2 += 2.0 * step * vd + step * step * dd
            v_cross += step * rd
            if not v_norm2 <= FLOAT_MAX:    # inf or nan (np.isfinite compiled to True here)
                return False
        if scale * scale * v_norm2 > radius2:
            scale *= np.sqrt(radius2 / (scale * scale * v_norm2))
        if t >= average_from:
            scale_sum[0] += scale
        if scale < SCALE_FLOOR:         # fold the scale into v and dual (see SCALE_FLOOR)
            # the averaged sum so far, S d - dual_lag, moves into dual_lag, and S restarts
            # at 0 in the new units (dividing S by the scale would overflow it)
            dual_lag -= scale_sum[0] * dual
            scale_sum[0] = 0.0
            dual *= scale
            v *= scale
            v_norm2 *= scale * scale
            v_cross *= scale
            scale = 1.0
        dual_scale[0] = scale
    return True


@njit(**JIT_OPTIONS)
def combine_rows(X, data, indices, indptr, is_sparse, coef, bias_feature, out):
    """out += sum_i coef_i (x_i, bias_feature): the last entry is the offset feature's."""
    last = out.shape[0] - 1
    for i in range(coef.shape[0]):
        if coef[i] != 0.0:
            row_axpy(X, data, indices, indptr, is_sparse, i, coef[i], out)
            out[last] += coef[i] * bias_feature


# kernel Pegasos state indices (float64 array)
KS_SCALE = 0          # w = scale * sum_s gamma_s phi(sv_s)
KS_NORM2 = 1          # ||w||^2
KS_CROSS = 2          # <w, w_ref>
KS_REF_NORM2 = 3      # ||w_ref||^2
KS_SCALE_SUM = 4      # sum of the scales of the averaged iterates so far
N_KSTATE = 5

@njit(**JIT_OPTIONS)
def _kernel_margin(X, data, indices, indptr, is_sparse, sq_norms, y, i, code, gamma, degree,
                   coef0, bias2, svt, sv_sq, sv_row, coef, n_sv, scale, dots, kvals, bits):
    """y_i f(x_i), f(x) = scale sum_s coef_s (k(sv_s, x) + bias2)."""
    if code == PRECOMPUTED:
        for s in range(n_sv):
            kvals[s] = X[i, sv_row[s]]
    else:
        sv_dots(X, data, indices, indptr, is_sparse, i, svt, n_sv, dots)
        kernel_from_dots(code, dots, sq_norms[i], sv_sq, gamma, degree, coef0, n_sv, kvals, bits)
    f = 0.0
    for s in range(n_sv):
        f += coef[s] * (kvals[s] + bias2)
    return y[i] * scale * f


@njit(**JIT_OPTIONS)
def kernel_pegasos_steps(X, data, indices, indptr, is_sparse, sq_norms, norms, y, weight,
                         heavy_from, batches, t0, lam, code, gamma, degree, coef0, bias2,
                         use_bounds, scaled, rule, u, svt, sv_sq, sv_row, coef, slot_of, n_sv,
                         state, average_from, coef_lag, counters):
    """Mini-batch kernel Pegasos with the bound of Guillory & Bilmes Sec. 5; returns n_sv.

    The same iteration as :func:`pegasos_steps` in the feature space of the
    kernel k'(x, z) = k(x, z) + bias2 (``code`` a kernel of
    :mod:`fastsvm.kernels`, or PRECOMPUTED with X the kernel matrix; bias2 =
    1: a regularised offset as a constant feature), with
    w = scale * sum_s coef_s phi(sv_s) over the support vectors (training
    points stored as the columns of ``svt``, row ``sv_row[s]``;
    ``slot_of[i]`` is point i's column or -1).  The shrink 1 - 1/t and the
    projection only change ``scale``; ``weight`` holds the step weights c_i, and a
    violator weighing more than ``heavy_from`` (c_heavy, 100 times the median c_i) takes
    the importance-aware weight of :mod:`fastsvm._importance` (its margin is known: a
    violator is never decided by the bound).
    A scale below ``SCALE_FLOOR`` (a small lambda: long runs of shrinks and
    projections) is folded into ``coef``, which keeps w and stays finite.

    ||w||^2, <w, w_ref> and ||w_ref||^2 (the terms of eq. 6, expanded) are
    updated per iteration from the margins of the violators, their stored
    margins u and their kernel values among themselves, in
    O(|A+| (n_sv + |A+|)) instead of eq. (6)'s O(n_sv^2).  As the paper
    notes, for kernels only the points certain to have zero loss can be
    skipped: a violator's own margin is needed for ||w||^2.  A point is
    skipped when a u_i - ||w - a w_ref|| ||phi'(x_i)|| > 1, with
    ``norms[i]`` = ||phi'(x_i)|| = sqrt(k(x_i, x_i) + bias2) and a = 1 (the
    paper) or, with ``scaled``, a = <w, w_ref> / ||w_ref||^2 (see
    :func:`pegasos_steps`).  This Cauchy-Schwarz bound needs a positive
    semi-definite kernel (the estimator refuses 'sigmoid' with bounds).

    A point drawn several times in one batch (always, with a batch larger than
    n) has one margin: it is examined once and its draws are counted, so the
    margins, the violators' update and their kernel values among themselves
    cost as many distinct points, not draws (a batch of 1,000 on 3 rows had
    taken over a minute); the step is the same, each draw weighing c_i.

    Averaging, as in :func:`pegasos_steps`: from iteration ``average_from`` on,
    sum_t scale_t coef_s(t) = S_T coef_s(T) - ``coef_lag[s]``, S kept in
    ``state[KS_SCALE_SUM]``.
    """
    n = u.shape[0]
    k = batches.shape[1]
    cap = coef.shape[0]
    dots = np.empty(cap)
    kvals = np.empty(cap)
    bits = np.empty(cap, dtype=np.int64)
    violators = np.empty(k, dtype=np.int64)
    draws = np.empty(k)                 # draws of each distinct violator in the batch
    weight_of = np.empty(k)             # and the weight they take together
    margins_of = np.empty(k)            # and its margin
    seen = np.full(n, -1, dtype=np.int64)    # the iteration a point was last examined in
    slot_in_batch = np.empty(n, dtype=np.int64)  # its index in violators, or -1
    for it in range(batches.shape[0]):
        t = t0 + it + 1
        scale = state[KS_SCALE]
        bounded = use_bounds
        dist = 0.0
        reach0 = 0.0
        a = 1.0
        if use_bounds:
            if resort_due(rule, t, k):
                for i in range(n):
                    u[i] = _kernel_margin(X, data, indices, indptr, is_sparse, sq_norms, y, i,
                                          code, gamma, degree, coef0, bias2, svt, sv_sq, sv_row,
                                          coef, n_sv, scale, dots, kvals, bits)
                state[KS_REF_NORM2] = state[KS_NORM2]
                state[KS_CROSS] = state[KS_NORM2]
                record_resort(rule, t)
                counters[PC_REFRESHED] += n
                counters[PC_REFRESHES] += 1
            bounded = rule[R_PLAIN] == 0.0
            if bounded:
                nw2, nr2, cross = state[KS_NORM2], state[KS_REF_NORM2], state[KS_CROSS]
                a = cross / nr2 if scaled and nr2 > 0.0 else 1.0
                d2 = (max(nw2 - 2.0 * a * cross + a * a * nr2, 0.0)
                      + DIST_SLACK * (nw2 + a * a * nr2))
                dist = np.sqrt(d2)
                reach0 = abs(a) * np.sqrt(nr2) + dist
        n_viol = 0
        examined = 0
        distinct = 0
        for j in range(k):
            i = batches[it, j]
            if seen[i] == t:            # drawn before in this batch: the same margin
                v = slot_in_batch[i]
                if v >= 0:
                    draws[v] += 1.0
                continue
            seen[i] = t
            slot_in_batch[i] = -1
            distinct += 1
            if bounded and a * u[i] - (dist * norms[i]
                                       + HINGE_SLACK * (1.0 + reach0 * norms[i])) > 1.0:
                continue
            examined += 1
            m = _kernel_margin(X, data, indices, indptr, is_sparse, sq_norms, y, i, code, gamma,
                               degree, coef0, bias2, svt, sv_sq, sv_row, coef, n_sv, scale, dots,
                               kvals, bits)
            if m < 1.0:
                violators[n_viol] = i
                draws[n_viol] = 1.0
                margins_of[n_viol] = m
                slot_in_batch[i] = n_viol
                n_viol += 1
        counters[PC_EXAMINED] += examined
        if use_bounds:
            record_pruned(rule, distinct - examined)
        # w <- (1 - 1/t) w + c sum_{A+} c_i y_i phi(x_i), c = 1 / (lambda t k)
        shrink = 1.0 - 1.0 / t
        c = 1.0 / (lam * t * k)
        margin_sum = 0.0
        stored_sum = 0.0
        for v in range(n_viol):
            i = violators[v]
            each = weight[i]
            if each > heavy_from:       # each draw as if alone, as pegasos_steps' draws
                each = heavy_weight(each, heavy_from, shrink * margins_of[v],
                                    norms[i] * norms[i] * c)
            together = draws[v] * each
            weight_of[v] = together
            margin_sum += together * margins_of[v]
            stored_sum += together * u[i]
        if t > 1:
            scale *= shrink
        else:
            scale = 1.0                 # w_1 = 0: no coefficient yet
        quad = 0.0                      # ||sum_{A+} c_i y_i phi(x_i)||^2
        for v in range(n_viol):
            i = violators[v]
            slot = slot_of[i]
            if slot < 0:
                slot = n_sv
                slot_of[i] = slot
                sv_row[slot] = i
                if code != PRECOMPUTED:
                    store_sv(X, data, indices, indptr, is_sparse, i, svt, slot)
                sv_sq[slot] = sq_norms[i]
                coef[slot] = 0.0
                coef_lag[slot] = 0.0
                n_sv += 1
            step = weight_of[v] * y[i] * c / scale
            coef[slot] += step
            coef_lag[slot] += step * state[KS_SCALE_SUM]
        for v in range(n_viol):
            ia = violators[v]
            for b in range(n_viol):
                ib = violators[b]
                if code == PRECOMPUTED:
                    kab = X[ia, ib]
                else:
                    sb = slot_of[ib]
                    dot = row_dot(X, data, indices, indptr, is_sparse, ia, svt[:, sb])
                    kab = kernel_from_dot(code, dot, sq_norms[ia], sv_sq[sb], gamma, degree,
                                          coef0)
                kab += bias2
                quad += weight_of[v] * weight_of[b] * y[ia] * y[ib] * kab
        norm2 = shrink * shrink * state[KS_NORM2] + 2.0 * shrink * c * margin_sum + c * c * quad
        cross = shrink * state[KS_CROSS] + c * stored_sum
        if norm2 * lam > 1.0:
            factor = 1.0 / np.sqrt(lam * norm2)
            scale *= factor
            norm2 *= factor * factor
            cross *= factor
        if t >= average_from:
            state[KS_SCALE_SUM] += scale
        if scale < SCALE_FLOOR:         # fold the scale into coef (see SCALE_FLOOR)
            for s in range(n_sv):       # the averaged sum so far moves into coef_lag
                coef_lag[s] -= state[KS_SCALE_SUM] * coef[s]
                coef[s] *= scale
            state[KS_SCALE_SUM] = 0.0
            scale = 1.0
        state[KS_SCALE] = scale
        state[KS_NORM2] = norm2
        state[KS_CROSS] = cross
    return n_sv
