"""dpselect.quantiles: the API, the three bounded methods, their exact laws and exact privacy audits."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

import dpselect
from dpselect.quantiles import median_distribution
from dpselect.quantiles import _api
from dpselect.quantiles._recursive import depth, recursive_quantiles, recursive_slots
from dpselect.quantiles._single import intervals, rank_probabilities, single_probabilities, target_twice


def _need(method):
    if method == "joint":
        pytest.importorskip("dpselect.quantiles._joint")


# ---------------------------------------------------------------------------------------------
# API, validation, accountant
# ---------------------------------------------------------------------------------------------
def test_quantile_half_is_the_median_same_seed_same_value():
    x = [5.0, 1.0, 9.0, 4.0, 7.0, 7.0, 0.0]
    for seed in range(6):
        a = dpselect.quantile(x, 0.5, epsilon=0.7, bounds=(0.0, 10.0), method="independent", rng=seed)
        b = dpselect.median(x, epsilon=0.7, bound=10.0, rng=seed)
        assert a == b
        # auto with one q is the median's law too
        assert dpselect.quantile(x, 0.5, epsilon=0.7, bounds=(0.0, 10.0), rng=seed) == b


def test_quantile_half_exact_law_is_the_median_distribution():
    x = np.array([0.0, 2.0, 2.0, 3.5, 7.0, 10.0])
    d = median_distribution(x, epsilon=1.3, bound=10.0)
    vals, cnt = _api._group(x, None)
    lo, hi, p = single_probabilities(vals, cnt, 0.0, 10.0, 0.5, 1.3)
    np.testing.assert_array_equal(lo, d.lo)
    np.testing.assert_array_equal(hi, d.hi)
    np.testing.assert_allclose(p, d.probabilities, rtol=1e-13)


def test_target_is_the_half_integer_grid():
    assert target_twice(0.5, 7) == 7 and target_twice(0.25, 10) == 5 and target_twice(0.1, 3) == 1
    assert target_twice(Fraction(1, 3), 9) == 6 and target_twice(0.0, 5) == 0 and target_twice(1.0, 5) == 10


@pytest.mark.parametrize("method", ["independent", "recursive", "joint"])
def test_grouped_equals_expanded_and_order_of_qs(method):
    _need(method)
    vals, cnt = np.array([1.0, 3.0, 4.0, 8.0]), np.array([3, 1, 2, 4])
    x = np.repeat(vals, cnt)[::-1].copy()
    qs = [0.9, 0.2, 0.5, 0.2]
    a = dpselect.quantiles(x, qs, epsilon=2.0, bounds=(0.0, 10.0), method=method, rng=11)
    b = dpselect.quantiles(vals[::-1], qs, counts=cnt[::-1], epsilon=2.0, bounds=(0.0, 10.0), method=method, rng=11)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4,) and a.dtype == np.float64 and a[1] == a[3]      # a repeated q: one release
    if method != "independent":
        assert a[1] <= a[2] <= a[0]                                         # sorted by construction


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(qs=[0.5, 1.5]), ValueError, r"qs must lie in \[0, 1\]: qs\[1\] = 1.5"),
    (dict(qs=[]), ValueError, "non-empty"),
    (dict(qs=[[0.5]]), ValueError, "1-D"),
    (dict(qs=[float("nan")]), ValueError, "qs"),
    (dict(bounds=(1.0, 1.0)), ValueError, "lo < hi"),
    (dict(bounds=(0.0, float("inf"))), ValueError, "finite"),
    (dict(bounds=3.0), TypeError, "pair"),
    (dict(bounds=(-1e308, 1e308)), ValueError, "width"),      # hi − lo overflows: refused before any charge
    (dict(method="jointexp"), ValueError, "method"),
    (dict(counts=[1, -1, 1]), ValueError, "counts"),
    (dict(counts=[1, 2.5, 1]), TypeError, "integers"),
    (dict(counts=[2 ** 48, 2 ** 48, 1]), ValueError, "2\\*\\*49"),
    (dict(counts=[1, 2]), ValueError, "counts"),
    (dict(values=[1.0, float("nan"), 2.0]), ValueError, "values"),
    (dict(accountant="budget"), TypeError, "accountant"),
])
def test_bad_arguments_are_refused_before_any_draw(kwargs, exc, match):
    args = dict(values=[1.0, 9.0, 4.0], qs=[0.25, 0.75], epsilon=1.0, bounds=(0.0, 10.0), method="recursive")
    args.update(kwargs)
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    with pytest.raises(exc, match=match):
        dpselect.quantiles(args.pop("values"), args.pop("qs"), rng=gen, **args)
    assert gen.bit_generator.state == state


def test_quantile_takes_one_q():
    with pytest.raises(TypeError, match="one number"):
        dpselect.quantile([1.0, 2.0], [0.5], epsilon=1.0, bounds=(0.0, 3.0))


@pytest.mark.parametrize("method, guarantee", [
    ("independent", dpselect.accounting.composition.BoundedRangeComposition(0.25, 4)),
    ("recursive", dpselect.accounting.composition.AdaptiveBoundedRangeComposition(0.2, 5)),
    ("joint", dpselect.accounting.BoundedRange(1.0)),
])
def test_accountant_charged_once_and_refusal_draws_nothing(method, guarantee):
    _need(method)
    x = [1.0, 2.0, 5.0, 6.0, 9.0]
    qs = [0.2, 0.4, 0.6, 0.8]
    acc = dpselect.Accountant(epsilon=1.0, neighbours="replace_one")
    dpselect.quantiles(x, qs, epsilon=1.0, bounds=(0.0, 10.0), method=method, rng=0, accountant=acc)
    assert len(acc.history) == 1 and acc.history[0].label == "quantiles"
    g = acc.history[0].guarantee
    assert type(g) is type(guarantee) and g.epsilon(0.0) <= 1.0
    assert repr(g).split("(")[0] == repr(guarantee).split("(")[0]
    assert g.epsilon(0.0) == pytest.approx(1.0)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(dpselect.BudgetExceededError):
        dpselect.quantiles(x, qs, epsilon=0.5, bounds=(0.0, 10.0), method=method, rng=gen, accountant=acc)
    assert gen.bit_generator.state == state and len(acc.history) == 1


def test_privacy_values():
    assert _api.quantiles_privacy(3, epsilon=1.0, method="recursive").k == 3      # L = 2 levels: 2L − 1 = 3
    assert [depth(m) for m in (1, 2, 3, 4, 7, 8, 9, 99)] == [1, 2, 2, 3, 3, 4, 4, 7]
    assert recursive_slots(99) == 13
    assert _api.quantiles_privacy(9, epsilon=0.9, method="independent").epsilon0 == pytest.approx(0.1)
    with pytest.raises(ValueError, match="method"):
        _api.quantiles_privacy(3, epsilon=1.0, method="auto")


def test_auto_rule_reads_only_m_epsilon_and_n():
    assert _api._resolve("auto", 1, 10 ** 9, 0.01) == "independent"
    assert _api._resolve("auto", 9, 347_414, 0.1) == "recursive"          # ε·n/m = 3,860
    assert _api._resolve("auto", 9, 347_414, 1.0) == "independent"        # 38,602
    assert _api._resolve("auto", 99, 27_948_226, 0.01) == "recursive"     # 2,823
    assert _api._resolve("auto", 2, 10_000, 1.0) == "independent"         # 5,000: the threshold
    assert _api._resolve("joint", 2, 10, 1.0) == "joint"
    # the same public (m, ε, n) gives the same method whatever the counts, and the charge says which
    for cnt in ([1000, 0, 9000], [5000, 5000, 0]):
        acc = dpselect.Accountant(epsilon=10.0, neighbours="replace_one")
        dpselect.quantiles([1.0, 2.0, 3.0], [0.2, 0.8], counts=cnt, epsilon=1.0, bounds=(0.0, 4.0), rng=0,
                           accountant=acc)
        assert type(acc.history[-1].guarantee).__name__ == "BoundedRangeComposition"
        acc = dpselect.Accountant(epsilon=10.0, neighbours="replace_one")
        dpselect.quantiles([1.0, 2.0, 3.0], [0.2, 0.8], counts=cnt, epsilon=0.5, bounds=(0.0, 4.0), rng=0,
                           accountant=acc)
        assert type(acc.history[-1].guarantee).__name__ == "AdaptiveBoundedRangeComposition"


def test_empty_bins_are_allowed_and_change_nothing():
    vals = np.arange(6, dtype=float)
    cnt = np.array([0, 3, 0, 2, 5, 0])
    a = dpselect.quantiles(vals, [0.3, 0.7], counts=cnt, epsilon=1.0, bounds=(0.0, 6.0), method="joint", rng=4)
    b = dpselect.quantiles(vals[cnt > 0], [0.3, 0.7], counts=cnt[cnt > 0], epsilon=1.0, bounds=(0.0, 6.0),
                           method="joint", rng=4)
    np.testing.assert_array_equal(a, b)


def test_unbounded_dispatch():
    v = dpselect.quantiles([1.0, 2.0, 3.0] * 20, [0.5], epsilon=1.0, rng=0)
    assert v.shape == (1,) and np.isfinite(v).all()


def test_histogram_of_a_billion_records_is_fast():
    import time
    cnt = np.full(4096, 250_000, dtype=np.int64)       # 1.024e9 records
    vals = np.arange(4096, dtype=np.float64)
    t = time.perf_counter()
    for method in ("independent", "recursive"):
        v = dpselect.quantiles(vals, [0.1, 0.5, 0.9], counts=cnt, epsilon=1.0, bounds=(0.0, 4096.0),
                               method=method, rng=0)
        np.testing.assert_allclose(v, [409.6, 2048.0, 3686.4], atol=2.0)
    assert time.perf_counter() - t < 5.0      # milliseconds in practice; loose for a loaded machine


# ---------------------------------------------------------------------------------------------
# independent: χ² of the sampler against its exact law
# ---------------------------------------------------------------------------------------------
def test_independent_sampler_chi_square():
    x = np.array([1.0, 2.0, 2.0, 4.0, 6.0, 7.0])
    vals, cnt = _api._group(x, None)
    eps = 1.2
    lo, hi, p = single_probabilities(vals, cnt, 0.0, 8.0, 0.25, eps / 2)   # two qs: ε/2 each
    rng = np.random.default_rng(2024)
    draws = np.array([dpselect.quantiles(x, [0.25, 0.75], epsilon=eps, bounds=(0.0, 8.0), method="independent",
                                         rng=rng)[0] for _ in range(1500)])
    counts = np.array([((draws >= a) & (draws < b)).sum() for a, b in zip(lo, hi)])
    counts[-1] += int((draws == 8.0).sum())
    assert counts.sum() == draws.size
    assert chisquare(counts, p * draws.size).pvalue > 1e-3


# ---------------------------------------------------------------------------------------------
# recursive: exact audit of the output density on a tiny universe
# ---------------------------------------------------------------------------------------------
def _log_density(vals, cnt, a, b, T, eps0, points):
    """log of the single release's density (target rank T/2) at ``points`` (inside [a, b]), from its exact law."""
    lo, hi, p = rank_probabilities(vals, cnt, a, b, T, eps0)
    j = np.clip(np.searchsorted(lo, points, side="right") - 1, 0, lo.size - 1)
    return np.log(p[j]) - np.log(hi[j] - lo[j])


