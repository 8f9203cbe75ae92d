"""Closed forms of the optimal binary mechanisms (paper 002 Def. 9 / Cor. 2, paper 001 Thm 2-3)."""
import math

import numpy as np
import pytest

from dpselect.binary import (DPPair, FunctionPair, balanced_boundary_value, balanced_probability,
                             dp_upper, optimal_mechanism, p, path_extension, tau)

LOG2 = math.log(2)


def iterate_upper(alpha, d, eps, delta):
    a = np.asarray(alpha, dtype=float)
    for _ in range(d):
        a = dp_upper(a, epsilon=eps, delta=delta)
    return a


def test_example3_values():
    # paper 002, Example 3 and its footnote (tau = 2 for 0.1, tau = 1 for 0.3)
    assert p(3, 0.1, epsilon=LOG2) == pytest.approx(0.7, abs=1e-12)
    assert p(3, 0.3, epsilon=LOG2) == pytest.approx(0.9, abs=1e-12)
    assert p(1, 0.3, epsilon=LOG2) == pytest.approx(0.6, abs=1e-12)
    assert p(2, 0.1, epsilon=LOG2) == pytest.approx(0.4, abs=1e-12)
    assert p(2, 0.3, epsilon=LOG2) == pytest.approx(0.8, abs=1e-12)
    assert p(1, 0.1, epsilon=LOG2) == pytest.approx(0.2, abs=1e-12)
    assert tau(0.1, epsilon=LOG2).tolist() == 2.0 and tau(0.3, epsilon=LOG2).tolist() == 1.0


@pytest.mark.parametrize("eps", [0.05, 0.5, LOG2, 2.0])
@pytest.mark.parametrize("delta", [0.0, 0.01, 0.2])
def test_p_equals_iterated_upper(eps, delta):
    alpha = np.concatenate([[0.0, 1.0, 1e-9], np.linspace(0, 1, 101)])
    for d in range(0, 40):
        np.testing.assert_allclose(p(d, alpha, epsilon=eps, delta=delta), iterate_upper(alpha, d, eps, delta),
                                   rtol=0, atol=1e-9, err_msg=f"d={d}")


def test_p_broadcasts_and_scalar_type():
    assert isinstance(p(2, 0.2, epsilon=1.0), float)
    out = p(np.arange(4)[:, None], np.array([0.1, 0.5]), epsilon=1.0)
    assert out.shape == (4, 2)
    assert out[0].tolist() == [0.1, 0.5]


def test_p_zero_alpha_pure_dp_stays_zero_and_clamped_at_one():
    assert p(50, 0.0, epsilon=1.0) == 0.0
    assert p(50, 0.5, epsilon=1.0, delta=0.3) == 1.0        # delta > 0 reaches 1 in finitely many steps
    assert p(3, 1.0, epsilon=1.0) == 1.0


@pytest.mark.parametrize("bad,exc", [
    (dict(d=-1, alpha=0.1, epsilon=1.0), ValueError), (dict(d=1.5, alpha=0.1, epsilon=1.0), ValueError),
    (dict(d=1, alpha=1.2, epsilon=1.0), ValueError), (dict(d=1, alpha=0.1, epsilon=0.0), ValueError),
    (dict(d=1, alpha=0.1, epsilon=1.0, delta=1.0), ValueError), (dict(d="1", alpha=0.1, epsilon=1.0), TypeError),
    (dict(d=1, alpha=float("nan"), epsilon=1.0), ValueError),
])
def test_p_rejects_bad_input(bad, exc):
    with pytest.raises(exc):
        p(**bad)


@pytest.mark.parametrize("eps,delta", [(0.3, 0.0), (1.0, 0.0), (1.0, 0.05), (2.5, 0.2)])
def test_balanced_corollary2_equals_p_and_general_algorithm(eps, delta):
    a_star = balanced_boundary_value(epsilon=eps, delta=delta)
    d = np.arange(0, 30)
    np.testing.assert_allclose(balanced_probability(d, epsilon=eps, delta=delta), p(d, a_star, epsilon=eps, delta=delta), atol=1e-12)
    # general algorithm on a 2-D grid coloured by a threshold on x + y, boundary fixed at the balanced value
    W = 12
    idx = lambda x, y: x * W + y  # noqa: E731
    edges = [(idx(x, y), idx(x + 1, y)) for x in range(W - 1) for y in range(W)]
    edges += [(idx(x, y), idx(x, y + 1)) for x in range(W) for y in range(W - 1)]
    T = {idx(x, y): int(x + y >= 9) for x in range(W) for y in range(W)}
    bnd = {u for e in edges if T[e[0]] != T[e[1]] for u in e}
    partial = {v: (a_star if T[v] == 1 else 1 - a_star) for v in bnd}
    mech = optimal_mechanism(edges, T, partial, epsilon=eps, delta=delta)
    for x in range(W):
        for y in range(W):
            s = x + y
            dist = s - 9 if s >= 9 else 8 - s
            assert mech.correct_probability(idx(x, y)) == pytest.approx(
                float(balanced_probability(dist, epsilon=eps, delta=delta)), abs=1e-12)


