"""Neighbour relations: every entry point that takes ``accountant=`` charges the relation its privacy proof uses.

The entry points are found by inspecting the signatures of every public callable of dpselect and its
subpackages (a new one is caught by ``test_every_entry_point_is_in_the_table``). Each is called on a tiny input
with an accountant of every relation: the record says the relation of the table; a mismatch is converted
(add/remove ⇒ replace-one) or refused before any random bit is drawn. The table is the one of
docs/accounting.md ("Neighbour relations of the entry points"), parsed here so the two cannot drift.
The conversions themselves are checked by brute force on tiny mechanisms.
"""
from __future__ import annotations

import importlib
import inspect
import itertools
import math
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest

import dpselect
from dpselect import Accountant
from dpselect.accounting import (AdaptiveBoundedRangeComposition, ApproxDP, BoundedRange, BoundedRangeComposition,
                                 GaussianMechanism, PureDP, PureDPComposition, ZCDP)
from dpselect.accounting.neighbours import convert

ROOT = Path(__file__).resolve().parents[1]
ACCOUNTANTS = ("add_remove", "replace_one", "edge_add_remove", "user_add_remove", "my_relation")
OWN = "the accountant's"


# ---------------------------------------------------------------------------------------------------------
# the entry points, found by signature
# ---------------------------------------------------------------------------------------------------------
def entry_points() -> dict[str, object]:
    """Shortest public path -> object, for every public callable taking ``accountant=`` (a class: by its
    ``__init__``; a method: ``Class.method``)."""
    found: dict[int, tuple[str, object]] = {}
    mods = [dpselect] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(dpselect.__path__, "dpselect.")
                         if not any(p.startswith("_") for p in m.name.split(".")[1:])
                         and m.name.split(".")[1] not in ("experiments", "cli", "__main__")]
    for mod in mods:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            members = [(name, obj, obj)] if callable(obj) else []
            if inspect.isclass(obj):
                members = [(name, obj, obj.__init__)] + [(f"{name}.{m}", f, f) for m, f in vars(obj).items()
                                                         if not m.startswith("_") and callable(f)]
            for path, key, fn in members:
                try:
                    params = inspect.signature(fn).parameters
                except (TypeError, ValueError):
                    continue
                if "accountant" in params:
                    full = f"{mod.__name__}.{path}"
                    old = found.get(id(key))
                    if old is None or (full.count("."), full) < (old[0].count("."), old[0]):
                        found[id(key)] = (full, key)
    return dict(found.values())


