"""A binary mechanism on a dataset graph: exact probabilities, sampling, privacy and dominance checks."""
from __future__ import annotations

from typing import Hashable, Iterable, Mapping

import numpy as np
from numpy.typing import ArrayLike

from .._rng import check_rng
from ..typing import RngLike
from .._validation import short_repr, check_nonnegative
from .._exact_random import bernoulli_log
from .graph import DatasetGraph
from .suitable import SuitablePair
from .violations import privacy_violations

__all__ = ["BinaryMechanism"]


class BinaryMechanism:
    """A randomized binary answer ``M(v)`` for every dataset ``v`` of a :class:`DatasetGraph`.

    Built by :func:`~dpselect.binary.extension.optimal_mechanism`, or directly from ``prob_one``
    (``Pr[M(v_i) = 1]`` in the graph's vertex order) or ``log_prob`` (an ``(n, 2)`` array of
    ``(log Pr[M = 0], log Pr[M = 1])`` per vertex; it takes precedence). The log form is the mechanism:
    probabilities, sampling and the privacy check all read it, so tails far below ``2^-53`` (and
    ``Pr[M = 0]`` within ``2^-53`` of 0 where ``Pr[M = 1]`` rounds to 1.0) are kept exactly. The privacy
    guarantee is the one of ``pair`` (ε-DP, (ε, δ)-DP or heterogeneous ε(u, v)-DP with the graph's edges as
    the neighbour relation), checked by :meth:`violations`.

    Sampling draws the *less likely* answer ``m`` of a vertex with probability exactly ``exp(log_prob[v, m])``
    (:func:`~dpselect.binary.bernoulli_log`: only random bits, no float uniform), so the sampled
    law is the one :meth:`violations` audits (the other answer has ``1 - exp(log_prob[v, m])``, which agrees
    with the stored ``log_prob[v, 1 - m]`` to a few ulps).

    Parameters
    ----------
    graph : DatasetGraph
        The datasets and their neighbour relation.
    true_values : array_like of shape (n,)
        ``T(v)`` in {0, 1}, in the graph's vertex order.
    prob_one : array_like of shape (n,), optional
        ``Pr[M(v) = 1]`` in the graph's vertex order (ignored when ``log_prob`` is given).
    pair : SuitablePair, optional
        The privacy notion the mechanism claims (None: :meth:`violations` cannot check anything).
    log_prob : array_like of shape (n, 2), optional
        Keyword-only: ``(log Pr[M = 0], log Pr[M = 1])`` per vertex.
    fixed : (indices, values), optional
        Keyword-only: vertices whose ``Pr[M = 1]`` was given as a float and is reported unchanged.
    info : dict, optional
        Keyword-only: free-form information about the construction (kept as ``self.info``).

    Attributes
    ----------
    log_prob : ndarray of shape (n, 2)
        The mechanism.
    prob_one : ndarray of shape (n,)
        ``Pr[M(v) = 1]`` per vertex.

    Raises
    ------
    TypeError
        Neither ``prob_one`` nor ``log_prob`` given.
    ValueError
        ``prob_one`` or ``log_prob`` of the wrong shape or not probabilities.

    Examples
    --------
    >>> import math
    >>> from dpselect.binary import optimal_mechanism
    >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
    ...                       epsilon=math.log(2))
    >>> round(m.probability(1), 12), round(m.correct_probability(2), 12), m.sample(1, rng=0) in (0, 1)
    (0.4, 0.2, True)
    >>> BinaryMechanism(DatasetGraph.from_arrays(2, [0], [1]), [0, 1], prob_one=[0.5, 0.5]).prob_one.tolist()
    [0.5, 0.5]
    """

    def __init__(self, graph: DatasetGraph, true_values: ArrayLike, prob_one: ArrayLike | None = None,
                 pair: SuitablePair | None = None, *, log_prob: ArrayLike | None = None,
                 fixed: tuple[np.ndarray, np.ndarray] | None = None, info: dict | None = None) -> None:
        self.graph = graph
        self.true_values = np.asarray(true_values, dtype=np.int8)
        if log_prob is None:
            if prob_one is None:
                raise TypeError("give prob_one (Pr[M = 1] per vertex) or log_prob ((n, 2) log-probabilities)")
            p = np.asarray(prob_one, dtype=np.float64)
            if p.shape != (graph.n,) or not np.all((p >= 0) & (p <= 1)):
                raise ValueError(f"prob_one must hold {graph.n} probabilities in [0, 1]")
            with np.errstate(divide="ignore"):
                log_prob = np.stack([np.log1p(-p), np.log(p)], axis=1)
            prob = np.stack([1.0 - p, p], axis=1)
        else:
            log_prob = np.asarray(log_prob, dtype=np.float64)
            if log_prob.shape != (graph.n, 2) or np.isnan(log_prob).any() or (log_prob > 0).any():
                raise ValueError(f"log_prob must be an ({graph.n}, 2) array of log-probabilities (<= 0)")
            prob = np.exp(log_prob)
        if fixed is not None:  # vertices whose Pr[M = 1] was given as a float: return it unchanged
            idx, val = fixed
            prob[idx, 1] = val
            prob[idx, 0] = 1.0 - np.asarray(val, dtype=np.float64)
        self.log_prob = log_prob
        self._prob = prob
        self.prob_one = prob[:, 1]
        self.pair = pair
        self.info = dict(info or {})

    # ------------------------------------------------------------ probabilities
    @property
    def probabilities(self) -> dict[Hashable, float]:
        """``vertex -> Pr[M(v) = 1]`` for every vertex (floats: 1.0 where ``Pr[M(v) = 0] < 2^-54``)."""
        return dict(zip(self.graph.vertices, self.prob_one.tolist()))

    @property
    def log_probabilities(self) -> dict[Hashable, tuple[float, float]]:
        """``vertex -> (log Pr[M(v) = 0], log Pr[M(v) = 1])`` for every vertex, to full relative precision."""
        return dict(zip(self.graph.vertices, map(tuple, self.log_prob.tolist())))

    def log_probability(self, vertex: Hashable, answer: int = 1) -> float:
        """``log Pr[M(vertex) = answer]``.

        Parameters
        ----------
        vertex, answer : hashable and {0, 1}
            A vertex id of the graph and the answer (default 1).

        Returns
        -------
        float
            To full relative precision (``-inf`` for an impossible answer).

        Raises
        ------
        ValueError
            ``vertex`` is not a vertex, or ``answer`` is not 0 or 1.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> round(math.exp(m.log_probability(1)), 12), round(math.exp(m.log_probability(1, 0)), 12)
        (0.4, 0.6)
        """
        return float(self.log_prob[self.graph.index_of(vertex), _answer(answer)])

    def probability(self, vertex: Hashable, answer: int = 1) -> float:
        """``Pr[M(vertex) = answer]`` (exact to a few ulps relative on either side; given values unchanged).

        Parameters
        ----------
        vertex, answer : hashable and {0, 1}
            A vertex id of the graph and the answer (default 1).

        Returns
        -------
        float

        Raises
        ------
        ValueError
            ``vertex`` is not a vertex, or ``answer`` is not 0 or 1.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> m.probability(0), round(m.probability(1, answer=0), 12)
        (0.3, 0.6)
        """
        return float(self._prob[self.graph.index_of(vertex), _answer(answer)])

    def correct_probability(self, vertex: Hashable) -> float:
        """``Pr[M(vertex) = T(vertex)]``.

        Parameters
        ----------
        vertex : hashable
            A vertex id of the graph.

        Returns
        -------
        float

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> m.correct_probability(0), round(m.correct_probability(1), 12)     # T(0) = 0, T(1) = 1
        (0.7, 0.4)
        """
        i = self.graph.index_of(vertex)
        return float(self._prob[i, int(self.true_values[i])])

    @property
    def correct_probabilities(self) -> np.ndarray:
        """``Pr[M(v) = T(v)]`` for all vertices, in graph order."""
        return self._prob[np.arange(self.graph.n), self.true_values.astype(np.int64)]

    # ------------------------------------------------------------ sampling
    def _sample_idx(self, idx: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        lp = self.log_prob[idx]
        minority = (lp[:, 1] < lp[:, 0]).astype(np.int8)         # the less likely answer (1 on ties: p = 1/2)
        hit = bernoulli_log(lp[np.arange(idx.size), minority], gen)
        return np.where(hit == 1, minority, 1 - minority).astype(np.int8)

    def sample(self, vertex: Hashable, rng: RngLike = None) -> int:
        """Draw the private binary answer for dataset ``vertex`` (one exact Bernoulli draw).

        The release is private in the sense of the mechanism's ``pair`` (see :meth:`violations`).

        Parameters
        ----------
        vertex : hashable
            A vertex id of the graph (the private dataset).
        rng : RngLike, optional
            A ``numpy.random.Generator``, a seed or None.

        Returns
        -------
        int
            0 or 1.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> m.sample(1, rng=0) in (0, 1)
        True
        """
        gen = check_rng(rng)
        return int(self._sample_idx(np.asarray([self.graph.index_of(vertex)]), gen)[0])

    def sample_many(self, vertices: Iterable[Hashable], rng: RngLike = None) -> np.ndarray:
        """Independent private answers for each dataset in ``vertices`` (int8 array).

        Parameters
        ----------
        vertices : iterable of hashable
            Vertex ids of the graph (repeats allowed: independent draws).
        rng : RngLike, optional
            A ``numpy.random.Generator``, a seed or None.

        Returns
        -------
        ndarray of shape (len(vertices),)
            int8 answers in {0, 1}.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> x = m.sample_many([0, 1, 2, 3], rng=0)
        >>> x.shape, x.dtype.name
        ((4,), 'int8')
        """
        gen = check_rng(rng)
        return self._sample_idx(self.graph.indices_of(vertices), gen)

    # ------------------------------------------------------------ checks
    def violations(self, tol: float = 1e-9) -> list[tuple[Hashable, Hashable]]:
        """Neighbouring pairs ``(x, y)`` where privacy fails for some answer (empty if private).

        For DP pairs, on the log-probabilities: ``log Pr[M(y) = j] > log Pr[M(x) = j] + eps(x, y) + tol``
        (``logaddexp(log Pr[M(x) = j] + eps, log delta)`` with delta), for ``j = 0, 1``, both orientations of
        every edge; for a custom pair ``Pr[M(y) = j] > U(Pr[M(x) = j]) + tol``.

        Parameters
        ----------
        tol : float, default 1e-9
            Slack, >= 0 (relative, in log space, for DP pairs).

        Returns
        -------
        list of (hashable, hashable)
            The violating pairs as vertex ids, one entry per violated orientation.

        Raises
        ------
        ValueError
            ``tol`` is negative, or the mechanism has no ``pair``.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> m.violations()
        []
        """
        tol = check_nonnegative(tol, "tol")
        if self.pair is None:
            raise ValueError("this mechanism has no privacy notion attached (pair=None): nothing to check")
        g = self.graph
        xs, ys = privacy_violations(g, self.pair, self.log_prob, tol)
        return [(g.label(int(x)), g.label(int(y))) for x, y in zip(xs.tolist(), ys.tolist())]

    def dominates(self, other: BinaryMechanism | Mapping[Hashable, float], tol: float = 1e-12) -> bool:
        """Whether ``Pr[M(v) = T(v)] >= Pr[M'(v) = T(v)] - tol`` at every ``v`` (paper 002, Def. 2).

        Parameters
        ----------
        other : BinaryMechanism or mapping
            A :class:`BinaryMechanism` on the same graph or a mapping ``vertex -> Pr[M'(v) = 1]`` (every vertex).
        tol : float, default 1e-12
            Slack.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            A mapping that misses a vertex.

        Examples
        --------
        >>> import math
        >>> from dpselect.binary import optimal_mechanism
        >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
        ...                       epsilon=math.log(2))
        >>> m.dominates({0: 0.3, 1: 0.3, 2: 0.15, 3: 0.1}), m.dominates({0: 0.3, 1: 0.5, 2: 0.2, 3: 0.1})
        (True, False)
        """
        if isinstance(other, BinaryMechanism):
            p1 = other.prob_one
        else:
            idx, vals = self.graph.vertex_array(other, "other")
            if idx.size != self.graph.n:
                raise ValueError("other must give Pr[M(v) = 1] for every vertex")
            p1 = np.empty(self.graph.n)
            p1[idx] = vals
        theirs = np.where(self.true_values == 1, p1, 1.0 - p1)
        return bool(np.all(self.correct_probabilities >= theirs - tol))

    def __repr__(self) -> str:
        return f"BinaryMechanism(graph={self.graph!r}, pair={self.pair!r})"


def _answer(answer: object) -> int:
    if answer not in (0, 1) or isinstance(answer, bool):
        raise ValueError(f"answer must be 0 or 1, got {short_repr(answer)}")
    return int(answer)
