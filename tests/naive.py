"""Plain NumPy reference implementations (oracles) of single solver steps.

Written for clarity, not speed, and independently of the compiled code: kernel
values come from explicit exp(-gamma ||x - y||^2), merged coefficients from
kernel values rather than from the s(h) shortcut.
"""

import numpy as np

from fastsvm.merge import solve


def rbf(x, z, gamma):
    return float(np.exp(-gamma * np.sum((np.asarray(x) - np.asarray(z)) ** 2)))


def weight_degradation(xa, xb, z, alpha_a, alpha_b, alpha_z, gamma):
    """||alpha_a phi(xa) + alpha_b phi(xb) - alpha_z phi(z)||^2 from kernel values."""
    k = lambda u, v: rbf(u, v, gamma)  # noqa: E731
    return (alpha_a ** 2 + alpha_b ** 2 + alpha_z ** 2 + 2 * alpha_a * alpha_b * k(xa, xb)
            - 2 * alpha_z * (alpha_a * k(xa, z) + alpha_b * k(xb, z)))


def ratio(alpha_a, alpha_b):
    """m = alpha_a / (alpha_a + alpha_b), exactly 1/2 for equal magnitudes.

    The compiled kernel's scaled coefficients of unmerged vectors are exactly
    +-1, so m = 1/2 exactly there; alpha here carries rounding, and at m = 1/2
    s(h) is symmetric, so a one-ulp difference would flip GSS's tie.
    """
    if abs(alpha_a - alpha_b) <= 1e-12 * abs(alpha_a):
        return 0.5
    return alpha_a / (alpha_a + alpha_b)


def merge(xa, xb, alpha_a, alpha_b, gamma, method):
    """Merge (xa, alpha_a) and (xb, alpha_b) into (z, alpha_z) with h from ``method``.

    alpha_z is the projection coefficient alpha_a k(xa, z) + alpha_b k(xb, z).
    """
    kappa = rbf(xa, xb, gamma)
    m = ratio(alpha_a, alpha_b)
    h, _ = solve(m, kappa, "gss-precise" if method == "lookup-wd" else method)
    h = float(h)
    z = h * xa + (1 - h) * xb
    alpha_z = alpha_a * rbf(xa, z, gamma) + alpha_b * rbf(xb, z, gamma)
    return z, alpha_z


def poly(x, z, gamma, degree, coef0):
    return float((gamma * np.dot(x, z) + coef0) ** degree)


def sigmoid(x, z, gamma, coef0):
    return float(np.tanh(gamma * np.dot(x, z) + coef0))


