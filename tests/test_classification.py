"""TPR/TNR utilities: exact sensitivity, admissibility, and exact DP audits of every mechanism on them."""
import itertools

import numpy as np
import pytest

import dpselect
from dpselect.audit import check_admissibility, exact_dp_audit
from dpselect.utilities.classification import (
    confusion_counts, rate_sensitivity, rate_values, tnr, tnr_sensitivity, tpr, tpr_sensitivity,
)

from _helpers import neighbours, to_arrays, universe  # tests/_helpers.py, shared with test_sklearn.py


def test_counts_and_rates():
    y = [1, 1, 1, 0, 0]
    pred = [[1, 0, 1, 0, 1], [0, 0, 0, 0, 0]]
    c = confusion_counts(y, pred)
    assert c["TP"].tolist() == [2, 0] and c["FN"].tolist() == [1, 3]
    assert c["TN"].tolist() == [1, 2] and c["FP"].tolist() == [1, 0]
    assert np.allclose(tpr(y, pred), [2 / 3, 0.0]) and np.allclose(tnr(y, pred), [0.5, 1.0])
    assert tpr([0, 0], [[1, 0]]).tolist() == [0.0]           # no positives: TPR = 0 by convention
    with pytest.raises(ValueError, match="binary labels"):
        tpr([2, 0], [[1, 0]])
    with pytest.raises(ValueError, match="y_pred must have shape"):
        tpr([1, 0], [[1, 0, 1]])


def test_exact_values_from_design_notes():
    # TP = 4, FN = 1: removing the false negative moves TPR by 0.2 = M/((P)(P-1)) = 4/20
    assert rate_values([4], [1], 0).tolist() == [0.2]
    assert rate_values([4], [1], 1) == pytest.approx(4 / (4 * 3))
    assert rate_values([4], [1], 2) == pytest.approx(0.5)       # min(1, 1/(M - (t - m) - 1)) = 1/2
    assert rate_values([4], [1], 3).tolist() == [1.0]           # P - t = 2
    assert rate_values([0], [0], 0).tolist() == [1.0]


def count_universe(limit):
    return [(tp, fn) for tp in range(limit) for fn in range(limit)]


def count_neighbours(x):
    tp, fn = x
    yield (tp + 1, fn)
    yield (tp, fn + 1)
    if tp:
        yield (tp - 1, fn)
    if fn:
        yield (tp, fn - 1)


def count_tpr(x):
    tp, fn = x
    return np.array([tp / (tp + fn) if tp + fn else 0.0])


def test_exact_rate_sensitivity_admissible_on_full_grid():
    rep = check_admissibility(count_tpr, lambda x: rate_sensitivity([x[0]], [x[1]]), count_neighbours,
                              count_universe(15), t_max=10)
    assert rep.ok, str(rep)
    assert rep.n_datasets == 225 and rep.n_pairs > 800


def paper_printed_delta(tp, fn, t):
    """δ^TPR as printed in paper Sec. 6.2.3 (kept only to show the checker rejects it)."""
    P = tp + fn
    tpp = max(tp - max(t - (P - tp), 0), 2)
    pp = max(P - t, 2)
    if t < P - tp:
        return (pp - tpp) / (pp * (pp - 1))
    return tpp / (pp * (pp - 1))


def test_checker_rejects_the_printed_paper_formula():
    def sens(x):
        return dpselect.SensitivityFunction(lambda t: np.array([paper_printed_delta(x[0], x[1], t)]), 1.0)

    rep = check_admissibility(count_tpr, sens, count_neighbours, count_universe(15), t_max=10)
    assert not rep.ok and rep.violation["condition"] == 1
    assert paper_printed_delta(4, 1, 0) == pytest.approx(0.05)      # the DESIGN.md counterexample
    # and our exact function on that dataset
    assert rate_values([4], [1], 0)[0] == pytest.approx(0.2)


def test_record_level_admissibility_tpr_and_tnr():
    data = universe(4)
    for util, sens in ((tpr, tpr_sensitivity), (tnr, tnr_sensitivity)):
        rep = check_admissibility(lambda x, u=util: u(*to_arrays(x)), lambda x, s=sens: s(*to_arrays(x)),
                                  neighbours, data, t_max=5)
        assert rep.ok, str(rep)


