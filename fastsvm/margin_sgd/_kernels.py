"""Compiled one-pass margin SGD with extreme early stopping (Orchel & Suykens, LOD 2021).

Model: f(x) = sum_j y_j alpha_j k(x_j, x), k the Gaussian kernel, no offset
and no regularisation term.  One pass visits the drawn points k in order;
each point's coefficient is set at most once, at its first draw (extreme
early stopping), from the margin of the model built so far:

    m_k = y_k f_{k-1}(x_k),
    'squared-hinge' (the paper's rule (6), derived in its appendix):
        alpha_k = max(0, 1 - m_k)  if m_k <= M,  else 0;
    'constant' (the original margin SGD rule):
        alpha_k = 1                if m_k <= M,  else 0.

(The constant's value only scales f, and with it the margins against M, so
1 loses no generality: another constant c is the same model with M / c.)

Support vectors (points with alpha > 0) are stored feature-major in ``svt``
with their signed coefficients y_j alpha_j, so each margin is n_sv dot
products as contiguous axpys and one vectorised exp (``fastsvm._packed``).
"""

import numpy as np
from numba import njit

from .._options import JIT_OPTIONS
from .._packed import rbf_from_dots, store_sv, sv_dots

SQUARED_HINGE = 0
CONSTANT = 1


@njit(**JIT_OPTIONS)
def one_pass(X, data, indices, indptr, is_sparse, sq_norms, y, order, gamma, M, rule, visited,
             svt, sv_sq, coef, sv_index, n_sv):
    """Visit the points ``order`` (first draws only); returns the new n_sv.

    ``visited[i]`` marks points whose coefficient is already decided;
    ``sv_index[s]`` is the training index of support vector s.
    """
    cap = svt.shape[1]
    dots = np.empty(cap)
    kvals = np.empty(cap)
    bits = np.empty(cap, dtype=np.int64)
    for i in order:
        if visited[i]:
            continue
        visited[i] = True
        f = 0.0
        if n_sv > 0:
            sv_dots(X, data, indices, indptr, is_sparse, i, svt, n_sv, dots)
            rbf_from_dots(dots, sq_norms[i], sv_sq, gamma, n_sv, kvals, bits)
            for s in range(n_sv):
                f += coef[s] * kvals[s]
        margin = y[i] * f
        if margin > M:
            continue
        alpha = max(0.0, 1.0 - margin) if rule == SQUARED_HINGE else 1.0
        if alpha > 0.0:
            store_sv(X, data, indices, indptr, is_sparse, i, svt, n_sv)
            sv_sq[n_sv] = sq_norms[i]
            coef[n_sv] = y[i] * alpha
            sv_index[n_sv] = i
            n_sv += 1
    return n_sv
