"""Loading untrusted model files: never a crash, bounded memory and time, never code.

tests/test_persistence.py covers the format and the round trips; this file feeds
``load_model`` hostile files (zip bombs, lying headers, malformed JSON, pickles,
random mutations with hypothesis), interrupts saves, and checks that the command
line reports every malformed model file on one line.
"""

import copy
import io
import json
import os
import re
import signal
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC, persistence
from fastsvm.cli import main
from fastsvm.persistence import ModelFormatError, load_model, save_model

_rng = np.random.default_rng(0)
X = _rng.standard_normal((40, 4))
Y = _rng.integers(0, 3, 40)

ESTIMATORS = {
    "budget": lambda: BudgetSVC(budget=5, epochs=2, random_state=0),
    "nystrom": lambda: NystromSVC(n_components=8, random_state=0),
    "huber": lambda: HuberSVC(max_iter=50),
    "pegasos": lambda: PegasosSVC(kernel="rbf", max_iter=20, random_state=0),
    "margin": lambda: MarginSGDSVC(M=1.0, random_state=0),
}
BINARY = ("budget", "pegasos")      # fitted on two classes, the others on three


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """case -> (fitted estimator, its model file, the file's bytes)."""
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for case, make in ESTIMATORS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # ConvergenceWarning of the short fits
            clf = make().fit(X, (Y == 0).astype(int) if case in BINARY else Y)
        path = folder / f"{case}.npz"
        save_model(clf, path)
        out[case] = clf, path, path.read_bytes()
    return out


# --------------------------------------------------------------------------
# Building archives
# --------------------------------------------------------------------------


def _npy(array):
    """``array`` as .npy bytes (object arrays pickled, as np.save does when allowed)."""
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def _npy_header(shape, descr="<f8", fortran_order=False):
    """A .npy (format 1.0) header declaring anything."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": fortran_order, "shape": shape})
    return buf.getvalue()


def _members(raw):
    """The (name, data) entries of an archive, in order."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return [(info.filename, zf.read(info)) for info in zf.infolist()]


def _archive(members, compression=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # "Duplicate name"
        with zipfile.ZipFile(buf, "w", compression) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def _replace(raw, name, data):
    """The archive with entry ``name`` (without .npy) holding ``data`` instead."""
    return _archive([(n, data if n == f"{name}.npy" else d) for n, d in _members(raw)])


def _meta(raw):
    return json.loads(str(np.load(io.BytesIO(dict(_members(raw))["meta.npy"]))))


def _with_meta(raw, meta):
    """The archive with ``meta`` (a dict, or JSON text as is) as its meta entry."""
    text = meta if isinstance(meta, str) else json.dumps(meta, allow_nan=True)
    return _replace(raw, "meta", _npy(np.array(text)))


def _raw_entry(name, data, method=zipfile.ZIP_DEFLATED, flags=0, **lies):
    """An entry for :func:`_zip`: (name, payload, crc, file_size, method, flags,
    compress_size); ``lies`` overrides crc, file_size or compress_size."""
    if method == zipfile.ZIP_DEFLATED:
        comp = zlib.compressobj(6, zlib.DEFLATED, -15)
        payload = comp.compress(data) + comp.flush()
    else:
        payload = data
    return (name, payload, lies.get("crc", zlib.crc32(data)), lies.get("file_size", len(data)),
            method, flags, lies.get("compress_size", len(payload)))


def _zip(entries):
    """A ZIP archive written by hand from :func:`_raw_entry` tuples, so that its headers may
    declare anything."""
    body, central = bytearray(), bytearray()
    for name, payload, crc, size, method, flags, compress_size in entries:
        fname = name.encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc,
                            compress_size, size, len(fname), 0) + fname + payload
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, method, 0,
                               0x21, crc, compress_size, size, len(fname), 0, 0, 0, 0, 0,
                               offset) + fname
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central),
                      len(body), 0)
    return bytes(body + central + end)


def _rezip(raw, name=None, **entry_options):
    """The archive rewritten by :func:`_zip`, entry ``name`` with ``entry_options``."""
    return _zip([_raw_entry(n, d, **(entry_options if n == f"{name}.npy" else {}))
                 for n, d in _members(raw)])


