import threading
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

from dpselect import SensitivityFunction, constant, maximum, weighted_sum
from dpselect.dampening import dampen, dampen_exact, dampen_with_error, shift_total_exact, shift_totals, shift_totals_with_error

from _sensitivity import sf_from_rule  # tests/_sensitivity.py


def ebc_example_sf(n=8):
    # Thesis Example 3.4.1: LS^EBC(G, 0) = 3, LS^EBC(G, 1) = 5 = Δ (flat local sensitivity).
    return SensitivityFunction(lambda t: np.full(n, [3.0, 5.0][min(t, 1)]), 5.0)


def test_thesis_example_3_4_1_dampened_scores():
    D = dampen([6.5, 6.5] + [0.0] * 6, ebc_example_sf())
    assert np.allclose(D, [1.7, 1.7] + [0.0] * 6)   # 1 + (6.5 - 3)/5


def test_dampen_is_odd_and_piecewise_linear():
    sf = SensitivityFunction(lambda t: np.full(5, [1.0, 2.0, 4.0][min(t, 2)]), 4.0)
    u = np.array([0.5, 1.0, 2.0, 3.0, 11.0])
    D = dampen(u, sf)
    # b = 0, 1, 3, 7, 11: D(0.5) = 0.5, D(1) = 1, D(2) = 1.5, D(3) = 2, D(11) = 4
    assert np.allclose(D, [0.5, 1.0, 1.5, 2.0, 4.0])
    assert np.allclose(dampen(-u, sf), -D)


def test_zero_width_intervals_are_skipped_and_zero_maps_to_zero():
    sf = SensitivityFunction(lambda t: np.full(3, [0.0, 0.0, 2.0][min(t, 2)]), 2.0)
    assert np.allclose(dampen([0.0, 1.0, 5.0], sf), [0.0, 2.5, 4.5])


def test_zero_maps_to_zero_keeps_sensitivity_one_by_brute_force():
    """D(0) = 0 where δ(x, 0) = 0 (the literal Def. 3.3.1 gives the first t with δ > 0, which contradicts
    D(−u) = −D(u) at u = 0): |D(x) − D(y)| <= 1 on every edge of a 5x5 grid of datasets, for utilities
    with plateaus of zeros and the tightest admissible δ (δ(x, t) = max local sensitivity within t)."""
    from dpselect.dampening import dampen_exact

    H = 5
    nodes = [(i, j) for i in range(H) for j in range(H)]

    def nbrs(x):
        return [(x[0] + a, x[1] + b) for a, b in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= x[0] + a < H and 0 <= x[1] + b < H]

    def dist(x, y):
        return abs(x[0] - y[0]) + abs(x[1] - y[1])

    rng = np.random.default_rng(71)
    plateaus = 0
    for trial in range(60):
        c = int(rng.integers(0, H))
        u = {x: float(max(0, x[0] - c) * int(rng.integers(1, 3))) if trial % 2
             else float(rng.choice([0, 0, 0, 1, 2, -1])) for x in nodes}
        ls = {x: max(abs(u[x] - u[y]) for y in nbrs(x)) for x in nodes}
        top = max(max(ls.values()), 1.0)
        D = {}
        for x in nodes:
            table = [max(ls[y] for y in nodes if dist(x, y) <= t) for t in range(2 * H)] + [top]
            sf = SensitivityFunction(lambda t, table=table: np.array([table[min(t, len(table) - 1)]]), top)
            D[x] = dampen_exact(u[x], sf, 0)
            plateaus += u[x] == 0 and table[0] == 0
        assert all(abs(D[x] - D[y]) <= 1 for x in nodes for y in nbrs(x))
    assert plateaus > 100  # the u = 0, δ(x, 0) = 0 case is exercised


def test_constant_sensitivity_is_scaling():
    u = np.array([-3.0, 0.0, 7.5, 1e300])
    assert np.allclose(dampen(u, constant(4, 2.5)), u / 2.5)


def test_candidates_path_matches_full_path():
    rng = np.random.default_rng(1)
    d = rng.integers(1, 200, size=500)
    u = rng.random(500)

    def fn_full(t):
        return np.where(d - t - 2 > 0, np.minimum(1.0, 2.0 / np.maximum(d - t - 2, 1)), 1.0)

    def fn_cand(t, candidates=None):
        dd = d if candidates is None else d[candidates]
        return np.where(dd - t - 2 > 0, np.minimum(1.0, 2.0 / np.maximum(dd - t - 2, 1)), 1.0)

    a = dampen(u, SensitivityFunction(fn_full, 1.0))
    b = dampen(u, SensitivityFunction(fn_cand, 1.0))
    assert np.array_equal(a, b)
    # elementwise functions are walked in blocks of distances: same values, same shifts
    c = dampen(u, SensitivityFunction(fn_cand, 1.0, elementwise=True))
    assert np.allclose(a, c, rtol=1e-12, atol=1e-12)
    bounded = SensitivityFunction(fn_cand, 1.0).bounded(150)
    bounded_el = SensitivityFunction(fn_cand, 1.0, elementwise=True).bounded(150)
    assert bounded_el.elementwise
    assert np.allclose(shift_totals(bounded, 500), shift_totals(bounded_el, 500), rtol=1e-12)
    # against a plain per-candidate reference of Def. 3.3.1
    for r in range(0, 500, 37):
        bsum, t = 0.0, 0
        while True:
            dl = fn_full(t)[r]
            if u[r] < bsum + dl:
                ref = t + (u[r] - bsum) / dl
                break
            bsum += dl
            t += 1
        assert a[r] == pytest.approx(ref, rel=1e-12)


