"""MarginSGDSVC (Orchel & Suykens): the one pass against the NumPy oracle, the validated
offset, the estimator, bad input and accuracy floors on real data."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics.pairwise import rbf_kernel

from fastsvm import MarginSGDSVC, _options
from fastsvm.datasets import load_dataset
from fastsvm.kernels import Kernel, row_sq_norms
from fastsvm.margin_sgd.solver import (_class_copies, accuracy_offset, draw_order, expansion,
                                       expected_out_of_bag, first_copies, out_of_bag, pass_rows,
                                       run_pass)
from fastsvm.margin_sgd._kernels import CONSTANT, SQUARED_HINGE, decide_block
from fastsvm.multiclass import TargetRows, ovo_pairs, ovo_scores

from . import naive


def _problem(n=150, d=5, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < (0.5 if sparse else 1.0))
    y = np.where(np.sin(X[:, 0]) + X[:, 1] > 0, 1.0, -1.0)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("update", ["squared-hinge", "constant"])
@pytest.mark.parametrize("sampling", ["replacement", "permutation"])
@pytest.mark.parametrize("sparse, dense_from", [(False, 0.05), (True, 0.0), (True, 1.01)])
@pytest.mark.parametrize("M, C", [(0.5, np.inf), (1.0, np.inf), (3.0, np.inf), (3.0, 0.6)])
def test_one_pass_matches_oracle(monkeypatch, update, sampling, sparse, dense_from, M, C):
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)   # several blocks and storage growth
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)   # BLAS or sparse rows
    X, y = _problem(sparse=sparse)
    order = draw_order(np.arange(len(y)), sampling, np.random.default_rng(1))
    result = run_pass(X, row_sq_norms(X), y[None], np.ones(len(y)), Kernel("rbf", 0.3), M, C,
                      update, order)
    alpha = naive.margin_sgd_pass(X, y, order, 0.3, M, update, C=C)
    got = np.zeros(len(y))
    got[result.support] = y[result.support] * result.dual[0]
    assert_allclose(got, alpha, rtol=1e-10, atol=1e-12)
    # each coefficient set at most once: every support vector appears once, at its first draw
    assert len(np.unique(result.support)) == len(result.support)
    first = {i: k for k, i in reversed(list(enumerate(order)))}
    assert_array_equal(np.argsort([first[i] for i in result.support]), np.arange(len(result.support)))
    assert result.n_visited == len(np.unique(order))
    dense = X.toarray() if sparse else X
    # dense rows keep the support vectors as columns; sparse rows keep only their indices
    assert_array_equal(result.svt.T, dense[result.support] if dense_from < 1 else
                       np.empty((len(result.support), 0)))
    if sampling == "permutation":
        assert result.n_visited == len(y)




@pytest.mark.parametrize("C", [0.4, 1.0, np.inf])
def test_capped_rule_is_the_first_epoch_of_dual_coordinate_descent(C):
    """With the Gaussian kernel (k(x, x) = 1) and M above every margin, rule (6) capped at C
    is the first epoch of dual coordinate descent on the SVM dual without offset, box C."""
    X, y = _problem(n=120, seed=5)
    order = np.random.default_rng(3).permutation(len(y)).astype(np.int64)
    result = run_pass(X, row_sq_norms(X), y[None], np.ones(len(y)), Kernel("rbf", 0.5), 1e9, C,
                      "squared-hinge", order)
    got = np.zeros(len(y))
    got[result.support] = y[result.support] * result.dual[0]
    values, vectors = np.linalg.eigh(rbf_kernel(X, gamma=0.5))
    features = vectors * np.sqrt(np.maximum(values, 0.0))       # K = features features^T
    want = np.zeros(len(y))
    naive.dcd_epoch(features, y, 0.0, np.full(len(y), C), order, want, np.zeros(len(y) + 1))
    assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    assert (want.max() == C) is np.isfinite(C)       # the cap binds where there is one


@pytest.mark.parametrize("sparse, dense_from", [(False, 0.05), (True, 0.0), (True, 1.01)])
def test_problems_sharing_a_pass_match_their_own_passes(monkeypatch, sparse, dense_from):
    """One pass for three one-vs-rest problems gives each the coefficients of its own pass;
    support vectors of several problems are stored once, in the order first added."""
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)
    X, _ = _problem(sparse=sparse)
    dense = X.toarray() if sparse else X
    labels = np.digitize(dense[:, 0] + dense[:, 1] ** 2, [-0.3, 0.8])
    Y = np.where(labels[None] == np.arange(3)[:, None], 1.0, -1.0)
    weight = np.random.default_rng(2).choice([0.5, 1.0, 2.0], size=len(labels))
    order = draw_order(np.arange(len(labels)), "replacement", np.random.default_rng(1))
    kernel = Kernel("rbf", 0.3)
    shared = run_pass(X, row_sq_norms(X), Y, weight, kernel, 0.8, 1.0, "squared-hinge", order)
    assert len(np.unique(shared.support)) == len(shared.support) < 3 * len(labels)
    assert shared.n_visited == len(np.unique(order))
    for o, y in enumerate(Y):
        own = run_pass(X, row_sq_norms(X), y[None], weight, kernel, 0.8, 1.0, "squared-hinge",
                       order)
        mine = shared.dual[o] != 0
        assert_array_equal(shared.support[mine], own.support)
        assert_allclose(shared.dual[o, mine], own.dual[0], rtol=1e-10, atol=1e-12)
    assert_array_equal(shared.n_support, np.count_nonzero(shared.dual, axis=1))
    assert np.all(np.any(shared.dual != 0, axis=0))             # every stored vector is used

@pytest.mark.parametrize("data", ["dense", "sparse-blas", "sparse", "gram"])
@pytest.mark.parametrize("with_copies", [False, True])
def test_one_vs_one_pairs_sharing_a_pass_match_their_own_passes(monkeypatch, data, with_copies):
    """One pass for the six one-vs-one pairs of four classes gives each pair the model of a
    binary pass over its own classes' draws, in the same order; a vector keeps coefficients
    in its class's three pairs only; copies are joined within a class."""
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", 1.01 if data == "sparse" else 0.0)
    X, _ = _problem(n=160, sparse=data.startswith("sparse"))
    dense = X.toarray() if sp.issparse(X) else X
    labels = np.digitize(dense[:, 0] + dense[:, 1] ** 2, [-0.5, 0.3, 1.2])
    if with_copies:         # rows 0-19 again, half of them under another class
        X = sp.vstack([X, X[:20]]).tocsr() if sp.issparse(X) else np.vstack([X, X[:20]])
        dense = np.vstack([dense, dense[:20]])
        labels = np.concatenate([labels, np.where(np.arange(20) % 2, labels[:20],
                                                  (labels[:20] + 1) % 4)])
    X_sq, kernel = row_sq_norms(X), Kernel("rbf", 0.3)
    if data == "gram":
        X, kernel = rbf_kernel(dense, gamma=0.3), Kernel("precomputed")
    copies = first_copies(X) if with_copies and data != "gram" else None
    weight = np.random.default_rng(2).choice([0.5, 1.0, 2.0], size=len(labels))
    order = draw_order(np.arange(len(labels)), "replacement", np.random.default_rng(1))
    shared = run_pass(X, X_sq, TargetRows(labels, 4, "ovo"), weight, kernel, 0.8, 1.0,
                      "squared-hinge", order, copies=copies)
    dual = shared.model_dual()
    assert dual.shape == (6, len(shared.support)) and shared.dual.shape[0] == 3
    assert_array_equal(np.count_nonzero(dual, axis=0) <= 3, True)
    assert_array_equal(shared.n_support, np.count_nonzero(dual, axis=1))
    rows = np.arange(len(labels))
    decision = expansion(X, X_sq, rows, shared.svt, shared.sv_sq, shared.support, shared.dual,
                         kernel, shared.pairs)
    for p, (i, j) in enumerate(ovo_pairs(4)):
        y = np.where(labels == j, 1.0, -1.0)
        own = run_pass(X, X_sq, y[None], weight, kernel, 0.8, 1.0, "squared-hinge",
                       order[np.isin(labels[order], (i, j))],
                       copies=None if copies is None else _class_copies(copies, labels, 4))
        mine = dual[p] != 0
        assert_array_equal(shared.support[mine], own.support)
        assert_allclose(dual[p, mine], own.dual[0], rtol=1e-10, atol=1e-12)
        assert_allclose(decision[:, p], expansion(X, X_sq, rows, own.svt, own.sv_sq, own.support,
                                                  own.dual, kernel)[:, 0],
                        rtol=1e-10, atol=1e-12)
        assert set(labels[shared.support[mine]]) <= {i, j}


