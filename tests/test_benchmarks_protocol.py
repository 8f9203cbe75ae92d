"""The record's protocol for benchmarks/RESULTS.md (issue 38 item 4).

A timed ratio in the record is a figure another host can check only if its section names the host
(``_common.host_header``) and its cases are timed in interleaved rounds (``_common.interleaved``: at least
``MIN_ROUNDS`` rounds, the order rotated each round, the cycle reshuffled after each full turn) with the
median and the worst per-round ratio
(``_common.ratios``). The static check below holds every ``benchmarks/bench_*.py`` that exists to that; the
unit tests pin ``interleaved`` and ``ratios`` on a fake clock.
"""
from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

# Scripts with no timed ratio in their section, each with the reason: they need not call interleaved(), but a
# script that records a section still starts it with the host line. Nothing else is exempt: a script converted
# by its owner later (bench_pareto, bench_batch, bench_topk) is checked as soon as it exists.
EXEMPT = {
    "bench_dpmoet_defaults.py": "accuracy of DP-MOET's defaults over seeds; prints a fit's time, records nothing",
    "bench_tune_search.py": "test accuracy of a private hyperparameter search; one fit's time is context, no ratio",
    "bench_topk_delta.py": "recall of top-k under (ε, δ) against OpenDP; seconds per call are context, no ratio",
    "bench_tune.py": "certified ε of private selection against dp-accounting and OpenDP: ratios of ε, not of times",
}


