"""fastsvm._blas: dense products through SciPy's BLAS, and NumPy's BLAS pool held at one
thread while a Nystrom fit or prediction runs (where the two libraries differ)."""

import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification

from fastsvm import NystromSVC, _blas, _options
from fastsvm.kernels import Kernel


@pytest.mark.parametrize("shapes", [((7, 5), (4, 5)), ((1, 5), (6, 5)), ((6, 5), (1, 5)),
                                    ((1, 3), (1, 3)), ((0, 5), (4, 5)), ((7, 5), (0, 5)),
                                    ((3, 0), (2, 0))])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.int64, np.float32)])
def test_gemm_nt_is_numpys_product(shapes, dtypes):
    rng = np.random.default_rng(0)
    A = (10 * rng.standard_normal(shapes[0])).astype(dtypes[0])
    B = (10 * rng.standard_normal(shapes[1])).astype(dtypes[1])
    want = A @ B.T
    for a, b in [(A, B), (np.asfortranarray(A), B), (A, np.asfortranarray(B))]:
        got = _blas.gemm_nt(a, b)
        assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
        assert_allclose(got, want, rtol=1e-5 if got.dtype == np.float32 else 1e-12, atol=1e-4)
    wide = np.zeros((shapes[0][0], 2 * shapes[0][1]), dtype=dtypes[0])
    wide[:, ::2] = A
    assert_array_equal(_blas.gemm_nt(wide[:, ::2], B), _blas.gemm_nt(A, B))
    buffer = np.full(want.shape, np.nan, dtype=want.dtype)    # written into, and returned
    assert _blas.gemm_nt(A, B, out=buffer) is buffer
    assert_array_equal(buffer, _blas.gemm_nt(A, B))


@pytest.mark.parametrize("out", [np.empty((4, 3)), np.empty((3, 4), dtype=np.float32),
                                 np.empty((4, 3)).T, np.empty((3, 8))[:, ::2]])
def test_gemm_nt_refuses_an_out_it_cannot_write_into(out):
    A, B = np.ones((3, 2)), np.ones((4, 2))
    with pytest.raises(ValueError, match="C-contiguous float64 array of shape \\(3, 4\\)"):
        _blas.gemm_nt(A, B, out=out)


@pytest.mark.parametrize("path, bundled", [
    ("/venv/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4.so", "numpy"),
    ("/venv/lib/python3.11/site-packages/scipy.libs/libscipy_openblas-6cdc.so", "scipy"),
    ("/venv/lib/python3.12/site-packages/numpy/.dylibs/libscipy_openblas64_.dylib", "numpy"),
    ("/opt/conda/lib/libopenblasp-r0.3.21.so", None),
    ("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", None),
])
def test_the_libraries_a_wheel_bundles_are_told_by_their_folder(path, bundled):
    assert _blas._bundled_by("numpy", path) == (bundled == "numpy")
    assert _blas._bundled_by("scipy", path) == (bundled == "scipy")


class _Controller:
    """A stand-in for threadpoolctl's controller of NumPy's BLAS library."""

    def __init__(self, threads):
        self.num_threads = threads

    def set_num_threads(self, threads):
        self.num_threads = threads


def test_one_blas_pool_holds_numpys_pool_at_one_thread_and_restores_it(monkeypatch):
    controller = _Controller(4)
    monkeypatch.setattr(_blas, "_controllers", {"numpy": controller, "numpy_only": controller})
    with _blas.one_blas_pool():
        assert controller.num_threads == 1
        with _blas.one_blas_pool():
            assert controller.num_threads == 1
        assert controller.num_threads == 1
    assert controller.num_threads == 4
    with pytest.raises(KeyError), _blas.one_blas_pool():
        raise KeyError("restored on errors too")
    assert controller.num_threads == 4


