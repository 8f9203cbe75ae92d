"""The recursive method's relative targets (``targets="relative"``) and the per-subproblem budget ε/(2L·μ):
exact audits under both neighbour models, the sampler against its exact law, and the counterexample that
rules out the paper's ε/L per level with the anchored targets under replace-one."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import _api
from dpselect.quantiles._budget import split_epsilon
from dpselect.quantiles._recursive import (depth, node_plan, node_sensitivity, recursive_log_law,
                                           recursive_quantiles, recursive_slots, scaled_epsilon)

from _quantile_audit import (CANDS, UNIVERSE, add_remove_pairs, audit, grouped,  # tests/_quantile_audit.py
                             log_law, replace_one_pairs)


# ---------------------------------------------------------------------------------------------
# the per-subproblem budget
# ---------------------------------------------------------------------------------------------
def test_node_sensitivity_and_scaled_epsilon_are_exact():
    assert node_sensitivity(Fraction(1, 2)) == Fraction(1, 2)
    assert node_sensitivity(Fraction(2, 3)) == Fraction(11, 16)          # 16·2/3 = 10.67: d in {10, 11}
    assert node_sensitivity(Fraction(1, 100)) == 1
    for lam in (Fraction(1, 3), Fraction(7, 10), Fraction(1, 2), Fraction(99, 100)):
        mu = node_sensitivity(lam)
        assert Fraction(1, 2) <= mu <= 1 and mu >= max(lam, 1 - lam) - Fraction(1, 16)
        for c in (0.1 / 8, 1.0 / 3, 0.7):
            e = scaled_epsilon(c, mu)
            assert Fraction(e) * mu <= Fraction(c) < Fraction(math.nextafter(e, math.inf)) * mu


def test_plan_spends_the_level_budget():
    """Replace-one: root ε/L, below it ε/(2L·μ); add/remove: ε/(L·μ) everywhere; anchored: ε/(2L − 1)."""
    q, zero, one = Fraction(1, 2), Fraction(0), Fraction(1)
    kw = dict(epsilon=0.8, m=9)
    assert node_plan(q, zero, one, 100, 100, True, True, targets="relative", add_remove=False, **kw) == (800, 16, 0.2)
    assert node_plan(q, zero, one, 100, 100, True, True, targets="relative", add_remove=True, **kw) == (800, 16, 0.4)
    T, s, e = node_plan(Fraction(3, 10), zero, q, 100, 50, True, False, targets="relative", add_remove=False, **kw)
    assert (T, s) == (480, 16) and e == scaled_epsilon(0.1, Fraction(10, 16))     # λ = 3/5
    assert node_plan(q, zero, one, 100, 100, True, True, targets="anchored", add_remove=False, **kw)[2] == split_epsilon(0.8, 7)


# ---------------------------------------------------------------------------------------------
# exact audits
# ---------------------------------------------------------------------------------------------
QSETS = [(0.25, 0.5, 0.75), (0.2, 0.3, 0.9), (0.1, 0.4, 0.9)]


@pytest.mark.parametrize("qs", QSETS)
@pytest.mark.parametrize("grid", [False, True])
def test_relative_exact_audit_replace_one(qs, grid):
    eps = 1.0
    worst = max(audit(qs, eps, grid=grid, targets="relative", add_remove=False, pairs=replace_one_pairs(n))
                for n in (3, 4))
    assert 0.3 * eps < worst <= eps + 1e-9


@pytest.mark.parametrize("qs", QSETS)
@pytest.mark.parametrize("grid", [False, True])
def test_relative_exact_audit_add_remove(qs, grid):
    eps = 1.0
    worst = audit(qs, eps, grid=grid, targets="relative", add_remove=True, pairs=add_remove_pairs(4))
    assert 0.3 * eps < worst <= eps + 1e-9


def test_relative_exact_audit_three_levels():
    qs, eps = (0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9), 1.0       # m = 7, L = 3
    assert depth(7) == 3
    ro = max(audit(qs, eps, grid=True, targets="relative", add_remove=False, pairs=replace_one_pairs(n))
             for n in (3, 4))
    ar = audit(qs, eps, grid=True, targets="relative", add_remove=True, pairs=add_remove_pairs(4))
    assert 0.2 * eps < ro <= eps + 1e-9 and 0.2 * eps < ar <= eps + 1e-9


def test_audit_is_not_vacuous():
    """The audits see an overspent budget: the same plans at 2ε (every release's ε doubled) exceed ε."""
    qs, eps = (0.1, 0.4, 0.9), 1.0
    ro = max(audit(qs, 2 * eps, grid=True, targets="relative", add_remove=False, pairs=replace_one_pairs(n))
             for n in (3, 4))
    ar = audit(qs, 2 * eps, grid=True, targets="relative", add_remove=True, pairs=add_remove_pairs(4))
    assert ro > eps + 0.05 and ar > eps + 0.05           # 1.114, 1.161


# ---------------------------------------------------------------------------------------------
# the paper's ε/L per level with the anchored targets under replace-one: refuted
# ---------------------------------------------------------------------------------------------
def counterexample(gap):
    """8 records with 3 tiny gaps at the targets' ranks 2, 4, 6 and wide runs just above them; x (the 2nd
    record) is replaced by y (above every record). Output: one point in each tiny gap."""
    W = 0.25
    r = [0.001, 0.002]
    for _ in range(3):
        r += [r[-1] + gap, r[-1] + gap + W]
    d = r[:7] + [r[6] + W]                          # 8 records: ranks 2, 4, 6 end in tiny gaps
    y = d[-1] + gap
    d2 = sorted([v for i, v in enumerate(d) if i != 1] + [y])
    out = (d[1] + gap / 2, d[3] + gap / 2, d[5] + gap / 2)
    return d, d2, out


@pytest.mark.parametrize("eps0", [0.05, 1.0, 20.0])
def test_anchored_per_level_budget_is_refuted(eps0):
    """At ε0 per release the anchored recursion (m = 3, L = 2) loses ε0 + 2·log((e^ε0 + 1)/2) > L·ε0 on this
    pair (every ε0 > 0): Kaplan et al.'s ε/L per level is not replace-one DP here, and the shipped
    ε/(2L − 1) is needed (the loss stays below (2L − 1)·ε0 = 3·ε0)."""
    qs = (0.25, 0.5, 0.75)
    d, d2, out = counterexample(1e-6 * math.exp(-eps0))

    def law(x):
        vals, cnt = grouped(x)
        return recursive_log_law(vals, cnt, np.array(qs), np.array(out), epsilon=1.0, domain=(0.0, 1.0),
                                 targets="anchored", eps0=eps0)

    loss = law(d) - law(d2)
    assert loss > depth(3) * eps0
    assert loss <= recursive_slots(3) * eps0 + 1e-9
    assert loss == pytest.approx(eps0 + 2 * math.log((math.exp(eps0) + 1) / 2), rel=0.1)


# ---------------------------------------------------------------------------------------------
# the sampler against its exact law, and the API
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("add_remove", [False, True])
def test_relative_grid_sampler_matches_its_exact_law(add_remove):
    from scipy.stats import chisquare
    qs, x, eps = (0.2, 0.5, 0.75), (0.0, 1.0, 1.0, 3.0, 3.0), 1.5
    outs = [o for o in itertools.product(UNIVERSE, repeat=3) if o[0] <= o[1] <= o[2]]
    p = np.exp([log_law(x, qs, o, eps, grid=True, targets="relative", add_remove=add_remove) for o in outs])
    gen = np.random.default_rng(12)
    draws = 3000
    idx = {o: i for i, o in enumerate(outs)}
    obs = np.zeros(len(outs))
    for _ in range(draws):
        v = dpselect.quantiles(x, qs, epsilon=eps, candidates=CANDS, method="recursive", rng=gen,
                               targets="relative", neighbours="add_remove" if add_remove else "replace_one")
        obs[idx[tuple(float(c) for c in v)]] += 1
    exp = p * draws
    assert (exp >= 5).all() and obs.sum() == draws
    assert chisquare(obs, exp).pvalue > 1e-3


def test_interval_release_on_the_sixteenth_grid():
    """The relative targets' single release: utilities −|16·rank − T|/16 exactly, and the sampler (one
    subproblem, m = 1) against its exact law."""
    from scipy.stats import chisquare
    from dpselect.quantiles._single import intervals, rank_probabilities, single_rank
    vals, cnt = grouped((0.5, 1.5, 1.5, 2.5, 3.5))
    iv = intervals(vals, cnt, 0.0, 4.0, 27, scale=16)              # target 27/16
    assert iv.utility.tolist() == [-27 / 16, -11 / 16, -21 / 16, -37 / 16, -53 / 16]
    lo, hi, p = rank_probabilities(vals, cnt, 0.0, 4.0, 27, 1.3, scale=16)
    gen = np.random.default_rng(4)
    x = np.array([single_rank(vals, cnt, 0.0, 4.0, 27, 1.3, gen, scale=16) for _ in range(4000)])
    obs = np.array([np.sum((x >= a) & (x < b)) for a, b in zip(lo, hi)], dtype=float)
    assert chisquare(obs, p * x.size).pvalue > 1e-3


def test_targets_argument():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    qs = [0.1, 0.5, 0.9]
    a = dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), method="recursive", rng=3)
    b = dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), method="recursive", rng=3, targets="anchored")
    assert a.tolist() == b.tolist()
    acc = dpselect.Accountant(epsilon=2.0, neighbours="replace_one")
    c = dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), method="recursive", rng=3, targets="relative",
                           accountant=acc)
    vals, cnt = grouped(x)
    ref = recursive_quantiles(vals, cnt, np.array(qs), epsilon=1.0, lo=0.0, hi=10.0, gen=np.random.default_rng(3),
                              targets="relative")
    assert c.tolist() == ref.tolist()
    g = acc.history[-1].guarantee
    assert g == _api.quantiles_privacy(3, epsilon=1.0, method="recursive", targets="relative")
    assert (g.epsilon0, g.k) == (0.5, 2) and g.epsilon(0.0) == 1.0
    with pytest.raises(ValueError, match="targets='anchored' is not available with neighbours='add_remove'"):
        dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), targets="anchored", neighbours="add_remove")
    with pytest.raises(ValueError, match="targets must be one of"):
        dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), targets="absolute")
    assert dpselect.quantile(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), rng=3, targets="relative") == \
        dpselect.quantiles(x, [0.5], epsilon=1.0, bounds=(0.0, 10.0), rng=3, targets="relative")[0]


def test_dask_passes_targets_through():
    da = pytest.importorskip("dask.array")
    from dpselect.dask import quantiles as dq
    x = np.random.default_rng(1).integers(0, 50, size=600).astype(float)
    vals, cnt = np.unique(x, return_counts=True)
    got = dq(da.from_array(x, chunks=200), [0.1, 0.5, 0.9], epsilon=0.5, bounds=(0.0, 50.0), method="recursive",
             rng=4, targets="relative")
    want = dpselect.quantiles(vals, [0.1, 0.5, 0.9], epsilon=0.5, bounds=(0.0, 50.0), method="recursive",
                              counts=cnt, rng=4, targets="relative")
    assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="targets='anchored' is not available"):
        dq(da.from_array(x, chunks=200), [0.5], epsilon=1.0, bounds=(0.0, 50.0), neighbours="add_remove",
           targets="anchored")
