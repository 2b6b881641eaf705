"""HuberSVC and PegasosSVC: the margin bounds are exact, against NumPy oracles and real data."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import LinearSVC, SVC

from fastsvm import HuberSVC, PegasosSVC, _options
from fastsvm._packed import PackedData
from fastsvm.base import random_seeds
from fastsvm.bounds import _kernels as K
from fastsvm.bounds.solver import (SortedMargins, resort_schedule, solve_huber,
                                   solve_kernel_pegasos, solve_pegasos)
from fastsvm.datasets import load_dataset
from fastsvm.kernels import Kernel
from fastsvm.multiclass import ovo_pairs, ovo_scores

from . import naive

H = 0.01


def _problem(n=300, d=8, seed=0, sparse=False, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < (0.4 if sparse else 1.0))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    X = X.astype(dtype)
    return (sp.csr_matrix(X) if sparse else X), y


# ---------------------------------------------------------------- Huber loss and gradient
def test_huber_pieces_join_continuously():
    for z in (1 - H, 1 + H):
        below, above = K.huber(z - 1e-9, H), K.huber(z + 1e-9, H)
        assert_allclose(below, above, atol=1e-6)
    assert K.huber(0.5, H) == (0.5, -1.0)
    assert K.huber(1.5, H) == (0.0, 0.0)
    value, slope = K.huber(1.0, H)
    assert_allclose((value, slope), (H / 4, -0.5))
    assert_allclose(naive.huber([0.5, 1.0, 1.5], H), [0.5, H / 4, 0.0])


def test_huber_gradient_matches_finite_differences():
    X, y = _problem(n=60, d=5)
    rng = np.random.default_rng(1)
    lam = 1e-2
    for _ in range(5):
        w, b = rng.normal(size=5) * 0.5, rng.normal() * 0.3
        gw, gb = naive.huber_gradient(X, y, w, b, lam, 0.1)
        eps = 1e-6
        fd_w = [(naive.huber_objective(X, y, w + eps * e, b, lam, 0.1)
                 - naive.huber_objective(X, y, w - eps * e, b, lam, 0.1)) / (2 * eps)
                for e in np.eye(5)]
        fd_b = (naive.huber_objective(X, y, w, b + eps, lam, 0.1)
                - naive.huber_objective(X, y, w, b - eps, lam, 0.1)) / (2 * eps)
        assert_allclose(gw, fd_w, rtol=1e-5, atol=1e-7)
        assert_allclose(gb, fd_b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.usefixtures("csr_loops")
def test_full_evaluation_matches_oracle(sparse, dtype, weighted):
    X, y = _problem(sparse=sparse, dtype=dtype)
    packed = PackedData.from_matrix(X)
    rng = np.random.default_rng(2)
    w, b, lam = rng.normal(size=8) * 0.3, 0.1, 1e-3
    weight = rng.uniform(0.1, 3.0, len(y)) if weighted else np.ones(len(y))
    grad, margins = np.empty(8), np.empty(len(y))
    loss, grad_b = K.full_evaluation(*packed.arrays, y, weight, w, b, H, margins, grad)
    S = weight.sum()
    assert_allclose(loss / S + 0.5 * lam * w @ w,
                    naive.huber_objective(X, y, w, b, lam, H, weight), rtol=1e-12)
    gw, gb = naive.huber_gradient(X, y, w, b, lam, H, weight)
    assert_allclose(lam * w + grad / S, gw, rtol=1e-10, atol=1e-14)
    assert_allclose(grad_b / S, gb, rtol=1e-10, atol=1e-14)
    Xd = X.toarray() if sparse else X
    assert_allclose(margins, y * (Xd.astype(float) @ w + b), rtol=1e-12)


# ---------------------------------------------------------------- Algorithms 1 and 2
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("prefix_sums", [True, False])
@pytest.mark.parametrize("step", [0.0, 1e-3, 3e-2, 1.0])
@pytest.mark.parametrize("offset_change", [0.0, 0.05])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.usefixtures("csr_loops")
def test_bounded_evaluation_is_exact(monkeypatch, sparse, prefix_sums, step, offset_change,
                                     weighted):
    """Loss and gradient of Algorithm 2 equal the plain ones at w' + step, b' + change,
    with all prefix sums or only Sum_Boundary (the sparse variant), with and without
    sample weights (weighted prefix sums)."""
    monkeypatch.setattr(_options, "PREFIX_SUMS_MAX_BYTES", 2**30 if prefix_sums else 0)
    X, y = _problem(n=400, sparse=sparse)
    packed = PackedData.from_matrix(X)
    rng = np.random.default_rng(3)
    weight = rng.uniform(0.1, 3.0, len(y)) if weighted else np.ones(len(y))
    w_ref, b_ref = rng.normal(size=8) * 0.8, -0.2
    margins, grad = np.empty(len(y)), np.empty(8)
    K.full_evaluation(*packed.arrays, y, weight, w_ref, b_ref, H, margins, grad)
    sorter = SortedMargins(packed, y, weight)
    sorter.sort(w_ref, b_ref, margins)
    assert (sorter.prefix.shape[0] > 0) == prefix_sums
    w, b = w_ref + step * rng.normal(size=8), b_ref + offset_change
    want_loss, want_gb = K.full_evaluation(*packed.arrays, y, weight, w, b, H, margins, grad)
    want_grad = grad.copy()
    loss, grad_b, examined = sorter.evaluate(w, b, H, grad)
    assert_allclose(loss, want_loss, rtol=1e-11)
    assert_allclose(grad_b, want_gb, rtol=1e-11, atol=1e-10)
    assert_allclose(grad, want_grad, rtol=1e-11, atol=1e-10)
    if step == 0.0 and offset_change == 0.0:
        # at the reference model only the points in the quadratic piece are looked at
        assert examined == np.count_nonzero(np.abs(sorter.u - 1) < H)
    if step <= 1e-3:
        assert examined < len(y) / 4


def test_sorted_lists_hold_each_label_sorted_by_margin():
    X, y = _problem()
    packed = PackedData.from_matrix(X)
    w, b = np.ones(8) * 0.2, 0.1
    margins, grad = np.empty(len(y)), np.empty(8)
    K.full_evaluation(*packed.arrays, y, np.ones(len(y)), w, b, H, margins, grad)
    sorter = SortedMargins(packed, y, np.ones(len(y)))
    sorter.sort(w, b, margins)
    n_pos = int(np.sum(y > 0))
    assert_array_equal(sorter.y_sorted[:n_pos], 1.0)
    assert_array_equal(sorter.y_sorted[n_pos:], -1.0)
    for L, (start, stop) in enumerate([(0, n_pos), (n_pos, len(y))]):
        u = sorter.u[start:stop]
        assert np.all(np.diff(u) >= 0)
        assert_allclose(u, sorter.y_sorted[start:stop] * (sorter.sorted.dense[start:stop] @ w + b))
        assert np.all(u[:sorter.boundary[L]] < 1) and np.all(u[sorter.boundary[L]:] >= 1)
        signed_rows = sorter.y_sorted[start:stop, None] * sorter.sorted.dense[start:stop]
        assert_allclose(sorter.prefix[stop - 1], signed_rows.sum(0))


def test_resort_rule():
    """Sec. 3: only after SortPeriod iterations, and then if (a) or (b) holds."""
    rule = K.new_rule(5.0, 100.0)
    K.record_resort(rule, 10)
    for t, pruned in zip(range(11, 15), (90, 90, 90, 90)):
        K.record_pruned(rule, pruned)
        assert not K.resort_due(rule, t + 1, 100)       # fewer than 5 iterations since the sort
    K.record_pruned(rule, 90)
    assert not K.resort_due(rule, 15, 100)              # pruning steady: area 0 <= SortCost
    K.record_pruned(rule, 40)
    assert K.resort_due(rule, 16, 100)                  # (a) pruned fewer than half
    K.record_resort(rule, 16)
    for pruned in (100, 100, 100, 100, 100, 60):
        K.record_pruned(rule, pruned)
    # (b): pruned since sort 560 - 6 iterations * 60 = 200 > SortCost 100
    assert K.resort_due(rule, 22, 100)
    assert rule[K.R_PLAIN] == 0.0
    K.record_pruned(rule, 0)
    assert rule[K.R_PLAIN] == 1.0                       # nothing pruned: plain until the next sort
    K.record_resort(rule, 23)
    assert rule[K.R_PLAIN] == 0.0
    # ours: not where the points left to evaluate (iterations t..last, 100 each) are fewer
    # than SortCost, as at Pegasos' last iteration
    rule = K.new_rule(5.0, 250.0, last=30)
    K.record_pruned(rule, 40)
    assert K.resort_due(rule, 28, 100)                  # 3 iterations left: 300 points
    assert not K.resort_due(rule, 29, 100)              # 2 left: 200 < 250


def test_resort_schedule_follows_eq_4():
    X, y = _problem(n=1024, d=16)
    period, cost = resort_schedule(PackedData.from_matrix(X), 1024)
    sd, n, d = 16, 1024, 16
    assert_allclose(period, 10 * (sd * n + n * 10 + d) / (sd * n + d))
    assert_allclose(cost, (sd * n + n * 10 + d) / sd)
    # Pegasos: a refresh without sorting; an iteration of k = 5 touches its rows' entries only
    period, cost = resort_schedule(PackedData.from_matrix(X), 5, pegasos=True)
    assert_allclose(period, 10 * (sd * n + d) / (sd * 5))
    assert_allclose(cost, (sd * n + d) / sd)


# ---------------------------------------------------------------- gradient descent
@pytest.mark.parametrize("margin_bounds", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_descent_follows_the_oracle(margin_bounds, fit_intercept, weighted):
    """The whole path, step-size halvings included.

    eta0 = 10, not the paper's 100: on this small problem the first steps
    with 100 are chaotic (rounding differences of 1e-16, from summing in
    another order, grow to 1e-3 within 100 iterations), so no two
    implementations would agree; per-iteration exactness is tested above.
    """
    X, y = _problem(n=200, d=6)
    lam = 1e-3
    weight = (np.random.default_rng(7).uniform(0.2, 2.0, len(y)) if weighted
              else np.ones(len(y)))
    result = solve_huber(PackedData.from_matrix(X), y, weight, lam, H, fit_intercept, "gd", 10.0,
                         1e-6, 3000, margin_bounds)
    w, b, objectives = naive.huber_gd(X, y, lam, H, 10.0, 1e-6, 3000, fit_intercept, weight)
    assert result.n_iter == len(objectives)
    assert_allclose(result.objective, objectives, rtol=1e-9)
    assert_allclose(result.w, w, rtol=1e-7, atol=1e-9)
    assert_allclose(result.b, b, rtol=1e-7, atol=1e-9)
    assert result.converged
    if not fit_intercept:
        assert result.b == 0.0


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_gradient_descent_out_of_iterations_returns_the_last_model_evaluated(max_iter):
    """At max_iter the model returned is the last one evaluated: the objective reported last
    is its objective (no step is taken after it)."""
    X, y = _problem(n=200, d=6)
    lam = 1e-3
    result = solve_huber(PackedData.from_matrix(X), y, np.ones(len(y)), lam, H, True, "gd",
                         100.0, 1e-12, max_iter, False)
    w, b, objectives = naive.huber_gd(X, y, lam, H, 100.0, 1e-12, max_iter)
    assert not result.converged and result.n_iter == len(objectives) == max_iter
    assert_allclose(result.objective, objectives, rtol=1e-9)
    assert_allclose(result.w, w, rtol=1e-9, atol=1e-12)
    assert result.objective[-1] == pytest.approx(
        naive.huber_objective(X, y, result.w, result.b, lam, H), rel=1e-9)


@pytest.mark.parametrize("estimator", [HuberSVC(), HuberSVC(solver="gd"),
                                       PegasosSVC(random_state=0)])
def test_linear_models_fit_the_columns_they_use(estimator, monkeypatch):
    """Sparse rows using few of a million columns: the fit runs on the used columns (the
    others' weights are 0 at the optimum and never leave 0), the same model as on all
    columns, without n_features-long work (L-BFGS keeps (2m + 5) n_features numbers)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n, d = 300, 1_000_000
    y = rng.integers(0, 2, n)
    cols = np.sort(rng.choice(2000, size=(n, 8)) + 500_000 * y[:, None], axis=1)
    X = sp.csr_matrix((rng.uniform(0.5, 1.5, n * 8), cols.ravel(), np.arange(0, n * 8 + 1, 8)),
                      shape=(n, d))
    X.sum_duplicates()
    tracemalloc.start()
    try:
        fitted = clone(estimator).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fitted.coef_.shape == (1, d) and fitted.score(X, y) == 1.0
    assert not fitted.coef_[0, np.setdiff1d(np.arange(d), X.indices)].any()
    assert peak < 8 * d * 5                     # a few coefficient vectors, no more
    monkeypatch.setattr("fastsvm.bounds.estimator.used_columns", lambda X: (X, None))
    wide = clone(estimator).fit(X, y)
    assert_allclose(fitted.coef_, wide.coef_, rtol=1e-7, atol=1e-10)
    assert_allclose(fitted.intercept_, wide.intercept_, rtol=1e-7, atol=1e-10)


@pytest.fixture(scope="module")
def a9a():
    X, y, X_test, y_test = load_dataset("a9a")
    return X, y, X_test, y_test


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.data("a9a")
def test_huber_svc_identical_with_and_without_bounds(a9a, sparse, fit_intercept):
    # 4,000 rows: 620-760 steps (8,000 rows without the offset took 5,458)
    X, y = a9a[0][:4000], a9a[1][:4000]
    X = X if sparse else X.toarray()
    params = dict(C=10.0, solver="gd", tol=1e-5, fit_intercept=fit_intercept)
    plain = HuberSVC(margin_bounds=False, **params).fit(X, y)
    bounded = HuberSVC(**params).fit(X, y)
    assert_array_equal(bounded.n_iter_, plain.n_iter_)
    assert_allclose(bounded.training_info_["objective"][0], plain.training_info_["objective"][0],
                    rtol=1e-10)
    assert_allclose(bounded.coef_, plain.coef_, rtol=1e-8, atol=1e-10)
    assert_allclose(bounded.intercept_, plain.intercept_, rtol=1e-8, atol=1e-10)
    assert_array_equal(plain.n_examined_[0], len(y))
    # the bounds skipped most margin computations
    assert bounded.training_info_["examined_fraction"][0] < 0.5
    assert bounded.training_info_["n_sorts"][0] >= 2


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.data("a9a")
def test_huber_svc_lbfgs_same_model_with_and_without_bounds(a9a, fit_intercept):
    """Each evaluation agrees to rounding, so the L-BFGS paths agree until the line search
    amplifies a rounding difference; both end certified at about the same objective."""
    X, y = a9a[0][:8000], a9a[1][:8000]
    params = dict(C=10.0, fit_intercept=fit_intercept)
    plain = HuberSVC(margin_bounds=False, **params).fit(X, y)
    bounded = HuberSVC(**params).fit(X, y)
    first = 20
    assert_allclose(bounded.training_info_["objective"][0][:first],
                    plain.training_info_["objective"][0][:first], rtol=1e-8)
    ends = [clf.training_info_["objective"][0][-1] for clf in (plain, bounded)]
    assert ends[0] == pytest.approx(ends[1], rel=2e-3)
    assert plain.training_info_["converged"] == bounded.training_info_["converged"] == [True]
    assert bounded.training_info_["examined_fraction"][0] < 0.9


@pytest.mark.data("a9a")
def test_huber_svc_accuracy_a9a(a9a):
    X, y, X_test, y_test = a9a
    clf = HuberSVC(C=1.0).fit(X, y)
    assert clf.score(X_test, y_test) >= 0.845       # LIBLINEAR's linear SVM: 0.850
    assert clf.training_info_["converged"] == [True]
    assert clf.training_info_["duality_gap"][0] <= 1e-3


@pytest.mark.data("usps")
def test_huber_svc_multiclass_usps():
    """With the paper's gradient descent and h: L-BFGS certifies usps's nearly separable
    one-vs-rest problems only after hundreds to thousands of evaluations (17-25 s)."""
    X, y, X_test, y_test = load_dataset("usps")
    clf = HuberSVC(C=1.0, h=0.01, solver="gd", tol=1e-4, n_jobs=2).fit(X, y)
    assert clf.coef_.shape == (10, 256)
    assert clf.score(X_test, y_test) >= 0.90


@pytest.mark.parametrize("solver", ["lbfgs", "gd"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_huber_svc_reports_its_stop_measure_and_gradient(solver, fit_intercept):
    """'gd' stops on relative_change, 'lbfgs' on duality_gap; both report the oracle's
    duality gap and gradient norm at the returned model."""
    X, y = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for tol, max_iter in ((1e-4, 10_000), (0.0, 30)):
            clf = HuberSVC(solver=solver, tol=tol, max_iter=max_iter,
                           fit_intercept=fit_intercept).fit(X, y)
            info = clf.training_info_
            objective = info["objective"][0]
            w, b, h = clf.coef_[0], clf.intercept_[0], clf.h
            lam = 1.0 / (clf.C * len(y))
            primal = naive.huber_objective(X, y, w, b, lam, h)
            dual = naive.huber_dual(X, y, naive.huber_feasible_alpha(X, y, w, b, h, None,
                                                                     fit_intercept), lam, h)
            assert info["duality_gap"][0] == pytest.approx((primal - dual) / primal, rel=1e-7)
            if solver == "gd":
                assert info["relative_change"][0] == pytest.approx(
                    abs(objective[-1] - objective[-2]) / abs(objective[-2]), rel=1e-12)
                assert (info["relative_change"][0] <= tol) == info["converged"][0]
            else:
                assert np.isnan(info["relative_change"][0])
                assert (info["duality_gap"][0] <= tol) == info["converged"][0]
            gw, gb = naive.huber_gradient(X, y, w, b, lam, h)
            expected = np.hypot(np.linalg.norm(gw), gb if fit_intercept else 0.0)
            assert info["gradient_norm"][0] == pytest.approx(expected, rel=1e-9)
            assert ("suboptimality_bound" in info) == (not fit_intercept)


@pytest.mark.parametrize("scale", [1e4, 1e12, 1e20])
def test_huber_lbfgs_moves_on_unscaled_features(scale):
    """On features of 1e12 the first line search needed more than scipy's default 20 trials
    to shrink its step by 1e-12: L-BFGS stopped at w = 0 and every row took one class
    (accuracy 1/6 on blobs of 10 and 50 rows).  The model is not certified there (the
    problem is about as ill-conditioned as (R^2 / lambda), so it warns), but it moves."""
    rng = np.random.RandomState(0)
    X = np.r_[rng.randn(10, 2) - 2, rng.randn(50, 2) + 2] * scale
    y = np.r_[np.zeros(10, int), np.ones(50, int)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = HuberSVC().fit(X, y)
    assert clf.score(X, y) == 1.0


def test_huber_conjugate_and_weak_duality():
    """l(z) = max over a in [0, 1] of a (1 + h - z) - h a^2, on a grid of a; and for
    random models and feasible alpha, the dual is below the exact minimum."""
    grid = np.linspace(0.0, 1.0, 200_001)
    for z in (-3.0, 1 - 2 * H, 1 - H, 1 - H / 3, 1.0, 1 + H / 2, 1 + H, 2.5):
        assert np.max(grid * (1 + H - z) - H * grid ** 2) == pytest.approx(
            naive.huber([z], H)[0], abs=1e-9)
    rng = np.random.default_rng(3)
    X, y = _problem(n=120, d=5)
    weight = rng.uniform(0.2, 2.0, len(y))
    lam = 1e-2
    for fit_intercept in (True, False):
        w_opt, b_opt, best = naive.huber_exact(X, y, lam, H, weight, fit_intercept)
        alpha = naive.huber_feasible_alpha(X, y, w_opt, b_opt, H, weight, fit_intercept)
        # at the optimum the gap closes
        assert naive.huber_dual(X, y, alpha, lam, H, weight) == pytest.approx(best, rel=1e-7)
        for _ in range(20):
            w, b = rng.normal(size=X.shape[1]), rng.normal() * fit_intercept
            alpha = naive.huber_feasible_alpha(X, y, w, b, H, weight, fit_intercept)
            if fit_intercept:
                assert np.sum(weight * alpha * y) == pytest.approx(0.0, abs=1e-9)
            assert naive.huber_dual(X, y, alpha, lam, H, weight) <= best + 1e-12


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.usefixtures("csr_loops")
def test_huber_svc_lbfgs_reaches_the_optimum(sparse, fit_intercept):
    """The default solver's objective is within tol = 1e-3 of an exact solve of the same
    weighted problem, and the gap it reports bounds its true suboptimality."""
    X, y = _problem(n=400, d=10, seed=4, sparse=sparse)
    weight = np.random.default_rng(5).uniform(0.2, 3.0, len(y))
    clf = HuberSVC(C=10.0, fit_intercept=fit_intercept).fit(X, y, sample_weight=weight)
    lam = 1.0 / (clf.C * weight.sum())
    _, _, best = naive.huber_exact(X, y, lam, clf.h, weight, fit_intercept)
    reached = naive.huber_objective(X, y, clf.coef_[0], clf.intercept_[0], lam, clf.h, weight)
    assert clf.training_info_["converged"] == [True]
    assert -1e-12 <= (reached - best) / best <= clf.training_info_["duality_gap"][0] <= 1e-3


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shape", ["scales", "offsets"])
@pytest.mark.usefixtures("csr_loops")
def test_huber_svc_lbfgs_certifies_features_of_different_scales(sparse, shape):
    """Features scaled by 10^-3 to 10^3 made F so badly conditioned that L-BFGS ran 20,000
    iterations short of tol (a gap of 0.05 on 2,250 rows; here 14,271 iterations), and
    features far from 0 (here at 300) move with the offset (561 iterations scaled, 2,315
    before); on centred and scaled variables it is certified in 15-20."""
    X, y = _problem(n=400, d=20, seed=6)
    X = X * 10.0 ** np.linspace(-3, 3, X.shape[1]) if shape == "scales" else X + 300.0
    X = sp.csr_matrix(X) if sparse else X
    clf = HuberSVC(max_iter=100).fit(X, y)      # 15-20 needed; before, 560-14,000
    lam = 1.0 / (clf.C * len(y))
    _, _, best = naive.huber_exact(X, y, lam, clf.h)
    reached = naive.huber_objective(X, y, clf.coef_[0], clf.intercept_[0], lam, clf.h)
    assert clf.training_info_["converged"] == [True]
    assert -1e-9 <= (reached - best) / best <= clf.training_info_["duality_gap"][0] <= 1e-3


def test_huber_svc_suboptimality_bound_is_a_certificate():
    """Without the offset F is lambda-strongly convex: F(w) - F* <= ||grad F||^2 / (2 lambda),
    checked against a tight L-BFGS solve of the same objective, for both solvers."""
    X, y = _problem()
    lam = 1.0 / len(y)
    h = HuberSVC().h
    _, _, best = naive.huber_exact(X, y, lam, h, fit_intercept=False)
    for solver, tol in [(solver, tol) for solver in ("lbfgs", "gd") for tol in (1e-2, 1e-4, 1e-8)]:
        clf = HuberSVC(solver=solver, tol=tol, max_iter=100_000, fit_intercept=False).fit(X, y)
        gap = naive.huber_objective(X, y, clf.coef_[0], 0.0, lam, h) - best
        bound = clf.training_info_["suboptimality_bound"][0]
        assert -1e-12 <= gap <= bound + 1e-12


def test_huber_svc_warns_when_not_converged():
    X, y = _problem()
    for solver in ("lbfgs", "gd"):
        with pytest.warns(ConvergenceWarning, match="max_iter=3"):
            HuberSVC(solver=solver, max_iter=3).fit(X, y)
    # features at 1e20: the line search runs out of floating point long before max_iter,
    # and the warning says so, with the gap reached
    with pytest.warns(ConvergenceWarning, match="no more progress at a relative duality gap"):
        clf = HuberSVC().fit(X * 1e20, y)
    assert clf.n_iter_[0] < 1000 and clf.training_info_["duality_gap"][0] > 1e-3


def test_huber_svc_labels_and_float32():
    X, y = _problem()
    labels = np.where(y > 0, "yes", "no")
    clf = HuberSVC(C=10.0).fit(X.astype(np.float32), labels)
    assert set(clf.predict(X)) <= {"yes", "no"}
    assert clf.score(X, labels) > 0.85
    # rounding moves the path (and so where the stopping rule fires), not the quality
    clf64 = HuberSVC(C=10.0).fit(X, labels)
    assert abs(clf.score(X, labels) - clf64.score(X, labels)) <= 0.02


# ---------------------------------------------------------------- Pegasos
def _no_row_twice_in_a_row(batches):
    """The batches of one draw with every draw that repeats the one before it moved to the
    next row.  A heavy row's importance-aware step puts its margin at 1 exactly
    (fastsvm._importance); drawn again at once, it sits on the hinge's corner, where the
    oracle's rounding and the compiled steps' decide differently whether it violates."""
    batches = batches.copy()
    if batches.shape[1] == 1:
        n = batches.max() + 1
        for t in range(1, len(batches)):
            if batches[t, 0] == batches[t - 1, 0]:
                batches[t, 0] = (batches[t, 0] + 1) % n
    return batches


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bias_feature", [1.0, 0.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [10, 1])              # 1: the default batch_size
@pytest.mark.usefixtures("csr_loops")
def test_pegasos_steps_follow_the_oracle(sparse, bias_feature, weighted, k):
    """Without bounds, with Algorithm 3's and with the scaled-reference bound, the stored
    margins refreshed every n / k steps (so the refresh and pruning paths run), in two
    calls: the lazily scaled w, its norm and the averaged dual carried between them."""
    X, y = _problem(n=120, d=5, sparse=sparse)
    lam = 1e-2
    n_iter = 600 // k
    batches = _no_row_twice_in_a_row(np.random.default_rng(4).integers(0, 120, (n_iter, k)))
    weight = (np.random.default_rng(8).choice([0.5, 1.0, 4.0, 30.0], len(y)) if weighted
              else np.ones(len(y)))
    first = n_iter // 2 + 1
    # rows are heavy (fastsvm._importance) from the median here, not from 100 times it,
    # so that the weights of 4 and 30 take the importance-aware step
    heavy_from = np.median(weight)
    want, want_dual = naive.pegasos_minibatch(X, y, lam, batches, bias_feature, weight,
                                              heavy_from=heavy_from)
    mean, mean_dual = naive.pegasos_minibatch(X, y, lam, batches, bias_feature, weight,
                                              average_from=first, heavy_from=heavy_from)
    for margin_bounds, scaled in ((False, False), (True, False), (True, True)):
        packed = PackedData.from_matrix(X)
        norms = np.sqrt(packed.sq_norms + bias_feature ** 2)
        v, w_ref, u = np.zeros(6), np.zeros(6), np.zeros(120)
        update, touched, mark = np.zeros(6), np.empty(6, dtype=np.int64), np.zeros(6, np.int64)
        rule = K.new_rule(120 / k, 120.0)
        counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
        dual, dual_scale = np.zeros(120), np.ones(1)
        dual_lag, scale_sum = np.zeros(120), np.zeros(1)
        cut = first + 7                                # two calls, the first into the average
        for start, stop in ((0, cut), (cut, n_iter)):
            K.pegasos_steps(*packed.arrays, norms, y, weight, heavy_from,
                            batches[start:stop], start, lam, bias_feature, margin_bounds,
                            scaled, rule, u, w_ref, v, update, touched, mark, dual, dual_scale,
                            first, dual_lag, scale_sum, counters)
        assert_allclose(dual_scale[0] * v, want, rtol=1e-10, atol=1e-12)
        assert_allclose(dual_scale[0] * dual, want_dual, rtol=1e-10, atol=1e-14)
        assert not update.any()                     # the scratch is left zero
        if margin_bounds:
            assert counters[K.PC_REFRESHES] >= 3
        # the mean of the dual iterates of the last half, kept lazily, and the w it represents
        mean_lazy = (scale_sum[0] * dual - dual_lag) / (n_iter - first + 1)
        assert_allclose(mean_lazy, mean_dual, rtol=1e-9, atol=1e-14)
        w_mean = np.zeros(6)
        K.combine_rows(*packed.arrays, mean_lazy * y / lam, bias_feature, w_mean)
        assert_allclose(w_mean, mean, rtol=1e-9, atol=1e-12)
    # the dual variables represent w: w = (1/lambda) sum_i alpha_i y_i (x_i, bias_feature)
    X1 = np.hstack([X.toarray() if sparse else X, np.full((120, 1), bias_feature)])
    assert_allclose(X1.T @ (want_dual * y) / lam, want, rtol=1e-10, atol=1e-12)


def test_pegasos_average_survives_folds_of_the_scale():
    """Unscaled features (values up to 255, lambda = 1/n) project w at most steps, so the
    dual scale falls below SCALE_FLOOR and is folded into the stored values again and
    again; the lazily kept average of the dual iterates still equals their average, taken
    here iteration by iteration."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 255, size=(300, 3))
    y = np.where(X[:, 0] + X[:, 1] > 255 + 20 * rng.normal(size=300), 1.0, -1.0)
    packed = PackedData.from_matrix(X)
    norms = np.sqrt(packed.sq_norms + 1.0)
    n_iter, first = 200, 101
    batches = rng.integers(0, 300, size=(n_iter, 10))
    v, w_ref, u = np.zeros(4), np.zeros(4), np.zeros(300)
    update, touched, mark = np.zeros(4), np.empty(4, dtype=np.int64), np.zeros(4, np.int64)
    rule = K.new_rule(*resort_schedule(packed, 10, pegasos=True))
    counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
    dual, dual_scale = np.zeros(300), np.ones(1)
    dual_lag, scale_sum = np.zeros(300), np.zeros(1)
    iterates, folds = [], 0
    for t0 in range(n_iter):
        K.pegasos_steps(*packed.arrays, norms, y, np.ones(300), 1.0, batches[t0:t0 + 1], t0,
                        1 / 300, 1.0, True, True, rule, u, w_ref, v, update, touched, mark, dual,
                        dual_scale, first, dual_lag, scale_sum, counters)
        folds += dual_scale[0] == 1.0 and t0 > 0
        if t0 + 1 >= first:
            iterates.append(dual_scale[0] * dual)
    assert folds > 20
    mean = np.mean(iterates, axis=0)
    assert_allclose((scale_sum[0] * dual - dual_lag) / (n_iter - first + 1), mean,
                    rtol=1e-8, atol=1e-12 * mean.max())


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.data("a9a")
def test_pegasos_identical_with_and_without_bounds(a9a, sparse):
    X, y = a9a[0], a9a[1]
    X = X if sparse else X.toarray()
    params = dict(C=1.0, batch_size=1000, max_iter=2000, random_state=3)
    plain = PegasosSVC(margin_bounds=False, **params).fit(X, y)
    bounded = PegasosSVC(**params).fit(X, y)
    assert_array_equal(bounded.coef_, plain.coef_)
    assert_array_equal(bounded.intercept_, plain.intercept_)
    assert plain.training_info_["examined_fraction"] == [1.0]
    # the bounds decided part of the drawn points (a9a, k = 1000: 10-30 %, path-dependent)
    assert bounded.training_info_["margins_computed"][0] < 0.95 * 2000 * 1000
    assert bounded.training_info_["n_refreshes"][0] >= 1


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("k", [10, 1])
def test_pegasos_refreshes_leave_the_iterates_alone(sparse, k):
    """Bit for bit with and without bounds where the ball's projections (a large C) go on
    after many refreshes: a refresh must not touch the iterates' own state (||v||^2)."""
    X, y = _problem(n=300, d=10, sparse=sparse)
    params = dict(C=300.0, batch_size=k, max_iter=30_000 // k, random_state=0)
    plain = PegasosSVC(margin_bounds=False, **params).fit(X, y)
    bounded = PegasosSVC(**params).fit(X, y)
    assert bounded.training_info_["n_refreshes"][0] >= 5
    assert_array_equal(bounded.coef_, plain.coef_)
    assert_array_equal(bounded.intercept_, plain.intercept_)


def test_pegasos_solver_counts_refreshes():
    X, y = _problem(n=2000, d=10)
    packed = PackedData.from_matrix(X)
    result = solve_pegasos(packed, y, np.ones(len(y)), 1e-3, 50, 3000, 1.0, True,
                           np.random.default_rng(0))
    c = result.counters
    assert c[K.PC_REFRESHED] == c[K.PC_REFRESHES] * 2000
    assert 0 < c[K.PC_EXAMINED] < 3000 * 50


@pytest.mark.data("a9a")
def test_pegasos_average_of_the_last_half_is_accurate_at_the_defaults(a9a):
    """At C = 1 (lambda = 1/(C n), steps 1/(lambda t) large for long) the last iterate is
    noisy (a9a, seeds 0-3: 83.3-84.7 %); the average of the last half is not (84.9-85.0 %)."""
    X, y, X_test, y_test = a9a
    averaged = [PegasosSVC(random_state=s).fit(X, y).score(X_test, y_test) for s in range(4)]
    last = [PegasosSVC(random_state=s, average=False).fit(X, y).score(X_test, y_test)
            for s in range(4)]
    assert min(averaged) >= 0.845 and max(averaged) - min(averaged) < 0.003
    assert min(last) < min(averaged) - 0.01


@pytest.mark.data("a9a")
def test_pegasos_accuracy_and_determinism(a9a):
    X, y, X_test, y_test = a9a
    clf = PegasosSVC(C=0.1, random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) >= 0.84
    again = PegasosSVC(C=0.1, random_state=0).fit(X, y)
    assert_array_equal(clf.coef_, again.coef_)
    other = PegasosSVC(C=0.1, random_state=1).fit(X, y)
    assert not np.array_equal(clf.coef_, other.coef_)


@pytest.mark.data("usps")
def test_pegasos_multiclass_n_jobs_invariant():
    X, y, X_test, y_test = load_dataset("usps")
    one = PegasosSVC(C=0.1, random_state=0, n_jobs=1).fit(X, y)
    two = PegasosSVC(C=0.1, random_state=0, n_jobs=2).fit(X, y)
    assert_array_equal(one.coef_, two.coef_)
    assert one.score(X_test, y_test) >= 0.87


# ---------------------------------------------------------------- Pegasos: duality gap
def _gram(X, kernel, bias2):
    """k'(x_i, x_j) = k(x_i, x_j) + bias2 over the rows of X (linear or rbf with gamma 0.5)."""
    return (X @ X.T if kernel == "linear" else rbf_kernel(X, X, gamma=0.5)) + bias2


def _primal(Kp, y, upper, lam, beta):
    """P(w) for w = sum_j beta_j phi'(x_j): lambda/2 beta K' beta + sum_i u_i hinge_i."""
    f = Kp @ beta
    return 0.5 * lam * beta @ f + upper @ np.maximum(0.0, 1.0 - y * f)


def _dual(Kp, y, lam, alpha):
    """D(alpha) = sum_i alpha_i - 1/(2 lambda) (alpha y)' K' (alpha y)."""
    return alpha.sum() - (alpha * y) @ Kp @ (alpha * y) / (2 * lam)


def _best_scaled_dual(Kp, y, lam, alpha, upper):
    """max of :func:`_dual` over the multiples theta alpha in the box 0 <= theta alpha <= u,
    by a bounded scalar search on the brute-force D."""
    from scipy.optimize import minimize_scalar
    most = np.min(upper[alpha > 0] / alpha[alpha > 0])
    found = minimize_scalar(lambda theta: -_dual(Kp, y, lam, theta * alpha), bounds=(0.0, most),
                            method="bounded", options={"xatol": 1e-12 * most})
    return max(-found.fun, _dual(Kp, y, lam, most * alpha))


def _tight_dual_solve(Kp, y, upper, lam):
    """max D over the box 0 <= alpha <= u (no equality constraint: the offset is
    regularised) by L-BFGS-B; returns (D(alpha*), P(w(alpha*))), which enclose P*."""
    from scipy.optimize import minimize

    Q = np.outer(y, y) * Kp
    best = minimize(lambda a: -(a.sum() - a @ Q @ a / (2 * lam)),
                    np.zeros(len(y)), jac=lambda a: -(1.0 - Q @ a / lam), method="L-BFGS-B",
                    bounds=[(0.0, u) for u in upper],
                    options={"gtol": 1e-14, "ftol": 1e-16, "maxiter": 100_000})
    return _dual(Kp, y, lam, best.x), _primal(Kp, y, upper, lam, best.x * y / lam)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "precomputed"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pegasos_duality_gap_matches_brute_force(kernel, fit_intercept, n_classes):
    """objective = P(w) of the returned model and dual_objective = D(theta alpha) of
    Pegasos' dual variables clipped to the box and scaled by the best theta that keeps them
    in it, recomputed with NumPy from the model (per binary one-vs-rest model, with sample
    weights)."""
    X, y = _problem(n=150, d=5)
    labels = (np.arange(150) % 3 if n_classes == 3 else (y > 0)).astype(int)
    sw = np.random.default_rng(3).choice([0.5, 1.0, 3.0], 150)
    C, bias2 = 2.0, float(fit_intercept)
    lam = 1.0 / (C * sw.sum())
    upper = sw / sw.sum()
    Kp = _gram(X, "rbf" if kernel == "precomputed" else kernel, bias2)
    params = dict(C=C, batch_size=10, max_iter=300, fit_intercept=fit_intercept,
                  multi_class="ovr", random_state=0)
    if kernel == "precomputed":
        clf = PegasosSVC(kernel="precomputed", **params).fit(Kp - bias2, labels, sw)
    else:
        clf = PegasosSVC(kernel=kernel, gamma=0.5, **params).fit(X, labels, sw)
    info = clf.training_info_
    targets = [np.where(labels == c, 1.0, -1.0) for c in clf.classes_]
    targets = targets[1:] if n_classes == 2 else targets
    for m, y_bin in enumerate(targets):
        if kernel == "linear":
            # the linear model keeps no expansion: replay the estimator's run in the solver
            seed = random_seeds(0, len(targets))[m]
            result = solve_pegasos(PackedData.from_matrix(X), y_bin, sw * 150 / sw.sum(), lam,
                                   10, 300, bias2, True, np.random.default_rng(seed),
                                   average=True)
            assert_allclose(result.w[:-1], clf.coef_[m], rtol=1e-12)
            X1 = np.hstack([X, np.full((150, 1), bias2)])
            alpha = np.minimum(result.dual, upper)
            w = np.append(clf.coef_[m], clf.intercept_[m])
            f = X @ clf.coef_[m] + clf.intercept_[m]
            primal = 0.5 * lam * w @ w + upper @ np.maximum(0.0, 1.0 - y_bin * f)
            dual = _best_scaled_dual(X1 @ X1.T, y_bin, lam, alpha, upper)
        else:
            beta = np.zeros(150)
            beta[clf.support_] = clf.dual_coef_[m]
            primal = _primal(Kp, y_bin, upper, lam, beta)
            dual = _best_scaled_dual(Kp, y_bin, lam, np.minimum(lam * y_bin * beta, upper),
                                     upper)
        assert info["objective"][m] == pytest.approx(primal, rel=1e-10)
        assert info["dual_objective"][m] == pytest.approx(dual, rel=1e-9, abs=1e-12)
        assert info["duality_gap"][m] == pytest.approx(primal - info["dual_objective"][m],
                                                       rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_pegasos_duality_gap_bounds_the_suboptimality(kernel, fit_intercept):
    """D(alpha) <= P* <= P(w), so duality_gap >= P(w) - P* >= 0, against a tight solve of
    the dual; the gap closes as T grows."""
    X, y = _problem(n=150, d=5)
    sw = np.random.default_rng(3).choice([0.5, 1.0, 3.0], 150)
    C, bias2 = 1.0, float(fit_intercept)
    lam, upper = 1.0 / (C * sw.sum()), sw / sw.sum()
    Kp = _gram(X, kernel, bias2)
    dual_star, primal_star = _tight_dual_solve(Kp, y, upper, lam)
    assert 0.0 <= primal_star - dual_star <= 1e-6 * primal_star     # encloses P* tightly
    gaps = []
    for T in (30, 300, 3000):
        clf = PegasosSVC(kernel=kernel, gamma=0.5, C=C, batch_size=10, max_iter=T,
                         fit_intercept=fit_intercept, random_state=0).fit(X, y, sw)
        info = clf.training_info_
        primal, gap = info["objective"][0], info["duality_gap"][0]
        assert primal >= dual_star - 1e-12                    # P(w) >= P*
        assert gap >= primal - primal_star - 1e-12            # gap >= P(w) - P*
        gaps.append(gap)
    assert gaps[2] < gaps[0]


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_pegasos_objective_is_liblinears(fit_intercept):
    """The objective (offset regularised as a feature 1, weights as C multipliers) is
    LinearSVC's (LIBLINEAR, hinge loss, intercept_scaling=1) divided by C S."""
    X, y = _problem(n=150, d=5)
    sw = np.random.default_rng(3).choice([0.5, 1.0, 3.0], 150)
    C = 1.0
    lam, upper = 1.0 / (C * sw.sum()), sw / sw.sum()
    svc = LinearSVC(C=C, loss="hinge", fit_intercept=fit_intercept, intercept_scaling=1.0,
                    tol=1e-10, max_iter=1_000_000).fit(X, y, sample_weight=sw)
    w = np.append(svc.coef_[0], svc.intercept_[0] if fit_intercept else 0.0)
    f = X @ svc.coef_[0] + (svc.intercept_[0] if fit_intercept else 0.0)
    liblinear = 0.5 * lam * w @ w + upper @ np.maximum(0.0, 1.0 - y * f)
    dual_star, primal_star = _tight_dual_solve(_gram(X, "linear", float(fit_intercept)), y,
                                               upper, lam)
    assert liblinear == pytest.approx(primal_star, rel=1e-6)
    clf = PegasosSVC(C=C, batch_size=10, max_iter=3000, fit_intercept=fit_intercept,
                     random_state=0).fit(X, y, sw)
    assert clf.training_info_["duality_gap"][0] >= clf.training_info_["objective"][0] - liblinear


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("Estimator", [HuberSVC, PegasosSVC])
@pytest.mark.parametrize("params, match", [
    ({"C": 0.0}, "C"), ({"C": -1.0}, "C"), ({"fit_intercept": "yes"}, "fit_intercept"),
    ({"margin_bounds": 1.5}, "margin_bounds"), ({"max_iter": 0}, "max_iter"),
])
def test_bad_parameters(Estimator, params, match):
    X, y = _problem(n=50)
    with pytest.raises(ValueError, match=match):
        Estimator(**params).fit(X, y)


@pytest.mark.parametrize("params, match", [({"h": 0.0}, "h"), ({"h": 1.0}, "h"),
                                           ({"eta0": 0.0}, "eta0"), ({"tol": -1.0}, "tol")])
def test_bad_huber_parameters(params, match):
    X, y = _problem(n=50)
    with pytest.raises(ValueError, match=match):
        HuberSVC(**params).fit(X, y)


@pytest.mark.parametrize("Estimator", [HuberSVC, PegasosSVC])
def test_bad_data(Estimator):
    X, y = _problem(n=50)
    with pytest.raises(ValueError, match="at least 2 classes"):
        Estimator().fit(X, np.ones(50))
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Estimator().fit(X_nan, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = Estimator(max_iter=50).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    bad = sp.csr_matrix(X)
    bad.indices[0] = 99
    with pytest.raises(ValueError, match="CSR"):
        Estimator().fit(bad, y)
    with pytest.raises(ValueError, match="CSR"):
        clf.predict(bad)


# ---------------------------------------------------------------- kernel Pegasos
KERNELS = {
    "rbf": (Kernel("rbf", 0.5), lambda a, b: naive.rbf(a, b, 0.5)),
    "poly": (Kernel("poly", 0.5, 2, 1.0), lambda a, b: naive.poly(a, b, 0.5, 2, 1.0)),
    "linear": (Kernel("linear"), lambda a, b: float(np.dot(a, b))),
    "precomputed": (Kernel("precomputed"), lambda a, b: naive.rbf(a, b, 0.5)),
}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bias2", [1.0, 0.0])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [8, 1])             # 1: the default batch_size
@pytest.mark.usefixtures("csr_loops")
def test_kernel_pegasos_follows_the_oracle(monkeypatch, sparse, bias2, kernel, weighted, k):
    X, y = _problem(n=80, d=4, sparse=sparse)
    lam = 1e-2
    n_iter = 320 // k
    batches = _no_row_twice_in_a_row(np.random.default_rng(5).integers(0, 80, (n_iter, k)))
    kernel, function = KERNELS[kernel]
    # heavy rows: above 100 times the median weight (fastsvm._importance)
    weight = (np.random.default_rng(9).choice([0.5, 1.0, 4.0, 1000.0], len(y)) if weighted
              else np.ones(len(y)))
    want = naive.kernel_pegasos(X, y, lam, batches, None, bias2, weight, function)
    dense = X.toarray() if sparse else X
    data = (np.array([[function(a, b) for b in dense] for a in dense])
            if kernel.on_gram else X)
    packed = PackedData.from_matrix(data)
    diagonal = np.array([function(a, a) for a in dense])
    mean = naive.kernel_pegasos(X, y, lam, batches, None, bias2, weight, function,
                                average_from=n_iter // 2 + 1)
    monkeypatch.setattr(_options, "RESORT_C", 1.0)      # refreshes every n / k steps: 4
    for margin_bounds, scaled in ((False, False), (True, False), (True, True)):
        monkeypatch.setattr(_options, "SCALED_REFERENCE", scaled)
        for average, expected in ((False, want), (True, mean)):   # the mean of the last half
            result = solve_kernel_pegasos(packed, y, weight, lam, kernel, diagonal, k, n_iter,
                                          bias2, margin_bounds, _ReplayBatches(batches),
                                          average=average)
            beta = np.zeros(80)
            beta[result.support] = result.dual
            # rows of weight 1000 dominate the coefficients, and their steps amplify the
            # rounding to about 2e-9 (without the cap the steps miss by far more)
            assert_allclose(beta, expected, rtol=1e-7 if weighted else 1e-9,
                            atol=1e-12 * max(1.0, np.abs(expected).max()))
            if margin_bounds:
                assert result.counters[K.PC_REFRESHES] >= 3


@pytest.mark.parametrize("margin_bounds", [False, True])
def test_kernel_pegasos_batch_larger_than_the_data_follows_the_oracle(margin_bounds):
    """Batches of 30 draws from 12 rows repeat every row: each distinct row is examined
    once and its draws counted, the same steps as the oracle's draw by draw."""
    X, y = _problem(n=12, d=4)
    lam = 1e-2
    batches = np.random.default_rng(2).integers(0, 12, size=(25, 30))
    weight = np.random.default_rng(3).choice([0.5, 1.0, 4.0, 1000.0], len(y))
    kernel, function = KERNELS["rbf"]
    want = naive.kernel_pegasos(X, y, lam, batches, None, 1.0, weight, function)
    diagonal = np.array([function(a, a) for a in X])
    result = solve_kernel_pegasos(PackedData.from_matrix(X), y, weight, lam, kernel, diagonal,
                                  30, 25, 1.0, margin_bounds, _ReplayBatches(batches))
    beta = np.zeros(12)
    beta[result.support] = result.dual
    assert_allclose(beta, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    assert result.counters[K.PC_EXAMINED] <= 25 * 12


class _ReplayBatches:
    """Stands in for a Generator: hands out the given batches in order."""

    def __init__(self, batches):
        self.batches, self.pos = batches, 0

    def integers(self, low, high, size, dtype):
        out = self.batches[self.pos:self.pos + size[0]]
        self.pos += size[0]
        return out.astype(dtype)


def test_kernel_weight_distance_matches_eq_6():
    """The incrementally kept ||w||^2, <w, w'> and ||w'||^2 give eq. (6)'s distance."""
    X, y = _problem(n=60, d=4)
    lam, gamma = 1e-2, 0.5
    packed = PackedData.from_matrix(X)
    batches = np.random.default_rng(6).integers(0, 60, size=(30, 6))
    Kmat = np.array([[naive.rbf(a, b, gamma) + 1.0 for b in X] for a in X])
    beta_ref = naive.kernel_pegasos(X, y, lam, batches[:10], gamma, 1.0)
    beta = naive.kernel_pegasos(X, y, lam, batches, gamma, 1.0)
    # run 10 iterations, refresh (w_ref = w_10), then 20 more
    svt, sv_sq, coef = np.zeros((4, 60)), np.zeros(60), np.zeros(60)
    sv_row, ones, norms = np.zeros(60, dtype=np.int64), np.ones(60), np.full(60, np.sqrt(2.0))
    slot_of, u = np.full(60, -1, dtype=np.int64), np.zeros(60)
    state = np.zeros(K.N_KSTATE)
    state[K.KS_SCALE] = 1.0
    counters = np.zeros(K.N_PEGASOS_COUNTERS, dtype=np.int64)
    rule = K.new_rule(1e9, 1e9)

    def steps(first, last, n_sv):
        return K.kernel_pegasos_steps(*packed.arrays, packed.sq_norms, norms, y, ones, 1.0,
                                      batches[first:last], first, lam, Kernel("rbf").code, gamma,
                                      3, 0.0, 1.0, True, False, rule, u, svt, sv_sq, sv_row,
                                      coef, slot_of, n_sv, state, 30, np.zeros(60), counters)

    n_sv = steps(0, 10, 0)
    rule[K.R_PERIOD] = 0.0                 # refresh at the next iteration...
    rule[K.R_PRUNED_LAST] = 0.0
    n_sv = steps(10, 11, n_sv)
    assert counters[K.PC_REFRESHES] == 1
    assert_allclose(u, y * (Kmat @ beta_ref), rtol=1e-10, atol=1e-12)
    rule[K.R_PERIOD] = 1e9                 # ...and never again
    steps(11, 30, n_sv)
    distance = np.sqrt(state[K.KS_NORM2] - 2 * state[K.KS_CROSS] + state[K.KS_REF_NORM2])
    assert_allclose(state[K.KS_NORM2], beta @ Kmat @ beta, rtol=1e-9)
    assert_allclose(distance, naive.weight_distance(Kmat, beta, beta_ref), rtol=1e-6)


@pytest.fixture(scope="module")
def phishing():
    X, y, X_test, y_test = load_dataset("phishing")
    return X[:3000], y[:3000], X_test, y_test


@pytest.mark.data("phishing")
def test_rbf_pegasos_accuracy_phishing(phishing):
    X, y, X_test, y_test = phishing
    clf = PegasosSVC(kernel="rbf", gamma=8.0, C=8.0, random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) >= 0.94        # SVC on all 8,844 rows: 0.969
    assert clf.support_vectors_.shape == (len(clf.support_), 68)
    assert sp.issparse(clf.support_vectors_)        # of sparse input, as SVC's
    assert_allclose(clf.support_vectors_.toarray(), X[clf.support_].toarray())


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.data("phishing")
def test_rbf_pegasos_identical_with_and_without_bounds(phishing, sparse):
    X, y = phishing[0][:4000], phishing[1][:4000]      # 2 refreshes of the bounds
    X = X if sparse else X.toarray()
    params = dict(kernel="rbf", gamma=8.0, C=1.0, batch_size=1000, max_iter=100, random_state=1)
    plain = PegasosSVC(margin_bounds=False, **params).fit(X, y)
    bounded = PegasosSVC(**params).fit(X, y)
    assert_array_equal(bounded.support_, plain.support_)
    assert_array_equal(bounded.dual_coef_, plain.dual_coef_)
    assert_array_equal(bounded.intercept_, plain.intercept_)
    assert bounded.training_info_["n_refreshes"][0] >= 1


@pytest.mark.data("usps")
def test_rbf_pegasos_multiclass_and_labels():
    X, y, X_test, y_test = load_dataset("usps")
    labels = np.array([f"digit {v - 1}" for v in y[:600]])
    clf = PegasosSVC(kernel="rbf", gamma=2.0 ** -7, C=10.0, random_state=0)
    clf.fit(X[:600], labels)
    assert clf.dual_coef_.shape == (45, len(clf.support_))     # one-vs-one pairs
    predicted = clf.predict(X_test)
    assert np.mean(predicted == np.array([f"digit {v - 1}" for v in y_test])) >= 0.8
    # the pairs' decision values are the kernel expansion over the support vectors
    K = rbf_kernel(X_test[:5], clf.support_vectors_, gamma=2.0 ** -7)
    assert_allclose(clf.decision_function(X_test[:5]),
                    ovo_scores(K @ clf.dual_coef_.T + clf.intercept_, 10), rtol=1e-9, atol=1e-9)
    # refitting with the linear kernel leaves no kernel attributes behind
    clf.set_params(kernel="linear").fit(X[:600], labels)
    assert hasattr(clf, "coef_") and not hasattr(clf, "dual_coef_")


@pytest.mark.parametrize("kernel", ["rbf", "linear", "precomputed"])
def test_pegasos_one_vs_one_pairs_are_binary_fits_on_their_two_classes(kernel):
    """Each one-vs-one pair (i, j) is the binary PegasosSVC of classes i and j fitted on
    their rows alone (a kernel matrix: its block of their rows), with its own
    lambda = 1 / (C S_pair) and the pair's seed; the default for a kernel (as SVC), not
    for the linear kernel (as LinearSVC)."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(240, n_features=3, centers=4, cluster_std=2.5, random_state=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    gram = rbf_kernel(X, X, gamma=0.5)
    data = gram if kernel == "precomputed" else X
    params = dict(kernel=kernel, gamma=0.5, max_iter=700, multi_class="ovo")
    clf = PegasosSVC(random_state=np.random.RandomState(7), **params)
    clf.fit(data, y, sample_weight=weights)
    assert len(clf.intercept_) == 6 and clf.n_iter_.tolist() == [700] * 6
    f = (X @ clf.coef_.T if kernel == "linear" else
         gram[:, clf.support_] @ clf.dual_coef_.T) + clf.intercept_
    assert_allclose(clf.decision_function(data), ovo_scores(f, 4), rtol=1e-10)
    for k, (i, j) in enumerate(ovo_pairs(4)):
        state = np.random.RandomState(7)
        state.randint(np.iinfo(np.int32).max, size=k)       # the seeds of the pairs before
        rows = np.flatnonzero(np.isin(y, [i, j]))
        pair = PegasosSVC(random_state=state, **params)
        if kernel == "precomputed":
            pair.fit(gram[np.ix_(rows, rows)], y[rows], sample_weight=weights[rows])
            assert_allclose(f[:, k], pair.decision_function(gram[:, rows]), rtol=1e-10,
                            atol=1e-12)
        else:
            pair.fit(X[rows], y[rows], sample_weight=weights[rows])
            assert_allclose(f[:, k], pair.decision_function(X), rtol=1e-10, atol=1e-12)
        for key in ("objective", "duality_gap", "margins_computed"):
            assert clf.training_info_[key][k] == pytest.approx(pair.training_info_[key][0],
                                                               rel=1e-9)
        if kernel != "linear":
            assert_array_equal(clf.support_[clf.dual_coef_[k] != 0], rows[pair.support_])
    assert clf.training_info_["multi_class"] == "ovo"
    default = PegasosSVC(kernel=kernel, random_state=0).fit(data, y)
    assert len(default.intercept_) == (4 if kernel == "linear" else 6)
    assert default.training_info_["multi_class"] == ("ovr" if kernel == "linear" else "ovo")


def test_kernel_pegasos_one_vs_one_support_indexes_the_callers_rows():
    """Rows of weight 0 are dropped before the pairs are formed, so a pair's support
    vectors index its rows among the kept ones: ``support_`` maps them back to X's rows,
    and the model is that of X without those rows."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(300, n_features=3, centers=4, cluster_std=2.0, random_state=1)
    weights = np.ones(300)
    weights[::3] = 0.0
    params = dict(kernel="rbf", gamma=0.5, max_iter=2000, random_state=0)
    clf = PegasosSVC(**params).fit(X, y, sample_weight=weights)
    assert weights[clf.support_].min() == 1.0
    assert_array_equal(clf.support_vectors_, X[clf.support_])
    kept = PegasosSVC(**params).fit(X[weights > 0], y[weights > 0])
    assert_array_equal(clf.support_, np.flatnonzero(weights > 0)[kept.support_])
    assert_allclose(clf.decision_function(X), kept.decision_function(X), rtol=1e-12)


def test_kernel_pegasos_one_vs_one_draws_each_pair_its_share_of_the_passes():
    """A pair makes as many passes over its rows as the whole problem's default T makes
    over all rows: 20, or 100,000 draws on all rows (each pair of 4 equal classes half of
    that), so the 6 pairs draw 300,000 points where 4 one-vs-rest models draw 400,000."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(240, n_features=3, centers=4, random_state=0)
    assert PegasosSVC(kernel="rbf", random_state=0).fit(X, y).n_iter_.tolist() == [50_000] * 6
    ovr = PegasosSVC(kernel="rbf", multi_class="ovr", random_state=0).fit(X, y)
    assert ovr.n_iter_.tolist() == [100_000] * 4
    big = PegasosSVC(kernel="rbf", batch_size=3, random_state=0).fit(np.tile(X, (30, 1)),
                                                                     np.tile(y, 30))
    assert big.n_iter_.tolist() == [-(-20 * 3600 // 3)] * 6


def test_kernel_pegasos_one_vs_one_draws_classes_that_are_no_half_space():
    """Three nested shells: the middle one is a ring against the others, which no
    one-vs-rest model separates; one-vs-one (the default with a kernel) scores as SVC.
    On 4,900 rows (6 noise features) one-vs-rest had been 12-14 points below SVC."""
    from sklearn.datasets import make_gaussian_quantiles

    X, y = make_gaussian_quantiles(n_samples=2000, n_features=4, n_classes=3, random_state=0)
    X = np.hstack([X, np.random.default_rng(0).normal(size=(len(X), 4))])
    X_train, y_train, X_test, y_test = X[:1500], y[:1500], X[1500:], y[1500:]
    svc = SVC().fit(X_train, y_train).score(X_test, y_test)
    ovo = PegasosSVC(kernel="rbf", random_state=0).fit(X_train, y_train).score(X_test, y_test)
    ovr = PegasosSVC(kernel="rbf", multi_class="ovr", random_state=0).fit(X_train, y_train)
    assert ovo >= svc - 0.01
    assert ovr.score(X_test, y_test) < svc - 0.05


def test_pegasos_takes_one_point_per_step_by_default():
    """A Pegasos step pays its points' margins whatever the batch (w is kept scaled, so the
    linear kernel's shrink and projection are O(1)), so the 20 default passes are 20 n
    single-point steps, and Pegasos' distance to the optimum falls with the steps.  On a
    4 x 4 checkerboard of 7,000 rows kernel Pegasos with the paper's k = 100 (1,400 steps)
    scored 70.4 % where SVC scores 76.8 %; one point per step scores 79.5 %.  Below 5,000
    rows the steps draw 100,000 points, as 1,000 iterations of 100 did."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 4, size=(10000, 2))
    y = (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2
    X_train, y_train, X_test, y_test = X[:7000], y[:7000], X[7000:], y[7000:]
    rbf = PegasosSVC(kernel="rbf", random_state=0).fit(X_train, y_train)
    assert rbf.n_iter_.tolist() == [20 * 7000]
    # one refresh after 10 passes' steps; the one due at the last step would not pay
    assert rbf.training_info_["n_refreshes"] == [1]
    svc = SVC().fit(X_train, y_train)
    assert rbf.score(X_test, y_test) >= svc.score(X_test, y_test) - 0.01
    assert PegasosSVC(random_state=0).fit(X_train, y_train).n_iter_.tolist() == [20 * 7000]
    small = PegasosSVC(kernel="rbf", random_state=0).fit(X_train[:300], y_train[:300])
    assert small.n_iter_.tolist() == [100_000]
    linear_small = PegasosSVC(batch_size=7, random_state=0).fit(X_train[:300], y_train[:300])
    assert linear_small.n_iter_.tolist() == [14286]         # ceil(100,000 / 7)


def test_pegasos_compute_gap_false_skips_the_certificate_only():
    X, y = _problem(n=150, d=5)
    for kernel in ("linear", "rbf"):
        params = dict(kernel=kernel, batch_size=10, max_iter=100, random_state=0)
        full = PegasosSVC(**params).fit(X, y)
        bare = PegasosSVC(compute_gap=False, **params).fit(X, y)
        assert_array_equal(bare.decision_function(X), full.decision_function(X))
        keys = {"objective", "dual_objective", "duality_gap", "time_certificate_s"}
        assert keys <= set(full.training_info_)
        assert not keys & set(bare.training_info_)


def test_pegasos_warns_when_its_model_is_worse_than_zero():
    """Unscaled features (pixel values 0-255, as skin_nonskin's) make Pegasos' steps
    1/(lambda t) overshoot: the objective of the returned model exceeds P(0) = 1, and the
    fit says so instead of returning a silently wrong model.  Scaled, it converges."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 255, size=(3000, 3))
    y = (X @ [1.0, -1.0, 0.5] > 60).astype(int)
    with pytest.warns(ConvergenceWarning, match="objective .* is above 1"):
        clf = PegasosSVC(random_state=0).fit(X, y)
    assert max(clf.training_info_["objective"]) > 1
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        scaled = PegasosSVC(random_state=0).fit(Z, y)
    assert scaled.score(Z, y) > 0.9 and max(scaled.training_info_["objective"]) < 1


def test_mean_share_is_the_weighted_offset_share():
    from fastsvm.bounds.estimator import mean_share

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)) + [3.0, 0.0, -1.0, 0.5]
    w = rng.uniform(0.1, 2.0, 50)
    mu = w @ X / w.sum()
    expected = mu @ mu / (w @ (X**2).sum(axis=1) / w.sum())
    assert mean_share(X, w) == pytest.approx(expected, rel=1e-12)
    assert mean_share(sp.csr_matrix(X), w) == pytest.approx(expected, rel=1e-12)
    assert mean_share(X.astype(np.float32), w) == pytest.approx(expected, rel=1e-6)
    assert mean_share(np.zeros((3, 2)), np.ones(3)) == 0.0


def test_linear_pegasos_warns_on_features_far_from_centred():
    """Features sharing an offset of 50 (sensor readings, temperatures in kelvin): Pegasos'
    steps converge slowly.  In batches of 100 its model is 6-11 points below LinearSVC's
    with an objective below that of w = 0, so only the features' offset can tell.  One point
    per step (the default) swings along the offset further, above the objective of w = 0,
    and that warning says to scale too.  Centred, no warning."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    X, y = make_classification(6000, 10, n_informative=5, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X + 50, y, test_size=0.3, random_state=0, stratify=y)
    with pytest.warns(ConvergenceWarning, match="far from centred .* 99.9"):
        far = PegasosSVC(batch_size=100, random_state=0).fit(Xtr, ytr)
    assert max(far.training_info_["objective"]) < 1        # the other warning is silent
    assert far.score(Xte, yte) < LinearSVC().fit(Xtr, ytr).score(Xte, yte) - 0.05  # 76.3, 82.9
    with pytest.warns(ConvergenceWarning, match="above 1, .* scale them"):
        PegasosSVC(random_state=0).fit(Xtr, ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        centred = PegasosSVC(random_state=0).fit(Xtr - 50, ytr)
        PegasosSVC(kernel="rbf", random_state=0).fit(Xtr[:300], ytr[:300])  # shift-invariant
    assert centred.score(Xte - 50, yte) > far.score(Xte, yte) + 0.05
