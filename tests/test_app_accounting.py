"""Every releasing entry point of the applications, the scikit-learn layer and the Dask layer takes
``accountant=`` (issue 24 item 1) and returns by the one convention (issue 23 item 2).

For each entry point: a release the budget cannot pay raises BudgetExceededError, records nothing and
leaves the Generator's state exactly as it was (the charge comes before any random bit); a paid release
appears once in ``acc.history`` under a label naming the function, with the guarantee its privacy proof
states; and the accountant changes nothing in the release (same seed, same output as without it).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpselect
from dpselect import Accountant, BudgetExceededError
from dpselect.accounting import (AdaptiveBoundedRangeComposition, BoundedRange, PureDP, PureDPComposition)
from dpselect.trees import diffpid3
from dpselect.trees import dp_moet
from dpselect.quantiles import median, median_rank
from dpselect.graphs import dp_motkin_agg, dp_motkin_pareto
from dpselect.graphs import MotkinSampler
from dpselect.graphs import prepare_priv_topk, priv_topk
from dpselect.graphs import from_edges
from dpselect.sklearn import select_model
from dpselect.tabular import load_table

GRAPH = from_edges([0, 0, 0, 1, 4, 4, 5], [1, 2, 3, 2, 5, 6, 6], n_nodes=8)
VALUES = [5.0, 1.0, 9.0, 4.0, 7.0, 3.0]
_r = np.random.default_rng(11)
_x = _r.integers(0, 3, 120)
TABLE = load_table({"a": _x, "b": _r.integers(0, 2, 120), "y": (_x > 0).astype(int)}, "y",
                   categories={"a": [0, 1, 2], "b": [0, 1]})
MOET = dict(population=6, selection=2, generations=1, depth=1, max_depth=2, output=2)
Y = [1, 1, 1, 0, 0, 0] * 20
PREDS = [[1, 1, 1, 0, 0, 0] * 20, [1, 1, 0, 0, 0, 1] * 20, [0, 0, 0, 1, 1, 1] * 20]


def _tree(t):
    return (t.feature.tolist(), t.first_child.tolist(), t.label.tolist())


def _plain(out):
    return out.tolist() if isinstance(out, np.ndarray) else out


# name -> (call(accountant, generator) -> comparable output, ε of the call, label, expected guarantee)
ENTRIES = {
    "median": (lambda acc, g: median(VALUES, epsilon=0.5, bound=10.0, rng=g, accountant=acc), 0.5, "median",
               BoundedRange(0.5)),
    "median_rank": (lambda acc, g: median_rank(VALUES, epsilon=0.5, bound=10.0, mechanism="PF", rng=g,
                                               accountant=acc), 0.5, "median_rank", PureDP(0.5)),
    "dp_motkin_pareto": (lambda acc, g: _plain(dp_motkin_pareto(GRAPH, k=2, epsilon=0.5, rng=g, accountant=acc)),
                         0.5, "dp_motkin_pareto", AdaptiveBoundedRangeComposition(0.25, 2)),
    "dp_motkin_agg": (lambda acc, g: dp_motkin_agg(GRAPH, epsilon=0.5, mechanism="PF", rng=g, accountant=acc),
                      0.5, "dp_motkin_agg", PureDP(0.5)),
    "MotkinSampler.sample": (lambda acc, g: _plain(MotkinSampler(GRAPH, "pareto").sample(k=2, epsilon=0.5, rng=g,
                                                                                       accountant=acc)),
                             0.5, "MotkinSampler.sample", AdaptiveBoundedRangeComposition(0.25, 2)),
    "priv_topk": (lambda acc, g: _plain(priv_topk(GRAPH, k=2, epsilon=0.5, mechanism="PF", max_degree=7, rng=g,
                                                  accountant=acc)), 0.5, "priv_topk", PureDPComposition(0.25, 2)),
    "priv_topk(k omitted)": (lambda acc, g: priv_topk(prepare_priv_topk(GRAPH, max_degree=7), epsilon=0.5, rng=g,
                                                      accountant=acc), 0.5, "priv_topk", BoundedRange(0.5)),
    # s = o = 2: 2 rounds of 2 picks of ε/4, all bounded range (local dampening)
    "dp_moet": (lambda acc, g: repr(dp_moet(TABLE, epsilon=1.0, rng=g, accountant=acc, **MOET).trees), 1.0,
                "dp_moet", AdaptiveBoundedRangeComposition(0.25, 4)),
    # s = 2 != o = 3: basic composition of the rounds
    "dp_moet(s != o)": (lambda acc, g: repr(dp_moet(TABLE, epsilon=1.0, rng=g, accountant=acc,
                                                    **{**MOET, "output": 3}).trees), 1.0, "dp_moet", PureDP(1.0)),
    "dp_moet(PF)": (lambda acc, g: repr(dp_moet(TABLE, epsilon=1.0, mechanism="PF", rng=g, accountant=acc,
                                                **MOET).trees), 1.0, "dp_moet", PureDPComposition(0.25, 4)),
    # d = 2: 3 levels, a noisy-count step and a selection step each (parallel composition over a level's nodes)
    # the label names the split mechanism (canonical name, also for the default and for an alias)
    "diffpid3": (lambda acc, g: _tree(diffpid3(TABLE, epsilon=0.6, depth=2, n_max=200, rng=g, accountant=acc)), 0.6,
                 "diffpid3(mechanism='local_dampening')", PureDPComposition(0.1, 6)),
    "diffpid3(EM)": (lambda acc, g: _tree(diffpid3(TABLE, epsilon=0.4, depth=1, mechanism="EM", n_max=200, rng=g,
                                                   accountant=acc)), 0.4, "diffpid3(mechanism='exponential')",
                     PureDPComposition(0.1, 4)),
    "diffpid3(LD)": (lambda acc, g: _tree(diffpid3(TABLE, epsilon=0.4, depth=1, mechanism="local_dampening",
                                                   n_max=200, rng=g, accountant=acc)), 0.4,
                     "diffpid3(mechanism='local_dampening')", PureDPComposition(0.1, 4)),
    "diffpid3(SLD)": (lambda acc, g: _tree(diffpid3(TABLE, epsilon=0.4, depth=1, mechanism="shifted_local_dampening",
                                                    n_max=200, rng=g, accountant=acc)), 0.4,
                      "diffpid3(mechanism='shifted_local_dampening')", PureDPComposition(0.1, 4)),
    "select_model": (lambda acc, g: select_model(y=Y, predictions=PREDS, epsilon=0.5, mechanism="EM", random_state=g,
                                                 accountant=acc), 0.5, "select_model", BoundedRange(0.5)),
    "select_model(k=2)": (lambda acc, g: _plain(select_model(y=Y, predictions=PREDS, epsilon=0.5, k=2, random_state=g,
                                                             accountant=acc)), 0.5, "select_model",
                          AdaptiveBoundedRangeComposition(0.25, 2)),
}


def _guarantee_matches(got, want) -> bool:
    if isinstance(want, (AdaptiveBoundedRangeComposition, PureDPComposition)):
        return type(got) is type(want) and got.k == want.k and got.epsilon0 == pytest.approx(want.epsilon0, rel=1e-12)
    return type(got) is type(want) and got.epsilon_ == pytest.approx(want.epsilon_, rel=1e-12)


# the neighbour relation each application charges (tests/test_neighbours.py checks every entry point's)
_RELATION = {"median": "replace_one", "median_rank": "replace_one", "dp_motkin_pareto": "edge_add_remove",
             "dp_motkin_agg": "edge_add_remove", "MotkinSampler.sample": "edge_add_remove",
             "priv_topk": "edge_add_remove", "dask.frequent_items": "user_add_remove"}


def _check_entry(call, eps, label, want):
    nb = _RELATION.get(label, "add_remove")
    # refused: nothing recorded, nothing drawn
    gen = np.random.default_rng(3)
    before = gen.bit_generator.state
    small = Accountant(epsilon=eps / 10, neighbours=nb)
    with pytest.raises(BudgetExceededError):
        call(small, gen)
    assert len(small.history) == 0 and small.spent().epsilon_ == 0.0
    assert gen.bit_generator.state == before
    # paid: one record under the function's name, the proof's guarantee, the same release as without it
    acc = Accountant(epsilon=100.0, neighbours=nb)
    out = call(acc, np.random.default_rng(3))
    assert out == call(None, np.random.default_rng(3))
    assert len(acc.history) == 1 and acc.history[0].label == label
    assert _guarantee_matches(acc.history[0].guarantee, want), acc.history[0].guarantee
    assert acc.spent().epsilon(0.0) == pytest.approx(eps, rel=1e-9)


@pytest.mark.filterwarnings("ignore::dpselect.PrivacyLeakWarning")
@pytest.mark.parametrize("name", list(ENTRIES))
def test_entry_point_charges_once_before_any_randomness(name):
    _check_entry(*ENTRIES[name])


def test_accountant_must_be_an_accountant():
    with pytest.raises(TypeError, match="accountant must be a dpselect.Accountant or None, got float"):
        median(VALUES, epsilon=0.5, bound=10.0, rng=0, accountant=1.0)
    with pytest.raises(TypeError, match="accountant must be a dpselect.Accountant"):
        priv_topk(GRAPH, epsilon=0.5, max_degree=7, rng=0, accountant="budget")


def test_invalid_call_is_refused_before_the_charge():
    """Bad arguments cost nothing: the charge comes after every check of the public inputs."""
    acc = Accountant(epsilon=1.0)
    with pytest.raises(ValueError):
        dp_motkin_agg(GRAPH, epsilon=0.5, objective_weights=(0.0, 0.0), rng=0, accountant=acc)
    with pytest.raises(ValueError):
        priv_topk(GRAPH, k=99, epsilon=0.5, max_degree=7, rng=0, accountant=acc)
    with pytest.raises(ValueError):
        select_model(y=Y, predictions=PREDS, epsilon=0.5, k=4, random_state=0, accountant=acc)
    with pytest.raises(ValueError):
        dp_moet(TABLE, epsilon=1.0, rng=0, accountant=acc, **{**MOET, "population": 5})
    with pytest.raises(ValueError):
        diffpid3(TABLE, epsilon=1.0, depth=1, n_max=10, rng=0, accountant=acc)   # n_max below the table's size
    assert len(acc.history) == 0


def test_k_omitted_is_one_int_everywhere():
    """issue 23 item 2: one convention (selection_result) for the app selectors, priv_topk's k optional."""
    for call in (lambda **kw: priv_topk(GRAPH, epsilon=1.0, max_degree=7, rng=5, **kw),
                 lambda **kw: dp_motkin_pareto(GRAPH, epsilon=1.0, rng=5, **kw),
                 lambda **kw: dp_motkin_agg(GRAPH, epsilon=1.0, rng=5, **kw),
                 lambda **kw: MotkinSampler(GRAPH, "agg").sample(epsilon=1.0, rng=5, **kw),
                 lambda **kw: select_model(y=Y, predictions=PREDS, epsilon=1.0, random_state=5, **kw)):
        one, arr = call(), call(k=1)
        assert type(one) is int
        assert isinstance(arr, np.ndarray) and arr.dtype == np.int64 and arr.shape == (1,)
        assert arr.tolist() == [one]   # same seed, same pick


