"""The published code's quirks (dpselect.experiments.paper_code): each one on a small hand example."""
from __future__ import annotations

import numpy as np
import pytest

import dpselect
from dpselect.experiments import data_path
from dpselect.experiments import paper_code as pc
from dpselect.utilities.classification import rate_sensitivity


# -- metric C: strict (the paper's Def. 4.3 and the code's pareto_metrics.py, = dpselect.trees.metric_c) vs weak --
def test_metric_c_strict_is_the_codes_and_weak_differs():
    ref = np.array([[0.8, 0.6]])
    cand = np.array([[0.8, 0.5], [0.7, 0.5], [0.9, 0.1]])
    # code: (x' < x) & (y' < y) -> only (0.7, 0.5) is dominated
    assert dpselect.trees.metric_c(ref, cand) == pytest.approx(1 / 3)
    # weak domination (>= everywhere, > somewhere) also counts (0.8, 0.5), equal in TPR
    assert pc.metric_c_weak(ref, cand) == pytest.approx(2 / 3)


def test_weak_pareto_score_counts_equal_rows():
    U = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [2.0, 0.0]])
    assert pc.pareto_score_weak(U).tolist() == [-1.0, -1.0, -3.0, 0.0]   # (2, 0) >= (0, 0) counts too
    assert dpselect.multiobjective.pareto_score(U).tolist() == [0, 0, -2, 0]          # strict: duplicates do not count


# -- the code's sensitivity functions ------------------------------------------------------------------
def test_code_rate_delta_against_ours():
    # TP = 4, FN = 1: both 0.2 at t = 0
    assert pc.code_rate_delta([4], [5], 0)[0] == pytest.approx(0.2, rel=1e-6)
    assert rate_sensitivity(np.array([4]), np.array([1]))(0)[0] == pytest.approx(0.2)
    # TP = 50, FN = 50: the code takes a replace-one move (1/p = 0.01), ours M/(P(P-1)) = 50/9900
    assert pc.code_rate_delta([50], [100], 0)[0] == pytest.approx(0.01, rel=1e-6)
    assert rate_sensitivity(np.array([50]), np.array([50]))(0)[0] == pytest.approx(50 / 9900)
    # at distance t the code removes false negatives first: tp' = 50, p' = 90 at t = 10 -> 1/90
    assert pc.code_rate_delta([50], [100], 10)[0] == pytest.approx(1 / 90, rel=1e-5)   # float32, as the Cython code


def test_agg_delta_uses_tpr_twice():
    sf = pc.code_rate_sensitivity(np.array([50, 7]), np.array([100, 9]))
    agg = pc.tpr_twice_sensitivity((3.0, 2.0), sf)
    for t in (0, 3):
        want = 3 * sf(2 * t) + 2 * sf(2 * t + 1)
        assert np.allclose(agg(t), want)


def test_code_egodensity_delta():
    sf = pc.code_egodensity_sensitivity(np.array([5.0, 4.0, 3.0, 10.0]))
    assert sf(0).tolist() == pytest.approx([0.5, 2 / 3, 1.0, 2 / 9])
    ours = dpselect.utilities.graph.egocentric_density_sensitivity(np.array([5, 4, 3, 10]))
    assert ours(0).tolist() == pytest.approx([2 / 3, 1.0, 1.0, 0.25])    # admissible: one step larger


def test_code_pareto_delta_is_strict_where_ours_is_not():
    U = np.array([[1.0, 1.0], [2.0, 2.0]])
    half = [dpselect.SensitivityFunction(lambda t: np.full(2, 0.5), 1.0) for _ in range(2)]
    # intervals [0.5, 1.5] and [1.5, 2.5] touch: ours (non-strict, DESIGN.md) counts the crossing
    assert dpselect.multiobjective.pareto_sensitivity(U, half)(0).tolist() == [1.0, 1.0]
    assert pc.code_pareto_sensitivity(U, half)(0).tolist() == [0.0, 0.0]
    # paper Example 4.6 gives the same with either rule
    V = np.array([[1.0, 1.0], [3.0, 3.0], [5.0, 5.0]])
    d = [dpselect.SensitivityFunction(lambda t: np.array([0.5, 1.0, 1.5]), 1.5) for _ in range(2)]
    assert pc.code_pareto_sensitivity(V, d)(0).tolist() == [0.0, 1.0, 1.0]