KERNELS = {
    "poly": (Kernel("poly", 0.3, 2, 1.0), lambda a, b: naive.poly(a, b, 0.3, 2, 1.0)),
    "linear": (Kernel("linear"), lambda a, b: float(np.dot(a, b))),
    "sigmoid": (Kernel("sigmoid", 0.2, 3, 0.0), lambda a, b: naive.sigmoid(a, b, 0.2, 0.0)),
    "precomputed": (Kernel("precomputed"), lambda a, b: naive.rbf(a, b, 0.3)),
}


@pytest.mark.parametrize("M", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("C", [0.4, np.inf])
@pytest.mark.parametrize("rule", [SQUARED_HINGE, CONSTANT])
def test_block_decisions_follow_the_update_rule_at_every_margin(M, C, rule):
    """decide_block against the rule written out point by point: with the margin m of a
    point under the model so far (its earlier block points included), alpha = c min(C,
    max(0, 1 - m)) (squared hinge) or c min(C, 1) (constant) if m <= M, else 0.  M = 0
    with margins exactly 0 (the first point of an empty model) and M = 2 with margins in
    (1, 2] (where the squared hinge's 1 - m is negative) are the edges."""
    rng = np.random.default_rng(int(10 * M) + (C == np.inf) + 7 * rule)
    n, n_problems = 12, 3
    f_before = rng.choice([0.0, 0.0, 0.5, 1.0, 1.5, 1.9, -0.7], size=(n, n_problems))
    X = rng.standard_normal((n, 2))
    K = rbf_kernel(X, gamma=0.01)                   # wide: earlier points move f little
    targets = rng.choice([-1.0, 0.0, 1.0], size=(n_problems, n))
    weight = rng.choice([0.5, 1.0, 2.0], size=n)
    alpha = np.full((n_problems, n), np.nan)
    decide_block(f_before, K, targets, weight, M, C, rule, alpha)
    for o in range(n_problems):
        want = np.zeros(n)
        for j in range(n):
            if targets[o, j] == 0.0:
                continue
            f = f_before[j, o] + sum(targets[o, i] * want[i] * K[j, i] for i in range(j))
            m = targets[o, j] * f
            if m <= M:
                want[j] = weight[j] * min(C, max(0.0, 1.0 - m) if rule == SQUARED_HINGE else 1.0)
        assert_allclose(alpha[o], want, rtol=1e-12, atol=1e-15)
        assert np.all(alpha[o] >= 0.0)
    empty = np.full((1, 2), np.nan)         # margins exactly 0: an empty model starts
    decide_block(np.zeros((2, 1)), np.eye(2), np.ones((1, 2)), np.ones(2), M, C, rule, empty)
    assert_array_equal(empty, [[min(C, 1.0)] * 2])


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse, dense_from", [(False, 0.05), (True, 0.05), (True, 1.01)])
def test_one_pass_with_weights_and_other_kernels_matches_oracle(monkeypatch, name, weighted,
                                                                sparse, dense_from):
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)
    X, y = _problem(sparse=sparse)
    kernel, function = KERNELS[name]
    weight = (np.random.default_rng(2).choice([0.3, 1.0, 2.5], size=len(y)) if weighted
              else np.ones(len(y)))
    dense = X.toarray() if sparse else X
    data = (np.array([[function(a, b) for b in dense] for a in dense]) if kernel.on_gram
            else X)
    order = draw_order(np.arange(len(y)), "replacement", np.random.default_rng(1))
    result = run_pass(data, row_sq_norms(X), y[None], weight, kernel, 0.8, 0.9, "squared-hinge",
                      order)
    alpha = naive.margin_sgd_pass(X, y, order, None, 0.8, "squared-hinge", weight, function,
                                  C=0.9)
    got = np.zeros(len(y))
    got[result.support] = y[result.support] * result.dual[0]
    assert_allclose(got, alpha, rtol=1e-10, atol=1e-12)
    rows = np.arange(0, len(y), 5)
    want = np.array([[function(a, b) for b in dense[result.support]] for a in dense[rows]])
    assert_allclose(expansion(data, row_sq_norms(X), rows, result.svt, result.sv_sq,
                              result.support, result.dual, kernel)[:, 0],
                    want @ result.dual[0], rtol=1e-10, atol=1e-12)


