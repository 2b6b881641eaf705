"""SVC's kernels in every estimator: 'linear', 'poly', 'rbf', 'sigmoid', 'precomputed' and
callables, the clear errors where a method rules one out, and the behaviours scikit-learn's
sklearn/svm/tests/test_svm.py and test_sparse.py check for kernels and sparse input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC, _options
from fastsvm.kernels import Kernel, row_sq_norms
from fastsvm.multiclass import ovo_scores

#: Estimators that take every kernel, at small settings.
KERNEL_ESTIMATORS = {
    # removal at 30 per one-vs-one pair of about 133 rows drops most of each model: rbf 0.60
    "budget": lambda **kw: BudgetSVC(**{"budget": 60, "maintenance": "remove",
                                        "random_state": 0, **kw}),
    "nystrom": lambda **kw: NystromSVC(**{"n_components": 40, "random_state": 0, **kw}),
    # one batch size and one split for every kernel ('auto' splits the linear kernel
    # one-vs-rest, as LinearSVC, and the others one-vs-one, as SVC)
    "pegasos": lambda **kw: PegasosSVC(**{"batch_size": 100, "max_iter": 300,
                                          "multi_class": "ovo", "random_state": 0, **kw}),
    "margin-sgd": lambda **kw: MarginSGDSVC(**{"M": 1.0, "random_state": 0, **kw}),
}
KERNEL_PARAMS = {
    "linear": {},
    "poly": dict(gamma=0.3, degree=2, coef0=1.0),
    "rbf": dict(gamma=0.3),
    "sigmoid": dict(gamma=0.05, coef0=-1.0),
}


def _fit(clf, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y, **kw)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(200, n_features=5, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    return X, y


def _params(name, kernel):
    params = dict(kernel=kernel, **KERNEL_PARAMS[kernel])
    if name == "pegasos" and kernel == "sigmoid":
        params["margin_bounds"] = False
    return params


# ------------------------------------------------------------------ every kernel
@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
def test_every_kernel_fits_and_predicts(name, kernel, data):
    X, y = data
    clf = _fit(KERNEL_ESTIMATORS[name](**_params(name, kernel)), X, y)
    assert clf.decision_function(X).shape == (len(y), 3)
    assert set(clf.predict(X)) <= set(y)
    if kernel in ("rbf", "poly"):
        assert clf.score(X, y) > 0.6
    if hasattr(clf, "dual_coef_"):          # a kernel expansion: f = K(X, SV) dual + b
        K = pairwise_kernels(X, clf.support_vectors_, metric=kernel, **KERNEL_PARAMS[kernel])
        values = K @ clf.dual_coef_.T + clf.intercept_
        split = clf.training_info_.get("multi_class", getattr(clf, "multi_class", "ovr"))
        if split == "ovo":                                  # 3 pairs: SVC's class scores
            values = ovo_scores(values, 3)
        assert_allclose(clf.decision_function(X), values, rtol=1e-9, atol=1e-9)
        assert clf.gamma_ == KERNEL_PARAMS[kernel].get("gamma")


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_precomputed_equals_the_kernel_it_holds(name, data):
    """test_svm.py::test_precomputed: the linear kernel matrix gives the linear model."""
    X, y = data
    linear = _fit(KERNEL_ESTIMATORS[name](kernel="linear"), X, y)
    K, K_test = X @ X.T, X[:50] @ X.T
    pre = _fit(KERNEL_ESTIMATORS[name](kernel="precomputed"), K, y)
    # NystromSVC: the float32 embedding rounds differently (BLAS), and ASSG amplifies it
    tol = 1e-4 if name == "nystrom" else 1e-7
    assert_allclose(pre.decision_function(K_test), linear.decision_function(X[:50]), rtol=tol,
                    atol=tol)
    assert_array_equal(pre.predict(K_test), linear.predict(X[:50]))
    assert pre.n_features_in_ == len(y)
    # only the support vectors' columns are read
    if hasattr(pre, "support_"):
        sparse_test = np.zeros_like(K_test)
        sparse_test[:, pre.support_] = K_test[:, pre.support_]
        assert_allclose(pre.decision_function(sparse_test), pre.decision_function(K_test))
    with pytest.raises(ValueError, match="features"):
        pre.predict(K_test.T)
    with pytest.raises(ValueError, match="square"):
        KERNEL_ESTIMATORS[name](kernel="precomputed").fit(K[:, :50], y)
    with pytest.raises(TypeError, match="sparse precomputed"):
        KERNEL_ESTIMATORS[name](kernel="precomputed").fit(sp.csr_matrix(K), y)


def test_primal_and_kernel_pegasos_agree(data):
    """PegasosSVC(kernel='linear') updates w, kernel='precomputed' its expansion: the same
    iterates on the same batches."""
    X, y = data
    params = dict(batch_size=100, max_iter=300, multi_class="ovr", random_state=0)
    primal = PegasosSVC(**params).fit(X, y)
    dual = PegasosSVC(kernel="precomputed", **params).fit(X @ X.T, y)
    assert_allclose(dual.decision_function(X[:50] @ X.T), primal.decision_function(X[:50]),
                    rtol=1e-8, atol=1e-8)


def _count_kernel(A, B):
    """Counts of 'A' times counts of 'A' plus counts of 'B' times counts of 'B' of strings."""
    count = lambda S, c: np.array([s.count(c) for s in S], dtype=float)  # noqa: E731
    return np.outer(count(A, "A"), count(B, "A")) + np.outer(count(A, "B"), count(B, "B"))


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_callable_kernel_on_input_that_is_not_an_array(name):
    """test_svm.py::test_custom_kernel_not_array_input: the callable gets X as given.  The
    rows are distinct: MarginSGDSVC knows copies of feature rows (and validates them apart),
    which a kernel matrix cannot show."""
    rng = np.random.default_rng(0)
    counts = np.column_stack(np.divmod(rng.choice(12 * 12, size=80, replace=False), 12))
    strings = [" ".join(["A"] * a + ["B"] * b) for a, b in counts]
    y = (counts[:, 0] > counts[:, 1]).astype(int)
    K = _count_kernel(strings, strings)
    assert_array_equal(K, counts @ counts.T)
    on_strings = _fit(KERNEL_ESTIMATORS[name](kernel=_count_kernel), strings, y)
    on_counts = _fit(KERNEL_ESTIMATORS[name](kernel="linear"), counts.astype(float), y)
    on_matrix = _fit(KERNEL_ESTIMATORS[name](kernel="precomputed"), K, y)
    tol = 1e-4 if name == "nystrom" else 1e-7        # see test_precomputed_equals_...
    assert_allclose(on_strings.decision_function(strings), on_matrix.decision_function(K),
                    rtol=tol, atol=tol)
    assert_allclose(on_strings.decision_function(strings),
                    on_counts.decision_function(counts.astype(float)), rtol=tol, atol=tol)
    assert on_strings.score(strings, y) == on_counts.score(counts.astype(float), y)
    assert not hasattr(on_strings, "n_features_in_")
    if hasattr(on_strings, "support_vectors_"):
        assert list(on_strings.support_vectors_) == [strings[i] for i in on_strings.support_]


class _OnlyArray:
    """An array-like with ``__array__`` and nothing else (scikit-learn's _NotAnArray)."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array


def _sparse_rbf(A, B):
    """The RBF kernel (gamma 0.3) of dense or CSR rows, refusing any other sparse format."""
    assert not sp.issparse(A) or A.format == "csr"
    return pairwise_kernels(A, B, metric="rbf", gamma=0.3)


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_callable_kernel_on_any_sparse_format_or_array_like(name, data):
    """SVC hands a callable X in any sparse format, or an object with only __array__.  The
    estimators take rows of X, so they make sparse input CSR (COO, DIA and DOK have no rows
    to take) and such an object an array: the model of the dense rows, every time."""
    X, y = data
    X = np.where(np.abs(X) > 0.5, X, 0.0)
    dense = _fit(KERNEL_ESTIMATORS[name](kernel=_sparse_rbf), X, y)
    for given in [*(sp.coo_matrix(X).asformat(f) for f in ("coo", "dia", "dok", "bsr")),
                  sp.coo_array(X), _OnlyArray(X)]:
        clf = _fit(KERNEL_ESTIMATORS[name](kernel=_sparse_rbf), given, y)
        assert_allclose(clf.decision_function(given), dense.decision_function(X),
                        rtol=1e-6, atol=1e-6)


def test_bad_kernel_callables_are_clear_errors(data, monkeypatch):
    X, y = data
    with pytest.raises(ValueError, match="returned an array of shape"):
        NystromSVC(kernel=lambda A, B: A @ B[:3].T, n_components=10).fit(X, y)
    with pytest.raises(ValueError, match="NaN or infinite"):
        BudgetSVC(kernel=lambda A, B: np.full((len(A), len(B)), np.nan),
                  maintenance="remove").fit(X, y)
    with pytest.raises(ValueError, match="numeric array"):
        PegasosSVC(kernel=lambda A, B: "not a matrix").fit(X, y)
    with pytest.raises(TypeError, match="numeric array"):     # NumPy's type, as from SVC
        PegasosSVC(kernel=lambda A, B: np.full((len(A), len(B)), {}, dtype=object)).fit(X, y)

    def failing(A, B):
        raise KeyError("the callable's own error")
    with pytest.raises(KeyError, match="the callable's own error"):    # as it is, as in SVC
        NystromSVC(kernel=failing).fit(X, y)
    monkeypatch.setattr(_options, "GRAM_MAX_BYTES", 1000)
    with pytest.raises(ValueError, match=r"200 x 200 kernel matrix .*GRAM_MAX_BYTES"):
        MarginSGDSVC(kernel=lambda A, B: A @ B.T, M=1.0).fit(X, y)


# ------------------------------------------------------------------ ruled out by the method
@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("coef0", [-1.0, 0.0, 0.5])
def test_psd_says_whether_kernel_matrices_can_be_indefinite(degree, coef0):
    """Kernel.psd, brute force: the smallest eigenvalue of the poly kernel's matrix on
    random points is >= 0 where psd holds, and some points give a negative one where not."""
    kernel = Kernel("poly", 1.0, degree, coef0)
    points = (np.random.default_rng(0).normal(size=(30, 3)), np.array([[0.0], [1.0]]),
              np.array([[0.0], [0.5], [1.0]]))
    # the smallest eigenvalue of each matrix relative to its largest entry
    smallest = min(np.linalg.eigvalsh(K)[0] / np.abs(K).max()
                   for K in (kernel(X, X) for X in points))
    if kernel.psd:
        assert smallest >= -1e-12
    else:
        assert smallest < -1e-3
    assert not Kernel("sigmoid", 1.0, 3, 0.0).psd and Kernel("rbf", 1.0, 3, 0.0).psd


@pytest.mark.parametrize("clf, match", [
    (HuberSVC(kernel="rbf"), "HuberSVC does not support kernel='rbf': HuberSVC is gradient "
                             "descent on a linear model"),
    (HuberSVC(kernel="precomputed"), "does not support kernel='precomputed'"),
    (HuberSVC(kernel=np.dot), "does not support kernel=<"),
    (BudgetSVC(kernel="poly"), "maintenance='merge' needs the Gaussian or the linear kernel"),
    (PegasosSVC(kernel="sigmoid"), "not positive semi-definite.*margin_bounds=False"),
    (PegasosSVC(kernel="poly", coef0=-5.0), "'poly' with coef0 < 0 is not positive semi-def"),
    (NystromSVC(kernel="cosine"), "kernel"),
    (BudgetSVC(kernel="rbf", gamma=np.inf), "gamma"),
    (PegasosSVC(kernel="poly", coef0=np.nan), "coef0 must be finite"),
    (MarginSGDSVC(kernel="rbf", gamma=-1.0), "gamma"),
])
def test_kernels_a_method_rules_out_are_clear_errors(clf, match, data):
    X, y = data
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)


