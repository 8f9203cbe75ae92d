"""The joint exponential mechanism for top-k (Gillenwater, Joseph, Muñoz & Ribero Diaz, ICML 2022), sampled
exactly: :func:`joint_top_k` and its exact law :func:`joint_probabilities`.

The mechanism
-------------
With the utilities sorted in decreasing order, c_(1) >= ... >= c_(d) (ties in any order: only the values
matter), an ordered sequence s = (s_1, ..., s_k) of distinct items has the *error*

    E(s) = max_i (c_(i) − c_{s_i})     (>= 0: position 1 cannot beat the maximum)

and the mechanism releases s with probability ∝ exp(−λ·E(s)), λ = ε/(2Δ'). On neighbouring datasets every
utility moves by at most Δ (``sensitivity``), so each sorted value and each c_{s_i} moves by at most Δ and
E moves by at most Δ' = 2Δ; when all utilities move in the same direction (``monotonic=True``) the two moves
cancel up to Δ' = Δ. The guarantee is ε-DP (pure; it is an exponential mechanism over the k-sequences).
Using Δ' = Δ without monotonicity is *not* ε-DP: exhaustive audits over all neighbours find a privacy loss
of 1.29ε (d = 4, k = 2, counts in {0, ..., 3}; pinned in ``tests/test_joint_topk.py``) and 1.41ε (d = 5,
counts in {0, 1, 2}).

Exact sampling: a mixture over thresholds
-----------------------------------------
Write exp(−λE) = ∫_E^∞ λe^{−λx} dx. Then P(s) ∝ ∫ 1[E(s) <= x] λe^{−λx} dx, so the mechanism is: draw a
threshold x with density ∝ N(x)·λe^{−λx} on [0, ∞), where N(x) = #{s : E(s) <= x}, then draw s uniformly
among the sequences with E(s) <= x. Position i may hold exactly the items of utility >= c_(i) − x; these
sets grow with i (c_(i) decreases), so

    N(x) = ∏_i (G(c_(i) − x) − i + 1),   G(y) = #{j : c_j >= y},

and a uniform s is drawn position by position (position i: uniformly among its G(c_(i) − x) allowed items
not used yet, which always include the i − 1 used ones). N is a step function: it changes only at the
*levels* c_(i) − v (v a utility value < c_(i)), so only the piece [ℓ_t, ℓ_{t+1}) between consecutive levels
that holds x matters, and it is drawn with probability ∝ N_t·(e^{−λℓ_t} − e^{−λℓ_{t+1}}). (Summing by parts,
this is the paper's "choose the error level E with weight #{s : E(s) = E}·e^{−λE}, then a sequence at that
level"; the threshold form needs no difference of counts and no rejection.)

The piece is drawn by an exact Gumbel race over the log-weights a_t = ln N_t − λℓ_t + ln(1 − e^{−λ(ℓ_{t+1}
− ℓ_t)}): a_t + G_t with the Gumbel variates' uniforms drawn lazily (64 bits at a time) and a_t known as a
float with a proven error bound, refined on demand to a decimal enclosure from the exact integer N_t and the
exact rational levels (the utilities are read as exact rationals; a level c − v is held exactly as a float
sum and its rounding error). The race answers once the enclosures prove its winner, so the output law is
exactly the mechanism's, with no float rounding in it.

Pruning. Thresholds beyond a cut E_cut carry little weight: on a grid of thresholds, N is bounded above
and below on each cell (it grows with x), which bounds the weight beyond each grid point from above and the
weight before it from below; E_cut is the first grid point where the first is _MARGIN (40) nats below the
second (:func:`_plan_cut`). The thresholds beyond E_cut then enter the race as *one* candidate whose
log-weight is only bounded from above; they are built (and raced among themselves, with fresh bits) only
when that bound cannot exclude them, with probability about e^{−40}. The levels up to E_cut are built in
segments of at most _SEG_EVENTS (position, value) events: one segment races its pieces directly, several
race as aggregates (the log of their total weight) and the winner then races its pieces. Cost: O(d log d)
to sort, O(k·G) for the grid, O(L log L) for the L events within E_cut; the law does not depend on where
the cuts fall.
"""
from __future__ import annotations

import bisect
import decimal
import itertools
import math
from fractions import Fraction
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._exact_random import Dec as _Dec, next_word, words
from .._rng import check_rng
from .._validation import check_bool, check_int, check_k, check_positive, check_utilities
from ..typing import RngLike
from ._noise import _dec_noise_point, _float_enclosure
from ._topk import _round_out

__all__ = ["joint_top_k", "joint_probabilities"]

