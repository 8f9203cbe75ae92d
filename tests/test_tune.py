"""dpselect.tune: the law of the number of runs, the certified guarantees, exact audits, the driver."""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import dpselect
from dpselect import Accountant, BudgetExceededError
from dpselect.accounting import RDP, ZCDP, ApproxDP, GaussianMechanism, PureDP
from dpselect.tune import METHODS, TuneResult, TuningGuarantee, select_private_candidate, tuning_privacy
from dpselect.tune._stopping import make_law

# ----------------------------------------------------------------------------------------------------
# the law of K: χ² of the number of calls of a deterministic run against the declared law
# ----------------------------------------------------------------------------------------------------
LAWS = [("liu_talwar", 0.5), ("geometric", 0.5), ("logarithmic", 0.5), ("truncated_negative_binomial", 0.5),
        ("truncated_negative_binomial", -0.5), ("truncated_negative_binomial", 2.0), ("poisson", 0.5)]


@pytest.mark.parametrize("method,eta", LAWS)
def test_number_of_runs_follows_the_law(method, eta):
    law = make_law(method, 4.0, eta)
    n = 2000
    counts: list[int] = []
    rng = np.random.default_rng(20261128)
    for _ in range(n):
        calls = [0]

        def run(g, calls=calls):
            calls[0] += 1
            return 0.0, "c"

        select_private_candidate(run, run_privacy=1.0, method=method, mean_runs=4.0, eta=eta, rng=rng)
        counts.append(calls[0])
    kmax = 60
    pmf = law.pmf(kmax)
    assert abs(pmf.sum() - 1.0) < 1e-3 or method == "truncated_negative_binomial"
    # bins: each k with expected count >= 5, the tail pooled
    obs = np.bincount(np.minimum(counts, kmax + 1), minlength=kmax + 2).astype(float)
    exp = np.append(pmf, max(0.0, 1.0 - pmf.sum())) * n
    keep = exp >= 5
    o = np.append(obs[keep], obs[~keep].sum())
    e = np.append(exp[keep], exp[~keep].sum())
    if e[-1] < 1e-9:
        o, e = o[:-1], e[:-1]
    e *= o.sum() / e.sum()
    p = stats.chisquare(o, e).pvalue
    assert p > 1e-3, (method, eta, p)
    # and the mean is the one asked for
    assert abs(law.mean() - 4.0) < 1e-9


def test_law_is_exact_rational_and_normalised():
    law = make_law("geometric", 10.0, 0.5)
    assert law.gamma == Fraction(0.1) and law.eta == 1
    lo, hi = law.constant(40)
    assert lo == hi                                          # rational normaliser
    for method, eta in [("truncated_negative_binomial", 0.5), ("logarithmic", 0.0), ("poisson", 0.0)]:
        law = make_law(method, 10.0, eta)
        lo, hi = law.constant(60)
        assert 0 < hi - lo < hi * Fraction(1, 10 ** 55)      # a tight enclosure of the irrational normaliser
        assert abs(law.pmf(2000).sum() - 1.0) < 1e-9


def test_k_is_drawn_before_any_run_and_children_do_not_depend_on_workers():
    seen = []

    def run(g):
        x = float(g.random())
        seen.append(x)
        return x, x

    a = select_private_candidate(run, run_privacy=1.0, method="geometric", mean_runs=6.0, rng=11)
    first = list(seen)
    seen.clear()
    b = select_private_candidate(run, run_privacy=1.0, method="geometric", mean_runs=6.0, rng=11, n_jobs=2)
    # joblib may run in other processes (seen stays empty there); the result is the same
    assert a == b
    assert a.score == max(first) and a.candidate == max(first)


# ----------------------------------------------------------------------------------------------------
# certified guarantees
# ----------------------------------------------------------------------------------------------------
def _sigma_1e5() -> float:
    from dpselect.accounting._numeric import bisect_decreasing
    return bisect_decreasing(lambda s: GaussianMechanism(s).delta(1.0), 1e-5, 1.0, 20.0, xtol=1e-13)


