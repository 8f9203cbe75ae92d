"""The fixed cost of one small exact selection: ``exponential``, ``permute_and_flip`` and ``report_noisy_max``
(Laplace noise) over n = 20 and n = 100 candidates, with and without an accountant, against a numpy Gumbel-max
``int(np.argmax(u * c + gen.gumbel(size=n)))`` timed in the same run.

One call = validation, the accountant's charge (when passed) and the exact draw. Each round times ``--calls``
calls of every configuration in turn (interleaved, the baseline first); a ratio is the round's time per call over
the same round's numpy time at the same n. Reported: the median ratio over ``--rounds`` (>= 9) rounds and the
worst round, the numpy time per call (median), the CPU model and numpy's version.

Run: ``python benchmarks/bench_small_call.py [--rounds 9] [--calls 2000] [--label after]`` (writes its section of
benchmarks/RESULTS.md; the table of the other label, ``before`` or ``after``, already there is kept, so a run at
an earlier commit with ``--label before`` and one now give both).
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

import dpselect
from dpselect.accounting import Accountant

from _common import RESULTS, machine, record

SELECTORS = {
    "exponential": lambda u, g, acc: dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, rng=g, accountant=acc),
    "permute_and_flip": lambda u, g, acc: dpselect.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=g,
                                                                    accountant=acc),
    "report_noisy_max": lambda u, g, acc: dpselect.report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=g,
                                                                    noise="laplace", accountant=acc),
}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def source_commit() -> str:
    """The commit of the dpselect source being timed ("" outside a git checkout)."""
    r = subprocess.run(["git", "-C", str(Path(dpselect.__file__).parent), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def per_call(fn, calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--label", choices=("before", "after"), default="after")
    args = ap.parse_args()
    gen = np.random.default_rng(0)
    sizes = (20, 100)
    us = {n: np.random.default_rng(n).random(n) * 10.0 for n in sizes}
    c = 0.5  # ε/(2Δ) of the exponential mechanism at ε = Δ = 1
    base: dict[int, list[float]] = {n: [] for n in sizes}
    ratios: dict[tuple, list[float]] = {}
    for _ in range(args.rounds):
        for n in sizes:
            u = us[n]
            base[n].append(per_call(lambda: int(np.argmax(u * c + gen.gumbel(size=n))), args.calls))
            for name, sel in SELECTORS.items():
                for with_acc in (False, True):
                    acc = Accountant(1e12) if with_acc else None
                    t = per_call(lambda: sel(u, gen, acc), args.calls)
                    ratios.setdefault((name, n, with_acc), []).append(t / base[n][-1])
    rows = ["| selector | n | accountant | median ratio | worst round |", "|---|---:|---|---:|---:|"]
    for (name, n, with_acc), r in ratios.items():
        rows.append(f"| {name} | {n} | {'yes' if with_acc else 'no'} | {statistics.median(r):.1f}x | {max(r):.1f}x |")
    bl = ", ".join(f"n = {n}: {statistics.median(base[n]) / 1000:.2f} µs" for n in sizes)
    at = source_commit()
    table = (f"**{args.label}** (dpselect {dpselect.__version__}{' at ' + at if at else ''}; {args.rounds} rounds of {args.calls} calls; "
             f"numpy Gumbel-max per call {bl}):\n\n" + "\n".join(rows))
    tables = {args.label: table}
    old = RESULTS.read_text() if RESULTS.exists() else ""
    other = "before" if args.label == "after" else "after"
    m = re.search(rf"<!-- small_call:{other} -->\n(.*?)\n<!-- /small_call:{other} -->", old, re.S)
    if m:
        tables[other] = m.group(1)
    body = "\n\n".join(f"<!-- small_call:{lab} -->\n{tables[lab]}\n<!-- /small_call:{lab} -->"
                       for lab in ("before", "after") if lab in tables)
    record("small_call", f"""## Small calls: one exact selection against a numpy Gumbel-max

`benchmarks/bench_small_call.py`: one exact `exponential`, `permute_and_flip` and `report_noisy_max` (Laplace)
call, validation and the accountant's charge included (an `Accountant(1e12)`, adaptive mode), as a ratio to
`int(np.argmax(u * c + gen.gumbel(size=n)))` timed in the same round; median over interleaved rounds and the
worst round. Target: at most 10x. CPU: {cpu_model()}; numpy {np.__version__}; {machine()}.

{body}
""")


if __name__ == "__main__":
    main()
