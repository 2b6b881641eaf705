"""Tests for fastsvm.persistence: the versioned, pickle-free model file format."""

import json
import os
import zipfile

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.exceptions import NotFittedError

from fastsvm import BudgetSVC
from fastsvm.persistence import (FORMAT_VERSION, ModelFormatError, _dim_bounds, load_model,
                                 save_model)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=300, n_features=5, n_informative=3, n_redundant=0,
        n_classes=3, n_clusters_per_class=1, random_state=0,
    )
    return X, y


@pytest.fixture(scope="module")
def binary_model(data):
    X, y = data
    yb = (y == 0).astype(np.int64)
    return BudgetSVC(budget=20, epochs=2, random_state=0).fit(X, yb)


@pytest.fixture
def model_file(binary_model, tmp_path):
    path = tmp_path / "model.npz"
    save_model(binary_model, path)
    return path


def _read_entries(path):
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _rewrite(src, dst, **changes):
    """Copy a model file, replacing (value) or deleting (None) entries;
    ``meta`` may be given as a dict (JSON-encoded here)."""
    entries = _read_entries(src)
    for key, value in changes.items():
        if value is None:
            entries.pop(key, None)
        elif key == "meta" and isinstance(value, dict):
            entries[key] = np.array(json.dumps(value))
        else:
            entries[key] = value
    np.savez_compressed(dst, **entries)
    return dst


def _meta(path):
    return json.loads(str(_read_entries(path)["meta"]))


def _assert_same_model(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.classes_.dtype == b.classes_.dtype
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.n_support_, b.n_support_)
    assert a.gamma_ == b.gamma_
    assert a.n_features_in_ == b.n_features_in_
    assert a.get_params() == b.get_params()


# --------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------


def test_binary_round_trip(binary_model, model_file, data):
    X, _ = data
    loaded = load_model(model_file)
    assert type(loaded) is BudgetSVC
    _assert_same_model(binary_model, loaded, X)
    assert loaded.training_info_ == json.loads(json.dumps(loaded.training_info_))
    assert set(loaded.training_info_) == set(binary_model.training_info_)
    # str path works too, and the name is kept as given (no extension added)
    other = model_file.parent / "model.bin"
    save_model(binary_model, str(other))
    assert other.exists()
    _assert_same_model(binary_model, load_model(str(other)), X)


def test_multiclass_string_labels_round_trip(data, tmp_path):
    X, y = data
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = BudgetSVC(budget=20, epochs=2, gamma=0.3, C=2.0, random_state=1).fit(X, labels)
    assert len(clf.n_support_) == 3
    path = tmp_path / "strings.npz"
    save_model(clf, path)
    entries = _read_entries(path)
    assert entries["classes_"].dtype.kind == "U"
    loaded = load_model(path)
    _assert_same_model(clf, loaded, X)
    assert loaded.predict(X[:5]).tolist() == clf.predict(X[:5]).tolist()


def test_object_string_labels_round_trip(data, tmp_path):
    X, y = data
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    clf = BudgetSVC(budget=20, random_state=2).fit(X, labels)
    path = tmp_path / "obj.npz"
    save_model(clf, path)
    assert _read_entries(path)["classes_"].dtype.kind == "U"  # never stored as objects
    _assert_same_model(clf, load_model(path), X)


def test_float_labels_round_trip(data, tmp_path):
    X, y = data
    labels = np.array([-1.0, 1.0])[(y == 1).astype(int)]
    clf = BudgetSVC(budget=20, random_state=3).fit(X, labels)
    path = tmp_path / "float.npz"
    save_model(clf, path)
    loaded = load_model(path)
    _assert_same_model(clf, loaded, X)
    assert loaded.classes_.dtype == np.float64


