"""The dampening function D(x, r) and the shift G_r of shifted local dampening, for all candidates at once.

Both walk the distance t = 0, 1, 2, ... for every candidate together, asking the sensitivity function
only for the candidates that are still unresolved (``sf(t, candidates=active)``), so the cost is about
Σ_r (steps candidate r needs) rather than (largest number of steps) × n.

Saturation convention
---------------------
Once δ(x, s, r) has reached the global sensitivity Δ at some s, we treat δ(x, t, r) = Δ for every
t >= s. This is what lets us switch to the closed form (each further step adds exactly Δ). It never
weakens privacy: the saturated function δ'(x, t, r) = Δ if δ(x, s, r) = Δ for some s <= t, else
δ(x, t, r), is admissible whenever δ is. Condition 1 holds since δ' >= δ. For condition 2 let y be a
neighbour of x: if δ'(y, t, r) = Δ because δ(y, s, r) = Δ with s <= t, admissibility of δ gives
δ(x, s + 1, r) >= Δ with s + 1 <= t + 1, so δ'(x, t + 1, r) = Δ; otherwise
δ'(y, t, r) = δ(y, t, r) <= δ(x, t + 1, r) <= δ'(x, t + 1, r). For the usual sensitivity functions,
which are non-decreasing in t, δ' = δ.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_int, check_utilities
from .sensitivity import SensitivityFunction

__all__ = ["dampen", "shift_totals", "DEFAULT_MAX_STEPS"]

#: Largest distance t the loops walk for a sensitivity function *without* a saturation distance before
#: giving up with a ValueError (never an endless loop). Functions made bounded with
#: ``sf.bounded(database_size)`` are walked at most to their saturation distance instead: finite by
#: construction, and where every candidate is resolved.
DEFAULT_MAX_STEPS = 1_000_000


def _limit(sf: SensitivityFunction, max_steps: int) -> int:
    return max_steps if sf.saturation_distance is None else sf.saturation_distance + 1


def _check_sf(sensitivity_function, n: int, name: str = "sensitivity_function") -> SensitivityFunction:
    if not isinstance(sensitivity_function, SensitivityFunction):
        raise TypeError(
            f"{name} must be a dpselect.SensitivityFunction, got {type(sensitivity_function).__name__} "
            "(wrap a callable t -> array with SensitivityFunction(fn, global_sensitivity))"
        )
    if sensitivity_function.n_candidates is None:
        sensitivity_function(0)  # learns the number of candidates from one full evaluation
    if sensitivity_function.n_candidates != n:
        raise ValueError(
            f"{name} is for {sensitivity_function.n_candidates} candidates but utilities has {n}"
        )
    return sensitivity_function


def dampen(utilities, sensitivity_function: SensitivityFunction, *, max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """The dampening function D(x, r) of thesis Def. 3.3.1 for every candidate.

    With b(0) = 0, b(i) = Σ_{j<i} δ(x, j, r) and b(−i) = −b(i): for u = u(x, r) >= 0,
    D = i + (u − b(i)) / δ(x, i, r) where b(i) <= u < b(i+1) (intervals of zero width are skipped),
    and D(−u) = −D(u). D(x, r) has sensitivity 1 when δ is admissible (thesis Lemma 3.3.1), so the
    exponential mechanism on D with sensitivity 1 is local dampening.

    u = 0 gives D = 0 even where δ(x, 0, r) = 0: then every neighbour also has u = 0 (δ bounds the
    local sensitivity), so the sensitivity-1 property is kept.

    Parameters
    ----------
    utilities : array of shape (n,)
        u(x, r) for every candidate.
    sensitivity_function : SensitivityFunction
        An admissible δ for u (see :mod:`dpselect.sensitivity`). Values that reach Δ saturate
        (module docstring).
    max_steps : int
        Distances walked at most when the function has no saturation distance (see
        DEFAULT_MAX_STEPS); a candidate still unresolved then raises ``ValueError``.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(3, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> dampen([6.5, 6.5, 0.0], sf).round(2).tolist()   # thesis Example 3.4.1: 1 + 3.5/5
    [1.7, 1.7, 0.0]
    """
    u = check_utilities(utilities)
    n = u.shape[0]
    sf = _check_sf(sensitivity_function, n)
    max_steps = _limit(sf, check_int(max_steps, "max_steps", minimum=1))
    delta_max = sf.global_sensitivity
    a = np.abs(u)
    out = np.zeros(n)
    active = np.flatnonzero(a > 0)
    if sf.elementwise:
        _dampen_blocks(a, active, sf, out, max_steps)
        return np.copysign(out, u)
    b = np.zeros(active.size)
    t = 0
    while active.size:
        if t >= max_steps:
            raise ValueError(
                f"dampening did not resolve {active.size} candidate(s) within max_steps={max_steps} distances "
                f"(e.g. candidate {int(active[0])}: |u| = {a[active[0]]!r}, b(t) = {b[0]!r}); the sensitivity "
                f"function {sf.name!r} grows too slowly: bound it with .bounded(database_size) or raise max_steps"
            )
        d = sf(t, active)
        nb = b + d
        aa = a[active]
        inside = aa < nb
        saturated = d >= delta_max
        if inside.any() or saturated.any():
            done = inside | saturated
            idx = active[done]
            # Saturated and not yet inside: closed form, each further step adds exactly Δ.
            dd = np.where(inside[done], d[done], delta_max)
            out[idx] = t + (aa[done] - b[done]) / dd
            keep = ~done
            active = active[keep]
            b = nb[keep]
        else:
            b = nb
        t += 1
    return np.copysign(out, u)


_BLOCK_BUDGET = 1 << 21  # (candidates x distances) evaluated per call in the block walkers


def _block_size(n_active: int, previous: int) -> int:
    # Doubling keeps the work within ~2x of the steps the candidates really need, in O(log steps) calls.
    return int(max(1, min(2 * previous, _BLOCK_BUDGET // max(n_active, 1), 1 << 16)))


def _dampen_blocks(a, active, sf, out, max_steps) -> None:
    """dampen() for elementwise sensitivity functions: B distances per call for every unresolved
    candidate, B doubling while few candidates remain (same values as the step-by-step walk)."""
    delta_max = sf.global_sensitivity
    b = np.zeros(active.size)
    t, B = 0, 0
    while active.size:
        if t >= max_steps:
            raise ValueError(
                f"dampening did not resolve {active.size} candidate(s) within max_steps={max_steps} distances "
                f"(e.g. candidate {int(active[0])}: |u| = {a[active[0]]!r}); the sensitivity function "
                f"{sf.name!r} grows too slowly: bound it with .bounded(database_size) or raise max_steps"
            )
        B = min(_block_size(active.size, B), max_steps - t)
        if B == 1:
            d = sf(t, active)[:, None]
            sat = d >= delta_max
            ends = b[:, None] + d
        else:
            ts = t + np.arange(B)
            d = sf.at(np.broadcast_to(ts, (active.size, B)).ravel(),
                      np.repeat(active, B)).reshape(active.size, B)
            sat = np.logical_or.accumulate(d >= delta_max, axis=1)  # sticky saturation
            d = np.where(sat, delta_max, d)
            ends = b[:, None] + np.cumsum(d, axis=1)            # b(t + j + 1)
        aa = a[active]
        stop = (aa[:, None] < ends) | sat
        done = stop.any(axis=1)
        if done.any():
            rows = np.flatnonzero(done)
            j = stop[rows].argmax(axis=1)
            starts = ends[rows, j] - d[rows, j]              # b(t + j)
            out[active[rows]] = t + j + (aa[rows] - starts) / d[rows, j]
            keep = ~done
            active, b = active[keep], ends[keep, -1]
        else:
            b = ends[:, -1]
        t += B


def shift_totals(sensitivity_function: SensitivityFunction, n: int, *, max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """G_r = Σ_{t>=0} (Δ − δ(x, t, r)) for every candidate: the shift of shifted local dampening.

    Finite for bounded sensitivity functions (δ = Δ from some distance on). The walk stops for a
    candidate as soon as its δ reaches Δ (saturation, module docstring), and for all candidates at the
    function's ``saturation_distance`` (set by :meth:`SensitivityFunction.bounded`). A function without
    one that has not reached Δ within ``max_steps`` raises ``ValueError``.

    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(2, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> shift_totals(sf, 2).tolist()
    [2.0, 2.0]
    """
    n = check_int(n, "n", minimum=1)
    sf = _check_sf(sensitivity_function, n)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    delta_max = sf.global_sensitivity
    limit = _limit(sf, max_steps)
    g = np.zeros(n)
    active = np.arange(n)
    t, B = 0, 0
    while active.size and t < limit:
        if sf.elementwise:
            B = min(_block_size(active.size, B), limit - t)
            ts = t + np.arange(B)
            d = sf.at(np.broadcast_to(ts, (active.size, B)).ravel(),
                      np.repeat(active, B)).reshape(active.size, B)
            unsat = ~np.logical_or.accumulate(d >= delta_max, axis=1)
            g[active] += np.where(unsat, delta_max - d, 0.0).sum(axis=1)
            active = active[unsat[:, -1]]
            t += B
            continue
        d = sf(t, active)
        unsat = d < delta_max
        g[active[unsat]] += delta_max - d[unsat]
        active = active[unsat]
        t += 1
    if active.size and (sf.saturation_distance is None or t < sf.saturation_distance):
        raise ValueError(
            f"sensitivity function {sf.name!r} has not reached its global sensitivity {delta_max!r} within "
            f"max_steps={max_steps} distances for {active.size} candidate(s) (e.g. candidate {int(active[0])}); "
            "shifted local dampening needs a bounded function: use sf.bounded(database_size)"
        )
    return g
