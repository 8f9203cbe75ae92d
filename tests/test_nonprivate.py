"""Non-private releases cost infinity (``NonPrivate``), and the history records events (what ran) apart from
their analysis, exportable to dp-accounting."""
from __future__ import annotations

import ast
import math
import pathlib
import warnings

import numpy as np
import pytest

import dpselect
from dpselect import BudgetExceededError
from dpselect.accounting import (Accountant, ApproxDP, BoundedRange, Event, GaussianMechanism, NonPrivate,
                                 PureDP, PureDPComposition, ZCDP)
from dpselect.multiobjective import priv_agg, priv_pareto
from dpselect.registry import Mechanism, get_mechanism

U = np.array([1.0, 5.0, 2.0, 3.0, 0.5, 4.0])
SF = dpselect.constant(6, 1.0)
SELECTORS = [
    (dpselect.exponential, {"sensitivity": 1.0}),
    (dpselect.permute_and_flip, {"sensitivity": 1.0}),
    (dpselect.report_noisy_max, {"sensitivity": 1.0}),
    (dpselect.local_dampening, {"sensitivity_function": SF}),
    (dpselect.shifted_local_dampening, {"sensitivity_function": SF}),
]
IDS = ["EM", "PF", "RNM", "LD", "SLD"]
MODES = [dict(), dict(delta=1e-6), dict(delta=1e-6, mode="fixed"), dict(delta=1e-6, mode="batch"),
         dict(mode="basic")]


def test_nonprivate_value():
    g = NonPrivate()
    assert [g.epsilon(d) for d in (0.0, 1e-9, 0.5)] == [math.inf] * 3
    assert [g.delta(e) for e in (0.0, 1.0, 1e6)] == [1.0] * 3
    assert g.zcdp() == math.inf and g.rdp(2.0) == math.inf and repr(g) == "NonPrivate()"
    assert repr(NonPrivate(("a",))) == "NonPrivate(calls=('a',))"
    with pytest.raises(ValueError, match="delta"):
        g.epsilon(1.0)


@pytest.mark.parametrize("budget", MODES, ids=["adaptive", "adaptive-delta", "fixed", "batch", "basic"])
def test_a_finite_budget_refuses_nonprivate_and_infinity_records_it(budget):
    acc = Accountant(epsilon=1e6, **budget)
    acc.charge(PureDP(0.5), label="first")
    assert not acc.can_afford(NonPrivate())
    with pytest.raises(BudgetExceededError, match="label 'leak'") as err:
        acc.charge(NonPrivate(), label="leak")
    assert "exact=False)" not in str(err.value) and len(acc.history) == 1
    assert acc.spent(0.0).epsilon(0.0) == 0.5
    rec = Accountant(epsilon=math.inf, **budget)
    assert rec.can_afford(NonPrivate()) and rec.remaining() == NonPrivate()
    rec.charge(PureDP(0.5), label="first")
    assert rec.spent(0.0).epsilon(0.0) == 0.5
    rec.charge(NonPrivate(), label="leak")
    rec.charge(BoundedRange(0.25), label="after")
    assert rec.spent() == NonPrivate(("leak",)) and rec.spent().epsilon(1e-6) == math.inf
    assert rec.spent(0.5) == NonPrivate(("leak",)) and "leak" in repr(rec)
    with pytest.raises(ValueError, match="'leak' is non-private"):
        rec.spent_zcdp()


def test_an_infinite_budget_still_counts_delta_and_refuses_what_basic_cannot_compose():
    rec = Accountant(epsilon=math.inf, delta=1e-6, mode="basic")
    rec.charge(ApproxDP(1.0, 5e-7))
    assert not rec.can_afford(ApproxDP(1.0, 6e-7)) and not rec.can_afford(ZCDP(0.1))
    assert rec.spent() == ApproxDP(1.0, 5e-7)


