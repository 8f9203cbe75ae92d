"""Issue 10 part 2: quantities the privacy proofs treat as public are parameters, never silently read
from the private data.

For every public quantity: (a) omitted -> PrivacyLeakWarning naming it, (b) given -> no warning,
(c) exceeded by the data -> ValueError naming the parameter (never a smaller sensitivity). The papers'
reproductions pass the published values and emit no warning at all.
"""
from __future__ import annotations

import argparse
import functools
import warnings

import numpy as np
import pytest

from dpselect import PrivacyLeakWarning
from dpselect.trees import dampen_ig, diffpid3, ig_shift
from dpselect.graphs import influential_demo_table, prepare_priv_topk, priv_topk
from dpselect.datasets import PUBLIC_GRAPH_MAX_DEGREE, PUBLIC_TABLE_SIZE
from dpselect.graphs import from_edges
from dpselect.tabular import TabularData, load_table
from dpselect.utilities.graph import ebc_sensitivity
from dpselect.utilities.information_gain import IGTables, information_gain, ig_sensitivity


class _NoLeak:
    """Context in which a PrivacyLeakWarning is an error."""

    def __enter__(self):
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error", PrivacyLeakWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


NO_LEAK = _NoLeak()

# a star with centre 0 (degree 3) plus the edge 1-2 and a second star 4-5, 4-6: maximum degree 3
STAR = ([0, 0, 0, 1, 4, 4], [1, 2, 3, 2, 5, 6])


# -- max_degree (EBC, PrivTopk) --------------------------------------------------------------------
def test_max_degree_omitted_warns_given_silent_exceeded_raises():
    g = from_edges(*STAR, n_nodes=7)   # the public node set (issue 21 P2)
    with pytest.warns(PrivacyLeakWarning, match=r"ebc_sensitivity: max_degree .*\(max_degree = 3\)"):
        sf = ebc_sensitivity(g)
    assert sf.global_sensitivity == 3.0  # ΔEBC(3) = max(3·2/4, 3)
    with pytest.warns(PrivacyLeakWarning, match="prepare_priv_topk: max_degree"):
        assert prepare_priv_topk(g).max_degree == 3
    with pytest.warns(PrivacyLeakWarning, match="priv_topk: max_degree"):
        priv_topk(g, k=1, epsilon=1.0, rng=0)
    with pytest.warns(PrivacyLeakWarning, match="influential_demo_table: max_degree"):
        influential_demo_table(g, k=1, epsilon=1.0, rng=0)
    with NO_LEAK:
        sf6 = ebc_sensitivity(g, max_degree=6)
        assert sf6.global_sensitivity == 7.5 and sf6(0).tolist() == [3.0, 2.0, 2.0, 1.0, 2.0, 1.0, 1.0]
        s = prepare_priv_topk(g, max_degree=6)
        assert s.max_degree == 6 and s.global_sensitivity == 7.5
        assert priv_topk(g, k=1, epsilon=1e6, mechanism="SLD", max_degree=6, rng=0).tolist() == [0]
        assert priv_topk(s, k=1, epsilon=1e6, mechanism="EM", rng=0).tolist() == [0]
        assert priv_topk(s, k=1, epsilon=1e6, mechanism="EM", max_degree=6, rng=0).tolist() == [0]  # same D: fine
    for call in (lambda: ebc_sensitivity(g, max_degree=2), lambda: prepare_priv_topk(g, max_degree=2),
                 lambda: priv_topk(g, k=1, epsilon=1.0, max_degree=2, rng=0),
                 lambda: ebc_sensitivity(np.array([1, 5, 2]), max_degree=4)):
        with pytest.raises(ValueError, match=r"max_degree must be a public upper bound .*max_degree=\d"):
            call()
    with pytest.raises(ValueError, match="max_degree"):
        prepare_priv_topk(g, max_degree=0)


