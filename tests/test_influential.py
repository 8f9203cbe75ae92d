"""DP-MOTkIN and PrivTopk (dpselect.graphs) and their reproductions."""
from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from dpselect.graphs import MotkinSampler, dp_motkin_agg, dp_motkin_pareto, influential_demo_table, metric_c, motkin_objectives, prepare_priv_topk, priv_topk, recall, top_k_aggregate, top_k_ebc, top_k_pareto
from dpselect.graphs import from_edges, from_networkx

nx = pytest.importorskip("networkx")


def _karate():
    return from_networkx(nx.karate_club_graph(), n_nodes=34)   # the club's 34 members: a public node set


def _all_graphs(n: int):
    pairs = list(itertools.combinations(range(n), 2))
    graphs = []
    for code in range(2 ** len(pairs)):
        e = [pairs[b] for b in range(len(pairs)) if code >> b & 1]
        u = np.array([a for a, _ in e], dtype=np.int64)
        v = np.array([b for _, b in e], dtype=np.int64)
        graphs.append(from_edges(u, v, nodes=np.arange(n), warn=False))
    return graphs, pairs


def test_metric_c_and_recall():
    U = np.array([[3, 3], [1, 1], [2, 4], [3, 1], [0, 0]])
    assert metric_c([0], [1, 2, 3], objectives=U) == pytest.approx(1 / 3)  # only node 1 is dominated by node 0
    assert metric_c([0, 2], [1, 4], objectives=U) == 1.0
    assert metric_c([1], [0, 2], objectives=U) == 0.0
    assert metric_c([0], [0], objectives=U) == 0.0  # a node does not dominate itself
    # one metric_c: the index form equals the points form, and is the same function as the core one
    import dpselect
    import dpselect.multiobjective as mo

    assert metric_c is mo.metric_c is dpselect.trees.metric_c
    assert metric_c([0, 2], [1, 3], objectives=U) == metric_c(U[[0, 2]], U[[1, 3]])
    with pytest.raises(ValueError, match="candidates must not be empty"):
        metric_c([0], [], objectives=U)
    with pytest.raises(ValueError, match=r"indices in \[0, "):
        metric_c([0], [99], objectives=U)
    with pytest.raises(TypeError, match="indices"):
        metric_c([0], [1.5], objectives=U)
    assert recall([1, 2, 3, 4, 5], [5, 9, 1, 7, 8]) == 0.4
    with pytest.raises(ValueError):
        recall([], [1])


def test_non_private_baselines():
    U = np.array([[1, 1.0], [3, 0.3], [2, 0.5], [1, 0.0], [0, 0.2], [2, 0.5]])
    # front {0, 1, 2, 5}; node 1 dominates 3 and 4 (2 nodes), 2 and 5 dominate 3 and 4 too, 0 dominates 4
    assert top_k_pareto(U, k=3).tolist() == [1, 2, 5]
    assert top_k_pareto(U, k=3, tie_break="index").tolist() == [0, 1, 2]
    assert top_k_aggregate(U, k=2, objective_weights=(1, 100)).tolist() == [0, 2]
    assert top_k_ebc(np.array([1.0, 5.0, 5.0, 2.0]), k=2).tolist() == [1, 2]
    with pytest.raises(ValueError, match="tie_break"):
        top_k_pareto(U, k=1, tie_break="random")
    g = _karate()
    np.testing.assert_array_equal(top_k_aggregate(g, k=5), top_k_aggregate(motkin_objectives(g)[0], k=5))


@pytest.mark.parametrize("variant", ["paper", "code"])
def test_sampler_matches_priv_pareto_and_priv_agg(variant):
    import dpselect.multiobjective as mo

    g = _karate()
    U, sfs = motkin_objectives(g, variant=variant)
    for mech in ("exponential", "local_dampening"):
        sens = sfs if mech == "local_dampening" else [1.0, 1.0]
        s = MotkinSampler(g, "pareto", mechanism=mech, variant=variant)
        np.testing.assert_allclose(s.probabilities(epsilon=0.7), mo.priv_pareto_probabilities(U, epsilon=0.7, sensitivities=sens), atol=1e-12)
        a = MotkinSampler(g, "agg", mechanism=mech, variant=variant)
        np.testing.assert_allclose(a.probabilities(epsilon=0.7), mo.priv_agg_probabilities(U, [1.0, 100.0], epsilon=0.7, sensitivities=sens),
                                   atol=1e-12)


