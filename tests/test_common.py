"""scikit-learn's estimator checks for every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

STOCHASTIC = ("a stochastic solver: a weight of 2 equals a repeated row in expectation over the "
              "random draws (tested across seeds in tests/test_weights.py), not exactly")
ONE_PASS = ("the one-pass rule gives a repeated row nothing more once its margin is 1, so weights "
            "multiply the coefficient instead (see MarginSGDSVC's docstring and "
            "tests/test_weights.py)")


UNSTABLE_START = ("the paper's first step eta0=100 is unstable and amplifies rounding differences "
                  "between summing a row twice and weighting it by 2 (see HuberSVC's docstring); "
                  "with a stable step (eta0=10) the weighted fit equals the repeated rows to "
                  "1e-9, tested in tests/test_weights.py")


NOISY_LAST_ITERATE = ("class_weight={0: 1000, 1: 1e-4} multiplies C by 1000 for class 0, and "
                      "Pegasos' last iterate after the check's max_iter=1000 is still noisy at "
                      "that regularisation (60 % of class 0 predicted; 100 % after 10^5 "
                      "iterations, tested in tests/test_weights.py)")


def expected_failed_checks(estimator):
    if isinstance(estimator, HuberSVC):
        reason = UNSTABLE_START
    elif isinstance(estimator, MarginSGDSVC):
        reason = ONE_PASS
    else:
        reason = STOCHASTIC
    expected = {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    if isinstance(estimator, PegasosSVC) and estimator.kernel == "linear":
        expected["check_class_weight_classifiers"] = NOISY_LAST_ITERATE
    return expected


@parametrize_with_checks([BudgetSVC(budget=50, random_state=0),
                          NystromSVC(random_state=0),
                          HuberSVC(),
                          PegasosSVC(random_state=0),
                          PegasosSVC(kernel="rbf", max_iter=200, random_state=0),
                          MarginSGDSVC(random_state=0),
                          MarginSGDSVC(sampling="permutation", random_state=0)],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
