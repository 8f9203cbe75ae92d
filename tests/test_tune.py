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
from dpselect.accounting import ApproxDP, GaussianMechanism, PureDP
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
    # Papernot-Steinke's / Liu-Talwar's pure bounds (2 + η)ε are the pure part; the privacy-profile bound
    # c + ε (c < (1 + η)ε for γ > 0, -> (1 + η)ε as γ -> 0) can be below them at δ = 0
    for method, eta, pure in (("liu_talwar", 1.0, 3.0), ("geometric", 1.0, 3.0), ("logarithmic", 0.0, 2.0),
                              ("truncated_negative_binomial", -0.5, 1.5)):
        g = tuning_privacy(1.0, method=method, mean_runs=10.0, eta=eta)
        assert g.pure_epsilon == pure
        assert g.epsilon(0.0) == min(pure, g._epsilon_profile(0.0)) <= pure
        assert g.epsilon(0.0) >= 1.0 + (1.0 + eta) * 0.5            # sanity: not absurdly low
        big = tuning_privacy(1.0, method=method, mean_runs=1e4, eta=eta)
        assert big.epsilon(0.0) == pytest.approx(pure, abs=5e-3)     # γ -> 0: (2 + η)ε again
    assert tuning_privacy(1.0, method="liu_talwar", mean_runs=10.0).epsilon(0.0) == pytest.approx(2.5932, abs=1e-4)
    assert tuning_privacy(0.5, method="liu_talwar_threshold", mean_runs=10.0).epsilon(0.0) == 1.0
    # Poisson: no pure bound by Rényi DP; the profile bound gives ε + μ TV (TV of ε-DP: tanh(ε/2))
    gp = tuning_privacy(1.0, method="poisson", mean_runs=10.0)
    assert gp.pure_epsilon == math.inf and gp._epsilon_rdp(0.0) == math.inf
    assert gp.epsilon(0.0) == pytest.approx(1.0 + 10.0 * math.tanh(0.5), rel=1e-9)
    assert gp.epsilon(0.0) >= 1.0 + 10.0 * math.tanh(0.5)
    g = tuning_privacy(PureDP(1.0), method="truncated_negative_binomial", mean_runs=10.0, eta=0.5)
    assert g.composable() == PureDP(2.5)
    # the RDP curve beats the pure bound at δ > 0 where it can
    assert g.epsilon(1e-5) <= 2.5


def test_approx_dp_run_adds_delta_times_mean():
    g = tuning_privacy(ApproxDP(1.0, 1e-7), method="liu_talwar", mean_runs=10.0)
    assert g.epsilon(1e-7) == math.inf
    assert g.extra_delta == pytest.approx(1e-6, rel=1e-9) and g.extra_delta >= 1e-6
    assert g._epsilon_rdp(g.extra_delta) == 3.0 and g.epsilon(g.extra_delta) <= 3.0
    assert g.epsilon(2e-6) == g._epsilon_profile(2e-6) < 3.0     # c + ε_Q(δ / E[K]) from the run's profile
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
    rdp_only = g._epsilon_rdp(1e-5)
    assert ours == min(rdp_only, g._epsilon_profile(1e-5))
    if method != "poisson":                # same theorem and conversion, a finer grid of orders
        assert rdp_only == pytest.approx(ref, rel=1e-3)
        assert ours <= 0.83 * ref          # the privacy-profile bound: 0.72-0.82 of dp-accounting here


