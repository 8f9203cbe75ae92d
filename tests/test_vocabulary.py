"""The package's one vocabulary: mechanism names, aliases (dpselect.vocabulary); the deprecation helpers are in test_compat."""
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
    from dpselect.apps.influential import MotkinSampler, influential_demo_table
    from dpselect.apps.median import median_error, median_probabilities

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
        ("priv_pareto", lambda: d.priv_pareto(U, 1.0, [1.0, 1.0], k=2, rng=0),
         lambda: d.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], k=2, rng=0)),
        ("priv_pareto_probabilities", lambda: d.priv_pareto_probabilities(U, 1.0, [1.0, 1.0]),
         lambda: d.priv_pareto_probabilities(U, epsilon=1.0, sensitivities=[1.0, 1.0])),
        ("priv_agg", lambda: d.priv_agg(U, [1.0, 1.0], 1.0, [1.0, 1.0], rng=0),
         lambda: d.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], rng=0)),
        ("priv_agg_probabilities", lambda: d.priv_agg_probabilities(U, [1.0, 1.0], 1.0, [1.0, 1.0]),
         lambda: d.priv_agg_probabilities(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0])),
        ("median", lambda: d.median(vals, 1.0, bound=10.0, rng=0), lambda: d.median(vals, epsilon=1.0, bound=10.0, rng=0)),
        ("median_rank", lambda: d.median_rank(vals, 1.0, bound=10.0, rng=0),
         lambda: d.median_rank(vals, epsilon=1.0, bound=10.0, rng=0)),
        ("median_distribution", lambda: d.median_distribution(vals, 1.0, bound=10.0).pdf(5.0),
         lambda: d.median_distribution(vals, epsilon=1.0, bound=10.0).pdf(5.0)),
        ("median_error", lambda: median_error(vals, 1.0, bound=10.0), lambda: median_error(vals, epsilon=1.0, bound=10.0)),
        ("median_probabilities", lambda: median_probabilities(vals, 1.0, bound=10.0)[1],
         lambda: median_probabilities(vals, epsilon=1.0, bound=10.0)[1]),
        ("dp_motkin_pareto", lambda: d.dp_motkin_pareto(g, 2, 1.0, rng=0),
         lambda: d.dp_motkin_pareto(g, k=2, epsilon=1.0, rng=0)),
        ("dp_motkin_agg", lambda: d.dp_motkin_agg(g, 2, 1.0, rng=0), lambda: d.dp_motkin_agg(g, k=2, epsilon=1.0, rng=0)),
        ("MotkinSampler.sample", lambda: sampler.sample(2, 1.0, 0), lambda: sampler.sample(k=2, epsilon=1.0, rng=0)),
        ("influential_demo_table", lambda: influential_demo_table(g, 2, 1.0, 0, max_degree=6),
         lambda: influential_demo_table(g, k=2, epsilon=1.0, rng=0, max_degree=6)),
    ]
    return out


@pytest.mark.parametrize("case", _public_selectors(), ids=lambda c: c[0])
def test_positional_privacy_parameters_are_deprecated(case):
    """Keyword-only epsilon/k (and the sensitivity after them): positional calls warn and give the same result."""
    import numpy as np

    name, old, new = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new spelling never warns
        expected = new()
    with pytest.warns(DeprecationWarning, match=rf"positionally to {name.split('.')[-1]}\(\)|positionally to {name}\(\)"):
        got = old()
    if isinstance(expected, str):
        assert got == expected
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_dp_moet_positional_epsilon_is_deprecated():
    from dpselect.apps.dpmoet import dp_moet
    from dpselect.tabular import load_nltcs

    small = dict(population=6, selection=2, generations=1, depth=2, max_depth=3, output=2)
    data = load_nltcs(data_path("tabular", "nltcs.dat"))
    with pytest.warns(DeprecationWarning, match=r"passing epsilon positionally to dp_moet\(\)"):
        a = dp_moet(data, 1.0, rng=0, **small)
    b = dp_moet(data, epsilon=1.0, rng=0, **small)
    assert all(x == y for x, y in zip(a.trees, b.trees))


def test_k_omitted_is_one_index():
    """k=None (the default): one index as an int; any int k (1 included): an int64 array of shape (k,), in every
    selector and app; with size=N: (N,) and (N, k)."""
    import numpy as np

    import dpselect as d
    from dpselect.apps.influential import MotkinSampler

    u = np.array([1.0, 3.0, 2.0, 0.5])
    sf = d.constant(4, 1.0)
    U = np.array([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], float)
    calls = [
        lambda **kw: d.exponential(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=0, **kw),
        lambda **kw: d.local_dampening(u, epsilon=1.0, sensitivity_function=sf, rng=0, **kw),
        lambda **kw: d.shifted_local_dampening(u, epsilon=1.0, sensitivity_function=sf, rng=0, **kw),
        lambda **kw: d.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], rng=0, **kw),
        lambda **kw: d.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], rng=0, **kw),
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
        lambda **kw: d.dp_motkin_pareto(g, epsilon=1.0, rng=0, **kw),
        lambda **kw: d.dp_motkin_agg(g, epsilon=1.0, rng=0, **kw),
        lambda **kw: sampler.sample(epsilon=1.0, rng=0, **kw),
        lambda **kw: MotkinSampler(g, "pareto", mechanism="LD").sample(epsilon=1.0, rng=0, **kw),
    ]
    for call in apps:
        one = call()
        arr = call(k=1)
        assert isinstance(one, int) and arr.dtype == np.int64 and arr.tolist() == [one]
        assert call(k=3).shape == (3,)
