"""Graph loading and normalisation (dpselect.graphs)."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpselect.experiments._data import load_graph
from dpselect.graphs import Graph, GraphNormalisationWarning, from_edges, from_networkx, triangle_list
from dpselect.datasets import load_dataset_graph, load_edge_list


def _has_data(name: str) -> bool:
    try:
        from dpselect.experiments import data_path
        from dpselect.graphs import GRAPH_DATASETS

        data_path("graphs", GRAPH_DATASETS[name])
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
        g = load_graph(name)
    assert (g.n_nodes, g.n_edges, g.max_degree) == (n, m, dmax)
    # issue 21 P2: the published node set (ids 0..n-1) is public and equals the endpoint set, so the graph and
    # every law on it are those of the endpoint-read graph
    assert g.public_nodes and g.node_ids.tolist() == list(range(n)) and g.degrees.min() >= 1
    assert g.self_loops_removed == 0
    assert g.duplicate_edges_removed == dups
    a = g.adjacency
    assert (a != a.T).nnz == 0 and a.diagonal().sum() == 0
    assert int(g.degrees.sum()) == 2 * m


def test_enron_triangles_match_sparse_formula():
    if not _has_data("enron"):
        pytest.skip("enron data not available")
    g = load_graph("enron")
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
    ("0\t1\n1\t2\t3\n", r"bad.txt: malformed edge line: expected two node ids"),
    ("0\t1\n1\n", r"bad.txt: malformed edge line"),
    ("# c\n0\t1\n1\tx\n", r"bad.txt: a node id is not an integer$"),
    ("0\t1\n1.5\t2\n", r"bad.txt: a node id is not an integer$"),
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
    with pytest.raises(ValueError, match=r"bad.csv: malformed edge line"):
        load_edge_list(p)
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_edge_list(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="no edge-list file 'dblp'"):
        load_dataset_graph("dblp")


def test_dataset_graph_takes_a_path_not_a_name():
    # finding the data belongs to the reproductions (experiments._data.load_graph): a dataset name is not a
    # file (removed before the first release), the path of the project's copy is
    with pytest.raises(FileNotFoundError, match="no edge-list file 'enron'"):
        load_dataset_graph("enron")
    if not _has_data("enron"):
        pytest.skip("enron data not available")
    from dpselect.experiments import data_path
    from dpselect.graphs import GRAPH_DATASETS, PUBLIC_GRAPH_NODES

    ref = load_graph("enron")
    g = load_dataset_graph(data_path("graphs", GRAPH_DATASETS["enron"]), n_nodes=PUBLIC_GRAPH_NODES["enron"],
                           name="enron")
    assert (g.name, g.n_nodes, g.n_edges, g.public_nodes) == (ref.name, 36692, 183831, True)
    assert (g.adjacency != ref.adjacency).nnz == 0


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


def testtriangles_unsorted_slots_locate_the_directed_edges():
    """The private unsorted listing behind ebc: same triangles, and each slot is the CSR entry of its edge."""
    from dpselect.graphs._graph import _triangles_unsorted

    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(3, 30))
        u, v = np.nonzero(np.triu(rng.random((n, n)) < rng.uniform(0.1, 0.9), 1))
        g = from_edges(u, v, nodes=np.arange(n))
        tri, slots = _triangles_unsorted(g, slots=True)
        assert sorted(map(tuple, np.sort(tri, axis=1).tolist())) == [tuple(t) for t in triangle_list(g).tolist()]
        row = np.repeat(np.arange(n), np.diff(g.adjacency.indptr))
        col = g.adjacency.indices
        a, b, c = tri.T
        for k, (x, y) in enumerate([(a, b), (b, a), (a, c), (c, a), (b, c), (c, b)]):
            assert row[slots[k]].tolist() == x.tolist() and col[slots[k]].tolist() == y.tolist()
        assert _triangles_unsorted(g)[1] is None


# -- issue 11: the constructor rejects what is not a simple undirected graph -------------------------
def _csr(dense):
    return sp.csr_array(np.asarray(dense))


@pytest.mark.parametrize("dense, msg", [
    # the rule only: the entry, its value and where it sits are private (edge-DP)
    ([[0, 1], [0, 0]], r"^adjacency must be symmetric \(an undirected graph\)$"),
    ([[1, 0], [0, 0]], r"^adjacency must have a zero diagonal \(no self-loops\); from_edges drops"),
    ([[0, 1, 0], [1, 0, 0], [0, 0, 1]], r"^adjacency must have a zero diagonal \(no self-loops\); from_edges drops"),
    ([[0, 2], [2, 0]], r"^adjacency must hold only 0/1 entries \(an unweighted simple graph\); list each edge once"),
    ([[0, 0.5], [0.5, 0]], r"^adjacency must hold only 0/1 entries \(an unweighted simple graph\); list each edge once"),
    ([[0, -1], [-1, 0]], r"^adjacency must hold only 0/1 entries \(an unweighted simple graph\); list each edge once"),
])
def test_constructor_rejects_non_simple_adjacency(dense, msg):
    n = len(dense)
    with pytest.raises(ValueError, match=msg):
        Graph(_csr(dense), np.arange(n))


def test_constructor_rejects_duplicate_entries_and_bad_ids():
    rows, cols = np.array([0, 1, 0]), np.array([1, 0, 1])      # (0, 1) stored twice: weight 2
    with pytest.raises(ValueError, match=r"only 0/1 entries \(an unweighted simple graph\); list each edge once"):
        Graph(sp.csr_array((np.ones(3, np.int8), (rows, cols)), shape=(2, 2)), [0, 1])
    sym = _csr([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match=r"node_ids must be distinct, got id 3 twice \(positions 0 and 1\)"):
        Graph(sym, [3, 3])
    with pytest.raises(ValueError, match="node_ids must be sorted increasingly, got 3 before 1 at position 0"):
        Graph(sym, [3, 1])
    with pytest.raises(TypeError, match=r"node_ids must hold integer node ids, got dtype float64 \(e.g. 0.5\)"):
        Graph(sym, [0.5, 1])
    with pytest.raises(ValueError, match=r"node_ids must have one id per node \(2\), got shape \(3,\)"):
        Graph(sym, [0, 1, 2])
    with pytest.raises(ValueError, match=r"adjacency must be square, got shape \(2, 3\)"):
        Graph(sp.csr_array((2, 3), dtype=np.int8), [0, 1])
    with pytest.raises(ValueError, match=r"adjacency must have at least one node, got shape \(0, 0\)"):
        Graph(sp.csr_array((0, 0), dtype=np.int8), [])


def test_constructor_accepts_and_normalises_harmless_forms():
    # bool or float 0/1 data, explicitly stored zeros: the same simple graph, stored as int8 ones
    g = Graph(_csr([[0, True, False], [True, 0, 1.0], [0, 1.0, 0]]), [10, 20, 30])
    assert g.adjacency.dtype == np.int8 and g.degrees.tolist() == [1, 2, 1] and g.n_edges == 2
    z = sp.csr_array((np.array([1, 1, 0, 0]), (np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1]))), shape=(3, 3))
    assert z.nnz == 4
    g = Graph(z, [0, 1, 2])
    assert g.degrees.tolist() == [1, 1, 0] and g.n_edges == 1    # stored zeros are not edges
    empty = Graph(sp.csr_array((4, 4), dtype=np.int8), np.arange(4))
    assert (empty.n_nodes, empty.n_edges, empty.max_degree) == (4, 0, 0)


def test_constructor_copies_the_adjacency():
    a = _csr([[0, 1], [1, 0]])
    g = Graph(a, [0, 1])
    a.data[:] = 5
    assert g.adjacency.data.tolist() == [1, 1] and g.degrees.tolist() == [1, 1]


def test_from_edges_empty_and_nodes_errors():
    with pytest.raises(ValueError, match=r"u and v are empty and no nodes were given: a graph needs at least one "
                                         r"node \(for a graph without edges pass its node ids as nodes=\)"):
        from_edges([], [])
    g = from_edges([], [], nodes=[3, 1])                 # a documented edgeless graph
    assert g.node_ids.tolist() == [1, 3] and g.n_edges == 0 and g.degrees.tolist() == [0, 0]
    with pytest.raises(TypeError, match=r"nodes must hold integer node ids, got dtype <U1 \(e.g. 'x'\)"):
        from_edges([0], [1], nodes=["x"])
    with pytest.raises(TypeError, match="nodes must be an iterable of integer node ids, got int"):
        from_edges([0], [1], nodes=5)
    with pytest.raises(TypeError, match="nodes must be a 1-D array of integer node ids, got the string 'ab'"):
        from_edges([0], [1], nodes="ab")
    with pytest.raises(ValueError, match=r"nodes must be a 1-D array of integer node ids, got 2 dimensions"):
        from_edges([0], [1], nodes=[[1]])
    # nodes= is the public node set: an endpoint outside it is an error (no longer extra nodes added)
    # (one message whatever the edge: which edge and its endpoints are private under edge-DP)
    for u, v, nodes in (([0], [1], (i for i in [7])), ([0, 2], [1, 9], {0, 1, 2, 8}), ([5, 0], [0, 1], [0, 1])):
        with pytest.raises(ValueError, match=r"^nodes= is the public node set, but an edge has an endpoint outside "
                                             r"it$"):
            from_edges(u, v, nodes=nodes)


def test_public_node_set_on_every_loader(tmp_path):
    """Issue 21 P2: nodes= / n_nodes= give the public node set; without them it is read from the edges."""
    import networkx as nx

    assert not from_edges([0, 1], [1, 2]).public_nodes
    g = from_edges([0, 1], [1, 2], nodes=[2, 0, 1, 7])
    assert g.public_nodes and g.node_ids.tolist() == [0, 1, 2, 7] and g.degrees.tolist() == [1, 2, 1, 0]
    g = from_edges([0], [1], n_nodes=4)
    assert g.public_nodes and g.node_ids.tolist() == [0, 1, 2, 3] and g.n_edges == 1
    assert from_edges([], [], n_nodes=2).n_nodes == 2
    with pytest.raises(ValueError, match=r"^n_nodes=2 makes the public node ids 0..1, but an edge has an "
                                         "endpoint outside them$"):
        from_edges([0, 1], [1, 2], n_nodes=2)
    with pytest.raises(ValueError, match="not both"):
        from_edges([0], [1], nodes=[0, 1], n_nodes=2)
    for bad, exc, msg in ((0, ValueError, "n_nodes must be >= 1"), (2.0, TypeError, "n_nodes must be an int"),
                          (True, TypeError, "n_nodes must be an int"), ("3", TypeError, "n_nodes must be an int")):
        with pytest.raises(exc, match=msg):
            from_edges([0], [1], n_nodes=bad)
    p = tmp_path / "g.txt"
    p.write_text("0 1\n1 2\n")
    assert not load_edge_list(p).public_nodes
    g = load_edge_list(p, n_nodes=5)
    assert g.public_nodes and g.n_nodes == 5 and load_dataset_graph(p, nodes=[0, 1, 2]).public_nodes
    # networkx: graph.nodes is usually filled from the edges, so it is public only when given
    G = nx.Graph([(0, 1), (1, 2)])
    assert not from_networkx(G).public_nodes
    assert from_networkx(G, n_nodes=4).degrees.tolist() == [1, 2, 1, 0]
    S = nx.Graph([("a", "b")])
    g = from_networkx(S, nodes=["c", "b", "a"])
    assert g.public_nodes and g.node_ids.tolist() == [0, 1, 2] and g.degrees.tolist() == [1, 1, 0]
    with pytest.raises(ValueError, match=r"every node of graph must be in the public node set \(n_nodes=2\), but 1 "
                                         r"are not \(e.g. 2\)"):
        from_networkx(G, n_nodes=2)
    with pytest.raises(ValueError, match="nodes must not repeat"):
        from_networkx(G, nodes=[0, 1, 2, 2])
    # a directed networkx graph is read as undirected, and says so (issue 21 item 11)
    D = nx.DiGraph([(0, 1), (1, 0), (1, 2)])
    with pytest.warns(GraphNormalisationWarning, match=r"a directed DiGraph is read as undirected"):
        g = from_networkx(D, n_nodes=3)
    assert g.n_edges == 2 and g.degrees.tolist() == [1, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_networkx(D, n_nodes=3, warn=False).n_edges == 2
        assert from_networkx(D.to_undirected(), n_nodes=3).n_edges == 2
    # the constructor's node set is the adjacency's rows, given explicitly
    assert Graph(sp.csr_array((2, 2), dtype=np.int8), [0, 1]).public_nodes
    assert not Graph(sp.csr_array((2, 2), dtype=np.int8), [0, 1], public_nodes=False).public_nodes
    with pytest.raises(TypeError, match="public_nodes must be a bool"):
        Graph(sp.csr_array((2, 2), dtype=np.int8), [0, 1], public_nodes=1)



def test_from_edges_id_range_and_type_errors():
    with pytest.raises(TypeError, match="u must hold integer node ids, got dtype bool"):
        from_edges([True], [False])
    with pytest.raises(ValueError, match=r"u must be node ids <= 9223372036854775807 \(int64\)"):
        from_edges(np.array([2 ** 64 - 1], dtype=np.uint64), [1])
    with pytest.raises(ValueError, match="^v must be node ids that fit in int64$"):
        from_edges([1], [1e20])
    assert from_edges([1.0], [2.0]).node_ids.tolist() == [1, 2]   # integral floats are ids
    g = from_edges([5], [6])
    with pytest.raises(TypeError, match="ids must be a 1-D array of integer node ids, got the string 'abc'"):
        g.index_of("abc")
    with pytest.raises(TypeError, match=r"ids must hold integer node ids, got dtype float64 \(e.g. 5.5\)"):
        g.index_of([5.5])
    assert g.index_of(6).tolist() == [1] and g.index_of(np.int64(5)).tolist() == [0]


def test_from_networkx_empty_graph():
    nx = pytest.importorskip("networkx")
    with pytest.raises(ValueError, match="graph must have at least one node, got an empty Graph"):
        from_networkx(nx.Graph())
    g = from_networkx(nx.empty_graph(3))
    assert (g.n_nodes, g.n_edges) == (3, 0)


def test_loader_path_types():
    with pytest.raises(TypeError, match="path must be a str or path-like naming an edge-list file, got NoneType"):
        load_edge_list(None)
    with pytest.raises(TypeError, match=r"path must be an edge-list path \(str or path-like\), got int"):
        load_dataset_graph(123)


@pytest.mark.parametrize("content,ids,n_edges", [
    ("0 1\r\n1 2\r\n", [0, 1, 2], 2),                                  # CRLF line ends
    ("0 1\n# c\n\n1 2\n  % x\n2 3", [0, 1, 2, 3], 3),                 # comments between edges, no final newline
    ("9223372036854775807 1\n-1 2\n", [-1, 1, 2, 9223372036854775807], 2),   # int64 extremes, 19 digits
    ("0\t1\t\n 1 2 \n", [0, 1, 2], 2),                                 # trailing and leading whitespace
])
def test_load_edge_list_fast_path_formats(tmp_path, content, ids, n_edges):
    p = tmp_path / "g.txt"
    p.write_text(content)
    g = load_edge_list(p)
    assert g.node_ids.tolist() == ids and g.n_edges == n_edges


@pytest.mark.parametrize("content,match", [
    ("0 1\n123456789012345678901 1\n", r"bad.txt: a node id is out of the int64 range$"),
    ("0 1\n\u00e4 2\n", r"bad.txt: a node id is not an integer$"),
    ("# c\n\n0 1\n1 2 3\n", r"bad.txt: malformed edge line: expected two node ids"),
])
def test_load_edge_list_errors_name_the_file_not_the_line(tmp_path, content, match):
    """The edges are the private data (edge-DP): a malformed file's error names the file and the rule, never the
    line's number or content."""
    p = tmp_path / "bad.txt"
    p.write_text(content)
    with pytest.raises(ValueError, match=match) as exc:
        load_edge_list(p)
    assert ":2" not in str(exc.value) and ":4" not in str(exc.value) and "1 2 3" not in str(exc.value)


