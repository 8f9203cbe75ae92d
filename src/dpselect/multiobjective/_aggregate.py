"""The aggregate utility Σ_i w_i u_i and its sensitivity δ^agg = Σ_i |w_i| δ_i (paper Thm 5.3, 5.4)."""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..registry import get_mechanism
from ..sensitivity import SensitivityFunction, check_weight_values, weighted_sum
from ._pareto_score import Sensitivities, _as_functions


def aggregate_sensitivity(objective_weights: ArrayLike,
                          sensitivity_functions: Sensitivities) -> SensitivityFunction:
    """δ^agg(x, t, r) = Σ_i |w_i| δ_i(x, t, r), admissible for u_agg = Σ_i w_i u_i (paper Thm 5.4).

    Its global sensitivity is Σ_i |w_i| Δu_i (paper Thm 5.3). Same neighbour model as the δ_i.

    Parameters
    ----------
    objective_weights : array of shape (m,)
        The w_i: finite, not all zero (negative weights allowed).
    sensitivity_functions : list of m SensitivityFunction
        One admissible δ_i per objective, all for the same n candidates (a global sensitivity Δu_i as
        ``dpselect.constant(n, Δu_i)``).

    Returns
    -------
    SensitivityFunction
        δ^agg for the same n candidates: ``f(t)`` is a float64 array of shape (n,);
        ``global_sensitivity`` = Σ_i |w_i| Δu_i.

    Examples
    --------
    >>> import dpselect
    >>> f = aggregate_sensitivity([0.5, -2.0], [dpselect.constant(3, 1.0), dpselect.constant(3, 0.25)])
    >>> f.global_sensitivity, f(0).tolist()
    (1.0, [1.0, 1.0, 1.0])
    """
    if isinstance(sensitivity_functions, SensitivityFunction):
        raise TypeError("sensitivity_functions must be a list of SensitivityFunction, one per objective")
    sfs: list[SensitivityFunction] = []
    for i, s in enumerate(sensitivity_functions):
        if not isinstance(s, SensitivityFunction):
            raise TypeError(f"sensitivity_functions[{i}] must be a SensitivityFunction, got {type(s).__name__} "
                            "(use dpselect.constant(n, Δ) for a global sensitivity)")
        sfs.append(s)
    return weighted_sum(_check_weights(objective_weights, len(sfs)), sfs)


def _check_weights(weights, m: int, name: str = "objective_weights") -> np.ndarray:
    try:
        w = check_weight_values(weights, m)
    except TypeError as exc:
        raise TypeError(str(exc).replace("weights", name, 1)) from None
    if w.ndim != 1 or w.shape[0] != m:
        raise ValueError(f"{name} must have one entry per objective ({m}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite, got {w.tolist()}")
    if not np.any(w != 0):
        raise ValueError(f"{name} must not all be zero, got {w.tolist()}")
    return w


def _scaled_weights(w: np.ndarray) -> np.ndarray:
    """w / s for a power of two s >= 2 Σ|w_i| (from the public weights only; s itself is never formed, so
    weights near the float range do not overflow it): |Σ_i (w_i/s) M_ri| <= DBL_MAX / 2 for every finite M,
    and Σ_i |w_i/s| Δ_i <= max Δ_i / 2, so neither the aggregate nor its sensitivity can overflow."""
    e = math.frexp(float(np.abs(w).max()))[1]            # max |w_i| <= 2^e
    k = max(int(w.shape[0]) - 1, 0).bit_length()          # m <= 2^k
    return np.ldexp(w, -(e + k + 1))


def _aggregate(M, weights, sens, mechanism, n, m):
    w = _check_weights(weights, m)
    with np.errstate(over="ignore", invalid="ignore"):
        u = M @ w
        # the public part: Σ|w_i| Δ_i beyond the float range is scaled on every dataset alike
        big = not np.isfinite(sum(abs(float(wi)) * (s.global_sensitivity if isinstance(s, SensitivityFunction)
                                                    else float(s)) for wi, s in zip(w, sens)))
    if big or not np.isfinite(u).all():
        # Σ w_i M_ri overflowed (objectives near the float range): refusing would be an error that depends
        # on the data (a release). Scaling the weights by a public power of two 1/s scales the aggregate
        # utility and its sensitivity (global or δ^agg) alike, which leaves every mechanism's law unchanged
        # (they read u/Δ, D = (u − b)/δ, u ∓ G); the scaled products only round differently where they
        # are subnormal. Datasets without an overflow keep the unscaled computation bit for bit.
        w = _scaled_weights(w)
        u = M @ w
    sensitivity: SensitivityFunction | float
    if get_mechanism(mechanism).kind == "local":
        sensitivity = weighted_sum(w, _as_functions(sens, n))
    else:
        sensitivity = float(sum(abs(wi) * (s.global_sensitivity if isinstance(s, SensitivityFunction) else s)
                                for wi, s in zip(w, sens)))
    return u, sensitivity
