"""dpselect.top_k (issue 37): every method's exact law on small inputs, its exact DP audit against the guarantee
it declares (TOPK_METHODS), χ² of its sampler against that law, the same stream as the selectors for peeling,
one-shot Gumbel = peeling in law, the free gaps' law, the auto rule, refusals before any charge, and the charges.
"""
from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect import topk as T
from dpselect._contract import chi2_pvalue, global_pairs, grid_utilities
from dpselect.accounting import AdaptiveBoundedRangeComposition, ApproxDP, PureDP, PureDPComposition
from dpselect.accounting.composition import per_pick_epsilon
from dpselect.audit import exact_dp_audit

EPS = 1.0

# (method, noise) of every variant TOPK_METHODS offers: a method registered there is audited and χ²-tested here
VARIANTS = [(name, noise) for name, spec in T.TOPK_METHODS.items() for noise in (spec.noises or (None,))]


def _claim(g):
    """The audit's claim for a guarantee value: a k-fold composition at δ = 0 certifies ε = g.epsilon(0)."""
    if isinstance(g, (AdaptiveBoundedRangeComposition, PureDPComposition)):
        return PureDP(g.epsilon(0.0))
    return g


def _law(method, noise, monotonic=False, scale=1.0, k=2, delta=0.0, eps=EPS):
    def fn(key):
        u = grid_utilities(key)
        return T.top_k_probabilities(u, k=k, epsilon=eps, sensitivity=scale, method=method, noise=noise,
                                     monotonic=monotonic, delta=delta)[1]
    return fn


# -- exact laws -------------------------------------------------------------------------------------------
def test_peeling_law_is_the_product_of_the_picks():
    u = np.array([0.0, 1.0, 0.5])
    seqs, p = T.top_k_probabilities(u, k=2, epsilon=1.0, sensitivity=1.0)
    w = np.exp(u / 4)          # ε/k = 0.5 per pick, exponent ε0·u/(2Δ)
    i = seqs.tolist().index([1, 2])
    assert p[i] == pytest.approx(w[1] / w.sum() * w[2] / (w[0] + w[2]), rel=1e-13)
    assert p.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("k", [1, 2])
def test_one_shot_gumbel_law_is_the_peeling_law(k):
    # the order statistics of u + Gumbel noise, integrated numerically, equal the Plackett-Luce product of
    # exponential-mechanism picks (Durfee & Rogers 2019): one-shot Gumbel and peeling are one law
    u = np.array([0.0, 2.0, 0.5, -1.0])
    seqs, p = T.top_k_probabilities(u, k=k, epsilon=1.0, sensitivity=1.0, method="peeling")
    a = u * (1.0 / (2 * k))
    q = T._one_shot_law(a, seqs, "gumbel")
    assert np.max(np.abs(q - p)) < 1e-12
    # and that is not an accident of the quadrature: Laplace noise gives another law
    assert np.max(np.abs(T._one_shot_law(a, seqs, "laplace") / T._one_shot_law(a, seqs, "laplace").sum() - p)) > 1e-3


