"""Privacy guarantees as values: what one release (or a composition of releases) certifies.

Each value is a frozen dataclass with a readable ``repr`` and validated parameters, and converts to
(ε, δ)-DP with ``.epsilon(delta)`` (the smallest ε it certifies at δ) and ``.delta(epsilon)`` (the smallest
δ at ε). Both are the *tight* conversions for the class of mechanisms the value describes (the worst
mechanism of the class attains them), computed in float and rounded toward more privacy loss.
``.zcdp()`` (ρ) and ``.rdp(alpha)`` (ε(α)) give the concentrated / Rényi view where it exists.

>>> from dpselect.accounting import BoundedRange, PureDP, ZCDP
>>> BoundedRange(1.0)
BoundedRange(epsilon=1.0)
>>> round(BoundedRange(1.0).delta(0.0), 6)          # tanh(ε/4): what an ε-BR release costs at ε' = 0
0.244919
>>> BoundedRange(1.0).zcdp()                         # Cesar & Rogers (2021): ε²/8
0.125
>>> round(ZCDP(0.125).epsilon(1e-6), 3)              # tight CKS conversion, not ρ + 2√(ρ log 1/δ)
2.419
"""
from __future__ import annotations

import abc
import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np
from scipy.special import log_ndtr, ndtr

from .._validation import check_nonnegative, check_positive, short_repr
from ._numeric import (bisect_decreasing, check_delta, exact_up, rdp_delta, rdp_epsilon, square_over, up, up_eps,
                       zcdp_delta, zcdp_epsilon)

__all__ = ["Guarantee", "PureDP", "BoundedRange", "ApproxDP", "ZCDP", "GaussianMechanism", "RDP", "NonPrivate",
           "DEFAULT_ORDERS"]

#: Rényi orders used where a curve must be tabulated (as in the common RDP accountants, plus a fine
#: range near 1 for very small budgets).
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x / 100.0 for x in range(1, 100)] + [2.0 + x / 10.0 for x in range(0, 100)]
    + [float(a) for a in range(12, 64)] + [64.0, 80.0, 96.0, 128.0, 192.0, 256.0, 512.0, 1024.0])


def _check_epsilon_arg(epsilon: object) -> float:
    return check_nonnegative(epsilon, "epsilon")


def _check_alpha(alpha: object) -> float:
    a = check_positive(alpha, "alpha")
    if a <= 1.0:
        raise ValueError(f"alpha (the Rényi order) must be a finite number > 1, got {short_repr(alpha)}")
    return a


def _log_sinh(x: float) -> float:
    """log sinh(x) for x > 0, without overflow (large x) or loss of relative accuracy (small x)."""
    if x > 20.0:
        return x - _LOG2 + math.log1p(-math.exp(-2.0 * x))
    return math.log(math.sinh(x))


def _log_cosh(x: float) -> float:
    """log cosh(x) for x >= 0, without overflow."""
    return x - _LOG2 + math.log1p(math.exp(-2.0 * x))


_LOG2 = math.log(2.0)


def _rr_rdp(eps: float, alpha: float) -> float:
    """Rényi divergence of order α of randomized response with parameter ε (the worst ε-DP pair).

    D_α = log(e^{αε} + e^{(1−α)ε})/(α − 1) − log(1 + e^ε)/(α − 1) is a difference of nearly equal terms
    when αε is small (the value is ≈ αε²/2): written as log1p(2 sinh(αε/2) sinh((α−1)ε/2) / cosh(ε/2))/(α − 1)
    every factor is positive and computed to a few ulps, so the result is too (the plain difference loses
    all digits at ε = 1e-7, α = 1.01, and comes out 0.56x the exact value)."""
    if eps == 0.0:
        return 0.0
    am1, h = alpha - 1.0, eps / 2.0
    if h > 20.0:    # log sinh(αh) − log cosh(h) with the large terms αh − h cancelled exactly
        ratio = am1 * h + math.log1p(-math.exp(-alpha * eps)) - math.log1p(math.exp(-eps))
    else:
        ratio = _log_sinh(alpha * h) - _log_cosh(h)
    log_x = _LOG2 + ratio + _log_sinh(am1 * h)
    # log1p(e^{log_x}) without overflow
    lp = log_x + math.log1p(math.exp(-log_x)) if log_x > 0.0 else math.log1p(math.exp(log_x))
    return lp / am1


