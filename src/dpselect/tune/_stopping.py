"""The laws of the number of runs K, parameterised by their mean, and their exact sampler.

Every law is a distribution on the integers whose probabilities are ``c * w_k`` with ``w_k`` an exact
rational (the parameters γ, η, μ are floats, read as the exact rationals they are) and ``c`` a normalising
constant that is rational (geometric, integer η) or enclosed by correctly rounded decimal arithmetic
(``γ^-η``, ``log(1/γ)``, ``e^-μ``). K is drawn by inverting the CDF against a uniform U whose binary
expansion is read 64 bits at a time (:func:`dpselect._exact_random.words`): U is compared with the
enclosure of F(k) and whichever interval is wider is refined until they separate, so P(K = k) is exactly
the law's probability (no float rounding of the stopping law).

Laws (Papernot & Steinke 2022, Def. 1; Liu & Talwar 2019):

* geometric(γ): P(K = k) = γ (1 − γ)^(k−1), k ≥ 1, mean 1/γ;
* truncated negative binomial TNB(η, γ), η ∈ (−1, ∞) \\ {0}: P(K = k) ∝ (1 − γ)^k Π_{l<k} (l + η)/(l + 1),
  k ≥ 1, normalised by γ^(−η) − 1; η = 1 is the geometric law;
* logarithmic(γ) (the η → 0 limit): P(K = k) = (1 − γ)^k / (k log(1/γ)), k ≥ 1;
* Poisson(μ): P(K = k) = e^(−μ) μ^k / k!, k ≥ 0 (K = 0 releases nothing).
"""
from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from .._exact_random import Dec, exp_enclosure, next_word

__all__: list[str] = []


@dataclass(frozen=True)
class _Law:
    """A law of K: ``kind`` in {"tnb", "logarithmic", "poisson"}; geometric is ``tnb`` with η = 1."""

    kind: str
    gamma: Optional[Fraction] = None     # TNB / logarithmic
    eta: Optional[Fraction] = None       # TNB
    mu: Optional[Fraction] = None        # Poisson

    @property
    def kmin(self) -> int:
        return 0 if self.kind == "poisson" else 1

    # -- exact weights -----------------------------------------------------------------------------
    def weight_ratio(self, k: int) -> Fraction:
        """|w_k / w_{k-1}| (w_{kmin} from :meth:`first_weight`)."""
        if self.kind == "poisson":
            assert self.mu is not None
            return self.mu / k
        assert self.gamma is not None
        q = 1 - self.gamma
        if self.kind == "logarithmic":
            return q * Fraction(k - 1, k)
        assert self.eta is not None
        return q * (k - 1 + self.eta) / k

    def first_weight(self) -> Fraction:
        """|w_kmin|."""
        if self.kind == "poisson":
            return Fraction(1)
        assert self.gamma is not None
        q = 1 - self.gamma
        if self.kind == "logarithmic":
            return q
        assert self.eta is not None
        return q * abs(self.eta)

    def constant(self, prec: int) -> tuple[Fraction, Fraction]:
        """Rational bounds on |c| (the normaliser), of relative width about 10^-prec (exact where rational)."""
        if self.kind == "poisson":
            assert self.mu is not None
            return exp_enclosure(-float(self.mu), prec)
        assert self.gamma is not None
        g = self.gamma
        D = Dec(prec)
        glo, ghi = D.frac(g)
        ln_lo, ln_hi = D.ln(glo, ghi)               # ln γ < 0
        if self.kind == "logarithmic":
            # |c| = 1 / |ln γ|, |ln γ| in [-ln_hi, -ln_lo]
            return -1 / Fraction(ln_lo), -1 / Fraction(ln_hi)   # (Fraction negation: exact)
        assert self.eta is not None
        eta = self.eta
        if eta.denominator == 1 and eta > 0:
            exact = 1 / (g ** (-int(eta)) - 1)
            return exact, exact
        # γ^(-η) = exp(-η ln γ); the scalar -η is a float, exact as a Decimal
        s = decimal.Decimal(float(-eta))
        if s > 0:
            z_lo, z_hi = D.scale((ln_lo, ln_hi), s)
        else:
            z_lo, z_hi = D.scale(D.neg((ln_lo, ln_hi)), s.copy_negate())   # copy_negate: exact
        e_lo, e_hi = D.exp(z_lo, z_hi)
        if eta > 0:                                  # γ^(-η) > 1: c = 1/(γ^(-η) − 1) > 0
            return 1 / (Fraction(e_hi) - 1), 1 / (Fraction(e_lo) - 1)
        # η < 0: γ^(-η) = γ^|η| < 1, |c| = 1/(1 − γ^|η|)
        return 1 / (1 - Fraction(e_lo)), 1 / (1 - Fraction(e_hi))

    # -- float view (tests, docs) ------------------------------------------------------------------
    def pmf(self, kmax: int) -> np.ndarray:
        """P(K = k) for k = 0..kmax as floats (from the exact weights and a 40-digit constant)."""
        lo, hi = self.constant(40)
        c = (lo + hi) / 2
        out = np.zeros(kmax + 1)
        w = self.first_weight()
        for k in range(self.kmin, kmax + 1):
            if k > self.kmin:
                w *= self.weight_ratio(k)
            out[k] = float(c * w)
        return out

    def mean(self) -> float:
        """E[K] in float (rounded up by a relative 1e-12)."""
        if self.kind == "poisson":
            assert self.mu is not None
            m = float(self.mu)
        else:
            assert self.gamma is not None
            m = _mean_of_gamma(self.kind, float(self.gamma), None if self.eta is None else float(self.eta))
        return m * (1.0 + 1e-12)

    # -- the exact sampler -------------------------------------------------------------------------
    def _float_constant(self) -> float:
        """|c| in float (relative error ~1e-15; 0 where it underflows)."""
        if self.kind == "poisson":
            assert self.mu is not None
            return math.exp(-float(self.mu))
        assert self.gamma is not None
        lg = math.log(float(self.gamma))
        if self.kind == "logarithmic":
            return 1.0 / -lg
        assert self.eta is not None
        return 1.0 / abs(math.expm1(-float(self.eta) * lg))

    def _float_ratio_terms(self) -> tuple[float, float]:
        """(a, b) with |w_k / w_{k-1}| = a + b/k, in float."""
        if self.kind == "poisson":
            assert self.mu is not None
            return 0.0, float(self.mu)
        assert self.gamma is not None
        q = float(1 - self.gamma)
        if self.kind == "logarithmic":
            return q, -q
        assert self.eta is not None
        return q, q * (float(self.eta) - 1.0)

    def sample(self, rng: np.random.Generator) -> int:
        """K drawn exactly from the law (words convention: one 64-bit word of ``rng`` per digit of U).

        A float stage decides U < F(k) when U's first word lies clearly on one side of a float enclosure
        of F(k) (relative error bound far above the float error); otherwise the exact stage below decides
        with rational / decimal enclosures, reading further words of U as needed."""
        num = next_word(rng)
        c = self._float_constant()
        k = self.kmin
        if c > 0.0 and math.isfinite(c):
            w = float(self.first_weight())
            cum = w
            a, b = self._float_ratio_terms()
            u_lo = num * 2.0 ** -64 * (1.0 - 2.0 ** -50)
            u_hi = (num + 1) * 2.0 ** -64 * (1.0 + 2.0 ** -50)
            while k < 10_000_000:
                f = c * cum
                rel = 1e-12 + 1e-14 * (k + 1)
                if f > 0.0 and u_hi < f * (1.0 - rel):
                    return k
                if not u_lo > f * (1.0 + rel):
                    break                             # too close to call in float: exact stage from this k
                k += 1
                w *= a + b / k                        # float |w_k / w_{k-1}|
                cum += w
        return self._sample_exact(num, k, rng)

    def _sample_exact(self, num: int, k0: int, rng: np.random.Generator) -> int:
        """The exact stage: U's first word is ``num``; U >= F(k0 − 1) is already known."""
        nbits = 64
        prec = 40
        c_lo, c_hi = self.constant(prec)
        w = self.first_weight()
        cum = w                                       # |Σ_{j ≤ k} w_j|
        for k in range(self.kmin + 1, k0 + 1):
            w = w * self.weight_ratio(k)
            cum += w
        k = k0
        while True:
            u_lo = Fraction(num, 1 << nbits)
            u_hi = Fraction(num + 1, 1 << nbits)
            f_lo, f_hi = c_lo * cum, c_hi * cum       # F(k) ∈ [f_lo, f_hi]
            if u_hi <= f_lo:
                return k
            if u_lo >= f_hi:
                k += 1
                w = w * self.weight_ratio(k)
                cum += w
                continue
            if f_hi - f_lo > u_hi - u_lo:
                prec *= 2
                c_lo, c_hi = self.constant(prec)
            else:
                num = (num << 64) | next_word(rng)
                nbits += 64


