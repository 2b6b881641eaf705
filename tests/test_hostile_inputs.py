"""No crash, no silent wrong answer: what every estimator and entry point does with
hostile input (see the README section "What bad input gets").

- Malformed sparse structures (any format, value dtype and index dtype) are a
  ValueError naming the defect, raised before scipy's C++ routines or a
  compiled kernel touch them; unsorted and duplicate indices are valid and
  give exactly the model of the canonical matrix.
- Finite values whose squares overflow, overflowing kernels and extreme
  parameters give a finite model or a ValueError, never NaN or inf output,
  never ZeroDivisionError or OverflowError.
- Containers (DataFrames of any dtype, read-only, strided, Fortran-ordered,
  big-endian arrays) give the model of the plain array.
- An interrupted fit, refit or partial_fit leaves the estimator as it was.

The property-based tests run here and, in ``test_compiled_code_in_bounds``,
again in their own process with ``NUMBA_BOUNDSCHECK=1``.
"""

import os
import signal
import subprocess
import sys
import threading
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC
from fastsvm import _options, persistence
from fastsvm._validation import check_sparse_structure
from fastsvm.bsgd.estimator import resolve_budget
from fastsvm.persistence import load_model, save_model

#: Small, fast settings of every estimator and every kind of model.
ESTIMATORS = {
    "budget": BudgetSVC(budget=8, epochs=2, random_state=0),
    "budget-poly": BudgetSVC(budget=8, epochs=2, kernel="poly", maintenance="remove",
                             random_state=0),
    "nystrom": NystromSVC(n_components=8, random_state=0),
    "huber": HuberSVC(max_iter=300),
    "pegasos": PegasosSVC(max_iter=60, random_state=0),
    "pegasos-rbf": PegasosSVC(kernel="rbf", max_iter=60, random_state=0),
    "margin-sgd": MarginSGDSVC(random_state=0),
}
NAMES = sorted(ESTIMATORS)


def make(name, **params):
    return clone(ESTIMATORS[name]).set_params(**params)