@pytest.mark.parametrize("fn,sens", SELECTORS, ids=IDS)
@pytest.mark.parametrize("kw", [{}, {"k": 2}, {"size": 3}])
def test_exact_false_is_charged_nonprivate_before_drawing(fn, sens, kw):
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    acc = Accountant(epsilon=1e6)
    with pytest.raises(BudgetExceededError, match="exact=False"):
        fn(U, epsilon=1.0, **sens, exact=False, rng=rng, accountant=acc, **kw)
    assert rng.bit_generator.state == state and acc.history == ()
    rec = Accountant(epsilon=math.inf)
    a = fn(U, epsilon=1.0, **sens, exact=False, rng=7, accountant=rec, **kw)
    b = fn(U, epsilon=1.0, **sens, exact=False, rng=7, **kw)     # same picks: the stream is unchanged
    assert np.array_equal(a, b)
    (r,) = rec.history
    assert r.guarantee == NonPrivate() and r.label.endswith("exact=False): non-private")
    assert r.label.startswith(fn.__name__) and rec.spent() == NonPrivate((r.label,))
    assert r.event.mechanism == fn.__name__ and ("exact", False) in r.event.options
    fn(U, epsilon=1.0, **sens, rng=7, accountant=rec, **kw)                  # exact: charged as before
    assert rec.history[1].guarantee == get_mechanism(fn.__name__).privacy(1.0, k=kw.get("k")) or "size" in kw


def test_registry_select_and_user_selectors_charge_nonprivate_for_exact_false():
    acc = Accountant(epsilon=1e6)
    with pytest.raises(BudgetExceededError, match=r"exponential\(exact=False\): non-private"):
        get_mechanism("EM").select(U, epsilon=1.0, sensitivity=1.0, exact=False, rng=0, accountant=acc)

    def sel(u, *, epsilon, sensitivity, rng=None, exact=True, k=None):
        return int(np.argmax(u))

    def probs(u, *, epsilon, sensitivity):
        return np.eye(len(u))[int(np.argmax(u))]

    spec = Mechanism("argmax_user", "global", sel, probs, guarantee=PureDP)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError, match=r"argmax_user\(exact=False\): non-private"):
        spec.select(U, epsilon=1.0, sensitivity=1.0, exact=False, rng=gen, accountant=acc)
    assert gen.bit_generator.state == state and acc.history == ()
    rec = Accountant(epsilon=math.inf)
    assert spec.select(U, epsilon=1.0, sensitivity=1.0, exact=False, rng=0, accountant=rec) == 1
    assert rec.history[0].guarantee == NonPrivate()
    assert rec.history[0].event == Event("argmax_user", 1.0, None, 0.0, None, (("exact", False),), "add_remove")


@pytest.mark.parametrize("app", [priv_pareto, priv_agg])
def test_multiobjective_exact_false_is_nonprivate(app):
    M = [[3.0, 5.0], [5.0, 3.0], [4.0, 2.0], [2.0, 4.0]]
    args = (M,) if app is priv_pareto else (M, [0.5, 0.5])
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError, match="non-private"):
        app(*args, epsilon=1.0, sensitivities=[1.0, 1.0], exact=False, rng=gen, accountant=Accountant(1e6))
    assert gen.bit_generator.state == state
    rec = Accountant(epsilon=math.inf)
    app(*args, epsilon=1.0, sensitivities=[1.0, 1.0], k=2, exact=False, rng=0, accountant=rec)
    app(*args, epsilon=1.0, sensitivities=[1.0, 1.0], k=2, rng=0, accountant=rec)
    (a, b) = rec.history
    assert a.guarantee == NonPrivate() and a.label.endswith(": non-private (exact=False)")
    assert b.guarantee == get_mechanism("exponential").privacy(1.0, k=2)
    assert b.event == Event(app.__name__, 1.0, 2, options=(("mechanism", "exponential"),), relation="add_remove")


def _blobs(n=300):
    r = np.random.default_rng(0)
    X = r.uniform(0, 1, (n, 2))
    return X, (X[:, 0] > 0.5).astype(int)


