"""NystromSVC: the scikit-learn estimator for Snacks (Nystrom embedding + ASSG)."""

import math
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import TransformerTags
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted

from .. import _options
from .._blas import one_blas_pool
from ..base import (COMMON_CONSTRAINTS, KERNEL_CONSTRAINTS, BaseSVC, check_finite_output,
                    objectives_text, progress_bar, random_seeds, regularization, step_weights)
from ..kernels import KERNELS
from ..multiclass import (MULTI_CLASS, Problems, n_binary_models, ovo_problems,
                          resolve_multi_class)
from .embedding import (NystromMap, _dense_if_small, cholesky_factor, inverse_factor,
                        sample_landmarks, times_inverse_factor)
from .solver import embedded_sq_norms, solve_assg, solve_dcd, solve_pegasos
from .store import EmbeddingStore, auto_memory_budget


#: ``n_components='auto'`` starts at min(AUTO_COMPONENTS, n_samples) landmarks and doubles
#: them while the embedding misses more than AUTO_RESIDUAL of the kernel's trace on
#: RESIDUAL_SAMPLE training rows, up to n_samples when there are at most AUTO_EXACT_ROWS =
#: 2 AUTO_MAX_COMPONENTS, and above that up to the m whose n m^2 flops cost what the exact
#: kernel costs on AUTO_EXACT_ROWS rows, but at least AUTO_MAX_COMPONENTS (see
#: :func:`auto_components`).
#: In ``benchmarks/defaults_vs_svc.py``: usps (residual 20 % at 1000) gets 2000 landmarks,
#: 93.57 % -> 94.12 % test accuracy (SVC 94.72 %), fit 1.5 s -> 3.6 s (SVC 3.0 s; 2.4 s
#: since its CSR rows, every pixel stored, are embedded as dense blocks); a sparse
#: set of 6,000 rows and 5,000 features (66 %) gets 4000, 60.95 % -> 68.85 % (SVC 71.25 %),
#: 0.6 s -> 5.3 s (SVC 6.7 s); ijcnn1 (1 %), covtype (0.6 %), a9a (14 %) keep 1000.
#: That sparse set still misses 24 % at 4000; all 6,000 rows as landmarks (the exact
#: kernel) give SVC's 71.25 % in 8.3 s (SVC 6.8 s; the embedding is then L itself).
AUTO_COMPONENTS = 1000
AUTO_MAX_COMPONENTS = 4000
AUTO_EXACT_ROWS = 2 * AUTO_MAX_COMPONENTS
AUTO_RESIDUAL = 0.15
RESIDUAL_SAMPLE = 1000
#: ``fit`` warns when the embedding misses more than this share of the kernel's trace on the
#: training rows (``training_info_['kernel_residual']``).  With 1000 landmarks: ijcnn1 1 %,
#: covtype 0.6 %, a9a 14 %, usps 20 % (1.2 points below SVC's accuracy), and 66 % on the
#: sparse set above (``benchmarks/_generated.py``, 10 points below SVC).
RESIDUAL_WARN = 0.5
#: Default stage length T is max(n_samples, MIN_STAGE_STEPS) (for a one-vs-one pair of
#: n_pair rows, the same passes over its rows: max(n_pair, MIN_STAGE_STEPS n_pair / n_samples)).
MIN_STAGE_STEPS = 50_000
#: ``max_stages='auto'``: stages of ASSG and Pegasos; for dual coordinate descent the work of
#: that many full passes (LIBLINEAR's default ``max_iter`` of 1000 passes, a shrunk pass
#: counting as its share of a full one).
AUTO_MAX_STAGES = {"assg": 20, "pegasos": 20, "dcd": 1000}


def choose_landmarks(n, m, grow_to, draw, factor, residual, rng):
    """The landmarks of a fit: (indices, kept, L, landmarks drawn).

    ``draw(m)`` draws m landmark indices (from the fit's random generator
    ``rng``), ``factor(indices)`` returns :func:`~fastsvm.nystrom.embedding.cholesky_factor`
    of their kernel matrix (kept, L), and ``residual(sample, kept_indices, L)`` the share
    of the kernel's trace on the training rows ``sample`` that the map misses (None for
    a kernel without a positive trace).  With ``grow_to`` > m (``n_components='auto'``),
    ``RESIDUAL_SAMPLE`` rows are drawn, and while the residual on them is above
    ``AUTO_RESIDUAL`` a new draw of twice as many landmarks (at most ``grow_to``) replaces
    the last one.  Local and Dask fits call it alike, so they draw the same landmarks.
    """
    indices = draw(m)
    kept, L = factor(indices)
    if grow_to > m:
        sample = np.sort(rng.choice(n, min(n, RESIDUAL_SAMPLE), replace=False))
        while m < grow_to:
            missed = residual(sample, indices[kept], L)
            if missed is None or missed <= AUTO_RESIDUAL:
                break
            m = min(2 * m, grow_to)
            indices = draw(m)
            kept, L = factor(indices)
    return indices, kept, L, m


