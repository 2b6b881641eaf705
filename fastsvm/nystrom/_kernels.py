r"""Compiled loops over a dense embedding: stochastic subgradient steps (Snacks and
Pegasos), dual coordinate descent, and the embedding's float32 copy of a kernel block.

The solvers minimise the linear SVM on embedded rows :math:`\phi_i \in \mathbb{R}^r`,
augmented by a constant feature ``bias_feature`` (1 with an intercept, 0
without), so the weight vector ``w`` has r + 1 entries, the last one being
the offset's weight:

.. math::

    P(w) = \frac{\lambda}{2}\|w\|^2 + \frac{1}{n}\sum_{i=1}^n
    c_i \max(0, 1 - y_i \langle w, (\phi_i, s)\rangle),

with stochastic subgradient :math:`g = \lambda w - [y_i\langle w, x_i\rangle < 1]\, c_i y_i x_i`
on a uniformly drawn example i (Snacks eq. (8)); c_i is the example's step
weight s_i n / S (1 without sample weights, see :mod:`fastsvm.base`), or, for a
violator weighing more than ``heavy_from`` (100 times the median c_i), the importance-aware
weight of :mod:`fastsvm._importance` (:func:`_taken_weight`).  The stochastic
steps take the example indices to visit (drawn by the driver), update ``w`` in place and
return the number of margin violations; they never allocate.  The solvers visit rows in
random order and hint the next one into the cache (:func:`_prefetch_row`).
"""

import math

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

from .._importance import heavy_weight
from .._options import JIT_OPTIONS

#: Cache-line size the prefetch hints step by (x86-64 and most ARM cores).
CACHE_LINE_BYTES = 64


@intrinsic
def _prefetch_row(typingctx, Phi, i):
    """A hint to load row i of the C-ordered 2-D array Phi into the cache (LLVM's
    ``llvm.prefetch``, read, into L2 and above: x86's ``prefetcht1``), one hint per
    cache line.  It changes nothing and never faults, even for an address outside Phi.

    The solvers below visit the embedding's rows in random order, so the hardware
    prefetchers, which follow sequential streams, cannot foresee the next row: every
    row then starts with a wait on memory.  Hinting the next row while the current one
    is processed hid part of that wait: a loop of dual coordinate descent's updates over
    random rows of a 464,809 x 1,000 float32 array (covtype's size at m = 1,000) took
    0.80-0.85 us per row instead of 1.04 us, over 183,792 x 737 (skin_nonskin's)
    0.62-0.71 instead of 0.89-1.14 us; hinting two or four rows ahead, or into L1,
    did no better."""
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        n_cols = builder.extract_value(array.shape, 1)
        byte = ir.IntType(8).as_pointer()
        start = builder.bitcast(builder.gep(array.data, [builder.mul(args[1], n_cols)]), byte)
        item = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
        size = builder.mul(n_cols, ir.Constant(n_cols.type, item))
        int32 = ir.IntType(32)
        # the intrinsic's name carries its pointer type: "p0" (opaque pointers) or "p0i8"
        name = "llvm.prefetch.p0" if str(byte) == "ptr" else "llvm.prefetch.p0i8"
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte, int32, int32, int32]), name)
        step = ir.Constant(n_cols.type, CACHE_LINE_BYTES)
        with cgutils.for_range_slice(builder, ir.Constant(n_cols.type, 0), size, step) as (at, _):
            # read (0), locality 2 (L2 and above), data cache (1)
            builder.call(prefetch, [builder.gep(start, [at]), ir.Constant(int32, 0),
                                    ir.Constant(int32, 2), ir.Constant(int32, 1)])
        return context.get_dummy_value()

    return numba.types.void(Phi, i), codegen


@numba.njit(**JIT_OPTIONS)
def _margin(Phi, i, w, bias_feature):
    r = Phi.shape[1]
    f = w[r] * bias_feature
    for j in range(r):
        f += w[j] * Phi[i, j]
    return f


@numba.njit(**JIT_OPTIONS)
def _taken_weight(Phi, i, bias_feature, c, heavy_from, margin, shrink, eta):
    """The weight violator i of step weight c > ``heavy_from`` takes in a step of size ``eta``
    whose shrink factor is ``shrink`` (:mod:`fastsvm._importance`), ``margin`` its margin
    before the step."""
    sq_norm = bias_feature * bias_feature
    for j in range(Phi.shape[1]):
        sq_norm += np.float64(Phi[i, j]) * Phi[i, j]
    return heavy_weight(c, heavy_from, shrink * margin, eta * sq_norm)


