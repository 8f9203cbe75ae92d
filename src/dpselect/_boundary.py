"""The public boundary of every releasing function: check the budget once, before any random bit is drawn.

A public selector normalises its arguments (``rng`` to a Generator, ε to a float, ``k``, the mechanism to
its registry spec), then calls :func:`charge` with the guarantee of what it is about to release, and only
then draws. A release that would exceed the accountant's budget raises
:class:`~dpselect.BudgetExceededError` from :func:`charge`: nothing is released, nothing is recorded and the
generator has not been touched. Bad arguments are refused before the charge, so a refused call costs
nothing either.

The selectors of :mod:`dpselect.mechanisms` and :meth:`dpselect.registry.Mechanism.select` use
:func:`charge_selection` (the registry's ``.privacy`` of the call, labelled with :func:`selection_label`);
:func:`topk_budget` is the one place where the per-pick ε of a top-k is decided, for the sampler and for the
guarantee alike.

Examples
--------
>>> import dpselect
>>> acc = dpselect.Accountant(epsilon=1.0)
>>> dpselect.exponential([1.0, 5.0, 2.0], epsilon=0.5, sensitivity=1.0, k=2, rng=0, accountant=acc).shape
(2,)
>>> [r.label for r in acc.history], round(acc.spent().epsilon_, 9)
(['exponential(k=2)'], 0.5)
"""
from __future__ import annotations

from typing import Any

from .accounting._numeric import check_delta
from .accounting.accountant import Accountant, Event
from .accounting.composition import (AdaptiveBoundedRangeComposition, BoundedRangeComposition,
                                     PureDPComposition, per_pick_epsilon)
from .accounting.guarantees import BoundedRange, Guarantee, NonPrivate, PureDP
from .exceptions import _read_from_data
from .vocabulary import _MECHANISM_TABLE   # the registry's store (filled by dpselect.registry)

__all__: list[str] = []


def check_accountant(accountant: Any, name: str = "accountant") -> Accountant | None:
    """``accountant`` itself when it is a :class:`~dpselect.Accountant` or None; else a ``TypeError``.

    Parameters
    ----------
    accountant : Accountant or None
        What the caller passed as ``accountant=``.
    name : str
        The parameter's name, for the message.

    Returns
    -------
    Accountant or None
        ``accountant`` unchanged.

    Examples
    --------
    >>> check_accountant(None) is None
    True
    """
    if accountant is None or isinstance(accountant, Accountant):
        return accountant
    raise TypeError(f"{name} must be a dpselect.Accountant or None, got {type(accountant).__name__}")


def repeated(guarantee: Guarantee, times: int) -> Guarantee:
    """The guarantee of ``times`` independent releases of ``guarantee`` on the same data (``size=`` draws).

    One pick repeated is a batch fixed in advance (Dong-Durfee-Rogers composition for bounded range);
    a top-k (an adaptive composition of k picks) repeated is one adaptive composition of ``k * times`` picks.

    Parameters
    ----------
    guarantee : Guarantee
        The guarantee of one release: ``PureDP``, ``BoundedRange`` or a k-fold composition of them.
    times : int
        How many independent releases (>= 1).

    Returns
    -------
    Guarantee
        ``guarantee`` itself for ``times == 1``, else the composition value of all the releases.

    Examples
    --------
    >>> repeated(BoundedRange(0.5), 3)
    BoundedRangeComposition(epsilon0=0.5, k=3)
    """
    if times == 1 or isinstance(guarantee, NonPrivate):      # n non-private releases: still ε = ∞
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


