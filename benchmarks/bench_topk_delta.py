"""Top-k under (ε, δ) (issue 24 item 3): recall of the true top-k at (ε = 1, δ = 1e-6), k ∈ {10, 100}.

Data: the degrees of Email-Enron (36,692 public node ids; one edge changes two degrees by 1, both up or both
down: Δ = 1, monotonic) and a Zipf item-count vector (10^4 items, 10^5 records drawn from a Zipf law of
exponent 1.1, seed 0; one record changes one count by 1: Δ = 1, monotonic). Columns, same run, same seeds:

* ``EM δ=0``: ``dpselect.exponential(k=k)``: k peeled picks of ε/k each (pure ε-DP, today's default);
* ``EM δ>0``: ``dpselect.exponential(k=k, delta=1e-6)``: the same peeling with the per-pick ε0 of
  ``per_pick_epsilon("bounded_range", k, 1, 1e-6)`` (the certified adaptive bounded-range composition);
* ``PF δ=0`` / ``PF δ>0``: ``dpselect.permute_and_flip`` likewise (pure ε0-DP picks, Kairouz et al.'s optimal
  composition for δ > 0);
* ``OpenDP zCDP``: OpenDP 0.16.0's ``make_noisy_top_k`` under ``zero_concentrated_divergence`` (Gumbel noise,
  one-shot top-k), with the smallest noise scale whose ``make_zCDP_to_approxDP`` conversion is (1, 1e-6)-DP
  (bisection on the scale); skipped with a note when OpenDP is not installed.

Recall = |picked ∩ top-k| / k, where a pick counts when its value is at least the k-th largest value (ties at
the boundary are not penalised). Mean ± standard error over the seeds.

Run (OpenDP in a benchmark-only environment, never a dpselect dependency)::

    python3 -m venv .venv-bench && .venv-bench/bin/pip install opendp==0.16.0 numpy scipy
    PYTHONPATH=$PWD/src .venv-bench/bin/python benchmarks/bench_topk_delta.py [--seeds 20] [--no-record]
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import dpselect
from dpselect.accounting import per_pick_epsilon
from dpselect_reproductions import load_graph

try:
    from _common import host_header, record
except ImportError:  # run from elsewhere
    from benchmarks._common import host_header, record  # type: ignore[no-redef]

EPS, DELTA, KS = 1.0, 1e-6, (10, 100)


def enron_degrees() -> np.ndarray:
    g = load_graph("enron")
    return np.asarray(g.degrees, dtype=np.float64)


def zipf_counts(n_items: int = 10_000, n_records: int = 100_000, s: float = 1.1) -> np.ndarray:
    p = np.arange(1, n_items + 1, dtype=np.float64) ** -s
    return np.random.default_rng(0).multinomial(n_records, p / p.sum()).astype(np.float64)


def recall(values: np.ndarray, picks: np.ndarray, k: int) -> float:
    kth = np.partition(values, values.size - k)[values.size - k]
    return float(np.count_nonzero(values[np.asarray(picks, dtype=np.int64)] >= kth)) / k


def _opendp():
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    return dp


def opendp_topk(dp, n: int, k: int):
    """OpenDP's zCDP top-k with the smallest scale that is (EPS, DELTA)-DP after the zCDP → (ε, δ) conversion."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float, monotonic=True)

    def make(scale):
        return dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=k, scale=scale)

    def eps_of(scale):
        return dp.c.make_zCDP_to_approxDP(make(scale)).map(1.0).epsilon(DELTA)

    lo, hi = 1e-3, 1e6          # eps_of decreases in the scale
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) <= EPS:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-9:
            break
    return make(hi), hi


