"""Sample and class weights in every estimator, with SVC's meaning (see fastsvm.base).

The weight w_i multiplies sample i's loss term (its C): a weight of 0 is the
row being absent (exactly, in every solver), a weight of 2 the row appearing
twice (exactly for HuberSVC, in expectation over the random draws for the
stochastic solvers), scaling every weight by c is C times c.  Also the
weight behaviours that scikit-learn's sklearn/svm/tests/test_svm.py and
sklearn/linear_model/tests/test_sgd.py check, ported to the five estimators.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score
from sklearn.utils.class_weight import compute_class_weight

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

#: Small, fast settings of each estimator (random_state set by ``make``).  HuberSVC by the
#: paper's gradient descent: a fixed step sequence, so equal objectives give equal paths
#: (L-BFGS's line search turns rounding differences into other paths: see
#: test_huber_lbfgs_weight_two_is_the_row_twice); with the paper's h, where the bounds
#: spare most margins.
FAST = {
    "budget": (BudgetSVC, dict(budget=40, epochs=5)),
    "nystrom": (NystromSVC, dict(n_components=40)),
    "huber": (HuberSVC, dict(solver="gd", h=0.01, eta0=10.0, tol=1e-9, max_iter=100_000)),
    "pegasos": (PegasosSVC, {}),
    "pegasos-rbf": (PegasosSVC, dict(kernel="rbf")),
    "margin-sgd": (MarginSGDSVC, dict(M=1.0, gamma="scale")),
}
STOCHASTIC = ["budget", "nystrom", "pegasos", "pegasos-rbf"]


def make(name, seed=0, **params):
    """FAST[name] with ``params``; the seed where the estimator takes one."""
    cls, defaults = FAST[name]
    if name != "huber":
        params["random_state"] = seed
    return cls(**{**defaults, **params})


def _fit(clf, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y, **kw)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, centers=[[-1, 0], [1, 0.5], [0, 2]], cluster_std=1.0, random_state=0)
    return X, y


# ------------------------------------------------------------------ exact properties
@pytest.mark.parametrize("name", sorted(FAST))
def test_weight_zero_is_the_row_absent(name, blobs):
    X, y = blobs
    weight = np.ones(len(y))
    dropped = np.arange(0, len(y), 7)
    weight[dropped] = 0.0
    kept = np.setdiff1d(np.arange(len(y)), dropped)
    weighted = _fit(make(name), X, y, sample_weight=weight)
    absent = _fit(make(name), X[kept], y[kept])
    assert_array_equal(weighted.decision_function(X), absent.decision_function(X))
    if hasattr(weighted, "support_"):       # training row indices refer to the caller's X
        rows = weighted.support_[weighted.support_ >= 0]
        assert_array_equal(rows, kept[absent.support_[absent.support_ >= 0]])


@pytest.mark.parametrize("name", sorted(FAST))
def test_balanced_counts_weighted_rows(name, blobs):
    """'balanced' counts each class by its sample weight (scikit-learn's compute_class_weight
    with sample_weight): rows of weight 0 stay absent, bit for bit, and a weight of 2 counts
    as the row twice.  SVC counts every row given."""
    X, y = blobs
    weight = np.ones(len(y))
    dropped = np.flatnonzero(y == 0)[::2]             # zero weights change the class counts
    weight[dropped] = 0.0
    kept = np.setdiff1d(np.arange(len(y)), dropped)
    weighted = _fit(make(name, class_weight="balanced"), X, y, sample_weight=weight)
    absent = _fit(make(name, class_weight="balanced"), X[kept], y[kept])
    assert_array_equal(weighted.decision_function(X), absent.decision_function(X))
    twice = np.flatnonzero(y == 1)[:40]
    weight = np.ones(len(y))
    weight[twice] = 2.0
    counts = np.bincount(y, weights=weight)
    explicit = dict(enumerate(weight.sum() / (3 * counts)))
    assert_array_equal(_fit(make(name, class_weight="balanced"), X, y,
                            sample_weight=weight).decision_function(X),
                       _fit(make(name, class_weight=explicit), X, y,
                            sample_weight=weight).decision_function(X))
    with pytest.raises(ValueError, match="every sample of class 2 has weight 0"):
        _fit(make(name, class_weight="balanced"), X, y, sample_weight=(y != 2).astype(float))


@pytest.mark.parametrize("name", sorted(FAST))
def test_scaling_every_weight_is_scaling_C(name, blobs):
    """Weights all 4 with C / 4 is the unweighted model (powers of two: exact arithmetic);
    MarginSGDSVC has no C and normalises the weights: constant weights change nothing."""
    X, y = blobs
    plain = _fit(make(name), X, y)
    params = {} if name == "margin-sgd" else {"C": plain.C / 4}
    scaled = _fit(make(name, **params), X, y, sample_weight=np.full(len(y), 4.0))
    assert_allclose(scaled.decision_function(X), plain.decision_function(X), rtol=1e-12,
                    atol=1e-12)


def test_huber_weight_two_is_the_row_twice(blobs):
    X, y = blobs
    twice = np.arange(0, len(y), 3)
    weight = np.ones(len(y))
    weight[twice] = 2.0
    weighted = _fit(make("huber"), X, y, sample_weight=weight)
    repeated = _fit(make("huber"), np.vstack([X, X[twice]]), np.concatenate([y, y[twice]]))
    assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-9, atol=1e-10)
    assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-9, atol=1e-10)
    assert_allclose(weighted.training_info_["objective"][0][-1],
                    repeated.training_info_["objective"][0][-1], rtol=1e-12)


def test_huber_lbfgs_weight_two_is_the_row_twice(blobs):
    """The default solver: both fits certified to a tight gap reach the same optimum."""
    X, y = blobs
    twice = np.arange(0, len(y), 3)
    weight = np.ones(len(y))
    weight[twice] = 2.0
    weighted = HuberSVC(tol=1e-8).fit(X, y, sample_weight=weight)
    repeated = HuberSVC(tol=1e-8).fit(np.vstack([X, X[twice]]), np.concatenate([y, y[twice]]))
    assert weighted.training_info_["converged"] == repeated.training_info_["converged"] == [True] * 3
    assert_allclose(weighted.training_info_["objective"][0][-1],
                    repeated.training_info_["objective"][0][-1], rtol=1e-7)
    assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-3, atol=1e-3)
    assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-3, atol=1e-3)


def test_huber_weights_keep_the_bounds_exact(blobs):
    """Weighted prefix sums: the same model with and without bounds, fewer margins computed
    (each iteration's loss and gradient agree to rounding, tests/test_bounds.py)."""
    X, y = blobs
    weight = np.random.default_rng(0).uniform(0.1, 5.0, len(y))
    bounded = _fit(make("huber"), X, y, sample_weight=weight)
    plain = _fit(make("huber", margin_bounds=False), X, y, sample_weight=weight)
    for a, b in zip(bounded.training_info_["objective"], plain.training_info_["objective"]):
        assert_allclose(a[-1], b[-1], rtol=1e-9)
    assert_allclose(bounded.coef_, plain.coef_, rtol=1e-6, atol=1e-8)
    assert np.mean(bounded.training_info_["examined_fraction"]) < 0.5


@pytest.mark.parametrize("name", ["budget", "nystrom", "huber", "pegasos"])
def test_class_and_sample_weights_multiply(name, blobs):
    """test_sgd.py::test_weights_multiplied: class_weight x sample_weight = their product."""
    X, y = blobs
    class_weight = {0: 0.5, 1: 2.0, 2: 1.0}
    sample_weight = np.random.default_rng(1).choice([0.5, 1.0, 2.0], len(y))
    product = sample_weight * np.array([class_weight[c] for c in y])
    both = _fit(make(name, class_weight=class_weight), X, y, sample_weight=sample_weight)
    one = _fit(make(name), X, y, sample_weight=product)
    assert_array_equal(both.decision_function(X), one.decision_function(X))


@pytest.mark.parametrize("name", sorted(FAST))
def test_balanced_is_svc_s_formula(name, blobs):
    """test_sgd.py::test_balanced_weight: 'balanced' = n_samples / (n_classes * bincount(y))."""
    X, y = blobs
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:30]])
    X, y = X[keep], y[keep]
    weights = dict(zip(range(3), compute_class_weight("balanced", classes=np.arange(3), y=y)))
    assert_allclose(list(weights.values()), len(y) / (3 * np.bincount(y)))
    balanced = _fit(make(name, class_weight="balanced"), X, y)
    explicit = _fit(make(name, class_weight=weights), X, y)
    assert_array_equal(balanced.decision_function(X), explicit.decision_function(X))


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("class_weight", [None, {0: 2.5, 2: 0.5}, "balanced"])
def test_class_weight_attribute_is_svc_s(name, class_weight, blobs):
    """class_weight_ holds the weight of each class as SVC's does (ones for None); 'balanced'
    with unit sample weights is SVC's formula, and counts rows by their sample weight."""
    from sklearn.svm import SVC
    X, y = blobs
    keep = np.concatenate([np.flatnonzero(y != 2), np.flatnonzero(y == 2)[:30]])
    X, y = X[keep], y[keep]
    fitted = _fit(make(name, class_weight=class_weight), X, y)
    expected = SVC(class_weight=class_weight).fit(X, y).class_weight_
    assert_allclose(fitted.class_weight_, expected, rtol=1e-12)
    assert fitted.class_weight_.shape == (3,) and fitted.class_weight_.dtype == np.float64
    if class_weight == "balanced":      # a weight of 2 counts the row twice
        weight = np.where(y == 2, 2.0, 1.0)
        twice = _fit(make(name, class_weight=class_weight), X, y, sample_weight=weight)
        assert_allclose(twice.class_weight_, weight.sum() / (3 * np.bincount(y, weight)))


