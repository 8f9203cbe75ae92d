"""Pareto score, δ^PS, PrivPareto and PrivAgg: paper examples, brute-force references, exact DP audits."""
from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest
from scipy import stats

import dpselect
import dpselect._dominance
from dpselect.multiobjective import (
    _ParetoDelta,
    aggregate_sensitivity,
    pareto_score,
    pareto_sensitivity,
    priv_agg,
    priv_agg_probabilities,
    priv_pareto,
    priv_pareto_probabilities,
)
from dpselect.sensitivity import SensitivityFunction, constant


# -- literal references ----------------------------------------------------------------------------
def naive_pareto_score(U):
    U = np.asarray(U, float)
    n = U.shape[0]
    return np.array([-sum(1 for q in range(n) if q != r and np.all(U[q] > U[r])) for r in range(n)])


def naive_delta_ps(U, deltas, t):
    """Paper Def. 4.5 written out literally: dom'/ndom' sets with the cumulative sums over j <= t.

    ``deltas[i](j)`` is δ_i(x, j, ·) for all candidates.
    """
    U = np.asarray(U, float)
    n, m = U.shape
    cum = np.zeros((n, m))
    for j in range(t + 1):
        for i in range(m):
            cum[:, i] += deltas[i](j)
    hi, lo = U + cum, U - cum
    out = np.zeros(n)
    for r in range(n):
        count = 0
        for q in range(n):
            if q == r:
                continue
            if np.all(U[q] > U[r]):  # q dominates r
                count += any(lo[q, i] <= hi[r, i] for i in range(m))
            else:
                count += all(hi[q, i] >= lo[r, i] for i in range(m))
        out[r] = count
    return out


def random_sf(rng, n, delta_max):
    """A random non-decreasing per-candidate sensitivity function with values in multiples of 0.5."""
    base = rng.integers(0, 3, n) * 0.5
    growth = rng.integers(0, 2, n) * 0.5
    vals = lambda t: np.minimum(base + growth * t, delta_max)  # noqa: E731

    def fn(t, candidates=None):
        v = vals(t)
        return v if candidates is None else v[candidates]

    return SensitivityFunction(fn, delta_max, n_candidates=n), vals


# -- Pareto score ------------------------------------------------------------------------------------
def test_paper_example_4_4():
    U = [[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]]  # a, b, c, d, e
    assert pareto_score(U).tolist() == [0, 0, -1, -1, -4]
    assert pareto_score(U).dtype == np.int64


def test_pareto_score_one_objective_and_ties():
    assert pareto_score([3.0, 1.0, 3.0]).tolist() == [0, -2, 0]
    assert pareto_score([[1, 2], [1, 3], [2, 2]]).tolist() == [0, 0, 0]  # ties never dominate
    assert pareto_score([[7.0, 7.0]]).tolist() == [0]


@pytest.fixture(params=["auto", "fast"])
def counting(request, monkeypatch):
    """Run a test with the default method choice and with the O(n log n) path forced on tiny inputs."""
    if request.param == "fast":
        monkeypatch.setattr(dpselect._dominance, "BLOCKED_LIMIT", 0)
    return request.param


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_pareto_score_matches_naive_on_random_ties(m, counting):
    rng = np.random.default_rng(m)
    for _ in range({1: 500, 2: 500, 3: 300, 4: 150}[m]):
        n = int(rng.integers(1, 30))
        U = rng.integers(0, int(rng.integers(1, 5)), (n, m))
        np.testing.assert_array_equal(pareto_score(U), naive_pareto_score(U))
    # and on a size where the O(n log n) path (not the blocked one) is used
    U = rng.integers(0, 8, (900, m))
    ref = -(U[None, :, :] > U[:, None, :]).all(axis=2).sum(axis=1)
    np.testing.assert_array_equal(pareto_score(U), ref)


# -- δ^PS ----------------------------------------------------------------------------------------------
def test_paper_example_4_6():
    U = [[1, 1], [3, 3], [5, 5]]  # a, b, c
    d = np.array([0.5, 1.0, 1.5])
    sfs = [SensitivityFunction(lambda t: d, 1.5) for _ in range(2)]
    sf = pareto_sensitivity(U, sfs)
    assert sf(0)[1] == 1.0  # δ^PS(x, 0, b) = |{c}| + |{}| = 1
    assert sf(0).tolist() == naive_delta_ps(U, [lambda t: d] * 2, 0).tolist() == [0.0, 1.0, 1.0]
    assert sf.global_sensitivity == 2.0


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_delta_ps_matches_literal_definition(m, counting):
    rng = np.random.default_rng(10 + m)
    for _ in range({1: 120, 2: 120, 3: 80, 4: 50}[m]):
        n = int(rng.integers(2, 25))
        U = rng.integers(0, 4, (n, m)).astype(float)
        pairs = [random_sf(rng, n, 2.0) for _ in range(m)]
        sf = pareto_sensitivity(U, [p[0] for p in pairs])
        for t in range(4):
            ref = naive_delta_ps(U, [p[1] for p in pairs], t)
            np.testing.assert_array_equal(sf(t), np.minimum(ref, n - 1))
            idx = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
            np.testing.assert_array_equal(sf(t, candidates=idx), np.minimum(ref, n - 1)[idx])


def test_delta_ps_large_input_matches_literal_sets_via_blocked_counting():
    rng = np.random.default_rng(0)
    n, m = 1500, 2
    U = rng.integers(0, 40, (n, m)).astype(float)
    pairs = [random_sf(rng, n, 3.0) for _ in range(m)]
    sf = pareto_sensitivity(U, [p[0] for p in pairs])
    for t in (0, 1, 2):
        cum = sum(np.column_stack([pairs[i][1](j) for i in range(m)]) for j in range(t + 1))
        H, L = U + cum, U - cum
        # both terms of Def. 4.5 with explicit domination masks (O(n^2) memory is fine at this size)
        dom = (U[None, :, :] > U[:, None, :]).all(2)
        np.fill_diagonal(dom, False)
        can_lose = (L[None, :, :] <= H[:, None, :]).any(2)
        can_gain = (H[None, :, :] >= L[:, None, :]).all(2)
        other = ~np.eye(n, dtype=bool)
        ref = (dom & can_lose).sum(1) + (~dom & other & can_gain).sum(1)
        np.testing.assert_array_equal(sf(t), ref)


def test_delta_ps_any_order_of_t_and_saturation():
    rng = np.random.default_rng(4)
    n = 12
    U = rng.integers(0, 6, (n, 2)).astype(float)
    sfs = [constant(n, 1.0), constant(n, 0.5)]
    sf = pareto_sensitivity(U, sfs)
    forward = [sf(t).tolist() for t in range(6)]
    assert [sf(t).tolist() for t in reversed(range(6))] == forward[::-1]
    # constant δ_i are bounded (saturation 0): δ^PS reaches n − 1 for every candidate by the declared distance
    sat = sf.saturation_distance
    assert sat is not None
    raw = _ParetoDelta(U, sfs, None)
    assert raw(sat).tolist() == [n - 1.0] * n
    # unbounded inputs give an unbounded δ^PS
    free = SensitivityFunction(lambda t: np.full(n, 0.5), 1.0)
    assert pareto_sensitivity(U, [free, sfs[1]]).saturation_distance is None


