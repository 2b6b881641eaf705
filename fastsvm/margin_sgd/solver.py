"""Python driver of the one-pass margin SGD: draws, blocked margin evaluation, growing storage.

The compiled parts live in :mod:`fastsvm.margin_sgd._kernels`.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import _options
from . import _kernels as K

UPDATES = {"squared-hinge": K.SQUARED_HINGE, "constant": K.CONSTANT}


def draw_order(rows, sampling, rng):
    """The pass's draws from ``rows`` (int64 indices): len(rows) with replacement
    (the paper's sampling with full replacement; about 63 % of the rows are
    drawn) or a random permutation."""
    if sampling == "replacement":
        return rows[rng.integers(0, len(rows), size=len(rows))]
    return rows[rng.permutation(len(rows))]


def first_draws(order):
    """The distinct points of ``order`` in the order of their first draw: the
    visits that set a coefficient (a later draw of a decided point does nothing)."""
    _, first = np.unique(order, return_index=True)
    return order[np.sort(first)]


def out_of_bag(rows, order, copies=None):
    """The rows of ``rows`` that validate a pass with replacement: never drawn in
    ``order``, nor any copy of them (``copies`` from :func:`first_copies`; None: no
    copies known), as a copy of a visited row validates nothing."""
    val = np.setdiff1d(rows, order)
    if copies is not None:
        val = val[~np.isin(copies[val], copies[order])]
    return val


def expected_out_of_bag(copies, n):
    """Rows that a pass of n draws with replacement from n rows leaves out of bag, in
    expectation: sum over the groups of copies (``copies`` from :func:`first_copies`; None:
    every row its own) of g (1 - g / n)^n, g the group's size, since a copy of a drawn row
    validates nothing (:func:`out_of_bag`).  n (1 - 1/n)^n, about n / e, for distinct
    rows; none to speak of for 300 rows of 16 distinct ones."""
    sizes = np.ones(n) if copies is None else np.bincount(copies, minlength=n)
    sizes = sizes[sizes > 0]
    return float(np.sum(sizes * (1.0 - sizes / n) ** n))


def accuracy_offset(f, y, weight=None):
    """Offset b that maximises the weighted accuracy of sign(f + b) on validation values f,
    labels y (+-1) and sample weights ``weight`` (default 1).

    Predicting +1 for the j largest f is optimal for some j (ties in f stay
    together); b puts the threshold midway between the j-th and (j+1)-th
    largest value.  Among the most accurate thresholds the one nearest 0 is
    taken (the smallest correction).

    The offset is kept only where it clearly pays: of the c predictions it
    changes, the weight of the correct ones must exceed that of the wrong
    ones by more than 2 sqrt(sum of their squared weights) (a one-sided sign
    test against b = 0: 2 sqrt(c) without weights) and by at least
    ``_options.MARGIN_SGD_OFFSET_MIN_GAIN`` of the total weight.  Otherwise,
    and when y lacks either class, b = 0.  An offset moves every point where
    f is about 0, those far from all support vectors with a narrow kernel,
    and validation rows need not show them: ijcnn1's test set has 5,800
    points with -0.032 < f <= 0 where its training set has 64, and an offset
    of 0.032 that validation favoured cost 6 points of test accuracy.
    """
    if np.all(y > 0) or np.all(y < 0):
        return 0.0
    weight = np.ones(len(y)) if weight is None else weight
    order = np.argsort(-f, kind="stable")
    fs, ys, ws = f[order], y[order], weight[order]
    # error weight when the j largest are predicted +1: negatives among them + positives after
    neg_above = np.concatenate([[0.0], np.cumsum(np.where(ys < 0, ws, 0.0))])
    pos_above = np.concatenate([[0.0], np.cumsum(np.where(ys > 0, ws, 0.0))])
    errors = neg_above + (pos_above[-1] - pos_above)
    cuts = np.concatenate([[fs[0] + 1.0], 0.5 * (fs[:-1] + fs[1:]), [fs[-1] - 1.0]])
    valid = np.concatenate([[True], fs[:-1] > fs[1:], [True]])     # never split equal values
    best = errors[valid].min()
    candidates = np.flatnonzero(valid & (errors <= best + 1e-12 * ws.sum()))
    b = float(-cuts[candidates[np.argmin(np.abs(cuts[candidates]))]])
    changed = (f + b > 0) != (f > 0)
    right = np.where(f[changed] + b > 0, 1.0, -1.0) == y[changed]
    net = float(np.sum(np.where(right, weight[changed], -weight[changed])))
    needed = max(2.0 * np.sqrt(np.sum(weight[changed] ** 2)),
                 _options.MARGIN_SGD_OFFSET_MIN_GAIN * float(weight.sum()))
    return b if net > needed else 0.0


@dataclass
class MarginSGDResult:
    """f_o(x) = sum_s dual[o, s] k(sv_s, x) for the binary problems o of one pass;
    sv_s = svt[:, s].  A support vector of one problem has coefficient 0 in the others."""

    support: np.ndarray         # training indices of the support vectors, in the order added
    svt: np.ndarray             # their rows as columns (n_features x n_SV; no rows for a
                                # kernel matrix or sparse rows), float64
    sv_sq: np.ndarray           # their squared norms
    dual: np.ndarray            # y_s alpha_s of each problem (n_models x n_SV)
    visits: np.ndarray          # the decided points (first draws), in visiting order

    @property
    def n_visited(self):
        return len(self.visits)

    @property
    def n_support(self):
        """Model size (support vectors) of each binary problem."""
        return np.count_nonzero(self.dual, axis=1)


def _dense_rows(X):
    """Whether blocks of X are multiplied as dense arrays (BLAS) rather than as CSR rows
    (scipy's sparse products, whose cost and memory are linear in the stored entries)."""
    return not sp.issparse(X) or X.nnz >= _options.MARGIN_SGD_DENSE_FROM * np.prod(X.shape)


def first_copies(X):
    """first[i]: the first row of X (a float array or canonical CSR matrix) equal to row i,
    i itself where no earlier row is.  A pass joins a support vector's copies into one
    (see :func:`run_pass`)."""
    n = X.shape[0]
    first = np.arange(n, dtype=np.int64)
    if n > 1:
        X = X if sp.issparse(X) else sp.csr_matrix(X)     # canonical: zeros not stored
        K.csr_first_copies(X.indptr, X.indices, X.data, first)
    return first


def pass_rows(X):
    """X as the passes read it: CSR rows that :func:`_dense_rows` multiplies as dense blocks
    are made dense once (float64), when that takes at most
    ``_options.MARGIN_SGD_DENSE_COPY_BYTES``, rather than block by block in every pass."""
    if (sp.issparse(X) and _dense_rows(X)
            and 8 * X.shape[0] * X.shape[1] <= _options.MARGIN_SGD_DENSE_COPY_BYTES):
        return X.toarray()
    return X


def _block(X, rows, dense):
    """The rows ``rows`` of X: a dense float64 array if ``dense``, else float64 CSR rows."""
    block = X[rows]
    if not dense:
        return block.astype(np.float64, copy=False)
    return block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)


