"""DiffPID3: differentially private ID3 decision trees (thesis Ch. 7, Alg. 4) in three flavours, the values of
``mechanism=`` of :func:`diffpid3`:

* ``"exponential"`` — GlobalDiffPID3 (Friedman and Schuster 2010): the split attribute is chosen by
  the exponential mechanism on information gain IG with ΔIG = log2(N + 1) + 1/ln 2;
* ``"local_dampening"`` (the default) — LocalDiffPID3: local dampening with the element local sensitivity
  of IG (thesis Lemmas 7.3.1/7.3.2, see :mod:`dpselect.utilities.information_gain`);
* ``"shifted_local_dampening"`` — ShiftedLocalDiffPID3: shifted local dampening (direction
  "increasing": the sensitivity of IG grows with IG) with the same sensitivity function.

Alg. 4: with total budget B and depth d, every level gets B / (d + 1); a node spends the fraction
f = ``budget_split`` of it, ε_count = f·B/(d + 1), on a noisy count of its records and the rest,
ε_select = (1 − f)·B/(d + 1), on either the split selection or the noisy class counts of a leaf. The
thesis splits evenly (f = 1/2, the default: ε = B/(2(d + 1)) each); f is a public parameter of the
mechanism, fixed before the data are seen (it may be searched by a private search such as
:class:`~dpselect.sklearn.PrivateSearchCV`, never chosen from the training records). Nodes of one level
hold disjoint records (parallel composition), so the tree is B-DP (add/remove one record) for every f.
A node becomes a leaf when no attribute is left, the depth is exhausted, or
N_T / (t·|C|) < √2/2 with N_T the noisy count (Laplace noise of scale 1/ε_count) and t the largest number
of values of a remaining attribute; a leaf predicts argmax_c of noisy class counts (NoisyCount: Laplace
noise of scale 1/ε_select).
Splits are multiway on discrete attributes (one child per value); numeric attributes (scaled to [0, 1])
are discretised into ``bins`` equal-width bins first. An attribute is used at most once on a path.

Public size bound: ΔIG and the saturation distance of the local sensitivity need a public bound N on
table sizes (``n_max``), the same for every node. The thesis writes ΔIG with "the size of the dataset"
and its experiments use the published sizes (NLTCS 21,574, ACS 47,461, Adult 45,222 records;
:data:`dpselect.datasets.PUBLIC_TABLE_SIZE`). A per-node size, or the training table's own size, would
itself be private: omitting ``n_max`` falls back to the training table's size with a
:class:`~dpselect.PrivacyLeakWarning`, and a table larger than ``n_max`` is a ``ValueError``.

Sampling is exact (:mod:`dpselect.sampling`), also for the local variants: local dampening takes
D(T, A) with a rigorous error bound from the core engine (:func:`dpselect.dampening.dampen_with_error`
with the ``elementwise`` sensitivity function
:func:`~dpselect.utilities.information_gain.ig_sensitivity`, whose block walker evaluates
thousands of distances per call) and samples with :func:`dpselect.mechanisms.dampened_select`; shifted
local dampening takes the shift G with a rigorous bound from
:func:`~dpselect.utilities.information_gain.ig_shift_with_error` (a closed form over the upper envelope
of the sensitivity curves, much faster than walking the ~N distances: docs/trees.md; equal to the core's
:func:`~dpselect.dampening.shift_totals_with_error` within the bounds) and samples with
:func:`dpselect.mechanisms.shifted_select`. Near-ties are settled with the exact rational D and G of the
core (:func:`~dpselect.dampening.dampen_exact`, :func:`~dpselect.dampening.shift_total_exact`). The
law is that of :func:`dpselect.local_dampening` / :func:`dpselect.shifted_local_dampening` with that
sensitivity function.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np

from .. import mechanisms
from .._rng import check_rng
from ..typing import MechanismName, RngLike
from .._validation import check_int, check_positive, short_repr
from ..dampening import dampen
from ..sampling import laplace_below
from ..tabular import TabularData
from ..utilities.information_gain import (IGTables, ig_count_tables, ig_global_sensitivity, ig_sensitivity,
                                          ig_shift_with_error, public_n_max)
from .._boundary import charge, check_accountant
from ..accounting.accountant import Event
from ..exceptions import _release_scope
from ..accounting.accountant import Accountant
from ..accounting.composition import PureDPComposition, compose_basic
from ..accounting.guarantees import PureDP
from ..registry import get_mechanism, names

__all__ = [
    "DiffPID3Tree",
    "diffpid3",
    "discretise",
    "dampen_ig",
    "ig_shift",
    "DIFFPID3_MECHANISMS",
]


def _split_mechanisms() -> tuple[str, ...]:
    """The registry's Gumbel-noise mechanisms: the exponential mechanism on IG (global) or on its dampened or
    shifted scores (local), whose D or G the tree caches per node."""
    return names(noise="gumbel", where=lambda m: m.kind == "global" or m.cacheable)


#: The split-selection mechanisms of DiffPID3 (a registry query; aliases EM, LD, SLD).
DIFFPID3_MECHANISMS = _split_mechanisms()


def discretise(data: TabularData, bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of every column: categorical codes as they are, numeric [0, 1] values in ``bins`` bins.

    Parameters
    ----------
    data : TabularData
        Numeric columns scaled to [0, 1].
    bins : int, default 10

    Returns
    -------
    (codes, n_values) : (numpy.ndarray of shape (n, p), numpy.ndarray of shape (p,))
        int64 codes; bin k of a numeric column holds values in [k/b, (k+1)/b) (1 in the last).

    Examples
    --------
    >>> from dpselect.tabular import load_table
    >>> codes, nv = discretise(load_table({"x": [0.0, 0.5, 1.0], "y": [0, 1, 1]}, "y", feature_bounds={"x": (0, 1)}),
    ...                        bins=2)
    >>> codes.ravel().tolist(), nv.tolist()
    ([0, 1, 1], [2])
    """
    b = check_int(bins, "bins", minimum=1)
    X = np.asarray(data.X, dtype=np.float64)
    cat = np.asarray(data.categorical, bool)
    codes = np.empty(X.shape, dtype=np.int64)
    codes[:, cat] = X[:, cat].astype(np.int64)
    codes[:, ~cat] = np.minimum(np.floor(X[:, ~cat] * b), b - 1).astype(np.int64)
    n_values = np.where(cat, np.asarray(data.n_values, np.int64), b)
    return codes, n_values


