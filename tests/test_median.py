"""The private median: the value-releasing interval median (exact audit, sampler, sensitivity) and the
thesis' record selection (Ch. 5: utility, exact element local sensitivity, grouping, mechanisms)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import histogram_groups, histogram_to_database, median, median_distribution, median_error, median_probabilities, median_rank
from dpselect.utilities.median import (
    grouped_database,
    grouped_median_sensitivity,
    grouped_median_utility,
    interval_median_sensitivity,
    median_intervals,
    median_sensitivity,
    median_utility,
)


# ---------------------------------------------------------------------------------------------
# brute force over a whole universe grid^n of record-labelled databases (vectorised)
# ---------------------------------------------------------------------------------------------
class Universe:
    """Every labelled database of n records with values in ``grid``, with exact LS(x, t, r) by brute force.

    LS(x, 0, r) = max over the replace-one neighbours y (every record, every grid value) of
    |u(x, r) − u(y, r)|; LS(x, t, r) = max(LS(x, t−1, r), max over neighbours y of LS(y, t−1, r)),
    i.e. the max of LS(z, 0, r) over all z within t replacements.
    """

    def __init__(self, n: int, grid):
        self.n, self.grid = n, np.asarray(grid, dtype=float)
        g = self.grid.size
        self.codes = np.array(list(itertools.product(range(g), repeat=n)), dtype=np.int64)  # (N, n) digits
        vals = self.grid[self.codes]
        m = (n + 1) // 2
        med = np.sort(vals, axis=1)[:, m - 1]
        self.values = vals
        self.u = -np.abs(vals - med[:, None])  # (N, n): u(x, r) per record
        pw = g ** np.arange(n - 1, -1, -1)
        self.pw = pw
        code = self.codes @ pw
        # neighbour index: replace record k by grid value v
        self.nbrs = np.stack([code + (v - self.codes[:, k]) * pw[k] for k in range(n) for v in range(g)], axis=1)
        self.ls = [np.max(np.abs(self.u[:, None, :] - self.u[self.nbrs]), axis=1)]

    def ls_at(self, t: int) -> np.ndarray:
        while len(self.ls) <= t:
            prev = self.ls[-1]
            self.ls.append(np.maximum(prev, prev[self.nbrs].max(axis=1)))
        return self.ls[t]

    def sorted_rows(self):
        """Indices of the databases whose records are already in ascending order (one per multiset)."""
        return np.flatnonzero(np.all(np.diff(self.codes, axis=1) >= 0, axis=1))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_sensitivity_equals_brute_force_local_sensitivity(n):
    bound = 4.0
    uni = Universe(n, np.arange(5.0))
    rows = uni.sorted_rows()
    for t in range(4 if n <= 5 else 3):
        exact = uni.ls_at(t)
        for i in rows:
            x = uni.values[i]
            got = median_sensitivity(x, bound)(t)
            np.testing.assert_array_equal(got, exact[i], err_msg=f"x={x.tolist()} t={t}")


def test_sensitivity_on_half_integer_grid():
    # values and replacements on a finer grid than the integers: still exact
    uni = Universe(4, np.arange(0, 3.01, 0.5))
    for t in range(3):
        exact = uni.ls_at(t)
        for i in uni.sorted_rows():
            np.testing.assert_allclose(median_sensitivity(uni.values[i], 3.0)(t), exact[i], atol=1e-12)


def test_admissibility_checker_and_mutation():
    from dpselect.audit import check_admissibility

    grid = [0.0, 1.0, 2.0, 3.0]
    n = 4

    def per_record(x, scale=1.0):
        order = np.argsort(x, kind="stable")
        sf = median_sensitivity(np.asarray(x)[order], 3.0)
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.arange(n)
        return lambda t: scale * sf(t)[inv]

    def utility(x):
        x = np.asarray(x)
        return -np.abs(x - np.sort(x)[(n + 1) // 2 - 1])

    def neighbours(x):
        for k in range(n):
            for v in grid:
                if v != x[k]:
                    y = list(x)
                    y[k] = v
                    yield tuple(y)

    datasets = list(itertools.product(grid, repeat=n))
    rep = check_admissibility(utility, per_record, neighbours, datasets, t_max=3)
    assert rep.ok, rep.violation
    bad = check_admissibility(utility, lambda x: per_record(x, 0.5), neighbours, datasets, t_max=1)
    assert not bad.ok and bad.violation["condition"] == 1


def test_lemma_5_2_2_printed_is_loose_but_an_upper_bound():
    # thesis Lemma 5.2.2 as printed vs the exact value (the proof's cases 4.3/5.2 give the exact one)
    def printed(x, i, lam):
        n = len(x)
        m = (n + 1) // 2
        X = lambda k: 0.0 if k < 1 else (lam if k > n else x[k - 1])  # noqa: E731
        xi, xm = X(i), X(m)
        if i > m:
            p, q = lam - xi, xi
        elif i == m:
            p, q = lam - X(m + 1), X(m - 1)
        else:
            p, q = lam + xi - 3 * xm + X(m + 1), 3 * xm - xi - X(m - 1)
        return max(abs(xm - xi), X(m + 1) - xm, xm - X(m - 1), p, q)

    assert printed([0.0, 0.0, 1.0], 1, 4.0) == 5.0  # > Λ before clipping
    assert median_sensitivity([0.0, 0.0, 1.0], 4.0)(0).tolist() == [3.0, 3.0, 3.0]
    assert printed([0.0, 2.0, 3.0], 3, 4.0) == 3.0
    assert median_sensitivity([0.0, 2.0, 3.0], 4.0)(0).tolist() == [2.0, 2.0, 2.0]  # printed 3 for record 3
    uni = Universe(5, np.arange(5.0))
    exact = uni.ls_at(0)
    for i in uni.sorted_rows():
        x = uni.values[i].tolist()
        for pos in range(1, 6):
            assert min(4.0, printed(x, pos, 4.0)) >= exact[i][pos - 1] - 1e-12


# ---------------------------------------------------------------------------------------------
# utility, grouping, API
# ---------------------------------------------------------------------------------------------
def test_utility_values():
    assert median_utility([1.0, 2.0, 4.0, 7.0]).tolist() == [-1.0, 0.0, -2.0, -5.0]  # m = ⌈4/2⌉ = 2
    assert median_utility([3.0, 3.0, 8.0]).tolist() == [0.0, 0.0, -5.0]
    assert grouped_median_utility([0.0, 2.0, 5.0], [1, 2, 1]).tolist() == [-2.0, 0.0, -3.0]
    assert median_utility([6.0]).tolist() == [0.0]


def test_hand_computed_values():
    # x = (0, 2, 2, 5), Λ = 10, median 2 (m = 2): record 0 (a < M): max(2, 0, 2, 0, 10 − 2 − 2 + 0) = 6;
    # a = M: max(0, 2, 0, 10 − 2) = 8; a = 5 > M: max(3, 0, 2, 2 + 0 − 5, 10 − 5) = 5
    sf = median_sensitivity([0.0, 2.0, 2.0, 5.0], 10.0)
    assert sf(0).tolist() == [6.0, 8.0, 8.0, 5.0]
    assert sf(0, candidates=np.array([3, 0])).tolist() == [5.0, 6.0]
    assert sf.global_sensitivity == 10.0
    gs = grouped_median_sensitivity([0.0, 2.0, 5.0], [1, 2, 1], 10.0)
    assert gs(0).tolist() == [6.0, 8.0, 5.0]
    for t in range(6):  # non-decreasing in t and reaching Λ
        assert np.all(gs(t + 1) >= gs(t))
    assert gs(4).tolist() == [10.0, 10.0, 10.0]
    assert median_sensitivity([7.0], 10.0)(3).tolist() == [0.0]  # n = 1: u is always 0


def test_grouped_equals_per_record_distribution():
    x = np.array([0.0, 1.0, 1.0, 1.0, 2.0, 4.0, 4.0, 7.0, 9.0, 9.0])
    bound, eps = 10.0, 2.0
    u = median_utility(x)
    sf = median_sensitivity(x, bound)
    vals, p_grouped = median_probabilities(x, epsilon=eps, bound=bound, mechanism="local_dampening")
    p_rec = dpselect.local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf)
    per_value = np.array([p_rec[x == v].sum() for v in vals])
    np.testing.assert_allclose(p_grouped, per_value, rtol=1e-12)
    p_em = dpselect.exponential_probabilities(u, epsilon=eps, sensitivity=bound)
    _, g_em = median_probabilities(x, epsilon=eps, bound=bound, mechanism="exponential")
    np.testing.assert_allclose(g_em, [p_em[x == v].sum() for v in vals], rtol=1e-12)
    p_pf = dpselect.permute_and_flip_probabilities(u, epsilon=eps, sensitivity=bound)
    _, g_pf = median_probabilities(x, epsilon=eps, bound=bound, mechanism="permute_and_flip")
    np.testing.assert_allclose(g_pf, [p_pf[x == v].sum() for v in vals], rtol=1e-9)
    p_sld = dpselect.shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf.bounded(x.size), direction="decreasing")
    _, g_sld = median_probabilities(x, epsilon=eps, bound=bound, mechanism="shifted_local_dampening")
    np.testing.assert_allclose(g_sld, [p_sld[x == v].sum() for v in vals], rtol=1e-12)
    # the counts form gives the same, in any order and with repeated values merged
    _, g_counts = median_probabilities([9.0, 0.0, 1.0, 4.0, 7.0, 1.0, 2.0], epsilon=eps, bound=bound,
                                       counts=[2, 1, 2, 2, 1, 1, 1])
    np.testing.assert_allclose(g_counts, p_grouped, rtol=1e-12)


def test_local_dampening_is_exactly_dp():
    from dpselect.audit import exact_dp_audit

    grid, n, bound, eps = [0.0, 1.0, 2.0, 3.0], 3, 3.0, 1.0

    def probs(x, scale=1.0):
        x = np.asarray(x)
        order = np.argsort(x, kind="stable")
        xs = x[order]
        sf = median_sensitivity(xs, bound)
        if scale != 1.0:
            sf = dpselect.SensitivityFunction(lambda t: scale * median_sensitivity(xs, bound)(t), bound)
        p = dpselect.local_dampening_probabilities(median_utility(xs), epsilon=eps, sensitivity_function=sf)
        out = np.empty(n)
        out[order] = p
        return out

    datasets = list(itertools.product(grid, repeat=n))
    index = {d: d for d in datasets}
    pairs = []
    for x in datasets:
        for k in range(n):
            for v in grid:
                if v != x[k]:
                    pairs.append((x, index[x[:k] + (v,) + x[k + 1:]]))
    res = exact_dp_audit(probs, pairs, epsilon=eps)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.5 * eps
    bad = exact_dp_audit(lambda d: probs(d, 0.25), pairs, epsilon=eps)
    assert not bad.passed


def test_median_rank_sampler_matches_probabilities():
    x = np.array([0.0, 3.0, 3.0, 4.0, 6.0, 6.0, 6.0, 10.0])
    vals, p = median_probabilities(x, epsilon=1.5, bound=10.0)
    rng = np.random.default_rng(7)
    idx = np.array([median_rank(x, epsilon=1.5, bound=10.0, rng=rng) for _ in range(2000)])
    got = np.sort(x)[idx]
    counts = np.array([(got == v).sum() for v in vals])
    from scipy.stats import chisquare

    assert chisquare(counts, p * idx.size).pvalue > 1e-3
    # within the selected value, the record is uniform: both 3.0 records appear
    assert set(idx[got == 3.0].tolist()) == {1, 2}


@pytest.mark.parametrize("mechanism", ["local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip"])
def test_median_rank_all_mechanisms_large_epsilon(mechanism):
    x = [5.0, 1.0, 9.0, 4.0, 7.0]
    assert median_rank(x, epsilon=1e4, bound=10.0, mechanism=mechanism, rng=1) == 2


@pytest.mark.parametrize("mechanism", ["local_dampening", "shifted_local_dampening", "exponential"])
def test_median_large_epsilon_lands_next_to_the_median(mechanism):
    # n = 5: the intervals [4, 5) and [5, 7) have utility −1/2, all others <= −3/2; at ε = 1e4 the value
    # is in [4, 7) with probability 1 − O(e^-5000)
    vals = [median([5.0, 1.0, 9.0, 4.0, 7.0], epsilon=1e4, bound=10.0, mechanism=mechanism, rng=s) for s in range(20)]
    assert all(4.0 <= v < 7.0 for v in vals) and len(set(vals)) == 20 and isinstance(vals[0], float)


def test_mechanism_aliases():
    """Short aliases (any case) name the same mechanisms as the canonical names: same law, same draws."""
    x = [5.0, 1.0, 9.0, 4.0, 7.0]
    for alias, name in (("LD", "local_dampening"), ("em", "exponential"), ("Sld", "shifted_local_dampening"),
                        ("PF", "permute_and_flip")):
        np.testing.assert_array_equal(median_probabilities(x, epsilon=0.7, bound=10.0, mechanism=alias)[1],
                                      median_probabilities(x, epsilon=0.7, bound=10.0, mechanism=name)[1])
        assert median_rank(x, epsilon=0.7, bound=10.0, mechanism=alias, rng=4) == median_rank(x, epsilon=0.7, bound=10.0,
                                                                                       mechanism=name, rng=4)
        if name != "permute_and_flip":
            assert median(x, epsilon=0.7, bound=10.0, mechanism=alias, rng=4) == median(x, epsilon=0.7, bound=10.0, mechanism=name,
                                                                                rng=4)
            assert median_distribution(x, epsilon=0.7, bound=10.0, mechanism=alias).mechanism == name
    with pytest.raises(ValueError, match="permute_and_flip' is not available for median"):
        median(x, epsilon=1.0, bound=10.0, mechanism="pf")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        median_rank(x, epsilon=1.0, bound=10.0, mechanism="RNM")


def test_histogram_helpers_and_counts_path():
    h = np.array([3, 0, 2, 0, 1])
    assert histogram_to_database(h).tolist() == [0.0, 0.0, 0.0, 2.0, 2.0, 4.0]
    assert histogram_to_database(h, bound=1.0).tolist() == [0.0, 0.0, 0.0, 0.5, 0.5, 1.0]
    v, c, lam = histogram_groups(h)
    assert (v.tolist(), c.tolist(), lam) == ([0.0, 2.0, 4.0], [3, 2, 1], 4.0)
    e1 = median_error(histogram_to_database(h), epsilon=0.7, bound=lam)
    e2 = median_error(v, epsilon=0.7, bound=lam, counts=c)
    assert e1 == pytest.approx(e2, rel=1e-12)
    # by hand: intervals [0, 2) (3 records at or below, u = 0) and [2, 4) (5 records, u = −2), the record
    # at Λ = 4 closes the last one; median x_3 = 0. E|V| = (2·1·1 + 2·e^{−0.7}·3) / (2 + 2·e^{−0.7})
    w = np.exp(-0.7)
    assert e2 == pytest.approx((2 * 1.0 + 2 * w * 3.0) / (2 + 2 * w), rel=1e-12)
    i = median_rank(v, epsilon=1e4, bound=lam, counts=c, rng=0)
    assert 0 <= i < 3  # median of (0,0,0,2,2,4) is x_3 = 0
    assert 0.0 <= median(v, epsilon=1e4, bound=lam, counts=c, rng=0) < 2.0


def test_large_database_never_expanded():
    # 30 million records in 4,096 groups: the grouped path works on the groups only
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 14_000, size=4096)
    vals = np.arange(4096.0)
    assert counts.sum() > 2.5e7
    sf = grouped_median_sensitivity(vals, counts, 4095.0)
    d0 = sf(0)
    assert d0.shape == (4096,) and np.all(d0 <= 4095.0) and np.all(d0 >= np.abs(vals - grouped_database(vals, 4095.0, counts).median))
    i = median_rank(vals, epsilon=1.0, bound=4095.0, counts=counts, rng=3)
    assert 0 <= i < counts.sum()
    true = grouped_database(vals, 4095.0, counts).median
    v = median(vals, epsilon=1.0, bound=4095.0, counts=counts, rng=3)
    assert abs(v - true) <= 1.0  # every tie group holds >= 1 record: the chosen interval touches the median
    assert median_error(vals, epsilon=1.0, bound=4095.0, counts=counts) == pytest.approx(0.5, abs=1e-6)


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(values=[], epsilon=1.0, bound=1.0), ValueError, "must not be empty"),
    (dict(values=[0.5, np.nan], epsilon=1.0, bound=1.0), ValueError, "^values must not hold NaN$"),
    (dict(values=[0.5], epsilon=1.0, bound=0.0), ValueError, "bound must be a finite number > 0"),
    (dict(values=[0.5], epsilon=-1.0, bound=1.0), ValueError, "epsilon must be a finite number > 0"),
    (dict(values=[0.5], epsilon=1.0, bound=1.0, mechanism="laplace"), ValueError, "mechanism must be one of"),
    (dict(values=[[0.5]], epsilon=1.0, bound=1.0), ValueError, "1-D"),
    (dict(values=["a"], epsilon=1.0, bound=1.0), TypeError, "real numbers"),
    (dict(values=[0.5, 0.7], epsilon=1.0, bound=1.0, counts=[1, -1]), ValueError, "^counts must be >= 0$"),
    (dict(values=[0.5, 0.7], epsilon=1.0, bound=1.0, counts=[0, 0]), ValueError, "at least one record"),
    (dict(values=[0.5, 0.7], epsilon=1.0, bound=1.0, counts=[1]), ValueError, "one entry per value"),
])
def test_bad_input(kwargs, exc, msg):
    for fn in (median, median_rank, median_distribution):
        with pytest.raises(exc, match=msg):
            fn(**kwargs)


def test_bad_input_median_specific():
    # issue 33: a record outside [0, bound] is clipped into it (refusing it was a data-dependent error)
    assert median([1.0, 4.5], epsilon=1.0, bound=3.0, rng=5) == median([1.0, 3.0], epsilon=1.0, bound=3.0, rng=5)
    with pytest.raises(ValueError, match="permute_and_flip' is not available for median"):
        median([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="permute_and_flip")
    with pytest.raises(ValueError, match="permute_and_flip' is not available for median"):
        median_distribution([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="permute_and_flip")
    # issue 11: sld_distance with another mechanism was silently ignored
    with pytest.raises(TypeError, match="sld_distance"):
        median([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="exponential", sld_distance=5)
    for fn in (median_rank, median_probabilities):
        with pytest.raises(ValueError, match="sld_distance only applies to mechanism='shifted_local_dampening'"):
            fn([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="exponential", sld_distance=5)


def test_bad_input_sensitivity():
    with pytest.raises(ValueError, match="sorted in ascending order"):
        median_sensitivity([2.0, 1.0], 3.0)
    with pytest.raises(ValueError, match="distinct"):
        grouped_median_sensitivity([1.0, 1.0], [1, 2], 3.0)
    assert median_sensitivity([1.0, 4.0], 3.0)(2).tolist() == median_sensitivity([1.0, 3.0], 3.0)(2).tolist()
    with pytest.raises(ValueError, match="hist counts must be >= 0"):
        histogram_groups([1, -1])


def test_shifted_local_dampening_distance_cap():
    from dpselect.quantiles._median import _prepare, _sensitivity

    # Large database: δ forced to Λ from a public distance on, so the shift stays cheap.
    v, p = median_probabilities([1.0, 2.0, 3.0], epsilon=1.0, bound=4.0, counts=[40_000, 3, 50_000],
                                mechanism="shifted_local_dampening", sld_distance=8)
    assert p.sum() == pytest.approx(1.0) and p.shape == (3,)
    # with the cap at n it is the plain bounded function
    x = np.array([0.0, 1.0, 1.0, 3.0, 4.0])
    g = _prepare(x, 4.0, None)
    u = g.utilities()
    sf = _sensitivity(g).bounded(g.n)
    ref = dpselect.shifted_local_dampening_probabilities(u, epsilon=1.0, sensitivity_function=sf, direction="decreasing",
                                                         base_measure=g.counts.astype(float))
    assert np.allclose(median_probabilities(x, epsilon=1.0, bound=4.0, mechanism="shifted_local_dampening",
                                            sld_distance=5)[1], ref)
    # the capped function is still admissible (any public cap >= 1 is)
    with pytest.raises(ValueError, match="sld_distance must be an int >= 1"):
        median_rank([1.0, 2.0], epsilon=1.0, bound=3.0, mechanism="shifted_local_dampening", sld_distance=0)


def test_grouped_permute_and_flip_sampler_matches_per_record_distribution():
    # the grouped sampler (count as base measure = max of count exponential noises) against the exact
    # per-record permute-and-flip distribution summed per value
    from scipy.stats import chisquare

    x = np.array([0.0, 2.0, 2.0, 2.0, 3.0, 5.0, 5.0, 8.0])
    p_rec = dpselect.permute_and_flip_probabilities(median_utility(x), epsilon=1.0, sensitivity=8.0)
    vals = np.unique(x)
    expected = np.array([p_rec[x == v].sum() for v in vals])
    rng = np.random.default_rng(11)
    got = np.sort(x)[[median_rank(x, epsilon=1.0, bound=8.0, mechanism="permute_and_flip", rng=rng) for _ in range(1500)]]
    counts = np.array([(got == v).sum() for v in vals])
    assert chisquare(counts, expected * got.size).pvalue > 1e-3


def _printed_lemma(x, i, lam):
    """Thesis Lemma 5.2.2 as printed, for sorted position i (1-based), clipped to Λ."""
    n = len(x)
    m = (n + 1) // 2
    X = lambda k: 0.0 if k < 1 else (lam if k > n else x[k - 1])  # noqa: E731
    xi, xm = X(i), X(m)
    if i > m:
        p, q = lam - xi, xi
    elif i == m:
        p, q = lam - X(m + 1), X(m - 1)
    else:
        p, q = lam + xi - 3 * xm + X(m + 1), 3 * xm - xi - X(m - 1)
    return min(lam, max(abs(xm - xi), X(m + 1) - xm, xm - X(m - 1), p, q))


def _thesis_candidates_delta(x, t, r, lam, swap_last=False):
    """Thesis Alg. 2 (Candidates) on a record-labelled database, maximising the printed lemma over it."""
    def order(z):
        return sorted(range(len(z)), key=lambda k: (z[k], k))

    def move(z, k, v):
        z = list(z)
        z[k] = v
        return tuple(z)

    def move_median(z, v):
        return move(z, order(z)[(len(z) + 1) // 2 - 1], v)

    if t == 0:
        cands = [x]
    else:
        c1, c3 = move(x, r, lam), move(x, r, 0.0)
        cands = [c1, c1, c3, c3, move_median(x, lam), move_median(x, 0.0)]
        dirs = [0.0, lam, 0.0, lam, lam, 0.0] if swap_last else [0.0, lam, 0.0, lam, 0.0, lam]  # lines 15-20
        for _ in range(t - 1):
            cands = [move_median(z, d) for z, d in zip(cands, dirs)]
    best = 0.0
    for z in cands:
        pos = order(z).index(r) + 1
        best = max(best, _printed_lemma([z[k] for k in order(z)], pos, lam))
    return best


@pytest.mark.parametrize("swap_last", [False, True])
def test_thesis_candidates_algorithm_is_admissible_but_looser(swap_last):
    # Alg. 2 + printed Lemma 5.2.2 (clipped): admissible on this universe, >= the exact value, and
    # strictly larger somewhere (what the LD-thesis-delta column of thesis-figure17 measures)
    from dpselect.audit import check_admissibility

    grid, n, lam = [0.0, 1.0, 2.0, 3.0], 4, 3.0
    datasets = list(itertools.product(grid, repeat=n))

    def sens(x):
        return lambda t: np.array([_thesis_candidates_delta(x, t, r, lam, swap_last) for r in range(n)])

    def utility(x):
        x = np.asarray(x)
        return -np.abs(x - np.sort(x)[(n + 1) // 2 - 1])

    def neighbours(x):
        for k in range(n):
            for v in grid:
                if v != x[k]:
                    yield x[:k] + (v,) + x[k + 1:]

    rep = check_admissibility(utility, sens, neighbours, datasets, t_max=2)
    assert rep.ok, rep.violation
    looser = 0
    for x in datasets[::7]:
        order = np.argsort(x, kind="stable")
        exact = np.empty(n)
        for t in range(2):
            exact[order] = median_sensitivity(np.asarray(x)[order], lam)(t)
            th = sens(x)(t)
            assert np.all(th >= exact - 1e-12)
            looser += int(np.any(th > exact))
    assert looser > 0


# ---------------------------------------------------------------------------------------------
# the value-releasing median: interval utility, its sensitivity, exact audit, sampler
# ---------------------------------------------------------------------------------------------
GRID, LAM = (0.0, 1.0, 2.0, 3.0), 3.0
POINTS = np.array([0.5, 1.5, 2.5])  # one point inside each open cell between grid values


def _point_utility(x, points=POINTS):
    """u(x, v) = −|#{x_i <= v} − n/2| straight from the definition."""
    x = np.asarray(x, dtype=float)
    return -np.abs((x[None, :] <= points[:, None]).sum(axis=1) - x.size / 2.0)


