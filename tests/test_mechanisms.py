import itertools
import math

import numpy as np
import pytest

from dpselect import (
    SensitivityFunction, constant, exponential, exponential_probabilities, local_dampening,
    local_dampening_probabilities, permute_and_flip, permute_and_flip_probabilities, report_noisy_max,
    report_noisy_max_probabilities, shifted_local_dampening, shifted_local_dampening_probabilities,
)
from dpselect import mechanisms

U = np.array([1.0, 2.0, 3.0, 3.5, 0.0])


def test_exponential_probabilities_by_hand():
    p = exponential_probabilities([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0)
    w = np.exp([0.0, 1.0, 2.0])
    assert np.allclose(p, w / w.sum(), rtol=1e-14)
    pm = exponential_probabilities([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0, monotonic=True)
    w = np.exp([0.0, 2.0, 4.0])
    assert np.allclose(pm, w / w.sum(), rtol=1e-14)


def test_base_measure_is_copies():
    p = exponential_probabilities([0.0, 1.0], epsilon=1.0, sensitivity=1.0, base_measure=[3, 1])
    q = exponential_probabilities([0.0, 0.0, 0.0, 1.0], epsilon=1.0, sensitivity=1.0)
    assert np.allclose(p, [q[:3].sum(), q[3]])
    pf = permute_and_flip_probabilities([0.0, 1.0], epsilon=1.0, sensitivity=1.0, base_measure=[3, 1])
    qf = permute_and_flip_probabilities([0.0, 0.0, 0.0, 1.0], epsilon=1.0, sensitivity=1.0)
    assert np.allclose(pf, [qf[:3].sum(), qf[3]])


def test_permute_and_flip_probabilities_match_permutation_enumeration():
    u = np.array([0.0, 1.0, 2.5, 2.5])
    eps = 1.3
    p = np.exp(eps * (u - u.max()) / 2)
    ref = np.zeros(4)
    perms = list(itertools.permutations(range(4)))
    for perm in perms:
        reach = 1.0
        for r in perm:
            ref[r] += reach * p[r] / len(perms)
            reach *= 1 - p[r]
    assert np.allclose(permute_and_flip_probabilities(u, epsilon=eps, sensitivity=1.0), ref, rtol=1e-12)


def test_laplace_probabilities_two_candidates_closed_form():
    # P(L1 - L2 > -d) for Laplace(b): 1 - exp(-d/b)(2 + d/b)/4 for d >= 0
    d, b = 1.0, 2.0
    p = report_noisy_max_probabilities([d, 0.0], epsilon=1.0, sensitivity=1.0, noise="laplace")
    assert p[0] == pytest.approx(1 - math.exp(-d / b) * (2 + d / b) / 4, rel=1e-9)


@pytest.mark.parametrize("exact", [True, False])
def test_samplers_match_exact_distributions(freq, exact):
    # exact=True: the default exact samplers, in batches (size=); exact=False: the float path, kept for
    # comparison, checked on fewer draws (one Python call per draw).
    rng = np.random.default_rng(12345)
    n = 40000 if exact else 5000
    eps = 1.0
    kw = dict(rng=rng, exact=exact, size=n)
    freq(exponential(U, epsilon=eps, sensitivity=1.0, **kw), exponential_probabilities(U, epsilon=eps, sensitivity=1.0))
    freq(permute_and_flip(U, epsilon=eps, sensitivity=1.0, **kw), permute_and_flip_probabilities(U, epsilon=eps, sensitivity=1.0))
    freq(report_noisy_max(U, epsilon=eps, sensitivity=1.0, noise="gumbel", **kw), exponential_probabilities(U, epsilon=eps, sensitivity=1.0))
    freq(report_noisy_max(U, epsilon=eps, sensitivity=1.0, noise="laplace", **kw),
         report_noisy_max_probabilities(U, epsilon=eps, sensitivity=1.0, noise="laplace"))
    freq(report_noisy_max(U, epsilon=eps, sensitivity=1.0, noise="laplace", monotonic=True, **kw),
         report_noisy_max_probabilities(U, epsilon=eps, sensitivity=1.0, noise="laplace", monotonic=True))
    sf = SensitivityFunction(lambda t: np.minimum(1.0, np.array([0.2, 0.3, 0.5, 0.5, 0.1]) * (t + 1)), 1.0)
    freq(local_dampening(U, epsilon=eps, sensitivity_function=sf, **kw), local_dampening_probabilities(U, epsilon=eps, sensitivity_function=sf))
    for direction in ("increasing", "decreasing"):
        freq(shifted_local_dampening(U, epsilon=eps, sensitivity_function=sf, direction=direction, **kw),
             shifted_local_dampening_probabilities(U, epsilon=eps, sensitivity_function=sf, direction=direction))


def test_weighted_noise_samplers_match_copies(freq):
    rng = np.random.default_rng(7)
    u, w = np.array([0.0, 1.0, 0.5]), np.array([3, 1, 2])
    copies = np.repeat(u, w)
    groups = np.repeat(np.arange(3), w)
    exact_pf = np.bincount(groups, weights=permute_and_flip_probabilities(copies, epsilon=1.0, sensitivity=1.0))
    freq(permute_and_flip(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=rng, size=40000), exact_pf)
    exact_lap = np.bincount(groups, weights=report_noisy_max_probabilities(copies, epsilon=1.0, sensitivity=1.0, noise="laplace"))
    freq(report_noisy_max(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=rng, size=40000), exact_lap)
    # the float path's weighted noise too
    freq(permute_and_flip(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=rng, size=5000, exact=False), exact_pf)


def _ordered_pair_index(picks, n):
    return picks[0] * n + picks[1]


def test_top2_exponential_is_two_peeled_picks(freq):
    rng = np.random.default_rng(3)
    u, eps, n = np.array([0.0, 1.0, 2.0, 4.0]), 2.0, 4
    p1 = exponential_probabilities(u, epsilon=eps / 2, sensitivity=1.0)
    exact = np.zeros(n * n)
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        p2 = exponential_probabilities(u[rest], epsilon=eps / 2, sensitivity=1.0)
        for jj, j in enumerate(rest):
            exact[i * n + j] = p1[i] * p2[jj]
    picks = exponential(u, epsilon=eps, sensitivity=1.0, k=2, rng=rng, size=40000)
    freq(picks[:, 0] * n + picks[:, 1], exact)
    picks = report_noisy_max(u, epsilon=eps, sensitivity=1.0, noise="gumbel", k=2, rng=rng, size=40000)
    freq(picks[:, 0] * n + picks[:, 1], exact)
    samples = [_ordered_pair_index(exponential(u, epsilon=eps, sensitivity=1.0, k=2, rng=rng, exact=False), n) for _ in range(8000)]
    freq(samples, exact)


@pytest.mark.parametrize("head_gap", [10.0, -2.5])
def test_top2_permute_and_flip_lazy_peeling_is_exact(freq, monkeypatch, head_gap):
    # head_gap = -2.5 forces most candidates into the thinned tail, exercising that path.
    monkeypatch.setattr(mechanisms, "_HEAD_GAP", head_gap)
    rng = np.random.default_rng(11)
    u, eps = np.array([0.0, 0.5, 1.0, 4.0, 6.0, 9.0]), 2.0
    n = u.size
    exact = np.zeros(n * n)
    p1 = permute_and_flip_probabilities(u, epsilon=eps / 2, sensitivity=1.0)
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        p2 = permute_and_flip_probabilities(u[rest], epsilon=eps / 2, sensitivity=1.0)
        for jj, j in enumerate(rest):
            exact[i * n + j] = p1[i] * p2[jj]
    # the float path's lazy head/tail peeling (exact=False); the exact path is tested in test_sampling
    samples = [_ordered_pair_index(permute_and_flip(u, epsilon=eps, sensitivity=1.0, k=2, rng=rng, exact=False), n)
               for _ in range(15000)]
    freq(samples, exact)


def test_top_k_distinct_and_ordered():
    rng = np.random.default_rng(0)
    u = rng.normal(size=50_000) * 50
    for f in (exponential, permute_and_flip):
        picks = f(u, epsilon=1.0, sensitivity=1.0, k=10, rng=rng)
        assert picks.shape == (10,) and len(set(picks.tolist())) == 10
    picks = report_noisy_max(u[:3000], epsilon=1.0, sensitivity=1.0, noise="laplace", k=1500, rng=1)
    assert len(set(picks.tolist())) == 1500
    assert sorted(exponential([1.0, 2.0, 3.0], epsilon=1.0, sensitivity=1.0, k=3, rng=0).tolist()) == [0, 1, 2]


def test_extreme_magnitudes_sample_correctly():
    u = np.array([1e300, -1e300, 3.0])
    for eps in (1e6, 1e-9):
        assert exponential(u, epsilon=eps, sensitivity=1.0, rng=0) == 0
        assert permute_and_flip(u, epsilon=eps, sensitivity=1.0, rng=0) == 0
        assert report_noisy_max(u, epsilon=eps, sensitivity=1.0, rng=0) == 0
        assert exponential(u, epsilon=eps, sensitivity=1.0, k=3, rng=0).tolist() == [0, 2, 1]
        assert permute_and_flip(u, epsilon=eps, sensitivity=1.0, k=3, rng=0).tolist() == [0, 2, 1]
        p = exponential_probabilities(u, epsilon=eps, sensitivity=1.0)
        assert p.tolist() == [1.0, 0.0, 0.0]
    # tiny epsilon on ordinary utilities: close to uniform, computed without underflow
    p = exponential_probabilities([0.0, 1.0], epsilon=1e-9, sensitivity=1.0)
    assert p[1] / p[0] == pytest.approx(math.exp(0.5e-9), rel=1e-12)
    # huge epsilon: the runner-up keeps its (tiny but non-zero) probability in log space
    p = exponential_probabilities([0.0, 1e-3], epsilon=1e6, sensitivity=1.0)
    assert p[0] == pytest.approx(math.exp(-500.0), rel=1e-9)


def test_local_dampening_example_3_4_1():
    sf = SensitivityFunction(lambda t: np.full(8, [3.0, 5.0][min(t, 1)]), 5.0)
    p = local_dampening_probabilities([6.5, 6.5] + [0.0] * 6, epsilon=2.0, sensitivity_function=sf)
    z = 2 * math.exp(1.7) + 6
    assert np.allclose(p, [math.exp(1.7) / z] * 2 + [1 / z] * 6)
    assert p[0] == pytest.approx(0.32, abs=0.005) and p[2] == pytest.approx(0.06, abs=0.005)


def test_local_dampening_with_global_sensitivity_is_exponential():
    u = np.array([1.0, -2.0, 3.0])
    assert np.allclose(local_dampening_probabilities(u, epsilon=0.7, sensitivity_function=constant(3, 2.0)), exponential_probabilities(u, epsilon=0.7, sensitivity=2.0))
    assert np.allclose(shifted_local_dampening_probabilities(u, epsilon=0.7, sensitivity_function=constant(3, 2.0)),
                       exponential_probabilities(u, epsilon=0.7, sensitivity=2.0))


def test_shifted_closed_form_equals_limit_definition():
    # Thesis Lemma 4.3.1: LD on u - s for any s >= s0 = nΔ + max u equals the s -> ∞ limit.
    u = np.array([0.0, 2.0, 3.0, 5.0])
    n_db, delta = 6, 2.0
    base = np.array([0.2, 0.5, 1.0, 1.5])
    sf = SensitivityFunction(lambda t: np.minimum(delta, base * (1 + 0.5 * t)), delta).bounded(n_db)
    s0 = n_db * delta + u.max()
    for eps in (0.3, 2.0):
        closed = shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf, direction="increasing")
        for s in (s0, s0 + 7.3):
            assert np.allclose(local_dampening_probabilities(u - s, epsilon=eps, sensitivity_function=sf), closed, rtol=1e-12)
        closed_dec = shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf, direction="decreasing")
        assert np.allclose(local_dampening_probabilities(u + s0 + 3.1, epsilon=eps, sensitivity_function=sf), closed_dec, rtol=1e-12)


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: exponential([1.0, 2.0], epsilon=-1, sensitivity=1.0), ValueError, "epsilon must be a finite number > 0, got -1"),
    (lambda: exponential([1.0, 2.0], epsilon=float("nan"), sensitivity=1.0), ValueError, "epsilon must be a finite number > 0"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=0.0), ValueError, "sensitivity must be a finite number > 0"),
    (lambda: exponential([1.0, 2.0], epsilon="1", sensitivity=1.0), TypeError, "epsilon must be a finite number > 0"),
    (lambda: exponential([1.0, np.nan], epsilon=1.0, sensitivity=1.0), ValueError, r"utilities must be finite: it holds a NaN or an infinite entry$"),
    (lambda: exponential([1.0, np.inf], epsilon=1.0, sensitivity=1.0), ValueError, "utilities must be finite"),
    (lambda: exponential([[1.0, 2.0]], epsilon=1.0, sensitivity=1.0), ValueError, "utilities must be 1-D"),
    (lambda: exponential([], epsilon=1.0, sensitivity=1.0), ValueError, "must not be empty"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, k=0), ValueError, "k must be an int >= 1"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, k=3), ValueError, "k must be an int <= 2"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, k=1.5), TypeError, "k must be an int"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, base_measure=[1.0, 0.0]), ValueError, r"base_measure\[1\]"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, base_measure=[1.0]), ValueError, "one entry per candidate"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng="x"), TypeError, "rng must be"),
    (lambda: report_noisy_max([1.0, 2.0], epsilon=1.0, sensitivity=1.0, noise="cauchy"), ValueError, "noise must be one of"),
    (lambda: shifted_local_dampening([1.0, 2.0], epsilon=1.0, sensitivity_function=constant(2, 1.0), direction="up"), ValueError,
     "direction must be one of"),
    (lambda: local_dampening([1.0, 2.0], epsilon=1.0, sensitivity_function=1.0), TypeError, "must be a dpselect.SensitivityFunction"),
    (lambda: local_dampening([1.0, 2.0], epsilon=1.0, sensitivity_function=constant(3, 1.0)), ValueError, "disagree on the number of candidates"),
    (lambda: local_dampening([1.0, 2.0], epsilon=1.0, sensitivity_function=SensitivityFunction(lambda t: np.array([1.0, -1.0]), 1.0)),
     ValueError, "finite values >= 0"),
    (lambda: exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, monotonic=1), TypeError, "monotonic must be a bool"),
])
def test_bad_input(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_seeding_is_reproducible_and_global_state_untouched():
    np.random.seed(5)
    before = np.random.get_state()[1].copy()
    a = exponential(U, epsilon=1.0, sensitivity=1.0, k=3, rng=42)
    b = exponential(U, epsilon=1.0, sensitivity=1.0, k=3, rng=np.random.default_rng(42))
    assert a.tolist() == b.tolist()
    assert np.array_equal(np.random.get_state()[1], before)


# -- issue 21: base measures, subnormal scales, data-dependent crashes, slow corners ------------------
from fractions import Fraction  # noqa: E402
import warnings  # noqa: E402

from dpselect.audit import exact_dp_audit  # noqa: E402

COPY_NOISES = ("exponential", "laplace")


def _rng_untouched(call):
    """Run ``call(rng)``, expecting a ValueError naming base_measure, and check no random bit was drawn."""
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"base_measure\[\d+\] = .* whole number"):
        call(rng)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("w", [[0.01, 0.01], [2.0, 0.5], [0.9, 1.0], [1.0, 1e-300], [1.5, 2.0], [2.0 ** 1000, 1.0]])
