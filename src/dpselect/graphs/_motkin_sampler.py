"""Repeated DP-MOTkIN selections on one graph, with the ε-independent scores cached.

Each :meth:`MotkinSampler.sample` call is one ε-edge-DP selection of k nodes (ε/k per pick), with
exactly the output law of :func:`dpselect.graphs.dp_motkin_pareto` /
:func:`~dpselect.graphs.dp_motkin_agg`; the cache only saves recomputing dampened scores.
"""
from __future__ import annotations

import threading
from typing import Sequence, cast

import numpy as np

from .._rng import check_rng
from ..typing import MechanismName, RngLike
from .._validation import check_k, check_positive
from ..dampening import dampen_with_error
from .._graph import Graph
from ..mechanisms import exponential_probabilities
from ..multiobjective._pareto_score import pareto_score, pareto_sensitivity
from ..sensitivity import SensitivityFunction, weighted_sum
from ..utilities.graph import (
    DEGREE_GLOBAL_SENSITIVITY,
    EGODENSITY_GLOBAL_SENSITIVITY,
    degree_sensitivity,
    egocentric_density_sensitivity,
)
from .._boundary import charge, check_accountant
from ..exceptions import _release_scope
from ..accounting.accountant import Accountant, Event
from ..registry import get_mechanism
from ..vocabulary import check_approach, selection_result
from ._motkin import (
    DEFAULT_AGG_WEIGHTS,
    _agg_weights,
    _sampler_mechanisms,
    check_graph,
    motkin_mechanism,
    motkin_objectives,
)

__all__ = ["MotkinSampler"]


