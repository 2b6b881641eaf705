"""The compiled BSGD steps against the plain NumPy oracle in tests/naive.py."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastsvm import _options
from fastsvm._packed import PackedData
from fastsvm.bsgd import _kernels
from fastsvm.bsgd.solver import (DOT_BLOCK, DOT_BLOCK_MIN_FEATURES, BSGDState, block_dots,
                                  run_pass)
from fastsvm.kernels import Kernel
from fastsvm.merge import METHODS
from fastsvm.merge.table import load_tables

from . import naive
from .naive import NaiveBSGD

MAINTENANCE = {"merge": _kernels.MERGE, "remove": _kernels.REMOVE}


def _problem(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.uniform(size=X.shape) < 0.3] = 0.0  # some zeros, so CSR differs from dense
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    order = np.concatenate([rng.permutation(n), rng.permutation(n)]).astype(np.int64)
    return X, y, order


def _run_compiled(X, y, order, lam, gamma, budget, maintenance, method, diag=False,
                  weight=None, kernel=None, horizon=0):
    kernel = kernel or Kernel("rbf", gamma)
    state = BSGDState.empty(0 if kernel.on_gram else X.shape[1], budget)
    state.horizon = horizon
    weight = np.ones(len(y)) if weight is None else weight
    run_pass(state, PackedData.from_matrix(X), y, weight, order, lam, kernel, budget,
             MAINTENANCE[maintenance], METHODS[method], diag, load_tables())
    return state


def _naive_from_state(state, lam, gamma, budget, maintenance, method, heavy_from=np.inf):
    ref = NaiveBSGD(budget, lam, gamma, method, maintenance, heavy_from=heavy_from)
    ref.sv = list(state.support_vectors())
    ref.alpha = list(state.alpha(lam))
    ref.rows = [int(i) if i >= 0 else None for i in state.sv_idx[:state.n_sv]]
    ref.t = state.t
    return ref


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("layout", ["dense", "csr", "float32"])
@pytest.mark.parametrize("gamma", [0.5, 4.0])
@pytest.mark.usefixtures("csr_loops")
def test_each_sgd_step_matches_oracle(maintenance, method, layout, gamma):
    """Every compiled step, from the compiled state before it, equals one oracle step.

    Step by step rather than over a whole run: precise GSS places h only to
    about sqrt(machine epsilon) (s is flat at its maximum), and later merge
    decisions amplify such differences, so two correct implementations drift
    apart over a long run.  Halfway lambda drops as in partial_fit: the scaled
    coefficients of old vectors then fall below the new vector's, so the merge
    partner search also runs from an old vector (kernel row computed anew).
    """
    X, y, order = _problem()
    dense = X.copy()
    if layout == "csr":
        X = sp.csr_matrix(X)
    elif layout == "float32":
        X = X.astype(np.float32)
        dense = X.astype(np.float64)
    lam, budget = 1.0 / (40 * 2.0), 5
    packed = PackedData.from_matrix(X)
    state = BSGDState.empty(X.shape[1], budget)
    old_smallest = 0
    for k in range(len(order)):
        if k == len(order) // 2:
            state.rescale_lambda(lam, lam / 3)
            lam /= 3
        ref = _naive_from_state(state, lam, gamma, budget, maintenance, method)
        events = state.stats[_kernels.ST_MAINTENANCE]
        smallest_old = np.abs(state.beta[:state.n_sv]).min() if state.n_sv else np.inf
        run_pass(state, packed, y, np.ones(len(y)), order[k:k + 1], lam, Kernel("rbf", gamma),
                 budget, MAINTENANCE[maintenance], METHODS[method], False, load_tables())
        ref.step(dense[order[k]], y[order[k]], row=order[k])
        assert state.t == ref.t == k + 1
        assert state.n_sv == len(ref.sv)
        assert_allclose(state.support_vectors(), np.array(ref.sv).reshape(-1, X.shape[1]),
                        rtol=1e-6, atol=1e-7)  # h is determined to ~sqrt(eps)
        assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-6, atol=1e-9)
        if state.stats[_kernels.ST_MAINTENANCE] > events and smallest_old < 1 - 1e-12:
            old_smallest += 1
    assert state.n_sv == budget
    assert old_smallest > 0
    assert state.stats[_kernels.ST_MAINTENANCE] > 10  # the budget was really exercised
    if maintenance == "remove":
        assert state.stats[_kernels.ST_MERGES] == 0
    else:
        assert state.stats[_kernels.ST_MERGES] > 0


def test_whole_run_with_lookup_h_matches_oracle():
    """Lookup-h has no ill-conditioned search: a whole run agrees to rounding."""
    X, y, order = _problem(seed=2)
    lam, gamma = 1 / 80, 0.5
    state = _run_compiled(X, y, order, lam, gamma, 5, "merge", "lookup-h")
    ref = NaiveBSGD(5, lam, gamma, "lookup-h")
    for i in order:
        ref.step(X[i], y[i], row=i)
    assert_allclose(state.support_vectors(), np.array(ref.sv), rtol=1e-9, atol=1e-12)
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)
    sv, alpha = state.support_vectors(), state.alpha(lam)
    for x in X[:10]:
        ours = sum(a * np.exp(-gamma * np.sum((s - x) ** 2)) for s, a in zip(sv, alpha))
        assert_allclose(ours, ref.decision(x), rtol=1e-9)


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_blocked_dot_products_follow_the_support_vectors_through_a_block(
        maintenance, kernel, monkeypatch):
    """Dense rows of at least DOT_BLOCK_MIN_FEATURES features take their dot products from
    one BLAS product per block of steps; the vectors that steps add and merges create inside
    a block are followed.  A whole run (two epochs of 70 rows, several blocks, a budget of
    5: a maintenance event at most steps) equals the run over CSR rows, whose steps each
    pass over the support vectors, to rounding; and the oracle's."""
    assert DOT_BLOCK_MIN_FEATURES <= 20 and DOT_BLOCK < 140
    monkeypatch.setattr(_options, "PACKED_DENSE_FROM", np.inf)
    X, y, order = _problem(seed=4, n=70, d=20)
    lam, gamma = 1 / 140, 0.05
    kernel = Kernel(kernel, gamma if kernel == "rbf" else None)
    runs = [_run_compiled(layout, y, order, lam, gamma, 5, maintenance, "lookup-h",
                          kernel=kernel) for layout in (X, sp.csr_matrix(X))]
    blocked, per_step = runs
    assert blocked.stats[_kernels.ST_MAINTENANCE] > 20, blocked.stats
    assert blocked.stats[_kernels.ST_MERGES] == per_step.stats[_kernels.ST_MERGES]
    assert_array_equal(blocked.sv_idx[:blocked.n_sv], per_step.sv_idx[:per_step.n_sv])
    assert_allclose(blocked.support_vectors(), per_step.support_vectors(), rtol=1e-9,
                    atol=1e-12)
    assert_allclose(blocked.alpha(lam), per_step.alpha(lam), rtol=1e-9, atol=1e-12)
    if kernel.name == "rbf":
        ref = NaiveBSGD(5, lam, gamma, "lookup-h", maintenance)
        for i in order:
            ref.step(X[i], y[i], row=i)
        assert_allclose(blocked.support_vectors(), np.array(ref.sv), rtol=1e-9, atol=1e-12)
        assert_allclose(blocked.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)