def test_partial_fit_class_weight_attribute():
    X, y = make_blobs(90, centers=3, random_state=0)
    stream = BudgetSVC(budget=20, random_state=0, class_weight={1: 3.0})
    stream.partial_fit(X, y, classes=[0, 1, 2])
    assert_array_equal(stream.class_weight_, [1.0, 3.0, 1.0])
    stream.set_params(class_weight=None).partial_fit(X, y)
    assert_array_equal(stream.class_weight_, [1.0, 1.0, 1.0])


# ------------------------------------------------------------------ statistical
@pytest.mark.parametrize("name", STOCHASTIC)
def test_weight_three_is_the_row_three_times_in_expectation(name):
    """Averaged over seeds, weighting rows by 3 moves the decision function as repeating
    them three times does: the two differ by far less than either differs from the
    unweighted fit, and by no more than the seed-to-seed noise allows."""
    X, y = make_classification(240, n_features=4, n_informative=3, n_redundant=0,
                               class_sep=0.7, random_state=3)
    grid = make_classification(200, n_features=4, n_informative=3, n_redundant=0,
                               random_state=4)[0]
    heavy = np.flatnonzero(y == 1)[::2]
    weight = np.ones(len(y))
    weight[heavy] = 3.0
    X_rep = np.vstack([X, X[heavy], X[heavy]])
    y_rep = np.concatenate([y, y[heavy], y[heavy]])
    seeds = range(12)
    runs = {
        "plain": [_fit(make(name, seed), X, y).decision_function(grid) for seed in seeds],
        "weighted": [_fit(make(name, seed), X, y, sample_weight=weight).decision_function(grid)
                     for seed in seeds],
        "repeated": [_fit(make(name, seed), X_rep, y_rep).decision_function(grid)
                     for seed in seeds],
    }
    mean = {k: np.mean(v, axis=0) for k, v in runs.items()}
    effect = np.mean(np.abs(mean["repeated"] - mean["plain"]))
    gap = np.mean(np.abs(mean["weighted"] - mean["repeated"]))
    noise = np.mean(np.std(runs["weighted"], axis=0) + np.std(runs["repeated"], axis=0))
    assert effect > 2 * gap
    assert gap < 2 * noise / np.sqrt(len(seeds)) + 0.05 * effect


