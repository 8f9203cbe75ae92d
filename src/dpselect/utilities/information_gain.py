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
(tests/test_information_gain.py finds a violation with the bound kept). Instead of the cached candidate
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
    "ig_sensitivity_function",
    "ig_count_tables",
    "candidates_reference",
    "IGTables",
    "public_n_max",
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

    >>> round(ig_global_sensitivity(1000), 4)
    11.4099
    """
    n = check_int(n_max, "n_max", minimum=1)
    return math.log2(n + 1) + 1.0 / _LN2


class IGTables:
    """Count tables τ_jc of several attributes, flattened for vectorised evaluation.

    ``tables[i]`` is an int array of shape (n_values_i, n_classes). Attributes are the candidates.
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
        self.starts = np.concatenate([[0], np.cumsum([t.size for t in self.tables])[:-1]]).astype(np.intp)
        self.n_records = int(max(t.sum() for t in self.tables))

    def utilities(self) -> np.ndarray:
        """IG(T, A) = −Σ_jc τ_jc log2(τ_jc/τ_j) for every attribute."""
        a, b = self.a, self.b
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(b > 0, b * np.log2(np.where(b > 0, b, 1.0) / np.where(a > 0, a, 1.0)), 0.0)
        return np.add.reduceat(terms, self.starts)

    def local_sensitivity(self, t: int | np.ndarray, attributes: np.ndarray | None = None) -> np.ndarray:
        """δ(T, t, A) (module docstring) for every attribute (or the index array ``attributes``).

        ``t`` may be an array of distances of shape (m,): the result then has shape (m, n_attributes).
        """
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
        # u = 0: add t records of (j, c' != c)
        ap = ai + tt
        v0 = np.where(bi >= 1, F[ap - 1] - F[np.maximum(bi - 1, 0)], F[ap])
        # u = min(b - 1, t): remove u records of (j, c) and add t - u of (j, c' != c); for b >= 1 the removal
        # term f(a' - 1) - f(b' - 1) is the larger one (f concave). u = b (cell emptied of class c) gives
        # f(a + t - 2b) <= f(a + t - 2b + 1), the u = b - 1 value, so it never wins.
        u_mid = np.minimum(np.maximum(bi - 1, 0), tt)
        v1 = np.where(bi >= 1, F[np.maximum(ai + tt - 2 * u_mid - 1, 0)] - F[np.maximum(bi - u_mid - 1, 0)], 0.0)
        cell = np.maximum(v0, v1)
        out = np.maximum.reduceat(cell, starts, axis=1)
        return out[0] if scalar else out


def information_gain(tables: Sequence[np.ndarray]) -> np.ndarray:
    """IG(T, A) = −Σ_j Σ_c τ_jc·log2(τ_jc/τ_j) (thesis Eq. 7.2) of every attribute's count table.

    Parameters
    ----------
    tables : list of int arrays of shape (n_values, n_classes)
        ``tables[i][j, c]`` = number of records with attribute i = j and class c.

    >>> information_gain([np.array([[3, 0], [0, 3]]), np.array([[2, 1], [1, 2]])]).round(4).tolist()
    [0.0, -5.5098]
    """
    return IGTables(tables).utilities()


def ig_element_local_sensitivity(tables: Sequence[np.ndarray], t: int) -> np.ndarray:
    """δ(T, t, A) = max over tables within distance t of LS(T', 0, A), for every attribute (add/remove one record).

    >>> ig_element_local_sensitivity([np.array([[3, 0], [0, 3]])], 0).round(4).tolist()
    [3.2451]
    """
    return IGTables(tables).local_sensitivity(check_int(t, "t", minimum=0))


def public_n_max(n_records: int, n_max: int | None, where: str, *, stacklevel: int = 4) -> int:
    """The public bound N on table sizes: ``n_max`` checked against the table, or a fallback.

    Given: an int >= 1 at least the number of records (``ValueError`` naming ``n_max`` otherwise:
    a bound the table exceeds would give a ΔIG, and a saturation distance, that are too small).
    Omitted: the table's own size, with a :class:`~dpselect.PrivacyLeakWarning` (the size of the
    private table is itself private).
    """
    if n_max is None:
        n = max(int(n_records), 1)
        warn_public_from_data("n_max", n, where, stacklevel=stacklevel)
        return n
    n = check_int(n_max, "n_max", minimum=1)
    if n_records > n:
        raise ValueError(f"n_max must be a public upper bound on the number of records, got n_max={n} "
                         f"for a table of {int(n_records)} records")
    return n


def ig_sensitivity_function(tables: Sequence[np.ndarray], n_max: int | None = None) -> SensitivityFunction:
    """The admissible sensitivity function of IG (candidates = attributes) for local dampening.

    Parameters
    ----------
    tables : count tables, one per candidate attribute (see :func:`information_gain`).
    n_max : int
        Public bound N on the table size, chosen without looking at the table (the thesis uses the
        published size of each dataset, :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`); global
        sensitivity ΔIG = log2(N + 1) + 1/ln 2 and δ = ΔIG from distance N on (bounded, so shifted
        local dampening applies). A table of more than N records is a ``ValueError``. Omitted: the
        table's own size, with a :class:`~dpselect.PrivacyLeakWarning`.

    Returns
    -------
    SensitivityFunction
        Admissible for add/remove-one-record neighbours (verified exhaustively on tiny tables).

    >>> sf = ig_sensitivity_function([np.array([[30, 10], [5, 55]])], n_max=1000)
    >>> sf(0).round(4).tolist(), round(sf.global_sensitivity, 4)
    ([3.7279], 11.4099)
    """
    it = IGTables(tables)
    n = public_n_max(it.n_records, n_max, "ig_sensitivity_function")

    def delta(t, candidates=None):
        return it.local_sensitivity(t, candidates)

    sf = SensitivityFunction(delta, ig_global_sensitivity(n), n_candidates=it.n_attributes, name="ig_local")
    return sf.bounded(n)


def ig_count_tables(codes: np.ndarray, y: np.ndarray, n_values: Sequence[int], n_classes: int = 2) -> list[np.ndarray]:
    """Count tables τ_jc of every column of the integer matrix ``codes`` (n, p) against labels ``y``.

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


def candidates_reference(a: int, b: int, t: int, n_total: int | None = None) -> set[tuple[int, int]]:
    """The thesis' Candidates algorithm (Alg. 5) for one cell, literally (a reference for tests).

    ``n_total`` = τ reproduces the thesis' bound ``a < τ`` on additions; ``None`` drops it (our model).
    """
    cur = {(int(a), int(b))}
    for _ in range(t):
        nxt = set()
        for x, z in cur:
            if x > 0 and z > 0:
                nxt.add((x - 1, z - 1))
            if n_total is None or x < n_total:
                nxt.add((x + 1, z))
        cur = nxt
    return cur
