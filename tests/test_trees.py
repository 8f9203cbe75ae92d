"""Array decision trees: prediction against a naive walk, and the paper's genetic operators."""
from __future__ import annotations

import numpy as np
import pytest

from dpselect.trees import Tree, TreeSpace, crossover, mutate, predict_many, prune, random_population, random_tree

SPACE = TreeSpace((False, True, False, True), (0, 3, 0, 2))


def naive(t: Tree, x) -> int:
    i = 0
    while t.feature[i] >= 0:
        v = x[t.feature[i]]
        go = v == t.value[i] if t.categorical[i] else v >= t.value[i]
        i = t.right[i] if go else t.left[i]
    return int(t.label[i])


def data(n, rng):
    X = rng.random((n, 4))
    X[:, 1] = rng.integers(0, 3, n)
    X[:, 3] = rng.integers(0, 2, n)
    return X


def check_structure(t: Tree):
    """Pre-order layout: left child = i + 1, right child = i + 1 + size(left)."""
    sizes = t.sizes()
    for i in range(t.n_nodes):
        if t.feature[i] >= 0:
            assert t.left[i] == i + 1 and t.right[i] == i + 1 + sizes[i + 1]
        else:
            assert t.left[i] == -1 and t.right[i] == -1 and t.label[i] in (0, 1)
    assert sizes[0] == t.n_nodes


def evolved(rng, n=40, dmax=6):
    pop = random_population(SPACE, 10, 3, rng=rng)
    for _ in range(n):
        i, j = rng.choice(len(pop), 2, replace=False)
        a, b = crossover(pop[i], pop[j], rng=rng)
        pop += [prune(mutate(a, SPACE, dmax, rng=rng), dmax, rng=rng), prune(mutate(b, SPACE, dmax, rng=rng), dmax, rng=rng)]
    return pop


def test_paper_example_6_2():
    t = Tree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [-1, 0, 1], [False] * 3)
    assert t.predict(np.array([[0.7], [0.3], [0.5]])).tolist() == [1, 0, 1]


def test_predict_many_equals_naive_walk():
    rng = np.random.default_rng(0)
    pop = evolved(rng)
    X = data(300, rng)
    P = predict_many(pop, X)
    assert P.shape == (len(pop), 300) and P.dtype == np.int8
    ref = np.array([[naive(t, x) for x in X] for t in pop])
    assert np.array_equal(P, ref)
    assert np.array_equal(predict_many([Tree.leaf(1)], X), np.ones((1, 300)))


def test_random_tree_is_full_and_valid():
    t = random_tree(SPACE, 3, rng=1)
    check_structure(t)
    assert t.n_nodes == 15 and t.depth == 3
    depths = t.node_depths()
    assert np.all(depths[t.feature < 0] == 3)
    inner = t.feature >= 0
    cat = np.asarray(SPACE.categorical)[t.feature[inner]]
    assert np.array_equal(t.categorical[inner], cat)
    vals = t.value[inner]
    nv = np.asarray(SPACE.n_values)[t.feature[inner]]
    assert np.all((vals[~cat] >= 0) & (vals[~cat] < 1))
    assert np.all((vals[cat] == np.floor(vals[cat])) & (vals[cat] < nv[cat]))
    assert random_tree(SPACE, 3, rng=1) == t and random_tree(SPACE, 3, rng=2) != t
    assert random_tree(SPACE, 0, rng=1).n_nodes == 1


def test_subtree_replace_round_trip_and_crossover_swaps():
    rng = np.random.default_rng(2)
    for t in evolved(rng, 10):
        for i in range(0, t.n_nodes, 3):
            assert t.replace(i, t.subtree(i)) == t
    a, b = random_tree(SPACE, 2, rng=3), random_tree(SPACE, 3, rng=4)
    for seed in range(20):
        g = np.random.default_rng(seed)
        i, j = int(g.integers(a.n_nodes)), int(g.integers(b.n_nodes))
        c, d = crossover(a, b, rng=seed)
        check_structure(c)
        check_structure(d)
        assert c == a.replace(i, b.subtree(j)) and d == b.replace(j, a.subtree(i))
        assert c.n_nodes + d.n_nodes == a.n_nodes + b.n_nodes


def test_mutation_depth_rule():
    for seed in range(40):
        t = random_tree(SPACE, 4, rng=seed)
        g = np.random.default_rng(seed)
        i = int(g.integers(t.n_nodes))
        d_prime = int(t.node_depths()[i]) + 1
        m = mutate(t, SPACE, 6, rng=seed)
        check_structure(m)
        # the new subtree is full with depth d_max - d' + 1: its leaves sit exactly at depth 6
        sub = m.subtree(i)
        assert sub.depth == 6 - d_prime + 1 and sub.n_nodes == 2 ** (sub.depth + 1) - 1
        assert m.depth == 6


def test_prune_cuts_to_max_depth_and_keeps_the_rest():
    rng = np.random.default_rng(5)
    X = data(200, rng)
    for seed in range(10):
        t = random_tree(SPACE, 5, rng=seed)
        p = prune(t, 3, rng=seed)
        check_structure(p)
        assert p.depth == 3 and p.n_nodes == 15
        assert np.array_equal(p.feature[p.feature >= 0], t.feature[(t.node_depths() < 3) & (t.feature >= 0)])
        assert prune(p, 3, rng=0) is p
    # records whose path ends above the cut keep their prediction
    t = Tree([0, -1, 1, -1, -1], [0.5, 0, 1, 0, 0], [1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [-1, 1, -1, 0, 1],
             [False, False, True, False, False])
    p = prune(t, 1, rng=0)
    assert p.n_nodes == 3
    low = X[:, 0] < 0.5
    assert np.array_equal(p.predict(X)[low], t.predict(X)[low])


def test_bad_input():
    with pytest.raises(ValueError):
        TreeSpace((), ())
    with pytest.raises(ValueError):
        TreeSpace((True,), (0,))
    with pytest.raises(ValueError, match="depth"):
        random_tree(SPACE, -1, rng=0)
    with pytest.raises(ValueError, match="columns"):
        predict_many([random_tree(SPACE, 2, rng=0)], np.zeros((3, 2)))
    with pytest.raises(ValueError):
        predict_many([], np.zeros((3, 4)))


def test_out_of_range_or_cyclic_child_index_is_a_clear_error():
    ok = dict(feature=[0, -1, -1], value=[0.5, 0, 0], label=[-1, 0, 1], categorical=[False] * 3)
    assert Tree(left=[1, -1, -1], right=[2, -1, -1], **ok).predict(np.array([[0.7]])).tolist() == [1]
    with pytest.raises(ValueError, match=r"right\[0\] must be in 1 .. 2 \(pre-order, after the node\), got 3"):
        Tree(left=[1, -1, -1], right=[3, -1, -1], **ok)
    with pytest.raises(ValueError, match=r"left\[0\] must be in 1 .. 2 .*got 0"):
        Tree(left=[0, -1, -1], right=[2, -1, -1], **ok)           # a cycle
    with pytest.raises(ValueError, match=r"left\[1\] must be -1 \(a leaf\), got 2"):
        Tree(left=[1, 2, -1], right=[2, -1, -1], **ok)
