"""dpselect.accounting checked by independent methods (issue 24): the optimal bounded-range composition of
Dong, Durfee & Rogers recomputed in exact (mpmath) arithmetic, and the export of what an Accountant spent
handed to dp-accounting (run where dp-accounting is installed, skipped otherwise)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpselect.accounting import (RDP, ZCDP, Accountant, BoundedRange, BoundedRangeComposition, GaussianMechanism,
                                 PureDP)

mp = pytest.importorskip("mpmath")


# -- the optimal batch composition of k ε-BR releases, recomputed in 30-digit arithmetic ----------------
def _mp_delta_t(eps, k, eg, t):
    """δ(ε_g) of k independent copies of the two-output pair with log-ratios {(t − 1)ε, tε}: the explicit
    sum over the number i of high outputs (loss (i − k(1 − t))ε) of (P − e^{ε_g} Q)₊."""
    q1 = mp.expm1((1 - t) * eps) / mp.expm1(eps)
    p1 = mp.exp(t * eps) * q1
    e = mp.exp(eg)
    s = mp.mpf(0)
    for i in range(k + 1):
        if (i - k * (1 - t)) * eps > eg:
            s += mp.binomial(k, i) * (p1 ** i * (1 - p1) ** (k - i) - e * q1 ** i * (1 - q1) ** (k - i))
    return s


def _mp_optimum(eps, k, eg, iters=50):
    """sup over t of the above. Between two consecutive t where an outcome's loss crosses ε_g the set of
    counted outcomes is fixed and δ_t is smooth and unimodal; each piece is maximised by golden section."""
    with mp.workdps(30):
        eps, eg = mp.mpf(eps), mp.mpf(eg)
        cuts = sorted({mp.mpf(0), mp.mpf(1)}
                      | {eg / (k * eps) + mp.mpf(j) / k for j in range(-k, k + 1) if 0 < eg / (k * eps) + mp.mpf(j) / k < 1})
        g = (mp.sqrt(5) - 1) / 2
        best = mp.mpf(0)
        for a, b in zip(cuts[:-1], cuts[1:]):
            c, d = b - g * (b - a), a + g * (b - a)
            fc, fd = _mp_delta_t(eps, k, eg, c), _mp_delta_t(eps, k, eg, d)
            for _ in range(iters):
                if fc > fd:
                    b, d, fd = d, c, fc
                    c = b - g * (b - a)
                    fc = _mp_delta_t(eps, k, eg, c)
                else:
                    a, c, fc = c, d, fd
                    d = a + g * (b - a)
                    fd = _mp_delta_t(eps, k, eg, d)
            best = max(best, fc, fd)
        return float(best)


@pytest.mark.parametrize("eps,k", [(1.0, 2), (0.5, 5), (0.3, 12)])
def test_optimal_bounded_range_matches_exact_arithmetic(eps, k):
    for eg in (0.1 * k * eps, 0.4 * k * eps):
        exact = _mp_optimum(eps, k, eg)
        got = BoundedRangeComposition(eps, k).delta(eg)
        # certified (never below the optimum) and tight (the branch and bound stops at 1e-5 relative)
        assert exact <= got <= exact * (1 + 2e-5) + 1e-15


def test_optimal_bounded_range_epsilon_is_the_exact_root():
    eps, k, delta = 0.3, 12, 1e-3
    e = BoundedRangeComposition(eps, k).epsilon(delta)
    assert _mp_optimum(eps, k, e) <= delta                       # what is certified holds exactly
    assert _mp_optimum(eps, k, e * (1 - 1e-4)) > delta           # and is within 1e-4 of the exact root


# -- export: spent_zcdp, rdp_curve, privacy_curve --------------------------------------------------------
def _acc():
    acc = Accountant(epsilon=5.0, delta=1e-6, mode="fixed")
    for _ in range(30):
        acc.charge(BoundedRange(0.1))
    acc.charge(PureDP(0.2))
    acc.charge(GaussianMechanism(sigma=4.0))
    return acc


def test_export_values():
    acc = _acc()
    rho = 30 * 0.01 / 8 + 0.04 / 2 + 1 / 32
    assert acc.spent_zcdp().rho == pytest.approx(rho, rel=1e-14) and acc.spent_zcdp().rho >= rho
    curve = acc.rdp_curve()
    assert isinstance(curve, RDP)
    a = np.array(curve.orders)
    expected = (30 * np.array([BoundedRange(0.1).rdp(x) for x in a]) + np.array([PureDP(0.2).rdp(x) for x in a])
                + a / 32)
    assert np.all(np.array(curve.epsilons) >= expected) and np.allclose(curve.epsilons, expected, rtol=1e-12)
    # the curve's own ε is valid and never better than what the accountant reports (its best bound)
    assert acc.spent(1e-6).epsilon_ <= curve.epsilon(1e-6) <= ZCDP(rho).epsilon(1e-6) + 1e-12
    ds, es = acc.privacy_curve([1e-9, 1e-6, 1e-3])
    assert ds.tolist() == [1e-9, 1e-6, 1e-3]
    assert es.tolist() == [acc.spent(d).epsilon_ for d in ds] and es[0] > es[1] > es[2]
    assert Accountant(epsilon=1.0).spent_zcdp() == ZCDP(0.0)


def test_export_refuses_charges_with_their_own_delta():
    acc = Accountant(epsilon=5.0, delta=1e-3, mode="basic")
    from dpselect.accounting import ApproxDP
    acc.charge(ApproxDP(0.5, 1e-5))
    for f in (acc.spent_zcdp, acc.rdp_curve):
        with pytest.raises(ValueError, match="δ of its own"):
            f()
    ds, es = acc.privacy_curve([1e-6, 1e-4])
    assert not math.isfinite(es[0]) and es[1] <= 0.5         # no finite ε below the δ the charge spent


def test_export_to_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant, rdp_privacy_accountant
    acc = _acc()
    # 1. the zCDP ρ, as an event dp-accounting composes further
    ra = RdpAccountant()
    ra.compose(dpa.ZCDpEvent(acc.spent_zcdp().rho))
    assert ra.get_epsilon(1e-6) == pytest.approx(acc.spent_zcdp().epsilon(1e-6), rel=1e-3)
    ra.compose(dpa.GaussianDpEvent(noise_multiplier=4.0))          # ... and keeps composing there
    assert ra.get_epsilon(1e-6) > acc.spent_zcdp().epsilon(1e-6)
    # 2. the RDP curve as arrays, converted by dp-accounting's own conversion
    c = acc.rdp_curve()
    eps, _ = rdp_privacy_accountant.compute_epsilon(np.array(c.orders), np.array(c.epsilons), 1e-6)
    assert eps == pytest.approx(c.epsilon(1e-6), rel=1e-6)


# -- heterogeneous bounded-range releases: the exact worst-case Rényi curve -----------------------------
def _grr_rdp_grid(eps, alpha, n=20001):
    """D_α of the two-output pairs {(t − 1)ε, tε} on a fine grid of t (each one an ε-BR pair)."""
    t = np.linspace(0, 1, n)[1:-1]
    q1 = np.expm1((1 - t) * eps) / math.expm1(eps)
    return float(np.max(np.log(q1 * np.exp(alpha * t * eps) + (1 - q1) * np.exp(alpha * (t - 1) * eps)) / (alpha - 1)))


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.0])
def test_bounded_range_rdp_is_the_sup_over_pairs(eps):
    for alpha in (1.5, 2.0, 8.0, 64.0):
        grid = _grr_rdp_grid(eps, alpha)
        got = BoundedRange(eps).rdp(alpha)
        assert got >= grid                                           # certified: no ε-BR pair exceeds it
        assert got <= min(alpha * eps ** 2 / 8, grid * (1 + 2e-3)) * (1 + 1e-9)   # O(1/2048) of it; ≤ zCDP
    # strictly tighter than the zCDP bound where ε·α is not small (the gain of the exact curve)
    assert BoundedRange(0.5).rdp(8.0) < 0.86 * 8 * 0.25 / 8


def _hetero_brute(epss, eg, n_t):
    """max over a grid of (t_1, ..., t_k) of the product pair's δ(ε_g), each factor the two-output ε_i-BR
    pair at t_i, all 2^k outcomes enumerated (the batch optimum, from below)."""
    k = len(epss)
    ts = np.linspace(0, 1, n_t)
    P, Q = [], []
    for e in epss:
        q1 = np.expm1((1 - ts) * e) / math.expm1(e)
        P.append({1: np.exp(ts * e) * q1, 0: 1 - np.exp(ts * e) * q1})
        Q.append({1: q1, 0: 1 - q1})
    total = np.zeros((n_t,) * k)
    import itertools
    for bits in itertools.product([0, 1], repeat=k):
        a = np.ones((n_t,) * k)
        c = np.ones((n_t,) * k)
        for j, b in enumerate(bits):
            shape = [1] * k
            shape[j] = n_t
            a = a * P[j][b].reshape(shape)
            c = c * Q[j][b].reshape(shape)
        total += np.maximum(a - math.exp(eg) * c, 0.0)
    return float(total.max())


@pytest.mark.parametrize("epss", [(0.3, 1.0), (0.5, 1.0, 2.0), (0.2, 0.2, 0.9)])
def test_heterogeneous_bounded_range_composition_is_certified(epss):
    from dpselect.accounting import compose_rdp, compose_zcdp
    gs = [BoundedRange(e) for e in epss]
    rdp = compose_rdp(gs)
    for eg in (0.1, 0.3 * sum(epss), 0.6 * sum(epss)):
        brute = _hetero_brute(epss, eg, 121 if len(epss) == 2 else 41)
        assert rdp.delta(eg) >= brute                               # certified on every small case
        acc = Accountant(epsilon=10.0, delta=0.5, mode="fixed")
        for g in gs:
            acc.charge(g)
        assert acc.spent(0.4).epsilon_ <= rdp.epsilon(0.4) + 1e-12  # the fixed mode uses it (or better)
    # tighter than the zCDP route (Σ ε_i²/8) for a heterogeneous sequence of exponential mechanisms
    mix = [BoundedRange(e) for e in [0.5] * 10 + [0.2] * 20 + [1.0] * 3]
    z, r = compose_zcdp(mix).epsilon(1e-6), compose_rdp(mix).epsilon(1e-6)
    assert r < 0.95 * z
    acc = Accountant(epsilon=100.0, delta=1e-6, mode="fixed")
    for g in mix:
        acc.charge(g)
    assert acc.spent().epsilon_ <= r + 1e-12


# -- adaptive bounded-range composition of long sequences: the windowed recursion ------------------------
def test_windowed_recursion_bounds_the_full_one():
    from dpselect.accounting._adaptive_br import adaptive_br_curve, adaptive_br_curve_window
    for eps, k, m in [(0.1, 100, 40), (0.5, 50, 40)]:
        full = adaptive_br_curve(eps, k, m)[0]
        eg_max = ZCDP(k * eps * eps / 8).epsilon(1e-6)
        for slack in (1e-2, 1e-9):                 # a narrow window (zCDP bounds in play) and the default
            w = adaptive_br_curve_window(eps, k, m, eg_max, slack)[0]
            assert w.size * eps / m >= eg_max
            assert np.all(w >= full[: w.size])                            # still certified
            assert np.all(w <= full[: w.size] + slack * 1.01)            # loses at most the slack


def test_adaptive_bounded_range_beyond_400_releases():
    from dpselect.accounting import AdaptiveBoundedRangeComposition, compose_zcdp
    from dpselect.accounting._adaptive_br import adaptive_br_curve
    eps, k = 0.5, 1000
    ad = AdaptiveBoundedRangeComposition(eps, k, resolution=40).epsilon(1e-6)
    batch = BoundedRangeComposition(eps, k).epsilon(1e-6)
    lower_curve = adaptive_br_curve(eps, k, 8, upper=False)[0]          # a strategy: below the optimum
    lower = np.flatnonzero(lower_curve <= 1e-6)[0] * eps / 8
    assert batch <= ad and lower <= ad <= 1.04 * batch
    assert ad < 0.99 * compose_zcdp([BoundedRange(eps)] * k).epsilon(1e-6)
    assert AdaptiveBoundedRangeComposition(eps, k).resolution == 100      # the default used by spent()
    assert AdaptiveBoundedRangeComposition(eps, 6000).resolution == 0     # beyond 5000: no recursion
