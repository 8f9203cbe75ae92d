"""The package's one vocabulary: mechanism names, aliases (dpselect.vocabulary), and one spelling per concept."""
from __future__ import annotations

import warnings

import pytest

from dpselect.experiments import data_path
from dpselect.vocabulary import (
    ALIASES,
    GLOBAL_MECHANISMS,
    LOCAL_MECHANISMS,
    MECHANISMS,
    check_mechanism,
)


def test_names_and_aliases():
    assert tuple(MECHANISMS) == GLOBAL_MECHANISMS + LOCAL_MECHANISMS   # a mapping name -> spec (issue 23)
    assert set(ALIASES.values()) == set(MECHANISMS)
    for name in MECHANISMS:
        assert check_mechanism(name) == name
        assert check_mechanism(name.upper()) == name
    for alias, name in ALIASES.items():
        assert check_mechanism(alias) == name
        assert check_mechanism(alias.upper()) == name
        assert check_mechanism(f" {alias.capitalize()} ") == name


def test_rejects_unknown_and_disallowed():
    with pytest.raises(ValueError, match=r"mechanism must be one of .* got 'laplace'"):
        check_mechanism("laplace")
    with pytest.raises(ValueError, match=r"method must be one of exponential, permute_and_flip .*\(or EM, PF"):
        check_mechanism("LD", name="method", allowed=("exponential", "permute_and_flip"))
    with pytest.raises(TypeError, match="mechanism must be a string"):
        check_mechanism(3)


def test_docstring_examples():
    import doctest

    import dpselect.vocabulary as voc

    res = doctest.testmod(voc)
    assert res.attempted > 0 and res.failed == 0


def _graph():
    from dpselect.graphs import from_edges

    return from_edges([0, 0, 0, 1, 4, 4, 2], [1, 2, 3, 2, 5, 6, 5])


def _public_selectors():
    """(name, old positional call, new keyword call) for every public selector whose privacy parameters became
    keyword-only."""
    import numpy as np

    import dpselect as d
    from dpselect.graphs import MotkinSampler, influential_demo_table
    from dpselect.quantiles import median_distribution, median_error, median_probabilities, median_rank

    u = np.array([1.0, 3.0, 2.0])
    sf = d.constant(3, 1.0)
    U = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], float)
    vals = [5.0, 1.0, 9.0, 4.0, 7.0]
    g = _graph()
    sampler = MotkinSampler(g, "pareto", mechanism="exponential")
    out = []
    for fn in (d.exponential, d.permute_and_flip, d.report_noisy_max):
        out.append((fn.__name__, lambda fn=fn: fn(u, 1.0, 1.0, rng=0),
                    lambda fn=fn: fn(u, epsilon=1.0, sensitivity=1.0, rng=0)))
    for fn in (d.exponential_probabilities, d.permute_and_flip_probabilities, d.report_noisy_max_probabilities):
        out.append((fn.__name__, lambda fn=fn: fn(u, 1.0, 1.0), lambda fn=fn: fn(u, epsilon=1.0, sensitivity=1.0)))
    for fn in (d.local_dampening, d.shifted_local_dampening):
        out.append((fn.__name__, lambda fn=fn: fn(u, 1.0, sf, rng=0),
                    lambda fn=fn: fn(u, epsilon=1.0, sensitivity_function=sf, rng=0)))
    for fn in (d.local_dampening_probabilities, d.shifted_local_dampening_probabilities):
        out.append((fn.__name__, lambda fn=fn: fn(u, 1.0, sf), lambda fn=fn: fn(u, epsilon=1.0, sensitivity_function=sf)))
    out += [
        ("priv_pareto", lambda: d.multiobjective.priv_pareto(U, 1.0, [1.0, 1.0], k=2, rng=0),
         lambda: d.multiobjective.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], k=2, rng=0)),
        ("priv_pareto_probabilities", lambda: d.multiobjective.priv_pareto_probabilities(U, 1.0, [1.0, 1.0]),
         lambda: d.multiobjective.priv_pareto_probabilities(U, epsilon=1.0, sensitivities=[1.0, 1.0])),
        ("priv_agg", lambda: d.multiobjective.priv_agg(U, [1.0, 1.0], 1.0, [1.0, 1.0], rng=0),
         lambda: d.multiobjective.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], rng=0)),
        ("priv_agg_probabilities", lambda: d.multiobjective.priv_agg_probabilities(U, [1.0, 1.0], 1.0, [1.0, 1.0]),
         lambda: d.multiobjective.priv_agg_probabilities(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0])),
        ("median", lambda: d.median(vals, 1.0, bound=10.0, rng=0), lambda: d.median(vals, epsilon=1.0, bound=10.0, rng=0)),
        ("median_rank", lambda: median_rank(vals, 1.0, bound=10.0, rng=0),
         lambda: median_rank(vals, epsilon=1.0, bound=10.0, rng=0)),
        ("median_distribution", lambda: median_distribution(vals, 1.0, bound=10.0).pdf(5.0),
         lambda: median_distribution(vals, epsilon=1.0, bound=10.0).pdf(5.0)),
        ("median_error", lambda: median_error(vals, 1.0, bound=10.0), lambda: median_error(vals, epsilon=1.0, bound=10.0)),
        ("median_probabilities", lambda: median_probabilities(vals, 1.0, bound=10.0)[1],
         lambda: median_probabilities(vals, epsilon=1.0, bound=10.0)[1]),
        ("dp_motkin_pareto", lambda: d.graphs.dp_motkin_pareto(g, 2, 1.0, rng=0),
         lambda: d.graphs.dp_motkin_pareto(g, k=2, epsilon=1.0, rng=0)),
        ("dp_motkin_agg", lambda: d.graphs.dp_motkin_agg(g, 2, 1.0, rng=0), lambda: d.graphs.dp_motkin_agg(g, k=2, epsilon=1.0, rng=0)),
        ("MotkinSampler.sample", lambda: sampler.sample(2, 1.0, 0), lambda: sampler.sample(k=2, epsilon=1.0, rng=0)),
        ("influential_demo_table", lambda: influential_demo_table(g, 2, 1.0, 0, max_degree=6),
         lambda: influential_demo_table(g, k=2, epsilon=1.0, rng=0, max_degree=6)),
    ]
    return out


