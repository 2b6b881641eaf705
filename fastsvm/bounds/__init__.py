"""SVMs that skip margin computations with bounds on the change in the margin."""

from .estimator import HuberSVC, PegasosSVC

__all__ = ["HuberSVC", "PegasosSVC"]