def _check_n_max(tables: IGTables, n_max: int | None) -> int:
    if n_max is None:
        raise TypeError("n_max is required: a public upper bound on the number of records")
    return public_n_max(tables.n_records, n_max, "n_max check")


def dampen_ig(tables: IGTables, n_max: int, utilities: np.ndarray | None = None) -> np.ndarray:
    """The dampening function D(T, A) of IG for every attribute, with δ = the IG sensitivity function.

    A thin wrapper: ``dpselect.dampening.dampen(u, ig_sensitivity(tables, n_max))`` (the core
    engine's block walker; :func:`dpselect.dampening.dampen_with_error` gives D with its rigorous error
    bound, which :func:`diffpid3` samples with). ``n_max`` is required here (no fallback).

    Parameters
    ----------
    tables : IGTables
        The node's count tables.
    n_max : int
        Public bound N >= the number of records.
    utilities : numpy.ndarray, optional
        IG of every attribute (default: computed from ``tables``).

    Returns
    -------
    numpy.ndarray of float64, shape (n_attributes,)

    Examples
    --------
    >>> from dpselect.utilities.information_gain import IGTables, ig_count_tables
    >>> tabs = IGTables(ig_count_tables(np.array([[0, 1], [1, 1], [1, 0], [0, 0]]), np.array([0, 1, 1, 0]), [2, 2], 2))
    >>> dampen_ig(tabs, n_max=10).shape
    (2,)
    """
    n_max = _check_n_max(tables, n_max)
    u = tables.utilities() if utilities is None else np.asarray(utilities, dtype=np.float64)
    return dampen(u, ig_sensitivity(tables, n_max))


