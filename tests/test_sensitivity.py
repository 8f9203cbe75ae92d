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
    with pytest.raises(ValueError, match=r"returned the wrong number of values at t=0 \(one per candidate asked for\)$"):
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


# -- issue 11: bad values, bad candidates, aliasing, threads ---------------------------------------
def test_inf_is_an_error_not_clipped():
    sf = SensitivityFunction(lambda t: np.array([0.5, np.inf, 0.2]), 1.0, name="ratio")
    with pytest.raises(ValueError, match=r"'ratio' must return finite values >= 0 at every distance, and did not at t=0 \(inf"):
        sf(0)
    el = SensitivityFunction(lambda t, candidates=None: np.full(np.shape(candidates), np.inf), 1.0,
                             n_candidates=2, elementwise=True)
    with pytest.raises(ValueError, match="must return finite values >= 0 at every distance"):
        el.at(np.array([0, 1]), np.array([0, 1]))


@pytest.mark.parametrize("out", [["a", "b", "c"], np.array(["1", "2", "3"]), [1 + 1j, 2, 3], [None, 1.0, 2.0]])
def test_non_numeric_values_are_a_type_error_naming_the_function(out):
    sf = SensitivityFunction(lambda t: out, 1.0, name="strings")
    with pytest.raises(TypeError, match=r"sensitivity function 'strings' must return real numbers, got dtype"):
        sf(0)


def test_int_and_object_float_values_accepted():
    assert SensitivityFunction(lambda t: [0, 1, 2], 1.5)(0).tolist() == [0.0, 1.0, 1.5]
    assert SensitivityFunction(lambda t: np.array([0.25, 1], dtype=object), 1.0)(0).tolist() == [0.25, 1.0]


@pytest.mark.parametrize("with_kw", [False, True])
@pytest.mark.parametrize("bad, exc, msg", [
    ([-1], ValueError, r"^candidates must be indices in \[0, n_candidates\) of '(bounded\()?g\)?'$"),
    ([0, 7], ValueError, r"^candidates must be indices in \[0, n_candidates\) of '(bounded\()?g\)?'$"),
    ([0.5], TypeError, r"candidates must be a 1-D array of int indices, got dtype float64"),
    ([True], TypeError, r"candidates must be a 1-D array of int indices, got dtype bool"),
    ([[0, 1]], TypeError, r"candidates must be a 1-D array of int indices, got dtype int64 shape \(1, 2\)"),
    (["0"], TypeError, r"candidates must be a 1-D array of int indices, got dtype <U1"),
])
def test_bad_candidates(with_kw, bad, exc, msg):
    base = np.array([0.1, 0.2, 0.3])
    fn = (lambda t, candidates=None: base if candidates is None else base[candidates]) if with_kw else (lambda t: base)
    sf = SensitivityFunction(fn, 1.0, name="g")
    with pytest.raises(exc, match=msg):
        sf(0, candidates=bad)
    # also past the saturation distance, where no value is computed
    with pytest.raises(exc, match=msg):
        sf.bounded(2)(5, candidates=bad)


def test_candidates_learn_n_when_unknown_and_empty_is_fine():
    sf = SensitivityFunction(lambda t, candidates=None: np.ones(4) if candidates is None else np.ones(len(candidates)),
                             1.0)
    assert sf.n_candidates is None
    with pytest.raises(ValueError, match=r"indices in \[0, n_candidates\)"):
        sf(0, candidates=[4])
    assert sf(0, candidates=np.array([], dtype=np.int64)).shape == (0,)
    assert sf(0, candidates=[]).shape == (0,)


def test_at_checks_distances_and_candidates():
    sf = SensitivityFunction(lambda t: np.array([0.1, 0.2]), 1.0)
    assert sf.at(np.array([0, 3]), np.array([1, 0])).tolist() == [0.2, 0.1]
    with pytest.raises(TypeError, match="ts must be an array of int distances, got dtype float64"):
        sf.at(np.array([0.5]), np.array([0]))
    with pytest.raises(ValueError, match=r"^candidates must be indices in \[0, n_candidates\) of '<lambda>'$"):
        sf.at(np.array([0]), np.array([2]))


def test_results_never_alias_the_functions_cache():
    cache = np.array([0.1, 0.2, 0.3])
    sf = SensitivityFunction(lambda t, candidates=None: cache if candidates is None else cache[candidates], 1.0)
    for out in (sf(0), sf.bounded(10)(0), sf.flat()(0), maximum(sf, sf)(0)):
        out[:] = 99.0
    assert cache.tolist() == [0.1, 0.2, 0.3]
    assert sf(0).tolist() == [0.1, 0.2, 0.3]
    view_cache = np.array([[0.5, 0.6], [2.0, 3.0]])
    sf2 = SensitivityFunction(lambda t: view_cache[0], 1.0)  # a view into a larger cache
    v = sf2(0)
    v[0] = -1.0
    assert view_cache[0].tolist() == [0.5, 0.6]
    # clipping happens on the copy, never in the function's array
    big = np.array([5.0, 0.5])
    assert SensitivityFunction(lambda t: big, 1.0)(0).tolist() == [1.0, 0.5]
    assert big.tolist() == [5.0, 0.5]