def test_max_steps_clips_instead_of_looping_forever():
    # issue 33: the walk limit clips D to ±max_steps (sensitivity 1 kept) instead of an error that depends on
    # the data; a candidate resolved within the limit keeps its value
    sf = SensitivityFunction(lambda t: np.full(3, 2.0 ** -10), 1.0)
    assert dampen([0.0, 5.0, -0.25], sf, max_steps=1000).tolist() == [0.0, 1000.0, -256.0]
    D, err = dampen_with_error([0.0, -5.0, 0.25], sf, max_steps=1000)
    assert D.tolist() == [0.0, -1000.0, 256.0] and err[1] == 0.0
    assert dampen_exact(-5.0, sf, 1, max_steps=1000) == -1000


def _steps_and_blocks(fn, delta):
    """The same δ as a one-distance-per-call function and as an elementwise one (the two walkers)."""
    plain = SensitivityFunction(lambda t, candidates=None: fn(np.full(1 if candidates is None else len(candidates), t)),
                                delta, n_candidates=1, name="f")
    blocks = SensitivityFunction(lambda t, candidates=None: fn(np.broadcast_to(t, (1,) if candidates is None
                                                                                else np.shape(candidates))),
                                 delta, n_candidates=1, name="f", elementwise=True)
    return plain, blocks


@pytest.mark.parametrize("walker", [0, 1])
def test_fail_fast_only_where_the_walk_cannot_end(walker):
    import time
    from dpselect.dampening import dampen_with_error, shift_totals
    # δ = 0 up to t = 2999 then 1: resolves at 3002.5 for |u| = 2.5 (the probe after 1,024 distances sees δ = 1 at
    # the far end and lets the walk go on)
    late = _steps_and_blocks(lambda t: np.where(np.asarray(t) < 3000, 0.0, 1.0), 1.0)[walker]
    D, err = dampen_with_error([-2.5], late)
    assert D.tolist() == [-3002.5] and err[0] < 1e-11
    # δ = 0.5 (Δ = 1), max_steps = 4096: b(4096) = 2048 exactly; 2047.9 resolves in the last distance, 2048 is
    # refused by the full walk (b(4096) <= |u|, not certain at the probe), 2049 by the probe
    half = _steps_and_blocks(lambda t: np.full(np.shape(t), 0.5), 1.0)[walker]
    assert dampen([2047.9], half, max_steps=4096)[0] == pytest.approx(4095.8, abs=1e-9)
    # 2048 reaches the limit in the full walk (D = 4096 exactly), 2049 is clipped by the probe; both exact
    assert [v.tolist() for v in dampen_with_error([2048.0], half, max_steps=4096)] == [[4096.0], [0.0]]
    assert [v.tolist() for v in dampen_with_error([-2049.0], half, max_steps=4096)] == [[-4096.0], [0.0]]
    # δ ≡ 0: D = max_steps after ~1,024 distances, not 10^6 (the walk took ~20 s)
    zero = _steps_and_blocks(lambda t: np.zeros(np.shape(t)), 1.0)[walker]
    t0 = time.perf_counter()
    assert dampen([1.0], zero).tolist() == [1e6]
    assert time.perf_counter() - t0 < 1.0
    # the shift reads δ as Δ from max_steps on (issue 33: it was a ValueError that depended on the data)
    assert shift_totals(zero, 1, max_steps=4096).tolist() == [4096.0]


def test_far_probe_opt_out():
    # a function whose cost grows with t (the median's element LS) or that keeps a walk state (δ^PS) opts out:
    # it is never asked for δ at max_steps − 1, and is clipped after the full walk
    asked = []

    def fn(t, candidates=None):
        asked.append(t)
        return np.zeros(1 if candidates is None else len(candidates))

    sf = SensitivityFunction(fn, 1.0, n_candidates=1)
    sf.far_probe = False
    assert dampen([1.0], sf, max_steps=3000).tolist() == [3000.0]
    assert max(asked) == 2999
    from dpselect.utilities.median import median_sensitivity
    assert median_sensitivity([0.0, 1.0], 2.0).far_probe is False
    assert dpselect_pareto_sf().far_probe is False