def fit_quietly(clf, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        return clf.fit(X, y, **kw)


def data(n=40, d=5, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[np.abs(X) < 0.6] = 0.0                       # sparse enough to make CSR meaningful
    y = np.arange(n) % n_classes
    X[:, 0] += 1.5 * y
    return X, y


def assert_finite_or_value_error(clf, X, y, **kw):
    """The contract on inputs that are valid in form: a ValueError, or a model whose
    decision values and predictions on X are finite and well-formed."""
    try:
        fit_quietly(clf, X, y, **kw)
    except ValueError:
        return False
    decision = clf.decision_function(X)     # a fitted model takes its own training rows
    assert np.all(np.isfinite(decision))
    assert decision.shape[0] == X.shape[0]
    assert np.isin(clf.predict(X), clf.classes_).all()
    return True


@pytest.fixture(scope="module")
def fitted():
    """Every estimator fitted on the dense training data."""
    X, y = data()
    return {name: fit_quietly(make(name), X, y) for name in NAMES}


# ------------------------------------------------------------------ sparse structure
def _compressed(fmt, dtype, index_dtype):
    X, _ = data()
    M = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    M = M.astype(dtype)
    M.indices = M.indices.astype(index_dtype)
    M.indptr = M.indptr.astype(index_dtype)
    return M


def _corrupt_compressed(M, defect):
    """A copy of CSR/CSC ``M`` (arrays assigned directly: scipy checks nothing) with one defect."""
    M = M.copy()
    indices, indptr = M.indices.copy(), M.indptr.copy()
    if defect == "negative index":
        indices[3] = -1
    elif defect == "index too large":
        indices[3] = M.shape[1 if M.format == "csr" else 0] + 5
    elif defect == "indptr decreasing":
        indptr[2], indptr[3] = indptr[3], indptr[2]
    elif defect == "negative indptr":
        indptr[2] = -3
    elif defect == "indptr past nnz":
        indptr[-1] += 1
    elif defect == "indptr short of nnz":
        indptr[-1] -= 1
    elif defect == "indptr too short":
        indptr = indptr[:-2]
    elif defect == "indptr not from 0":
        indptr[0] = 1
    elif defect == "data too short":
        M.data = M.data[:-1]
    M.indices, M.indptr = indices, indptr
    return M


COMPRESSED_DEFECTS = ["negative index", "index too large", "indptr decreasing", "negative indptr",
                      "indptr past nnz", "indptr short of nnz", "indptr too short",
                      "indptr not from 0", "data too short"]
VALUE_DTYPES = [bool, np.int32, np.float32, np.float64]


def _corrupt_coo(defect, dtype=np.float64, index_dtype=np.int64):
    X, _ = data()
    M = sp.coo_matrix(X).astype(dtype)
    row, col = M.row.astype(index_dtype), M.col.astype(index_dtype)
    if defect == "negative row":
        row[2] = -1
    elif defect == "column too large":
        col[2] = X.shape[1]
    elif defect == "row array too short":
        row = row[:-1]
    M.row, M.col = row, col
    return M


@pytest.mark.parametrize("defect", COMPRESSED_DEFECTS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_malformed_compressed_matrix_named(defect, fmt, dtype, index_dtype):
    M = _corrupt_compressed(_compressed(fmt, dtype, index_dtype), defect)
    with pytest.raises(ValueError, match=f"malformed {fmt.upper()} matrix"):
        check_sparse_structure(M)


@pytest.mark.parametrize("defect", ["negative row", "column too large", "row array too short"])
@pytest.mark.parametrize("dtype", VALUE_DTYPES)
def test_malformed_coo_matrix_named(defect, dtype):
    with pytest.raises(ValueError, match="malformed COO matrix"):
        check_sparse_structure(_corrupt_coo(defect, dtype))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("defect", COMPRESSED_DEFECTS)
@pytest.mark.parametrize("dtype", [bool, np.float64])
def test_fit_refuses_malformed_csr(name, defect, dtype):
    # bool data: scikit-learn's dtype conversion would run scipy's C++ code on it
    X, y = data()
    M = _corrupt_compressed(_compressed("csr", dtype, np.int32), defect)
    with pytest.raises(ValueError, match="malformed CSR matrix"):
        make(name).fit(M, y)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_fit_refuses_malformed_csc_and_coo(name, fmt):
    _, y = data()
    M = (_corrupt_compressed(_compressed("csc", np.int64, np.int64), "index too large")
         if fmt == "csc" else _corrupt_coo("column too large", np.int64))
    with pytest.raises(ValueError, match=f"malformed {fmt.upper()} matrix"):
        make(name).fit(M, y)


PREDICTION_METHODS = [(name, method) for name in NAMES
                      for method in ("predict", "decision_function", "score")] + [
                     ("nystrom", "transform")]


@pytest.mark.parametrize("name, method", PREDICTION_METHODS)
@pytest.mark.parametrize("defect", ["negative index", "indptr decreasing", "indptr past nnz"])
def test_prediction_refuses_malformed_csr(fitted, name, method, defect):
    X, y = data()
    M = _corrupt_compressed(_compressed("csr", bool, np.int64), defect)
    args = (M, y) if method == "score" else (M,)
    with pytest.raises(ValueError, match="malformed CSR matrix"):
        getattr(fitted[name], method)(*args)


def test_partial_fit_refuses_malformed_csr():
    X, y = data()
    clf = make("budget").partial_fit(X, y)
    before = clf.decision_function(X)
    M = _corrupt_compressed(_compressed("csr", np.float32, np.int32), "negative indptr")
    with pytest.raises(ValueError, match="malformed CSR matrix"):
        clf.partial_fit(M, y)
    assert_array_equal(clf.decision_function(X), before)


def test_malformed_bsr_matrix_named():
    X, y = data()
    M = sp.bsr_matrix(X[:, :4], blocksize=(2, 2))
    M.indices = M.indices.copy()
    M.indices[0] = 7
    with pytest.raises(ValueError, match="malformed BSR matrix"):
        make("budget").fit(M, y)


@pytest.mark.parametrize("convert", [sp.csr_array, sp.lil_matrix, sp.dok_matrix, sp.dia_matrix,
                                     lambda X: sp.bsr_matrix(X, blocksize=(2, 1))])
def test_other_sparse_formats_give_the_csr_model(convert):
    X, y = data()
    expected = fit_quietly(make("budget"), sp.csr_matrix(X), y).decision_function(X)
    assert_array_equal(fit_quietly(make("budget"), convert(X), y).decision_function(X), expected)


@pytest.mark.parametrize("name", ["margin-sgd", "pegasos-rbf"])
@pytest.mark.parametrize("n_features", [5, 6000], ids=["dense-blocks", "sparse-blocks"])
def test_support_vectors_of_sparse_data_are_csr_rows(name, n_features):
    """As SVC keeps them: the training rows support_ as float64 CSR rows (their dense rows
    had refused hashed features of 2^20 columns: 8 MB a row), and the model predicts what
    the same rows stored dense give, K(X, sv) @ dual_coef_.T + intercept_ (scikit-learn's
    kernels), on dense rows, on rows made dense in blocks (few features) and on sparse
    rows against sparse support vectors (many features)."""
    X, y = data(n=60)
    if n_features > X.shape[1]:      # one more entry per row, in a column of its own
        X = np.hstack([X, np.eye(60, n_features - X.shape[1]) * 0.5])
    X = X.astype(np.float32).astype(np.float64)      # float32 input: rows kept in float64
    X_sparse = sp.csr_matrix(X.astype(np.float32))
    clf = fit_quietly(make(name), X_sparse, y)
    svc = SVC(gamma=clf.gamma_).fit(X_sparse, y)
    assert sp.issparse(clf.support_vectors_) and sp.issparse(svc.support_vectors_)
    assert clf.support_vectors_.dtype == np.float64
    assert_array_equal(clf.support_vectors_.toarray(), X_sparse[clf.support_].toarray())
    expected = (rbf_kernel(X, clf.support_vectors_.toarray(), gamma=clf.gamma_)
                @ clf.dual_coef_.T + clf.intercept_).ravel()
    for rows in (X_sparse, X):
        assert_allclose(clf.decision_function(rows), expected, rtol=1e-12, atol=1e-12)


def _messy(X):
    """CSR of X with every entry split into two halves (duplicates, summing exactly to
    the value) and each row's entries in reverse order."""
    M = sp.csr_matrix(X)
    rows, indices, values = [], [], []
    for i in range(M.shape[0]):
        cols = M.indices[M.indptr[i]:M.indptr[i + 1]][::-1]
        vals = M.data[M.indptr[i]:M.indptr[i + 1]][::-1]
        rows += [i] * 2 * len(cols)
        indices += list(np.repeat(cols, 2))
        values += list(np.repeat(vals / 2, 2))
    indptr = np.searchsorted(rows, np.arange(M.shape[0] + 1))
    messy = sp.csr_matrix((np.array(values), np.array(indices), indptr), shape=M.shape)
    assert not messy.has_canonical_format
    return messy


@pytest.mark.parametrize("name", NAMES)
def test_unsorted_and_duplicate_indices_give_the_canonical_model(name):
    X, y = data()
    canonical = sp.csr_matrix(X)
    messy = _messy(X)
    expected = fit_quietly(make(name), canonical, y).decision_function(canonical)
    for variant in (messy, messy.tocsc(), messy.tocoo()):
        clf = fit_quietly(make(name), variant, y)
        assert_array_equal(clf.decision_function(variant), expected)
        assert_array_equal(clf.decision_function(canonical), expected)


@pytest.mark.parametrize("name", NAMES)
def test_stored_zeros_give_the_canonical_model(name):
    """A CSR matrix that stores zeros (every third entry, and two all-zero rows, one with
    stored zeros) is the matrix without them: MarginSGDSVC, which joins rows equal in
    their stored entries, had chosen gamma_ 0.0028 instead of 0.0114 on 300 such rows."""
    X, y = make_classification(300, 6, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    X[np.abs(X) < 0.5] = 0.0
    X[[5, 9]] = 0.0
    canonical = sp.csr_matrix(X).tocoo()
    zero_rows, zero_cols = np.nonzero(X == 0.0)
    pick = ((np.arange(len(zero_rows)) % 3 == 0) & (zero_rows != 5)) | (zero_rows == 9)
    stored = sp.csr_matrix((np.append(canonical.data, np.zeros(pick.sum())),
                            (np.append(canonical.row, zero_rows[pick]),
                             np.append(canonical.col, zero_cols[pick]))), shape=X.shape)
    canonical = canonical.tocsr()
    assert stored.nnz > canonical.nnz and stored[9].nnz == 6 and stored[5].nnz == 0
    assert_array_equal(stored.toarray(), X)
    expected = fit_quietly(make(name), canonical, y).decision_function(canonical)
    assert_array_equal(fit_quietly(make(name), stored, y).decision_function(stored), expected)


@pytest.mark.parametrize("name", NAMES + ["budget-auto"])
def test_sparse_rows_storing_nothing_give_the_model_of_dense_zeros(name):
    """A CSR matrix without a stored entry is the all-zero array: BudgetSVC's 'auto' budget
    had measured its rows' kernel values on their used columns, none, and scikit-learn's
    kernel refused rows of 0 features."""
    y = np.arange(60) % 2
    clf = BudgetSVC(random_state=0) if name == "budget-auto" else make(name)
    expected = fit_quietly(clone(clf), np.zeros((60, 3)), y).decision_function(np.zeros((2, 3)))
    fitted = fit_quietly(clf, sp.csr_matrix((60, 3)), y)
    assert_array_equal(fitted.decision_function(sp.csr_matrix((2, 3))), expected)


@pytest.mark.parametrize("name", ["budget", "nystrom", "pegasos-rbf", "margin-sgd"])
def test_a_kernel_callable_may_return_a_sparse_matrix(name):
    """As SVC takes it: the model of the same kernel returned dense (it had been an error
    that the callable must return a numeric array)."""
    X, y = data()

    def dense(A, B):
        return np.exp(-0.2 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))

    params = {"maintenance": "remove"} if name == "budget" else {}
    expected = fit_quietly(make(name, kernel=dense, **params), X, y).decision_function(X)
    clf = fit_quietly(make(name, kernel=lambda A, B: sp.csr_matrix(dense(A, B)), **params), X, y)
    assert_array_equal(clf.decision_function(X), expected)


@pytest.mark.parametrize("name", ["budget", "nystrom", "pegasos-rbf", "margin-sgd"])
def test_an_arithmetic_error_of_a_kernel_callable_reaches_the_user(name):
    """As SVC passes it on: the user's own ZeroDivisionError, not fit's message that its
    arithmetic overflowed on extreme features, weights or parameters."""
    X, y = data()

    def broken(A, B):
        return (A @ B.T) * (1 / 0)

    params = {"maintenance": "remove"} if name == "budget" else {}
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        make(name, kernel=broken, **params).fit(X, y)


def test_stale_canonical_flag_is_not_trusted():
    """Indices permuted in place after scipy cached 'canonical': still summed and sorted."""
    X, y = data()
    expected = fit_quietly(make("budget"), sp.csr_matrix(X), y).decision_function(X)
    M = sp.csr_matrix(X)
    assert M.has_canonical_format
    start, stop = M.indptr[0], M.indptr[1]
    M.indices[start:stop] = M.indices[start:stop][::-1].copy()
    M.data[start:stop] = M.data[start:stop][::-1].copy()
    assert_array_equal(fit_quietly(make("budget"), M, y).decision_function(X), expected)


# ------------------------------------------------------------------ values and parameters
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", [1.7e308, -1e200, 1e155])
def test_values_whose_squares_overflow_are_refused(fitted, name, value):
    X, y = data()
    X[3, 1] = value
    with pytest.raises(ValueError, match="too large for float64"):
        make(name).fit(X, y)
    with pytest.raises(ValueError, match="too large for float64"):
        fitted[name].predict(X)
    with pytest.raises(ValueError, match="too large for float64"):
        make(name).fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [1e100, 1e150, 1e-150, 1e-153, 1e-160, 1e-300])
def test_extreme_but_representable_values(name, scale):
    """Far from unit scale but with finite squares: a finite model or a clear error."""
    X, y = data()
    assert_finite_or_value_error(make(name), X * scale, y)
    assert_finite_or_value_error(make(name), (X * min(scale, 1e30)).astype(np.float32), y)


@pytest.mark.parametrize("scale, match", [(1e-160, "too small to embed in float32"),
                                          (1e-300, "underflow to 0"),
                                          (1e40, "overflow float32: the kernel values on "
                                                 "them are too large")])
def test_nystrom_linear_kernel_names_the_scale_it_cannot_embed(scale, match):
    """Linear kernel values of 1e-320 give L^(-T) entries of 1e161, whose cast to float32
    overflowed with a RuntimeWarning and was then reported as kernel values too large."""
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=match):
            NystromSVC(kernel="linear", random_state=0).fit(X * scale, y)


@pytest.mark.parametrize("make", [
    lambda: BudgetSVC(random_state=0),
    lambda: BudgetSVC(random_state=0, multi_class="ovr"),
    lambda: PegasosSVC(kernel="rbf", random_state=0),
], ids=["budget", "budget-ovr", "kernel-pegasos"])
def test_dense_support_vectors_of_very_wide_sparse_data_are_refused(make):
    """CSR with 5 * 10^7 columns (20 non-zeros per row): dense support-vector rows would
    take gigabytes (BudgetSVC on 300 rows of 10^6 features had taken 77 s and 12 GB), so
    the fit of a model that trains on dense rows (BudgetSVC's store, kernel Pegasos') is a
    clear error; NystromSVC keeps its landmarks sparse, MarginSGDSVC its support vectors
    (CSR rows, as SVC's), and both fit."""
    rng = np.random.default_rng(0)
    n, d = 60, 50_000_000
    indices = np.sort(rng.choice(d, (n, 20)), axis=1).ravel()
    X = sp.csr_matrix((rng.random(20 * n), indices, np.arange(0, 20 * n + 1, 20)),
                      shape=(n, d))
    y = np.arange(n) % 3
    with pytest.raises(ValueError, match="DENSE_VECTORS_MAX_BYTES"):
        make().fit(X, y)
    assert NystromSVC(random_state=0).fit(X, y).score(X, y) > 0.9
    margin = MarginSGDSVC(random_state=0).fit(X, y)
    assert sp.issparse(margin.support_vectors_) and margin.support_vectors_.shape[1] == d
    assert margin.score(X, y) > 0.5


@pytest.mark.parametrize("name", NAMES)
def test_hashed_feature_indices_cost_their_non_zeros(name, tmp_path):
    """One entry at column 2^31 - 2 (hashed features in a LIBSVM file): products of CSR rows
    converted the transposed rows to CSR over every column (8.6 GB and 12 s for 40 rows,
    at every block of MarginSGDSVC's passes), and the linear models' dense coef_ of 16
    GiB was trained and saved to a file that load_model refuses.  Now each model is
    refused before it is trained, or fits and round-trips, in memory that follows the
    non-zeros (NumPy's allocations, traced): NystromSVC and MarginSGDSVC, which keep
    their landmarks and support vectors as CSR rows, fit and round-trip."""
    X, y = data()
    d = 2**31 - 1
    X = sp.hstack([sp.csr_matrix(X), sp.csr_matrix(([1.0], ([0], [d - 1 - X.shape[1]])),
                                                   shape=(X.shape[0], d - X.shape[1]))]).tocsr()
    est = make(name)
    tracemalloc.start()
    try:
        fit_quietly(est, X, y)
        fitted = True
    except ValueError as err:
        fitted = False
        message = str(err)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 200 * 2**20
    if name in ("nystrom", "margin-sgd"):       # sparse landmarks, sparse support vectors
        assert fitted and est.score(X, y) > 0.7
        save_model(est, tmp_path / "m.npz")
        assert_array_equal(load_model(tmp_path / "m.npz").predict(X), est.predict(X))
    else:
        assert not fitted
        what = "coefficients (coef_" if name in ("huber", "pegasos") else "support vectors"
        assert f"holds its {what}" in message and "DENSE_VECTORS_MAX_BYTES" in message


def test_a_model_file_load_model_would_refuse_is_not_written(monkeypatch, tmp_path):
    X, y = data()
    est = HuberSVC().fit(X, y)
    monkeypatch.setattr(persistence, "_MAX_ARRAY_BYTES", 64)
    with pytest.raises(ValueError, match="more than the 64 a model file may hold"):
        save_model(est, tmp_path / "big.npz")
    assert not (tmp_path / "big.npz").exists()
    monkeypatch.setattr(persistence, "_MAX_ARRAY_BYTES", 2**20)
    monkeypatch.setattr(persistence, "_MAX_META_BYTES", 64)
    with pytest.raises(ValueError, match="more than the 64 a model file's 'meta' may hold"):
        save_model(est, tmp_path / "big.npz")


@pytest.mark.parametrize("params", [{}, {"multi_class": "ovr", "shared_budget": False}],
                         ids=["ovo", "ovr-separate"])
def test_many_binary_models_are_bounded_together(monkeypatch, params):
    """Each of BudgetSVC's binary models checks its own store, but 45 one-vs-one pairs (or
    10 separate budgets) could together exceed the limit: the fit is refused before
    training, on the bound min(budget, rows) per model (a row enters a store once, however
    many epochs visit it; the bound had counted the steps), and fits under a limit the
    bound clears."""
    rng = np.random.default_rng(0)
    X, y = rng.random((400, 1000)), np.arange(400) % 10
    est = BudgetSVC(random_state=0, epochs=5, **params)
    models = 45 if not params else 10
    per_model = min(resolve_budget("auto", 10, est.multi_class, est.shared_budget),
                    80 if not params else 400)
    need = models * per_model * 1000 * 8 * 2       # the stores and support_vectors_
    monkeypatch.setattr(_options, "DENSE_VECTORS_MAX_BYTES", need - 1)
    with pytest.raises(ValueError, match="DENSE_VECTORS_MAX_BYTES"):
        est.fit(X, y)
    monkeypatch.setattr(_options, "DENSE_VECTORS_MAX_BYTES", need)
    assert est.fit(X, y).support_vectors_.shape[1] == 1000


@pytest.mark.parametrize("params", [{"multi_class": "ovo"},
                                    {"multi_class": "ovr", "shared_budget": False}],
                         ids=["ovo", "ovr-separate"])
def test_dense_dual_coef_of_many_separate_models_is_refused(monkeypatch, params):
    """Binary models with their own support vectors give a dense dual_coef_ of models x all
    their vectors: 150 classes one-vs-one on 6,000 rows asked for 15.7 GiB after training
    (a MemoryError, or swapping). Beyond DENSE_VECTORS_MAX_BYTES it is a clear error, the
    estimator keeping its previous model; the stores (one feature) pass the limit."""
    rng = np.random.default_rng(0)
    k = 20
    X, y = rng.normal(size=(1200, 1)) + np.arange(1200)[:, None] % k, np.arange(1200) % k
    est = BudgetSVC(random_state=0, epochs=1, **params).fit(X, y)
    before = est.dual_coef_.copy()
    limit = est.dual_coef_.nbytes - 1
    assert 8 * 2 * len(est.support_vectors_) < limit      # the stores alone would pass
    monkeypatch.setattr(_options, "DENSE_VECTORS_MAX_BYTES", limit)
    with pytest.raises(ValueError, match="dual_coef_ .* GiB.*multi_class='ovr'"):
        est.fit(X, y)
    assert_array_equal(est.dual_coef_, before)
    monkeypatch.setattr(_options, "DENSE_VECTORS_MAX_BYTES", limit + 1)
    assert_array_equal(est.fit(X, y).dual_coef_, before)


@pytest.mark.parametrize("name", ["budget-poly", "nystrom", "pegasos-rbf", "margin-sgd"])
def test_overflowing_polynomial_kernel_is_refused(name):
    X, y = data()
    with pytest.raises(ValueError, match="polynomial kernel .* overflows"):
        make(name, kernel="poly", gamma=1e300).fit(X, y)


@pytest.mark.parametrize("name", ["budget-poly", "nystrom", "pegasos-rbf", "margin-sgd"])
def test_polynomial_kernel_overflowing_through_a_negative_coef0_is_refused(name):
    """The bound on the kernel values takes |coef0|: gamma ||x||^2 = 1e120 and coef0 = -1e120
    cancel in gamma ||x||^2 + coef0, but K(x, x') = (gamma <x, x'> + coef0)^3 reaches
    (-1e120)^3 between orthogonal rows."""
    X = np.array([[1e60, 0], [0, 1e60], [1e60, 1], [1, 1e60]] * 5)
    y = [0, 1, 0, 1] * 5
    params = {"n_components": 4} if name == "nystrom" else {}
    with pytest.raises(ValueError, match="polynomial kernel .* overflows"):
        make(name, kernel="poly", degree=3, gamma=1.0, coef0=-(1e60 * 1e60), **params).fit(X, y)


@pytest.mark.parametrize("name, param", [("budget", "budget"), ("nystrom", "n_components")])
def test_integer_parameter_of_2_to_the_63_is_a_clear_error(name, param):
    """2**63 is the first integer that int64 cannot hold: refused as such, not left to wrap
    or to fail inside the compiled code."""
    X, y = data()
    with pytest.raises(ValueError, match=f"{param} must be a 64-bit integer"):
        make(name, **{param: 2**63}).fit(X, y)


EXTREME = [1e-300, 1e-30, 1e30, 1e300]
EXTREME_PARAMETERS = (
    [(name, "C", v) for name in NAMES if name != "margin-sgd" for v in EXTREME]
    + [(name, "gamma", v) for name in NAMES if name not in ("huber", "pegasos") for v in EXTREME]
    + [("margin-sgd", "M", v) for v in EXTREME]
    + [("nystrom", p, v) for p in ("eta0", "radius0") for v in EXTREME]
    + [("huber", p, v) for p in ("eta0", "h") for v in (1e-300, 1e-30, 0.999)]
    + [("budget", "budget", 10**12), ("nystrom", "n_components", 10_000),
       ("pegasos", "batch_size", 10_000), ("pegasos-rbf", "batch_size", 10_000),
       ("budget-poly", "degree", 60), ("budget-poly", "coef0", -1e300)])


@pytest.mark.parametrize("name, param, value", EXTREME_PARAMETERS)
def test_extreme_parameters_give_a_finite_model_or_a_clear_error(name, param, value):
    X, y = data()
    assert_finite_or_value_error(make(name, **{param: value}), X, y)


def _narrowest(value):
    """``value`` as the narrowest NumPy scalar that holds it exactly: unsigned 8 or 16 bits
    for small integers, float16 or float32 where they represent the float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, int):
        return np.uint8(value) if 0 <= value < 2**8 else (
            np.uint16(value) if 0 <= value < 2**16 else np.int64(value))
    for kind in (np.float16, np.float32):
        if float(kind(value)) == value:
            return kind(value)
    return np.float64(value)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_scalar_parameters_give_the_model_of_python_numbers(name):
    """Every number parameter as the narrowest NumPy scalar of its value (what an element
    of a NumPy grid is) gives the model of the Python numbers, and get_params gives the
    scalars back.  Used as they were, uint8 arithmetic had wrapped: kernel PegasosSVC's
    storage for max_iter=np.uint8(200) batches of 100 rows held 32 vectors (200 x 100
    mod 256), which its compiled steps wrote past (on 150 rows: "double free or
    corruption"), BudgetSVC's epochs were a ZeroDivisionError, NystromSVC's max_stages
    ran on past its cap; float16 reached the compiled kernels (an error) or lowered
    HuberSVC's precision.  Here every estimator's model differed or its fit failed."""
    X, y = data()
    extra = {"margin-sgd": {"tune_size": 20}, "nystrom": {"max_stages": 3, "tol": 1e-12}}
    clf = make(name, **extra.get(name, {}))
    expected = fit_quietly(clone(clf), X, y).decision_function(X)
    narrow = {k: _narrowest(v) for k, v in clf.get_params(deep=False).items()}
    assert any(isinstance(v, (np.uint8, np.float16)) for v in narrow.values())
    clf.set_params(**narrow)
    assert_array_equal(fit_quietly(clf, X, y).decision_function(X), expected)
    given = clf.get_params(deep=False)
    assert all(given[k] is v for k, v in narrow.items())


@pytest.mark.parametrize("name", NAMES)
def test_n_jobs_zero_is_refused_by_every_estimator(name):
    """joblib gives n_jobs = 0 no meaning: MarginSGDSVC, which never passes it to joblib,
    had accepted it, the others failed inside joblib with joblib's message."""
    X, y = data()
    with pytest.raises(ValueError, match="'n_jobs' parameter"):
        make(name, n_jobs=0).fit(X, y)
    fit_quietly(make(name, n_jobs=-2), X, y)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "margin-sgd"])
