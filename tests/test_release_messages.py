"""Issue 33, item 2(d): errors and messages that depend on private data are releases.

The rule, for the core modules (median, dampening, sensitivity functions, the mechanisms, PrivAgg and
PrivPareto, the graph and classification utilities): after the public arguments are checked, a release
either completes on every dataset of the public domain or fails in a way whose probability the analysis
covers; no message names a private quantity (a record's value, a count, a size of private data, the
index of a private event). Refusals come before any accountant charge and before any random bit.

Each test is a generator over a small domain, exhaustively: every dataset of up to three records over
a set of values that includes the extremes (0, out-of-range values, ±1e308, ±DBL_MAX, ±inf, the smallest
subnormal), and its neighbours (replace-one, or add/remove where the model has it). On every pair of
neighbours the outcome — completed, or the error's type and message — must be the same; where the
domain of the public analysis is the whole set, every call must complete. Inputs outside every domain
(NaN records, non-finite utilities, degrees above the public bound) must all get one and the same
message, with nothing charged and no randomness drawn.
"""
from __future__ import annotations

import itertools
import sys
import warnings

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import median_sensitivity
from dpselect import Accountant
from dpselect.quantiles import median, median_distribution, median_error, median_probabilities, median_rank

DBL_MAX = sys.float_info.max
#: record values around the public bound BOUND = 2: in and out of [0, 2], the float range's ends, ±inf
VALUES = (-1.0, 0.0, 0.5, 2.0, 3.0, 1e308, -DBL_MAX, np.inf, -np.inf)
BOUND = 2.0
#: utilities (outputs of a utility function): every finite float scale
UTILITIES = (0.0, 1.0, -1.0, 5e-324, 1e308, -1e308, DBL_MAX)
SEED = 20261205


def datasets(values, sizes) -> list[tuple]:
    """Every tuple of the given sizes over ``values``."""
    return [x for n in sizes for x in itertools.product(values, repeat=n)]


def replace_one(x: tuple, values) -> list[tuple]:
    return [x[:i] + (v,) + x[i + 1:] for i in range(len(x)) for v in values if v is not x[i]]


def add_remove(x: tuple, values) -> list[tuple]:
    return [x[:i] + x[i + 1:] for i in range(len(x))] + [x + (v,) for v in values]


class Run:
    """Calls a release with a fresh accountant and generator; records the outcome (None: it completed
    silently; else the error's type and message, and any warning) and checks that a refusal charged
    nothing and drew nothing. A warning is a release too: it must not depend on the data either."""

    def __init__(self, release):
        self.release = release

    def __call__(self, x):
        acc = Accountant(1e6)
        gen = np.random.default_rng(SEED)
        state = gen.bit_generator.state
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.release(x, acc, gen)
            except Exception as exc:   # noqa: BLE001 (every error is a release)
                assert len(acc.history) == 0, f"refused after a charge on {x!r}: {exc}"
                assert gen.bit_generator.state == state, f"refused after drawing randomness on {x!r}: {exc}"
                return type(exc).__name__, str(exc)
        if caught:
            return tuple((w.category.__name__, str(w.message)) for w in caught)
        return None


def outcomes_alike(domain, neighbours, run) -> dict:
    """Every outcome on ``domain``, checked equal on every pair of neighbours inside it."""
    out = {x: run(x) for x in domain}
    pairs = 0
    for x in domain:
        for y in neighbours(x):
            if y in out:
                assert out[x] == out[y], f"neighbours {x!r} and {y!r}: {out[x]!r} vs {out[y]!r}"
                pairs += 1
    assert pairs > 0
    return out


def one_message(outcomes) -> tuple[str, str]:
    """The single error every outcome carries (none completed, all alike)."""
    found = set(outcomes)
    assert len(found) == 1 and None not in found, found
    return found.pop()


