"""NystromSVC: the scikit-learn estimator for Snacks (Nystrom embedding + ASSG)."""

import time
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import TransformerTags, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from .. import _options
from .._validation import check_csr_format
from ..kernels import KERNELS, resolve_gamma
from ..multiclass import binary_targets, labels_from_decision
from .embedding import NystromMap, sample_landmarks
from .solver import solve_assg, solve_pegasos


#: Default stage length T is max(n_samples, MIN_STAGE_STEPS).
MIN_STAGE_STEPS = 50_000


class NystromSVC(ClassifierMixin, BaseEstimator):
    r"""Kernel SVM on a Nystrom embedding, trained by accelerated stochastic subgradient (Snacks).

    Tanji, Della Vecchia, Glineur & Villa, "Snacks: a fast large-scale kernel
    SVM solver" (ECC 2023).  ``fit`` draws ``n_components`` landmarks, embeds
    every training point by the Nystrom map
    :math:`x \mapsto (K_{mm}^{1/2})^+ k_m(x)` (Sec. II-A, see
    :mod:`fastsvm.nystrom.embedding`) and solves the linear SVM on the
    embedding (problem "Primal Nystrom L2-SVM") by ASSG (Algorithm 1, see
    :func:`fastsvm.nystrom.solver.solve_assg`) or, as the paper's baseline,
    by Pegasos.

    Objective, with the offset b regularised like LIBLINEAR's (a constant
    feature 1 when ``fit_intercept``):

    .. math::

        \min_{w, b} \frac{\lambda}{2}(\|w\|^2 + b^2) + \frac{1}{n}\sum_{i=1}^n
        \max(0, 1 - y_i(\langle w, \mathbb{x}_i\rangle + b)),
        \qquad \lambda = \frac{1}{nC}.

    Multiplied by nC this is ``LinearSVC(C=C, loss='hinge')`` on the
    embedding, and as m -> n it becomes ``SVC(C=C)`` with a regularised offset.
    (The paper writes :math:`\lambda\|w\|^2` but differentiates it as
    :math:`\lambda w`: its lambda is our lambda.)

    Stopping: the full training objective is evaluated after each stage of
    T = ``stage_steps`` steps; training stops when it changed by at most
    ``tol`` relative to its value, or after ``max_stages`` stages.  The paper
    runs a fixed K x T budget: ``tol=None`` does that.

    Multi-class problems are split one-vs-rest (the paper is binary only)
    over one shared embedding; the class with the largest decision value wins.

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (n_samples * C).
    kernel : {'rbf', 'laplacian', 'poly', 'linear'}, default='rbf'
    gamma : float or 'scale', default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Constant of the 'poly' kernel.
    n_components : int, default=1000
        Number of landmarks m (at most n_samples).  The embedding has
        r <= m columns: eigenvalues of K_mm below a relative 1e-7 are cut off.
    landmarks : {'uniform', 'leverage'}, default='uniform'
        Uniform sampling without replacement, or approximate ridge
        leverage-score sampling (see
        :func:`fastsvm.nystrom.embedding.sample_landmarks`).
    solver : {'assg', 'pegasos'}, default='assg'
        ASSG (Snacks) or Pegasos (step 1/(lambda t), ball projection).
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
        Steps per stage T; None means max(n_samples, 50000).  The paper's
        settings use 35,000 to 80,000 steps per stage; with fewer, each stage
        ends further from the optimum (usps, 7,291 rows: 93.0 % test accuracy
        with T = n against 94.1 % with T = 50,000 and 94.3 % for LIBLINEAR's
        optimum).  Also Pegasos' steps between two checks of the stopping rule.
    max_stages : int, default=20
        Maximum number of stages K.
    tol : float or None, default=1e-3
        Relative change of the training objective between two stages below
        which training stops; None runs all ``max_stages`` stages.
    fit_intercept : bool, default=True
        Add a constant feature 1 (a regularised offset, as LIBLINEAR does).
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
    n_features_in_ : int
    gamma_ : float
        The numeric kernel parameter used.
    components_ : ndarray or csr_matrix of shape (n_landmarks, n_features_in_)
        The landmarks (rows of the training data).
    component_indices_ : ndarray of shape (n_landmarks,)
        Their row indices in the training data.
    normalization_ : ndarray of shape (n_landmarks, n_components_)
        P = U_r diag(s_r)^(-1/2): the embedding of x is k_m(x)^T P.
    n_components_ : int
        r, the dimension of the embedding.
    coef_ : ndarray of shape (n_models, n_components_)
        Weights on the embedding (1 model for 2 classes, else n_classes).
    intercept_ : ndarray of shape (n_models,)
    n_iter_ : ndarray of shape (n_models,)
        Stages run per binary model.
    training_info_ : dict
        Times of landmark sampling, embedding and solving, the embedding's
        shape and bytes, and per model the objective after each stage,
        margin violations per stage, whether ``tol`` was reached and (ASSG)
        the step size eta_1 used.

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
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"uniform", "leverage"})],
        "solver": [StrOptions({"assg", "pegasos"})],
        "eta0": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "radius0": [Interval(Real, 0, None, closed="neither"), None],
        "omega": [Interval(Real, 1, None, closed="neither")],
        "stage_steps": [Interval(Integral, 1, None, closed="left"), None],
        "max_stages": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 n_components=1000, landmarks="uniform", solver="assg", eta0="auto", radius0=None,
                 omega=2.0, stage_steps=None, max_stages=20, tol=1e-3, fit_intercept=True,
                 n_jobs=None, random_state=None, verbose=0):
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
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Sample landmarks, embed X and solve the linear SVM on the embedding.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._fit(X, y)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y):
        """Fit on (X, y) and return the embedding of X (reused from the fit when X is float32).

        Returns
        -------
        ndarray of shape (n_samples, n_components_), X's float type
        """
        X, Phi = self._fit(X, y)
        return Phi if Phi.dtype == X.dtype else self.transform(X)

    def _fit(self, X, y):
        """``fit``; returns the validated X and its embedding."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C")
        X = check_csr_format(X)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"NystromSVC needs samples of at least 2 classes; got 1 class: "
                             f"{self.classes_[0]!r}")
        n = X.shape[0]
        if self.n_components > n:
            raise ValueError(f"n_components={self.n_components} is larger than n_samples={n}: "
                             "the landmarks are drawn from the training rows without "
                             "replacement; use n_components <= n_samples")
        rng = check_random_state(self.random_state)
        seed_landmarks, *seeds = rng.randint(np.iinfo(np.int32).max,
                                             size=1 + (1 if len(self.classes_) == 2 else
                                                       len(self.classes_)))
        info = {}
        started = time.perf_counter()
        self.gamma_ = resolve_gamma(self.gamma, X) if self.kernel != "linear" else None
        params = dict(kernel=self.kernel, gamma=self.gamma_, degree=self.degree,
                      coef0=self.coef0)
        idx = sample_landmarks(X, self.n_components, self.landmarks,
                               np.random.default_rng(seed_landmarks), **params)
        self.component_indices_ = idx
        self.components_ = X[idx]
        nystrom_map = NystromMap.fit(self.components_, **params)
        self.normalization_ = nystrom_map.projection
        self.n_components_ = nystrom_map.n_components
        info["time_landmarks_s"] = time.perf_counter() - started

        start = time.perf_counter()
        with tqdm(total=n, disable=not self.verbose, unit="row", unit_scale=True,
                  desc="NystromSVC embedding", leave=False) as bar:
            Phi = nystrom_map.transform(X, dtype=np.dtype(_options.EMBED_DTYPE), progress=bar)
        info["time_embedding_s"] = time.perf_counter() - start
        info["embedding_shape"] = list(Phi.shape)
        info["embedding_bytes"] = int(Phi.nbytes)

        start = time.perf_counter()
        results = self._solve(Phi, binary_targets(y_enc, len(self.classes_)), seeds)
        info["time_solver_s"] = time.perf_counter() - start
        info["time_fit_s"] = time.perf_counter() - started
        info["objective"] = [r.objective for r in results]
        info["violations"] = [r.violations for r in results]
        info["converged"] = [r.converged for r in results]
        if self.solver == "assg":
            info["eta0"] = [r.eta0 for r in results]
        W = np.array([r.w for r in results])
        bias_feature = 1.0 if self.fit_intercept else 0.0
        self.coef_ = W[:, :-1]
        self.intercept_ = W[:, -1] * bias_feature
        self.n_iter_ = np.array([r.n_stages for r in results])
        self.training_info_ = info
        if self.verbose:
            print(f"NystromSVC: embedding {Phi.shape[0]} x {Phi.shape[1]} in "
                  f"{info['time_embedding_s']:.2f} s, {self.solver} {self.n_iter_.max()} stages "
                  f"in {info['time_solver_s']:.2f} s, objective {results[0].objective[-1]:.5g}")
        return X, Phi

    def _solve(self, Phi, targets, seeds):
        n = Phi.shape[0]
        lam = 1.0 / (n * self.C)
        bias_feature = 1.0 if self.fit_intercept else 0.0
        steps = max(n, MIN_STAGE_STEPS) if self.stage_steps is None else self.stage_steps
        radius0 = np.sqrt(2.0 / lam) if self.radius0 is None else self.radius0
        total = steps * self.max_stages * len(targets)
        with tqdm(total=total, disable=not self.verbose, unit="step", unit_scale=True,
                  desc=f"NystromSVC {self.solver}", leave=False) as bar:
            def solve_one(y_bin, seed):
                rng = np.random.default_rng(seed)
                if self.solver == "assg":
                    eta0 = None if self.eta0 == "auto" else self.eta0
                    return solve_assg(Phi, y_bin, bias_feature, lam, eta0, radius0,
                                      self.omega, steps, self.max_stages, self.tol, rng, bar)
                return solve_pegasos(Phi, y_bin, bias_feature, lam, steps, self.max_stages,
                                     self.tol, rng, bar)

            # the compiled steps release the GIL, so threads solve the binary problems in parallel
            return Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(solve_one)(y_bin, seed) for y_bin, seed in zip(targets, seeds))

    def transform(self, X):
        """The Nystrom embedding of X, ndarray of shape (n_samples, n_components_), X's float type."""
        X = self._validate_for_predict(X)
        return self._nystrom_map().transform(X, dtype=X.dtype)

    def decision_function(self, X):
        """Decision values <w, embedding(x)> + b of each binary model.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        X = self._validate_for_predict(X)
        decision = self._nystrom_map().apply(X, self.coef_.T) + self.intercept_
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def _validate_for_predict(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return check_csr_format(X)

    def _nystrom_map(self):
        return NystromMap(self.components_, self.normalization_, self.kernel, self.gamma_,
                          self.degree, self.coef0)

    def predict(self, X):
        """Predicted class labels."""
        return labels_from_decision(self.decision_function(X), self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # transform() keeps X's float type
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags
