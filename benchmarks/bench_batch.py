"""Exact ``size=N`` batches (issue 38 item 2): ``exponential`` (Gumbel noise), ``permute_and_flip`` (exponential
noise) and ``report_noisy_max`` (Laplace noise), k = 1 and k = 3, against numpy's Gumbel-matrix argmax
``(u * c + gen.gumbel(size=(N, n))).argmax(1)`` and ``gen.choice(n, size=N, p=softmax(u * c))`` (probabilities
computed once, outside the timing), c = ε/(2Δ) = 0.5, all timed in the same interleaved rounds.

n = 100 and n = 20 with N = 100,000 draws; n = 1,000 with N = 10,000 (the same 10^7 noise values as n = 100).
At n = 100 the exact path on every row (what ``size=N`` ran before the vectorisation: float enclosures at both
ends of every cell, a sort per row) is timed too, for ``exponential`` at k = 1.

Run: ``python benchmarks/bench_batch.py [--rounds 9]`` (writes the section ``bench:batch`` of RESULTS.md).
"""
from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import numpy as np

import dpselect
from dpselect.sampling import _batch

from _common import fmt_time, host_header, interleaved, median, ratios, record

SELECTORS = {
    "exponential (Gumbel)": dpselect.exponential,
    "permute_and_flip (exponential)": dpselect.permute_and_flip,
    "report_noisy_max (Laplace)": lambda u, **kw: dpselect.report_noisy_max(u, noise="laplace", **kw),
}
C = 0.5   # ε/(2Δ) at ε = Δ = 1


def source_commit() -> str:
    r = subprocess.run(["git", "-C", str(Path(dpselect.__file__).parent), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def exact_path_only(fn):
    """``fn`` with every row sent to the exact path (the batch before the vectorisation)."""
    def run():
        fast = _batch._fast_round

        def every_row(a, extra, want, size, rng, noise, taken, out, col):
            n = a.shape[0]
            return np.arange(size), _batch._bits64(rng, size * n).reshape(size, n)
        _batch._fast_round = every_row
        try:
            fn()
        finally:
            _batch._fast_round = fast
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    gen = np.random.default_rng(0)
    rows = ["| n | N | selector (noise) | k | median time | vs Gumbel-matrix argmax: median (worst) "
            "| vs `rng.choice`: median (worst) |", "|---:|---:|---|---:|---:|---:|---:|"]
    base_lines = []
    for n, N in ((100, 100_000), (20, 100_000), (1000, 10_000)):
        u = np.random.default_rng(n).random(n) * 10.0
        p = np.exp(C * (u - u.max()))
        p /= p.sum()
        cases = {
            "gumbel": lambda u=u, n=n, N=N: (u * C + gen.gumbel(size=(N, n))).argmax(1),
            "choice": lambda n=n, N=N, p=p: gen.choice(n, size=N, p=p),
        }
        for name, fn in SELECTORS.items():
            for k in (1, 3):
                cases[f"{name}|{k}"] = (lambda fn=fn, u=u, N=N, k=k:
                                        fn(u, epsilon=1.0, sensitivity=1.0, k=None if k == 1 else k, size=N, rng=gen))
        if n == 100:
            cases["before|1"] = exact_path_only(cases["exponential (Gumbel)|1"])
        times = interleaved(cases, rounds=args.rounds)
        base_lines.append(f"n = {n}, N = {N:,}: Gumbel-matrix argmax {fmt_time(median(times['gumbel']))}, "
                          f"`rng.choice` {fmt_time(median(times['choice']))}")
        for key in cases:
            if key in ("gumbel", "choice"):
                continue
            name, k = key.split("|")
            if name == "before":
                name = "exponential (Gumbel), exact path on every row (before)"
            g_med, g_worst = ratios(times, key, "gumbel")
            c_med, c_worst = ratios(times, key, "choice")
            rows.append(f"| {n} | {N:,} | {name} | {k} | {fmt_time(median(times[key]))} | {g_med:.2f}x ({g_worst:.2f}x) "
                        f"| {c_med:.1f}x ({c_worst:.1f}x) |")
    at = source_commit()
    l1, l5, _ = os.getloadavg()
    record("batch", f"""## Exact batches: `size=N` draws against numpy's Gumbel-matrix argmax

`benchmarks/bench_batch.py` (dpselect {dpselect.__version__}{' at ' + at if at else ''}; {args.rounds} rounds): an exact
`size=N` batch of each selector (ε = Δ = 1, k = 3: three picks, ε/3 each) as a ratio to numpy's Gumbel-matrix
argmax and to `rng.choice` with the softmax probabilities, timed in the same rounds. k = 3 is compared with the
same one-pick baselines. Target (issue 38 item 2): at most 3x the Gumbel-matrix argmax at n = 100.

{host_header()} Load average at the end of the run: {l1:.1f} (1 min), {l5:.1f} (5 min).

Baselines (median): {'; '.join(base_lines)}.

{chr(10).join(rows)}
""")


if __name__ == "__main__":
    main()