def test_block_dots_fill_the_reused_buffer_at_every_store_size():
    """E of every block is the two plain products, written at the start of the one buffer
    run_pass sizes for the store's capacity, up to a full store."""
    rng = np.random.default_rng(0)
    X, svt = rng.normal(size=(300, 20)), rng.normal(size=(20, 9))
    buffer = np.full(DOT_BLOCK * (svt.shape[1] + 2 * DOT_BLOCK), np.nan)
    for n_sv, b in [(0, DOT_BLOCK), (4, 7), (9, DOT_BLOCK), (9, 1)]:
        rows = rng.integers(0, len(X), size=b)
        E = block_dots(X, rows, svt, n_sv, buffer)
        assert E.shape == (b, n_sv + 2 * b) and E.flags.c_contiguous
        assert np.shares_memory(E, buffer)
        assert_allclose(E[:, :n_sv], X[rows] @ svt[:, :n_sv], rtol=1e-12, atol=1e-12)
        assert_allclose(E[:, n_sv:n_sv + b], X[rows] @ X[rows].T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
def test_linear_decay_steps_match_oracle(maintenance):
    """The linearly decaying steps, run in two chunks, equal the oracle's rho_t steps."""
    X, y, order = _problem(seed=3)
    lam, gamma, horizon = 1 / 80, 0.5, len(order)
    kernel = Kernel("rbf", gamma)
    state = BSGDState.empty(X.shape[1], 5)
    state.horizon = horizon
    for chunk in np.array_split(order, 2):
        run_pass(state, PackedData.from_matrix(X), y, np.ones(len(y)), chunk, lam, kernel, 5,
                 MAINTENANCE[maintenance], METHODS["lookup-h"], False, load_tables())
    ref = NaiveBSGD(5, lam, gamma, "lookup-h", maintenance, horizon=horizon)
    for i in order:
        ref.step(X[i], y[i], row=i)
    assert state.stats[_kernels.ST_MAINTENANCE] > 10
    assert_allclose(state.support_vectors(), np.array(ref.sv), rtol=1e-9, atol=1e-12)
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
@pytest.mark.parametrize("horizon", [0, 80])
def test_trained_offset_matches_oracle(maintenance, horizon):
    """The offset trained as the weight of a constant feature (bias_scale = c^2), run in
    two chunks with lambda changed between them as in partial_fit: the compiled model
    and offset equal the oracle's steps, and the offset changes the path.  Rows of weight
    above 1 bring the margin to 1 with the constant feature's c^2 in k(x, x)."""
    X, y, order = _problem(seed=8)
    y = np.where(X[:, 0] > 0.8, 1.0, -1.0)          # unbalanced: the offset matters
    weight = np.random.default_rng(1).choice([0.5, 1.0, 20.0], size=len(y))
    heavy_from = float(np.median(weight))
    lam, gamma, c2 = 1 / 80, 0.5, 0.3
    state = BSGDState.empty(X.shape[1], 5)
    state.horizon = horizon
    ref = NaiveBSGD(5, lam, gamma, "lookup-h", maintenance, horizon=horizon, bias_scale=c2,
                    heavy_from=heavy_from)
    for half, chunk in enumerate(np.array_split(order, 2)):
        if half:
            state.rescale_lambda(lam, lam / 2)
            lam /= 2
            ref.lam = lam
        run_pass(state, PackedData.from_matrix(X), y, weight, chunk, lam,
                 Kernel("rbf", gamma), 5, MAINTENANCE[maintenance], METHODS["lookup-h"],
                 False, load_tables(), bias_scale=c2, heavy_from=heavy_from)
        for i in chunk:
            ref.step(X[i], y[i], weight[i], row=i)
    assert state.stats[_kernels.ST_MAINTENANCE] > 5 and abs(ref.b) > 0.1
    assert ref.n_capped > 0
    assert_allclose(state.support_vectors(), np.array(ref.sv), rtol=1e-9, atol=1e-12)
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)
    assert_allclose(state.offset(lam), [ref.b], rtol=1e-9)
    state.to_pegasos_steps()                       # as partial_fit after fit: the same model
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)
    assert_allclose(state.offset(lam), [ref.b], rtol=1e-9)
    plain = _run_compiled(X, y, order, lam, gamma, 5, maintenance, "lookup-h", horizon=horizon,
                          weight=weight)
    assert not np.allclose(plain.alpha(lam)[:3], state.alpha(lam)[:3])


