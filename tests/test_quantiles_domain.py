"""Issue 33 (2(b), 2(c), 2(d), the hangs): every quantile release completes on every dataset of its public
domain, or refuses before any charge or draw, identically on all of them, with messages that name no private
quantity. An exhaustive generator over tiny datasets (values incl. ±1e308, n <= 3, both neighbour models, every
method) plus one test per reviewed case."""
from __future__ import annotations

import functools
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import clipping_bounds
from dpselect.quantiles._median import _upper_lengths
from dpselect.quantiles import _api, _data, _joint, _unbounded
from dpselect.quantiles._recursive import recursive_log_law
from dpselect.quantiles._single import single_probabilities

_MAX = float(np.finfo(np.float64).max)


def _call(fn, *args, **kwargs):
    """(outcome, accountant, generator state before, after): outcome ("ok", value) or ("refused", type, message);
    warnings are errors (a warning that depends on the data is a release too)."""
    acc = dpselect.Accountant(epsilon=100.0)
    gen = np.random.default_rng(7)
    before = gen.bit_generator.state
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = fn(*args, rng=gen, accountant=acc, **kwargs)
        except Exception as exc:   # noqa: BLE001 - the point is to see every kind of failure
            return ("refused", type(exc).__name__, str(exc)), acc, before, gen.bit_generator.state
    return ("ok", out), acc, before, gen.bit_generator.state


# ---------------------------------------------------------------------------------------------
# the generator: every dataset of a tiny domain, every method, both neighbour models
# ---------------------------------------------------------------------------------------------
#: Record values: the extremes ±1e308 and the largest float, values outside the small bounds, and inside;
#: none of their reprs is a substring of a public argument's repr below (but 1e308, a bound of one config).
_VALUES = (-1e308, -3.75, 0.4375, 1e308, _MAX)
_QS = [0.3, 0.7]
_CONFIGS = {
    "independent (-2, 2)": dict(bounds=(-2.0, 2.0), method="independent"),
    "recursive (-2, 2)": dict(bounds=(-2.0, 2.0), method="recursive"),
    "joint (-2, 2)": dict(bounds=(-2.0, 2.0), method="joint"),
    "auto (-2, 2)": dict(bounds=(-2.0, 2.0)),
    "independent wide": dict(bounds=(-8e307, 8e307), method="independent"),
    "recursive wide": dict(bounds=(-8e307, 8e307), method="recursive"),
    "joint wide": dict(bounds=(-8e307, 8e307), method="joint"),
    "width overflows": dict(bounds=(-1e308, 1e308), method="recursive"),
    "grid auto": dict(candidates=[-2.0, 0.0, 2.0]),
    "grid recursive": dict(candidates=[-2.0, 0.0, 2.0], method="recursive"),
    "unbounded": dict(),
    "unbounded, 10^6 copies of each record": dict(weight=10 ** 6),
    "joint huge epsilon": dict(bounds=(-2.0, 2.0), method="joint", epsilon=1e150),
    "tiny epsilon": dict(bounds=(-2.0, 2.0), epsilon=5e-324),
}


def _datasets(max_n=3):
    for n in range(max_n + 1):
        yield from itertools.combinations_with_replacement(_VALUES, n)


@functools.lru_cache(maxsize=None)
def _outcomes(neighbours):
    """{config: {dataset: (outcome, accountant, state before, state after)}} (values given as records, and,
    for n >= 1, the same records as a histogram with an empty bin: the outcome must not depend on the form)."""
    res: dict = {}
    for name, cfg in _CONFIGS.items():
        kw = dict(epsilon=1.0, neighbours=neighbours)
        kw.update(cfg)
        weight = kw.pop("weight", 1)      # records repeated (as counts): the data, not the noise, decide then
        for x in _datasets():
            v, c = np.unique(np.array(x, dtype=float), return_counts=True)
            if weight == 1:
                res.setdefault(name, {})[x] = _call(dpselect.quantiles, list(x), _QS, **kw)
            res.setdefault(name, {})[("counts",) + x] = _call(dpselect.quantiles, np.append(v, 5.5), _QS,
                                                              counts=np.append(c * weight, 0), **kw)
    return res


