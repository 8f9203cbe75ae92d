"""Top-k with fresh noise per pick (exponential and Laplace noise), revealing only the candidates that can win a
pick (:func:`noisy_top_k_peeled`); its tuning switches and work counters (``_PEEL_*``) are read here."""
from __future__ import annotations

import decimal
import functools
import math
from fractions import Fraction
from typing import Callable

import numpy as np

from .._exact_random import Dec as _Dec
from . import _topk
from ._noise import _HALF_U64, _REL, _TINY, _bits64, _float_enclosure, _log_uniform_point
from ._topk import _round_out, _score_bounds, _stage1, noisy_top_k


# ---------------------------------------------------------------------------------------------
# top-k with fresh noise per pick (exponential and Laplace noise), lazily
# ---------------------------------------------------------------------------------------------
_LN2 = math.log(2.0)
_PEEL_EXPECTED = 32.0   # expected number of tail candidates revealed per pick (sets the water level)
_PEEL_BLOCK = 1 << 12  # the levels' per-block counts locate a revealed position by scanning one block
#: True: a peeled pick whose head and revealed candidates do not clear the walls scans every candidate (the
#: previous fallback; same law, tests compare the two). False: :func:`_peel_lowered` first.
_PEEL_FULL_FALLBACK = False
#: Work counters of noisy_top_k_peeled's fallback (tests and benchmarks read them): picks finished by the
#: refined fallback, by the full scan, and the candidates each examined in total.
_PEEL_STATS = {"refined": 0, "full": 0, "examined": 0}
#: The lowered levels give up (for the scan of all n) beyond max(this, n/16) expected marks.
_PEEL_MARK_MIN = 256


def _geometric_exact(m: int, j: int, limit: int, rng) -> int:
    """G = floor(ln U / ln(1 − 2^-j)) (a Geometric(2^-j) number of failures), capped at ``limit``, for the
    uniform U whose first 64 bits are ``m``; more bits are drawn while decimal enclosures cannot decide."""
    nb = 64
    while True:
        D = _Dec(nb + 60)
        c = D.ctx
        scale = decimal.Decimal(1 << nb)
        u_lo = c.divide(decimal.Decimal(m), scale)
        u_hi = c.divide(decimal.Decimal(m + 1), scale)
        one_minus_p = c.subtract(decimal.Decimal(1), c.divide(decimal.Decimal(1), decimal.Decimal(1 << j)))  # exact
        lq = D.ln(one_minus_p, one_minus_p)   # ln(1 − p) < 0
        # q(U) = ln U / ln(1 − p) is decreasing in U: [q(u_hi), q(u_lo)] encloses q(U)
        if u_lo.is_zero():
            q_hi = D.inf
        else:
            lu = D.ln(u_lo, u_lo)
            q_hi = D.up(c.divide(lu[0], lq[1]))
        lu = D.ln(u_hi, u_hi)
        q_lo = D.down(c.divide(lu[1], lq[0]))
        if q_lo >= limit:
            return limit
        g_lo = int(q_lo.to_integral_value(rounding=decimal.ROUND_FLOOR))
        if q_hi != D.inf and int(q_hi.to_integral_value(rounding=decimal.ROUND_FLOOR)) == g_lo:
            return g_lo
        m = (m << 64) | int(_bits64(rng, 1)[0])
        nb += 64