def _load_common():
    spec = importlib.util.spec_from_file_location("_bench_common_under_test", BENCHMARKS / "_common.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


common = _load_common()


def _code(path: Path) -> str:
    """The script's text without its comments (a call in a comment does not count)."""
    return "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())


def _calls(code: str, name: str) -> bool:
    return re.search(rf"\b{name}\s*\(", code) is not None


def test_every_benchmark_script_follows_the_protocol() -> None:
    scripts = sorted(BENCHMARKS.glob("bench_*.py"))
    assert len(scripts) >= 10
    missing = []
    for path in scripts:
        code = _code(path)
        if _calls(code, "best_of"):
            missing.append(f"{path.name}: best_of (best-of-n hides slow paths; use interleaved)")
        if _calls(code, "record") and not _calls(code, "host_header"):
            missing.append(f"{path.name}: records a section without host_header()")
        if path.name in EXEMPT:
            continue
        for name in ("host_header", "interleaved"):
            if not _calls(code, name):
                missing.append(f"{path.name}: no call of {name}()")
    assert not missing, "\n".join(missing)


def test_exempt_scripts_exist_have_a_reason_and_no_timed_ratio() -> None:
    for name, reason in EXEMPT.items():
        path = BENCHMARKS / name
        assert path.exists(), f"{name} is exempt but gone: drop it from EXEMPT"
        assert len(reason) > 20
        code = _code(path)
        # a script that grew a call of interleaved() or ratios() has a timed ratio: it is no longer exempt
        assert not _calls(code, "interleaved"), f"{name} times ratios now: remove it from EXEMPT"
        assert not _calls(code, "ratios"), f"{name} times ratios now: remove it from EXEMPT"


def test_owned_scripts_are_not_exempt() -> None:
    for name in ("bench_pareto.py", "bench_batch.py", "bench_topk.py"):
        assert name not in EXEMPT


class FakeClock:
    """perf_counter for ``_common``: each case advances the clock by its own cost when called."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: list[str] = []

    def perf_counter(self) -> float:
        return self.now

    def case(self, name: str, costs):
        it = iter(costs)

        def run() -> None:
            self.calls.append(name)
            self.now += next(it)
        return run


def test_interleaved_rotates_the_order_and_times_each_round(monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(common, "time", clock)
    cases = {
        "a": clock.case("a", [100.0] + [1.0 + r for r in range(9)]),     # first value: the warm-up call
        "b": clock.case("b", [100.0] + [10.0 * (r + 1) for r in range(9)]),
        "c": clock.case("c", [100.0] + [0.5] * 9),
    }
    times = common.interleaved(cases, rounds=9)
    # warm-up once each in order, then the first cycle: a b c, b c a, c a b; later cycles: rotations of a
    # reshuffled cycle (random.Random(0): the same run every time)
    assert clock.calls[:3] == ["a", "b", "c"]
    rounds = [clock.calls[3 + 3 * r: 6 + 3 * r] for r in range(9)]
    assert rounds[0] == ["a", "b", "c"]
    assert rounds[1] == ["b", "c", "a"]
    assert rounds[2] == ["c", "a", "b"]
    shuffler, cycle = random.Random(0), ["a", "b", "c"]
    for start in (3, 6):
        shuffler.shuffle(cycle)
        assert rounds[start:start + 3] == [cycle[s:] + cycle[:s] for s in range(3)]
    # every case in every position once per cycle: three times in nine rounds
    for pos in range(3):
        assert sorted(r[pos] for r in rounds) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert len(clock.calls) == 3 + 27
    # the warm-up is not timed; each round's time is that case's own cost
    assert times == {"a": [1.0 + r for r in range(9)], "b": [10.0 * (r + 1) for r in range(9)], "c": [0.5] * 9}


def test_interleaved_changes_the_neighbours_between_cycles() -> None:
    """Pure rotation puts every case behind the same neighbour in every round (the predecessor of "c" among
    a..e is always "b"); the reshuffled cycles give each case several predecessors, the same ones for a seed."""
    calls: list[str] = []
    cases = {name: (lambda name=name: calls.append(name)) for name in "abcde"}
    common.interleaved(cases, rounds=20, warmup=0)
    rounds = [calls[5 * r: 5 * r + 5] for r in range(20)]
    before = {name: {r[(r.index(name) - 1) % 5] for r in rounds} for name in "abcde"}
    assert all(len(p) >= 2 for p in before.values()), before
    assert all(sorted(r) == list("abcde") for r in rounds)
    again: list[str] = []
    common.interleaved({name: (lambda name=name: again.append(name)) for name in "abcde"}, rounds=20, warmup=0)
    assert again == calls
    other: list[str] = []
    common.interleaved({name: (lambda name=name: other.append(name)) for name in "abcde"}, rounds=20, warmup=0,
                       seed=1)
    assert other != calls


def test_interleaved_reshuffles_every_round_when_no_cycle_fits() -> None:
    """12 cases in 9 rounds: no full turn of rotations fits, so the cycle is reshuffled before every round
    after the first (rotation alone would keep every case behind the same neighbour in all 9 rounds)."""
    names = [f"c{i}" for i in range(12)]
    calls: list[str] = []
    common.interleaved({name: (lambda name=name: calls.append(name)) for name in names}, rounds=9, warmup=0)
    rounds = [calls[12 * r: 12 * r + 12] for r in range(9)]
    assert rounds[0] == names and all(sorted(r) == sorted(names) for r in rounds)
    before = {name: {r[(r.index(name) - 1) % 12] for r in rounds} for name in names}
    assert all(len(p) >= 3 for p in before.values()), before


def test_interleaved_needs_nine_rounds() -> None:
    assert common.MIN_ROUNDS == 9
    with pytest.raises(ValueError, match="at least 9 rounds"):
        common.interleaved({"a": lambda: None}, rounds=8)
    times = common.interleaved({"a": lambda: None}, rounds=9, warmup=0)
    assert len(times["a"]) == 9


def test_ratios_are_per_round_median_and_worst() -> None:
    times = {
        "base": [1.0, 2.0, 4.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0],
        "x":    [2.0, 2.0, 2.0, 3.0, 1.0, 8.0, 1.5, 0.5, 2.0],
    }
    # per-round ratios: 2, 1, 0.5, 3, 1, 4, 1.5, 0.5, 2 -> sorted 0.5 0.5 1 1 1.5 2 2 3 4
    med, worst = common.ratios(times, "x", "base")
    assert med == 1.5
    assert worst == 4.0
    # not the ratio of medians (2 / 1 = 2): a slow round of the baseline divides only its own round
    assert common.median(times["x"]) / common.median(times["base"]) == 2.0
    assert common.ratios(times, "base", "base") == (1.0, 1.0)


def test_speedups_take_the_smallest_round_as_the_worst() -> None:
    times = {
        "old":  [10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0],
        "new":  [1.0, 2.0, 1.0, 1.0, 5.0, 1.0, 2.0, 1.0, 1.0],
    }
    # per-round speed-ups 10, 5, 10, 10, 2, 10, 5, 10, 10: median 10, worst (smallest) 2
    assert common.speedups(times, "old", "new") == (10.0, 2.0)
    assert common.fmt_speedup(times, "old", "new") == "10.0x (worst 2.0x)"
    assert common.fmt_speedup(times, "old", "new", 0) == "10x (worst 2x)"
    # the same rounds read as a ratio new / old: median 0.1, worst (largest) 0.5
    assert common.fmt_ratio(times, "new", "old") == "0.10x (worst 0.50x)"


def test_median_and_fmt_time() -> None:
    assert common.median([3.0, 1.0, 2.0]) == 2.0
    assert common.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert common.fmt_time(151e-6) == "151.0 µs"
    assert common.fmt_time(0.0123) == "12.3 ms"
    assert common.fmt_time(2.5) == "2.50 s"


def test_host_header_names_cpu_numpy_blas_and_simd() -> None:
    h = common.host()
    assert set(h) == {"cpu", "cores", "python", "numpy", "blas", "simd"}
    import numpy as np

    assert h["numpy"] == np.__version__
    line = common.host_header()
    assert line.startswith("Host: ")
    for word in (h["cpu"], f"numpy {h['numpy']}", "BLAS", "SIMD", "interleaved rounds"):
        assert word in line
    bare = common.host_header(protocol=False)
    assert line.startswith(bare) and "interleaved" not in bare and "BLAS" in bare


def test_results_preamble_states_the_protocol() -> None:
    text = (BENCHMARKS / "RESULTS.md").read_text()
    preamble = text.split("\n<!-- bench:", 1)[0]
    assert "a figure moves only when a re-run on the record's own protocol moves it" in preamble
    assert "Host of the record" in preamble
