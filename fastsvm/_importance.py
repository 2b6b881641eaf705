r"""Importance-aware steps for rows of extreme weight, shared by the SGD solvers' compiled
steps (:mod:`fastsvm.bsgd._kernels`, :mod:`fastsvm.bounds._kernels`,
:mod:`fastsvm.nystrom._kernels`).

A subgradient step scaled by a row's step weight c_i moves its margin c_i
times as far as a step of weight 1: in expectation over the draws, the row
appearing c_i times.  Where a few weights are far above the rest, one draw
carries all of them: the row gets, at its first violation, the coefficient of
c_i violations, whatever the optimum needs, and a pass has no draws left to
undo it.  Three rows of weight 1,000 among 2,000 of weight 1
(``make_classification(3000, 10, flip_y=0.05, random_state=0)``) brought
BudgetSVC's test accuracy from SVC's 95.4 % to 76.7 % (63.1 % at 10,000, 61.1 %
at 10^6), the linear PegasosSVC's from 89.1 % to 63.2 % at 10^6; at 100 both
were within 1 point.

So a violated row weighing more than c_heavy = ``HEAVY_RATIO`` times the median
weight c_med takes its weight beyond c_heavy as Karampatziakis & Langford take
an importance weight h ("Online Importance Weight Aware Updates", UAI 2011):
as h steps in a row, each infinitely small, which for the hinge loss stop
where the margin reaches 1.  With m' its margin after the step's shrink and r
how far a step of weight 1 moves it (the step size times k(x_i, x_i), the
offset's feature included), it takes the weight

.. math::

    \max\bigl(c_{heavy},\ \min(c_i,\ (1 - m') / r)\bigr).

Only extreme rows: the capped step is not the unbiased one.  Where every step
overshoots the margin anyway (r >= 1: the linear PegasosSVC at its defaults on
features of squared norm about 20, up to its last iteration), a capped row gets
little more than the floor.  With the cap from the median itself, every heavy
row then stepped about as a median row, and ``class_weight='balanced'`` on
``benchmarks/_generated.py``'s imbalanced set (5.5 % positive; weights 9.1 and
0.53) lost its effect: the linear PegasosSVC's balanced accuracy fell from
85.0 % to 78.5 % (seeds 0-2; 71.4 % to 60.2 % on the 6-class
``imbalanced_multi``).  A class weight is a weight that many rows share, and its
full steps are what rebalances; so ratios up to 100, a class of 1 % against the
rest, keep them.
Rows up to c_heavy (every row of unweighted data) take their plain step, so
the papers' algorithms are unchanged.  The median, not the mean to which
:mod:`fastsvm.base` normalises the weights, is the reference: Pegasos' steps do
not change when every c_i and lambda are scaled together, and with three rows
of weight 10^6 among 2,000 the mean-normalised c_i of the others are 7e-4.
Where r <= 0 (the sigmoid kernel can give k(x_i, x_i) <= 0) the row takes c_i.
"""

import numpy as np
from numba import njit

from ._options import JIT_OPTIONS

#: A row is heavy above this many times the median weight (module docstring).
HEAVY_RATIO = 100.0


def heavy_threshold(weights):
    """c_heavy of the rows of step weights ``weights``: ``HEAVY_RATIO`` times their median."""
    return HEAVY_RATIO * float(np.median(weights)) if len(weights) else np.inf


@njit(**JIT_OPTIONS)
def heavy_weight(c, heavy_from, margin, reach):
    """The weight a violated row of step weight c > ``heavy_from`` (c_heavy) takes:
    ``margin`` is its margin m' after the step's shrink, ``reach`` how far a step of
    weight 1 moves it (module docstring)."""
    if not reach > 0.0:
        return c
    return max(heavy_from, min(c, (1.0 - margin) / reach))
