"""Exact dominance counting (dpselect._dominance) against brute force, ties included."""
from __future__ import annotations

import numpy as np
import pytest

from dpselect._dominance import _range_count_ge, count_dominating, count_dominating_blocked, count_with_orders


def brute(P, Q, strict):
    P = np.asarray(P, float)
    Q = np.asarray(Q, float)
    cmp = (P[None, :, :] > Q[:, None, :]) if strict else (P[None, :, :] >= Q[:, None, :])
    return cmp.all(axis=2).sum(axis=1)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_random_integer_inputs_with_ties_match_brute_force(m):
    rng = np.random.default_rng(100 + m)
    trials = {1: 400, 2: 400, 3: 250, 4: 120}[m]
    for _ in range(trials):
        n = int(rng.integers(1, 40))
        hi = int(rng.integers(1, 6))  # few distinct values: many ties
        P = rng.integers(0, hi, (n, m)).astype(float)
        same = rng.random() < 0.5
        Q = P if same else rng.integers(-1, hi + 1, (int(rng.integers(1, 40)), m)).astype(float)
        for strict in (True, False):
            ref = brute(P, Q, strict)
            got = count_dominating(P, None if same else Q, strict=strict, method="fast")
            np.testing.assert_array_equal(got, ref)
            assert got.dtype == np.int64


@pytest.mark.parametrize("m", [2, 3])
def test_larger_inputs_fast_equals_blocked(m):
    rng = np.random.default_rng(7)
    n = 3000
    P = rng.integers(0, 30, (n, m)).astype(float)
    Q = rng.integers(0, 30, (1500, m)).astype(float) + 0.5 * rng.integers(0, 2, (1500, m))
    for strict in (True, False):
        np.testing.assert_array_equal(count_dominating(P, Q, strict=strict, method="fast"),
                                      count_dominating_blocked(P, Q, strict=strict))
        np.testing.assert_array_equal(count_dominating(P, strict=strict, method="fast"),
                                      count_dominating_blocked(P, P, strict=strict))


def test_continuous_values_and_signed_zero():
    rng = np.random.default_rng(3)
    P = rng.normal(size=(500, 2))
    P[:50] = 0.0
    P[50:100, 0] = -0.0  # -0.0 == 0.0: a tie, never a domination
    for strict in (True, False):
        np.testing.assert_array_equal(count_dominating(P, strict=strict, method="fast"), brute(P, P, strict))


def test_known_small_cases():
    # Paper Example 4.4: numbers of candidates dominating a, b, c, d, e
    U = [[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]]
    assert count_dominating(U, method="fast").tolist() == [0, 0, 1, 1, 4]
    assert count_dominating(U, method="blocked").tolist() == [0, 0, 1, 1, 4]
    # equal points never dominate each other strictly, but count non-strictly (itself included)
    assert count_dominating([[1, 1]] * 3, method="fast").tolist() == [0, 0, 0]
    assert count_dominating([[1, 1]] * 3, strict=False, method="fast").tolist() == [3, 3, 3]
    # a tie in one objective prevents domination
    assert count_dominating([[1, 5], [1, 9]], method="fast").tolist() == [0, 0]
    # one objective
    assert count_dominating([3, 1, 3, 2]).tolist() == [0, 3, 0, 2]


def test_range_count_ge_matches_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        vals = rng.integers(0, int(rng.integers(1, 70)), n)
        q = int(rng.integers(1, 30))
        s = rng.integers(0, n + 1, q)
        e = np.minimum(n, s + rng.integers(0, n + 1, q))
        x = rng.integers(0, 80, q)
        ref = [int((vals[a:b] >= xx).sum()) for a, b, xx in zip(s, e, x)]
        assert _range_count_ge(vals, s, e, x).tolist() == ref


def test_empty_and_bad_input():
    assert count_dominating(np.zeros((0, 2)), np.zeros((3, 2))).tolist() == [0, 0, 0]
    assert count_dominating(np.zeros((4, 2)), np.zeros((0, 2))).shape == (0,)
    with pytest.raises(ValueError, match="same number of columns"):
        count_dominating(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="method must be one of"):
        count_dominating(np.zeros((3, 2)), method="quick")
    with pytest.raises(ValueError, match="must be an \\(n, m\\) array"):
        count_dominating(np.zeros((2, 2, 2)))