def _overlapping_pools(controller, linger=None):
    """Two threads whose one_blas_pool contexts overlap: the first enters, the second
    enters, the first exits, then the second.  Returns the thread counts the second saw
    while it held the pool alone, and the first thread, which waits on the event
    ``linger`` after it leaves (alive, as a pool's thread between tasks)."""
    first_in, second_in, first_out = (threading.Event() for _ in range(3))
    seen = []

    def first():
        with _blas.one_blas_pool():
            first_in.set()
            second_in.wait(5)
        first_out.set()
        if linger is not None:
            linger.wait(10)

    def second():
        first_in.wait(5)
        with _blas.one_blas_pool():
            second_in.set()
            first_out.wait(5)
            seen.append(controller.num_threads)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    threads[1].join(10)
    return seen, threads[0]


def test_overlapping_pools_from_threads_restore_the_count_when_the_last_exits(monkeypatch):
    """The pool stays at one thread until the second thread exits, then gets the original
    count back (a context that saved and restored on its own would leave it at one)."""
    controller = _Controller(3)
    monkeypatch.setattr(_blas, "_controllers", {"numpy": controller, "numpy_only": controller})
    seen, first = _overlapping_pools(controller)
    first.join(10)
    assert seen == [1] and controller.num_threads == 3


def test_the_last_thread_out_restores_numpys_pool_while_the_first_lives_on():
    """The real controller, from threads: the pool is held at one thread while they overlap;
    one that entered first and left, but lives on (a thread of the user's pool), neither
    keeps the count at one nor the right to set it.  With threadpoolctl 3.8 it had kept
    both: the restore by the thread that left last was ignored, and so was every later
    setting from the main thread; and where the main thread had set the count before, no
    other thread's setting took effect."""
    controller = _blas.numpy_only_blas()
    if controller is None:
        pytest.skip("NumPy and SciPy share one BLAS library here: nothing to hold")
    before = controller.num_threads
    _blas._set_threads(controller, 3)
    finish = threading.Event()
    first = None
    try:
        seen, first = _overlapping_pools(controller, linger=finish)
        assert seen == [1] and controller.num_threads == 3
        controller.set_num_threads(2)
        assert controller.num_threads == 2
    finally:
        finish.set()
        if first is not None:
            first.join(10)
        _blas._set_threads(controller, before)


def test_one_blas_pool_does_nothing_where_one_library_serves_both(monkeypatch):
    """...while serial_numpy_blas holds that library at one thread, as one_blas_pool holds
    NumPy's own: overlapping contexts of both count together."""
    controller = _Controller(2)
    monkeypatch.setattr(_blas, "_controllers", {"numpy": controller, "numpy_only": None})
    assert _blas.numpy_only_blas() is None
    with _blas.one_blas_pool():
        assert controller.num_threads == 2
        with _blas.serial_numpy_blas(0):
            assert controller.num_threads == 1
        assert controller.num_threads == 2
    monkeypatch.setattr(_blas, "_controllers", {"numpy": controller, "numpy_only": controller})
    with _blas.serial_numpy_blas(0):
        with _blas.one_blas_pool():
            assert controller.num_threads == 1
        assert controller.num_threads == 1
    assert controller.num_threads == 2


def test_nystrom_fit_and_prediction_run_with_numpys_pool_held(monkeypatch):
    """Where NumPy's wheel bundles its own BLAS (pip's wheels, as CI installs), every kernel
    block of a NystromSVC fit and prediction is computed with NumPy's pool at one thread;
    the pool has its two threads back afterwards."""
    controller = _blas.numpy_only_blas()
    if controller is None:
        pytest.skip("NumPy and SciPy share one BLAS library here: nothing to hold")
    seen = []
    call = Kernel.__call__

    def spy(self, A, B, out=None):
        seen.append(controller.num_threads)
        return call(self, A, B, out)

    monkeypatch.setattr(Kernel, "__call__", spy)
    X, y = make_classification(300, n_features=6, random_state=0)
    before = controller.num_threads
    controller.set_num_threads(2)
    try:
        clf = NystromSVC(n_components=50, random_state=0).fit(X, y)
        clf.predict(X)
        clf.transform(X)
        assert controller.num_threads == 2
    finally:
        controller.set_num_threads(before)
    assert len(seen) >= 3 and set(seen) == {1}