def test_file_is_pickle_free_and_documented_layout(model_file, binary_model):
    with zipfile.ZipFile(model_file) as zf:
        names = set(zf.namelist())
    assert names == {f"{k}.npy" for k in (
        "meta", "classes_", "n_features_in_", "gamma_", "support_vectors_", "support_", "dual_coef_",
        "n_support_", "intercept_", "class_weight_")}
    entries = _read_entries(model_file)  # allow_pickle=False
    for key, arr in entries.items():
        assert arr.dtype != object, key
    assert entries["meta"].shape == () and entries["meta"].dtype.kind == "U"
    assert entries["support_vectors_"].dtype == np.float64
    assert entries["dual_coef_"].dtype == np.float64
    assert entries["n_support_"].dtype == np.int64
    assert entries["n_features_in_"].shape == () and entries["n_features_in_"] == 5
    assert entries["gamma_"].shape == () and entries["gamma_"] == binary_model.gamma_
    assert entries["class_weight_"].dtype == np.float64 and entries["class_weight_"].shape == (2,)
    meta = _meta(model_file)
    assert meta["format"] == "fastsvm-model"
    assert meta["version"] == FORMAT_VERSION == 2
    assert meta["estimator"] == "BudgetSVC"
    assert meta["params"] == binary_model.get_params()
    assert meta["classes_dtype"] == binary_model.classes_.dtype.str
    assert isinstance(meta["training_info"], dict)


def test_feature_names_round_trip(binary_model, data, tmp_path):
    import copy

    clf = copy.deepcopy(binary_model)
    clf.feature_names_in_ = np.array(["f0", "f1", "f2", "f3", "f4"], dtype=object)  # as sklearn sets it
    path = tmp_path / "names.npz"
    save_model(clf, path)
    assert _read_entries(path)["feature_names_in_"].dtype.kind == "U"
    loaded = load_model(path)
    assert loaded.feature_names_in_.dtype == object
    assert loaded.feature_names_in_.tolist() == ["f0", "f1", "f2", "f3", "f4"]
    bad = _rewrite(path, tmp_path / "bad.npz", feature_names_in_=np.array(["a", "b"]))
    _assert_format_error(bad, "feature_names_in_")


def test_new_file_gets_the_usual_permissions(binary_model, tmp_path):
    """A new model file is made 0o666 & ~umask, as open() would make it, not the 0600 of
    the temporary file it is written to before the rename."""
    old = os.umask(0o022)
    try:
        save_model(binary_model, tmp_path / "m.npz")
    finally:
        os.umask(old)
    assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o644


def test_save_to_missing_directory(binary_model, tmp_path):
    with pytest.raises(FileNotFoundError):
        save_model(binary_model, tmp_path / "no" / "such" / "m.npz")


def test_save_to_a_directory_names_it(binary_model, tmp_path):
    with pytest.raises(IsADirectoryError, match="path is a directory") as caught:
        save_model(binary_model, tmp_path)
    assert caught.value.filename == str(tmp_path)
    assert os.listdir(tmp_path) == []                   # no temporary file left behind


def test_save_where_no_file_can_be_made_names_the_target(binary_model, tmp_path, monkeypatch):
    """The temporary file's name had been the one reported (a directory such as /proc)."""
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".fastsvm-x.tmp"))
    monkeypatch.setattr("tempfile.mkstemp", refused)
    with pytest.raises(PermissionError, match="cannot save the model: Permission denied") as info:
        save_model(binary_model, tmp_path / "m.npz")
    assert info.value.filename == str(tmp_path / "m.npz")


def test_save_unfitted_raises_not_fitted(tmp_path):
    with pytest.raises(NotFittedError):
        save_model(BudgetSVC(), tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_save_rejects_other_estimators(tmp_path):
    from sklearn.svm import SVC

    clf = SVC().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(TypeError, match="BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC"):
        save_model(clf, tmp_path / "m.npz")


def test_save_rejects_non_finite_coefficients(binary_model, tmp_path):
    import copy

    broken = copy.deepcopy(binary_model)
    broken.dual_coef_ = broken.dual_coef_.copy()
    broken.dual_coef_[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        save_model(broken, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()
    assert not list(tmp_path.iterdir())  # no temporary file left behind


# --------------------------------------------------------------------------
# Corrupt files
# --------------------------------------------------------------------------


def _assert_format_error(path, match=None):
    with pytest.raises(ModelFormatError, match=match) as info:
        load_model(path)
    assert str(path) in str(info.value)  # the message names the file
    assert isinstance(info.value, ValueError)


def test_missing_file_is_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "nope.npz")


@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.9])
def test_truncated_file(model_file, tmp_path, fraction):
    raw = model_file.read_bytes()
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(raw[: int(len(raw) * fraction)])
    _assert_format_error(bad)