def _recursive_log_densities(x, eps0, grid, bounds=(0.0, 4.0), qs=(0.25, 0.5, 0.75), anchored=True):
    """For m = 3: log f(v_mid) and, per v_mid in the grid, the best/worst joint log-densities are built
    from f_mid(v) + f_left(w | v) + f_right(z | v) on the grid (w < v < z). The left subproblem (lower end
    lo) targets the absolute rank q_0·n, the right one (upper end hi) the rank n_R − (1 − q_2)·n within it
    (``anchored=False``: the paper's relative targets q_0/p·n_L and (q_2 − p)/(1 − p)·n_R)."""
    vals, cnt = _api._group(np.asarray(x, dtype=float), None)
    n = int(cnt.sum())
    a, b = bounds
    qs = [Fraction(q) for q in qs]
    p = qs[1]
    mid = _log_density(vals, cnt, a, b, target_twice(p, n), eps0, grid)
    out = []
    for i, v in enumerate(grid):
        cut = int(np.searchsorted(vals, v, side="right"))
        left_pts, right_pts = grid[grid < v], grid[grid > v]
        n_l, n_r = int(cnt[:cut].sum()), int(cnt[cut:].sum())
        if anchored:
            t_l = round(2 * qs[0] * n)
            t_r = 2 * n_r - (2 * n - round(2 * qs[2] * n))
        else:
            t_l, t_r = round(2 * qs[0] / p * n_l), round(2 * (qs[2] - p) / (1 - p) * n_r)
        fl = _log_density(vals[:cut], cnt[:cut], a, v, t_l, eps0, left_pts)
        fr = _log_density(vals[cut:], cnt[cut:], v, b, t_r, eps0, right_pts)
        out.append((mid[i], fl, fr))
    return out


