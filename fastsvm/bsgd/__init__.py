"""Budgeted stochastic gradient descent (BSGD) with merging budget maintenance."""

from .estimator import BudgetSVC

__all__ = ["BudgetSVC"]