def ig_shift(tables: IGTables, n_max: int) -> np.ndarray:
    """G_A = Σ_{t < N} (ΔIG − δ(T, t, A)) for every attribute: the shift of shifted local dampening.

    The float values of :func:`~dpselect.utilities.information_gain.ig_shift_with_error` (equal to
    ``dpselect.dampening.shift_totals(ig_sensitivity(tables, n_max), n)`` within its bound).

    Parameters
    ----------
    tables : IGTables
    n_max : int
        Public bound N >= the number of records.

    Returns
    -------
    numpy.ndarray of float64, shape (n_attributes,)

    Examples
    --------
    >>> from dpselect.utilities.information_gain import IGTables, ig_count_tables
    >>> tabs = IGTables(ig_count_tables(np.array([[0, 1], [1, 1], [1, 0], [0, 0]]), np.array([0, 1, 1, 0]), [2, 2], 2))
    >>> ig_shift(tabs, n_max=10).shape
    (2,)
    """
    return ig_shift_with_error(tables, _check_n_max(tables, n_max))[0]


@dataclass
class DiffPID3Tree:
    """A multiway decision tree on discretised attributes (arrays; children of a node are contiguous).

    ``feature[i]`` is the attribute split on (-1 at a leaf), the child for value v is
    ``first_child[i] + v``, ``label[i]`` the class of a leaf. ``bins`` and the column kinds say how
    numeric columns are discretised at prediction time.

    Parameters
    ----------
    feature, first_child, label : numpy.ndarray
        One entry per node (see above).
    depth, bins : int
    epsilon : float
        The total budget it was grown with.
    mechanism : str
        The split selection's canonical name.

    Examples
    --------
    >>> from dpselect.tabular import load_table
    >>> t = load_table({"x": [0, 1] * 50, "y": [0, 1] * 50}, "y", categories={"x": [0, 1]})
    >>> tree = diffpid3(t, epsilon=50.0, depth=1, n_max=100, rng=0)
    >>> tree.n_nodes, tree.feature.tolist(), tree.label.tolist()
    (3, [0, -1, -1], [0, 0, 1])
    """

    feature: np.ndarray
    first_child: np.ndarray
    label: np.ndarray
    depth: int
    bins: int
    epsilon: float
    mechanism: str

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    def predict_codes(self, codes: np.ndarray) -> np.ndarray:
        """Classes of records given as discretised codes (n, p), routed level by level.

        Parameters
        ----------
        codes : array of int, shape (n, p)
            As :func:`discretise` gives them.

        Returns
        -------
        numpy.ndarray of int8, shape (n,)

        Examples
        --------
        >>> from dpselect.tabular import load_table
        >>> t = load_table({"x": [0, 1] * 50, "y": [0, 1] * 50}, "y", categories={"x": [0, 1]})
        >>> diffpid3(t, epsilon=50.0, depth=1, n_max=100, rng=0).predict_codes([[0], [1]]).tolist()
        [0, 1]
        """
        codes = np.asarray(codes, dtype=np.int64)
        n = codes.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        f0 = np.maximum(self.feature, 0)
        for _ in range(self.depth):
            f = self.feature[node]
            child = self.first_child[node] + codes[rows, f0[node]]
            node = np.where(f >= 0, child, node)
        return self.label[node].astype(np.int8)

    def predict(self, data: TabularData) -> np.ndarray:
        """Classes of the records of a :class:`~dpselect.tabular.TabularData`.

        Parameters
        ----------
        data : TabularData

        Returns
        -------
        numpy.ndarray of int8, shape (data.n_records,)

        Examples
        --------
        >>> from dpselect.tabular import load_table
        >>> t = load_table({"x": [0, 1] * 50, "y": [0, 1] * 50}, "y", categories={"x": [0, 1]})
        >>> diffpid3(t, epsilon=50.0, depth=1, n_max=100, rng=0).predict(t)[:4].tolist()
        [0, 1, 0, 1]
        """
        codes, _ = discretise(data, self.bins)
        return self.predict_codes(codes)

    def accuracy(self, data: TabularData) -> float:
        """The fraction of the records of ``data`` whose class the tree predicts.

        Parameters
        ----------
        data : TabularData

        Returns
        -------
        float

        Examples
        --------
        >>> from dpselect.tabular import load_table
        >>> t = load_table({"x": [0, 1] * 50, "y": [0, 1] * 50}, "y", categories={"x": [0, 1]})
        >>> diffpid3(t, epsilon=50.0, depth=1, n_max=100, rng=0).accuracy(t)
        1.0
        """
        return float(np.mean(self.predict(data) == data.y))


