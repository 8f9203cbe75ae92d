"""Deprecations in one place (dpselect._compat): each old spelling warns once, from the user's line, naming the
release that removes it, and gives exactly what the new spelling gives."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from dpselect._compat import (
    NOT_PASSED,
    REMOVED_IN,
    DpselectDeprecationWarning,
    deprecation,
    keyword_only,
    old_call_form,
    renamed_parameter,
    renamed_values,
    replaced_parameter,
)


def _record(call):
    """The result of ``call()`` and the warnings it issued (all of them, always)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = call()
    return out, rec


def _assert_deprecation(rec, *fragments):
    assert len(rec) == 1, [str(r.message) for r in rec]
    w = rec[0]
    assert w.category is DpselectDeprecationWarning and issubclass(w.category, DeprecationWarning)
    msg = str(w.message)
    assert f"will be removed in dpselect {REMOVED_IN}" in msg
    for f in fragments:
        assert f in msg, msg
    assert w.filename == __file__  # the user's line, not the library's


def test_removal_version_is_the_next_minor_release():
    assert REMOVED_IN == "0.2.0"
    assert str(deprecation("f(a=...)", "b=...")) == ("f(a=...) is deprecated and will be removed in dpselect 0.2.0; "
                                                     "use b=...")


def test_sentinel():
    assert NOT_PASSED is not None and repr(NOT_PASSED) == "<not passed>"
    assert type(NOT_PASSED)() is NOT_PASSED  # one instance
    assert pickle.loads(pickle.dumps(NOT_PASSED)) is NOT_PASSED


def test_renamed_parameter():
    @renamed_parameter(old="weights", new="base_measure")
    def sel(u, base_measure=None, *, k=1):
        return u, base_measure, k

    assert _record(lambda: sel(1, base_measure=2)) == ((1, 2, 1), [])
    out, rec = _record(lambda: sel(1, weights=2, k=3))
    assert out == (1, 2, 3)
    _assert_deprecation(rec, "sel(weights=...) is deprecated", "use base_measure=...")
    with pytest.raises(TypeError, match="both base_measure and its deprecated spelling weights"):
        sel(1, base_measure=2, weights=2)
    with pytest.raises(TypeError, match="both base_measure and its deprecated spelling weights"):
        sel(1, 2, weights=2)  # the new one positionally
    with pytest.raises(TypeError, match="must have parameter 'base_measure' and not 'weights'"):
        renamed_parameter(old="weights", new="base_measure")(lambda u, weights=None, base_measure=None: u)