@pytest.mark.parametrize("ignore", [False, True])
def test_a_fit_that_reads_a_public_quantity_from_the_data_is_charged_nonprivate(ignore):
    """classes= omitted: read from y with a PrivacyLeakWarning, so the fit's charge is NonPrivate (before any
    random bit), whatever the warning filters."""
    from dpselect.sklearn import DiffPID3Classifier
    X, y = _blobs()
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    clf = DiffPID3Classifier(epsilon=1.0, depth=1, n_max=300, feature_bounds=(0, 1), random_state=gen,
                             accountant=Accountant(epsilon=1e6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if ignore else "always")
        with pytest.raises(BudgetExceededError, match=r"DiffPID3Classifier.fit: non-private \(classes read from"):
            clf.fit(X, y)
    assert gen.bit_generator.state == state and not hasattr(clf, "tree_")
    rec = Accountant(epsilon=math.inf)
    with pytest.warns(dpselect.PrivacyLeakWarning, match="classes"):
        clf.set_params(accountant=rec, random_state=0).fit(X, y)
    clf.set_params(classes=[0, 1]).fit(X, y)          # public classes: the private charge
    assert rec.spent() == NonPrivate(("DiffPID3Classifier.fit: non-private (classes read from the data)",))
    assert rec.history[1].guarantee == clf.privacy_guarantee()


def test_a_search_whose_checks_read_from_the_data_is_charged_nonprivate():
    from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
    X, y = _blobs(400)
    acc = Accountant(epsilon=math.inf)
    with pytest.warns(dpselect.PrivacyLeakWarning, match="classes"):
        PrivateSearchCV(DiffPID3Classifier(n_max=400, feature_bounds=(0, 1)), {"depth": [1, 2]}, epsilon=1.0,
                        mean_runs=2, random_state=0, accountant=acc).fit(X, y)
    assert [r.guarantee for r in acc.history] == [NonPrivate()]
    assert acc.history[0].label == "PrivateSearchCV.fit: non-private (classes read from the data)"


def test_dask_frequent_items_without_a_domain_is_charged_nonprivate():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    from dpselect import dask as D
    df = pd.DataFrame({"user": np.arange(40) % 10, "item": [f"i{j % 4}" for j in range(40)]})
    rows = dd.from_pandas(df, npartitions=2)
    with pytest.raises(BudgetExceededError, match="items \\(the candidate domain\\) read from the data"):
        with pytest.warns(dpselect.PrivacyLeakWarning):    # warned at validation, before the charge
            D.frequent_items(rows, epsilon=1.0, contributions=2, rng=0, accountant=Accountant(1e6))
    acc = Accountant(epsilon=1e6, neighbours="user_add_remove")
    D.frequent_items(rows, epsilon=1.0, contributions=2, items=["i0", "i1", "i2", "i3"], rng=0, accountant=acc)
    assert acc.history[0].guarantee == BoundedRange(1.0)


def _charged(fn, *args, **kw):
    """The labels ``fn`` charges to an infinite budget, and whether a finite one refused it untouched."""
    gen = np.random.default_rng(2)
    state = gen.bit_generator.state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpselect.PrivacyLeakWarning)
        with pytest.raises(BudgetExceededError, match="non-private"):
            fn(*args, rng=gen, accountant=Accountant(epsilon=1e6), **kw)
        rec = Accountant(epsilon=math.inf)
        fn(*args, rng=0, accountant=rec, **kw)
    assert gen.bit_generator.state == state
    return [r.label for r in rec.history if isinstance(r.guarantee, NonPrivate)]


def test_applications_that_read_a_public_quantity_from_the_data_are_charged_nonprivate():
    from dpselect.graphs import MotkinSampler, from_edges, prepare_priv_topk, priv_topk
    from dpselect.tabular import load_table
    from dpselect.trees import diffpid3
    edges = ([0, 0, 0, 1, 4, 4, 5], [1, 2, 3, 2, 5, 6, 6])
    public, seen = from_edges(*edges, n_nodes=8), from_edges(*edges)
    assert _charged(priv_topk, public, k=2, epsilon=1.0, mechanism="PF") == \
        ["priv_topk: non-private (max_degree read from the data)"]
    assert _charged(priv_topk, seen, k=2, epsilon=1.0, mechanism="PF", max_degree=7) == \
        ["priv_topk: non-private (nodes (the candidate set) read from the data)"]
    with pytest.warns(dpselect.PrivacyLeakWarning):
        prepared = prepare_priv_topk(public)             # the leak is the prepared scores': every draw pays it
    assert _charged(priv_topk, prepared, k=2, epsilon=1.0, mechanism="PF") == \
        ["priv_topk: non-private (max_degree read from the data)"]
    acc = Accountant(epsilon=1e6, neighbours="edge_add_remove")
    priv_topk(prepare_priv_topk(public, max_degree=7), k=2, epsilon=1.0, mechanism="PF", rng=0, accountant=acc)
    assert acc.history[0].guarantee == get_mechanism("PF").privacy(1.0, k=2)
    with pytest.warns(dpselect.PrivacyLeakWarning):
        sampler = MotkinSampler(seen, "pareto")          # the leak is the sampler's: every sample pays it
    assert _charged(sampler.sample, epsilon=1.0) == \
        ["MotkinSampler.sample: non-private (nodes (the candidate set) read from the data)"]
    r = np.random.default_rng(0)
    x = r.integers(0, 3, 60)
    table = load_table({"a": x, "y": (x > 0).astype(int)}, "y", categories={"a": [0, 1, 2]})
    assert _charged(diffpid3, table, epsilon=1.0, depth=1) == \
        ["diffpid3(mechanism='local_dampening'): non-private (n_max read from the data)"]


