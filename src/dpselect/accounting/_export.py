"""The history as dp-accounting events (:meth:`Accountant.to_dp_accounting`); dp-accounting (the ``test``
extra) is imported here, on first use, never by the core."""
from __future__ import annotations

import math
from typing import Any, Sequence

from .composition import AdaptiveBoundedRangeComposition, BoundedRangeComposition, PureDPComposition
from .guarantees import ZCDP, ApproxDP, BoundedRange, GaussianMechanism, Guarantee, NonPrivate, PureDP


def _pure(dpe: Any, eps: float) -> Any:
    """The worst ε-DP pair: randomized response on two buckets, P(true answer) = e^ε/(1 + e^ε).

    dp-accounting reads noise_parameter p as "answer uniformly with probability p", so ε = log(2/p − 1);
    p is rounded down (a larger ε). An ε-bounded-range release is exported as this pure-DP event too:
    dp-accounting has no bounded-range event, and ε-BR implies ε-DP (its ε at δ = 0; looser at δ > 0)."""
    if eps == 0.0:
        return dpe.NoOpDpEvent()
    p = 2.0 / (1.0 + math.exp(eps)) if eps < 700.0 else 0.0
    return dpe.RandomizedResponseDpEvent(noise_parameter=p * (1.0 - 4e-16), num_buckets=2)


def dp_event(guarantee: Guarantee) -> Any:
    """The dp-accounting ``DpEvent`` of one charge (``UnsupportedDpEvent`` where it has none)."""
    from dp_accounting import dp_event as dpe
    g = guarantee
    if isinstance(g, NonPrivate):
        return dpe.NonPrivateDpEvent()
    if isinstance(g, (PureDP, BoundedRange)) or (isinstance(g, ApproxDP) and g.delta_ == 0.0):
        return _pure(dpe, g.epsilon_)
    if isinstance(g, (PureDPComposition, BoundedRangeComposition, AdaptiveBoundedRangeComposition)):
        # k copies, not SelfComposedDpEvent: dp-accounting 0.6's PLDAccountant drops the count of a
        # self-composed randomized response (it reports one release's ε for ten)
        return dpe.ComposedDpEvent([_pure(dpe, g.epsilon0)] * g.k)
    if isinstance(g, GaussianMechanism):
        # under REPLACE_ONE dp-accounting reads the Gaussian as sensitivity 2: σ' = 2σ/Δ is the same pair
        return dpe.GaussianDpEvent(noise_multiplier=2.0 * g.sigma / g.sensitivity)
    if type(g) is ZCDP:
        return dpe.ZCDpEvent(rho=g.rho)
    return dpe.UnsupportedDpEvent()    # (ε, δ) with δ > 0, an RDP curve: dp-accounting has no such event


def composed(guarantees: Sequence[Guarantee]) -> Any:
    """One ``ComposedDpEvent`` of the charges, oldest first."""
    from dp_accounting import dp_event as dpe
    return dpe.ComposedDpEvent([dp_event(g) for g in guarantees])