# -- the median: records outside [0, bound] are clipped (issue 33), NaN refused with a public message ----
MEDIAN_RELEASES = {
    "median": lambda x, acc, gen: median(list(x), epsilon=1.0, bound=BOUND, rng=gen, accountant=acc),
    "median_rank": lambda x, acc, gen: median_rank(list(x), epsilon=1.0, bound=BOUND, rng=gen, accountant=acc),
    "median_distribution": lambda x, acc, gen: median_distribution(list(x), epsilon=1.0, bound=BOUND),
    "median_error": lambda x, acc, gen: median_error(list(x), epsilon=1.0, bound=BOUND),
    "median_probabilities": lambda x, acc, gen: median_probabilities(list(x), epsilon=1.0, bound=BOUND),
    "median_rank_sld": lambda x, acc, gen: median_rank(list(x), epsilon=1.0, bound=BOUND, rng=gen, accountant=acc,
                                                       mechanism="shifted_local_dampening"),
    "median_sensitivity": lambda x, acc, gen: median_sensitivity(sorted(x), BOUND)(1),
}


@pytest.mark.parametrize("name", sorted(MEDIAN_RELEASES))
def test_median_completes_on_every_real_dataset(name):
    domain = datasets(VALUES, (1, 2, 3))
    out = outcomes_alike(domain, lambda x: replace_one(x, VALUES), Run(MEDIAN_RELEASES[name]))
    assert set(out.values()) == {None}


def test_median_of_clipped_records_is_the_median_of_the_clipped_database():
    # the same law: the clip is a record-wise map into [0, bound], in-bound databases unchanged
    for x in datasets(VALUES, (2, 3))[::7]:
        clipped = list(np.clip(x, 0.0, BOUND))
        assert median(list(x), epsilon=1.0, bound=BOUND, rng=3) == median(clipped, epsilon=1.0, bound=BOUND, rng=3)
        a, b = median_distribution(list(x), epsilon=1.0, bound=BOUND), median_distribution(clipped, epsilon=1.0,
                                                                                           bound=BOUND)
        assert a.lo.tolist() == b.lo.tolist() and a.probabilities.tolist() == b.probabilities.tolist()


@pytest.mark.parametrize("name", sorted(MEDIAN_RELEASES))
def test_median_nan_is_one_public_refusal(name):
    domain = [x for x in datasets(VALUES[:4] + (np.nan,), (1, 2, 3)) if any(v != v for v in x)]
    msg = one_message(Run(MEDIAN_RELEASES[name])(x) for x in domain)
    assert msg == ("ValueError", "sorted_values must not hold NaN" if name == "median_sensitivity"
                   else "values must not hold NaN")


def test_median_counts_complete_on_every_histogram():
    # a histogram over public values (one out of bounds), counts moved one record at a time (replace-one: n fixed);
    # empty bins are datasets like any other
    vals = [0.5, 1.5, 9.0]

    def release(c, acc, gen):
        median(vals, counts=list(c), epsilon=1.0, bound=BOUND, rng=gen, accountant=acc)
        median_rank(vals, counts=list(c), epsilon=1.0, bound=BOUND, rng=gen)
        median_probabilities(vals, counts=list(c), epsilon=1.0, bound=BOUND)

    def moves(c):
        return [tuple(c[k] + (k == j) - (k == i) for k in range(3)) for i in range(3) for j in range(3)
                if i != j and c[i] > 0]

    domain = [c for c in itertools.product(range(4), repeat=3) if 1 <= sum(c) <= 3]
    out = outcomes_alike(domain, moves, Run(release))
    assert set(out.values()) == {None}


def test_median_count_messages_name_no_count():
    outs = [Run(lambda c, acc, gen: median([0.5, 1.5], counts=list(c), epsilon=1.0, bound=BOUND, rng=gen,
                                           accountant=acc))(c)
            for c in ([2 ** 53, 1], [2 ** 63 - 1, 2 ** 63 - 1], [2 ** 64, 7], [3, 2 ** 53])]
    assert one_message(outs) == ("ValueError", "counts must sum to at most 9007199254740992 (2**53) records")
    outs = [Run(lambda c, acc, gen: median([0.5, 1.5], counts=list(c), epsilon=1.0, bound=BOUND, rng=gen,
                                           accountant=acc))(c) for c in ([-1, 3], [4, -2], [-7, -7])]
    assert one_message(outs) == ("ValueError", "counts must be >= 0")


