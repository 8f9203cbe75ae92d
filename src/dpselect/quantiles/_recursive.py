"""method="recursive": the approximate quantiles of Kaplan, Schnapp & Stemmer (ICML 2022), replace-one budget.

Algorithm (on the distinct sorted targets q_1 < ... < q_m and a domain [a, b]): take the middle target
p = q_(⌊m/2⌋+1), release v by the single-quantile interval mechanism (:mod:`._single`) for p on the records
of the current subproblem at ε0; then recurse on the records <= v (domain [a, v], targets q_i/p for the
targets below p) and on the records > v (domain [v, b], targets (q_i − p)/(1 − p) above p). Every target
is a public rational of the qs (exact Fractions). The split uses the *released* float v, so each
subproblem is a function of released values and its own records only. The recursion tree has
L = ⌈log2(m + 1)⌉ levels.

Privacy (replace-one neighbours, n public; derived here and checked by an exact audit in
tests/test_quantiles.py). Given the outputs released so far, the subproblems of one level are run on
disjoint sets of records. A subproblem's release is ε0-bounded-range both when one of its records is
replaced (n_S fixed: ranks move by <= 1) and when a record is added or removed (ranks move by 0 or 1 and the
target round(2 q' n_S)/2 by a value in [0, 1] in the same direction; see :mod:`._single`). Replacing
record x by y: at the root both are in the one subproblem (one ε0-BR release); at every deeper level x and y
lie in at most two subproblems (x removed from one, y added to another), so that level is at most two
ε0-BR releases on the pair. The whole is an adaptive composition of 2L − 1 ε0-bounded-range mechanisms:
with ε0 = ε/(2L − 1) it is ε-DP, and ``AdaptiveBoundedRangeComposition(ε0, 2L − 1)`` under (ε, δ).
(Kaplan et al. spend ε/(L) per level, which is the add/remove-one budget: one subproblem per level; under
replace-one that budget gives up to (2L − 1)·ε/L, and the audit of the tests shows the loss exceeding ε
when it is used.) Cost: O(m) interval draws on subproblems whose sizes sum to <= k + m per level.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..accounting.composition import AdaptiveBoundedRangeComposition
from ..accounting.guarantees import Guarantee
from ._budget import split_epsilon
from ._single import single_quantile

__all__: list[str] = []


def depth(m: int) -> int:
    """The number of levels of the recursion on m targets (the middle one, then ⌊m/2⌋ and m − ⌊m/2⌋ − 1)."""
    d = 0
    while m > 0:
        m, d = m // 2, d + 1
    return d


def recursive_slots(m: int) -> int:
    """2L − 1: the number of ε0-BR releases a replaced record can touch."""
    return 2 * depth(m) - 1


def recursive_privacy(epsilon: float, m: int) -> Guarantee:
    """The guarantee of the recursive release of m quantiles at total ε (adaptive BR composition)."""
    k = recursive_slots(m)
    return AdaptiveBoundedRangeComposition(split_epsilon(epsilon, k), k)


def recursive_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float,
                        hi: float, gen: np.random.Generator, eps0: float | None = None) -> np.ndarray:
    """One value per entry of ``qs`` (distinct, sorted); ``eps0`` overrides the per-release ε (tests only)."""
    m = len(qs)
    e0 = split_epsilon(epsilon, recursive_slots(m)) if eps0 is None else float(eps0)
    out = np.empty(m, dtype=np.float64)
    targets = [Fraction(float(q)) for q in qs]
    # explicit stack, pre-order (middle, left subtree, right subtree): the draw order is fixed
    stack = [(vals, cnt, lo, hi, targets, 0)]
    while stack:
        v, c, a, b, ts, first = stack.pop()
        if not ts:
            continue
        mid = len(ts) // 2
        p = ts[mid]
        x = single_quantile(v, c, a, b, p, e0, gen)
        out[first + mid] = x
        cut = int(np.searchsorted(v, x, side="right"))       # records <= x go left
        left = [t / p for t in ts[:mid]] if mid else []
        right = [(t - p) / (1 - p) for t in ts[mid + 1:]]
        # push right first so that the left subtree is drawn first
        stack.append((v[cut:], c[cut:], x, b, right, first + mid + 1))
        stack.append((v[:cut], c[:cut], a, x, left, first))
    return out


def recursive_law_tree(vals: np.ndarray, cnt: np.ndarray, qs: list, a: float, b: float, eps0: float):
    """The structure the exact audit walks: (p, lo, hi, probs, children(x) -> (left, right) args)."""
    from ._single import single_probabilities
    mid = len(qs) // 2
    p = qs[mid]
    lo_, hi_, pr = single_probabilities(vals, cnt, a, b, p, eps0)

    def children(x: float):
        cut = int(np.searchsorted(vals, x, side="right"))
        left = [t / p for t in qs[:mid]] if mid else []
        right = [(t - p) / (1 - p) for t in qs[mid + 1:]]
        return (vals[:cut], cnt[:cut], left, a, x), (vals[cut:], cnt[cut:], right, x, b)

    return lo_, hi_, pr, children
