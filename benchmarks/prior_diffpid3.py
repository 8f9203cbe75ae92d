"""Benchmark baseline: DiffPID3 as it was before it used the core dampening engine (commit 2ef154c).

Kept only for benchmarks/bench_trees.py (time of the previous implementation in the same process).

DiffPID3: differentially private ID3 decision trees (thesis Ch. 7, Alg. 4) in three flavours.

* ``mechanism="global"`` — GlobalDiffPID3 (Friedman and Schuster 2010): the split attribute is chosen by
  the exponential mechanism on information gain IG with ΔIG = log2(N + 1) + 1/ln 2;
* ``mechanism="local"`` — LocalDiffPID3: local dampening with the element local sensitivity of IG
  (thesis Lemmas 7.3.1/7.3.2, see :mod:`dpselect.utilities.information_gain`);
* ``mechanism="shifted"`` — ShiftedLocalDiffPID3: shifted local dampening (direction
  "increasing": the sensitivity of IG grows with IG) with the same sensitivity function.

Alg. 4: with total budget B and depth d, every level gets ε = B / (2(d + 1)); a node spends ε on a noisy
count of its records and ε on either the split selection or the noisy class counts of a leaf. Nodes of
one level hold disjoint records (parallel composition), so the tree is B-DP (add/remove one record).
A node becomes a leaf when no attribute is left, the depth is exhausted, or
N_T / (t·|C|) < √2/2 with N_T the noisy count and t the largest number of values of a remaining
attribute; a leaf predicts argmax_c of noisy class counts (NoisyCount: Laplace noise of scale 1/ε).
Splits are multiway on discrete attributes (one child per value); numeric attributes (scaled to [0, 1])
are discretised into ``bins`` equal-width bins first. An attribute is used at most once on a path.

Public size bound: ΔIG and the saturation distance of the local sensitivity need a public bound N on
table sizes (``n_max``), the same for every node. The thesis writes ΔIG with "the size of the dataset"
and its experiments use the published sizes (NLTCS 21,574, ACS 47,461, Adult 45,222 records;
:data:`dpselect.datasets.PUBLIC_TABLE_SIZE`). A per-node size, or the training table's own size, would
itself be private: omitting ``n_max`` falls back to the training table's size with a
:class:`~dpselect.PrivacyLeakWarning`, and a table larger than ``n_max`` is a ``ValueError``.

Speed: local dampening needs D(x, A) at distances up to |IG| / δ (thousands on these tables) and the
shifted version sums Δ − δ over all distances below N. Both are evaluated here with the distance as a
numpy axis in chunks (:func:`dampen_ig`, :func:`ig_shift`), then sampled by the core's exponential
mechanism: identical to :func:`dpselect.local_dampening` / :func:`dpselect.shifted_local_dampening`
with :func:`~dpselect.utilities.information_gain.ig_sensitivity` (tests check equality), but
about 100x faster than walking t one Python step at a time.
"""
from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass

import numpy as np

from dpselect._rng import check_rng
from dpselect._validation import check_choice, check_int, check_positive
from dpselect.tabular import TabularData
from dpselect.utilities.information_gain import IGTables, ig_count_tables, ig_global_sensitivity, public_n_max

__all__ = [
    "DiffPID3Tree",
    "diffpid3",
    "discretise",
    "dampen_ig",
    "ig_shift",
    "MECHANISMS",
]

MECHANISMS = ("global", "local", "shifted")