def test_sampler_remaining_set_scores_equal_recomputation():
    """The incremental δ^PS / Pareto scores after picks equal a fresh computation on the remaining nodes."""
    import dpselect.multiobjective as mo
    from dpselect.dampening import dampen
    from dpselect.utilities.graph import degree_sensitivity, egocentric_density_sensitivity

    rng = np.random.default_rng(5)
    G = nx.gnm_random_graph(60, 240, seed=3)
    g = from_networkx(G, n_nodes=60)
    for variant in ("paper", "code"):
        s = MotkinSampler(g, "pareto", mechanism="local_dampening", variant=variant)
        sg = MotkinSampler(g, "pareto", mechanism="exponential", variant=variant)
        U = s.U
        for _ in range(6):
            removed = tuple(int(x) for x in rng.choice(60, size=int(rng.integers(1, 4)), replace=False))
            rem, D, sens = s.scores(removed)
            deg = g.degrees[rem]
            ps = mo.pareto_score(U[rem]).astype(float)
            ref = dampen(ps, mo.pareto_sensitivity(U[rem], [degree_sensitivity(deg),
                                                              egocentric_density_sensitivity(deg)]))
            np.testing.assert_allclose(D, ref, atol=1e-12)
            assert sens == 1.0
            rem_g, psg, sens_g = sg.scores(removed)
            np.testing.assert_array_equal(psg, ps)
            assert sens_g == rem.size - 1


