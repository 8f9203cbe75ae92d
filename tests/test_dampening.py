import numpy as np
import pytest

from dpselect import SensitivityFunction, constant, dampen
from dpselect.dampening import shift_totals


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


def test_max_steps_raises_instead_of_looping_forever():
    sf = SensitivityFunction(lambda t: np.full(2, 1e-6), 1.0)
    with pytest.raises(ValueError, match="did not resolve 1 candidate"):
        dampen([0.0, 5.0], sf, max_steps=1000)


def test_shift_totals_and_unbounded_error():
    assert shift_totals(ebc_example_sf(2), 2).tolist() == [2.0, 2.0]
    sf = SensitivityFunction(lambda t: np.array([0.5, 1.0]), 1.0)
    with pytest.raises(ValueError, match="has not reached its global sensitivity"):
        shift_totals(sf, 2, max_steps=50)
    assert shift_totals(sf.bounded(10), 2).tolist() == [5.0, 0.0]


def test_saturation_is_sticky():
    # δ reaches Δ at t = 1 and (non-monotonically) drops afterwards: treated as Δ from then on.
    sf = SensitivityFunction(lambda t: np.full(1, [0.5, 1.0, 0.1][min(t, 2)]), 1.0)
    assert dampen([3.5], sf)[0] == pytest.approx(1 + (3.5 - 0.5) / 1.0)
    assert shift_totals(sf, 1).tolist() == [0.5]


def test_sensitivity_function_size_mismatch():
    with pytest.raises(ValueError, match="is for 8 candidates but utilities has 3"):
        dampen([1.0, 2.0, 3.0], ebc_example_sf())
    with pytest.raises(TypeError, match="must be a dpselect.SensitivityFunction"):
        dampen([1.0], lambda t: 1.0)


def test_bounded_function_resolves_at_its_saturation_distance_whatever_max_steps():
    sf = SensitivityFunction(lambda t: np.full(2, 1e-9), 1.0).bounded(5)
    # b(5) = 5e-9; from t = 5 on each step adds Δ = 1
    assert np.allclose(dampen([0.5, 100.0], sf, max_steps=2), [5 + (0.5 - 5e-9), 5 + (100 - 5e-9)])
    assert np.allclose(shift_totals(sf, 2, max_steps=2), [5 * (1 - 1e-9)] * 2)
