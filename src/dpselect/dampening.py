"""The dampening function D(x, r) and the shift G_r of shifted local dampening, for all candidates at once.

Both walk the distance t = 0, 1, 2, ... for every candidate together, asking the sensitivity function
only for the candidates that are still unresolved (``sf(t, candidates=active)``; ``sf(0)`` when that is
every candidate of a non-elementwise function), so the cost is about
Σ_r (steps candidate r needs) rather than (largest number of steps) × n.

Saturation convention
---------------------
Once δ(x, s, r) has reached the global sensitivity Δ at some s, we treat δ(x, t, r) = Δ for every
t >= s. This is what lets us switch to the closed form (each further step adds exactly Δ). It never
weakens privacy: the saturated function δ'(x, t, r) = Δ if δ(x, s, r) = Δ for some s <= t, else
δ(x, t, r), is admissible whenever δ is. Condition 1 holds since δ' >= δ. For condition 2 let y be a
neighbour of x: if δ'(y, t, r) = Δ because δ(y, s, r) = Δ with s <= t, admissibility of δ gives
δ(x, s + 1, r) >= Δ with s + 1 <= t + 1, so δ'(x, t + 1, r) = Δ; otherwise
δ'(y, t, r) = δ(y, t, r) <= δ(x, t + 1, r) <= δ'(x, t + 1, r). For the usual sensitivity functions,
which are non-decreasing in t, δ' = δ.

Rounding errors and exact values
--------------------------------
The *exact* D(x, r) and G_r are the values of the definitions computed in rational arithmetic from the
utilities and the float64 values δ the sensitivity function returns, every float read as the rational
it denotes (with the saturation convention above). :func:`dampen_exact` and :func:`shift_total_exact`
compute them for one candidate as :class:`fractions.Fraction`. :func:`dampen_with_error` and
:func:`shift_totals_with_error` return the float values of :func:`dampen` and :func:`shift_totals`
together with a rigorous bound ``err >= |float − exact|`` per candidate, for exact samplers that
refine only near-ties:

* every float addition s = fl(a + b) of the walk has its rounding error e = (a + b) − s computed
  exactly (Knuth's TwoSum), so b(t) − b_float(t) = Σ e exactly. The walk keeps C ≈ Σ e and E ≈ Σ |e|
  in float; with N <= 4t + 16 terms, |Σ e| <= |C| + γ_{N−1} Σ|e| <= |C| + 2^-49 N E =: β(t), a rigorous
  bound on |b_float(t) − b(t)| (often far below Σ|e|, since roundings cancel);
* b(t) is non-decreasing in t (δ >= 0), so the index i the float walk stops at is the exact one as soon
  as |u| − b_float(i) >= β(i) and (δ(i) = Δ or b_float(i + 1) − |u| > β(i + 1)); the three remaining
  roundings of i + (|u| − b(i))/δ(i) are at most 2^-53 relative each (2^-1075 absolute on underflow),
  bounded here by 2^-51 (|D| + 2|q|) + 2^-1060 with q = (|u| − b(i))/δ(i), plus β(i)/δ(i);
* a candidate the walk cannot certify (|u| within β of a breakpoint, an overflow) gets err = inf: ask
  :func:`dampen_exact` for it.

For integer-valued data (any data whose partial sums are exact floats) C, E and β stay 0 and err is
only the final-rounding term. G is summed the same way (also the subtractions Δ − δ have their rounding
errors computed exactly), so err(G) = β.

Ending fast for functions that grow too slowly
-----------------------------------------------
An admissible δ is non-decreasing along every other distance: for any neighbour y of x (x is then a
neighbour of y), condition 2 twice gives δ(x, t + 2, r) >= δ(y, t + 1, r) >= δ(x, t, r). So the two
values δ(x, M − 2, r) and δ(x, M − 1, r) (M = ``max_steps``) bound every δ(x, s, r), s < M, of the same
parity, hence b(M) <= b(t) + ⌈(M − t)/2⌉ δ(M − 1) + ⌊(M − t)/2⌋ δ(M − 2). Once the walk has gone
:data:`_PROBE_AFTER` distances without resolving a candidate, it asks δ at M − 2 and M − 1 (two calls)
and gives D = ±M at once (see "The walk limit" below) to a candidate whose |u| lies beyond that bound
(both values below Δ): the step-by-step walk would reach the same value after all M distances (a δ
that stays 0 ends at once instead of after M steps). The values D below M never use the bound. (A δ
that is not admissible can get D = ±M where the full walk would have ended below M.) Shifted local
dampening's shift has no such shortcut: a function without a saturation distance is read as reaching
Δ at M (see "The walk limit"), and its sum walks all M distances.
A function whose cost grows with t or that keeps the state of a walk over t (dpselect's median element
local sensitivity, O(t) per distance; δ^PS, whose running sums restart for a smaller t) sets the attribute
``far_probe = False`` and is walked without the check; it may instead set ``zero_below``, a callable
``limit -> mask`` of the candidates whose δ(x, t, r) is provably 0 at every t < limit (δ^PS does).

The walk limit: D clipped to ±max_steps
---------------------------------------
For a function without a saturation distance the walk stops at t = M = ``max_steps``. A candidate not
resolved there has b(M) <= |u| (and δ below Δ up to M), so D(x, r) >= M: it gets D = ±M. The values are
thus D_M(x, r) = clip(D(x, r), −M, M), which has sensitivity 1 whenever D has (clipping is 1-Lipschitz):
local dampening on D_M is private on every dataset, and D_M = D wherever the walk ends within M. (The
walk used to raise a ValueError there instead: an error that depends on the data is a release.) The
"Ending fast" bound above gives D_M = ±M at once for the candidates it proves unresolvable, and
:func:`dampen_exact` returns the same clipped value. Functions made bounded with ``sf.bounded(...)`` are
never clipped (their walk always ends at the saturation distance). The shift G of shifted local
dampening likewise reads a function without a saturation distance as saturated at M: δ' = δ below M
and Δ from M on is admissible whenever δ is (condition 1: it only grows; condition 2: at t + 1 >= M
the right side is Δ) and bounded, so G is finite on every dataset and equals the old value wherever δ
reached Δ within M (it used to be a ValueError otherwise).
"""
from __future__ import annotations