def test_random_bytes(tmp_path):
    rng = np.random.default_rng(0)
    bad = tmp_path / "random.npz"
    bad.write_bytes(rng.bytes(4096))
    _assert_format_error(bad, "not an npz")
    # random bytes behind a zip signature
    bad.write_bytes(b"PK\x03\x04" + rng.bytes(4096))
    _assert_format_error(bad, "corrupt")


def test_corrupted_member_data(model_file, tmp_path):
    raw = bytearray(model_file.read_bytes())
    # flip bytes inside the compressed data of the entries (skip the headers)
    for pos in range(200, len(raw) - 200, 50):
        raw[pos] ^= 0xFF
    bad = tmp_path / "flipped.npz"
    bad.write_bytes(bytes(raw))
    _assert_format_error(bad)


def test_plain_npy_and_text_files(tmp_path):
    npy = tmp_path / "array.npy"
    np.save(npy, np.arange(3))
    _assert_format_error(npy, "not an npz")
    txt = tmp_path / "data.txt"
    txt.write_text("1 1:0.5 2:0.25\n")
    _assert_format_error(txt, "not an npz")


def test_npz_without_meta(tmp_path):
    bad = tmp_path / "nometa.npz"
    np.savez_compressed(bad, a=np.arange(3))
    _assert_format_error(bad, "meta")


@pytest.mark.parametrize(
    "meta, match",
    [
        (np.array("{not json"), "JSON"),
        (np.array('"a string"'), "JSON object"),
        (np.array(b"bytes"), "unicode"),
        (np.arange(3), "unicode"),
        ({"format": "something-else", "version": 1}, "format tag"),
        ({"version": 1}, "format tag"),
    ],
)
def test_bad_meta(model_file, tmp_path, meta, match):
    bad = _rewrite(model_file, tmp_path / "badmeta.npz", meta=meta)
    _assert_format_error(bad, match)


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, 999])
def test_version_too_new(model_file, tmp_path, version):
    """Any version above FORMAT_VERSION is refused as too new, the very next one included."""
    meta = _meta(model_file)
    meta["version"] = version
    bad = _rewrite(model_file, tmp_path / f"v{version}.npz", meta=meta)
    _assert_format_error(bad, f"version {version} is newer")


@pytest.mark.parametrize("version", [0, -1, "1", 1.5, None, True])
def test_invalid_version(model_file, tmp_path, version):
    meta = _meta(model_file)
    meta["version"] = version
    bad = _rewrite(model_file, tmp_path / "badversion.npz", meta=meta)
    _assert_format_error(bad, "version")


def test_unknown_estimator(model_file, tmp_path):
    meta = _meta(model_file)
    meta["estimator"] = "os.system"
    bad = _rewrite(model_file, tmp_path / "est.npz", meta=meta)
    _assert_format_error(bad, "unknown estimator")


@pytest.mark.parametrize("key", ["params", "training_info", "classes_dtype", "estimator"])
def test_meta_missing_key(model_file, tmp_path, key):
    meta = _meta(model_file)
    del meta[key]
    bad = _rewrite(model_file, tmp_path / "nokey.npz", meta=meta)
    _assert_format_error(bad, key)


def test_unknown_parameter(model_file, tmp_path):
    meta = _meta(model_file)
    meta["params"]["no_such_param"] = 3
    bad = _rewrite(model_file, tmp_path / "param.npz", meta=meta)
    _assert_format_error(bad, "parameters")


