"""The registry's contract audit, shared by :func:`dpselect.registry.check` and ``tests/test_contract.py``.

Two small public models of neighbouring inputs (no private data: every vector is made up here):

* global mechanisms: utility vectors of 3 candidates on which every utility moves by at most Δ = 1 (all one
  way with ``monotonic=True``);
* local mechanisms: capped counts u_r = min(c_r, 2) over every dataset of at most 4 records on 3 candidates
  (add/remove one record), with their admissible sensitivity function δ(x, t, r) = 1 if c_r <= 2 + t else 0.

:func:`audit_spec` runs, for every option setting a spec offers (each noise, each direction, monotonic): the
exact audit of its ``probability_fn`` against its declared guarantee on those pairs
(:func:`dpselect.audit.exact_dp_audit`), and a seeded χ² of its selector's draws against that law.
"""
from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

EPS = 1.0
GRID = (np.array([0.0, 1.0, 0.5]), np.array([0.0, -1.75, 0.25]))
CAP = 2           # u_r = min(c_r, CAP): a count capped at CAP
MAX_RECORDS = 4   # the public bound on the number of records (the sensitivity saturates at t = 2)


def global_pairs(monotonic: bool) -> list:
    """Keys ``(grid index, shift)`` of utility vectors whose entries each move by at most Δ = 1 (one way if
    ``monotonic``), paired with the unshifted vector."""
    steps = [(-1.0, 0.0, 1.0)] * 3 if monotonic else [(-1.0, 1.0)] * 3
    pairs = []
    for i in range(len(GRID)):
        for d in itertools.product(*steps):
            arr = np.array(d)
            if monotonic and not ((arr >= 0).all() or (arr <= 0).all()):
                continue
            if arr.any():
                pairs.append(((i, (0.0, 0.0, 0.0)), (i, tuple(d))))
    return pairs


def grid_utilities(key: Any) -> np.ndarray:
    """The utility vector of a :func:`global_pairs` key."""
    return GRID[key[0]] + np.array(key[1])


def capped_utilities(c: Any) -> np.ndarray:
    """u_r = min(c_r, CAP) of the counts ``c``."""
    return np.minimum(np.asarray(c, dtype=float), CAP)


def capped_sensitivity(c: Any) -> Any:
    """δ(x, t, r) = 1 if c_r <= CAP + t else 0: a record more or less changes min(c_r, CAP) only below the cap."""
    from .sensitivity import SensitivityFunction
    cc = np.asarray(c)

    def delta(t: int, candidates: Any = None) -> np.ndarray:
        d = (cc <= CAP + t).astype(float)
        return d if candidates is None else d[candidates]

    return SensitivityFunction(delta, 1.0, n_candidates=3, saturation_distance=MAX_RECORDS - CAP,
                               name="capped_count")


UNIVERSE = [c for c in itertools.product(range(MAX_RECORDS + 1), repeat=3) if sum(c) <= MAX_RECORDS]


def count_neighbours(c: tuple) -> Any:
    """The datasets with one record more or less than ``c`` (within the public bound)."""
    for r in range(3):
        for s in (-1, 1):
            y = list(c)
            y[r] += s
            if y[r] >= 0 and sum(y) <= MAX_RECORDS:
                yield tuple(y)


LOCAL_PAIRS = [(x, y) for x in UNIVERSE for y in count_neighbours(x) if x < y]


def variants(spec: Any) -> list[dict]:
    """The option settings a spec's contract covers: every noise it offers, both directions, monotonic."""
    out: list[dict] = [{"noise": n} for n in spec.noises] if spec.accepts("noise") else [{}]
    if spec.accepts("direction"):
        out = [{**o, "direction": d} for o in out for d in ("increasing", "decreasing")]
    if spec.accepts("monotonic"):
        out += [{**o, "monotonic": True} for o in out]
    return out