def test_priv_topk_rejects_max_degree_it_would_ignore():
    s = prepare_priv_topk(from_edges(*STAR), max_degree=6)
    with pytest.raises(ValueError, match=r"max_degree=100 cannot be applied to precomputed PrivTopkScores"):
        priv_topk(s, k=1, epsilon=1.0, max_degree=100, rng=0)


def test_edgeless_graph_does_not_blame_an_unpassed_max_degree():
    import scipy.sparse as sp

    from dpselect.graphs import Graph

    empty = Graph(sp.csr_array((4, 4), dtype=np.int8), np.arange(4))
    assert empty.n_edges == 0 and empty.max_degree == 0
    with pytest.warns(PrivacyLeakWarning, match=r"max_degree = 1") as rec:
        out = priv_topk(empty, k=2, epsilon=1.0, mechanism="EM", rng=0)
    assert len(rec) == 1 and len(set(out.tolist())) == 2
    with NO_LEAK:
        s = prepare_priv_topk(empty, max_degree=3)
        assert s.utilities.tolist() == [0.0] * 4 and s.global_sensitivity == 3.0
        assert priv_topk(empty, k=1, epsilon=1.0, mechanism="SLD", max_degree=3, rng=1).shape == (1,)


# -- n_max (information gain, DiffPID3) -------------------------------------------------------------
def test_n_max_issue_example_is_an_error_not_a_smaller_sensitivity():
    T = np.array([[0, 0], [0, 6]])  # 6 records; adding one of class 0 to value 1 moves IG by 4.14
    change = abs(information_gain([T + [[0, 0], [1, 0]]])[0] - information_gain([T])[0])
    assert change == pytest.approx(4.1417094501, rel=1e-9)
    with pytest.raises(ValueError, match=r"n_max must be a public upper bound .* n_max=2: the table has more records"):
        ig_sensitivity([T], n_max=2)
    with NO_LEAK:
        sf = ig_sensitivity([T], n_max=6)
    assert sf(0)[0] >= change - 1e-12 and sf.global_sensitivity == pytest.approx(np.log2(7) + 1 / np.log(2))
    with pytest.warns(PrivacyLeakWarning, match=r"ig_sensitivity: n_max .*\(n_max = 6\)"):
        sf_own = ig_sensitivity([T])
    assert sf_own.global_sensitivity == sf.global_sensitivity
    it = IGTables([T])
    for fn in (dampen_ig, ig_shift):
        with pytest.raises(ValueError, match="n_max"):
            fn(it, 5)
        with pytest.raises(TypeError, match="n_max is required"):
            fn(it, None)


def _tiny_table():
    return load_table({"x": [0.0, 0.2, 0.6, 1.0] * 10, "c": ["a", "b", "a", "b"] * 10, "y": [0, 0, 1, 1] * 10},
                      "y", feature_bounds={"x": (0, 1)}, categories={"c": ["a", "b"], "y": [0, 1]})


@pytest.mark.parametrize("mechanism", ["local_dampening", "exponential", "shifted_local_dampening"])
def test_diffpid3_n_max(mechanism):
    fn = functools.partial(diffpid3, mechanism=mechanism)
    with NO_LEAK:
        t = _tiny_table()
        tree = fn(t, epsilon=1e6, depth=1, bins=2, n_max=40, rng=0)
    assert tree.feature[0] == 0 and tree.accuracy(t) == 1.0
    with pytest.warns(PrivacyLeakWarning, match=r"diffpid3: n_max .*\(n_max = 40\)"):
        fn(t, epsilon=1e6, depth=1, bins=2, rng=0)
    with pytest.raises(ValueError, match=r"n_max=39: the table has more records"):
        fn(t, epsilon=1e6, depth=1, bins=2, n_max=39, rng=0)


def test_diffpid3_data_must_be_a_table():
    with pytest.raises(TypeError, match=r"data must be a dpselect.tabular.TabularData .*got dict"):
        diffpid3({"X": [[0]], "y": [0]}, epsilon=1.0, depth=1, n_max=10)


