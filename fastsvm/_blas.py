"""One BLAS thread pool per computation: dense products through SciPy's BLAS.

The pip wheels of NumPy and SciPy each bundle their own OpenBLAS library,
and each library keeps its own pool of worker threads (as many as cores).
After a call returns, OpenBLAS's workers spin for a while (its thread
timeout) before they sleep.  Work that alternates between the two libraries,
such as the Nystrom embedding (kernel blocks by NumPy's matrix product, the
map by SciPy's triangular product and factorisations), so runs up to twice
as many busy threads as cores, and the threads of each call wait on one
another.  On two cores, ``NystromSVC`` fits took 1.3-2x as long as with one
pool doing the work (a generated 7,500-row set: 0.41 s against 0.25 s).

Two remedies, used together where both libraries are in play:

* :func:`gemm_nt`: the dense matrix products of those computations go
  through SciPy's BLAS (the library of ``scipy.linalg.blas``), which also
  does their factorisations and triangular products;
* :func:`one_blas_pool`: while it is active, NumPy's BLAS library, when it
  is a different library from SciPy's, is held at one thread, so that what
  NumPy still does there (small matrix-vector products) never wakes a second
  pool.  Nothing changes where one library serves both (conda's builds, a
  system BLAS).

:func:`serial_numpy_blas` holds NumPy's BLAS library at one thread in any
case while the products are small, for solvers whose many short products
alternate with single-threaded compiled steps (BudgetSVC, MarginSGDSVC): on a
machine with other work a second thread made them several times slower.
:func:`serial_lapack` holds SciPy's at one thread for NystromSVC's small
factorisations, whose threads synchronise at every block column.
"""

import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.linalg.blas

from . import _options


def gemm_nt(A, B, out=None):
    """A @ B.T for dense 2-D float arrays, by SciPy's BLAS (``?gemm``), C-ordered.

    C-ordered operands are read in place: a C-ordered array is its transpose
    in Fortran order, so the product is computed as (B A^T)^T with the
    transposes folded into the BLAS call; with one row on either side it is a
    matrix-vector product (``?gemv``).  The result has the type NumPy's
    product would give (float32 only when both are float32).

    ``out``, if given, is a C-contiguous array of the result's shape and type
    that BLAS writes the product into (and that is returned): a buffer reused
    over row blocks costs its page faults once, where a fresh array of tens of
    megabytes pays them on every block (on Linux, with the compaction of
    transparent huge pages on top in a new process).
    """
    A, B = np.asarray(A), np.asarray(B)
    dtype = np.result_type(A.dtype, B.dtype, np.float32)
    shape = (A.shape[0], B.shape[0])
    if out is not None and (out.shape != shape or out.dtype != dtype
                            or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous {dtype} array of shape {shape}, not "
                         f"{out.dtype} {out.shape}")
    if A.shape[0] == 0 or B.shape[0] == 0 or A.shape[1] == 0:
        if out is None:
            return np.zeros(shape, dtype=dtype)
        out[...] = 0.0
        return out
    A = np.ascontiguousarray(A, dtype=dtype)
    B = np.ascontiguousarray(B, dtype=dtype)
    if min(shape) == 1:    # ?gemm of one column: 2-3x slower than ?gemv
        gemv = scipy.linalg.blas.get_blas_funcs("gemv", dtype=dtype)
        if B.shape[0] == 1:
            y = {} if out is None else {"y": out[:, 0], "overwrite_y": 1}
            product = gemv(1.0, A.T, B[0], trans=1, **y)[:, None]
        else:
            y = {} if out is None else {"y": out[0], "overwrite_y": 1}
            product = gemv(1.0, B.T, A[0], trans=1, **y)[None, :]
        return product if out is None else out
    gemm = scipy.linalg.blas.get_blas_funcs("gemm", dtype=dtype)
    into = {} if out is None else {"c": out.T, "overwrite_c": 1}
    product = gemm(1.0, B.T, A.T, trans_a=1, **into).T
    return product if out is None else out


def _bundled_by(package, filepath):
    """Whether a shared library lies where a wheel of ``package`` bundles its libraries:
    ``<package>.libs`` (auditwheel, delvewheel) or ``<package>/.dylibs`` (delocate)."""
    parts = Path(filepath).parts
    return (f"{package}.libs" in parts
            or any(a == package and b == ".dylibs" for a, b in zip(parts, parts[1:])))


