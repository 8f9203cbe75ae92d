"""The mechanism registry: a selection mechanism is a value.

Every single-objective selection mechanism of dpselect is one frozen :class:`Mechanism` in one registry,
:data:`MECHANISMS` (also ``dpselect.MECHANISMS``, a read-only mapping canonical name -> spec).
:func:`get_mechanism` resolves a name or an alias (EM, PF, RNM, LD, SLD; any case) to its spec. A spec
knows how to select (:meth:`Mechanism.select`), its exact k = 1 law (:meth:`Mechanism.probabilities`) and the
privacy guarantee it gives, as a value (:meth:`Mechanism.privacy`, what an accountant charges). Applications
ask the registry instead of comparing names: their mechanism subsets are queries (:func:`names`) on the
capability fields (``kind``, ``noises``, ``score``, ``options``).

No trust by default: a :class:`Mechanism` must declare its guarantee (``guarantee=PureDP``,
``BoundedRange`` or a mapping noise -> class; a ``TypeError`` without it), and ``noises`` is a declared
capability (default ``()``): a user's mechanism reaches a query such as ``names(noise="gumbel")`` (the median,
DiffPID3, ...) only by declaring that noise. :func:`check` runs the contract test's audit on any spec.

Guarantees (checked against the proofs and by exact audits in ``tests/test_contract.py``):

* exponential mechanism, report-noisy-max with Gumbel noise: ε-**bounded range** (ε-BR). The log-ratio of
  the output probabilities between neighbours is ε·(u_x(r) − u_y(r))/(2Δ) (or /Δ if ``monotonic``) plus a
  constant (the normalisers), and the first term ranges over an interval of width ≤ ε: [−ε/2, ε/2], or
  [0, ε] (one side) when all utilities move in the same direction (``monotonic=True``). So ε-BR, hence
  ε-DP and ε²/8-zCDP.
* local dampening: ε-BR. Its proof (thesis Thm 3.5.1) is the exponential mechanism's on the dampened
  utility D, whose change between neighbours is at most 1 for every candidate when δ is admissible
  (thesis Lemma 3.3.1); the same argument as above gives a log-ratio range of width ≤ ε.
* shifted local dampening: ε-BR. For every shift s it is local dampening on u + s (same δ, still
  admissible), ε-BR for each s; its law is the limit s → ±∞ (thesis Lemma 4.3.1 / Cor. 4.3.1: reached at a
  finite s0), and a pointwise limit of log-ratios of range width ≤ ε has range width ≤ ε.
* permute-and-flip (exponential-noise report-noisy-max) and Laplace report-noisy-max: pure ε-DP, **not**
  ε-BR (in :func:`dpselect.audit.exact_dp_audit`'s example the log-ratio of permute-and-flip spans 1.39 at
  ε = 1, and 1.54 on the contract test's pairs, so the bounded-range bound ε²/8-zCDP does not apply to it,
  though OpenDP once claimed it).

Neighbour model: a guarantee holds for the neighbour model under which the sensitivity given to the
mechanism is valid. Global mechanisms: every neighbouring pair (x, y) of the data's model has
|u(x, r) − u(y, r)| ≤ Δ for every candidate r (and, with ``monotonic=True``, all u(x, r) − u(y, r) of one
sign). Local mechanisms: the sensitivity function is admissible for u under that model (thesis Def. 3.2.3:
add/remove one record for the tabular utilities, one edge for the graph ones; see each utility's docs).
Each spec says so in its ``neighbour_model`` field.

k > 1 (k picks on the remaining candidates, ε0 each): :meth:`Mechanism.privacy` with ``k=`` returns the
composition value valid for this *adaptive* sequence (the candidate set of each pick depends on earlier
picks; the per-pick ε0 is fixed in advance): ``PureDPComposition(ε0, k)`` (the optimal composition of
Kairouz et al., valid for adaptively chosen ε0-DP mechanisms) for pure-DP mechanisms and
``AdaptiveBoundedRangeComposition(ε0, k)`` for bounded-range ones. With ``delta=0`` (the default) ε0 is
ε/k rounded up (the samplers use the exact rational ε/k) and the value certifies ε at δ = 0 (basic
composition) and less at δ > 0. With ``delta > 0`` (top-k under (ε, δ)) ε0 is
:func:`dpselect.accounting.per_pick_epsilon` of the guarantee's kind: the largest ε0 whose k-fold adaptive
composition is (ε, δ)-DP; the selectors then run each pick with exactly that ε0.

Every selector and :meth:`Mechanism.select` take ``accountant=``: the call's ``.privacy(...)`` (``size``
times for ``size=`` batches) is charged after the arguments are checked and before any random bit is drawn
(:mod:`dpselect._boundary`), under the accountant's own neighbour relation: a selector is ε-DP under
whichever relation the sensitivity Δu bounds the utilities' change for, and Δu is the caller's claim under
the accountant's relation. A user's selector without ``accountant=`` checks its own arguments, so
:meth:`Mechanism.select` checks that the budget affords the call, runs it, and charges once it has drawn
(nothing when it refuses before drawing); its output is checked (type, shape, range, distinct picks) with
messages that name no value.

Adding a mechanism is one :func:`register` call with its spec (see ``docs/architecture.md``, "Where new
things go"). :func:`unregister` removes one (for tests).

>>> import dpselect
>>> em = dpselect.get_mechanism("EM")
>>> em.name, em.kind, em.privacy(1.0)
('exponential', 'global', BoundedRange(epsilon=1.0))
>>> dpselect.get_mechanism("rnm").privacy(1.0, noise="gumbel")
BoundedRange(epsilon=1.0)
>>> dpselect.get_mechanism("pf").privacy(1.0)
PureDP(epsilon=1.0)
>>> g = em.privacy(1.0, k=10, delta=1e-6)          # top-k under (ε, δ): a larger ε0 per pick
>>> g.k, round(g.epsilon0, 4), g.epsilon(1e-6) <= 1.0
(10, 0.1525, True)
>>> names(kind="local")
('local_dampening', 'shifted_local_dampening')
"""
from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Literal, Mapping, cast, overload

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from . import mechanisms as _m
from . import vocabulary as _voc
from ._validation import check_bool, check_choice, check_int, check_positive, short_repr
from ._boundary import check_accountant, check_topk_delta, repeated, selection_label, topk_budget
from ._rng import check_rng
from .accounting.accountant import Accountant
from .accounting.composition import AdaptiveBoundedRangeComposition, PureDPComposition
from .accounting.accountant import Event
from .accounting.guarantees import BoundedRange, Guarantee, NonPrivate, PureDP
from .dampening import DEFAULT_MAX_STEPS, dampen_with_error, shift_totals_with_error
from .sampling import NOISES
from .sensitivity import SensitivityFunction
from .typing import IndexArray, ProbabilityFunction, RngLike, Selection, Selector

