"""DP-MOET (paper Alg. 1): variants, budget conventions, metric C, exact audit of its selections, smoke runs."""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pytest

from dpselect.trees import _dpmoet as moet
from dpselect.trees import CompressedTable, dp_moet, metric_c, nodp_moet
from dpselect.audit import exact_dp_audit
from dpselect.experiments import data_path
from dpselect.tabular import load_nltcs, load_table
from dpselect.trees import predict_many

SMALL = dict(population=8, selection=2, generations=2, depth=2, max_depth=4, output=2)


@pytest.fixture(scope="module")
def nltcs():
    return load_nltcs(data_path("tabular", "nltcs.dat"))


def test_metric_c_definition():
    ref = np.array([[0.9, 0.9], [0.2, 1.0]])
    assert metric_c(ref, np.array([[0.5, 0.5], [0.95, 0.1], [0.1, 0.95]])) == pytest.approx(2 / 3)
    assert metric_c(ref, ref) == 0.0                      # strict domination: equal points do not count
    assert metric_c(ref, np.array([[0.9, 0.8]])) == 0.0   # ties in one objective are not dominated
    with pytest.raises(ValueError):
        metric_c(ref, np.zeros((0, 2)))


def test_compressed_counts_equal_direct_counts(nltcs):
    from dpselect.trees import TreeSpace, random_population

    trees = random_population(TreeSpace.from_data(nltcs), 12, 4, rng=0)
    tp, tn = CompressedTable.from_data(nltcs).counts(trees)
    pred = predict_many(trees, nltcs.X).astype(bool)
    y = nltcs.y.astype(bool)
    assert np.array_equal(tp, (pred & y).sum(axis=1)) and np.array_equal(tn, (~pred & ~y).sum(axis=1))


@pytest.mark.parametrize("approach", ["pareto", "agg"])
@pytest.mark.parametrize("mech,sens", [("exponential", "global"), ("local_dampening", "local")])
def test_variants_run_and_report_true_objectives(nltcs, approach, mech, sens):
    res = dp_moet(nltcs, epsilon=1.0, approach=approach, mechanism=mech, rng=3, exact_statistics=True, **SMALL)
    assert res.variant == f"DP-MOET-{approach.capitalize()}-{sens}"
    assert len(res.trees) == 2 and res.objectives.shape == (2, 2) and res.generations == 2
    pred = predict_many(res.trees, nltcs.X).astype(bool)
    y = nltcs.y.astype(bool)
    np.testing.assert_allclose(res.objectives[:, 0], pred[:, y].mean(axis=1))
    np.testing.assert_allclose(res.objectives[:, 1], (~pred[:, ~y]).mean(axis=1))
    again = dp_moet(nltcs, epsilon=1.0, approach=approach, mechanism=mech, rng=3, **SMALL)
    assert all(a == b for a, b in zip(res.trees, again.trees))


def test_other_mechanisms_and_aliases(nltcs):
    res = dp_moet(nltcs, epsilon=1.0, approach="agg", mechanism="PF", rng=1, **SMALL)
    assert res.variant == "DP-MOET-Agg-permute_and_flip" and len(res.trees) == 2
    res = dp_moet(nltcs, epsilon=1.0, mechanism="sld", rng=1, **SMALL)
    assert res.variant == "DP-MOET-Pareto-shifted_local_dampening"
    with pytest.raises(ValueError, match="mechanism"):
        dp_moet(nltcs, epsilon=1.0, mechanism="laplace", rng=0, **SMALL)


def test_budget_conventions(nltcs, monkeypatch):
    seen = []
    real = moet._select

    def spy(tp, tn, table, how, approach, weights, eps, n_pick, gen):
        seen.append((eps, n_pick))
        return real(tp, tn, table, how, approach, weights, eps, n_pick, gen)

    monkeypatch.setattr(moet, "_select", spy)
    res = dp_moet(nltcs, epsilon=1.2, rng=0, **SMALL)               # k = 2 generations + final: 3 rounds of 0.4
    assert res.generations == 2 and seen == [(pytest.approx(0.4), 2)] * 3
    seen.clear()
    res = dp_moet(nltcs, epsilon=1.2, budget="paper-code", rng=0, **SMALL)   # k rounds incl. final: 1 generation
    assert res.generations == 1 and seen == [(pytest.approx(0.6), 2)] * 2


