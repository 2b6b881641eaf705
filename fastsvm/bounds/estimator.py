"""HuberSVC and PegasosSVC: SVMs that skip margin computations with bounds on the
change in the margin (Guillory & Bilmes)."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot

from .._packed import PackedData
from ..base import (COMMON_CONSTRAINTS, KERNEL_CONSTRAINTS, BaseSVC, check_dense_vectors,
                    objectives_text, random_seeds, used_columns, widen)
from ..kernels import row_sq_norms
from ..multiclass import MULTI_CLASS, ovo_pairs, resolve_multi_class
from . import _kernels as K
from .solver import (HUBER_SOLVERS, hinge_duality, solve_huber, solve_kernel_pegasos,
                     solve_pegasos)

#: PegasosSVC's default number of iterations: enough for this many passes over
#: the data, and at least ``MIN_PEGASOS_DRAWS`` points drawn (1,000 iterations of 100).
DEFAULT_PEGASOS_EPOCHS = 20
MIN_PEGASOS_DRAWS = 100_000


def pegasos_multi_class(multi_class, kernel):
    """PegasosSVC's ``multi_class`` with 'auto' resolved for ``kernel``: 'auto' (one-vs-one
    up to 30 classes, as SVC) with a kernel, 'ovr' for ``kernel='linear'`` (as LinearSVC,
    the linear model's counterpart)."""
    return "ovr" if multi_class == "auto" and kernel == "linear" else multi_class


def _linear_decision(X, coef):
    """<w, x> of each model, shape (n_samples, n_models)."""
    return np.asarray(safe_sparse_dot(X, coef.T), dtype=np.float64)


#: Linear PegasosSVC warns when the rows' mean holds more than this share of their mean
#: squared norm (features far from centred; see :func:`mean_share`).
UNCENTRED_SHARE_WARN = 0.95


def mean_share(X, weights):
    """||mu||^2 / E ||x||^2 for the rows of X (dense or CSR) weighted by ``weights``, mu their
    weighted mean: the share of the rows' squared norm that their common offset holds.

    Pegasos' steps 1/(lambda t) converge at a rate set by the rows' norms, and
    a large common offset inflates them without separating anything: 10
    features of ``make_classification`` plus 50 (share 0.9992) gave 76.3 %
    test accuracy where LinearSVC scores 82.9 %, with the objective (0.54) below
    that of w = 0; plus 10 (0.98) 76.4 %, plus 2 (0.66) 82.9 %.  On the shared
    and generated sets of ``benchmarks/defaults_vs_svc.py`` the share is at
    most 0.79 (skin_nonskin's pixel values), so UNCENTRED_SHARE_WARN = 0.95.
    """
    total = weights.sum()
    mu = np.asarray(safe_sparse_dot(weights, X), dtype=np.float64).ravel() / total
    mean_sq = float(weights @ row_sq_norms(X)) / total
    return float(mu @ mu) / mean_sq if mean_sq > 0 else 0.0


#: What a linear model's dense ``coef_`` is, for :func:`~fastsvm.base.check_dense_vectors`:
#: on hashed features (indices up to 2^31 - 1) a single row takes 16 GiB, which the fit
#: wrote to a model file that ``load_model`` refuses.
COEF = "coefficients (coef_, one row per binary model)"


def _pegasos_certificate(problem, results, fitted, lam, bias_feature):
    """(P(w), D(alpha)) of each fitted Pegasos model, alpha Pegasos' dual variables clipped
    to the box (see :func:`fastsvm.bounds.solver.hinge_duality` and ``PegasosSVC``).

    One pass of decision values over the training rows: O(nnz) for the linear
    kernel, n x n_SV kernel values otherwise, which also give ||w(alpha)||^2.
    """
    upper = problem.weights / problem.weight_sum
    Y = np.array(problem.targets)                       # (n_models, n), +-1
    if "coef_" in fitted:
        alpha = np.minimum(np.array([r.dual for r in results]), upper)
        W = np.array([r.w for r in results])            # the offset weight last
        margins = Y * (_linear_decision(problem.X, fitted["coef_"]) + fitted["intercept_"]).T
        V = _linear_decision(problem.X.T, (alpha * Y))  # sum_i alpha_i y_i x_i, (d, n_models)
        alpha_norm2 = (V ** 2).sum(axis=0) + (bias_feature * (alpha * Y).sum(axis=1)) ** 2
        return hinge_duality(margins, ((lam * W) * W).sum(axis=1), alpha, alpha_norm2, upper,
                             lam)
    # kernel: w = sum_s beta_s phi'(x_s), beta = dual_coef_ on the rows `support`, so
    # alpha_s = lambda y_s beta_s; f and g below are the expansions of beta and alpha * y
    support = np.unique(np.concatenate([r.support for r in results]))   # as in _fit
    beta = fitted["dual_coef_"]                         # (n_models, n_SV)
    alpha = np.zeros_like(Y)
    alpha[:, support] = np.minimum(lam * Y[:, support] * beta, upper[support])
    coef = np.hstack([beta.T, (alpha * Y)[:, support].T])
    if problem.kernel.on_gram:
        F = problem.gram()[:, support] @ coef
    else:
        F = problem.kernel.expansion(problem.X, fitted["support_vectors_"], coef)
    F += bias_feature ** 2 * coef.sum(axis=0)           # the offset feature: k' = k + 1
    n_models = len(results)
    f, g = F[:, :n_models].T, F[:, n_models:].T         # (n_models, n) each
    lam_w_norm2 = ((lam * beta) * f[:, support]).sum(axis=1)
    alpha_norm2 = ((alpha * Y)[:, support] * g[:, support]).sum(axis=1)
    return hinge_duality(Y * f, lam_w_norm2, alpha, alpha_norm2, upper, lam)


class HuberSVC(BaseSVC):
    r"""Linear SVM with a Huber-smoothed hinge, trained by L-BFGS or gradient descent that
    skip margin computations with bounds on the change in the margin.

    Guillory & Bilmes, "Practical Methods for Exploiting Bounds on Change in
    the Margin", Sec. 4.2.  Objective (the paper's eq. 1, averaged), with
    sample weights s_i (class weight times sample weight, 1 by default) and
    S = sum_i s_i:

    .. math::

        \min_{w, b} \frac{\lambda}{2}\|w\|^2 + \frac{1}{S}\sum_{i=1}^n
        s_i\, l_h(y_i(\langle w, x_i\rangle + b)), \qquad \lambda = \frac{1}{SC},

    with the Huber loss of eq. (5): :math:`l_h(z) = 1 - z` for
    :math:`z \le 1 - h`, :math:`(1 + h - z)^2 / (4h)` for :math:`|z - 1| < h`,
    0 for :math:`z \ge 1 + h`.  Multiplied by SC this is the SVM objective
    :math:`\frac12\|w\|^2 + C\sum_i s_i l_h` with an unregularised offset; as
    h -> 0 it becomes the hinge-loss SVM.  The weights enter the loss terms
    (and the prefix sums of Algorithm 2) exactly, so a weight of 2 gives the
    model of the row appearing twice, to rounding.

    The method is primal gradient descent on a linear model: ``kernel`` is
    'linear' only.  In a kernel's feature space every gradient step changes
    all n coefficients, so both the margins and ||w - w'|| cost n^2 kernel
    values per iteration and the bounds cannot save anything; use
    ``PegasosSVC(kernel=...)`` (the paper's kernel extension) or
    ``NystromSVC`` there.

    ``solver='lbfgs'`` (the default) minimises it from w = 0, b = 0 by L-BFGS
    and stops once the relative duality gap (F - D) / F <= ``tol`` (1e-3 by
    default), a certificate that F - F* <= tol F (see
    :func:`fastsvm.bounds.solver.huber_duality`).  ``solver='gd'`` is the
    paper's gradient descent (Sec. 4.2): the step starts at ``eta0`` and is
    halved whenever the objective rose; training stops when the objective
    changed by at most ``tol`` (1e-5 by default) relative to its previous
    value.  That rule stops on stagnation, not near the optimum: lambda =
    1/(SC) makes the problem badly conditioned and the steps crawl.  At the
    paper's h = 0.01, in ``benchmarks/defaults_vs_svc.py``, it stopped 6 %
    above the optimum on a sparse set of 6,000 rows (71.85 % test accuracy,
    the optimum's 72.95 %) and 5x above it on skin_nonskin's unscaled
    features (90.36 %, the optimum's 92.99 %); L-BFGS certifies both, in 0.4
    and 0.1 s against 2.3 and 1.8 s.  Nearly separable problems are slow to
    certify: at h = 0.01 usps' one-vs-rest problems (F* = 0.006) took up to
    4,500 evaluations each, 25 s against the descent's 7 s (which stops at a
    gap of 2.1); at the default h = 0.5, up to 962 (15-17 s; 4.1-4.8 s
    since CSR input with at least 25 % stored entries, usps's every pixel,
    is packed dense: ``_options.PACKED_DENSE_FROM``).  Either stops
    unconverged after ``max_iter`` iterations.

    With ``margin_bounds=True`` each evaluation computes the loss and gradient
    by Algorithm 2 (adapted to the Huber loss, with separate lists of
    positive and negative points for the offset): points whose margin bound
    falls entirely in the linear or zero piece of the loss are accounted for
    by stored prefix sums instead of being visited.  The data is re-sorted
    (Algorithm 1) by the adaptive rule of Sec. 3, and an iteration that skips
    nothing switches to plain evaluation until the next re-sort.  The method
    is exact: loss, gradient and model equal those of ``margin_bounds=False``
    up to rounding.  See :mod:`fastsvm.bounds._kernels`.

    Multi-class problems are split one-vs-rest.  Training is deterministic.

    Same model with and without bounds: each evaluation's loss and gradient
    agree to rounding.  L-BFGS's line search can turn a rounding difference
    into another path, which stops elsewhere within the duality gap.  For
    gradient descent the first steps with ``eta0=100`` are unstable and can
    amplify a rounding difference until the two runs halve the step at
    different iterations; they then stop at different iterates of about the
    same objective.  On the benchmark sets covtype, a9a and ijcnn1 the paths
    of gradient descent coincide (see ``benchmarks/results/bounds_paper_tables.md``).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (S C), S the sum of the sample weights.
    kernel : {'linear'}, default='linear'
        The only kernel of the method (see above).
    h : float, default=0.5
        Half-width of the Huber loss's quadratic piece.  The paper's is 0.01
        (``benchmarks/bounds_paper_tables.py`` uses it).  0.5 by measurement:
        near the margin F's curvature is 1/(2h), so a narrow piece makes F
        badly conditioned.  In ``benchmarks/defaults_vs_svc.py`` h = 0.01
        took L-BFGS 1.15-5.7x the evaluations (usps: up to 4,475 per
        one-vs-rest problem against 962), and the smoother loss was as
        accurate or better on 8 of the 11 sets (5 classes one-vs-rest:
        70.55 % against 66.05 %, LinearSVC() 70.90 %; skin_nonskin 93.64 %
        against 92.99 %), at most 0.2 points lower on the other three.
    solver : {'lbfgs', 'gd'}, default='lbfgs'
        L-BFGS, stopped on the duality gap, or the paper's gradient descent,
        stopped on the objective's relative change (see above).
    tol : float or None, default=None
        For 'lbfgs' the relative duality gap at which training stops (None:
        1e-3); for 'gd' the relative change of the objective (None: 1e-5;
        the paper's epsilon, its Table 2 uses 1e-4, 1e-5 and 1e-6).
    max_iter : int, default=20000
        Maximum number of iterations per binary problem (for 'lbfgs' also of
        objective evaluations).
    eta0 : float, default=100.0
        First step size of 'gd'.
    fit_intercept : bool, default=True
        Fit the (unregularised) offset b; False keeps b = 0.
    class_weight : dict, 'balanced' or None, default=None
        Weight of each class, multiplying its samples' C as in SVC;
        'balanced' is n_samples / (n_classes * bincount(y)), the counts weighted
        by sample_weight.
    margin_bounds : bool, default=True
        Skip margin computations with the bounds (same model, less work).
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit.
    verbose : int, default=0
        > 0 shows a progress bar (one tick per objective evaluation).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class, as SVC's: ``class_weight`` resolved (ones for None).
    n_features_in_ : int
    coef_ : ndarray of shape (n_models, n_features_in_)
        1 model for 2 classes, else n_classes.
    intercept_ : ndarray of shape (n_models,)
    n_iter_ : ndarray of shape (n_models,)
        Objective evaluations per binary model (for 'gd' gradient steps + 1).
    n_examined_ : list of ndarray
        Per binary model, the number of points whose margin was computed at
        each evaluation (n_samples at re-sorts and plain evaluations).  A
        diagnostic of the fit that model files do not keep (they keep
        ``training_info_``, with its ``examined_fraction``).
    training_info_ : dict
        Per model: ``objective`` at each evaluation, ``converged``,
        ``duality_gap`` (the relative duality gap (F - D) / F at the returned
        model, both solvers; 'lbfgs' stops on it), ``relative_change`` (the
        measure 'gd' stops on; nan for 'lbfgs'),
        ``gradient_norm`` (||grad F|| at the returned model: 0 exactly at
        the optimum), ``suboptimality_bound`` (||grad F||^2 / (2 lambda) >=
        F - F*, a certificate; only with ``fit_intercept=False``, since the
        offset is not regularised), ``n_sorts``, final ``step_size`` ('gd');
        ``examined_fraction``, the mean of ``n_examined_`` over iterations
        divided by n_samples; ``time_fit_s``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm import HuberSVC
    >>> X, y = make_classification(2000, n_features=20, random_state=0)
    >>> clf = HuberSVC(C=1.0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": KERNEL_CONSTRAINTS["kernel"],
        "h": [Interval(Real, 0, 1, closed="neither")],
        "solver": [StrOptions(set(HUBER_SOLVERS))],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "margin_bounds": ["boolean"],
        **COMMON_CONSTRAINTS,
    }
    _kernels = ("linear",)
    _kernel_reason = ("HuberSVC is gradient descent on a linear model; in a kernel's feature "
                      "space each step would cost n^2 kernel values and the margin bounds could "
                      "not spare any: use PegasosSVC(kernel=...) or NystromSVC(kernel=...)")

    def __init__(self, C=1.0, kernel="linear", h=0.5, solver="lbfgs", tol=None, max_iter=20000,
                 eta0=100.0, fit_intercept=True, class_weight=None, margin_bounds=True,
                 n_jobs=None, verbose=0):
        self.C = C
        self.kernel = kernel
        self.h = h
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.margin_bounds = margin_bounds
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _tol(self):
        """``tol``, None resolved to the solver's default (``HUBER_SOLVERS``)."""
        return HUBER_SOLVERS[self.solver] if self.tol is None else self.tol

    def _fit(self, problem):
        """The solver on each binary problem."""
        started = time.perf_counter()
        check_dense_vectors(problem.n_models, problem.X.shape[1], what=COEF)
        X, columns = used_columns(problem.X)
        packed = PackedData.from_matrix(X)
        n = problem.n_samples
        lam = problem.lam(self.C)

        def solve_one(y_bin, bar):
            return solve_huber(packed, y_bin, problem.weights, lam, self.h, self.fit_intercept,
                               self.solver, self.eta0, self._tol(), self.max_iter,
                               self.margin_bounds, bar)

        results = self._fan_out(solve_one, problem.targets, None, "it")
        fitted = self._fitted(results, problem.classes, lam, n, started)
        fitted["coef_"] = widen(fitted["coef_"], columns, problem.X.shape[1])
        return fitted

    def _fitted(self, results, classes, lam, n, started):
        """The fitted attributes from the descent of each binary problem on n rows (warns if
        one did not converge)."""
        info = {
            "objective": [r.objective for r in results],
            "converged": [r.converged for r in results],
            "duality_gap": [r.duality_gap for r in results],
            "relative_change": [r.relative_change for r in results],
            "gradient_norm": [r.gradient_norm for r in results],
            "n_sorts": [r.n_sorts for r in results],
            "step_size": [r.step_size for r in results],
            "examined_fraction": [float(np.mean(r.examined)) / n for r in results],
            "time_fit_s": time.perf_counter() - started,
        }
        if not self.fit_intercept:
            info["suboptimality_bound"] = [r.gradient_norm ** 2 / (2 * lam) for r in results]
        tol = self._tol()
        if any(r.exhausted for r in results):
            warnings.warn(f"{type(self).__name__} did not reach tol={tol} within "
                          f"max_iter={self.max_iter} "
                          "iterations; increase max_iter or tol", ConvergenceWarning)
        elif not all(r.converged for r in results):
            gap = max(r.duality_gap for r in results)
            warnings.warn(f"{type(self).__name__}'s L-BFGS made no more progress at a relative "
                          f"duality gap of {gap:.3g}, short of tol={tol} (in floating point: "
                          "features of very different or extreme scales, or an extreme C, "
                          "can cause it); scale the features (StandardScaler) or raise tol",
                          ConvergenceWarning)
        n_iter = np.array([r.n_iter for r in results])
        if self.verbose:
            print(f"{type(self).__name__}: {n_iter.max()} iterations, "
                  f"{objectives_text([r.objective[-1] for r in results])}, margins computed "
                  f"{100 * np.mean(info['examined_fraction']):.1f} % of n per iteration, "
                  f"{info['time_fit_s']:.2f} s")
        return {
            "classes_": classes, "coef_": np.array([r.w for r in results]),
            "intercept_": np.array([r.b for r in results]), "n_iter_": n_iter,
            "n_examined_": [np.array(r.examined, dtype=np.int64) for r in results],
            "training_info_": info,
        }

    def _decision(self, X):
        return _linear_decision(X, self.coef_)


class PegasosSVC(BaseSVC):
    r"""SVM trained by mini-batch Pegasos, linear or with a kernel, skipping margin
    computations with sampled bounds on the change in the margin.

    Pegasos (Shalev-Shwartz, Singer & Srebro 2007) minimises, with sample
    weights s_i (class weight times sample weight, 1 by default) and
    S = sum_i s_i,

    .. math::

        \frac{\lambda}{2}(\|w\|^2 + b^2) + \frac{1}{S}\sum_{i=1}^n
        s_i \max(0, 1 - y_i(\langle w, x_i\rangle + b)), \qquad \lambda = \frac{1}{SC},

    (the offset regularised as a constant feature 1, as LIBLINEAR does): at
    iteration t it draws ``batch_size`` points with replacement, takes the
    step 1/(lambda t) on the subgradient of those that violate the margin and
    projects onto the ball of radius 1/sqrt(lambda).  The model is the
    average of the last half of the iterates (``average=True``, the default),
    or the last iterate (``average=False``, the paper's).  A weight scales
    the point's part of the subgradient by c_i = s_i n / S (points are still
    drawn uniformly, see
    :mod:`fastsvm.base`); a violator weighing more than 100 times the median point
    takes only as much of its weight as brings its margin to 1 (at least 100 times
    the median's: the importance-aware step of :mod:`fastsvm._importance`, without
    which three rows of weight 10^6 among 2,000 took the test accuracy from 89 % to
    63 %).
    The bounds decide which points violate the margin, which weights do not
    change, so they stay exact.

    With ``margin_bounds=True`` (Guillory & Bilmes, Algorithm 3) the margins
    of all points are stored for a reference model w' and refreshed by the
    adaptive rule of Sec. 3; a drawn point whose bound
    u_i -/+ ||w - w'|| ||x_i|| lies entirely above (or below) 1 is decided
    without computing its margin.  The violating set, and so the model, is
    the same as with ``margin_bounds=False``.  See
    :func:`fastsvm.bounds._kernels.pegasos_steps`.  At one point per step
    (the default ``batch_size``) the paper's rule switches to plain margins
    until the next refresh as soon as an iteration prunes nothing, which
    after a refresh is the first point the bound cannot decide: at the
    defaults the bounds then prune next to nothing, and the one refresh of
    the default 20 passes, n margins after 10 passes' worth of steps, costs
    5 % more margins (``margin_bounds=False`` saves it; the same model; a
    refresh due when fewer than n points are left to draw is skipped: it
    could not pay for itself).  The bounds pay with batches, as in the
    paper's experiments.

    With any other kernel ('rbf', 'poly', 'sigmoid', 'precomputed' or a
    callable, as in SVC) the same iteration runs in the kernel's feature
    space (kernel Pegasos; the offset is the constant feature, i.e. the
    kernel plus 1), w = sum_s beta_s phi(x_s) over the points that ever
    violated the margin, and ||w - w'|| is eq. (6) of the paper, kept up to
    date incrementally.  As the paper says, for kernels only the points
    certain to lie beyond the margin can be skipped (a violator's own margin
    is needed to update ||w||).  It pays when most drawn points are beyond
    the margin by more than ||w - w'|| (separable data, late iterations) and
    the refresh of all n stored margins, n * n_sv kernel values, is rare; it
    costs when the support vectors are a large share of the data (noisy
    sets, small C), since every margin costs n_sv kernel values anyway.  Each
    margin costs O(n_sv d): for large data sets use
    :class:`fastsvm.BudgetSVC`.  The bound is Cauchy-Schwarz in the feature
    space, which an indefinite kernel lacks: 'sigmoid' and 'poly' with
    ``coef0 < 0`` need ``margin_bounds=False``, and the steps then descend no
    convex objective (poly with coef0 = -5 on 1,400 rows of
    ``make_classification``: a constant classifier where SVC scores 95.2 %, with
    a ``ConvergenceWarning``).  A callable is evaluated once into the n x n
    kernel matrix, as SVC does.

    Speed: PegasosSVC is the paper's baseline, the method whose margin
    computations the bounds skip, and is not meant to be fast.  With
    ``kernel='rbf'`` and the other parameters at their defaults it fits
    slower than ``SVC(C=1, gamma='scale')`` on the 12 sets of
    ``benchmarks/defaults_vs_svc.py`` with at least 5,000 rows: 1.5x SVC's
    time on 30,000 rows of a9a, 1.6x on phishing, 5.4x on ijcnn1, 4.9x on
    usps (45 one-vs-one pairs), 16x on dense_wide, with test accuracy within
    1 point of SVC's on all 13 of its sets.  For a fast
    kernel SVM use :class:`fastsvm.BudgetSVC` or :class:`fastsvm.NystromSVC`.

    Batch size.  A step pays its points' margins whatever the batch: n_SV
    kernel values each with a kernel, the row's non-zeros with 'linear',
    where w is kept as a scale times a vector (see
    :func:`fastsvm.bounds._kernels.pegasos_steps`), so that the shrink and the
    projection cost O(1) and no step touches all n_features weights.  So at
    the same number of draws (the default 20 passes) one point per step takes
    k times the steps of batches of k, and Pegasos' distance to the optimum,
    O(1/(lambda T)), falls with the steps T: ``batch_size=1`` is the default
    (the paper's experiments use k = 100 and 1,000).  Against k = 100 at the
    defaults (C = 1), with the RBF kernel (gamma='scale'), on the generated
    sets of ``benchmarks/defaults_vs_svc.py``, phishing and skin_nonskin: a
    lower objective on each (wide_sparse 0.526 against 0.621, dense_wide 0.139
    against 0.181, phishing 0.122 against 0.128), test accuracy within 1 point
    of SVC's where k = 100 was 3.15 and 1.05 points below (wide_sparse
    71.15 %, dense_wide 96.70 %, SVC 71.25 and 97.15 %), and fewer support
    vectors, so faster fits (dense_wide 41 against 79 s, phishing 3.3 against
    9.8 s); on a 4 x 4 checkerboard of 7,000 training rows (data seeds 0-2)
    1.0-3.3 points above SVC where k = 100 was 6.4-7.5 below.  With the
    linear kernel, on the 13 sets of that benchmark: a lower objective on 12
    (a9a 0.368 against 0.670, usps 0.098 against 0.234, covtype 0.584 against
    1.015; sphere 0.994 against 0.993), and test accuracy within 1 point of
    ``LinearSVC(loss='hinge')``'s on all 13 (k = 100: 2.80 points below on
    wide_sparse).  Below 5,000 rows the default T draws at least 100,000
    points, as 1,000 iterations of 100 did: 20 passes of a few hundred rows
    are too few steps (on scikit-learn's iris, 120 training rows, RBF: 0.89
    points below SVC in 3 x 5-fold cross-validation against 0.44 with 100,000
    draws).

    Multi-class problems are split one-vs-one up to 30 classes with a kernel
    (``multi_class='auto'``, as SVC splits them), one-vs-rest with the linear
    kernel (as LinearSVC) and above 30 classes.  A pair (i, j) is the binary
    PegasosSVC of classes i and j fitted on their rows alone, with its own
    lambda = 1 / (C S_pair), step weights and seed; the pairs' votes decide
    (:func:`fastsvm.multiclass.ovo_scores`).  A pair makes as many passes
    over its rows as the default T makes over all rows, so the pairs of k
    classes draw about (k - 1) n points where one-vs-rest draws k n, each
    against a pair's support vectors only.  One-vs-rest fails where a class
    is not one side of a boundary: on three concentric shells
    (``make_gaussian_quantiles``, 6 dimensions and 6 noise features, 4,900
    training rows, seed 0) it scored 75.8 % where SVC scores 91.4 %, as
    ``OneVsRestClassifier(SVC())`` does (12-17 points below SVC over data
    seeds 0-2); one-vs-one scores 91.7 %.  At the defaults, seeds 0-2
    (``benchmarks/multiclass_split.py``), one-vs-one was as accurate as
    one-vs-rest or more on its five sets of up to 26 classes (by 0.15 to
    0.95 points; usps 94.69 % against 94.54 %, SVC 94.72 %) and 2.6-3.6
    times faster on all six (usps 15.8 against 45.5 s); on 40 classes,
    where 'auto' is one-vs-rest, one-vs-rest was a point ahead.

    Averaging.  The last iterate follows the last draws: with small lambda
    (large C, many rows) its steps 1/(lambda t) stay large, and it is
    noisy.  The average of the last half of the iterates (suffix averaging:
    Rakhlin, Shamir & Sridharan, ICML 2012) is the iterate's rate-optimal
    companion, O(1/(lambda T)) from the optimum in expectation where the last
    iterate is only known to be within O(log(T)/(lambda T)), and it costs
    O(1) per violator, kept lazily as the average of the dual variables, from
    which the linear kernel's averaged w = (1/lambda) sum_i alpha_i y_i x_i
    is formed once at the end.  Linear, C = 1, default T, seeds 0-3, on
    ``benchmarks/defaults_vs_svc.py``'s 30,000-row a9a: 84.95-85.02 % test
    accuracy where the last iterate scores 82.85-84.27 %; covtype (30,000
    rows) 76.0 +- 0.1 % against 73.9 +- 1.6 %, the 5-class set of
    ``benchmarks/_generated.py`` 71.4 % against 60.4 % (LinearSVC: 75.6 %,
    70.9 %).  The averaged dual variables are the average's dual point, for
    the certificate below.  The iterates, and so the margins the bounds
    skip, are the same either way.

    Optimality certificate.  Training runs the paper's fixed number of
    iterations T; ``training_info_`` then reports how far the returned model
    is from the optimum P* of the objective above.  With u_i = s_i / S and
    phi'(x) = (phi(x), offset feature), the Lagrange dual of the objective is

    .. math::

        D(\alpha) = \sum_i \alpha_i - \frac{1}{2\lambda}\Big\|\sum_i \alpha_i y_i
        \phi'(x_i)\Big\|^2, \qquad 0 \le \alpha_i \le u_i,

    and D(alpha) <= P* <= P(w) for every w and every alpha in the box (weak
    duality).  Pegasos' iterate is w = (1/lambda) sum_i alpha_i y_i phi'(x_i)
    with the dual variables stepped (and averaged) alongside it, alpha <- (1 - 1/t) alpha +
    1/(t k) sum_{i in A+} c_i e_i, times the projection's factor: without
    projections alpha_i = c_i a_i / (T k), a_i the number of draws of i that
    violated the margin, a running average that can exceed the box (a point
    drawn more often than T k / n times).  Its clipping min(alpha_i, u_i) is
    dual-feasible, and so is its best multiple theta min(alpha, u) in the box
    (see :func:`fastsvm.bounds.solver.hinge_duality`), and ``duality_gap`` =
    P(w) - D(theta min(alpha, u)) >= P(w) - P* is a certificate.  It is
    loose: the average mixes the early iterates' violations and the clipping
    removes mass (a9a, linear, C = 0.1, default T: gap 0.205 for a true
    P(w) - P* of 0.0006, and 0.048 for 0.00013 at 5 T), which is also why it
    is not offered as a stopping rule.  It costs one pass of decision values
    over the training rows after the fit: O(nnz) for the linear kernel
    (milliseconds), n * n_SV kernel values otherwise (``time_certificate_s``:
    7 % of a default RBF fit on 30,000 rows of a9a and on phishing);
    ``compute_gap=False`` skips it.  When the returned model's objective
    exceeds P(0) = 1, the objective of w = 0 (as on unscaled features:
    skin_nonskin's pixel values 0-255 at C = 1 give P(w) ~ 2e4 and 21 % test
    accuracy), the fit warns with a ``ConvergenceWarning``.  Linear fits also
    warn when the features are far from centred (see :func:`mean_share`): a
    common offset slows Pegasos without raising the objective above 1.

    The default T of about 20 passes comes near the optimum, but the
    certificate is too loose to tell (linear, on the 13 sets of
    ``benchmarks/defaults_vs_svc.py``, its gap is 15-100 % of the objective,
    where the test accuracy is within 1 point of ``LinearSVC(loss='hinge')``'s
    on all 13).  On sparse tf-idf-like text (9,800 rows, 10,000 features,
    data seed 0), linear: an objective of 0.552 against the hinge optimum's
    0.533 (10 T: 0.536), and 2.2 points below ``LinearSVC()``, whose squared
    hinge leads the hinge optimum by 2.3 points there (data seeds 1 and 2:
    1.7 and 2.9 below).  Raise ``max_iter`` for the last percents of the
    objective, or use :class:`fastsvm.HuberSVC` (linear, certified by its
    duality gap) or :class:`fastsvm.BudgetSVC`.

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (S C), S the sum of the sample weights.
    kernel : {'linear', 'rbf', 'poly', 'sigmoid', 'precomputed'} or callable, default='linear'
        'linear' trains w itself; the others run kernel Pegasos.
    gamma : float or 'scale', default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Constant of the 'poly' and 'sigmoid' kernels.
    batch_size : int, default=1
        Points per iteration k (see Batch size above; the paper's experiments
        use 100 and 1,000).
    max_iter : int or None, default=None
        Iterations T; None means ceil(max(20 n_samples, 100,000) / k):
        about 20 passes over the data, and at least 100,000 points drawn.
    average : bool, default=True
        Return the average of the iterates of the last T / 2 iterations
        (see Averaging above); False returns the last iterate, as the paper.
    fit_intercept : bool, default=True
        Add a constant feature 1 (a regularised offset).
    class_weight : dict, 'balanced' or None, default=None
        Weight of each class, multiplying its samples' C as in SVC;
        'balanced' is n_samples / (n_classes * bincount(y)), the counts weighted
        by sample_weight.
    margin_bounds : bool, default=True
        Skip margin computations with the bounds (same model, less work).
    compute_gap : bool, default=True
        After the fit, compute the objective, the dual objective and the
        duality gap of the returned model (``training_info_``, see above):
        milliseconds for the linear kernel, one pass of n * n_SV kernel values
        otherwise.  False skips that pass (timing the algorithm alone).
    multi_class : {'auto', 'ovo', 'ovr'}, default='auto'
        More than two classes: one model per pair of classes ('ovo', as SVC)
        or one per class against the rest ('ovr'); 'auto' is 'ovo' up to 30
        classes with a kernel, 'ovr' with the linear kernel (as LinearSVC) and
        above 30 classes (see Multi-class above).  With the linear kernel a
        pair's offset is regularised (the constant feature), which holds back
        pairs of classes far from the origin: 20 standardised classes along a
        line (400 rows) scored 48 % one-vs-one at C = 1 (LinearSVC's pairs,
        whose offset is regularised too, 47 %) and 82 % at C = 100, where
        ``SVC(kernel='linear')``, whose offset is free, scores 67 %.
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit; the result does
        not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the batches.
    verbose : int, default=0
        > 0 shows a progress bar.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class, as SVC's: ``class_weight`` resolved (ones for None).
    n_features_in_ : int
    coef_ : ndarray of shape (n_models, n_features_in_)
        Linear kernel only.  n_models: 1 for two classes, else n_classes
        (one-vs-rest) or n_classes (n_classes - 1) / 2 (one-vs-one, the pairs
        (i, j), i < j, in the order (0, 1), (0, 2), ..., positive for class j).
    intercept_ : ndarray of shape (n_models,)
    gamma_ : float or None
        Kernels only: the numeric gamma used (None for kernels without one).
    support_ : ndarray of shape (n_SV,)
        Kernels only: training indices of the support vectors of all models.
    support_vectors_ : ndarray or CSR matrix of shape (n_SV, n_features_in_)
        Kernels only: the training rows support_, in float64; a CSR matrix for sparse
        input, as SVC's (the rows as given for a callable, empty for 'precomputed').
    dual_coef_ : ndarray of shape (n_models, n_SV)
        Kernels only: f(x) = sum_s dual_coef_[m, s] k(support_vectors_[s], x) + intercept_[m].
    n_support_ : ndarray of shape (n_models,)
        Kernels only: support vectors of each binary model.
    n_iter_ : ndarray of shape (n_models,)
        Iterations T run per binary model.
    training_info_ : dict
        Per model: ``objective``, P(w) of the returned model; ``dual_objective``,
        D(alpha) of Pegasos' dual variables clipped to the box;
        ``duality_gap``, their difference, >= P(w) - P* (see above; these
        three and ``time_certificate_s`` with ``compute_gap=True`` only);
        ``margins_computed`` (of drawn points), ``margins_refreshed``
        (computing the stored margins), ``n_refreshes``, and
        ``examined_fraction``, all margins computed divided by T * batch_size;
        ``time_certificate_s`` (computing the three measures, included in)
        ``time_fit_s``; and ``multi_class``, the split used ('ovo' or 'ovr').

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm import PegasosSVC
    >>> X, y = make_classification(2000, n_features=20, random_state=0)
    >>> clf = PegasosSVC(C=1.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        **KERNEL_CONSTRAINTS,
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "average": ["boolean"],
        "fit_intercept": ["boolean"],
        "margin_bounds": ["boolean"],
        "compute_gap": ["boolean"],
        "multi_class": [StrOptions({"auto", *MULTI_CLASS})],
        "random_state": ["random_state"],
        **COMMON_CONSTRAINTS,
    }

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 batch_size=1, max_iter=None, average=True, fit_intercept=True,
                 class_weight=None, margin_bounds=True, compute_gap=True, multi_class="auto",
                 n_jobs=None, random_state=None, verbose=0):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.average = average
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.margin_bounds = margin_bounds
        self.compute_gap = compute_gap
        self.multi_class = multi_class
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _multi_class(self, n_classes):
        return resolve_multi_class(pegasos_multi_class(self.multi_class, self._kernel_param()),
                                   n_classes)

    def _n_iter(self, n, n_samples):
        """Iterations T of a binary problem on n of the fit's ``n_samples`` rows
        (``max_iter``; None: about 20 passes, and at least ``MIN_PEGASOS_DRAWS`` points
        drawn on all rows: a one-vs-one pair makes as many passes over its rows as that)."""
        if self.max_iter is not None:
            return self.max_iter
        draws = max(DEFAULT_PEGASOS_EPOCHS * n, -(-MIN_PEGASOS_DRAWS * n // n_samples))
        return -(-draws // self.batch_size)

    def _fit(self, problem):
        """Mini-batch Pegasos (linear or kernel) on each binary problem: one-vs-rest models
        (or the one of two classes) together, one-vs-one pairs each on its own rows."""
        split = self._multi_class(len(problem.classes))
        if len(problem.classes) > 2 and split == "ovo":
            fitted = self._fit_pairs(problem)
        else:
            fitted = self._fit_models(problem, random_seeds(self.random_state, problem.n_models),
                                      self._n_iter(problem.n_samples, problem.n_samples))
        fitted["training_info_"]["multi_class"] = split
        return fitted

    def _fit_pairs(self, problem):
        """One binary model per pair of classes (i, j), fitted as a binary PegasosSVC on the
        two classes' rows alone (its own lambda = 1 / (C S_pair), step weights and T), with
        the pairs' support vectors, coefficients and ``training_info_`` put together as one
        model (see :mod:`fastsvm.multiclass`)."""
        started = time.perf_counter()
        pairs = ovo_pairs(len(problem.classes))
        seeds = random_seeds(self.random_state, len(pairs))
        n_class = np.bincount(problem.y, minlength=len(problem.classes))
        n_iter = [self._n_iter(n_class[i] + n_class[j], problem.n_samples) for i, j in pairs]

        def fit_pair(item, bar):
            (i, j), seed, T = item
            return self._fit_models(problem.pair(i, j), [seed], T, bar)

        if self._kernel_param() == "linear":
            check_dense_vectors(len(pairs), problem.X.shape[1], what=COEF)
        fits = self._fan_out(fit_pair, zip(pairs, seeds, n_iter), sum(n_iter), "it")
        fitted = {"classes_": problem.classes,
                  "n_iter_": np.concatenate([f["n_iter_"] for f in fits]),
                  "intercept_": np.concatenate([f["intercept_"] for f in fits])}
        if "coef_" in fits[0]:
            fitted["coef_"] = np.vstack([f["coef_"] for f in fits])
        else:   # a pair's support_ index this problem's rows (see TrainingProblem.pair)
            support = np.unique(np.concatenate([f["support_"] for f in fits]))
            dual_coef = np.zeros((len(pairs), len(support)))
            for m, f in enumerate(fits):
                dual_coef[m, np.searchsorted(support, f["support_"])] = f["dual_coef_"][0]
            fitted.update(gamma_=problem.kernel.gamma, support_=problem.rows[support],
                          support_vectors_=problem.support_vectors(support),
                          dual_coef_=dual_coef,
                          n_support_=np.concatenate([f["n_support_"] for f in fits]))
        info = {key: [v for f in fits for v in f["training_info_"][key]]
                for key, value in fits[0]["training_info_"].items() if isinstance(value, list)}
        if self.compute_gap:
            info["time_certificate_s"] = sum(f["training_info_"]["time_certificate_s"]
                                             for f in fits)
        info["time_fit_s"] = time.perf_counter() - started
        fitted["training_info_"] = info
        if self.verbose:
            report = "" if not self.compute_gap else (
                f", {objectives_text(info['objective'])}, duality gap at most "
                f"{max(info['duality_gap']):.3g}")
            print(f"PegasosSVC: {len(pairs)} one-vs-one pairs, {fitted['n_iter_'].sum()} "
                  f"iterations of {self.batch_size}{report}, {info['time_fit_s']:.2f} s")
        return fitted

    def _fit_models(self, problem, seeds, n_iter, bar=None):
        """``n_iter`` iterations of mini-batch Pegasos on each binary problem of ``problem``
        (``seeds``: one each): the fitted attributes.  ``bar``: a one-vs-one pair's fit,
        which reports to the pairs' progress bar and prints nothing."""
        started = time.perf_counter()
        kernel = problem.kernel
        linear = kernel.name == "linear"
        if not linear and not kernel.psd and self.margin_bounds:
            raise ValueError(f"kernel={self.kernel!r}"
                             f"{' with coef0 < 0' if kernel.name == 'poly' else ''} is not "
                             "positive semi-definite, so it has no feature space in which the "
                             "margin bounds (Cauchy-Schwarz) hold; use margin_bounds=False")
        n = problem.n_samples
        lam = problem.lam(self.C)
        k = self.batch_size
        bias_feature = 1.0 if self.fit_intercept else 0.0
        weight = problem.step_weights
        if linear:
            check_dense_vectors(problem.n_models, problem.X.shape[1], what=COEF)
            X, columns = used_columns(problem.X)
            packed = PackedData.from_matrix(X)
        else:
            if not kernel.on_gram:
                check_dense_vectors(min(n, n_iter * k), problem.X.shape[1])
            packed = PackedData.from_matrix(problem.gram() if kernel.on_gram else problem.X)
            diagonal = problem.diagonal(np.arange(n))

        def solve_one(item, bar):
            y_bin, seed = item
            rng = np.random.default_rng(seed)
            if linear:
                return solve_pegasos(packed, y_bin, weight, lam, k, n_iter, bias_feature,
                                     self.margin_bounds, rng, bar, self.average)
            return solve_kernel_pegasos(packed, y_bin, weight, lam, kernel, diagonal, k, n_iter,
                                        bias_feature ** 2, self.margin_bounds, rng, bar,
                                        self.average)

        if bar is None:
            results = self._fan_out(solve_one, zip(problem.targets, seeds),
                                    n_iter * problem.n_models, "it")
        else:
            results = [solve_one(item, bar) for item in zip(problem.targets, seeds)]
        fitted = {"classes_": problem.classes}
        if linear:
            W = np.array([r.w for r in results])
            fitted.update(coef_=widen(W[:, :-1], columns, problem.X.shape[1]),
                          intercept_=W[:, -1] * bias_feature)
        else:
            support = np.unique(np.concatenate([r.support for r in results]))
            dual_coef = np.zeros((len(results), len(support)))
            for m, r in enumerate(results):
                dual_coef[m, np.searchsorted(support, r.support)] = r.dual
            fitted.update(gamma_=kernel.gamma, support_=problem.rows[support],
                          support_vectors_=problem.support_vectors(support),
                          dual_coef_=dual_coef, intercept_=bias_feature ** 2 * dual_coef.sum(axis=1),
                          n_support_=np.array([len(r.support) for r in results]))
        counters = [r.counters for r in results]
        fitted["n_iter_"] = np.array([r.n_iter for r in results])
        info = {
            "margins_computed": [int(c[K.PC_EXAMINED]) for c in counters],
            "margins_refreshed": [int(c[K.PC_REFRESHED]) for c in counters],
            "n_refreshes": [int(c[K.PC_REFRESHES]) for c in counters],
            "examined_fraction": [float(c[K.PC_EXAMINED] + c[K.PC_REFRESHED]) / (n_iter * k)
                                  for c in counters],
        }
        report, above_zero = "", False
        if self.compute_gap:
            solved = time.perf_counter()
            primal, dual = _pegasos_certificate(problem, results, fitted, lam, bias_feature)
            info.update(objective=primal.tolist(), dual_objective=dual.tolist(),
                        duality_gap=(primal - dual).tolist(),
                        time_certificate_s=time.perf_counter() - solved)
            report = (f", {objectives_text(primal)}, duality gap at most "
                      f"{(primal - dual).max():.3g}")
            above_zero = bool(np.any(primal > 1.0 + 1e-9))
            if above_zero:
                warnings.warn(
                    f"PegasosSVC did not converge: the returned model's objective "
                    f"{primal.max():.4g} is above 1, that of w = 0 (its predictions may be "
                    "worse than a constant); Pegasos' steps 1/(lambda t) need features of "
                    "moderate norm: scale them (for example StandardScaler), lower C or "
                    "raise max_iter", ConvergenceWarning)
        if linear and not above_zero:
            share = mean_share(X, problem.weights)     # on the used columns only
            if share > UNCENTRED_SHARE_WARN:
                warnings.warn(
                    f"PegasosSVC may be far from the optimum: the features are far from "
                    f"centred (their mean holds {share:.2%} of the rows' squared norm), and "
                    "Pegasos' steps 1/(lambda t) converge slowly on rows of large norm; "
                    "centre the features (for example StandardScaler) or use HuberSVC",
                    ConvergenceWarning)
        info["time_fit_s"] = time.perf_counter() - started
        fitted["training_info_"] = info
        if self.verbose and bar is None:
            print(f"PegasosSVC: {n_iter} iterations of {k}, margins computed "
                  f"{100 * np.mean(info['examined_fraction']):.1f} % of drawn points"
                  f"{report}, {info['time_fit_s']:.2f} s")
        return fitted

    def _decision(self, X):
        if self._kernel_param() == "linear":
            return _linear_decision(X, self.coef_)
        return self._expansion_decision(X)