def test_pure_bounds():
    assert tuning_privacy(1.0, method="liu_talwar", mean_runs=10.0).epsilon(0.0) == 3.0
    assert tuning_privacy(1.0, method="geometric", mean_runs=10.0).epsilon(0.0) == 3.0
    assert tuning_privacy(0.5, method="liu_talwar_threshold", mean_runs=10.0).epsilon(0.0) == 1.0
    assert tuning_privacy(1.0, method="logarithmic", mean_runs=10.0).epsilon(0.0) == 2.0
    assert tuning_privacy(1.0, method="truncated_negative_binomial", mean_runs=10.0, eta=-0.5).epsilon(0.0) == 1.5
    assert tuning_privacy(1.0, method="poisson", mean_runs=10.0).epsilon(0.0) == math.inf
    g = tuning_privacy(PureDP(1.0), method="truncated_negative_binomial", mean_runs=10.0, eta=0.5)
    assert g.composable() == PureDP(2.5)
    # the RDP curve beats the pure bound at δ > 0 where it can
    assert g.epsilon(1e-5) <= 2.5


def test_approx_dp_run_adds_delta_times_mean():
    g = tuning_privacy(ApproxDP(1.0, 1e-7), method="liu_talwar", mean_runs=10.0)
    assert g.epsilon(1e-7) == math.inf
    assert g.extra_delta == pytest.approx(1e-6, rel=1e-9) and g.extra_delta >= 1e-6
    assert g.epsilon(g.extra_delta) == 3.0
    assert isinstance(g.composable(), ApproxDP) and g.composable().epsilon_ == 3.0
    assert all(e == math.inf for e in g.epsilons)             # not RDP: the δ part
    with pytest.raises(ValueError, match="pure"):
        tuning_privacy(GaussianMechanism(3.0), method="liu_talwar", mean_runs=10.0)


# dp-accounting 0.6.0's RepeatAndSelect values (RdpAccountant + RepeatAndSelectDpEvent(GaussianDpEvent(σ), mean,
# shape), get_epsilon(1e-5), σ = the Gaussian mechanism that is exactly (1, 1e-5)-DP), written by
# `benchmarks/bench_tune.py --reference` in a separate venv (benchmarks/requirements-tune.txt): dp-accounting
# pins attrs<24 and dm-tree, so it is not in the test extra.
REFERENCE = json.loads((Path(__file__).resolve().parent.parent / "benchmarks" / "tune_reference.json").read_text())


def test_reference_file_reproduces_the_issue():
    eps = REFERENCE["epsilon"]
    assert round(eps["logarithmic@10"], 3) == 1.917
    assert round(eps["truncated_negative_binomial@10"], 3) == 2.125
    assert round(eps["poisson@10"], 3) == 2.534
    assert REFERENCE["sigma"] == pytest.approx(_sigma_1e5(), rel=1e-12)


@pytest.mark.parametrize("key", sorted(REFERENCE["epsilon"]))
def test_never_above_dp_accounting(key):
    method, mean = key.split("@")
    g = tuning_privacy(GaussianMechanism(REFERENCE["sigma"]), method=method, mean_runs=float(mean), eta=0.5)
    ours, ref = g.epsilon(1e-5), REFERENCE["epsilon"][key]
    assert ours <= ref
    if method != "poisson":                # same theorem and conversion, a finer grid of orders
        assert ours == pytest.approx(ref, rel=1e-3)


def test_dp_accounting_reference_recomputed():
    """Where dp_accounting is importable (the benchmark venv), its values are the committed ones."""
    pytest.importorskip("dp_accounting")
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "bench_tune", Path(__file__).resolve().parent.parent / "benchmarks" / "bench_tune.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    fresh = bench.dp_accounting_values(REFERENCE["sigma"])
    for key, value in REFERENCE["epsilon"].items():
        assert fresh[key] == pytest.approx(value, rel=1e-9)


