"""The privacy-profile bound of private selection from private candidates (after Koskela, Redberg & Wang 2024).

Koskela, Redberg & Wang ("Privacy Profiles for Private Selection", ICML 2024) bound the privacy profile
δ(ε) of the best of K runs directly from the run's privacy profile δ_Q(ε) and the probability generating
function φ(z) = E[z^K] of K, instead of going through Rényi DP. This module implements a bound of that
kind, derived (and proved) here as follows; it is checked in ``tests/test_tune.py`` against the exact
profile of the whole procedure on small discrete runs.

**Output law.** Order a run's outputs by score, ties broken by an independent uniform U (the driver's
"earliest run among equal scores" releases a candidate with the same law: given the maximal score, the
earliest of the tied runs is distributed as any one of them). On the refined outputs (y, U) the order is
atomless, the refined pair of run laws (P, R) has the run's privacy profile, and dropping U is
post-processing. With F_P(z) = P(≤ z) continuous, the maximum of k independent runs has density
k F_P(z)^(k−1) with respect to P, so the procedure's output law is A_P = φ'(F_P) · P (Poisson: plus the
atom φ(0) = e^(−μ) on "nothing", the same on both datasets).

**Bound.** If φ'(F_P(z)) ≤ e^c φ'(F_R(z)) for every z, then pointwise
[φ'(F_P) p − e^ε φ'(F_R) r]_+ ≤ φ'(F_P) [p − e^(ε−c) r]_+ ≤ φ'(1) [p − e^(ε−c) r]_+, hence

    δ_A(ε) ≤ E[K] · δ_Q(ε − c)     (ε ≥ c),   i.e.   ε_A(δ) ≤ c + ε_Q(δ / E[K]).

The ratio of derivatives is bounded from the run's profile. With S_P(z) = P(> z) and
g(s) = inf_ε̃ (e^ε̃ s + δ_Q(ε̃)) (no event of P-probability s has R-probability above g(s), by the
definition of the profile applied to R against P), S_R(z) ≤ min(1, g(S_P(z))), and

* truncated negative binomial / logarithmic / geometric (φ'(x) ∝ (1 − (1 − γ)x)^(−(1+η)), η = 0 for the
  logarithmic law, 1 for the geometric one): φ'(F_P)/φ'(F_R) = ((γ + (1−γ)S_R)/(γ + (1−γ)S_P))^(1+η), so
  c = (1 + η) log sup_{s∈[0,1]} (γ + (1−γ) min(1, g(s)))/(γ + (1−γ)s);
* Poisson(μ) (φ'(x) = μ e^(μ(x−1))): φ'(F_P)/φ'(F_R) = e^(μ(S_R − S_P)), so
  c = μ sup_s (g(s) − s) = μ δ_Q(0) (the total variation distance: sup over events of R(E) − P(E)).

For an ε-DP run (δ_Q(ε) = 0) the first gives c = (1 + η)ε and ε_A(0) = (2 + η)ε, Papernot & Steinke's
pure bound.

**Numerics (never below the true value).** g is evaluated at a finite set of ε̃ (any ε̃ gives an upper
bound on g; δ_Q is the run's ``delta``, itself rounded up). The supremum over s ∈ [0, 1] is bounded on a
grid 0 = s_0 < ... < s_n = 1: on [s_i, s_(i+1)] the ratio is at most
(γ + (1−γ) min(1, g(s_(i+1))))/(γ + (1−γ) s_i) (g non-decreasing), numerators rounded up and
denominators down by a relative 1e-12 and γ taken one part in 10^12 smaller (the ratio decreases in γ). c is
rounded up, δ/E[K] down, E[K] up (``_Law.mean``), and the result through :func:`~dpselect.accounting._numeric.up_eps` / ``up``.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from ..accounting._numeric import down, up, up_eps

__all__: list[str] = []

_MARGIN = 1e-12
#: ε̃ at which g is evaluated (any set is valid; a finer one only lowers c)
_EPS_GRID = np.concatenate([[0.0], np.geomspace(1e-4, 40.0, 400)])
#: s grid on [0, 1]: 0, then log-spaced from 1e-13 (ratio 1.0015 between points), then 1
_S_GRID = np.unique(np.concatenate([[0.0], np.geomspace(1e-13, 1.0, 20000), [1.0]]))


def _g_upper(delta_fn: Callable[[float], float], extra_eps: Sequence[float]) -> np.ndarray:
    """Upper bounds on min(1, g(s)) at every point of the s grid."""
    eps = np.unique(np.concatenate([_EPS_GRID, np.asarray(list(extra_eps), dtype=float)]))
    eps = eps[np.isfinite(eps) & (eps >= 0.0)]
    dq = np.array([delta_fn(float(e)) for e in eps], dtype=float)
    keep = dq < 1.0
    eps, dq = eps[keep], dq[keep]
    if eps.size == 0:
        return np.ones_like(_S_GRID)
    # e^ε̃ s + δ_Q(ε̃), rounded up
    vals = np.exp(eps)[None, :] * (1.0 + _MARGIN) * _S_GRID[:, None] + dq[None, :]
    g = np.min(vals * (1.0 + _MARGIN), axis=1)
    return np.minimum(1.0, np.maximum(g, _S_GRID))


def ratio_exponent(delta_fn: Callable[[float], float], kind: str, gamma: float | None, eta: float,
                   mu: float | None, extra_eps: Sequence[float] = ()) -> float:
    """c with φ'(F_P(z)) ≤ e^c φ'(F_R(z)) for every z (rounded up); ``kind`` is ``"poisson"`` or a TNB-family law."""
    if kind == "poisson":
        # sup_s (g(s) − s) = sup_E (R(E) − P(E)) = δ_Q(0), the total variation distance
        assert mu is not None
        return up_eps(up(mu * delta_fn(0.0) * (1.0 + _MARGIN)))
    g = _g_upper(delta_fn, extra_eps)
    s_lo, g_hi = _S_GRID[:-1], g[1:]
    assert gamma is not None
    gam = gamma * (1.0 - _MARGIN)
    q = 1.0 - gam
    num = (gam + q * g_hi) * (1.0 + _MARGIN)
    den = (gam + q * s_lo) * (1.0 - _MARGIN)
    rho = float(np.max(num / den))
    return up_eps((1.0 + eta) * up(math.log(max(1.0, rho))))


def profile_epsilon(base_epsilon: Callable[[float], float], c: float, mean: float, delta: float) -> float:
    """c + ε_Q(δ / E[K]) (inf for δ = 0 unless the run is pure)."""
    share = down(delta / mean)
    if share <= 0.0:
        e = base_epsilon(0.0)
    else:
        e = base_epsilon(share)
    return up_eps(c + e) if math.isfinite(e) else math.inf


def profile_delta(base_delta: Callable[[float], float], c: float, mean: float, epsilon: float) -> float:
    """E[K] δ_Q(ε − c) (1 where ε < c)."""
    if not epsilon >= c:
        return 1.0
    arg = epsilon - c
    if arg > 0.0:
        arg = math.nextafter(arg, 0.0)     # ε − c rounded down: δ_Q is non-increasing
    return min(1.0, up(mean * base_delta(arg)))