class MotkinSampler:
    """Repeated DP-MOTkIN selections on one graph, reusing everything that does not depend on ε.

    The reproductions draw thousands of selections from the same graph. The dampened Pareto scores
    of the remaining nodes depend only on which nodes were already picked, never on ε or on the
    run, so they are cached per picked prefix; each pick is then one exponential-mechanism draw
    (Gumbel-max) over the cached scores -- exactly PrivPareto/PrivAgg's distribution (the tests
    compare the k = 1 probabilities with :func:`dpselect.multiobjective.priv_pareto_probabilities` /
    :func:`dpselect.multiobjective.priv_agg_probabilities`). Privacy: each :meth:`sample` call is one ε-edge-DP
    selection of k nodes, ε/k per pick.

    Parameters
    ----------
    graph : Graph
        Built with its public node set (``nodes=`` / ``n_nodes=``); else ``PrivacyLeakWarning``.
    approach : {"pareto", "aggregate"} ("agg" is an alias)
    mechanism : {"local_dampening", "exponential"} or an alias (LD, EM), default "local_dampening"
        DP-MOTkIN's local or global version.
    variant : {"paper", "code"}
    objective_weights : pair of float (``"aggregate"`` only)
    max_cache : int, default 64
        Cached prefixes (of picked nodes) kept.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.graphs import from_edges
    >>> s = MotkinSampler(from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5], n_nodes=6), "agg")
    >>> acc = dpselect.Accountant(epsilon=1.0, neighbours="edge_add_remove")
    >>> draws = [s.sample(epsilon=0.25, rng=seed, accountant=acc) for seed in range(4)]
    >>> type(draws[0]).__name__, s.sample(k=2, epsilon=0.25, rng=0).shape, acc.spent()
    ('int', (2,), PureDP(epsilon=1.0))
    >>> s.sample(epsilon=0.25, rng=4, accountant=acc)   # a fifth selection: the budget refuses it
    Traceback (most recent call last):
    ...
    dpselect.exceptions.BudgetExceededError: charging BoundedRange(epsilon=0.25) (label 'MotkinSampler.sample') ...
    """

    def __init__(self, graph: Graph, approach: str, *, mechanism: MechanismName | None = None, variant: str = "paper",
                 objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS, max_cache: int = 64) -> None:
        with _release_scope() as seen:   # the node set read from the data: every sample() is NonPrivate
            g = check_graph(graph, "MotkinSampler", stacklevel=4)
        self._read_from_data = ", ".join(dict.fromkeys(seen)) + " read from the data" if seen else None
        approach = check_approach(approach)
        self.mechanism = motkin_mechanism(mechanism, "MotkinSampler", allowed=_sampler_mechanisms())
        self._spec = get_mechanism(self.mechanism)
        self.graph, self.approach, self.variant = g, approach, variant
        self.local = self._spec.kind == "local"   # local dampening: dampened scores D, cached per prefix
        self.U, _ = motkin_objectives(g, variant=variant)
        self.degrees = g.degrees
        self.weights = np.asarray(_agg_weights(objective_weights) if approach == "aggregate" else objective_weights,
                                  dtype=np.float64)
        self._cache: dict[tuple, tuple[np.ndarray, np.ndarray, float]] = {}
        self._ps_full: np.ndarray | None = None
        self._full_sf: SensitivityFunction | None = None
        self._sfs: list[SensitivityFunction] = []
        self._cums: list[np.ndarray] = []
        self._deltas: list[np.ndarray] = []
        self._max_cache = max_cache
        self._exact_inputs: dict[tuple, tuple] = {}
        self._lock = threading.RLock()  # the caches are shared: one draw's entry must not be evicted mid-use
        self.cache_misses = 0

    def scores(self, removed: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray, float]:
        """(remaining node indices, scores, sensitivity) for the exponential-mechanism draw.

        Parameters
        ----------
        removed : tuple of int
            Nodes already picked.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray, float)
            The remaining nodes, their scores (dampened D for local dampening: sensitivity 1) and Δ.

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> rem, s, sens = MotkinSampler(from_edges([0, 0, 1], [1, 2, 2], n_nodes=4), "pareto",
        ...                              mechanism="EM").scores((0,))
        >>> rem.tolist(), s.tolist(), sens
        ([1, 2, 3], [0.0, 0.0, -2.0], 2.0)
        """
        key = tuple(sorted(removed)) if self.approach == "pareto" else ()
        with self._lock:
            return self._scores_locked(key)

    def _scores_locked(self, key):
        hit = self._cache.get(key)
        if hit is None:
            self.cache_misses += 1
            hit = self._compute(key)
            if len(self._cache) >= self._max_cache:
                old = next(iter(self._cache))
                self._cache.pop(old)
                self._exact_inputs.pop(old, None)
            self._cache[key] = hit
        return hit

    def _compute(self, removed: tuple[int, ...]):
        n = self.U.shape[0]
        mask = np.ones(n, dtype=bool)
        mask[list(removed)] = False
        rem = np.flatnonzero(mask)
        if self.approach == "aggregate":
            sfs = [degree_sensitivity(self.degrees), egocentric_density_sensitivity(self.degrees)]
            agg = self.U @ self.weights
            if not self.local:
                return rem, agg, float(np.abs(self.weights) @ [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY])
            return self._dampened(rem, agg, weighted_sum(self.weights.tolist(), sfs), removed)
        # Pareto: scores and δ^PS of the remaining nodes from those of all nodes, corrected for the
        # removed ones (see _pareto_delta_removed); equal to recomputing them on U[rem].
        if self._ps_full is None:
            self._ps_full = pareto_score(self.U).astype(np.float64)
        removed_idx = np.asarray(removed, dtype=np.intp)
        U = self.U
        dominated_by_removed = np.zeros(n)
        for p in removed_idx:
            dominated_by_removed += np.all(U[p] > U, axis=1)
        ps = (self._ps_full + dominated_by_removed)[rem]
        if not self.local:
            return rem, ps, float(max(rem.size - 1, 1))
        return self._dampened(rem, ps, self._pareto_delta_removed(rem, removed_idx), removed)

    def _dampened(self, rem, u, sf, key):
        """Dampened scores with their rigorous error bounds; the exact sampler's inputs kept aside."""
        D, err = dampen_with_error(u, sf)
        self._exact_inputs[key] = (u, sf, err)
        return rem, D, 1.0

    # -- δ^PS of a remaining set, incrementally ------------------------------------------------------
    def _cum_sums(self, t: int) -> np.ndarray:
        """(n, 2) array of Σ_{j<=t} δ_i(x, j, r) for degree and egocentric density."""
        while len(self._cums) <= t:
            j = len(self._cums)
            step = np.column_stack([self._sfs[0](j), self._sfs[1](j)])
            self._cums.append(step if j == 0 else self._cums[-1] + step)
        return self._cums[t]

    def _delta_full(self, t: int) -> np.ndarray:
        while len(self._deltas) <= t:
            assert self._full_sf is not None  # set by _pareto_delta_removed before any δ is asked
            self._deltas.append(self._full_sf(len(self._deltas)))  # increasing t: one step each
        return self._deltas[t]

    def _pareto_delta_removed(self, rem: np.ndarray, removed: np.ndarray) -> SensitivityFunction:
        """δ^PS on the candidates ``rem`` (all nodes minus ``removed``), exactly.

        With H = U + S_t, L = U − S_t (S_t the running sums of the objectives' δ), δ^PS(t, r) on a set
        R is #{r' ∈ R : H(r') >= L(r)} − 1 − #{r' ∈ R : L(r') > H(r)} (comparisons in every objective;
        this is Def. 4.5's two terms, see dpselect.multiobjective). Removing p from R therefore
        subtracts [H(p) >= L(r)] − [L(p) > H(r)] -- O(n) per removed node instead of a fresh
        O(n log n) count, and the all-node counts are shared by every remaining set.
        """
        if self._full_sf is None:
            self._sfs = [degree_sensitivity(self.degrees), egocentric_density_sensitivity(self.degrees)]
            self._full_sf = pareto_sensitivity(self.U, self._sfs)
        U = self.U

        def delta_removed(t, candidates=None):
            idx = rem if candidates is None else rem[candidates]
            out = self._delta_full(t)[idx].copy()
            if removed.size:
                S = self._cum_sums(t)
                H, L = U[idx] + S[idx], U[idx] - S[idx]
                for p in removed:
                    Hp, Lp = U[p] + S[p], U[p] - S[p]
                    out -= np.all(Hp >= L, axis=1).astype(np.float64) - np.all(Lp > H, axis=1)
            return out

        return SensitivityFunction(delta_removed, float(max(rem.size - 1, 1)), n_candidates=rem.size,
                                   name="pareto_score_remaining")

    @selection_result
    def sample(self, *, k: int | None = None, epsilon: float, rng: RngLike = None,
               accountant: Accountant | None = None) -> np.ndarray | int:
        """One ε-edge-DP selection of k node indices (ε/k per pick), in the order picked.

        Parameters
        ----------
        k : int, optional
            Number of nodes, 1 <= k <= n. Omitted: one node, as an ``int``.
        epsilon : float
            Total budget of this selection.
        rng : Generator, int or None
        accountant : dpselect.Accountant, optional
            Charged ``mechanism.privacy(epsilon, k=k)`` (as :func:`~dpselect.graphs.dp_motkin_pareto`)
            under the label ``"MotkinSampler.sample"``, after the arguments are checked and before any
            random bit is drawn; a refused release raises :class:`~dpselect.BudgetExceededError`.

        Returns
        -------
        int or numpy.ndarray of int64
            One node index (``k`` omitted) or k of them, shape (k,) (also for k = 1).

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> s = MotkinSampler(from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5], n_nodes=6), "pareto")
        >>> s.sample(k=2, epsilon=1e4, rng=0).shape, type(s.sample(epsilon=1e4, rng=0)).__name__
        ((2,), 'int')
        """
        kk = None if k is None else check_k(k, self.U.shape[0])
        eps = check_positive(epsilon, "epsilon")
        acc = check_accountant(accountant)
        gen = check_rng(rng)
        charge(acc, self._spec.privacy(eps, k=kk), label="MotkinSampler.sample", neighbours="edge_add_remove", nonprivate=self._read_from_data,
               event=Event("MotkinSampler.sample", eps, kk, options=(("approach", self.approach),
                                                                     ("mechanism", self.mechanism))))
        return self._sample(1 if kk is None else kk, eps, gen, single=kk is None)

    def _sample(self, k: int, eps: float, gen: np.random.Generator, *, single: bool) -> np.ndarray | int:
        """The draws on checked values: k picks of ε/k (one ``int`` when ``single``)."""

        def draw(removed, e, kk):
            with self._lock:  # scores and the exact sampler's inputs of one cache entry, together
                rem, s, sens = self.scores(removed)
                exact_in = self._exact_inputs.get(tuple(sorted(removed)) if self.approach == "pareto" else ())
            if not self.local:
                return rem, self._spec.select(s, epsilon=e, sensitivity=sens, k=None if kk == 1 else kk, rng=gen)
            u, sf, err = cast(tuple, exact_in)  # local dampening on the cached D, sampled exactly
            return rem, self._spec.select_prepared(u, sf, (s, err), epsilon=e, k=kk, rng=gen)

        if self.approach == "aggregate":
            rem, sel = draw((), eps, k)
            out = rem[np.atleast_1d(sel)].astype(np.int64)
        else:
            picks: list[int] = []
            for _ in range(k):
                rem, sel = draw(tuple(picks), eps / k, 1)
                picks.append(int(rem[sel]))
            out = np.asarray(picks, dtype=np.int64)
        return int(out[0]) if single else out

    def probabilities(self, *, epsilon: float) -> np.ndarray:
        """Exact distribution of the first pick (k = 1) over all nodes.

        Parameters
        ----------
        epsilon : float

        Returns
        -------
        numpy.ndarray of float64, shape (n,)

        Examples
        --------
        >>> from dpselect.graphs import from_edges
        >>> p = MotkinSampler(from_edges([0, 0, 1], [1, 2, 2], n_nodes=4), "pareto").probabilities(epsilon=1.0)
        >>> p.shape, round(float(p.sum()), 12)
        ((4,), 1.0)
        """
        rem, s, sens = self.scores(())
        out = np.zeros(self.U.shape[0])
        eps = check_positive(epsilon, "epsilon")
        if self.local:   # local dampening is the exponential mechanism on D (sensitivity 1)
            out[rem] = exponential_probabilities(s, epsilon=eps, sensitivity=sens)
        else:
            out[rem] = self._spec.probabilities(s, epsilon=eps, sensitivity=sens)
        return out
