"""Benchmark data sets in LIBSVM (svmlight) text format.

Reading files
    :func:`load_svmlight` reads one LIBSVM file (plain, ``.bz2`` or ``.gz``),
    whose feature indices start at 1 as in LIBSVM (or at 0 when asked), and
    turns every failure into a clear :class:`DataFormatError` that names the
    file and, for a malformed line, its line number.
Registry
    :data:`DATASETS` maps a short name (``"a9a"``, ``"ijcnn1"``, ...) to a
    :class:`DatasetInfo`: its files, canonical download addresses, sha256
    checksums, number of features, and the ``C`` and ``gamma`` used for it in
    the BSGD paper (Wang, Crammer and Vucetic, JMLR 2012).
Loading and fetching
    :func:`load_dataset` returns the train/test split of a registered set
    from the data folder (see :func:`get_data_dir`); sets without a test file
    are split with a fixed stratified hold-out.  :func:`fetch_dataset`
    downloads missing files from the LIBSVM data site and verifies them.
Embedded data
    :func:`load_embedded_a9a` reads the copy of a9a shipped inside the
    package; it needs neither a data folder nor a download.

Checksums
    Every file has two sha256 checksums: ``sha256``, of the file as stored in
    the project's shared data folder (some of those are bzip2-compressed), and
    ``content_sha256``, of its decompressed content.  The LIBSVM site serves
    some files uncompressed that are stored compressed here (phishing,
    skin_nonskin), so downloads are verified against ``content_sha256``,
    which does not depend on the compression.
"""

import bz2
import gzip
import hashlib
import math
import numbers
import os
import shutil
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import train_test_split

__all__ = [
    "DATASETS",
    "DataFile",
    "DataFormatError",
    "DatasetInfo",
    "fetch_dataset",
    "get_data_dir",
    "load_dataset",
    "load_embedded_a9a",
    "load_svmlight",
]

#: Environment variable naming the data folder (see :func:`get_data_dir`).
DATA_DIR_ENV = "FASTSVM_DATA"

# <project root>/../shared/datasets, the project root being the folder that
# holds the fastsvm package.
_SHARED_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"

_LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
_LIBSVM_MULTICLASS = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"

_DOWNLOAD_TIMEOUT_S = 60
_CHUNK_BYTES = 1 << 20

#: Largest feature index in a LIBSVM file (scikit-learn's parser reads indices as C int).
_MAX_INDEX = 2**31 - 1

#: Errors of reading a file that cannot be opened or decompressed (zlib.error:
#: corrupt gzip data).
_READ_ERRORS = (OSError, EOFError, zlib.error)


class DataFormatError(ValueError):
    """A data file is unreadable, corrupt, or fails its checksum.

    The message names the file and the underlying reason.
    """