def test_fractional_base_measure_refused_for_exponential_and_laplace_noise(w):
    """P1: the reported breaches (uniform (0.01, 0.01): ratio 187 vs e^ε; Laplace at (2, 0.5)) are refused up
    front for every sampler variant and every probability function; Gumbel noise keeps any w > 0."""
    u = [0.0, -1.75]
    for noise in COPY_NOISES:
        for kw in ({}, {"exact": False}, {"size": 10}, {"size": 10, "exact": False}, {"k": 2}, {"k": 2, "exact": False}):
            _rng_untouched(lambda g: report_noisy_max(u, epsilon=1.0, sensitivity=1.0, noise=noise, base_measure=w,
                                                      rng=g, **kw))
            if noise == "exponential":
                _rng_untouched(lambda g: permute_and_flip(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=g, **kw))
        with pytest.raises(ValueError, match="base_measure"):
            report_noisy_max_probabilities(u, epsilon=1.0, sensitivity=1.0, noise=noise, base_measure=w)
    with pytest.raises(ValueError, match="base_measure"):
        permute_and_flip_probabilities(u, epsilon=1.0, sensitivity=1.0, base_measure=w)
    from dpselect.multiobjective import priv_agg, priv_agg_probabilities
    U = [[0.0, 1.0], [1.0, 0.0]]
    for mech, opts in (("permute_and_flip", {}), ("report_noisy_max", {"noise": "laplace"})):
        _rng_untouched(lambda g: priv_agg(U, [0.5, 0.5], epsilon=1.0, sensitivities=[1.0, 1.0], mechanism=mech,
                                          base_measure=w, rng=g, **opts))
        with pytest.raises(ValueError, match="base_measure"):
            priv_agg_probabilities(U, [0.5, 0.5], epsilon=1.0, sensitivities=[1.0, 1.0], mechanism=mech,
                                   base_measure=w, **opts)
    # the exponential mechanism reads a base measure as p ∝ w·exp(...): any w > 0
    p = exponential_probabilities(u, epsilon=1.0, sensitivity=1.0, base_measure=w)
    lw = np.log(np.asarray(w, dtype=float)) + np.array(u) / 2
    assert p == pytest.approx(np.exp(lw - lw.max()) / np.exp(lw - lw.max()).sum(), rel=1e-12)
    assert report_noisy_max(u, epsilon=1.0, sensitivity=1.0, noise="gumbel", base_measure=w, rng=0) in (0, 1)


