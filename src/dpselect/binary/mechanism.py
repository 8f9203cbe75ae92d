"""A binary mechanism on a dataset graph: exact probabilities, sampling, privacy and dominance checks."""
from __future__ import annotations

from typing import Any, Hashable, Iterable

import numpy as np

from .._rng import check_rng
from .._validation import _short
from .graph import DatasetGraph
from .suitable import SuitablePair

__all__ = ["BinaryMechanism"]


class BinaryMechanism:
    """A randomized binary answer ``M(v)`` for every dataset ``v`` of a :class:`DatasetGraph`.

    Built by :func:`~dpselect.binary.extension.optimal_mechanism`. ``prob_one[i] = Pr[M(v_i) = 1]`` in the
    graph's vertex order; the mechanism is private for ``pair`` (checked on every edge when it was built).

    Examples
    --------
    >>> import math
    >>> from dpselect.binary import optimal_mechanism
    >>> m = optimal_mechanism([(0, 1), (1, 2), (2, 3)], {0: 0, 1: 1, 2: 1, 3: 0}, {0: 0.3, 3: 0.1},
    ...                       epsilon=math.log(2))
    >>> round(m.probability(1), 12), round(m.correct_probability(2), 12), m.sample(1, rng=0) in (0, 1)
    (0.4, 0.2, True)
    """

    def __init__(self, graph: DatasetGraph, true_values: np.ndarray, prob_one: np.ndarray,
                 pair: SuitablePair, *, info: dict | None = None) -> None:
        self.graph = graph
        self.true_values = np.asarray(true_values, dtype=np.int8)
        self.prob_one = np.asarray(prob_one, dtype=np.float64)
        self.pair = pair
        self.info = dict(info or {})

    # ------------------------------------------------------------ probabilities
    @property
    def probabilities(self) -> dict:
        """``vertex -> Pr[M(v) = 1]`` for every vertex."""
        return dict(zip(self.graph.vertices, self.prob_one.tolist()))

    def probability(self, vertex: Hashable, answer: int = 1) -> float:
        """``Pr[M(vertex) = answer]``."""
        if answer not in (0, 1) or isinstance(answer, bool):
            raise ValueError(f"answer must be 0 or 1, got {_short(answer)}")
        p1 = float(self.prob_one[self.graph.index_of(vertex)])
        return p1 if answer == 1 else 1.0 - p1

    def correct_probability(self, vertex: Hashable) -> float:
        """``Pr[M(vertex) = T(vertex)]``."""
        i = self.graph.index_of(vertex)
        return float(self.prob_one[i] if self.true_values[i] == 1 else 1.0 - self.prob_one[i])

    @property
    def correct_probabilities(self) -> np.ndarray:
        """``Pr[M(v) = T(v)]`` for all vertices, in graph order."""
        return np.where(self.true_values == 1, self.prob_one, 1.0 - self.prob_one)

    # ------------------------------------------------------------ sampling
    def sample(self, vertex: Hashable, rng: np.random.Generator | int | None = None) -> int:
        """Draw the private binary answer for dataset ``vertex`` (one Bernoulli draw)."""
        gen = check_rng(rng)
        return int(gen.random() < self.prob_one[self.graph.index_of(vertex)])

    def sample_many(self, vertices: Iterable[Hashable], rng: np.random.Generator | int | None = None
                    ) -> np.ndarray:
        """Independent private answers for each dataset in ``vertices`` (int8 array)."""
        gen = check_rng(rng)
        idx = np.asarray([self.graph.index_of(v) for v in vertices], dtype=np.int64)
        return (gen.random(idx.size) < self.prob_one[idx]).astype(np.int8)

    # ------------------------------------------------------------ checks
    def violations(self, tol: float = 1e-9) -> list[tuple]:
        """Neighbouring pairs ``(x, y)`` where ``Pr[M(y) = j] > U(Pr[M(x) = j]) + tol`` (empty if private)."""
        from .extension import privacy_violations

        g = self.graph
        arcs = privacy_violations(g, self.pair, self.prob_one, tol)
        return [(g.label(int(g.arc_tail[k])), g.label(int(g.indices[k]))) for k in arcs]

    def dominates(self, other: Any, tol: float = 1e-12) -> bool:
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