def load_svmlight(path, n_features=None, dtype=np.float64, zero_based=False):
    """Read a LIBSVM / svmlight text file.

    Each line is ``LABEL [qid:Q] INDEX:VALUE INDEX:VALUE ...``: a numeric
    label, then feature index/value pairs with strictly ascending indices.
    Following LIBSVM, indices start at 1 (index ``i`` is column ``i - 1`` of
    ``X``); ``zero_based=True`` reads files whose indices start at 0.  The
    base is never guessed from the file, so every file read with the same
    arguments maps indices to the same columns.  Empty lines and text after
    ``#`` are ignored; a ``qid:`` token right after the label is skipped.

    The file is read by scikit-learn's fast parser.  When that fails, the
    file is scanned again line by line to name the first bad line.

    Parameters
    ----------
    path : str or os.PathLike
        The file.  Names ending in ``.bz2`` or ``.gz`` are decompressed.
    n_features : int or None, default=None
        Number of features (columns of ``X``).  None infers it from the
        largest feature index in the file; give it when a file may not use
        the last feature (the a9a test file uses 122 of 123).
    dtype : numpy floating dtype, default=np.float64
        Dtype of ``X``.
    zero_based : bool, default=False
        False: indices start at 1, as in LIBSVM and all of its data sets, and
        index 0 is an error.  True: indices start at 0.  Only True and False
        are accepted (not scikit-learn's ``"auto"``).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Feature values, with int32 indices where they fit (as every
        scikit-learn estimator accepts).
    y : ndarray of shape (n_samples,), dtype float64
        Labels, as written in the file.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If ``n_features``, ``dtype`` or ``zero_based`` is invalid.
    DataFormatError
        If the file cannot be read or decompressed, or holds no samples.
        Also, naming the file and the line (``line N``, counted from 1), if
        a line has a label that is not a number; a token that is not
        ``INDEX:VALUE`` with an integer index and a numeric value (``3:``,
        ``:4``, ``abc``, ``3:x``, ``3:4:5``); a negative index; index 0 when
        ``zero_based`` is False; an index of 2**31 or more; indices that are
        not strictly ascending (unsorted or repeated); an index beyond
        ``n_features``; or a non-finite label or value (nan, inf, or a value
        too large for ``dtype``).
    """
    if not isinstance(zero_based, (bool, np.bool_)):
        raise ValueError(
            f"zero_based must be True or False, got {zero_based!r}; "
            "the index base is never guessed from the file"
        )
    if n_features is not None and (
        not isinstance(n_features, numbers.Integral) or n_features < 1
    ):
        raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype!r}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"LIBSVM file not found: '{path}'")
    try:
        # a value beyond a narrow dtype (70000 in float16) becomes inf, refused below by line
        with np.errstate(over="ignore"):
            X, y = load_svmlight_file(
                os.fspath(path), n_features=n_features, dtype=dtype, zero_based=bool(zero_based)
            )
    except _READ_ERRORS as err:
        raise DataFormatError(f"could not read LIBSVM file '{path}': {err}") from err
    # ValueError: a parse error; OverflowError: an index of 2**31 or more.
    except (ValueError, OverflowError) as err:
        raise _parse_error(path, str(err), zero_based, n_features, dtype) from err
    if X.shape[0] == 0:
        raise DataFormatError(f"could not read LIBSVM file '{path}': it holds no samples")
    if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
        raise _parse_error(
            path, "it holds non-finite values (nan or inf)", zero_based, n_features, dtype
        )
    X = sp.csr_matrix(X)
    if X.nnz < 2**31 and X.shape[1] < 2**31:
        # scikit-learn's loader gives int64 indices; some estimators (SVC) accept only int32
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X, np.asarray(y, dtype=np.float64)


def _parse_error(path, reason, zero_based, n_features, dtype):
    """The DataFormatError for a LIBSVM file that the fast parser rejected.

    Scans `path` for its first bad line (see :func:`_find_bad_line`) and
    names it; `reason`, the fast parser's complaint, is the message when no
    line is found or the file cannot be read again.
    """
    try:
        bad_line = _find_bad_line(path, zero_based, n_features, dtype)
    except _READ_ERRORS as err:
        reason = f"{reason} ({err})"
        bad_line = None
    if bad_line is not None:
        line_number, problem = bad_line
        reason = f"line {line_number}: {problem}"
    return DataFormatError(f"could not read LIBSVM file '{path}': {reason}")


def _find_bad_line(path, zero_based, n_features, dtype):
    """Return ``(line number, problem)`` for the first bad line of `path`, or None.

    Line numbers count from 1 over every line of the (decompressed) file,
    empty and comment lines included.  The rules are those of
    :func:`load_svmlight`; see :func:`_line_problem`.
    """
    first_index = 0 if zero_based else 1
    dtype = np.dtype(dtype)
    largest = float(np.finfo(dtype).max)
    with _open(path, path.name) as f:
        for line_number, line in enumerate(f, start=1):
            problem = _line_problem(line, first_index, n_features, dtype, largest)
            if problem is not None:
                if b"\r" in line.rstrip(b"\r\n"):      # lines ended by CR alone read as one
                    problem += ("; the line holds a carriage return: lines that end in CR "
                                "alone (classic Mac OS) must be converted to LF or CRLF")
                return line_number, problem
    return None