def _not_underflowed(value: float, eps: float) -> float:
    """``value`` (a Rényi divergence of an ε-DP pair), or ε where it fell into float's subnormal range
    (ε ≲ 1e-145): there its digits are gone, and D_α ≤ ε is the bound that still holds."""
    return value if value >= 1e-290 or eps == 0.0 else eps


_BR_CELLS = 2048


def _log_two_point_moment(lo: np.ndarray, hi: np.ndarray, alpha: float) -> np.ndarray:
    """log E_Q[(P/Q)^α] of the two-output pair whose log-ratios are ``lo`` < 0 < ``hi`` (the generalised
    randomized response: Q puts q1 = (1 − e^lo)/(e^hi − e^lo) on the high output), in log space."""
    log_q1 = np.log(-np.expm1(lo)) - hi - np.log(-np.expm1(lo - hi))
    log_q0 = np.log(np.expm1(hi)) - hi - np.log(-np.expm1(lo - hi))
    return np.logaddexp(log_q1 + alpha * hi, log_q0 + alpha * lo)


@functools.lru_cache(maxsize=65536)
def _br_rdp_exact(eps: float, alpha: float) -> float:
    """The largest Rényi divergence of order α of an ε-bounded-range pair, certified from above.

    Every ε-BR pair is a post-processing of a two-output pair with log-ratios {(t − 1)ε, tε} for some
    t ∈ [0, 1] (Dong, Durfee & Rogers 2020), so the worst D_α is a supremum over t. Each cell
    t ∈ [a, b] of a grid of 2048 cells is dominated by the pair with log-ratios {(a − 1)ε, bε} (any pair
    with its log-ratios in an interval is a post-processing of the pair at its ends), and the data-processing
    inequality bounds the whole cell by that pair's D_α: the maximum over cells is an upper bound within
    O(1/2048) relative of the supremum."""
    if eps == 0.0:
        return 0.0
    a = np.arange(_BR_CELLS) / _BR_CELLS
    b = (np.arange(_BR_CELLS) + 1.0) / _BR_CELLS
    lo, hi = (a - 1.0) * eps, b * eps
    vals = _log_two_point_moment(lo, hi, alpha) / (alpha - 1.0)
    return float(np.max(vals))


class Guarantee(abc.ABC):
    """Base of the guarantee values (``PureDP``, ``BoundedRange``, ``ApproxDP``, ``ZCDP``, ...).

    A guarantee value states what a release (or a composition of releases) certifies, for the neighbour
    model of the mechanism that gives it. Subclasses implement :meth:`epsilon` and :meth:`delta` (the tight
    (ε, δ) conversions, rounded toward more privacy loss) and, where it exists, :meth:`zcdp` / :meth:`rdp`.

    Examples
    --------
    >>> g = BoundedRange(1.0)
    >>> isinstance(g, Guarantee), g.epsilon(), g.zcdp()
    (True, 1.0, 0.125)
    """

    @abc.abstractmethod
    def epsilon(self, delta: float = 0.0) -> float:
        """The smallest ε (rounded up) such that the guarantee implies (ε, δ)-DP.

        Parameters
        ----------
        delta : float, default 0.0
            δ in [0, 1).

        Returns
        -------
        float
            ε >= 0 (``inf`` where no ε exists at that δ).

        Examples
        --------
        >>> PureDP(1.0).epsilon(), round(PureDP(1.0).epsilon(0.1), 6), round(ZCDP(0.5).epsilon(1e-5), 4)
        (1.0, 0.852905, 4.7284)
        """

    @abc.abstractmethod
    def delta(self, epsilon: float) -> float:
        """The smallest δ (rounded up) such that the guarantee implies (ε, δ)-DP.

        Parameters
        ----------
        epsilon : float
            ε >= 0.

        Returns
        -------
        float
            δ in [0, 1].

        Examples
        --------
        >>> round(PureDP(1.0).delta(0.5), 6), round(BoundedRange(1.0).delta(0.5), 6)
        (0.287649, 0.077405)
        """

    def zcdp(self) -> float:
        """ρ such that the guarantee implies ρ-zCDP; ``ValueError`` where none exists.

        Returns
        -------
        float
            ρ >= 0.

        Raises
        ------
        ValueError
            The guarantee implies no zCDP bound (a δ > 0 part, or no Rényi bound).

        Examples
        --------
        >>> PureDP(1.0).zcdp(), BoundedRange(1.0).zcdp(), ZCDP(0.3).zcdp()
        (0.5, 0.125, 0.3)
        """
        raise ValueError(f"{self!r} implies no zCDP guarantee (it has a δ > 0 part or no Rényi bound)")

    def rdp(self, alpha: float) -> float:
        """ε(α) such that the guarantee implies (α, ε(α))-RDP (``inf`` where none is known).

        The base implementation is αρ from :meth:`zcdp`.

        Parameters
        ----------
        alpha : float
            The Rényi order, > 1.

        Returns
        -------
        float
            ε(α) >= 0 (or ``inf``).

        Raises
        ------
        ValueError
            ``alpha`` is not a finite number > 1.

        Examples
        --------
        >>> ZCDP(0.5).rdp(3.0), ApproxDP(1.0, 1e-6).rdp(2.0)
        (1.5, inf)
        """
        return _check_alpha(alpha) * self.zcdp()


