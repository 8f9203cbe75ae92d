"""Exact privacy checks: the DP audit of an output distribution and the admissibility checker.

Both enumerate: they are for small instances (a handful of records, candidates and distances), where
they settle a privacy claim exactly instead of estimating it.

>>> import numpy as np, dpselect
>>> from dpselect.audit import exact_dp_audit
>>> counts = {"x": np.array([3.0, 1.0]), "y": np.array([2.0, 1.0])}     # neighbours differ by 1
>>> prob = lambda d: dpselect.exponential_probabilities(counts[d], epsilon=1.0, sensitivity=1.0)
>>> res = exact_dp_audit(prob, [("x", "y")], epsilon=1.0)
>>> bool(res.passed), round(res.worst_log_ratio, 6)
(True, 0.339185)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
from numpy.typing import ArrayLike

from ._validation import short_repr, check_int, check_nonnegative, check_positive
from .sensitivity import SensitivityFunction

__all__ = ["AuditResult", "AdmissibilityReport", "exact_dp_audit", "check_admissibility"]

_TOLERANCE = 1e-9


@dataclass
class AuditResult:
    """Outcome of :func:`exact_dp_audit`: the worst privacy loss found, and where.

    ``passed`` (a property) compares ``worst_log_ratio`` with ``epsilon`` (+1e-9) when one was given, or
    checks ``claim`` when one was given; it is None when neither was.

    Attributes
    ----------
    worst_log_ratio : float
        Max over the pairs and outputs of |log P_x(r) − log P_y(r)| (``inf`` when an output has
        probability 0 on one side only).
    pair : tuple or None
        The pair ``(x, y)`` where ``worst_log_ratio`` occurs.
    output : int or None
        The output index where ``worst_log_ratio`` occurs.
    n_pairs : int
        The number of pairs compared.
    epsilon : float or None, default None
        The claimed ε, if one was given.
    worst_range : float, default 0.0
        Max over the pairs of the width of the log-ratio's range over the outputs (max − min of
        log P_x(r) − log P_y(r)): what a bounded-range claim is checked against.
    range_pair : tuple or None, default None
        The pair where ``worst_range`` occurs.
    claim : guarantee value or None, default None
        The claimed guarantee, if one was given.
    worst_delta : float or None, default None
        Max over the pairs (both directions) of Σ_r (P_x(r) − e^ε P_y(r))₊, filled for an
        :class:`~dpselect.accounting.ApproxDP` claim.

    Examples
    --------
    >>> import numpy as np
    >>> res = exact_dp_audit(lambda d: np.array([[0.5, 0.5], [0.6, 0.4]])[d], [(0, 1)], epsilon=0.5)
    >>> res.n_pairs, res.output, round(res.worst_log_ratio, 4), res.passed
    (1, 1, 0.2231, True)
    """

    worst_log_ratio: float
    pair: tuple | None
    output: int | None
    n_pairs: int
    epsilon: float | None = None
    worst_range: float = 0.0
    range_pair: tuple | None = None
    claim: Any = None
    worst_delta: float | None = None

    @property
    def passed(self) -> bool | None:
        if self.claim is not None:
            return _claim_holds(self)
        if self.epsilon is None:
            return None
        return self.worst_log_ratio <= self.epsilon + _TOLERANCE


def _claim_kind(claim: Any) -> tuple[str, float, float]:
    """("pure" | "bounded_range" | "approx", ε, δ) of a claimed guarantee value."""
    from .accounting import ApproxDP, BoundedRange, PureDP
    if isinstance(claim, BoundedRange):
        return "bounded_range", claim.epsilon_, 0.0
    if isinstance(claim, PureDP):
        return "pure", claim.epsilon_, 0.0
    if isinstance(claim, ApproxDP):
        return ("pure", claim.epsilon_, 0.0) if claim.delta_ == 0.0 else ("approx", claim.epsilon_, claim.delta_)
    raise TypeError(f"claim must be a guarantee value the exact audit can check (dpselect.accounting.PureDP, "
                    f"BoundedRange or ApproxDP), got {short_repr(claim)}")


def _claim_holds(res: "AuditResult") -> bool:
    kind, eps, delta = _claim_kind(res.claim)
    if kind == "bounded_range":
        return res.worst_range <= eps + _TOLERANCE and res.worst_log_ratio <= eps + _TOLERANCE
    if kind == "pure":
        return res.worst_log_ratio <= eps + _TOLERANCE
    return res.worst_delta is not None and res.worst_delta <= delta + _TOLERANCE


def exact_dp_audit(probability_fn: Callable[[Any], ArrayLike], pairs: Iterable[tuple[Any, Any]], *,
                   epsilon: float | None = None, claim: Any = None) -> AuditResult:
    """Worst privacy loss of a mechanism over neighbouring inputs, from its exact output distribution.

    Parameters
    ----------
    probability_fn : callable
        ``probability_fn(dataset) -> array`` of the output probabilities (same outputs for every dataset).
    pairs : iterable of (x, y)
        Neighbouring datasets under the neighbour model being audited; both directions are checked.
        Datasets with equal ``repr`` are taken to be equal (evaluated once).
    epsilon : float, optional
        The claimed ε; fills :attr:`AuditResult.passed`.
    claim : guarantee value, optional
        A claimed guarantee (``dpselect.accounting.PureDP(ε)``, ``BoundedRange(ε)`` or ``ApproxDP(ε, δ)``)
        checked exactly on every pair: pure ε against the largest |log-ratio|, bounded range against the
        width of the log-ratio's range over the outputs, (ε, δ) against the hockey-stick divergence.
        Not together with ``epsilon``.

    Returns
    -------
    AuditResult
        The worst |log-ratio| (``worst_log_ratio``), the worst log-ratio range (``worst_range``), for an
        (ε, δ) claim the worst hockey-stick divergence (``worst_delta``), where they occur, and ``passed``.

    Raises
    ------
    TypeError
        ``probability_fn`` is not callable, or ``pairs`` is not an iterable of pairs.
    ValueError
        ``pairs`` is empty (an audit that compared nothing cannot pass) or holds something other
        than 2-element pairs; ``epsilon`` is not a finite number > 0; ``epsilon`` and ``claim`` both given;
        ``probability_fn`` returns something other than a finite probability vector summing to 1, or
        vectors of different lengths for the two datasets of a pair.

    Notes
    -----
    An output with probability 0 on one side and > 0 on the other gives an infinite log-ratio.

    Examples
    --------
    >>> import numpy as np, dpselect
    >>> from dpselect.accounting import BoundedRange
    >>> u = {"x": np.array([2.0, 0.0, 1.0]), "y": np.array([1.0, 1.0, 1.0])}   # each utility moves by ≤ 1
    >>> em = lambda d: dpselect.exponential_probabilities(u[d], epsilon=1.0, sensitivity=1.0)
    >>> bool(exact_dp_audit(em, [("x", "y")], claim=BoundedRange(1.0)).passed)
    True
    >>> pf = lambda d: dpselect.permute_and_flip_probabilities(u[d], epsilon=1.0, sensitivity=1.0)
    >>> res = exact_dp_audit(pf, [("x", "y")], claim=BoundedRange(1.0))     # ε-DP, but not ε-BR
    >>> bool(res.passed), round(res.worst_range, 4)
    (False, 1.3866)
    """
    if not callable(probability_fn):
        raise TypeError(f"probability_fn must be callable (dataset -> probability vector), "
                        f"got {type(probability_fn).__name__}")
    if epsilon is not None:
        epsilon = check_positive(epsilon, "epsilon")
    if claim is not None:
        if epsilon is not None:
            raise ValueError(f"give either epsilon= or claim=, not both (got epsilon={epsilon!r} and "
                             f"claim={claim!r})")
        claim_kind, claim_eps, _ = _claim_kind(claim)
    worst_range, range_where, worst_delta = 0.0, None, 0.0
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"pairs must be an iterable of (x, y) pairs of neighbouring datasets, got {short_repr(pairs)}")
    worst, where, out, count = 0.0, None, None, 0
    cache: dict[str, np.ndarray] = {}

    def probs(d):
        key = repr(d)  # equal datasets are evaluated once
        if key not in cache:
            raw = probability_fn(d)
            try:
                p = np.asarray(raw)
                if p.dtype.kind not in "biuf":
                    raise TypeError(f"dtype {p.dtype}")
                p = p.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"probability_fn must return a 1-D array of probabilities, got {short_repr(raw)} "
                                f"for dataset {short_repr(d)} ({exc})") from None
            if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or not np.all(p >= 0) \
                    or abs(p.sum() - 1.0) > 1e-6:
                raise ValueError(f"probability_fn must return a non-empty 1-D vector of finite probabilities "
                                 f">= 0 summing to 1, got {short_repr(p)} for dataset {short_repr(d)}")
            cache[key] = p
        return cache[key]

    for pair in pairs:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            what = f"{len(pair)} elements" if hasattr(pair, "__len__") else type(pair).__name__
            raise ValueError(f"pairs must hold (x, y) pairs of neighbouring datasets, but pairs[{count}] has "
                             f"{what}: {short_repr(pair)}")
        x, y = pair
        count += 1
        px, py = probs(x), probs(y)
        if px.shape != py.shape:
            raise ValueError(f"probability_fn returned {px.shape} and {py.shape} outputs for a pair")
        with np.errstate(divide="ignore", invalid="ignore"):
            signed = np.log(px) - np.log(py)
        both_zero = (px == 0) & (py == 0)
        lr = np.where(both_zero, 0.0, np.abs(signed))
        i = int(np.argmax(lr))
        if lr[i] > worst or where is None:
            worst, where, out = float(lr[i]), (x, y), i
        live = signed[~both_zero]
        width = float(live.max() - live.min()) if np.all(np.isfinite(live)) else np.inf
        if width > worst_range or range_where is None:
            worst_range, range_where = width, (x, y)
        if claim is not None and claim_kind == "approx":
            with np.errstate(over="ignore"):
                factor = np.exp(claim_eps)
            hs = max(float(np.maximum(px - factor * py, 0.0).sum()), float(np.maximum(py - factor * px, 0.0).sum()))
            worst_delta = max(worst_delta, hs)
    if count == 0:
        raise ValueError("pairs must contain at least one (x, y) pair of neighbouring datasets, got none: "
                         "an audit that compared nothing cannot pass")
    return AuditResult(worst, where, out, count, epsilon, worst_range, range_where, claim,
                       worst_delta if claim is not None and claim_kind == "approx" else None)


@dataclass
class AdmissibilityReport:
    """Outcome of :func:`check_admissibility`: ``ok`` and the first violation found (or None).

    ``str(report)`` is a one-line summary.

    Attributes
    ----------
    ok : bool
        Both admissibility conditions hold on every pair checked.
    violation : dict or None
        The first failure: ``condition``, ``x``, ``y``, ``t``, ``candidate``, the two values compared and
        a ``message``; None when ``ok``.
    n_datasets : int
        The number of datasets visited (up to the first violation).
    n_pairs : int
        The number of neighbour pairs visited.
    t_max : int
        Condition 2 was checked for t = 0 .. t_max − 1.
    checks : int, default 0
        The number of (pair, t) comparisons made.
    notes : list, default []
        Free-form remarks.

    Examples
    --------
    >>> import numpy as np
    >>> rep = AdmissibilityReport(True, None, n_datasets=3, n_pairs=4, t_max=2, checks=12)
    >>> print(rep)
    admissible on 3 datasets, 4 neighbour pairs, t <= 2 (12 comparisons)
    """

    ok: bool
    violation: dict | None
    n_datasets: int
    n_pairs: int
    t_max: int
    checks: int = 0
    notes: list = field(default_factory=list)

    def __str__(self) -> str:
        if self.ok:
            return (f"admissible on {self.n_datasets} datasets, {self.n_pairs} neighbour pairs, "
                    f"t <= {self.t_max} ({self.checks} comparisons)")
        v = self.violation or {}
        return f"NOT admissible: condition {v['condition']} fails: {v['message']}"


def _as_sf_values(sens: Any, t: int, d: Any) -> np.ndarray:
    if isinstance(sens, SensitivityFunction):
        return sens(t)
    if not callable(sens):
        raise TypeError(f"sensitivity({short_repr(d)}) must return a SensitivityFunction or a callable t -> array, "
                        f"got {type(sens).__name__}")
    vals = np.asarray(sens(t))
    if vals.dtype.kind not in "biuf":
        raise TypeError(f"sensitivity({short_repr(d)})({t}) must return real numbers, got dtype {vals.dtype}")
    vals = vals.astype(np.float64)
    if vals.ndim != 1 or not np.all(np.isfinite(vals)) or not np.all(vals >= 0):
        raise ValueError(f"sensitivity({short_repr(d)})({t}) must return a 1-D array of finite values >= 0, "
                         f"got {short_repr(vals)}")
    return vals


def _as_utility(utility: Callable[[Any], ArrayLike], d: Any) -> np.ndarray:
    raw = np.asarray(utility(d))
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"utility({short_repr(d)}) must return real numbers, got dtype {raw.dtype}")
    u = raw.astype(np.float64)
    if u.ndim != 1 or u.size == 0 or not np.all(np.isfinite(u)):
        raise ValueError(f"utility({short_repr(d)}) must return a non-empty 1-D array of finite numbers, got {short_repr(u)}")
    return u


def check_admissibility(
    utility: Callable[[Any], ArrayLike],
    sensitivity: Callable[[Any], SensitivityFunction | Callable[[int], ArrayLike]],
    neighbours: Callable[[Any], Iterable[Any]],
    datasets: Iterable[Any],
    *,
    t_max: int = 4,
    tol: float = _TOLERANCE,
) -> AdmissibilityReport:
    """Check both admissibility conditions of a sensitivity function exactly on a set of datasets.

    For every dataset x in ``datasets``, every neighbour y in ``neighbours(x)`` and every candidate r:

    1. δ(x, 0, r) >= |u(x, r) − u(y, r)|   (so δ(x, 0, ·) bounds the local sensitivity), and
    2. δ(x, t + 1, r) >= δ(y, t, r) for t = 0 .. t_max − 1.

    Parameters
    ----------
    utility : callable
        ``utility(x) -> array`` of u(x, r) over the candidates.
    sensitivity : callable
        ``sensitivity(x)`` -> a SensitivityFunction (or any ``t -> array``) for dataset x.
    neighbours : callable
        ``neighbours(x)`` -> the datasets at distance 1 from x (the neighbour model under test).
    datasets : iterable
        The universe to check, e.g. every dataset up to a small size.
    t_max : int, default 4
        Condition 2 is checked for t = 0 .. t_max − 1; at least 1 (``ValueError`` otherwise: a check
        that skips condition 2 cannot establish admissibility).
    tol : float, default 1e-9
        Finite, >= 0: a violation smaller than ``tol`` (rounding) is not reported.

    Returns
    -------
    AdmissibilityReport
        ``ok``, and in ``violation`` the first failure: condition, x, y, t, candidate, and the two
        values compared.

    Raises
    ------
    TypeError
        ``utility``, ``sensitivity`` or ``neighbours`` is not callable, or ``datasets`` is not an iterable.
    ValueError
        ``datasets`` is empty or no dataset has a neighbour (nothing would be checked), ``t_max < 1``,
        ``tol`` not finite or negative, or utilities/sensitivities that are not finite arrays of
        one value per candidate.

    Examples
    --------
    Counts of two candidates on datasets of 0..3 records, neighbours differing by one record; a constant
    sensitivity of 1 is admissible, a sensitivity of 0 is not:

    >>> import numpy as np
    >>> u = lambda d: np.array([d, 3 - d], dtype=float)
    >>> nbrs = lambda d: [e for e in (d - 1, d + 1) if 0 <= e <= 3]
    >>> rep = check_admissibility(u, lambda d: (lambda t: np.ones(2)), nbrs, range(4), t_max=2)
    >>> rep.ok, rep.n_datasets, rep.n_pairs
    (True, 4, 6)
    >>> bad = check_admissibility(u, lambda d: (lambda t: np.zeros(2)), nbrs, range(4))
    >>> bad.ok, bad.violation["condition"]
    (False, 1)
    """
    for fname, f in (("utility", utility), ("sensitivity", sensitivity), ("neighbours", neighbours)):
        if not callable(f):
            raise TypeError(f"{fname} must be callable, got {type(f).__name__}")
    if isinstance(datasets, (str, bytes)) or not isinstance(datasets, Iterable):
        raise TypeError(f"datasets must be an iterable of datasets, got {short_repr(datasets)}")
    t_max = check_int(t_max, "t_max", minimum=1)
    tol = check_nonnegative(tol, "tol")
    table = _DeltaTable(utility, sensitivity)
    n_data = n_pairs = checks = 0
    for x in datasets:
        n_data += 1
        for y in neighbours(x):
            n_pairs += 1
            violation, n_checks = _first_violation(table, x, y, t_max, tol)
            checks += n_checks
            if violation is not None:
                return AdmissibilityReport(False, violation, n_data, n_pairs, t_max, checks)
    if n_data == 0:
        raise ValueError("datasets must contain at least one dataset, got none: a check of nothing cannot pass")
    if n_pairs == 0:
        raise ValueError(f"neighbours returned no neighbour for any of the {n_data} dataset(s): nothing was "
                         "compared, so admissibility is not established")
    return AdmissibilityReport(True, None, n_data, n_pairs, t_max, checks)


class _DeltaTable:
    """u(d) and δ(d, t) per dataset, each computed once (datasets are keyed by their repr)."""

    def __init__(self, utility: Callable[[Any], ArrayLike], sensitivity: Callable[[Any], Any]) -> None:
        self.utility, self.sensitivity = utility, sensitivity
        self._cache: dict[str, tuple[np.ndarray, Any, dict[int, np.ndarray]]] = {}

    def _info(self, d: Any) -> tuple[np.ndarray, Any, dict[int, np.ndarray]]:
        key = repr(d)
        if key not in self._cache:
            self._cache[key] = (_as_utility(self.utility, d), self.sensitivity(d), {})
        return self._cache[key]

    def u(self, d: Any) -> np.ndarray:
        return self._info(d)[0]

    def delta(self, d: Any, t: int) -> np.ndarray:
        u, sf, memo = self._info(d)
        if t not in memo:
            vals = _as_sf_values(sf, t, d)
            if vals.shape != u.shape:
                raise ValueError(f"sensitivity({short_repr(d)})({t}) returned {vals.shape[0] if vals.ndim else 0} "
                                 f"values, but utility({short_repr(d)}) has {u.size} candidates")
            memo[t] = vals
        return memo[t]


def _first_violation(table: _DeltaTable, x: Any, y: Any, t_max: int, tol: float) -> tuple[dict | None, int]:
    """The first failure of condition 1, then of condition 2 (t < t_max), on the pair (x, y); and the
    number of comparisons made."""
    ux, uy = table.u(x), table.u(y)
    if uy.shape != ux.shape:
        raise ValueError(f"utility returned {ux.shape} for {x!r} but {uy.shape} for neighbour {y!r}")
    d0 = table.delta(x, 0)
    gap = np.abs(ux - uy)
    checks = gap.size
    bad = np.flatnonzero(d0 + tol < gap)
    if bad.size:
        r = int(bad[0])
        return {"condition": 1, "x": x, "y": y, "t": 0, "candidate": r, "delta": float(d0[r]),
                "required": float(gap[r]),
                "message": f"δ(x, 0, r={r}) = {d0[r]:.6g} < |u(x, r) − u(y, r)| = {gap[r]:.6g} "
                           f"for x = {x!r}, y = {y!r}"}, checks
    for t in range(t_max):
        dx, dy = table.delta(x, t + 1), table.delta(y, t)
        checks += dx.size
        bad = np.flatnonzero(dx + tol < dy)
        if bad.size:
            r = int(bad[0])
            return {"condition": 2, "x": x, "y": y, "t": t, "candidate": r, "delta": float(dx[r]),
                    "required": float(dy[r]),
                    "message": f"δ(x, {t + 1}, r={r}) = {dx[r]:.6g} < δ(y, {t}, r={r}) = {dy[r]:.6g} "
                               f"for x = {x!r}, y = {y!r}"}, checks
    return None, checks