@pytest.mark.parametrize("m", [2, 3])
def test_reused_sort_orders_give_the_same_counts(m):
    # δ^PS passes the previous step's orders as hints; any permutation must give exact counts
    rng = np.random.default_rng(9)
    P = rng.integers(0, 50, (2000, m)).astype(float)
    orders = None
    for step in range(4):
        P = P + rng.integers(0, 3, P.shape) * 0.5  # points move a little, like U ± cumulative δ
        Q = P[rng.choice(2000, 700, replace=False)] - 0.5
        for strict in (True, False):
            got, new_orders = count_with_orders(P, Q, strict, "fast", orders)
            np.testing.assert_array_equal(got, brute(P, Q, strict))
        orders = new_orders
        assert all(np.array_equal(np.sort(o), np.arange(2000)) for o in orders)
    shuffled = [rng.permutation(2000) for _ in range(m)]  # arbitrary hints are fine too
    np.testing.assert_array_equal(count_with_orders(P, P, True, "fast", shuffled)[0], brute(P, P, True))


# -- the Pareto score's own case (m = 2, points = queries, strict): merge counting on a permutation ----
def _smaller_before_brute(S):
    S = np.asarray(S)
    return np.array([(S[:i] < S[i]).sum() for i in range(S.size)], dtype=np.int64)


@pytest.mark.parametrize("narrow", [True, False])
def test_smaller_before_matches_brute_force_at_every_size_boundary(monkeypatch, narrow):
    import dpselect._dominance as dom

    monkeypatch.setattr(dom, "_NARROW_KEYS", narrow)
    rng = np.random.default_rng(31)
    for n in [0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1024, 1025]:
        S = rng.permutation(n)
        inv = np.argsort(S)
        np.testing.assert_array_equal(dom._smaller_before(inv), _smaller_before_brute(S))
    # sorted, reversed: all pairs counted, none counted
    np.testing.assert_array_equal(dom._smaller_before(np.arange(300)), np.arange(300))
    np.testing.assert_array_equal(dom._smaller_before(np.arange(300)[::-1].copy()), np.zeros(300, np.int64))


def test_pareto_case_with_both_key_widths_equals_the_wavelet_path(monkeypatch):
    # n = 40,000: int32 keys for the levels 5-13, int64 for 14-15 (and int64 throughout when switched off)
    import dpselect._dominance as dom

    rng = np.random.default_rng(32)
    for P in (rng.random((40_000, 2)), rng.integers(0, 150, (40_000, 2)).astype(float),
              np.column_stack([rng.integers(0, 3, 40_000), rng.normal(size=40_000)])):
        ranks, keys, orders = dom._rank_reduce(P, P, True)
        ref = dom._count_2d(ranks[:, 0], ranks[:, 1], keys[:, 0], keys[:, 1], orders[0], orders[0])
        for narrow in (True, False):
            monkeypatch.setattr(dom, "_NARROW_KEYS", narrow)
            np.testing.assert_array_equal(count_dominating(P, method="fast"), ref)


def test_pareto_case_with_float_edge_values_matches_brute_force():
    rng = np.random.default_rng(33)
    special = np.array([-0.0, 0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e-300, -1e-300, 1.0, np.nextafter(1.0, 2)])
    for _ in range(200):
        n = int(rng.integers(2, 60))
        P = rng.choice(special, (n, 2))
        if rng.random() < 0.5:
            P[:, int(rng.integers(0, 2))] = rng.normal(size=n)
        np.testing.assert_array_equal(count_dominating(P, method="fast"), brute(P, P, True))