def test_replacement_draws_about_63_percent():
    order = draw_order(np.arange(100_000), "replacement", np.random.default_rng(0))
    assert abs(len(np.unique(order)) / 100_000 - (1 - np.exp(-1))) < 0.01


# ---------------------------------------------------------------- offset and expansion
def test_accuracy_offset_matches_brute_force(monkeypatch):
    monkeypatch.setattr(_options, "MARGIN_SGD_OFFSET_MIN_GAIN", 0.0)
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(20, 200))
        y = np.where(rng.random(n) < rng.uniform(0.2, 0.8), 1.0, -1.0)
        f = np.round(y * rng.uniform(0, 2) + rng.normal(size=n) - rng.normal() * 2, 1)  # ties
        b = accuracy_offset(f, y)
        best = naive.accuracy_offset(f, y)
        accuracy = np.mean(np.where(f + b > 0, 1.0, -1.0) == y)
        assert accuracy in (np.mean(np.where(f + best > 0, 1.0, -1.0) == y),
                            np.mean(np.where(f > 0, 1.0, -1.0) == y))
        if b != 0.0:        # kept: the brute-force optimum
            assert b == pytest.approx(best)


def test_weighted_accuracy_offset_matches_brute_force(monkeypatch):
    monkeypatch.setattr(_options, "MARGIN_SGD_OFFSET_MIN_GAIN", 0.0)
    rng = np.random.default_rng(4)
    for trial in range(30):
        n = int(rng.integers(20, 200))
        y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
        weight = np.where(y > 0, rng.uniform(1, 4), 1.0) * rng.uniform(0.5, 1.5, n)
        f = np.round(y * rng.uniform(0, 2) + rng.normal(size=n) - rng.normal() * 2, 1)
        b = accuracy_offset(f, y, weight)
        best = naive.accuracy_offset(f, y, weight)
        score = lambda c: np.average(np.where(f + c > 0, 1.0, -1.0) == y, weights=weight)  # noqa: E731
        assert score(b) in (pytest.approx(score(best)), score(0.0))
        if b != 0.0:
            assert b == pytest.approx(best)


def test_accuracy_offset_repairs_a_shift_and_ignores_noise():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(1000) < 0.3, 1.0, -1.0)
    f = 0.5 * y - 2.0                                   # all negative: offset 2 fixes every error
    b = accuracy_offset(f, y)
    assert np.all(np.where(f + b > 0, 1.0, -1.0) == y) and 1.5 < b < 2.5
    noise = rng.normal(size=1000)                       # f unrelated to y: no offset earns its keep
    assert accuracy_offset(noise * 1e-3, np.sign(rng.normal(size=1000))) == 0.0
    assert accuracy_offset(f, np.ones(1000)) == 0.0     # one class only
    # a tiny gain (5 of 1000 rows, below _options.MARGIN_SGD_OFFSET_MIN_GAIN) is refused
    f = np.where(y > 0, 1.0, -1.0)
    f[:5] = -0.01
    y[:5] = 1.0
    assert accuracy_offset(f, y) == 0.0


@pytest.mark.parametrize("sparse, dense_from", [(False, 0.05), (True, 0.0), (True, 1.01)])
def test_expansion_matches_kernel_sum(monkeypatch, sparse, dense_from):
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)
    X, y = _problem(sparse=sparse)
    result = run_pass(X, row_sq_norms(X), y[None], np.ones(len(y)), Kernel("rbf", 0.3), 1.0,
                      np.inf, "squared-hinge",
                      draw_order(np.arange(len(y)), "permutation", np.random.default_rng(0)))
    rows = np.arange(0, len(y), 3)
    dense = X.toarray() if sparse else X
    want = rbf_kernel(dense[rows], dense[result.support], gamma=0.3) @ result.dual[0]
    dual = np.vstack([result.dual, -2.0 * result.dual])             # two models at once
    got = expansion(X, row_sq_norms(X), rows, result.svt, result.sv_sq, result.support, dual,
                    Kernel("rbf", 0.3))
    assert_allclose(got, np.column_stack([want, -2.0 * want]), rtol=1e-10, atol=1e-12)


def _with_copies(sparse, seed=0):
    """Rows of ``_problem`` drawn with repeats (some copies with the other label), and the
    first row equal to each, by brute force."""
    X, y = _problem(n=40, seed=seed, sparse=sparse)
    pick = np.random.default_rng(seed).integers(0, 40, size=300)
    y = y[pick]
    y[::37] *= -1.0
    X = X[pick]
    dense = X.toarray() if sparse else X
    return X, y, np.array([np.flatnonzero(np.all(dense == row, axis=1))[0] for row in dense])


