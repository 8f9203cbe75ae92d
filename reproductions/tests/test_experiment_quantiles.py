"""`dpselect-reproduce quantiles` (issue 26): the metric, its floor, OpenDP's scores, and a smoke run."""
from __future__ import annotations

import csv
import importlib.util

import numpy as np
import pytest

from dpselect_reproductions import main
from dpselect_reproductions import quantiles as Q

HAS_QUANTILES = hasattr(__import__("dpselect"), "quantiles") and callable(getattr(__import__("dpselect"), "quantiles"))
needs_quantiles = pytest.mark.skipif(not HAS_QUANTILES, reason="dpselect.quantiles not in this tree yet")


def _brute(hist, q, v):
    records = np.repeat(np.arange(hist.size), hist)
    return abs(int(np.sum(records <= v)) - q * records.size) / records.size


def test_rank_errors_and_floor_against_brute_force():
    gen = np.random.default_rng(0)
    hist = gen.integers(0, 4, size=12)
    hist[[0, 5]] = [7, 0]
    qs = Q.quantile_levels(9)
    vs = gen.uniform(-2, 14, size=qs.size)
    np.testing.assert_allclose(Q.rank_errors(hist, qs, vs), [_brute(hist, q, v) for q, v in zip(qs, vs)],
                               rtol=0, atol=1e-15)
    grid = np.arange(12) + 0.5                                # one value per bin (the candidates)
    floor = [min(_brute(hist, q, v) for v in grid) for q in qs]
    np.testing.assert_allclose(Q.rank_floor(hist, qs), floor, rtol=0, atol=1e-15)
    # no value inside the bounds (0, 12) beats the floor, their ends included
    many = np.linspace(0, 12, 721)
    for q, f in zip(qs, Q.rank_floor(hist, qs)):
        assert min(Q.rank_errors(hist, np.full(many.size, q), many)) >= f - 1e-15
    assert np.isnan(Q.rank_errors(hist, qs[:2], np.array([np.nan, 1.0]))[0])


def test_floor_is_zero_where_a_rank_hits_q_n_and_levels_are_even():
    assert Q.quantile_levels(9).tolist() == [i / 10 for i in range(1, 10)]
    hist = np.array([1, 1, 1, 1])
    assert Q.rank_floor(hist, np.array([0.25, 0.5, 1.0])).tolist() == [0.0, 0.0, 0.0]
    # rank 0 (a value below every record) is not a candidate: the bins' best is rank 10
    assert Q.rank_floor(np.array([10]), np.array([0.4]))[0] == pytest.approx(0.6)
    assert Q.rank_errors(np.array([10]), np.array([0.4]), np.array([-1.0]))[0] == pytest.approx(0.4)


def test_opendp_scores_follow_the_formula():
    hist = np.array([3, 0, 2, 5, 1])
    records = np.repeat(np.arange(5), hist)
    for alpha in (0.5, 0.25, 0.1, 0.9):
        scores, den = Q.opendp_scores(hist, alpha)
        num = round(alpha * den)
        want = [abs((den - num) * int(np.sum(records < c)) - num * int(np.sum(records > c))) for c in range(5)]
        assert scores == want
        assert abs(num / den - alpha) < 1e-12


@pytest.mark.skipif(importlib.util.find_spec("opendp") is None, reason="OpenDP is a benchmark-only baseline")
def test_opendp_scores_equal_opendps_own_transformation():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    hist = np.zeros(4096, dtype=np.int64)
    hist[[3, 10, 11, 4000]] = [5, 7, 1, 2]
    hist[100:110] = 3
    n = int(hist.sum())
    records = np.repeat(np.arange(4096), hist).tolist()
    dom = dp.vector_domain(dp.atom_domain(T=int), size=n)
    for alpha in (0.01, 0.22, 0.5, 0.99):
        t = dp.t.make_quantile_score_candidates(dom, dp.symmetric_distance(), list(range(4096)), alpha)
        assert t(records) == Q.opendp_scores(hist, alpha)[0]


def test_unknown_methods_and_bad_ms_are_refused_before_work(tmp_path, capsys):
    assert main(["quantiles", "--methods", "jointt", "--runs", "1", "--out", str(tmp_path),
                 "--quiet"]) == 2
    assert "unknown method(s) jointt" in capsys.readouterr().err
    assert main(["quantiles", "--ms", "0", "--runs", "1", "--out", str(tmp_path), "--quiet"]) == 2
    assert "--ms must be integers >= 1" in capsys.readouterr().err
    assert not (tmp_path / "quantiles.csv").exists()