def test_argsort_float_orders_exactly_and_reports_ties():
    from dpselect._dominance import _argsort_float

    rng = np.random.default_rng(34)
    for trial in range(300):
        n = int(rng.integers(1, 400))
        kind = trial % 4
        if kind == 0:
            v = rng.random(n)
        elif kind == 1:  # values closer than the bits the packed key keeps: the exact fix-up sorts them
            v = 1.0 + rng.integers(0, 1000, n) * 2.0 ** -52
        elif kind == 2:  # many ties: the plain argsort fallback
            v = rng.integers(-2, 3, n).astype(float)
        else:
            v = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n)
        v = v + 0.0
        order, ties = _argsort_float(v)
        assert sorted(order.tolist()) == list(range(n))
        assert (np.diff(v[order]) >= 0).all()
        w = np.sort(v)
        assert ties == bool((w[1:] == w[:-1]).any())


# -- m >= 3: bitsets per block of points (issue 22), and the hybrid with divide and conquer ----------
def _ties_or_floats(rng, n, m, special):
    if rng.random() < 0.6:  # few distinct values: heavy ties in every coordinate
        return rng.integers(0, int(rng.integers(1, 6)), (n, m)).astype(float)
    return rng.choice(special, (n, m)) if rng.random() < 0.3 else rng.normal(size=(n, m))


@pytest.mark.parametrize("m", [3, 4, 5])
@pytest.mark.parametrize("engine", ["bitset", "hybrid"])
def test_bitset_and_hybrid_counts_match_brute_force_at_block_boundaries(monkeypatch, m, engine):
    # blocks of 64 points (tests shrink _BITSET_BLOCK): sizes around one, two and several blocks, so
    # queries land at block starts/ends and in the last, partial block; self and other queries,
    # strict and non-strict, ties, ±0.0 and ±inf
    import dpselect._dominance as dom

    monkeypatch.setattr(dom, "BLOCKED_LIMIT", 0)
    monkeypatch.setattr(dom, "_BITSET_LIMIT", 10**18 if engine == "bitset" else 0)
    monkeypatch.setattr(dom, "_BITSET_BLOCK", 64)
    rng = np.random.default_rng(200 + m)
    special = np.array([-0.0, 0.0, np.inf, -np.inf, 1.0, 2.0])
    sizes = [1, 2, 63, 64, 65, 127, 128, 129, 192, 257, 383, 512, 513]
    for n in sizes:
        P = _ties_or_floats(rng, n, m, special)
        nq = int(rng.integers(1, 2 * n + 2))
        Q = P[rng.integers(0, n, nq)] + rng.integers(-1, 2, (nq, m)) * (rng.random((nq, m)) < 0.3)
        for strict in (True, False):
            np.testing.assert_array_equal(count_dominating(P, strict=strict, method="fast"), brute(P, P, strict))
            np.testing.assert_array_equal(count_dominating(P, Q, strict=strict, method="fast"), brute(P, Q, strict))


def test_bitset_and_hybrid_engines_directly_on_rank_keys():
    # both engines for m = 3 too (auto uses the hybrid there), block sizes 64 .. 256, with the
    # table-lookup and the searchsorted paths for the row indices
    from dpselect._dominance import _count_bitset, _count_hybrid, _rank_reduce

    rng = np.random.default_rng(210)
    for trial in range(40):
        m = int(rng.integers(3, 6))
        n = int(rng.integers(1, 700))
        P = rng.integers(0, int(rng.integers(1, 8)), (n, m)).astype(float)
        same = trial % 2 == 0
        Q = P if same else rng.integers(-1, 9, (int(rng.integers(1, 500)), m)).astype(float)
        C = int(rng.choice([64, 128, 256]))
        for strict in (True, False):
            R, K, orders = _rank_reduce(P, Q, strict)
            ref = brute(P, Q, strict)
            np.testing.assert_array_equal(_count_bitset(R, K, orders[0], C=C)[0], ref)
            np.testing.assert_array_equal(_count_bitset(R, K, None, C=C)[0], ref)
            np.testing.assert_array_equal(_count_hybrid(R, K, orders[0], C=C), ref)