__all__ = ["Mechanism", "MECHANISMS", "get_mechanism", "names", "register", "unregister", "check", "CheckReport",
           "ContractError", "KINDS", "SCORES"]

#: ``Mechanism.kind``: a number Δu as sensitivity ("global") or a SensitivityFunction ("local").
KINDS = ("global", "local")
#: ``Mechanism.score``: what the noisy max runs on. "utility": u itself (global mechanisms); "dampened":
#: the dampened utility D(x, r) (local dampening; D can be computed once and cached across draws);
#: "shifted": u ∓ G_r (shifted local dampening; the shifts G can be cached across draws).
SCORES = ("utility", "dampened", "shifted")

#: Options every selector takes (besides utilities, epsilon and the sensitivity).
COMMON_OPTIONS = ("k", "rng", "size", "base_measure", "exact")
_NOT_OPTIONS = ("utilities", "epsilon", "sensitivity", "sensitivity_function", "weights")
#: Options a selector may take beyond :data:`COMMON_OPTIONS` (accepted where its signature has them):
#: ``delta`` (top-k under (ε, δ)) and ``accountant`` (charged by :meth:`Mechanism.select` itself otherwise).
BOUNDARY_OPTIONS = ("delta", "accountant")

#: The per-pick guarantee of a noisy max, by noise family: Gumbel noise (the exponential mechanism on its
#: score) is ε-bounded-range; exponential noise (permute-and-flip) and Laplace noise are pure ε-DP only.
_GUARANTEE_BY_NOISE: dict[str, "type[PureDP] | type[BoundedRange]"] = {"gumbel": BoundedRange, "exponential": PureDP, "laplace": PureDP}

_GLOBAL_MODEL = ("any neighbour model under which `sensitivity` (Δu) bounds |u(x, r) − u(y, r)| for every "
                 "candidate r (with monotonic=True: all differences also of one sign)")
_LOCAL_MODEL = ("the neighbour model for which the sensitivity function is admissible for u (thesis Def. 3.2.3; "
                "add/remove one record for tabular utilities, one edge for graph utilities)")


def _per_pick(epsilon: float, k: int) -> float:
    """ε/k rounded up: the claimed per-pick ε0 is never below the exact ε/k the samplers use."""
    e0 = epsilon / k
    while Fraction(e0) * k < Fraction(epsilon):
        e0 = math.nextafter(e0, math.inf)
    return e0


