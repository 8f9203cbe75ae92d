r"""The (epsilon, delta)-DP upper map ``U_DP`` in log-odds space, to full relative precision at both ends.

Why. The optimal extension's probabilities tend to 0 (the answer that is not the true one) and to 1
(the true one) geometrically with the distance to the fixed vertices: ``Pr[M(w) = 1 - T(w)]`` is
``(1 - x) e^{-eps d}`` on a path. Computing ``U_DP(a) = min(e^eps a + delta, 1 - e^-eps (1 - a - delta), 1)``
on probabilities and returning ``1 - a`` for the other answer rounds everything below ``2^-53`` to an exact
0 (and its complement to an exact 1): an infinite privacy loss on every edge between such a vertex and
one with a positive value. So labels here are **log-odds** ``l = log(a / (1 - a))`` of ``a = Pr[M = j]``:
monotone in ``a`` (the label-setting algorithm only compares labels), symmetric between the answers
(``logit(1 - a) = -logit(a)``), and both ``log a = -softplus(-l)`` and ``log(1 - a) = -softplus(l)``
follow from ``l`` to full relative precision (an absolute error ``eta`` in ``l`` is a relative error
``<= eta`` in ``a`` and in ``1 - a``).

``U_DP`` in log-odds (derivation). Write ``la = log a``, ``lc = log(1 - a)``, ``c = 1 - a``,
``l = la - lc``. The two linear pieces cross at ``a* = (1 - delta)/(e^eps + 1)``, i.e. at
``l* = log1p(-delta) - log(e^eps + delta)`` (``-eps`` for pure DP).

* ``l <= l*`` (multiplicative piece ``a' = e^eps a + delta``):
  ``la' = la + eps + log1p(delta e^{-eps} / a)`` and
  ``1 - a' = c (1 - (e^eps - 1) a/c - delta/c)``, so ``lc' = lc + log1p(-expm1(eps) e^l - delta (1 + e^l))``.
  Both corrections are ``log1p`` of well-scaled arguments; the second loses relative precision only by
  the factor ``1/(1 - x) <= e^eps + 1`` right at the switch (the map itself has that condition number
  there: a relative change ``r`` of ``a`` moves ``1 - a'`` by ``r e^eps``).
* ``l >= l*`` (complement piece ``1 - a' = e^{-eps}(c - delta)``; ``a' = 1`` once ``c <= delta``):
  ``lc' = lc - eps + log1p(-delta / c)`` and ``a' = e^{-eps}(expm1(eps) + a + delta)`` (a sum of
  non-negative terms, used while ``a' < 1/2``) or ``la' = log1p(-e^{lc'})`` (once ``1 - a' <= 1/2``).

Then ``l' = (l + eps) + corr`` with ``corr = (la' - la - eps) - (lc' - lc)`` assembled from the analytic
corrections above (never as a difference of two large logs). Along a long path ``l`` grows by about
``eps`` per edge, so a plain float sum would lose ``ulp(l)`` per step (a relative error ``~ d u`` in the
log after ``d`` steps); the label therefore carries a compensation term ``lo`` (``l = hi + lo``,
Knuth's two-sum), making the result accurate to a few ulps of the final value whatever the depth.
Where the correction dominates (``delta >> a``: the image is near ``delta``, far from ``l + eps``) the
shifted form would cancel, and ``l' = la' - lc'`` is used directly. For pure DP the two pieces reduce to
``corr = -log1p(-expm1(eps) e^l)`` and ``corr = log1p(-expm1(-eps) e^-l)`` (one exp and one log1p per
label, :func:`_key_upper_pure`). Checked against 80-digit decimal arithmetic: the error is a few ulps,
times the condition number of ``1 - a'`` in the inputs.
"""
from __future__ import annotations

import math
from typing import Literal, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["two_sum", "softplus", "logit", "key_upper", "key_upper_scalar", "key_logs", "SHIFT_FROM"]

LOG_HALF = -math.log(2.0)

#: Above this log-odds (``1 - a < 4.3e-18``) pure-DP ``U`` is ``l + eps`` up to a correction
#: ``log1p((1 - e^-eps) e^-l)``; along any path the corrections beyond it sum to at most ``e^-SHIFT_FROM``
#: (they telescope: ``(1 - e^-eps_k) e^-l_k <= e^-l_k - e^-l_{k+1}``), a relative error ``< 1e-17`` on
#: ``1 - a``. The label setting finishes such labels as a shortest-path problem (see extension.py).
SHIFT_FROM = 40.0

#: A float or a float array: :func:`two_sum` returns what it is given.
_FloatOrArray = TypeVar("_FloatOrArray", float, np.ndarray)