def run(seeds: int):
    dp = _opendp()
    data = {"Enron degrees": enron_degrees(), "Zipf counts": zipf_counts()}
    rows, meta = [], {}
    for k in KS:
        e0_br = per_pick_epsilon("bounded_range", k=k, epsilon=EPS, delta=DELTA)
        e0_pure = per_pick_epsilon("pure", k=k, epsilon=EPS, delta=DELTA)
        od = opendp_topk(dp, 0, k) if dp is not None else None
        meta[k] = (e0_br, e0_pure, None if od is None else 1.0 / od[1])
        for name, v in data.items():
            cols: dict[str, list[float]] = {}
            times: dict[str, float] = {}

            def add(col, fn):
                t = time.perf_counter()
                cols[col] = [recall(v, fn(seed), k) for seed in range(seeds)]
                times[col] = (time.perf_counter() - t) / seeds

            common = dict(epsilon=EPS, sensitivity=1.0, k=k, monotonic=True)
            add("EM δ=0", lambda s: dpselect.exponential(v, rng=s, **common))
            add("EM δ>0", lambda s: dpselect.exponential(v, rng=s, delta=DELTA, **common))
            add("PF δ=0", lambda s: dpselect.permute_and_flip(v, rng=s, **common))
            add("PF δ>0", lambda s: dpselect.permute_and_flip(v, rng=s, delta=DELTA, **common))
            if od is not None:
                vl = v.tolist()
                add("OpenDP zCDP", lambda s: (dp.enable_features("contrib"), od[0](vl))[1])
            rows.append((name, k, cols, times))
    return rows, meta, dp is not None


def _fmt(xs: list[float]) -> str:
    m = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0
    return f"{m:.3f} ± {se:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, meta, have_od = run(args.seeds)
    cols = ["EM δ=0", "EM δ>0", "PF δ=0", "PF δ>0"] + (["OpenDP zCDP"] if have_od else [])
    lines = [
        "## Top-k under (ε, δ): recall at (ε = 1, δ = 1e-6) (issue 24 item 3, benchmarks/bench_topk_delta.py)",
        "",
        host_header(protocol=False),
        "",
        "Loaded machine (2 cores shared); a recall benchmark: the seconds per call at the end are context, not a "
        f"timed ratio. Mean recall of the true top-k ± s.e. over {args.seeds} seeds "
        "(seeds 0..N-1, the same for every column); Δ = 1, monotonic (edge / record neighbours). "
        "δ = 0: ε/k per pick (pure ε-DP peeling); δ > 0: `delta=1e-6`, per-pick ε0 = `per_pick_epsilon`. "
        + ("OpenDP 0.16.0 `make_noisy_top_k` (zCDP, Gumbel), smallest scale that is (1, 1e-6)-DP after "
           "`make_zCDP_to_approxDP`." if have_od else "OpenDP not installed: its column is skipped."),
        "",
        "| k | per-pick ε: ε/k | EM δ>0 (bounded range) | PF δ>0 (pure) | OpenDP zCDP (1/scale) |",
        "|---|---|---|---|---|",
    ]
    for k, (br, pure, od) in meta.items():
        lines.append(f"| {k} | {EPS / k:.4f} | {br:.4f} (×{br * k / EPS:.2f}) | {pure:.4f} (×{pure * k / EPS:.2f}) | "
                     + ("–" if od is None else f"{od:.4f} (×{od * k / EPS:.2f})") + " |")
    lines += ["", "| data | k | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, k, c, _ in rows:
        lines.append(f"| {name} | {k} | " + " | ".join(_fmt(c[x]) for x in cols) + " |")
    reading = []
    for name, k, c, _ in rows:
        if k == max(KS):
            m = {x: statistics.fmean(c[x]) for x in cols}
            part = (f"{name}: EM {m['EM δ=0']:.3f} → {m['EM δ>0']:.3f}, PF {m['PF δ=0']:.3f} → {m['PF δ>0']:.3f}")
            if have_od:
                part += f" (OpenDP zCDP {m['OpenDP zCDP']:.3f})"
            reading.append(part)
    lines += ["", f"Reading: at k = {max(KS)}, δ = 1e-6 raises recall ({'; '.join(reading)}). The exponential "
              "mechanism gains most: its picks are ε0-bounded-range, and the certified adaptive bounded-range "
              "composition affords a larger ε0 than OpenDP's zCDP route (ε0²/8 per pick, CKS conversion); "
              "permute-and-flip's picks are only pure ε0-DP (Kairouz et al.'s optimum). At k = 10 the top "
              "values are far apart and every column is near 1."]
    lines += ["", "Seconds per top-k call (mean over seeds): " + "; ".join(
        f"{name} k={k}: " + ", ".join(f"{x} {t[x]:.3f}" for x in cols) for name, k, _, t in rows) + ".",
        f"Total run: {time.perf_counter() - t0:.0f} s."]
    text = "\n".join(lines)
    print(text)
    if not args.no_record:
        record("topk_delta", text)


if __name__ == "__main__":
    main()
