"""Tests of fastsvm.datasets: LIBSVM reading, registry, loading, fetching.

No test uses the network: downloads are served from a local http.server.
Tests that need the project's shared data folder skip when it is absent.
"""

import bz2
import functools
import gzip
import hashlib
import http.server
import re
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm import datasets
from fastsvm.datasets import (
    DATASETS,
    DataFile,
    DataFormatError,
    DatasetInfo,
    fetch_dataset,
    get_data_dir,
    load_dataset,
    load_embedded_a9a,
    load_svmlight,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no shared data folder {SHARED}")

TEXT = b"""+1 1:0.5 3:-2
-1 2:1.25
+1 1:1 2:2 3:3
-1 3:0.125
+1 1:-1
-1 2:4 3:1
"""
X_EXPECTED = np.array(
    [[0.5, 0, -2], [0, 1.25, 0], [1, 2, 3], [0, 0, 0.125], [-1, 0, 0], [0, 4, 1]]
)
Y_EXPECTED = np.array([1.0, -1, 1, -1, 1, -1])


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write(path, data):
    """Write `data` to `path`, compressed according to its suffix."""
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(data)
    return path


# --------------------------------------------------------------------------
# load_svmlight


@pytest.mark.parametrize("file_name", ["data.txt", "data.bz2", "data.gz"])
def test_load_svmlight_plain_and_compressed(tmp_path, file_name):
    X, y = load_svmlight(write(tmp_path / file_name, TEXT))
    assert isinstance(X, sp.csr_matrix)
    assert X.dtype == np.float64 and y.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), X_EXPECTED)
    np.testing.assert_array_equal(y, Y_EXPECTED)


def test_load_svmlight_n_features_and_dtype(tmp_path):
    path = write(tmp_path / "data.txt", TEXT)
    X, y = load_svmlight(path, n_features=5, dtype=np.float32)
    assert X.shape == (6, 5)
    assert X.dtype == np.float32
    assert y.dtype == np.float64
    with pytest.raises(DataFormatError, match=re.escape(str(path))):
        load_svmlight(path, n_features=2)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"+1 1:0.5 foo bar\n", id="garbage-tokens"),
        pytest.param(b"abc 1:1\n", id="bad-label"),
        pytest.param(b"+1 1:x\n", id="bad-value"),
        pytest.param(b"+1 3:1 2:1\n", id="unsorted-indices"),
        pytest.param(b"", id="empty"),
        pytest.param(b"# only a comment\n\n", id="no-samples"),
        pytest.param(b"+1 1:nan 2:1\n", id="nan-value"),
        pytest.param(b"+1 1:inf\n", id="inf-value"),
        pytest.param(b"nan 1:1\n", id="nan-label"),
    ],
)
def test_load_svmlight_bad_content(tmp_path, content):
    path = write(tmp_path / "bad.txt", content)
    with pytest.raises(DataFormatError, match=re.escape(f"'{path}'")):
        load_svmlight(path)


def test_load_svmlight_error_message_and_type(tmp_path):
    path = write(tmp_path / "bad.txt", b"+1 1:x\n")
    with pytest.raises(ValueError, match=r"^could not read LIBSVM file '.*bad\.txt': \S"):
        load_svmlight(path)


@pytest.mark.parametrize("file_name", ["bad.bz2", "bad.gz"])
def test_load_svmlight_corrupt_compressed(tmp_path, file_name):
    path = tmp_path / file_name
    path.write_bytes(b"this is not compressed data\n")
    with pytest.raises(DataFormatError, match=re.escape(str(path))):
        load_svmlight(path)


def test_load_svmlight_missing_file(tmp_path):
    path = tmp_path / "nowhere.txt"
    with pytest.raises(FileNotFoundError, match=re.escape(str(path))):
        load_svmlight(path)


# --------------------------------------------------------------------------
# registry against MANIFEST.md and the shared files


def manifest():
    """(sha256 by file name, table rows) parsed from the shared MANIFEST.md."""
    text = (SHARED / "MANIFEST.md").read_text()
    hashes = {m[2]: m[1] for m in re.finditer(r"^([0-9a-f]{64})\s+(\S+)$", text, re.M)}
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| file ")
    ]
    return hashes, rows


def parse_power(text, name):
    """2.0 ** k for 'name=2^k' in text, or None if absent."""
    match = re.search(rf"\b{name}=2\^(-?\d+)", text)
    return None if match is None else 2.0 ** int(match[1])


@needs_shared
def test_registry_hashes_match_manifest():
    hashes, _ = manifest()
    assert len(hashes) == 9
    registry = {f.name: f.sha256 for info in DATASETS.values() for f in info.files}
    assert registry == hashes


