"""NystromSVC (Snacks): the embedding, the compiled solver steps against NumPy
oracles, the optimum against LIBLINEAR, accuracy floors, determinism and bad input."""


import time
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification, make_gaussian_quantiles, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import LinearSVC

from fastsvm import NystromSVC, _options, multiclass
from fastsvm.base import TrainingProblem
from fastsvm.datasets import DATASETS, load_dataset
from fastsvm.kernels import Kernel
from fastsvm.nystrom import _kernels, embedding, solver
from fastsvm.nystrom.embedding import (NystromMap, cholesky_factor, inverse_factor,
                                       leverage_draw, nystrom_factors, sample_landmarks,
                                       times_inverse_factor)
from fastsvm.nystrom.solver import (_assg_stage, dcd_check_interval, embedded_sq_norms,
                                    primal_objective, solve_assg, solve_dcd, solve_pegasos)
from fastsvm.nystrom.store import EmbeddingStore

from . import naive


def _moons(n=300, seed=0):
    X, y = make_moons(n, noise=0.15, random_state=seed)
    return X, y


def _map(landmarks, kernel="rbf", **params):
    return NystromMap.fit(Kernel(kernel, **params), landmarks)


def _problem(X, kernel):
    """A training problem of rows X (labels and weights unused)."""
    n = len(X)
    return TrainingProblem(X, np.zeros(n, dtype=np.intp), np.array([0, 1]), np.ones(n),
                           np.arange(n), kernel)


# ------------------------------------------------------------- embedding
@pytest.mark.parametrize("kernel, params", [
    ("rbf", dict(gamma=0.7)),
    ("laplacian", dict(gamma=0.3)),
    ("poly", dict(gamma=0.5, degree=2, coef0=1.0)),
    ("linear", dict()),
])
def test_embedding_with_all_points_reproduces_kernel_matrix(kernel, params):
    X, _ = make_classification(120, 6, random_state=0)
    nmap = _map(X, kernel, **params)
    Phi = nmap.transform(X, dtype=np.float64)
    K = pairwise_kernels(X, metric=kernel, **params)
    assert_allclose(Phi @ Phi.T, K, atol=1e-6 * np.abs(K).max())
    if kernel == "linear":
        assert nmap.n_components == np.linalg.matrix_rank(X) == 4   # rank cut-off: rank of K



def test_embedding_of_csr_rows():
    """CSR rows that are not very sparse are embedded as dense blocks (BLAS): exactly the
    dense input's embedding; sparse rows stay CSR and agree to rounding."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 40)) * (rng.random((300, 40)) < 0.5)
    nmap = _map(X[:50], gamma=0.05)
    assert_array_equal(nmap.transform(sp.csr_matrix(X), dtype=np.float64),
                       nmap.transform(X, dtype=np.float64))
    X[rng.random(X.shape) < 0.97] = 0.0                   # about 1.5 % non-zeros
    nmap = _map(X[:50], gamma=0.05)
    assert_allclose(nmap.transform(sp.csr_matrix(X), dtype=np.float64),
                    nmap.transform(X, dtype=np.float64), rtol=1e-10, atol=1e-12)

def test_embedding_matches_the_papers_formula():
    X, _ = _moons(80)
    L = X[::4]
    ours = _map(L, gamma=1.5).transform(X, dtype=np.float64)
    paper = naive.nystrom_embedding(X, L, 1.5)
    # the same map up to an orthogonal rotation: equal inner products
    assert_allclose(ours @ ours.T, paper @ paper.T, atol=1e-9)


def test_embedding_is_stable_with_duplicate_landmarks():
    X, _ = _moons(100)
    L = np.vstack([X[:20], X[:20]])          # K_mm singular
    nmap = _map(L, gamma=1.0)
    assert nmap.n_components <= 20
    Phi = nmap.transform(X, dtype=np.float64)
    assert np.isfinite(Phi).all()
    K_nm = pairwise_kernels(X, X[:20], metric="rbf", gamma=1.0)
    K_mm = pairwise_kernels(X[:20], metric="rbf", gamma=1.0)
    assert_allclose(Phi @ Phi.T, K_nm @ np.linalg.pinv(K_mm, rcond=1e-7, hermitian=True) @ K_nm.T,
                    atol=1e-6)


@pytest.mark.parametrize("rtol", [1e-7, 1e-3])
def test_pivoted_cholesky_map_drops_only_landmarks_within_the_cut_off(rtol):
    """nystrom_factors keeps landmarks J with P = L^(-T), K_JJ = L L^T: the embedding's inner
    products are K_nJ K_JJ^(-1) K_Jn, and on all m landmarks they miss K_mm by at most the
    cut-off rtol * lambda_max(K_mm) (the Schur complement's diagonal bounds its entries)."""
    X, _ = make_classification(200, 5, random_state=3)
    L = X[:120]
    K_mm = pairwise_kernels(L, metric="rbf", gamma=0.05)      # wide: numerically low rank
    kept, P = nystrom_factors(K_mm, rtol=rtol)
    assert len(set(kept)) == len(kept) == P.shape[0] == P.shape[1] < 120
    assert_allclose(np.tril(P, -1), 0.0)                         # L^(-T) is upper triangular
    K_nJ = pairwise_kernels(X, L[kept], metric="rbf", gamma=0.05)
    Phi = K_nJ @ P
    assert_allclose(Phi @ Phi.T, K_nJ @ np.linalg.solve(K_mm[np.ix_(kept, kept)], K_nJ.T),
                    atol=1e-8)
    cut_off = rtol * np.linalg.eigvalsh(K_mm)[-1]
    Phi_m = K_mm[:, kept] @ P
    assert np.abs(Phi_m @ Phi_m.T - K_mm).max() <= cut_off * (1 + 1e-6) + 1e-12


def test_cholesky_factor_inverse_and_triangular_solve_agree():
    """cholesky_factor gives L (zero above the diagonal) with K_JJ = L L^T;
    inverse_factor(L) is L^(-T), and times_inverse_factor(B, L) is B @ L^(-T) without it
    (the residual of n_components='auto' while it grows)."""
    X, _ = make_classification(150, 6, random_state=5)
    K_mm = pairwise_kernels(X[:90], metric="rbf", gamma=0.2)
    kept, L = cholesky_factor(K_mm)
    assert_array_equal(np.triu(L, 1), 0.0)
    assert_allclose(L @ L.T, K_mm[np.ix_(kept, kept)], atol=1e-10)
    P = inverse_factor(L)
    assert_allclose(P, np.linalg.inv(L).T, rtol=1e-8, atol=1e-8 * np.abs(P).max())
    block = pairwise_kernels(X[90:], X[:90][kept], metric="rbf", gamma=0.2)
    assert_allclose(times_inverse_factor(block, L), block @ P, atol=1e-9 * np.abs(P).max())


def test_kernel_negative_on_every_landmark_is_a_clear_error():
    X, y = make_classification(200, 4, random_state=0)
    with pytest.raises(ValueError, match="no diagonal entry above the cut-off.*sigmoid"):
        NystromSVC(kernel="sigmoid", coef0=-5.0, random_state=0).fit(X, y)


def test_cholesky_factor_keeps_every_landmark_when_the_plain_factor_is_well_conditioned():
    """A well-conditioned K_mm is factored without pivoting: every landmark kept, in order,
    every pivot above the cut-off; a duplicate landmark (a zero pivot) falls back to the
    pivoted factorisation, which drops one of the pair and nothing else."""
    X, _ = make_classification(120, 6, random_state=7)
    K_mm = pairwise_kernels(X, metric="rbf", gamma=0.2)
    kept, L = cholesky_factor(K_mm)
    assert_array_equal(kept, np.arange(120))
    assert L.flags.f_contiguous
    assert_array_equal(np.triu(L, 1), 0.0)
    assert_allclose(L @ L.T, K_mm, atol=1e-12)
    cut_off = _options.NYSTROM_RTOL * np.linalg.eigvalsh(K_mm)[-1]
    assert np.diagonal(L).min() ** 2 > cut_off
    doubled = pairwise_kernels(np.vstack([X, X[5:6]]), metric="rbf", gamma=0.2)
    kept, L = cholesky_factor(doubled)
    assert len(kept) == 120 and len({5, 120} & set(kept)) == 1
    assert_allclose(L @ L.T, doubled[np.ix_(kept, kept)], atol=1e-12)


def test_cholesky_factor_computes_the_largest_eigenvalue_only_where_its_bounds_cannot_decide(
        monkeypatch):
    """Once the plain factorisation succeeds, a smallest pivot above rtol times the trace or
    Gershgorin's bound (both >= lambda_max) keeps every landmark without ARPACK; between
    the cut-off and the bounds ARPACK's lambda_max decides, and keeps them too."""
    X, _ = make_classification(200, 6, random_state=7)
    K_mm = pairwise_kernels(X, metric="rbf", gamma=0.2)
    calls = []
    eigsh = scipy.sparse.linalg.eigsh
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh",
                        lambda *a, **k: calls.append(1) or eigsh(*a, **k))
    smallest = np.diagonal(np.linalg.cholesky(K_mm)).min() ** 2
    top = np.linalg.eigvalsh(K_mm)[-1]
    bound = min(np.trace(K_mm), np.abs(K_mm).sum(axis=1).max())
    assert top < bound / 1.2
    for rtol, arpack in [(smallest / bound / 2, 0), (smallest / np.sqrt(top * bound), 1)]:
        kept, L = cholesky_factor(K_mm, rtol=rtol)
        assert len(calls) == arpack
        assert_array_equal(kept, np.arange(200))
        assert_allclose(L, np.linalg.cholesky(K_mm), atol=1e-12)
    kept, _ = cholesky_factor(K_mm, rtol=2 * smallest / top)        # above the cut-off
    assert len(calls) == 2 and len(kept) < 200


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_by_triangular_product_equals_the_general_product(dtype):
    """The map P = L^(-T) is upper triangular and applied in place by BLAS's trmm; a
    projection that is not (an older model file's U_r diag(s_r)^(-1/2), m x r) by a
    general product.  Both give K(X, landmarks) @ P, and a precomputed kernel matrix the
    caller passes is left untouched."""
    X, _ = make_classification(150, 6, random_state=2)
    nmap = _map(X[:30], gamma=0.3)
    assert nmap._triangular
    reference = pairwise_kernels(X, nmap.landmarks, metric="rbf", gamma=0.3) @ nmap.projection
    atol = (1e-5 if dtype == np.float32 else 1e-12) * np.abs(reference).max()
    assert_allclose(nmap.transform(X, dtype=dtype), reference, atol=atol)
    general = NystromMap(nmap.kernel, np.vstack([nmap.landmarks, X[:1]]),
                         np.vstack([nmap.projection, np.ones(nmap.n_components)]))
    assert not general._triangular
    extra = pairwise_kernels(X, X[:1], metric="rbf", gamma=0.3)
    assert_allclose(general.transform(X, dtype=dtype), reference + extra, atol=atol)
    K = pairwise_kernels(X, metric="rbf", gamma=0.3)
    order = [int(np.flatnonzero((X == row).all(axis=1))[0]) for row in nmap.landmarks]
    precomputed = NystromMap(Kernel("precomputed"), np.array(order), nmap.projection)
    before = K.copy()
    assert_allclose(precomputed.transform(K, dtype=dtype), reference, atol=atol)
    assert_array_equal(K, before)


