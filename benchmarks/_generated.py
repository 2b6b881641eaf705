"""Generated data sets for checking defaults on data nobody tuned for.

Each generator returns ``(X_train, y_train, X_test, y_test)``, deterministic
for a given ``seed``; the test split is a stratified 25 % of the rows.  They
cover what the shared LIBSVM sets do not:

* ``small``: 800 rows, 10 features, a nonlinear boundary (3 clusters per
  class, 5 % of labels flipped).
* ``wide_sparse``: 8,000 rows, 5,000 features, about 0.5 % nonzero
  (term-frequency-like counts, rows scaled to unit norm, as text after
  TF-IDF), labels from a sparse linear rule (1,500 relevant features) plus 3 % label
  noise: CSR input.
* ``imbalanced``: 10,000 rows, 20 features, 5 % minority class.
* ``multiclass``: 8,000 rows, 5 classes, 20 features, 2 clusters per class.
* ``noisy_moons``: 12,000 rows, two interleaved half-moons with noise 0.3
  (overlapping classes: about 13 % of the rows lie on the other class's
  side) and 8 more features of pure noise.
* ``dense_wide``: 8,000 rows, 300 dense features of which 40 informative
  (``make_classification``, 2 clusters per class): under gamma='scale'
  every row lies far from every other (see "Spread data" in BudgetSVC).
* ``sphere``: 8,000 rows, 10 standard normal features, the class is
  whether the squared norm exceeds the median of the chi-squared law with
  10 degrees of freedom (``make_hastie_10_2``): one class enclosed by the
  other, a boundary whose decision function needs a large offset.

``MULTICLASS`` holds four more multi-class sets, for
``benchmarks/multiclass_split.py`` (one-vs-one against one-vs-rest):

* ``shells``: 10,000 rows, 3 classes of concentric shells in 6 dimensions
  (``make_gaussian_quantiles``): the middle class is no half-space against
  both others.
* ``letters``: 20,000 rows, 26 classes, 16 features rounded to the
  integers 0..15 (as UCI letter), 2 clusters per class.
* ``imbalanced_multi``: 12,000 rows, 6 classes of 50, 25, 12, 8, 4 and 1 %
  of the rows, 30 features.
* ``many_classes``: 13,340 rows, 40 classes (one cluster each), 20 features
  of which 12 informative: more classes than ``multi_class='auto'`` splits
  one-vs-one.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import (make_classification, make_gaussian_quantiles, make_hastie_10_2,
                              make_moons)
from sklearn.model_selection import train_test_split


def _split(X, y, seed):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y,
                                                        random_state=seed)
    return X_train, y_train, X_test, y_test


def small(seed=0):
    X, y = make_classification(800, n_features=10, n_informative=6, n_redundant=2,
                               n_clusters_per_class=3, flip_y=0.05, class_sep=1.0,
                               random_state=seed)
    return _split(X, y, seed)


def wide_sparse(seed=0, n=8000, n_features=5000, density=0.005):
    rng = np.random.default_rng(seed)
    # Zipf-like feature frequencies, Poisson counts, unit-norm rows
    freq = 1.0 / np.arange(1, n_features + 1) ** 0.8
    freq *= density * n_features / freq.sum()
    X = sp.random(n, n_features, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.poisson(1.0, k) + 1.0)
    X = X @ sp.diags(np.sqrt(freq / freq.mean()))
    X = sp.csr_matrix(X)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
    X = sp.csr_matrix(X)
    w = np.zeros(n_features)
    relevant = rng.choice(n_features, 1500, replace=False)
    w[relevant] = rng.normal(size=1500)
    score = X @ w
    y = (score + 1e-9 * rng.normal(size=n) > np.median(score)).astype(int)
    flip = rng.random(n) < 0.03
    y[flip] = 1 - y[flip]
    return _split(X, y, seed)


def imbalanced(seed=0):
    X, y = make_classification(10_000, n_features=20, n_informative=8, n_redundant=4,
                               weights=[0.95], flip_y=0.01, class_sep=1.0, random_state=seed)
    return _split(X, y, seed)


def multiclass(seed=0):
    X, y = make_classification(8000, n_features=20, n_informative=10, n_redundant=4,
                               n_classes=5, n_clusters_per_class=2, flip_y=0.02,
                               class_sep=1.5, random_state=seed)
    return _split(X, y, seed)


def noisy_moons(seed=0):
    X, y = make_moons(12_000, noise=0.3, random_state=seed)
    noise = np.random.default_rng(seed).normal(size=(len(X), 8))
    return _split(np.hstack([X, noise]), y, seed)


def dense_wide(seed=0):
    X, y = make_classification(8000, n_features=300, n_informative=40, random_state=seed)
    return _split(X, y, seed)


def sphere(seed=0):
    X, y = make_hastie_10_2(8000, random_state=seed)
    return _split(X, y.astype(int), seed)


def shells(seed=0):
    X, y = make_gaussian_quantiles(n_samples=10_000, n_features=6, n_classes=3,
                                   random_state=seed)
    return _split(X, y, seed)


def letters(seed=0):
    X, y = make_classification(20_000, n_features=16, n_informative=14, n_redundant=0,
                               n_classes=26, n_clusters_per_class=2, class_sep=2.0, flip_y=0.01,
                               random_state=seed)
    X = np.round(15 * (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0)))
    return _split(X, y, seed)


def imbalanced_multi(seed=0):
    X, y = make_classification(12_000, n_features=30, n_informative=12, n_classes=6,
                               weights=[0.5, 0.25, 0.12, 0.08, 0.04, 0.01],
                               n_clusters_per_class=2, class_sep=1.5, random_state=seed)
    return _split(X, y, seed)


def many_classes(seed=0):
    X, y = make_classification(13_340, n_features=20, n_informative=12, n_classes=40,
                               n_clusters_per_class=1, random_state=seed)
    return _split(X, y, seed)


GENERATORS = {"small": small, "wide_sparse": wide_sparse, "imbalanced": imbalanced,
              "multiclass": multiclass, "noisy_moons": noisy_moons, "dense_wide": dense_wide,
              "sphere": sphere}
MULTICLASS = {"shells": shells, "letters": letters, "imbalanced_multi": imbalanced_multi,
              "many_classes": many_classes}


def load(name, seed=0):
    """``(X_train, y_train, X_test, y_test)`` of the generated set ``name``."""
    return {**GENERATORS, **MULTICLASS}[name](seed)