def _zeros_deflated(header, n_zeros, chunk=8_000_000):
    """A raw deflate stream of ``header`` and ``n_zeros`` zero bytes, with its CRC-32.

    One block of ``chunk`` zeros is compressed once and repeated: a full flush ends it on a
    byte boundary without back-references into it, so copies concatenate.
    """
    assert n_zeros % chunk == 0
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(header) + comp.flush(zlib.Z_FULL_FLUSH)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(bytes(chunk)) + comp.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = zlib.crc32(header)
    zeros = bytes(chunk)
    for _ in range(n_zeros // chunk):
        crc = zlib.crc32(zeros, crc)
    return head + block * (n_zeros // chunk) + tail, crc


# --------------------------------------------------------------------------
# Zip bombs: memory and time stay bounded
# --------------------------------------------------------------------------

BOMB_ROWS = 50_000_000      # x 4 float64 support vectors: 1.6 GB of zeros, 1.6 MB compressed


@pytest.fixture(scope="module")
def bomb(models, tmp_path_factory):
    """The BudgetSVC(budget=5) file with support_vectors_ replaced by 1.6 GB of zeros whose
    zip and .npy headers agree (np.load would allocate and inflate all of it)."""
    header = _npy_header((BOMB_ROWS, 4))
    payload, crc = _zeros_deflated(header, BOMB_ROWS * 4 * 8)
    entries = [_raw_entry(name, data) for name, data in _members(models["budget"][2])
               if name != "support_vectors_.npy"]
    entries.append(("support_vectors_.npy", payload, crc, len(header) + BOMB_ROWS * 32,
                    zipfile.ZIP_DEFLATED, 0, len(payload)))
    path = tmp_path_factory.mktemp("bomb") / "bomb.npz"
    path.write_bytes(_zip(entries))
    return path


def _peak_memory_of_load(path):
    """(the ModelFormatError of load_model(path), peak traced memory in bytes)."""
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError) as info:
            load_model(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return info.value, peak


def test_zip_bomb_is_rejected_before_it_is_inflated(bomb, monkeypatch):
    assert bomb.stat().st_size < 3_000_000
    with zipfile.ZipFile(bomb) as zf:   # a well-formed archive: sizes and CRC agree
        assert zf.getinfo("support_vectors_.npy").file_size > 1_600_000_000
    inflated = []
    read = zipfile.ZipExtFile.read

    def counting_read(self, n=-1):
        data = read(self, n)
        inflated.append(len(data))
        return data
    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting_read)
    error, peak = _peak_memory_of_load(bomb)
    assert "support_vectors_" in str(error) and str(bomb) in str(error)
    assert peak < 8 << 20, f"peak traced memory {peak / 2**20:.1f} MiB"
    assert inflated and sum(inflated) < 1 << 20, f"{sum(inflated)} bytes decompressed"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and RLIMIT_AS")
def test_zip_bomb_in_a_process_without_memory_to_spare(bomb):
    """The address space may grow by 256 MiB while loading the 1.6 GB bomb: the load ends
    with ModelFormatError, not MemoryError or a kill."""
    code = textwrap.dedent("""
        import resource, sys
        from fastsvm.persistence import ModelFormatError, load_model
        with open("/proc/self/status") as fh:
            size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS,
                           (size + (256 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            load_model(sys.argv[1])
        except ModelFormatError:
            print("ModelFormatError")
    """)
    proc = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ModelFormatError", proc.stderr


@pytest.mark.parametrize("lie", ["zip-size", "npy-shape", "both"])
def test_lying_sizes_are_rejected_before_reading(models, tmp_path, lie):
    """An entry whose zip header or .npy header claims more data than it holds."""
    raw = models["budget"][2]
    sv = np.load(io.BytesIO(dict(_members(raw))["support_vectors_.npy"]))
    header = _npy_header((BOMB_ROWS, 4)) if lie != "zip-size" else _npy_header(sv.shape)
    sv_entry = header + sv.tobytes()
    size = len(header) + BOMB_ROWS * 32 if lie != "npy-shape" else len(sv_entry)
    entries = [_raw_entry(name, data) for name, data in _members(raw)
               if name != "support_vectors_.npy"]
    entries.append(_raw_entry("support_vectors_.npy", sv_entry, file_size=size))
    path = tmp_path / "lie.npz"
    path.write_bytes(_zip(entries))
    error, peak = _peak_memory_of_load(path)
    assert "support_vectors_" in str(error)
    assert peak < 8 << 20


def test_oversized_meta_is_rejected_before_reading(models, tmp_path):
    """meta holds at most 32 MiB of .npy data (8 Mi characters); this one, 36 MiB of
    mostly spaces, compresses to 40 kB."""
    meta = _meta(models["budget"][2])
    meta["training_info"]["padding"] = " " * (9 << 20)
    path = tmp_path / "big-meta.npz"
    path.write_bytes(_with_meta(models["budget"][2], meta))
    assert path.stat().st_size < 100_000
    error, peak = _peak_memory_of_load(path)
    assert "meta declares" in str(error)
    assert peak < 8 << 20


def test_more_support_vectors_than_the_budget_allows(models, tmp_path):
    """The parameters bound the shapes: BudgetSVC(budget=5) holds at most 5 support vectors
    per binary model, however consistent the arrays."""
    raw = models["budget"][2]
    n_sv = 6
    arrays = {"support_vectors_": np.zeros((n_sv, 4)), "support_": np.zeros(n_sv, np.int64),
              "dual_coef_": np.ones((1, n_sv)), "n_support_": np.array([n_sv])}
    members = [(name, _npy(arrays[name[:-4]]) if name[:-4] in arrays else data)
               for name, data in _members(raw)]
    path = tmp_path / "over-budget.npz"
    path.write_bytes(_archive(members))
    with pytest.raises(ModelFormatError, match="budget=5"):
        load_model(path)


@pytest.mark.parametrize("case", ["pegasos", "budget-shared"])
def test_n_support_counting_one_more_than_stored(models, tmp_path, case):
    """n_support_ may not count more support vectors than are stored, not even one more:
    the only check where the per-model counts need not sum to the stored rows (a kernel
    PegasosSVC, and a multiclass BudgetSVC whose models share one budget)."""
    if case == "budget-shared":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # ConvergenceWarning of the short fit
            clf = BudgetSVC(budget=5, epochs=2, multi_class="ovr", shared_budget=True,
                            random_state=0).fit(X, Y)
        save_model(clf, tmp_path / "shared.npz")
        raw = (tmp_path / "shared.npz").read_bytes()
        assert _entry(raw, "n_support_").sum() > len(_entry(raw, "support_vectors_"))
    else:
        raw = models[case][2]
    n_sv = len(_entry(raw, "support_vectors_"))
    n_support = _entry(raw, "n_support_").copy()
    n_support[0] = n_sv + 1
    path = tmp_path / "one-more.npz"
    path.write_bytes(_replace(raw, "n_support_", _npy(n_support)))
    with pytest.raises(ModelFormatError, match=f"n_support_ counts more support vectors than "
                                               f"the {n_sv} stored"):
        load_model(path)


# --------------------------------------------------------------------------
# Malformed files: ModelFormatError naming the file
# --------------------------------------------------------------------------


def _meta_with(raw, **changes):
    meta = _meta(raw)
    meta.update(changes)
    return _with_meta(raw, meta)


def _params_with(raw, **changes):
    meta = _meta(raw)
    meta["params"].update(changes)
    return _with_meta(raw, meta)


def _nested(depth):
    value = 1.0
    for _ in range(depth):
        value = [value]
    return value


def _entry(raw, name):
    return np.load(io.BytesIO(dict(_members(raw))[f"{name}.npy"]))


def _flip_middle(raw):
    data = bytearray(raw)
    for pos in range(len(data) // 3, len(data) // 3 + 40, 4):
        data[pos] ^= 0x5A
    return bytes(data)


def _npy_with_header(raw, name, **header):
    """Entry ``name`` with its data behind a .npy header changed by ``header``."""
    array = _entry(raw, name)
    fields = {"shape": array.shape, "descr": array.dtype.str, "fortran_order": False, **header}
    return _replace(raw, name, _npy_header(fields["shape"], fields["descr"],
                                           fields["fortran_order"]) + array.tobytes())


def _invalid_code_point(raw):
    data = _npy_header((), "<U3") + struct.pack("<3I", 0x110000, 0x7B, 0x7D)
    return _replace(raw, "meta", data)


def _structured(raw):
    classes = _entry(raw, "classes_")
    return _replace(raw, "classes_", _npy(np.array([(c,) for c in classes],
                                                    dtype=[("label", "<i8")])))


# kind -> (what the error message says, the damaged file built from a valid one's bytes)
MALFORMED = {
    # not an archive, or a broken one
    "empty": ("not an npz/zip archive", lambda raw: b""),
    "text": ("not an npz/zip archive", lambda raw: b"1 1:0.5 2:1\n"),
    "zip-signature-only": ("corrupt or truncated", lambda raw: b"PK\x03\x04" + bytes(60)),
    "truncated": ("corrupt or truncated", lambda raw: raw[: len(raw) // 2]),
    "flipped-bytes": ("corrupt or truncated", _flip_middle),
    # the entries of the archive
    "no-meta": ("no 'meta' entry",
                lambda raw: _archive([(n, d) for n, d in _members(raw) if n != "meta.npy"])),
    "duplicate-entry": ("duplicate entry",
                        lambda raw: _archive(_members(raw) + [_members(raw)[-1]])),
    "directory-entry": ("is a directory",
                        lambda raw: _archive(_members(raw) + [("support_.npy/", b"")])),
    "not-npy-entry": ("not a .npy array",
                      lambda raw: _archive(_members(raw) + [("README.txt", b"hello")])),
    "unknown-entry": ("unexpected entry weights_", lambda raw: _archive(
        _members(raw) + [("weights_.npy", _npy(np.ones(3)))])),
    "missing-entry": ("missing array(s) dual_coef_", lambda raw: _archive(
        [(n, d) for n, d in _members(raw) if n != "dual_coef_.npy"])),
    "encrypted-entry": ("is encrypted", lambda raw: _rezip(raw, "dual_coef_", flags=0x1)),
    "bzip2-entry": ("compression method 12",
                    lambda raw: _rezip(raw, "dual_coef_", method=zipfile.ZIP_BZIP2)),
    "bad-crc": ("Bad CRC-32", lambda raw: _rezip(raw, "dual_coef_", crc=12345)),
    "zip-size-too-large": ("cannot hold that much",
                           lambda raw: _rezip(raw, "dual_coef_", file_size=3_000_000_000)),
    "zip-size-too-small": ("corrupt or truncated",
                           lambda raw: _rezip(raw, "dual_coef_", file_size=100)),
    "zip-compressed-size-beyond-the-file": ("compressed data but the file holds",
                                            lambda raw: _rezip(raw, "dual_coef_",
                                                               compress_size=1_000_000)),
    # meta
    "meta-bytes": ("0-d unicode array",
                   lambda raw: _replace(raw, "meta", _npy(np.array(b"{}")))),
    "meta-invalid-code-point": ("not unicode text", _invalid_code_point),
    "meta-too-large": ("meta declares",
                       lambda raw: _meta_with(raw, training_info={"x": "a" * (9 << 20)})),
    "meta-not-json": ("not valid JSON", lambda raw: _with_meta(raw, "{not json")),
    "meta-many-containers": ("more than 65536 JSON objects",
                             lambda raw: _meta_with(raw, training_info={"x": [[]] * 70_000})),
    "meta-nested-100000-deep": ("more than 65536 JSON objects",
                                lambda raw: _with_meta(raw, "[" * 100_000 + "]" * 100_000)),
    "meta-nested-2000-deep": ("more than 32 deep",
                              lambda raw: _with_meta(raw, "[" * 2000 + "]" * 2000)),
    "param-nested-40-deep": ("more than 32 deep", lambda raw: _params_with(raw, C=_nested(40))),
    "meta-nan": ("constant NaN", lambda raw: _params_with(raw, C=float("nan"))),
    "meta-1e999": ("1e999 is not finite", lambda raw: _with_meta(
        raw, json.dumps(_meta(raw)).replace('"C": 1.0', '"C": 1e999'))),
    "meta-huge-integer": ("outside the int64 range",
                          lambda raw: _params_with(raw, budget=10**30)),
    "meta-long-integer": ("outside the int64 range",
                          lambda raw: _params_with(raw, budget=int("9" * 4000))),
    "meta-duplicate-key": ("repeats a key", lambda raw: _with_meta(
        raw, json.dumps(_meta(raw))[:-1] + ', "version": 2}')),
    "meta-unknown-key": ("unknown key(s) extra", lambda raw: _meta_with(raw, extra=1)),
    "meta-missing-key": ("lacks the key(s) training_info", lambda raw: _with_meta(
        raw, {k: v for k, v in _meta(raw).items() if k != "training_info"})),
    "meta-params-a-list": ("'params' in 'meta' must be a JSON object",
                           lambda raw: _meta_with(raw, params=[1, 2])),
    "meta-version-a-string": ("invalid format version",
                              lambda raw: _meta_with(raw, version="2")),
    "meta-training-info-a-list": ("'training_info' in 'meta' must be a JSON object",
                                  lambda raw: _meta_with(raw, training_info=[1])),
    "meta-estimator-a-list": ("'estimator' in 'meta' must be a JSON string",
                              lambda raw: _meta_with(raw, estimator=["BudgetSVC"])),
    "meta-format-huge": ("format tag", lambda raw: _meta_with(raw, format=["x"] * 100_000)),
    "param-a-dict": ("parameter C in 'params' must be",
                     lambda raw: _params_with(raw, C={"value": 1.0})),
    "param-unknown": ("unknown parameter(s) no_such_param",
                      lambda raw: _params_with(raw, no_such_param=1)),
    "param-out-of-range": ("'C' parameter", lambda raw: _params_with(raw, C=-1.0)),
    "class-weight-unhashable-label": ("[label, weight] pairs", lambda raw: _params_with(
        raw, class_weight=[[[0], 1.0]])),
    "classes-dtype-huge-unicode": ("classes_dtype",
                                   lambda raw: _meta_with(raw, classes_dtype="<U999999999")),
    "classes-dtype-structured": ("classes_dtype",
                                 lambda raw: _meta_with(raw, classes_dtype="[('a', '<f8')]")),
    "classes-dtype-wraps-around": ("not representable in classes_dtype <u8", lambda raw: _replace(
        _meta_with(raw, classes_dtype="<u8"), "classes_", _npy(np.array([-1, 1])))),
    # the .npy entries
    "bad-npy-magic": ("magic string",
                      lambda raw: _replace(raw, "dual_coef_", b"\x93NUMPX" + bytes(120))),
    "npy-version-3": ("format version 3.0", lambda raw: _replace(
        raw, "dual_coef_", b"\x93NUMPY\x03" + dict(_members(raw))["dual_coef_.npy"][7:])),
    "npy-data-truncated": ("header declares 40 bytes", lambda raw: _replace(
        raw, "dual_coef_", dict(_members(raw))["dual_coef_.npy"][:-8])),
    "npy-data-too-long": ("header declares 40 bytes", lambda raw: _replace(
        raw, "dual_coef_", dict(_members(raw))["dual_coef_.npy"] + bytes(8))),
    "npy-negative-shape": ("invalid dtype or shape", lambda raw: _npy_with_header(
        raw, "support_vectors_", shape=(-5, -4))),
    "npy-huge-shape": ("n_sv is", lambda raw: _npy_with_header(
        raw, "support_vectors_", shape=(10**15, 4))),
    "object-dtype": ("need pickle", lambda raw: _replace(
        raw, "classes_", _npy(np.array([0, "one"], dtype=object)))),
    "structured-dtype": ("classes_ must be a 1-d array", _structured),
    "classes-unsorted": ("classes_ must be sorted", lambda raw: _replace(
        raw, "classes_", _npy(_entry(raw, "classes_")[::-1].copy()))),
    "complex-dtype": ("dual_coef_ must be a 2-d real array", lambda raw: _replace(
        raw, "dual_coef_", _npy(_entry(raw, "dual_coef_").astype(complex)))),
    "string-dtype": ("intercept_ must be a 1-d real array", lambda raw: _replace(
        raw, "intercept_", _npy(_entry(raw, "intercept_").astype(str)))),
    "wrong-shape": ("n_models is 1",
                    lambda raw: _replace(raw, "dual_coef_", _npy(np.ones((2, 3))))),
    "wrong-ndim": ("intercept_ must be a 1-d real array",
                   lambda raw: _replace(raw, "intercept_", _npy(np.ones((1, 1))))),
    "infinite-value": ("non-finite",
                       lambda raw: _replace(raw, "intercept_", _npy(np.array([np.inf])))),
    "feature-names-wrong-length": ("feature_names_in_ must be 4 strings", lambda raw: _archive(
        _members(raw) + [("feature_names_in_.npy", _npy(np.array(["a", "b"])))])),
    # no features, support vectors as wide: consistent, but no fit gives such a model
    "zero-features": ("n_features_in_ must be >= 1", lambda raw: _replace(
        _replace(raw, "n_features_in_", _npy(np.array(0, dtype=np.int64))), "support_vectors_",
        _npy(_entry(raw, "support_vectors_")[:, :0].copy()))),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_file_raises_model_format_error(models, tmp_path, kind):
    reason, damage = MALFORMED[kind]
    path = tmp_path / f"{kind}.npz"
    path.write_bytes(damage(models["budget"][2]))
    with pytest.raises(ModelFormatError, match=re.escape(reason)) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message and len(message) < 600


class _RunsCode:
    """Unpickling an instance creates the file ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').close()",)


@pytest.mark.parametrize("entry", ["meta", "classes_", "dual_coef_", "n_features_in_"])
def test_pickled_entries_are_never_unpickled(models, tmp_path, entry):
    marker = tmp_path / "code-ran"
    payload = np.empty(2, dtype=object)
    payload[:] = [_RunsCode(str(marker)), 0]
    data = _npy(payload)
    np.load(io.BytesIO(data), allow_pickle=True)    # the payload is live:
    assert marker.exists()                          # unpickling it runs code
    marker.unlink()
    path = tmp_path / "pickled.npz"
    path.write_bytes(_replace(models["budget"][2], entry, data))
    with pytest.raises(ModelFormatError, match="pickle"):
        load_model(path)
    assert not marker.exists()


# --------------------------------------------------------------------------
# Valid files load as before
# --------------------------------------------------------------------------


def test_hand_written_archives_are_valid(models, tmp_path):
    """_zip writes archives that load when their headers tell the truth (so the tests that
    make them lie test the lie)."""
    clf, _, raw = models["budget"]
    for archive in (_rezip(raw), _rezip(raw, "dual_coef_", method=zipfile.ZIP_STORED)):
        path = tmp_path / "hand-written.npz"
        path.write_bytes(archive)
        np.testing.assert_array_equal(load_model(path).decision_function(X),
                                      clf.decision_function(X))


def _sparse_model_file(matrix, folder):
    """The bytes of a model file holding ``matrix`` (NystromSVC's components_ or
    MarginSGDSVC's support_vectors_) as CSR arrays, and the fitted model."""
    import scipy.sparse as sp

    X_sparse = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    make = ESTIMATORS["nystrom" if matrix == "components_" else "margin"]
    clf = make().fit(X_sparse, Y)
    assert sp.issparse(getattr(clf, matrix))
    save_model(clf, folder / "sparse.npz")
    return (folder / "sparse.npz").read_bytes(), clf, X_sparse


# damage -> (what the error message says, the changed CSR arrays (data, indices, indptr))
SPARSE_DAMAGE = {
    "index-out-of-range": ("not a valid CSR matrix",
                           lambda d, i, p: (d, np.where(i == i.max(), 4, i), p)),
    "negative-index": ("not a valid CSR matrix", lambda d, i, p: (d, -1 - i, p)),
    "decreasing-indptr": ("not a valid CSR matrix",
                          lambda d, i, p: (d, i, np.r_[p[:1], p[-1] + 1, p[2:]])),
    "indptr-end-not-nnz": ("not a valid CSR matrix", lambda d, i, p: (d, i, p - (p > 0))),
    "one-row-fewer": ("entries", lambda d, i, p: (d[:p[-2]], i[:p[-2]], p[:-1])),
    "data-shorter-than-indices": ("entries", lambda d, i, p: (d[:-1], i, p)),
}


@pytest.mark.parametrize("damage", sorted(SPARSE_DAMAGE))
@pytest.mark.parametrize("matrix", ["components_", "support_vectors_"])
def test_sparse_rows_in_a_file_are_checked(tmp_path, matrix, damage):
    """Sparse landmarks and sparse support vectors round-trip as three CSR arrays, whose
    structure load_model checks before it builds the matrix: indices in [0, n_features),
    indptr from 0 to nnz without decreasing, one row per landmark or support vector."""
    original, clf, X_sparse = _sparse_model_file(matrix, tmp_path)
    path = tmp_path / "model.npz"
    path.write_bytes(original)
    np.testing.assert_array_equal(load_model(path).decision_function(X_sparse),
                                  clf.decision_function(X_sparse))
    names = [f"{matrix}{part}_" for part in ("data", "indices", "indptr")]
    reason, change = SPARSE_DAMAGE[damage]
    arrays = change(*(_entry(original, name) for name in names))
    raw = original
    for name, array in zip(names, arrays):
        raw = _replace(raw, name, _npy(np.ascontiguousarray(array)))
    path.write_bytes(raw)
    with pytest.raises(ModelFormatError, match=re.escape(reason)):
        load_model(path)
    path.write_bytes(_archive([(n, d) for n, d in _members(original)
                               if n != f"{names[1]}.npy"]))
    with pytest.raises(ModelFormatError, match=f"missing array.*{names[1]}"):
        load_model(path)


@pytest.mark.parametrize("case", sorted(ESTIMATORS))
def test_valid_files_load_bit_for_bit(models, tmp_path, case):
    clf, path, raw = models[case]
    expected = clf.decision_function(X)
    np.testing.assert_array_equal(load_model(path).decision_function(X), expected)
    # the same arrays stored uncompressed (np.savez) and in Fortran order load the same
    arrays = [(name, np.load(io.BytesIO(data))) for name, data in _members(raw)]
    members = [(name, _npy(np.asfortranarray(a) if a.ndim == 2 else a)) for name, a in arrays]
    assert any(np.lib.format.read_array_header_1_0(io.BytesIO(d[8:]))[1] for _, d in members)
    other = tmp_path / "stored.npz"
    other.write_bytes(_archive(members, zipfile.ZIP_STORED))
    np.testing.assert_array_equal(load_model(other).decision_function(X), expected)


# --------------------------------------------------------------------------
# Saving is atomic
# --------------------------------------------------------------------------


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
@pytest.mark.parametrize("step", ["write", "rename"])
def test_failed_save_keeps_the_old_file(models, tmp_path, monkeypatch, step, error):
    _, _, old = models["budget"]
    target = tmp_path / "model.npz"
    target.write_bytes(old)

    def write_then_fail(fh, **entries):
        fh.write(b"PK\x03\x04 half a model")
        raise error("interrupted")

    def fail(*args, **kwargs):
        raise error("interrupted")

    if step == "write":
        monkeypatch.setattr(persistence.np, "savez_compressed", write_then_fail)
    else:
        monkeypatch.setattr(persistence.os, "replace", fail)
    with pytest.raises(error):
        save_model(models["huber"][0], target)
    monkeypatch.undo()
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["model.npz"]        # no temporary file left


_SAVE_BIG_MODEL = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    from fastsvm import HuberSVC
    from fastsvm.persistence import save_model

    warnings.simplefilter("ignore")
    n_features = int(sys.argv[2])
    rng = np.random.default_rng(1)
    clf = HuberSVC(max_iter=5).fit(rng.standard_normal((20, 3)), np.arange(20) % 2)
    clf.coef_ = rng.standard_normal((1, n_features))
    clf.n_features_in_ = n_features
    print("saving", flush=True)
    save_model(clf, sys.argv[1])
    print("saved", flush=True)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_save_killed_midway_leaves_the_old_or_the_new_file(models, tmp_path):
    old_clf, _, old = models["huber"]
    target = tmp_path / "model.npz"
    n_features = 4_000_000      # 32 MB of random coefficients: over a second to compress
    for delay in (0.0, 0.4):
        target.write_bytes(old)
        child = subprocess.Popen([sys.executable, "-c", _SAVE_BIG_MODEL, str(target),
                                  str(n_features)], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "saving"
            deadline = time.monotonic() + 60
            while not any(p.name.startswith(".fastsvm-") and p.stat().st_size > 0
                          for p in tmp_path.iterdir()):
                assert time.monotonic() < deadline, "the save never started writing"
                time.sleep(0.005)
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
        finally:
            child.wait(timeout=60)
            child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        leftovers = list(tmp_path.glob(".fastsvm-*"))
        loaded = load_model(target)         # the old model or the complete new one
        if loaded.n_features_in_ == old_clf.n_features_in_:   # killed while writing
            assert target.read_bytes() == old and leftovers
        else:                                                 # killed after the rename
            assert loaded.coef_.shape == (1, n_features) and not leftovers
        for leftover in leftovers:
            leftover.unlink()


# --------------------------------------------------------------------------
# The command line: one line on standard error
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(MALFORMED) + ["bomb"])
def test_cli_reports_a_malformed_model_on_one_line(models, bomb, tmp_path, capsys, kind):
    data = tmp_path / "data.svm"
    data.write_text("1 1:0.5 2:1\n-1 1:-0.5\n")
    model = tmp_path / f"{kind}.npz"
    model.write_bytes(bomb.read_bytes() if kind == "bomb"
                      else MALFORMED[kind][1](models["budget"][2]))
    out_file = tmp_path / "predictions.txt"
    assert main(["predict", str(data), str(model), str(out_file)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("fastsvm: error: ") and str(model) in err
    assert not out_file.exists()


def test_cli_still_predicts_with_a_valid_model(models, tmp_path, capsys):
    data = tmp_path / "data.svm"
    data.write_text("1 1:0.5 2:1\n-1 1:-0.5\n")
    assert main(["predict", "-q", str(data), str(models["budget"][1])]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


# --------------------------------------------------------------------------
# Random mutations (hypothesis): ModelFormatError or a working estimator
# --------------------------------------------------------------------------

_JSON_SPECIAL = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324, 10**30,
                 -(10**30), 2**63, 2**63 - 1, 0, -1, 1, 2, 0.5, True, False, None, "", "rbf",
                 "poly", "sigmoid", "linear", "precomputed", "laplacian", "balanced", "scale",
                 "BudgetSVC", "NystromSVC", "<U5", "|O", "<f8", "|b1", "|S3", "x" * 300, [], {},
                 [[0, 2.0]], [[[0], 2.0]], [0.1, 1.0]]
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from(_JSON_SPECIAL).map(copy.deepcopy),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=8)
_NAMES = ["meta", "classes_", "n_features_in_", "feature_names_in_", "intercept_", "gamma_",
          "support_vectors_", "support_", "dual_coef_", "n_support_", "n_iter_", "M_", "coef_",
          "components_", "component_indices_", "normalization_", "components_data_",
          "support_vectors_data_"]
_DTYPES = ["<f8", "<f4", "<f2", ">f8", "<i8", ">i4", "|i1", "<u8", "|b1", "<U3", "|S2",
           "<c16", "<M8[s]"]
_NEST = "__nest__"


def _paths(value, prefix=()):
    """The paths (tuples of keys and indices) of every value inside a JSON value."""
    yield prefix
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        yield from _paths(item, prefix + (key,))


def _mutate_meta(members, draw):
    data = dict(members).get("meta.npy")
    try:
        meta = json.loads(str(np.load(io.BytesIO(data))))
    except Exception:   # meta already mangled or gone
        return members
    op = draw(st.sampled_from(["replace", "delete", "add", "nest", "text"]))
    path = draw(st.sampled_from(list(_paths(meta))))
    depth = draw(st.integers(1, 3000))
    if op == "text":
        text = json.dumps(meta)
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "[", "]", "{", "}", ",", '"', "NaN",
                                                  "1e999", "\\ud800"])) + text[cut:]
    else:
        if not path:
            meta = draw(_json_values) if op == "replace" else [meta]
        else:
            parent = meta
            for key in path[:-1]:
                parent = parent[key]
            if op == "replace":
                parent[path[-1]] = draw(_json_values)
            elif op == "delete":
                del parent[path[-1]]
            elif op == "nest":
                parent[path[-1]] = _NEST
            elif isinstance(parent, dict):
                parent[draw(st.text(max_size=8))] = draw(_json_values)
        text = json.dumps(meta, allow_nan=True).replace(
            f'"{_NEST}"', "[" * depth + "0" + "]" * depth)
    return [(n, _npy(np.array(text)) if n == "meta.npy" else d) for n, d in members]


def _mutate_array(members, draw):
    index = draw(st.integers(0, len(members) - 1))
    name, data = members[index]
    try:
        array = np.load(io.BytesIO(data))
    except Exception:
        array = np.zeros(3)
    op = draw(st.sampled_from(["dtype", "shape", "resize", "value", "object", "header"]))
    dtype = draw(st.sampled_from(_DTYPES))
    if op == "dtype":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # NaN or overflow in the cast
                array = array.astype(dtype)
        except (TypeError, ValueError):
            array = np.zeros(array.shape, dtype)
    elif op == "shape":
        shape = tuple(draw(st.lists(st.integers(0, 6), max_size=3)))
        array = np.ones(shape, dtype)
    elif op == "resize" and array.ndim:     # one entry more or less along an axis
        shape = list(array.shape)
        axis = draw(st.integers(0, array.ndim - 1))
        shape[axis] = max(shape[axis] + draw(st.sampled_from([-1, 1])), 0)
        common = tuple(slice(0, min(a, b)) for a, b in zip(array.shape, shape))
        resized = np.zeros(shape, array.dtype)
        resized[common] = array[common]
        array = resized
    elif op == "value" and array.size:
        array = array.copy()
        flat = array.reshape(-1)
        pos = draw(st.integers(0, flat.size - 1))
        if array.dtype.kind == "f":
            flat[pos] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        elif array.dtype.kind in "iu":
            flat[pos] = draw(st.sampled_from([-1, 2**62] if array.dtype.kind == "i" else [2**62]))
    elif op == "object":
        array = np.array([0, "one"], dtype=object)
    if op == "header":
        shape = draw(st.sampled_from([(10**12,), (2**40, 4), (-1,), array.shape + (1,),
                                      array.shape[::-1]]))
        data = _npy_header(shape, array.dtype.str, draw(st.booleans())) + array.tobytes()
    else:
        data = _npy(array)
    renamed = draw(st.sampled_from(_NAMES)) + ".npy" if draw(st.booleans()) else name
    return members[:index] + [(renamed, data)] + members[index + 1:]


def _mutate_members(members, draw):
    op = draw(st.sampled_from(["delete", "duplicate", "swap", "directory", "junk"]))
    index = draw(st.integers(0, len(members) - 1))
    if op == "delete":
        return members[:index] + members[index + 1:]
    if op == "duplicate":
        return members + [members[index]]
    if op == "swap":
        other = draw(st.integers(0, len(members) - 1))
        swapped = list(members)
        swapped[index] = (members[index][0], members[other][1])
        swapped[other] = (members[other][0], members[index][1])
        return swapped
    if op == "directory":
        return members + [(draw(st.sampled_from(_NAMES)) + ".npy/", b"")]
    return members + [(draw(st.sampled_from(["x.npy", "meta", "a/b.npy"])), b"junk")]


def _mutate_bytes(raw, draw):
    op = draw(st.sampled_from(["flip", "truncate", "insert"]))
    pos = draw(st.integers(0, max(len(raw) - 1, 0)))
    if op == "flip":
        data = bytearray(raw)
        for offset in range(draw(st.integers(1, 8))):
            if pos + offset < len(data):
                data[pos + offset] ^= draw(st.integers(1, 255))
        return bytes(data)
    if op == "truncate":
        return raw[:pos]
    return raw[:pos] + draw(st.binary(min_size=1, max_size=16)) + raw[pos:]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("mutants") / "mutant.npz"


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=st.sampled_from(sorted(ESTIMATORS)), data=st.data())
def test_property_mutated_files_load_or_raise_model_format_error(models, scratch, case, data):
    clf, _, raw = models[case]
    members = _members(raw)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        mutate = data.draw(st.sampled_from([_mutate_meta, _mutate_array, _mutate_members]))
        members = mutate(members, data.draw)
    archive = _archive(members, data.draw(st.sampled_from([zipfile.ZIP_DEFLATED,
                                                           zipfile.ZIP_STORED])))
    if data.draw(st.integers(0, 3), label="damage bytes") == 0:
        archive = _mutate_bytes(archive, data.draw)
    scratch.write_bytes(archive)
    try:
        loaded = load_model(scratch)
    except ModelFormatError:
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            decision = loaded.decision_function(X)
        except ValueError as exc:
            # a legal model may overflow on X (poly of degree 10**6, coef0=1e308, huge
            # coefficients): refused, never NaN or inf
            assert "overflow" in str(exc)
            return
    n_classes = len(loaded.classes_)
    assert decision.shape == ((len(X),) if n_classes == 2 else (len(X), n_classes))
    assert np.all(np.isfinite(decision))