def charge(accountant: Accountant | None, guarantee: Guarantee, *, label: str, neighbours: str | None,
           times: int = 1, event: Event | None = None, nonprivate: str | None = None) -> None:
    """Charge ``guarantee`` (``times`` independent releases of it, e.g. ``size=`` draws) to ``accountant``.

    No-op when ``accountant`` is None. Call it after validation and before any randomness: a relation the
    accountant cannot take raises here, before anything is drawn. With
    ``nonprivate`` (why the release is not private: ``"exact=False"``), or after a public quantity was read
    from the data in the release's scope (a :class:`~dpselect.PrivacyLeakWarning`, see
    :func:`dpselect.exceptions._release_scope`), the charge is :class:`~dpselect.accounting.NonPrivate`
    instead, labelled ``"{label}: non-private (why)"``.

    Parameters
    ----------
    accountant : Accountant or None
        The budget to charge (None: nothing to do).
    guarantee : Guarantee
        The guarantee of one release.
    label : str
        Names the call in ``accountant.history``.
    neighbours : str or None
        The relation the entry point's privacy proof uses (``"add_remove"``, ``"replace_one"``,
        ``"edge_add_remove"``, ...), converted or refused by :meth:`Accountant.charge`. None: the
        accountant's own, for the mechanisms whose guarantee holds under whatever relation the caller's
        sensitivity Δu is stated for (the selectors, PrivPareto / PrivAgg, ``tune``).
    times : int
        Number of independent releases of ``guarantee`` (``size=`` draws), charged as one composition.
    event : Event, optional
        What ran (kept in the record).
    nonprivate : str, optional
        Why the release is not private (None: it is).

    Returns
    -------
    None

    Raises
    ------
    BudgetExceededError
        The budget cannot pay for all ``times`` releases; nothing is recorded.

    Examples
    --------
    >>> acc = Accountant(epsilon=1.0)
    >>> charge(acc, PureDP(0.25), label="demo", neighbours="add_remove", times=2)
    >>> round(acc.spent().epsilon_, 9), acc.history[0].label
    (0.5, 'demo')
    >>> rec = Accountant(epsilon=float("inf"))
    >>> charge(rec, PureDP(0.25), label="demo", neighbours=None, nonprivate="bounds read from the data")
    >>> rec.spent()
    NonPrivate(calls=('demo: non-private (bounds read from the data)',))
    """
    if accountant is None:
        return
    nonprivate = nonprivate or _read_from_data()
    if nonprivate is not None:
        accountant.charge(NonPrivate(), label=f"{label}: non-private ({nonprivate})", event=event,
                          neighbours=neighbours)
        return
    accountant.charge(repeated(guarantee, times), label=label, event=event, neighbours=neighbours)


def check_topk_delta(delta: Any, k: int | None) -> float:
    """``delta`` of a top-k as a float in [0, 1); δ > 0 with one pick (``k`` omitted or 1) is a ValueError.

    Parameters
    ----------
    delta : float
        What the caller passed as ``delta=``.
    k : int or None
        The checked number of picks (None: ``k`` omitted).

    Returns
    -------
    float
        δ.

    Examples
    --------
    >>> check_topk_delta(0, None), check_topk_delta(1e-6, 10)
    (0.0, 1e-06)
    """
    d = check_delta(delta, "delta")
    if d > 0.0 and (k is None or k == 1):
        raise ValueError(f"delta must be 0 for one pick (k omitted or k = 1), got delta={delta!r}: one pick is "
                         "already pure ε-DP, so a δ > 0 buys nothing there; delta > 0 raises the per-pick ε of "
                         "a top-k (k > 1) above ε/k")
    return d


def topk_budget(epsilon: float, k: int, delta: float, *, bounded_range: bool) -> tuple[float, int]:
    """``(eps, split)``: each of the ``k`` picks runs with ε-budget ``eps / split``.

    δ = 0: ``(epsilon, k)``, ε/k per pick as an exact rational (today's law). δ > 0: ``(ε0, 1)`` with
    ε0 = :func:`~dpselect.accounting.per_pick_epsilon` (``"bounded_range"`` for the Gumbel-noise family,
    ``"pure"`` otherwise; adaptive composition, since each pick runs on the candidates left by the earlier
    ones), the largest ε0 for which the k picks are together (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        The checked total ε (> 0).
    k : int
        The checked number of picks (>= 1).
    delta : float
        The checked δ in [0, 1) (0 for one pick).
    bounded_range : bool
        Whether one pick is ε-bounded-range (else pure ε-DP).

    Returns
    -------
    tuple of (float, int)
        The numerator and divisor of the per-pick ε.

    Examples
    --------
    >>> topk_budget(1.0, 10, 0.0, bounded_range=True)
    (1.0, 10)
    >>> e0, split = topk_budget(1.0, 10, 1e-6, bounded_range=False)
    >>> split, 0.1 < e0
    (1, True)
    """
    if delta == 0.0:
        return epsilon, k
    return per_pick_epsilon("bounded_range" if bounded_range else "pure", k=k, epsilon=epsilon, delta=delta), 1


