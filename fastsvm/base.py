r"""What every fastsvm classifier shares: validation, weights, kernels, multi-class and publishing.

scikit-learn's ``BaseLibSVM`` carries SVC, NuSVC and SVR through one ``fit``;
:class:`BaseSVC` does the same for fastsvm's solvers.  ``fit`` turns the
caller's (X, y, sample_weight) into a :class:`TrainingProblem`, hands it to
the estimator's ``_fit`` (the solver-specific part, which returns the fitted
attributes) and publishes the attributes only once the fit completed.

Weights (SVC's meaning)
-----------------------
Sample i carries the weight s_i = class_weight[y_i] * sample_weight[i]; it
multiplies the sample's loss term, that is its C.  'balanced' is
n_samples / (n_classes * bincount(y)) as in SVC, with the counts weighted by
sample_weight (scikit-learn's ``compute_class_weight(..., sample_weight=)``):
S / (n_classes * S_c), S_c the sample weight of class c, so that a row of
weight 0 counts as absent and a weight of 2 as the row twice here too (SVC
counts every row given).  Every solver minimises the
weighted objective written in its SVC form, divided by C S:

.. math::

    \frac12\|w\|^2 + C \sum_i s_i\, \ell_i(w)
    \quad\Longleftrightarrow\quad
    \frac{\lambda}{2}\|w\|^2 + \frac{1}{S}\sum_i s_i\, \ell_i(w),
    \qquad \lambda = \frac{1}{C S},\quad S = \sum_i s_i,

which for unit weights is the papers' lambda = 1/(nC).  A weight of 2 is the
row appearing twice (S grows by one in both cases), scaling every weight by c
is C times c, as for SVC, and rows of weight 0 are dropped before anything
else (gamma='scale' included), so they are exactly as if absent.  As in SVC,
gamma='scale' is the unweighted variance of the rows of positive weight, so for
it a weight of 2 is not the row twice; a number as gamma is.
Stochastic solvers sample rows uniformly and scale each row's subgradient
step by its *step weight* s_i n / S (:attr:`TrainingProblem.step_weights`),
the weight of the average (1/n) sum_i (s_i n / S) l_i of the same objective:
the visiting schedule of the unweighted algorithm is kept, and with equal
weights the step weights are exactly 1, so the unweighted algorithm is
reproduced bit for bit.
"""

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (_check_sample_weight, _num_samples, check_consistent_length,
                                      check_is_fitted, column_or_1d, validate_data)
from tqdm.auto import tqdm

from . import _options
from ._validation import canonical_csr, check_sparse_structure, native_byteorder
from .kernels import (KERNELS, RAISED_BY_CALLABLE, Kernel, _num_rows, _take, renumber_columns,
                      row_sq_norms)
from .multiclass import (binary_targets, labels_from_decision, n_binary_models,
                         ovo_scores, resolve_multi_class)

#: Constraints of the kernel parameters, SVC's (every estimator validates all of
#: SVC's kernels and explains the ones its method cannot take).
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNELS)), callable],
    "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 0, None, closed="left")],
    "coef0": [Real],
}
#: Constraints of the parameters every estimator has.
COMMON_CONSTRAINTS = {
    "class_weight": [dict, StrOptions({"balanced"}), None],
    # joblib's meaning: n >= 1 threads, or -1 all cores, -2 all but one, ...; 0 means
    # nothing, and is refused by every estimator, also those that do not use n_jobs
    "n_jobs": [Interval(Integral, None, -1, closed="right"),
               Interval(Integral, 1, None, closed="left"), None],
    "verbose": ["verbose"],
}


#: ``_expansion_decision`` multiplies dual coefficients with at most this share of
#: non-zeros as a sparse matrix.
SPARSE_COEF_DENSITY = 0.25


def _sparse_format(kernel):
    """What validate_data accepts: CSR (other formats converted), nothing for a kernel matrix."""
    return False if kernel == "precomputed" else "csr"


def random_seeds(random_state, count):
    """``count`` int32 seeds drawn from ``random_state`` (one per binary problem, drawn
    up front so that results do not depend on ``n_jobs``)."""
    return check_random_state(random_state).randint(np.iinfo(np.int32).max, size=count)