@dataclass(frozen=True)
class PureDP(Guarantee):
    """ε-DP: every output's probability changes by a factor at most e^ε between neighbours.

    Tight profile (randomized response is the worst ε-DP pair): δ(ε') = (e^ε − e^ε')₊ / (1 + e^ε).

    Parameters
    ----------
    epsilon : float
        ε >= 0.

    Attributes
    ----------
    epsilon_ : float
        ε (the methods :meth:`epsilon` / :meth:`delta` convert).

    Raises
    ------
    ValueError
        ``epsilon`` is not a finite number >= 0.

    Examples
    --------
    >>> PureDP(1.0).epsilon(0.0), round(PureDP(1.0).delta(0.5), 6)
    (1.0, 0.287649)
    """

    epsilon_: float

    def __init__(self, epsilon: float) -> None:
        object.__setattr__(self, "epsilon_", check_nonnegative(epsilon, "epsilon"))

    def __repr__(self) -> str:
        return f"PureDP(epsilon={self.epsilon_!r})"

    def epsilon(self, delta: float = 0.0) -> float:
        d, e = check_delta(delta), self.epsilon_
        if d == 0.0:
            return e
        # solve (e^ε − e^ε')/(1 + e^ε) = δ: ε' = ε + log(1 − δ − δ e^{−ε})
        arg = 1.0 - d - d * math.exp(-e)
        return max(0.0, up_eps(e + math.log(arg))) if arg > 0 else 0.0

    def delta(self, epsilon: float) -> float:
        ep = _check_epsilon_arg(epsilon)
        if ep >= self.epsilon_:
            return 0.0
        return min(1.0, up(-math.expm1(ep - self.epsilon_) / (1.0 + math.exp(-self.epsilon_))))

    def zcdp(self) -> float:
        """ε²/2 (Bun & Steinke 2016, Prop. 1.4).

        Returns
        -------
        float
            ρ = ε²/2, rounded up.

        Examples
        --------
        >>> PureDP(1.0).zcdp()
        0.5
        """
        return square_over(self.epsilon_, 2)

    def rdp(self, alpha: float) -> float:
        """The Rényi divergence of randomized response (the worst ε-DP pair), ≤ min(ε, αε²/2).

        Parameters
        ----------
        alpha : float
            The Rényi order, > 1.

        Returns
        -------
        float
            ε(α), rounded up.

        Examples
        --------
        >>> round(PureDP(1.0).rdp(2.0), 6)
        0.735326
        """
        a = _check_alpha(alpha)
        return _not_underflowed(up(min(self.epsilon_, a * self.epsilon_ ** 2 / 2.0, _rr_rdp(self.epsilon_, a))),
                                self.epsilon_)