def dpselect_pareto_sf():
    from dpselect.multiobjective import pareto_sensitivity
    return pareto_sensitivity([[1.0, 2.0], [2.0, 1.0]], [1.0, 1.0])


@pytest.mark.parametrize("seed", range(4))
def test_fail_fast_never_changes_d_or_the_outcome_for_monotone_delta(seed, monkeypatch):
    # the probe fires after 4 distances here: on random non-decreasing δ tables (admissible functions are
    # non-decreasing along every other distance), D, its error bound and dampen_exact are those of the plain walk,
    # and the walk errs exactly where the plain walk errs
    import dpselect.dampening as dmp
    rng = np.random.default_rng(900 + seed)
    for _ in range(25):
        n, T = int(rng.integers(1, 6)), int(rng.integers(8, 120))
        table = np.sort(rng.choice([0.0, 0.0, 0.1, 0.25, 1.0 / 3, 0.5], (T, n)), axis=0)   # non-decreasing in t
        delta = 1.0
        u = rng.uniform(-1, 1, n) * rng.choice([0.5, 5.0, 40.0])
        max_steps = int(rng.integers(6, T))
        for elementwise in (False, True):
            if elementwise:
                sf = SensitivityFunction(lambda t, candidates=None: table[np.asarray(t), candidates], delta,
                                         n_candidates=n, elementwise=True)
            else:
                sf = SensitivityFunction(lambda t, candidates=None: table[t] if candidates is None
                                         else table[t, candidates], delta, n_candidates=n)
            outcomes = []
            for probe_after in (4, 1 << 62):
                monkeypatch.setattr(dmp, "_PROBE_AFTER", probe_after)
                try:
                    D, err = dmp.dampen_with_error(u, sf, max_steps=max_steps)
                    outcomes.append((D.tolist(), err.tolist()))
                except ValueError:
                    outcomes.append("error")
            assert outcomes[0] == outcomes[1]
            if outcomes[0] != "error":
                D, err = outcomes[0]
                for r in range(n):
                    exact = dmp.dampen_exact(float(u[r]), sf, r, max_steps=max_steps)
                    assert abs(float(exact) - D[r]) <= err[r]


def test_shift_totals_and_unbounded_error():
    assert shift_totals(ebc_example_sf(2), 2).tolist() == [2.0, 2.0]
    sf = SensitivityFunction(lambda t: np.array([0.5, 1.0]), 1.0)
    # issue 33: an unbounded function is read as reaching Δ at max_steps (admissible) instead of a ValueError
    # that depended on the data; the same as bounding it there
    assert shift_totals(sf, 2, max_steps=50).tolist() == [25.0, 0.0] == shift_totals(sf.bounded(50), 2).tolist()
    assert shift_totals(sf.bounded(10), 2).tolist() == [5.0, 0.0]


def test_saturation_is_sticky():
    # δ reaches Δ at t = 1 and (non-monotonically) drops afterwards: treated as Δ from then on.
    sf = SensitivityFunction(lambda t: np.full(1, [0.5, 1.0, 0.1][min(t, 2)]), 1.0)
    assert dampen([3.5], sf)[0] == pytest.approx(1 + (3.5 - 0.5) / 1.0)
    assert shift_totals(sf, 1).tolist() == [0.5]


def test_sensitivity_function_size_mismatch():
    with pytest.raises(ValueError, match="sensitivity_function and utilities disagree on the number of candidates$"):
        dampen([1.0, 2.0, 3.0], ebc_example_sf())
    with pytest.raises(TypeError, match="must be a dpselect.SensitivityFunction"):
        dampen([1.0], lambda t: 1.0)


def test_bounded_function_resolves_at_its_saturation_distance_whatever_max_steps():
    sf = SensitivityFunction(lambda t: np.full(2, 1e-9), 1.0).bounded(5)
    # b(5) = 5e-9; from t = 5 on each step adds Δ = 1
    assert np.allclose(dampen([0.5, 100.0], sf, max_steps=2), [5 + (0.5 - 5e-9), 5 + (100 - 5e-9)])
    assert np.allclose(shift_totals(sf, 2, max_steps=2), [5 * (1 - 1e-9)] * 2)


# -- rigorous error bounds and exact values (issue 10, part 4) ----------------------------------------


def table_sf(tab, delta_max, *, tail=None, mode="candidates", name="table"):
    """δ(x, t, r) = tab[r, t] for t < T and `tail` (default Δ) afterwards. mode: "candidates" (accepts
    candidates), "full" (only fn(t)), or "elementwise"."""
    tab = np.asarray(tab, dtype=np.float64)
    n, T = tab.shape
    tail = delta_max if tail is None else tail

    def get(t, idx):
        t = np.asarray(t)
        return np.where(t < T, tab[idx, np.minimum(t, T - 1)], tail)

    return sf_from_rule(get, n, delta_max, mode=mode, name=name)


