"""method="recursive": the approximate quantiles of Kaplan, Schnapp & Stemmer (ICML 2022), with anchored
targets on the outer chains (replace-one, the default) or relative targets at a per-subproblem budget.

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
(Kaplan et al. spend ε/L per level, the add/remove-one budget: one subproblem per level. With these
anchored targets it is *not* replace-one ε-DP: tests/test_quantiles_relative.py has a pair of 8 records,
m = 3, on which the output density ratio is e^(ε0 + 2·log((e^ε0 + 1)/2)) > e^(2ε0) for every ε0 > 0 (about
e^(3ε0) for large ε0): three tiny gaps at the target ranks 2, 4, 6 with wide runs just above them, the
replaced record below the first and its replacement above the last, so that all three releases lose about
ε0 at once. A hill-climb over such configurations reaches 1.5·L·ε0 = (2L − 1)·ε0: the 2L − 1 above is
tight for this recursion.) Cost: O(m) interval draws on
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

Relative targets (``targets="relative"``; the default and the only choice under ``neighbours="add_remove"``).
Every subproblem S gets its own share of its records, T/16 = round(16·λ·n_S)/16 with λ = (q − pa)/(pb − pa)
(the root: λ = q), on a 1/16 grid (:data:`RELATIVE_SCALE`): a function of n_S and the public q's only, never
of n. Its sensitivity to adding or removing one record of S is

    μ(λ) = max(δ, 1 − δ) over δ ∈ {⌊16λ⌋/16, ⌈16λ⌉/16}        (:func:`node_sensitivity`; 1/2 for λ = 1/2)

because the target moves by δ and a rank by s ∈ {0, 1}, both in the same direction, and |s − δ| <=
max(δ, 1 − δ) (interval utility, grid window and its open lower end alike). So S's release at ε_j has
log-ratios in an interval of width ε_j·μ: it is (ε_j·μ)-bounded-range. (On the half-integer grid δ can be 0
or 1 for λ ≠ 1/2, and then μ = 1: hence the finer grid; 16·n <= 2^53 keeps the utilities exact.) Replacing
one record inside S (n_S and T fixed) moves its utility by at most 1: ε_j-BR.

* Add/remove (D' = D plus x). Given the releases so far only the one subproblem of each level whose domain
  holds x differs (below); with ε_j = ε/(L·μ_j) (:func:`scaled_epsilon`: exact rationals, rounded down) it
  is (ε/L)-BR and the others are identical: an adaptive composition of L (ε/L)-BR levels,
  ``AdaptiveBoundedRangeComposition(ε/L, L)``.
* Replace-one (x replaced by y, n public). The root holds both: T fixed, ε_root-BR with ε_root = ε/L. Below
  it, x leaves one subproblem A and y joins one subproblem B of each level; the subproblems strictly between
  them keep their records and n_S, hence their targets (the outer chains' anchored targets cannot be used at
  this budget). With ε_j = ε/(2L·μ_j), A and B are each (ε/(2L))-BR; given the level above they are drawn
  independently on disjoint records, so the level's log-ratio is a sum of two terms, each in an interval of
  width ε/(2L): (ε/L)-BR. If A = B the record is replaced inside one subproblem: ε_j-BR, ε_j <= ε/L
  (μ_j >= 1/2). Every level is one (ε/L)-BR step: ``AdaptiveBoundedRangeComposition(ε/L, L)``, ε-DP. A
  subproblem's median gets ε/L, the paper's budget, where the anchored targets give every release
  ε/(2L − 1). The price: the relative targets inherit a release's rank error on atoms (above).

Both are checked by exact audits of the whole output law (interval m = 3, grid m = 3 and m = 7, every
replace-one and add/remove pair of a tiny universe: tests/test_quantiles_relative.py), which compute the law
by the same walk and the same :func:`node_plan` as the sampler (:func:`recursive_log_law`).

Add/remove, the subproblems. Let D' = D plus one record x (removing is the same pair read backwards). Fix the
releases drawn so far in pre-order. By induction on the levels, given the releases above, each level's
subproblems are determined by released values (the split is by a released value) and hold disjoint records;
D and D' give them the same records except the one subproblem S whose domain contains x (the split
``x <= v`` sends x to exactly one side of every release), where D' has one more record; every other release
of that level has identical inputs and an identical target (its own n_S and the public q's). The anchored
targets are not used under add/remove: the leftmost one reads n, which is private there.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..accounting.composition import AdaptiveBoundedRangeComposition
from ..accounting.guarantees import Guarantee
from ._budget import split_epsilon
from ._grid import grid_children, grid_probabilities, grid_release
from ._single import rank_probabilities, single_rank, target_twice

__all__: list[str] = []


#: The target grid of the relative targets: T/16, so that a subproblem's target moves by nearly λ (not by 0,
#: 1/2 or 1 as on the half-integer grid) when a record is added or removed, and its sensitivity is nearly
#: max(λ, 1 − λ) (:func:`node_sensitivity`). A power of two: the utilities stay exact in float64.
RELATIVE_SCALE = 16
#: The accepted values of ``targets=`` (see the module).
TARGETS = ("anchored", "relative", "hybrid")


def depth(m: int) -> int:
    """The number of levels of the recursion on m targets (the middle one, then ⌊m/2⌋ and m − ⌊m/2⌋ − 1)."""
    d = 0
    while m > 0:
        m, d = m // 2, d + 1
    return d


def recursive_slots(m: int) -> int:
    """2L − 1: the number of ε0-BR releases a replaced record can touch (anchored targets)."""
    return 2 * depth(m) - 1


def resolve_targets(targets: str | None, add_remove: bool) -> str:
    """``targets=None``: anchored under replace-one, relative under add/remove (anchored reads n)."""
    if targets is None:
        return "relative" if add_remove else "anchored"
    if targets not in TARGETS:
        raise ValueError(f"targets must be one of {', '.join(map(repr, TARGETS))} or None, got {targets!r}")
    if add_remove and targets in ("anchored", "hybrid"):
        raise ValueError(f"targets={targets!r} is not available with neighbours='add_remove': the anchored targets "
                         "read n, which is private there; use targets='relative' (the default under add/remove)")
    return targets


@functools.lru_cache(maxsize=256)
def _level_epsilon(epsilon: float, m: int, add_remove: bool) -> float:
    """The BR parameter of one level with relative targets: ε/L (rounded down so that L of them fit in ε)."""
    return split_epsilon(epsilon, depth(m))


def recursive_privacy(epsilon: float, m: int, add_remove: bool = False, targets: str | None = None) -> Guarantee:
    """The guarantee of the recursive release of m quantiles at total ε (adaptive BR composition):
    anchored targets (replace-one only): ε/(2L − 1) on 2L − 1 releases; relative targets: one ε/L-BR level
    per level, L of them, under either neighbour model; hybrid targets (replace-one only): one ε/L-BR level
    per level (see the module)."""
    t = resolve_targets(targets, add_remove)
    if t == "anchored":
        k = recursive_slots(m)
        return AdaptiveBoundedRangeComposition(split_epsilon(epsilon, k), k)
    return AdaptiveBoundedRangeComposition(_level_epsilon(epsilon, m, add_remove), depth(m))


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


def node_sensitivity(lam: Fraction, scale: int = RELATIVE_SCALE) -> Fraction:
    """μ(λ): the sensitivity of a subproblem's rank utility with the relative target round(scale·λ·n_S)/scale
    when one record is added to or removed from it, an exact rational in [1/2, 1].

    The target moves by δ = d/scale, d ∈ {⌊scale·λ⌋, ⌈scale·λ⌉}, in the ranks' direction; a rank moves by
    s ∈ {0, 1}; so |Δu| <= |s − δ| <= max(δ, 1 − δ). For λ = 1/2 (a median of its subproblem) μ = 1/2.

    >>> node_sensitivity(Fraction(1, 2)), node_sensitivity(Fraction(3, 5)), node_sensitivity(Fraction(1, 10))
    (Fraction(1, 2), Fraction(5, 8), Fraction(15, 16))
    """
    x = lam * scale
    d = max(max(k, scale - k) for k in (math.floor(x), math.ceil(x)))
    return Fraction(d, scale)


@functools.lru_cache(maxsize=1024)
def scaled_epsilon(c: float, mu: Fraction) -> float:
    """The largest float e with e·μ <= c exactly (as rationals): a release at ε = e with a utility of
    sensitivity μ is c-bounded-range."""
    e = float(Fraction(c) / mu)
    while Fraction(e) * mu > Fraction(c):
        e = math.nextafter(e, 0.0)
    return e


def node_plan(p: Fraction, pa: Fraction, pb: Fraction, n: int, n_s: int, leftmost: bool, rightmost: bool, *,
              epsilon: float, m: int, targets: str, add_remove: bool,
              eps0: float | None = None) -> tuple[int, int, float]:
    """(T, scale, ε_j) of one subproblem: its target rank T/scale and the ε of its release (see the module).

    The sampler (:func:`recursive_release`) and the exact laws of the audits read this one function."""
    if targets == "anchored":
        e = split_epsilon(epsilon, recursive_slots(m)) if eps0 is None else float(eps0)
        return subproblem_target(p, pa, pb, n, n_s, leftmost, rightmost), 2, e
    if targets == "hybrid" and (leftmost or rightmost):
        # the outer chains' anchored targets (sensitivity 1 when a record joins or leaves): ε/(2L) each below
        # the root (two subproblems per level), ε/L at the root (a record replaced inside it, T fixed)
        T = subproblem_target(p, pa, pb, n, n_s, leftmost, rightmost)
        if eps0 is not None:
            return T, 2, float(eps0)
        level = _level_epsilon(epsilon, m, add_remove)
        return T, 2, (level if leftmost and rightmost else scaled_epsilon(level / 2.0, Fraction(1)))
    lam = (p - pa) / (pb - pa)
    T = int(round(lam * RELATIVE_SCALE * n_s))
    if eps0 is not None:
        return T, RELATIVE_SCALE, float(eps0)
    level = _level_epsilon(epsilon, m, add_remove)
    if add_remove:            # one subproblem per level sees the change: ε_j·μ_j <= ε/L
        return T, RELATIVE_SCALE, scaled_epsilon(level, node_sensitivity(lam))
    if leftmost and rightmost:  # the root under replace-one: T fixed, sensitivity 1
        return T, RELATIVE_SCALE, level
    # replace-one below the root: two subproblems per level, each ε_j·μ_j <= ε/(2L)
    return T, RELATIVE_SCALE, scaled_epsilon(level / 2.0, node_sensitivity(lam))


#: The recursion's single release: (records, counts, domain, T, ε0, generator, scale) -> (released value, the
#: domain of the records <= it, the domain of the records > it); the target rank is T/scale. The interval
#: mechanism's domain is (a, b); the grid's is (candidates, first index, last index, open lower end, utility)
#: (:func:`._grid.grid_release`).
Release = Callable[..., "tuple[float, Any, Any]"]


def interval_release(vals: np.ndarray, cnt: np.ndarray, dom: tuple[float, float], T: int, eps: float,
                     gen: np.random.Generator,
                     scale: int = 2) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """The interval mechanism on [a, b] = ``dom``; the children get [a, v] and [v, b]."""
    a, b = dom
    x = single_rank(vals, cnt, a, b, T, eps, gen, scale)
    return (x, *interval_children(dom, x))


def interval_children(dom: tuple[float, float], x: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The children's domains [a, x] and [x, b] after x is released (shared with :func:`recursive_log_law`)."""
    a, b = dom
    return (a, x), (x, b)


