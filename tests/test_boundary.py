"""The public boundary of the core selectors (issue 23 item 2, issue 24 items 1 and 3).

Every selector checks its arguments once, then charges ``accountant=`` the guarantee of the call (the
registry's ``.privacy``), and only then draws: a refused release raises BudgetExceededError, records nothing
and leaves the generator's state exactly as it was; bad arguments are refused before any charge. ``delta=``
gives a top-k under (ε, δ): the same peeling law with the per-pick ε0 of ``per_pick_epsilon``.
"""
from __future__ import annotations

import inspect
import math
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect import mechanisms
from dpselect._boundary import charge_selection, selection_label, topk_budget
from dpselect.accounting import (Accountant, AdaptiveBoundedRangeComposition, BoundedRange,
                                 BoundedRangeComposition, PureDP, PureDPComposition, per_pick_epsilon)
from dpselect.exceptions import BudgetExceededError
from dpselect.registry import Mechanism, get_mechanism

U = np.array([1.0, 5.0, 2.0, 3.0, 0.5, 4.0])
SF = dpselect.constant(6, 1.0)
# (public function, registry name, sensitivity keyword and value, extra options)
SELECTORS = [
    (dpselect.exponential, "exponential", {"sensitivity": 1.0}, {}),
    (dpselect.permute_and_flip, "permute_and_flip", {"sensitivity": 1.0}, {}),
    (dpselect.report_noisy_max, "report_noisy_max", {"sensitivity": 1.0}, {}),
    (dpselect.report_noisy_max, "report_noisy_max", {"sensitivity": 1.0}, {"noise": "gumbel"}),
    (dpselect.local_dampening, "local_dampening", {"sensitivity_function": SF}, {}),
    (dpselect.shifted_local_dampening, "shifted_local_dampening", {"sensitivity_function": SF}, {}),
]
IDS = ["EM", "PF", "RNM", "RNM-gumbel", "LD", "SLD"]


def _call(fn, sens, opts, **kw):
    return fn(U, **sens, **opts, **kw)


@pytest.mark.parametrize("fn,name,sens,opts", SELECTORS, ids=IDS)
def test_charges_the_registry_guarantee_with_a_label(fn, name, sens, opts):
    spec = get_mechanism(name)
    br = spec.bounded_range(**opts)
    acc = Accountant(epsilon=100.0)
    assert type(_call(fn, sens, opts, epsilon=0.5, rng=0, accountant=acc)) is int
    _call(fn, sens, opts, epsilon=0.6, k=3, rng=0, accountant=acc)
    _call(fn, sens, opts, epsilon=0.7, size=5, rng=0, accountant=acc)
    _call(fn, sens, opts, epsilon=0.8, k=2, size=4, rng=0, accountant=acc)
    h = acc.history
    assert [r.label for r in h] == [name, f"{name}(k=3)", f"{name}(size=5)", f"{name}(k=2, size=4)"]
    one, three, batch, both = (r.guarantee for r in h)
    assert one == (BoundedRange(0.5) if br else PureDP(0.5))
    # k picks: the adaptive composition of k picks of ε/k (rounded up); size=N: N releases of the call
    assert type(three) is (AdaptiveBoundedRangeComposition if br else PureDPComposition)
    assert (three.epsilon0, three.k) == (math.nextafter(0.2, 1.0) if Fraction(0.2) * 3 < Fraction(0.6) else 0.2, 3)
    assert three == spec.privacy(0.6, k=3, **opts)
    assert type(batch) is (BoundedRangeComposition if br else PureDPComposition) and (batch.epsilon0, batch.k) == (0.7, 5)
    assert type(both) is type(three) and (both.epsilon0, both.k) == (0.4, 8)
    assert acc.spent().epsilon_ == pytest.approx(0.5 + 0.6 + 0.7 * 5 + 0.8 * 4, rel=1e-9)


