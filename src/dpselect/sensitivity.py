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
from typing import Callable, Sequence

import numpy as np

from ._validation import check_int, check_positive

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

    Notes
    -----
    Values are validated on every call: the result must be a 1-D array of the right length without NaN
    or negative entries (``ValueError`` otherwise). Values above Δu are **clipped** to Δu: by thesis
    Lemma 3.2.2, min(δ, Δu) is admissible whenever δ is, so clipping never weakens privacy and only
    removes noise a larger value would add.

    Examples
    --------
    >>> import numpy as np
    >>> degrees = np.array([3, 10, 50])
    >>> sf = SensitivityFunction(lambda t: np.minimum(1.0, 2.0 / np.maximum(degrees - t - 2, 1e-300)), 1.0)
    >>> sf(0)
    array([1.        , 0.25      , 0.04166667])
    """

    def __init__(
        self,
        fn: Callable[..., np.ndarray],
        global_sensitivity: float,
        *,
        n_candidates: int | None = None,
        saturation_distance: int | None = None,
        name: str | None = None,
        elementwise: bool = False,
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
        self.name = name or getattr(fn, "__name__", "delta")
        self.elementwise = bool(elementwise) and self.supports_candidates

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, t: int, candidates: np.ndarray | Sequence[int] | None = None) -> np.ndarray:
        """δ(x, t, r) for all candidates (or for the index array ``candidates``), validated and clipped."""
        t = check_int(t, "t", minimum=0)
        delta = self.global_sensitivity
        if self.saturation_distance is not None and t >= self.saturation_distance:
            size = self._size(candidates)
            if size is not None:
                return np.full(size, delta)
        if candidates is None:
            vals = self._fn(t)
            expected = self.n_candidates
        else:
            idx = np.asarray(candidates)
            if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
                raise TypeError(f"candidates must be a 1-D int index array, got dtype {idx.dtype} shape {idx.shape}")
            idx = idx.astype(np.intp, copy=False)
            if self.supports_candidates:
                vals = self._fn(t, candidates=idx)
            else:
                full = self._check(self._fn(t), t, self.n_candidates)
                return full[idx]
            expected = idx.size
        return self._check(vals, t, expected)

    def at(self, ts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """δ(x, ts[i], candidates[i]) elementwise (validated, clipped); needs ``elementwise=True``
        for speed, and falls back to one call per distinct t otherwise."""
        ts = np.asarray(ts, dtype=np.int64)
        idx = np.asarray(candidates, dtype=np.intp)
        if ts.shape != idx.shape:
            raise ValueError(f"ts and candidates must have the same shape, got {ts.shape} and {idx.shape}")
        if ts.size and ts.min() < 0:
            raise ValueError(f"distances t must be >= 0, got {int(ts.min())}")
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

    def _size(self, candidates) -> int | None:
        if candidates is not None:
            return int(np.asarray(candidates).size)
        return self.n_candidates

    def _check(self, vals, t: int, expected: int | None) -> np.ndarray:
        arr = np.asarray(vals, dtype=np.float64)
        if arr.ndim == 0 and expected is not None:
            arr = np.full(expected, float(arr))
        if arr.ndim != 1:
            raise ValueError(f"sensitivity function {self.name!r} must return a 1-D array, got shape {arr.shape} at t={t}")
        if expected is not None and arr.shape[0] != expected:
            raise ValueError(
                f"sensitivity function {self.name!r} returned {arr.shape[0]} values at t={t}, expected {expected}"
            )
        if expected is None and self.n_candidates is None:
            self.n_candidates = arr.shape[0]
        if arr.size:
            lo = arr.min()
            if not lo >= 0:  # catches NaN too
                bad = int(np.flatnonzero(~(arr >= 0))[0])
                raise ValueError(
                    f"sensitivity function {self.name!r} must return finite values >= 0, got {arr[bad]!r} "
                    f"at t={t} (position {bad})"
                )
            if arr.max() > self.global_sensitivity:
                arr = np.minimum(arr, self.global_sensitivity)  # Lemma 3.2.2: still admissible
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
        """
        size = None if database_size is None else check_int(database_size, "database_size", minimum=1)
        inner = self
        if inner.supports_candidates:
            def fn(t, candidates=None):
                return inner(t, candidates)
        else:
            def fn(t):
                return inner(t)
        sat = size if inner.saturation_distance is None or size is None else min(size, inner.saturation_distance)
        if sat is None:
            sat = inner.saturation_distance
        out = SensitivityFunction(
            fn, inner.global_sensitivity, n_candidates=inner.n_candidates, saturation_distance=sat,
            name=f"bounded({inner.name})",
        )
        if inner.elementwise:
            out._fn = inner._fn
            out.supports_candidates = out.elementwise = True
        return out

    def flat(self) -> "SensitivityFunction":
        """δ̂(x, t) = max_r δ(x, t, r), the same for all candidates (thesis Sec. 3.2, Lemma 3.2.3)."""
        inner = self

        def fn(t, candidates=None):
            full = inner(t)
            m = full.max()
            return np.full(full.shape[0] if candidates is None else len(candidates), m)

        return SensitivityFunction(
            fn, inner.global_sensitivity, n_candidates=inner.n_candidates,
            saturation_distance=inner.saturation_distance, name=f"flat({inner.name})",
        )


