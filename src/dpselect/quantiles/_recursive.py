"""method="recursive": the approximate quantiles of Kaplan, Schnapp & Stemmer (ICML 2022), replace-one budget,
with anchored targets on the outer chains.

Algorithm (on the distinct sorted targets q_1 < ... < q_m and a domain [a, b]): take the middle target
p = q_(⌊m/2⌋+1), release v by the single-quantile interval mechanism (:mod:`._single`) for a target rank of p
on the records of the current subproblem at ε0; then recurse on the records <= v (domain [a, v], the targets
below p) and on the records > v (domain [v, b], the targets above p). The split uses the *released* float v,
so each subproblem is a function of released values and its own records only. The recursion tree has
L = ⌈log2(m + 1)⌉ levels.

Targets. A subproblem S lies between two released values (or a bound) whose global quantiles are pa < pb
(0 for lo, 1 for hi); it holds n_S records, n is public. Its target rank for a global q in (pa, pb), on the
half-integer grid (T/2 with T an integer computed exactly from Fractions):

* leftmost (its lower end is lo: the left child of the left child ... of the root): S holds exactly the
  n_S smallest records, so a point's rank inside S is its global rank; the target is the *absolute*
  T = round(2·q·n), as for a single quantile;
* rightmost (its upper end is hi): S holds exactly the n_S largest records, a point's global rank is
  n − n_S + its rank in S; the target is T = 2·n_S − (2n − round(2·q·n));
* middle: the paper's relative target T = round(2·n_S·(q − pa)/(pb − pa)).

Why: the relative target assumes the ends sit exactly at ranks pa·n and pb·n. On data with atoms (every
value of a histogram is one) a released value cannot, and the child's target inherits the parent's rank
error e: a rank error of e at the middle release becomes an error of e·q/p in the left half's target,
which does not vanish as ε grows (measured in docs/quantiles.md). The anchored targets of the outer chains
inherit nothing; a middle subproblem's target error is (1 − λ)·e_a + λ·e_b, λ = (q − pa)/(pb − pa), the
ends' rank errors (no better target is known that is a function of S's records and public values only:
the global rank of a point of S also counts the records below S, which live in other subproblems).

Privacy (replace-one neighbours, n public; derived here and checked by an exact audit in
tests/test_quantiles.py). Given the outputs released so far, the subproblems of one level are run on
disjoint sets of records. A subproblem's release is ε0-bounded-range (interval mechanism with a rank
utility of sensitivity 1) both when one of its records is replaced (n_S fixed: ranks move by <= 1, every
target above is fixed) and when a record is added or removed (n fixed, as it is under replace-one):
ranks inside S move by 0 or 1 in one direction, and the target moves with them or not at all —
leftmost: T does not depend on S (|Δu| <= 1); rightmost: T/2 moves by exactly ±1 with n_S, so
rank_S − T/2 = −#{x in S above the point} + const moves by 0 or 1; middle: T/2 moves by
round(2λ(n_S ± 1))/2 − round(2λn_S)/2 ∈ [0, 1] in the ranks' direction (λ <= 1). Replacing record x by y:
at the root both are in the one subproblem (one ε0-BR release); at every deeper level x and y lie in at
most two subproblems (x removed from one, y added to another), so that level is at most two ε0-BR releases
on the pair. The whole is an adaptive composition of 2L − 1 ε0-bounded-range mechanisms: with
ε0 = ε/(2L − 1) it is ε-DP, and ``AdaptiveBoundedRangeComposition(ε0, 2L − 1)`` under (ε, δ).
(Kaplan et al. spend ε/L per level, which is the add/remove-one budget: one subproblem per level; under
replace-one this proof only gives (2L − 1)·ε/L for it. A random search over pairs of up to 14 records on
{0..9}, m = 3, ε0 up to 60, with the relative targets, found losses up to L·ε0 = 2·ε0 but never above, so
their budget may hold here too; it is not claimed without a proof.) Cost: O(m) interval draws on
subproblems whose sizes sum to <= k + m per level.

On a public grid (``candidates=``, :func:`recursive_grid_quantiles`) the recursion is the same (same anchored
targets, same ε0 = ε/(2L − 1), same pre-order draw order); only the single release and the domain change. A
subproblem carries a contiguous range of candidate indices [i, k]; the release is the grid release of
:mod:`._grid` on those candidates, and after it releases c_j the records <= c_j go left with candidates
[i, j] and the records > c_j go right with candidates [j, k] (the outputs are non-decreasing in q; consecutive
ones may be equal, on an atom). A subproblem whose lower end is a released candidate gives that candidate
the open window (−∞, 0] (:mod:`._grid`: the records equal to it went left). The privacy argument above holds
word for word: the split is by a released value, so given the releases the subproblems of a level hold
disjoint records and each is a function of released values and its own records; the grid release has
sensitivity 1 for a replaced record of S (T fixed) and for an added or removed one with each of the three
target kinds (T/2 moves by δ ∈ [0, 1] in the ranks' direction; the open window depends on T alone), so it is
ε0-bounded-range in both cases, and the whole is the same adaptive composition of 2L − 1 ε0-BR releases
(exact audit in tests/test_quantiles_grid.py).

Add/remove-one neighbours (``neighbours="add_remove"`` of :func:`dpselect.quantiles`; n private, the model of
Kaplan et al. and of OpenDP's ``symmetric_distance`` at d_in = 1). Every subproblem then gets the paper's
*relative* target T = round(2·n_S·(q − pa)/(pb − pa)) (``anchored=False``; the root's is round(2·q·n)), which
reads only the subproblem's own size n_S and the public q's, never n; ε0 = ε/L per release, L = depth(m), and
the guarantee is ``AdaptiveBoundedRangeComposition(ε/L, L)`` (:func:`recursive_privacy`). Proof. Let D' = D
plus one record x (removing is the same pair read backwards). Fix the releases drawn so far in pre-order. By
induction on the levels, given the releases above, each level's subproblems are determined by released values
(the split is by a released value) and hold disjoint records; D and D' give them the same records except the
one subproblem S whose domain contains x (the split ``x <= v`` sends x to exactly one side of every release),
where D' has one more record. So at every level exactly one release runs on different inputs, and every
other release of that level has identical inputs (and an identical target: it depends on its own n_S and the
public q's only). For S: ranks inside S move by 0 or 1 in one direction, n_S by 1, and the relative target's
T/2 by round(2λ(n_S + 1))/2 − round(2λn_S)/2 ∈ [0, 1] in the same direction (λ = (q − pa)/(pb − pa) ∈ (0, 1]),
so |Δu| <= 1 (the middle-target argument above; interval mechanism and grid window, and the grid's open lower
end depends on T alone): that release is ε0-bounded-range on the pair. Conditioned on the releases above,
a level is therefore one ε0-BR release on the pair and the others identical; the whole is an adaptive
composition of L ε0-BR releases, ε-DP at ε0 = ε/L. The anchored targets are not used here: the leftmost one
reads n, which is private under add/remove. Exact audits (interval and grid at m = 3, grid at m = 7,
L = 3) in tests/test_quantiles_addrem.py.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..accounting.composition import AdaptiveBoundedRangeComposition
from ..accounting.guarantees import Guarantee
from ._budget import split_epsilon
from ._grid import grid_release
from ._single import single_rank, target_twice

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


def recursive_releases(m: int, add_remove: bool = False) -> int:
    """The number of ε0-BR releases one neighbouring pair can touch: 2L − 1 under replace-one, L under
    add/remove (one subproblem per level)."""
    return depth(m) if add_remove else recursive_slots(m)


def recursive_privacy(epsilon: float, m: int, add_remove: bool = False) -> Guarantee:
    """The guarantee of the recursive release of m quantiles at total ε (adaptive BR composition):
    ε/(2L − 1) on 2L − 1 releases (replace-one), ε/L on L (``add_remove``, relative targets)."""
    k = recursive_releases(m, add_remove)
    return AdaptiveBoundedRangeComposition(split_epsilon(epsilon, k), k)


def subproblem_target(q: Fraction, pa: Fraction, pb: Fraction, n: int, n_s: int, leftmost: bool,
                      rightmost: bool) -> int:
    """2·(the target rank of global quantile q inside a subproblem), an exact integer.

    ``pa < q < pb``: the global quantiles released at the subproblem's ends (0 and 1 for the bounds); ``n``
    the public number of records, ``n_s`` the subproblem's own. Leftmost (lower end = the domain's): the
    absolute T = round(2·q·n). Rightmost: 2·n_s − (2n − round(2·q·n)). Middle: round(2·n_s·(q − pa)/(pb − pa)).
    """
    if leftmost:
        return target_twice(q, n)
    if rightmost:
        return 2 * n_s - (2 * n - target_twice(q, n))
    return target_twice((q - pa) / (pb - pa), n_s)


#: The recursion's single release: (records, counts, domain, T, ε0, generator) -> (released value, the domain
#: of the records <= it, the domain of the records > it). The interval mechanism's domain is (a, b); the grid's
#: is (candidates, first index, last index, open lower end) (:func:`._grid.grid_release`).
Release = Callable[[np.ndarray, np.ndarray, Any, int, float, np.random.Generator], "tuple[float, Any, Any]"]


def interval_release(vals: np.ndarray, cnt: np.ndarray, dom: tuple[float, float], T: int, eps: float,
                     gen: np.random.Generator) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """The interval mechanism on [a, b] = ``dom``; the children get [a, v] and [v, b]."""
    a, b = dom
    x = single_rank(vals, cnt, a, b, T, eps, gen)
    return x, (a, x), (x, b)


def recursive_release(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, domain: Any,
                      release: Release, gen: np.random.Generator, eps0: float | None = None,
                      anchored: bool = True) -> np.ndarray:
    """The recursion with a pluggable single release (see the module): one value per entry of ``qs``
    (distinct, sorted), drawn in pre-order (middle, left subtree, right subtree)."""
    m = len(qs)
    e0 = split_epsilon(epsilon, recursive_slots(m)) if eps0 is None else float(eps0)
    out = np.empty(m, dtype=np.float64)
    n = int(cnt.sum())
    targets = [Fraction(float(q)) for q in qs]
    zero, one = Fraction(0), Fraction(1)
    # explicit stack, pre-order (middle, left subtree, right subtree): the draw order is fixed. A subproblem:
    # its records, its domain, the global quantiles pa < pb released at its ends, whether its lower
    # (upper) end is the domain's, its global targets and the index of the first.
    stack = [(vals, cnt, domain, zero, one, True, True, targets, 0)]
    while stack:
        v, c, dom, pa, pb, left_end, right_end, ts, first = stack.pop()
        if not ts:
            continue
        mid = len(ts) // 2
        p = ts[mid]
        n_s = int(c.sum()) if c.size else 0
        if anchored:
            T = subproblem_target(p, pa, pb, n, n_s, left_end, right_end)
        else:
            T = target_twice((p - pa) / (pb - pa), n_s)
        x, dom_left, dom_right = release(v, c, dom, T, e0, gen)
        out[first + mid] = x
        cut = int(np.searchsorted(v, x, side="right"))       # records <= x go left
        # push right first so that the left subtree is drawn first
        stack.append((v[cut:], c[cut:], dom_right, p, pb, False, right_end, ts[mid + 1:], first + mid + 1))
        stack.append((v[:cut], c[:cut], dom_left, pa, p, left_end, False, ts[:mid], first))
    return out


def _add_remove_eps0(epsilon: float, m: int, eps0: float | None) -> float:
    return split_epsilon(epsilon, depth(m)) if eps0 is None else float(eps0)


def recursive_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float,
                        hi: float, gen: np.random.Generator, eps0: float | None = None,
                        anchored: bool = True, add_remove: bool = False) -> np.ndarray:
    """One value per entry of ``qs`` (distinct, sorted); ``eps0`` overrides the per-release ε and
    ``anchored=False`` gives every subproblem the relative target (the paper's; tests and measurements only).
    ``add_remove``: the add/remove-one release (relative targets, ε/L per release; see the module)."""
    if add_remove:
        eps0, anchored = _add_remove_eps0(epsilon, len(qs), eps0), False
    return recursive_release(vals, cnt, qs, epsilon=epsilon, domain=(lo, hi), release=interval_release, gen=gen,
                             eps0=eps0, anchored=anchored)


def recursive_grid_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float,
                             cands: np.ndarray, gen: np.random.Generator, eps0: float | None = None,
                             utility: str = "window", anchored: bool = True,
                             add_remove: bool = False) -> np.ndarray:
    """One candidate per entry of ``qs`` (distinct, sorted): the recursion with the grid release
    (:func:`._grid.grid_release`, ``utility`` one of :data:`._grid.UTILITIES`); outputs are non-decreasing
    (consecutive ones may be equal). ``anchored`` and ``add_remove`` as in :func:`recursive_quantiles`."""
    if add_remove:
        eps0, anchored = _add_remove_eps0(epsilon, len(qs), eps0), False
    return recursive_release(vals, cnt, qs, epsilon=epsilon,
                             domain=(cands, 0, int(cands.size) - 1, False, utility), release=grid_release,
                             gen=gen, eps0=eps0, anchored=anchored)