import contextlib
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_int, check_utilities
from .sensitivity import SensitivityFunction

__all__ = [
    "dampen", "dampen_with_error", "dampen_exact",
    "shift_totals", "shift_totals_with_error", "shift_total_exact",
    "DEFAULT_MAX_STEPS",
]

#: Largest distance t the loops walk for a sensitivity function *without* a saturation distance: a
#: candidate still unresolved there gets D = ±max_steps (module docstring, "The walk limit"; never an
#: endless loop, never an error that depends on the data). Functions made bounded with
#: ``sf.bounded(database_size)`` are walked at most to their saturation distance instead: finite by
#: construction, and where every candidate is resolved.
DEFAULT_MAX_STEPS = 1_000_000


def _limit(sf: SensitivityFunction, max_steps: int) -> int:
    return max_steps if sf.saturation_distance is None else sf.saturation_distance + 1


def check_sensitivity_function(sensitivity_function: Any, n: int | None,
                               name: str = "sensitivity_function") -> SensitivityFunction:
    """The function, checked to be a SensitivityFunction for ``n`` candidates (any number if None)."""
    if not isinstance(sensitivity_function, SensitivityFunction):
        raise TypeError(
            f"{name} must be a dpselect.SensitivityFunction, got {type(sensitivity_function).__name__} "
            "(wrap a callable t -> array with SensitivityFunction(fn, global_sensitivity))"
        )
    if sensitivity_function.n_candidates is None:
        sensitivity_function(0)  # learns the number of candidates from one full evaluation
    if n is not None and sensitivity_function.n_candidates != n:
        # both sizes can be private (candidates that are records): the message names neither
        raise ValueError(f"{name} and utilities disagree on the number of candidates")
    return sensitivity_function


# -- rigorous float error bounds ---------------------------------------------------------------------
_SHRINK = 1.0 - 2.0 ** -50  # fl(fl(x) * _SHRINK) <= x for every real x >= 0: a safe lower bound of x
_TINY = 2.0 ** -1060        # covers the absolute error of an underflowing division (<= 2^-1075)
_DBL_MAX = float(np.finfo(np.float64).max)


def _two_sum_err(a, b, s):
    """(a + b) − s exactly, for s = fl(a + b) (Knuth's TwoSum; exact in round-to-nearest barring
    overflow, where it gives NaN)."""
    bb = s - a
    x = s - bb
    if not (isinstance(x, np.ndarray) and x.shape == np.broadcast_shapes(x.shape, np.shape(a), np.shape(b))):
        return (a - x) + (b - bb)
    # the same operations in the same order, in place (two arrays instead of four)
    np.subtract(a, x, out=x)
    np.subtract(b, bb, out=bb)
    x += bb
    return x


def _bound(C, E, t: int):
    """Upper bound on |Σ e| for rounding errors e of a walk over t distances, where C and E are float
    sums (in any order) of the e and of the |e|: at most N = 4t + 16 terms, so
    |C − Σ e| <= γ_{N−1} Σ|e| <= γ_{N−1} E (1 − 2^-53)^-(N−1) <= 2^-49 N E (generously, also covering
    the rounding of this expression)."""
    return (np.abs(C) + E * ((4.0 * t + 16.0) * 2.0 ** -49)) * (1.0 + 2.0 ** -50)


def _resolved_error(aa, start, e_start, dd, out, end, e_end, sat):
    """err for candidates the float walk resolved at index i.

    aa = |u|; start = b_float(i) with |start − b(i)| <= e_start; end = b_float(i + 1) with
    |end − b(i + 1)| <= e_end; dd = δ(i); sat: δ(i) = Δ (closed form, no upper check);
    out = fl(i + fl(fl(aa − start) / dd)), the float D.
    """
    # certain = (below·_SHRINK >= e_start) & (sat | ((end − aa)·_SHRINK > e_end)); q = below / dd;
    # err = 2^-51 (|out| + 2|q|) + (e_start / dd)(1 + 2^-48) + 2^-1060 where certain and finite, else inf:
    # the same operations in the same order, on fewer arrays
    below = aa - start
    certain = below * _SHRINK >= e_start
    upper = end - aa
    upper *= _SHRINK
    upper_ok = upper > e_end
    del upper
    upper_ok |= sat
    certain &= upper_ok
    del upper_ok
    q = np.divide(below, dd, out=below)
    np.abs(q, out=q)
    q *= 2.0
    err = np.abs(out)
    err += q
    err *= 2.0 ** -51
    np.divide(e_start, dd, out=q)
    q *= 1.0 + 2.0 ** -48
    err += q
    err += _TINY
    certain &= err < np.inf
    np.copyto(err, np.inf, where=~certain)   # NaN (overflow) -> inf too
    return err


