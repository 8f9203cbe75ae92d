"""The joint exponential mechanism for top-k (dpselect.sampling.joint_top_k / joint_probabilities): its law
against brute-force enumeration, the exact DP audit over all neighbours of small count vectors (and the factor
2 of the general sensitivity), χ² of the exact sampler (plain, pruned, with the pruned part expanded, with the
decimal refinement forced), ties, k = 1, k = d, big d."""
import collections
import itertools
import math
import time

import numpy as np
import pytest
from scipy import stats

import dpselect
from dpselect.audit import exact_dp_audit
from dpselect.sampling import _joint, joint_probabilities, joint_top_k


def brute_law(u, k, lam):
    """P(s) ∝ exp(−λ max_i (c_(i) − u[s_i])) by enumeration (independent of the level table)."""
    c = sorted(u, reverse=True)
    seqs = list(itertools.permutations(range(len(u)), k))
    logw = [-lam * max(c[i] - u[s[i]] for i in range(k)) for s in seqs]
    m = max(logw)
    w = [math.exp(x - m) for x in logw]
    z = sum(w)
    return {s: x / z for s, x in zip(seqs, w)}


def law_vector(u, k, eps, mono=False):
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0, monotonic=mono)
    return np.array([p[s] for s in sorted(p)])


def chi2_pvalue(sampler, law, n, seed):
    g = np.random.default_rng(seed)
    cnt = collections.Counter(tuple(sampler(g).tolist()) for _ in range(n))
    keys = sorted(law)
    assert set(cnt) <= set(keys)
    obs = np.array([cnt[s] for s in keys])
    exp = np.array([law[s] * n for s in keys])
    return stats.chisquare(obs, exp).pvalue


# ---------------------------------------------------------------------------------------------
# the exact law
# ---------------------------------------------------------------------------------------------
def test_law_matches_brute_force():
    rng = np.random.default_rng(1)
    worst = 0.0
    for trial in range(150):
        d = int(rng.integers(1, 7))
        k = int(rng.integers(1, min(d, 3) + 1))
        u = rng.integers(0, 5, size=d).astype(float) if trial % 2 else rng.normal(size=d) * 3
        eps = float(rng.choice([0.1, 1.0, 5.0]))
        mono = trial % 3 == 0
        p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0, monotonic=mono)
        q = brute_law(list(u), k, eps / (2 * (1 if mono else 2)))
        assert set(p) == set(q)
        worst = max(worst, max(abs(p[s] - q[s]) for s in q))
    assert worst < 1e-12


def test_law_worked_example():
    # c = (3, 1, 0), k = 2, λ = ε/(2Δ) = 2 (monotonic): errors of (0,1): 0, (0,2): 1, (1,0) and (1,2): 2,
    # (2,0) and (2,1): 3 -> weights 1, e^-2, 2e^-4, 2e^-6
    p = joint_probabilities([3.0, 1.0, 0.0], k=2, epsilon=4.0, sensitivity=1.0, monotonic=True)
    z = 1 + math.exp(-2) + 2 * math.exp(-4) + 2 * math.exp(-6)
    assert p[(0, 1)] == pytest.approx(1 / z, rel=1e-14)
    assert p[(1, 2)] == pytest.approx(math.exp(-4) / z, rel=1e-14)
    assert p[(2, 1)] == pytest.approx(math.exp(-6) / z, rel=1e-14)


def test_ties_law():
    u = [2.0, 2.0, 1.0, 2.0, 0.0]
    for k in (1, 2, 3):
        p = joint_probabilities(u, k=k, epsilon=1.5, sensitivity=1.0)
        q = brute_law(u, k, 1.5 / 4)
        assert max(abs(p[s] - q[s]) for s in q) < 1e-13
        # the three tied maxima are exchangeable
        if k == 1:
            assert p[(0,)] == pytest.approx(p[(1,)], rel=1e-14) == pytest.approx(p[(3,)], rel=1e-14)