def test_partial_fit_refuses_kernel_matrices(data):
    X, y = data
    for kernel in ("precomputed", lambda A, B: A @ B.T):
        clf = BudgetSVC(kernel=kernel, maintenance="remove")
        assert not hasattr(clf, "partial_fit")          # as scikit-learn's checks expect
        with pytest.raises(AttributeError, match="partial_fit") as info:
            clf.partial_fit(X @ X.T, y)
        assert "does not extend across batches" in str(info.value.__cause__)


def test_merging_still_needs_only_the_rbf_kernel(data):
    X, y = data
    clf = BudgetSVC(budget=20, random_state=0).fit(X, y)
    assert clf.training_info_["merges"] > 0
    assert np.all(clf.support_ >= -1)
    assert np.any(clf.support_ == -1)          # merged vectors are no training rows
    with pytest.raises(ValueError, match="maintenance='merge' needs the Gaussian or the linear kernel"):
        BudgetSVC(kernel="precomputed").fit(X @ X.T, y)


# ------------------------------------------------------------------ sparse and dense
SPARSE_CASES = [
    ("budget", "rbf"), ("budget", "poly"), ("nystrom", "rbf"), ("nystrom", "sigmoid"),
    ("pegasos", "linear"), ("pegasos", "rbf"), ("margin-sgd", "rbf"), ("margin-sgd", "poly"),
]


