"""MarginSGDSVC: one-pass margin SGD SVM with extreme early stopping (Orchel & Suykens)."""

import time
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _options
from .._importance import heavy_threshold
from ..base import (COMMON_CONSTRAINTS, KERNEL_CONSTRAINTS, BaseSVC, LinearKernelCoefMixin,
                    progress_bar, used_columns)
from ..kernels import row_sq_norms, uses_gamma
from ..multiclass import (MULTI_CLASS, TargetRows, labels_from_decision, ovo_scores,
                          resolve_multi_class)
from .solver import (UPDATES, accuracy_offset, draw_order, expansion, expected_out_of_bag,
                     first_copies, out_of_bag, pass_rows, run_pass)

#: M values tried by ``M='auto'``.  With the squared-hinge rule only M in [0, 1]
#: matters (alpha = max(0, 1 - m) is 0 for every m >= 1, and M < 0 keeps nothing).
DEFAULT_M_GRID = {"squared-hinge": (0.25, 0.5, 1.0), "constant": (0.5, 1.0, 2.0)}

#: Multiples of the 'scale' gamma, 1 / (n_features * X.var()), tried by ``gamma='auto'``.
#: The best one-pass gamma lies far from 'scale', on both sides, since the method has no
#: regularisation: measured at fixed gamma over all rows (30,000-row subsamples, seeds
#: 0-1), 'scale' / 64 on a9a (84.9 %; / 256: 84.3 %), x 4 on usps, x 16 on ijcnn1, x 64
#: on phishing and x 1024 on covtype (85.9 %, against 75.8 % at x 16 and SVC's 77.8 %;
#: x 4096: 85.3 %).  Up to x 16 only, the halving's choice on covtype swung with the
#: seed (74.0 +- 1.9 % over seeds 0-9).
DEFAULT_GAMMA_FACTORS = (1 / 64, 1 / 16, 1 / 4, 1.0, 4.0, 16.0, 64.0, 256.0, 1024.0)

#: ``tune_size='auto'``: the first successive-halving round passes over
#: max(AUTO_TUNE_MIN, n // AUTO_TUNE_DIVISOR) rows (at most n).
AUTO_TUNE_MIN = 1000
AUTO_TUNE_DIVISOR = 8

#: ``sampling='auto'`` is 'permutation' when its held-out ``validation_fraction`` of the
#: rows numbers at least AUTO_PERMUTATION_MIN_HELD rows (500 rows at the default 0.2), else
#: 'replacement', whose out-of-bag rows (37 %) rank the candidates with less noise, unless
#: copies of rows leave fewer out of bag than permutation holds out.
AUTO_PERMUTATION_MIN_HELD = 100

#: ``n_repeats='auto'``: each candidate passes min(AUTO_REPEATS_MAX, ceil(AUTO_REPEAT_ROWS /
#: v)) times, on as many splits, where a fit on all n rows validates on v rows (the held-out
#: ``validation_fraction``, or the 37 % out of bag): about AUTO_REPEAT_ROWS validation rows
#: in all rank the candidates.  From 5,000 rows (at the default validation_fraction) once.
AUTO_REPEAT_ROWS = 1000
AUTO_REPEATS_MAX = 5

#: Validation accuracies (weighted: shares of the validation rows' total weight) closer than
#: this are ties, which go to the candidate listed first (in a first round, the widest
#: kernel): a smaller difference comes from rows a user weighted at less than a millionth
#: of the total, as in scikit-learn's ``check_class_weight_classifiers`` (class weights
#: 1000 and 0.0001), where every candidate scores 1 - 5e-8.
VALIDATION_TIE = 1e-6