def test_k1_is_the_exponential_mechanism():
    u = np.array([4.0, 1.0, 2.5, -1.0, 4.0])
    pj = law_vector(u, 1, 2.0, mono=True)
    pe = dpselect.exponential_probabilities(u, epsilon=2.0, sensitivity=1.0)
    np.testing.assert_allclose(pj, pe, rtol=1e-13)
    # general neighbours: the score's sensitivity is 2Δ, so k = 1 is the exponential mechanism at ε/2
    pj = law_vector(u, 1, 2.0, mono=False)
    pe = dpselect.exponential_probabilities(u, epsilon=1.0, sensitivity=1.0)
    np.testing.assert_allclose(pj, pe, rtol=1e-13)


def test_k_equals_d():
    u = [1.0, 3.0, 2.0, 2.5]
    p = joint_probabilities(u, k=4, epsilon=2.0, sensitivity=1.0)
    q = brute_law(u, 4, 0.5)
    assert len(p) == 24 and max(abs(p[s] - q[s]) for s in q) < 1e-13
    assert chi2_pvalue(lambda g: joint_top_k(u, k=4, epsilon=2.0, sensitivity=1.0, rng=g), p, 3000, 3) > 1e-3


# ---------------------------------------------------------------------------------------------
# privacy: exact audit over all neighbours
# ---------------------------------------------------------------------------------------------
def _pairs(d, top, monotone):
    steps = [(0, 1)] if monotone else [(-1, 0, 1)]
    for x in itertools.product(range(top + 1), repeat=d):
        for s in itertools.product(*(steps * d)):
            if any(s):
                yield x, tuple(a + b for a, b in zip(x, s))


def _audit(d, k, top, eps, monotone, declared):
    def prob(x):
        return law_vector(np.array(x, dtype=float), k, eps, mono=declared)
    return exact_dp_audit(prob, _pairs(d, top, monotone), epsilon=eps)


def test_audit_general_neighbours():
    res = _audit(4, 2, 3, 1.0, monotone=False, declared=False)
    assert res.passed and res.worst_log_ratio == pytest.approx(0.6478, abs=1e-4)


def test_audit_monotone_neighbours():
    res = _audit(4, 2, 3, 1.0, monotone=True, declared=True)
    assert res.passed and res.worst_log_ratio == pytest.approx(0.6688, abs=1e-4)


def test_audit_factor_two_is_needed():
    # Δ' = Δ (what monotonic=True uses) on general neighbours: not ε-DP
    res = _audit(4, 2, 3, 1.0, monotone=False, declared=True)
    assert not res.passed and res.worst_log_ratio == pytest.approx(1.2915, abs=1e-4)


# ---------------------------------------------------------------------------------------------
# the exact sampler
# ---------------------------------------------------------------------------------------------
CASES = [([3.0, 1.0, 0.0, 2.0, 2.0], 2, 2.0), ([0.5, -1.2, 3.3, 0.7], 2, 3.0), ([5.0, 4.0, 4.0, 1.0, 0.0, 3.0], 3, 1.0)]


@pytest.mark.parametrize("u,k,eps", CASES)
def test_sampler_chi2(u, k, eps):
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0)
    pv = chi2_pvalue(lambda g: joint_top_k(u, k=k, epsilon=eps, sensitivity=1.0, rng=g), p, 3000, 11)
    assert pv > 1e-3


def test_sampler_unpruned_and_expanded_tail(monkeypatch):
    u, k, eps = CASES[2]
    lam = _joint._prepare(u, k, eps, 1.0, False)[2]
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0)
    # the plain path (every level in one race)
    pv = chi2_pvalue(lambda g: _joint._sample(np.array(u), k, lam, g, prune=False), p, 3000, 12)
    assert pv > 1e-3
    # a margin of −2 nats on spread utilities: E_cut = 3.6 below the largest level 9, the pruned part's bound
    # is loose: it is expanded on most draws, and then wins on most of them but not all
    monkeypatch.setattr(_joint, "_MARGIN", -2.0)
    u, k, eps = [9.0, 7.0, 3.0, 0.0, 5.0, 1.0], 2, 2.0
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0)
    exp0, won0 = _joint._STATS["tail_expanded"], _joint._STATS["tail_won"]
    pv = chi2_pvalue(lambda g: joint_top_k(u, k=k, epsilon=eps, sensitivity=1.0, rng=g), p, 3000, 13)
    assert pv > 1e-3
    expanded, won = _joint._STATS["tail_expanded"] - exp0, _joint._STATS["tail_won"] - won0
    assert expanded > 1000 and won > 500 and expanded - won > 100


