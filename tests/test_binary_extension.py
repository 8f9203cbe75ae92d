"""Optimal extension on dataset graphs: paper examples, LP optimum cross-check, rejection of bad partials."""
import itertools
import math

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from dpselect.binary import (DatasetGraph, NotExtendableError, NoUniqueOptimumError, boundary_edges,
                             boundary_vertices, greedy_boundary_hitting_set, induced_bounds,
                             is_boundary_hitting, minimum_boundary_hitting_set, optimal_extension,
                             optimal_mechanism, optimal_probability, uncovered_boundary_edges)

LOG2 = math.log(2)
PATH4 = [("v1", "v2"), ("v2", "v3"), ("v3", "v4")]
T_EX = {"v1": 0, "v2": 1, "v3": 1, "v4": 0}  # 1 = blue, 0 = red (paper 002, Fig. 2)


# --------------------------------------------------------------------------- LP reference
def dp_constraints(n, edges, eps, delta):
    """A_ub x <= b_ub for (eps(e), delta)-DP on every edge, both directions, x = Pr[M(.) = 1]."""
    A, b = [], []
    for (u, v), e in zip(edges, eps):
        E = math.exp(e)
        for x, y in ((u, v), (v, u)):
            # p_x <= E p_y + d, and 1 - p_x <= E (1 - p_y) + d
            for sign, rhs in ((1, delta), (-1, delta + E - 1)):
                r = np.zeros(n)
                r[x], r[y] = sign, -sign * E
                A.append(r)
                b.append(rhs)
    return np.array(A), np.array(b)


def lp(n, edges, eps, delta, fixed, c):
    A, b = dp_constraints(n, edges, eps, delta)
    bounds = [(fixed[i], fixed[i]) if i in fixed else (0, 1) for i in range(n)]
    return linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")


def random_instance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 10))
    while True:
        G = nx.gnp_random_graph(n, float(rng.uniform(0.25, 0.6)), seed=int(rng.integers(1 << 30)))
        if G.number_of_edges() and nx.is_connected(G):
            break
    edges = list(G.edges())
    T = {v: int(rng.integers(0, 2)) for v in range(n)}
    hetero = bool(rng.integers(0, 2))
    eps = rng.uniform(0.1, 1.5, len(edges)) if hetero else np.full(len(edges), float(rng.uniform(0.1, 1.5)))
    delta = 0.0 if rng.random() < 0.5 else float(rng.uniform(0, 0.1))  # also with heterogeneous eps
    return rng, n, edges, T, hetero, eps, delta


def random_dp_mechanism(rng, n, edges, eps, delta):
    pts = []
    for _ in range(3):
        res = lp(n, edges, eps, delta, {}, rng.normal(size=n))
        assert res.status == 0
        pts.append(res.x)
    w = rng.dirichlet(np.ones(3))
    return np.clip(w @ np.array(pts), 0, 1)


def eps_arg(hetero, edges, eps):
    return {e: float(x) for e, x in zip(edges, eps)} if hetero else float(eps[0])


# --------------------------------------------------------------------------- paper examples
@pytest.mark.parametrize("method", ["batch", "heap"])
def test_paper002_example3_exactly(method):
    mech = optimal_mechanism(PATH4, T_EX, {"v1": 0.3, "v4": 0.1}, epsilon=LOG2, method=method)
    probs = mech.probabilities
    assert probs["v2"] == pytest.approx(0.4, abs=1e-12)
    assert probs["v3"] == pytest.approx(0.2, abs=1e-12)
    assert (probs["v1"], probs["v4"]) == (0.3, 0.1)
    assert mech.violations() == []
    # the same through networkx and the public dict API
    G = nx.Graph(PATH4)
    assert optimal_extension(G, T_EX, {"v1": 0.3, "v4": 0.1}, epsilon=LOG2) == pytest.approx(probs)
    # v4, farther from v2, is the binding vertex (the remark in the paper)
    b = induced_bounds(PATH4, {"v1": 0.3}, epsilon=LOG2)
    assert b["v2"] == pytest.approx(0.6)
    b = induced_bounds(PATH4, {"v4": 0.1}, epsilon=LOG2)
    assert b["v2"] == pytest.approx(0.4) and b["v3"] == pytest.approx(0.2)


