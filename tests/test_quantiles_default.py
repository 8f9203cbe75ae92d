"""The default of ``dpselect.quantiles`` (issue 36): the rule reads public inputs only, the hybrid targets
(exact audits of the whole law under replace-one), the cell utility of ``method="auto"`` on a grid, and the
integer grid that integer data with integral bounds get (the floored interval mechanism's exact law)."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import _api
from dpselect.quantiles._recursive import (node_plan, recursive_grid_quantiles, recursive_log_law,
                                           scaled_epsilon)
from dpselect.quantiles._single import rank_probabilities

from _quantile_audit import (CANDS, UNIVERSE, add_remove_pairs, grouped, log_law,  # tests/_quantile_audit.py
                             replace_one_pairs)
from _quantile_audit import audit as _audit



def audit(qs, epsilon, *, sizes=(3, 4), **kw):
    """The worst |log ratio| of the exact law over every replace-one pair of ``sizes`` records."""
    return _audit(qs, epsilon, pairs=(p for n in sizes for p in replace_one_pairs(n)), **kw)


# ---------------------------------------------------------------------------------------------
# the hybrid targets: anchored outer chains at ε/(2L), relative middle subproblems at ε/(2L·μ), root ε/L
# ---------------------------------------------------------------------------------------------
def test_hybrid_plan():
    q, zero, one = Fraction(1, 2), Fraction(0), Fraction(1)
    kw = dict(epsilon=0.8, m=9, targets="hybrid", add_remove=False)
    assert node_plan(q, zero, one, 100, 100, True, True, **kw) == (100, 2, 0.2)            # root: 2·q·n, ε/L
    # leftmost: the absolute target round(2·q·n) at ε/(2L)
    assert node_plan(Fraction(3, 10), zero, q, 100, 57, True, False, **kw) == (60, 2, 0.1)
    # rightmost: 2·n_S − (2n − round(2qn)) at ε/(2L)
    assert node_plan(Fraction(8, 10), q, one, 100, 41, False, True, **kw) == (42, 2, 0.1)
    # middle: the relative target on the 1/16 grid at ε/(2L·μ), λ = 1/2 between 0.3 and 0.5 -> μ = 1/2
    T, s, e = node_plan(Fraction(4, 10), Fraction(3, 10), q, 100, 21, False, False, **kw)
    assert (T, s, e) == (168, 16, scaled_epsilon(0.1, Fraction(1, 2))) and e == 0.2
    g = _api.quantiles_privacy(9, epsilon=0.8, method="recursive", targets="hybrid")
    assert (g.epsilon0, g.k) == (0.2, 4) and g.epsilon(0.0) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="targets='hybrid' is not available with neighbours='add_remove'"):
        dpselect.quantiles([1.0, 2.0], [0.5, 0.7], epsilon=1.0, bounds=(0.0, 3.0), targets="hybrid",
                           neighbours="add_remove")


QSETS = [(0.25, 0.5, 0.75), (0.2, 0.3, 0.9), (0.1, 0.4, 0.9)]


@pytest.mark.parametrize("qs", QSETS)
@pytest.mark.parametrize("grid, utility", [(False, "window"), (True, "window"), (True, "cell")])
def test_hybrid_exact_audit_replace_one(qs, grid, utility):
    eps = 1.0
    worst = audit(qs, eps, grid=grid, targets="hybrid", utility=utility)
    assert 0.3 * eps < worst <= eps + 1e-9


def test_hybrid_exact_audit_three_levels():
    qs, eps = (0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9), 1.0       # m = 7, L = 3: middle subproblems too
    worst = audit(qs, eps, grid=True, targets="hybrid", utility="cell")
    assert 0.2 * eps < worst <= eps + 1e-9


def test_hybrid_audit_is_not_vacuous():
    """The audit sees an overspent budget: the same plans at 3ε exceed ε (1.08 on 3 records; at ε: 0.37 on 3 and 4)."""
    qs, eps = (0.1, 0.4, 0.9), 1.0
    assert audit(qs, 3 * eps, grid=True, targets="hybrid", utility="cell", sizes=(3,)) > eps + 0.05  # 1.08


def test_hybrid_sampler_matches_its_exact_law():
    from scipy.stats import chisquare
    qs, x, eps = (0.2, 0.5, 0.75), (0.0, 1.0, 1.0, 3.0, 3.0), 1.5
    outs = [o for o in itertools.product(UNIVERSE, repeat=3) if o[0] <= o[1] <= o[2]]
    p = np.exp([log_law(x, qs, o, eps, grid=True, targets="hybrid", utility="cell") for o in outs])
    idx = {o: i for i, o in enumerate(outs)}
    obs = np.zeros(len(outs))
    gen = np.random.default_rng(5)
    xi = np.array(x, dtype=np.int64)
    for _ in range(3000):
        # integer data with integral bounds, ε/m >= 0.005 and ε·n/m < 5000: the default is the recursive
        # method with hybrid targets on the integer grid 0..3, cell utility
        v = dpselect.quantiles(xi, qs, epsilon=eps, bounds=(0, 3), rng=gen)
        obs[idx[tuple(float(c) for c in v)]] += 1
    exp = p * 3000
    assert (exp >= 5).all()
    assert chisquare(obs, exp).pvalue > 1e-3


# ---------------------------------------------------------------------------------------------
# the rule
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m, eps, n, nb, method, targets", [
    (1, 0.01, 100, "replace_one", "independent", "anchored"),
    (9, 0.01, 1000, "replace_one", "recursive", "relative"),      # ε/m = 0.0011 < 0.005
    (9, 0.1, 1000, "replace_one", "recursive", "hybrid"),         # ε/m = 0.011
    (9, 0.1, 10 ** 6, "replace_one", "independent", "anchored"),  # ε·n/m >= 5000
    (9, 0.1, 1000, "add_remove", "recursive", "relative"),
    (9, 1.0, 1000, "add_remove", "independent", "relative"),
])
def test_rule_reads_m_epsilon_and_public_n(m, eps, n, nb, method, targets):
    r = _api._resolve("auto", m, n, eps, nb)
    assert r == method and _api._auto_targets("auto", r, m, eps, nb, None) == targets
    # a method or targets named by the caller is kept
    assert _api._auto_targets("recursive", "recursive", m, eps, nb, None) == (
        "relative" if nb == "add_remove" else "anchored")
    assert _api._auto_targets("auto", "recursive", m, eps, "replace_one", "anchored") == "anchored"


def test_default_charge_and_law_with_bounds_follow_the_rule():
    """Float data with bounds: ``method="auto"`` is the recursive method with the targets of the rule (the
    same draws as naming them), charged what they cost; the data never change the choice."""
    rng = np.random.default_rng(0)
    qs = np.linspace(0.1, 0.9, 9)
    for eps, tg in ((0.01, "relative"), (0.1, "hybrid")):
        for x in (rng.normal(50, 5, 300), np.repeat([1.0, 2.0, 90.0], 100)):   # smooth, and atoms: same n
            acc = dpselect.Accountant(epsilon=1.0, neighbours="replace_one")
            a = dpselect.quantiles(x, qs, epsilon=eps, bounds=(0.0, 100.0), rng=7, accountant=acc)
            b = dpselect.quantiles(x, qs, epsilon=eps, bounds=(0.0, 100.0), rng=7, method="recursive", targets=tg)
            assert a.tolist() == b.tolist()
            assert acc.history[-1].guarantee == _api.quantiles_privacy(9, epsilon=eps, method="recursive",
                                                                       targets=tg)


def test_auto_with_candidates_uses_the_cell_utility():
    x = np.array([0.0, 1.0, 1.0, 1.0, 3.0])
    qs = np.array([0.2, 0.5, 0.8])
    vals, cnt = grouped(x)
    for seed in range(30):       # the same draws as the cell utility's (the window's differ on some seeds)
        a = dpselect.quantiles(x, qs, epsilon=2.0, candidates=CANDS, rng=seed)
        ref = recursive_grid_quantiles(vals, cnt, qs, epsilon=2.0, cands=CANDS, gen=np.random.default_rng(seed),
                                       utility="cell", targets="hybrid")
        assert a.tolist() == ref.tolist()
    # a named method keeps the window utility
    b = dpselect.quantiles(x, qs, epsilon=2.0, candidates=CANDS, rng=3, method="recursive")
    ref = recursive_grid_quantiles(vals, cnt, qs, epsilon=2.0, cands=CANDS, gen=np.random.default_rng(3))
    assert b.tolist() == ref.tolist()


# ---------------------------------------------------------------------------------------------
# the integer grid
# ---------------------------------------------------------------------------------------------
def test_integer_grid_is_read_from_dtype_and_bounds_only():
    assert _api._integer_grid(np.array([1, 2]), (0.0, 3.0)).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert _api._integer_grid(np.array([1, 2]), (-2.0, 0.0)).tolist() == [-2.0, -1.0, 0.0]
    # a list's inferred type depends on its values (3.5 among integers): never read as integer data
    assert _api._integer_grid([1, 2], (0.0, 3.0)) is None
    assert _api._integer_grid(np.array([1, 2], dtype=np.uint8), (0.0, 1.0)).tolist() == [0.0, 1.0]
    assert _api._integer_grid(np.array([1.0, 2.0]), (0.0, 3.0)) is None          # float dtype
    z = np.array([1, 2])
    assert _api._integer_grid(z, (0.0, 3.5)) is None                              # bounds not integral
    assert _api._integer_grid(z, (0.0, 2.0 ** 20 + 1)) is None                    # too wide
    assert _api._integer_grid(z, (0.0, 2.0 ** 20)).size == 2 ** 20 + 1
    assert _api._integer_grid(np.array([True, False]), (0.0, 1.0)) is None        # bool: not integers
    assert _api._integer_grid(z, None) is None
    x = [0, 1, 1, 3]                       # the same records as a list and as an array: the list keeps the law
    a = dpselect.quantiles(x, [0.5], epsilon=1.0, bounds=(0, 4), rng=2)
    b = dpselect.quantiles(np.array(x, dtype=float), [0.5], epsilon=1.0, bounds=(0, 4), rng=2)
    assert a.tolist() == b.tolist() and a[0] != np.floor(a[0])
    assert _api._integer_grid([[1], [2, 3]], (0.0, 3.0)) is None                  # refused later, by the checks


def test_integer_default_outputs_grid_values_and_named_methods_do_not_change():
    x = np.array([0, 0, 0, 1, 2, 3, 3, 3, 4, 9])
    for eps in (0.05, 5.0, 1e4):          # recursive (relative, hybrid) and independent (ε·n/m >= 5000)
        for nb in ("replace_one", "add_remove"):
            v = dpselect.quantiles(x, [0.25, 0.5, 0.75], epsilon=eps, bounds=(0, 10), rng=1, neighbours=nb)
            assert np.all(v == np.floor(v)) and np.all((0 <= v) & (v <= 10)) and np.all(np.diff(v) >= 0)
    a = dpselect.quantiles(x, [0.25, 0.75], epsilon=1.0, bounds=(0, 10), method="recursive", rng=2)
    b = dpselect.quantiles(x.astype(float), [0.25, 0.75], epsilon=1.0, bounds=(0, 10), method="recursive", rng=2)
    assert a.tolist() == b.tolist()


def test_integer_independent_is_the_floored_interval_mechanism():
    """ε·n/m >= 5000: the interval mechanism on [lo, hi + 1), floored: the same draws, and its exact law
    on lo..hi is ∝ exp(ε0·(−|#{x <= k} − T/2|)/2) (the interval law, unit lengths)."""
    x = np.array([2, 2, 2, 5, 7] * 2000)                 # n = 10^4
    qs = [0.3, 0.6]
    eps = 2.0                                            # ε·n/m = 10^4
    v = dpselect.quantiles(x, qs, epsilon=eps, bounds=(0, 9), rng=4)
    vals, cnt = grouped(x)
    from dpselect.quantiles._independent import independent_quantiles
    w = independent_quantiles(vals, cnt, np.array(qs), epsilon=eps, lo=0.0, hi=10.0, gen=np.random.default_rng(4))
    assert v.tolist() == np.floor(w).tolist()
    # exact law of one floored release, small data
    vals, cnt = grouped([1.0, 1.0, 3.0])
    T, e0 = 3, 0.7                                       # target rank 3/2
    lo, hi, p = rank_probabilities(vals, cnt, 0.0, 5.0, T, e0)
    law = np.zeros(5)
    for a, b, pj in zip(lo, hi, p):                      # spread each interval's mass uniformly over its bins
        for k in range(int(a), int(math.ceil(b))):
            law[k] += pj * (min(b, k + 1) - max(a, k)) / (b - a)
    rank = np.array([0, 2, 2, 3, 3])                     # #{x <= k}, k = 0..4
    ref = np.exp(-e0 * np.abs(rank - T / 2) / 2)
    np.testing.assert_allclose(law, ref / ref.sum(), rtol=1e-12)


def test_integer_independent_exact_audit():
    """The floored release's exact law (one quantile, ε0 = 1) over every replace-one pair of 3 and 4 records on
    {0, 1, 2, 3}, bounds (0, 3): worst |log ratio| <= ε, attained within a factor."""
    def law(x, q):
        vals, cnt = grouped(x)
        n = len(x)
        lo, hi, p = rank_probabilities(vals, cnt, 0.0, 4.0, int(round(2 * q * n)), 1.0)
        out = np.zeros(4)
        for a, b, pj in zip(lo, hi, p):
            for k in range(int(a), min(int(math.ceil(b)), 4)):
                out[k] += pj * (min(b, k + 1) - max(a, k)) / (b - a)
        return np.log(out)
    for q in (0.25, 0.5, 0.9):
        worst = max(float(np.max(np.abs(law(a, q) - law(b, q)))) for n in (3, 4) for a, b in replace_one_pairs(n))
        assert 0.3 < worst <= 1.0 + 1e-9


# ---------------------------------------------------------------------------------------------
# add/remove: a noisy count picks the method
# ---------------------------------------------------------------------------------------------
def _counted_law(x, qs, eps, outs):
    """The exact law of ``method="auto"`` under add/remove with the count first, on the grid CANDS (cell
    utility): P(n̂ < t)·(the recursive law at ε') + P(n̂ >= t)·(the independent law at ε')."""
    from dpselect._exact_random import discrete_laplace_tail
    from dpselect.quantiles._budget import split_epsilon
    from dpselect.quantiles._grid import grid_probabilities
    from dpselect.quantiles._single import target_twice
    vals, cnt = grouped(x)
    n, m = len(x), len(qs)
    eps_n, rest = _api.count_split(eps)
    t = next(k for k in range(-50, 10 ** 4) if _api.noisy_count_method(k, m, rest) == "independent")
    p_ind = discrete_laplace_tail(t - n, eps_n)
    e0 = split_epsilon(rest, m)
    single = [grid_probabilities(vals, cnt, CANDS, target_twice(Fraction(q), n), e0, utility="cell") for q in qs]
    out = []
    for o in outs:
        rec = math.exp(recursive_log_law(vals, cnt, np.asarray(qs), np.asarray(o), epsilon=rest,
                                         domain=(CANDS, 0, CANDS.size - 1, False, "cell"), grid=True,
                                         targets="relative", add_remove=True))
        ind = math.prod(single[i][UNIVERSE.index(o[i])] for i in range(m))
        out.append((1 - p_ind) * rec + p_ind * ind)
    return np.array(out)


@pytest.fixture
def low_thresholds(monkeypatch):
    """Thresholds that make both branches likely on a 4-record universe at ε = 1 (the law's form is the same)."""
    monkeypatch.setattr(_api, "AUTO_INDEPENDENT_FROM", 1.0)
    monkeypatch.setattr(_api, "AUTO_ADD_REMOVE_INDEPENDENT_FROM", 1.0)


def test_add_remove_count_first_exact_audit(low_thresholds):
    qs, eps = (0.25, 0.75), 1.0
    outs = list(itertools.product(UNIVERSE, repeat=2))
    laws = {}

    def law(d):
        if d not in laws:
            laws[d] = _counted_law(d, qs, eps, outs)
            assert abs(laws[d].sum() - 1) < 1e-12 and (laws[d] > 0).all()
        return laws[d]
    worst = max(float(np.max(np.abs(np.log(law(a)) - np.log(law(b))))) for a, b in add_remove_pairs(4))
    assert 0.2 < worst <= eps + 1e-9
    # the charge: PureDP(ε) (the count at ε_n, then the method at ε − ε_n)
    assert _api.quantiles_privacy(2, epsilon=eps, method="auto", neighbours="add_remove") == dpselect.PureDP(eps)
    eps_n, rest = _api.count_split(eps)
    assert Fraction(eps_n) + Fraction(rest) <= Fraction(eps) and eps_n == pytest.approx(eps / 100)


def test_add_remove_count_first_sampler_matches_its_law(low_thresholds):
    from scipy.stats import chisquare
    qs, eps, x = (0.25, 0.75), 1.0, (0.0, 1.0, 3.0)
    outs = list(itertools.product(UNIVERSE, repeat=2))
    p = _counted_law(x, qs, eps, outs)
    gen = np.random.default_rng(8)
    idx = {o: i for i, o in enumerate(outs)}
    obs = np.zeros(len(outs))
    acc = dpselect.Accountant(epsilon=1.0, neighbours="add_remove")
    for _ in range(3000):
        v = dpselect.quantiles(x, qs, epsilon=eps, candidates=CANDS, neighbours="add_remove", rng=gen)
        obs[idx[tuple(float(c) for c in v)]] += 1
    dpselect.quantiles(x, qs, epsilon=eps, candidates=CANDS, neighbours="add_remove", rng=gen, accountant=acc)
    assert acc.history[-1].guarantee == dpselect.PureDP(eps)
    assert (p * 3000 >= 5).all()
    assert chisquare(obs, 3000 * p).pvalue > 1e-3


def test_add_remove_count_is_not_drawn_where_the_rule_needs_none():
    """ε/m >= 0.02 (or m = 1): no count, the old law and its guarantee."""
    x = [1.0, 2.0, 2.0, 3.0]
    a = dpselect.quantiles(x, [0.2, 0.8], epsilon=1.0, bounds=(0.0, 4.0), neighbours="add_remove", rng=5)
    b = dpselect.quantiles(x, [0.2, 0.8], epsilon=1.0, bounds=(0.0, 4.0), neighbours="add_remove", rng=5,
                           method="independent")
    assert a.tolist() == b.tolist()
    assert _api.quantiles_privacy(2, epsilon=1.0, method="auto", neighbours="add_remove") == \
        _api.quantiles_privacy(2, epsilon=1.0, method="independent", neighbours="add_remove")
    with pytest.raises(ValueError, match="only under neighbours='add_remove'"):
        _api.quantiles_privacy(2, epsilon=1.0, method="auto")
