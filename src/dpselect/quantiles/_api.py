"""The public quantile functions: checks, the method rule, the charge, then the draw."""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from .._boundary import charge, check_accountant
from .._exact_random import discrete_laplace
from .._rng import check_rng
from .._validation import check_positive
from ..accounting.accountant import Accountant
from ..accounting.guarantees import BoundedRange, Guarantee, PureDP
from ..accounting.neighbours import ADD_REMOVE, REPLACE_ONE
from ..typing import RngLike
from ._data import MAX_RECORDS, check_counts, check_share, check_values
from ._grid import DEFAULT_UTILITY, UTILITIES
from . import _joint, _unbounded
from ._independent import independent_grid_quantiles, independent_privacy, independent_quantiles
from ._recursive import TARGETS, recursive_grid_quantiles, recursive_privacy, recursive_quantiles, resolve_targets

__all__ = ["quantiles", "quantile", "quantiles_privacy", "METHODS", "NEIGHBOURS", "TARGETS", "AUTO_INDEPENDENT_FROM",
           "AUTO_ADD_REMOVE_INDEPENDENT_FROM", "AUTO_RELATIVE_BELOW", "AUTO_UTILITY", "INTEGER_GRID_MAX",
           "AUTO_COUNT_SHARE"]

Method = Literal["auto", "joint", "recursive", "independent"]
#: The accepted values of ``method=``.
METHODS = ("auto", "joint", "recursive", "independent")
#: ``method="auto"`` with m >= 2 distinct quantiles picks ``"independent"`` when ε·n/m is at least this, else
#: ``"recursive"`` (n = the number of records, public under replace-one; measured on the seven DPBench-1D
#: histograms, m in {3, 9, 99}, ε in {0.01, 0.1, 1}: see docs/quantiles.md).
AUTO_INDEPENDENT_FROM = 5000.0
#: Under ``neighbours="add_remove"`` (n private) ``method="auto"`` with m >= 2 picks ``"independent"`` when ε/m is
#: at least this, else ``"recursive"`` (measured on the seven DPBench-1D histograms, m in {3, 9, 99}, ε in
#: {0.01, 0.1, 1}, 20 runs (5 for m = 99): it picks the method of the smaller mean excess rank error in all
#: nine (m, ε) cells; see docs/quantiles.md).
AUTO_ADD_REMOVE_INDEPENDENT_FROM = 0.02
#: Under add/remove (n private), ``method="auto"`` with m >= 2 and ε/m below
#: :data:`AUTO_ADD_REMOVE_INDEPENDENT_FROM` first spends this share of ε on a noisy count n̂ = n + Z (Z discrete
#: Laplace), then runs ``"independent"`` when ε'·n̂/m >= :data:`AUTO_INDEPENDENT_FROM` (ε' the rest of ε), else
#: ``"recursive"`` (relative targets), at ε': the replace-one rule with n̂ for the private n.
AUTO_COUNT_SHARE = 0.01
#: Under replace-one, when ``method="auto"`` runs the recursive method and ``targets`` is not given, it takes
#: ``targets="relative"`` when ε/m is below this and ``targets="hybrid"`` otherwise (a public rule of m and ε,
#: tuned on seeds disjoint from the reported results: docs/quantiles.md, "The default").
AUTO_RELATIVE_BELOW = 0.005
#: The grid utility of ``method="auto"`` (with ``candidates=``, and on the integer grid): "cell", whose optimum
#: is the rank-nearest candidate (:mod:`._grid`). A method named explicitly keeps the window utility.
AUTO_UTILITY = "cell"
#: ``method="auto"`` on integer values (an integer dtype) with integral bounds (lo, hi) releases values of the
#: integer grid lo, lo + 1, ..., hi when hi − lo is at most this (and |lo|, |hi| <= 2^52).
INTEGER_GRID_MAX = 2**20
Targets = Literal["anchored", "relative", "hybrid"]
#: The record relations a quantile release is proved under (a subset of :data:`dpselect.typing.Neighbours`).
RecordNeighbours = Literal["replace_one", "add_remove"]
#: The accepted values of ``neighbours=``: replace one record (n public; the default) or add/remove one (n private).
NEIGHBOURS = (REPLACE_ONE, ADD_REMOVE)
#: Most records a release may hold (:data:`._data.MAX_RECORDS`, 2^49).
_MAX_RECORDS = MAX_RECORDS
#: The largest float64: the bounds' width hi − lo (as an exact real) must not exceed it, so that every interval
#: length of the interval mechanism has a finite float upper bound.
_FLOAT_MAX = float(np.finfo(np.float64).max)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def float_vector(x: Any, type_message: str, shape_message: str, min_size: int = 1) -> np.ndarray:
    """``x`` as a 1-D float64 array of at least ``min_size`` entries: ``TypeError(type_message: why)`` when it
    does not convert, ``ValueError(shape_message, got shape ...)`` for another shape (the quantile checks and
    :func:`dpselect.dask.quantiles`' bins share it)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{type_message}: {exc}") from None
    if arr.ndim != 1 or arr.size < min_size:
        raise ValueError(f"{shape_message}, got shape {arr.shape}")
    return arr


def _check_qs(qs: ArrayLike, name: str = "qs") -> np.ndarray:
    arr = float_vector(qs, f"{name} must be a 1-D array of floats in [0, 1]",
                       f"{name} must be a non-empty 1-D array of quantiles in [0, 1]")
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must lie in [0, 1]: {name}[{i}] = {float(arr[i])!r}")
    return arr


def _check_method(method: object) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    return method


def _check_neighbours(neighbours: object) -> RecordNeighbours:
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise ValueError(f"neighbours must be one of {', '.join(map(repr, NEIGHBOURS))}, got {neighbours!r}")
    return cast(RecordNeighbours, neighbours)


_JOINT_ADD_REMOVE = ("method='joint' is not available with neighbours='add_remove': JointExp's utility has "
                     "sensitivity 3, not 2, when a record is added (the rounded targets round(2·q_i·n)/2 move "
                     "unevenly, e.g. qs = (0.3, 0.35), n = 4 -> 5; see docs/quantiles.md); use 'recursive' or "
                     "'independent'")
_UNBOUNDED_ADD_REMOVE = ("bounds=None (the unbounded method) is not available with neighbours='add_remove': its "
                         "AboveThreshold argument needs counts #{x <= b} − q·n that move monotonically, which holds "
                         "when a record is replaced (n public) but not when one is added or removed (n private); "
                         "pass bounds=(lo, hi) or candidates=")


def _refuse_add_remove(neighbours: str, *, unbounded: bool, method: str, grid: bool = False) -> None:
    """Under add/remove: ValueError for the unbounded method and for ``method="joint"`` (with bounds)."""
    if neighbours != "add_remove":
        return
    if unbounded:
        raise ValueError(_UNBOUNDED_ADD_REMOVE)
    if method == "joint" and not grid:
        raise ValueError(_JOINT_ADD_REMOVE)


def _check_bounds(bounds: Any) -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        pair: tuple[Any, ...] = tuple(bounds)
    except TypeError:
        raise TypeError(f"bounds must be a pair (lo, hi) of finite floats or None, got {bounds!r}") from None
    if len(pair) != 2:
        raise TypeError(f"bounds must be a pair (lo, hi) of finite floats or None, got {bounds!r}")
    for v, nm in zip(pair, ("lo", "hi")):
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, np.floating, np.integer)) or not math.isfinite(float(v)):
            raise ValueError(f"bounds must be finite numbers: {nm} = {v!r}")
    lo, hi = float(pair[0]), float(pair[1])
    if not lo < hi:
        raise ValueError(f"bounds must satisfy lo < hi, got bounds = ({lo!r}, {hi!r})")
    # exactly (as rationals): a width above the largest float overflows the interval lengths (an error that
    # would depend on where the records sit), so it is refused here, before any charge or draw
    if Fraction(hi) - Fraction(lo) > Fraction(_FLOAT_MAX):
        raise ValueError("bounds must have a width hi − lo of at most the largest float (about 1.8e308), got "
                         f"bounds = ({lo!r}, {hi!r}); shift or rescale the data (e.g. divide by 2)")
    return lo, hi


def _check_candidates(candidates: Any) -> np.ndarray | None:
    """The public grid: a finite, strictly increasing 1-D float64 array with at least one element."""
    if candidates is None:
        return None
    arr = float_vector(candidates, "candidates must be a 1-D array of finite floats, strictly increasing",
                       "candidates must be a non-empty 1-D array of finite floats")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"candidates must be finite: candidates[{i}] = {float(arr[i])!r}")
    if arr.size > 1 and not np.all(arr[1:] > arr[:-1]):
        i = int(np.flatnonzero(~(arr[1:] > arr[:-1]))[0])
        raise ValueError(f"candidates must be strictly increasing: candidates[{i}] = {float(arr[i])!r} >= "
                         f"candidates[{i + 1}] = {float(arr[i + 1])!r}")
    return np.ascontiguousarray(arr)


def _group(values: ArrayLike, counts: ArrayLike | None,
           bounds: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct sorted values with their int64 counts (checked by :mod:`._data`: finite, 1-D, counts >= 0, at
    most 2^49 records; 0 records allowed); values of count 0 (empty bins) are dropped. With ``bounds`` every
    value is first clipped into [lo, hi] (a fixed map of each record: neighbours stay neighbours)."""
    x = check_values(values)
    if bounds is not None:
        x = np.clip(x, bounds[0], bounds[1])
    if counts is None:
        if x.size > MAX_RECORDS:       # not reachable in memory today; the rule of the domain all the same
            raise ValueError(f"values must hold at most 2**49 = {MAX_RECORDS} records")
        x = np.sort(x, kind="stable")
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1)) if x.size else np.zeros(0, np.int64)
        c = np.diff(np.concatenate((starts, [x.size]))).astype(np.int64)
        return x[starts], c
    c = check_counts(counts, x.shape[0])
    keep = c > 0            # empty bins (a histogram's public grid) and the empty dataset: dropped here
    x, c = x[keep], c[keep]
    order = np.argsort(x, kind="stable")
    x, c = x[order], c[order]
    if x.size > 1 and np.any(x[1:] == x[:-1]):
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        c = np.add.reduceat(c, starts)
        x = x[starts]
    return x, c