# -- the selection mechanisms on utilities of every scale ------------------------------------------------
SLOW = dpselect.SensitivityFunction(lambda t: np.full(2, 2.0 ** -10), 1.0, name="slow")   # never reaches Δ


def _mechanisms(n: int) -> dict:
    slow = dpselect.SensitivityFunction(lambda t: np.full(n, 2.0 ** -10), 1.0, name="slow")
    sf = dpselect.constant(n, 1.0)
    return {
        "exponential": lambda u, acc, gen: dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, rng=gen,
                                                                accountant=acc),
        "permute_and_flip": lambda u, acc, gen: dpselect.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, rng=gen,
                                                                          accountant=acc),
        "report_noisy_max": lambda u, acc, gen: dpselect.report_noisy_max(u, epsilon=1.0, sensitivity=1.0,
                                                                          rng=gen, accountant=acc),
        "local_dampening": lambda u, acc, gen: dpselect.local_dampening(u, epsilon=1.0, sensitivity_function=sf,
                                                                        rng=gen, accountant=acc),
        # a function that never reaches Δ: the walk is clipped at max_steps (was a data-dependent ValueError)
        "local_dampening_slow": lambda u, acc, gen: dpselect.local_dampening(
            u, epsilon=1.0, sensitivity_function=slow, max_steps=64, rng=gen, accountant=acc),
        "local_dampening_slow_probabilities": lambda u, acc, gen: dpselect.local_dampening_probabilities(
            u, epsilon=1.0, sensitivity_function=slow, max_steps=64),
        "shifted_local_dampening": lambda u, acc, gen: dpselect.shifted_local_dampening(
            u, epsilon=1.0, sensitivity_function=sf.bounded(5), rng=gen, accountant=acc),
        # never reaching Δ: read as saturated at max_steps (was a ValueError)
        "shifted_local_dampening_slow": lambda u, acc, gen: dpselect.shifted_local_dampening(
            u, epsilon=1.0, sensitivity_function=slow, max_steps=64, rng=gen, accountant=acc),
        "exponential_probabilities": lambda u, acc, gen: dpselect.exponential_probabilities(u, epsilon=1.0,
                                                                                            sensitivity=1.0),
    }


@pytest.mark.parametrize("name", sorted(_mechanisms(2)))
def test_mechanisms_complete_on_utilities_of_every_scale(name):
    # a utility vector's neighbours: any one entry changed (utilities of every scale are in the domain)
    for n in (2, 3):
        domain = datasets(UTILITIES, (n,))
        run = Run(lambda u, acc, gen: _mechanisms(n)[name](list(u), acc, gen))
        out = outcomes_alike(domain[:: 1 if n == 2 else 5], lambda x: replace_one(x, UTILITIES), run)
        assert set(out.values()) == {None}


def test_dampening_clipped_at_max_steps_exactly():
    # D = clip(D, ±max_steps) on every dataset: the exact value and the float walk agree
    from dpselect.dampening import dampen, dampen_exact, dampen_with_error
    for u in datasets(UTILITIES, (2,)):
        D, err = dampen_with_error(list(u), SLOW, max_steps=64)
        assert np.all(np.abs(D) <= 64) and D.tolist() == dampen(list(u), SLOW, max_steps=64).tolist()
        for r in range(2):
            exact = dampen_exact(u[r], SLOW, r, max_steps=64)
            assert abs(float(exact) - D[r]) <= err[r]
            assert abs(exact) == min(abs(u[r]) * 2 ** 10, 64)