def _interval_of(iv, points=POINTS):
    return np.searchsorted(iv.lo, points, side="right") - 1


def test_interval_utility_matches_definition():
    for n in range(1, 5):
        for x in itertools.product(GRID, repeat=n):
            iv = median_intervals(x, LAM)
            np.testing.assert_array_equal(iv.utility[_interval_of(iv)], _point_utility(x))
            assert iv.lo[0] == 0.0 and iv.hi[-1] == LAM and np.all(iv.hi[:-1] == iv.lo[1:]) and np.all(iv.hi > iv.lo)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_interval_local_sensitivity_brute_force(n):
    # LS(x, 0, v) by enumerating every replace-one neighbour of every labelled database: 1 for n >= 2,
    # 0 for n = 1, at every point; hence δ(x, t, v) = 1 at every distance (n >= 2)
    worst = []
    for x in itertools.product(GRID, repeat=n):
        ux = _point_utility(x)
        ls = np.zeros(POINTS.size)
        for k in range(n):
            for v in GRID:
                y = x[:k] + (v,) + x[k + 1:]
                ls = np.maximum(ls, np.abs(ux - _point_utility(y)))
        worst.append(ls)
    worst = np.array(worst)
    if n == 1:
        assert np.all(worst == 0.0)
    else:
        assert np.all(worst == 1.0)
    sf = interval_median_sensitivity(median_intervals([1.0] * n, LAM))
    assert sf.global_sensitivity == 1.0 and np.all(sf(0) >= worst.max()) and np.all(sf(3) == 1.0)