@dataclass(frozen=True)
class Mechanism:
    """One selection mechanism as a value: its names, how it selects, its exact law and its guarantee.

    Parameters
    ----------
    name : str
        Canonical name (lower case, ``snake_case``); the key in :data:`MECHANISMS`.
    kind : {"global", "local"}
        "global": the sensitivity is a number Δu; "local": a :class:`~dpselect.SensitivityFunction`.
    selector : callable
        ``selector(utilities, *, epsilon, sensitivity | sensitivity_function, k=None, rng=None, size=None,
        base_measure=None, exact=True, **options)`` with dpselect's return convention
        (:func:`dpselect.vocabulary.selection_result`).
    probability_fn : callable
        ``probability_fn(utilities, *, epsilon, sensitivity | sensitivity_function, base_measure=None,
        **options)``: the exact law of one pick.
    aliases : str or tuple of str
        Short names, lower case (matched case-insensitively); one string is one alias (``"ty"``, not "t", "y").
    noises : tuple of str
        The noise families of the noisy max the mechanism is (one of :data:`dpselect.sampling.NOISES`); the
        first is the default. Omitted (``()``): the mechanism declares no noise family, and the capability
        queries of applications that rely on one (``names(noise=...)``: the median, DiffPID3, DP-MOTkIN,
        PrivTopk, the Dask frequent items) leave it out; declare it only if the mechanism *is* that noisy max.
        More than one: selectable by the option ``noise=`` (report-noisy-max). The noise decides how
        ``base_measure`` is read (Gumbel: any w > 0; exponential, Laplace: whole numbers of copies); the
        guarantee is what ``guarantee=`` declares (never derived from the noise).
    score : {"utility", "dampened", "shifted"}
        What the noisy max runs on (see :data:`SCORES`); "dampened" and "shifted" can be cached across draws
        with :meth:`prepare` and :meth:`select_prepared`.
    options : tuple of str
        Keyword options beyond :data:`COMMON_OPTIONS` (``monotonic``, ``noise``, ``direction``, ``max_steps``).
    neighbour_model : str
        Under which neighbour model the guarantee holds.
    description : str
        One line for listings and error messages.
    guarantee : type or mapping
        Required (a ``TypeError`` without it: no guarantee is assumed): the per-pick guarantee class,
        ``PureDP`` (pure ε-DP) or ``BoundedRange`` (ε-bounded range), or a mapping ``noise -> class`` covering
        every entry of ``noises`` (report-noisy-max: ``{"laplace": PureDP, "gumbel": BoundedRange,
        "exponential": PureDP}``). :meth:`privacy` returns that class at the call's ε (composed for k > 1).
        Audit a claim with :func:`check`.
    prepare_fn, select_prepared_fn : callable, optional
        Local mechanisms whose scores can be cached: ``prepare_fn(utilities, sensitivity_function,
        max_steps=...) -> cache`` and ``select_prepared_fn(utilities, sensitivity_function, cache, epsilon, k,
        rng, **options)`` (the same law as :meth:`select`, with the same random bits).

    Examples
    --------
    >>> em = get_mechanism("exponential")
    >>> em.kind, em.aliases, em.noises, em.accepts("monotonic"), em.accepts("accountant")
    ('global', ('em',), ('gumbel',), True, True)
    """

    name: str
    kind: Literal["global", "local"]
    selector: Selector = field(repr=False, compare=False)
    probability_fn: ProbabilityFunction = field(repr=False, compare=False)
    aliases: tuple[str, ...] = ()
    noises: tuple[str, ...] = ()
    score: Literal["utility", "dampened", "shifted"] = "utility"
    options: tuple[str, ...] = ()
    neighbour_model: str = field(default="", repr=False)
    description: str = field(default="", repr=False)
    guarantee: "type[PureDP] | type[BoundedRange] | Mapping[str, type[PureDP] | type[BoundedRange]] | None" = field(
        default=None, repr=False, compare=False)
    prepare_fn: Callable[..., tuple[np.ndarray, Any]] | None = field(default=None, repr=False, compare=False)
    select_prepared_fn: Selector | None = field(default=None, repr=False, compare=False)
    _takes: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    #: whether the selector can be handed ``rng=`` (a parameter of that name, or ``**kwargs``)
    _takes_rng: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip().lower():
            raise ValueError(f"name must be a non-empty lower-case string, got {self.name!r}")
        check_choice(self.kind, "kind", KINDS)
        check_choice(self.score, "score", SCORES)
        for what, fn in (("selector", self.selector), ("probability_fn", self.probability_fn)):
            if not callable(fn):
                raise TypeError(f"{what} must be callable, got {short_repr(fn)}")
        aliases = (self.aliases,) if isinstance(self.aliases, str) else self.aliases   # 'ty' is one alias
        try:
            aliases = tuple(aliases)
        except TypeError:
            raise TypeError(f"aliases must be a string or a tuple of strings, got {short_repr(self.aliases)}") from None
        if not all(isinstance(a, str) and a.strip() for a in aliases):
            raise TypeError(f"aliases must be a string or a tuple of non-empty strings, got {short_repr(self.aliases)}")
        object.__setattr__(self, "aliases", tuple(a.strip().lower() for a in aliases))
        noises = (self.noises,) if isinstance(self.noises, str) else tuple(self.noises)
        if any(n not in NOISES for n in noises) or len(set(noises)) != len(noises):
            raise ValueError(f"noises must be a tuple of distinct {', '.join(NOISES)} (or () for none), "
                             f"got {self.noises!r}")
        object.__setattr__(self, "noises", noises)
        object.__setattr__(self, "guarantee", self._checked_guarantee(self.guarantee))
        if (self.prepare_fn is None) != (self.select_prepared_fn is None):
            raise ValueError("prepare_fn and select_prepared_fn go together (both or neither)")
        object.__setattr__(self, "options", tuple(self.options))
        try:
            params = inspect.signature(self.selector).parameters
        except (TypeError, ValueError):   # a builtin or the like without a signature: none of them
            params = {}  # type: ignore[assignment]
        object.__setattr__(self, "_takes", tuple(o for o in BOUNDARY_OPTIONS if o in params))
        object.__setattr__(self, "_takes_rng", "rng" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()))

    def _checked_guarantee(self, g: Any) -> Any:
        """The declared guarantee (a class, or a mapping noise -> class), or a TypeError saying what to
        pass: nothing is certified by default."""
        how = ("pass guarantee=PureDP (pure ε-DP per pick) or guarantee=BoundedRange (ε-bounded range per pick), "
               "from dpselect.accounting, or a mapping noise -> one of them covering every noise in noises=; "
               "then audit the claim with dpselect.registry.check(spec)")
        if g is None:
            raise TypeError(f"mechanism {self.name!r} declares no privacy guarantee (none is assumed): {how}")
        if isinstance(g, Mapping):
            if not self.noises or set(g) != set(self.noises) or any(c not in (PureDP, BoundedRange)
                                                                    for c in g.values()):
                raise TypeError(f"guarantee of mechanism {self.name!r}: a mapping must give PureDP or BoundedRange "
                                f"for exactly the noises {self.noises!r}, got {short_repr(g)}; {how}")
            return {n: g[n] for n in self.noises}    # a copy in noise order (a dict: specs pickle)
        if g not in (PureDP, BoundedRange):
            raise TypeError(f"guarantee of mechanism {self.name!r} must be PureDP or BoundedRange (the class) or a "
                            f"mapping noise -> class, got {short_repr(g)}; {how}")
        return g

    # -- capabilities --------------------------------------------------------------------------------
    @property
    def noise(self) -> str | None:
        """The default noise family (None: the mechanism declares none)."""
        return self.noises[0] if self.noises else None

    @property
    def cacheable(self) -> bool:
        """Whether the scores (D or G) can be computed once and reused across draws (:meth:`prepare`)."""
        return self.prepare_fn is not None

    @property
    def sensitivity_keyword(self) -> str:
        """The selector's keyword for the sensitivity: ``sensitivity`` (global) or ``sensitivity_function``."""
        return "sensitivity" if self.kind == "global" else "sensitivity_function"

    def accepts(self, option: str) -> bool:
        """Whether ``option`` is one of the selector's keyword options.

        Parameters
        ----------
        option : str
            A keyword name: one of :data:`COMMON_OPTIONS`, :attr:`options`, ``accountant``, or ``delta`` where
            the selector takes it.

        Returns
        -------
        bool
            True when :meth:`select` accepts ``option=``.

        Examples
        --------
        >>> get_mechanism("EM").accepts("monotonic"), get_mechanism("EM").accepts("noise")
        (True, False)
        >>> get_mechanism("RNM").accepts("noise")
        True
        """
        return option in COMMON_OPTIONS or option in self.options or option == "accountant" or option in self._takes

    # -- selection -----------------------------------------------------------------------------------
    @overload
    def select(self, utilities: ArrayLike, *, epsilon: float, sensitivity: float | SensitivityFunction,
               k: None = None, size: None = None, accountant: Accountant | None = None, **options: Any) -> int: ...

    @overload
    def select(self, utilities: ArrayLike, *, epsilon: float, sensitivity: float | SensitivityFunction, k: int,
               size: int | None = None, accountant: Accountant | None = None, **options: Any) -> IndexArray: ...

    @overload
    def select(self, utilities: ArrayLike, *, epsilon: float, sensitivity: float | SensitivityFunction,
               k: int | None = None, size: int, accountant: Accountant | None = None, **options: Any) -> IndexArray: ...

    def select(self, utilities: ArrayLike, *, epsilon: float, sensitivity: float | SensitivityFunction,
               accountant: Accountant | None = None, **options: Any) -> Selection:
        """Select with this mechanism: ``sensitivity`` is Δu (global) or a SensitivityFunction (local).

        The arguments are checked once, by the mechanism's own entry point (for the built-ins the function of
        :mod:`dpselect.mechanisms`, its checked entry), then ``accountant`` is charged
        :meth:`privacy` of the call, then the mechanism draws.

        Parameters
        ----------
        utilities : array_like
            One utility per candidate (1-D, finite).
        epsilon : float
            The privacy budget of the call (> 0).
        sensitivity : float or SensitivityFunction
            Δu (``kind == "global"``) or the sensitivity function (``kind == "local"``).
        accountant : Accountant, optional
            Charged ``self.privacy(epsilon, k=, delta=, **options)`` (``size`` times for ``size=N``; with
            ``delta=`` the per-pick ε the release runs at); a refused charge raises
            :class:`~dpselect.BudgetExceededError` and leaves the generator untouched. The built-in selectors
            charge after their checks and before any random bit. A selector without ``accountant=`` in its
            signature (a mechanism registered by a user) runs only if the budget affords the call, on a
            ``Generator`` made from ``rng`` (where it takes ``rng=``), and is charged here once it has drawn:
            after it returns, or when it raises after drawing (a failure that depends on the draw). One that
            raises before drawing from ``rng`` (its argument checks) costs nothing; without an ``rng=`` to
            watch, any failure is charged.
        **options
            :data:`COMMON_OPTIONS`, :attr:`options` and, where the selector takes it, ``delta=`` (top-k under
            (ε, δ)); others are a ``TypeError`` naming them.

        Returns
        -------
        int or numpy.ndarray
            An ``int`` with ``k`` omitted, an int64 array of shape (k,) for any int ``k``; with ``size=N``
            shapes (N,) and (N, k).

        Raises
        ------
        TypeError, ValueError
            A bad argument; or a user's selector returned something outside that convention (not an integer,
            NaN, another shape, a position outside the candidates, a candidate twice among k picks): the
            message names the mechanism and what was expected, never the returned value (it depends on the
            data).

        Examples
        --------
        >>> get_mechanism("EM").select([1.0, 9.0, 2.0], epsilon=50.0, sensitivity=1.0, rng=0)
        1
        >>> get_mechanism("PF").select([1.0, 9.0, 2.0], epsilon=50.0, sensitivity=1.0, k=2, size=4, rng=0).shape
        (4, 2)
        """
        self._check_options(options, probabilities=False)
        if getattr(self.selector, "_dpselect_builtin", False):
            # a built-in entry point: it checks every argument, charges accountant= and draws, in that order
            if accountant is not None:
                options["accountant"] = accountant
            # (the built-ins return dpselect's convention by construction: selection_result)
            return cast(Selection, self.selector(utilities, epsilon=epsilon, **{self.sensitivity_keyword: sensitivity},
                                                 **options))
        return self._select_user(utilities, epsilon, sensitivity, accountant, options)

    def _select_user(self, utilities: ArrayLike, epsilon: float, sensitivity: float | SensitivityFunction,
                     accountant: Accountant | None, options: dict[str, Any]) -> Selection:
        """:meth:`select` with a selector that is not a built-in entry point (a user's).

        Its arguments are checked by the selector itself, so an accountant it does not take is not charged
        before it runs: the affordability of the call is checked first (a refusal draws nothing), then the
        selector runs on a ``Generator`` whose state tells whether it drew, and the accountant is charged after
        it drew (after a return, or after an exception raised once it had drawn: that failure is a function of
        the draw). A selector that refuses before drawing costs nothing. Its output is then checked with
        messages that name no value (the output and the data it came from are private)."""
        k = options.get("k")
        size = options.get("size")
        kk = None if k is None else check_int(k, "k", minimum=1)
        nn = None if size is None else check_int(size, "size", minimum=1)
        acc: Any = None
        guarantee: Any = None
        label, event = self.name, None
        if accountant is not None and "accountant" in self._takes:
            options["accountant"] = accountant
        elif accountant is not None:
            acc = check_accountant(accountant)
            delta = check_topk_delta(options.get("delta", 0.0), kk)
            noise = {"noise": options["noise"]} if "noise" in options else {}
            exact = check_bool(options.get("exact", True), "exact")
            # the guarantee the release runs at: per-pick ε from (ε, δ) when the selector takes delta=
            guarantee = repeated(self.privacy(epsilon, k=kk, delta=delta, exact=exact, **noise),
                                 1 if nn is None else nn)
            label = selection_label(self.name, kk, nn, delta, exact)
            event = Event(self.name, float(epsilon), kk, delta, nn,
                          tuple(noise.items()) + (() if exact else (("exact", False),)))
            if not acc.can_afford(guarantee):
                acc.charge(guarantee, label=label, event=event)   # raises BudgetExceededError: nothing drawn
        gen = None
        if acc is not None and ("rng" in options or self._takes_rng):
            gen = check_rng(options.get("rng"))
            options["rng"] = gen
        state = None if gen is None else gen.bit_generator.state
        try:
            out = self.selector(utilities, epsilon=epsilon, **{self.sensitivity_keyword: sensitivity}, **options)
        except BaseException:
            # charged unless the selector provably drew nothing (it refused on its checks): without a
            # generator to watch, a failure after drawing cannot be told apart, so it is charged
            if acc is not None and (gen is None or gen.bit_generator.state != state):
                acc.charge(guarantee, label=label, event=event)
            raise
        if acc is not None:
            acc.charge(guarantee, label=label, event=event)   # before the output is checked: it was drawn
        return self._check_output(out, utilities, kk, nn)

    def _check_output(self, out: Any, utilities: ArrayLike, k: int | None, size: int | None) -> Selection:
        """A user selector's output in dpselect's return convention, or a TypeError / ValueError naming no value:
        ``k`` omitted: one int (``size=N``: an (N,) int array); an int ``k``: an (k,) int64 array of distinct
        indices ((N, k) with ``size=N``). Positions in [0, n) (labels of the index for a pandas Series)."""
        who = f"the selector of mechanism {self.name!r}"
        want = ("one int index" if k is None and size is None else
                f"an int array of shape ({size},)" if k is None else
                f"an int array of shape ({k},)" if size is None else f"an int array of shape ({size}, {k})")
        labels = getattr(utilities, "index", None) if _voc._is_labelled(utilities) else None
        if labels is not None:
            arr = np.asarray(out, dtype=object)
            pos = np.asarray(labels.get_indexer(arr.reshape(-1)), dtype=np.int64).reshape(arr.shape)
            if (pos < 0).any():
                raise ValueError(f"{who} returned a label that is not in the utilities' index (the value is not "
                                 "shown: it depends on the data)")
        else:
            if k is None and size is None and (isinstance(out, (bool, np.bool_))
                                               or not isinstance(out, (numbers.Integral, np.integer))):
                raise TypeError(f"{who} must return {want}; it returned something else (not shown: it depends "
                                "on the data)")
            try:
                arr = np.asarray(out)
            except Exception:                             # a ragged or exotic object
                raise TypeError(f"{who} must return {want}; it returned something else (not shown: it depends "
                                "on the data)") from None
            if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
                raise TypeError(f"{who} must return {want}; it returned a non-integer value (not shown: it "
                                "depends on the data)")
            pos = arr
        shape = (() if size is None else (size,)) + (() if k is None else (k,))
        if pos.shape != shape:
            raise ValueError(f"{who} must return {want}; it returned another shape (not shown: it depends on the "
                             "data)")
        n = np.shape(utilities)[0] if labels is None and np.ndim(utilities) >= 1 else None
        if labels is None and ((pos < 0).any() or (n is not None and (pos >= n).any())):
            raise ValueError(f"{who} returned an index outside the candidates' positions 0 .. n-1 (the index is "
                             "not shown: it depends on the data)")
        if k is not None and k > 1:
            rows = np.sort(pos.reshape(-1, k), axis=1)
            if (rows[:, 1:] == rows[:, :-1]).any():
                raise ValueError(f"{who} returned a candidate twice among its k={k} picks (k picks are distinct)")
        if labels is not None:
            return arr.item() if arr.ndim == 0 else arr
        return int(pos) if pos.ndim == 0 else pos.astype(np.int64, copy=False)

    def probabilities(self, utilities: ArrayLike, *, epsilon: float, sensitivity: float | SensitivityFunction,
                      **options: Any) -> npt.NDArray[np.float64]:
        """The exact law of one pick (k = 1).

        Parameters
        ----------
        utilities : array_like
            One finite utility per candidate.
        epsilon : float
            The budget of the pick (> 0).
        sensitivity : float or SensitivityFunction
            As for :meth:`select`.
        **options
            ``base_measure`` and :attr:`options` apply; ``exact`` is accepted and ignored (the law is the
            same); ``k``, ``rng``, ``size`` are a ``TypeError``.

        Returns
        -------
        numpy.ndarray
            float64 probabilities of shape (n,), summing to 1 (a pandas Series for a Series input).

        Examples
        --------
        >>> get_mechanism("EM").probabilities([0.0, 2 * np.log(3.0)], epsilon=1.0, sensitivity=1.0).tolist()
        [0.25, 0.75]
        """
        self._check_options(options, probabilities=True)
        options.pop("exact", None)
        return self.probability_fn(utilities, epsilon=epsilon, **{self.sensitivity_keyword: sensitivity}, **options)

    def prepare(self, utilities: ArrayLike, sensitivity_function: SensitivityFunction, *,
                max_steps: int = DEFAULT_MAX_STEPS) -> tuple[np.ndarray, Any]:
        """The cacheable scores of a local mechanism (``(D, D_err)`` or ``(G, G_err)``), for
        :meth:`select_prepared`; ``TypeError`` for a mechanism without them (:attr:`cacheable`).

        The scores are computed from the data and are not private: they only feed :meth:`select_prepared`,
        whose pick carries the mechanism's guarantee.

        Parameters
        ----------
        utilities : array_like
            One finite utility per candidate (1-D), read as float64.
        sensitivity_function : SensitivityFunction
            The local sensitivity δ(x, t, r), admissible for u under the data's neighbour model.
        max_steps : int, optional
            The most steps t of the sensitivity function walked to compute the scores.

        Returns
        -------
        tuple of numpy.ndarray
            ``(D, D_err)``: the dampened utilities and a bound on their float error (local dampening), or
            ``(G, G_err)``: the shift totals and their error bound (shifted local dampening).

        Examples
        --------
        >>> import dpselect
        >>> D, D_err = get_mechanism("LD").prepare(np.array([1.0, 9.0, 2.0]), dpselect.constant(3, 1.0))
        >>> D.tolist()                     # global sensitivity 1: D is u itself
        [1.0, 9.0, 2.0]
        """
        if self.prepare_fn is None:
            raise TypeError(f"mechanism {self.name!r} has no cacheable scores (cacheable is False)")
        return self.prepare_fn(np.asarray(utilities, dtype=np.float64), sensitivity_function, max_steps=max_steps)

    def select_prepared(self, utilities: np.ndarray, sensitivity_function: SensitivityFunction,
                        cache: tuple[np.ndarray, Any], *, epsilon: float, k: int = 1, rng: RngLike = None,
                        **options: Any) -> Selection:
        """:meth:`select` on scores from :meth:`prepare` (or the same pair computed another way): the same law
        and random bits, without recomputing them.

        Internal-grade entry for applications that cache the scores (``utilities`` a checked float64 array,
        ``sensitivity_function`` checked); it charges no accountant (the application charges its release).
        Privacy: that of :meth:`select` with the same ``epsilon`` and ``k`` (ε/k per pick), valid when
        ``cache`` is :meth:`prepare` of these ``utilities`` and ``sensitivity_function``.

        Parameters
        ----------
        utilities : numpy.ndarray
            The checked float64 utilities, one per candidate.
        sensitivity_function : SensitivityFunction
            The checked sensitivity function the cache was computed with.
        cache : tuple
            :meth:`prepare` of ``utilities`` and ``sensitivity_function``.
        epsilon : float
            The privacy budget of the call (> 0), ε/k per pick.
        k : int, optional
            Number of distinct picks (default 1).
        rng : RngLike, optional
            A ``numpy.random.Generator``, a seed, a ``SeedSequence`` or ``BitGenerator``; None draws OS entropy.
        **options
            Checked as for :meth:`select`; ``direction``, ``max_steps``, ``size`` and ``base_measure`` are
            passed on to the sampler.

        Returns
        -------
        int or numpy.ndarray
            An ``int`` for k = 1, else an int64 array of shape (k,) (``size=N``: (N,) or (N, k)).

        Examples
        --------
        >>> import dpselect
        >>> ld, u = get_mechanism("LD"), np.array([1.0, 9.0, 2.0])
        >>> sf = dpselect.constant(3, 1.0)
        >>> ld.select_prepared(u, sf, ld.prepare(u, sf), epsilon=50.0, k=2, rng=0).shape
        (2,)
        """
        if self.select_prepared_fn is None:
            raise TypeError(f"mechanism {self.name!r} has no cacheable scores (cacheable is False)")
        self._check_options(options, probabilities=False)
        ignored = sorted(key for key in options if key in ("accountant", "delta", "exact"))
        if ignored:   # accepted by select, but this cached path would silently drop them
            raise TypeError(f"select_prepared does not take {', '.join(ignored)}: it charges no accountant (the "
                            f"application charges its whole release), spends epsilon/k per pick and samples "
                            f"exactly; use select for those options")
        extra = {key: v for key, v in options.items() if key in ("direction", "max_steps", "size")}
        if "base_measure" in options:
            extra["weights"] = options["base_measure"]
        return cast(Selection, self.select_prepared_fn(utilities, sensitivity_function, cache[0], cache[1], epsilon, k,
                                                       rng, **extra))

    # -- privacy -------------------------------------------------------------------------------------
    def privacy(self, epsilon: float, *, k: int | None = None, delta: float = 0.0, **options: Any) -> Guarantee:
        """The guarantee of one call with budget ``epsilon`` (and these options), as a value.

        Valid under :attr:`neighbour_model`.

        Parameters
        ----------
        epsilon : float
            The budget of the call (> 0).
        k : int, optional
            Number of picks. Omitted or 1: one pick. ``k > 1``: k picks on the remaining candidates, ε0 each.
        delta : float, optional
            Top-k under (ε, δ) (``k > 1`` only; ValueError for one pick): 0 (default) gives ε0 = ε/k; δ > 0
            gives ε0 = :func:`~dpselect.accounting.per_pick_epsilon` (the largest ε0 whose k-fold adaptive
            composition is (ε, δ)-DP), the ε0 the selectors then use.
        **options
            The selector's options. Those that decide the guarantee (``noise=`` of report-noisy-max;
            ``exact=False``, float sampling, which is not ε-DP: :class:`~dpselect.accounting.NonPrivate`) are
            read; the others (``rng``, ``base_measure``, ``monotonic``, ``accountant``, ...) are accepted and
            ignored; unknown ones are a ``TypeError``.

        Returns
        -------
        Guarantee
            ``NonPrivate()`` with ``exact=False``. One pick: ``PureDP(ε)`` or ``BoundedRange(ε)`` (see the
            module docstring). ``k`` picks: the
            adaptive composition value of the k picks, ``PureDPComposition(ε0, k)`` or
            ``AdaptiveBoundedRangeComposition(ε0, k)`` (ε at δ = 0 when ``delta=0``; ``.epsilon(delta) <= ε``
            otherwise).

        Examples
        --------
        >>> get_mechanism("EM").privacy(1.0, k=2)
        AdaptiveBoundedRangeComposition(epsilon0=0.5, k=2, resolution=...)
        >>> g = get_mechanism("PF").privacy(1.0, k=10, delta=1e-6)
        >>> type(g).__name__, g.epsilon0 > 0.1
        ('PureDPComposition', True)
        >>> get_mechanism("EM").privacy(1.0, exact=False)
        NonPrivate()
        """
        eps = check_positive(epsilon, "epsilon")
        self._check_options(options, probabilities=False)
        cls = self._guarantee_class(options.get("noise"))
        kk = None if k is None else check_int(k, "k", minimum=1)
        d = check_topk_delta(delta, kk)
        if not check_bool(options.get("exact", True), "exact"):
            return NonPrivate()
        if kk is None or kk == 1:
            return cls(eps)
        e0 = _per_pick(eps, kk) if d == 0.0 else topk_budget(eps, kk, d, bounded_range=cls is BoundedRange)[0]
        return AdaptiveBoundedRangeComposition(e0, kk) if cls is BoundedRange else PureDPComposition(e0, kk)

    def bounded_range(self, **options: Any) -> bool:
        """Whether one pick is ε-bounded-range (else pure ε-DP only) with these options.

        Parameters
        ----------
        **options
            The selector's options, checked as for :meth:`privacy`; ``noise=`` (report-noisy-max) decides
            the answer, the others are accepted and ignored.

        Returns
        -------
        bool
            True for ε-bounded-range (exponential mechanism, Gumbel report-noisy-max, local dampening,
            shifted local dampening), False for pure ε-DP only (permute-and-flip, Laplace and exponential
            report-noisy-max).

        Examples
        --------
        >>> get_mechanism("EM").bounded_range(), get_mechanism("PF").bounded_range()
        (True, False)
        >>> get_mechanism("RNM").bounded_range(), get_mechanism("RNM").bounded_range(noise="gumbel")
        (False, True)
        """
        self._check_options(options, probabilities=False)
        return self._guarantee_class(options.get("noise")) is BoundedRange

    def _guarantee_class(self, noise: Any) -> "type[PureDP] | type[BoundedRange]":
        g = self.guarantee
        if not isinstance(g, Mapping):
            return g  # type: ignore[return-value]
        return g[self.noises[0] if noise is None else check_choice(noise, "noise", self.noises)]

    def _check_options(self, options: Mapping[str, Any], *, probabilities: bool) -> None:
        for key in options:
            if key in _NOT_OPTIONS:
                raise TypeError(f"{key!r} is not an option of mechanism {self.name!r}: pass utilities, epsilon= "
                                "and sensitivity= as the arguments of select/probabilities")
            if probabilities and key in ("k", "rng", "size"):
                raise TypeError(f"probabilities gives the law of one pick: {key}= is not an option there")
            if not self.accepts(key):
                allowed = ", ".join(COMMON_OPTIONS + self.options)
                raise TypeError(f"mechanism {self.name!r} takes the options {allowed}, got unexpected option {key!r}")


