"""fastsvm: fast large-scale kernel SVM training with a scikit-learn API."""

from .bsgd import BudgetSVC

__version__ = "0.1.0"
__all__ = ["BudgetSVC", "__version__"]
