"""fastsvm: fast large-scale kernel SVM training with a scikit-learn API."""

from .bounds import HuberSVC, PegasosSVC
from .bsgd import BudgetSVC
from .margin_sgd import MarginSGDSVC
from .nystrom import NystromSVC

__version__ = "0.1.0"
__all__ = ["BudgetSVC", "HuberSVC", "MarginSGDSVC", "NystromSVC", "PegasosSVC", "__version__"]