class NaiveBSGD:
    """Budgeted Pegasos, one step at a time, with swap-delete storage like the kernel.

    Holds alpha (not the scaled beta of the compiled kernel); step t with
    weight c uses eta_t = rho_t / lambda and
    w <- (1 - rho_t) w + [y f(x) < 1] c eta_t y phi(x), with rho_t = 1/t
    (Pegasos, ``horizon=0``) or rho_t = 2(T + 1 - t) / (t (2T + 1 - t)) (linear
    decay over ``horizon=T`` steps).  ``kernel(x, z)`` defaults to the RBF
    kernel of width gamma (merging needs it).  A violating training row that is already
    a support vector, unmerged (``row`` given to ``step``), adds its step to its own
    coefficient: phi(x) is the same vector, so that is the same w as a second copy.
    ``bias_scale`` = c^2 > 0 trains the offset b as the weight of a constant feature c:
    it shrinks with w and a violation adds c^2 times its step.  A weight c above
    ``heavy_from`` is taken as far as it brings the margin after the step to 1, and at
    least as ``heavy_from`` (the importance-aware step of :mod:`fastsvm.bsgd._kernels`,
    "Heavy rows"; no row is heavy by default).
    """

    def __init__(self, budget, lam, gamma, method="lookup-wd", maintenance="merge", kernel=None,
                 horizon=0, bias_scale=0.0, heavy_from=np.inf):
        self.budget, self.lam, self.gamma, self.heavy_from = budget, lam, gamma, heavy_from
        self.method, self.maintenance = method, maintenance
        self.kernel = kernel or (lambda x, z: rbf(x, z, gamma))
        self.horizon, self.bias_scale = horizon, bias_scale
        self.sv, self.alpha, self.rows, self.t, self.b = [], [], [], 0, 0.0
        self.n_capped = 0           # heavy steps cut short of c rho / lambda

    def _own_vector(self, row):
        """The slot of training row ``row``'s own (unmerged) support vector, or None."""
        if row is None or row not in self.rows:
            return None
        return self.rows.index(row)

    def rho(self):
        t, T = self.t, self.horizon
        return 1 / t if T == 0 else 2 * (T + 1 - t) / (t * (2 * T + 1 - t))

    def decision(self, x):
        return sum(a * self.kernel(s, x) for s, a in zip(self.sv, self.alpha)) + self.b

    def step(self, x, y, c=1.0, row=None):
        self.t += 1
        violated = y * self.decision(x) < 1
        rho = self.rho()
        self.alpha = [(1 - rho) * a for a in self.alpha]
        self.b *= 1 - rho
        if violated:
            # the margin after the shrink, and how far a step of weight 1 moves it
            taken = heavy_weight(c, self.heavy_from, y * self.decision(x),
                                 (self.kernel(x, x) + self.bias_scale) * rho / self.lam)
            self.n_capped += taken < c
            step = taken * rho / self.lam
            self.b += self.bias_scale * y * step
            own = self._own_vector(row)
            if own is not None:
                self.alpha[own] += y * step
                return
            self.sv.append(np.array(x, dtype=float))
            self.alpha.append(y * step)
            self.rows.append(row)
            if len(self.sv) > self.budget:
                self._maintain()

    def _delete(self, i):
        self.sv[i], self.alpha[i], self.rows[i] = self.sv[-1], self.alpha[-1], self.rows[-1]
        self.sv.pop()
        self.alpha.pop()
        self.rows.pop()

    def _maintain(self):
        mags = np.abs(self.alpha)
        # Ties (up to a relative 1e-12) go to the vector just added, then to the lowest slot.
        a = len(mags) - 1
        for j in range(len(mags) - 1):
            if mags[j] < mags[a] * (1 - 1e-12):
                a = j
        aa = self.alpha[a]
        partners = [j for j in range(len(self.sv)) if j != a and self.alpha[j] * aa > 0]
        if self.maintenance == "remove" or not partners:
            self._delete(a)
            return
        scores = []
        for j in partners:
            kappa = rbf(self.sv[a], self.sv[j], self.gamma)
            _, wd = solve(ratio(aa, self.alpha[j]), kappa, self.method)
            scores.append((aa + self.alpha[j]) ** 2 * float(wd))
        b = partners[int(np.argmin(scores))]
        z, alpha_z = merge(self.sv[a], self.sv[b], aa, self.alpha[b], self.gamma, self.method)
        self.sv[b], self.alpha[b], self.rows[b] = z, alpha_z, None
        self._delete(a)


# ---------------------------------------------------------------- Snacks
def nystrom_embedding(X, landmarks, gamma):
    """The paper's map x -> (K_mm^{1/2})^+ k_m(x) literally, with an explicit
    matrix square root and pseudo-inverse (Snacks, Sec. II-A); rows of the result."""
    X, L = np.asarray(X, dtype=float), np.asarray(landmarks, dtype=float)
    K_mm = np.array([[rbf(a, b, gamma) for b in L] for a in L])
    K_nm = np.array([[rbf(x, b, gamma) for b in L] for x in X])
    s, U = np.linalg.eigh(K_mm)
    root = (U * np.sqrt(np.clip(s, 0, None))) @ U.T
    return K_nm @ np.linalg.pinv(root, rcond=1e-7, hermitian=True)


def hinge_objective(Phi, y, w, b, lam, weight=None):
    """(lambda/2)(||w||^2 + b^2) + mean of c_i hinge_i (c = 1 by default), the offset as a
    constant feature 1."""
    weight = np.ones(len(y)) if weight is None else weight
    margins = y * (Phi @ w + b)
    return 0.5 * lam * (w @ w + b * b) + np.mean(weight * np.maximum(0.0, 1.0 - margins))