def test_code_pareto_delta_large_n_path_agrees_with_the_small_one():
    rng = np.random.default_rng(3)
    n = 450
    U = np.column_stack([rng.integers(1, 30, n).astype(float), rng.random(n)])
    sfs = [dpselect.constant(n, 1.0), pc.code_egodensity_sensitivity(U[:, 0])]
    big = pc.code_pareto_sensitivity(U, sfs)                   # n > 400: O(n log n) counting
    small = pc._CodeParetoDelta(U, sfs)
    for t in (0, 2):
        small(t)
        assert np.array_equal(big(t), small._counts_small(small.cum))


def test_dampen_zero_is_the_first_positive_step():
    sf = dpselect.SensitivityFunction(lambda t: np.full(2, 0.0 if t < 3 else 1.0), 1.0)
    assert pc.dampen_quirk([0.0, -1.0], sf, zero=False).tolist() == [0.0, -4.0]   # ours: D(0) = 0
    assert pc.dampen_quirk([0.0, -1.0], sf, zero=True).tolist() == [3.0, -4.0]    # the code: D(0) = 3


def test_stale_cache_reproduces_a_wrong_delta():
    """Two populations with equal (weak) Pareto scores but other TP/TN: the code's cache returns the first's D."""
    n_pos = n_neg = 1000
    pops = [(np.array([100, 500, 900]), np.array([900, 500, 100])),    # spread out: crossings come late
            (np.array([480, 500, 520]), np.array([520, 500, 480]))]    # close together: crossings early
    cache = pc.DampenCache()
    got, fresh = [], []
    for tp, tn in pops:
        U = np.column_stack([tp / n_pos, tn / n_neg])
        u = pc.pareto_score_weak(U)
        assert u.tolist() == [0.0, 0.0, 0.0]

        def compute(U=U, tp=tp, tn=tn, u=u):
            sfs = pc._rate_sfs(tp, tn, n_pos, n_neg, True)
            return pc.dampen_quirk(u, pc.code_pareto_sensitivity(U, sfs), zero=True)

        fresh.append(compute())
        got.append(cache.get(u, np.concatenate([tp, tn]).tobytes(), compute))
    assert cache.counts() == {"calls": 2, "hits": 1, "stale": 1}
    assert np.array_equal(got[1], fresh[0])            # the second population gets the first one's D ...
    assert not np.allclose(fresh[1], fresh[0])         # ... which is not its own
    assert fresh[0].min() > fresh[1].max()             # (D(0) = first crossing: later for the spread population)


# -- the code's float path and failed runs -------------------------------------------------------------
def test_code_exponential_fails_like_the_code():
    u = np.array([-1440.0, 0.0, 0.0, 0.0])   # ε/k = 1, Δ = 1: u/2 = -720 -> a subnormal probability
    outcomes = []
    for seed in range(40):
        try:
            pc.code_exponential(u, 3.0, 1.0, 3, np.random.default_rng(seed))
            outcomes.append("ok")
        except pc.FloatingPointFailure:
            outcomes.append("failed")
    # the subnormal probability e^-720 / 3 survives the normalisation (the code's mpmath fallback), and
    # choice's cdf / cdf[-1] (cdf[-1] = 1 - 2^-53 here) makes an inexact subnormal: under
    # np.seterr(all='raise') every run fails
    assert outcomes == ["failed"] * 40
    sel = pc.code_exponential(np.array([0.0, 0.0, -2.0]), 1.0, 1.0, 2, np.random.default_rng(0))
    assert sorted(sel.tolist()) in ([0, 1], [0, 2], [1, 2])


