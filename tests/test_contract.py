"""The contract of every selector in dpselect.mechanisms, option by option (issue 21, item 7: a start).

Every mechanism (exponential, permute-and-flip, report-noisy-max with each noise, local dampening, shifted
local dampening in both directions) with every option -- base measure none / integer / fractional / tiny /
huge / vast, ``monotonic=``, ``k`` = 1 and 2, ``size=``, ``exact=False`` -- is either

* **accepted**: its exact law (the ``*_probabilities`` function; for k = 2 the law of the ordered pair of
  picks built from it) passes :func:`dpselect.audit.exact_dp_audit` at the claimed ε on neighbouring
  inputs, and its samplers (the exact batch, single exact calls, the float path) pass a seeded χ² test
  against that law; or
* **refused**: a ValueError naming the option, from the sampler (every variant) and from the
  probability function alike.

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
GRID = [np.array([0.0, 1.0, 0.5]), np.array([0.0, -1.75, 0.25])]


def _global_pairs(monotonic: bool):
    """Utility vectors whose entries each move by at most Δ = 1 (all one way if ``monotonic``)."""
    steps = [(-1.0, 0.0, 1.0)] * 3 if monotonic else [(-1.0, 1.0)] * 3
    pairs = []
    for i in range(len(GRID)):
        for d in itertools.product(*steps):
            d = np.array(d)
            if monotonic and not ((d >= 0).all() or (d <= 0).all()):
                continue
            if d.any():
                pairs.append(((i, (0.0, 0.0, 0.0)), (i, tuple(d))))
    return pairs


def _utilities(key) -> np.ndarray:
    return GRID[key[0]] + np.array(key[1])


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
CAP = 2          # u_r = min(c_r, CAP): a count capped at CAP
MAX_RECORDS = 4  # the public bound on the number of records (so the sensitivity saturates at t = 2)


def _u(c) -> np.ndarray:
    return np.minimum(np.asarray(c, dtype=float), CAP)


def _sf(c) -> dpselect.SensitivityFunction:
    """δ(x, t, r) = 1 if c_r <= CAP + t else 0: a record more or less changes min(c_r, CAP) only below the cap."""
    c = np.asarray(c)

    def delta(t, candidates=None):
        d = (c <= CAP + t).astype(float)
        return d if candidates is None else d[candidates]

    return dpselect.SensitivityFunction(delta, 1.0, n_candidates=3, saturation_distance=MAX_RECORDS - CAP,
                                        name="capped_count")


UNIVERSE = [c for c in itertools.product(range(MAX_RECORDS + 1), repeat=3) if sum(c) <= MAX_RECORDS]


def _neighbours(c):
    for r in range(3):
        for s in (-1, 1):
            y = list(c)
            y[r] += s
            if y[r] >= 0 and sum(y) <= MAX_RECORDS:
                yield tuple(y)


LOCAL_PAIRS = [(x, y) for x in UNIVERSE for y in _neighbours(x) if x < y]
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