@pytest.mark.parametrize(
    "key", ["classes_", "n_features_in_", "gamma_", "support_vectors_", "dual_coef_", "n_support_"]
)
def test_missing_array(model_file, tmp_path, key):
    bad = _rewrite(model_file, tmp_path / "missing.npz", **{key: None})
    _assert_format_error(bad, key)


def test_nan_in_dual_coef(model_file, tmp_path):
    coef = _read_entries(model_file)["dual_coef_"].copy()
    coef[0, 1] = np.nan
    bad = _rewrite(model_file, tmp_path / "nan.npz", dual_coef_=coef)
    _assert_format_error(bad, "non-finite")


def test_inf_in_support_vectors_and_gamma(model_file, tmp_path):
    sv = _read_entries(model_file)["support_vectors_"].copy()
    sv[0, 0] = np.inf
    _assert_format_error(_rewrite(model_file, tmp_path / "inf.npz", support_vectors_=sv), "non-finite")
    _assert_format_error(_rewrite(model_file, tmp_path / "g.npz", gamma_=np.array(np.nan)), "gamma_")
    _assert_format_error(_rewrite(model_file, tmp_path / "g0.npz", gamma_=np.array(0.0)), "gamma_")


def test_shape_mismatches(model_file, tmp_path):
    e = _read_entries(model_file)
    n_sv = e["dual_coef_"].shape[1]
    cases = {
        "sum": dict(n_support_=np.array([n_sv + 1], dtype=np.int64)),
        "coef": dict(dual_coef_=e["dual_coef_"][:, :-1]),
        "support": dict(support_=e["support_"][:-1]),
        "columns": dict(support_vectors_=e["support_vectors_"][:, :-1]),
        "n_features": dict(n_features_in_=np.array(7, dtype=np.int64)),
        "models": dict(n_support_=np.array([n_sv - 1, 1], dtype=np.int64)),
        "negative": dict(n_support_=np.array([-1], dtype=np.int64)),
        "classes": dict(classes_=e["classes_"][:1]),
        "classes_dup": dict(classes_=np.array([1, 1])),
        "sv_1d": dict(support_vectors_=e["support_vectors_"].ravel()),
        "coef_1d": dict(dual_coef_=e["dual_coef_"][0]),
        "coef_3d": dict(dual_coef_=e["dual_coef_"][None]),
        "n_support_float": dict(n_support_=e["n_support_"].astype(float)),
    }
    for name, change in cases.items():
        bad = _rewrite(model_file, tmp_path / f"{name}.npz", **change)
        _assert_format_error(bad)


def test_multiclass_needs_one_model_per_class(data, tmp_path):
    X, y = data
    clf = BudgetSVC(budget=20, random_state=0).fit(X, y)
    path = tmp_path / "multi.npz"
    save_model(clf, path)
    e = _read_entries(path)
    ns = e["n_support_"]
    merged = np.array([ns[0] + ns[1], ns[2]], dtype=np.int64)  # 2 models for 3 classes
    _assert_format_error(_rewrite(path, tmp_path / "bad.npz", n_support_=merged), "binary model")


def test_object_array_entry_is_rejected(model_file, tmp_path):
    entries = _read_entries(model_file)
    entries["classes_"] = np.array([0, "x"], dtype=object)  # needs pickle to read
    bad = tmp_path / "pickled.npz"
    np.savez_compressed(bad, **entries)
    _assert_format_error(bad)


# --------------------------------------------------------------------------
# Every estimator, every kind of model
# --------------------------------------------------------------------------

from fastsvm import HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC  # noqa: E402