def test_lambda_outside_float_range_is_a_clear_error(name):
    X, y = data()
    with pytest.raises(ValueError, match="C=1e.300 is too large"):
        make(name, C=1e300).fit(X, y, sample_weight=np.full(len(y), 1e100))
    with pytest.raises(ValueError, match="C=1e-300 is too small"):
        make(name, C=1e-300).fit(X, y, sample_weight=np.full(len(y), 1e-100))


@pytest.mark.parametrize("name", [n for n in NAMES if n != "margin-sgd"])
def test_subnormal_lambda_is_a_clear_error(name):
    """lambda = 1 / (C n) = 1e-308 for C=1e306 on 100 rows: not 0, but below float64's
    normal range (its subnormal numbers lose precision), so refused as well."""
    X, y = data(n=100)
    with pytest.raises(ValueError, match=r"C=1e\+306 is too large.*normal range"):
        fit_quietly(make(name, C=1e306), X, y)


@pytest.mark.parametrize("name", NAMES)
def test_a_row_of_weight_zero_is_checked_as_the_others(name):
    """A row of weight 0 is dropped from training, but the model must still take it: values
    whose squared norm overflows (or a poly kernel's) are refused at fit, not first at
    predict on the training rows (found by the property test below)."""
    X, y = data(n=30)
    X[0, 0] = 1e200
    weight = np.ones(len(y))
    weight[0] = 0.0
    assert not assert_finite_or_value_error(make(name), X, y, sample_weight=weight)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("weight, C", [(1e-309, 1.0), (1e-309, 1e15), (1e-320, 1e15)])
