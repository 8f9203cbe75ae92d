"""The contract of every selector, option by option (issue 21, item 7), and the one contract every mechanism
of the registry meets (issue 23, item 7; at the end of this file: ``check_registered_contract``).

Every mechanism (exponential, permute-and-flip, report-noisy-max with each noise, local dampening, shifted
local dampening in both directions) with every option -- base measure none / integer / fractional / tiny /
huge / vast, ``monotonic=``, ``k`` = 1 and 2, ``size=``, ``exact=False`` -- is either

* **accepted**: its exact law (the ``*_probabilities`` function; for k = 2 the law of the ordered pair of
  picks built from it) passes :func:`dpselect.audit.exact_dp_audit` at the claimed ε on neighbouring
  inputs, and its samplers (the exact batch, single exact calls, the float path) pass a seeded χ² test
  against that law; or
* **refused**: a ValueError naming the option, from the sampler (every variant) and from the
  probability function alike.

PrivPareto and PrivAgg (global sensitivities as numbers with EM / PF / Laplace RNM; sensitivity functions
with LD and SLD in both directions; base measure none / integer / fractional; k = 1, 2; ``exact=False``) go
through the same audit of ``priv_pareto_probabilities`` / ``priv_agg_probabilities`` and a χ² of their
samplers (a loop of calls: ``size=`` is no option of theirs and is refused, like PrivPareto's base measure).

A base measure is a number of interchangeable copies for exponential and Laplace noise (whole numbers up
to 2^900) and any w > 0 for the Gumbel-noise family (p ∝ w·exp(...)); see ``mechanisms._check_copies``.
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import dpselect
from dpselect import mechanisms as M
from dpselect.audit import check_admissibility, exact_dp_audit

EPS = 1.0
N_DRAWS = 3000

BASES = {
    "none": None,
    "integer": [1, 3, 2],
    "fractional": [0.5, 1.0, 2.5],
    "tiny": [1e-300, 1.0, 1e-305],     # (probabilities stay normal floats, so the float audit can compare them)
    "huge": [1e12, 1.0, 3.0],           # whole numbers: copies under every noise
    "vast": [1e300, 1.0, 1.0],          # beyond 2^900 copies: Gumbel family only
}


def _accepted(noise: str, base: str) -> bool:
    return noise == "gumbel" or base in ("none", "integer", "huge")


# -- global-sensitivity selectors: (noise, sampler, probabilities) -------------------------------------
GLOBAL = {
    "exponential": ("gumbel", M.exponential, M.exponential_probabilities),
    "permute_and_flip": ("exponential", M.permute_and_flip, M.permute_and_flip_probabilities),
    "rnm_laplace": ("laplace", lambda u, **kw: M.report_noisy_max(u, noise="laplace", **kw),
                    lambda u, **kw: M.report_noisy_max_probabilities(u, noise="laplace", **kw)),
    "rnm_gumbel": ("gumbel", lambda u, **kw: M.report_noisy_max(u, noise="gumbel", **kw),
                   lambda u, **kw: M.report_noisy_max_probabilities(u, noise="gumbel", **kw)),
    "rnm_exponential": ("exponential", lambda u, **kw: M.report_noisy_max(u, noise="exponential", **kw),
                        lambda u, **kw: M.report_noisy_max_probabilities(u, noise="exponential", **kw)),
}
U0 = np.array([0.0, 1.0, 0.5])
# the neighbouring models live in the library (dpselect.registry.check audits users' specs on them)
from dpselect import _contract as C  # noqa: E402

GRID = C.GRID
_global_pairs = C.global_pairs          # utility vectors whose entries each move by at most Δ = 1
_utilities = C.grid_utilities


def _pair_law(prob, n: int, noise: str, base) -> np.ndarray:
    """Law of the ordered pair of picks (k = 2, ε/2 each), flattened as i·n + j, from the k = 1 law.

    Gumbel noise: successive sampling with fixed scores, p_j / (1 − p_i) on the rest. Exponential and
    Laplace noise: fresh noise on the remaining candidates (their own law on the sub-problem)."""
    p = prob(np.arange(n), EPS / 2)
    out = np.zeros((n, n))
    for i in range(n):
        rest = np.delete(np.arange(n), i)
        if noise == "gumbel":
            q = p[rest] / p[rest].sum()
        else:
            q = prob(rest, EPS / 2)
        out[i, rest] = p[i] * q
    return out.ravel()


def _global_law(name, base, monotonic, k):
    noise, _, probs = GLOBAL[name]
    w = None if BASES[base] is None else np.asarray(BASES[base], dtype=float)

    def law(u):
        def prob(idx, eps):
            return probs(u[idx], epsilon=eps, sensitivity=1.0, monotonic=monotonic,
                         base_measure=None if w is None else w[idx])
        return prob(np.arange(u.size), EPS) if k == 1 else _pair_law(prob, u.size, noise, base)
    return law


def _encode(picks, n: int, k: int) -> np.ndarray:
    picks = np.asarray(picks)
    return picks if k == 1 else picks[:, 0] * n + picks[:, 1]


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("name", sorted(GLOBAL))
def test_global_selector_contract(name, base, monotonic, k, freq):
    noise, sampler, probs = GLOBAL[name]
    bm = BASES[base]
    kk = None if k == 1 else k
    call = dict(epsilon=EPS, sensitivity=1.0, monotonic=monotonic, base_measure=bm, k=kk)
    if not _accepted(noise, base):
        for extra in ({}, {"exact": False}, {"size": 7}, {"size": 7, "exact": False}):
            rng = np.random.default_rng(0)
            state = rng.bit_generator.state
            with pytest.raises(ValueError, match=r"base_measure\[\d\] = .*whole number"):
                sampler(U0, rng=rng, **call, **extra)
            assert rng.bit_generator.state == state          # refused before any randomness
        with pytest.raises(ValueError, match="base_measure"):
            probs(U0, epsilon=EPS, sensitivity=1.0, monotonic=monotonic, base_measure=bm)
        return
    law = _global_law(name, base, monotonic, k)
    # exact audit of the released law on neighbouring utilities (composition: ε in total for k = 2)
    res = exact_dp_audit(lambda key: law(_utilities(key)), _global_pairs(monotonic), epsilon=EPS)
    assert res.passed, (res.worst_log_ratio, res.pair)
    if base not in ("huge", "vast"):        # a dominant base measure leaves the others ~ no mass to move
        assert res.worst_log_ratio > 0.1 * EPS
    # the samplers draw that law: exact batch, float path, and single exact calls
    p = law(U0)
    seed = zlib.crc32(repr((name, base, monotonic, k)).encode())   # fixed across runs (hash() is salted)
    freq(_encode(sampler(U0, rng=seed, size=N_DRAWS, **call), 3, k), p)
    freq(_encode(sampler(U0, rng=seed + 1, size=N_DRAWS, exact=False, **call), 3, k), p)
    gen = np.random.default_rng(seed + 2)
    singles = [sampler(U0, rng=gen, **call) for _ in range(300)]
    freq(_encode(np.asarray(singles), 3, k), p)


# -- local dampening and shifted local dampening -------------------------------------------------------
CAP, MAX_RECORDS = C.CAP, C.MAX_RECORDS   # u_r = min(c_r, CAP) over at most MAX_RECORDS records
_u = C.capped_utilities
_sf = C.capped_sensitivity               # δ(x, t, r) = 1 if c_r <= CAP + t else 0 (admissible)
UNIVERSE = C.UNIVERSE
_neighbours = C.count_neighbours
LOCAL_PAIRS = C.LOCAL_PAIRS
LOCAL = {
    "local_dampening": (M.local_dampening, M.local_dampening_probabilities, {}),
    "sld_increasing": (M.shifted_local_dampening, M.shifted_local_dampening_probabilities, {"direction": "increasing"}),
    "sld_decreasing": (M.shifted_local_dampening, M.shifted_local_dampening_probabilities, {"direction": "decreasing"}),
}


def test_local_contract_sensitivity_is_admissible():
    rep = check_admissibility(_u, _sf, _neighbours, UNIVERSE, t_max=4)
    assert rep.ok, str(rep)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("name", sorted(LOCAL))
def test_local_selector_contract(name, base, k, freq):
    sampler, probs, opts = LOCAL[name]
    bm = BASES[base]
    w = None if bm is None else np.asarray(bm, dtype=float)

    def law(c):
        def prob(idx, eps):
            p = probs(_u(c), epsilon=eps, sensitivity_function=_sf(c), base_measure=w, **opts)
            return p[idx]
        return prob(np.arange(3), EPS) if k == 1 else _pair_law(prob, 3, "gumbel", base)

    res = exact_dp_audit(law, LOCAL_PAIRS, epsilon=EPS)
    assert res.passed, (res.worst_log_ratio, res.pair)
    if base not in ("huge", "vast"):
        assert res.worst_log_ratio > 0.1 * EPS
    c0 = (3, 1, 0)
    p = law(c0)
    call = dict(epsilon=EPS, sensitivity_function=_sf(c0), base_measure=bm, k=None if k == 1 else k, **opts)
    seed = zlib.crc32(repr((name, base, k)).encode())
    freq(_encode(sampler(_u(c0), rng=seed, size=N_DRAWS, **call), 3, k), p)
    freq(_encode(sampler(_u(c0), rng=seed + 1, size=N_DRAWS, exact=False, **call), 3, k), p)
    gen = np.random.default_rng(seed + 2)
    freq(_encode(np.asarray([sampler(_u(c0), rng=gen, **call) for _ in range(200)]), 3, k), p)


# -- multi-objective selectors: PrivPareto and PrivAgg --------------------------------------------------
# Laws: priv_pareto_probabilities / priv_agg_probabilities (k = 1); for k = 2 (ε/2 a pick) the second pick
# is the selector's own law on the remaining candidates (PrivPareto recomputes the Pareto score, δ^PS and
# n' − 1 there; PrivAgg's mechanisms pick from the rest with fixed aggregate scores, the same law).
from dpselect import multiobjective as MO  # noqa: E402

N_MO = 500
AGG_W = np.array([1.0, 0.5])
MO_BASES = ("none", "integer", "fractional")
MO_GLOBAL = {   # name: (noise of the mechanism, mechanism, options)
    "EM": ("gumbel", "exponential", {}),
    "PF": ("exponential", "permute_and_flip", {}),
    "RNM_laplace": ("laplace", "report_noisy_max", {"noise": "laplace"}),
}
MO_LOCAL = {
    "LD": ("local_dampening", {}),
    "SLD_inc": ("shifted_local_dampening", {"direction": "increasing"}),
    "SLD_dec": ("shifted_local_dampening", {"direction": "decreasing"}),
}
MO_GRID = [np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]), np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 0.5]])]
MO_GLOBAL_PAIRS = [((i, (0,) * 6), (i, d)) for i in range(len(MO_GRID))
                   for d in itertools.product((-1, 1), repeat=6)]   # every objective value moves by ≤ Δ = 1


def _mo_pair_law(prob, k: int) -> np.ndarray:
    """k = 1: prob(all, ε); k = 2: the ordered pair (i, j), flattened as 3i + j: p(i) · p_rest(j), ε/2 each."""
    p = prob(np.arange(3), EPS if k == 1 else EPS / 2)
    if k == 1:
        return p
    out = np.zeros((3, 3))
    for i in range(3):
        rest = np.delete(np.arange(3), i)
        out[i, rest] = p[i] * prob(rest, EPS / 2)
    return out.ravel()


def _mo_probs(which: str):
    return MO.priv_pareto_probabilities if which == "pareto" else MO.priv_agg_probabilities


def _mo_call(which: str, fn, U, **kw):
    return fn(U, **kw) if which == "pareto" else fn(U, AGG_W, **kw)


def _mo_refused_everywhere(which, sampler_kw, probs_kw, U, exc, match):
    sampler = MO.priv_pareto if which == "pareto" else MO.priv_agg
    for extra in ({}, {"exact": False}):
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises(exc, match=match):
            _mo_call(which, sampler, U, rng=rng, **sampler_kw, **extra)
        assert rng.bit_generator.state == state          # refused before any randomness
    if probs_kw is not None:
        with pytest.raises(exc, match=match):
            _mo_call(which, _mo_probs(which), U, **probs_kw)


def _mo_samplers_draw_the_law(which, U, kw, k, p, seed, freq):
    """The sampler (no size= here: a loop of calls on one generator), exact and exact=False, against p."""
    sampler = MO.priv_pareto if which == "pareto" else MO.priv_agg
    kk = None if k == 1 else k
    for j, extra in enumerate(({}, {"exact": False})):
        gen = np.random.default_rng(seed + j)
        picks = np.asarray([_mo_call(which, sampler, U, rng=gen, k=kk, **kw, **extra) for _ in range(N_MO)])
        freq(_encode(picks, 3, k), p)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("base", MO_BASES)
@pytest.mark.parametrize("mech", sorted(MO_GLOBAL))
@pytest.mark.parametrize("which", ["pareto", "agg"])
def test_multiobjective_global_contract(which, mech, base, k, freq):
    noise, mechanism, opts = MO_GLOBAL[mech]
    bm = BASES[base]
    kw = dict(epsilon=EPS, sensitivities=[1.0, 1.0], mechanism=mechanism, **opts)
    U0_ = MO_GRID[0]
    # size= is no option of the multi-objective selectors; PrivPareto takes no base measure (refused: a
    # TypeError naming it, before any randomness); PrivAgg passes it to its mechanism, which refuses a
    # fractional one for exponential / Laplace noise
    _mo_refused_everywhere(which, {**kw, "size": 7}, None, U0_, TypeError, "size")
    if which == "pareto" and bm is not None:
        _mo_refused_everywhere(which, {**kw, "base_measure": bm}, {**kw, "base_measure": bm}, U0_, TypeError,
                               "base_measure")
        return
    if which == "agg" and not _accepted(noise, base):
        _mo_refused_everywhere(which, {**kw, "base_measure": bm}, {**kw, "base_measure": bm}, U0_, ValueError,
                               r"base_measure\[\d\] = .*whole number")
        return
    w = None if bm is None else np.asarray(bm, dtype=float)
    extra = {} if w is None else {"base_measure": w}

    def law_of(U):
        def prob(idx, eps):
            b = {} if w is None else {"base_measure": w[idx]}
            return _mo_call(which, _mo_probs(which), U[idx], **{**kw, "epsilon": eps}, **b)
        return _mo_pair_law(prob, k)

    res = exact_dp_audit(lambda key: law_of(MO_GRID[key[0]] + np.array(key[1]).reshape(3, 2)), MO_GLOBAL_PAIRS,
                         epsilon=EPS)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.1 * EPS
    seed = zlib.crc32(repr(("mo", which, mech, base, k)).encode())
    U1 = MO_GRID[1]   # PS = (−2, 0, 0): a law that is not uniform under every mechanism
    _mo_samplers_draw_the_law(which, U1, {**kw, **extra}, k, law_of(U1), seed, freq)


def _mo_U(c, idx=slice(None)) -> np.ndarray:
    """Objectives of the capped-count model: u_1 = min(c_r, CAP), u_2 = min(c_{r+1 mod 3}, CAP)."""
    c = np.asarray(c)
    return np.column_stack((_u(c)[idx], _u(np.roll(c, -1))[idx]))


def _mo_sfs(c, idx=None) -> list:
    """The two objectives' sensitivity functions (capped counts, admissible), on the candidates ``idx``."""
    c = np.asarray(c)
    idx = np.arange(3) if idx is None else np.asarray(idx)
    out = []
    for cc in (c, np.roll(c, -1)):
        sub = cc[idx]

        def delta(t, candidates=None, sub=sub):
            d = (sub <= CAP + t).astype(float)
            return d if candidates is None else d[candidates]
        out.append(dpselect.SensitivityFunction(delta, 1.0, n_candidates=idx.size,
                                                saturation_distance=MAX_RECORDS - CAP, name="capped_count"))
    return out


