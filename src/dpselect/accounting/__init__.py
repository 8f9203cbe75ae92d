"""Privacy accounting: guarantees as values, their composition, and a budget that refuses.

* ``guarantees``: :class:`PureDP`, :class:`BoundedRange`, :class:`ApproxDP`, :class:`ZCDP`,
  :class:`GaussianMechanism`, :class:`RDP`, :class:`NonPrivate`, each with the tight ``.epsilon(delta)`` /
  ``.delta(epsilon)``;
* ``composition``: basic, zCDP and RDP composition, the optimal compositions of k pure ε-DP releases and
  of k ε-bounded-range releases, and :func:`per_pick_epsilon`;
* ``accountant``: :class:`Accountant`, a privacy filter with an odometer.

See ``docs/accounting.md``. Every selector and application takes ``accountant=``.
"""
from __future__ import annotations

from .accountant import MODES, Accountant, ChargeRecord, Event
from .composition import (AdaptiveBoundedRangeComposition, BoundedRangeComposition, PureDPComposition, compose_basic, compose_rdp, compose_zcdp,
                          optimal_bounded_range, optimal_pure, per_pick_epsilon)
from .guarantees import (DEFAULT_ORDERS, RDP, ZCDP, ApproxDP, BoundedRange, GaussianMechanism, Guarantee, NonPrivate,
                         PureDP)

__all__ = ["Guarantee", "PureDP", "BoundedRange", "ApproxDP", "ZCDP", "GaussianMechanism", "RDP", "NonPrivate",
           "DEFAULT_ORDERS",
           "compose_basic", "compose_zcdp", "compose_rdp", "optimal_pure", "optimal_bounded_range",
           "PureDPComposition", "BoundedRangeComposition", "AdaptiveBoundedRangeComposition", "per_pick_epsilon",
           "Accountant", "ChargeRecord", "Event", "MODES"]
