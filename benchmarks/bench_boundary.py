"""The cost of charging an accountant at the selectors' boundary (issue 24 item 1; moved here from
tests/test_boundary.py by issue 33, where a wall-clock bound failed under load).

Three timings, each the median of ``--repeats`` runs of ``--n`` calls on the same machine in the same run:

* ``select``: ``dpselect.exponential`` on 5 utilities (ε = 0.001) with no accountant;
* ``select + charge``: the same calls with ``accountant=Accountant(epsilon=100)`` (one charge each);
* ``charge_selection``: the boundary's charge alone (``charge_selection(acc, "exponential", 0.001)``).

The figure of merit is the added cost of a charge, ``select + charge`` − ``select``, per call: O(1), since
the same call charges the same frozen guarantee object and the accountant's cost cache answers (the
functional side of this is tests/test_boundary.py::test_many_charges_through_a_selector_reuse_one_guarantee).
The former test's bound was "added cost < 0.5 s + 0.5 × select" and "charge_selection < 0.5 s" for 10^4 calls.

    PYTHONPATH=$PWD/src python3 benchmarks/bench_boundary.py [--n 10000] [--repeats 5] [--no-record]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, record  # noqa: E402

import dpselect  # noqa: E402
from dpselect._boundary import charge_selection  # noqa: E402
from dpselect.accounting import Accountant  # noqa: E402

EPS = 0.001   # small enough that 10^4 charges (10.0) fit the budget of 100


def time_select(n: int, charged: bool) -> float:
    """Seconds for n exponential-mechanism selections, each charging a fresh accountant's budget or none."""
    u = np.arange(5.0)
    gen = np.random.default_rng(0)
    acc = Accountant(epsilon=100.0) if charged else None
    t = time.perf_counter()
    for _ in range(n):
        dpselect.exponential(u, epsilon=EPS, sensitivity=1.0, rng=gen, accountant=acc)
    elapsed = time.perf_counter() - t
    if acc is not None:
        assert len(acc.history) == n
    return elapsed


def time_charges(n: int) -> float:
    """Seconds for n charges of one exponential-mechanism call through the boundary, no selection."""
    acc = Accountant(epsilon=100.0)
    t = time.perf_counter()
    for _ in range(n):
        charge_selection(acc, "exponential", EPS, k=None, size=None)
    elapsed = time.perf_counter() - t
    assert len(acc.history) == n
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="calls per timing (default 10^4)")
    ap.add_argument("--repeats", type=int, default=5, help="runs per timing; the median is reported")
    ap.add_argument("--no-record", action="store_true", help="print only; leave benchmarks/RESULTS.md alone")
    args = ap.parse_args()
    if args.n < 1 or args.repeats < 1 or args.n * EPS > 100.0:
        ap.error("--n and --repeats must be >= 1, and --n at most 100000 (the budget of 100 at epsilon 0.001)")
    time_select(500, False)   # warm the imports and the registry's caches
    base, charged, charges = [], [], []
    for _ in range(args.repeats):   # interleaved, so that a load spike hits every column alike
        base.append(time_select(args.n, False))
        charged.append(time_select(args.n, True))
        charges.append(time_charges(args.n))
    b, c, ch = (statistics.median(x) for x in (base, charged, charges))
    us = 1e6 / args.n
    md = (f"## The cost of a charge at the selectors' boundary (benchmarks/bench_boundary.py)\n\n"
          f"Machine: {machine()}. {args.n} calls per timing, median of {args.repeats} interleaved runs.\n\n"
          f"| timing | seconds per {args.n} calls | µs per call |\n|---|---|---|\n"
          f"| select (exponential, 5 utilities, no accountant) | {b:.3f} | {b * us:.1f} |\n"
          f"| select + charge (Accountant(epsilon=100)) | {c:.3f} | {c * us:.1f} |\n"
          f"| added by the charge | {c - b:.3f} | {(c - b) * us:.1f} |\n"
          f"| charge_selection alone | {ch:.3f} | {ch * us:.1f} |\n\n"
          f"Old unit-test bound (10^4 calls): added cost < 0.5 s + 0.5 × select = {0.5 + 0.5 * b:.3f} s; "
          f"charge_selection < 0.5 s.\n")
    if args.no_record:
        print(md)
    else:
        record("boundary", md)


if __name__ == "__main__":
    main()
