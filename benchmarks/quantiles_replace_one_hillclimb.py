"""Issue 26: a hill-climb for the worst replace-one loss of the recursive quantile release at the paper's
per-level budget ε0 = ε/L (uniform, m = 3, L = 2), anchored targets (dpselect's replace-one default) and
the paper's relative targets on the half-integer grid.

Continuous data: 10 records in (0, 1) given by the log-widths of their gaps, one replaced record (x -> y,
both among the gap ends), bounds (0, 1); the loss of a configuration is the worst |log density ratio| of the
whole output (the root's value over every cell of the records' union, each child maximised separately given
it). Random restarts, Gaussian moves on one log-width, occasional moves of the pair. Prints worst / (L·ε0):
above 1 refutes ε/L per level under replace-one; 1.5 = (2L − 1)/L is the proven bound's ceiling.

Found on 2026-11-28 (seed 1; about 3 minutes on one core): anchored 1.500 at qs = (0.25, 0.5, 0.75) and
(0.1, 0.5, 0.9) for ε0 = 0.05 and 1 (1.000 at (0.05, 0.5, 0.95), where the climb stalled); relative
(half-integer) 1.000 at (0.25, 0.5, 0.75) (μ = 1/2 there), 1.50 at (0.1, 0.5, 0.9), 1.25 at (0.05, 0.5,
0.95). The explicit counterexample behind the 1.5 is a test (tests/test_quantiles_relative.py); the
small-universe search of ``quantiles_replace_one_budget_search.py`` cannot reach it (its gaps are integers).
Run: ``PYTHONPATH=src python3 benchmarks/quantiles_replace_one_hillclimb.py [seed]``.

``--shipped``: the same attack on what dpselect ships with ``targets="relative"`` (ε/L at the root, ε/(2L·μ)
below under replace-one; ε/(L·μ) under add/remove), loss / ε over ε ∈ {0.1, 2, 20}. Found on 2026-11-28
(seed 3): replace-one 1.0000 at qs = (0.25, 0.5, 0.75) (0.999999992 at ε = 2 with seed 5: the bound is
approached, never passed), 0.85-0.91 at (0.1, 0.5, 0.9).
"""
import sys
from fractions import Fraction

import numpy as np

from dpselect.quantiles._recursive import node_plan, subproblem_target
from dpselect.quantiles._single import rank_probabilities, target_twice


def ld(vals, a, b, T, eps0, pts):
    vals = np.asarray(sorted(vals), float)
    u, c = np.unique(vals, return_counts=True)
    lo, hi, p = rank_probabilities(u, c.astype(np.int64), a, b, T, eps0)
    j = np.clip(np.searchsorted(lo, pts, side="right") - 1, 0, lo.size - 1)
    return np.log(p[j]) - np.log(hi[j] - lo[j])

def tgt(q, pa, pb, n, ns, le, re, anchored):
    if anchored: return subproblem_target(q, pa, pb, n, ns, le, re)
    return target_twice((q - pa) / (pb - pa), ns)

def worst(D, Dp, qs, eps0, anchored):
    n = len(D); q0, p, q2 = qs
    bps = np.unique(np.concatenate([D, Dp, [0.0, 1.0]]))
    mids = (bps[:-1] + bps[1:]) / 2
    root = ld(D, 0, 1, tgt(p, 0, 1, n, n, True, True, anchored), eps0, mids) - ld(Dp, 0, 1, tgt(p, 0, 1, n, n, True, True, anchored), eps0, mids)
    best = -np.inf; bestneg = np.inf
    for r, lr in zip(mids, root):
        tot = lr; totn = lr
        for side in (0, 1):
            if side == 0:
                A = [d for d in D if d <= r]; B = [d for d in Dp if d <= r]
                pts = mids[mids < r]; a, b = 0.0, r
                TA = tgt(q0, 0, p, n, len(A), True, False, anchored); TB = tgt(q0, 0, p, n, len(B), True, False, anchored)
            else:
                A = [d for d in D if d > r]; B = [d for d in Dp if d > r]
                pts = mids[mids > r]; a, b = r, 1.0
                TA = tgt(q2, p, 1, n, len(A), False, True, anchored); TB = tgt(q2, p, 1, n, len(B), False, True, anchored)
            if pts.size == 0: continue
            d = ld(A, a, b, TA, eps0, pts) - ld(B, a, b, TB, eps0, pts)
            tot += d.max(); totn += d.min()
        best = max(best, tot); bestneg = min(bestneg, totn)
    return max(best, -bestneg)

def config(logw, xi, yi):
    w = np.exp(logw); pos = np.cumsum(w) / w.sum()   # n+1 gaps -> n points in (0,1)
    pts = pos[:-1]
    D = np.sort(pts[np.arange(len(pts)) != yi])
    Dp = np.sort(pts[np.arange(len(pts)) != xi])
    return D, Dp


