"""Binary decision trees as flat arrays, vectorised prediction, and the DP-MOET genetic operators.

A :class:`Tree` is a handful of parallel arrays in **pre-order** (a node's subtree is the contiguous
slice ``[i, i + size[i])``): ``feature`` (-1 at a leaf), ``value`` (a numeric threshold in [0, 1] or a
category code), ``left``/``right`` child indices and ``label`` (the class at a leaf, -1 elsewhere).
At a decision node a record goes **right** when ``x[feature] >= value`` (numeric feature) or
``x[feature] == value`` (categorical feature), otherwise left (paper Example 6.2: label 1 when the value
is >= 0.5).

:func:`predict_many` routes every record through every tree together, level by level (one numpy
gather per level), so a population of trees is scored on a whole dataset at numpy speed.

The genetic operators of paper Sec. 6.2.2 (random full tree, subtree crossover, mutation, pruning) are
data-independent: they use only the schema (:class:`TreeSpace`: number of features, which are
categorical and their number of values) and the ``rng``; none of them looks at the records, so they
cost no privacy budget.

Depth conventions: the depth of a tree counts edges (a lone leaf has depth 0, ``random_tree(d)`` puts
every leaf d edges below the root); the depth d' of a *node* in the mutation rule d_max − d' + 1 is
1-based (the root has d' = 1), so a mutated tree never exceeds d_max.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._rng import check_rng
from ..typing import RngLike
from .._validation import check_int

__all__ = [
    "TreeSpace",
    "Tree",
    "random_tree",
    "random_population",
    "crossover",
    "mutate",
    "prune",
    "predict_many",
]


class _ColumnKinds(Protocol):
    """What :meth:`TreeSpace.from_data` reads: a :class:`dpselect.tabular.TabularData` or any object with these."""

    @property
    def categorical(self) -> ArrayLike: ...

    @property
    def n_values(self) -> ArrayLike: ...


@dataclass(frozen=True)
class TreeSpace:
    """The schema trees are drawn from (no records): feature kinds, category counts, class count.

    Parameters
    ----------
    categorical : sequence of bool
        One entry per feature; True for a categorical feature.
    n_values : sequence of int
        Number of categories of each categorical feature (ignored for numeric ones).
    n_classes : int, default 2
        Number of classes a leaf draws from.

    Examples
    --------
    >>> TreeSpace((False, True), (0, 3)).n_features
    2
    >>> TreeSpace.from_data(type("T", (), {"categorical": [False, True], "n_values": [0, 3]})()).n_features
    2
    """

    categorical: tuple
    n_values: tuple
    n_classes: int = 2

    def __post_init__(self) -> None:
        cat = tuple(bool(c) for c in self.categorical)
        nv = tuple(int(v) for v in self.n_values)
        if not cat:
            raise ValueError("a TreeSpace needs at least one feature")
        if len(nv) != len(cat):
            raise ValueError(f"n_values must have one entry per feature ({len(cat)}), got {len(nv)}")
        for i, (c, v) in enumerate(zip(cat, nv)):
            if c and v < 1:
                raise ValueError(f"categorical feature {i} must have n_values >= 1, got {v}")
        check_int(self.n_classes, "n_classes", minimum=2)
        object.__setattr__(self, "categorical", cat)
        object.__setattr__(self, "n_values", nv)

    @property
    def n_features(self) -> int:
        """Number of features (``int``).

        >>> TreeSpace((False, True, True), (0, 2, 5)).n_features
        3
        """
        return len(self.categorical)

    @classmethod
    def from_data(cls, data: _ColumnKinds, n_classes: int = 2) -> "TreeSpace":
        """The schema of a :class:`dpselect.tabular.TabularData` (only its column kinds).

        Reads ``data.categorical`` and ``data.n_values``, the public encoding; never the records.

        Parameters
        ----------
        data : TabularData or any object with ``categorical`` and ``n_values``
            The table whose schema to take.
        n_classes : int, default 2

        Returns
        -------
        TreeSpace

        Examples
        --------
        >>> from dpselect.tabular import TabularData
        >>> t = TabularData([[0.0, 1], [1.0, 0]], [0, 1], ["x", "c"], [False, True], [0, 2])
        >>> TreeSpace.from_data(t)
        TreeSpace(categorical=(False, True), n_values=(0, 2), n_classes=2)
        """
        return cls(tuple(np.asarray(data.categorical, bool)), tuple(np.asarray(data.n_values, int)), n_classes)


class Tree:
    """A binary decision tree stored as pre-order arrays (see the module docstring).

    Build trees with :func:`random_tree` or from explicit arrays; ``Tree.leaf(c)`` is a single leaf.

    Parameters
    ----------
    feature : array-like of int, shape (n_nodes,)
        Split feature of every node, -1 at a leaf.
    value : array-like of float, shape (n_nodes,)
        Threshold (numeric split: right when x >= value) or category code (categorical split: right when
        x == value); 0 at a leaf.
    left, right : array-like of int, shape (n_nodes,)
        Pre-order children of an inner node (after it), -1 at a leaf (``ValueError`` otherwise).
    label : array-like of int, shape (n_nodes,)
        Class of a leaf, -1 at an inner node.
    categorical : array-like of bool, shape (n_nodes,)
        Whether a node's split is categorical.

    Examples
    --------
    >>> t = Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
    ...          label=[-1, 0, 1], categorical=[False, False, False])
    >>> t.predict(np.array([[0.7], [0.3]])).tolist()
    [1, 0]
    """

    __slots__ = ("feature", "value", "left", "right", "label", "categorical")

    def __init__(self, feature: ArrayLike, value: ArrayLike, left: ArrayLike, right: ArrayLike, label: ArrayLike,
                 categorical: ArrayLike) -> None:
        self.feature = np.asarray(feature, dtype=np.int32)
        self.value = np.asarray(value, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int32)
        self.right = np.asarray(right, dtype=np.int32)
        self.label = np.asarray(label, dtype=np.int8)
        self.categorical = np.asarray(categorical, dtype=bool)
        n = self.feature.shape[0]
        if n == 0 or any(a.shape != (n,) for a in (self.value, self.left, self.right, self.label, self.categorical)):
            raise ValueError("tree arrays must be non-empty and of equal length")
        inner = self.feature >= 0
        idx = np.arange(n)
        for name, child in (("left", self.left), ("right", self.right)):
            # pre-order: an inner node's children come after it and inside the arrays; a leaf has -1
            bad = np.where(inner, (child <= idx) | (child >= n), child != -1)
            if bad.any():
                i = int(np.argmax(bad))
                rule = f"in {i + 1} .. {n - 1} (pre-order, after the node)" if inner[i] else "-1 (a leaf)"
                raise ValueError(f"{name}[{i}] must be {rule}, got {int(child[i])}")

    @classmethod
    def leaf(cls, label: int) -> "Tree":
        """A tree of one leaf predicting ``label``.

        Parameters
        ----------
        label : int
            The class.

        Returns
        -------
        Tree
            One node.

        Examples
        --------
        >>> Tree.leaf(1).predict(np.zeros((2, 3))).tolist()
        [1, 1]
        """
        return cls([-1], [0.0], [-1], [-1], [label], [False])

    @property
    def n_nodes(self) -> int:
        """Number of nodes (``int``).

        >>> Tree.leaf(0).n_nodes
        1
        """
        return int(self.feature.shape[0])

    def copy(self) -> "Tree":
        """An independent copy (arrays copied).

        Returns
        -------
        Tree

        Examples
        --------
        >>> t = Tree.leaf(0)
        >>> t.copy() == t, t.copy() is t
        (True, False)
        """
        return Tree(self.feature.copy(), self.value.copy(), self.left.copy(), self.right.copy(),
                    self.label.copy(), self.categorical.copy())

    def sizes(self) -> np.ndarray:
        """Number of nodes of each node's subtree.

        Returns
        -------
        numpy.ndarray of int64, shape (n_nodes,)

        Examples
        --------
        >>> Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
        ...          label=[-1, 0, 1], categorical=[False, False, False]).sizes().tolist()
        [3, 1, 1]
        """
        size = np.ones(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes - 1, -1, -1):
            if self.feature[i] >= 0:
                size[i] += size[self.left[i]] + size[self.right[i]]
        return size

    def node_depths(self) -> np.ndarray:
        """Edge depth of each node (root 0).

        Returns
        -------
        numpy.ndarray of int64, shape (n_nodes,)

        Examples
        --------
        >>> Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
        ...          label=[-1, 0, 1], categorical=[False, False, False]).node_depths().tolist()
        [0, 1, 1]
        """
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):
            if self.feature[i] >= 0:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return depth

    @property
    def depth(self) -> int:
        """Longest root-to-leaf path in edges (``int``; a single leaf has depth 0).

        >>> Tree.leaf(0).depth
        0
        """
        return int(self.node_depths().max())

    def subtree(self, i: int) -> "Tree":
        """The subtree rooted at node ``i`` as a tree of its own.

        Parameters
        ----------
        i : int
            A node position (pre-order).

        Returns
        -------
        Tree
            ``sizes()[i]`` nodes, re-indexed from 0.

        Examples
        --------
        >>> Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
        ...          label=[-1, 0, 1], categorical=[False, False, False]).subtree(2) == Tree.leaf(1)
        True
        """
        size = int(self.sizes()[i])
        sl = slice(i, i + size)
        left = self.left[sl].copy()
        right = self.right[sl].copy()
        inner = left >= 0
        left[inner] -= i
        right[inner] -= i
        return Tree(self.feature[sl].copy(), self.value[sl].copy(), left, right, self.label[sl].copy(),
                    self.categorical[sl].copy())

    def replace(self, i: int, sub: "Tree") -> "Tree":
        """A new tree with the subtree at node ``i`` replaced by ``sub``.

        Parameters
        ----------
        i : int
            A node position (pre-order).
        sub : Tree
            The replacement.

        Returns
        -------
        Tree
            A new tree (``self`` is unchanged) of ``n_nodes - sizes()[i] + sub.n_nodes`` nodes.

        Examples
        --------
        >>> Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
        ...          label=[-1, 0, 1], categorical=[False, False, False]).replace(0, Tree.leaf(0)) == Tree.leaf(0)
        True
        """
        size = int(self.sizes()[i])
        shift = sub.n_nodes - size
        end = i + size

        def fix(ptr):
            ptr = ptr.copy()
            m = ptr >= end
            ptr[m] += shift
            return ptr

        pre_l, pre_r = fix(self.left[:i]), fix(self.right[:i])
        post_l, post_r = fix(self.left[end:]), fix(self.right[end:])
        sl, sr = sub.left.copy(), sub.right.copy()
        inner = sl >= 0
        sl[inner] += i
        sr[inner] += i
        cat = lambda a, b, c: np.concatenate([a, b, c])  # noqa: E731
        return Tree(cat(self.feature[:i], sub.feature, self.feature[end:]),
                    cat(self.value[:i], sub.value, self.value[end:]),
                    cat(pre_l, sl, post_l), cat(pre_r, sr, post_r),
                    cat(self.label[:i], sub.label, self.label[end:]),
                    cat(self.categorical[:i], sub.categorical, self.categorical[end:]))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Class of every record.

        Parameters
        ----------
        X : array-like, shape (n, n_features)
            Records encoded like :class:`dpselect.tabular.TabularData` ``X``.

        Returns
        -------
        numpy.ndarray of int8, shape (n,)

        Examples
        --------
        >>> Tree(feature=[0, -1, -1], value=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
        ...          label=[-1, 0, 1], categorical=[False, False, False]).predict([[0.7], [0.3]]).tolist()
        [1, 0]
        """
        return predict_many([self], X)[0]

    def __repr__(self) -> str:
        return f"Tree({self.n_nodes} nodes, depth {self.depth})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return all(np.array_equal(getattr(self, a), getattr(other, a)) for a in self.__slots__)


