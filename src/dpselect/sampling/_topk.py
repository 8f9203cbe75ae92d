"""The exact noisy top-k with one noise draw per candidate (:func:`noisy_top_k`): stage 1 (float64 in blocks,
the bulk error bound), stage 2 (enclosures at both ends of each 64-bit cell), the decimal refinement; and
:func:`shortlist_top_k`, stages 1 and 2 alone (the distributed selectors' per-partition step)."""
from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from .._exact_random import Dec as _Dec, INV64 as _INV64
from ._noise import (_DBL_MAX, _REL, _SMALL, _TINY, _bits64, _dec_noise_point, _float_enclosure,
                     _py_enclosure)

# Stage 1 (Gumbel only): cells with U in [2^-20, 1 - 2^-20) are the "bulk". There -ln U >= 2^-20, so
# the conversion error 2^-53 of U moves ln(-ln U) by at most 2^-33, and the 64-bit cell (relative
# width <= 2^-44 in -ln U) by at most 2^-44: |G_float - G| <= 2^-33 + 2^-44 + a few ulp of |G| <= 14.
_BULK_LO = np.uint64(1 << 44)
_BULK_HI = np.uint64((1 << 64) - (1 << 44))
_BULK_TAU = 2.0 ** -33 * 1.01 + 2.0 ** -44 + 1e-13


# ---------------------------------------------------------------------------------------------
# the sampler
# ---------------------------------------------------------------------------------------------
class _Refiner:
    """Exact state (all bits drawn so far, exact score) of the candidates that reached the decimal stage."""

    def __init__(self, rng, noise, exact_score, weights, m0, ref: Fraction):
        self.rng, self.noise, self.exact_score, self.weights = rng, noise, exact_score, weights
        self.m0 = m0
        self.ref = ref  # every enclosure is of a_r − ref + N_r: near-ties are resolved on small numbers
        self.bits: dict[int, tuple[int, int]] = {}
        self.score: dict[int, Fraction] = {}
        self.coarse: set[int] = set()    # candidates given their one float-noise enclosure already
        self.pending: set[int] = set()   # ... whose next enclosure is the full one, with the same bits
        self.far: set[int] = set()       # candidates whose exact score has more than 40 digits

    def state(self, r: int) -> tuple[int, int]:
        if r not in self.bits:
            self.bits[r] = (int(self.m0[r]), 64)
        return self.bits[r]

    def extend(self, rs: Sequence[int]) -> None:
        rs = [r for r in rs if r not in self.pending]   # a coarse enclosure is no reason for more bits
        self.pending.clear()
        if not rs:
            return
        more = _bits64(self.rng, len(rs))
        for r, b in zip(rs, more):
            m, nb = self.state(r)
            self.bits[r] = ((m << 64) | int(b), nb + 64)

    def interval(self, r: int):
        """Decimal enclosure of a_r − ref + F⁻¹(U_r) from the exact score and all bits drawn for U_r."""
        m, nb = self.state(r)
        if r not in self.score:
            raw = Fraction(self.exact_score(r))
            self.score[r] = raw - self.ref
            if _digits(raw) > 40 or _digits(self.score[r]) > 40:
                self.far.add(r)
        f = self.score[r]
        wf = None if self.weights is None else float(self.weights[r])
        if r in self.far and r not in self.coarse:
            # A score beyond 1e40 noise units (from the top or from the reference; c = 1e600 times a
            # utility gap gives ~600 digits) first gets one cheap enclosure: f to 50 digits plus the float
            # enclosure of the noise on the first 64 bits (rigorous, only wider). That settles the order of
            # such scores whenever their gaps dwarf the noise (no ~600-digit ln per
            # draw); a near-tie among them then gets the full enclosure below, from the same bits.
            self.coarse.add(r)
            self.pending.add(r)
            D = _Dec(50)
            n_lo, n_hi = _py_enclosure(int(self.m0[r]), self.noise, wf)
            return D.add(D.frac(f), (decimal.Decimal(n_lo), decimal.Decimal(n_hi)))
        # U = m/2^nb has at most nb significant decimal digits: the precision represents it exactly,
        # and leaves ~40 digits below the magnitude of a_r − ref for the noise.
        D = _Dec(nb + 40 + _digits(f))
        a = D.frac(f)
        w = None
        if self.weights is not None:
            wd = decimal.Decimal(float(self.weights[r]))  # exact: a binary float is a finite decimal
            if self.noise == "gumbel":
                a = D.add(a, D.ln(wd, wd))  # max of w Gumbels = Gumbel + ln w
            else:
                w = wd
        n_lo = _dec_noise_point(D, m, nb, self.noise, w, "lo")
        n_hi = _dec_noise_point(D, m + 1, nb, self.noise, w, "hi")
        if D.ctx.flags[decimal.Underflow] or D.ctx.flags[decimal.Overflow]:
            # e.g. U^{1/w} for a base measure w = 1e-300: values below 10^(-10^18) cannot be told apart
            raise ValueError(
                "exact sampling cannot resolve a near-tie: a candidate's noise under the base "
                "measure (weights) leaves the decimal exponent range; use a less extreme base measure, "
                "which the exact samplers resolve"
            )
        return D.add(a, (n_lo, n_hi))


