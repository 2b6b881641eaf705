"""HuberSVC and PegasosSVC: SVMs that skip margin computations with bounds on the
change in the margin (Guillory & Bilmes)."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from .._packed import PackedData
from .._validation import check_csr_format
from ..kernels import rbf_expansion, resolve_gamma
from ..multiclass import binary_targets, labels_from_decision
from . import _kernels as K
from .solver import solve_huber_gd, solve_kernel_pegasos, solve_pegasos

#: PegasosSVC's default number of iterations: enough for this many passes over
#: the data, and at least ``MIN_PEGASOS_ITER``.
DEFAULT_PEGASOS_EPOCHS = 20
MIN_PEGASOS_ITER = 1000


class _LinearOneVsRest(ClassifierMixin, BaseEstimator):
    """Validation, one-vs-rest fan-out and the linear decision function of both estimators."""

    def _prepare(self, X, y):
        """Validate (X, y), set ``classes_``; return X, its packed form and the +-1 targets."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C")
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; got 1 "
                             f"class: {self.classes_[0]!r}")
        X = check_csr_format(X)
        return X, PackedData.from_matrix(X), binary_targets(y_enc, len(self.classes_))

    def _solve_all(self, solve_one, targets, total, unit):
        """Run ``solve_one(y_bin, index, bar)`` for every binary problem, in threads."""
        with tqdm(total=total * len(targets), disable=not self.verbose, unit=unit,
                  unit_scale=True, desc=type(self).__name__, leave=False) as bar:
            # the compiled kernels release the GIL, so threads solve the binary problems in parallel
            return Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(solve_one)(y_bin, index, bar) for index, y_bin in enumerate(targets))

    def decision_function(self, X):
        """Decision values <w, x> + b of each binary model.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        X = self._validate_for_predict(X)
        decision = np.asarray(safe_sparse_dot(X, self.coef_.T), dtype=np.float64) + self.intercept_
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def _validate_for_predict(self, X):
        check_is_fitted(self, "intercept_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return check_csr_format(X)

    def predict(self, X):
        """Predicted class labels."""
        return labels_from_decision(self.decision_function(X), self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class HuberSVC(_LinearOneVsRest):
    r"""Linear SVM with a Huber-smoothed hinge, trained by gradient descent that skips
    margin computations with bounds on the change in the margin.

    Guillory & Bilmes, "Practical Methods for Exploiting Bounds on Change in
    the Margin", Sec. 4.2.  Objective (the paper's eq. 1, averaged):

    .. math::

        \min_{w, b} \frac{\lambda}{2}\|w\|^2 + \frac{1}{n}\sum_{i=1}^n
        l_h(y_i(\langle w, x_i\rangle + b)), \qquad \lambda = \frac{1}{nC},

    with the Huber loss of eq. (5): :math:`l_h(z) = 1 - z` for
    :math:`z \le 1 - h`, :math:`(1 + h - z)^2 / (4h)` for :math:`|z - 1| < h`,
    0 for :math:`z \ge 1 + h`.  Multiplied by nC this is the SVM objective
    :math:`\frac12\|w\|^2 + C\sum_i l_h` with an unregularised offset; as
    h -> 0 it becomes the hinge-loss SVM.

    Gradient descent from w = 0, b = 0 with the paper's step rule: the step
    starts at ``eta0`` and is halved whenever the objective rose; training
    stops when the objective changed by at most ``tol`` relative to its
    previous value, or after ``max_iter`` iterations.

    With ``margin_bounds=True`` each iteration computes the loss and gradient
    by Algorithm 2 (adapted to the Huber loss, with separate lists of
    positive and negative points for the offset): points whose margin bound
    falls entirely in the linear or zero piece of the loss are accounted for
    by stored prefix sums instead of being visited.  The data is re-sorted
    (Algorithm 1) by the adaptive rule of Sec. 3, and an iteration that skips
    nothing switches to plain evaluation until the next re-sort.  The method
    is exact: loss, gradient and model equal those of ``margin_bounds=False``
    up to rounding.  See :mod:`fastsvm.bounds._kernels`.

    Multi-class problems are split one-vs-rest.  Training is deterministic.

    Same model with and without bounds: each iteration's loss and gradient
    agree to rounding, but the first steps with ``eta0=100`` are unstable
    and can amplify a rounding difference until the two runs halve the step
    at different iterations; they then stop at different iterates of about
    the same objective.  On the benchmark sets covtype, a9a and ijcnn1 the
    paths coincide (see ``benchmarks/results/bounds_paper_tables.md``).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (n_samples * C).
    h : float, default=0.01
        Half-width of the Huber loss's quadratic piece (the paper's h).
    tol : float, default=1e-5
        Relative change of the objective at which training stops (the
        paper's epsilon; its Table 2 uses 1e-4, 1e-5 and 1e-6).
    max_iter : int, default=20000
        Maximum number of gradient steps per binary problem.
    eta0 : float, default=100.0
        First step size.
    fit_intercept : bool, default=True
        Fit the (unregularised) offset b; False keeps b = 0.
    margin_bounds : bool, default=True
        Skip margin computations with the bounds (same model, less work).
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit.
    verbose : int, default=0
        > 0 shows a progress bar (one tick per gradient step).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    coef_ : ndarray of shape (n_models, n_features_in_)
        1 model for 2 classes, else n_classes.
    intercept_ : ndarray of shape (n_models,)
    n_iter_ : ndarray of shape (n_models,)
        Objective evaluations (gradient steps + 1) per binary model.
    n_examined_ : list of ndarray
        Per binary model, the number of points whose margin was computed at
        each iteration (n_samples at re-sorts and plain iterations).
    training_info_ : dict
        Per model: ``objective`` after each iteration, ``converged``,
        ``n_sorts``, final ``step_size``; ``examined_fraction``, the mean of
        ``n_examined_`` over iterations divided by n_samples; ``time_fit_s``.

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
        "h": [Interval(Real, 0, 1, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "margin_bounds": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, C=1.0, h=0.01, tol=1e-5, max_iter=20000, eta0=100.0, fit_intercept=True,
                 margin_bounds=True, n_jobs=None, verbose=0):
        self.C = C
        self.h = h
        self.tol = tol
        self.max_iter = max_iter
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.margin_bounds = margin_bounds
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit by gradient descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        started = time.perf_counter()
        _, packed, targets = self._prepare(X, y)
        n = packed.n_samples
        lam = 1.0 / (n * self.C)

        def solve_one(y_bin, index, bar):
            return solve_huber_gd(packed, y_bin, lam, self.h, self.fit_intercept, self.eta0,
                                  self.tol, self.max_iter, self.margin_bounds, bar)

        results = self._solve_all(solve_one, targets, self.max_iter, "it")
        self.coef_ = np.array([r.w for r in results])
        self.intercept_ = np.array([r.b for r in results])
        self.n_iter_ = np.array([r.n_iter for r in results])
        self.n_examined_ = [np.array(r.examined, dtype=np.int64) for r in results]
        self.training_info_ = {
            "objective": [r.objective for r in results],
            "converged": [r.converged for r in results],
            "n_sorts": [r.n_sorts for r in results],
            "step_size": [r.step_size for r in results],
            "examined_fraction": [float(np.mean(r.examined)) / n for r in results],
            "time_fit_s": time.perf_counter() - started,
        }
        if not all(r.converged for r in results):
            warnings.warn(f"HuberSVC did not reach tol={self.tol} within max_iter={self.max_iter} "
                          "iterations; increase max_iter or tol", ConvergenceWarning)
        if self.verbose:
            info = self.training_info_
            print(f"HuberSVC: {self.n_iter_.max()} iterations, objective "
                  f"{results[0].objective[-1]:.6g}, margins computed "
                  f"{100 * np.mean(info['examined_fraction']):.1f} % of n per iteration, "
                  f"{info['time_fit_s']:.2f} s")
        return self


class PegasosSVC(_LinearOneVsRest):
    r"""SVM trained by mini-batch Pegasos, linear or with the RBF kernel, skipping margin
    computations with sampled bounds on the change in the margin.

    Pegasos (Shalev-Shwartz, Singer & Srebro 2007) minimises

    .. math::

        \frac{\lambda}{2}(\|w\|^2 + b^2) + \frac{1}{n}\sum_{i=1}^n
        \max(0, 1 - y_i(\langle w, x_i\rangle + b)), \qquad \lambda = \frac{1}{nC},

    (the offset regularised as a constant feature 1, as LIBLINEAR does): at
    iteration t it draws ``batch_size`` points with replacement, takes the
    step 1/(lambda t) on the subgradient of those that violate the margin and
    projects onto the ball of radius 1/sqrt(lambda).  The last iterate is the
    model.

    With ``margin_bounds=True`` (Guillory & Bilmes, Algorithm 3) the margins
    of all points are stored for a reference model w' and refreshed by the
    adaptive rule of Sec. 3; a drawn point whose bound
    u_i -/+ ||w - w'|| ||x_i|| lies entirely above (or below) 1 is decided
    without computing its margin.  The violating set, and so the model, is
    the same as with ``margin_bounds=False``.  See
    :func:`fastsvm.bounds._kernels.pegasos_steps`.

    With ``kernel='rbf'`` the same iteration runs in the kernel's feature
    space (kernel Pegasos; the offset is the constant feature, i.e. the
    kernel plus 1), w = sum_s alpha_s phi(x_s) over the points that ever
    violated the margin, and ||w - w'|| is eq. (6) of the paper, kept up to
    date incrementally.  As the paper says, for kernels only the points
    certain to lie beyond the margin can be skipped (a violator's own margin
    is needed to update ||w||).  It pays when most drawn points are beyond
    the margin by more than ||w - w'|| (separable data, late iterations) and
    the refresh of all n stored margins, n * n_sv kernel values, is rare; it
    costs when the support vectors are a large share of the data (noisy
    sets, small C), since every margin costs n_sv kernel values anyway.
    Each margin costs O(n_sv d): for large data sets use
    :class:`fastsvm.BudgetSVC`.

    Multi-class problems are split one-vs-rest.  The last iterate is the
    model; with small lambda (large C) it is noisy (a9a, C = 1: 78 to 85 %
    test accuracy over seeds at the default T, against 84.5-85 % at C = 0.1).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (n_samples * C).
    kernel : {'linear', 'rbf'}, default='linear'
    gamma : float or 'scale', default='scale'
        RBF width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    batch_size : int, default=100
        Points per iteration (the paper's k).
    max_iter : int or None, default=None
        Iterations T; None means max(1000, ceil(20 n_samples / batch_size)),
        about 20 passes over the data.
    fit_intercept : bool, default=True
        Add a constant feature 1 (a regularised offset).
    margin_bounds : bool, default=True
        Skip margin computations with the bounds (same model, less work).
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
    n_features_in_ : int
    coef_ : ndarray of shape (n_models, n_features_in_)
        Linear kernel only.
    intercept_ : ndarray of shape (n_models,)
    gamma_ : float
        RBF kernel only: the numeric gamma used.
    support_ : ndarray of shape (n_SV,)
        RBF kernel only: training indices of the support vectors of all models.
    support_vectors_ : ndarray of shape (n_SV, n_features_in_)
        RBF kernel only.
    dual_coef_ : ndarray of shape (n_models, n_SV)
        RBF kernel only: f(x) = sum_s dual_coef_[m, s] k(support_vectors_[s], x) + intercept_[m].
    n_iter_ : ndarray of shape (n_models,)
        Iterations T run per binary model.
    training_info_ : dict
        Per model: ``margins_computed`` (of drawn points), ``margins_refreshed``
        (computing the stored margins), ``n_refreshes``, and
        ``examined_fraction``, all margins computed divided by T * batch_size;
        ``time_fit_s``.

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
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "margin_bounds": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, C=1.0, kernel="linear", gamma="scale", batch_size=100, max_iter=None,
                 fit_intercept=True, margin_bounds=True, n_jobs=None, random_state=None, verbose=0):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.margin_bounds = margin_bounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit by mini-batch Pegasos.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        started = time.perf_counter()
        X, packed, targets = self._prepare(X, y)
        n = packed.n_samples
        lam = 1.0 / (n * self.C)
        k = self.batch_size
        n_iter = (max(MIN_PEGASOS_ITER, -(-DEFAULT_PEGASOS_EPOCHS * n // k))
                  if self.max_iter is None else self.max_iter)
        bias_feature = 1.0 if self.fit_intercept else 0.0
        seeds = check_random_state(self.random_state).randint(np.iinfo(np.int32).max,
                                                              size=len(targets))

        if self.kernel == "rbf":
            self.gamma_ = resolve_gamma(self.gamma, X)

        def solve_one(y_bin, index, bar):
            rng = np.random.default_rng(seeds[index])
            if self.kernel == "rbf":
                return solve_kernel_pegasos(packed, y_bin, lam, self.gamma_, k, n_iter,
                                            bias_feature ** 2, self.margin_bounds, rng, bar)
            return solve_pegasos(packed, y_bin, lam, k, n_iter, bias_feature, self.margin_bounds,
                                 rng, bar)

        results = self._solve_all(solve_one, targets, n_iter, "it")
        for stale in (("coef_",) if self.kernel == "rbf"
                      else ("gamma_", "support_", "support_vectors_", "dual_coef_")):
            self.__dict__.pop(stale, None)          # from an earlier fit with the other kernel
        if self.kernel == "rbf":
            self.support_ = np.unique(np.concatenate([r.support for r in results]))
            self.support_vectors_ = (X[self.support_].toarray() if sp.issparse(X)
                                     else np.array(X[self.support_], dtype=np.float64))
            self.dual_coef_ = np.zeros((len(results), len(self.support_)))
            for m, r in enumerate(results):
                self.dual_coef_[m, np.searchsorted(self.support_, r.support)] = r.dual
            self.intercept_ = bias_feature ** 2 * self.dual_coef_.sum(axis=1)
        else:
            W = np.array([r.w for r in results])
            self.coef_ = W[:, :-1]
            self.intercept_ = W[:, -1] * bias_feature
        self.n_iter_ = np.array([r.n_iter for r in results])
        counters = [r.counters for r in results]
        self.training_info_ = {
            "margins_computed": [int(c[K.PC_EXAMINED]) for c in counters],
            "margins_refreshed": [int(c[K.PC_REFRESHED]) for c in counters],
            "n_refreshes": [int(c[K.PC_REFRESHES]) for c in counters],
            "examined_fraction": [float(c[K.PC_EXAMINED] + c[K.PC_REFRESHED]) / (n_iter * k)
                                  for c in counters],
            "time_fit_s": time.perf_counter() - started,
        }
        if self.verbose:
            print(f"PegasosSVC: {n_iter} iterations of {k}, margins computed "
                  f"{100 * np.mean(self.training_info_['examined_fraction']):.1f} % of drawn "
                  f"points, {self.training_info_['time_fit_s']:.2f} s")
        return self

    def decision_function(self, X):
        """Decision values of each binary model.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        if self.kernel == "linear":
            return super().decision_function(X)
        X = self._validate_for_predict(X)
        decision = rbf_expansion(X, self.support_vectors_, self.dual_coef_.T, self.gamma_)
        decision += self.intercept_
        return decision[:, 0] if decision.shape[1] == 1 else decision