def test_fractional_base_measure_law_would_breach_epsilon():
    """Why the refusal: the law a fractional w gives (max of 'w copies', F^w) is not ε-DP, while whole copies are."""
    x, y = np.array([0.0, -1.75]), np.array([-1.0, -0.75])          # each utility moves by Δ = 1
    v = (np.arange(400_000) + 0.5) / 400_000                      # midpoint rule over candidate 1's uniform

    def law(d, w, noise):
        """P(1 wins) = E_V[F(s1 − s0 + F⁻¹(V^{1/w1}))^{w0}], scores ε·u/(2Δ) with ε = 1."""
        s = d / 2.0
        t = v ** (1.0 / w[1])
        if noise == "exponential":
            n1 = -np.log1p(-t)
            z = s[1] - s[0] + n1
            cdf = np.where(z > 0, -np.expm1(-np.maximum(z, 0.0)), 0.0)
        else:
            n1 = np.where(t < 0.5, np.log(2 * t), -np.log(2 * (1 - t)))
            z = s[1] - s[0] + n1
            cdf = np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1 - 0.5 * np.exp(-np.maximum(z, 0.0)))
        p1 = float(np.mean(cdf ** w[0]))
        return np.array([1 - p1, p1])

    for noise, w, least, pair in (("exponential", [0.01, 0.01], 4.0, (x, y)), ("exponential", [0.5, 0.5], 1.2, (x, y)),
                                  ("laplace", [2.0, 0.5], 1.006, ([0.0, -6.0], [-1.0, -5.0]))):
        data = {"x": np.array(pair[0]), "y": np.array(pair[1])}
        res = exact_dp_audit(lambda d, w=w, noise=noise: law(data[d], w, noise), [("x", "y")], epsilon=1.0)
        assert res.worst_log_ratio > least and not res.passed, (noise, w, res.worst_log_ratio)
        # whole copies pass the same pair
        ok = exact_dp_audit(lambda d, noise=noise: report_noisy_max_probabilities(data[d], epsilon=1.0,
                                                                                 sensitivity=1.0, noise=noise,
                                                                                 base_measure=[1, 2]),
                            [("x", "y")], epsilon=1.0)
        assert ok.passed
        # and the sampler is not allowed to draw from it
        with pytest.raises(ValueError, match="base_measure"):
            report_noisy_max(x, epsilon=1.0, sensitivity=1.0, noise=noise, base_measure=w, rng=0)