def regularization(C, weight_sum):
    """lambda = 1 / (C S), refused (ValueError) outside float64's normal range.

    A lambda that is 0, subnormal or infinite (C or S extreme) would make the
    solvers divide by zero or overflow; the message gives the usable range of C.
    """
    lam = 1.0 / C / weight_sum
    tiny, huge = np.finfo(np.float64).tiny, np.finfo(np.float64).max
    if not tiny <= lam < huge:
        with np.errstate(over="ignore"):
            low, high = 1.0 / huge / weight_sum, 1.0 / tiny / weight_sum
        usable = (f"between {low:.3g} and {high:.3g}" if high < huge and low > 0
                  else f"of at least {low:.3g}" if low > 0 else f"of at most {high:.3g}")
        raise ValueError(f"C={C!r} is too {'large' if lam < tiny else 'small'} for a total "
                         f"sample weight of {weight_sum:.6g}: the regularisation 1/(C S) = {lam!r} "
                         f"is outside float64's normal range; use C {usable}, or scale the "
                         "sample weights")
    return lam


#: What scikit-learn's validation sets on the estimator (reset=True): held back until a fit
#: publishes its model, so that a prediction while a refit trains sees the previous model
#: whole (publishing itself sets the attributes one by one: not atomic for other threads).
INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_")


def step_weights(weights, n, weight_sum):
    """s_i n / S for weights s_i summing to S over n rows: exactly 1 for unit weights, and
    finite for weights so small (subnormal) that n / S overflows."""
    scale = n / weight_sum
    if np.isfinite(scale):
        return weights * scale
    top = weights.max()
    return (weights / top) * (n / (weight_sum / top))


def objectives_text(values, digits=6):
    """A verbose summary's objective: "objective P" for one binary model, "objectives
    P_min to P_max (K models)" for several (each minimises its own objective)."""
    values = [float(v) for v in values]
    if len(values) == 1:
        return f"objective {values[0]:.{digits}g}"
    return (f"objectives {min(values):.{digits}g} to {max(values):.{digits}g} "
            f"({len(values)} models)")


def callable_kernel_input(X):
    """X as a callable kernel receives it: as the caller gave it (a list of strings works,
    as for SVC), except sparse input in CSR form (its rows are taken: COO, DIA and DOK
    have none to take) and an object that only converts to an array (``__array__``,
    without a length) as that array."""
    if sp.issparse(X):
        return X.tocsr()
    if not hasattr(X, "shape") and not hasattr(X, "__len__") and hasattr(X, "__array__"):
        return np.asarray(X)
    return X


def progress_bar(verbose, total, unit, desc):
    """A tqdm progress bar of ``total`` units (None: a count without a total), shown when
    ``verbose`` and the process has a standard error to draw it on (a process started
    with it closed has ``sys.stderr`` None, where tqdm's first write would raise)."""
    return tqdm(total=total, disable=not verbose or sys.stderr is None, unit=unit,
                unit_scale=True, desc=desc, leave=False)


def dict_class_weight(class_weight, classes):
    """The weight of each class (float64, in the order of ``classes``) from a class_weight
    dict, looked up by the classes themselves: 1 for a class without a key.

    scikit-learn's ``compute_class_weight`` looks up int(c) wherever a class
    converts to an integer, so text classes such as '1' (the command line's
    classes where a label is fractional, 2.5) never found their keys.  As
    there, keys that are not classes are an error unless every class has a
    weight.
    """
    labels = classes.tolist()
    known = set(labels)
    unknown = [key for key in class_weight if key not in known]
    if unknown and any(c not in class_weight for c in labels):
        raise ValueError(f"class_weight has keys that are not classes: {unknown!r} (the "
                         f"classes are {labels!r})")
    return np.array([float(class_weight.get(c, 1.0)) for c in labels])


def check_class_totals(totals, classes):
    """ValueError naming a class whose samples all have weight 0 (``totals``: the weight of
    each class)."""
    empty = classes[np.asarray(totals) == 0]
    if len(empty):
        raise ValueError(f"every sample of class {empty.tolist()[0]!r} has weight 0 "
                         "(sample_weight times class_weight): give them positive "
                         "weights or remove the class from y")


