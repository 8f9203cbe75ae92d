"""Information gain, its global sensitivity and its element local sensitivity (thesis Ch. 7)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpselect.audit import check_admissibility
from dpselect.sensitivity import SensitivityFunction
from dpselect.utilities.information_gain import (
    IGTables,
    _h,
    ig_count_tables,
    ig_element_local_sensitivity,
    ig_global_sensitivity,
    ig_sensitivity,
    information_gain,
)

# tiny universe: attribute A0 in {0, 1}, attribute A1 in {0, 1, 2}, class in {0, 1}
DOMS = (2, 3)
TYPES = list(itertools.product(range(DOMS[0]), range(DOMS[1]), range(2)))
N_MAX = 8


def candidates_reference(a: int, b: int, t: int, n_total: int | None = None) -> set[tuple[int, int]]:
    """The thesis' Candidates algorithm (Alg. 5) for one cell, literally: the pairs (a', b') reachable from
    (τ_j, τ_jc) = (a, b) in exactly ``t`` moves (a−1, b−1) or (a+1, b); ``n_total`` = τ keeps the thesis'
    bound a < τ on additions, None drops it (add/remove neighbours, where a table can grow)."""
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


def test_candidates_reference_follows_alg5():
    assert sorted(candidates_reference(2, 1, 1)) == [(1, 0), (3, 1)]
    assert sorted(candidates_reference(2, 1, 1, n_total=2)) == [(1, 0)]


def tables_of(ds):
    arr = np.array(ds, dtype=np.int64).reshape(-1, 3)
    return ig_count_tables(arr[:, :2], arr[:, 2], DOMS)


def ig_brute(ds):
    """IG straight from the definition −τ·H_{C|A} with natural entropies converted to bits."""
    out = []
    for i in range(2):
        total = 0.0
        for j in range(DOMS[i]):
            ys = [r[2] for r in ds if r[i] == j]
            for c in (0, 1):
                k = ys.count(c)
                if k:
                    total += k * math.log2(k / len(ys))
        out.append(total)
    return np.array(out)


def neighbours(ds):
    seen = set()
    for i in range(len(ds)):
        y = ds[:i] + ds[i + 1:]
        if y not in seen:
            seen.add(y)
            yield y
    for r in TYPES:
        yield tuple(sorted(ds + (r,)))


def universe(max_size):
    for n in range(max_size + 1):
        yield from itertools.combinations_with_replacement(TYPES, n)


def test_information_gain_matches_definition():
    for ds in itertools.islice(universe(4), 0, None, 7):
        np.testing.assert_allclose(information_gain(tables_of(ds)), ig_brute(ds), atol=1e-12)


def test_paper_global_sensitivity_formula_and_extreme_case():
    # thesis: T has τ_j = τ, τ_jc = 0; adding (j, c) costs exactly f(N) which stays below ΔIG
    assert ig_global_sensitivity(1) == pytest.approx(1 + 1 / math.log(2))
    N = 50
    before = information_gain([np.array([[0, N]])])[0]
    after = information_gain([np.array([[1, N]])])[0]
    assert abs(after - before) == pytest.approx((N + 1) * math.log2(N + 1) - N * math.log2(N))
    assert abs(after - before) < ig_global_sensitivity(N + 1)


def test_local_sensitivity_at_zero_is_exact_max_over_neighbours():
    for ds in universe(4):
        u = ig_brute(ds)
        ls = np.max([np.abs(ig_brute(y) - u) for y in neighbours(ds)], axis=0)
        np.testing.assert_allclose(ig_element_local_sensitivity(tables_of(ds), 0), ls, atol=1e-12)


def test_thesis_g_equals_minus_f_shifted():
    # thesis writes the removal term g(b) - g(a) with g(x) = x log((x-1)/x) - log(x-1)
    def g(x):
        return 0.0 if x <= 1 else x * math.log2((x - 1) / x) - math.log2(x - 1)
    from dpselect.utilities.information_gain import _f
    for a in range(1, 30):
        for b in range(1, a + 1):
            assert g(b) - g(a) == pytest.approx(float(_f(a - 1) - _f(b - 1)), abs=1e-9)
            assert float(_h(a, b)) == pytest.approx(max(float(_f(a) - _f(b)), g(b) - g(a)), abs=1e-9)


def test_distance_t_equals_exhaustive_reachable_maximum():
    """Endpoint evaluation == max of h over every cell state reachable with all four moves."""
    for a in range(0, 14):
        for b in range(0, a + 1):
            reach = {(a, b)}
            best = [float(_h(a, b))]
            for t in range(1, 10):
                nxt = set()
                for x, z in reach:
                    nxt |= {(x + 1, z + 1), (x + 1, z)}
                    if z > 0:
                        nxt.add((x - 1, z - 1))
                    if x - z > 0:
                        nxt.add((x - 1, z))
                reach |= nxt
                best.append(max(float(_h(x, z)) for x, z in reach))
            it = IGTables([np.array([[b, a - b]])])
            got = it.local_sensitivity(np.arange(10))[:, 0]
            # the cell (j, c=0) has (a, b); the cell (j, c=1) has (a, a - b): take both
            it2 = IGTables([np.array([[a - b, b]])])
            ref = np.maximum(np.array(best), it2.local_sensitivity(np.arange(10))[:, 0])
            np.testing.assert_allclose(got, ref, atol=1e-12)


def test_endpoints_equal_full_enumeration_over_u():
    """The inner max over u is attained at u = 0, min(b - 1, t) or b (quasi-convexity), a < 60, t < 40."""
    for a in range(0, 60):
        b = np.arange(0, a + 1)
        for t in range(0, 40):
            full = np.full(b.shape, -np.inf)
            for u in range(0, min(a, t) + 1):
                ok = u <= np.minimum(b, t)
                full = np.where(ok, np.maximum(full, _h(a + t - 2 * u, b - u)), full)
            # one attribute per b: its cells are (a, b) and (a, a - b)
            mine = IGTables([np.array([[bb, a - bb]]) for bb in b]).local_sensitivity(t)
            np.testing.assert_allclose(mine, np.maximum(full, full[::-1]), atol=1e-12)


def test_candidates_algorithm_without_bound_agrees():
    for a in range(0, 20):
        for b in range(0, a + 1):
            for t in range(0, 12):
                cands = candidates_reference(a, b, t)
                ref = max(float(_h(x, z)) for x, z in cands)
                it = IGTables([np.array([[b, a - b]])])
                # our value covers both cells; the (a, b) cell alone must not exceed it
                assert it.local_sensitivity(t)[0] >= ref - 1e-12


def test_sensitivity_function_admissible_on_all_tiny_tables():
    report = check_admissibility(
        lambda ds: ig_brute(ds),
        lambda ds: ig_sensitivity(tables_of(ds), n_max=N_MAX),
        neighbours,
        universe(3),
        t_max=3,
    )
    assert report.ok, report.violation


def test_thesis_bound_a_lt_tau_breaks_admissibility():
    """Alg. 5 as printed (additions only while a < τ) is not admissible under add/remove neighbours."""
    def sf(ds):
        tabs = tables_of(ds)
        tau = len(ds)

        def fn(t):
            out = []
            for tab in tabs:
                best = 0.0
                for j in range(tab.shape[0]):
                    a = int(tab[j].sum())
                    for c in range(2):
                        for tp in range(t + 1):
                            for x, z in candidates_reference(a, int(tab[j, c]), tp, n_total=tau):
                                best = max(best, float(_h(x, z)))
                out.append(best)
            return np.array(out)
        return SensitivityFunction(fn, ig_global_sensitivity(N_MAX))

    report = check_admissibility(lambda ds: ig_brute(ds), sf, neighbours, universe(2), t_max=2)
    assert not report.ok
    assert report.violation is not None


def test_halved_sensitivity_is_caught():
    report = check_admissibility(
        lambda ds: ig_brute(ds),
        lambda ds: SensitivityFunction(lambda t, tb=tables_of(ds): 0.5 * IGTables(tb).local_sensitivity(t),
                                       ig_global_sensitivity(N_MAX)),
        neighbours, universe(2), t_max=1)
    assert not report.ok


def test_bad_tables():
    with pytest.raises(ValueError):
        information_gain([])
    with pytest.raises(ValueError):
        information_gain([np.array([1, 2])])
    with pytest.raises(ValueError):
        information_gain([np.array([[1, -2]])])


def _reference_delta(it, t, k):
    """δ(T, t, A_k) by the formula of the module docstring, one attribute and one distance at a time."""
    from dpselect.utilities.information_gain import _cell_sensitivity

    lo = int(it.starts[k])
    hi = lo + int(it.sizes[k])
    return float(_cell_sensitivity(it.a[lo:hi].astype(np.int64), it.b[lo:hi].astype(np.int64), np.int64(t)).max())


def test_vectorised_and_elementwise_forms_equal_the_formula_bit_for_bit():
    rng = np.random.default_rng(8)
    for _ in range(20):
        tabs = [rng.integers(0, int(rng.integers(1, 40)), size=(int(rng.integers(1, 5)), int(rng.integers(2, 4))))
                for _ in range(int(rng.integers(1, 6)))]
        it = IGTables(tabs)
        n = it.n_attributes
        ts = np.arange(0, 60)
        ref = np.array([[_reference_delta(it, t, k) for k in range(n)] for t in ts])
        assert np.array_equal(it.local_sensitivity(ts), ref)             # head (t < b − 1) and tail
        assert np.array_equal(it.local_sensitivity(7), ref[7])
        sub = rng.permutation(n)[: max(1, n // 2)]
        assert np.array_equal(it.local_sensitivity(ts, sub), ref[:, sub])
        # the block walkers' layout (runs of one attribute, the same distances) ...
        B = 16
        att = np.repeat(sub, B)
        tt = np.tile(np.arange(30, 30 + B), sub.size)
        assert np.array_equal(it.local_sensitivity_at(tt, att), ref[tt, att])
        # ... runs with different distances, and any other layout
        tt2 = rng.integers(0, 60, size=att.size)
        assert np.array_equal(it.local_sensitivity_at(tt2, att), ref[tt2, att])
        att3 = rng.integers(0, n, size=50)
        tt3 = rng.integers(0, 60, size=50)
        assert np.array_equal(it.local_sensitivity_at(tt3, att3), ref[tt3, att3])
        sf = ig_sensitivity(it, n_max=it.n_records + 45)
        assert sf.elementwise and sf.saturation_distance == it.n_records + 45
        assert np.array_equal(sf.at(tt3, att3), np.minimum(np.where(tt3 >= it.n_records + 45, np.inf, ref[tt3, att3]),
                                                           sf.global_sensitivity))


def test_shift_with_error_arguments():
    from dpselect.utilities.information_gain import ig_shift_with_error

    it = IGTables([np.array([[3, 1], [0, 2]])])
    G, err = ig_shift_with_error(it, 10)
    assert G.shape == err.shape == (1,) and 0 < err[0] < 1e-12 * G[0] + 1e-12
    with pytest.raises(TypeError, match="n_max is required"):
        ig_shift_with_error(it, None)
    with pytest.raises(ValueError, match="n_max=5: the table has more records"):
        ig_shift_with_error(it, 5)
    with pytest.raises(TypeError, match="IGTables"):
        ig_shift_with_error([np.array([[3, 1]])], 10)