def test_copy_flushed_zeroes_only_subnormal_values():
    """The embedding's float32 copy of a kernel block: values below float32's smallest
    normal number (2^-126) become 0, all others are cast as NumPy casts them, NaN and
    inf (reported by the caller) included."""
    tiny32 = float(np.finfo(np.float32).tiny)
    values = np.array([0.0, tiny32, -tiny32, np.nextafter(tiny32, 0), -1e-40, 1e-45, 1e-300,
                       1e-30, -0.5, 3.0, 1e300, -np.inf, np.nan, 5e-324])
    block = np.random.default_rng(0).permutation(np.tile(values, 3)).reshape(6, 7)
    out = np.empty(block.shape, dtype=np.float32)
    _kernels.copy_flushed(block, out, np.finfo(np.float32).tiny)
    with np.errstate(over="ignore"):
        expected = np.where(np.abs(block) < tiny32, 0.0, block).astype(np.float32)
    assert_array_equal(out, expected)
    assert not np.any((out != 0) & (np.abs(out) < tiny32))
    out64 = np.empty(block.shape)
    _kernels.copy_flushed(block, out64, np.finfo(np.float64).tiny)
    assert_array_equal(out64, np.where(np.abs(block) < np.finfo(np.float64).tiny, 0.0, block))


def test_float32_embedding_multiplies_no_subnormal_values(monkeypatch):
    """Rows far from every landmark have Gaussian kernel values below 2^-126 (down to
    exp(-400) here), subnormal in float32, which BLAS multiplies several times slower:
    the kernel block and the map reach the product flushed of them, and the float32
    embedding stays within float32's rounding of the float64 one."""
    rng = np.random.default_rng(0)
    near = rng.normal(size=(40, 3))
    X = np.vstack([near, near[:10] + [10.0, 0, 0], near[:10] + [20.0, 0, 0]])
    nmap = _map(near[:25], gamma=1.0)
    full = nmap.transform(X, dtype=np.float64)
    tiny32 = np.finfo(np.float32).tiny
    assert np.any((full != 0) & (np.abs(full) < tiny32))
    operands = []
    product = embedding.times_upper

    def spy(block, P, *args):
        operands.extend([block.copy(), P])
        return product(block, P, *args)

    monkeypatch.setattr(embedding, "times_upper", spy)
    f32 = nmap.transform(X, dtype=np.float32)
    assert len(operands) == 2 and all(a.dtype == np.float32 for a in operands)
    assert not any(np.any((a != 0) & (np.abs(a) < tiny32)) for a in operands)
    assert_allclose(f32, full, atol=1e-5 * np.abs(full).max())


def test_embedding_chunks_dense_sparse_and_float32(monkeypatch):
    X, _ = make_classification(300, 8, random_state=1)
    X[X < 0.3] = 0
    nmap = _map(X[:40], gamma=0.2)
    full = nmap.transform(X, dtype=np.float64)
    monkeypatch.setattr("fastsvm._options.EMBED_CHUNK_BYTES", 8 * 40 * 7)   # 7-row chunks
    assert_allclose(nmap.transform(sp.csr_matrix(X), dtype=np.float64), full, atol=1e-10)
    f32 = nmap.transform(X.astype(np.float32), dtype=np.float32)
    assert f32.dtype == np.float32
    assert_allclose(f32, full, atol=1e-4 * np.abs(full).max())
    W = np.arange(2 * nmap.n_components, dtype=float).reshape(-1, 2)
    assert_allclose(nmap.apply(X, W), full @ W, rtol=1e-9, atol=1e-9)


def test_leverage_sampling_prefers_rare_regions():
    # 1,900 points in one tight cluster, 100 spread far out: uniform sampling
    # gives the spread points 5 % of the landmarks, leverage scores much more
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.05, (1900, 2)), rng.uniform(-5, 5, (100, 2))])
    rare = lambda idx: np.mean(idx >= 1900)  # noqa: E731
    lev = sample_landmarks(_problem(X, Kernel("rbf", 1.0)), 60, "leverage",
                           np.random.default_rng(1))
    uni = sample_landmarks(_problem(X, Kernel("rbf", 1.0)), 60, "uniform",
                           np.random.default_rng(1))
    assert len(np.unique(lev)) == 60 and np.all(np.diff(lev) > 0)
    assert rare(lev) > 0.4 > 0.15 > rare(uni)


def test_leverage_sampling_can_take_every_row():
    X, y = _moons(50)
    assert_array_equal(sample_landmarks(_problem(X, Kernel("rbf", 1.0)), 50, "leverage",
                                        np.random.default_rng(0)),
                       np.arange(50))
    clf = NystromSVC(C=10, gamma=2.0, n_components=50, landmarks="leverage", random_state=0)
    assert clf.fit(X, y).score(X, y) > 0.9


def test_leverage_draw_with_every_row_as_sketch_uses_the_exact_ridge_leverage_scores():
    """With the sketch and the pool all n rows, the estimator of [33] is exact: (k(x, x) -
    k_xJ (K + lambda n I)^{-1} k_Jx) / (lambda n) = (K (K + lambda n I)^{-1})_ii, the ridge
    leverage score, at the lambda whose scores sum to m.  The draw's probabilities are
    those scores, normalised (the mutation lambda M -> lambda in the ridge had moved them
    by up to 31 %)."""
    class Recorder:
        def choice(self, a, size, replace, p):
            self.p = p
            return np.arange(size)

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.1, (150, 2)), rng.uniform(-4, 4, (50, 2))])
    n, m = len(X), 20
    K = pairwise_kernels(X, metric="rbf", gamma=1.0)
    recorder = Recorder()
    leverage_draw(_problem(X, Kernel("rbf", 1.0)), np.arange(n), np.arange(n), n, m, recorder)
    eigenvalues = np.linalg.eigvalsh(K)

    def exact(lam):
        return np.diag(K @ np.linalg.solve(K + lam * n * np.eye(n), np.eye(n)))

    lo, hi = -30.0, 10.0                      # log lambda with sum of the scores = m
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.sum(eigenvalues / (eigenvalues + np.exp(mid) * n)) > m:
            lo = mid
        else:
            hi = mid
    scores = exact(np.exp(hi))
    assert abs(scores.sum() - m) < 1e-6
    assert_allclose(recorder.p, scores / scores.sum(), rtol=1e-6)


