"""BSGD of K one-vs-rest models on one shared budget, against brute-force references."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from fastsvm import _options
from fastsvm._packed import PackedData
from fastsvm.bsgd import _kernels
from fastsvm.bsgd._shared_kernels import merge_degradation, solve_h_vector
from fastsvm.bsgd.solver import DOT_BLOCK, DOT_BLOCK_MIN_FEATURES, BSGDState, run_pass
from fastsvm.kernels import Kernel
from fastsvm.merge import METHODS
from fastsvm.merge._kernels import EPS_GSS_PRECISE, solve_h, wd_at
from fastsvm.merge.table import load_tables

from . import naive
from .naive import NaiveBSGD, NaiveSharedBSGD

N_MODELS = 3
MAINTENANCE = {"merge": _kernels.MERGE, "remove": _kernels.REMOVE}


def _problem(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    labels = np.argmax(X[:, :N_MODELS] + 0.5 * rng.normal(size=(n, N_MODELS)), axis=1)
    order = np.concatenate([rng.permutation(n), rng.permutation(n)]).astype(np.int64)
    return X, labels.astype(np.int64), order


def _pair(rng, d=3, n_models=N_MODELS):
    xa, xb = rng.normal(size=d), rng.normal(size=d)
    beta_a = rng.normal(size=n_models)
    beta_b = beta_a * rng.uniform(0.2, 3.0) + rng.normal(size=n_models)
    return xa, xb, beta_a, beta_b


@pytest.mark.parametrize("gamma", [0.05, 0.5, 3.0])
def test_merge_degradation_matches_kernel_values(gamma):
    """|beta_a|^2 + |beta_b|^2 + 2 kappa <beta_a, beta_b> - S(h) is the summed RKHS
    degradation, and the lookup ranking's split into a binary problem of the parallel
    parts plus |q|^2 (1 - kappa^(2 h^2)) is exact at every h."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        xa, xb, beta_a, beta_b = _pair(rng)
        log_kappa = -gamma * np.sum((xa - xb) ** 2)
        kappa = math.exp(log_kappa)
        aa, ab, bb = beta_a @ beta_a, beta_a @ beta_b, beta_b @ beta_b
        norm_a = math.sqrt(aa)
        p = ab / norm_a
        q2 = bb - p * p
        for h in (0.0, 0.17, 0.5, 0.83, 1.0):
            brute = naive.shared_degradation(xa, xb, beta_a, beta_b, h, gamma)[0]
            assert_allclose(merge_degradation(h, log_kappa, aa, ab, bb), brute, rtol=1e-9,
                            atol=1e-12)
            if p > 0:
                split = ((norm_a + p) ** 2 * wd_at(h, norm_a / (norm_a + p), kappa)
                         + q2 * (1 - kappa ** (2 * h * h)))
                assert_allclose(split, brute, rtol=1e-9, atol=1e-12)


def test_search_finds_the_best_merge():
    """Golden section search of S reaches the brute-force optimum over h, also where S has
    two modes (kappa < e^-2)."""
    rng = np.random.default_rng(2)
    for gamma in (0.1, 1.0, 4.0):
        for _ in range(10):
            xa, xb, beta_a, beta_b = _pair(rng)
            log_kappa = -gamma * np.sum((xa - xb) ** 2)
            aa, ab, bb = beta_a @ beta_a, beta_a @ beta_b, beta_b @ beta_b
            h = solve_h_vector(log_kappa, aa, ab, bb, EPS_GSS_PRECISE)
            best, _ = naive.best_shared_merge(xa, xb, beta_a, beta_b, gamma)
            ours = naive.shared_degradation(xa, xb, beta_a, beta_b, h, gamma)[0]
            assert ours <= best * (1 + 1e-7) + 1e-12


def test_one_model_is_the_binary_merge():
    """With K = 1 the vector merge problem is the paper's: the same h."""
    for m in (0.1, 0.5, 0.8):
        for kappa in (0.05, 0.5, 0.95):
            beta_a, beta_b = m, 1 - m
            h = solve_h_vector(math.log(kappa), beta_a ** 2, beta_a * beta_b, beta_b ** 2,
                               EPS_GSS_PRECISE)
            assert_allclose(h, solve_h(m, kappa, EPS_GSS_PRECISE), atol=1e-6)


def _shared_state(budget, d=3, horizon=0):
    state = BSGDState.empty(d, budget, shared_models=N_MODELS)
    state.horizon = horizon
    return state


def _naive_from_state(state, lam, gamma, budget, horizon=0, heavy_from=np.inf):
    ref = NaiveSharedBSGD(N_MODELS, budget, lam, gamma, horizon=horizon, heavy_from=heavy_from)
    ref.sv = list(state.support_vectors())
    ref.alpha = [row.copy() for row in state.alpha(lam)]
    ref.rows = [int(i) if i >= 0 else None for i in state.sv_idx[:state.n_sv]]
    ref.t = state.t
    return ref


