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
    :meth:`vertex_min_upper` (a lower bound on ``U`` over the arcs leaving a vertex), and the label-space
    hooks (:meth:`source_keys`, :meth:`arc_key_upper`, :meth:`key_logs`, ...): probability labels here,
    log-odds labels in the DP pairs. ``homogeneous`` and ``log_space`` are class attributes saying which.

    Examples
    --------
    >>> import numpy as np
    >>> class Doubling(SuitablePair):        # ε-DP with e^ε = 2, written by hand
    ...     def upper(self, alpha):
    ...         a = np.asarray(alpha, dtype=float)
    ...         return np.minimum(2 * a, (1 + a) / 2)
    ...     def lower(self, alpha):
    ...         a = np.asarray(alpha, dtype=float)
    ...         return np.maximum(a / 2, 2 * a - 1)
    >>> pair = Doubling()
    >>> pair.check()                         # the three properties of Def. 12 hold
    >>> float(pair.upper(0.3)), float(pair.upper_power(0.1, 2))
    (0.6, 0.4)
    """

    homogeneous = True

    @abstractmethod
    def upper(self, alpha: np.ndarray) -> np.ndarray:
        """U(α): the largest Pr[M(y) = 1] a neighbour y may have when Pr[M(x) = 1] = α (vectorised).

        Parameters
        ----------
        alpha : array_like
            Probabilities in [0, 1].

        Returns
        -------
        ndarray
            ``U(alpha)``, float64 of the shape of ``alpha``.

        Examples
        --------
        >>> import math
        >>> float(DPPair(epsilon=math.log(2)).upper(0.3))
        0.6
        """

    @abstractmethod
    def lower(self, alpha: np.ndarray) -> np.ndarray:
        """L(α): the smallest Pr[M(y) = 1] a neighbour y may have when Pr[M(x) = 1] = α (vectorised).

        Parameters
        ----------
        alpha : array_like
            Probabilities in [0, 1].

        Returns
        -------
        ndarray
            ``L(alpha)``, float64 of the shape of ``alpha``.

        Examples
        --------
        >>> import math
        >>> float(DPPair(epsilon=math.log(2)).lower(0.3))
        0.15
        """

    # hooks used by the graph code (per-arc / per-vertex variants for heterogeneous pairs)
    def arc_upper(self, alpha: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        """``U_e(alpha)`` across the arcs ``arcs`` (one value per arc); a homogeneous pair ignores ``arcs``.

        Parameters
        ----------
        alpha : ndarray
            Probabilities in [0, 1], one per arc.
        arcs : ndarray of int
            Arc indices of the :class:`~dpselect.binary.graph.DatasetGraph` (CSR order).

        Returns
        -------
        ndarray
            The bounds, of the shape of ``alpha``.

        Examples
        --------
        >>> import math, numpy as np
        >>> DPPair(epsilon=math.log(2)).arc_upper(np.array([0.3]), np.array([0])).tolist()
        [0.6]
        """
        return self.upper(alpha)

    def vertex_min_upper(self, alpha: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        """A lower bound on ``U_e(alpha)`` over the arcs ``e`` leaving each vertex of ``vertices``.

        Used for the label-setting batch threshold; a homogeneous pair returns ``U(alpha)``.

        Parameters
        ----------
        alpha : ndarray
            Probabilities in [0, 1], one per vertex.
        vertices : ndarray of int
            Internal vertex indices.

        Returns
        -------
        ndarray
            The bounds, of the shape of ``alpha``.

        Examples
        --------
        >>> import math, numpy as np
        >>> DPPair(epsilon=math.log(2)).vertex_min_upper(np.array([0.3]), np.array([0])).tolist()
        [0.6]
        """
        return self.upper(alpha)

    # label-space hooks (probability labels here; log-odds labels in the DP pairs)
    log_space = False

    def arc_eps(self, arcs: np.ndarray | None) -> float | np.ndarray:
        """The ε of a log-space (pure-DP) pair across ``arcs``; other pairs have none.

        Parameters
        ----------
        arcs : ndarray of int or None
            Arc indices (None: every arc, for a homogeneous pair).

        Returns
        -------
        float or ndarray
            ε (one value, or one per arc for a heterogeneous pair).

        Raises
        ------
        TypeError
            The pair is not a log-space (ε-DP) pair.

        Examples
        --------
        >>> import math, numpy as np
        >>> round(DPPair(epsilon=math.log(2)).arc_eps(None), 6)
        0.693147
        >>> pairs = EdgeDPPairs(np.log([2.0, 2.0, 3.0, 3.0]), np.log([2.0, 2.0, 3.0]))
        >>> pairs.arc_eps(np.array([0, 2])).round(4).tolist()
        [0.6931, 1.0986]
        """
        raise TypeError(f"{type(self).__name__} is not a log-space (ε-DP) pair: it has no per-arc ε")

    def source_keys(self, prob_one: np.ndarray, colour: int) -> np.ndarray:
        """Labels of the fixed vertices for answer ``colour`` from their ``Pr[M = 1]``.

        The probability of answer ``colour`` for a probability-label pair, its log-odds for a DP pair.

        Parameters
        ----------
        prob_one : ndarray
            ``Pr[M(v) = 1]`` of the fixed vertices.
        colour : {0, 1}
            The answer whose labels are wanted.

        Returns
        -------
        ndarray
            The labels, of the shape of ``prob_one``.

        Examples
        --------
        >>> import math, numpy as np
        >>> DPPair(epsilon=math.log(2)).source_keys(np.array([0.5, 0.75]), 1).round(4).tolist()     # log-odds
        [0.0, 1.0986]
        """
        v = np.asarray(prob_one, dtype=np.float64)
        return v if colour == 1 else 1.0 - v

    def arc_key_upper(self, hi: np.ndarray, lo: np.ndarray, arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``U_e`` on labels ``hi + lo`` across ``arcs``; returns ``(hi', lo')``.

        A label is held as an unevaluated sum ``hi + lo`` (``lo`` a compensation term, 0 for probability
        labels) so that iterated bounds keep full precision.

        Parameters
        ----------
        hi, lo : ndarray
            The labels' leading and compensation parts.
        arcs : ndarray of int
            Arc indices (ignored by a homogeneous pair).

        Returns
        -------
        hi, lo : ndarray
            The bounded labels, in the same two parts.

        Examples
        --------
        >>> import math, numpy as np
        >>> hi, lo = DPPair(epsilon=math.log(2)).arc_key_upper(np.array([0.0]), np.array([0.0]), np.array([0]))
        >>> round(float(hi[0]), 6)                   # U(1/2) = 3/4: log-odds log 3
        1.098612
        """
        return self.arc_upper(hi, arcs), np.zeros_like(np.asarray(hi, dtype=np.float64))

    def arc_key_upper_hi(self, hi: np.ndarray, arcs: np.ndarray) -> np.ndarray:
        """Like :meth:`arc_key_upper` without the compensation term (cheaper; for comparisons only).

        Parameters
        ----------
        hi : ndarray
            The labels' leading parts.
        arcs : ndarray of int
            Arc indices.

        Returns
        -------
        ndarray
            The leading parts of the bounded labels.

        Examples
        --------
        >>> import math, numpy as np
        >>> DPPair(epsilon=math.log(2)).arc_key_upper_hi(np.array([0.0]), np.array([0])).round(6).tolist()
        [1.098612]
        """
        return self.arc_upper(hi, arcs)

    def vertex_min_key_upper(self, hi: np.ndarray, vertices: np.ndarray) -> np.ndarray:
        """:meth:`vertex_min_upper` on labels (leading parts only).

        Parameters
        ----------
        hi : ndarray
            The labels' leading parts, one per vertex.
        vertices : ndarray of int
            Internal vertex indices.

        Returns
        -------
        ndarray
            A lower bound on the bounded labels over the arcs leaving each vertex.

        Examples
        --------
        >>> import math, numpy as np
        >>> DPPair(epsilon=math.log(2)).vertex_min_key_upper(np.array([0.0]), np.array([0])).round(6).tolist()
        [1.098612]
        """
        return self.vertex_min_upper(hi, vertices)

    def scalar_key_upper(self) -> ScalarKeyUpper:
        """A fast scalar ``(hi, lo, arc) -> (hi', lo')`` for the heap reference engine.

        Returns
        -------
        callable
            ``f(hi, lo, arc) -> (hi', lo')`` on Python floats (:data:`ScalarKeyUpper`).

        Examples
        --------
        >>> import math
        >>> f = DPPair(epsilon=math.log(2)).scalar_key_upper()
        >>> round(f(0.0, 0.0, 0)[0], 6)
        1.098612
        """
        return lambda x, lo, arc: (float(self.arc_upper(np.asarray([x]), np.asarray([arc]))[0]), 0.0)

    def shift_weights(self) -> ShiftWeights:
        """``None``, or how ``U`` acts on labels above :data:`~dpselect.binary._logspace.SHIFT_FROM` as ``l + eps_e``.

        Pure DP in log-odds shifts a label by the arc's ε there, which lets the extension use a shortest-path
        engine; given as ``("hops", eps, None)`` (one ε on every arc) or ``("weights", arc_eps, edge_eps)``.

        Returns
        -------
        ShiftWeights
            None for a pair without this form (probability labels, or δ > 0).

        Examples
        --------
        >>> import math
        >>> kind, eps, _ = DPPair(epsilon=math.log(2)).shift_weights()
        >>> kind, round(eps, 6), DPPair(epsilon=1.0, delta=0.1).shift_weights()
        ('hops', 0.693147, None)
        """
        return None

    def key_logs(self, hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log a, log(1 - a))`` of labels (``+inf`` = unconstrained = probability 1).

        Parameters
        ----------
        hi, lo : ndarray
            The labels' leading and compensation parts.

        Returns
        -------
        log_a, log_1ma : ndarray
            ``log a`` and ``log(1 - a)``, to full relative precision for the DP pairs.

        Examples
        --------
        >>> import math, numpy as np
        >>> la, lb = DPPair(epsilon=math.log(2)).key_logs(np.array([0.0]), np.array([0.0]))    # log-odds 0: a = 1/2
        >>> la.round(6).tolist(), lb.round(6).tolist()
        ([-0.693147], [-0.693147])
        """
        a = np.minimum(np.asarray(hi, dtype=np.float64), 1.0)
        with np.errstate(divide="ignore"):
            return np.log(a), np.log1p(-a)

    def key_probability(self, hi: ArrayLike, lo: ArrayLike = 0.0) -> np.ndarray:
        """The probability ``a`` a label stands for.

        Parameters
        ----------
        hi : array_like
            The label's leading part.
        lo : array_like, default 0.0
            Its compensation part.

        Returns
        -------
        ndarray
            ``a``, of the shape of ``hi``.

        Examples
        --------
        >>> import math
        >>> float(DPPair(epsilon=math.log(2)).key_probability(math.log(3)))     # log-odds log 3
        0.75
        """
        return np.exp(self.key_logs(np.asarray(hi, dtype=np.float64), np.asarray(lo, dtype=np.float64))[0])

    def upper_power(self, alpha: ArrayLike, d: int) -> np.ndarray:
        """``U^d(alpha)``: the bound induced at distance ``d`` along any path (iterated ``U``).

        Parameters
        ----------
        alpha : array_like
            Probabilities in [0, 1].
        d : int
            The distance, >= 0.

        Returns
        -------
        ndarray
            ``U^d(alpha)``, of the shape of ``alpha``.

        Examples
        --------
        >>> import math
        >>> round(float(DPPair(epsilon=math.log(2)).upper_power(0.1, 3)), 12)    # = p(3, 0.1, log 2)
        0.7
        """
        a = np.asarray(alpha, dtype=np.float64)
        for _ in range(int(d)):
            a = self.upper(a)
        return a

    def check(self, grid: int = 2001, tol: float = 1e-12) -> None:
        """Verify monotonicity and the three properties of Def. 12 on a grid; raise ``ValueError`` if not.

        Parameters
        ----------
        grid : int, default 2001
            Number of equally spaced points of [0, 1] checked.
        tol : float, default 1e-12
            Slack of every comparison.

        Raises
        ------
        ValueError
            ``U`` or ``L`` not increasing, not into [0, 1], or a property fails (the message names it and ``a``).

        Examples
        --------
        >>> import math
        >>> DPPair(epsilon=math.log(2)).check()
        >>> FunctionPair(lambda a: a, lambda a: a / 2)
        Traceback (most recent call last):
        ...
        ValueError: not a suitable pair: property a <= U(L(a)) fails at a = ...
        """
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
    ``U_DP^d(a)`` equals the closed form :func:`dpselect.binary.p` ``(d, a, epsilon, delta)``. Labels are
    log-odds (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        ε > 0 and δ in [0, 1) (default 0.0).

    Raises
    ------
    ValueError
        ``epsilon`` not > 0, or ``delta`` outside [0, 1).

    Examples
    --------
    >>> import math
    >>> pair = DPPair(epsilon=math.log(2))
    >>> float(pair.upper(0.3)), float(pair.lower(0.3))
    (0.6, 0.15)
    """

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
        """epsilon across ``arcs`` (the same everywhere).

        Parameters
        ----------
        arcs : ndarray of int or None
            Ignored.

        Returns
        -------
        float
            ε.

        Examples
        --------
        >>> DPPair(epsilon=0.5).arc_eps(None)
        0.5
        """
        return self.epsilon

    def __repr__(self) -> str:
        return f"DPPair(epsilon={self.epsilon!r}, delta={self.delta!r})"


