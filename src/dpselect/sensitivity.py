"""Sensitivity functions δ(x, t, r) for all candidates at once, and their compositions.

A *sensitivity function* of a utility u answers, for a fixed private dataset x and a distance t >= 0,
an upper bound δ(x, t, r) for every candidate r. It is *admissible* (thesis Def. 3.2.1) when

1. δ(x, 0, r) >= LS(x, 0, r) = max over neighbours y of |u(x, r) - u(y, r)|, and
2. δ(x, t + 1, r) >= δ(y, t, r) for every neighbour y of x and every t >= 0.

Admissible functions are what local dampening needs for ε-DP. The neighbour model (add/remove one
record, replace one record, add/remove one edge) is a property of the utility; a sensitivity function
is admissible only for the model it was derived for.

Everything here is vectorised: ``sf(t)`` returns a float64 array of shape ``(n_candidates,)`` and
``sf(t, candidates=idx)`` the values of the candidates ``idx`` only.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ._validation import short_repr, check_bool, check_int, check_positive

__all__ = ["SensitivityFunction", "constant", "maximum", "weighted_sum"]


def _accepts_candidates(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "candidates" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class SensitivityFunction:
    """δ(x, t, r) for every candidate r of a fixed dataset x, with its global sensitivity Δu.

    Parameters
    ----------
    fn : callable
        ``fn(t) -> array of shape (n_candidates,)``: δ(x, t, r) for all candidates. If it also accepts
        a keyword argument ``candidates`` (an int index array) it must return the values of just those
        candidates; the dampening loops then touch only candidates that are still unresolved.
    global_sensitivity : float
        Δu, finite and > 0.
    n_candidates : int, optional
        Number of candidates; inferred from the first full evaluation when omitted.
    saturation_distance : int, optional
        A distance from which δ = Δu for every candidate (thesis Def. 3.2.2, *bounded*). Set by
        :meth:`bounded` with a database size; lets the shifted mechanisms stop there.
    name : str, optional
        Shown in error messages and reprs.
    elementwise : bool
        Declares that ``fn(t, candidates=idx)`` also accepts ``t`` as an int array of the same shape as
        ``idx`` and returns δ(x, t[i], idx[i]) elementwise. The dampening loops then evaluate many
        distances per call (blocks of t for all unresolved candidates), which removes the per-distance
        Python overhead for candidates that need thousands of steps.
    shift : callable, optional
        ``shift(candidates) -> (G, err)``: a closed form (or block evaluation) of the shift totals
        G_r = Σ_{t < saturation_distance} (Δu − δ(x, t, r)) of the given candidates (saturation convention
        of :mod:`dpselect.dampening`: once δ reaches Δu it stays there), with ``err[i] >= |G[i] −
        G_exact(candidates[i])|``, G_exact the sum in exact rational arithmetic of the float values this
        function returns. Needs ``saturation_distance``. :func:`dpselect.dampening.shift_totals_with_error`
        (shifted local dampening) uses it instead of walking every distance;
        :func:`dpselect.dampening.shift_total_exact` always walks (the definition the hook is tested
        against).
    block : callable, optional
        ``block(t0, t1, candidates) -> new float array of shape (t1 - t0, len(candidates))``: δ(x, t0 + j,
        candidates[i]) at entry (j, i), the same values (bit for bit) as ``fn`` gives one distance at a
        time, in a new array each call (it is clipped in place). :meth:`table` uses it (by broadcasting,
        without building a grid of (distance, candidate) pairs); the Pareto score's running sums and the
        dampening walk's blocks ask for such tables.

    Notes
    -----
    Values are validated on every call: the result must be a 1-D array of real numbers (``TypeError``
    naming the function for strings, complex numbers, None) of the right length with finite entries
    >= 0 (``ValueError`` for NaN, ``inf`` or negative entries: ``inf`` usually means a division by
    zero in ``fn``, so it is an error, not clipped). Finite values above Δu are **clipped** to Δu: by
    thesis Lemma 3.2.2, min(δ, Δu) is admissible whenever δ is, so clipping never weakens privacy and
    only removes noise a larger value would add.

    Every call returns a fresh array that the caller may modify; it never aliases an array ``fn``
    keeps (a cache). The object holds no mutable state besides ``n_candidates`` (learnt once), so it
    is safe to share across threads whenever ``fn`` is; the sensitivity functions built by dpselect
    (:func:`constant`, :func:`maximum`, :func:`weighted_sum`, :meth:`bounded`, :meth:`flat`,
    :func:`dpselect.multiobjective.pareto_sensitivity`) are.

    Examples
    --------
    >>> import numpy as np
    >>> degrees = np.array([3, 10, 50])
    >>> sf = SensitivityFunction(lambda t: np.minimum(1.0, 2.0 / np.maximum(degrees - t - 2, 1e-300)), 1.0)
    >>> sf(0)
    array([1.        , 0.25      , 0.04166667])
    """

    #: False for a function whose cost grows with t or that keeps the state of a walk over t: the dampening
    #: walk then never asks it for δ at max_steps to end fast (:mod:`dpselect.dampening`, "Ending fast").
    far_probe: bool = True

    def __init__(
        self,
        fn: Callable[..., np.ndarray],
        global_sensitivity: float,
        *,
        n_candidates: int | None = None,
        saturation_distance: int | None = None,
        name: str | None = None,
        elementwise: bool = False,
        shift: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
        block: Callable[[int, int, np.ndarray], np.ndarray] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (t -> array of shape (n_candidates,)), got {type(fn).__name__}")
        self._fn = fn
        self.global_sensitivity = check_positive(global_sensitivity, "global_sensitivity")
        self.n_candidates = None if n_candidates is None else check_int(n_candidates, "n_candidates", minimum=1)
        self.saturation_distance = (
            None if saturation_distance is None else check_int(saturation_distance, "saturation_distance", minimum=0)
        )
        self.supports_candidates = _accepts_candidates(fn)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, got {short_repr(name)} ({type(name).__name__})")
        self.name = name or getattr(fn, "__name__", "delta")
        self.elementwise = check_bool(elementwise, "elementwise") and self.supports_candidates
        if shift is not None and not callable(shift):
            raise TypeError(f"shift must be callable (candidates -> (G, err)), got {type(shift).__name__}")
        if shift is not None and self.saturation_distance is None:
            raise ValueError("shift needs a saturation_distance (the shift of an unbounded function is infinite)")
        self.shift = shift
        if block is not None and not callable(block):
            raise TypeError(f"block must be callable ((t0, t1, candidates) -> array), got {type(block).__name__}")
        self.block = block

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, t: int, candidates: np.ndarray | Sequence[int] | None = None) -> np.ndarray:
        """δ(x, t, r) for all candidates (or for the index array ``candidates``), validated and clipped.

        ``candidates`` must be a 1-D array of int indices in ``[0, n_candidates)`` (no negative
        wrap-around). The result is always a fresh array the caller may modify: it never aliases a
        cache of the wrapped function.

        Parameters
        ----------
        t : int
            The distance, >= 0.
        candidates : 1-D int array, optional
            Indices of the candidates asked for (default: all).

        Returns
        -------
        numpy.ndarray of float64, shape (n,) or (len(candidates),)

        Examples
        --------
        >>> SensitivityFunction(lambda t: np.array([1.0, 2.0, 9.0]), 4.0)(0, candidates=[2, 0])
        array([4., 1.])
        """
        t = check_int(t, "t", minimum=0)
        sens = self.global_sensitivity
        idx = None if candidates is None else self._check_candidates(candidates, t)
        if self.saturation_distance is not None and t >= self.saturation_distance:
            size = self.n_candidates if idx is None else idx.size
            if size is not None:
                return np.full(size, sens)
        if idx is None:
            return self._check(self._fn(t), t, self.n_candidates)
        if self.supports_candidates:
            return self._check(self._fn(t, candidates=idx), t, idx.size)
        full = self._check(self._fn(t), t, self.n_candidates)
        return full[idx]

    def _check_candidates(self, candidates, t) -> np.ndarray:
        idx = candidates if isinstance(candidates, np.ndarray) else np.asarray(candidates)
        if idx.ndim != 1 or not (idx.dtype.kind in "iu" or (idx.size == 0 and idx.dtype.kind in "biuf")):
            raise TypeError(f"candidates must be a 1-D array of int indices, got dtype {idx.dtype} shape {idx.shape} "
                            f"({short_repr(candidates)})")
        idx = idx.astype(np.intp, copy=False)
        if idx.size:
            if self.n_candidates is None:
                self._check(self._fn(t), t, None)  # learns the number of candidates from one full evaluation
            # one reduction for both bounds: negative indices are huge as unsigned integers
            n_cand = self.n_candidates
            assert n_cand is not None  # learnt above
            if int(idx.view(np.uintp).max()) >= n_cand:
                # the number of candidates can be private (records as candidates): neither it nor the index is named
                raise ValueError(f"candidates must be indices in [0, n_candidates) of {self.name!r}")
        return idx

    def at(self, ts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """δ(x, ts[i], candidates[i]) elementwise (validated, clipped); needs ``elementwise=True``
        for speed, and falls back to one call per distinct t otherwise.

        Parameters
        ----------
        ts : int array
            Distances (>= 0).
        candidates : int array of the same shape
            Candidate indices.

        Returns
        -------
        numpy.ndarray of float64, the shape of ``ts``

        Examples
        --------
        >>> sf = SensitivityFunction(lambda t: np.array([1.0, 2.0]) * (t + 1), 10.0)
        >>> sf.at(np.array([0, 3]), np.array([1, 0])).tolist()
        [2.0, 4.0]
        """
        ts_arr = np.asarray(ts)
        if ts_arr.size and not np.issubdtype(ts_arr.dtype, np.integer):
            raise TypeError(f"ts must be an array of int distances, got dtype {ts_arr.dtype}")
        ts = ts_arr.astype(np.int64, copy=False)
        if ts.size and ts.min() < 0:
            raise ValueError(f"distances t must be >= 0, got {int(ts.min())}")
        idx = self._check_candidates(candidates, int(ts.min()) if ts.size else 0)
        if ts.shape != idx.shape:
            raise ValueError(f"ts and candidates must have the same shape, got {ts.shape} and {idx.shape}")
        if not self.elementwise:
            out = np.empty(ts.shape)
            for t in np.unique(ts):
                m = ts == t
                out[m] = self(int(t), idx[m])
            return out
        vals = self._check(self._fn(ts, candidates=idx), -1, idx.size)
        if self.saturation_distance is not None:
            vals = np.where(ts >= self.saturation_distance, self.global_sensitivity, vals)
        return vals

    def table(self, t0: int, t1: int, candidates: np.ndarray, *, by_distance: bool = False) -> np.ndarray:
        """δ(x, t0 + j, candidates[i]) at entry (i, j) for t0 <= t0 + j < t1, validated and clipped: the
        values of :meth:`at` on that grid (from the ``block`` hook when there is one, by broadcasting).
        ``by_distance=True`` gives the transpose, entry (j, i), as a C-contiguous array (running sums over t
        then run along axis 0, a row of candidates at a time).

        Parameters
        ----------
        t0, t1 : int
            The distances t0 <= t < t1.
        candidates : 1-D int array
            Candidate indices.
        by_distance : bool
            Return the transpose (distances along axis 0).

        Returns
        -------
        numpy.ndarray of float64, shape (len(candidates), t1 - t0), or (t1 - t0, len(candidates))
        with ``by_distance=True``

        Examples
        --------
        >>> sf = SensitivityFunction(lambda t: np.array([1.0, 2.0]) * (t + 1), 10.0)
        >>> sf.table(0, 3, np.array([1])).tolist()
        [[2.0, 4.0, 6.0]]
        """
        t0 = check_int(t0, "t0", minimum=0)
        t1 = check_int(t1, "t1", minimum=t0)
        idx = self._check_candidates(candidates, t0)
        B = t1 - t0
        if self.block is None or idx.size == 0 or B == 0:
            ts = np.broadcast_to(np.arange(t0, t1, dtype=np.int64), (idx.size, B)).ravel()
            vals = self.at(ts, np.repeat(idx, B)).reshape(idx.size, B)
            return np.ascontiguousarray(vals.T) if by_distance else vals
        raw = self.block(t0, t1, idx)
        vals = raw if isinstance(raw, np.ndarray) else np.asarray(raw)
        if vals.shape != (B, idx.size):
            raise ValueError(f"block of sensitivity function {self.name!r} returned shape {vals.shape}, expected "
                             f"{(B, idx.size)} (distances [{t0}, {t1}) x candidates)")
        if vals.dtype != np.float64 or not vals.flags.c_contiguous or not vals.flags.writeable:
            vals = np.ascontiguousarray(vals, dtype=np.float64)
        # the hook returns a new array (its contract), so it is checked and clipped in place, not copied
        vals = self._check_fresh(vals, t0)
        sat = self.saturation_distance
        if sat is not None and sat < t1:
            vals[max(sat - t0, 0):] = self.global_sensitivity
        return vals if by_distance else np.ascontiguousarray(vals.T)

    def _check_fresh(self, arr: np.ndarray, t: int) -> np.ndarray:
        """_check for a float64 table that belongs to the caller: validated, clipped in place."""
        if arr.size:
            lo, hi = arr.min(), arr.max()
            if not (lo >= 0 and hi < np.inf):
                self._check(arr.ravel(), t, arr.size)   # raises (the message names no value)
            if hi > self.global_sensitivity:
                np.minimum(arr, self.global_sensitivity, out=arr)
        return arr

    def _check(self, vals, t: int, expected: int | None) -> np.ndarray:
        raw = vals if isinstance(vals, np.ndarray) else np.asarray(vals)
        kind = raw.dtype.kind
        if kind not in "biuf":
            if kind == "O" and not any(isinstance(v, (str, bytes)) or v is None for v in raw.ravel()):
                try:
                    raw = raw.astype(np.float64)
                except (TypeError, ValueError):
                    kind = "?"
                else:
                    kind = "f"
            if kind not in "biuf":
                raise TypeError(   # the values themselves are private (read from the data): not shown
                    f"sensitivity function {self.name!r} must return real numbers, got dtype {raw.dtype} at t={t}"
                )
        arr = raw.astype(np.float64, copy=False)
        if arr is vals or arr.base is not None:
            arr = arr.copy()  # never hand out (or later clip into) the wrapped function's own arrays
        if arr.ndim == 0 and expected is not None:
            arr = np.full(expected, float(arr))
        if arr.ndim != 1:
            raise ValueError(f"sensitivity function {self.name!r} must return a 1-D array, got a {arr.ndim}-D "
                             f"array at t={t}")
        if expected is not None and arr.shape[0] != expected:
            # both sizes can be private (candidates that are records): the message names neither
            raise ValueError(
                f"sensitivity function {self.name!r} returned the wrong number of values at t={t} (one per "
                "candidate asked for)"
            )
        if expected is None and self.n_candidates is None:
            self.n_candidates = arr.shape[0]
        if arr.size:
            lo, hi = arr.min(), arr.max()
            if not (lo >= 0 and hi < np.inf):  # catches NaN too
                # which value, where, and whether it is NaN, inf or negative are private: not named
                raise ValueError(
                    f"sensitivity function {self.name!r} must return finite values >= 0 at every distance, and "
                    f"did not at t={t} (inf is not clipped: return the global sensitivity where no smaller bound "
                    "is known)"
                )
            if hi > self.global_sensitivity:
                np.minimum(arr, self.global_sensitivity, out=arr)  # Lemma 3.2.2: still admissible
        return arr

    def __repr__(self) -> str:
        n = "?" if self.n_candidates is None else self.n_candidates
        return f"SensitivityFunction({self.name}, global_sensitivity={self.global_sensitivity:g}, n_candidates={n})"

    # -- compositions ---------------------------------------------------------------------------
    def bounded(self, database_size: int | None = None) -> "SensitivityFunction":
        """min(δ, Δu) (thesis Lemma 3.2.2), and δ = Δu for t >= ``database_size`` (Def. 3.2.2).

        Forcing δ = Δu from distance n on is admissible: condition 1 is untouched (n >= 1) and
        condition 2 only ever compares δ(x, t+1) = Δu with something <= Δu. Shifted local dampening
        needs this boundedness so its closed form is finite.

        Parameters
        ----------
        database_size : int, optional
            A public bound on the size of the database (>= 1); None keeps the function's own
            ``saturation_distance``.

        Returns
        -------
        SensitivityFunction
            The bounded function (``saturation_distance`` = the smaller of the two), same shape of values.

        Examples
        --------
        >>> sf = SensitivityFunction(lambda t: np.array([0.5, 1.0]), 2.0).bounded(3)
        >>> sf.saturation_distance, sf(2).tolist(), sf(3).tolist()
        (3, [0.5, 1.0], [2.0, 2.0])
        """
        size = None if database_size is None else check_int(database_size, "database_size", minimum=1)
        inner = self
        sat = size if inner.saturation_distance is None or size is None else min(size, inner.saturation_distance)
        if sat is None:
            sat = inner.saturation_distance
        fn: Callable[..., np.ndarray]
        if inner.elementwise:
            # the raw function already clips nothing itself; __call__ clips and saturates at ``sat``
            fn = inner._fn
        elif inner.supports_candidates:
            def fn(t, candidates=None):
                return inner(t, candidates)
        else:
            def fn(t):
                return inner(t)
        out = SensitivityFunction(
            fn, inner.global_sensitivity, n_candidates=inner.n_candidates, saturation_distance=sat,
            name=f"bounded({inner.name})", elementwise=inner.elementwise,
            # the closed-form shift sums up to the saturation distance: valid only if that is unchanged
            shift=inner.shift if sat == inner.saturation_distance else None,
            # raw values: table() clips and saturates at ``sat``
            block=inner.block,
        )
        out.far_probe = inner.far_probe
        return out

    def flat(self) -> "SensitivityFunction":
        """δ̂(x, t) = max_r δ(x, t, r), the same for all candidates (thesis Sec. 3.2, Lemma 3.2.3).

        Returns
        -------
        SensitivityFunction
            Admissible whenever this one is; ``f(t)`` has shape (n,), every entry the maximum.

        Examples
        --------
        >>> SensitivityFunction(lambda t: np.array([0.5, 1.0, 0.25]), 2.0).flat()(0).tolist()
        [1.0, 1.0, 1.0]
        """
        inner = self

        def fn(t, candidates=None):
            full = inner(t)
            m = full.max()
            return np.full(full.shape[0] if candidates is None else len(candidates), m)

        out = SensitivityFunction(
            fn, inner.global_sensitivity, n_candidates=inner.n_candidates,
            saturation_distance=inner.saturation_distance, name=f"flat({inner.name})",
        )
        out.far_probe = inner.far_probe   # a walk's far check costs what the inner function's does
        return out


def constant(n_candidates: int, global_sensitivity: float) -> SensitivityFunction:
    """δ(x, t, r) = Δu for all t and r: global sensitivity as a sensitivity function.

    Local dampening with it is exactly the exponential mechanism.

    Parameters
    ----------
    n_candidates : int
        The number of candidates n (>= 1).
    global_sensitivity : float
        Δu > 0.

    Returns
    -------
    SensitivityFunction
        ``f(t)`` is a float64 array of shape (n,) filled with Δu; saturated from distance 0.

    Examples
    --------
    >>> constant(3, 2.0)(5)
    array([2., 2., 2.])
    """
    n = check_int(n_candidates, "n_candidates", minimum=1)
    sens = check_positive(global_sensitivity, "global_sensitivity")

    def fn(t, candidates=None):
        return np.full(n if candidates is None else len(candidates), sens)

    return SensitivityFunction(fn, sens, n_candidates=n, saturation_distance=0, name="constant")


def _check_sfs(sensitivity_functions, name: str) -> list[SensitivityFunction]:
    sfs = list(sensitivity_functions)
    if not sfs:
        raise ValueError(f"{name} must contain at least one SensitivityFunction")
    for i, sf in enumerate(sfs):
        if not isinstance(sf, SensitivityFunction):
            raise TypeError(f"{name}[{i}] must be a SensitivityFunction, got {type(sf).__name__}")
    ns = {sf.n_candidates for sf in sfs if sf.n_candidates is not None}
    if len(ns) > 1:
        raise ValueError(f"{name} disagree on the number of candidates")   # the numbers can be private
    return sfs


def _common_saturation(sfs) -> int | None:
    sats = [sf.saturation_distance for sf in sfs]
    return None if any(s is None for s in sats) else max(sats)


def maximum(*sensitivity_functions: SensitivityFunction) -> SensitivityFunction:
    """Pointwise max of admissible functions of the same utility (thesis Lemma 3.2.3); Δ = max Δ_i.

    Parameters
    ----------
    *sensitivity_functions : SensitivityFunction
        At least one, each admissible for the same utility u, over the same n candidates.

    Returns
    -------
    SensitivityFunction
        max_i δ_i(x, t, r), admissible for u; ``f(t)`` has shape (n,).

    Examples
    --------
    >>> f = maximum(constant(2, 1.0), SensitivityFunction(lambda t: np.array([0.5, 3.0]), 3.0))
    >>> f.global_sensitivity, f(0).tolist()
    (3.0, [1.0, 3.0])
    """
    sfs = _check_sfs(sensitivity_functions, "sensitivity_functions")
    n = next((sf.n_candidates for sf in sfs if sf.n_candidates is not None), None)

    def fn(t, candidates=None):
        out = sfs[0](t, candidates)
        for sf in sfs[1:]:
            out = np.maximum(out, sf(t, candidates))
        return out

    out = SensitivityFunction(
        fn, max(sf.global_sensitivity for sf in sfs), n_candidates=n,
        saturation_distance=_common_saturation(sfs), name="max(" + ", ".join(str(sf.name) for sf in sfs) + ")",
    )
    out.far_probe = all(sf.far_probe for sf in sfs)
    return out


def check_weight_values(weights: Any, m: int) -> np.ndarray:
    """``weights`` as float64, refusing strings, None and other non-numbers with a message naming them."""
    raw = np.asarray(weights) if not isinstance(weights, (str, bytes)) else np.asarray([weights])
    bad = raw.dtype.kind not in "biuf"
    if raw.dtype.kind == "O":
        bad = any(isinstance(v, (str, bytes)) or v is None for v in raw.ravel())
    if not bad:
        try:
            return raw.astype(np.float64)
        except (TypeError, ValueError):
            bad = True
    raise TypeError(f"objective_weights must be a 1-D array of {m} finite numbers, got {short_repr(weights)}")


def weighted_sum(objective_weights: "Sequence[float] | np.ndarray",
                 sensitivity_functions: Sequence[SensitivityFunction]) -> SensitivityFunction:
    """δ^agg(x, t, r) = Σ_i |w_i| δ_i(x, t, r) with Δ = Σ_i |w_i| Δ_i (paper Thm 5.3 and 5.4).

    Admissible for u_agg = Σ_i w_i u_i when every δ_i is admissible for u_i under the same neighbour
    model.

    Parameters
    ----------
    objective_weights : sequence of m floats
        The w_i (finite, not all zero; negative allowed).
    sensitivity_functions : sequence of m SensitivityFunction
        δ_i for each objective, over the same n candidates.

    Returns
    -------
    SensitivityFunction
        δ^agg; ``f(t)`` has shape (n,).

    Examples
    --------
    >>> f = weighted_sum([3, -2], [constant(2, 1.0), constant(2, 0.5)])
    >>> f.global_sensitivity, f(0).tolist()
    (4.0, [4.0, 4.0])
    """
    sfs = _check_sfs(sensitivity_functions, "sensitivity_functions")
    w = check_weight_values(objective_weights, len(sfs))
    if w.ndim != 1 or w.shape[0] != len(sfs):
        raise ValueError(f"objective_weights must have one entry per sensitivity function ({len(sfs)}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"objective_weights must be finite, got {w.tolist()}")
    aw = np.abs(w)
    if not aw.sum() > 0:
        raise ValueError(f"objective_weights must not all be zero, got {w.tolist()}")
    keep = [i for i in range(len(sfs)) if aw[i] > 0]
    n = next((sf.n_candidates for sf in sfs if sf.n_candidates is not None), None)

    def fn(t, candidates=None):
        out = aw[keep[0]] * sfs[keep[0]](t, candidates)
        for i in keep[1:]:
            out = out + aw[i] * sfs[i](t, candidates)
        return out

    out = SensitivityFunction(
        fn, float(sum(aw[i] * sfs[i].global_sensitivity for i in keep)), n_candidates=n,
        saturation_distance=_common_saturation([sfs[i] for i in keep]), name="weighted_sum",
    )
    out.far_probe = all(sfs[i].far_probe for i in keep)
    return out