def _mean_of_gamma(kind: str, gamma: float, eta: float | None) -> float:
    """E[K] of TNB(η, γ) / logarithmic(γ) in float."""
    if gamma >= 1.0:
        return 1.0
    lg = math.log(gamma)                              # < 0
    if kind == "logarithmic":
        return (1.0 - gamma) / (gamma * -lg)
    assert eta is not None
    if eta == 1.0:
        return 1.0 / gamma
    # η (1/γ − 1) / (1 − γ^η)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * lg))


def _gamma_for_mean(kind: str, mean: float, eta: float | None) -> float:
    """The largest float γ in (0, 1) whose law has E[K] >= ``mean`` (bisection; E[K] decreases in γ)."""
    if kind != "logarithmic" and eta == 1.0:
        return 1.0 / mean
    lo, hi = 0.0, 1.0                                 # mean(lo) = inf >= target > mean(hi) = 1
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if _mean_of_gamma(kind, mid, eta) >= mean:
            lo = mid
        else:
            hi = mid
    if lo == 0.0:
        raise ValueError(f"mean_runs={mean!r} is too large for this law in double precision")
    return lo


def make_law(method: str, mean_runs: float, eta: float) -> _Law:
    """The law of K of ``method`` (validated) with mean ``mean_runs``."""
    if method == "poisson":
        return _Law("poisson", mu=Fraction(mean_runs))
    if method in ("geometric", "liu_talwar", "liu_talwar_threshold"):
        return _Law("tnb", gamma=Fraction(1.0 / mean_runs), eta=Fraction(1))
    if method == "logarithmic":
        return _Law("logarithmic", gamma=Fraction(_gamma_for_mean("logarithmic", mean_runs, None)))
    g = _gamma_for_mean("tnb", mean_runs, eta)
    return _Law("tnb", gamma=Fraction(g), eta=Fraction(eta))