def _kind(outcome):
    return outcome[0] if outcome[0] == "ok" else outcome


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_every_dataset_of_the_domain_completes_or_is_refused_up_front_identically(neighbours):
    for name, by_data in _outcomes(neighbours).items():
        # one behaviour on every dataset of the domain: under add/remove on all of them (n = 0 included, n is
        # private); under replace-one on all datasets of each size (n is public there)
        groups: dict = {}
        for x, o in by_data.items():
            size = len([r for r in x if r != "counts"])
            groups.setdefault(size if neighbours == "replace_one" else 0, set()).add(_kind(o[0]))
        for size, kinds in groups.items():
            assert len(kinds) == 1, (neighbours, name, size, kinds)
        for x, (out, acc, before, after) in by_data.items():
            if out[0] == "ok":
                v = out[1]
                assert v.shape == (2,) and np.all(np.isfinite(v)), (name, x, v)
                assert len(acc.history) == 1 and acc.history[0].label == "quantiles"
                cfg = _CONFIGS[name]
                if "bounds" in cfg:
                    assert np.all((cfg["bounds"][0] <= v) & (v <= cfg["bounds"][1])), (name, x, v)
                if "candidates" in cfg:
                    assert set(v.tolist()) <= set(cfg["candidates"])
            else:
                # refused before the charge and before any random bit
                assert len(acc.history) == 0 and before == after, (name, x, out)
                for r in _VALUES:       # (a value that is also a public argument, e.g. a bound, may be named)
                    if repr(r) not in repr(_CONFIGS[name]):
                        assert repr(r) not in out[2] and str(r) not in out[2], (name, x, out)


def test_generator_sees_the_review_classes():
    """The configurations the generator holds do exercise each class: a refusal up front (width, add/remove
    joint and unbounded, huge ε with joint, tiny ε) and a completion on n = 0 under add/remove."""
    rep = _outcomes("replace_one")
    add = _outcomes("add_remove")
    assert rep["width overflows"][(1e308,)][0][:2] == ("refused", "ValueError")
    assert "width" in rep["width overflows"][(0.4375,)][0][2]
    assert "joint" in rep["joint huge epsilon"][(0.4375,)][0][2]
    assert "too small" in rep["tiny epsilon"][(0.4375,)][0][2]
    assert add["joint (-2, 2)"][()][0][0] == "refused" and add["unbounded"][()][0][0] == "refused"
    for name in ("independent (-2, 2)", "recursive (-2, 2)", "auto (-2, 2)", "grid auto", "grid recursive"):
        assert add[name][()][0][0] == "ok" and add[name][("counts",)][0][0] == "ok", name
    assert rep["unbounded"][(1e308, 1e308, 1e308)][0][0] == "ok"


def test_clipping_bounds_on_every_dataset_of_the_domain():
    """clipping_bounds (replace-one, n public): for each n >= 1 every dataset completes; n = 0 is refused up
    front with one message."""
    for n in range(4):
        kinds = set()
        for x in itertools.combinations_with_replacement(_VALUES, n):
            out, acc, before, after = _call(clipping_bounds, list(x), epsilon=1.0)
            kinds.add(_kind(out))
            if out[0] == "ok":
                lo, hi = out[1]
                assert math.isfinite(lo) and math.isfinite(hi) and lo < hi and len(acc.history) == 1
            else:
                assert len(acc.history) == 0 and before == after
        assert kinds == ({"ok"} if n else {("refused", "ValueError",
                                             "values must hold at least one record (n is public under "
                                             "replace-one)")}), (n, kinds)


# ---------------------------------------------------------------------------------------------
# 2(b): bounds whose width overflows, refused before the charge; intermediates overflow-safe
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [[0.9e308], [0.0]])
def test_overflowing_width_is_refused_before_the_charge_on_both_neighbours(x):
    out, acc, before, after = _call(dpselect.quantile, x, 0.5, epsilon=1.0, bounds=(-1e308, 1e308))
    assert out[:2] == ("refused", "ValueError") and "width" in out[2]
    assert len(acc.history) == 0 and before == after