# ---------------------------------------------------------------------------------------------------------
# the table of docs/accounting.md
# ---------------------------------------------------------------------------------------------------------
def doc_table() -> dict[str, tuple[str, str, str]]:
    """entry point -> (relation, guarantee, audit test), from the table of docs/accounting.md."""
    text = (ROOT / "docs" / "accounting.md").read_text(encoding="utf-8")
    block = text.split("## Neighbour relations of the entry points", 1)[1]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`dpselect."):
            continue
        for name in re.findall(r"`(dpselect\.[\w.]+)`", cells[0]):
            rows[name] = (cells[1].replace("`", ""), cells[2], cells[3].replace("`", ""))
    return rows


#: entry point -> the relation its privacy proof uses (OWN: the accountant's own, the caller's claim for the
#: sensitivity; "neighbours=": the argument, default replace_one)
RELATIONS = {
    "dpselect.exponential": OWN, "dpselect.report_noisy_max": OWN, "dpselect.permute_and_flip": OWN,
    "dpselect.local_dampening": OWN, "dpselect.shifted_local_dampening": OWN, "dpselect.registry.Mechanism.select": OWN,
    "dpselect.multiobjective.priv_pareto": OWN, "dpselect.multiobjective.priv_agg": OWN,
    "dpselect.tune.select_private_candidate": OWN,
    "dpselect.dask.exponential": OWN, "dpselect.dask.report_noisy_max": OWN, "dpselect.dask.permute_and_flip": OWN,
    "dpselect.dask.local_dampening": OWN, "dpselect.top_k": OWN, "dpselect.dask.top_k": OWN,
    "dpselect.quantile": "neighbours=", "dpselect.quantiles": "neighbours=", "dpselect.dask.quantiles": "neighbours=",
    "dpselect.median": "replace_one", "dpselect.quantiles.median_rank": "replace_one",
    "dpselect.quantiles.clipping_bounds": "replace_one",
    "dpselect.graphs.priv_topk": "edge_add_remove", "dpselect.graphs.dp_motkin_pareto": "edge_add_remove",
    "dpselect.graphs.dp_motkin_agg": "edge_add_remove", "dpselect.graphs.MotkinSampler.sample": "edge_add_remove",
    "dpselect.trees.diffpid3": "add_remove", "dpselect.trees.dp_moet": "add_remove",
    "dpselect.sklearn.select_model": "add_remove", "dpselect.sklearn.PrivateSearchCV": "add_remove",
    "dpselect.sklearn.DiffPID3Classifier": "add_remove", "dpselect.sklearn.DPMOETClassifier": "add_remove",
    "dpselect.dask.frequent_items": "user_add_remove",
}


# ---------------------------------------------------------------------------------------------------------
# one tiny call per entry point: call(accountant, generator, **extra)
# ---------------------------------------------------------------------------------------------------------
def _find(path):
    """The object at a public path, read as the enumeration names it: attributes from ``dpselect`` down, a
    subpackage where an attribute of the same name is a function with more of the path to go
    (``dpselect.quantiles`` is both)."""
    parts = path.split(".")
    obj = dpselect
    for i, part in enumerate(parts[1:], start=2):
        nxt = getattr(obj, part, None)
        if inspect.ismodule(obj) and (nxt is None or (i < len(parts) and inspect.isfunction(nxt))):
            nxt = importlib.import_module(f"{obj.__name__}.{part}")
        obj = nxt
    return obj


def _calls():
    from dpselect.graphs import from_edges
    from dpselect.tabular import load_table

    graph = from_edges([0, 0, 0, 1, 4, 4, 5], [1, 2, 3, 2, 5, 6, 6], n_nodes=8)
    r = np.random.default_rng(11)
    x = r.integers(0, 3, 60)
    table = load_table({"a": x, "b": r.integers(0, 2, 60), "y": (x > 0).astype(int)}, "y",
                       categories={"a": [0, 1, 2], "b": [0, 1], "y": [0, 1]})
    moet = dict(population=6, selection=2, generations=1, depth=1, max_depth=2, output=2)
    X = np.random.default_rng(0).uniform(0, 10, (60, 2))
    y = (X[:, 0] > 5).astype(int)
    values = [5.0, 1.0, 9.0, 4.0, 7.0, 3.0]
    u = [1.0, 5.0, 2.0, 4.0]
    f = _find
    out = {
        "dpselect.exponential": lambda a, g: f("dpselect.exponential")(u, epsilon=0.5, sensitivity=1.0, rng=g,
                                                                       accountant=a),
        "dpselect.report_noisy_max": lambda a, g: f("dpselect.report_noisy_max")(u, epsilon=0.5, sensitivity=1.0,
                                                                                 rng=g, accountant=a),
        "dpselect.permute_and_flip": lambda a, g: f("dpselect.permute_and_flip")(u, epsilon=0.5, sensitivity=1.0,
                                                                                 rng=g, accountant=a),
        "dpselect.local_dampening": lambda a, g: f("dpselect.local_dampening")(
            u, epsilon=0.5, sensitivity_function=dpselect.constant(4, 1.0), rng=g, accountant=a),
        "dpselect.shifted_local_dampening": lambda a, g: f("dpselect.shifted_local_dampening")(
            u, epsilon=0.5, sensitivity_function=dpselect.constant(4, 1.0), direction="increasing", rng=g,
            accountant=a),
        "dpselect.registry.Mechanism.select": lambda a, g: dpselect.registry.get_mechanism("EM").select(
            u, epsilon=0.5, sensitivity=1.0, rng=g, accountant=a),
        "dpselect.multiobjective.priv_pareto": lambda a, g: f("dpselect.multiobjective.priv_pareto")(
            [[3, 5], [5, 3], [4, 2]], epsilon=0.5, sensitivities=[1.0, 1.0], rng=g, accountant=a),
        "dpselect.multiobjective.priv_agg": lambda a, g: f("dpselect.multiobjective.priv_agg")(
            [[3, 5], [5, 3], [4, 2]], [0.5, 0.5], epsilon=0.5, sensitivities=[1.0, 1.0], rng=g, accountant=a),
        "dpselect.tune.select_private_candidate": lambda a, g: f("dpselect.tune.select_private_candidate")(
            lambda h: (float(h.random()), 0), run_privacy=PureDP(0.1), method="liu_talwar", mean_runs=2.0, rng=g,
            accountant=a).candidate,
        "dpselect.top_k": lambda a, g: f("dpselect.top_k")(u, k=2, epsilon=0.5, sensitivity=1.0, rng=g,
                                                             accountant=a).tolist(),
        "dpselect.quantile": lambda a, g, **kw: f("dpselect.quantile")(values, 0.5, epsilon=0.5, bounds=(0.0, 10.0),
                                                                      rng=g, accountant=a, **kw),
        "dpselect.quantiles": lambda a, g, **kw: f("dpselect.quantiles")(values, [0.25, 0.75], epsilon=0.5,
                                                                        bounds=(0.0, 10.0), rng=g, accountant=a,
                                                                        **kw).tolist(),
        "dpselect.median": lambda a, g: f("dpselect.median")(values, epsilon=0.5, bound=10.0,
                                                                                 rng=g, accountant=a),
        "dpselect.quantiles.median_rank": lambda a, g: f("dpselect.quantiles.median_rank")(
            values, epsilon=0.5, bound=10.0, rng=g, accountant=a),
        "dpselect.quantiles.clipping_bounds": lambda a, g: f("dpselect.quantiles.clipping_bounds")(
            values, epsilon=0.5, rng=g, accountant=a),
        "dpselect.graphs.priv_topk": lambda a, g: f("dpselect.graphs.priv_topk")(graph, epsilon=0.5, max_degree=7,
                                                                                 rng=g, accountant=a),
        "dpselect.graphs.dp_motkin_pareto": lambda a, g: f("dpselect.graphs.dp_motkin_pareto")(
            graph, epsilon=0.5, rng=g, accountant=a),
        "dpselect.graphs.dp_motkin_agg": lambda a, g: f("dpselect.graphs.dp_motkin_agg")(graph, epsilon=0.5, rng=g,
                                                                                         accountant=a),
        "dpselect.graphs.MotkinSampler.sample": lambda a, g: f("dpselect.graphs.MotkinSampler")(
            graph, "agg").sample(epsilon=0.5, rng=g, accountant=a),
        "dpselect.trees.diffpid3": lambda a, g: f("dpselect.trees.diffpid3")(table, epsilon=0.5, depth=1, n_max=100,
                                                                             rng=g, accountant=a).label.tolist(),
        "dpselect.trees.dp_moet": lambda a, g: repr(f("dpselect.trees.dp_moet")(table, epsilon=1.0, rng=g,
                                                                                accountant=a, **moet).trees),
        "dpselect.sklearn.select_model": lambda a, g: f("dpselect.sklearn.select_model")(
            y=[1, 1, 0, 0] * 5, predictions=[[1, 1, 0, 0] * 5, [0, 1, 0, 1] * 5], epsilon=0.5, random_state=g, accountant=a),
        "dpselect.sklearn.PrivateSearchCV": lambda a, g: f("dpselect.sklearn.PrivateSearchCV")(
            f("dpselect.sklearn.DiffPID3Classifier")(n_max=100, feature_bounds=(0, 10), classes=[0, 1]),
            {"depth": [1, 2]}, epsilon=1.0, mean_runs=2, random_state=g, accountant=a).fit(X, y).best_params_,
        "dpselect.sklearn.DiffPID3Classifier": lambda a, g: f("dpselect.sklearn.DiffPID3Classifier")(
            epsilon=0.5, depth=1, n_max=100, feature_bounds=(0, 10), classes=[0, 1], random_state=g,
            accountant=a).fit(X, y).predict(X).tolist(),
        "dpselect.sklearn.DPMOETClassifier": lambda a, g: f("dpselect.sklearn.DPMOETClassifier")(
            epsilon=1.0, feature_bounds=(0, 10), classes=[0, 1], random_state=g, accountant=a,
            **moet).fit(X, y).predict(X).tolist(),
    }
    try:
        import dask.array as da
        import dask.dataframe as dd
        import pandas as pd
    except ImportError:      # the dask extra is not installed: its entry points are not public either
        return out
    ud = da.from_array(np.array(u), chunks=2)
    rows = dd.from_pandas(pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4], "item": list("abacabc")}), npartitions=2)
    out.update({
        "dpselect.dask.exponential": lambda a, g: f("dpselect.dask.exponential")(ud, epsilon=0.5, sensitivity=1.0,
                                                                                 rng=g, accountant=a),
        "dpselect.dask.report_noisy_max": lambda a, g: f("dpselect.dask.report_noisy_max")(
            ud, epsilon=0.5, sensitivity=1.0, rng=g, accountant=a),
        "dpselect.dask.permute_and_flip": lambda a, g: f("dpselect.dask.permute_and_flip")(
            ud, epsilon=0.5, sensitivity=1.0, rng=g, accountant=a),
        "dpselect.dask.local_dampening": lambda a, g: f("dpselect.dask.local_dampening")(
            ud, epsilon=0.5, sensitivity_function=lambda part: dpselect.constant(len(part), 1.0), rng=g,
            accountant=a),
        "dpselect.dask.quantiles": lambda a, g, **kw: f("dpselect.dask.quantiles")(
            da.from_array(np.array(values), chunks=3), [0.5], epsilon=0.5, bounds=(0.0, 10.0), rng=g, accountant=a,
            **kw).tolist(),
        "dpselect.dask.top_k": lambda a, g: f("dpselect.dask.top_k")(ud, k=2, epsilon=0.5, sensitivity=1.0, rng=g,
                                                                     accountant=a).tolist(),
        "dpselect.dask.frequent_items": lambda a, g: f("dpselect.dask.frequent_items")(
            rows, epsilon=0.5, contributions=2, items=list("abcd"), rng=g, accountant=a),
    })
    return out


CALLS = _calls()


def test_every_entry_point_is_in_the_table():
    """A public callable taking accountant= that the tables do not name fails here (and one they name that
    is gone)."""
    assert set(entry_points()) == set(RELATIONS) == set(CALLS)


def test_the_doc_table_is_the_tests_table():
    doc = doc_table()
    assert set(doc) == set(RELATIONS)
    for name, (relation, guarantee, audit) in doc.items():
        want = RELATIONS[name]
        assert relation == ("neighbours= (default replace_one)" if want == "neighbours=" else want), name
        assert guarantee, name
        path, func = audit.split("::")
        assert re.search(rf"^def {func}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), audit


def _expected(name, acc_relation, chosen=None):
    rel = RELATIONS[name]
    return acc_relation if rel == OWN else (chosen or "replace_one") if rel == "neighbours=" else rel


CASES = [(n, a, None) for n in sorted(RELATIONS) for a in ACCOUNTANTS]
CASES += [(n, a, "add_remove") for n in sorted(RELATIONS) if RELATIONS[n] == "neighbours=" for a in ACCOUNTANTS]


@pytest.mark.filterwarnings("ignore::dpselect.PrivacyLeakWarning")
@pytest.mark.parametrize("name, acc_relation, chosen", CASES)
def test_relation_charged(name, acc_relation, chosen):
    """The record's relation is the table's; add/remove on a replace-one accountant is converted (the label
    says so, the guarantee is the group-of-two one); any other mismatch is refused before any random bit."""
    if name not in CALLS:
        pytest.skip("optional dependency missing")
    kw = {} if chosen is None else {"neighbours": chosen}
    stated = _expected(name, acc_relation, chosen)
    gen = np.random.default_rng(5)
    before = gen.bit_generator.state
    acc = Accountant(1000.0, neighbours=acc_relation)
    if stated != acc_relation and (stated, acc_relation) != ("add_remove", "replace_one"):
        with pytest.raises(ValueError, match=f"neighbours={stated!r} cannot be charged to an accountant of "
                                             f"neighbours={acc_relation!r}"):
            CALLS[name](acc, gen, **kw)
        assert acc.history == () and gen.bit_generator.state == before
        return
    CALLS[name](acc, gen, **kw)
    (rec,) = acc.history
    assert rec.neighbours == stated
    if stated == acc_relation:
        assert "[" not in (rec.label or "")
        return
    plain = Accountant(1000.0, neighbours="add_remove")
    CALLS[name](plain, np.random.default_rng(5), **kw)
    stated_g = plain.history[0].guarantee
    assert rec.guarantee == convert(stated_g, "add_remove", "replace_one")
    assert rec.label == f"{plain.history[0].label} [add_remove: {stated_g!r}]"


# ---------------------------------------------------------------------------------------------------------
# the accountant's relation
# ---------------------------------------------------------------------------------------------------------
def test_accountant_holds_one_relation():
    acc = Accountant(1.0, neighbours="replace_one")
    assert "neighbours='replace_one'" in repr(acc)
    rec = acc.charge(PureDP(0.25))                      # no relation: the accountant's own (the user's assertion)
    assert rec.neighbours == "replace_one" and rec.guarantee == PureDP(0.25)
    rec = acc.charge(PureDP(0.25), neighbours="add_remove", label="q")
    assert rec.guarantee == PureDP(0.5) and rec.label == "q [add_remove: PureDP(epsilon=0.25)]"
    assert acc.spent() == PureDP(0.75)
    assert acc.can_afford(PureDP(0.125), neighbours="add_remove") and not acc.can_afford(PureDP(0.2),
                                                                                          neighbours="add_remove")
    with pytest.raises(ValueError, match=r"^q: a guarantee under neighbours='edge_add_remove' .* create it with "
                                         r"neighbours='edge_add_remove'\)$"):
        acc.charge(PureDP(0.01), neighbours="edge_add_remove", label="q")
    import pickle
    back = pickle.loads(pickle.dumps(acc))
    assert back.neighbours == "replace_one" and back.history == acc.history


@pytest.mark.parametrize("bad, exc", [(None, TypeError), (1, TypeError), ("", ValueError), ("  ", ValueError)])
def test_relation_names_checked(bad, exc):
    with pytest.raises(exc, match="neighbours"):
        Accountant(1.0, neighbours=bad)
    if bad is not None:          # None in charge() is the accountant's own relation
        with pytest.raises(exc, match="neighbours"):
            Accountant(1.0).charge(PureDP(0.1), neighbours=bad)


@pytest.mark.parametrize("stated, to, why", [
    ("replace_one", "add_remove", "treats the number of records as public"),
    ("edge_add_remove", "add_remove", "edge and record relations never mix"),
    ("add_remove", "edge_add_remove", "edge and record relations never mix"),
    ("edge_add_remove", "replace_one", "edge and record relations never mix"),
    ("my_relation", "add_remove", "no theorem"),
    ("add_remove", "my_relation", "no theorem"),
    ("user_add_remove", "add_remove", "no theorem"),
])
def test_refusals_say_why(stated, to, why):
    acc = Accountant(1.0, neighbours=to)
    with pytest.raises(ValueError, match=why):
        acc.charge(PureDP(0.1), neighbours=stated)
    assert acc.history == ()


def test_conversions_of_every_guarantee():
    e = 0.3
    assert convert(PureDP(e), "add_remove", "replace_one") == PureDP(0.6)
    assert convert(BoundedRange(e), "add_remove", "replace_one") == BoundedRange(0.6)
    assert convert(ZCDP(0.02), "add_remove", "replace_one") == ZCDP(0.08)
    g = convert(ApproxDP(e, 1e-6), "add_remove", "replace_one")
    assert g.epsilon_ == 0.6 and (1 + math.exp(e)) * 1e-6 <= g.delta_ <= (1 + math.exp(e)) * 1e-6 * (1 + 1e-9)
    assert convert(GaussianMechanism(2.0, 1.0), "add_remove", "replace_one") == GaussianMechanism(2.0, 2.0)
    for cls in (PureDPComposition, BoundedRangeComposition):
        assert convert(cls(0.1, 3), "add_remove", "replace_one") == cls(0.2, 3)
    assert convert(AdaptiveBoundedRangeComposition(0.1, 3, resolution=50), "add_remove",
                   "replace_one") == AdaptiveBoundedRangeComposition(0.2, 3, resolution=50)
    with pytest.raises(ValueError, match="no conversion from add/remove to replace-one"):
        convert(dpselect.accounting.RDP([2.0], [0.1]), "add_remove", "replace_one")


# ---------------------------------------------------------------------------------------------------------
# the conversion, by brute force: datasets are multisets over {0, 1, 2} of at most 3 records
# ---------------------------------------------------------------------------------------------------------
DATASETS = [tuple(sorted(c)) for n in range(4) for c in itertools.combinations_with_replacement(range(3), n)]
ADD_REMOVE = [(x, y) for x in DATASETS for y in DATASETS if len(y) == len(x) + 1
              and all(y.count(v) >= x.count(v) for v in range(3))]
REPLACE = [(x, y) for x in DATASETS for y in DATASETS if len(x) == len(y) and x != y
           and sum(min(x.count(v), y.count(v)) for v in range(3)) == len(x) - 1]


def _em(eps):
    """The exponential mechanism over the 3 values, utility the count of each (Δu = 1 under add/remove)."""
    def m(x):
        w = np.array([math.exp(eps * x.count(v) / 2.0) for v in range(3)])
        return w / w.sum()
    return m


def _noisy_difference(sigma):
    """A discretised Gaussian on (#2s − #0s): add/remove moves it by 1, a replacement by 2."""
    def m(x):
        o = np.arange(-25, 26)
        w = np.exp(-(o - (x.count(2) - x.count(0))) ** 2 / (2 * sigma ** 2))
        return w / w.sum()
    return m


def _leaky(eps, delta):
    """Exactly (ε, δ)-DP under add/remove, and exactly (2ε, (1 + e^ε)δ) under replace-one: output "a" with
    probability (1 + e^ε)δ, δ, 0 at c = 0, 1, 2 where c = #2s − #0s clipped to [0, 2]."""
    pa = [(1 + math.exp(eps)) * delta, delta, 0.0]

    def m(x):
        c = min(2, max(0, x.count(2) - x.count(0)))
        return np.array([pa[c], 1.0 - pa[c]])
    return m


def _both_ways(pairs):
    return pairs + [(y, x) for x, y in pairs]


def _max_loss(m, pairs):
    return max(float(np.max(np.abs(np.log(m(x)) - np.log(m(y))))) for x, y in pairs)


def _max_range(m, pairs):
    return max(float(np.ptp(np.log(m(x)) - np.log(m(y)))) for x, y in pairs)


def _renyi(p, q, a):
    from scipy.special import logsumexp
    return float(logsumexp(a * np.log(p) + (1 - a) * np.log(q))) / (a - 1)


def _hockey(p, q, eps):
    return float(np.sum(np.maximum(0.0, p - math.exp(eps) * q)))


def test_pure_and_bounded_range_conversion_by_brute_force():
    assert len(ADD_REMOVE) == 30 and len(REPLACE) == 60      # REPLACE holds both orders
    for eps in (0.1, 0.7, 2.0):
        m = _em(eps)
        ar, ro = _both_ways(ADD_REMOVE), REPLACE
        # the EM states ε-DP and ε-BR under add/remove
        assert _max_loss(m, ar) <= PureDP(eps).epsilon_ + 1e-12
        assert _max_range(m, ar) <= BoundedRange(eps).epsilon_ + 1e-12
        conv_pure = convert(PureDP(_max_loss(m, ar)), "add_remove", "replace_one").epsilon_
        conv_br = convert(BoundedRange(_max_range(m, ar)), "add_remove", "replace_one").epsilon_
        assert _max_loss(m, ro) <= conv_pure + 1e-12
        assert _max_range(m, ro) <= conv_br + 1e-12
        # and the factor 2 is needed: the replace-one range exceeds the add/remove one
        assert _max_range(m, ro) > 1.5 * _max_range(m, ar)


def test_zcdp_conversion_by_brute_force():
    for sigma in (0.8, 2.0):
        m = _noisy_difference(sigma)
        alphas = np.linspace(1.05, 30.0, 60)
        rho = max(_renyi(m(x), m(y), a) / a for x, y in _both_ways(ADD_REMOVE) for a in alphas)
        rho_ro = convert(ZCDP(rho), "add_remove", "replace_one").rho
        worst = max(_renyi(m(x), m(y), a) / a for x, y in REPLACE for a in alphas)
        assert 3.9 * rho <= worst <= rho_ro * (1 + 1e-9)         # and 4ρ is nearly attained


def test_approx_dp_conversion_by_brute_force():
    for eps, delta in ((0.5, 1e-3), (0.2, 1e-2), (1.0, 1e-5)):
        m = _leaky(eps, delta)
        assert max(_hockey(m(x), m(y), eps) for x, y in _both_ways(ADD_REMOVE)) == pytest.approx(delta, rel=1e-12)
        assert max(float(np.max(np.log(m(x)[1:] / m(y)[1:]))) for x, y in _both_ways(ADD_REMOVE)) <= eps
        g = convert(ApproxDP(eps, delta), "add_remove", "replace_one")
        worst = max(_hockey(m(x), m(y), g.epsilon_) for x, y in REPLACE)
        assert worst <= g.delta_ and worst == pytest.approx((1 + math.exp(eps)) * delta, rel=1e-12)   # tight
