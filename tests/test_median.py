"""Median selection (thesis Ch. 5): utility, exact element local sensitivity, grouping, mechanisms."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import dpselect
from dpselect.apps.median import (
    histogram_groups,
    histogram_to_database,
    median,
    median_error,
    median_probabilities,
)
from dpselect.utilities.median import (
    grouped_median_sensitivity,
    grouped_median_utility,
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
    vals, p_grouped = median_probabilities(x, eps, bound=bound, mechanism="local_dampening")
    p_rec = dpselect.local_dampening_probabilities(u, eps, sf)
    per_value = np.array([p_rec[x == v].sum() for v in vals])
    np.testing.assert_allclose(p_grouped, per_value, rtol=1e-12)
    p_em = dpselect.exponential_probabilities(u, eps, bound)
    _, g_em = median_probabilities(x, eps, bound=bound, mechanism="exponential")
    np.testing.assert_allclose(g_em, [p_em[x == v].sum() for v in vals], rtol=1e-12)
    p_pf = dpselect.permute_and_flip_probabilities(u, eps, bound)
    _, g_pf = median_probabilities(x, eps, bound=bound, mechanism="permute_and_flip")
    np.testing.assert_allclose(g_pf, [p_pf[x == v].sum() for v in vals], rtol=1e-9)
    p_sld = dpselect.shifted_local_dampening_probabilities(u, eps, sf.bounded(x.size), direction="decreasing")
    _, g_sld = median_probabilities(x, eps, bound=bound, mechanism="shifted_local_dampening")
    np.testing.assert_allclose(g_sld, [p_sld[x == v].sum() for v in vals], rtol=1e-12)
    # the counts form gives the same, in any order and with repeated values merged
    _, g_counts = median_probabilities([9.0, 0.0, 1.0, 4.0, 7.0, 1.0, 2.0], eps, bound=bound,
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
        p = dpselect.local_dampening_probabilities(median_utility(xs), eps, sf)
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


def test_median_sampler_matches_probabilities():
    x = np.array([0.0, 3.0, 3.0, 4.0, 6.0, 6.0, 6.0, 10.0])
    vals, p = median_probabilities(x, 1.5, bound=10.0)
    rng = np.random.default_rng(7)
    draws = [median(x, 1.5, bound=10.0, rng=rng) for _ in range(4000)]
    idx = np.array([d[0] for d in draws])
    got = np.array([d[1] for d in draws])
    assert np.all(np.sort(x)[idx] == got)
    counts = np.array([(got == v).sum() for v in vals])
    from scipy.stats import chisquare

    assert chisquare(counts, p * len(draws)).pvalue > 1e-3
    # within the selected value, the record is uniform: both 3.0 records appear
    assert set(idx[got == 3.0].tolist()) == {1, 2}


@pytest.mark.parametrize("mechanism", ["local_dampening", "shifted_local_dampening", "exponential", "permute_and_flip"])
def test_median_all_mechanisms_large_epsilon(mechanism):
    x = [5.0, 1.0, 9.0, 4.0, 7.0]
    i, v = median(x, 1e4, bound=10.0, mechanism=mechanism, rng=1)
    assert (i, v) == (2, 5.0)


def test_histogram_helpers_and_counts_path():
    h = np.array([3, 0, 2, 0, 1])
    assert histogram_to_database(h).tolist() == [0.0, 0.0, 0.0, 2.0, 2.0, 4.0]
    assert histogram_to_database(h, bound=1.0).tolist() == [0.0, 0.0, 0.0, 0.5, 0.5, 1.0]
    v, c, lam = histogram_groups(h)
    assert (v.tolist(), c.tolist(), lam) == ([0.0, 2.0, 4.0], [3, 2, 1], 4.0)
    e1 = median_error(histogram_to_database(h), 0.7, bound=lam)
    e2 = median_error(v, 0.7, bound=lam, counts=c)
    assert e1 == pytest.approx(e2, rel=1e-12)
    i, val = median(v, 1e4, bound=lam, counts=c, rng=0)
    assert val == 0.0 and 0 <= i < 3  # median of (0,0,0,2,2,4) is x_3 = 0


def test_large_database_never_expanded():
    # 30 million records in 4,096 groups: the grouped path works on the groups only
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 14_000, size=4096)
    vals = np.arange(4096.0)
    assert counts.sum() > 2.5e7
    sf = grouped_median_sensitivity(vals, counts, 4095.0)
    d0 = sf(0)
    assert d0.shape == (4096,) and np.all(d0 <= 4095.0) and np.all(d0 >= np.abs(vals - sf.grouped_database.median))
    i, v = median(vals, 1.0, bound=4095.0, counts=counts, rng=3)
    assert 0 <= i < counts.sum() and v == vals[np.searchsorted(np.cumsum(counts), i + 1)]


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(values=[], epsilon=1.0, bound=1.0), ValueError, "must not be empty"),
    (dict(values=[0.5, np.nan], epsilon=1.0, bound=1.0), ValueError, "finite"),
    (dict(values=[0.5, 2.0], epsilon=1.0, bound=1.0), ValueError, r"\[0, bound\]"),
    (dict(values=[-0.1], epsilon=1.0, bound=1.0), ValueError, r"\[0, bound\]"),
    (dict(values=[0.5], epsilon=1.0, bound=0.0), ValueError, "bound must be a finite number > 0"),
    (dict(values=[0.5], epsilon=-1.0, bound=1.0), ValueError, "epsilon must be a finite number > 0"),
    (dict(values=[0.5], epsilon=1.0, bound=1.0, mechanism="laplace"), ValueError, "mechanism must be one of"),
    (dict(values=[[0.5]], epsilon=1.0, bound=1.0), ValueError, "1-D"),
    (dict(values=["a"], epsilon=1.0, bound=1.0), TypeError, "real numbers"),
    (dict(values=[0.5, 0.7], epsilon=1.0, bound=1.0, counts=[1, 0]), ValueError, "counts must be > 0"),
    (dict(values=[0.5, 0.7], epsilon=1.0, bound=1.0, counts=[1]), ValueError, "one entry per value"),
])
def test_bad_input(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        median(**kwargs)


def test_bad_input_sensitivity():
    with pytest.raises(ValueError, match="sorted in ascending order"):
        median_sensitivity([2.0, 1.0], 3.0)
    with pytest.raises(ValueError, match="distinct"):
        grouped_median_sensitivity([1.0, 1.0], [1, 2], 3.0)
    with pytest.raises(ValueError, match=r"\[0, bound\]"):
        median_sensitivity([1.0, 4.0], 3.0)
    with pytest.raises(ValueError, match="hist counts must be >= 0"):
        histogram_groups([1, -1])


def test_shifted_local_dampening_distance_cap():
    from dpselect.apps.median import _prepare, _sensitivity

    # Large database: δ forced to Λ from a public distance on, so the shift stays cheap.
    v, p = median_probabilities([1.0, 2.0, 3.0], 1.0, bound=4.0, counts=[40_000, 3, 50_000],
                                mechanism="shifted_local_dampening", sld_distance=8)
    assert p.sum() == pytest.approx(1.0) and p.shape == (3,)
    # with the cap at n it is the plain bounded function
    x = np.array([0.0, 1.0, 1.0, 3.0, 4.0])
    g = _prepare(x, 4.0, None)
    u = g.utilities()
    sf = _sensitivity(g).bounded(g.n)
    ref = dpselect.shifted_local_dampening_probabilities(u, 1.0, sf, direction="decreasing",
                                                         weights=g.counts.astype(float))
    assert np.allclose(median_probabilities(x, 1.0, bound=4.0, mechanism="shifted_local_dampening",
                                            sld_distance=5)[1], ref)
    # the capped function is still admissible (any public cap >= 1 is)
    with pytest.raises(ValueError, match="sld_distance must be an int >= 1"):
        median([1.0, 2.0], 1.0, bound=3.0, mechanism="shifted_local_dampening", sld_distance=0)


def test_grouped_permute_and_flip_sampler_matches_per_record_distribution():
    # the grouped sampler (count as base measure = max of count exponential noises) against the exact
    # per-record permute-and-flip distribution summed per value
    from scipy.stats import chisquare

    x = np.array([0.0, 2.0, 2.0, 2.0, 3.0, 5.0, 5.0, 8.0])
    p_rec = dpselect.permute_and_flip_probabilities(median_utility(x), 1.0, 8.0)
    vals = np.unique(x)
    expected = np.array([p_rec[x == v].sum() for v in vals])
    rng = np.random.default_rng(11)
    got = np.array([median(x, 1.0, bound=8.0, mechanism="permute_and_flip", rng=rng)[1] for _ in range(3000)])
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