def test_dp_accounting_reference_recomputed():
    """dp-accounting (in the test extra) recomputes the committed reference values (the benchmark reads them)."""
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
    bad = [dict(method="nope"), dict(mean_runs=1.0), dict(mean_runs=float("nan")), dict(mean_runs=2e4),
           dict(method="poisson", mean_runs=0), dict(method="poisson", mean_runs=501.0),
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


# ----------------------------------------------------------------------------------------------------
# issue 33 item 2(a): which run failed (its index) is private. A NaN score is a failed run, never the best;
# a malformed output raises one fixed message naming neither the run nor its output.
# ----------------------------------------------------------------------------------------------------
def _scripted(scores: list[float]):
    """A run returning ``scores`` in call order (then -1.0), and the list of what it returned."""
    calls: list[tuple[float, int]] = []

    def run(g):
        i = len(calls)
        out = (scores[i] if i < len(scores) else -1.0, i)
        calls.append(out)
        return out
    return run, calls


def test_nan_score_is_a_failed_run_never_best_exhaustive():
    """Every pattern of NaN among the first five runs (and every position of the best): no error, and the
    release is the best non-NaN run (earliest among ties), or nothing when every run failed."""
    nan = float("nan")
    base = [0.5, 2.0, 1.0, 2.0, 0.25]
    for mask in range(2 ** len(base)):
        scores = [nan if mask >> j & 1 else v for j, v in enumerate(base)]
        for method, kw in (("geometric", {}), ("liu_talwar_threshold", {"threshold": 0.75})):
            run, calls = _scripted(scores + [nan] * 64)        # runs past the fifth fail too
            res = select_private_candidate(run, run_privacy=1.0, method=method, mean_runs=4.0, rng=mask, **kw)
            ok = [(s, c) for s, c in calls if s == s]
            if method == "geometric":
                want = max(ok, key=lambda sc: (sc[0], -sc[1]), default=(None, None))
            else:
                want = next(((s, c) for s, c in ok if s >= 0.75), (None, None))
            assert (res.score, res.candidate) == want, (mask, method, calls)


def test_all_runs_failed_releases_nothing():
    res = select_private_candidate(lambda g: (float("nan"), "x"), run_privacy=1.0, method="logarithmic", rng=0)
    assert (res.candidate, res.score) == (None, None)
    res = select_private_candidate(lambda g: (np.float64("nan"), "x"), run_privacy=1.0, rng=1)
    assert (res.candidate, res.score) == (None, None)


BAD_OUTPUTS = [1.0, (1.0,), (1.0, "a", 2), [1.0, "a"], (True, "a"), (np.bool_(True), "a"), ("1.0", "a"),
               (None, "a"), (1 + 2j, "a"), (Fraction(10 ** 400), "a"), ("secret-7", 7)]


def test_bad_run_output_message_names_no_index_or_value():
    """Each malformed output, returned by run j (j = 0..5, the rest well-formed): one message for all of them,
    naming neither j nor the output."""
    kw = dict(run_privacy=1.0, method="geometric", mean_runs=50.0)
    seeds = []
    for seed in range(100):                      # seeds whose K is at least 6 (K counted with a good run)
        count: list[int] = []
        select_private_candidate(lambda g: (count.append(1), (0.0, "ok"))[1], rng=seed, **kw)
        if len(count) >= 6:
            seeds.append(seed)
    messages = set()
    for n_bad, bad in enumerate(BAD_OUTPUTS):
        for j in range(6):
            calls: list[int] = []

            def run(g, bad=bad, j=j, calls=calls):
                calls.append(1)
                return bad if len(calls) - 1 == j else (0.0, "ok")
            with pytest.raises(TypeError) as info:
                select_private_candidate(run, rng=seeds[(n_bad + j) % len(seeds)], **kw)
            messages.add(str(info.value))
    assert len(messages) == 1
    (msg,) = messages
    assert not any(ch.isdigit() for ch in msg) and "secret" not in msg and "run(rng)" in msg


def test_failed_runs_keep_index_order_with_workers():
    """NaN and tied scores, sequential and with 2 workers: the same release (the runs' order is their index)."""
    pytest.importorskip("joblib")

    def run(g):
        s = float(g.normal())
        return (float("nan") if s < 0 else round(s, 1)), round(s, 6)

    kw = dict(run_privacy=1.0, method="geometric", mean_runs=6.0)
    for seed in range(4):
        assert select_private_candidate(run, rng=seed, **kw) == select_private_candidate(run, rng=seed, n_jobs=2, **kw)


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


def _best_of_tnb(p: list[Fraction], gamma: Fraction, eta: float) -> list[float]:
    """The law of the best of K ~ TNB(η, γ) runs (logarithmic for η = 0) at 80 decimal digits:
    φ(z) = ((1 − (1 − γ)z)^(−η) − 1)/(γ^(−η) − 1), or log(1 − (1 − γ)z)/log γ."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = 80
        g = Decimal(gamma.numerator) / Decimal(gamma.denominator)

        def phi(z):
            base = 1 - (1 - g) * z
            if eta == 0:
                return base.ln() / g.ln()
            e = Decimal(eta)
            return ((base.ln() * -e).exp() - 1) / ((g.ln() * -e).exp() - 1)

        out, prev, cum = [], Decimal(0), Decimal(0)
        for pj in p:
            cum += Decimal(pj.numerator) / Decimal(pj.denominator)
            v = phi(cum)
            out.append(float(v - prev))
            prev = v
        return out


@pytest.mark.parametrize("method,eta", [("truncated_negative_binomial", -0.5), ("logarithmic", 0.0),
                                        ("truncated_negative_binomial", 0.5), ("truncated_negative_binomial", 2.0)])
def test_exact_audit_papernot_steinke_pure_bound_is_tight(method, eta):
    """The certified pure ε (min of (2 + η)ε and the profile bound c + ε) holds on the two-candidate example
    at every mean, and is approached as γ → 0 (η < 0 included), where both are (2 + η)ε."""
    from dpselect.audit import exact_dp_audit
    for mean in (2.0, 100.0, 1e4):
        g = tuning_privacy(PureDP(LN2), method=method, mean_runs=mean, eta=eta)
        claim = g.epsilon(0.0)
        assert g.pure_epsilon == pytest.approx((2 + eta) * LN2, rel=1e-15) and claim <= g.pure_epsilon
        gamma = make_law(method, mean, eta).gamma
        probs = {d: np.array(_best_of_tnb(p, gamma, eta)) for d, p in _RUN.items()}
        res = exact_dp_audit(lambda d: probs[d], [("x", "x'")], claim=PureDP(claim))
        assert res.passed
    assert claim > (2 + eta - 0.01) * LN2
    assert res.worst_log_ratio > (2 + eta - 0.01) * LN2    # nearly tight: a smaller claim would be refuted


def test_threshold_variant_same_result_with_workers():
    pytest.importorskip("joblib")

    def run(g):
        s = float(g.normal())
        return s, round(s, 6)

    kw = dict(run_privacy=1.0, method="liu_talwar_threshold", threshold=1.0, mean_runs=20.0)
    for seed in range(3):
        assert select_private_candidate(run, rng=seed, **kw) == select_private_candidate(run, rng=seed, n_jobs=2, **kw)


# ----------------------------------------------------------------------------------------------------
# the privacy-profile bound (after Koskela, Redberg & Wang 2024) against the exact profile of the whole
# procedure on small discrete runs that are not pure DP (an output impossible on one side)
# ----------------------------------------------------------------------------------------------------
_PAIRS = {
    # (P, R): run laws on ordered outputs (lowest score first)
    "delta-output": ([0.5, 0.3, 0.2, 0.0], [0.45, 0.3, 0.15, 0.1]),
    "best-differs": ([0.6, 0.25, 0.15], [0.7, 0.2, 0.1]),
    "rr-like": ([0.1, 0.2, 0.3, 0.4], [0.25, 0.3, 0.25, 0.2]),
    "rare-top": ([0.9, 0.0999, 0.0001], [0.95, 0.04999, 0.00001]),
    "two-candidates-ln2": ([0.799999, 0.000001, 0.2], [0.5999995, 0.0000005, 0.4]),   # _RUN in floats
}
_PS_LAWS = [("geometric", 1.0, 5.0), ("logarithmic", 0.0, 5.0), ("truncated_negative_binomial", 0.5, 5.0),
            ("truncated_negative_binomial", -0.5, 20.0), ("poisson", 0.0, 3.0)]


def _pair_profile(P, R):
    """The exact profile of a discrete pair, both directions (rounded up by 1e-15), and its kinks."""
    P, R = np.array(P), np.array(R)

    def delta(e):
        ee = math.exp(e)
        return float(max(np.sum(np.maximum(P - ee * R, 0.0)), np.sum(np.maximum(R - ee * P, 0.0)))) + 1e-15
    with np.errstate(divide="ignore"):
        kinks = [abs(float(x)) for x in np.log(P / R) if np.isfinite(x)]
    return delta, kinks


def _exact_procedure_profile(P, R, method, eta, mean):
    """δ_A(ε) of the best of K runs, both directions, with φ at 50 digits: A(y) = φ(F(y)) − φ(F(y⁻))."""
    import mpmath
    law = make_law(method, mean, eta)
    with mpmath.workdps(50):
        if law.kind == "poisson":
            mu = mpmath.mpf(law.mu.numerator) / law.mu.denominator
            phi = lambda z: mpmath.exp(mu * (z - 1))                          # noqa: E731
        else:
            gam = mpmath.mpf(law.gamma.numerator) / law.gamma.denominator
            if law.kind == "logarithmic":
                phi = lambda z: mpmath.log(1 - (1 - gam) * z) / mpmath.log(gam)  # noqa: E731
            else:
                et = mpmath.mpf(float(law.eta))
                phi = lambda z: ((1 - (1 - gam) * z) ** (-et) - 1) / (gam ** (-et) - 1)  # noqa: E731

        def out(p):
            cum, prev, res = mpmath.mpf(0), phi(mpmath.mpf(0)), []
            for pj in p:
                cum += mpmath.mpf(pj)
                v = phi(cum)
                res.append(v - prev)
                prev = v
            return res                          # (Poisson's atom on "nothing" is the same on both sides)
        a, b = out(P), out(R)

        def delta(e):
            ee = mpmath.exp(e)
            f = sum(max(x - ee * y, 0) for x, y in zip(a, b))
            r = sum(max(y - ee * x, 0) for x, y in zip(a, b))
            return float(max(f, r))
        return delta, law


def _profile_bound(P, R, method, eta, mean, drop=None):
    from dpselect.tune._profile import profile_delta, ratio_exponent
    dq, kinks = _pair_profile(P, R)
    law = make_law(method, mean, eta)
    if law.kind == "poisson":
        c = ratio_exponent(dq, "poisson", None, 0.0, float(law.mu))
    else:
        e = 0.0 if law.kind == "logarithmic" else float(law.eta)
        c = ratio_exponent(dq, law.kind, float(law.gamma), e, None, kinks)
    m = law.mean()
    if drop == "c":
        c = 0.0
    if drop == "mean":
        m = 1.0
    return lambda eps: profile_delta(dq, c, m, eps)


_EPS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]


@pytest.mark.parametrize("method,eta,mean", _PS_LAWS)
def test_profile_bound_holds_against_exact_procedure_profile(method, eta, mean):
    pytest.importorskip("mpmath")
    for name, (P, R) in _PAIRS.items():
        exact, _ = _exact_procedure_profile(P, R, method, eta, mean)
        bound = _profile_bound(P, R, method, eta, mean)
        for e in _EPS:
            assert bound(e) >= exact(e), (name, e, bound(e), exact(e))


@pytest.mark.parametrize("method,eta,mean", _PS_LAWS)
def test_profile_bound_without_its_terms_is_refuted(method, eta, mean):
    """Dropping c (the ratio of generating-function derivatives) or the factor E[K] gives a 'bound' the
    exact profile exceeds: the check above has the power to catch either omission."""
    pytest.importorskip("mpmath")
    for drop in ("c", "mean"):
        refuted = []
        for name, (P, R) in _PAIRS.items():
            exact, _ = _exact_procedure_profile(P, R, method, eta, mean)
            wrong = _profile_bound(P, R, method, eta, mean, drop=drop)
            refuted += [(name, e) for e in _EPS if wrong(e) < exact(e)]
        assert refuted, drop


def test_tuning_guarantee_uses_the_profile_of_the_run():
    """End to end through ``tuning_privacy``: the certified δ(ε) (the minimum of the analyses, profile included)
    for a pure ln2 run is above the exact δ of the two-candidate example at every ε, for every law."""
    pytest.importorskip("mpmath")
    P, R = [float(v) for v in _RUN["x"]], [float(v) for v in _RUN["x'"]]
    for method, eta, mean in _PS_LAWS:
        g = tuning_privacy(PureDP(LN2), method=method, mean_runs=mean, eta=eta)
        exact, _ = _exact_procedure_profile(P, R, method, eta, mean)
        for e in _EPS:
            assert g.delta(e) >= exact(e)


def test_profile_bound_holds_on_random_discrete_runs():
    """Seeded random pairs of run laws (2-5 ordered outputs, some near each other, some far), random laws and
    means: the bound is never below the exact profile (1650 such checks with 150 pairs were run offline: no
    violation, tightest bound / exact = 1.016)."""
    pytest.importorskip("mpmath")
    rng = np.random.default_rng(20261128)
    for it in range(30):
        k = int(rng.integers(2, 6))
        P, R = rng.dirichlet(np.full(k, 0.4)), rng.dirichlet(np.full(k, 0.4))
        if it % 2:
            R = 0.7 * P + 0.3 * R
        P, R = [float(x) for x in P], [float(x) for x in R]
        method, eta, _ = _PS_LAWS[it % len(_PS_LAWS)]
        mean = float(rng.choice([0.5, 3.0, 10.0] if method == "poisson" else [1.5, 3.0, 10.0]))
        exact, _ = _exact_procedure_profile(P, R, method, eta, mean)
        bound = _profile_bound(P, R, method, eta, mean)
        for e in _EPS:
            assert bound(e) >= exact(e), (P, R, method, eta, mean, e)


def test_profile_epsilon_and_delta_are_consistent():
    g = tuning_privacy(GaussianMechanism(REFERENCE["sigma"]), method="truncated_negative_binomial", mean_runs=10.0)
    e = g._epsilon_profile(1e-5)
    assert g.delta(e) <= 1e-5 * (1 + 1e-9) and g.delta(e) == pytest.approx(1e-5, rel=1e-6)
    from dpselect.tune._profile import profile_delta as pd
    assert pd(GaussianMechanism(REFERENCE["sigma"]).delta, g.profile_c, g.profile_mean, 0.5 * g.profile_c) == 1.0
    from dpselect.tune._profile import profile_delta
    assert profile_delta(lambda x: 0.1, 1.0, 2.0, 0.5) == 1.0
    assert profile_delta(lambda x: 0.1, 1.0, 2.0, 1.5) == pytest.approx(0.2)