GRID = [np.array(v) for v in ([0.0, -1.75, 0.5], [0.0, 0.0, 0.0], [1.0, -1.0, 0.25])]


def _neighbour_pairs(monotonic: bool, full: bool = True):
    """Utility vectors moved by at most Δ = 1 each (all in one direction if ``monotonic``); ``full=False``: the
    corners only, on two of the grid's vectors (for the slower quadrature)."""
    steps = [-1.0, 0.0, 1.0] if full or monotonic else [-1.0, 1.0]
    pairs = []
    for i, x in enumerate(GRID):
        if not full and i == 1:
            continue
        for d in itertools.product(steps, repeat=3):
            d = np.array(d)
            if monotonic and not ((d >= 0).all() or (d <= 0).all()):
                continue
            pairs.append((("x", i), ("y", i, tuple(d))))
    return pairs


def _data(key):
    return GRID[key[1]] if key[0] == "x" else GRID[key[1]] + np.array(key[2])


@pytest.mark.parametrize("noise", ["exponential", "laplace", "gumbel"])
@pytest.mark.parametrize("monotonic", [False, True])
def test_integer_base_measure_audit(noise, monotonic):
    """Whole copies are ε-DP with every noise: exact audit of report_noisy_max_probabilities (and for the
    exponential noise, the quadrature against the closed form) on neighbour pairs."""
    eps = 1.0
    for w in ([1, 3, 2], [5, 1, 1]):
        prob = lambda key, w=w: report_noisy_max_probabilities(_data(key), epsilon=eps, sensitivity=1.0, noise=noise,
                                                                monotonic=monotonic, base_measure=w)
        res = exact_dp_audit(prob, _neighbour_pairs(monotonic, full=noise != "laplace"), epsilon=eps)
        assert res.passed and res.worst_log_ratio > 0.3 * eps, (w, res.worst_log_ratio, res.pair)
    if noise == "exponential":
        s = GRID[0] / (1.0 if monotonic else 2.0)
        assert mechanisms._rnm_probabilities_numeric(s - s.max(), "exponential", np.array([1.0, 3.0, 2.0])) == \
            pytest.approx(permute_and_flip_probabilities(GRID[0], epsilon=eps, sensitivity=1.0, monotonic=monotonic,
                                                         base_measure=[1, 3, 2]), rel=1e-9)