@needs_quantiles
def test_smoke_run_writes_the_contract_and_is_reproducible(tmp_path, monkeypatch):
    from dpselect_reproductions import _common

    def no_plot():
        raise ImportError("figures skipped by the test")

    monkeypatch.setattr(_common, "pyplot", no_plot)
    argv = ["quantiles", "--runs", "2", "--datasets", "medcost", "--ms", "3", "--epsilons", "0.1,1",
            "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    a = (tmp_path / "a" / "quantiles.csv").read_text()
    assert a == (tmp_path / "b" / "quantiles.csv").read_text()
    with (tmp_path / "a" / "quantiles.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["dataset", "method", "epsilon", "run", "metric", "value", "m", "status"]
    methods = list(Q.METHODS)
    assert len(rows) == 2 * 2 * len(methods) * 2            # ε x runs x methods x (excess, error)
    assert {r["method"] for r in rows} == set(methods)
    for r in rows:
        assert r["status"] == "ok"
        if r["metric"] == "error" or r["method"] != "unbounded":   # only unbounded can go below the bins
            assert float(r["value"]) >= -1e-15
        assert float(r["value"]) <= 1
    md = (tmp_path / "a" / "quantiles.md").read_text()
    assert "## m = 3" in md and "best baseline / default" in md and "commit" in md
    assert "## The default against the best baseline" in md
    # --reuse: the other rows are carried over as text, the --rerun ones computed afresh with their own seeds
    assert main(["quantiles", "--runs", "2", "--datasets", "medcost", "--ms", "3", "--epsilons", "0.1,1", "--quiet",
                 "--reuse", str(tmp_path / "a" / "quantiles.csv"), "--rerun", "default,auto",
                 "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "quantiles.csv").read_text() == a
    assert "Carried over from" in (tmp_path / "c" / "quantiles.md").read_text()


def test_default_verdict():
    assert Q.default_verdict(1e-3, 1.5e-3, 10 ** 6) == ("win", 1.5)
    assert Q.default_verdict(1e-3, 1.1e-3, 10 ** 6)[0] == "tie"
    assert Q.default_verdict(1.3e-3, 1e-3, 10 ** 6)[0] == "loss"
    assert Q.default_verdict(1e-5, 0.0, 10 ** 6) == ("floor tie", 0.0)      # 10 records: the floor
    assert Q.default_verdict(2e-5, 0.0, 10 ** 6)[0] == "loss"


def test_bound_lines_count_the_per_cell_best_and_the_floor_cells():
    """hepth (347k records): `joint` is 2x below the best baseline (a win) though the default is not; income
    (20.8M): the best baseline is exactly 0, a floor cell no method can win."""
    a = np.asarray
    cells = {("hepth", 9, 0.1, "independent"): a([4e-4]), ("hepth", 9, 0.1, "opendp"): a([3e-4]),
             ("hepth", 9, 0.1, "joint"): a([1.5e-4]), ("hepth", 9, 0.1, "default"): a([2.9e-4]),
             ("income", 9, 0.1, "independent"): a([0.0]), ("income", 9, 0.1, "default"): a([0.0])}
    (line,) = Q._bound_lines(cells, ["hepth", "income"], 9, 0.1)
    assert "the best of 2 dpselect methods" in line and "wins on 1 (hepth 2.00x joint)" in line
    assert "within 10 records of the bins' best on 1 (income 0 records)" in line
    cells["hepth", 9, 0.1, "joint"] = a([2.5e-4])                    # 1.2x: no win left, one floor cell
    assert "wins on 0;" in Q._bound_lines(cells, ["hepth", "income"], 9, 0.1)[0]
    assert Q._bound_lines(cells, ["hepth"], 9, 0.1) == []


@pytest.mark.skipif(importlib.util.find_spec("opendp") is None, reason="OpenDP is a benchmark-only baseline")
def test_unsized_opendp_scores_equal_opendps_own_transformation():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    hist = np.zeros(4096, dtype=np.int64)
    hist[[3, 10, 11, 4000]] = [5, 7, 1, 2]
    records = np.repeat(np.arange(4096), hist).tolist()
    dom = dp.vector_domain(dp.atom_domain(T=int))                  # the add/remove runs: n unknown
    for alpha in (0.01, 0.22, 0.5, 0.99):
        t = dp.t.make_quantile_score_candidates(dom, dp.symmetric_distance(), list(range(4096)), alpha)
        assert t(records) == Q.opendp_scores(hist, alpha, sized=False)[0]


@needs_quantiles
def test_add_remove_run_drops_the_refused_methods_and_says_the_model(tmp_path, monkeypatch):
    from dpselect_reproductions import _common

    monkeypatch.setattr(_common, "pyplot", lambda: (_ for _ in ()).throw(ImportError("no figures")))
    argv = ["quantiles", "--runs", "1", "--datasets", "medcost", "--ms", "3", "--epsilons", "1",
            "--neighbours", "add_remove", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    with (tmp_path / "quantiles.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == set(Q.METHODS) - {"joint", "unbounded", "recursive-relative",
                                                            "recursive-relative-grid"}
    assert all(r["status"] == "ok" and float(r["value"]) >= -1e-15 for r in rows)
    md = (tmp_path / "quantiles.md").read_text()
    assert "add/remove-one neighbours" in md.splitlines()[0] and "--neighbours add_remove" in md
    assert "Refused under add/remove neighbours (no rows): joint, unbounded." in md
    assert "(no rows): recursive-relative, recursive-relative-grid." in md


@pytest.mark.parametrize("folder", ["quantiles", "quantiles-add-remove"])
def test_committed_markdown_renders_from_its_csv(folder, tmp_path):
    """render(): the committed quantiles.md is what the report's code makes of the committed CSV (nothing run);
    only the commit and the wall time come from the markdown itself."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "results" / folder
    for name in ("quantiles.csv", "quantiles.md"):
        shutil.copy(root / name, tmp_path / name)
    assert Q.render(tmp_path).read_text() == (root / "quantiles.md").read_text()


def test_render_refuses_another_report(tmp_path):
    (tmp_path / "quantiles.md").write_text("# x\n\nCommand: `dpselect-reproduce table2 --out x`\n\n"
                                           "Settings: code at commit abc; 1 run. Wall time 1 s.\n")
    (tmp_path / "quantiles.csv").write_text("dataset,method,epsilon,run,metric,value,m,status\n")
    with pytest.raises(SystemExit, match="not the report"):
        Q.render(tmp_path)