@pytest.mark.parametrize("cls, params", [
    (BudgetSVC, {}), (NystromSVC, {}), (NystromSVC, dict(solver="assg")),
    (NystromSVC, dict(solver="pegasos")), (HuberSVC, {}), (PegasosSVC, {}),
    (PegasosSVC, dict(kernel="rbf")), (MarginSGDSVC, {})])
@pytest.mark.parametrize("heavy", [1e4, 1e6])
def test_a_few_rows_far_heavier_than_the_rest_keep_the_model(cls, params, heavy):
    """Three rows weighing 10^4 or 10^6 times the other 1,997 (SVC's test accuracy: 95.4 %
    with them as without) leave each estimator at its defaults, and NystromSVC with its
    stochastic solvers, within 2 points of its own unweighted fit.  The SGD solvers' full
    steps on them had given them, at their first violation, the coefficient of 10^4
    violations: BudgetSVC fell to 63 % and 61 %, PegasosSVC to 63 % (linear) and 49 %
    (RBF) at 10^6, NystromSVC's ASSG and Pegasos to 61 % and 49 %.  Their
    importance-aware steps (fastsvm._importance) take only what brings a heavy row's
    margin to 1.  MarginSGDSVC, whose weights multiply each coefficient by design, fell
    to 89.9 % and 88.6 % (94.7 % unweighted): it clips weights at 100 times the median."""
    X, y = make_classification(3000, 10, flip_y=0.05, random_state=0)
    X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]
    weight = np.ones(len(y_train))
    weight[:3] = heavy
    if cls is not HuberSVC:
        params = dict(params, random_state=0)
    plain = _fit(cls(**params), X_train, y_train).score(X_test, y_test)
    weighted = _fit(cls(**params), X_train, y_train, sample_weight=weight).score(X_test, y_test)
    assert weighted >= plain - 0.02, (plain, weighted)