def _certify(ids, lo, hi, k: int):
    """The k largest values in order if the intervals [lo, hi] prove them, else (None, ambiguous ids)."""
    n = len(ids)
    order = sorted(range(n), key=lambda i: (lo[i], hi[i]), reverse=True)
    kk = min(k, n)
    suf = [None] * (n + 1)
    cur = None
    for pos in range(n - 1, -1, -1):
        h = hi[order[pos]]
        cur = h if cur is None or h > cur else cur
        suf[pos] = cur
    ambiguous = set()
    for pos in range(kk):
        if pos + 1 < n and not (lo[order[pos]] > suf[pos + 1]):
            ambiguous.add(ids[order[pos]])
            for q in range(pos + 1, n):
                if hi[order[q]] >= lo[order[pos]]:
                    ambiguous.add(ids[order[q]])
    if not ambiguous:
        return [ids[order[i]] for i in range(kk)], None
    return None, ambiguous


def noisy_top_k(
    a: np.ndarray,
    a_err: np.ndarray | float | None,
    *,
    k: int,
    rng: np.random.Generator,
    noise: str = "gumbel",
    exact_score: Callable[[int], Fraction],
    base_measure: np.ndarray | None = None,
    bits: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the k largest ``a_r + N_r`` (largest first), N_r i.i.d. noise, sampled exactly.

    Parameters
    ----------
    a : float64 array
        Float approximations of the scores; ``-inf`` stands for a score below −DBL_MAX.
    a_err : float64 array, float or None
        Rigorous bounds on |a_float − a_exact| (``inf`` where unknown); ``None``: the relative model
        1e-15·|a| + 1e-300 of scores formed exactly up to a few roundings (enables the fast path).
    k : int
        Number of indices returned (1 <= k <= len(a)).
    rng : numpy.random.Generator (or anything with its ``integers`` method)
        The only source of randomness: uniform 64-bit words.
    noise : "gumbel", "exponential" or "laplace"
        Unit-scale noise family.
    exact_score : callable
        ``exact_score(r)``: the exact value a[r] approximates, as a ``Fraction``. Called only for
        candidates in a near-tie that float arithmetic cannot settle.
    base_measure : float64 array, optional
        Base measure w_r > 0: each candidate stands for w_r i.i.d. copies, noise F⁻¹(U^{1/w_r})
        (for Gumbel noise that is Gumbel + ln w_r).
    bits : uint64 array, optional
        The first 64 bits of every U_r, already drawn (the rest is drawn from ``rng`` as needed); by
        default all are drawn here (from a numpy Generator block by block, the same words as one draw
        of n; from anything else in one call of n words).

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The indices of the k largest noisy values, largest first: exactly the law of the ideal
        mechanism on the exact scores (the argmax, for k = 1, is ``out[0]``).

    Privacy
    -------
    None by itself: this is the sampler. With ``a = ε·u/(2Δu)`` and Gumbel noise it is the exponential
    mechanism (:mod:`dpselect.mechanisms` forms the scores); the guarantee is the selector's.

    Examples
    --------
    >>> import numpy as np
    >>> from fractions import Fraction
    >>> a = np.array([0.0, 50.0, 1.0, 40.0])
    >>> out = noisy_top_k(a, None, k=2, rng=np.random.default_rng(0), exact_score=lambda r: Fraction(a[r]))
    >>> out.shape, out.dtype, sorted(out.tolist())
    ((2,), dtype('int64'), [1, 3])
    """
    weights = base_measure
    n = a.shape[0]
    kk = min(k, n)
    if weights is None and a_err is None and n <= _CHUNK:
        # Most calls are settled by one float noise value per candidate: the words are those of one draw of
        # n (as stage 1 draws them, n <= _CHUNK), and the stages below see the same words when it cannot.
        m = _bits64(rng, n) if bits is None else np.asarray(bits, dtype=np.uint64)
        top = _bulk_top(a, m, kk, noise)
        if top is not None:
            return top
        bits = m
    if weights is None and n > _SMALL:
        if a_err is not None:
            a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
        if bits is None and isinstance(rng, np.random.Generator):
            # first words drawn block by block inside stage 1 (the same words as one draw of n: a
            # Generator's 64-bit integers are one raw output each); only the shortlist's are kept
            short, ms = _stage1(a, a_err, kk, noise, rng=rng)
        else:   # one draw of n words (the documented contract replayed by dpselect.dask)
            short, ms = _stage1(a, a_err, kk, noise, m=_bits64(rng, n) if bits is None else
                                np.asarray(bits, dtype=np.uint64))
        return _finish_sub(a, a_err, short, ms, kk, rng, noise, exact_score)
    m = _bits64(rng, n) if bits is None else np.asarray(bits, dtype=np.uint64)
    if a_err is None:
        with np.errstate(invalid="ignore"):
            a_err = _REL * np.abs(a) + _TINY
    a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
    if n <= _SMALL:
        # Few candidates: the same enclosures in scalar Python floats (numpy's per-call overhead
        # would dominate).
        ids = list(range(n))
        lo, hi = [], []
        for r, (mr, ar, er) in enumerate(zip(m.tolist(), a.tolist(), a_err.tolist())):
            nl, nh = _py_enclosure(mr, noise, None if weights is None else float(weights[r]))
            al = ar - er
            ah = (-_DBL_MAX if er != math.inf else math.inf) if ar == -math.inf else ar + er
            al = -math.inf if al != al else al
            ah = math.inf if ah != ah else ah
            lo_r, hi_r = al + nl, ah + nh
            lo_r = -math.inf if lo_r != lo_r else lo_r - 2.3e-16 * abs(lo_r)
            hi_r = math.inf if hi_r != hi_r else hi_r + 2.3e-16 * abs(hi_r)
            lo.append(lo_r)
            hi.append(hi_r)
        picked, amb = _certify(ids, lo, hi, kk)
        if picked is not None:
            return np.asarray(picked, dtype=np.int64)
        return _refine(a, np.arange(n), np.asarray(lo), np.asarray(hi), amb, kk, rng, noise, exact_score,
                       weights, m)
    return _finish(a, a_err, np.arange(n), m, kk, rng, noise, exact_score, weights)


_CHUNK = 1 << 16  # stage 1 runs over blocks of this many candidates: its temporaries stay in cache, O(block) memory


def _e_bulk(v: float) -> float:
    """The stage-1 error bound of one float noisy value v in the bulk (see _stage1)."""
    return _BULK_TAU + 2e-15 * (abs(v) + 16.0)


def _bulk_noise_into(mc: np.ndarray, a_c: np.ndarray, noise: str, out: np.ndarray) -> None:
    """out = a_c + F⁻¹(U_f), U_f = fl(mc)·2^-64, in place (one float evaluation per cell; its error in the bulk
    is bounded in _stage1's docstring). Tail cells warn (log 0): the caller decides (_stage1 silences them;
    _bulk_top has none, and a + N cannot overflow for |N| <= 14)."""
    np.multiply(mc, _INV64, out=out)       # fl(m) (round to nearest), then an exact power-of-two scaling
    if noise == "gumbel":             # a − ln(−ln U)
        np.log(out, out=out)
        np.negative(out, out=out)
        np.log(out, out=out)
        np.subtract(a_c, out, out=out)
    elif noise == "exponential":      # a − log1p(−U)
        np.negative(out, out=out)
        np.log1p(out, out=out)
        np.subtract(a_c, out, out=out)
    else:                             # a + ln 2U below 1/2, a − ln 2(1 − U) above
        out *= 2.0                    # 2U_f (exact)
        t = np.subtract(2.0, out)     # 2(1 − U_f): exact above 1/2 (Sterbenz), > 1 > 2U_f below it
        np.minimum(out, t, out=out)   # the argument of the log on either side, as in the two formulas
        np.log(out, out=out)          # ln(min) <= 0: negated above 1/2, where 1 − 2U_f (exact) is < 0
        np.subtract(1.0, t, out=t)
        np.copysign(out, t, out=out)
        out += a_c


def _bulk_top(a: np.ndarray, m: np.ndarray, kk: int, noise: str) -> np.ndarray | None:
    """The kk largest ``a_r + F⁻¹(U_r)`` in order when stage 1's float values prove them (relative score model,
    every word in the bulk, each gap beyond 4e(x) on either side), else None.

    x is within e(x) of the exact value, and the stage-2 enclosure of that value is at most
    2.5e-15·|x| + 2e-13 wide, so it lies within 4e(x) of x: whenever this answers, stage 2 certifies the same
    order from the same words without drawing more (the output and the stream are the stages' own). x + 4e(x) is
    increasing in x, so each of the kk largest need only clear its successor in the order.
    """
    n = a.shape[0]
    if np.subtract(m, _BULK_LO).max() >= _BULK_HI - _BULK_LO:   # (mod 2^64: one pass) a word in a tail
        return None
    x = np.empty(n)
    _bulk_noise_into(m, a, noise, x)
    if kk == 1:
        i = int(x.argmax())
        top = float(x[i])
        if n > 1:
            x[i] = -math.inf
            nxt = float(x.max())
            if not top - 4.0 * _e_bulk(top) > nxt + 4.0 * _e_bulk(nxt):
                return None
        return np.array([i], dtype=np.int64) if math.isfinite(top) else None
    order = np.argsort(-x, kind="stable")[:kk + 1]
    xs = x[order]
    if not np.isfinite(xs).all():   # (before any inf − inf: a warning would tell a score below −DBL_MAX)
        return None
    e = 4.0 * (_BULK_TAU + 2e-15 * (np.abs(xs) + 16.0))
    if not (xs[:-1] - e[:-1] > xs[1:] + e[1:]).all():
        return None
    return order[:kk].astype(np.int64)


def _stage1(a: np.ndarray, a_err: np.ndarray | None, kk: int, noise: str, m: np.ndarray | None = None,
            rng=None, drop: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stage 1: the candidates that can be among the kk largest ``a_r + F⁻¹(U_r)``, with their first words:
    ``(short, m[short])``, ``short`` ascending. One float noise evaluation per candidate, in blocks of _CHUNK
    (``m`` given, or drawn block by block from ``rng``: the same words, in the same order, as one draw of n).

    **Bulk** (U in [2^-20, 1 − 2^-20)): the float noise at U_f = fl(m)·2^-64 is within _BULK_TAU + 1e-15·|N|
    of the exact noise anywhere in the cell, for the three families: the conversion moves U by 2^-53
    relative, which moves −ln U (Gumbel), −ln(1 − U) (exponential; 1 − U_f is exact above 1/2) and
    ln 2U / −ln 2(1 − U) (Laplace) by at most 2^-53/min(U, 1 − U) <= 2^-33, and the cell (width 2^-64) by
    at most 2^-44. There |N| <= 14, so x = fl(a + g) is within e(x) = _BULK_TAU + 2e-15·(|x| + 16) of the
    exact a + N (|a| <= |x| + 15; the 1e-15·|a| of the score and 2^-53·|x| of the sum included); with
    per-candidate score errors ``a_err``, within a_err + e(x).

    **Tails** (the other ~n/2^19 cells, where the conversion of U or the cell width is not small against
    the noise's slope): the rigorous stage-2 enclosure at both ends of the cell (:func:`_float_enclosure`,
    error bound stated there: for the upper Gumbel tail −ln U = −log1p(−j·2^-64) with j = 2^64 − m exact).

    lk, the kk-th largest of all lower bounds (x − e(x) or a_err-widened in the bulk, the enclosures' lo in
    the tails), is a lower bound of the kk-th largest exact value, so every candidate whose upper bound is
    below lk − 2e(|lk| + 1) (the 2e covers the rounding of these bound computations) cannot be among the
    kk largest. ``drop`` (sorted ids): candidates left out altogether (already picked). During the pass lk
    is taken over the bulk seen so far (a lower bound of the final one), so
    the kept set stays small and contains the final one. Only scores with fewer than kk finite lower bounds
    (−inf / unknown scores) keep everything, and non-finite x is always kept with per-candidate errors.
    """
    n = a.shape[0]
    draw = m is None
    if kk >= n:
        mm = _bits64(rng, n) if draw else np.asarray(m, dtype=np.uint64)
        ids = np.arange(n) if drop is None else np.setdiff1d(np.arange(n), drop)
        return ids, mm[ids]
    C = min(_CHUNK, n)
    x = np.empty(C)
    d = np.empty(C) if a_err is not None else None
    hb = np.empty(C) if a_err is not None else None
    ub = np.empty(C, dtype=np.uint64)
    tb = np.empty(C, dtype=bool)
    width = np.uint64(_BULK_HI - _BULK_LO)   # m − _BULK_LO (mod 2^64) below it: the bulk
    kb = np.empty(C, dtype=bool)
    k_idx: list[np.ndarray] = []     # bulk candidates kept so far (global ids), their words and bounds
    k_m: list[np.ndarray] = []
    k_lo: list[np.ndarray] = []
    k_hi: list[np.ndarray] = []      # upper bounds (x itself on the relative path: one threshold on x)
    t_idx: list[np.ndarray] = []
    t_m: list[np.ndarray] = []
    nkept = 0
    cap = 4 * kk + 256
    thr = -math.inf                  # keep a bulk candidate unless its upper bound (or x) < thr
    for s in range(0, n, C):
        e = min(s + C, n)
        L = e - s
        mc = _bits64(rng, L) if m is None else m[s:e]
        xc = x[:L]
        a_c = a[s:e]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _bulk_noise_into(mc, a_c, noise, xc)
        np.subtract(mc, _BULK_LO, out=ub[:L])
        tail = np.greater_equal(ub[:L], width, out=tb[:L])
        ti = np.flatnonzero(tail) if tail.any() else None
        with np.errstate(invalid="ignore", over="ignore"):
            if d is None:
                keep = np.greater_equal(xc, thr, out=kb[:L])
                sel = np.flatnonzero(keep)
                if ti is not None and sel.size:
                    sel = sel[~tail[sel]]
                xs = xc[sel]
                lo_s = xs - (_BULK_TAU + 2e-15 * (np.abs(xs) + 16.0))
                hi_s = xs
            else:
                assert a_err is not None and hb is not None   # d, a_err and hb are given together
                dc = d[:L]
                np.abs(xc, out=dc)            # d = a_err + e(x): upper x + d, lower x − d
                dc += 16.0
                dc *= 2e-15
                dc += _BULK_TAU
                dc += a_err[s:e]
                dc *= 1.0 + 1e-15             # the roundings of this sum (<= 4·2^-53 relative): d >= the exact one
                hc = np.add(xc, dc, out=hb[:L])
                keep = np.logical_not(np.less(hc, thr), out=kb[:L])   # NaN upper bounds kept
                keep |= ~np.isfinite(xc)      # −inf scores ("below −DBL_MAX"): decided by the full enclosures
                sel = np.flatnonzero(keep)
                if ti is not None and sel.size:
                    sel = sel[~tail[sel]]
                hi_s = hc[sel]
                lo_s = xc[sel] - dc[sel]
                lo_s[np.isnan(lo_s)] = -np.inf
        if drop is not None and drop.size:
            dc_ = drop[(drop >= s) & (drop < e)] - s
            if dc_.size:
                if ti is not None:
                    ti = ti[~np.isin(ti, dc_)]
                if sel.size:
                    ok = ~np.isin(sel, dc_)
                    sel, lo_s, hi_s = sel[ok], lo_s[ok], hi_s[ok]
        if ti is not None:
            t_idx.append(ti + s)
            t_m.append(mc[ti])
        if sel.size:
            k_idx.append(sel + s)
            k_m.append(mc[sel])
            k_lo.append(lo_s)
            k_hi.append(hi_s)
            nkept += sel.size
        if nkept > cap:
            lows = np.concatenate(k_lo)
            if lows.size >= kk:
                lk = float(np.partition(lows, lows.size - kk)[lows.size - kk])
                t_new = lk - 2.0 * _e_bulk(abs(lk) + 1.0)
                if math.isfinite(t_new) and t_new > thr:
                    thr = t_new
                    k_idx, k_m, k_lo, k_hi = _compact(k_idx, k_m, k_lo, k_hi, thr, d is None)
                    nkept = k_idx[0].size if k_idx else 0
            if nkept > cap // 2:
                cap *= 2   # many kept above the threshold (-inf or equal scores): stop re-partitioning each block
    # tails: rigorous enclosures; then the final threshold over bulk and tail lower bounds
    if t_idx:
        ti = np.concatenate(t_idx)
        tm = np.concatenate(t_m)
        a_t = a[ti]
        e_t = _REL * np.abs(a_t) + _TINY if a_err is None else a_err[ti]
        n_lo, n_hi = _float_enclosure(tm, noise)
        with np.errstate(invalid="ignore", over="ignore"):
            s_lo, s_hi = _score_bounds(a_t, e_t)
            t_lo, t_hi = _round_out(s_lo + n_lo, s_hi + n_hi)
    else:
        ti = np.zeros(0, dtype=np.int64)
        tm = np.zeros(0, dtype=np.uint64)
        t_lo = t_hi = np.zeros(0)
    b_idx = np.concatenate(k_idx) if k_idx else np.zeros(0, dtype=np.int64)
    b_m = np.concatenate(k_m) if k_m else np.zeros(0, dtype=np.uint64)
    b_lo = np.concatenate(k_lo) if k_lo else np.zeros(0)
    b_hi = np.concatenate(k_hi) if k_hi else np.zeros(0)
    lows = np.concatenate((b_lo, t_lo))
    if lows.size >= kk:
        lk = float(np.partition(lows, lows.size - kk)[lows.size - kk])
        t_new = lk - 2.0 * _e_bulk(abs(lk) + 1.0)
        if math.isfinite(t_new) and t_new > thr:
            thr = t_new
    with np.errstate(invalid="ignore"):
        if d is None:
            kb_ = b_hi >= thr
        else:
            kb_ = ~(b_hi < thr) | ~np.isfinite(b_hi)
        kt_ = ~(t_hi < thr)
    idx = np.concatenate((b_idx[kb_], ti[kt_]))
    mm = np.concatenate((b_m[kb_], tm[kt_]))
    order = np.argsort(idx, kind="stable")
    return idx[order], mm[order]


def _compact(k_idx, k_m, k_lo, k_hi, thr, relative):
    """Drop the kept bulk candidates whose upper bound is below the new threshold."""
    idx, mm, lo, hi = (np.concatenate(v) for v in (k_idx, k_m, k_lo, k_hi))
    with np.errstate(invalid="ignore"):
        keep = hi >= thr if relative else ~(hi < thr) | ~np.isfinite(hi)
    return [idx[keep]], [mm[keep]], [lo[keep]], [hi[keep]]


def _bulk_shortlist(a: np.ndarray, m: np.ndarray, kk: int, noise: str, a_err=None) -> np.ndarray:
    """Stage 1 on given first words: the ids :func:`_stage1` keeps (never gives up on the whole array)."""
    return _stage1(a, a_err, kk, noise, m=m)[0]


def _finish_sub(a, a_err, short, ms, kk, rng, noise, exact_score):
    """_finish on the shortlist as its own problem (local ids 0..len−1, words ``ms``), ids mapped back.

    The map is increasing, so every order the later stages use (ties in _certify, the refinement's bit
    draws by id) is the one on the global ids: the same picks as on the whole array."""
    a_s = a[short]
    e_s = None if a_err is None else np.ascontiguousarray(a_err[short])

    def ex(i: int) -> Fraction:
        return exact_score(int(short[i]))

    loc = _finish(a_s, e_s, np.arange(short.size), ms, kk, rng, noise, ex, None)
    return short[loc]


def _finish(a, a_err, short, m, kk, rng, noise, exact_score, weights):
    """Stage 2 on a shortlist: float enclosures at both ends of each 64-bit cell, certify the top k
    in order, else refine exactly (stage 3)."""
    short, lo, hi = _enclosed_shortlist(a, a_err, short, m, kk, noise, weights)
    ids = short.tolist()
    picked, amb = _certify(ids, lo.tolist(), hi.tolist(), kk)
    if picked is not None:
        return np.asarray(picked, dtype=np.int64)
    return _refine(a, short, lo, hi, amb, kk, rng, noise, exact_score, weights, m)


def _enclosed_shortlist(a, a_err, short, m, kk, noise, weights):
    """Rigorous float enclosures [lo, hi] of the noisy scores of ``short`` (both ends of each 64-bit cell of
    the first words ``m``), and the candidates left once every one whose hi is below the kk-th largest lo
    is dropped: ``(short, lo, hi)``."""
    a_s = a[short]
    e_s = _REL * np.abs(a_s) + _TINY if a_err is None else np.asarray(a_err)[short]
    n_lo, n_hi = _float_enclosure(m[short], noise, None if weights is None else weights[short])
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a_s, e_s)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
    if lo.size > kk:
        lk = np.partition(lo, lo.size - kk)[lo.size - kk]
        if lk > -np.inf:
            keep = hi >= lk
            short, lo, hi = short[keep], lo[keep], hi[keep]
    return short, lo, hi