@dataclass(frozen=True)
class BoundedRange(Guarantee):
    """ε-bounded range (ε-BR): the log-ratio of neighbours spans an interval of width at most ε over the outputs.

    For neighbours x, y the log-ratio log(p_x(o)/p_y(o)) spans an interval of width at most ε over the
    outputs o. The exponential mechanism with parameter ε is ε-BR (so is Gumbel report-noisy-max);
    permute-and-flip and Laplace noisy max are ε-DP but *not* ε-BR.

    Implies ε-DP and ε²/8-zCDP (Cesar & Rogers 2021). Exact profile of one ε-BR release: the worst pair
    is a two-output generalised randomized response with log-ratios {tε − ε, tε}; maximising its
    hockey-stick divergence over t gives t = (ε + ε')/(2ε) and

        δ(ε') = (e^{ε/2} − e^{ε'/2})² / (e^ε − 1),   0 ≤ ε' ≤ ε,

    so ε(δ) = 2 log(e^{ε/2} − √(δ(e^ε − 1))) (0 once δ ≥ tanh(ε/4)).

    Parameters
    ----------
    epsilon : float
        ε >= 0.

    Attributes
    ----------
    epsilon_ : float
        ε.

    Raises
    ------
    ValueError
        ``epsilon`` is not a finite number >= 0.

    Examples
    --------
    >>> round(BoundedRange(1.0).epsilon(0.01), 6)
    0.83431
    """

    epsilon_: float

    def __init__(self, epsilon: float) -> None:
        object.__setattr__(self, "epsilon_", check_nonnegative(epsilon, "epsilon"))

    def __repr__(self) -> str:
        return f"BoundedRange(epsilon={self.epsilon_!r})"

    def epsilon(self, delta: float = 0.0) -> float:
        d, e = check_delta(delta), self.epsilon_
        if d == 0.0 or e == 0.0:
            return e
        s = math.sqrt(d * math.expm1(e)) * math.exp(-e / 2.0)
        if s >= 1.0:
            return 0.0
        return max(0.0, up_eps(e + 2.0 * math.log1p(-s)))

    def delta(self, epsilon: float) -> float:
        ep, e = _check_epsilon_arg(epsilon), self.epsilon_
        if ep >= e:
            return 0.0
        # e^{ε'} (e^{(ε−ε')/2} − 1)² / (e^ε − 1), without cancellation for small ε
        return min(1.0, up(math.exp(ep) * math.expm1((e - ep) / 2.0) ** 2 / math.expm1(e)))

    def zcdp(self) -> float:
        """ε²/8 (Cesar & Rogers 2021, "Bounding, Concentrating, and Truncating", ALT).

        Returns
        -------
        float
            ρ = ε²/8, rounded up.

        Examples
        --------
        >>> BoundedRange(1.0).zcdp()
        0.125
        """
        return square_over(self.epsilon_, 8)

    def rdp(self, alpha: float) -> float:
        """The worst ε-BR pair's Rényi divergence, never above the zCDP bound αε²/8, ε, or randomized response's.

        A certified supremum over the two-output pairs (see ``_br_rdp_exact``).

        Parameters
        ----------
        alpha : float
            The Rényi order, > 1.

        Returns
        -------
        float
            ε(α), rounded up.

        Examples
        --------
        >>> round(BoundedRange(1.0).rdp(2.0), 6)
        0.240455
        """
        a = _check_alpha(alpha)
        return _not_underflowed(up(min(a * self.epsilon_ ** 2 / 8.0, self.epsilon_, _rr_rdp(self.epsilon_, a),
                                       _br_rdp_exact(self.epsilon_, a) * (1.0 + 1e-12))), self.epsilon_)


