"""Issue 34 item 5: the default adaptive filter (δ > 0) is never worse than basic composition.

Rule: accept the next charge iff (A) the pure ε's of the accepted charges and it add up to at most ε, or
(B) their zCDP ρ's add up to at most ρ_B, the largest ρ whose CKS conversion is (ε, δ − approx_delta)-DP;
(ε_i, δ_i) charges' δ_i add against approx_delta in both cases. docs/accounting.md has the proof.
Mutations that fail here: drop (A) (three PureDP(1) refused), drop (B) (100 BR(0.1) refused).
"""
from __future__ import annotations

import math
import random
import threading
from fractions import Fraction

import pytest

from dpselect import BudgetExceededError
from dpselect.accounting import (Accountant, ApproxDP, BoundedRange, GaussianMechanism, PureDP, ZCDP)
from dpselect.accounting._numeric import zcdp_delta, zcdp_epsilon
from dpselect.accounting.accountant import _rho_budget


def _rho_b(eps: float, delta: float) -> float:
    """ρ_B, checked independently of the accountant: its CKS δ fits, a hair more does not."""
    rb = _rho_budget(eps, delta)
    assert zcdp_delta(rb, eps) <= delta < zcdp_delta(rb * (1 + 1e-6), eps)
    return rb


def test_three_pure_charges_fit_three_one_e_minus_six():
    acc = Accountant(epsilon=3.0, delta=1e-6)
    for _ in range(3):
        acc.charge(PureDP(1.0))                               # (A): 1 + 1 + 1 ≤ 3 (before: the second refused)
    rb = _rho_b(3.0, 1e-6)
    assert rb == pytest.approx(0.18507, abs=1e-5) and 3 * 0.5 > rb      # (B) alone would refuse the second
    assert not acc.can_afford(PureDP(1e-9))                   # (A): 3 + 1e-9 > 3, (B): ρ = 1.5 > ρ_B
    with pytest.raises(BudgetExceededError):
        acc.charge(PureDP(1e-9))
    assert acc.spent() == ApproxDP(3.0, 1e-6)                 # min(pure sum 3, zCDP reading of ρ = 1.5)
    assert acc.spent(0.0) == ApproxDP(3.0, 0.0)               # spent(0) is the pure sum
    assert zcdp_epsilon(1.5, 1e-6) > 3.0
    assert acc.remaining() == ZCDP(0.0)
    one = Accountant(epsilon=3.0, delta=1e-6)
    one.charge(PureDP(1.0))
    rem = one.remaining()                                     # ρ is spent, (A) still takes 2 (rounded down)
    assert type(rem) is PureDP and rem.epsilon_ == pytest.approx(2.0, rel=1e-9) and one.can_afford(rem)
    assert len(acc.history) == 3 and len(Accountant(3.0).history) == 0


def test_hundred_exponential_mechanisms_still_fit_and_read_two_point_four_two():
    acc = Accountant(epsilon=3.0, delta=1e-6)
    for _ in range(100):
        acc.charge(BoundedRange(0.1))                         # (B): ρ = 100 · 0.01/8 = 0.125 ≤ ρ_B
    sp = acc.spent().epsilon_
    assert sp <= 2.42 and sp == pytest.approx(2.41909, abs=1e-5)          # the zCDP reading, not 10
    assert acc.spent(0.0).epsilon_ == pytest.approx(10.0, rel=1e-12)
    n = 100
    while acc.can_afford(BoundedRange(0.1)):
        acc.charge(BoundedRange(0.1))
        n += 1
    assert n == math.floor(_rho_b(3.0, 1e-6) / (0.01 / 8)) == 148
    # the same budget with δ = 0 is basic composition: 30
    pure = Accountant(epsilon=3.0)
    assert sum(pure.can_afford(BoundedRange(0.1)) and bool(pure.charge(BoundedRange(0.1))) for _ in range(40)) == 30


def test_the_rules_mix_and_a_charge_without_pure_epsilon_goes_through_b_only():
    acc = Accountant(epsilon=3.0, delta=1e-6)
    acc.charge(PureDP(1.0))                                   # ρ = 0.5 > ρ_B: only (A) from here on
    assert sum(acc.can_afford(BoundedRange(0.1)) and bool(acc.charge(BoundedRange(0.1))) for _ in range(30)) == 20
    assert not acc.can_afford(ZCDP(1e-9)) and not acc.can_afford(GaussianMechanism(sigma=1e3))
    z = Accountant(epsilon=3.0, delta=1e-6)
    z.charge(ZCDP(0.1))                                       # Σε = ∞: (A) is closed for good
    assert not z.can_afford(PureDP(1.0))                      # (A) fails, ρ = 0.6 > ρ_B
    z.charge(PureDP(0.1))                                     # (B): ρ = 0.105
    assert z.spent().epsilon_ == pytest.approx(zcdp_epsilon(0.105, 1e-6), rel=1e-12)
    with pytest.raises(ValueError, match="no pure ε"):
        z.spent(0.0)


