"""Single-objective private selection: exponential mechanism, permute-and-flip, report-noisy-max,
local dampening and shifted local dampening, with top-k and exact output probabilities.

Conventions shared by every selector here:

* ``utilities`` is a 1-D array of finite numbers, one per candidate; larger is better.
* Privacy: ε-differential privacy under the neighbour model of the utility (whatever model the
  ``sensitivity`` / sensitivity function was derived for). The exponent carries the factor 2
  (ε·u / (2Δ)) unless ``monotonic=True`` declares that on neighbouring datasets all utilities move in
  the same direction (e.g. counts under add/remove-one), which allows ε·u / Δ.
* ``k``: omitted (``None``, the default) or 1, one pick, returned as an ``int``; ``k > 1``: k distinct
  candidates, picked one after another on the remaining candidates with ε/k each (sequential
  composition: ε in total), returned as an int64 array in the order picked.
* ``base_measure``: optional, one w_r per candidate, which lets callers group equal candidates instead of
  listing millions of them. Its meaning depends on the noise. Gumbel noise (the exponential mechanism,
  local dampening, shifted local dampening, ``report_noisy_max(noise="gumbel")``): any finite w_r > 0,
  probability ∝ w_r · exp(...) (w is public and cancels from every likelihood ratio). Exponential noise
  (permute-and-flip) and Laplace noise: w_r *copies* of candidate r, so whole numbers from 1 to 2**900;
  the mechanism is then exactly report-noisy-max on the expanded list, hence ε-DP. A fractional w is
  refused there (ValueError, before any randomness): the "max of w copies" it would give is not ε-DP
  (two candidates, ε = 1: log-ratio 1.31 at w = 0.5, 4.6 at w = 0.01). Every ``*_probabilities``
  function reads it the same way.
* ``rng``: a ``numpy.random.Generator`` or an int seed; ``None`` draws OS entropy.
* ``exact=True`` (the default): the output law is *exactly* the mechanism's for the inputs as given
  (floats read as exact rationals), drawn from the generator's random bits only. Every selector is a
  noisy maximum (Gumbel noise: exponential mechanism; exponential noise: permute-and-flip; Laplace
  noise: report-noisy-max) sampled with partially sampled random numbers (:mod:`dpselect.sampling`):
  float arithmetic with proven error bounds settles almost every draw, exact rational/decimal
  arithmetic the rare near-ties. No output's probability is rounded to 0 (the float attacks of
  Mironov 2012 and Ilvento 2020 do not apply). Any finite utilities and budgets (1e300 and −1e300
  together, ε = 1e-300 or 1e300) sample correctly.
* ``exact=False``: the previous float64 samplers (inverse CDF, float noise), kept for comparison. An
  output whose probability is below ~2^-53 of the total can be impossible there on one dataset and
  possible on a neighbour, an unbounded privacy loss.
* Arguments: the data (``utilities``) positionally, then keywords: ``epsilon=``, ``sensitivity=`` (or
  ``sensitivity_function=``), ``k=``, ...
* ``size=N``: N independent draws in one call (an array of N indices, or N × k), vectorised over
  draws; the same law as N separate calls (with ``exact=False``, the same picks too). N·k is at most
  2**28 (checked first).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from ._rng import check_rng
from .typing import IndexArray, RngLike
from ._validation import check_bool, check_choice, check_int, check_k, check_positive, check_utilities
from .dampening import (
    DEFAULT_MAX_STEPS,
    check_sensitivity_function,
    dampen,
    dampen_exact,
    dampen_with_error,
    shift_total_exact,
    shift_totals,
    shift_totals_with_error,
)
from .sampling import NOISES, noisy_top_k, noisy_top_k_batch, noisy_top_k_peeled
from .sensitivity import SensitivityFunction
from ._boundary import charge_selection, check_accountant, check_topk_delta, topk_budget
from .accounting.accountant import Accountant
from .vocabulary import selection_result
from .vocabulary import probabilities_result

__all__ = [
    "exponential",
    "exponential_probabilities",
    "permute_and_flip",
    "permute_and_flip_probabilities",
    "report_noisy_max",
    "report_noisy_max_probabilities",
    "local_dampening",
    "local_dampening_probabilities",
    "shifted_local_dampening",
    "shifted_local_dampening_probabilities",
]

# Lazy peeling (_rnm_select): candidates within log(n) + _HEAD_GAP noise units of the best get fresh
# noise every pick; the rest are reached by thinning. Any value is exact; it only changes the work.
_HEAD_GAP = 10.0
#: Exact top-k with exponential or Laplace noise: k passes up to this many candidates, above it
#: sampling.noisy_top_k_peeled (same law; it reveals only the candidates that can win a pick).
_PEEL_LAZY_MIN = 256
DIRECTIONS = ("increasing", "decreasing")


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def _check_weights(weights, n: int, name: str = "base_measure") -> np.ndarray | None:
    if weights is None:
        return None
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of finite numbers > 0, got "
                        f"{str(weights)[:60]!r}: {exc}") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array with one entry per candidate ({n}), got shape {w.shape}")
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and > 0: {name}[{i}] = {w[i]!r}")
    return w


#: Exponential and Laplace noise: the most copies one base-measure entry may stand for (every float above
#: 2^53 is a whole number; up to 2^900, ln(U)/w stays a normal float for every 64-bit cell end U < 1, so the
#: float enclosures keep their relative error; counts of any int64 size pass).
COPIES_MAX = 2.0 ** 900


def _check_copies(w: np.ndarray | None, noise: str) -> np.ndarray | None:
    """The base measure under ``noise``: any w > 0 for Gumbel noise, whole numbers of copies otherwise.

    With Gumbel noise (exponential mechanism) P(r) ∝ w_r·exp(score_r) for any w > 0: w is public and
    cancels from every likelihood ratio. With exponential noise (permute-and-flip) or Laplace noise the
    mechanism is report-noisy-max over w_r interchangeable copies of candidate r, noise F⁻¹(U^{1/w_r}),
    which is ε-DP because it *is* the mechanism on the expanded candidate list; for a fractional w it
    is not (2 candidates, ε = 1: log-ratio 1.31 at w = 0.5, 4.6 at 0.01; Laplace 1.0067ε at
    w = (2, 0.5)). So fractional weights are refused there, before any randomness.
    """
    if w is None or noise == "gumbel":
        return w
    bad = (w != np.floor(w)) | (w > COPIES_MAX)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "permute-and-flip" if noise == "exponential" else "Laplace report-noisy-max"
        raise ValueError(
            f"base_measure[{i}] = {w[i]!r} is not allowed with noise={noise!r} ({what}): there a base measure "
            f"counts interchangeable copies of a candidate, so every entry must be a whole number from 1 to 2**900. "
            "A fractional base measure is not ε-DP with exponential or Laplace noise; only the exponential "
            "mechanism (noise='gumbel') takes any base_measure > 0 (probability ∝ w·exp(...))")
    return w


def _scale(utilities: np.ndarray, factor: "float | tuple[float, float, int]") -> np.ndarray:
    """factor · (u − max u): the log-weight of each candidate up to a constant, never overflowing to +inf.

    ``factor``: a float, or a tuple (eps, sensitivity, mult) meaning eps/(sensitivity·mult), formed without
    overflow or underflow of the factor itself (ε = 1e300 with Δ = 1e-300 and the like).
    """
    if isinstance(factor, tuple):
        lw = scaled_scores(utilities, 0.0, *factor)[0].copy()
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            lw = (utilities - utilities.max()) * factor  # <= 0: finite or −inf (an exp-underflow that is exact)
    top = np.isposinf(lw)
    if top.any():
        # scores beyond the float range (an overflowed D or u ∓ G on the float path): in float64 every
        # other candidate is infinitely far below them, so they share all the mass (not inf − inf = NaN)
        lw = np.where(top, 0.0, -np.inf)
    return lw


def _log_weights(scores: np.ndarray, factor: "float | tuple[float, float, int]",
                 weights: np.ndarray | None) -> np.ndarray:
    lw = _scale(scores, factor)
    if weights is not None:
        lw = lw + np.log(weights)
    return lw


def _probabilities_from_scores(s: np.ndarray, eps: float, sensitivity: float, mult: int, w) -> np.ndarray:
    """∝ w_r·exp(c·s_r), c = eps/(sensitivity·mult), formed without overflow for any finite s and c > 0."""
    lw = scaled_scores(s, 0.0, eps, sensitivity, mult)[0].copy()
    if w is not None:
        lw = lw + np.log(w)
    p = np.exp(lw - lw.max())
    return p / p.sum()


def _sample(scores: np.ndarray, factor: "float | tuple[float, float, int]", weights: np.ndarray | None, k: int,
            rng: np.random.Generator, _table: tuple | None = None) -> "int | np.ndarray":
    """k draws without replacement, each ∝ w_r·exp(factor·score_r) among the candidates not yet drawn.

    Successive sampling without replacement with fixed scores is exactly k peeled exponential
    mechanism calls. Draws come from the inverse CDF of the full distribution, normalised in log space;
    a draw that hits an earlier pick is rejected (exact conditioning), and after a few rejections in a
    row the CDF is rebuilt on the remaining candidates only, re-normalised at *their* maximum so that
    nothing that underflowed beside the earlier picks is lost.
    """
    n = scores.shape[0]
    remaining = None
    lw = _log_weights(scores, factor, weights) if _table is None else _table[0]
    picks: list[int] = []
    chosen: set[int] = set()
    misses = 0
    while True:
        if _table is not None:   # the first round's table, built once for many draws (_sample_size)
            w, cdf = _table[1], _table[2]
            _table = None
        else:
            w = np.exp(lw - lw.max())
            cdf = np.cumsum(w)
        total = cdf[-1]
        while len(picks) < k and misses < 8:
            x = rng.random() * total
            i = int(np.searchsorted(cdf, x, side="right"))
            if i >= cdf.shape[0]:  # x rounded up to the total
                i = int(np.flatnonzero(w > 0)[-1])
            orig = i if remaining is None else int(remaining[i])
            if orig in chosen:
                misses += 1
                continue
            misses = 0
            picks.append(orig)
            chosen.add(orig)
        if len(picks) == k:
            return picks[0] if k == 1 else np.asarray(picks, dtype=np.int64)
        misses = 0
        keep = np.ones(n, dtype=bool)
        keep[picks] = False
        remaining = np.flatnonzero(keep)
        lw = _log_weights(scores[remaining], factor, None if weights is None else weights[remaining])


#: exact=False with size=: draws are vectorised over this many noise values at a time (memory bound).
_FLOAT_BATCH = 2 ** 22


def _sample_size(scores: np.ndarray, factor: tuple[float, float, int], weights: np.ndarray | None, k: int, size: int,
                 rng) -> np.ndarray:
    """``size`` draws of :func:`_sample` (exact=False) with the same random numbers, so the same picks as
    ``size`` calls: the inverse-CDF table is built once, and for k = 1 all draws are one vectorised lookup."""
    gen = check_rng(rng)
    lw = _log_weights(scores, factor, weights)
    w = np.exp(lw - lw.max())
    cdf = np.cumsum(w)
    if k > 1:
        table = (lw, w, cdf)
        return np.asarray([_sample(scores, factor, weights, k, gen, table) for _ in range(size)], dtype=np.int64)
    x = gen.random(size)   # the same doubles as ``size`` calls of gen.random()
    x *= cdf[-1]
    i = np.searchsorted(cdf, x, side="right")
    over = i >= cdf.shape[0]   # x rounded up to the total
    if over.any():
        i[over] = int(np.flatnonzero(w > 0)[-1])
    return i.astype(np.int64)


def _rnm_size(u: np.ndarray, factor: tuple[float, float, int], noise: str, k: int, size: int, rng,
              w: np.ndarray | None) -> np.ndarray:
    """``size`` draws of report-noisy-max with float noise (exact=False), the same random numbers and picks as
    ``size`` calls; k = 1 vectorised over draws (noise drawn row after row: numpy's generators fill an
    array in the order of separate calls)."""
    gen = check_rng(rng)
    if k > 1:
        return np.asarray([_rnm_any(u, factor, noise, k, gen, w) for _ in range(size)], dtype=np.int64)
    s = _scale(u, factor)
    finite = np.isfinite(s)
    idx = None if finite.all() else np.flatnonzero(finite)
    if idx is not None:   # candidates beyond the float range of noise units below the best never win one pick
        s = s[idx]
        w = None if w is None else w[idx]
    n = s.shape[0]
    out = np.empty(size, dtype=np.int64)
    rows = max(1, _FLOAT_BATCH // n)
    for start in range(0, size, rows):
        r = min(rows, size - start)
        v = _unit_noise(noise, (r, n), gen, w)
        v += s
        out[start:start + r] = np.argmax(v, axis=1)
    return out if idx is None else idx[out].astype(np.int64)


# ---------------------------------------------------------------------------------------------
# exact sampling (the default): scores with rigorous error bounds, then dpselect.sampling
# ---------------------------------------------------------------------------------------------
_REL = 1e-15   # relative error of a few float operations (each <= 2^-53), with room to spare
_TINY = 1e-300  # absolute error of results that underflow to subnormals


def scaled_scores(s: np.ndarray, s_err: Any, eps: float, sensitivity: float, mult: int
                  ) -> tuple[np.ndarray, Any, float]:
    """The noisy-max scores of every selector: float a ≈ c·(s − S), c = eps/(sensitivity·mult), S = max of the finite
    s (an exact constant), with a rigorous error bound; returns (a, err, S).

    ``s`` approximates exact scores within ``s_err`` (0 when exact). ``err`` is ``None`` when it is the
    relative model |a − exact| <= _REL·|a| + _TINY (exact inputs; the sampler's fast path), else an
    array. Every candidate gets the same shift S, which the mechanisms' laws ignore. Works for any
    finite s (subnormals included) and any positive c, also far outside the float range:
    c = cm·2^ce with cm in [0.5, 1), each difference d = s − S split as dm·2^de (dm in [0.5, 1), exact
    for subnormals too) and the powers of two applied last (``ldexp``), so no intermediate is subnormal
    (a subnormal d·cm would lose bits that 2^ce then magnifies) and nothing overflows before the result
    itself would. A result below −DBL_MAX is −inf, with a finite ``err`` where that is certain (then the
    sampler treats it as "below −DBL_MAX" without exact arithmetic) and ``inf`` (unknown) at the
    boundary. Error: the subtraction, cm (two roundings) and the product, each <= 2^-53 relative, plus
    2^-1075 absolute where the result is subnormal.
    """
    exact_in = np.ndim(s_err) == 0 and float(s_err) == 0.0
    S = float(s.max())
    lo = float(s.min())
    em, ee = math.frexp(eps)
    dm, de = math.frexp(sensitivity)
    cm, e2 = math.frexp(em / (dm * mult))
    ce = ee - de + e2
    fast = math.isfinite(S) and math.isfinite(S - lo)
    if exact_in and fast and -1021 <= ce <= 1023:
        # fast path: c is a normal float (cm·2^ce exactly), so d·c is one rounding (2^-1075 absolute where
        # it is subnormal; d itself is exact when subnormal)
        c = math.ldexp(cm, ce)
        # min a = fl(fl(lo − S)·c) (rounding is monotone): one scalar says whether any product overflows;
        # if so the general path below certifies which results are below −DBL_MAX
        if math.isfinite((lo - S) * c):
            a = s - S
            a *= c
            return a, None, S
    if not exact_in and fast and -1021 <= ce <= 1022:
        # the same with per-score errors (dampened or shifted scores), in place: d·c with c = cm·2^ce a
        # normal float is fl(d·cm)·2^ce (exact scaling); c·s_err rounded up by a relative margin, and an
        # underflow of it is covered by _TINY
        c = math.ldexp(cm, ce)
        if math.isfinite((lo - S) * c):
            a = s - S
            a *= c
            err = np.abs(a)
            err *= _REL
            err += _TINY
            with np.errstate(over="ignore", invalid="ignore"):
                e = np.multiply(s_err, c * (1 + 4 * _REL))
                err += e
            return a, err, S
    fin = np.isfinite(s)
    all_fin = bool(fin.all())
    if not all_fin:
        S = float(s[fin].max()) if fin.any() else 0.0
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        base = s if all_fin else np.where(fin, s, 0.0)
        d = base - S
        # the spread itself overflows: (s − S)/2, again one rounding (then S >= 2^969 or so, so a
        # subnormal s is ~2^2000 below the others and its halving error is far inside _REL)
        halved = not np.all(np.isfinite(d))
        if halved:
            d = base * 0.5 - S * 0.5
        sh = ce + (1 if halved else 0)
        dmant, dexp = np.frexp(d)
        a = np.ldexp(dmant * cm, dexp + sh)
        err = _REL * np.abs(a) + _TINY
        e = None if exact_in else np.broadcast_to(np.asarray(s_err, dtype=np.float64), s.shape)
        if e is not None:
            # c·s_err rounded up by a relative margin (inf stays inf; 0 stays 0), split like d
            emant, eexp = np.frexp(np.where(e > 0, e, 0.0))
            err = err + np.ldexp(emant * (cm * (1 + 4 * _REL)), eexp + ce)
        over = np.isneginf(a)
        if over.any():
            # below −DBL_MAX for certain when even an upper bound of the exact c·(s − S), shrunk by
            # 2^-50 (more than the roundings of d and of the product), overflows
            if e is None:
                d_up = d
            else:
                d_up = np.nextafter(d + np.where(e > 0, e * (0.5 if halved else 1.0), 0.0), np.inf)
            um, ux = np.frexp(np.minimum(d_up, 0.0))
            sure = over & np.isneginf(np.ldexp(um * (cm * (1 - 2.0 ** -50)), ux + sh))
            err = np.where(over, np.where(sure, _TINY, np.inf), err)
    if not all_fin:
        # scores beyond the float range (overflowed D, u ∓ G): unknown here, exact values on demand
        a = np.where(fin, a, s)
        err = np.where(fin, err, np.inf)
    return a, err, S


_EXACT_BATCH_MAX = 2 ** 24
_EXACT_BATCH = 2 ** 22


def _exact_select(s, s_err, exact_s, eps: float, sensitivity: float, mult: int, k: int, rng, *, noise: str = "gumbel",
                  weights=None, size: int | None = None):
    """The ideal noisy-max mechanism on scores c·s, c = eps/(sensitivity·mult) (unit noise), sampled exactly
    (dpselect.sampling). ``exact_s(r)`` gives candidate r's exact score s as a Fraction.

    Gumbel noise: k picks at once (= k peeled exponential-mechanism calls). Exponential and Laplace
    noise: k passes with fresh noise on the remaining candidates (the definition of their top-k).
    """
    a, err, S = scaled_scores(s, s_err, eps, sensitivity, mult)

    def exact_score(r):
        return Fraction(eps) / (Fraction(sensitivity) * mult) * (exact_s(r) - Fraction(S))

    if size is not None:
        n = a.shape[0]
        # above _EXACT_BATCH_MAX entries, rows go in chunks of _EXACT_BATCH entries. The chunks no longer bound
        # memory (the batch sampler works in blocks of its own) but they fix where each chunk's refinement
        # draws fall in the stream, so they stay: changing them would change seeded outputs
        rows = size if size * n <= _EXACT_BATCH_MAX else max(1, _EXACT_BATCH // n)
        out = np.concatenate([
            noisy_top_k_batch(a, err, k, min(rows, size - start), rng, noise=noise, exact_score=exact_score,
                              weights=weights, peel=noise != "gumbel" and k > 1)
            for start in range(0, size, rows)])
        return out[:, 0] if k == 1 else out

    if noise == "gumbel" or k == 1:
        out = noisy_top_k(a, err, k=k, rng=rng, noise=noise, exact_score=exact_score, base_measure=weights)
        return int(out[0]) if k == 1 else out
    if weights is None and a.shape[0] > _PEEL_LAZY_MIN:   # fresh noise per pick, lazily (exact)
        return noisy_top_k_peeled(a, err, k, rng, noise=noise, exact_score=exact_score)
    remaining = np.arange(a.shape[0])
    picks = []
    for _ in range(k):
        sub = remaining

        def ex(j, sub=sub):
            return exact_score(int(sub[j]))

        j = int(noisy_top_k(a[sub], None if err is None else err[sub], k=1, rng=rng, noise=noise, exact_score=ex,
                            base_measure=None if weights is None else weights[sub])[0])
        picks.append(int(sub[j]))
        remaining = np.delete(remaining, j)
    return np.asarray(picks, dtype=np.int64)


def _em_exact(u, eps, sensitivity, mult, k, w, rng, noise="gumbel", size=None):
    return _exact_select(u, 0.0, lambda r: Fraction(float(u[r])), eps, sensitivity, mult, k, rng, noise=noise,
                         weights=w, size=size)


def dampened_select(utilities: np.ndarray, sf: SensitivityFunction, D: np.ndarray, D_err, epsilon: float, k: int,
                    rng, *, max_steps: int = DEFAULT_MAX_STEPS, weights=None, size: int | None = None,
                    split: int | None = None):
    """Local dampening (ε/k per pick) on precomputed ``(D, D_err) = dampen_with_error(u, sf)``, exactly.

    Internal (plain, checked values): for callers that cache the dampened scores across many draws
    (PrivTopk, DP-MOTkIN, DiffPID3, ``Mechanism.select_prepared``): the same law as :func:`local_dampening`
    with the same random bits, without recomputing D. ``split``: each pick runs with ``epsilon / split``
    (default ``k``: ε/k; 1 for a top-k under (ε, δ), whose ``epsilon`` is then the per-pick ε0).
    """
    k = int(k)
    return _exact_select(D, D_err, lambda r: dampen_exact(float(utilities[r]), sf, r, max_steps=max_steps),
                         float(epsilon), 1.0, 2 * (k if split is None else split), k, check_rng(rng), weights=weights,
                         size=size)


def shifted_select(utilities: np.ndarray, sf: SensitivityFunction, G: np.ndarray, G_err, epsilon: float, k: int,
                   rng, *, direction: str = "increasing", max_steps: int = DEFAULT_MAX_STEPS, weights=None,
                   size: int | None = None, split: int | None = None):
    """Shifted local dampening (ε/k per pick; ``split`` as in :func:`dampened_select`) on precomputed
    ``(G, G_err) = shift_totals_with_error(sf, n)``, exactly (the law of :func:`shifted_local_dampening`)."""
    k = int(k)
    sign = -1 if direction == "increasing" else 1
    with np.errstate(over="ignore"):
        scores = utilities + sign * G
    err = G_err + 2.0 ** -52 * np.abs(scores)  # plus the rounding of u ∓ G

    def exact_s(r):
        return Fraction(float(utilities[r])) + sign * shift_total_exact(sf, r, max_steps=max_steps)

    return _exact_select(scores, err, exact_s, float(epsilon), sf.global_sensitivity, 2 * (k if split is None else split),
                         k, check_rng(rng), weights=weights, size=size)


#: size × k above this is refused up front (it would exhaust memory: 2^28 int64 picks are 2 GiB).
SIZE_MAX = 2 ** 28


def _check_size(size, k: int = 1) -> int | None:
    if size is None:
        return None
    size = check_int(size, "size", minimum=1)
    if size * k > SIZE_MAX:
        raise ValueError(f"size = {size} draws of k = {k} pick(s) each is {size * k} indices, more than the "
                         f"{SIZE_MAX} (2**28) one call returns: draw in several calls")
    return size


def _check_finite_scores(s: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(s)):   # which candidate and its score are private: not named
        raise ValueError(
            f"{what} exceed the float64 range, so exact probabilities cannot be given as float64 (the sampler "
            "itself handles such scores exactly)"
        )


def _prepare(utilities, epsilon, sensitivity, k, monotonic, weights):
    u = check_utilities(utilities)
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    k = check_k(1 if k is None else k, u.shape[0])
    monotonic = check_bool(monotonic, "monotonic")
    w = _check_weights(weights, u.shape[0])
    return u, eps, sens, k, monotonic, w


def _check_call(k_given, k: int, delta, exact, size, rng, accountant) -> tuple[float, bool, int | None, np.random.Generator]:
    """The rest of a selector's arguments, after the data, ε, the sensitivity and ``k``: ``(δ, exact, size,
    Generator)``. Nothing here draws from the generator (a Generator is used as is)."""
    d = check_topk_delta(delta, None if k_given is None else k)
    exact, size = check_bool(exact, "exact"), _check_size(size, k)
    gen = check_rng(rng)
    check_accountant(accountant)
    return d, exact, size, gen


def _one_candidate(size: int | None) -> "int | np.ndarray":
    """One candidate: the output is 0 whatever the mechanism (no scores needed)."""
    return 0 if size is None else np.zeros(size, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# exponential mechanism
# ---------------------------------------------------------------------------------------------
def _exponential(u: np.ndarray, eps: float, split: int, sens: float, k: int, monotonic: bool, w: np.ndarray | None,
                 gen: np.random.Generator, exact: bool, size: int | None) -> "int | np.ndarray":
    """The exponential mechanism on checked values: k picks with ε-budget ``eps / split`` each."""
    if u.shape[0] == 1:
        return _one_candidate(size)
    mult = (1 if monotonic else 2) * split
    if exact:
        return _em_exact(u, eps, sens, mult, k, w, gen, size=size)
    factor = (eps, sens, mult)
    if size is not None:
        return _sample_size(u, factor, w, k, size, gen)
    return _sample(u, factor, w, k, gen)


@selection_result
def _exponential_entry(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int | None = None,
                       delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                       rng: RngLike = None, exact: bool = True, size: int | None = None,
                       accountant: Accountant | None = None) -> int | np.ndarray:
    # the boundary: every argument checked once, the budget charged, then the implementation draws
    u, eps, sens, kk, monotonic, w = _prepare(utilities, epsilon, sensitivity, k, monotonic, base_measure)
    d, exact, size, gen = _check_call(k, kk, delta, exact, size, rng, accountant)
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=True)
    charge_selection(accountant, "exponential", eps, k=None if k is None else kk, size=size, delta=d, exact=exact,
                     base_measure=w is not None)
    return _exponential(u, eps_pick, split, sens, kk, monotonic, w, gen, exact, size)


@overload
def exponential(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: None = None, delta: float = 0.0,
                monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                exact: bool = True, size: None = None, accountant: Accountant | None = None) -> int: ...
@overload
def exponential(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int, delta: float = 0.0,
                monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                exact: bool = True, size: int | None = None, accountant: Accountant | None = None) -> IndexArray: ...
@overload
def exponential(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int | None = None, delta: float = 0.0,
                monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                exact: bool = True, size: int, accountant: Accountant | None = None) -> IndexArray: ...


def exponential(
    utilities: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | np.ndarray:
    """Select candidate r with probability ∝ exp(ε·u(r) / (2Δu)) (McSherry-Talwar exponential mechanism).

    Privacy: ε-DP, indeed ε-bounded-range, for any neighbour model under which ``sensitivity`` bounds the
    change of every utility (global sensitivity Δu); with ``monotonic=True`` the exponent is ε·u/Δu.
    ``k > 1`` draws k distinct candidates, ε/k each (sequential composition, ε in total), or with
    ``delta > 0`` the larger per-pick ε0 of an (ε, δ) budget.

    Sampling is exact by default (``exact=True``): the output law is exactly the mechanism's for the
    inputs as given (floats read as exact rationals), drawn from the generator's random bits only
    (:mod:`dpselect.sampling`). ``exact=False`` uses the float64 inverse CDF: faster for tiny inputs,
    but outputs of probability below ~2^-53 can become impossible, which breaks ε-DP.

    Parameters
    ----------
    utilities : array_like
        One finite utility per candidate (1-D); larger is better. A pandas Series selects its labels.
    epsilon : float
        The privacy budget of the call (> 0): ε-DP in total for ``delta=0``, (ε, δ)-DP for ``delta > 0``.
    sensitivity : float
        Δu (> 0): the most any utility changes between neighbouring datasets.
    k : int, optional
        Omitted: one pick, returned as an ``int``. Any int (1 included): k distinct candidates, picked one
        after another on the remaining candidates, returned as an int64 array in the order picked.
    delta : float, optional
        The DP δ of a top-k (``k > 1`` only): 0 (the default) gives each pick ε/k, δ > 0 the larger ε0 of an
        (ε, δ) budget (glossary: [top-k delta][glossary-top-k-delta]).
    monotonic : bool, optional
        True declares that all utilities move in the same direction between neighbours: ε·u/Δu instead of
        ε·u/(2Δu).
    base_measure : array_like, optional
        One w_r per candidate (see the module docstring for how each noise reads it).
    rng : RngLike, optional
        A seed or a ``numpy.random.Generator`` (glossary: [rng][glossary-rng]).
    exact : bool, optional
        True (default): the exact law, from the generator's random bits only. False: float64 sampling.
    size : int, optional
        N independent draws in one call (shape (N,), or (N, k) with ``k``).
    accountant : Accountant, optional
        Charged ``get_mechanism(...).privacy(epsilon, k=k, delta=delta)`` (``size`` times for ``size=N``),
        labelled with the call (``"{name}(k=3)"``), before anything is drawn (glossary: [accountant][glossary-accountant]).

    Returns
    -------
    int or numpy.ndarray
        ``k`` omitted: an ``int`` index (``size=N``: shape (N,)). Any int ``k``: int64 indices of shape (k,)
        (``size=N``: (N, k)). Labels instead of positions for a pandas Series.

    Examples
    --------
    >>> exponential([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, rng=0)
    1
    >>> exponential([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, k=2, rng=0).tolist()
    [1, 2]
    >>> exponential([1.0, 5.0, 2.0], epsilon=1.0, sensitivity=1.0, k=2, size=4, rng=0).shape
    (4, 2)
    >>> import dpselect
    >>> acc = dpselect.Accountant(epsilon=1.0, delta=1e-6, mode="fixed")
    >>> exponential(list(range(50)), epsilon=1.0, sensitivity=1.0, k=10, delta=1e-6, rng=0, accountant=acc).shape
    (10,)
    >>> acc.history[0].label, round(acc.history[0].guarantee.epsilon0, 4)     # ε0 > ε/k = 0.1
    ('exponential(k=10, delta=1e-06)', 0.1525)
    """
    return _exponential_entry(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, delta=delta,
                              monotonic=monotonic, base_measure=base_measure, rng=rng, exact=exact, size=size,
                              accountant=accountant)


@probabilities_result
def exponential_probabilities(utilities: ArrayLike, *, epsilon: float, sensitivity: float, monotonic: bool = False,
                              base_measure: ArrayLike | None = None) -> np.ndarray:
    """Exact output distribution of :func:`exponential` (k = 1): ∝ w_r·exp(ε·u(r)/(2Δu)).

    This is the exact law of one pick of :func:`exponential` with the same arguments; the selector's
    guarantee is a property of this law: ε-DP, indeed ε-bounded-range, when ``sensitivity`` bounds the
    change of every utility (ε·u/Δu with ``monotonic=True``).
    The probabilities are computed from the data and are not themselves private: they are for audits and
    tests. Release the selector's pick (sampling these floats yourself is not exact, see its ``exact``).

    Parameters
    ----------
    utilities : array_like
        One finite utility per candidate (1-D); larger is better. A pandas Series gives a Series back.
    epsilon : float
        The privacy budget of the one pick (> 0).
    sensitivity : float
        Δu (> 0): the most any utility changes between neighbouring datasets.
    monotonic : bool, optional
        True declares that all utilities move in the same direction between neighbours: ε·u/Δu instead of
        ε·u/(2Δu).
    base_measure : array_like, optional
        One w_r per candidate, read as :func:`exponential` reads it.

    Returns
    -------
    numpy.ndarray or pandas.Series
        float64 probabilities of shape (n,), one per candidate, summing to 1; a pandas Series indexed like
        the input (name ``"probability"``) for Series input.

    Examples
    --------
    >>> exponential_probabilities([0.0, np.log(3.0) * 2], epsilon=1.0, sensitivity=1.0).tolist()
    [0.25, 0.75]
    """
    u, eps, sens, _, monotonic, w = _prepare(utilities, epsilon, sensitivity, 1, monotonic, base_measure)
    return _probabilities_from_scores(u, eps, sens, 1 if monotonic else 2, w)


# ---------------------------------------------------------------------------------------------
# report noisy max (and permute-and-flip as its exponential-noise instance)
# ---------------------------------------------------------------------------------------------
def _unit_noise(noise: str, size: "int | tuple[int, int]", rng: np.random.Generator, weights: np.ndarray | None = None) -> np.ndarray:
    """Noise of scale 1; with ``weights`` the maximum of w_r independent draws (w_r copies of a candidate)."""
    if weights is None:
        if noise == "exponential":
            return rng.standard_exponential(size)
        return rng.laplace(size=size)
    # max of w iid draws has CDF F^w: invert F at U^(1/w), computed as exp(log U / w) in log space.
    logu = np.log1p(-rng.random(size)) / weights  # log U^(1/w), U in (0, 1]
    if noise == "exponential":
        return -np.log(-np.expm1(logu))
    # Laplace: F(z) = e^z / 2 for z < 0, 1 - e^(-z) / 2 for z >= 0
    low = logu < -math.log(2.0)
    out = np.empty(size)
    out[low] = math.log(2.0) + logu[low]
    out[~low] = -np.log(-2.0 * np.expm1(logu[~low]))
    return out


def _upper_tail(noise: str, g: float) -> float:
    """P(noise > g) for g >= 0 (unit scale): the upper tails are memoryless there for both families."""
    return math.exp(-g) if noise == "exponential" else 0.5 * math.exp(-g)


def _rnm_select(s: np.ndarray, noise: str, k: int, rng: np.random.Generator, weights: np.ndarray | None):
    """argmax of s + unit noise, peeled k times with fresh noise each pick (ε/k each).

    (Exponential or Laplace noise; Gumbel noise goes through the exponential mechanism's sampler.)
    Later picks need fresh noise on the remaining candidates; we draw it lazily, exactly: fresh noise for a *head* of
    high scores, and for the *tail* only the candidates whose noisy value can beat the head's maximum M.
    Each tail candidate exceeds M independently with probability q_r = P(noise > M − s_r); we draw
    those events by thinning (a Binomial(|tail|, q_max) number of uniformly chosen proposals, each
    kept with probability q_r / q_max), and give each one that exceeds the value M + Exp(1) (the
    upper tails of both noises are memoryless above 0). The picked distribution is exactly that of
    fresh full draws.
    """
    n = s.shape[0]
    if k == 1:
        return int(np.argmax(s + _unit_noise(noise, n, rng, weights)))
    if weights is not None:
        return _rnm_peel_full(s, noise, k, rng, weights)
    smax = s.max()
    head_mask = s >= smax - (math.log(n) + _HEAD_GAP)
    h = int(head_mask.sum())
    target = max(4096, 256 * k)
    if h > max(target, n // 64):
        # Too many near-best scores for a gap of log(n) + 10: take the ~target highest instead (cut at
        # a quantile estimated from a random sample; any cut is exact, it only changes the work).
        if 8 * target >= n:
            return _rnm_peel_full(s, noise, k, rng, None)
        sample = s[rng.integers(0, n, size=min(n, 20_000))]
        cut = np.quantile(sample, 1.0 - target / n)
        head_mask = s >= cut
        if head_mask.sum() > n // 4:
            return _rnm_peel_full(s, noise, k, rng, None)
    head = np.flatnonzero(head_mask)
    tail = np.flatnonzero(~head_mask)
    s_head = s[head]
    s_tail = s[tail]
    tmax = s_tail.max() if tail.size else -np.inf
    head_alive = np.ones(head.size, dtype=bool)
    tail_removed = np.zeros(tail.size, dtype=bool)
    picks = []
    best: tuple[str, int] | None
    for _ in range(k):
        alive = np.flatnonzero(head_alive)
        if alive.size:
            hv = s_head[alive] + _unit_noise(noise, alive.size, rng)
            j = int(np.argmax(hv))
            best_val, best = hv[j], ("head", int(alive[j]))
        else:
            best_val, best = -np.inf, None
        g = best_val - tmax
        if tail.size and (not np.isfinite(g) or g < 0):
            tv = s_tail + _unit_noise(noise, tail.size, rng)
            tv[tail_removed] = -np.inf
            j = int(np.argmax(tv))
            if tv[j] > best_val:
                best_val, best = tv[j], ("tail", j)
        elif tail.size:
            qmax = _upper_tail(noise, g)
            count = int(rng.binomial(tail.size, qmax))
            if count:
                pos = rng.choice(tail.size, size=count, replace=False)
                pos = pos[~tail_removed[pos]]
                pos = pos[rng.random(pos.size) < np.exp(s_tail[pos] - tmax)]
                if pos.size:
                    vals = best_val + rng.standard_exponential(pos.size)
                    j = int(np.argmax(vals))
                    best_val, best = vals[j], ("tail", int(pos[j]))
        assert best is not None  # some candidate's noisy value is finite
        where, j = best
        if where == "head":
            head_alive[j] = False
            picks.append(int(head[j]))
        else:
            tail_removed[j] = True
            picks.append(int(tail[j]))
    return np.asarray(picks, dtype=np.int64)


def _rnm_peel_full(s, noise, k, rng, weights):
    removed = np.zeros(s.shape[0], dtype=bool)
    picks = []
    for _ in range(k):
        v = s + _unit_noise(noise, s.shape[0], rng, weights)
        v[removed] = -np.inf
        j = int(np.argmax(v))
        removed[j] = True
        picks.append(j)
    return np.asarray(picks, dtype=np.int64)


def _report_noisy_max(u: np.ndarray, eps: float, split: int, sens: float, k: int, monotonic: bool,
                      w: np.ndarray | None, gen: np.random.Generator, exact: bool, size: int | None,
                      noise: str) -> "int | np.ndarray":
    """Report-noisy-max on checked values (``w`` already checked against ``noise``): k picks with ε-budget
    ``eps / split`` each."""
    if u.shape[0] == 1:
        return _one_candidate(size)
    mult = (1 if monotonic else 2) * split
    if exact:
        return _em_exact(u, eps, sens, mult, k, w, gen, noise=noise, size=size)
    factor = (eps, sens, mult)
    if size is not None:
        if noise == "gumbel":
            return _sample_size(u, factor, w, k, size, gen)
        return _rnm_size(u, factor, noise, k, size, gen, w)
    if noise == "gumbel":
        # argmax of u + Gumbel(scale) has exactly the exponential mechanism's distribution (Gumbel-max
        # trick), and k picks with ε/k each are successive sampling without replacement: the inverse-CDF
        # sampler gives the same distribution in fewer passes over the candidates.
        return _sample(u, factor, w, k, gen)
    return _rnm_any(u, factor, noise, k, gen, w)


def _rnm_boundary(name: str, utilities, epsilon, sensitivity, noise, k, delta, monotonic, base_measure, rng, exact,
                  size, accountant) -> "int | np.ndarray":
    u, eps, sens, kk, monotonic, w = _prepare(utilities, epsilon, sensitivity, k, monotonic, base_measure)
    w = _check_copies(w, noise)
    d, exact, size, gen = _check_call(k, kk, delta, exact, size, rng, accountant)
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=noise == "gumbel")
    charge_selection(accountant, name, eps, k=None if k is None else kk, size=size, delta=d, exact=exact,
                     base_measure=w is not None, **({"noise": noise} if name == "report_noisy_max" else {}))
    return _report_noisy_max(u, eps_pick, split, sens, kk, monotonic, w, gen, exact, size, noise)


@selection_result
def _report_noisy_max_entry(utilities: ArrayLike, *, epsilon: float, sensitivity: float,
                            noise: Literal["laplace", "gumbel", "exponential"] = "laplace", k: int | None = None,
                            delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                            rng: RngLike = None, exact: bool = True, size: int | None = None,
                            accountant: Accountant | None = None) -> int | np.ndarray:
    noise = check_choice(noise, "noise", NOISES)  # type: ignore[assignment]  # a checked NOISES member
    return _rnm_boundary("report_noisy_max", utilities, epsilon, sensitivity, noise, k, delta, monotonic,
                         base_measure, rng, exact, size, accountant)


@overload
def report_noisy_max(utilities: ArrayLike, *, epsilon: float, sensitivity: float,
                     noise: Literal["laplace", "gumbel", "exponential"] = "laplace", k: None = None,
                     delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                     rng: RngLike = None, exact: bool = True, size: None = None,
                     accountant: Accountant | None = None) -> int: ...
@overload
def report_noisy_max(utilities: ArrayLike, *, epsilon: float, sensitivity: float,
                     noise: Literal["laplace", "gumbel", "exponential"] = "laplace", k: int, delta: float = 0.0,
                     monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                     exact: bool = True, size: int | None = None,
                     accountant: Accountant | None = None) -> IndexArray: ...
@overload
def report_noisy_max(utilities: ArrayLike, *, epsilon: float, sensitivity: float,
                     noise: Literal["laplace", "gumbel", "exponential"] = "laplace", k: int | None = None,
                     delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                     rng: RngLike = None, exact: bool = True, size: int,
                     accountant: Accountant | None = None) -> IndexArray: ...


def report_noisy_max(
    utilities: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    noise: Literal["laplace", "gumbel", "exponential"] = "laplace",
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | np.ndarray:
    """Select argmax_r (u(r) + noise_r) with i.i.d. noise of scale 2Δu/ε (Δu/ε if ``monotonic``).

    ``noise="gumbel"`` is exactly the exponential mechanism (ε-bounded-range), ``noise="exponential"``
    exactly permute-and-flip, ``noise="laplace"`` the classic report-noisy-max (both pure ε-DP, not
    bounded-range). Privacy: ε-DP under the utility's neighbour model (Δu its global sensitivity).
    ``k > 1``: k picks on the remaining candidates with ε/k each (fresh noise per pick; ε in total), or
    with ``delta > 0`` the larger per-pick ε0 of an (ε, δ) budget.

    ``exact=True`` (default) samples every noise exactly with partially sampled random numbers
    (:mod:`dpselect.sampling`); ``exact=False`` uses float64 noise (Mironov 2012's attack applies).

    Parameters
    ----------
    utilities, epsilon, sensitivity, k, monotonic, base_measure, rng, exact, size, accountant
        As for :func:`exponential`.
    delta : float, optional
        The DP δ of a top-k, as for :func:`exponential`.
    noise : {"laplace", "gumbel", "exponential"}, optional
        The noise family (default Laplace); it decides the guarantee charged (Gumbel: bounded range).

    Returns
    -------
    int or numpy.ndarray
        As :func:`exponential` returns.

    Examples
    --------
    >>> report_noisy_max([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, noise="laplace", rng=0)
    1
    >>> report_noisy_max([1.0, 5.0, 2.0], epsilon=1.0, sensitivity=1.0, k=1, size=3, rng=0).shape
    (3, 1)
    """
    return _report_noisy_max_entry(utilities, epsilon=epsilon, sensitivity=sensitivity, noise=noise, k=k,
                                   delta=delta, monotonic=monotonic, base_measure=base_measure, rng=rng, exact=exact,
                                   size=size, accountant=accountant)


def _rnm_any(u, factor, noise, k, rng, w):
    s = _scale(u, factor)
    finite = np.isfinite(s)
    if finite.all():
        return _rnm_select(s, noise, k, rng, w)
    # Candidates more than the float range of noise units below the best have noisy value −inf to
    # double precision: every finite one beats them, and they are only reached once those are used up.
    idx, rest = np.flatnonzero(finite), np.flatnonzero(~finite)
    sub = lambda a, i: None if a is None else a[i]  # noqa: E731
    if idx.size >= k:
        sel = _rnm_select(s[idx], noise, k, rng, sub(w, idx))
        return int(idx[sel]) if k == 1 else idx[sel].astype(np.int64)
    first = np.atleast_1d(idx[_rnm_select(s[idx], noise, idx.size, rng, sub(w, idx))])
    second = np.atleast_1d(rest[_rnm_any(u[rest], factor, noise, k - idx.size, rng, sub(w, rest))])
    return np.concatenate([first, second]).astype(np.int64)


@selection_result
def _permute_and_flip_entry(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int | None = None,
                            delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                            rng: RngLike = None, exact: bool = True, size: int | None = None,
                            accountant: Accountant | None = None) -> int | np.ndarray:
    return _rnm_boundary("permute_and_flip", utilities, epsilon, sensitivity, "exponential", k, delta, monotonic,
                         base_measure, rng, exact, size, accountant)


@overload
def permute_and_flip(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: None = None, delta: float = 0.0,
                     monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                     exact: bool = True, size: None = None, accountant: Accountant | None = None) -> int: ...
@overload
def permute_and_flip(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int, delta: float = 0.0,
                     monotonic: bool = False, base_measure: ArrayLike | None = None, rng: RngLike = None,
                     exact: bool = True, size: int | None = None,
                     accountant: Accountant | None = None) -> IndexArray: ...
@overload
def permute_and_flip(utilities: ArrayLike, *, epsilon: float, sensitivity: float, k: int | None = None,
                     delta: float = 0.0, monotonic: bool = False, base_measure: ArrayLike | None = None,
                     rng: RngLike = None, exact: bool = True, size: int,
                     accountant: Accountant | None = None) -> IndexArray: ...


def permute_and_flip(
    utilities: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | np.ndarray:
    """Permute-and-flip (McKenna & Sheldon 2020): ε-DP selection never worse than the exponential mechanism.

    The original algorithm visits candidates in random order and stops at r with probability
    exp(ε(u(r) − u*)/(2Δu)); its output has exactly the distribution of report-noisy-max with
    exponential noise of scale 2Δu/ε (Ding et al. 2021), which is how it is sampled here (one vectorised
    pass). Privacy: pure ε-DP (not bounded-range) under the utility's neighbour model; ``monotonic=True``
    uses ε/Δu. ``k > 1``: k picks on the remaining candidates, ε/k each, or with ``delta > 0`` the larger
    per-pick ε0 of an (ε, δ) budget (optimal composition of pure ε0-DP picks).

    Parameters
    ----------
    utilities, epsilon, sensitivity, k, monotonic, base_measure, rng, exact, size, accountant
        As for :func:`exponential`.
    delta : float, optional
        The DP δ of a top-k, as for :func:`exponential`.

    Returns
    -------
    int or numpy.ndarray
        As :func:`exponential` returns.

    Examples
    --------
    >>> permute_and_flip([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, rng=0)
    1
    >>> permute_and_flip([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, k=2, rng=0).tolist()
    [1, 2]
    """
    return _permute_and_flip_entry(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, delta=delta,
                                   monotonic=monotonic, base_measure=base_measure, rng=rng, exact=exact, size=size,
                                   accountant=accountant)


@probabilities_result
def permute_and_flip_probabilities(utilities: ArrayLike, *, epsilon: float, sensitivity: float, monotonic: bool = False,
                                   base_measure: ArrayLike | None = None) -> np.ndarray:
    """Exact output distribution of :func:`permute_and_flip` (k = 1), by the permutation argument.

    With p_r = exp(ε(u(r) − u*)/(2Δu)) and q_r = 1 − p_r, candidate r is output when it is reached with
    every earlier candidate rejected and is then accepted: summing over the set S of candidates before r,
    P(r) = p_r Σ_j e_j(q_{−r}) / (n·C(n−1, j)), with e_j the elementary symmetric polynomials of the other
    q's. O(n³) (vectorised); meant for audits and tests (n <= 2000). ``base_measure``: whole numbers of
    copies of each candidate (as :func:`permute_and_flip` reads it), expanded into copies up to 2000 in
    all, beyond that integrated numerically like :func:`report_noisy_max_probabilities`.

    This is the law of one pick of :func:`permute_and_flip` with the same arguments; the selector's
    guarantee is a property of this law: pure ε-DP (not bounded-range) under the utility's neighbour
    model (ε/Δu with ``monotonic=True``).
    The probabilities are computed from the data and are not themselves private: they are for audits and
    tests. Release the selector's pick (sampling these floats yourself is not exact, see its ``exact``).

    Parameters
    ----------
    utilities, epsilon, sensitivity, monotonic
        As for :func:`exponential_probabilities`.
    base_measure : array_like, optional
        Whole numbers of copies of each candidate, read as :func:`permute_and_flip` reads it.

    Returns
    -------
    numpy.ndarray or pandas.Series
        As :func:`exponential_probabilities` returns.

    Examples
    --------
    >>> permute_and_flip_probabilities([0.0, 0.0], epsilon=1.0, sensitivity=1.0).tolist()
    [0.5, 0.5]
    """
    u, eps, sens, _, monotonic, w = _prepare(utilities, epsilon, sensitivity, 1, monotonic, base_measure)
    w = _check_copies(w, "exponential")
    groups = None
    u_n = u.shape[0]
    if w is not None:
        if float(w.sum()) > 2000:
            return _rnm_probabilities_numeric(_scale(u, (eps, sens, 1 if monotonic else 2)), "exponential", w)
        groups = np.repeat(np.arange(u.shape[0]), w.astype(np.int64))
        u = u[groups]
    n = u.shape[0]
    if n > 2000:
        raise ValueError(f"permute_and_flip_probabilities is O(n^3) and meant for n <= 2000, got n = {n}")
    p = np.exp(_scale(u, (eps, sens, 1 if monotonic else 2)))
    q = 1.0 - p
    # E[r, j] = e_j of {q_s : s != r}, built by multiplying in one factor (1 + q_s x) at a time.
    E = np.zeros((n, n))
    E[:, 0] = 1.0
    for s_ in range(n):
        upd = E[:, :-1] * q[s_]
        upd[s_] = 0.0  # r = s_ excludes its own factor
        E[:, 1:] += upd
    j = np.arange(n)
    coef = np.exp(gammaln(j + 1) + gammaln(n - j) - gammaln(n + 1))  # j!(n-1-j)!/n!
    probs = p * (E @ coef)
    probs = probs / probs.sum()  # removes rounding only: the exact values already sum to 1
    if groups is not None:
        probs = np.bincount(groups, weights=probs, minlength=u_n)
    return probs


@probabilities_result
def report_noisy_max_probabilities(utilities: ArrayLike, *, epsilon: float, sensitivity: float,
                                   noise: Literal["laplace", "gumbel", "exponential"] = "laplace",
                                   monotonic: bool = False, base_measure: ArrayLike | None = None) -> np.ndarray:
    """Output distribution of :func:`report_noisy_max` (k = 1).

    Gumbel and exponential noise have closed forms (:func:`exponential_probabilities`,
    :func:`permute_and_flip_probabilities`); Laplace noise is integrated numerically,
    P(r) = ∫ f(z − s_r) Π_{q≠r} F(z − s_q) dz, by Gauss-Legendre between breakpoints at every s
    (agrees with the closed forms to ~1e-12; small n, for audits). ``base_measure`` as :func:`report_noisy_max` reads it: any w > 0 for Gumbel
    noise, whole numbers of copies for exponential and Laplace noise (the group of w_r copies wins with
    density d/dz F(z − s_r)^{w_r}).

    This is the law of one pick of :func:`report_noisy_max` with the same arguments; the selector's
    guarantee is a property of this law: ε-DP under the utility's neighbour model (ε-bounded-range for
    Gumbel noise).
    The probabilities are computed from the data and are not themselves private: they are for audits and
    tests. Release the selector's pick (sampling these floats yourself is not exact, see its ``exact``).

    Parameters
    ----------
    utilities, epsilon, sensitivity, monotonic
        As for :func:`exponential_probabilities`.
    noise : {"laplace", "gumbel", "exponential"}, optional
        The noise family of :func:`report_noisy_max` (default Laplace).
    base_measure : array_like, optional
        One w_r per candidate, read as :func:`report_noisy_max` reads it.

    Returns
    -------
    numpy.ndarray or pandas.Series
        As :func:`exponential_probabilities` returns.

    Examples
    --------
    >>> p = report_noisy_max_probabilities([0.0, 0.0], epsilon=1.0, sensitivity=1.0, base_measure=[1, 3])
    >>> p.round(6).tolist()
    [0.25, 0.75]
    """
    noise = check_choice(noise, "noise", NOISES)  # type: ignore[assignment]  # a checked NOISES member
    if noise == "gumbel":
        return exponential_probabilities(utilities, epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic,
                                         base_measure=base_measure)
    if noise == "exponential":
        return permute_and_flip_probabilities(utilities, epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic,
                                              base_measure=base_measure)
    u, eps, sens, _, monotonic, w = _prepare(utilities, epsilon, sensitivity, 1, monotonic, base_measure)
    w = _check_copies(w, "laplace")
    return _rnm_probabilities_numeric(_scale(u, (eps, sens, 1 if monotonic else 2)), "laplace", w)


def _rnm_probabilities_numeric(s: np.ndarray, noise: str, w: np.ndarray | None) -> np.ndarray:
    """P(argmax_r s_r + N_r = r) for unit Laplace or exponential noise, w_r copies of candidate r, by quadrature:
    P(r) = ∫ d/dz[F(z − s_r)^{w_r}] Π_{q≠r} F(z − s_q)^{w_q} dz (in log space, breakpoints at every s_q and
    s_q + ln w_q, where the groups' maxima sit)."""
    n = s.shape[0]
    if n > 200:
        raise ValueError(f"report_noisy_max_probabilities integrates numerically and is meant for n <= 200, got {n}")
    wv = np.ones(n) if w is None else w
    fin = np.isfinite(s)
    sf = s[fin]
    lnw = np.log(wv)
    ln2 = math.log(2.0)
    if noise == "laplace":
        def log_cdf(z):
            return np.where(z < 0, z - ln2, np.log1p(-0.5 * np.exp(-np.abs(z))))

        def log_pdf(z):
            return -np.abs(z) - ln2
        # below the best score by more than 800 noise units a candidate's probability is < e^-790: 0 in float
        lo = max(float(sf.min()) - 60.0, float(sf.max()) - 800.0)
    else:
        def log_cdf(z):
            with np.errstate(divide="ignore"):
                x = np.maximum(z, 1e-300)   # ln(1 − e^-x), accurate on both sides of ln 2 (w up to 2^900 multiplies it)
                return np.where(z > 0, np.where(x > ln2, np.log1p(-np.exp(-x)), np.log(-np.expm1(-x))), -np.inf)

        def log_pdf(z):
            return np.where(z >= 0, -z, -np.inf)
        lo = float(sf.max())
    hi = float(sf.max()) + 60.0 + float(np.log(wv[fin].sum()))
    peaks = sf + lnw[fin]
    pts = np.unique(np.clip(np.concatenate((sf, (peaks[:, None] + np.array([-8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0])).ravel(),
                                            [float(peaks.max()) + 30.0])), lo, hi))
    edges = np.concatenate(([lo], pts, [hi]))
    # Gauss-Legendre, 24 nodes on pieces of length <= 4 between the breakpoints: the integrands are analytic
    # there (kinks and support ends are breakpoints) and vary on a scale of 1, so this is exact to rounding
    cuts = [np.linspace(a, b, max(1, int(math.ceil((b - a) / 4.0))) + 1) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    grid = np.unique(np.concatenate(cuts)) if cuts else edges
    a_, b_ = grid[:-1], grid[1:]
    x, wt = np.polynomial.legendre.leggauss(24)
    z_all = ((b_ - a_)[:, None] * (x[None, :] + 1.0) / 2.0 + a_[:, None]).ravel()
    dz_all = (np.repeat((b_ - a_) / 2.0, x.size) * np.tile(wt, a_.size))
    ids = np.flatnonzero(fin)
    wf = wv[ids][:, None]
    lnwf = lnw[ids][:, None]
    # log-values of every node first (their maximum scales the sum), in chunks of nodes (memory: n x chunk)
    chunk = max(256, 2 ** 20 // max(1, ids.size))
    logs = []
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for c0 in range(0, z_all.size, chunk):
            z = z_all[c0:c0 + chunk]
            lc = log_cdf(z[None, :] - sf[:, None])                   # (finite candidates, nodes)
            total = (wf * lc).sum(axis=0)                           # ln Π_q F(z − s_q)^{w_q}
            # the group r wins at z: w_r f(z − s_r) F(z − s_r)^{w_r − 1} Π_{q≠r} F^{w_q} = w_r (f/F)(z − s_r)·Π
            tot = lnwf + log_pdf(z[None, :] - sf[:, None]) - lc + total[None, :]
            logs.append(np.where(np.isfinite(lc), tot, -np.inf))
        m = max(float(lg.max()) for lg in logs)
        vals = sum(np.exp(lg - m) @ dz_all[c0:c0 + lg.shape[1]] for c0, lg in zip(range(0, z_all.size, chunk), logs))
    out = np.zeros(n)
    out[ids] = vals
    return out / out.sum()


# ---------------------------------------------------------------------------------------------
# local dampening and shifted local dampening
# ---------------------------------------------------------------------------------------------
def _prepare_local(utilities, epsilon, sensitivity_function, k, weights):
    u = check_utilities(utilities)
    eps = check_positive(epsilon, "epsilon")
    sf = check_sensitivity_function(sensitivity_function, u.shape[0])
    k = check_k(1 if k is None else k, u.shape[0])
    w = _check_weights(weights, u.shape[0])
    return u, eps, sf, k, w


def _local_dampening(u: np.ndarray, eps: float, split: int, sf: SensitivityFunction, k: int, w: np.ndarray | None,
                     gen: np.random.Generator, exact: bool, size: int | None, max_steps: int) -> "int | np.ndarray":
    """Local dampening on checked values: k picks with ε-budget ``eps / split`` each."""
    if u.shape[0] == 1:
        return _one_candidate(size)
    if exact:
        D, err = dampen_with_error(u, sf, max_steps=max_steps)
        return dampened_select(u, sf, D, err, eps, k, gen, max_steps=max_steps, weights=w, size=size, split=split)
    D = dampen(u, sf, max_steps=max_steps)
    factor = (eps, 1.0, 2 * split)
    if size is not None:
        return _sample_size(D, factor, w, k, size, gen)
    return _sample(D, factor, w, k, gen)


@selection_result
def _local_dampening_entry(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                           k: int | None = None, delta: float = 0.0, base_measure: ArrayLike | None = None,
                           rng: RngLike = None, max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True,
                           size: int | None = None, accountant: Accountant | None = None) -> int | np.ndarray:
    u, eps, sf, kk, w = _prepare_local(utilities, epsilon, sensitivity_function, k, base_measure)
    d, exact, size, gen = _check_call(k, kk, delta, exact, size, rng, accountant)
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=True)
    charge_selection(accountant, "local_dampening", eps, k=None if k is None else kk, size=size, delta=d, exact=exact,
                     base_measure=w is not None)
    return _local_dampening(u, eps_pick, split, sf, kk, w, gen, exact, size, max_steps)


@overload
def local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction, k: None = None,
                    delta: float = 0.0, base_measure: ArrayLike | None = None, rng: RngLike = None,
                    max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: None = None,
                    accountant: Accountant | None = None) -> int: ...
@overload
def local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction, k: int,
                    delta: float = 0.0, base_measure: ArrayLike | None = None, rng: RngLike = None,
                    max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: int | None = None,
                    accountant: Accountant | None = None) -> IndexArray: ...
@overload
def local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                    k: int | None = None, delta: float = 0.0, base_measure: ArrayLike | None = None,
                    rng: RngLike = None, max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: int,
                    accountant: Accountant | None = None) -> IndexArray: ...


def local_dampening(
    utilities: ArrayLike,
    *,
    epsilon: float,
    sensitivity_function: SensitivityFunction,
    k: int | None = None,
    delta: float = 0.0,
    base_measure: ArrayLike | None = None,
    rng: RngLike = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | np.ndarray:
    """Local dampening (thesis Def. 3.4.1): select r with probability ∝ exp(ε·D(x, r)/2).

    D is the dampening function (:func:`dpselect.dampening.dampen`), which rescales u by the data-dependent
    sensitivity δ so that it has sensitivity 1. Privacy: ε-DP, indeed ε-bounded-range (thesis Thm 3.5.1),
    when the sensitivity function is admissible for u under the neighbour model of the data. ``k > 1``:
    k distinct picks, ε/k each (D does not depend on the remaining set, so this is successive sampling),
    or with ``delta > 0`` the larger per-pick ε0 of an (ε, δ) budget.

    ``exact=True`` (default): the law is exactly ∝ exp(ε·D/2) with D the exact dampening function of
    the utilities and δ values as given (rigorous float error bounds on D, exact rational D for
    near-ties; :mod:`dpselect.sampling`). ``exact=False``: float D and float sampling.

    Parameters
    ----------
    utilities, epsilon, k, delta, base_measure, rng, exact, size, accountant
        As for :func:`exponential`.
    sensitivity_function : SensitivityFunction
        The local sensitivity δ(x, t, r), admissible for u under the data's neighbour model
        (:mod:`dpselect.sensitivity`).
    max_steps : int, optional
        The most steps t of the sensitivity function walked to compute the scores (a function without a
        saturation distance: a candidate not resolved there gets D = ±max_steps, clipped, which keeps
        sensitivity 1; see :mod:`dpselect.dampening`).

    Returns
    -------
    int or numpy.ndarray
        As :func:`exponential` returns.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.constant(3, 1.0)          # global sensitivity: local dampening = exponential mechanism
    >>> local_dampening([1.0, 9.0, 2.0], epsilon=50.0, sensitivity_function=sf, rng=0)
    1
    >>> local_dampening([1.0, 9.0, 2.0], epsilon=50.0, sensitivity_function=sf, k=2, size=5, rng=0).shape
    (5, 2)
    """
    return _local_dampening_entry(utilities, epsilon=epsilon, sensitivity_function=sensitivity_function, k=k,
                                  delta=delta, base_measure=base_measure, rng=rng, max_steps=max_steps, exact=exact,
                                  size=size, accountant=accountant)


@probabilities_result
def local_dampening_probabilities(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                                  base_measure: ArrayLike | None = None, max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """Exact output distribution of :func:`local_dampening` (k = 1): ∝ w_r·exp(ε·D(x, r)/2).

    This is the exact law of one pick of :func:`local_dampening` with the same arguments; the selector's
    guarantee is a property of this law: ε-DP, indeed ε-bounded-range, when the sensitivity function is
    admissible for u under the neighbour model of the data.
    The probabilities are computed from the data and are not themselves private: they are for audits and
    tests. Release the selector's pick (sampling these floats yourself is not exact, see its ``exact``).

    Parameters
    ----------
    utilities, epsilon
        As for :func:`exponential_probabilities`.
    sensitivity_function : SensitivityFunction
        The local sensitivity δ(x, t, r), admissible for u under the data's neighbour model
        (:mod:`dpselect.sensitivity`).
    base_measure : array_like, optional
        One w_r per candidate, read as :func:`local_dampening` reads it.
    max_steps : int, optional
        The most steps t of the sensitivity function walked to compute the scores (a function without a
        saturation distance: a candidate not resolved there gets D = ±max_steps, clipped, which keeps
        sensitivity 1; see :mod:`dpselect.dampening`).

    Returns
    -------
    numpy.ndarray or pandas.Series
        As :func:`exponential_probabilities` returns.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(8, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> p = local_dampening_probabilities([6.5, 6.5] + [0.0] * 6, epsilon=2.0, sensitivity_function=sf)
    >>> p.round(2)[:3].tolist()
    [0.32, 0.32, 0.06]
    """
    u, eps, sf, _, w = _prepare_local(utilities, epsilon, sensitivity_function, 1, base_measure)
    D = dampen(u, sf, max_steps=max_steps)
    _check_finite_scores(D, "the dampened utilities D(x, r)")
    return _probabilities_from_scores(D, eps, 1.0, 2, w)


def _shifted_scores(u, sf, direction, max_steps):
    g = shift_totals(sf, u.shape[0], max_steps=max_steps)
    with np.errstate(over="ignore"):   # beyond the float range: ±inf, refused or handled by the caller
        return u - g if direction == "increasing" else u + g


def _shifted_local_dampening(u: np.ndarray, eps: float, split: int, sf: SensitivityFunction, k: int,
                             w: np.ndarray | None, gen: np.random.Generator, exact: bool, size: int | None,
                             max_steps: int, direction: str) -> "int | np.ndarray":
    """Shifted local dampening on checked values: k picks with ε-budget ``eps / split`` each."""
    if u.shape[0] == 1:
        return _one_candidate(size)
    if exact:
        g, g_err = shift_totals_with_error(sf, u.shape[0], max_steps=max_steps)
        return shifted_select(u, sf, g, g_err, eps, k, gen, direction=direction, max_steps=max_steps, weights=w,
                              size=size, split=split)
    scores = _shifted_scores(u, sf, direction, max_steps)
    factor = (eps, sf.global_sensitivity, 2 * split)
    if size is not None:
        return _sample_size(scores, factor, w, k, size, gen)
    return _sample(scores, factor, w, k, gen)


@selection_result
def _shifted_local_dampening_entry(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                                   direction: Literal["increasing", "decreasing"] = "increasing",
                                   k: int | None = None, delta: float = 0.0, base_measure: ArrayLike | None = None,
                                   rng: RngLike = None, max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True,
                                   size: int | None = None, accountant: Accountant | None = None) -> int | np.ndarray:
    direction = check_choice(direction, "direction", DIRECTIONS)  # type: ignore[assignment]
    u, eps, sf, kk, w = _prepare_local(utilities, epsilon, sensitivity_function, k, base_measure)
    d, exact, size, gen = _check_call(k, kk, delta, exact, size, rng, accountant)
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=True)
    charge_selection(accountant, "shifted_local_dampening", eps, k=None if k is None else kk, size=size, delta=d,
                     exact=exact, base_measure=w is not None)
    return _shifted_local_dampening(u, eps_pick, split, sf, kk, w, gen, exact, size, max_steps, direction)


@overload
def shifted_local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                            direction: Literal["increasing", "decreasing"] = "increasing", k: None = None,
                            delta: float = 0.0, base_measure: ArrayLike | None = None, rng: RngLike = None,
                            max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: None = None,
                            accountant: Accountant | None = None) -> int: ...
@overload
def shifted_local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                            direction: Literal["increasing", "decreasing"] = "increasing", k: int, delta: float = 0.0,
                            base_measure: ArrayLike | None = None, rng: RngLike = None,
                            max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: int | None = None,
                            accountant: Accountant | None = None) -> IndexArray: ...
@overload
def shifted_local_dampening(utilities: ArrayLike, *, epsilon: float, sensitivity_function: SensitivityFunction,
                            direction: Literal["increasing", "decreasing"] = "increasing", k: int | None = None,
                            delta: float = 0.0, base_measure: ArrayLike | None = None, rng: RngLike = None,
                            max_steps: int = DEFAULT_MAX_STEPS, exact: bool = True, size: int,
                            accountant: Accountant | None = None) -> IndexArray: ...


def shifted_local_dampening(
    utilities: ArrayLike,
    *,
    epsilon: float,
    sensitivity_function: SensitivityFunction,
    direction: Literal["increasing", "decreasing"] = "increasing",
    k: int | None = None,
    delta: float = 0.0,
    base_measure: ArrayLike | None = None,
    rng: RngLike = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | np.ndarray:
    """Shifted local dampening (thesis Defs. 4.2.1/4.2.2) in closed form.

    With G_r = Σ_t (Δ − δ(x, t, r)) (finite: δ bounded, see :meth:`SensitivityFunction.bounded`; a
    function without a saturation distance is read as reaching Δ at ``max_steps``), the limit s → +∞ of local dampening on u − s
    (``direction="increasing"``, for δ that grows with u) selects r with probability
    ∝ exp(ε·(u(r) − G_r)/(2Δ)); s → −∞ (``"decreasing"``) gives ∝ exp(ε·(u(r) + G_r)/(2Δ)). Derivation:
    far from 0 the dampening function is D(v) = (v + G)/Δ for v > 0 (and −(|v| + G)/Δ below), and the
    constant s/Δ cancels in the normalisation (thesis Lemma 4.3.1). Privacy: ε-DP, indeed
    ε-bounded-range, when δ is admissible and bounded (thesis Thm 4.3.1), under the utility's neighbour
    model. ``k > 1``: ε/k per pick, or with ``delta > 0`` the larger per-pick ε0 of an (ε, δ) budget.
    ``exact=True`` (default) samples that law exactly (G with rigorous error bounds, exact rational G
    for near-ties); ``exact=False`` uses float sampling.

    Parameters
    ----------
    utilities, epsilon, sensitivity_function, k, base_measure, rng, exact, size, accountant
        As for :func:`local_dampening`.
    delta : float, optional
        The DP δ of a top-k, as for :func:`local_dampening`.
    direction : {"increasing", "decreasing"}, optional
        The limit s → +∞ (for δ that grows with u, the default) or s → −∞.
    max_steps : int, optional
        The most steps t of the sensitivity function walked to compute the scores (a function without a
        saturation distance is read as reaching Δ at max_steps, which is admissible and bounded; see
        :mod:`dpselect.dampening`).

    Returns
    -------
    int or numpy.ndarray
        As :func:`exponential` returns.

    Examples
    --------
    >>> import dpselect
    >>> shifted_local_dampening([1.0, 9.0, 2.0], epsilon=50.0, sensitivity_function=dpselect.constant(3, 1.0),
    ...                         rng=0)
    1
    >>> shifted_local_dampening([1.0, 9.0, 2.0], epsilon=50.0, sensitivity_function=dpselect.constant(3, 1.0),
    ...                         k=3, rng=0).shape
    (3,)
    """
    return _shifted_local_dampening_entry(utilities, epsilon=epsilon, sensitivity_function=sensitivity_function,
                                          direction=direction, k=k, delta=delta, base_measure=base_measure, rng=rng,
                                          max_steps=max_steps, exact=exact, size=size, accountant=accountant)


@probabilities_result
def shifted_local_dampening_probabilities(utilities: ArrayLike, *, epsilon: float,
                                          sensitivity_function: SensitivityFunction,
                                          direction: Literal["increasing", "decreasing"] = "increasing",
                                          base_measure: ArrayLike | None = None, max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """Exact output distribution of :func:`shifted_local_dampening` (k = 1).

    This is the exact law of one pick of :func:`shifted_local_dampening` with the same arguments,
    ∝ w_r·exp(ε·(u(r) ∓ G_r)/(2Δ)); the selector's guarantee is a property of this law: ε-DP, indeed
    ε-bounded-range, when the sensitivity function is admissible and bounded.
    The probabilities are computed from the data and are not themselves private: they are for audits and
    tests. Release the selector's pick (sampling these floats yourself is not exact, see its ``exact``).

    Parameters
    ----------
    utilities, epsilon, sensitivity_function
        As for :func:`local_dampening_probabilities`.
    direction : {"increasing", "decreasing"}, optional
        The limit s → +∞ (u − G, for δ that grows with u, the default) or s → −∞ (u + G).
    base_measure : array_like, optional
        One w_r per candidate, read as :func:`shifted_local_dampening` reads it.
    max_steps : int, optional
        The most steps t of the sensitivity function walked to compute the scores (a function without a
        saturation distance is read as reaching Δ at max_steps, which is admissible and bounded; see
        :mod:`dpselect.dampening`).

    Returns
    -------
    numpy.ndarray or pandas.Series
        As :func:`exponential_probabilities` returns.

    Examples
    --------
    >>> import dpselect
    >>> shifted_local_dampening_probabilities([0.0, 0.0], epsilon=1.0,
    ...                                       sensitivity_function=dpselect.constant(2, 1.0)).tolist()
    [0.5, 0.5]
    """
    direction = check_choice(direction, "direction", DIRECTIONS)  # type: ignore[assignment]
    u, eps, sf, _, w = _prepare_local(utilities, epsilon, sensitivity_function, 1, base_measure)
    scores = _shifted_scores(u, sf, direction, max_steps)
    _check_finite_scores(scores, "the shifted utilities u ∓ G")
    return _probabilities_from_scores(scores, eps, sf.global_sensitivity, 2, w)