def test_trained_offset_is_the_weight_of_a_constant_feature():
    """Without budget maintenance, training the offset with c^2 is training without one on
    the kernel k + c^2: the same coefficients, and b = c^2 sum_j alpha_j."""
    X, y, order = _problem(seed=9)
    y = np.where(X[:, 0] > 0.8, 1.0, -1.0)
    lam, gamma, c2 = 1 / 80, 0.5, 0.7
    gram = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    augmented = _run_compiled(gram + c2, y, order, lam, None, 1000, "remove", "gss",
                              kernel=Kernel("precomputed"), horizon=len(order))
    state = BSGDState.empty(X.shape[1], 1000)
    state.horizon = len(order)
    run_pass(state, PackedData.from_matrix(X), y, np.ones(len(y)), order, lam,
             Kernel("rbf", gamma), 1000, MAINTENANCE["remove"], METHODS["gss"], False,
             load_tables(), bias_scale=c2)
    assert state.stats[_kernels.ST_MAINTENANCE] == 0
    assert np.array_equal(state.sv_idx[:state.n_sv], augmented.sv_idx[:augmented.n_sv])
    assert_allclose(state.alpha(lam), augmented.alpha(lam), rtol=1e-9)
    assert_allclose(state.offset(lam), [c2 * augmented.alpha(lam).sum()], rtol=1e-9)