# ------------------------------------------------- compiled steps vs oracles
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("radius", [0.3, 100.0])   # projection active / inactive
def test_assg_stage_matches_oracle(dtype, radius):
    X, y01 = _moons(60)
    y = np.where(y01 == 1, 1.0, -1.0)
    Phi = _map(X[:15], gamma=2.0).transform(X, dtype=dtype)
    lam, eta = 0.01, 0.4
    order = np.random.default_rng(3).integers(0, 60, 200)
    start = np.random.default_rng(4).normal(0, 0.1, Phi.shape[1] + 1)
    w, w_avg = start.copy(), np.zeros_like(start)
    weight = np.random.default_rng(5).choice([0.5, 1.0, 3.0, 30.0], size=len(y))
    _kernels.assg_steps(Phi, y, weight, np.median(weight), 1.0, order, lam, eta, start.copy(),
                        radius, w, w_avg, 1 / 200)
    expected = naive.assg_stage(Phi.astype(float), y, lam, start, eta, radius, order, weight,
                                heavy_from=np.median(weight))
    assert_allclose(w_avg, expected, rtol=1e-9, atol=1e-12)


def test_pegasos_steps_match_oracle():
    X, y01 = _moons(60)
    y = np.where(y01 == 1, 1.0, -1.0)
    Phi = _map(X[:15], gamma=2.0).transform(X, dtype=np.float64)
    order = np.random.default_rng(5).integers(0, 60, 300)
    w = np.zeros(Phi.shape[1] + 1)
    lam = 0.05
    # in two calls: the step counter carries over
    weight = np.random.default_rng(6).choice([0.5, 1.0, 3.0, 30.0], size=len(y))
    _kernels.pegasos_steps(Phi, y, weight, np.median(weight), 1.0, order[:120], lam, 0, True, w)
    _kernels.pegasos_steps(Phi, y, weight, np.median(weight), 1.0, order[120:], lam, 120, True,
                           w)
    assert_allclose(w, naive.pegasos(Phi, y, lam, order, weight, heavy_from=np.median(weight)),
                    rtol=1e-9, atol=1e-12)


def test_assg_stage_in_chunks_averages_its_iterates(monkeypatch):
    """A stage of T steps drawn in chunks of CHUNK_STEPS (here 7) is the one stage of
    the oracle over the same T draws: each chunk continues the iterate and adds its
    iterates to the average with weight 1/T."""
    monkeypatch.setattr(_options, "CHUNK_STEPS", 7)
    X, y01 = _moons(60)
    y = np.where(y01 == 1, 1.0, -1.0)
    Phi = _map(X[:15], gamma=2.0).transform(X, dtype=np.float64)
    weight = np.random.default_rng(5).choice([0.5, 1.0, 3.0], size=len(y))
    start = np.random.default_rng(4).normal(0, 0.1, Phi.shape[1] + 1)
    T = 50
    average, _ = _assg_stage(Phi, None, y, weight, 1.0, 0.01, start, 0.4, 0.5, T,
                             np.random.default_rng(3), None)
    draws = np.random.default_rng(3)
    order = np.concatenate([draws.integers(0, 60, size=min(7, T - k), dtype=np.int64)
                            for k in range(0, T, 7)])
    assert_allclose(average, naive.assg_stage(Phi, y, 0.01, start, 0.4, 0.5, order, weight),
                    rtol=1e-9, atol=1e-12)


def test_pegasos_stages_in_chunks_are_one_run_of_steps(monkeypatch):
    """solve_pegasos over K stages of T steps, drawn in chunks of CHUNK_STEPS (here 7), is
    one Pegasos run over all K T draws: the step counter t carries over chunks and
    stages (restarting it at each chunk had reset w: objective 1.4 against 0.19)."""
    monkeypatch.setattr(_options, "CHUNK_STEPS", 7)
    X, y01 = _moons(60)
    y = np.where(y01 == 1, 1.0, -1.0)
    Phi = _map(X[:15], gamma=2.0).transform(X, dtype=np.float64)
    weight = np.random.default_rng(6).choice([0.5, 1.0, 3.0], size=len(y))
    T, stages, lam = 20, 3, 0.05
    result = solve_pegasos(Phi, y, weight, 1.0, lam, T, stages, None,
                           np.random.default_rng(2))
    draws = np.random.default_rng(2)
    order = np.concatenate([draws.integers(0, 60, size=min(7, T - k), dtype=np.int64)
                            for _ in range(stages) for k in range(0, T, 7)])
    assert result.n_stages == stages
    assert_allclose(result.w, naive.pegasos(Phi, y, lam, order, weight), rtol=1e-9, atol=1e-12)


def test_primal_objective_matches_oracle():
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(50, 7))
    y = np.where(rng.random(50) > 0.5, 1.0, -1.0)
    w = rng.normal(size=8)
    weight = rng.uniform(0.1, 3.0, size=50)
    assert_allclose(primal_objective(Phi, y, weight, w, 1.0, 0.3),
                    naive.hinge_objective(Phi, y, w[:-1], w[-1], 0.3, weight), rtol=1e-12)
    zero, rows = np.zeros(8), np.array([3, 7, 8, 40])     # w = 0: no pass over the rows
    assert_allclose(primal_objective(Phi, y, weight, zero, 1.0, 0.3),
                    naive.hinge_objective(Phi, y, zero[:-1], 0.0, 0.3, weight), rtol=1e-12)
    assert_allclose(primal_objective(Phi, y, weight, zero, 1.0, 0.3, rows),
                    naive.hinge_objective(Phi[rows], y[rows], zero[:-1], 0.0, 0.3, weight[rows]),
                    rtol=1e-12)


def test_assg_approaches_the_liblinear_optimum():
    X, y = make_classification(400, 5, n_informative=4, n_redundant=0, random_state=2)
    C = 1.0
    clf = NystromSVC(C=C, gamma=0.3, n_components=40, solver="assg", random_state=0, tol=None, max_stages=14,
                     stage_steps=20 * 400).fit(X, y)
    Phi = clf.transform(X)
    lin = LinearSVC(C=C, loss="hinge", tol=1e-10, max_iter=200_000).fit(Phi, y)
    yb = np.where(y == clf.classes_[1], 1.0, -1.0)
    lam = 1 / (400 * C)
    ones = np.ones(len(yb))
    optimum = primal_objective(Phi, yb, ones, np.r_[lin.coef_[0], lin.intercept_[0]], 1.0, lam)
    ours = primal_objective(Phi, yb, ones, np.r_[clf.coef_[0], clf.intercept_[0]], 1.0, lam)
    assert clf.training_info_["objective"][0][-1] == pytest.approx(ours)
    assert optimum <= ours <= optimum * 1.005
    # the stage objectives decrease towards it
    history = clf.training_info_["objective"][0]
    assert history[-1] < history[2] < history[0] == 1.0


def test_dcd_epoch_matches_oracle():
    """Without shrinking (infinite bounds) a pass is plain coordinate descent in the given order."""
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(60, 5))
    y = np.where(rng.random(60) > 0.5, 1.0, -1.0)
    upper = rng.uniform(0.1, 2.0, size=60)
    order = rng.permutation(60).astype(np.int64)
    alpha, w = np.zeros(60), np.zeros(6)
    expected_alpha, expected_w = np.zeros(60), np.zeros(6)
    q_diag = (Phi ** 2).sum(axis=1) + 1.0
    for _ in range(3):
        active = order.copy()
        n_active, _, _ = _kernels.dcd_epoch(Phi, y, 1.0, upper, q_diag, active, 60, np.inf,
                                            -np.inf, alpha, w)
        naive.dcd_epoch(Phi, y, 1.0, upper, order, expected_alpha, expected_w)
        assert n_active == 60
    assert_allclose(alpha, expected_alpha, rtol=1e-10, atol=1e-12)
    assert_allclose(w, expected_w, rtol=1e-10, atol=1e-12)
    assert np.all((alpha >= 0) & (alpha <= upper))
    assert_allclose(w[:-1], Phi.T @ (alpha * y), atol=1e-10)