def test_report_noisy_max_probabilities_base_measure_is_copies():
    u = np.array([0.0, 1.0, 0.5])
    w = np.array([3, 1, 2])
    groups = np.repeat(np.arange(3), w)
    for noise in ("laplace", "exponential", "gumbel"):
        p = report_noisy_max_probabilities(u, epsilon=1.0, sensitivity=1.0, noise=noise, base_measure=w)
        q = np.bincount(groups, weights=report_noisy_max_probabilities(np.repeat(u, w), epsilon=1.0, sensitivity=1.0,
                                                                        noise=noise))
        assert p == pytest.approx(q, rel=1e-8)
    # huge copy counts: quadrature (2^40 copies of candidate 0 outweigh the others' gap of 1 noise unit)
    p = permute_and_flip_probabilities(u, epsilon=2.0, sensitivity=1.0, base_measure=[2 ** 40, 1, 1])
    assert p[1] == pytest.approx(math.e ** 1 * 2.0 ** -40, rel=1e-3) and p.sum() == pytest.approx(1.0)


def test_subnormal_sensitivity_scores_exact(freq):
    """P3: ε = 8, Δ = 5e-324: the scores are 0 and 4 noise units apart, in every path."""
    true = np.array([1.0, math.exp(4.0)]) / (1.0 + math.exp(4.0))     # [0.018, 0.982]
    kw = dict(epsilon=8.0, sensitivity=5e-324)
    assert exponential_probabilities([0.0, 5e-324], **kw) == pytest.approx(true, rel=1e-12)
    a, err, _ = mechanisms.scaled_scores(np.array([0.0, 5e-324]), 0.0, 8.0, 5e-324, 2)
    assert a.tolist() == [-4.0, 0.0]
    for noise in ("gumbel", "exponential", "laplace"):
        p = report_noisy_max_probabilities([0.0, 5e-324], noise=noise, **kw)
        ref = report_noisy_max_probabilities([0.0, 8.0], epsilon=1.0, sensitivity=1.0, noise=noise)
        assert p == pytest.approx(ref, rel=1e-9)
        for exact in (True, False):
            picks = report_noisy_max([0.0, 5e-324], noise=noise, rng=1, size=3000, exact=exact, **kw)
            freq(picks, p)


