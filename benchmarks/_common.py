"""Shared helpers for benchmark scripts: timing and recording into benchmarks/RESULTS.md.

Each benchmark owns one section of RESULTS.md, delimited by
``<!-- bench:NAME -->`` ... ``<!-- /bench:NAME -->``; :func:`record` replaces just that section, so
scripts can be re-run independently.
"""
from __future__ import annotations

import os
import platform
import random
import re
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def best_of(fn, repeat: int = 3) -> float:
    """Minimum wall time of ``repeat`` calls of ``fn()`` in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def record(name: str, markdown: str) -> None:
    """Write ``markdown`` as the section ``name`` of RESULTS.md (replacing an earlier one)."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\nRe-run a script to refresh its section.\n"
    block = f"<!-- bench:{name} -->\n{markdown.rstrip()}\n<!-- /bench:{name} -->"
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)
    print(markdown)


# --- The record's protocol (issue 38 item 4) ------------------------------------------------------------
# A ratio is only a figure if another host can check it: every section names the host (CPU model, numpy's
# build: BLAS and SIMD level), times every case in the same rounds with the order rotated each round and the
# cycle reshuffled after each full turn (so a slow spell of a shared machine hits every case alike, and no case
# always follows the same neighbour), and reports beside each ratio the absolute median
# time of its baseline. ``MIN_ROUNDS`` rounds at least; the median over rounds and the worst round are both
# given (best-of-n hides slow paths).

MIN_ROUNDS = 9


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host() -> dict[str, str]:
    """What a reader needs to re-run a section: CPU, cores, Python, numpy and its BLAS and SIMD level."""
    import numpy as np

    info: dict[str, str] = {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": "unknown",
        "simd": "unknown",
    }
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        info["blas"] = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
        simd = cfg.get("SIMD Extensions", {})
        info["simd"] = "baseline " + "+".join(simd.get("baseline", [])) + ", found " + "+".join(simd.get("found", []))
    except Exception:  # an older numpy without mode="dicts": the header says unknown
        pass
    return info


def host_header(protocol: bool = True) -> str:
    """One markdown line naming the host, for the top of each section (``protocol=False``: without the sentence
    on timed rounds, for a section with no timed ratio)."""
    h = host()
    line = (f"Host: {h['cpu']}, {h['cores']} cores, Python {h['python']}, numpy {h['numpy']} "
            f"(BLAS {h['blas']}; SIMD {h['simd']}).")
    if protocol:
        line += (" Protocol: medians over interleaved rounds, order rotated each round (the cycle reshuffled, seeded, "
                 "after each full turn); the worst column is the largest per-round ratio.")
    return line


def interleaved(cases, *, rounds: int = MIN_ROUNDS, warmup: int = 1, seed: int = 0) -> dict[str, list[float]]:
    """Time each callable of ``cases`` (name -> fn) once per round, rotating the order every round; after each
    full cycle of rotations the cycle itself is reshuffled (``random.Random(seed)``, so a run is repeatable).
    With more cases than rounds (no full cycle fits) the cycle is reshuffled before every round after the
    first.

    Rotation alone puts each case in every position equally often, but always behind the same neighbour, so a
    cost one case leaves behind (freed memory returned to the host, a cold cache) lands on the same other case
    every round; the reshuffled cycles change the neighbours while each cycle still visits every position.

    Returns name -> list of ``rounds`` wall times in seconds (``warmup`` untimed calls of each first).
    """
    if rounds < MIN_ROUNDS:
        raise ValueError(f"the record's protocol needs at least {MIN_ROUNDS} rounds, got {rounds}")
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            cases[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    shuffler = random.Random(seed)
    cycle = list(names)
    for r in range(rounds):
        shift = r % len(names)
        if r > 0 and (shift == 0 or len(names) > rounds):
            shuffler.shuffle(cycle)
        for name in cycle[shift:] + cycle[:shift]:
            t0 = time.perf_counter()
            cases[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def median(xs) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def ratios(times: dict[str, list[float]], name: str, baseline: str) -> tuple[float, float]:
    """(median of per-round ratios, worst per-round ratio) of ``name`` against ``baseline``."""
    per_round = [a / b for a, b in zip(times[name], times[baseline])]
    return median(per_round), max(per_round)


def fmt_ratio(times: dict[str, list[float]], name: str, baseline: str) -> str:
    """``ratios`` as a table cell: "1.23x (worst 1.45x)" (the worst round: the largest ratio)."""
    med, worst = ratios(times, name, baseline)
    return f"{med:.2f}x (worst {worst:.2f}x)"


def speedups(times: dict[str, list[float]], slow: str, fast: str) -> tuple[float, float]:
    """(median, worst) per-round speed-up of ``fast`` over ``slow`` (slow / fast): the worst round is the
    smallest speed-up, i.e. the round with the largest ratio fast / slow."""
    med, worst = ratios(times, fast, slow)
    return 1.0 / med, 1.0 / worst


def fmt_speedup(times: dict[str, list[float]], slow: str, fast: str, digits: int = 1) -> str:
    """``speedups`` as a table cell: "12.3x (worst 9.8x)"."""
    med, worst = speedups(times, slow, fast)
    return f"{med:.{digits}f}x (worst {worst:.{digits}f}x)"


def fmt_time(seconds: float) -> str:
    """A wall time with a unit a reader takes in at a glance."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"
