"""fastsvm: fast large-scale kernel SVM training with a scikit-learn API."""

from .bsgd import BudgetSVC
from .nystrom import NystromSVC

__version__ = "0.1.0"
__all__ = ["BudgetSVC", "NystromSVC", "__version__"]