def test_load_edge_list_matches_a_python_parse_of_enron():
    from dpselect.experiments import data_path

    path = data_path("graphs", "Email-Enron.txt")
    rows = [ln.split() for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    ref = from_edges([int(a) for a, _ in rows], [int(b) for _, b in rows], warn=False)
    g = load_edge_list(path, warn=False)
    assert g.node_ids.tolist() == ref.node_ids.tolist() and (g.adjacency != ref.adjacency).nnz == 0


def test_networkx_graph_accepted_wherever_a_graph_is():
    nx = pytest.importorskip("networkx")
    import dpselect
    from dpselect.graphs import top_k_aggregate, top_k_ebc, top_k_pareto
    from dpselect.utilities.graph import degree, degree_sensitivity, ebc, ebc_sensitivity, egocentric_density

    G = nx.karate_club_graph()
    g = from_networkx(G)
    assert degree(G).tolist() == degree(g).tolist()
    assert np.allclose(egocentric_density(G), egocentric_density(g)) and np.allclose(ebc(G), ebc(g))
    assert degree_sensitivity(G)(0).tolist() == degree_sensitivity(g)(0).tolist()
    assert ebc_sensitivity(G, max_degree=20)(1).tolist() == ebc_sensitivity(g, max_degree=20)(1).tolist()
    assert triangle_list(G).tolist() == triangle_list(g).tolist()
    for fn in (top_k_pareto, top_k_aggregate, top_k_ebc):
        assert fn(G, k=3).tolist() == fn(g, k=3).tolist()
    assert dpselect.graphs.priv_topk(G, k=2, epsilon=1.0, max_degree=20, rng=0).tolist() == \
        dpselect.graphs.priv_topk(g, k=2, epsilon=1.0, max_degree=20, rng=0).tolist()
    assert dpselect.graphs.dp_motkin_agg(G, k=2, epsilon=1.0, rng=0).tolist() == dpselect.graphs.dp_motkin_agg(g, k=2, epsilon=1.0, rng=0).tolist()
    with pytest.raises(TypeError, match="a dpselect.graphs.Graph or a networkx graph .* got builtins.list"):
        degree([[0, 1]])


def test_triangles_unsorted_is_the_same_in_any_number_of_chunks_and_threads(monkeypatch):
    import dpselect.graphs._graph as graphs_mod
    from dpselect.graphs._graph import _triangles_unsorted

    rng = np.random.default_rng(12)
    u, v = np.nonzero(np.triu(rng.random((120, 120)) < 0.2, 1))
    g = from_edges(u, v, nodes=np.arange(120))
    tri, slots = _triangles_unsorted(g, slots=True, n_threads=1)
    for chunk, threads in ((1, 1), (7, 3), (100, 2)):
        monkeypatch.setattr(graphs_mod, "_WEDGES_PER_CHUNK", chunk)
        t2, s2 = _triangles_unsorted(g, slots=True, n_threads=threads)
        np.testing.assert_array_equal(t2, tri)
        np.testing.assert_array_equal(s2, slots)
    ref = {tuple(sorted(t)) for t in itertools.combinations(range(120), 3)
           if g.adjacency[t[0], t[1]] and g.adjacency[t[0], t[2]] and g.adjacency[t[1], t[2]]}
    assert {tuple(sorted(t)) for t in tri.tolist()} == ref and len(ref) == tri.shape[0]
