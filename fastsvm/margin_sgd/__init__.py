"""One-pass margin SGD SVM with extreme early stopping (Orchel & Suykens)."""

from .estimator import MarginSGDSVC

__all__ = ["MarginSGDSVC"]