def _refine(a, short, s_lo, s_hi, amb, kk, rng, noise, exact_score, weights, m):
    """Stage 3: exact refinement of the ambiguous candidates only. Float enclosures of the others stay
    valid (all enclosures are of the same absolute quantity a_r + N_r), so they mix with decimals."""
    ids = short.tolist()
    ref = Fraction(exact_score(min(amb)))
    R = _Refiner(rng, noise, exact_score, weights, m, ref)
    # the float enclosures of the others, shifted by the same exact reference (rounded outwards)
    Dr = _Dec(60 + _digits(ref))
    ref_lo, ref_hi = Dr.frac(ref)
    dlo = {r: Dr.down(Dr.ctx.subtract(decimal.Decimal(float(v)), ref_hi)) for r, v in zip(ids, s_lo)}
    dhi = {r: Dr.up(Dr.ctx.subtract(decimal.Decimal(float(v)), ref_lo)) for r, v in zip(ids, s_hi)}
    refined = set()   # candidates given an exact enclosure (ints)
    for _ in range(100_000):
        again = sorted(r for r in amb if r in refined)
        R.extend(again)  # 64 more bits for those the exact scores alone did not settle
        for r in amb:
            dlo[r], dhi[r] = R.interval(r)
            refined.add(r)
        ids = list(dlo)
        picked, amb = _certify(ids, [dlo[r] for r in ids], [dhi[r] for r in ids], kk)
        if picked is not None:
            return np.asarray(picked, dtype=np.int64)
        srt = sorted((dlo[r] for r in ids), reverse=True)
        lk = srt[kk - 1]
        for r in ids:
            if dhi[r] < lk and r not in amb:
                del dlo[r], dhi[r]
    raise RuntimeError("exact noisy-max refinement did not converge")  # probability 2^-(64·100000)