def _ld_plan(vals, a, b, T, scale, eps, pts):
    vals = np.asarray(sorted(vals), float)
    u, c = np.unique(vals, return_counts=True)
    lo, hi, p = rank_probabilities(u, c.astype(np.int64), a, b, T, eps, scale)
    j = np.clip(np.searchsorted(lo, pts, side="right") - 1, 0, lo.size - 1)
    return np.log(p[j]) - np.log(hi[j] - lo[j])

def worst_shipped(D, Dp, qs, eps, ar):
    q0, p, q2 = qs
    kw = dict(epsilon=eps, m=3, targets="relative", add_remove=ar)
    bps = np.unique(np.concatenate([D, Dp, [0.0, 1.0]]))
    mids = (bps[:-1] + bps[1:]) / 2
    nD, nP = len(D), len(Dp)
    T1, s1, e1 = node_plan(p, Fraction(0), Fraction(1), nD, nD, True, True, **kw)
    T2, s2, e2 = node_plan(p, Fraction(0), Fraction(1), nP, nP, True, True, **kw)
    assert e1 == e2
    root = _ld_plan(D, 0, 1, T1, s1, e1, mids) - _ld_plan(Dp, 0, 1, T2, s2, e2, mids)
    hi_, lo_ = -np.inf, np.inf
    for r, lr in zip(mids, root):
        tot = totn = lr
        for side in (0, 1):
            if side == 0:
                A = [d for d in D if d <= r]; B = [d for d in Dp if d <= r]; pts = mids[mids < r]; a, b = 0.0, r
                pa, pb, q, le, re = Fraction(0), p, q0, True, False
            else:
                A = [d for d in D if d > r]; B = [d for d in Dp if d > r]; pts = mids[mids > r]; a, b = r, 1.0
                pa, pb, q, le, re = p, Fraction(1), q2, False, True
            if pts.size == 0: continue
            TA, sA, eA = node_plan(q, pa, pb, nD, len(A), le, re, **kw)
            TB, sB, eB = node_plan(q, pa, pb, nP, len(B), le, re, **kw)
            d = _ld_plan(A, a, b, TA, sA, eA, pts) - _ld_plan(B, a, b, TB, sB, eB, pts)
            tot += d.max(); totn += d.min()
        hi_ = max(hi_, tot); lo_ = min(lo_, totn)
    return max(hi_, -lo_)

def config_shipped(logw, xi, yi, ar):
    w = np.exp(logw); pts = (np.cumsum(w) / w.sum())[:-1]
    idx = np.arange(len(pts))
    if ar:  # D' = D plus pts[yi]
        D = np.sort(pts[idx != yi]); return D, np.sort(pts)
    return np.sort(pts[idx != yi]), np.sort(pts[idx != xi])


def main_shipped(seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    for ar in (False, True):
        for qs in [(Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)), (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10)),
                   (Fraction(1, 5), Fraction(3, 10), Fraction(9, 10))]:
            for eps in (0.1, 2.0, 20.0):
                n, best = 10, 0.0
                for restart in range(5):
                    logw = rng.normal(0, 3, n + 2)
                    xi, yi = rng.choice(n + 1, 2, replace=False)
                    cur = worst_shipped(*config_shipped(logw, xi, yi, ar), qs, eps, ar)
                    for it in range(250):
                        lw2 = logw.copy()
                        k = rng.integers(n + 2)
                        lw2[k] += rng.normal(0, 2)
                        x2, y2 = (rng.choice(n + 1, 2, replace=False) if rng.random() < 0.1 else (xi, yi))
                        v = worst_shipped(*config_shipped(lw2, x2, y2, ar), qs, eps, ar)
                        if v >= cur:
                            cur, logw, xi, yi = v, lw2, x2, y2
                    best = max(best, cur)
                print(f"shipped relative, add_remove={ar} qs={tuple(map(float, qs))} eps={eps}: worst/eps = "
                      f"{best / eps:.6f}", flush=True)


def main(seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for anchored in (True, False):
        for qs in [(Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)), (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10)),
                   (Fraction(1, 20), Fraction(1, 2), Fraction(19, 20))]:
            for eps0 in (0.05, 1.0):
                n = 10
                best = 0.0
                for restart in range(6):
                    logw = rng.normal(0, 3, n + 2)
                    xi, yi = rng.choice(n + 1, 2, replace=False)
                    cur = worst(*config(logw, xi, yi), qs, eps0, anchored)
                    for it in range(300):
                        lw2 = logw.copy()
                        k = rng.integers(n + 2)
                        lw2[k] += rng.normal(0, 2)
                        x2, y2 = xi, yi
                        if rng.random() < 0.1:
                            x2, y2 = rng.choice(n + 1, 2, replace=False)
                        v = worst(*config(lw2, x2, y2), qs, eps0, anchored)
                        if v >= cur:
                            cur, logw, xi, yi = v, lw2, x2, y2
                    best = max(best, cur)
                print(f"anchored={anchored} qs={tuple(map(float, qs))} eps0={eps0}: worst/(L eps0) = "
                      f"{best / (2 * eps0):.4f}", flush=True)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--shipped"]
    if "--shipped" in sys.argv:
        main_shipped(int(args[0]) if args else 3)
    else:
        main(int(args[0]) if args else 1)
