"""What-if for issue 26 target 1 (not a claim): the recursive method under replace-one with the paper's
per-level budget ε/L instead of the proven ε/(2L − 1).

Under replace-one neighbours dpselect proves ε/(2L − 1) per release (a replaced record leaves one subproblem
and joins another at every level below the root); Kaplan et al.'s ε/L is proven here for add/remove only.
This script measures what ε/L would give (anchored targets, bounds (0, 4096), m = 9, 20 seeds per cell) so
that the value of a proof is known. Run: ``PYTHONPATH=src python3 benchmarks/quantiles_recursive_budget_whatif.py``
(a few seconds; prints excess rank error ×1e-3 as in results/quantiles).
"""
from __future__ import annotations

import numpy as np

from dpselect.experiments import quantiles as Q
from dpselect.quantiles._recursive import depth, recursive_quantiles, recursive_slots


def main(m: int = 9, runs: int = 20) -> None:
    qs = Q.quantile_levels(m)
    L, k = depth(m), recursive_slots(m)
    print(f"m = {m}: L = {L} levels, 2L - 1 = {k} releases; excess rank error x1e-3, mean of {runs} runs")
    print("| data set | ε | ε/(2L − 1) (proven) | ε/L (not proven under replace-one) |")
    print("|---|---|---|---|")
    for name in Q.DATASETS:
        h = Q._hist(name)
        v, c = Q.grouped(h)
        floor = float(np.mean(Q.rank_floor(h, qs)))
        for eps in (0.01, 0.1):
            cells = []
            for e0 in (eps / k, eps / L):
                errs = [np.mean(Q.rank_errors(h, qs, recursive_quantiles(
                    v.astype(float), c, qs, epsilon=eps, lo=0.0, hi=float(Q.BOUNDS[1]),
                    gen=np.random.default_rng([7, r]), eps0=e0))) - floor for r in range(runs)]
                cells.append(f"{np.mean(errs) * 1e3:.4g}")
            print(f"| {name} | {eps:g} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
