"""Fast, exact dominance counting: for each query q, how many points p satisfy p > q (or p >= q) in
**every** coordinate.

This is the work horse of the Pareto score and of δ^PS (:mod:`dpselect.multiobjective`). The paper's
own code counts with O(n²) Python loops; here everything is vectorised numpy:

* **m = 1**: one sort and ``searchsorted``, O(n log n).
* **Rank reduction**: each coordinate is replaced by integer ranks, so strict (``>``) and non-strict
  (``>=``) comparisons, ties included, both become ``rank_p >= key_q`` on integers. With ``v`` the sorted
  point values, ``rank_p = #{points < p}`` and ``key_q = #{points <= q}`` (strict) or ``#{points < q}``
  (non-strict); then ``p > q  <=>  rank_p >= key_q`` (resp. ``p >= q``) exactly.
* **m = 2**: points sorted by the first coordinate, so the points passing the first coordinate are a
  suffix; the second coordinate is a *range count* "how many values >= x in positions [s, e)", answered
  for all queries at once with a wavelet matrix (one stable partition and one prefix sum per bit; every
  query walks the bits in lock step). O((n + q) log n) after the sorts, no Python loop over points.
  The Pareto score's own case (points = queries, strict) is reduced to a permutation and counted by a
  bottom-up merge whose sort keys carry the counts (:func:`_smaller_before`), so numpy's sorts do the
  merging; with packed-key sorts in place of argsort this halved its time at n = 10^6.
* **m >= 3**: points in the order of the first coordinate (the points passing it are a suffix
  starting at s0(q)), cut into blocks of 2,048. In a block, every further coordinate has a table of
  bitsets (row t: the block's points at sorted positions >= t); a query ANDs one row per coordinate
  and counts the bits (``np.bitwise_count``; a byte table before numpy 2.0), O(n q m / 64) word
  operations. m = 4 uses this for all blocks up to ~1.2 * 10^5 points, m >= 5 up to ~2 * 10^5 *
  sqrt(m - 3); m = 3 (and larger inputs) only for the block holding s0(q), and counts the blocks
  after it by divide and conquer over the block index: at each bit of the block index one grouped
  (m − 1)-dimensional problem (m = 3: sort by one coordinate, range counts on the other with a
  wavelet matrix; m = 4: the same scheme once more inside each group, :func:`_count_grouped_3`:
  bitsets in the block holding the second coordinate's threshold, divide and conquer over the
  group's blocks after it; m >= 5: offline divide and conquer (CDQ) on the next coordinate,
  recursively), log2(n / 2048) levels instead of the log2(n + q) of a plain divide and conquer.
* Sorts of non-negative integer keys are radix sorts (:func:`_radix_argsort`: 16-bit passes, which
  numpy sorts by counting).
* Small inputs use blocked broadcasting (``method="blocked"``), which is faster below ~10^5
  comparisons (m >= 3).

All counts are exact (integer arithmetic after the rank reduction).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["count_dominating", "count_dominating_blocked", "count_with_orders"]

_METHODS = ("auto", "fast", "blocked")
#: ``method="auto"`` uses blocked broadcasting when n_points * n_queries is at most this times
#: :func:`_blocked_scale` (the crossovers measured with random points and self-queries against the bitset
#: counting, benchmarks/bench_pareto.py).
BLOCKED_LIMIT = 250_000


def _blocked_scale(m: int) -> float:
    """How many times BLOCKED_LIMIT blocked counting may compare for m coordinates (m >= 2)."""
    return 1.0 if m == 2 else 0.5


#: m >= 4 counts by bitsets alone (:func:`_count_bitset`, O(n n_q m / 64) word operations) while
#: n * n_q <= this * (m − 3), beyond by bitsets plus divide and conquer (:func:`_count_hybrid`, whose
#: (m − 1)-dimensional levels grow like log^(m − 2) n): the crossover measured at m = 4
#: (benchmarks/bench_pareto.py). For m = 3 the hybrid is faster at every size.
_BITSET_LIMIT = 50_000_000_000
#: m = 4: the hybrid's block levels count grouped 3-D problems by bitsets and block divide and conquer
#: (:func:`_count_grouped_3`), which moves the crossover down (to about 1.2 * 10^5 points, measured in CPU
#: time on self-queries while building it; benchmarks/bench_pareto.py times both sides of it).
_BITSET_LIMIT_4 = 15_000_000_000
#: Elements (query rows x point rows) per chunk of the blocked method.
_BLOCK_ELEMENTS = 1 << 22


def _as_2d(a, name: str) -> np.ndarray:
    raw = np.asarray(a)
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an (n, m) array of real numbers, got dtype {raw.dtype}")
    arr = raw.astype(np.float64, copy=False)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an (n, m) array, got shape {arr.shape}")
    if np.isnan(arr).any():  # ±inf order fine; NaN compares false both ways and would be miscounted
        raise ValueError(f"{name} must not contain NaN")   # where is private (objectives of the data): not named
    return arr


def count_dominating(points: ArrayLike, queries: ArrayLike | None = None, *, strict: bool = True,
                     method: str = "auto") -> np.ndarray:
    """For each query q, the number of points p with p_i > q_i (``strict``) or p_i >= q_i for every i.

    Parameters
    ----------
    points : array of shape (n, m)
    queries : array of shape (q, m), optional
        Defaults to ``points``. A point equal to a query is counted only when ``strict=False``.
    strict : bool
        Strict (``>``) or non-strict (``>=``) comparison, in every coordinate.
    method : {"auto", "fast", "blocked"}
        ``"fast"``: the O(n log n) algorithm (m = 2) / bitsets and divide and conquer (m >= 3);
        ``"blocked"``: chunked O(n q) broadcasting; ``"auto"`` picks blocked for small inputs.

    Returns
    -------
    int64 array of shape (q,)

    Examples
    --------
    >>> count_dominating([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]]).tolist()
    [0, 0, 1, 1, 4]
    >>> count_dominating([[1, 1], [2, 2]], [[1, 1]], strict=False).tolist()
    [2]
    """
    P = _as_2d(points, "points")
    Q = P if queries is None else _as_2d(queries, "queries")
    if P.shape[1] != Q.shape[1]:
        raise ValueError(f"points and queries must have the same number of columns, got {P.shape[1]} and {Q.shape[1]}")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(f"strict must be a bool, got {strict!r} ({type(strict).__name__})")
    return count_with_orders(P, Q, bool(strict), method)[0]


def count_with_orders(P: np.ndarray, Q: np.ndarray, strict: bool, method: str = "auto",
                      orders: list | None = None) -> tuple[np.ndarray, list | None]:
    """:func:`count_dominating` on validated float64 (n, m) arrays, reusing sort orders.

    ``orders`` (from an earlier call on nearly the same points, e.g. δ^PS at the previous distance)
    seeds the per-column sorts: a stable sort of nearly sorted data is close to linear. Returns the
    counts and the points' per-column orders for the next call (None where none were computed).

    Parameters
    ----------
    P : numpy.ndarray of float64, shape (n, m)
        The points, already validated (no checks here).
    Q : numpy.ndarray of float64, shape (q, m)
        The queries; pass ``P`` itself for self-queries (enables the O(n log n) path for m = 2).
    strict : bool
        Strict (``>``) or non-strict (``>=``) comparison, in every coordinate.
    method : {"auto", "fast", "blocked"}, default "auto"
        As in :func:`count_dominating`.
    orders : list of numpy.ndarray, optional
        Per-column orders of nearly the same points, from an earlier call.

    Returns
    -------
    (numpy.ndarray of int64, shape (q,), list or None)
        The counts, and the per-column orders of ``P`` (None when none were computed).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[3.0, 5.0], [5.0, 3.0], [4.0, 2.0], [2.0, 4.0], [1.0, 1.0]])
    >>> counts, orders = count_with_orders(P, P, True, "fast")
    >>> counts.tolist(), count_with_orders(P, P, True, "fast", orders)[0].tolist()
    ([0, 0, 1, 1, 4], [0, 0, 1, 1, 4])
    """
    n, m = P.shape
    nq = Q.shape[0]
    if n == 0 or nq == 0:
        return np.zeros(nq, dtype=np.int64), None
    if m == 1:
        v = np.sort(P[:, 0])
        return (n - np.searchsorted(v, Q[:, 0], side="right" if strict else "left")).astype(np.int64), None
    limit = BLOCKED_LIMIT * _blocked_scale(m)
    if method == "blocked" or (method == "auto" and n * nq <= limit):
        return count_dominating_blocked(P, Q, strict=strict), None
    if m == 2 and Q is P and strict and n < 2**31:
        return _count_2d_self(P)
    ranks, keys, orders = _rank_reduce(P, Q, strict, orders)
    if m == 2:
        counts = _count_2d(ranks[:, 0], ranks[:, 1], keys[:, 0], keys[:, 1], orders[0],
                           orders[0] if Q is P else None)
    elif n * nq <= (_BITSET_LIMIT_4 if m == 4 else _BITSET_LIMIT * (m - 3)):
        counts = _count_bitset(ranks, keys, orders[0])[0]
    else:
        counts = _count_hybrid(ranks, keys, orders[0])
    return counts, orders


def count_dominating_blocked(points: ArrayLike, queries: ArrayLike, *, strict: bool = True) -> np.ndarray:
    """The same counts as :func:`count_dominating` by chunked broadcasting: O(n q m) work, O(chunk) memory.

    Parameters
    ----------
    points : array-like, shape (n, m)
    queries : array-like, shape (q, m)
    strict : bool, default True
        Strict (``>``) or non-strict (``>=``) comparison, in every coordinate.

    Returns
    -------
    numpy.ndarray of int64, shape (q,)

    Examples
    --------
    >>> count_dominating_blocked([[3, 5], [5, 3], [4, 2]], [[4, 2], [0, 0]]).tolist()
    [1, 3]
    >>> count_dominating_blocked([[3, 5], [5, 3], [4, 2]], [[4, 2]], strict=False).tolist()
    [2]
    """
    P = _as_2d(points, "points")
    Q = _as_2d(queries, "queries")
    n, m = P.shape
    nq = Q.shape[0]
    out = np.empty(nq, dtype=np.int64)
    step = max(1, _BLOCK_ELEMENTS // max(1, n * m))
    PT = np.ascontiguousarray(P.T)
    for start in range(0, nq, step):
        block = Q[start:start + step]
        ok = (PT[0][None, :] > block[:, 0:1]) if strict else (PT[0][None, :] >= block[:, 0:1])
        for i in range(1, m):
            if strict:
                ok &= PT[i][None, :] > block[:, i:i + 1]
            else:
                ok &= PT[i][None, :] >= block[:, i:i + 1]
        out[start:start + step] = ok.sum(axis=1)
    return out


# -- rank reduction ------------------------------------------------------------------------------
def _rank_reduce(P: np.ndarray, Q: np.ndarray, strict: bool,
                 hints: list | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """Integer ranks of the points and keys of the queries with ``p > q (or >=) <=> rank >= key``,
    and the orders of the points by each coordinate (``hints``: earlier orders to start from)."""
    n, m = P.shape
    orders = []
    ranks = np.empty((n, m), dtype=np.int64)
    keys = np.empty((Q.shape[0], m), dtype=np.int64)
    same = Q is P
    for i in range(m):
        col = P[:, i]
        if hints is not None and hints[i] is not None and hints[i].shape == (n,):
            h = hints[i]
            order = h[np.argsort(col[h], kind="stable")]  # nearly sorted: timsort runs, ~linear
        else:
            order = np.argsort(col)
        orders.append(order)
        v = col[order]
        if same and n > 1 and not (v[1:] == v[:-1]).any():
            # no ties: rank = sorted position, #{points <= v_j} = position + 1
            pos = np.arange(n, dtype=np.int64)
            ranks[order, i] = pos
            keys[:, i] = ranks[:, i] + (1 if strict else 0)
            continue
        ranks[:, i] = _tie_rank(v, order)
        if same and not strict:
            keys[:, i] = ranks[:, i]
        elif same:
            # #{points <= v_j} = first position of the next tie group
            last = np.empty(n, dtype=bool)
            last[-1] = True
            np.not_equal(v[1:], v[:-1], out=last[:-1])
            nxt = np.where(last, np.arange(1, n + 1), n + 1)
            nxt = np.minimum.accumulate(nxt[::-1])[::-1]
            keys[order, i] = nxt
        else:
            keys[:, i] = np.searchsorted(v, Q[:, i], side="right" if strict else "left")
    return ranks, keys, orders


# -- range counting with a wavelet matrix ----------------------------------------------------------
def _range_count_ge(values: np.ndarray, s: np.ndarray, e: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For every query j: #{i in [s_j, e_j) : values[i] >= x_j}; values and x are integers >= 0.

    Wavelet matrix: for each bit from the top, the bit plane's prefix sums give how many elements of a
    position range go to the 0- and 1-side; the elements are then stably partitioned by that bit. A query
    whose bit is 0 counts the range's 1-side (all larger) and follows the 0-side; a query whose bit is 1
    follows the 1-side. What is left at the end equals x and is counted too (>=). Queries sorted by s
    make the prefix-sum lookups nearly sequential (much faster for large inputs).
    """
    n = values.size
    nq = x.size
    if n == 0 or nq == 0:
        return np.zeros(nq, dtype=np.int64)
    top = max(int(values.max()), int(x.max()), n)
    dt: type[np.signedinteger] = np.int32 if top < 2**31 - 2 else np.int64
    out: np.ndarray = np.zeros(nq, dtype=dt)
    A: np.ndarray = values.astype(dt, copy=True)
    s = s.astype(dt, copy=True)
    e = e.astype(dt, copy=True)
    x = x.astype(dt, copy=False)
    ones = np.zeros(n + 1, dtype=dt)
    for bit in range(max(int(values.max()), int(x.max())).bit_length() - 1, -1, -1):
        b = (A >> bit) & 1
        np.cumsum(b, out=ones[1:])
        z = n - int(ones[n])
        os_ = ones[s]
        oe = ones[e]
        xb = (x >> bit) & 1
        # branch-free: bit 0 -> count the 1-side, follow the 0-side; bit 1 -> follow the 1-side
        out += (oe - os_) * (1 - xb)
        s -= os_
        s += xb * (os_ + z - s)
        e -= oe
        e += xb * (oe + z - e)
        mask = b.astype(bool)
        A = np.concatenate((np.compress(~mask, A), np.compress(mask, A)))
    out += e - s
    return out.astype(np.int64)