def test_failed_runs_count_as_zero(monkeypatch):
    from dpselect.experiments import table1

    real = pc.moet_run

    def failing(*a, **kw):
        if kw.get("mechanism") == "local_dampening":
            raise pc.FloatingPointFailure("underflow encountered in divide")
        return real(*a, **kw)

    monkeypatch.setattr(pc, "moet_run", failing)
    settings = dict(population=4, selection=2, generations=2, depth=1, max_depth=2, output=2, budget="even")
    rows, note = table1._task((0, "nltcs", 0, 0, [1.0], settings, ("fp-raise", "failed-zero")))
    local = [r for r in rows if r["method"] == "pareto-local"]
    assert [(r["value"], r["failed"]) for r in local] == [(0.0, 1)]
    assert note["failed"] == [("pareto-local", 1.0)]
    rows, note = table1._task((0, "nltcs", 0, 0, [1.0], settings, ("fp-raise",)))
    assert {r["method"] for r in rows} == {"pareto-global"}      # left out (what the notebooks' CSV holds)


# -- the protocol as a whole ---------------------------------------------------------------------------
def test_no_quirk_is_dp_moet_bit_for_bit():
    from dpselect.trees import CompressedTable, dp_moet
    from dpselect.tabular import load_nltcs

    data = load_nltcs(data_path("tabular", "nltcs.dat"))
    comp = CompressedTable.from_data(data)
    s = dict(population=6, selection=2, generations=2, depth=2, max_depth=3, output=2, budget="even")
    a = dp_moet(data, epsilon=1.0, approach="pareto", mechanism="local_dampening", rng=np.random.default_rng(4),
                compressed=comp, exact_statistics=True, **s)
    b = pc.moet_run(data, comp, epsilon=1.0, approach="pareto", mechanism="local_dampening", weights=(3, 2),
                    rng=np.random.default_rng(4), quirks=(), **s)
    assert np.array_equal(a.objectives, b.objectives)
    c = pc.moet_run(data, comp, epsilon=1.0, approach="pareto", mechanism="local_dampening", weights=(3, 2),
                    rng=np.random.default_rng(4), quirks=pc.TABLE1_QUIRKS, **s)
    assert c.objectives.shape == (2, 2) and np.all((c.objectives >= 0) & (c.objectives <= 1))


def test_nodp_argsort_takes_the_last_of_the_sort_order():
    U = np.array([[0.2, 0.9], [0.9, 0.2], [0.5, 0.5], [0.1, 0.1]])
    assert pc.nodp_select_quirks(U, "pareto", (3, 2), 2, None, ("nodp-argsort",)).tolist() == \
        np.argsort(dpselect.multiobjective.pareto_score(U).astype(float))[-2:].tolist()
    assert pc.topk_reference_argsort(U, 2).tolist() == np.argsort(
        dpselect.multiobjective.pareto_score(U).astype(float))[::-1][:2].tolist()