def test_dp_motkin_public_functions():
    g = _karate()
    for mech in ("local_dampening", "exponential", "LD", "em"):
        a = dp_motkin_pareto(g, k=3, epsilon=1.0, mechanism=mech, rng=1)
        b = dp_motkin_pareto(g, k=3, epsilon=1.0, mechanism=mech, rng=1)
        assert a.tolist() == b.tolist() and len(set(a.tolist())) == 3
        c = dp_motkin_agg(g, k=4, epsilon=2.0, mechanism=mech, rng=2)
        assert len(set(c.tolist())) == 4
    # huge budget: global = the aggregate top-k; local = the top-k of the dampened scores, which on
    # karate is NOT the aggregate top-k (local dampening's inversion: density-1 nodes of degree 2-4 have
    # δ^agg = 101, the hubs far less)
    agg = motkin_objectives(g)[0] @ [1.0, 100.0]  # ties among the top: compare values
    sel = dp_motkin_agg(g, k=3, epsilon=1e7, mechanism="exponential", rng=0)
    np.testing.assert_allclose(np.sort(agg[sel]), np.sort(agg[top_k_aggregate(g, k=3)]))
    D = MotkinSampler(g, "agg", mechanism="local_dampening").scores(())[1]
    sel = dp_motkin_agg(g, k=3, epsilon=1e7, mechanism="local_dampening", rng=0)
    np.testing.assert_allclose(np.sort(D[sel]), np.sort(D)[-3:])
    with pytest.raises(ValueError, match="k must be"):
        dp_motkin_pareto(g, k=35, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dp_motkin_agg(g, k=2, epsilon=-1.0)
    with pytest.raises(TypeError, match="Graph"):
        dp_motkin_pareto(np.eye(3), k=1, epsilon=1.0)


def test_exact_edge_dp_audit_dp_motkin_all_4_node_graphs():
    """k = 1 output distributions of all four DP-MOTkIN variants on every 4-node graph and each edge flip."""
    import dpselect.multiobjective as mo
    from dpselect.audit import exact_dp_audit

    graphs, pairs = _all_graphs(4)
    eps = 1.0
    data = [motkin_objectives(g) for g in graphs]
    nbr = [(i, i ^ (1 << b)) for i in range(len(graphs)) for b in range(len(pairs)) if i < i ^ (1 << b)]
    fns = {
        "pareto-global": lambda i: mo.priv_pareto_probabilities(data[i][0], epsilon=eps, sensitivities=[1.0, 1.0]),
        "pareto-local": lambda i: mo.priv_pareto_probabilities(data[i][0], epsilon=eps, sensitivities=data[i][1]),
        "agg-global": lambda i: mo.priv_agg_probabilities(data[i][0], [1.0, 100.0], epsilon=eps, sensitivities=[1.0, 1.0]),
        "agg-local": lambda i: mo.priv_agg_probabilities(data[i][0], [1.0, 100.0], epsilon=eps, sensitivities=data[i][1]),
    }
    for name, fn in fns.items():
        res = exact_dp_audit(fn, nbr)
        assert res.worst_log_ratio <= eps + 1e-9, (name, res.worst_log_ratio)
    # mutation: an egocentric-density sensitivity 20 times too small breaks local Agg
    from dpselect.sensitivity import SensitivityFunction

    def halved(i):
        U, (sd, se) = data[i]
        half = SensitivityFunction(lambda t, _s=se: _s(t) / 20, 1.0, n_candidates=4)
        return mo.priv_agg_probabilities(U, [1.0, 100.0], epsilon=eps, sensitivities=[sd, half])

    assert exact_dp_audit(halved, nbr).worst_log_ratio > eps + 1e-6


def test_exact_edge_dp_audit_priv_topk_all_5_node_graphs():
    from dpselect.audit import exact_dp_audit
    from dpselect.mechanisms import exponential_probabilities

    graphs, pairs = _all_graphs(5)
    eps = 0.8
    scores = [prepare_priv_topk(g, max_degree=4) for g in graphs]  # public bound D = n - 1
    nbr = [(i, i ^ (1 << b)) for i in range(len(graphs)) for b in range(len(pairs)) if i < i ^ (1 << b)]
    for mech in ("EM", "LD", "SLD"):
        def fn(i, m=mech):
            s, sens = scores[i].scores(m)
            return exponential_probabilities(s, epsilon=eps, sensitivity=sens)

        res = exact_dp_audit(fn, nbr)
        assert res.worst_log_ratio <= eps + 1e-9, (mech, res.worst_log_ratio)
    assert scores[-1].global_sensitivity == 4.0  # max(4·3/4, 4)
    assert scores[-1].utilities.tolist() == [0.0] * 5  # K5: every pair of neighbours is adjacent


def test_priv_topk():
    g = _karate()
    s = prepare_priv_topk(g, max_degree=33)  # public bound D = n - 1
    top = top_k_ebc(s, k=3)
    assert top.tolist() == top_k_ebc(g, k=3).tolist()
    assert int(np.argmax(s.utilities)) == int(top[0])
    for mech, canonical in (("EM", "exponential"), ("PF", "permute_and_flip"), ("LD", "local_dampening"),
                            ("SLD", "shifted_local_dampening"), ("sld", "shifted_local_dampening")):
        out = priv_topk(s, k=3, epsilon=0.5, mechanism=mech, rng=4)
        assert out.shape == (3,) and len(set(out.tolist())) == 3
        assert out.tolist() == priv_topk(g, k=3, epsilon=0.5, mechanism=mech, max_degree=33, rng=4).tolist()
        assert out.tolist() == priv_topk(s, k=3, epsilon=0.5, mechanism=canonical, rng=4).tolist()  # alias = canonical name
    assert sorted(priv_topk(s, k=3, epsilon=1e12, mechanism="EM", rng=0).tolist()) == sorted(top.tolist())
    # SLD maximises u − G_r, which may reorder close EBC values (here nodes 2 and 32)
    assert sorted(priv_topk(s, k=3, epsilon=1e12, mechanism="SLD", rng=0).tolist()) == sorted(np.argsort(-s.shifted())[:3].tolist())
    with pytest.raises(ValueError, match="mechanism"):
        priv_topk(s, k=1, epsilon=1.0, mechanism="XX")
    with pytest.raises(ValueError, match="mechanism"):  # not a PrivTopk mechanism
        priv_topk(s, k=1, epsilon=1.0, mechanism="report_noisy_max")
    assert priv_topk(g, k=3, epsilon=0.5, max_degree=33, rng=4).tolist() == priv_topk(s, k=3, epsilon=0.5, mechanism="SLD", rng=4).tolist()
    with pytest.raises(ValueError, match="k must be"):
        priv_topk(s, k=0, epsilon=1.0)


def test_demo_table():
    text = influential_demo_table(_karate(), k=3, epsilon=1.0, rng=0, max_degree=33)
    assert "DP-MOTkIN-Pareto local" in text and "PrivTopk-SLD" in text
    assert len(text.splitlines()) == 2 + 3 + 4 + 2


def _edge_file(tmp_path):
    p = tmp_path / "Karate.txt"
    p.write_text("\n".join(f"{u}\t{v}" for u, v in nx.karate_club_graph().edges()) + "\n")
    return p


@pytest.mark.parametrize("name,extra,methods,metric", [
    ("table2", ["--egodensity", "both"], {"pareto-global", "pareto-local"}, {"C", "C-index-ties"}),
    ("figure3", [], {"agg-global", "agg-local"}, {"recall"}),
    ("thesis-figure20", ["--ks", "3,5", "--max-degree", "33"], {"EM", "PF", "LD", "SLD"}, {"accuracy"}),
])
def test_reproductions_smoke(tmp_path, name, extra, methods, metric):
    import warnings

    from dpselect import PrivacyLeakWarning
    from dpselect.cli import main

    warnings.simplefilter("error", PrivacyLeakWarning)  # public values passed: no warning (pytest restores)

    path = _edge_file(tmp_path)
    out = tmp_path / "out"
    # an edge-list file's node set is its endpoints, read from the data: that one leak is reported (the
    # shipped graphs load with their published node sets and do not warn, see test_graphs)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        rc = main(["reproduce", name, "--runs", "2", "--epsilons", "0.5,50", "--graph", str(path),
                   "--out", str(out), "--quiet", *extra])
    assert rc == 0
    leaks = [str(w.message) for w in rec if issubclass(w.category, PrivacyLeakWarning)]
    assert leaks and all("candidate node set of graph 'Karate.txt' was read from its private edge list" in m
                         for m in leaks)
    with (out / f"{name}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:6] == ["dataset", "method", "epsilon", "run", "metric", "value"]
    assert {r["method"] for r in rows} == methods and {r["metric"] for r in rows} == metric
    assert {r["dataset"] for r in rows} == {"karate"}
    assert {r["run"] for r in rows} == {"0", "1"}
    assert all(0.0 <= float(r["value"]) <= 1.0 for r in rows)
    assert (out / f"{name}.md").read_text().startswith("#")
    assert (out / f"{name}.png").stat().st_size > 1000
    if name == "thesis-figure20":
        assert {r["k"] for r in rows} == {"3", "5"}


def test_reproduction_same_seed_same_numbers(tmp_path):
    from dpselect.cli import main

    path = _edge_file(tmp_path)
    outs = []
    for sub in ("a", "b"):
        main(["reproduce", "figure3", "--runs", "3", "--epsilons", "1", "--graph", str(path),
              "--out", str(tmp_path / sub), "--quiet"])
        outs.append((tmp_path / sub / "figure3.csv").read_text())
    assert outs[0] == outs[1]


def test_unknown_dataset_is_a_clear_error(tmp_path, capsys):
    from dpselect.cli import main

    # the CLI reports user errors as one 'error:' line on stderr and returns exit status 2
    assert main(["reproduce", "table2", "--datasets", "dblp", "--out", str(tmp_path), "--quiet"]) == 2
    assert "unknown dataset 'dblp'" in capsys.readouterr().err


def test_one_dp_motkin_object_shared_by_threads_gives_valid_draws():
    # the score caches are shared; concurrent draws must neither crash nor mix cache entries
    from concurrent.futures import ThreadPoolExecutor

    from dpselect.graphs import MotkinSampler
    from dpselect.graphs import from_edges

    rng = np.random.default_rng(0)
    pairs = {(min(a, b), max(a, b)) for a, b in rng.integers(0, 40, (200, 2)).tolist() if a != b}
    src, dst = np.array(sorted(pairs)).T
    g = from_edges(src, dst, n_nodes=40)
    sel = MotkinSampler(g, "pareto", mechanism="local_dampening", max_cache=2)  # tiny cache: constant eviction
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda s: sel.sample(k=3, epsilon=1.0, rng=s), range(40)))
    for o in outs:
        assert o.shape == (3,) and len(set(o.tolist())) == 3
    # the same seeds serially give the same draws: the shared state did not change any result
    assert [sel.sample(k=3, epsilon=1.0, rng=s).tolist() for s in range(40)] == [o.tolist() for o in outs]


