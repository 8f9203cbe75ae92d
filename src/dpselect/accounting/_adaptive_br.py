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


def _log_delta_bound(rho: float, eps: np.ndarray) -> np.ndarray:
    """log of a δ that ρ-zCDP certifies at each ε ≥ 0 (the CKS bound at one order α per point, chosen
    near its optimum; any α > 1 is valid, so this is an upper bound of the tight conversion)."""
    eps = np.asarray(eps, dtype=float)
    if rho <= 0.0:
        return np.where(eps > 0, -np.inf, 0.0)
    alpha = np.maximum((eps + rho) / (2.0 * rho), 1.0 + 1e-6)
    am1 = alpha - 1.0
    return am1 * (alpha * rho - eps) + am1 * np.log1p(-1.0 / alpha) - np.log(alpha)


def adaptive_br_curve_window(eps: float, k: int, m: int, eg_max: float, delta_err: float, *,
                             query: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The upper-bound recursion of :func:`adaptive_br_curve` on a window of the accumulated loss only.

    Outside the window W_{j} is replaced by an upper bound of the *true* j-step value from the zCDP route
    (j adaptive ε-BR steps are jε²/8-zCDP, for the pair and for its reverse): below the window
    W_j(ℓ) = δ_j(−ℓ) ≤ δ_zCDP(−ℓ); above it W_j(ℓ) = 1 − e^{−ℓ} + e^{−ℓ} δ_j^{rev}(ℓ) ≤ the same with
    δ_zCDP(ℓ). Any pointwise upper bound of the true W_{j−1} keeps the recursion an upper bound (the
    domination step applies to the true W_{j−1}, then monotonicity), so the result stays certified; the
    window [−eg_max − b, b], with b the zCDP ε of the whole sequence at ``delta_err``, makes the loss of
    tightness at most ``delta_err``. Returns the curve at ε_g = 0, h, ..., ≥ eg_max (and the query trace)."""
    h = eps / m
    rho1 = eps * eps / 8.0
    from ._numeric import zcdp_epsilon
    b = zcdp_epsilon(k * rho1, delta_err)
    G = int(math.ceil(eg_max / h)) + 1
    B = int(math.ceil(b / h)) + m + 2
    if query is not None and query > G:
        raise ValueError("query outside the window")
    idx = np.arange(-G - B, B + 1)
    ell = idx * h
    W = np.maximum(-np.expm1(-ell), 0.0)
    p1, p0, off_hi, off_lo = _pairs(eps, m, True)
    pad = m + 2
    lo_ell = (np.arange(-G - B - pad, -G - B)) * h          # below the window (negative)
    hi_ell = (np.arange(B + 1, B + 1 + pad)) * h            # above the window (positive)
    n = W.size
    trace = np.empty(k if query is not None else 0)
    q_at = G + B - (query or 0)
    best = np.empty_like(W)
    cand = np.empty_like(W)
    for j in range(k):
        steps = j                                            # W currently holds W_j (j steps)
        if steps == 0:
            low = np.zeros(pad)
            high = -np.expm1(-hi_ell)
        else:
            r = steps * rho1
            low = np.where(-lo_ell >= steps * eps, 0.0, np.minimum(1.0, np.exp(_log_delta_bound(r, -lo_ell))))
            rev = np.where(hi_ell >= steps * eps, 0.0, np.minimum(1.0, np.exp(_log_delta_bound(r, hi_ell))))
            high = np.minimum(1.0, -np.expm1(-hi_ell) + np.exp(-hi_ell) * rev)
        Wp = np.concatenate([low, W, high])
        best.fill(0.0)
        for a, c, x, y in zip(p1, p0, off_hi, off_lo):
            np.multiply(Wp[pad + x: pad + x + n], a, out=cand)
            cand += c * Wp[pad + y: pad + y + n]
            np.maximum(best, cand, out=best)
        W, best = best, W
        if query is not None:
            trace[j] = W[q_at]
    curve = W[: G + B + 1][::-1][: G + 1]                    # ε_g = 0, h, ..., G·h
    curve = np.minimum(1.0, curve * (1.0 + 1e-9) + 1e-300)
    trace = np.minimum(1.0, trace * (1.0 + 1e-9) + 1e-300)
    return curve, trace


#: the windowed recursion (k > 400) covers ε_g up to the zCDP ε of the sequence at this δ, and gives up
#: at most WINDOW_SLACK of δ to the window's ends (far below any δ read off it)
WINDOW_DELTA = 1e-12
WINDOW_SLACK = 1e-14
WINDOW_MAX_K = 5000


def default_window_resolution(k: int) -> int:
    """m for the windowed recursion: ~100 at k = 1000 (within ~1.5% of the batch optimum there), the cost
    (∝ k^1.5 m²) held near that of k = 1000, m = 100 (several seconds, once per (ε0, k))."""
    return int(max(8, min(400, 100.0 * (1000.0 / max(k, 1)) ** 0.75)))
