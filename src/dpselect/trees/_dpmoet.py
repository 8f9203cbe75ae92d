"""DP-MOET: differentially private multi-objective evolutionary decision trees (paper Sec. 6, Alg. 1).

A population of random decision trees (:mod:`dpselect.trees`) evolves by subtree crossover, mutation
and pruning; the only steps that touch the data are the selections, which pick trees by their true
positive rate and true negative rate on the private table through PrivPareto or PrivAgg
(:mod:`dpselect.multiobjective`). Four private variants and two non-private baselines:

============================  ========================================  ==============================
variant                       selection                                 sensitivity
============================  ========================================  ==============================
DP-MOET-Pareto (global)       PrivPareto, exponential mechanism         Δ = |population| − 1
DP-MOET-Pareto (local)        PrivPareto, local dampening               δ^PS from δ^TPR, δ^TNR
DP-MOET-Agg (global)          PrivAgg, exponential mechanism            w_TPR·1 + w_TNR·1
DP-MOET-Agg (local)           PrivAgg, local dampening                  w_TPR·δ^TPR + w_TNR·δ^TNR
NODP-MOET-Pareto / -Agg       the s best Pareto scores / aggregates     (not private)
============================  ========================================  ==============================

An addition outside the paper, ``approach="accuracy"``: one objective, the number of training records a
tree classifies correctly (TP + TN), whose global sensitivity is 1 under add/remove one record (so the
local mechanisms, with the constant sensitivity function 1, have the exponential mechanism's law). A
*count* with sensitivity 1 separates trees much more sharply than a rate with global sensitivity 1,
and accuracy is what a classifier is scored by: it is the default of
:class:`dpselect.sklearn.DPMOETClassifier` (on Adult at ε = 1 with the paper's p, s, k, d, d_max, o it
beats the constant predictor, where "pareto" picks trees of the TPR/TNR front such as "always
positive"; docs/trees.md gives the numbers).

δ^TPR and δ^TNR are the exact element local sensitivities of the core
(:func:`dpselect.utilities.classification.rate_sensitivity`; the paper's printed δ^TPR is not admissible:
the admissibility checker finds a violation on small tables). Neighbours: add/remove one record.

Privacy budget (ε for the whole run). Alg. 1 makes k selections of s trees inside the loop and one
final selection of o trees. ``budget="even"`` (default) splits ε evenly over these k + 1 rounds and,
inside a round, over its picks: every pick of a generation gets ε/((k + 1)·s), every final pick
ε/((k + 1)·o); sequential composition makes the run ε-DP. ``budget="paper-code"`` reproduces the
authors' code, which spends ε/k per round over k rounds *counting the final selection*, so it runs only
k − 1 generations (also ε-DP in total). The genetic operators never look at the data.

Speed: the table is reduced to its distinct rows with their numbers of positive and negative records
(exact: TP and TN are weighted sums), every tree is scored once when it is created, and a whole
population is scored in one vectorised pass (:func:`dpselect.trees.predict_many`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._rng import check_rng
from ..typing import MechanismName, RngLike
from .._validation import check_choice, check_int, check_positive
from ..multiobjective._metric import metric_c  # re-exported: DP-MOET reports it
from ..multiobjective._pareto_score import pareto_score
from ..multiobjective._select import priv_agg, priv_pareto
from ..sensitivity import constant
from ..utilities.classification import rate_sensitivity
from ._tree import Tree, TreeSpace, crossover, mutate, predict_many, prune, random_population
from .._boundary import charge, check_accountant
from ..accounting.accountant import Accountant
from ..accounting.composition import AdaptiveBoundedRangeComposition, PureDPComposition, compose_basic
from ..accounting.guarantees import Guarantee
from ..registry import get_mechanism
from ..vocabulary import LOCAL_MECHANISMS, check_approach, check_mechanism

__all__ = ["MOETResult", "dp_moet", "nodp_moet", "metric_c", "CompressedTable", "APPROACHES", "BUDGETS"]

APPROACHES = ("pareto", "aggregate", "accuracy")  # "agg": alias of "aggregate"
_VARIANT_NAMES = {"pareto": "Pareto", "aggregate": "Agg", "accuracy": "Accuracy"}  # the paper's names
BUDGETS = ("even", "paper-code")
DEFAULT_WEIGHTS = (3.0, 2.0)  # (w_TPR, w_TNR) of the paper's DP-MOET-Agg


class CompressedTable:
    """Distinct rows of a table with their counts of positive and negative records.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_distinct, n_features)
        The distinct rows.
    w_pos, w_neg : numpy.ndarray of int
        The number of positive and negative records of each row.

    Examples
    --------
    >>> from dpselect.datasets import data_path
    >>> from dpselect.tabular import load_nltcs
    >>> c = CompressedTable.from_data(load_nltcs(data_path("tabular", "nltcs.dat")))
    >>> c.X.shape[0], int(c.n_pos + c.n_neg)
    (2569, 21574)
    """

    def __init__(self, X: np.ndarray, w_pos: np.ndarray, w_neg: np.ndarray) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        self.w_pos = np.asarray(w_pos, dtype=np.int64)
        self.w_neg = np.asarray(w_neg, dtype=np.int64)
        self.n_pos = int(self.w_pos.sum())
        self.n_neg = int(self.w_neg.sum())

    @classmethod
    def from_data(cls, data) -> "CompressedTable":
        """The distinct rows of ``data`` with their numbers of positive and negative records.

        Parameters
        ----------
        data : TabularData

        Returns
        -------
        CompressedTable

        Examples
        --------
        >>> from dpselect.tabular import load_table
        >>> c = CompressedTable.from_data(load_table({"a": [0, 1, 1, 1], "y": [0, 1, 1, 0]}, "y",
        ...                                          categories={"a": [0, 1]}))
        >>> c.X.tolist(), c.w_pos.tolist(), c.w_neg.tolist()
        ([[0.0], [1.0]], [0, 2], [1, 1])
        """
        X = np.asarray(data.X, dtype=np.float64)
        y = np.asarray(data.y, dtype=np.int64)
        uniq, inv = np.unique(X, axis=0, return_inverse=True)
        inv = inv.ravel()
        w_pos = np.bincount(inv, weights=y, minlength=uniq.shape[0]).astype(np.int64)
        w_neg = np.bincount(inv, minlength=uniq.shape[0]).astype(np.int64) - w_pos
        return cls(uniq, w_pos, w_neg)

    def counts(self, trees: Sequence[Tree]) -> tuple[np.ndarray, np.ndarray]:
        """(TP, TN) of every tree.

        Parameters
        ----------
        trees : sequence of dpselect.trees.Tree

        Returns
        -------
        (TP, TN) : (numpy.ndarray, numpy.ndarray)
            int64 arrays of shape (len(trees),).

        Examples
        --------
        >>> from dpselect.tabular import load_table
        >>> t = load_table({"a": [0, 1, 2] * 20, "y": [0, 1, 1] * 20}, "y", categories={"a": [0, 1, 2]})
        >>> from dpselect.trees import TreeSpace, random_population
        >>> tp, tn = CompressedTable.from_data(t).counts(random_population(TreeSpace.from_data(t), 4, 1, rng=0))
        >>> tp.shape, tn.dtype
        ((4,), dtype('int64'))
        """
        pred = predict_many(trees, self.X).astype(np.int64)
        tp = pred @ self.w_pos
        tn = self.n_neg - pred @ self.w_neg
        return tp, tn


@dataclass
class MOETResult:
    """Output of a DP-MOET run: the o selected trees (the private release) and how they were made.

    ``trees``, ``variant``, ``epsilon``, ``budget`` and ``generations`` are what the privacy analysis
    covers (the trees are the ε-DP output; the rest is public). ``objectives`` and ``history`` are
    **exact, non-private statistics of the training records** (the TPR and TNR of the selected trees,
    and of every tree of every generation): :func:`dp_moet` records them only when called with
    ``exact_statistics=True`` (for experiments that measure the selection, e.g. metric C), and then the
    result **must not be released**; otherwise ``objectives`` is ``None`` and ``history`` empty.
    :func:`nodp_moet` (not private at all) always records them.

    Parameters
    ----------
    trees : list of dpselect.trees.Tree
        The o selected trees, in the order picked (the ε-DP release).
    objectives : numpy.ndarray of shape (o, 2) or None
        Exact training (TPR, TNR) of the selected trees (NOT private), or None.
    variant : str
        E.g. "DP-MOET-Pareto-local".
    epsilon : float or None
    budget : str
    generations : int
    history : list of numpy.ndarray
        Exact (TPR, TNR) of every generation (NOT private); empty unless recorded.

    Examples
    --------
    >>> from dpselect.tabular import load_table
    >>> t = load_table({"a": [0, 1, 2] * 20, "y": [0, 1, 1] * 20}, "y", categories={"a": [0, 1, 2]})
    >>> res = dp_moet(t, epsilon=1.0, population=6, selection=2, generations=1, depth=1, max_depth=2, output=2,
    ...               rng=0)
    >>> len(res.trees), res.generations, res.objectives, res.history
    (2, 1, None, [])
    """

    trees: list
    objectives: np.ndarray | None  # (o, 2): exact TPR, TNR on the training data (NOT private), or None
    variant: str
    epsilon: float | None
    budget: str
    generations: int
    history: list = field(default_factory=list)  # exact (TPR, TNR) of every generation (NOT private)


def _rates(tp, tn, n_pos, n_neg):
    tpr = tp / n_pos if n_pos > 0 else np.zeros(len(tp))
    tnr = tn / n_neg if n_neg > 0 else np.zeros(len(tn))
    return np.column_stack([tpr, tnr]).astype(np.float64)


def _select(tp, tn, table: CompressedTable, how: str, approach: str, weights, eps: float | None, n_pick: int, gen):
    """Indices of n_pick trees (private when eps is given); ``how`` is "nodp" or a canonical mechanism name."""
    if approach == "accuracy":
        # the number of training records a tree classifies correctly, TP + TN: adding or removing one
        # record moves it by at most 1 for every tree (global sensitivity 1, also as the local mechanisms'
        # constant sensitivity function, with which local dampening is the exponential mechanism)
        C = (tp + tn).astype(np.float64)[:, None]
        if how == "nodp" or eps is None:
            return _nodp_select(C, "aggregate", np.ones(1), n_pick, gen)
        acc_sens: list[Any] = [constant(len(tp), 1.0) if how in LOCAL_MECHANISMS else 1.0]
        out = priv_agg(C, np.ones(1), epsilon=eps, sensitivities=acc_sens, mechanism=how, k=n_pick, rng=gen)
        return np.atleast_1d(np.asarray(out, dtype=np.int64))
    U = _rates(tp, tn, table.n_pos, table.n_neg)
    if how == "nodp" or eps is None:
        return _nodp_select(U, approach, weights, n_pick, gen)
    mech = how
    sens: list[Any]
    if mech not in LOCAL_MECHANISMS:
        sens = [1.0, 1.0]
    else:
        sens = [rate_sensitivity(tp, table.n_pos - tp, name="tpr"), rate_sensitivity(tn, table.n_neg - tn, name="tnr")]
    if approach == "pareto":
        out = priv_pareto(U, epsilon=eps, sensitivities=sens, mechanism=mech, k=n_pick, rng=gen)
    else:
        out = priv_agg(U, np.asarray(weights, float), epsilon=eps, sensitivities=sens, mechanism=mech, k=n_pick,
                       rng=gen)
    return np.atleast_1d(np.asarray(out, dtype=np.int64))


def _nodp_select(U: np.ndarray, approach: str, weights, n_pick: int, gen) -> np.ndarray:
    """The non-private selection: repeatedly the best Pareto score (recomputed) or aggregate; ties at random."""
    remaining = np.arange(U.shape[0])
    chosen = []
    agg = U @ np.asarray(weights, float)
    for _ in range(n_pick):
        score = pareto_score(U[remaining]).astype(float) if approach == "pareto" else agg[remaining]
        best = np.flatnonzero(score == score.max())
        pick = int(best[gen.integers(best.size)]) if best.size > 1 else int(best[0])
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64)


@dataclass(frozen=True)
class _Plan:
    """A DP-MOET run on checked values (built without drawing a random bit)."""

    approach: str
    how: str                 # "nodp" or a canonical mechanism name
    weights: np.ndarray
    population: int
    selection: int
    output: int
    depth: int
    max_depth: int
    budget: str
    eps: float | None        # total ε (None: not private)
    n_gen: int               # generations run
    rounds: int              # selection rounds the budget is split over
    table: CompressedTable
    space: TreeSpace

    @property
    def eps_round(self) -> float | None:
        return None if self.eps is None else self.eps / self.rounds

    @property
    def picks(self) -> list[int]:
        """The number of trees picked in each selection round, in order (n_gen rounds of s, then o)."""
        return [self.selection] * self.n_gen + [self.output]

    @property
    def guarantee(self) -> Guarantee | None:
        """What the run is charged (None when not private); see :func:`_moet_guarantee`."""
        return None if self.eps is None else _moet_guarantee(self.how, self.eps / self.rounds, self.picks)


def _moet_guarantee(how: str, eps_round: float, picks: list[int]) -> Guarantee:
    """The guarantee of a DP-MOET run: a sequential composition of its selection rounds (paper Alg. 1).

    Round j is PrivPareto / PrivAgg picking ``picks[j]`` trees with ``eps_round`` (ε_round/picks[j] per
    pick, on the remaining trees), so the run is an adaptive sequence of single picks; the genetic
    operators never look at the data. When every pick has the same ε0 (s = o, the paper's setting) the
    charge is that adaptive composition of all the picks as the mechanism's registry spec states it
    (``AdaptiveBoundedRangeComposition(ε0, N)`` for the bounded-range mechanisms, exponential and local
    dampening; ``PureDPComposition(ε0, N)`` for permute-and-flip and Laplace report-noisy-max): ε at δ = 0,
    less at δ > 0. Otherwise (s ≠ o: two per-pick ε0's) basic composition of the rounds, ``PureDP(ε)``.
    """
    spec = get_mechanism(how)
    per_round = [spec.privacy(eps_round, k=n) for n in picks]
    if len(set(picks)) == 1 and picks[0] > 1:
        g = per_round[0]
        total = picks[0] * len(picks)
        if isinstance(g, AdaptiveBoundedRangeComposition):
            return AdaptiveBoundedRangeComposition(g.epsilon0, total)
        if isinstance(g, PureDPComposition):
            return PureDPComposition(g.epsilon0, total)
    return compose_basic(per_round)


def _moet_plan(data, epsilon, approach, how, *, weights, population, selection, generations, depth, max_depth,
               output, budget, compressed=None) -> _Plan:
    approach = check_approach(approach, allowed=APPROACHES)
    budget = check_choice(budget, "budget", BUDGETS)
    p = check_int(population, "population", minimum=2)
    if p % 2:
        raise ValueError(f"population must be even (Alg. 1 makes p/2 pairs of children), got {p}")
    s = check_int(selection, "selection", minimum=2, maximum=p)
    k = check_int(generations, "generations", minimum=1)
    if budget == "paper-code" and k < 2:
        raise ValueError(f"generations must be >= 2 with budget='paper-code' (it runs k - 1 generations), got {k}")
    d = check_int(depth, "depth", minimum=0)
    dmax = check_int(max_depth, "max_depth", minimum=d)
    o = check_int(output, "output", minimum=1, maximum=p + s)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (2,) or not np.all(np.isfinite(w)) or not np.any(w != 0):
        raise ValueError(f"objective_weights must be two finite numbers (w_TPR, w_TNR), not both 0, got {weights!r}")
    eps = None if how == "nodp" else check_positive(epsilon, "epsilon")
    if not hasattr(data, "categorical") or not hasattr(data, "X"):
        raise TypeError(f"data must be a TabularData (its schema defines the trees), got {type(data).__name__}")
    if compressed is None:
        table = CompressedTable.from_data(data)
    elif isinstance(compressed, CompressedTable):
        table = compressed
        if table.n_pos + table.n_neg != data.X.shape[0] or table.X.shape[1] != data.X.shape[1]:
            raise ValueError("compressed does not match data (use CompressedTable.from_data(data))")
    else:
        raise TypeError(f"compressed must be a CompressedTable, got {type(compressed).__name__}")
    # A table without positives (or negatives) is a dataset of the public domain like any other: TPR
    # (TNR) is then 0 for every tree (module convention of dpselect.utilities.classification, δ = 1), and
    # the run completes; refusing it would be an error that depends on the data (a release).
    space = TreeSpace.from_data(data)
    n_gen, rounds = (k, k + 1) if budget == "even" else (k - 1, k)
    return _Plan(approach, how, w, p, s, o, d, dmax, budget, eps, n_gen, rounds, table, space)


def _evolve(plan: _Plan, gen: np.random.Generator, exact_statistics: bool = True) -> MOETResult:
    """Alg. 1 on a checked plan: all the randomness of a run."""
    table, space, approach, how, w = plan.table, plan.space, plan.approach, plan.how, plan.weights
    p, s, o, dmax, eps_round = plan.population, plan.selection, plan.output, plan.max_depth, plan.eps_round
    pop = random_population(space, p, plan.depth, rng=gen)
    tp, tn = table.counts(pop)
    history = []
    for _ in range(plan.n_gen):
        idx = _select(tp, tn, table, how, approach, w, eps_round, s, gen)
        pop = [pop[i] for i in idx]
        tp, tn = tp[idx], tn[idx]
        children: list = []
        for _ in range(p // 2):
            cur = pop + children
            i, j = gen.choice(len(cur), size=2, replace=False)
            c1, c2 = crossover(cur[i], cur[j], rng=gen)
            c1 = prune(mutate(c1, space, dmax, rng=gen), dmax, rng=gen)
            c2 = prune(mutate(c2, space, dmax, rng=gen), dmax, rng=gen)
            children += [c1, c2]
        ctp, ctn = table.counts(children)
        pop = pop + children
        tp, tn = np.concatenate([tp, ctp]), np.concatenate([tn, ctn])
        if exact_statistics:
            history.append(_rates(tp, tn, table.n_pos, table.n_neg))
    idx = _select(tp, tn, table, how, approach, w, eps_round, o, gen)
    trees = [pop[i] for i in idx]
    # "-local" / "-global" for the paper's two private variants, else the mechanism's name
    suffix = {"nodp": "", "local_dampening": "-local", "exponential": "-global"}.get(how, f"-{how}")
    variant = f"{'NODP' if how == 'nodp' else 'DP'}-MOET-{_VARIANT_NAMES[approach]}" + suffix
    objectives = _rates(tp[idx], tn[idx], table.n_pos, table.n_neg) if exact_statistics else None
    return MOETResult(trees, objectives, variant, plan.eps, plan.budget, plan.n_gen, history)


def _run(data, epsilon, approach, how, *, weights, population, selection, generations, depth, max_depth,
         output, budget, rng, compressed=None, exact_statistics=True, accountant=None,
         label: str = "dp_moet") -> MOETResult:
    acc = check_accountant(accountant)
    gen = check_rng(rng)
    plan = _moet_plan(data, epsilon, approach, how, weights=weights, population=population, selection=selection,
                      generations=generations, depth=depth, max_depth=max_depth, output=output, budget=budget,
                      compressed=compressed)
    if plan.guarantee is not None:
        charge(acc, plan.guarantee, label=label, neighbours="add_remove")
    return _evolve(plan, gen, exact_statistics)


def dp_moet(data: Any, *, epsilon: float, approach: str = "pareto", mechanism: MechanismName | None = None,
            objective_weights: Sequence[float] = DEFAULT_WEIGHTS, population: int = 30, selection: int = 3,
            generations: int = 3, depth: int = 4, max_depth: int = 10, output: int = 3, budget: str = "even",
            rng: RngLike = None, compressed: CompressedTable | None = None, exact_statistics: bool = False,
            accountant: Accountant | None = None) -> MOETResult:
    """DP-MOET (paper Alg. 1): evolve decision trees and privately select ``output`` of them by (TPR, TNR).

    Parameters
    ----------
    data : TabularData
        The private training table (binary label).
    epsilon : float
        Total privacy budget of the run (see the module docstring for its split). Keyword-only.
    approach : {"pareto", "aggregate", "accuracy"}
        PrivPareto on (TPR, TNR), PrivAgg on w_TPR·TPR + w_TNR·TNR, or (not in the paper) the number
        of correctly classified records TP + TN with sensitivity 1 (module docstring).
    mechanism : str, default "local_dampening"
        One of :data:`dpselect.vocabulary.MECHANISMS` (or an alias: EM, PF, RNM, LD, SLD). Local
        mechanisms use the TPR/TNR sensitivity functions (DP-MOET-…-local with "local_dampening"),
        global ones the global sensitivities 1 and 1 (DP-MOET-…-global with "exponential").
    objective_weights : (w_TPR, w_TNR)
        Only for ``approach="aggregate"`` (alias "agg"; paper: 3, 2).
    population, selection, generations, depth, max_depth, output : int
        p, s, k, d, d_max, o of Alg. 1 (paper Table 1 setting: 30, 3, 3, 4, 10, 3).
    budget : {"even", "paper-code"}
    rng : Generator, int or None
    compressed : CompressedTable, optional
        ``CompressedTable.from_data(data)``, to reuse across runs on the same table.
    exact_statistics : bool, default False
        **Not private.** Also record the exact training TPR/TNR of the selected trees
        (``objectives``) and of every generation (``history``), for experiments that measure the
        selection (metric C). A result holding them must not be released. Off: ``objectives`` is
        ``None`` and ``history`` empty, and the result holds only the ε-DP trees and public settings.
    accountant : dpselect.Accountant, optional
        Charged the whole run under the label ``"dp_moet"`` (glossary: [accountant][glossary-accountant]).
        The run is a sequence of single picks (the rounds of
        PrivPareto / PrivAgg, each on trees that depend on earlier picks): when every pick gets the same
        ε0 (``selection == output``, the paper's setting) the charge is their adaptive composition as the
        mechanism states it, ``AdaptiveBoundedRangeComposition(ε0, N)`` for the bounded-range
        exponential mechanism and local dampening and ``PureDPComposition(ε0, N)`` for the pure-DP ones
        (ε at δ = 0, less at δ > 0); otherwise ``PureDP(ε)`` (basic composition of the rounds).

    Returns
    -------
    MOETResult
        ``trees`` (o trees in the order picked); with ``exact_statistics=True`` also their
        ``objectives`` (TPR, TNR on ``data``, exact: not private).

    Privacy
    -------
    ε-DP for add/remove one record: every selection is ε-DP PrivPareto/PrivAgg with its share of ε, and
    everything else is data-independent randomness (sequential composition). The guarantee covers
    ``trees`` (and the public settings), not ``objectives`` / ``history``. Every table of the public
    domain is accepted, including one without positive or without negative records (TPR or TNR is
    then 0 for every tree): the run never fails because of the records.

    Examples
    --------
    >>> from dpselect.datasets import data_path
    >>> from dpselect.tabular import load_nltcs
    >>> data = load_nltcs(data_path("tabular", "nltcs.dat"))
    >>> res = dp_moet(data, epsilon=1.0, population=10, selection=2, generations=1, depth=2, max_depth=3,
    ...               output=2, rng=0)
    >>> len(res.trees), res.variant, res.objectives
    (2, 'DP-MOET-Pareto-local', None)
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=2.0)
    >>> res = dp_moet(data, epsilon=1.0, population=10, selection=2, generations=1, depth=2, max_depth=3,
    ...               output=2, rng=0, accountant=acc)
    >>> acc.history[-1].label, acc.history[-1].guarantee   # 2 rounds of 2 picks of ε/4 each
    ('dp_moet', AdaptiveBoundedRangeComposition(epsilon0=0.25, k=4, resolution=...))
    """
    how = "local_dampening" if mechanism is None else check_mechanism(mechanism)
    if not isinstance(exact_statistics, (bool, np.bool_)):
        raise TypeError(f"exact_statistics must be True or False (True records NON-private training statistics), "
                        f"got {exact_statistics!r}")
    return _run(data, epsilon, approach, how, weights=objective_weights, population=population, selection=selection,
                generations=generations, depth=depth, max_depth=max_depth, output=output, budget=budget, rng=rng,
                compressed=compressed, exact_statistics=bool(exact_statistics), accountant=accountant)


def nodp_moet(data: Any, *, approach: str = "pareto", objective_weights: Sequence[float] = DEFAULT_WEIGHTS,
              population: int = 30, selection: int = 3, generations: int = 3, depth: int = 4, max_depth: int = 10,
              output: int = 3, budget: str = "even", rng: RngLike = None,
              compressed: CompressedTable | None = None) -> MOETResult:
    """NODP-MOET-Pareto / -Agg: Alg. 1 with the exact best Pareto scores / aggregates (not private).

    Selection of s trees: repeatedly the tree with the highest Pareto score among the remaining ones
    (scores recomputed after each pick, as PrivPareto does) or the highest aggregate; ties broken at
    random. ``budget`` only sets the number of generations (k, or k − 1 for "paper-code").
    ``objective_weights`` as in :func:`dp_moet`.

    Parameters
    ----------
    data, approach, objective_weights, rng, compressed
        As in :func:`dp_moet` (no ``epsilon``, no ``accountant``: nothing private is released).
    population, selection, generations, depth, max_depth, output, budget
        As in :func:`dp_moet`.

    Returns
    -------
    MOETResult
        With the exact ``objectives`` and ``history`` (``epsilon`` is None).

    Examples
    --------
    >>> from dpselect.tabular import load_table
    >>> t = load_table({"a": [0, 1, 2] * 20, "y": [0, 1, 1] * 20}, "y", categories={"a": [0, 1, 2]})
    >>> res = nodp_moet(t, population=6, selection=2, generations=1, depth=1, max_depth=2, output=2, rng=0)
    >>> res.variant, res.objectives.shape, res.epsilon
    ('NODP-MOET-Pareto', (2, 2), None)
    """
    return _run(data, None, approach, "nodp", weights=objective_weights, population=population, selection=selection,
                generations=generations, depth=depth, max_depth=max_depth, output=output, budget=budget, rng=rng,
                compressed=compressed)