def test_interval_sensitivity_admissible_and_mutation():
    from dpselect.audit import check_admissibility

    def per_point(x, scale=1.0):
        iv = median_intervals(x, LAM)
        sf, j = interval_median_sensitivity(iv), _interval_of(iv)
        return lambda t: scale * sf(t)[j]

    def utility(x):
        iv = median_intervals(x, LAM)
        return iv.utility[_interval_of(iv)]

    def neighbours(x):
        for k in range(len(x)):
            for v in GRID:
                if v != x[k]:
                    yield x[:k] + (v,) + x[k + 1:]

    for n in (2, 3, 4):
        datasets = list(itertools.product(GRID, repeat=n))
        rep = check_admissibility(utility, per_point, neighbours, datasets, t_max=3)
        assert rep.ok and rep.n_pairs == len(datasets) * n * 3, rep
        bad = check_admissibility(utility, lambda x: per_point(x, 0.5), neighbours, datasets, t_max=1)
        assert not bad.ok and bad.violation["condition"] == 1 and bad.violation["required"] == 1.0


def _multisets(max_n=4):
    return [x for n in range(1, max_n + 1) for x in itertools.combinations_with_replacement(GRID, n)]


def _replace_one(x):
    out = set()
    for k in range(len(x)):
        for v in GRID:
            if v != x[k]:
                out.add(tuple(sorted(x[:k] + (v,) + x[k + 1:])))
    return out