def random_tree(space: TreeSpace, depth: int, *, rng: RngLike = None) -> Tree:
    """A random full tree: every leaf at ``depth`` edges below the root (paper Sec. 6.2.2).

    Each decision node draws a feature uniformly, then a threshold uniform in [0, 1] (numeric feature) or a
    category uniform among its values (categorical feature); each leaf draws its class uniformly. The data
    are never looked at: no privacy cost.

    Parameters
    ----------
    space : TreeSpace
        The public schema.
    depth : int
        Edge depth of every leaf, 0 .. 24.
    rng : RngLike, optional
        Seed or generator (numpy SPEC 7).

    Returns
    -------
    Tree
        ``2 ** (depth + 1) - 1`` nodes.

    Examples
    --------
    >>> t = random_tree(TreeSpace((False, True), (0, 3)), 2, rng=0)
    >>> t.n_nodes, t.depth
    (7, 2)
    """
    d = check_int(depth, "depth", minimum=0, maximum=24)
    gen = check_rng(rng)
    n = 2 ** (d + 1) - 1
    # pre-order positions of a full binary tree: node with subtree height h at position i has its left
    # child at i + 1 and its right child at i + 2**h.
    feature = np.full(n, -1, np.int32)
    left = np.full(n, -1, np.int32)
    right = np.full(n, -1, np.int32)
    heights = np.empty(n, np.int64)
    stack = [(0, d)]
    while stack:
        i, h = stack.pop()
        heights[i] = h
        if h > 0:
            left[i], right[i] = i + 1, i + 2 ** h
            stack.append((i + 2 ** h, h - 1))
            stack.append((i + 1, h - 1))
    inner = heights > 0
    n_inner = int(inner.sum())
    cats = np.asarray(space.categorical, bool)
    nvals = np.asarray(space.n_values, np.int64)
    feats = gen.integers(0, space.n_features, size=n_inner)
    u = gen.random(n_inner)
    is_cat = cats[feats]
    vals = np.where(is_cat, np.floor(u * np.maximum(nvals[feats], 1)), u)
    feature[inner] = feats
    value = np.zeros(n)
    value[inner] = vals
    categorical = np.zeros(n, bool)
    categorical[inner] = is_cat
    label = np.full(n, -1, np.int8)
    label[~inner] = gen.integers(0, space.n_classes, size=n - n_inner)
    return Tree(feature, value, left, right, label, categorical)


