"""Speed of the Pareto score, δ^PS and one full local PrivPareto selection.

Run: ``python benchmarks/bench_pareto.py`` (about a minute on 2 cores). Writes the ``pareto`` section
of benchmarks/RESULTS.md. Baselines are measured in the same run:

* ``numpy.sort`` of 10^6 floats (the target is pareto_score(n = 10^6, m = 2) < 30x that);
* naive O(n²) numpy dominance counting at n = 20,000: the straightforward blocked broadcast
  ``(U[None] > U[block, None]).all(-1).sum(1)``, and our tighter blocked version
  (``count_dominating_blocked``: per-column comparisons, no 3-D temporary);
* for the full local PrivPareto on the 36,692-node Enron graph (degree, egocentric density), the
  naive per-step cost is one δ^PS evaluation with blocked O(n²) counting, timed once and multiplied
  by the number of steps the dampening loop took.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, record  # noqa: E402

import dpselect  # noqa: E402
from dpselect._dominance import count_dominating_blocked  # noqa: E402
from dpselect.multiobjective import _pareto_sf, pareto_score  # noqa: E402
from dpselect.sensitivity import SensitivityFunction  # noqa: E402


def naive_blocked(U: np.ndarray, block: int = 256) -> np.ndarray:
    out = np.empty(U.shape[0], dtype=np.int64)
    for s in range(0, U.shape[0], block):
        out[s:s + block] = (U[None, :, :] > U[s:s + block, None, :]).all(axis=2).sum(axis=1)
    return -out


def enron_objectives():
    """Degree and egocentric density of Email-Enron with their edge-DP sensitivity functions."""
    try:
        from dpselect.datasets import dataset_path
        from dpselect.graphs import load_dataset_graph
        from dpselect.utilities import graph as ug

        g = load_dataset_graph(dataset_path("graphs", "Email-Enron.txt"))
        U = np.column_stack([ug.degree(g), ug.egocentric_density(g)])
        return "Email-Enron", U, [ug.degree_sensitivity(g), ug.egocentric_density_sensitivity(g)]
    except Exception as exc:  # data or graph module missing: synthetic degree-like graph statistics
        print(f"Enron not available ({exc}); using a synthetic power-law stand-in")
        rng = np.random.default_rng(0)
        n = 36_692
        d = np.minimum(np.floor(rng.pareto(1.2, n) + 1), 1383).astype(float)
        ed = np.where(d >= 2, rng.beta(0.5, 2.0, n), 0.0)

        def deg(t, candidates=None):
            return np.ones(n if candidates is None else len(candidates))

        def ego(t, candidates=None):
            dd = d if candidates is None else d[candidates]
            gap = dd - t - 2.0
            return np.where(gap > 0, np.minimum(1.0, 2.0 / np.maximum(gap, 1e-300)), 1.0)

        sfs = [SensitivityFunction(deg, 1.0, n_candidates=n, saturation_distance=0),
               SensitivityFunction(ego, 1.0, n_candidates=n, saturation_distance=int(d.max()))]
        return "synthetic (36,692 power-law degrees)", np.column_stack([d, ed]), sfs


def moocore_rows(rng) -> list[tuple[str, float, str]]:
    """pareto_score (dominator counts) against moocore's pareto_rank (non-dominated layers, C) and
    is_nondominated on the same points, same run (moocore is a benchmark-only dependency)."""
    try:
        import moocore
    except ImportError:
        return [("moocore comparison", float("nan"), "moocore not installed (pip install moocore)")]
    out = []
    for m in (2, 3):
        U = rng.random((10**6, m))
        rep = 3 if m == 2 else 2
        # interleaved (ours, pareto_rank, is_nondominated per round), best of the rounds: the machine's
        # load changes over seconds, so alternating keeps the comparison fair
        t_ps = t_rank = t_nd = float("inf")
        for _ in range(rep):
            t_ps = min(t_ps, best_of(lambda: pareto_score(U), 1))
            t_rank = min(t_rank, best_of(lambda: moocore.pareto_rank(U, maximise=True), 1))
            t_nd = min(t_nd, best_of(lambda: moocore.is_nondominated(U, maximise=True), 1))
        out.append((f"pareto_score, n = 10^6, m = {m} (random floats)", t_ps,
                    f"moocore `pareto_rank` {t_rank:.3f} s: **{t_ps / t_rank:.2f}x** (target <= 1x); "
                    f"`is_nondominated` {t_nd:.3f} s"))
    return out


def growth_rows(rng) -> list[tuple[str, float, str]]:
    """m = 4: the method pareto_score chooses (calibrated crossover), and the divide and conquer's growth."""
    from dpselect._dominance import count_dominating

    out = []
    U = rng.random((10**4, 4))
    t_auto = best_of(lambda: pareto_score(U))
    t_fast = best_of(lambda: count_dominating(U, method="fast"))
    t_blk = best_of(lambda: count_dominating(U, method="blocked"))
    out.append(("pareto_score, n = 10^4, m = 4 (auto: blocked below n ≈ 22,000)", t_auto,
                f"blocked {t_blk:.3f} s, divide and conquer {t_fast:.3f} s ({t_fast / t_blk:.1f}x)"))
    times = {}
    for n in (10**4, 10**5, 10**6):
        U = rng.random((n, 4))
        times[n] = best_of(lambda: count_dominating(U, method="fast"), 1 if n == 10**6 else 2)
    out.append(("dominator counts, m = 4, divide and conquer, n = 10^4 / 10^5 / 10^6", times[10**6],
                f"{times[10**4]:.2f} / {times[10**5]:.2f} / {times[10**6]:.1f} s: x{times[10**5] / times[10**4]:.0f} and "
                f"x{times[10**6] / times[10**5]:.0f} per 10x n (quadratic: x100; blocked at 10^6 ≈ "
                f"{t_blk * 1e4:.0f} s extrapolated)"))
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []

    x = rng.random(10**6)
    t_sort = best_of(lambda: np.sort(x))
    U2 = rng.random((10**6, 2))
    t_ps2 = best_of(lambda: pareto_score(U2))
    rows.append(("pareto_score, n = 10^6, m = 2 (random floats)", t_ps2, f"{t_ps2 / t_sort:.1f}x numpy.sort(10^6) "
                 f"({t_sort * 1e3:.0f} ms); target < 30x"))
    Ui = rng.integers(0, 1000, (10**6, 2)).astype(float)
    t_psi = best_of(lambda: pareto_score(Ui))
    rows.append(("pareto_score, n = 10^6, m = 2 (integers < 1000: heavy ties)", t_psi,
                 f"{t_psi / t_sort:.1f}x numpy.sort(10^6)"))
    U3 = rng.random((10**5, 3))
    t_ps3 = best_of(lambda: pareto_score(U3))
    rows.append(("pareto_score, n = 10^5, m = 3", t_ps3, f"{t_ps3 / t_sort:.1f}x numpy.sort(10^6)"))

    rows += moocore_rows(rng)
    rows += growth_rows(rng)

    n = 20_000
    for m in (2, 3):
        U = rng.random((n, m))
        t_fast = best_of(lambda: pareto_score(U))
        t_naive = best_of(lambda: naive_blocked(U), repeat=1)
        t_blk = best_of(lambda: count_dominating_blocked(U, U), repeat=1)
        assert np.array_equal(pareto_score(U), naive_blocked(U))
        rows.append((f"pareto_score, n = 20,000, m = {m}", t_fast,
                     f"naive blocked broadcast {t_naive:.2f} s = **{t_naive / t_fast:.0f}x** slower; "
                     f"tight blocked {t_blk:.2f} s = {t_blk / t_fast:.0f}x (target >= 100x)"))

    # one full local PrivPareto (local dampening with δ^PS, k = 3) on Enron
    name, U, sfs = enron_objectives()
    t0 = time.perf_counter()
    picks = dpselect.priv_pareto(U, epsilon=1.0, sensitivities=sfs, k=3, mechanism="local_dampening", rng=0)
    t_ld = time.perf_counter() - t0
    # instrumented single pick on all candidates: number of δ^PS evaluations and their cost
    inner = _pareto_sf(U, sfs, None)
    calls = []

    def counted(t, candidates=None):
        calls.append(0 if candidates is None else len(candidates))
        return inner(t, candidates)

    sf = SensitivityFunction(counted, inner.global_sensitivity, n_candidates=U.shape[0],
                             saturation_distance=inner.saturation_distance)
    ps = pareto_score(U).astype(float)
    t0 = time.perf_counter()
    dpselect.dampen(ps, sf)
    t_damp = time.perf_counter() - t0
    steps = len(calls)
    # naive per-step cost: both δ^PS terms by blocked O(n²) counting, all candidates, t = 0
    cum = np.column_stack([s(0) for s in sfs])
    H, L = U + cum, U - cum
    t0 = time.perf_counter()
    naive = count_dominating_blocked(H, L, strict=False) - 1 - count_dominating_blocked(L, H, strict=True)
    t_naive_step = time.perf_counter() - t0
    assert np.array_equal(naive, inner(0)), "fast δ^PS disagrees with blocked counting"
    rows.append((f"local PrivPareto (LD + δ^PS, k = 3), {name}, n = {U.shape[0]:,}", t_ld,
                 f"picks {picks.tolist()}; target < 30 s"))
    t0 = time.perf_counter()
    picks_sld = dpselect.priv_pareto(U, epsilon=1.0, sensitivities=sfs, k=3, mechanism="shifted_local_dampening",
                                     rng=0)
    t_sld = time.perf_counter() - t0
    rows.append((f"local PrivPareto (shifted LD + δ^PS, k = 3), {name}", t_sld,
                 f"picks {picks_sld.tolist()}; {t_sld / t_ld:.2f}x the LD run (target <= 3x; closed-form shift of "
                 "δ^PS, see the shift section)"))
    rows.append(("  dampening of one pick (all candidates)", t_damp,
                 f"{steps} δ^PS steps, queried candidates per step: max {max(calls):,}, "
                 f"mean {np.mean(calls):,.0f}"))
    rows.append(("  naive O(n²) δ^PS per step (blocked counting, timed at t = 0)", t_naive_step,
                 f"x {steps} steps x 3 picks = {3 * steps * t_naive_step:.0f} s extrapolated "
                 f"({3 * steps * t_naive_step / t_ld:.0f}x our full run)"))

    lines = [
        "## Pareto score and PrivPareto (`dpselect.multiobjective`, benchmarks/bench_pareto.py)",
        "",
        f"Machine: {machine()}; **shared with other developers' jobs (2 cores, contended), timings noisy**. "
        "Best of 3 unless a baseline is too slow. Pure numpy: the Pareto score for m = 2 reduced to a "
        "permutation and counted by a bottom-up merge whose packed sort keys carry the counts (issue 16: "
        "packed-key sorts instead of argsort, 32-value blocks by shifted comparisons, int32 keys while they "
        "fit); other m = 2 counts by wavelet-matrix range counts; CDQ divide and conquer for m >= 3 with "
        "queries walked in key order; blocked broadcasting below the calibrated crossover.",
        "",
        "| case | time (s) | comparison (same run) |",
        "|---|---|---|",
    ]
    lines += [f"| {a} | {b:.3f} | {c} |" for a, b, c in rows]
    record("pareto", "\n".join(lines))


if __name__ == "__main__":
    main()