def test_one_shot_laplace_law_k1_is_report_noisy_max():
    u = np.array([0.0, 1.0, 0.5])
    _, p = T.top_k_probabilities(u, k=1, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace")
    q = dpselect.report_noisy_max_probabilities(u, epsilon=1.0, sensitivity=1.0, noise="laplace")
    assert np.max(np.abs(p - q)) < 1e-12


def _joint_brute(u, k, eps, sens, monotonic):
    """The joint EM's law by its definition (Gillenwater et al. 2022): P(s) ∝ exp(−ε·max_i(u_(i) − u_{s_i})/(2Δ')),
    Δ' = Δ when every utility moves one way (monotonic), 2Δ otherwise (the gap of two utilities moves by 2Δ)."""
    seqs = T._sequences(u.size, k)
    top = np.sort(u)[::-1][:k]
    err = np.max(top[None, :] - u[seqs], axis=1)
    dj = sens * (1 if monotonic else 2)
    lw = -eps * err / (2 * dj)
    p = np.exp(lw - lw.max())
    return seqs, p / p.sum()


@pytest.mark.parametrize("monotonic", [False, True])
def test_joint_law_matches_its_definition(monotonic):
    u = np.array([3.0, 1.0, 2.5, 0.0])
    seqs, p = T.top_k_probabilities(u, k=2, epsilon=2.0, sensitivity=1.0, method="joint", monotonic=monotonic)
    s2, q = _joint_brute(u, 2, 2.0, 1.0, monotonic)
    assert np.array_equal(seqs, s2)
    assert np.max(np.abs(p - q)) < 1e-12


# -- exact audits against the declared guarantee --------------------------------------------------------
@pytest.mark.parametrize("method,noise", VARIANTS)
@pytest.mark.parametrize("monotonic", [False, True])
def test_exact_audit_of_each_method(method, noise, monotonic):
    spec = dpselect.topk.TOPK_METHODS[method]
    claim = _claim(spec.privacy(EPS, k=2, noise=noise))
    res = exact_dp_audit(_law(method, noise, monotonic), global_pairs(monotonic), claim=claim)
    assert res.passed, (method, noise, res)


@pytest.mark.parametrize("method,noise", [("peeling", "gumbel"), ("peeling", "laplace"), ("one_shot", "gumbel")])
def test_exact_audit_under_an_eps_delta_budget(method, noise):
    # δ > 0: the per-pick ε0 > ε/k; the hockey-stick divergence at ε stays <= δ on every pair
    eps, delta = 0.5, 0.05
    spec = dpselect.topk.TOPK_METHODS[method]
    g = spec.privacy(eps, k=2, delta=delta, noise=noise)
    assert g.epsilon0 > eps / 2
    res = exact_dp_audit(_law(method, noise, delta=delta, eps=eps), global_pairs(False), claim=ApproxDP(eps, delta))
    assert res.passed, res


@pytest.mark.parametrize("method,noise,scale", [("one_shot", "laplace", 0.3), ("peeling", "gumbel", 0.5)]
                         + [("joint", None, 0.4)])
def test_audit_catches_less_noise(method, noise, scale):
    # mutation: the law at a smaller sensitivity (less noise) fails the audit of the declared ε. (One-shot
    # Laplace at 2kΔ/ε is far from tight on these 3 candidates -- worst log-ratio 0.45 at ε = 1 -- so half the
    # noise still passes there (0.95); 0.3 of it gives 1.63. Joint: 0.47 at ε = 1, 0.95 at half, 1.19 at 0.4.)
    claim = _claim(dpselect.topk.TOPK_METHODS[method].privacy(EPS, k=2, noise=noise))
    res = exact_dp_audit(_law(method, noise, scale=scale), global_pairs(False), claim=claim)
    assert not res.passed


# -- the samplers against the laws (χ²) -----------------------------------------------------------------
@pytest.mark.parametrize("method,noise", VARIANTS)
def test_chi2_of_each_method(method, noise):
    x0 = (1, (0.0, 0.0, 0.0))
    u = grid_utilities(x0)
    seqs, p = T.top_k_probabilities(u, k=2, epsilon=EPS, sensitivity=1.0, method=method, noise=noise)
    gen = np.random.default_rng(zlib.crc32(f"{method}{noise}".encode()))
    draws = [dpselect.top_k(u, k=2, epsilon=EPS, sensitivity=1.0, method=method, noise=noise, rng=gen)
             for _ in range(2000)]
    pos = {tuple(s): i for i, s in enumerate(seqs.tolist())}
    assert chi2_pvalue([pos[tuple(d.tolist())] for d in draws], p) > 1e-6


# -- the same stream as the selectors -------------------------------------------------------------------
@pytest.mark.parametrize("n", [7, 400])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_peeling_is_the_selectors_draw_for_draw(n, delta):
    u = np.random.default_rng(1).normal(size=n) * 3
    kw = dict(epsilon=2.0, sensitivity=1.0, k=5, delta=delta)
    pairs = [("gumbel", dpselect.exponential), ("exponential", dpselect.permute_and_flip),
             ("laplace", lambda v, **a: dpselect.report_noisy_max(v, noise="laplace", **a))]
    for noise, sel in pairs:
        for seed in range(3):
            got = dpselect.top_k(u, method="peeling", noise=noise, rng=seed, **kw)
            assert got.tolist() == sel(u, rng=seed, **kw).tolist(), (noise, seed)
    # one-shot Gumbel: the same words too (one Gumbel pass is how the exponential mechanism's top-k is drawn)
    for seed in range(3):
        assert dpselect.top_k(u, method="one_shot", rng=seed, **kw).tolist() == \
            dpselect.exponential(u, rng=seed, **kw).tolist()


# -- gaps -----------------------------------------------------------------------------------------------
def _diff_sf(z):
    """P(N0 − N1 > z) for i.i.d. unit Laplace N0, N1: (2 + z)e^{-z}/4 for z >= 0."""
    z = np.asarray(z, dtype=float)
    az = np.minimum(np.abs(z), 1e3)
    pos = (2 + az) * np.exp(-az) / 4
    return np.where(z >= 0, pos, 1 - pos)


def _gap_law(u, eps, sens, edges, mult=2):
    """P(index, gap in [edges[j], edges[j+1])) of one-shot Laplace with k = 1 on two candidates (gap in
    utility units; noise scale b = mult·Δ/ε), as a vector [index 0 bins..., index 1 bins...]."""
    b = mult * sens / eps
    d = (u[0] - u[1]) / b
    e = np.asarray(edges) / b
    p0 = _diff_sf(e[:-1] - d) - _diff_sf(e[1:] - d)             # X0 − X1 in [e_j, e_{j+1})
    p1 = _diff_sf(-e[1:] - d) - _diff_sf(-e[:-1] - d)          # X1 − X0 in [e_j, e_{j+1})
    return np.concatenate((p0, p1))


EDGES = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, np.inf])