_controllers = {}             # "numpy", "numpy_only", "scipy": threadpoolctl controllers
                              # (or None)
_lock = threading.Lock()
_holds = {}                   # id(controller) -> (contexts holding it at one thread, the
                              # thread count before the first of them)


def _blas_controllers():
    """The controllers of NumPy's BLAS library ("numpy": the one its wheel bundles, or the
    only one loaded), of SciPy's ("scipy", likewise) and, when SciPy bundles a different
    one (both installed from pip's wheels), of NumPy's own ("numpy_only"); None where
    there is no such library (looked up once)."""
    if not _controllers:
        from threadpoolctl import ThreadpoolController

        blas = ThreadpoolController().select(user_api="blas").lib_controllers
        numpy_libs = [c for c in blas if _bundled_by("numpy", c.filepath)]
        scipy_libs = [c for c in blas if _bundled_by("scipy", c.filepath)]
        numpy_lib = (numpy_libs[0] if len(numpy_libs) == 1 else
                     blas[0] if len(blas) == 1 else None)
        scipy_lib = (scipy_libs[0] if len(scipy_libs) == 1 else
                     blas[0] if len(blas) == 1 else None)
        separate = (numpy_libs and scipy_libs
                    and numpy_libs[0].filepath != scipy_libs[0].filepath)
        _controllers.update(numpy=numpy_lib, numpy_only=numpy_lib if separate else None,
                            scipy=scipy_lib)
    return _controllers


def numpy_only_blas():
    """threadpoolctl's controller of NumPy's BLAS library when SciPy bundles a different one
    (both installed from pip's wheels), else None."""
    return _blas_controllers()["numpy_only"]


def numpy_blas():
    """threadpoolctl's controller of the BLAS library of NumPy's products, or None where
    that is not known (several libraries, none bundled by NumPy's wheel)."""
    return _blas_controllers()["numpy"]


def scipy_blas():
    """threadpoolctl's controller of the BLAS library of ``scipy.linalg`` (its LAPACK too),
    or None where that is not known (several libraries, none bundled by SciPy's wheel)."""
    return _blas_controllers()["scipy"]


@contextmanager
def one_blas_pool():
    """Hold NumPy's BLAS library at one thread while the block runs, when it is not SciPy's
    (see the module docstring)."""
    with _held_at_one_thread(numpy_only_blas()):
        yield


@contextmanager
def serial_numpy_blas(multiply_adds):
    """Hold NumPy's BLAS library at one thread while the block runs, whether or not SciPy
    shares it, when the block's largest product takes ``multiply_adds`` below
    ``_options.SERIAL_BLAS_BELOW`` (2^27): for solvers whose products (a block of 64-256
    rows against the support vectors) alternate with single-threaded compiled steps.

    A second BLAS thread pays only where a core is free at each of thousands of short
    products; beside other work, each product waits for its second thread's share until
    the scheduler runs it.  Fits at the defaults on two cores, two threads (NumPy's
    default) against one, in alternating processes, medians of 3 fits:

    - beside one busy process, two threads were 1.5-2.9x slower: BudgetSVC on
      dense_wide (300 features, budget 2,000: 38 million multiply-adds per product)
      1.9 against 1.05 s, on usps 4.1 against 1.9 s; MarginSGDSVC on dense_wide 1.8
      against 1.1 s, usps 2.6 against 1.5 s, the 5-class set 1.2 against 0.52 s;
      beside two, the helpers of a sweep saw 8-19x (BudgetSVC on a 200-feature set:
      2.6 against 0.32 s; SVC 0.33 s);
    - idle, they were 0-20 % faster: BudgetSVC 0.77 against 0.95 s on dense_wide, usps
      the same; MarginSGDSVC dense_wide the same, usps 0.82 against 0.94 s, the
      5-class set 0.42 against 0.48 s.

    Larger products gain more from the second thread on an idle machine (BudgetSVC on
    2,000 dense features, 256 million multiply-adds per product: 2.9 against 4.1 s with
    one thread; MarginSGDSVC on a9a, 30,000 rows: 2.5 against 3.5 s), so they keep it.
    Binary models trained in ``n_jobs`` threads, each with its own products, had
    contended with one another the same way.
    """
    with _held_at_one_thread(numpy_blas() if multiply_adds < _options.SERIAL_BLAS_BELOW
                             else None):
        yield