def _step(state, packed, labels, k, lam, gamma, budget, method, weight=None, heavy_from=np.inf):
    weight = np.ones(len(labels)) if weight is None else weight
    run_pass(state, packed, labels, weight, np.array([k], dtype=np.int64), lam,
             Kernel("rbf", gamma), budget, _kernels.MERGE, METHODS[method], False, load_tables(),
             heavy_from=heavy_from)


@pytest.mark.parametrize("horizon", [0, 80])
def test_each_shared_step_matches_oracle(horizon):
    """Every compiled step of 'gss-precise' equals one oracle step, merges included.

    Halfway lambda drops as in partial_fit, so that old vectors become the
    smallest and their kernel row is computed anew.
    """
    X, labels, order = _problem()
    lam, gamma, budget = 1.0 / 80, 0.5, 6
    packed = PackedData.from_matrix(X)
    state = _shared_state(budget, horizon=horizon)
    for k, i in enumerate(order):
        if k == len(order) // 2:
            state.rescale_lambda(lam, lam / 3)
            lam /= 3
        ref = _naive_from_state(state, lam, gamma, budget, horizon)
        _step(state, packed, labels, i, lam, gamma, budget, "gss-precise")
        ref.step(X[i], labels[i])
        assert state.n_sv == len(ref.sv)
        assert_allclose(state.support_vectors(), np.array(ref.sv).reshape(-1, 3), rtol=1e-6,
                        atol=1e-7)
        assert_allclose(state.alpha(lam), np.array(ref.alpha).reshape(-1, N_MODELS),
                        rtol=1e-6, atol=1e-9)
    assert state.n_sv == budget
    assert state.stats[_kernels.ST_MERGES] > 10


