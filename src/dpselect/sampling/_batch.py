"""Many independent exact noisy top-k draws over one score vector at once (:func:`noisy_top_k_batch`).

Vectorised across draws: the words of every draw are drawn in blocks of rows (the same words, in the same
order, as one draw of ``size × n``), each candidate's noisy value is evaluated once in float64 with the bulk
error bound of :func:`._topk._stage1`, and a row whose picks clear that bound (every word in the bulk, each
pick's lower bound above the upper bound of everything after it) is answered at once. Only the other rows
(a word in a tail, or a near-tie: rare) take the exact path of one draw, after the whole round's words are
drawn, in row order: whenever the fast test answers, the enclosures of the exact path certify the same picks
from the same words without drawing more, so the output and the stream are those of the exact path alone.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from . import _topk
from ._noise import _REL, _TINY, _bits64, _float_enclosure
from ._topk import _BULK_TAU, _bulk_noise_into, _certify, _refine, _round_out, _score_bounds

#: words per block of rows in the fast pass (its few temporaries stay in cache)
_BLOCK_WORDS = 1 << 16


def noisy_top_k_batch(
    a: np.ndarray,
    a_err: np.ndarray | float | None,
    k: int,
    size: int,
    rng: np.random.Generator,
    *,
    noise: str = "gumbel",
    exact_score: Callable[[int], Fraction],
    weights: np.ndarray | None = None,
    peel: bool = False,
) -> np.ndarray:
    """``size`` independent draws of :func:`noisy_top_k` (shape (size, k)), vectorised over draws.

    ``peel=True``: k rounds with fresh noise on the remaining candidates (report-noisy-max top-k with
    exponential or Laplace noise) instead of the k largest of one draw. Each round draws ``size × n`` words
    (row after row); draws that one float evaluation per candidate cannot certify are finished one by one,
    in row order, with the float enclosures and the exact refinement of :func:`noisy_top_k`.

    Parameters
    ----------
    a, a_err, noise, exact_score
        As in :func:`noisy_top_k`.
    k : int
        Indices per draw (1 <= k <= len(a)).
    size : int
        Number of independent draws (>= 1).
    rng : numpy.random.Generator
        The only source of randomness.
    weights : float64 array, optional
        A base measure, as ``base_measure`` of :func:`noisy_top_k`.
    peel : bool
        Fresh noise per pick (see above) instead of one noise draw per candidate.

    Returns
    -------
    numpy.ndarray of int64, shape (size, k)
        Row i is the i-th draw, largest first; every row has the law of one :func:`noisy_top_k` call
        (or of k peeled picks): the exact noisy top-k, the guarantee being the selector's that forms ``a``.

    Examples
    --------
    >>> import numpy as np
    >>> from fractions import Fraction
    >>> a = np.array([0.0, 50.0, 1.0, 40.0])
    >>> out = noisy_top_k_batch(a, None, 2, 5, np.random.default_rng(0), exact_score=lambda r: Fraction(a[r]))
    >>> out.shape, out.dtype, {tuple(sorted(row)) for row in out.tolist()}
    ((5, 2), dtype('int64'), {(1, 3)})
    """
    n = a.shape[0]
    kk = min(k, n)
    err = a_err
    if a_err is None:
        with np.errstate(invalid="ignore"):
            a_err = _REL * np.abs(a) + _TINY
    a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a, a_err)
    # the fast pass: unit weights (its error bound), finite scores and errors (so -inf marks a taken candidate)
    fast = weights is None and n > 1 and bool(np.isfinite(a).all()) and bool(np.isfinite(a_err).all())
    extra = None if err is None or not fast else 2.0 * a_err   # per-candidate score errors, both ends widened
    out = np.empty((size, kk), dtype=np.int64)
    rows = np.arange(size)
    rounds = kk if peel else 1
    want = 1 if peel else kk
    taken = np.zeros((size, n if peel else 0), dtype=bool)   # used only when peel
    for rnd in range(rounds):
        tk = taken if peel else None
        if fast:
            left, m = _fast_round(a, extra, want, size, rng, noise, tk, out, rnd if peel else None)
        else:
            left, m = rows, _bits64(rng, size * n).reshape(size, n)
        if left.size:
            _exact_rows(a, a_lo, a_hi, left, m, want, rng, noise, exact_score, weights, tk, out,
                        rnd if peel else None)
        if peel:
            taken[rows, out[:, rnd]] = True
    return out


def _bound(v: np.ndarray) -> np.ndarray:
    """4e(v) of :func:`._topk._bulk_top`: a stage-2 enclosure lies within it of its float value v."""
    return 4.0 * (_BULK_TAU + 2e-15 * (np.abs(v) + 16.0))


def _fast_round(a, extra, want, size, rng, noise, taken, out, col):
    """One round's words for every row, block by block; the rows whose picks one float evaluation per
    candidate proves are written to ``out`` (column ``col`` when peeling, else the first ``want``). Returns
    the other rows (ascending) and their words, for the exact path."""
    n = a.shape[0]
    R = max(1, _BLOCK_WORDS // n)
    # a numpy Generator gives the same words block by block as in one draw; anything else is asked once
    pre = None if type(rng) is np.random.Generator else _bits64(rng, size * n)
    lo_w, width = _topk._BULK_LO, np.uint64(_topk._BULK_HI - _topk._BULK_LO)
    x_buf = np.empty(R * n)
    y_buf = np.empty(R * n if extra is not None else 0)
    u_buf = np.empty(R * n, dtype=np.uint64)
    mm = min(want + 1, n)     # the picks and the candidate after them
    left_r: list[np.ndarray] = []
    left_m: list[np.ndarray] = []
    for s in range(0, size, R):
        e = min(s + R, size)
        L = e - s
        mc = (_bits64(rng, L * n) if pre is None else pre[s * n:e * n]).reshape(L, n)
        x = x_buf[:L * n].reshape(L, n)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _bulk_noise_into(mc, a, noise, x)   # rows with a tail word are left to the exact path below
        ub = np.subtract(mc, lo_w, out=u_buf[:L * n].reshape(L, n))   # mod 2^64: below width in the bulk
        bad = (ub >= width).any(axis=1) if ub.max() >= width else None
        if taken is not None:
            np.copyto(x, -np.inf, where=taken[s:e])
        rr = np.arange(L)
        y = None
        if extra is not None:
            # upper bounds x + 5e(x) + 2·err of every candidate (taken: -inf); lower bounds from them
            y = y_buf[:L * n].reshape(L, n)
            with np.errstate(invalid="ignore", over="ignore"):
                np.abs(x, out=y)
                y += 16.0
                y *= 1e-14
                y += 5.0 * _BULK_TAU
                y += extra
                y += x
                if taken is not None:
                    np.copyto(y, -np.inf, where=taken[s:e])
        idx = np.empty((L, mm), dtype=np.int64)
        val = np.empty((L, mm))
        ok = np.ones(L, dtype=bool)
        with np.errstate(invalid="ignore", over="ignore"):
            for j in range(mm):
                i = x.argmax(axis=1)
                idx[:, j] = i
                val[:, j] = x[rr, i]
                if j + 1 < mm:
                    x[rr, i] = -np.inf
                if y is not None and j < want:
                    # pick j's lower bound above every later candidate's upper bound
                    low = 2.0 * val[:, j] - y[rr, i]
                    y[rr, i] = -np.inf
                    ok &= low > y.max(axis=1)
            ok &= np.isfinite(val[:, :want]).all(axis=1)
            if y is None:
                # relative model: x + 4e(x) increases with x, so each pick need only clear its successor
                v, nxt = val[:, :-1], val[:, 1:]
                hi_next = np.where(np.isneginf(nxt), -np.inf, nxt + _bound(nxt))
                ok &= (v - _bound(v) > hi_next).all(axis=1)
        if bad is not None:
            ok &= ~bad
        if col is None:
            out[s:e][ok] = idx[ok, :want]
        else:
            out[s:e, col][ok] = idx[ok, 0]
        if not ok.all():
            miss = np.flatnonzero(~ok)
            left_r.append(miss + s)
            left_m.append(mc[miss].copy())
    if not left_r:
        return np.zeros(0, dtype=np.int64), np.zeros((0, n), dtype=np.uint64)
    return np.concatenate(left_r), np.concatenate(left_m)


def _exact_rows(a, a_lo, a_hi, left, m, want, rng, noise, exact_score, weights, taken, out, col):
    """The exact path of one draw for the rows ``left`` (ascending) with their first words ``m``: float
    enclosures at both ends of each 64-bit cell, certified together where they prove the picks, else
    :func:`._topk._certify` and the exact refinement row by row (which draws more words, in row order)."""
    f, n = m.shape
    n_lo, n_hi = _float_enclosure(m, noise, weights)
    lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
    if taken is not None:
        tk = taken[left]
        lo[tk] = -np.inf
        hi[tk] = -np.inf
    order = np.argsort(-lo, axis=1, kind="stable")
    lo_s = np.take_along_axis(lo, order, axis=1)
    hi_s = np.take_along_axis(hi, order, axis=1)
    # suffix maxima of hi after each position
    suf = np.maximum.accumulate(hi_s[:, ::-1], axis=1)[:, ::-1]
    if n > 1:
        ok = np.all(lo_s[:, :want] > np.concatenate([suf[:, 1:], np.full((f, 1), -np.inf)], axis=1)[:, :want],
                    axis=1)
    else:
        ok = np.ones(f, dtype=bool)
    if taken is not None:
        ok &= lo_s[:, 0] > -np.inf  # a removed candidate never wins
        out[left[ok], col] = order[ok, 0]
    else:
        out[left[ok]] = order[ok, :want]
    for j in np.flatnonzero(~ok):
        r = int(left[j])
        live = np.flatnonzero(~taken[r]) if taken is not None else np.arange(n)
        ids = live.tolist()
        picked, amb = _certify(ids, lo[j, live].tolist(), hi[j, live].tolist(), want)
        if picked is None:
            picked = _refine(a, live, lo[j, live], hi[j, live], amb, want, rng, noise, exact_score, weights,
                             m[j]).tolist()
        if taken is not None:
            out[r, col] = picked[0]
        else:
            out[r] = picked
