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

Stable computation, by a pivoted Cholesky factorisation of K_mm (LAPACK's
``?pstrf``): it picks the landmark of largest remaining (Schur complement)
diagonal at each step and stops when that diagonal is at most
``NYSTROM_RTOL * lambda_max(K_mm)``.  The r landmarks it kept, J, give
:math:`K_{JJ} = L L^\top` with L lower triangular and well conditioned
(pivots above the cut-off), and the map

.. math::

    \mathbb{x} = L^{-1} k_J(x) \in \mathbb{R}^r, \qquad
    \langle \mathbb{x}, \mathbb{x}' \rangle = k_J(x)^\top K_{JJ}^{-1} k_J(x'),

the Nystrom approximation on the kept landmarks.  Each dropped landmark has
Schur complement diagonal at most the cut-off: it lies within that squared
kernel distance of the span of the kept ones, so dropping it changes every
approximated kernel value by at most the cut-off (the Schur complement is
positive semi-definite, its entries bounded by its diagonal).  Those are
the landmarks that duplicate others or a kernel too wide to tell them
apart; inverting their tiny pivots would amplify rounding errors instead.
This equals the paper's :math:`(K_{mm}^{1/2})^+ k_m(x)` up to an orthogonal
map (the same inner products, so the same SVM objective) when nothing is
dropped.  Most kernel matrices of random landmarks are far from singular, so
:func:`cholesky_factor` first tries the plain factorisation of all m
(``?potrf``, about twice as fast) and keeps it when every pivot is above the
cut-off: the same guarantee on L, with no landmark dropped.  Compared with
an eigendecomposition of K_mm with the same relative cut-off (the previous
method) it keeps about as many directions and misses as much of the kernel
(ijcnn1, m = 3,000: r = 1,824 against 1,778, 0.16 % against 0.15 % of the
trace on held-out rows), but costs
about m r^2 + r^3 / 3 (the factorisation and the inverse of L) instead of
about 9 m^3 flops: 0.35 s plus 0.3 s against 6.3 s on two cores,
and the embedding needs kernel values against the r kept landmarks only.
:class:`NystromMap` stores the kept landmarks and the r x r map
:math:`P = L^{-\top}` (upper triangular) and embeds x as :math:`k_J(x)^\top P`.

The embedding of n points is computed in row chunks (``EMBED_CHUNK_BYTES``
of float64 kernel block at a time) and written once into the output array.

Any kernel of :mod:`fastsvm.kernels` works: k_m(x) is
``Kernel.between(x, landmarks)``, so for 'precomputed' the landmarks are
column indices of the given kernel values and for a callable the landmark
rows are passed to it.  An indefinite kernel ('sigmoid') gives K_mm negative
eigenvalues; the factorisation stops when no remaining diagonal is above the
cut-off, so the embedding keeps landmarks on which K_mm is positive definite.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.blas
import scipy.sparse as sp
import scipy.sparse.linalg

from .. import _options
from .._blas import gemm_nt, serial_lapack
from ..kernels import Kernel, _num_rows, _take, dense_blocks_pay
from . import _kernels


#: Up to this many landmarks lambda_max(K_mm) comes from a full eigenvalue computation,
#: beyond from Lanczos (``eigsh``).
SMALL_EIG = 64