def _geometric_gaps(js: np.ndarray, limits: np.ndarray, rng) -> np.ndarray:
    """One Geometric(2^-js[i]) gap per entry, capped at limits[i], exactly (float enclosures decide
    almost every draw; the rest go to :func:`_geometric_exact` with more bits)."""
    m = _bits64(rng, js.size)
    lp = np.log1p(-np.ldexp(1.0, -js.astype(np.int64)))               # ln(1 − p) < 0, a few ulp
    low = m < _HALF_U64
    with np.errstate(over="ignore"):
        jm = (~m) + np.uint64(1)
    lu_lo = _log_uniform_point(np.where(low, m, jm), low)              # ln of the cell's left end
    lu_hi = _log_uniform_point(np.where(low, m + np.uint64(1), jm - np.uint64(1)), low)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q_min = (lu_hi / lp) * (1.0 - 1e-13) - 1e-300                  # q is decreasing in U
        q_max = (lu_lo / lp) * (1.0 + 1e-13) + 1e-300
    lim = limits.astype(np.float64)
    out = np.where(q_min >= lim, limits, -1)
    ok = (out < 0) & np.isfinite(q_max) & (np.floor(q_min) == np.floor(q_max))
    out = np.where(ok, np.floor(np.where(ok, q_min, 0.0)).astype(np.int64), out)
    for i in np.flatnonzero(out < 0).tolist():
        out[i] = _geometric_exact(int(m[i]), int(js[i]), int(limits[i]), rng)
    return np.minimum(out, limits)


def _noise_point_hi(j: int, noise: str) -> float:
    """An upper bound of F⁻¹(1 − 2^-j) (exponential: j ln 2, Laplace: (j − 1) ln 2)."""
    v = (j if noise == "exponential" else j - 1) * _LN2
    return v * (1.0 + 1e-15) + 1e-300


def noisy_top_k_peeled(a: np.ndarray, a_err: np.ndarray | float | None, k: int, rng: np.random.Generator, *, noise: str,
                       exact_score: Callable[[int], Fraction]) -> np.ndarray:
    """k sequential picks, each the exact argmax of ``a_r + N_r`` over the candidates not yet picked with
    **fresh** i.i.d. noise (report-noisy-max top-k with exponential or Laplace noise, ε/k each), without
    k full passes.

    Every candidate r gets a *level* j_r >= 0 from its score's upper bound A_r: j_r = 0 for the
    candidates at or above a water level W (logsumexp of the scores − ln 32; at most ~32 of them, the
    *head*), else the least j with A_r + F⁻¹(1 − 2^-j) >= W (capped at 63). In every pick:

    * the head gets fresh 64-bit uniforms;
    * a tail candidate is *revealed* when its uniform's first j_r bits are all ones (probability 2^-j_r,
      independently): for each group of equal j the revealed positions are drawn exactly with
      Geometric(2^-j) gaps, and a revealed candidate's uniform is those j ones followed by fresh bits
      (its exact conditional law); about 32 candidates are revealed per pick;
    * every unrevealed tail candidate has U_r < 1 − 2^-j_r, so its value is below its *wall*
      A_r + F⁻¹(1 − 2^-j_r) <= max wall. If the best float lower bound among head and revealed
      candidates is above the max wall, the pick is the exact argmax over head and revealed (certified by
      the float enclosures, else :func:`noisy_top_k` on them with the same bits). Otherwise (rare: about
      one pick in 150 at the default level) :func:`_peel_lowered` lowers the levels of the groups whose
      wall is too high and reveals (marks) exactly the further candidates that can still beat the best
      lower bound, by rejection sampling of their conditional law, until the walls clear it; the work is
      a few dozen candidates, not n. Only if that would need more than max(256, n/16) marks are the
      unrevealed candidates' uniforms all drawn (conditioned on their first bits not all ones, at their
      current levels) and :func:`noisy_top_k` decides over all remaining candidates with those bits.

    The decisions use only the first 64 bits of each uniform, so every later step sees the exact
    conditional law: the output is exactly the law of k peeled exact picks. Candidates whose score is
    unknown (err inf) are in the head.

    Parameters
    ----------
    a, a_err, exact_score
        As in :func:`noisy_top_k`.
    k : int
        Number of picks (1 <= k <= len(a)).
    rng : numpy.random.Generator
        The only source of randomness.
    noise : "exponential" or "laplace"
        The noise family (Gumbel noise needs no peeling: :func:`noisy_top_k` gives the same law).

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The picks, in the order picked (distinct).

    Examples
    --------
    >>> import numpy as np
    >>> from fractions import Fraction
    >>> a = np.array([0.0, 50.0, 1.0, 40.0, 2.0])
    >>> out = noisy_top_k_peeled(a, None, 2, np.random.default_rng(0), noise="exponential",
    ...                          exact_score=lambda r: Fraction(a[r]))
    >>> out.shape, out.dtype, out.tolist()
    ((2,), dtype('int64'), [1, 3])
    """
    return _noisy_top_k_peeled(a, a_err, k, rng, noise=noise, exact_score=exact_score)