def ref_dampen(u, deltas, delta_max):
    """Def. 3.3.1 for one candidate in Fractions (independent of dpselect): deltas(t) -> float."""
    a = abs(Fraction(u))
    if a == 0:
        return Fraction(0)
    b, t = Fraction(0), 0
    while True:
        d = Fraction(deltas(t))
        if a < b + d:
            D = t + (a - b) / d
            break
        if d >= Fraction(delta_max):
            D = t + (a - b) / Fraction(delta_max)
            break
        b += d
        t += 1
    return D if u > 0 else -D


def float_breakpoints(row, k):
    """b_float(1..k) as the step walker sums them (sequential float additions)."""
    out, b = [], 0.0
    for d in row[:k]:
        b = b + float(d)
        out.append(b)
    return out


def check_bracketed(u, sf, *, max_steps=1_000_000, exact=None):
    """D and err of dampen_with_error against dampen and dampen_exact; returns (D, err, exact values)."""
    u = np.asarray(u, dtype=np.float64)
    D, err = dampen_with_error(u, sf, max_steps=max_steps)
    assert np.array_equal(D, dampen(u, sf, max_steps=max_steps))
    assert err.shape == D.shape and np.all(err >= 0)
    ex = [dampen_exact(float(u[r]), sf, r, max_steps=max_steps) for r in range(u.size)] if exact is None else exact
    for r in range(u.size):
        if np.isfinite(err[r]):
            assert abs(Fraction(float(D[r])) - ex[r]) <= Fraction(float(err[r])), (r, u[r], D[r], err[r], ex[r])
    return D, err, ex


MODES = ["candidates", "full", "elementwise"]


def test_dampen_exact_thesis_example_and_closed_forms():
    sf = ebc_example_sf()
    assert dampen_exact(6.5, sf, 0) == Fraction(17, 10)          # 1 + 3.5/5 exactly
    assert dampen_exact(-6.5, sf, 1) == Fraction(-17, 10)
    assert dampen_exact(0.0, sf, 2) == 0 and dampen_exact(-0.0, sf, 2) == 0
    assert dampen_exact(3.0, sf, 0) == 1 and dampen_exact(2.0, sf, 0) == Fraction(2, 3)
    # constant sensitivity: D = u / Δ with the floats read exactly
    for u in (-3.0, 7.5, 0.1, 1e300, 1e-300, 5e-324):
        assert dampen_exact(u, constant(4, 2.5), 3) == Fraction(u) / Fraction(2.5)
    # b = 0, 1, 3, 7, 11 for δ = 1, 2, 4 (= Δ)
    sf = SensitivityFunction(lambda t: np.full(5, [1.0, 2.0, 4.0][min(t, 2)]), 4.0)
    got = [dampen_exact(u, sf, r) for r, u in enumerate([0.5, 1.0, 2.0, 3.0, 11.0])]
    assert got == [Fraction(1, 2), 1, Fraction(3, 2), 2, 4]
    # zero-width intervals skipped; saturation is sticky (δ = 0.5, 1 = Δ, then 0.1 counts as Δ)
    sf = SensitivityFunction(lambda t: np.full(3, [0.0, 0.0, 2.0][min(t, 2)]), 2.0)
    assert [dampen_exact(u, sf, 0) for u in (1.0, 5.0)] == [Fraction(5, 2), Fraction(9, 2)]
    sf = SensitivityFunction(lambda t: np.full(1, [0.5, 1.0, 0.1][min(t, 2)]), 1.0)
    assert dampen_exact(3.5, sf, 0) == 4
    # δ = 0.1 (the float) for 10 distances, then Δ = 1: D(5) = 10 + (5 − 10·0.1) / 1
    sf = table_sf(np.full((2, 10), 0.1), 1.0)
    assert dampen_exact(5.0, sf, 1) == 10 + (5 - 10 * Fraction(0.1))
    assert dampen_exact(0.25, sf, 0) == 2 + (Fraction(0.25) - 2 * Fraction(0.1)) / Fraction(0.1)


def test_dampen_exact_matches_independent_reference():
    rng = np.random.default_rng(7)
    deg = rng.integers(1, 60, size=40)

    def ego(t, candidates=None):
        dd = deg if candidates is None else deg[candidates]
        rem = dd - t - 2
        return np.where(rem > 0, np.minimum(1.0, 2.0 / np.maximum(rem, 1)), 1.0)

    u = rng.random(40) * 30 - 10
    for el in (False, True):
        sf = SensitivityFunction(ego, 1.0, elementwise=el)
        for r in range(40):
            ref = ref_dampen(u[r], lambda t: float(ego(t, np.array([r]))[0]), 1.0)
            assert dampen_exact(u[r], sf, r) == ref


