"""Exact audits of the quantile releases on a tiny universe, shared by tests/test_quantiles_default.py and
tests/test_quantiles_relative.py: records on {0, 1, 2, 3}, the grid of those four values or (interval
mechanism, bounds (0, 4)) twelve interior points, every neighbouring pair of small datasets, and the worst
|log ratio| of the whole release's exact law over them."""
import itertools

import numpy as np

from dpselect.quantiles import _api
from dpselect.quantiles._recursive import recursive_log_law

__all__ = ["UNIVERSE", "CANDS", "POINTS", "grouped", "log_law", "replace_one_pairs", "add_remove_pairs", "audit"]

UNIVERSE = (0.0, 1.0, 2.0, 3.0)
CANDS = np.array(UNIVERSE)
POINTS = np.array([k + f for k in range(4) for f in (0.1, 0.5, 0.9)])


def grouped(x):
    """(distinct sorted values, their counts) as the library groups records."""
    return _api._group(np.asarray(x, dtype=float), None)


def log_law(x, qs, out, epsilon, *, grid, targets, add_remove=False, utility="window", eps0=None):
    """log P (grid) or log density (interval, bounds (0, 4)) of the recursion releasing ``out`` on records x."""
    vals, cnt = grouped(x)
    dom = (CANDS, 0, CANDS.size - 1, False, utility) if grid else (0.0, 4.0)
    return recursive_log_law(vals, cnt, np.asarray(qs, dtype=float), np.asarray(out, dtype=float),
                             epsilon=epsilon, domain=dom, grid=grid, targets=targets, add_remove=add_remove,
                             eps0=eps0)


def replace_one_pairs(n):
    """(D, D') for every multiset D of n records on the universe and every replacement of one record."""
    for x in itertools.combinations_with_replacement(UNIVERSE, n):
        for k in range(n):
            for v in UNIVERSE:
                if v != x[k]:
                    yield x, tuple(sorted(x[:k] + (v,) + x[k + 1:]))


def add_remove_pairs(max_n):
    """(D, D plus one record) for every multiset D of 1..max_n − 1 records on the universe."""
    for n in range(1, max_n):
        for x in itertools.combinations_with_replacement(UNIVERSE, n):
            for v in UNIVERSE:
                yield x, tuple(sorted(x + (v,)))


def audit(qs, epsilon, *, grid, targets, pairs, add_remove=False, utility="window", eps0=None):
    """The worst |log ratio| of the whole release's exact law over ``pairs``: every sorted output of the grid
    (grid; the law must sum to 1) or every strictly increasing output on POINTS (interval)."""
    m = len(qs)
    if grid:
        outs = [o for o in itertools.product(UNIVERSE, repeat=m) if all(a <= b for a, b in zip(o, o[1:]))]
    else:
        outs = list(itertools.combinations(POINTS, m))
    cache = {}

    def lp(d):
        if d not in cache:
            cache[d] = np.array([log_law(d, qs, o, epsilon, grid=grid, targets=targets, add_remove=add_remove,
                                         utility=utility, eps0=eps0) for o in outs])
            assert np.isfinite(cache[d]).all()
            if grid:
                assert abs(np.logaddexp.reduce(cache[d])) < 1e-9
        return cache[d]

    return max(float(np.max(np.abs(lp(x) - lp(y)))) for x, y in pairs)