def test_charge_and_refusal_leave_rng_untouched():
    acc = Accountant(epsilon=2.0)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        select_private_candidate(lambda g: (0.0, 0), run_privacy=1.0, method="liu_talwar", rng=gen,
                                 accountant=acc)
    assert gen.bit_generator.state == state and len(acc.history) == 0
    res = select_private_candidate(lambda g: (0.0, 0), run_privacy=1.0, method="logarithmic", rng=gen,
                                   accountant=acc)
    assert acc.history[0].guarantee == PureDP(2.0) and res.candidate == 0
    # an RDP-only guarantee: charged as the curve (fixed / batch modes)
    acc2 = Accountant(epsilon=3.0, delta=1e-5, mode="fixed")
    sg = GaussianMechanism(_sigma_1e5())
    select_private_candidate(lambda g: (0.0, 0), run_privacy=sg, method="logarithmic", rng=0, accountant=acc2)
    assert isinstance(acc2.history[0].guarantee, TuningGuarantee)
    assert acc2.spent(1e-5).epsilon_ <= 3.0


def test_validation_before_randomness():
    bad = [dict(method="nope"), dict(mean_runs=1.0), dict(mean_runs=float("nan")), dict(mean_runs=2e4), dict(method="poisson", mean_runs=0),
           dict(eta=0.0), dict(eta=-1.0), dict(threshold=1.0), dict(method="liu_talwar_threshold"),
           dict(n_jobs=0)]
    for kw in bad:
        gen = np.random.default_rng(0)
        state = gen.bit_generator.state
        with pytest.raises((ValueError, TypeError)):
            select_private_candidate(lambda g: (0.0, 0), run_privacy=1.0, rng=gen, **kw)
        assert gen.bit_generator.state == state
    with pytest.raises(TypeError):
        select_private_candidate(lambda g: (0.0, 0), run_privacy="1", rng=0)
    with pytest.raises(TypeError):
        select_private_candidate(42, run_privacy=1.0, rng=0)
    with pytest.raises(TypeError, match="tuple"):
        select_private_candidate(lambda g: 1.0, run_privacy=1.0, rng=0)
    with pytest.raises(ValueError, match="NaN"):
        select_private_candidate(lambda g: (float("nan"), 0), run_privacy=1.0, rng=0)


def test_result_shape_and_root_export():
    assert dpselect.tune.select_private_candidate is select_private_candidate
    res = select_private_candidate(lambda g: (1.0, "x"), run_privacy=1.0, method="poisson", mean_runs=0.01, rng=0)
    assert isinstance(res, TuneResult)
    assert (res.candidate, res.score) in [(None, None), ("x", 1.0)]
    assert not hasattr(res, "k") and not hasattr(res, "n_runs")
    assert set(METHODS) == {"liu_talwar", "liu_talwar_threshold", "geometric", "logarithmic",
                            "truncated_negative_binomial", "poisson"}
    with pytest.raises(AttributeError):
        res.candidate = 1  # type: ignore[misc]


# ----------------------------------------------------------------------------------------------------
# exact DP audits of the whole procedure (exact output laws in rationals, audited by exact_dp_audit)
# ----------------------------------------------------------------------------------------------------
LN2 = math.log(2.0)          # ε = ln 2: every e^{±ε} ratio is an exact rational


def _best_of_geometric(p: list[Fraction], gamma: Fraction) -> list[Fraction]:
    """Exact law of the best of K ~ Geometric(γ) runs of a run whose outputs, in increasing score order,
    have probabilities ``p``: P(best ≤ y_j) = φ(F_j) with φ(z) = γz / (1 − (1 − γ)z)."""
    out, prev, cum = [], Fraction(0), Fraction(0)
    for pj in p:
        cum += pj
        val = gamma * cum / (1 - (1 - gamma) * cum)
        out.append(val - prev)
        prev = val
    return out


def _threshold_law(p: list[Fraction], above: list[bool], gamma: Fraction) -> list[Fraction]:
    """Exact law of Liu–Talwar's threshold variant (K ~ Geometric(γ) runs at most; the first run whose score
    reaches the threshold is released): outputs = the runs' outputs at or above the threshold, then ⊥."""
    s = sum(pj for pj, a in zip(p, above) if a)
    denom = 1 - (1 - gamma) * (1 - s)
    return [pj / denom for pj, a in zip(p, above) if a] + [gamma * (1 - s) / denom]


# two candidates ("a" scores 0; "b" scores 1 or 2: three ordered (score, candidate) outputs); the run is
# ln2-DP between x and x' (each ratio in [1/2, 2])
_M = Fraction(1, 10 ** 6)
_RUN = {"x": [Fraction(4, 5) - _M, _M, Fraction(1, 5)], "x'": [Fraction(3, 5) - _M / 2, _M / 2, Fraction(2, 5)]}