def test_bitset_counts_without_numpy_bitwise_count(monkeypatch):
    # numpy < 2.0 has no bitwise_count: the byte-table popcount must give the same counts
    import dpselect._dominance as dom

    monkeypatch.setattr(dom, "_HAS_BITWISE_COUNT", False)
    rng = np.random.default_rng(211)
    P = rng.integers(0, 4, (300, 4)).astype(float)
    R, K, orders = dom._rank_reduce(P, P, True)
    np.testing.assert_array_equal(dom._count_bitset(R, K, orders[0], C=64)[0], brute(P, P, True))


def test_suffix_masks_and_threshold_tables():
    import dpselect._dominance as dom

    M = dom._suffix_masks(128)
    bits = np.unpackbits(M.view(np.uint8), axis=1, bitorder="little")  # (129, 128): bit j of the row
    np.testing.assert_array_equal(bits, (np.arange(128)[None, :] >= np.arange(129)[:, None]).astype(np.uint8))
    v = np.array([5, 1, 5, 0, 3, 1, 9])
    T = np.empty((8, 1), dtype=np.uint64)
    vs = dom._threshold_table(v, T)
    assert vs.tolist() == sorted(v.tolist())
    rows = np.unpackbits(T.view(np.uint8), axis=1, bitorder="little")[:, :7]
    for k in range(11):  # row #{v < k} holds exactly the points with v >= k
        np.testing.assert_array_equal(rows[int((v < k).sum())], (v >= k).astype(np.uint8))


def test_m3_pareto_scores_at_larger_sizes_equal_blocked():
    # the default block size (2,048) with several blocks and levels of the block divide and conquer
    rng = np.random.default_rng(212)
    for P in (rng.random((9000, 3)), rng.integers(0, 12, (9000, 3)).astype(float)):
        np.testing.assert_array_equal(count_dominating(P, method="fast"), count_dominating_blocked(P, P))
    P = rng.integers(0, 20, (7000, 4)).astype(float)
    Q = rng.integers(0, 20, (3000, 4)).astype(float)
    np.testing.assert_array_equal(count_dominating(P, Q, strict=False, method="fast"),
                                  count_dominating_blocked(P, Q, strict=False))


# -- issue 38 item 3: the faster engines against brute force, ties and duplicates -------------------------
def _tied_points(rng, n, m):
    """Few distinct values per coordinate, and duplicated rows: ties in every coordinate."""
    P = rng.integers(0, int(rng.integers(1, 5)), (n, m)).astype(float)
    dup = rng.random(n) < 0.3
    if dup.any() and n > 1:
        P[dup] = P[rng.integers(0, n, int(dup.sum()))]
    return P


@pytest.mark.parametrize("m", [2, 3, 4, 5])
def test_ties_and_duplicates_match_brute_force_on_every_engine(m):
    import dpselect._dominance as dom

    rng = np.random.default_rng(380 + m)
    for trial in range(25):
        n = int(rng.integers(1, 600))
        P = _tied_points(rng, n, m)
        same = trial % 2 == 0
        Q = P if same else P[rng.integers(0, n, int(rng.integers(1, 400)))] + rng.integers(-1, 2, (1, m))
        for strict in (True, False):
            ref = brute(P, Q, strict)
            np.testing.assert_array_equal(count_dominating(P, None if same else Q, strict=strict, method="fast"), ref)
            if m >= 3:
                R, K, orders = dom._rank_reduce(P, Q, strict)
                np.testing.assert_array_equal(dom._count_bitset(R, K, orders[0], C=64)[0], ref)
                np.testing.assert_array_equal(dom._count_hybrid(R, K, orders[0], C=64), ref)


def test_count_grouped_3_matches_brute_force_per_group():
    from dpselect._dominance import _count_grouped_3

    rng = np.random.default_rng(383)
    for trial in range(60):
        n, nq = int(rng.integers(1, 900)), int(rng.integers(1, 300))
        G = int(rng.integers(1, 6))
        hi = int(rng.integers(1, 40))
        P = rng.integers(0, hi, (n, 3))
        Q = rng.integers(0, hi + 2, (nq, 3))
        gp, gq = rng.integers(0, G, n), rng.integers(0, G + 1, nq)  # a query group may have no points
        ref = np.array([int(((P[gp == g] >= q).all(axis=1)).sum()) for g, q in zip(gq, Q)])
        C = int(rng.choice([64, 128]))
        np.testing.assert_array_equal(_count_grouped_3(gp, P, gq, Q, C), ref)


