"""Training data in the form compiled kernels take, and the row operations they share.

A kernel receives ``X, data, indices, indptr, is_sparse``: a dense C-ordered
array (with empty CSR arrays), or CSR arrays (with an empty dense array), and
branches on ``is_sparse`` per row.  One compiled loop thus serves both inputs
without a copy.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import _options
from ._exp import exp_nonpositive
from ._options import JIT_OPTIONS
from ._validation import canonical_csr, check_sparse_structure
from .kernels import LINEAR, POLY, RBF, row_sq_norms


@dataclass
class PackedData:
    """X in the form the compiled kernels take: a dense array or CSR arrays, plus row norms."""

    dense: np.ndarray
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    is_sparse: bool
    sq_norms: np.ndarray
    n_features: int

    @classmethod
    def from_matrix(cls, X):
        """Pack a validated float32/float64 C-ordered ndarray or CSR matrix.

        The compiled kernels read and write through CSR column indices
        unchecked, so they are verified here (scipy does not check them on
        construction), and duplicate entries are summed on a copy.  CSR input
        with at least ``_options.PACKED_DENSE_FROM`` stored entries is packed
        dense: the compiled row loops are then contiguous and vectorise.
        """
        X = check_sparse_structure(X)
        if sp.issparse(X) and X.nnz >= _options.PACKED_DENSE_FROM * X.shape[0] * X.shape[1]:
            X = X.toarray()         # sums duplicates itself
        X = canonical_csr(X)
        if sp.issparse(X):
            return cls(np.empty((0, 0), dtype=X.dtype), X.data,
                       X.indices.astype(np.int64, copy=False),
                       X.indptr.astype(np.int64, copy=False), True, row_sq_norms(X), X.shape[1])
        empty_i = np.empty(0, dtype=np.int64)
        return cls(X, np.empty(0, dtype=X.dtype), empty_i, empty_i, False, row_sq_norms(X),
                   X.shape[1])

    def take(self, rows):
        """The rows ``rows`` (int64 indices) of X, in that order, packed the same way."""
        if self.is_sparse:
            X = sp.csr_matrix((self.data, self.indices, self.indptr),
                              shape=(self.n_samples, self.n_features))[rows]
            return PackedData(self.dense, X.data, X.indices.astype(np.int64, copy=False),
                              X.indptr.astype(np.int64, copy=False), True, self.sq_norms[rows],
                              self.n_features)
        return PackedData(self.dense.take(rows, axis=0), self.data, self.indices, self.indptr,
                          False, self.sq_norms[rows], self.n_features)

    @property
    def arrays(self):
        """The five arguments that stand for X in a kernel call."""
        return self.dense, self.data, self.indices, self.indptr, self.is_sparse

    @property
    def n_samples(self):
        return self.sq_norms.shape[0]

    @property
    def density(self):
        """Fraction s of stored entries (1 for dense input)."""
        if not self.is_sparse:
            return 1.0
        return self.data.shape[0] / max(1, self.n_samples * self.n_features)


@njit(**JIT_OPTIONS)
def row_dot(X, data, indices, indptr, is_sparse, i, w):
    """<x_i, w[:n_features]> for row i of a dense array or CSR arrays."""
    s = 0.0
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
    else:
        for f in range(X.shape[1]):
            s += X[i, f] * w[f]
    return s


@njit(**JIT_OPTIONS)
def row_axpy(X, data, indices, indptr, is_sparse, i, a, out):
    """out[:n_features] += a * x_i."""
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            out[indices[p]] += a * data[p]
    else:
        for f in range(X.shape[1]):
            out[f] += a * X[i, f]


@njit(**JIT_OPTIONS)
def column_axpy(v, col, n_sv, out):
    """out[j] += v * col[j] for j < n_sv: one feature's contribution to n_sv dot products."""
    for j in range(n_sv):
        out[j] += v * col[j]


@njit(**JIT_OPTIONS)
def sv_dots(X, data, indices, indptr, is_sparse, i, svt, n_sv, out):
    """out[j] = <x_i, sv_j> for j < n_sv; the support vectors are the columns of ``svt``
    (n_features x capacity, feature-major, so each feature is one contiguous axpy)."""
    for j in range(n_sv):
        out[j] = 0.0
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            column_axpy(data[p], svt[indices[p]], n_sv, out)
    else:
        for f in range(X.shape[1]):
            if X[i, f] != 0.0:
                column_axpy(X[i, f], svt[f], n_sv, out)


@njit(**JIT_OPTIONS)
def store_sv(X, data, indices, indptr, is_sparse, i, svt, slot):
    """svt[:, slot] = x_i."""
    for f in range(svt.shape[0]):
        svt[f, slot] = 0.0
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            svt[indices[p], slot] = data[p]
    else:
        for f in range(X.shape[1]):
            svt[f, slot] = X[i, f]


@njit(**JIT_OPTIONS)
def rbf_from_dots(dots, sq_x, sv_sq, gamma, n_sv, out, bits):
    """out[j] = exp(-gamma max(0, ||x||^2 + ||sv_j||^2 - 2 dots[j])).

    ``dots`` is overwritten with the exponents (exp into a separate array
    vectorises; in place it does not); ``bits`` is int64 scratch.
    """
    for j in range(n_sv):
        dots[j] = -gamma * max(sq_x + sv_sq[j] - 2.0 * dots[j], 0.0)
    exp_nonpositive(dots, n_sv, out, bits)


@njit(**JIT_OPTIONS)
def kernel_from_dot(code, dot, sq_a, sq_b, gamma, degree, coef0):
    """k(a, b) from <a, b> and the squared norms, for a kernel code of :mod:`fastsvm.kernels`
    (LINEAR, POLY, RBF or SIGMOID)."""
    if code == RBF:
        return np.exp(-gamma * max(sq_a + sq_b - 2.0 * dot, 0.0))
    if code == LINEAR:
        return dot
    if code == POLY:
        return (gamma * dot + coef0) ** degree
    return np.tanh(gamma * dot + coef0)


@njit(**JIT_OPTIONS)
def kernel_from_dots(code, dots, sq_x, sv_sq, gamma, degree, coef0, n_sv, out, bits):
    """out[j] = k(x, sv_j) for j < n_sv from dots[j] = <x, sv_j> and the squared norms.

    ``code`` is a kernel code of :mod:`fastsvm.kernels` (LINEAR, POLY, RBF or
    SIGMOID); ``dots`` may be overwritten, ``bits`` is int64 scratch.  The RBF
    kernel goes through the vectorised exp of :func:`rbf_from_dots`.
    """
    if code == RBF:
        rbf_from_dots(dots, sq_x, sv_sq, gamma, n_sv, out, bits)
    else:
        for j in range(n_sv):
            out[j] = kernel_from_dot(code, dots[j], sq_x, sv_sq[j], gamma, degree, coef0)