#: int32 sort keys in :func:`_smaller_before` while position and count fit (tests switch it off to
#: exercise the int64-only path, which otherwise needs n > 2^25).
_NARROW_KEYS = True


def _smaller_before(inv: np.ndarray) -> np.ndarray:
    """For a permutation S of range(n) given by its inverse (``inv[v]`` = position of value v):
    ``#{j < i : S_j < S_i}`` for every position i, exactly.

    Every pair j < i with S_j < S_i is counted once, at the highest bit where S_j and S_i differ:

    * the lowest five bits directly, inside each block of 32 consecutive values (shifted comparisons);
    * every higher bit k by a bottom-up merge: the positions of each block of 2^(k+1) consecutive
      values are sorted, the upper half's entries flagged, and an upper entry gains the number of lower
      entries before it (values below it in its block that come earlier).

    The sort key packs position (high bits), running count and flag, so numpy's row sorts carry the
    counts along and no permutation is ever applied; after the last level the single row is in position
    order. Keys are int32 while position and count fit (half the memory traffic), then int64.
    """
    n = inv.size
    if n < 2:
        return np.zeros(n, dtype=np.int64)
    L = (n - 1).bit_length()  # positions and counts fit in L bits
    N = 1 << L
    B = min(32, N)
    M = -(-n // B) * B  # values padded to a multiple of B (the levels handle a short last row)
    narrow: type[np.signedinteger] = np.int32 if N <= 2**31 else np.int64  # less memory traffic
    X = np.empty(M, dtype=narrow)
    X[:n] = inv
    X[n:] = np.arange(n, M, dtype=narrow)  # padding values sit after every real position: never counted
    b = B.bit_length() - 1
    # comparisons on the transposed blocks (row d: the d-th value of every block): contiguous rows
    T = np.ascontiguousarray(X.reshape(-1, B).T)
    in_block = np.zeros(T.shape, dtype=np.int8)  # < 32
    for d in range(1, B):
        in_block[d:] += T[:-d] < T[d:]
    low_count = in_block.T.reshape(-1)
    cb = 30 - L if _NARROW_KEYS else 0  # count bits of an int32 key: position (L bits) + count + flag
    start = b
    if cb > b:
        start = min(L, cb)  # after level k every count is < 2^(k+1) <= 2^cb
        K32 = X << (cb + 1)
        K32 |= low_count.astype(np.int32) << 1
        K32.reshape(-1, B).sort(axis=1)
        K32 = _merge_levels(K32, b, start)
        if start == L:
            return ((K32[:n] >> 1) & np.int32((1 << cb) - 1)).astype(np.int64)
        # widen: position to the top bits of an int64 key, count and flag kept
        K = K32.astype(np.int64)
        low = K & np.int64((1 << (cb + 1)) - 1)
        K >>= cb + 1
        K <<= L + 1
        K |= low
    else:
        K = X.astype(np.int64) << (L + 1)
        K |= low_count.astype(np.int64) << 1
        K.reshape(-1, B).sort(axis=1)
    K = _merge_levels(K, start, L)
    return (K[:n] >> 1) & np.int64(N - 1)


def _merge_levels(K: np.ndarray, k0: int, k1: int) -> np.ndarray:
    """Levels k0 .. k1 − 1 of :func:`_smaller_before` on keys ``position | count | flag`` whose rows of
    2^k0 entries are sorted by position.

    The length of K need only be a multiple of 2^k0: at level k the entries after the last full row of
    2^(k+1) form a shorter row, merged the same way when it reaches past its lower half (else it is
    that lower half, already sorted)."""
    one = K.dtype.type(1)
    flag = np.empty_like(K)
    low = np.empty_like(K)
    run = np.empty_like(K)
    M = K.size
    for k in range(k0, k1):
        h = 1 << k
        full = M - M % (2 * h)
        if full:
            F, fl, lo, ru = K[:full], flag[:full], low[:full], run[:full]
            F.reshape(-1, 2, h)[:, 1, :] |= one
            # measured: numpy's default sort wins on short rows; from 128 entries up the stable sort
            # (timsort: one merge of the two sorted runs) does
            F.reshape(-1, 2 * h).sort(axis=1, kind="stable" if k >= 6 else None)  # in place: no fresh pages
            np.bitwise_and(F, one, out=fl)
            np.subtract(one, fl, out=lo)
            if h >= 64:
                np.cumsum(lo.reshape(-1, 2 * h), axis=1, out=ru.reshape(-1, 2 * h))
            else:  # short rows: one global running sum, made relative to each row's start
                np.cumsum(lo, out=ru)
                rows = ru.reshape(-1, 2 * h)
                rows -= (rows[:, 0] - lo[::2 * h])[:, None]
            np.multiply(ru, fl, out=ru)
            np.left_shift(ru, 1, out=ru)
            ru -= fl  # adds the count and clears the flag
            F += ru
        if M - full > h:  # the short last row: lower half complete, upper half partial
            T = K[full:]
            T[h:] |= one
            T.sort(kind="stable")
            f = T & one
            r = np.cumsum(one - f)
            r *= f
            r <<= 1
            r -= f
            T += r
    return K


def _count_2d_self(P: np.ndarray) -> tuple[np.ndarray, list]:
    """#{p : p > q in both coordinates} for every q in P itself (the Pareto score), O(n log n).

    Reduced to a permutation: with P-order = (first coordinate ascending, second descending) and
    Q-rank = (second ascending, P-order descending), p dominates q strictly iff p comes after q in
    both orders (ties in either coordinate are pushed to the side that does not count). The count for
    position i of a permutation S is then #{j > i : S_j > S_i} = (n − 1 − S_i) − (i − smaller_before_i).
    """
    n = P.shape[0]
    a = P[:, 0] + 0.0  # contiguous, and −0.0 becomes 0.0 (equal values must sort as ties)
    b = P[:, 1] + 0.0
    oa, ties_a = _argsort_float(a)
    ob, ties_b = _argsort_float(b)
    pos = np.arange(n, dtype=np.int64)
    at = np.empty(n, dtype=np.int64)
    if not (ties_a or ties_b):
        order = oa
        at[oa] = pos
        inv = at[ob]
    else:
        ra = _tie_rank(a[oa], oa)
        rb = _tie_rank(b[ob], ob)
        order = _argsort_pairs(ra, n - 1 - rb)
        at[order] = pos
        inv = at[_argsort_pairs(rb, n - 1 - at)]
    S = np.empty(n, dtype=np.int64)
    S[inv] = pos
    counts = np.empty(n, dtype=np.int64)
    counts[order] = (n - 1 - S) - pos + _smaller_before(inv)
    return counts, [oa, ob]


def _radix_argsort(keys: np.ndarray, bits: int) -> np.ndarray:
    """A stable ascending argsort of integer keys in [0, 2^bits) (uint64 or non-negative int64).

    Least significant digit first, 16 bits a pass: numpy's stable sort of uint16 keys is a counting
    (radix) sort, so each pass is linear, and a pass whose digit is the same for every key is skipped.
    Several times faster than a comparison sort of int64 keys (exact, ties kept in index order).
    """
    n = keys.size
    k = np.ascontiguousarray(keys)
    if k.dtype != np.uint64:
        k = k.astype(np.int64, copy=False).view(np.uint64)  # non-negative: the same bits
    order: np.ndarray | None = None
    digits = k.view(np.uint16).reshape(n, 4) if np.little_endian else None
    for d in range(-(-max(1, bits) // 16)):
        if digits is not None:
            dig = digits[:, d] if order is None else digits[order, d]
        else:  # pragma: no cover - big-endian hosts
            src = k if order is None else k[order]
            dig = ((src >> np.uint64(16 * d)) & np.uint64(0xFFFF)).astype(np.uint16)
        if n and (dig == dig[0]).all():
            continue
        o = np.argsort(dig, kind="stable")
        order = o if order is None else order[o]
    return np.arange(n, dtype=np.intp) if order is None else order


def _argsort_float(v: np.ndarray) -> tuple[np.ndarray, bool]:
    """An ascending argsort of float64 values without NaN, and whether any two are equal.

    numpy's argsort is several times slower than its sort, so the index is packed into the low bits of an
    order-preserving integer image of the value and the packed keys are sorted. Values that agree on
    the remaining high bits (ties, or values closer than the dropped bits) are then put in exact order
    by a lexsort of just those; when that concerns many values, plain argsort is used instead.
    """
    n = v.size
    L = max(1, (n - 1).bit_length())
    bits = v.view(np.int64)
    # float order as int64 order: a negative value's 63 low bits flipped (in place, no temporaries)
    keys = bits >> 63
    keys &= np.int64(0x7FFFFFFFFFFFFFFF)
    keys ^= bits
    keys >>= L
    keys <<= L
    keys |= np.arange(n, dtype=np.int64)
    keys.sort()
    idx = keys & np.int64((1 << L) - 1)
    hi = keys >> L
    same = hi[1:] == hi[:-1]
    if not same.any():
        return idx, False
    if same.sum() > n // 16:
        order = np.argsort(v)
        w = v[order]
        return order, bool((w[1:] == w[:-1]).any())
    member = np.zeros(n, dtype=bool)
    member[1:] = same
    member[:-1] |= same
    sel = np.flatnonzero(member)
    group = np.cumsum(np.concatenate(([True], ~same)))[sel]
    sub = idx[sel]
    sub = sub[np.lexsort((sub, v[sub], group))]
    idx[sel] = sub
    w = v[sub]
    g = group  # sorted, unchanged by the reordering within groups
    return idx, bool(((w[1:] == w[:-1]) & (g[1:] == g[:-1])).any())


def _argsort_pairs(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """Order of the pairs (major, minor) ascending, both int64 in [0, n): one sort of packed
    (major, minor, index) keys where they fit in 63 bits (faster than argsort)."""
    n = major.size
    L = max(1, (n - 1).bit_length())
    if 3 * L > 63:
        return np.argsort(major * n + minor)
    keys = np.sort((major << 2 * L) | (minor << L) | np.arange(n, dtype=np.int64))
    return keys & np.int64((1 << L) - 1)


def _argsort_nonneg(keys: np.ndarray) -> np.ndarray:
    """An ascending argsort of int64 keys >= 0, ties by index (a radix argsort)."""
    n = keys.size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    return _radix_argsort(keys, int(keys.max()).bit_length())


def _tie_rank(v: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rank of every point = #{points < it}, from its column's sorted values ``v`` and ``order``."""
    n = v.size
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(v[1:], v[:-1], out=first[1:])
    r = np.where(first, np.arange(n), 0)
    np.maximum.accumulate(r, out=r)
    out = np.empty(n, dtype=np.int64)
    out[order] = r
    return out


def _count_2d(pa: np.ndarray, pb: np.ndarray, qa: np.ndarray, qb: np.ndarray,
              order_p: np.ndarray | None = None, order_q: np.ndarray | None = None) -> np.ndarray:
    """#{p : pa >= qa and pb >= qb} for integer ranks/keys in [0, n] (one group).

    ``order_p`` (points by pa ascending) and ``order_q`` (queries by qa ascending) are reused when known.
    """
    n = pa.size
    nq = qa.size
    if order_p is None:
        order_p = np.argsort(pa, kind="stable")
    # points with pa >= qa are the suffix [s, n) of the sorted points, s = #{p : pa < qa}
    below = np.zeros(n + 2, dtype=np.int64)
    np.cumsum(np.bincount(pa, minlength=n + 1), out=below[1:])
    s = below[qa]
    if order_q is None and nq >= 1 << 16:
        order_q = np.argsort(s, kind="stable")  # sequential prefix-sum lookups in the wavelet walk
    if order_q is None:
        return _range_count_ge(pb[order_p], s, np.full(nq, n, dtype=np.int64), qb)
    out = np.empty(nq, dtype=np.int64)
    out[order_q] = _range_count_ge(pb[order_p], s[order_q], np.full(nq, n, dtype=np.int64), qb[order_q])
    return out


def _count_grouped(gp: np.ndarray, P: np.ndarray, gq: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """#{p in the query's group : p >= q in every coordinate}; integer coordinates >= 0, group ids >= 0."""
    nq = Q.shape[0]
    out = np.zeros(nq, dtype=np.int64)
    n, m = P.shape
    if n == 0 or nq == 0:
        return out
    if m == 1:
        K = int(max(P[:, 0].max(), Q[:, 0].max())) + 1
        kp = np.sort(gp * K + P[:, 0])
        return (np.searchsorted(kp, gq * K + K, side="left")
                - np.searchsorted(kp, gq * K + Q[:, 0], side="left")).astype(np.int64)
    if m == 2:
        return _count_grouped_2(gp, P[:, 0], P[:, 1], gq, Q[:, 0], Q[:, 1])
    # CDQ on the first coordinate: sort by (group, coordinate descending, points before queries) so that
    # every point preceding a query in its group has coordinate >= the query's.
    N = n + nq
    g = np.concatenate((gp, gq))
    c0 = np.concatenate((P[:, 0], Q[:, 0]))
    isq = np.concatenate((np.zeros(n, dtype=np.int8), np.ones(nq, dtype=np.int8)))
    order = np.lexsort((isq, -c0, g))
    g_s = g[order]
    isq_s = isq[order].astype(bool)
    first = np.empty(N, dtype=bool)
    first[0] = True
    np.not_equal(g_s[1:], g_s[:-1], out=first[1:])
    gstart = np.where(first, np.arange(N), 0)
    np.maximum.accumulate(gstart, out=gstart)
    pos = np.arange(N) - gstart
    rest = [np.concatenate((P[:, j], Q[:, j]))[order] for j in range(1, m)]  # contiguous columns
    qid = order - n  # query index for query rows
    max_size = int(pos.max()) + 1
    isp_s = ~isq_s
    level = 0
    while (1 << level) < max_size:
        half = ((pos >> level) & 1).astype(bool)
        newg = gstart + (pos >> (level + 1))
        selp = isp_s & ~half
        selq = isq_s & half
        if selp.any() and selq.any():
            gp_l, gq_l = np.compress(selp, newg), np.compress(selq, newg)
            if m == 3:
                cnt = _count_grouped_2(gp_l, np.compress(selp, rest[0]), np.compress(selp, rest[1]),
                                       gq_l, np.compress(selq, rest[0]), np.compress(selq, rest[1]))
            else:
                cnt = _count_grouped(gp_l, np.column_stack([np.compress(selp, c) for c in rest]),
                                     gq_l, np.column_stack([np.compress(selq, c) for c in rest]))
            out[np.compress(selq, qid)] += cnt
        level += 1
    return out


def _count_grouped_2(gp: np.ndarray, p0: np.ndarray, p1: np.ndarray,
                     gq: np.ndarray, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """#{p in the query's group : p0 >= q0 and p1 >= q1}; integers >= 0, group ids >= 0."""
    n, nq = p0.size, q0.size
    K = int(max(p0.max(), q0.max())) + 1
    kp = gp * K + p0
    L = max(1, (max(n, nq) - 1).bit_length(), int(p1.max()).bit_length())
    if int(kp.max()) < 1 << (63 - L) and int(gq.max()) * K + K < 1 << (63 - L):
        # points sorted with their second coordinate packed into the key: no gather afterwards
        packed = np.sort((kp << L) | p1)
        kp = packed >> L
        values = packed & np.int64((1 << L) - 1)
    else:
        order = np.argsort(kp, kind="stable")
        kp = kp[order]
        values = p1[order]
    # queries in key order: the searches and the wavelet walk's prefix-sum lookups then run
    # sequentially through memory (random order made them several times slower at 10^6 points)
    kq = gq * K + q0
    oq = _argsort_nonneg(kq)
    s = np.searchsorted(kp, kq[oq], side="left")
    e = np.searchsorted(kp, gq[oq] * K + K, side="left")
    out = np.empty(nq, dtype=np.int64)
    out[oq] = _range_count_ge(values, s, e, q1[oq])
    return out


# -- bitsets (m >= 3) ---------------------------------------------------------------------------
#: Points per block of the bitset counting (a multiple of 64; tests shrink it to exercise the block
#: boundaries on small inputs). 2,048 points: a block's tables are 0.5 MiB each (the fastest of 512 .. 4,096
#: at n = 10^4 and 10^5, m = 3 and 4).
_BITSET_BLOCK = 2048
_ALL_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_HAS_BITWISE_COUNT = hasattr(np, "bitwise_count")  # numpy >= 2.0
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
_SUFFIX_MASKS: dict = {}


def _suffix_masks(C: int) -> np.ndarray:
    """(C + 1, C / 64) words: row t has the bits t .. C − 1 set (bit j = bit j % 64 of word j // 64)."""
    M = _SUFFIX_MASKS.get(C)
    if M is None:
        t = np.arange(C + 1, dtype=np.int64)[:, None]
        w = np.arange(C // 64, dtype=np.int64)[None, :]
        part = _ALL_ONES << (t & 63).astype(np.uint64)
        M = np.where(w > (t >> 6), _ALL_ONES, np.where(w == (t >> 6), part, np.uint64(0))).astype(np.uint64)
        M.setflags(write=False)
        _SUFFIX_MASKS[C] = M
    return M


def _threshold_table(v: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Fill T (at least len(v) + 1 rows of words) so that its row t is the bitset of the points at
    positions >= t of v sorted ascending (bit j: point j); return v sorted. Row ``#{i : v_i < k}`` is
    then exactly {j : v_j >= k}."""
    c = v.size
    o = np.argsort(v, kind="stable")
    T = T[:c + 1]
    T.fill(0)
    T[np.arange(c), o >> 6] = np.uint64(1) << (o & 63).astype(np.uint64)
    np.bitwise_or.accumulate(T[::-1], axis=0, out=T[::-1])  # suffix unions, one word-OR per entry
    return v[o]


def _count_bitset(R: np.ndarray, K: np.ndarray, order0: np.ndarray | None = None, full: bool = True,
                  C: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """#{p : R[p] >= K[q] in every coordinate} by bitsets (integer ranks/keys in [0, n]).

    Points are put in the order of the first coordinate, so the points passing it are a suffix
    starting at ``s0(q)``, and cut into blocks of C points. For a block, every further coordinate i
    gets a table whose row t is the bitset of the block's points among the top (c − t) in coordinate i;
    a query reads row #{block points with R_i < K_i(q)} of each table, ANDs them (and, in the block
    holding s0(q), a suffix mask), and counts the bits. Work ~ n_q · n · (m − 1) / 64 word operations,
    O(C² / 64) memory per table.

    With ``full=False`` only the block holding s0(q) is counted (the caller counts the blocks after it).
    Returns the counts, s0, the query order by s0 and the points' order by the first coordinate.
    """
    n, m = R.shape
    nq = K.shape[0]
    C = _BITSET_BLOCK if C is None else C
    W = C // 64
    if order0 is None:
        order0 = _argsort_nonneg(R[:, 0])
    Rp = R[order0]
    below = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(R[:, 0], minlength=n)[:n], out=below[1:])
    s0 = below[K[:, 0]]  # points passing the first coordinate: sorted positions s0 .. n − 1
    oq = _argsort_nonneg(s0)
    s0s = s0[oq]
    Ks = [np.ascontiguousarray(K[oq, i]) for i in range(1, m)]
    M = _suffix_masks(C)
    ones = np.ones(W, dtype=np.float32)
    res = np.zeros(nq, dtype=np.int64)
    chunk = max(64, (1 << 18) // W)  # query rows per pass: ~2 MiB of words
    # buffers reused by every block (fresh multi-MiB arrays per block cost page faults)
    tabs = np.empty((m - 1, C + 1, W), dtype=np.uint64)
    acc = np.empty((chunk, W), dtype=np.uint64)
    tmp = np.empty((chunk, W), dtype=np.uint64)
    pc = np.empty((chunk, W), dtype=np.uint8)
    pcf = np.empty((chunk, W), dtype=np.float32)
    cum = np.zeros(n + 2, dtype=np.int32)
    for c0 in range(0, n, C):
        c1 = min(n, c0 + C)
        lo = int(np.searchsorted(s0s, c0, side="left"))  # queries before lo: the whole block passes
        hi = int(np.searchsorted(s0s, c1, side="left"))
        start = 0 if full else lo
        if hi <= start:
            continue
        idx = []
        for i in range(1, m):
            vs = _threshold_table(Rp[c0:c1, i], tabs[i - 1])
            keys = Ks[i - 1][start:hi]
            if hi - start < n // 8:
                idx.append(np.searchsorted(vs, keys, side="left"))
            else:  # many queries: a lookup table of #{block points with rank < k} is cheaper
                np.cumsum(np.bincount(vs, minlength=n + 1), out=cum[1:])
                idx.append(cum[keys])
        t0 = s0s[start:hi] - c0
        for a in range(0, hi - start, chunk):
            b = min(hi - start, a + chunk)
            r = b - a
            np.take(tabs[0], idx[0][a:b], axis=0, out=acc[:r])
            for i in range(1, m - 1):
                np.take(tabs[i], idx[i][a:b], axis=0, out=tmp[:r])
                np.bitwise_and(acc[:r], tmp[:r], out=acc[:r])
            mlo = max(a, lo - start)  # rows from here hold s0 inside this block: mask the suffix
            if mlo < b:
                acc[mlo - a:r] &= M[t0[mlo:b]]
            # per-row bit counts <= C: exact in float32, and a matrix-vector product sums fastest
            if _HAS_BITWISE_COUNT:
                np.bitwise_count(acc[:r], out=pc[:r])
                np.copyto(pcf[:r], pc[:r])
                res[start + a:start + b] += (pcf[:r] @ ones).astype(np.int64)
            else:  # numpy < 2.0: bit counts of the bytes from a table
                res[start + a:start + b] += _POPCOUNT8[acc[:r].view(np.uint8)].sum(axis=1, dtype=np.int64)
    out = np.empty(nq, dtype=np.int64)
    out[oq] = res
    return out, s0, oq, order0


def _count_hybrid(R: np.ndarray, K: np.ndarray, order0: np.ndarray | None = None,
                  C: int | None = None) -> np.ndarray:
    """#{p : R[p] >= K[q] in every coordinate} (m >= 3): bitsets inside the block holding s0(q)
    (:func:`_count_bitset`), divide and conquer over the block index for the blocks after it.

    A point in block b' > b(q) passes the first coordinate; the pair is counted once, at the highest
    bit l where b' and b(q) differ (b' has it set): one grouped (m − 1)-dimensional count per bit of
    the block index, log2(n / C) of them instead of log2(n + n_q) levels of the plain divide and
    conquer, whose lower levels the bitsets replace.
    """
    n, m = R.shape
    C = _BITSET_BLOCK if C is None else C
    counts, s0, _, order0 = _count_bitset(R, K, order0, full=False, C=C)
    nbl = -(-n // C)
    if nbl < 2:
        return counts
    Rp = R[order0]
    blockp = np.arange(n, dtype=np.int64) // C
    bq = s0 // C
    if m == 3:
        q = np.flatnonzero(bq < nbl - 1)  # queries with blocks after theirs
        if q.size:
            a, b = np.ascontiguousarray(Rp[:, 1]), np.ascontiguousarray(Rp[:, 2])
            counts[q] += _count_block_levels_2(blockp, a, b, bq[q], K[q, 1], K[q, 2], nbl)
        return counts
    has_after = bq < nbl - 1
    for level in range((nbl - 1).bit_length()):
        selp = ((blockp >> level) & 1).astype(bool)
        selq = has_after & (((bq >> level) & 1) == 0)
        if not (selp.any() and selq.any()):
            continue
        gp = np.compress(selp, blockp) >> (level + 1)
        gq = np.compress(selq, bq) >> (level + 1)
        Pl = np.compress(selp, Rp[:, 1:], axis=0)
        Ql = np.compress(selq, K[:, 1:], axis=0)
        if m == 4:
            cnt = _count_grouped_3(gp, Pl, gq, Ql, C)
        else:
            cnt = _count_grouped(gp, Pl, gq, Ql)
        counts[selq] += cnt
    return counts


def _count_grouped_3(gp: np.ndarray, P: np.ndarray, gq: np.ndarray, Q: np.ndarray, C: int) -> np.ndarray:
    """#{p in the query's group : p >= q in all three coordinates} (integers >= 0, group ids >= 0):
    the grouped form of :func:`_count_hybrid` for m = 3.

    The points are put in (group, first coordinate) order; those of a query's group passing the first
    coordinate are the range [s(q), e(q)) to the end of its group. Each group's points are cut into
    blocks of C (a group's last block may be shorter; blocks never straddle groups). The block holding
    s(q) is counted by bitsets (tables on the second and third coordinates, a suffix mask from s(q));
    the later blocks of the group by divide and conquer over the block index within the group: at its
    bit l, the points of blocks with that bit set count for the queries whose block lacks it and agrees
    above l, a grouped two-dimensional count (:func:`_count_grouped_2`). The pairs the plain divide
    and conquer (:func:`_count_grouped`) would count over log2(group size) levels are counted over
    log2(group size / C) levels and one bitset pass.
    """
    nq = Q.shape[0]
    out = np.zeros(nq, dtype=np.int64)
    n = P.shape[0]
    if n == 0 or nq == 0:
        return out
    G = int(max(gp.max(), gq.max())) + 1
    K0 = int(max(P[:, 0].max(), Q[:, 0].max())) + 1
    key = gp * K0 + P[:, 0]
    op = _argsort_nonneg(key)
    key = key[op]
    g_s = gp[op]
    c1 = np.ascontiguousarray(P[op, 1])
    c2 = np.ascontiguousarray(P[op, 2])
    size = np.bincount(gp, minlength=G)
    start = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(size, out=start[1:])
    nblk = -(-size // C)  # blocks per group
    boff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(nblk, out=boff[1:])
    # queries: first passing position, and the block holding it (only queries with points left)
    s = np.searchsorted(key, gq * K0 + Q[:, 0], side="left")
    live = s < start[gq + 1]
    qi = np.flatnonzero(live)
    if qi.size == 0:
        return out
    gl = gq[qi]
    ls = s[qi] - start[gl]  # local position in the group
    lb = ls // C  # local block
    # -- the block holding s(q): bitsets --------------------------------------------------------
    bid = boff[gl] + lb
    oq = _argsort_nonneg(bid)
    bid_s = bid[oq]
    t0 = (ls - lb * C)[oq]
    q1 = Q[qi, 1]
    q2 = Q[qi, 2]
    k1 = q1[oq]
    k2 = q2[oq]
    W = C // 64
    M = _suffix_masks(C)
    ones = np.ones(W, dtype=np.float32)
    res = np.zeros(qi.size, dtype=np.int64)
    tabs = np.empty((2, C + 1, W), dtype=np.uint64)
    chunk = max(64, (1 << 18) // W)
    acc = np.empty((chunk, W), dtype=np.uint64)
    pc = np.empty((chunk, W), dtype=np.uint8)
    pcf = np.empty((chunk, W), dtype=np.float32)
    used = np.flatnonzero(np.diff(bid_s, prepend=-1))  # first query of each block in use
    ends = np.append(used[1:], bid_s.size)
    # block -> (group, local block) for the blocks in use
    blk = bid_s[used]
    grp = np.searchsorted(boff, blk, side="right") - 1
    b0 = start[grp] + (blk - boff[grp]) * C
    b1 = np.minimum(b0 + C, start[grp + 1])
    for j in range(used.size):
        lo, hi, p0, p1 = int(used[j]), int(ends[j]), int(b0[j]), int(b1[j])
        v1 = _threshold_table(c1[p0:p1], tabs[0])
        v2 = _threshold_table(c2[p0:p1], tabs[1])
        i1 = np.searchsorted(v1, k1[lo:hi], side="left")
        i2 = np.searchsorted(v2, k2[lo:hi], side="left")
        for a in range(lo, hi, chunk):
            b = min(hi, a + chunk)
            r = b - a
            np.take(tabs[0], i1[a - lo:b - lo], axis=0, out=acc[:r])
            acc[:r] &= tabs[1][i2[a - lo:b - lo]]
            acc[:r] &= M[t0[a:b]]
            if _HAS_BITWISE_COUNT:
                np.bitwise_count(acc[:r], out=pc[:r])
                np.copyto(pcf[:r], pc[:r])
                res[a:b] = (pcf[:r] @ ones).astype(np.int64)
            else:
                res[a:b] = _POPCOUNT8[acc[:r].view(np.uint8)].sum(axis=1, dtype=np.int64)
    cnt = np.empty(qi.size, dtype=np.int64)
    cnt[oq] = res
    # -- the later blocks of the group: divide and conquer over the local block index --------------
    lbp = (np.arange(n, dtype=np.int64) - start[g_s]) // C
    hib = int(nblk.max()) - 1
    for level in range(hib.bit_length()):
        selp = ((lbp >> level) & 1).astype(bool)
        selq = ((lb >> level) & 1) == 0
        if not (selp.any() and selq.any()):
            continue
        gpl = boff[np.compress(selp, g_s)] + (np.compress(selp, lbp) >> (level + 1))
        gql = boff[np.compress(selq, gl)] + (np.compress(selq, lb) >> (level + 1))
        cnt[selq] += _count_grouped_2(gpl, np.compress(selp, c1), np.compress(selp, c2),
                                      gql, np.compress(selq, q1), np.compress(selq, q2))
    out[qi] = cnt
    return out


def _stable_group_order(g: np.ndarray) -> np.ndarray:
    """A stable argsort of small group ids g >= 0: numpy's stable sort is a radix sort for 16-bit
    keys (linear, several times faster than sorting packed int64 keys)."""
    if int(g.max()) < 1 << 16:
        return np.argsort(g.astype(np.uint16), kind="stable")
    return np.argsort(g, kind="stable")


def _count_block_levels_2(blockp: np.ndarray, a: np.ndarray, b: np.ndarray, bq: np.ndarray,
                          ka: np.ndarray, kb: np.ndarray, nbl: int) -> np.ndarray:
    """#{p : blockp[p] > bq, a_p >= ka, b_p >= kb} for every query (integers >= 0; blockp ascending).

    At the bit l of the block index, the points with that bit set count for the queries without it
    whose block index agrees above l (group = index >> (l + 1)): a grouped two-dimensional count.
    Points and queries are sorted by their first value once; each level reorders them stably by group
    (a radix sort) so that every group's points are in ascending a, and its queries in ascending ka.
    """
    nq = ka.size
    out = np.zeros(nq, dtype=np.int64)
    pa = _argsort_nonneg(a)  # points by a
    qa = _argsort_nonneg(ka)  # queries by ka
    bpa = blockp[pa]
    bqa = bq[qa]
    K = max(int(a.max()), int(ka.max())) + 1
    for level in range((nbl - 1).bit_length()):
        selp = ((bpa >> level) & 1).astype(bool)
        selq = ((bqa >> level) & 1) == 0
        if not (selp.any() and selq.any()):
            continue
        gp = np.compress(selp, bpa) >> (level + 1)
        o = _stable_group_order(gp)
        ip = np.compress(selp, pa)[o]
        gp = gp[o]
        gq = np.compress(selq, bqa) >> (level + 1)
        o = _stable_group_order(gq)
        iq = np.compress(selq, qa)[o]
        gq = gq[o]
        kp = gp * K + a[ip]  # ascending
        s = np.searchsorted(kp, gq * K + ka[iq], side="left")
        e = np.searchsorted(kp, gq * K + K, side="left")
        out[iq] += _range_count_ge(b[ip], s, e, kb[iq])
    return out