@dataclass(frozen=True)
class _Plan:
    """A DiffPID3 run on checked values: what the tree is grown from, and the guarantee it is charged."""

    codes: np.ndarray
    n_values: np.ndarray
    y: np.ndarray
    mechanism: str
    epsilon: float       # the total budget B
    eps_count: float     # f·B/(d + 1): the noisy count at each node of a level
    eps_select: float    # (1 − f)·B/(d + 1): the split selection or the leaf's noisy class counts
    budget_split: float  # f
    depth: int
    bins: int
    n_max: int

    @property
    def guarantee(self) -> PureDPComposition | PureDP:
        """What the proof of Alg. 4 certifies (see :func:`_diffpid3_guarantee`)."""
        return _diffpid3_guarantee(self.epsilon, self.depth, self.budget_split)


def _check_budget_split(budget_split: Any) -> float:
    """A finite real number in the open interval (0, 1)."""
    if isinstance(budget_split, bool) or not isinstance(budget_split, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"budget_split must be a number in (0, 1), got {short_repr(budget_split)} "
                        f"({type(budget_split).__name__})")
    f = float(budget_split)
    if not (0.0 < f < 1.0):     # (NaN fails the comparison)
        raise ValueError(f"budget_split must be a number in (0, 1) (the fraction of each level's budget spent "
                         f"on the noisy count), got {short_repr(budget_split)}")
    return f


def _level_budgets(epsilon: float, depth: int, budget_split: float) -> tuple[float, float]:
    """(ε_count, ε_select) of every node: f·B/(d + 1) and (1 − f)·B/(d + 1).

    ``budget_split = 0.5`` gives B/(2(d + 1)) twice, computed as before the parameter existed (the same
    floats, so the same draws)."""
    if budget_split == 0.5:
        half = epsilon / (2 * (depth + 1))
        return half, half
    level = epsilon / (depth + 1)
    return budget_split * level, (1.0 - budget_split) * level


def _diffpid3_guarantee(epsilon: float, depth: int, budget_split: float = 0.5) -> PureDPComposition | PureDP:
    """The guarantee of a DiffPID3 tree (thesis Alg. 4) of total budget ``epsilon`` = B and depth d.

    The records of the nodes of one level are disjoint, so by parallel composition all the noisy counts
    of a level are one ε_count-DP release and all its selections (split attributes, or the leaves'
    noisy class counts) one ε_select-DP release: a leaf's report-noisy-max with Laplace noise is pure DP
    only, so the step is charged as pure DP even where the splits are bounded range. The d + 1 levels make
    2(d + 1) steps, each chosen after the earlier outputs (adaptive composition); at δ = 0 they add up to
    B. (The last level spends only its selection step; the charge is the proof's, which reserves both.)

    * ``budget_split = 0.5`` (the thesis): ``PureDPComposition(B/(2(d + 1)), 2(d + 1))``, the optimal
      composition of 2(d + 1) equal pure-DP steps (less than B at δ > 0);
    * any other split: the steps are unequal (ε_count ≠ ε_select) and the library has no class for the
      optimal composition of unequal pure-DP parts, so the guarantee is ``PureDP`` of their sum,
      Σ_levels (ε_count + ε_select) = B, rounded up (the exact sum of the floats the tree spends, one ulp
      up where it is not a float: never below what is spent) — basic composition, the same value as
      :func:`~dpselect.accounting.compose_basic` of the 2(d + 1) parts. At δ = 0 it is the same B; at
      δ > 0 it does not improve (PureDP's own conversion only).
    """
    c, s = _level_budgets(epsilon, depth, budget_split)
    if budget_split == 0.5:
        return PureDPComposition(c, 2 * (depth + 1))
    return cast(PureDP, compose_basic([PureDP(c), PureDP(s)] * (depth + 1)))   # every δ is 0: PureDP