def _line_problem(line, first_index, n_features, dtype, largest):
    """What is wrong with one line (bytes) of a LIBSVM file, or None.

    Mirrors scikit-learn's parser: text from the first ``#`` on is a
    comment, tokens are separated by whitespace, the first token is the
    label, and a token starting with ``qid`` right after it is skipped.
    `first_index` is the smallest valid feature index (0 or 1).  Labels must
    be finite (they are read as float64), values finite in `dtype`, whose
    largest finite value is `largest`.
    """
    tokens = line.split(b"#", 1)[0].split()
    if not tokens:
        return None
    label, features = tokens[0], tokens[1:]
    try:
        if not math.isfinite(float(label)):
            return f"label {_show(label)} is not finite"
    except ValueError:
        return f"label {_show(label)} is not a number"
    if features and features[0].startswith(b"qid"):
        if b":" not in features[0]:
            return f"malformed token {_show(features[0])}: expected qid:VALUE"
        features = features[1:]
    previous = -1
    for token in features:
        index_text, colon, value_text = token.partition(b":")
        if not colon:
            return f"malformed token {_show(token)}: expected INDEX:VALUE"
        try:
            index = int(index_text)
        except ValueError:
            return f"malformed token {_show(token)}: the index is not an integer"
        if index < 0:
            return f"negative feature index {index}"
        if index < first_index:
            return (
                "feature index 0, but LIBSVM indices start at 1 "
                "(read zero-based files with zero_based=True, or --zero-based on the command line)"
            )
        if index > _MAX_INDEX:
            return f"feature index {index} is too large (at most {_MAX_INDEX})"
        if index <= previous:
            return (
                f"feature indices must be strictly ascending, got {index} after {previous}"
            )
        if n_features is not None and index - first_index >= n_features:
            return f"feature index {index} is beyond n_features={n_features}"
        try:
            value = float(value_text)
        except ValueError:
            return f"malformed token {_show(token)}: the value is not a number"
        if not _is_finite(value, dtype, largest):
            return f"value {_show(value_text)} of feature {index} is not finite in {dtype}"
        previous = index
    return None


def _is_finite(value, dtype, largest):
    """Whether the float `value` is finite, also once converted to `dtype`.

    `largest` is the largest finite value of `dtype`; only values beyond it
    are converted (they may still round down to it).
    """
    if not math.isfinite(value):
        return False
    if abs(value) <= largest:
        return True
    with np.errstate(over="ignore"):
        return bool(np.isfinite(dtype.type(value)))


def _show(token, limit=40):
    """A token (bytes) quoted for an error message, cut to `limit` characters."""
    text = token.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


@dataclass(frozen=True)
class DataFile:
    """One file of a data set.

    Attributes
    ----------
    name : str
        File name in the data folder, as in the project's shared copy
        (for example ``"phishing.bz2"``).
    url : str
        Canonical download address.  Its last path component is the
        download name (for example ``"phishing"``), which may differ from
        ``name`` in its compression.
    sha256 : str
        sha256 of the file ``name`` as stored in the shared copy.
    content_sha256 : str
        sha256 of the decompressed content; independent of the compression.
    """

    name: str
    url: str
    sha256: str
    content_sha256: str

    @property
    def download_name(self):
        """str: File name of the download, the last component of ``url``."""
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DatasetInfo:
    """A registered data set.

    Attributes
    ----------
    name : str
        Short name, the key in :data:`DATASETS`.
    train : DataFile
        Training file (the whole set when there is no test file).
    test : DataFile or None
        Test file, or None when the set has none.
    test_fraction : float or None
        For sets without a test file: fraction of ``train`` held out as the
        test set (stratified, ``random_state=0``).  None when ``test`` is set.
    n_features : int
        Number of features; every file of the set is read with it.
    C, gamma : float or None
        Regularisation parameter and RBF kernel width used for the set in the
        BSGD paper; None for sets the paper does not use.
    description : str
        One-line description.
    """

    name: str
    train: DataFile
    test: DataFile | None
    test_fraction: float | None
    n_features: int
    C: float | None
    gamma: float | None
    description: str

    def __post_init__(self):
        if (self.test is None) == (self.test_fraction is None):
            raise ValueError(
                f"data set '{self.name}': give exactly one of a test file and a test_fraction"
            )
        if self.test_fraction is not None and not 0.0 < self.test_fraction < 1.0:
            raise ValueError(
                f"data set '{self.name}': test_fraction must lie in (0, 1), "
                f"got {self.test_fraction}"
            )

    @property
    def files(self):
        """tuple of DataFile: The training file, then the test file if any."""
        return (self.train,) if self.test is None else (self.train, self.test)