def _noisy_top_k_peeled(a: np.ndarray, a_err: np.ndarray | float | None, k: int, rng: np.random.Generator, *,
                        noise: str, exact_score: Callable[[int], Fraction], level_shift: float = 0.0) -> np.ndarray:
    """:func:`noisy_top_k_peeled`; ``level_shift`` moves the water level W (tests: the law must not change)."""
    n = a.shape[0]
    kk = min(k, n)
    extra = 0 if noise == "exponential" else 1
    # Levels, counts, head and the groups' maxima in blocks of _CHUNK (no n-sized temporaries but the int8
    # levels; the same float operations element by element as one pass, and the same pairwise sum).
    C = min(_topk._CHUNK, n)  # one block size with stage 1 (tests patch it there)
    if a_err is None and bool(np.isfinite(a).all()):
        err = None                      # relative model _REL·|a| + _TINY, bounded per group below
        ref = float(a.max())

        def up_of(lo: int, hi: int) -> np.ndarray:
            return a[lo:hi]
    else:
        if a_err is None:
            with np.errstate(invalid="ignore"):
                a_err = _REL * np.abs(a) + _TINY
        err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)

        def up_of(lo: int, hi: int) -> np.ndarray:
            with np.errstate(invalid="ignore", over="ignore"):
                return np.nextafter(_score_bounds(a[lo:hi], err[lo:hi])[1], np.inf)
        ref = -math.inf
        for s0 in range(0, n, C):
            u_c = up_of(s0, s0 + C)
            u_c = u_c[np.isfinite(u_c)]
            if u_c.size:
                ref = max(ref, float(u_c.max()))
        if ref == -math.inf:
            return _peel_passes(a, err, kk, rng, noise, exact_score)

    def exp_sum(lo: int, hi: int) -> float:
        # numpy's pairwise summation tree, with leaves of at most C elements summed by numpy itself
        if hi - lo <= C:
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                u_c = up_of(lo, hi)
                if err is not None:
                    u_c = np.where(np.isfinite(u_c), u_c, -np.inf)
                return np.exp(u_c - ref).sum()
        n2 = (hi - lo) // 2
        n2 -= n2 % 8
        return exp_sum(lo, lo + n2) + exp_sum(lo + n2, hi)

    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        lse = ref + math.log(float(exp_sum(0, n)))
        W = lse - math.log(_PEEL_EXPECTED) + level_shift + extra * _LN2
    lev = np.empty(n, dtype=np.int8)
    gmax = np.full(64, -np.inf)          # per level: the largest a (or upper bound) and the largest |a|
    gmag = np.zeros(64)
    nsub = -(-n // _PEEL_BLOCK)
    block_counts = np.zeros((nsub, 64), dtype=np.int64)   # candidates of each level per block of _PEEL_BLOCK
    sub_of = (np.arange(C) // _PEEL_BLOCK) * 64
    for s0 in range(0, n, C):
        u_c = up_of(s0, s0 + C)
        L = u_c.shape[0]
        with np.errstate(invalid="ignore", over="ignore"):
            if err is None:
                x = W - u_c
                x *= 1.0 / _LN2
                np.ceil(x, out=x)
                np.clip(x, 0.0, 63.0, out=x)
                lev_c = x.astype(np.int8)
            else:
                fin = np.isfinite(u_c)
                jf = np.clip(np.ceil((W - u_c) / _LN2), 0.0, 63.0)
                lev_c = np.where(fin, jf, 0.0).astype(np.int8)          # unknown scores: head
        lev_c[lev_c <= extra] = 0                                        # 0: head
        lev[s0:s0 + L] = lev_c
        np.maximum.at(gmax, lev_c, u_c)
        if err is None:
            np.maximum.at(gmag, lev_c, np.abs(u_c))
        b0 = s0 // _PEEL_BLOCK
        nb_c = -(-L // _PEEL_BLOCK)
        block_counts[b0:b0 + nb_c] += np.bincount(sub_of[:L] + lev_c, minlength=nb_c * 64)[:nb_c * 64].reshape(nb_c, 64)
    counts = block_counts.sum(axis=0)
    h = int(counts[0])
    head = np.flatnonzero(lev == 0)
    if h == n:
        return _peel_passes(a, _err_array(a, err), kk, rng, noise, exact_score)
    present = np.flatnonzero(counts[1:]) + 1
    sizes = counts[present].astype(np.int64)
    js = present.astype(np.int64)
    if err is None:   # max of a + _REL·|a| + _TINY over a group <= max a + _REL·max |a| + _TINY
        walls = gmax[js] + (_REL * gmag[js] + _TINY) * (1.0 + 1e-15)
    else:
        walls = gmax[js]
    wall_hi = max(float(w) + _noise_point_hi(int(j), noise) for w, j in zip(walls, js))
    wall_hi += 1e-15 * abs(wall_hi) + 1e-300
    if not math.isfinite(wall_hi):
        return _peel_passes(a, _err_array(a, err), kk, rng, noise, exact_score)
    nb = js.size
    err_full = err

    # -- reveal, for all picks at once: head bits and the revealed tail candidates with their bits
    m_head = _bits64(rng, kk * h).reshape(kk, h)
    pick_of, bucket_of, pos = [], [], []
    cur_pick = np.repeat(np.arange(kk), nb)
    cur_b = np.tile(np.arange(nb), kk)
    cur_pos = np.full(cur_pick.size, -1, dtype=np.int64)
    R = 1
    while cur_pick.size:
        # R gaps at once per (pick, group) still running: positions of the next R revealed candidates
        rb = np.repeat(cur_b, R)
        gaps = _geometric_gaps(js[rb], np.repeat(sizes[cur_b], R), rng).reshape(-1, R)
        cum = cur_pos[:, None] + np.cumsum(gaps + 1, axis=1)
        hit = cum < sizes[cur_b][:, None]
        pick_of.append(np.broadcast_to(cur_pick[:, None], hit.shape)[hit])
        bucket_of.append(np.broadcast_to(cur_b[:, None], hit.shape)[hit])
        pos.append(cum[hit])
        more = hit[:, -1]
        cur_pick, cur_b, cur_pos = cur_pick[more], cur_b[more], cum[more, -1]
        R = 16
    x_pick = np.concatenate(pick_of) if pick_of else np.zeros(0, dtype=np.int64)
    x_b = np.concatenate(bucket_of) if bucket_of else np.zeros(0, dtype=np.int64)
    x_id = (_level_members(lev, block_counts, js[x_b], np.concatenate(pos)) if pos
            else np.zeros(0, dtype=np.int64))
    xj = js[x_b].astype(np.uint64)
    top = ((np.uint64(1) << xj) - np.uint64(1)) << (np.uint64(64) - xj)
    x_m = (_bits64(rng, x_id.size) >> xj) | top

    # -- float enclosures of every (pick, candidate) entry
    e_pick = np.concatenate((np.repeat(np.arange(kk), h), x_pick))
    e_id = np.concatenate((np.tile(head, kk), x_id))
    e_m = np.concatenate((m_head.ravel(), x_m))
    n_lo, n_hi = _float_enclosure(e_m, noise)
    a_e = a[e_id]
    if err_full is None:
        with np.errstate(invalid="ignore"):
            e_err = _REL * np.abs(a_e) + _TINY
    else:
        e_err = err_full[e_id]
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a_e, e_err)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
    srt = np.lexsort((-lo, e_pick))                  # by pick, then lower bound descending
    bounds = np.searchsorted(e_pick[srt], np.arange(kk + 1))
    ids_l, lo_l, hi_l, m_l = e_id[srt].tolist(), lo[srt].tolist(), hi[srt].tolist(), e_m[srt]
    by_hi = np.lexsort((-hi[srt], e_pick[srt])).tolist()   # positions (in srt order) by pick, hi descending

    picks: list[int] = []
    removed: set[int] = set()
    for p in range(kk):
        s0, s1 = int(bounds[p]), int(bounds[p + 1])
        # the best alive lower bound, and the largest upper bound of the other alive entries (both lists are
        # sorted, so this looks at a few entries unless many of them were picked already)
        best = next((q for q in range(s0, s1) if ids_l[q] not in removed), -1)
        best_lo = lo_l[best] if best >= 0 else -math.inf
        second_hi = next((hi_l[q] for q in by_hi[s0:s1] if q != best and ids_l[q] not in removed), -math.inf)
        if best >= 0 and best_lo > second_hi and best_lo > wall_hi:
            win = ids_l[best]
        else:
            alive = [q for q in range(s0, s1) if ids_l[q] not in removed]
            if best >= 0 and best_lo > wall_hi:
                sub = np.asarray([ids_l[q] for q in alive], dtype=np.int64)
                bits = m_l[np.asarray(alive, dtype=np.int64)]

                def ex(i: int, sub: np.ndarray = sub) -> Fraction:
                    return exact_score(int(sub[i]))

                j = int(noisy_top_k(a[sub], None if err_full is None else err_full[sub], k=1, rng=rng, noise=noise,
                                    exact_score=ex, bits=bits)[0])
                win = int(sub[j])
            else:
                out = None
                if not _PEEL_FULL_FALLBACK:
                    out = _peel_lowered(a, err_full, [ids_l[q] for q in alive], m_l[np.asarray(alive, dtype=np.int64)],
                                        [lo_l[q] for q in alive], walls, js, sizes, lev, block_counts, rng, noise,
                                        removed, max(_PEEL_MARK_MIN, n // 16), exact_score)
                if isinstance(out, int):
                    win = out
                else:
                    # every remaining candidate, in place (no n-sized copies): the picked ones are left out of
                    # stage 1, the shortlist is finished with increasing ids (the same picks as on the subarray)
                    _PEEL_STATS["full"] += 1
                    _PEEL_STATS["examined"] += n
                    known, jc = out if out is not None else ({ids_l[q]: int(m_l[q]) for q in alive}, js)
                    bits = _fallback_bits(n, known, lev, js, rng, jc)
                    drop = np.asarray(sorted(removed), dtype=np.int64)
                    short, ms = _stage1(a, err_full, 1, noise, m=bits, drop=drop)
                    win = int(_topk._finish_sub(a, err_full, short, ms, 1, rng, noise, exact_score)[0])
        picks.append(win)
        removed.add(win)
    return np.asarray(picks, dtype=np.int64)


def _peel_lowered(a, err, ids, words, lo, walls, js, sizes, lev, block_counts, rng, noise, removed, cap, exact_score):
    """One peeled pick whose head and revealed candidates (``ids``, first ``words``, float lower bounds
    ``lo``) do not clear the walls, finished by lowering the groups' levels instead of scanning all n.

    An unrevealed candidate of a group of level j has a uniform U conditioned on its first j bits not all
    ones. Let T be the best lower bound drawn so far (a lower bound of the winner's value). For each group
    whose wall w + F⁻¹(1 − 2^-j) is not below T, pick a lower level j' < j (the largest whose wall is
    below T, at most 3 levels down per round; j' = 0: every member) and *mark* the members whose first j'
    bits are all ones, by exact rejection sampling of their conditional law: Bernoulli(2^-j') marks over
    the group's positions (Geometric gaps; positions of candidates drawn already or picked are ignored),
    each marked candidate a word with its first j' bits ones and fresh bits after them, and if its first j
    bits are then all ones it is drawn again from scratch (fresh words until the first j bits are not all
    ones) and stays marked only if its first j' bits are ones. So each unrevealed candidate is marked with
    exactly its conditional probability and gets a word of exactly its conditional law, independently, and
    an unmarked one is left with U conditioned on its first j' bits not all ones: the same state at level
    j'. Repeat with the new T until every wall is below T; then every candidate not drawn is below T,
    below the winner, and never needed (each pick has fresh noise): the pick over the drawn candidates
    (:func:`noisy_top_k` with their words) is the pick over all. The work is the number drawn, about the
    number of candidates whose noisy value can exceed T, not n.

    Returns the pick, or ``(known, jc)`` (the words drawn so far by id, the current level per group) when
    more than ``cap`` marks would be needed: the caller then draws every other tail word (at its current
    level) and scans all candidates, which is the same law.
    """
    ids = list(ids)
    words = [np.asarray(words, dtype=np.uint64)]
    T = float(np.max(lo)) if len(lo) else -math.inf
    skip = set(ids) | removed
    jc = js.astype(np.int64).copy()
    total = 0.0
    while True:
        jn = jc.copy()
        for g in range(jc.size):
            if jc[g] == 0:
                continue

            def wall(jj: int, w: float = float(walls[g])) -> float:
                v = w + _noise_point_hi(jj, noise)
                return v + 1e-15 * abs(v) + 1e-300

            if wall(int(jc[g])) < T:
                continue
            jj = int(jc[g]) - 1
            while jj >= 1 and not wall(jj) < T:
                jj -= 1
            jn[g] = max(jj, int(jc[g]) - 3, 0)
        todo = np.flatnonzero(jn < jc)
        if todo.size == 0:
            break
        expected = float(np.sum(sizes[todo] * np.ldexp(1.0, -jn[todo])))
        total += expected
        if total > cap:
            return {i: int(w) for i, w in zip(ids, np.concatenate(words).tolist())}, jc
        # marked positions per group: all of them where j' = 0, else Bernoulli(2^-j') (Geometric gaps)
        g_of, pos_of = [], []
        for g in todo[jn[todo] == 0].tolist():
            g_of.append(np.full(int(sizes[g]), g, dtype=np.int64))
            pos_of.append(np.arange(int(sizes[g]), dtype=np.int64))
        cur_g = todo[jn[todo] > 0]
        cur_pos = np.full(cur_g.size, -1, dtype=np.int64)
        R = int(min(4096, max(8, math.ceil(expected / max(1, cur_g.size)) + 8)))
        while cur_g.size:
            gaps = _geometric_gaps(np.repeat(jn[cur_g], R), np.repeat(sizes[cur_g], R), rng).reshape(-1, R)
            cum = cur_pos[:, None] + np.cumsum(gaps + 1, axis=1)
            hit = cum < sizes[cur_g][:, None]
            g_of.append(np.broadcast_to(cur_g[:, None], hit.shape)[hit])
            pos_of.append(cum[hit])
            more = hit[:, -1]
            cur_g, cur_pos = cur_g[more], cum[more, -1]
            R = 64
        mg = np.concatenate(g_of) if g_of else np.zeros(0, dtype=np.int64)
        new_ids = (_level_members(lev, block_counts, js[mg], np.concatenate(pos_of)) if mg.size
                   else np.zeros(0, dtype=np.int64))
        keep = np.asarray([i not in skip for i in new_ids.tolist()], dtype=bool)
        new_ids, mg = new_ids[keep], mg[keep]
        j0 = jc[mg].astype(np.uint64)
        j1 = jn[mg].astype(np.uint64)
        top = ((np.uint64(1) << j0) - np.uint64(1)) << (np.uint64(64) - j0)   # (j = 0: no bit; not reached)
        top1 = np.where(j1 > 0, ((np.uint64(1) << j1) - np.uint64(1)) << (np.uint64(64) - np.maximum(j1, 1)),
                        np.uint64(0))
        w_new = (_bits64(rng, new_ids.size) >> j1) | top1
        bad = (w_new & top) == top
        while bad.any():             # rejected: drawn again from scratch
            w_new[bad] = _bits64(rng, int(bad.sum()))
            bad = (w_new & top) == top
        ok = (w_new & top1) == top1
        new_ids, w_new = new_ids[ok], w_new[ok]
        jc = jn
        if new_ids.size:
            n_lo, _ = _float_enclosure(w_new, noise)
            a_n = a[new_ids]
            e_n = _REL * np.abs(a_n) + _TINY if err is None else err[new_ids]
            with np.errstate(invalid="ignore", over="ignore"):
                s_lo, _ = _score_bounds(a_n, e_n)
                l_n, _ = _round_out(s_lo + n_lo, s_lo + n_lo)
            T = max(T, float(np.max(l_n)))
            ids += new_ids.tolist()
            words.append(w_new)
            skip.update(new_ids.tolist())
    _PEEL_STATS["refined"] += 1
    _PEEL_STATS["examined"] += len(ids)
    sub = np.asarray(ids, dtype=np.int64)
    bits = np.concatenate(words)

    def ex(i: int) -> Fraction:
        return exact_score(int(sub[i]))

    j = int(noisy_top_k(a[sub], None if err is None else err[sub], k=1, rng=rng, noise=noise, exact_score=ex, bits=bits)[0])
    return int(sub[j])


def _level_members(lev: np.ndarray, block_counts: np.ndarray, qj: np.ndarray, qpos: np.ndarray) -> np.ndarray:
    """The id of the qpos[i]-th candidate (0-based, in id order) of level qj[i], from per-block level counts."""
    out = np.empty(qj.size, dtype=np.int64)
    for j in np.unique(qj).tolist():
        sel = np.flatnonzero(qj == j)
        cum = np.cumsum(block_counts[:, j])
        blk = np.searchsorted(cum, qpos[sel], side="right")
        before = np.where(blk > 0, cum[np.maximum(blk - 1, 0)], 0)
        for b in np.unique(blk).tolist():
            here = sel[blk == b]
            lo = b * _PEEL_BLOCK
            members = np.flatnonzero(lev[lo:lo + _PEEL_BLOCK] == j) + lo
            out[here] = members[qpos[here] - before[blk == b]]
    return out


def _fallback_bits(n, known, lev, js, rng, jc=None):
    """First words of every candidate: ``known`` ones as drawn, every other tail candidate's drawn conditioned
    on its first j bits not all ones (rejection: exact), level by level (ascending j), each level's candidates
    in id order. (Words of head or picked candidates not in ``known`` are left 0: they are not used.)
    ``jc``: the level each group's unknown members are conditioned at now (default ``js``; lower after
    :func:`_peel_lowered`; 0: none left unknown)."""
    m = np.zeros(n, dtype=np.uint64)
    for jj, jnow in zip(js.tolist(), (js if jc is None else jc).tolist()):
        ids = np.flatnonzero(lev == jj)
        if jnow == 0:
            continue   # every member was marked (its word is known) or is not needed
        j = np.uint64(jnow)
        top = ((np.uint64(1) << j) - np.uint64(1)) << (np.uint64(64) - j)
        words = _bits64(rng, ids.size)
        bad = (words & top) == top
        while bad.any():
            words[bad] = _bits64(rng, int(bad.sum()))
            bad = (words & top) == top
        m[ids] = words
    if known:
        m[np.fromiter(known.keys(), dtype=np.int64, count=len(known))] = np.fromiter(
            known.values(), dtype=np.uint64, count=len(known))
    return m


def _err_array(a, err):
    if err is not None:
        return err
    with np.errstate(invalid="ignore"):
        return _REL * np.abs(a) + _TINY


def _sub_score(exact_score: Callable[[int], Fraction], sub: np.ndarray, i: int) -> Fraction:
    # the exact score of candidate i of the sub-array ``sub`` (a named function: mypy cannot type a lambda's default)
    return exact_score(int(sub[i]))


def _peel_passes(a, err, kk, rng, noise, exact_score):
    """The definition: k exact passes over the remaining candidates, fresh noise each."""
    remaining = np.arange(a.shape[0])
    picks = []
    for _ in range(kk):
        sub = remaining
        j = int(noisy_top_k(a[sub], err[sub], k=1, rng=rng, noise=noise,
                            exact_score=functools.partial(_sub_score, exact_score, sub))[0])
        picks.append(int(sub[j]))
        remaining = np.delete(remaining, j)
    return np.asarray(picks, dtype=np.int64)