def test_sampler_mechanisms():
    with pytest.raises(ValueError, match="mechanism"):  # the sampler runs EM or LD only
        MotkinSampler(_karate(), "pareto", mechanism="shifted_local_dampening")


def test_dp_motkin_other_mechanisms_and_aliases():
    """mechanism= takes any name or alias; global ones use the global sensitivities, local ones the δ's."""
    import dpselect.multiobjective as mo

    g = _karate()
    U, sfs = motkin_objectives(g)
    for mech in ("permute_and_flip", "PF", "report_noisy_max"):
        out = dp_motkin_pareto(g, k=2, epsilon=1.0, mechanism=mech, rng=3)
        ref = mo.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], mechanism=mech, k=2, rng=3)
        assert out.tolist() == np.asarray(ref).tolist()
    out = dp_motkin_agg(g, k=2, epsilon=1.0, mechanism="LD", rng=5)
    ref = mo.priv_agg(U, [1.0, 100.0], epsilon=1.0, sensitivities=sfs, mechanism="local_dampening", k=2, rng=5)
    assert out.tolist() == np.asarray(ref).tolist()


# -- issue 21 P2: the node set is public ----------------------------------------------------------------
def _p2_pair(**public):
    """The issue's neighbours: edges (0,1), (1,2) against (0,1) alone (one edge removed)."""
    return from_edges([0, 1], [1, 2], **public), from_edges([0], [1], **public)