def _recursive_audit(eps0, n=3, universe=(0.0, 1.0, 2.0, 3.0), qs=(0.25, 0.5, 0.75), anchored=True):
    grid = np.array([k + f for k in range(4) for f in (0.1, 0.5, 0.9)])
    datasets = list(itertools.product(universe, repeat=n))
    dens = {d: _recursive_log_densities(d, eps0, grid, qs=qs, anchored=anchored) for d in datasets}
    worst = 0.0
    for x in datasets:
        for k in range(n):
            for v in universe:
                if v == x[k]:
                    continue
                y = x[:k] + (v,) + x[k + 1:]
                for (mx, lx, rx), (my, ly, ry) in zip(dens[x], dens[y]):
                    dl, dr = lx - ly, rx - ry
                    hi = (mx - my) + (dl.max() if dl.size else 0.0) + (dr.max() if dr.size else 0.0)
                    lo = (mx - my) + (dl.min() if dl.size else 0.0) + (dr.min() if dr.size else 0.0)
                    worst = max(worst, abs(hi), abs(lo))
    return worst


@pytest.mark.parametrize("qs", [(0.25, 0.5, 0.75), (0.2, 0.3, 0.9)])
def test_recursive_exact_audit_replace_one(qs):
    eps = 1.0
    # the claimed budget: ε/(2L − 1) per release, L = 2 levels for m = 3 (every replace-one pair of
    # 3 records on {0, 1, 2, 3}, bounds (0, 4), the joint density of the 3 releases on a grid)
    worst = _recursive_audit(eps / recursive_slots(3), qs=qs)
    assert worst <= eps + 1e-9
    assert worst > 0.3 * eps
    # the audit is not vacuous: without the split of ε it fails
    assert _recursive_audit(eps, qs=qs) > eps + 0.04