@needs_shared
def test_registry_matches_manifest_table():
    _, rows = manifest()
    assert len(rows) == len(DATASETS)
    by_train_file = {info.train.name: info for info in DATASETS.values()}
    for file_cell, shape_cell, _labels, settings_cell, _origin in rows:
        info = by_train_file[file_cell.split(" / ")[0]]
        assert info.n_features == int(re.search(r"x (\d+)", shape_cell)[1]), info.name
        assert info.C == parse_power(settings_cell, "C"), info.name
        assert info.gamma == parse_power(settings_cell, "gamma"), info.name


def test_registry_entries_consistent():
    assert set(DATASETS) == {"a9a", "ijcnn1", "phishing", "skin_nonskin", "covtype", "usps"}
    for key, info in DATASETS.items():
        assert info.name == key
        for f in info.files:
            assert f.url.startswith("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/")
            assert re.fullmatch(r"[0-9a-f]{64}", f.sha256)
            assert re.fullmatch(r"[0-9a-f]{64}", f.content_sha256)
    assert {k: i.test_fraction for k, i in DATASETS.items() if i.test is None} == {
        "phishing": 0.2,
        "skin_nonskin": 0.25,
        "covtype": 0.2,
    }
    assert DATASETS["phishing"].train.download_name == "phishing"
    assert DATASETS["skin_nonskin"].train.download_name == "skin_nonskin"
    assert DATASETS["usps"].test.url.endswith("/datasets/multiclass/usps.t.bz2")


@needs_shared
def test_shared_files_match_registry():
    for info in DATASETS.values():
        for f in info.files:
            path = SHARED / f.name
            assert path.is_file(), path
            assert sha256(path.read_bytes()) == f.sha256, path
            # Decompressing covtype (70 MB of text) is too slow for a unit test.
            if info.name != "covtype":
                opener = bz2.open if path.suffix == ".bz2" else open
                with opener(path, "rb") as stream:
                    assert sha256(stream.read()) == f.content_sha256, path


# --------------------------------------------------------------------------
# load_dataset on the shared files


@needs_shared
def test_load_phishing_split():
    X_train, y_train, X_test, y_test = load_dataset("phishing", data_dir=SHARED, verify=True)
    assert X_train.shape == (8844, 68) and X_test.shape == (2211, 68)
    assert isinstance(X_train, sp.csr_matrix) and isinstance(X_test, sp.csr_matrix)
    assert set(np.unique(y_train)) == set(np.unique(y_test)) == {0.0, 1.0}
    # Stratified: both parts have the class balance of the whole set.
    assert abs(y_train.mean() - y_test.mean()) < 1e-3
    # The split is fixed: a second load gives the same rows.
    X2_train, y2_train, X2_test, y2_test = load_dataset("phishing", data_dir=SHARED)
    assert (X_train != X2_train).nnz == 0 and (X_test != X2_test).nnz == 0
    np.testing.assert_array_equal(y_train, y2_train)
    np.testing.assert_array_equal(y_test, y2_test)
    # The two parts together are the whole file.
    X_all, _ = load_svmlight(SHARED / "phishing.bz2")
    assert X_train.nnz + X_test.nnz == X_all.nnz


@needs_shared
def test_load_a9a_and_embedded_copy_agree():
    X_train, y_train, X_test, y_test = load_dataset("a9a", data_dir=SHARED, dtype=np.float32)
    assert X_train.shape == (32561, 123) and X_test.shape == (16281, 123)
    assert X_train.dtype == np.float32
    assert set(np.unique(y_test)) == {-1.0, 1.0}
    E_train, e_train, E_test, e_test = load_embedded_a9a(dtype=np.float32)
    assert (X_train != E_train).nnz == 0 and (X_test != E_test).nnz == 0
    np.testing.assert_array_equal(y_train, e_train)
    np.testing.assert_array_equal(y_test, e_test)


def test_load_embedded_a9a():
    X_train, y_train, X_test, y_test = load_embedded_a9a()
    assert isinstance(X_train, sp.csr_matrix)
    assert X_train.shape == (32561, 123) and y_train.shape == (32561,)
    assert X_test.shape == (16281, 123) and y_test.shape == (16281,)
    assert set(np.unique(y_train)) == {-1.0, 1.0}


def test_load_dataset_unknown_name():
    with pytest.raises(ValueError, match="unknown data set 'nope'.*a9a.*covtype"):
        load_dataset("nope")


def test_load_dataset_missing_file_tells_how_to_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="download=True") as excinfo:
        load_dataset("phishing", data_dir=tmp_path)
    assert "fetch_dataset" in str(excinfo.value)
    assert "FASTSVM_DATA" in str(excinfo.value)
    assert "phishing.bz2" in str(excinfo.value)
    with pytest.raises(FileNotFoundError) as excinfo:              # one name, said once
        load_dataset("a9a", data_dir=tmp_path)
    assert "neither 'a9a' nor 'a9a'" not in str(excinfo.value)
    assert f"'a9a' is not in {tmp_path}" in str(excinfo.value)