# ------------------------------------------------------------------ scikit-learn behaviours
X_TOY = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
Y_TOY = np.array([1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("name", sorted(FAST))
def test_a_small_class_weight_moves_the_decision_to_the_other_class(name):
    """test_svm.py::test_weight: class_weight={1: 0.1} on the toy set moves every decision
    value towards class 2 (SVC's RBF model then predicts 2 everywhere; its linear one,
    like HuberSVC below, keeps the separating line between the classes)."""
    plain = _fit(make(name), X_TOY, Y_TOY)
    weighted = _fit(make(name, class_weight={1: 0.1}), X_TOY, Y_TOY)
    assert np.all(weighted.decision_function(X_TOY)[:3] > plain.decision_function(X_TOY)[:3])


def test_huber_matches_weighted_svc():
    """HuberSVC with h -> 0 is the hinge-loss SVM: its weighted model is SVC's (linear)."""
    from sklearn.svm import SVC

    for class_weight in ({1: 0.1}, {1: 3.0, 2: 0.5}):
        svc = SVC(kernel="linear", class_weight=class_weight).fit(X_TOY, Y_TOY)
        huber = _fit(make("huber", h=1e-4, class_weight=class_weight), X_TOY, Y_TOY)
        assert_allclose(huber.decision_function(X_TOY), svc.decision_function(X_TOY), atol=0.01)


@pytest.mark.parametrize("name", sorted(FAST))
def test_up_weighting_the_minority_class_finds_it(name):
    """test_svm.py::test_weight: class_weight={0: 0.1, 1: 10} on a 5:1 set gives F1 > 0.3."""
    X, y = make_classification(n_samples=200, n_features=10, weights=[0.833, 0.167],
                               random_state=2)
    clf = _fit(make(name, class_weight={0: 0.1, 1: 10}), X[:100], y[:100])
    assert f1_score(y[100:], clf.predict(X[100:])) > 0.3


@pytest.mark.parametrize("name", ["budget", "nystrom", "huber", "pegasos", "margin-sgd"])
def test_heavier_opposite_samples_flip_the_decision(name):
    """test_svm.py::test_svm_classifier_sided_sample_weight, with the linear kernel."""
    X = np.array([[-2, 0], [-1, -1], [0, -2], [0, 2], [1, 1], [2, 0]], dtype=float)
    y = np.array([1, 1, 1, 2, 2, 2])
    params = {"kernel": "linear"}
    if name == "budget":
        params["maintenance"] = "remove"
    point = [[-1.0, 1.0]]
    decisions = []
    for weight in ([10.0, 0.1, 0.1, 0.1, 0.1, 10], [1.0, 0.1, 10.0, 10.0, 0.1, 0.1]):
        clf = _fit(make(name, C=1.0, **params) if name != "margin-sgd"
                   else make(name, kernel="linear"), X, y, sample_weight=weight)
        decisions.append(float(clf.decision_function(point)[0]))
    assert decisions[0] < 0 < decisions[1]


@pytest.mark.parametrize("name", sorted(FAST))
def test_balanced_weights_help_the_rare_class_of_iris(name):
    """test_svm.py::test_auto_weight: iris' first two features with half of class 3
    removed; class_weight='balanced' raises the F1 score of the class that lost rows
    (the macro F1 of scikit-learn's test is too coarse for 150 rows: here the rare
    class's recall, averaged over three seeds)."""
    iris = load_iris()
    X, y = iris.data[:, :2], iris.target + 1
    unbalanced = np.delete(np.arange(y.size), np.flatnonzero(y > 2)[::2])
    recall = {}
    seeds = [0] if name == "huber" else range(3)       # HuberSVC is deterministic
    for weights in (None, "balanced"):
        predictions = [_fit(make(name, seed, class_weight=weights), X[unbalanced],
                            y[unbalanced]).predict(X) for seed in seeds]
        recall[weights] = np.mean([np.mean(p[y == 3] == 3) for p in predictions])
    assert recall["balanced"] > recall[None]


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("weights, match", [
    (lambda n: -np.ones(n), "Negative values"),
    # scikit-learn 1.9's check, or ours (1.6 has none)
    (lambda n: np.zeros(n), "at least one non-zero|all samples have zero weight"),
    (lambda n: np.r_[np.ones(n - 1), np.nan], "NaN"),
    (lambda n: np.r_[np.ones(n - 1), np.inf], "infinity"),
    (lambda n: np.ones(n - 1), "shape"),
    (lambda n: np.r_[np.zeros(3), np.ones(n - 3)], "every sample of class 1 has weight 0"),
    (lambda n: np.full(n, 1e308), "sum to infinity"),
])
def test_bad_sample_weights_are_clear_errors(name, weights, match):
    """test_svm.py::test_negative_sample_weights_mask_all_samples,
    test_negative_weights_svc_leave_just_one_label; test_sgd.py::test_wrong_sample_weights."""
    with pytest.raises(ValueError, match=match):
        make(name).fit(X_TOY, Y_TOY, sample_weight=weights(len(Y_TOY)))


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("class_weight, match", [
    ({0: 0.5}, r"keys that are not classes: \[0\]"),    # test_wrong_class_weight_label
    # one class weighted, the other not: an unknown key is an error (SVC's rule)
    ({1: 2.0, 99: 5.0}, r"keys that are not classes: \[99\]"),
    ({1: -1.0, 2: 1.0}, "class_weight must be finite and >= 0"),
    ({1: np.nan, 2: 1.0}, "class_weight must be finite and >= 0"),
    ({1: 0.0, 2: 1.0}, "every sample of class 1 has weight 0"),
    ("auto", "class_weight"),
])
def test_bad_class_weights_are_clear_errors(name, class_weight, match):
    with pytest.raises(ValueError, match=match):
        make(name, class_weight=class_weight).fit(X_TOY, Y_TOY)


@pytest.mark.parametrize("name", sorted(FAST))
def test_class_weight_keys_are_the_classes_themselves(name):
    """Text classes that read as integers ('1') find their keys: scikit-learn's
    compute_class_weight looks up int('1') and raised "The classes, ['1', '2.5'], are not
    in class_weight" (the command line makes such classes where a label is fractional)."""
    text = np.where(Y_TOY == 1, "1", "2.5")
    weighted = make(name, class_weight={"1": 3.0}).fit(X_TOY, text)
    by_rows = make(name).fit(X_TOY, text, sample_weight=np.where(text == "1", 3.0, 1.0))
    assert_allclose(weighted.decision_function(X_TOY), by_rows.decision_function(X_TOY))
    with pytest.raises(ValueError, match=r"keys that are not classes: \[1\]"):
        make(name, class_weight={1: 3.0}).fit(X_TOY, text)


@pytest.mark.parametrize("seed", range(3))
def test_extreme_class_weights_reach_pegasos_optimum_with_more_iterations(seed):
    """scikit-learn's check_class_weight_classifiers (class_weight={0: 1000, 1: 1e-4} on very
    noisy blobs must predict class 0 almost everywhere) fails for linear PegasosSVC at the
    check's max_iter=1000: the weights multiply C by 1000, whose optimum 1000 iterations do
    not reach. With 200,000 single-point iterations it passes (20,000: 66-90 %)."""
    from sklearn.model_selection import train_test_split

    X, y = make_blobs(centers=2, random_state=0, cluster_std=20)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.5, random_state=0)
    clf = PegasosSVC(max_iter=200_000, class_weight={0: 1000, 1: 1e-4}, random_state=seed)
    assert np.mean(clf.fit(X_train, y_train).predict(X_test) == 0) > 0.87


def test_sample_weight_changes_one_prediction():
    """test_sgd.py::test_sample_weights: a point's weight moves the boundary towards the rest.

    Probed at (-0.2, -1) instead of scikit-learn's (0.2, -1), which lies 3e-4 from the
    boundary of the unweighted optimum (SVC's linear decision there, C = 10): any solver
    near that optimum may put it on either side.  SVC's decision at (-0.2, -1) is +0.40
    unweighted and -0.91 weighted (w = (-0.058, -0.02), b = -0.94, objective 0.0029).
    BudgetSVC's SGD does not reach that weighted optimum: its steps have no offset and
    head for the offset-free optimum, w = (-1, 0) (objective 0.025 with b refitted
    after them), so its decision there only moves towards the rest (0.40 -> 0.25)."""
    X = np.array([[-1.0, -1.0], [-1.0, 0], [-0.8, -1.0], [1.0, 1.0], [1.0, 0.0]])
    y = [1, 1, 1, -1, -1]
    probe = [[-0.2, -1.0]]
    for name in ("huber", "pegasos", "budget"):
        # five rows: BudgetSVC needs many epochs to get near the optimum
        params = ({"kernel": "linear", "maintenance": "remove", "epochs": 400}
                  if name == "budget" else {})
        clf = _fit(make(name, C=10.0, **params), X, y)
        assert clf.decision_function(probe) == pytest.approx(0.40, abs=0.02), name
        weighted = _fit(make(name, C=10.0, **params), X, y,
                        sample_weight=[0.001] * 3 + [1.0] * 2)
        if name == "budget":
            assert weighted.decision_function(probe) < clf.decision_function(probe) - 0.1
        else:
            assert weighted.predict(probe) == -1, name


def test_partial_fit_takes_weights_but_not_balanced():
    """test_sgd.py::test_partial_fit_weight_class_balanced, and a weighted stream."""
    X, y = make_blobs(400, centers=2, random_state=0)
    clf = BudgetSVC(budget=20, random_state=0, class_weight="balanced")
    with pytest.raises(ValueError, match="class_weight='balanced' needs every label"):
        clf.partial_fit(X, y, classes=[0, 1])
    stream = BudgetSVC(budget=20, random_state=0, class_weight={0: 2.0, 1: 1.0})
    for part in np.array_split(np.arange(400), 4):
        stream.partial_fit(X[part], y[part], classes=[0, 1], sample_weight=np.full(100, 0.5))
    # lambda = 1 / (C * S_seen), S_seen the weight seen: 200 rows of 2 x 0.5, 200 of 0.5
    assert stream._streams[0].lam == pytest.approx(1 / (1.0 * (200 * 1.0 + 200 * 0.5)))
    assert stream.score(X, y) > 0.9
    # a batch may lack a class, and its weights may be zero for one
    stream.partial_fit(X[y == 0][:50], y[y == 0][:50])