def _f(X, rows, block, X_sq, svt, sv_sq, support, dual, kernel):
    """f_o(x_r) = sum_j dual[o, j] k(sv_j, x_r) for r in ``rows``.

    ``block`` is X[rows] as :func:`_block` gives it.  Dense rows are
    multiplied by BLAS against the support vectors stored as the columns of
    ``svt``; CSR rows by a sparse product against the training rows
    ``support`` (``svt`` then has no rows: high-dimensional sparse support
    vectors are never stored densely).  For a kernel matrix X the values are
    looked up at the support vectors' rows ``support``.
    """
    if kernel.on_gram:
        return X[np.ix_(rows, support)] @ dual.T
    if sp.issparse(block):
        dots = (block @ _block(X, support, False).T).toarray()
    else:
        dots = block @ svt
    out = np.empty((len(rows), dual.shape[0]))
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    K.expansion_from_dots(dots, X_sq[rows], sv_sq, dual, kernel.code, gamma, kernel.degree,
                          kernel.coef0, out)
    return out


def expansion(X, X_sq, rows, svt, sv_sq, support, dual, kernel):
    """Kernel expansions f_o(x_r) = sum_j dual[o, j] k(sv_j, x_r) at the rows ``rows`` of X,
    shape (len(rows), n_models); the support vectors sv_j are the training rows ``support``
    (and the columns of ``svt`` where X's rows are dense)."""
    dense, step = _dense_rows(X), _options.MARGIN_SGD_BLOCK
    parts = [rows[start:start + step] for start in range(0, len(rows), step)]
    return np.concatenate([np.empty((0, dual.shape[0]))] + [
        _f(X, part, None if kernel.on_gram else _block(X, part, dense), X_sq, svt, sv_sq,
           support, dual, kernel) for part in parts])