def test_subnormal_sample_weights_give_a_finite_model_or_a_clear_error(name, weight, C):
    """Weights so small that n / S overflows: the step weights s_i n / S are formed without
    it (they were inf, and MarginSGDSVC, which ignores C, crashed on the NaN offsets)."""
    X, y = data()
    params = {} if name == "margin-sgd" else {"C": C}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert assert_finite_or_value_error(make(name, **params), X, y,
                                            sample_weight=np.full(len(y), weight))


def test_an_overflow_from_huge_weights_names_the_weights():
    X, y = data()
    with pytest.raises(ValueError, match="overflowed .*the sample or class weights"):
        PegasosSVC(random_state=0).fit(X, y, sample_weight=np.full(len(y), 1e300))


def test_margin_sgd_model_does_not_depend_on_the_scale_of_the_weights():
    X, y = data()
    plain = make("margin-sgd").fit(X, y)
    tiny = make("margin-sgd").fit(X, y, sample_weight=np.full(len(y), 1e-309))
    assert_array_equal(tiny.predict(X), plain.predict(X))


@pytest.mark.parametrize("name", [n for n in NAMES if n != "margin-sgd"])
def test_lambda_error_names_a_usable_C_without_overflowing(name):
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"use C of at least 1\.39e\+10, or scale"):
            make(name).fit(X, y, sample_weight=np.full(len(y), 1e-320))