def test_gaps_law_and_grid():
    u = np.array([1.0, 0.0, -0.5])[:2]
    gen = np.random.default_rng(7)
    h = 2.0 ** T._gap_grid(EPS, 1.0, 1, False)
    assert h == 2.0 ** -19 and h <= 2.0 / 2 ** 20      # b = 2: 2^(1 − 20)
    idx, gap = [], []
    for _ in range(3000):
        r = dpselect.top_k(u, k=1, epsilon=EPS, sensitivity=1.0, gaps=True, rng=gen)
        assert r.grid == h and r.method == "one_shot" and r.indices.shape == (1,)
        idx.append(int(r.indices[0]))
        gap.append(float(r.gaps[0]))
    gap_a = np.array(gap)
    assert np.all(gap_a >= 0) and np.all(gap_a / h == np.floor(gap_a / h))     # on the grid, exactly
    cells = np.array(idx) * (EDGES.size - 1) + np.searchsorted(EDGES, gap_a, side="right") - 1
    assert chi2_pvalue(cells, _gap_law(u, EPS, 1.0, EDGES)) > 1e-6


def test_gaps_indices_have_the_one_shot_laplace_law():
    # k = 2 of 3: the released indices of gaps=True are one-shot Laplace's (their own refinement, same law)
    u = np.array([0.0, 1.0, 0.5])
    seqs, p = T.top_k_probabilities(u, k=2, epsilon=EPS, sensitivity=1.0, method="one_shot", noise="laplace")
    gen = np.random.default_rng(11)
    pos = {tuple(s): i for i, s in enumerate(seqs.tolist())}
    draws = [pos[tuple(dpselect.top_k(u, k=2, epsilon=EPS, sensitivity=1.0, gaps=True, rng=gen).indices.tolist())]
             for _ in range(1500)]
    assert chi2_pvalue(draws, p) > 1e-6