def _plan(data: TabularData, epsilon: float, depth: int, mechanism: Any, bins: int, n_max: int | None,
          where: str, stacklevel: int, budget_split: Any = 0.5) -> _Plan:
    """Check every argument of a DiffPID3 run (no random bit is drawn)."""
    if not isinstance(data, TabularData):
        raise TypeError(f"data must be a dpselect.tabular.TabularData (load_table, load_nltcs, ...), "
                        f"got {type(data).__name__}")
    eps_total = check_positive(epsilon, "epsilon")
    d = check_int(depth, "depth", minimum=0)
    f = _check_budget_split(budget_split)
    mech = get_mechanism(mechanism, allowed=_split_mechanisms()).name
    N = public_n_max(data.n_records, n_max, where, stacklevel=stacklevel)
    codes, n_values = discretise(data, bins)
    eps_count, eps_select = _level_budgets(eps_total, d, f)
    return _Plan(codes, n_values, np.asarray(data.y, dtype=np.int64), mech, eps_total, eps_count, eps_select, f, d,
                 int(bins), N)


def _grow(plan: _Plan, gen: np.random.Generator) -> DiffPID3Tree:
    """Grow the tree of a checked plan (all the randomness of a run)."""
    builder = _TreeBuilder(plan.codes, plan.n_values, plan.y, plan.mechanism, plan.eps_count, plan.eps_select,
                           plan.n_max, gen)
    # breadth first over (node id, record indices, remaining attributes, remaining depth)
    queue = [(0, np.arange(plan.y.shape[0]), list(range(plan.codes.shape[1])), plan.depth)]
    while queue:
        queue = [child for node in queue for child in builder.grow(*node)]
    return DiffPID3Tree(np.array(builder.feature, np.int64), np.array(builder.first_child, np.int64),
                        np.array(builder.label, np.int8), plan.depth, plan.bins, plan.epsilon, plan.mechanism)


def _diffpid3(data: TabularData, epsilon: float, depth: int, mechanism: Any, bins: int, n_max: int | None,
              rng: RngLike, accountant: Any, budget_split: Any = 0.5) -> DiffPID3Tree:
    with _release_scope():      # n_max read from the data: the charge is NonPrivate
        # the warning's frames: warn, public_n_max, _plan, _diffpid3, the public function, user
        plan = _plan(data, epsilon, depth, mechanism, bins, n_max, "diffpid3", stacklevel=6,
                     budget_split=budget_split)
        acc = check_accountant(accountant)
        gen = check_rng(rng)
        # the label names the split mechanism (canonical, public) so that a history says which variant ran
        charge(acc, plan.guarantee, label=f"diffpid3(mechanism={plan.mechanism!r})", neighbours="add_remove",
               event=Event("diffpid3", plan.epsilon, options=(("depth", plan.depth), ("mechanism", plan.mechanism))))
    return _grow(plan, gen)