def test_with_error_brackets_exact_on_random_nonmonotone_tables():
    rng = np.random.default_rng(2024)
    n, T, dmax = 120, 30, 1.7
    tab = rng.random((n, T)) * dmax
    tab[rng.random((n, T)) < 0.15] = 0.0                      # zero-width intervals
    tab[:20, :] = rng.choice([0.1, 1 / 3, 0.7, 1e-9], size=(20, T))
    sat_rows = rng.choice(n, 15, replace=False)                 # saturate mid-way, then drop (sticky)
    tab[sat_rows, 7] = dmax
    totals = tab.sum(axis=1)
    u = (rng.random(n) * 1.3 * totals) * rng.choice([-1, 1], size=n)
    u[::9] = 0.0
    for r in range(0, n, 4):                                    # on float breakpoints, and next to them
        k = int(rng.integers(1, 12))
        bp = float_breakpoints(tab[r], k)[-1]
        u[r] = [bp, np.nextafter(bp, np.inf), np.nextafter(bp, -np.inf)][r % 3]
    results = {}
    for mode in MODES:
        sf = table_sf(tab, dmax, mode=mode)
        D, err, ex = check_bracketed(u, sf)
        results[mode] = (D, err)
        fin = np.isfinite(err)
        off = np.arange(n) % 4 != 0
        assert fin[off].all()                                   # only candidates at breakpoints are uncertain
        assert fin[~off].sum() >= 5                             # (and not all of those)
        assert np.all(err[fin] <= 1e-12 * (1 + np.abs(D[fin])))
        # dampen_exact equals the independent reference
        for r in range(0, n, 7):
            assert ex[r] == ref_dampen(u[r], lambda t: float(tab[r, t]) if t < T else dmax, dmax)
        bsf = table_sf(tab, dmax, tail=0.5, mode=mode).bounded(T + 3)   # bounded(): Δ from distance T + 3
        check_bracketed(u, bsf)
    # the step walker and the block walker agree within their error bounds
    (Dc, ec), (De, ee) = results["candidates"], results["elementwise"]
    both = np.isfinite(ec) & np.isfinite(ee)
    assert both.sum() >= 90 and np.all(np.abs(Dc - De)[both] <= (ec + ee)[both])
    assert np.array_equal(results["candidates"][0], results["full"][0])


def test_with_error_on_point_one_breakpoints():
    # δ = 0.1 (inexact in binary) for 60 distances, then Δ = 1: the float breakpoints drift from the exact ones
    tab = np.full((1, 60), 0.1)
    bps = float_breakpoints(tab[0], 60)
    us = []
    for bp in bps:
        us += [bp, np.nextafter(bp, 0.0), np.nextafter(bp, np.inf)]
    us += [round(0.1 * k, 10) for k in range(1, 70)]            # decimal breakpoints 0.1 k
    us += [0.05 + 0.1 * k for k in range(60)]                   # well inside the intervals
    us = np.array(us + [7.0, 6.0, 1e-300])
    for mode in MODES:
        sf = table_sf(np.tile(tab, (us.size, 1)), 1.0, mode=mode)
        D, err, ex = check_bracketed(us, sf)
        mid = slice(3 * 60 + 69, 3 * 60 + 69 + 60)
        assert np.all(np.isfinite(err[mid])) and np.all(err[mid] < 1e-14 * (1 + np.abs(D[mid])))
        # 7 lies beyond the last breakpoint (closed form) and 1e-300 in the first interval: certified. 6 lies
        # between the sequential float sum b_float(60) = 5.999999999999995 and the exact 60 · 0.1 > 6: the step
        # walker picks the closed form at 60, the exact index is 59, so it cannot certify (the block walker
        # sums in another order, lands in interval 59 and certifies it)
        assert np.isfinite(err[[-3, -1]]).all()
        if mode != "elementwise":
            assert err[-2] == np.inf and D[-2] == 60 + (6.0 - 5.999999999999995)
        assert ex[-2] == 59 + (6 - 59 * Fraction(0.1)) / Fraction(0.1)


@pytest.mark.parametrize("mode", ["candidates", "elementwise"])
def test_with_error_many_steps_one_third(mode):
    steps = 5_000 if mode == "candidates" else 200_000
    third = 1 / 3
    sf = table_sf(np.full((4, steps), third), 1.0, mode=mode)
    u = np.array([steps / 3 - 0.05, 1234.5678, 0.2, steps / 3 + 10.0])
    D, err, ex = check_bracketed(u, sf)
    assert np.isfinite(err).all()
    assert abs(D[0] - (steps - 0.15)) < 1e-6 and abs(D[3] - (steps + 10 - steps * (third - Fraction(1, 3)))) < 1e-6
    # 1/3 rounds the same way at every step, so the float sums really drift; err is within a small factor
    # of the true error where that is visible, and tiny in the first interval
    true = np.array([float(abs(Fraction(float(D[r])) - ex[r])) for r in range(4)])
    assert true[0] > 1e-11 and np.all(err <= 4 * true + 1e-13) and err[2] < 1e-15