def test_exact_run_is_ln2_dp():
    for a, b in zip(_RUN["x"], _RUN["x'"]):
        assert Fraction(1, 2) <= a / b <= 2


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000)])
def test_exact_audit_geometric_stopping_three_epsilon(gamma):
    from dpselect.audit import exact_dp_audit
    probs = {d: np.array([float(v) for v in _best_of_geometric(p, gamma)]) for d, p in _RUN.items()}
    g = tuning_privacy(PureDP(LN2), method="liu_talwar", mean_runs=float(1 / gamma))
    res = exact_dp_audit(lambda d: probs[d], [("x", "x'")], claim=PureDP(g.epsilon(0.0)))
    assert res.passed and res.worst_log_ratio <= 3 * LN2
    if gamma == Fraction(1, 1000):
        # the audit exceeds 2ε: claiming 2ε for geometric stopping without a threshold would be wrong
        assert res.worst_log_ratio > 2.99 * LN2
        assert not exact_dp_audit(lambda d: probs[d], [("x", "x'")], claim=PureDP(2 * LN2)).passed


def test_exact_audit_two_outputs():
    """The issue's tiny example: two candidates with one score each, two neighbouring datasets."""
    from dpselect.audit import exact_dp_audit
    run = {"x": [Fraction(2, 3), Fraction(1, 3)], "x'": [Fraction(1, 3), Fraction(2, 3)]}       # ln2-DP
    for gamma in (Fraction(1, 2), Fraction(1, 20), Fraction(1, 10 ** 4)):
        probs = {d: np.array([float(v) for v in _best_of_geometric(p, gamma)]) for d, p in run.items()}
        res = exact_dp_audit(lambda d: probs[d], [("x", "x'")], claim=PureDP(3 * LN2))
        assert res.passed and res.worst_log_ratio <= 2 * LN2 + 1e-12


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000)])
def test_exact_audit_threshold_variant(gamma):
    from dpselect.audit import exact_dp_audit
    above = [False, True, True]           # threshold 1: candidate "b" reaches it
    probs = {d: np.array([float(v) for v in _threshold_law(p, above, gamma)]) for d, p in _RUN.items()}
    g = tuning_privacy(PureDP(LN2), method="liu_talwar_threshold", mean_runs=float(1 / gamma))
    assert g.epsilon(0.0) == 2 * LN2
    res = exact_dp_audit(lambda d: probs[d], [("x", "x'")], claim=PureDP(g.epsilon(0.0)))
    assert res.passed


def test_driver_output_law_matches_the_exact_law():
    """The implementation releases the best run with the law φ(F) (χ², geometric with mean 3)."""
    p = [0.5, 0.3, 0.2]
    outputs = [(0.0, "a"), (1.0, "b"), (2.0, "b")]

    def run(g):
        return outputs[int(g.choice(3, p=p))]

    rng = np.random.default_rng(7)
    n = 3000
    got = [select_private_candidate(run, run_privacy=1.0, method="geometric", mean_runs=3.0, rng=rng)
           for _ in range(n)]
    obs = np.array([sum(1 for r in got if (r.score, r.candidate) == o) for o in outputs], dtype=float)
    exact = _best_of_geometric([Fraction(v).limit_denominator(10) for v in p], Fraction(1, 3))
    exp = np.array([float(v) for v in exact]) * n
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_threshold_driver_releases_first_run_reaching_threshold():
    scores = iter([0.1, 0.5, 2.0, 3.0, 5.0] * 1000)

    def run(g):
        s = next(scores)
        return s, f"run{s}"

    res = select_private_candidate(run, run_privacy=1.0, method="liu_talwar_threshold", threshold=1.5,
                                   mean_runs=1e4, rng=0)
    assert (res.score, res.candidate) == (2.0, "run2.0")


def test_ties_go_to_the_earliest_run():
    counter = iter(range(10 ** 6))

    def run(g):
        return 1.0, next(counter)

    res = select_private_candidate(run, run_privacy=1.0, method="geometric", mean_runs=50.0, rng=3)
    assert res.candidate == 0