def _p2_selectors():
    from dpselect.graphs import MotkinSampler, dp_motkin_agg, dp_motkin_pareto, priv_topk

    yield "dp_motkin_pareto", lambda g, r: dp_motkin_pareto(g, epsilon=1.0, rng=r)
    yield "dp_motkin_agg", lambda g, r: dp_motkin_agg(g, epsilon=1.0, rng=r)
    yield "MotkinSampler", lambda g, r: MotkinSampler(g, "pareto").sample(epsilon=1.0, rng=r)
    yield "priv_topk", lambda g, r: int(priv_topk(g, k=1, epsilon=1.0, max_degree=2, rng=r)[0])
    yield "prepare_priv_topk", lambda g, r: int(priv_topk(prepare_priv_topk(g, max_degree=2), k=1, epsilon=1.0,
                                                          rng=r)[0])


def test_node_set_read_from_edges_warns_in_every_private_selector():
    import warnings

    from dpselect import PrivacyLeakWarning

    x, y = _p2_pair()
    assert not x.public_nodes and (x.n_nodes, y.n_nodes) == (3, 2)   # node 2 exists only through edge (1, 2)
    for name, select in _p2_selectors():
        with pytest.warns(PrivacyLeakWarning, match=rf"{name}: the candidate node set of graph 'graph' was read "
                                                    r"from its private edge list \(the endpoints of its edges; "
                                                    r"their number is private, not shown\)"):
            select(x, 0)
    x, y = _p2_pair(n_nodes=3)
    assert x.public_nodes and (x.n_nodes, y.n_nodes) == (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        for _, select in _p2_selectors():
            select(x, 0), select(y, 0)
        influential_demo_table(x, k=1, epsilon=1.0, rng=0, max_degree=2)
        g = from_edges([0], [1], nodes=[0, 1, 5])
        assert g.public_nodes and g.node_ids.tolist() == [0, 1, 5]
        MotkinSampler(g, "agg").sample(epsilon=1.0, rng=0)


def test_public_node_set_keeps_every_selector_dp_on_the_issue_pair():
    """Exact audit of the first pick on the issue's neighbours, node set public: within e^ε. With the node set read
    from the edges, node 2 is a candidate on x only (the issue: picked 644 / 2,000 times against never)."""
    import dpselect.multiobjective as mo
    from dpselect.graphs import MotkinSampler
    from dpselect.audit import exact_dp_audit
    from dpselect.mechanisms import exponential_probabilities

    eps = 1.0
    x, y = _p2_pair(n_nodes=3)
    law = {}
    for g in (x, y):
        U, sfs = motkin_objectives(g)
        law.setdefault("pareto-local", []).append(mo.priv_pareto_probabilities(U, epsilon=eps, sensitivities=sfs))
        law.setdefault("pareto-global", []).append(mo.priv_pareto_probabilities(U, epsilon=eps,
                                                                                sensitivities=[1.0, 1.0]))
        law.setdefault("agg-local", []).append(mo.priv_agg_probabilities(U, [1.0, 100.0], epsilon=eps,
                                                                         sensitivities=sfs))
        law.setdefault("sampler", []).append(MotkinSampler(g, "pareto").probabilities(epsilon=eps))
        s = prepare_priv_topk(g, max_degree=2)
        law.setdefault("topk-EM", []).append(exponential_probabilities(s.utilities, epsilon=eps,
                                                                        sensitivity=s.global_sensitivity))
    for name, (px, py) in law.items():
        assert px.shape == py.shape == (3,), name
        res = exact_dp_audit(lambda d: {"x": px, "y": py}[d], [("x", "y")], epsilon=eps)
        assert res.passed, (name, res)
    # the sampler draws that law: node 2 (degree 1 on x, 0 on y) is picked on both graphs at a rate within e^ε
    from dpselect.graphs import dp_motkin_pareto

    for g, p in zip((x, y), law["sampler"]):
        hits = sum(dp_motkin_pareto(g, epsilon=eps, rng=r) == 2 for r in range(400))
        assert abs(hits - 400 * p[2]) < 4 * np.sqrt(400 * p[2] * (1 - p[2])), (hits, p)   # 120 and 120 of 400
    # read from the edges, the same pair is an infinite loss: node 2 has positive probability on x only
    xr, yr = _p2_pair()
    with pytest.warns(Warning):
        p_x = MotkinSampler(xr, "pareto").probabilities(epsilon=eps)
    with pytest.warns(Warning):
        p_y = MotkinSampler(yr, "pareto").probabilities(epsilon=eps)
    assert p_x.shape == (3,) and p_y.shape == (2,) and p_x[2] > 0.1