def test_gaps_indices_are_one_shot_laplaces_draw():
    # the gaps path reads the same first words (one draw of n) through the sampler's stage-1 shortlist: with no
    # near-tie to refine, the same indices as one-shot Laplace for a seed (a shortlist that dropped a candidate
    # of the k + 1 largest would differ)
    u = np.random.default_rng(3).normal(size=3000) * 20
    for seed in range(10):
        a = dpselect.top_k(u, k=8, epsilon=1.0, sensitivity=1.0, gaps=True, rng=seed)
        b = dpselect.top_k(u, k=8, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace", rng=seed)
        assert a.indices.tolist() == b.tolist()


def test_gaps_are_exact_floors_of_the_noisy_gap():
    # huge ε: the noise is tiny next to the utility gaps, so the gaps are the utility gaps floored on the grid
    u = np.array([10.0, 4.0, 7.0, 0.0])
    r = dpselect.top_k(u, k=2, epsilon=1e9, sensitivity=1.0, gaps=True, rng=3)
    assert r.indices.tolist() == [0, 2]
    assert np.allclose(r.gaps, [3.0, 3.0], atol=2 * r.grid) and np.all(r.gaps / r.grid % 1 == 0)


def test_gaps_audit_and_its_mutation():
    # the released (index, gap bin) of one-shot Laplace, k = 1, n = 2: ε-DP on every pair whose utilities move by
    # <= 1; with half the noise (Lap(kΔ/ε) without monotonicity) it is not
    pairs = [(0, d) for d in range(1, 9)]
    shifts = [(0.0, 0.0)] + [(a, b) for a in (-1.0, 0.0, 1.0) for b in (-1.0, 0.0, 1.0) if (a, b) != (0.0, 0.0)]
    base = np.array([0.0, 0.7])

    def law(mult):
        return lambda key: _gap_law(base + np.array(shifts[key]), EPS, 1.0, EDGES, mult)
    assert exact_dp_audit(law(2), pairs, claim=PureDP(EPS)).passed
    assert not exact_dp_audit(law(1), pairs, claim=PureDP(EPS)).passed


def _lap_cdf(z):
    z = np.asarray(z, dtype=float)
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _gap2_law(u, eps, sens, edges, mult):
    """P(i1, i2, gap1 bin, gap2 bin) of one-shot Laplace with k = 2 on three candidates (scale b = mult·Δ/ε),
    by quadrature over X_{i2}: ∫ f(z − a_{i2}) P(X_{i1} − z ∈ B1) P(z − X_{i3} ∈ B2) dz (sequences in
    lexicographic order, then bins row-major)."""
    b = mult * sens / eps
    a, e = u / b, np.asarray(edges) / b
    x, w = np.polynomial.legendre.leggauss(40)
    cuts = np.linspace(a.min() - 40, a.max() + 40, 321)
    z = ((cuts[1:] - cuts[:-1])[:, None] * (x[None, :] + 1) / 2 + cuts[:-1, None]).ravel()
    dz = np.repeat((cuts[1:] - cuts[:-1]) / 2, x.size) * np.tile(w, cuts.size - 1)
    out = []
    for i, j, m in T._sequences(3, 3):
        f = 0.5 * np.exp(-np.abs(z - a[j])) * dz
        p1 = _lap_cdf(z[None, :] + e[1:, None] - a[i]) - _lap_cdf(z[None, :] + e[:-1, None] - a[i])
        p2 = _lap_cdf(z[None, :] - e[:-1, None] - a[m]) - _lap_cdf(z[None, :] - e[1:, None] - a[m])
        out.append(np.einsum("pz,qz,z->pq", p1, p2, f).ravel())
    p = np.concatenate(out)
    return p / p.sum()


EDGES2 = np.array([0.0, 1.0, 2.0, 4.0, 8.0, 16.0, np.inf])


def test_gaps_k2_audit_and_law():
    # k = 2 of 3 candidates: both gaps. Exact audit of (i1, i2, binned gaps) at ε on the contract's pairs (worst
    # 0.50 at 2kΔ/ε); a quarter of the noise fails. And the sampler's draws against that law (χ²).
    def law(mult):
        return lambda key: _gap2_law(grid_utilities(key), EPS, 1.0, EDGES2 * mult / 4, mult)
    assert exact_dp_audit(law(4), global_pairs(False), claim=PureDP(EPS)).passed
    assert not exact_dp_audit(law(1), global_pairs(False), claim=PureDP(EPS)).passed
    u = np.array([0.0, 1.0, 0.5])
    gen = np.random.default_rng(21)
    nb = EDGES2.size - 1
    seqs = T._sequences(3, 2).tolist()
    cells = []
    for _ in range(1500):
        r = dpselect.top_k(u, k=2, epsilon=EPS, sensitivity=1.0, gaps=True, rng=gen)
        b1, b2 = (np.searchsorted(EDGES2, r.gaps, side="right") - 1).tolist()
        cells.append(seqs.index(r.indices.tolist()) * nb * nb + b1 * nb + b2)
    assert chi2_pvalue(cells, _gap2_law(u, EPS, 1.0, EDGES2, 4)) > 1e-6


# -- the auto rule --------------------------------------------------------------------------------------
def test_auto_rule():
    assert T._auto_method(99, 10 ** 6, 1.0, 0.0, False) == "peeling"
    assert T._auto_method(100, 10 ** 6, 1.0, 0.0, False) == "joint"
    assert T._auto_method(100, 10 ** 6, 1.0, 1e-6, False) == "peeling"
    assert T._auto_method(3, 10, 1.0, 0.0, True) == "one_shot"
    acc = dpselect.Accountant(epsilon=10.0)
    u = np.arange(20.0)
    out = dpselect.top_k(u, k=5, epsilon=1.0, sensitivity=1.0, rng=4, accountant=acc)
    assert out.tolist() == dpselect.exponential(u, k=5, epsilon=1.0, sensitivity=1.0, rng=4).tolist()
    assert acc.history[0].label == "top_k(method='peeling', k=5)"
    r = dpselect.top_k(u, k=5, epsilon=1.0, sensitivity=1.0, gaps=True, rng=4, accountant=acc)
    assert isinstance(r, T.TopKGaps) and acc.history[1].guarantee == PureDP(1.0)


def test_auto_runs_joint_from_k_100():
    acc = dpselect.Accountant(epsilon=10.0)
    u = np.arange(300.0)
    dpselect.top_k(u, k=100, epsilon=1.0, sensitivity=1.0, rng=4, accountant=acc)
    assert acc.history[0].label == "top_k(method='joint', k=100)" and acc.history[0].guarantee == PureDP(1.0)


# -- refusals before any charge or draw; the charges ------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    (dict(method="joint", delta=1e-6), "delta must be 0 for method='joint'"),
    (dict(method="one_shot", noise="laplace", delta=1e-6), "delta must be 0"),
    (dict(method="one_shot", noise="exponential"), "no one-shot top-k result"),
    (dict(method="joint", noise="gumbel"), "takes no noise"),
    (dict(method="peeling", gaps=True), "gaps=True needs method='one_shot'"),
    (dict(method="one_shot", noise="gumbel", gaps=True), "gaps=True needs noise='laplace'"),
    (dict(gaps=True, k=4), "gaps=True needs k <"),
    (dict(method="fast"), "method must be one of"),
    (dict(delta=1e-6, gaps=True), "delta must be 0"),
    (dict(k=1, delta=1e-6), "delta must be 0 for one pick"),
])
def test_refusals_before_the_charge(kwargs, match):
    acc = dpselect.Accountant(epsilon=10.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    args = dict(k=2, epsilon=1.0, sensitivity=1.0, rng=gen, accountant=acc)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dpselect.top_k([1.0, 2.0, 3.0, 4.0], **args)
    assert len(acc.history) == 0 and gen.bit_generator.state == state


@pytest.mark.parametrize("method,noise,delta,expected", [
    ("peeling", None, 0.0, lambda e, k: dpselect.get_mechanism("EM").privacy(e, k=k)),
    ("peeling", "exponential", 0.0, lambda e, k: dpselect.get_mechanism("PF").privacy(e, k=k)),
    ("peeling", "laplace", 1e-6, lambda e, k: dpselect.get_mechanism("RNM").privacy(e, k=k, delta=1e-6)),
    ("one_shot", None, 1e-6, lambda e, k: AdaptiveBoundedRangeComposition(
        per_pick_epsilon("bounded_range", k=k, epsilon=e, delta=1e-6), k)),
    ("one_shot", "laplace", 0.0, lambda e, k: PureDP(e)),
    ("joint", None, 0.0, lambda e, k: PureDP(e)),
])
def test_the_charge_is_the_methods_guarantee(method, noise, delta, expected):
    acc = dpselect.Accountant(epsilon=10.0, delta=1e-3, mode="fixed")
    dpselect.top_k(np.arange(12.0), k=4, epsilon=1.5, sensitivity=1.0, method=method, noise=noise, delta=delta,
                   rng=0, accountant=acc)
    g = acc.history[0].guarantee
    assert g == expected(1.5, 4)
    assert acc.history[0].event.mechanism == "top_k" and dict(acc.history[0].event.options)["method"] == method


def test_joint_work_cap_is_refused_before_the_charge(monkeypatch):
    from dpselect.sampling import _joint
    monkeypatch.setattr(T, "_JOINT_WORK_CAP", 20)
    monkeypatch.setattr(_joint, "_WORK_CAP", 20)
    acc = dpselect.Accountant(epsilon=10.0)
    with pytest.raises(ValueError, match="public work cap"):
        dpselect.top_k(np.arange(11.0), k=2, epsilon=1.0, sensitivity=1.0, method="joint", rng=0, accountant=acc)
    assert len(acc.history) == 0
    dpselect.top_k(np.arange(10.0), k=2, epsilon=1.0, sensitivity=1.0, method="joint", rng=0, accountant=acc)


def test_budget_refusal_draws_nothing():
    acc = dpselect.Accountant(epsilon=0.5)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(dpselect.BudgetExceededError):
        dpselect.top_k(np.arange(5.0), k=2, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace", rng=gen,
                       accountant=acc)
    assert gen.bit_generator.state == state and len(acc.history) == 0


def test_one_candidate_and_k_equals_n():
    assert dpselect.top_k([3.0], k=1, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace",
                          rng=0).tolist() == [0]
    out = dpselect.top_k([3.0, 1.0, 2.0], k=3, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace", rng=0)
    assert sorted(out.tolist()) == [0, 1, 2]


def test_grid_from_public_inputs_only():
    # h = 2^(⌊log2 b⌋ − 20), b = mult·Δ/ε, for extreme ε and Δ too (no overflow)
    for eps, sens, k, mono in [(1.0, 1.0, 1, False), (0.3, 5.0, 7, False), (1e300, 1e-300, 3, True),
                               (1e-300, 1e300, 2, False)]:
        e = T._gap_grid(eps, sens, k, mono)
        b = Fraction((k if mono else 2 * k)) * Fraction(sens) / Fraction(eps)
        assert b / 2 ** 21 < Fraction(2) ** e <= b / 2 ** 20


# -- applications: PrivTopk and DP-MOTkIN-Agg take topk_method= -------------------------------------------
def _graph():
    from dpselect.graphs import from_edges
    src = [0, 0, 0, 0, 1, 1, 2, 4, 4, 5, 6, 7, 7, 8]
    dst = [1, 2, 3, 5, 2, 3, 3, 5, 6, 6, 8, 8, 9, 9]
    return from_edges(src, dst, n_nodes=12)


@pytest.mark.parametrize("method", ["joint", "one_shot"])
def test_priv_topk_topk_method(method):
    from dpselect.graphs import prepare_priv_topk, priv_topk
    g = _graph()
    s = prepare_priv_topk(g, max_degree=4)
    acc = dpselect.Accountant(epsilon=10.0, neighbours="edge_add_remove")
    out = priv_topk(s, k=3, epsilon=2.0, mechanism="exponential", topk_method=method, rng=5, accountant=acc)
    ref = dpselect.top_k(s.utilities, k=3, epsilon=2.0, sensitivity=s.global_sensitivity, method=method, rng=5)
    assert out.tolist() == ref.tolist()
    g0 = dpselect.topk.TOPK_METHODS[method].privacy(2.0, k=3)
    assert acc.history[0].label == "priv_topk" and acc.history[0].guarantee == g0
    if method == "one_shot":   # one-shot Gumbel is the thesis' peeling, draw for draw
        assert out.tolist() == priv_topk(s, k=3, epsilon=2.0, mechanism="exponential", rng=5).tolist()
    assert isinstance(priv_topk(s, epsilon=2.0, mechanism="EM", topk_method=method, rng=5), int)


@pytest.mark.parametrize("method", ["joint", "one_shot"])
def test_dp_motkin_agg_topk_method(method):
    from dpselect.graphs import dp_motkin_agg, motkin_objectives
    g = _graph()
    acc = dpselect.Accountant(epsilon=100.0, neighbours="edge_add_remove")
    out = dp_motkin_agg(g, k=3, epsilon=50.0, mechanism="exponential", topk_method=method, rng=2, accountant=acc)
    U, _ = motkin_objectives(g)
    u = U @ np.array([1.0, 100.0])
    ref = dpselect.top_k(u, k=3, epsilon=50.0, sensitivity=101.0, method=method, rng=2)
    assert out.tolist() == ref.tolist()
    assert acc.history[0].label == "dp_motkin_agg"
    assert acc.history[0].guarantee == dpselect.topk.TOPK_METHODS[method].privacy(50.0, k=3)


@pytest.mark.parametrize("mechanism", ["shifted_local_dampening", "local_dampening", "permute_and_flip"])
def test_apps_refuse_a_topk_method_without_the_exponential_mechanism(mechanism):
    from dpselect.graphs import dp_motkin_agg, priv_topk
    g = _graph()
    for fn, kw in ((priv_topk, dict(max_degree=4)), (dp_motkin_agg, {})):
        acc = dpselect.Accountant(epsilon=10.0, neighbours="edge_add_remove")
        gen = np.random.default_rng(0)
        state = gen.bit_generator.state
        with pytest.raises(ValueError, match="needs mechanism='exponential'"):
            fn(g, k=2, epsilon=1.0, mechanism=mechanism, topk_method="joint", rng=gen, accountant=acc, **kw)
        assert len(acc.history) == 0 and gen.bit_generator.state == state
    with pytest.raises(ValueError, match="topk_method must be one of"):
        priv_topk(g, k=2, epsilon=1.0, max_degree=4, mechanism="EM", topk_method="auto")


def test_joint_domain_is_refused_before_the_charge():
    # a range that overflows together with a subnormal entry (no exact half): outside the sampler's domain,
    # refused like a non-finite utility, before the accountant is charged or a bit is drawn
    u = [1.7e308, -1.7e308, 5e-324, 0.0]
    acc = dpselect.Accountant(epsilon=10.0)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="finite range or no subnormal"):
        dpselect.top_k(u, k=2, epsilon=1.0, sensitivity=1.0, method="joint", rng=gen, accountant=acc)
    assert len(acc.history) == 0 and gen.bit_generator.state == state
    # the wide range alone is in the domain (halved exactly)
    out = dpselect.top_k([1.7e308, -1.7e308, 2.0, 0.0], k=2, epsilon=1.0, sensitivity=1.0, method="joint",
                         rng=0, accountant=acc)
    assert out.shape == (2,) and len(acc.history) == 1


def test_a_series_gives_its_labels_with_the_selectors_draws():
    pd = pytest.importorskip("pandas")
    s = pd.Series([1.0, 5.0, 3.0, 9.0], index=list("abcd"))
    for method in ("peeling", "joint", "one_shot"):
        pos = dpselect.top_k(s.to_numpy(), k=2, epsilon=1.0, sensitivity=1.0, method=method, rng=11)
        lab = dpselect.top_k(s, k=2, epsilon=1.0, sensitivity=1.0, method=method, rng=11)
        assert lab.tolist() == [s.index[i] for i in pos.tolist()]
    assert dpselect.top_k(s, k=2, epsilon=1.0, sensitivity=1.0, rng=5).tolist() == \
        dpselect.exponential(s, k=2, epsilon=1.0, sensitivity=1.0, rng=5).tolist()
    g = dpselect.top_k(s, k=2, epsilon=1.0, sensitivity=1.0, gaps=True, rng=2)
    g0 = dpselect.top_k(s.to_numpy(), k=2, epsilon=1.0, sensitivity=1.0, gaps=True, rng=2)
    assert g.indices.tolist() == [s.index[i] for i in g0.indices.tolist()] and g.gaps.tolist() == g0.gaps.tolist()
    with pytest.raises(ValueError, match="more than once"):
        dpselect.top_k(pd.Series([1.0, 2.0], index=["a", "a"]), k=1, epsilon=1.0, sensitivity=1.0)
