"""The vectorisable exp of the compiled kernels against np.exp."""

import numpy as np

from fastsvm._exp import exp_nonpositive


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