def constant(n_candidates: int, global_sensitivity: float) -> SensitivityFunction:
    """δ(x, t, r) = Δu for all t and r: global sensitivity as a sensitivity function.

    Local dampening with it is exactly the exponential mechanism.

    >>> constant(3, 2.0)(5)
    array([2., 2., 2.])
    """
    n = check_int(n_candidates, "n_candidates", minimum=1)
    delta = check_positive(global_sensitivity, "global_sensitivity")

    def fn(t, candidates=None):
        return np.full(n if candidates is None else len(candidates), delta)

    return SensitivityFunction(fn, delta, n_candidates=n, saturation_distance=0, name="constant")


def _check_sfs(sensitivity_functions, name: str) -> list[SensitivityFunction]:
    sfs = list(sensitivity_functions)
    if not sfs:
        raise ValueError(f"{name} must contain at least one SensitivityFunction")
    for i, sf in enumerate(sfs):
        if not isinstance(sf, SensitivityFunction):
            raise TypeError(f"{name}[{i}] must be a SensitivityFunction, got {type(sf).__name__}")
    ns = {sf.n_candidates for sf in sfs if sf.n_candidates is not None}
    if len(ns) > 1:
        raise ValueError(f"{name} disagree on the number of candidates: {sorted(ns)}")
    return sfs


def _common_saturation(sfs) -> int | None:
    sats = [sf.saturation_distance for sf in sfs]
    return None if any(s is None for s in sats) else max(sats)


def maximum(*sensitivity_functions: SensitivityFunction) -> SensitivityFunction:
    """Pointwise max of admissible functions of the same utility (thesis Lemma 3.2.3); Δ = max Δ_i."""
    sfs = _check_sfs(sensitivity_functions, "sensitivity_functions")
    n = next((sf.n_candidates for sf in sfs if sf.n_candidates is not None), None)

    def fn(t, candidates=None):
        out = sfs[0](t, candidates)
        for sf in sfs[1:]:
            out = np.maximum(out, sf(t, candidates))
        return out

    return SensitivityFunction(
        fn, max(sf.global_sensitivity for sf in sfs), n_candidates=n,
        saturation_distance=_common_saturation(sfs), name="max(" + ", ".join(sf.name for sf in sfs) + ")",
    )


def weighted_sum(weights: Sequence[float], sensitivity_functions: Sequence[SensitivityFunction]) -> SensitivityFunction:
    """δ^agg(x, t, r) = Σ_i |w_i| δ_i(x, t, r) with Δ = Σ_i |w_i| Δ_i (paper Thm 5.3 and 5.4).

    Admissible for u_agg = Σ_i w_i u_i when every δ_i is admissible for u_i under the same neighbour
    model.

    >>> f = weighted_sum([3, -2], [constant(2, 1.0), constant(2, 0.5)])
    >>> f.global_sensitivity, f(0).tolist()
    (4.0, [4.0, 4.0])
    """
    sfs = _check_sfs(sensitivity_functions, "sensitivity_functions")
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != len(sfs):
        raise ValueError(f"weights must have one entry per sensitivity function ({len(sfs)}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite, got {w.tolist()}")
    aw = np.abs(w)
    if not aw.sum() > 0:
        raise ValueError(f"weights must not all be zero, got {w.tolist()}")
    keep = [i for i in range(len(sfs)) if aw[i] > 0]
    n = next((sf.n_candidates for sf in sfs if sf.n_candidates is not None), None)

    def fn(t, candidates=None):
        out = aw[keep[0]] * sfs[keep[0]](t, candidates)
        for i in keep[1:]:
            out = out + aw[i] * sfs[i](t, candidates)
        return out

    return SensitivityFunction(
        fn, float(sum(aw[i] * sfs[i].global_sensitivity for i in keep)), n_candidates=n,
        saturation_distance=_common_saturation([sfs[i] for i in keep]), name="weighted_sum",
    )