def _rkhs_distance(sv_1, alpha_1, sv_2, alpha_2, gamma):
    """sum over models of ||w_1c - w_2c||^2 from the Gram matrix of both expansions."""
    points = np.vstack([sv_1, sv_2])
    coef = np.vstack([alpha_1, -alpha_2])
    gram = np.exp(-gamma * ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    return float(np.einsum("ic,ij,jc->", coef, gram, coef))


@pytest.mark.parametrize("method", ["lookup-wd", "lookup-h", "gss"])
def test_fast_rankings_merge_nearly_optimally(method):
    """At every merge of the fast methods, the degradation the step really incurs (the
    RKHS distance between the model with the new vector and the merged one) is within 2 %
    of the oracle's best merge over all partners and h."""
    X, labels, order = _problem(seed=4)
    lam, gamma, budget = 1.0 / 80, 0.5, 6
    packed = PackedData.from_matrix(X)
    state = _shared_state(budget)
    merges = 0
    for i in order:
        ref = _naive_from_state(state, lam, gamma, budget)
        ref.budget = 10 ** 9                 # the oracle only adds the new vector
        ref.step(X[i], labels[i])
        before = state.stats[_kernels.ST_MERGES]
        _step(state, packed, labels, i, lam, gamma, budget, method)
        if state.stats[_kernels.ST_MERGES] == before:
            continue
        merges += 1
        ref.budget = budget
        candidates, _ = ref.partner_degradations()
        best = min(value for value, _ in candidates.values())
        incurred = _rkhs_distance(np.array(ref.sv), np.array(ref.alpha), state.support_vectors(),
                                  state.alpha(lam), gamma)
        assert best * (1 - 1e-6) - 1e-12 <= incurred <= best * 1.02 + 1e-12
    assert merges > 10


@pytest.mark.parametrize("bias_scale", [0.0, 0.6])
def test_large_budget_equals_separate_binary_models(bias_scale):
    """Without budget maintenance the shared models are the K binary models of the same
    visiting order: the same decision values, and with an offset trained (``bias_scale``
    = c^2) the same offsets."""
    X, labels, order = _problem(seed=5)
    lam, gamma = 1.0 / 80, 0.5
    packed = PackedData.from_matrix(X)
    shared = _shared_state(len(order), horizon=len(order))
    run_pass(shared, packed, labels, np.ones(len(labels)), order, lam, Kernel("rbf", gamma),
             len(order), _kernels.MERGE, METHODS["lookup-wd"], False, load_tables(),
             bias_scale=bias_scale)
    assert shared.stats[_kernels.ST_MAINTENANCE] == 0
    assert np.all(shared.offset(lam) != 0) == (bias_scale > 0)
    for c in range(N_MODELS):
        y = np.where(labels == c, 1.0, -1.0)
        binary = BSGDState.empty(3, len(order))
        binary.horizon = len(order)
        run_pass(binary, packed, y, np.ones(len(y)), order, lam, Kernel("rbf", gamma),
                 len(order), _kernels.MERGE, METHODS["lookup-wd"], False, load_tables(),
                 bias_scale=bias_scale)
        assert_allclose(shared.offset(lam)[c], binary.offset(lam)[0], rtol=1e-9, atol=1e-15)
        for x in X[:10]:
            ref = NaiveBSGD(0, lam, gamma)
            ref.sv, ref.alpha = list(binary.support_vectors()), list(binary.alpha(lam))
            ours = sum(a[c] * naive.rbf(s, x, gamma)
                       for s, a in zip(shared.support_vectors(), shared.alpha(lam)))
            assert_allclose(ours, ref.decision(x), rtol=1e-9, atol=1e-12)


def test_weighted_steps_scale_the_new_coefficients():
    """A step weight c multiplies the new vector's coefficients, as in the binary kernel,
    a weight above 1 model by model only as far as that model's margin needs."""
    X, labels, order = _problem(seed=6)
    lam, gamma, budget = 1.0 / 80, 0.5, 5
    rng = np.random.default_rng(0)
    weight = rng.uniform(0.2, 3.0, len(labels)) * rng.choice([1.0, 10.0], len(labels))
    heavy_from = float(np.median(weight))
    packed = PackedData.from_matrix(X)
    state = _shared_state(budget)
    capped = 0
    for i in order:
        ref = _naive_from_state(state, lam, gamma, budget, heavy_from=heavy_from)
        _step(state, packed, labels, i, lam, gamma, budget, "gss-precise", weight, heavy_from)
        ref.step(X[i], labels[i], weight[i])
        capped += ref.n_capped
        assert_allclose(state.alpha(lam), np.array(ref.alpha).reshape(-1, N_MODELS),
                        rtol=1e-6, atol=1e-9)
    assert capped > 5


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
def test_blocked_dot_products_follow_the_shared_support_vectors(maintenance, monkeypatch):
    """Dense rows of at least DOT_BLOCK_MIN_FEATURES features take their dot products from
    one BLAS product per block of steps (see test_bsgd_oracle's test of the binary steps):
    a whole run of the shared budget equals the run over CSR rows, whose steps each pass
    over the support vectors, to rounding (the golden section search places h to about
    sqrt(machine epsilon), hence the tolerance)."""
    assert DOT_BLOCK_MIN_FEATURES <= 20 and DOT_BLOCK < 140
    monkeypatch.setattr(_options, "PACKED_DENSE_FROM", np.inf)
    X, labels, order = _problem(seed=5, n=70, d=20)
    lam, gamma, budget = 1.0 / 140, 0.05, 6
    runs = []
    for rows in (X, sp.csr_matrix(X)):
        state = _shared_state(budget, d=20)
        run_pass(state, PackedData.from_matrix(rows), labels, np.ones(len(labels)), order, lam,
                 Kernel("rbf", gamma), budget, MAINTENANCE[maintenance],
                 METHODS["lookup-wd"], False, load_tables())
        runs.append(state)
    blocked, per_step = runs
    assert blocked.stats[_kernels.ST_MAINTENANCE] > 20
    assert blocked.stats[_kernels.ST_MERGES] == per_step.stats[_kernels.ST_MERGES]
    assert_allclose(blocked.support_vectors(), per_step.support_vectors(), rtol=1e-6,
                    atol=1e-7)
    assert_allclose(blocked.alpha(lam), per_step.alpha(lam), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("horizon", [0, 80])
def test_removal_matches_oracle(horizon):
    """Removal of the smallest coefficient vector, a violating row that is already a support
    vector taking the steps into its own coefficients: a whole run agrees to rounding."""
    X, labels, order = _problem(seed=7)
    order = np.concatenate([order, order])          # four passes: rows violate again
    lam, gamma, budget = 1.0 / 80, 0.5, 5
    state = _shared_state(budget, horizon=horizon)
    run_pass(state, PackedData.from_matrix(X), labels, np.ones(len(labels)), order, lam,
             Kernel("rbf", gamma), budget, _kernels.REMOVE, METHODS["lookup-wd"], False,
             load_tables())
    ref = NaiveSharedBSGD(N_MODELS, budget, lam, gamma, horizon=horizon, maintenance="remove")
    own_steps = 0
    for i in order:
        own_steps += i in ref.rows and bool(np.any(
            np.where(np.arange(N_MODELS) == labels[i], 1.0, -1.0) * ref.decision(X[i]) < 1))
        ref.step(X[i], labels[i], row=i)
    assert own_steps > 0 and state.stats[_kernels.ST_MAINTENANCE] > 10
    assert list(state.sv_idx[:state.n_sv]) == ref.rows
    assert_allclose(state.alpha(lam), np.array(ref.alpha), rtol=1e-9, atol=1e-12)