def test_dcd_shrinking_sets_aside_only_variables_at_a_bound():
    """A shrunk variable sits at 0 with gradient above the bound, or at U_i with gradient
    below; the kept ones are visited and the maximum and minimum projected gradients
    are theirs."""
    rng = np.random.default_rng(1)
    Phi = rng.normal(size=(200, 4))
    y = np.where(Phi[:, 0] + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    upper = np.full(200, 0.05)
    q_diag = (Phi ** 2).sum(axis=1) + 1.0
    alpha, w = np.zeros(200), np.zeros(5)
    active = np.arange(200, dtype=np.int64)
    _kernels.dcd_epoch(Phi, y, 1.0, upper, q_diag, active, 200, np.inf, -np.inf, alpha, w)
    before_alpha, before_w = alpha.copy(), w.copy()
    n_active, pg_max, pg_min = _kernels.dcd_epoch(Phi, y, 1.0, upper, q_diag, active, 200, 0.5,
                                                  -0.5, alpha, w)
    assert 0 < n_active < 200
    assert_array_equal(np.sort(active), np.arange(200))
    shrunk = active[n_active:]
    assert_array_equal(alpha[shrunk], before_alpha[shrunk])
    at_zero, at_upper = alpha[shrunk] == 0, alpha[shrunk] == upper[shrunk]
    assert np.all(at_zero | at_upper)
    assert not np.array_equal(w, before_w)
    assert pg_min <= pg_max


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("threaded", [False, True])
def test_dcd_reaches_the_liblinear_optimum_with_a_certificate(weighted, fit_intercept, threaded,
                                                             monkeypatch):
    """solver='dcd' stops within tol of LIBLINEAR's optimum of the same embedded problem,
    and its duality gap bounds the distance to it; with the checks in a second thread (a
    large problem's) too."""
    if threaded:
        monkeypatch.setattr(solver, "DCD_THREAD_CHECK_VALUES", 0)
    X, y = make_classification(400, 5, n_informative=4, n_redundant=0, random_state=2)
    X = X.astype(np.float32)                 # fit_transform then returns the training embedding
    weight = np.random.default_rng(0).uniform(0.2, 3.0, size=400) if weighted else None
    C, tol = 2.0, 1e-4
    clf = NystromSVC(C=C, gamma=0.3, n_components=40, solver="dcd", tol=tol, max_stages=10_000,
                     fit_intercept=fit_intercept, random_state=0)
    Phi = clf.fit_transform(X, y, sample_weight=weight)
    with warnings.catch_warnings():         # LIBLINEAR stops at max_iter short of 1e-12
        warnings.simplefilter("ignore", ConvergenceWarning)
        lin = LinearSVC(C=C, loss="hinge", tol=1e-12, max_iter=1_000_000,
                        fit_intercept=fit_intercept).fit(Phi, y, sample_weight=weight)
    yb = np.where(y == clf.classes_[1], 1.0, -1.0)
    s = np.ones(400) if weight is None else weight
    lam, step_weight = 1 / (C * s.sum()), s * 400 / s.sum()
    bias = 1.0 if fit_intercept else 0.0
    liblinear = primal_objective(Phi, yb, step_weight,
                                 np.r_[lin.coef_[0], np.ravel(lin.intercept_)[0]], bias, lam)
    ours = primal_objective(Phi, yb, step_weight, np.r_[clf.coef_[0], clf.intercept_[0]], bias,
                            lam)
    info = clf.training_info_
    gap = info["duality_gap"][0][-1]
    assert info["converged"] == [True] and gap <= tol
    assert info["objective"][0][-1] == pytest.approx(ours, rel=1e-6)
    # LIBLINEAR's objective, like every primal value, lies above the dual bound ours (1 - gap)
    assert ours * (1 - gap) <= liblinear * (1 + 1e-9)
    assert ours <= liblinear * (1 + tol)


def test_dcd_checks_in_a_thread_give_a_run_that_does_not_depend_on_their_timing(monkeypatch):
    """A check in a second thread is taken after n more row visits or when the next one is
    due, never when the thread happens to finish: checks slowed down give the same run,
    to the bit, and it ends certified as the checks in line do."""
    X, y = _moons(400)

    def fit():
        return NystromSVC(C=10, gamma=2.0, n_components=30, tol=1e-3, max_stages=500,
                          random_state=0).fit(X, y)

    in_line = fit()
    monkeypatch.setattr(solver, "DCD_THREAD_CHECK_VALUES", 0)
    threaded = fit()
    objective = solver.primal_objective

    def slow(*args):
        time.sleep(0.005)
        return objective(*args)

    monkeypatch.setattr(solver, "primal_objective", slow)
    slowed = fit()
    assert_array_equal(slowed.coef_, threaded.coef_)
    assert_array_equal(slowed.intercept_, threaded.intercept_)
    assert slowed.training_info_["duality_gap"] == threaded.training_info_["duality_gap"]
    assert slowed.n_iter_ == threaded.n_iter_
    for clf in (in_line, threaded):
        assert clf.training_info_["converged"] == [True]
        assert clf.training_info_["duality_gap"][0][-1] <= 1e-3
    # both within tol of the optimum, so of each other
    assert threaded.training_info_["objective"][0][-1] == pytest.approx(
        in_line.training_info_["objective"][0][-1], rel=2e-3)


def test_dcd_stops_on_the_duality_gap():
    X, y = _moons(400)
    clf = NystromSVC(C=10, gamma=2.0, n_components=30, solver="dcd", tol=1e-3, max_stages=500,
                     random_state=0).fit(X, y)
    gaps = clf.training_info_["duality_gap"][0]
    objective = clf.training_info_["objective"][0]
    assert gaps[-1] <= 1e-3 < min(gaps[:-1])
    assert clf.n_iter_[0] < 500 and len(objective) == len(gaps) + 1
    assert all(a >= b for a, b in zip(objective, objective[1:]))   # the best primal so far
    with pytest.warns(ConvergenceWarning):
        NystromSVC(C=10, gamma=2.0, n_components=30, solver="dcd", tol=1e-9, max_stages=2,
                   random_state=0).fit(X, y)


def test_dcd_objective_sums_the_margins_in_float64():
    """The certificate's P(w) on the stored float32 embedding, every margin summed in
    float64: where P is small (a large C on separable rows) float32 margins, each off by
    about 1e-7 ||w|| ||phi||, were a sizeable part of it."""
    X, y = make_blobs(300, centers=2, cluster_std=1.5, random_state=3)
    clf = NystromSVC(C=1000.0, n_components=60, random_state=0)
    Phi = clf.fit_transform(X.astype(np.float32), y)          # the embedding the solver used
    assert Phi.dtype == np.float32
    yb = np.where(y == clf.classes_[1], 1.0, -1.0)
    lam = 1.0 / (1000.0 * len(y))
    exact = naive.hinge_objective(Phi.astype(np.float64), yb, clf.coef_[0].astype(np.float64),
                                  clf.intercept_[0], lam)
    reported = clf.training_info_["objective"][0][-1]
    assert reported < 0.05 and reported == pytest.approx(exact, rel=1e-10)


def test_dcd_converged_when_the_final_check_meets_tol():
    """When the work runs out, the final check's gap decides ``converged``."""
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(400, 8))
    y = np.where(Phi[:, 0] + 0.2 * rng.normal(size=400) > 0, 1.0, -1.0)
    result = solve_dcd(Phi, y, np.ones(400), 1.0, 1.0 / 400, 1, 0.95, np.random.default_rng(0))
    assert len(result.gap) == 1 and result.gap[-1] <= 0.95    # one pass, then the one check
    assert result.converged


class _Visits:
    """A progress object that adds up what the solver reports: its row visits."""

    def __init__(self):
        self.total = 0

    def update(self, k):
        self.total += k


def test_dcd_budget_counts_a_shrunk_pass_as_its_share():
    """max_passes bounds the row visits (max_passes * n), not the passes: once shrinking
    leaves few variables active, many more passes than max_passes fit in the budget."""
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(400, 8))
    y = np.where(Phi[:, 0] + 0.2 * rng.normal(size=400) > 0, 1.0, -1.0)
    lam = 1.0 / 400                                  # C = 1: most alpha end at 0, shrunk
    visits = _Visits()
    result = solve_dcd(Phi, y, np.ones(400), 1.0, lam, 20, None, np.random.default_rng(0),
                       visits)
    assert 20 * 400 <= visits.total < 21 * 400       # the budget, overshot by under a pass
    assert result.epochs > 100 and not result.converged
    assert len(result.gap) == 1                      # tol=None: the final gap only


def test_dcd_check_interval_closes_in_on_the_predicted_end():
    n, tol = 100, 1e-3
    # 1 -> 0.1 in 400 updates: 0.1 -> tol takes 800 more at that rate; half of them
    assert dcd_check_interval(n, [1.0, 0.1], 400, 10_000, tol) == pytest.approx(400)
    assert dcd_check_interval(n, [1.0, 0.1], 400, 600, tol) == 300      # half the work so far
    assert dcd_check_interval(n, [1.0, 0.1], 400, 100, tol) == 200      # at least 2n
    assert dcd_check_interval(n, [0.5], 4000, 10_000, tol) == 5000   # slow: the work cap
    assert dcd_check_interval(n, [0.5, 0.5], 400, 5000, tol) == 2500    # no progress
    assert dcd_check_interval(n, [0.009], 400, 10_000, tol) == 200  # near tol: every 2n
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # tol = 0: no division by it
        assert dcd_check_interval(n, [1.0, 0.1], 400, 10_000, 0.0) == 5000


