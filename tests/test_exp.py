"""The vectorisable exp of the compiled kernels against np.exp."""

import numpy as np

from fastsvm._exp import exp_nonpositive, rbf_in_place


def test_exp_nonpositive_matches_numpy():
    rng = np.random.default_rng(0)
    x = -np.concatenate([rng.uniform(0, 708, 100_000), rng.uniform(0, 1e-3, 10_000),
                         [0.0, 5e-324, 1e-300, 0.5 * np.log(2), np.log(2), 707.9, 708.0]])
    out = np.empty_like(x)
    exp_nonpositive(x, len(x), out, np.empty(len(x), dtype=np.int64))
    ref = np.exp(x)
    assert np.all(np.abs(out - ref) <= ref * (np.abs(x) * 4e-17 + 4e-16))
    assert out[x == 0.0][0] == 1.0


def test_exp_nonpositive_underflows_to_zero_and_works_in_place():
    x = np.array([-708.5, -745.0, -1e300, -np.inf, -1.0])
    exp_nonpositive(x, len(x), x, np.empty(len(x), dtype=np.int64))
    assert np.array_equal(x[:4], np.zeros(4))
    assert abs(x[4] - np.exp(-1.0)) < 1e-16


def test_rbf_in_place_matches_the_numpy_formula():
    """exp(-gamma max(0, ||a||^2 + ||b||^2 - 2 <a, b>)) entry by entry, in place: distances
    from 0 (cancellation below 0 is clipped) to far past exp's underflow, and NaN kept."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((37, 5)), 3 * rng.standard_normal((41, 5))
    B[0] = A[0]                                  # a distance of (about) 0
    sq_a, sq_b = (A * A).sum(axis=1), (B * B).sum(axis=1)
    for gamma in (1e-3, 0.5, 50.0):
        dots = A @ B.T
        dots[1, 1] = np.nan
        x = -gamma * np.maximum(sq_a[:, None] + sq_b[None, :] - 2 * (A @ B.T), 0)
        x[1, 1] = np.nan
        expected = np.exp(x)
        rbf_in_place(dots, sq_a, sq_b, gamma)
        both = ~np.isnan(expected)
        assert np.array_equal(np.isnan(dots), ~both)
        bound = expected * (np.abs(x) * 4e-17 + 4e-16)          # exp_nonpositive's, above
        assert np.all(np.abs(dots - expected)[both] <= np.where(x < -708, 1e-307, bound)[both])
    assert np.count_nonzero(dots == 0.0) > 0 and np.all(dots[both] <= 1.0)


def test_gaussian_values_never_exceed_one_where_distances_cancel():
    """||a||^2 + ||b||^2 - 2 <a, b> rounds below 0 for nearly equal rows far from the
    origin (here 1e4 + N(0, 1) in 3 dimensions); the exponent clips it at 0, so the kernel
    stays at most 1, as the merges assume (kappa <= 1), in the block kernel and in the
    compiled steps' row kernel alike.  Without the clip: up to 1.127 at gamma = 1e6."""
    from fastsvm._packed import rbf_from_dots
    from fastsvm.kernels import Kernel

    rng = np.random.default_rng(0)
    A = 1e4 + rng.standard_normal((40, 3))
    B = A + 1e-9 * rng.standard_normal((40, 3))
    sq_a, sq_b = (A * A).sum(axis=1), (B * B).sum(axis=1)
    dots = A @ B.T
    assert np.any(sq_a[:, None] + sq_b[None, :] - 2 * dots < 0)      # the case is hit
    for gamma in (1.0, 1e4, 1e6):
        K = Kernel("rbf", gamma=gamma)(A, B)
        assert K.max() <= 1.0 and K.diagonal().min() > 0.5
        row = np.empty(len(B))
        rbf_from_dots(dots[0].copy(), sq_a[0], sq_b, gamma, len(B), row,
                      np.empty(len(B), dtype=np.int64))
        assert row.max() <= 1.0 and row[0] > 0.5