def test_kernel_pegasos_large_C_stays_finite():
    """Its scale factor underflowed and coef / scale overflowed to a NaN model at C >= 1e5."""
    X, y = data()
    for C in (1e5, 1e10, 1e100, 1e160):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # lambda ||w||^2 overflowed at 1e160
            clf = fit_quietly(make("pegasos-rbf", C=C), X, y)
        assert np.all(np.isfinite(clf.dual_coef_)) and np.all(np.isfinite(clf.decision_function(X)))
        assert np.all(np.isfinite(clf.training_info_["objective"]))


@pytest.mark.parametrize("name", NAMES)
def test_nan_and_inf_stay_errors(name):
    X, y = data()
    for bad in (np.nan, np.inf):
        X_bad = X.copy()
        X_bad[0, 0] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            make(name).fit(X_bad, y)


@pytest.mark.parametrize("name", NAMES)
def test_nan_and_inf_are_named_under_assume_finite(fitted, name):
    """scikit-learn's assume_finite=True skips its check; NaN and inf were then reported
    as values too large for float64, sending the user to rescale."""
    X, y = data()
    for bad in (np.nan, np.inf):
        X_bad = X.copy()
        X_bad[3, 1] = bad
        with sklearn.config_context(assume_finite=True):
            with pytest.raises(ValueError, match=r"NaN or infinity \(row 3\)"):
                make(name).fit(X_bad, y)
            with pytest.raises(ValueError, match=r"NaN or infinity \(row 3\)"):
                fitted[name].decision_function(X_bad)


