"""Neighbour relations: the unit of every guarantee, and the one conversion between units a theorem allows.

A guarantee (ε-DP, ε-BR, ρ-zCDP, ...) is a statement about pairs of neighbouring datasets, so it means
nothing without its relation. Relations are named strings:

* ``"add_remove"`` — add or remove one record (n private);
* ``"replace_one"`` — replace one record (n public);
* ``"edge_add_remove"`` — add or remove one edge of a graph;
* ``"user_add_remove"`` — add or remove one user with all of that user's rows;
* any other non-empty name: a relation of the user's own, which matches only itself.

The only conversion is add/remove ⇒ replace-one (a replacement is a removal followed by an addition, so
the guarantee is that of a group of two): ε-DP ⇒ 2ε-DP, ε-BR ⇒ 2ε-BR (the two log-ratio ranges add),
ρ-zCDP ⇒ 4ρ-zCDP (Bun & Steinke 2016, Prop. 1.9), (ε, δ) ⇒ (2ε, (1 + e^ε)δ), k-fold compositions per
release, the Gaussian mechanism of ℓ2-sensitivity Δ ⇒ that of 2Δ. Replace-one does not convert to
add/remove (it treats n as public), edge and record relations never mix, and an RDP curve is not converted
(charge it under the accountant's own relation).

>>> from dpselect.accounting import PureDP
>>> convert(PureDP(0.5), "add_remove", "replace_one")
PureDP(epsilon=1.0)
>>> convert(PureDP(0.5), "edge_add_remove", "add_remove")
Traceback (most recent call last):
...
ValueError: a guarantee under neighbours='edge_add_remove' cannot be charged ... edge and record relations never mix ...
"""
from __future__ import annotations

import math

from .._validation import short_repr
from ._numeric import up
from .composition import AdaptiveBoundedRangeComposition, BoundedRangeComposition, PureDPComposition
from .guarantees import ZCDP, ApproxDP, BoundedRange, GaussianMechanism, Guarantee, NonPrivate, PureDP

__all__ = ["ADD_REMOVE", "REPLACE_ONE", "EDGE_ADD_REMOVE", "USER_ADD_REMOVE", "check_neighbours", "convert"]

ADD_REMOVE = "add_remove"
REPLACE_ONE = "replace_one"
EDGE_ADD_REMOVE = "edge_add_remove"
USER_ADD_REMOVE = "user_add_remove"
_RECORD = (ADD_REMOVE, REPLACE_ONE)


def check_neighbours(neighbours: object, name: str = "neighbours") -> str:
    """``neighbours`` when it is a non-empty string (a relation's name), else ``TypeError`` / ``ValueError``.

    Parameters
    ----------
    neighbours : str
        What the caller passed.
    name : str
        The parameter's name, for the message.

    Returns
    -------
    str
        ``neighbours`` unchanged.

    Examples
    --------
    >>> check_neighbours("replace_one")
    'replace_one'
    """
    if not isinstance(neighbours, str):
        raise TypeError(f"{name} must be a neighbour relation's name (a string such as 'add_remove', "
                        f"'replace_one' or 'edge_add_remove'), got {short_repr(neighbours)}")
    if not neighbours.strip():
        raise ValueError(f"{name} must be a non-empty relation name, got {neighbours!r}")
    return neighbours


def _doubled(g: Guarantee) -> Guarantee:
    """``g`` (add/remove) as a replace-one guarantee: the guarantee of a group of two (doubling is exact in float)."""
    if type(g) is PureDP:
        return PureDP(2.0 * g.epsilon_)
    if type(g) is BoundedRange:
        return BoundedRange(2.0 * g.epsilon_)
    if type(g) is ApproxDP:
        return ApproxDP(2.0 * g.epsilon_, min(1.0, up((1.0 + math.exp(g.epsilon_)) * g.delta_)))
    if type(g) is ZCDP:
        return ZCDP(4.0 * g.rho)
    if type(g) is GaussianMechanism:
        return GaussianMechanism(g.sigma, 2.0 * g.sensitivity)
    if type(g) is PureDPComposition:
        return PureDPComposition(2.0 * g.epsilon0, g.k)
    if type(g) is BoundedRangeComposition:
        return BoundedRangeComposition(2.0 * g.epsilon0, g.k)
    if type(g) is AdaptiveBoundedRangeComposition:
        return AdaptiveBoundedRangeComposition(2.0 * g.epsilon0, g.k, resolution=g.resolution)
    raise ValueError(f"no conversion from add/remove to replace-one is known for {short_repr(g)}: charge it to an "
                     f"Accountant(neighbours='add_remove')")


def convert(guarantee: Guarantee, stated: str, to: str) -> Guarantee:
    """``guarantee``, stated under relation ``stated``, as a guarantee under relation ``to``.

    Parameters
    ----------
    guarantee : Guarantee
        What the release certifies under ``stated``.
    stated, to : str
        Relation names.

    Returns
    -------
    Guarantee
        ``guarantee`` itself when the relations are equal; its group-of-two guarantee from add/remove to
        replace-one.

    Raises
    ------
    ValueError
        No theorem converts ``stated`` to ``to`` (the message says why).

    Examples
    --------
    >>> from dpselect.accounting import ZCDP
    >>> convert(ZCDP(0.125), "add_remove", "replace_one")
    ZCDP(rho=0.5)
    """
    if stated == to or isinstance(guarantee, NonPrivate):     # ε = ∞ under every relation
        return guarantee
    if stated == ADD_REMOVE and to == REPLACE_ONE:
        return _doubled(guarantee)
    head = (f"a guarantee under neighbours={stated!r} cannot be charged to an accountant of "
            f"neighbours={to!r}: ")
    if stated == REPLACE_ONE and to == ADD_REMOVE:
        why = "replace-one treats the number of records as public, add/remove does not"
    elif EDGE_ADD_REMOVE in (stated, to) and {stated, to} - {EDGE_ADD_REMOVE} <= set(_RECORD):
        why = "edge and record relations never mix"
    else:
        why = "no theorem relates the two relations"
    raise ValueError(f"{head}{why} (one Accountant per relation: create it with neighbours={stated!r})")