DATASETS = {
    "a9a": DatasetInfo(
        name="a9a",
        train=DataFile(
            name="a9a",
            url=_LIBSVM_BINARY + "a9a",
            sha256="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
            content_sha256="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
        ),
        test=DataFile(
            name="a9a.t",
            url=_LIBSVM_BINARY + "a9a.t",
            sha256="1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
            content_sha256="1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
        ),
        test_fraction=None,
        # a9a.t uses only 122 of the 123 features.
        n_features=123,
        C=2.0**5,
        gamma=2.0**-7,
        description="UCI Adult (ADULT in the BSGD paper): income over 50K, "
        "32,561 / 16,281 rows, 123 binary features, labels -1/+1",
    ),
    "ijcnn1": DatasetInfo(
        name="ijcnn1",
        train=DataFile(
            name="ijcnn1.bz2",
            url=_LIBSVM_BINARY + "ijcnn1.bz2",
            sha256="b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3",
            content_sha256="7fe291672c3fefe6a7e3c51529becd23f0e985ba05ffb8d53c9c648c1e91cc19",
        ),
        test=DataFile(
            name="ijcnn1.t.bz2",
            url=_LIBSVM_BINARY + "ijcnn1.t.bz2",
            sha256="acd1db430684fdd3f0c768ecc49aa8e749d0004fc117611220c2aa576a7b6a24",
            content_sha256="e7b0bbd518641980dc322746c6bc59d019d3153934e6258e48f9d8cfae2c4bb8",
        ),
        test_fraction=None,
        n_features=22,
        C=2.0**5,
        gamma=2.0**1,
        description="IJCNN 2001 challenge (IJCNN in the BSGD paper): training + "
        "validation 49,990 rows, test 91,701 rows, 22 features, labels -1/+1",
    ),
    "phishing": DatasetInfo(
        name="phishing",
        # The LIBSVM site serves this file uncompressed.
        train=DataFile(
            name="phishing.bz2",
            url=_LIBSVM_BINARY + "phishing",
            sha256="998a4f88aadc8b0b52ea07811bbb8c2d93ba8c4d729972a254a58ab75f566cd8",
            content_sha256="0b0ca40e17bc95e909bfa587c408bf69904571ace01dea26e34cafc464f2da93",
        ),
        test=None,
        test_fraction=0.2,
        n_features=68,
        C=2.0**3,
        gamma=2.0**3,
        description="Phishing websites (PHISHING in the BSGD paper): 11,055 rows, "
        "68 features, labels 0/1, no test file",
    ),
    "skin_nonskin": DatasetInfo(
        name="skin_nonskin",
        # The local copy is the UCI Skin Segmentation data written as LIBSVM
        # text; it may not be byte-identical to the LIBSVM site's copy (served
        # uncompressed), so verifying a download may fail.  Pass verify=False
        # to fetch_dataset to accept the download anyway.
        train=DataFile(
            name="skin_nonskin.bz2",
            url=_LIBSVM_BINARY + "skin_nonskin",
            sha256="b0b0d9aa430e191b51f7660e0b415095e65e0f0626c377e4960b647f6b0ff6cb",
            content_sha256="9f69515ae5c620bdbe32481449080308f355987f5e499db3097428450e1f400c",
        ),
        test=None,
        # The BSGD paper trains on 183,793 rows, about 75 % of 245,057.
        test_fraction=0.25,
        n_features=3,
        C=2.0**5,
        gamma=2.0**-7,
        description="UCI Skin Segmentation (SKIN in the BSGD paper): 245,057 rows, "
        "3 raw colour features in 0..255, labels 1/2, no test file",
    ),
    "covtype": DatasetInfo(
        name="covtype",
        train=DataFile(
            name="covtype.libsvm.binary.scale.bz2",
            url=_LIBSVM_BINARY + "covtype.libsvm.binary.scale.bz2",
            sha256="a5295cfbc83609af67a485bd7d843fedecc274d184723a65bfcc8ed30cfb2877",
            content_sha256="d8ef9cce1ee5792a4d4ed001f5af0fd7d0c8f9ec1798873fd6282f2c84854a14",
        ),
        test=None,
        test_fraction=0.2,
        n_features=54,
        # Not used in the BSGD paper: no published C and gamma.
        C=None,
        gamma=None,
        description="UCI Forest covertype, class 2 vs rest: 581,012 rows, "
        "54 features scaled to [0, 1], labels 1/2, no test file",
    ),
    "usps": DatasetInfo(
        name="usps",
        train=DataFile(
            name="usps.bz2",
            url=_LIBSVM_MULTICLASS + "usps.bz2",
            sha256="370b18a549d999a36a88f8e9e679aac4900566621f0da3fa63369061eeaa202d",
            content_sha256="83b3e2490d0da05237ce1f63477763c3ae116bff90700822d6ed810791432fa9",
        ),
        test=DataFile(
            name="usps.t.bz2",
            url=_LIBSVM_MULTICLASS + "usps.t.bz2",
            sha256="7b89c7070e776bac17f010ee0e415cb79dbb91d7b2feb39d3eaf992077700fc4",
            content_sha256="a92340313639767be7580f70aa1d68f16ae41342f290e8ef501183225fb00a28",
        ),
        test_fraction=None,
        n_features=256,
        # Not used in the BSGD paper: no published C and gamma.
        C=None,
        gamma=None,
        description="USPS handwritten digits, multi-class: 7,291 / 2,007 rows, "
        "256 pixel features in [-1, 1], labels 1..10 (digit + 1)",
    ),
}