class FunctionPair(SuitablePair):
    """A user-supplied homogeneous suitable pair from two vectorised callables (checked on a grid).

    Any privacy notion expressible as "a neighbour of a dataset with value ``a`` must lie in
    ``[lower(a), upper(a)]``" with the three properties of Def. 12 works with the optimal extension.

    Parameters
    ----------
    upper, lower : callable
        ``U`` and ``L``: float array -> float array, increasing.
    check : bool, default True
        Keyword-only: run :meth:`check` at construction.

    Raises
    ------
    TypeError
        ``upper`` or ``lower`` not callable.
    ValueError
        The check fails.

    Examples
    --------
    >>> import numpy as np
    >>> pair = FunctionPair(lambda a: np.minimum(2 * a, (1 + a) / 2), lambda a: np.maximum(a / 2, 2 * a - 1))
    >>> float(pair.upper(0.3)), float(pair.lower(0.3))
    (0.6, 0.15)
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

    Usually built by :func:`~dpselect.binary.extension.resolve_privacy` from a per-edge epsilon.

    Parameters
    ----------
    arc_epsilon : ndarray of shape (n_arcs,)
        ``arc_epsilon[k]`` is the epsilon of directed arc ``k`` of a
        :class:`~dpselect.binary.graph.DatasetGraph` (both orientations of an edge carry the same value).
    vertex_min_epsilon : ndarray of shape (n,)
        The smallest epsilon on an edge at each vertex (used for the label-setting batch threshold, since
        ``U_DP`` increases with epsilon).
    delta : float, default 0.0
        The common δ, in [0, 1).
    edge_epsilon : ndarray of shape (n_edges,), optional
        Keyword-only: the epsilon per edge, when known.

    Raises
    ------
    ValueError
        ``delta`` outside [0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> pairs = EdgeDPPairs(np.log([2.0, 2.0, 3.0, 3.0]), np.log([2.0, 2.0, 3.0]))
    >>> pairs.arc_upper(np.array([0.3, 0.3]), np.array([0, 2])).round(4).tolist()
    [0.6, 0.7667]
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
        """``L_e(alpha)`` across the arcs ``arcs`` (the DP lower bound with each arc's epsilon).

        Parameters
        ----------
        alpha : ndarray
            Probabilities in [0, 1], one per arc.
        arcs : ndarray of int
            Arc indices.

        Returns
        -------
        ndarray
            The bounds, of the shape of ``alpha``.

        Examples
        --------
        >>> import numpy as np
        >>> pairs = EdgeDPPairs(np.log([2.0, 2.0, 3.0, 3.0]), np.log([2.0, 2.0, 3.0]))
        >>> pairs.arc_lower(np.array([0.3, 0.3]), np.array([0, 2])).round(4).tolist()
        [0.15, 0.1]
        """
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