def _digits(f: Fraction) -> int:
    """An upper bound on the number of decimal digits before the point of |f| (0 for |f| < 1)."""
    return max(0, (abs(f.numerator).bit_length() - f.denominator.bit_length() + 1) * 30103 // 100000 + 2)


def _score_bounds(a, a_err):
    """[a − err, a + err] rounded outwards; a = −inf with a finite err means "below −DBL_MAX"; err = inf
    means unknown.

    Each end is stepped one ulp outwards: a ± err rounds to nearest, and when err >> |a| the later sum with
    the noise can cancel to near 0, where :func:`_round_out`'s relative widening no longer covers that
    first rounding (up to half an ulp of a ± err)."""
    lo = np.nextafter(a - a_err, -np.inf)
    hi = np.where(np.isneginf(a) & np.isfinite(a_err), -_DBL_MAX, np.nextafter(a + a_err, np.inf))
    return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)


def _round_out(lo, hi):
    """Widen by one ulp for the rounding of the final float addition; NaN (inf − inf) -> unbounded."""
    with np.errstate(invalid="ignore", over="ignore"):
        lo = lo - 2.3e-16 * np.abs(lo)
        hi = hi + 2.3e-16 * np.abs(hi)
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo, hi


def shortlist_top_k(a: np.ndarray, err: np.ndarray | None, first_words: np.ndarray, k: int, noise: str,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """Indices of every candidate that can be among the k largest ``a + F⁻¹(U)``, given U's first 64-bit word.

    ``a`` are scores with error bound ``err`` (``None``: the relative model of exact inputs), ``first_words``
    the first 64 bits of each candidate's uniform, as :func:`noisy_top_k` draws them. This is the sampler's
    stages 1 and 2 (one float noise evaluation per candidate with the bulk error bound, then enclosures at
    both ends of each 64-bit cell on the survivors) without any refinement: a rigorous superset of the top
    k, usually exactly k candidates. A distributed selector runs it per partition and hands the union of the
    shortlists, with their first words, to :func:`noisy_top_k`, which finishes exactly.

    Parameters
    ----------
    a : float64 array of shape (n,)
        Scores (as for :func:`noisy_top_k`).
    err : float64 array of shape (n,) or None
        Their error bounds; ``None``: the relative model of exact inputs.
    first_words : uint64 array of shape (n,)
        The first 64-bit word of each candidate's uniform.
    k : int
        How many candidates the final selection takes.
    noise : "gumbel", "exponential" or "laplace"
    weights : float64 array of shape (n,), optional
        The base measure, as :func:`noisy_top_k` reads it (then only the enclosures of stage 2 run).

    Returns
    -------
    numpy.ndarray of int64, shape (s,) with k <= s <= n
        Indices (increasing) of the candidates that can still be among the k largest.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([0.0, 50.0, 1.0, 40.0])
    >>> words = np.random.default_rng(0).integers(0, 2**64, size=4, dtype=np.uint64)
    >>> shortlist_top_k(a, None, words, 2, "gumbel").tolist()
    [1, 3]
    """
    n = a.shape[0]
    if n <= k:
        return np.arange(n, dtype=np.int64)
    if err is not None:
        err = np.broadcast_to(np.asarray(err, dtype=np.float64), a.shape)
    # stage 1's bulk bound is for unit weights; with a base measure every candidate gets stage 2's enclosure
    short = np.arange(n) if weights is not None else _bulk_shortlist(a, first_words, k, noise, err)
    return np.asarray(_enclosed_shortlist(a, err, short, first_words, k, noise, weights)[0], dtype=np.int64)