def used_columns(X):
    """(X on the columns it uses, their indices) for CSR X that stores entries in at most
    half of its columns, else (X, None).

    A linear model's weight on a column that is zero on every training row is 0 at the
    optimum (only the regulariser acts on it), and the linear solvers, starting from
    w = 0, never move it: their steps and L-BFGS's directions are combinations of the
    rows and of earlier steps.  So fitting on the used columns gives the same model
    (:func:`widen` puts it back at full width), at a cost in the non-zeros instead of
    n_features: 20,000 rows of 20 non-zeros among 10 million features took HuberSVC
    49 s and 3.2 GB (L-BFGS keeps (2m + 5) n_features numbers)."""
    if not sp.issparse(X):
        return X, None
    columns = np.unique(X.indices)
    if len(columns) > X.shape[1] // 2:
        return X, None
    return renumber_columns(X, columns), columns


def widen(coef, columns, n_features):
    """Coefficients fitted on ``columns`` (see :func:`used_columns`) at full width, 0 on
    the other columns; ``coef`` itself when ``columns`` is None."""
    if columns is None:
        return coef
    out = np.zeros((coef.shape[0], n_features))
    out[:, columns] = coef
    return out


def check_value_range(X):
    """Largest squared row norm of X (0 for no rows or a callable's input); ValueError if a
    row's squared norm overflows float64.

    Every kernel and solver works with squared norms or dot products, so
    finite but huge values such as 1e200 are refused.
    """
    if not (sp.issparse(X) or isinstance(X, np.ndarray)) or X.shape[0] == 0:
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        sq_norms = row_sq_norms(X)
    if not np.all(np.isfinite(sq_norms)):
        row = int(np.flatnonzero(~np.isfinite(sq_norms))[0])
        if _non_finite(_take(X, [row])):    # passed under sklearn's assume_finite=True
            raise ValueError(f"X holds NaN or infinity (row {row}); scikit-learn's "
                             "assume_finite=True skipped the check that names it")
        raise ValueError(f"X holds values too large for float64 arithmetic: the squared "
                         f"norm of row {row} overflows; scale the features (for example "
                         "with sklearn.preprocessing.StandardScaler or MaxAbsScaler)")
    return float(sq_norms.max())


def check_kernel_range(kernel, max_sq_norm):
    """ValueError if the polynomial ``kernel`` (a resolved :class:`Kernel`) overflows on rows
    of squared norm at most ``max_sq_norm``: by Cauchy-Schwarz every kernel value between
    them is bounded by (gamma max ||x||^2 + |coef0|)^degree, which must be finite."""
    if kernel.name != "poly":
        return
    with np.errstate(over="ignore"):
        bound = (kernel.gamma * np.float64(max_sq_norm) + abs(kernel.coef0)) ** kernel.degree
    if not np.isfinite(bound):
        raise ValueError(f"the polynomial kernel (gamma={kernel.gamma:.3g}, coef0="
                         f"{kernel.coef0:.3g}, degree={kernel.degree}) overflows float64 "
                         "on these feature values; scale the features or use a smaller "
                         "gamma, coef0 or degree")


def _non_finite(value):
    """True if ``value`` is a float array (dense or sparse) holding NaN or inf."""
    if sp.issparse(value):
        value = value.data
    return (isinstance(value, np.ndarray) and value.dtype.kind in "fc"
            and not np.all(np.isfinite(value)))


def check_finite_output(values, what):
    """Raise ValueError if computed ``values`` (of an input that passed validation) hold
    NaN or inf: an overflow of their type (float64, or the float32 of an embedding)."""
    if _non_finite(values):
        rows = np.flatnonzero(~np.all(np.isfinite(values.reshape(len(values), -1)), axis=1))
        raise ValueError(f"the {what} of {len(rows)} row(s) (first: row {rows[0]}) overflow "
                         f"{values.dtype}: the kernel values on them are too large (feature "
                         "values far from the training range, or a kernel that grows fast, "
                         "such as a polynomial of high degree); scale the features or change "
                         "the kernel's parameters")