@numba.njit(**JIT_OPTIONS)
def assg_steps(Phi, y, weight, heavy_from, bias_feature, order, lam, eta, center, radius, w, w_avg,
               avg_weight):
    """Inner loop of one ASSG stage (Snacks Alg. 1, lines 4-7, step (7)).

    For each index i of ``order``:
    w <- Pi_{B(center, radius)}[w - eta * g(w; i)], then
    w_avg += avg_weight * w (avg_weight = 1/T accumulates the stage average).
    """
    r = Phi.shape[1]
    shrink = 1.0 - eta * lam
    radius_sq = radius * radius
    violations = 0
    for t in range(order.shape[0]):
        i = order[t]
        if t + 1 < order.shape[0]:
            _prefetch_row(Phi, order[t + 1])
        step = 0.0
        margin = y[i] * _margin(Phi, i, w, bias_feature)
        if margin < 1.0:
            c = weight[i]
            if c > heavy_from:
                c = _taken_weight(Phi, i, bias_feature, c, heavy_from, margin, shrink, eta)
            step = eta * c * y[i]
            violations += 1
        dist_sq = 0.0
        for j in range(r):
            v = shrink * w[j] + step * Phi[i, j]
            w[j] = v
            dist_sq += (v - center[j]) ** 2
        v = shrink * w[r] + step * bias_feature
        w[r] = v
        dist_sq += (v - center[r]) ** 2
        if dist_sq > radius_sq:
            scale = radius / math.sqrt(dist_sq)
            for j in range(r + 1):
                w[j] = center[j] + scale * (w[j] - center[j])
        for j in range(r + 1):
            w_avg[j] += avg_weight * w[j]
    return violations


@numba.njit(**JIT_OPTIONS)
def pegasos_steps(Phi, y, weight, heavy_from, bias_feature, order, lam, t0, project, w):
    """Pegasos steps (Shalev-Shwartz et al. 2011, Fig. 1, k = 1) from step counter t0.

    Step t = t0 + 1, t0 + 2, ...: eta_t = 1 / (lambda t),
    w <- (1 - 1/t) w + [y_i <w, x_i> < 1] eta_t c_i y_i x_i, then, with
    ``project``, w is scaled back into the ball of radius 1 / sqrt(lambda)
    that holds the optimum.
    """
    r = Phi.shape[1]
    max_sq = 1.0 / lam
    violations = 0
    for t in range(order.shape[0]):
        i = order[t]
        if t + 1 < order.shape[0]:
            _prefetch_row(Phi, order[t + 1])
        tt = t0 + t + 1.0
        shrink = 1.0 - 1.0 / tt
        step = 0.0
        margin = y[i] * _margin(Phi, i, w, bias_feature)
        if margin < 1.0:
            c = weight[i]
            if c > heavy_from:
                c = _taken_weight(Phi, i, bias_feature, c, heavy_from, margin, shrink,
                                  1.0 / (lam * tt))
            step = c * y[i] / (lam * tt)
            violations += 1
        norm_sq = 0.0
        for j in range(r):
            v = shrink * w[j] + step * Phi[i, j]
            w[j] = v
            norm_sq += v * v
        v = shrink * w[r] + step * bias_feature
        w[r] = v
        norm_sq += v * v
        if project and norm_sq > max_sq:
            scale = math.sqrt(max_sq / norm_sq)
            for j in range(r + 1):
                w[j] *= scale
    return violations


