"""Nystrom embedding + accelerated stochastic subgradient kernel SVM (Snacks)."""

from .estimator import NystromSVC

__all__ = ["NystromSVC"]