def _raise_messages() -> list[str]:
    """The constant text of every exception raised in the library's source (f-string pieces joined)."""
    out = []
    for path in pathlib.Path(dpselect.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                out.append("".join(c.value for c in ast.walk(node.exc)
                                   if isinstance(c, ast.Constant) and isinstance(c.value, str)))
    return out


def test_no_error_message_steers_to_a_nonprivate_path():
    msgs = _raise_messages()
    assert len(msgs) > 500 and any("exact sampling cannot resolve" in m for m in msgs)
    assert [m for m in msgs if "exact=False" in m or "exact = False" in m] == []


def test_selectors_record_events():
    acc = Accountant(epsilon=100.0, delta=1e-6, mode="fixed")
    dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, k=3, delta=1e-6, rng=0, accountant=acc)
    dpselect.report_noisy_max(U, epsilon=0.5, sensitivity=1.0, noise="laplace", size=2, base_measure=[1] * 6,
                              rng=0, accountant=acc)
    e1, e2 = (r.event for r in acc.history)
    assert e1 == Event("exponential", 1.0, 3, 1e-6, None, (), "add_remove")
    assert e2 == Event("report_noisy_max", 0.5, None, 0.0, 2, (("base_measure", True), ("noise", "laplace")),
                      "add_remove")
    assert e1.relation == "add_remove" and acc.history[0].guarantee.k == 3
    assert Accountant(1.0).charge(PureDP(0.5)).event is None