def _resolve(method: str, m: int, n: int, epsilon: float, neighbours: str = "replace_one") -> str:
    """The method ``"auto"`` stands for: the median's law for m = 1; for m >= 2 ``"recursive"`` when
    ε·n/m < :data:`AUTO_INDEPENDENT_FROM`, else ``"independent"``. Reads only m, ε and n (public under
    replace-one), never the counts themselves; ``"joint"`` is never chosen (its optimum is biased on atoms).
    Under add/remove (n private) it reads m and ε only: ``"recursive"`` for m >= 2 when
    ε/m < :data:`AUTO_ADD_REMOVE_INDEPENDENT_FROM`, else ``"independent"`` (docs/quantiles.md)."""
    if method != "auto":
        return method
    if m == 1:
        return "independent"
    if neighbours == "add_remove":
        return "recursive" if epsilon / m < AUTO_ADD_REMOVE_INDEPENDENT_FROM else "independent"
    if epsilon * n / m < AUTO_INDEPENDENT_FROM:
        return "recursive"
    return "independent"


def _auto_targets(method: str, resolved: str, m: int, epsilon: float, neighbours: str,
                  targets: str | None) -> str:
    """The recursive method's targets: ``targets`` when given (checked); for ``method="auto"`` running the
    recursive method, ``"relative"`` under add/remove or when ε/m < :data:`AUTO_RELATIVE_BELOW`, else
    ``"hybrid"``; otherwise the default of :func:`._recursive.resolve_targets`. Reads m and ε only."""
    add_remove = neighbours == "add_remove"
    if targets is not None or method != "auto" or resolved != "recursive":
        return resolve_targets(targets, add_remove)
    return "relative" if add_remove or epsilon / m < AUTO_RELATIVE_BELOW else "hybrid"


