"""A private mean with private clipping bounds: Adult ``capital-gain`` (dpselect.quantiles.clipping_bounds).

A sum or mean needs bounds on the values (its sensitivity); reading them off the data (min and max) leaks
the extreme records. ``clipping_bounds`` finds bounds privately with no public range (the unbounded
quantile method); then the clipped sum gets exact discrete-Laplace noise of scale (hi − lo)/ε. The model
is dpselect's: replace-one-record neighbours, n public (so the count is exact and the mean is sum / n).

Run: ``python examples/adult_capital_gain_mean.py`` (about half a minute).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import dpselect
from dpselect.quantiles import clipping_bounds
from dpselect.experiments import data_path  # the project's copy of the data (DPSELECT_DATA)
from dpselect.quantiles._unbounded import discrete_laplace  # exact two-sided geometric noise


def load_capital_gain() -> np.ndarray:
    """The raw ``capital-gain`` column of adult.data + adult.test (rows with ``?`` dropped: 45,222)."""
    out = []
    for name in ("adult.data", "adult.test"):
        with open(data_path("tabular", name)) as f:
            header = next(f).split(",")
            col = header.index("capital_gain")
            out += [int(line.split(",")[col]) for line in f if line.strip() and "?" not in line]
    return np.array(out, dtype=np.float64)


def private_sum(x: np.ndarray, lo: float, hi: float, epsilon: float, rng: np.random.Generator) -> int:
    """ε-DP sum of x clipped to the integer hull of [lo, hi] (integer data): exact discrete Laplace noise."""
    a, b = math.floor(lo), math.ceil(hi)           # post-processing of the released bounds
    total = int(np.clip(x, a, b).sum())            # replacing one record moves it by at most b − a
    scale = Fraction(epsilon) / (b - a)            # P(z) ∝ exp(−ε|z|/(b − a)), the float rounded down
    e = float(scale)
    e = e if Fraction(e) <= scale else math.nextafter(e, 0.0)
    return total + discrete_laplace(e, rng)


def private_mean(x: np.ndarray, epsilon: float, rng: np.random.Generator,
                 accountant: dpselect.Accountant) -> tuple[float, tuple[float, float]]:
    """Half of ε for the bounds, half for the sum; n is public."""
    lo, hi = clipping_bounds(x, epsilon=epsilon / 2, rng=rng, accountant=accountant)
    accountant.charge(dpselect.accounting.PureDP(epsilon / 2), label="clipped sum")
    return private_sum(x, lo, hi, epsilon / 2, rng) / x.size, (lo, hi)


def main() -> None:
    x = load_capital_gain()
    rng = np.random.default_rng(0)
    print(f"Adult capital-gain: n = {x.size}, true mean {x.mean():.1f}")
    print(f"{'epsilon':>8} {'mean (one run)':>15} {'bounds':>22} {'RMSE (100 runs)':>15} {'public [0, 99999]':>18}")
    for eps in (0.1, 0.5, 1.0, 2.0):
        acc = dpselect.Accountant(epsilon=eps)
        m, (lo, hi) = private_mean(x, eps, rng, acc)
        runs = np.array([private_mean(x, eps, rng, dpselect.Accountant(epsilon=eps))[0] for _ in range(100)])
        # the same sum with the documented public range of the column instead (all of ε on the sum)
        pub = np.array([private_sum(x, 0.0, 99_999.0, eps, rng) / x.size for _ in range(100)])
        rmse = float(np.sqrt(np.mean((runs - x.mean()) ** 2)))
        rmse_pub = float(np.sqrt(np.mean((pub - x.mean()) ** 2)))
        print(f"{eps:>8} {m:>15.1f} {f'[{lo:.3f}, {hi:.0f}]':>22} {rmse:>15.1f} {rmse_pub:>18.1f}")


if __name__ == "__main__":
    main()
