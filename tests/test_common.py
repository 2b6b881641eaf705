"""scikit-learn's estimator checks for every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

STOCHASTIC = ("a stochastic solver: a weight of 2 equals a repeated row in expectation over the "
              "random draws (tested across seeds in tests/test_weights.py), not exactly")
LANDMARKS = ("the landmarks are drawn uniformly from the rows, so a repeated row changes which "
             "rows become landmarks and hence the embedding; on one embedding the dual "
             "coordinate descent solves weighted and repeated problems to the same certified "
             "optimum (tested in tests/test_nystrom.py)")
ONE_PASS = ("the one-pass rule gives a repeated row nothing more once its margin is 1, so weights "
            "multiply the coefficient instead (see MarginSGDSVC's docstring and "
            "tests/test_weights.py)")


PEGASOS_SHORT_OF_OPTIMUM = (
    "class_weight={0: 1000, 1: 1e-4} multiplies C by 1000 for class 0, and Pegasos after the "
    "check's max_iter=1000 is still far from that regularisation's optimum (54-56 % of class 0 "
    "predicted over seeds 0-3 with the average of the last half of the iterates, 48-96 % with "
    "the last iterate; 92-100 % after 20,000 iterations, tested in tests/test_weights.py)")


POST_HOC_OFFSET = ("with class 0 weighted 10^7 times the others, BudgetSVC's SGD passes leave "
                   "class 0's points far beyond the margin, and b, set afterwards as the exact "
                   "hinge minimiser for the final w, can move to the end of the wide interval "
                   "where class 0 has no loss, so that points far from class 0 take the other "
                   "class (SVC's equality constraint ties b to the coefficients instead). The "
                   "share of class 0 predicted depends on the seed: with three classes 86-100 % "
                   "over seeds 0-5 at budget 50 (86 % at the check's seed 0), against the "
                   "check's 87 %. The check's precomputed kernel, which failed at every seed "
                   "(2-8 %) before the steps trained an offset, passes (tested over seeds in "
                   "tests/test_budget_svc.py). Class weights are tested in tests/test_weights.py")


def expected_failed_checks(estimator):
    if isinstance(estimator, HuberSVC):     # deterministic, and passes every check
        return {}
    if isinstance(estimator, MarginSGDSVC):
        reason = ONE_PASS
    elif isinstance(estimator, NystromSVC):
        reason = LANDMARKS
    else:
        reason = STOCHASTIC
    expected = {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    if isinstance(estimator, PegasosSVC) and estimator.kernel == "linear":
        expected["check_class_weight_classifiers"] = PEGASOS_SHORT_OF_OPTIMUM
    if isinstance(estimator, BudgetSVC) and estimator.kernel != "precomputed":
        expected["check_class_weight_classifiers"] = POST_HOC_OFFSET
    return expected


@parametrize_with_checks([BudgetSVC(budget=50, random_state=0),
                          NystromSVC(random_state=0),
                          HuberSVC(),
                          PegasosSVC(random_state=0),
                          # 2,000 single-point steps: the default's 100,000 cost 25 s here
                          PegasosSVC(kernel="rbf", max_iter=2000, random_state=0),
                          MarginSGDSVC(random_state=0),
                          MarginSGDSVC(sampling="permutation", random_state=0),
                          # kernel matrices (scikit-learn's checks pass them for "pairwise")
                          BudgetSVC(kernel="precomputed", maintenance="remove", budget=100,
                                    random_state=0),
                          NystromSVC(kernel="precomputed", n_components=20, random_state=0),
                          PegasosSVC(kernel="precomputed", max_iter=2000, random_state=0),
                          MarginSGDSVC(kernel="precomputed", random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ SVC's surface, shared
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

ESTIMATORS = {
    "BudgetSVC": lambda: BudgetSVC(budget=50, random_state=0),
    "NystromSVC": lambda: NystromSVC(n_components=50, random_state=0),
    "HuberSVC": HuberSVC,
    "PegasosSVC": lambda: PegasosSVC(random_state=0),
    "PegasosSVC-rbf": lambda: PegasosSVC(kernel="rbf", max_iter=2000, random_state=0),
    "MarginSGDSVC": lambda: MarginSGDSVC(random_state=0),
}


@pytest.fixture(scope="module")
def three_classes():
    return make_classification(600, n_features=6, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_probabilities_through_calibrated_classifier_cv(name, three_classes):
    """SVC(probability=True) is deprecated in scikit-learn 1.9 for CalibratedClassifierCV;
    it wraps every fastsvm estimator (through decision_function)."""
    X, y = three_classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = CalibratedClassifierCV(ESTIMATORS[name](), cv=3).fit(X[:400], y[:400])
    proba = clf.predict_proba(X[400:])
    assert proba.shape == (200, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    assert np.mean(clf.predict(X[400:]) == y[400:]) > 0.7
    # the most probable class mostly agrees with the estimator's own prediction
    own = ESTIMATORS[name]().fit(X[:400], y[:400]).predict(X[400:])
    assert np.mean(proba.argmax(axis=1) == own) > 0.8


def _kernel_cases():
    """(estimator, kernel) for every kernel of every estimator class that takes coef0."""
    from sklearn.metrics.pairwise import linear_kernel

    seen = set()
    for name in sorted(ESTIMATORS):
        cls = type(ESTIMATORS[name]())
        if "coef0" in cls().get_params() and cls not in seen:
            seen.add(cls)
            for kernel in cls._kernels:
                yield name, linear_kernel if kernel == "callable" else kernel, kernel


NON_FINITE_PARAMETERS = [
    pytest.param(name, {param: value}, param, id=f"{name}-{param}={value}")
    for name in sorted(ESTIMATORS)
    for param, value in [("C", np.inf), ("C", np.nan), ("gamma", np.inf), ("gamma", np.nan)]
    if param in ESTIMATORS[name]().get_params()] + [
    # coef0 with every kernel, also where it is unused (rbf, linear, ...): SVC validates it
    pytest.param(name, {"kernel": kernel, "coef0": value}, "coef0 must be finite",
                 id=f"{name}-{kernel_name}-coef0={value}")
    for name, kernel, kernel_name in _kernel_cases() for value in (np.nan, np.inf, -np.inf)]


@pytest.mark.parametrize("name, params, match", NON_FINITE_PARAMETERS)
def test_non_finite_parameters_are_clear_errors(name, params, match, three_classes):
    X, y = three_classes
    clf = ESTIMATORS[name]()
    with pytest.raises(ValueError, match=match):
        clf.set_params(**params).fit(X, y)


def test_solvers_that_stop_on_a_tolerance_warn_at_their_cap(three_classes):
    X, y = three_classes
    with pytest.warns(ConvergenceWarning, match="max_stages=2"):
        NystromSVC(n_components=50, max_stages=2, tol=1e-12, random_state=0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        HuberSVC(max_iter=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)     # tol=None: no stopping rule
        NystromSVC(n_components=50, max_stages=2, tol=None, random_state=0).fit(X, y)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_verbose_fit_prints_a_summary_of_every_model(name, three_classes, capsys):
    """verbose=1 ends the fit with one summary line naming the estimator; where it gives
    the objective, it gives the range over all binary models, not the first one's."""
    X, y = three_classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ESTIMATORS[name]().set_params(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines and lines[-1].startswith(f"{type(clf).__name__}: "), lines
    if name in ("HuberSVC", "PegasosSVC", "PegasosSVC-rbf"):
        objectives = [o[-1] if isinstance(o, list) else o     # HuberSVC: the history
                      for o in clf.training_info_["objective"]]
        assert f"objectives {min(objectives):.6g} to {max(objectives):.6g} (3 models)" in lines[-1]
    if name == "NystromSVC":
        assert "(3 models)" in lines[-1]


def _traced_peak(function):
    """(result, peak bytes traced by tracemalloc while ``function()`` ran)."""
    import tracemalloc

    tracemalloc.start()
    try:
        return function(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("n_classes", [2, 6])
def test_decision_function_in_row_blocks(name, n_classes, monkeypatch, capsys):
    """decision_function scores rows in blocks whose binary models' values fit a quarter of
    PREDICT_CHUNK_BYTES: the same values as in one block, without the n x n_models array
    of all rows (one-vs-one over 6 classes: 15 values a row), with a progress bar when
    verbose."""
    X, y = make_classification(600, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ESTIMATORS[name]().fit(X, y)
    rows = np.tile(X, (50, 1)) + 0.01                       # 30,000 rows
    whole, whole_peak = _traced_peak(lambda: clf.decision_function(rows))
    n_models = len(clf.intercept_)
    monkeypatch.setattr("fastsvm._options.PREDICT_CHUNK_BYTES", 32 * 8 * n_models * 1000)
    blocks, peak = _traced_peak(lambda: clf.set_params(verbose=1).decision_function(rows))
    assert_allclose(blocks, whole, rtol=1e-12, atol=1e-12)             # 30 blocks
    assert "decision values" in capsys.readouterr().err
    assert_array_equal(clf.predict(rows), clf.classes_[np.argmax(whole, axis=1)] if n_classes > 2
                       else clf.classes_[(whole > 0).astype(int)])
    if n_models > n_classes:            # one-vs-one: most of the n x n_models array spared
        assert peak < whole_peak - 0.75 * 8 * n_models * len(rows)


@pytest.mark.parametrize("name, bytes_per_pair_row", [("BudgetSVC", 8), ("NystromSVC", 4)])
def test_one_vs_one_makes_each_pair_s_vectors_when_it_solves_it(name, bytes_per_pair_row):
    """A one-vs-one pair's vectors span all n rows (its targets; NystromSVC's also its step
    weights: 16 n bytes a pair); the 435 pairs of 30 classes had held them all at once,
    42 MB here for NystromSVC beside a 1.2 MB embedding."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(6000, n_features=4, centers=30, random_state=0)
    make = {"BudgetSVC": lambda: BudgetSVC(budget=20, epochs=1, random_state=0),
            "NystromSVC": lambda: NystromSVC(n_components=50, random_state=0)}[name]
    make().fit(X[:500], y[:500])                     # compiled before the measurement
    clf, peak = _traced_peak(lambda: make().fit(X, y))
    assert len(clf.intercept_) == 435 and clf.score(X, y) > 0.5
    assert peak < 435 * 6000 * bytes_per_pair_row


@pytest.mark.parametrize("make", [
    lambda **kw: BudgetSVC(kernel="linear", maintenance="remove", random_state=0, **kw),
    lambda **kw: MarginSGDSVC(kernel="linear", random_state=0, **kw)])
def test_linear_kernel_expansions_have_svcs_coef(make, three_classes, tmp_path):
    """SVC(kernel='linear').coef_: the features' weights of each binary model, from dense
    or CSR rows, also of a loaded model; other kernels have none (AttributeError), as SVC."""
    from fastsvm.persistence import load_model, save_model
    X, y = three_classes
    for classes, extra in ((2, {}), (3, {"multi_class": "ovr"} if "multi_class" in
                                      make().get_params() else {})):
        rows = np.isin(y, range(classes))
        Xc, yc = X[rows], y[rows]
        for data in (Xc, sp.csr_matrix(Xc)):
            clf = make(**extra).fit(data, yc)
            decision = clf.decision_function(Xc).reshape(len(Xc), -1)
            assert clf.coef_.shape == (len(clf.intercept_), X.shape[1])
            assert_allclose(Xc @ clf.coef_.T + clf.intercept_, decision, atol=1e-10)
    save_model(clf, tmp_path / "model.npz")
    assert_allclose(load_model(tmp_path / "model.npz").coef_, clf.coef_)
    rbf = make().set_params(kernel="rbf").fit(X, y)
    assert not hasattr(rbf, "coef_")
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        rbf.coef_