@dataclass(frozen=True)
class ApproxDP(Guarantee):
    """(ε, δ)-DP.

    Tight profile (the worst (ε, δ) pair of Kairouz, Oh & Viswanath 2015):
    δ(ε') = δ + (1 − δ)(e^ε − e^ε')₊/(1 + e^ε) for ε' ≥ 0, and no ε at any δ' < δ.

    Parameters
    ----------
    epsilon : float
        ε >= 0.
    delta : float, default 0.0
        δ in [0, 1].

    Attributes
    ----------
    epsilon_, delta_ : float
        ε and δ.

    Raises
    ------
    ValueError
        ``epsilon`` or ``delta`` out of range.

    Examples
    --------
    >>> ApproxDP(1.0, 1e-6)
    ApproxDP(epsilon=1.0, delta=1e-06)
    >>> ApproxDP(1.0, 1e-6).epsilon(1e-7)
    inf
    """

    epsilon_: float
    delta_: float

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        object.__setattr__(self, "epsilon_", check_nonnegative(epsilon, "epsilon"))
        object.__setattr__(self, "delta_", check_delta(delta, "delta", allow_one=True))

    def __repr__(self) -> str:
        return f"ApproxDP(epsilon={self.epsilon_!r}, delta={self.delta_!r})"

    def epsilon(self, delta: float | None = None) -> float:
        """The smallest ε (rounded up) such that the guarantee implies (ε, δ')-DP at ``delta`` = δ'.

        Parameters
        ----------
        delta : float, optional
            δ' in [0, 1]; default: the guarantee's own δ (which gives its own ε).

        Returns
        -------
        float
            ε' (``inf`` for δ' below the guarantee's δ).

        Examples
        --------
        >>> g = ApproxDP(1.0, 1e-6)
        >>> g.epsilon(), g.epsilon(1e-7), g.epsilon(1.0)
        (1.0, inf, 0.0)
        """
        d = self.delta_ if delta is None else check_delta(delta, allow_one=True)
        if d < self.delta_:
            return math.inf
        if d == self.delta_ or self.delta_ == 1.0:
            return self.epsilon_ if self.delta_ < 1.0 else 0.0
        return PureDP(self.epsilon_).epsilon(min((d - self.delta_) / (1.0 - self.delta_), math.nextafter(1.0, 0)))

    def delta(self, epsilon: float | None = None) -> float:
        """The smallest δ' (rounded up) such that the guarantee implies (ε', δ')-DP at ``epsilon`` = ε'.

        Parameters
        ----------
        epsilon : float, optional
            ε' >= 0; default: the guarantee's own ε (which gives its own δ, rounded up).

        Returns
        -------
        float
            δ' in [δ, 1].

        Examples
        --------
        >>> g = ApproxDP(1.0, 1e-6)
        >>> g.delta() >= 1e-6, round(g.delta(0.5), 6)
        (True, 0.28765)
        """
        ep = self.epsilon_ if epsilon is None else _check_epsilon_arg(epsilon)
        return min(1.0, up(self.delta_ + (1.0 - self.delta_) * PureDP(self.epsilon_).delta(ep)))

    def zcdp(self) -> float:
        if self.delta_ > 0.0:
            return super().zcdp()
        return PureDP(self.epsilon_).zcdp()

    def rdp(self, alpha: float) -> float:
        if self.delta_ > 0.0:
            _check_alpha(alpha)
            return math.inf
        return PureDP(self.epsilon_).rdp(alpha)


@dataclass(frozen=True)
class ZCDP(Guarantee):
    """ρ-zCDP: D_α(M(x) ‖ M(y)) ≤ ρα for every α > 1.

    Converted with the tight bound of Canonne, Kamath & Steinke (2020):
    δ = inf_{α>1} exp((α−1)(αρ − ε))/(α − 1) · (1 − 1/α)^α.

    Parameters
    ----------
    rho : float
        ρ >= 0.

    Raises
    ------
    ValueError
        ``rho`` is not a finite number >= 0.

    Examples
    --------
    >>> round(ZCDP(0.5).epsilon(1e-5), 4), round(ZCDP(0.5).delta(3.0), 8)
    (4.7284, 0.00514318)
    """

    rho: float

    def __init__(self, rho: float) -> None:
        object.__setattr__(self, "rho", check_nonnegative(rho, "rho"))

    def __repr__(self) -> str:
        return f"ZCDP(rho={self.rho!r})"

    def epsilon(self, delta: float = 0.0) -> float:
        return zcdp_epsilon(self.rho, check_delta(delta))

    def delta(self, epsilon: float) -> float:
        return zcdp_delta(self.rho, _check_epsilon_arg(epsilon))

    def zcdp(self) -> float:
        return self.rho


