"""Kernels: scikit-learn SVC's kernel choices, resolved once and evaluated in blocks.

A :class:`Kernel` holds a kernel with its numeric parameters (``gamma='scale'``
already resolved), as the estimators' ``kernel``, ``gamma``, ``degree`` and
``coef0`` parameters define it, with SVC's meaning:

===============  ======================================  =========================
``kernel``       k(x, z)                                 compiled code evaluates it
===============  ======================================  =========================
``'linear'``     <x, z>                                  from dot products
``'poly'``       (gamma <x, z> + coef0)^degree            from dot products
``'rbf'``        exp(-gamma ||x - z||^2)                 from dot products and norms
``'sigmoid'``    tanh(gamma <x, z> + coef0)              from dot products
``'laplacian'``  exp(-gamma ||x - z||_1)                 (NystromSVC only)
``'precomputed'``  X holds kernel values: n x n at fit,    by lookup in the matrix
                 K(X_test, X_train) at prediction
a callable       ``kernel(A, B)`` returns K(A, B), as     by lookup in K(X, X),
                 for SVC; it receives X as given          computed once
===============  ======================================  =========================

'sigmoid' is not positive semi-definite for most parameters: it has no
feature space, which the margin bounds of ``PegasosSVC`` need.

Batch evaluation goes through SciPy's BLAS (:func:`fastsvm._blas.gemm_nt`,
which says why): the dot products of K(A, B) for dense rows
(:meth:`Kernel.__call__`; CSR rows go through scikit-learn's pairwise
kernels, or in expansions against dense centers through SciPy's product with
the centers transposed once) and the products of expansions K(X, centers) @ coef
(:meth:`Kernel.expansion`), in row blocks of
``fastsvm._options.PREDICT_CHUNK_ROWS``, for dense and CSR sparse X alike.
"""

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from . import _options
from ._blas import gemm_nt
from ._exp import rbf_in_place

#: SVC's kernel names; every estimator also accepts a callable (see :class:`Kernel`).
KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")

# Codes of the kernels that compiled code evaluates (fastsvm._packed.kernel_from_dots);
# a callable kernel is evaluated once into a kernel matrix and then looked up, like PRECOMPUTED.
LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED = 0, 1, 2, 3, 4
_CODES = {"linear": LINEAR, "poly": POLY, "rbf": RBF, "sigmoid": SIGMOID,
          "precomputed": PRECOMPUTED, "callable": PRECOMPUTED}
#: The kernels computed from dot products (and, for 'rbf', squared norms).
_FROM_DOTS = ("linear", "poly", "rbf", "sigmoid")
# The parameters each named kernel uses.
_USES = {"linear": (), "poly": ("gamma", "degree", "coef0"), "rbf": ("gamma",),
         "sigmoid": ("gamma", "coef0"), "laplacian": ("gamma",)}


def renumber_columns(X, columns):
    """CSR X on the sorted ``columns`` (a superset of the columns X uses), renumbered 0, 1,
    ...: in time linear in the non-zeros, where scipy's ``X[:, columns]`` builds an index
    array over all n_features (8.6 GB for a column of index 2^31 - 2)."""
    X = X.tocsr()
    return sp.csr_matrix((X.data, np.searchsorted(columns, X.indices), X.indptr),
                         shape=(X.shape[0], len(columns)))


def _on_used_columns(A, B):
    """Sparse A and B on the columns either uses, renumbered: the same dot products and
    norms.  scipy's product A @ B.T converts B.T to CSR with an index array over every
    column, which for hashed features (indices up to 2^31 - 1) took 8.6 GB and 12 s for
    a few rows.  Rows storing no entry at all keep one (empty) column: scikit-learn's
    kernels refuse rows of none."""
    columns = np.union1d(A.indices, B.indices) if A.nnz or B.nnz else np.zeros(1, np.int32)
    if len(columns) > A.shape[1] // 2:
        return A, B
    return renumber_columns(A, columns), renumber_columns(B, columns)