@pytest.mark.parametrize("x", [[5e-324, 0.5], [1e-308, 0.5], [0.5, 0.5]])
def test_median_tiny_interval_never_crashes(x):
    """P4: a crash that depends on the data is a release: weights (interval lengths) down to 5e-324."""
    from dpselect.quantiles import median
    vals = [median(x, epsilon=1.0, bound=2.0, rng=seed) for seed in range(200)]
    assert all(0.0 <= v <= 2.0 for v in vals)


def test_tiny_and_huge_gumbel_weights_sample_their_law(freq):
    """Gumbel noise with w down to 5e-324 and up to 1e300: Gumbel + ln w, no overflow; exact law."""
    u = np.array([0.0, 1382.0, 1380.0, 0.0])        # e^691·1e-300 ~ 1: the tiny weight competes
    w = np.array([1.0, 1e-300, 5e-324 * 2 ** 40, 1e-30])
    p = exponential_probabilities(u, epsilon=1.0, sensitivity=1.0, base_measure=w)
    assert p[0] > 0.3 and p[1] > 0.3
    freq(exponential(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=2, size=4000), p)
    freq([exponential(u, epsilon=1.0, sensitivity=1.0, base_measure=w, rng=s) for s in range(1500)], p)
    big = np.tile(u, 10)       # > 32 candidates: the vectorised enclosures
    bw = np.tile(w, 10)
    pb = exponential_probabilities(big, epsilon=1.0, sensitivity=1.0, base_measure=bw)
    freq([exponential(big, epsilon=1.0, sensitivity=1.0, base_measure=bw, rng=s) for s in range(600)], pb)
    wh = np.array([1e300, 1.0, 1.0, 1.0])
    ph = exponential_probabilities([0.0, 1400.0, 0.0, 0.0], epsilon=1.0, sensitivity=1.0, base_measure=wh)
    freq(exponential([0.0, 1400.0, 0.0, 0.0], epsilon=1.0, sensitivity=1.0, base_measure=wh, rng=3, size=3000), ph)