@pytest.mark.parametrize("mode", MODES)
def test_with_error_huge_and_tiny_values(mode):
    # huge: Δ = 1e300, δ = 3e299, 1e299, then Δ; tiny: subnormal and zero δ before Δ = 1
    huge = table_sf(np.tile([3e299, 1e299, 2e299], (5, 1)), 1e300, mode=mode)
    u = np.array([1e300, -1.7e308, 3.5e299, 1e-300, 4e299])
    D, err, ex = check_bracketed(u, huge)
    assert np.isfinite(err).all()
    assert ex[1] == -(3 + (Fraction(1.7e308) - Fraction(3e299) - Fraction(1e299) - Fraction(2e299)) / Fraction(1e300))
    tiny = table_sf(np.tile([1e-300, 5e-324, 0.0, 1e-310], (6, 1)), 1.0, mode=mode)
    u = np.array([1e-300, 5e-324, 1.5e-300, 2e-300, -1e300, 1e-310])
    D, err, ex = check_bracketed(u, tiny)
    assert np.isfinite(err[1:]).all()
    # u = 1e-300 = b(1) exactly: b(2) = 1e-300 + 5e-324 > u in exact arithmetic (D = 1), but the float sum
    # absorbs 5e-324 and the walk stops in interval 3 (D = 3): the certificate rightly fails
    assert ex[0] == 1 and D[0] == 3.0 and err[0] == np.inf
    assert ex[1] == Fraction(5e-324) / Fraction(1e-300)
    assert ex[4] == -(4 + (Fraction(1e300) - Fraction(1e-300) - Fraction(5e-324) - Fraction(1e-310)))


def test_with_error_overflow_is_infinite_error():
    sf = constant(2, 1e-300)
    with np.errstate(over="ignore"):
        D, err = dampen_with_error([1e300, 1.0], sf)
    assert D[0] == np.inf and err[0] == np.inf                 # the exact value 1e600 is no float
    assert dampen_exact(1e300, sf, 0) == Fraction(1e300) / Fraction(1e-300)
    assert np.isfinite(err[1])


@pytest.mark.parametrize("mode", MODES)
def test_with_error_integer_data_is_only_final_rounding(mode):
    # δ = 1, 2, 4, 8 = Δ: breakpoints 0, 1, 3, 7, 15; every sum is exact, so err is the final-rounding term
    rng = np.random.default_rng(5)
    n = 400
    sf = table_sf(np.tile([1.0, 2.0, 4.0], (n, 1)), 8.0, mode=mode)
    u = rng.integers(-30, 31, size=n) + rng.choice([0.0, 0.5, 0.1, 1 / 3], size=n)
    u[:8] = [0.0, 1.0, 3.0, 7.0, 15.0, -7.0, 2.0 ** -40, 1e15]
    D, err, ex = check_bracketed(u, sf)
    for r in range(n):
        if u[r] == 0:
            assert err[r] == 0.0 and D[r] == 0.0
            continue
        i = min(int(np.floor(abs(ex[r]))), 3)                    # index of the segment (3: closed form)
        q = float(abs(ex[r]) - i)                                # (|u| − b(i)) / δ(i), computed exactly here
        assert err[r] == 2.0 ** -51 * (abs(D[r]) + 2 * abs(q)) + 2.0 ** -1060
    assert np.all(err <= 2e-15 * (1 + np.abs(D)))
    assert D[:5].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_shift_totals_with_error_brackets_exact():
    rng = np.random.default_rng(11)
    n, T, dmax = 150, 25, 2.3
    tab = rng.random((n, T)) * dmax
    tab[:30] = rng.choice([0.1, 1 / 3, 1e-300, 2.0, 0.0], size=(30, T))
    tab[rng.choice(n, 20, replace=False), 5] = dmax             # saturates at 5, then drops (sticky)
    for mode in MODES:
        sf = table_sf(tab, dmax, tail=dmax * 0.75, mode=mode).bounded(T + 2)
        G, err = shift_totals_with_error(sf, n)
        assert np.array_equal(G, shift_totals(sf, n))
        assert np.isfinite(err).all() and np.all(err <= 1e-13 * (1 + G))
        for r in range(n):
            ex = shift_total_exact(sf, r)
            assert abs(Fraction(float(G[r])) - ex) <= Fraction(float(err[r]))
            if r % 10 == 0:                                     # independent reference
                ref, dr = Fraction(0), Fraction(dmax)
                for t in range(T + 2):
                    d = float(tab[r, t]) if t < T else dmax * 0.75
                    if d >= dmax:
                        break
                    ref += dr - Fraction(d)
                assert ex == ref