def resolve_gamma(gamma, X):
    """Numeric gamma; ``'scale'`` means 1 / (n_features * X.var()) as in scikit-learn's SVC."""
    if gamma != "scale":
        return float(gamma)
    if sp.issparse(X):         # as SVC computes it, in float64 (float32 CSR loses the variance)
        X = X.astype(np.float64, copy=False)
        var = X.multiply(X).mean() - X.mean() ** 2
    else:
        var = X.var(dtype=np.float64)
    with np.errstate(over="ignore"):
        gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if not np.isfinite(gamma):
        raise ValueError(f"gamma='scale' is 1 / (n_features * X.var()), which overflows for "
                         f"X.var() = {var:.3g}: rescale the features (for example with "
                         "StandardScaler) or give a numeric gamma")
    return gamma


def uses_gamma(kernel):
    """Whether the kernel named ``kernel`` (or a callable) has a width gamma."""
    return "gamma" in kernel_parameters(kernel)


def kernel_parameters(kernel):
    """The parameters among gamma, degree and coef0 that the kernel named ``kernel`` reads
    (none for 'precomputed' or a callable)."""
    return () if callable(kernel) else _USES.get(kernel, ())


#: The attribute set (True) on an ArithmeticError that a kernel callable raised: the user's
#: code failed, and ``fit`` passes the error on as it is (as SVC does) instead of reporting
#: it as an overflow of the solver's arithmetic.
RAISED_BY_CALLABLE = "raised_by_kernel_callable"