# ---------------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------------
#: canonical name -> Mechanism, in registration order (the one store: vocabulary's views read it).
_REGISTRY: dict[str, Mechanism] = _voc._MECHANISM_TABLE
_ALIASES: dict[str, str] = _voc._ALIAS_TABLE
#: Read-only mapping canonical name -> :class:`Mechanism` of every registered mechanism (``dpselect.MECHANISMS``;
#: the same object as :data:`dpselect.vocabulary.MECHANISMS`). Iterating gives the names, ``in`` tests a name.
MECHANISMS: Mapping[str, Mechanism] = _voc.MECHANISMS


def register(spec: Mechanism, *, replace: bool = False) -> Mechanism:
    """Add ``spec`` to the registry (``dpselect.MECHANISMS``).

    From then on :func:`get_mechanism`, :func:`names` and every function taking ``mechanism=`` (through
    :func:`dpselect.vocabulary.check_mechanism`) know it. A selector without ``accountant=`` in its signature
    is charged by :meth:`Mechanism.select` once it has drawn (after a check that the budget affords it).

    Parameters
    ----------
    spec : Mechanism
        The mechanism. Its name and aliases must be new (``ValueError`` otherwise) ...
    replace : bool
        ... unless ``replace=True``, which replaces a spec of the same name.

    Returns
    -------
    Mechanism
        ``spec``.

    Examples
    --------
    >>> from dpselect.accounting import BoundedRange
    >>> toy = Mechanism("first_candidate", "global", lambda u, **kw: 0, lambda u, **kw: np.eye(len(u))[0],
    ...                 guarantee=BoundedRange)       # 0-DP (it ignores the data), so ε-BR for every ε
    >>> register(toy) is toy, get_mechanism("first_candidate") is toy
    (True, True)
    >>> unregister("first_candidate") is toy, "first_candidate" in MECHANISMS
    (True, False)
    """
    if not isinstance(spec, Mechanism):
        raise TypeError(f"spec must be a dpselect.registry.Mechanism, got {short_repr(spec)}")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"a mechanism named {spec.name!r} is already registered (pass replace=True to replace it)")
    for key in (spec.name,) + spec.aliases:
        owner = _ALIASES.get(key, key if key in _REGISTRY else None)
        if owner is not None and owner != spec.name:
            raise ValueError(f"{key!r} already names the mechanism {owner!r}")
    if spec.name in _REGISTRY:
        unregister(spec.name)
    _REGISTRY[spec.name] = spec
    for a in spec.aliases:
        _ALIASES[a] = spec.name
    return spec