_U = 2.0 ** -53            # unit roundoff of float64
#: nats between the bound on the pruned thresholds' weight and the kept ones' (the pruned part is expanded
#: with probability about e^-_MARGIN; the tests lower it to exercise that path)
_MARGIN = 40.0
#: joint_probabilities enumerates at most this many sequences (a public size: d!/(d − k)!)
_PROB_CAP = 500_000
#: refused above this many (position, item) pairs k·d, before any random bit (a public size: the levels up to
#: the cut can number k·d, each built in a segment and raced)
_WORK_CAP = 10 ** 9
_STATS = {"tail_expanded": 0, "tail_won": 0, "refined": 0}


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _prepare(utilities, k, epsilon, sensitivity, monotonic):
    u = check_utilities(utilities)
    kk = check_k(k, u.size)
    if kk * u.size > _WORK_CAP:
        raise ValueError(f"k * len(utilities) must be at most {_WORK_CAP:.0e} for the joint mechanism (a public "
                         f"work cap), got k = {kk} and {u.size} utilities")
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    mono = check_bool(monotonic, "monotonic")
    # λ = ε/(2Δ'), Δ' = Δ (monotonic) or 2Δ, exactly (floats read as rationals)
    lam = Fraction(eps) / (Fraction(sens) * (2 if mono else 4))
    if not math.isfinite(float(np.max(u)) - float(np.min(u))):
        # differences must be finite floats (they are held exactly as a float sum); halving is exact for
        # every normal float, and the law only depends on λ·(differences)
        h = u * 0.5
        if not np.array_equal(h * 2.0, u):
            raise ValueError("utilities must have a finite range or no subnormal entries (their differences "
                             "are not representable)")
        u, lam = h, lam * 2
    return u, kk, lam