def trace_residual(captured, total):
    """1 - captured / total, where ``captured`` = sum_i ||embedding(x_i)||^2 and ``total`` =
    sum_i k(x_i, x_i) over some rows: the share of the kernel's trace on them that the
    Nystrom approximation misses (trace(K - K_nystrom) / trace(K), K - K_nystrom is
    positive semi-definite); None when the kernel has no positive trace on them (an
    indefinite kernel such as 'sigmoid').  A value below 0 by less than float32's
    rounding of the embedding (an exact embedding: -2e-8 with a linear kernel) is 0."""
    if not total > 0:
        return None
    missed = 1.0 - captured / total
    return 0.0 if -1e-5 < missed < 0.0 else missed


def spread_residual(captured, total, column_sum, n):
    """The share of the rows' spread around their embeddings' mean that the embedding misses:
    1 - sum_i ||phi_i - mu||^2 / sum_i ||phi(x_i) - mu||^2 over n rows, phi_i their
    embeddings, mu = ``column_sum`` / n their mean and phi(x_i) the rows in the kernel's
    feature space.  mu lies in the embedding's span, so with ``captured`` = sum_i
    ||phi_i||^2 and ``total`` = sum_i k(x_i, x_i) it is
    (total - captured) / (total - ||column_sum||^2 / n), at least :func:`trace_residual`.

    Where the kernel is nearly constant over the rows (uncentred features with a 'linear'
    or 'poly' kernel, a tiny gamma), the trace is almost all the mean's: the embedding can
    keep the mean and lose every difference between the rows while missing little of the
    trace (features offset by 300 with the linear kernel: a residual of 1e-5, the
    embedding of rank 1 and a constant classifier; this figure 0.97).  None when the rows
    do not spread around mu in the feature space."""
    spread = total - float(column_sum @ column_sum) / n
    if not spread > 1e-12 * total:
        return None
    return min(max(total - captured, 0.0) / spread, 1.0)