def test_linear_decay_gives_the_linearly_averaged_weights():
    """Without a budget, the last iterate of the linear-decay steps gives the violation at
    step s the weight 2 (T + 1 - s) / (lambda T (T + 1)) of the linearly weighted average
    sum_t t w_t / sum_t t of Pegasos iterates (checked on explicit Pegasos iterates:
    every violation weighs 1 / (lambda t) in w_t)."""
    X, y, order = _problem(seed=4)
    lam, gamma, T = 1 / 80, 0.5, len(order)
    state = _run_compiled(X, y, order, lam, gamma, 1000, "merge", "gss", horizon=T)
    ref = NaiveBSGD(1000, lam, gamma, horizon=T)
    steps = []                                   # step of each violation
    for t, i in enumerate(order, 1):
        if y[i] * ref.decision(X[i]) < 1:
            steps.append(t)
        ref.step(X[i], y[i], row=i)
    steps = np.array(steps)
    rows = order[steps - 1]
    # a row violating in both passes adds its second step to its own vector
    assert state.n_sv == len(np.unique(rows)) < len(steps)
    assert state.stats[_kernels.ST_MERGES] == 0
    averaged = np.zeros(len(steps))
    for t in range(1, T + 1):                    # w_t of Pegasos on the same violations
        averaged += t * np.where(steps <= t, 1 / (lam * t), 0.0)
    averaged /= T * (T + 1) / 2
    closed_form = 2 * (T + 1 - steps) / (lam * T * (T + 1))
    assert_allclose(averaged, closed_form, rtol=1e-12)
    per_row = np.bincount(rows, closed_form * y[rows], minlength=len(y))
    assert_allclose(state.alpha(lam), per_row[state.sv_idx[:state.n_sv]], rtol=1e-9)
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9)


def test_diagnostics_do_not_change_the_training_path():
    X, y, order = _problem(seed=5)
    plain = _run_compiled(X, y, order, 1 / 80, 0.5, 5, "merge", "gss")
    diag = _run_compiled(X, y, order, 1 / 80, 0.5, 5, "merge", "gss", diag=True)
    assert_allclose(plain.alpha(1 / 80), diag.alpha(1 / 80), rtol=0, atol=0)
    events = diag.stats[_kernels.ST_DIAG_EVENTS]
    assert events == diag.stats[_kernels.ST_MERGES] > 0
    assert 0 <= diag.stats[_kernels.ST_DIAG_EQUAL_GSS_WD] <= events
    # no method's decisions beat the precise optimum
    sums = diag.diag_sums
    assert np.all(sums[:3] >= sums[_kernels.DG_GSS_PRECISE] * (1 - 1e-12))


