"""benchmarks/bench_topk.py at smoke scale: its metrics, its cache, its reading of the grid, the research adapters.

The research code (google-research ``dp_topk``, ``shekelyan/dptopk``) lives outside the repository: these tests
find it through ``$DPSELECT_TOPK_RESEARCH`` or ``../ext`` next to the checkout, and skip without it.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_topk", ROOT / "benchmarks" / "bench_topk.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


B = _bench()


def _research_root() -> Path:
    root = Path(os.environ.get("DPSELECT_TOPK_RESEARCH", ROOT.parent / "ext"))
    if not (root / "dp_topk" / "dp_topk" / "joint.py").exists() or not (root / "dptopk" / "mechanisms.py").exists():
        pytest.skip(f"research code not found under {root} (set DPSELECT_TOPK_RESEARCH)")
    pytest.importorskip("mpmath")
    return root


def test_metrics_exact_numbers():
    counts = np.array([5, 9, 1, 9, 3, 0], dtype=np.int64)
    order = np.sort(counts)[::-1]                      # 9 9 5 3 1 0
    # sequence (4, 0, 3): gaps 9-3, 9-5, 5-9 -> max 6
    assert B.linf_gap(counts, order, np.array([4, 0, 3])) == 6
    assert B.linf_gap(counts, order, np.array([3, 1, 0])) == 0      # the true order (ties either way)
    assert B.linf_gap(counts, order, np.array([0, 1, 3])) == 4      # 9-5 at position 1
    # recovery: c_(3) = 5; picks with count >= 5 count
    assert B.recovery(counts, order, np.array([4, 0, 3]), 3) == pytest.approx(2 / 3)
    assert B.recovery(counts, order, np.array([5, 2, 4]), 3) == 0.0


def test_zipf_vector_is_public_and_fixed():
    z = B.zipf_counts(d=1000, records=10_000)
    assert z.size == 1000 and int(z.sum()) == 10_000 and z.dtype == np.int64
    assert np.array_equal(z, B.zipf_counts(d=1000, records=10_000))
    assert z[0] == z.max() and z[0] > 10 * z[100]


def test_run_cell_peeling_exact_and_cached(tmp_path):
    counts = np.array([100, 60, 50, 20, 0, 0, 0, 0], dtype=np.int64)
    cell = B.run_cell("toy", counts, 3, 1e4, "peel", 5, 0, tmp_path, None)
    # at ε = 1e4 peeling returns the true order: gap 0 and full recovery, exactly
    assert cell["gap"] == 0.0 and cell["rec"] == 1.0 and cell["runs"] == 5
    files = list(tmp_path.glob("toy-d8-k3-e10000-peel-n5-s0-*.json"))
    assert len(files) == 1
    # the cache answers the next call (a doctored value proves it was read, not recomputed)
    doctored = dict(cell, gap=123.0)
    files[0].write_text(json.dumps(doctored))
    assert B.run_cell("toy", counts, 3, 1e4, "peel", 5, 0, tmp_path, None)["gap"] == 123.0
    # a small ε: a positive mean gap, seeded (the same number twice in fresh caches)
    a = B.run_cell("toy", counts, 3, 0.05, "peel", 20, 1, tmp_path / "a", None)
    b = B.run_cell("toy", counts, 3, 0.05, "peel", 20, 1, tmp_path / "b", None)
    assert a["gap"] == b["gap"] > 0 and 0 <= a["rec"] < 1


def test_default_is_top_k_without_method(tmp_path):
    dpselect = pytest.importorskip("dpselect")
    if not hasattr(dpselect, "top_k"):
        pytest.skip("dpselect.top_k not in this checkout")
    counts = np.arange(40, dtype=np.int64) * 3
    cell = B.run_cell("toy", counts, 10, 0.5, "default", 6, 0, tmp_path, None)
    assert cell["picks"] == B.default_method(40, 10, 0.5) == "peeling"
    # where the rule picks peeling, the default is peeling's law and random stream: the same numbers
    peel = B.run_cell("toy", counts, 10, 0.5, "peel", 6, 0, tmp_path, None)
    assert (cell["gap"], cell["rec"]) == (peel["gap"], peel["rec"])


def _res(cells):
    return {(n, k, e, m): {"gap": g, "rec": 1.0, **({"picks": p} if m == "default" else {})}
            for (n, k, e, m, g, p) in cells}


def test_reading_counts_fails_and_wins():
    res = _res([
        ("a", 10, 1.0, "peel", 10.0, None), ("a", 10, 1.0, "default", 10.4, "peeling"),   # within 5%
        ("b", 10, 1.0, "peel", 10.0, None), ("b", 10, 1.0, "default", 10.6, "peeling"),   # 6% worse: a fail
        ("a", 200, 1.0, "peel", 30.0, None), ("a", 200, 1.0, "default", 10.0, "joint"),   # 3x
        ("b", 200, 1.0, "peel", 14.0, None), ("b", 200, 1.0, "default", 10.0, "joint"),   # 1.4x: not >= 1.5x
        ("a", 200, 1.0, "joint", 10.0, None), ("b", 200, 1.0, "joint", 10.0, None),
    ])
    lines, summary = B.reading(res, ["a", "b"], [10, 200], [1.0])
    assert summary == {"cells": 4, "fails": ["b k=10 ε=1 (0.94x)"], "joint_cells": 2, "joint_15": 1, "rec_worse": 0}
    assert any("≥ 1.5x on 1 of 2 cells" in line for line in lines)
    assert B._ratio(0.0, 0.0) == 1.0 and math.isinf(B._ratio(1.0, 0.0))
    res["a", 10, 1.0, "default"]["rec"] = 0.94                  # recovery 6% below peeling's: reported
    assert B.reading(res, ["a", "b"], [10, 200], [1.0])[1]["rec_worse"] == 1


def test_feasibility_names_the_groups_no_rule_can_meet():
    """Two data sets share (d, k, ε): joint is 3x better on "a" (so the rule must run joint there) but recovers
    40% less on "b" (so it must not): no method passes, the group is reported; at k = 10 peeling passes."""
    res = _res([
        ("a", 200, 1.0, "peel", 30.0, None), ("a", 200, 1.0, "joint", 10.0, None),
        ("b", 200, 1.0, "peel", 20.0, None), ("b", 200, 1.0, "joint", 19.0, None),
        ("a", 10, 1.0, "peel", 5.0, None), ("a", 10, 1.0, "joint", 6.0, None),
        ("b", 10, 1.0, "peel", 5.0, None), ("b", 10, 1.0, "joint", 5.0, None),
    ])
    res["b", 200, 1.0, "joint"]["rec"] = 0.6
    out = B.feasibility(res, ["a", "b"], [10, 200], [1.0])
    assert "of 2 such groups, 1 admit a method" in out[0] and "1 admit none" in out[0]
    assert len(out) == 3 and "k = 200" in out[1] and "b recovery 0.60 vs 1.00" in out[1]
    assert "peeling fails on a not 1.5x (1.00x; joint 3.00x)" in out[1]
    assert "on the ℓ∞ gap alone: 2 of 2 groups admit a method." in out[2]      # recovery was the obstacle
    res["b", 200, 1.0, "joint"]["rec"] = 0.96                     # within 5%: joint passes, no group left
    out = B.feasibility(res, ["a", "b"], [10, 200], [1.0])
    assert len(out) == 2 and out[0].endswith("is.")
    res["b", 200, 1.0, "joint"]["gap"] = 22.0                     # 10% worse than peeling on b: gap alone fails
    out = B.feasibility(res, ["a", "b"], [10, 200], [1.0])
    assert "gap alone: 1 of 2 groups admit a method; none in (d = None, k = 200, ε = 1)" in out[-1]


def test_research_skip_rule(tmp_path):
    big = np.zeros(10**4, dtype=np.int64)                # d·k = 10^4 · 200 = 2e6: runs; 10^7 + 200: skipped
    root = tmp_path                                      # never read for a skipped cell
    assert "skipped" in B.run_cell("z", np.zeros(50_001, dtype=np.int64), 200, 1.0, "r_joint", 1, 0, tmp_path, root)
    assert "skipped" in B.run_cell("z", np.zeros(40_001, dtype=np.int64), 200, 1.0, "r_clm", 1, 0, tmp_path, root)
    assert B.run_cell("z", big, 200, 1.0, "r_joint", 1, 0, tmp_path, None) is None     # no --research: no column


def test_research_adapters_agree_with_the_truth_at_large_epsilon(tmp_path):
    root = _research_root()
    counts = np.array([3, 40, 7, 25, 0, 11, 2], dtype=np.int64)
    truth = [1, 3, 5]
    assert B.research("r_joint", root)(counts, 3, 1e4, 1).tolist() == truth
    assert B.research("r_peel", root)(counts, 3, 1e4, 1).tolist() == truth
    assert sorted(B.research("r_clm", root)(counts, 3, 1e4, 1).tolist()) == truth     # a set
    # small ε: seeded, reproducible, k distinct items
    a = B.research("r_joint", root)(counts, 3, 0.1, 5)
    assert a.tolist() == B.research("r_joint", root)(counts, 3, 0.1, 5).tolist() and len(set(a.tolist())) == 3


def test_chi2_law_small_case():
    """Our joint and the research joint against the exact law exp(−ε·gap/2) (3,000 draws each: p-values not tiny)."""
    root = _research_root()
    import re

    text = B._chi2_law(root, n=3000, seed=1)
    ps = [float(p) for p in re.findall(r"p = ([0-9.]+)", text)]
    assert len(ps) == 3 and min(ps) > 1e-3, text