def unregister(name: str) -> Mechanism:
    """Remove the mechanism ``name`` (canonical or alias) and its aliases (see :func:`register`).

    Parameters
    ----------
    name : str
        Canonical name or alias.

    Returns
    -------
    Mechanism
        The removed spec.

    Examples
    --------
    >>> from dpselect.accounting import PureDP
    >>> toy = register(Mechanism("toy_first", "global", lambda u, **kw: 0, lambda u, **kw: np.eye(len(u))[0],
    ...                          aliases=("tf",), guarantee=PureDP))
    >>> unregister("TF") is toy, "toy_first" in MECHANISMS
    (True, False)
    """
    spec = get_mechanism(name)
    del _REGISTRY[spec.name]
    for a in spec.aliases:
        _ALIASES.pop(a, None)
    return spec


def get_mechanism(name_or_alias: "str | Mechanism", *, allowed: Any = None, name: str = "mechanism") -> Mechanism:
    """The registered :class:`Mechanism` of a canonical name or an alias (any case); a spec is returned as is.

    Parameters
    ----------
    name_or_alias : str or Mechanism
        ``"exponential"``, ``"EM"``, ... or a spec.
    allowed : iterable of str, optional
        The canonical names accepted here (an application's subset); anything else is a ``ValueError``
        naming ``name``, the value and the accepted names.
    name : str
        The caller's parameter name, for messages.

    Returns
    -------
    Mechanism
        The spec.

    Examples
    --------
    >>> get_mechanism("sld").name
    'shifted_local_dampening'
    """
    if isinstance(name_or_alias, Mechanism):
        spec = name_or_alias
        if allowed is not None and spec.name not in tuple(allowed):
            _voc.check_mechanism(spec.name, name, allowed)   # raises with the message of the names
        return spec
    return _REGISTRY[_voc.check_mechanism(name_or_alias, name, allowed)]