@contextmanager
def serial_lapack(order):
    """Hold SciPy's BLAS library, which does ``scipy.linalg``'s factorisations, at one
    thread while the block runs, when it factorises matrices of ``order`` at most
    ``_options.SERIAL_LAPACK_MAX_ORDER`` (2,000): for NystromSVC's Cholesky factor and
    triangular inverse of the landmarks' kernel matrix (LAPACK's ``?potrf``, ``?pstrf``,
    ``?trtri``) and the leverage sketch's eigendecomposition.

    OpenBLAS's threaded factorisations synchronise their threads at every block column,
    so where other processes' threads compete for the cores, each of those steps can wait
    for the scheduler to run the second thread.  On two cores, two threads against one
    (``?potrf`` / ``?trtri`` of order m, best of 3; fits: medians of 3, alternating
    processes, 2026-11-29):

    - beside a test suite running (load 2.5-3.5), the factorisations at two threads
      took 0.5 / 0.35 s at m = 500 against 2.6 / 5.8 ms at one (a NystromSVC fit on 500
      rows 0.9 s instead of 0.02 s), 1.1 / 0.03 s at m = 1,000 against 24 / 19 ms,
      1.3 / 0.86 s at m = 2,000 against 87 / 87 ms, and 2.2-5.5 / 1.5-3.8 s at m = 4,000
      against 0.67-0.77 / 0.67-0.81 s; NystromSVC at its defaults on dense_wide (6,000
      rows, 4,000 landmarks) took 8.7-9.3 s against 3.9-4.5 s;
    - beside a process doing two-threaded matrix products, the factorisations alone
      1.27 s against 32 ms at m = 1,000 and 2.8 s against 0.15 s at m = 2,000, 1.4
      against 0.86 s at m = 4,000, while the dense_wide fit took the same time either
      way (6.1-6.5 against 5.9-6.1 s);
    - idle, up to m = 2,000 one thread cost at most 23 ms (m = 1,000: 17.5 / 18.3 ms at two
      threads, 12.3 / 16.2 ms at one; m = 2,000: 72 / 69 against 90 / 92 ms), but
      above it two threads were faster: m = 4,000 0.52 / 0.38 s against 0.53-0.88 /
      0.47-0.73 s, and the fits at 4,000-6,000 landmarks 10-20 % slower with every
      factorisation at one thread (wide_sparse, 6,000 landmarks: 5.95-6.08 s against
      6.63-7.39 s; dense_wide 2.49-2.50 against 2.56-3.22 s).

    So the small factorisations, where a second thread gains at most 23 ms idle and can
    cost 100x beside other work, run on one thread; the large ones keep BLAS's threads, which
    is right on an idle machine (on a busy one, limit BLAS's threads for the whole fit:
    see "Threads on a busy machine" in the README).  The products around them (kernel
    blocks, the embedding's triangular product) are long calls with few
    synchronisations, and keep BLAS's threads."""
    with _held_at_one_thread(scipy_blas() if order <= _options.SERIAL_LAPACK_MAX_ORDER
                             else None):
        yield


@contextmanager
def _held_at_one_thread(controller):
    """Hold ``controller``'s library at one thread while the block runs; its thread count is
    restored when the last of any overlapping contexts (from several threads) exits."""
    if controller is None:
        yield
        return
    key = id(controller)
    with _lock:
        holders, saved = _holds.get(key, (0, None))
        if holders == 0:
            saved = controller.num_threads
            _set_threads(controller, 1)
        _holds[key] = (holders + 1, saved)
    try:
        yield
    finally:
        with _lock:
            holders, saved = _holds.pop(key)
            if holders == 1:
                _set_threads(controller, saved)
            else:
                _holds[key] = (holders - 1, saved)


def _set_threads(controller, threads):
    """``controller.set_num_threads(threads)``, from whichever thread calls it.

    threadpoolctl 3.8 lets one "controlling" thread set an OpenBLAS pool's size,
    the first to set it, for as long as it lives, and silently ignores the
    others.  A thread of the user's pool that entered :func:`one_blas_pool` first
    kept that role, so the count restored by the thread that left last was lost:
    NumPy's BLAS stayed at one thread for the rest of the process.  So the role is
    taken for each change and given up after it (the contexts' count, under
    ``_lock``, already orders the changes).  Earlier versions have no such role.
    """
    release = getattr(controller, "clear_controlling_thread", None)
    if release is not None:
        release(force=True)
    controller.set_num_threads(threads)
    if release is not None:
        release()