def test_approx_charges_draw_their_delta_on_approx_delta_in_both_rules():
    acc = Accountant(epsilon=3.0, delta=1e-6, approx_delta=5e-7)
    assert acc._rho_budget == _rho_b(3.0, 5e-7)               # (B) converts at δ − approx_delta
    acc.charge(ApproxDP(1.0, 4e-7))                           # (A): Σε = 1; δ 4e-7 ≤ 5e-7
    assert not acc.can_afford(ApproxDP(0.1, 2e-7))            # Σδ_i = 6e-7 > approx_delta, whichever rule
    acc.charge(ApproxDP(1.0, 1e-7))                           # (A): Σε = 2 (ρ = 1 > ρ_B)
    acc.charge(PureDP(1.0))                                   # (A): Σε = 3
    assert not acc.can_afford(PureDP(1e-9))
    assert acc.spent() == ApproxDP(3.0, 1e-6)                 # (Σε, Σδ_i) = (3, 5e-7) ⊆ (3, 1e-6)
    assert acc.spent(5e-7) == ApproxDP(3.0, 5e-7)
    with pytest.raises(BudgetExceededError, match="approx_delta=0.0"):
        Accountant(epsilon=3.0, delta=1e-6).charge(ApproxDP(1.0, 1e-7))


def _random_charge(rnd: random.Random):
    kind = rnd.choice(["pure", "br", "br", "zcdp", "gauss"])
    if kind == "pure":
        return PureDP(rnd.choice([0.05, 0.1, 0.3, 0.5, 1.0]))
    if kind == "br":
        return BoundedRange(rnd.choice([0.05, 0.1, 0.2, 0.7]))
    if kind == "zcdp":
        return ZCDP(rnd.choice([0.001, 0.01, 0.05]))
    return GaussianMechanism(sigma=rnd.choice([3.0, 10.0]))


def _pure_eps(g) -> Fraction | None:
    return Fraction(g.epsilon_) if isinstance(g, (PureDP, BoundedRange)) else None


def test_generator_every_decision_is_the_or_rule_and_basic_composition_is_a_floor():
    """300 seeded random streams of pure / BR / zCDP / Gaussian charges on four budgets: each accepted
    charge leaves the accepted set satisfying (A) or (B); each refused one would break both (so whatever
    basic composition (A) accepts on top of the accepted set is accepted); spent() reads the smaller of
    the two, within ε. Tolerances: 1e-9 relative around the limits (the accountant's own slack is 1e-12)."""
    rnd = random.Random(34)
    seen = {"A only": 0, "B only": 0, "both": 0, "refused": 0}
    for trial in range(300):
        eps, delta = rnd.choice([(1.0, 1e-6), (3.0, 1e-6), (2.0, 1e-4), (0.5, 1e-9)])
        rb = _rho_b(eps, delta)
        acc = Accountant(epsilon=eps, delta=delta)
        sum_e, sum_r, pure_ok = Fraction(0), 0.0, True
        for _ in range(rnd.randint(1, 40)):
            g = _random_charge(rnd)
            e_g = _pure_eps(g)
            cand_pure = pure_ok and e_g is not None
            cand_e = sum_e + e_g if cand_pure else None
            cand_r = sum_r + g.zcdp()
            a_hi = cand_pure and cand_e <= Fraction(eps) * (1 + Fraction(1, 10 ** 9))
            a_lo = cand_pure and cand_e <= Fraction(eps) * (1 - Fraction(1, 10 ** 9))
            b_hi, b_lo = cand_r <= rb * (1 + 1e-9), cand_r <= rb * (1 - 1e-9)
            ok = acc.can_afford(g)
            try:
                acc.charge(g)
                charged = True
            except BudgetExceededError:
                charged = False
            assert ok == charged, (trial, g)
            if charged:
                assert a_hi or b_hi, (trial, g, acc.history)
                seen["both" if (a_hi and b_hi) else "A only" if a_hi else "B only"] += 1
                sum_e, sum_r, pure_ok = (cand_e if cand_pure else sum_e), cand_r, cand_pure
            else:
                assert not a_lo and not b_lo, (trial, g, acc.history)   # basic composition would refuse too
                seen["refused"] += 1
        if acc.history:
            sp = acc.spent().epsilon_
            z = zcdp_epsilon(sum_r, delta)
            assert sp <= eps * (1 + 1e-9)
            assert sp == pytest.approx(min(float(sum_e), z) if pure_ok else z, rel=1e-9)
    assert min(seen.values()) >= 20, seen          # every branch is exercised


def test_generator_streams_basic_composition_accepts_are_accepted_whole():
    """Streams of pure / BR charges whose total fits ε: basic composition takes them all, so must the filter
    (before issue 34, (3, 1e-6) took one PureDP(1))."""
    rnd = random.Random(5)
    for _ in range(200):
        eps, delta = rnd.choice([(1.0, 1e-6), (3.0, 1e-6), (2.0, 1e-4), (10.0, 1e-10)])
        n = rnd.randint(1, 12)
        w = [rnd.random() for _ in range(n)]
        charges = [rnd.choice([PureDP, BoundedRange])(eps * x / sum(w) * (1 - 1e-12)) for x in w]
        acc = Accountant(epsilon=eps, delta=delta)
        for g in charges:
            acc.charge(g)
        assert len(acc.history) == n
        assert acc.spent().epsilon_ <= eps and acc.spent(0.0).epsilon_ <= eps


def test_sixteen_threads_take_exactly_what_the_or_rule_allows():
    acc = Accountant(epsilon=3.0, delta=1e-6)
    acc.charge(PureDP(0.5))                                   # ρ = 0.125 + BR's: B closes at (0.185-0.125)/0.00125
    taken: list[int] = []

    def worker() -> None:
        n = 0
        for _ in range(10):
            try:
                acc.charge(BoundedRange(0.1))
                n += 1
            except BudgetExceededError:
                pass
        taken.append(n)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expect = max(25, math.floor((_rho_b(3.0, 1e-6) - 0.125) / (0.01 / 8)))   # (A): 0.5 + 25 · 0.1 = 3
    assert sum(taken) == len(acc.history) - 1 == expect == 48
