"""``Accountant``: a privacy filter with an odometer.

A release is *charged* before it runs: :meth:`Accountant.charge` either records it or raises
:class:`~dpselect.BudgetExceededError` and records nothing. Every selector and application takes
``accountant=`` and charges it (each mechanism's ``.privacy(epsilon, k=...)``, or the application's own
proof) after checking its arguments and before any randomness is drawn; call ``charge`` yourself for
releases made outside dpselect.

Modes (what the budget certifies):

``"adaptive"`` (default) — each release, and its ε, may depend on earlier outputs. With ``delta = 0``:
    basic composition of pure ε (a bounded-range release counts its ε). With ``delta > 0``: a charge is
    accepted while (A) the pure ε's add up to at most ε, *or* (B) the zCDP filter holds (Whitehouse et
    al. 2023): ρ's add (ε-DP counts ε²/2, ε-BR ε²/8, a Gaussian Δ²/(2σ²)) against the largest ρ whose
    CKS conversion is (ε, δ − approx_delta)-DP; so it is never worse than adding ε's (three ``PureDP(1)``
    fit in (3, 1e-6)). (ε_i, δ_i) charges are δ_i-approximate ε_i-DP (ε_i²/2-zCDP) and their δ_i add
    against ``approx_delta``; a zCDP or Gaussian charge has no pure ε and fits through (B) only.
``"basic"`` — basic composition (ε's add, δ's add), also fully adaptive: best for a few large pure charges.
``"fixed"`` — the sequence of ε's is fixed in advance (the mechanisms may still depend on earlier
    outputs): the best of basic, zCDP, RDP composition and, for k releases of one ε0, the optimal
    composition of Kairouz, Oh & Viswanath (pure) or the certified optimal adaptive composition of
    bounded-range releases (k ≤ 400: computed once per ε0, a second or two; 400 < k ≤ 5000: reported by
    ``spent()`` from a windowed recursion, several seconds once per count, while the refusal itself uses
    the cheaper bounds).
``"batch"`` — the mechanisms themselves are fixed in advance (none looks at an earlier output): as
    ``"fixed"`` plus the optimal non-adaptive composition of k ε0-bounded-range releases (Dong, Durfee &
    Rogers 2020).

Every check is O(1) amortised: running (compensated) sums, and for the homogeneous optimal compositions
the largest affordable count is computed once per (kind, ε0) and cached.
"""
from __future__ import annotations

import math
from fractions import Fraction
import threading
import time
from functools import lru_cache
from typing import Any, NamedTuple, Sequence

import numpy as np

from .._validation import check_choice, check_nonnegative, check_positive, short_repr
from ..exceptions import BudgetExceededError
from ._numeric import check_delta, down, exact_up, rdp_delta, zcdp_delta, zcdp_epsilon
from .composition import (AdaptiveBoundedRangeComposition, BoundedRangeComposition, PureDPComposition, _kairouz_delta, _composed_epsilon_cached)
from .guarantees import (DEFAULT_ORDERS, RDP, ZCDP, ApproxDP, BoundedRange, GaussianMechanism, Guarantee, NonPrivate,
                         PureDP)
from .neighbours import ADD_REMOVE, check_neighbours, convert

__all__ = ["Accountant", "ChargeRecord", "Event", "MODES"]

MODES = ("adaptive", "basic", "fixed", "batch")


_INF = math.inf
_now = time.time


def _add(acc: tuple[float, float], x: float) -> tuple[float, float]:
    """(sum, compensation) + x by Knuth's TwoSum: the compensation holds the rounding error exactly."""
    if not x:
        return acc
    s, c = acc
    if x == _INF or s == _INF:
        return _INF, 0.0
    t = s + x
    bp = t - s
    return t, c + ((s - (t - bp)) + (x - bp))


def _val(acc: tuple[float, float]) -> float:
    """The value of a compensated sum, moved up one ulp when roundings occurred (never below exact)."""
    s, c = acc
    return s if c == 0.0 else math.nextafter(s + c, math.inf)
from ._adaptive_br import WINDOW_MAX_K as _WINDOW_MAX_K  # noqa: E402

_SLACK = 1e-12   # relative: ε/k split in float may sum to one ulp above ε; far below any mechanism's own error


class Event(NamedTuple):
    """What ran, kept apart from how it was analysed (the charged guarantee), so that a history can be
    re-analysed later (the dp-accounting model of events).

    Attributes
    ----------
    mechanism : str
        The mechanism or application that ran (``"exponential"``, ``"priv_pareto"``, ...).
    epsilon : float or None
        The ε it was called with (None: not an ε-parametrised release).
    k : int or None
        The number of picks (None: one pick, ``k`` omitted).
    delta : float
        The top-k δ of the call (0: ε/k per pick).
    size : int or None
        Independent draws in the call (None: one).
    options : tuple of (str, object)
        The options that decide the law: ``noise``, ``exact``, ``base_measure`` (whether one was given),
        the base run of a tuning, ...
    relation : object
        The neighbour relation of the release (None: not stated; :meth:`Accountant.charge` sets the stated
        one).

    Examples
    --------
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=1.0)
    >>> _ = dpselect.exponential([1.0, 5.0], epsilon=0.5, sensitivity=1.0, k=2, rng=0, accountant=acc)
    >>> acc.history[0].event
    Event(mechanism='exponential', epsilon=0.5, k=2, delta=0.0, size=None, options=(), relation='add_remove')
    """

    mechanism: str
    epsilon: float | None = None
    k: int | None = None
    delta: float = 0.0
    size: int | None = None
    options: tuple = ()
    relation: Any = None