def two_sum(a: _FloatOrArray, b: _FloatOrArray) -> tuple[_FloatOrArray, _FloatOrArray]:
    """``s = fl(a + b)`` and the exact rounding error ``e`` (``a + b = s + e``), vectorised (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def softplus(x: ArrayLike) -> np.ndarray:
    """``log(1 + e^x)`` without overflow and to full relative precision (vectorised)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    return np.where(np.isposinf(x), np.inf, out)


def logit(p: ArrayLike) -> np.ndarray:
    """``log(p / (1 - p))`` of exact probabilities (``-inf`` at 0, ``+inf`` at 1)."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


@overload
def key_upper(hi: ArrayLike, lo: ArrayLike, epsilon: ArrayLike, delta: float, *,
              with_lo: Literal[True] = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def key_upper(hi: ArrayLike, lo: ArrayLike | None, epsilon: ArrayLike, delta: float, *,
              with_lo: Literal[False]) -> tuple[np.ndarray, None]: ...
@overload
def key_upper(hi: ArrayLike, lo: ArrayLike | None, epsilon: ArrayLike, delta: float, *,
              with_lo: bool) -> tuple[np.ndarray, np.ndarray | None]: ...
def key_upper(hi: ArrayLike, lo: ArrayLike | None, epsilon: ArrayLike, delta: float, *,
              with_lo: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``U_DP`` on log-odds labels ``hi + lo``; ``epsilon`` is a scalar or one value per label.

    Returns ``(hi', lo')`` (``lo'`` is ``None`` when ``with_lo`` is false: the batch threshold needs only an
    ordering value). Infinite labels (probability 0 or 1) map exactly (``-inf -> log-odds of delta``,
    ``+inf -> +inf``); ``lo`` is 0 wherever ``hi`` is infinite.
    """
    hi = np.asarray(hi, dtype=np.float64)
    eps = np.asarray(epsilon, dtype=np.float64)
    if delta == 0:
        return _key_upper_pure(hi, lo, eps, with_lo)
    logd = math.log(delta)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        la = -softplus(-hi)
        lc = -softplus(hi)
        em1 = np.expm1(eps)
        first = hi <= math.log1p(-delta) - np.logaddexp(eps, logd)
        # piece 1: a' = e^eps a + delta
        el = np.exp(np.minimum(hi, 0.0))                       # e^l <= 1 on this piece
        d_lc1 = np.log1p(-em1 * el - delta * (1.0 + el))
        d_la1 = softplus(logd - eps - la)                      # log1p(delta e^-eps / a)
        la1 = np.logaddexp(la + eps, logd)
        corr1 = d_la1 - d_lc1
        # piece 2: 1 - a' = e^-eps (c - delta)
        g = np.log1p(-delta * np.exp(-lc))                     # log1p(-delta / c)
        lc2 = lc - eps + g
        a = np.exp(la)
        la2 = np.where(lc2 <= LOG_HALF, np.log1p(-np.exp(lc2)), np.log(em1 + a + delta) - eps)
        corr2 = (la2 - la) - g
        clamp = (lc <= logd) & ~first                          # c <= delta: a' = 1
        corr = np.where(first, corr1, corr2)
        s, e = two_sum(hi, eps)
        t = e + corr
        if with_lo:
            t = t + np.asarray(lo, dtype=np.float64)
        out_hi, out_lo = two_sum(s, t)
        # when the correction dominates (delta >> a: the image is near delta, far from l + eps), the
        # shifted form cancels; la' - lc' directly is then accurate to ulp(l')
        lc1 = lc + d_lc1
        direct = np.where(first, la1 - lc1, la2 - lc2)
        big = np.abs(corr) > np.abs(direct)
        if big.any():
            out_hi = np.where(big, direct, out_hi)
            out_lo = np.where(big, 0.0, out_lo)
        # a = 0: the shifted form is -inf + inf; the image is a' = delta exactly
        zero = np.isneginf(hi)
        if zero.any():
            out_hi = np.where(zero, logd - math.log1p(-delta), out_hi)
        out_hi = np.where(clamp | np.isposinf(hi), np.inf, out_hi)
        if not with_lo:
            return out_hi, None
        out_lo = np.where(np.isfinite(out_hi), out_lo, 0.0)
        if zero.any():
            out_lo = np.where(zero, 0.0, out_lo)
    return out_hi, out_lo