def test_checker_catches_halved_sensitivity():
    rep = check_admissibility(lambda x: tpr(*to_arrays(x)),
                              lambda x: dpselect.SensitivityFunction(
                                  lambda t, s=tpr_sensitivity(*to_arrays(x)): s(t) / 2, 1.0),
                              neighbours, universe(3), t_max=3)
    assert not rep.ok


# ---- exact DP audits of every mechanism on TPR (3 classifiers), add/remove one record ----
AUDIT_DATA = universe(3)
PAIRS = [(x, y) for x in AUDIT_DATA for y in neighbours(x)]
PAIRS_SMALL = [(x, y) for x in universe(2) for y in neighbours(x)]


def mechanisms(eps, scale=1.0):
    """Exact probability functions of each mechanism with (scale x) the right sensitivity."""
    def sf(x):
        base = tpr_sensitivity(*to_arrays(x))
        return dpselect.SensitivityFunction(lambda t: base(t) * scale, 1.0 * scale if scale >= 1 else 1.0)

    def sfb(x):
        return sf(x).bounded(sum(x) + 1)

    def u(x):
        return tpr(*to_arrays(x))

    return {
        "exponential": lambda x: dpselect.exponential_probabilities(u(x), epsilon=eps, sensitivity=1.0 * scale),
        "permute_and_flip": lambda x: dpselect.permute_and_flip_probabilities(u(x), epsilon=eps, sensitivity=1.0 * scale),
        "rnm_laplace": lambda x: dpselect.report_noisy_max_probabilities(u(x), epsilon=eps, sensitivity=1.0 * scale, noise="laplace"),
        "local_dampening": lambda x: dpselect.local_dampening_probabilities(u(x), epsilon=eps, sensitivity_function=sf(x)),
        "sld_increasing": lambda x: dpselect.shifted_local_dampening_probabilities(u(x), epsilon=eps, sensitivity_function=sfb(x)),
        "sld_decreasing": lambda x: dpselect.shifted_local_dampening_probabilities(
            u(x), epsilon=eps, sensitivity_function=sfb(x), direction="decreasing"),
    }


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_exact_dp_audit_every_mechanism(eps):
    for name, prob in mechanisms(eps).items():
        pairs = PAIRS_SMALL if name == "rnm_laplace" else PAIRS  # numerical integration is slower
        res = exact_dp_audit(prob, pairs, epsilon=eps)
        assert res.passed, f"{name}: worst log-ratio {res.worst_log_ratio} > {eps} at {res.pair}"
        assert res.worst_log_ratio > 0.05 * eps  # the audit is not vacuous


def margin_utility(x):
    """u_r = (records with value r) − (records with another value): Δ = 1, and one added record moves
    one candidate up and all others down, so the factor 2 in the exponent is needed in full."""
    c = np.asarray(x, dtype=float)
    return 2 * c - c.sum()


def margin_universe():
    return [c for c in itertools.product(range(4), repeat=3) if sum(c) <= 4]


def margin_neighbours(x):
    for i in range(3):
        up = list(x)
        up[i] += 1
        yield tuple(up)
        if x[i]:
            down = list(x)
            down[i] -= 1
            yield tuple(down)


@pytest.mark.parametrize("name, prob", [
    ("exponential", dpselect.exponential_probabilities),
    ("permute_and_flip", dpselect.permute_and_flip_probabilities),
    ("rnm_laplace", lambda u, epsilon, sensitivity: dpselect.report_noisy_max_probabilities(
        u, epsilon=epsilon, sensitivity=sensitivity, noise="laplace")),
    ("local_dampening", lambda u, epsilon, sensitivity: dpselect.local_dampening_probabilities(
        u, epsilon=epsilon, sensitivity_function=dpselect.constant(3, sensitivity))),
    ("sld", lambda u, epsilon, sensitivity: dpselect.shifted_local_dampening_probabilities(
        u, epsilon=epsilon, sensitivity_function=dpselect.constant(3, sensitivity))),
])
def test_audit_passes_with_sensitivity_and_fails_when_halved(name, prob):
    eps = 1.0
    pairs = [(x, y) for x in margin_universe() for y in margin_neighbours(x)]
    ok = exact_dp_audit(lambda x: prob(margin_utility(x), epsilon=eps, sensitivity=1.0), pairs, epsilon=eps)
    assert ok.passed and ok.worst_log_ratio > 0.9 * eps, (name, ok.worst_log_ratio)
    bad = exact_dp_audit(lambda x: prob(margin_utility(x), epsilon=eps, sensitivity=0.5), pairs, epsilon=eps)
    assert not bad.passed, f"{name}: halved sensitivity not caught ({bad.worst_log_ratio})"