def test_same_picks_as_before_the_wiring():
    """Pinned draws (computed before accountant= existed): the wiring changes no law and no random bit."""
    assert priv_topk(GRAPH, k=3, epsilon=1.0, max_degree=7, rng=4).tolist() == [2, 0, 6]
    assert dp_motkin_pareto(GRAPH, k=3, epsilon=1.0, rng=4).tolist() == [2, 7, 1]
    assert dp_motkin_agg(GRAPH, k=2, epsilon=1.0, rng=4).tolist() == [2, 0]
    assert median_rank(VALUES, epsilon=1.0, bound=10.0, rng=4) == 2
    assert median(VALUES, epsilon=1.0, bound=10.0, rng=4) == 3.1745278161440287
    assert select_model(y=Y, predictions=PREDS, epsilon=1.0, k=3, random_state=4).tolist() == [0, 1, 2]
    assert select_model(y=Y, predictions=PREDS, epsilon=1.0, approach="agg", k=2, random_state=4,
                        mechanism="PF").tolist() == [2, 1]


def test_leak_warnings_name_the_users_line():
    """The selection_result frame is counted: PrivacyLeakWarning points at the caller's line, in every entry point."""
    g = from_edges([0, 0, 1], [1, 2, 2])   # node set read from the edges
    from dpselect.graphs import influential_demo_table

    cols = {"a": [0.5, 2.0, 1.0, 3.0], "c": ["x", "y", "x", "y"], "y": [0, 1, 0, 1]}
    for call in (lambda: dp_motkin_pareto(g, epsilon=1.0, rng=0), lambda: dp_motkin_agg(g, epsilon=1.0, rng=0),
                 lambda: priv_topk(g, epsilon=1.0, rng=0),
                 lambda: diffpid3(TABLE, epsilon=1.0, depth=1, rng=0),
                 lambda: diffpid3(TABLE, epsilon=1.0, depth=1, mechanism="exponential", rng=0),
                 lambda: diffpid3(TABLE, epsilon=1.0, depth=1, mechanism="shifted_local_dampening", rng=0),
                 lambda: MotkinSampler(g, "agg"),
                 lambda: influential_demo_table(g, k=2, rng=0),
                 lambda: load_table(cols, "y")):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            call()
        leaks = [r for r in rec if issubclass(r.category, dpselect.PrivacyLeakWarning)]
        # the user's line: the lambda's own line (one frame too many would name this loop's call() line)
        line = call.__code__.co_firstlineno
        assert leaks and all(r.filename == __file__ and r.lineno == line for r in leaks), \
            [(r.filename, r.lineno, str(r.message)[:60]) for r in leaks]