def test_recursive_targets_have_sensitivity_one_under_add_remove():
    """The privacy argument of the recursive method, per subproblem kind: adding one record to a subproblem
    (n public and fixed) moves every point's rank r in it by 0 or 1 and n_S by 1; |rank − T/2| moves by
    at most 1 for the leftmost, rightmost and middle targets. Exhaustive over small cases."""
    from dpselect.quantiles._recursive import subproblem_target
    grid = [Fraction(i, 12) for i in range(13)]
    worst = 0
    for n in range(1, 9):
        for pa, q, pb in itertools.combinations(grid, 3):
            for n_s in range(0, n):
                for kind in ((True, False), (False, True), (False, False)):
                    t0 = subproblem_target(q, pa, pb, n, n_s, *kind)
                    t1 = subproblem_target(q, pa, pb, n, n_s + 1, *kind)
                    for r in range(n_s + 1):
                        for r1 in (r, r + 1):
                            worst = max(worst, abs(abs(2 * r1 - t1) - abs(2 * r - t0)))
    assert worst == 2            # |Δ(rank − T/2)| <= 1, attained
    # the three formulas on one case each (q = 1/2, n = 8, n_S = 5, ends at 1/4 and 1)
    assert subproblem_target(Fraction(1, 2), Fraction(0), Fraction(1), 8, 5, True, False) == 8        # 2qn
    assert subproblem_target(Fraction(1, 2), Fraction(1, 4), Fraction(1), 8, 5, False, True) == 10 - 16 + 8
    assert subproblem_target(Fraction(1, 2), Fraction(1, 4), Fraction(3, 4), 8, 5, False, False) == 5  # 2·5/2


def test_recursive_sampler_chi_square():
    # m = 3: the middle release's law, and the left release's law given the middle's interval
    x = np.array([1.0, 1.0, 2.0, 3.0, 5.0, 6.0, 6.0, 7.0])
    vals, cnt = _api._group(x, None)
    eps = 3.0
    e0 = eps / 3
    lo, hi, p = single_probabilities(vals, cnt, 0.0, 8.0, 0.5, e0)
    rng = np.random.default_rng(99)
    draws = np.array([recursive_quantiles(vals, cnt, np.array([0.25, 0.5, 0.75]), epsilon=eps, lo=0.0, hi=8.0,
                                          gen=rng) for _ in range(1500)])
    assert np.all(np.diff(draws, axis=1) >= 0)
    mid = draws[:, 1]
    counts = np.array([((mid >= a) & (mid < b)).sum() for a, b in zip(lo, hi)])
    counts[-1] += int((mid == 8.0).sum())
    assert chisquare(counts, p * mid.size).pvalue > 1e-3
    # given the middle value in [3, 5): the left subproblem is (1, 1, 2, 3) on [0, v], target rank
    # 0.25·8 = 2 (absolute: its lower end is the domain's)
    sel = (mid >= 3.0) & (mid < 5.0)
    left = draws[sel, 0]
    # its law up to 3 does not depend on v: intervals [0,1), [1,2), [2,3) and [3, v) (length varies)
    w = np.array([math.exp(-e0 * abs(r - 2) / 2) for r in (0, 2, 3)])      # ranks 0, 2, 3; lengths 1
    got = np.array([((left >= a) & (left < a + 1)).sum() for a in (0.0, 1.0, 2.0)])
    # conditional on landing below 3 the three unit intervals have probabilities ∝ w
    assert chisquare(got, w / w.sum() * got.sum()).pvalue > 1e-3


