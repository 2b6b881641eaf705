"""fastsvm: fast large-scale kernel SVM training with a scikit-learn API.

The estimators are imported on first use (PEP 562 module ``__getattr__``):
``import fastsvm`` itself loads neither scikit-learn nor numba, so the
command line starts in a fraction of a second and ``from fastsvm import
BudgetSVC`` loads one solver family only.
"""

__version__ = "0.1.0"
__all__ = ["BudgetSVC", "HuberSVC", "MarginSGDSVC", "NystromSVC", "PegasosSVC", "__version__"]

#: Public estimator -> the subpackage that defines it.
_ESTIMATOR_MODULES = {
    "BudgetSVC": "fastsvm.bsgd",
    "HuberSVC": "fastsvm.bounds",
    "MarginSGDSVC": "fastsvm.margin_sgd",
    "NystromSVC": "fastsvm.nystrom",
    "PegasosSVC": "fastsvm.bounds",
}


def __getattr__(name):
    """Import an estimator's subpackage when the estimator is first asked for."""
    if name not in _ESTIMATOR_MODULES:
        raise AttributeError(f"module 'fastsvm' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_ESTIMATOR_MODULES[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
