"""Issue 36: are the INCOME "losses" of the quantile default real? More runs of the two cells, on fresh seeds.

The committed reading (results/quantiles*/quantiles.md, 20 runs per cell) counts INCOME at m = 9, ε = 0.01 as a
loss under both neighbour models: the default's mean excess 60-76 records of 20.8M against the independent
interval exponential mechanism's 38 (ratios 0.63x and 0.50x, loss below 1/1.2). In about 93% of the runs both
release values with no excess at all; the mean is the rate of rare misses of a few thousand records, so 20
runs cannot rank two methods there. This script runs the default (``dpselect.quantiles`` with no method, int64
records, bounds (0, 4096), as the reading does) and the baseline ``method="independent"`` on the same
histogram, ``--runs`` runs each on seeds disjoint from the committed ones (base 777001; nothing here was tuned:
the cells and the run count were set before this script ran), and prints the means with their 95% intervals,
the share of runs at zero excess, and the verdict of :func:`dpselect_reproductions.quantiles.default_verdict`.

Run: ``PYTHONPATH=$PWD/src:$PWD/reproductions/src python3 benchmarks/quantiles_floor_check.py`` (about 1 min
at ``--runs 4000``); writes its section ``quantiles_floor_check`` of RESULTS.md (``--no-record``: print only).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host_header, record

CELLS = (("income", 9, 0.01, "replace_one"), ("income", 9, 0.01, "add_remove"))
SEED = 777001


def excess_runs(name: str, m: int, eps: float, neighbours: str, method: str, runs: int) -> np.ndarray:
    """Excess rank error (a fraction of n) of ``runs`` seeded runs of ``method`` on one cell."""
    from dpselect_reproductions import quantiles as Q

    hist = Q._hist(name)
    qs = Q.quantile_levels(m)
    floor = float(np.mean(Q.rank_floor(hist, qs)))
    out = np.empty(runs)
    for r in range(runs):
        rng = np.random.default_rng([SEED, r, Q._SEED_ORDER.index(method)])
        vals = Q._dpselect_quantiles(hist, qs, eps, method, rng, neighbours)
        out[r] = float(np.mean(Q.rank_errors(hist, qs, vals))) - floor
    return out


def main(argv: list[str] | None = None) -> None:
    from dpselect_reproductions import quantiles as Q

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    for name, m, eps, nb in CELLS:
        n = int(Q._hist(name).sum())
        d = excess_runs(name, m, eps, nb, Q.DEFAULT, args.runs)
        b = excess_runs(name, m, eps, nb, "independent", args.runs)
        verdict, ratio = Q.default_verdict(float(d.mean()), float(b.mean()), n)

        def rec(v: np.ndarray) -> str:
            return (f"{v.mean() * n:.1f} ± {1.96 * v.std(ddof=1) / np.sqrt(v.size) * n:.1f} records "
                    f"({np.mean(v == 0):.0%} of runs at 0)")
        rows.append(f"| {name} | {m} | {eps:g} | {nb} | {rec(d)} | {rec(b)} | {ratio:.2f}x ({verdict}) |")
    lines = ["## The quantile default's INCOME cells with more runs (issue 36; benchmarks/quantiles_floor_check.py)",
             "", host_header(protocol=False) + " No timings.", "",
             f"{args.runs} runs per method and cell on seeds disjoint from the committed results (base {SEED}); mean "
             "excess rank error in records (± the 95% interval of the mean); the verdict is the committed reading's "
             f"rule (`default_verdict`: loss below 1/1.2). Wall time {time.perf_counter() - t0:.0f} s.", "",
             "| data | m | ε | neighbours | default | independent (best baseline there) | baseline / default |",
             "|---|---|---|---|---|---|---|", *rows, "",
             "The committed reading's 20 runs per cell counted both as losses (0.63x and 0.50x); most runs of either "
             "method have no excess, and the mean is the rate of rare misses, which 20 runs cannot resolve."]
    text = "\n".join(lines)
    if args.no_record:
        print(text)
    else:
        record("quantiles_floor_check", text)


if __name__ == "__main__":
    main()