def auto_components(n, budget_bytes):
    """(first, most) landmarks of ``n_components='auto'`` for n training rows: AUTO_COMPONENTS
    first, and at most the m whose embedding costs n m^2 <= AUTO_EXACT_ROWS^3 flops (5e11,
    the n x m by m x m product), but at least AUTO_MAX_COMPONENTS, never more than n, and
    within the n x m float32 embedding's ``budget_bytes`` (never fewer than the first).

    So up to AUTO_EXACT_ROWS rows the growth may go on to n, every row a landmark: the
    Nystrom kernel is then the kernel itself.  Above it the cap falls smoothly to
    AUTO_MAX_COMPONENTS at 32,000 rows (7,228 at 9,800 rows, 5,656 at 16,000), where it
    had dropped from n to AUTO_MAX_COMPONENTS at once: 9,800 rows of sparse tf-idf-like
    text (10,000 features) missed 45 % of the trace with 4,000 landmarks and scored
    3.8-4.7 points below SVC (data seeds 0-2), with 7,228 19 % and 1.4-2.5 points below,
    in 8-13 s where SVC takes about 55 s."""
    first = min(AUTO_COMPONENTS, n)
    cap = min(n, max(AUTO_MAX_COMPONENTS, math.isqrt(AUTO_EXACT_ROWS ** 3 // n)))
    most = min(cap, max(first, budget_bytes // (4 * n)))
    return first, most


class NystromSVC(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseSVC):
    r"""Kernel SVM on a Nystrom embedding (Snacks), solved to a certified optimum.

    Tanji, Della Vecchia, Glineur & Villa, "Snacks: a fast large-scale kernel
    SVM solver" (ECC 2023).  ``fit`` draws ``n_components`` landmarks, embeds
    every training point by the Nystrom map
    :math:`x \mapsto (K_{mm}^{1/2})^+ k_m(x)` (Sec. II-A, see
    :mod:`fastsvm.nystrom.embedding`) and solves the linear SVM on the
    embedding (problem "Primal Nystrom L2-SVM"): by default to a certified
    optimum by dual coordinate descent with shrinking (``solver='dcd'``,
    LIBLINEAR's algorithm, see :func:`fastsvm.nystrom.solver.solve_dcd`), or
    as in the paper by ASSG (``solver='assg'``, Algorithm 1, see
    :func:`fastsvm.nystrom.solver.solve_assg`), or by its baseline Pegasos.

    Objective, with the offset b regularised like LIBLINEAR's (a constant
    feature 1 when ``fit_intercept``), sample weights s_i (class weight times
    sample weight, 1 by default) and S = sum_i s_i:

    .. math::

        \min_{w, b} \frac{\lambda}{2}(\|w\|^2 + b^2) + \frac{1}{S}\sum_{i=1}^n
        s_i \max(0, 1 - y_i(\langle w, \mathbb{x}_i\rangle + b)),
        \qquad \lambda = \frac{1}{SC}.

    Multiplied by SC this is ``LinearSVC(C=C, loss='hinge')`` with the same
    sample weights on the embedding, and as m -> n it becomes ``SVC(C=C)``
    with a regularised offset.  A weight bounds the example's dual variable
    (dual coordinate descent, 0 <= alpha_i <= c_i / (lambda n), c_i = s_i n / S),
    or scales its stochastic subgradient step by c_i (ASSG, Pegasos; examples are
    still drawn uniformly, see :mod:`fastsvm.base`), so a weight of 2 is the
    problem with the example twice, which the stochastic solvers solve in
    expectation; there a violator weighing more than 100 times the median example
    takes only as much of its weight as brings its margin to 1
    (:mod:`fastsvm._importance`).
    (The paper writes :math:`\lambda\|w\|^2` but differentiates it as
    :math:`\lambda w`: its lambda is our lambda.)

    Stopping: ``solver='dcd'`` (the default) stops when the duality gap, an
    upper bound on the distance to the optimal objective, is at most ``tol``
    times the objective (``training_info_['duality_gap']``), or with a
    ``ConvergenceWarning`` once its coordinate updates reach ``max_stages``
    full passes' worth: the model returned is then certified within ``tol``
    of the optimum of its embedded problem, the training rows' embedding as
    stored (float32, ``_options.EMBED_DTYPE``; every margin of the gap's
    objective summed in float64).  ``transform`` and the predictions use the
    map in float64, which differs from the stored rows by float32 rounding
    amplified by the map L^(-T) (entries of 10 to 200 at the defaults: up to
    3e-4 in an entry on covtype and ijcnn1), so on that embedding the model's
    objective can exceed the optimum by a little more: on 6,000 rows of
    covtype, ijcnn1 and skin_nonskin at C = 1 and 100 by 1.7e-4 to 7.6e-4
    relative (certified there: 2.1e-4 to 1.0e-3); with a large C on nearly
    separable rows, where the objective itself is tiny, by up to about 1 %.
    Its passes are cheap at moderate
    C and many at large C (a9a at the paper's C = 32: about 600 passes with
    the work of 170 full ones, most over the few variables that shrinking
    leaves active, against about 40 at C = 1).  For ASSG and
    Pegasos the full training objective is evaluated after each stage of
    T = ``stage_steps`` steps; training stops when it changed by at most
    ``tol`` relative to its value, or after ``max_stages`` stages.  The
    paper runs a fixed K x T budget: ``tol=None`` does that.  The objective
    also stagnates when the steps shrink far from the optimum, so that rule
    certifies nothing (ASSG stops 5 % above the optimum on a9a at C = 32).

    Kernels: every kernel of SVC ('rbf', 'linear', 'poly', 'sigmoid',
    'precomputed', a callable) and 'laplacian'.  Only the kernel between
    the points and the landmarks is ever evaluated, so a callable costs
    n x m evaluations, not n x n.  With 'precomputed', X holds
    K(X, X_train) and the landmarks are columns of it.  With the indefinite
    'sigmoid' kernel the factorisation keeps the landmarks on which K_mm is
    positive definite, often few of them (4 of 300 on a generated set), and
    ``kernel_residual`` is None.  'linear' and 'poly' on features far from
    centred are nearly constant over the rows: the factorisation's cut-off
    (relative to the largest eigenvalue, the mean's) and the float32
    embedding then keep the rows' mean and lose their differences (2,000 rows
    of 20 features offset by 300: one landmark kept, a constant classifier,
    where SVC scores 98 %; offset by 100, 86 % of the training rows right).
    The fit warns where ``kernel_spread_residual`` is above 50 % and the mean
    holds most of the kernel's trace; standardise such features.

    Multi-class problems (the paper's are binary) share one embedding and are
    split one-vs-one by default up to 30 classes, as SVC splits them
    (``multi_class='auto'``, or 'ovo' for any number; above 30 the pairs' models
    and overhead outgrow one-vs-rest's, see
    :data:`fastsvm.multiclass.AUTO_OVO_MAX_CLASSES`):
    k (k - 1) / 2 linear SVMs, each with C on the rows of its two classes
    only, whose votes pick the class (see :mod:`fastsvm.multiclass`).  Each
    pair's problem is small, so together they cost no more than k
    one-vs-rest problems over all rows (``multi_class='ovr'``), and they are more
    accurate where one class is not linearly separable from all others at
    once on the embedding.  Measured at the defaults (test accuracy and fit
    time, one-vs-one against one-vs-rest against SVC at its defaults, 25 %
    of the rows held out, seed 0):

    * 3 classes of concentric shells (``make_gaussian_quantiles``, 10,000
      rows, 6 features): 97.64 % in 0.36 s against 96.12 % in 0.52 s (SVC
      97.64 % in 0.25 s);
    * 5 classes (``multiclass`` of ``benchmarks/_generated.py``): 89.35 % in
      0.35 s against 88.60 % in 0.43 s (SVC 89.40 % in 0.29 s);
    * usps (10 classes, 7,291 rows): 94.27 % in 1.7 s against 94.12 % in
      2.1 s (SVC 94.72 % in 3.3 s);
    * 26 classes (``make_classification``, 15,000 rows, 16 features):
      93.89 % in 1.7 s against 92.77 % in 2.5 s (SVC 94.29 % in 0.6 s).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (S C), S the sum of the sample weights
        (n_samples without weights).
    kernel : {'rbf', 'laplacian', 'linear', 'poly', 'sigmoid', 'precomputed'} or callable, default='rbf'
    gamma : float or 'scale', default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Constant of the 'poly' and 'sigmoid' kernels.
    n_components : int or 'auto', default='auto'
        Number of landmarks m.  'auto' draws min(1000, n_samples) and, while
        the embedding misses more than 15 % of the kernel's trace on 1,000
        training rows, draws twice as many instead: up to every row on at most
        8,000 rows (the exact kernel), above that up to the m whose n m^2
        flops match the exact kernel's on 8,000 rows, but at least 4,000
        (7,228 on 9,800 rows, 4,000 from 32,000), never more than keep the
        float32 embedding within ``max_embedding_mb``
        (:func:`auto_components`, :func:`choose_landmarks`);
        ``training_info_['landmarks_drawn']``
        tells how many.  An int above
        the number of training rows makes every row a landmark, with a
        warning (as scikit-learn's ``Nystroem``).  The embedding has r <= m
        columns: the pivoted Cholesky factorisation of K_mm drops the
        landmarks whose pivots fall below 1e-7 of its largest eigenvalue.
        ``training_info_['kernel_residual']`` tells how much of the kernel
        the m landmarks miss (see ``RESIDUAL_WARN``).  The growth follows the
        exact kernel SVM, which is not always more accurate: on 5,250 rows of
        60 binary features 'auto' grows to 4,000 landmarks and matches SVC
        (95.49 %) in 2.9 s, where 1,000 reach 96.46 % in 0.2 s.  On such sets
        of a few thousand rows an int ``n_components`` (or SVC) is faster.
    landmarks : {'uniform', 'leverage'}, default='uniform'
        Uniform sampling without replacement, or approximate ridge
        leverage-score sampling (see
        :func:`fastsvm.nystrom.embedding.sample_landmarks`).
    solver : {'dcd', 'assg', 'pegasos'}, default='dcd'
        Dual coordinate descent with shrinking (Hsieh et al. 2008, as
        ``LinearSVC``), which stops on the relative duality gap ``tol``;
        ASSG (Snacks, the paper's solver); or Pegasos (step 1/(lambda t),
        ball projection).  The parameters ``eta0``, ``radius0``, ``omega``
        and ``stage_steps`` are ASSG's (``stage_steps`` also Pegasos').
    eta0 : float or 'auto', default='auto'
        ASSG's first step size eta_1.  'auto' calibrates it on the first
        stage: starting at 1, the step is multiplied (or divided) by 4 while
        the objective after stage 1 improves, and training continues from the
        best trial's stage (typically 2-3 trials: the cost of 1-2 extra
        stages).  The paper tunes it by hand per data set.
    radius0 : float or None, default=None
        ASSG's first ball radius D_1; None means sqrt(2 / lambda), the radius
        around w_0 = 0 that is known to hold the optimum (P(w*) <= P(0) = 1
        and P(w) >= lambda ||w||^2 / 2).
    omega : float, default=2.0
        Factor by which ASSG divides step size and radius after each stage (> 1).
    stage_steps : int or None, default=None
        Steps per stage T; None means max(n_samples, 50000), and for a
        one-vs-one pair of n_pair rows as many passes over its rows,
        max(n_pair, 50000 n_pair / n_samples).  The paper's
        settings use 35,000 to 80,000 steps per stage; with fewer, each stage
        ends further from the optimum (usps, 7,291 rows: 93.0 % test accuracy
        with T = n against 94.1 % with T = 50,000 and 94.3 % for LIBLINEAR's
        optimum).  Also Pegasos' steps between two checks of the stopping rule.
    max_stages : int or 'auto', default='auto'
        Maximum number of stages K of ASSG and Pegasos; for ``solver='dcd'``,
        the coordinate updates of that many full passes (max_stages x n row
        visits: a pass over the variables shrinking left active counts as its
        share of one, so the many cheap passes of large C are not cut short).
        'auto' is 20 stages, and for 'dcd' 1000 passes' worth (LIBLINEAR's
        ``max_iter`` counts 1000 passes of any size).
    tol : float or None, default=1e-3
        For ``solver='dcd'``: the relative duality gap (P - D) / P at which
        training stops.  For ASSG and Pegasos: the relative change of the
        training objective between two stages below which training stops.
        None runs all ``max_stages`` stages.
    max_embedding_mb : float or 'auto', default='auto'
        Memory budget of the n x r float32 embedding of the training rows, in
        MB (2**20 bytes); 'auto' is a quarter of the physical memory.  Within
        it the embedding is kept in memory; beyond it, it is written to a
        temporary file (in ``tempfile.gettempdir()``, deleted after the fit)
        that the solver reads through a memory map, so the fit's own memory
        no longer grows with n * r: the operating system's page cache keeps
        what fits (see :mod:`fastsvm.nystrom.store`).  The file needs n * r * 4
        bytes of disk.  The model does not depend on it.
    fit_intercept : bool, default=True
        Add a constant feature 1 (a regularised offset, as LIBLINEAR does).
    multi_class : {'auto', 'ovo', 'ovr'}, default='auto'
        For more than two classes: one model per pair of classes, trained on
        their rows (one-vs-one, as SVC), or one per class against all others
        (one-vs-rest); 'auto' is 'ovo' up to 30 classes and 'ovr' above (the
        value used is ``training_info_['multi_class']``).
    class_weight : dict, 'balanced' or None, default=None
        Weight of each class, multiplying its samples' C as in SVC;
        'balanced' is n_samples / (n_classes * bincount(y)), the counts weighted
        by sample_weight.
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit; the result does
        not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the landmarks and the order of the stochastic steps.
    verbose : int, default=0
        > 0 shows progress bars and a summary line.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class, as SVC's: ``class_weight`` resolved (ones for None).
    n_features_in_ : int
    gamma_ : float or None
        The numeric kernel parameter used (None for kernels without one).
    components_ : ndarray or csr_matrix of shape (n_landmarks, n_features_in_)
        The landmarks kept (rows of the training data; as given for a
        callable kernel; empty for 'precomputed'): of the m drawn, those
        the pivoted Cholesky factorisation of K_mm keeps, in pivot order
        (see :mod:`fastsvm.nystrom.embedding`).
    component_indices_ : ndarray of shape (n_landmarks,)
        Their row indices in the training data.
    normalization_ : ndarray of shape (n_landmarks, n_components_)
        P = L^(-T): the embedding of x is k(x, landmarks)^T P.
    n_components_ : int
        r, the dimension of the embedding.
    coef_ : ndarray of shape (n_models, n_components_)
        Weights on the embedding: 1 model for 2 classes, else one per pair
        of classes (i, j), i < j, in the order (0, 1), (0, 2), ..., positive
        for class j (``multi_class='ovo'``), or one per class ('ovr').  They
        weigh ``transform``'s columns, not X's features, also with
        ``kernel='linear'``, where the embedding can have as many columns as
        X has features: tools that read ``coef_`` as feature weights (such as
        ``SelectFromModel``) need ``coef_ @ normalization_.T @ components_``,
        the weights on X's features of a linear-kernel model.
    intercept_ : ndarray of shape (n_models,)
    n_iter_ : ndarray of shape (n_models,)
        Stages (passes for ``solver='dcd'``) run per binary model.
    training_info_ : dict
        ``landmarks_drawn`` (m; ``n_components_`` of them are kept), times
        of landmark sampling, embedding and solving, the embedding's
        shape and bytes and whether it stayed in memory
        (``embedding_in_memory``), ``kernel_residual`` (the share of the
        kernel's trace over the training rows that the embedding misses,
        trace(K - K_nystrom) / trace(K); None for 'sigmoid' and a kernel without
        a positive trace), ``kernel_spread_residual`` (the same share of the
        rows' spread around their embeddings' mean in the kernel's feature
        space, at least ``kernel_residual``; see :func:`spread_residual`), and
        per model the objective after each stage, margin violations per stage
        (ASSG, Pegasos), whether ``tol`` was reached, (ASSG) the step size eta_1 used and (DCD) ``duality_gap``,
        the relative duality gap at each check (the last one is the
        certificate of the returned model; ``objective`` then holds the
        smallest objective seen at each check).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from fastsvm import NystromSVC
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = NystromSVC(C=10, gamma=2.0, n_components=100, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        **KERNEL_CONSTRAINTS,
        "kernel": [StrOptions(set(KERNELS) | {"laplacian"}), callable],
        "n_components": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"uniform", "leverage"})],
        "solver": [StrOptions({"assg", "pegasos", "dcd"})],
        "eta0": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "radius0": [Interval(Real, 0, None, closed="neither"), None],
        "omega": [Interval(Real, 1, None, closed="neither")],
        "stage_steps": [Interval(Integral, 1, None, closed="left"), None],
        "max_stages": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_embedding_mb": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "multi_class": [StrOptions({"auto", *MULTI_CLASS})],
        "random_state": ["random_state"],
        **COMMON_CONSTRAINTS,
    }
    _kernels = KERNELS + ("laplacian", "callable")

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_components="auto", landmarks="uniform", solver="dcd", eta0="auto", radius0=None,
                 omega=2.0, stage_steps=None, max_stages="auto", tol=1e-3, max_embedding_mb="auto",
                 fit_intercept=True, multi_class="auto", class_weight=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.landmarks = landmarks
        self.solver = solver
        self.eta0 = eta0
        self.radius0 = radius0
        self.omega = omega
        self.stage_steps = stage_steps
        self.max_stages = max_stages
        self.tol = tol
        self.max_embedding_mb = max_embedding_mb
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y, sample_weight=None):
        """Fit on (X, y) and return the embedding of X (reused from the fit when X is float32).

        Returns
        -------
        ndarray of shape (n_samples, n_components_), float32 or X's float type
        """
        with self._fitting():
            problem = self._problem(X, y, sample_weight)
            fitted, Phi = self._fit_embedding(problem)
            self._publish(fitted, problem.class_weight)
        whole = len(problem.rows) == _num_samples(X)      # no row of weight 0 was dropped
        if Phi is not None and whole and getattr(X, "dtype", None) == Phi.dtype:
            return Phi
        return self.transform(X)

    def _fit(self, problem):
        return self._fit_embedding(problem)[0]

    @one_blas_pool()
    def _fit_embedding(self, problem):
        """Landmarks, the embedding and the linear SVM; returns (fitted attributes, embedding
        or None where it was not kept in memory)."""
        n, m = problem.n_samples, self.n_components
        grow_to = m
        if m == "auto":
            m, grow_to = auto_components(n, self._embedding_budget())
        if m > n:
            warnings.warn(f"n_components={m} is larger than the {n} training rows (of nonzero "
                          f"weight): every row is a landmark, n_components_ <= {n}, and the "
                          "embedding costs as much as the full kernel matrix", UserWarning)
            m = grow_to = n
        seed_landmarks, *seeds = random_seeds(
            self.random_state, 1 + n_binary_models(len(problem.classes), self.multi_class))
        info = {"multi_class": resolve_multi_class(self.multi_class, len(problem.classes))}
        started = time.perf_counter()
        kernel = problem.kernel
        rng = np.random.default_rng(seed_landmarks)

        # dense landmarks when small: then dense and CSR input give the same K_mm
        def landmark_rows(rows):
            return rows if kernel.name == "precomputed" else _dense_if_small(problem.take(rows))

        def factor(idx):
            drawn = landmark_rows(idx)
            return cholesky_factor(problem.block(idx, idx) if kernel.name == "precomputed"
                                   else kernel(drawn, drawn))

        def residual(sample, idx, L):
            block = (problem.block(sample, idx) if kernel.name == "precomputed"
                     else kernel(_dense_if_small(problem.take(sample)), landmark_rows(idx)))
            embedded = times_inverse_factor(block, L)
            return trace_residual(float(np.einsum("ij,ij->", embedded, embedded)),
                                  float(problem.diagonal(sample).sum()))

        idx, kept, L, info["landmarks_drawn"] = choose_landmarks(
            n, m, grow_to, lambda m: sample_landmarks(problem, m, self.landmarks, rng), factor,
            residual, rng)
        idx = idx[kept]                   # the r landmarks the factorisation keeps
        projection = inverse_factor(L)
        # the landmarks' own rows of the embedding (see embed_blocks), kept in the store's
        # type only: r x r float32 where the float64 factor was twice that (an overflow
        # to inf is reported with the rest of the embedding)
        with np.errstate(over="ignore"):
            L = np.ascontiguousarray(L, dtype=np.dtype(_options.EMBED_DTYPE))
        landmarks = landmark_rows(idx)
        training_map = NystromMap(kernel, landmarks, projection)
        info["time_landmarks_s"] = time.perf_counter() - started

        store = self._embedding_store(n, projection.shape[1])
        try:
            start = time.perf_counter()
            sq_norms = np.empty(n)   # ||embedding(x_i)||^2, the approximated k(x_i, x_i)
            column_sum = np.zeros(projection.shape[1])
            with progress_bar(self.verbose, n, "row", "NystromSVC embedding") as bar:
                for first, rows in training_map.embed_blocks(problem.X, store.dtype, bar,
                                                             known=(idx, L)):
                    check_finite_output(rows, "embedding")
                    store.write(first, rows)
                    sq_norms[first:first + len(rows)] = embedded_sq_norms(rows)
                    column_sum += rows.sum(axis=0, dtype=np.float64)
            info["time_embedding_s"] = time.perf_counter() - start
            info.update(self._kernel_residual(
                float(sq_norms.sum()), float(problem.diagonal(np.arange(n)).sum()), column_sum,
                n))
            info["embedding_shape"] = list(store.shape)
            info["embedding_bytes"] = int(store.nbytes)
            info["embedding_in_memory"] = store.in_memory

            start = time.perf_counter()
            results = self._solve(store.array(), problem, seeds, sq_norms)
            info["time_solver_s"] = time.perf_counter() - start
            Phi = store.array() if store.in_memory else None
        finally:
            store.close()
        info["time_fit_s"] = time.perf_counter() - started
        fitted = self._fitted(results, problem.classes, kernel, problem.rows[idx],
                              (np.empty((0, 0)) if kernel.name == "precomputed"
                               else problem.take(idx)), projection, info)
        if self.verbose:
            print(f"NystromSVC: embedding {n} x {store.shape[1]} "
                  f"({'in memory' if store.in_memory else 'in a temporary file'}) in "
                  f"{info['time_embedding_s']:.2f} s, {self.solver} "
                  f"{fitted['n_iter_'].max()} stages in {info['time_solver_s']:.2f} s, "
                  f"{objectives_text([r.objective[-1] for r in results], 5)}")
        return fitted, Phi

    def _fitted(self, results, classes, kernel, indices, components, projection, info):
        """The fitted attributes: the solvers' ``results`` per binary model, the landmarks
        kept (their row ``indices`` and rows ``components``; CSR rows stay sparse, nothing
        is kept for 'precomputed') with the map ``projection``, and ``info`` completed
        into ``training_info_``.  Warns if a solver did not reach ``tol``."""
        info["objective"] = [r.objective for r in results]
        info["violations"] = [r.violations for r in results]
        # plain Python values, as a model file gives them back
        info["converged"] = [bool(r.converged) for r in results]
        if self.solver == "assg":
            info["eta0"] = [r.eta0 for r in results]
        if self.solver == "dcd":
            info["duality_gap"] = [[float(g) for g in r.gap] for r in results]
        if self.tol is not None and not all(r.converged for r in results):
            warnings.warn(f"{type(self).__name__} did not reach tol={self.tol} within "
                          f"max_stages={self._max_stages()} "
                          f"{'full passes of work' if self.solver == 'dcd' else 'stages'}; "
                          "increase "
                          "max_stages or tol", ConvergenceWarning)
        W = np.array([r.w for r in results])
        bias_feature = 1.0 if self.fit_intercept else 0.0
        n_iter = np.array([r.epochs if self.solver == "dcd" else r.n_stages for r in results])
        return {
            "classes_": classes, "gamma_": kernel.gamma, "component_indices_": indices,
            "components_": components, "normalization_": projection,
            "n_components_": projection.shape[1], "coef_": W[:, :-1],
            "intercept_": W[:, -1] * bias_feature, "n_iter_": n_iter, "training_info_": info,
        }

    def _kernel_residual(self, captured, total, column_sum, n):
        """``kernel_residual`` and ``kernel_spread_residual`` of ``training_info_``:
        :func:`trace_residual` and :func:`spread_residual` of the n training rows (None
        for the indefinite 'sigmoid', whose K - K_nystrom is no positive semi-definite part
        to measure: its embedding can overstate k(x, x)); warns when the trace's is above
        ``RESIDUAL_WARN``, or the spread's is while the embeddings' mean holds most of the
        trace (residual / spread = 1 - n ||mu||^2 / trace(K) < 1/2: a nearly constant
        kernel; with few landmarks on data of a varied kernel the spread's share is also
        high, for the reason the trace's message gives)."""
        if self.kernel == "sigmoid":
            return {"kernel_residual": None, "kernel_spread_residual": None}
        residual = trace_residual(captured, total)
        spread = None if residual is None else spread_residual(captured, total, column_sum, n)
        if residual is not None and residual > RESIDUAL_WARN:
            warnings.warn(
                f"the Nystrom embedding misses {residual:.0%} of the kernel's trace on the "
                f"training rows (the landmarks span little of the data, as on sparse "
                f"high-dimensional rows): the model is far from the kernel SVM; raise "
                f"n_components, or use BudgetSVC or a linear model", UserWarning)
        elif spread is not None and spread > RESIDUAL_WARN and residual < spread / 2:
            warnings.warn(
                f"the Nystrom embedding misses {spread:.0%} of the training rows' spread "
                f"around their mean in the kernel's feature space (and {residual:.2%} of the "
                f"kernel's trace): the kernel is nearly constant over the rows, as with "
                f"kernel='linear' or 'poly' on features far from centred, or a tiny gamma, "
                f"and the embedding keeps their mean but little of their differences: the "
                f"model is far from the kernel SVM; standardise the features "
                f"(StandardScaler) or change the kernel's parameters", UserWarning)
        return {"kernel_residual": residual, "kernel_spread_residual": spread}

    def _embedding_budget(self):
        """``max_embedding_mb`` in bytes."""
        return (auto_memory_budget() if self.max_embedding_mb == "auto"
                else int(self.max_embedding_mb * 2**20))

    def _embedding_store(self, n, r):
        """Where the n x r training embedding goes: memory within ``max_embedding_mb``,
        else a mapped temporary file."""
        return EmbeddingStore(n, r, np.dtype(_options.EMBED_DTYPE),
                              max_bytes=self._embedding_budget())

    def _max_stages(self):
        return AUTO_MAX_STAGES[self.solver] if self.max_stages == "auto" else self.max_stages

    def _binary_problems(self, problem):
        """(rows, targets, step weights, lambda) of each binary problem: one-vs-rest over
        all rows (rows None), or one-vs-one over the rows of each pair, with C on them
        (lambda = 1 / (C S_pair), step weights s_i n_pair / S_pair on the pair's rows)."""
        n_classes = len(problem.classes)
        if n_classes == 2 or resolve_multi_class(self.multi_class, n_classes) == "ovr":
            targets, weight, lam = problem.targets, problem.step_weights, problem.lam(self.C)
            return Problems(len(targets), lambda k: (None, targets[k], weight, lam))
        pairs = ovo_problems(problem.y, n_classes)

        def pair(k):
            rows, targets = pairs[k]
            weight_sum = float(problem.weights[rows].sum())
            weight = np.zeros(problem.n_samples)
            weight[rows] = step_weights(problem.weights[rows], len(rows), weight_sum)
            return rows, targets, weight, regularization(self.C, weight_sum)

        return Problems(len(pairs), pair)

    def _solve(self, Phi, problem, seeds, sq_norms):
        """The binary problems' solutions on the embedding ``Phi``, whose rows' squared
        norms are ``sq_norms``."""
        bias_feature = 1.0 if self.fit_intercept else 0.0
        max_stages = self._max_stages()
        binary = self._binary_problems(problem)
        sizes = [problem.n_samples if rows is None else len(rows) for rows, *_ in binary]

        def stage_steps(n):     # a pair of n rows: the passes per stage of all rows
            if self.stage_steps is not None:
                return self.stage_steps
            return max(n, -(-MIN_STAGE_STEPS * n // problem.n_samples))

        def solve_one(item, bar):
            (rows, y_bin, weight, lam), n, seed = item
            rng = np.random.default_rng(seed)
            if self.solver == "dcd":
                return solve_dcd(Phi, y_bin, weight, bias_feature, lam, max_stages, self.tol,
                                 rng, bar, rows, sq_norms)
            if self.solver == "assg":
                eta0 = None if self.eta0 == "auto" else self.eta0
                radius0 = np.sqrt(2.0 / lam) if self.radius0 is None else self.radius0
                return solve_assg(Phi, y_bin, weight, bias_feature, lam, eta0, radius0,
                                  self.omega, stage_steps(n), max_stages, self.tol, rng, bar,
                                  rows)
            return solve_pegasos(Phi, y_bin, weight, bias_feature, lam, stage_steps(n),
                                 max_stages, self.tol, rng, bar, rows)

        total = (None if self.tol is not None else      # stops on tol: its cap is no total
                 sum(n if self.solver == "dcd" else stage_steps(n) for n in sizes) * max_stages)
        return self._fan_out(solve_one, zip(binary, sizes, seeds), total, "step")

    @one_blas_pool()
    def transform(self, X):
        """The Nystrom embedding of X, ndarray of shape (n_samples, n_components_)
        (X's float type; float64 for a callable kernel)."""
        check_is_fitted(self, "coef_")
        X = self._validate_for_predict(X)
        embedding = self._nystrom_map().transform(X, dtype=getattr(X, "dtype", np.float64))
        check_finite_output(embedding, "embedding")
        return embedding

    @one_blas_pool()
    def _decision(self, X):
        """<w, embedding(x)> of each binary model."""
        return self._nystrom_map().apply(X, self.coef_.T)

    def _nystrom_map(self):
        kernel = self._fitted_kernel()
        landmarks = (self.component_indices_ if kernel.name == "precomputed"
                     else self.components_)
        return NystromMap(kernel, landmarks, self.normalization_)

    @property
    def _n_features_out(self):
        """Columns of ``transform``: get_feature_names_out gives nystromsvc0, nystromsvc1, ...,
        and ``set_output(transform='pandas')`` names them so."""
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # transform() keeps X's float type
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags
