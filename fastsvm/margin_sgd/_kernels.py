"""Compiled part of the one-pass margin SGD with extreme early stopping (Orchel & Suykens, LOD 2021).

Model: f(x) = sum_j y_j alpha_j k(x_j, x), k a kernel (the paper's is
Gaussian), no offset and no regularisation term.  The pass visits the points
in order; each point's coefficient is set once, from the margin of the model
built so far, and scaled by the point's weight c_k (1 without sample
weights; see :class:`fastsvm.MarginSGDSVC` for the derivation):

    m_k = y_k f_{k-1}(x_k),
    'squared-hinge' (the paper's rule (6), derived in its appendix):
        alpha_k = c_k min(C, max(0, 1 - m_k))  if m_k <= M,  else 0;
    'constant' (the original margin SGD rule):
        alpha_k = c_k min(C, 1)                if m_k <= M,  else 0.

The cap C (infinite in the paper) is the box of the SVM dual: rule (6) is
the first epoch of dual coordinate descent on that dual without offset,
alpha_k <- clip(alpha_k + (1 - m_k) / k(x_k, x_k), 0, C), from alpha = 0
with k(x, x) = 1 (the Gaussian kernel).  (The constant's value only scales
f, and with it the margins against M, so 1 loses no generality: another
constant c is the same model with M / c.)

The driver (:mod:`fastsvm.margin_sgd.solver`) evaluates a block of points
against the support vectors found before the block at once: the dot
products by BLAS (or scipy's sparse products for sparse rows), f from them
by :func:`expansion_from_dots`, and the kernel matrix of the block's points by
:func:`block_kernel_from_dots`.  Only the dependence inside the block is
sequential, and that is :func:`decide_block`.
"""

import numpy as np
from numba import njit

from .._options import JIT_OPTIONS, KERNEL_CACHE
from .._packed import kernel_from_dots

SQUARED_HINGE = 0
CONSTANT = 1


@njit(**JIT_OPTIONS)
def decide_block(f_before, K_block, targets, weight, M, C, rule, alpha):
    """Set the coefficients ``alpha[o]`` of one block of visits, in order, for each binary
    problem o.

    ``f_before[j, o]`` is problem o's f at point j of the block from the
    support vectors before the block, ``K_block`` the kernel matrix of the
    block's points, ``targets[o, j]`` point j's target in problem o,
    ``weight[j]`` its weight c_j, ``C`` the cap (inf: none); the margin of
    point j adds the block's earlier support vectors.  A point of target 0
    (outside a one-vs-one pair) gets alpha 0 and is skipped.
    """
    for o in range(targets.shape[0]):
        y, a = targets[o], alpha[o]
        for j in range(len(y)):
            if y[j] == 0.0:
                a[j] = 0.0
                continue
            f = f_before[j, o]
            for i in range(j):
                if a[i] > 0.0:
                    f += y[i] * a[i] * K_block[j, i]
            m = y[j] * f
            if m > M:
                a[j] = 0.0
            elif rule == SQUARED_HINGE:
                a[j] = weight[j] * min(C, max(0.0, 1.0 - m))
            else:
                a[j] = weight[j] * min(C, 1.0)


@njit(cache=KERNEL_CACHE, nogil=True)
def accuracy_offset(f, y, weight, min_gain):
    """The offset b of :func:`fastsvm.margin_sgd.solver.accuracy_offset` (which documents
    it) for y holding both classes.  No ``fastmath``: sums in order, as NumPy's cumsum,
    so that ties between thresholds are those of the plain computation."""
    n = len(f)
    order = np.argsort(-f, kind="mergesort")        # stable: ties keep their order
    fs, ys, ws = f[order], y[order], weight[order]
    # error weight when the j largest are predicted +1: negatives among them + positives after
    neg_above, pos_above = np.zeros(n + 1), np.zeros(n + 1)
    for k in range(n):
        neg_above[k + 1] = neg_above[k] + (ws[k] if ys[k] < 0 else 0.0)
        pos_above[k + 1] = pos_above[k] + (ws[k] if ys[k] > 0 else 0.0)
    errors = neg_above + (pos_above[n] - pos_above)
    cuts = np.empty(n + 1)
    valid = np.ones(n + 1, dtype=np.bool_)          # never split equal values
    cuts[0], cuts[n] = fs[0] + 1.0, fs[n - 1] - 1.0
    for k in range(1, n):
        cuts[k] = 0.5 * (fs[k - 1] + fs[k])
        valid[k] = fs[k - 1] > fs[k]
    best = np.inf
    for k in range(n + 1):
        if valid[k]:
            best = min(best, errors[k])
    tolerance = best + 1e-12 * ws.sum()
    cut = np.inf                    # among the most accurate thresholds, the nearest 0
    for k in range(n + 1):
        if valid[k] and errors[k] <= tolerance and abs(cuts[k]) < abs(cut):
            cut = cuts[k]
    b = -cut
    # kept only where it clearly pays (a one-sided sign test over the changed predictions)
    net, squares = 0.0, 0.0
    for i in range(n):
        if (f[i] + b > 0.0) != (f[i] > 0.0):
            right = (1.0 if f[i] + b > 0.0 else -1.0) == y[i]
            net += weight[i] if right else -weight[i]
            squares += weight[i] ** 2
    return b if net > max(2.0 * np.sqrt(squares), min_gain * weight.sum()) else 0.0