def _more_keyword_only_calls():
    """(name, positional call, keyword call) of the other public functions whose parameters after the data are
    keyword-only: the binary closed forms, the non-private baselines, the top-k sampler, the estimators."""
    from fractions import Fraction

    import numpy as np

    from dpselect.graphs import top_k_aggregate, top_k_ebc, top_k_pareto
    from dpselect.graphs import MotkinSampler
    from dpselect.binary import DPPair, balanced_boundary_value, balanced_probability, dp_lower, dp_upper, p, tau
    from dpselect.binary.closed_forms import path_extension
    from dpselect.graphs import from_edges
    from dpselect.sampling import noisy_top_k

    e, dl = float(np.log(2)), 0.01
    U = np.array([[3, 0.3], [2, 1.0], [2, 1.0], [1, 0.0]])
    sampler = MotkinSampler(from_edges([0, 0, 1], [1, 2, 2], n_nodes=4), "pareto", mechanism="EM")
    a = np.array([0.5, 2.0, 1.0])
    exact = lambda r: Fraction(float(a[r]))  # noqa: E731
    out = [
        ("p", lambda: p(3, 0.1, e, dl), lambda: p(3, 0.1, epsilon=e, delta=dl)),
        ("tau", lambda: tau(0.1, e, dl), lambda: tau(0.1, epsilon=e, delta=dl)),
        ("dp_upper", lambda: dp_upper(0.3, e, dl), lambda: dp_upper(0.3, epsilon=e, delta=dl)),
        ("dp_lower", lambda: dp_lower(0.3, e), lambda: dp_lower(0.3, epsilon=e)),
        ("balanced_boundary_value", lambda: balanced_boundary_value(e, dl),
         lambda: balanced_boundary_value(epsilon=e, delta=dl)),
        ("balanced_probability", lambda: balanced_probability(2, e), lambda: balanced_probability(2, epsilon=e)),
        ("path_extension", lambda: path_extension(0.1, [e] * 3), lambda: path_extension(0.1, epsilons=[e] * 3)),
        ("DPPair", lambda: DPPair(e, dl).upper(0.3), lambda: DPPair(epsilon=e, delta=dl).upper(0.3)),
        ("top_k_pareto", lambda: top_k_pareto(U, 2), lambda: top_k_pareto(U, k=2)),
        ("top_k_aggregate", lambda: top_k_aggregate(U, 2), lambda: top_k_aggregate(U, k=2)),
        ("top_k_ebc", lambda: top_k_ebc(a, 2), lambda: top_k_ebc(a, k=2)),
        ("MotkinSampler.probabilities", lambda: sampler.probabilities(0.7), lambda: sampler.probabilities(epsilon=0.7)),
        ("noisy_top_k", lambda: noisy_top_k(a, None, 2, np.random.default_rng(0), exact_score=exact),
         lambda: noisy_top_k(a, None, k=2, rng=np.random.default_rng(0), exact_score=exact)),
    ]
    try:
        from dpselect.sklearn import DiffPID3Classifier, DPMOETClassifier
    except ImportError:
        return out
    return out + [
        ("DiffPID3Classifier", lambda: DiffPID3Classifier(2.0, 3), lambda: DiffPID3Classifier(epsilon=2.0, depth=3)),
        ("DPMOETClassifier", lambda: DPMOETClassifier(2.0), lambda: DPMOETClassifier(epsilon=2.0)),
    ]