@pytest.mark.parametrize("keep", [0, 10**9])
def test_sampler_segments(monkeypatch, keep):
    # segments of at most 4 events: the head and the pruned part race as aggregates, then within the winner
    # (kept, or rebuilt when it wins)
    monkeypatch.setattr(_joint, "_SEG_EVENTS", 1)
    monkeypatch.setattr(_joint, "_KEEP_EVENTS", keep)
    monkeypatch.setattr(_joint, "_MARGIN", -3.0)
    u, k, eps = CASES[0]
    lam = _joint._prepare(u, k, eps, 1.0, False)[2]
    T = _joint._Table(np.array(u), k, lam)
    assert len(_joint._Chain(T, T.p0, (0.0, 0.0), None).specs) >= 3
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0)
    won0 = _joint._STATS["tail_won"]
    pv = chi2_pvalue(lambda g: joint_top_k(u, k=k, epsilon=eps, sensitivity=1.0, rng=g), p, 1000, 15 + keep % 7)
    assert pv > 1e-3 and _joint._STATS["tail_won"] - won0 > 40
    if keep:
        pv = chi2_pvalue(lambda g: _joint._sample(np.array(u), k, lam, g, prune=False), p, 800, 16)
        assert pv > 1e-3


@pytest.mark.parametrize("case", [0, 1])
def test_sampler_decimal_refinement(monkeypatch, case):
    # float bounds widened to ±0.5: every race goes to the exact decimal stage
    orig = _joint._Segment._float_weights

    def wide(self):
        orig(self)
        self.err = self.err + 0.5

    monkeypatch.setattr(_joint._Segment, "_float_weights", wide)
    monkeypatch.setattr(_joint, "_MARGIN", 1.0)
    u, k, eps = CASES[case]      # integer utilities, then real ones (levels held as a float and its error)
    p = joint_probabilities(u, k=k, epsilon=eps, sensitivity=1.0)
    before = _joint._STATS["refined"]
    pv = chi2_pvalue(lambda g: joint_top_k(u, k=k, epsilon=eps, sensitivity=1.0, rng=g), p, 1200, 14 + case)
    assert pv > 1e-3 and _joint._STATS["refined"] - before > 400


def test_plan_cut_bounds(monkeypatch):
    # the bound on the pruned thresholds' weight holds, and is _MARGIN below the kept thresholds' weight
    monkeypatch.setattr(_joint, "_MARGIN", 5.0)
    rng = np.random.default_rng(4)
    n_cut = 0
    for trial in range(40):
        d = int(rng.integers(3, 40))
        k = int(rng.integers(1, min(d, 6) + 1))
        u = rng.integers(0, 30, size=d).astype(float) if trial % 2 else rng.normal(size=d) * 10
        eps = float(rng.choice([0.5, 2.0, 10.0]))
        mono = trial % 3 == 0
        uu, kk, lam = _joint._prepare(u, k, eps, 1.0, mono)
        T = _joint._Table(uu, kk, lam)
        cut, ub = _joint._plan_cut(T)
        if cut is None:
            continue
        n_cut += 1
        H = T.segment(T.p0, (0.0, 0.0), cut)
        tail = T.segment(H.final_state(), (cut, 0.0), None)
        lse = lambda a: float(np.logaddexp.reduce(a))      # noqa: E731
        assert lse(tail.a) <= ub
        assert lse(H.a) >= ub + 5.0
        # the head and the tail together are the whole law
        whole = T.segment(T.p0, (0.0, 0.0), None)
        assert np.logaddexp(lse(H.a), lse(tail.a)) == pytest.approx(lse(whole.a), rel=1e-12, abs=1e-12)
    assert n_cut >= 15


def test_sort_exact_is_lexicographic():
    # levels are ordered by the exact value s + e (s the rounded float, e its error): s first, then e
    rng = np.random.default_rng(5)
    for trial in range(500):
        n = int(rng.integers(0, 40))
        s = rng.integers(0, 5, size=n).astype(float)
        e = rng.integers(-2, 3, size=n) * 1e-17 * (trial % 2)
        assert np.array_equal(_joint._sort_exact(s, e), np.lexsort((e, s)))


