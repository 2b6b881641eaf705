"""The exact hinge offsets of :func:`fastsvm.bsgd.solver.hinge_offset` over partitioned rows.

For each binary model, b minimises sum_i s_i max(0, 1 - y_i (f_i + b)): it is
the smallest breakpoint v = y_i - f_i at which the weight W(v) of the
breakpoints <= v reaches S_pos, the positive rows' weight (to a relative
1e-12), or the midpoint between v and the next breakpoint where W(v) equals
S_pos.  Each partition keeps its breakpoints sorted on its worker.  The client
searches the 64-bit keys that order float64 values: each round sends every
partition ``PROBES`` keys per model, spread over the interval left, and gets
W at each back, which narrows the interval 64-fold, so about 11 rounds of one
small task per partition find v for all models at once; no breakpoint leaves
its worker.
"""

import numpy as np

_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)
PROBES = 63


def sort_keys(values):
    """int64 keys in the order of the float64 ``values`` (-0.0 and 0.0 equal)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & _MAGNITUDE), bits)


def key_value(key):
    """The float64 of a key of :func:`sort_keys`."""
    key = int(key)
    bits = key if key >= 0 else (-key) | -(1 << 63)
    return float(np.int64(bits).view(np.float64))


class Breakpoints:
    """One partition's sorted breakpoint keys and cumulative weights per binary model.

    ``f`` holds the decision values (n x n_models), ``targets`` the +-1 targets
    of each model and ``weight`` the rows' weights s_i.
    """

    def __init__(self, f, targets, weight):
        self.keys, self.cumulative, self.positive = [], [], []
        for c, y in enumerate(targets):
            keys = sort_keys(y - f[:, c])
            order = np.argsort(keys, kind="stable")
            self.keys.append(keys[order])
            self.cumulative.append(np.concatenate([[0.0], np.cumsum(weight[order])]))
            self.positive.append(float(weight[y > 0].sum()))

    def ranges(self):
        """(smallest, largest) key of each model (None without rows)."""
        return [(int(k[0]), int(k[-1])) if len(k) else None for k in self.keys]

    def weight_upto(self, probes):
        """W(key) for each model's probe keys (a list of int64 arrays)."""
        return [cum[np.searchsorted(keys, p, side="right")]
                for keys, cum, p in zip(self.keys, self.cumulative, probes)]

    def next_keys(self, keys):
        """The smallest key above each model's key (None where there is none)."""
        out = []
        for sorted_keys, key in zip(self.keys, keys):
            k = int(np.searchsorted(sorted_keys, key, side="right"))
            out.append(int(sorted_keys[k]) if k < len(sorted_keys) else None)
        return out


def distributed_offsets(client, parts, n_models):
    """The exact hinge offset of each model over futures of :class:`Breakpoints`."""
    def each(method, *args):
        return client.gather([client.submit(method, part, *args, pure=False) for part in parts])

    ranges = each(Breakpoints.ranges)
    positive = np.sum(each(_positive), axis=0)
    target = positive * (1.0 - 1e-12)
    lo = [min(r[c][0] for r in ranges if r[c] is not None) - 1 for c in range(n_models)]
    hi = [max(r[c][1] for r in ranges if r[c] is not None) for c in range(n_models)]
    # invariant: W(lo) < target <= W(hi)
    while any(h - low > 1 for low, h in zip(lo, hi)):
        probes = [_probes(low, h) for low, h in zip(lo, hi)]
        weights = _summed(each(Breakpoints.weight_upto, probes), n_models)
        for c in range(n_models):
            above = np.flatnonzero(weights[c] >= target[c])
            if len(above):
                hi[c] = int(probes[c][above[0]])
                if above[0] > 0:
                    lo[c] = int(probes[c][above[0] - 1])
            else:
                lo[c] = int(probes[c][-1])
    reached = _summed(each(Breakpoints.weight_upto, [np.array([h]) for h in hi]), n_models)
    following = each(Breakpoints.next_keys, hi)
    offsets = []
    for c in range(n_models):
        value = key_value(hi[c])
        after = [f[c] for f in following if f[c] is not None]
        if abs(float(reached[c][0]) - positive[c]) <= 1e-12 * positive[c] and after:
            value = 0.5 * (value + key_value(min(after)))
        offsets.append(value)
    return offsets


def _probes(low, high):
    """Up to ``PROBES`` distinct keys spread over (low, high], high included (exact integer
    arithmetic: the keys span all of int64, where float64 cannot count)."""
    if high - low <= 1:
        return np.array([high], dtype=np.int64)
    keys = {low + (k * (high - low)) // (PROBES + 1) for k in range(1, PROBES + 2)}
    return np.array(sorted(key for key in keys if low < key <= high), dtype=np.int64)


def _positive(part):
    return part.positive


def _summed(per_partition, n_models):
    """Per model, the sum over the partitions of their arrays."""
    return [sum(values[c] for values in per_partition) for c in range(n_models)]