# -- feature_bounds and categories (load_table) ------------------------------------------------------
COLS = {"age": [20, 40, 60, 30], "job": ["a", "b", "a", "b"], "y": ["no", "yes", "no", "yes"]}


def test_feature_bounds():
    with pytest.warns(PrivacyLeakWarning, match=r"feature_bounds\['age'\] .*\(20\.0, 60\.0\)"):
        t = load_table(COLS, "y", categories={"job": ["a", "b"], "y": ["no", "yes"]})
    assert t.X[:, 0].tolist() == [0.0, 0.5, 1.0, 0.25]
    with NO_LEAK:
        t = load_table(COLS, "y", feature_bounds={"age": (0, 80)}, categories={"job": ["a", "b"], "y": ["no", "yes"]})
    assert t.X[:, 0].tolist() == [0.25, 0.5, 0.75, 0.375]
    # data outside the public bounds: clipped into them, never refused (a refusal would depend on the data)
    for b, want in (((25, 80), [0.0, 15 / 55, 35 / 55, 5 / 55]), ((0, 59), [20 / 59, 40 / 59, 1.0, 30 / 59])):
        with NO_LEAK:
            t = load_table(COLS, "y", feature_bounds={"age": b}, categories={"job": ["a", "b"], "y": ["no", "yes"]})
        np.testing.assert_allclose(t.X[:, 0], want, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"feature_bounds\['age'\] must be finite with lo <= hi"):
        load_table(COLS, "y", feature_bounds={"age": (5, 1)})
    with pytest.raises(ValueError, match="feature_bounds names unknown column 'agee'"):
        load_table(COLS, "y", feature_bounds={"agee": (0, 1)})
    with pytest.raises(ValueError, match="cannot be both categorical"):
        load_table(COLS, "y", feature_bounds={"age": (0, 80)}, categorical=["age"])


def test_categories():
    with pytest.warns(PrivacyLeakWarning, match=r"categories\['job'\] .*\['a', 'b'\]"):
        t = load_table(COLS, "y", feature_bounds={"age": (0, 80)})
    assert t.n_values.tolist() == [0, 2]
    with NO_LEAK:
        t = load_table(COLS, "y", feature_bounds={"age": (0, 80)}, categories={"job": ["c", "b", "a"], "y": ["no", "yes"]})
    assert t.n_values.tolist() == [0, 3] and t.X[:, 1].tolist() == [2.0, 1.0, 2.0, 1.0]
    with pytest.raises(ValueError, match=r"categories\['job'\] must list every value of the column: a value"):
        load_table(COLS, "y", feature_bounds={"age": (0, 80)}, categories={"job": ["a"], "y": ["no", "yes"]})
    with pytest.raises(ValueError, match=r"categories\['job'\] lists a value twice"):
        load_table(COLS, "y", categories={"job": ["a", "a", "b"]})
    with pytest.raises(TypeError, match=r"categories\['job'\] must be a list"):
        load_table(COLS, "y", categories={"job": "ab"})


def test_tabular_data_rejects_nan_and_bad_codes():
    ok = dict(y=[0, 1], feature_names=["n", "c"], categorical=[False, True], n_values=[0, 3])
    assert TabularData(np.array([[0.5, 2.0], [1.0, 0.0]]), **ok).n_records == 2
    with pytest.raises(ValueError, match=r"X must be finite .*X\[1, 0\] \(column 'n'\) is nan"):
        TabularData(np.array([[0.5, 2.0], [np.nan, 0.0]]), **ok)
    with pytest.raises(ValueError, match=r"categorical column 'c' must hold integer codes 0 .. n_values\[1\] - 1 = 2"):
        TabularData(np.array([[0.5, 3.0], [1.0, 0.0]]), **ok)
    for bad in (-1.0, 0.5):
        with pytest.raises(ValueError, match="categorical column 'c'"):
            TabularData(np.array([[0.5, bad], [1.0, 0.0]]), **ok)
    with pytest.raises(ValueError, match=r"numeric column 'n' must be scaled to \[0, 1\]"):
        TabularData(np.array([[1.5, 0.0], [1.0, 0.0]]), **ok)
    with pytest.raises(ValueError, match=r"n_values\[1\]"):
        TabularData(np.array([[0.5, 0.0], [1.0, 0.0]]), **{**ok, "n_values": [0, 0]})