def instance(spec: Any, monotonic: bool = False) -> tuple[Callable, Callable, list, Any]:
    """(utilities(x), sensitivity(x), neighbour pairs, x0) of the spec's model (global or local)."""
    if spec.kind == "global":
        return grid_utilities, (lambda key: 1.0), global_pairs(monotonic), (1, (0.0, 0.0, 0.0))
    return capped_utilities, capped_sensitivity, LOCAL_PAIRS, (3, 1, 0)


def law(spec: Any, utilities: Callable, sensitivity: Callable, opts: dict, epsilon: float = EPS,
        scale: float = 1.0) -> Callable:
    """x -> spec.probabilities at x (the sensitivity multiplied by ``scale``: the tests' mutation)."""
    from .sensitivity import SensitivityFunction

    def fn(key: Any) -> np.ndarray:
        s = sensitivity(key)
        if scale != 1.0:
            s = s * scale if spec.kind == "global" else SensitivityFunction(
                lambda t, sf=s: scale * sf(t), scale * s.global_sensitivity, n_candidates=3,
                saturation_distance=s.saturation_distance)
        return spec.probabilities(utilities(key), epsilon=epsilon, sensitivity=s, **opts)
    return fn


def chi2_pvalue(samples: Any, probs: Any) -> float:
    """χ² goodness of fit of integer draws against exact probabilities (cells of expectation < 5 pooled);
    0.0 when an output of probability 0 was drawn."""
    from scipy import stats
    p = np.asarray(probs, dtype=float)
    counts = np.bincount(np.asarray(samples, dtype=np.int64).ravel(), minlength=p.size)
    if counts.size > p.size:
        return 0.0
    n = counts.sum()
    keep = p * n >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(p[keep] * n, p[~keep].sum() * n)
    if exp[-1] == 0:
        if obs[-1] != 0:
            return 0.0
        obs, exp = obs[:-1], exp[:-1]
    if obs.size < 2:
        return 1.0
    return float(stats.chisquare(obs, exp * (n / exp.sum())).pvalue)


@dataclass(frozen=True)
class VariantReport:
    """One option setting of :func:`audit_spec`: the claim, the exact audit and the χ² of the draws."""

    options: dict
    claim: Any
    worst_log_ratio: float
    worst_range: float
    audit_passed: bool
    law_ok: bool
    chi2_pvalue: float
    error: str = ""


def audit_spec(spec: Any, *, epsilon: float, draws: int, seed: int) -> list[VariantReport]:
    """The exact audit of ``spec.probabilities`` against ``spec.privacy(epsilon, **opts)`` on the model's
    neighbouring pairs, and a χ² of ``draws`` seeded draws of ``spec.select`` against that law, per variant."""
    from .audit import exact_dp_audit
    out = []
    for opts in variants(spec):
        utilities, sensitivity, pairs, x0 = instance(spec, opts.get("monotonic", False))
        claim = spec.privacy(epsilon, **opts)
        fn = law(spec, utilities, sensitivity, opts, epsilon)
        res = exact_dp_audit(fn, pairs, claim=claim)
        p = np.asarray(fn(x0), dtype=float)
        law_ok = bool(p.shape == (3,) and np.all(np.isfinite(p)) and np.all(p >= 0) and abs(p.sum() - 1.0) < 1e-9)
        pv, error = 0.0, ""
        if law_ok:
            s = zlib.crc32(repr((spec.name, sorted(opts.items()), seed)).encode())
            try:   # the user's own selector on made-up data: any failure is a finding of the audit
                picks = spec.select(utilities(x0), epsilon=epsilon, sensitivity=sensitivity(x0), size=draws,
                                    rng=s, **opts)
                pv = chi2_pvalue(picks, p)
            except Exception as exc:
                error = f"select(size={draws}) raised {type(exc).__name__}: {exc}"
        out.append(VariantReport(dict(opts), claim, float(res.worst_log_ratio), float(res.worst_range),
                                 bool(res.passed), law_ok, pv, error))
    return out