def test_protocol_arguments(tmp_path, capsys):
    from dpselect.cli import main

    out = tmp_path / "pc"
    assert main(["reproduce", "table1", "--runs", "1", "--epsilons", "1", "--datasets", "nltcs", "--population", "4",
                 "--selection", "2", "--generations", "2", "--depth", "1", "--max-depth", "2", "--output", "2",
                 "--jobs", "1", "--protocol", "paper-code", "--out", str(out), "--quiet"]) == 0
    md = (out / "table1.md").read_text()
    assert "Protocol: **paper-code**" in md and "Not a private release" in md and "--protocol paper-code" in md
    rows = dpselect.experiments._common.read_csv(out / "table1.csv")
    assert {r["protocol"] for r in rows} == {"paper-code"} and {r["budget"] for r in rows} == {"paper-code"}
    assert main(["reproduce", "table2", "--quirks", "budget", "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "do not apply here" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:    # an argparse error
        main(["reproduce", "table1", "--quirks", "nonsense", "--out", str(tmp_path / "y"), "--quiet"])
    assert exc.value.code == 2 and "unknown quirk" in capsys.readouterr().err


@pytest.mark.parametrize("quirks", ["ed-formula,fixed-scores", "fixed-scores,delta-code,dampen-zero", "all"])
def test_table2_quirks_smoke(tmp_path, quirks):
    import networkx as nx

    from dpselect.cli import main

    path = tmp_path / "Karate.txt"
    path.write_text("\n".join(f"{u}\t{v}" for u, v in nx.karate_club_graph().edges()) + "\n")
    out = tmp_path / "out"
    assert main(["reproduce", "table2", "--runs", "2", "--epsilons", "1,50", "--graph", str(path), "--quirks", quirks,
                 "--out", str(out), "--quiet"]) == 0
    rows = dpselect.experiments._common.read_csv(out / "table2.csv")
    assert {r["method"] for r in rows} == {"pareto-global", "pareto-local"}
    assert all(0 <= float(r["value"]) <= 1 for r in rows)


# -- issue 21: Figure 3's δ^agg uses the density sensitivity twice and the degree one never ----------------
def test_agg_delta_ed_is_density_twice_degree_never():
    deg = np.array([5, 4, 3, 10, 40])
    ed = dpselect.utilities.graph.egocentric_density_sensitivity(deg)
    agg = pc.first_twice_sensitivity((100.0, 1.0), ed, name="agg-ed-twice")
    for t in (0, 1, 4):
        assert agg(t).tolist() == pytest.approx((100 * ed(2 * t) + ed(2 * t + 1)).tolist())
    # ours: 1·δ^degree + 100·δ^ED = 1 + 100·δ^ED(t); the code's is smaller once δ^ED(2t + 1) < 1
    assert agg(0)[4] == pytest.approx(100 * 2 / 38 + 2 / 37) and agg(0)[4] < 1 + 100 * ed(0)[4]


def test_figure3_quirk_sampler_is_ours_without_quirks_and_runs_with_them(tmp_path):
    import networkx as nx

    from dpselect.graphs import MotkinSampler
    from dpselect.cli import main
    from dpselect.graphs import from_edges

    edges = np.array(list(nx.karate_club_graph().edges()))
    g = from_edges(edges[:, 0], edges[:, 1], nodes=range(34))
    base = MotkinSampler(g, "agg", mechanism="local_dampening")
    plain = pc.TopkAggQuirks(base.U, g.degrees, (1.0, 100.0), quirks=())
    for seed in range(5):
        assert (plain.sample(k=3, epsilon=2.0, rng=np.random.default_rng(seed)).tolist()
                == base.sample(k=3, epsilon=2.0, rng=np.random.default_rng(seed)).tolist())
    quirky = pc.TopkAggQuirks(base.U, g.degrees, (1.0, 100.0), quirks=("agg-delta-ed",))
    assert np.all(quirky.sf(0) <= plain.sf(0)) and np.any(quirky.sf(0) < plain.sf(0))
    path = tmp_path / "Karate.txt"
    path.write_text("\n".join(f"{u}\t{v}" for u, v in nx.karate_club_graph().edges()) + "\n")
    out = {}
    for q in ("none", "agg-delta-ed"):
        assert main(["reproduce", "figure3", "--runs", "3", "--epsilons", "1,20", "--graph", str(path), "--quirks", q,
                     "--out", str(tmp_path / q), "--quiet"]) == 0
        out[q] = dpselect.experiments._common.read_csv(tmp_path / q / "figure3.csv")
    # the global method does not change; with the same seeds the local one may
    assert [r for r in out["none"] if r["method"] == "agg-global"] == \
        [r for r in out["agg-delta-ed"] if r["method"] == "agg-global"]


def test_quirk_selectors_read_aggregate_like_agg():
    """approach="aggregate" (the library's name) selects the weighted sum, not silently the Pareto score."""
    from dpselect.experiments.paper_code import nodp_select_quirks
    U = np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.95], [0.6, 0.6]])
    for quirks in ((), ("nodp-argsort",)):
        a = nodp_select_quirks(U, "agg", (3, 2), 2, np.random.default_rng(0), quirks).tolist()
        b = nodp_select_quirks(U, "aggregate", (3, 2), 2, np.random.default_rng(0), quirks).tolist()
        assert a == b
