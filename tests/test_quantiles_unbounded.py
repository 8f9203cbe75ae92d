"""Unbounded quantiles (issue 26): AboveThreshold on a geometric grid with exact discrete-Laplace noise.

Exact audit of the search's guarantee on a small universe, χ² of the samplers against their exact laws,
the exact bit decider against its float fast path, and accuracy on a DPBench histogram.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpselect.quantiles import _unbounded as U


# ---------------------------------------------------------------------------------------------
# exact audit of one search on a tiny universe
# ---------------------------------------------------------------------------------------------
UNIVERSE = (0.0, 1.0, 2.0, 3.0)
THRESHOLDS = np.array([0.0, 1.0, 2.0, 3.0])  # a truncated, data-independent grid (K = 4)


def _counts(db, direction):
    x = np.asarray(db)
    if direction == "up":
        return np.array([(x <= t).sum() for t in THRESHOLDS])
    return np.array([(x >= 3.0 - t).sum() for t in THRESHOLDS])


def _max_log_ratio(eps_noise, threshold, direction, n=3):
    """max over replace-one neighbour pairs and outputs k = 0..K of |log P_x(k) − log P_y(k)|."""
    laws = {db: U.above_threshold_law(_counts(db, direction), threshold, eps_noise)
            for db in itertools.combinations_with_replacement(UNIVERSE, n)}
    worst = 0.0
    for db in laws:
        for j in range(n):
            for v in UNIVERSE:
                nb = tuple(sorted(db[:j] + (v,) + db[j + 1:]))
                a, b = laws[db], laws[nb]
                assert (a > 0).all() and (b > 0).all()
                worst = max(worst, float(np.max(np.abs(np.log(a) - np.log(b)))))
    return worst


@pytest.mark.parametrize("eps", [1.0, 0.3])
@pytest.mark.parametrize("threshold", [Fraction(3, 2), Fraction(1), Fraction(3)])
@pytest.mark.parametrize("direction", ["up", "down"])
def test_audit_above_threshold(eps, threshold, direction):
    worst = _max_log_ratio(eps, threshold, direction)
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # and not vacuous: the bound is nearly reached


def test_audit_values():
    # measured: the monotone analysis (ε1 + ε2 = ε) is nearly tight on this universe
    assert round(_max_log_ratio(1.0, Fraction(3, 2), "up"), 4) == 0.8704
    assert round(_max_log_ratio(1.0, Fraction(1), "up"), 4) == 0.8921


def test_audit_mutation_fails():
    # the noise of a 2ε search (half the scale) is not ε-DP: the audit must see it
    assert round(_max_log_ratio(2.0, Fraction(3, 2), "up"), 4) == 1.8372


def test_law_sums_to_one():
    law = U.above_threshold_law(np.array([0, 1, 1, 3]), Fraction(3, 2), 1.0)
    assert abs(law.sum() - 1.0) < 1e-12


# ---------------------------------------------------------------------------------------------
# samplers against their exact laws
# ---------------------------------------------------------------------------------------------
def test_discrete_laplace_chi2(freq):
    rng = np.random.default_rng(7)
    eps = 0.7
    z = np.array([U.discrete_laplace(eps, rng) for _ in range(4000)])
    p = math.exp(-eps)
    ks = np.arange(-12, 13)
    probs = (1 - p) / (1 + p) * p ** np.abs(ks)
    inside = (z >= -12) & (z <= 12)
    samples = np.where(inside, z + 12, 25)
    freq(samples, np.append(probs, 1 - probs.sum()))


def test_geometric_chi2(freq):
    rng = np.random.default_rng(8)
    eps = 0.3
    g = np.array([U.geometric(eps, rng) for _ in range(3000)])
    ks = np.arange(30)
    probs = np.exp(-eps * ks) * (1 - math.exp(-eps))
    freq(np.minimum(g, 30), np.append(probs, 1 - probs.sum()))


def test_stopping_index_chi2(freq):
    rng = np.random.default_rng(11)
    f = np.array([0, 2, 3, 5, 6, 9, 10, 10])
    T, eps = Fraction(11, 2), 1.0
    law = U.above_threshold_law(f, T, eps)
    ks = [U.above_threshold(lambda idx: f[idx], T, f.size, eps, rng) for _ in range(3000)]
    freq(ks, law)


def test_exact_decider_agrees_with_fast_path():
    rng = np.random.default_rng(3)
    eps = 0.37
    c = rng.integers(-20, 40, size=5000)
    w = U.words(rng, c.size)
    fast = U._fast_decide(c, w, eps)
    assert (fast != -1).all()
    for ci, wi, fi in zip(c[:300], w[:300], fast[:300]):
        assert U._exact_decide(int(ci), int(wi), eps, rng) == bool(fi)


def test_exact_decider_at_the_boundary():
    # a first word at the float value of P(ν >= c): the fast path cannot decide, the exact path reads more words
    eps = 0.5
    for c in (3, -2):
        lo, hi = U._tail_enclosure(c, eps, 80)
        assert hi - lo < Fraction(1, 10 ** 70) and abs(float(lo) - U.tail_probability(c, eps)) < 1e-15
        w = np.array([math.floor(lo * 2 ** 64)], dtype=np.uint64)
        assert U._fast_decide(np.array([c]), w, eps)[0] == -1
        hits = sum(U._exact_decide(c, int(w[0]), eps, np.random.default_rng(s0)) for s0 in range(200))
        # given the first word, U < s has conditional probability (s − w/2^64)·2^64 in (0, 1)
        p = float((Fraction(lo) - Fraction(int(w[0]), 2 ** 64)) * 2 ** 64)
        assert abs(hits / 200 - p) < 0.15


def test_grid():
    g = U.grid(np.array([0, 1, U.GRID_SIZE - 1]))
    assert g[0] == 0.0 and g[1] == U.BETA - 1.0 and np.isfinite(g[2]) and g[2] > 1e307
    assert U.BETA == 1.0009765625