def _audit(law, epsilon):
    """Worst |log ratio| of densities (fine grid + every interval midpoint) and atoms over all neighbours.

    ``law(x)`` -> (atoms dict, pdf callable, interval midpoints). Returns (worst, x, y).
    """
    fine = np.linspace(0.0, LAM, 601)
    cache = {x: law(x) for x in _multisets()}
    worst, arg = 0.0, None
    for x, (ax, px, mx) in cache.items():
        for y in _replace_one(x):
            ay, py, my = cache[y]
            pts = np.concatenate((fine, mx, my))
            fx, fy = px(pts), py(pts)
            with np.errstate(divide="ignore", invalid="ignore"):
                lr = np.where((fx == 0) & (fy == 0), 0.0, np.abs(np.log(fx) - np.log(fy)))
            for a in set(ax) | set(ay):
                pa, pb = ax.get(a, 0.0), ay.get(a, 0.0)
                with np.errstate(divide="ignore"):
                    lr = np.append(lr, abs(np.log(pa) - np.log(pb)) if pa or pb else 0.0)
            if lr.max() > worst:
                worst, arg = float(lr.max()), (x, y)
    return worst, arg


def _law(mechanism, eps):
    def law(x):
        d = median_distribution(x, epsilon=eps, bound=LAM, mechanism=mechanism)
        return d.atoms, d.pdf, (d.lo + d.hi) / 2.0
    return law