def walk(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, domain: Any,
         step: Callable[..., "tuple[float, Any, Any]"], plan: Callable[..., "tuple[int, int, float]"]) -> None:
    """The recursion's pre-order walk (middle, left subtree, right subtree): for each subproblem,
    ``step(index, records, counts, domain, T, scale, ε_j)`` returns (its value, the left child's domain, the
    right child's domain); ``plan(p, pa, pb, n, n_s, leftmost, rightmost)`` gives (T, scale, ε_j)."""
    n = int(cnt.sum())
    targets = [Fraction(float(q)) for q in qs]
    zero, one = Fraction(0), Fraction(1)
    # explicit stack, pre-order: the draw order is fixed. A subproblem: its records, its domain, the global
    # quantiles pa < pb released at its ends, whether its lower (upper) end is the domain's, its global
    # targets and the index of the first.
    stack = [(vals, cnt, domain, zero, one, True, True, targets, 0)]
    while stack:
        v, c, dom, pa, pb, left_end, right_end, ts, first = stack.pop()
        if not ts:
            continue
        mid = len(ts) // 2
        p = ts[mid]
        n_s = int(c.sum()) if c.size else 0
        T, scale, e = plan(p, pa, pb, n, n_s, left_end, right_end)
        x, dom_left, dom_right = step(first + mid, v, c, dom, T, scale, e)
        cut = int(np.searchsorted(v, x, side="right"))       # records <= x go left
        # push right first so that the left subtree is drawn first
        stack.append((v[cut:], c[cut:], dom_right, p, pb, False, right_end, ts[mid + 1:], first + mid + 1))
        stack.append((v[:cut], c[:cut], dom_left, pa, p, left_end, False, ts[:mid], first))