class ChargeRecord(NamedTuple):
    """One accepted charge: the guarantee, the caller's label, the wall-clock time (``time.time()``) and
    the neighbour relation the release was stated under and the event (what ran).

    Returned by :meth:`Accountant.charge`; :attr:`Accountant.history` lists them.

    Attributes
    ----------
    guarantee : Guarantee
        What was charged: the analysis of the event, under the accountant's relation (converted when
        ``neighbours`` differs).
    label : str or None
        The caller's label (a converted charge appends what was stated, e.g.
        ``"median [add_remove: PureDP(epsilon=0.5)]"``).
    time : float
        When it was accepted (seconds since the epoch).
    neighbours : str
        The relation the release's guarantee was stated under.
    event : Event or None
        What ran (None: a charge made directly, with only its guarantee known).

    Examples
    --------
    >>> rec = Accountant(epsilon=1.0).charge(PureDP(0.5), label="q1")
    >>> rec.guarantee, rec.label, rec.time > 0, rec.neighbours, rec.event
    (PureDP(epsilon=0.5), 'q1', True, 'add_remove', None)
    """

    guarantee: Guarantee
    label: str | None
    time: float
    neighbours: str
    event: Event | None = None


class _Cost(NamedTuple):
    eps: float          # basic-composition ε (inf when the guarantee has no pure / approximate ε)
    delta: float        # its δ
    rho: float          # zCDP ρ (inf when none); (ε, δ) charges: ε²/2 with δ approximate
    group: tuple | None  # ("pure" | "bounded_range", ε0, count) for the homogeneous optimal compositions


class _State(NamedTuple):
    """Everything a charge changes, swapped in by one assignment (so an exception anywhere in a charge,
    a KeyboardInterrupt included, leaves either the old state or the new one, never half of each).

    The running sums are compensated pairs (see ``_add``); ``groups`` is, in "fixed" / "batch" mode, the
    releases of one ε0 seen so far as ``((kind, ε0, count), ...)`` (at most one entry per kind), ``None``
    once any other charge breaks homogeneity; ``rdp`` the running RDP curve there (``None`` until first
    needed); ``n`` the number of records of the log that belong to this state."""

    e: tuple[float, float]      # basic ε of every charge (inf once one has no pure / approximate ε), every mode
    d: tuple[float, float]      # δ of the (ε, δ) charges
    r: tuple[float, float]      # zCDP ρ
    groups: tuple | None
    rdp: np.ndarray | None
    n: int