def test_multiobjective_local_model_is_admissible():
    for j in range(2):
        rep = check_admissibility(lambda c: _mo_U(c)[:, j], lambda c: _mo_sfs(c)[j], _neighbours, UNIVERSE, t_max=4)
        assert rep.ok, str(rep)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("base", MO_BASES)
@pytest.mark.parametrize("mech", sorted(MO_LOCAL))
@pytest.mark.parametrize("which", ["pareto", "agg"])
def test_multiobjective_local_contract(which, mech, base, k, freq):
    mechanism, opts = MO_LOCAL[mech]
    bm = BASES[base]
    c0 = (4, 0, 0) if (which, mech) == ("pareto", "SLD_inc") else (3, 1, 0)   # a law that is not uniform
    kw0 = dict(epsilon=EPS, mechanism=mechanism, **opts)
    _mo_refused_everywhere(which, {**kw0, "sensitivities": _mo_sfs(c0), "size": 7}, None, _mo_U(c0), TypeError,
                           "size")
    if which == "pareto" and bm is not None:
        kwb = {**kw0, "sensitivities": _mo_sfs(c0), "base_measure": bm}
        _mo_refused_everywhere(which, kwb, kwb, _mo_U(c0), TypeError, "base_measure")
        return
    w = None if bm is None else np.asarray(bm, dtype=float)   # Gumbel family: any w > 0

    def law(c):
        def prob(idx, eps):
            b = {} if w is None else {"base_measure": w[idx]}
            return _mo_call(which, _mo_probs(which), _mo_U(c, idx), **{**kw0, "epsilon": eps},
                            sensitivities=_mo_sfs(c, idx), **b)
        return _mo_pair_law(prob, k)

    res = exact_dp_audit(law, LOCAL_PAIRS, epsilon=EPS)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.05 * EPS
    seed = zlib.crc32(repr(("mo-local", which, mech, base, k)).encode())
    kw = {**kw0, "sensitivities": _mo_sfs(c0), **({} if w is None else {"base_measure": w})}
    _mo_samplers_draw_the_law(which, _mo_U(c0), kw, k, law(c0), seed, freq)