def recursive_release(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, domain: Any,
                      release: Release, gen: np.random.Generator, eps0: float | None = None,
                      targets: str = "anchored", add_remove: bool = False) -> np.ndarray:
    """The recursion with a pluggable single release (see the module): one value per entry of ``qs``
    (distinct, sorted), drawn in pre-order (middle, left subtree, right subtree). ``eps0`` overrides every
    release's ε (tests and measurements only)."""
    m = len(qs)
    out = np.empty(m, dtype=np.float64)

    def plan(p, pa, pb, n, n_s, le, re):
        return node_plan(p, pa, pb, n, n_s, le, re, epsilon=epsilon, m=m, targets=targets,
                         add_remove=add_remove, eps0=eps0)

    def step(i, v, c, dom, T, scale, e):
        x, dl, dr = release(v, c, dom, T, e, gen, scale)
        out[i] = x
        return x, dl, dr

    walk(vals, cnt, qs, domain, step, plan)
    return out


def recursive_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float,
                        hi: float, gen: np.random.Generator, eps0: float | None = None,
                        anchored: bool = True, add_remove: bool = False,
                        targets: str | None = None) -> np.ndarray:
    """One value per entry of ``qs`` (distinct, sorted). ``targets`` "anchored" (replace-one only) or
    "relative"; None: anchored under replace-one, relative under ``add_remove`` (see the module).
    ``eps0`` overrides every release's ε and ``anchored=False`` (with ``targets=None``) asks for the relative
    targets (tests and measurements only)."""
    t = resolve_targets(targets if targets is not None or anchored else "relative", add_remove)
    return recursive_release(vals, cnt, qs, epsilon=epsilon, domain=(lo, hi), release=interval_release, gen=gen,
                             eps0=eps0, targets=t, add_remove=add_remove)