# ---------------------------------------------------------------------------------------------
# the level table
# ---------------------------------------------------------------------------------------------
def _two_diff(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a − b as an exact unevaluated sum s + e (Knuth's TwoSum; s = fl(a − b))."""
    nb = -b
    s = a + nb
    a2 = s - nb
    b2 = s - a2
    return s, (a - a2) + (nb - b2)


def _key_le(s, e, bs: float, be: float):
    """Exactly (s + e) <= (bs + be) for exact float sums (s the rounded value): compare s, then e."""
    return (s < bs) | ((s == bs) & (e <= be))


def _sort_exact(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The stable order of the exact values s + e: by s (the events come in sorted runs, one per position,
    which the stable sort merges), then by e within the runs of equal s (what lexsort((e, s)) gives)."""
    srt = np.argsort(s, kind="stable")
    if s.size > 1:
        ss = s[srt]
        dup = ss[1:] == ss[:-1]
        if dup.any():
            idx = np.flatnonzero(np.r_[dup, False] | np.r_[False, dup])   # positions in a run of equal s
            es = e[srt[idx]]
            if es.any():
                run = np.cumsum(np.r_[True, ~dup])[idx]
                srt[idx] = srt[idx][np.lexsort((es, run))]
    return srt


class _Table:
    """Sorted utilities, their distinct values and counts G, and the top-k positions."""

    def __init__(self, u: np.ndarray, k: int, lam: Fraction):
        self.d, self.k, self.lam = u.size, k, lam
        self.lam_f = float(lam)        # within one rounding of λ
        self.u = u
        asc, mult = np.unique(u, return_counts=True)
        self.vals = asc[::-1].copy()                           # distinct, decreasing
        self.G = np.cumsum(mult[::-1]).astype(np.int64)        # G[q] = #{j : u_j >= vals[q]}
        m = int(np.searchsorted(self.G, k, side="left")) + 1   # the values of the k largest
        self.top = np.repeat(self.vals[:m], mult[::-1][:m])[:k]
        self.p0 = np.searchsorted(-self.vals, -self.top, side="left").astype(np.int64)  # vals[p0[i]] == top[i]
        i = np.arange(k)
        self.ln_nmax = float(np.sum(np.log(self.d - i, dtype=np.float64)))

    def items(self, ranks: np.ndarray) -> np.ndarray:
        """The items at these ranks of the order by decreasing utility, ties by increasing index (the stable
        sort's order), without sorting all d: one pass over the items of the ranks' values."""
        q = np.searchsorted(self.G, ranks, side="right")          # G[q − 1] <= rank < G[q]
        off = ranks - np.where(q > 0, self.G[np.maximum(q - 1, 0)], 0)
        uq = np.unique(q)
        asc = self.vals[uq][::-1]                                  # the ranks' values, increasing
        g = np.minimum(np.searchsorted(asc, self.u), asc.size - 1)
        idx = np.flatnonzero(asc[g] == self.u)                    # their items, increasing
        grp = (asc.size - 1 - g[idx]).astype(np.int16 if asc.size < 2 ** 15 else np.int64)   # index in uq
        idx = idx[np.argsort(grp, kind="stable")]                 # grouped, increasing within a group
        cnt = np.bincount(grp, minlength=uq.size)
        starts = np.cumsum(cnt) - cnt
        return idx[starts[np.searchsorted(uq, q)] + off].astype(np.int64)

    def segment(self, q_init: np.ndarray, a: tuple[float, float], b: float | None) -> "_Segment":
        return _Segment(self, q_init, a, b)


class _Segment:
    """The pieces of the threshold range [A, B) (B = None: ∞): float log-weights with error bounds, and
    exact enclosures on demand.

    ``q_init[i]``: the index in ``vals`` of the smallest value allowed at position i at threshold A. The
    events are the (i, q) with q > q_init[i] and level c_(i) − vals[q] <= B (exactly), sorted by level."""

    def __init__(self, T: _Table, q_init: np.ndarray, a: tuple[float, float], b: float | None):
        self.T, self.q_init, self.start, self.stop = T, q_init, a, b
        k, D = T.k, T.vals.size
        if b is None:
            qhi = np.full(k, D - 1, dtype=np.int64)
        else:   # approximate window (generous), filtered exactly below
            thr = T.top - b
            with np.errstate(over="ignore"):
                thr = thr - (np.abs(thr) + abs(b)) * 4 * _U - 1e-300
            qhi = np.searchsorted(-T.vals, -thr, side="right").astype(np.int64)   # vals[q] >= thr for q < qhi
            qhi = np.minimum(qhi, D - 1)
        cnt = np.maximum(qhi - q_init, 0)
        n = int(cnt.sum())
        pos = np.repeat(np.arange(k, dtype=np.int64), cnt)
        off = np.cumsum(cnt) - cnt
        q = q_init[pos] + 1 + (np.arange(n, dtype=np.int64) - off[pos])
        s, e = _two_diff(T.top[pos], T.vals[q])
        if b is not None:
            keep = _key_le(s, e, b, 0.0)
            pos, q, s, e = pos[keep], q[keep], s[keep], e[keep]
        srt = _sort_exact(s, e)
        self.pos, self.q, s, e = pos[srt], q[srt], s[srt], e[srt]
        n = s.size
        # levels: runs of equal (s, e)
        new = np.ones(n, dtype=bool)
        if n > 1:
            new[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1])
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], n].astype(np.int64) if n else np.zeros(0, dtype=np.int64)          # events applied in the piece after a level
        ls, le = s[starts], e[starts]
        # pieces: [A, l_1), [l_1, l_2), ..., [l_m, B)
        self.lo_s = np.r_[a[0], ls]
        self.lo_e = np.r_[a[1], le]
        self.ends = np.r_[0, ends]
        if b is None:
            hi_s, hi_e = np.r_[ls, np.inf], np.r_[le, 0.0]
        else:
            hi_s, hi_e = np.r_[ls, b], np.r_[le, 0.0]
            if n and ls[-1] == b and le[-1] == 0.0:   # a level exactly at B: its piece is empty
                self.lo_s, self.lo_e, self.ends = self.lo_s[:-1], self.lo_e[:-1], self.ends[:-1]
                hi_s, hi_e = hi_s[:-1], hi_e[:-1]
        self.hi_s, self.hi_e = hi_s, hi_e
        self._float_weights()

    # -- float log-weights with rigorous error bounds -----------------------------------------
    def _float_weights(self) -> None:
        T, k = self.T, self.T.k
        i = np.arange(k)
        f0 = np.log((T.G[self.q_init] - i).astype(np.float64))
        ln0 = float(np.sum(f0))
        err0 = (k + 6) * _U * float(np.sum(np.abs(f0))) * 1.01
        gq, gp = T.G[self.q], T.G[self.q - 1]
        delta = np.log1p((gq - gp).astype(np.float64) / (gp - self.pos).astype(np.float64))
        n = delta.size
        cs = np.r_[0.0, np.cumsum(delta)][self.ends]          # ln N_t − ln N_A (>= 0)
        lnN = ln0 + cs
        err_n = err0 + (n + 8) * _U * cs * 1.02 + _U * np.abs(lnN)
        lam = T.lam_f
        x = lam * self.lo_s                                    # λ·A_t
        err_x = 3 * _U * np.abs(x) + lam * np.abs(self.lo_e) * 1.01 + 1e-300
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            finite = np.isfinite(self.hi_s)
            ds = self.hi_s - self.lo_s
            de = self.hi_e - self.lo_e
            dl = np.where(finite, ds + de, np.inf)
            err_d = _U * (np.abs(ds) + np.abs(de) + np.abs(dl)) * 1.01
            r = err_d / dl + 3 * _U                            # relative error of z = λ·(B_t − A_t)
            z = lam * dl
            lg = np.where(finite, np.log(-np.expm1(-z)), 0.0)
            err_l = np.where(finite, 2.2 * r + 4 * _U + 4 * _U * np.abs(lg), 0.0)
            bad = finite & ~((dl > 0) & (r < 0.25) & (z > 1e-290))
            err_l = np.where(bad, np.inf, err_l)
            lg = np.where(bad, 0.0, lg)
        self.a = lnN - x + lg
        self.err = (err_n + err_x + err_l + 3 * _U * (np.abs(lnN) + np.abs(x) + np.abs(lg))) * 1.01 + 1e-300

    # -- exact quantities of one piece -----------------------------------------------------------
    def state(self, t: int) -> np.ndarray:
        """q_i of piece t: the smallest allowed value's index at each position."""
        qs = self.q_init.copy()
        e = int(self.ends[t])
        np.maximum.at(qs, self.pos[:e], self.q[:e])
        return qs

    def final_state(self) -> np.ndarray:
        """q_i after every event of the segment (the state at B)."""
        qs = self.q_init.copy()
        np.maximum.at(qs, self.pos, self.q)
        return qs

    def count(self, t: int) -> int:
        qs = self.state(t)
        return math.prod(int(g) - i for i, g in enumerate(self.T.G[qs].tolist()))

    def enclosure(self, t: int, prec: int):
        """Decimal enclosure of a_t at ``prec`` digits."""
        D = _Dec(prec)
        N = decimal.Decimal(self.count(t))
        lnN = D.ln(N, N)
        lam = self.T.lam
        A = Fraction(float(self.lo_s[t])) + Fraction(float(self.lo_e[t]))
        out = D.add(lnN, D.neg(D.frac(lam * A)))
        if math.isfinite(self.hi_s[t]):
            B = Fraction(float(self.hi_s[t])) + Fraction(float(self.hi_e[t]))
            zl, zh = D.frac(lam * (B - A))
            lo = D.one_minus_exp(max(zl, decimal.Decimal(0)))[0]
            hi = D.one_minus_exp(zh)[1]
            out = D.add(out, D.ln(max(lo, decimal.Decimal(0)), min(hi, decimal.Decimal(1))))
        return out

    def digits(self) -> int:
        m = float(np.max(np.abs(self.a[np.isfinite(self.a)]), initial=0.0))
        return len(str(int(m))) + 2

    # -- the whole segment as one candidate --------------------------------------------------
    def logsumexp_float(self) -> tuple[float, float]:
        """Rigorous float bounds on ln Σ_t e^{a_t}."""
        a, err = self.a, self.err
        if not np.all(np.isfinite(err)):
            return -math.inf, math.inf
        M = float(np.max(a))
        with np.errstate(under="ignore"):
            dev = a - M
            S = float(np.sum(np.exp(dev)))
        rel = (float(np.max(err + _U * np.abs(dev))) + 2 * _U) * 1.02 + (a.size + 2) * _U * 1.01 \
            + a.size * 1e-300
        if rel > 0.1:
            return -math.inf, math.inf
        val = M + math.log(S)
        slack = rel * 1.2 + 4 * _U * (abs(val) + abs(M))
        return val - slack, val + slack

    def logsumexp_dec(self, prec: int):
        D = _Dec(prec)
        lo, hi = decimal.Decimal(0), decimal.Decimal(0)
        for t in range(self.a.size):
            el, eh = D.exp(*self.enclosure(t, prec))
            lo, hi = D.down(D.ctx.add(lo, el)), D.up(D.ctx.add(hi, eh))
        return D.ln(lo, hi)


# ---------------------------------------------------------------------------------------------
# the exact Gumbel race
# ---------------------------------------------------------------------------------------------
def _race(slo: np.ndarray, shi: np.ndarray, exact: Callable[[int, int], tuple], digits: int,
          rng: np.random.Generator, lazy: dict | None = None) -> int:
    """argmax_t (a_t + G_t), G_t i.i.d. Gumbel, exactly: ``slo``/``shi`` rigorous float bounds on a_t,
    ``exact(t, prec)`` a decimal enclosure of a_t at ``prec`` digits (width -> 0 with prec); ``lazy[t]()``
    gives tighter float bounds for a candidate whose first ones were only an upper bound."""
    n = slo.size
    m = words(rng, n)
    nlo, nhi = _float_enclosure(m, "gumbel")
    with np.errstate(invalid="ignore", over="ignore"):
        lo, hi = _round_out(slo + nlo, shi + nhi)
    while True:
        best = int(np.argmax(lo))
        amb = np.flatnonzero(hi >= lo[best])
        if amb.size <= 1:
            return best
        pend = [int(r) for r in amb if lazy and int(r) in lazy]
        if not pend or lazy is None:
            break
        for r in pend:
            a_lo, a_hi = lazy.pop(r)()
            slo[r], shi[r] = a_lo, a_hi
            with np.errstate(invalid="ignore", over="ignore"):
                l2, h2 = _round_out(np.array([a_lo + nlo[r]]), np.array([a_hi + nhi[r]]))
            lo[r], hi[r] = l2[0], h2[0]
    _STATS["refined"] += 1
    cand = [int(r) for r in amb]
    bits = {r: (int(m[r]), 64) for r in cand}
    for rnd in range(100_000):
        if rnd:
            more = words(rng, len(cand))
            for r, w in zip(cand, more.tolist()):
                mm, nb = bits[r]
                bits[r] = ((mm << 64) | int(w), nb + 64)
        nb = bits[cand[0]][1]
        prec = nb + 40 + digits
        D = _Dec(prec)
        lo_d, hi_d = {}, {}
        for r in cand:
            al, ah = exact(r, prec)
            mm, _ = bits[r]
            gl = _dec_noise_point(D, mm, nb, "gumbel", None, "lo")
            gh = _dec_noise_point(D, mm + 1, nb, "gumbel", None, "hi")
            lo_d[r], hi_d[r] = D.down(D.ctx.add(al, gl)), D.up(D.ctx.add(ah, gh))
        lead = max(cand, key=lambda r: lo_d[r])
        cand = [r for r in cand if hi_d[r] >= lo_d[lead]]
        if len(cand) == 1:
            return cand[0]
    raise RuntimeError("exact joint race did not converge")   # probability 2^-(64·100000)


# ---------------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------------
def _uniform_below(n: int, rng: np.random.Generator) -> int:
    """Exactly uniform on {0, ..., n − 1} from 64-bit words (rejection of the incomplete last block)."""
    limit = ((1 << 64) // n) * n
    while True:
        w = next_word(rng)
        if w < limit:
            return w % n


#: up to this k the free ranks are found by a Python scan, above it by numpy
_SMALL_K = 64


def _fill(T: _Table, qs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform sequence among those whose position i holds one of the first G[qs[i]] sorted items.

    Position i takes the r-th free rank, r uniform below m_i − i (the used ranks are all < m_i: the sets
    grow); x = r + j where j counts the used ranks u_j with u_j − j <= r (the free ranks below u_j)."""
    k = T.k
    out = np.empty(k, dtype=np.int64)        # ranks first, mapped to items at the end
    used = np.empty(k, dtype=np.int64)       # ranks taken, increasing (the first n)
    ar = np.arange(k, dtype=np.int64)
    small: list[int] = []
    for i, m in enumerate(T.G[qs].tolist()):
        r = _uniform_below(int(m) - i, rng)
        if k <= _SMALL_K:
            x = r
            for u in small:
                if u <= x:
                    x += 1
                else:
                    break
            bisect.insort(small, x)
        else:
            j = int(np.searchsorted(used[:i] - ar[:i], r, side="right"))
            x = r + j
            used[j + 1:i + 1] = used[j:i].copy()
            used[j] = x
        out[i] = x
    return T.items(out)


def _bounds(a: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", over="ignore"):
        lo = np.nextafter(a - err, -np.inf)
        hi = np.nextafter(a + err, np.inf)
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def _lse_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """Rigorous float bounds on ln Σ_j e^{a_j} from bounds lo_j <= a_j <= hi_j."""
    out = []
    for v, sign in ((lo, -1.0), (hi, 1.0)):
        if sign > 0 and not np.all(hi < np.inf):
            out.append(math.inf)
            continue
        fin = v[v > -np.inf]
        if fin.size == 0:
            out.append(-math.inf)
            continue
        M = float(np.max(fin))
        with np.errstate(under="ignore"):
            dev = fin - M
            S = float(np.sum(np.exp(dev)))
        val = M + math.log(S)
        rel = (fin.size + 4) * _U * 1.1 + float(np.max(_U * np.abs(dev))) * 2 + fin.size * 1e-300
        out.append(val + sign * (rel * 1.2 + 4 * _U * (abs(val) + abs(M))))
    return out[0], out[1]


#: at most this many events (position, value) per segment of the threshold range (memory: ~50 bytes each)
_SEG_EVENTS = 4_000_000
#: segments are kept (not rebuilt when they win) while the kept ones hold at most this many events in all
_KEEP_EVENTS = 4_000_000


class _Chain:
    """The threshold range [start, stop) cut into consecutive segments of at most _SEG_EVENTS events: each
    enters a race as one candidate (the log of its total weight, bounded in floats, enclosed in decimals on
    demand), and the winner is then raced among its own pieces (a Gumbel race in two rounds, fresh bits in
    each, has the law of the race over all pieces)."""

    def __init__(self, T: _Table, q_init: np.ndarray, start: tuple[float, float], stop: float | None):
        self.T = T
        self.specs: list[tuple[np.ndarray, tuple[float, float], float | None]] = []
        self.kept: dict[int, _Segment] = {}
        los, his = [], []
        q, a, kept = q_init, start, 0
        while True:
            b = self._next_stop(q, a[0], stop)
            seg = T.segment(q, a, b)
            self.specs.append((q, a, b))
            # (a chain of one segment races its pieces directly: no aggregate needed)
            lo, hi = seg.logsumexp_float() if b != stop or self.specs[1:] else (-math.inf, math.inf)
            los.append(lo)
            his.append(hi)
            if kept + seg.pos.size <= _KEEP_EVENTS:
                self.kept[len(self.specs) - 1] = seg
                kept += seg.pos.size
            q = seg.final_state()
            if b is None or b == stop:
                break
            a = (b, 0.0)
        self.lo, self.hi = np.array(los), np.array(his)
        self.final = q

    def _count(self, q: np.ndarray, x: float) -> int:
        T = self.T
        thr = T.top - x
        Q = np.searchsorted(-T.vals, -thr, side="right") - 1
        return int(np.maximum(Q - q, 0).sum())

    def _next_stop(self, q: np.ndarray, a: float, stop: float | None) -> float | None:
        T = self.T
        hi = float(T.top[0] - T.vals[-1]) * (1 + 1e-9) + 1e-300 if stop is None else stop
        if self._count(q, hi) <= _SEG_EVENTS or hi <= a:
            return stop
        lo = a
        for _ in range(48):     # (where the segments end affects only the cost)
            mid = lo + (hi - lo) / 2
            if not lo < mid < hi:
                break
            if self._count(q, mid) <= _SEG_EVENTS:
                lo = mid
            else:
                hi = mid
        return lo if lo > a else hi

    def segment(self, j: int) -> _Segment:
        if j in self.kept:
            return self.kept[j]
        q, a, b = self.specs[j]
        return self.T.segment(q, a, b)

    def total(self) -> tuple[float, float]:
        if len(self.specs) == 1:
            return self.segment(0).logsumexp_float()
        return _lse_bounds(self.lo, self.hi)

    def agg_dec(self, j: int, prec: int):
        return self.segment(j).logsumexp_dec(prec)

    def total_dec(self, prec: int):
        if len(self.specs) == 1:
            return self.agg_dec(0, prec)
        D = _Dec(prec)
        lo, hi = decimal.Decimal(0), decimal.Decimal(0)
        for j in range(len(self.specs)):
            el, eh = D.exp(*self.agg_dec(j, prec))
            lo, hi = D.down(D.ctx.add(lo, el)), D.up(D.ctx.add(hi, eh))
        return D.ln(lo, hi)

    def digits(self) -> int:
        v = np.r_[self.lo, self.hi]
        m = float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0))
        return len(str(int(m))) + 2

    def pick(self, rng: np.random.Generator) -> tuple[_Segment, int]:
        """A piece of the chain's range, with probability ∝ its weight."""
        j = 0
        if len(self.specs) > 1:
            j = _race(self.lo.copy(), self.hi.copy(), self.agg_dec, max(self.digits(), 25), rng)
        S = self.segment(j)
        lo, hi = _bounds(S.a, S.err)
        return S, _race(lo, hi, S.enclosure, max(S.digits(), 25), rng)


#: at most this many grid points in the search for the pruning threshold
_GRID = 1024


def _log_counts(T: _Table, X: np.ndarray, side: int) -> np.ndarray:
    """ln N(x) at each x of X (float), pushed up (side = +1: an upper bound) or down (side = −1) past the
    rounding of the thresholds c_(i) − x (side = 0: x = 0 only, where they are exact)."""
    i = np.arange(T.k)[:, None]
    thr = T.top[:, None] - X[None, :]
    with np.errstate(over="ignore"):
        thr = thr - side * (4 * _U * (np.abs(T.top[:, None]) + np.abs(X[None, :])) + 1e-300)
    Q = np.searchsorted(-T.vals, -thr.ravel(), side="right").reshape(thr.shape)   # #values >= thr
    f = (T.G[np.maximum(Q - 1, 0)] - i).astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.sum(np.log(np.where(Q > 0, np.maximum(f, 0.0), 0.0)), axis=0)


def _plan_cut(T: _Table) -> tuple[float | None, float]:
    """A threshold E_cut and a bound ub >= ln(weight of the thresholds x > E_cut), with ub at least _MARGIN
    nats below a lower bound on the weight of [0, E_cut] (None: no such cut, nothing is pruned).

    On a grid X_0 = 0 < X_1 < ... < X_J (X_J beyond every level), the weight of [X_j, X_{j+1}) lies between
    N(X_j)(e^{−λX_j} − e^{−λX_{j+1}}) and N(X_{j+1})e^{−λX_j} (N grows with x), and that of [X_J, ∞) is
    N_max·e^{−λX_J}. The cut is the first grid point where the bound on what follows is _MARGIN below the
    best lower bound before it. Only the efficiency depends on the grid, not the law."""
    x_max = float(T.top[0] - T.vals[-1])
    if not x_max > 0:
        return None, math.inf
    lam = T.lam_f
    # beyond X* = (ln N_max + margin)/λ the crude bound N_max·e^{−λX*} = e^{−margin} is enough; below it (or
    # below the largest level), cells of at least 1/λ, at most _GRID of them
    x_end = min((T.ln_nmax + abs(_MARGIN) + 8.0) / lam, x_max * (1 + 1e-9) + 1e-300)
    n_cells = int(min(_GRID, max(1.0, math.ceil(lam * x_end))))
    X = np.linspace(0.0, x_end, n_cells + 1)
    up_n = _log_counts(T, X, +1)
    lo_n = _log_counts(T, X, -1)
    lo_n[0] = _log_counts(T, X[:1], 0)[0]      # at x = 0 the thresholds c_(i) are exact: N(0) itself
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        up = np.r_[up_n[1:] - lam * X[:-1], T.ln_nmax - lam * X[-1]]          # cells j = 0..J
        low = lo_n[:-1] - lam * X[:-1] + np.log(-np.expm1(-lam * np.diff(X)))
    tail = np.logaddexp.accumulate(up[::-1])[::-1]       # tail[c]: bound on the weight of x >= X_c
    best = np.maximum.accumulate(low)                     # best[c - 1]: lower bound on the weight of [0, X_c)
    slack = 1e-9 * (np.abs(tail) + T.ln_nmax + lam * X[-1]) + 1e-6
    ok = np.flatnonzero(tail[1:] + slack[1:] <= best - _MARGIN)
    if ok.size == 0:
        return None, math.inf
    c = int(ok[0]) + 1
    return float(X[c]), float(tail[c] + slack[c])


def _sample(u: np.ndarray, k: int, lam: Fraction, rng: np.random.Generator, prune: bool = True) -> np.ndarray:
    T = _Table(u, k, lam)
    if not prune:
        S, t = _Chain(T, T.p0, (0.0, 0.0), None).pick(rng)
        return _fill(T, S.state(t), rng)
    cut, ub = _plan_cut(T)
    if cut is None:
        S, t = _Chain(T, T.p0, (0.0, 0.0), None).pick(rng)
        return _fill(T, S.state(t), rng)
    H = _Chain(T, T.p0, (0.0, 0.0), cut)
    tail: dict = {}

    def tail_chain() -> _Chain:
        if "chain" not in tail:
            _STATS["tail_expanded"] += 1
            tail["chain"] = _Chain(T, H.final, (cut, 0.0), None)
        return tail["chain"]

    single = len(H.specs) == 1
    S0 = H.segment(0)
    if single:      # one segment: its pieces race directly (with the pruned part as one more candidate)
        lo, hi = _bounds(S0.a, S0.err)
        digits = S0.digits()
    else:           # its segments race as aggregates, then the winner's pieces
        lo, hi = H.lo.copy(), H.hi.copy()
        digits = H.digits()
    nh = lo.size

    def exact(r: int, prec: int):
        if r == nh:
            return tail_chain().total_dec(prec)
        return S0.enclosure(r, prec) if single else H.agg_dec(r, prec)

    t = _race(np.r_[lo, -np.inf], np.r_[hi, ub], exact, max(digits, 25), rng,
              lazy={nh: lambda: tail_chain().total()})
    if t < nh:
        if single:
            return _fill(T, S0.state(t), rng)
        S = H.segment(t)
        lo, hi = _bounds(S.a, S.err)
        t = _race(lo, hi, S.enclosure, max(S.digits(), 25), rng)
        return _fill(T, S.state(t), rng)
    _STATS["tail_won"] += 1
    S, t = tail_chain().pick(rng)          # the pruned part won: race within it (fresh bits)
    return _fill(T, S.state(t), rng)


def joint_top_k(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float, monotonic: bool = False,
                rng: RngLike = None) -> np.ndarray:
    """An ordered top-k sequence from the joint exponential mechanism, sampled exactly.

    Releases s = (s_1, ..., s_k), distinct, with probability ∝ exp(−ε·E(s)/(2Δ')) where
    E(s) = max_i (c_(i) − c_{s_i}) compares the utility at each position with the i-th largest utility
    c_(i) (Gillenwater et al., ICML 2022). The law is exact (no float rounding in it; see the module notes
    for the threshold-mixture sampler and its pruning).

    Parameters
    ----------
    utilities : array_like
        One finite utility per item (counts, or any reals); larger is better.
    k : int
        Length of the released sequence (1 <= k <= d; k·d at most 10^9, a public work cap checked before any
        random bit is drawn).
    epsilon : float
        Privacy budget of the whole sequence (> 0).
    sensitivity : float
        Δ (> 0): the most any one utility changes between neighbouring datasets.
    monotonic : bool, default False
        True declares that between neighbours all utilities move in the same direction (e.g. counts under
        adding/removing one user): then E moves by at most Δ' = Δ; otherwise Δ' = 2Δ.
    rng : None, int, SeedSequence, BitGenerator or Generator
        The only source of randomness (uniform 64-bit words).

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The released item indices, position 1 first.

    Privacy
    -------
    ε-DP (pure) for neighbouring datasets whose utilities differ by at most Δ each (all in one direction
    with ``monotonic=True``): an exponential mechanism over the k-sequences with a score of sensitivity Δ'.
    The whole ordered sequence is released at once: no ε/k split.

    Examples
    --------
    >>> joint_top_k([50.0, 1.0, 40.0, 0.0], k=2, epsilon=10.0, sensitivity=1.0, rng=0).tolist()
    [0, 2]
    """
    u, kk, lam = _prepare(utilities, k, epsilon, sensitivity, monotonic)
    return _sample(u, kk, lam, check_rng(rng))


def joint_probabilities(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
                        monotonic: bool = False) -> dict[tuple[int, ...], float]:
    """The exact law of :func:`joint_top_k`: every ordered k-sequence and its probability (small d).

    Computed from the error of each sequence and the normalising constant from the level table (the
    counts N_t of the sampler), not from the sampler. For audits and tests; the values are floats (the
    law itself is what :func:`joint_top_k` samples exactly).

    Parameters
    ----------
    utilities, k, epsilon, sensitivity, monotonic
        As for :func:`joint_top_k`; d!/(d − k)! must be at most 500,000 (a public size).

    Returns
    -------
    dict mapping tuple[int, ...] to float
        Each ordered sequence of k distinct indices and its probability (they sum to 1).

    Privacy
    -------
    None: the probabilities are computed from the data; they describe the ε-DP law of :func:`joint_top_k`.

    Examples
    --------
    >>> p = joint_probabilities([3.0, 1.0, 0.0], k=2, epsilon=4.0, sensitivity=1.0, monotonic=True)
    >>> round(p[(0, 1)], 4), round(sum(p.values()), 12)
    (0.8497, 1.0)
    """
    u0 = check_utilities(utilities)
    d = u0.size
    kk = check_k(k, d)
    n_seq = math.perm(d, kk)
    check_int(n_seq, "the number of sequences d!/(d - k)!", maximum=_PROB_CAP)
    u, kk, lam = _prepare(u0, kk, epsilon, sensitivity, monotonic)
    T = _Table(u, kk, lam)
    S = T.segment(T.p0, (0.0, 0.0), None)
    M = float(np.max(S.a))
    log_z = M + math.log(float(np.sum(np.exp(S.a - M))))
    top = [Fraction(float(v)) for v in T.top]
    uf = [Fraction(float(v)) for v in u]
    out: dict[tuple[int, ...], float] = {}
    for s in itertools.permutations(range(d), kk):
        E = max(top[i] - uf[j] for i, j in enumerate(s))
        out[s] = math.exp(-float(lam * E) - log_z)
    return out