@pytest.mark.parametrize("sparse", [False, True])
def test_first_copies_name_the_first_equal_row(sparse):
    X, _, first = _with_copies(sparse)
    assert_array_equal(first_copies(X), first)
    assert_array_equal(first_copies(X[:1]), [0])
    distinct = np.random.default_rng(1).normal(size=(50, 3))
    assert_array_equal(first_copies(distinct), np.arange(50))


@pytest.mark.parametrize("update", ["squared-hinge", "constant"])
@pytest.mark.parametrize("sparse, dense_from", [(False, 0.05), (True, 0.0), (True, 1.01)])
def test_copies_of_a_row_are_one_support_vector(monkeypatch, update, sparse, dense_from):
    """Joined copies give every decision of the oracle's pass, which stores them apart: each
    row's coefficient is the sum of its copies' y alpha, each row is stored once, and a row
    whose copies cancel is not stored."""
    monkeypatch.setattr(_options, "MARGIN_SGD_BLOCK", 16)
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_FROM", dense_from)
    X, y, first = _with_copies(sparse)
    order = draw_order(np.arange(len(y)), "permutation", np.random.default_rng(1))
    result = run_pass(X, row_sq_norms(X), y[None], np.ones(len(y)), Kernel("rbf", 0.3), 0.9,
                      1.0, update, order, copies=first_copies(X))
    alpha = naive.margin_sgd_pass(X, y, order, 0.3, 0.9, update, C=1.0)
    want = np.bincount(first, weights=y * alpha, minlength=len(y))
    got = np.zeros(len(y))
    got[first[result.support]] = result.dual[0]
    assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert len(np.unique(first[result.support])) == len(result.support) <= 40
    assert np.all(result.dual[0] != 0)
    assert np.count_nonzero(alpha) > 60             # the oracle stores many more
    assert np.any(np.abs(want) > 1.0)               # a joined coefficient can exceed C


def test_copies_whose_coefficients_cancel_are_dropped():
    X, y = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]), np.array([1.0, -1.0, 1.0])
    order = np.arange(3, dtype=np.int64)
    kept = run_pass(X, row_sq_norms(X), y[None], np.ones(3), Kernel("rbf", 0.3), 5.0, 1.0,
                    "constant", order)
    joined = run_pass(X, row_sq_norms(X), y[None], np.ones(3), Kernel("rbf", 0.3), 5.0, 1.0,
                      "constant", order, copies=first_copies(X))
    assert_array_equal(kept.dual, [[1.0, -1.0, 1.0]])
    assert_array_equal(joined.support, [2])
    assert_array_equal(joined.dual, [[1.0]])
    assert joined.svt.shape == (2, 1) and joined.n_visited == 3


def test_estimator_joins_copies_into_the_same_decision_function(monkeypatch):
    """On 10 distinct rows repeated 400 times the model has at most 10 support vectors
    (3,000 before copies were joined) and the decision function of the unjoined pass."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 4))[rng.integers(0, 10, size=4000)]
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    joined = MarginSGDSVC(random_state=0).fit(X, y)
    assert len(joined.support_) <= 10
    assert len(np.unique(joined.support_vectors_, axis=0)) == len(joined.support_)
    from fastsvm.margin_sgd import estimator

    def unjoined(*args):                # the same passes, copies stored apart
        return run_pass(*args[:-1], copies=None)

    monkeypatch.setattr(estimator, "run_pass", unjoined)
    apart = MarginSGDSVC(random_state=0).fit(X, y)
    assert len(apart.support_) > 100
    assert_allclose(joined.decision_function(X), apart.decision_function(X), rtol=1e-9,
                    atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sampling", ["permutation", "replacement"])
def test_distinct_rows_skip_joining_copies_with_the_same_model(monkeypatch, n_classes,
                                                               sampling):
    """Rows all distinct: the passes get copies=None and fit the model that the identity map
    of copies gives (every row its own first copy)."""
    from sklearn.datasets import make_classification

    from fastsvm.margin_sgd import estimator
    X, y = make_classification(300, 6, n_informative=4, n_classes=n_classes, random_state=0)
    seen = []

    def spy(*args, **kwargs):
        seen.append(args[-1])
        return run_pass(*args, **kwargs)

    monkeypatch.setattr(estimator, "run_pass", spy)
    skipped = MarginSGDSVC(sampling=sampling, random_state=0).fit(X, y)
    assert seen and all(copies is None for copies in seen)
    identity = np.arange(len(y), dtype=np.int64)

    def joined(*args):
        return run_pass(*args[:-1], copies=identity)

    monkeypatch.setattr(estimator, "run_pass", joined)
    kept = MarginSGDSVC(sampling=sampling, random_state=0).fit(X, y)
    assert_array_equal(skipped.support_, kept.support_)
    assert_array_equal(skipped.dual_coef_, kept.dual_coef_)
    assert_array_equal(skipped.intercept_, kept.intercept_)
    assert skipped.training_info_["candidates"] == kept.training_info_["candidates"]


def test_copies_of_a_row_validate_on_no_side_they_were_trained_on():
    """Held-out rows and out-of-bag rows are whole groups of copies: a copy of a visited
    row would validate nothing."""
    X, y, first = _with_copies(False)
    copies = first_copies(X)
    rng = np.random.RandomState(0)
    y_enc = (y > 0).astype(np.intp)
    pool = np.arange(len(y), dtype=np.int64)
    rows, held = MarginSGDSVC(validation_fraction=0.3)._split(pool, y_enc, "permutation", rng,
                                                             copies)
    assert not set(first[rows]) & set(first[held])
    assert_array_equal(np.sort(np.concatenate([rows, held])), pool)
    assert 0.2 < len(np.unique(first[held])) / len(np.unique(first)) < 0.4
    order = draw_order(pool, "replacement", np.random.default_rng(0))
    val = out_of_bag(pool, order, copies)
    want = [i for i in pool if not np.isin(first[i], first[order])]
    assert_array_equal(val, want)
    assert 0 < len(val) < len(np.setdiff1d(pool, order))


def test_duplicated_rows_do_not_inflate_the_validation_accuracy():
    """Each row five times, noisy labels: the hold-out had copies of the pass's rows, every
    narrow kernel scored 100 % and the reported validation accuracy was 1.0."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, n_features=10, n_informative=6, flip_y=0.05,
                               n_clusters_per_class=3, random_state=1)
    repeat = np.random.default_rng(1).permutation(np.tile(np.arange(len(y)), 5))
    clf = MarginSGDSVC(random_state=0).fit(X[repeat], y[repeat])
    assert clf.training_info_["sampling"] == "permutation"
    assert clf.training_info_["validation_accuracy"] < 0.97


