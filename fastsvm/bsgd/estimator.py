"""BudgetSVC: the scikit-learn estimator for budgeted SGD kernel SVM training."""

import copy
import math
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _options
from .._packed import PackedData
from ..base import (COMMON_CONSTRAINTS, KERNEL_CONSTRAINTS, BaseSVC, LinearKernelCoefMixin,
                    check_dense_vectors)
from ..merge import METHODS
from ..merge.table import load_tables
from ..multiclass import (AUTO_OVO_MAX_CLASSES, MULTI_CLASS, Problems, n_binary_models,
                          ovo_pairs, ovo_problems, resolve_multi_class)
from . import _kernels
from .solver import (STORE_COPIES, BSGDState, BSGDStream, hinge_offset, mean_hinge, run_pass,
                     summarize)

MAINTENANCE = {"merge": _kernels.MERGE, "remove": _kernels.REMOVE}
LEARNING_RATES = ("linear-decay", "pegasos")
#: ``budget='auto'``: round(AUTO_BUDGET sqrt(q)) support vectors per budget, q = 1 for one
#: model over all rows, K for the K one-vs-rest models of a shared budget and 2 / K for
#: each one-vs-one pair (see :class:`BudgetSVC`).
AUTO_BUDGET = 500
#: ``budget='auto'`` holds AUTO_SPREAD_FACTOR times as many vectors on spread data: where
#: :func:`nearest_kernel`, the median RBF kernel value from a sampled row to its nearest
#: other sampled row, is below AUTO_SPREAD_KAPPA (see "Spread data" in :class:`BudgetSVC`).
AUTO_SPREAD_KAPPA = 0.5
AUTO_SPREAD_FACTOR = 4
#: ``budget='auto'`` with the linear kernel and ``maintenance='merge'``, whose merges are
#: exact: every budget gives the same model up to rounding, and the smallest is the fastest
#: (see "Kernels" in :class:`BudgetSVC`).
AUTO_LINEAR_BUDGET = 2


def check_steps(epochs, n):
    """A clear error where ``epochs`` passes over n rows are more SGD steps than the
    compiled kernels' 64-bit step counts hold."""
    if epochs * n >= 2**63:
        raise ValueError(f"epochs={epochs} over {n} rows is {epochs * n} SGD steps, more than "
                         "a 64-bit step count holds")


def resolve_budget(budget, n_classes, multi_class="auto", shared_budget=True, spread=False):
    """The support vectors that one budget holds in a fit on ``n_classes`` classes:
    ``budget``, or for 'auto' round(b sqrt(q)) (at least 2), b = AUTO_BUDGET, or
    AUTO_SPREAD_FACTOR times that on ``spread`` data, q = K for K > 2 one-vs-rest models
    sharing one budget, 2 / K for each of the K (K - 1) / 2 one-vs-one pairs (whose rows
    are about 2 / K of all), else 1 (two classes, or separate one-vs-rest budgets)."""
    if budget != "auto":
        return budget
    q = 1.0
    multi_class = resolve_multi_class(multi_class, n_classes)
    if n_classes > 2 and multi_class == "ovo":
        q = 2.0 / n_classes
    elif n_classes > 2 and shared_budget:
        q = n_classes
    base = AUTO_BUDGET * (AUTO_SPREAD_FACTOR if spread else 1)
    return max(2, round(base * math.sqrt(q)))


def resolve_shared_budget(shared_budget, n_classes, multi_class="auto", kernel="rbf",
                          maintenance="merge", budget="auto", n_features=0):
    """Whether the one-vs-rest models of a fit on ``n_classes`` classes share one budget:
    ``shared_budget``, or for 'auto' (see "One-vs-rest" in :class:`BudgetSVC`) True up to
    ``AUTO_OVO_MAX_CLASSES`` classes and False above (a ``budget`` per class).  Except:

    * the linear kernel's exact merges (``maintenance='merge'``) always take a budget per
      class;
    * above, one budget is shared where separate ones could pass
      ``_options.DENSE_VECTORS_MAX_BYTES``: K stores of ``budget`` dense rows of
      ``n_features`` values (0 for a kernel matrix), as :func:`check_stores` counts them
      (40 classes at the 'auto' budget: from 13,422 features), or a dense ``dual_coef_`` of
      K models x K budgets at their largest 'auto' (on spread data; from 519 classes).
      There the shared budget's fewer vectors fit where the separate ones are refused.

    False where no models are split one-vs-rest (two classes, one-vs-one)."""
    if n_classes <= 2 or resolve_multi_class(multi_class, n_classes) != "ovr":
        return False
    if shared_budget != "auto":
        return bool(shared_budget)
    if isinstance(kernel, str) and kernel == "linear" and maintenance == "merge":
        return False
    if n_classes <= AUTO_OVO_MAX_CLASSES:
        return True
    per_class = resolve_budget(budget, n_classes, "ovr", shared_budget=False)
    largest = resolve_budget(budget, n_classes, "ovr", shared_budget=False, spread=True)
    return (8 * 2 * n_classes * per_class * n_features > _options.DENSE_VECTORS_MAX_BYTES
            or 8 * n_classes * n_classes * largest > _options.DENSE_VECTORS_MAX_BYTES)


def nearest_kernel(kernel, X):
    """How close the training rows lie in the RBF kernel's feature space: the median, over a
    sample of min(n, AUTO_BUDGET) rows (drawn with a fixed seed), of each sampled row's
    largest kernel value k(x_i, x_j) to another sampled row.  None for kernels other than
    'rbf' (whose values have no common scale) and fewer than two rows.

    A budget of B vectors spread over the data keeps each about as far from its nearest
    neighbour as B rows drawn at random, and the best merge of two vectors of equal
    coefficients loses this share of their squared norm (4 wd / (2 + 2 kappa), with
    :mod:`fastsvm.merge`'s wd per unit (alpha_a + alpha_b)^2): 0.1 % at kappa = 0.9,
    1.6 % at 0.7, 5.7 % at 0.5, 16 % at 0.3, 35 % at
    exp(-2) and half as kappa -> 0."""
    n = X.shape[0]
    if kernel.name != "rbf" or n < 2:
        return None
    rows = np.sort(np.random.default_rng(0).choice(n, min(n, AUTO_BUDGET), replace=False))
    sample = X[rows]
    K = kernel(sample, sample)
    np.fill_diagonal(K, -np.inf)
    return float(np.median(K.max(axis=1)))


def check_stores(states, budget, rows, n_features):
    """Refuse, before training, dense support-vector stores of several binary models (one
    per one-vs-one pair, or per class with separate budgets) that could outgrow
    ``_options.DENSE_VECTORS_MAX_BYTES`` with the ``support_vectors_`` stacked from them:
    state s may hold min(budget, its vectors + ``rows[id(s)]``), since each row enters at
    most once (a row that is its own vector takes its steps there).  A
    single store checks itself as it grows (:meth:`BSGDState.reserve`), so a large budget
    costs nothing until it is used."""
    if len(states) > 1:
        check_dense_vectors(sum(min(budget, s.n_sv + rows.get(id(s), 0)) for s in states),
                            n_features, copies=2)