# ---------------------------------------------------------------------------------------------------------
# scikit-learn estimators: accountant= in __init__, charged at fit; clones share the accountant object
# ---------------------------------------------------------------------------------------------------------
sklearn = pytest.importorskip("sklearn")


def _xy():
    r = np.random.default_rng(0)
    X = r.uniform(0, 10, (150, 2))
    return X, (X[:, 0] > 5).astype(int)


ESTIMATORS = {
    "DiffPID3Classifier": (dict(epsilon=0.6, depth=2, n_max=200, classes=[0, 1]), PureDPComposition(0.1, 6)),
    "DPMOETClassifier": (dict(epsilon=1.0, classes=[0, 1], **MOET), AdaptiveBoundedRangeComposition(0.25, 4)),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimator_fit_charges_once_before_any_randomness(name):
    from dpselect import sklearn as dsk

    cls = getattr(dsk, name)
    params, want = ESTIMATORS[name]
    X, y = _xy()

    def call(acc, gen):
        est = cls(feature_bounds=(0, 10), random_state=gen, accountant=acc, **params).fit(X, y)
        return est.predict(X).tolist()

    _check_entry(call, params["epsilon"], f"{name}.fit", want)
    # a legacy RandomState is drawn from (its seed) only after the charge
    rs = np.random.RandomState(1)
    before = rs.get_state()[1].copy()
    with pytest.raises(BudgetExceededError):
        cls(feature_bounds=(0, 10), random_state=rs, accountant=Accountant(epsilon=0.01), **params).fit(X, y)
    assert (rs.get_state()[1] == before).all()


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_clones_share_the_accountant(name):
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    from dpselect import sklearn as dsk

    cls = getattr(dsk, name)
    params, _ = ESTIMATORS[name]
    acc = Accountant(epsilon=100.0)
    est = cls(feature_bounds=(0, 10), random_state=0, accountant=acc, **params)
    twin = clone(est)
    assert twin.accountant is acc and twin is not est
    assert clone(cls(feature_bounds=(0, 10), **params)).accountant is None
    X, y = _xy()
    cross_val_score(est, X, y, cv=3)
    assert [r.label for r in acc.history] == [f"{name}.fit"] * 3   # every fold's fit on the one budget


# ---------------------------------------------------------------------------------------------------------
# Dask selectors
# ---------------------------------------------------------------------------------------------------------
def _dask_entries():
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from dpselect import dask as ddp

    u = da.from_array(np.array([1.0, 5.0, 2.0, 4.0, 3.0]), chunks=2)
    s = dd.from_pandas(pd.Series([1.0, 9.0, 2.0, 4.0], index=list("abcd")), npartitions=2)
    rows = dd.from_pandas(pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4], "item": list("abacabc")}), npartitions=2)
    sf = lambda part: dpselect.constant(len(part), 1.0)   # noqa: E731
    return {
        "exponential": (lambda acc, g: _plain(ddp.exponential(u, epsilon=0.5, sensitivity=1.0, k=2, rng=g,
                                                              accountant=acc)), 0.5, "exponential(k=2)",
                        AdaptiveBoundedRangeComposition(0.25, 2)),
        "report_noisy_max": (lambda acc, g: ddp.report_noisy_max(s, epsilon=0.5, sensitivity=1.0, noise="gumbel",
                                                                 rng=g, accountant=acc), 0.5,
                             "report_noisy_max", BoundedRange(0.5)),
        "permute_and_flip": (lambda acc, g: ddp.permute_and_flip(u, epsilon=0.5, sensitivity=1.0, rng=g,
                                                                 accountant=acc), 0.5, "permute_and_flip",
                             PureDP(0.5)),
        "local_dampening": (lambda acc, g: _plain(ddp.local_dampening(s, epsilon=0.5, sensitivity_function=sf, k=2,
                                                                      rng=g, accountant=acc)), 0.5,
                            "local_dampening(k=2)", AdaptiveBoundedRangeComposition(0.25, 2)),
        "frequent_items": (lambda acc, g: ddp.frequent_items(rows, epsilon=0.5, contributions=2, items=list("abcd"),
                                                             rng=g, accountant=acc), 0.5, "dask.frequent_items",
                           BoundedRange(0.5)),
    }


