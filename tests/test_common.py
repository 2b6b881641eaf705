"""scikit-learn's estimator checks for every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC


@parametrize_with_checks([BudgetSVC(budget=50, random_state=0),
                          NystromSVC(n_components=5, random_state=0),
                          HuberSVC(),
                          PegasosSVC(random_state=0),
                          PegasosSVC(kernel="rbf", max_iter=200, random_state=0),
                          MarginSGDSVC(random_state=0),
                          MarginSGDSVC(sampling="permutation", random_state=0)])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