def _chunk_rows(width):
    """Rows per chunk so that a float64 block of ``width`` columns fills ``EMBED_CHUNK_BYTES``."""
    return max(1, _options.EMBED_CHUNK_BYTES // (8 * width))


def _dense_if_small(landmarks):
    """Sparse landmarks as a dense array when that fits one chunk: kernel blocks of
    sparse rows against dense landmarks are about twice as fast as sparse x sparse."""
    if sp.issparse(landmarks) and landmarks.shape[0] * landmarks.shape[1] * 8 <= _options.EMBED_CHUNK_BYTES:
        return landmarks.toarray()
    return landmarks


def cholesky_factor(K_mm, rtol=None):
    """(kept, L): the indices of the landmarks kept (in pivot order when pivoted), and the
    r x r lower triangular Cholesky factor of K_mm on them, K_JJ = L L^T (Fortran order,
    its strictly upper triangle zero), every pivot L_jj^2 above the cut-off
    ``rtol * lambda_max(K_mm)``.

    First by the plain factorisation of all m landmarks (LAPACK's ``?potrf``, faster than
    the pivoted one: 0.32 s against 0.64 s at m = 4,000 on two threads, 0.53-0.88 against
    0.76-0.82 s on one; up to ``_options.SERIAL_LAPACK_MAX_ORDER`` landmarks it runs on one,
    see :func:`~fastsvm._blas.serial_lapack`): when it
    succeeds with every pivot above the cut-off, L is as well conditioned as the pivoted
    factor's guarantee and keeps every landmark, so the map is exact on all of them.
    Otherwise (a duplicate landmark, a kernel too wide to tell some apart, an indefinite
    kernel) by the pivoted factorisation, which stops at the cut-off (module docstring).

    lambda_max is computed (by ARPACK: 0.19 s at m = 4,000) only where a bound cannot
    decide: once ``?potrf`` succeeds, K_mm is positive definite, so lambda_max is at most
    its trace and at most its largest absolute row sum (Gershgorin's bound), and pivots
    above rtol times either bound are above the cut-off: the same factor, returned without
    it.  At the defaults the trace decided on ``benchmarks/defaults_vs_svc.py``'s generated
    sets (1,000 to 6,000 landmarks, the smallest pivot 4e-4 to 0.33 against 1e-7 m) and
    Gershgorin's bound on usps at 2,000."""
    K_mm = np.asarray(K_mm, dtype=np.float64)
    with serial_lapack(K_mm.shape[0]):
        return _cholesky_factor(K_mm, _options.NYSTROM_RTOL if rtol is None else rtol)


def _cholesky_factor(K_mm, rtol):
    """:func:`cholesky_factor` of a float64 K_mm at a given ``rtol``, with BLAS's threads as
    the caller set them."""
    m = K_mm.shape[0]
    factor, info = scipy.linalg.lapack.dpotrf(K_mm, lower=1, clean=1)
    smallest = np.diagonal(factor).min() ** 2 if info == 0 else -np.inf
    if info == 0 and (smallest > rtol * np.trace(K_mm)
                      or smallest > rtol * np.abs(K_mm).sum(axis=1).max()):
        return np.arange(m), factor
    if m <= SMALL_EIG:
        top = scipy.linalg.eigvalsh(K_mm, check_finite=False)[-1]
    else:
        try:
            top = scipy.sparse.linalg.eigsh(K_mm, k=1, which="LA", return_eigenvectors=False,
                                            v0=np.ones(m))[0]
        except scipy.sparse.linalg.ArpackError:     # Gershgorin's bound, >= lambda_max
            # (no convergence, or K_mm v0 = 0: ARPACK refuses a zero starting residual)
            top = np.abs(K_mm).sum(axis=1).max()
    if not top > 0:
        raise ValueError("the kernel matrix of the landmarks has no positive eigenvalue: every "
                         "landmark maps to the zero vector (all-zero rows with a linear or poly "
                         "kernel, feature values so small that the kernel values underflow to "
                         "0, or a kernel negative on the landmarks, as 'sigmoid' or 'poly' "
                         "with a negative coef0?)")
    cut_off = rtol * top
    if smallest > cut_off:
        return np.arange(m), factor
    factor, pivots, rank, info = scipy.linalg.lapack.dpstrf(K_mm, tol=cut_off, lower=1)
    if info < 0 or rank < 1:
        raise ValueError(f"the landmarks' kernel matrix has no diagonal entry above the cut-off "
                         f"{cut_off:.3g} (largest: {np.diagonal(K_mm).max():.3g}; LAPACK dpstrf "
                         f"info={info}, rank {rank}): the Nystrom embedding needs a kernel with "
                         "a positive semi-definite part on the landmarks ('sigmoid', or 'poly' "
                         "of odd degree, with a negative coef0 can be negative on them)")
    # dpstrf leaves K_mm's entries in the strictly upper triangle: zeroed column by column
    # of the Fortran-ordered factor (np.triu/np.tril would cost as much as the inverse)
    L = np.asfortranarray(factor[:rank, :rank])
    for j in range(1, rank):
        L[:j, j] = 0.0
    return pivots[:rank] - 1, L


def inverse_factor(L):
    """The map P = L^(-T) (C order, upper triangular) of a factor from :func:`cholesky_factor`,
    by LAPACK's triangular inverse: a third of the work of solving L X = I.

    Raises ValueError when P does not fit the embedding's type (``_options.EMBED_DTYPE``):
    L's entries are about the square root of the kernel values, so kernel values below
    about 1e-76 (features of 1e-38 with a linear kernel) make P overflow float32."""
    with serial_lapack(len(L)):
        inverse, info = scipy.linalg.lapack.dtrtri(L, lower=1)
    if info != 0:
        raise ValueError(f"the inverse of the landmarks' Cholesky factor failed (LAPACK dtrtri "
                         f"info={info})")
    largest = np.abs(inverse).max()
    dtype = np.dtype(_options.EMBED_DTYPE)
    if not largest <= np.finfo(dtype).max:
        raise ValueError(f"the landmarks' kernel values are too small to embed in {dtype}: "
                         f"the largest is {np.square(L).sum(axis=1).max():.3g}, and the map "
                         f"L^(-T) reaches {largest:.3g}; scale the features up (StandardScaler), "
                         "or change the kernel's parameters")
    return np.ascontiguousarray(inverse.T)


def nystrom_factors(K_mm, rtol=None):
    """(kept, P): the landmarks :func:`cholesky_factor` keeps and the r x r map P = L^(-T)."""
    kept, L = cholesky_factor(K_mm, rtol)
    return kept, inverse_factor(L)


def times_inverse_factor(block, L):
    """block @ L^(-T) = block @ P (float64) for a factor L from :func:`cholesky_factor`, by a
    triangular solve (trsm): s r^2 flops for s rows, without forming P (r^3 / 3 more)."""
    out = np.array(block, dtype=np.float64, order="C")
    return scipy.linalg.blas.dtrsm(1.0, L, out.T, side=0, lower=1, overwrite_b=1).T


def flushed(a, dtype, out=None):
    """The 2-D array ``a`` in type ``dtype`` (C order), its values below the smallest normal
    number of ``dtype`` set to 0 (:func:`~fastsvm.nystrom._kernels.copy_flushed`: subnormal
    operands slow BLAS's products several times over); into ``out`` when given (a
    C-contiguous array of a's shape and type ``dtype``).  An overflow gives inf, which the
    caller reports."""
    if out is None:
        out = np.empty(a.shape, dtype=dtype)
    _kernels.copy_flushed(a, out, np.finfo(dtype).tiny)
    return out


def times_upper(block, P):
    """block @ P for a square upper-triangular P (the map L^(-T)), in place in ``block`` (a
    C-contiguous array of P's type, which it returns): by BLAS's triangular product
    (trmm), half the flops of a general product and 2-3x faster in float32 on two threads
    (8,000 x 1,000 rows by 1,000: 0.04 s against 0.11 s; 1,600 x 5,000 by 5,000: 0.19 s
    against 0.41 s).  A C-ordered array is its transpose in Fortran order, so it computes
    (P^T block^T)^T with the lower-triangular P^T and block^T in place, without reordering
    either."""
    trmm = scipy.linalg.blas.get_blas_funcs("trmm", dtype=P.dtype)
    trmm(1.0, P.T, block.T, side=0, lower=1, overwrite_b=1)
    return block


@dataclass
class NystromMap:
    """The fitted map x -> k_m(x)^T P (see the module docstring).

    Attributes
    ----------
    kernel : Kernel
    landmarks : ndarray, csr_matrix or sequence
        The landmark rows (what the kernel takes); for 'precomputed' their
        indices, the columns of the kernel values to read.
    projection : ndarray of shape (n_landmarks, r)
        The map P: L^(-T) for the r landmarks kept by :func:`nystrom_factors`
        (a model file written by an earlier version holds U_r diag(s_r)^(-1/2)
        for all m landmarks: any such P embeds x as k(x)^T P).
    """

    kernel: Kernel
    landmarks: object
    projection: np.ndarray

    def __post_init__(self):
        self.landmarks = _dense_if_small(self.landmarks)
        P = self.projection
        # row by row: np.tril(P, -1) would allocate another m x m array
        self._triangular = (P.shape[0] == P.shape[1]
                            and not any(P[i, :i].any() for i in range(1, P.shape[0])))

    @classmethod
    def fit(cls, kernel, landmarks):
        """The map of ``landmarks`` (rows the kernel takes; not for 'precomputed', whose
        K_mm is read from the kernel matrix: use :func:`nystrom_factors`), on the
        landmarks the factorisation keeps."""
        landmarks = _dense_if_small(landmarks)
        kept, projection = nystrom_factors(kernel(landmarks, landmarks))
        return cls(kernel, _take(landmarks, kept), projection)

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

    def embed_blocks(self, X, dtype=np.float32, progress=None, known=None):
        """(first row, embedding of the rows) for chunks of rows of X in order, of type
        ``dtype``; ``progress`` (a tqdm-like object) is advanced by the rows done.

        Each block is computed in buffers reused for the next one (a fresh block of tens of
        megabytes pays its page faults each time): copy what you keep before asking for
        the next.

        ``known``, a pair (positions, embedded), gives rows of X whose embedding is
        already known: they are copied from ``embedded`` and get no kernel values.  The
        kept landmarks' own rows are the rows of L (K_JJ L^(-T) = L), so when all n
        training rows are landmarks (``n_components='auto'`` on at most
        ``AUTO_EXACT_ROWS`` rows) the embedding needs no n x r x r product at all.
        """
        # the product in the output's type: float32 is about 1.6x faster, and the
        # kernel block and projection are rounded once either way; both are flushed of
        # subnormal values (:func:`flushed`).  The product's own subnormal results (1.7 %
        # of skin_nonskin's values at gamma = 2^-7) are kept: flushing them took 6 %
        # more time, and dual coordinate descent's loop was as fast with them
        projection = flushed(self.projection, dtype)
        position = None                   # row of X -> its row in known[1], or -1
        if known is not None:
            position = np.full(_num_rows(X), -1, dtype=np.int64)
            position[known[0]] = np.arange(len(known[0]))
        shape = (min(_num_rows(X), _chunk_rows(projection.shape[0])), projection.shape[1])
        buffer = np.empty(shape, dtype=dtype)
        merged = None                     # the chunk with known rows, when there are some
        for rows, block in self._kernel_blocks(X, position):
            embedded = None
            if block.shape[0]:
                into = buffer[:block.shape[0]]
                embedded = (times_upper(flushed(block, dtype, into), projection)
                            if self._triangular
                            else gemm_nt(flushed(block, dtype), projection.T, into))
            if known is not None and (position[rows] >= 0).any():
                given = position[rows]
                merged = np.empty(shape, dtype=dtype) if merged is None else merged
                out = merged[:len(given)]
                is_known = np.flatnonzero(given >= 0)
                out[is_known] = known[1][given[is_known]]
                if embedded is not None:
                    out[np.flatnonzero(given < 0)] = embedded
                embedded = out
            yield rows.start, embedded
            if progress is not None:
                progress.update(embedded.shape[0])

    def apply(self, X, W):
        """embedding(X) @ W without storing the embedding: ndarray of shape (n_samples, W.shape[1])."""
        PW = self.projection @ W
        out = np.empty((_num_rows(X), W.shape[1]))
        for rows, block in self._kernel_blocks(X):
            out[rows] = gemm_nt(block, PW.T)
        return out

    def _kernel_blocks(self, X, skip=None):
        """(row slice, K(X[rows], landmarks)) in chunks of ``EMBED_CHUNK_BYTES``, without the
        rows where ``skip`` (an int array over the rows of X, if given) is >= 0; CSR rows
        that are not very sparse are made dense first (:func:`~fastsvm.kernels.dense_blocks_pay`:
        on usps, CSR with every pixel stored, 3.5x faster against 2,000 landmarks).  The
        blocks are computed in one buffer where the kernel can (:meth:`Kernel.__call__`),
        each overwritten by the next."""
        size = _chunk_rows(self.projection.shape[0])
        densify = (not self.kernel.on_gram and not sp.issparse(self.landmarks)
                   and dense_blocks_pay(X))
        buffer = np.empty((min(_num_rows(X), size), self.projection.shape[0]))
        for start in range(0, _num_rows(X), size):
            rows = slice(start, min(start + size, _num_rows(X)))
            wanted = rows                  # a slice (a view of dense X) unless rows are skipped
            if skip is not None and (skip[rows] >= 0).any():
                wanted = start + np.flatnonzero(skip[rows] < 0)
                if not len(wanted):
                    yield rows, np.empty((0, self.projection.shape[0]))
                    continue
            block = _take(X, wanted)
            yield rows, self.kernel.between(block.toarray() if densify else block,
                                            self.landmarks, buffer[:_num_rows(block)])


def sample_landmarks(problem, m, method, rng):
    r"""Indices of m distinct training rows of ``problem`` to serve as landmarks, sorted.

    ``method='uniform'``: m rows uniformly without replacement (the paper's
    experiments, :func:`uniform_landmarks`).  ``method='leverage'``:
    approximate ridge leverage-score sampling (:func:`leverage_candidates`
    and :func:`leverage_draw`).
    """
    n = problem.n_samples
    if method == "uniform":
        return uniform_landmarks(n, m, rng)
    sketch, pool = leverage_candidates(n, m, rng)
    return np.sort(pool[leverage_draw(problem, sketch, pool, n, m, rng)])


def uniform_landmarks(n, m, rng):
    """m of the row indices 0..n-1, uniformly without replacement, sorted."""
    return np.sort(rng.choice(n, m, replace=False))


def leverage_candidates(n, m, rng):
    """(sketch, pool): the uniform row indices that approximate leverage-score sampling of
    m landmarks among n rows evaluates (see :func:`leverage_draw`)."""
    sketch = rng.choice(n, min(m, _options.LEVERAGE_SKETCH_SIZE, n), replace=False)
    pool = rng.choice(n, min(n, _options.LEVERAGE_POOL_FACTOR * m), replace=False)
    return sketch, pool


def leverage_draw(problem, sketch, pool, n, m, rng):
    r"""Positions in ``pool`` of m rows drawn by approximate ridge leverage scores.

    ``sketch`` and ``pool`` are indices of rows of ``problem`` (which need
    hold only those rows), drawn uniformly from n training rows by
    :func:`leverage_candidates`.  The method is approximate ridge
    leverage-score sampling (the paper's ref. [33], Rudi, Calandriello,
    Carratino & Rosasco, "On fast leverage score sampling and optimal
    learning", NeurIPS 2018).  The ridge leverage score of x_i at ridge
    lambda is l_i = (K (K + lambda n I)^{-1})_{ii}; their sum is the
    effective dimension d(lambda).  With the uniform sketch J of M rows,
    Woodbury gives the estimator of [33] (eq. (4), weights A = (M/n) I for
    uniform J):

    .. math::

        \tilde l(x) = \frac{1}{\lambda n}\left(k(x, x) - k_{xJ}
        (K_{JJ} + \lambda M I)^{-1} k_{Jx}\right),

    evaluated through the eigendecomposition of K_JJ.  lambda is chosen by
    bisection so that the estimated effective dimension n * mean(l~) equals
    m (the number of landmarks one can afford sets the scale that is
    resolved), then m rows of the uniform pool of ``LEVERAGE_POOL_FACTOR * m``
    rows are drawn without replacement with probability proportional to l~.
    This is one level of [33]'s BLESS ladder, with a fixed sketch of at most
    ``LEVERAGE_SKETCH_SIZE`` rows; its cost is pool x sketch^2, independent
    of n.
    """
    with serial_lapack(len(sketch)):
        s, U = scipy.linalg.eigh(problem.block(sketch, sketch), check_finite=False)
    s = np.maximum(s, 0.0)
    M = len(sketch)

    # B[i] = U^T k_J(x_i) and k(x_i, x_i) for the pool, chunk by chunk
    B = np.empty((len(pool), M))
    rows = _chunk_rows(M)
    for start in range(0, len(pool), rows):
        B[start:start + rows] = gemm_nt(problem.block(pool[start:start + rows], sketch), U.T)
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
    return rng.choice(len(pool), m, replace=False, p=p / p.sum())