def random_population(space: TreeSpace, size: int, depth: int, *, rng: RngLike = None) -> list[Tree]:
    """``size`` independent random full trees of depth ``depth`` (Alg. 1 line 2).

    Drawn from the public schema only: no privacy cost.

    Parameters
    ----------
    space : TreeSpace
        The public schema.
    size : int
        Number of trees (>= 1).
    depth : int
        Edge depth of every leaf.
    rng : RngLike, optional
        Seed or generator (numpy SPEC 7).

    Returns
    -------
    list of Tree
        ``size`` trees of ``2 ** (depth + 1) - 1`` nodes each.

    Examples
    --------
    >>> ts = random_population(TreeSpace((False, True), (0, 3)), 4, 2, rng=0)
    >>> len(ts), [t.n_nodes for t in ts]
    (4, [7, 7, 7, 7])
    """
    gen = check_rng(rng)
    return [random_tree(space, depth, rng=gen) for _ in range(check_int(size, "size", minimum=1))]


def crossover(t1: Tree, t2: Tree, *, rng: RngLike = None) -> tuple[Tree, Tree]:
    """Swap a uniformly chosen subtree of ``t1`` with a uniformly chosen subtree of ``t2``.

    Parameters
    ----------
    t1, t2 : Tree
        The parents (unchanged).
    rng : RngLike, optional
        Seed or generator (numpy SPEC 7).

    Returns
    -------
    (Tree, Tree)
        The two offspring; their node counts add up to the parents'.

    Examples
    --------
    >>> sp = TreeSpace((False,), (0,))
    >>> a, b = crossover(random_tree(sp, 1, rng=1), Tree.leaf(1), rng=0)
    >>> a.n_nodes + b.n_nodes
    4
    """
    gen = check_rng(rng)
    i = int(gen.integers(t1.n_nodes))
    j = int(gen.integers(t2.n_nodes))
    s1, s2 = t1.subtree(i), t2.subtree(j)
    return t1.replace(i, s2), t2.replace(j, s1)