def test_paper002_example2_non_hitting_set_detected():
    # A = {v3} misses the boundary edge (v1, v2). The OCR'd example is garbled; with Pr[M(v3) = blue] = 1/2 its
    # two mechanisms read M1 = (1/2, 3/4, 1/2, 1/4), M2 = (1/4, 1/2, 1/2, 1/4) (Pr[blue] at v1..v4).
    partial = {"v3": 0.5}
    assert not is_boundary_hitting(PATH4, T_EX, partial)
    assert uncovered_boundary_edges(PATH4, T_EX, partial) == [("v1", "v2")]
    with pytest.raises(NoUniqueOptimumError, match="not boundary-hitting") as ei:
        optimal_extension(PATH4, T_EX, partial, epsilon=LOG2)
    assert ei.value.edge in (("v1", "v2"), ("v2", "v1"))
    assert ei.value.uncovered == [("v1", "v2")]
    # LP evidence: both mechanisms are private extensions, incomparable, and each is maximal
    edges = [(0, 1), (1, 2), (2, 3)]
    A, b = dp_constraints(4, edges, [LOG2] * 3, 0.0)
    M1, M2 = np.array([0.5, 0.75, 0.5, 0.25]), np.array([0.25, 0.5, 0.5, 0.25])
    for M in (M1, M2):
        assert np.all(A @ M <= b + 1e-12)
    correct = lambda M: np.array([1 - M[0], M[1], M[2], 1 - M[3]])  # noqa: E731
    assert correct(M1)[1] > correct(M2)[1] and correct(M1)[0] < correct(M2)[0]
    for M in (M1, M2):  # maximal: no private extension is >= everywhere and > somewhere
        sign = np.array([-1, 1, 1, -1])
        A_dom = np.vstack([A, -np.diag(sign)])
        b_dom = np.concatenate([b, -sign * M])
        res = linprog(-sign, A_ub=A_dom, b_ub=b_dom, bounds=[(0, 1), (0, 1), (0.5, 0.5), (0, 1)],
                      method="highs")
        assert res.status == 0 and -res.fun == pytest.approx(float(sign @ M), abs=1e-9)


def test_non_hitting_set_with_unique_optimum_is_returned():
    # no boundary at all: the empty partial mechanism has the unique optimum "always answer T(v)"
    T = {"v1": 1, "v2": 1, "v3": 1, "v4": 1}
    assert optimal_extension(PATH4, T, {}, epsilon=1.0) == {v: 1.0 for v in T}
    # boundary edge (v1, v2) uncovered but the vertex-wise optima are jointly private (Pr[blue] = 0 at v3
    # forces Pr[blue] = 0 everywhere under pure DP, also at blue v2)
    assert optimal_extension(PATH4, T_EX, {"v3": 0.0}, epsilon=1.0) == {v: 0.0 for v in T_EX}