@pytest.mark.parametrize("name, kernel", SPARSE_CASES)
@pytest.mark.usefixtures("csr_loops")
def test_sparse_and_dense_input_give_the_same_model(name, kernel, data):
    """test_sparse.py::test_svc and friends: CSR input is the same problem as dense, with
    sample weights too, and a sparse model predicts dense input alike."""
    X, y = data
    X = np.where(np.abs(X) > 0.8, X, 0.0)
    weight = np.random.default_rng(0).choice([0.5, 1.0, 2.0], len(y))
    params = _params(name, kernel)
    if name == "budget" and kernel == "rbf":
        params["maintenance"] = "merge"
    dense = _fit(KERNEL_ESTIMATORS[name](**params), X, y, sample_weight=weight)
    sparse = _fit(KERNEL_ESTIMATORS[name](**params), sp.csr_matrix(X), y, sample_weight=weight)
    assert_allclose(sparse.decision_function(X), dense.decision_function(X), rtol=1e-5,
                    atol=1e-6)
    assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X),
                    rtol=1e-5, atol=1e-6)
    assert_array_equal(sparse.predict(X), dense.predict(X))


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
@pytest.mark.usefixtures("csr_loops")
def test_float32_csr_far_from_the_origin_is_the_dense_problem(name):
    """gamma='scale' and the rows' squared norms of float32 CSR input are computed in
    float64, as for dense input: at an offset of 3e4 their float32 sums had lost the
    variance (gamma 1.0 instead of 0.58) and the norms the distances."""
    rng = np.random.RandomState(0)
    X = (3e4 + rng.randn(200, 2)).astype(np.float32)
    y = (X[:, 0] > 3e4).astype(int)
    dense = _fit(KERNEL_ESTIMATORS[name](kernel="rbf", gamma="scale"), X, y)
    sparse = _fit(KERNEL_ESTIMATORS[name](kernel="rbf", gamma="scale"), sp.csr_matrix(X), y)
    assert_allclose(sparse.gamma_, 1.0 / (2 * X.astype(np.float64).var()), rtol=1e-6)
    assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X),
                    atol=1e-4)