@pytest.mark.parametrize("mode", MODES)
def test_shift_totals_exact_closed_forms_and_integer_data(mode):
    sf = table_sf(np.tile([1.0, 3.0, 2.0, 5.0], (3, 1)), 5.0, tail=4.0, mode=mode).bounded(6)
    G, err = shift_totals_with_error(sf, 3)
    # Σ (5 − δ) over t < 3 (δ = 5 at t = 3): 4 + 2 + 3
    assert G.tolist() == [9.0, 9.0, 9.0] and err.tolist() == [0.0, 0.0, 0.0]
    assert shift_total_exact(sf, 2) == 9
    assert shift_total_exact(ebc_example_sf(2), 0) == 2
    sf = SensitivityFunction(lambda t: np.array([0.5, 1.0]), 1.0).bounded(10)
    assert [shift_total_exact(sf, r) for r in (0, 1)] == [5, 0]
    third = table_sf(np.full((2, 10), 1 / 3), 1.0, tail=0.1, mode=mode).bounded(12)
    assert shift_total_exact(third, 0) == 10 * (1 - Fraction(1 / 3)) + 2 * (1 - Fraction(0.1))
    G, err = shift_totals_with_error(third, 2)
    assert abs(Fraction(float(G[0])) - shift_total_exact(third, 0)) <= Fraction(float(err[0])) and err[0] < 1e-14


def test_exact_functions_reject_bad_arguments():
    sf = ebc_example_sf(3)
    with pytest.raises(ValueError, match="r must be an int <= 2"):
        dampen_exact(1.0, sf, 3)
    with pytest.raises(ValueError, match="r must be an int >= 0"):
        shift_total_exact(sf, -1)
    with pytest.raises(ValueError, match="u_r must be a finite real number"):
        dampen_exact(float("nan"), sf, 0)
    with pytest.raises(TypeError, match="u_r must be a finite real number"):
        dampen_exact("1", sf, 0)
    with pytest.raises(TypeError, match="must be a dpselect.SensitivityFunction"):
        dampen_exact(1.0, lambda t: 1.0, 0)
    slow = SensitivityFunction(lambda t: np.full(2, 0.25), 1.0)
    assert shift_total_exact(slow, 0, max_steps=50) == Fraction(75, 2)     # read as Δ from max_steps on
    assert [v.tolist() for v in shift_totals_with_error(slow, 2, max_steps=50)] == [[37.5, 37.5], [0.0, 0.0]]


def test_sensitivity_functions_are_safe_to_share_across_threads():
    rng = np.random.default_rng(3)
    n = 2000
    deg = rng.integers(1, 60, size=n)

    def ego(t, candidates=None):
        dd = deg if candidates is None else deg[candidates]
        rem = dd - t - 2
        return np.where(rem > 0, np.minimum(1.0, 2.0 / np.maximum(rem, 1)), 1.0)

    base = SensitivityFunction(ego, 1.0, n_candidates=n)
    el = SensitivityFunction(ego, 1.0, n_candidates=n, elementwise=True)
    half = SensitivityFunction(lambda t, candidates=None: 0.5 * ego(t, candidates), 1.0, n_candidates=n)
    sfs = {
        "plain": base, "elementwise": el, "constant": constant(n, 1.0), "bounded": base.bounded(40),
        "bounded_el": el.bounded(40), "flat": base.flat(), "maximum": maximum(base, half),
        "weighted_sum": weighted_sum([0.3, -0.7], [base, half]),
    }
    u = rng.random(n) * 12
    serial = {k: dampen(u, sf) for k, sf in sfs.items()}
    serial_err = {k: dampen_with_error(u, sf)[1] for k, sf in sfs.items()}
    barrier = threading.Barrier(4)

    def work(seed):
        barrier.wait()
        out = []
        order = list(sfs)
        np.random.default_rng(seed).shuffle(order)
        for _ in range(2):
            for k in order:
                out.append((k, dampen(u, sfs[k]), dampen_with_error(u, sfs[k])[1]))
        return out

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    assert sum(len(r) for r in results) == 4 * 2 * len(sfs)
    for res in results:
        for k, D, err in res:
            assert np.array_equal(D, serial[k]), k
            assert np.array_equal(err, serial_err[k]), k


# -- no RuntimeWarning leaks from the walks on extreme inputs --------------------------------------------
_DMAX = float(np.finfo(np.float64).max)


def _step_sf(n, low, delta, *, elementwise=False, bounded=None):
    """δ = low at distances 0 and 1, Δ from 2 on (the walk overflows for |u| or Δ near DBL_MAX)."""
    if elementwise:
        sf = SensitivityFunction(lambda t, candidates=None: np.where(np.asarray(t) < 2, low, delta)
                                 * np.ones(np.shape(candidates) if candidates is not None else n),
                                 delta, n_candidates=n, elementwise=True)
    else:
        sf = SensitivityFunction(lambda t, candidates=None: np.full(n if candidates is None else len(candidates),
                                                                    low if t < 2 else delta), delta)
    return sf if bounded is None else sf.bounded(bounded)