def test_nodp_selects_exact_best(nltcs):
    res = nodp_moet(nltcs, approach="agg", objective_weights=(3, 2), rng=0, **SMALL)
    assert res.epsilon is None and res.variant == "NODP-MOET-Agg"
    final = res.history[-1]
    best = (final @ np.array([3.0, 2.0])).max()
    assert res.objectives[0] @ np.array([3.0, 2.0]) == pytest.approx(best)
    rp = nodp_moet(nltcs, approach="pareto", rng=0, **SMALL)
    # the first pick is on the Pareto front of the final population
    from dpselect.multiobjective import pareto_score
    U = rp.history[-1]
    assert rp.objectives[0].tolist() in U[pareto_score(U) == 0].tolist()


def test_bad_arguments(nltcs):
    with pytest.raises(ValueError, match="even"):
        dp_moet(nltcs, epsilon=1.0, population=7, rng=0)
    with pytest.raises(ValueError, match="approach"):
        dp_moet(nltcs, epsilon=1.0, approach="lexi", rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        dp_moet(nltcs, epsilon=0.0, rng=0)
    with pytest.raises(ValueError, match=r"generations must be >= 2 with budget='paper-code'.*got 1"):
        dp_moet(nltcs, epsilon=1.0, budget="paper-code", generations=1, rng=0)
    with pytest.raises(ValueError, match="budget"):
        dp_moet(nltcs, epsilon=1.0, budget="half", rng=0)
    with pytest.raises(ValueError, match="objective_weights"):
        dp_moet(nltcs, epsilon=1.0, approach="agg", objective_weights=(0, 0), rng=0)
    with pytest.raises(TypeError, match="exact_statistics"):
        dp_moet(nltcs, epsilon=1.0, exact_statistics="no", rng=0)


def _pair_without_negatives():
    """Neighbours x (3 positives) and x + one negative record, on the public schema a in [0, 1]."""
    x = load_table({"a": [0.1, 0.2, 0.3, 0.9], "y": [1, 1, 1, 0]}, "y", feature_bounds={"a": (0, 1)})
    return x.subset(np.array([0, 1, 2])), x


@pytest.mark.parametrize("mech", ["local_dampening", "exponential", "shifted_local_dampening"])
@pytest.mark.parametrize("approach", ["pareto", "agg"])
def test_a_table_without_negatives_fits_like_its_neighbour(mech, approach):
    """P6: an error on the table without negatives (and not on its neighbour) would be a release."""
    no_neg, neighbour = _pair_without_negatives()
    assert no_neg.y.tolist() == [1, 1, 1] and neighbour.y.tolist() == [1, 1, 1, 0]
    no_pos = neighbour.subset(np.array([3]))
    for data in (no_neg, neighbour, no_pos):
        res = dp_moet(data, epsilon=1.0, approach=approach, mechanism=mech, rng=0, **SMALL)
        assert len(res.trees) == 2 and res.objectives is None
    stats = dp_moet(no_neg, epsilon=1.0, approach=approach, mechanism=mech, rng=0, exact_statistics=True, **SMALL)
    assert (stats.objectives[:, 1] == 0).all()      # TNR = 0 by convention when there is no negative


def test_first_selection_law_on_neighbours_without_negatives():
    """The first selection on (TPR, TNR) with TNR = 0 for lack of negatives is ε-DP against the neighbour
    with one negative (exact audit of priv_pareto's law with the same δ the run uses)."""
    from dpselect.multiobjective import priv_pareto_probabilities
    from dpselect.trees import TreeSpace, random_population
    from dpselect.utilities.classification import rate_sensitivity

    no_neg, neighbour = _pair_without_negatives()
    pop = random_population(TreeSpace.from_data(no_neg), 6, 2, rng=3)
    eps = 0.7
    laws = []
    for data in (no_neg, neighbour):
        table = CompressedTable.from_data(data)
        tp, tn = table.counts(pop)
        U = moet._rates(tp, tn, table.n_pos, table.n_neg)
        sens = [rate_sensitivity(tp, table.n_pos - tp), rate_sensitivity(tn, table.n_neg - tn)]
        laws.append(priv_pareto_probabilities(U, epsilon=eps, sensitivities=sens, mechanism="local_dampening"))
    p, q = laws
    assert np.all(p > 0) and np.all(q > 0)
    assert np.max(np.abs(np.log(p / q))) <= eps + 1e-9


def test_result_holds_no_exact_training_statistics_by_default(nltcs):
    """P5: neighbours differ in the exact TPR/TNR; the default result must not carry them."""
    res = dp_moet(nltcs, epsilon=1.0, rng=4, **SMALL)
    assert res.objectives is None and res.history == []
    assert set(vars(res)) == {"trees", "objectives", "variant", "epsilon", "budget", "generations", "history"}
    full = dp_moet(nltcs, epsilon=1.0, rng=4, exact_statistics=True, **SMALL)
    assert all(a == b for a, b in zip(res.trees, full.trees))   # recording them does not change the law
    assert full.objectives.shape == (2, 2) and len(full.history) == 2


# exact audit of one DP-MOSelection step as DP-MOET builds it (rates from counts, core sensitivities)
# on every tiny table of records (x, y), x in {0, 1, 2}, with three fixed classifiers
PREDS = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1]])  # classifier r predicts PREDS[r, x]