# -- one contract over every registered mechanism (issue 23 item 7; issue 24 item 4) ------------------------
# Each spec of dpselect.MECHANISMS, through the registry only (spec.select / .probabilities / .privacy): the
# return convention, size= batches, a seeded χ² of .select against .probabilities, the exact audit of
# .probabilities against the claimed .privacy(ε) on neighbouring inputs, every rng type, bad input. A newly
# registered mechanism gets all of it by being registered (tests/test_registry.py registers a toy one).
from dpselect.accounting import BoundedRange, PureDP  # noqa: E402
from dpselect.registry import get_mechanism  # noqa: E402


registry_variants = C.variants      # every noise, both directions, monotonic
registry_instance = C.instance      # (utilities(x), sensitivity(x), neighbour pairs, x0) of the spec's model


def _law(spec, utilities, sensitivity, opts, scale: float = 1.0):
    return C.law(spec, utilities, sensitivity, opts, EPS, scale)


def check_registered_contract(spec, freq, *, nontrivial: bool = True) -> None:
    """The contract every registered mechanism must meet (used for the built-ins and for a toy one)."""
    utilities, sensitivity, _, x0 = registry_instance(spec)
    u0, s0 = utilities(x0), sensitivity(x0)
    call = dict(epsilon=EPS, sensitivity=s0)
    seed = zlib.crc32(spec.name.encode())
    # return convention: k omitted -> int; any int k -> int64 array (k = 1 included); size= batches
    one = spec.select(u0, rng=seed, **call)
    assert type(one) is int and 0 <= one < 3
    arr = spec.select(u0, k=1, rng=seed, **call)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.int64 and arr.shape == (1,) and int(arr[0]) == one
    two = spec.select(u0, k=2, rng=seed, **call)
    assert two.dtype == np.int64 and two.shape == (2,) and two[0] != two[1]
    for kw, shape in (({}, (7,)), ({"k": 1}, (7, 1)), ({"k": 2}, (7, 2))):
        batch = spec.select(u0, size=7, rng=seed, **kw, **call)
        assert batch.dtype == np.int64 and batch.shape == shape
    # every rng type: an int seed, its Generator and its SeedSequence draw the same; None draws OS entropy
    for r in (np.random.default_rng(seed), np.random.SeedSequence(seed)):
        assert spec.select(u0, rng=r, **call) == one
    assert 0 <= spec.select(u0, rng=None, **call) < 3
    # bad input: a clear error naming the parameter, before any randomness
    bad = [({"epsilon": -1.0}, ValueError, "epsilon"), ({"k": 0}, ValueError, "k"), ({"k": 4}, ValueError, "k"),
           ({"utilities": [0.0, np.nan, 1.0]}, ValueError, "utilities"), ({"bogus": 1}, TypeError, "bogus")]
    bad.append(({"sensitivity": -1.0}, ValueError, "sensitivity") if spec.kind == "global"
               else ({"sensitivity": 1.0}, TypeError, "sensitivity_function"))
    for change, exc, match in bad:
        kw = {**call, "utilities": u0, **change}
        rng = np.random.default_rng(seed)
        state = rng.bit_generator.state
        with pytest.raises(exc, match=match):
            spec.select(kw.pop("utilities"), rng=rng, **kw)
        assert rng.bit_generator.state == state
    # the claimed guarantee, audited exactly on neighbouring inputs, and the sampler against the law: the
    # library's public audit (dpselect.registry.check), the one users run on their own specs
    report = dpselect.registry.check(spec, epsilon=EPS, draws=N_DRAWS)
    assert report.passed and len(report.variants) == len(registry_variants(spec))
    for v in report.variants:
        claim = v.claim
        assert type(claim) is (BoundedRange if spec.bounded_range(**v.options) else PureDP) and claim.epsilon() == EPS
        if nontrivial:
            assert v.worst_log_ratio > 0.1 * EPS
    # k picks: ε/k each, reported as the adaptive composition of k releases (ε in total at δ = 0)
    g = spec.privacy(EPS, k=3)
    assert g.k == 3 and g.epsilon0 * 3 >= EPS and g.epsilon(0.0) == pytest.approx(EPS, rel=1e-15)


