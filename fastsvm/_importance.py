r"""Importance-aware steps for rows of large weight, shared by the SGD solvers' compiled
steps (:mod:`fastsvm.bsgd._kernels`, :mod:`fastsvm.bounds._kernels`,
:mod:`fastsvm.nystrom._kernels`).

A subgradient step scaled by a row's step weight c_i moves its margin c_i
times as far as a step of weight 1.  Where a few weights are far above the rest
that overshoots: the row gets, at its first violation, the coefficient of c_i
violations, whatever the optimum needs, and a pass has no draws left to undo
it.  Three rows of weight 1,000 among 2,000 of weight 1
(``make_classification(3000, 10, flip_y=0.05, random_state=0)``) brought
BudgetSVC's test accuracy from SVC's 95.4 % to 76.7 % (63.1 % at 10,000, 61.1 %
at 10^6), the linear PegasosSVC's from 89.1 % to 63.2 % at 10^6.

So the weight beyond the rows' median weight c_med is taken as Karampatziakis &
Langford take an importance weight h ("Online Importance Weight Aware Updates",
UAI 2011): as h steps in a row, each infinitely small, which for the hinge loss
stop where the margin reaches 1.  A violated row of weight c_i > c_med whose
margin after the step's shrink is m', and which a step of weight 1 moves by r
(the step size times k(x_i, x_i), the offset's feature included), takes the
weight

.. math::

    \max\bigl(c_{med},\ \min(c_i,\ (1 - m') / r)\bigr):

the step of a median row, and beyond it as much of the rest as brings the margin
to 1.  Rows up to the median (every row of unweighted data) take their plain
step, so the papers' algorithms are unchanged on them.  The median, not the mean
to which :mod:`fastsvm.base` normalises the weights, sets what a plain step is:
Pegasos' steps do not change when every c_i and lambda are scaled together, and
with three rows of weight 10^6 among 2,000 the mean-normalised c_i of the others
are 7e-4, so a floor of 1 would still give a heavy row the step of 1,500 others.
Where r <= 0 (the sigmoid kernel can give k(x_i, x_i) <= 0) the row takes c_i.
"""

from numba import njit

from ._options import JIT_OPTIONS


@njit(**JIT_OPTIONS)
def heavy_weight(c, typical, margin, reach):
    """The weight a violated row of step weight c > ``typical`` (c_med) takes: ``margin`` is
    its margin m' after the step's shrink, ``reach`` how far a step of weight 1 moves it
    (module docstring)."""
    if not reach > 0.0:
        return c
    return max(typical, min(c, (1.0 - margin) / reach))
