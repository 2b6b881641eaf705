"""MarginSGD (Orchel & Suykens): the compiled one pass against the NumPy oracle."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastsvm import _options
from fastsvm.kernels import row_sq_norms
from fastsvm.margin_sgd.solver import draw_order, run_pass

from . import naive


def _problem(n=150, d=5, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < (0.5 if sparse else 1.0))
    y = np.where(np.sin(X[:, 0]) + X[:, 1] > 0, 1.0, -1.0)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("update", ["squared-hinge", "constant"])
@pytest.mark.parametrize("sampling", ["replacement", "permutation"])
@pytest.mark.parametrize("sparse, dense_from", [(False, 0.25), (True, 0.0), (True, 1.01)])
@pytest.mark.parametrize("M", [0.5, 1.0, 3.0])
def test_one_pass_matches_oracle(monkeypatch, update, sampling, sparse, dense_from, M):
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)   # several blocks and storage growth
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)   # BLAS or CSR rows
    X, y = _problem(sparse=sparse)
    order = draw_order(np.arange(len(y)), sampling, np.random.default_rng(1))
    result = run_pass(X, row_sq_norms(X), y, 0.3, M, update, order)
    alpha = naive.margin_sgd_pass(X, y, order, 0.3, M, update)
    got = np.zeros(len(y))
    got[result.support] = y[result.support] * result.dual
    assert_allclose(got, alpha, rtol=1e-10, atol=1e-12)
    # each coefficient set at most once: every support vector appears once, at its first draw
    assert len(np.unique(result.support)) == len(result.support)
    first = {i: k for k, i in reversed(list(enumerate(order)))}
    assert_array_equal(np.argsort([first[i] for i in result.support]), np.arange(len(result.support)))
    assert result.n_visited == len(np.unique(order))
    dense = X.toarray() if sparse else X
    assert_array_equal(result.svt.T, dense[result.support])
    if sampling == "permutation":
        assert result.n_visited == len(y)


def test_replacement_draws_about_63_percent():
    order = draw_order(np.arange(100_000), "replacement", np.random.default_rng(0))
    assert abs(len(np.unique(order)) / 100_000 - (1 - np.exp(-1))) < 0.01