def _best_hits(qs, eps0, draws, anchored, seed):
    vals, cnt = np.array([1.0, 2.0, 3.0]), np.array([5, 1, 1])
    rng = np.random.default_rng(seed)
    out = np.array([recursive_quantiles(vals, cnt, np.array(qs), epsilon=1.0, lo=0.0, hi=4.0, gen=rng, eps0=eps0,
                                        anchored=anchored) for _ in range(draws)])
    # the per-quantile best intervals on [0, 4]: q = 0.3 (rank 2.1 -> target 2): [0, 1) (rank 0);
    # q = 0.7 (rank 4.9 -> target 5): [1, 2) (rank 5)
    return int(np.sum(out[:, 0] < 1.0)), int(np.sum((out[:, 2] >= 1.0) & (out[:, 2] < 2.0)))


def _child_best_probability(vals, cnt, lo, hi, qs, eps0, side, anchored=True):
    """m = 3, exactly: P(the release of qs[0] (side="left") or qs[2] ("right") lies in the interval of
    [lo, hi] whose rank is closest to q·n), integrating the child's law over the middle release."""
    n = int(cnt.sum())
    q0, p, q2 = (Fraction(q) for q in qs)
    q = q0 if side == "left" else q2
    full = intervals(vals, cnt, lo, hi, target_twice(q, n))
    best = int(np.argmax(full.utility))
    assert np.sum(full.utility == full.utility[best]) == 1, "the best interval must be unique"
    blo, bhi = full.lo[best], full.hi[best]
    mlo, mhi, pm = rank_probabilities(vals, cnt, lo, hi, target_twice(p, n), eps0)
    total = 0.0
    for c, d, pj in zip(mlo, mhi, pm):
        cut = int(np.searchsorted(vals, c, side="right"))        # records <= v for every v in [c, d)
        sv, sc = (vals[:cut], cnt[:cut]) if side == "left" else (vals[cut:], cnt[cut:])
        n_s = int(sc.sum())
        if side == "left":
            T = target_twice(q, n) if anchored else target_twice(q / p, n_s)
            iv = intervals(sv, sc, lo, d, T)         # the subproblem on [lo, v]: its last interval is [c, v)
            var = iv.lo == c
        else:
            T = 2 * n_s - 2 * n + target_twice(q, n) if anchored else target_twice((q - p) / (1 - p), n_s)
            iv = intervals(sv, sc, c, hi, T)         # on [v, hi]: its first interval is [v, d)
            var = iv.hi == d
        logw = eps0 * iv.utility / 2.0
        logw -= logw.max()
        w = np.exp(logw)                              # per unit length
        fixed = ~var
        F = float(np.sum(w[fixed] * (iv.hi[fixed] - iv.lo[fixed])))
        W = float(w[var].sum())
        D = d - c                                     # the varying interval's length s is uniform on (0, D)
        inb = fixed & (iv.lo >= blo) & (iv.hi <= bhi)
        A = float(np.sum(w[inb] * (iv.hi[inb] - iv.lo[inb])))
        var_in_best = bool(var.any()) and blo <= c and d <= bhi
        if F == 0.0:
            pb = 1.0 if var_in_best else 0.0
        else:
            ln = math.log1p(W * D / F)
            pb = (A / (W * D) * ln) if W > 0 else A / F
            if var_in_best:
                pb += 1.0 - F / (W * D) * ln
        total += pj * pb
    return total