@dataclass(frozen=True)
class GaussianMechanism(Guarantee):
    """The Gaussian mechanism with noise σ on a query of ℓ2-sensitivity Δ, by its exact privacy profile.

    Balle & Wang 2018, Thm 8: δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ); ρ-zCDP with ρ = Δ²/(2σ²).

    Parameters
    ----------
    sigma : float
        The noise standard deviation σ > 0.
    sensitivity : float, default 1.0
        The ℓ2-sensitivity Δ > 0 of the query.

    Raises
    ------
    ValueError
        ``sigma`` or ``sensitivity`` not a finite number > 0.

    Examples
    --------
    >>> g = GaussianMechanism(sigma=3.7)
    >>> round(g.delta(1.0), 9), round(g.epsilon(1e-5), 6), round(g.zcdp(), 6)
    (1.1456e-05, 1.009096, 0.036523)
    """

    sigma: float
    sensitivity: float = 1.0

    def __init__(self, sigma: float, sensitivity: float = 1.0) -> None:
        object.__setattr__(self, "sigma", check_positive(sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check_positive(sensitivity, "sensitivity"))

    def __repr__(self) -> str:
        return f"GaussianMechanism(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})"

    def delta(self, epsilon: float) -> float:
        ep = _check_epsilon_arg(epsilon)
        mu = self.sensitivity / self.sigma
        a = float(ndtr(mu / 2.0 - ep / mu))
        b = math.exp(ep + float(log_ndtr(-mu / 2.0 - ep / mu)))
        # both terms carry a few ulps of relative error: widen by far more than that
        return min(1.0, max(0.0, a - b) + 1e-13 * a)

    def epsilon(self, delta: float = 0.0) -> float:
        d = check_delta(delta)
        if d == 0.0:
            return math.inf
        if self.delta(0.0) <= d:
            return 0.0
        hi = 1.0
        while self.delta(hi) > d:
            hi *= 2.0
        return up(bisect_decreasing(self.delta, d, 0.0, hi, xtol=1e-13))

    def zcdp(self) -> float:
        from fractions import Fraction
        exact = Fraction(self.sensitivity) ** 2 / (2 * Fraction(self.sigma) ** 2)
        return exact_up(self.sensitivity ** 2 / (2.0 * self.sigma ** 2), exact)


@dataclass(frozen=True)
class RDP(Guarantee):
    """A Rényi-DP curve: (α, ε(α))-RDP at each of the given orders α > 1 (Mironov 2017).

    Converted with the improved bound ε = ε_α + log((α−1)/α) − (log δ + log α)/(α − 1) (Balle et al. 2020),
    minimised over the orders. Curves compose by adding ε(α) order by order
    (:func:`~dpselect.accounting.compose_rdp`).

    Parameters
    ----------
    orders : sequence of float or ndarray
        The Rényi orders α, finite, > 1 and distinct (sorted on construction).
    epsilons : sequence of float or ndarray
        ε(α) at each order, >= 0 (``inf`` allowed).

    Attributes
    ----------
    orders, epsilons : tuple of float
        The curve, sorted by order.

    Raises
    ------
    ValueError
        Empty or mismatched inputs, an order <= 1 or repeated, or a negative or NaN ε.

    Examples
    --------
    >>> c = RDP.from_function(lambda a: a * 0.125)        # the curve of ρ = 0.125 zCDP
    >>> c
    RDP(<259 orders in [1.01, 1024]>)
    >>> round(c.epsilon(1e-6), 3)
    2.419
    >>> RDP([2.0, 4.0], [0.25, 0.5])
    RDP(orders=[2.0, 4.0], epsilons=[0.25, 0.5])
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]

    def __init__(self, orders: Sequence[float] | np.ndarray, epsilons: Sequence[float] | np.ndarray) -> None:
        o = np.asarray(orders, dtype=float).ravel()
        e = np.asarray(epsilons, dtype=float).ravel()
        if o.size == 0 or o.shape != e.shape:
            raise ValueError(f"orders and epsilons must be non-empty and of the same length, got {o.size} orders "
                             f"and {e.size} epsilons")
        if not np.all(np.isfinite(o)) or np.any(o <= 1.0):
            raise ValueError(f"orders must be finite numbers > 1, got {short_repr(o.tolist())}")
        if np.any(np.isnan(e)) or np.any(e < 0):
            raise ValueError(f"epsilons must be numbers >= 0 (inf allowed), got {short_repr(e.tolist())}")
        idx = np.argsort(o, kind="stable")
        o, e = o[idx], e[idx]
        if np.any(np.diff(o) == 0):
            raise ValueError(f"orders must be distinct, got {short_repr(o.tolist())}")
        object.__setattr__(self, "orders", tuple(float(x) for x in o))
        object.__setattr__(self, "epsilons", tuple(float(x) for x in e))

    @classmethod
    def from_function(cls, fn: Callable[[float], float], orders: Sequence[float] = DEFAULT_ORDERS) -> "RDP":
        """Tabulate a curve α ↦ ε(α) on ``orders``.

        Parameters
        ----------
        fn : callable
            ``fn(alpha) -> epsilon``.
        orders : sequence of float, default DEFAULT_ORDERS
            The orders to tabulate at (259 orders from 1.01 to 1024 by default).

        Returns
        -------
        RDP

        Raises
        ------
        TypeError
            ``fn`` is not callable.

        Examples
        --------
        >>> RDP.from_function(lambda a: 0.5 * a, orders=[2.0, 3.0])
        RDP(orders=[2.0, 3.0], epsilons=[1.0, 1.5])
        """
        if not callable(fn):
            raise TypeError(f"fn must be callable (alpha -> epsilon), got {type(fn).__name__}")
        return cls(orders, [float(fn(float(a))) for a in orders])

    def __repr__(self) -> str:
        if len(self.orders) <= 4:
            return f"RDP(orders={list(self.orders)!r}, epsilons={list(self.epsilons)!r})"
        return f"RDP(<{len(self.orders)} orders in [{self.orders[0]:g}, {self.orders[-1]:g}]>)"

    def epsilon(self, delta: float = 0.0) -> float:
        return rdp_epsilon(np.array(self.orders), np.array(self.epsilons), check_delta(delta))

    def delta(self, epsilon: float) -> float:
        return rdp_delta(np.array(self.orders), np.array(self.epsilons), _check_epsilon_arg(epsilon))

    def rdp(self, alpha: float) -> float:
        """ε at ``alpha``: the tabulated value at the next order ≥ alpha, ``inf`` beyond the last order.

        Rényi divergences increase with the order, so this is an upper bound.

        Parameters
        ----------
        alpha : float
            The Rényi order, > 1.

        Returns
        -------
        float

        Examples
        --------
        >>> c = RDP([2.0, 4.0], [0.25, 0.5])
        >>> c.rdp(3.0), c.rdp(5.0)
        (0.5, inf)
        """
        a = _check_alpha(alpha)
        i = int(np.searchsorted(np.array(self.orders), a, side="left"))
        return self.epsilons[i] if i < len(self.orders) else math.inf


@dataclass(frozen=True)
class NonPrivate(Guarantee):
    """A release that is not differentially private: no finite ε at any δ < 1 (dp-accounting's
    ``NonPrivateDpEvent``).

    What dpselect charges for a release it cannot vouch for: float sampling (``exact=False``), a quantity
    the proof treats as public read from the data (a call that warned :class:`~dpselect.PrivacyLeakWarning`),
    the papers' own code. A finite budget refuses it before anything is drawn; an ``Accountant`` with
    ``epsilon=math.inf`` records it, and its ``spent()`` is then a ``NonPrivate`` naming those calls.

    Parameters
    ----------
    calls : tuple of str, default ()
        The labels of the calls that made a total non-private (set by ``Accountant.spent``).

    Examples
    --------
    >>> g = NonPrivate()
    >>> g, g.epsilon(1e-6), g.delta(10.0), g.zcdp(), g.rdp(2.0)
    (NonPrivate(), inf, 1.0, inf, inf)
    >>> NonPrivate(("exponential(exact=False): non-private",))
    NonPrivate(calls=('exponential(exact=False): non-private',))
    """

    calls: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"NonPrivate(calls={self.calls!r})" if self.calls else "NonPrivate()"

    def epsilon(self, delta: float = 0.0) -> float:
        check_delta(delta)
        return math.inf

    def delta(self, epsilon: float) -> float:
        _check_epsilon_arg(epsilon)
        return 1.0

    def zcdp(self) -> float:
        return math.inf

    def rdp(self, alpha: float) -> float:
        _check_alpha(alpha)
        return math.inf


GuaranteeLike = Union[PureDP, BoundedRange, ApproxDP, ZCDP, GaussianMechanism, RDP, NonPrivate]