def test_row_norms_of_float32_csr_are_summed_in_float64():
    X = np.full((3, 1000), 3e4, dtype=np.float32)
    X[:, 1:] = np.random.RandomState(1).rand(3, 999).astype(np.float32)
    expected = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    assert_allclose(row_sq_norms(sp.csr_matrix(X)), expected, rtol=1e-12)


@pytest.mark.usefixtures("csr_loops")
def test_sparse_and_dense_huber(data):
    X, y = data
    X = np.where(np.abs(X) > 0.8, X, 0.0)
    dense = HuberSVC(eta0=10.0, tol=1e-8).fit(X, y)
    sparse = HuberSVC(eta0=10.0, tol=1e-8).fit(sp.csr_matrix(X), y)
    # the same iterates up to rounding (dense prefix sums, sparse boundary sums), which the
    # first steps amplify a little
    assert_allclose(sparse.coef_, dense.coef_, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("share, packed_dense", [(0.1, False), (0.6, True)])
def test_csr_input_is_packed_dense_from_a_quarter_of_stored_entries(share, packed_dense):
    """CSR input storing at least PACKED_DENSE_FROM of its entries is packed dense; either
    way the models equal those the CSR loops learn from it, and a sparser input stays CSR."""
    from fastsvm._packed import PackedData

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 12)) * (rng.random((300, 12)) < share)
    y = (X @ rng.normal(size=12) > 0).astype(int)
    X = sp.csr_matrix(X)
    assert PackedData.from_matrix(X).is_sparse is not packed_dense
    assert PackedData.from_matrix(X.astype(np.float32)).dense.dtype == np.float32
    estimators = [HuberSVC(), PegasosSVC(random_state=0), BudgetSVC(budget=30, random_state=0)]
    packed = [est.fit(X, y).decision_function(X) for est in estimators]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_options, "PACKED_DENSE_FROM", np.inf)
        assert PackedData.from_matrix(X).is_sparse
        loops = [est.fit(X, y).decision_function(X) for est in estimators]
    for a, b in zip(packed, loops):     # up to rounding (sums in another order)
        assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ batch evaluation