# --------------------------------------------------------------------------
# get_data_dir


def test_get_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("FASTSVM_DATA", str(tmp_path / "from_env"))
    assert get_data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert get_data_dir(str(tmp_path / "explicit")) == tmp_path / "explicit"
    assert get_data_dir() == tmp_path / "from_env"
    monkeypatch.setenv("FASTSVM_DATA", "")
    monkeypatch.setattr(datasets, "_SHARED_DIR", tmp_path / "absent")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_dir() == tmp_path / "home" / "fastsvm_data"
    monkeypatch.delenv("FASTSVM_DATA")
    monkeypatch.setattr(datasets, "_SHARED_DIR", tmp_path)
    assert get_data_dir() == tmp_path


@needs_shared
def test_get_data_dir_default_is_shared_folder(monkeypatch):
    monkeypatch.delenv("FASTSVM_DATA", raising=False)
    assert get_data_dir().resolve() == SHARED.resolve()


def test_load_dataset_reads_env_folder(monkeypatch, tmp_path):
    info = tiny_info("tiny_env", "https://example.invalid/data/tiny.bz2")
    monkeypatch.setitem(DATASETS, info.name, info)
    write(tmp_path / "tiny.bz2", TEXT)
    monkeypatch.setenv("FASTSVM_DATA", str(tmp_path))
    X_train, y_train, X_test, y_test = load_dataset("tiny_env", verify=True)
    assert X_train.shape == (4, 3) and X_test.shape == (2, 3)


# --------------------------------------------------------------------------
# fetch_dataset from a local HTTP server


