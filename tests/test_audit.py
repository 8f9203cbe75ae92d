"""dpselect.audit: the exact DP audit and the admissibility checker, including their refusals of
audits that would check nothing (issue 11)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dpselect
from dpselect.audit import check_admissibility, exact_dp_audit

# Counting query "how many records are 1" over datasets = tuples of 0/1 records; add/remove one record.
# Candidates: the count (u_0) and a constant 0 (u_1).
COUNTS = {"x": np.array([3.0, 0.0]), "y": np.array([2.0, 0.0]), "z": np.array([1.0, 0.0])}


def em_prob(d, sensitivity=1.0, eps=1.0):
    return dpselect.exponential_probabilities(COUNTS[d], epsilon=eps, sensitivity=sensitivity)


def count_utility(x):
    return np.array([float(sum(x)), 0.0])


def neighbours(x):
    out = [x[:i] + x[i + 1:] for i in range(len(x))]
    if len(x) < 3:
        out += [x + (0,), x + (1,)]
    return out


UNIVERSE = [(), (0,), (1,), (0, 1), (1, 1), (0, 0), (1, 1, 1), (0, 1, 1)]


def const_sens(value):
    return lambda x: dpselect.constant(2, value)


# -- exact_dp_audit ---------------------------------------------------------------------------------
def test_audit_value_and_mutation():
    res = exact_dp_audit(em_prob, [("x", "y"), ("y", "z")], epsilon=1.0)
    # exponential mechanism, utilities (3, 0) vs (2, 0), sensitivity 1, ε = 1: worst ratio at output 1
    p3 = np.array([math.exp(1.5), 1.0]) / (math.exp(1.5) + 1)
    p2 = np.array([math.exp(1.0), 1.0]) / (math.exp(1.0) + 1)
    assert res.passed is True and res.n_pairs == 2
    assert res.worst_log_ratio == pytest.approx(max(np.abs(np.log(p3) - np.log(p2))), rel=1e-12)
    assert res.worst_log_ratio == pytest.approx(0.388152, abs=1e-6)   # log((e^1.5 + 1)/(e + 1))
    assert res.pair == ("x", "y") and res.output == 1
    # (monotone utilities lose only about ε/2 here, so a quarter of the sensitivity is needed to exceed ε)
    small = exact_dp_audit(lambda d: em_prob(d, sensitivity=0.25), [("x", "y")], epsilon=1.0)
    assert small.passed is False
    assert small.worst_log_ratio == pytest.approx(math.log((math.exp(6) + 1) / (math.exp(4) + 1)), rel=1e-12)
    assert exact_dp_audit(em_prob, [("x", "y")]).passed is None      # no ε claimed: no verdict


@pytest.mark.parametrize("pairs", [[], iter([]), ()])
def test_audit_of_no_pairs_raises(pairs):
    with pytest.raises(ValueError, match="pairs must contain at least one .* got none: an audit that compared "
                                         "nothing cannot pass"):
        exact_dp_audit(em_prob, pairs, epsilon=1.0)


@pytest.mark.parametrize("pairs, what", [
    ([("x", "y", "z")], "3 elements"),
    ([("x", "y"), ("x",)], "1 elements"),
    ([("x", "y"), 5], "int"),
    (["xy"], "2 elements"),
])
def test_audit_pairs_must_be_pairs(pairs, what):
    with pytest.raises(ValueError, match=rf"pairs must hold \(x, y\) pairs .* pairs\[\d\] has {what}"):
        exact_dp_audit(em_prob, pairs, epsilon=1.0)


@pytest.mark.parametrize("eps, exc", [(-1, ValueError), (0, ValueError), (float("nan"), ValueError),
                                      (float("inf"), ValueError), ("1", TypeError)])
def test_audit_epsilon_checked(eps, exc):
    with pytest.raises(exc, match="epsilon must be a finite number > 0, got"):
        exact_dp_audit(em_prob, [("x", "y")], epsilon=eps)


@pytest.mark.parametrize("out, exc, msg", [
    ([0.5, float("nan")], ValueError, "finite probabilities"),
    ([0.7, 0.7], ValueError, "summing to 1"),
    ([1.5, -0.5], ValueError, ">= 0"),
    ([], ValueError, "non-empty"),
    (["a", "b"], TypeError, "probability_fn must return a 1-D array of probabilities"),
])
def test_audit_probability_vectors_checked(out, exc, msg):
    with pytest.raises(exc, match=msg):
        exact_dp_audit(lambda d: out, [("x", "y")], epsilon=1.0)


def test_audit_other_argument_types():
    with pytest.raises(TypeError, match="probability_fn must be callable"):
        exact_dp_audit(3, [("x", "y")])
    with pytest.raises(TypeError, match="pairs must be an iterable"):
        exact_dp_audit(em_prob, 5)
    with pytest.raises(ValueError, match=r"probability_fn returned \(2,\) and \(3,\) outputs"):
        exact_dp_audit(lambda d: np.full(2 if d == "x" else 3, 1 / (2 if d == "x" else 3)), [("x", "y")])


def test_audit_zero_probability_on_one_side_is_infinite_loss():
    res = exact_dp_audit(lambda d: [1.0, 0.0] if d == "x" else [0.5, 0.5], [("x", "y")], epsilon=5.0)
    assert res.worst_log_ratio == math.inf and res.output == 1 and res.passed is False


# -- check_admissibility ----------------------------------------------------------------------------
def test_admissibility_ok_and_violation():
    rep = check_admissibility(count_utility, const_sens(1.0), neighbours, UNIVERSE, t_max=3)
    assert rep.ok and rep.n_datasets == 8 and rep.t_max == 3
    assert rep.n_pairs == sum(len(neighbours(x)) for x in UNIVERSE)
    bad = check_admissibility(count_utility, const_sens(0.5), neighbours, UNIVERSE, t_max=3)
    assert not bad.ok and bad.violation["condition"] == 1
    assert bad.violation["delta"] == 0.5 and bad.violation["required"] == 1.0
    assert "condition 1 fails" in str(bad)


def test_admissibility_condition_2_violation_found():
    # δ(x, 0) = 1 everywhere, but δ(x, t) for t >= 1 shrinks for larger datasets: condition 2 fails
    def sens(x):
        return lambda t: np.array([1.0 if t == 0 or len(x) < 2 else 0.5, 1.0])

    rep = check_admissibility(count_utility, sens, neighbours, UNIVERSE, t_max=2)
    assert not rep.ok and rep.violation["condition"] == 2
    assert rep.violation["delta"] == 0.5 and rep.violation["required"] == 1.0


def test_admissibility_of_nothing_raises():
    with pytest.raises(ValueError, match="datasets must contain at least one dataset, got none"):
        check_admissibility(count_utility, const_sens(1.0), neighbours, [])
    with pytest.raises(ValueError, match=r"neighbours returned no neighbour for any of the 2 dataset\(s\)"):
        check_admissibility(count_utility, const_sens(1.0), lambda x: [], [(), (1,)])


@pytest.mark.parametrize("t_max, exc, msg", [(-1, ValueError, "t_max must be an int >= 1, got -1"),
                                             (0, ValueError, "t_max must be an int >= 1, got 0"),
                                             (1.5, TypeError, "t_max must be an int")])
def test_admissibility_t_max_checked(t_max, exc, msg):
    with pytest.raises(exc, match=msg):
        check_admissibility(count_utility, const_sens(1.0), neighbours, UNIVERSE, t_max=t_max)


@pytest.mark.parametrize("tol, exc", [(float("nan"), ValueError), (-1e-9, ValueError), (float("inf"), ValueError),
                                      ("0", TypeError)])
def test_admissibility_tol_checked(tol, exc):
    with pytest.raises(exc, match="tol must be a finite number >= 0, got"):
        check_admissibility(count_utility, const_sens(0.5), neighbours, UNIVERSE, tol=tol)


def test_admissibility_tol_does_not_hide_a_violation_by_rounding_only():
    # δ = 1 − 1e-12 is within the default tolerance; δ = 0.9 is not, even with tol = 1e-6
    assert check_admissibility(count_utility, const_sens(1.0 - 1e-12), neighbours, UNIVERSE).ok
    assert not check_admissibility(count_utility, const_sens(0.9), neighbours, UNIVERSE, tol=1e-6).ok


@pytest.mark.parametrize("sens, exc, msg", [
    (lambda x: (lambda t: np.array([np.nan, 1.0])), ValueError, "finite values >= 0"),
    (lambda x: (lambda t: np.array([-1.0, 1.0])), ValueError, "finite values >= 0"),
    (lambda x: (lambda t: np.array(["a", "b"])), TypeError, "must return real numbers"),
    (lambda x: (lambda t: np.ones(3)), ValueError, "returned 3 values, but utility"),
    (lambda x: 5, TypeError, "must return a SensitivityFunction or a callable"),
])
def test_admissibility_bad_sensitivity_values(sens, exc, msg):
    with pytest.raises(exc, match=msg):
        check_admissibility(count_utility, sens, neighbours, UNIVERSE)


def test_admissibility_bad_utilities_and_callables():
    with pytest.raises(ValueError, match=r"utility\(.*\) must return a non-empty 1-D array of finite numbers"):
        check_admissibility(lambda x: np.array([np.nan, 0.0]), const_sens(1.0), neighbours, UNIVERSE)
    with pytest.raises(TypeError, match="utility.* must return real numbers"):
        check_admissibility(lambda x: ["a", "b"], const_sens(1.0), neighbours, UNIVERSE)
    with pytest.raises(TypeError, match="neighbours must be callable"):
        check_admissibility(count_utility, const_sens(1.0), [1], UNIVERSE)
    with pytest.raises(TypeError, match="datasets must be an iterable"):
        check_admissibility(count_utility, const_sens(1.0), neighbours, 3)


# -- claimed guarantees: pure ε, bounded range, (ε, δ) (issue 24 item 4) ---------------------------------
from dpselect.accounting import ApproxDP, BoundedRange, PureDP, ZCDP  # noqa: E402


def _random_neighbour_utilities(seed, n_pairs=40, m=5, sens=1.0):
    """Pairs of utility vectors whose entries differ by at most ``sens`` (each pair a neighbour pair),
    including the extreme ±sens moves that make the exponential mechanism's log-ratio range exactly ε."""
    rng = np.random.default_rng(seed)
    table, pairs = {}, []
    for i in range(n_pairs):
        u = rng.normal(0, 3, m)
        d = rng.choice([-sens, sens, 0.0], m) if i % 2 else rng.uniform(-sens, sens, m)
        d[0], d[1] = sens, -sens
        table[f"x{i}"], table[f"y{i}"] = u, u + d
        pairs.append((f"x{i}", f"y{i}"))
    return table, pairs


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_exponential_mechanism_passes_as_bounded_range(eps):
    table, pairs = _random_neighbour_utilities(24)
    em = lambda d: dpselect.exponential_probabilities(table[d], epsilon=eps, sensitivity=1.0)  # noqa: E731
    res = exact_dp_audit(em, pairs, claim=BoundedRange(eps))
    assert res.passed is True
    assert res.worst_range == pytest.approx(eps, rel=1e-9)          # the pairs reach the bound exactly
    assert res.worst_log_ratio <= eps
    # Gumbel noisy max is the same law
    gm = lambda d: dpselect.report_noisy_max_probabilities(table[d], epsilon=eps, sensitivity=1.0,  # noqa: E731
                                                           noise="gumbel")
    assert exact_dp_audit(gm, pairs, claim=BoundedRange(eps)).passed is True


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_permute_and_flip_is_rejected_as_bounded_range(eps):
    # the opendp#2911 class of bug: permute-and-flip is ε-DP but its log-ratio range exceeds ε
    table, pairs = _random_neighbour_utilities(2911)
    pf = lambda d: dpselect.permute_and_flip_probabilities(table[d], epsilon=eps, sensitivity=1.0)  # noqa: E731
    assert exact_dp_audit(pf, pairs, claim=PureDP(eps)).passed is True
    res = exact_dp_audit(pf, pairs, claim=BoundedRange(eps))
    assert res.passed is False and res.worst_range > eps * 1.05
    assert res.range_pair in pairs


