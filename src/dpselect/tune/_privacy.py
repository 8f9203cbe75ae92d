"""The certified guarantee of private selection from private candidates.

Analyses (each applies to the best of K runs, the pair (score, candidate) of the best run released):

* Liu & Talwar (STOC 2019), random stopping (K geometric with parameter γ) on an ε-DP run: 3ε-DP
  (their random-stopping theorem, the η = 1 case of Papernot & Steinke's (2 + η)ε); the known-threshold
  variant (release the first run whose score reaches the threshold, nothing if K runs pass without one; K
  geometric): 2ε-DP (their Algorithm 1, the bound OpenDP's
  ``make_select_private_candidate`` states).
* Papernot & Steinke (ICLR 2022), Thm 2, K ~ TNB(η, γ) (logarithmic η = 0, geometric η = 1), from the
  run's RDP curve ε(λ): for every λ > 1 and λ̂ > 1,
  ε'(λ) ≤ ε(λ) + (1 + η)((1 − 1/λ̂) ε(λ̂) + log(1/γ)/λ̂) + log(E[K])/(λ − 1);
  with λ, λ̂ → ∞ on an ε-DP run this is the pure bound (2 + η)ε (3ε for the geometric law).
* Papernot & Steinke, Thm 6, K ~ Poisson(μ): ε'(λ) ≤ ε(λ) + μ δ̂ + log(μ)/(λ − 1), where the run is
  (ε̂, δ̂)-DP at ε̂ = log(λ/(λ − 1)) (δ̂ from the run's own privacy profile, e.g. the exact Gaussian one).
* An (ε, δ)-DP run with δ > 0: each run's pair of output laws is (1 − δ) times an ε-DP pair plus δ times
  anything (Kairouz, Oh & Viswanath 2015), so the procedure is the procedure on the ε-DP pair, with K
  reweighted by (1 − δ)^K (a law of the same family with a smaller mean, whose bounds are smaller), except
  on an event of probability 1 − E[(1 − δ)^K] ≤ δ E[K]: it costs the ε-DP analysis plus δ E[K].

* Privacy profiles (after Koskela, Redberg & Wang, ICML 2024; derivation and numerics in ``_profile.py``),
  every Papernot–Steinke law and ``liu_talwar`` (geometric), from the run's own profile δ_Q (its
  ``delta``; exact for ``GaussianMechanism``, ``PureDP``, ``ApproxDP``): δ(ε) ≤ E[K] δ_Q(ε − c), with c
  bounding log φ'(F_P)/φ'(F_R) (φ the generating function of K) through δ_Q. Not RDP: it enters
  ``epsilon`` / ``delta`` only (never the curve charged to an accountant in RDP form).

The RDP curves are converted to (ε, δ) by the curve (Balle et al. 2020); the procedure's ε(δ) and δ(ε)
are the minimum of the valid analyses (RDP, pure, privacy profile).
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from fractions import Fraction

from .._validation import short_repr
from ..accounting._numeric import check_delta, exact_up, rdp_delta, rdp_epsilon, up, up_eps
from ..accounting.guarantees import DEFAULT_ORDERS, RDP, ApproxDP, Guarantee, PureDP
from ._profile import profile_delta, profile_epsilon, ratio_exponent
from ._stopping import _Law

__all__ = ["TuningGuarantee"]

#: The orders of the procedure's RDP curve: dpselect's DEFAULT_ORDERS (so an Accountant reads the curve at its
#: own orders exactly) plus 1500 orders α = 1 + 10^t, t evenly spaced in [-2, 3.01]: the minimum over λ̂ of
#: Thm 2 and the conversion to (ε, δ) are both minima over the grid, so a finer grid only lowers ε.
_ORDERS = np.unique(np.concatenate([np.asarray(DEFAULT_ORDERS, dtype=float),
                                    1.0 + 10.0 ** np.linspace(-2.0, 3.01, 1500)]))

METHODS = ("liu_talwar", "liu_talwar_threshold", "geometric", "logarithmic", "truncated_negative_binomial",
           "poisson")


@dataclass(frozen=True, init=False, repr=False)
class TuningGuarantee(RDP):
    """The certified guarantee of a private selection from private candidates (``dpselect.tune``).

    An RDP curve (so ``Accountant.charge`` accepts it in ``mode="fixed"`` / ``"batch"``) together with the
    pure-DP bound and the δ part that come from the base run, and the method that produced it.
    ``.epsilon(delta)`` / ``.delta(epsilon)`` are the minimum over the valid analyses;
    :meth:`composable` is the value to charge to an :class:`~dpselect.Accountant` in any mode.

    Parameters
    ----------
    orders, epsilons : sequence of float
        The RDP curve of the procedure run on the ε-DP part of the base run (``inf`` where none).
    method : str
        The selection method (``dpselect.tune`` method name).
    pure_epsilon : float, default inf
        A pure-DP bound of that procedure (``inf`` where none).
    extra_delta : float, default 0.0
        The δ added by an (ε, δ)-DP base run (δ E[K]); 0 for an RDP or pure base.
    profile_base : Guarantee, optional
        The run's guarantee, read by its privacy profile (``delta`` / ``epsilon``) for the privacy-profile
        bound; None: no such bound.
    profile_c : float, default inf
        The constant c of the privacy-profile bound δ(ε) ≤ E[K] δ_Q(ε − c).
    profile_mean : float, default inf
        E[K] (rounded up).

    Attributes
    ----------
    orders, epsilons : tuple of float
        The RDP curve (all ``inf`` when ``extra_delta > 0``: the procedure is then not RDP).
    profile_c, profile_mean : float
        The privacy-profile bound's c and E[K] (``inf`` where that bound is not available).

    Examples
    --------
    >>> from dpselect.tune import tuning_privacy
    >>> g = tuning_privacy(1.0, method="liu_talwar", mean_runs=10.0)
    >>> g.pure_epsilon, round(g.epsilon(0.0), 3), g.composable()
    (3.0, 2.593, PureDP(epsilon=3.0))
    """

    method: str
    pure_epsilon: float
    extra_delta: float
    curve_epsilons: tuple
    profile_c: float
    profile_mean: float

    def __init__(self, orders: Any, epsilons: Any, method: str, pure_epsilon: float = math.inf,
                 extra_delta: float = 0.0, profile_base: Guarantee | None = None, profile_c: float = math.inf,
                 profile_mean: float = math.inf) -> None:
        super().__init__(orders, epsilons)
        ok = profile_base is not None and math.isfinite(profile_c) and math.isfinite(profile_mean)
        object.__setattr__(self, "_profile_base", profile_base if ok else None)
        object.__setattr__(self, "profile_c", float(profile_c) if ok else math.inf)
        object.__setattr__(self, "profile_mean", float(profile_mean) if ok else math.inf)
        object.__setattr__(self, "method", str(method))
        object.__setattr__(self, "pure_epsilon", float(pure_epsilon))
        object.__setattr__(self, "extra_delta", float(extra_delta))
        # the curve of the procedure on the ε-DP part; the procedure itself is RDP only without a δ part
        object.__setattr__(self, "curve_epsilons", self.epsilons)
        if self.extra_delta > 0.0:
            object.__setattr__(self, "epsilons", tuple(math.inf for _ in self.orders))

    def __repr__(self) -> str:
        parts = [f"method={self.method!r}"]
        if math.isfinite(self.pure_epsilon):
            parts.append(f"pure_epsilon={self.pure_epsilon!r}")
        if self.extra_delta:
            parts.append(f"extra_delta={self.extra_delta!r}")
        if math.isfinite(self.profile_c):
            parts.append(f"profile_c={self.profile_c!r}")
        return f"TuningGuarantee({', '.join(parts)}, <RDP curve on {len(self.orders)} orders>)"

    def epsilon(self, delta: float = 0.0) -> float:
        d = check_delta(delta)
        return min(self._epsilon_rdp(d), self._epsilon_profile(d))

    def _epsilon_profile(self, d: float) -> float:
        base = self._profile_base         # type: ignore[attr-defined]
        if base is None:
            return math.inf
        return profile_epsilon(base.epsilon, self.profile_c, self.profile_mean, d)

    def _epsilon_rdp(self, d: float) -> float:
        if d < self.extra_delta:
            return math.inf
        rest = max(0.0, math.nextafter(d - self.extra_delta, 0.0)) if self.extra_delta else d
        best = self.pure_epsilon
        if rest > 0.0:
            if math.isfinite(self.pure_epsilon):
                best = min(best, PureDP(self.pure_epsilon).epsilon(rest))
            best = min(best, rdp_epsilon(np.array(self.orders), np.array(self.curve_epsilons), rest))
        return best

    def delta(self, epsilon: float) -> float:
        e = float(epsilon)
        if not e >= 0.0 or not math.isfinite(e):
            raise ValueError(f"epsilon must be a finite number >= 0, got {short_repr(epsilon)}")
        d = rdp_delta(np.array(self.orders), np.array(self.curve_epsilons), e)
        if math.isfinite(self.pure_epsilon):
            d = min(d, PureDP(self.pure_epsilon).delta(e))
        d = min(1.0, up(d + self.extra_delta) if self.extra_delta else d)
        base = self._profile_base         # type: ignore[attr-defined]
        if base is not None:
            d = min(d, profile_delta(base.delta, self.profile_c, self.profile_mean, e))
        return d

    def rdp(self, alpha: float) -> float:
        return super().rdp(alpha)

    def composable(self) -> Guarantee:
        """The value to charge to an :class:`~dpselect.Accountant`: a pure or (ε, δ) bound where one exists
        (accepted in every mode), else the RDP curve itself (``mode="fixed"`` or ``"batch"``).

        Returns
        -------
        Guarantee
            ``PureDP``, ``ApproxDP`` or this value (an :class:`~dpselect.accounting.RDP` curve).

        Examples
        --------
        >>> from dpselect.accounting import GaussianMechanism
        >>> from dpselect.tune import tuning_privacy
        >>> tuning_privacy(1.0, method="logarithmic", mean_runs=10.0).composable()
        PureDP(epsilon=2.0)
        >>> g = tuning_privacy(GaussianMechanism(4.0), method="poisson", mean_runs=10.0)
        >>> g.composable() is g
        True
        """
        if math.isfinite(self.pure_epsilon):
            if self.extra_delta:
                return ApproxDP(self.pure_epsilon, min(1.0, self.extra_delta))
            return PureDP(self.pure_epsilon)
        return self


def base_parts(run_privacy: Any) -> tuple[Guarantee, float, float]:
    """(the ε-DP / RDP part of the base run, its pure ε or inf, its δ) from what the caller passed."""
    if isinstance(run_privacy, numbers.Real) and not isinstance(run_privacy, bool):
        e = float(run_privacy)
        if not (math.isfinite(e) and e > 0.0):
            raise ValueError(f"run_privacy as a number is the run's pure ε: a finite number > 0, got "
                             f"{short_repr(run_privacy)}")
        return PureDP(e), e, 0.0
    if not isinstance(run_privacy, Guarantee):
        raise TypeError(f"run_privacy must be a float ε or a dpselect.accounting guarantee value (PureDP, ApproxDP, "
                        f"GaussianMechanism, ZCDP, RDP, ...), got {short_repr(run_privacy)}")
    if isinstance(run_privacy, TuningGuarantee):
        raise TypeError("run_privacy is itself a tuning guarantee: a private selection of private selections is "
                        "not analysed here")
    if isinstance(run_privacy, ApproxDP):
        return PureDP(run_privacy.epsilon_), run_privacy.epsilon_, run_privacy.delta_
    pure = run_privacy.epsilon(0.0)
    return run_privacy, pure, 0.0


def _tnb_curve(base_curve: np.ndarray, orders: np.ndarray, pure: float, eta: float, gamma: float,
               mean: float) -> np.ndarray:
    """Papernot & Steinke Thm 2 on the grid, made non-decreasing in the order."""
    with np.errstate(invalid="ignore"):
        inner = (1.0 - 1.0 / orders) * base_curve + math.log(1.0 / gamma) / orders
    c_min = float(np.min(inner))
    if math.isfinite(pure):
        c_min = min(c_min, pure)                       # λ̂ → ∞
    c = (1.0 + eta) * c_min
    out = base_curve + c + math.log(mean) / (orders - 1.0)
    return np.minimum.accumulate(out[::-1])[::-1]


def _poisson_curve(base: Guarantee, base_curve: np.ndarray, orders: np.ndarray, mu: float) -> np.ndarray:
    """Papernot & Steinke Thm 6 on the grid, made non-decreasing in the order."""
    out = np.empty_like(base_curve)
    for i, lam in enumerate(orders):
        eps_hat = math.log1p(1.0 / (lam - 1.0))
        d_hat = base.delta(eps_hat)
        out[i] = base_curve[i] + mu * d_hat + math.log(mu) / (lam - 1.0)
    return np.minimum.accumulate(out[::-1])[::-1]


def _times(a: Fraction, b: float) -> float:
    """a·b rounded up from the exact product."""
    exact = a * Fraction(b)
    return exact_up(float(exact), exact)


def _profile_c_uncached(base: Guarantee, law: _Law, kinks: tuple) -> float:
    if law.kind == "poisson":
        return ratio_exponent(base.delta, "poisson", None, 0.0, float(law.mu), kinks)  # type: ignore[arg-type]
    eta = 0.0 if law.kind == "logarithmic" else float(law.eta)  # type: ignore[arg-type]
    return ratio_exponent(base.delta, law.kind, float(law.gamma), eta, None, kinks)  # type: ignore[arg-type]


_profile_c_cached = functools.lru_cache(maxsize=256)(_profile_c_uncached)


def _profile_c(base: Guarantee, law: _Law, kinks: tuple) -> float:
    """The profile bound's c (cached per run guarantee and law: both are immutable values)."""
    try:
        return _profile_c_cached(base, law, kinks)
    except TypeError:                   # an unhashable guarantee
        return _profile_c_uncached(base, law, kinks)