def diffpid3(data: TabularData, *, epsilon: float, depth: int, mechanism: MechanismName = "local_dampening",
             bins: int = 10, n_max: int | None = None, rng: RngLike = None,
             accountant: Accountant | None = None, budget_split: float = 0.5) -> DiffPID3Tree:
    """Build a DiffPID3 tree (thesis Alg. 4) with total budget ``epsilon`` (B-DP, add/remove one record).

    Parameters
    ----------
    data : TabularData
        Training table (binary class).
    epsilon : float
        Total privacy budget B; each of the d + 1 levels gets B/(d + 1), split by ``budget_split``.
        ``epsilon`` and ``depth`` are keyword-only.
    depth : int
        Maximum depth d (number of splits on a path).
    mechanism : {"exponential", "local_dampening", "shifted_local_dampening"}
        Split selection: exponential mechanism with ΔIG, local dampening with the element local
        sensitivity of IG, or shifted local dampening (direction "increasing"). The aliases EM, LD and
        SLD are accepted (any case).
    bins : int
        Equal-width bins for numeric attributes.
    n_max : int
        Public bound N >= the number of training records, chosen without looking at the data, for ΔIG
        and the saturation of the local sensitivity (thesis: the published dataset size,
        :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`). A larger table is a ``ValueError``. Omitted: the
        training table's size, with a :class:`~dpselect.PrivacyLeakWarning`.
    rng : Generator, int or None
    accountant : dpselect.Accountant, optional
        Charged what the proof of Alg. 4 certifies, under the label ``"diffpid3(mechanism='<name>')"`` with the
        canonical name of the split mechanism (``"diffpid3(mechanism='exponential')"``, ...). By parallel
        composition over the disjoint nodes of a level, a level's noisy counts are one ε_count-DP step and its
        selections one ε_select-DP step (pure DP: a leaf's noisy class counts are report-noisy-max with Laplace
        noise), so the tree is an adaptive composition of 2(d + 1) such steps. With ``budget_split = 0.5``:
        ``PureDPComposition(B / (2(d + 1)), 2(d + 1))``, B at δ = 0, less at δ > 0 in the accountant's
        ``"adaptive"``/``"fixed"`` modes. With another split the steps are unequal and the charge is ``PureDP(B)``
        (basic composition: the sum of the 2(d + 1) parts, rounded up; the library has no optimal composition of
        unequal pure-DP parts). Glossary: [accountant][glossary-accountant].
    budget_split : float, default 0.5
        The fraction f, 0 < f < 1, of each level's budget B/(d + 1) spent on the nodes' noisy counts
        (ε_count = f·B/(d + 1), the Laplace scale 1/ε_count of the stopping rule); the rest,
        ε_select = (1 − f)·B/(d + 1), goes to the split selection or the leaf's noisy class counts.
        Public (fixed before the data are seen); 0.5 is the thesis's even split. Out of range: a
        ``ValueError`` before any random bit is drawn or any budget charged.

    Returns
    -------
    DiffPID3Tree

    Examples
    --------
    >>> from dpselect.datasets import data_path
    >>> from dpselect.tabular import load_nltcs
    >>> d = load_nltcs(data_path("tabular", "nltcs.dat"))
    >>> tree = diffpid3(d, epsilon=1.0, depth=2, mechanism="local_dampening", n_max=21574, rng=0)
    >>> round(tree.accuracy(d), 2) > 0.5, tree.predict(d).shape == (d.n_records,)
    (True, True)
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=1.0)
    >>> _ = diffpid3(d, epsilon=0.6, depth=2, n_max=21574, rng=0, accountant=acc)
    >>> acc.history[-1].label, acc.history[-1].guarantee   # 3 levels: 2 steps of 0.6 / 6 each
    ("diffpid3(mechanism='local_dampening')", PureDPComposition(epsilon0=0.09999999999999999, k=6))
    >>> _ = diffpid3(d, epsilon=0.3, depth=2, n_max=21574, rng=0, budget_split=0.25, accountant=acc)
    >>> acc.history[-1].guarantee   # 3 levels of 0.1: 0.025 on the counts, 0.075 on the selections
    PureDP(epsilon=0.3)
    """
    return _diffpid3(data, epsilon, depth, mechanism, bins, n_max, rng, accountant, budget_split)