@numba.njit(**JIT_OPTIONS)
def dcd_epoch(Phi, y, bias_feature, upper, q_diag, active, n_active, pg_max_old, pg_min_old,
              alpha, w):
    """One pass of dual coordinate descent with shrinking (Hsieh et al. 2008, Alg. 1 and
    Sec. 3.2; LIBLINEAR's ``solve_l2r_l1l2_svc``) over ``active[:n_active]``.

    The dual of (1/2)||w||^2 + sum_i U_i max(0, 1 - y_i <w, x_i>) (the objective
    above divided by lambda, U_i = c_i / (lambda n) = ``upper[i]``) is
    min_alpha (1/2) alpha' Q alpha - sum_i alpha_i over 0 <= alpha_i <= U_i, with
    Q_ij = y_i y_j <x_i, x_j> and w = sum_i alpha_i y_i x_i.  For each i visited:
    G = y_i <w, x_i> - 1, alpha_i <- clip(alpha_i - G / Q_ii, 0, U_i)
    (``q_diag[i]`` = Q_ii > 0), w += (change of alpha_i) y_i x_i.

    Shrinking: the projected gradient PG is G clipped at the bound alpha_i
    sits on (PG = min(G, 0) at 0, max(G, 0) at U_i, G inside).  A variable at
    0 with G > ``pg_max_old`` or at U_i with G < ``pg_min_old`` (the extreme
    PG of the previous pass) is likely to stay there: it is swapped behind
    the active part of ``active`` and not visited again until the driver
    resets ``n_active``.  ``pg_max_old = inf, pg_min_old = -inf`` shrinks
    nothing.  Updates ``active``, ``alpha`` and ``w`` in place; returns
    (new n_active, max PG, min PG) of the variables visited and kept.  The next row is
    prefetched (:func:`_prefetch_row`), as in the stochastic steps above.
    """
    r = Phi.shape[1]
    pg_max = -np.inf
    pg_min = np.inf
    s = 0
    while s < n_active:
        i = active[s]
        if s + 1 < n_active:
            _prefetch_row(Phi, active[s + 1])
        gradient = y[i] * _margin(Phi, i, w, bias_feature) - 1.0
        old = alpha[i]
        pg = gradient
        if old == 0.0:
            if gradient > pg_max_old:
                n_active -= 1
                active[s] = active[n_active]
                active[n_active] = i
                continue
            pg = min(gradient, 0.0)
        elif old == upper[i]:
            if gradient < pg_min_old:
                n_active -= 1
                active[s] = active[n_active]
                active[n_active] = i
                continue
            pg = max(gradient, 0.0)
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        if pg != 0.0:
            new = min(max(old - gradient / q_diag[i], 0.0), upper[i])
            delta = (new - old) * y[i]
            alpha[i] = new
            for j in range(r):
                w[j] += delta * Phi[i, j]
            w[r] += delta * bias_feature
        s += 1
    return n_active, pg_max, pg_min


@numba.njit(**JIT_OPTIONS)
def hinge_at(Phi, rows, y, weight, w, bias_feature):
    """sum_{i in rows} weight_i max(0, 1 - y_i <w, (phi_i, bias_feature)>), read in place
    at the embedding's rows ``rows`` (the rows of a one-vs-one pair)."""
    total = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        loss = 1.0 - y[i] * _margin(Phi, i, w, bias_feature)
        if loss > 0.0:
            total += weight[i] * loss
    return total


@numba.njit(**JIT_OPTIONS)
def sq_norms_at(Phi, rows, out):
    """out[i] = ||phi_i||^2 (float64) for the embedding's rows i in ``rows``."""
    for k in range(rows.shape[0]):
        i = rows[k]
        total = 0.0
        for j in range(Phi.shape[1]):
            total += np.float64(Phi[i, j]) * Phi[i, j]
        out[i] = total


@numba.njit(**JIT_OPTIONS)
def copy_flushed(source, out, tiny):
    """out[...] = source, cast to out's type, with every value of magnitude below ``tiny``
    (the smallest normal number of out's type) set to 0: the flush to zero of FTZ/DAZ
    arithmetic, done once on the data instead.  NaN and inf are copied as they are.

    A Gaussian kernel value of two distant rows, exp(-gamma d^2) with gamma d^2 > 87,
    is subnormal in float32, and BLAS's float32 products then run at a fraction of
    their speed (every subnormal operand or result takes a microcode assist):
    skin_nonskin at gamma = 2^-7 had 4.9 million subnormal kernel values per block of
    10,800 rows against 728 landmarks, and the block's product with the map took 0.63 s
    instead of 0.09 s.  Flushing changes an embedded coordinate by at most r ``tiny``
    times the map's largest entry, for kernel values of at most 1 (3e-33 there), far
    below float32's rounding of coordinates of the size of the kernel values."""
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            v = source[i, j]
            out[i, j] = 0.0 if abs(v) < tiny else v