def test_dcd_checks_the_gap_at_growing_intervals_far_from_tol(monkeypatch):
    """A check costs a product with every row.  Far from tol (gap above 10 tol) they come
    at the intervals :func:`dcd_check_interval` predicts, at most half the work so far, not
    every 2n updates (287 checks here, against 69); near tol every 2n, since the best
    primal point seen at the checks is what certifies.  The certificate still holds."""
    rng = np.random.default_rng(5)
    n, tol = 1000, 1e-4
    Phi = rng.normal(size=(n, 20)).astype(np.float32)
    y = np.where(Phi[:, 0] + Phi[:, 1] ** 2 - 1 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    visits, at = _Visits(), []
    hinge_sum = solver.hinge_sum
    monkeypatch.setattr(solver, "hinge_sum",
                        lambda *a, **k: at.append(visits.total) or hinge_sum(*a, **k))
    lam = 1 / (10.0 * n)
    result = solve_dcd(Phi, y, np.ones(n), 1.0, lam, 1000, tol, np.random.default_rng(0), visits)
    assert result.converged and result.gap[-1] <= tol
    checks = np.array(at[1:])                   # at[0]: P(0), before any pass
    gaps = np.array(result.gap)
    far = gaps[:-1] > 10 * tol
    intervals = np.diff(checks)
    assert np.all(intervals >= 2 * n)
    assert np.all(intervals[far] <= np.maximum(2 * n, checks[:-1][far] / 2) + n)  # + a pass
    assert np.all(intervals[~far] < 3 * n)
    assert 5 <= far.sum() <= 15 and (~far).sum() >= 10
    tight = solve_dcd(Phi, y, np.ones(n), 1.0, lam, 5000, 1e-8, np.random.default_rng(1))
    assert result.objective[-1] <= tight.objective[-1] * (1 + tol)


def test_dcd_multiclass_is_deterministic_and_n_jobs_invariant():
    X, y = make_blobs(300, centers=3, cluster_std=0.6, random_state=0)
    fits = [NystromSVC(n_components=30, solver="dcd", random_state=0, n_jobs=n_jobs).fit(X, y)
            for n_jobs in (None, 2, None)]
    assert_array_equal(fits[0].coef_, fits[1].coef_)
    assert_array_equal(fits[0].coef_, fits[2].coef_)
    assert fits[0].score(X, y) > 0.95


def test_embedding_store_in_a_file_holds_what_memory_holds():
    Phi = np.random.default_rng(0).normal(size=(100, 7)).astype(np.float32)
    memory, disk = EmbeddingStore(100, 7), EmbeddingStore(100, 7, max_bytes=100 * 7 * 4 - 1)
    for store in (memory, disk):
        for start in range(0, 100, 30):
            store.write(start, Phi[start:start + 30].astype(np.float64))
    assert memory.in_memory and not disk.in_memory
    assert type(disk.array()) is np.ndarray and disk.array().flags.writeable
    assert_array_equal(disk.array(), Phi)
    assert_array_equal(memory.array(), Phi)
    disk.close()
    assert disk._file is None


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")   # 3 passes
def test_embedding_beyond_the_budget_gives_the_same_model_in_bounded_memory(monkeypatch):
    """max_embedding_mb below the embedding puts it in a mapped file: the same model, with
    the memory the fit allocates well under the embedding's size."""
    monkeypatch.setattr("fastsvm._options.EMBED_CHUNK_BYTES", 8 * 200 * 250)
    X, y = make_blobs(30_000, centers=3, n_features=5, cluster_std=3.0, random_state=0)
    for solver in ("dcd", "assg"):
        memory = NystromSVC(n_components=200, solver=solver, max_stages=3, random_state=0,
                            n_jobs=2).fit(X, y)
        tracemalloc.start()
        disk = NystromSVC(n_components=200, solver=solver, max_stages=3, max_embedding_mb=1,
                          random_state=0, n_jobs=2).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        info = disk.training_info_
        assert memory.training_info_["embedding_in_memory"] and not info["embedding_in_memory"]
        assert_array_equal(memory.coef_, disk.coef_)
        assert_array_equal(memory.intercept_, disk.intercept_)
        assert info["embedding_bytes"] == 30_000 * disk.n_components_ * 4 > 16 * 2**20
        # what remains (about 6 MB): the data, K_mm and its eigenvectors, vectors of n per
        # thread, and chunks of 250 rows
        assert peak < info["embedding_bytes"] / 3


@pytest.mark.parametrize("tol", [1e-2, 1e-3])
def test_stopping_rule(tol):
    """ASSG stops at the first stage whose objective moved by at most tol relative to it
    (the objectives here are about 0.18, so an absolute rule would stop earlier)."""
    X, y = _moons(400)
    fixed = NystromSVC(C=10, gamma=2.0, n_components=30, solver="assg", tol=None, max_stages=7, random_state=0)
    fixed.fit(X, y)
    assert fixed.n_iter_[0] == 7 and len(fixed.training_info_["objective"][0]) == 8
    early = NystromSVC(C=10, gamma=2.0, n_components=30, solver="assg", tol=tol, max_stages=50,
                       random_state=0)
    early.fit(X, y)
    history = early.training_info_["objective"][0]
    assert early.training_info_["converged"] == [True]
    assert early.n_iter_[0] < 50
    assert abs(history[-2] - history[-1]) <= tol * history[-1]
    assert all(abs(a - b) > tol * b for a, b in zip(history[:-2], history[1:-1]))


def test_eta_calibration_picks_the_best_first_stage():
    X, y = _moons(400)
    clf = NystromSVC(C=10, gamma=2.0, n_components=30, solver="assg", random_state=0, max_stages=1,
                     tol=None).fit(X, y)
    chosen = clf.training_info_["eta0"][0]
    first = clf.training_info_["objective"][0][1]
    Phi = clf.transform(X)
    yb = np.where(y == 1, 1.0, -1.0)
    lam = 1 / (400 * 10)
    for eta in (chosen / 4, chosen * 4):
        other = solve_assg(Phi, yb, np.ones(len(yb)), 1.0, lam, eta, np.sqrt(2 / lam), 2.0,
                           400, 1, None, np.random.default_rng(0))
        assert other.objective[1] >= first * 0.9  # no much better step nearby


# ------------------------------------------------------------- estimator
def test_labels_multiclass_sparse_and_determinism():
    X, y = make_blobs(600, centers=4, cluster_std=1.0, random_state=0)
    labels = np.array(["north", "east", "south", "west"])[y]
    clf = NystromSVC(C=1, gamma=0.5, n_components=60, random_state=3).fit(X, labels)
    assert clf.coef_.shape == (6, clf.n_components_) and clf.intercept_.shape == (6,)
    assert set(clf.predict(X)) <= set(labels) and clf.score(X, labels) > 0.9
    assert clf.decision_function(X).shape == (600, 4)
    ovr = NystromSVC(C=1, gamma=0.5, n_components=60, multi_class="ovr", random_state=3)
    ovr.fit(X, labels)
    assert ovr.coef_.shape == (4, clf.n_components_) and ovr.score(X, labels) > 0.9
    assert ovr.decision_function(X).shape == (600, 4)
    again = NystromSVC(C=1, gamma=0.5, n_components=60, random_state=3, n_jobs=2)
    again.fit(sp.csr_matrix(X), labels)
    assert_allclose(again.coef_, clf.coef_, rtol=1e-6, atol=1e-9)
    assert_array_equal(again.component_indices_, clf.component_indices_)
    other = NystromSVC(C=1, gamma=0.5, n_components=60, random_state=4).fit(X, labels)
    assert not np.array_equal(other.component_indices_, clf.component_indices_)


def test_transform_and_fit_transform():
    X, y = _moons(200)
    clf = NystromSVC(C=1, gamma=1.0, n_components=25, random_state=0)
    emb = clf.fit_transform(X.astype(np.float32), y)
    assert emb.dtype == np.float32 and emb.shape == (200, clf.n_components_)
    exact = clf.transform(X)
    # the float32 product rounds K P (P = L^(-T) has entries ~ 100 here); the kept
    # landmarks' rows are copied from L, K_JJ L^(-T) = L, so they carry no product error
    assert_allclose(clf.transform(X.astype(np.float32)), exact, atol=1e-3)
    assert_allclose(emb, exact, atol=1e-3)
    landmarks = clf.component_indices_
    assert_allclose(emb[landmarks], exact[landmarks], atol=1e-6)
    assert_allclose(np.tril(emb[landmarks]), emb[landmarks], atol=0)
    assert clf.transform(X).dtype == np.float64
    decision = clf.decision_function(X)
    assert_allclose(decision, clf.transform(X) @ clf.coef_[0] + clf.intercept_[0], rtol=1e-8,
                    atol=1e-8)


def test_feature_names_out_and_pandas_output():
    """As scikit-learn's Nystroem: get_feature_names_out names the embedding's columns, and
    set_output(transform='pandas') gives DataFrames, in a pipeline too."""
    pd = pytest.importorskip("pandas")
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = _moons(200)
    clf = NystromSVC(n_components=25, random_state=0)
    with pytest.raises(NotFittedError):
        clf.get_feature_names_out()
    emb = clf.fit_transform(X, y)
    names = [f"nystromsvc{j}" for j in range(clf.n_components_)]
    assert list(clf.get_feature_names_out()) == names
    frame = clf.set_output(transform="pandas").transform(X)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == names
    assert_allclose(frame.to_numpy(), emb)
    assert clf.score(X, y) == clf.set_output(transform="default").score(X, y)
    pipe = make_pipeline(NystromSVC(n_components=25, random_state=0),
                         LogisticRegression()).set_output(transform="pandas").fit(X, y)
    assert list(pipe[:-1].get_feature_names_out()) == names
    assert list(pipe[-1].feature_names_in_) == names


@pytest.mark.parametrize("m, gamma", [(6, 0.5), (25, 0.5), (60, 20.0)])
def test_training_embedding_in_chunks_mixes_copied_and_computed_rows(monkeypatch, m, gamma):
    """In chunks of rows with no landmark, some, or only landmarks (m = n: every row is
    one), the training embedding is the float64 transform to float32 accuracy, and the
    landmark rows, copied from L, to 1e-6."""
    monkeypatch.setattr("fastsvm._options.EMBED_CHUNK_BYTES", 8 * 6 * 10)
    X, y = _moons(60)
    clf = NystromSVC(C=1, gamma=gamma, n_components=m, random_state=1)
    emb = clf.fit_transform(X, y)
    exact = clf.transform(X)
    landmarks = clf.component_indices_
    if m == 60:
        assert len(landmarks) == 60                  # no product at all
    assert_allclose(emb, exact, atol=1e-3)
    assert_allclose(emb[landmarks], exact[landmarks], atol=1e-6)


def test_pegasos_solver_and_no_intercept():
    X, y = _moons(400)
    peg = NystromSVC(C=10, gamma=2.0, n_components=40, solver="pegasos", random_state=0)
    assert peg.fit(X, y).score(X, y) > 0.9 and "eta0" not in peg.training_info_
    flat = NystromSVC(C=10, gamma=2.0, n_components=40, fit_intercept=False, random_state=0)
    assert flat.fit(X, y).intercept_[0] == 0.0 and flat.score(X, y) > 0.9


@pytest.mark.parametrize("params, message", [
    (dict(C=0.0), "C"),
    (dict(C=-1.0), "C"),
    (dict(gamma=0.0), "gamma"),
    (dict(gamma=-2.0), "gamma"),
    (dict(omega=1.0), "omega"),
    (dict(eta0=0.0), "eta0"),
    (dict(landmarks="kmeans"), "landmarks"),
    (dict(kernel="cosine"), "kernel"),
    (dict(C=np.inf), "C"),
    (dict(coef0=np.nan), "coef0 must be finite"),
])
def test_bad_parameters(params, message):
    X, y = _moons(300)
    with pytest.raises(ValueError, match=message):
        NystromSVC(**params).fit(X, y)


def test_more_components_than_rows_are_clipped_with_a_warning():
    X, y = _moons(300)
    with pytest.warns(UserWarning, match="n_components=500 is larger than the 300 training rows"):
        clf = NystromSVC(n_components=500, random_state=0).fit(X, y)
    assert clf.training_info_["landmarks_drawn"] == 300 and clf.score(X, y) > 0.9
    with warnings.catch_warnings():       # the default 'auto' takes every row, silently
        warnings.simplefilter("error")
        auto = NystromSVC(random_state=0).fit(X, y)
    assert auto.training_info_["landmarks_drawn"] == 300
    assert len(auto.component_indices_) == auto.n_components_ <= 300
    assert auto.training_info_["kernel_residual"] == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("kernel, params", [("rbf", dict(gamma=0.1)),
                                            ("poly", dict(gamma=0.3, degree=2, coef0=1.0))])
def test_kernel_residual_is_the_missed_share_of_the_trace(kernel, params):
    """kernel_residual = 1 - trace(K_nystrom) / trace(K) over the training rows, brute force."""
    X, y = make_classification(300, 6, random_state=0)
    clf = NystromSVC(kernel=kernel, n_components=20, random_state=0, **params).fit(X, y)
    K = pairwise_kernels(X, metric=kernel, filter_params=True, **params)
    landmarks = clf.component_indices_
    K_nm = K[:, landmarks]
    K_nystrom = K_nm @ np.linalg.pinv(K[np.ix_(landmarks, landmarks)], rcond=1e-7,
                                      hermitian=True) @ K_nm.T
    assert clf.training_info_["kernel_residual"] == pytest.approx(
        1 - np.trace(K_nystrom) / np.trace(K), rel=1e-3, abs=1e-6)   # float32 embedding
    # around the embeddings' mean mu: ||mu||^2 = 1' K_nystrom 1 / n^2, and mu lies in the
    # embedding's span, so sum_i <phi(x_i), mu> = n ||mu||^2 also in the feature space
    mean_part = K_nystrom.sum() / len(X)
    assert clf.training_info_["kernel_spread_residual"] == pytest.approx(
        1 - (np.trace(K_nystrom) - mean_part) / (np.trace(K) - mean_part), rel=1e-3, abs=1e-6)


def test_an_embedding_that_keeps_the_mean_only_warns():
    """Features offset by 300 make the linear kernel nearly constant: the factorisation kept
    one landmark, the embedding the rows' mean, and the fit was a constant classifier with
    no word of why (the kernel's trace was missed by 2e-5 only)."""
    X, y = make_classification(2000, random_state=0)
    with pytest.warns(UserWarning, match="misses 9.% of the training rows' spread around"):
        clf = NystromSVC(kernel="linear", tol=None, max_stages=5, random_state=0).fit(X + 300, y)
    info = clf.training_info_
    assert info["kernel_residual"] < 1e-4 < 0.9 < info["kernel_spread_residual"]
    assert clf.n_components_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = NystromSVC(kernel="linear", random_state=0).fit(X, y)
    assert clf.training_info_["kernel_spread_residual"] == 0.0 and clf.score(X, y) > 0.95


def test_kernel_residual_of_an_exact_or_indefinite_embedding():
    """An exact embedding (linear kernel, more landmarks than features) reported -2e-8 from
    float32 rounding, and the indefinite sigmoid, whose few kept landmarks overstate
    k(x, x), -0.78: a share missed cannot be negative."""
    X, y = make_classification(300, 6, random_state=0)
    exact = NystromSVC(kernel="linear", n_components=100, random_state=0).fit(X, y)
    assert exact.training_info_["kernel_residual"] == 0.0
    assert exact.training_info_["kernel_spread_residual"] == 0.0
    sigmoid = NystromSVC(kernel="sigmoid", gamma=0.1, n_components=300, random_state=0)
    info = sigmoid.fit(X, y).training_info_
    assert info["kernel_residual"] is None and info["kernel_spread_residual"] is None


def test_choose_landmarks_doubles_while_the_residual_is_high():
    from fastsvm.nystrom.estimator import AUTO_RESIDUAL, choose_landmarks

    draws = []

    def draw(m):
        draws.append(m)
        return np.arange(m)

    def factor(idx):
        return np.arange(len(idx)), np.eye(len(idx))

    rng = np.random.default_rng(0)
    residuals = iter([0.5, 0.3, AUTO_RESIDUAL])      # above, above, at the target: stop
    *_, m = choose_landmarks(10_000, 100, 5000, draw, factor, lambda *a: next(residuals), rng)
    assert draws == [100, 200, 400] and m == 400
    draws.clear()                                     # at most grow_to
    *_, m = choose_landmarks(10_000, 100, 300, draw, factor, lambda *a: 0.9, rng)
    assert draws == [100, 200, 300] and m == 300
    draws.clear()                                     # a kernel without a positive trace
    choose_landmarks(10_000, 100, 300, draw, factor, lambda *a: None, rng)
    assert draws == [100]
    draws.clear()                                     # an int n_components: no residual
    choose_landmarks(10_000, 100, 100, draw, factor, lambda *a: pytest.fail("computed"), rng)
    assert draws == [100]


def test_auto_components_respect_n_and_the_memory_budget():
    from fastsvm.nystrom.estimator import auto_components

    assert auto_components(500, 2**40) == (500, 500)
    assert auto_components(100_000, 2**40) == (1000, 4000)
    assert auto_components(8000, 2**40) == (1000, 8000)     # every row: the exact kernel
    # above, n m^2 within the exact kernel's 8000^3 flops, falling smoothly to 4000
    for n in (8001, 9800, 16_000, 31_999, 32_000):
        most = auto_components(n, 2**40)[1]
        assert n * most**2 <= 8000**3 < n * (most + 1) ** 2 or most == 4000
    assert auto_components(8001, 2**40) == (1000, 7999)
    assert auto_components(9800, 2**40) == (1000, 7228)
    assert auto_components(32_000, 2**40) == (1000, 4000)
    assert auto_components(6000, 4 * 6000 * 2000) == (1000, 2000)
    assert auto_components(100_000, 4 * 100_000 * 1500) == (1000, 1500)
    assert auto_components(10**7, 2**30) == (1000, 1000)


@pytest.mark.filterwarnings("ignore:the Nystrom embedding misses")
def test_auto_components_grow_where_the_embedding_misses_much():
    """Sparse wide rows: 'auto' draws more than 1000 landmarks and misses less of the
    kernel than 1000 do."""
    X = sp.random(1500, 2000, density=0.005, format="csr", random_state=0)
    y = np.arange(1500) % 2
    auto = NystromSVC(random_state=0).fit(X, y)
    fixed = NystromSVC(n_components=1000, random_state=0).fit(X, y)
    assert auto.training_info_["landmarks_drawn"] > 1000
    assert auto.training_info_["kernel_residual"] < fixed.training_info_["kernel_residual"] - 0.1


@pytest.mark.filterwarnings("ignore:the Nystrom embedding misses")
def test_auto_components_take_every_row_of_a_small_set_the_cap_leaves_short(monkeypatch):
    """Where AUTO_MAX_COMPONENTS landmarks still miss more than AUTO_RESIDUAL and there are
    at most AUTO_EXACT_ROWS rows, 'auto' grows on to every row: the exact kernel; above, to
    the m of n m^2 <= AUTO_EXACT_ROWS^3 (scaled down: 10 landmarks first, 40 at least,
    every row up to 80; 79 on 81 rows, 56 on 160)."""
    import fastsvm.nystrom.estimator as est

    monkeypatch.setattr(est, "AUTO_COMPONENTS", 10)
    monkeypatch.setattr(est, "AUTO_MAX_COMPONENTS", 40)
    monkeypatch.setattr(est, "AUTO_EXACT_ROWS", 80)
    X = sp.random(160, 2000, density=0.005, format="csr", random_state=0)
    X = X + sp.eye(160, 2000, format="csr")              # no empty row
    y = np.arange(160) % 2
    for n, most in [(80, 80), (81, 79), (160, 56)]:
        clf = NystromSVC(random_state=0).fit(X[:n], y[:n])
        info = clf.training_info_
        assert info["landmarks_drawn"] == most
        if n == most:
            assert clf.n_components_ == n and info["kernel_residual"] < 1e-6
        else:       # the cap, not the residual, stopped the growth
            assert info["kernel_residual"] > (0.15 if n == 160 else 1e-3)


def test_landmarks_spanning_little_of_the_data_warn():
    """Sparse rows in 2,000 dimensions share few features: 50 landmarks miss most of the RBF
    kernel (about what 1,000 landmarks miss on a 5,000-feature text-like set)."""
    X = sp.random(400, 2000, density=0.005, format="csr", random_state=0)
    y = np.arange(400) % 2
    with pytest.warns(UserWarning, match="misses .* of the kernel's trace"):
        clf = NystromSVC(n_components=50, random_state=0).fit(X, y)
    assert clf.training_info_["kernel_residual"] > 0.5


def test_bad_input():
    X, y = _moons(100)
    clf = NystromSVC(n_components=10)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            clf.fit(Xb, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        clf.fit(X, np.ones(100))
    clf.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((3, 5)))
    broken = sp.csr_matrix(X)
    broken.indices[4] = 7   # column 7 of 2
    with pytest.raises(ValueError, match="malformed CSR"):
        clf.predict(broken)
    with pytest.raises(ValueError, match="malformed CSR"):
        NystromSVC(n_components=10).fit(broken, y)


def test_linear_kernel_feature_weights_are_the_documented_product():
    """coef_ weighs the embedding's columns, which with the linear kernel can be as many as
    X's features (4 here); coef_ @ normalization_.T @ components_ weighs the features."""
    X, y = make_classification(300, 4, n_informative=2, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    clf = NystromSVC(kernel="linear", multi_class="ovr", random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, X.shape[1])
    weights = clf.coef_ @ clf.normalization_.T @ clf.components_
    assert np.abs(clf.coef_ - weights).max() > 0.1              # not the features' weights
    assert_allclose(X @ weights.T + clf.intercept_, clf.decision_function(X), atol=1e-10)


@pytest.mark.parametrize("n_components", [4, 100])     # eigvalsh; ARPACK above SMALL_EIG
def test_linear_kernel_on_all_zero_landmarks_is_a_clear_error(n_components):
    X, y = np.zeros((200, 3)), np.arange(200) % 2
    with pytest.raises(ValueError, match="landmarks has no positive eigenvalue"):
        NystromSVC(kernel="linear", n_components=n_components, random_state=0).fit(X, y)


def test_sigmoid_kernel_zero_on_many_landmarks_is_a_clear_error():
    """Rows of scale 1e-300: gamma='scale' is 1 (zero variance) and every sigmoid value
    tanh(<x, x'>) is 0, so ARPACK's product with its starting vector is zero; its
    ArpackError ('starting vector is zero') escaped the fit."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)) * 1e-300, np.arange(300) % 4
    with pytest.raises(ValueError, match="landmarks has no positive eigenvalue"):
        NystromSVC(kernel="sigmoid", random_state=0).fit(X, y)


# ------------------------------------------------------- real-data floors
@pytest.mark.data("a9a")
def test_a9a_reaches_the_papers_error():
    # Snacks, Table III: 15.2 % test error with m = 800 (LIBSVM optimum 15.1 %)
    X, y, Xt, yt = load_dataset("a9a")
    info = DATASETS["a9a"]
    clf = NystromSVC(C=info.C, gamma=info.gamma, n_components=800, solver="assg",
                     random_state=0).fit(X, y)
    assert 1 - clf.score(Xt, yt) <= 0.152 + 0.003


@pytest.mark.data("ijcnn1")
def test_ijcnn1_floor():
    # m = 1,000 keeps the test fast; the paper's m = 5,000 runs in benchmarks/
    X, y, Xt, yt = load_dataset("ijcnn1")
    info = DATASETS["ijcnn1"]
    clf = NystromSVC(C=info.C, gamma=info.gamma, n_components=1000, solver="assg",
                     random_state=0).fit(X, y)
    assert clf.score(Xt, yt) >= 0.975


@pytest.mark.data("phishing")
def test_defaults_reach_liblinears_optimum_on_phishing():
    """At its defaults NystromSVC certifies a gap of 1e-3 and predicts like LIBLINEAR solved
    tightly on the same embedding (within 0.2 pp of test accuracy, the issue's bound)."""
    from sklearn.model_selection import train_test_split

    X, y, _, _ = load_dataset("phishing")
    X, Xt, y, yt = train_test_split(X.astype(np.float32), y, test_size=0.2, stratify=y,
                                    random_state=0)
    clf = NystromSVC(random_state=0)
    Phi = clf.fit_transform(X, y)
    assert clf.training_info_["duality_gap"][0][-1] <= 1e-3
    # LIBLINEAR's default tol stops here within 4e-7 (relative) of its primal optimum
    # (objective 932.11695 after 584 epochs, 932.11661 after 31,175 at tol 1e-5)
    lin = LinearSVC(C=1.0, loss="hinge", tol=1e-4, max_iter=10_000).fit(Phi, y)
    assert lin.n_iter_ < 10_000
    assert abs(clf.score(Xt, yt) - lin.score(clf.transform(Xt), yt)) <= 0.002


@pytest.mark.data("usps")
def test_usps_multiclass_floor():
    X, y, Xt, yt = load_dataset("usps")
    clf = NystromSVC(C=10, gamma=2 ** -7, n_components=1000, random_state=0).fit(X, y)
    # SVC (one-vs-one) reaches 95.3 %, LinearSVC one-vs-rest on this embedding 94.3 %
    assert clf.score(Xt, yt) >= 0.935


def test_dcd_weight_two_is_the_row_twice_on_one_embedding():
    """On a fixed embedding, weight 2 and a repeated row are the same problem: the
    certified optima agree within the sum of the two tolerances."""
    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(150, 6))
    y = np.where(Phi[:, 0] + 0.7 * rng.normal(size=150) > 0, 1.0, -1.0)
    weight = np.ones(150)
    weight[:20] = 2.0
    repeated = np.r_[np.arange(150), np.arange(20)]
    lam = 1.0 / (5.0 * weight.sum())            # C = 5 on both problems (S = 170)
    tol = 1e-6
    weighted = solve_dcd(Phi, y, weight * 150 / weight.sum(), 1.0, lam, 100_000, tol,
                         np.random.default_rng(0))
    twice = solve_dcd(Phi[repeated], y[repeated], np.ones(170), 1.0, lam, 100_000, tol,
                      np.random.default_rng(0))
    assert weighted.converged and twice.converged
    assert weighted.objective[-1] == pytest.approx(twice.objective[-1], rel=3 * tol)
    assert_allclose(weighted.w, twice.w, atol=1e-2)


# ------------------------------------------------------------- one-vs-one
def test_primal_objective_on_rows_matches_oracle():
    """A one-vs-one pair's objective, read in place at its rows, is that of its rows alone."""
    rng = np.random.default_rng(1)
    Phi = rng.normal(size=(80, 6))
    y = np.where(rng.random(80) > 0.5, 1.0, -1.0)
    w = rng.normal(size=7)
    weight = rng.uniform(0.1, 3.0, size=80)
    rows = np.sort(rng.choice(80, 30, replace=False))
    expected = naive.hinge_objective(Phi[rows], y[rows], w[:-1], w[-1], 0.3, weight[rows])
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-6)):
        assert_allclose(primal_objective(Phi.astype(dtype), y, weight, w, 1.0, 0.3, rows),
                        expected, rtol=rtol)