@pytest.mark.parametrize("mechanism", ["local_dampening", "exponential", "shifted_local_dampening"])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_median_distribution_exact_audit(mechanism, eps):
    worst, pair = _audit(_law(mechanism, eps), eps)
    assert worst <= eps + 1e-9, (worst, pair)
    assert worst >= 0.7 * eps  # not vacuous: measured 0.719ε at ε = 0.5, 0.9ε+ at ε = 2


def test_median_distribution_audit_mutations():
    eps = 1.0
    import dpselect as dps

    def mutated(sensitivity=1.0, base="length"):
        def law(x):
            iv = median_intervals(x, LAM)
            w = (iv.hi - iv.lo) if base == "length" else np.ones(iv.lo.size)
            p = dps.exponential_probabilities(iv.utility, epsilon=eps, sensitivity=sensitivity, base_measure=w)
            dens = p / (iv.hi - iv.lo)
            def pdf(v):
                return dens[np.clip(np.searchsorted(iv.lo, v, side="right") - 1, 0, None)]
            return {}, pdf, (iv.lo + iv.hi) / 2
        return law

    ok, _ = _audit(mutated(), eps)
    assert ok <= eps + 1e-9
    assert ok == pytest.approx(0.7634, abs=1e-4)
    assert _audit(mutated(sensitivity=0.5), eps)[0] > eps + 0.5  # sensitivity halved: fails (1.660)
    assert _audit(mutated(base="count"), eps)[0] > eps + 0.04  # one unit of mass per interval: fails (1.048)

    def record_value(x):  # the thesis' selection releasing the record's value: atoms on the data
        vals, p = median_probabilities(x, epsilon=eps, bound=LAM)
        return dict(zip(vals.tolist(), p.tolist())), lambda v: np.zeros(np.shape(v)), np.array([])

    worst, _ = _audit(record_value, eps)
    assert worst == np.inf
    # the example: 3.0 is impossible for (0, 0, 0) and has probability 0.23 for (3, 0, 0)
    v, p = median_probabilities([3.0, 0.0, 0.0], epsilon=eps, bound=LAM)
    assert v.tolist() == [0.0, 3.0] and p[1] == pytest.approx(0.2327, abs=1e-4)
    assert median_probabilities([0.0, 0.0, 0.0], epsilon=eps, bound=LAM)[0].tolist() == [0.0]


