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


def test_deprecated_weights_spelling_of_base_measure():
    """weights= still works for one release (same law, same draws) with a DeprecationWarning."""
    u, w = [0.0, 1.0, 0.5], [3.0, 1.0, 2.0]
    sf = constant(3, 1.0)
    calls = [
        (exponential, (u,), dict(epsilon=0.9, sensitivity=1.0, rng=3, k=2)),
        (permute_and_flip, (u,), dict(epsilon=0.9, sensitivity=1.0, rng=3)),
        (report_noisy_max, (u,), dict(epsilon=0.9, sensitivity=1.0, rng=3)),
        (local_dampening, (u,), dict(epsilon=0.9, sensitivity_function=sf, rng=3)),
        (shifted_local_dampening, (u,), dict(epsilon=0.9, sensitivity_function=sf, rng=3)),
        (exponential_probabilities, (u,), dict(epsilon=0.9, sensitivity=1.0)),
        (permute_and_flip_probabilities, (u,), dict(epsilon=0.9, sensitivity=1.0)),
        (local_dampening_probabilities, (u,), dict(epsilon=0.9, sensitivity_function=sf)),
        (shifted_local_dampening_probabilities, (u,), dict(epsilon=0.9, sensitivity_function=sf)),
    ]
    for fn, args, kw in calls:
        with pytest.warns(DeprecationWarning, match=rf"{fn.__name__}\(weights=...\) is deprecated.*base_measure="):
            old = fn(*args, weights=w, **kw)
        np.testing.assert_array_equal(old, fn(*args, base_measure=w, **kw))
        with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both base_measure and"):
            fn(*args, weights=w, base_measure=w, **kw)


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
    (lambda: exponential([1.0, np.nan], epsilon=1.0, sensitivity=1.0), ValueError, r"utilities must be finite: utilities\[1\]"),
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
    (lambda: local_dampening([1.0, 2.0], epsilon=1.0, sensitivity_function=constant(3, 1.0)), ValueError, "is for 3 candidates"),
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