@pytest.mark.parametrize("name", sorted(_mechanisms(2)))
def test_non_finite_utilities_are_one_public_refusal(name):
    bad = (np.nan, np.inf, -np.inf)
    domain = [u for u in datasets((0.0, 1.0) + bad, (2,)) if any(not np.isfinite(v) for v in u)]
    msg = one_message(Run(lambda u, acc, gen: _mechanisms(2)[name](list(u), acc, gen))(u) for u in domain)
    assert msg == ("ValueError", "utilities must be finite: it holds a NaN or an infinite entry")
    # Python ints beyond the float range are infinite (the same refusal); below it they are floats
    assert Run(lambda u, acc, gen: _mechanisms(2)[name](u, acc, gen))([10 ** 400, 1]) == msg
    assert Run(lambda u, acc, gen: _mechanisms(2)[name](u, acc, gen))([2 ** 70, 1]) is None


def test_size_mismatch_messages_name_no_size():
    # the number of candidates can be private (records as candidates)
    outs = [Run(lambda x, acc, gen: dpselect.local_dampening(list(x), epsilon=1.0, rng=gen, accountant=acc,
                                                             sensitivity_function=dpselect.constant(4, 1.0)))(x)
            for x in datasets((0.0, 1.0), (1, 2, 3, 5))]
    assert one_message(outs) == ("ValueError", "sensitivity_function and utilities disagree on the number of "
                                               "candidates")


def test_sensitivity_function_value_messages_name_no_value():
    # δ is read from the data: a bad value's size, sign and position are private
    outs = []
    for vals in datasets((0.5, -1.0, np.nan, np.inf), (3,)):
        if all(v == 0.5 for v in vals):
            continue
        sf = dpselect.SensitivityFunction(lambda t, v=vals: np.array(v), 1.0, name="d")
        outs.append(Run(lambda u, acc, gen: dpselect.local_dampening(u, epsilon=1.0, sensitivity_function=sf,
                                                                     rng=gen, accountant=acc))([1.0, 2.0, 3.0]))
    assert one_message(outs) == ("ValueError", "sensitivity function 'd' must return finite values >= 0 at every "
                                               "distance, and did not at t=0 (inf is not clipped: return the "
                                               "global sensitivity where no smaller bound is known)")
    outs = [Run(lambda u, acc, gen, k=k: dpselect.dampening.dampen(u, dpselect.SensitivityFunction(
        lambda t: np.ones(k), 1.0, n_candidates=4)))([1.0] * 4) for k in (1, 2, 3, 5)]
    assert one_message(outs) == ("ValueError", "sensitivity function '<lambda>' returned the wrong number of values "
                                               "at t=0 (one per candidate asked for)")


# -- PrivAgg and PrivPareto on objectives of every scale -------------------------------------------------
OBJECTIVES = (0.0, 1.0, 1.7e308, -1.7e308)


def _multi(name: str):
    from dpselect.multiobjective import priv_agg, priv_agg_probabilities, priv_pareto

    def sens(mech):
        if mech == "local_dampening":
            return [dpselect.constant(2, 1.0), dpselect.constant(2, 1.0)]
        if mech == "shifted_local_dampening":
            return [dpselect.constant(2, 1.0).bounded(3)] * 2
        return [1.0, 1.0]

    mech = name.split(":")[1]
    if name.startswith("agg_probabilities"):
        return lambda U, acc, gen: priv_agg_probabilities(U, [1.0, 1.0], epsilon=1.0, sensitivities=sens(mech),
                                                          mechanism=mech)
    if name.startswith("agg"):
        return lambda U, acc, gen: priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=sens(mech), mechanism=mech,
                                            rng=gen, accountant=acc)
    # PrivPareto with sensitivities far below the objectives' gaps: the local dampening walk is clipped
    # (was refused by the range), shifted local dampening's δ^PS forced to its bound from a public distance on
    tiny = [dpselect.constant(2, 1e-300).bounded(5)] * 2 if "dampening" in mech else [1.0, 1.0]
    return lambda U, acc, gen: priv_pareto(U, epsilon=1.0, sensitivities=tiny, mechanism=mech, rng=gen,
                                           accountant=acc)


MULTI = [f"{kind}:{m}" for kind in ("agg", "agg_probabilities")
         for m in ("exponential", "permute_and_flip", "report_noisy_max", "local_dampening",
                   "shifted_local_dampening")] + ["pareto:exponential", "pareto:local_dampening",
                                                  "pareto:shifted_local_dampening"]