@pytest.mark.parametrize("weights", [["a", "b"], ["1", "2"], "ab", None, [1.0, None]])
def test_weighted_sum_non_numeric_weights(weights):
    a = constant(2, 1.0)
    with pytest.raises(TypeError, match=r"weights must be a 1-D array of 2 finite numbers, got"):
        weighted_sum(weights, [a, a])


def test_compositions_shared_across_threads_give_single_thread_values():
    import sys
    import threading

    rng = np.random.default_rng(11)
    base = rng.uniform(0.0, 1.5, size=(3, 50))
    sfs = [SensitivityFunction(lambda t, candidates=None, b=b: (b * (1 + t) if candidates is None
                                                              else b[candidates] * (1 + t)), 1.0) for b in base]
    shared = [maximum(*sfs), weighted_sum([1.0, -2.0, 0.5], sfs), sfs[0].bounded(4), sfs[1].flat(), constant(50, 2.0)]
    idx = np.arange(0, 50, 3)
    expected = [[(f(t), f(t, idx)) for t in range(6)] for f in shared]
    wrong = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def work():
            for _ in range(40):
                for f, exp in zip(shared, expected):
                    for t in range(6):
                        if not (np.array_equal(f(t), exp[t][0]) and np.array_equal(f(t, idx), exp[t][1])):
                            wrong.append((f.name, t))
        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert wrong == []


def test_library_sensitivity_function_caches_are_not_exposed():
    # issue 11: grouped_median_sensitivity(...)(0) used to return its internal cache
    from dpselect.utilities.median import grouped_median_sensitivity

    sf = grouped_median_sensitivity([1.0, 2.0, 3.0, 4.0], [2, 3, 1, 4], 10.0)
    first = sf(0)
    expected = first.copy()
    first[:] = 123.0
    sub = sf(0, np.array([1, 2]))
    sub[:] = -1.0
    np.testing.assert_array_equal(sf(0), expected)
    np.testing.assert_array_equal(sf(0, np.array([1, 2])), expected[[1, 2]])


def test_constructor_flags_checked():
    with pytest.raises(TypeError, match="elementwise must be a bool, got 'no'"):
        SensitivityFunction(grow, 1.0, elementwise="no")
    with pytest.raises(TypeError, match="name must be a str, got 3"):
        SensitivityFunction(grow, 1.0, name=3)
    with pytest.raises(ValueError, match="n_candidates must be an int >= 1, got 0"):
        SensitivityFunction(grow, 1.0, n_candidates=0)
    with pytest.raises(ValueError, match="saturation_distance must be an int >= 0, got -1"):
        SensitivityFunction(grow, 1.0, saturation_distance=-1)


def test_table_with_and_without_block_hook():
    # issue 22 item 6: table(t0, t1, candidates) = at() on the grid; a block hook gives the same values by
    # broadcasting, validated (shape, NaN, negative) and clipped to Δ like every other value
    vals = np.array([0.1, 0.5, 2.0])

    def fn(t, candidates=None):
        t = np.asarray(t)
        v = vals if candidates is None else vals[candidates]
        return v * (1 + t)

    plain = SensitivityFunction(fn, 1.5, n_candidates=3, elementwise=True)
    hooked = SensitivityFunction(fn, 1.5, n_candidates=3, elementwise=True,
                                 block=lambda t0, t1, c: vals[None, c] * (1 + np.arange(t0, t1)[:, None]))
    cand = np.array([2, 0, 1, 0])
    want = np.minimum(vals[cand][:, None] * (1 + np.arange(3, 7))[None, :], 1.5)
    assert np.array_equal(plain.table(3, 7, cand), want)
    assert np.array_equal(hooked.table(3, 7, cand), want)
    assert np.array_equal(hooked.table(3, 7, cand, by_distance=True), want.T)
    assert hooked.table(3, 3, cand).shape == (4, 0)
    b = hooked.bounded(5)
    assert np.array_equal(b.table(3, 7, cand), np.where(np.arange(3, 7)[None, :] >= 5, 1.5, want))
    bad_shape = SensitivityFunction(fn, 1.5, n_candidates=3, block=lambda t0, t1, c: np.zeros((len(c), t1 - t0)))
    with pytest.raises(ValueError, match="returned shape"):
        bad_shape.table(0, 2, cand)
    nan = SensitivityFunction(fn, 1.5, n_candidates=3, block=lambda t0, t1, c: np.full((t1 - t0, len(c)), np.nan))
    with pytest.raises(ValueError, match="finite values >= 0"):
        nan.table(0, 2, cand)
    with pytest.raises(TypeError, match="block must be callable"):
        SensitivityFunction(fn, 1.0, block=3)


def test_compositions_keep_far_probe_off():
    # a function that opted out of the dampening walk's far check (cost growing with t) keeps it off when
    # wrapped: flat, maximum, weighted_sum and bounded carry the flag over (issue 22 item 4 follow-up)
    slow = constant(3, 1.0)
    slow.far_probe = False
    fast = constant(3, 1.0)
    assert slow.flat().far_probe is False and fast.flat().far_probe is True
    assert maximum(fast, slow).far_probe is False and maximum(fast, fast).far_probe is True
    assert weighted_sum([1, 2], [fast, slow]).far_probe is False
    assert weighted_sum([1, 0], [fast, slow]).far_probe is True     # a zero weight drops the function
    assert slow.bounded(4).far_probe is False