_EMPTY = _State((0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (), None, 0)


def _grouped(groups: tuple | None, group: tuple | None) -> tuple | None:
    """``groups`` with one more charge of ``group`` (None: the sequence is no longer homogeneous)."""
    if groups is None or group is None:
        return None
    kind, e0, n = group
    if any(g[1] != e0 for g in groups):
        return None
    out, found = [], False
    for g in groups:
        if g[0] == kind:
            g, found = (kind, e0, g[2] + n), True
        out.append(g)
    return tuple(out) if found else (*groups, group)


def _k_times(k: int, eps0: float) -> float:
    """k·ε0 rounded up from the exact product (one ulp at most): a relative margin here would refuse a
    top-k of ε/k per pick on a budget of exactly ε."""
    return exact_up(k * eps0, Fraction(k) * Fraction(eps0))


def _cost(g: Guarantee) -> _Cost:
    if isinstance(g, BoundedRange):
        return _Cost(g.epsilon_, 0.0, g.zcdp(), ("bounded_range", g.epsilon_, 1))
    if isinstance(g, PureDP):
        return _Cost(g.epsilon_, 0.0, g.zcdp(), ("pure", g.epsilon_, 1))
    if isinstance(g, ApproxDP):
        if g.delta_ == 0.0:
            return _Cost(g.epsilon_, 0.0, PureDP(g.epsilon_).zcdp(), ("pure", g.epsilon_, 1))
        return _Cost(g.epsilon_, g.delta_, PureDP(g.epsilon_).zcdp(), None)
    if isinstance(g, (BoundedRangeComposition, AdaptiveBoundedRangeComposition)):
        return _Cost(_k_times(g.k, g.epsilon0), 0.0, g.zcdp(), ("bounded_range", g.epsilon0, g.k))
    if isinstance(g, PureDPComposition):
        return _Cost(_k_times(g.k, g.epsilon0), 0.0, g.zcdp(), ("pure", g.epsilon0, g.k))
    if isinstance(g, (ZCDP, GaussianMechanism)):
        return _Cost(math.inf, 0.0, g.zcdp(), None)
    if isinstance(g, (RDP, NonPrivate)):
        return _Cost(math.inf, 0.0, math.inf, None)
    raise TypeError(f"guarantee must be a guarantee value (PureDP, BoundedRange, ApproxDP, ZCDP, GaussianMechanism, "
                    f"RDP, NonPrivate, ...), got {short_repr(g)}")


@lru_cache(maxsize=256)
def _rho_budget(epsilon: float, delta: float) -> float:
    """The largest ρ whose CKS conversion is (ε, δ)-DP (rounded down)."""
    if delta <= 0.0:
        return 0.0
    if epsilon == _INF:
        return _INF
    lo, hi = 0.0, 1.0
    while zcdp_delta(hi, epsilon) <= delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if zcdp_delta(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    return down(lo)


@lru_cache(maxsize=256)
def _homogeneous_kmax(kind: str, eps0: float, epsilon: float, delta: float, batch: bool) -> int:
    """The largest k for which k releases of ``kind`` at ε0 are (ε, δ)-DP by the optimal composition
    (Kairouz et al. for pure; Dong, Durfee & Rogers for a batch of bounded-range releases)."""
    if eps0 == 0.0:
        return 2 ** 62

    def ok(k: int) -> bool:
        if kind == "bounded_range" and batch:
            return BoundedRangeComposition(eps0, k).delta(epsilon) <= delta
        return _kairouz_delta(eps0, k, epsilon) <= delta

    if not ok(1):
        return 0
    lo, hi = 1, 2
    while ok(hi):
        lo, hi = hi, 2 * hi
        if hi > 2 ** 40:
            return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    if kind == "bounded_range" and not batch:
        # adaptively chosen exponential mechanisms: the certified adaptive optimum, between the pure-DP
        # answer (lo) and the batch optimum (an upper limit), one pass of the recursion for all counts
        k_batch = _homogeneous_kmax(kind, eps0, epsilon, delta, True)
        if lo < k_batch <= 400:
            from ._adaptive_br import adaptive_br_curve, default_resolution
            m = default_resolution(k_batch)
            _, trace = adaptive_br_curve(eps0, k_batch, m, query=int(math.floor(epsilon / (eps0 / m))))
            lo = max(lo, int(np.argmax(trace > delta)) if np.any(trace > delta) else k_batch)
    return lo


class Accountant:
    """A privacy budget that refuses: a privacy filter with an odometer.

    Parameters
    ----------
    epsilon : float
        The ε of the budget (> 0). ``math.inf``: no limit, a recorder that also accepts
        :class:`~dpselect.accounting.NonPrivate` releases (a finite budget refuses them).
    delta : float, optional
        The δ of the budget, in [0, 1). Default 0: pure ε-DP, basic composition.
    mode : {"adaptive", "basic", "fixed", "batch"}
        What the budget certifies (module docstring, ``docs/accounting.md``). Default ``"adaptive"``.
    approx_delta : float, optional
        In ``"adaptive"`` mode with δ > 0: the part of δ reserved for (ε_i, δ_i) charges (their δ_i add up
        against it; the zCDP part converts at δ − approx_delta). Default 0: (ε, δ) charges with δ_i > 0
        are refused in that mode.
    neighbours : str, optional
        The neighbour relation the budget is stated under (:mod:`dpselect.accounting.neighbours`):
        ``"add_remove"`` (default), ``"replace_one"``, ``"edge_add_remove"``, ``"user_add_remove"`` or a
        name of your own. Charges stated under another relation are converted (add/remove ⇒ replace-one)
        or refused.

    Notes
    -----
    The filter certifies that the whole interaction is (ε, δ)-DP whatever the charges (within the mode's
    assumption). ``spent()`` reports what the charges so far compose to; in ``"adaptive"`` mode with
    adaptively chosen ε's this is a report, not a separate certificate (an odometer valid under full
    adaptivity costs a little more, Whitehouse et al. 2023). Charges are thread-safe (one lock) and O(1).

    Examples
    --------
    >>> from dpselect.accounting import Accountant, BoundedRange
    >>> acc = Accountant(epsilon=1.0)
    >>> for _ in range(4):
    ...     _ = acc.charge(BoundedRange(0.25), label="pick")
    >>> acc.spent()
    PureDP(epsilon=1.0)
    >>> acc.can_afford(BoundedRange(0.01))
    False
    >>> acc = Accountant(epsilon=2.25, delta=1e-6, mode="batch")   # 100 EM picks fixed in advance
    >>> for _ in range(100):
    ...     _ = acc.charge(BoundedRange(0.1))
    >>> round(acc.spent().epsilon_, 3), len(acc.history)
    (2.246, 100)
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, mode: str = "adaptive",
                 approx_delta: float = 0.0, neighbours: str = ADD_REMOVE) -> None:
        self.neighbours = check_neighbours(neighbours)
        infinite = isinstance(epsilon, (float, np.floating)) and epsilon == _INF
        self.epsilon = math.inf if infinite else check_positive(epsilon, "epsilon")
        self.delta = check_delta(delta, "delta")
        self.mode = check_choice(mode, "mode", MODES)
        self.approx_delta = check_nonnegative(approx_delta, "approx_delta")
        if self.approx_delta > self.delta or (self.approx_delta == self.delta and self.approx_delta > 0):
            raise ValueError(f"approx_delta must be smaller than delta (it is the part of delta kept for (ε, δ) "
                             f"charges), got approx_delta={approx_delta!r} with delta={delta!r}")
        if self.approx_delta > 0 and self.mode != "adaptive":
            raise ValueError(f"approx_delta is used by mode='adaptive' only, got approx_delta={approx_delta!r} "
                             f"with mode={mode!r}")
        self._zcdp_track = self.mode == "adaptive" and self.delta > 0.0
        self._rho_budget = _rho_budget(self.epsilon, self.delta - self.approx_delta) if self._zcdp_track else 0.0
        self._lock = threading.RLock()     # serialises charges (check and commit); readers use a snapshot
        self._log: list[ChargeRecord] = []  # the records; only the first self._state.n belong to the budget
        self._state = _EMPTY
        self._track = ("basic" if self.mode == "basic" or (self.mode == "adaptive" and self.delta == 0.0)
                       else "zcdp" if self.mode == "adaptive" else "fixed")
        self._lim_e = self.epsilon * (1.0 + _SLACK)
        self._lim_d = (self.approx_delta if self._track == "zcdp" else self.delta) * (1.0 + _SLACK)
        self._lim_r = self._rho_budget * (1.0 + _SLACK)
        self._costs: dict[int, tuple[Guarantee, _Cost]] = {}

    def __repr__(self) -> str:
        s = self._state
        return (f"Accountant(epsilon={self.epsilon!r}, delta={self.delta!r}, mode={self.mode!r}, "
                f"neighbours={self.neighbours!r}, spent={self._spent(s, None)!r}, charges={s.n})")

    # -- one budget: copies are the same object, pickling keeps history and sums together --------------
    def __copy__(self) -> "Accountant":
        """The accountant itself: a copy with its own sums would spend the same budget twice (an
        original and a copy with its own sums would together accept 1.7 on a budget of 1.0)."""
        return self

    def __deepcopy__(self, memo: dict) -> "Accountant":
        """The accountant itself (as :meth:`__copy__`): ``copy.deepcopy`` / ``sklearn.clone`` of an object
        holding one keep charging the one budget."""
        return self

    def __getstate__(self) -> dict:
        """Pickle the budget, its history and its sums from one snapshot (the lock and the cost cache,
        keyed by object ids, are rebuilt on load)."""
        s = self._state
        return {"epsilon": self.epsilon, "delta": self.delta, "mode": self.mode, "approx_delta": self.approx_delta,
                "neighbours": self.neighbours, "history": tuple(self._log[:s.n]), "state": s}

    def __setstate__(self, state: dict) -> None:
        Accountant.__init__(self, state["epsilon"], state["delta"], mode=state["mode"],
                            approx_delta=state["approx_delta"], neighbours=state["neighbours"])
        s, hist = state["state"], list(state["history"])
        if not isinstance(s, _State) or s.n != len(hist):
            raise ValueError("not a pickled Accountant: its history and its sums disagree")
        self._log, self._state = hist, s

    # -- the check ------------------------------------------------------------------------------------
    def _cost_of(self, g: Guarantee) -> _Cost:
        # keyed by id with the object kept alive in the entry (so the id cannot be reused while cached):
        # a dataclass __hash__ is Python code and would dominate an O(1) charge
        hit = self._costs.get(id(g))
        if hit is not None and hit[0] is g:
            return hit[1]
        c = _cost(g)
        if len(self._costs) < 4096:
            self._costs[id(g)] = (g, c)
        return c

    def _fits(self, g: Guarantee, c: _Cost, s: _State) -> tuple[bool, _State]:
        """Whether the charge fits on top of ``s``, and the state after it (nothing is mutated here).

        Running sums are compensated (error-free TwoSum), so each is within one ulp of the exact sum of
        the charges whatever their number. The basic ε sum is kept in every mode (it is ``spent(0)``)."""
        track = self._track
        d = _add(s.d, c.delta) if c.delta else s.d
        e = _add(s.e, c.eps)
        if track == "basic":
            return (c.eps < _INF and e[0] + e[1] <= self._lim_e and d[0] + d[1] <= self._lim_d), \
                _State(e, d, s.r, (), None, s.n + 1)
        r = _add(s.r, c.rho)
        if track == "zcdp":
            # the OR filter (docs/accounting.md, "Why the adaptive filter is never worse than adding ε's"):
            # (A) the pure sum stays within ε (the loss is then bounded on that path) or (B) the zCDP filter
            # holds (optional stopping bounds the rest by δ − approx_delta); δ_i's add against approx_delta
            ok = d[0] + d[1] <= self._lim_d and (e[0] + e[1] <= self._lim_e or r[0] + r[1] <= self._lim_r)
            return ok, _State(e, d, r, (), None, s.n + 1)
        groups = _grouped(s.groups, c.group)
        e_v, d_v, r_v = _val(e), _val(d), _val(r)

        def after(rdp: np.ndarray | None) -> _State:
            return _State(e, d, r, groups, None if rdp is None else rdp + self._curve(g), s.n + 1)

        # fixed / batch: any bound valid for a fixed sequence will do; cheapest first
        if e_v <= self._lim_e and d_v <= self.delta:
            return True, after(s.rdp)
        if d_v < self.delta and r_v <= _rho_budget(self.epsilon, self.delta - d_v):
            return True, after(s.rdp)
        if c.group is not None and d_v == 0.0 and self._homogeneous_ok(s, groups):
            return True, after(s.rdp)
        if d_v < self.delta:
            rdp = self._rdp_of(s)
            if rdp_delta(np.asarray(DEFAULT_ORDERS), rdp + self._curve(g), self.epsilon) + d_v <= self.delta:
                return True, after(rdp)
        return False, s

    def _homogeneous_ok(self, s: _State, groups: tuple | None) -> bool:
        """Whether all charges so far and the new one (``groups``, the state's groups after it) are
        releases of one ε0 (pure or bounded range) whose total count the optimal homogeneous composition
        affords."""
        if not groups:
            return False
        e0, total = groups[0][1], sum(g[2] for g in groups)
        kind = "bounded_range" if all(g[0] == "bounded_range" for g in groups) else "pure"
        return total <= _homogeneous_kmax(kind, e0, self.epsilon, self.delta, self.mode == "batch")

    def _rdp_of(self, s: _State) -> np.ndarray:
        """The running RDP curve of state ``s``, built from its records on first use (O(n), once) and kept
        in the accountant's state if that is still ``s``."""
        if s.rdp is not None:
            return s.rdp
        rdp = np.zeros(len(DEFAULT_ORDERS))
        for rec in self._log[:s.n]:
            rdp = rdp + self._curve(rec.guarantee)
        if self._lock.acquire(blocking=False):      # a reader never waits for a charge: caching is optional
            try:
                if self._state is s:
                    self._state = s._replace(rdp=rdp)
            finally:
                self._lock.release()
        return rdp

    @staticmethod
    @lru_cache(maxsize=1024)
    def _curve(g: Guarantee) -> np.ndarray:
        if isinstance(g, ApproxDP) and g.delta_ > 0:
            return np.array([PureDP(g.epsilon_).rdp(a) for a in DEFAULT_ORDERS])   # δ counted apart
        if isinstance(g, (PureDPComposition, BoundedRangeComposition, AdaptiveBoundedRangeComposition)):
            one = PureDP(g.epsilon0) if isinstance(g, PureDPComposition) else BoundedRange(g.epsilon0)
            return g.k * np.array([one.rdp(a) for a in DEFAULT_ORDERS])
        return np.array([g.rdp(a) for a in DEFAULT_ORDERS]) * (1.0 + 1e-15)

    # -- public API -----------------------------------------------------------------------------------
    def can_afford(self, guarantee: Guarantee, *, neighbours: str | None = None) -> bool:
        """Whether :meth:`charge` would accept ``guarantee`` now (nothing is recorded).

        Parameters
        ----------
        guarantee : Guarantee
            The release to test.
        neighbours : str, optional
            As in :meth:`charge` (a relation that cannot be converted raises, as there).

        Returns
        -------
        bool

        Raises
        ------
        TypeError
            ``guarantee`` is not a guarantee value.

        Examples
        --------
        >>> acc = Accountant(epsilon=1.0)
        >>> acc.can_afford(PureDP(0.5)), acc.can_afford(PureDP(1.5)), len(acc.history)
        (True, False, 0)
        """
        guarantee = self._converted(guarantee, neighbours)
        c = self._cost_of(guarantee)
        if isinstance(guarantee, NonPrivate):
            return self.epsilon == _INF
        if c.rho == math.inf and c.eps == math.inf and self._track != "fixed":
            return False
        return self._fits(guarantee, c, self._state)[0]      # a snapshot: no lock held while it computes

    def _basic_hint(self, s: _State, c: _Cost) -> str:
        """A hint for a refusal in "adaptive" mode that basic composition would have accepted.

        The adaptive filter with δ > 0 accepts whatever the pure sum accepts, except (ε_i, δ_i) charges
        beyond ``approx_delta`` (ApproxDP(1, 1e-5) against (2, 1e-4)); the user picks the mode in advance.
        O(1): read from the running basic sums (never a walk of the history under the lock)."""
        if self.mode != "adaptive" or self.delta == 0.0:
            return ""
        eps, dlt = _val(_add(s.e, c.eps)), _val(_add(s.d, c.delta))
        if eps <= self._lim_e and dlt <= self.delta * (1.0 + _SLACK):
            return (f" Basic composition would accept it (ε's and δ's add up to {eps:.6g}, "
                    f"{dlt:.3g}; in mode='adaptive' the δ's draw on approx_delta={self.approx_delta!r}): "
                    "create the Accountant with mode='basic' or a larger approx_delta (chosen before any "
                    "release; docs/accounting.md).")
        return ""

    def charge(self, guarantee: Guarantee, *, label: str | None = None, event: Event | None = None,
               neighbours: str | None = None) -> ChargeRecord:
        """Record a release of ``guarantee``, or refuse it.

        This is what the selectors' ``accountant=`` calls before drawing any randomness; call it yourself
        before a release made outside dpselect.

        Parameters
        ----------
        guarantee : Guarantee
            What the release certifies (e.g. ``BoundedRange(ε)`` for the exponential mechanism).
        label : str, optional
            Keyword-only: a label kept in the record (and named in the refusal).
        event : Event, optional
            Keyword-only: what ran (kept in the record, with its ``relation`` set to the stated one; the
            selectors pass it).
        neighbours : str, optional
            The relation ``guarantee`` is stated under. Omitted: the accountant's own (you assert that your
            release's guarantee holds under it). Another relation is converted to the accountant's where a
            theorem allows it (add/remove ε ⇒ replace-one 2ε; the record's label says so) and refused
            otherwise (``ValueError``, nothing recorded).

        Returns
        -------
        ChargeRecord
            The accepted charge (also appended to :attr:`history`).

        Raises
        ------
        BudgetExceededError
            The release would exceed the budget; nothing is recorded.
        TypeError
            ``guarantee`` is not a guarantee value, or ``label`` is not a string.
        ValueError
            The guarantee cannot be composed in this mode (an RDP curve outside "fixed" / "batch"), or its
            relation cannot be converted to the accountant's.

        Examples
        --------
        >>> from dpselect import BudgetExceededError
        >>> acc = Accountant(epsilon=1.0)
        >>> acc.charge(PureDP(0.75), label="first").label
        'first'
        >>> try:
        ...     acc.charge(PureDP(0.5))
        ... except BudgetExceededError as err:
        ...     print(err.spent, len(acc.history))
        PureDP(epsilon=0.75) 1
        >>> rec = Accountant(epsilon=2.0, neighbours="replace_one").charge(PureDP(0.5), label="q",
        ...                                                                  neighbours="add_remove")
        >>> rec.guarantee, rec.label, rec.neighbours
        (PureDP(epsilon=1.0), 'q [add_remove: PureDP(epsilon=0.5)]', 'add_remove')
        """
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a string or None, got {short_repr(label)}")
        if event is not None and not isinstance(event, Event):
            raise TypeError(f"event must be a dpselect.accounting.Event or None, got {short_repr(event)}")
        stated = self.neighbours if neighbours is None else neighbours
        try:
            converted = self._converted(guarantee, neighbours)
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}" if label else str(exc)) from None
        if converted is not guarantee:
            label = f"{label or ''} [{stated}: {guarantee!r}]".lstrip()
            guarantee = converted
        if event is not None and event.relation is None:
            event = event._replace(relation=stated)
        c = self._cost_of(guarantee)
        nonprivate = isinstance(guarantee, NonPrivate)
        if not nonprivate and c.rho == _INF and c.eps == _INF and self._track != "fixed":
            raise ValueError(f"an RDP curve can be charged in mode='fixed' or 'batch' only (an RDP filter needs "
                             f"one order fixed in advance), got mode={self.mode!r}")
        with self._lock:
            s = self._state
            if nonprivate:    # ε = ∞ on every path: only an infinite budget records it
                ok, new = self.epsilon == _INF, s._replace(e=(_INF, 0.0), r=(_INF, 0.0), groups=None, rdp=None,
                                                            n=s.n + 1)
            else:
                ok, new = self._fits(guarantee, c, s)
            if ok:
                rec = ChargeRecord(guarantee, label, _now(), stated, event)
                del self._log[s.n:]      # a record left by a charge interrupted before its commit
                self._log.append(rec)
                self._state = new        # the commit: one assignment (sums, groups, curve and count at once)
                return rec
        # the refusal's message is computed from the snapshot, outside the lock (spent() may take seconds
        # in "fixed" mode); it names public quantities only (the guarantees charged are the caller's)
        spent = self._spent(s, self.delta)
        where = f" (label {label!r})" if label is not None else ""
        if nonprivate:
            raise BudgetExceededError(
                f"charging {guarantee!r}{where} would exceed the budget (epsilon={self.epsilon!r}, "
                f"delta={self.delta!r}): the release is not differentially private (no finite ε; the label says "
                f"why). The private call samples exactly (exact=True, the default) and takes every public "
                f"quantity as an argument. Nothing was released or recorded.",
                guarantee=guarantee, label=label, spent=spent)
        raise BudgetExceededError(
            f"charging {guarantee!r}{where} would exceed the budget (epsilon={self.epsilon!r}, "
            f"delta={self.delta!r}, mode={self.mode!r}); spent so far: {spent!r} over "
            f"{s.n} charge(s). Nothing was released or recorded.{self._basic_hint(s, c)}",
            guarantee=guarantee, label=label, spent=spent)

    def _converted(self, guarantee: Guarantee, neighbours: str | None) -> Guarantee:
        """``guarantee`` (stated under ``neighbours``; None: the accountant's own) under the accountant's relation."""
        if neighbours is None:
            return guarantee
        return convert(guarantee, check_neighbours(neighbours), self.neighbours)

    @property
    def history(self) -> tuple[ChargeRecord, ...]:
        """The accepted charges, oldest first."""
        s = self._state
        return tuple(self._log[:s.n])        # records below a committed count never change

    def spent(self, delta: float | None = None) -> PureDP | ApproxDP | NonPrivate:
        """What the charges so far compose to, as (ε, δ) at ``delta``.

        In ``"adaptive"`` mode with δ > 0: the smaller of the pure sum (the ε's added, at the δ the (ε, δ)
        charges spent) and the zCDP reading, so never more than adding ε's; ``spent(0.0)`` is the pure sum.

        Parameters
        ----------
        delta : float, optional
            The δ at which to report (default: the budget's δ; in pure modes, the basic ε and the summed δ).

        Returns
        -------
        PureDP or ApproxDP or NonPrivate
            ``PureDP(0.0)`` before any charge; ``NonPrivate(calls=labels)`` once a non-private release was
            recorded (ε = ∞), naming the calls that made it so.

        Raises
        ------
        ValueError
            No finite ε is certified at ``delta`` (below the δ the (ε, δ) charges spent).

        Examples
        --------
        >>> acc = Accountant(epsilon=3.0, delta=1e-6)
        >>> for _ in range(10):
        ...     _ = acc.charge(BoundedRange(0.25))
        >>> round(acc.spent().epsilon_, 4), round(acc.spent(1e-3).epsilon_, 4), acc.spent(0.0).epsilon_
        (1.8731, 1.1737, 2.5)
        """
        d = None if delta is None else check_delta(delta)
        return self._spent(self._state, d)       # from a snapshot: no lock held (a "fixed" reading can take seconds)

    def _spent(self, s: _State, delta: float | None) -> PureDP | ApproxDP | NonPrivate:
        eps, dl, rho = _val(s.e), _val(s.d), _val(s.r)
        if not s.n:
            return PureDP(0.0)
        if eps == _INF and rho == _INF:     # a NonPrivate charge (or an RDP curve): look for the former
            calls = tuple(str(r.label) for r in self._log[:s.n] if isinstance(r.guarantee, NonPrivate))
            if calls:
                return NonPrivate(calls)
        if self.mode == "basic" or (self.mode == "adaptive" and self.delta == 0.0):
            return PureDP(eps) if dl == 0.0 else ApproxDP(eps, dl)
        target = self.delta if delta is None else delta
        if target < dl:
            raise ValueError(f"no finite ε is certified at delta={target!r}: the (ε, δ) charges alone spent "
                             f"δ = {dl!r}")
        if target == dl and not math.isfinite(eps):
            raise ValueError(f"no finite ε is certified at delta={target!r}: a charge has no pure ε (zCDP, "
                             f"Gaussian or RDP); read spent(delta) at a delta above {dl!r}")
        if target == dl:
            return ApproxDP(eps, target)
        if self.mode == "adaptive":
            # never worse than adding ε's: the pure sum is (Σε, Σδ_i) with Σδ_i = dl ≤ target
            return ApproxDP(min(eps, zcdp_epsilon(rho, target - dl)), target)
        best = eps
        if math.isfinite(rho):
            best = min(best, zcdp_epsilon(rho, target - dl))
        h = self._homogeneous_now(s)
        if h is not None and dl == 0.0:
            kind, e0, n = h
            if kind == "bounded_range" and self.mode == "fixed" and n <= _WINDOW_MAX_K:
                best = min(best, AdaptiveBoundedRangeComposition(e0, n).epsilon(target))
            kind = kind if self.mode == "batch" else "pure"
            best = min(best, _composed_epsilon_cached(kind, e0, n, target))
        rdp = self._rdp_of(s)
        from ._numeric import rdp_epsilon
        best = min(best, rdp_epsilon(np.asarray(DEFAULT_ORDERS), rdp, target - dl))
        return ApproxDP(best, target)

    @staticmethod
    def _homogeneous_now(s: _State) -> tuple[str, float, int] | None:
        """(kind, ε0, count) when every charge so far is a release of one kind and one ε0."""
        return s.groups[0] if s.groups is not None and len(s.groups) == 1 else None

    def remaining(self) -> Guarantee:
        """What can still be charged.

        ``PureDP`` / ``ApproxDP`` of ε and δ left (basic composition), or in "adaptive" mode with δ > 0 the
        ``ZCDP`` ρ left while the zCDP filter has room, then the ``PureDP`` ε the pure sum still accepts
        (rule (A) of the filter; ``ZCDP(0.0)`` once both are spent). In "fixed" / "batch" mode: ε left by basic
        composition on top of what was spent (a safe, not tight, answer).

        Returns
        -------
        Guarantee
            ``PureDP``, ``ApproxDP`` or ``ZCDP`` (rounded down); ``NonPrivate()`` for ``epsilon=math.inf``.

        Examples
        --------
        >>> acc = Accountant(epsilon=1.0)
        >>> _ = acc.charge(PureDP(0.5))
        >>> round(acc.remaining().epsilon_, 6)
        0.5
        >>> type(Accountant(epsilon=3.0, delta=1e-6).remaining()).__name__
        'ZCDP'
        """
        s = self._state
        if self.epsilon == _INF:
            return NonPrivate()              # no limit: even a non-private release is accepted
        if self._zcdp_track:
            rho_left = max(0.0, down(self._rho_budget - _val(s.r)))
            eps_left = max(0.0, down(self.epsilon - _val(s.e)))
            if rho_left > 0.0 or eps_left == 0.0:
                return ZCDP(rho_left)
            return PureDP(eps_left)          # the zCDP filter is spent; rule (A) still accepts this much
        if self.mode in ("fixed", "batch"):
            sp = self._spent(s, None)
            left = max(0.0, down(self.epsilon - sp.epsilon(self.delta))) if s.n else self.epsilon
            return PureDP(left)
        e = max(0.0, down(self.epsilon - _val(s.e)))
        d = max(0.0, self.delta - _val(s.d))
        return PureDP(e) if self.delta == 0.0 else ApproxDP(e, d)

    # -- export: hand what was spent to another accountant ---------------------------------------------
    def _history_without_delta(self, what: str) -> tuple[ChargeRecord, ...]:
        hist = self.history
        for r in hist:
            if isinstance(r.guarantee, NonPrivate):
                raise ValueError(f"{what} is infinite: the charge labelled {r.label!r} is non-private")
            if isinstance(r.guarantee, ApproxDP) and r.guarantee.delta_ > 0.0:
                raise ValueError(f"{what} is undefined: the charge {r.guarantee!r} has a δ of its own (read "
                                 f"acc.spent(delta) instead)")
        return hist

    def spent_zcdp(self) -> ZCDP:
        """The zCDP ρ of what was spent: the sum of the charges' ρ (ε-DP: ε²/2, ε-BR: ε²/8, a Gaussian Δ²/(2σ²)).

        Rounded up. Hand it to OpenDP (a ``zero_concentrated_divergence`` budget) or to dp-accounting
        (``ZCDpEvent(rho)`` in its ``RdpAccountant``) to keep composing there. This is the quantity the
        ``"adaptive"`` filter with δ > 0 checks; in the other modes it is a valid, not always the tightest,
        description of the same charges.

        Returns
        -------
        ZCDP

        Raises
        ------
        ValueError
            A charge has a δ of its own or no zCDP bound (an RDP curve), or is non-private.

        Examples
        --------
        >>> acc = Accountant(epsilon=1.0)
        >>> _ = acc.charge(BoundedRange(0.5)); _ = acc.charge(PureDP(0.25))
        >>> acc.spent_zcdp()
        ZCDP(rho=0.0625)
        """
        from ._numeric import sum_up
        hist = self._history_without_delta("spent_zcdp()")
        return ZCDP(sum_up([r.guarantee.zcdp() for r in hist]) if hist else 0.0)

    def rdp_curve(self) -> RDP:
        """The Rényi curve of what was spent, on :data:`~dpselect.accounting.DEFAULT_ORDERS`.

        Each charge's curve (a k-fold composition counts k releases), added order by order. Valid for any
        sequence with the ε's fixed in advance (and, at any one order fixed in advance, as an RDP filter,
        Feldman & Zrnic 2021). Export it as arrays ``(c.orders, c.epsilons)``, e.g. to dp-accounting's
        ``rdp_privacy_accountant.compute_epsilon(orders, rdp, delta)``.

        Returns
        -------
        RDP
            On the 259 default orders.

        Raises
        ------
        ValueError
            A charge has a δ of its own, or is non-private.

        Examples
        --------
        >>> acc = Accountant(epsilon=1.0)
        >>> _ = acc.charge(PureDP(0.5))
        >>> c = acc.rdp_curve()
        >>> len(c.orders), round(c.rdp(2.0), 6)
        (259, 0.227336)
        """
        hist = self._history_without_delta("rdp_curve()")
        total = np.zeros(len(DEFAULT_ORDERS))
        for r in hist:
            total = total + self._curve(r.guarantee)
        return RDP(DEFAULT_ORDERS, np.nextafter(total, np.inf) if hist else total)

    def to_dp_accounting(self) -> Any:
        """The history as one dp-accounting ``ComposedDpEvent``, for its accountants built with
        ``NeighboringRelation.REPLACE_ONE`` (needs the ``dp-accounting`` package, the ``test`` extra).

        Each charge becomes the event of its guarantee: ``NonPrivateDpEvent`` for :class:`NonPrivate`; for
        ε-DP the worst ε-DP pair, ``RandomizedResponseDpEvent`` on two buckets (dp-accounting takes it under
        REPLACE_ONE only; the pair, not the label, is what composes); a bounded-range release as the pure
        ε-DP event it implies (dp-accounting has no bounded-range event: exact at δ = 0, looser than
        :meth:`spent` at δ > 0); k-fold compositions as k such events; ``GaussianDpEvent`` (PLD only),
        ``ZCDpEvent`` (RDP only); ``UnsupportedDpEvent`` for (ε, δ) charges with δ > 0 and RDP curves.

        Returns
        -------
        dp_accounting.ComposedDpEvent

        Examples
        --------
        >>> from dp_accounting import NeighboringRelation
        >>> from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
        >>> acc = Accountant(epsilon=1.0)
        >>> for _ in range(4):
        ...     _ = acc.charge(PureDP(0.25))
        >>> pld = PLDAccountant(NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-7)
        >>> round(pld.compose(acc.to_dp_accounting()).get_epsilon(0.0), 5), acc.spent()
        (1.0, PureDP(epsilon=1.0))
        """
        from ._export import composed
        return composed([r.guarantee for r in self.history])

    def privacy_curve(self, deltas: Sequence[float] | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The privacy profile of what was spent as arrays ``(deltas, epsilons)``.

        At each δ the ε of ``spent(δ)`` (what :meth:`plot` draws; ``nan`` or ``inf`` below the δ the (ε, δ)
        charges spent, or where no finite ε is certified). Any δ ↦ ε pair on it is an (ε, δ)-DP guarantee of
        the whole sequence (under the mode's assumption), e.g. to give OpenDP as
        ``dp.approximate(dp.max_divergence())`` distances.

        Parameters
        ----------
        deltas : sequence of float or ndarray, optional
            The δ grid (default: 45 values from 1e-12 to 1e-1, log-spaced).

        Returns
        -------
        deltas : ndarray of shape (m,)
            The δ grid.
        epsilons : ndarray of shape (m,)
            ε at each δ.

        Examples
        --------
        >>> acc = Accountant(epsilon=3.0, delta=1e-6)
        >>> for _ in range(10):
        ...     _ = acc.charge(BoundedRange(0.25))
        >>> ds, eps = acc.privacy_curve([1e-6, 1e-3])
        >>> eps.shape, eps.round(4).tolist()
        ((2,), [1.8731, 1.1737])
        >>> acc.privacy_curve()[1].shape
        (45,)
        """
        ds = np.logspace(-12, -1, 45) if deltas is None else np.asarray(deltas, dtype=float).ravel()
        eps = np.empty(ds.size)
        for i, d in enumerate(ds):
            try:
                eps[i] = self.spent(float(d)).epsilon(float(d))
            except ValueError:          # below the δ the (ε, δ) charges spent: nothing finite
                eps[i] = math.nan
        return ds, eps

    def plot(self, ax: Any = None, deltas: Sequence[float] | None = None) -> Any:
        """Plot the privacy profile ε(δ) of what was spent (matplotlib, imported on first use).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        deltas : sequence of float, optional
            The δ grid (as :meth:`privacy_curve`).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Raises
        ------
        ImportError
            matplotlib is missing (with an install hint).

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> acc = Accountant(epsilon=3.0, delta=1e-6)
        >>> _ = acc.charge(BoundedRange(0.5))
        >>> ax = acc.plot()
        >>> type(ax).__name__, len(ax.lines)
        ('Axes', 3)
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Accountant.plot needs matplotlib (pip install matplotlib); the accountant itself "
                              "does not") from exc
        ds, eps = self.privacy_curve(deltas)
        if ax is None:
            _, ax = plt.subplots()
        ax.semilogx(ds, eps, label=f"spent ({self._state.n} charges, mode={self.mode})")
        ax.axhline(self.epsilon, ls="--", c="gray", label=f"budget ε = {self.epsilon:g}")
        if self.delta > 0:
            ax.axvline(self.delta, ls=":", c="gray", label=f"budget δ = {self.delta:g}")
        ax.set_xlabel("δ")
        ax.set_ylabel("ε(δ)")
        ax.legend()
        return ax