def test_halved_sensitivity_is_rejected():
    table, pairs = _random_neighbour_utilities(7)
    em = lambda d: dpselect.exponential_probabilities(table[d], epsilon=1.0, sensitivity=0.5)  # noqa: E731
    res = exact_dp_audit(em, pairs, claim=BoundedRange(1.0))
    assert res.passed is False and res.worst_range == pytest.approx(2.0, rel=1e-9)
    assert exact_dp_audit(em, pairs, claim=PureDP(1.0)).passed is False
    assert exact_dp_audit(em, pairs, claim=BoundedRange(2.0)).passed is True


def test_approximate_claim_uses_the_hockey_stick_divergence():
    table, pairs = _random_neighbour_utilities(3)
    em = lambda d: dpselect.exponential_probabilities(table[d], epsilon=1.0, sensitivity=1.0)  # noqa: E731
    # an ε-BR release is (ε', δ(ε'))-DP with the bounded-range profile: the claim holds, a smaller δ does not
    res = exact_dp_audit(em, pairs, claim=ApproxDP(0.5, BoundedRange(1.0).delta(0.5)))
    assert res.passed is True and 0 < res.worst_delta <= BoundedRange(1.0).delta(0.5)
    assert exact_dp_audit(em, pairs, claim=ApproxDP(0.5, res.worst_delta / 2)).passed is False
    assert exact_dp_audit(em, pairs, claim=ApproxDP(1.0, 0.0)).passed is True      # δ = 0: the pure check


def test_claim_argument_errors():
    with pytest.raises(ValueError, match="give either epsilon= or claim=, not both"):
        exact_dp_audit(em_prob, [("x", "y")], epsilon=1.0, claim=PureDP(1.0))
    with pytest.raises(TypeError, match="claim must be a guarantee value the exact audit can check"):
        exact_dp_audit(em_prob, [("x", "y")], claim=ZCDP(0.5))
    res = exact_dp_audit(em_prob, [("x", "y")])
    assert res.passed is None and res.worst_range == pytest.approx(1.0 * 0.5, rel=1e-12)   # (3,0) vs (2,0): ε/2
