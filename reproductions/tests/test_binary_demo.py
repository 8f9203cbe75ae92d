"""The binary-demo use case: threshold query over the hypercube, symmetry reduction, baselines, CLI."""
import csv
import math

import numpy as np
import pytest
from scipy.stats import laplace

from dpselect.binary import BinaryMechanism, DatasetGraph, DPPair, balanced_probability
from dpselect_reproductions.binary_demo import (count_path_mechanism, hypercube_mechanism, laplace_threshold_correct,
                                  randomized_response_correct)
from dpselect_reproductions import main


@pytest.mark.parametrize("n,theta,eps,delta", [
    (1, 1, 1.0, 0.0), (3, 2, 0.5, 0.0), (5, 1, 1.0, 0.0), (6, 3, 2.0, 0.05), (8, 5, 0.3, 0.0), (9, 9, 1.0, 0.01),
    (10, 5, 1.0, 0.0),
])
def test_full_hypercube_equals_count_quotient(n, theta, eps, delta):
    full, counts = hypercube_mechanism(n, theta, eps, delta)
    quot = count_path_mechanism(n, theta, eps, delta)
    assert full.graph.n == 2 ** n and full.graph.n_edges == n * 2 ** (n - 1)
    np.testing.assert_allclose(full.prob_one, quot.prob_one[counts], atol=1e-13)
    assert full.violations() == [] and full.info["boundary_hitting"]
    c = np.arange(n + 1)
    dist = np.where(c >= theta, c - theta, theta - 1 - c)
    np.testing.assert_allclose(quot.correct_probabilities, balanced_probability(dist, epsilon=eps, delta=delta), atol=1e-12)


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_baselines_exact_private_and_dominated(eps):
    n, theta = 12, 7
    c = np.arange(n + 1)
    dist = np.where(c >= theta, c - theta, theta - 1 - c)
    lap = laplace_threshold_correct(dist, eps)
    # Pr[count + Lap(1/eps) >= theta - 1/2] from scipy's Laplace CDF
    p1 = 1 - laplace.cdf(theta - 0.5 - c, scale=1 / eps)
    np.testing.assert_allclose(lap, np.where(c >= theta, p1, 1 - p1), atol=1e-12)
    g = DatasetGraph.from_arrays(n + 1, c[:-1], c[1:])
    T = (c >= theta).astype(np.int8)
    lap_mech = BinaryMechanism(g, T, p1, DPPair(epsilon=eps))
    assert lap_mech.violations() == []                      # Laplace-then-threshold is eps-DP on the counts
    opt = count_path_mechanism(n, theta, eps)
    assert opt.dominates(lap_mech)                          # and the optimum dominates it
    rr = randomized_response_correct(eps)
    assert opt.correct_probabilities.min() == pytest.approx(rr)   # equal at the boundary, better elsewhere
    assert np.all(opt.correct_probabilities[dist > 0] > rr)


def test_cli_binary_demo_writes_table_and_plot(tmp_path, capsys):
    out = tmp_path / "bd"
    rc = main(["binary-demo", "--n", "8", "--epsilons", "0.5,1", "--full-max-n", "8", "--samples", "500",
               "--out", str(out), "--quiet"])
    assert rc == 0
    md = (out / "binary-demo.md").read_text()
    assert "dpselect-reproduce binary-demo --n 8 --theta 4 --epsilons 0.5,1" in md
    assert "full hypercube vs the count quotient" in md
    assert (out / "binary-demo.png").stat().st_size > 1000
    rows = list(csv.DictReader((out / "binary-demo.csv").open()))
    assert rows[0].keys() >= {"dataset", "method", "epsilon", "run", "metric", "value", "distance"}
    opt = {(r["epsilon"], r["distance"]): float(r["value"]) for r in rows
           if r["method"] == "optimal" and r["metric"] == "pr_correct"}
    assert opt[("1.0", "0")] == pytest.approx(math.e / (1 + math.e))
    assert opt[("0.5", "2")] == pytest.approx(float(balanced_probability(2, epsilon=0.5)))
    capsys.readouterr()
    rc = main(["binary-demo", "--n", "8", "--theta", "9", "--out", str(out), "--quiet"])
    assert rc == 2 and "--theta must be in 1..n" in capsys.readouterr().err   # one-line error (issue 11)


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_exact_dp_audit_of_the_hypercube_mechanism(eps):
    from dpselect.audit import exact_dp_audit

    n, theta = 6, 3
    mech, _ = hypercube_mechanism(n, theta, eps)
    datasets = [tuple((x >> i) & 1 for i in range(n)) for x in range(2 ** n)]
    pairs = [(d, d[:i] + (1 - d[i],) + d[i + 1:]) for d in datasets for i in range(n)]  # replace one record

    def probs(d):
        x = sum(b << i for i, b in enumerate(d))
        return np.array([mech.probability(x, 0), mech.probability(x, 1)])

    res = exact_dp_audit(probs, pairs, epsilon=eps)
    assert res.passed and res.worst_log_ratio <= eps + 1e-9
    assert res.worst_log_ratio == pytest.approx(eps)        # tight: the boundary edges use the full budget
    assert not exact_dp_audit(probs, pairs, epsilon=0.9 * eps).passed   # the audit does catch a smaller budget


def test_count_path_wrong_answer_probability_exact_in_the_tails():
    # Pr[wrong] = (1 - alpha*) e^{-eps d} = e^{-eps d} / (1 + e^eps): down to 1e-27 here, where 1 - Pr[correct]
    # in floats is 0 (issue 10)
    n, theta, eps = 60, 30, 2.0
    mech = count_path_mechanism(n, theta, eps)
    c = np.arange(n + 1)
    dist = np.where(c >= theta, c - theta, theta - 1 - c)
    wrong = np.array([mech.probability(int(k), 1 - int(k >= theta)) for k in c])
    expect = np.exp(-eps * dist) / (1 + math.exp(eps))
    np.testing.assert_allclose(wrong, expect, rtol=1e-12)
    assert wrong.min() < 1e-26 and np.all(wrong > 0)
    assert np.all(1.0 - mech.correct_probabilities[dist > 20] == 0.0)   # what the float form can hold
    assert mech.violations() == []