@dataclass
class TrainingProblem:
    """The validated training data of one ``fit``, in the form the solvers take.

    Attributes
    ----------
    X : ndarray, csr_matrix or sequence
        The training rows: a C-ordered float32/float64 array or a canonical
        CSR matrix; for ``kernel='precomputed'`` the dense float64 n x n kernel
        matrix; for a callable kernel the rows as the caller gave them.
    y : ndarray of shape (n,)
        Class index of each row (into ``classes``).
    classes : ndarray of shape (n_classes,)
    weights : ndarray of shape (n,)
        s_i > 0, class weight times sample weight (rows of weight 0 are dropped).
    rows : ndarray of shape (n,)
        Index of each row in the caller's X.
    kernel : Kernel
        The kernel, with 'scale' resolved on X.
    class_weight : ndarray of shape (n_classes,)
        The weight of each class in ``weights`` (the estimators' ``class_weight_``).
    """

    X: object
    y: np.ndarray
    classes: np.ndarray
    weights: np.ndarray
    rows: np.ndarray
    kernel: Kernel
    class_weight: np.ndarray = None
    _gram: np.ndarray = field(default=None, repr=False)

    @property
    def n_samples(self):
        return len(self.y)

    @property
    def n_models(self):
        """One-vs-rest binary problems: 1 for two classes, else one per class."""
        return n_binary_models(len(self.classes))

    @property
    def targets(self):
        """The +-1 float64 targets of each binary problem (see :mod:`fastsvm.multiclass`)."""
        return binary_targets(self.y, len(self.classes))

    @property
    def weight_sum(self):
        """S = sum_i s_i."""
        return float(self.weights.sum())

    def lam(self, C):
        """lambda = 1 / (C S), the regularisation of the averaged weighted objective
        (see :func:`regularization`)."""
        return regularization(C, self.weight_sum)

    @property
    def step_weights(self):
        """s_i n / S: each row's factor in the average (1/n) sum_i (s_i n / S) l_i
        (exactly 1 for equal weights)."""
        return step_weights(self.weights, self.n_samples, self.weight_sum)

    def gram(self):
        """The n x n kernel matrix of the training rows (for 'precomputed' and callables).

        A callable is evaluated once, as SVC does; the matrix must fit in
        ``_options.GRAM_MAX_BYTES``.
        """
        if self.kernel.name == "precomputed":
            return self.X
        if self._gram is None:
            n = self.n_samples
            if 8 * n * n > _options.GRAM_MAX_BYTES:
                raise ValueError(
                    f"a callable kernel is evaluated once into the {n} x {n} kernel matrix "
                    f"({8 * n * n / 2**30:.1f} GiB), more than fastsvm._options.GRAM_MAX_BYTES "
                    f"({_options.GRAM_MAX_BYTES / 2**30:.1f} GiB) allows; use a built-in kernel, "
                    "or NystromSVC, which evaluates a callable against its landmarks only")
            self._gram = self.kernel(self.X, self.X)
        return self._gram

    def block(self, a, b):
        """K(x_a, x_b) between training rows (index arrays ``a`` and ``b``), float64."""
        if self.kernel.on_gram and (self.kernel.name == "precomputed" or self._gram is not None):
            return self.gram()[np.ix_(a, b)]
        return self.kernel(self.take(a), self.take(b))

    def diagonal(self, rows):
        """k(x_i, x_i) of the training rows ``rows``."""
        if self.kernel.name == "precomputed":
            return np.array(self.X[rows, rows], dtype=np.float64)
        return self.kernel.diagonal(self.take(rows))

    def pair(self, i, j):
        """The binary problem of classes i (-1) and j (+1) on their rows alone: a one-vs-one
        pair (see :mod:`fastsvm.multiclass`), its weights, and its kernel (gamma='scale'
        resolved on all rows, as SVC resolves it).  Its ``rows`` index this problem's rows,
        not the caller's."""
        rows = np.flatnonzero((self.y == i) | (self.y == j))
        X = self.X[np.ix_(rows, rows)] if self.kernel.name == "precomputed" else self.take(rows)
        gram = None if self._gram is None else self._gram[np.ix_(rows, rows)]
        class_weight = None if self.class_weight is None else self.class_weight[[i, j]]
        return TrainingProblem(X, (self.y[rows] == j).astype(np.intp), self.classes[[i, j]],
                               self.weights[rows], rows, self.kernel, class_weight, gram)

    def take(self, rows):
        """The training rows ``rows`` as stored (array, CSR rows or the caller's sequence)."""
        return _safe_indexing(self.X, rows)

    def support_vectors(self, rows):
        """The rows ``rows`` as a model keeps them for prediction, as SVC keeps them: float64
        features, a CSR matrix for sparse training data (memory linear in their
        non-zeros: hashed features of 2^20 columns, whose dense rows take 8 MB each), the
        caller's rows for a callable kernel, and nothing (shape (0, 0)) for 'precomputed',
        whose prediction looks support vectors up by index."""
        if self.kernel.name == "precomputed":
            return np.empty((0, 0))
        if self.kernel.name == "callable":
            return self.take(rows)
        if sp.issparse(self.X):
            return sp.csr_matrix(self.X[rows], dtype=np.float64)
        return np.array(self.X[rows], dtype=np.float64)


