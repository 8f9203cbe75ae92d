"""The Pareto score PS and its admissible sensitivity function δ^PS (paper Def. 4.3, 4.5; Thm 4.7): the
engine of PrivPareto. How δ^PS is evaluated fast: :mod:`dpselect.multiobjective`'s docstring."""
from __future__ import annotations

import math
import numbers
import threading
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._dominance import count_dominating, count_with_orders
from .._validation import check_matrix, check_positive
from ..dampening import DEFAULT_MAX_STEPS
from ..sensitivity import SensitivityFunction, constant


Sensitivities = Sequence["float | SensitivityFunction"]


# ---------------------------------------------------------------------------------------------
# Pareto score and its sensitivity function
# ---------------------------------------------------------------------------------------------
def pareto_score(objectives: ArrayLike) -> np.ndarray:
    """Pareto score PS(r) = −|{r' ≠ r : r' dominates r}| of every candidate (paper Def. 4.3).

    r' dominates r iff it is strictly better in **every** objective; ties in any objective prevent
    domination. Computed exactly in O(n log n) for m <= 2 and by divide and conquer for m >= 3.

    Parameters
    ----------
    objectives : array of shape (n, m)
        ``objectives[r, i]`` = u_i(x, r), finite; all objectives are maximised. A 1-D array is one objective.

    Returns
    -------
    int64 array of shape (n,), values in [−(n − 1), 0]; 0 marks the Pareto front.

    Notes
    -----
    Not private by itself: it is the utility PrivPareto feeds to a private selector. Its global
    sensitivity is n − 1 under any neighbour model (the range of the score).

    Examples
    --------
    Paper Example 4.4 (candidates a, b, c, d, e):

    >>> pareto_score([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]]).tolist()
    [0, 0, -1, -1, -4]
    """
    M = _matrix(objectives, min_rows=1)
    return -count_dominating(M, strict=True)


def _matrix(U, *, min_rows: int) -> np.ndarray:
    arr = np.asarray(U) if not isinstance(U, np.ndarray) else U
    if getattr(arr, "ndim", None) == 1:
        arr = arr[:, None]
    M = check_matrix(arr, "objectives", min_rows=min_rows)
    return M


def _is_number(s: Any) -> bool:
    return isinstance(s, (numbers.Real, np.floating, np.integer)) and not isinstance(s, (bool, np.bool_))


def _check_sensitivities(sensitivities, m: int, n: int,
                         name: str = "sensitivities") -> list[float | SensitivityFunction]:
    """Numbers (global sensitivities, checked > 0) or SensitivityFunctions for n candidates, one per objective."""
    if isinstance(sensitivities, (SensitivityFunction, numbers.Number, np.generic, str)):
        raise TypeError(f"{name} must be a list with one entry per objective ({m}), got {type(sensitivities).__name__}")
    try:
        sens = list(sensitivities)
    except TypeError:
        raise TypeError(f"{name} must be a list with one entry per objective ({m}), "
                        f"got {type(sensitivities).__name__}") from None
    if len(sens) != m:
        raise ValueError(f"{name} must have one entry per objective (objectives has {m} columns), got {len(sens)}")
    out: list[float | SensitivityFunction] = []
    for i, s in enumerate(sens):
        if isinstance(s, SensitivityFunction):
            if s.n_candidates is not None and s.n_candidates != n:
                raise ValueError(f"{name}[{i}] is for {s.n_candidates} candidates but objectives has {n} rows")
            out.append(s)
        elif _is_number(s):
            out.append(check_positive(s, f"{name}[{i}]"))
        else:
            raise TypeError(f"{name}[{i}] must be a number (global sensitivity) or a SensitivityFunction, "
                            f"got {type(s).__name__}")
    return out


def _as_functions(sens: list, n: int) -> list[SensitivityFunction]:
    return [s if isinstance(s, SensitivityFunction) else constant(n, s) for s in sens]