@pytest.mark.parametrize("solver, spied", [("bsgd", "block_dots"), ("margin_sgd", "_f")])
@pytest.mark.parametrize("below, threads", [(None, 1), (0, 2)], ids=["small", "large"])
def test_small_products_of_budget_and_margin_sgd_run_with_numpys_blas_at_one_thread(
        solver, spied, below, threads, monkeypatch):
    """BudgetSVC's and MarginSGDSVC's products of row blocks against the support vectors
    (NumPy's matmul) run with NumPy's BLAS at one thread when they are small (here: 20
    features, a few hundred vectors), with its threads when they are not (see
    serial_numpy_blas), and the library has its threads back after the fit."""
    import importlib

    from fastsvm import BudgetSVC, MarginSGDSVC

    controller = _blas.numpy_blas()
    if controller is None:
        pytest.skip("the BLAS library of NumPy's products is not known here")
    module = importlib.import_module(f"fastsvm.{solver}.solver")
    seen = []
    original = getattr(module, spied)

    def spy(*args, **kwargs):
        seen.append(controller.num_threads)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, spied, spy)
    if below is not None:
        monkeypatch.setattr(_options, "SERIAL_BLAS_BELOW", below)
    X, y = make_classification(600, n_features=20, random_state=0)   # blocks from 16 features
    clf = BudgetSVC(random_state=0) if solver == "bsgd" else MarginSGDSVC(random_state=0)
    before = controller.num_threads
    _blas._set_threads(controller, 2)
    try:
        clf.fit(X, y)
        assert controller.num_threads == 2
    finally:
        _blas._set_threads(controller, before)
    assert len(seen) >= 3 and set(seen) == {threads}


@pytest.mark.parametrize("landmarks", ["uniform", "leverage"])
@pytest.mark.parametrize("max_order, threads", [(None, 1), (0, 2)], ids=["small", "large"])
def test_nystrom_factorisations_run_with_scipys_blas_at_one_thread_when_small(
        landmarks, max_order, threads, monkeypatch):
    """NystromSVC's LAPACK calls (the landmarks' Cholesky factor, pivoted where the plain
    one fails, its triangular inverse, the leverage sketch's eigendecomposition) run with
    SciPy's BLAS at one thread up to SERIAL_LAPACK_MAX_ORDER landmarks (here 150), with
    its threads above (see serial_lapack), and the library has its threads back after
    the fit."""
    import scipy.linalg

    controller = _blas.scipy_blas()
    if controller is None:
        pytest.skip("the BLAS library of scipy.linalg is not known here")
    if max_order is not None:
        monkeypatch.setattr(_options, "SERIAL_LAPACK_MAX_ORDER", max_order)
    seen = {}

    def spy(module, name):
        original = getattr(module, name)

        def call(*args, **kwargs):
            seen.setdefault(name, []).append(controller.num_threads)
            return original(*args, **kwargs)
        monkeypatch.setattr(module, name, call)

    for name in ("dpotrf", "dpstrf", "dtrtri"):
        spy(scipy.linalg.lapack, name)
    spy(scipy.linalg, "eigh")
    X, y = make_classification(300, n_features=6, random_state=0)
    X[:40] = X[40:80]                   # duplicate rows: the plain factor fails, dpstrf runs
    before = controller.num_threads
    _blas._set_threads(controller, 2)
    try:
        NystromSVC(n_components=150, landmarks=landmarks, random_state=0).fit(X, y)
        assert controller.num_threads == 2
    finally:
        _blas._set_threads(controller, before)
    expected = {"dpotrf", "dpstrf", "dtrtri"} | ({"eigh"} if landmarks == "leverage" else set())
    assert set(seen) == expected and {t for calls in seen.values() for t in calls} == {threads}