@pytest.mark.parametrize("counts, total", [
    ([2 ** 63 - 1, 2 ** 63 - 1, 3], 2 ** 64 + 1),       # wrapped to n = 1 in int64 and returned a value
    ([2 ** 62, 2 ** 62, 1], 2 ** 63 + 1),               # wrapped negative: IndexError
    ([2 ** 64, 1, 1], 2 ** 64 + 2),                     # beyond int64 (object array of Python ints)
    (np.array([2 ** 64 - 1, 1, 1], dtype=np.uint64), 2 ** 64 + 1),
    ([2 ** 53, 1, 0 + 1], 2 ** 53 + 2),                 # just over 2^53
])
@pytest.mark.parametrize("call", [median, median_distribution, median_rank, median_probabilities])
def test_counts_total_checked_exactly(counts, total, call):
    kw = dict(epsilon=1.0, bound=1.0, counts=counts)
    if call in (median, median_rank):
        kw["rng"] = 0
    with pytest.raises(ValueError, match=r"^counts must sum to at most 9007199254740992 \(2\*\*53\) records$"):
        call([0.25, 0.5, 0.75], **kw)


def test_counts_at_the_limit_work():
    d = median_distribution([0.25, 0.75], epsilon=1.0, bound=1.0, counts=[2 ** 52, 2 ** 52])
    # n = 2^53: the middle interval [0.25, 0.75) holds the median (utility 0), the outer ones are 2^51 ranks away
    assert d.lo.tolist() == [0.0, 0.25, 0.75] and d.probabilities[1] == 1.0
    assert 0.0 <= median([0.25, 0.75], epsilon=1.0, bound=1.0, counts=[2 ** 52, 2 ** 52], rng=0) <= 1.0
    with pytest.raises(ValueError, match=r"^counts must be > 0$"):
        median([0.25, 0.75], epsilon=1.0, bound=1.0, counts=[-2 ** 64, 1], rng=0)


