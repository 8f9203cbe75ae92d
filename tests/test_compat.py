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


# --- item 3: every renamed spelling gives exactly what the new one gives (same seeds, same picks) ---------------
def _same(old_call, new_call, *fragments):
    """``old_call()`` warns once from this file, naming the version, and equals ``new_call()`` (which never warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        expected = new_call()
    got, rec = _record(old_call)
    _assert_deprecation(rec, *fragments)
    return got, expected


def _graph():
    from dpselect.graphs import from_edges

    return from_edges([0, 0, 0, 1, 4, 4, 2, 5], [1, 2, 3, 2, 5, 6, 5, 6], n_nodes=8)


def test_noisy_top_k_base_measure_and_keywords():
    from fractions import Fraction

    from dpselect.sampling import noisy_top_k

    a, w = np.array([0.5, 1.0, 0.2, 0.9]), np.array([1.0, 3.0, 2.0, 0.5])
    kw = dict(noise="gumbel", exact_score=lambda r: Fraction(float(a[r])))
    for seed in range(3):
        got, exp = _same(lambda: noisy_top_k(a, None, k=2, rng=np.random.default_rng(seed), weights=w, **kw),
                         lambda: noisy_top_k(a, None, k=2, rng=np.random.default_rng(seed), base_measure=w, **kw),
                         "noisy_top_k(weights=...)", "use base_measure=...")
        np.testing.assert_array_equal(got, exp)
        got, exp = _same(lambda: noisy_top_k(a, None, 2, np.random.default_rng(seed), **kw),
                         lambda: noisy_top_k(a, None, k=2, rng=np.random.default_rng(seed), **kw),
                         "passing k, rng positionally to noisy_top_k()")
        np.testing.assert_array_equal(got, exp)


def test_weighted_sum_objective_weights():
    from dpselect.sensitivity import constant, weighted_sum

    sfs = [constant(3, 1.0), constant(3, 0.5)]
    got, exp = _same(lambda: weighted_sum(weights=[3.0, -2.0], sensitivity_functions=sfs),
                     lambda: weighted_sum(objective_weights=[3.0, -2.0], sensitivity_functions=sfs),
                     "weighted_sum(weights=...)", "use objective_weights=...")
    assert got.global_sensitivity == exp.global_sensitivity == 4.0
    assert got(2).tolist() == exp(2).tolist() == [4.0, 4.0, 4.0]


def test_approach_aggregate_everywhere_agg_an_alias():
    from dpselect.apps.dpmoet import dp_moet
    from dpselect.apps.influential import MotkinSampler
    from dpselect.tabular import load_nltcs
    from dpselect.vocabulary import check_approach

    assert check_approach("agg") == check_approach("AGGREGATE") == "aggregate"
    with pytest.raises(ValueError, match="approach must be one of 'pareto', 'aggregate'.*got 'sum'"):
        check_approach("sum")
    small = dict(epsilon=1.0, population=6, selection=2, generations=1, depth=2, max_depth=3, output=2, rng=3)
    from dpselect.experiments import data_path

    data = load_nltcs(data_path("tabular", "nltcs.dat"))
    a, b = dp_moet(data, approach="aggregate", **small), dp_moet(data, approach="agg", **small)  # both accepted
    assert a.variant == b.variant == "DP-MOET-Agg-local" and all(x == y for x, y in zip(a.trees, b.trees))
    g = _graph()
    s1, s2 = MotkinSampler(g, "aggregate", mechanism="EM"), MotkinSampler(g, "agg", mechanism="EM")
    assert s1.approach == s2.approach == "aggregate"
    assert s1.sample(k=2, epsilon=1.0, rng=4).tolist() == s2.sample(k=2, epsilon=1.0, rng=4).tolist()


def test_select_model_without_placeholders():
    from dpselect.sklearn import select_model

    y = [1, 1, 1, 0, 0, 0] * 20
    P = [[1, 1, 1, 0, 0, 0] * 20, [1, 1, 0, 0, 0, 1] * 20, [0, 0, 0, 1, 1, 1] * 20]
    for seed in range(4):
        got, exp = _same(lambda: select_model(None, None, y, predictions=P, epsilon=0.5, k=2, rng=seed),
                         lambda: select_model(y=y, predictions=P, epsilon=0.5, k=2, rng=seed),
                         "select_model(None, None, y, predictions=...)")
        np.testing.assert_array_equal(got, exp)
    assert select_model(y=y, predictions=P, epsilon=0.5, approach="agg", rng=1) == \
        select_model(y=y, predictions=P, epsilon=0.5, approach="aggregate", rng=1)
    with pytest.raises(TypeError, match="missing required argument: 'y'"):
        select_model(predictions=P, epsilon=1.0)


def test_sklearn_estimators_keyword_only():
    from sklearn.base import clone

    from dpselect.sklearn import DiffPID3Classifier, DPMOETClassifier

    got, exp = _same(lambda: DiffPID3Classifier(2.0, 3), lambda: DiffPID3Classifier(epsilon=2.0, depth=3),
                     "passing epsilon, depth positionally to DiffPID3Classifier()")
    assert got.get_params() == exp.get_params()
    assert clone(exp).get_params() == exp.get_params()
    got, rec = _record(lambda: DPMOETClassifier(budget="paper-code"))
    _assert_deprecation(rec, "DPMOETClassifier(budget='paper-code')")
    assert got.budget == "paper-code"  # still works for one release


def test_load_table_feature_bounds():
    from dpselect.tabular import load_table

    cols = {"age": [20.0, 40.0, 60.0], "y": [0, 1, 1]}
    got, exp = _same(lambda: load_table(cols, "y", numeric_bounds={"age": (0, 100)}, categories={"y": [0, 1]}),
                     lambda: load_table(cols, "y", feature_bounds={"age": (0, 100)}, categories={"y": [0, 1]}),
                     "load_table(numeric_bounds=...)", "use feature_bounds=...")
    np.testing.assert_array_equal(got.X, exp.X)


def test_dask_max_degree_is_not_called_bound():
    pytest.importorskip("dask.dataframe")
    import dask.dataframe as dd
    import pandas as pd

    from dpselect.dask import max_degree

    deg = dd.from_pandas(pd.Series([2, 1, 1]), npartitions=2)
    got, exp = _same(lambda: max_degree(deg, bound=5), lambda: max_degree(deg, max_degree=5),
                     "max_degree(bound=...)", "use max_degree=...")
    assert got == exp == 5


def test_renamed_functions():
    from dpselect.experiments import thesis_figure20, thesis_figures23_25
    from dpselect.utilities.information_gain import ig_sensitivity, ig_sensitivity_function

    T = [np.array([[30, 10], [5, 55]])]
    got, exp = _same(lambda: ig_sensitivity_function(T, n_max=1000), lambda: ig_sensitivity(T, n_max=1000),
                     "ig_sensitivity_function() is deprecated", "use ig_sensitivity()")
    assert got(3).tolist() == exp(3).tolist()
    got, exp = _same(lambda: thesis_figures23_25.public_n_max("nltcs"),
                     lambda: thesis_figures23_25.published_table_size("nltcs"), "public_n_max()")
    assert got == exp
    got, exp = _same(lambda: thesis_figure20.public_max_degree("enron"),
                     lambda: thesis_figure20.published_max_degree("enron"), "public_max_degree()")
    assert got == exp


def test_keyword_only_epsilon_and_k():
    from dpselect.apps.influence_baselines import top_k_aggregate, top_k_ebc, top_k_pareto
    from dpselect.apps.influential import MotkinSampler
    from dpselect.binary import DPPair, balanced_boundary_value, balanced_probability, dp_lower, dp_upper, p, tau
    from dpselect.binary.closed_forms import path_extension

    e, d = float(np.log(2)), 0.01
    cases = [
        (lambda: p(3, 0.1, e, d), lambda: p(3, 0.1, epsilon=e, delta=d)),
        (lambda: tau(0.1, e, d), lambda: tau(0.1, epsilon=e, delta=d)),
        (lambda: dp_upper(0.3, e, d), lambda: dp_upper(0.3, epsilon=e, delta=d)),
        (lambda: dp_lower(0.3, e), lambda: dp_lower(0.3, epsilon=e)),
        (lambda: balanced_boundary_value(e, d), lambda: balanced_boundary_value(epsilon=e, delta=d)),
        (lambda: balanced_probability(2, e), lambda: balanced_probability(2, epsilon=e)),
        (lambda: path_extension(0.1, [e] * 3), lambda: path_extension(0.1, epsilons=[e] * 3)),
        (lambda: DPPair(e, d).upper(0.3), lambda: DPPair(epsilon=e, delta=d).upper(0.3)),
    ]
    g = _graph()
    U = np.array([[3, 0.3], [2, 1.0], [2, 1.0], [1, 0.0]])
    sampler = MotkinSampler(g, "pareto", mechanism="EM")
    cases += [
        (lambda: top_k_pareto(U, 2), lambda: top_k_pareto(U, k=2)),
        (lambda: top_k_aggregate(U, 2), lambda: top_k_aggregate(U, k=2)),
        (lambda: top_k_ebc(np.array([1.0, 3.0, 2.0]), 2), lambda: top_k_ebc(np.array([1.0, 3.0, 2.0]), k=2)),
        (lambda: sampler.probabilities(0.7), lambda: sampler.probabilities(epsilon=0.7)),
    ]
    for old, new in cases:
        got, exp = _same(old, new, "positionally")
        np.testing.assert_array_equal(np.asarray(got), np.asarray(exp))


def test_no_private_names_in_public_signatures():
    import importlib
    import inspect
    import pkgutil

    import dpselect

    bad = []
    for info in pkgutil.walk_packages(dpselect.__path__, "dpselect."):
        if info.name == "dpselect.binary_demo" or info.name.startswith(("dpselect.dask", "dpselect.sklearn")):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            fns = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                fns = [v for k, v in vars(obj).items() if inspect.isfunction(v) and (k == "__init__" or k[0] != "_")]
            for fn in fns:
                try:
                    sig = inspect.signature(fn)
                except (TypeError, ValueError):
                    continue
                for p in sig.parameters.values():
                    if p.name.startswith("_") or "_GroupedMedian" in str(p.annotation):
                        bad.append(f"{info.name}.{name}: {p.name}")
                if "_GroupedMedian" in str(sig.return_annotation):
                    bad.append(f"{info.name}.{name} -> {sig.return_annotation}")
    assert not bad, bad


def test_rng_like_is_one_public_type():
    # that mypy accepts it (and refuses a str seed) is checked once by the CI's mypy step on
    # tests/typecheck/rng_like.py, not inside the unit tests (issue 33)
    import dpselect.typing
    from dpselect import _rng

    assert _rng.RngLike is dpselect.typing.RngLike