def test_recursive_outer_quantiles_are_not_dragged_by_an_atom():
    """Atoms: the middle release cannot sit at rank n/2 (ranks 0, 5, 6, 7 on 7 records), it sits at rank 5.
    The paper's relative target for q = 0.3 in the left half (5 records) is 0.3/0.5·5 = 3 (rank 5 is as
    close as rank 0), so it inherits the middle's error; the absolute target 0.3·7 -> 2 picks [0, 1).
    As ε grows the outer releases land in the per-quantile best interval with probability -> 1 (exact law,
    integrated over the middle release), and with the old targets with probability -> 0."""
    vals, cnt = np.array([1.0, 2.0, 3.0]), np.array([5, 1, 1])
    qs = (0.3, 0.5, 0.7)

    def prob(eps0, side, anchored=True):
        return _child_best_probability(vals, cnt, 0.0, 4.0, qs, eps0, side, anchored)

    for side in ("left", "right"):
        ps = [prob(e, side) for e in (5.0, 10.0, 20.0, 40.0)]
        assert all(a < b for a, b in zip(ps, ps[1:])) and ps[-1] > 1 - 1e-7
        assert prob(20.0, side) > 0.999 and prob(20.0, side, anchored=False) < 1e-3
    # the sampler follows that law (ε0 = 4: both outcomes frequent enough to test)
    from scipy.stats import binomtest
    draws = 600
    for anchored, seed in ((True, 7), (False, 8)):
        hits = _best_hits(qs, 4.0, draws, anchored, seed)
        for h, side in zip(hits, ("left", "right")):
            assert binomtest(h, draws, prob(4.0, side, anchored)).pvalue > 1e-3
    hits = _best_hits(qs, 20.0, 200, True, 9)
    assert min(hits) >= 199          # seeded; expected misses 0.005 (left) and 0.1 (right)