@dataclass(frozen=True)
class Kernel:
    """A kernel with resolved numeric parameters (see the module docstring).

    ``name`` is one of :data:`KERNELS`, ``'laplacian'`` or ``'callable'``
    (then ``function`` is the user's callable); ``gamma`` is None for the
    kernels that have none.
    """

    name: str
    gamma: float = None
    degree: int = 3
    coef0: float = 0.0
    function: Callable = None

    @classmethod
    def resolve(cls, kernel, gamma, degree, coef0, X):
        """The kernel of an estimator's parameters; 'scale' is resolved on X."""
        if callable(kernel):
            return cls("callable", None, degree, coef0, kernel)
        gamma = resolve_gamma(gamma, X) if uses_gamma(kernel) else None
        return cls(kernel, gamma, int(degree), float(coef0))

    @property
    def on_gram(self):
        """Whether training works on the n x n kernel matrix ('precomputed' and callables)."""
        return self.name in ("precomputed", "callable")

    @property
    def code(self):
        """The integer compiled code branches on."""
        return _CODES[self.name]

    @property
    def psd(self):
        """Whether the kernel is known to be positive semi-definite (a callable is trusted):
        not 'sigmoid', nor 'poly' with coef0 < 0 (degree >= 1), whose (gamma <x, z> + coef0)^d
        is indefinite (d = 2, gamma = 1, coef0 = -1 on the points 0 and 1: [[1, 1], [1, 0]]);
        with coef0 >= 0 its binomial terms are positive multiples of <x, z>^k."""
        if self.name == "poly":
            return self.coef0 >= 0 or self.degree == 0
        return self.name != "sigmoid"

    def __call__(self, A, B, out=None):
        """K(A, B) in float64 (not for 'precomputed', whose values are given).

        Float32 input is promoted first: the RBF distances ||x||^2 + ||z||^2 - 2<x, z>
        lose most of their digits to cancellation in single precision.  A
        callable's result is checked for its shape and for finite values.

        ``out``: an optional C-contiguous float64 array of the result's shape.  The
        dot-product kernels on dense rows compute K in it and return it (a buffer reused
        over row blocks, see :func:`~fastsvm._blas.gemm_nt`); the others ignore it.
        """
        if self.name == "callable":
            return self._call_function(A, B)
        same = A is B
        A = A.astype(np.float64, copy=False)
        B = B.astype(np.float64, copy=False)
        if self.name == "laplacian" or sp.issparse(A) or sp.issparse(B):
            if sp.issparse(A) and sp.issparse(B):
                A, B = _on_used_columns(A.tocsr(), B.tocsr())
            params = {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
            # exp(-gamma d): a product that overflows to -inf gives exp's limit, 0, exactly
            # (gamma = 1e308 had warned "overflow encountered in multiply")
            with (np.errstate(over="ignore") if self.name in ("rbf", "laplacian")
                  else contextlib.nullcontext()):
                return pairwise_kernels(A, B, metric=self.name,
                                        **{k: params[k] for k in _USES[self.name]})
        dots = gemm_nt(A, B, out)
        if self.name != "rbf":
            return self.from_dots(dots, None, None)
        K = self.from_dots(dots, row_sq_norms(A), row_sq_norms(B))
        if same:                # exactly 1, as scikit-learn's euclidean_distances(X, X) gives
            np.fill_diagonal(K, 1.0)
        return K

    def _call_function(self, A, B):
        shape = (_num_rows(A), _num_rows(B))
        try:
            K = self.function(A, B)   # its own errors reach the caller as they are, as in SVC
        except ArithmeticError as err:   # fit reports other ones as an overflow of its own
            setattr(err, RAISED_BY_CALLABLE, True)
            raise
        if sp.issparse(K):          # as SVC takes it
            K = K.toarray()
        try:
            K = np.asarray(K, dtype=np.float64)
        except (TypeError, ValueError) as err:      # the type kept: SVC raises NumPy's
            raise type(err)(f"the kernel callable must return a numeric array: {err}") from err
        if K.shape != shape:
            raise ValueError(f"the kernel callable returned an array of shape {K.shape} for "
                             f"inputs of {shape[0]} and {shape[1]} rows; it must return "
                             f"K(A, B) of shape {shape}")
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel callable returned NaN or infinite values")
        return K

    def from_dots(self, dots, sq_a, sq_b):
        """K from the dot products ``dots`` (rows x columns) and the rows' and columns'
        squared norms (``dots`` may be overwritten; the Gaussian kernel's in one compiled
        pass, :func:`~fastsvm._exp.rbf_in_place`)."""
        if self.name == "rbf":          # in place: n x m temporaries cost as much as the product
            dots = np.ascontiguousarray(dots, dtype=np.float64)
            rbf_in_place(dots, np.ascontiguousarray(sq_a, dtype=np.float64),
                         np.ascontiguousarray(sq_b, dtype=np.float64), float(self.gamma))
            return dots
        if self.name == "linear":
            return dots
        dots *= self.gamma
        dots += self.coef0
        if self.name == "poly":
            return np.power(dots, self.degree, out=dots)
        return np.tanh(dots, out=dots)

    def diagonal(self, X):
        """k(x_i, x_i) for every row of X, float64 (not for 'precomputed': the
        diagonal of the kernel matrix is given)."""
        if self.name in ("rbf", "laplacian"):
            return np.ones(_num_rows(X))
        if self.name == "callable":
            step = 64          # a few calls, each on a small block
            return np.concatenate([np.diag(self(block, block)) for block in
                                   (_take(X, slice(s, s + step))
                                    for s in range(0, _num_rows(X), step))] + [np.zeros(0)])
        return self.from_dots(row_sq_norms(X), None, None)

    def _sparse_rows_against(self, centers):
        """The function A -> K(A, centers) for CSR rows A against dense ``centers``, with
        the centers transposed once (C order), so that SciPy's CSR product reads them in
        place.  Through scikit-learn's pairwise kernels that product copied the transposed
        centers in every call: BudgetSVC's 2,000 dense support vectors of 131,072 features,
        2 GB, at every block of 4,096 rows predicted (3.7 s a block, 2.4 s without)."""
        centers_t = np.ascontiguousarray(np.asarray(centers, dtype=np.float64).T)
        sq_centers = row_sq_norms(centers) if self.name == "rbf" else None

        def against(A):
            A = A.astype(np.float64, copy=False)
            dots = np.asarray(A @ centers_t)
            return self.from_dots(dots, None if sq_centers is None else row_sq_norms(A),
                                  sq_centers)

        return against

    def between(self, A, centers, out=None):
        """K(A, centers).  For 'precomputed', A holds K(points, training rows) and
        ``centers`` are training row indices (columns of A).  ``out`` as for
        :meth:`__call__`."""
        if self.name == "precomputed":
            return np.asarray(A[:, centers], dtype=np.float64)
        return self(A, centers, out)

    def expansion(self, X, centers, coef):
        """F = K(X, centers) @ coef, blockwise, without forming all of K.

        Parameters
        ----------
        X : {ndarray, csr_matrix} of shape (n_samples, n_features), or what a
            callable kernel takes; K(X, training rows) for 'precomputed'
        centers : ndarray or CSR matrix of shape (n_centers, n_features), or what
            a callable takes; training row indices for 'precomputed'.  CSR centers
            meet dense rows (dense X, or blocks made dense) as a dense copy, made
            once: the same products as centers stored dense.
        coef : ndarray or sparse array of shape (n_centers, n_outputs)
            A sparse ``coef`` (each center weighted in few outputs, as one-vs-one
            pairs) is applied as (coef^T K^T)^T, in time linear in its non-zeros.

        Blocks of CSR rows that are not very sparse are made dense first
        (:func:`dense_blocks_pay`).

        Returns
        -------
        F : ndarray of shape (n_samples, n_outputs)
        """
        n = _num_rows(X)
        out = np.zeros((n, coef.shape[1]))
        if coef.shape[0] == 0:
            return out
        step = chunk_rows(coef.shape[0])
        densify = not self.on_gram and dense_blocks_pay(X)
        if sp.issparse(centers) and not self.on_gram and (densify or not sp.issparse(X)):
            centers = centers.toarray()
        coef_t = sp.csr_array(coef.T) if sp.issparse(coef) else None
        sparse_rows = (self.name in _FROM_DOTS and sp.issparse(X) and not densify
                       and not sp.issparse(centers))
        if sparse_rows:
            against = self._sparse_rows_against(centers)
        else:
            buffer = np.empty(min(n, step) * coef.shape[0])   # for every block's kernel values
        for start in range(0, n, step):
            block = _take(X, slice(start, start + step))
            block = block.toarray() if densify else block
            if sparse_rows:
                out[start:start + step] = (gemm_nt(against(block), coef.T) if coef_t is None
                                           else (coef_t @ against(block).T).T)
                continue
            into = buffer[:_num_rows(block) * coef.shape[0]]
            if coef_t is None:
                K = self.between(block, centers, into.reshape(-1, coef.shape[0]))
                out[start:start + step] = gemm_nt(K, coef.T)
                continue
            # the sparse product reads K^T by rows: computed so for the named kernels (a
            # user's callable is called as K(X, centers), as scikit-learn calls it)
            K_t = (np.ascontiguousarray(self.between(block, centers).T) if self.on_gram
                   else self(centers, block, into.reshape(coef.shape[0], -1)))
            out[start:start + step] = (coef_t @ K_t).T
        return out


def chunk_rows(n_centers):
    """Rows of X per block of kernel values against ``n_centers`` centers (see
    ``_options.PREDICT_CHUNK_ROWS``)."""
    return max(1, min(_options.PREDICT_CHUNK_ROWS,
                      _options.PREDICT_CHUNK_BYTES // (8 * max(n_centers, 1))))


def _num_rows(A):
    return A.shape[0] if hasattr(A, "shape") else len(A)


def _take(A, rows):
    """Rows of an array, sparse matrix or sequence (what a callable kernel may receive)."""
    from sklearn.utils import _safe_indexing

    return _safe_indexing(A, rows)


def row_sq_norms(X):
    """Squared Euclidean norm of each row of a dense or CSR matrix, float64."""
    if sp.issparse(X):
        X = X.astype(np.float64, copy=False)     # summed in float64, as dense rows' einsum
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def dense_blocks_pay(X):
    """Whether row blocks of X are better made dense before a product with dense rows:
    CSR with at least ``_options.DENSIFY_MIN_DENSITY`` non-zeros and at most
    ``_options.DENSIFY_MAX_FEATURES`` features (scipy's CSR x dense product is
    single-threaded; a dense block goes to BLAS)."""
    return (sp.issparse(X) and X.shape[1] <= _options.DENSIFY_MAX_FEATURES
            and X.nnz >= _options.DENSIFY_MIN_DENSITY * X.shape[0] * X.shape[1])
