"""Compile fastsvm's numba kernels before the first fit: ``fastsvm warmup``.

Numba compiles a kernel on its first call with given argument types and
caches the machine code on disk (``cache=True``: in the package's
``__pycache__`` folders, or in numba's per-user cache folder where those are
not writable).  A fresh install therefore pays seconds of compilation per
solver at its first fit.  :func:`warm_up` makes those first calls once, on
tiny data of every input type the kernels take (dense and CSR rows, float64
and float32), for every solver, so that later fits in any process load
compiled code.  ``./run`` calls it right after installing; after
``pip install fastsvm``, run ``fastsvm warmup`` once.

:func:`compiled_kernels` lists the package's compiled kernels, whose
``stats`` tell cache hits from compilations (the tests use it to check that a
warmed-up fit compiles nothing).
"""

import importlib
import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba.core.registry import CPUDispatcher

from . import _options


def _estimators():
    """One estimator per compiled code path (solvers, landmark samplers, kernel Pegasos)."""
    from . import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC

    return [
        BudgetSVC(budget=8, epochs=1, random_state=0),
        BudgetSVC(budget=8, epochs=1, multi_class="ovr", random_state=0),   # shared budget
        NystromSVC(n_components=8, solver="assg", random_state=0),
        NystromSVC(n_components=8, solver="pegasos", landmarks="leverage", random_state=0),
        NystromSVC(n_components=8, solver="dcd", random_state=0),
        HuberSVC(max_iter=20),
        PegasosSVC(max_iter=20, random_state=0),
        PegasosSVC(kernel="rbf", max_iter=20, random_state=0),
        MarginSGDSVC(n_repeats=1, random_state=0),     # its code paths, without 5 repeats
    ]


def _inputs():
    """Small training data in every form the compiled kernels take: dense and CSR rows,
    float64 and float32, and very sparse wide rows (which take the sparse paths that
    denser blocks skip by densifying); each with two classes and with three (BudgetSVC's
    shared budget has kernels of its own)."""
    rng = np.random.default_rng(0)
    n = 3 * _options.MARGIN_SGD_BLOCK       # several blocks: MarginSGD slices its model
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 4))
    X[np.abs(X) < 0.5] = 0.0
    X[:, 0] += y
    wide = sp.random(n, 400, density=0.01, format="csr", random_state=0)
    wide = sp.hstack([sp.csr_matrix(y[:, None] + 1.0), wide], format="csr")
    for dtype in (np.float64, np.float32):
        for data in (X.astype(dtype), sp.csr_matrix(X.astype(dtype)), wide.astype(dtype)):
            yield data, y
            yield data, np.arange(n) % 3


def warm_up(report=None):
    """Fit and apply (decision values, and the embedding where there is one) every solver
    on every input type once, filling numba's disk cache.

    Parameters
    ----------
    report : callable, optional
        Called with one line of text per estimator (e.g. ``print``).

    Returns
    -------
    seconds : float
        Time taken: most of it compilation on a fresh install (46 s on two
        cores); about 4 s once the cache is warm, loading the cached kernels
        and fitting.
    """
    started = time.perf_counter()
    for clf in _estimators():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for X, y in _inputs():
                clf.fit(X, y).decision_function(X)
                if hasattr(clf, "transform"):     # NystromSVC's embedding in X's type
                    clf.transform(X)
        if report is not None:
            report(f"{type(clf).__name__}({_short_params(clf)}): "
                   f"{time.perf_counter() - start:.1f} s")
    return time.perf_counter() - started


def _short_params(clf):
    defaults = type(clf)().get_params()
    return ", ".join(f"{key}={value!r}" for key, value in clf.get_params().items()
                     if value != defaults[key] and key in ("kernel", "solver", "landmarks"))


#: The modules that hold compiled kernels (each package's ``_kernels`` and the shared ones).
KERNEL_MODULES = ("fastsvm._cycles", "fastsvm._exp", "fastsvm._packed", "fastsvm.bounds._kernels",
                  "fastsvm.bsgd._kernels", "fastsvm.bsgd._shared_kernels",
                  "fastsvm.margin_sgd._kernels", "fastsvm.merge._kernels",
                  "fastsvm.nystrom._kernels")


def compiled_kernels():
    """Every numba-compiled function of the package, by qualified name."""
    kernels = {}
    for module_name in KERNEL_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == module_name:
                kernels[f"{module_name}.{name}"] = value
    return kernels
