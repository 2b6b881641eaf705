"""Python driver of the one-pass margin SGD: draws, blocked margin evaluation, growing storage.

The compiled parts live in :mod:`fastsvm.margin_sgd._kernels`.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import _options
from .._blas import serial_numpy_blas
from ..multiclass import TargetRows, ovo_partners
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
    return K.accuracy_offset(np.ascontiguousarray(f, dtype=np.float64),
                             np.ascontiguousarray(y, dtype=np.float64),
                             np.ascontiguousarray(weight, dtype=np.float64),
                             _options.MARGIN_SGD_OFFSET_MIN_GAIN)


@dataclass
class MarginSGDResult:
    """f_o(x) = sum_s dual[o, s] k(sv_s, x) for the binary problems o of one pass;
    sv_s = svt[:, s].  A support vector of one problem has coefficient 0 in the others.

    For one-vs-one pairs (``pairs`` set) ``dual`` holds each vector's coefficients in
    the k - 1 pairs of its class only: dual[t, s] in pair partners[c_s, t] (see
    :func:`fastsvm.multiclass.ovo_partners`); :meth:`model_dual` spreads them over all
    pairs."""

    support: np.ndarray         # training indices of the support vectors, in the order added
    svt: np.ndarray             # their rows as columns (n_features x n_SV; no rows for a
                                # kernel matrix or sparse rows), float64
    sv_sq: np.ndarray           # their squared norms
    dual: np.ndarray            # y_s alpha_s of each problem (n_models x n_SV; one-vs-one:
                                # of each pair of the vector's class, k - 1 x n_SV)
    visits: np.ndarray          # the decided points (first draws), in visiting order
    pairs: tuple = None         # one-vs-one: (class of each vector, partners)

    @property
    def n_visited(self):
        return len(self.visits)

    def model_dual(self):
        """y_s alpha_s of each binary problem, (n_models x n_SV)."""
        if self.pairs is None:
            return self.dual
        sv_class, partners = self.pairs
        n_pairs = partners.size // 2
        dual = np.zeros((n_pairs, len(sv_class)))
        np.put_along_axis(dual, partners[sv_class].T, self.dual, axis=0)
        return dual

    @property
    def n_support(self):
        """Model size (support vectors) of each binary problem."""
        if self.pairs is None:
            return np.count_nonzero(self.dual, axis=1)
        sv_class, partners = self.pairs         # counted in place, not spread over all pairs
        return np.bincount(partners[sv_class].T[self.dual != 0], minlength=partners.size // 2)


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


def _f(X, rows, block, X_sq, svt, sv_sq, support, dual, kernel, pairs=None):
    """f_o(x_r) = sum_j dual[o, j] k(sv_j, x_r) for r in ``rows`` (one-vs-one ``pairs``:
    see :class:`MarginSGDResult`).

    ``block`` is X[rows] as :func:`_block` gives it.  Dense rows are
    multiplied by BLAS against the support vectors stored as the columns of
    ``svt``; CSR rows by a sparse product against the training rows
    ``support`` (``svt`` then has no rows: high-dimensional sparse support
    vectors are never stored densely).  For a kernel matrix X the values are
    looked up at the support vectors' rows ``support``.
    """
    if kernel.on_gram and pairs is None:
        return X[np.ix_(rows, support)] @ dual.T
    out = np.empty((len(rows), dual.shape[0] if pairs is None else pairs[1].size // 2))
    if pairs is not None:       # the vectors by class (see _kernels._pair_row)
        sv_class, partners = pairs
        order = np.argsort(sv_class, kind="stable")
        starts = np.searchsorted(sv_class[order], np.arange(len(partners) + 1))
        pairs = (order, starts, np.ascontiguousarray(dual[:, order]), partners)
    if kernel.on_gram:
        K.pair_expansion(np.ascontiguousarray(X[np.ix_(rows, support)]), *pairs, out)
        return out
    if sp.issparse(block):
        dots = (block @ _block(X, support, False).T).toarray()
    else:
        dots = block @ svt
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    if pairs is None:
        K.expansion_from_dots(dots, X_sq[rows], sv_sq, dual, kernel.code, gamma,
                              kernel.degree, kernel.coef0, out)
    else:
        K.pair_expansion_from_dots(dots, X_sq[rows], sv_sq, *pairs, kernel.code, gamma,
                                   kernel.degree, kernel.coef0, out)
    return out


def expansion(X, X_sq, rows, svt, sv_sq, support, dual, kernel, pairs=None):
    """Kernel expansions f_o(x_r) = sum_j dual[o, j] k(sv_j, x_r) at the rows ``rows`` of X,
    shape (len(rows), n_models); the support vectors sv_j are the training rows ``support``
    (and the columns of ``svt`` where X's rows are dense); for one-vs-one ``pairs`` see
    :class:`MarginSGDResult`."""
    dense, step = _dense_rows(X), _options.MARGIN_SGD_BLOCK
    parts = [rows[start:start + step] for start in range(0, len(rows), step)]
    n_models = dual.shape[0] if pairs is None else pairs[1].size // 2
    products = step * X.shape[1] * len(support) if dense and not kernel.on_gram else 0
    with serial_numpy_blas(products):
        return np.concatenate([np.empty((0, n_models))] + [
            _f(X, part, None if kernel.on_gram else _block(X, part, dense), X_sq, svt, sv_sq,
               support, dual, kernel, pairs) for part in parts])


def run_pass(X, X_sq, Y, weight, kernel, M, C, update, order, progress=None, copies=None):
    """One pass of margin SGD over the first draws in ``order`` (int64 row indices), for
    the binary problems with targets ``Y`` at once: an (n_models, n_samples) array of
    +-1, or a :class:`~fastsvm.multiclass.TargetRows`.

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

    The problems (one-vs-rest, or one-vs-one below) share the draws and so
    the support vectors' storage and kernel values: a point that is a support
    vector of several problems is stored once, with a coefficient in each,
    and each block's kernel values are computed once for all problems.  Each
    problem's coefficients are those of its own pass.  On usps (10 classes)
    the one-vs-rest problems' 5,261 support vectors are 1,425 distinct points.

    **One-vs-one pairs** (``Y`` a :class:`~fastsvm.multiclass.TargetRows` of
    pairs): a row has target 0 in the pairs without its class, and so
    coefficient 0 there (:func:`~fastsvm.margin_sgd._kernels.decide_block`
    skips it); each support vector keeps its coefficients in the k - 1 pairs
    of its class only (see :class:`MarginSGDResult`), so that a visit costs
    k - 1 products per support vector, not one per pair (about what the k
    one-vs-rest problems cost), and only copies of one class are joined.

    Copies of a row are one support vector: with ``copies`` (from
    :func:`first_copies`; None for distinct rows, or a kernel matrix, whose
    rows say nothing of the points' equality) a point equal to a stored
    support vector adds its y alpha to that vector's coefficient, and copies
    that become support vectors in one block are stored once, with the sum.
    f is the same sum of kernel values, so every decision is that of storing
    them apart, while the model and the work per later visit stay those of
    the distinct rows (on a9a, 30,000 rows, 7,421 support vectors are 6,193
    distinct rows).  A joined coefficient can exceed C: it is the sum of the
    copies' capped ones.  Vectors whose coefficients cancel (copies with
    opposite labels) are dropped at the end.
    """
    visits = first_draws(order)
    dense = _dense_rows(X) and not kernel.on_gram
    d = X.shape[1] if dense else 0
    rule = UPDATES[update]
    gamma = 0.0 if kernel.gamma is None else kernel.gamma
    ovo = isinstance(Y, TargetRows) and Y.ovo
    partners = ovo_partners(Y.n_classes) if ovo else None
    if ovo and copies is not None:
        copies = _class_copies(copies, Y.y, Y.n_classes)
    width = partners.shape[1] if ovo else len(Y)    # coefficients kept per vector
    capacity = min(len(visits), _options.MARGIN_SGD_BLOCK)
    svt, sv_sq = np.empty((d, capacity)), np.empty(capacity)
    dual, support = np.empty((width, capacity)), np.empty(capacity, dtype=np.int64)
    n_sv = 0
    slot = None if copies is None else np.full(X.shape[0], -1, dtype=np.int64)
    # the largest product: a block's rows against at most every visit
    with serial_numpy_blas(_options.MARGIN_SGD_BLOCK * d * len(visits)):
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
                          np.ascontiguousarray(dual[:, :n_sv]), kernel,
                          (Y.y[support[:n_sv]], partners) if ovo else None)
            targets = np.ascontiguousarray(Y[:, rows])
            alpha = np.empty(targets.shape)
            K.decide_block(f_before, K_block, targets, weight[rows], M, C, rule, alpha)
            new = np.flatnonzero(np.any(alpha > 0, axis=0))
            coef = targets[:, new] * alpha[:, new]
            if ovo:         # each vector's coefficients in the pairs of its class
                coef = np.take_along_axis(coef, partners[Y.y[rows[new]]].T, axis=0)
            if copies is not None:
                new, coef = _join_copies(copies[rows[new]], new, coef, slot, dual, n_sv)
            if n_sv + len(new) > capacity:
                capacity = max(2 * capacity, n_sv + len(new))
                svt = np.concatenate([svt[:, :n_sv], np.empty((d, capacity - n_sv))], axis=1)
                dual = np.concatenate([dual[:, :n_sv], np.empty((width, capacity - n_sv))],
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
                           np.ascontiguousarray(dual[:, used]), visits,
                           (Y.y[support[used]], partners) if ovo else None)


def _class_copies(copies, y, n_classes):
    """first[i]: the first row equal to row i (``copies`` from :func:`first_copies`) of
    its class (``y``, class indices): copies of one-vs-one support vectors are joined
    within a class only, where their coefficients share the pairs."""
    _, first, group = np.unique(copies * n_classes + y, return_index=True,
                                return_inverse=True)
    return first[group.ravel()]


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
