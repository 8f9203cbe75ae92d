"""A binary mechanism on a dataset graph: exact probabilities, sampling, privacy and dominance checks."""
from __future__ import annotations

from typing import Hashable, Iterable, Mapping

import numpy as np
from numpy.typing import ArrayLike

from .._rng import check_rng
from ..typing import RngLike
from .._validation import short_repr, check_nonnegative
from .bernoulli import bernoulli_log
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
    ``Pr[M = 0]`` within ``2^-53`` of 0 where ``Pr[M = 1]`` rounds to 1.0) are kept exactly.

    Sampling draws the *less likely* answer ``m`` of a vertex with probability exactly ``exp(log_prob[v, m])``
    (:func:`~dpselect.binary.bernoulli.bernoulli_log`: only random bits, no float uniform), so the sampled
    law is the one :meth:`violations` audits (the other answer has ``1 - exp(log_prob[v, m])``, which agrees
    with the stored ``log_prob[v, 1 - m]`` to a few ulps).

    Examples
    --------
    >>> import math
    >>> from dpselect.binary import optimal_mechanism
    >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
    ...                       epsilon=math.log(2))
    >>> round(m.probability(1), 12), round(m.correct_probability(2), 12), m.sample(1, rng=0) in (0, 1)
    (0.4, 0.2, True)
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
        """``log Pr[M(vertex) = answer]``."""
        return float(self.log_prob[self.graph.index_of(vertex), _answer(answer)])

    def probability(self, vertex: Hashable, answer: int = 1) -> float:
        """``Pr[M(vertex) = answer]`` (exact to a few ulps relative on either side; given values unchanged)."""
        return float(self._prob[self.graph.index_of(vertex), _answer(answer)])

    def correct_probability(self, vertex: Hashable) -> float:
        """``Pr[M(vertex) = T(vertex)]``."""
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
        """Draw the private binary answer for dataset ``vertex`` (one exact Bernoulli draw)."""
        gen = check_rng(rng)
        return int(self._sample_idx(np.asarray([self.graph.index_of(vertex)]), gen)[0])

    def sample_many(self, vertices: Iterable[Hashable], rng: RngLike = None) -> np.ndarray:
        """Independent private answers for each dataset in ``vertices`` (int8 array)."""
        gen = check_rng(rng)
        return self._sample_idx(self.graph.indices_of(vertices), gen)

    # ------------------------------------------------------------ checks
    def violations(self, tol: float = 1e-9) -> list[tuple[Hashable, Hashable]]:
        """Neighbouring pairs ``(x, y)`` where privacy fails for some answer (empty if private).

        For DP pairs, on the log-probabilities: ``log Pr[M(y) = j] > log Pr[M(x) = j] + eps(x, y) + tol``
        (``logaddexp(log Pr[M(x) = j] + eps, log delta)`` with delta), for ``j = 0, 1``, both orientations of
        every edge; for a custom pair ``Pr[M(y) = j] > U(Pr[M(x) = j]) + tol``.
        """
        tol = check_nonnegative(tol, "tol")
        if self.pair is None:
            raise ValueError("this mechanism has no privacy notion attached (pair=None): nothing to check")
        g = self.graph
        xs, ys = privacy_violations(g, self.pair, self.log_prob, tol)
        return [(g.label(int(x)), g.label(int(y))) for x, y in zip(xs.tolist(), ys.tolist())]

    def dominates(self, other: BinaryMechanism | Mapping[Hashable, float], tol: float = 1e-12) -> bool:
        """Whether ``Pr[M(v) = T(v)] >= Pr[M'(v) = T(v)] - tol`` at every ``v`` (paper 002, Def. 2).

        ``other`` is a :class:`BinaryMechanism` on the same graph or a mapping ``vertex -> Pr[M'(v) = 1]``.
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