def run_pass(X, X_sq, Y, weight, kernel, M, C, update, order, progress=None, copies=None):
    """One pass of margin SGD over the first draws in ``order`` (int64 row indices), for
    the binary problems with targets ``Y`` (n_models x n_samples, +-1) at once.

    ``X`` is a float C-ordered array or a canonical CSR matrix, ``X_sq`` its
    squared row norms, ``weight`` the points' weights c_i, ``C`` the cap on
    the coefficients (inf: none; see :mod:`fastsvm.margin_sgd._kernels`)
    and ``kernel`` a :class:`fastsvm.kernels.Kernel`; for a kernel matrix
    ('precomputed', callable) X is that n x n matrix and values are looked up.  Visits are
    processed in blocks of ``_options.MARGIN_SGD_BLOCK``: f at the block's
    points from the support vectors found before it is one kernel-matrix
    product; the contributions of support vectors added inside the block
    follow sequentially in compiled code.  The result is that of visiting
    point by point.  Dense rows are multiplied by BLAS and the support vectors
    stored as dense columns; CSR rows sparser than
    ``_options.MARGIN_SGD_DENSE_FROM`` are multiplied by scipy's sparse
    products and the support vectors kept as training-row indices, so time
    and memory stay linear in the stored entries.  The support-vector storage
    grows by doubling, so memory follows the model size, not n.

    The problems (one-vs-rest) share the draws and so the support vectors'
    storage and kernel values: a point that is a support vector of several
    problems is stored once, with a coefficient in each, and each block's
    kernel values are computed once for all problems.  Each problem's
    coefficients are those of its own pass.  On usps (10 classes) the
    problems' 5,261 support vectors are 1,425 distinct points.

    Copies of a row are one support vector: with ``copies`` (from
    :func:`first_copies`; None for a kernel matrix, whose rows say nothing
    of the points' equality) a point equal to a stored support vector adds
    its y alpha to that vector's coefficient, and copies that become support
    vectors in one block are stored once, with the sum.  f is the same sum
    of kernel values, so every decision is that of storing them apart, while
    the model and the work per later visit stay those of the distinct rows
    (on a9a, 30,000 rows, 7,421 support vectors are 6,193 distinct rows).  A
    joined coefficient can exceed C: it is the sum of the copies' capped
    ones.  Vectors whose coefficients cancel (copies with opposite labels)
    are dropped at the end.
    """
    visits = first_draws(order)
    dense = _dense_rows(X) and not kernel.on_gram
    d = X.shape[1] if dense else 0
    rule = UPDATES[update]
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    capacity = min(len(visits), _options.MARGIN_SGD_BLOCK)
    svt, sv_sq = np.empty((d, capacity)), np.empty(capacity)
    dual, support = np.empty((len(Y), capacity)), np.empty(capacity, dtype=np.int64)
    n_sv = 0
    slot = None if copies is None else np.full(X.shape[0], -1, dtype=np.int64)
    for start in range(0, len(visits), _options.MARGIN_SGD_BLOCK):
        rows = visits[start:start + _options.MARGIN_SGD_BLOCK]
        if kernel.on_gram:
            block = None
            K_block = X[np.ix_(rows, rows)]
        else:
            block = _block(X, rows, dense)
            dots = block @ block.T
            dots = np.ascontiguousarray(dots.toarray() if sp.issparse(dots) else dots)
            K_block = np.empty_like(dots)
            K.block_kernel_from_dots(dots, X_sq[rows], kernel.code, gamma, kernel.degree,
                                     kernel.coef0, K_block)
        f_before = _f(X, rows, block, X_sq, svt[:, :n_sv], sv_sq[:n_sv], support[:n_sv],
                      np.ascontiguousarray(dual[:, :n_sv]), kernel)
        alpha = np.empty((len(Y), len(rows)))
        for o, y in enumerate(Y):
            K.decide_block(np.ascontiguousarray(f_before[:, o]), K_block, y[rows],
                           weight[rows], M, C, rule, alpha[o])
        new = np.flatnonzero(np.any(alpha > 0, axis=0))
        coef = Y[:, rows[new]] * alpha[:, new]
        if copies is not None:
            new, coef = _join_copies(copies[rows[new]], new, coef, slot, dual, n_sv)
        if n_sv + len(new) > capacity:
            capacity = max(2 * capacity, n_sv + len(new))
            svt = np.concatenate([svt[:, :n_sv], np.empty((d, capacity - n_sv))], axis=1)
            dual = np.concatenate([dual[:, :n_sv], np.empty((len(Y), capacity - n_sv))],
                                  axis=1)
            sv_sq, support = (np.resize(a, capacity) for a in (sv_sq, support))
        end = n_sv + len(new)
        if dense:
            svt[:, n_sv:end] = block[new].T
        sv_sq[n_sv:end] = X_sq[rows[new]]
        dual[:, n_sv:end] = coef
        support[n_sv:end] = rows[new]
        n_sv = end
        if progress is not None:
            progress.update(len(rows))
    if progress is not None:
        progress.update(len(order) - len(visits))       # the repeated draws
    used = np.flatnonzero(np.any(dual[:, :n_sv] != 0, axis=0))
    return MarginSGDResult(support[used], np.ascontiguousarray(svt[:, used]), sv_sq[used],
                           np.ascontiguousarray(dual[:, used]), visits)


def _join_copies(key, new, coef, slot, dual, n_sv):
    """Join a block's new support vectors (block positions ``new``, coefficients ``coef``,
    n_models x len(new)) with their copies: ``key`` is each one's first copy in X and
    ``slot[key]`` the stored vector of that row (-1: none; updated).  Coefficients of
    stored rows are added into ``dual``; copies among the new ones are summed.

    Returns the positions and summed coefficients of the rows to store, in the
    order of their first visit, the first at slot ``n_sv``.
    """
    rows, first, which = np.unique(key, return_index=True, return_inverse=True)
    summed = np.zeros((len(coef), len(rows)))
    np.add.at(summed.T, which, coef.T)
    stored = slot[rows]
    old = stored >= 0
    dual[:, stored[old]] += summed[:, old]
    fresh = np.flatnonzero(~old)
    fresh = fresh[np.argsort(first[fresh])]
    slot[rows[fresh]] = n_sv + np.arange(len(fresh))
    return new[first[fresh]], summed[:, fresh]