def selection_label(name: str, k: int | None, size: int | None, delta: float = 0.0, exact: bool = True) -> str:
    """The ``accountant.history`` label of a selector call: ``name`` and the arguments that shape it.

    Parameters
    ----------
    name : str
        The mechanism's canonical name.
    k, size : int or None
        As passed (None: omitted).
    delta : float
        The top-k δ (shown when > 0).
    exact : bool
        ``exact=`` of the call (shown when False, with ``": non-private"``: float sampling is not ε-DP).

    Returns
    -------
    str

    Examples
    --------
    >>> selection_label("exponential", None, None), selection_label("exponential", 3, 10, 1e-6)
    ('exponential', 'exponential(k=3, size=10, delta=1e-06)')
    >>> selection_label("exponential", None, None, exact=False)
    'exponential(exact=False): non-private'
    """
    parts = []
    if k is not None:
        parts.append(f"k={k}")
    if size is not None:
        parts.append(f"size={size}")
    if delta:
        parts.append(f"delta={delta!r}")
    if not exact:
        parts.append("exact=False")
    return (f"{name}({', '.join(parts)})" if parts else name) + ("" if exact else ": non-private")


def charge_selection(accountant: Accountant | None, mechanism: Any, epsilon: float, *, k: int | None,
                     size: int | None, delta: float = 0.0, exact: bool = True, **options: Any) -> None:
    """Charge one call of ``mechanism`` (a registered name or a ``Mechanism``): its
    ``.privacy(epsilon, k=, delta=, **options)``,
    ``size`` times (``size=None``: once), labelled by :func:`selection_label`, with the call's
    :class:`~dpselect.accounting.Event`; ``exact=False`` charges :class:`~dpselect.accounting.NonPrivate`.
    No-op without an accountant.

    Charged under the accountant's own relation: a selector is ε-DP under whatever relation the caller's
    sensitivity Δu bounds the utilities' change for, and that claim is the caller's.

    Parameters
    ----------
    accountant : Accountant or None
        The budget (None: nothing to do, nothing computed).
    mechanism : str or Mechanism
        Whose ``.privacy`` is charged.
    epsilon : float
        The checked ε of the call.
    k, size : int or None
        The checked ``k`` and ``size`` as passed (None: omitted).
    delta : float
        The checked top-k δ.
    exact : bool
        The checked ``exact=`` (False: float sampling, not ε-DP: charged as ``NonPrivate``).
    **options
        The guarantee-relevant options of the call (``noise=`` for report-noisy-max).

    Returns
    -------
    None

    Raises
    ------
    BudgetExceededError
        Refused; nothing recorded.

    Examples
    --------
    >>> acc = Accountant(epsilon=1.0)
    >>> charge_selection(acc, "permute_and_flip", 0.3, k=None, size=2)
    >>> acc.history[0].guarantee, acc.history[0].label
    (PureDPComposition(epsilon0=0.3, k=2), 'permute_and_flip(size=2)')
    >>> charge_selection(acc, "permute_and_flip", 0.1, k=None, size=None, exact=False)
    Traceback (most recent call last):
    ...
    dpselect.exceptions.BudgetExceededError: charging NonPrivate() (label 'permute_and_flip(exact=False): ...
    """
    if accountant is None:
        return
    if isinstance(mechanism, str):
        mechanism = _MECHANISM_TABLE[mechanism]
    opts = tuple(sorted(options.items()))
    rel = accountant.neighbours   # stated in the event here, as charge would (no copy of the event per call)
    key = (id(mechanism), epsilon, k, size, delta, exact, opts, rel)
    hit = _CHARGES.get(key)
    if hit is None or hit[0] is not mechanism:
        g = repeated(mechanism.privacy(epsilon, k=k, delta=delta, exact=exact, **options),
                     1 if size is None else size)
        shown = tuple(o for o in opts if o[1] is not False)   # base_measure=False: none given
        ev = Event(mechanism.name, epsilon, k, delta, size, shown if exact else (*shown, ("exact", False)),
                   relation=rel)
        hit = (mechanism, g, selection_label(mechanism.name, k, size, delta, exact), ev)
        if len(_CHARGES) >= 4096:
            _CHARGES.clear()
        _CHARGES[key] = hit
    accountant.charge(hit[1], label=hit[2], event=hit[3])


# (id(spec), arguments) -> (spec, guarantee, label, event): the same call charges the same (frozen) guarantee object,
# so the accountant's per-object cost cache answers and a charge stays O(1) and cheap (10^4 charges through a
# selector in a small fraction of a second). The spec is kept in the entry, so its id cannot be reused.
_CHARGES: dict[tuple, tuple[Any, Guarantee, str, Event]] = {}