@pytest.mark.parametrize("name", list(dpselect.MECHANISMS))
def test_registered_mechanism_contract(name, freq):
    check_registered_contract(dpselect.MECHANISMS[name], freq)


@pytest.mark.parametrize("name", list(dpselect.MECHANISMS))
def test_audit_rejects_a_halved_sensitivity(name):
    """The mutation check: with the sensitivity halved the claimed guarantee fails the exact audit.

    Global mechanisms: every utility moves on these pairs, and Δ/2 is caught. Local mechanisms: on the
    capped-count pairs one candidate moves at a time, which leaves the exponent's factor 2 as slack (it covers
    the candidate moving and the normaliser moving the other way): δ/2 reaches the log-ratio range ε exactly
    (worst 0.886ε), so δ/4 is the mutation that must fail there."""
    spec = dpselect.MECHANISMS[name]
    scale = 0.5 if spec.kind == "global" else 0.25
    for opts in registry_variants(spec):
        utilities, sensitivity, pairs, _ = registry_instance(spec, opts.get("monotonic", False))
        res = exact_dp_audit(_law(spec, utilities, sensitivity, opts, scale=scale), pairs,
                             claim=spec.privacy(EPS, **opts))
        assert not res.passed and max(res.worst_log_ratio, res.worst_range) > EPS + 0.5, (opts, res)


