"""Degree, egocentric density and EBC with their edge-DP sensitivity functions."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpselect_reproductions import load_graph
from dpselect.graphs import from_edges
from dpselect.utilities.graph import (
    degree,
    degree_sensitivity,
    ebc,
    ebc_global_sensitivity,
    ebc_sensitivity,
    egocentric_density,
    egocentric_density_sensitivity,
)


# -- exhaustive universes of small graphs -------------------------------------------------------------
def _universe(n: int):
    """All labelled graphs on n nodes as a (2^(n choose 2), n, n) bool array; graph g flips pair b by g ^ (1 << b)."""
    pairs = list(itertools.combinations(range(n), 2))
    codes = np.arange(2 ** len(pairs))
    X = np.zeros((codes.size, n, n), dtype=bool)
    for b, (i, j) in enumerate(pairs):
        on = (codes >> b) & 1 == 1
        X[on, i, j] = X[on, j, i] = True
    return X, pairs


def _dense_utilities(X: np.ndarray, variant: str = "paper"):
    """Reference degree / egocentric density / EBC for a batch of dense adjacency matrices."""
    Xi = X.astype(np.int64)
    d = Xi.sum(2)
    e = np.einsum("gij,gjk,gki->gi", Xi, Xi, Xi) / 2  # edges among the neighbours
    pairs = d * (d - 1)
    ed = np.zeros(d.shape)
    ok = pairs > 0
    ed[ok] = (2 * e[ok] if variant == "paper" else e[ok]) / pairs[ok]
    if variant == "code":
        ed[d == 1] = 1.0
    m = np.einsum("gcz,guz,gwz->gcuw", Xi, Xi, Xi)  # common neighbours of u, w inside N(c)
    n = X.shape[1]
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    nonadj = X[:, :, :, None] & X[:, :, None, :] & ~X[:, None, :, :] & upper
    ebc_vals = np.where(nonadj, 1.0 / (1.0 + m), 0.0).sum(axis=(2, 3))
    return d.astype(float), ed, ebc_vals


def _graph_of(X1: np.ndarray):
    u, v = np.nonzero(np.triu(X1, 1))
    return from_edges(u, v, nodes=np.arange(X1.shape[0]))


def test_library_matches_dense_reference_on_all_5_node_graphs():
    X, _ = _universe(5)
    d, ed, eb = _dense_utilities(X)
    _, ed_code, _ = _dense_utilities(X, "code")
    for g in range(X.shape[0]):
        G = _graph_of(X[g])
        np.testing.assert_array_equal(degree(G), d[g])
        np.testing.assert_allclose(egocentric_density(G), ed[g], atol=1e-12)
        np.testing.assert_allclose(egocentric_density(G, variant="code"), ed_code[g], atol=1e-12)
        np.testing.assert_allclose(ebc(G), eb[g], atol=1e-12)


def test_thesis_examples():
    # Fig. 2 (Example 1.1.1/1.1.2): a = 0 and b = 1 adjacent, both adjacent to v0..v5
    u = [0] + [0] * 6 + [1] * 6
    v = [1] + list(range(2, 8)) * 2
    g = from_edges(u, v)
    assert ebc(g).tolist() == [7.5, 7.5] + [0.0] * 6
    # removing (a, b) puts EBC(a) at 15 (Example 1.1.2) and EBC(v_i) at 1 (Example 1.1.4)
    g2 = from_edges(u[1:], v[1:])
    assert ebc(g2).tolist() == [15.0, 15.0] + [1.0] * 6
    # a = 0 with neighbours b = 1 and v0..v3 = 2..5; b adjacent to every v_i; 6 lies outside the ego network.
    # Pairs {b, v_i} are adjacent (0); the 6 pairs {v_i, v_j} have geodesics via a and b (1/2 each): 3.0
    g3 = from_edges([0, 0, 0, 0, 0, 1, 1, 4, 5, 1, 1], [1, 2, 3, 4, 5, 2, 3, 6, 6, 4, 5])
    assert ebc(g3)[0] == pytest.approx(3.0)


def test_ebc_global_sensitivity_values():
    # thesis Sec. 6.5 quotes 22,361,076.5 (GitHub), and swaps Enron/DBLP: D = 1383 gives 477,826.5, D = 343 29,326.5
    assert ebc_global_sensitivity(9458) == 22_361_076.5
    assert ebc_global_sensitivity(1383) == 477_826.5
    assert ebc_global_sensitivity(343) == 29_326.5
    assert ebc_global_sensitivity(3) == 3.0 and ebc_global_sensitivity(5) == 5.0 and ebc_global_sensitivity(6) == 7.5


def test_sensitivity_values_and_candidates():
    deg = np.array([0, 1, 2, 3, 4, 5, 12])
    sf = egocentric_density_sensitivity(deg)
    np.testing.assert_allclose(sf(0), [1, 1, 1, 1, 1, 2 / 3, 0.2])
    np.testing.assert_allclose(sf(3), [1, 1, 1, 1, 1, 1, 2 / 7])
    np.testing.assert_allclose(sf(2, candidates=np.array([6, 5])), [0.25, 1.0])
    assert sf(100).tolist() == [1.0] * 7
    se = ebc_sensitivity(deg, max_degree=20)
    np.testing.assert_allclose(se(0), [0, 1, 2, 3, 4, 5, 33])
    np.testing.assert_allclose(se(8), [14, 9 * 8 / 4, 10 * 9 / 4, 11 * 10 / 4, 12 * 11 / 4, 13 * 12 / 4, 20 * 19 / 4])
    assert se.saturation_distance == 20 and se(20).tolist() == [95.0] * 7
    np.testing.assert_allclose(se(1, candidates=[1, 6]), [2, 39])
    assert degree_sensitivity(deg)(5).tolist() == [1.0] * 7
    with pytest.raises(ValueError, match="max_degree must be a public upper bound"):
        ebc_sensitivity(deg, max_degree=5)
    with pytest.raises(TypeError, match="Graph or a non-empty 1-D int array"):
        ebc_sensitivity([1.5, 2.0])
    with pytest.raises(TypeError, match="dpselect.graphs.Graph"):
        ebc(np.eye(3))
    with pytest.raises(ValueError, match="variant"):
        egocentric_density(from_edges([0], [1]), variant="nope")


def _sensitivity_factory(kind: str, n: int, halve: bool = False):
    def make(deg):
        if kind == "degree":
            sf = degree_sensitivity(deg)
        elif kind == "egodensity":
            sf = egocentric_density_sensitivity(deg)
        else:
            sf = ebc_sensitivity(deg, max_degree=n - 1)
        if not halve:
            return sf
        return lambda t, _sf=sf: _sf(t) / 2
    return make


@pytest.mark.parametrize("kind,variant", [("degree", "paper"), ("egodensity", "paper"), ("egodensity", "code"),
                                          ("ebc", "paper")])
def test_admissibility_all_graphs_up_to_5_nodes(kind, variant):
    from dpselect.audit import check_admissibility

    for n in range(2, 6):
        X, pairs = _universe(n)
        d, ed, eb = _dense_utilities(X, variant)
        table = {"degree": d, "egodensity": ed, "ebc": eb}[kind]
        deg = X.sum(2)
        make = _sensitivity_factory(kind, n)
        rep = check_admissibility(lambda g: table[g], lambda g: make(deg[g]),
                                  lambda g: [g ^ (1 << b) for b in range(len(pairs))],
                                  range(X.shape[0]), t_max=n + 1)
        assert rep.ok, (n, str(rep))
        # mutation check: half the sensitivity must be caught
        bad = check_admissibility(lambda g: table[g], lambda g: _sensitivity_factory(kind, n, True)(deg[g]),
                                  lambda g: [g ^ (1 << b) for b in range(len(pairs))],
                                  range(X.shape[0]), t_max=n + 1)
        if n >= 3:
            assert not bad.ok


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_admissibility_all_6_node_graphs_vectorised(variant):
    """Both conditions on all 32,768 graphs with 6 labelled nodes, every single-edge flip, t <= 6."""
    X, pairs = _universe(6)
    d, ed, eb = _dense_utilities(X, variant)
    deg = X.sum(2)
    codes = np.arange(X.shape[0])
    for util, make in [(d, _sensitivity_factory("degree", 6)), (ed, _sensitivity_factory("egodensity", 6)),
                       (eb, _sensitivity_factory("ebc", 6))]:
        sf = make(deg.ravel())  # one SensitivityFunction over all (graph, node) candidates
        vals = [sf(t).reshape(deg.shape) for t in range(8)]
        for b in range(len(pairs)):
            nb = codes ^ (1 << b)
            assert np.all(vals[0] + 1e-12 >= np.abs(util - util[nb])), b
            for t in range(7):
                assert np.all(vals[t + 1] + 1e-12 >= vals[t][nb]), (b, t)


def test_condition_1_on_random_larger_graphs():
    """Local sensitivity at t = 0 (all single-edge flips) stays below δ(G, 0, ·) on 12-node graphs."""
    rng = np.random.default_rng(11)
    n = 12
    all_pairs = list(itertools.combinations(range(n), 2))
    for _ in range(6):
        A = np.triu(rng.random((n, n)) < rng.uniform(0.3, 0.8), 1)
        A = A | A.T
        base = _graph_of(A)
        u0 = (egocentric_density(base), egocentric_density(base, variant="code"), ebc(base))
        s_ed = egocentric_density_sensitivity(base)(0)
        s_eb = ebc_sensitivity(base, max_degree=n - 1)(0)
        for i, j in all_pairs:
            B = A.copy()
            B[i, j] = B[j, i] = not A[i, j]
            g = _graph_of(B)
            assert np.all(np.abs(egocentric_density(g) - u0[0]) <= s_ed + 1e-12)
            assert np.all(np.abs(egocentric_density(g, variant="code") - u0[1]) <= s_ed + 1e-12)
            assert np.all(np.abs(ebc(g) - u0[2]) <= s_eb + 1e-12)


def test_ebc_real_graph_anchor():
    import warnings

    from dpselect import PrivacyLeakWarning
    from dpselect.datasets import PUBLIC_GRAPH_MAX_DEGREE

    try:
        g = load_graph("enron")
    except FileNotFoundError:
        pytest.skip("enron data not available")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # the published D: no warning
        D = PUBLIC_GRAPH_MAX_DEGREE["enron"]
        assert (D, g.max_degree) == (1383, 1383)
        assert ebc_sensitivity(g, max_degree=D).global_sensitivity == 477_826.5
    e = ebc(g)
    ed = egocentric_density(g)
    d = g.degrees
    assert e.shape == (36_692,) and np.all(e >= 0)
    # EBC(v) <= C(d, 2) - e(v), with equality exactly when no two non-adjacent neighbours share a neighbour
    assert np.all(e <= d * (d - 1) / 2 - g.triangles() + 1e-6)
    assert int(np.argmax(d)) == int(np.argmax(e))
    # the paper's formula puts 0 on degree-1 nodes; the code variant puts 1 there
    code = egocentric_density(g, variant="code")
    assert np.all(code[d == 1] == 1.0) and np.all(ed[d == 1] == 0.0)
    np.testing.assert_allclose(code[d >= 2], ed[d >= 2] / 2)


def _ebc_per_node(g):
    """EBC straight from the definition, one ego network at a time: C(d, 2) - e(v) - Σ_{u<w, u≁w} m/(1+m),
    the sum taken with math.fsum (correctly rounded), and the exact rational value of the same formula."""
    A = g.adjacency.toarray().astype(bool)
    out, exact = np.empty(g.n_nodes), []
    for v in range(g.n_nodes):
        nb = np.flatnonzero(A[v])
        d = nb.size
        e = int(A[np.ix_(nb, nb)].sum()) // 2
        terms, rational = [], Fraction(0)
        for u, w in itertools.combinations(nb, 2):
            m = int(np.sum(A[u, nb] & A[w, nb]))
            if not A[u, w] and m:
                terms.append(m / (1.0 + m))
                rational += Fraction(m, m + 1)
        out[v] = d * (d - 1) / 2.0 - e - math.fsum(terms)
        exact.append(Fraction(d * (d - 1), 2) - e - rational)
    return out, exact


def _random_graph(rng, n_lo, n_hi, p_lo, p_hi):
    """Erdős–Rényi graph with a random size in [n_lo, n_hi) and edge probability in [p_lo, p_hi)."""
    n = int(rng.integers(n_lo, n_hi))
    u, v = np.nonzero(np.triu(rng.random((n, n)) < rng.uniform(p_lo, p_hi), 1))
    return from_edges(u, v, nodes=np.arange(n))


def test_ebc_equals_per_node_ego_network_computation_bit_for_bit():
    """The block product with the exact term sum equals the per-node definition to the last bit, for any block size."""
    rng = np.random.default_rng(11)
    for _ in range(25):
        g = _random_graph(rng, 2, 45, 0.05, 0.8)
        ref, exact = _ebc_per_node(g)
        got = ebc(g)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(ebc(g, max_block_entries=1), got)   # one ego network per block
        np.testing.assert_array_equal(ebc(g, max_block_entries=10 ** 9), got)   # a single block
        # the float terms m/(1+m) round, so against the exact rational value only to within a few ulps
        assert all(abs(Fraction(x) - q) <= 1e-12 * max(1, abs(q)) for x, q in zip(got.tolist(), exact))


def test_ebc_threads_give_the_same_bits_and_bad_arguments_are_refused():
    """Blocks processed by several threads (disjoint centres, exact sums): the same bits as one thread."""
    rng = np.random.default_rng(4)
    for _ in range(10):
        g = _random_graph(rng, 5, 60, 0.1, 0.7)
        one = ebc(g, n_threads=1, max_block_entries=50)
        np.testing.assert_array_equal(ebc(g, n_threads=3, max_block_entries=50), one)
        np.testing.assert_array_equal(ebc(g), one)
    with pytest.raises(ValueError, match="n_threads"):
        ebc(g, n_threads=0)
    with pytest.raises(ValueError, match="max_block_entries"):
        ebc(g, max_block_entries=0)


def test_ebc_with_a_hub_above_2_to_15_neighbours():
    """A max degree >= 2^15 switches the product to int64 entries; results agree with a small copy of the graph."""
    rng = np.random.default_rng(2)
    u, v = np.nonzero(np.triu(rng.random((30, 30)) < 0.4, 1))
    hub_leaves = 2 ** 15 + 10
    small = from_edges(np.concatenate([u + 1, np.zeros(30, int)]), np.concatenate([v + 1, np.arange(1, 31)]))
    big = from_edges(np.concatenate([u + 1, np.zeros(hub_leaves, int)]),
                     np.concatenate([v + 1, np.arange(1, hub_leaves + 1)]))
    e_small, e_big = ebc(small), ebc(big)
    np.testing.assert_array_equal(e_big[1:31], e_small[1:31])
    # every pair with one of the extra leaves (isolated in the hub's ego network) adds 1 to the hub's EBC
    extra = hub_leaves * (hub_leaves - 1) // 2 - 30 * 29 // 2
    assert e_big[0] == pytest.approx(e_small[0] + extra, rel=1e-15)
    assert np.all(e_big[31:] == 0.0)


def test_ebc_shift_closed_form_is_exact():
    """δ^EBC's closed-form shift equals the walk and the exact rational sum (issue 16), every degree."""
    from fractions import Fraction

    from dpselect.dampening import shift_total_exact, shift_totals_with_error

    rng = np.random.default_rng(0)
    for D in (1, 2, 3, 5, 6, 7, 20, 1383):
        d = rng.integers(0, D + 1, 40)
        d[:2] = (0, D)
        sf = ebc_sensitivity(d, max_degree=D)
        assert sf.shift is not None and sf.elementwise
        G, err = shift_totals_with_error(sf, d.size)
        assert np.all(err == 0)
        for r in range(d.size):
            assert Fraction(float(G[r])) == shift_total_exact(sf, r)
        sf.shift = None
        assert np.array_equal(G, shift_totals_with_error(sf, d.size)[0])
    assert ebc_sensitivity(np.array([1, 3]), max_degree=4).bounded(2).shift is None  # other saturation


def test_degree_based_sensitivities_elementwise_equal_one_distance_per_call():
    """egocentric density and EBC sensitivities are elementwise (issue 16): sf.at(ts, candidates) equals
    sf(t)[candidate]."""
    rng = np.random.default_rng(1)
    d = rng.integers(0, 60, 40)
    for sf in (egocentric_density_sensitivity(d), ebc_sensitivity(d, max_degree=60)):
        assert sf.elementwise
        ts, rs = rng.integers(0, 80, 400), rng.integers(0, 40, 400)
        assert np.array_equal(sf.at(ts, rs), [sf(int(t))[r] for t, r in zip(ts, rs)])
