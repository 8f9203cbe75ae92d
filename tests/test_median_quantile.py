"""One release, one charge, one path: ``median(x, bound=L)`` and ``quantile(x, 0.5, bounds=(0, L))`` are one
interval exponential mechanism, so they draw the same values from the same generator, have the same exact law
and charge the same guarantee, ``BoundedRange(ε)``, under either neighbour model."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import dpselect
from dpselect.accounting import BoundedRange
from dpselect.quantiles import median_distribution
from dpselect.quantiles._single import single_probabilities

X = np.array([5.0, 1.0, 9.0, 4.0, 7.0, 3.0, 4.0])
L = 10.0


def test_median_and_quantile_draw_the_same_values():
    for mech in ("LD", "EM", "SLD"):
        got = [dpselect.median(X, epsilon=0.7, bound=L, mechanism=mech, rng=s) for s in range(40)]
        assert got == [dpselect.quantile(X, 0.5, epsilon=0.7, bounds=(0.0, L), rng=s) for s in range(40)], mech


def test_median_and_quantile_have_the_same_exact_law():
    law = median_distribution(X, epsilon=0.7, bound=L)
    vals, cnt = np.unique(X, return_counts=True)
    lo, hi, p = single_probabilities(vals, cnt, 0.0, L, 0.5, 0.7)
    assert np.array_equal(law.lo, lo) and np.array_equal(law.hi, hi)
    np.testing.assert_allclose(law.probabilities, p, rtol=1e-13, atol=0)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_median_and_quantile_charge_the_same_guarantee(neighbours):
    """Every method a one-quantile release can run charges what the median charges (it charged
    BoundedRangeComposition(ε, 1) or AdaptiveBoundedRangeComposition(ε, 1), other values of other types)."""
    takes = "neighbours" in inspect.signature(dpselect.median).parameters   # (else: replace-one, its only model)
    med = dpselect.Accountant(epsilon=5.0, neighbours=neighbours if takes else "replace_one")
    dpselect.median(X, epsilon=0.7, bound=L, rng=0, accountant=med, **({"neighbours": neighbours} if takes else {}))
    assert med.history[0].guarantee == BoundedRange(0.7)
    for method in ("auto", "independent", "recursive") + (("joint",) if neighbours == "replace_one" else ()):
        acc = dpselect.Accountant(epsilon=5.0, neighbours=neighbours)
        dpselect.quantile(X, 0.5, epsilon=0.7, bounds=(0.0, L), method=method, rng=0, accountant=acc,
                          neighbours=neighbours)
        assert acc.history[0].guarantee == med.history[0].guarantee, method
