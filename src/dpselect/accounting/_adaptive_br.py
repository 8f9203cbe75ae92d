"""The optimal *adaptive* composition of k ε-bounded-range releases, certified from above.

When each exponential mechanism may be chosen from earlier outputs, the adversary picks the worst
two-output generalised randomized response (log-ratios {(t − 1)ε, tε}) at every step *given the privacy
loss so far*, so the optimum is a dynamic programme over the accumulated loss ℓ (Dong, Durfee & Rogers
2020 show it can exceed the non-adaptive optimum). With W_j(ℓ) = e^{−ℓ} · sup E_Q[(e^{ℓ+L} − 1)₊] over
j adaptive steps (so that δ(ε_g) = W_k(−ε_g)):

    W_0(ℓ) = (1 − e^{−ℓ})₊,   W_j(ℓ) = sup_t [p1(t) W_{j−1}(ℓ + tε) + p0(t) W_{j−1}(ℓ − (1 − t)ε)],

p1, p0 the pair's probabilities under the first dataset. We compute an upper bound on the grid ℓ ∈ hℤ,
h = ε/m: every pair with t ∈ [s/m, (s+1)/m] has its log-ratios in [(s − m)h, (s + 1)h], so (the value
being convex in e^L) it is dominated by the randomized response with exactly those grid end points;
the recursion over those m pairs stays on the grid and bounds W_j from above at every grid point. The
same recursion with the exact grid pairs t = s/m (width ε) is a strategy, hence a lower bound; the two
close at rate O(1/m). Beyond the band that j steps can cross, W_j is known in closed form (0 below,
1 − e^{−ℓ} above), which closes the grid's ends exactly.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["adaptive_br_curve"]


def _pairs(eps: float, m: int, upper: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    h = eps / m
    s = np.arange(m) if upper else np.arange(m + 1)
    off_hi = s + 1 if upper else s
    off_lo = s - m
    lo, hi = off_lo * h, off_hi * h
    with np.errstate(invalid="ignore", divide="ignore"):
        q1 = -np.expm1(lo) / (np.exp(hi) - np.exp(lo))
    q1 = np.where(np.isfinite(q1), np.clip(q1, 0.0, 1.0), 0.0)
    return np.exp(hi) * q1, np.exp(lo) * (1.0 - q1), off_hi, off_lo


def adaptive_br_curve(eps: float, k: int, m: int, *, upper: bool = True,
                      query: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run the recursion for ``k`` steps on the grid h = ε/m.

    Returns ``(W_k at ε_g = 0, h, 2h, ...)`` (δ of the k-fold adaptive composition at those ε_g, an upper
    bound when ``upper``) and, when ``query`` (a grid index of ε_g) is given, ``δ_j(query·h)`` for
    j = 1..k (else an empty array)."""
    h = eps / m
    n_hi = k * (m + 1) + 1                       # ℓ above n_hi·h: every path stays ≥ 0 after k steps
    n_lo = k * (m + 1) + 1 + (query or 0)
    idx = np.arange(-n_lo, n_hi + 1)
    W = np.maximum(-np.expm1(-idx * h), 0.0)
    p1, p0, off_hi, off_lo = _pairs(eps, m, upper)
    pad = m + 2
    zero = np.zeros(pad)
    top = -np.expm1(-(np.arange(n_hi + 1, n_hi + 1 + pad) * h))
    n = W.size
    trace = np.empty(k if query is not None else 0)
    q_at = n_lo - (query or 0)
    best = np.empty_like(W)
    cand = np.empty_like(W)
    for j in range(k):
        Wp = np.concatenate([zero, W, top])
        best.fill(0.0)
        for a, b, x, y in zip(p1, p0, off_hi, off_lo):
            np.multiply(Wp[pad + x: pad + x + n], a, out=cand)
            cand += b * Wp[pad + y: pad + y + n]
            np.maximum(best, cand, out=best)
        W, best = best, W
        if query is not None:
            trace[j] = W[q_at]
    zero_at = n_lo
    curve = W[: zero_at + 1][::-1]                # ε_g = 0, h, 2h, ... (δ non-increasing in ε_g)
    if upper:
        curve = np.minimum(1.0, curve * (1.0 + 1e-9) + 1e-300)
        trace = np.minimum(1.0, trace * (1.0 + 1e-9) + 1e-300)
    return curve, trace


def default_resolution(k: int, budget: float = 2e8) -> int:
    """The grid resolution m that keeps the recursion near ``budget`` element operations (~k²m²)."""
    return int(max(8, min(400, math.sqrt(budget) / max(k, 1))))
