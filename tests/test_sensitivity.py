import numpy as np
import pytest

from dpselect import SensitivityFunction, constant, maximum, weighted_sum


def grow(t):
    return np.array([0.5, 1.0, 3.0]) * (t + 1)


def test_values_validated_and_clipped_to_global_sensitivity():
    sf = SensitivityFunction(grow, 2.0)
    assert sf(0).tolist() == [0.5, 1.0, 2.0]          # 3.0 clipped to Δ = 2 (Lemma 3.2.2)
    assert sf(1).tolist() == [1.0, 2.0, 2.0]
    assert sf.n_candidates == 3
    assert sf(0, candidates=[2, 0]).tolist() == [2.0, 0.5]  # no candidates kw: full call, then indexed


def test_candidates_keyword_is_used():
    calls = []

    def fn(t, candidates=None):
        calls.append(None if candidates is None else len(candidates))
        base = np.arange(5, dtype=float) / 10
        return base if candidates is None else base[candidates]

    sf = SensitivityFunction(fn, 1.0, n_candidates=5)
    assert sf.supports_candidates
    assert sf(3, candidates=np.array([4, 1])).tolist() == [0.4, 0.1]
    assert calls == [2]


@pytest.mark.parametrize("bad, msg", [
    (lambda t: np.array([0.1, np.nan, 0.2]), "finite values >= 0"),
    (lambda t: np.array([0.1, -0.1, 0.2]), "finite values >= 0"),
    (lambda t: np.ones((3, 1)), "1-D"),
])
def test_bad_values_raise(bad, msg):
    with pytest.raises(ValueError, match=msg):
        SensitivityFunction(bad, 1.0)(0)


def test_wrong_length_raises():
    sf = SensitivityFunction(lambda t: np.ones(3), 1.0, n_candidates=4)
    with pytest.raises(ValueError, match="returned 3 values at t=0, expected 4"):
        sf(0)


@pytest.mark.parametrize("g", [0, -1, float("nan"), float("inf")])
def test_bad_global_sensitivity(g):
    with pytest.raises(ValueError, match="global_sensitivity must be a finite number > 0"):
        SensitivityFunction(grow, g)


def test_not_callable_and_bad_t():
    with pytest.raises(TypeError, match="fn must be callable"):
        SensitivityFunction(3, 1.0)
    with pytest.raises(ValueError, match="t must be an int >= 0"):
        SensitivityFunction(grow, 1.0)(-1)


def test_bounded_forces_global_sensitivity_from_database_size():
    sf = SensitivityFunction(lambda t: np.full(2, 0.1), 1.0).bounded(3)
    assert sf(2).tolist() == [0.1, 0.1]
    assert sf(3).tolist() == [1.0, 1.0]
    assert sf.saturation_distance == 3


def test_flat_maximum_weighted_sum_constant():
    a = SensitivityFunction(lambda t: np.array([0.1, 0.4, 0.2]) + t / 10, 1.0)
    b = SensitivityFunction(lambda t: np.array([0.3, 0.1, 0.2]), 2.0)
    assert np.allclose(a.flat()(1), [0.5, 0.5, 0.5])
    m = maximum(a, b)
    assert m.global_sensitivity == 2.0 and np.allclose(m(0), [0.3, 0.4, 0.2])
    assert np.allclose(m(0, candidates=[1]), [0.4])
    w = weighted_sum([3.0, -2.0], [a, b])
    assert w.global_sensitivity == 3 * 1.0 + 2 * 2.0
    assert np.allclose(w(0), 3 * np.array([0.1, 0.4, 0.2]) + 2 * np.array([0.3, 0.1, 0.2]))
    assert constant(4, 2.5)(7).tolist() == [2.5] * 4


def test_weighted_sum_checks():
    a = constant(2, 1.0)
    with pytest.raises(ValueError, match="one entry per sensitivity function"):
        weighted_sum([1.0], [a, a])
    with pytest.raises(ValueError, match="must not all be zero"):
        weighted_sum([0.0, 0.0], [a, a])
    with pytest.raises(ValueError, match="disagree on the number of candidates"):
        weighted_sum([1.0, 1.0], [a, constant(3, 1.0)])
    with pytest.raises(TypeError, match="must be a SensitivityFunction"):
        maximum(a, lambda t: 1)