# -- the dampening function -------------------------------------------------------------------------
def dampen(utilities: ArrayLike, sensitivity_function: SensitivityFunction, *,
           max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """The dampening function D(x, r) of thesis Def. 3.3.1 for every candidate.

    With b(0) = 0, b(i) = Σ_{j<i} δ(x, j, r) and b(−i) = −b(i): for u = u(x, r) >= 0,
    D = i + (u − b(i)) / δ(x, i, r) where b(i) <= u < b(i+1) (intervals of zero width are skipped),
    and D(−u) = −D(u). D(x, r) has sensitivity 1 when δ is admissible (thesis Lemma 3.3.1), so the
    exponential mechanism on D with sensitivity 1 is local dampening.

    u = 0 gives D = 0 even where δ(x, 0, r) = 0: then every neighbour also has u = 0 (δ bounds the
    local sensitivity), so the sensitivity-1 property is kept.

    Parameters
    ----------
    utilities : array of shape (n,)
        u(x, r) for every candidate.
    sensitivity_function : SensitivityFunction
        An admissible δ for u (see :mod:`dpselect.sensitivity`). Values that reach Δ saturate
        (module docstring).
    max_steps : int
        Distances walked at most when the function has no saturation distance (see
        DEFAULT_MAX_STEPS); a candidate still unresolved then gets D = ±max_steps (D clipped, which keeps
        sensitivity 1: module docstring, "The walk limit").

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        D(x, r) for every candidate (same sign as u(x, r)).

    See also :func:`dampen_with_error` (the same values with a rigorous error bound) and
    :func:`dampen_exact` (one candidate in exact rational arithmetic).

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(3, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> D = dampen([6.5, 6.5, 0.0], sf)
    >>> D.shape, D.round(2).tolist()   # thesis Example 3.4.1: 1 + 3.5/5
    ((3,), [1.7, 1.7, 0.0])
    """
    return _dampen(utilities, sensitivity_function, max_steps, track=False)[0]


def dampen_with_error(utilities: ArrayLike, sensitivity_function: SensitivityFunction, *,
                      max_steps: int = DEFAULT_MAX_STEPS) -> tuple[np.ndarray, np.ndarray]:
    """``(D, err)``: D exactly as :func:`dampen` returns it, and err[r] >= |D[r] − D_exact(r)|.

    D_exact is the dampening function in exact rational arithmetic from the utilities and the float δ
    values (module docstring, "Rounding errors and exact values", for the argument). err is 0 for
    u = 0, the final-rounding bound 2^-51 (|D| + 2|q|) + 2^-1060 (q = the fractional step) when all
    sums of δ are exact floats (integer data), a little more otherwise, and ``inf`` for a candidate
    whose float walk cannot be certified (|u| within the summation error of a breakpoint b(i), or an
    overflow): :func:`dampen_exact` gives its exact value. Same walk as :func:`dampen`, at a small
    constant factor of its cost.

    Parameters
    ----------
    utilities, sensitivity_function, max_steps
        As in :func:`dampen`.

    Returns
    -------
    D : numpy.ndarray of float64, shape (n,)
        The values of :func:`dampen`.
    err : numpy.ndarray of float64, shape (n,)
        Rigorous bounds on |D − D_exact| (``inf`` where the float walk cannot be certified).

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(2, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> D, err = dampen_with_error([6.5, -2.0], sf)
    >>> D.tolist(), bool(np.all(err < 2e-15))
    ([1.7, -0.6666666666666666], True)
    """
    return _dampen(utilities, sensitivity_function, max_steps, track=True)


def _dampen(utilities, sensitivity_function, max_steps, track: bool):
    u = check_utilities(utilities)
    n = u.shape[0]
    sf = check_sensitivity_function(sensitivity_function, n)
    max_steps = _limit(sf, check_int(max_steps, "max_steps", minimum=1))
    a = np.abs(u)
    nonzero = a > 0
    far = _zero_below(sf, max_steps)
    if far is None and not sf.elementwise and nonzero.all():
        # the common case (no zero utility): no index array, D and err computed in place where possible
        del nonzero
        D, err = _dampen_every(a, sf, max_steps, track)
        return np.copysign(D, u, out=D), err   # D is ours (fresh): signed in place
    active = np.flatnonzero(nonzero)
    del nonzero
    out = np.zeros(n)
    err = np.zeros(n) if track else None
    if far is not None and active.size:
        # δ = 0 at every t < max_steps: b(max_steps) = 0 < |u|, so D >= max_steps, clipped to it exactly
        hit = far[active]
        out[active[hit]] = max_steps
        active = active[~hit]
    if sf.elementwise:
        _dampen_blocks(a, active, sf, out, max_steps, err)
    else:
        _dampen_steps(a, active, sf, out, max_steps, err)
    return np.copysign(out, u, out=out), err   # out is ours (fresh): signed in place


def _dampen_every(a, sf, max_steps, track: bool):
    """(unsigned D, err) of the step walk when every candidate is active (no zero utility, no
    ``zero_below``), without index arrays: δ(0) is asked for all candidates at once (``sf(0)``, the same
    values as ``sf(0, arange(n))``) and, when every candidate resolves at t = 0 (a constant δ), D is
    computed in place in ``a`` (|u|, ours) and err in place in δ(0) (a fresh array,
    :meth:`SensitivityFunction.__call__`); the values and the rounding are those of :func:`_dampen_steps`."""
    d = sf(0)
    done = a < d
    done |= d >= sf.global_sensitivity
    if done.all():
        with np.errstate(over="ignore"):   # |u| / Δ beyond DBL_MAX: D = inf, err = inf
            np.divide(a, d, out=a)
        if not track:
            return a, None
        _first_step_error(a, d)
        return a, d
    out = np.zeros(a.size)
    err = np.zeros(a.size) if track else None
    if done.any():
        with np.errstate(over="ignore"):
            q = a[done] / d[done]
        out[done] = q
        if err is not None:
            _first_step_error(q, q)
            err[done] = q
        del q
        np.logical_not(done, out=done)   # the candidates left
        active, d = np.flatnonzero(done), d[done]
    else:
        active = np.arange(a.size)
    del done
    _dampen_steps(a, active, sf, out, max_steps, err, d0=d)
    return out, err


def _zero_below(sf: SensitivityFunction, limit: int) -> np.ndarray | None:
    """The function's ``zero_below(limit)`` mask (candidates with δ = 0 at every t < limit), for a function
    without a saturation distance (the only ones the walk clips); None where it has none."""
    hook = getattr(sf, "zero_below", None)
    if hook is None or sf.saturation_distance is not None:
        return None
    mask = np.asarray(hook(limit), dtype=bool)
    if mask.shape != (sf.n_candidates,):
        raise ValueError(f"zero_below of {sf.name!r} must return a boolean mask with one entry per candidate")
    return mask


def _clip_rest(active, a, b, C, E, t, out, err) -> None:
    """D = max_steps (= t) for the candidates still active at the walk limit: b(t) <= |u| there, so
    D >= t. err = 0 where the float sum b is certainly <= the exact one's bound of |u| (then the exact
    b(t) <= |u| too), else inf (dampen_exact then gives the exact clipped value)."""
    out[active] = t
    if err is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            certain = (a[active] - b) * _SHRINK >= _bound(C, E, t)
        err[active] = np.where(certain, 0.0, np.inf)


#: Distances walked before the walk checks, with two evaluations at the far end, whether a candidate
#: can still be resolved within max_steps (module docstring, "Ending fast").
_PROBE_AFTER = 1024


def _hopeless(sf, active, t: int, limit: int, b=None, a=None) -> np.ndarray | None:
    """Mask of the active candidates that provably cannot resolve (b(limit) <= |u|) or, with b None, never
    reach Δ before ``limit`` (an admissible δ is non-decreasing along every other distance); None when
    the check does not apply (a bounded function, or too few distances left)."""
    if (sf.saturation_distance is not None or limit - t < 4 or active.size == 0
            or not getattr(sf, "far_probe", True)):
        return None
    sensitivity = sf.global_sensitivity
    d1, d2 = sf(limit - 1, active), sf(limit - 2, active)
    below = (d1 < sensitivity) & (d2 < sensitivity)
    if b is None:
        return below
    left = limit - t
    with np.errstate(over="ignore"):
        # b(limit) <= b(t) + ⌈left/2⌉ d1 + ⌊left/2⌋ d2 in exact arithmetic; the float b and sums are within a
        # relative (left + t + 16) 2^-52 of it (sums of non-negative terms), so the margin covers them
        ub = (b + ((left + 1) // 2) * d1 + (left // 2) * d2) * (1.0 + (limit + 16) * 2.0 ** -49) + _TINY
    return below & (ub < a[active])


#: Floating-point conditions the walks' arithmetic meets on extreme inputs and handles itself (an overflow
#: of D, of b or of G gives inf and err = inf; TwoSum of an inf gives NaN, read as err = inf): silenced
#: there (np.errstate(over="ignore", invalid="ignore")), and only there, so that no RuntimeWarning leaks (the
#: sensitivity function runs outside); _LOUD where nothing can overflow.
_LOUD = contextlib.nullcontext()


def _drop_hopeless(sf, active, t, max_steps, b, a, out, err, C, E):
    """The walks' probe at t: candidates proven unable to resolve within max_steps (b(max_steps) < |u|, with
    a margin for the float sums) get D = max_steps exactly (err 0) and leave the walk; returns the remaining
    (active, b, C, E) (C, E: the error sums, None when not tracked)."""
    doomed = _hopeless(sf, active, t, max_steps, b, a)
    if doomed is None or not doomed.any():
        return active, b, C, E
    out[active[doomed]] = max_steps
    if err is not None:
        err[active[doomed]] = 0.0
    keep = ~doomed
    if C is not None:
        C, E = C[keep], E[keep]
    return active[keep], b[keep], C, E


def _first_step_error(q, e) -> None:
    """e = err of candidates resolved at t = 0 with D = q: 2^-51·3|q| + 2^-1060, computed in place in e (q = e
    allowed). An overflowing q is inf, never NaN (|u| > 0 is finite and δ(0) > 0 for them), so e is inf there
    and finite elsewhere: the walk's ``np.where(e < inf, e, inf)`` has nothing to replace."""
    np.abs(q, out=e)
    e *= 3.0 * 2.0 ** -51
    e += _TINY


def _dampen_steps(a, active, sf, out, max_steps, err, d0=None) -> None:
    """dampen() one distance per call; fills err (when not None) with the rigorous bounds. ``d0``: δ(0) for
    ``active`` when already asked (:func:`_dampen_every`)."""
    sensitivity = sf.global_sensitivity
    track = err is not None
    if not active.size:
        return
    # b <= |u| for an active candidate and δ <= Δ, so b + δ (and TwoSum of it) cannot overflow below this
    # bound: the steps skip the floating-point context (one errstate per step would cost ~15% of a step)
    wide = not (float(a[active].max()) <= _DBL_MAX / 4 and sensitivity <= _DBL_MAX / 4)
    # t = 0 first (max_steps >= 1 and _PROBE_AFTER > 0: neither the walk limit nor the probe applies).
    # Fast path: candidates resolved at t = 0 (|u| < δ(0), or δ(0) = Δ) have D = |u| / δ(0) with one
    # rounding and b(0) = 0 exactly, so err = 2^-51·3|D| + 2^-1060 (the bound of _resolved_error with
    # e_start = e_end = 0); no error tracking needed for them (e.g. every candidate of a constant δ). The
    # walk's sums (b, C, E) are made for the candidates left only.
    d = sf(0, active) if d0 is None else d0
    aa = a[active]
    done = aa < d
    done |= d >= sensitivity
    if done.any():
        every = bool(done.all())
        with np.errstate(over="ignore"):   # |u| / Δ beyond DBL_MAX: D = inf, err = inf
            q = np.divide(aa, d, out=aa) if every else aa[done] / d[done]
        out[active if every else active[done]] = q
        if track:
            _first_step_error(q, q)
            err[active if every else active[done]] = q
        if every:
            return
        del q
        np.logical_not(done, out=done)   # the candidates left
        active, d = active[done], d[done]
    del aa, done
    b = np.zeros(active.size)
    if track:   # float sums of the rounding errors (exact − float) of b and of their absolute values
        C, E = np.zeros(active.size), np.zeros(active.size)
    t = 0
    while active.size:
        if t >= max_steps:
            _clip_rest(active, a, b, C if track else None, E if track else None, t, out, err)
            return
        if t == _PROBE_AFTER:
            active, b, C, E = _drop_hopeless(sf, active, t, max_steps, b, a, out, err, C if track else None,
                                             E if track else None)
            if not active.size:
                return
        if t:
            d = sf(t, active)   # (t = 0: asked above)
        with np.errstate(over="ignore", invalid="ignore") if wide else _LOUD:
            nb = b + d
            if track:
                e = _two_sum_err(b, d, nb)
        aa = a[active]
        inside = aa < nb
        saturated = d >= sensitivity
        finished = bool(inside.any() or saturated.any())
        if finished:
            done = inside | saturated
            # every candidate left resolves here: the arrays themselves (views), not copies of them
            pick: Any = slice(None) if done.all() else done
            if track:   # the bound of the sums up to t, for the candidates resolved here (C, E then move on)
                with np.errstate(over="ignore", invalid="ignore"):
                    e_start = _bound(C[pick], E[pick], t)
        if track:
            with np.errstate(over="ignore", invalid="ignore") if wide else _LOUD:
                C += e
                E += np.abs(e, out=e)
        if finished:
            idx = active[pick]
            # Saturated and not yet inside: closed form, each further step adds exactly Δ.
            dd = np.where(inside[pick], d[pick], sensitivity)
            with np.errstate(over="ignore", invalid="ignore"):
                D = aa[pick] - b[pick]
                D /= dd
                D = np.add(t, D, out=D)
                out[idx] = D
                if track:
                    err[idx] = _resolved_error(aa[pick], b[pick], e_start, dd, D, nb[pick],
                                               _bound(C[pick], E[pick], t + 1), saturated[pick])
                del D
            keep = ~done
            active = active[keep]
            b = nb[keep]
            if track:
                C, E = C[keep], E[keep]
        else:
            b = nb
        t += 1


_BLOCK_BUDGET = 1 << 21  # (candidates x distances) evaluated per call in the block walkers


def _block_size(n_active: int, previous: int) -> int:
    # Doubling keeps the work within ~2x of the steps the candidates really need, in O(log steps) calls.
    return int(max(1, min(2 * previous, _BLOCK_BUDGET // max(n_active, 1), 1 << 16)))


def _block_deltas(sf, t: int, B: int, active: np.ndarray) -> np.ndarray:
    """δ(x, t + j, r) for r in active, j < B, as an (active.size, B) array."""
    return sf.table(t, t + B, active)   # = sf.at on that grid (by broadcasting when sf has a block hook)


def _cumsum_errors(c, x):
    """The rounding error (exact − float) of every step of c = cumsum(x, axis=1) (column k: the step to
    c[:, k + 1]), and the rows where c is not the sequential float recurrence (no bound there; numpy's
    accumulate is that recurrence)."""
    cp = c[:, :-1]
    s = cp + x[:, 1:]
    return _two_sum_err(cp, x[:, 1:], s), (s != c[:, 1:]).any(axis=1)


def _dampen_blocks(a, active, sf, out, max_steps, err) -> None:
    """dampen() for elementwise sensitivity functions: B distances per call for every unresolved
    candidate, B doubling while few candidates remain (same values as the step-by-step walk up to the
    rounding of the sums). Fills err (when not None) with the rigorous bounds."""
    sensitivity = sf.global_sensitivity
    track = err is not None
    b = np.zeros(active.size)
    if track:   # float sums of the rounding errors (exact − float) of b and of their absolute values
        C, E = np.zeros(active.size), np.zeros(active.size)
    t, B = 0, 0
    probed = False
    while active.size:
        if t >= max_steps:
            _clip_rest(active, a, b, C if track else None, E if track else None, t, out, err)
            return
        if t >= _PROBE_AFTER and not probed:
            probed = True
            active, b, C, E = _drop_hopeless(sf, active, t, max_steps, b, a, out, err, C if track else None,
                                             E if track else None)
            if not active.size:
                return
        B = min(_block_size(active.size, B), max_steps - t)
        d = sf(t, active)[:, None] if B == 1 else _block_deltas(sf, t, B, active)
        with np.errstate(over="ignore", invalid="ignore"):   # once per block: overflows give inf, handled there (err = inf)
            if B == 1:
                sat = d >= sensitivity
                c = d
                ends = b[:, None] + d
            else:
                sat = np.logical_or.accumulate(d >= sensitivity, axis=1)  # sticky saturation
                d = np.where(sat, sensitivity, d)
                c = np.cumsum(d, axis=1)
                ends = b[:, None] + c                                # b(t + j + 1)
            aa = a[active]
            stop = (aa[:, None] < ends) | sat
            done = stop.any(axis=1)
            if track:
                if B == 1:
                    ce = ca = np.zeros((active.size, 0))
                else:
                    ce, bad = _cumsum_errors(c, d)
                    ca = np.abs(ce)
                    if bad.any():
                        E = np.where(bad, np.inf, E)
            if done.any():
                rows = np.flatnonzero(done)
                j = stop[rows].argmax(axis=1)
                dj = d[rows, j]
                ej = ends[rows, j]
                starts = ej - dj                                     # b(t + j)
                over = np.isinf(ej)
                if over.any():   # b(t + j + 1) overflowed: inf − δ is no start; take b(t + j) itself (err = inf)
                    jo, ro = j[over], rows[over]
                    starts[over] = np.where(jo > 0, ends[ro, np.maximum(jo - 1, 0)], b[ro])
                idx = active[rows]
                out[idx] = t + j + (aa[rows] - starts) / dj
                if track:
                    # b(t + j + 1) − ends_j = (b(t) − b) + Σ_{k<j} cumsum errors + error of b + c_j, and
                    # b(t + j) − starts = (b(t + j + 1) − ends_j) + error of ends_j − d_j
                    if ce.shape[1]:
                        pick = (np.arange(rows.size), np.maximum(j - 1, 0))
                        ps = np.where(j > 0, np.cumsum(ce[rows], axis=1)[pick], 0.0)
                        pa = np.where(j > 0, np.cumsum(ca[rows], axis=1)[pick], 0.0)
                    else:
                        ps = pa = np.zeros(rows.size)
                    e1 = _two_sum_err(b[rows], c[rows, j], ej)
                    e2 = _two_sum_err(ej, -dj, starts)
                    C_end, E_end = C[rows] + ps + e1, E[rows] + pa + np.abs(e1)
                    err[idx] = _resolved_error(aa[rows], starts, _bound(C_end + e2, E_end + np.abs(e2), t + B), dj,
                                               out[idx], ej, _bound(C_end, E_end, t + B), sat[rows, j])
                keep = ~done
                if track:
                    e1 = _two_sum_err(b[keep], c[keep, -1], ends[keep, -1])
                    C = C[keep] + ce.sum(axis=1)[keep] + e1
                    E = E[keep] + ca.sum(axis=1)[keep] + np.abs(e1)
                active, b = active[keep], ends[keep, -1]
            else:
                if track:
                    e1 = _two_sum_err(b, c[:, -1], ends[:, -1])
                    C = C + ce.sum(axis=1) + e1
                    E = E + ca.sum(axis=1) + np.abs(e1)
                b = ends[:, -1]
        t += B


# -- the shift of shifted local dampening -------------------------------------------------------------
def shift_totals(sensitivity_function: SensitivityFunction, n: int, *,
                 max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
    """G_r = Σ_{t>=0} (Δ − δ(x, t, r)) for every candidate: the shift of shifted local dampening.

    Finite for bounded sensitivity functions (δ = Δ from some distance on). The walk stops for a
    candidate as soon as its δ reaches Δ (saturation, module docstring), and for all candidates at the
    function's ``saturation_distance`` (set by :meth:`SensitivityFunction.bounded`). A function without
    one is read as reaching Δ at ``max_steps`` (δ' = Δ from there on, admissible whenever δ is: module
    docstring, "The walk limit"), so G is finite on every dataset (it used to be a ``ValueError`` there,
    an error that depended on the data). See also :func:`shift_totals_with_error` and
    :func:`shift_total_exact`.

    Parameters
    ----------
    sensitivity_function : SensitivityFunction
        An admissible, bounded δ (global sensitivity Δ = ``sensitivity_function.global_sensitivity``).
    n : int
        The number of candidates.
    max_steps : int
        Distances walked at most when the function has no ``saturation_distance``.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        G_r >= 0 for every candidate.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(2, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> G = shift_totals(sf, 2)
    >>> G.shape, G.tolist()
    ((2,), [2.0, 2.0])
    """
    return _shift(sensitivity_function, n, max_steps, track=False)[0]


def shift_totals_with_error(sensitivity_function: SensitivityFunction, n: int, *,
                            max_steps: int = DEFAULT_MAX_STEPS) -> tuple[np.ndarray, np.ndarray]:
    """``(G, err)``: G exactly as :func:`shift_totals` returns it, and err[r] >= |G[r] − G_exact(r)|,
    G_exact(r) = Σ_t (Δ − δ(x, t, r)) in exact rational arithmetic from the float δ values (every
    subtraction and addition has its rounding error computed exactly with TwoSum; err bounds their
    sum). err = 0 when no operation rounds (e.g. integer δ and Δ).

    Parameters
    ----------
    sensitivity_function, n, max_steps
        As in :func:`shift_totals`.

    Returns
    -------
    G : numpy.ndarray of float64, shape (n,)
        The values of :func:`shift_totals`.
    err : numpy.ndarray of float64, shape (n,)
        Rigorous bounds on |G − G_exact|.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(2, [0.1, 1.0][min(t, 1)]), 1.0)
    >>> G, err = shift_totals_with_error(sf, 2)
    >>> G.tolist(), bool(np.all(err < 1e-15))
    ([0.9, 0.9], True)
    """
    return _shift(sensitivity_function, n, max_steps, track=True)


def _shift(sensitivity_function, n, max_steps, track: bool):
    n = check_int(n, "n", minimum=1)
    sf = check_sensitivity_function(sensitivity_function, n)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    sensitivity = sf.global_sensitivity
    if sf.shift is not None:   # a closed form / block evaluation provided by the function (exactness-tested)
        G, err = sf.shift(np.arange(n))
        G = np.asarray(G, dtype=np.float64)
        err = np.asarray(err, dtype=np.float64)
        if G.shape != (n,) or err.shape != (n,):
            raise ValueError(f"shift of {sf.name!r} must return two arrays of shape ({n},)")
        return G, (np.where(err >= 0, err, np.inf) if track else None)
    limit = _limit(sf, max_steps)
    # G <= t·Δ: below this bound no sum overflows, and the steps skip the floating-point context
    wide = not (sensitivity * limit <= _DBL_MAX / 4)
    g = np.zeros(n)
    if track:   # float sums of the rounding errors (exact − float) of g and of their absolute values
        C, E = np.zeros(n), np.zeros(n)
    active = np.arange(n)
    t, B = 0, 0
    # A function without a saturation distance is read as saturated at max_steps (δ' = Δ from there on:
    # admissible, module docstring "The walk limit"): G sums t < max_steps, on every dataset.
    while active.size and t < limit:
        if sf.elementwise:
            B = min(_block_size(active.size, B), limit - t)
            d = _block_deltas(sf, t, B, active)
            unsat = ~np.logical_or.accumulate(d >= sensitivity, axis=1)
            diff = sensitivity - d
            x = np.where(unsat, diff, 0.0)
            with np.errstate(over="ignore", invalid="ignore"):           # G beyond DBL_MAX: inf, and err = inf
                c = np.cumsum(x, axis=1)          # sequential, so its rounding errors are known exactly
                ga = g[active]
                gn = ga + c[:, -1]
                if track:
                    ce, bad = _cumsum_errors(c, x)
                    e0 = np.where(unsat, _two_sum_err(sensitivity, -d, diff), 0.0)
                    e1 = _two_sum_err(ga, c[:, -1], gn)
                    C[active] += e0.sum(axis=1) + ce.sum(axis=1) + e1
                    Ea = E[active] + np.abs(e0).sum(axis=1) + np.abs(ce).sum(axis=1) + np.abs(e1)
                    E[active] = np.where(bad, np.inf, Ea)
            g[active] = gn
            active = active[unsat[:, -1]]
            t += B
            continue
        d = sf(t, active)
        unsat = d < sensitivity
        ai = active[unsat]
        du = d[unsat]
        diff = sensitivity - du
        ga = g[ai]
        with np.errstate(over="ignore", invalid="ignore") if wide else _LOUD:
            gn = ga + diff
            if track:
                e0, e1 = _two_sum_err(sensitivity, -du, diff), _two_sum_err(ga, diff, gn)
                C[ai] += e0 + e1
                E[ai] += np.abs(e0) + np.abs(e1)
        g[ai] = gn
        active = ai
        t += 1
    if not track:
        return g, None
    with np.errstate(over="ignore", invalid="ignore"):
        err = _bound(C, E, t)
    return g, np.where(err < np.inf, err, np.inf)   # NaN (overflow) -> inf


# -- exact values for one candidate -------------------------------------------------------------------
_FIX = 1074  # every finite float64 is an integer multiple of 2^-1074


def _fixed(x: float) -> int:
    """x · 2^1074 as an exact int."""
    p, q = float(x).as_integer_ratio()   # q = 2^k, k <= 1074
    return p << (_FIX + 1 - q.bit_length())


def _check_candidate(sensitivity_function, r) -> tuple[SensitivityFunction, int]:
    sf = check_sensitivity_function(sensitivity_function, None)
    n = sf.n_candidates
    assert n is not None  # learnt by check_sensitivity_function
    return sf, check_int(r, "r", minimum=0, maximum=n - 1)


def _deltas_of(sf: SensitivityFunction, r: int, limit: int):
    """(t, δ(x, t, r)) for t = 0, 1, ..., limit − 1, asked lazily (blocks of doubling size for
    elementwise functions, one distance per call otherwise)."""
    cand = np.array([r], dtype=np.intp)
    if not sf.elementwise:
        for t in range(limit):
            yield t, float(sf(t, cand)[0])
        return
    t, B = 0, 1
    while t < limit:
        B = min(B, limit - t)
        vals = sf.at(t + np.arange(B), np.full(B, r, dtype=np.intp)).tolist()
        for j, v in enumerate(vals):
            yield t + j, v
        t += B
        B = min(2 * B, 1 << 16)


def _check_real(x, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a finite real number, got {type(x).__name__}")
    v = float(x)
    if not np.isfinite(v):   # a utility is private: its value is not shown
        raise ValueError(f"{name} must be a finite real number")
    return v


def dampen_exact(u_r: float, sensitivity_function: SensitivityFunction, r: int, *,
                 max_steps: int = DEFAULT_MAX_STEPS) -> Fraction:
    """D(x, r) for one candidate in exact rational arithmetic.

    ``u_r`` is u(x, r) (a float, read as the rational it denotes), ``r`` the candidate's index in the
    sensitivity function. δ(x, t, r) is asked for candidate r only, and the sums are exact; saturation
    convention, D(−u) = −D(u) and D(0) = 0 as in :func:`dampen`. The walk costs one δ evaluation per
    distance up to the resolving one (blocks for elementwise functions).

    Parameters
    ----------
    u_r : float
        The utility u(x, r) of the candidate.
    sensitivity_function : SensitivityFunction
        An admissible δ for u, over all candidates.
    r : int
        The candidate's index in ``sensitivity_function``.
    max_steps : int
        As in :func:`dampen`.

    Returns
    -------
    fractions.Fraction
        D(x, r) exactly.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(3, [3.0, 5.0][min(t, 1)]), 5.0)
    >>> dampen_exact(6.5, sf, 0)        # thesis Example 3.4.1: 1 + 3.5/5
    Fraction(17, 10)
    >>> dampen_exact(-0.1, dpselect.constant(1, 1.0), 0)   # the float 0.1 read exactly
    Fraction(-3602879701896397, 36028797018963968)
    """
    v = _check_real(u_r, "u_r")
    sf, r = _check_candidate(sensitivity_function, r)
    max_steps = _limit(sf, check_int(max_steps, "max_steps", minimum=1))
    a = _fixed(abs(v))
    if a == 0:
        return Fraction(0)
    far = _zero_below(sf, max_steps)
    if far is not None and far[r]:
        return Fraction(-max_steps if v < 0 else max_steps)   # δ = 0 below max_steps: D clipped (as dampen)
    sensitivity = sf.global_sensitivity
    b = 0
    for t, d in _deltas_of(sf, r, max_steps):
        di = _fixed(d)
        nb = b + di
        if a < nb:
            D = t + Fraction(a - b, di)
            break
        if d >= sensitivity:   # saturated: each further step adds exactly Δ
            D = t + Fraction(a - b, _fixed(sensitivity))
            break
        b = nb
    else:
        D = Fraction(max_steps)   # b(max_steps) <= |u| exactly: D >= max_steps, clipped to it (as dampen)
    return -D if v < 0 else D


def shift_total_exact(sensitivity_function: SensitivityFunction, r: int, *,
                      max_steps: int = DEFAULT_MAX_STEPS) -> Fraction:
    """G_r = Σ_t (Δ − δ(x, t, r)) for one candidate in exact rational arithmetic (the float δ and Δ read
    as the rationals they denote; saturation convention and limits as in :func:`shift_totals`).

    Parameters
    ----------
    sensitivity_function : SensitivityFunction
        An admissible, bounded δ.
    r : int
        The candidate's index.
    max_steps : int
        As in :func:`shift_totals`.

    Returns
    -------
    fractions.Fraction
        G_r exactly.

    Examples
    --------
    >>> import dpselect
    >>> sf = dpselect.SensitivityFunction(lambda t: np.full(2, [0.1, 1.0][min(t, 1)]), 1.0)
    >>> shift_total_exact(sf, 1) == 1 - Fraction(0.1)
    True
    """
    sf, r = _check_candidate(sensitivity_function, r)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    sensitivity = sf.global_sensitivity
    limit = _limit(sf, max_steps)
    full = _fixed(sensitivity)
    g = 0
    for _, d in _deltas_of(sf, r, limit):
        if d >= sensitivity:
            return Fraction(g, 1 << _FIX)
        g += full - _fixed(d)
    # at the saturation distance δ = Δ; without one, δ is read as Δ from max_steps on (as shift_totals)
    return Fraction(g, 1 << _FIX)