def _rows(x):
    return [list(x[:2]), list(x[2:])]


@pytest.mark.parametrize("name", MULTI)
def test_multiobjective_selectors_complete_on_objectives_of_every_scale(name):
    # neighbours: one objective value of one candidate changed (the aggregate Σ w_i u_i overflowed: a
    # ValueError naming the candidate and its value, after the objectives were read)
    release = _multi(name)
    domain = datasets(OBJECTIVES, (4,))
    if name == "pareto:shifted_local_dampening":   # ~50 ms a call (a shift summed up to 10^6 distances)
        domain = domain[::3]
    out = outcomes_alike(domain, lambda x: replace_one(x, OBJECTIVES),
                         Run(lambda x, acc, gen: release(_rows(x), acc, gen)))
    assert set(out.values()) == {None}


def test_priv_agg_with_weights_near_the_float_range_completes():
    # Σ|w_i|Δ_i beyond the float range is public, but the aggregate's own overflow is not: both are scaled by a
    # public power of two (the same law), so every dataset completes, and exactly like the law of the scaled
    # weights where nothing overflows
    from dpselect.multiobjective import priv_agg, priv_agg_probabilities
    w = [1e308, -1e308]
    out = outcomes_alike(datasets(OBJECTIVES, (4,)), lambda x: replace_one(x, OBJECTIVES), Run(
        lambda x, acc, gen: priv_agg(_rows(x), w, epsilon=1.0, sensitivities=[1.0, 1.0], rng=gen, accountant=acc)))
    assert set(out.values()) == {None}
    p = priv_agg_probabilities([[1.0, 0.0], [0.0, 1.0]], w, epsilon=1.0, sensitivities=[1.0, 1.0])
    q = priv_agg_probabilities([[1.0, 0.0], [0.0, 1.0]], [1.0, -1.0], epsilon=1.0, sensitivities=[1.0, 1.0])
    np.testing.assert_allclose(p, q, rtol=1e-12)


# -- graphs: degrees above the public bound are one public refusal -----------------------------------------
EDGES = list(itertools.combinations(range(4), 2))


def _graph(mask):
    from dpselect.graphs import from_edges
    chosen = [e for e, keep in zip(EDGES, mask) if keep]
    return from_edges([a for a, _ in chosen], [b for _, b in chosen], n_nodes=4)


@pytest.mark.parametrize("mechanism", ["exponential", "permute_and_flip", "local_dampening",
                                       "shifted_local_dampening"])
def test_priv_topk_on_every_graph_of_four_nodes(mechanism):
    # edge-DP: neighbours differ in one edge. With max_degree = 2 the domain is the graphs of degree <= 2;
    # the others are one refusal whose message names the public bound only (not the observed degree)
    from dpselect.utilities.graph import ebc_sensitivity

    def release(mask, acc, gen):
        g = _graph(mask)
        dpselect.graphs.priv_topk(g, k=2, epsilon=1.0, max_degree=2, mechanism=mechanism, rng=gen, accountant=acc)
        ebc_sensitivity(g, max_degree=2)(1)

    domain = list(itertools.product((False, True), repeat=len(EDGES)))
    run = Run(release)
    out = {m: run(m) for m in domain}
    inside = [m for m in domain if _graph(m).degrees.max(initial=0) <= 2]
    assert {out[m] for m in inside} == {None}
    assert one_message(out[m] for m in domain if m not in inside) == (
        "ValueError", "max_degree must be a public upper bound on every degree of the graph, got max_degree=2 and a "
                      "degree above it")


# -- classification utilities: sizes of the private table are not named -----------------------------------
def test_label_shape_messages_name_no_size():
    from dpselect.utilities.classification import tpr

    outs = [Run(lambda x, acc, gen, n=n: tpr(np.ones(n, int), np.ones((2, n + d), int)))(None)
            for n in (1, 2, 5) for d in (-1, 1, 3) if n + d >= 0]
    assert one_message(outs) == ("ValueError", "y_pred must have shape (n_classifiers, n_records), one prediction "
                                               "per record of y_true")


