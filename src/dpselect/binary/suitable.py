"""Suitable pairs (paper 002, Def. 12): the algebra of binary privacy constraints.

A suitable pair ``(L, U)`` of increasing maps ``[0, 1] -> [0, 1]`` with

1. ``L(a) <= a <= U(a)``,
2. ``L(U(a)) <= a <= U(L(a))``,
3. ``U(a) <= 1 - L(1 - a)``

describes which values ``Pr[M(u) = j]`` a dataset ``u`` may take when its neighbour ``v`` has
``Pr[M(v) = j] = a``: the interval ``[L(a), U(a)]`` (Def. 13, (L, U)-privacy). (epsilon, delta)-DP is the pair
:class:`DPPair` (Eq. 8-9, Prop. 2). Heterogeneous privacy (paper 001) attaches one DP pair to every edge:
:class:`EdgeDPPairs`. The optimal extension only ever needs ``U`` (an increasing map with ``U(a) >= a``),
which is what makes the label-setting algorithm of :mod:`dpselect.binary.extension` correct.

Label spaces. The label-setting algorithm only compares labels and applies ``U``, so it may run on any
increasing reparametrisation of ``Pr[M = j]``. A generic pair works on the probability itself. The DP pairs
work on log-odds ``log(a / (1 - a))`` (:mod:`dpselect.binary._logspace`), which keeps both ``a`` and ``1 - a``
to full relative precision down to ``1e-300`` and beyond, so the optimal mechanism's vanishing tails are
exact instead of rounding to 0 and 1 (an infinite privacy loss between neighbours).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from typing import Callable, Literal, Union

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_nonnegative, check_positive
from . import _logspace as ls
from .._compat import keyword_only
from .closed_forms import dp_lower, dp_upper

__all__ = ["SuitablePair", "DPPair", "FunctionPair", "EdgeDPPairs", "ScalarKeyUpper", "ShiftWeights"]

#: A fast scalar ``(hi, lo, arc) -> (hi', lo')`` (:meth:`SuitablePair.scalar_key_upper`).
ScalarKeyUpper = Callable[[float, float, int], tuple[float, float]]
#: What :meth:`SuitablePair.shift_weights` returns: ``None``, ``("hops", eps, None)`` (one ε on every arc) or
#: ``("weights", arc_eps, edge_eps)`` (one ε per arc, and per edge when known).
ShiftWeights = Union[tuple[Literal["hops"], float, None],
                     tuple[Literal["weights"], np.ndarray, Union[np.ndarray, None]], None]


class SuitablePair(ABC):
    """Base class: a suitable pair ``(L, U)`` acting on numpy arrays.

    Subclasses implement :meth:`upper` and :meth:`lower` (vectorised). The graph algorithms call
    :meth:`arc_upper` (the bound across specific arcs; the same ``U`` on every arc for a homogeneous pair) and
    :meth:`vertex_min_upper` (a lower bound on ``U`` over the arcs leaving a vertex).
    """

    homogeneous = True

    @abstractmethod
    def upper(self, alpha: np.ndarray) -> np.ndarray:
        """U(α): the largest Pr[M(y) = 1] a neighbour y may have when Pr[M(x) = 1] = α (vectorised)."""

    @abstractmethod
    def lower(self, alpha: np.ndarray) -> np.ndarray:
        """L(α): the smallest Pr[M(y) = 1] a neighbour y may have when Pr[M(x) = 1] = α (vectorised)."""

    # hooks used by the graph code (per-arc / per-vertex variants for heterogeneous pairs)
    def arc_upper(self, alpha: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        return self.upper(alpha)

    def vertex_min_upper(self, alpha: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        return self.upper(alpha)

    # label-space hooks (probability labels here; log-odds labels in the DP pairs)
    log_space = False

    def arc_eps(self, arcs: np.ndarray | None) -> float | np.ndarray:
        """The ε of a log-space (pure-DP) pair across ``arcs``; other pairs have none."""
        raise TypeError(f"{type(self).__name__} is not a log-space (ε-DP) pair: it has no per-arc ε")

    def source_keys(self, prob_one: np.ndarray, colour: int) -> np.ndarray:
        """Labels of the fixed vertices for answer ``colour`` from their ``Pr[M = 1]``."""
        v = np.asarray(prob_one, dtype=np.float64)
        return v if colour == 1 else 1.0 - v

    def arc_key_upper(self, hi: np.ndarray, lo: np.ndarray, arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``U_e`` on labels ``hi + lo`` across ``arcs``; returns ``(hi', lo')``."""
        return self.arc_upper(hi, arcs), np.zeros_like(np.asarray(hi, dtype=np.float64))

    def arc_key_upper_hi(self, hi: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        """Like :meth:`arc_key_upper` without the compensation term (cheaper; for comparisons only)."""
        return self.arc_upper(hi, arcs)

    def vertex_min_key_upper(self, hi: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        return self.vertex_min_upper(hi, vertices)

    def scalar_key_upper(self) -> ScalarKeyUpper:
        """A fast scalar ``(hi, lo, arc) -> (hi', lo')`` for the heap reference engine."""
        return lambda x, lo, arc: (float(self.arc_upper(np.asarray([x]), np.asarray([arc]))[0]), 0.0)

    def shift_weights(self) -> ShiftWeights:
        """``None``, or how ``U`` acts on labels above :data:`~dpselect.binary._logspace.SHIFT_FROM`: as
        ``l + eps_e`` (pure DP in log-odds), given as ``("hops", eps, None)`` or
        ``("weights", arc_eps, edge_eps)``."""
        return None

    def key_logs(self, hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log a, log(1 - a))`` of labels (``+inf`` = unconstrained = probability 1)."""
        a = np.minimum(np.asarray(hi, dtype=np.float64), 1.0)
        with np.errstate(divide="ignore"):
            return np.log(a), np.log1p(-a)

    def key_probability(self, hi: ArrayLike, lo: ArrayLike = 0.0) -> np.ndarray:
        """The probability ``a`` a label stands for."""
        return np.exp(self.key_logs(np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64))[0])

    def upper_power(self, alpha: ArrayLike, d: int) -> np.ndarray:
        """``U^d(alpha)``: the bound induced at distance ``d`` along any path (iterated ``U``)."""
        a = np.asarray(alpha, dtype=np.float64)
        for _ in range(int(d)):
            a = self.upper(a)
        return a

    def check(self, grid: int = 2001, tol: float = 1e-12) -> None:
        """Verify monotonicity and the three properties of Def. 12 on a grid; raise ``ValueError`` if not."""
        a = np.linspace(0.0, 1.0, grid)
        U, L = self.upper(a), self.lower(a)
        if np.any(np.diff(U) < -tol) or np.any(np.diff(L) < -tol):
            raise ValueError("not a suitable pair: U and L must be increasing")
        if np.any(U > 1 + tol) or np.any(L < -tol):
            raise ValueError("not a suitable pair: U and L must map [0, 1] into [0, 1]")
        conds = {
            "L(a) <= a": L <= a + tol, "a <= U(a)": a <= U + tol,
            "L(U(a)) <= a": self.lower(U) <= a + tol, "a <= U(L(a))": a <= self.upper(L) + tol,
            "U(a) <= 1 - L(1 - a)": U <= 1 - self.lower(1 - a) + tol,
        }
        for name, ok in conds.items():
            if not np.all(ok):
                i = int(np.flatnonzero(~ok)[0])
                raise ValueError(f"not a suitable pair: property {name} fails at a = {a[i]!r}")


class DPPair(SuitablePair):
    """The (epsilon, delta)-DP suitable pair ``(L_DP, U_DP)`` of paper 002, Eq. 8-9.

    ``U_DP(a) = min(e^eps a + delta, (e^eps + delta - 1 + a)/e^eps, 1)`` and ``L_DP(a) = 1 - U_DP(1 - a)``.
    ``U_DP^d(a)`` equals the closed form :func:`dpselect.binary.p` ``(d, a, epsilon, delta)``.

    >>> import math
    >>> pair = DPPair(epsilon=math.log(2))
    >>> float(pair.upper(0.3)), float(pair.lower(0.3))
    (0.6, 0.15)
    """

    @keyword_only("epsilon", "delta")
    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = check_positive(epsilon, "epsilon")
        self.delta = check_nonnegative(delta, "delta")
        if self.delta >= 1:
            raise ValueError(f"delta must be a finite number in [0, 1), got {delta!r}")

    def upper(self, alpha: ArrayLike) -> np.ndarray:
        return dp_upper(np.asarray(alpha, dtype=np.float64), epsilon=self.epsilon, delta=self.delta)

    def lower(self, alpha: ArrayLike) -> np.ndarray:
        return dp_lower(np.asarray(alpha, dtype=np.float64), epsilon=self.epsilon, delta=self.delta)

    log_space = True

    def source_keys(self, prob_one: np.ndarray, colour: int) -> np.ndarray:
        k = ls.logit(prob_one)
        return k if colour == 1 else -k

    def arc_key_upper(self, hi: np.ndarray, lo: np.ndarray, arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ls.key_upper(hi, lo, self.epsilon, self.delta)

    def arc_key_upper_hi(self, hi: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        return ls.key_upper(hi, None, self.epsilon, self.delta, with_lo=False)[0]

    def vertex_min_key_upper(self, hi: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        return ls.key_upper(hi, None, self.epsilon, self.delta, with_lo=False)[0]

    def scalar_key_upper(self) -> ScalarKeyUpper:
        e, dl, f = self.epsilon, self.delta, ls.key_upper_scalar
        return lambda x, lo, arc: f(x, lo, e, dl)

    def key_logs(self, hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ls.key_logs(hi, lo)

    def shift_weights(self) -> ShiftWeights:
        return ("hops", self.epsilon, None) if self.delta == 0 else None

    def arc_eps(self, arcs: np.ndarray | None) -> float:
        """epsilon across ``arcs`` (the same everywhere)."""
        return self.epsilon

    def __repr__(self) -> str:
        return f"DPPair(epsilon={self.epsilon!r}, delta={self.delta!r})"


class FunctionPair(SuitablePair):
    """A user-supplied homogeneous suitable pair from two vectorised callables (checked on a grid).

    Any privacy notion expressible as "a neighbour of a dataset with value ``a`` must lie in
    ``[lower(a), upper(a)]``" with the three properties of Def. 12 works with the optimal extension.
    """

    def __init__(self, upper: Callable[[np.ndarray], np.ndarray], lower: Callable[[np.ndarray], np.ndarray],
                 *, check: bool = True) -> None:
        if not callable(upper) or not callable(lower):
            raise TypeError("upper and lower must be callables taking and returning float arrays")
        self._u, self._l = upper, lower
        if check:
            self.check()

    def upper(self, alpha: ArrayLike) -> np.ndarray:
        return np.asarray(self._u(np.asarray(alpha, dtype=np.float64)), dtype=np.float64)

    def lower(self, alpha: ArrayLike) -> np.ndarray:
        return np.asarray(self._l(np.asarray(alpha, dtype=np.float64)), dtype=np.float64)


class EdgeDPPairs(SuitablePair):
    """Heterogeneous privacy: one DP pair per edge, ``eps(u, v)`` (paper 001, Def. 7) and a common delta.

    ``arc_epsilon[k]`` is the epsilon of directed arc ``k`` of a :class:`~dpselect.binary.graph.DatasetGraph`
    (both orientations of an edge carry the same value); ``vertex_min_epsilon[v]`` the smallest epsilon on an
    edge at ``v`` (used for the label-setting batch threshold, since ``U_DP`` increases with epsilon).
    """

    homogeneous = False

    def __init__(self, arc_epsilon: np.ndarray, vertex_min_epsilon: np.ndarray, delta: float = 0.0, *,
                 edge_epsilon: np.ndarray | None = None) -> None:
        self.arc_epsilon = np.asarray(arc_epsilon, dtype=np.float64)
        self.edge_epsilon = None if edge_epsilon is None else np.asarray(edge_epsilon, dtype=np.float64)
        self.vertex_min_epsilon = np.asarray(vertex_min_epsilon, dtype=np.float64)
        self.delta = check_nonnegative(delta, "delta")
        if self.delta >= 1:
            raise ValueError(f"delta must be a finite number in [0, 1), got {delta!r}")

    def upper(self, alpha: ArrayLike) -> np.ndarray:  # pragma: no cover - a per-edge pair has no single U
        raise TypeError("EdgeDPPairs has one U per edge: use arc_upper(alpha, arcs)")

    lower = upper

    def arc_upper(self, alpha: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        return dp_upper(alpha, epsilon=self.arc_epsilon[arcs], delta=self.delta)

    def arc_lower(self, alpha: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        return dp_lower(alpha, epsilon=self.arc_epsilon[arcs], delta=self.delta)

    def vertex_min_upper(self, alpha: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        return dp_upper(alpha, epsilon=self.vertex_min_epsilon[vertices], delta=self.delta)

    log_space = True
    source_keys = DPPair.source_keys
    key_logs = DPPair.key_logs

    def arc_key_upper(self, hi: np.ndarray, lo: np.ndarray, arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ls.key_upper(hi, lo, self.arc_epsilon[arcs], self.delta)

    def arc_key_upper_hi(self, hi: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        return ls.key_upper(hi, None, self.arc_epsilon[arcs], self.delta, with_lo=False)[0]

    def vertex_min_key_upper(self, hi: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        return ls.key_upper(hi, None, self.vertex_min_epsilon[vertices], self.delta, with_lo=False)[0]

    def scalar_key_upper(self) -> ScalarKeyUpper:
        ee, dl, f = self.arc_epsilon.tolist(), self.delta, ls.key_upper_scalar
        return lambda x, lo, arc: f(x, lo, ee[arc], dl)

    def shift_weights(self) -> ShiftWeights:
        return ("weights", self.arc_epsilon, self.edge_epsilon) if self.delta == 0 else None

    def arc_eps(self, arcs: np.ndarray | None) -> np.ndarray:
        return self.arc_epsilon[arcs]

    def __repr__(self) -> str:
        return f"EdgeDPPairs(n_arcs={self.arc_epsilon.size}, delta={self.delta!r})"