def mutate(tree: Tree, space: TreeSpace, max_depth: int, *, rng: RngLike = None) -> Tree:
    """Replace a uniformly chosen node by a random full tree of depth d_max − d' + 1 (Sec. 6.2.2).

    d' is the 1-based depth of the chosen node (root d' = 1), so the new leaves sit at edge depth
    (d' − 1) + (d_max − d' + 1) = d_max: a mutated tree never grows beyond ``max_depth`` through the
    mutation itself. A node already deeper than ``max_depth`` gets a single random leaf.

    Parameters
    ----------
    tree : Tree
        The tree to mutate (unchanged).
    space : TreeSpace
        The public schema the new subtree is drawn from.
    max_depth : int
        d_max (>= 0).
    rng : RngLike, optional
        Seed or generator (numpy SPEC 7).

    Returns
    -------
    Tree
        A new tree.

    Examples
    --------
    >>> sp = TreeSpace((False,), (0,))
    >>> mutate(Tree.leaf(0), sp, 2, rng=0).depth       # the root (d' = 1) becomes a full tree of depth 2
    2
    """
    dmax = check_int(max_depth, "max_depth", minimum=0)
    gen = check_rng(rng)
    i = int(gen.integers(tree.n_nodes))
    d_prime = int(tree.node_depths()[i]) + 1
    new_depth = max(dmax - d_prime + 1, 0)
    return tree.replace(i, random_tree(space, new_depth, rng=gen))