# --------------------------------------------------------------------------- LP cross-check
@pytest.mark.parametrize("seed", range(30))
def test_random_graphs_match_lp_optimum_vertex_by_vertex(seed):
    rng, n, edges, T, hetero, eps, delta = random_instance(seed)
    true = random_dp_mechanism(rng, n, edges, eps, delta)
    S = set(greedy_boundary_hitting_set(edges, T)) | {int(v) for v in rng.choice(n, 2, replace=False)}
    partial = {v: float(true[v]) for v in S}
    kw = dict(epsilon=eps_arg(hetero, edges, eps), delta=delta)
    mech = optimal_mechanism(edges, T, partial, **kw)
    heap = optimal_mechanism(edges, T, partial, method="heap", **kw)
    np.testing.assert_allclose(mech.prob_one, heap.prob_one, atol=1e-14)
    assert mech.violations() == []
    A, b = dp_constraints(n, edges, eps, delta)
    x = np.array([mech.probabilities[v] for v in range(n)])
    assert np.all(A @ x <= b + 1e-9)                         # private on every edge
    assert all(x[v] == partial[v] for v in S)                 # extends the partial mechanism
    xtrue = np.array(true)
    assert mech.dominates({v: float(xtrue[v]) for v in range(n)}, tol=1e-9)
    for w in range(n):
        if w in S:
            continue
        c = np.zeros(n)
        c[w] = -1.0 if T[w] == 1 else 1.0                     # maximise Pr[M(w) = T(w)]
        res = lp(n, edges, eps, delta, partial, c)
        assert res.status == 0
        assert x[w] == pytest.approx(res.x[w], abs=1e-7), (seed, w)
        check = optimal_probability(edges, T, partial, w, check=False, **kw)
        assert check == pytest.approx(x[w], abs=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_extendability_matches_lp_feasibility_and_names_a_real_pair(seed):
    rng, n, edges, T, hetero, eps, delta = random_instance(1000 + seed)
    S = sorted(set(greedy_boundary_hitting_set(edges, T)) | {int(rng.integers(n))})
    true = random_dp_mechanism(rng, n, edges, eps, delta)
    vals = {v: float(np.clip(true[v] + rng.normal(0, 0.15), 0, 1)) for v in S}  # often incompatible
    kw = dict(epsilon=eps_arg(hetero, edges, eps), delta=delta)
    feasible = lp(n, edges, eps, delta, vals, np.zeros(n)).status == 0
    try:
        optimal_extension(edges, T, vals, **kw)
        extendable = True
    except NotExtendableError as err:
        extendable = False
        u, v = err.pair
        assert u in vals and v in vals and u != v
        assert f"({u}, {v})" in str(err)
        assert err.value_v > err.bound + 1e-9
        assert err.path[0] == u and err.path[-1] == v
        # the named pair alone already admits no private mechanism
        assert lp(n, edges, eps, delta, {u: vals[u], v: vals[v]}, np.zeros(n)).status == 2
    assert extendable == feasible, seed


@pytest.mark.parametrize("seed", range(12))
def test_non_hitting_sets_unique_iff_vertexwise_optima_feasible(seed):
    rng, n, edges, T, hetero, eps, delta = random_instance(2000 + seed)
    true = random_dp_mechanism(rng, n, edges, eps, delta)
    S = [int(v) for v in rng.choice(n, int(rng.integers(1, n)), replace=False)]
    partial = {v: float(true[v]) for v in S}
    kw = dict(epsilon=eps_arg(hetero, edges, eps), delta=delta)
    opt = np.array([true[w] for w in range(n)], dtype=float)
    for w in range(n):
        if w not in partial:
            c = np.zeros(n)
            c[w] = -1.0 if T[w] == 1 else 1.0
            opt[w] = lp(n, edges, eps, delta, partial, c).x[w]
    A, b = dp_constraints(n, edges, eps, delta)
    jointly = bool(np.all(A @ opt <= b + 1e-7))
    try:
        ext = optimal_extension(edges, T, partial, **kw)
        np.testing.assert_allclose([ext[w] for w in range(n)], opt, atol=1e-7)
        assert jointly
    except NoUniqueOptimumError:
        assert not jointly and not is_boundary_hitting(edges, T, S)


# --------------------------------------------------------------------------- incompatible partials
def test_incompatible_pair_is_named():
    # Pr[blue] = 0.1 at v1 allows at most p(3, 0.1) = 0.7 at v4 (log 2): 0.75 is impossible
    with pytest.raises(NotExtendableError) as ei:
        optimal_extension(PATH4, T_EX, {"v1": 0.1, "v4": 0.75}, epsilon=LOG2)
    err = ei.value
    assert err.pair == ("v1", "v4") and err.colour == 1
    assert err.bound == pytest.approx(0.7) and err.path == ["v1", "v2", "v3", "v4"]
    assert "offending pair ('v1', 'v4')" in str(err) and isinstance(err, ValueError)
    # and from the other side (answer 0): Pr[red] = 0.9 at v1 forces Pr[red] >= ... at v4
    with pytest.raises(NotExtendableError) as ei:
        optimal_extension(PATH4, T_EX, {"v1": 0.9, "v4": 0.05}, epsilon=LOG2)
    assert set(ei.value.pair) == {"v1", "v4"}
    # exactly at the bound is fine
    assert optimal_extension(PATH4, T_EX, {"v1": 0.1, "v4": 0.7}, epsilon=LOG2)["v4"] == 0.7


def test_incompatible_by_binary_rounding_shows_the_excess():
    # 0.95 and delta = 0.05 are not exact in binary: 1 - 0.95 - 0.05 = 4.16e-17 > 0, so the bound 0.95 induces
    # on a neighbour, 1 - e^-eps (1 - 0.95 - 0.05), is just below 1 and Pr = 1 there is refused. The message
    # shows the excess (e^-1 4.16e-17 = 1.53e-17) and why, not "1 exceeds 1".
    with pytest.raises(NotExtendableError) as ei:
        optimal_extension([(0, 1), (1, 2), (2, 3)], [0, 0, 1, 1], {2: 0.95, 3: 1.0}, epsilon=1.0, delta=0.05)
    msg = str(ei.value)
    assert "Pr[M(3) = 1] = 1 exceeds 1 - 1.53e-17" in msg and "by 1.53e-17" in msg, msg
    assert "not exact in binary" in msg and ei.value.pair == (2, 3)
    # a large excess is shown plainly, without the rounding note
    with pytest.raises(NotExtendableError) as ei:
        optimal_extension(PATH4, T_EX, {"v1": 0.1, "v4": 0.75}, epsilon=LOG2)
    assert "exceeds 0.7, " in str(ei.value) and "by 0.05;" in str(ei.value)
    assert "binary" not in str(ei.value)


# --------------------------------------------------------------------------- heterogeneous inputs
def test_heterogeneous_epsilon_as_attribute_mapping_and_array_agree():
    rng = np.random.default_rng(5)
    G = nx.grid_2d_graph(5, 5)
    T = {v: int(v[0] + v[1] >= 4) for v in G}
    eps = {e: float(rng.uniform(0.2, 1.5)) for e in G.edges()}
    nx.set_edge_attributes(G, eps, "eps")
    S = greedy_boundary_hitting_set(G, T)
    partial = {v: (0.6 if T[v] else 0.4) for v in S}
    a = optimal_extension(G, T, partial, epsilon="eps")
    b = optimal_extension(list(G.edges()), T, partial, epsilon={(v, u): x for (u, v), x in eps.items()})
    c = optimal_extension([(u, v, {"eps": x}) for (u, v), x in eps.items()], T, partial, epsilon="eps")
    g = DatasetGraph.from_edges(G.edges(), vertices=list(G.nodes()))
    arr = [eps[(g.label(int(u)), g.label(int(v)))] if (g.label(int(u)), g.label(int(v))) in eps
           else eps[(g.label(int(v)), g.label(int(u)))] for u, v in zip(g.edge_u, g.edge_v)]
    d = optimal_mechanism(g, T, partial, epsilon=np.array(arr)).probabilities
    assert a == pytest.approx(b) and a == pytest.approx(c) and a == pytest.approx(d)
    # uniform per-edge epsilon equals the homogeneous answer
    same = optimal_extension(G, T, partial, epsilon={e: 0.7 for e in G.edges()})
    assert same == pytest.approx(optimal_extension(G, T, partial, epsilon=0.7), abs=1e-14)


def test_disconnected_component_without_fixed_vertices():
    edges = [(0, 1), (1, 2), (3, 4)]
    T = {0: 0, 1: 1, 2: 1, 3: 1, 4: 1}
    ext = optimal_extension(edges, T, {0: 0.3, 1: 0.6}, epsilon=LOG2)
    assert ext[2] == pytest.approx(0.8) and ext[3] == 1.0 and ext[4] == 1.0


# --------------------------------------------------------------------------- boundary notions
def test_boundary_notions_small():
    T = {"a": 1, "b": 1, "c": 0, "d": 0, "e": 1}
    E = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("a", "e")]
    assert sorted(boundary_edges(E, T)) == [("b", "c"), ("d", "e")]
    assert sorted(boundary_vertices(E, T)) == ["b", "c", "d", "e"]
    assert sorted(boundary_vertices(E, T, colour=0)) == ["c", "d"]
    assert is_boundary_hitting(E, T, ["b", "d"]) and not is_boundary_hitting(E, T, ["b", "c"])
    g = DatasetGraph.from_edges(E)
    assert g.distance("a", "c") == 2
    np.testing.assert_array_equal(g.distances(["c"]), [2, 1, 0, 1, 2])