class _TreeBuilder:
    """The growing tree as flat arrays; :meth:`grow` turns one node into a leaf or a split (ε_count on the
    noisy count, ε_select on the split or the leaf's class counts)."""

    n_classes = 2

    def __init__(self, codes: np.ndarray, n_values: np.ndarray, y: np.ndarray, mech: str, eps_count: float,
                 eps_select: float, n_max: int, gen: np.random.Generator) -> None:
        self.codes, self.n_values, self.y = codes, n_values, y
        self.mech, self.n_max, self.gen = mech, n_max, gen
        self.eps_count, self.eps_select = eps_count, eps_select
        self.feature: list[int] = [-1]
        self.first_child: list[int] = [-1]
        self.label: list[int] = [0]

    def grow(self, node: int, rows: np.ndarray, attrs: list[int], left: int) -> list[tuple]:
        """Leaf or split ``node``; returns the children to grow next (none for a leaf)."""
        if not attrs or left == 0 or self._too_small(rows, attrs):
            self.label[node] = self._leaf_label(rows)
            return []
        tabs = IGTables(ig_count_tables(self.codes[rows][:, attrs], self.y[rows], self.n_values[attrs].tolist(),
                                        self.n_classes))
        a = attrs[_select_split(tabs, self.mech, self.eps_select, self.n_max, self.gen)]
        k = int(self.n_values[a])
        start = len(self.feature)
        self.feature[node], self.first_child[node] = a, start
        self.feature += [-1] * k
        self.first_child += [-1] * k
        self.label += [0] * k
        col = self.codes[rows, a]
        order = np.argsort(col, kind="stable")
        cuts = np.searchsorted(col[order], np.arange(k + 1))
        rest = [b for b in attrs if b != a]
        return [(start + v, rows[order[cuts[v]:cuts[v + 1]]], rest, left - 1) for v in range(k)]

    def _too_small(self, rows: np.ndarray, attrs: list[int]) -> bool:
        """Stopping rule (n + Laplace(1/ε_count)) / (t·C) < √2/2, released as one bit and sampled exactly
        (threshold − n as an exact rational; no float Laplace variate, see dpselect.sampling)."""
        t = max(int(self.n_values[a]) for a in attrs)
        return bool(laplace_below(Fraction(math.sqrt(2) / 2 * t * self.n_classes) - rows.size,
                                  1.0 / self.eps_count, self.gen))

    def _leaf_label(self, rows: np.ndarray) -> int:
        """argmax of the class counts + Laplace(1/ε_select) = report-noisy-max with Laplace noise (counts move
        monotonically, Δ = 1), sampled exactly."""
        counts = np.bincount(self.y[rows], minlength=self.n_classes).astype(np.float64)
        return int(mechanisms.report_noisy_max(counts, epsilon=self.eps_select, sensitivity=1.0, noise="laplace",
                                               monotonic=True, rng=self.gen))


def _select_split(tabs: IGTables, mech: str, eps: float, n_max: int, gen: np.random.Generator) -> int:
    """The split attribute (index into the node's attributes), sampled exactly with budget ``eps``."""
    u = tabs.utilities()
    spec = get_mechanism(mech)
    if spec.kind == "global":
        return int(spec.select(u, epsilon=eps, sensitivity=ig_global_sensitivity(n_max), rng=gen))
    sf = ig_sensitivity(tabs, n_max)
    # the shifts G of IG have a fast exact form (utilities.information_gain); D comes from the generic walk
    cache = ig_shift_with_error(tabs, n_max) if spec.score == "shifted" else spec.prepare(u, sf)
    opts = {"direction": "increasing"} if spec.accepts("direction") else {}
    return int(spec.select_prepared(u, sf, cache, epsilon=eps, k=1, rng=gen, **opts))