def prune(tree: Tree, max_depth: int, *, n_classes: int = 2, rng: RngLike = None) -> Tree:
    """Cut every decision node at edge depth ``max_depth`` into a leaf with a random class (Sec. 6.2.2).

    Parameters
    ----------
    tree : Tree
        The tree (unchanged).
    max_depth : int
        d_max (>= 0): the deepest edge depth kept.
    n_classes : int, default 2
        Classes the new leaves draw from.
    rng : RngLike, optional
        Seed or generator (numpy SPEC 7).

    Returns
    -------
    Tree
        A tree of depth at most ``max_depth``; ``tree`` itself (not a copy) when it is already
        shallow enough.

    Examples
    --------
    >>> t = random_tree(TreeSpace((False,), (0,)), 3, rng=0)
    >>> prune(t, 1, rng=0).depth, prune(t, 5) is t
    (1, True)
    """
    dmax = check_int(max_depth, "max_depth", minimum=0)
    gen = check_rng(rng)
    depths = tree.node_depths()
    cut = np.flatnonzero((depths == dmax) & (tree.feature >= 0))
    if cut.size == 0:
        return tree
    keep = np.ones(tree.n_nodes, bool)
    sizes = tree.sizes()
    for i in cut:
        keep[i + 1:i + sizes[i]] = False
    new_index = np.cumsum(keep) - 1
    feature = tree.feature.copy()
    label = tree.label.copy()
    left, right = tree.left.copy(), tree.right.copy()
    feature[cut] = -1
    left[cut] = right[cut] = -1
    label[cut] = gen.integers(0, n_classes, size=cut.size)
    inner = left >= 0
    left[inner] = new_index[left[inner]]
    right[inner] = new_index[right[inner]]
    value = tree.value.copy()
    value[cut] = 0.0
    categorical = tree.categorical.copy()
    categorical[cut] = False
    return Tree(feature[keep], value[keep], left[keep], right[keep], label[keep], categorical[keep])