class _ParetoDelta:
    """δ^PS(x, t, ·) of the candidates ``U`` (rows), keeping the running sums Σ_{j<=t} δ_i(x, j, ·).

    ``base_idx`` maps the rows of U to the candidates of the base sensitivity functions (a subset
    after earlier picks of PrivPareto top-k). Calls with increasing t (what the dampening loops do) cost
    one step each; a smaller t restarts the sums from 0.

    Thread safety: the running sums and the cached sort orders are **per thread** (``threading.local``),
    so one object shared by several threads gives every thread the same values as a private copy
    would; a thread's first call starts its own walk from t = 0. (The values never depend on the
    state, only the cost does.) The base sensitivity functions are called from every thread, so they
    must be thread-safe themselves; the ones in :mod:`dpselect.sensitivity` are stateless.
    """

    def __init__(self, U: np.ndarray, sfs: list[SensitivityFunction], base_idx: np.ndarray | None) -> None:
        self.U = U
        self.sfs = sfs
        self.base_idx = base_idx
        self.n = U.shape[0]
        self._local = threading.local()

    def _state(self) -> _WalkState:
        st = getattr(self._local, "state", None)
        if st is None:
            st = self._local.state = _WalkState(self.U)
        return st

    def _advance(self, st: _WalkState, t: int) -> None:
        if t < st.t:
            st.reset(self.U)
        while st.t < t:
            j = st.t + 1
            steps = []
            for i, sf in enumerate(self.sfs):
                d = sf(j) if self.base_idx is None else sf(j, candidates=self.base_idx)
                if d.shape != (self.n,):
                    raise ValueError(f"sensitivity_functions[{i}] returned the wrong number of values at t={j} "
                                     "(one per row of U)")
                steps.append(d)
            # all objectives evaluated before any sum changes: an error above leaves the state consistent
            for i, d in enumerate(steps):
                st.cum[:, i] += d
            st.t = j

    def __call__(self, t: int, candidates: np.ndarray | None = None) -> np.ndarray:
        st = self._state()
        self._advance(st, t)
        H = self.U + st.cum
        L = self.U - st.cum
        qL = L if candidates is None else L[candidates]
        qH = H if candidates is None else H[candidates]
        # the sums grow a little per step, so the previous step's sort orders are nearly right
        weak, st.orders_h = count_with_orders(H, qL, False, "auto", st.orders_h)
        strict, st.orders_l = count_with_orders(L, qH, True, "auto", st.orders_l)
        return (weak - 1 - strict).astype(np.float64)


    # -- blocks of distances (few candidates) -------------------------------------------------
    def _block_state(self) -> _BlockState:
        st = getattr(self._local, "block", None)
        if st is None:
            st = self._local.block = _BlockState(self.U)
        return st

    def _steps(self, t0: int, t1: int, rows: np.ndarray | None = None,
               by_distance: bool = False) -> list[np.ndarray]:
        """δ_i(x, t, ·) for t in [t0, t1), as (n, t1 − t0) arrays (one call per objective when the
        function is elementwise; transposed, C-contiguous, with ``by_distance``); only the given rows of
        U when ``rows`` is given."""
        out = []
        ts = np.arange(t0, t1)
        cand = np.arange(self.n) if self.base_idx is None else self.base_idx
        if rows is not None:
            cand = cand[rows]
        for i, sf in enumerate(self.sfs):
            # from its saturation distance on δ_i is Δ_i (for a global sensitivity given as a number: from
            # t = 0), without asking it one distance per call
            k = ts.size if sf.saturation_distance is None else max(0, min(sf.saturation_distance - t0, ts.size))
            if k == ts.size:
                d = sf.table(t0, t1, cand, by_distance=by_distance)
            elif by_distance:
                d = np.full((ts.size, cand.size), sf.global_sensitivity)
                if k:
                    d[:k] = sf.table(t0, t0 + k, cand, by_distance=True)
            else:
                d = np.full((cand.size, ts.size), sf.global_sensitivity)
                if k:
                    d[:, :k] = sf.table(t0, t0 + k, cand)
            out.append(d)
        return out

    def _block(self, st: _BlockState, t1: int) -> np.ndarray:
        """δ^PS(x, t, r) for all r and t in [st.t + 1, t1], advancing the state to t1: running sums by one
        sequential cumsum per objective from the previous sums (the same float recurrence as the walk),
        then all pairs compared by broadcasting."""
        t0 = st.t + 1
        n = self.n
        steps = self._steps(t0, t1 + 1)
        B = t1 + 1 - t0
        cums = []
        for i, d in enumerate(steps):
            c = np.cumsum(np.concatenate((st.cum[:, i:i + 1], d), axis=1), axis=1)[:, 1:]   # (n, B)
            cums.append(c)
        out = np.empty((n, B))
        chunk = max(1, _BLOCK_PAIRS // max(1, n * n * len(cums)))
        for s0 in range(0, B, chunk):
            s1 = min(B, s0 + chunk)
            weak = np.ones((n, n, s1 - s0), dtype=bool)     # [query r, point r', t]
            strict = np.ones((n, n, s1 - s0), dtype=bool)
            for i, c in enumerate(cums):
                col = self.U[:, i:i + 1]
                H = col + c[:, s0:s1]
                L = col - c[:, s0:s1]
                weak &= H[None, :, :] >= L[:, None, :]
                strict &= L[None, :, :] > H[:, None, :]
            out[:, s0:s1] = weak.sum(axis=1) - 1 - strict.sum(axis=1)
        st.cum = np.column_stack([c[:, -1] for c in cums])
        st.t = t1
        return out

    def _thresholds(self) -> "_Thresholds":
        thr = getattr(self._local, "thresholds", None)
        if thr is None:
            thr = self._local.thresholds = _Thresholds(self)
        return thr

    def at(self, ts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """δ^PS(x, ts[i], candidates[i]) elementwise, from the pairs' thresholds (:class:`_Thresholds`)."""
        if ts.size == 0:
            return np.zeros(0)
        thr = self._thresholds()
        thr.extend(int(ts.max()))
        return thr.values(ts, candidates)

    def at_broadcast(self, ts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """The same values by broadcasting over every pair and distance of [min ts, max ts] (the reference
        :class:`_Thresholds` is tested against)."""
        if ts.size == 0:
            return np.zeros(0)
        st = self._block_state()
        lo, hi = int(ts.min()), int(ts.max())
        if lo <= st.t:
            st.reset(self.U)
        if lo > st.t + 1:
            self._skip(st, lo - 1)
        vals = self._block(st, hi)
        return vals[np.asarray(candidates, dtype=np.intp), ts - lo]

    def _skip(self, st: _BlockState, t: int) -> None:
        """Advance the block state's running sums to distance t without evaluating δ^PS."""
        while st.t < t:
            t1 = min(t, st.t + max(1, _BLOCK_PAIRS // max(1, self.n)))
            steps = self._steps(st.t + 1, t1 + 1)
            st.cum = np.column_stack([np.cumsum(np.concatenate((st.cum[:, i:i + 1], d), axis=1), axis=1)[:, -1]
                                      for i, d in enumerate(steps)])
            st.t = t1

    def shift(self, sat: int) -> np.ndarray:
        """G_r = Σ_{t < sat} (n − 1 − δ^PS(x, t, r)) for all r, from the pairs' thresholds."""
        return _Thresholds(self).shift(sat)

    def shift_broadcast(self, sat: int) -> np.ndarray:
        """The same by broadcasting, in blocks of doubling size (stops once every candidate has reached
        n − 1: δ^PS is non-decreasing in t); the reference :meth:`shift` is tested against."""
        st = _BlockState(self.U)
        G = np.zeros(self.n, dtype=np.int64)
        B = 1
        full = self.n - 1
        while st.t + 1 < sat:
            t1 = min(sat - 1, st.t + B)
            vals = self._block(st, t1)
            G += (full - vals).astype(np.int64).sum(axis=1)
            if np.all(vals[:, -1] >= full):
                break
            B = min(2 * B, max(1, (1 << 24) // max(1, self.n * self.n)))
        return G.astype(np.float64)


class _Thresholds:
    """δ^PS of every candidate at every distance from two integers per pair of candidates (few candidates).

    With the running sums c_i(r, t) = Σ_{j<=t} δ_i(x, j, r) (the same sequential float sums as the walk),
    H = fl(u + c) is non-decreasing and L = fl(u − c) non-increasing in t (float addition is monotone), so
    for a query q and a point p, "H(p) >= L(q) in every i" is false up to some distance and true from
    tw(q, p) on, and "L(p) > H(q) in every i" true up to ts(q, p) and false from there. Hence

        δ^PS(x, t, q) = #{p : tw(q, p) <= t} − 1 − #{p : ts(q, p) > t},

    and the shift G_q = Σ_{t < sat} (n − 1 − δ^PS) = Σ_p min(tw, sat) + min(ts, sat). The thresholds are
    found by walking the distances in chunks (the sums of a chunk held as an (n, chunk) array per
    objective, n·chunk <= :data:`_CHUNK_CELLS`): the pairs whose condition flips within a chunk (one
    comparison at its last distance) are located by bisection inside it. Memory O(n² + n·chunk), time
    O(n·T·m) for the sums plus O(n² m log chunk) per chunk for the comparisons (the broadcast over every
    pair and distance it replaces was O(n² T m)). Exactly the values of the broadcast (tested).
    """

    _NEVER = np.iinfo(np.int64).max
    _KEY = 40   # distances stay below 2^40 (max_steps and saturation distances are far smaller)

    def __init__(self, owner: "_ParetoDelta") -> None:
        self.owner = owner
        n = owner.n
        self.tw = np.full((n, n), self._NEVER, dtype=np.int64)
        self.ts = np.full((n, n), self._NEVER, dtype=np.int64)
        np.fill_diagonal(self.tw, 0)    # H(q) >= L(q) always
        np.fill_diagonal(self.ts, 0)    # L(q) > H(q) never
        self.t = -1                     # thresholds known for every distance <= t
        self.cum = np.zeros_like(owner.U, dtype=np.float64)
        off = ~np.eye(n, dtype=bool)
        q, p = np.nonzero(off)
        self.pend_w = (q, p)             # the pairs (query q, point p) whose condition has still to flip
        self.pend_s = (q.copy(), p.copy())
        # the finite thresholds as sorted keys q·2^40 + t (a row's later chunks only add larger t, so each
        # chunk's keys merge in linear time): counts per query by two binary searches, no re-sorting
        diag = np.arange(n, dtype=np.int64) << self._KEY
        self.keys_w, self.keys_s = diag, diag.copy()

    def done(self) -> bool:
        return self.pend_w[0].size == 0 and self.pend_s[0].size == 0

    def extend(self, t_to: int, ahead: bool = True) -> None:
        """Thresholds for every distance <= t_to (or until every pair has flipped). Chunks at least double
        (a walk asks for a few more distances at a time, and each chunk costs O(n²)); ``ahead=False`` never
        sums distances past t_to, and grows chunks by a quarter only (its last chunk is where the last pair
        flips: the sums it evaluates beyond that are the waste)."""
        own = self.owner
        n = own.n
        U = own.U
        while self.t < t_to and not self.done():
            t0 = self.t + 1
            if ahead:
                B = max(t_to - self.t, self.t + 1, 64)
            else:   # the shift: the last chunk overshoots the last flip by at most a quarter of the distances
                B = min(t_to - self.t, max((self.t + 1) // 4, 64))
            B = int(max(1, min(B, _CHUNK_CELLS // max(n, 1))))
            # only candidates in a pair still to flip need their sums (a finished one never comes back:
            # its conditions are monotone), so the sensitivity functions are asked for fewer and fewer rows
            need = np.zeros(n, dtype=bool)
            for pq, pp in (self.pend_w, self.pend_s):
                need[pq] = True
                need[pp] = True
            rows = np.flatnonzero(need)
            pos = np.full(n, -1, dtype=np.int64)
            pos[rows] = np.arange(rows.size)
            steps = own._steps(t0, t0 + B, None if rows.size == n else rows, by_distance=True)
            # distances along axis 0, candidates contiguous (the rate functions' tables come that way, with no
            # transposing copy): the same sequential float sums per candidate as the walk's st.cum += δ, the
            # first row starting from the previous sums (d0 + prev = prev + d0 exactly)
            H, L = [], []
            for i, c in enumerate(steps):       # (B, rows), a new array: summed in place
                c[0] += self.cum[rows, i]
                np.cumsum(c, axis=0, out=c)
                self.cum[rows, i] = c[-1]
                col = U[rows, i]
                H.append((col + c).ravel())
                L.append(np.subtract(col, c, out=c).ravel())
            R = rows.size

            # the pairs' conditions at distance t0 + j; q and p are flat offsets of the query's and the
            # point's sums at j = 0 (the row of each in the chunk)
            def weak(q, p, j):
                jR = j * R
                fp, fq = p + jR, q + jR
                ok = H[0].take(fp) >= L[0].take(fq)
                for i in range(1, len(H)):
                    ok &= H[i].take(fp) >= L[i].take(fq)
                return ok

            def strict(q, p, j):
                jR = j * R
                fp, fq = p + jR, q + jR
                ok = L[0].take(fp) > H[0].take(fq)
                for i in range(1, len(H)):
                    ok &= L[i].take(fp) > H[i].take(fq)
                return ok

            # weak: false -> true; the first j in the chunk where it holds
            self.pend_w, self.keys_w = self._locate(self.pend_w, pos, weak, True, B, t0, self.tw, self.keys_w)
            # strict: true -> false; the first j where it fails
            self.pend_s, self.keys_s = self._locate(self.pend_s, pos, strict, False, B, t0, self.ts, self.keys_s)
            self.t = t0 + B - 1

    def _locate(self, pend, pos, pred, target: bool, B: int, t0: int, out: np.ndarray,
                keys: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        q, p = pend
        if q.size == 0:
            return pend, keys
        rq, rp = pos[q], pos[p]
        flip = pred(rq, rp, B - 1)
        if not target:
            flip = ~flip
        if not flip.any():
            return pend, keys
        fq, fp = q[flip], p[flip]
        rq, rp = rq[flip], rp[flip]
        # search on [lo, hi], which holds the first j where the condition is ``target`` (it is at B − 1 and
        # monotone in j): each round asks it at _FANOUT evenly spaced distances per pair (the last one hi),
        # and the number that miss it says which of the _FANOUT slices holds the flip (fewer rounds than
        # bisection: the cost here is per numpy call, not per comparison)
        lo = np.zeros(fq.size, dtype=np.int64)
        hi = np.full(fq.size, B - 1, dtype=np.int64)
        search: slice | np.ndarray = slice(None)
        if t0 == 0:
            # most pairs' conditions already hold (or fail) at distance 0: settle those with one comparison
            at0 = pred(rq, rp, 0)
            later = np.flatnonzero(~at0 if target else at0)
            lo[later] = 1
            search, rq, rp = later, rq[later], rp[later]
        sub_lo, sub_hi = lo[search], hi[search]
        arange = np.arange(1, _FANOUT + 1)
        rq2, rp2 = rq[:, None], rp[:, None]
        w = B
        while w > 1 and sub_lo.size:
            step = -(-(sub_hi - sub_lo + 1) // _FANOUT)                      # ceil(width / fanout) >= 1
            probe = np.minimum(sub_lo[:, None] + step[:, None] * arange - 1, sub_hi[:, None])
            at = pred(rq2, rp2, probe)
            miss = np.count_nonzero(at if not target else ~at, axis=1)      # probes before the flip
            sub_lo = sub_lo + miss * step
            sub_hi = np.minimum(sub_lo + step - 1, sub_hi)
            w = -(-w // _FANOUT)
        lo[search] = sub_lo
        found = t0 + lo
        out[fq, fp] = found
        new = np.sort((fq << self._KEY) + found)
        merged = np.concatenate((keys, new))
        merged.sort(kind="stable")        # two sorted runs: a linear merge
        keep = ~flip
        return (q[keep], p[keep]), merged

    def values(self, ts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """δ^PS(x, ts[k], candidates[k]) for distances already covered (ts <= self.t, or all flipped):
        #{p : tw <= t} − 1 − (n − #{p : ts <= t}), each count two binary searches in the sorted keys."""
        n = self.owner.n
        q = np.asarray(candidates, dtype=np.int64) << self._KEY
        t = np.minimum(np.asarray(ts, dtype=np.int64), (1 << self._KEY) - 1)
        weak = np.searchsorted(self.keys_w, q + t, side="right") - np.searchsorted(self.keys_w, q, side="left")
        strict_le = np.searchsorted(self.keys_s, q + t, side="right") - np.searchsorted(self.keys_s, q, side="left")
        return (weak - 1 - (n - strict_le)).astype(np.float64)

    def shift(self, sat: int) -> np.ndarray:
        self.extend(sat - 1, ahead=False)
        G = np.minimum(self.tw, sat).sum(axis=1) + np.minimum(self.ts, sat).sum(axis=1)
        return G.astype(np.float64)


#: Sums held per chunk of distances by :class:`_Thresholds` (candidates x distances, per objective).
_CHUNK_CELLS = 1 << 21
#: Distances asked per pair and round when :class:`_Thresholds` locates a flip inside a chunk.
_FANOUT = 8


class _BlockState:
    """Running sums at distance ``t`` for the block evaluation (``t = -1``: nothing summed yet)."""

    __slots__ = ("t", "cum")

    def __init__(self, U: np.ndarray) -> None:
        self.reset(U)

    def reset(self, U: np.ndarray) -> None:
        self.t = -1
        self.cum = np.zeros_like(U, dtype=np.float64)


class _WalkState:
    """One thread's position in the walk over t: the running sums and the last sort orders."""

    __slots__ = ("t", "cum", "orders_h", "orders_l")

    def __init__(self, U: np.ndarray) -> None:
        self.reset(U)

    def reset(self, U: np.ndarray) -> None:
        self.t = -1
        self.cum = np.zeros_like(U)
        self.orders_h: list | None = None
        self.orders_l: list | None = None


def _saturation(U: np.ndarray, sfs: list[SensitivityFunction]) -> int | None:
    """A distance from which δ^PS = n − 1 exactly, when every δ_i is bounded (else None).

    For t >= s_i (δ_i's saturation distance) every step adds exactly Δ_i, so Σ_{j<=t} δ_i >=
    (t − s_i + 1)Δ_i for every candidate. Once 2(t − s_i + 1)Δ_i >= range of u_i (with one step of
    slack against rounding) in every objective, every pair satisfies H(r') >= L(r) and no pair
    L(r') > H(r): δ^PS(x, t, r) = n − 1 for all r. Declaring it lets shifted local dampening stop there;
    it changes no value, so admissibility is untouched.

    A distance beyond :data:`dpselect.dampening.DEFAULT_MAX_STEPS` is not declared (None): the walks go
    to a declared saturation distance regardless of ``max_steps``, so declaring 10^299 (sensitivities
    tiny against the objectives' ranges) would turn their clear ``max_steps`` error into an endless loop.
    """
    sat: int | float = 0
    for i, sf in enumerate(sfs):
        if sf.saturation_distance is None:
            return None
        steps = _coverage_steps(U[:, i], sf.global_sensitivity)
        if steps is not None:
            sat = max(sat, sf.saturation_distance + steps)
    return int(sat) if sat <= DEFAULT_MAX_STEPS else None


def _coverage_steps(col: np.ndarray, sensitivity: float) -> int | float | None:
    """ceil(range / (2Δ)) of one objective (None for a constant column; may be a huge float)."""
    with np.errstate(over="ignore"):   # a range beyond the float range is inf (no warning: it would depend on the data)
        rng_i = float(col.max() - col.min())
    if not rng_i > 0:
        return None
    q = rng_i / (2.0 * sensitivity)
    return math.ceil(q) if q < 2.0 ** 62 else q


#: Largest n·n·m for which :func:`_far_dominated` computes its bound (O(n² m) time and memory).
_WALK_CHECK_LIMIT = 4_000_000


def _far_dominated(U: np.ndarray, sfs: list[SensitivityFunction], limit: int) -> np.ndarray:
    """Mask of the candidates whose δ^PS(x, t, r) is provably 0 at every distance t < ``limit``.

    A dominated candidate r (PS(r) <= −1) is resolved only once δ^PS(x, t, r) >= 1, i.e. once some r'
    enters one of the two sets of Def. 4.5: a dominator with L_i(r') <= H_i(r) in some i, which needs
    Σ_{j<=t} δ_i(r') + Σ_{j<=t} δ_i(r) >= u_i(r') − u_i(r), or a non-dominator with H(r') >= L(r) in every
    i, which needs the same sums >= u_i(r) − u_i(r') wherever that is positive. Each sum is at most
    (t + 1)Δ_i, which gives the first distance at which that is possible. The gaps are shrunk and the
    sums grown by a relative margin that covers the float walk (sums of at most ``limit`` values, and
    the roundings of U ± sums), so the mask is a proof for the δ^PS that is computed, not only for the
    real-valued one. The dampening walk gives these candidates D = −limit without walking
    (:mod:`dpselect.dampening`, "The walk limit"): local dampening on the Pareto score completes on
    every dataset, where it used to refuse with an error that depended on the objectives' range.
    Only computed when n·n·m <= _WALK_CHECK_LIMIT (all False beyond: the walk goes the full way).
    """
    n, m = U.shape
    out = np.zeros(n, dtype=bool)
    if n * n * m > _WALK_CHECK_LIMIT:
        return out
    dominated = np.flatnonzero(count_dominating(U, strict=True) > 0)
    if dominated.size == 0:
        return out
    sens = np.array([sf.global_sensitivity for sf in sfs])
    rho = (limit + 4) * 2.0 ** -50 + 2.0 ** -40
    with np.errstate(over="ignore", invalid="ignore"):
        a, b = U[None, :, :], U[dominated, None, :]             # u(r'), u(r): shape (dominated, n, m)
        # half the gap the sums must cover, from below: the halves cannot overflow (|a/2 − b/2| <= DBL_MAX), and
        # the margins cover the roundings of the halves, of U ± sums and of the float sums
        half = np.abs(a * 0.5 - b * 0.5) * (1.0 - rho) - (np.abs(a) * 2.0 ** -51 + np.abs(b) * 2.0 ** -51) - 2.0 ** -1070
        scaled = np.maximum(half, 0.0) / (sens * (1.0 + rho))   # gap / (2Δ), in units of (t + 1)
        dom = (a > b).all(axis=2)
        need_a = np.where(dom, scaled.min(axis=2), np.inf)
        need_b = np.where(dom, np.inf, np.where(a < b, scaled, 0.0).max(axis=2))
        need_b[np.arange(dominated.size), dominated] = np.inf     # r' = r is not counted
        first = np.minimum(need_a.min(axis=1), need_b.min(axis=1))  # δ^PS(t) = 0 while t + 1 < first
        out[dominated[first > limit + 1]] = True
    return out


def _pareto_sf(U: np.ndarray, sfs: list[SensitivityFunction], base_idx: np.ndarray | None,
               cap: int | None = None) -> SensitivityFunction:
    """δ^PS of the rows of U. ``cap`` (shifted local dampening: a public distance, max(max_steps,
    DEFAULT_MAX_STEPS)): where δ^PS does not saturate by itself within it, it is forced to n − 1 from
    ``cap`` on. That is admissible for any admissible δ (condition 1: it only grows; condition 2: at
    t + 1 >= cap the right side is the bound), so the shift is a finite sum on every dataset and the
    release completes; where δ^PS saturates within ``cap`` (every dataset that did not used to be
    refused) nothing changes."""
    n, m = U.shape
    delta = _ParetoDelta(U, sfs, base_idx)
    sat = _saturation(U, sfs)
    if sat is None and cap is not None:
        sat = int(cap)
    small = n <= _BLOCK_MAX_CANDIDATES
    pairs = n <= _SHIFT_BLOCK_MAX_CANDIDATES

    def pareto_delta(t, candidates=None):
        if candidates is not None and np.ndim(t) > 0:   # elementwise: δ^PS(x, t[i], candidates[i])
            return delta.at(np.asarray(t, dtype=np.int64), candidates)
        return delta(t, candidates)

    shift = None
    if sat is not None and (pairs or m <= _SHIFT_MAX_OBJECTIVES):
        def shift(candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            G = (delta.shift(sat) if pairs else _pareto_shift(U, sfs, base_idx, sat))[candidates]
            return G, np.zeros(G.shape)   # integer sums far below 2^53: exact

    sf = SensitivityFunction(pareto_delta, float(n - 1), n_candidates=n, saturation_distance=sat,
                             name="pareto_score", shift=shift, elementwise=small)
    if sat is None:   # the walk is clipped at max_steps: candidates provably zero up to there are not walked
        far: dict[int, np.ndarray] = {}

        def zero_below(limit: int) -> np.ndarray:
            if limit not in far:
                far[limit] = _far_dominated(U, sfs, limit)
            return far[limit]

        sf.zero_below = zero_below  # type: ignore[attr-defined]
    # no evaluation at max_steps by the dampening walk's fail-fast check: the running sums would walk there
    # one distance at a time and restart (_far_dominated is this function's shortcut)
    sf.far_probe = False
    return sf


#: Up to this many candidates δ^PS is evaluated in blocks of distances (elementwise, from the pairs'
#: thresholds of :class:`_Thresholds`), which local dampening's walk uses: DP-MOET's populations,
#: select_model over 100 models. Above, one distance per call (O(n log n) each), which is faster for
#: the walk there: the thresholds' per-query counts are re-sorted (O(n² log n)) each time the walk
#: reaches further.
_BLOCK_MAX_CANDIDATES = 256
#: Up to this many candidates the shift of shifted local dampening is summed from the pairs' thresholds
#: (O(n²) memory: two int64 per pair, 16 MiB at 1,024; chunks of distances bound the rest). Above, by
#: inclusion–exclusion (:func:`_pareto_shift`, m <= 3). The limit was 64 for both uses
#: because the block evaluation broadcast every pair at every distance, O(n² T m) work: at 100 models it
#: was slower than one distance per call, not wrong (the block values equal the walk's, tested).
_SHIFT_BLOCK_MAX_CANDIDATES = 1024
#: (candidates)² x distances x objectives compared per broadcast in the reference block evaluation.
_BLOCK_PAIRS = 1 << 22


#: Objectives up to which δ^PS's shift is summed by inclusion–exclusion (2^m − 1 terms per distance).
_SHIFT_MAX_OBJECTIVES = 3


def _count_shifted_below(values: np.ndarray, below: np.ndarray, s, x: np.ndarray) -> np.ndarray:
    """#{p : fl(u_p + s) < x} for every x (s a number or one per x), given the distinct values of the
    u_p ascending (``values``) and ``below[j]`` = #{p : u_p < values[j]} (length len(values) + 1).

    fl(u + s) is non-decreasing in u, so the count is below[j] for the first distinct value with
    fl(values[j] + s) >= x: a binary search for fl(x − s), then a few steps over distinct values to
    correct for the rounding (exact, in float64)."""
    x = np.asarray(x, dtype=np.float64)
    s_arr = np.broadcast_to(np.asarray(s, dtype=np.float64), x.shape)
    nv = values.size
    with np.errstate(over="ignore", invalid="ignore"):
        j = np.searchsorted(values, x - s_arr, side="left")
        for _ in range(64):
            back = (j > 0) & ~((values[np.maximum(j - 1, 0)] + s_arr) < x)    # the previous value also >= x
            fwd = (j < nv) & ((values[np.minimum(j, nv - 1)] + s_arr) < x)   # this value still < x
            if not (back.any() or fwd.any()):
                return below[j]
            j = j - back + fwd
    # a long run of values within the rounding of s (not met in practice): count directly
    stuck = np.flatnonzero(back | fwd)
    for k in stuck.tolist():
        j[k] = int(np.searchsorted(values + s_arr[k], x[k], side="left"))
    return below[j]


def _distinct(sorted_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of an ascending array and below[j] = #{entries < values[j]} (+ the total)."""
    first = np.empty(sorted_u.size, dtype=bool)
    first[:1] = True
    np.not_equal(sorted_u[1:], sorted_u[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return sorted_u[starts], np.append(starts, sorted_u.size).astype(np.int64)


def _uniform_tail(u: "_Uniform", c0: float, sensitivity: float, t0: int, sat: int, G: np.ndarray) -> None:
    """Add Σ_{t0 <= t < sat} #{p : fl(u_p + c_t) < fl(u_q − c_t)} to G[q] for every query q, where
    c_t = fl(c_{t−1} + Δ) from c_{t0−1} = c0: the rest of the shift once only one objective, with the same
    C for all candidates, can still separate candidates. Each count is non-increasing in t, so a query
    is dropped at its first zero; distances are taken in blocks of doubling size for all queries left."""
    cs = np.empty(max(sat - t0, 0))
    c = c0
    for j in range(cs.size):          # the same sequential float sums as the walk
        c = c + sensitivity
        cs[j] = c
    q = u.queries()
    if q.size == 0 or cs.size == 0:
        return
    uq = u.sorted[u.rank[q]]
    j0, B = 0, 1
    while q.size and j0 < cs.size:
        B = min(B, cs.size - j0)
        c_blk = cs[j0:j0 + B]
        x = uq[:, None] - c_blk[None, :]
        cnt = u.count_below(np.broadcast_to(c_blk, x.shape).ravel(), x.ravel()).reshape(x.shape)
        np.add.at(G, q, cnt.sum(axis=1))
        alive = cnt[:, -1] > 0
        q, uq = q[alive], uq[alive]
        j0 += B
        B = int(min(2 * B, max(1, (1 << 21) // max(q.size, 1)), 1 << 16))


class _Uniform:
    """An objective whose δ is Δ for every candidate and distance (saturation distance 0): C_t is one
    number for all candidates, so points stay in the order of u. Points still below some query form a
    prefix of that order, queries still above some point a suffix."""

    def __init__(self, col: np.ndarray) -> None:
        self.order = np.argsort(col, kind="stable")
        self.sorted = col[self.order]
        self.rank = np.empty(col.size, dtype=np.int64)
        self.rank[self.order] = np.arange(col.size)
        self.values, self.below = _distinct(self.sorted)
        self.lo = col.size      # points: order[:lo]
        self.hi = 0             # queries: order[hi:]

    def shrink(self, c: float) -> None:
        if self.lo == 0 or self.hi >= self.sorted.size:
            self.lo, self.hi = 0, self.sorted.size
            return
        max_l = self.sorted[-1] - c          # the largest L of the suffix (its largest u)
        min_h = self.sorted[0] + c           # the smallest H of the prefix
        lo = min(self.lo, self.count_below(c, np.array([max_l]))[0])
        # queries with fl(u − c) <= min_h leave: #{q : fl(u_q − c) < next(min_h)}
        hi = int(_count_shifted_below(self.values, self.below, -c, np.array([np.nextafter(min_h, np.inf)]))[0])
        self.lo, self.hi = lo, max(self.hi, hi)
        if self.lo == 0 or self.hi >= self.sorted.size:
            self.lo, self.hi = 0, self.sorted.size

    def count_below(self, c, x: np.ndarray) -> np.ndarray:
        """#{p : fl(u_p + c) < x} over all candidates (points outside the prefix are never below)."""
        return _count_shifted_below(self.values, self.below, c, x)

    def points(self) -> np.ndarray:
        return self.order[:self.lo]

    def queries(self) -> np.ndarray:
        return self.order[self.hi:]

    def in_points(self, idx: np.ndarray) -> np.ndarray:
        return self.rank[idx] < self.lo

    def in_queries(self, idx: np.ndarray) -> np.ndarray:
        return self.rank[idx] >= self.hi

    def empty(self) -> bool:
        return self.lo == 0 or self.hi >= self.sorted.size


def _pareto_shift(U: np.ndarray, sfs: list[SensitivityFunction], base_idx: np.ndarray | None,
                  sat: int) -> np.ndarray:
    """G_r = Σ_{t < sat} (n − 1 − δ^PS(x, t, r)) for every candidate, the values of the walk, with the work
    per distance proportional to the candidates that can still contribute.

    With H = U + C_t, L = U − C_t (C_t the same float running sums as :class:`_ParetoDelta`),
    n − 1 − δ^PS(t, r) = #{r' : ∃i H_i(r') < L_i(r)} + #{r' : L(r') > H(r) in every i} (module
    docstring; r itself is in neither set). The first term is summed by inclusion–exclusion over the
    non-empty sets S of objectives, #{r' : H_i(r') < L_i(r) ∀ i ∈ S} (|S| = 1: a sorted array and a binary
    search; |S| >= 2: a dominance count). H only grows and L only shrinks with t, so a point r' with
    H_i(r') >= max L_i over the queries still separable in i can never again be below one in i, and a
    query with L_i(r) <= min H_i over those points never again above one: both sets shrink, monotonically,
    and the running sums C are advanced only for candidates still in some set (δ_i asked for those
    only). An objective whose δ_i is constant (saturation distance 0, e.g. degree) has the same C for
    every candidate (:class:`_Uniform`): its sets are a prefix and a suffix of the order of u_i, found by
    binary search. Terms are integers: the sums are exact.
    """
    n, m = U.shape
    G = np.zeros(n, dtype=np.int64)
    cols = [np.ascontiguousarray(U[:, i]) for i in range(m)]
    uni: list[_Uniform | None] = [_Uniform(cols[i]) if sf.saturation_distance == 0 else None
                                  for i, sf in enumerate(sfs)]
    sensitivities = [sf.global_sensitivity for sf in sfs]
    C = np.zeros((n, m))
    c_uni = [0.0] * m
    everyone = np.arange(n)
    low: list[np.ndarray] = [everyone] * m     # non-uniform objectives: points that may be below a query
    high: list[np.ndarray] = [everyone] * m    # ... queries that may be above a point
    s_pts, s_qry = everyone, everyone          # strict term: points above / queries below in every i
    subsets = [[i for i in range(m) if mask >> i & 1] for mask in range(1, 1 << m)]

    def H(i: int, idx: np.ndarray) -> np.ndarray:
        return cols[i][idx] + (c_uni[i] if uni[i] is not None else C[idx, i])

    def L(i: int, idx: np.ndarray) -> np.ndarray:
        return cols[i][idx] - (c_uni[i] if uni[i] is not None else C[idx, i])

    def points(i: int) -> np.ndarray:
        u = uni[i]
        return u.points() if u is not None else low[i]

    def queries(i: int) -> np.ndarray:
        u = uni[i]
        return u.queries() if u is not None else high[i]

    def empty(i: int) -> bool:
        u = uni[i]
        return u.empty() if u is not None else (low[i].size == 0 or high[i].size == 0)

    for t in range(sat):
        steps: list[tuple[np.ndarray, np.ndarray] | None] = []
        for i, sf in enumerate(sfs):
            if uni[i] is not None:
                steps.append(None)
                continue
            live = np.unique(np.concatenate((low[i], high[i], s_pts, s_qry)))
            steps.append((live, sf(t, live if base_idx is None else base_idx[live])) if live.size else None)
        for i, st in enumerate(steps):   # all objectives evaluated before any sum changes
            if uni[i] is not None:
                c_uni[i] = c_uni[i] + sensitivities[i]
            elif st is not None:
                C[st[0], i] += st[1]
        # shrink the sets (each test uses the other set as it was before this step)
        for i in range(m):
            u = uni[i]
            if u is not None:
                u.shrink(c_uni[i])
                continue
            p_idx, q_idx = low[i], high[i]
            if p_idx.size == 0 or q_idx.size == 0:
                low[i] = high[i] = everyone[:0]
                continue
            hp, lq = H(i, p_idx), L(i, q_idx)
            low[i] = p_idx[hp < lq.max()]
            high[i] = q_idx[lq > hp.min()]
        if s_pts.size and s_qry.size:
            keep_p = np.ones(s_pts.size, dtype=bool)
            keep_q = np.ones(s_qry.size, dtype=bool)
            for i in range(m):
                lp, hq = L(i, s_pts), H(i, s_qry)
                keep_p &= lp > hq.min()
                keep_q &= hq < lp.max()
            s_pts, s_qry = s_pts[keep_p], s_qry[keep_q]
        if s_pts.size == 0 or s_qry.size == 0:
            s_pts = s_qry = everyone[:0]
        if s_qry.size == 0 and all(empty(i) for i in range(m)):
            break
        left = [i for i in range(m) if not empty(i)]
        last = uni[left[0]] if len(left) == 1 else None
        if s_qry.size == 0 and last is not None:
            # one objective with the same C for all candidates left: the rest in blocks of distances
            i = left[0]
            _uniform_tail(last, c_uni[i] - sensitivities[i], sensitivities[i], t, sat, G)
            break
        # the terms of this distance
        for S in subsets:
            if any(empty(i) for i in S):
                continue
            q_idx = queries(S[0])
            for i in S[1:]:
                ui = uni[i]
                q_idx = q_idx[ui.in_queries(q_idx)] if ui is not None else \
                    np.intersect1d(q_idx, high[i], assume_unique=True)
            if q_idx.size == 0:
                continue
            sign = 1 if len(S) % 2 else -1
            if len(S) == 1:
                i = S[0]
                ui = uni[i]
                if ui is not None:
                    cnt = ui.count_below(c_uni[i], L(i, q_idx))
                else:
                    cnt = np.searchsorted(np.sort(H(i, low[i])), L(i, q_idx), side="left")
            else:
                p_idx = points(S[0])
                for i in S[1:]:
                    ui = uni[i]
                    p_idx = p_idx[ui.in_points(p_idx)] if ui is not None else \
                        np.intersect1d(p_idx, low[i], assume_unique=True)
                if p_idx.size == 0:
                    continue
                P = np.column_stack([-H(i, p_idx) for i in S])
                Q = np.column_stack([-L(i, q_idx) for i in S])
                cnt = count_with_orders(P, Q, True, "auto")[0]
            G[q_idx] += sign * cnt
        if s_qry.size and s_pts.size:
            P = np.column_stack([L(i, s_pts) for i in range(m)])
            Q = np.column_stack([H(i, s_qry) for i in range(m)])
            G[s_qry] += count_with_orders(P, Q, True, "auto")[0]
    return G.astype(np.float64)


def pareto_sensitivity(objectives: ArrayLike, sensitivity_functions: Sensitivities) -> SensitivityFunction:
    """The admissible sensitivity function δ^PS of the Pareto score (paper Def. 4.5, Thm 4.7).

    Built from one admissible sensitivity function per objective; its global sensitivity is n − 1.
    Evaluating it at distance t costs O(n log n) for m = 2 for all candidates (or a subset, via
    ``sf(t, candidates=idx)``); the running sums Σ_{j<=t} δ_i are kept between calls, so walking
    t = 0, 1, 2, ... (as the dampening loops do) costs one step each. They are kept **per thread**:
    one object may be shared by several threads (each gets exactly the values a private copy would
    give), provided the per-objective functions are thread-safe, as dpselect's own are.

    Parameters
    ----------
    objectives : array of shape (n, m)
        Objective values, one row per candidate (n >= 2).
    sensitivity_functions : list of SensitivityFunction or numbers
        δ_i for each objective (admissible under the data's neighbour model). A number is a global
        sensitivity Δu_i, used as the constant function δ_i = Δu_i.

    Returns
    -------
    SensitivityFunction
        δ^PS with ``global_sensitivity = n − 1``. When every δ_i is bounded (has a
        ``saturation_distance``), so is δ^PS (it reaches n − 1 for every candidate at a distance
        computed from the objectives' ranges), which shifted local dampening needs.

    Notes
    -----
    Comparisons are non-strict (paper Def. 4.5). δ^PS is admissible for PS under the neighbour model
    of the δ_i (paper Thm 4.7; re-checked exhaustively by the tests). Evaluated as
    #{r' : U^{+t}(r') >= U^{−t}(r)} − 1 − #{r' : U^{−t}(r') > U^{+t}(r)} (module docstring).

    Examples
    --------
    Paper Example 4.6: δ^PS(x, 0, b) = 1.

    >>> import numpy as np, dpselect
    >>> U = [[1, 1], [3, 3], [5, 5]]
    >>> d = [dpselect.SensitivityFunction(lambda t: np.array([0.5, 1.0, 1.5]), 1.5) for _ in range(2)]
    >>> pareto_sensitivity(U, d)(0).tolist()      # b: c may stop dominating it; c: b may come to dominate it
    [0.0, 1.0, 1.0]
    """
    M = _matrix(objectives, min_rows=2)
    n, m = M.shape
    sens = _check_sensitivities(sensitivity_functions, m, n, "sensitivity_functions")
    return _pareto_sf(M, _as_functions(sens, n), None)