# -- export to dp-accounting ------------------------------------------------------------------------------
def _theirs(acc: Accountant, delta: float, kind: str, interval: float = 1e-5) -> float:
    """dp-accounting's ε(δ) of ``acc.to_dp_accounting()`` (PLD or RDP, under REPLACE_ONE)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
    if kind == "pld":
        a = PLDAccountant(NeighboringRelation.REPLACE_ONE, value_discretization_interval=interval)
    else:
        a = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    return a.compose(acc.to_dp_accounting()).get_epsilon(delta)


def test_export_pure_compositions_agree_with_dp_accounting():
    """Both exact: PLD (discretisation error <= k · interval = 4e-7 here) equals spent() within 1e-6."""
    acc = Accountant(epsilon=5.0, delta=1e-6, mode="fixed")
    for _ in range(4):
        acc.charge(PureDP(0.25))
    assert acc.spent(0.0).epsilon(0.0) == 1.0
    assert _theirs(acc, 0.0, "pld", 1e-7) == pytest.approx(1.0, abs=1e-6)
    ours = acc.spent(1e-6).epsilon(1e-6)          # the exact k-fold composition (Kairouz et al.)
    assert ours == pytest.approx(PureDPComposition(0.25, 4).epsilon(1e-6), abs=1e-12)
    assert _theirs(acc, 1e-6, "pld", 1e-7) == pytest.approx(ours, abs=1e-6)
    assert _theirs(acc, 1e-6, "pld") >= ours and _theirs(acc, 1e-6, "rdp") >= ours
    # one record of k = 10 picks (exported as 10 events; dp-accounting 0.6's PLD drops a self-composition's
    # count for randomized response): the same total
    top = Accountant(epsilon=5.0, delta=1e-6, mode="fixed")
    dpselect.permute_and_flip(U, epsilon=1.0, sensitivity=1.0, k=5, rng=0, accountant=top)
    assert _theirs(top, 0.0, "pld") == pytest.approx(1.0, abs=1e-4) and _theirs(top, 0.0, "pld") >= 1.0


def test_export_bounded_range_is_never_below_ours():
    """BR releases are exported as the pure-DP events they imply: exact at δ = 0, never tighter than spent()."""
    acc = Accountant(epsilon=10.0, delta=1e-6, mode="batch")
    for _ in range(20):
        acc.charge(BoundedRange(0.1))
    ours = acc.spent(1e-6).epsilon(1e-6)
    assert _theirs(acc, 1e-6, "pld") >= ours and _theirs(acc, 1e-6, "rdp") >= ours
    assert _theirs(acc, 0.0, "pld") == pytest.approx(2.0, abs=1e-3) and _theirs(acc, 0.0, "pld") >= 2.0


def test_export_gaussian_and_nonprivate():
    acc = Accountant(epsilon=100.0, delta=1e-3, mode="fixed")
    acc.charge(GaussianMechanism(sigma=3.0))
    assert _theirs(acc, 1e-6, "pld") == pytest.approx(GaussianMechanism(3.0).epsilon(1e-6), abs=1e-3)
    rec = Accountant(epsilon=math.inf)
    rec.charge(PureDP(0.1))
    rec.charge(NonPrivate(), label="leak")
    assert rec.spent().epsilon(1e-6) == math.inf
    assert _theirs(rec, 1e-6, "pld") == math.inf == _theirs(rec, 1e-6, "rdp")


def test_the_paper_code_protocol_is_charged_nonprivate():
    from dpselect_reproductions.paper_code import TopkAggQuirks, TopkParetoQuirks
    from dpselect.graphs import from_edges, motkin_objectives
    g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
    U = motkin_objectives(g)[0]
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError, match=r"non-private \(paper-code protocol\)"):
        TopkParetoQuirks(U, g.degrees, local=True, quirks=("fp-raise",)).sample(k=2, epsilon=1.0, rng=gen,
                                                                               accountant=Accountant(1e6))
    assert gen.bit_generator.state == state
    rec = Accountant(epsilon=math.inf)
    TopkAggQuirks(U, g.degrees, (1.0, 100.0), quirks=("delta-code",)).sample(k=2, epsilon=1.0, rng=gen,
                                                                            accountant=rec)
    assert rec.spent() == NonPrivate(("TopkAggQuirks.sample: non-private (paper-code protocol)",))


def test_applications_record_events():
    from dpselect.graphs import from_edges, priv_topk
    from dpselect.tune import select_private_candidate
    acc = Accountant(epsilon=100.0, neighbours="edge_add_remove")
    g = from_edges([0, 0, 0, 1, 4, 4, 5], [1, 2, 3, 2, 5, 6, 6], n_nodes=8)
    priv_topk(g, k=2, epsilon=1.0, mechanism="PF", max_degree=7, rng=0, accountant=acc)
    select_private_candidate(lambda gen: (1.0, "a"), run_privacy=0.5, method="liu_talwar", rng=0, accountant=acc)
    assert [r.event for r in acc.history] == [
        Event("priv_topk", 1.0, 2, options=(("mechanism", "permute_and_flip"),), relation="edge_add_remove"),
        Event("select_private_candidate", options=(("method", "liu_talwar"), ("mean_runs", 10.0), ("base_run", 0.5)),
              relation="edge_add_remove"),
    ]


def test_every_privacy_leak_warning_is_recorded_for_the_charge():
    """Each function of the library that emits PrivacyLeakWarning also records the quantity for the charge
    of the release running (``_note_read_from_data``); the others go through ``warn_public_from_data``."""
    missing = []
    for path in pathlib.Path(dpselect.__file__).parent.rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
            calls = {getattr(c.func, "attr", getattr(c.func, "id", None)) for c in ast.walk(fn)
                     if isinstance(c, ast.Call)}
            if {"warn", "warn_explicit"} & calls and "PrivacyLeakWarning" in names \
                    and "_note_read_from_data" not in calls:
                missing.append(f"{path.name}:{fn.name}")
    assert missing == []