def _old_local_sensitivity(self, t, attributes=None):
    """IGTables.local_sensitivity as it was (the previous formula, literally)."""
    from dpselect.utilities.information_gain import _f_table
    if attributes is None:
        a, b, starts = self.a, self.b, self.starts
    else:
        attributes = np.asarray(attributes, dtype=np.intp)
        sel = np.concatenate([np.arange(self.starts[i], self.starts[i] + self.tables[i].size) for i in attributes]) \
            if attributes.size else np.zeros(0, np.intp)
        a, b = self.a[sel], self.b[sel]
        sizes = np.array([self.tables[i].size for i in attributes], dtype=np.intp)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        if attributes.size == 0:
            return np.zeros(0)
    tt = np.asarray(t, dtype=np.int64)
    scalar = tt.ndim == 0
    tt = np.atleast_1d(tt)[:, None]
    ai = a.astype(np.int64)
    bi = b.astype(np.int64)
    F = _f_table(int(ai.max(initial=0)) + int(tt.max(initial=0)) + 2)
    ap = ai + tt
    v0 = np.where(bi >= 1, F[ap - 1] - F[np.maximum(bi - 1, 0)], F[ap])
    u_mid = np.minimum(np.maximum(bi - 1, 0), tt)
    v1 = np.where(bi >= 1, F[np.maximum(ai + tt - 2 * u_mid - 1, 0)] - F[np.maximum(bi - u_mid - 1, 0)], 0.0)
    cell = np.maximum(v0, v1)
    out = np.maximum.reduceat(cell, starts, axis=1)
    return out[0] if scalar else out


