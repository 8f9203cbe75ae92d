r"""Exact Bernoulli sampling from log-probabilities, using only random bits.

``bernoulli_log(log_p, rng)`` draws ``X ~ Bernoulli(p)`` with ``p = exp(log_p)`` *exactly*, reading each
float ``log_p`` as the exact rational it is: ``X = 1`` iff ``U < p`` for a uniform ``U`` whose binary
expansion is drawn lazily from the generator, 64 bits at a time. ``rng.random() < p`` is not this: its
uniform has 53 bits, so every ``p < 2^-53`` is rounded to "impossible" (and ``p`` itself is rounded to the
grid), which is exactly the tail a private mechanism must keep (Mironov 2012; here: an optimal binary
mechanism's ``Pr[M = 1] = 1e-30`` next to a neighbour's ``1e-30 e^-eps``).

Algorithm. The first 64 bits give an integer ``k`` and ``U in [k 2^-64, (k+1) 2^-64)``.

1. *Vectorised float decision.* With ``p_f = exp(log_p)`` in float64 and a rigorous slack (numpy's ``exp``
   is within a few ulp; we allow a relative ``1e-14`` plus an absolute ``1e-300`` for underflow, and
   ``2^12`` for rounding ``k`` to float), ``X = 1`` is certain when ``(k + 2^12) 2^-64 <= p_f (1 - 1e-14) -
   1e-300`` and ``X = 0`` when ``(k - 2^12) 2^-64 >= p_f (1 + 1e-14) + 1e-300``. This decides all but a
   fraction ``~ 2^-51 + 2e-14 p`` of the draws.
2. *Exact refinement* for the rest (and for every ``p`` below ``~2^-52``, when ``k`` is small):
   ``exp(log_p)`` in :mod:`decimal` at ``P`` digits is correctly rounded (the module's guarantee), so
   ``p`` lies in ``e (1 +- 10^{1-P})``; the dyadic interval of ``U`` (as a :class:`fractions.Fraction`) is
   compared with that enclosure. If neither is decided, the wider of the two intervals is narrowed: 64
   more bits of ``U``, or twice the digits. ``p`` is irrational for ``log_p != 0`` (Lindemann), so this
   ends with probability 1, after ``1 + 2^-64 + ...`` extra words on average.

``log_p = 0`` gives 1 and ``log_p = -inf`` gives 0 without drawing. The draws consume one 64-bit word per
element (``Generator.integers`` over the full uint64 range, i.e. the bit generator's raw output) plus the
refinement words, so results are reproducible for a seed.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._exact_random import INV64 as _INV64, U64_MAX as _U64_MAX, exp_enclosure, less_than_exp, words_drawer  # noqa: F401
from .._rng import check_rng
from ..typing import RngLike
from .._validation import short_repr

__all__ = ["bernoulli_log", "exact_less_than_exp"]

_SLACK_K = 4096.0          # >= 2 x the rounding error of a uint64 -> float64 conversion (2^10)
_REL = 1e-14               # numpy exp: a few ulp
_ABS = 1e-300              # subnormal / underflowed exp


_words_from = words_drawer
exact_less_than_exp = less_than_exp
_exp_enclosure = exp_enclosure


def bernoulli_log(log_p: ArrayLike, rng: RngLike = None, *,
                  bits: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """Independent exact ``Bernoulli(exp(log_p))`` draws (int8 array of the shape of ``log_p``).

    ``X = 1`` iff ``U < p`` for a uniform ``U`` whose bits are drawn lazily (module docstring): every
    ``p`` is kept exactly, however small, which a float comparison ``rng.random() < p`` would round to 0.

    Parameters
    ----------
    log_p : float or array of floats <= 0
        Log-probabilities of the outcome 1; ``-inf`` means probability 0.
    rng : numpy.random.Generator, int seed or None
        Source of random bits.
    bits : callable, optional
        Keyword-only: ``bits(size) -> uint64 array`` replacing the generator (tests script the uniform's
        words with it).

    Returns
    -------
    ndarray of int8, of the shape of ``log_p``
        The draws, 0 or 1.

    Raises
    ------
    TypeError
        ``log_p`` is not a float or an array of floats.
    ValueError
        A ``log_p`` above 0 or NaN, or ``bits`` returning the wrong number of words.

    Examples
    --------
    >>> import math
    >>> x = bernoulli_log([math.log(0.5)] * 10000 + [-800.0], rng=1)   # p = e^-800 < 1e-347 stays possible
    >>> abs(int(x[:-1].sum()) - 5000) < 200, int(x[-1])
    (True, 0)
    >>> x.shape, x.dtype.name
    ((10001,), 'int8')
    """
    try:
        raw = np.asarray(log_p)
        ok = raw.dtype.kind in "biuf" or (raw.dtype.kind == "O" and not any(
            isinstance(v, (str, bytes)) or v is None for v in raw.ravel()))
        lp = raw.astype(np.float64) if ok else None
    except (TypeError, ValueError):   # ragged nesting, objects without a float value
        lp = None
    if lp is None:
        raise TypeError(f"log_p must be a float or an array of floats (log-probabilities <= 0), got "
                        f"{short_repr(log_p)} ({type(log_p).__name__})")
    shape = lp.shape
    lp = lp.ravel()
    if np.isnan(lp).any() or (lp > 0).any():
        bad = lp[np.isnan(lp) | (lp > 0)][0]
        raise ValueError(f"log_p must be log-probabilities (<= 0, not NaN), got {float(bad)!r}")
    draw = bits if bits is not None else _words_from(check_rng(rng))
    k = np.asarray(draw(lp.size), dtype=np.uint64)
    if k.shape != lp.shape:
        raise ValueError(f"bits({lp.size}) must return {lp.size} uint64 words, got shape {k.shape}")
    kf = k.astype(np.float64)
    with np.errstate(under="ignore"):
        pf = np.exp(lp)
    yes = (kf + _SLACK_K) * _INV64 <= pf * (1.0 - _REL) - _ABS
    no = (kf - _SLACK_K) * _INV64 >= pf * (1.0 + _REL) + _ABS
    out = yes.astype(np.int8)
    out[lp == 0.0] = 1
    out[np.isneginf(lp)] = 0
    todo = np.flatnonzero(~(yes | no) & (lp != 0.0) & ~np.isneginf(lp))
    for i in todo.tolist():
        out[i] = exact_less_than_exp(float(lp[i]), int(k[i]), draw)[0]
    return out.reshape(shape)