def test_classification_rates_complete_on_every_small_table():
    # add/remove-one-record neighbours over binary records (label, two models' predictions), up to 3 records
    from _helpers import neighbours, to_arrays, universe
    from dpselect.utilities.classification import tnr, tnr_sensitivity, tpr, tpr_sensitivity

    def release(counts, acc, gen):
        y, preds = to_arrays(counts)
        for f in (tpr, tnr):
            f(y, preds)
        for s in (tpr_sensitivity, tnr_sensitivity):
            s(y, preds)(2)

    out = outcomes_alike(universe(3), neighbours, Run(release))
    assert set(out.values()) == {None}


@pytest.mark.parametrize("mechanism", [None, "exponential", "shifted_local_dampening"])
def test_motkin_on_every_graph_of_four_nodes(mechanism):
    # DP-MOTkIN (PrivPareto and PrivAgg on degree and egocentric density) completes on every graph of the public
    # node set, and its edge neighbours alike
    def release(mask, acc, gen):
        g = _graph(mask)
        dpselect.graphs.dp_motkin_pareto(g, k=2, epsilon=1.0, mechanism=mechanism, rng=gen, accountant=acc)
        dpselect.graphs.dp_motkin_agg(g, k=2, epsilon=1.0, mechanism=mechanism, rng=gen, accountant=acc)

    def flip_one(mask):
        return [mask[:i] + (not mask[i],) + mask[i + 1:] for i in range(len(mask))]

    out = outcomes_alike(list(itertools.product((False, True), repeat=len(EDGES))), flip_one, Run(release))
    assert set(out.values()) == {None}


# -- DiffPID3 and DP-MOET on every small table (add/remove one record, 0 records included) ---------------------
TABLE_RECORDS = list(itertools.product((0.0, 1.0), (0.0, 0.5, 1.0), (0, 1)))   # (categorical a, numeric b, y)


def _table(records):
    from dpselect.tabular import TabularData
    X = np.array([r[:2] for r in records], dtype=float).reshape(len(records), 2)
    return TabularData(X, np.array([r[2] for r in records], dtype=int), ["a", "b"], [True, False], [2, 0])


TREE_RELEASES = {
    f"diffpid3({m})": (lambda m: lambda x, acc, gen: dpselect.trees.diffpid3(
        _table(x), epsilon=1.0, depth=2, mechanism=m, n_max=10, rng=gen, accountant=acc))(m)
    for m in ("exponential", "local_dampening", "shifted_local_dampening")
}
TREE_RELEASES["dp_moet"] = lambda x, acc, gen: dpselect.trees.dp_moet(
    _table(x), epsilon=1.0, population=4, selection=2, generations=2, depth=1, max_depth=2, output=1, rng=gen,
    accountant=acc)


@pytest.mark.parametrize("name", sorted(TREE_RELEASES))
def test_tree_learners_complete_on_every_small_table(name):
    def neighbours(x):
        return [tuple(sorted(y)) for y in add_remove(x, TABLE_RECORDS)]

    domain = [tuple(sorted(x)) for n in range(3) for x in itertools.combinations_with_replacement(TABLE_RECORDS, n)]
    out = outcomes_alike(domain, neighbours, Run(TREE_RELEASES[name]))
    assert set(out.values()) == {None}


def test_tree_learners_refuse_a_table_above_n_max_with_one_public_message():
    # more records than the public bound n_max is outside the domain the analysis covers (the caller guarantees
    # it): one message naming the public bound only, nothing charged
    outs = [Run(lambda x, acc, gen: dpselect.trees.diffpid3(_table(x), epsilon=1.0, depth=1, n_max=2, rng=gen,
                                                      accountant=acc))(TABLE_RECORDS[:n]) for n in (3, 4, 7)]
    kind, msg = one_message(outs)
    assert kind == "ValueError" and "n_max=2" in msg and not any(str(n) in msg for n in (3, 4, 7))