def _counts_first(method: str, m: int, epsilon: float, neighbours: str) -> bool:
    """Whether ``method="auto"`` spends :data:`AUTO_COUNT_SHARE` of ε on a noisy count first (add/remove,
    m >= 2, ε/m < :data:`AUTO_ADD_REMOVE_INDEPENDENT_FROM`): public inputs only."""
    return (method == "auto" and neighbours == "add_remove" and m >= 2
            and epsilon / m < AUTO_ADD_REMOVE_INDEPENDENT_FROM)


def count_split(epsilon: float) -> tuple[float, float]:
    """(ε_n, ε'): the noisy count's share of ε (rounded down) and the rest, with ε_n + ε' <= ε exactly (as
    rationals)."""
    eps_n = float(Fraction(epsilon) * Fraction(AUTO_COUNT_SHARE))
    while Fraction(eps_n) > Fraction(epsilon) * Fraction(AUTO_COUNT_SHARE):
        eps_n = math.nextafter(eps_n, 0.0)
    rest = float(Fraction(epsilon) - Fraction(eps_n))
    while Fraction(eps_n) + Fraction(rest) > Fraction(epsilon):
        rest = math.nextafter(rest, 0.0)
    return eps_n, rest


def noisy_count_method(n_hat: int, m: int, epsilon_rest: float) -> str:
    """The method that ``method="auto"`` runs under add/remove after the noisy count n̂ (a post-processing of
    n̂): ``"independent"`` when ε'·n̂/m >= :data:`AUTO_INDEPENDENT_FROM`, else ``"recursive"``."""
    return "independent" if epsilon_rest * n_hat / m >= AUTO_INDEPENDENT_FROM else "recursive"


def _charge_and_resolve(acc: Accountant | None, meth: str, m: int, n: int, eps: float, nb: RecordNeighbours,
                        targets: str | None, gen: np.random.Generator) -> tuple[str, str, float]:
    """Charge the release and resolve ``"auto"``: (the method run, its targets, the ε it runs at). Under
    add/remove with :func:`_counts_first` the charge is ``PureDP(ε)`` and the noisy count is drawn (after the
    charge) to pick the method; otherwise the rule of :func:`_resolve`."""
    if _counts_first(meth, m, eps, nb):
        charge(acc, quantiles_privacy(m, epsilon=eps, method="auto", neighbours=nb), label="quantiles",
               neighbours=nb)
        eps_n, rest = count_split(eps)
        resolved = noisy_count_method(n + discrete_laplace(eps_n, gen), m, rest)
        return resolved, _auto_targets(meth, resolved, m, rest, nb, targets), rest
    resolved = _resolve(meth, m, n, eps, nb)
    tg = _auto_targets(meth, resolved, m, eps, nb, targets)
    if resolved == "joint":
        _joint.check_joint_work(eps, n, m)  # its work bounded before the charge
    charge(acc, quantiles_privacy(m, epsilon=eps, method=resolved, neighbours=nb, targets=cast(Targets, tg)),
           label="quantiles", neighbours=nb)
    return resolved, tg, eps