@njit(**JIT_OPTIONS)
def block_kernel_from_dots(dots, sq, code, gamma, degree, coef0, out):
    """out[r, j] = k(x_r, x_j) for the points of a block, from their dot products
    dots[r, j] = <x_r, x_j> (overwritten) and squared norms ``sq``: the kernel matrix the
    sequential part of a block needs, with the vectorised exp of the compiled kernels."""
    n = dots.shape[0]
    bits = np.empty(n, dtype=np.int64)
    for r in range(n):
        kernel_from_dots(code, dots[r], sq[r], sq, gamma, degree, coef0, n, out[r], bits)


@njit(**JIT_OPTIONS)
def expansion_from_dots(dots, x_sq, sv_sq, dual, code, gamma, degree, coef0, out):
    """out[r, o] = sum_j dual[o, j] k(x_r, sv_j) from dots[r, j] = <x_r, sv_j> and the
    squared norms (``code`` a kernel of :mod:`fastsvm.kernels` computed from dot products).

    ``dual`` holds one row of coefficients per model; ``dots`` (rows x n_sv)
    is overwritten.
    """
    n_sv = dual.shape[1]
    kvals = np.empty(n_sv)
    bits = np.empty(n_sv, dtype=np.int64)
    for r in range(dots.shape[0]):
        kernel_from_dots(code, dots[r], x_sq[r], sv_sq, gamma, degree, coef0, n_sv, kvals, bits)
        for o in range(dual.shape[0]):
            s = 0.0
            for j in range(n_sv):
                s += dual[o, j] * kvals[j]
            out[r, o] = s


@njit(**JIT_OPTIONS)
def _pair_row(kvals, order, starts, dual, partners, out, gathered):
    """out[p] = sum_j (coefficient of sv_j in pair p) kvals[j] for the one-vs-one pairs p.

    The vectors are taken by class: ``order[starts[c]:starts[c + 1]]`` are
    those of class c, whose coefficient in pair partners[c, t] is dual[t, q]
    at their position q in that order (0 in the pairs without c).  So a
    vector costs k - 1 products, not one per pair, and each is a dot product
    over the class's vectors (``gathered``: scratch of len(kvals)).
    """
    for q in range(len(order)):
        gathered[q] = kvals[order[q]]
    out[:] = 0.0
    for c in range(len(starts) - 1):
        values = gathered[starts[c]:starts[c + 1]]
        for t in range(partners.shape[1]):
            coef = dual[t, starts[c]:starts[c + 1]]
            s = 0.0
            for q in range(len(values)):    # from 0: vectorised, unlike range(start, stop)
                s += coef[q] * values[q]
            out[partners[c, t]] += s


@njit(**JIT_OPTIONS)
def pair_expansion_from_dots(dots, x_sq, sv_sq, order, starts, dual, partners, code, gamma,
                             degree, coef0, out):
    """out[r, p] = f_p(x_r) of every one-vs-one pair p (see :func:`_pair_row`) from
    dots[r, j] = <x_r, sv_j> and the squared norms, as :func:`expansion_from_dots`."""
    n_sv = dual.shape[1]
    kvals, gathered = np.empty(n_sv), np.empty(n_sv)
    bits = np.empty(n_sv, dtype=np.int64)
    for r in range(dots.shape[0]):
        kernel_from_dots(code, dots[r], x_sq[r], sv_sq, gamma, degree, coef0, n_sv, kvals, bits)
        _pair_row(kvals, order, starts, dual, partners, out[r], gathered)


@njit(**JIT_OPTIONS)
def pair_expansion(kvals, order, starts, dual, partners, out):
    """out[r, p] = f_p(x_r) of every one-vs-one pair p (see :func:`_pair_row`) from the
    kernel values kvals[r, j] = k(x_r, sv_j)."""
    gathered = np.empty(kvals.shape[1])
    for r in range(kvals.shape[0]):
        _pair_row(kvals[r], order, starts, dual, partners, out[r], gathered)


@njit(**JIT_OPTIONS)
def _column_weight(j):
    """A pseudo-random weight in [-0.5, 0.5) for column j (splitmix64's mixing of j), so
    that row hashes need no array of n_features weights."""
    z = np.uint64(j) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0) - 0.5


@njit(**JIT_OPTIONS)
def csr_first_copies(indptr, indices, data, first):
    """first[i] = the smallest j with row j equal to row i, for canonical CSR rows (sorted
    indices, no repeats; ``first`` holds 0..n-1 on entry), in time and memory linear in
    the stored entries.  Rows are grouped by the hash sum_j x_ij w_j (w_j from
    :func:`_column_weight`) and equal hashes checked entry by entry, so a hash collision
    only leaves a copy unjoined."""
    n = len(indptr) - 1
    hashes = np.empty(n)
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * _column_weight(indices[p])
        hashes[i] = s
    order = np.argsort(hashes, kind="mergesort")     # stable: a group's first row leads
    lead = order[0]
    for k in range(1, n):
        i = order[k]
        size = indptr[i + 1] - indptr[i]
        same = hashes[i] == hashes[lead] and size == indptr[lead + 1] - indptr[lead]
        if same:
            for p in range(size):
                a, b = indptr[i] + p, indptr[lead] + p
                if indices[a] != indices[b] or data[a] != data[b]:
                    same = False
                    break
        if same:
            first[i] = lead
        else:
            lead = i