@pytest.mark.parametrize("maintenance", ["merge", "remove"])
def test_weighted_steps_match_oracle(maintenance):
    """Each step scales its subgradient by the example's weight c_i, weights above 1 only
    as far as the margin needs, and the smallest coefficient need not be the newest one
    (its kernel row is then computed)."""
    X, y, order = _problem(seed=3)
    weight = np.random.default_rng(0).choice([0.25, 1.0, 4.0, 30.0], size=len(y))
    heavy_from = float(np.median(weight))
    lam, gamma, budget = 1 / 80, 0.5, 5
    state = BSGDState.empty(X.shape[1], budget)
    packed = PackedData.from_matrix(X)
    capped = 0
    for k in range(len(order)):
        ref = _naive_from_state(state, lam, gamma, budget, maintenance, "lookup-h", heavy_from)
        run_pass(state, packed, y, weight, order[k:k + 1], lam, Kernel("rbf", gamma), budget,
                 MAINTENANCE[maintenance], METHODS["lookup-h"], False, load_tables(),
                 heavy_from=heavy_from)
        ref.step(X[order[k]], y[order[k]], weight[order[k]], row=order[k])
        capped += ref.n_capped
        assert_allclose(state.support_vectors(), np.array(ref.sv).reshape(-1, X.shape[1]),
                        rtol=1e-9, atol=1e-12)
        assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)
    assert state.stats[_kernels.ST_MAINTENANCE] > 10
    assert capped > 5


KERNELS = {
    "linear": (Kernel("linear"), lambda x, z: float(np.dot(x, z))),
    "poly": (Kernel("poly", 0.5, 2, 1.0), lambda x, z: naive.poly(x, z, 0.5, 2, 1.0)),
    "sigmoid": (Kernel("sigmoid", 0.3, 3, -0.5), lambda x, z: naive.sigmoid(x, z, 0.3, -0.5)),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.usefixtures("csr_loops")
def test_other_kernels_with_removal_match_oracle(name, layout):
    kernel, function = KERNELS[name]
    X, y, order = _problem(seed=4)
    weight = np.random.default_rng(2).choice([0.5, 1.0, 20.0, 1000.0], size=len(y))
    lam, budget = 1 / 80, 5
    state = _run_compiled(sp.csr_matrix(X) if layout == "csr" else X, y, order, lam, None,
                          budget, "remove", "gss", kernel=kernel, weight=weight)
    ref = NaiveBSGD(budget, lam, None, "gss", "remove", kernel=function,
                    heavy_from=naive.heavy_threshold(weight))     # run_pass's, as the library's
    for i in order:
        ref.step(X[i], y[i], weight[i], row=i)
    assert_allclose(state.support_vectors(), np.array(ref.sv), rtol=0, atol=0)
    assert_allclose(state.alpha(lam), ref.alpha, rtol=1e-9, atol=1e-12)
    assert state.stats[_kernels.ST_MAINTENANCE] > 10


def test_kernel_matrix_lookup_equals_the_kernel_from_features():
    """kernel code PRECOMPUTED looks k up in the matrix: the same model as computing it."""
    X, y, order = _problem(seed=6)
    lam, gamma = 1 / 80, 0.5
    gram = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    looked_up = _run_compiled(gram, y, order, lam, None, 5, "remove", "gss",
                              kernel=Kernel("precomputed"))
    computed = _run_compiled(X, y, order, lam, gamma, 5, "remove", "gss")
    assert_allclose(looked_up.alpha(lam), computed.alpha(lam), rtol=1e-9)
    assert np.array_equal(looked_up.sv_idx[:5], computed.sv_idx[:5])
    assert_allclose(X[looked_up.sv_idx[:5]], computed.support_vectors())