@pytest.mark.parametrize("mechanism", ["exponential", "local_dampening", "shifted_local_dampening"])
def test_median_pdf_where_the_probability_underflows(mechanism):
    # [0, 1e-300) has utility −1 and Pr = 1e-300 e^-1/2 / (1e-300 e^-1/2 + 1e300) = 0 in float64, but its density
    # e^-1/2 / (1e-300 e^-1/2 + 1e300) = 6.0653e-301 is representable (it was returned as 0)
    d = median_distribution([1e-300, 1e300], epsilon=1.0, bound=1e300, mechanism=mechanism)
    assert d.probabilities[0] == 0.0
    assert d.pdf(5e-301) == pytest.approx(np.exp(-0.5) / 1e300, rel=1e-12)
    assert d.pdf(0.5e300) == pytest.approx(1e-300, rel=1e-12)
    # NaN in, NaN out (a point that is missing has no density); outside [0, bound] still 0
    out = d.pdf([np.nan, -1.0, 2e300])
    assert np.isnan(out[0]) and out[1:].tolist() == [0.0, 0.0]
    assert np.isnan(d.pdf(float("nan"))) and np.isnan(d.cdf(float("nan")))


def test_median_distribution_values():
    # x = (1, 2), Λ = 3: intervals [0,1), [1,2), [2,3] with utilities −1, 0, −1 and length 1
    d = median_distribution([2.0, 1.0], epsilon=1.0, bound=3.0)
    z = 1 + 2 * np.exp(-0.5)
    np.testing.assert_allclose(d.probabilities, [np.exp(-0.5) / z, 1 / z, np.exp(-0.5) / z], rtol=1e-14)
    np.testing.assert_allclose(d.pdf([0.0, 0.999, 1.0, 2.5, 3.0]), np.array([np.exp(-0.5), np.exp(-0.5), 1,
                                                                             np.exp(-0.5), np.exp(-0.5)]) / z)
    assert d.pdf(-0.1) == 0.0 and d.pdf(3.1) == 0.0 and d.atoms == {}
    assert d.cdf(-1.0) == 0.0 and d.cdf(3.0) == 1.0 and d.cdf(1.5) == pytest.approx(0.5)
    # E|V − 1| : [0,1) → 0.5, [1,2) → 0.5, [2,3] → 1.5
    assert d.expected_abs_error(1.0) == pytest.approx((0.5 + 0.5 * np.exp(0.5) + 1.5) / (np.exp(0.5) + 2))
    # ties and records at the ends drop out: x = (0, 2, 2, 3), Λ = 3 → [0, 2) with 1 record at or below, [2, 3)
    d = median_distribution([0.0, 2.0, 2.0, 3.0], epsilon=1.0, bound=3.0)
    assert d.lo.tolist() == [0.0, 2.0] and d.hi.tolist() == [2.0, 3.0]
    np.testing.assert_allclose(d.probabilities, [2 / 3, 1 / 3], rtol=1e-14)  # both have utility −|1 − 2| = −|3 − 2|
    # the three mechanisms give one law
    x = [0.3, 1.2, 1.2, 2.9, 4.0, 7.5]
    ps = [median_distribution(x, epsilon=0.8, bound=8.0, mechanism=m).probabilities
          for m in ("local_dampening", "exponential", "shifted_local_dampening")]
    np.testing.assert_allclose(ps[0], ps[1], rtol=1e-13)
    np.testing.assert_allclose(ps[2], ps[1], rtol=1e-13)


@pytest.mark.parametrize("mechanism, draws", [("local_dampening", 2000), ("exponential", 1000),
                                               ("shifted_local_dampening", 1000)])