def test_rate_sensitivity_elementwise_equals_one_distance_per_call():
    """rate_sensitivity is elementwise (blocks of distances in the dampening and shift walkers, issue 16):
    sf.at(ts, candidates) equals sf(t)[candidate] for every pair."""
    from dpselect.utilities.classification import rate_sensitivity

    rng = np.random.default_rng(0)
    hit, miss = rng.integers(0, 40, 30), rng.integers(0, 40, 30)
    sf = rate_sensitivity(hit, miss)
    assert sf.elementwise
    ts, rs = rng.integers(0, 90, 500), rng.integers(0, 30, 500)
    assert np.array_equal(sf.at(ts, rs), [sf(int(t))[r] for t, r in zip(ts, rs)])


def _rate_reference(hit, miss, t):
    """The module docstring's δ, written out as in the original one-distance-at-a-time code."""
    hit, miss = np.asarray(hit, dtype=np.float64), np.asarray(miss, dtype=np.float64)
    big, small = np.maximum(hit, miss), np.minimum(hit, miss)
    rem = big + small - t
    out = np.ones(hit.shape)
    ok = rem > 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(ok & (t <= small), big / (rem * (rem - 1.0)), out)
        out = np.where(ok & (t > small), np.minimum(1.0, 1.0 / (big - (t - small) - 1.0)), out)
    return out


@pytest.mark.parametrize("scale", [3, 50, 12_000, 2**52 + 9, 2**61])
def test_rate_tables_bit_equal_to_one_distance_at_a_time(scale):
    """issue 22 item 6: rate_values broadcast over (distance, candidate) tables (and its shortcuts: one P for
    all classifiers, exact integer arithmetic below 2^52) gives the reference floats bit for bit, and
    rate_sensitivity's table (block hook) equals at() on the same grid."""
    from dpselect.utilities.classification import rate_sensitivity, rate_values

    rng = np.random.default_rng(scale % 1000)
    for common in (True, False):
        hit = rng.integers(0, scale, 40, dtype=np.int64)
        miss = (scale - hit) if common else rng.integers(0, scale, 40, dtype=np.int64)
        ts = np.unique(np.concatenate([np.arange(0, 6), rng.integers(0, min(scale, 2**40), 30),
                                       [scale - 3, scale - 2, scale - 1, scale]])).astype(np.int64)
        ref = np.stack([_rate_reference(hit, miss, int(t)) for t in ts])
        assert np.array_equal(rate_values(hit[None, :], miss[None, :], ts[:, None]), ref)
        assert np.array_equal(rate_values(hit[:, None], miss[:, None], ts[None, :]), ref.T)
        for t in ts[:8]:
            assert np.array_equal(rate_values(hit, miss, int(t)), _rate_reference(hit, miss, int(t)))
    if scale < 2**40:
        sf = rate_sensitivity(hit, miss)
        cand = rng.integers(0, 40, 17)
        t0, t1 = int(scale // 3), int(scale // 3) + 25
        grid = sf.at(np.tile(np.arange(t0, t1), cand.size), np.repeat(cand, t1 - t0)).reshape(cand.size, -1)
        assert np.array_equal(sf.table(t0, t1, cand), grid)
        assert np.array_equal(sf.table(t0, t1, cand, by_distance=True), grid.T)
        assert np.array_equal(sf.bounded(t0 + 5).table(t0, t1, cand)[:, 5:], np.ones((cand.size, t1 - t0 - 5)))