@pytest.mark.parametrize("case", _public_selectors() + _more_keyword_only_calls(), ids=lambda c: c[0])
def test_privacy_parameters_are_keyword_only(case):
    """epsilon, k, the sensitivity (and what follows the data) are keywords: a positional call is a TypeError,
    not a translated call with a warning (no spelling of before 0.1.0 is kept)."""
    name, old, new = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the one spelling never warns
        new()
    with pytest.raises(TypeError, match=r"positional argument"):
        old()


def test_dp_moet_epsilon_is_keyword_only():
    from dpselect.trees import dp_moet
    from dpselect.tabular import load_nltcs

    small = dict(population=6, selection=2, generations=1, depth=2, max_depth=3, output=2)
    data = load_nltcs(data_path("tabular", "nltcs.dat"))
    with pytest.raises(TypeError, match=r"dp_moet\(\) takes 1 positional argument but 2 "):
        dp_moet(data, 1.0, rng=0, **small)


def _removed_keywords():
    """(call with a keyword spelling of before 0.1.0, that keyword): each is an unexpected keyword now."""
    import numpy as np

    import dpselect as d
    from dpselect.trees import dp_moet, nodp_moet
    from dpselect.graphs import top_k_aggregate
    from dpselect.graphs import MotkinSampler
    from dpselect.graphs import from_edges
    from dpselect.sampling import noisy_top_k
    from dpselect.tabular import load_table

    u = np.array([1.0, 3.0, 2.0])
    sf = d.constant(3, 1.0)
    U = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], float)
    g = from_edges([0, 0, 1], [1, 2, 2], n_nodes=4)
    out = []
    for fn in (d.exponential, d.permute_and_flip, d.report_noisy_max, d.exponential_probabilities,
               d.permute_and_flip_probabilities):
        out.append((lambda fn=fn: fn(u, epsilon=1.0, sensitivity=1.0, weights=[1.0, 1.0, 1.0]), "weights"))
    for fn in (d.local_dampening, d.shifted_local_dampening, d.local_dampening_probabilities,
               d.shifted_local_dampening_probabilities):
        out.append((lambda fn=fn: fn(u, epsilon=1.0, sensitivity_function=sf, weights=[1.0, 1.0, 1.0]), "weights"))
    out += [
        (lambda: noisy_top_k(u, None, k=1, rng=np.random.default_rng(0), exact_score=float, weights=[1.0, 1.0, 1.0]),
         "weights"),
        (lambda: d.weighted_sum([1.0, 2.0], [sf, sf], weights=[1.0, 2.0]), "weights"),
        (lambda: d.multiobjective.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], weights=[1.0, 1.0]), "weights"),
        (lambda: d.multiobjective.priv_agg_probabilities(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0],
                                          weights=[1.0, 1.0]), "weights"),
        (lambda: d.multiobjective.aggregate_sensitivity([1.0, 1.0], [sf, sf], weights=[1.0, 1.0]), "weights"),
        (lambda: d.multiobjective.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], U=U), "U"),
        (lambda: d.multiobjective.priv_pareto_probabilities(U, epsilon=1.0, sensitivities=[1.0, 1.0], U=U), "U"),
        (lambda: d.multiobjective.pareto_score(U, U=U), "U"),
        (lambda: d.multiobjective.pareto_sensitivity(U, [sf, sf], U=U), "U"),
        (lambda: d.graphs.dp_motkin_pareto(g, epsilon=1.0, local=True), "local"),
        (lambda: d.graphs.dp_motkin_agg(g, epsilon=1.0, local=False), "local"),
        (lambda: d.graphs.dp_motkin_agg(g, epsilon=1.0, weights=(1.0, 2.0)), "weights"),
        (lambda: MotkinSampler(g, "pareto", local=True), "local"),
        (lambda: MotkinSampler(g, "agg", weights=(1.0, 2.0)), "weights"),
        (lambda: top_k_aggregate(U, k=2, weights=(1.0, 2.0)), "weights"),
        (lambda: dp_moet(None, epsilon=1.0, sensitivity="local"), "sensitivity"),
        (lambda: dp_moet(None, epsilon=1.0, weights=(1.0, 2.0)), "weights"),
        (lambda: nodp_moet(None, weights=(1.0, 2.0)), "weights"),
        (lambda: load_table({"a": [1.0, 2.0], "y": [0, 1]}, "y", numeric_bounds={"a": (0, 3)}), "numeric_bounds"),
    ]
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:
        return out
    from dpselect.dask import max_degree

    return out + [(lambda: max_degree(np.array([2, 1, 1]), bound=5), "bound")]