def discretise(data, bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of every column: categorical codes as they are, numeric [0, 1] values in ``bins`` bins.

    Returns ``(codes, n_values)``; bin k of a numeric column holds values in [k/b, (k+1)/b) (1 in the last).

    >>> from dpselect.tabular import load_table
    >>> codes, nv = discretise(load_table({"x": [0.0, 0.5, 1.0], "y": [0, 1, 1]}, "y", feature_bounds={"x": (0, 1)}),
    ...                        bins=2)
    >>> codes.ravel().tolist(), nv.tolist()
    ([0, 1, 1], [2])
    """
    b = check_int(bins, "bins", minimum=1)
    X = np.asarray(data.X, dtype=np.float64)
    cat = np.asarray(data.categorical, bool)
    codes = np.empty(X.shape, dtype=np.int64)
    codes[:, cat] = X[:, cat].astype(np.int64)
    codes[:, ~cat] = np.minimum(np.floor(X[:, ~cat] * b), b - 1).astype(np.int64)
    n_values = np.where(cat, np.asarray(data.n_values, np.int64), b)
    return codes, n_values


def _chunks(start: int, stop: int | None, first: int = 64, most: int = 4096):
    size = first
    t0 = start
    while stop is None or t0 < stop:
        t1 = t0 + size if stop is None else min(t0 + size, stop)
        yield t0, t1
        t0 = t1
        size = min(2 * size, most)


def _check_n_max(tables: IGTables, n_max) -> int:
    if n_max is None:
        raise TypeError("n_max is required: a public upper bound on the number of records")
    return public_n_max(tables.n_records, n_max, "n_max check")


def dampen_ig(tables: IGTables, n_max: int, utilities: np.ndarray | None = None) -> np.ndarray:
    """The dampening function D(T, A) of IG for every attribute, with δ = the IG sensitivity function.

    Equal to ``dpselect.dampening.dampen(u, ig_sensitivity(tables, n_max))``, computed with the distance t
    as an array axis (chunks of up to 4,096 distances) instead of one Python step per distance.
    """
    u = tables.utilities() if utilities is None else np.asarray(utilities, dtype=np.float64)
    n_max = _check_n_max(tables, n_max)
    delta_max = ig_global_sensitivity(n_max)
    mag = np.abs(u)
    out = np.zeros(u.shape[0])
    active = np.flatnonzero(mag > 0)
    b = np.zeros(active.size)
    for t0, t1 in _chunks(0, None):
        if not active.size:
            break
        if t0 >= n_max:  # saturated (bounded at N): every further step adds exactly Δ
            out[active] = t0 + (mag[active] - b) / delta_max
            break
        t1 = min(t1, n_max)
        d = np.minimum(_old_local_sensitivity(tables, np.arange(t0, t1), active), delta_max)  # (chunk, n_active)
        cum = b[None, :] + np.cumsum(d, axis=0)  # cum[i] = b(t0 + i + 1)
        inside = mag[active][None, :] < cum
        hit = inside.any(axis=0)
        if hit.any():
            i = inside.argmax(axis=0)[hit]
            cols = np.flatnonzero(hit)
            b_i = cum[i, cols] - d[i, cols]
            out[active[cols]] = t0 + i + (mag[active[cols]] - b_i) / d[i, cols]
        b = cum[-1, ~hit]
        active = active[~hit]
    return np.copysign(out, u)


def _ig_shift_direct(tables: IGTables, n_max: int, t_start: int = 0) -> np.ndarray:
    """Σ_{t_start <= t < N} (ΔIG − δ(T, t, A)) by evaluating every distance (reference, and the head)."""
    delta_max = ig_global_sensitivity(n_max)
    g = np.zeros(tables.n_attributes)
    for t0, t1 in _chunks(t_start, n_max, first=1024, most=8192):
        d = np.minimum(_old_local_sensitivity(tables, np.arange(t0, t1)), delta_max)
        g += (delta_max - d).sum(axis=0)
    return g


def ig_shift(tables: IGTables, n_max: int) -> np.ndarray:
    """G_A = Σ_{t < N} (ΔIG − δ(T, t, A)) for every attribute: the shift of shifted local dampening.

    Equal to ``dpselect.dampening.shift_totals(ig_sensitivity(tables, n_max), n)`` (tests), in
    time that grows with the node's size rather than with N:

    * distances t < T0 = max_cells(τ_jc) − 1 are evaluated directly;
    * from T0 on every cell is past its last removal, and its δ is the larger of f(t + a − 1) − f(b − 1)
      (b >= 1) or f(t + a) (b = 0), and f(t + a − 2b + 1) (b >= 1): every attribute's δ is the upper
      envelope of a few curves f(t + s) − c. For two curves with s_i > s_j the difference
      f(t + s_i) − f(t + s_j) does not increase with t (f is concave), so after dropping dominated curves
      the winner moves monotonically down the list sorted by s: the envelope is a few segments whose
      ends we find by binary search, and each segment's Σ (Δ − f(t + s) + c), cut where f(t + s) − c
      reaches Δ, is a difference of prefix sums of f.
    """
    n_max = _check_n_max(tables, n_max)
    delta_max = ig_global_sensitivity(n_max)
    a_all, b_all = tables.a.astype(np.int64), tables.b.astype(np.int64)
    t_head = int(min(max(int(b_all.max(initial=0)) - 1, 0), n_max))
    g = np.zeros(tables.n_attributes)
    if t_head > 0:
        for t0, t1 in _chunks(0, t_head, first=1024, most=8192):
            d = np.minimum(_old_local_sensitivity(tables, np.arange(t0, t1)), delta_max)
            g += (delta_max - d).sum(axis=0)
    if t_head >= n_max:
        return g
    F, P = _f_prefix(int(a_all.max(initial=0)) + n_max + 2)
    ends = np.append(tables.starts[1:], a_all.size)
    for k in range(tables.n_attributes):
        a = a_all[tables.starts[k]:ends[k]]
        b = b_all[tables.starts[k]:ends[k]]
        pos = b >= 1
        s0 = max(int(a[~pos].max(initial=-10 ** 12)), int((a[pos] - 2 * b[pos] + 1).max(initial=-10 ** 12)))
        curves = [(s0, 0.0)] + [(int(x) - 1, float(F[y - 1])) for x, y in zip(a[pos], b[pos])]
        g[k] += _envelope_tail(curves, t_head, n_max, delta_max, F, P)
    return g


_FP_CACHE: tuple = (np.zeros(0), np.zeros(1))


def _f_prefix(size: int) -> tuple[np.ndarray, np.ndarray]:
    """f(0..size-1) and its prefix sums P[i] = Σ_{x < i} f(x) (cached)."""
    global _FP_CACHE
    if _FP_CACHE[0].shape[0] < size:
        from dpselect.utilities.information_gain import _f_table
        F = _f_table(size).copy()
        _FP_CACHE = (F, np.concatenate([[0.0], np.cumsum(F)]))
    return _FP_CACHE


def _envelope_tail(curves, t_lo: int, t_hi: int, delta_max: float, F: np.ndarray, P: np.ndarray) -> float:
    """Σ_{t_lo <= t < t_hi} (Δ − min(Δ, max_k F[t + s_k] − c_k)) for curves (s_k, c_k)."""
    # keep the non-dominated curves: sorted by s descending, c strictly descending
    curves = sorted(set(curves), key=lambda sc: (-sc[0], sc[1]))
    kept = []
    for s_, c_ in curves:
        if not kept or c_ < kept[-1][1]:
            kept.append((s_, c_))
    total = 0.0
    w = 0
    t = t_lo
    while t < t_hi:
        s_w, c_w = kept[w]
        # the next curve to overtake the current winner, and when
        t_next, j_next = t_hi, None
        for j in range(w + 1, len(kept)):
            s_j, c_j = kept[j]
            lo, hi = t, t_next  # smallest t' in [t, t_next) with F[t'+s_j] - c_j >= F[t'+s_w] - c_w
            if F[hi - 1 + s_j] - c_j < F[hi - 1 + s_w] - c_w:
                continue
            while lo < hi:
                mid = (lo + hi) // 2
                if F[mid + s_j] - c_j >= F[mid + s_w] - c_w:
                    hi = mid
                else:
                    lo = mid + 1
            if lo < t_next or (lo == t_next and j_next is not None):
                t_next, j_next = lo, j
        # segment [t, t_next) follows curve w; it saturates (F[t + s_w] - c_w >= Δ) from t_sat on
        t_sat = int(np.searchsorted(F, delta_max + c_w, side="left")) - s_w
        end = min(t_next, max(t_sat, t))
        if end > t:
            total += (end - t) * (delta_max + c_w) - (P[end + s_w] - P[t + s_w])
        if t_sat <= t_next or j_next is None:
            break  # saturated: the envelope only grows, so every later term is 0
        t, w = t_next, j_next
    return total


@dataclass
class DiffPID3Tree:
    """A multiway decision tree on discretised attributes (arrays; children of a node are contiguous).

    ``feature[i]`` is the attribute split on (-1 at a leaf), the child for value v is
    ``first_child[i] + v``, ``label[i]`` the class of a leaf. ``bins`` and the column kinds say how
    numeric columns are discretised at prediction time.
    """

    feature: np.ndarray
    first_child: np.ndarray
    label: np.ndarray
    depth: int
    bins: int
    epsilon: float
    mechanism: str

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    def predict_codes(self, codes: np.ndarray) -> np.ndarray:
        """Classes of records given as discretised codes (n, p), routed level by level."""
        codes = np.asarray(codes, dtype=np.int64)
        n = codes.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        f0 = np.maximum(self.feature, 0)
        for _ in range(self.depth):
            f = self.feature[node]
            child = self.first_child[node] + codes[rows, f0[node]]
            node = np.where(f >= 0, child, node)
        return self.label[node].astype(np.int8)

    def predict(self, data) -> np.ndarray:
        """Classes of the records of a :class:`~dpselect.tabular.TabularData`."""
        codes, _ = discretise(data, self.bins)
        return self.predict_codes(codes)

    def accuracy(self, data) -> float:
        return float(np.mean(self.predict(data) == data.y))


def diffpid3(data, epsilon: float, depth: int, *, mechanism: str = "local", bins: int = 10,
             n_max: int | None = None, rng=None) -> DiffPID3Tree:
    """Build a DiffPID3 tree (thesis Alg. 4) with total budget ``epsilon`` (B-DP, add/remove one record).

    Parameters
    ----------
    data : TabularData
        Training table (binary class).
    epsilon : float
        Total privacy budget B; each of the d + 1 levels gets 2·B/(2(d + 1)).
    depth : int
        Maximum depth d (number of splits on a path).
    mechanism : {"global", "local", "shifted"}
        Split selection: exponential mechanism with ΔIG, local dampening with the element local
        sensitivity of IG, or shifted local dampening (direction "increasing").
    bins : int
        Equal-width bins for numeric attributes.
    n_max : int
        Public bound N >= the number of training records, chosen without looking at the data, for ΔIG
        and the saturation of the local sensitivity (thesis: the published dataset size,
        :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`). A larger table is a ``ValueError``. Omitted: the
        training table's size, with a :class:`~dpselect.PrivacyLeakWarning`.
    rng : Generator, int or None

    Returns
    -------
    DiffPID3Tree

    Examples
    --------
    >>> from dpselect.experiments import data_path
    >>> from dpselect.tabular import load_nltcs
    >>> d = load_nltcs(data_path("tabular", "nltcs.dat"))
    >>> tree = diffpid3(d, 1.0, 2, mechanism="local", n_max=21574, rng=0)
    >>> round(tree.accuracy(d), 2) > 0.5
    True
    """
    if not isinstance(data, TabularData):
        raise TypeError(f"data must be a dpselect.tabular.TabularData (load_table, load_nltcs, ...), "
                        f"got {type(data).__name__}")
    eps_total = check_positive(epsilon, "epsilon")
    d = check_int(depth, "depth", minimum=0)
    mech = check_choice(mechanism, "mechanism", MECHANISMS)
    n = data.n_records
    N = public_n_max(n, n_max, "diffpid3")
    gen = check_rng(rng)
    codes, n_values = discretise(data, bins)
    y = np.asarray(data.y, dtype=np.int64)
    n_classes = 2
    eps = eps_total / (2 * (d + 1))
    delta_ig = ig_global_sensitivity(N)
    from dpselect.mechanisms import exponential, report_noisy_max
    from dpselect.sampling import laplace_below

    feature: list[int] = [-1]
    first_child: list[int] = [-1]
    label: list[int] = [0]
    # queue of (node id, record indices, remaining attributes, remaining depth), breadth first
    queue = [(0, np.arange(n), list(range(codes.shape[1])), d)]
    while queue:
        nxt = []
        for node, rows, attrs, left in queue:
            t = max((int(n_values[a]) for a in attrs), default=1)
            # Stopping rule: (n + Laplace(1/ε)) / (t·C) < √2/2, released as one bit and sampled exactly
            # (threshold − n as an exact rational; no float Laplace variate, see dpselect.sampling).
            small = laplace_below(Fraction(math.sqrt(2) / 2 * t * n_classes) - rows.size, 1.0 / eps, gen)
            if not attrs or left == 0 or small:
                # Leaf label: argmax of the class counts + Laplace(1/ε) = report-noisy-max with Laplace
                # noise (counts move monotonically, Δ = 1), sampled exactly.
                counts = np.bincount(y[rows], minlength=n_classes).astype(np.float64)
                label[node] = int(report_noisy_max(counts, epsilon=eps, sensitivity=1.0, noise="laplace", monotonic=True,
                                                   rng=gen))
                continue
            tabs = IGTables(ig_count_tables(codes[rows][:, attrs], y[rows], n_values[attrs], n_classes))
            u = tabs.utilities()
            if mech == "global":
                pick = int(exponential(u, epsilon=eps, sensitivity=delta_ig, rng=gen))
            elif mech == "local":
                pick = int(exponential(dampen_ig(tabs, N, u), epsilon=eps, sensitivity=1.0, rng=gen))
            else:
                pick = int(exponential(u - ig_shift(tabs, N), epsilon=eps, sensitivity=delta_ig, rng=gen))
            a = attrs[pick]
            k = int(n_values[a])
            start = len(feature)
            feature[node] = a
            first_child[node] = start
            feature += [-1] * k
            first_child += [-1] * k
            label += [0] * k
            col = codes[rows, a]
            order = np.argsort(col, kind="stable")
            bounds = np.searchsorted(col[order], np.arange(k + 1))
            rest = [b for b in attrs if b != a]
            for v in range(k):
                nxt.append((start + v, rows[order[bounds[v]:bounds[v + 1]]], rest, left - 1))
        queue = nxt
    return DiffPID3Tree(np.array(feature, np.int64), np.array(first_child, np.int64), np.array(label, np.int8),
                        d, int(bins), eps_total, mech)