def get_data_dir(data_dir=None):
    """Return the folder that holds the data files.

    Parameters
    ----------
    data_dir : str or os.PathLike or None, default=None
        Explicit folder.  When None, the first of these is used: the
        environment variable ``FASTSVM_DATA`` if set and not empty; the
        folder ``shared/datasets`` beside the project root (the folder that
        holds the ``fastsvm`` package) if it exists; ``~/fastsvm_data``.

    Returns
    -------
    pathlib.Path
        The folder.  It need not exist.
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    from_env = os.environ.get(DATA_DIR_ENV)
    if from_env:
        return Path(from_env).expanduser()
    if _SHARED_DIR.is_dir():
        return _SHARED_DIR
    return Path.home() / "fastsvm_data"


def load_dataset(name, data_dir=None, download=False, verify=False, dtype=np.float64):
    """Load the train/test split of a registered data set.

    Each file is looked for in the data folder under its local name (for
    example ``phishing.bz2``) and then its download name (``phishing``).
    Sets without a test file are split by a stratified
    ``train_test_split(test_size=info.test_fraction, random_state=0)``, so
    the split is the same on every call.

    Parameters
    ----------
    name : str
        Key of :data:`DATASETS`.
    data_dir : str or os.PathLike or None, default=None
        Data folder; see :func:`get_data_dir`.
    download : bool, default=False
        Download missing files with :func:`fetch_dataset`.  Downloads are
        always verified; to accept one that fails its checksum, call
        ``fetch_dataset(name, verify=False)`` first.
    verify : bool, default=False
        Check the sha256 of the files before reading them: a file passes if
        it matches ``sha256`` (the shared copy) or its decompressed content
        matches ``content_sha256``.
    dtype : numpy floating dtype, default=np.float64
        Dtype of the feature matrices.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,), dtype float64
    X_test : scipy.sparse.csr_matrix of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,), dtype float64
        Labels are as written in the files (for example 0/1 for phishing).

    Raises
    ------
    ValueError
        If ``name`` is not registered.
    FileNotFoundError
        If a file is missing and ``download`` is False.
    DataFormatError
        If a file fails its checksum or cannot be parsed.
    """
    info = _get_info(name)
    directory = get_data_dir(data_dir)
    paths = [_find_file(directory, data_file) for data_file in info.files]
    if None in paths:
        if not download:
            missing = next(f for f, p in zip(info.files, paths) if p is None)
            names = (f"'{missing.name}' is not" if missing.name == missing.download_name
                     else f"neither '{missing.name}' nor '{missing.download_name}' is")
            raise FileNotFoundError(
                f"data set '{name}': {names} in {directory}. Pass download=True "
                f"or call fastsvm.datasets.fetch_dataset('{name}') to download it, "
                f"or set the {DATA_DIR_ENV} environment variable to a folder that holds it."
            )
        paths = fetch_dataset(name, data_dir=directory)
    if verify:
        for data_file, path in zip(info.files, paths):
            _verify(path, path.name, data_file, label=str(path))

    X_train, y_train = load_svmlight(paths[0], n_features=info.n_features, dtype=dtype)
    if info.test is None:
        X_train, X_test, y_train, y_test = train_test_split(
            X_train, y_train, test_size=info.test_fraction, stratify=y_train, random_state=0
        )
    else:
        X_test, y_test = load_svmlight(paths[1], n_features=info.n_features, dtype=dtype)
    return X_train, y_train, X_test, y_test


def fetch_dataset(name, data_dir=None, base_url=None, verify=True, verbose=False):
    """Download the files of a registered data set that are missing.

    A file counts as present if the data folder holds it under its local
    name or its download name; present files are left alone.  Each missing
    file is downloaded to a temporary file in the data folder, verified, and
    then renamed to its download name (or to its local name, when the download
    is the stored copy, compressed as the local name says: from a mirror of
    the shared folder), so a failed or corrupt download leaves nothing behind.

    Parameters
    ----------
    name : str
        Key of :data:`DATASETS`.
    data_dir : str or os.PathLike or None, default=None
        Data folder, created if needed; see :func:`get_data_dir`.
    base_url : str or None, default=None
        Download from ``base_url + "/" + download name`` instead of each
        file's canonical address.
    verify : bool, default=True
        Check the sha256 of each download's decompressed content against
        the registry.  False skips the check.
    verbose : bool, default=False
        Print a line per downloaded file.

    Returns
    -------
    list of pathlib.Path
        The set's files in the data folder: training file, then test file.

    Raises
    ------
    ValueError
        If ``name`` is not registered.
    OSError
        If a download fails.
    DataFormatError
        If a download fails its checksum or cannot be decompressed.
    """
    info = _get_info(name)
    directory = get_data_dir(data_dir)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for data_file in info.files:
        path = _find_file(directory, data_file)
        if path is None:
            url = data_file.url
            if base_url is not None:
                url = base_url.rstrip("/") + "/" + data_file.download_name
            path = _download(url, directory / data_file.download_name, data_file, verify,
                             verbose)
        paths.append(path)
    return paths


def load_embedded_a9a(dtype=np.float64):
    """Load the copy of a9a (UCI Adult) shipped inside the package.

    Reads ``fastsvm/data/a9a.bz2`` and ``fastsvm/data/a9a.t.bz2``; no data
    folder or download is needed.  The content is identical to the LIBSVM
    files ``a9a`` and ``a9a.t``.

    Parameters
    ----------
    dtype : numpy floating dtype, default=np.float64
        Dtype of the feature matrices.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (32561, 123)
    y_train : ndarray of shape (32561,), labels -1.0 / +1.0
    X_test : scipy.sparse.csr_matrix of shape (16281, 123)
    y_test : ndarray of shape (16281,), labels -1.0 / +1.0
    """
    n_features = DATASETS["a9a"].n_features
    package_data = resources.files("fastsvm.data")
    with resources.as_file(package_data / "a9a.bz2") as train_path:
        X_train, y_train = load_svmlight(train_path, n_features=n_features, dtype=dtype)
    with resources.as_file(package_data / "a9a.t.bz2") as test_path:
        X_test, y_test = load_svmlight(test_path, n_features=n_features, dtype=dtype)
    return X_train, y_train, X_test, y_test


def _get_info(name):
    """Return the DatasetInfo registered as `name`, or raise ValueError."""
    if name not in DATASETS:
        raise ValueError(
            f"unknown data set {name!r}; known data sets: {', '.join(sorted(DATASETS))}"
        )
    return DATASETS[name]


def _find_file(directory, data_file):
    """Return the path of `data_file` in `directory` (local name first), or None."""
    for file_name in (data_file.name, data_file.download_name):
        path = directory / file_name
        if path.is_file():
            return path
    return None


def _sha256(path, compression_name=None):
    """sha256 hex digest of a file.

    With `compression_name`, hash the decompressed content, the compression
    being given by the suffix of that name (``.bz2``, ``.gz``, else none).
    """
    digest = hashlib.sha256()
    with _open(path, compression_name) as f:
        while chunk := f.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _open(path, compression_name):
    """Open `path` for reading bytes, decompressed according to the suffix of
    `compression_name` (``.bz2``, ``.gz``, else none; None: no decompression)."""
    suffix = None if compression_name is None else Path(compression_name).suffix
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(suffix, open)
    return opener(path, "rb")


def _verify(path, compression_name, data_file, label):
    """Raise DataFormatError unless `path` matches the checksums of `data_file`; return the
    name whose suffix tells its compression.

    The file passes if its bytes match ``data_file.sha256`` (the stored copy: then its
    name is ``data_file.name``) or its content, decompressed according to the suffix of
    `compression_name` (returned), matches ``data_file.content_sha256``.  `label` names
    the file in messages.
    """
    if _sha256(path) == data_file.sha256:
        return data_file.name
    try:
        got = _sha256(path, compression_name)
    except _READ_ERRORS as err:
        raise DataFormatError(f"could not decompress '{label}': {err}") from err
    if got != data_file.content_sha256:
        raise DataFormatError(
            f"sha256 mismatch for '{label}': expected {data_file.content_sha256} "
            f"(decompressed content), got {got}"
        )
    return compression_name


def _download(url, path, data_file, verify, verbose):
    """Download `url` to `path` through a temporary file, verifying it if asked; returns
    where it was saved: `path`, or beside it under ``data_file.name`` when the download
    is the stored copy in another compression than `path`'s name says (a mirror of the
    shared folder), so that its suffix still tells how to read it."""
    if verbose:
        print(f"downloading {url}", flush=True)
    # A plain open (not tempfile.mkstemp) so the file gets the usual
    # permissions; the process id keeps concurrent downloads apart.
    tmp_path = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        try:
            with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response, open(
                tmp_path, "wb"
            ) as out:
                shutil.copyfileobj(response, out, _CHUNK_BYTES)
        except urllib.error.HTTPError as err:
            raise OSError(f"could not download '{url}': HTTP {err.code} {err.reason}") from err
        except urllib.error.URLError as err:
            raise OSError(f"could not download '{url}': {err.reason}") from err
        if verify:
            path = path.with_name(_verify(tmp_path, path.name, data_file, label=url))
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    if verbose:
        print(f"saved {path} ({path.stat().st_size / 1e6:.1f} MB)", flush=True)
    return path
