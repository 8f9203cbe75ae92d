"""Exact (floating-point-safe) selection against the float baseline numpy ``argmax(u + gumbel)``.

Issue 10 target: the exact default over 10^7 candidates within 2.5x of numpy's ``argmax(u + gumbel)``
measured in the same run, for k = 1 and k = 10. Also: the float path (``exact=False``), the other noises,
batches of draws (``size=``), and how often the exact decimal refinement was needed.

    python3 benchmarks/bench_sampling.py [--n 10000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, record  # noqa: E402

import dpselect  # noqa: E402
from dpselect import mechanisms, sampling  # noqa: E402


def topk_rows(rep: int) -> list[str]:
    out = []
    for n in (100_000, 1_000_000, 10_000_000):
        g = np.random.default_rng(5)
        for kind, u in (("nearly tied", 5.0 + g.random(n) * 1e-9), ("normal × 30", g.normal(size=n) * 30.0)):
            for k in (10, 100):
                rng = np.random.default_rng(6)
                t = {}
                for name, noise in (("EM", "gumbel"), ("PF", "exponential"), ("LAP", "laplace")):
                    t[name] = best_of(lambda noise=noise: dpselect.report_noisy_max(
                        u, epsilon=1.0, sensitivity=1.0, noise=noise, k=k, rng=rng), rep)
                passes = "–"
                if n == 100_000:   # the previous implementation: k exact passes
                    old = mechanisms._PEEL_LAZY_MIN
                    mechanisms._PEEL_LAZY_MIN = 1 << 62
                    try:
                        tp = [best_of(lambda noise=noise: dpselect.report_noisy_max(
                            u, epsilon=1.0, sensitivity=1.0, noise=noise, k=k, rng=rng), 1)
                            for noise in ("exponential", "laplace")]
                    finally:
                        mechanisms._PEEL_LAZY_MIN = old
                    passes = f"{tp[0] * 1e3:.1f} / {tp[1] * 1e3:.1f}"
                out.append(f"| {n:,} | {kind} | {k} | {t['EM'] * 1e3:.1f} | {t['PF'] * 1e3:.1f} | "
                           f"**{t['PF'] / t['EM']:.2f}x** | {t['LAP'] * 1e3:.1f} | **{t['LAP'] / t['EM']:.2f}x** | "
                           f"{passes} |")
                print(out[-1], flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n, rep = args.n, args.repeat
    gen = np.random.default_rng(0)
    u = gen.normal(size=n) * 30.0  # utilities with a realistic spread (hundreds of noise units)
    eps, sens = 1.0, 1.0
    rng = np.random.default_rng(1)

    refinements = []
    orig = sampling._refine

    def counting(*a, **k):
        refinements.append(1)
        return orig(*a, **k)

    sampling._refine = counting
    rows = []
    for k in (1, 10):
        c = eps / (2 * sens * k)

        def baseline():
            x = u * c + rng.gumbel(size=n)
            if k == 1:
                return int(np.argmax(x))
            top = np.argpartition(-x, k)[:k]
            return top[np.argsort(-x[top])]

        t_base = best_of(baseline, rep)
        cases = [
            ("exponential (exact, default)", lambda: dpselect.exponential(u, epsilon=eps, sensitivity=sens, k=k, rng=rng)),
            ("exponential (exact=False, float inverse CDF)",
             lambda: dpselect.exponential(u, epsilon=eps, sensitivity=sens, k=k, rng=rng, exact=False)),
            ("permute_and_flip (exact)", lambda: dpselect.permute_and_flip(u, epsilon=eps, sensitivity=sens, k=k, rng=rng)),
            ("report_noisy_max laplace (exact)", lambda: dpselect.report_noisy_max(u, epsilon=eps, sensitivity=sens, k=k, rng=rng)),
        ]
        rows.append((k, "numpy argmax(u + gumbel) (baseline)", t_base, 1.0))
        for name, fn in cases:
            t = best_of(fn, rep)
            rows.append((k, name, t, t / t_base))
    # batches of draws on a small candidate set: the per-draw Python overhead is what size= removes
    small = np.array([0.0, 1.0, 2.0, 2.0, -3.0, 5.0])
    N = 100_000
    t_loop = best_of(lambda: [dpselect.exponential(small, epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(10_000)], 1) * N / 10_000
    t_batch = best_of(lambda: dpselect.exponential(small, epsilon=1.0, sensitivity=1.0, size=N, rng=rng), rep)
    t_float_loop = best_of(lambda: [dpselect.exponential(small, epsilon=1.0, sensitivity=1.0, rng=rng, exact=False)
                                    for _ in range(10_000)], 1) * N / 10_000
    topk = topk_rows(rep)
    sampling._refine = orig

    lines = [
        "## Exact sampling (`dpselect.sampling`, benchmarks/bench_sampling.py)",
        "",
        f"Machine: {machine()}; shared with other developers' jobs during the run (timings noisy, ratios "
        f"measured in the same run). n = {n:,} utilities (normal × 30), ε = 1, Δ = 1, best of {rep}.",
        "Target (issue 10): the exact default within 2.5x of numpy's `argmax(u + gumbel)`.",
        "",
        "| k | sampler | time (s) | vs baseline |",
        "|---|---|---|---|",
    ]
    for k, name, t, r in rows:
        lines.append(f"| {k} | {name} | {t:.3f} | {r:.2f}x |")
    lines += [
        "",
        f"Exact decimal refinement (stage 3) was needed in {len(refinements)} of "
        f"{sum(1 for r in rows if 'exact' in r[1] and 'False' not in r[1]) * rep} large exact draws above "
        "(float enclosures settle the rest).",
        "",
        f"{N:,} draws on 6 candidates: one call per draw {t_loop:.2f} s (exact) / {t_float_loop:.2f} s "
        f"(exact=False); one call with `size={N}` {t_batch:.3f} s ({t_loop / t_batch:.0f}x faster than the loop).",
        "",
        "### Top-k with fresh noise per pick (issue 16)",
        "",
        "Permute-and-flip and Laplace report-noisy-max top-k are k picks, each with fresh noise on the remaining",
        "candidates (ε/k each). `sampling.noisy_top_k_peeled` samples exactly that law without k passes: a head",
        "of at most ~32 candidates gets fresh uniforms, tail candidates are revealed with probability 2^-j (their",
        "first j uniform bits all ones; positions by exact Geometric gaps), unrevealed ones are bounded by a wall,",
        "and a rare exact fallback completes the uniforms conditionally. Against the exponential mechanism's top-k",
        f"(one pass) in the same run, best of {rep}; utilities nearly tied (5 + U(0, 1e-9), the issue's case) or",
        "normal × 30; ε = 1, Δ = 1. Target: within 2x. `k passes` is the previous implementation (the definition).",
        "",
        "| n | utilities | k | exponential (ms) | permute-and-flip (ms) | ratio | Laplace RNM (ms) | ratio | "
        "k passes, PF / Laplace (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ] + topk
    record("sampling", "\n".join(lines))


if __name__ == "__main__":
    main()
