"""Python driver of the one-pass margin SGD: draws, chunks, growing storage, progress.

Compiled code lives in :mod:`fastsvm.margin_sgd._kernels`.
"""

from dataclasses import dataclass

import numpy as np

from .. import _options
from . import _kernels as K

UPDATES = {"squared-hinge": K.SQUARED_HINGE, "constant": K.CONSTANT}


def draw_order(n, sampling, rng):
    """The pass's order: n draws with replacement (the paper's sampling with full
    replacement; about 63 % of the points are drawn) or one random permutation."""
    if sampling == "replacement":
        return rng.integers(0, n, size=n, dtype=np.int64)
    return rng.permutation(n).astype(np.int64)


@dataclass
class MarginSGDResult:
    """f(x) = sum_s dual[s] k(x_support[s], x) for one binary problem."""

    support: np.ndarray         # training indices of the support vectors, in the order added
    dual: np.ndarray            # y_s alpha_s
    n_visited: int              # points whose coefficient was decided (first draws)


def run_pass(packed, y, gamma, M, update, order, progress=None):
    """One pass over ``order`` (validated int64 row indices), in compiled chunks.

    The support-vector storage (n_features x capacity) grows by doubling, so
    memory follows the number of support vectors, not n.
    """
    n, d = packed.n_samples, packed.n_features
    step = _options.CHUNK_STEPS
    capacity = min(n, step)
    svt, sv_sq = np.zeros((d, capacity)), np.zeros(capacity)
    coef, sv_index = np.zeros(capacity), np.zeros(capacity, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    n_sv = 0
    for start in range(0, len(order), step):
        chunk = order[start:start + step]
        if n_sv + len(chunk) > capacity:
            capacity = min(n, max(2 * capacity, n_sv + len(chunk)))
            svt = np.concatenate([svt, np.zeros((d, capacity - svt.shape[1]))], axis=1)
            sv_sq, coef, sv_index = (np.resize(a, capacity) for a in (sv_sq, coef, sv_index))
        n_sv = K.one_pass(*packed.arrays, packed.sq_norms, y, chunk, gamma, M, UPDATES[update],
                          visited, svt, sv_sq, coef, sv_index, n_sv)
        if progress is not None:
            progress.update(len(chunk))
    return MarginSGDResult(sv_index[:n_sv].copy(), coef[:n_sv].copy(), int(visited.sum()))
