"""Helpers shared by tests/test_classification.py and tests/test_sklearn.py: small datasets of binary
records for brute-force admissibility checks and exact DP audits under add/remove-one-record neighbours.

A dataset is a tuple of counts, one per record type (label, prediction of model 0, prediction of model 1).
"""
import itertools

import numpy as np

__all__ = ["TYPES", "to_arrays", "universe", "neighbours"]

#: record types: (label, prediction of model 0, prediction of model 1)
TYPES = list(itertools.product((0, 1), repeat=3))


def to_arrays(counts):
    """(y, predictions of shape (2, n)) of the dataset with these counts per record type."""
    recs = [t for t, c in zip(TYPES, counts) for _ in range(c)]
    if not recs:
        return np.zeros(0, int), np.zeros((2, 0), int)
    a = np.array(recs)
    return a[:, 0], a[:, 1:].T


def universe(max_size):
    """Every multiset of record types with at most max_size records (as count tuples)."""
    out = []
    for size in range(max_size + 1):
        for combo in itertools.combinations_with_replacement(range(len(TYPES)), size):
            out.append(tuple(np.bincount(combo, minlength=len(TYPES)).tolist()))
    return out


def neighbours(counts):
    """Add or remove one record."""
    for i in range(len(TYPES)):
        up = list(counts)
        up[i] += 1
        yield tuple(up)
        if counts[i]:
            down = list(counts)
            down[i] -= 1
            yield tuple(down)