def stack_support_vectors(states, n_features):
    """The support vectors of ``states`` stacked in order, written straight into one
    array (no per-state copies on the way)."""
    out = np.empty((sum(s.n_sv for s in states), n_features))
    start = 0
    for s in states:
        out[start:start + s.n_sv] = s.svt[:, :s.n_sv].T
        start += s.n_sv
    return out


def _dual_coef(streams):
    """dual_coef_ (n_models x n_sv) of the streams' states: a shared budget's coefficient
    vectors, or each binary model's block of its own support vectors (a one-vs-one pair
    that has seen no rows yet has none).

    The blocks' dense array grows as the number of models times all their vectors, so
    beyond ``_options.DENSE_VECTORS_MAX_BYTES`` it is refused (ValueError) before it is
    allocated: 150 classes one-vs-one on 6,000 rows gave 11,175 pairs with 188,669
    vectors in all, a 15.7 GiB array (a MemoryError after the training, or swapping).
    """
    if streams[0].states[0].shared:
        return streams[0].states[0].alpha(streams[0].lam).T.copy()
    blocks = [s.alpha(stream.lam) if s.n_sv else np.zeros(0)
              for stream in streams for s in stream.states]
    bounds = np.cumsum([0] + [len(b) for b in blocks])
    need = 8 * len(blocks) * int(bounds[-1])
    if need > _options.DENSE_VECTORS_MAX_BYTES:
        raise ValueError(
            f"the {len(blocks):,} binary models hold their own support vectors, {bounds[-1]:,} "
            f"in all, and their dual_coef_ ({len(blocks):,} x {bounds[-1]:,}, dense) would "
            f"take {need / 2**30:.1f} GiB, more than fastsvm._options.DENSE_VECTORS_MAX_BYTES "
            f"({_options.DENSE_VECTORS_MAX_BYTES / 2**30:.1f} GiB) allows: use "
            "multi_class='ovr' with shared_budget=True (one budget for all classes; 'auto' "
            "takes one-vs-rest above 30 classes) or a smaller budget")
    dual_coef = np.zeros((len(blocks), bounds[-1]))
    for c, block in enumerate(blocks):
        dual_coef[c, bounds[c]:bounds[c + 1]] = block
    return dual_coef


#: Parameters a partial_fit stream is built with (its kernel, budget and split); changing
#: one between calls is refused.
STREAM_PARAMS = ("kernel", "gamma", "degree", "coef0", "budget", "multi_class",
                 "shared_budget", "maintenance")


def _same_param(a, b):
    return a is b or (not callable(a) and bool(a == b))


def _streams(estimator):
    """partial_fit exists for kernels evaluated from the features (the AttributeError says
    why not for a kernel matrix)."""
    kernel = estimator.kernel
    if callable(kernel) or kernel == "precomputed":
        raise AttributeError("partial_fit needs a kernel evaluated from the features: a kernel "
                             "matrix ('precomputed' or a callable's) does not extend across "
                             "batches; use fit")
    return True