def heavy_threshold(weight):
    """The weight above which a row is heavy: 100 times the median (fastsvm._importance)."""
    return 100 * np.median(weight)


def heavy_weight(c, heavy_from, margin, reach):
    """The weight a violating step takes (fastsvm._importance, plainly): c up to
    ``heavy_from``; above it at least ``heavy_from`` and at most c, what brings the margin
    after the shrink, ``margin``, to 1, where a step of weight 1 moves it by ``reach``."""
    if c <= heavy_from or reach <= 0:
        return c
    return max(heavy_from, min(c, (1 - margin) / reach))


def assg_stage(Phi, y, lam, w, eta, radius, order, weight=None, heavy_from=None):
    """One ASSG stage (Snacks Alg. 1 with step (7)) on x_i = (phi_i, 1): the average iterate;
    example i's subgradient of the hinge is scaled by weight[i] (default 1; above
    ``heavy_from``, by default :func:`heavy_threshold`, by :func:`heavy_weight`)."""
    weight = np.ones(len(y)) if weight is None else weight
    heavy_from = heavy_threshold(weight) if heavy_from is None else heavy_from
    X = np.hstack([Phi, np.ones((len(Phi), 1))]).astype(float)
    center, w, avg = w.copy(), w.copy(), np.zeros_like(w)
    for i in order:
        margin = y[i] * (X[i] @ w)
        taken = heavy_weight(weight[i], heavy_from, (1 - eta * lam) * margin, eta * (X[i] @ X[i]))
        g = lam * w - (taken * y[i] * X[i] if margin < 1 else 0.0)
        w = w - eta * g
        dist = np.linalg.norm(w - center)
        if dist > radius:
            w = center + radius / dist * (w - center)
        avg += w / len(order)
    return avg


def pegasos(Phi, y, lam, order, weight=None, heavy_from=None):
    """Pegasos with step 1/(lambda t) and projection onto ||w|| <= 1/sqrt(lambda), on
    x_i = (phi_i, 1), example i's hinge subgradient scaled by weight[i] (default 1; above
    ``heavy_from``, by default :func:`heavy_threshold`, by :func:`heavy_pegasos_weight`)."""
    weight = np.ones(len(y)) if weight is None else weight
    heavy_from = heavy_threshold(weight) if heavy_from is None else heavy_from
    X = np.hstack([Phi, np.ones((len(Phi), 1))]).astype(float)
    w = np.zeros(X.shape[1])
    for t, i in enumerate(order, start=1):
        margin = y[i] * (X[i] @ w)
        taken = heavy_pegasos_weight(weight[i], heavy_from, margin, t, 1, lam, X[i] @ X[i])
        g = lam * w - (taken * y[i] * X[i] if margin < 1 else 0.0)
        w = w - g / (lam * t)
        w *= min(1.0, 1.0 / (np.sqrt(lam) * np.linalg.norm(w))) if w.any() else 1.0
    return w


# ---------------------------------------------------------------- margin bounds
def huber(z, h):
    """Huber loss of Guillory & Bilmes eq. (5), elementwise, by its three cases."""
    z = np.asarray(z, dtype=float)
    return np.where(z <= 1 - h, 1 - z, np.where(z >= 1 + h, 0.0, (1 + h - z) ** 2 / (4 * h)))


def huber_objective(X, y, w, b, lam, h, weight=None):
    """lambda/2 ||w||^2 + weighted mean (sum s_i l_i / sum s_i) of the Huber loss of the
    margins y (Xw + b); unit weights by default."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    weight = np.ones(len(y)) if weight is None else weight
    return 0.5 * lam * w @ w + np.sum(weight * huber(y * (X @ w + b), h)) / np.sum(weight)


def huber_gradient(X, y, w, b, lam, h, weight=None):
    """Gradient (d/dw, d/db) of :func:`huber_objective` from the derivative of each case."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    weight = np.ones(len(y)) if weight is None else weight
    z = y * (X @ w + b)
    slope = weight * np.where(z <= 1 - h, -1.0, np.where(z >= 1 + h, 0.0, -(1 + h - z) / (2 * h)))
    return lam * w + X.T @ (slope * y) / np.sum(weight), np.sum(slope * y) / np.sum(weight)