ROUND_TRIPS = {
    # at their defaults ('auto' values bound the model's size too)
    **{f"{cls.__name__}-defaults": (lambda cls=cls: cls().set_params(
        **({"random_state": 0} if "random_state" in cls().get_params() else {})))
       for cls in (BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC)},
    "budget-remove-poly": lambda: BudgetSVC(kernel="poly", gamma=0.5, coef0=1.0, budget=15,
                                            maintenance="remove", random_state=0),
    "budget-precomputed": lambda: BudgetSVC(kernel="precomputed", budget=15,
                                            maintenance="remove", random_state=0),
    "nystrom": lambda: NystromSVC(n_components=30, random_state=0),
    "nystrom-sparse": lambda: NystromSVC(n_components=30, random_state=0),
    "nystrom-linear": lambda: NystromSVC(kernel="linear", n_components=30, random_state=0),
    "nystrom-precomputed": lambda: NystromSVC(kernel="precomputed", n_components=30,
                                              random_state=0),
    "huber": lambda: HuberSVC(class_weight={0: 2.0, 1: 1.0, 2: 0.5}),
    "pegasos-linear": lambda: PegasosSVC(max_iter=200, random_state=0),
    "pegasos-rbf": lambda: PegasosSVC(kernel="rbf", max_iter=100, random_state=0),
    "pegasos-sigmoid": lambda: PegasosSVC(kernel="sigmoid", margin_bounds=False, max_iter=100,
                                          random_state=0),
    "margin-sgd": lambda: MarginSGDSVC(M=1.0, gamma="scale", random_state=0,
                                       class_weight="balanced"),
    "margin-sgd-precomputed": lambda: MarginSGDSVC(kernel="precomputed", M=0.5, random_state=0),
    # support vectors of sparse data: CSR rows, as SVC keeps them
    "margin-sgd-sparse": lambda: MarginSGDSVC(M=1.0, gamma="scale", random_state=0),
    "pegasos-rbf-sparse": lambda: PegasosSVC(kernel="rbf", max_iter=100, random_state=0),
}


def _inputs(case, X):
    """Training and test input of a case: the data, CSR, or the linear kernel matrix."""
    import scipy.sparse as sp

    if case.endswith("precomputed"):
        return X @ X.T, X[:20] @ X.T
    if case.endswith("sparse"):
        X = np.where(np.abs(X) > 0.5, X, 0.0)
        return sp.csr_matrix(X), sp.csr_matrix(X[:20])
    return X, X[:20]


