"""Graph loading and normalisation (dpselect.graphs)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpselect.graphs import (
    Graph,
    GraphNormalisationWarning,
    from_edges,
    from_networkx,
    load_dataset_graph,
    load_edge_list,
    triangle_list,
)


def _has_data(name: str) -> bool:
    try:
        from dpselect.datasets import dataset_path
        from dpselect.graphs import GRAPH_DATASETS

        dataset_path("graphs", GRAPH_DATASETS[name])
        return True
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("name,n,m,dmax,dups", [
    ("enron", 36_692, 183_831, 1_383, 183_831),   # SNAP lists every edge in both directions
    ("github", 37_700, 289_003, 9_458, 0),
])
def test_real_graphs_statistics(name, n, m, dmax, dups):
    if not _has_data(name):
        pytest.skip(f"{name} data not available")
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphNormalisationWarning)  # both files are clean: no warning
        g = load_dataset_graph(name)
    assert (g.n_nodes, g.n_edges, g.max_degree) == (n, m, dmax)
    assert g.self_loops_removed == 0
    assert g.duplicate_edges_removed == dups
    a = g.adjacency
    assert (a != a.T).nnz == 0 and a.diagonal().sum() == 0
    assert int(g.degrees.sum()) == 2 * m


def test_enron_triangles_match_sparse_formula():
    if not _has_data("enron"):
        pytest.skip("enron data not available")
    g = load_dataset_graph("enron")
    a = g.adjacency.astype(np.int64)
    ref = np.asarray((a @ a).multiply(a).sum(axis=1)).ravel() // 2
    np.testing.assert_array_equal(g.triangles(), ref)
    assert int(g.triangles().sum()) // 3 == 727_044  # SNAP's published triangle count for Enron


def test_normalisation_counts_and_warnings():
    with pytest.warns(GraphNormalisationWarning) as rec:
        g = from_edges([5, 7, 7, 9, 5], [7, 5, 7, 5, 7])
    msgs = " ".join(str(w.message) for w in rec)
    assert "self-loop" in msgs and "repeated" in msgs
    assert g.node_ids.tolist() == [5, 7, 9]
    assert g.n_edges == 2 and g.self_loops_removed == 1 and g.duplicate_edges_removed == 2
    assert g.degrees.tolist() == [2, 1, 1]
    assert g.edges().tolist() == [[0, 1], [0, 2]]
    assert g.index_of([9, 5]).tolist() == [2, 0]
    with pytest.raises(KeyError, match="node id 6"):
        g.index_of(6)


def test_symmetric_listing_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = from_edges([0, 1, 1, 2], [1, 0, 2, 1])
    assert g.n_edges == 2 and g.duplicate_edges_removed == 2


def test_load_snap_and_csv(tmp_path):
    p = tmp_path / "toy.txt"
    p.write_text("# comment\n% other comment\n\n0\t1\n1 2\n  2\t0\n3\t3\n")
    with pytest.warns(GraphNormalisationWarning, match="self-loop"):
        g = load_edge_list(p)
    assert (g.n_nodes, g.n_edges, g.self_loops_removed) == (4, 3, 1)
    assert g.degrees.tolist() == [2, 2, 2, 0]
    c = tmp_path / "toy.csv"
    c.write_text("id_1,id_2\n10,20\n20,30\n")
    g = load_edge_list(c)
    assert g.node_ids.tolist() == [10, 20, 30] and g.n_edges == 2
    c2 = tmp_path / "nohdr.csv"
    c2.write_text("10, 20\n20,30\n")
    assert load_edge_list(c2).n_edges == 2


@pytest.mark.parametrize("content,match", [
    ("0\t1\n1\t2\t3\n", r":2: malformed edge line"),
    ("0\t1\n1\n", r":2: malformed edge line"),
    ("# c\n0\t1\n1\tx\n", r":3: node id 'x' is not an integer"),
    ("0\t1\n1.5\t2\n", r"node id '1.5' is not an integer"),
    ("# only comments\n", "no edges"),
])
def test_load_errors(tmp_path, content, match):
    p = tmp_path / "bad.txt"
    p.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_edge_list(p)


def test_load_errors_csv_and_missing(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("1,2\n3,4,5\n")
    with pytest.raises(ValueError, match=r":2: malformed"):
        load_edge_list(p)
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_edge_list(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="unknown graph"):
        load_dataset_graph("dblp")


def test_from_edges_input_errors():
    with pytest.raises(TypeError, match="integer node ids"):
        from_edges(["a", "b"], ["b", "c"])
    with pytest.raises(ValueError, match="same length"):
        from_edges([0, 1], [1])
    with pytest.raises(TypeError, match="sparse"):
        Graph(np.eye(2), np.arange(2))


def test_from_networkx():
    nx = pytest.importorskip("networkx")
    G = nx.Graph()
    G.add_edges_from([("a", "b"), ("b", "c")])
    G.add_node("z")
    g = from_networkx(G)
    assert (g.n_nodes, g.n_edges) == (4, 2)
    assert g.degrees.tolist() == [1, 2, 1, 0]
    h = from_networkx(nx.karate_club_graph())
    assert (h.n_nodes, h.n_edges, h.max_degree) == (34, 78, 17)
    assert int(h.triangles().sum()) // 3 == sum(nx.triangles(nx.karate_club_graph()).values()) // 3
    with pytest.raises(TypeError, match="networkx"):
        from_networkx([1, 2])


def test_triangle_list_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 15))
        dense = np.triu(rng.random((n, n)) < rng.uniform(0.2, 0.9), 1)
        u, v = np.nonzero(dense)
        if u.size == 0:
            continue
        g = from_edges(u, v, nodes=np.arange(n))
        A = (dense | dense.T).astype(int)
        ref = sorted((i, j, k) for i in range(n) for j in range(i + 1, n) for k in range(j + 1, n)
                     if A[i, j] and A[j, k] and A[i, k])
        assert [tuple(t) for t in triangle_list(g).tolist()] == ref
        np.testing.assert_array_equal(g.triangles(), np.diag(A @ A @ A) // 2)
        assert sp.issparse(g.adjacency)