def test_width_check_is_exact():
    # the largest width accepted: exactly the largest float; one ulp more (as a real number) is refused
    assert _api._check_bounds((0.0, _MAX)) == (0.0, _MAX)
    assert _api._check_bounds((-_MAX / 2, _MAX / 2)) == (-_MAX / 2, _MAX / 2)
    with pytest.raises(ValueError, match="width"):
        _api._check_bounds((-5e-324, _MAX))


def test_widest_bounds_release_on_extreme_records():
    for meth in ("independent", "recursive", "joint"):
        for x in ([_MAX / 2], [-_MAX / 2, _MAX / 2, 0.0]):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                v = dpselect.quantiles(x, [0.25, 0.75], epsilon=1.0, bounds=(-_MAX / 2, _MAX / 2), method=meth,
                                       rng=3)
            assert np.all(np.isfinite(v)) and np.all(np.abs(v) <= _MAX / 2)


def test_upper_lengths_is_overflow_safe():
    lo = np.array([-1e308, 0.0, -5e-324, 1.0, -_MAX, 0.1])
    hi = np.array([0.9e308, _MAX, _MAX, 1.5, _MAX, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = _upper_lengths(lo, hi)
    assert w[0] == math.inf and w[2] == math.inf and w[4] == math.inf
    assert w[1] == _MAX and w[3] == 0.5
    exact = Fraction(0.3) - Fraction(0.1)
    assert Fraction(float(w[5])) >= exact and Fraction(float(np.nextafter(w[5], 0))) < exact


# ---------------------------------------------------------------------------------------------
# 2(c): n = 0 under add/remove releases from each method's law
# ---------------------------------------------------------------------------------------------
def test_empty_dataset_under_add_remove_has_each_methods_law():
    empty = (np.zeros(0), np.zeros(0, dtype=np.int64))
    # independent: the interval mechanism on one interval, [lo, hi], probability 1 (uniform)
    lo_, hi_, p = single_probabilities(*empty, -2.0, 2.0, 0.3, 0.5)
    assert lo_.tolist() == [-2.0] and hi_.tolist() == [2.0] and p.tolist() == [1.0]
    # recursive (relative targets): q = 0.7 first, uniform on [−2, 2] (1/4), then q = 0.3 uniform on [−2, x_0.7]
    qs = np.array([0.3, 0.7])
    out = np.array([-1.0, 1.0])
    ll = recursive_log_law(*empty, qs, out, epsilon=1.0, domain=(-2.0, 2.0), targets="relative", add_remove=True)
    assert ll == pytest.approx(-math.log(4.0) - math.log(3.0))
    for kw in (dict(bounds=(-2.0, 2.0), method="independent"), dict(bounds=(-2.0, 2.0), method="recursive"),
               dict(bounds=(-2.0, 2.0)), dict(candidates=[-2.0, 0.0, 2.0])):
        v = dpselect.quantiles([], [0.3, 0.7], epsilon=1.0, neighbours="add_remove", rng=0, **kw)
        w = dpselect.quantiles([1.0], [0.3, 0.7], counts=[0], epsilon=1.0, neighbours="add_remove", rng=0, **kw)
        assert v.shape == (2,) and np.array_equal(v, w)


def test_empty_grid_release_is_uniform_on_the_candidates():
    draws = [dpselect.quantile([], 0.5, epsilon=5.0, candidates=[0.0, 1.0, 2.0, 3.0], neighbours="add_remove",
                               rng=s) for s in range(4000)]
    freq = np.bincount(np.asarray(draws, dtype=int), minlength=4) / 4000
    assert np.all(np.abs(freq - 0.25) < 0.03)


# ---------------------------------------------------------------------------------------------
# 2(d): records outside the bounds are clipped (no message with a value); data messages are public
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["independent", "recursive", "joint"])
def test_out_of_bounds_records_are_clipped_into_the_bounds(method):
    x = np.array([-7.0, 0.5, 1.25, 3.0, 12.5, 9.0])
    a = dpselect.quantiles(x, [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 10.0), method=method, rng=5)
    b = dpselect.quantiles(np.clip(x, 0.0, 10.0), [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 10.0),
                           method=method, rng=5)
    np.testing.assert_array_equal(a, b)


def test_nan_records_get_one_message():
    msgs = {_call(dpselect.quantiles, x, [0.5], epsilon=1.0, bounds=(0.0, 4.0))[0] for x in
            ([1.0, float("nan"), 2.0], [float("nan")], [1.0, 2.0, 3.0, float("nan")])}
    assert len(msgs) == 1 and next(iter(msgs))[:2] == ("refused", "ValueError")


@pytest.mark.parametrize("method", ["independent", "recursive", "joint"])
def test_infinite_records_are_clipped_like_any_record_outside_the_bounds(method):
    """±inf is an ordered value: clipped into the bounds (as dpselect.median does), never refused (a refusal
    would depend on the data); the release equals the one on the clipped records."""
    x = np.array([float("-inf"), 0.5, 1.25, float("inf"), 3.0])
    a = dpselect.quantiles(x, [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 4.0), method=method, rng=3)
    b = dpselect.quantiles(np.clip(x, 0.0, 4.0), [0.25, 0.5, 0.75], epsilon=2.0, bounds=(0.0, 4.0),
                           method=method, rng=3)
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(dpselect.quantile([float("inf")] * 3, 0.5, epsilon=1.0, rng=0))   # bounds=None too


@pytest.mark.parametrize("values, counts, exc, rule", [
    ([1.0, float("nan"), 2.0], None, ValueError, "NaN"),
    ([[1.0, 2.0]], None, ValueError, "1-D"),
    ([[1.0], [2.0, 3.0]], None, TypeError, "1-D array"),
    (["abcdefghijklmnopqrstu"], None, TypeError, "real numbers"),
    ([1.0, 2.0], [3, -17], ValueError, "negative"),
    ([1.0, 2.0], [3, 2.5], TypeError, "not an integer"),
    ([1.0, 2.0], [3], ValueError, "another shape"),
    ([1.0, 2.0], [2 ** 62, 2 ** 62], ValueError, "sum is larger"),
    ([1.0, 2.0], [2 ** 63 - 1, 2 ** 63 - 1], ValueError, "sum is larger"),
    ([1.0, 2.0], np.array([2 ** 64 - 1, 1], dtype=np.uint64), ValueError, "sum is larger"),
    ([1.0, 2.0], [2 ** 70, 1], ValueError, "sum is larger"),
])
@pytest.mark.parametrize("fn", ["quantiles", "clipping_bounds"])
def test_data_messages_name_no_record_count_or_size(values, counts, exc, rule, fn):
    call = (lambda **k: dpselect.quantiles(values, [0.5], bounds=(0.0, 4.0), **k)) if fn == "quantiles" else \
        (lambda **k: clipping_bounds(values, **k))
    out, acc, before, after = _call(call, epsilon=1.0, counts=counts)
    assert out[:2] == ("refused", exc.__name__) and rule in out[2], out
    assert len(acc.history) == 0 and before == after
    for private in ("17", "2.5", "abcdefghijklmnopqrstu", str(2 ** 62), str(2 ** 63 - 1),
                    str(2 ** 64 - 1), str(2 ** 70), str(2 ** 63), str(2 ** 64), "shape (", "(2,)", "(1,)", "[1]"):
        assert private not in out[2], (private, out[2])


# ---------------------------------------------------------------------------------------------
# clipping_bounds: totals past int64 refused before the charge, bounded work at n = 2^48
# ---------------------------------------------------------------------------------------------
def test_clipping_bounds_refuses_huge_totals_before_the_charge():
    for counts in ([2 ** 62, 2 ** 62], [2 ** 63 - 1, 2 ** 63 - 1, 3], [2 ** 49, 1]):
        out, acc, before, after = _call(clipping_bounds, [1.0, 2.0], epsilon=1.0, counts=counts)
        assert out[0] == "refused" and "2**49" in out[2] and len(acc.history) == 0 and before == after
    out, acc, _, _ = _call(clipping_bounds, [1.0, 2.0], epsilon=1.0, counts=[2 ** 48, 2 ** 48])
    assert out[0] == "ok" and -0.01 < out[1][0] < 0.01 and 2.0 <= out[1][1] < 2.1


def test_clipping_bounds_at_n_2_48_decides_every_step_in_floats(monkeypatch):
    """The hang: each AboveThreshold step whose count is far above the threshold was undecided in floats and
    went to the decimal path with a 10^(−10^13) tail. Now no step needs it (bounded work)."""
    calls = []
    real = _unbounded._exact_decide
    monkeypatch.setattr(_unbounded, "_exact_decide", lambda *a: calls.append(a) or real(*a))
    for s in range(5):
        for v in ([1.0, 2.0], [0.0, 1.0], [-5.0, -1.0]):
            clipping_bounds(v, counts=[2 ** 47, 2 ** 47], epsilon=1.0, rng=s)
    assert calls == []


def test_fast_decide_slack_is_relative_to_the_tail():
    eps = 0.5
    c = np.array([-(2 ** 48), -1000, -40, 0, 1, 40, 2 ** 48], dtype=np.int64)
    w = np.array([2 ** 63] * c.size, dtype=np.uint64)            # U = 1/2
    dec = _unbounded._fast_decide(c, w, eps)
    # P(ν >= c) is ~1 for c <= −40, 1/(1 + p) ≈ 0.62 at c = 0, p/(1 + p) ≈ 0.38 at 1, ~0 for c >= 40
    assert dec.tolist() == [1, 1, 1, 1, 0, 0, 0]
    # the object (Python int) path decides as the int64 path
    dec_obj = _unbounded._fast_decide(c.astype(object), w, eps)
    assert dec_obj.tolist() == dec.tolist()


def test_tail_enclosure_shortcut_is_a_valid_enclosure():
    for c, eps in [(10 ** 6, 0.5), (-(10 ** 6), 0.5), (300, 1.0), (-300, 1.0), (200, 0.75), (-200, 0.75)]:
        lo, hi = _unbounded._tail_enclosure(c, eps, 60)
        true_log_tail = -eps * (c if c >= 1 else 1 - c) - math.log1p(math.exp(-eps))
        if c >= 1:
            assert lo == 0 or math.log(lo) <= true_log_tail
            assert math.log(hi) >= true_log_tail
        else:
            assert lo <= 1 and hi == 1 and (1 - lo) > 0 and math.log(1 - lo) >= true_log_tail


def test_exact_decide_on_a_huge_threshold_gap_needs_no_huge_decimal(monkeypatch):
    """The decimal path for c = ±2^48 (U just below 1, or just above 0): bounded work, no e^(−2^47) evaluated."""
    real = _unbounded.Dec

    class Guarded(real):
        def exp(self, lo, hi):
            assert abs(lo) < 10 ** 4 and abs(hi) < 10 ** 4, "a decimal exp of a huge argument"
            return super().exp(lo, hi)

    monkeypatch.setattr(_unbounded, "Dec", Guarded)
    gen = np.random.default_rng(0)
    assert _unbounded._exact_decide(-(2 ** 48), 2 ** 64 - 1, 0.5, gen) is True      # P(ν >= c) = 1 − 10^-(10^13)
    assert _unbounded._exact_decide(2 ** 48, 0, 0.5, gen) is False                  # P(ν >= c) = 10^-(10^13)


def test_tiny_epsilon_noise_beyond_int64_is_exact_not_an_error():
    """ε = 1e-290: the noisy threshold of a search does not fit in 64 bits; the search runs on Python ints
    (it raised OverflowError, after the charge)."""
    for s in range(3):
        v = dpselect.quantiles([1.0, 2.0, 3.0], [0.2, 0.5], epsilon=1e-290, rng=s)
        lo, hi = clipping_bounds([1.0, 2.0], epsilon=1e-290, rng=s)
        assert np.all(np.isfinite(v)) and math.isfinite(lo) and math.isfinite(hi) and lo < hi


@pytest.mark.parametrize("fn", ["quantiles", "clipping_bounds"])
def test_epsilon_that_underflows_a_share_is_refused_before_the_charge(fn):
    call = (lambda **k: dpselect.quantiles([1.0, 2.0], [0.2, 0.5], bounds=(0.0, 3.0), **k)) \
        if fn == "quantiles" else (lambda **k: clipping_bounds([1.0, 2.0], **k))
    out, acc, before, after = _call(call, epsilon=5e-324)
    assert out[0] == "refused" and "too small" in out[2] and len(acc.history) == 0 and before == after


def test_unbounded_upper_end_never_overflows():
    for s in range(6):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            v = dpselect.quantiles([_MAX], [0.1, 0.5, 0.9], counts=[10 ** 6], epsilon=1.0, rng=s)
        assert np.all(np.isfinite(v))
    assert _unbounded._upper_end(1.5e308, 1e308) == _MAX and _unbounded._upper_end(-1.0, 3.0) == 2.0


# ---------------------------------------------------------------------------------------------
# joint: the work is bounded up front
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon, counts", [(1e300, [2, 3]), (1.0, [2 ** 44, 2 ** 44]), (1.0, [2 ** 48, 2 ** 48])])
def test_joint_refuses_unbounded_work_before_the_charge(epsilon, counts, monkeypatch):
    def never(*a, **k):      # a release that got past the check would loop for ever: fail at once instead
        raise AssertionError("the joint sampler was started")

    monkeypatch.setattr(_joint, "_Problem", never)
    out, acc, before, after = _call(dpselect.quantiles, [1.0, 2.0], [0.25, 0.5, 0.75], counts=counts,
                                    epsilon=epsilon, bounds=(0.0, 3.0), method="joint")
    assert out[:2] == ("refused", "ValueError") and "method='joint' cannot sample" in out[2]
    if counts[0] > 10:
        assert str(counts[0]) not in out[2] and str(2 * counts[0]) not in out[2]
    assert len(acc.history) == 0 and before == after


def test_joint_accepts_large_n_at_small_error_bound():
    v = dpselect.quantiles([1.0, 2.0], [0.25, 0.5, 0.75], counts=[2 ** 29, 2 ** 29], epsilon=1.0,
                           bounds=(0.0, 3.0), method="joint", rng=0)
    assert np.all(np.isfinite(v)) and np.all(np.diff(v) >= 0) and 0.0 <= v[0] and v[-1] <= 3.0


def test_joint_public_bound_is_above_the_actual_error_bound():
    rng = np.random.default_rng(1)
    for _ in range(40):
        k = int(rng.integers(1, 30))
        vals = np.unique(rng.uniform(-1e3, 1e3, size=k))
        cnt = rng.integers(1, 50, size=vals.size).astype(np.int64)
        m = int(rng.integers(1, 6))
        qs = np.unique(rng.uniform(0, 1, size=m))
        eps = float(10 ** rng.uniform(-3, 3))
        prob = _joint._Problem(vals, cnt, qs, eps, -1e3, 1e3)
        assert prob.Delta <= _joint.delta_bound(eps, int(cnt.sum()), qs.size)
    # tiny intervals (log-lengths near −745) and the widest domain
    vals = np.array([0.0, 5e-324, 1e-323, 1e308])
    cnt = np.array([3, 1, 2, 4], dtype=np.int64)
    prob = _joint._Problem(vals, cnt, np.array([0.2, 0.5, 0.9]), 3.0, -5e307, 1.5e308)
    assert prob.Delta <= _joint.delta_bound(3.0, 10, 3)


def test_data_check_helpers_accept_the_empty_dataset():
    assert _data.check_values([]).shape == (0,)
    assert _data.check_counts([0, 0], 2).tolist() == [0, 0]
    vals, cnt = _api._group([], None)
    assert vals.shape == (0,) and cnt.shape == (0,)
