"""Closed forms for optimal binary mechanisms.

* :func:`p` -- paper 002, Def. 9 with tau from Eq. 6: the strongest upper bound that a vertex with
  ``Pr[M(v) = j] = alpha`` induces on ``Pr[M(u) = j]`` at distance ``d`` under homogeneous (epsilon, delta)-DP.
  It equals the ``d``-fold composition ``U_DP^d(alpha)`` of the DP upper-bound function (Eq. 8).
* :func:`path_extension` -- paper 001, Thm 2-3: the optimal heterogeneous epsilon(.)-DP mechanism on a path
  ``v_0 - v_1 - ... - v_n`` whose head has ``Pr[M(v_0) = 1] = alpha`` and whose other vertices have true value 1.
* :func:`balanced_boundary_value`, :func:`balanced_probability` -- paper 002, Cor. 1-2: the balanced
  boundary-homogeneous optimum, ``Pr[M(u) = T(u)]`` as a function of the distance of ``u`` to the boundary.

Corrections to the printed formulas (each checked against iterating U for distances 0..39, ε from 0.05 to 2.5
and δ from 0 to 0.2, and against the general label-setting extension on a grid graph):

* paper 002, Eq. 5 and Cor. 2 omit a clamp: with delta > 0 the second branch exceeds 1 for large ``d``; the
  probability is ``min(1, .)`` (the paper puts ``min(1, .)`` only in Eq. 5, Cor. 2 needs it too).
* paper 002, Eq. 6: tau must be clamped below at 0 (``alpha`` already past the switch point gives a negative
  logarithm) and is infinite for ``alpha = delta = 0`` (0 is a fixed point of U when delta = 0).
* paper 001, Cor. 1 prints ``1 - e^{(i - tau) eps} + e^{-(i + 2 tau) eps} alpha``; the signs are garbled, the
  correct homogeneous specialisation of its Thm 3 is ``1 - e^{-(i - tau) eps} + e^{(2 tau - i) eps} alpha``
  (which is paper 002's Eq. 5 with delta = 0).
* paper 001, Eq. 17 takes tau over ``i in [n]``; the index 0 must be included (tau = 0 when
  ``alpha >= 1 / (e^{eps_0} + 1)``) and tau = n when the condition never holds on the path.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_nonnegative, check_positive

__all__ = ["p", "tau", "dp_upper", "dp_lower", "path_extension", "balanced_boundary_value",
           "balanced_probability"]


def _check_eps_delta(epsilon: Any, delta: Any) -> tuple[float, float]:
    eps = check_positive(epsilon, "epsilon")
    dl = check_nonnegative(delta, "delta")
    if dl >= 1:
        raise ValueError(f"delta must be a finite number in [0, 1), got {delta!r}")
    return eps, dl


def _check_prob_array(alpha: Any, name: str = "alpha") -> np.ndarray:
    try:
        a = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a probability or an array of probabilities, got {alpha!r}") from None
    bad = ~np.isfinite(a) | (a < 0) | (a > 1)
    if bad.any():
        raise ValueError(f"{name} must lie in [0, 1], got {a[bad].ravel()[0]!r}")
    return a


def dp_upper(alpha: ArrayLike, *, epsilon: ArrayLike, delta: ArrayLike = 0.0) -> np.ndarray:
    """The (epsilon, delta)-DP upper bound ``U_DP`` of paper 002, Eq. 8 (vectorised, no validation).

    ``U_DP(a) = min(e^eps a + delta, (e^eps + delta - 1 + a) / e^eps, 1)``: the largest ``Pr[M(u) = j]`` allowed
    on a neighbour ``u`` of a dataset ``v`` with ``Pr[M(v) = j] = a``. ``epsilon``/``delta`` may be arrays
    (one value per edge).

    Parameters
    ----------
    alpha : array_like
        ``Pr[M(v) = j]``, in [0, 1].
    epsilon, delta : array_like
        ε > 0 and δ in [0, 1) (default 0.0), per edge when arrays.

    Returns
    -------
    ndarray
        float64, of the broadcast shape of the inputs (0-d for scalars).

    Examples
    --------
    >>> import math
    >>> float(dp_upper(0.3, epsilon=math.log(2))), dp_upper([0.1, 0.6], epsilon=math.log(2), delta=0.05).tolist()
    (0.6, [0.25, 0.825])
    """
    e, a, dl = np.exp(epsilon), np.asarray(alpha), np.asarray(delta)
    return np.minimum(np.minimum(e * a + dl, (e + dl - 1.0 + a) / e), 1.0)


def dp_lower(alpha: ArrayLike, *, epsilon: ArrayLike, delta: ArrayLike = 0.0) -> np.ndarray:
    """The (epsilon, delta)-DP lower bound ``L_DP`` of paper 002, Eq. 9: ``1 - U_DP(1 - a)``.

    Parameters
    ----------
    alpha : array_like
        ``Pr[M(v) = j]``, in [0, 1].
    epsilon, delta : array_like
        ε > 0 and δ in [0, 1) (default 0.0), per edge when arrays.

    Returns
    -------
    ndarray
        The smallest ``Pr[M(u) = j]`` allowed on a neighbour, float64 of the broadcast shape (no
        validation).

    Examples
    --------
    >>> import math
    >>> float(dp_lower(0.3, epsilon=math.log(2)))
    0.15
    """
    e, a, dl = np.exp(epsilon), np.asarray(alpha), np.asarray(delta)
    return np.maximum(np.maximum(e * a - dl - e + 1.0, (a - dl) / e), 0.0)


def tau(alpha: ArrayLike, *, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """Number of steps in the first (multiplicative) regime of ``U_DP`` (paper 002, Eq. 6, clamped at 0).

    ``tau = max(0, ceil(log((e^eps + 2 delta - 1) / ((e^eps + 1)((e^eps - 1) alpha + delta))) / eps))``;
    ``+inf`` when ``alpha = delta = 0``.

    Parameters
    ----------
    alpha : array_like
        ``Pr[M(v) = j]``, in [0, 1].
    epsilon, delta : float
        ε > 0 and δ in [0, 1) (default 0.0).

    Returns
    -------
    ndarray
        Of the shape of ``alpha``; float (to hold ``inf``).

    Raises
    ------
    ValueError
        ``epsilon``, ``delta`` or ``alpha`` out of range.

    Examples
    --------
    >>> import math
    >>> tau([0.1, 0.3, 0.0], epsilon=math.log(2)).tolist()
    [2.0, 1.0, inf]
    """
    eps, dl = _check_eps_delta(epsilon, delta)
    a = _check_prob_array(alpha)
    e = np.exp(eps)
    denom = (e + 1.0) * ((e - 1.0) * a + dl)
    with np.errstate(divide="ignore"):
        t = np.log((e + 2.0 * dl - 1.0) / denom) / eps
    t = np.where(denom > 0, np.maximum(np.ceil(t - 1e-12), 0.0), np.inf)
    return t


def p(d: ArrayLike, alpha: ArrayLike, *, epsilon: float, delta: float = 0.0) -> np.ndarray | float:
    """Closed-form ``p(d, alpha)`` of paper 002, Def. 9: the strongest induced bound at distance ``d``.

    Under homogeneous (epsilon, delta)-DP, a dataset with ``Pr[M(v) = j] = alpha`` forces
    ``Pr[M(u) = j] <= p(dist(u, v), alpha)`` on every dataset ``u`` (Prop. 1), and the bound is tight: it equals
    the ``d``-fold composition ``U_DP^d(alpha)``. With ``tau`` from Eq. 6 (see :func:`tau`)::

        p = e^{d eps} alpha + delta (e^{d eps} - 1)/(e^eps - 1)                                   if d <= tau
        p = min(1, e^{(2 tau - d) eps} alpha + 1 - e^{-(d - tau) eps}
                   + delta (e^{tau eps} + e^{(d - tau) eps} - 2) / (e^{(d - tau) eps} (e^eps - 1)))   if d > tau

    Parameters
    ----------
    d : int or array of int >= 0
        Graph distance(s).
    alpha : float or array in [0, 1]
        ``Pr[M(v) = j]`` at the inducing vertex. ``d`` and ``alpha`` broadcast.
    epsilon : float > 0
        The ε of the homogeneous (ε, δ)-DP guarantee.
    delta : float in [0, 1), default 0.0
        The δ of the guarantee.

    Returns
    -------
    float or numpy.ndarray
        The bound(s); a Python float when both inputs are scalars.

    Examples
    --------
    Paper 002, Example 3 (epsilon = log 2):

    >>> import math
    >>> round(float(p(3, 0.1, epsilon=math.log(2))), 12), round(float(p(3, 0.3, epsilon=math.log(2))), 12)
    (0.7, 0.9)
    """
    eps, dl = _check_eps_delta(epsilon, delta)
    a = _check_prob_array(alpha)
    try:
        dd = np.asarray(d)
    except Exception:  # pragma: no cover - exotic input
        raise TypeError(f"d must be a non-negative int or array of ints, got {d!r}") from None
    if dd.dtype == bool or not np.issubdtype(dd.dtype, np.number):
        raise TypeError(f"d must be a non-negative int or array of ints, got {d!r}")
    if not np.all(np.isfinite(dd)) or np.any(dd < 0) or np.any(dd != np.round(dd)):
        raise ValueError(f"d must be a non-negative integer distance, got {d!r}")
    dd = dd.astype(np.float64)
    scalar = np.ndim(a) == 0 and np.ndim(dd) == 0
    a, dd = np.broadcast_arrays(a, dd)
    t = tau(a, epsilon=eps, delta=dl)
    e = np.exp(eps)
    with np.errstate(over="ignore", invalid="ignore"):
        first = np.exp(dd * eps) * a + dl * np.expm1(dd * eps) / (e - 1.0)
        tt = np.where(np.isfinite(t), t, 0.0)
        k = dd - tt  # steps in the second regime
        # Eq. 5, second line, rearranged (algebraically identical) as 1 - e^{-k eps}(1 - x_tau) + delta-term with
        # x_tau = U^tau(alpha), which is exact at alpha = 1 and better conditioned near 1.
        x_tau = np.exp(tt * eps) * a + dl * np.expm1(tt * eps) / (e - 1.0)
        second = 1.0 - np.exp(-k * eps) * (1.0 - x_tau) - dl * np.expm1(-k * eps) / (e - 1.0)
        out = np.where(dd <= t, first, second)
    out = np.minimum(out, 1.0)
    return float(out) if scalar else out


def path_extension(alpha: float, *, epsilons: ArrayLike) -> np.ndarray:
    """Optimal heterogeneous-DP mechanism on a path (paper 001, Thm 2-3), in closed form.

    The path is ``v_0, ..., v_n`` with ``epsilons[i] = eps(v_i, v_{i+1})`` (pure DP, delta = 0),
    ``Pr[M(v_0) = 1] = alpha`` fixed and true value 1 at ``v_1 .. v_n``. The result is the unique optimal
    epsilon(.)-DP extension: heterogeneous DP with ``eps(v_i, v_{i+1})`` between consecutive datasets.
    With ``S_i = eps_0 + ... + eps_{i-1}`` and ``tau`` the smallest ``i >= 0`` with
    ``e^{S_i} alpha >= 1 / (e^{eps_i} + 1)`` (``tau = n`` if none)::

        p*(v_i) = e^{S_i} alpha                                       for i <= tau
        p*(v_i) = e^{2 S_tau - S_i} alpha + 1 - e^{-(S_i - S_tau)}    for i > tau

    Parameters
    ----------
    alpha : float
        ``Pr[M(v_0) = 1]``, in [0, 1].
    epsilons : array_like of shape (n,)
        The ε of each path edge, finite and > 0.

    Returns
    -------
    ndarray of shape (n + 1,)
        ``p*(v_i) = Pr[M(v_i) = 1]`` for ``i = 0..n``.

    Raises
    ------
    ValueError
        ``alpha`` outside [0, 1], or ``epsilons`` not 1-D or not finite and > 0.

    Examples
    --------
    >>> import math
    >>> [round(float(x), 12) for x in path_extension(0.1, epsilons=[math.log(2)] * 3)]
    [0.1, 0.2, 0.4, 0.7]
    """
    a = float(_check_prob_array(alpha))
    eps = np.asarray(epsilons, dtype=np.float64)
    if eps.ndim != 1:
        raise ValueError(f"epsilons must be 1-D (one value per path edge), got shape {eps.shape}")
    if (~np.isfinite(eps) | (eps <= 0)).any():
        raise ValueError("epsilons must be finite numbers > 0 (one per path edge)")
    n = eps.size
    S = np.concatenate([[0.0], np.cumsum(eps)])  # S[i] = eps_0 + ... + eps_{i-1}
    cond = np.exp(S[:n]) * a >= 1.0 / (np.exp(eps) + 1.0)
    t = int(np.argmax(cond)) if cond.any() else n
    i = np.arange(n + 1)
    with np.errstate(over="ignore"):
        first = np.exp(S) * a
        second = np.exp(2.0 * S[t] - S) * a + 1.0 - np.exp(-(S - S[t]))
    return np.minimum(np.where(i <= t, first, second), 1.0)


def balanced_boundary_value(*, epsilon: float, delta: float = 0.0) -> float:
    """Largest balanced boundary value ``alpha* = (e^eps + delta) / (e^eps + 1)`` (paper 002, Cor. 2).

    A boundary-homogeneous mechanism with ``Pr[M(w) = T(w)] = alpha`` at every boundary vertex is
    (epsilon, delta)-DP on a boundary edge iff ``alpha <= e^eps (1 - alpha) + delta``; ``alpha*`` is the equality.
    It is also the accuracy of randomized response when delta = 0.

    Parameters
    ----------
    epsilon, delta : float
        ε > 0 and δ in [0, 1) (default 0.0).

    Returns
    -------
    float
        ``alpha*``.

    Examples
    --------
    >>> round(balanced_boundary_value(epsilon=1.0986122886681098), 12)   # e^eps = 3
    0.75
    """
    eps, dl = _check_eps_delta(epsilon, delta)
    e = np.exp(eps)
    return float((e + dl) / (e + 1.0))


def balanced_probability(d: ArrayLike, *, epsilon: float, delta: float = 0.0) -> np.ndarray | float:
    """``Pr[M(u) = T(u)]`` of the optimal balanced mechanism at distance ``d`` from the boundary (Cor. 2).

    ``1 - (e^eps - 1 - delta (e^{(d+1) eps} + e^{d eps} - 2)) / (e^{d eps} (e^eps + 1)(e^eps - 1))``, clamped at 1
    (the paper omits the clamp, needed when delta > 0). ``d = 0`` are the boundary vertices themselves
    (value :func:`balanced_boundary_value`). Equals ``p(d, alpha*)``. The mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    d : int or array_like of int
        Distance(s) to the boundary, >= 0.
    epsilon, delta : float
        ε > 0 and δ in [0, 1) (default 0.0).

    Returns
    -------
    float or ndarray
        A Python float for a scalar ``d``, else an array of the shape of ``d``.

    Raises
    ------
    ValueError
        ``d`` not a non-negative integer, or ``epsilon``/``delta`` out of range.

    Examples
    --------
    >>> round(float(balanced_probability(1, epsilon=1.0986122886681098)), 12)   # e^eps = 3: 1 - 2/(3*4*2)
    0.916666666667
    >>> balanced_probability([0, 1, 2], epsilon=1.0986122886681098).round(4).tolist()
    [0.75, 0.9167, 0.9722]
    """
    eps, dl = _check_eps_delta(epsilon, delta)
    dd = np.asarray(d, dtype=np.float64)
    if not np.all(np.isfinite(dd)) or np.any(dd < 0) or np.any(dd != np.round(dd)):
        raise ValueError(f"d must be a non-negative integer distance, got {d!r}")
    e = np.exp(eps)
    with np.errstate(over="ignore", invalid="ignore"):
        ed = np.exp(dd * eps)
        val = 1.0 - (e - 1.0 - dl * (ed * e + ed - 2.0)) / (ed * (e + 1.0) * (e - 1.0))
    val = np.minimum(np.where(np.isfinite(val), val, 1.0), 1.0)
    return float(val) if np.ndim(val) == 0 else val
