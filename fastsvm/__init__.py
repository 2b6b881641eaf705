"""fastsvm: fast large-scale kernel SVM training with a scikit-learn API."""

__version__ = "0.1.0"