# ---------------------------------------------------------------------------------------------
# joint: the utility, its sensitivity, the exact law, audits and the sampler
# ---------------------------------------------------------------------------------------------
def _joint_utility2(x, o, qs, lo, hi):
    """2·u(o) straight from the definition: −Σ |#{x in [o_(i−1), o_i)} − g_i| (last gap closed at hi)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    T = [0] + [target_twice(q, n) for q in qs] + [2 * n]
    ends = [lo] + list(o) + [hi]
    total = 0
    for i in range(len(ends) - 1):
        a, b = ends[i], ends[i + 1]
        c = int(((x >= a) & (x <= b)).sum()) if i == len(ends) - 2 else int(((x >= a) & (x < b)).sum())
        total += abs(2 * c - (T[i + 1] - T[i]))
    return -total


def _joint_brute_law(x, qs, eps, lo, hi, sens=2.0, factorial=True):
    """Every path of intervals with its exact probability ∝ exp(ε·u/(2Δu))·∏ len^c / c!, by enumeration."""
    vals, cnt = _api._group(np.asarray(x, dtype=float), None)
    from dpselect.quantiles._single import intervals
    iv = intervals(vals, cnt, lo, hi, 0)
    paths, logw = [], []
    for path in itertools.combinations_with_replacement(range(iv.lo.size), len(qs)):
        mids = [(iv.lo[a] + iv.hi[a]) / 2 for a in path]      # u is constant on the path's cells
        lw = eps / (2 * sens) * _joint_utility2(x, mids, qs, lo, hi) / 2
        for j in set(path):
            c = path.count(j)
            lw += c * math.log(iv.hi[j] - iv.lo[j]) - (math.lgamma(c + 1) if factorial else 0.0)
        paths.append(path)
        logw.append(lw)
    logw = np.array(logw)
    top = logw.max()
    log_z = top + math.log(np.exp(logw - top).sum())
    return paths, np.exp(logw - log_z), iv, log_z


_UNIVERSE = (0.0, 1.0, 2.0, 3.0)
_GRID = np.array([0.5, 1.5, 2.5, 3.5])      # u is constant on each cell between the integers: complete


def _neighbours(n):
    for x in itertools.product(_UNIVERSE, repeat=n):
        for k in range(n):
            for v in _UNIVERSE:
                if v != x[k]:
                    yield x, x[:k] + (v,) + x[k + 1:]


def test_joint_utility_sensitivity_is_two_by_brute_force():
    qs = (0.3, 0.6)
    outs = [o for o in itertools.combinations_with_replacement(_GRID, 2)]
    worst = 0
    for x, y in _neighbours(3):
        for o in outs:
            worst = max(worst, abs(_joint_utility2(x, o, qs, 0.0, 4.0) - _joint_utility2(y, o, qs, 0.0, 4.0)))
    assert worst == 4          # 2·Δu: Δu = 2, attained


def _joint_audit(eps, sens, qs=(0.3, 0.6), n=3):
    outs = list(itertools.combinations_with_replacement(_GRID, len(qs)))
    cache = {}

    def logf(x):
        if x not in cache:
            _, _, _, log_z = _joint_brute_law(x, qs, eps, 0.0, 4.0, sens=sens)
            cache[x] = np.array([eps / (2 * sens) * _joint_utility2(x, o, qs, 0.0, 4.0) / 2 - log_z for o in outs])
        return cache[x]

    worst = 0.0
    for x, y in _neighbours(n):
        worst = max(worst, float(np.max(np.abs(logf(x) - logf(y)))))
    return worst


def test_joint_exact_audit_density_against_epsilon():
    eps = 1.0
    worst = _joint_audit(eps, 2.0)
    assert worst <= eps + 1e-9 and worst > 0.5 * eps
    assert _joint_audit(eps, 1.0) > eps + 0.05          # halving Δu breaks the guarantee


def test_joint_dp_normaliser_matches_enumeration():
    from dpselect.quantiles._joint import _Problem
    x = np.array([1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 6.0])
    for qs in ([0.2, 0.5, 0.8], [0.0, 0.5, 1.0], [0.1, 0.15]):
        _, _, _, log_z = _joint_brute_law(x, qs, 1.5, 0.0, 10.0)
        vals, cnt = _api._group(x, None)
        P = _Problem(vals, cnt, np.array(qs), 1.5, 0.0, 10.0)
        assert P.L_hat == pytest.approx(log_z, rel=1e-12, abs=1e-12)
        assert 0 < P.Delta < 1e-6


def _joint_chi2(x, qs, eps, draws, factorial=True, force_exact=False, seed=0):
    from dpselect.quantiles import _joint
    paths, p, iv, _ = _joint_brute_law(x, qs, eps, 0.0, 10.0)
    vals, cnt = _api._group(np.asarray(x), None)
    P = _joint._Problem(vals, cnt, np.array(qs), eps, 0.0, 10.0, factorial=factorial)
    index = {path: i for i, path in enumerate(paths)}
    counts = np.zeros(len(paths))
    rng = np.random.default_rng(seed)
    old = _joint._FORCE_EXACT
    _joint._FORCE_EXACT = force_exact
    try:
        for _ in range(draws):
            o = P.sample(rng)
            assert np.all(np.diff(o) >= 0)
            counts[index[tuple(int(np.searchsorted(iv.lo, v, side="right") - 1) for v in o)]] += 1
    finally:
        _joint._FORCE_EXACT = old
    big = p * draws >= 5
    exp_ = np.append(p[big] * draws, p[~big].sum() * draws)
    obs = np.append(counts[big], counts[~big].sum())
    return chisquare(obs, exp_).pvalue


def test_joint_sampler_chi_square_and_the_order_statistic_volume():
    x = [4.0, 5.0, 5.0]                      # intervals [0, 4), [4, 5), [5, 10]: several outputs per interval
    qs = [0.1, 0.5, 0.9]
    assert _joint_chi2(x, qs, 0.8, 1500) > 1e-3
    assert _joint_chi2(x, qs, 0.8, 200, force_exact=True, seed=1) > 1e-3     # the decimal acceptance path
    assert _joint_chi2(x, qs, 0.8, 1500, factorial=False) < 1e-6            # without 1/c! the law is wrong


def test_joint_with_one_quantile_is_the_interval_mechanism():
    # m = 1: u = −2|R − τ|, so exp(ε·u/4) = exp(−ε|R − τ|/2): the median's law
    x = [1.0, 2.0, 2.0, 7.0, 9.0]
    for q in (0.5, 0.2):
        paths, p, iv, _ = _joint_brute_law(x, [q], 1.1, 0.0, 10.0)
        vals, cnt = _api._group(np.asarray(x), None)
        _, _, p1 = single_probabilities(vals, cnt, 0.0, 10.0, q, 1.1)
        np.testing.assert_allclose(p, p1, rtol=1e-12)


def test_positional_epsilon_is_refused():
    with pytest.raises(TypeError):
        dpselect.quantiles([1.0, 2.0], [0.5], 1.0)


def test_joint_mode_on_atoms_is_not_the_per_quantile_optimum():
    """docs/quantiles.md's worked example: 20 records, counts (4, 3, 11, 2) on {1, 2, 3, 4}, q = (1/4, 3/4),
    target ranks 5 and 15. Attainable ranks 0, 4, 7, 18, 20. Per quantile: 4 (error −1) and 18 (+3). JointExp
    scores a path by its gap errors |e_1| + |e_2 − e_1| + |e_2|: (4, 18) costs 1 + 4 + 3 = 8, (7, 18) costs
    2 + 1 + 3 = 6, so as ε grows it puts q = 1/4 at rank 7 (error 2), with probability -> 1."""
    _need("joint")
    vals, cnt = np.array([1.0, 2.0, 3.0, 4.0]), np.array([4, 3, 11, 2])
    x = np.repeat(vals, cnt)
    qs = [0.25, 0.75]
    assert -_joint_utility2(x, (2.5, 3.5), qs, 0.0, 5.0) == 2 * 6
    assert -_joint_utility2(x, (1.5, 3.5), qs, 0.0, 5.0) == 2 * 8
    paths, p, iv, _ = _joint_brute_law(x, qs, 40.0, 0.0, 5.0)
    # intervals [0,1) [1,2) [2,3) [3,4) [4,5]: the mode is (2, 3); the per-quantile optimum (1, 3) has
    # relative weight e^(−40·2/4) = e^(−20) (same lengths, one output per interval)
    pr = dict(zip(paths, p))
    assert pr[(2, 3)] > 1 - 1e-8
    assert pr[(1, 3)] / pr[(2, 3)] == pytest.approx(math.exp(-20.0), rel=1e-9)
    v = dpselect.quantiles(vals, qs, counts=cnt, epsilon=40.0, bounds=(0.0, 5.0), method="joint", rng=1)
    assert 2.0 <= v[0] < 3.0 and 3.0 <= v[1] < 4.0
    w = dpselect.quantiles(vals, qs, counts=cnt, epsilon=40.0, bounds=(0.0, 5.0), method="independent", rng=1)
    assert 1.0 <= w[0] < 2.0 and 3.0 <= w[1] < 4.0


def test_joint_floor_is_a_plateau_of_its_utility():
    """Issue 36 item 3: why JointExp's error stops falling with ε on data with an atom at an end (NETTRACE,
    MEDCOST, ADULTFRANK, INCOME in results/quantiles: the same excess at ε = 0.1 and 1). 10 records, 6 on 0 and
    one on each of 1..4, bounds (0, 5), q = (0.3, 0.6): target ranks 3 and 6. Every output counts the atom
    (rank 0 is not attainable), so e_1 = rank(o_1) − 3 >= 3; for e_1 >= e_2 >= 0 the gap utility is
    −(e_1 + (e_1 − e_2) + e_2) = −2·e_1 whatever e_2: o_2 in bin 0 (the per-quantile optimum, e_2 = 0) and in
    bins 1, 2, 3 (e_2 = 1, 2, 3) tie. As ε grows the law concentrates on that plateau and spreads over it by
    volume, not on the optimum: P(o_2 in bin 0) -> (1/2)/(1/2 + 1 + 1 + 1) = 1/7 (o_1 <= o_2 in one unit
    interval: volume 1/2), and the excess of q = 0.6 tends to (1 + 2 + 3)/(7/2) = 12/7 records at every large
    ε. Documented, not fixed: it is the mechanism's utility (docs/quantiles.md)."""
    _need("joint")
    x = [0.0] * 6 + [1.0, 2.0, 3.0, 4.0]
    qs = (0.3, 0.6)
    for o2, u2 in ((0.5, -12), (1.5, -12), (2.5, -12), (3.5, -12), (4.5, -16)):
        assert _joint_utility2(x, (0.25, o2), qs, 0.0, 5.0) == u2          # 2·u: the plateau, then off it
    share = {}
    for eps in (40.0, 400.0):
        paths, p, iv, _ = _joint_brute_law(x, qs, eps, 0.0, 5.0)
        bin_of = np.floor(iv.lo).astype(int)
        law2 = np.zeros(5)
        for path, pr in zip(paths, p):
            law2[bin_of[path[1]]] += pr
        share[eps] = law2
        assert law2[0] == pytest.approx(1 / 7, rel=1e-6) and law2[1:4] == pytest.approx([2 / 7] * 3, rel=1e-6)
        assert float(np.dot(law2, [0, 1, 2, 3, 4])) == pytest.approx(12 / 7, rel=1e-6)   # excess in records
    assert share[40.0] == pytest.approx(share[400.0], abs=1e-8)                  # flat in ε
    # the independent method at the same ε concentrates on the optimum
    w = dpselect.quantiles(x, qs, epsilon=400.0, bounds=(0.0, 5.0), method="independent", rng=0)
    assert 0.0 <= w[1] < 1.0
