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
Using Δ' = Δ without monotonicity is *not* ε-DP: an exhaustive audit of d = 5, k = 2, counts in {0, 1, 2}
finds a privacy loss of 1.41ε (``tests/test_joint_topk.py`` pins it).

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

Pruning. Thresholds beyond E_cut = (ln N_max + margin)/λ, N_max = d!/(d − k)!, carry a total weight at most
N_max·e^{−λE_cut} = e^{−margin}, while [0, E_cut] carries at least 1 − e^{−λE_cut}: they enter the race as
one candidate, whose log-weight is only bounded from above, and are expanded into their pieces (and then
raced among themselves) only when the bound cannot exclude them, with probability about e^{−margin}. Only
the levels up to E_cut are built: O(d log d) to sort, plus O(L log L) for the L levels within E_cut.
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
_STATS = {"tail_expanded": 0, "tail_won": 0, "refined": 0}


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _prepare(utilities, k, epsilon, sensitivity, monotonic):
    u = check_utilities(utilities)
    kk = check_k(k, u.size)
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


class _Table:
    """Sorted utilities, their distinct values and counts G, and the top-k positions."""

    def __init__(self, u: np.ndarray, k: int, lam: Fraction):
        self.d, self.k, self.lam = u.size, k, lam
        self.lam_f = float(lam)        # within one rounding of λ
        self.order = np.argsort(-u, kind="stable")
        c = u[self.order]
        first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        self.vals = c[first]                                   # distinct, decreasing
        self.G = np.r_[first[1:], c.size].astype(np.int64)     # G[q] = #{j : u_j >= vals[q]}
        self.top = c[:k]
        self.p0 = np.searchsorted(-self.vals, -self.top, side="left").astype(np.int64)  # vals[p0[i]] == top[i]
        i = np.arange(k)
        self.ln_nmax = float(np.sum(np.log(self.d - i, dtype=np.float64)))

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
        srt = np.lexsort((e, s))
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


def _fill(T: _Table, qs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform sequence among those whose position i holds one of the first G[qs[i]] sorted items."""
    used: list[int] = []
    out = np.empty(T.k, dtype=np.int64)
    for i, m in enumerate(T.G[qs].tolist()):
        r = _uniform_below(int(m) - i, rng)
        for u in used:          # the r-th unused rank (used ranks are all < m: the allowed sets grow)
            if u <= r:
                r += 1
            else:
                break
        bisect.insort(used, r)
        out[i] = T.order[r]
    return out


def _race_segment(S: _Segment, rng: np.random.Generator) -> int:
    lo, hi = _bounds(S.a, S.err)
    return _race(lo, hi, S.enclosure, S.digits(), rng)


def _bounds(a: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", over="ignore"):
        lo = np.nextafter(a - err, -np.inf)
        hi = np.nextafter(a + err, np.inf)
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def _sample(u: np.ndarray, k: int, lam: Fraction, rng: np.random.Generator, prune: bool = True) -> np.ndarray:
    T = _Table(u, k, lam)
    if not prune:
        S = T.segment(T.p0, (0.0, 0.0), None)
        t = _race_segment(S, rng)
        return _fill(T, S.state(t), rng)
    # E_cut: the pruned thresholds' weight is <= N_max·e^{−λ E_cut} <= e^{−margin}
    cut = (T.ln_nmax * (1 + 1e-9) + _MARGIN) / T.lam_f
    H = T.segment(T.p0, (0.0, 0.0), cut)
    ub = (T.ln_nmax * (1 + 1e-12) + 1e-12) - T.lam_f * cut * (1 - 4 * _U)   # >= ln(weight of x > cut)
    tail: dict = {}

    def tail_segment() -> _Segment:
        if "seg" not in tail:
            _STATS["tail_expanded"] += 1
            tail["seg"] = T.segment(H.final_state(), (cut, 0.0), None)
        return tail["seg"]

    def exact(r: int, prec: int):
        if r < H.a.size:
            return H.enclosure(r, prec)
        return tail_segment().logsumexp_dec(prec)

    lo, hi = _bounds(H.a, H.err)
    lo, hi = np.r_[lo, -np.inf], np.r_[hi, ub]
    nh = H.a.size
    t = _race(lo, hi, exact, max(H.digits(), 25), rng,
              lazy={nh: lambda: tail_segment().logsumexp_float()})
    if t < nh:
        return _fill(T, H.state(t), rng)
    _STATS["tail_won"] += 1
    S = tail_segment()                     # the pruned part won: race among its pieces (fresh bits)
    t = _race_segment(S, rng)
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
        Length of the released sequence (1 <= k <= d).
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