@pytest.mark.parametrize("fn,name,sens,opts", SELECTORS, ids=IDS)
def test_a_refused_release_records_nothing_and_leaves_the_generator_untouched(fn, name, sens, opts):
    for kw in ({"epsilon": 0.6}, {"epsilon": 0.45, "k": 3}, {"epsilon": 0.2, "size": 3}, {"epsilon": 0.15, "k": 2, "size": 4}):
        acc = Accountant(epsilon=0.5)
        acc.charge(PureDP(0.1), label="earlier")
        rng = np.random.default_rng(11)
        state = rng.bit_generator.state
        with pytest.raises(BudgetExceededError, match="would exceed the budget"):
            _call(fn, sens, opts, rng=rng, accountant=acc, **kw)
        assert rng.bit_generator.state == state
        assert [r.label for r in acc.history] == ["earlier"] and acc.spent() == PureDP(0.1)
        # through the registry as well
        with pytest.raises(BudgetExceededError):
            get_mechanism(name).select(U, sensitivity=next(iter(sens.values())), rng=rng, accountant=acc, **opts, **kw)
        assert rng.bit_generator.state == state and len(acc.history) == 1
        # a release that fits goes through and draws
        _call(fn, sens, opts, epsilon=0.4, rng=rng, accountant=acc)
        assert rng.bit_generator.state != state and len(acc.history) == 2


@pytest.mark.parametrize("fn,name,sens,opts", SELECTORS, ids=IDS)
def test_bad_arguments_are_refused_before_any_charge(fn, name, sens, opts):
    acc = Accountant(epsilon=10.0)
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    bad = [({"epsilon": -1.0}, ValueError, "epsilon"), ({"epsilon": 1.0, "k": 0}, ValueError, "k"),
           ({"epsilon": 1.0, "k": 7}, ValueError, "k"), ({"epsilon": 1.0, "delta": 1e-6}, ValueError, "delta"),
           ({"epsilon": 1.0, "k": 1, "delta": 1e-6}, ValueError, "one pick"),
           ({"epsilon": 1.0, "k": 2, "delta": 1.5}, ValueError, "delta"),
           ({"epsilon": 1.0, "k": 2, "delta": -1e-6}, ValueError, "delta"),
           ({"epsilon": 1.0, "size": 0}, ValueError, "size"), ({"epsilon": 1.0, "exact": "yes"}, TypeError, "exact"),
           ({"epsilon": 1.0, "base_measure": [1.0] * 5}, ValueError, "base_measure")]
    for kw, exc, match in bad:
        with pytest.raises(exc, match=match):
            _call(fn, sens, opts, rng=rng, accountant=acc, **kw)
        with pytest.raises(exc, match=match):
            get_mechanism(name).select(U, sensitivity=next(iter(sens.values())), rng=rng, accountant=acc, **opts, **kw)
    with pytest.raises(TypeError, match="rng must be"):
        _call(fn, sens, opts, epsilon=1.0, rng="seed", accountant=acc)
    with pytest.raises(TypeError, match="accountant must be a dpselect.Accountant or None, got float"):
        _call(fn, sens, opts, epsilon=1.0, rng=rng, accountant=1.0)
    with pytest.raises(TypeError, match="accountant must be a dpselect.Accountant"):
        get_mechanism(name).select(U, epsilon=1.0, sensitivity=next(iter(sens.values())), rng=rng, accountant="acc", **opts)
    assert acc.history == () and rng.bit_generator.state == state


def test_one_candidate_is_still_a_release_and_is_charged():
    acc = Accountant(epsilon=1.0)
    assert dpselect.exponential([3.0], epsilon=0.25, sensitivity=1.0, rng=0, accountant=acc) == 0
    assert acc.history[0].guarantee == BoundedRange(0.25)


def test_same_seed_same_picks_with_and_without_an_accountant():
    for fn, name, sens, opts in SELECTORS:
        for kw in ({}, {"k": 3}, {"size": 6}, {"k": 2, "size": 3}, {"exact": False, "k": 2}):
            a = _call(fn, sens, opts, epsilon=1.5, rng=5, **kw)
            budget = math.inf if kw.get("exact") is False else 50.0    # exact=False is NonPrivate: ε = ∞
            b = _call(fn, sens, opts, epsilon=1.5, rng=5, accountant=Accountant(epsilon=budget), **kw)
            c = get_mechanism(name).select(U, epsilon=1.5, sensitivity=next(iter(sens.values())), rng=5, **opts, **kw)
            assert np.array_equal(a, b) and np.array_equal(a, c), (name, kw)


def test_public_functions_and_checked_entries_have_one_signature():
    """The public function is its checked entry (with the public docstring): the same parameters, and the
    registry's spec.select calls the entry (validation once, no second pass through the public function)."""
    for name in ("exponential", "permute_and_flip", "report_noisy_max", "local_dampening", "shifted_local_dampening"):
        public, entry = getattr(dpselect, name), getattr(mechanisms, f"_{name}_entry")
        assert inspect.signature(public) == inspect.signature(entry)
        assert {"accountant", "delta"} <= set(inspect.signature(public).parameters)
        assert inspect.unwrap(get_mechanism(name).selector) is inspect.unwrap(entry)


