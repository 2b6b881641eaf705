"""Tests of fastsvm.datasets.load_svmlight on valid and broken LIBSVM files.

LIBSVM's convention: feature indices start at 1 and ascend strictly on each
line.  Every broken file must give a DataFormatError naming the file and the
line (``line N``, counted from 1), never another exception; the command line
must report it as one ``fastsvm: error: ...`` line.  The files are written
here, plain and compressed.
"""

import bz2
import gzip
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file

from fastsvm.cli import main
from fastsvm.datasets import DataFormatError, load_svmlight

SUFFIXES = [".txt", ".gz", ".bz2"]


def write(path, text):
    """Write `text` (str) to `path`, compressed according to its suffix."""
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(text.encode())
    return path


def error_pattern(path, line_number):
    """Regex matching a DataFormatError message that names `path` and the line."""
    return re.escape(f"'{path}'") + rf".*\bline {line_number}\b"


# --------------------------------------------------------------------------
# Index base


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_index_zero_is_an_error_naming_the_line(tmp_path, suffix):
    path = write(tmp_path / f"data{suffix}", "+1 1:1 2:2\n# a comment\n\n-1 0:5 3:1\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, 4)) as excinfo:
        load_svmlight(path)
    assert "zero_based=True" in str(excinfo.value)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_index_zero_accepted_when_zero_based(tmp_path, suffix):
    path = write(tmp_path / f"data{suffix}", "+1 0:1.5 2:2\n-1 1:-3\n")
    X, y = load_svmlight(path, zero_based=True)
    np.testing.assert_array_equal(X.toarray(), [[1.5, 0, 2], [0, -3, 0]])
    np.testing.assert_array_equal(y, [1, -1])


def test_one_based_is_never_guessed(tmp_path):
    # The same one-based file maps to the same columns whatever the other
    # files hold; zero_based=True shifts it by one column.
    path = write(tmp_path / "data.txt", "+1 1:1 3:3\n")
    np.testing.assert_array_equal(load_svmlight(path)[0].toarray(), [[1, 0, 3]])
    np.testing.assert_array_equal(load_svmlight(path, zero_based=True)[0].toarray(), [[0, 1, 0, 3]])


@pytest.mark.parametrize("zero_based", ["auto", None, 1, "False"])
def test_zero_based_accepts_only_bools(tmp_path, zero_based):
    path = write(tmp_path / "data.txt", "+1 1:1\n")
    with pytest.raises(ValueError, match="zero_based must be True or False"):
        load_svmlight(path, zero_based=zero_based)


# --------------------------------------------------------------------------
# Broken lines


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("index", [2**31, 2**31 + 5, 2**63, 10**30])
def test_huge_index(tmp_path, suffix, index):
    path = write(tmp_path / f"data{suffix}", f"+1 1:1\n-1 {index}:1\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, 2) + ".*too large"):
        load_svmlight(path)


def test_largest_index_is_accepted(tmp_path):
    path = write(tmp_path / "data.txt", f"+1 1:1 {2**31 - 1}:2\n")
    X, _ = load_svmlight(path)
    assert X.shape == (1, 2**31 - 1)
    np.testing.assert_array_equal(X.indices, [0, 2**31 - 2])


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(
    "token",
    ["3:", ":4", "abc", "3:x", "3:4:5", "1.5:2", "-3:1", "qid:1", "3:nan", "3:inf", "3:-inf",
     "3:1e999"],
)
def test_malformed_token(tmp_path, suffix, token):
    # qid is only allowed right after the label.
    path = write(tmp_path / f"data{suffix}", f"+1 1:1\n\n-1 1:1 {token}\n+1 2:1\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, 3)):
        load_svmlight(path)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("label", ["yes", "1:2", "+1,-1", "nan", "inf"])
def test_bad_label(tmp_path, suffix, label):
    path = write(tmp_path / f"data{suffix}", f"+1 1:1\n{label} 1:2\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, 2) + ".*label"):
        load_svmlight(path)


@pytest.mark.parametrize("features", ["3:1 2:1", "2:1 2:5"], ids=["unsorted", "duplicate"])
def test_indices_not_ascending(tmp_path, features):
    path = write(tmp_path / "data.txt", f"+1 1:1\n-1 {features}\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, 2) + ".*ascending"):
        load_svmlight(path)


def test_lines_ended_by_cr_alone_are_named(tmp_path):
    """Classic Mac OS line endings read as one line, whose second label was reported as
    a malformed token with no hint of the cause."""
    path = write(tmp_path / "data.txt", "+1 1:0.5 2:1\r-1 1:0.1\r+1 2:0.7\r")
    with pytest.raises(DataFormatError, match=error_pattern(path, 1) + ".*carriage return"):
        load_svmlight(path)
    with pytest.raises(DataFormatError) as excinfo:      # a bad line without a CR: no hint
        load_svmlight(write(tmp_path / "bad.txt", "+1 1:0.5\r\n-1 1:\r\n"))
    assert "carriage return" not in str(excinfo.value)


def test_value_overflowing_dtype(tmp_path):
    path = write(tmp_path / "data.txt", "+1 1:1\n-1 2:1e39\n")
    assert load_svmlight(path)[0][1, 1] == 1e39
    with pytest.raises(DataFormatError, match=error_pattern(path, 2) + ".*float32"):
        load_svmlight(path, dtype=np.float32)
    with warnings.catch_warnings():     # scikit-learn's cast to float16 warned on the way
        warnings.simplefilter("error", RuntimeWarning)
        half = write(tmp_path / "half.txt", "+1 1:1\n-1 2:70000\n")
        with pytest.raises(DataFormatError, match=error_pattern(half, 2) + ".*float16"):
            load_svmlight(half, dtype=np.float16)
    # Labels are float64 whatever the dtype of X.
    path = write(tmp_path / "label.txt", "1e39 1:1\n-1 2:1\n")
    np.testing.assert_array_equal(load_svmlight(path, dtype=np.float32)[1], [1e39, -1])


def test_index_beyond_n_features(tmp_path):
    path = write(tmp_path / "data.txt", "+1 1:1\n-1 2:1\n+1 5:1\n")
    assert load_svmlight(path, n_features=5)[0].shape == (3, 5)
    with pytest.raises(DataFormatError, match=error_pattern(path, 3) + ".*n_features=4"):
        load_svmlight(path, n_features=4)


def test_comments_qid_and_blank_lines_are_valid(tmp_path):
    text = "# header\n+1 qid:3 1:1 # 0:9 junk\n\n  \n-1 qid:4 2:2.5\n"
    X, y = load_svmlight(write(tmp_path / "data.txt", text))
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [0, 2.5]])
    np.testing.assert_array_equal(y, [1, -1])


def test_corrupt_gzip_stream(tmp_path):
    # Corrupt deflate data raises zlib.error, which is not an OSError.
    data = bytearray(gzip.compress(b"".join(b"+1 1:%d 2:3\n" % i for i in range(5000))))
    data[30] ^= 0xFF
    data[31] ^= 0x55
    path = tmp_path / "data.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(DataFormatError, match=re.escape(f"'{path}'")):
        load_svmlight(path)


# --------------------------------------------------------------------------
# Command line


def _train_file(tmp_path):
    rows = [f"{'+1' if i % 2 else '-1'} 1:{i % 5} 2:{(i * 7) % 3}" for i in range(40)]
    return write(tmp_path / "train.txt", "\n".join(rows) + "\n")


BAD_FILES = {
    "index-zero": "+1 1:1\n-1 0:1\n",
    "huge-index": f"+1 1:1\n-1 {2**31}:1\n",
    "bad-token": "+1 1:1\n-1 3:x\n",
    "bad-label": "+1 1:1\nyes 1:1\n",
}


def _one_error_line(capsys):
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fastsvm: error: ")
    return lines[0]


@pytest.mark.parametrize("suffix", [".txt", ".bz2"])
@pytest.mark.parametrize("content", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_cli_train_bad_file(tmp_path, capsys, content, suffix):
    bad = write(tmp_path / f"bad{suffix}", content)
    assert main(["train", "-q", str(bad), str(tmp_path / "m.npz")]) == 1
    line = _one_error_line(capsys)
    assert str(bad) in line and "line 2" in line
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("content", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_cli_predict_bad_file(tmp_path, capsys, content):
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "--solver", "huber", str(_train_file(tmp_path)), str(model)]) == 0
    capsys.readouterr()
    bad = write(tmp_path / "bad.gz", content)
    out_file = tmp_path / "pred.txt"
    assert main(["predict", "-q", str(bad), str(model), str(out_file)]) == 1
    line = _one_error_line(capsys)
    assert str(bad) in line and "line 2" in line
    assert not out_file.exists()


def test_cli_zero_based_option(tmp_path, capsys):
    """--zero-based reads index 0 as column 0 in train and predict; without it index 0 is
    the error naming the line."""
    zero = write(tmp_path / "zero.txt", "".join(
        f"{'+1' if i % 2 else '-1'} 0:{i % 2 + 0.5} 1:{i % 3}\n" for i in range(30)))
    model, out_file = tmp_path / "m.npz", tmp_path / "pred.txt"
    assert main(["train", "-q", "--solver", "huber", str(zero), str(model)]) == 1
    assert "line 1" in _one_error_line(capsys)
    assert main(["train", "-q", "--solver", "huber", "--zero-based", str(zero), str(model)]) == 0
    assert main(["predict", "-q", "--zero-based", str(zero), str(model), str(out_file)]) == 0
    assert len(out_file.read_text().split()) == 30
    assert main(["predict", "-q", "--one-based", str(zero), str(model), str(out_file)]) == 1
    assert "line 1" in _one_error_line(capsys)


def test_cli_predict_reads_files_as_the_model_was_trained(tmp_path):
    """A model trained with --zero-based reads files zero-based at predict unless told
    otherwise: before, a zero-based file without index 0 was read one-based, every feature
    one column early, and predicted without a word (here 30 of 40 rows change)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 2] - X[:, 1] > 0, 1, -1)
    train_file, test_file = tmp_path / "train.txt", tmp_path / "test.txt"
    dump_svmlight_file(X, y, str(train_file), zero_based=True)
    X[:, 0] = 0.0                                 # the file to predict holds no index 0
    dump_svmlight_file(X, y, str(test_file), zero_based=True)
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "--solver", "huber", "--zero-based", str(train_file),
                 str(model)]) == 0
    predictions = {}
    for flags in ([], ["--zero-based"], ["--one-based"]):
        out_file = tmp_path / f"pred{len(predictions)}.txt"
        assert main(["predict", "-q", *flags, str(test_file), str(model), str(out_file)]) == 0
        predictions[tuple(flags)] = out_file.read_text().split()
    assert predictions[()] == predictions[("--zero-based",)]
    assert predictions[()] != predictions[("--one-based",)]
    assert np.mean(np.array(predictions[()], dtype=float) == y) > 0.9


# --------------------------------------------------------------------------
# Property-based: round trip, and corrupted lines


@st.composite
def sparse_rows(draw):
    """(labels, dense matrix) of a random sparse data set, finite values."""
    n_rows = draw(st.integers(1, 8))
    n_cols = draw(st.integers(1, 12))
    values = st.floats(allow_nan=False, allow_infinity=False, width=64)
    labels = draw(st.lists(st.sampled_from([-1.0, 1.0, 2.0, 0.5, -3.25]), min_size=n_rows,
                           max_size=n_rows))
    dense = np.zeros((n_rows, n_cols))
    for i in range(n_rows):
        columns = draw(st.sets(st.integers(0, n_cols - 1)))
        for j in columns:
            dense[i, j] = draw(values)
    return np.array(labels), dense


def libsvm_lines(labels, dense):
    """One LIBSVM line per row: 1-based ascending indices of the non-zero
    values, written with repr (which float() reads back exactly)."""
    lines = []
    for label, row in zip(labels, dense):
        tokens = [repr(float(label))]
        tokens += [f"{j + 1}:{float(row[j])!r}" for j in np.flatnonzero(row != 0)]
        lines.append(" ".join(tokens))
    return lines


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=sparse_rows(), suffix=st.sampled_from(SUFFIXES), blank_lines=st.booleans())
def test_property_round_trip(tmp_path, data, suffix, blank_lines):
    labels, dense = data
    lines = libsvm_lines(labels, dense)
    if blank_lines:
        lines = [line + "  # comment" for line in lines] + ["", "# the end"]
    path = write(tmp_path / f"data{suffix}", "\n".join(lines) + "\n")
    X, y = load_svmlight(path, n_features=dense.shape[1])
    assert isinstance(X, sp.csr_matrix)
    np.testing.assert_array_equal(X.toarray(), dense)
    np.testing.assert_array_equal(y, labels)


BAD_TOKENS = ["0:1", f"{2**31}:1", f"{2**40}:2", "-2:1", "3:", ":4", "abc", "3:x", "3:4:5",
              "5:nan", "5:inf"]


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=sparse_rows(), suffix=st.sampled_from(SUFFIXES), bad=st.sampled_from(BAD_TOKENS),
       where=st.data())
def test_property_corrupted_line_is_named(tmp_path, data, suffix, bad, where):
    labels, dense = data
    lines = libsvm_lines(labels, dense)
    row = where.draw(st.integers(0, len(lines) - 1), label="row")
    tokens = lines[row].split()
    # Replace a random token (the label included) or append one.
    position = where.draw(st.integers(0, len(tokens)), label="position")
    if position == len(tokens):
        tokens.append(bad)
    else:
        tokens[position] = bad
    lines[row] = " ".join(tokens)
    path = write(tmp_path / f"data{suffix}", "\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=error_pattern(path, row + 1)):
        load_svmlight(path)