def predict_many(trees: Sequence[Tree], X: ArrayLike) -> np.ndarray:
    """Predictions of every tree on every record: int8 array of shape (n_trees, n_records).

    Each tree routes all records together, one level per step (a handful of numpy gathers over the
    records still travelling); records that reach a leaf drop out of the working set once enough of them
    have arrived, so deep, unbalanced trees cost about their mean path length. (Stacking all trees into
    one (n_trees, n_records) routing was measured 2-3x slower: its index arrays fall out of cache;
    benchmarks/bench_trees.py.)

    Parameters
    ----------
    trees : sequence of Tree
        At least one tree.
    X : array-like, shape (n_records, n_features)
        Records encoded like :class:`dpselect.tabular.TabularData` ``X``.

    Returns
    -------
    numpy.ndarray of int8, shape (n_trees, n_records)

    Examples
    --------
    >>> sp = TreeSpace((False, False), (0, 0))
    >>> ts = random_population(sp, 3, 2, rng=0)
    >>> predict_many(ts, np.random.default_rng(0).random((5, 2))).shape
    (3, 5)
    """
    trees = list(trees)
    if not trees:
        raise ValueError("trees must not be empty")
    for i, t in enumerate(trees):
        if not isinstance(t, Tree):
            raise TypeError(f"trees[{i}] must be a Tree, got {type(t).__name__}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (records x features), got a {X.ndim}-D array")   # no record count
    n = X.shape[0]
    max_feat = max(int(t.feature.max()) for t in trees)
    if max_feat >= X.shape[1]:
        raise ValueError(f"a tree splits on feature {max_feat} but X has {X.shape[1]} columns")
    Xflat = np.ascontiguousarray(X.T).ravel()  # feature-major: x[r, f] at f * n + r
    out = np.empty((len(trees), n), dtype=np.int8)
    for k, t in enumerate(trees):
        _route(t, Xflat, n, out[k])
    return out


def _route(t: Tree, Xflat: np.ndarray, n: int, res: np.ndarray) -> None:
    m = t.n_nodes
    leaf = t.feature < 0
    if leaf[0]:
        res[:] = t.label[0]
        return
    idx = np.arange(m, dtype=np.int32)
    # children interleaved (children[2 i] = left, children[2 i + 1] = right; a leaf points to itself) and
    # one interval test per node: go right iff lo <= x < hi (numeric: [thr, inf); category v: [v, v + 0.5),
    # codes being integers)
    children = np.empty(2 * m, np.int32)
    children[0::2] = np.where(leaf, idx, t.left)
    children[1::2] = np.where(leaf, idx, t.right)
    lo = np.where(leaf, 0.0, t.value)
    hi = np.where(t.categorical & ~leaf, t.value + 0.5, np.inf)
    feat_off = np.maximum(t.feature, 0).astype(np.int64) * n
    node = np.zeros(n, np.int32)
    rows = np.arange(n, dtype=np.int64)
    all_rows = True
    for _ in range(t.depth):
        xv = Xflat.take(feat_off.take(node) + rows)
        go = (xv >= lo.take(node)) & (xv < hi.take(node))
        node = children.take(2 * node + go)
        fin = leaf.take(node)
        n_fin = int(np.count_nonzero(fin))
        if n_fin == node.size:
            break
        if n_fin * 8 >= node.size:  # compact: finished records leave the working set
            if all_rows:
                res[:] = 0
                all_rows = False
            res[rows[fin]] = t.label.take(node[fin])
            keep = ~fin
            node, rows = node[keep], rows[keep]
    if all_rows:
        res[:] = t.label.take(node)
    else:
        res[rows] = t.label.take(node)