def names(kind: str | None = None, *, where: Callable[[Mechanism], bool] | None = None, **capabilities: Any
          ) -> tuple[str, ...]:
    """Canonical names of the registered mechanisms with these capabilities, in registration order.

    Parameters
    ----------
    kind : {"global", "local"}, optional
        Only mechanisms of this kind.
    where : callable, optional
        Any predicate on the spec.
    **capabilities
        Fields or properties compared for equality (``noise="gumbel"``, ``score="dampened"``,
        ``cacheable=True``).

    Returns
    -------
    tuple of str
        The matching canonical names.

    Examples
    --------
    >>> names(noise="gumbel")
    ('exponential', 'local_dampening', 'shifted_local_dampening')
    """
    if kind is not None:
        capabilities["kind"] = check_choice(kind, "kind", KINDS)
    out = []
    for spec in _REGISTRY.values():
        try:
            ok = all(getattr(spec, key) == value for key, value in capabilities.items())
        except AttributeError as exc:
            raise TypeError(f"names() got an unknown capability: {exc}") from None
        if ok and (where is None or where(spec)):
            out.append(spec.name)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# the contract audit of a spec (users audit their own mechanism)
# ---------------------------------------------------------------------------------------------
class ContractError(AssertionError):
    """A spec failed :func:`check`: its law breaks its declared guarantee, or its selector does not draw its law.

    Parameters
    ----------
    message : str
        What failed (the report's failures, one line each).
    report : CheckReport
        The whole outcome, kept as ``report``.

    Examples
    --------
    >>> from dpselect.accounting import BoundedRange
    >>> argmax = Mechanism("argmax_as_br", "global", lambda u, **kw: int(np.argmax(u)),
    ...                    get_mechanism("EM").probability_fn, guarantee=BoundedRange)
    >>> try:
    ...     check(argmax)
    ... except ContractError as err:
    ...     print(err.report.passed)
    False
    """

    def __init__(self, message: str, report: "CheckReport") -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check`: one entry per option setting audited.

    Attributes
    ----------
    name : str
        The spec's name.
    variants : tuple
        Per option setting (each noise, direction, ``monotonic``): its options, the claim ``spec.privacy(ε)``,
        the exact audit's ``worst_log_ratio`` / ``worst_range`` and verdict, whether the law is a probability
        vector, the χ² p-value of the selector's draws against it, and any error the selector raised.
    alpha : float
        The χ² level: a p-value at or below it fails.
    failures : tuple of str
        What failed, one line each (empty when passed).

    Examples
    --------
    >>> rep = check("PF")
    >>> rep.name, rep.passed, rep.failures
    ('permute_and_flip', True, ())
    """

    name: str
    variants: tuple
    alpha: float
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when every variant passed the exact audit and the χ² test."""
        return not self.failures

    def __str__(self) -> str:
        head = f"check({self.name!r}): " + ("passed" if self.passed else "FAILED")
        rows = [f"  {v.options or '{}'}: claim {v.claim!r}, worst log-ratio {v.worst_log_ratio:.4g}, range "
                f"{v.worst_range:.4g}, chi2 p = {v.chi2_pvalue:.3g}" for v in self.variants]
        return "\n".join([head, *rows, *("  " + f for f in self.failures)])


def check(spec: "Mechanism | str", *, epsilon: float = 1.0, draws: int = 3000, alpha: float = 1e-6,
          seed: int = 0, raise_on_failure: bool = True) -> CheckReport:
    """Run the registry's contract audit (``tests/test_contract.py``'s) on a mechanism's spec.

    For every option setting the spec offers (each noise, each direction, ``monotonic=True``):

    1. its ``probability_fn`` is audited exactly against its declared guarantee ``spec.privacy(epsilon)``
       (:func:`dpselect.audit.exact_dp_audit`: the worst |log-ratio| for ``PureDP``, and the range of the
       log-ratio for ``BoundedRange``) on small made-up neighbouring inputs of 3 candidates: global
       mechanisms on utility vectors each moving by at most Δ = 1 (one way with ``monotonic``), local ones on
       capped counts min(c_r, 2) over every dataset of at most 4 records (add/remove one record) with their
       admissible sensitivity function;
    2. its selector draws ``draws`` seeded picks (``size=draws``) compared with that law by a χ² test.

    Passing is evidence on these inputs, not a proof: the guarantee must also follow from the mechanism's
    privacy argument. Failing is a counterexample. No private data is involved (the inputs are made up here).

    Parameters
    ----------
    spec : Mechanism or str
        A spec (registered or not) or a registered name.
    epsilon : float
        The ε audited (> 0).
    draws : int
        Draws for the χ² test (>= 100).
    alpha : float
        The χ² test's level (in (0, 1)): a p-value at or below it fails.
    seed : int
        Seeds the draws (the audit is exact and needs none).
    raise_on_failure : bool
        Raise :class:`ContractError` on a failure (default) or return the report.

    Returns
    -------
    CheckReport
        Per option setting: the claim, the exact audit's worst log-ratio and range, the χ² p-value.

    Raises
    ------
    ContractError
        With ``raise_on_failure=True`` when the law breaks the claim or the draws do not follow the law.

    Examples
    --------
    >>> check("EM").passed
    True
    >>> from dpselect.accounting import BoundedRange
    >>> def pf(u, **kw):                      # permute-and-flip, but declared ε-bounded-range below
    ...     return get_mechanism("PF").select(u, **kw)
    >>> bad = Mechanism("pf_as_br", "global", pf, get_mechanism("PF").probability_fn, guarantee=BoundedRange)
    >>> rep = check(bad, raise_on_failure=False)
    >>> rep.passed, round(rep.variants[0].worst_range, 4)
    (False, 1.5394)
    """
    from . import _contract
    s = get_mechanism(spec) if isinstance(spec, str) else spec
    if not isinstance(s, Mechanism):
        raise TypeError(f"spec must be a dpselect.registry.Mechanism or a registered name, got {short_repr(spec)}")
    eps = check_positive(epsilon, "epsilon")
    n = check_int(draws, "draws", minimum=100)
    a = float(check_positive(alpha, "alpha"))
    if not a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    sd = check_int(seed, "seed", minimum=0)
    if not isinstance(raise_on_failure, bool):
        raise TypeError(f"raise_on_failure must be a bool, got {short_repr(raise_on_failure)}")
    results = _contract.audit_spec(s, epsilon=eps, draws=n, seed=sd)
    failures = []
    for v in results:
        where = f"options {v.options}" if v.options else "default options"
        if not v.audit_passed:
            failures.append(f"{where}: the law breaks the declared {v.claim!r} on neighbouring inputs (worst "
                            f"log-ratio {v.worst_log_ratio:.4g}, range {v.worst_range:.4g}, claimed ε = {eps:g})")
        if not v.law_ok:
            failures.append(f"{where}: probability_fn did not return 3 probabilities summing to 1")
        elif v.error:
            failures.append(f"{where}: {v.error}")
        elif v.chi2_pvalue <= a:
            failures.append(f"{where}: the selector's {n} draws do not follow probability_fn (chi2 p = "
                            f"{v.chi2_pvalue:.3g} <= alpha = {a:g})")
    report = CheckReport(s.name, tuple(results), a, tuple(failures))
    if failures and raise_on_failure:
        raise ContractError(str(report), report)
    return report


# ---------------------------------------------------------------------------------------------
# the built-in mechanisms (one entry each)
# ---------------------------------------------------------------------------------------------
def _late(attr: str) -> Callable[..., Any]:
    """``dpselect.mechanisms.<attr>``, looked up at each call (so that a patched module attribute, e.g. a test's
    spy, is what the registry calls); ``inspect.signature`` sees the function's own signature.

    The built-in selectors are the mechanisms' checked entry points (``_<name>_entry``: the public function
    calls it; it checks every argument once, charges ``accountant=`` and calls the
    implementation on plain values), so :meth:`Mechanism.select` validates once, as the public function does."""
    target = getattr(_m, attr)

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_m, attr)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attr
    call.__doc__ = target.__doc__
    call.__wrapped__ = target  # type: ignore[attr-defined]
    call._dpselect_builtin = True  # type: ignore[attr-defined]   # a checked entry point: Mechanism.select trusts it
    return call


def _prepare_dampened(u: np.ndarray, sf: SensitivityFunction, *, max_steps: int = DEFAULT_MAX_STEPS
                      ) -> tuple[np.ndarray, Any]:
    return dampen_with_error(u, sf, max_steps=max_steps)


def _prepare_shifted(u: np.ndarray, sf: SensitivityFunction, *, max_steps: int = DEFAULT_MAX_STEPS
                     ) -> tuple[np.ndarray, Any]:
    return shift_totals_with_error(sf, u.shape[0], max_steps=max_steps)


register(Mechanism(
    "exponential", "global", _late("_exponential_entry"), _late("exponential_probabilities"), aliases=("em",), noises=("gumbel",),
    guarantee=BoundedRange, options=("monotonic",), neighbour_model=_GLOBAL_MODEL,
    description="exponential mechanism (McSherry & Talwar): P(r) ∝ exp(ε·u(r)/(2Δu))"))
register(Mechanism(
    "permute_and_flip", "global", _late("_permute_and_flip_entry"), _late("permute_and_flip_probabilities"), aliases=("pf",),
    noises=("exponential",), guarantee=PureDP, options=("monotonic",), neighbour_model=_GLOBAL_MODEL,
    description="permute-and-flip (McKenna & Sheldon) = report-noisy-max with exponential noise"))
register(Mechanism(
    "report_noisy_max", "global", _late("_report_noisy_max_entry"), _late("report_noisy_max_probabilities"), aliases=("rnm",),
    noises=("laplace", "gumbel", "exponential"), guarantee=_GUARANTEE_BY_NOISE, options=("noise", "monotonic"), neighbour_model=_GLOBAL_MODEL,
    description="report-noisy-max with Laplace (default), Gumbel or exponential noise of scale 2Δu/ε"))
register(Mechanism(
    "local_dampening", "local", _late("_local_dampening_entry"), _late("local_dampening_probabilities"), aliases=("ld",),
    noises=("gumbel",), guarantee=BoundedRange, score="dampened", options=("max_steps",), neighbour_model=_LOCAL_MODEL,
    description="local dampening (thesis Def. 3.4.1): P(r) ∝ exp(ε·D(x, r)/2)",
    prepare_fn=_prepare_dampened, select_prepared_fn=_late("dampened_select")))
register(Mechanism(
    "shifted_local_dampening", "local", _late("_shifted_local_dampening_entry"), _late("shifted_local_dampening_probabilities"),
    aliases=("sld",), noises=("gumbel",), guarantee=BoundedRange, score="shifted", options=("direction", "max_steps"),
    neighbour_model=_LOCAL_MODEL + "; δ must also be bounded (saturation_distance)",
    description="shifted local dampening (thesis Ch. 4), closed form: P(r) ∝ exp(ε·(u(r) ∓ G_r)/(2Δ))",
    prepare_fn=_prepare_shifted, select_prepared_fn=_late("shifted_select")))

#: The names of the built-in mechanisms (what :data:`dpselect.typing.MechanismName` spells).
BUILTIN = tuple(_REGISTRY)