def test_items_follow_the_stable_order():
    # a rank maps to the item the stable sort by decreasing utility puts there (ties by index, −0.0 == 0.0)
    rng = np.random.default_rng(6)
    for trial in range(300):
        d = int(rng.integers(1, 60))
        u = rng.normal(size=d) if trial % 3 == 0 else rng.integers(-3, 4, size=d).astype(float)
        if trial % 5 == 0:
            u[rng.integers(0, d)] = -0.0
        k = int(rng.integers(1, d + 1))
        T = _joint._Table(u, k, _joint.Fraction(1))
        order = np.argsort(-u, kind="stable")
        assert np.array_equal(T.top, u[order[:k]])
        ranks = rng.permutation(d)[:k]
        assert np.array_equal(T.items(ranks), order[ranks])


def test_fill_scan_and_numpy_agree(monkeypatch):
    # the r-th free rank: the Python scan (small k) and the numpy count (large k) give the same ranks
    rng = np.random.default_rng(8)
    for trial in range(150):
        d = int(rng.integers(5, 120))
        k = int(rng.integers(1, d + 1))
        u = rng.integers(0, 6, size=d).astype(float)
        T = _joint._Table(u, k, _joint.Fraction(1))
        qs = np.maximum(np.sort(rng.integers(0, T.vals.size, size=k)), T.p0)
        monkeypatch.setattr(_joint, "_SMALL_K", 10**9)
        a = _joint._fill(T, qs, np.random.default_rng(trial))
        monkeypatch.setattr(_joint, "_SMALL_K", 0)
        b = _joint._fill(T, qs, np.random.default_rng(trial))
        assert np.array_equal(a, b) and len(set(a.tolist())) == k


def test_seeded_output_and_high_epsilon():
    u = np.array([50.0, 1.0, 40.0, 0.0, 45.0])
    a = joint_top_k(u, k=3, epsilon=1.0, sensitivity=1.0, rng=7)
    b = joint_top_k(u, k=3, epsilon=1.0, sensitivity=1.0, rng=7)
    assert a.dtype == np.int64 and a.tolist() == b.tolist() and len(set(a.tolist())) == 3
    assert joint_top_k(u, k=3, epsilon=200.0, sensitivity=1.0, rng=1).tolist() == [0, 4, 2]


def test_big_d_smoke():
    rng = np.random.default_rng(0)
    d = 1_000_000
    counts = np.bincount(np.minimum(rng.zipf(1.1, size=5 * d), d) - 1, minlength=d).astype(float)
    t = time.perf_counter()
    out = joint_top_k(counts, k=10, epsilon=1.0, sensitivity=1.0, monotonic=True, rng=1)
    assert time.perf_counter() - t < 5.0
    assert out.shape == (10,) and len(set(out.tolist())) == 10
    true = np.argsort(-counts, kind="stable")[:10]
    assert len(set(out.tolist()) & set(true.tolist())) >= 8    # the top counts are far apart at this ε


# ---------------------------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------------------------
def test_bad_arguments():
    with pytest.raises(ValueError, match="k must"):
        joint_top_k([1.0, 2.0], k=3, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        joint_top_k([1.0, 2.0], k=1, epsilon=0.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        joint_top_k([1.0, 2.0], k=1, epsilon=1.0, sensitivity=-1.0)
    with pytest.raises(ValueError, match="finite"):
        joint_top_k([1.0, np.nan], k=1, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match="monotonic"):
        joint_top_k([1.0, 2.0], k=1, epsilon=1.0, sensitivity=1.0, monotonic=1)
    with pytest.raises(ValueError, match="public work cap"):
        joint_top_k(np.zeros(10**6), k=1001, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="number of sequences"):
        joint_probabilities(np.arange(20.0), k=6, epsilon=1.0, sensitivity=1.0)


def test_huge_range_is_halved_exactly():
    u = [1.5e308, -1.5e308, 0.0]
    p = joint_probabilities(u, k=2, epsilon=1e-306, sensitivity=1.0)
    assert sum(p.values()) == pytest.approx(1.0)
    out = joint_top_k(u, k=2, epsilon=1e-306, sensitivity=1.0, rng=0)
    assert sorted(out.tolist()) in ([0, 1], [0, 2], [1, 2])