@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS) + ["laplacian"])
@pytest.mark.parametrize("layout", ["dense", "float32", "csr", "same"])
def test_kernel_matrix_and_expansion_equal_scikit_learns_kernels(kernel, layout, data,
                                                                monkeypatch):
    """K(A, B) and the expansions K(X, centers) @ coef (dense and sparse coef, in several
    row blocks) against scikit-learn's pairwise kernels; K(X, X) of the same rows has an
    exact unit diagonal for 'rbf', as scikit-learn's gives."""
    from fastsvm.kernels import Kernel

    params = {"gamma": 0.3} if kernel == "laplacian" else KERNEL_PARAMS[kernel]
    k = Kernel(kernel, params.get("gamma"), params.get("degree", 3), params.get("coef0", 0.0))
    X, centers = data[0][:70], data[0][150:]
    if layout == "float32":
        X = X.astype(np.float32)
    if layout == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    if layout == "same":
        centers = X
    want = pairwise_kernels(X, centers, metric=kernel, **params)
    got = k(X, centers)
    assert got.dtype == np.float64 and got.flags.c_contiguous
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    buffer = np.full(want.shape, np.nan)          # used by the dense dot-product kernels
    assert_array_equal(k(X, centers, buffer), got)
    if layout == "same" and kernel == "rbf":
        assert_array_equal(np.diagonal(got), 1.0)
    coef = np.random.default_rng(0).standard_normal((len(centers), 3))
    coef[np.abs(coef) < 0.8] = 0.0
    monkeypatch.setattr(_options, "PREDICT_CHUNK_ROWS", 16)      # five blocks of rows
    for c in (coef, coef[:, :1], sp.csr_array(coef)):
        assert_allclose(k.expansion(X, centers, c), want @ c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_a_width_whose_exponents_overflow_gives_exp_limit_without_warning(kernel, layout,
                                                                          data):
    """gamma = 1e308: -gamma d overflows to -inf for every distance above 1.8, and exp
    of it is 0, the exact limit, so there is nothing to warn about (scikit-learn's
    pairwise kernels, which compute the sparse case, warned "overflow encountered in
    multiply")."""
    from fastsvm.kernels import Kernel

    X = data[0][:40]
    X = sp.csr_matrix(X) if layout == "csr" else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = Kernel(kernel, 1e308)(X, X)
    assert_array_equal(K, np.eye(40))


@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
def test_expansion_of_sparse_rows_transposes_the_dense_centers_once(kernel, monkeypatch):
    """CSR rows too sparse to be made dense, against dense centers (BudgetSVC's support
    vectors): scikit-learn's pairwise kernels, given the centers transposed, made SciPy copy
    them in every block of rows (2 GB a block for 2,000 centers of 131,072 features); the
    expansion transposes them once and equals scikit-learn's values."""
    from fastsvm.kernels import Kernel, dense_blocks_pay

    params = KERNEL_PARAMS[kernel]
    k = Kernel(kernel, params.get("gamma"), params.get("degree", 3), params.get("coef0", 0.0))
    X = sp.random(70, 400, density=0.02, format="csr", random_state=0) * 3.0
    centers = np.random.default_rng(1).standard_normal((30, 400)) * 0.2
    assert not dense_blocks_pay(X)
    coef = np.random.default_rng(2).standard_normal((30, 3))
    coef[np.abs(coef) < 0.8] = 0.0
    want = pairwise_kernels(X, centers, metric=kernel, **params)
    transposed = []
    original = Kernel._sparse_rows_against

    def counted(self, centers):
        transposed.append(centers.shape)
        return original(self, centers)

    monkeypatch.setattr(Kernel, "_sparse_rows_against", counted)
    monkeypatch.setattr(_options, "PREDICT_CHUNK_ROWS", 16)      # five blocks of rows
    for c in (coef, sp.csr_array(coef)):
        transposed.clear()
        assert_allclose(k.expansion(X, centers, c), want @ c, rtol=1e-10, atol=1e-12)
        assert transposed == [centers.shape]


def test_a_callable_is_called_with_the_points_first_in_a_one_vs_one_expansion():
    """One-vs-one models of many classes expand with sparse coefficients (each support
    vector is in 9 of the 45 pairs); a user's callable is still called as
    K(X, support vectors), the order scikit-learn's SVC uses, never transposed."""
    X, y = make_classification(400, n_features=6, n_informative=5, n_redundant=0,
                               n_classes=10, n_clusters_per_class=1, random_state=0)
    calls = []

    def kernel(A, B):
        calls.append((len(A), len(B)))
        return pairwise_kernels(A, B, metric="rbf", gamma=0.3)

    params = dict(budget=60, maintenance="remove", random_state=0)
    clf = _fit(BudgetSVC(kernel=kernel, **params), X, y)
    calls.clear()
    got = clf.decision_function(X[:50])
    assert calls and all(shape == (50, len(clf.support_vectors_)) for shape in calls)
    want = _fit(BudgetSVC(kernel="rbf", gamma=0.3, **params), X, y)
    assert_allclose(got, want.decision_function(X[:50]), rtol=1e-7, atol=1e-7)