def _random_pareto_instance(rng):
    n, m = int(rng.integers(2, 40)), int(rng.integers(1, 4))
    U = np.round(rng.random((n, m)) * rng.choice([1, 10, 1000]), int(rng.integers(0, 3)))   # ties too
    if rng.random() < 0.3:
        return U, [float(x) for x in rng.choice([0.37, 0.1, 1.0], m)]
    sfs = []
    for _ in range(m):
        b = rng.uniform(0.01, 0.5, n)

        def fn(t, candidates=None, b=b):   # elementwise, growing with t, per candidate
            return np.minimum(1.0, (b if candidates is None else b[candidates]) * (1 + np.asarray(t) * 0.1))

        sf = SensitivityFunction(fn, 1.0, n_candidates=n, elementwise=True)
        sfs.append(sf.bounded(int(rng.integers(5, 300))) if rng.random() < 0.8 else sf)
    return U, sfs


@pytest.mark.parametrize("seed", range(12))
def test_delta_ps_thresholds_equal_the_broadcast_and_the_walk(seed):
    # issue 22 item 6: δ^PS from two thresholds per pair (any distances, any order) equals the all-pairs broadcast
    # it replaces and the one-distance-per-call walk; the shift equals the broadcast sum
    from dpselect.multiobjective import _as_functions, _saturation
    rng = np.random.default_rng(500 + seed)
    U, sens = _random_pareto_instance(rng)
    n = U.shape[0]
    sfs = _as_functions(sens, n)
    T = int(rng.integers(1, 400))
    ts, cs = rng.integers(0, T, 600), rng.integers(0, n, 600)
    fast = _ParetoDelta(U, sfs, None)
    got = fast.at(ts, cs)
    assert np.array_equal(got, _ParetoDelta(U, sfs, None).at_broadcast(ts, cs))
    walk = _ParetoDelta(U, sfs, None)
    for t in sorted({0, 1, 2, int(T // 2), T - 1}):
        assert np.array_equal(fast.at(np.full(n, t), np.arange(n)), walk(t)), t
    sat = _saturation(U, sfs)
    if sat is not None:
        G = _ParetoDelta(U, sfs, None).shift(sat)
        assert np.array_equal(G, _ParetoDelta(U, sfs, None).shift_broadcast(sat))
        # and the definition: Σ_{t < sat} (n − 1 − δ^PS(t)) by the walk (small saturation distances only)
        if sat <= 300:
            ref = sum((n - 1) - walk(t) for t in range(sat))
            assert np.array_equal(G, np.asarray(ref, dtype=float))


def test_priv_pareto_block_path_same_picks_above_64_candidates():
    # the block path now runs up to 256 candidates (walk) / 1,024 (shift): same picks for the same seeds as one
    # distance per call (the law is unchanged), at 100 candidates
    import dpselect.multiobjective._pareto_score as mo   # the engine reads its limits there
    rng = np.random.default_rng(7)
    U = np.round(rng.random((100, 2)) * 50)
    hit = rng.integers(0, 40, (2, 100))
    sfs = [dpselect.utilities.classification.rate_sensitivity(hit[i], 40 - hit[i]) for i in range(2)]
    picks = {}
    for label, limits in (("blocks", (256, 1024)), ("steps", (0, 0))):
        old = mo._BLOCK_MAX_CANDIDATES, mo._SHIFT_BLOCK_MAX_CANDIDATES
        mo._BLOCK_MAX_CANDIDATES, mo._SHIFT_BLOCK_MAX_CANDIDATES = limits
        try:
            picks[label] = [priv_pareto(U, epsilon=1.0, sensitivities=sfs, mechanism=mech, k=3, rng=seed).tolist()
                            for mech in ("local_dampening", "shifted_local_dampening") for seed in range(3)]
        finally:
            mo._BLOCK_MAX_CANDIDATES, mo._SHIFT_BLOCK_MAX_CANDIDATES = old
    assert picks["blocks"] == picks["steps"]


def test_delta_ps_numbers_are_constant_functions():
    U = [[1, 1], [3, 3], [5, 5]]
    a = pareto_sensitivity(U, [1.0, 2.0])
    b = pareto_sensitivity(U, [constant(3, 1.0), constant(3, 2.0)])
    for t in range(3):
        assert a(t).tolist() == b(t).tolist()


def test_aggregate_sensitivity():
    s1 = SensitivityFunction(lambda t: np.array([0.1, 0.2]) * (t + 1), 1.0)
    s2 = SensitivityFunction(lambda t: np.array([0.5, 0.0]), 2.0)
    f = aggregate_sensitivity([2.0, -0.5], [s1, s2])
    assert f.global_sensitivity == 3.0  # Thm 5.3: 2·1 + 0.5·2
    np.testing.assert_allclose(f(0), [0.45, 0.4])
    np.testing.assert_allclose(f(1), [0.65, 0.8])
    with pytest.raises(ValueError, match="one entry per objective"):
        aggregate_sensitivity([1.0], [s1, s2])
    with pytest.raises(TypeError, match="must be a SensitivityFunction"):
        aggregate_sensitivity([1.0, 1.0], [s1, 2.0])
    with pytest.raises(ValueError, match="not all be zero"):
        aggregate_sensitivity([0.0, 0.0], [s1, s2])


# -- PrivPareto / PrivAgg: distributions -------------------------------------------------------------------
EX44 = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], float)


def test_priv_pareto_global_probabilities_closed_form():
    p = priv_pareto_probabilities(EX44, epsilon=2.0, sensitivities=[1.0, 1.0])
    w = np.exp(2.0 * np.array([0, 0, -1, -1, -4]) / (2 * 4))
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(priv_pareto_probabilities(EX44, epsilon=2.0, sensitivities=[1.0, 1.0], mechanism="report_noisy_max",
                                                         noise="gumbel"), p, rtol=1e-12)
    pf = priv_pareto_probabilities(EX44, epsilon=2.0, sensitivities=[1.0, 1.0], mechanism="permute_and_flip")
    np.testing.assert_allclose(pf, dpselect.permute_and_flip_probabilities([0, 0, -1, -1, -4], epsilon=2.0, sensitivity=4.0))


def test_priv_pareto_local_probabilities_use_delta_ps():
    sfs = [constant(5, 1.0), SensitivityFunction(lambda t: np.array([0.2, 0.4, 0.6, 0.8, 1.0]), 1.0)]
    p = priv_pareto_probabilities(EX44, epsilon=1.0, sensitivities=sfs)
    ref = dpselect.local_dampening_probabilities([0, 0, -1, -1, -4], epsilon=1.0, sensitivity_function=pareto_sensitivity(EX44, sfs))
    np.testing.assert_allclose(p, ref, rtol=1e-12)
    # a local mechanism with global sensitivities uses them as constant sensitivity functions
    q = priv_pareto_probabilities(EX44, epsilon=1.0, sensitivities=[1.0, 1.0], mechanism="local_dampening")
    ref = dpselect.local_dampening_probabilities([0, 0, -1, -1, -4], epsilon=1.0, sensitivity_function=pareto_sensitivity(EX44, [1.0, 1.0]))
    np.testing.assert_allclose(q, ref, rtol=1e-12)
    s = priv_pareto_probabilities(EX44, epsilon=1.0, sensitivities=[1.0, 1.0], mechanism="shifted_local_dampening")
    assert s.shape == (5,) and abs(s.sum() - 1) < 1e-12


def test_priv_agg_probabilities():
    U = np.array([[0.9, 0.1], [0.6, 0.7], [0.2, 0.3]])
    p = priv_agg_probabilities(U, [2.0, -1.0], epsilon=1.5, sensitivities=[1.0, 0.5])
    np.testing.assert_allclose(p, dpselect.exponential_probabilities(U @ [2.0, -1.0], epsilon=1.5, sensitivity=2.5), rtol=1e-12)
    sfs = [SensitivityFunction(lambda t: np.array([0.1, 0.2, 0.3]), 1.0), constant(3, 0.5)]
    p = priv_agg_probabilities(U, [2.0, -1.0], epsilon=1.5, sensitivities=sfs)
    ref = dpselect.local_dampening_probabilities(U @ [2.0, -1.0], epsilon=1.5, sensitivity_function=dpselect.weighted_sum([2.0, -1.0], sfs))
    np.testing.assert_allclose(p, ref, rtol=1e-12)
    # SensitivityFunctions with a global mechanism use their global sensitivities (2·1 + 1·0.5)
    p = priv_agg_probabilities(U, [2.0, -1.0], epsilon=1.5, sensitivities=sfs, mechanism="exponential")
    np.testing.assert_allclose(p, dpselect.exponential_probabilities(U @ [2.0, -1.0], epsilon=1.5, sensitivity=2.5), rtol=1e-12)


def test_samplers_match_probabilities():
    rng = np.random.default_rng(11)
    sfs = [constant(5, 1.0), SensitivityFunction(lambda t: np.array([0.2, 0.4, 0.6, 0.8, 1.0]), 1.0)]
    for fn, prob in [
        (lambda: priv_pareto(EX44, epsilon=2.0, sensitivities=sfs, rng=rng), priv_pareto_probabilities(EX44, epsilon=2.0, sensitivities=sfs)),
        (lambda: priv_agg(EX44, [1, 1], epsilon=1.0, sensitivities=[1.0, 1.0], rng=rng), priv_agg_probabilities(EX44, [1, 1], epsilon=1.0, sensitivities=[1.0, 1.0])),
    ]:
        counts = np.bincount([fn() for _ in range(3000)], minlength=5)
        assert stats.chisquare(counts, 3000 * prob).pvalue > 1e-3


def test_priv_pareto_top_k_recomputes_scores_on_remaining():
    # a dominates d only, b dominates c and d: PS = 0, 0, -1, -2. After picking a, d's score is -1.
    U = np.array([[9, 2], [5, 5], [1, 3], [3, 1]], float)
    eps, n = 3.0, 4
    rng = np.random.default_rng(2)
    draws = [tuple(priv_pareto(U, epsilon=eps, sensitivities=[1.0, 1.0], k=2, rng=rng)) for _ in range(4000)]
    # exact joint law of (first, second): exponential mechanism with ε/2 on PS of the remaining set
    joint = {}
    p1 = dpselect.exponential_probabilities(naive_pareto_score(U), epsilon=eps / 2, sensitivity=n - 1)
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        p2 = dpselect.exponential_probabilities(naive_pareto_score(U[rest]), epsilon=eps / 2, sensitivity=n - 2)
        for jj, j in enumerate(rest):
            joint[(i, j)] = p1[i] * p2[jj]
    keys = sorted(joint)
    counts = np.array([sum(1 for d in draws if d == key) for key in keys])
    assert sum(counts) == len(draws)
    assert stats.chisquare(counts, len(draws) * np.array([joint[k] for k in keys])).pvalue > 1e-3
    assert naive_pareto_score(U).tolist() == [0, 0, -1, -2]
    # the recomputation matters: with fixed scores, P(a then d) would be smaller
    fixed = p1[0] * dpselect.exponential_probabilities(naive_pareto_score(U)[[1, 2, 3]], epsilon=eps / 2, sensitivity=n - 2)[2]
    assert joint[(0, 3)] - fixed > 0.01


@pytest.mark.parametrize("mechanism", dpselect.multiobjective.MECHANISMS)
def test_every_mechanism_runs_global_and_local(mechanism):
    ramp = SensitivityFunction(lambda t: np.minimum(1.0, np.array([0.2, 0.4, 0.6, 0.8, 1.0]) * (t + 1)), 1.0)
    sfs = [constant(5, 1.0), ramp.bounded(5)]
    for sens in ([1.0, 1.0], sfs):
        r = priv_pareto(EX44, epsilon=1.0, sensitivities=sens, mechanism=mechanism, rng=1)
        assert isinstance(r, int) and 0 <= r < 5
        picks = priv_pareto(EX44, epsilon=1.0, sensitivities=sens, mechanism=mechanism, k=5, rng=1)
        assert sorted(picks.tolist()) == [0, 1, 2, 3, 4]
        r = priv_agg(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, mechanism=mechanism, rng=1)
        assert isinstance(r, int) and 0 <= r < 5
        picks = priv_agg(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, mechanism=mechanism, k=3, rng=1)
        assert picks.shape == (3,) and len(set(picks.tolist())) == 3


def test_mechanism_vocabulary_and_aliases():
    """One MECHANISMS definition (dpselect.vocabulary); short aliases in any case select the same mechanism."""
    import dpselect.vocabulary as voc

    assert dpselect.multiobjective.MECHANISMS is voc.MECHANISMS
    assert dpselect.multiobjective.GLOBAL_MECHANISMS is voc.GLOBAL_MECHANISMS
    assert dpselect.multiobjective.LOCAL_MECHANISMS is voc.LOCAL_MECHANISMS
    ramp = SensitivityFunction(lambda t: np.minimum(1.0, np.array([0.2, 0.4, 0.6, 0.8, 1.0]) * (t + 1)), 1.0)
    sfs = [constant(5, 1.0), ramp.bounded(5)]
    for alias, name in (("EM", "exponential"), ("pf", "permute_and_flip"), ("Rnm", "report_noisy_max"),
                        ("LD", "local_dampening"), ("sld", "shifted_local_dampening")):
        sens = sfs if name in voc.LOCAL_MECHANISMS else [1.0, 1.0]
        assert priv_pareto(EX44, epsilon=1.0, sensitivities=sens, mechanism=alias, k=3, rng=7).tolist() == \
            priv_pareto(EX44, epsilon=1.0, sensitivities=sens, mechanism=name, k=3, rng=7).tolist()
        if name != "report_noisy_max":  # its Laplace probabilities are a numerical integral: compare elsewhere
            np.testing.assert_array_equal(priv_agg_probabilities(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, mechanism=alias),
                                          priv_agg_probabilities(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, mechanism=name))


def test_objective_weights_and_base_measure_are_named_apart():
    """priv_agg's objective weights are objective_weights=; base_measure= reaches the mechanism."""
    sens = [1.0, 1.0]
    assert priv_agg(EX44, objective_weights=[0.3, 0.7], epsilon=1.0, sensitivities=sens, k=3,
                    rng=2).tolist() == priv_agg(EX44, [0.3, 0.7], epsilon=1.0, sensitivities=sens, k=3, rng=2).tolist()
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'epsilon'"):
        priv_agg(EX44, [1.0, 1.0], sensitivities=sens)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'objective_weights'"):
        priv_agg_probabilities(EX44, epsilon=1.0, sensitivities=sens)
    # a base measure on the candidates (copies): candidate 4 standing for 3 copies = listing it 3 times
    bm = np.array([1.0, 1.0, 1.0, 1.0, 3.0])
    copies = np.vstack([EX44, EX44[[4, 4]]])
    for mech, sn in (("exponential", sens), ("local_dampening", [constant(5, 1.0), constant(5, 0.5)]),
                     ("permute_and_flip", sens)):
        p = priv_agg_probabilities(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sn, mechanism=mech, base_measure=bm)
        sn7 = sn if mech != "local_dampening" else [constant(7, 1.0), constant(7, 0.5)]
        q = priv_agg_probabilities(copies, [0.5, 0.5], epsilon=1.0, sensitivities=sn7, mechanism=mech)
        np.testing.assert_allclose(p, np.concatenate([q[:4], [q[4:].sum()]]), rtol=1e-12)
    assert 0 <= priv_agg(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, base_measure=bm, rng=0) < 5
    with pytest.raises(ValueError, match="base_measure"):
        priv_agg(EX44, [0.5, 0.5], epsilon=1.0, sensitivities=sens, base_measure=[1.0, 0.0, 1.0, 1.0, 1.0], rng=0)
    with pytest.raises(TypeError, match="cannot be passed as a mechanism option"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=sens, base_measure=bm)


def test_high_epsilon_selects_front_and_best_aggregate():
    for seed in range(20):
        assert priv_pareto(EX44, epsilon=1e4, sensitivities=[1.0, 1.0], rng=seed) in (0, 1)
        assert priv_agg(EX44, [1.0, 0.0], epsilon=1e4, sensitivities=[1.0, 1.0], rng=seed) == 1
        # recomputed on the rest: without a, d is on the front; without b, c is
        first, second = priv_pareto(EX44, epsilon=1e5, sensitivities=[1.0, 1.0], k=2, rng=seed).tolist()
        assert (first, second) in {(0, 1), (0, 3), (1, 0), (1, 2)}


def test_bad_input():
    with pytest.raises(ValueError, match="at least 2 rows"):
        priv_pareto([[1.0, 2.0]], epsilon=1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="one entry per objective"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[1.0])
    with pytest.raises(ValueError, match="finite"):
        priv_pareto([[1.0, np.nan], [0.0, 0.0]], epsilon=1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        priv_pareto(EX44, epsilon=-1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="sensitivities\\[1\\] must be a finite number > 0"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[1.0, 0.0])
    with pytest.raises(TypeError, match="sensitivities\\[0\\] must be a number"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=["1", 1.0])
    with pytest.raises(TypeError, match="one entry per objective"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=1.0)
    with pytest.raises(ValueError, match="is for 3 candidates but objectives has 5 rows"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[constant(3, 1.0), 1.0])
    with pytest.raises(ValueError, match="mechanism must be one of"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[1.0, 1.0], mechanism="laplace")
    with pytest.raises(TypeError, match="unexpected option 'noise'"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[1.0, 1.0], noise="gumbel")
    with pytest.raises(ValueError, match="k must be an int <= 5"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[1.0, 1.0], k=6)
    with pytest.raises(ValueError, match="weights must have one entry per objective"):
        priv_agg(EX44, [1.0], epsilon=1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="weights must be finite"):
        priv_agg(EX44, [1.0, np.inf], epsilon=1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="must be 2-D"):
        pareto_score(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        pareto_sensitivity([[1.0, 1.0]], [1.0, 1.0])
    unbounded = SensitivityFunction(lambda t: np.full(5, 0.5), 1.0)
    with pytest.raises(ValueError, match="needs bounded sensitivity functions.*bounded\\(database_size\\)"):
        priv_pareto(EX44, epsilon=1.0, sensitivities=[unbounded, 1.0], mechanism="shifted_local_dampening")
    with pytest.raises(ValueError, match="needs bounded sensitivity functions"):
        priv_agg_probabilities(EX44, [1, 1], epsilon=1.0, sensitivities=[1.0, unbounded], mechanism="shifted_local_dampening")


# -- exact DP audits and admissibility on tiny TPR/TNR datasets (add/remove one record) ----------------
# A record is (label, prediction of classifier 0, 1, 2); a dataset is a sorted tuple of record types.
RECORDS = list(itertools.product((0, 1), repeat=4))


def _objectives(data):
    from dpselect.utilities.classification import tnr, tpr

    arr = np.array([RECORDS[i] for i in data], dtype=int).reshape(-1, 4)
    y, pred = arr[:, 0], arr[:, 1:].T
    return np.column_stack([tpr(y, pred), tnr(y, pred)]), y, pred


def _local_sfs(data):
    from dpselect.utilities.classification import tnr_sensitivity, tpr_sensitivity

    _, y, pred = _objectives(data)
    return [tpr_sensitivity(y, pred), tnr_sensitivity(y, pred)]


def _neighbours(data):
    out = [tuple(data[:i] + data[i + 1:]) for i in range(len(data))]
    out += [tuple(sorted(data + (r,))) for r in range(len(RECORDS))]
    return list(dict.fromkeys(out))


def _audit_pairs(seed, n_datasets, size):
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n_datasets):
        x = tuple(sorted(rng.integers(0, len(RECORDS), size).tolist()))
        pairs += [(x, y) for y in _neighbours(x)]
    return pairs


AUDITS = [
    ("pareto", "exponential", False), ("pareto", "permute_and_flip", False),
    ("pareto", "local_dampening", True), ("pareto", "shifted_local_dampening", True),
    ("agg", "exponential", False), ("agg", "local_dampening", True), ("agg", "shifted_local_dampening", True),
]


@pytest.mark.parametrize("kind,mechanism,local", AUDITS)
def test_exact_dp_audit_tpr_tnr(kind, mechanism, local):
    eps = 1.0
    pairs = _audit_pairs(seed=len(mechanism) + (kind == "agg"), n_datasets=6, size=5)

    def prob(data):
        U, _, _ = _objectives(data)
        sens = _local_sfs(data) if local else [1.0, 1.0]
        if kind == "pareto":
            return priv_pareto_probabilities(U, epsilon=eps, sensitivities=sens, mechanism=mechanism)
        return priv_agg_probabilities(U, [0.7, 0.3], epsilon=eps, sensitivities=sens, mechanism=mechanism)

    res = dpselect.audit.exact_dp_audit(prob, pairs, epsilon=eps)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.0  # the datasets do move the distribution


def test_audit_detects_too_small_sensitivities():
    eps = 1.0
    pairs = _audit_pairs(seed=0, n_datasets=6, size=4)

    def prob_agg(data):
        U, _, _ = _objectives(data)
        return priv_agg_probabilities(U, [0.5, 0.5], epsilon=eps, sensitivities=[0.05, 0.05])

    assert not dpselect.audit.exact_dp_audit(prob_agg, pairs, epsilon=eps).passed

    def prob_pareto(data):  # δ_i scaled down by 100: not admissible any more
        U, y, pred = _objectives(data)
        sfs = [SensitivityFunction(lambda t, s=s: 0.01 * s(t), 1.0) for s in _local_sfs(data)]
        return priv_pareto_probabilities(U, epsilon=eps, sensitivities=sfs)

    assert not dpselect.audit.exact_dp_audit(prob_pareto, pairs, epsilon=eps).passed


def _universe(max_size, types):
    for size in range(1, max_size + 1):
        yield from itertools.combinations_with_replacement(types, size)


@pytest.mark.parametrize("kind", ["pareto", "agg"])
def test_admissibility_of_delta_ps_and_delta_agg(kind):
    types = [0, 3, 5, 9, 10, 12, 15]  # a mix of labels and predictions

    def utility(data):
        U, _, _ = _objectives(data)
        return pareto_score(U) if kind == "pareto" else U @ np.array([0.7, -0.3])

    def sensitivity(data):
        U, _, _ = _objectives(data)
        sfs = _local_sfs(data)
        return pareto_sensitivity(U, sfs) if kind == "pareto" else aggregate_sensitivity([0.7, -0.3], sfs)

    def neighbours(data):
        return [y for y in _neighbours(data) if y and all(r in types for r in y)]

    rep = dpselect.audit.check_admissibility(utility, sensitivity, neighbours, _universe(4, types), t_max=4)
    assert rep.ok, rep.violation
    assert rep.n_pairs > 500


def test_admissibility_checker_rejects_underestimated_delta_ps():
    types = [0, 3, 5, 9, 10, 12, 15]

    def utility(data):
        return pareto_score(_objectives(data)[0])

    def sensitivity(data):
        U, _, _ = _objectives(data)
        sfs = [SensitivityFunction(lambda t, s=s: 0.05 * s(t), 1.0) for s in _local_sfs(data)]
        return pareto_sensitivity(U, sfs)

    def neighbours(data):
        return [y for y in _neighbours(data) if y and all(r in types for r in y)]

    rep = dpselect.audit.check_admissibility(utility, sensitivity, neighbours, _universe(3, types), t_max=2)
    assert not rep.ok


# -- issue 11: one δ^PS shared by several threads ---------------------------------------------------
def _race_instance(n=60, seed=0):
    rng = np.random.default_rng(seed)
    U = rng.integers(0, 40, size=(n, 2)).astype(float)
    a, b = rng.uniform(0.2, 1.0, size=n), rng.uniform(0.2, 1.0, size=n)
    sfs = [SensitivityFunction(lambda t, a=a: np.minimum(1.0, a * (1 + 0.3 * t)), 1.0),
           SensitivityFunction(lambda t, b=b: np.minimum(1.0, b * (1 + 0.2 * t)), 1.0)]
    return U, sfs


def _hammer(fn, n_threads=4, calls=150):
    """Run fn() calls times in each of n_threads threads with a tiny switch interval; count False results."""
    import sys
    import threading

    wrong = [0] * n_threads
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the unsafe version failed 723/800

    def work(i):
        for _ in range(calls):
            if not fn():
                wrong[i] += 1

    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    return sum(wrong)


def test_pareto_sensitivity_shared_by_threads_calling_dampen():
    U, sfs = _race_instance()
    ps = pareto_score(U).astype(float) - 3.0
    expected = dpselect.dampening.dampen(ps, pareto_sensitivity(U, sfs))
    assert np.all(np.isfinite(expected)) and expected.min() < -3.0   # walks several distances
    shared = pareto_sensitivity(U, sfs)
    assert _hammer(lambda: np.array_equal(dpselect.dampening.dampen(ps, shared), expected)) == 0


def test_pareto_sensitivity_shared_by_threads_any_order_of_t():
    U, sfs = _race_instance(n=40, seed=3)
    fresh = pareto_sensitivity(U, sfs)
    expected = {t: fresh(t) for t in range(8)}
    idx = np.array([0, 5, 17, 39])
    expected_sub = {t: pareto_sensitivity(U, sfs)(t, candidates=idx) for t in range(8)}
    shared = pareto_sensitivity(U, sfs)
    order = np.random.default_rng(5).permutation(np.repeat(np.arange(8), 3))

    def check():
        return all(np.array_equal(shared(int(t)), expected[int(t)])
                   and np.array_equal(shared(int(t), candidates=idx), expected_sub[int(t)]) for t in order)

    assert _hammer(check, calls=20) == 0


def test_priv_agg_sensitivity_and_pareto_probabilities_shared_across_threads():
    U, sfs = _race_instance(n=30, seed=7)
    agg = aggregate_sensitivity([0.7, -0.3], sfs)
    u = U @ np.array([0.7, -0.3])
    exp_agg = dpselect.dampening.dampen(u, aggregate_sensitivity([0.7, -0.3], sfs))
    exp_pp = priv_pareto_probabilities(U, epsilon=1.0, sensitivities=sfs)
    assert _hammer(lambda: np.array_equal(dpselect.dampening.dampen(u, agg), exp_agg)
                   and np.array_equal(priv_pareto_probabilities(U, epsilon=1.0, sensitivities=sfs), exp_pp), calls=40) == 0


def test_failed_step_leaves_delta_ps_consistent():
    U, sfs = _race_instance(n=10, seed=1)
    calls = {"n": 0}

    def flaky(t):
        calls["n"] += 1
        if calls["n"] == 2:            # the second objective fails once, at t = 1
            raise RuntimeError("transient")
        return np.full(10, 0.25)

    sfs2 = [sfs[0], SensitivityFunction(flaky, 1.0)]
    sf = pareto_sensitivity(U, sfs2)
    sf(0)
    with pytest.raises(RuntimeError, match="transient"):
        sf(1)
    ref = pareto_sensitivity(U, [sfs[0], SensitivityFunction(lambda t: np.full(10, 0.25), 1.0)])
    assert np.array_equal(sf(1), ref(1)) and np.array_equal(sf(2), ref(2))


@pytest.mark.parametrize("weights", [["a", "b"], ["0.5", "0.5"], "ab", [0.5, None]])
def test_non_numeric_weights_name_weights(weights):
    U = [[1.0, 2.0], [2.0, 1.0]]
    for call in (lambda: priv_agg(U, weights, epsilon=1.0, sensitivities=[1.0, 1.0], rng=0),
                 lambda: priv_agg_probabilities(U, weights, epsilon=1.0, sensitivities=[1.0, 1.0]),
                 lambda: aggregate_sensitivity(weights, [constant(2, 1.0), constant(2, 1.0)])):
        with pytest.raises(TypeError, match=r"weights must be a 1-D array of 2 finite numbers, got"):
            call()


def test_metric_c_bad_input():
    from dpselect.multiobjective import metric_c

    assert metric_c([[0.9, 0.9]], [[0.5, 0.5], [0.95, 0.1]]) == 0.5
    with pytest.raises(TypeError, match="reference must be an \\(n, m\\) array of real numbers, got dtype <U1"):
        metric_c([["a", "b"]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"reference must be finite: it holds a NaN or an infinite entry$"):
        metric_c([[np.nan, 1.0]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"candidates must be 2-D \(candidates x objectives\), got a 1-D array"):
        metric_c([[1.0, 2.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"candidates must have at least 1 rows"):
        metric_c([[1.0, 2.0]], np.empty((0, 2)))
    with pytest.raises(ValueError, match=r"equal m, got \(1, 2\), \(1, 3\)"):
        metric_c([[1.0, 2.0]], [[1.0, 2.0, 3.0]])


def test_count_dominating_rejects_nan_strings_and_non_bool_strict():
    from dpselect._dominance import count_dominating

    assert count_dominating([[1.0, np.inf], [2.0, -np.inf]]).tolist() == [0, 0]   # ±inf order fine
    with pytest.raises(ValueError, match=r"^points must not contain NaN$"):
        count_dominating([[1.0, 2.0], [np.nan, 1.0]])
    with pytest.raises(ValueError, match=r"queries must not contain NaN"):
        count_dominating([[1.0, 2.0]], [[1.0, np.nan]])
    with pytest.raises(TypeError, match="points must be an \\(n, m\\) array of real numbers, got dtype <U1"):
        count_dominating([["a", "b"]])
    with pytest.raises(TypeError, match="strict must be a bool, got 'yes'"):
        count_dominating([[1.0, 2.0]], strict="yes")


def test_shifted_local_dampening_on_pareto_completes_when_the_walk_cannot_finish():
    # issue 33: this was a ValueError that depended on the objectives' range (a release); δ^PS is now forced to
    # its bound n − 1 from the public distance max(max_steps, 10^6) on (admissible), so the shift is finite:
    # here δ^PS = 0 for both candidates up to there, G = 10^6 for both, and the law is the exponential
    # mechanism's on PS = (−1, 0) with Δ = 1
    import time

    sens = [dpselect.constant(2, 1e-300).bounded(5)]
    t0 = time.perf_counter()
    p = priv_pareto_probabilities([[0.0], [1.0]], epsilon=1.0, sensitivities=sens, mechanism="shifted_local_dampening")
    assert p[0] == pytest.approx(np.exp(-0.5) / (1 + np.exp(-0.5)), rel=1e-12)
    assert priv_pareto([[0.0], [1.0]], epsilon=1.0, sensitivities=sens, mechanism="shifted_local_dampening",
                       rng=0) in (0, 1)
    assert priv_pareto([[0.0, 1.0], [1.0, 0.0], [0.5, -1.0]], k=2, epsilon=1.0, rng=0, max_steps=2_000_000,
                       sensitivities=[dpselect.constant(3, 1e-300).bounded(5)] * 2,
                       mechanism="shifted_local_dampening").shape == (2,)
    assert time.perf_counter() - t0 < 5.0
    # the saturation distance of δ^PS is not declared when beyond the walk cap (it would disable max_steps)
    assert pareto_sensitivity([[0.0], [1.0]], sens).saturation_distance is None
    assert pareto_sensitivity([[0.0], [1.0]], [dpselect.constant(2, 0.1).bounded(5)]).saturation_distance == 5
    # on the scale of the objectives it runs: a bound 0.25 per step, range 1 -> 2 steps
    p = priv_pareto_probabilities([[0.0], [1.0]], epsilon=1.0, sensitivities=[dpselect.constant(2, 0.25).bounded(5)],
                                  mechanism="shifted_local_dampening")
    assert p.shape == (2,) and abs(p.sum() - 1) < 1e-12 and p[1] > p[0]


def test_local_dampening_on_pareto_completes_when_the_walk_cannot_finish():
    # issue 33: this was a ValueError that depended on the objectives' range (a release); the walk is now
    # clipped at max_steps (D = −max_steps for a dominated candidate whose δ^PS is 0 up to there), at once
    import time
    from dpselect.dampening import dampen_with_error

    t0 = time.perf_counter()
    sens = [dpselect.constant(2, 1e-300).bounded(5)]
    assert priv_pareto([[0.0], [1.0]], epsilon=1.0, sensitivities=sens, mechanism="local_dampening", rng=0) == 1
    assert priv_pareto_probabilities([[0.0], [1.0]], epsilon=1.0, sensitivities=sens,
                                     mechanism="local_dampening").tolist() == [0.0, 1.0]
    # gap 1, δ = 5e-7 < Δ = 1e-6 per step and per side (never saturating): δ^PS(x, t, 0) = 0 until t + 1 >= 5e5 >
    # max_steps, so D = −1e5 (clipped, exact)
    slow = [dpselect.SensitivityFunction(lambda t: np.full(2, 5e-7), 1e-6)]
    sf = pareto_sensitivity([[0.0], [1.0]], slow)
    D, err = dampen_with_error([-1.0, 0.0], sf, max_steps=100_000)
    assert D.tolist() == [-100_000.0, 0.0] and err.tolist() == [0.0, 0.0]
    p = priv_pareto_probabilities([[0.0], [1.0]], epsilon=1e-5, sensitivities=slow, mechanism="local_dampening",
                                  max_steps=100_000)
    assert p[0] == pytest.approx(np.exp(-0.5) / (1 + np.exp(-0.5)), rel=1e-12)
    # a bounded function is never clipped: δ^PS saturates at 5e5 + 1, and D = −500001 (was refused as well)
    sf = pareto_sensitivity([[0.0], [1.0]], [dpselect.constant(2, 1e-6)])
    assert dampen_with_error([-1.0, 0.0], sf, max_steps=100_000)[0].tolist() == [-500_001.0, 0.0]
    slow3 = [dpselect.SensitivityFunction(lambda t: np.full(3, 5e-7), 1e-6)] * 2
    assert priv_pareto([[0.0, 1.0], [1.0, 0.0], [0.5, -1.0]], epsilon=1.0, k=2, rng=1, mechanism="local_dampening",
                       sensitivities=slow3, max_steps=100_000).shape == (2,)
    assert time.perf_counter() - t0 < 5.0
    # ties: the tied non-dominator counts at t = 0, so nothing is refused however small the sensitivities
    p = priv_pareto_probabilities([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]], epsilon=1.0, sensitivities=[1e-300, 1e-300],
                                  mechanism="local_dampening")
    assert p.shape == (3,) and abs(p.sum() - 1) < 1e-12


def test_dampening_walk_bound_never_exceeds_the_true_first_distance():
    """The bound of _far_dominated against δ^PS itself: t + 1 >= bound at the first t with δ^PS >= 1, and every
    candidate of its mask for a limit has δ^PS = 0 below it."""
    from dpselect.multiobjective import _far_dominated  # noqa: F401  (the code under test)

    rng = np.random.default_rng(0)
    checked = flagged = 0
    for _ in range(120):
        n, m = int(rng.integers(2, 7)), int(rng.integers(1, 4))
        U = rng.integers(0, 6, size=(n, m)).astype(float) * rng.choice([0.1, 1.0, 3.0])
        D = rng.choice([0.05, 0.1, 0.3, 1.0], size=m)
        grow = rng.random() < 0.5
        sfs = [SensitivityFunction(lambda t, b=(rng.uniform(0.1, 1.0, n) * D[i] if grow else np.full(n, D[i])),
                                   d=D[i]: np.minimum(d, b * (1 + 0.5 * t)), float(D[i])) for i in range(m)]
        dom = np.flatnonzero(pareto_score(U) < 0)
        if dom.size == 0:
            continue
        sf = pareto_sensitivity(U, sfs)
        first_t = {}
        for t in range(400):
            v = sf(t)
            first_t.update({int(r): t for r in dom if int(r) not in first_t and v[r] >= 1})
            if len(first_t) == dom.size:
                break
        diff = U[None] - U[dom, None]
        scaled = diff / (2 * D)
        d = (diff > 0).all(axis=2)
        need = np.minimum(np.where(d, scaled.min(axis=2), np.inf),
                          np.where(d | (np.arange(n)[None, :] == dom[:, None]), np.inf,
                                   np.maximum(-scaled, 0).max(axis=2)))
        for k, r in enumerate(dom):
            checked += 1
            assert first_t.get(int(r), 10 ** 9) + 1 >= need[k].min() - 1e-9
        for limit in (1, 2, 3, 5):
            far = np.flatnonzero(_far_dominated(U, sfs, limit))
            assert all(first_t.get(int(r), 10 ** 9) >= limit for r in far)
            flagged += far.size
    assert checked > 150 and flagged > 50


# -- the shift of δ^PS in closed form (issue 16) -----------------------------------------------------
def _table_sf(vals: np.ndarray, delta: float, sat: int) -> SensitivityFunction:
    """δ(t, r) = vals[r, min(t, last)] (non-decreasing rows ending at Δ), bounded at ``sat``."""
    def fn(t, candidates=None):
        v = vals[:, min(t, vals.shape[1] - 1)]
        return v if candidates is None else v[candidates]

    return SensitivityFunction(fn, delta, n_candidates=vals.shape[0], saturation_distance=sat)


def test_pareto_shift_equals_the_walk_and_the_exact_sum():
    """The δ^PS shift hook (inclusion–exclusion over shrinking sets, uniform objectives in blocks of
    distances) gives exactly Σ_t (n − 1 − δ^PS(t, r)) of the step-by-step walk, and the exact rational
    sum of shift_total_exact: ties, float sensitivities that round, constant objectives, m = 1..3."""
    from fractions import Fraction

    from dpselect.dampening import shift_total_exact, shift_totals_with_error
    from dpselect.multiobjective import _pareto_sf, _pareto_shift

    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(250):
        n, m = int(rng.integers(2, 22)), int(rng.integers(1, 4))
        U = rng.integers(0, 6, (n, m)).astype(float) if trial % 2 else rng.random((n, m)) * 3
        sfs = []
        for i in range(m):
            kind = int(rng.integers(0, 3))
            if kind == 0:
                sfs.append(constant(n, float(rng.choice([0.5, 1.0, 0.3]))))
            else:
                T = int(rng.integers(1, 6))
                vals = np.sort(rng.random((n, T)) * rng.random(), axis=1)
                if kind == 2:
                    vals = np.round(vals * 4) / 4
                sfs.append(_table_sf(np.concatenate([vals, np.ones((n, 1))], axis=1), 1.0, T))
        sf = _pareto_sf(U, sfs, None)
        assert sf.shift is not None
        G, err = shift_totals_with_error(sf, n)     # few candidates: blocks of distances
        assert np.all(err == 0)
        ref = _stepwise_shift(_pareto_sf(U, sfs, None))
        assert np.array_equal(G, ref)
        assert np.array_equal(_pareto_shift(U, sfs, None, sf.saturation_distance), ref)   # the set-based sum
        for r in range(n):
            assert Fraction(float(G[r])) == shift_total_exact(sf, r)
            checked += 1
        # the elementwise (block) evaluation equals one distance per call
        ts = rng.integers(0, sf.saturation_distance + 3, 40)
        rs = rng.integers(0, n, 40)
        step = _pareto_sf(U, sfs, None)
        assert np.array_equal(sf.at(ts, rs), [step(int(t))[r] for t, r in zip(ts, rs)])
    assert checked > 2000


def _stepwise_shift(sf: SensitivityFunction) -> np.ndarray:
    """Σ_t (Δ − δ(t)) by the definition: one full evaluation per distance (scalar t), in integers."""
    n, full = sf.n_candidates, sf.global_sensitivity
    G = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    for t in range(sf.saturation_distance):
        d = sf(t)
        done |= d >= full
        G += np.where(done, 0.0, full - d)
    return G


def test_pareto_shift_on_graph_statistics_and_subsets():
    """Degree (constant δ) and egocentric density with power-law degrees, on all candidates and on a
    subset of the base functions' candidates (PrivPareto top-k after a pick), m = 2 and 3."""
    from dpselect.dampening import shift_totals_with_error
    from dpselect.multiobjective import _pareto_sf
    from dpselect.utilities.graph import degree_sensitivity, egocentric_density_sensitivity

    rng = np.random.default_rng(5)
    for trial in range(4):
        n = 300
        d = np.minimum(np.floor(rng.pareto(1.2, n) + 1), 150).astype(np.int64)
        e = np.where(d >= 2, rng.beta(0.5, 2, n), 0.0)
        extra = trial >= 2
        U = np.column_stack([d, e] + ([rng.integers(0, 30, n)] if extra else [])).astype(float)
        base = None if trial % 2 == 0 else np.sort(rng.choice(n + 40, n, replace=False))
        full = d if base is None else np.full(n + 40, 3, dtype=np.int64)
        if base is not None:
            full[base] = d
        sfs = [degree_sensitivity(full), egocentric_density_sensitivity(full)]
        if extra:
            sfs.append(constant(full.size, 0.7))
        G = shift_totals_with_error(_pareto_sf(U, sfs, base), n)[0]
        assert np.array_equal(G, _stepwise_shift(_pareto_sf(U, sfs, base)))


@pytest.mark.parametrize("m", [3, 4])
@pytest.mark.parametrize("engine", ["bitset", "hybrid"])
def test_pareto_score_and_delta_ps_with_the_bitset_engines(monkeypatch, m, engine):
    # issue 22: m >= 3 counts by bitsets per block of points (alone, or in the query's own block with
    # divide and conquer over the blocks after it); blocks of 64 points so that 600 candidates span
    # ten blocks; both δ^PS terms (non-strict on U + cum vs U − cum, strict the other way) checked
    # against explicit domination masks
    monkeypatch.setattr(dpselect._dominance, "_BITSET_BLOCK", 64)
    monkeypatch.setattr(dpselect._dominance, "_BITSET_LIMIT", 10**18 if engine == "bitset" else 0)
    rng = np.random.default_rng(40 + m)
    n = 600
    U = rng.integers(0, 6, (n, m)).astype(float)
    np.testing.assert_array_equal(pareto_score(U), -(U[None, :, :] > U[:, None, :]).all(axis=2).sum(axis=1))
    pairs = [random_sf(rng, n, 2.0) for _ in range(m)]
    sf = pareto_sensitivity(U, [p[0] for p in pairs])
    dom = (U[None, :, :] > U[:, None, :]).all(2)
    np.fill_diagonal(dom, False)
    other = ~np.eye(n, dtype=bool)
    for t in (0, 1, 3):
        cum = sum(np.column_stack([pairs[i][1](j) for i in range(m)]) for j in range(t + 1))
        H, L = U + cum, U - cum
        can_lose = (L[None, :, :] <= H[:, None, :]).any(2)
        can_gain = (H[None, :, :] >= L[:, None, :]).all(2)
        ref = (dom & can_lose).sum(1) + (~dom & other & can_gain).sum(1)
        np.testing.assert_array_equal(sf(t), np.minimum(ref, n - 1))
        idx = np.sort(rng.choice(n, size=150, replace=False))
        np.testing.assert_array_equal(sf(t, candidates=idx), np.minimum(ref, n - 1)[idx])


@pytest.mark.parametrize("seed", range(4))
def test_delta_ps_thresholds_with_rate_tables_equal_the_walk(seed):
    # issue 22 item 6: with sensitivity functions that give whole tables (rate_sensitivity's block hook) the
    # thresholds' sums (distances along axis 0, summed in place) are the walk's sums: same δ^PS at every
    # distance and the same shift as Σ_t (n − 1 − δ^PS) by the one-distance-per-call walk
    from dpselect.utilities.classification import rate_sensitivity
    from dpselect.multiobjective import _saturation
    rng = np.random.default_rng(900 + seed)
    n, P = int(rng.integers(5, 60)), int(rng.integers(20, 120))
    hits = [rng.integers(0, P + 1, n) for _ in range(2)]
    sfs = [rate_sensitivity(h, P - h) if i == 0 else rate_sensitivity(h, rng.integers(0, P, n))
           for i, h in enumerate(hits)]
    U = np.column_stack([h / P for h in hits])
    U[1] = U[0]                                         # a tie of two candidates
    sat = _saturation(U, sfs)
    walk = _ParetoDelta(U, sfs, None)
    per_t = np.stack([walk(t) for t in range(sat)])     # (sat, n)
    G = _ParetoDelta(U, sfs, None).shift(sat)
    assert np.array_equal(G, ((n - 1) - per_t).sum(axis=0))
    ts, cs = rng.integers(0, sat, 400), rng.integers(0, n, 400)
    assert np.array_equal(_ParetoDelta(U, sfs, None).at(ts, cs), per_t[ts, cs])


def test_select_model_same_picks_as_before_issue_22():
    # the law of select_model is unchanged by the faster δ^PS thresholds and rate tables: picks for seeds 0-7
    # recorded with the code before issue 22 (main at the time), 60 models of which pairs may tie
    from dpselect.sklearn import select_model
    rng = np.random.default_rng(22)
    y = rng.integers(0, 2, 400)
    P = np.array([np.where(rng.random(400) < f, 1 - y, y) for f in np.repeat(rng.uniform(0.05, 0.5, 30), 2)])
    got = {m: [int(select_model(y=y, predictions=P, epsilon=1.0, rng=s, mechanism=m)) for s in range(8)]
           for m in ("LD", "SLD")}
    assert got == {"LD": [26, 29, 55, 21, 0, 9, 4, 16], "SLD": [26, 23, 31, 15, 2, 9, 36, 19]}


# -- issue 23 item 3: the multi-objective matrix is called ``objectives`` everywhere ----------------------------
def test_objectives_errors_name_the_parameter():
    with pytest.raises(ValueError, match="objectives must be 2-D"):
        priv_pareto(np.zeros((2, 2, 2)), epsilon=1.0, sensitivities=[1.0, 1.0])


# -- issue 24 item 1: accountant= on PrivPareto and PrivAgg --------------------------------------------------
def _acc_calls():
    U = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1], [2, 2]], dtype=float)
    sfs = [constant(6, 1.0), constant(6, 1.0)]
    return [
        ("priv_pareto", lambda **kw: priv_pareto(U, epsilon=0.6, sensitivities=[1.0, 1.0], k=3, **kw),
         "priv_pareto(mechanism='exponential', k=3)"),
        ("priv_pareto", lambda **kw: priv_pareto(U, epsilon=0.6, sensitivities=sfs, mechanism="LD", **kw),
         "priv_pareto(mechanism='local_dampening', k=1)"),
        ("priv_agg", lambda **kw: priv_agg(U, [0.5, 0.5], epsilon=0.6, sensitivities=[1.0, 1.0], mechanism="PF", k=2,
                                           **kw),
         "priv_agg(mechanism='permute_and_flip', k=2)"),
        ("priv_agg", lambda **kw: priv_agg(U, [1.0, -1.0], epsilon=0.6, sensitivities=sfs, mechanism="SLD", **kw),
         "priv_agg(mechanism='shifted_local_dampening', k=1)"),
    ]


@pytest.mark.parametrize("case", range(4))
def test_multiobjective_accountant_charges_before_drawing(case):
    from dpselect import Accountant, BudgetExceededError, get_mechanism
    _, call, label = _acc_calls()[case]
    mech = {"exponential": "EM", "local_dampening": "LD", "permute_and_flip": "PF",
            "shifted_local_dampening": "SLD"}[label.split("'")[1]]
    k = int(label.rsplit("k=", 1)[1][:-1])
    # a valid release: charged once with the mechanism's guarantee of k picks, and the same picks as without
    acc = Accountant(epsilon=1.0)
    got = call(rng=np.random.default_rng(3), accountant=acc)
    assert np.array_equal(got, call(rng=np.random.default_rng(3)))
    assert len(acc.history) == 1
    assert acc.history[0].label == label
    assert repr(acc.history[0].guarantee) == repr(get_mechanism(mech).privacy(0.6, k=k))
    assert acc.spent().epsilon_ == pytest.approx(0.6)
    # the second one would exceed the budget: refused, nothing recorded, the generator untouched
    gen = np.random.default_rng(4)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        call(rng=gen, accountant=acc)
    assert gen.bit_generator.state == state
    assert len(acc.history) == 1 and acc.spent().epsilon_ == pytest.approx(0.6)


def test_multiobjective_accountant_refuses_bad_arguments_before_charging():
    from dpselect import Accountant
    U = np.array([[3, 5], [5, 3], [4, 2]], dtype=float)
    acc = Accountant(epsilon=1.0)
    with pytest.raises(TypeError, match="accountant"):
        priv_pareto(U, epsilon=0.5, sensitivities=[1.0, 1.0], accountant=1.0)
    with pytest.raises(ValueError, match="objective_weights"):
        priv_agg(U, [0.0, 0.0], epsilon=0.5, sensitivities=[1.0, 1.0], accountant=acc)
    with pytest.raises(ValueError, match="k"):
        priv_pareto(U, epsilon=0.5, sensitivities=[1.0, 1.0], k=4, accountant=acc)
    assert acc.history == ()


def test_bad_option_values_are_refused_before_the_charge():
    """A bad mechanism option (base measure, monotonic, direction, max_steps, noise) is refused before the
    accountant is charged: a refused call costs no budget."""
    import dpselect
    U = np.array([[0.9, 0.1], [0.6, 0.7], [0.2, 0.3]])
    cases = [
        (dpselect.multiobjective.priv_agg, dict(objective_weights=[0.5, 0.5], mechanism="PF", base_measure=[1.0, 0.5, 2.0]), ValueError),
        (dpselect.multiobjective.priv_agg, dict(objective_weights=[0.5, 0.5], base_measure=[1.0, -1.0, 2.0]), ValueError),
        (dpselect.multiobjective.priv_agg, dict(objective_weights=[0.5, 0.5], monotonic="yes"), TypeError),
        (dpselect.multiobjective.priv_pareto, dict(monotonic="yes"), TypeError),
        (dpselect.multiobjective.priv_pareto, dict(mechanism="RNM", noise="cauchy"), ValueError),
    ]
    for fn, kw, err in cases:
        acc = dpselect.Accountant(epsilon=10.0)
        rng = np.random.default_rng(3)
        state = rng.bit_generator.state
        with pytest.raises(err):
            fn(U, epsilon=1.0, sensitivities=[1.0, 1.0], rng=rng, accountant=acc, **kw)
        assert acc.history == () and rng.bit_generator.state == state, (fn.__name__, kw)
    # the same calls with good values are charged once and release a pick
    acc = dpselect.Accountant(epsilon=10.0)
    dpselect.multiobjective.priv_agg(U, [0.5, 0.5], epsilon=1.0, sensitivities=[1.0, 1.0], mechanism="PF", base_measure=[1, 3, 2],
                      monotonic=False, rng=0, accountant=acc)
    assert len(acc.history) == 1