# ------------------------------------------------------------------ containers
def _containers(X):
    ro = X.copy()
    ro.flags.writeable = False
    columns = [f"f{j}" for j in range(X.shape[1])]
    return {
        "read-only": ro,
        "strided": np.repeat(X, 2, axis=1)[:, ::2],
        "fortran": np.asfortranarray(X),
        "big-endian": X.astype(">f8"),
        "DataFrame": pd.DataFrame(X, columns=columns),
        "big-endian DataFrame": pd.DataFrame({c: X[:, j].astype(">f8")
                                              for j, c in enumerate(columns)}),
        "nullable DataFrame": pd.DataFrame({c: pd.array(X[:, j], dtype="Float64")
                                            for j, c in enumerate(columns)}),
    }


def _read_only_csr(X):
    M = sp.csr_matrix(X)
    for array in (M.data, M.indices, M.indptr):
        array.flags.writeable = False
    return M


@pytest.mark.parametrize("name", NAMES)
def test_containers_give_the_model_of_the_plain_array(name):
    X, y = data()
    expected = fit_quietly(make(name), X, y).decision_function(X)
    for kind, container in _containers(X).items():
        clf = fit_quietly(make(name), container, y)
        assert_array_equal(clf.decision_function(container), expected, err_msg=kind)
        assert_array_equal(clf.decision_function(X), expected, err_msg=kind)


@pytest.mark.parametrize("name", NAMES)
def test_read_only_csr_gives_the_csr_model(name):
    X, y = data()
    expected = fit_quietly(make(name), sp.csr_matrix(X), y).decision_function(sp.csr_matrix(X))
    M = _read_only_csr(X)
    assert_array_equal(fit_quietly(make(name), M, y).decision_function(M), expected)


@pytest.mark.parametrize("name", NAMES)
def test_big_endian_float32_gives_the_float32_model(name):
    X, y = data()
    X32 = X.astype(np.float32)
    expected = fit_quietly(make(name), X32, y).decision_function(X32)
    assert_array_equal(fit_quietly(make(name), X.astype(">f4"), y).decision_function(X32),
                       expected)


@pytest.mark.parametrize("name", NAMES)
def test_mixed_and_nullable_dtypes(name):
    X, y = data()
    frame = pd.DataFrame({"a": X[:, 0], "b": (X[:, 1] * 10).astype(np.int16),
                          "c": X[:, 2].astype(np.float32), "d": X[:, 3] > 0,
                          "e": pd.array((X[:, 4] * 10).astype(int), dtype="Int64")})
    plain = frame.astype(np.float64).to_numpy()
    expected = fit_quietly(make(name), plain, y).decision_function(plain)
    clf = fit_quietly(make(name), frame, pd.Series(y, dtype="Int64"))
    assert_array_equal(clf.decision_function(frame), expected)
    frame.loc[3, "e"] = pd.NA
    with pytest.raises(ValueError, match="NaN"):
        make(name).fit(frame, y)


@pytest.mark.parametrize("name", NAMES)
def test_label_and_weight_containers(name):
    """Big-endian, read-only and pandas labels and sample weights: the plain arrays' model."""
    X, y = data()
    weight = 1.0 + np.arange(len(y)) % 3
    expected = fit_quietly(make(name), X, y, sample_weight=weight).decision_function(X)
    y_ro, weight_ro = y.copy(), weight.copy()
    y_ro.flags.writeable = weight_ro.flags.writeable = False
    for labels, weights in [(y.astype(">i4"), weight.astype(">f8")), (y_ro, weight_ro),
                            (pd.Series(y), pd.Series(weight)), (y.tolist(), weight.tolist())]:
        clf = fit_quietly(make(name), X, labels, sample_weight=weights)
        assert_array_equal(clf.decision_function(X), expected)


