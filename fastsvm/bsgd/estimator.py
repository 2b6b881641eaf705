"""BudgetSVC: the scikit-learn estimator for budgeted SGD kernel SVM training."""

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from .._packed import PackedData
from .._validation import check_csr_format
from ..kernels import rbf_expansion, resolve_gamma
from ..merge import METHODS
from ..merge.table import load_tables
from ..multiclass import binary_targets, labels_from_decision
from . import _kernels
from .solver import BSGDState, hinge_offset, run_pass, summarize

MAINTENANCE = {"merge": _kernels.MERGE, "remove": _kernels.REMOVE}


class BudgetSVC(ClassifierMixin, BaseEstimator):
    r"""Kernel SVM trained by budgeted stochastic gradient descent (BSGD).

    Pegasos-style SGD on the primal SVM objective with a Gaussian kernel,
    keeping at most ``budget`` support vectors: whenever a margin violation
    would make it B+1, two support vectors are merged into one (or, with
    ``maintenance='remove'``, the smallest is dropped).  The merge coefficient
    comes from golden section search or from a precomputed lookup table
    (Glasmachers & Qaadan, "Speeding Up Budgeted Stochastic Gradient Descent
    SVM Training with Precomputed Golden Section Search", Alg. 1 and Sec. 3;
    BSGD itself: Wang, Crammer & Vucetic, JMLR 2012).

    Objective (no offset term):

    .. math::

        \min_w \frac{\lambda}{2}\|w\|^2 + \frac{1}{n}\sum_{i=1}^n
        \max(0, 1 - y_i \langle w, \phi(x_i)\rangle),
        \qquad \lambda = \frac{1}{n C},

    step t on a random example: :math:`w \leftarrow (1 - 1/t) w + [y_i f(x_i) < 1]
    \frac{y_i}{\lambda t}\phi(x_i)`, :math:`k(x, x') = \exp(-\gamma\|x - x'\|^2)`.
    ``fit`` runs ``epochs`` passes, each over a fresh random permutation.

    The SGD steps run without an offset.  With ``fit_intercept=True`` the
    offset b of the paper's objective (1) is then set to its exact minimiser
    for the final w, min_b sum_i max(0, 1 - y_i (<w, phi(x_i)> + b)), a closed
    form (see :func:`fastsvm.bsgd.solver.hinge_offset`).  An offset updated by
    SGD with step 1/(lambda t) would be dominated by its first steps; without
    one, the constant level of f is the small difference of large positive and
    negative coefficient sums, and on data where the kernel is nearly constant
    (a9a with gamma = 2^-7: kappa ~ 0.85 for typical pairs) test accuracy of
    the final iterate swings by 10-20 points from epoch to epoch.

    Multi-class problems are split one-vs-rest: one binary BSGD model with its
    own budget per class, the class with the largest decision value wins.

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (n_samples * C) as in the paper.
    gamma : float or 'scale', default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    budget : int, default=500
        Maximum number of support vectors per binary model (at least 2).
    epochs : int, default=5
        Passes over the training data in ``fit`` (``partial_fit`` makes one).
    maintenance : {'merge', 'remove'}, default='merge'
        Budget maintenance: merge the smallest support vector with its best
        partner of the same sign, or remove it.
    merge_method : {'lookup-wd', 'lookup-h', 'gss', 'gss-precise'}, default='lookup-wd'
        How the merge problem is solved: bilinear lookup of the weight
        degradation WD(m, kappa) or of h(m, kappa) in a 400 x 400 table, or
        golden section search to 0.01 or 1e-10 (see :mod:`fastsvm.merge`).
    fit_intercept : bool, default=True
        Fit the offset b exactly after the SGD passes (on the batch, in
        ``partial_fit``); False keeps b = 0 as in plain BSGD.
    diagnostics : bool, default=False
        Also solve every merge event with all four methods side by side and
        record how often GSS and the lookups choose the same partner and by
        which factor their weight degradation exceeds GSS-precise (Table 3 of
        the paper).  Slower; the training path is unchanged.
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit (the compiled
        steps release the GIL); None means 1, -1 all cores.  The result does
        not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the order in which examples are visited.
    verbose : int, default=0
        > 0 shows a progress bar and a summary line.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    gamma_ : float
        The numeric kernel width used.
    support_vectors_ : ndarray of shape (n_sv_total, n_features_in_)
        Support vectors of all binary models, stacked in model order.
    dual_coef_ : ndarray of shape (n_sv_total,)
        Coefficient alpha_j of each support vector: the decision function of
        model c is sum_j alpha_j k(sv_j, x) over its block.
    n_support_ : ndarray of shape (n_models,)
        Support vectors per binary model (1 model for 2 classes, else n_classes).
    intercept_ : ndarray of shape (n_models,)
        Offset b of each binary model (zeros with ``fit_intercept=False``).
    training_info_ : dict
        The paper's instruments: steps, merges, merge frequency, time in SGD
        and in budget maintenance split into section A (computing h / WD) and
        section B (the rest), steps per second, microseconds per merge; with
        ``diagnostics=True`` also equal-decision rates and WD factors.
        Times are summed over all ``fit`` / ``partial_fit`` calls.

    Notes
    -----
    ``partial_fit`` streams: each call makes one pass over its batch in a
    random order.  The step counter t, and with it the step size
    eta_t = 1 / (lambda t), continues across calls.  lambda is
    1 / (C * n_seen), n_seen being the number of samples passed so far, so a
    stream that delivers a data set of n samples ends with the lambda that
    ``fit`` uses; when lambda changes between calls the model w is kept and
    only its internal scaling is updated.  A numeric gamma (or 'scale' resolved
    on the first batch) stays fixed.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from fastsvm import BudgetSVC
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = BudgetSVC(C=10, gamma=2.0, budget=50, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "budget": [Interval(Integral, 2, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "maintenance": [StrOptions(set(MAINTENANCE))],
        "merge_method": [StrOptions(set(METHODS))],
        "fit_intercept": ["boolean"],
        "diagnostics": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, C=1.0, gamma="scale", budget=500, epochs=5, maintenance="merge",
                 merge_method="lookup-wd", fit_intercept=True, diagnostics=False, n_jobs=None,
                 random_state=None, verbose=0):
        self.C = C
        self.gamma = gamma
        self.budget = budget
        self.epochs = epochs
        self.maintenance = maintenance
        self.merge_method = merge_method
        self.fit_intercept = fit_intercept
        self.diagnostics = diagnostics
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train on (X, y) with ``epochs`` passes of budgeted SGD.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = self._validate_xy(X, y, reset=True)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        self._check_two_classes()
        self._start(X)
        self._n_seen = X.shape[0]
        self._lam = 1.0 / (self._n_seen * self.C)
        self._train(X, y_enc, self.epochs)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """One pass of budgeted SGD over a batch, continuing from the current model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream; required on the first call unless that
            batch already contains every class.

        Returns
        -------
        self
        """
        first = not hasattr(self, "_states")
        if first and hasattr(self, "dual_coef_"):
            raise ValueError("this BudgetSVC holds a model loaded from a file, without the training "
                             "state (step counter, lambda) that partial_fit continues from; "
                             "train a new model with fit or partial_fit instead")
        X, y = self._validate_xy(X, y, reset=first)
        if first:
            self.classes_ = np.unique(y if classes is None else np.asarray(classes))
            self._check_two_classes()
            self._start(X)
            self._n_seen, self._lam = 0, None
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={classes!r} differs from the classes of the first call {self.classes_!r}")
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"labels {unknown!r} are not among the classes {self.classes_!r} "
                             "(pass every class with classes= on the first call)")
        self._n_seen += X.shape[0]
        lam = 1.0 / (self._n_seen * self.C)
        if self._lam is not None:
            for state in self._states:
                state.rescale_lambda(self._lam, lam)
        self._lam = lam
        self._train(X, np.searchsorted(self.classes_, y), 1)
        return self

    def _validate_xy(self, X, y, reset):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C", reset=reset)
        check_classification_targets(y)
        return X, y

    def _check_two_classes(self):
        if self.classes_.shape[0] < 2:
            raise ValueError(f"BudgetSVC needs samples of at least 2 classes; got 1 class: {self.classes_[0]!r}")

    def _start(self, X):
        n_models = 1 if len(self.classes_) == 2 else len(self.classes_)
        self.gamma_ = resolve_gamma(self.gamma, X)
        self._states = [BSGDState.empty(X.shape[1], self.budget) for _ in range(n_models)]
        self._rng = check_random_state(self.random_state)
        self._wall_s = 0.0
        self.intercept_ = np.zeros(n_models)

    def _train(self, X, y_enc, epochs):
        packed = PackedData.from_matrix(X)
        targets = binary_targets(y_enc, len(self.classes_))
        tables = load_tables()
        n = X.shape[0]
        total = n * epochs * len(targets)
        # one seed per binary model, drawn up front: results do not depend on n_jobs
        seeds = self._rng.randint(np.iinfo(np.int32).max, size=len(targets))
        started = time.perf_counter()

        def train_one(state, y_bin, seed, bar):
            rng = np.random.RandomState(seed)
            for _ in range(epochs):
                run_pass(state, packed, y_bin, rng.permutation(n).astype(np.int64), self._lam,
                         self.gamma_, self.budget, MAINTENANCE[self.maintenance],
                         METHODS[self.merge_method], self.diagnostics, tables, progress=bar)

        with tqdm(total=total, disable=not self.verbose, unit="step", unit_scale=True,
                  desc="BudgetSVC", leave=False) as bar:
            # the compiled steps release the GIL, so threads run the binary problems in parallel
            Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(train_one)(state, y_bin, seed, bar)
                for state, y_bin, seed in zip(self._states, targets, seeds))
        self._publish()
        if self.fit_intercept:
            raw = self._raw_decision(X)
            for c, y_bin in enumerate(targets):
                if 0 < np.count_nonzero(y_bin > 0) < n:  # a partial_fit batch may lack a class
                    self.intercept_[c] = hinge_offset(raw[:, c], y_bin)
        self._wall_s += time.perf_counter() - started
        self.training_info_["time_fit_s"] = self._wall_s
        if self.verbose:
            info = self.training_info_
            print(f"BudgetSVC: {info['steps']} steps in {info['time_fit_s']:.2f} s, "
                  f"{len(self.dual_coef_)} support vectors, {info['merges']} merges "
                  f"(frequency {info['merge_frequency']:.1%})")

    def _publish(self):
        """Expose the internal states as the public fitted attributes."""
        self.support_vectors_ = np.vstack([s.support_vectors() for s in self._states])
        self.dual_coef_ = np.concatenate([s.alpha(self._lam) for s in self._states])
        self.n_support_ = np.array([s.n_sv for s in self._states], dtype=np.int64)
        self.training_info_ = summarize(self._states, self.diagnostics)

    # -------------------------------------------------------------- predict
    def decision_function(self, X):
        """Decision values f(x) = sum_j alpha_j k(sv_j, x) + b of each binary model.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes).
        """
        check_is_fitted(self, "dual_coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        decision = self._raw_decision(check_csr_format(X)) + self.intercept_
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def _raw_decision(self, X):
        """sum_j alpha_j k(sv_j, x) of every binary model, shape (n_samples, n_models)."""
        n_models = len(self.n_support_)
        coef = np.zeros((len(self.dual_coef_), n_models))
        bounds = np.concatenate([[0], np.cumsum(self.n_support_)])
        for c in range(n_models):
            coef[bounds[c]:bounds[c + 1], c] = self.dual_coef_[bounds[c]:bounds[c + 1]]
        if sp.issparse(X):
            X = X.astype(np.float64)
        return rbf_expansion(X, self.support_vectors_, coef, self.gamma_)

    def predict(self, X):
        """Predicted class labels."""
        return labels_from_decision(self.decision_function(X), self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