# -- the reproductions: the papers' public values, no warning ---------------------------------------
def test_papers_public_values():
    assert PUBLIC_GRAPH_MAX_DEGREE == {"enron": 1383, "dblp": 343, "github": 9458}  # thesis Sec. 6.5
    assert PUBLIC_TABLE_SIZE == {"nltcs": 21574, "acs": 47461, "adult": 45222}    # thesis Sec. 7.4


def test_reproductions_n_max_is_the_published_size():
    from dpselect.experiments import thesis_figures23_25 as tf

    assert {n: tf.published_table_size(n) for n in tf.DATASETS} == PUBLIC_TABLE_SIZE
    # the loaders themselves are checked warning-free (and of exactly these sizes) in test_tabular.py


def test_graph_reproduction_setup_emits_no_warning():
    from dpselect.experiments import thesis_figure20 as tf20
    from dpselect.experiments._data import load_graph

    with NO_LEAK:
        for name in ("github",):  # enron: test_graph_utilities.py::test_ebc_real_graph_anchor
            g = load_graph(name)
            D, source = tf20.published_max_degree(name)
            assert (D, source) == (PUBLIC_GRAPH_MAX_DEGREE[name], "thesis Sec. 6.5") and g.max_degree <= D
            sf = ebc_sensitivity(g, max_degree=D)
            assert sf.global_sensitivity == max(D * (D - 1) / 4, D)
    with pytest.raises(SystemExit, match="needs --max-degree"):
        tf20.published_max_degree("karate")
    assert tf20.published_max_degree("karate", argparse.Namespace(max_degree=33)) == (33, "--max-degree")


def test_every_reproduction_setup_emits_no_warning():
    """Each reproduction's per-run work at smoke scale, PrivacyLeakWarning as an error. (The full
    ``run`` of every reproduction is exercised under the same filter by the smoke tests of
    test_dpmoet.py, test_diffpid3.py and test_influential.py.)"""
    import networkx as nx

    from dpselect.graphs import MotkinSampler
    from dpselect.experiments import table1, thesis_figure20, thesis_figures23_25
    from dpselect.graphs import from_networkx

    settings = dict(population=4, selection=2, generations=1, depth=1, max_depth=2, output=2, budget="even")
    with NO_LEAK:
        rows = table1._task((0, "nltcs", 0, 0, [1.0], settings))
        assert len(rows) == 2 and all(0 <= r["value"] <= 1 for r in rows)
        rows = thesis_figures23_25._task((0, "nltcs", 0, 0, 2, 0, [1.0], [1], 10))
        assert len(rows) == 3 and all(0.5 < r["value"] <= 1 for r in rows)
        g = from_networkx(nx.karate_club_graph(), n_nodes=34)   # the public node set (issue 21 P2)
        scores = thesis_figure20.setup("karate", g, argparse.Namespace(max_degree=33))
        assert scores.max_degree == 33 and scores.global_sensitivity == 33 * 32 / 4
        assert priv_topk(scores, k=2, epsilon=1.0, mechanism="SLD", rng=0).shape == (2,)
        for approach in ("pareto", "agg"):  # table2 / figure3: no public bound beyond the node set
            assert MotkinSampler(g, approach, mechanism="local_dampening").sample(k=2, epsilon=1.0, rng=0).shape == (2,)