def test_keywords_of_before_0_1_0_are_gone():
    """One spelling per concept: every keyword renamed before the first release is an unexpected keyword
    (a TypeError raised before anything is read or drawn), not a warning."""
    cases = _removed_keywords()
    assert len(cases) >= 25
    for call, keyword in cases:
        # a TypeError naming the keyword (**options of priv_pareto / priv_agg: a refused mechanism option)
        with pytest.raises(TypeError, match=rf"unexpected (keyword argument|option) '{keyword}'|"
                                            rf"'{keyword}' cannot be passed as a mechanism option"):
            call()


def test_names_of_before_0_1_0_are_gone():
    """The old names of renamed functions, values and modules: absent or unknown values, no alias."""
    import importlib.util

    import dpselect
    import dpselect.vocabulary as voc
    from dpselect.trees import _diffpid3 as diffpid3
    from dpselect.experiments import thesis_figure20, thesis_figures23_25
    from dpselect.utilities import information_gain

    for module, name in ((dpselect, "ig_sensitivity_function"), (information_gain, "ig_sensitivity_function"),
                         (thesis_figure20, "public_max_degree"), (thesis_figures23_25, "public_n_max"),
                         (voc, "Mechanism"), (diffpid3, "MECHANISMS")):
        assert not hasattr(module, name), (module.__name__, name)
        assert name not in getattr(module, "__all__", ())
    assert importlib.util.find_spec("dpselect._compat") is None
    assert not hasattr(dpselect.exceptions, "DpselectDeprecationWarning")
    for old in ("global", "local", "shifted"):   # diffpid3's old mechanism names (checked before any data is read)
        with pytest.raises(ValueError, match=rf"mechanism must be one of .*, got '{old}'"):
            dpselect.get_mechanism(old, allowed=diffpid3.DIFFPID3_MECHANISMS)


