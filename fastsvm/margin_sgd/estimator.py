"""MarginSGDSVC: one-pass margin SGD SVM with extreme early stopping (Orchel & Suykens)."""

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._packed import PackedData
from .._validation import check_csr_format
from ..kernels import rbf_expansion, resolve_gamma
from ..multiclass import binary_targets, labels_from_decision
from .solver import UPDATES, draw_order, run_pass

#: M values tried by ``M='auto'``.  With the squared-hinge rule only M in [0, 1]
#: matters (alpha = max(0, 1 - m) is 0 for every m >= 1, and M < 0 keeps nothing).
DEFAULT_M_GRID = {"squared-hinge": (0.25, 0.5, 0.75, 1.0), "constant": (0.25, 0.5, 1.0, 2.0)}


class MarginSGDSVC(ClassifierMixin, BaseEstimator):
    r"""Kernel SVM built in one pass of margin SGD with extreme early stopping.

    Orchel & Suykens, "Improved Update Rule and Sampling of Stochastic Gradient
    Descent with Extreme Early Stopping for Support Vector Machines" (LOD 2021).
    The model is :math:`f(x) = \sum_j y_j \alpha_j k(x_j, x)` with the Gaussian
    kernel, no offset and no regularisation term: the margin ``M`` takes the
    place of C.  One pass draws n points; at its first draw each point's
    coefficient is set once and never changed, from the margin
    :math:`m_k = y_k f_{k-1}(x_k)` of the model built so far:

    * ``update='squared-hinge'`` (the paper's rule (6), derived in its
      appendix from the squared hinge loss):
      :math:`\alpha_k = \max(0, 1 - m_k)` if :math:`m_k \le M`, else 0;
    * ``update='constant'`` (the original margin SGD rule): :math:`\alpha_k = 1`
      if :math:`m_k \le M`, else 0.

    See :mod:`fastsvm.margin_sgd._kernels`.

    Reconstructed, since only the paper's abstract and appendix survive:
    the constant rule's value (1: any other constant c gives the same model as
    M / c), sampling with full replacement as n uniform draws with replacement
    of which only first draws count (about 63 % of the points), the M grid
    and its hold-out selection (``M='auto'``), and one-vs-rest for more than
    two classes.

    Parameters
    ----------
    M : float or 'auto', default='auto'
        The margin threshold (>= 0).  'auto' tries ``M_grid`` on a stratified
        hold-out of ``validation_fraction`` of the training set (one pass per
        value), keeps the most accurate and makes a final pass on all rows.
    M_grid : sequence of float or None, default=None
        Values for 'auto'; None means (0.25, 0.5, 0.75, 1) for the
        squared-hinge rule and (0.25, 0.5, 1, 2) for the constant rule.
    update : {'squared-hinge', 'constant'}, default='squared-hinge'
    sampling : {'replacement', 'permutation'}, default='replacement'
        n draws with replacement (the paper's), or one shuffled pass.
    gamma : float or 'scale', default='scale'
        Gaussian kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    validation_fraction : float, default=0.2
        Hold-out share for ``M='auto'``.
    n_jobs : int or None, default=None
        Threads for the binary problems of a multi-class fit.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws and the hold-out split.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    gamma_ : float
    M_ : float
        The margin used for the final model.
    support_ : ndarray of shape (n_SV,)
        Training indices of the support vectors of all binary models.
    support_vectors_ : ndarray of shape (n_SV, n_features_in_)
    dual_coef_ : ndarray of shape (n_models, n_SV)
        y_j alpha_j of each binary model (0 where a vector is not its own).
    n_support_ : ndarray of shape (n_models,)
        Model size (support vectors) of each binary model.
    training_info_ : dict
        ``validation_accuracy`` per M tried (with 'auto'), ``n_visited``
        (points decided per model), ``time_fit_s``.
    """

    _parameter_constraints = {
        "M": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "M_grid": ["array-like", None],
        "update": [StrOptions(set(UPDATES))],
        "sampling": [StrOptions({"replacement", "permutation"})],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, M="auto", M_grid=None, update="squared-hinge", sampling="replacement",
                 gamma="scale", validation_fraction=0.2, n_jobs=None, random_state=None):
        self.M = M
        self.M_grid = M_grid
        self.update = update
        self.sampling = sampling
        self.gamma = gamma
        self.validation_fraction = validation_fraction
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Build the model in one pass (plus one per M value with ``M='auto'``)."""
        started = time.perf_counter()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             order="C")
        X = check_csr_format(X)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"MarginSGDSVC needs samples of at least 2 classes; got 1 class: "
                             f"{self.classes_[0]!r}")
        self.gamma_ = resolve_gamma(self.gamma, X)
        rng = check_random_state(self.random_state)
        info = {}
        if self.M == "auto":
            grid = DEFAULT_M_GRID[self.update] if self.M_grid is None else self.M_grid
            grid = [float(m) for m in np.atleast_1d(grid)]
            if not grid or min(grid) < 0:
                raise ValueError(f"M_grid must hold values >= 0; got {self.M_grid!r}")
            train, held = train_test_split(np.arange(len(y)), test_size=self.validation_fraction,
                                           stratify=y_enc, random_state=rng.randint(2**31 - 1))
            scores = {}
            for m in grid:
                models = self._passes(X[train], y_enc[train], m, rng)
                decision = self._decision(X[held], X[train], models)
                scores[m] = float(np.mean(self._labels(decision) == y_enc[held]))
            self.M_ = max(grid, key=lambda m: (scores[m], -m))   # ties: the smaller model
            info["validation_accuracy"] = scores
        else:
            self.M_ = float(self.M)
        models = self._passes(X, y_enc, self.M_, rng)
        self.support_ = np.unique(np.concatenate([r.support for r in models]))
        self.support_vectors_ = (X[self.support_].toarray() if sp.issparse(X)
                                 else np.array(X[self.support_], dtype=np.float64))
        self.dual_coef_ = np.zeros((len(models), len(self.support_)))
        for k, r in enumerate(models):
            self.dual_coef_[k, np.searchsorted(self.support_, r.support)] = r.dual
        self.n_support_ = np.array([len(r.support) for r in models])
        info["n_visited"] = [r.n_visited for r in models]
        info["time_fit_s"] = time.perf_counter() - started
        self.training_info_ = info
        return self

    def _passes(self, X, y_enc, M, rng):
        """One pass per binary problem (one-vs-rest), each with its own draws."""
        packed = PackedData.from_matrix(X)
        targets = binary_targets(y_enc, len(self.classes_))
        orders = [draw_order(len(y_enc), self.sampling,
                             np.random.default_rng(rng.randint(np.iinfo(np.int32).max)))
                  for _ in targets]
        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(run_pass)(packed, y_bin, self.gamma_, M, self.update, order)
            for y_bin, order in zip(targets, orders))

    def _decision(self, X, X_train, models):
        """Decision values (n, n_models) of pass results on rows of X_train."""
        out = np.empty((X.shape[0], len(models)))
        for k, r in enumerate(models):
            sv = X_train[r.support]
            sv = sv.toarray() if sp.issparse(sv) else np.asarray(sv, dtype=np.float64)
            out[:, k] = rbf_expansion(X, sv, r.dual[:, None], self.gamma_)[:, 0]
        return out

    def _labels(self, decision):
        """Encoded labels from decision values of shape (n, n_models)."""
        if decision.shape[1] == 1:
            return (decision[:, 0] > 0).astype(np.intp)
        return np.argmax(decision, axis=1)

    def decision_function(self, X):
        """f(x) of each binary model: (n_samples,) for two classes, else (n_samples, n_classes)."""
        check_is_fitted(self, "dual_coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        X = check_csr_format(X)
        decision = rbf_expansion(X, self.support_vectors_, self.dual_coef_.T, self.gamma_)
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def predict(self, X):
        """Predicted class labels."""
        return labels_from_decision(self.decision_function(X), self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