def check_dense_vectors(n_vectors, n_features, copies=1, what="support vectors"):
    """Refuse ``copies`` x ``n_vectors`` support vectors (or other rows: ``what``) as dense
    rows of ``n_features`` values beyond ``_options.DENSE_VECTORS_MAX_BYTES`` (sparse data
    with very many features)."""
    need = 8 * copies * n_vectors * n_features
    if need > _options.DENSE_VECTORS_MAX_BYTES:
        held = f"{n_vectors:,} of them" + (f", {copies} copies," if copies > 1 else "")
        raise ValueError(
            f"this model holds its {what} as dense rows of all {n_features:,} "
            f"features: {held} take {need / 2**30:.1f} GiB, more than "
            f"fastsvm._options.DENSE_VECTORS_MAX_BYTES "
            f"({_options.DENSE_VECTORS_MAX_BYTES / 2**30:.1f} GiB) allows; keep only the "
            "feature columns the data uses, reduce them (for example with TruncatedSVD), or "
            "use NystromSVC, whose landmarks stay sparse")


def _python_number(value):
    """The Python bool, int or float of a NumPy scalar's value (a complex one as it is, for
    the parameter checks to refuse)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return float(value) if isinstance(value, np.floating) else value


class BaseSVC(ClassifierMixin, BaseEstimator):
    """Base of fastsvm's classifiers (see the module docstring).

    A subclass sets ``_parameter_constraints``, ``_kernels`` (the kernels its
    method supports, 'callable' for callables) with ``_kernel_reason`` (why
    not the others), and implements ``_fit(problem) -> dict`` of fitted
    attributes and ``_decision(X) -> (n_samples, n_models)`` without the
    intercept.
    """

    _kernels = KERNELS + ("callable",)
    _kernel_reason = ""

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model on (X, y).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows; for ``kernel='precomputed'`` the kernel matrix of
            shape (n_samples, n_samples); for a callable kernel anything the
            callable takes.
        y : array-like of shape (n_samples,)
            Class labels of any type.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (>= 0), multiplying the sample's loss term (its
            C), times ``class_weight``; None means 1.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For invalid parameters or data, including values, kernels or
            parameters that overflow float64 (a model holding NaN or inf is
            never returned).  If the call raises anything (KeyboardInterrupt
            included), the estimator is exactly as it was before the call.
        """
        with self._fitting():
            problem = self._problem(X, y, sample_weight)
            self._publish(self._fit(problem), problem.class_weight)
        return self

    @contextmanager
    def _fitting(self):
        """Run a fit as a transaction.

        On any exception, KeyboardInterrupt included, the estimator is restored
        exactly as it was before the call (its previous model, or unfitted) and
        the exception propagates; an arithmetic error (an overflow or a
        division by zero from extreme data or parameters) becomes a ValueError
        that says so.  Fits never modify the previous model's objects in place.

        NumPy scalar parameters (``np.uint8(200)``, ``np.float16(1.0)``, ``np.int32(50)``:
        what an element of a NumPy grid is) are the Python numbers of their values during
        the fit, and given back as they were after it.  Used as they are, fixed-width
        arithmetic had wrapped them (``max_iter=np.uint8(200)`` sized kernel PegasosSVC's
        support-vector storage for 32 vectors, whose compiled steps then wrote past it; an
        unsigned ``max_stages`` never ran out), float16 reached the compiled kernels (an
        error) or lowered the precision of the fit, and another scalar type compiled the
        kernels anew (seconds) at the first fit.
        """
        saved = dict(vars(self))
        plain = {name: _python_number(value)
                 for name, value in self.get_params(deep=False).items()
                 if isinstance(value, (np.number, np.bool_))}
        vars(self).update(plain)
        try:
            yield
        except BaseException as exc:
            vars(self).clear()
            vars(self).update(saved)
            if isinstance(exc, ArithmeticError) and not getattr(exc, RAISED_BY_CALLABLE, False):
                raise ValueError(self._overflow_message(f"{type(exc).__name__}: {exc}")) from exc
            raise
        vars(self).update({name: saved[name] for name in plain})

    def _overflow_message(self, what):
        params = self.get_params(deep=False)
        names = ("C", "gamma", "M") + {"poly": ("degree", "coef0"),
                                       "sigmoid": ("coef0",)}.get(params.get("kernel"), ())
        shown = ", ".join(f"{k}={params[k]!r}" for k in names if k in params)
        return (f"{type(self).__name__} overflowed ({what}): the feature values, the sample "
                f"or class weights, or the parameters ({shown}) are too extreme for float64 "
                "arithmetic; scale the features (e.g. sklearn.preprocessing.StandardScaler) or "
                "use moderate weights and parameters")

    def _problem(self, X, y, sample_weight, classes=None, reset=True, partial=False):
        """Validate the parameters and (X, y, sample_weight); build the TrainingProblem.

        ``classes`` fixes the classes instead of taking those of y;
        ``partial`` (a ``partial_fit`` batch) allows classes of zero weight
        in the batch and refuses class_weight='balanced'.
        """
        self._check_parameters()
        kernel = self._kernel_param()
        previous = {k: self.__dict__[k] for k in INPUT_ATTRIBUTES if k in self.__dict__}
        if callable(kernel):            # X goes to the callable as given, as for SVC
            X = callable_kernel_input(X)
            check_consistent_length(X, y)
            y = column_or_1d(y, warn=True)
            if reset:
                for stale in INPUT_ATTRIBUTES:
                    self.__dict__.pop(stale, None)
        else:
            if kernel == "precomputed" and sp.issparse(X):
                raise TypeError("sparse precomputed kernels are not supported: pass the kernel "
                                "matrix as a dense array")
            X = check_sparse_structure(X)
            X, y = validate_data(self, X, y, accept_sparse=_sparse_format(kernel),
                                 dtype=np.float64 if kernel == "precomputed" else
                                 [np.float64, np.float32], order="C", reset=reset)
            X = canonical_csr(native_byteorder(X))
            if kernel == "precomputed" and X.shape[0] != X.shape[1]:
                raise ValueError(f"Precomputed matrix must be a square matrix. Input is a "
                                 f"{X.shape[0]}x{X.shape[1]} matrix.")
        if reset:   # what validation set waits for _publish; the previous model keeps its own
            self._input_attributes = {k: self.__dict__.pop(k) for k in INPUT_ATTRIBUTES
                                      if k in self.__dict__}
            self.__dict__.update(previous)
        check_classification_targets(y)
        y_enc, given = None, classes is not None
        if classes is None:
            classes, y_enc = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            got = (f"got 1 class: {classes.tolist()[0]!r}" if len(classes) else
                   "got an empty classes=" if given else "got 0 samples")
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; {got}")
        if y_enc is None:
            unknown = np.setdiff1d(y, classes)
            if unknown.size:
                raise ValueError(f"labels {unknown.tolist()!r} are not among the classes "
                                 f"{classes.tolist()!r} (pass every class with classes= on the "
                                 "first call)")
            y_enc = np.searchsorted(classes, y)
        weights, class_weight = self._sample_weights(X, y, y_enc, classes, sample_weight,
                                                     partial)
        # over every row, those of weight 0 too: the model must take its own training rows;
        # and before gamma='scale' takes X's variance
        max_sq_norm = (0.0 if callable(kernel) or kernel == "precomputed"
                       else check_value_range(X))
        rows = np.flatnonzero(weights > 0)
        if len(rows) < len(weights):
            X = (X[np.ix_(rows, rows)] if kernel == "precomputed" else _safe_indexing(X, rows))
            y_enc, weights = y_enc[rows], weights[rows]
        resolved = Kernel.resolve(kernel, self._gamma_param(), getattr(self, "degree", 3),
                                  getattr(self, "coef0", 0.0), X)
        check_kernel_range(resolved, max_sq_norm)
        return TrainingProblem(X, y_enc.astype(np.intp), classes, weights, rows, resolved,
                               class_weight)

    def _sample_weights(self, X, y, y_enc, classes, sample_weight, partial):
        """(s_i, class weights): s_i = class weight x sample weight, validated (see the module
        docstring), and the weight of each class (ones for ``class_weight=None``)."""
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                       ensure_non_negative=True)
        per_class = np.ones(len(classes))
        if self.class_weight is not None:
            if isinstance(self.class_weight, str) and partial:
                raise ValueError("class_weight='balanced' needs every label at once; for "
                                 "partial_fit compute the weights with "
                                 "sklearn.utils.class_weight.compute_class_weight on all labels "
                                 "and pass them as a dict")
            if isinstance(self.class_weight, str):  # counts weighted: weight 0 is absent
                totals = np.bincount(y_enc, weights, len(classes))
                check_class_totals(totals, classes)
                # scikit-learn's weighted formula (compute_class_weight's sample_weight=,
                # new in 1.7), n / (n_classes * bincount(y)) for unit weights
                per_class = weights.sum() / (len(classes) * totals)
            else:
                per_class = dict_class_weight(self.class_weight, classes)
            if not np.all(np.isfinite(per_class) & (per_class >= 0)):
                raise ValueError(f"class_weight must be finite and >= 0; got "
                                 f"{dict(zip(classes.tolist(), per_class.tolist()))}")
            weights = weights * per_class[y_enc]
        with np.errstate(over="ignore"):
            total = weights.sum()
        if not np.isfinite(total):
            raise ValueError("the sample weights (times class_weight) sum to infinity; "
                             "scale them down")
        if total == 0:
            raise ValueError("all samples have zero weight (sample_weight times class_weight)")
        if not partial:
            check_class_totals(np.bincount(y_enc, weights, len(classes)), classes)
        return weights, per_class

    def _check_parameters(self):
        """Finite numeric parameters, integers that fit the compiled kernels' 64 bits, and a
        kernel the method supports (clear errors)."""
        for name, value in self.get_params(deep=False).items():
            if (isinstance(value, Real) and not isinstance(value, (bool, Integral))
                    and not np.isfinite(value)):
                raise ValueError(f"{name} must be finite; got {value!r}")
            if (isinstance(value, Integral) and not isinstance(value, bool)
                    and not -2**63 <= value < 2**63):
                raise ValueError(f"{name} must be a 64-bit integer (below 2**63 in size); "
                                 f"got {value}")
        kernel = self._kernel_param()
        name = "callable" if callable(kernel) else kernel
        if name not in self._kernels:
            raise ValueError(f"{type(self).__name__} does not support kernel={kernel!r}: "
                             f"{self._kernel_reason}")

    def _kernel_param(self):
        return getattr(self, "kernel", "linear")

    def _gamma_param(self):
        """The gamma to resolve into the problem's kernel."""
        return getattr(self, "gamma", "scale")

    def _publish(self, fitted, class_weight):
        """Set the fitted attributes at once, with ``class_weight_`` (the weight of each
        class, as SVC's), dropping those of an earlier fit that this fit does not have
        (another kernel, another solver).

        A model holding NaN or inf (an overflow) is refused with a ValueError
        before anything is set: never a silently broken model.
        """
        fitted = {**fitted, "class_weight_": np.asarray(class_weight, dtype=np.float64)}
        broken = sorted(name for name, value in fitted.items() if _non_finite(value))
        if broken:
            raise ValueError(self._overflow_message(f"non-finite {', '.join(broken)}"))
        held = self.__dict__.pop("_input_attributes", None)
        if held is not None:            # n_features_in_, feature_names_in_ of this fit's X
            fitted = {**held, **fitted}
        stale = [name for name in vars(self) if name.endswith("_") and not name.startswith("_")
                 and (held is not None or name not in INPUT_ATTRIBUTES) and name not in fitted]
        for name in stale:
            delattr(self, name)
        for name, value in fitted.items():
            setattr(self, name, value)

    def _fan_out(self, solve, items, total, unit):
        """``solve(item, bar)`` for every item (binary problems), in threads: the compiled
        kernels release the GIL.  ``bar`` is a shared tqdm progress bar of ``total`` units
        (None for solvers that stop on a tolerance: a count and a rate, since their cap
        would show a fit that ends at 1 % of it)."""
        with progress_bar(self.verbose, total, unit, type(self).__name__) as bar:
            return Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(solve)(item, bar) for item in items)

    # -------------------------------------------------------------- predict
    def decision_function(self, X):
        """Decision values of each binary model.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes): the one-vs-rest
        models' values, or for one-vs-one models SVC's per-class scores
        (see :func:`fastsvm.multiclass.ovo_scores`).
        """
        check_is_fitted(self, "intercept_")
        X = self._validate_for_predict(X)
        n, n_models = _num_rows(X), len(self.intercept_)
        n_scores = len(self.classes_) if n_models > 1 else 1
        out = np.empty((n, n_scores))
        # in row blocks: the binary models' values of n rows (one-vs-one pairs of 30
        # classes: 435 per row) would take n x n_models float64 on top of the output; a
        # block's values fill a quarter of PREDICT_CHUNK_BYTES, since scoring them takes
        # a few arrays of their size
        step = max(1, _options.PREDICT_CHUNK_BYTES // (32 * n_models))
        with progress_bar(self.verbose and n > step, n, "row",
                          f"{type(self).__name__} decision values") as bar:
            for start in range(0, n, step):
                rows = slice(start, min(n, start + step))
                decision = self._decision(X if n <= step else _take(X, rows))
                decision += self.intercept_         # a fresh array from every _decision
                check_finite_output(decision, "decision values")
                out[rows] = decision if n_models == 1 else self._class_scores(decision)
                bar.update(rows.stop - rows.start)
        return out[:, 0] if n_scores == 1 else out

    def _class_scores(self, decision):
        """Per-class scores from the binary models' decision values: SVC's votes and
        confidences for one-vs-one models, the values themselves for one-vs-rest."""
        n_classes = len(self.classes_)
        if self._multi_class(n_classes) == "ovo":
            return ovo_scores(decision, n_classes)
        return decision

    def _multi_class(self, n_classes):
        """How a fit on ``n_classes`` > 2 classes splits them: 'ovo' or 'ovr' (the
        ``multi_class`` parameter resolved; 'ovr' for an estimator without one)."""
        return resolve_multi_class(getattr(self, "multi_class", "ovr"), n_classes)

    def predict(self, X):
        """Predicted class labels."""
        return labels_from_decision(self.decision_function(X), self.classes_)

    def _validate_for_predict(self, X):
        kernel = self._kernel_param()
        if callable(kernel):
            X = callable_kernel_input(X)
            if _num_samples(X) == 0:
                raise ValueError("X has 0 samples")
            return X
        if kernel == "precomputed" and sp.issparse(X):
            raise TypeError("sparse precomputed kernels are not supported: pass the kernel "
                            "matrix as a dense array")
        X = validate_data(self, check_sparse_structure(X), accept_sparse=_sparse_format(kernel),
                          dtype=[np.float64, np.float32], order="C", reset=False)
        X = canonical_csr(native_byteorder(X))
        if kernel != "precomputed":
            check_kernel_range(self._fitted_kernel(), check_value_range(X))
        return X

    def _fitted_kernel(self):
        """The kernel of the fitted model (gamma as resolved by the fit)."""
        kernel = self._kernel_param()
        return Kernel("callable" if callable(kernel) else kernel, getattr(self, "gamma_", None),
                      int(getattr(self, "degree", 3)), float(getattr(self, "coef0", 0.0)),
                      kernel if callable(kernel) else None)

    def _expansion_decision(self, X):
        """sum_j dual_coef_[m, j] k(sv_j, x) of each model m (kernel-expansion models).

        Where each support vector belongs to a few of many models (one-vs-one
        pairs, separate budgets: mostly zeros), the coefficients are multiplied
        as a sparse matrix, in time linear in their non-zeros, not in
        n_SV x n_models."""
        kernel = self._fitted_kernel()
        centers = self.support_ if kernel.name == "precomputed" else self.support_vectors_
        coef = self.dual_coef_.T
        if coef.shape[1] > 2 and np.count_nonzero(coef) <= SPARSE_COEF_DENSITY * coef.size:
            coef = sp.csr_array(coef)
        return kernel.expansion(X, centers, coef)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        kernel = self._kernel_param()
        tags.input_tags.sparse = kernel != "precomputed"
        tags.input_tags.pairwise = kernel == "precomputed"
        return tags


class LinearKernelCoefMixin:
    """SVC's ``coef_`` for models kept as kernel expansions (BudgetSVC, MarginSGDSVC)."""

    @property
    def coef_(self):
        """With ``kernel='linear'``, the weights on the features of each binary model,
        ndarray of shape (n_models, n_features_in_): sum_j dual_coef_[m, j] sv_j, so that
        ``X @ coef_.T + intercept_`` are the models' decision values (SVC's attribute);
        for other kernels an AttributeError, as SVC raises."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self, "dual_coef_")
        return np.asarray(self.dual_coef_ @ self.support_vectors_, dtype=np.float64)
