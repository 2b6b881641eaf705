"""fastsvm.dask on a LocalCluster of two worker processes, against the local estimators."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from fastsvm import HuberSVC  # noqa: E402
from fastsvm.dask import DaskHuberSVC  # noqa: E402
from fastsvm.persistence import load_model, save_model  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _data(n=3000, classes=2, seed=0):
    X, y = make_classification(n, 12, n_informative=6, n_classes=classes, random_state=seed)
    return X, y


def _relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


#: HuberSVC's default eta0 = 100 (the paper's) puts the first steps at the edge of
#: stability, where the objective oscillates and the halving rule amplifies rounding: a
#: different order of summation (as margin_bounds=False locally) changes the path by up to
#: 1e-2 before both stop within tol.  eta0 = 1 descends smoothly and compares paths.
STABLE = dict(eta0=1.0)


def test_binary_model_is_the_local_one(client):
    X, y = _data()
    local = HuberSVC(**STABLE).fit(X, y)
    dist = DaskHuberSVC(client=client, **STABLE).fit(da.from_array(X, chunks=(700, 6)),
                                                     da.from_array(y, chunks=500))
    assert _relative(dist.coef_, local.coef_) <= 1e-6
    assert_allclose(dist.intercept_, local.intercept_, rtol=1e-6, atol=1e-9)
    assert_array_equal(dist.n_iter_, local.n_iter_)
    fraction = dist.training_info_["examined_fraction"][0]
    assert 0 < fraction < 1              # the partitions' bounds spared margins
    assert dist.training_info_["n_sorts"][0] >= 4        # each of the 4 partitions sorted


def test_multiclass_weighted_dataframe_model_is_the_local_one(client):
    """Weights and 'balanced' class weights computed from all partitions."""
    X, y = _data(classes=3, seed=1)
    weight = np.random.default_rng(0).uniform(0.0, 2.0, len(y))
    weight[:40] = 0.0
    columns = [f"f{i}" for i in range(X.shape[1])]
    frame = dd.from_pandas(pd.DataFrame(X, columns=columns), npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)
    weights = dd.from_pandas(pd.Series(weight), npartitions=3)
    params = dict(STABLE, class_weight="balanced")
    local = HuberSVC(**params).fit(pd.DataFrame(X, columns=columns), y, sample_weight=weight)
    dist = DaskHuberSVC(client=client, **params).fit(frame, labels, sample_weight=weights)
    assert _relative(dist.coef_, local.coef_) <= 1e-6
    assert_allclose(dist.intercept_, local.intercept_, rtol=1e-6, atol=1e-9)
    assert list(dist.feature_names_in_) == columns
    predicted = dist.predict(frame)
    assert isinstance(predicted, da.Array)
    assert_array_equal(predicted.compute(), local.predict(pd.DataFrame(X, columns=columns)))
    decision = dist.decision_function(frame)
    assert isinstance(decision, da.Array) and decision.shape == (len(y), 3)
    assert_allclose(decision.compute(), local.decision_function(pd.DataFrame(X, columns=columns)),
                    rtol=1e-6, atol=1e-9)


def test_numpy_input_gives_numpy_output(client):
    X, y = _data(n=800)
    dist = DaskHuberSVC(client=client, **STABLE).fit(X, y)
    local = HuberSVC(**STABLE).fit(X, y)
    assert _relative(dist.coef_, local.coef_) <= 1e-6
    assert isinstance(dist.predict(X), np.ndarray)
    assert_array_equal(dist.predict(X), local.predict(X))


def test_default_step_reaches_the_local_objective(client):
    X, y = _data(n=800)
    local = HuberSVC().fit(X, y).training_info_["objective"][0][-1]
    dist = DaskHuberSVC(client=client).fit(X, y).training_info_["objective"][0][-1]
    assert abs(dist - local) <= 1e-4 * local


def test_to_local_and_model_file_round_trip(client, tmp_path):
    X, y = _data(n=800)
    dist = DaskHuberSVC(client=client, C=3.0).fit(da.from_array(X, chunks=200),
                                                  da.from_array(y, chunks=200))
    local = dist.to_local()
    assert type(local) is HuberSVC and local.C == 3.0
    save_model(local, tmp_path / "m.npz")
    assert_array_equal(load_model(tmp_path / "m.npz").predict(X), dist.predict(X))


def _on_a_worker(block):
    distributed.get_worker()            # ValueError outside a worker
    return block


def test_data_generated_on_the_workers_is_never_materialised_on_the_client(client):
    """Every block of X and y is made by a task that fails outside a worker."""
    X = da.random.RandomState(0).normal(size=(20_000, 8), chunks=(5_000, 8))
    X = X.map_blocks(_on_a_worker, dtype=X.dtype)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int).map_blocks(_on_a_worker, dtype=int)
    clf = DaskHuberSVC(client=client).fit(X, y)
    accuracy = (clf.predict(X) == y).mean().compute()
    assert accuracy > 0.95


@pytest.mark.parametrize("change, match", [
    (lambda X, y, w: (_with_nan(X), y, w), "NaN"),
    (lambda X, y, w: (X, np.zeros_like(y), w), "at least 2 classes"),
    (lambda X, y, w: (X, y, -w), "Negative values"),
    (lambda X, y, w: (X, y, np.where(y == 1, 0.0, w)), "has weight 0"),
])
def test_bad_input_gets_the_local_errors(client, change, match):
    X, y = _data(n=400)
    X, y, w = change(X, y, np.ones(len(y)))
    with pytest.raises(ValueError, match=match):
        HuberSVC().fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match=match):
        DaskHuberSVC(client=client).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100),
                                        sample_weight=da.from_array(w, chunks=100))


def _with_nan(X):
    X = X.copy()
    X[350, 2] = np.nan                  # in the last partition only
    return X
