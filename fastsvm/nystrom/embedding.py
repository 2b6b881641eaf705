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

Any kernel of :mod:`fastsvm.kernels` works: k_m(x) is
``Kernel.between(x, landmarks)``, so for 'precomputed' the landmarks are
column indices of the given kernel values and for a callable the landmark
rows are passed to it.  An indefinite kernel ('sigmoid') gives K_mm negative
eigenvalues; they fall below the cut-off like the small ones, so the
embedding keeps the positive part of K_mm.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .. import _options
from ..kernels import Kernel, _num_rows, _take


def _chunk_rows(width):
    """Rows per chunk so that a float64 block of ``width`` columns fills ``EMBED_CHUNK_BYTES``."""
    return max(1, _options.EMBED_CHUNK_BYTES // (8 * width))


def _dense_if_small(landmarks):
    """Sparse landmarks as a dense array when that fits one chunk: kernel blocks of
    sparse rows against dense landmarks are about twice as fast as sparse x sparse."""
    if sp.issparse(landmarks) and landmarks.shape[0] * landmarks.shape[1] * 8 <= _options.EMBED_CHUNK_BYTES:
        return landmarks.toarray()
    return landmarks


def nystrom_projection(K_mm, rtol=None):
    """P = U_r diag(s_r)^(-1/2) from K_mm, keeping eigenvalues above ``rtol * max``."""
    rtol = _options.NYSTROM_EIG_RTOL if rtol is None else rtol
    s, U = scipy.linalg.eigh(K_mm, overwrite_a=True, check_finite=False)
    s, U = s[::-1], U[:, ::-1]
    if not s[0] > 0:
        raise ValueError("the kernel matrix of the landmarks has no positive eigenvalue: every "
                         "landmark maps to the zero vector (all-zero rows with a linear or poly "
                         "kernel?)")
    keep = s > rtol * s[0]
    return np.ascontiguousarray(U[:, keep] / np.sqrt(s[keep]))


@dataclass
class NystromMap:
    """The fitted map x -> k_m(x)^T P (see the module docstring).

    Attributes
    ----------
    kernel : Kernel
    landmarks : ndarray, csr_matrix or sequence
        The m landmark rows (what the kernel takes); for 'precomputed' their
        indices, the columns of the kernel values to read.
    projection : ndarray of shape (m, r)
        P = U_r diag(s_r)^(-1/2).
    """

    kernel: Kernel
    landmarks: object
    projection: np.ndarray

    def __post_init__(self):
        self.landmarks = _dense_if_small(self.landmarks)

    @classmethod
    def fit(cls, kernel, landmarks):
        """The map of ``landmarks`` (rows the kernel takes; not for 'precomputed', whose
        K_mm is read from the kernel matrix: use :func:`nystrom_projection`)."""
        landmarks = _dense_if_small(landmarks)
        return cls(kernel, landmarks, nystrom_projection(kernel(landmarks, landmarks)))

    @property
    def n_components(self):
        """r, the dimension of the embedding."""
        return self.projection.shape[1]

    def transform(self, X, dtype=np.float32, progress=None):
        """Embed the rows of X: ndarray of shape (n_samples, r) and type ``dtype``.

        Computed in chunks of rows; ``progress`` (a tqdm-like object) is
        advanced by the rows done.
        """
        out = np.empty((_num_rows(X), self.n_components), dtype=dtype)
        for start, block in self.embed_blocks(X, dtype, progress):
            out[start:start + len(block)] = block
        return out

    def embed_blocks(self, X, dtype=np.float32, progress=None):
        """(first row, embedding of the rows) for chunks of rows of X in order, of type
        ``dtype``; ``progress`` (a tqdm-like object) is advanced by the rows done."""
        # the product in the output's type: float32 is about 1.6x faster, and
        # the kernel block and projection are rounded once either way
        projection = self.projection.astype(dtype, copy=False)
        for rows, block in self._kernel_blocks(X):
            yield rows.start, block.astype(dtype, copy=False) @ projection
            if progress is not None:
                progress.update(block.shape[0])

    def apply(self, X, W):
        """embedding(X) @ W without storing the embedding: ndarray of shape (n_samples, W.shape[1])."""
        PW = self.projection @ W
        out = np.empty((_num_rows(X), W.shape[1]))
        for rows, block in self._kernel_blocks(X):
            out[rows] = block @ PW
        return out

    def _kernel_blocks(self, X):
        """(row slice, K(X[rows], landmarks)) in chunks of ``EMBED_CHUNK_BYTES``."""
        size = _chunk_rows(self.projection.shape[0])
        for start in range(0, _num_rows(X), size):
            rows = slice(start, start + size)
            yield rows, self.kernel.between(_take(X, rows), self.landmarks)


def sample_landmarks(problem, m, method, rng):
    r"""Indices of m distinct training rows of ``problem`` to serve as landmarks, sorted.

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
    n = problem.n_samples
    if method == "uniform":
        return np.sort(rng.choice(n, m, replace=False))
    sketch = rng.choice(n, min(m, _options.LEVERAGE_SKETCH_SIZE, n), replace=False)
    pool = rng.choice(n, min(n, _options.LEVERAGE_POOL_FACTOR * m), replace=False)
    s, U = scipy.linalg.eigh(problem.block(sketch, sketch), check_finite=False)
    s = np.maximum(s, 0.0)
    M = len(sketch)

    # B[i] = U^T k_J(x_i) and k(x_i, x_i) for the pool, chunk by chunk
    B = np.empty((len(pool), M))
    rows = _chunk_rows(M)
    for start in range(0, len(pool), rows):
        B[start:start + rows] = problem.block(pool[start:start + rows], sketch) @ U
    B **= 2
    diag = problem.diagonal(pool)

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