# ------------------------------------------------------------------ interruption
def _state(clf):
    """The estimator's attributes (identity of each value: a fit must not change any)."""
    return {key: id(value) for key, value in vars(clf).items()}


STAGES = ["validation", "training", "publishing"]


def _interrupt(monkeypatch, clf, stage):
    """Make the next fit of ``clf`` raise KeyboardInterrupt at ``stage``."""
    cls = type(clf)
    if stage == "validation":                       # after validate_data set n_features_in_
        def resolve(*args, **kwargs):
            raise KeyboardInterrupt
        monkeypatch.setattr("fastsvm.base.Kernel.resolve", resolve)
    elif stage == "training":                       # the whole solver ran
        fit = cls._fit

        def interrupted_fit(self, problem):
            fit(self, problem)
            raise KeyboardInterrupt
        monkeypatch.setattr(cls, "_fit", interrupted_fit)
        if hasattr(cls, "_train"):                   # BudgetSVC.partial_fit
            train = cls._train

            def interrupted_train(self, *args, **kwargs):
                train(self, *args, **kwargs)
                raise KeyboardInterrupt
            monkeypatch.setattr(cls, "_train", interrupted_train)
    else:                                           # half of the attributes set
        def half_publish(self, fitted, class_weight):
            for key in list(fitted)[: len(fitted) // 2]:
                setattr(self, key, fitted[key])
            raise KeyboardInterrupt
        monkeypatch.setattr("fastsvm.base.BaseSVC._publish", half_publish)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stage", STAGES)
def test_interrupted_refit_keeps_the_previous_model(monkeypatch, name, stage):
    X, y = data()
    clf = fit_quietly(make(name), X, y)
    before, state = clf.decision_function(X), _state(clf)
    X2, y2 = data(n=30, d=3, seed=1, n_classes=3)            # other shape, other classes
    _interrupt(monkeypatch, clf, stage)
    with pytest.raises(KeyboardInterrupt):
        fit_quietly(clf, X2, y2)
    monkeypatch.undo()
    assert _state(clf) == state
    assert_array_equal(clf.decision_function(X), before)


@pytest.mark.parametrize("name", NAMES)
def test_a_refit_shows_its_input_attributes_only_with_its_model(monkeypatch, name):
    """scikit-learn's validation sets n_features_in_ and feature_names_in_ at the start of
    fit: another thread predicting during a refit saw the new feature count with the old
    coefficients.  They now wait for the model, and the previous model stays whole."""
    X, y = data()
    clf = fit_quietly(make(name), pd.DataFrame(X, columns=[f"f{i}" for i in range(5)]), y)
    before = clf.decision_function(pd.DataFrame(X, columns=clf.feature_names_in_))
    cls, seen = type(clf), []
    fit = cls._fit

    def watched_fit(self, problem):
        seen.append((self.n_features_in_, list(self.feature_names_in_),
                     self.decision_function(pd.DataFrame(X, columns=self.feature_names_in_))))
        return fit(self, problem)
    monkeypatch.setattr(cls, "_fit", watched_fit)
    X2, y2 = data(n=30, d=3, seed=1, n_classes=3)
    fit_quietly(clf, X2, y2)                    # no feature names this time
    assert seen[0][:2] == (5, [f"f{i}" for i in range(5)])
    assert_array_equal(seen[0][2], before)
    assert clf.n_features_in_ == 3 and not hasattr(clf, "feature_names_in_")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stage", STAGES)
def test_interrupted_first_fit_leaves_it_unfitted(monkeypatch, name, stage):
    X, y = data()
    clf = make(name)
    state = _state(clf)
    _interrupt(monkeypatch, clf, stage)
    with pytest.raises(KeyboardInterrupt):
        fit_quietly(clf, X, y)
    monkeypatch.undo()
    assert _state(clf) == state
    with pytest.raises(NotFittedError):
        clf.predict(X)


@pytest.mark.parametrize("stage", STAGES)
def test_interrupted_partial_fit_keeps_the_model(monkeypatch, stage):
    X, y = data()
    clf = make("budget").partial_fit(X, y)
    before, state = clf.decision_function(X), _state(clf)
    n_seen = clf._streams[0].n_seen
    _interrupt(monkeypatch, clf, stage)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X, y)
    monkeypatch.undo()
    assert _state(clf) == state and clf._streams[0].n_seen == n_seen
    assert_array_equal(clf.decision_function(X), before)
    clf.partial_fit(X, y)                       # and it goes on from there
    assert clf._streams[0].n_seen == 2 * n_seen


def test_interrupted_nystrom_fit_transform_keeps_the_model(monkeypatch):
    X, y = data()
    clf = fit_quietly(make("nystrom"), X, y)
    before, state = clf.transform(X), _state(clf)
    fit_embedding = NystromSVC._fit_embedding

    def interrupted(self, problem):
        fit_embedding(self, problem)
        raise KeyboardInterrupt
    monkeypatch.setattr(NystromSVC, "_fit_embedding", interrupted)
    with pytest.raises(KeyboardInterrupt):
        clf.fit_transform(*data(n=30, d=3, seed=1))
    monkeypatch.undo()
    assert _state(clf) == state
    assert_array_equal(clf.transform(X), before)


@pytest.mark.parametrize("name, endless", [
    ("budget", dict(epochs=10**9)),
    ("pegasos", dict(max_iter=10**9)),
])
def test_sigint_during_refit_restores_the_model(name, endless):
    """A real SIGINT (Ctrl-C) sent during a refit that would never end by itself."""
    X, y = data(n=400, d=10)
    clf = fit_quietly(make(name), X, y)
    before, state = clf.decision_function(X), _state(clf)
    clf.set_params(**endless)
    params_state = _state(clf)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            clf.fit(*data(n=400, d=8, seed=1, n_classes=3))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, handler)
    assert _state(clf) == params_state and params_state.keys() == state.keys()
    assert_array_equal(clf.decision_function(X), before)