def procedure_guarantee(run_privacy: Any, method: str, law: _Law) -> TuningGuarantee:
    """The certified guarantee of ``method`` with the law ``law`` of K on a run of guarantee ``run_privacy``."""
    base, pure, delta = base_parts(run_privacy)
    if method in ("liu_talwar", "liu_talwar_threshold") and not math.isfinite(pure):
        raise ValueError(f"method={method!r} is analysed for a pure ε-DP (or (ε, δ)-DP) run only, got "
                         f"run_privacy={run_privacy!r}: use method='geometric' (the same procedure, Rényi-DP "
                         "accounting of Papernot & Steinke) or another Papernot–Steinke law")
    orders = _ORDERS
    base_curve = np.array([base.rdp(float(a)) for a in orders], dtype=float)
    mean = law.mean()
    if method == "liu_talwar_threshold":
        p = _times(Fraction(2), pure)
        curve = np.array([PureDP(p).rdp(float(a)) for a in orders])
    elif method == "poisson":
        assert law.mu is not None
        curve = _poisson_curve(base, base_curve, orders, float(law.mu))
        p = math.inf
    else:
        assert law.gamma is not None
        eta = 0.0 if law.kind == "logarithmic" else float(law.eta)  # type: ignore[arg-type]
        curve = _tnb_curve(base_curve, orders, pure, eta, float(law.gamma), mean)
        p = _times(2 + Fraction(eta), pure) if math.isfinite(pure) else math.inf
        if math.isfinite(p):
            curve = np.minimum(curve, [PureDP(p).rdp(float(a)) for a in orders])
    curve = np.array([max(0.0, up_eps(float(x))) for x in curve])   # a divergence is >= 0
    extra = up(delta * mean) if delta > 0.0 else 0.0
    prof_base, c = None, math.inf
    if method != "liu_talwar_threshold":
        prof_base = PureDP(float(run_privacy)) if isinstance(run_privacy, numbers.Real) else run_privacy
        kinks = [x for x in (pure, getattr(prof_base, "epsilon_", math.inf)) if math.isfinite(x)]
        c = _profile_c(prof_base, law, tuple(kinks))
    return TuningGuarantee(orders, curve, method, p, min(1.0, extra), prof_base, c, mean)
