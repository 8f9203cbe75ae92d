"""One quantile on a public candidate grid (``candidates=``): the discrete, atom-aware release.

The database is given grouped, as in :mod:`._single`: distinct sorted values ``vals`` with multiplicities
``cnt`` (int64); records may lie anywhere (outside the grid too). The candidates c_0 < ... < c_(K−1) are
public, finite floats. For candidate c let

    A(c) = #{x < c},        B(c) = #{x <= c},

so c is a q-quantile of the data (the standard definition with ties: at most q·n records below it and at
least q·n at or below it) exactly when T/2 lies in the window [A(c), B(c)], with T the exact half-integer
target of :mod:`._single` (``target_twice``; the recursive method's ``subproblem_target``). The utility is
the distance of the target to the window,

    u(c) = −dist(T/2, [A(c), B(c)]) = −max(0, A(c) − T/2, T/2 − B(c)),

an exact half-integer in float64 (n <= 2^52), 0 exactly on the valid quantiles. A candidate that sits on an
atom (a value held by many records) has a wide window and is optimal for every q inside the atom; the
interval mechanism's utility −|#{x <= v} − T/2| sees only the window's upper end, which is why it leaves
mass on long empty intervals of a sparse tail (docs/quantiles.md). Candidate c is drawn with probability
∝ exp(ε·u(c)/2) by the registry's exact exponential mechanism (the same path as the interval mechanism's
discrete draw, without the length base measure): random bits only, the half-integer utilities and ε read as
exact rationals.

Sensitivity 1. Replace one record (n and T fixed): A(c) and B(c) each move by at most 1, and the distance of
a fixed point to an interval is 1-Lipschitz in the interval's ends (sup norm), so |Δu(c)| <= 1. Add or remove
one record with the target moving by δ ∈ [0, 1] in the same direction (the recursive method's subproblems:
:mod:`._recursive`; adding: A' − A, B' − B ∈ {0, 1} and T'/2 − T/2 = δ ∈ [0, 1]): A − T/2 and T/2 − B each
move by a value in [−1, 1] and so does their maximum with 0; removing is the reverse. Hence every release is
ε-bounded-range under replace-one neighbours (n public), and ε0-bounded-range as a subproblem of the
recursion under both kinds of change (checked exhaustively in tests/test_quantiles_grid.py).

Open lower end (the recursion only). In the recursive method a subproblem whose lower end is a released
candidate c_j (not the domain's lower end) holds only the records > c_j: the records equal to c_j went to
the left sibling. For its own first candidate c_j the subproblem knows B = 0 (no record of it is <= c_j)
but not how many records sit below c_j, so its window is taken as (−∞, 0]: u(c_j) = −max(0, T/2). This is
the exact utility of c_j whenever the target lies at or above the records below the subproblem, and it keeps
the atom: a target that falls inside the atom at c_j (T/2 <= 0 in the subproblem's ranks) stays at c_j
with the best utility instead of moving to the next candidate. It is a function of T alone, so it moves by
at most δ <= 1 when a record is added or removed and not at all when one is replaced: sensitivity 1 still.
The other candidates c > c_j have their exact windows (every record of the subproblem is > c_j).

An alternative utility, internal and not the default (``utility="cell"`` of the functions below; measured in
docs/quantiles.md): the *cell* of c under the rank metric rank(v) = #{x <= v}, the target ranks for which
B(c) is the nearest of the candidates' ranks,

    u_cell(c) = −dist(T/2, [(B(c⁻) + B(c))/2, (B(c) + B(c⁺))/2]),

c⁻ and c⁺ the neighbouring candidates, the first candidate's lower end −∞ and the last one's upper end +∞
(in a recursion subproblem: its own first and last candidates; the open lower end above is then automatic).
u_cell(c) = 0 exactly when T/2 lies in c's cell; every target lies in one, and then |B(c) − T/2| is the
smallest over the candidates (of a run of candidates with equal B, e.g. empty bins, the outer ones take the
targets beyond the run). Each end is a fixed ±∞ or the
mean of two counts B that move by at most 1 (replace one record) or by 0 or 1 in the target's direction
(add or remove one, the end moves by 0, 1/2 or 1), so the same argument gives sensitivity 1 (checked
exhaustively in the tests). It keeps the window's gain where an atom sits at an end of the data and follows
the metric on interior atoms, where the window calls every candidate of the atom exact.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..registry import get_mechanism
from ._single import target_twice

__all__: list[str] = []

#: The registry mechanism of the candidate draw (the interval mechanism's, without a base measure).
MECHANISM = "exponential"


def window_utility(vals: np.ndarray, cnt: np.ndarray, cands: np.ndarray, T: int,
                   open_low: bool = False, scale: int = 2) -> np.ndarray:
    """u(c) = −max(0, A(c) − T/2, T/2 − B(c)) for every candidate (float64, exact half-integers).

    ``open_low``: the first candidate's window is (−∞, B] (the recursion's subproblems whose lower end is a
    released candidate, see the module). The target is T/scale (``scale`` a power of two, 2 by default: the
    half-integer grid; the recursion's relative targets use 16)."""
    cum = np.concatenate(([0], np.cumsum(cnt, dtype=np.int64))).astype(np.int64)
    a = scale * cum[np.searchsorted(vals, cands, side="left")]       # scale·#{x < c}
    b = scale * cum[np.searchsorted(vals, cands, side="right")]      # scale·#{x <= c}
    T = int(T)
    twice = np.maximum(np.maximum(a - T, T - b), 0)
    if open_low and twice.size:
        twice[0] = max(0, T - int(b[0]))
    return -twice.astype(np.float64) / float(scale)      # |scale·rank − T| < 2^53: exact


def cell_utility(vals: np.ndarray, cnt: np.ndarray, cands: np.ndarray, T: int,
                 open_low: bool = False, scale: int = 2) -> np.ndarray:
    """u_cell(c) = −dist(T/2, [(B(c⁻) + B(c))/2, (B(c) + B(c⁺))/2]) (outer ends ±∞; see the module).

    ``open_low`` is accepted for the recursion and changes nothing: the first candidate's lower end is always
    open."""
    cum = np.concatenate(([0], np.cumsum(cnt, dtype=np.int64))).astype(np.int64)
    b = cum[np.searchsorted(vals, cands, side="right")]              # B(c)
    mids = (b[:-1] + b[1:]) * (scale // 2)                           # scale·(the cells' inner ends)
    T = int(T)
    twice = np.zeros(b.size, dtype=np.int64)
    twice[1:] = np.maximum(twice[1:], mids - T)                      # below the lower end
    twice[:-1] = np.maximum(twice[:-1], T - mids)                    # above the upper end
    return -twice.astype(np.float64) / float(scale)


#: The grid utilities by name: "window" (the default: 0 on the valid quantiles) and "cell" (0 on the candidates
#: whose rank #{x <= c} is the nearest to the target).
UTILITIES = {"window": window_utility, "cell": cell_utility}
#: The utility of ``dpselect.quantiles(..., candidates=...)`` (the public API passes it down).
DEFAULT_UTILITY = "window"


def grid_rank(vals: np.ndarray, cnt: np.ndarray, cands: np.ndarray, T: int, eps: float,
              gen: np.random.Generator, open_low: bool = False, utility: str = "window", scale: int = 2) -> int:
    """The index (into ``cands``) of one exact draw ∝ exp(ε·u(c)/2) for the target rank T/scale."""
    if cands.size == 1:
        return 0
    u = UTILITIES[utility](vals, cnt, cands, T, open_low, scale)
    return int(get_mechanism(MECHANISM).select(u, epsilon=eps, sensitivity=1.0, rng=gen))


def grid_quantile(vals: np.ndarray, cnt: np.ndarray, cands: np.ndarray, q: Fraction | float, eps: float,
                  gen: np.random.Generator, utility: str = "window") -> float:
    """One draw of the grid release for quantile ``q``: a value of ``cands``."""
    n = int(cnt.sum()) if cnt.size else 0
    return float(cands[grid_rank(vals, cnt, cands, target_twice(q, n), eps, gen, utility=utility)])


def grid_probabilities(vals: np.ndarray, cnt: np.ndarray, cands: np.ndarray, T: int, eps: float,
                       open_low: bool = False, utility: str = "window", scale: int = 2) -> np.ndarray:
    """The exact law of :func:`grid_rank` (float64 probabilities, one per candidate, log-space normalised)."""
    logw = eps * UTILITIES[utility](vals, cnt, cands, T, open_low, scale) / 2.0
    logw -= logw.max()
    p = np.exp(logw)
    return p / p.sum()


def grid_release(vals: np.ndarray, cnt: np.ndarray, dom: tuple, T: int, eps: float,
                 gen: np.random.Generator, scale: int = 2) -> tuple[float, tuple, tuple]:
    """The recursion's single release on a grid (see :func:`._recursive.recursive_release`).

    ``dom = (cands, i, k, open_low, utility)``: the subproblem's candidates are ``cands[i..k]`` (inclusive).
    Returns the released candidate c_j and the children's domains: (cands, i, j, open_low, utility) for the
    records <= c_j and (cands, j, k, True, utility) for the records > c_j (whose lower end is now a released
    candidate)."""
    cands, i, k, open_low, utility = dom
    j = i + grid_rank(vals, cnt, cands[i:k + 1], T, eps, gen, open_low, utility, scale)
    return (float(cands[j]), *grid_children(dom, j))


def grid_children(dom: tuple, j: int) -> tuple[tuple, tuple]:
    """The children's domains after candidate ``j`` of ``dom`` is released (the sampler and the exact law of
    :func:`._recursive.recursive_log_law` share it)."""
    cands, i, k, open_low, utility = dom
    return (cands, i, j, open_low, utility), (cands, j, k, True, utility)