@pytest.mark.parametrize("case", sorted(ROUND_TRIPS))
def test_every_estimator_round_trips(case, data, tmp_path):
    import warnings

    X, y = data
    X_fit, X_test = _inputs(case, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # ConvergenceWarning of the short fits
        clf = ROUND_TRIPS[case]().fit(X_fit, y)
    path = tmp_path / f"{case}.npz"
    save_model(clf, path)
    loaded = load_model(path)
    assert type(loaded) is type(clf)
    assert loaded.get_params() == clf.get_params()
    np.testing.assert_array_equal(loaded.decision_function(X_test), clf.decision_function(X_test))
    np.testing.assert_array_equal(loaded.predict(X_test), clf.predict(X_test))
    for name, value in vars(clf).items():
        if name.endswith("_") and not name.startswith("_") and name not in ("n_examined_",):
            got = getattr(loaded, name)
            if hasattr(value, "toarray"):
                value, got = value.toarray(), got.toarray()
            if isinstance(value, dict):
                continue
            np.testing.assert_array_equal(np.asarray(got), np.asarray(value), err_msg=name)
    public = [{n for n in vars(e) if n.endswith("_") and not n.startswith("_")}
              for e in (clf, loaded)]
    assert public[1] == public[0] - {"n_examined_"}     # none gained (linear Pegasos' gamma_)
    with np.load(path, allow_pickle=False) as npz:
        assert all(npz[k].dtype != object for k in npz.files)


def test_callable_kernel_cannot_be_saved(data, tmp_path):
    X, y = data
    clf = NystromSVC(kernel=lambda A, B: A @ B.T, n_components=20, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="callable kernel"):
        save_model(clf, tmp_path / "m.npz")
    assert not list(tmp_path.iterdir())


def test_integer_class_weight_keys_survive_json(data, tmp_path):
    X, y = data
    clf = BudgetSVC(budget=20, class_weight={0: 3.0, 2: 0.5}, random_state=0).fit(X, y)
    save_model(clf, tmp_path / "w.npz")
    assert load_model(tmp_path / "w.npz").class_weight == {0: 3.0, 2: 0.5}


def test_class_weight_attribute_round_trips_and_is_checked(data, tmp_path):
    X, y = data
    clf = BudgetSVC(budget=20, class_weight="balanced", random_state=0).fit(X[:200], y[:200])
    path = tmp_path / "w.npz"
    save_model(clf, path)
    np.testing.assert_array_equal(load_model(path).class_weight_, clf.class_weight_)
    older = _rewrite(path, tmp_path / "older.npz", class_weight_=None)
    assert not hasattr(load_model(older), "class_weight_")     # a file from before it
    for bad, match in [(np.ones(2), "class_weight_ has 2 entries"),
                       (np.array([1.0, -1.0, 1.0]), "negative weights"),
                       (np.array([1.0, np.nan, 1.0]), "non-finite")]:
        _assert_format_error(_rewrite(path, tmp_path / "bad.npz", class_weight_=bad), match)


def test_version_1_files_are_still_read(data, tmp_path):
    """A BudgetSVC file as fastsvm wrote it before version 2: dual_coef_ stacked over models."""
    X, y = data
    clf = BudgetSVC(budget=20, epochs=2, shared_budget=False, random_state=0).fit(X, y)
    path = tmp_path / "v2.npz"
    save_model(clf, path)
    entries = _read_entries(path)
    meta = json.loads(str(entries["meta"]))
    meta["version"] = 1
    for key in ("kernel", "degree", "coef0", "class_weight", "shared_budget"):
        del meta["params"][key]
    stacked = np.concatenate([entries["dual_coef_"][k, entries["dual_coef_"][k] != 0]
                              for k in range(3)])
    old = _rewrite(path, tmp_path / "v1.npz", meta=meta, support_=None, dual_coef_=stacked)
    loaded = load_model(old)
    np.testing.assert_allclose(loaded.decision_function(X), clf.decision_function(X), rtol=1e-12)
    assert loaded.dual_coef_.shape == (3, 60)


def test_budgets_bound_the_support_vectors_stored(data, tmp_path):
    """A shared budget bounds all support vectors, separate ones (and one-vs-one pairs)
    each model's; a file without ``shared_budget`` predates shared budgets and holds
    separate ones, one without ``multi_class`` predates one-vs-one and is one-vs-rest."""
    X, y = data
    shared = BudgetSVC(budget=20, multi_class="ovr", random_state=0).fit(X, y)
    separate = BudgetSVC(budget=20, multi_class="ovr", shared_budget=False,
                         random_state=0).fit(X, y)
    pairs = BudgetSVC(budget=20, random_state=0).fit(X, y)
    assert len(shared.support_vectors_) <= 20 < len(separate.support_vectors_) <= 60
    assert 20 < len(pairs.support_vectors_) <= 60 and np.all(pairs.n_support_ <= 20)
    for clf, name in ((shared, "shared"), (separate, "separate"), (pairs, "pairs")):
        save_model(clf, tmp_path / f"{name}.npz")
        _assert_same_model(clf, load_model(tmp_path / f"{name}.npz"), X)
    meta = _meta(tmp_path / "shared.npz")
    del meta["params"]["multi_class"]
    old = load_model(_rewrite(tmp_path / "shared.npz", tmp_path / "old_ovr.npz", meta=meta))
    assert old.multi_class == "ovr"
    _assert_same_model(shared, old, X)
    entries = _read_entries(tmp_path / "separate.npz")
    meta = json.loads(str(entries["meta"]))
    del meta["params"]["shared_budget"]
    old = _rewrite(tmp_path / "separate.npz", tmp_path / "old.npz", meta=meta)
    assert load_model(old).shared_budget is False
    meta["params"]["shared_budget"] = True
    bad = _rewrite(tmp_path / "separate.npz", tmp_path / "bad.npz", meta=meta)
    with pytest.raises(ModelFormatError, match="budget=20 .* shared"):
        load_model(bad)


def test_nystrom_one_vs_one_models_and_files_from_before_them(tmp_path):
    """One model per pair of classes; a file without ``multi_class`` predates one-vs-one
    and holds one model per class (with 3 classes both have 3 models: only the parameter
    tells them apart)."""
    X, y = make_blobs(300, centers=4, random_state=0)
    for multi_class, n_models in (("ovo", 6), ("ovr", 4)):
        clf = NystromSVC(n_components=20, multi_class=multi_class, random_state=0).fit(X, y)
        path = tmp_path / f"{multi_class}.npz"
        save_model(clf, path)
        loaded = load_model(path)
        assert loaded.multi_class == multi_class and loaded.coef_.shape[0] == n_models
        np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
    X3, y3 = make_blobs(300, centers=3, random_state=0)
    ovr = NystromSVC(n_components=20, multi_class="ovr", random_state=0).fit(X3, y3)
    save_model(ovr, tmp_path / "ovr3.npz")
    meta = _meta(tmp_path / "ovr3.npz")
    del meta["params"]["multi_class"]
    old = load_model(_rewrite(tmp_path / "ovr3.npz", tmp_path / "old.npz", meta=meta))
    assert old.multi_class == "ovr"
    np.testing.assert_array_equal(old.predict(X3), ovr.predict(X3))
    entries = _read_entries(tmp_path / "ovr.npz")      # 4 classes: 6 pairs, not 4 models
    bad = _rewrite(tmp_path / "ovo.npz", tmp_path / "bad.npz", coef_=entries["coef_"],
                   intercept_=entries["intercept_"], n_iter_=entries["n_iter_"])
    with pytest.raises(ModelFormatError, match="pair of classes"):
        load_model(bad)


@pytest.mark.parametrize("multi_class, shared, n_classes, bound", [
    ("ovr", True, 10, 6325), ("ovr", False, 10, 20000), ("ovr", True, 2, 2000),
    ("ovo", True, 10, 45 * 894), ("ovo", False, 10, 45 * 894), ("ovo", True, 2, 2000),
    ("auto", True, 10, 45 * 894), ("auto", True, 31, 11136),
    ("ovr", "auto", 10, 6325), ("auto", "auto", 31, 31 * 2000)])
def test_auto_budget_bounds_the_support_vectors_stored(multi_class, shared, n_classes, bound):
    """'auto' at its largest, on spread data: 2000 sqrt(q) (see resolve_budget)."""
    params = {"budget": "auto", "multi_class": multi_class, "shared_budget": shared}
    assert _dim_bounds("BudgetSVC", params, n_classes, 5)["n_sv"][0] == bound


def test_unexpected_entries_and_out_of_range_indices_are_rejected(data, tmp_path):
    X, y = data
    clf = BudgetSVC(kernel="precomputed", budget=10, maintenance="remove", random_state=0)
    clf.fit(X @ X.T, y)
    path = tmp_path / "pre.npz"
    save_model(clf, path)
    support = _read_entries(path)["support_"].copy()
    support[0] = -1                           # would silently read the last column
    _assert_format_error(_rewrite(path, tmp_path / "neg.npz", support_=support), "support_")
    support[0] = 300
    _assert_format_error(_rewrite(path, tmp_path / "big.npz", support_=support), "support_")
    _assert_format_error(_rewrite(path, tmp_path / "extra.npz", coef_=np.zeros((1, 3))),
                         "unexpected entry coef_")


def test_margin_sgd_one_vs_one_files(tmp_path):
    """A MarginSGDSVC of four classes saves its six pairs and loads them, predicting as
    saved; a file without ``multi_class`` predates one-vs-one and loads one-vs-rest."""
    X, y = make_blobs(300, centers=4, cluster_std=3.0, random_state=0)
    for multi_class, n_models in (("auto", 6), ("ovr", 4)):
        clf = MarginSGDSVC(multi_class=multi_class, random_state=0).fit(X, y)
        path = tmp_path / f"{multi_class}.npz"
        save_model(clf, path)
        loaded = load_model(path)
        assert loaded.multi_class == multi_class and loaded.dual_coef_.shape[0] == n_models
        _assert_same_model(clf, loaded, X)
    meta = _meta(tmp_path / "ovr.npz")
    del meta["params"]["multi_class"]
    old = load_model(_rewrite(tmp_path / "ovr.npz", tmp_path / "old.npz", meta=meta))
    assert old.multi_class == "ovr"
    np.testing.assert_array_equal(old.decision_function(X), clf.decision_function(X))


@pytest.mark.parametrize("kernel, n_models", [("rbf", 6), ("linear", 4)])
def test_pegasos_one_vs_one_files(kernel, n_models, tmp_path):
    """A PegasosSVC of four classes saves its pairs ('auto' with a kernel) or its
    one-vs-rest models ('auto' with the linear kernel), and loads them, predicting as
    saved; a file without ``multi_class`` predates one-vs-one and loads one-vs-rest."""
    X, y = make_blobs(300, centers=4, cluster_std=3.0, random_state=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    models = {}
    for multi_class, n in (("auto", n_models), ("ovr", 4), ("ovo", 6)):
        clf = PegasosSVC(kernel=kernel, multi_class=multi_class, max_iter=2000,
                         random_state=0).fit(X, y)
        path = tmp_path / f"{multi_class}.npz"
        save_model(clf, path)
        loaded = load_model(path)
        assert loaded.multi_class == multi_class and len(loaded.intercept_) == n
        if kernel == "linear":
            np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
            np.testing.assert_array_equal(loaded.coef_, clf.coef_)
        else:
            _assert_same_model(clf, loaded, X)
        models[multi_class] = clf
    meta = _meta(tmp_path / "ovr.npz")
    del meta["params"]["multi_class"]
    old = load_model(_rewrite(tmp_path / "ovr.npz", tmp_path / "old.npz", meta=meta))
    assert old.multi_class == "ovr"
    np.testing.assert_array_equal(old.decision_function(X), models["ovr"].decision_function(X))
    if kernel == "rbf":     # 6 models read as one-vs-rest: refused, not mis-scored
        meta = _meta(tmp_path / "ovo.npz")
        del meta["params"]["multi_class"]
        with pytest.raises(ModelFormatError):
            load_model(_rewrite(tmp_path / "ovo.npz", tmp_path / "bad.npz", meta=meta))


def test_margin_sgd_with_margin_threshold_zero_round_trips(data, tmp_path):
    """M=0, the smallest margin threshold (M_ >= 0), is valid: its file saves and loads with
    M_ == 0.0, predicting as saved."""
    X, y = data
    clf = MarginSGDSVC(M=0.0, random_state=0).fit(X, y)
    assert clf.M_ == 0.0
    save_model(clf, tmp_path / "m0.npz")
    loaded = load_model(tmp_path / "m0.npz")
    assert loaded.M_ == 0.0
    _assert_same_model(clf, loaded, X)


def test_margin_sgd_files_from_before_the_cap_load_uncapped(data, tmp_path):
    """A MarginSGDSVC file keeps its cap C; one without ``C`` predates the cap, and loads with
    C=None, the uncapped rule it was trained by, predicting as saved."""
    X, y = data
    clf = MarginSGDSVC(gamma=0.5, C=0.5, random_state=0).fit(X, y)
    save_model(clf, tmp_path / "capped.npz")
    loaded = load_model(tmp_path / "capped.npz")
    assert loaded.C == 0.5
    _assert_same_model(clf, loaded, X)
    meta = _meta(tmp_path / "capped.npz")
    del meta["params"]["C"]
    old = load_model(_rewrite(tmp_path / "capped.npz", tmp_path / "old.npz", meta=meta))
    assert old.C is None
    np.testing.assert_array_equal(old.decision_function(X), clf.decision_function(X))