def test_no_overflow_warning_leaks_from_the_brief_example():
    """The overflow of D = |u| / Δ is handled (D = inf, err = inf, the exact sampler decides); it used to
    leak "overflow encountered in divide"."""
    import warnings

    import dpselect
    from dpselect.dampening import dampen_with_error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="exceed the float64 range"):
            dpselect.local_dampening_probabilities([1e300, 1.0], epsilon=1.0,
                                                   sensitivity_function=constant(2, 5e-324))
        D, err = dampen_with_error([1e300, 1.0], constant(2, 5e-324))
        assert D.tolist() == [np.inf, np.inf] and err.tolist() == [np.inf, np.inf]
        picks = [dpselect.local_dampening([1e300, 1.0], epsilon=1.0, sensitivity_function=constant(2, 5e-324),
                                          rng=s) for s in range(4)]
        assert picks == [0, 0, 0, 0]   # exact D: 1e300·2^1074 vs 2^1074


@pytest.mark.parametrize("elementwise", [False, True])
def test_walks_on_values_near_dbl_max_complete_without_warnings(elementwise):
    """b + δ, TwoSum and the error bounds overflow near DBL_MAX (both walkers, both shift walks): inf, handled
    as err = inf, no RuntimeWarning."""
    import warnings

    from fractions import Fraction

    from dpselect.dampening import dampen_exact, dampen_with_error, shift_totals_with_error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D, err = dampen_with_error([0.0, _DMAX], _step_sf(2, 0.0, 1.0, elementwise=elementwise))
        assert D.tolist() == [0.0, _DMAX] and err.tolist() == [0.0, np.inf]     # 2 + DBL_MAX/1
        # b = 0, DBL_MAX/4, DBL_MAX/2, then b + Δ overflows: D = 2 + (DBL_MAX − DBL_MAX/2)/DBL_MAX = 2.5 (the
        # block walker used to take b(2) = inf − Δ and return −inf)
        sf = _step_sf(2, 0.25 * _DMAX, _DMAX, elementwise=elementwise)
        D, err = dampen_with_error([0.0, -_DMAX], sf)
        assert D.tolist() == [0.0, -2.5] and dampen_exact(-_DMAX, sf, 1) == Fraction(-5, 2) and err[1] >= 0
        G, gerr = shift_totals_with_error(_step_sf(2, 0.0, _DMAX, elementwise=elementwise, bounded=3), 2)
        assert G.tolist() == [np.inf, np.inf] and gerr.tolist() == [np.inf, np.inf]   # 2·DBL_MAX


def test_walks_on_an_extreme_grid_leak_no_warning():
    """Scores and sensitivities from 5e-324 to DBL_MAX through dampen_with_error, shift_totals_with_error
    and both exact selectors (steps and blocks walkers) under warnings-as-errors."""
    import warnings

    import dpselect
    from dpselect.dampening import dampen_with_error, shift_totals_with_error
    vals = [0.0, 5e-324, 1.0, 1e300, _DMAX, -_DMAX]
    calls = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for delta in (5e-324, 1.0, 1e300, _DMAX):
            sfs = [constant(2, delta), _step_sf(2, 0.0, delta), _step_sf(2, 0.0, delta, bounded=3),
                   _step_sf(2, 0.25 * delta, delta, elementwise=True), _step_sf(2, 0.0, delta, elementwise=True)]
            for sf in sfs:
                shift_totals_with_error(sf, 2, max_steps=50) if sf.saturation_distance else None
                for x in vals:
                    for y in vals:
                        try:
                            dampen_with_error([x, y], sf, max_steps=50)
                            dpselect.local_dampening([x, y], epsilon=1.0, sensitivity_function=sf, max_steps=50, rng=0)
                            if sf.saturation_distance is not None or sf.name == "fn":
                                dpselect.shifted_local_dampening([x, y], epsilon=1.0, sensitivity_function=sf,
                                                                 max_steps=50, rng=0)
                        except ValueError as e:       # "did not resolve within max_steps" (δ = 0 walks)
                            assert "max_steps" in str(e)
                        calls += 1
    assert calls == 4 * 5 * 36


@pytest.mark.parametrize("elementwise", [False, True])
def test_a_warning_of_the_sensitivity_function_itself_still_shows(elementwise):
    """Only the walk's own arithmetic is silenced: the user's function runs in the caller's error state
    (here only inside the walk, which is the quiet one for |u| near DBL_MAX)."""
    calls = []

    def fn(t, candidates=None):
        calls.append(t)
        np.float64(1e308) * np.float64(10.0)     # overflows (RuntimeWarning), result discarded
        return np.where(np.asarray(t) < 1, 1.0, 2.0) * np.ones(2 if candidates is None else len(candidates))
    sf = SensitivityFunction(fn, 2.0, n_candidates=2, elementwise=elementwise)
    with pytest.warns(RuntimeWarning, match="overflow"):
        D = dampen([3.0, _DMAX], sf)
    assert calls and D.tolist() == [2.0, 1.0 + (_DMAX - 1.0) / 2.0]
