"""The fixed cost of one small exact selection: ``exponential``, ``permute_and_flip`` and ``report_noisy_max``
(Laplace noise) over n = 20 and n = 100 candidates, with and without an accountant, against a numpy Gumbel-max
``int(np.argmax(u * c + gen.gumbel(size=n)))`` timed in the same run.

One call = validation, the accountant's charge (when passed) and the exact draw. The record's protocol
(``_common.interleaved``): each round times ``--calls`` calls of every configuration in turn, the order rotated
every round; a ratio is the round's time per call over
the same round's numpy time at the same n. Reported: the median ratio over ``--rounds`` (>= 9) rounds and the
worst round, the numpy time per call (median), the CPU model and numpy's version.

Run: ``python benchmarks/bench_small_call.py [--rounds 9] [--calls 2000] [--label after]`` (writes its section of
benchmarks/RESULTS.md; the table of the other label, ``before`` or ``after``, already there is kept, so a run at
an earlier commit with ``--label before`` and one now give both).
"""
from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import numpy as np

import dpselect
from dpselect.accounting import Accountant

from _common import MIN_ROUNDS, RESULTS, host_header, interleaved, median, ratios, record

SELECTORS = {
    "exponential": lambda u, g, acc: dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, rng=g, accountant=acc),
    "permute_and_flip": lambda u, g, acc: dpselect.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=g,
                                                                    accountant=acc),
    "report_noisy_max": lambda u, g, acc: dpselect.report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=g,
                                                                    noise="laplace", accountant=acc),
}


def source_commit() -> str:
    """The commit of the dpselect source being timed ("" outside a git checkout)."""
    r = subprocess.run(["git", "-C", str(Path(dpselect.__file__).parent), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def repeat(fn, calls: int):
    def run() -> None:
        for _ in range(calls):
            fn()
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--label", choices=("before", "after"), default="after")
    args = ap.parse_args()
    if args.rounds < MIN_ROUNDS:
        ap.error(f"--rounds: the record's protocol needs at least {MIN_ROUNDS}")
    gen = np.random.default_rng(0)
    sizes = (20, 100)
    us = {n: np.random.default_rng(n).random(n) * 10.0 for n in sizes}
    c = 0.5  # ε/(2Δ) of the exponential mechanism at ε = Δ = 1
    cases = {}
    for n in sizes:
        u = us[n]
        cases[("numpy", n, False)] = repeat(lambda u=u, n=n: int(np.argmax(u * c + gen.gumbel(size=n))), args.calls)
        for name, sel in SELECTORS.items():
            for with_acc in (False, True):
                acc = Accountant(1e12) if with_acc else None
                cases[(name, n, with_acc)] = repeat(lambda u=u, sel=sel, acc=acc: sel(u, gen, acc), args.calls)
    t = interleaved(cases, rounds=args.rounds)
    rows = ["| selector | n | accountant | median ratio | worst round |", "|---|---:|---|---:|---:|"]
    for key in cases:
        name, n, with_acc = key
        if name == "numpy":
            continue
        med, worst = ratios(t, key, ("numpy", n, False))
        rows.append(f"| {name} | {n} | {'yes' if with_acc else 'no'} | {med:.1f}x | {worst:.1f}x |")
    base = {n: [x / args.calls for x in t[("numpy", n, False)]] for n in sizes}
    bl = ", ".join(f"n = {n}: {median(base[n]) * 1e6:.2f} µs" for n in sizes)
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
worst round. Target: at most 10x. Re-run: `python benchmarks/bench_small_call.py` (under a minute).

{host_header()}

{body}
""")


if __name__ == "__main__":
    main()
