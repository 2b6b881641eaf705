"""Kernel helpers shared by the estimators.

Gaussian (RBF) kernel k(x, x') = exp(-gamma ||x - x'||^2) everywhere; the
Nystrom estimator also takes the other kernels of :data:`KERNELS`.  Batch
evaluation goes through BLAS (``X @ SV.T``) in row blocks of
``fastsvm._options.PREDICT_CHUNK_ROWS``, for dense and CSR sparse X alike.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances, pairwise_kernels

from . import _options

#: Kernels of :func:`kernel_matrix`, with the parameters each one uses.
KERNELS = {
    "rbf": ("gamma",),            # exp(-gamma ||x - x'||^2)
    "laplacian": ("gamma",),      # exp(-gamma ||x - x'||_1)
    "poly": ("gamma", "degree", "coef0"),  # (gamma <x, x'> + coef0)^degree
    "linear": (),                 # <x, x'>
}


def resolve_gamma(gamma, X):
    """Numeric gamma; ``'scale'`` means 1 / (n_features * X.var()) as in scikit-learn's SVC."""
    if gamma != "scale":
        return float(gamma)
    if sp.issparse(X):
        var = X.multiply(X).mean() - X.mean() ** 2
    else:
        var = X.var()
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def kernel_matrix(X, Y, kernel, gamma=None, degree=3, coef0=0.0):
    """K(X, Y) in float64 for a kernel of :data:`KERNELS` (scikit-learn's ``pairwise_kernels``).

    Float32 input is promoted first: the RBF distances ||x||^2 + ||y||^2 - 2<x, y>
    lose most of their digits to cancellation in single precision.
    """
    params = {"gamma": gamma, "degree": degree, "coef0": coef0}
    X = X.astype(np.float64, copy=False)
    Y = Y.astype(np.float64, copy=False)
    return pairwise_kernels(X, Y, metric=kernel, **{k: params[k] for k in KERNELS[kernel]})


def row_sq_norms(X):
    """Squared Euclidean norm of each row of a dense or CSR matrix, float64."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def rbf_expansion(X, centers, coef, gamma):
    """Evaluate F = K(X, centers) @ coef blockwise without forming all of K.

    Blocks of a CSR matrix that is not very sparse are made dense first (see
    ``_options.DENSIFY_MIN_DENSITY``).

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    centers : ndarray of shape (n_centers, n_features)
    coef : ndarray of shape (n_centers, n_outputs)
    gamma : float

    Returns
    -------
    F : ndarray of shape (n_samples, n_outputs)
    """
    if centers.shape[0] == 0:
        return np.zeros((X.shape[0], coef.shape[1]))
    out = np.empty((X.shape[0], coef.shape[1]))
    center_sq = row_sq_norms(centers)[np.newaxis, :]
    step = _options.PREDICT_CHUNK_ROWS
    densify = (sp.issparse(X) and X.shape[1] <= _options.DENSIFY_MAX_FEATURES
               and X.nnz >= _options.DENSIFY_MIN_DENSITY * X.shape[0] * X.shape[1])
    for start in range(0, X.shape[0], step):
        block = X[start:start + step]
        if densify:                 # a dense BLAS product beats CSR x dense here
            block = block.toarray()
        d2 = euclidean_distances(block, centers, Y_norm_squared=center_sq, squared=True)
        np.multiply(d2, -gamma, out=d2)
        np.exp(d2, out=d2)
        out[start:start + step] = d2 @ coef
    return out