def halving_rounds(n, size, n_candidates):
    """(rows, candidates) of each successive-halving round of a fit on n rows from a first
    round of ``size`` rows (see :class:`MarginSGDSVC`): the best third of the candidates,
    rounded up, go on to twice the rows, and the last candidate to all n."""
    rounds = [(size, n_candidates)]
    while size < n:
        n_candidates = -(-n_candidates // 3)
        size = n if n_candidates == 1 else min(n, 2 * size)
        rounds.append((size, n_candidates))
    return rounds


def _grid(name, values, positive):
    """A validated grid (a number or a 1-D sequence of numbers) as a list of floats."""
    if isinstance(values, (set, frozenset, dict)):      # "array-like" to the constraints
        raise ValueError(f"{name} must be a list or a 1-D array of numbers; got a "
                         f"{type(values).__name__}: {values!r}")
    try:
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must hold numbers; got {values!r}") from err
    if values.ndim != 1:
        raise ValueError(f"{name} must be a list or a 1-D array of numbers; got an array of "
                         f"shape {values.shape}")
    low_ok = values > 0 if positive else values >= 0
    if values.size == 0 or not np.all(np.isfinite(values) & low_ok):
        raise ValueError(f"{name} must hold finite values {'> 0' if positive else '>= 0'}; "
                         f"got {values.tolist()!r}")
    return values.tolist()


def _clipped_weights(weights):
    """``weights`` with every weight clipped to 100 times their median
    (:func:`~fastsvm._importance.heavy_threshold`; see "Sample weights" in
    :class:`MarginSGDSVC`): the same array where no weight is that far above it."""
    return np.minimum(weights, heavy_threshold(weights))


class MarginSGDSVC(LinearKernelCoefMixin, BaseSVC):
    r"""Kernel SVM built in one pass of margin SGD with extreme early stopping.

    Orchel & Suykens, "Improved Update Rule and Sampling of Stochastic Gradient
    Descent with Extreme Early Stopping for Support Vector Machines" (LOD 2021).
    The model is :math:`f(x) = \sum_j y_j \alpha_j k(x_j, x) + b` with the
    Gaussian kernel (the paper's; any SVC kernel can be chosen) and no
    regularisation term: the margin ``M`` and the cap ``C`` bound it.  One
    pass draws n points; at its first draw each point's coefficient is set
    once and never changed, from the margin :math:`m_k = y_k f_{k-1}(x_k)`
    of the model built so far:

    * ``update='squared-hinge'`` (the paper's rule (6), derived in its
      appendix from the squared hinge loss):
      :math:`\alpha_k = \min(C, \max(0, 1 - m_k))` if :math:`m_k \le M`, else 0;
    * ``update='constant'`` (the original margin SGD rule):
      :math:`\alpha_k = \min(C, 1)` if :math:`m_k \le M`, else 0.

    **The cap C** is ours; the paper has none (``C=None``).  It is the box
    :math:`0 \le \alpha \le C` of the SVM dual, which SVC solves with the
    same C: rule (6) is exactly the first epoch of dual coordinate descent
    on that dual without offset (Hsieh et al. 2008, :math:`\alpha_k
    \leftarrow \mathrm{clip}(\alpha_k + (1 - m_k) / k(x_k, x_k), 0, C)`
    from :math:`\alpha = 0`, with :math:`k(x, x) = 1` for the Gaussian
    kernel) except for the box.  Uncapped, a point the pass misclassifies
    badly (:math:`m_k \ll 0`) gets a large coefficient, and on overlapping
    classes the pass follows the noise.  Capped at SVC's default C = 1
    (mean test accuracy over seeds 0-3 at the other defaults, against
    uncapped; ``benchmarks/defaults_vs_svc.py``'s sets): small 86.12 against
    83.75 % (SVC 86.50 %), a9a 84.73 / 83.87 with the seed-to-seed standard
    deviation 0.08 against 0.82 points, phishing 96.31 / 95.51, noisy_moons
    84.26 / 83.99, covtype 86.62 / 86.43, imbalanced 98.82 / 98.74; lower:
    wide_sparse 67.68 / 68.40, ijcnn1 97.86 / 98.18, multiclass 89.38 /
    89.62, usps 94.88 / 94.93.  C = 0.5 gained on small (86.75 %) and lost
    on ijcnn1 (97.65 %) and usps (94.64 %); so C = 1, as SVC.

    **Validation and tuning.**  With ``sampling='permutation'`` a stratified
    ``validation_fraction`` of the rows is held out and the pass visits each
    of the others once, in random order.  With ``sampling='replacement'``
    (the paper's sampling with full replacement) a pass draws about 63 % of
    the rows; the rows it never draws validate it, as out-of-bag rows
    validate a bagged model.  The paper reports that full replacement is the
    more accurate.  Here, at the defaults, permutation was from a few
    thousand rows, since its passes see 80 % of the rows instead of 63 % (test
    accuracy, mean of seeds 0-2, 30,000-row subsamples: a9a 84.52 against
    84.27 %, ijcnn1 98.11 / 97.72, usps 94.95 / 94.57, covtype 86.60 /
    85.56, phishing and skin_nonskin within 0.1; generated sets of
    ``benchmarks/_generated.py``, data seeds 0-2 x 6 pass seeds: wide_sparse
    +0.8 to +2.5 points, small (600 rows) -0.4 to +1.8, multiclass +0.2 to
    +0.5, imbalanced equal), for 10-40 % more fit time; but on a few hundred
    rows its hold-out is too small to rank the 27 candidates (3 x 5-fold CV,
    standardised: wine, 178 rows, 94.02 against 96.98 %, with 37 % held out
    96.65 %; breast_cancer 96.25 / 96.72, iris 94.00 / 94.44; digits, 1,797
    rows, 97.59 / 97.22).  So ``sampling='auto'`` (the default) permutes when
    the hold-out has at least ``AUTO_PERMUTATION_MIN_HELD`` = 100 rows (500
    rows at the default ``validation_fraction``) and draws with replacement
    below.  For each (gamma, M)
    candidate, the product of the two grids when ``gamma`` or ``M`` is 'auto'
    (the paper's third technique: a handful of M values, one pass each), the
    validation rows choose the offset b of each binary model (the
    accuracy-maximising threshold, kept only where it clearly pays:
    :func:`~fastsvm.margin_sgd.solver.accuracy_offset`) and then score the
    candidate.

    With ``tune_size=None`` (the paper's procedure) every candidate passes
    over all n rows and the most accurate pass is the model: K candidates
    cost K full passes.  A pass costs O(n n_SV) kernel values and n_SV grows
    with n, so that is about K c n^2.  The default tunes by successive
    halving (Jamieson & Talwalkar, AISTATS 2016; with K = 27 candidates):
    round 0 passes every candidate over a random subsample of
    ``tune_size`` rows; each round keeps the best third of its candidates
    (rounded up) and doubles the rows, and once one candidate is left it
    passes over all n rows; the round over all n rows chooses the model, as
    above.  Rows are nested (prefixes of one random permutation), so a
    round sees the rows of the previous one.  Rounds at n_r = 2^r n_0 rows
    with K / 3^r candidates cost about K c n_0^2 (4/3)^r each, so the
    tuning costs a few passes over n_0-to-n/2 rows plus one or two passes
    over all rows, instead of K.  The final decision is made on the largest
    rows because the best kernel width grows with n (on phishing the most
    accurate gamma at 2,000 rows is 1.8, at 8,844 rows 28.6): a one-shot
    choice on a subsample of 2,000 rows lost up to 3 points of test
    accuracy there.  For the same reason the first round is not too small:
    ``tune_size='auto'`` starts at n / 8 rows (at least 1,000), so the
    rounds pass over n/8, n/4, n/2 and n rows and cost about 27/64 + 9/16 +
    3/4 + 1 = 2.7 full passes, against 27 for the paper's procedure.
    Measured with an earlier grid of 18 candidates (gamma up to 'scale' x 16;
    seeds 0-2, test accuracy, fit time on two cores), first round
    at n/8 against 1,000 rows against the paper's procedure: ijcnn1 98.26 +-
    0.25 % in 2.8 s against 96.46 +- 1.10 % in 0.85 s against 98.34 % in
    8.6 s; a9a 84.70 +- 0.10 % in 2.0 s against 84.21 +- 0.64 % in 0.89 s
    against 84.71 % in 21.8 s: from 1,000 rows the small gammas that win
    there often knock out the one that wins on all rows.

    **Small data** is where one pass is weakest.  On scikit-learn's bundled
    sets, standardised (``benchmarks/small_sets_cv.py``, 3 x 5-fold CV), it
    is 0.6 to 2.2 points below SVC (breast_cancer -1.23, digits -0.57,
    wine -2.24, iris -1.33; uncapped -1.53, -0.50, -2.61, -2.22), where
    BudgetSVC and NystromSVC stay within 0.7 points: with 100-500 training
    rows a pass sees 63-80 % of them and fixes each coefficient once, and
    27 candidates ranked on a few dozen held-out rows pick by chance (on
    the 600-row generated set, seed 0 picks 'scale' x 1024 at 90 %
    validation accuracy and scores 82.0 % on the test rows; seeds 0-7 average
    85.7 +- 2.4 %, SVC 86.5 %).  Not the tuning's fault alone: on 5-fold
    splits of breast_cancer, wine and a generated 800-row set, the best
    single (gamma, M) candidate, chosen on the test folds, was still
    0.35-3 points below SVC (uncapped).  Averaging the decision values of 10
    passes gained about 1 point there and was not adopted (ten times the
    model); nor was choosing the widest kernel within one standard error of
    the best validation accuracy (the one-standard-error rule): 85.1 on the
    generated set, breast_cancer 96.4 against 97.3 %.

    **Repeated passes** rank the candidates with less noise where the
    validation rows are few: ``n_repeats='auto'`` gives each candidate
    min(5, ceil(1000 / v)) passes, v the validation rows of a pass over all
    n rows, each pass on its own split (its own held-out or out-of-bag rows;
    a round's splits are shared by its candidates); a candidate scores the
    mean of its passes' validation accuracies, and its most accurate pass is
    its model.  So about 1,000 validation rows rank the candidates, and from
    5,000 rows (1,000 held out) a fit is the single pass per candidate it
    was.  Measured (mean gap to SVC in points, data seeds 0-2 x fit seeds
    0-2, one pass against 'auto'; stratified subsamples of the generated
    sets): the 600-row set -3.33 against -0.56 (5 passes), noisy_moons of
    1,000 rows -1.53 / -0.91, wide_sparse of 1,000 -2.33 / -1.37,
    dense_wide of 1,000 -1.55 / -0.69, imbalanced of 1,500 -0.16 / +0.12
    (4 passes), multiclass of 1,500 +0.55 / +0.62; sphere of 1,000 -6.86 /
    -7.09; with 2 passes (2,500-4,000 rows) within 0.1 point.
    scikit-learn's bundled sets (6 x 5-fold CV, standardised) moved by at
    most 0.1 point: wine -2.15 / -2.15, iris -1.89 / -1.78, breast_cancer
    -1.00 / -0.99; digits (5-fold, 3 seeds) -0.67 / -0.69.  The passes cost
    3-5 times the fit time with 4-5 of them (the 600-row set 0.17 -> 0.63
    s, digits 0.68 -> 2.47 s), 1.5-2 times with 2.  ``n_repeats=1`` is
    the paper's one pass per candidate.

    On **overlapping classes** (``noisy_moons`` of ``benchmarks/_generated.py``:
    two half-moons with noise 0.3, about 13 % of the rows on the other
    class's side, and 8 noise features; 9,000 training rows) SVC reaches
    85.83 %, MarginSGDSVC 84.26 +- 0.15 % (seeds 0-3; uncapped 83.99 %, and
    no single uncapped (gamma, M) of a 4 x 4 grid above 84.57 %): one pass
    cannot revise a coefficient once the noise has set it.

    **More than two classes** are split one-vs-one up to 30 classes
    (``multi_class='auto'``), as SVC splits them: a model per pair of
    classes, trained on the rows of its two classes, whose votes decide.
    Above 30 classes, or with ``multi_class='ovr'``, one-vs-rest: a model
    per class against all rows.  Either way the binary models share each
    pass (see :func:`~fastsvm.margin_sgd.solver.run_pass`): a one-vs-one
    pass visits every row once, each pair deciding the rows of its classes,
    and a support vector keeps coefficients only in the k - 1 pairs of its
    class, so a visit costs about what it costs one-vs-rest.  One-vs-rest
    fails where a class is not one side of a boundary: on three nested
    shells (``shells`` of ``benchmarks/_generated.py``, 7,500 training rows,
    seeds 0-2) the middle shell against the rest is a ring, and one-vs-rest
    reached 87.73 +- 2.58 % in 0.32 s, one-vs-one 94.11 +- 0.76 % in 0.28 s
    (SVC 97.64 %).  On the benchmark's other sets
    (``benchmarks/multiclass_split.py``) the two are within 0.6 points:
    multiclass +0.55 for one-vs-one, letters (26 classes) +0.17 (in 2.8 s
    against 1.8 s: 325 pairs, each validating its offset), imbalanced_multi
    +0.05 (balanced accuracy +1.15), usps -0.10.  Smaller generated sets (4
    splits x 2 seeds) moved both ways: 5 classes of sparse text (10,000
    rows, 20,000 columns) -0.50, 20 classes of 19 rows each -0.90, 10
    classes of 15 rows +0.75, 3 blobs of 45 rows each -1.94 (a test row is
    2.2 points).  So one-vs-one is SVC's split here too: a large gain where
    one-vs-rest cannot draw a class's boundary, and small losses or gains
    elsewhere.

    **With** ``kernel='linear'`` the pass is one pass over a linear model
    with no offset (the offset is validated after it), much like one
    perceptron epoch, and lands well below a solved linear SVM, most of all
    on multi-class data.  Test accuracy (mean of seeds 0-2, one-vs-one, in
    brackets one-vs-rest; standardised sets, 30 % test rows:
    ``make_classification(4000, 20, n_informative=10, n_classes=4,
    random_state=0)``, ``make_blobs(4000, 10, centers=5, cluster_std=4,
    random_state=0)`` and ``make_classification(8000, 20, n_informative=6,
    n_classes=3, random_state=1)``) against ``SVC(kernel='linear')`` and
    ``LinearSVC()``: 4 classes 48.4 (39.8) against 57.7 and 54.5 %; 5 blobs
    94.7 (91.7) against 95.7 and 96.5 %; 3 classes 65.4 (63.0) against 75.1
    and 74.8 %; usps (10 classes) 90.4 (87.9) against 92.6 and 90.3 %; a9a
    (two classes, 8,000 rows) 81.8 against 84.7 and 85.1 %.
    :class:`~fastsvm.HuberSVC` and :class:`~fastsvm.PegasosSVC` train the
    linear SVM itself.  Dividing rule (6)'s step by k(x_k, x_k), as dual
    coordinate descent does, with a constant feature for the offset, gained
    up to 5.6 points on three earlier one-vs-rest sets (a9a +0.6) and was
    not adopted: still 10-13 points short.

    **Sample weights** (``sample_weight`` times ``class_weight``; the paper
    has none, so this meaning is ours, derived from its appendix).
    The appendix derives rule (6) from the squared-hinge objective (its
    OP 4), :math:`W = \frac12\|w\|^2 + \sum_i [m_i \le M](1 - m_i)^2` with
    an implicit unit C; weighting sample i's loss term by c_i, as SVC's
    weights multiply C, its stationarity condition at the visited point k
    becomes :math:`y_k \alpha_k \varphi(x_k) = 2 c_k [m_k \le M](1 - m_k) y_k
    \varphi(x_k)`, and the appendix's steps (dropping the factor 2,
    extreme early stopping, alpha >= 0) give
    :math:`\alpha_k = c_k \max(0, 1 - m_k)` if :math:`m_k \le M`; the
    constant rule becomes :math:`\alpha_k = c_k`.  With the cap,
    :math:`\alpha_k = c_k \min(C, \max(0, 1 - m_k))`: its box is c_k C, as
    SVC's weights multiply C.  The weights are
    normalised to mean 1, c_i = s_i n / S, since the implicit C is fixed:
    scaling every weight by a constant leaves the model unchanged, and a
    class weighted more than the rest pushes the boundary away from its
    points (a weight above 1 sets a new point's margin beyond 1).  A weight
    above 100 times the median (:func:`~fastsvm._importance.heavy_threshold`, where
    the SGD solvers' steps turn importance-aware) is first clipped to it: the
    coefficient of a row weighing 10^4 times the rest is a bump 10^4 times as high,
    and normalised to mean 1 the other rows' weights fall to a fraction of 1
    (three rows of weight 1,000 among 2,000, ``make_classification(3000, 10,
    flip_y=0.05, random_state=0)``: 92.4 % against 94.7 % unweighted, 88.6 % at
    10^6; clipped, 94.8 % at each).  Class weights up to 100 times the median (a
    class of 1 % against the rest) are unchanged.  Rows of
    weight 0 are dropped, exactly as if absent.  Validation then scores the
    weighted accuracy (balanced accuracy for ``class_weight='balanced'``),
    and the offset maximises it.  A weight of 2 is *not* the row drawn twice
    here: the one-pass rule gives a repeated point nothing more once its
    margin is 1, so duplicating rows hardly changes the model, and weights
    with that meaning could not rebalance classes.

    Reconstructed, since only the paper's abstract, references and appendix
    survive: the constant rule's value (1: another constant c gives the same
    model with M / c); sampling with full replacement as n uniform draws with
    replacement of which only first draws count; the M and gamma grids and
    their selection on out-of-bag or held-out rows; the split of more than
    two classes (above), the binary problems sharing each pass (its draws,
    its support vectors stored once and their kernel values computed once;
    see :func:`~fastsvm.margin_sgd.solver.run_pass`: usps, 10 classes, fits
    one-vs-rest in 0.69 s instead of 3.9 s).  Beyond the paper (which, citing Steinwart et
    al., trains without offset): the validated offset b.  Without it a9a's accuracy
    ranged from 38 % to 85 % between seeds: the squared-hinge rule sets each
    new support vector's margin to exactly 1, so with a wide kernel f's
    near-constant part follows the label of the last points added.

    Parameters
    ----------
    M : float or 'auto', default='auto'
        The margin threshold (>= 0), or 'auto' to try each value of ``M_grid``.
    M_grid : sequence of float or None, default=None
        Values for 'auto'; None means (0.25, 0.5, 1) for the squared-hinge
        rule and (0.5, 1, 2) for the constant rule.
    C : float > 0 or None, default=1.0
        Cap on each coefficient alpha_k (times the point's weight), as SVC's
        box constraint; None: no cap (the paper's rule).
    update : {'squared-hinge', 'constant'}, default='squared-hinge'
    sampling : {'auto', 'permutation', 'replacement'}, default='auto'
        One shuffled pass over the rows not held out, or n draws with
        replacement (the paper's) validated on the rows never drawn; 'auto'
        permutes when ``validation_fraction`` holds out at least 100 rows, or
        more rows than copies of rows leave out of bag (few distinct rows).
    kernel : {'rbf', 'linear', 'poly', 'sigmoid', 'precomputed'} or callable, default='rbf'
        As in SVC (a callable is evaluated once into the n x n kernel matrix).
    gamma : float, 'scale' or 'auto', default='auto'
        Kernel width ('rbf', 'poly', 'sigmoid'); 'scale' is
        1 / (n_features * X.var()) as in SVC; 'auto' tries each value of
        ``gamma_grid`` (unlike SVC's 'auto', 1 / n_features).
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Constant of the 'poly' and 'sigmoid' kernels.
    gamma_grid : sequence of float or None, default=None
        Values for 'auto'; None means 'scale' times 4^k, k = -3, ..., 5 (1/64 to 1024).
    validation_fraction : float, default=0.2
        Share of rows held out to validate with ``sampling='permutation'``.
    tune_size : int >= 2, 'auto' or None, default='auto'
        Rows of the first round of successive halving when there are several
        candidates (see above); 'auto' is max(1000, n // 8), at most n.
        None passes every candidate over all rows (the paper's procedure).
    n_repeats : int >= 1 or 'auto', default='auto'
        Passes per candidate in each round, each on its own split; a
        candidate scores their mean validation accuracy, and its best pass
        is its model (see "Repeated passes" above).  'auto' is
        min(5, ceil(1000 / v)) for v validation rows over all n rows: 1
        from 5,000 rows.
    multi_class : {'auto', 'ovo', 'ovr'}, default='auto'
        More than two classes: a model per pair of classes ('ovo', as SVC)
        or per class against the rest ('ovr'); 'auto' is 'ovo' up to 30
        classes (see above).  Two classes make one model either way.
    class_weight : dict, 'balanced' or None, default=None
        Weight of each class, multiplying its samples' weight (see above);
        'balanced' is n_samples / (n_classes * bincount(y)), the counts weighted
        by sample_weight.
    n_jobs : int or None, default=None
        Accepted like the other estimators' and unused: the binary problems
        of a multi-class fit share each pass, and the passes run one after
        another (BLAS may use several cores inside them).  Running the
        candidates' passes in two threads was slower on two cores (usps 0.69
        s against 1.12 s, a9a 2.3 s against 3.8 s).
    random_state : int, RandomState instance or None, default=None
        Seeds the draws and the hold-out split.
    verbose : int, default=0
        > 0 shows a progress bar and a summary line.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class, as SVC's: ``class_weight`` resolved (ones for None).
    n_features_in_ : int
    gamma_ : float or None
    M_ : float
        The kernel width (None for kernels without one) and margin of the model.
    support_ : ndarray of shape (n_SV,)
        Training indices of the support vectors of all binary models.  Equal
        rows are one support vector (the copy visited first), whose
        coefficient sums theirs (see
        :func:`~fastsvm.margin_sgd.solver.run_pass`), so the model never
        holds more vectors than distinct rows.
    support_vectors_ : ndarray or CSR matrix of shape (n_SV, n_features_in_)
        The training rows support_, in float64; a CSR matrix for sparse input, as
        SVC's (the rows as given for a callable kernel, empty for 'precomputed')
    dual_coef_ : ndarray of shape (n_models, n_SV)
        y_j alpha_j of each binary model (0 where a vector is not its own);
        one model for two classes, else one per pair of classes (i, j), i <
        j, in the order (0, 1), (0, 2), ..., positive for class j
        (one-vs-one), or one per class (one-vs-rest).
    coef_ : ndarray of shape (n_models, n_features_in_)
        With ``kernel='linear'`` only (as SVC's): the features' weights of each
        model, dual_coef_ @ support_vectors_.
    intercept_ : ndarray of shape (n_models,)
        The validated offsets b.
    n_support_ : ndarray of shape (n_models,)
        Model size (support vectors) of each binary model.
    training_info_ : dict
        ``candidates`` (gamma, M, validation accuracy (the mean of
        ``pass_accuracies``, one per repeated pass), model size of its best
        pass and rows ``n_rows`` of each candidate tried, in order: the
        halving rounds, then the passes over all rows; the accuracy is -inf
        for a pass whose decision values overflowed, which ranks last, and
        null in a model file), ``sampling``, ``n_repeats`` and
        ``multi_class`` (as resolved),
        ``validation_accuracy`` (its candidate's score) and ``n_validation``
        of the model, ``n_visited`` (points decided; the binary models share
        the draws), ``n_passes`` (all passes), ``time_fit_s``.
    """

    _parameter_constraints = {
        "M": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "M_grid": ["array-like", None],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "update": [StrOptions(set(UPDATES))],
        "sampling": [StrOptions({"auto", "replacement", "permutation"})],
        **KERNEL_CONSTRAINTS,
        "gamma": [StrOptions({"auto", "scale"}), Interval(Real, 0, None, closed="neither")],
        "gamma_grid": ["array-like", None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "tune_size": [StrOptions({"auto"}), Interval(Integral, 2, None, closed="left"), None],
        "n_repeats": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "multi_class": [StrOptions({"auto", *MULTI_CLASS})],
        "random_state": ["random_state"],
        **COMMON_CONSTRAINTS,
    }

    def __init__(self, M="auto", M_grid=None, C=1.0, update="squared-hinge", sampling="auto",
                 kernel="rbf", gamma="auto", degree=3, coef0=0.0, gamma_grid=None,
                 validation_fraction=0.2, tune_size="auto", n_repeats="auto", multi_class="auto",
                 class_weight=None, n_jobs=None, random_state=None, verbose=0):
        self.M = M
        self.M_grid = M_grid
        self.C = C
        self.update = update
        self.sampling = sampling
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_grid = gamma_grid
        self.validation_fraction = validation_fraction
        self.tune_size = tune_size
        self.n_repeats = n_repeats
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _gamma_param(self):
        return "scale" if self.gamma == "auto" else self.gamma

    def _fit(self, problem):
        """Choose (gamma, M) by validated passes (successive halving from ``tune_size``
        rows, or every candidate over all rows); the best pass over all rows is the model."""
        started = time.perf_counter()
        problem = replace(problem, weights=_clipped_weights(problem.weights))
        rng = check_random_state(self.random_state)
        candidates = self._candidates(problem.kernel)
        if problem.kernel.on_gram:
            data = (problem.gram(), np.zeros(problem.n_samples), None)
        else:
            # kernel values need only the columns the rows use: a CSR product against the
            # support vectors' rows transposed them over every column (8.6 GB for one
            # column of index 2^31 - 2, at every block of every pass)
            X, _ = used_columns(problem.X)
            copies = first_copies(X)
            # distinct rows: None, so that the passes skip joining copies (the same model;
            # fits 2-3 % faster on 6,000-7,500 dense rows, 11 % on 600)
            distinct = np.array_equal(copies, np.arange(len(copies)))
            data = (pass_rows(X), row_sq_norms(X), None if distinct else copies)
        n, tuning = problem.n_samples, []
        size = (n if self.tune_size is None or len(candidates) == 1
                else min(n, max(AUTO_TUNE_MIN, n // AUTO_TUNE_DIVISOR) if self.tune_size == "auto"
                         else self.tune_size))
        shuffled = rng.permutation(n) if size < n else None
        sampling = self._sampling(n, data[2])
        repeats = self._repeats(n, sampling)
        rounds = halving_rounds(n, size, len(candidates))
        draws = sum(repeats * k * (rows if sampling == "replacement"
                                   else rows - self._n_held(rows)) for rows, k in rounds)
        with progress_bar(self.verbose, draws, "draw", "MarginSGDSVC") as bar:
            for size, kept in rounds:   # successive halving: keep the best third
                candidates = candidates[:kept]
                pool = (np.arange(n, dtype=np.int64) if size == n
                        else np.sort(shuffled[:size]).astype(np.int64))
                scores, best = self._passes(problem, data, pool, candidates, sampling, repeats,
                                            rng, bar)
                if size < n:
                    tuning += scores
                    ranking = np.argsort([-r["validation_accuracy"] for r in scores],
                                         kind="stable")
                    candidates = [candidates[k] for k in ranking]
        accuracy, kernel, M, model, offsets, n_val = best
        if n_val == 0:
            warnings.warn("MarginSGDSVC validated its passes on no row: every row out of bag "
                          "was a copy of a drawn row, so the candidates were not ranked and "
                          "the first was kept; use sampling='permutation'", UserWarning)
        by_row = np.argsort(model.support)
        support = model.support[by_row]
        n_classes = len(problem.classes)
        split = resolve_multi_class(self.multi_class, n_classes)
        need = 8 * len(support) * len(offsets)
        # one-vs-rest coefficients are held as they are; one-vs-one ones k - 1 per vector
        if n_classes > 2 and split == "ovo" and need > _options.DENSE_VECTORS_MAX_BYTES:
            raise ValueError(
                f"the {len(offsets):,} one-vs-one models' dual_coef_ over {len(support):,} "
                f"support vectors would take {need / 2**30:.1f} GiB, more than "
                "fastsvm._options.DENSE_VECTORS_MAX_BYTES "
                f"({_options.DENSE_VECTORS_MAX_BYTES / 2**30:.1f} GiB) allows; use "
                "multi_class='ovr'")
        dual_coef = np.ascontiguousarray(model.model_dual()[:, by_row])
        info = {"candidates": tuning + scores,
                "sampling": sampling, "n_repeats": repeats,
                "multi_class": split,
                "validation_accuracy": accuracy, "n_validation": n_val,
                "n_visited": model.n_visited,
                "n_passes": repeats * (len(tuning) + len(scores)),
                "time_fit_s": time.perf_counter() - started}
        if self.verbose:
            width = "" if kernel.gamma is None else f"gamma={kernel.gamma:.4g}, "
            print(f"MarginSGDSVC: {width}M={M:g}, {len(support)} support vectors, validation "
                  f"accuracy {100 * accuracy:.2f} % on {n_val} rows, {info['n_passes']} passes, "
                  f"{info['time_fit_s']:.2f} s")
        return {
            "classes_": problem.classes, "gamma_": kernel.gamma, "M_": M,
            "support_": problem.rows[support],
            "support_vectors_": problem.support_vectors(support), "dual_coef_": dual_coef,
            "intercept_": offsets, "n_support_": model.n_support,
            "training_info_": info,
        }

    def _repeats(self, n, sampling):
        """``n_repeats`` with 'auto' resolved for n rows drawn by ``sampling`` (see
        AUTO_REPEAT_ROWS): passes per candidate, each on its own split."""
        if self.n_repeats != "auto":
            return int(self.n_repeats)
        held = n / np.e if sampling == "replacement" else self._n_held(n)
        return int(min(AUTO_REPEATS_MAX, np.ceil(AUTO_REPEAT_ROWS / max(held, 1.0))))

    def _sampling(self, n, copies):
        """``sampling`` with 'auto' resolved for n rows (see AUTO_PERMUTATION_MIN_HELD):
        below that hold-out, the sampling that validates on more rows.  With replacement
        copies of drawn rows validate nothing (``copies`` from
        :func:`~fastsvm.margin_sgd.solver.first_copies`), so rows repeated many times
        leave few out of bag (300 rows of 16 distinct ones: none, and every candidate had
        scored NaN, the first one kept), where permutation holds out whole groups of
        copies."""
        if self.sampling != "auto":
            return self.sampling
        held = self.validation_fraction * n
        if held >= AUTO_PERMUTATION_MIN_HELD or expected_out_of_bag(copies, n) < held:
            return "permutation"
        return "replacement"

    def _passes(self, problem, data, pool, candidates, sampling, repeats, rng, bar):
        """``repeats`` validated passes over the rows ``pool`` per (kernel, M) candidate,
        drawn by ``sampling``, each on its own split of ``pool`` (with replacement: its own
        draws and out-of-bag rows); ``bar`` (tqdm) is advanced by the draws.

        A candidate scores the mean validation accuracy of its passes, and its
        pass of the best accuracy is its model.  Returns the candidates'
        scores (gamma, M, validation accuracy, model size, rows) and the best
        one as (accuracy, kernel, M, pass result, offsets, number of
        validation rows) of its model; ties (within ``VALIDATION_TIE``) go to
        the candidate listed first.
        """
        splits = [self._split(pool, problem.y, sampling, rng, data[2]) for _ in range(repeats)]
        targets = TargetRows(problem.y, len(problem.classes), self.multi_class)
        scores, best = [], None
        for kernel, M in candidates:
            passes = [self._validated_pass(problem, data, targets, kernel, M, sampling, rows,
                                           held, rng, bar) for rows, held in splits]
            accuracies = [p[0] for p in passes]
            accuracy = float(np.mean(accuracies))
            own = max(passes, key=lambda p: p[0])      # the first of equal ones
            scores.append({"gamma": kernel.gamma, "M": M, "validation_accuracy": accuracy,
                           "pass_accuracies": accuracies,
                           "n_support": int(own[1].n_support.sum()), "n_rows": len(pool)})
            if best is None or accuracy > best[0] + VALIDATION_TIE:
                best = (accuracy, kernel, M, *own[1:])
        return scores, best

    def _validated_pass(self, problem, data, targets, kernel, M, sampling, rows, held, rng,
                        bar):
        """One pass of candidate (kernel, M) for the binary ``targets`` over ``rows``,
        validated on ``held`` (None: its out-of-bag rows): (validation accuracy, pass
        result, offsets, validation rows)."""
        X, X_sq, copies = data
        cap = np.inf if self.C is None else float(self.C)
        weight, y_enc = problem.step_weights, problem.y
        order = draw_order(rows, sampling,
                           np.random.default_rng(rng.randint(np.iinfo(np.int32).max)))
        # the binary problems share the draws, so they share the out-of-bag rows
        model = run_pass(X, X_sq, targets, weight, kernel, M, cap, self.update, order, bar,
                         copies)
        val = held if held is not None else out_of_bag(rows, order, copies)
        decision = expansion(X, X_sq, val, model.svt, model.sv_sq, model.support, model.dual,
                             kernel, model.pairs)
        if np.all(np.isfinite(decision)):
            # each model's offset from the validation rows of its classes
            weight_val, offsets = weight[val], np.zeros(len(targets))
            for k, t in enumerate(targets[:, val]):
                own = t != 0
                offsets[k] = accuracy_offset(decision[own, k], t[own], weight_val[own])
            decision += offsets
            scores = (decision[:, 0] if len(targets) == 1 else
                      ovo_scores(decision, targets.n_classes) if targets.ovo else decision)
            labels = labels_from_decision(scores, np.arange(len(problem.classes)))
            accuracy = (float(np.average(labels == y_enc[val], weights=weight[val]))
                        if len(val) else float("nan"))
        else:   # a pass that diverged (uncapped, k(x, x) far from 1) ranks last
            offsets, accuracy = np.zeros(len(targets)), -np.inf
        return accuracy, model, offsets, len(val)

    def _candidates(self, kernel):
        """The (kernel, M) pairs to try: the product of both grids ('auto') or one value.

        ``kernel`` has gamma='scale' resolved when ``gamma='auto'``."""
        if not uses_gamma(self.kernel) or self.gamma != "auto":
            kernels = [kernel]
        elif self.gamma_grid is None:
            if kernel.gamma > np.finfo(np.float64).max / max(DEFAULT_GAMMA_FACTORS):
                raise ValueError(f"gamma='auto' tries 'scale' x 4^k up to x "
                                 f"{max(DEFAULT_GAMMA_FACTORS):g}, which overflows for 'scale' "
                                 f"= {kernel.gamma:.3g}: rescale the features (for example "
                                 "with StandardScaler) or give gamma_grid")
            kernels = [replace(kernel, gamma=f * kernel.gamma) for f in DEFAULT_GAMMA_FACTORS]
        else:
            kernels = [replace(kernel, gamma=g)
                       for g in _grid("gamma_grid", self.gamma_grid, positive=True)]
        if self.M == "auto":
            grid = DEFAULT_M_GRID[self.update] if self.M_grid is None else self.M_grid
            Ms = _grid("M_grid", grid, positive=False)
        else:
            Ms = [float(self.M)]
        return [(k, m) for k in kernels for m in Ms]

    def _n_held(self, n_rows):
        """Rows held out of ``n_rows`` with sampling='permutation': scikit-learn's count,
        kept to at least one row on each side (a small first halving round at a large
        validation_fraction would have none to pass over)."""
        return min(max(1, int(np.ceil(self.validation_fraction * n_rows))), n_rows - 1)

    def _split(self, pool, y_enc, sampling, rng, copies):
        """Rows of ``pool`` the passes draw from, and held-out rows (None: the out-of-bag
        rows validate).

        The split is of distinct rows (``copies`` from
        :func:`~fastsvm.margin_sgd.solver.first_copies`; None for distinct
        rows or a kernel matrix): copies of a row fall on one side, since a
        held-out copy of a row the pass visited validates nothing (10 rows
        repeated 400 times had a validation accuracy of 1.0 and chose the
        narrowest kernels).
        """
        if sampling == "replacement":
            return pool, None
        groups, first, which = np.unique(pool if copies is None else copies[pool],
                                         return_index=True, return_inverse=True)
        if len(groups) < 2:                 # one distinct row (of two classes): split rows
            first, which = np.arange(len(pool)), np.arange(len(pool))
        y = y_enc[pool[first]]
        counts = np.bincount(y)
        n_test = self._n_held(len(y))
        fits = (counts[counts > 0].min() >= 2
                and min(n_test, len(y) - n_test) >= np.count_nonzero(counts))
        kept, held = train_test_split(np.arange(len(y)), test_size=n_test,
                                      stratify=y if fits else None,
                                      random_state=rng.randint(np.iinfo(np.int32).max))
        # each side's rows in the order of its groups, as the split gives them (without
        # copies, the rows train_test_split gives for the rows themselves)
        position = np.empty(len(y), dtype=np.int64)
        position[np.concatenate([kept, held])] = np.arange(len(y))
        side = position[which]
        ranked = pool[np.argsort(side, kind="stable")]
        n_kept = int(np.count_nonzero(side < len(kept)))
        return ranked[:n_kept], ranked[n_kept:]

    def _decision(self, X):
        return self._expansion_decision(X)