@pytest.mark.parametrize("name", ["exponential", "report_noisy_max", "permute_and_flip", "local_dampening",
                                  "frequent_items"])
def test_dask_entry_point_charges_once_before_any_randomness(name):
    _check_entry(*_dask_entries()[name])


def test_dask_return_convention():
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from dpselect import dask as ddp

    u = da.from_array(np.array([1.0, 5.0, 2.0, 4.0, 3.0]), chunks=2)
    s = dd.from_pandas(pd.Series([1.0, 9.0, 2.0, 4.0], index=list("abcd")), npartitions=2)
    one = ddp.exponential(u, epsilon=1.0, sensitivity=1.0, rng=2)
    arr = ddp.exponential(u, epsilon=1.0, sensitivity=1.0, k=1, rng=2)
    assert type(one) is int and arr.dtype == np.int64 and arr.tolist() == [one]
    lab = ddp.exponential(s, epsilon=1.0, sensitivity=1.0, rng=2)
    labs = ddp.exponential(s, epsilon=1.0, sensitivity=1.0, k=1, rng=2)
    assert isinstance(lab, str) and labs.shape == (1,) and labs.tolist() == [lab]
    assert ddp.exponential(s, epsilon=1.0, sensitivity=1.0, k=2, rng=2).shape == (2,)