def test_balanced_probability_needs_clamp_with_delta():
    # printed Cor. 2 exceeds 1 for large d when delta > 0; the clamp gives exactly 1
    eps, delta, d = 1.0, 0.1, 10
    e = math.exp(eps)
    printed = 1 - (e - 1 - delta * (math.exp(eps * (d + 1)) + math.exp(eps * d) - 2)) / (
        math.exp(d * eps) * (e + 1) * (e - 1))
    assert printed > 1
    assert balanced_probability(d, epsilon=eps, delta=delta) == 1.0


def iterate_path(alpha, eps):
    out = [alpha]
    for e in eps:  # paper 001, Eq. (11)
        x = out[-1]
        out.append(min(math.exp(e) * x, (x - 1 + math.exp(e)) / math.exp(e), 1.0))
    return np.array(out)


@pytest.mark.parametrize("seed", range(8))
def test_path_closed_form_heterogeneous_matches_recursion_and_algorithm(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    eps = rng.uniform(0.05, 2.0, n)
    alpha = float(rng.choice([rng.uniform(0, 1), rng.uniform(0, 0.01), 0.0, 1.0]))
    closed = path_extension(alpha, epsilons=eps)
    np.testing.assert_allclose(closed, iterate_path(alpha, eps), atol=1e-12)
    head_colour = int(rng.integers(0, 2))  # either colour at the head: {v0} is boundary-hitting
    T = {0: head_colour, **{i: 1 for i in range(1, n + 1)}}
    edges = [(i, i + 1) for i in range(n)]
    epsmap = {((i + 1, i) if i % 2 else (i, i + 1)): float(eps[i]) for i in range(n)}
    mech = optimal_mechanism(edges, T, {0: alpha}, epsilon=epsmap)
    np.testing.assert_allclose(mech.prob_one, closed, atol=1e-12)


def test_path_homogeneous_is_p_and_corrected_corollary1():
    eps, alpha, n = 0.7, 0.05, 20
    closed = path_extension(alpha, epsilons=[eps] * n)
    i = np.arange(n + 1)
    np.testing.assert_allclose(closed, p(i, alpha, epsilon=eps), atol=1e-12)
    t = int(math.ceil(math.log(1 / (alpha * (1 + math.exp(eps)))) / eps))  # paper 001 Eq. (35)
    corrected = np.where(i <= t, np.exp(i * eps) * alpha,
                         1 - np.exp(-(i - t) * eps) + np.exp((2 * t - i) * eps) * alpha)
    np.testing.assert_allclose(closed, corrected, atol=1e-12)
    printed = 1 - np.exp((i - t) * eps) + np.exp(-(i + 2 * t) * eps) * alpha  # as extracted: not a probability
    assert np.any(printed[i > t] < 0)


def test_dp_pair_is_suitable_and_broken_pair_is_not():
    for eps, delta in [(0.1, 0.0), (1.0, 0.0), (1.0, 0.3), (3.0, 0.01)]:
        DPPair(epsilon=eps, delta=delta).check()
    pair = DPPair(epsilon=LOG2)
    assert float(pair.upper(0.3)) == pytest.approx(0.6) and float(pair.lower(0.3)) == pytest.approx(0.15)
    np.testing.assert_allclose(pair.upper_power(0.1, 3), 0.7)
    with pytest.raises(ValueError, match="suitable pair"):
        # property 2 fails: L(U(a)) = a + 0.1 > a
        FunctionPair(lambda a: np.minimum(a + 0.2, 1), lambda a: np.clip(a + 0.1, 0, 1))
    with pytest.raises(ValueError, match="delta"):
        DPPair(epsilon=1.0, delta=1.5)


def test_docstring_examples_of_the_binary_package_run():
    import doctest

    import dpselect.binary.closed_forms as cf
    import dpselect.binary.extension as ex
    import dpselect.binary.graph as gr
    import dpselect.binary.mechanism as me
    import dpselect.binary.suitable as su

    for mod in (cf, ex, gr, me, su):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert res.failed == 0 and res.attempted > 0, mod.__name__
