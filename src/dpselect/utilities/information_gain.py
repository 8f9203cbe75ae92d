"""Information gain (IG) of split attributes, its global sensitivity and its element local sensitivity.

Thesis Ch. 7 (DiffPID3). For a table T with class C and a discrete attribute A (values j, classes c,
counts τ_j = |{r : r_A = j}| and τ_jc = |{r : r_A = j, r_C = c}|), the utility of splitting on A is
(thesis Eq. 7.2, logarithms base 2)

    IG(T, A) = −τ·H_{C|A}(T) = −Σ_j Σ_c τ_jc · log2(τ_jc / τ_j)      (<= 0; 0 log 0 = 0).

Neighbour model: **add/remove one record** (the model of the thesis' sensitivity proofs). One record
changes exactly one cell (j, c) of each attribute's count table.

Global sensitivity (Friedman and Schuster 2010): ΔIG = log2(N + 1) + 1/ln 2 for tables of at most N
records.

Element local sensitivity (thesis Lemma 7.3.1). With f(x) = (x+1)·log2(x+1) − x·log2(x) (f(0) = 0),
adding a record in cell (j, c) changes IG by f(τ_j) − f(τ_jc) in absolute value and removing one by
f(τ_j − 1) − f(τ_jc − 1) (possible only when τ_jc >= 1). The thesis writes the removal term as
g(τ_jc) − g(τ_j) with g(x) = x·log((x−1)/x) − log(x−1); that is the same number, since g(x) = −f(x − 1).
So LS(T, 0, A) = max_{j,c} h(τ_j, τ_jc) with h(a, b) = max(f(a) − f(b), [b >= 1]·(f(a−1) − f(b−1))).

At distance t (thesis Lemma 7.3.2 / Alg. 5). h grows with e = a − b (the records of cell j in other
classes) and shrinks with b (f is increasing and concave), so among the tables within distance t the
largest h of a cell is reached by removing u records of (j, c) and adding t − u records of (j, c' != c):

    δ(T, t, A) = max_{j, c} max_{0 <= u <= min(b, t)} h(a + t − 2u, b − u).

This is what the Candidates algorithm (Alg. 5) enumerates (moves (a−1, b−1) and (a+1, b)), with one
correction: Alg. 5 only allows the addition when a < τ, a bound that does not exist under add/remove
neighbours (a table can grow), so we drop it; keeping it under-estimates δ and breaks admissibility
(a brute-force admissibility check finds a violation with the bound kept). Instead of the cached candidate
sets (O(t) pairs per cell at distance t) we evaluate the inner maximum at its end points u = 0,
u = min(b − 1, t) and u = b (when b <= t): along u the value is quasi-convex (checked exhaustively
against the full enumeration for a < 80, t < 60 in the tests), which makes every distance O(1) per cell.
This δ is the exact element local sensitivity max_{d(T, T') <= t} LS(T', 0, A), hence admissible
(thesis Lemma 3.2.1); :func:`dpselect.audit.check_admissibility` confirms it on all tiny tables.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._validation import check_int
from ..exceptions import warn_public_from_data
from ..sensitivity import SensitivityFunction

__all__ = [
    "information_gain",
    "ig_global_sensitivity",
    "ig_element_local_sensitivity",
    "ig_sensitivity",
    "ig_count_tables",
    "IGTables",
    "public_n_max",
    "ig_shift_with_error",
]

_LN2 = math.log(2.0)


def _f(x: np.ndarray) -> np.ndarray:
    """f(x) = (x+1)·log2(x+1) − x·log2(x) for integer x >= 0 (0 for x <= 0)."""
    x = np.asarray(x, dtype=np.float64)
    xp = np.maximum(x, 0.0)
    out = (xp + 1.0) * np.log2(xp + 1.0) - xp * np.log2(np.where(xp > 0, xp, 1.0))
    return np.where(x > 0, out, 0.0)


_F_CACHE = np.zeros(0)


def _f_table(size: int) -> np.ndarray:
    """f(0), f(1), ..., f(size - 1) (cached, grown by doubling)."""
    global _F_CACHE
    if _F_CACHE.shape[0] < size:
        _F_CACHE = _f(np.arange(max(size, 2 * _F_CACHE.shape[0], 1024), dtype=np.float64))
    return _F_CACHE


def _h(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest |IG change| of one record added to or removed from a cell with τ_j = a, τ_jc = b."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    add = _f(a) - _f(b)
    rem = np.where(b >= 1, _f(a - 1) - _f(b - 1), -np.inf)
    return np.maximum(add, rem)


def ig_global_sensitivity(n_max: int) -> float:
    """ΔIG = log2(N + 1) + 1/ln 2 for tables of at most ``n_max`` = N records (add/remove one record).

    The global sensitivity of :func:`information_gain` (Friedman and Schuster 2010).

    Parameters
    ----------
    n_max : int
        N >= 1, a *public* bound on the number of records.

    Returns
    -------
    float
        ΔIG.

    Examples
    --------
    >>> round(ig_global_sensitivity(1000), 4)
    11.4099
    """
    n = check_int(n_max, "n_max", minimum=1)
    return math.log2(n + 1) + 1.0 / _LN2


def _cell_sensitivity(ai: np.ndarray, bi: np.ndarray, tt: np.ndarray) -> np.ndarray:
    """max_{0 <= u <= min(b, t)} h(a + t − 2u, b − u) of cells (a, b) at distances t (broadcast together)."""
    F = _f_table(int(np.max(ai, initial=0)) + int(np.max(tt, initial=0)) + 2)
    # u = 0: add t records of (j, c' != c)
    ap = ai + tt
    pos = bi >= 1
    bm = np.maximum(bi - 1, 0)
    v0 = np.where(pos, F[ap - 1] - F[bm], F[ap])
    # u = min(b - 1, t): remove u records of (j, c) and add t - u of (j, c' != c); for b >= 1 the removal
    # term f(a' - 1) - f(b' - 1) is the larger one (f concave). u = b (cell emptied of class c) gives
    # f(a + t - 2b) <= f(a + t - 2b + 1), the u = b - 1 value, so it never wins.
    u_mid = np.minimum(bm, tt)
    v1 = np.where(pos, F[np.maximum(ap - 2 * u_mid - 1, 0)] - F[np.maximum(bm - u_mid, 0)], 0.0)
    return np.maximum(v0, v1)


class IGTables:
    """Count tables τ_jc of several attributes, flattened for vectorised evaluation.

    Attributes are the candidates. Used by :func:`information_gain`, :func:`ig_element_local_sensitivity`,
    :func:`ig_sensitivity` and :func:`ig_shift_with_error`; build it once to evaluate several
    distances without re-flattening.

    Parameters
    ----------
    tables : sequence of int arrays of shape (n_values_i, n_classes_i)
        ``tables[i][j, c]`` = number of records with attribute i = j and class c (n_values_i >= 1,
        n_classes_i >= 2, counts >= 0).

    Attributes
    ----------
    tables : list of ndarray
        The tables, int64.
    n_attributes : int
        The number of attributes (candidates).
    n_records : int
        The largest table total (the number of records).

    Raises
    ------
    ValueError
        ``tables`` is empty, or a table has the wrong shape or a non-integer or negative count.

    Examples
    --------
    >>> it = IGTables([np.array([[3, 0], [0, 3]]), np.array([[2, 1], [1, 2]])])
    >>> it.n_attributes, it.n_records, it.utilities().round(4).tolist()
    (2, 6, [0.0, -5.5098])
    """

    def __init__(self, tables: Sequence[np.ndarray]) -> None:
        tabs = [np.asarray(t) for t in tables]
        if not tabs:
            raise ValueError("need at least one attribute (count table)")
        for i, t in enumerate(tabs):
            if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2:
                raise ValueError(f"tables[{i}] must have shape (n_values >= 1, n_classes >= 2), got {t.shape}")
            if not np.issubdtype(t.dtype, np.integer) or (t < 0).any():
                raise ValueError(f"tables[{i}] must hold non-negative integer counts")
        self.tables = [t.astype(np.int64) for t in tabs]
        self.n_attributes = len(tabs)
        cell_b = np.concatenate([t.ravel() for t in self.tables]).astype(np.float64)
        cell_a = np.concatenate([np.repeat(t.sum(axis=1), t.shape[1]) for t in self.tables]).astype(np.float64)
        self.a, self.b = cell_a, cell_b
        self.owner = np.concatenate([np.full(t.size, i) for i, t in enumerate(self.tables)])
        self.sizes = np.array([t.size for t in self.tables], dtype=np.intp)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.intp)
        self.n_records = int(max(t.sum() for t in self.tables))
        self._ai, self._bi = cell_a.astype(np.int64), cell_b.astype(np.int64)
        self._cell_cache: dict = {}

    def utilities(self) -> np.ndarray:
        """IG(T, A) = −Σ_jc τ_jc log2(τ_jc/τ_j) for every attribute.

        Returns
        -------
        ndarray of shape (n_attributes,)
            The information gains (<= 0), float64.

        Examples
        --------
        >>> IGTables([np.array([[2, 1], [1, 2]])]).utilities().round(4).tolist()
        [-5.5098]
        """
        a, b = self.a, self.b
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(b > 0, b * np.log2(np.where(b > 0, b, 1.0) / np.where(a > 0, a, 1.0)), 0.0)
        return np.add.reduceat(terms, self.starts)

    def _cells(self, attributes: np.ndarray) -> tuple:
        """For the attributes ``attributes``: their cells' per-cell constants (concatenated, as (cells, 1)
        columns) and where each attribute's cells start; cached per attribute set (the dampening walks ask
        for the same unresolved set many times)."""
        key = attributes.tobytes()
        hit = self._cell_cache.get(key)
        if hit is not None:
            return hit
        sizes = self.sizes[attributes]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        cells = np.arange(int(sizes.sum()), dtype=np.intp) + np.repeat(self.starts[attributes] - offsets, sizes)
        a, b = self._ai[cells], self._bi[cells]
        pos = (b >= 1).astype(np.int64)
        bm = b - pos
        # δ of a cell is max(f(t + s0) − c0, f(i1) − f(j1)) (module docstring: u = 0 and u = min(b − 1, t));
        # s0 = a − 1, c0 = f(b − 1) for b >= 1; s0 = a, c0 = 0 for b = 0 (then the second term equals the first)
        out = (offsets, (a - pos)[:, None], (a - 2 * bm - pos)[:, None], bm[:, None], pos.astype(np.float64)[:, None],
               int(bm.max(initial=0)), int(a.max(initial=0)))
        if len(self._cell_cache) > 256:
            self._cell_cache.clear()
        self._cell_cache[key] = out
        return out

    def _block(self, attributes: np.ndarray, T: np.ndarray) -> np.ndarray:
        """δ at the distances T (shape (1, m): shared by all cells, or (n_cells, m)) of ``attributes``:
        shape (len(attributes), m). The same float operations as :func:`_cell_sensitivity`, in fewer passes."""
        offsets, s0, s1, bm, pos, bm_max, a_max = self._cells(attributes)
        F = _f_table(a_max + int(T.max(initial=0)) + 2)
        v0 = F[s0 + T] - F[bm] * pos
        if T.size and int(T.min()) >= bm_max:
            # every cell is past its last removal (t >= b − 1): u = b − 1, i1 = t + a − 2b + 1, j1 = 0
            vals = np.maximum(v0, F[s1 + T])
        else:
            u = np.minimum(bm, T)
            vals = np.maximum(v0, F[s0 + T - 2 * u] - F[bm - u])
        return np.maximum.reduceat(vals, offsets, axis=0)

    def local_sensitivity(self, t: int | np.ndarray, attributes: np.ndarray | None = None) -> np.ndarray:
        """δ(T, t, A) (module docstring) for every attribute (or the index array ``attributes``).

        Parameters
        ----------
        t : int or ndarray of int of shape (m,)
            The distance(s), >= 0 (not validated).
        attributes : ndarray of int, optional
            The attribute indices to evaluate (default: all).

        Returns
        -------
        ndarray
            Shape (n_selected,) for a scalar ``t``; shape (m, n_selected) for an array of m distances.

        Examples
        --------
        >>> it = IGTables([np.array([[3, 0], [0, 3]]), np.array([[2, 1], [1, 2]])])
        >>> it.local_sensitivity(0).round(4).tolist()
        [3.2451, 2.7549]
        >>> it.local_sensitivity(np.array([0, 1, 2]), np.array([1])).shape
        (3, 1)
        """
        att = np.arange(self.n_attributes) if attributes is None else np.asarray(attributes, dtype=np.intp)
        tt = np.asarray(t, dtype=np.int64)
        scalar = tt.ndim == 0
        if att.size == 0:
            return np.zeros(0) if scalar else np.zeros((tt.size, 0))
        out = self._block(att, np.atleast_1d(tt)[None, :])
        return out[:, 0] if scalar else out.T

    def local_sensitivity_at(self, ts: np.ndarray, attributes: np.ndarray) -> np.ndarray:
        """δ(T, ts[i], attributes[i]) elementwise (``ts`` and ``attributes`` int arrays of one shape).

        This is the ``elementwise`` form the dampening engine's block walkers use (many distances of
        many attributes in one call). Their layout (runs of equal length L, one attribute each) is
        evaluated as one (cells, L) block; any other layout expands every pair to its attribute's cells.
        Either way one vectorised pass and a segmented maximum.

        Parameters
        ----------
        ts : ndarray of int
            The distances, >= 0 (not validated).
        attributes : ndarray of int
            The attribute index of each distance (same shape as ``ts``).

        Returns
        -------
        ndarray of shape (ts.size,)
            The values δ(T, ts[i], attributes[i]), float64 (flattened).

        Examples
        --------
        >>> it = IGTables([np.array([[3, 0], [0, 3]]), np.array([[2, 1], [1, 2]])])
        >>> it.local_sensitivity_at(np.array([0, 0, 1]), np.array([0, 1, 1])).round(4).tolist()
        [3.2451, 2.7549, 3.2451]
        """
        ts = np.asarray(ts, dtype=np.int64).ravel()
        att = np.asarray(attributes, dtype=np.intp).ravel()
        if att.size == 0:
            return np.zeros(0)
        runs = np.flatnonzero(att[1:] != att[:-1]) + 1
        L = int(runs[0]) if runs.size else att.size
        if att.size % L == 0 and L > 1:
            A = att.reshape(-1, L)
            if (A == A[:, :1]).all():
                Ts = ts.reshape(-1, L)
                att1 = np.ascontiguousarray(A[:, 0])
                T = Ts[:1] if (Ts == Ts[:1]).all() else Ts[np.repeat(np.arange(A.shape[0]), self.sizes[att1])]
                return self._block(att1, T).ravel()
        sizes = self.sizes[att]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        cells = np.arange(int(sizes.sum()), dtype=np.intp) + np.repeat(self.starts[att] - offsets, sizes)
        return np.maximum.reduceat(_cell_sensitivity(self._ai[cells], self._bi[cells], np.repeat(ts, sizes)), offsets)


def information_gain(tables: Sequence[np.ndarray]) -> np.ndarray:
    """IG(T, A) = −Σ_j Σ_c τ_jc·log2(τ_jc/τ_j) (thesis Eq. 7.2) of every attribute's count table.

    The utility DiffPID3 selects split attributes with (candidates = attributes); global sensitivity
    :func:`ig_global_sensitivity`, admissible sensitivity function :func:`ig_sensitivity`
    (add/remove one record).

    Parameters
    ----------
    tables : list of int arrays of shape (n_values, n_classes)
        ``tables[i][j, c]`` = number of records with attribute i = j and class c.

    Returns
    -------
    ndarray of shape (n_attributes,)
        The information gains (<= 0; 0 for an attribute that determines the class), float64.

    Examples
    --------
    >>> information_gain([np.array([[3, 0], [0, 3]]), np.array([[2, 1], [1, 2]])]).round(4).tolist()
    [0.0, -5.5098]
    """
    return IGTables(tables).utilities()


def ig_element_local_sensitivity(tables: Sequence[np.ndarray], t: int) -> np.ndarray:
    """δ(T, t, A) = max over tables within distance t of LS(T', 0, A), for every attribute (add/remove one record).

    Parameters
    ----------
    tables : list of int arrays of shape (n_values, n_classes)
        One count table per attribute (see :func:`information_gain`).
    t : int
        The distance, >= 0.

    Returns
    -------
    ndarray of shape (n_attributes,)
        The element local sensitivities at distance ``t``, float64.

    Examples
    --------
    >>> ig_element_local_sensitivity([np.array([[3, 0], [0, 3]])], 0).round(4).tolist()
    [3.2451]
    """
    return IGTables(tables).local_sensitivity(check_int(t, "t", minimum=0))


def public_n_max(n_records: int, n_max: int | None, where: str, *, stacklevel: int = 4) -> int:
    """The public bound N on table sizes: ``n_max`` checked against the table, or a fallback.

    Parameters
    ----------
    n_records : int
        The number of records of the private table.
    n_max : int or None
        Given: an int >= 1 at least the number of records (``ValueError`` naming ``n_max`` otherwise:
        a bound the table exceeds would give a ΔIG, and a saturation distance, that are too small).
        None: the table's own size, with a :class:`~dpselect.PrivacyLeakWarning` (the size of the
        private table is itself private).
    where : str
        The public function asking (named in the warning).
    stacklevel : int, default 4
        Keyword-only; passed to :func:`~dpselect.exceptions.warn_public_from_data`.

    Returns
    -------
    int
        N >= 1.

    Raises
    ------
    ValueError
        ``n_max`` is not an int >= 1, or is smaller than ``n_records``.

    Examples
    --------
    >>> public_n_max(120, 1000, "example")
    1000
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     n = public_n_max(120, None, "example")
    >>> n, w[0].category.__name__
    (120, 'PrivacyLeakWarning')
    """
    if n_max is None:
        n = max(int(n_records), 1)
        warn_public_from_data("n_max", n, where, stacklevel=stacklevel)
        return n
    n = check_int(n_max, "n_max", minimum=1)
    if n_records > n:
        # the number of records is private (add/remove-one): the message names the public bound only
        raise ValueError(f"n_max must be a public upper bound on the number of records, got n_max={n}: the "
                         "table has more records")
    return n


def ig_sensitivity(tables: "Sequence[np.ndarray] | IGTables", n_max: int | None = None) -> SensitivityFunction:
    """The admissible sensitivity function of IG (candidates = attributes) for local dampening.

    Parameters
    ----------
    tables : sequence of int arrays or IGTables
        Count tables, one per candidate attribute (see :func:`information_gain`), or an
        :class:`IGTables` of them.
    n_max : int, optional
        Public bound N on the table size, chosen without looking at the table (the thesis uses the
        published size of each dataset, :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`); global
        sensitivity ΔIG = log2(N + 1) + 1/ln 2 and δ = ΔIG from distance N on (bounded, so shifted
        local dampening applies). A table of more than N records is a ``ValueError``. Omitted: the
        table's own size, with a :class:`~dpselect.PrivacyLeakWarning`.

    Returns
    -------
    SensitivityFunction
        Admissible for add/remove-one-record neighbours (verified exhaustively on tiny tables); values of
        shape (n_attributes,). Vectorised over the attributes and ``elementwise`` (many distances of many
        attributes per call, :meth:`IGTables.local_sensitivity_at`), so the dampening engine's block walkers
        (:func:`dpselect.dampening.dampen_with_error`, :func:`~dpselect.dampening.shift_totals_with_error`)
        evaluate it in a few calls; saturation distance N.

    Raises
    ------
    ValueError
        ``n_max`` is not an int >= 1 or is below the number of records; a table is malformed.

    Examples
    --------
    >>> sf = ig_sensitivity([np.array([[30, 10], [5, 55]])], n_max=1000)
    >>> sf(0).round(4).tolist(), round(sf.global_sensitivity, 4)
    ([3.7279], 11.4099)
    """
    it = tables if isinstance(tables, IGTables) else IGTables(tables)
    n = public_n_max(it.n_records, n_max, "ig_sensitivity")

    def delta(t, candidates=None):
        if candidates is not None and np.ndim(t) > 0:   # elementwise: δ(T, t[i], candidates[i])
            return it.local_sensitivity_at(t, candidates)
        return it.local_sensitivity(t, candidates)

    # bounded at N (thesis Def. 3.2.2): δ = ΔIG from distance N on, as SensitivityFunction.bounded(N) does
    return SensitivityFunction(delta, ig_global_sensitivity(n), n_candidates=it.n_attributes,
                               saturation_distance=n, name="bounded(ig_local)", elementwise=True)


def _chunks(start: int, stop: int, first: int = 1024, most: int = 8192):
    """Consecutive ranges [t0, t1) covering [start, stop), of doubling size up to ``most``."""
    size, t0 = first, start
    while t0 < stop:
        t1 = min(t0 + size, stop)
        yield t0, t1
        t0, size = t1, min(2 * size, most)


_U = 2.0 ** -53   # unit roundoff of float64


def ig_shift_with_error(tables: IGTables, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """``(G, err)``: the shift G_A = Σ_t (ΔIG − δ(T, t, A)) of every attribute, and a rigorous bound
    err >= |G − G_exact| with G_exact the value :func:`dpselect.dampening.shift_total_exact` gives for
    :func:`ig_sensitivity` (the sum in exact rational arithmetic of the float δ values, sticky
    saturation at ΔIG).

    Parameters
    ----------
    tables : IGTables
        The count tables of the candidate attributes.
    n_max : int
        The public bound N on the number of records (required, no fallback).

    Returns
    -------
    G : ndarray of shape (n_attributes,)
        The shifts, float64.
    err : ndarray of shape (n_attributes,)
        Rigorous bounds on |G − G_exact|.

    Raises
    ------
    TypeError
        ``tables`` is not an :class:`IGTables`, or ``n_max`` is None.

    Notes
    -----
    For shifted local dampening on IG: :func:`dpselect.mechanisms.shifted_select` samples exactly from
    ``(G, err)`` and asks the core for G_exact only at near-ties. The same numbers as the core engine's
    :func:`dpselect.dampening.shift_totals_with_error` (tests: within the two bounds) in time that grows
    with the node's size rather than with N (the core walks every distance up to the saturation at
    about N − |T|; docs/trees.md has the timings):

    * distances t < T0 = max_cells(τ_jc) − 1 are evaluated directly (saturation kept sticky, as in the
      core);
    * from T0 on every cell is past its last removal, and its δ is the larger of f(t + a − 1) − f(b − 1)
      (b >= 1) or f(t + a) (b = 0), and f(t + a − 2b + 1) (b >= 1): every attribute's δ is the upper
      envelope of a few curves f(t + s) − c. For two curves with s_i > s_j the difference
      f(t + s_i) − f(t + s_j) does not increase with t (f is concave), so after dropping dominated curves
      the winner moves monotonically down the list sorted by s: the envelope is a few segments whose
      ends we find by binary search, and each segment's Σ (Δ − f(t + s) + c), cut where f(t + s) − c
      reaches Δ, is a difference of prefix sums of f.

    Error bound (u = 2^-53): the head is a float sum of n terms fl(Δ − δ) >= 0, within (n + 2)·2u of
    its value relative. In the tail, every term the envelope implies differs from the term the
    sensitivity function gives by at most the rounding of fl(f(x) − c) (u·Δ), or, where the float
    comparisons of the binary searches or of the saturation cut are ambiguous (two curves, or a curve
    and Δ, within a few ulps), by 4u·(F_max + c_max + Δ) with F_max the largest f used: 12u·(F_max +
    c_max + Δ) per term (and two more terms for a saturation cut one step off) covers both. The prefix
    sums P[i] (a sequential cumsum of i nonnegative terms) are within 2u·i·P[i]; each segment's
    remaining three operations and the accumulation add 2u of their magnitudes.

    Examples
    --------
    >>> G, err = ig_shift_with_error(IGTables([np.array([[30, 10], [5, 55]])]), 1000)
    >>> G.round(4).tolist(), bool(0 < err[0] < 1e-8)
    ([1162.6146], True)
    """
    if not isinstance(tables, IGTables):
        raise TypeError(f"tables must be an IGTables, got {type(tables).__name__}")
    if n_max is None:
        raise TypeError("n_max is required: a public upper bound on the number of records")
    n_max = public_n_max(tables.n_records, n_max, "ig_shift_with_error")
    sensitivity = ig_global_sensitivity(n_max)
    a_all, b_all = tables.a.astype(np.int64), tables.b.astype(np.int64)
    t_head = int(min(max(int(b_all.max(initial=0)) - 1, 0), n_max))
    n_attr = tables.n_attributes
    g = np.zeros(n_attr)
    sat = np.zeros(n_attr, dtype=bool)
    n_terms = np.zeros(n_attr)
    if t_head > 0:
        for t0, t1 in _chunks(0, t_head):
            d = np.minimum(tables.local_sensitivity(np.arange(t0, t1)), sensitivity)   # (chunk, n_attr)
            s = np.logical_or.accumulate(d >= sensitivity, axis=0) | sat[None, :]      # sticky saturation
            g += np.where(s, 0.0, sensitivity - d).sum(axis=0)
            n_terms += (~s).sum(axis=0)
            sat = s[-1]
    err = 2.0 * _U * (n_terms + 2.0) * g
    if t_head >= n_max:
        return g, err * (1.0 + 4 * _U)
    F, P = _f_prefix(int(a_all.max(initial=0)) + n_max + 2)
    ends = np.append(tables.starts[1:], a_all.size)
    for k in range(n_attr):
        if sat[k]:
            continue
        a = a_all[tables.starts[k]:ends[k]]
        b = b_all[tables.starts[k]:ends[k]]
        pos = b >= 1
        s0 = max(int(a[~pos].max(initial=-10 ** 12)), int((a[pos] - 2 * b[pos] + 1).max(initial=-10 ** 12)))
        curves = [(s0, 0.0)] + [(int(x) - 1, float(F[y - 1])) for x, y in zip(a[pos], b[pos])]
        tail, tail_err = _envelope_tail(curves, t_head, n_max, sensitivity, F, P)
        gk = g[k] + tail
        err[k] += tail_err + 2.0 * _U * abs(gk)
        g[k] = gk
    return g, err * (1.0 + 4 * _U)


_FP_CACHE: tuple = (np.zeros(0), np.zeros(1))


def _f_prefix(size: int) -> tuple[np.ndarray, np.ndarray]:
    """f(0..size-1) and its prefix sums P[i] = Σ_{x < i} f(x) (a sequential cumsum; cached)."""
    global _FP_CACHE
    F = _f_table(size)   # the very array the sensitivity function reads (regrown by doubling)
    if _FP_CACHE[0] is not F:
        _FP_CACHE = (F, np.concatenate([[0.0], np.cumsum(F)]))
    return _FP_CACHE


def _envelope_tail(curves, t_lo: int, t_hi: int, sensitivity: float, F: np.ndarray,
                   P: np.ndarray) -> tuple[float, float]:
    """Σ_{t_lo <= t < t_hi} (Δ − min(Δ, max_k F[t + s_k] − c_k)) for curves (s_k, c_k), cut at the first
    saturation, and a bound on its distance to the sum of the float terms (see :func:`ig_shift_with_error`)."""
    # keep the non-dominated curves: sorted by s descending, c strictly descending
    curves = sorted(set(curves), key=lambda sc: (-sc[0], sc[1]))
    kept: list[tuple[int, float]] = []
    for s_, c_ in curves:
        if not kept or c_ < kept[-1][1]:
            kept.append((s_, c_))
    c_max = max(c for _, c in kept)
    total = 0.0
    err = 0.0
    n_terms = 0
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
        t_sat = int(np.searchsorted(F, sensitivity + c_w, side="left")) - s_w
        end = min(t_next, max(t_sat, t))
        if end > t:
            hi_i, lo_i = end + s_w, t + s_w
            seg = (end - t) * (sensitivity + c_w) - (P[hi_i] - P[lo_i])
            total += seg
            n_terms += end - t
            err += (2 * _U * (hi_i * P[hi_i] + lo_i * P[lo_i]) + 4 * _U * (end - t) * (sensitivity + c_w)
                    + 2 * _U * (abs(seg) + abs(total)))
        if t_sat <= t_next or j_next is None:
            break  # saturated: the envelope only grows, so every later term is 0
        t, w = t_next, j_next
    f_max = float(F[min(t_hi + max(s for s, _ in kept), F.shape[0] - 1)])
    err += (n_terms + 2) * 12 * _U * (f_max + c_max + sensitivity)   # + 2: a saturation cut one step off
    return total, err


def ig_count_tables(codes: np.ndarray, y: np.ndarray, n_values: Sequence[int], n_classes: int = 2) -> list[np.ndarray]:
    """Count tables τ_jc of every column of the integer matrix ``codes`` (n, p) against labels ``y``.

    Parameters
    ----------
    codes : ndarray of int, shape (n_records, n_attributes)
        The attribute values, coded 0 .. n_values[i] − 1 in column i.
    y : ndarray of int, shape (n_records,)
        The class labels, coded 0 .. n_classes − 1.
    n_values : sequence of int
        The number of values of each attribute (the rows of its table).
    n_classes : int, default 2
        The number of classes (the columns of every table).

    Returns
    -------
    list of ndarray of shape (n_values[i], n_classes)
        One int64 count table per attribute, as :func:`information_gain` takes them.

    Examples
    --------
    >>> ig_count_tables(np.array([[0], [1], [1]]), np.array([0, 1, 0]), [2])[0].tolist()
    [[1, 0], [1, 1]]
    """
    codes = np.asarray(codes)
    y = np.asarray(y, dtype=np.int64)
    out = []
    for i, k in enumerate(n_values):
        idx = codes[:, i].astype(np.int64) * n_classes + y
        out.append(np.bincount(idx, minlength=int(k) * n_classes).reshape(int(k), n_classes))
    return out
