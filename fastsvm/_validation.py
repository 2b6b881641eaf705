"""Input checks shared by the estimators, beyond scikit-learn's ``validate_data``.

scikit-learn's validation and scipy's constructors trust a sparse matrix's
index arrays: converting a malformed matrix (a negative or out-of-range
index, an ``indptr`` that decreases or disagrees with ``nnz``) to CSR or to
another dtype runs scipy's C++ routines over it, which read and write out
of bounds (heap corruption, SIGSEGV), and compiled kernels would do the same.
:func:`check_sparse_structure` therefore looks at the raw arrays with NumPy
alone, before anything else touches them; :func:`canonical_csr` then sums
duplicates and sorts indices (on a copy), so that every compiled kernel may
assume a canonical CSR matrix.
"""

import numpy as np
import scipy.sparse as sp

#: scipy formats whose index arrays are checked directly; the others (lil, dok,
#: dia) are built from Python objects or offsets and converted to COO first.
_COMPRESSED = ("csr", "csc", "bsr")


def check_sparse_structure(X):
    """Raise ValueError naming the defect if sparse ``X``'s index arrays are malformed.

    Checks, with NumPy only: the shape; for CSR/CSC/BSR that ``indptr`` has
    one entry per major row plus one, starts at 0, never decreases and ends at
    ``nnz``, that ``indices`` and ``data`` hold ``nnz`` entries and every index
    lies in [0, n_minor); for COO that the coordinate arrays match ``data``
    and lie in the shape.  Unsorted or duplicate indices are valid.  Dense
    input passes unchanged.  Returns X, or for lil/dok/dia formats its COO form.
    """
    if not sp.issparse(X):
        return X
    shape = _checked_shape(X)
    fmt = X.format
    if fmt in _COMPRESSED:
        if fmt == "bsr":
            R, C = X.blocksize
            if R < 1 or C < 1 or shape[0] % R or shape[1] % C:
                raise ValueError(f"malformed BSR matrix: blocksize {X.blocksize} does not divide "
                                 f"the shape {shape}")
            n_major, n_minor = shape[0] // R, shape[1] // C
            if X.data.ndim != 3 or X.data.shape[1:] != (R, C):
                raise ValueError(f"malformed BSR matrix: data of shape {X.data.shape}, expected "
                                 f"(nnz_blocks, {R}, {C})")
        else:
            n_major, n_minor = shape if fmt == "csr" else shape[::-1]
        _check_compressed(fmt.upper(), X.indptr, X.indices, len(X.data), n_major, n_minor)
        return X
    if fmt != "coo":
        try:
            X = X.tocoo()
        except (ValueError, IndexError, TypeError) as err:
            raise ValueError(f"malformed sparse matrix ({fmt}): {err}") from err
    coords = X.coords if hasattr(X, "coords") else (X.row, X.col)
    for axis, (index, size) in enumerate(zip(coords, shape)):
        _check_indices("COO", ("row", "col")[axis], index, len(X.data), size)
    return X


def _checked_shape(X):
    shape = getattr(X, "shape", None)
    if (not isinstance(shape, tuple) or len(shape) != 2
            or not all(isinstance(s, (int, np.integer)) and s >= 0 for s in shape)):
        raise ValueError(f"malformed sparse matrix: shape {shape!r} is not two counts >= 0")
    return int(shape[0]), int(shape[1])


def _check_compressed(name, indptr, indices, n_data, n_major, n_minor):
    """indptr/indices of a compressed (CSR, CSC, BSR) matrix against its shape and nnz."""
    indptr = np.asarray(indptr)
    if indptr.ndim != 1 or indptr.dtype.kind not in "iu":
        raise ValueError(f"malformed {name} matrix: indptr must be a 1-d integer array, got "
                         f"dtype {indptr.dtype} and shape {indptr.shape}")
    if len(indptr) != n_major + 1:
        raise ValueError(f"malformed {name} matrix: indptr has {len(indptr)} entries, the shape "
                         f"needs {n_major + 1}")
    if indptr[0] != 0:
        raise ValueError(f"malformed {name} matrix: indptr[0] is {indptr[0]}, not 0")
    steps = np.diff(indptr)
    if np.any(steps < 0):
        row = int(np.flatnonzero(steps < 0)[0])
        raise ValueError(f"malformed {name} matrix: indptr decreases at entry {row + 1} "
                         f"({indptr[row]} then {indptr[row + 1]})")
    _check_indices(name, "indices", indices, n_data, n_minor)
    if indptr[-1] != len(indices):
        raise ValueError(f"malformed {name} matrix: indptr ends at {indptr[-1]} but there are "
                         f"{len(indices)} stored entries (nnz)")


def _check_indices(name, what, index, n_data, size):
    """One index array: 1-d integers, as many as data entries, each in [0, size)."""
    index = np.asarray(index)
    if index.ndim != 1 or index.dtype.kind not in "iu":
        raise ValueError(f"malformed {name} matrix: {what} must be a 1-d integer array, got "
                         f"dtype {index.dtype} and shape {index.shape}")
    if len(index) != n_data:
        raise ValueError(f"malformed {name} matrix: {len(index)} {what} for {n_data} stored "
                         "values")
    if len(index) and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)][0]
        raise ValueError(f"malformed {name} matrix: {what} holds {bad}, outside [0, {size})")


def native_byteorder(X):
    """X (dense or sparse) with its values in native byte order, as compiled code needs
    (scikit-learn's validation keeps a big-endian DataFrame column's byte order)."""
    values = X.data if sp.issparse(X) else X
    if not isinstance(values, np.ndarray) or values.dtype.isnative:
        return X
    native = values.astype(values.dtype.newbyteorder("="))
    if sp.issparse(X):
        X = X.copy()
        X.data = native
        return X
    return native


def canonical_csr(X):
    """X unchanged if dense or a canonical CSR matrix (sorted, no duplicates, no stored
    zeros), else a canonical copy (duplicates summed, as scipy does, and zeros dropped).

    Canonical form is computed from the arrays, not from scipy's cached flag,
    which a caller who edits ``indices`` in place leaves stale.  Stored zeros
    go because rows equal in value must look equal: MarginSGDSVC joins equal
    rows by their stored entries, and a row with a stored zero had been another
    row, and another model, than the same row without it.  X must have passed
    :func:`check_sparse_structure`.
    """
    if not sp.issparse(X):
        return X
    indices, indptr = X.indices, X.indptr
    increasing = np.diff(indices) > 0
    increasing[indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < len(indices))] - 1] = True
    if increasing.all() and X.data.all():
        return X
    X = X.copy()
    X.has_sorted_indices = False        # the cached flags may be stale
    X.has_canonical_format = False
    X.sum_duplicates()
    X.eliminate_zeros()                 # also the zeros that summed duplicates leave
    return X