def _key_upper_pure(hi: np.ndarray, lo: ArrayLike | None, eps: np.ndarray,
                    with_lo: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Pure DP (delta = 0): ``l' = l + eps + corr`` with
    ``corr = -log1p(-expm1(eps) e^l)`` for ``l <= -eps`` (``a' = e^eps a``) and
    ``corr = log1p(-expm1(-eps) e^-l)`` for ``l >= -eps`` (``1 - a' = e^-eps (1 - a)``); both arguments are
    bounded (``|x| <= 1 - e^-eps`` resp. ``0 <= x <= e^eps - 1``), so one exp and one log1p per label."""
    with np.errstate(over="ignore", invalid="ignore"):
        first = hi <= -eps
        sg = np.where(first, 1.0, -1.0)                   # x = -expm1(+-eps) e^{+-l}, sign by piece
        x = np.expm1(sg * eps)
        x *= np.exp(np.minimum(sg * hi, eps))             # e^l <= e^-eps resp. e^-l <= e^eps
        np.negative(x, out=x)
        corr = np.log1p(x)
        corr *= -sg                                      # -log1p(x) on piece 1, +log1p(x) on piece 2
        inf = ~np.isfinite(hi)
        if not with_lo:                                   # an ordering value: one rounding more is fine
            out = hi + eps
            out += corr
            return np.where(inf, hi, out), None
        s, e = two_sum(hi, eps)
        t = e + corr
        t += np.asarray(lo, dtype=np.float64)
        out_hi, out_lo = two_sum(s, t)
        if inf.any():
            out_hi = np.where(inf, hi, out_hi)
            out_lo = np.where(inf, 0.0, out_lo)
    return out_hi, out_lo


def key_upper_scalar(hi: float, lo: float, eps: float, delta: float) -> tuple[float, float]:
    """Scalar :func:`key_upper` with the ``math`` module (the heap reference engine); same formulas."""
    if hi == math.inf:
        return math.inf, 0.0
    if delta == 0:
        if hi == -math.inf:
            return -math.inf, 0.0
        if hi <= -eps:
            corr = -math.log1p(-math.expm1(eps) * math.exp(hi))
        else:
            corr = math.log1p(-math.expm1(-eps) * math.exp(-hi))
        return _two_sum_3(hi, eps, corr + lo)
    logd = math.log(delta) if delta > 0 else -math.inf
    if hi == -math.inf:
        return (logd - math.log1p(-delta) if delta > 0 else -math.inf), 0.0
    la = -_softplus(-hi)
    lc = -_softplus(hi)
    em1 = math.expm1(eps)
    lstar = math.log1p(-delta) - (eps + math.log1p(delta * math.exp(-eps)) if delta > 0 else eps)
    if hi <= lstar:
        el = math.exp(min(hi, 0.0))
        d_la = _softplus(logd - eps - la) if delta > 0 else 0.0
        la1 = _logaddexp(la + eps, logd)
        d_lc = math.log1p(-em1 * el - delta * (1.0 + el))
        corr = d_la - d_lc
        direct = la1 - (lc + d_lc)
    else:
        if lc <= logd:
            return math.inf, 0.0
        g = math.log1p(-delta * math.exp(-lc)) if delta > 0 else 0.0
        lc2 = lc - eps + g
        if lc2 <= LOG_HALF:
            la2 = math.log1p(-math.exp(lc2))
        else:
            la2 = math.log(em1 + math.exp(la) + delta) - eps
        corr = (la2 - la) - g
        direct = la2 - lc2
    if abs(corr) > abs(direct):
        return direct, 0.0
    return _two_sum_3(hi, eps, corr + lo)


def _two_sum_3(hi: float, eps: float, rest: float) -> tuple[float, float]:
    """``hi + eps + rest`` as ``(h, l)``: the first sum exact (two-sum), ``rest`` small."""
    s = hi + eps
    bb = s - hi
    e = (hi - (s - bb)) + (eps - bb)
    t = e + rest
    h = s + t
    bb = h - s
    return h, (s - (h - bb)) + (t - bb)


def _logaddexp(x: float, y: float) -> float:
    m = max(x, y)
    return m + math.log1p(math.exp(-abs(x - y)))


def _softplus(x: float) -> float:
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def key_logs(hi: ArrayLike, lo: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(log a, log(1 - a))`` for log-odds labels ``hi + lo`` (``a = sigmoid(hi + lo)``), vectorised.

    ``-softplus(-l)`` and ``-softplus(l)`` with the compensation term folded in: for ``l > 0``,
    ``log(1 - a) = -(hi + (lo + log1p(e^-hi e^-lo)))`` and ``log a = -log1p(e^-hi e^-lo)``.
    """
    hi = np.asarray(hi, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        ah = np.abs(hi)
        sg = np.sign(hi)
        t = np.exp(-ah) * np.exp(-sg * lo)                    # e^{-|l|}
        small = np.log1p(t)                                   # log1p(e^{-|l|})
        big = ah + (sg * lo + small)                          # |l| + log1p(e^{-|l|})
        la = np.where(hi >= 0, -small, -big)
        lc = np.where(hi >= 0, -big, -small)
        la = np.where(np.isposinf(hi), 0.0, np.where(np.isneginf(hi), -np.inf, la))
        lc = np.where(np.isposinf(hi), -np.inf, np.where(np.isneginf(hi), 0.0, lc))
    return la, lc