def _integer_grid(values: Any, bounds: tuple[float, float] | None) -> np.ndarray | None:
    """The integer grid lo, lo + 1, ..., hi (float64) when ``values`` carries an integer dtype (a numpy array or
    another typed container with a ``dtype``) and the bounds are integral with hi − lo <= :data:`INTEGER_GRID_MAX`
    and |lo|, |hi| <= 2^52; else None. Reads the container's declared dtype and the public bounds only: a
    Python list is never read as integer data, since the type numpy would infer for it depends on the values
    (one record of 3.5 among integers would change the mechanism)."""
    if bounds is None:
        return None
    dt = getattr(values, "dtype", None)
    if dt is None:
        return None
    try:
        kind = np.dtype(dt).kind
    except TypeError:                    # not a numpy dtype (e.g. a pandas extension type)
        return None
    lo, hi = bounds
    if kind not in "iu" or not (lo.is_integer() and hi.is_integer()):
        return None
    if hi - lo > INTEGER_GRID_MAX or max(abs(lo), abs(hi)) > 2.0**52:
        return None
    return np.arange(lo, hi + 1.0, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# the guarantee
# ---------------------------------------------------------------------------------------------
def quantiles_privacy(m: int, *, epsilon: float, method: str, neighbours: RecordNeighbours = "replace_one",
                      targets: Targets | None = None) -> Guarantee:
    """The guarantee :func:`quantiles` charges for m distinct quantiles at total ``epsilon``.

    Parameters
    ----------
    m : int
        The number of distinct quantiles (>= 1).
    epsilon : float
        The total budget, > 0.
    method : {"joint", "recursive", "independent", "unbounded", "auto"}
        The method actually run (``"auto"`` is resolved by :func:`quantiles` from m, ε and n first), or
        ``"auto"`` under add/remove: ``PureDP(ε)`` where its noisy count picks the method (m >= 2,
        ε/m < 0.02), that of ``"independent"`` otherwise.
    neighbours : {"replace_one", "add_remove"}
        The neighbour model the guarantee is stated in (see :func:`quantiles`). Under ``"add_remove"`` the
        recursive method spends ε/L per level and ``"joint"`` and ``"unbounded"`` are refused (ValueError).
    targets : {"anchored", "relative", "hybrid"} or None
        The recursive method's targets (see :func:`quantiles`); None: anchored under replace-one, relative
        under add/remove. Ignored by the other methods. ``"hybrid"``: as ``"relative"``.

    Returns
    -------
    Guarantee
        ``BoundedRange(ε)`` (joint, and any bounded method for m = 1: one exponential mechanism, what
        :func:`dpselect.median` charges), ``BoundedRangeComposition(ε/m, m)``
        (independent) or ``AdaptiveBoundedRangeComposition(ε/(2L − 1), 2L − 1)`` with
        L = ⌈log2(m + 1)⌉ (recursive; ``AdaptiveBoundedRangeComposition(ε/L, L)`` with
        ``targets="relative"``: one ε/L-bounded-range level per level). All are ε-DP under
        replace-one-record neighbours (n public).
        Under ``neighbours="add_remove"``: ``BoundedRangeComposition(ε/m, m)`` (independent) or
        ``AdaptiveBoundedRangeComposition(ε/L, L)`` (recursive), ε-DP under add/remove-one neighbours.

    Examples
    --------
    >>> quantiles_privacy(3, epsilon=1.0, method="recursive").epsilon(0.0)
    1.0
    >>> quantiles_privacy(4, epsilon=1.0, method="independent")
    BoundedRangeComposition(epsilon0=0.25, k=4)
    >>> quantiles_privacy(9, epsilon=1.0, method="recursive", neighbours="add_remove")
    AdaptiveBoundedRangeComposition(epsilon0=0.25, k=4, resolution=400)
    >>> quantiles_privacy(9, epsilon=1.0, method="recursive", targets="relative")
    AdaptiveBoundedRangeComposition(epsilon0=0.25, k=4, resolution=400)
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be an int >= 1, got {m!r}")
    eps = check_positive(epsilon, "epsilon")
    nb = _check_neighbours(neighbours)
    tg = resolve_targets(targets, nb == "add_remove")
    m = int(m)
    if nb == "add_remove":
        if method == "joint":
            raise ValueError(_JOINT_ADD_REMOVE)
        if method == "unbounded":
            raise ValueError(_UNBOUNDED_ADD_REMOVE)
    if method == "auto":
        if nb != "add_remove":
            raise ValueError("method='auto' has a guarantee of its own only under neighbours='add_remove' (a noisy "
                             "count picks the method there); under replace-one pass the method it resolves to")
        if _counts_first("auto", m, eps, nb):
            return PureDP(eps)      # the noisy count at ε_n, then the method at ε − ε_n: sequential composition
        method = "independent"      # m = 1, or ε/m >= AUTO_ADD_REMOVE_INDEPENDENT_FROM: no count
    if method == "joint" or (m == 1 and method in ("independent", "recursive")):
        return BoundedRange(eps)   # one interval exponential mechanism: the charge of median(), one value
    if method == "independent":
        return independent_privacy(eps, m)
    if method == "recursive":
        return recursive_privacy(eps, m, add_remove=nb == "add_remove", targets=tg)
    if method == "unbounded":
        return _unbounded.unbounded_privacy(eps, m)
    raise ValueError(f"method must be 'joint', 'recursive', 'independent' or 'unbounded', got {method!r}")


# ---------------------------------------------------------------------------------------------
# the bounded machinery (also for the unbounded method, inside its private bounds)
# ---------------------------------------------------------------------------------------------
def bounded_quantiles(values: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float, hi: float,
                      method: str, counts: np.ndarray | None, rng: np.random.Generator,
                      neighbours: str = "replace_one", targets: str | None = None) -> np.ndarray:
    """The bounded release, without checks or charge: one float per entry of ``qs``, in its order.

    For :mod:`dpselect.quantiles._unbounded` (Q_API.md): ``values`` inside [lo, hi] (distinct and sorted when
    ``counts`` is given, any order otherwise), ``qs`` in [0, 1], ``method`` one of :data:`METHODS` (auto is
    resolved from m, ε and n, as in :func:`quantiles`). Repeated qs share one release. The guarantee is :func:`quantiles_privacy` of the
    resolved method and the number of distinct qs.
    """
    vals = np.asarray(values, dtype=np.float64)
    if counts is None:
        vals, cnt = _group(vals, None)
    else:
        cnt = np.asarray(counts, dtype=np.int64)
    q = np.asarray(qs, dtype=np.float64)
    uq, inverse = np.unique(q, return_inverse=True)
    add_remove = neighbours == "add_remove"
    meth = _resolve(method, int(uq.size), int(cnt.sum()), float(epsilon), neighbours)
    targets = _auto_targets(method, meth, int(uq.size), float(epsilon), neighbours, targets)
    if meth == "independent":
        out = independent_quantiles(vals, cnt, uq, epsilon=epsilon, lo=lo, hi=hi, gen=rng)
    elif meth == "recursive":
        out = recursive_quantiles(vals, cnt, uq, epsilon=epsilon, lo=lo, hi=hi, gen=rng, add_remove=add_remove,
                                  targets=targets)
    elif add_remove:
        raise ValueError(_JOINT_ADD_REMOVE)
    else:
        out = _joint.joint_quantiles(vals, cnt, uq, epsilon=epsilon, lo=lo, hi=hi, gen=rng)
    return out[inverse.reshape(-1)]


def grid_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, candidates: np.ndarray,
                   method: str, rng: np.random.Generator, neighbours: str = "replace_one",
                   targets: str | None = None, utility: str = DEFAULT_UTILITY) -> np.ndarray:
    """The release on a public grid, without checks or charge: one candidate per entry of ``qs``.

    ``vals``/``cnt`` grouped (distinct sorted values, int64 counts), ``qs`` distinct and sorted, ``candidates``
    checked (:func:`_check_candidates`), ``method`` "independent" or "recursive" (auto resolved by the caller),
    ``utility`` one of :data:`._grid.UTILITIES` (both have sensitivity 1). The guarantee is
    :func:`quantiles_privacy` of the method and len(qs), as with bounds.
    """
    if utility not in UTILITIES:
        raise ValueError(f"utility must be one of {', '.join(map(repr, UTILITIES))}, got {utility!r}")
    if method == "independent":
        return independent_grid_quantiles(vals, cnt, qs, epsilon=epsilon, cands=candidates, gen=rng,
                                          utility=utility)
    if method == "recursive":
        return recursive_grid_quantiles(vals, cnt, qs, epsilon=epsilon, cands=candidates, gen=rng,
                                        utility=utility, add_remove=neighbours == "add_remove",
                                        targets=targets)
    raise ValueError(f"method must be 'independent' or 'recursive' with candidates, got {method!r}")


# ---------------------------------------------------------------------------------------------
# public
# ---------------------------------------------------------------------------------------------
def quantiles(
    values: ArrayLike,
    qs: ArrayLike,
    *,
    epsilon: float,
    bounds: tuple[float, float] | None = None,
    method: Method = "auto",
    counts: ArrayLike | None = None,
    candidates: ArrayLike | None = None,
    rng: RngLike = None,
    accountant: Accountant | None = None,
    neighbours: RecordNeighbours = "replace_one",
    targets: Targets | None = None,
) -> np.ndarray:
    """Release values close to the quantiles ``qs`` of ``values`` under ε-differential privacy.

    What it releases: one float per entry of ``qs``, in the order of ``qs`` (a repeated q gets the same
    value: the distinct qs are released once). No record's value is ever read off: with ``bounds`` every
    output is drawn uniformly inside an interval between consecutive order statistics (the bounds as outer
    ends), chosen by an exponential mechanism on rank distances; with ``candidates`` it is a value of the
    public grid. The target rank of q is q·n rounded to the nearest
    half-integer. ``qs`` may be anywhere in the closed [0, 1]. With ``bounds`` the methods are:

    * ``"independent"``: each distinct q by the median's interval mechanism at ε/m (m distinct qs):
      a value v with density ∝ exp(−(ε/m)·|#{x <= v} − q·n|/2) on [lo, hi]. For q = 0.5 and
      ``bounds=(0, L)`` this is exactly :func:`dpselect.median`'s law (and the same value for the same seed).
    * ``"recursive"``: Kaplan, Schnapp & Stemmer (ICML 2022): the middle quantile first, then each half of
      the data for the quantiles on its side, ε/(2L − 1) per release with L = ⌈log2(m + 1)⌉ levels (the
      replace-one budget: a replaced record can move between two subproblems of a level). A side that
      reaches a bound targets the absolute rank q·n (its records are the smallest, or largest, ones), so
      it does not inherit the rank error of a release that sits on an atom (``targets="anchored"``, the
      default under replace-one). ``targets="relative"``: every subproblem targets its own share
      λ·n_S (λ = where q sits between the quantiles released at its ends, on a 1/16 grid), whose
      sensitivity is μ = max(λ, 1 − λ) <= 1 (1/2 for a subproblem's median), and spends ε/(2L·μ)
      (ε/L at the root): one ε/L-bounded-range level per level, so about ε/L per release where the
      anchored targets get ε/(2L − 1); better where records are spread, worse on atoms, where it inherits
      the parent's rank error (measured in docs/quantiles.md). Releases are sorted by construction.
    * ``"joint"``: JointExp (Gillenwater, Joseph & Kulesza, ICML 2021): one exponential mechanism over
      sorted vectors o_1 <= ... <= o_m with utility −Σ_i |#{x in [o_(i−1), o_i)} − (q_i − q_(i−1))·n|
      (sensitivity 2), density ∝ exp(ε·u/4), sampled exactly (see :mod:`dpselect.quantiles._joint`).
      Cost O(m·k·log k + m²·k) for k distinct values. Its exact sampler's acceptance rate falls with
      ε·n·m: a release whose public error bound (ε, n, m) exceeds 1 is refused before the charge
      (ValueError; roughly ε·n·(m + 1)·(log2 n + 8) > 1.4e14, e.g. ε = 1e300, or n = 2^44 at ε = 1).
    * ``"auto"`` (the default): ``"independent"`` for one distinct q (the median's law); for m >= 2
      ``"recursive"`` when ε·n/m < 5,000 (:data:`AUTO_INDEPENDENT_FROM`) and ``"independent"`` above, where
      its rank noise is below the recursive method's inherited error on atoms. The recursive method then
      takes ``targets="relative"`` when ε/m < 0.005 (:data:`AUTO_RELATIVE_BELOW`) and ``targets="hybrid"``
      otherwise (unless ``targets=`` is given); on a grid it uses the cell utility (:data:`AUTO_UTILITY`).
      **Integer data** (an array of an integer dtype) with integral bounds, hi − lo <= 2^20, get the integer grid
      lo..hi: the recursive method on it (cell utility), or the independent interval mechanism on
      [lo, hi + 1) with each value floored. The rule reads only m, ε, n (public under replace-one;
      n = ``sum(counts)``), the dtype and the bounds, never the values or the counts themselves
      (docs/quantiles.md, "The default"). ``"joint"`` is never picked by ``"auto"``: on data with atoms
      its optimum is not the per-quantile one; ask for it by name for a few quantiles of smooth data at
      small ε·n/m.
    * ``targets="hybrid"`` (replace-one): the anchored targets of the outer chains at ε/(2L) each below
      the root (ε/L at the root) and the relative targets of the middle subproblems at ε/(2L·μ): one
      ε/L-bounded-range level per level, ``AdaptiveBoundedRangeComposition(ε/L, L)``; no atom inheritance on
      the outer chains.

    ``bounds=None`` runs the unbounded method (Durfee, NeurIPS 2023), which needs no public bound.

    ``candidates=`` (instead of ``bounds``): a public grid of output values (integer, categorical or binned
    data; data with atoms). Every released value is one of the candidates, c drawn exactly with probability
    ∝ exp(ε0·u(c)/2), u(c) = −dist(q·n, [#{x < c}, #{x <= c}]) (0 exactly on the valid q-quantiles, so a
    candidate on an atom is optimal for every q inside it); methods ``"independent"``, ``"recursive"``
    (outputs non-decreasing, consecutive ones may be equal) and ``"auto"`` (same rule), with the same
    guarantees as with bounds. Records may lie anywhere (off the grid too). ``"joint"`` is refused (its gap
    utility is biased on atoms).

    Privacy: ε-differentially private under **replace-one-record** neighbours (n and the bounds public).
    The joint method is ε-bounded-range; the others are compositions of bounded-range releases (see
    :func:`quantiles_privacy`). With bounds, a record outside them is clipped into them (to lo or hi): a
    refusal would depend on the data, and clipping is a fixed map of each record, so neighbours stay
    neighbours and every guarantee holds; it changes no law on data inside the bounds. Bounds whose width
    hi − lo exceeds the largest float are refused (ValueError, before any charge). Errors about the data
    (NaN, bad counts, more than 2^49 records) name the rule, never a record, a count or n. Zero records
    (``values=[]``, or all counts 0) is a dataset like any other: it releases from the method's law.

    ``neighbours="add_remove"``: ε-DP under **add/remove-one-record** neighbours instead (n private; the
    model of Kaplan et al. and of OpenDP's ``symmetric_distance``). ``"independent"`` is unchanged (its
    target round(2qn)/2 moves with the ranks: sensitivity 1); ``"recursive"`` gives every subproblem its
    relative target (a function of its own size only, ``targets="relative"``; ``"anchored"`` is refused) and
    spends ε/(L·μ) on it, μ <= 1 its sensitivity (1/2 for a subproblem's median), as a record sits in
    exactly one subproblem per level; ``"auto"``: the median's law for m = 1; for m >= 2
    ``"independent"`` when ε/m >= 0.02 (:data:`AUTO_ADD_REMOVE_INDEPENDENT_FROM`), and below it a noisy count
    n̂ = n + Z (Z discrete Laplace at :data:`AUTO_COUNT_SHARE` of ε) picks ``"independent"`` when
    ε'·n̂/m >= 5,000 and ``"recursive"`` otherwise, at the rest ε' of ε (charged ``PureDP(ε)``);
    ``"joint"``, ``targets="anchored"``/``"hybrid"`` and ``bounds=None`` are refused (ValueError: JointExp's
    utility has sensitivity 3 there, and the unbounded method's counts are not monotone). The two models
    are not interchangeable: ε-DP under add/remove implies 2ε-DP under replace-one, and the replace-one
    guarantee says nothing about adding a record.

    Parameters
    ----------
    values : array of shape (n,)
        The records' values (finite). With ``counts``: ``values[g]`` held by ``counts[g]`` records (a
        histogram; never expanded: 10^9 records cost what their distinct values cost).
    qs : array of shape (m,)
        Quantiles in [0, 1], any order, repeats allowed.
    epsilon : float
        The total privacy budget of the whole release, > 0.
    bounds : (float, float) or None
        (lo, hi), lo < hi: the public domain. None (and no ``candidates``): the unbounded method.
    method : {"auto", "joint", "recursive", "independent"}
        See above (ignored when ``bounds`` and ``candidates`` are None; not ``"joint"`` with ``candidates``).
    counts : array of int, optional
        Multiplicities of ``values`` (integers >= 0, at most 2^49 in all; empty bins and 0 records allowed).
    candidates : array of float, optional
        A public grid of output values: finite, strictly increasing, 1-D, at least one; mutually exclusive
        with ``bounds``. Every released value is then a candidate (see above). Public: never derive it from
        the data.
    rng : numpy.random.Generator or int, optional
    accountant : dpselect.Accountant, optional
        Charged once, the guarantee of the whole release (:func:`quantiles_privacy`), label ``"quantiles"``
        (glossary: [accountant][glossary-accountant]).
    neighbours : {"replace_one", "add_remove"}
        The neighbour model of the guarantee (default ``"replace_one"``, n public; glossary:
        [neighbour models][glossary-neighbour-models]). Checked before any charge or draw.
    targets : {"anchored", "relative", "hybrid"} or None
        The recursive method's subproblem targets (used when the release is recursive: ``method=
        "recursive"``, or ``"auto"`` when it picks it): None is ``"anchored"`` for ``method="recursive"``
        under replace-one, the rule above for ``"auto"``, and ``"relative"`` under add/remove, where
        ``"anchored"`` and ``"hybrid"`` are refused (they read n). See above.

    Returns
    -------
    numpy.ndarray of float64, shape (m,)
        The released values, in the order of ``qs``, inside the bounds (candidates with ``candidates``).

    Examples
    --------
    >>> x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    >>> v = quantiles(x, [0.25, 0.5, 0.75], epsilon=50.0, bounds=(0.0, 10.0), method="recursive", rng=0)
    >>> v.shape, bool(np.all(np.diff(v) >= 0)), bool(2.0 <= v[0] < 4.0 and 4.0 <= v[1] < 6.0)
    ((3,), True, True)
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=1.0, neighbours="replace_one")
    >>> _ = quantiles(x, [0.1, 0.9], epsilon=0.5, bounds=(0.0, 10.0), method="independent", rng=0, accountant=acc)
    >>> acc.history[-1].label, acc.history[-1].guarantee
    ('quantiles', BoundedRangeComposition(epsilon0=0.25, k=2))
    >>> quantiles([0, 0, 0, 0, 0, 0, 0, 0, 1, 3], [0.25, 0.5], epsilon=20.0, candidates=[0, 1, 2, 3], rng=0).tolist()
    [0.0, 0.0]
    >>> v = quantiles(x, [0.25, 0.5, 0.75], epsilon=50.0, bounds=(0.0, 10.0), neighbours="add_remove", rng=0)
    >>> bool(np.all(np.diff(v) >= 0) and 2.0 <= v[0] < 4.0 and 4.0 <= v[1] < 6.0)
    True
    """
    eps = check_positive(epsilon, "epsilon")
    q = _check_qs(qs)
    b = _check_bounds(bounds)
    meth = _check_method(method)
    grid = _check_candidates(candidates)
    nb = _check_neighbours(neighbours)
    resolve_targets(targets, nb == "add_remove")       # checked before any charge or draw
    _refuse_add_remove(nb, unbounded=b is None and grid is None, method=meth, grid=grid is not None)
    if grid is not None and b is not None:
        raise ValueError("bounds and candidates are mutually exclusive: candidates (a public grid of output "
                         "values) replaces the bounds; pass one of them")
    if grid is not None and meth == "joint":
        raise ValueError("method='joint' does not take candidates: JointExp's gap utility is biased on atoms "
                         "(its optimum is not the per-quantile one, see docs/quantiles.md); use method="
                         "'recursive', 'independent' or 'auto' with candidates")
    acc = check_accountant(accountant)
    uq, inverse = np.unique(q, return_inverse=True)
    m = int(uq.size)
    check_share(eps, m)
    # records outside the public bounds are clipped into them (never refused: a refusal would depend on the
    # data, a release; clipping is a fixed map of each record, so it keeps every guarantee, see the docs)
    # the integer grid of method="auto": read from the dtype and the public bounds only, before the records
    integer = _integer_grid(values, b) if meth == "auto" and grid is None else None
    vals, cnt = _group(values, counts, b)
    n = int(cnt.sum())
    gen = check_rng(rng)
    if grid is not None or integer is not None:
        resolved, tg, eps = _charge_and_resolve(acc, meth, m, n, eps, nb, targets, gen)
        if integer is not None and resolved == "independent":
            # the interval mechanism on [lo, hi + 1), each value floored (post-processing): the grid law
            # ∝ exp(ε0·(−|#{x <= k} − T/2|)/2) on lo..hi, the interval mechanism's rank law
            assert b is not None
            v = independent_quantiles(vals, cnt, uq, epsilon=eps, lo=b[0], hi=b[1] + 1.0, gen=gen)
            return np.minimum(np.floor(v), b[1])[inverse.reshape(-1)]
        cands = grid if grid is not None else integer
        assert cands is not None
        utility = AUTO_UTILITY if meth == "auto" else DEFAULT_UTILITY
        return grid_quantiles(vals, cnt, uq, epsilon=eps, candidates=cands, method=resolved,
                              rng=gen, neighbours=nb, targets=tg, utility=utility)[inverse.reshape(-1)]
    if b is None:
        charge(acc, _unbounded.unbounded_privacy(eps, m), label="quantiles", neighbours=nb)
        return np.asarray(_unbounded.unbounded_quantiles(vals, q, epsilon=eps, counts=cnt, rng=gen,
                                                         bounded=bounded_quantiles), dtype=np.float64)
    resolved, tg, eps = _charge_and_resolve(acc, meth, m, n, eps, nb, targets, gen)
    return bounded_quantiles(vals, uq, epsilon=eps, lo=b[0], hi=b[1], method=resolved, counts=cnt,
                             rng=gen, neighbours=nb, targets=tg)[inverse.reshape(-1)]


def quantile(
    values: ArrayLike,
    q: float,
    *,
    epsilon: float,
    bounds: tuple[float, float] | None = None,
    method: Method = "auto",
    counts: ArrayLike | None = None,
    candidates: ArrayLike | None = None,
    rng: RngLike = None,
    accountant: Accountant | None = None,
    neighbours: RecordNeighbours = "replace_one",
    targets: Targets | None = None,
) -> float:
    """Release one value close to the q-quantile of ``values`` under ε-DP: ``quantiles(values, [q], ...)[0]``.

    With ``bounds=(0, L)`` and q = 0.5 the law is :func:`dpselect.median`'s (interval mechanism: a value
    v with density ∝ exp(−ε·|#{x <= v} − n/2|/2) on [0, L]), the same seed gives the same value, and the charge
    is the median's, ``BoundedRange(ε)`` (one interval exponential mechanism, whatever the method).
    ε-DP (ε-bounded-range) under replace-one-record neighbours, n and the bounds public; with
    ``neighbours="add_remove"`` the same law, ε-DP under add/remove-one neighbours (n private).

    Parameters
    ----------
    values, epsilon, bounds, method, counts, candidates, rng, accountant, neighbours, targets
        As in :func:`quantiles`.
    q : float
        The quantile, in [0, 1].

    Returns
    -------
    float
        The released value.

    Examples
    --------
    >>> import dpselect
    >>> x = [5.0, 1.0, 9.0, 4.0, 7.0]
    >>> quantile(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), rng=3) == dpselect.median(x, epsilon=1.0, bound=10.0, rng=3)
    True
    >>> quantile([1, 2, 2, 2, 9], 0.5, epsilon=30.0, candidates=[0, 2, 4, 6, 8, 10], rng=0)
    2.0
    >>> quantile(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), rng=3, neighbours="add_remove") == dpselect.median(x, epsilon=1.0, bound=10.0, rng=3)
    True
    """
    if isinstance(q, (str, bytes)) or np.ndim(q) != 0:
        raise TypeError(f"q must be one number in [0, 1], got {q!r} (use quantiles for several)")
    return float(quantiles(values, [q], epsilon=epsilon, bounds=bounds, method=method, counts=counts,
                           candidates=candidates, rng=rng, accountant=accountant, neighbours=neighbours,
                           targets=targets)[0])