def test_validation_runs_once_per_call(monkeypatch):
    """One check of the utilities per selection, through the public function or spec.select (PF was a second
    pass through report_noisy_max)."""
    calls = []
    real = mechanisms.check_utilities
    monkeypatch.setattr(mechanisms, "check_utilities", lambda u, *a, **kw: calls.append(1) or real(u, *a, **kw))
    for name in ("exponential", "permute_and_flip", "report_noisy_max"):
        for select in (getattr(dpselect, name), get_mechanism(name).select):
            calls.clear()
            select(U, epsilon=1.0, sensitivity=1.0, k=2, rng=0)
            assert calls == [1], name


def test_many_charges_through_a_selector_reuse_one_guarantee():
    # what keeps a charge O(1): the accountant's cost cache answers with the same guarantee object each time.
    # The wall-clock cost of 10^4 charges is measured by benchmarks/bench_boundary.py, not asserted here
    # (a time bound in a unit test failed under load: issue 33).
    u = np.arange(5.0)
    gen = np.random.default_rng(0)
    acc = Accountant(epsilon=100.0)
    for _ in range(2_000):
        dpselect.exponential(u, epsilon=0.001, sensitivity=1.0, rng=gen, accountant=acc)
    assert len(acc.history) == 2_000 and acc.spent().epsilon_ == pytest.approx(2.0, rel=1e-9)
    assert acc.history[0].guarantee is acc.history[-1].guarantee
    acc2 = Accountant(epsilon=100.0)
    for _ in range(2_000):
        charge_selection(acc2, "exponential", 0.001, k=None, size=None)
    assert len(acc2.history) == 2_000 and acc2.history[0].guarantee is acc2.history[-1].guarantee
    assert acc2.history[0].guarantee == BoundedRange(0.001)


def test_a_user_registered_selector_without_accountant_is_charged_by_the_registry():
    def pick(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True):
        gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        return int(gen.integers(len(utilities)))

    toy = Mechanism("toy_boundary", "global", pick, lambda u, **kw: np.full(len(u), 1 / len(u)),
                    guarantee=BoundedRange)
    acc = Accountant(epsilon=1.0)
    toy.select(U, epsilon=0.5, sensitivity=1.0, rng=0, accountant=acc)
    assert acc.history[0].guarantee == BoundedRange(0.5) and acc.history[0].label == "toy_boundary"
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        toy.select(U, epsilon=0.75, sensitivity=1.0, rng=rng, accountant=acc)
    assert rng.bit_generator.state == state and len(acc.history) == 1
    with pytest.raises(TypeError, match="unexpected option 'delta'"):     # its selector has no delta=
        toy.select(U, epsilon=0.1, sensitivity=1.0, k=2, delta=1e-6, accountant=acc)
    with pytest.raises(ValueError, match="epsilon"):
        toy.select(U, epsilon=0.0, sensitivity=1.0, accountant=acc)
    assert len(acc.history) == 1


# -- top-k under (ε, δ) -------------------------------------------------------------------------------------
def test_per_pick_epsilon_values():
    # δ = 0: ε/k (never above it); δ > 0: larger, and its k-fold adaptive composition is (ε, δ)-DP
    assert per_pick_epsilon("pure", k=10, epsilon=1.0) == 0.1 == per_pick_epsilon("bounded_range", k=10, epsilon=1.0)
    assert per_pick_epsilon("bounded_range", k=3, epsilon=1.0) * 3 <= 1.0
    br = per_pick_epsilon("bounded_range", k=10, epsilon=1.0, delta=1e-6)
    pure = per_pick_epsilon("pure", k=10, epsilon=1.0, delta=1e-6)
    assert br == pytest.approx(0.152547, rel=1e-5) and pure == pytest.approx(0.100063, rel=1e-5)
    assert per_pick_epsilon("bounded_range", k=100, epsilon=1.0, delta=1e-6) == pytest.approx(0.0465955, rel=1e-5)
    assert per_pick_epsilon("pure", k=100, epsilon=1.0, delta=1e-6) == pytest.approx(0.0240111, rel=1e-5)
    assert AdaptiveBoundedRangeComposition(br, 10).epsilon(1e-6) <= 1.0
    assert PureDPComposition(pure, 10).delta(1.0) <= 1e-6
    # the per-pick ε of the selectors is exactly that value (topk_budget: numerator, divisor)
    assert topk_budget(1.0, 10, 1e-6, bounded_range=True) == (br, 1)
    assert topk_budget(1.0, 10, 1e-6, bounded_range=False) == (pure, 1)
    assert topk_budget(1.0, 10, 0.0, bounded_range=True) == (1.0, 10)