def test_estimators_refuse_the_values_of_before_0_1_0():
    """DPMOETClassifier(budget="paper-code") is an unknown value (the published code's convention belongs to the
    reproductions), refused by fit before the accountant is charged and by privacy_guarantee."""
    pytest.importorskip("sklearn")
    import numpy as np

    import dpselect
    from dpselect.sklearn import DPMOETClassifier

    X = np.random.default_rng(0).uniform(0, 1, (40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    acc = dpselect.Accountant(epsilon=10.0)
    clf = DPMOETClassifier(epsilon=1.0, budget="paper-code", population=4, selection=2, generations=2, depth=1,
                           max_depth=2, output=1, feature_bounds=(0, 1), classes=[0, 1], random_state=0,
                           accountant=acc)
    with pytest.raises(ValueError, match=r"budget must be one of 'even', got 'paper-code'"):
        clf.fit(X, y)
    assert len(acc.history) == 0
    with pytest.raises(ValueError, match=r"budget must be one of 'even', got 'paper-code'"):
        clf.privacy_guarantee()
    assert clf.set_params(budget="even").fit(X, y).privacy_guarantee().epsilon(0.0) == pytest.approx(1.0)
    assert len(acc.history) == 1
    from dpselect.sklearn import DiffPID3Classifier

    for old in ("global", "local", "shifted"):   # diffpid3's mechanism names of before 0.1.0: unknown values
        tree = DiffPID3Classifier(epsilon=1.0, depth=1, mechanism=old, n_max=40, feature_bounds=(0, 1),
                                  classes=[0, 1], random_state=0, accountant=acc)
        with pytest.raises(ValueError, match=rf"mechanism must be one of exponential, local_dampening, "
                                             rf"shifted_local_dampening \(or EM, LD, SLD\), got '{old}'"):
            tree.fit(X, y)
    assert len(acc.history) == 1   # nothing charged by the refused fits


def test_approach_aggregate_everywhere_agg_an_alias():
    from dpselect.trees import dp_moet
    from dpselect.graphs import MotkinSampler
    from dpselect.graphs import from_edges
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
    g = from_edges([0, 0, 0, 1, 4, 4, 2, 5], [1, 2, 3, 2, 5, 6, 5, 6], n_nodes=8)
    s1, s2 = MotkinSampler(g, "aggregate", mechanism="EM"), MotkinSampler(g, "agg", mechanism="EM")
    assert s1.approach == s2.approach == "aggregate"
    assert s1.sample(k=2, epsilon=1.0, rng=4).tolist() == s2.sample(k=2, epsilon=1.0, rng=4).tolist()


def test_k_omitted_is_one_index():
    """k=None (the default): one index as an int; any int k (1 included): an int64 array of shape (k,), in every
    selector and app; with size=N: (N,) and (N, k)."""
    import numpy as np

    import dpselect as d
    from dpselect.graphs import MotkinSampler

    u = np.array([1.0, 3.0, 2.0, 0.5])
    sf = d.constant(4, 1.0)
    U = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], float)
    calls = [
        lambda **kw: d.exponential(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.local_dampening(u, epsilon=1.0, sensitivity_function=sf, rng=0, **kw),
        lambda **kw: d.shifted_local_dampening(u, epsilon=1.0, sensitivity_function=sf, rng=0, **kw),
        lambda **kw: d.multiobjective.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], rng=0, **kw),
        lambda **kw: d.multiobjective.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], rng=0, **kw),
    ]
    for call in calls:
        one = call()
        arr = call(k=1)
        assert isinstance(one, int) and arr.dtype == np.int64 and arr.tolist() == [one]
        two = call(k=2)
        assert isinstance(two, np.ndarray) and two.dtype == np.int64 and two.shape == (2,)
    for call in calls[:5]:
        assert call(size=3).shape == (3,) and call(k=1, size=3).shape == (3, 1) and call(k=2, size=3).shape == (3, 2)
        assert call(k=1, size=3)[:, 0].tolist() == call(size=3).tolist()
    g = _graph()
    sampler = MotkinSampler(g, "agg", mechanism="exponential")
    apps = [
        lambda **kw: d.graphs.dp_motkin_pareto(g, epsilon=1.0, rng=0, **kw),
        lambda **kw: d.graphs.dp_motkin_agg(g, epsilon=1.0, rng=0, **kw),
        lambda **kw: sampler.sample(epsilon=1.0, rng=0, **kw),
        lambda **kw: MotkinSampler(g, "pareto", mechanism="LD").sample(epsilon=1.0, rng=0, **kw),
    ]
    for call in apps:
        one = call()
        arr = call(k=1)
        assert isinstance(one, int) and arr.dtype == np.int64 and arr.tolist() == [one]
        assert call(k=3).shape == (3,)