def counts(ds):
    arr = np.array(ds, dtype=np.int64).reshape(-1, 2)
    x, y = arr[:, 0], arr[:, 1].astype(bool)
    pred = PREDS[:, x].astype(bool)
    return (pred & y).sum(axis=1), (~pred & ~y).sum(axis=1), int(y.sum()), int((~y).sum())


@pytest.mark.parametrize("approach", ["pareto", "agg"])
@pytest.mark.parametrize("how", ["global", "local"])
def test_exact_audit_of_selection_step(approach, how):
    from dpselect.multiobjective import priv_agg_probabilities, priv_pareto_probabilities
    from dpselect.utilities.classification import rate_sensitivity

    eps = 0.8
    types = [(x, y) for x in range(3) for y in range(2)]

    def prob(ds):
        tp, tn, P, N = counts(ds)
        U = moet._rates(tp, tn, P, N)
        sens = [1.0, 1.0] if how == "global" else [rate_sensitivity(tp, P - tp), rate_sensitivity(tn, N - tn)]
        mech = "exponential" if how == "global" else "local_dampening"
        if approach == "pareto":
            return priv_pareto_probabilities(U, epsilon=eps, sensitivities=sens, mechanism=mech)
        return priv_agg_probabilities(U, [3.0, 2.0], epsilon=eps, sensitivities=sens, mechanism=mech)

    pairs = [(ds, tuple(sorted(ds + (r,)))) for n in range(4)
             for ds in itertools.combinations_with_replacement(types, n) for r in types]
    res = exact_dp_audit(prob, pairs, epsilon=eps)
    assert res.passed, (res.worst_log_ratio, res.pair)


def _args(module, **kw):
    p = argparse.ArgumentParser()
    module.add_arguments(p)
    ns = p.parse_args([])
    for k, v in kw.items():
        setattr(ns, k, v)
    return ns