def test_m4_hybrid_many_blocks_equals_plain_divide_and_conquer():
    # many blocks of 64 points: several levels of both divide and conquers in _count_grouped_3
    import dpselect._dominance as dom

    rng = np.random.default_rng(384)
    for P in (rng.random((6000, 4)), rng.integers(0, 6, (6000, 4)).astype(float)):
        Q = P[rng.integers(0, 6000, 2500)] + rng.integers(-1, 2, (2500, 4)) * (rng.random((2500, 4)) < 0.3)
        for strict in (True, False):
            R, K, orders = dom._rank_reduce(P, Q, strict)
            plain = dom._count_grouped(np.zeros(6000, np.int64), R, np.zeros(2500, np.int64), K)
            np.testing.assert_array_equal(dom._count_hybrid(R, K, orders[0], C=64), plain)
    P = rng.integers(0, 5, (700, 4)).astype(float)
    R, K, orders = dom._rank_reduce(P, P, True)
    np.testing.assert_array_equal(dom._count_hybrid(R, K, orders[0], C=64), brute(P, P, True))


def test_radix_argsort_is_the_stable_argsort():
    from dpselect._dominance import _argsort_nonneg, _radix_argsort

    rng = np.random.default_rng(385)
    for bits in (1, 5, 16, 17, 31, 33, 48, 63):
        for n in (0, 1, 2, 100, 5000):
            k = rng.integers(0, 2 ** min(bits, 62), n, dtype=np.int64)
            if bits == 63 and n:
                k[: n // 2] |= np.int64(1) << 62
            k[rng.random(n) < 0.3] = 7 % (2 ** min(bits, 62))  # ties: kept in index order
            np.testing.assert_array_equal(_radix_argsort(k, bits), np.argsort(k, kind="stable"))
            np.testing.assert_array_equal(_argsort_nonneg(k), np.argsort(k, kind="stable"))
    u = np.array([2**64 - 1, 0, 2**63, 5, 2**63], dtype=np.uint64)
    assert _radix_argsort(u, 64).tolist() == [1, 3, 2, 4, 0]
    k32 = rng.integers(0, 70_000, 3000).astype(np.int32)  # narrower integers are widened, not reinterpreted
    np.testing.assert_array_equal(_argsort_nonneg(k32), np.argsort(k32, kind="stable"))


@pytest.mark.parametrize("narrow", [True, False])
def test_smaller_before_short_last_rows(monkeypatch, narrow):
    # lengths around multiples of 32 and powers of two: the merge levels' short last row
    import dpselect._dominance as dom

    monkeypatch.setattr(dom, "_NARROW_KEYS", narrow)
    rng = np.random.default_rng(386)
    for n in [*range(0, 70), 95, 96, 97, 127, 128, 129, 160, 255, 257, 1000, 1025, 3000, 4097]:
        S = rng.permutation(n)
        ref = np.array([int((S[:i] < S[i]).sum()) for i in range(n)], dtype=np.int64)
        np.testing.assert_array_equal(dom._smaller_before(np.argsort(S)), ref)


def test_smaller_before_widens_int32_keys_exactly():
    # n > 2^15: the int32 keys run out of count bits and are widened to int64 for the top levels;
    # reference: a Fenwick tree over the values
    from dpselect._dominance import _smaller_before

    rng = np.random.default_rng(387)
    for n in (40_000, 70_001):
        S = rng.permutation(n)
        tree = [0] * (n + 1)
        ref = np.empty(n, dtype=np.int64)
        for i, v in enumerate(S.tolist()):
            c, j = 0, v  # values < v: prefix sum over 1 .. v
            while j > 0:
                c += tree[j]
                j -= j & -j
            ref[i] = c
            j = v + 1
            while j <= n:
                tree[j] += 1
                j += j & -j
        np.testing.assert_array_equal(_smaller_before(np.argsort(S)), ref)