def test_dcd_with_shared_squared_norms_is_the_same_run():
    """The squared row norms one-vs-one and one-vs-rest compute once for all problems
    give the run that computes them itself, on all rows and on a pair's rows."""
    rng = np.random.default_rng(4)
    Phi = rng.normal(size=(120, 5)).astype(np.float32)
    y = np.where(Phi[:, 1] + 0.5 * rng.normal(size=120) > 0, 1.0, -1.0)
    weight, lam = np.ones(120), 1.0 / 120
    sq_norms = np.einsum("ij,ij->i", Phi, Phi, dtype=np.float64)
    assert_allclose(embedded_sq_norms(Phi), sq_norms, rtol=1e-13)
    assert_allclose(embedded_sq_norms(Phi[:0]), np.zeros(0))
    for rows in (None, np.sort(rng.choice(120, 50, replace=False))):
        own = solve_dcd(Phi, y, weight, 1.0, lam, 1000, 1e-4, np.random.default_rng(0),
                        rows=rows)
        shared = solve_dcd(Phi, y, weight, 1.0, lam, 1000, 1e-4, np.random.default_rng(0),
                           rows=rows, sq_norms=sq_norms)
        assert own.converged and shared.converged and own.epochs == shared.epochs
        assert_allclose(shared.w, own.w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("solver", ["dcd", "assg"])
def test_one_vs_one_pairs_reach_the_liblinear_optimum_of_their_rows(solver):
    """Each pair (i, j) is LinearSVC(C, loss='hinge') on the rows of classes i and j of the
    shared embedding, class j positive, with the rows' sample weights multiplying C."""
    X, y = make_blobs(360, centers=4, cluster_std=2.5, random_state=1)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    C = 2.0
    params = ({"tol": 1e-4} if solver == "dcd"
              else {"tol": None, "max_stages": 14, "stage_steps": 20 * 180})
    clf = NystromSVC(C=C, gamma=0.1, n_components=30, solver=solver, random_state=0, **params)
    clf.fit(X, y, sample_weight=weight)
    Phi = clf.transform(X)
    assert clf.coef_.shape == (6, clf.n_components_)
    for k, (i, j) in enumerate([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]):
        rows = np.flatnonzero((y == i) | (y == j))
        yb = np.where(y[rows] == j, 1.0, -1.0)
        lin = LinearSVC(C=C, loss="hinge", tol=1e-10, max_iter=500_000)
        lin.fit(Phi[rows], yb, sample_weight=weight[rows])

        def objective(w, b):    # LinearSVC's: (||w||^2 + b^2) / 2 + C sum_i s_i hinge_i
            margins = yb * (Phi[rows] @ w + b)
            return 0.5 * (w @ w + b * b) + C * weight[rows] @ np.maximum(0.0, 1.0 - margins)

        optimum = objective(lin.coef_[0], lin.intercept_[0])
        ours = objective(clf.coef_[k], clf.intercept_[k])
        # DCD's certificate: within tol; ASSG (the paper's fixed budget): near
        assert optimum * (1 - 1e-6) <= ours <= optimum * (1.0 + (1e-4 if solver == "dcd"
                                                                else 0.03))


def test_one_vs_one_scores_are_svcs():
    """ovo_scores is scikit-learn's own transform of SVC's one-vs-one values; the class of
    most votes wins."""
    from sklearn.utils.multiclass import _ovr_decision_function

    from fastsvm.multiclass import ovo_pairs, ovo_scores

    rng = np.random.default_rng(0)
    for n_classes in (3, 5):
        decision = rng.normal(size=(200, n_classes * (n_classes - 1) // 2))
        decision[:10] = 0.0                                 # ties in the votes, no confidence
        expected = _ovr_decision_function(decision > 0, decision, n_classes)
        assert_allclose(ovo_scores(decision, n_classes), expected, rtol=1e-12, atol=1e-15)
        votes = np.zeros((200, n_classes))
        for k, (i, j) in enumerate(ovo_pairs(n_classes)):
            votes[np.arange(200), np.where(decision[:, k] > 0, j, i)] += 1
        winner = np.argmax(ovo_scores(decision, n_classes), axis=1)
        assert np.all(votes[np.arange(200), winner] == votes.max(axis=1))


def test_an_exact_tie_predicts_the_first_class():
    """A binary decision of exactly 0 (or -0) predicts classes_[0], as a one-vs-one tie
    votes for the pair's first class; the smallest values either side decide."""
    from fastsvm.multiclass import labels_from_decision, ovo_scores

    classes = np.array(["a", "b"])
    assert_array_equal(labels_from_decision(np.array([0.0, -0.0, 5e-324, -5e-324]), classes),
                       ["a", "a", "b", "a"])
    assert_array_equal(labels_from_decision(ovo_scores(np.zeros((1, 3)), 3), np.arange(3)),
                       [0])


def test_one_vs_one_scores_of_huge_decision_values_stay_finite():
    """Finite one-vs-one values near float64's largest (a model file's offsets of 1e308):
    their sums overflowed and the tie-break turned them into NaN, which argmax took for
    the class of fewest votes."""
    from fastsvm.multiclass import ovo_scores

    decision = np.array([[1e308, 1e308, 0.5], [-1e308, 1e308, -1e308], [1e308, 1e308, 1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scores = ovo_scores(decision, 3)
    assert_allclose(scores, [[-1 / 3, 4 / 3, 7 / 3], [1, 1, 1], [-1 / 3, 1, 7 / 3]])


@pytest.mark.parametrize("n_classes, resolved", [(3, "ovo"), (4, "ovr")])
def test_auto_split_is_one_vs_one_up_to_its_class_limit(monkeypatch, n_classes, resolved):
    """multi_class='auto' trains exactly the 'ovo' model up to AUTO_OVO_MAX_CLASSES
    classes and the 'ovr' one above (the limit lowered to 3 here; 30 by default)."""
    monkeypatch.setattr(multiclass, "AUTO_OVO_MAX_CLASSES", 3)
    X, y = make_blobs(400, centers=n_classes, cluster_std=2.0, random_state=0)
    auto = NystromSVC(n_components=30, random_state=0).fit(X, y)
    explicit = NystromSVC(n_components=30, multi_class=resolved, random_state=0).fit(X, y)
    assert auto.training_info_["multi_class"] == resolved
    assert_array_equal(auto.coef_, explicit.coef_)
    assert_array_equal(auto.decision_function(X), explicit.decision_function(X))
    assert auto.coef_.shape[0] == {"ovo": 3, "ovr": 4}[resolved]


def test_one_vs_one_beats_one_vs_rest_on_shells():
    """Concentric shells: the middle class is no half-space of the embedding against both
    others, each pair's boundary is (SVC: 97.64 % at its defaults on 10,000 rows)."""
    X, y = make_gaussian_quantiles(n_samples=3000, n_features=4, n_classes=3, random_state=0)
    X_test, y_test = X[2000:], y[2000:]
    ovo = NystromSVC(random_state=0).fit(X[:2000], y[:2000]).score(X_test, y_test)
    ovr = NystromSVC(multi_class="ovr", random_state=0).fit(X[:2000], y[:2000])
    assert ovo >= 0.95 and ovo > ovr.score(X_test, y_test) + 0.01