def test_audit_rejects_permute_and_flip_claimed_as_bounded_range():
    """ε-DP but not ε-BR (the opendp#2911 class of bug): the registry claims PureDP, and a BoundedRange claim
    is refused by the exact audit on the same pairs."""
    pf = get_mechanism("PF")
    assert pf.privacy(EPS) == PureDP(EPS) and not pf.bounded_range()
    utilities, sensitivity, pairs, _ = registry_instance(pf)
    law = _law(pf, utilities, sensitivity, {})
    assert exact_dp_audit(law, pairs, claim=PureDP(EPS)).passed
    res = exact_dp_audit(law, pairs, claim=BoundedRange(EPS))
    assert not res.passed and res.worst_range == pytest.approx(1.5394, abs=1e-4)
    # the exponential mechanism on the same pairs is ε-BR
    em = get_mechanism("EM")
    assert exact_dp_audit(_law(em, utilities, sensitivity, {}), pairs, claim=BoundedRange(EPS)).passed


@pytest.mark.parametrize("name", ["exponential", "permute_and_flip", "report_noisy_max", "local_dampening",
                                  "shifted_local_dampening"])
def test_bounded_range_claims_are_exactly_the_audited_ones(name):
    """For the built-ins, the exact audit accepts a BoundedRange(ε) claim on these pairs exactly where the
    registry makes it: the Gumbel family (EM, Gumbel RNM, LD, SLD; monotonic too) passes, permute-and-flip and
    Laplace RNM span more than ε (ranges 1.54 / 1.12 at ε = 1, monotonic 1.61 / 1.12)."""
    spec = get_mechanism(name)
    for opts in registry_variants(spec):
        utilities, sensitivity, pairs, _ = registry_instance(spec, opts.get("monotonic", False))
        res = exact_dp_audit(_law(spec, utilities, sensitivity, opts), pairs, claim=BoundedRange(EPS))
        assert res.passed == spec.bounded_range(**opts), (opts, res.worst_range)
        assert res.passed or res.worst_range > EPS + 0.1
