"""Shared helpers for benchmark scripts: timing and recording into benchmarks/RESULTS.md.

Each benchmark owns one section of RESULTS.md, delimited by
``<!-- bench:NAME -->`` ... ``<!-- /bench:NAME -->``; :func:`record` replaces just that section, so
scripts can be re-run independently.
"""
from __future__ import annotations

import os
import platform
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
