"""The public boundary of every releasing function: check the budget once, before any random bit is drawn.

A public selector normalises its arguments (``rng`` to a Generator, ε to a float, ``k``, the mechanism to
its registry spec), then calls :func:`charge` with the guarantee of what it is about to release, and only
then draws. A release that would exceed the accountant's budget raises
:class:`~dpselect.BudgetExceededError` from :func:`charge`: nothing is released, nothing is recorded and the
generator has not been touched. Bad arguments are refused before the charge, so a refused call costs
nothing either.
"""
from __future__ import annotations

from typing import Any

from .accounting.accountant import Accountant
from .accounting.composition import (AdaptiveBoundedRangeComposition, BoundedRangeComposition,
                                     PureDPComposition)
from .accounting.guarantees import BoundedRange, Guarantee, PureDP

__all__: list[str] = []


def check_accountant(accountant: Any, name: str = "accountant") -> Accountant | None:
    """``accountant`` itself when it is a :class:`~dpselect.Accountant` or None; else a ``TypeError``."""
    if accountant is None or isinstance(accountant, Accountant):
        return accountant
    raise TypeError(f"{name} must be a dpselect.Accountant or None, got {type(accountant).__name__}")


def repeated(guarantee: Guarantee, times: int) -> Guarantee:
    """The guarantee of ``times`` independent releases of ``guarantee`` on the same data (``size=`` draws).

    One pick repeated is a batch fixed in advance (Dong-Durfee-Rogers composition for bounded range);
    a top-k (an adaptive composition of k picks) repeated is one adaptive composition of ``k * times`` picks.
    """
    if times == 1:
        return guarantee
    if isinstance(guarantee, BoundedRange):
        return BoundedRangeComposition(guarantee.epsilon_, times)
    if isinstance(guarantee, PureDP):
        return PureDPComposition(guarantee.epsilon_, times)
    if isinstance(guarantee, AdaptiveBoundedRangeComposition):
        return AdaptiveBoundedRangeComposition(guarantee.epsilon0, guarantee.k * times)
    if isinstance(guarantee, PureDPComposition):
        return PureDPComposition(guarantee.epsilon0, guarantee.k * times)
    raise TypeError(f"cannot repeat {guarantee!r}: charge each release separately")


def charge(accountant: Accountant | None, guarantee: Guarantee, *, label: str, times: int = 1) -> None:
    """Charge ``guarantee`` (``times`` independent releases of it, e.g. ``size=`` draws) to ``accountant``.

    No-op when ``accountant`` is None. Raises :class:`~dpselect.BudgetExceededError` (and records nothing)
    when the budget cannot pay for all ``times`` releases; call it after validation and before any
    randomness.
    """
    if accountant is None:
        return
    accountant.charge(repeated(guarantee, times), label=label)
