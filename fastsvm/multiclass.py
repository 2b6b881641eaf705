"""One-vs-rest targets and labels shared by the estimators (the fan-out is ``BaseSVC._fan_out``).

Two classes give one binary problem (+1 for ``classes[1]``, -1 for
``classes[0]``); k > 2 classes give k problems, problem c separating class c
(+1) from all others (-1).  Prediction takes the class of the largest decision
value (the sign, for two classes).
"""

import numpy as np


def binary_targets(y_encoded, n_classes):
    """List of +-1 float64 target vectors, one per binary problem."""
    if n_classes == 2:
        return [np.where(y_encoded == 1, 1.0, -1.0)]
    return [np.where(y_encoded == c, 1.0, -1.0) for c in range(n_classes)]


def labels_from_decision(decision, classes):
    """Predicted labels from decision values of shape (n,) or (n, n_classes)."""
    if decision.ndim == 1:
        return classes[(decision > 0).astype(np.intp)]
    return classes[np.argmax(decision, axis=1)]