def tiny_info(name, train_url, test_url=None, stored=b"not the stored bytes"):
    """A registry entry for TEXT (and TEXT as test file when test_url is given).

    `stored` stands for the bytes of the shared copy; it differs from every
    file the tests serve, so verification must go through the content hash.
    """
    def data_file(url):
        return DataFile(
            name=url.rsplit("/", 1)[-1],
            url=url,
            sha256=sha256(stored),
            content_sha256=sha256(TEXT),
        )

    return DatasetInfo(
        name=name,
        train=data_file(train_url),
        test=None if test_url is None else data_file(test_url),
        test_fraction=1 / 3 if test_url is None else None,
        n_features=3,
        C=1.0,
        gamma=1.0,
        description="six rows for tests",
    )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path, monkeypatch):
    """Serve tmp_path/served over HTTP on 127.0.0.1; yields (folder, base URL)."""
    for variable in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(QuietHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def test_fetch_dataset_end_to_end(server, tmp_path, monkeypatch, capsys):
    served, base = server
    write(served / "tiny", TEXT)
    write(served / "tiny.t.bz2", TEXT)
    info = tiny_info("tiny", f"{base}/tiny", f"{base}/tiny.t.bz2")
    monkeypatch.setitem(DATASETS, "tiny", info)
    target = tmp_path / "download" / "nested"

    paths = fetch_dataset("tiny", data_dir=target)

    assert capsys.readouterr().out == ""
    assert paths == [target / "tiny", target / "tiny.t.bz2"]
    assert sorted(p.name for p in target.iterdir()) == ["tiny", "tiny.t.bz2"]
    assert (target / "tiny").read_bytes() == TEXT
    X_train, y_train, X_test, y_test = load_dataset("tiny", data_dir=target, verify=True)
    np.testing.assert_array_equal(X_train.toarray(), X_EXPECTED)
    np.testing.assert_array_equal(X_test.toarray(), X_EXPECTED)
    np.testing.assert_array_equal(y_train, Y_EXPECTED)

    # Present files are not downloaded again, even when the server lost them.
    (served / "tiny").unlink()
    assert fetch_dataset("tiny", data_dir=target) == paths

    (target / "tiny.t.bz2").unlink()
    fetch_dataset("tiny", data_dir=target, verbose=True)
    assert "tiny.t.bz2" in capsys.readouterr().out


def test_load_dataset_download_true(server, tmp_path, monkeypatch):
    served, base = server
    write(served / "tiny.bz2", TEXT)
    monkeypatch.setitem(DATASETS, "tiny", tiny_info("tiny", f"{base}/tiny.bz2"))
    target = tmp_path / "download"
    X_train, y_train, X_test, y_test = load_dataset("tiny", data_dir=target, download=True)
    assert X_train.shape == (4, 3) and X_test.shape == (2, 3)
    # The stratified hold-out keeps one row of each class out of six.
    assert sorted(y_test) == [-1.0, 1.0]
    assert [p.name for p in target.iterdir()] == ["tiny.bz2"]


@pytest.mark.parametrize("served_name", ["tiny", "tiny.bz2", "tiny.gz"])
def test_fetch_content_hash_is_compression_independent(server, tmp_path, monkeypatch, served_name):
    served, base = server
    write(served / served_name, TEXT)
    # The canonical address is unreachable: base_url must replace it.
    info = tiny_info("tiny", f"https://example.invalid/data/{served_name}")
    monkeypatch.setitem(DATASETS, "tiny", info)
    target = tmp_path / "download"
    paths = fetch_dataset("tiny", data_dir=target, base_url=base + "/")
    assert paths == [target / served_name]
    X, y = load_svmlight(paths[0])
    np.testing.assert_array_equal(X.toarray(), X_EXPECTED)


def test_fetch_saves_the_stored_copy_under_its_local_name(server, tmp_path, monkeypatch):
    """A mirror of the shared folder serves the stored bz2 copy under the download name of
    the plain file: saved under that name, its suffix would say 'not compressed' and the
    file, which passed its checksum, could not be read."""
    served, base = server
    stored = tmp_path / "stored.bz2"
    write(stored, TEXT)
    (served / "tiny").write_bytes(stored.read_bytes())
    info = tiny_info("tiny", "https://example.invalid/data/tiny", stored=stored.read_bytes())
    info = replace(info, train=replace(info.train, name="tiny.bz2"))
    monkeypatch.setitem(DATASETS, "tiny", info)
    target = tmp_path / "download"
    assert fetch_dataset("tiny", data_dir=target, base_url=base) == [target / "tiny.bz2"]
    assert [p.name for p in target.iterdir()] == ["tiny.bz2"]
    X_train, y_train, X_test, y_test = load_dataset("tiny", data_dir=target, verify=True)
    assert X_train.shape[0] + X_test.shape[0] == len(X_EXPECTED)


def test_fetch_tampered_file_is_rejected_and_removed(server, tmp_path, monkeypatch):
    served, base = server
    write(served / "tiny.bz2", TEXT.replace(b"0.125", b"0.126"))
    monkeypatch.setitem(DATASETS, "tiny", tiny_info("tiny", f"{base}/tiny.bz2"))
    target = tmp_path / "download"
    with pytest.raises(DataFormatError, match="sha256 mismatch") as excinfo:
        fetch_dataset("tiny", data_dir=target)
    assert sha256(TEXT) in str(excinfo.value)
    assert f"{base}/tiny.bz2" in str(excinfo.value)
    assert list(target.iterdir()) == []
    # verify=False accepts the file as it is.
    fetch_dataset("tiny", data_dir=target, verify=False)
    assert [p.name for p in target.iterdir()] == ["tiny.bz2"]


def test_fetch_undecompressable_file_is_rejected_and_removed(server, tmp_path, monkeypatch):
    served, base = server
    (served / "tiny.bz2").write_bytes(TEXT)  # plain text under a .bz2 name
    monkeypatch.setitem(DATASETS, "tiny", tiny_info("tiny", f"{base}/tiny.bz2"))
    target = tmp_path / "download"
    with pytest.raises(DataFormatError, match="could not decompress"):
        fetch_dataset("tiny", data_dir=target)
    assert list(target.iterdir()) == []


def test_fetch_http_error_leaves_nothing(server, tmp_path, monkeypatch):
    _, base = server
    monkeypatch.setitem(DATASETS, "tiny", tiny_info("tiny", f"{base}/missing"))
    target = tmp_path / "download"
    with pytest.raises(OSError, match=r"could not download '.*/missing': HTTP 404"):
        fetch_dataset("tiny", data_dir=target)
    assert list(target.iterdir()) == []


def test_verify_rejects_tampered_local_file(tmp_path, monkeypatch):
    monkeypatch.setitem(
        DATASETS, "tiny", tiny_info("tiny", "https://example.invalid/tiny", stored=TEXT)
    )
    write(tmp_path / "tiny", TEXT.replace(b"+1 1:-1", b"-1 1:-1"))
    load_dataset("tiny", data_dir=tmp_path)  # not verified by default
    with pytest.raises(DataFormatError, match="sha256 mismatch for '.*tiny'"):
        load_dataset("tiny", data_dir=tmp_path, verify=True)


def test_dataset_info_needs_test_file_or_fraction():
    f = DataFile(name="x", url="https://example.invalid/x", sha256="0", content_sha256="0")
    with pytest.raises(ValueError, match="exactly one"):
        DatasetInfo("x", f, None, None, 1, None, None, "")
    with pytest.raises(ValueError, match="exactly one"):
        DatasetInfo("x", f, f, 0.2, 1, None, None, "")
    with pytest.raises(ValueError, match="test_fraction"):
        DatasetInfo("x", f, None, 1.5, 1, None, None, "")
