"""Many independent exact noisy top-k draws over one score vector at once (:func:`noisy_top_k_batch`)."""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from ._noise import _REL, _TINY, _bits64, _float_enclosure
from ._topk import _certify, _refine, _round_out, _score_bounds


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
    exponential or Laplace noise) instead of the k largest of one draw. Draws that float enclosures
    cannot certify are finished one by one with the exact refinement.

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
        (or of k peeled picks).

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
    if a_err is None:
        with np.errstate(invalid="ignore"):
            a_err = _REL * np.abs(a) + _TINY
    a_err = np.broadcast_to(np.asarray(a_err, dtype=np.float64), a.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        a_lo, a_hi = _score_bounds(a, a_err)
    out = np.empty((size, kk), dtype=np.int64)
    rows = np.arange(size)
    rounds = kk if peel else 1
    taken = np.zeros((size, n if peel else 0), dtype=bool)   # used only when peel
    for rnd in range(rounds):
        m = _bits64(rng, size * n).reshape(size, n)
        n_lo, n_hi = _float_enclosure(m, noise, weights)
        lo, hi = _round_out(a_lo + n_lo, a_hi + n_hi)
        if peel:
            lo[taken] = -np.inf
            hi[taken] = -np.inf
        want = 1 if peel else kk
        order = np.argsort(-lo, axis=1, kind="stable")
        lo_s = np.take_along_axis(lo, order, axis=1)
        hi_s = np.take_along_axis(hi, order, axis=1)
        # suffix maxima of hi after each position
        suf = np.maximum.accumulate(hi_s[:, ::-1], axis=1)[:, ::-1]
        if n > 1:
            ok = np.all(lo_s[:, :want] > np.concatenate([suf[:, 1:], np.full((size, 1), -np.inf)], axis=1)[:, :want],
                        axis=1)
        else:
            ok = np.ones(size, dtype=bool)
        if peel:
            ok &= lo_s[:, 0] > -np.inf  # a removed candidate never wins
            out[ok, rnd] = order[ok, 0]
        else:
            out[ok] = order[ok, :want]
        for r in np.flatnonzero(~ok):
            live = np.flatnonzero(~taken[r]) if peel else np.arange(n)
            ids = live.tolist()
            picked, amb = _certify(ids, lo[r, live].tolist(), hi[r, live].tolist(), want)
            if picked is None:
                picked = _refine(a, live, lo[r, live], hi[r, live], amb, want, rng, noise, exact_score, weights,
                                 m[r]).tolist()
            if peel:
                out[r, rnd] = picked[0]
            else:
                out[r] = picked
        if peel:
            taken[rows, out[:, rnd]] = True
    return out