@pytest.mark.parametrize("seed", range(15))
def test_hitting_sets_greedy_valid_and_minimum_exact(seed):
    rng, n, edges, T, *_ = random_instance(3000 + seed)
    greedy = greedy_boundary_hitting_set(edges, T)
    minimum = minimum_boundary_hitting_set(edges, T)
    assert is_boundary_hitting(edges, T, greedy) and is_boundary_hitting(edges, T, minimum)
    best = next(k for k in range(n + 1) for c in itertools.combinations(range(n), k)
                if is_boundary_hitting(edges, T, c))
    assert len(minimum) == best <= len(greedy)


# --------------------------------------------------------------------------- mechanism object
def test_mechanism_sampling_matches_probabilities():
    mech = optimal_mechanism(PATH4, T_EX, {"v1": 0.3, "v4": 0.1}, epsilon=LOG2)
    draws = mech.sample_many(["v2"] * 20000, rng=7)
    assert abs(draws.mean() - 0.4) < 4 * math.sqrt(0.24 / 20000)
    assert mech.sample_many(["v2"] * 50, rng=3).tolist() == mech.sample_many(["v2"] * 50, rng=3).tolist()
    assert mech.probability("v3", 0) == pytest.approx(0.8) and mech.correct_probability("v1") == 0.7
    s = [mech.sample("v3", rng=np.random.default_rng(i)) for i in range(2000)]
    assert abs(np.mean(s) - 0.2) < 0.04
    assert mech.dominates({"v1": 0.3, "v2": 0.35, "v3": 0.2, "v4": 0.1})
    assert not mech.dominates({"v1": 0.3, "v2": 0.45, "v3": 0.2, "v4": 0.1})


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(graph=[("a", "a")]), ValueError, "self-loop"),
    (dict(partial={"zz": 0.5}), ValueError, "not a vertex"),
    (dict(partial={"v1": 1.2}), ValueError, r"\[0, 1\]"),
    (dict(true_values={"v1": 0, "v2": 1, "v3": 1}), ValueError, "missing vertex 'v4'"),
    (dict(true_values={"v1": 0, "v2": 2, "v3": 1, "v4": 0}), ValueError, "0 or 1"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=True), TypeError, "epsilon"),
    (dict(epsilon={("v1", "v2"): 1.0}), ValueError, "no value for edge"),
    (dict(epsilon={("v1", "v3"): 1.0}), ValueError, "not an edge"),
    (dict(epsilon={("v1", "v2"): 1.0, ("v2", "v1"): 2.0, ("v2", "v3"): 1.0, ("v3", "v4"): 1.0}),
     ValueError, "two different values"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(partial=[0.5]), TypeError, "mapping"),
    (dict(graph=42), TypeError, "graph"),
])
def test_bad_input_messages(kwargs, exc, match):
    args = dict(graph=PATH4, true_values=T_EX, partial={"v1": 0.3, "v4": 0.1}, epsilon=LOG2)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        optimal_extension(args.pop("graph"), args.pop("true_values"), args.pop("partial"), **args)