def test_median_sampler_chi_square(mechanism, draws):
    from scipy.stats import chisquare

    x = np.array([0.5, 1.0, 1.0, 2.5, 4.0, 7.0, 7.5])
    d = median_distribution(x, epsilon=1.5, bound=10.0, mechanism=mechanism)
    rng = np.random.default_rng(2024)
    got = np.array([median(x, epsilon=1.5, bound=10.0, mechanism=mechanism, rng=rng) for _ in range(draws)])
    assert got.min() >= 0.0 and got.max() <= 10.0
    knots = np.concatenate((d.lo, [d.bound]))
    edges = np.interp(np.linspace(0, 1, 13), d.cdf(knots), knots)  # 12 bins of probability 1/12 (cdf is linear
    edges[0], edges[-1] = 0.0, d.bound                               # between the knots), most inside intervals
    expected = np.diff(d.cdf(edges)) * draws
    np.testing.assert_allclose(expected, draws / 12, rtol=1e-9)
    observed = np.histogram(got, bins=edges)[0]
    assert observed.sum() == draws and expected.min() > 5
    assert chisquare(observed, expected).pvalue > 1e-3


def test_median_is_reproducible_and_never_a_record_value():
    x = [0.0, 0.0, 0.0]
    a = [median(x, epsilon=1.0, bound=3.0, rng=s) for s in range(50)]
    assert a == [median(x, epsilon=1.0, bound=3.0, rng=s) for s in range(50)]
    assert 0.0 not in a and len(set(a)) == 50  # a uniform value on [0, 3], not the record 0


def test_exact_helpers():
    from fractions import Fraction

    from dpselect.quantiles._median import _bernoulli, _uniform_float, _upper_lengths

    rng = np.random.default_rng(5)
    lo = np.sort(rng.random(2000) * 10.0 ** rng.integers(-8, 4, 2000))
    hi = lo + rng.random(2000) * 10.0 ** rng.integers(-12, 3, 2000)
    w = _upper_lengths(lo, hi)
    for a, b, c in zip(lo, hi, w):
        exact = Fraction(float(b)) - Fraction(float(a))
        assert Fraction(float(c)) >= exact and float(c) <= np.nextafter(float(b) - float(a), np.inf)
    assert np.any(w != hi - lo)  # some differences round down and are moved up one ulp

    class Scripted:  # a bit source returning the given 64-bit chunks
        def __init__(self, chunks):
            self.chunks = list(chunks)

        def bytes(self, k):
            assert k == 8
            return self.chunks.pop(0).to_bytes(8, "little")

    # all-zero bits: U < 2^-k for every k; the value is resolved only below the smallest subnormal
    src = Scripted([0] * 17)
    assert _uniform_float(0.0, 1.0, src) == 0.0 and src.chunks == []
    src = Scripted([2**63, 0])  # U ∈ [1/2, 1/2 + 2^-64]: 1.5 after one chunk
    assert _uniform_float(1.0, 2.0, src) == 1.5 and src.chunks == [0]
    # a one-ulp interval: the real value rounds to either end with probability 1/2 each
    lo1, hi1 = 1.0, float(np.nextafter(1.0, 2.0))
    vals = [_uniform_float(lo1, hi1, rng) for _ in range(2000)]
    assert set(vals) == {lo1, hi1} and abs(vals.count(lo1) - 1000) < 120
    # Bernoulli(p) exact: scripted comparisons and frequency
    assert _bernoulli(Fraction(1, 3), Scripted([0])) is True
    assert _bernoulli(Fraction(1, 3), Scripted([2**63])) is False
    assert _bernoulli(Fraction(1, 2), Scripted([2**63, 5])) is False  # tie on the first chunk, then U > p
    hits = sum(_bernoulli(Fraction(1, 3), rng) for _ in range(3000))
    assert abs(hits - 1000) < 100


def test_sensitivity_cache_is_not_aliased():
    gs = grouped_median_sensitivity([0.0, 2.0, 5.0], [1, 2, 1], 10.0)
    a = gs(0)
    a[:] = -1.0
    assert gs(0).tolist() == [6.0, 8.0, 5.0]
    g = grouped_database([0.0, 2.0, 5.0], 10.0, [1, 2, 1])
    assert g.sensitivity_function()(0).tolist() == [6.0, 8.0, 5.0]
    cached = g.delta(0)
    with pytest.raises(ValueError, match="read-only"):
        cached[0] = 0.0
    sf = median_sensitivity([0.0, 2.0, 2.0, 5.0], 10.0)
    b = sf(1)
    b[:] = 0.0
    assert sf(1).tolist() == [8.0, 8.0, 8.0, 8.0]


@pytest.mark.parametrize("module", ["dpselect.quantiles._median", "dpselect.utilities.median"])
def test_docstring_examples(module):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 5 and res.failed == 0


def test_thesis_figure17_small_run(tmp_path):
    import argparse

    from dpselect.experiments import thesis_figure17 as f17

    p = argparse.ArgumentParser()
    f17.add_arguments(p)
    args = p.parse_args(["--out", str(tmp_path), "--runs", "3", "--epsilons", "1,100", "--datasets", "hepth",
                         "--quiet"])
    assert f17.run(args) == 0
    import csv

    rows = list(csv.DictReader(open(tmp_path / "thesis-figure17.csv")))
    by = {(r["method"], float(r["epsilon"])): float(r["value"]) for r in rows if r["run"] == "0"}
    for eps in (1.0, 100.0):
        # the value-releasing median is exactly as computed by median_error, and far below the rank selection
        vals, counts, bound = histogram_groups(f17.load_histogram("hepth"))
        assert by[("interval", eps)] == pytest.approx(median_error(vals, epsilon=eps, bound=bound, counts=counts), rel=1e-12)
        assert by[("interval", eps)] < 0.1 * by[("LD", eps)]
    assert "interval" in (tmp_path / "thesis-figure17.md").read_text()
