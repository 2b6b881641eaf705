"""The merge problem of budget maintenance, solved by search or by table lookup.

Merging x_a and x_b (coefficients of equal sign) into z = h*x_a + (1-h)*x_b
depends only on m = alpha_a / (alpha_a + alpha_b) and kappa = k(x_a, x_b):
h maximises s(h) = m*kappa^((1-h)^2) + (1-m)*kappa^(h^2) and the squared
weight degradation per unit (alpha_a + alpha_b)^2 is
wd = m^2 + (1-m)^2 + 2m(1-m)*kappa - s(h)^2 (Glasmachers & Qaadan, Sec. 3,
with the errors of the text corrected; see ``fastsvm.merge._kernels``).

Methods (Glasmachers & Qaadan, Sec. 4):

``'gss'``
    golden section search to interval width 0.01 (the BSGD reference);
``'gss-precise'``
    golden section search to 1e-10;
``'lookup-h'``
    bilinear interpolation of h on the 400 x 400 table, wd computed from it;
``'lookup-wd'``
    bilinear interpolation of wd on the table.  Used to rank merge partners;
    the h of the one pair that is merged is then solved precisely, so the
    ``h`` returned here is the precise one.
"""

import numpy as np

from . import _kernels
from .table import load_tables

METHODS = {
    "gss": _kernels.GSS,
    "gss-precise": _kernels.GSS_PRECISE,
    "lookup-h": _kernels.LOOKUP_H,
    "lookup-wd": _kernels.LOOKUP_WD,
}


def solve(m, kappa, method="lookup-wd"):
    """Solve merge problems elementwise.

    Parameters
    ----------
    m : array_like
        Relative weight alpha_a / (alpha_a + alpha_b) of the point that z
        weights by h, in [0, 1].
    kappa : array_like
        Kernel value k(x_a, x_b), in [0, 1].  ``m`` and ``kappa`` broadcast.
    method : {'lookup-wd', 'lookup-h', 'gss', 'gss-precise'}, default='lookup-wd'

    Returns
    -------
    h : ndarray
        Merge coefficient: z = h*x_a + (1-h)*x_b.
    wd : ndarray
        Weight degradation per unit (alpha_a + alpha_b)^2.

    Examples
    --------
    >>> from fastsvm.merge import solve
    >>> h, wd = solve(0.5, 0.9, method="gss-precise")
    >>> round(float(h), 6), round(float(wd), 6)   # equal weights: the midpoint
    (0.5, 0.001317)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    m, kappa = np.broadcast_arrays(np.asarray(m, dtype=np.float64), np.asarray(kappa, dtype=np.float64))
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(kappa))):
        raise ValueError("m and kappa must be finite")
    if np.any((m < 0) | (m > 1)) or np.any((kappa < 0) | (kappa > 1)):
        raise ValueError("m and kappa must lie in [0, 1]")
    table_h, table_wd = load_tables()
    h = np.empty(m.size)
    wd = np.empty(m.size)
    _kernels.solve_many(METHODS[method], np.ascontiguousarray(m).ravel(),
                        np.ascontiguousarray(kappa).ravel(), table_h, table_wd, h, wd)
    return h.reshape(m.shape), wd.reshape(m.shape)


__all__ = ["METHODS", "solve", "load_tables"]