def test_duplicate_edges_merged_and_conflicting_attributes_rejected():
    g = DatasetGraph.from_edges([(1, 2), (2, 1), (1, 2), (2, 3)])
    assert g.n_edges == 2
    with pytest.raises(ValueError, match="conflicting epsilon"):
        DatasetGraph.from_edges([(1, 2, {"eps": 1.0}), (2, 1, {"eps": 2.0})], epsilon_attr="eps")
    with pytest.raises(ValueError, match="directed"):
        optimal_extension(nx.DiGraph(PATH4), T_EX, {"v1": 0.3, "v4": 0.1}, epsilon=1.0)


# --------------------------------------------------------------------------- other suitable pairs
@pytest.mark.parametrize("seed", range(6))
def test_custom_suitable_pair_additive_bound_matches_lp(seed):
    # U(a) = min(1, a + c), L(a) = max(0, a - c): the suitable pair of |Pr[M(u)=j] - Pr[M(v)=j]| <= c
    from dpselect.binary import FunctionPair

    c = 0.15
    pair = FunctionPair(lambda a: np.minimum(a + c, 1.0), lambda a: np.maximum(a - c, 0.0))
    rng, n, edges, T, hetero, eps, delta = random_instance(4000 + seed)
    # |p_u - p_v| <= c is (eps = 0, delta = c)-DP: reuse the LP with eps = 0
    zero = np.zeros(len(edges))
    true = random_dp_mechanism(rng, n, edges, zero, c)
    S = greedy_boundary_hitting_set(edges, T)
    partial = {v: float(true[v]) for v in S}
    mech = optimal_mechanism(edges, T, partial, pair=pair)
    assert mech.violations() == []
    for w in range(n):
        if w in partial:
            continue
        cvec = np.zeros(n)
        cvec[w] = -1.0 if T[w] == 1 else 1.0
        res = lp(n, edges, zero, c, partial, cvec)
        assert mech.probabilities[w] == pytest.approx(res.x[w], abs=1e-7)