def test_table1_and_figure2_smoke(tmp_path):
    import warnings

    from dpselect import PrivacyLeakWarning
    from dpselect.experiments import _common, figure2, table1

    warnings.simplefilter("error", PrivacyLeakWarning)  # the papers' public values: no warning (pytest restores)

    a = _args(table1, runs=2, epsilons=[1.0], datasets=["nltcs"], out=tmp_path, quiet=True, jobs=1,
              population=6, selection=2, generations=1, depth=2, max_depth=3, output=2)
    assert table1.run(a) == 0
    rows = _common.read_csv(tmp_path / "table1.csv")
    assert len(rows) == 4 and {r["method"] for r in rows} == {"pareto-global", "pareto-local"}
    assert all(r["metric"] == "C" and 0 <= float(r["value"]) <= 1 for r in rows)
    assert "paper MO_l" in (tmp_path / "table1.md").read_text() and (tmp_path / "table1.png").exists()
    b = _args(figure2, runs=1, epsilons=[1.0], datasets=["nltcs"], out=tmp_path, quiet=True, jobs=1,
              population=6, selection=2, generations=1, depth=2, max_depth=3, output=1, diffpid3_depth=2)
    assert figure2.run(b) == 0
    rows = _common.read_csv(tmp_path / "figure2.csv")
    assert {r["method"] for r in rows} == {"agg-global", "agg-local", "nodp-agg", "local-diffpid3"}
    assert all(r["metric"] == "uagg" and 0 <= float(r["value"]) <= 5 for r in rows)


def test_reusing_the_compressed_table_changes_nothing(nltcs):
    comp = CompressedTable.from_data(nltcs)
    a = dp_moet(nltcs, epsilon=0.5, rng=9, exact_statistics=True, **SMALL)
    b = dp_moet(nltcs, epsilon=0.5, rng=9, compressed=comp, exact_statistics=True, **SMALL)
    assert all(x == y for x, y in zip(a.trees, b.trees)) and np.array_equal(a.objectives, b.objectives)
    with pytest.raises(ValueError, match="does not match"):
        dp_moet(nltcs.subset(np.arange(100)), epsilon=0.5, rng=9, compressed=comp, **SMALL)
    with pytest.raises(TypeError):
        dp_moet(nltcs, epsilon=0.5, rng=9, compressed="x", **SMALL)


def test_accuracy_approach_selects_by_correct_count_with_sensitivity_one(nltcs):
    """approach="accuracy": the law of one pick is the exponential mechanism on TP + TN with Δ = 1 (local
    mechanisms included), and it is ε-DP on neighbour tables (exact audit)."""
    from dpselect.mechanisms import exponential_probabilities
    from dpselect.multiobjective import priv_agg_probabilities
    from dpselect.sensitivity import constant
    from dpselect.trees import TreeSpace, random_population

    x = load_table({"a": [0.1, 0.3, 0.5, 0.7, 0.9], "y": [1, 0, 1, 1, 0]}, "y", feature_bounds={"a": (0, 1)})
    pop = random_population(TreeSpace.from_data(x), 8, 2, rng=1)
    eps = 0.9
    laws = {}
    for drop in [None, 0, 1, 2, 3, 4]:
        data = x if drop is None else x.subset(np.delete(np.arange(5), drop))
        tp, tn = CompressedTable.from_data(data).counts(pop)
        C = (tp + tn).astype(float)[:, None]
        em = exponential_probabilities(C[:, 0], epsilon=eps, sensitivity=1.0)
        ld = priv_agg_probabilities(C, np.ones(1), epsilon=eps, sensitivities=[constant(8, 1.0)],
                                    mechanism="local_dampening")
        np.testing.assert_allclose(ld, em, rtol=1e-12)
        laws[drop] = em
    res = exact_dp_audit(lambda d: laws[d], [(None, d) for d in range(5)], epsilon=eps)
    assert res.passed and res.worst_log_ratio <= eps + 1e-12
    r = dp_moet(nltcs, epsilon=1.0, approach="accuracy", rng=0, **SMALL)
    assert r.variant == "DP-MOET-Accuracy-local" and len(r.trees) == 2
    ref = nodp_moet(nltcs, approach="accuracy", rng=0, **SMALL)   # the exact best count among the last population
    correct = lambda t: int((t.predict(nltcs.X) == nltcs.y).sum())  # noqa: E731
    assert ref.variant == "NODP-MOET-Accuracy" and correct(ref.trees[0]) >= correct(ref.trees[1])