def test_extreme_budget_far_scores_are_fast():
    """Item 15: ε = 1e300, Δ = 1e-300 and scores below −DBL_MAX: no ~600-digit decimal stage per draw."""
    import time
    t0 = time.perf_counter()
    for noise in ("gumbel", "exponential", "laplace"):
        assert (report_noisy_max([0.0, -1.0], epsilon=1e300, sensitivity=1e-300, noise=noise, rng=0, size=2000)
                == 0).all()
        picks = report_noisy_max([0.0, -1.0, -2.0, -3.0], epsilon=1e300, sensitivity=1e-300, noise=noise, k=3, rng=0,
                                 size=200)
        assert (picks == [0, 1, 2]).all()
    assert time.perf_counter() - t0 < 5.0     # was 30-300 ms a draw (> 100 s here)


def test_size_checked_first_and_no_warnings():
    with pytest.raises(ValueError, match=r"size = 1099511627776 draws"):
        exponential([0.0, 1.0], epsilon=1.0, sensitivity=1.0, size=2 ** 40, rng=0)
    with pytest.raises(ValueError, match=r"size = 200000000 draws of k = 2"):
        permute_and_flip([0.0, 1.0], epsilon=1.0, sensitivity=1.0, size=2 * 10 ** 8, k=2, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for u, e, d in (([1.7e308, -1.7e308, 0.0], 1.0, 1e-300), ([1e300, -1e300], 1e300, 1e-300),
                        ([0.0, 5e-324], 8.0, 5e-324), ([1e308, -1e308], 1e10, 1.0)):
            for noise in ("gumbel", "exponential", "laplace"):
                for exact in (True, False):
                    report_noisy_max(u, epsilon=e, sensitivity=d, noise=noise, rng=0, exact=exact)
                    report_noisy_max(u, epsilon=e, sensitivity=d, noise=noise, rng=0, exact=exact, size=3)
                report_noisy_max_probabilities(u, epsilon=e, sensitivity=d, noise=noise)


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_float_path_size_is_the_same_draws_as_separate_calls(noise):
    """Issue 22 item 3: exact=False with size= is vectorised and gives the picks of size separate calls."""
    u = np.array([0.0, 1.0, 0.5, 2.0, -1.0, 1.5])
    for w in (None, [1, 2, 3, 1, 1, 5]):
        for k in (None, 2):
            gen = np.random.default_rng(5)
            one = [report_noisy_max(u, epsilon=1.0, sensitivity=1.0, noise=noise, k=k, base_measure=w, rng=gen,
                                    exact=False) for _ in range(200)]
            many = report_noisy_max(u, epsilon=1.0, sensitivity=1.0, noise=noise, k=k, base_measure=w, rng=5,
                                    exact=False, size=200)
            assert np.array_equal(np.asarray(one), many)
    far = np.array([0.0, -1e300, 1.0])            # a candidate beyond the float range of noise units
    gen = np.random.default_rng(1)
    one = [report_noisy_max(far, epsilon=1.0, sensitivity=1.0, noise=noise, rng=gen, exact=False) for _ in range(50)]
    assert np.array_equal(one, report_noisy_max(far, epsilon=1.0, sensitivity=1.0, noise=noise, rng=1, exact=False,
                                                size=50))


def test_float_path_survives_scores_beyond_the_float_range():
    # a dampened score that overflows to inf made exact=False compute inf − inf and raise IndexError: a crash
    # that depends on the data (issue 21 P4 class); the float path now gives the overflowed scores the mass
    from dpselect import constant, local_dampening

    sf = constant(2, 5e-324)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for u in ([1e300, 1.0], [1e300, -1e300], [1.0, 2.0]):
            r = local_dampening(u, epsilon=1.0, sensitivity_function=sf, exact=False, rng=0)
            assert r in (0, 1)
            out = local_dampening(u, epsilon=1.0, sensitivity_function=sf, exact=False, rng=0, size=50)
            assert set(out.tolist()) <= {0, 1}
        # only candidate 0's score is beyond the range: it always wins
        assert local_dampening([1e300, -1e300], epsilon=1.0, sensitivity_function=sf, exact=False,
                               rng=1, size=20).tolist() == [0] * 20