def huber_exact(X, y, lam, h, weight=None, fit_intercept=True):
    """(w, b, F*): :func:`huber_objective` minimised by scipy's L-BFGS-B at tolerances far
    below any tested solver's, with :func:`huber_gradient`.

    L-BFGS runs in the variables v_j = s_j w_j, s_j the root mean square of column j (1
    where it is 0): the same objective, whose conditioning no longer depends on the
    features' scales (columns scaled by 10^-3 to 10^3: 318 iterations to the optimum,
    where L-BFGS on w stopped at its 10,000, 3e-7 above it, after 10-20 s)."""
    from scipy.optimize import minimize

    columns = X.multiply(X).mean(axis=0).A1 if hasattr(X, "multiply") else np.mean(X * X, axis=0)
    s = np.sqrt(columns)
    s[s == 0] = 1.0

    def objective(v):
        w, b = v[:-1] / s, (v[-1] if fit_intercept else 0.0)
        gw, gb = huber_gradient(X, y, w, b, lam, h, weight)
        return (huber_objective(X, y, w, b, lam, h, weight),
                np.append(gw / s, gb if fit_intercept else 0.0))
    best = minimize(objective, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                    options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return best.x[:-1] / s, (best.x[-1] if fit_intercept else 0.0), best.fun


def huber_dual(X, y, alpha, lam, h, weight=None):
    """The Huber SVM's dual at alpha in [0, 1]^n, from the conjugate of each loss term,
    l(z) = max over a in [0, 1] of a (1 + h - z) - h a^2 (checked by a grid in the tests):
    weighted mean of (1 + h) alpha_i - h alpha_i^2 minus ||v||^2 / (2 lambda),
    v = weighted mean of alpha_i y_i x_i."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    weight = np.ones(len(y)) if weight is None else weight
    S = np.sum(weight)
    v = X.T @ (weight * alpha * y) / S
    return np.sum(weight * ((1 + h) * alpha - h * alpha ** 2)) / S - v @ v / (2 * lam)


def huber_feasible_alpha(X, y, w, b, h, weight=None, fit_intercept=True):
    """alpha_i = -l'(z_i) at (w, b) by the derivative's cases; with an offset, the label
    whose sum of s_i alpha_i is larger scaled down so that sum_i s_i alpha_i y_i = 0."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    weight = np.ones(len(y)) if weight is None else weight
    z = y * (X @ w + b)
    alpha = np.where(z <= 1 - h, 1.0, np.where(z >= 1 + h, 0.0, (1 + h - z) / (2 * h)))
    if fit_intercept:
        pos, neg = np.sum((weight * alpha)[y > 0]), np.sum((weight * alpha)[y < 0])
        if pos > neg:
            alpha[y > 0] *= neg / pos
        elif neg > 0:
            alpha[y < 0] *= pos / neg
    return alpha


def huber_gd(X, y, lam, h, eta0, tol, max_iter, fit_intercept=True, weight=None):
    """Gradient descent with the paper's step rule (Sec. 4.2), the first step capped at
    1/lambda: (w, b, objectives)."""
    w, b, eta, objectives = np.zeros(X.shape[1]), 0.0, min(eta0, 1.0 / lam), []
    for _ in range(max_iter):
        objectives.append(huber_objective(X, y, w, b, lam, h, weight))
        if len(objectives) > 1:
            if objectives[-1] > objectives[-2]:
                eta /= 2
            if abs(objectives[-2] - objectives[-1]) <= tol * abs(objectives[-2]):
                break
        if len(objectives) == max_iter:     # the model returned is the last one evaluated
            break
        gw, gb = huber_gradient(X, y, w, b, lam, h, weight)
        w = w - eta * gw
        b = b - eta * gb if fit_intercept else b
    return w, b, objectives


def heavy_pegasos_weight(c, heavy_from, margin, t, k, lam, sq_norm):
    """The weight a violating draw of weight c takes in Pegasos' step t of k draws: c up
    to ``heavy_from``; above it at least ``heavy_from`` and at most c, what
    brings its margin, (1 - 1/t) ``margin`` after the shrink, to 1 with its step
    weight / (lambda t k) times ``sq_norm`` = ||x_i||^2 (:func:`heavy_weight`)."""
    return heavy_weight(c, heavy_from, (1 - 1 / t) * margin, sq_norm / (lam * t * k))


def pegasos_minibatch(X, y, lam, batches, bias_feature, weight=None, average_from=None,
                      heavy_from=None):
    """Mini-batch Pegasos on x_i = (x_i, bias_feature) over the given batches of indices,
    each violator's subgradient scaled by its weight (default 1; above ``heavy_from``, by
    default :func:`heavy_threshold`, by :func:`heavy_pegasos_weight`).  Returns w and the
    dual variables alpha, stepped alongside: w = (1/lambda) sum_i alpha_i y_i x_i; with
    ``average_from`` the means of both over the iterations t >= average_from."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    X = np.hstack([X, np.full((len(X), 1), bias_feature)])
    weight = np.ones(len(y)) if weight is None else weight
    heavy_from = heavy_threshold(weight) if heavy_from is None else heavy_from
    w = np.zeros(X.shape[1])
    alpha = np.zeros(len(X))
    for t, batch in enumerate(batches, start=1):
        k = len(batch)
        taken = {i: heavy_pegasos_weight(weight[i], heavy_from, y[i] * (X[i] @ w), t, k, lam,
                                         X[i] @ X[i])
                 for i in batch if y[i] * (X[i] @ w) < 1}
        violators = [i for i in batch if i in taken]
        step = (sum((taken[i] * y[i] * X[i] for i in violators), np.zeros_like(w))
                / (lam * t * k))
        w = (1 - 1 / t) * w + step
        alpha = (1 - 1 / t) * alpha
        for i in violators:
            alpha[i] += taken[i] / (t * k)
        norm = np.linalg.norm(w)
        if norm > 1 / np.sqrt(lam):
            w *= 1 / (np.sqrt(lam) * norm)
            alpha *= 1 / (np.sqrt(lam) * norm)
        if average_from is not None and t >= average_from:
            w_sum, alpha_sum = (w_sum + w, alpha_sum + alpha) if t > average_from else (w, alpha)
    if average_from is not None:
        averaged = len(batches) - average_from + 1
        return w_sum / averaged, alpha_sum / averaged
    return w, alpha


def kernel_pegasos(X, y, lam, batches, gamma, bias2, weight=None, kernel=None,
                   average_from=None, heavy_from=None):
    """Mini-batch Pegasos in the feature space of k(x, z) + bias2 (k the RBF kernel of
    width gamma unless ``kernel`` is given), with w = sum_j beta_j phi(x_j) over all
    training points and ||w||^2 = beta^T K beta, each violator's step scaled by its
    weight (default 1; above ``heavy_from``, by default :func:`heavy_threshold`, by
    :func:`heavy_pegasos_weight`); returns
    beta, or with ``average_from`` its mean over the iterations t >= average_from."""
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    kernel = kernel or (lambda a, b: rbf(a, b, gamma))
    weight = np.ones(len(y)) if weight is None else weight
    heavy_from = heavy_threshold(weight) if heavy_from is None else heavy_from
    K = np.array([[kernel(a, b) + bias2 for b in X] for a in X])
    beta = np.zeros(len(X))
    for t, batch in enumerate(batches, start=1):
        margins = y * (K @ beta)
        step = np.zeros(len(X))
        k = len(batch)
        for i in batch:
            if margins[i] < 1:
                taken = heavy_pegasos_weight(weight[i], heavy_from, margins[i], t, k, lam,
                                             K[i, i])
                step[i] += taken * y[i] / (lam * t * k)
        beta = (1 - 1 / t) * beta + step
        norm = np.sqrt(beta @ K @ beta)
        if norm > 1 / np.sqrt(lam):
            beta *= 1 / (np.sqrt(lam) * norm)
        if average_from is not None and t >= average_from:
            beta_sum = beta_sum + beta if t > average_from else beta.copy()
    if average_from is not None:
        return beta_sum / (len(batches) - average_from + 1)
    return beta


def weight_distance(K, beta, beta_ref):
    """||w - w'|| by the paper's eq. (6) from kernel values."""
    return np.sqrt(np.sum(K * (np.outer(beta, beta) + np.outer(beta_ref, beta_ref)
                               - 2 * np.outer(beta, beta_ref))))


# ---------------------------------------------------------------- margin SGD (Orchel & Suykens)
def margin_sgd_pass(X, y, order, gamma, M, update, weight=None, kernel=None, C=np.inf):
    """One pass of margin SGD with extreme early stopping: alpha per training point.

    Each point's coefficient is decided at its first draw from
    m = y_k sum_j y_j alpha_j k(x_j, x_k) over the points decided before it,
    capped at C and scaled by weight[k] (default 1); k is the RBF kernel of
    width gamma unless ``kernel(x, z)`` is given.
    """
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
    kernel = kernel or (lambda a, b: rbf(a, b, gamma))
    weight = np.ones(len(y)) if weight is None else weight
    alpha = np.zeros(len(X))
    decided = np.zeros(len(X), dtype=bool)
    for k in order:
        if decided[k]:
            continue
        decided[k] = True
        f = sum(y[j] * alpha[j] * kernel(X[j], X[k]) for j in np.flatnonzero(alpha))
        if y[k] * f <= M:
            value = max(0.0, 1.0 - y[k] * f) if update == "squared-hinge" else 1.0
            alpha[k] = weight[k] * min(C, value)
    return alpha


def accuracy_offset(f, y, weight=None):
    """Brute force: the offset maximising the (weighted) accuracy among all midpoints,
    nearest 0 on ties."""
    weight = np.ones(len(y)) if weight is None else weight
    values = np.unique(f)
    cuts = np.concatenate([[values[-1] + 1.0], (values[:-1] + values[1:]) / 2, [values[0] - 1.0]])
    accuracy = [np.average(np.where(f - c > 0, 1.0, -1.0) == y, weights=weight) for c in cuts]
    best = cuts[np.isclose(accuracy, max(accuracy), rtol=0, atol=1e-12)]
    return -best[np.argmin(np.abs(best))]


def dcd_epoch(Phi, y, bias_feature, upper, order, alpha, w):
    """Dual coordinate descent for the hinge-loss SVM (Hsieh et al. 2008, Alg. 1), one
    coordinate at a time with explicit vectors: alpha and w updated in place."""
    for i in order:
        x = np.append(Phi[i], bias_feature)
        gradient = y[i] * (x @ w) - 1.0
        alpha_new = min(max(alpha[i] - gradient / (x @ x), 0.0), upper[i])
        w += (alpha_new - alpha[i]) * y[i] * x
        alpha[i] = alpha_new


def shared_degradation(xa, xb, beta_a, beta_b, h, gamma):
    """Summed over models, ||beta_ac phi(xa) + beta_bc phi(xb) - beta_zc phi(z)||^2 with
    z = h xa + (1-h) xb and the projection beta_zc = beta_ac k(xa, z) + beta_bc k(xb, z),
    from kernel values; returns (degradation, z, beta_z)."""
    z = h * xa + (1 - h) * xb
    beta_a, beta_b = np.asarray(beta_a, dtype=float), np.asarray(beta_b, dtype=float)
    beta_z = beta_a * rbf(xa, z, gamma) + beta_b * rbf(xb, z, gamma)
    total = sum(weight_degradation(xa, xb, z, a, b, c, gamma)
                for a, b, c in zip(beta_a, beta_b, beta_z))
    return total, z, beta_z


def best_shared_merge(xa, xb, beta_a, beta_b, gamma):
    """(degradation, h) of the best h in [0, 1] for merging vector coefficients, by a grid
    of 401 points (kernel values of every grid point's z, vectorised) refined with a
    bounded scalar search around the best."""
    from scipy.optimize import minimize_scalar

    beta_a, beta_b = np.asarray(beta_a, dtype=float), np.asarray(beta_b, dtype=float)
    grid = np.linspace(0.0, 1.0, 401)
    z = grid[:, None] * xa + (1 - grid[:, None]) * xb
    k_az = np.exp(-gamma * ((z - xa) ** 2).sum(1))[:, None]
    k_bz = np.exp(-gamma * ((z - xb) ** 2).sum(1))[:, None]
    beta_z = beta_a * k_az + beta_b * k_bz
    values = (beta_a ** 2 + beta_b ** 2 + beta_z ** 2 + 2 * beta_a * beta_b * rbf(xa, xb, gamma)
              - 2 * beta_z * (beta_a * k_az + beta_b * k_bz)).sum(1)
    k = int(np.argmin(values))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    res = minimize_scalar(lambda h: shared_degradation(xa, xb, beta_a, beta_b, h, gamma)[0],
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return (res.fun, res.x) if res.fun < values[k] else (values[k], grid[k])


class NaiveSharedBSGD(NaiveBSGD):
    """K one-vs-rest models on one budget (``fastsvm.bsgd._shared_kernels``), one step at
    a time: ``alpha`` holds a K-vector per support vector.  Budget maintenance merges the
    vector of smallest norm with the partner (positive inner product of coefficient
    vectors) whose best merge, found by brute force, degrades the K models least."""

    def __init__(self, n_models, budget, lam, gamma, horizon=0, maintenance="merge",
                 heavy_from=np.inf):
        super().__init__(budget, lam, gamma, maintenance=maintenance, horizon=horizon,
                         heavy_from=heavy_from)
        self.n_models = n_models

    def decision(self, x):
        f = np.zeros(self.n_models)
        for s, a in zip(self.sv, self.alpha):
            f += np.asarray(a) * self.kernel(s, x)
        return f

    def step(self, x, label, c=1.0, row=None):
        self.t += 1
        y = np.where(np.arange(self.n_models) == label, 1.0, -1.0)
        violated = y * self.decision(x) < 1
        rho = self.rho()
        self.alpha = [(1 - rho) * np.asarray(a) for a in self.alpha]
        if violated.any():
            # as NaiveBSGD's, model by model (no offset here)
            reach = self.kernel(x, x) * rho / self.lam
            taken = np.array([heavy_weight(c, self.heavy_from, m, reach)
                              for m in y * self.decision(x)])
            self.n_capped += int(np.sum(violated & (taken < c)))
            steps = np.where(violated, y * taken * rho / self.lam, 0.0)
            own = self._own_vector(row)
            if own is not None:
                self.alpha[own] = self.alpha[own] + steps
                return
            self.sv.append(np.array(x, dtype=float))
            self.alpha.append(steps)
            self.rows.append(row)
            if len(self.sv) > self.budget:
                self._maintain()

    def smallest(self):
        """The vector of smallest coefficient norm (ties to the newest, then the lowest slot)."""
        norms = [float(np.dot(a, a)) for a in self.alpha]
        a = len(norms) - 1
        for j in range(len(norms) - 1):
            if norms[j] < norms[a] * (1 - 2e-12):
                a = j
        return a

    def partner_degradations(self):
        """{partner: (degradation, h)} of the smallest-norm vector a, and a."""
        a = self.smallest()
        out = {j: best_shared_merge(self.sv[a], self.sv[j], self.alpha[a], self.alpha[j],
                                    self.gamma)
               for j in range(len(self.sv)) if j != a and np.dot(self.alpha[a], self.alpha[j]) > 0}
        return out, a

    def _maintain(self):
        if self.maintenance == "remove":
            self._delete(self.smallest())
            return
        candidates, a = self.partner_degradations()
        if not candidates:
            self._delete(a)
            return
        b = min(candidates, key=lambda j: candidates[j][0])
        _, z, beta_z = shared_degradation(self.sv[a], self.sv[b], self.alpha[a], self.alpha[b],
                                          candidates[b][1], self.gamma)
        self.sv[b], self.alpha[b], self.rows[b] = z, beta_z, None
        self._delete(a)