def recursive_grid_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float,
                             cands: np.ndarray, gen: np.random.Generator, eps0: float | None = None,
                             utility: str = "window", anchored: bool = True,
                             add_remove: bool = False, targets: str | None = None) -> np.ndarray:
    """One candidate per entry of ``qs`` (distinct, sorted): the recursion with the grid release
    (:func:`._grid.grid_release`, ``utility`` one of :data:`._grid.UTILITIES`); outputs are non-decreasing
    (consecutive ones may be equal). ``targets``, ``anchored`` and ``add_remove`` as in
    :func:`recursive_quantiles`."""
    t = resolve_targets(targets if targets is not None or anchored else "relative", add_remove)
    return recursive_release(vals, cnt, qs, epsilon=epsilon,
                             domain=(cands, 0, int(cands.size) - 1, False, utility), release=grid_release,
                             gen=gen, eps0=eps0, targets=t, add_remove=add_remove)


def recursive_log_law(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, out: np.ndarray, *, epsilon: float,
                      domain: Any, grid: bool = False, targets: str = "anchored", add_remove: bool = False,
                      eps0: float | None = None) -> float:
    """The exact log-density (interval mechanism, ``domain = (lo, hi)``) or log-probability (``grid``, domain
    as :func:`recursive_grid_quantiles` builds it) of the recursion releasing ``out`` (one value per entry of
    ``qs``, distinct and sorted), computed by the same walk and the same :func:`node_plan` as the sampler;
    −inf where ``out`` is impossible. For the exact audits."""
    m = len(qs)
    total = [0.0]

    def plan(p, pa, pb, n, n_s, le, re):
        return node_plan(p, pa, pb, n, n_s, le, re, epsilon=epsilon, m=m, targets=targets,
                         add_remove=add_remove, eps0=eps0)

    def step(i, v, c, dom, T, scale, e):
        x = float(out[i])
        if grid:
            cands, lo_i, hi_i, open_low, utility = dom
            j = int(np.searchsorted(cands, x))
            if not (lo_i <= j <= hi_i and cands[j] == x):
                total[0] = -math.inf
                j = min(max(j, lo_i), hi_i)
            elif hi_i > lo_i:
                p = grid_probabilities(v, c, cands[lo_i:hi_i + 1], T, e, open_low, utility, scale)[j - lo_i]
                total[0] += math.log(p) if p > 0 else -math.inf
            return (float(cands[j]), *grid_children(dom, j))
        a, b = dom
        if not b > a:
            if x != a:
                total[0] = -math.inf
            return (a, *interval_children(dom, a))
        if not a <= x <= b:
            total[0] = -math.inf
            x = min(max(x, a), b)
        lo, hi, p = rank_probabilities(v, c, a, b, T, e, scale)
        j = min(max(int(np.searchsorted(lo, x, side="right")) - 1, 0), lo.size - 1)
        total[0] += math.log(p[j]) - math.log(hi[j] - lo[j]) if p[j] > 0 else -math.inf
        return (x, *interval_children(dom, x))

    walk(vals, cnt, qs, domain, step, plan)
    return total[0]