# ---------------------------------------------------------------- the estimator
def _labels(n=400, seed=0, n_classes=2):
    X, _ = _problem(n=n, seed=seed)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2, np.quantile(X[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, np.array(["cat", "dog", "eel", "fox"])[y]


@pytest.mark.parametrize("multi_class, n_classes", [("auto", 3), ("ovr", 3), ("auto", 4)])
def test_fitted_model_is_its_kernel_expansion(multi_class, n_classes):
    """The binary models are kernel expansions: one per class (one-vs-rest) or per pair of
    classes (one-vs-one, 'auto' up to 30 classes), whose votes decide, as SVC's."""
    X, y = _labels(n_classes=n_classes)
    clf = MarginSGDSVC(multi_class=multi_class, random_state=0).fit(X, y)
    assert_array_equal(clf.support_vectors_, X[clf.support_])
    want = rbf_kernel(X, clf.support_vectors_, gamma=clf.gamma_) @ clf.dual_coef_.T + clf.intercept_
    split = "ovr" if multi_class == "ovr" else "ovo"
    assert clf.training_info_["multi_class"] == split
    n_models = n_classes if split == "ovr" else n_classes * (n_classes - 1) // 2
    assert want.shape == (len(y), n_models) and clf.n_support_.shape == (n_models,)
    assert_allclose(clf.decision_function(X),
                    want if split == "ovr" else ovo_scores(want, n_classes),
                    rtol=1e-9, atol=1e-12)
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert list(clf.classes_) == ["cat", "dog", "eel", "fox"][:n_classes]
    assert np.all(clf.n_support_ > 0)
    assert np.all((clf.dual_coef_ != 0).sum(axis=1) == clf.n_support_)
    if split == "ovo":      # a pair's vectors are rows of its two classes
        encoded = np.searchsorted(clf.classes_, y[clf.support_])
        for p, pair in enumerate(ovo_pairs(n_classes)):
            assert set(encoded[clf.dual_coef_[p] != 0]) <= set(pair)
    info = clf.training_info_
    assert info["n_repeats"] == 5                       # 400 rows: 147 out of bag
    assert info["n_passes"] == 27 * 5 and len(info["candidates"]) == 27
    scores = [c["validation_accuracy"] for c in info["candidates"]]
    best = info["candidates"][int(np.argmax(scores))]       # the first of the most accurate
    assert (clf.gamma_, clf.M_, info["validation_accuracy"]) == (best["gamma"], best["M"],
                                                                 max(scores))


def _halving_oracle(info, n, first, n_candidates=27):
    """The successive-halving schedule in plain Python: rows double from ``first`` and the
    best third (ties: the first listed) survives, until one survivor or all n rows."""
    rounds, start, size, alive = [], 0, first, n_candidates
    while True:
        rounds.append((size, alive))
        scores = info["candidates"][start:start + alive]
        start += alive
        if size == n:
            return rounds, scores
        keep = sorted(range(alive), key=lambda k: -scores[k]["validation_accuracy"])
        survivors = [(scores[k]["gamma"], scores[k]["M"]) for k in keep[:-(-alive // 3)]]
        nxt = info["candidates"][start:start + len(survivors)]
        assert [(c["gamma"], c["M"]) for c in nxt] == survivors
        alive = len(survivors)
        size = n if alive == 1 else min(n, 2 * size)


@pytest.mark.parametrize("sampling", ["replacement", "permutation"])
def test_successive_halving_schedule(sampling):
    X, y = _labels(n=1000, n_classes=3)
    clf = MarginSGDSVC(tune_size=150, sampling=sampling, random_state=0).fit(X, y)
    info = clf.training_info_
    rounds, last = _halving_oracle(info, 1000, 150)
    assert rounds == [(150, 27), (300, 9), (600, 3), (1000, 1)]
    assert [c["n_rows"] for c in info["candidates"]] == [m for m, k in rounds for _ in range(k)]
    repeats = {"replacement": 3, "permutation": 5}[sampling]      # 368 or 200 held out
    assert info["n_repeats"] == repeats
    assert info["n_passes"] == 40 * repeats and len(info["candidates"]) == 40
    # the model is the pass over all rows
    assert (clf.gamma_, clf.M_, info["validation_accuracy"]) == (
        last[0]["gamma"], last[0]["M"], last[0]["validation_accuracy"])
    assert info["n_visited"] > (500 if sampling == "replacement" else 700)
    # deterministic given random_state, and another seed draws other subsamples
    again = MarginSGDSVC(tune_size=150, sampling=sampling, random_state=0).fit(X, y)
    assert again.training_info_["candidates"] == info["candidates"]
    assert_array_equal(again.support_, clf.support_)
    assert_array_equal(again.dual_coef_, clf.dual_coef_)
    other = MarginSGDSVC(tune_size=150, sampling=sampling, random_state=1).fit(X, y)
    assert other.training_info_["candidates"] != info["candidates"]


def test_repeated_passes_rank_candidates_by_their_mean():
    """n_repeats passes per candidate, each on its own split: a candidate scores their mean
    validation accuracy and its most accurate pass is its model; 'auto' repeats until
    about 1,000 validation rows rank the candidates (at most 5 passes), once from 5,000
    rows (1,000 held out)."""
    X, y = _labels(n=600)
    clf = MarginSGDSVC(gamma_grid=[0.1, 1.0], n_repeats=3, random_state=0).fit(X, y)
    info = clf.training_info_
    assert info["n_repeats"] == 3 and info["n_passes"] == 3 * 6
    for c in info["candidates"]:
        assert len(c["pass_accuracies"]) == 3
        assert c["validation_accuracy"] == pytest.approx(np.mean(c["pass_accuracies"]))
    chosen = max(info["candidates"], key=lambda c: c["validation_accuracy"])
    assert (clf.gamma_, clf.M_) == (chosen["gamma"], chosen["M"])
    assert info["validation_accuracy"] == chosen["validation_accuracy"]
    assert clf.n_support_.sum() == chosen["n_support"]           # its own pass's model
    # each pass holds out its own 120 rows, so a candidate's passes score differently
    assert any(len(set(c["pass_accuracies"])) > 1 for c in info["candidates"])
    one = MarginSGDSVC(gamma_grid=[0.1, 1.0], n_repeats=1, random_state=0).fit(X, y)
    assert one.training_info_["n_passes"] == 6
    assert all(len(c["pass_accuracies"]) == 1 for c in one.training_info_["candidates"])
    est = MarginSGDSVC()
    assert [est._repeats(n, "permutation") for n in (400, 600, 2500, 4990, 5000, 100_000)] == \
        [5, 5, 2, 2, 1, 1]
    assert est._repeats(1000, "replacement") == 3              # 368 rows out of bag
    assert MarginSGDSVC(validation_fraction=0.5)._repeats(600, "permutation") == 4


def test_tune_size_none_is_the_papers_procedure():
    """Every candidate passes over all rows and the best pass is the model; so does a
    tune_size of n or more, and a single candidate never tunes."""
    X, y = _labels(n=600)
    paper = MarginSGDSVC(tune_size=None, random_state=3).fit(X, y)
    assert [c["n_rows"] for c in paper.training_info_["candidates"]] == [600] * 27
    big = MarginSGDSVC(tune_size=600, random_state=3).fit(X, y)
    assert big.training_info_["candidates"] == paper.training_info_["candidates"]
    assert_array_equal(big.dual_coef_, paper.dual_coef_)
    one = MarginSGDSVC(gamma=0.3, M=0.5, tune_size=100, random_state=3).fit(X, y)
    assert [c["n_rows"] for c in one.training_info_["candidates"]] == [600]


def test_validation_rows():
    X, y = _labels(n=500)
    clf = MarginSGDSVC(M=0.5, gamma=0.3, sampling="replacement", random_state=0).fit(X, y)
    # replacement: the rows never drawn, about 37 %
    assert abs(clf.training_info_["n_validation"] / 500 - np.exp(-1)) < 0.06
    assert clf.training_info_["n_passes"] == 5 and clf.M_ == 0.5 and clf.gamma_ == 0.3
    clf = MarginSGDSVC(M=0.5, gamma=0.3, sampling="permutation", validation_fraction=0.3,
                       random_state=0).fit(X, y)
    assert clf.training_info_["n_validation"] == 150
    assert clf.training_info_["n_visited"] == 350


def test_auto_sampling_permutes_when_the_hold_out_has_100_rows():
    for n, sampling in ((495, "replacement"), (500, "permutation")):
        X, y = _labels(n=n)
        info = MarginSGDSVC(M=0.5, gamma=0.3, random_state=0).fit(X, y).training_info_
        assert info["sampling"] == sampling
        if sampling == "permutation":
            assert info["n_validation"] == 100 and info["n_visited"] == 400
        else:
            assert abs(info["n_validation"] / n - np.exp(-1)) < 0.06
    X, y = _labels(n=600)
    info = MarginSGDSVC(M=0.5, gamma=0.3, validation_fraction=0.1, random_state=0).fit(X, y)
    assert info.training_info_["sampling"] == "replacement"


def _few_distinct_rows():
    """300 rows of 4 binary features (16 distinct rows), labelled by their sum >= 2."""
    X = np.random.RandomState(0).randint(0, 2, size=(300, 4)).astype(float)
    return X, (X.sum(axis=1) >= 2).astype(int)


def test_expected_out_of_bag_matches_the_draws():
    """sum over groups of copies of g (1 - g/n)^n against the mean out-of-bag count of
    4,000 passes of n draws (within 4 standard errors, or 0.001 where no pass left one
    out), and n (1 - 1/n)^n for distinct rows."""
    rng = np.random.default_rng(0)
    for X in (np.arange(300.0)[:, None], _few_distinct_rows()[0],
              np.repeat(np.arange(150.0), 2)[:, None]):
        copies, n = first_copies(X), len(X)
        counts = [len(out_of_bag(np.arange(n), rng.integers(0, n, n), copies))
                  for _ in range(4000)]
        assert abs(expected_out_of_bag(copies, n) - np.mean(counts)) <= (
            4 * np.std(counts) / np.sqrt(4000) + 1e-3)
    assert expected_out_of_bag(None, 300) == pytest.approx(300 * (1 - 1 / 300) ** 300)
    assert expected_out_of_bag(first_copies(_few_distinct_rows()[0]), 300) < 1e-3


def test_auto_sampling_permutes_rows_of_few_distinct_values():
    """Below 500 rows 'auto' draws with replacement, whose out-of-bag rows (37 %) validate,
    but copies of drawn rows validate nothing: on 300 rows of 16 distinct ones no row was
    out of bag, every candidate scored NaN, the first (widest kernel) was kept silently
    and scored 53-81 % on its training rows.  'auto' now permutes there, holding out whole
    groups of copies; an explicit 'replacement' warns."""
    X, y = _few_distinct_rows()
    for seed in range(3):
        clf = MarginSGDSVC(random_state=seed).fit(X, y)
        info = clf.training_info_
        assert info["sampling"] == "permutation"
        assert info["n_validation"] > 0 and np.isfinite(info["validation_accuracy"])
        assert all(np.isfinite(c["validation_accuracy"]) for c in info["candidates"])
        assert clf.score(X, y) > 0.8
    with pytest.warns(UserWarning, match="validated its passes on no row"):
        MarginSGDSVC(sampling="replacement", random_state=0).fit(X, y)


def test_deterministic_and_thread_invariant():
    X, y = _labels(n=300, n_classes=4)
    a = MarginSGDSVC(random_state=7).fit(X, y)
    b = MarginSGDSVC(random_state=7, n_jobs=2).fit(X, y)
    assert_array_equal(a.support_, b.support_)
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    c = MarginSGDSVC(random_state=8).fit(X, y)
    assert not np.array_equal(a.support_, c.support_)


@pytest.mark.parametrize("sampling", ["replacement", "permutation"])
def test_sparse_and_float32_give_the_same_model(sampling):
    X, y = _labels(n=300)
    X[np.abs(X) < 0.5] = 0.0
    ref = MarginSGDSVC(sampling=sampling, random_state=1).fit(X, y)
    for other in (sp.csr_matrix(X), X.astype(np.float32)):
        clf = MarginSGDSVC(sampling=sampling, random_state=1).fit(other, y)
        assert_array_equal(clf.support_, ref.support_)
        assert_allclose(clf.dual_coef_, ref.dual_coef_, rtol=1e-5, atol=1e-6)


def test_dense_enough_csr_is_made_dense_once_within_its_byte_cap(monkeypatch):
    """CSR rows that the passes multiply as dense blocks are made dense once for the
    fit (pass_rows); with the cap at 0 they are made dense block by block, the same
    model to the last bit."""
    X, y = _labels(n=300)
    X[np.abs(X) < 0.5] = 0.0
    X = sp.csr_matrix(X)
    assert isinstance(pass_rows(X), np.ndarray)
    assert_array_equal(pass_rows(X), X.toarray())
    wide = sp.random(50, 2000, density=0.004, format="csr", random_state=0)
    assert sp.issparse(pass_rows(wide))                 # too sparse: sparse products
    once = MarginSGDSVC(random_state=3).fit(X, y)
    monkeypatch.setattr(_options, "MARGIN_SGD_DENSE_COPY_BYTES", 0)
    assert sp.issparse(pass_rows(X))
    blocks = MarginSGDSVC(random_state=3).fit(X, y)
    assert_array_equal(once.support_, blocks.support_)
    assert_array_equal(once.dual_coef_, blocks.dual_coef_)
    assert_array_equal(once.intercept_, blocks.intercept_)


def test_wide_sparse_input_stays_sparse_and_gives_the_dense_model():
    """Very sparse CSR rows go through sparse products (support vectors kept as indices)
    and give the model of the same rows as a dense array (BLAS), halving included."""
    rng = np.random.default_rng(5)
    X = sp.random(900, 2000, density=0.004, format="csr", random_state=5)
    w = rng.normal(size=2000)
    y = np.where(X @ w > 0, "a", "b")
    assert X.nnz < _options.MARGIN_SGD_DENSE_FROM * np.prod(X.shape)
    params = dict(tune_size=200, n_repeats=1, random_state=2)
    sparse = MarginSGDSVC(**params).fit(X, y)
    dense = MarginSGDSVC(**params).fit(X.toarray(), y)
    assert_array_equal(sparse.support_, dense.support_)
    assert_allclose(sparse.dual_coef_, dense.dual_coef_, rtol=1e-9, atol=1e-12)
    assert_allclose(sparse.decision_function(X), dense.decision_function(X.toarray()),
                    rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params, match", [
    ({"M": -0.5}, "M"), ({"M_grid": [0.5, -1.0]}, "M_grid"), ({"M_grid": []}, "M_grid"),
    ({"M_grid": [np.nan]}, "M_grid"), ({"gamma": 0.0}, "gamma"), ({"gamma_grid": [1.0, 0.0]},
                                                                  "gamma_grid"),
    ({"update": "hinge"}, "update"), ({"sampling": "bootstrap"}, "sampling"),
    ({"validation_fraction": 1.0}, "validation_fraction"), ({"tune_size": 1}, "tune_size"),
    ({"tune_size": "half"}, "tune_size"), ({"M_grid": {0.5, 1.0}}, "M_grid must be a list"),
    ({"gamma_grid": {0.1, 1.0}}, "gamma_grid must be a list"),
    ({"M_grid": np.array([[0.5, 1.0]])}, r"M_grid must be .* shape \(1, 2\)"),
    ({"gamma_grid": ["wide", "narrow"]}, "gamma_grid must hold numbers")])
def test_bad_parameters(params, match):
    X, y = _labels(n=50)
    with pytest.raises(ValueError, match=match):
        MarginSGDSVC(**params).fit(X, y)


def test_bad_data():
    X, y = _labels(n=50)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MarginSGDSVC().fit(X, np.ones(50))
    X_inf = X.copy()
    X_inf[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MarginSGDSVC().fit(X_inf, y)
    clf = MarginSGDSVC(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    bad = sp.csr_matrix(X)
    bad.indices[0] = 99
    with pytest.raises(ValueError, match="CSR"):
        MarginSGDSVC().fit(bad, y)
    with pytest.raises(ValueError, match="CSR"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="0 sample"):
        MarginSGDSVC().fit(X[:0], y[:0])


# ---------------------------------------------------------------- accuracy on real data
@pytest.mark.data("phishing")
def test_accuracy_phishing_defaults():
    X, y, X_test, y_test = load_dataset("phishing")
    clf = MarginSGDSVC(random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) >= 0.95    # seeds 0-2: 95.30-96.29 %; SVC at defaults 95.66 %


@pytest.mark.parametrize("name, gamma, floor", [
    pytest.param("a9a", 2.0**-9, 0.84, marks=pytest.mark.data("a9a")),    # SVC (C = 2^5, gamma = 2^-7): 85.07 %
    pytest.param("ijcnn1", 2.0**3.5, 0.975, marks=pytest.mark.data("ijcnn1")),  # SVC (C = 2^5, gamma = 2): 98.70 %
    pytest.param("usps", 0.0264, 0.94, marks=pytest.mark.data("usps"))])  # SVC (C = 10, gamma = 'scale'): 95.27 %
def test_accuracy_with_tuned_gamma(name, gamma, floor):
    X, y, X_test, y_test = load_dataset(name)
    clf = MarginSGDSVC(gamma=gamma, random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) >= floor


def test_one_vs_one_dual_coef_beyond_the_memory_limit_is_refused(monkeypatch):
    """The dense dual_coef_ of the pairs (pairs x support vectors) is bounded like every
    dense model array; one-vs-rest, whose coefficients the pass holds anyway, is not."""
    X, y = _labels(n_classes=4)
    monkeypatch.setattr(_options, "DENSE_VECTORS_MAX_BYTES", 8 * 6 * 20)
    with pytest.raises(ValueError, match="6 one-vs-one models' dual_coef_ .* multi_class='ovr'"):
        MarginSGDSVC(random_state=0).fit(X, y)
    assert MarginSGDSVC(multi_class="ovr", random_state=0).fit(X, y).dual_coef_.shape[0] == 4


def test_one_vs_one_by_default_on_nested_shells():
    """Three nested shells (the sweep's set): a shell against the other two, one-vs-rest, is
    a ring; one-vs-one separates neighbours.  Seeds 0-1: one-vs-rest 79.1 %, the default
    (one-vs-one) 88.9 %; SVC 95.7 %."""
    from sklearn.datasets import make_gaussian_quantiles
    from sklearn.model_selection import train_test_split

    X, y = make_gaussian_quantiles(n_samples=1500, n_features=5, n_classes=3, random_state=18)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    accuracy = {split: np.mean([MarginSGDSVC(multi_class=split, random_state=seed).fit(X, y)
                                .score(X_test, y_test) for seed in (0, 1)])
                for split in ("auto", "ovr")}
    assert accuracy["auto"] >= accuracy["ovr"] + 0.04 and accuracy["auto"] >= 0.85


def test_a_diverging_candidate_ranks_last_without_warnings(tmp_path):
    """Uncapped (C=None) with a poly kernel, whose k(x, x) is far from 1, some candidates of
    the gamma grid diverge to inf on the validation rows: their offsets had met inf - inf
    (RuntimeWarnings); they now rank last, and a finite candidate is the model."""
    import warnings

    from sklearn.datasets import make_classification

    X, y = make_classification(400, 5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = MarginSGDSVC(kernel="poly", C=None, random_state=0).fit(X, y)
    scores = [c["validation_accuracy"] for c in clf.training_info_["candidates"]]
    assert -np.inf in scores and np.isfinite(clf.training_info_["validation_accuracy"])
    assert clf.score(X, y) > 0.75
    # a model file holds the diverged passes' scores as null, the repeated ones too
    from fastsvm.persistence import load_model, save_model

    save_model(clf, tmp_path / "m.npz")
    info = load_model(tmp_path / "m.npz").training_info_
    assert None in [c["validation_accuracy"] for c in info["candidates"]]
    assert None in [a for c in info["candidates"] for a in c["pass_accuracies"]]


@pytest.mark.parametrize("tune_size, fraction", [(2, 0.6), (10, 0.95)])
def test_a_small_first_round_keeps_a_row_to_pass_over(tune_size, fraction):
    """A first halving round of tune_size rows held out ceil(fraction * tune_size) of them,
    all: scikit-learn's split refused, naming n_samples=2 and test_size."""
    from sklearn.datasets import make_classification

    X, y = make_classification(100, 4, random_state=0)
    clf = MarginSGDSVC(tune_size=tune_size, sampling="permutation",
                       validation_fraction=fraction, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.6


class _Bar:
    """A tqdm stand-in that records its total and what it was advanced by."""
    made = []

    def __init__(self, total=None, **kwargs):
        self.total, self.n = total, 0
        _Bar.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, k):
        self.n += k


@pytest.mark.parametrize("n, sampling", [(3000, "auto"), (3000, "replacement"), (300, "auto")])
def test_one_progress_bar_spans_every_halving_round(n, sampling, monkeypatch):
    """verbose=1 shows one bar for the whole fit, whose total is every round's draws, not a
    bar per halving round, each from 0 %."""
    from sklearn.datasets import make_classification

    monkeypatch.setattr("fastsvm.base.tqdm", _Bar)
    _Bar.made = []
    X, y = make_classification(n, n_features=5, random_state=0)
    clf = MarginSGDSVC(sampling=sampling, verbose=1, random_state=0).fit(X, y)
    assert len(_Bar.made) == 1
    bar = _Bar.made[0]
    assert bar.n == bar.total > 0
    assert len({c["n_rows"] for c in clf.training_info_["candidates"]}) == (3 if n == 3000 else 1)