def test_keyword_only():
    @keyword_only("epsilon", "sensitivity")
    def sel(u, *, epsilon, sensitivity, k=1):
        return u, epsilon, sensitivity, k

    assert _record(lambda: sel([1.0], epsilon=0.5, sensitivity=2.0)) == (([1.0], 0.5, 2.0, 1), [])
    out, rec = _record(lambda: sel([1.0], 0.5, 2.0, k=3))
    assert out == ([1.0], 0.5, 2.0, 3)
    _assert_deprecation(rec, "passing epsilon, sensitivity positionally to", "use keywords (epsilon=..., sensitivity=...)")
    out, rec = _record(lambda: sel([1.0], 0.5, sensitivity=2.0))
    assert out == ([1.0], 0.5, 2.0, 1)
    _assert_deprecation(rec, "passing epsilon positionally")
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        sel([1.0], 0.5, 2.0, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'epsilon'"):
        sel([1.0], 0.5, epsilon=0.5, sensitivity=2.0)
    with pytest.raises(TypeError, match="no keyword-only parameter 'eps'"):
        keyword_only("eps")(lambda u, *, epsilon: u)


def test_stacked_decorators_share_one_wrapper():
    """Several old spellings in one call: one warning each, all from the user's line (one wrapper frame)."""
    @renamed_parameter(old="weights", new="base_measure")
    @keyword_only("epsilon")
    def sel(u, *, epsilon, base_measure=None):
        return u, epsilon, base_measure

    assert sel.__wrapped__.__name__ == "sel" and not hasattr(sel.__wrapped__, "_compat_steps")
    out, rec = _record(lambda: sel(1, 0.5, weights=3))
    assert out == (1, 0.5, 3)
    assert len(rec) == 2 and all(r.filename == __file__ for r in rec)
    assert all(f"removed in dpselect {REMOVED_IN}" in str(r.message) for r in rec)


def test_renamed_values():
    @renamed_values("mechanism", {"global": "exponential"})
    def fit(data, mechanism="local_dampening"):
        return mechanism

    assert _record(lambda: fit(0, "exponential")) == ("exponential", [])
    for call in (lambda: fit(0, mechanism="Global"), lambda: fit(0, "global")):
        out, rec = _record(call)
        assert out == "exponential"
        _assert_deprecation(rec, "fit(mechanism='", "use mechanism='exponential'")


def test_replaced_parameter():
    @replaced_parameter("local", "mechanism", lambda v: "local_dampening" if v else "exponential",
                        conflict=lambda local, mech: not local and mech == "local_dampening")
    def pick(g, *, mechanism=None):
        return mechanism

    out, rec = _record(lambda: pick(0, local=False))
    assert out == "exponential"
    _assert_deprecation(rec, "pick(local=False) is deprecated", "use mechanism='exponential'")
    out, rec = _record(lambda: pick(0, local=True, mechanism="shifted"))
    assert out == "shifted"  # no contradiction: the new spelling wins
    _assert_deprecation(rec, "pick(local=True)")
    with pytest.raises(ValueError, match="local=False \\(deprecated\\) contradicts mechanism='local_dampening'"):
        pick(0, local=False, mechanism="local_dampening")

    @replaced_parameter("local", "mechanism", bool)
    def strict(g, *, mechanism=None):
        return mechanism

    with pytest.raises(TypeError, match="both mechanism and its deprecated spelling local"):
        strict(0, local=True, mechanism="exponential")


def test_old_call_form():
    def convert(u, a, b, **kw):
        return (a, b), {**kw, "objectives": u}

    @old_call_form(lambda *a, **k: len(a) == 3, convert, old="f(u, a, b)", new="f(a, b, objectives=u)")
    def f(a, b, *, objectives=None):
        return a, b, objectives

    assert _record(lambda: f(1, 2)) == ((1, 2, None), [])
    out, rec = _record(lambda: f(0, 1, 2))
    assert out == (1, 2, 0)
    _assert_deprecation(rec, "f(u, a, b) is deprecated", "use f(a, b, objectives=u)")


# --- the package's old spellings: the user's line, the version, the same result ---------------------------------
def test_base_measure_old_spelling_in_the_mechanisms():
    import dpselect as d

    u, w = np.array([1.0, 3.0, 2.0]), np.array([1.0, 2.0, 3.0])
    new = d.exponential(u, epsilon=1.0, sensitivity=1.0, base_measure=w, k=2, rng=5)
    old, rec = _record(lambda: d.exponential(u, epsilon=1.0, sensitivity=1.0, weights=w, k=2, rng=5))
    np.testing.assert_array_equal(old, new)
    _assert_deprecation(rec, "exponential(weights=...)", "use base_measure=...")
    # positional epsilon and weights= in one call: two warnings, both from here
    old, rec = _record(lambda: d.exponential(u, 1.0, 1.0, weights=w, k=2, rng=5))
    np.testing.assert_array_equal(old, new)
    assert len(rec) == 2 and all(r.filename == __file__ for r in rec)
    with pytest.raises(TypeError, match="both base_measure and its deprecated spelling weights"):
        d.exponential(u, epsilon=1.0, sensitivity=1.0, weights=w, base_measure=w)


def test_metric_c_old_form():
    import dpselect as d

    U = np.array([[3, 3], [1, 1], [2, 4]])
    out, rec = _record(lambda: d.metric_c(U, [0], [1, 2]))
    assert out == d.metric_c([0], [1, 2], objectives=U) == 0.5
    _assert_deprecation(rec, "metric_c(objectives, reference, selected)")
    with pytest.raises(TypeError, match="objectives twice"):
        d.metric_c(U, [0], [1, 2], objectives=U)