# ------------------------------------------------------------------ property-based
def _structure_ok(fmt, shape, data_len, major_index, minor_index):
    """Plain-Python oracle of a well-formed CSR/CSC (major_index = indptr) or COO
    (major_index = rows) structure."""
    n_major, n_minor = shape if fmt != "csc" else shape[::-1]
    if fmt == "coo":
        return (len(major_index) == len(minor_index) == data_len
                and all(0 <= r < shape[0] for r in major_index)
                and all(0 <= c < shape[1] for c in minor_index))
    indptr = list(major_index)
    return (len(indptr) == n_major + 1 and indptr[0] == 0
            and all(a <= b for a, b in zip(indptr, indptr[1:]))
            and indptr[-1] == len(minor_index) == data_len
            and all(0 <= j < n_minor for j in minor_index))


@st.composite
def raw_sparse(draw):
    """A sparse matrix whose arrays are drawn freely (mostly well-formed, often not)."""
    fmt = draw(st.sampled_from(["csr", "csc", "coo"]))
    n, d = draw(st.integers(4, 12)), draw(st.integers(1, 5))
    dtype = draw(st.sampled_from(VALUE_DTYPES))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    dense = draw(hnp.arrays(np.float64, (n, d), elements=st.sampled_from([0.0, 0.0, 1.0, -2.5,
                                                                          0.5])))
    dense[np.arange(n), np.arange(n) % d] += 1.0              # no empty row: two classes fit
    M = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}[fmt](dense)
    M = M.astype(dtype)
    major = list(M.row if fmt == "coo" else M.indptr)
    minor = list(M.col if fmt == "coo" else M.indices)
    values = M.data
    edit = draw(st.sampled_from(["none", "major", "minor", "data", "shuffle"]))
    if edit in ("major", "minor") and (major if edit == "major" else minor):
        target = major if edit == "major" else minor
        position = draw(st.integers(0, len(target) - 1))
        target[position] = draw(st.integers(-3, max(n, d) + 3))
    elif edit == "data" and len(values):
        values = values[: draw(st.integers(0, len(values) - 1))]
    elif edit == "shuffle" and fmt != "coo":                  # unsorted indices, still valid
        for start, stop in zip(major[:-1], major[1:]):
            minor[start:stop] = minor[start:stop][::-1]
            values[start:stop] = values[start:stop][::-1]
    major_arr, minor_arr = np.array(major, dtype=index_dtype), np.array(minor, dtype=index_dtype)
    if fmt == "coo":
        M.row, M.col = major_arr, minor_arr
    else:
        M.indptr, M.indices = major_arr, minor_arr
    M.data = values
    return M, _structure_ok(fmt, (n, d), len(values), major, minor)


@given(matrix=raw_sparse(), name=st.sampled_from(NAMES))
def test_property_sparse_structures(matrix, name):
    """ValueError exactly when the structure is malformed; otherwise the contract."""
    M, well_formed = matrix
    y = np.arange(M.shape[0]) % 2
    if not well_formed:
        with pytest.raises(ValueError, match="malformed"):
            make(name).fit(M, y)
        event("malformed")
        return
    event("fitted" if assert_finite_or_value_error(make(name), M, y) else "ValueError")


FINITE_VALUES = st.one_of(st.floats(-10, 10), st.sampled_from([0.0, 1e-300, -1e-300, 5e-324,
                                                               1e150, -1e150, 1e200, 1.7e308]))


@st.composite
def dense_problem(draw):
    n, d = draw(st.integers(2, 20)), draw(st.integers(1, 5))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64]))
    X = draw(hnp.arrays(np.float64, (n, d), elements=FINITE_VALUES))
    if dtype != np.float64:                 # values within the dtype's range
        limit = 3e38 if dtype == np.float32 else 1e9
        X = np.clip(X, -limit, limit).astype(dtype)
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 2)))
    weight = draw(st.none() | hnp.arrays(np.float64, n, elements=st.sampled_from(
        [0.0, 1.0, 2.5, 1e-300, 1e300])))
    return X, y, weight


@given(problem=dense_problem(), name=st.sampled_from(NAMES),
       C=st.sampled_from([1.0, 1e-300, 1e300, 1e-5, 1e5]))
def test_property_dense_arrays(problem, name, C):
    """Any finite array, labels and weights: a ValueError or a finite, well-formed model."""
    X, y, weight = problem
    params = {} if name == "margin-sgd" else {"C": C}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fitted = assert_finite_or_value_error(make(name, **params), X, y, sample_weight=weight)
    event("fitted" if fitted else "ValueError")


@given(X=hnp.arrays(np.float64, st.tuples(st.integers(1, 10), st.just(5)), elements=FINITE_VALUES),
       name=st.sampled_from(NAMES), single=st.booleans(), sparse=st.booleans())
def test_property_prediction_inputs(fitted, X, name, single, sparse):
    """Any finite rows: decision values that are finite, or a ValueError."""
    clf = fitted[name]
    if single:
        X = np.clip(X, -3e38, 3e38).astype(np.float32)
    X = sp.csr_matrix(X) if sparse else X
    try:
        decision = clf.decision_function(X)
    except ValueError:
        event("ValueError")
        return
    event("predicted")
    assert np.all(np.isfinite(decision)) and decision.shape[0] == X.shape[0]
    if name == "nystrom":
        assert np.all(np.isfinite(clf.transform(X)))


@given(batches=st.lists(dense_problem(), min_size=1, max_size=3))
def test_property_partial_fit_batches(batches):
    """A stream of arbitrary batches: each call gives a finite model or a ValueError that
    leaves the previous model as it was."""
    clf = make("budget")
    classes = np.arange(3)
    previous = decision = None
    for X, y, weight in batches:
        X = np.resize(X, (len(X), 3)).astype(np.float64)            # one width per stream
        try:
            clf.partial_fit(X, y, classes=classes, sample_weight=weight)
        except ValueError:
            event("ValueError")
            if previous is not None:
                assert_array_equal(clf.decision_function(previous), decision)
            continue
        previous, decision = X, clf.decision_function(X)
        assert np.all(np.isfinite(decision))


def test_compiled_code_in_bounds():
    """The property-based tests (arrays, sparse structures, model files, LIBSVM text)
    again in a process with NUMBA_BOUNDSCHECK=1 (and its own
    numba cache): an out-of-bounds access in compiled code fails instead of corrupting
    memory.  Compiling every kernel with bounds checks takes about half a minute."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(root / ".numba-boundscheck"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "property",
         str(Path(__file__)), str(root / "tests" / "test_model_files.py"),
         str(root / "tests" / "test_svmlight_files.py")],
        cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
