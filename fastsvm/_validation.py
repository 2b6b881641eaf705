"""Input checks shared by the estimators, beyond scikit-learn's ``validate_data``."""

import scipy.sparse as sp


def check_csr_format(X):
    """X unchanged if dense or a well-formed CSR matrix with canonical format, else a fixed copy.

    scikit-learn's validation does not look at CSR column indices, and
    neither scipy's constructors nor compiled code check them: an index out of
    range would read or write outside the arrays.  Raises ValueError for a
    malformed matrix; sums duplicate entries on a copy.
    """
    if not sp.issparse(X):
        return X
    try:
        X.check_format(full_check=True)
    except ValueError as err:
        raise ValueError(f"malformed CSR matrix: {err}") from err
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X
