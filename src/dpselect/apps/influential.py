"""Private top-k influential nodes of a graph: DP-MOTkIN (paper Sec. 7) and PrivTopk (thesis Ch. 6).

Privacy model for everything here: **edge differential privacy** -- two graphs are neighbours when
they differ in exactly one edge (paper Def. 7.1). Every private function spends ``epsilon`` in total:
it makes k selections with ε/k each on the candidates not yet picked (sequential composition), so the
returned set of k node indices is ε-edge-DP.

* **DP-MOTkIN** (paper Sec. 7.2): two objectives per node, degree and egocentric density
  (:mod:`dpselect.utilities.graph`).
  - :func:`dp_motkin_pareto` -- PrivPareto on the Pareto score; ``mechanism="exponential"`` is
    DP-MOTkIN-Pareto_global (Δ^PS = |R| − 1), ``mechanism="local_dampening"`` (default)
    DP-MOTkIN-Pareto_local (δ^PS built from δ^degree and δ^egodensity). The Pareto scores and δ^PS
    are recomputed on the remaining nodes after each pick.
  - :func:`dp_motkin_agg` -- PrivAgg on w_degree·degree + w_egodensity·egodensity (default weights
    1 and 100, paper Sec. 7.5); global: exponential mechanism with Δ = Σ|w_i|Δ_i; local: local
    dampening with δ^agg = Σ|w_i|δ_i.
  - non-private baselines :func:`top_k_pareto` and :func:`top_k_aggregate`, and the paper's error
    measures :func:`metric_c` (Def. 6.3; :func:`dpselect.multiobjective.metric_c`, with node indices:
    ``metric_c(reference, selected, objectives=U)``) and :func:`recall`.
* **PrivTopk** (thesis Alg. 3): k picks maximising egocentric betweenness centrality (EBC) with the
  exponential mechanism, permute-and-flip, local dampening or shifted local dampening (``mechanism=``
  with the names of :mod:`dpselect.vocabulary` or their aliases EM, PF, LD, SLD): :func:`priv_topk`,
  baseline :func:`top_k_ebc`.

All functions return **node indices** into the :class:`~dpselect.graphs.Graph` (``graph.node_ids[idx]``
gives the original ids), in the order picked.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._rng import check_rng
from .._validation import check_bool, check_k, check_positive
from ..graphs import Graph
from ..sensitivity import SensitivityFunction
from .. import multiobjective as _mo
from ..multiobjective import metric_c  # noqa: F401  (re-exported: the paper's measure for DP-MOTkIN)
from ..vocabulary import LOCAL_MECHANISMS, Mechanism, check_mechanism, deprecated, keyword_only
from ..utilities.graph import (
    DEGREE_GLOBAL_SENSITIVITY,
    EGODENSITY_GLOBAL_SENSITIVITY,
    degree_sensitivity,
    ebc,
    ebc_global_sensitivity,
    ebc_sensitivity,
    egocentric_density,
    egocentric_density_sensitivity,
    public_max_degree,
)

__all__ = [
    "motkin_objectives",
    "dp_motkin_pareto",
    "dp_motkin_agg",
    "top_k_pareto",
    "top_k_aggregate",
    "metric_c",
    "recall",
    "PrivTopkScores",
    "prepare_priv_topk",
    "priv_topk",
    "top_k_ebc",
    "PRIV_TOPK_MECHANISMS",
    "MotkinSampler",
    "influential_demo_table",
]

#: PrivTopk's mechanisms by their thesis labels (Sec. 6.2; also accepted as ``mechanism=`` aliases) and what
#: they run. ``priv_topk`` takes the canonical names of :mod:`dpselect.vocabulary` as well.
PRIV_TOPK_MECHANISMS = {
    "EM": "exponential mechanism, ΔEBC = max(D(D−1)/4, D)",
    "PF": "permute-and-flip, ΔEBC",
    "LD": "local dampening with δ^EBC (bounded)",
    "SLD": "shifted local dampening with δ^EBC (bounded, increasing)",
}
#: Canonical names of the mechanisms :func:`priv_topk` runs.
_TOPK_CANONICAL = ("exponential", "permute_and_flip", "local_dampening", "shifted_local_dampening")
#: The mechanisms DP-MOTkIN runs (its paper versions: global = exponential, local = local dampening).
MOTKIN_MECHANISMS = ("exponential", "local_dampening")
DEFAULT_AGG_WEIGHTS = (1.0, 100.0)


def _motkin_mechanism(mechanism, local, where: str, allowed=None) -> str:
    """The canonical mechanism of a DP-MOTkIN call; ``local=`` is the deprecated spelling."""
    if local is not None:
        local = check_bool(local, "local")
        implied = "local_dampening" if local else "exponential"
        deprecated(f"{where}(local={local})", f"mechanism={implied!r}", stacklevel=4)
        if mechanism is None:
            mechanism = implied
        elif not local and check_mechanism(mechanism) in LOCAL_MECHANISMS:
            raise ValueError(f"local=False (deprecated) contradicts mechanism={mechanism!r}; pass mechanism only")
    if mechanism is None:
        return "local_dampening"
    return check_mechanism(mechanism) if allowed is None else check_mechanism(mechanism, allowed=allowed)


def _check_graph(graph: Any) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dpselect.graphs.Graph, got {type(graph).__name__}")
    if graph.n_nodes < 2:
        raise ValueError(f"graph must have at least 2 nodes to select from, got {graph.n_nodes}")
    return graph


# -- DP-MOTkIN ------------------------------------------------------------------------------------
def motkin_objectives(graph: Graph, *, variant: str = "paper") -> tuple[np.ndarray, list[SensitivityFunction]]:
    """The DP-MOTkIN objectives: U[:, 0] = degree, U[:, 1] = egocentric density, with their δ's.

    ``variant`` selects the egocentric density formula (``"paper"``, or ``"code"`` for the paper's
    published code, see :func:`dpselect.utilities.graph.egocentric_density`).

    Returns ``(U, [δ^degree, δ^egodensity])``; global sensitivities are 1 and 1 (edge-DP).

    >>> from dpselect.graphs import from_edges
    >>> U, sfs = motkin_objectives(from_edges([0, 0, 0, 1], [1, 2, 3, 2]))
    >>> U.round(3).tolist(), [sf.global_sensitivity for sf in sfs]
    ([[3.0, 0.333], [2.0, 1.0], [2.0, 1.0], [1.0, 0.0]], [1.0, 1.0])
    """
    g = _check_graph(graph)
    U = np.column_stack([g.degrees.astype(np.float64), egocentric_density(g, variant=variant)])
    return U, [degree_sensitivity(g), egocentric_density_sensitivity(g)]


@keyword_only("k", "epsilon")
def dp_motkin_pareto(graph: Graph, *, k: int | None = None, epsilon: float, mechanism: Mechanism | None = None,
                     variant: str = "paper", rng: np.random.Generator | int | None = None,
                     local: bool | None = None) -> np.ndarray | int:
    """DP-MOTkIN-Pareto: k nodes near the Pareto front of (degree, egocentric density), ε-edge-DP.

    Runs PrivPareto (:func:`dpselect.priv_pareto`) k times with ε/k each on the nodes not yet picked;
    the Pareto scores and δ^PS are recomputed on the remaining nodes after each pick.

    Parameters
    ----------
    graph : Graph
    k : int, optional
        Number of nodes, 1 <= k <= n. Omitted: one node, returned as an ``int``.
    epsilon : float
        Total privacy budget (ε-edge-DP by sequential composition). ``k`` and ``epsilon`` are
        keyword-only; given positionally they still work for one release, with a ``DeprecationWarning``
        (also in :func:`dp_motkin_agg` and :meth:`MotkinSampler.sample`).
    mechanism : str, default "local_dampening"
        Any name or alias of :data:`dpselect.vocabulary.MECHANISMS`. Local mechanisms use δ^PS from
        δ^degree = 1 and δ^egodensity ("local_dampening": DP-MOTkIN-Pareto_local); global ones
        Δ^PS = |R| − 1 ("exponential": DP-MOTkIN-Pareto_global).
    variant : {"paper", "code"}
        Egocentric density formula (see :func:`motkin_objectives`).
    rng : Generator, int or None
    local : bool
        Deprecated: ``local=True`` is ``mechanism="local_dampening"``, ``local=False``
        ``mechanism="exponential"`` (``DeprecationWarning``).

    Returns
    -------
    numpy.ndarray of k int node indices, in the order picked (an ``int`` when ``k`` is omitted).

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5])
    >>> sorted(dp_motkin_pareto(g, k=2, epsilon=1e4, rng=0).tolist())     # doctest: +SKIP
    [0, 1]
    """
    g = _check_graph(graph)
    single = k is None
    k = check_k(1 if single else k, g.n_nodes)
    eps = check_positive(epsilon, "epsilon")
    mech = _motkin_mechanism(mechanism, local, "dp_motkin_pareto")
    U, sfs = motkin_objectives(g, variant=variant)
    sens = sfs if mech in LOCAL_MECHANISMS else [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY]
    out = _mo.priv_pareto(U, epsilon=eps, sensitivities=sens, k=k, rng=rng, mechanism=mech)
    return int(out) if single else np.atleast_1d(np.asarray(out, dtype=np.int64))


@keyword_only("k", "epsilon")
def dp_motkin_agg(graph: Graph, *, k: int | None = None, epsilon: float, objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS,
                  mechanism: Mechanism | None = None, variant: str = "paper",
                  rng: np.random.Generator | int | None = None, local: bool | None = None,
                  weights: Sequence[float] | None = None) -> np.ndarray | int:
    """DP-MOTkIN-Agg: k nodes maximising w_degree·degree + w_egodensity·egodensity, ε-edge-DP.

    Runs PrivAgg (:func:`dpselect.priv_agg`) with k picks of ε/k each. ``mechanism="exponential"``
    (or another global mechanism): Δ = Σ|w_i|Δ_i (= 101 for the default ``objective_weights`` 1 and 100
    of paper Sec. 7.5); ``mechanism="local_dampening"`` (default, or another local mechanism):
    δ^agg = Σ|w_i|δ_i (paper Thm 5.4). Deprecated spellings (``DeprecationWarning``): ``local=True`` /
    ``local=False`` for ``mechanism="local_dampening"`` / ``"exponential"``, ``weights=`` for
    ``objective_weights=``.

    Returns k int node indices in the order picked (an int64 array for any int ``k``, one ``int`` when
    ``k`` is omitted).

    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5])
    >>> dp_motkin_agg(g, k=1, epsilon=1e5, rng=0).tolist()             # doctest: +SKIP
    [1]
    """
    g = _check_graph(graph)
    single = k is None
    k = check_k(1 if single else k, g.n_nodes)
    eps = check_positive(epsilon, "epsilon")
    mech = _motkin_mechanism(mechanism, local, "dp_motkin_agg")
    objective_weights = _objective_weights(objective_weights, weights, "dp_motkin_agg")
    U, sfs = motkin_objectives(g, variant=variant)
    sens = sfs if mech in LOCAL_MECHANISMS else [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY]
    out = _mo.priv_agg(U, list(objective_weights), epsilon=eps, sensitivities=sens, k=k, rng=rng, mechanism=mech)
    return int(out) if single else np.atleast_1d(np.asarray(out, dtype=np.int64))


def _objective_weights(objective_weights, weights, where: str, default=DEFAULT_AGG_WEIGHTS):
    """``objective_weights``, or the deprecated ``weights=`` spelling (warns)."""
    if weights is None:
        return objective_weights
    deprecated(f"{where}(weights=...)", "objective_weights=...", stacklevel=4)
    if objective_weights is not default and objective_weights is not None:
        raise TypeError(f"{where} got both objective_weights and its deprecated spelling weights; "
                        "pass objective_weights")
    return weights


def _as_objectives(x: Any, variant: str) -> np.ndarray:
    if isinstance(x, Graph):
        return motkin_objectives(x, variant=variant)[0]
    U = np.asarray(x, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1 or not np.all(np.isfinite(U)):
        raise ValueError(f"objectives must be a Graph or a finite (n, m) array, got shape {U.shape}")
    return U


def top_k_pareto(graph_or_objectives: Graph | np.ndarray, k: int, *, variant: str = "paper",
                 tie_break: str = "dominance") -> np.ndarray:
    """Non-private baseline: k times the node of largest Pareto score among the remaining nodes.

    Pareto scores are recomputed on the remaining nodes after each pick (as the private version
    does). Ties are the rule, not the exception -- the whole Pareto front has score 0 (12,578 nodes
    of Enron, 23,789 with the paper code's egocentric density) -- and decide what metric C
    measures, so they are broken explicitly: ``tie_break="dominance"`` (default) prefers the node
    that dominates the most remaining nodes, then the smallest index; ``"index"`` takes the
    smallest index.

    >>> U = np.array([[1, 1.0], [3, 0.3], [2, 0.5], [1, 0.0], [0, 0.2]])
    >>> top_k_pareto(U, 2).tolist(), top_k_pareto(U, 2, tie_break="index").tolist()
    ([1, 2], [0, 1])
    """
    from .._dominance import count_dominating

    if tie_break not in ("dominance", "index"):
        raise ValueError(f"tie_break must be 'dominance' or 'index', got {tie_break!r}")
    U = _as_objectives(graph_or_objectives, variant)
    k = check_k(k, U.shape[0])
    remaining = np.arange(U.shape[0])
    picks = []
    for _ in range(k):
        sub = U[remaining]
        ps = _mo.pareto_score(sub)
        if tie_break == "dominance":
            dominated = count_dominating(-sub, strict=True)  # nodes each node dominates
            best = np.flatnonzero(ps == ps.max())
            j = int(best[np.argmax(dominated[best])])
        else:
            j = int(np.argmax(ps))
        picks.append(int(remaining[j]))
        remaining = np.delete(remaining, j)
    return np.asarray(picks, dtype=np.int64)


def _top_k_scores(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, ties to the smaller index, in decreasing order."""
    order = np.lexsort((np.arange(scores.size), -scores))
    return order[:k].astype(np.int64)


def top_k_aggregate(graph_or_objectives: Graph | np.ndarray, k: int, *,
                    objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS, variant: str = "paper",
                    weights: Sequence[float] | None = None) -> np.ndarray:
    """Non-private baseline: the k nodes of largest Σ w_i u_i (ties to the smaller index).

    ``objective_weights`` are the w_i (``weights=`` is the deprecated spelling).

    >>> top_k_aggregate(np.array([[3, 0.3], [2, 1.0], [2, 1.0], [1, 0.0]]), 2).tolist()
    [1, 2]
    """
    U = _as_objectives(graph_or_objectives, variant)
    w = np.asarray(_objective_weights(objective_weights, weights, "top_k_aggregate"), dtype=np.float64)
    if w.shape != (U.shape[1],):
        raise ValueError(f"objective_weights must have one entry per objective ({U.shape[1]}), got {w.tolist()}")
    return _top_k_scores(U @ w, check_k(k, U.shape[0]))


def recall(reference: Sequence[int], selected: Sequence[int]) -> float:
    """|reference ∩ selected| / |reference| (the paper's recall and the thesis' accuracy).

    >>> recall([1, 2, 3], [3, 4, 1])
    0.6666666666666666
    """
    ref = np.unique(np.asarray(reference))
    if ref.size == 0:
        raise ValueError("reference must not be empty")
    return float(np.intersect1d(ref, np.asarray(selected)).size / ref.size)


class MotkinSampler:
    """Repeated DP-MOTkIN selections on one graph, reusing everything that does not depend on ε.

    The reproductions draw thousands of selections from the same graph. The dampened Pareto scores
    of the remaining nodes depend only on which nodes were already picked, never on ε or on the
    run, so they are cached per picked prefix; each pick is then one exponential-mechanism draw
    (Gumbel-max) over the cached scores -- exactly PrivPareto/PrivAgg's distribution (the tests
    compare the k = 1 probabilities with :func:`dpselect.priv_pareto_probabilities` /
    :func:`dpselect.priv_agg_probabilities`). Privacy: each :meth:`sample` call is one ε-edge-DP
    selection of k nodes, ε/k per pick.

    Parameters
    ----------
    graph : Graph
    approach : {"pareto", "agg"}
    mechanism : {"local_dampening", "exponential"} or an alias (LD, EM), default "local_dampening"
        DP-MOTkIN's local or global version.
    variant : {"paper", "code"}
    objective_weights : pair of float (``"agg"`` only)
    local, weights
        Deprecated spellings of ``mechanism`` (True: "local_dampening", False: "exponential") and of
        ``objective_weights`` (``DeprecationWarning``).
    """

    def __init__(self, graph: Graph, approach: str, *, mechanism: Mechanism | None = None, variant: str = "paper",
                 objective_weights: Sequence[float] = DEFAULT_AGG_WEIGHTS, max_cache: int = 64,
                 local: bool | None = None, weights: Sequence[float] | None = None) -> None:
        g = _check_graph(graph)
        if approach not in ("pareto", "agg"):
            raise ValueError(f"approach must be 'pareto' or 'agg', got {approach!r}")
        self.mechanism = _motkin_mechanism(mechanism, local, "MotkinSampler", allowed=MOTKIN_MECHANISMS)
        self.graph, self.approach, self.variant = g, approach, variant
        self.local = self.mechanism == "local_dampening"
        self.U, _ = motkin_objectives(g, variant=variant)
        self.degrees = g.degrees
        self.weights = np.asarray(_objective_weights(objective_weights, weights, "MotkinSampler"), dtype=np.float64)
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
        """(remaining node indices, scores, sensitivity) for the exponential-mechanism draw."""
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
        from ..sensitivity import weighted_sum

        n = self.U.shape[0]
        mask = np.ones(n, dtype=bool)
        mask[list(removed)] = False
        rem = np.flatnonzero(mask)
        if self.approach == "agg":
            sfs = [degree_sensitivity(self.degrees), egocentric_density_sensitivity(self.degrees)]
            agg = self.U @ self.weights
            if not self.local:
                return rem, agg, float(np.abs(self.weights) @ [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY])
            return self._dampened(rem, agg, weighted_sum(self.weights, sfs), removed)
        # Pareto: scores and δ^PS of the remaining nodes from those of all nodes, corrected for the
        # removed ones (see _pareto_delta_removed); equal to recomputing them on U[rem].
        if self._ps_full is None:
            self._ps_full = _mo.pareto_score(self.U).astype(np.float64)
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
        from ..dampening import dampen_with_error

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
            self._full_sf = _mo.pareto_sensitivity(self.U, self._sfs)
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

    @keyword_only("k", "epsilon", "rng")
    def sample(self, *, k: int | None = None, epsilon: float,
               rng: np.random.Generator | int | None = None) -> np.ndarray | int:
        """One ε-edge-DP selection of k node indices (ε/k per pick), in the order picked: an int64 array for
        any int ``k``, one ``int`` when ``k`` is omitted."""
        from ..mechanisms import dampened_select, exponential

        single = k is None
        k = check_k(1 if single else k, self.U.shape[0])
        eps = check_positive(epsilon, "epsilon")
        gen = check_rng(rng)

        def draw(removed, e, kk):
            with self._lock:  # scores and the exact sampler's inputs of one cache entry, together
                rem, s, sens = self.scores(removed)
                exact_in = self._exact_inputs.get(tuple(sorted(removed)) if self.approach == "pareto" else ())
            if not self.local:
                return rem, exponential(s, epsilon=e, sensitivity=sens, k=kk, rng=gen)
            u, sf, err = exact_in  # local dampening on the cached D, sampled exactly
            return rem, dampened_select(u, sf, s, err, e, kk, gen)

        if self.approach == "agg":
            rem, sel = draw((), eps, k)
            out = rem[np.atleast_1d(sel)].astype(np.int64)
            return int(out[0]) if single else out
        picks: list[int] = []
        for _ in range(k):
            rem, sel = draw(tuple(picks), eps / k, 1)
            picks.append(int(rem[sel]))
        return picks[0] if single else np.asarray(picks, dtype=np.int64)

    def probabilities(self, epsilon: float) -> np.ndarray:
        """Exact distribution of the first pick (k = 1) over all nodes."""
        from ..mechanisms import exponential_probabilities

        rem, s, sens = self.scores(())
        out = np.zeros(self.U.shape[0])
        out[rem] = exponential_probabilities(s, epsilon=check_positive(epsilon, "epsilon"), sensitivity=sens)
        return out


# -- PrivTopk with EBC ----------------------------------------------------------------------------
@dataclass
class PrivTopkScores:
    """EBC of every node with its sensitivities, and the ε-independent scores of LD and SLD.

    Build with :func:`prepare_priv_topk`; pass to :func:`priv_topk` instead of the graph to draw
    many selections from one graph without recomputing EBC, the dampened scores D(x, r) (LD) or the
    shifts G_r (SLD).
    """

    utilities: np.ndarray
    sensitivity_function: SensitivityFunction
    global_sensitivity: float
    max_degree: int
    _dampened: tuple | None = field(default=None, repr=False)
    _shifts: tuple | None = field(default=None, repr=False)

    def dampened(self) -> np.ndarray:
        """D(x, r) of thesis Def. 3.3.1 for all nodes (local dampening scores, sensitivity 1)."""
        return self._dampened_with_error()[0]

    def _dampened_with_error(self):
        if self._dampened is None:
            from ..dampening import dampen_with_error

            self._dampened = dampen_with_error(self.utilities, self.sensitivity_function)
        return self._dampened

    def _shift_totals(self):
        if self._shifts is None:
            from ..dampening import shift_totals_with_error

            self._shifts = shift_totals_with_error(self.sensitivity_function, self.utilities.size)
        return self._shifts

    def shifted(self) -> np.ndarray:
        """u(r) − G_r: shifted local dampening scores (sensitivity Δ), thesis Ch. 4 closed form."""
        return self.utilities - self._shift_totals()[0]

    def scores(self, mechanism: Mechanism) -> tuple[np.ndarray, float]:
        """(scores, sensitivity) on which the exponential mechanism (permute-and-flip for
        "permute_and_flip") is the named PrivTopk mechanism (a name or an alias: EM, PF, LD, SLD)."""
        mechanism = check_mechanism(mechanism, allowed=_TOPK_CANONICAL)
        if mechanism in ("exponential", "permute_and_flip"):
            return self.utilities, self.global_sensitivity
        if mechanism == "local_dampening":
            return self.dampened(), 1.0
        return self.shifted(), self.global_sensitivity


def _prepare(g: Graph, max_degree: int | None, where: str, stacklevel: int = 5) -> PrivTopkScores:
    D = public_max_degree(g.degrees, max_degree, where, stacklevel=stacklevel)
    sf = ebc_sensitivity(g, max_degree=D)
    return PrivTopkScores(ebc(g), sf, ebc_global_sensitivity(D), D)


def prepare_priv_topk(graph: Graph, *, max_degree: int | None = None) -> PrivTopkScores:
    """EBC of every node, ΔEBC (thesis Lemma 6.3.2) and the bounded δ^EBC (Def. 6.3.1).

    ``max_degree`` is the public bound D >= 1 on the maximum degree (see
    :func:`dpselect.utilities.graph.ebc_sensitivity`): a graph with a larger degree is a
    ``ValueError``; omitted, the graph's own maximum degree is used with a
    :class:`~dpselect.PrivacyLeakWarning` (as in the thesis' experiments, where it is the published
    maximum degree of each SNAP graph, :data:`dpselect.datasets.PUBLIC_GRAPH_MAX_DEGREE`).

    >>> from dpselect.graphs import from_edges
    >>> s = prepare_priv_topk(from_edges([0, 0, 0], [1, 2, 3]), max_degree=3)
    >>> s.utilities.tolist(), s.global_sensitivity
    ([3.0, 0.0, 0.0, 0.0], 3.0)
    """
    return _prepare(_check_graph(graph), max_degree, "prepare_priv_topk")


@keyword_only("k", "epsilon")
def priv_topk(graph: Graph | PrivTopkScores, *, k: int, epsilon: float,
              mechanism: Mechanism = "shifted_local_dampening",
              max_degree: int | None = None, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """PrivTopk (thesis Alg. 3): k nodes of large egocentric betweenness centrality, ε-edge-DP.

    k successive picks on the nodes not yet chosen, ε/k each (sequential composition: ε in total).

    Parameters
    ----------
    graph : Graph or PrivTopkScores
        The graph, or its precomputed scores from :func:`prepare_priv_topk`.
    k : int
    epsilon : float
        Total privacy budget.
    mechanism : {"exponential", "permute_and_flip", "local_dampening", "shifted_local_dampening"}
        Or an alias (EM, PF, LD, SLD; any case). Exponential mechanism or permute-and-flip with
        ΔEBC = max(D(D−1)/4, D); local dampening with δ^EBC; shifted local dampening (default; closed
        form, ``direction="increasing"``: δ^EBC grows with EBC) with δ^EBC bounded at ΔEBC.
    max_degree : int
        Public bound D >= 1 on the maximum degree, chosen without looking at the graph; a graph with
        a larger degree is a ``ValueError``. Omitted: the graph's own maximum degree, with a
        :class:`~dpselect.PrivacyLeakWarning`. With precomputed scores D was fixed by
        :func:`prepare_priv_topk`: passing a different value is a ``ValueError``.
    rng : Generator, int or None

    Returns
    -------
    numpy.ndarray of k int node indices in the order picked.

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> g = from_edges([0, 0, 0, 1, 4, 4], [1, 2, 3, 2, 5, 6])
    >>> priv_topk(g, k=1, epsilon=1e6, mechanism="shifted_local_dampening", max_degree=6, rng=0).tolist()
    [0]
    """
    if isinstance(graph, PrivTopkScores):
        scores = graph
        if max_degree is not None and max_degree != scores.max_degree:
            raise ValueError(f"max_degree={max_degree!r} cannot be applied to precomputed PrivTopkScores (prepared "
                             f"with max_degree={scores.max_degree}); pass max_degree to prepare_priv_topk instead")
    else:
        scores = _prepare(_check_graph(graph), max_degree, "priv_topk", stacklevel=6)  # +1: keyword_only
    n = scores.utilities.size
    k = check_k(k, n)
    eps = check_positive(epsilon, "epsilon")
    mech = check_mechanism(mechanism, allowed=_TOPK_CANONICAL)
    gen = check_rng(rng)
    from ..mechanisms import dampened_select, exponential, permute_and_flip, shifted_select

    # LD and SLD: the cached D / G with their rigorous error bounds, sampled exactly (dpselect.sampling)
    if mech == "local_dampening":
        D, err = scores._dampened_with_error()
        return np.atleast_1d(np.asarray(dampened_select(scores.utilities, scores.sensitivity_function, D, err, eps, k,
                                                        gen), dtype=np.int64))
    if mech == "shifted_local_dampening":
        G, err = scores._shift_totals()
        return np.atleast_1d(np.asarray(shifted_select(scores.utilities, scores.sensitivity_function, G, err, eps, k,
                                                       gen), dtype=np.int64))
    s, sens = scores.scores(mech)
    fn = permute_and_flip if mech == "permute_and_flip" else exponential
    return np.atleast_1d(np.asarray(fn(s, epsilon=eps, sensitivity=sens, k=k, rng=gen), dtype=np.int64))


def top_k_ebc(graph_or_scores: Graph | PrivTopkScores | np.ndarray, k: int) -> np.ndarray:
    """Non-private baseline: the k nodes of largest EBC (ties to the smaller index)."""
    if isinstance(graph_or_scores, PrivTopkScores):
        u = graph_or_scores.utilities
    elif isinstance(graph_or_scores, Graph):
        u = ebc(graph_or_scores)
    else:
        u = np.asarray(graph_or_scores, dtype=np.float64)
    return _top_k_scores(u, check_k(k, u.size))


# -- demo -----------------------------------------------------------------------------------------
@keyword_only("k", "epsilon", "rng")
def influential_demo_table(graph: Graph, *, k: int = 3, epsilon: float = 1.0,
                           rng: np.random.Generator | int | None = None, max_degree: int | None = None) -> str:
    """A small text table: private top-k influential nodes, local versus global sensitivity.

    Rows: the non-private top-k by aggregate (degree + 100·egocentric density) and by Pareto
    score, then DP-MOTkIN-Agg and DP-MOTkIN-Pareto, local and global, and PrivTopk-SLD/EM on EBC,
    each ε-edge-DP with the given total ε. Columns: the picked node ids and the recall against the
    matching non-private top-k. For the ``dpselect demo`` command. ``max_degree`` is PrivTopk's public
    bound on the maximum degree (see :func:`priv_topk`; omitted: the graph's own, with a
    :class:`~dpselect.PrivacyLeakWarning`).
    """
    g = _check_graph(graph)
    gen = check_rng(rng)
    U, _ = motkin_objectives(g)
    ref_agg = top_k_aggregate(U, k)
    ref_par = top_k_pareto(U, k)
    pt = _prepare(g, max_degree, "influential_demo_table", stacklevel=6)
    ref_ebc = top_k_ebc(pt, k)
    rows = [("top-k aggregate (non-private)", "-", ref_agg, 1.0),
            ("top-k Pareto score (non-private)", "-", ref_par, 1.0),
            ("top-k EBC (non-private)", "-", ref_ebc, 1.0)]
    for mech, tag in (("local_dampening", "local"), ("exponential", "global")):
        sel = MotkinSampler(g, "agg", mechanism=mech).sample(k=k, epsilon=epsilon, rng=gen)
        rows.append((f"DP-MOTkIN-Agg {tag}", f"{epsilon:g}", sel, recall(ref_agg, sel)))
        sel = MotkinSampler(g, "pareto", mechanism=mech).sample(k=k, epsilon=epsilon, rng=gen)
        rows.append((f"DP-MOTkIN-Pareto {tag} (C = {metric_c(ref_par, sel, objectives=U):.2f})", f"{epsilon:g}", sel,
                     recall(ref_par, sel)))
    for mech, tag in (("shifted_local_dampening", "SLD"), ("exponential", "EM")):
        sel = priv_topk(pt, k=k, epsilon=epsilon, mechanism=mech, rng=gen)
        rows.append((f"PrivTopk-{tag} (EBC)", f"{epsilon:g}", sel, recall(ref_ebc, sel)))
    w = max(len(r[0]) for r in rows)
    lines = [f"{'method':<{w}}  {'eps':>5}  {'node ids':<28} recall",
             f"{'-' * w}  {'-' * 5}  {'-' * 28} ------"]
    for name, eps, sel, rec in rows:
        ids = ", ".join(str(int(x)) for x in g.node_ids[sel])
        lines.append(f"{name:<{w}}  {eps:>5}  {ids:<28} {rec:.2f}")
    return "\n".join(lines)