@pytest.mark.parametrize("seed", range(6))
def test_heterogeneous_with_zero_epsilon_edges_matches_lp(seed):
    rng, n, edges, T, hetero, eps, delta = random_instance(5000 + seed)
    eps = rng.uniform(0.1, 1.5, len(edges))
    eps[rng.random(len(edges)) < 0.3] = 0.0            # eps(u, v) = 0: the pair must be answered alike
    true = random_dp_mechanism(rng, n, edges, eps, 0.0)
    S = greedy_boundary_hitting_set(edges, T)
    partial = {v: float(true[v]) for v in S}
    mech = optimal_mechanism(edges, T, partial, epsilon=dict(zip(edges, eps.tolist())))
    heap = optimal_mechanism(edges, T, partial, epsilon=dict(zip(edges, eps.tolist())), method="heap")
    np.testing.assert_allclose(mech.prob_one, heap.prob_one, atol=1e-14)
    for w in range(n):
        if w in partial:
            continue
        cvec = np.zeros(n)
        cvec[w] = -1.0 if T[w] == 1 else 1.0
        res = lp(n, edges, eps, 0.0, partial, cvec)
        assert mech.probabilities[w] == pytest.approx(res.x[w], abs=1e-7)


# --------------------------------------------------------------------------- (E, 2) integer arrays as edge lists
def _same_graph(a, b):
    return (a.n == b.n and a.vertices == b.vertices and a.edge_u.tolist() == b.edge_u.tolist()
            and a.edge_v.tolist() == b.edge_v.tolist())


def test_edge_array_accepted_wherever_an_edge_list_is():
    E = np.array([[i, i + 1] for i in range(9)])
    T = {i: int(i < 5) for i in range(10)}
    partial = {4: 0.6, 5: 0.4}
    ref = optimal_extension([tuple(e) for e in E.tolist()], T, partial, epsilon=0.5)
    for edges in (E, E.astype(np.int32), E.astype(np.uint16), list(E), [list(e) for e in E.tolist()]):
        assert optimal_extension(edges, T, partial, epsilon=0.5) == ref
    g = DatasetGraph.from_edges(E)
    assert g.n == 10 and g.n_edges == 9 and g.distance(0, 9) == 9
    assert _same_graph(DatasetGraph.from_edges(list(E)), g)


def test_vectorised_tuple_path_builds_the_loops_graph():
    rng = np.random.default_rng(3)
    E = rng.integers(-5, 40, (200, 2))
    E = E[E[:, 0] != E[:, 1]]
    tuples = [tuple(e) for e in E.tolist()]
    fast = DatasetGraph.from_edges(tuples)
    loop = DatasetGraph.from_edges(iter(tuples))  # an iterator takes the general loop
    assert _same_graph(fast, loop)
    vertices = sorted(set(E.ravel().tolist()), reverse=True) + [1000]
    assert _same_graph(DatasetGraph.from_edges(E, vertices=vertices),
                       DatasetGraph.from_edges(iter(tuples), vertices=vertices))
    # data-carrying or mixed edges still take the loop
    assert DatasetGraph.from_edges([(0, 1), ("a", 2)]).vertices == [0, 1, "a", 2]
    assert DatasetGraph.from_edges([(0, 1, {"eps": 0.5})], epsilon_attr="eps").edge_epsilon.tolist() == [0.5]


def test_edge_array_errors():
    with pytest.raises(TypeError, match=r"\(E, 2\) integer array"):
        DatasetGraph.from_edges(np.zeros((3, 3), dtype=int))
    with pytest.raises(TypeError, match=r"\(E, 2\) integer array"):
        DatasetGraph.from_edges(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=">= 0"):
        DatasetGraph.from_edges(np.array([[-1, 2]]))
    with pytest.raises(ValueError, match="not in vertices"):
        DatasetGraph.from_edges(np.array([[0, 7]]), vertices=[0, 1, 2])
    with pytest.raises(ValueError, match="self-loop"):
        DatasetGraph.from_edges(np.array([[1, 1]]))
    with pytest.raises(TypeError, match="edge attributes"):
        DatasetGraph.from_edges(np.array([[0, 1]]), epsilon_attr="eps")