class BudgetSVC(LinearKernelCoefMixin, BaseSVC):
    r"""Kernel SVM trained by budgeted stochastic gradient descent (BSGD).

    Pegasos-style SGD on the primal SVM objective in a kernel's feature space,
    keeping at most ``budget`` support vectors: whenever a margin violation
    would make it B+1, two support vectors are merged into one (or, with
    ``maintenance='remove'``, the smallest is dropped).  The merge coefficient
    comes from golden section search or from a precomputed lookup table
    (Glasmachers & Qaadan, "Speeding Up Budgeted Stochastic Gradient Descent
    SVM Training with Precomputed Golden Section Search", Alg. 1 and Sec. 3;
    BSGD itself: Wang, Crammer & Vucetic, JMLR 2012).

    Objective (the paper's, without the offset that ``fit_intercept`` adds;
    see "The offset" below), with sample weights s_i (class weight times
    sample weight, 1 by default) and S = sum_i s_i:

    .. math::

        \min_w \frac{\lambda}{2}\|w\|^2 + \frac{1}{S}\sum_{i=1}^n
        s_i \max(0, 1 - y_i \langle w, \phi(x_i)\rangle),
        \qquad \lambda = \frac{1}{S C},

    which is the paper's objective with lambda = 1/(nC) for unit weights and
    SVC's :math:`\frac12\|w\|^2 + C\sum_i s_i \max(0, \cdot)` divided by SC.
    Step t on a random example: :math:`w \leftarrow (1 - \rho_t) w + [y_i f(x_i) < 1]
    \frac{\rho_t c_i y_i}{\lambda}\phi(x_i)` with the step weight c_i = s_i n / S:
    a weight scales the example's subgradient step (as in scikit-learn's
    ``SGDClassifier``), so every example is still visited once per epoch and
    equal weights give the unweighted algorithm exactly.  A row weighing more
    than 100 times the median row takes at least the step of 100 and beyond it
    only as much of its weight as brings its margin to 1 (Karampatziakis &
    Langford's importance-aware step, :mod:`fastsvm._importance`): a full step of
    a few rows weighing 1,000 times the rest gave them, at their first violation,
    the coefficient of 1,000 violations, and a pass had no draws left to undo it
    (test accuracy 76.7 % against SVC's 95.4 %).  Class weights up to 100 times
    the median (a class of 1 % against the rest) keep their full steps.
    ``fit`` runs ``epochs`` passes, each over a fresh random permutation.

    Step sizes (``learning_rate``): the paper's Pegasos steps
    :math:`\rho_t = 1/t` (eta_t = 1/(lambda t)) give every margin violation
    the same weight 1/(lambda T) in the final model, however late it came,
    and the final model is the last iterate; with one pass at a large C
    (covtype, C = 2^5, budget 500) its test accuracy swings by 4-5 points
    from seed to seed.  Averaging the iterates cures this without a budget,
    but a budget moves support vectors at every merge, and averaged
    coefficients carried through merges lose the later corrections
    (measured: worse than the last iterate).  The default
    ``'linear-decay'`` instead shrinks the step over the T = ``epochs`` * n
    steps of ``fit``,

    .. math::

        \rho_t = \frac{1}{t}\,\frac{2(T + 1 - t)}{2T + 1 - t},

    from Pegasos' 1/t at the start to 2/(T(T+1)) at the end, which gives the
    violation at step s the weight 2(T + 1 - s)/(lambda T (T + 1)) in the last
    iterate: the weight it has in the linearly weighted average
    :math:`\sum_t t\,w_t / \sum_t t` of Pegasos iterates (Lacoste-Julien,
    Schmidt & Bach, 2012); a linearly decaying step as the last-iterate form
    of averaging (Defazio, Cutkosky, Mehta & Mishchenko, 2023).  It costs
    nothing per step (the scaled coefficients absorb it exactly, see
    :mod:`fastsvm.bsgd._kernels`).  Measured (lookup-wd):

    * covtype, one pass, C = 2^5, budget 500, seeds 0-4: 79.6 +- 0.2 %
      against Pegasos' 72.5 +- 4.1 % (budget 100: 75.6 +- 1.2 % against
      73.0 +- 3.6 %);
    * at the defaults (C = 1, gamma = 'scale', budget 500, 5 epochs), seeds
      0-2, it is as good or better on the shared sets and the generated
      ones of ``benchmarks/_generated.py`` (a9a 85.10 against 84.88 %,
      ijcnn1 98.11 / 97.84, phishing 95.78 / 95.54, usps 94.64 / 94.59,
      covtype 80.64 +- 0.03 / 80.16 +- 0.32, skin_nonskin 99.83 / 99.82,
      small 86.33 / 85.50, multiclass 88.72 / 88.58, imbalanced equal), the
      one exception within noise (wide_sparse 69.78 +- 0.25 against
      70.13 +- 0.31), with a smaller spread from seed to seed;
    * its one known loss: ``merge_method='gss'`` at the paper's a9a setting
      (C = 2^5, 5 epochs, budget 100) falls to 82.4 +- 1.2 % against
      83.8 +- 0.4 %, as late merge errors are no longer corrected by large
      late steps.

    ``learning_rate='pegasos'`` is the paper's Algorithm 1 (what
    ``benchmarks/bsgd_paper_tables.py`` reproduces).

    Kernels: SVC's 'rbf' (the paper's), 'linear', 'poly', 'sigmoid',
    'precomputed' and callables.  Merging needs the Gaussian kernel: the
    merged point z = h x_a + (1 - h) x_b is found from
    k(x_a, z) = kappa^((1-h)^2), which holds for exp(-gamma ||x - z||^2) only.
    With the linear kernel a merge is exact: h = beta_a / (beta_a + beta_b)
    gives (beta_a + beta_b) z = beta_a x_a + beta_b x_b, the same w, so every
    budget gives the model of unbudgeted steps up to rounding, and 'auto' is
    the fastest, 2 (``AUTO_LINEAR_BUDGET``; the smallest vector joins the
    largest of its sign, see :mod:`fastsvm.bsgd._kernels`).  At the defaults
    on the sets of ``benchmarks/defaults_vs_svc.py``, against removal with the
    default budget 500 (seed 0): a9a 74.83 -> 84.68 % test accuracy (0.66 ->
    0.13 s), ijcnn1 82.73 -> 92.16 %, covtype 69.20 -> 75.90 %, the generated
    multiclass 44.30 -> 74.95 %, noisy_moons 60.27 -> 84.77 %, wide_sparse
    59.40 -> 73.65 %; SVC(kernel='linear') reaches 94.17 % on phishing (here
    94.03 %), 92.63 % on usps (92.78 %), 77.05 % on multiclass and 90.30 % on
    dense_wide (87.60 %): five epochs of SGD, not a solve to the optimum (for
    that, :class:`fastsvm.HuberSVC`).  Exact merges need one model per budget,
    so one-vs-rest models have a budget each (``shared_budget='auto'``; True
    is refused).
    The other kernels take ``maintenance='remove'``, which drops the smallest
    support vector and works in any feature space, but loses what it drops: with
    the linear kernel on uncentred features it can lose the balance of the
    classes (two blobs 3 apart at an offset of 3, 6,000 rows: 14.8 % and 0.4 %
    training accuracy at seeds 0 and 4, 99.6-99.9 % at seeds 1-3; standardised,
    99.9 % at every seed; merged, 99.8-99.9 % at every seed).  A fit whose binary
    model fits its training rows worse than a constant decision, both in mean
    hinge loss (each with its best
    offset) and in accuracy, warns with a ``ConvergenceWarning``: the SVM
    optimum's loss is at most the constant's, so such a model is far from it.
    (The loss alone also flagged useful models far from the optimum: the
    paper's steps on ijcnn1, budget 100 and 5 epochs, leave a mean hinge loss
    of 0.230 against the constant's 0.194, and 97.1 % of the training rows
    right, where the larger class is 90.3 %.)

    **A row's own vector.**  A violating training row that is still a support
    vector of its own (not merged) takes the step into its coefficient instead
    of entering a second time: phi(x) is the same vector, so w is the same.  A
    row is known by its index within the rows of one call: the vectors of
    earlier ``partial_fit`` batches are no longer rows, since the next batch's
    row i is another point (:class:`fastsvm.dask.DaskBudgetSVC`, whose model
    travels through pieces of partitions, numbers the rows of all partitions
    instead).  The paper's Algorithm 1 adds the row again, and merging joins the
    two copies at zero degradation, but only once the budget is full, so a
    budget above the rows filled with copies first: 300 classes of 10 rows
    (one-vs-rest on the 'auto' shared budget 500 sqrt(300) = 8,660) kept 8,660
    vectors for 3,000 rows and fitted in 12.4 s, now 3,000 in 1.75 s (test
    accuracy 99.10 -> 99.13 %, seeds 0-2).  Where the budget fills, fewer
    copies are merged: usps (one-vs-one, 224 vectors per pair) 9,008 -> 1,484
    merges, 2.74 -> 2.31 s, 94.64 -> 94.69 %; dense_wide 96.72 -> 96.80 %;
    a9a, ijcnn1, covtype, sphere and noisy_moons as before (every seed's
    accuracy the same).  With removal it keeps the model: without it the
    budget filled with vectors that the step schedule makes ever smaller (each
    new one is the smallest, so it is the one removed, and every coefficient
    shrinks with the steps), and the model decayed toward 0 with the epochs:
    the 5-class set of ``benchmarks/_generated.py`` fell to 20 % test accuracy
    at 20 epochs (rbf; now 89.3 %), 200 rows of two blobs to 57 % training
    accuracy at 50 epochs (poly; now 94.5 %).  The budget's rows still stay
    those of the first violators (each new one is the smallest), so removal
    fits the SVM on their coefficients only: on 10,000 rows of a9a and ijcnn1
    (seeds 0-1, 5 and 20 epochs) rbf and poly gained 0.4 to 2.3 points, but
    the linear kernel lost 5 to 6 points on a9a (82.5 -> 76.5 %: the decaying
    model had been the sum of the first violators, a good linear rule there).
    For a linear model merge (the default) or use :class:`fastsvm.HuberSVC`; for other
    kernels :class:`fastsvm.NystromSVC`.  The indefinite kernels ('sigmoid', and 'poly'
    with ``coef0 < 0``) have no feature space: the steps then descend no convex
    objective, and the result can be far from SVC's, in either direction (measured with
    removal at the default budget: 5 blobs, sigmoid, 72.4 % against SVC's 88.4 %, and as
    much with a budget above the rows; a binary make_classification set, poly with
    coef0 = -1, 87.3 % against 80.1 %).  NystromSVC keeps the kernel's positive part
    (96.7 % and 89.3 % there).
    A callable is evaluated once into the n x n kernel matrix, as SVC does.

    **The offset.**  The paper's objective (1) has none.  With
    ``fit_intercept=True`` the steps train one as the weight of a constant
    feature of value c = ``intercept_scaling``, as LIBLINEAR and scikit-learn's
    ``LinearSVC`` do: the kernel k + c^2, the offset regularised by
    lambda b^2 / (2 c^2) and never merged (see :mod:`fastsvm.bsgd._kernels`).
    After the passes b is set to its exact minimiser for the final w,
    min_b sum_i s_i max(0, 1 - y_i (<w, phi(x_i)> + b)), a closed form
    (:func:`fastsvm.bsgd.solver.hinge_offset`): SVC's offset for that w.  An
    unregularised offset updated by SGD with step 1/(lambda t) would be
    dominated by its first steps, and without the exact one the constant
    level of f is the small difference of large positive and negative
    coefficient sums: on data where the kernel is nearly constant (a9a with
    gamma = 2^-7: kappa ~ 0.85 for typical pairs) test accuracy of the final
    iterate swung by 10-20 points from epoch to epoch.

    The exact offset alone (steps without one, ``intercept_scaling=0``: the
    paper's Algorithm 1) leaves w to the problem without offset, whose
    optimum can lie far from SVC's.  On ``sphere`` of
    ``benchmarks/_generated.py`` (the inside of a ball in 10 dimensions
    against its outside; SVC's b = 8.7) the objective that problem reaches
    unbudgeted after 100 epochs is 1.7 times SVC's (1,328 against 773), and
    BudgetSVC was 1.30 points below SVC (mean over 3 data seeds x 2 seeds).
    The trained offset gives -0.53 points at c = 0.25, -0.13 at 0.5 and
    +0.19 at 1 (``shells``, three concentric shells: -0.53 -> -0.29, +0.01,
    +0.25).  A larger c costs where the best offset is near 0 and the kernel
    values between rows are small, since each violation moves f everywhere
    by c^2 times its step: ``letters`` (26 classes) -0.77 -> -0.81, -0.93,
    -1.27; ``wide_sparse`` -0.73 -> -0.62, -0.66, -1.02; ``dense_wide`` -0.73
    -> -0.76, -0.86, -0.96; the other generated sets moved by at most 0.1
    point at c = 0.25.  c = 0.25, the default, has the smallest worst gap.

    Multi-class problems (K > 2 classes) are split one-vs-one by default, as
    SVC splits them, up to 30 classes (``multi_class='auto'``; 'ovo' always
    splits them so, 'ovr' never): one binary model per pair of
    classes (i, j), trained on the rows of classes i and j only, exactly as
    a binary BudgetSVC fitted on them alone (its own lambda = 1 / (C S_pair),
    S_pair the pair's weight, its own step weights, horizon and offset); the
    class with most votes wins (SVC's rule,
    :func:`fastsvm.multiclass.ovo_scores`).  Each pair holds its own budget,
    'auto' round(500 sqrt(2 / K)) (354 for 4 classes, 224 for 10, 139 for
    26): a pair sees about 2 / K of the rows, and the square root is the
    rule of the shared budget below.  The K (K - 1) / 2 pairs make (K - 1) n
    steps per epoch in all, against K n kernel-row evaluations for K
    separate one-vs-rest models, and each pair's problem is simpler than a
    class against all others.  At prediction the pairs' coefficients,
    mostly zero, are multiplied as a sparse matrix.

    With ``multi_class='ovr'`` the K one-vs-rest models share one budget of
    support vectors by default (``shared_budget=True``): each step computes
    the kernel row of its example once for all K models, a margin violation
    in any of them adds one support vector with a coefficient in each, and
    merging minimises the summed weight degradation of the K models (see
    :mod:`fastsvm.bsgd._shared_kernels`).  That costs one kernel row per step
    instead of K and bounds the whole model by ``budget``, 'auto'
    round(500 sqrt(K)) (1,581 for 10 classes): a budget of 500 shared by 26
    classes (about 20 support vectors per class) lost 3.7 points to SVC on a
    26-class set, and 500 K, what separate budgets hold in all, makes every
    step K times dearer.  Above 30 classes, where ``multi_class='auto'``
    takes one-vs-rest, the square root falls short and ``shared_budget='auto'``
    gives each class its own budget of 500 (:func:`resolve_shared_budget`):
    on ``make_classification`` sets (20 features, two data seeds) of 40,
    60 and 100 classes of 10,000 rows and 40 classes of 30,000 the shared
    budget was 3.2-6.0 points below SVC, separate budgets -1.0 to +1.7 in
    about the same fit time (5.2 against 5.2 s, 6.9 / 7.2, 10.2 / 9.4,
    16.5 / 18.6; SVC 1.6-8.9 s), since a step on the shared budget computes
    K margins over all its vectors.  On spread rows (budgets grown 4 times)
    of 10,000 rows the grown shared budget held every row without a merge and
    fitted 1.4-2 times faster at the same accuracy; on 30,000 such rows it
    had to merge and fell 12.9 points below separate budgets (README,
    "Above 30 classes").  'auto' does not look at the rows, so that a model
    file resolves it from the parameters and the number of features.

    **Spread data.**  The best merge of two support vectors of equal
    coefficients whose kernel value is kappa loses 0.1 % of their squared
    norm at kappa = 0.9, 5.7 % at 0.5 and 35 % at exp(-2) (see
    :func:`nearest_kernel`), and in many dimensions every row lies far from
    every other: with gamma='scale', the rows of 300 or more informative
    dimensions see kernel values of about exp(-2) between each other.  There
    a budget of 500 loses much of the model.  Measured at the defaults
    against SVC (seeds 0-2): scikit-learn's ``make_classification`` with
    8,000 rows of 300 features (40 informative) -2.50 points, of 1,000
    features (20 informative) -3.43, 3,000 rows of 500 features -1.24 and
    -2.09 (two data seeds), the sparse 5,000-feature set of
    ``benchmarks/_generated.py`` -1.50; without any budget, 5 epochs reach
    -0.25, -0.90 and -0.35 points on three of them.  So ``budget='auto'``
    first measures :func:`nearest_kernel`: for 500 rows drawn at random, the
    median of each one's largest kernel value to another.  It is 0.21-0.41 on
    those sets and 0.65-1.0 on the shared sets, the other generated ones,
    scikit-learn's digits, wine and breast_cancer (raw or scaled) and 9 of 10
    further sets from its generators; below ``AUTO_SPREAD_KAPPA`` = 0.5 the
    'auto' budget is
    ``AUTO_SPREAD_FACTOR`` = 4 times as large (2,000 for one model), or as
    large as ``_options.DENSE_VECTORS_MAX_BYTES`` allows the dense
    support-vector stores where that is less (sparse data of some hundred
    thousand features), never below the base budget.  That
    gives -0.90, -2.15, -0.44, -0.67 and -0.60 points on the sets above, at
    up to 4 times the time per step (in ``benchmarks/defaults_vs_svc.py``:
    the generated dense_wide, 8,000 x 300, from -1.00 points at 2.1x SVC's
    speed to -0.40 at 0.86x; the sparse set from 4.8x to 1.6x; since one BLAS
    product gives the dot products of 64 steps on dense rows,
    :func:`fastsvm.bsgd.solver.block_dots`, dense_wide fits at 2.0x SVC's
    speed); the value measured is ``training_info_['nearest_kernel']``.  The rule sees how far
    apart the rows lie, not how complex the boundary is: the one other set
    measured below 0.5, 60 binary features of which a fifth are set and a
    linear rule (3,750 training rows, 0.35), gets 2,000 vectors where 500 did
    as well (+0.32 points against SVC instead of +0.56, at 0.71x its speed
    instead of 3.07x).

    Measured at the defaults (``benchmarks/multiclass_split.py``, seeds 0-2,
    test accuracy and median fit time on two cores), one-vs-one against
    one-vs-rest on the shared 'auto' budget and SVC at its defaults: usps
    (10 classes, 7,291 rows) 94.69 % in 2.2 s against 94.52 % in 2.2 s (SVC
    94.72 % in 2.7 s); generated sets of ``benchmarks/_generated.py``:
    ``multiclass`` (5 classes, 6,000 rows) 89.48 % in 0.24 s against
    88.67 % in 0.53 s (SVC 89.40 % in 0.31 s), ``shells`` (3 concentric
    shells) 97.59 % in 0.14 s against 95.59 % in 0.45 s (SVC 97.64 % in
    0.21 s), ``letters`` (26 classes, 15,000 rows) 89.13 % in 1.8 s against
    86.54 % in 4.2 s (SVC 90.46 % in 1.7 s) and ``imbalanced_multi`` (6
    classes) 91.94 % in 0.46 s against 91.12 % in 0.87 s (SVC 92.13 % in
    0.84 s).  One-vs-one holds more vectors in all (usps 7,586 against
    1,581), so it predicts more slowly (usps' test set 0.15 s against
    0.04 s; SVC 1.1 s); ``multi_class='ovr'`` keeps the bounded model, and
    'auto' takes it above 30 classes, where the pairs' ``dual_coef_`` grows
    too large (see :data:`fastsvm.multiclass.AUTO_OVO_MAX_CLASSES`).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation, lambda = 1 / (S C), S the sum of the sample weights
        (n_samples without weights, as in the paper).
    kernel : {'rbf', 'linear', 'poly', 'sigmoid', 'precomputed'} or callable, default='rbf'
        As in SVC; all but 'rbf' and 'linear' need ``maintenance='remove'``.
    gamma : float or 'scale', default='scale'
        Kernel width; 'scale' is 1 / (n_features * X.var()), as in SVC.
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Constant of the 'poly' and 'sigmoid' kernels.
    budget : int or 'auto', default='auto'
        Maximum number of support vectors (at least 2): of the model, or with
        more than two classes of each one-vs-one pair, of the one-vs-rest
        models' shared budget or of each one-vs-rest model
        (``shared_budget=False``).  'auto' is 500 for one model over all
        rows (and for each one-vs-rest model of its own budget),
        round(500 sqrt(2 / K)) per pair of K > 2 classes and
        round(500 sqrt(K)) for K one-vs-rest models sharing a budget (see
        above), 4 times that on spread data (see "Spread data" above), and 2
        for the linear kernel's exact merges (see Kernels above); the
        value used is ``training_info_['budget']``.
    epochs : int, default=5
        Passes over the training data in ``fit`` (``partial_fit`` makes one).
    maintenance : {'merge', 'remove'}, default='merge'
        Budget maintenance: merge the smallest support vector with its best
        partner of the same sign (RBF kernel; with the linear kernel exactly),
        or remove it (see Kernels above).
    merge_method : {'lookup-wd', 'lookup-h', 'gss', 'gss-precise'}, default='lookup-wd'
        How the merge problem is solved: bilinear lookup of the weight
        degradation WD(m, kappa) or of h(m, kappa) in a 400 x 400 table, or
        golden section search to 0.01 or 1e-10 (see :mod:`fastsvm.merge`).
    learning_rate : {'linear-decay', 'pegasos'}, default='linear-decay'
        Step sizes of ``fit``: the paper's 1 / (lambda t) times a factor
        decaying linearly over the run (see above), or the paper's own.
        ``partial_fit`` does not know the length of the stream and always
        takes Pegasos steps.
    multi_class : {'auto', 'ovo', 'ovr'}, default='auto'
        More than two classes: one model per pair of classes, each trained
        on the rows of its two classes (as SVC), or one per class against
        the rest; see above.  'auto' is 'ovo' up to 30 classes and 'ovr'
        above, where the pairs' models grow too large (100 classes: 4,950
        pairs, a 5.4 GB ``dual_coef_``; one beyond
        ``_options.DENSE_VECTORS_MAX_BYTES`` is a ValueError), each class
        with its own budget (``shared_budget='auto'``); the value used is
        ``training_info_['multi_class']``.  Two classes make one model either
        way.
    shared_budget : bool or 'auto', default='auto'
        With ``multi_class='ovr'`` and more than two classes, the one-vs-rest
        models share one budget of support vectors (True) or each has its own
        (False, ``budget`` per class); see above.  'auto' shares one up to 30
        classes and gives each class its own above (where a shared budget
        lost 3-6 points) unless their dense stores could pass
        ``_options.DENSE_VECTORS_MAX_BYTES`` (many features or classes), and
        always with the linear kernel, whose exact merges need a budget per
        model (:func:`resolve_shared_budget`); the value used is
        ``training_info_['shared_budget']``.  One-vs-one pairs (the default
        split up to 30 classes) each keep their own budget: True warns there.
    fit_intercept : bool, default=True
        Train an offset b with the steps (see ``intercept_scaling``) and set
        it exactly after the SGD passes (on the batch, in ``partial_fit``);
        False keeps b = 0 as in plain BSGD.
    intercept_scaling : float, default=0.25
        Value c of the constant feature whose weight is the offset trained
        with the steps (regularised as lambda b^2 / (2 c^2), as in
        ``LinearSVC``); 0 trains none, as in the paper's Algorithm 1 (the
        offset is then only set after the passes).  See "The offset" above.
    class_weight : dict, 'balanced' or None, default=None
        Weight of each class, multiplying its samples' C as in SVC;
        'balanced' is n_samples / (n_classes * bincount(y)), the counts weighted
        by sample_weight (not in ``partial_fit``, which sees one batch at a
        time: pass a dict).
    diagnostics : bool, default=False
        Also solve every merge event with all four methods side by side and
        record how often GSS and the lookups choose the same partner and by
        which factor their weight degradation exceeds GSS-precise (Table 3 of
        the paper).  Slower; the training path is unchanged.  Binary merges
        only: with more than two classes one-vs-rest it needs
        ``shared_budget=False``.
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
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class, as SVC's: ``class_weight`` resolved (ones for None).
    n_features_in_ : int
    gamma_ : float or None
        The numeric kernel width used (None for kernels without one).
    support_vectors_ : ndarray of shape (n_sv_total, n_features_in_)
        Support vectors of all binary models, stacked in model order (for a
        callable kernel the training rows as given; empty for 'precomputed').
    support_ : ndarray of shape (n_sv_total,)
        Training row of each support vector in the last ``fit``; -1 for a
        merged vector (no training row) and after ``partial_fit``.
    dual_coef_ : ndarray of shape (n_models, n_sv_total)
        Coefficient alpha_j of each support vector in each model: the decision
        function of model c is sum_j dual_coef_[c, j] k(sv_j, x) + b_c.  With
        a shared budget every support vector has a coefficient in every model;
        with one-vs-one pairs or separate budgets each belongs to one model
        (zeros elsewhere).  The models: one for 2 classes, else one per pair
        (i, j), i < j, in the order (0, 1), (0, 2), ..., whose positive class
        is j (one-vs-one), or one per class (one-vs-rest).
    coef_ : ndarray of shape (n_models, n_features_in_)
        With ``kernel='linear'`` only (as SVC's): the features' weights of each
        model, dual_coef_ @ support_vectors_.
    n_support_ : ndarray of shape (n_models,)
        Support vectors with a non-zero coefficient in each binary model;
        with one-vs-one pairs or separate budgets they sum to n_sv_total.
    intercept_ : ndarray of shape (n_models,)
        Offset b of each binary model (zeros with ``fit_intercept=False``).
    training_info_ : dict
        The budget and split used (``budget``, ``multi_class``,
        ``shared_budget``, 'auto' resolved; ``nearest_kernel``, the statistic that resolved
        ``budget='auto'`` for the RBF kernel, else None) and the paper's
        instruments: steps, merges, merge frequency, time in SGD
        and in budget maintenance split into section A (computing h / WD) and
        section B (the rest), steps per second, microseconds per merge; with
        ``diagnostics=True`` also equal-decision rates and WD factors.
        Times are summed over all ``fit`` / ``partial_fit`` calls.

    Notes
    -----
    ``partial_fit`` streams: each call makes one pass over its batch in a
    random order.  The step counter t, and with it the Pegasos step size
    eta_t = 1 / (lambda t), continues across calls.  lambda is
    1 / (C * S_seen), S_seen being the weight of the samples passed so far
    (their number without weights), so a stream that delivers a data set
    ends with the lambda that ``fit`` uses; the step weights are
    s_i n_seen / S_seen.  When lambda changes between calls the model w is
    kept and only its internal scaling is updated.  A numeric gamma (or
    'scale' resolved on the first batch) stays fixed.  A kernel matrix
    ('precomputed' or a callable's) cannot grow across batches, so
    ``partial_fit`` needs a kernel evaluated from the features.

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
        **KERNEL_CONSTRAINTS,
        "budget": [StrOptions({"auto"}), Interval(Integral, 2, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "maintenance": [StrOptions(set(MAINTENANCE))],
        "merge_method": [StrOptions(set(METHODS))],
        "learning_rate": [StrOptions(set(LEARNING_RATES))],
        "multi_class": [StrOptions({"auto", *MULTI_CLASS})],
        "shared_budget": ["boolean", StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="left")],
        "diagnostics": ["boolean"],
        "random_state": ["random_state"],
        **COMMON_CONSTRAINTS,
    }

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, budget="auto",
                 epochs=5, maintenance="merge", merge_method="lookup-wd",
                 learning_rate="linear-decay", multi_class="auto", shared_budget="auto",
                 fit_intercept=True, intercept_scaling=0.25, class_weight=None,
                 diagnostics=False, n_jobs=None, random_state=None, verbose=0):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.epochs = epochs
        self.maintenance = maintenance
        self.merge_method = merge_method
        self.learning_rate = learning_rate
        self.multi_class = multi_class
        self.shared_budget = shared_budget
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.diagnostics = diagnostics
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        """``epochs`` passes of budgeted SGD over the problem, from an empty model."""
        check_steps(self.epochs, problem.n_samples)
        streams, pairs = self._start(problem), self._pairs(problem)
        for stream, rows in zip(streams, self._stream_rows(problem, pairs)):
            stream.see(problem.weights[rows], self.C)
            if self.learning_rate == "linear-decay":
                for state in stream.states:
                    state.horizon = self.epochs * len(rows)
        return self._train(streams, problem, self.epochs, pairs)

    def _one_vs_one(self, n_classes):
        return n_classes > 2 and resolve_multi_class(self.multi_class, n_classes) == "ovo"

    def _pairs(self, problem):
        """(rows, targets) of each one-vs-one pair (see
        :func:`fastsvm.multiclass.ovo_problems`), or None for one-vs-rest."""
        if not self._one_vs_one(len(problem.classes)):
            return None
        return ovo_problems(problem.y, len(problem.classes))

    @staticmethod
    def _stream_rows(problem, pairs):
        """The rows each stream trains on: every row for one-vs-rest, the pair's rows
        (classes i and j) for one-vs-one."""
        if pairs is None:
            return [np.arange(problem.n_samples)]
        return [pairs[k][0] for k in range(len(pairs))]

    @available_if(_streams)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass of budgeted SGD over a batch, continuing from the current model.

        As for any SGD, the order of the stream matters: each step moves the
        model toward its example, and the offset is refitted on the batch
        only where the batch holds both classes of a binary model.  Rows sorted
        by class (a batch per class) train each model on one class at a time:
        three Gaussian blobs of 200 rows each, fed in two class-sorted batches
        (classes 0 and 1, then 2), gave 46 % training accuracy against 92.5 %
        in six batches of shuffled rows.  Shuffle rows across batches.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All classes of the stream; required on the first call unless that
            batch already contains every class.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights, as in ``fit``.

        Returns
        -------
        self
        """
        with self._fitting():
            self._partial_fit(X, y, classes, sample_weight)
        return self

    def _partial_fit(self, X, y, classes, sample_weight):
        streams = getattr(self, "_streams", None)
        if streams is None and hasattr(self, "dual_coef_"):
            raise ValueError("this BudgetSVC holds a model without the training state (step "
                             "counter, lambda) that partial_fit continues from (loaded from a "
                             "file, or DaskBudgetSVC.to_local()); train a new model with fit or "
                             "partial_fit instead")
        if streams is None:
            classes = None if classes is None else np.unique(np.asarray(classes))
        else:
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"classes={classes!r} differs from the classes of the first "
                                 f"call {self.classes_!r}")
            started = getattr(streams[0], "params", None) or {}
            changed = sorted(k for k, v in started.items() if not _same_param(getattr(self, k), v))
            if changed:
                raise ValueError(f"{', '.join(changed)} changed (set_params) since the stream "
                                 "started (fit, or the first partial_fit); its models were "
                                 "built with the earlier values: set them back, or start a "
                                 "new stream with fit or a clone")
            classes = self.classes_
            streams = copy.deepcopy(streams)    # the previous model stays intact
            for state in (state for stream in streams for state in stream.states):
                state.to_pegasos_steps()        # after fit's linear decay
                state.forget_rows()             # the rows of earlier batches are gone
        problem = self._problem(X, y, sample_weight, classes=classes, reset=streams is None,
                                partial=True)
        if streams is None:
            streams = self._start(problem)
        pairs = self._pairs(problem)
        for stream, rows in zip(streams, self._stream_rows(problem, pairs)):
            if len(rows):                       # a one-vs-one pair may be absent from a batch
                stream.see(problem.weights[rows], self.C)
        self._publish(self._train(streams, problem, 1, pairs, partial=True),
                      problem.class_weight)

    def _start(self, problem):
        """New streams (one, or one per one-vs-one pair): empty models, the kernel and the
        budget fixed ('auto' resolved on these rows), the seed sequences started."""
        n_features = 0 if problem.kernel.on_gram else problem.X.shape[1]
        kappa = (nearest_kernel(problem.kernel, problem.X)
                 if self.budget == "auto" and not problem.kernel.on_gram else None)
        budget = self._auto_budget(len(problem.classes), n_features, kappa, problem.kernel)
        if not self._one_vs_one(len(problem.classes)):
            streams = [self._new_stream(problem.kernel, n_features, problem.n_models)]
        else:
            if self.shared_budget is True:
                warnings.warn(
                    f"shared_budget=True is for one-vs-rest models; these "
                    f"{len(problem.classes)} classes are split one-vs-one (multi_class="
                    f"{self.multi_class!r}), each pair with its own budget: pass "
                    "multi_class='ovr' to share one budget", UserWarning)
            rng = check_random_state(self.random_state)
            streams = [self._new_stream(problem.kernel, n_features, 1,
                                        np.random.RandomState(rng.randint(np.iinfo(np.int32).max)))
                       for _ in ovo_pairs(len(problem.classes))]
        params = {k: v for k, v in self.get_params(deep=False).items() if k in STREAM_PARAMS}
        for stream in streams:
            stream.budget, stream.nearest_kernel, stream.params = budget, kappa, params
        return streams

    def _auto_budget(self, n_classes, n_features, kappa, kernel):
        """``budget`` resolved (:func:`resolve_budget`) for rows whose :func:`nearest_kernel`
        is ``kappa`` (None: not measured); on spread data 'auto' grows only
        as far as the dense support-vector stores of all binary models (``STORE_COPIES``
        copies each) stay within ``_options.DENSE_VECTORS_MAX_BYTES``, so that
        very wide sparse data the base budget fits is not refused for the growth.  The
        linear ``kernel``'s exact merges take AUTO_LINEAR_BUDGET."""
        if self.budget == "auto" and kernel.name == "linear" and self.maintenance == "merge":
            return AUTO_LINEAR_BUDGET
        shared = self._shares_budget(n_classes, n_features)
        budget = resolve_budget(self.budget, n_classes, self.multi_class, shared)
        if kappa is None or kappa >= AUTO_SPREAD_KAPPA:
            return budget
        grown = resolve_budget(self.budget, n_classes, self.multi_class, shared, spread=True)
        stores = 1 if shared else n_binary_models(n_classes, self.multi_class)
        affordable = (_options.DENSE_VECTORS_MAX_BYTES
                      // (8 * STORE_COPIES * max(n_features, 1) * stores) - 1)
        return max(budget, min(grown, affordable))

    def _shares_budget(self, n_classes, n_features):
        """Whether the one-vs-rest models of a fit on ``n_classes`` classes share one budget
        (``shared_budget`` resolved: :func:`resolve_shared_budget`); ``n_features`` is the
        width of the stores' rows (0 for a kernel matrix)."""
        return resolve_shared_budget(self.shared_budget, n_classes, self.multi_class,
                                     self.kernel, self.maintenance, self.budget, n_features)

    def _new_stream(self, kernel, n_features, n_models, rng=None):
        """Empty models of ``n_models`` binary problems on ``n_features`` features (0 for a
        kernel matrix) for the resolved ``kernel``, their seeds drawn from ``rng`` (default:
        ``random_state``); ``n_models`` > 1 are the one-vs-rest models of as many classes."""
        shared = n_models > 1 and self._shares_budget(n_models, n_features)
        if self.maintenance == "merge" and kernel.name not in ("rbf", "linear"):
            raise ValueError(
                f"maintenance='merge' needs the Gaussian or the linear kernel, not "
                f"kernel={self.kernel!r}: the merged support vector z = h x_a + (1 - h) x_b is "
                "placed using k(x_a, z) = k(x_a, x_b)^((1-h)^2), which holds for "
                "exp(-gamma ||x - z||^2) only, or exactly, for <x, z>; use "
                "maintenance='remove' (drop the smallest support vector), which works with "
                "every kernel but loses what it drops (a linear kernel given as a matrix or "
                "a callable merges exactly as kernel='linear')")
        if self.maintenance == "merge" and kernel.name == "linear":
            if self.diagnostics:
                raise ValueError("diagnostics=True compares the merge methods of the Gaussian "
                                 "kernel; the linear kernel's merges are exact")
            if shared:
                raise ValueError(
                    "maintenance='merge' with kernel='linear' merges two support vectors of one "
                    "model exactly, not of one-vs-rest models sharing a budget: use "
                    "shared_budget=False (a budget per model) or maintenance='remove'")
        if shared:
            if self.diagnostics:
                raise ValueError("diagnostics=True compares the merge methods on binary merges; "
                                 "with more than two classes one-vs-rest it needs "
                                 "shared_budget=False")
            states = [BSGDState.empty(n_features, 0, shared_models=n_models)]
        else:
            states = [BSGDState.empty(n_features, 0) for _ in range(n_models)]
        return BSGDStream(states, kernel,
                          check_random_state(self.random_state) if rng is None else rng,
                          np.zeros(n_models))

    def _train(self, streams, problem, epochs, pairs, partial=False):
        """``epochs`` passes over the problem; returns the fitted attributes.

        ``streams`` is one stream over all rows (one-vs-rest: a shared budget,
        or one state per binary model) or one per one-vs-one pair of ``pairs``
        (see :meth:`_pairs`), each over its pair's rows with its own lambda
        and step weights.  After ``partial_fit`` (``partial``) no support
        vector is known as a training row: the rows of earlier batches are
        gone.
        """
        kernel, bias_scale = streams[0].kernel, self._bias_scale()
        packed = PackedData.from_matrix(problem.gram() if kernel.on_gram else problem.X)
        tables = load_tables()
        budget = streams[0].budget
        # (stream, state, rows) of each model, and its targets, made when it trains
        if pairs is not None:
            units = [(stream, stream.states[0], rows)
                     for stream, rows in zip(streams, self._stream_rows(problem, pairs))]
            targets = Problems(len(pairs), lambda k: pairs[k][1])
        elif streams[0].states[0].shared:   # its kernel reads the class index of every row
            units = [(streams[0], streams[0].states[0], None)]
            targets = Problems(1, lambda _: problem.y.astype(np.int64))
        else:
            units = [(streams[0], state, None) for state in streams[0].states]
            targets = problem.targets
        units = [(k, *unit) for k, unit in enumerate(units) if unit[2] is None or len(unit[2])]
        n = problem.n_samples
        seeds = [stream.rng.randint(np.iinfo(np.int32).max) for _, stream, *_ in units]
        states = [state for stream in streams for state in stream.states]
        if not kernel.on_gram:
            check_stores(states, budget, {id(state): n if rows is None else len(rows)
                                          for _, _, state, rows in units}, problem.X.shape[1])
        started = time.perf_counter()

        def train_one(item, bar):
            (k, stream, state, rows), seed = item
            y_bin = targets[k]
            weight = stream.step_weights(problem.weights)
            rng = np.random.RandomState(seed)
            for _ in range(epochs):
                order = (rng.permutation(n) if rows is None
                         else rows[rng.permutation(len(rows))]).astype(np.int64)
                run_pass(state, packed, y_bin, weight, order, stream.lam, kernel, budget,
                         MAINTENANCE[self.maintenance], METHODS[self.merge_method],
                         self.diagnostics, tables, progress=bar, bias_scale=bias_scale)

        self._fan_out(train_one, zip(units, seeds),
                      epochs * sum(n if rows is None else len(rows) for *_, rows in units),
                      "step")
        sv_rows = np.concatenate([s.sv_idx[:s.n_sv] for s in states])
        dual_coef = _dual_coef(streams)
        support_vectors = (problem.support_vectors(sv_rows) if kernel.on_gram else
                           stack_support_vectors(states, problem.X.shape[1]))
        if self.fit_intercept:
            self._fit_offsets(streams, problem, pairs, sv_rows, dual_coef, support_vectors)
        support = (np.full(len(sv_rows), -1, dtype=np.int64) if partial else
                   np.where(sv_rows >= 0, problem.rows[np.maximum(sv_rows, 0)], -1))
        return self._assemble(streams, problem.classes, dual_coef, support, support_vectors,
                              started)

    def _bias_scale(self):
        """c^2 of the offset trained with the SGD steps (0: none; see
        :mod:`fastsvm.bsgd._kernels`)."""
        if not self.fit_intercept:
            return 0.0
        scale = float(self.intercept_scaling) * float(self.intercept_scaling)
        if not math.isfinite(scale):
            raise ValueError(f"intercept_scaling={self.intercept_scaling!r} is too large: its "
                             "square, the constant feature's kernel value, overflows")
        return scale

    def _fit_offsets(self, streams, problem, pairs, sv_rows, dual_coef, support_vectors):
        """The exact hinge-minimising offset of each binary model on its rows, into the
        streams' ``intercept``; a model whose rows lack a class (a partial_fit batch may)
        keeps its offset."""
        if pairs is not None:               # each pair on its rows, against its own vectors
            bounds = np.cumsum([0] + [stream.states[0].n_sv for stream in streams])
            models = [(rows, pairs[k][1][rows], slice(bounds[k], bounds[k + 1]))
                      for k, rows in enumerate(self._stream_rows(problem, pairs))]
            raws = [self._raw(problem, rows, sv_rows[svs], support_vectors[svs],
                              dual_coef[k:k + 1, svs])[:, 0]
                    for k, (rows, _, svs) in enumerate(models)]
        else:                               # every model on all rows, in one expansion
            raw = self._raw(problem, slice(None), sv_rows, support_vectors, dual_coef)
            models = ((slice(None), targets, None) for targets in problem.targets)
            raws = raw.T
        slots = [(stream.intercept, c) for stream in streams for c in range(len(stream.intercept))]
        worse = []
        for (intercept, c), (rows, y_bin, _), raw in zip(slots, models, raws):
            if 0 < np.count_nonzero(y_bin > 0) < len(y_bin):
                weight = problem.weights[rows]
                intercept[c] = hinge_offset(raw, y_bin, weight)
                constant = np.zeros_like(raw)
                constant += hinge_offset(constant, y_bin, weight)
                f = raw + intercept[c]
                loss, floor = mean_hinge(f, y_bin, weight), mean_hinge(constant, y_bin, weight)
                right = float(weight @ (y_bin * f > 0)) / weight.sum()
                positive = float(weight @ (y_bin > 0)) / weight.sum()
                if loss > floor * (1.0 + 1e-9) and right < max(positive, 1.0 - positive):
                    worse.append((right, max(positive, 1.0 - positive)))
        if worse:
            right, constant_right = min(worse)
            warnings.warn(
                f"{type(self).__name__}: {len(worse)} of {len(slots)} binary model(s) fit their "
                f"training rows worse than a constant decision, in hinge loss (so far from the "
                f"SVM optimum, whose loss is at most the constant's) and in accuracy (down to "
                f"{right:.1%}, where the larger class alone is {constant_right:.1%}); "
                "standardise the features (StandardScaler), or use maintenance='merge' (RBF "
                "and linear kernels), more epochs or a larger budget", ConvergenceWarning)

    @staticmethod
    def _raw(problem, rows, sv_rows, support_vectors, dual_coef):
        """f_c(x_r) without offset at the training rows ``rows``, shape (rows, n_models)."""
        if problem.kernel.on_gram:
            return problem.gram()[rows][:, sv_rows] @ dual_coef.T
        return problem.kernel.expansion(problem.X[rows], support_vectors, dual_coef.T)

    def _assemble(self, streams, classes, dual_coef, support, support_vectors, started):
        """The fitted attributes of the trained ``streams`` (offsets already in their
        ``intercept``), the training time counted from ``started`` (kept by the first)."""
        streams[0].wall_s += time.perf_counter() - started
        states = [s for stream in streams for s in stream.states]
        info = summarize(states, self.diagnostics)
        info["budget"] = streams[0].budget
        info["nearest_kernel"] = streams[0].nearest_kernel
        info["multi_class"] = resolve_multi_class(self.multi_class, len(classes))
        info["shared_budget"] = states[0].shared
        info["time_fit_s"] = streams[0].wall_s
        if self.verbose:
            print(f"{type(self).__name__}: {info['steps']} steps in {info['time_fit_s']:.2f} s, "
                  f"{len(support)} support vectors, {info['merges']} merges "
                  f"(frequency {info['merge_frequency']:.1%})")
        shared = states[0].shared
        return {
            "classes_": classes, "gamma_": streams[0].kernel.gamma,
            "support_vectors_": support_vectors, "support_": support, "dual_coef_": dual_coef,
            "n_support_": (np.count_nonzero(dual_coef, axis=1) if shared else
                           np.array([s.n_sv for s in states])).astype(np.int64),
            "intercept_": np.concatenate([stream.intercept for stream in streams]),
            "training_info_": info, "_streams": streams,
        }

    # -------------------------------------------------------------- predict
    def _decision(self, X):
        return self._expansion_decision(X)
