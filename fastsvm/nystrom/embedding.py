r"""Nystrom kernel embedding: landmark sampling and the map x -> (K_mm^{1/2})^+ k_m(x).

Snacks (Tanji, Della Vecchia, Glineur & Villa, "Snacks: a fast large-scale
kernel SVM solver", Sec. II-A) replaces the kernel SVM over n points by a
linear SVM over the embedded points

.. math::

    \mathbb{x} = (K_{mm}^{1/2})^{+} k_m(x), \qquad
    k_m(x) = (k(\tilde x_1, x), \dots, k(\tilde x_m, x))^\top,

where :math:`\tilde x_1..\tilde x_m` are landmarks drawn from the training
set.  Inner products of embedded points are the Nystrom approximation of the
kernel, :math:`\langle \mathbb{x}, \mathbb{x}' \rangle = k_m(x)^\top
K_{mm}^{+} k_m(x')`, exactly k(x, x') when x and x' are landmarks.

Stable computation (never an explicit inverse of a matrix square root):
with the symmetric eigendecomposition :math:`K_{mm} = U \operatorname{diag}(s) U^\top`
and the r eigenvalues above ``NYSTROM_EIG_RTOL * max(s)`` kept,

.. math::

    \mathbb{x} = U_r \operatorname{diag}(s_r)^{-1/2} U_r^\top k_m(x).

The last factor :math:`U_r` is an orthogonal map onto an r-dimensional
subspace; it changes no inner product or norm, so the linear SVM on
:math:`\operatorname{diag}(s_r)^{-1/2} U_r^\top k_m(x) \in \mathbb{R}^r` has
the same objective values and its solution is the same model (w in the
paper's coordinates is :math:`U_r w`).  :class:`NystromMap` therefore stores
the m x r projection :math:`P = U_r \operatorname{diag}(s_r)^{-1/2}` and
embeds x as :math:`k_m(x)^\top P`: r <= m columns, fewer when K_mm is
rank-deficient (duplicate landmarks, a wide kernel).

The embedding of n points is computed in row chunks (``EMBED_CHUNK_BYTES``
of float64 kernel block at a time) and written once into the output array.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .. import _options
from ..kernels import kernel_matrix, row_sq_norms


def kernel_diagonal(X, kernel, gamma=None, degree=3, coef0=0.0):
    """k(x_i, x_i) for every row of X, float64."""
    if kernel in ("rbf", "laplacian"):
        return np.ones(X.shape[0])
    sq = row_sq_norms(X)
    if kernel == "linear":
        return sq
    return (gamma * sq + coef0) ** degree


def _chunk_rows(width):
    """Rows per chunk so that a float64 block of ``width`` columns fills ``EMBED_CHUNK_BYTES``."""
    return max(1, _options.EMBED_CHUNK_BYTES // (8 * width))


def _dense_if_small(landmarks):
    """Sparse landmarks as a dense array when that fits one chunk: kernel blocks of
    sparse rows against dense landmarks are about twice as fast as sparse x sparse."""
    if sp.issparse(landmarks) and landmarks.shape[0] * landmarks.shape[1] * 8 <= _options.EMBED_CHUNK_BYTES:
        return landmarks.toarray()
    return landmarks


@dataclass
class NystromMap:
    """The fitted map x -> k_m(x)^T P (see the module docstring).

    Attributes
    ----------
    landmarks : ndarray or csr_matrix of shape (m, n_features)
    projection : ndarray of shape (m, r)
        P = U_r diag(s_r)^(-1/2).
    kernel, gamma, degree, coef0
        The kernel and its parameters.
    """

    landmarks: object
    projection: np.ndarray
    kernel: str
    gamma: float
    degree: int
    coef0: float

    def __post_init__(self):
        self.landmarks = _dense_if_small(self.landmarks)

    @classmethod
    def fit(cls, landmarks, kernel="rbf", gamma=None, degree=3, coef0=0.0,
            rtol=None):
        """Eigendecompose K_mm of ``landmarks`` and keep eigenvalues above ``rtol * max``."""
        rtol = _options.NYSTROM_EIG_RTOL if rtol is None else rtol
        landmarks = _dense_if_small(landmarks)
        K_mm = kernel_matrix(landmarks, landmarks, kernel, gamma, degree, coef0)
        s, U = scipy.linalg.eigh(K_mm, overwrite_a=True, check_finite=False)
        s, U = s[::-1], U[:, ::-1]
        if not s[0] > 0:
            raise ValueError("the kernel matrix of the landmarks is zero: every landmark maps to "
                             "the zero vector (all-zero rows with a linear or poly kernel?)")
        keep = s > rtol * s[0]
        projection = np.ascontiguousarray(U[:, keep] / np.sqrt(s[keep]))
        return cls(landmarks, projection, kernel, gamma, degree, coef0)

    @property
    def n_components(self):
        """r, the dimension of the embedding."""
        return self.projection.shape[1]

    def kernel_to_landmarks(self, X):
        """k_m(x) for every row of X: the n x m float64 block K(X, landmarks)."""
        return kernel_matrix(X, self.landmarks, self.kernel, self.gamma, self.degree, self.coef0)

    def transform(self, X, dtype=np.float32, progress=None):
        """Embed the rows of X: ndarray of shape (n_samples, r) and type ``dtype``.

        Computed in chunks of rows; ``progress`` (a tqdm-like object) is
        advanced by the rows done.
        """
        out = np.empty((X.shape[0], self.n_components), dtype=dtype)
        # the product in the output's type: float32 is about 1.6x faster, and
        # the kernel block and projection are rounded once either way
        projection = self.projection.astype(dtype, copy=False)
        for rows, block in self._kernel_blocks(X):
            out[rows] = block.astype(dtype, copy=False) @ projection
            if progress is not None:
                progress.update(block.shape[0])
        return out

    def apply(self, X, W):
        """embedding(X) @ W without storing the embedding: ndarray of shape (n_samples, W.shape[1])."""
        PW = self.projection @ W
        out = np.empty((X.shape[0], W.shape[1]))
        for rows, block in self._kernel_blocks(X):
            out[rows] = block @ PW
        return out

    def _kernel_blocks(self, X):
        """(row slice, K(X[rows], landmarks)) in chunks of ``EMBED_CHUNK_BYTES``."""
        size = _chunk_rows(self.projection.shape[0])
        for start in range(0, X.shape[0], size):
            rows = slice(start, start + size)
            yield rows, self.kernel_to_landmarks(X[rows])


def sample_landmarks(X, m, method, rng, kernel="rbf", gamma=None, degree=3, coef0=0.0):
    r"""Indices of m distinct rows of X to serve as landmarks, sorted.

    ``method='uniform'``: m rows uniformly without replacement (the paper's
    experiments).

    ``method='leverage'``: approximate ridge leverage-score sampling (the
    paper's ref. [33], Rudi, Calandriello, Carratino & Rosasco, "On fast
    leverage score sampling and optimal learning", NeurIPS 2018).  The ridge
    leverage score of x_i at ridge lambda is
    l_i = (K (K + lambda n I)^{-1})_{ii}; their sum is the effective
    dimension d(lambda).  With a uniform sketch J of M rows, Woodbury gives
    the estimator of [33] (eq. (4), weights A = (M/n) I for uniform J):

    .. math::

        \tilde l(x) = \frac{1}{\lambda n}\left(k(x, x) - k_{xJ}
        (K_{JJ} + \lambda M I)^{-1} k_{Jx}\right),

    evaluated through the eigendecomposition of K_JJ.  lambda is chosen by
    bisection so that the estimated effective dimension n * mean(l~) equals
    m (the number of landmarks one can afford sets the scale that is
    resolved), then m rows of a uniform pool of ``LEVERAGE_POOL_FACTOR * m``
    rows are drawn without replacement with probability proportional to l~.
    This is one level of [33]'s BLESS ladder, with a fixed sketch of at most
    ``LEVERAGE_SKETCH_SIZE`` rows; its cost is pool x sketch^2, independent
    of n.
    """
    n = X.shape[0]
    if method == "uniform":
        return np.sort(rng.choice(n, m, replace=False))
    sketch = rng.choice(n, min(m, _options.LEVERAGE_SKETCH_SIZE, n), replace=False)
    pool = rng.choice(n, min(n, _options.LEVERAGE_POOL_FACTOR * m), replace=False)
    params = dict(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    X_sketch = X[sketch]
    s, U = scipy.linalg.eigh(kernel_matrix(X_sketch, X_sketch, **params), check_finite=False)
    s = np.maximum(s, 0.0)
    M = len(sketch)

    # B[i] = U^T k_J(x_i) and k(x_i, x_i) for the pool, chunk by chunk
    B = np.empty((len(pool), M))
    rows = _chunk_rows(M)
    for start in range(0, len(pool), rows):
        B[start:start + rows] = kernel_matrix(X[pool[start:start + rows]], X_sketch, **params) @ U
    B **= 2
    diag = kernel_diagonal(X[pool], **params)

    def scores(lam):
        return np.maximum(diag - B @ (1.0 / (s + lam * M)), 0.0) / (lam * n)

    # d(lambda) decreases in lambda: bisection on log(lambda) for d = m
    lo, hi = -30.0, 10.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if n * scores(np.exp(mid)).mean() > m:
            lo = mid
        else:
            hi = mid
    p = scores(np.exp(hi))
    # a floor keeps every pool row drawable (m may equal the pool size)
    p += 1e-12 * p.max() + 1e-300
    chosen = rng.choice(len(pool), m, replace=False, p=p / p.sum())
    return np.sort(pool[chosen])