@pytest.mark.parametrize("fn,name,sens,opts", SELECTORS, ids=IDS)
def test_delta_topk_is_the_peeling_law_with_the_per_pick_epsilon(fn, name, sens, opts):
    """δ > 0: the same peeling law with ε0 per pick, i.e. that of ``epsilon = k·ε0`` with δ = 0 (k a power of
    two, so that k·ε0 is exact): the same seeds give the same picks, exact and float samplers, size= too."""
    br = get_mechanism(name).bounded_range(**opts)
    for k in (2, 4):
        e0 = per_pick_epsilon("bounded_range" if br else "pure", k=k, epsilon=1.0, delta=1e-6)
        assert e0 > 1.0 / k and Fraction(e0) * k == Fraction(k * e0)
        for kw in ({}, {"exact": False}, {"size": 5}):
            for seed in range(25):
                a = _call(fn, sens, opts, epsilon=1.0, k=k, delta=1e-6, rng=seed, **kw)
                b = _call(fn, sens, opts, epsilon=k * e0, k=k, rng=seed, **kw)
                assert np.array_equal(a, b), (name, k, kw, seed)


def test_delta_topk_pair_law_is_exact(freq):
    """χ² of the first two picks against the exact peeling law with ε0 per pick (exponential mechanism)."""
    u = np.array([0.0, 1.0, 2.0, 0.5])
    e0 = per_pick_epsilon("bounded_range", k=2, epsilon=1.0, delta=1e-3)
    p1 = dpselect.exponential_probabilities(u, epsilon=e0, sensitivity=1.0)
    law = np.zeros(16)
    for i in range(4):
        rest = np.delete(np.arange(4), i)
        law[i * 4 + rest] = p1[i] * dpselect.exponential_probabilities(u[rest], epsilon=e0, sensitivity=1.0)
    picks = dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, k=2, delta=1e-3, size=4000, rng=17)
    freq(picks[:, 0] * 4 + picks[:, 1], law)


@pytest.mark.parametrize("fn,name,sens,opts", SELECTORS, ids=IDS)
def test_delta_topk_charges_the_composition_and_the_accountant_accepts_it(fn, name, sens, opts):
    br = get_mechanism(name).bounded_range(**opts)
    e0 = per_pick_epsilon("bounded_range" if br else "pure", k=3, epsilon=1.0, delta=1e-6)
    for mode in ("fixed", "batch"):
        acc = Accountant(epsilon=1.0, delta=1e-6, mode=mode)
        _call(fn, sens, opts, epsilon=1.0, k=3, delta=1e-6, rng=0, accountant=acc)
        g = acc.history[0].guarantee
        assert type(g) is (AdaptiveBoundedRangeComposition if br else PureDPComposition) and (g.epsilon0, g.k) == (e0, 3)
        assert g.delta(1.0) <= 1e-6 and acc.history[0].label == f"{name}(k=3, delta=1e-06)"
        assert g == get_mechanism(name).privacy(1.0, k=3, delta=1e-6, **opts)
        with pytest.raises(BudgetExceededError):            # the budget is (nearly) spent
            _call(fn, sens, opts, epsilon=0.5, rng=0, accountant=acc)


def test_delta_needs_more_than_one_pick():
    for kw in ({}, {"k": 1}):
        with pytest.raises(ValueError, match=r"delta must be 0 for one pick .* buys nothing"):
            dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, delta=1e-6, **kw)
        with pytest.raises(ValueError, match="delta must be 0 for one pick"):
            get_mechanism("PF").privacy(1.0, delta=1e-6, **kw)
    assert get_mechanism("PF").privacy(1.0, delta=0.0) == PureDP(1.0)


def test_selection_label():
    assert selection_label("exponential", None, None) == "exponential"
    assert selection_label("permute_and_flip", 3, None, 1e-6) == "permute_and_flip(k=3, delta=1e-06)"
