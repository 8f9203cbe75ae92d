"""The cost of charging an accountant at the selectors' boundary (issue 24 item 1; moved here from
tests/test_boundary.py by issue 33, where a wall-clock bound failed under load).

Three timings, each the median of ``--repeats`` (>= 9) interleaved rounds of ``--n`` calls (the record's
protocol, ``_common.interleaved``: the order rotated each round):

* ``select``: ``dpselect.exponential`` on 5 utilities (ε = 0.001) with no accountant;
* ``select + charge``: the same calls with ``accountant=Accountant(epsilon=100)`` (one charge each);
* ``charge_selection``: the boundary's charge alone (``charge_selection(acc, "exponential", 0.001)``).

The figure of merit is the added cost of a charge, ``select + charge`` − ``select``, per call: O(1), since
the same call charges the same frozen guarantee object and the accountant's cost cache answers (the
functional side of this is tests/test_boundary.py::test_many_charges_through_a_selector_reuse_one_guarantee).
The former test's bound was "added cost < 0.5 s + 0.5 × select" and "charge_selection < 0.5 s" for 10^4 calls.

    PYTHONPATH=$PWD/src python3 benchmarks/bench_boundary.py [--n 10000] [--repeats 9] [--no-record]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MIN_ROUNDS, fmt_ratio, host_header, interleaved, median, record  # noqa: E402

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
    ap.add_argument("--repeats", type=int, default=MIN_ROUNDS,
                    help=f"interleaved rounds (at least {MIN_ROUNDS}); the median is reported")
    ap.add_argument("--no-record", action="store_true", help="print only; leave benchmarks/RESULTS.md alone")
    args = ap.parse_args()
    if args.n < 1 or args.repeats < MIN_ROUNDS or args.n * EPS > 100.0:
        ap.error(f"--n must be >= 1 and at most 100000 (the budget of 100 at epsilon 0.001), --repeats >= {MIN_ROUNDS}")
    time_select(500, False)   # warm the imports and the registry's caches
    # each case times itself (the accountant's set-up and the history check stay outside the timed loop)
    own: dict[str, list[float]] = {"select": [], "charged": [], "charges": []}
    interleaved({
        "select": lambda: own["select"].append(time_select(args.n, False)),
        "charged": lambda: own["charged"].append(time_select(args.n, True)),
        "charges": lambda: own["charges"].append(time_charges(args.n)),
    }, rounds=args.repeats, warmup=0)
    t = own
    b, c, ch = (median(t[x]) for x in ("select", "charged", "charges"))
    added = median([y - x for x, y in zip(t["select"], t["charged"])])
    us = 1e6 / args.n
    md = (f"## The cost of a charge at the selectors' boundary (benchmarks/bench_boundary.py)\n\n"
          f"{host_header()}\n\n"
          f"{args.n} calls per timing, median of {args.repeats} interleaved rounds; ratio: per-round time over the "
          "same round's `select` (median, worst round); `added by the charge`: median of the per-round "
          "differences. Re-run: `python benchmarks/bench_boundary.py` (under a minute).\n\n"
          f"| timing | seconds per {args.n} calls | µs per call | ratio to select |\n|---|---|---|---|\n"
          f"| select (exponential, 5 utilities, no accountant) | {b:.3f} | {b * us:.1f} | 1 (baseline) |\n"
          f"| select + charge (Accountant(epsilon=100)) | {c:.3f} | {c * us:.1f} | {fmt_ratio(t, 'charged', 'select')} |\n"
          f"| added by the charge | {added:.3f} | {added * us:.1f} | |\n"
          f"| charge_selection alone | {ch:.3f} | {ch * us:.1f} | {fmt_ratio(t, 'charges', 'select')} |\n\n"
          f"Old unit-test bound (10^4 calls): added cost < 0.5 s + 0.5 × select = {0.5 + 0.5 * b:.3f} s; "
          f"charge_selection < 0.5 s.\n")
    if args.no_record:
        print(md)
    else:
        record("boundary", md)


if __name__ == "__main__":
    main()
