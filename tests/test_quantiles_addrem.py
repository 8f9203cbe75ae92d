"""neighbours="add_remove" for dpselect.quantiles: exact audits on add/remove pairs (D and D plus one record),
the refusals, the guarantees and the unchanged replace-one default."""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

import dpselect
from dpselect.accounting.composition import AdaptiveBoundedRangeComposition
from dpselect.quantiles import _api
from dpselect.quantiles._grid import grid_probabilities
from dpselect.quantiles._recursive import recursive_grid_quantiles, recursive_quantiles
from dpselect.quantiles._single import target_twice

from test_quantiles import _joint_utility2, _log_density

_UNIVERSE = (0.0, 1.0, 2.0, 3.0)
_CANDS = np.array([0.0, 1.0, 2.0, 3.0])


def _add_remove_pairs(max_n):
    """(D, D plus one record) for every multiset D of 1..max_n − 1 records on the universe (sorted tuples)."""
    for n in range(1, max_n):
        for x in itertools.combinations_with_replacement(_UNIVERSE, n):
            for v in _UNIVERSE:
                yield x, tuple(sorted(x + (v,)))


def _grouped(x):
    return _api._group(np.asarray(x, dtype=float), None)


# ---------------------------------------------------------------------------------------------
# exact laws
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _grid_law(v, c, i, k, open_low, T, eps0):
    return grid_probabilities(np.array(v, dtype=float), np.array(c, dtype=np.int64), _CANDS[i:k + 1], T, eps0,
                              open_low)


def _independent_grid_log_prob(vals, cnt, qs, eps0, out):
    n = int(cnt.sum())
    return sum(math.log(grid_probabilities(vals, cnt, _CANDS, target_twice(q, n), eps0)[j]) for q, j in zip(qs, out))


def _grid_audit(law, eps0, qs, max_n=4):
    m = len(qs)
    outs = list(itertools.product(range(_CANDS.size), repeat=m))
    cache = {}

    def logp(d):
        if d not in cache:
            vals, cnt = _grouped(d)
            lp = np.array([law(vals, cnt, qs, eps0, o) for o in outs])
            assert np.isfinite(lp).all() and abs(np.logaddexp.reduce(lp)) < 1e-12
            cache[d] = lp
        return cache[d]

    return max(float(np.max(np.abs(logp(x) - logp(y)))) for x, y in _add_remove_pairs(max_n))


_POINTS = np.array([k + f for k in range(4) for f in (0.1, 0.5, 0.9)])


def _independent_interval_audit(eps0, qs, max_n=4):
    """m independent interval releases: the joint log-density is a sum over the qs, so its worst |log ratio|
    on the grid of points is max(|Σ max d_i|, |Σ min d_i|)."""
    def logd(x):
        vals, cnt = _grouped(x)
        n = int(cnt.sum())
        return [_log_density(vals, cnt, 0.0, 4.0, target_twice(q, n), eps0, _POINTS) for q in qs]

    logd = functools.lru_cache(maxsize=None)(logd)
    worst = 0.0
    for x, y in _add_remove_pairs(max_n):
        d = [a - b for a, b in zip(logd(x), logd(y))]
        worst = max(worst, abs(sum(e.max() for e in d)), abs(sum(e.min() for e in d)))
    return worst


# The recursive method's add/remove audits (the shipped plan: relative targets, ε/(L·μ) per subproblem; interval
# and grid at m = 3, grid at m = 7) and its sampler's χ² are in tests/test_quantiles_relative.py.


@pytest.mark.parametrize("qs", [(0.25, 0.5, 0.75), (0.2, 0.3, 0.9)])
def test_independent_exact_audit_add_remove(qs):
    eps = 1.0
    for audit in (_independent_interval_audit, lambda e, q: _grid_audit(_independent_grid_log_prob, e, q)):
        worst = audit(eps / 3, qs)
        assert 0.3 * eps < worst <= eps + 1e-9
        assert audit(eps, qs) > eps + 0.04


# ---------------------------------------------------------------------------------------------
# joint: refused (its utility's sensitivity is 3 under add/remove)
# ---------------------------------------------------------------------------------------------
def test_joint_utility_sensitivity_is_three_under_add_remove():
    outs = list(itertools.combinations_with_replacement(np.array([0.5, 1.5, 2.5, 3.5]), 2))

    def worst(qs):
        return max(abs(_joint_utility2(x, o, qs, 0.0, 4.0) - _joint_utility2(y, o, qs, 0.0, 4.0))
                   for x, y in _add_remove_pairs(5) for o in outs)

    assert worst((0.3, 0.6)) == 4           # 2·Δu = 4 here ...
    assert worst((0.3, 0.35)) == 6          # ... but 2·Δu = 6 here: Δu = 3 > 2
    # the pair: n = 4 -> 5 records, targets round(2qn) move by 1 and 1 (2.4 -> 3, 2.8 -> 3.5 rounds 3 -> 4)
    x, y = (0.0, 1.0, 1.0, 1.0), (0.0, 1.0, 1.0, 1.0, 1.0)
    assert abs(_joint_utility2(x, (0.5, 1.5), (0.3, 0.35), 0.0, 4.0)
               - _joint_utility2(y, (0.5, 1.5), (0.3, 0.35), 0.0, 4.0)) == 6


# ---------------------------------------------------------------------------------------------
# the API
# ---------------------------------------------------------------------------------------------
_X = [0.5, 1.0, 2.0, 3.0, 3.5, 4.0, 6.0, 7.5, 9.0]


@pytest.mark.parametrize("kwargs, match", [
    (dict(neighbours="add-remove"), "neighbours must be one of"),
    (dict(neighbours=None), "neighbours must be one of"),
    (dict(neighbours="add_remove", method="joint"), "sensitivity 3"),
    (dict(neighbours="add_remove", bounds=None), "not monotone|monotonically"),
])
def test_refusals_before_any_charge_or_draw(kwargs, match):
    acc = dpselect.Accountant(epsilon=10.0)
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    args = dict(epsilon=1.0, bounds=(0.0, 10.0), rng=gen, accountant=acc)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dpselect.quantiles(_X, [0.25, 0.5, 0.75], **args)
    assert len(acc.history) == 0 and gen.bit_generator.state == state


def test_quantiles_privacy_add_remove():
    g = _api.quantiles_privacy(9, epsilon=1.0, method="recursive", neighbours="add_remove")
    assert isinstance(g, AdaptiveBoundedRangeComposition) and g.k == 4 and 4 * g.epsilon0 <= 1.0
    assert g.epsilon(0.0) == pytest.approx(1.0)
    assert _api.quantiles_privacy(3, epsilon=0.6, method="independent", neighbours="add_remove") == \
        _api.quantiles_privacy(3, epsilon=0.6, method="independent")
    for meth in ("joint", "unbounded"):
        with pytest.raises(ValueError):
            _api.quantiles_privacy(3, epsilon=1.0, method=meth, neighbours="add_remove")
    with pytest.raises(ValueError, match="neighbours"):
        _api.quantiles_privacy(3, epsilon=1.0, method="recursive", neighbours="replace")
    assert _api.quantiles_privacy(9, epsilon=1.0, method="recursive").k == 7      # replace-one: 2L − 1


@pytest.mark.parametrize("grid", [False, True])
def test_accountant_charge_and_the_internal_functions(grid):
    qs = [0.1, 0.5, 0.9, 0.5]
    kw = dict(candidates=np.arange(11.0)) if grid else dict(bounds=(0.0, 10.0))
    for method, resolved in (("auto", "independent"), ("recursive", "recursive"), ("independent", "independent")):
        acc = dpselect.Accountant(epsilon=10.0)
        out = dpselect.quantiles(_X, qs, epsilon=2.0, method=method, rng=7, accountant=acc,
                                 neighbours="add_remove", **kw)
        assert acc.history[-1].guarantee == _api.quantiles_privacy(3, epsilon=2.0, method=resolved,
                                                                   neighbours="add_remove")
        vals, cnt = _grouped(_X)
        uq = np.array([0.1, 0.5, 0.9])
        gen = np.random.default_rng(7)
        if resolved == "recursive" and grid:
            ref = recursive_grid_quantiles(vals, cnt, uq, epsilon=2.0, cands=np.arange(11.0), gen=gen,
                                           add_remove=True)
        elif resolved == "recursive":
            ref = recursive_quantiles(vals, cnt, uq, epsilon=2.0, lo=0.0, hi=10.0, gen=gen, add_remove=True)
        else:
            ref = _api.grid_quantiles(vals, cnt, uq, epsilon=2.0, candidates=np.arange(11.0), method="independent",
                                      rng=gen) if grid else \
                _api.bounded_quantiles(vals, uq, epsilon=2.0, lo=0.0, hi=10.0, method="independent", counts=cnt,
                                       rng=gen)
        assert out.tolist() == ref[[0, 1, 2, 1]].tolist()


def test_auto_reads_m_and_epsilon_only_and_the_median_is_unchanged():
    assert _api.AUTO_ADD_REMOVE_INDEPENDENT_FROM == 0.02
    for n_rep in (1, 10 ** 6, 2 ** 52):
        for eps in (0.01, 100.0):
            assert _api._resolve("auto", 1, n_rep, eps, "add_remove") == "independent"
        for m, eps, want in ((9, 0.1, "recursive"), (99, 1.0, "recursive"), (3, 0.01, "recursive"),
                             (3, 0.1, "independent"), (9, 1.0, "independent"), (5, 0.1, "independent")):
            assert _api._resolve("auto", m, n_rep, eps, "add_remove") == want
    acc = dpselect.Accountant(epsilon=1.0)
    dpselect.quantiles(_X, np.arange(1, 10) / 10, epsilon=0.1, bounds=(0.0, 10.0), rng=0, accountant=acc,
                       neighbours="add_remove")
    # since issue 36 the recursive/independent choice of "auto" at ε/m < 0.02 is a post-processing of a noisy
    # count (test_quantiles_default.py): the charge is PureDP(ε)
    assert acc.history[-1].guarantee == _api.quantiles_privacy(9, epsilon=0.1, method="auto",
                                                               neighbours="add_remove") == dpselect.PureDP(0.1)
    x = [5.0, 1.0, 9.0, 4.0, 7.0]
    assert dpselect.quantile(x, 0.5, epsilon=1.0, bounds=(0.0, 10.0), rng=3, neighbours="add_remove") == \
        dpselect.median(x, epsilon=1.0, bound=10.0, rng=3)


def test_replace_one_default_is_unchanged():
    for kw in (dict(bounds=(0.0, 10.0)), dict(candidates=np.arange(11.0))):
        a = dpselect.quantiles(_X, [0.1, 0.5, 0.9], epsilon=1.0, method="recursive", rng=3, **kw)
        b = dpselect.quantiles(_X, [0.1, 0.5, 0.9], epsilon=1.0, method="recursive", rng=3,
                               neighbours="replace_one", **kw)
        assert a.tolist() == b.tolist()


def test_dask_passes_neighbours_through():
    da = pytest.importorskip("dask.array")
    from dpselect.dask import quantiles as dq
    x = np.random.default_rng(0).integers(0, 50, size=600).astype(float)
    vals, cnt = np.unique(x, return_counts=True)
    for kw in (dict(bounds=(0.0, 50.0)), dict(bounds=(0.0, 50.0), method="independent")):
        got = dq(da.from_array(x, chunks=200), [0.1, 0.5, 0.9], epsilon=1.0, rng=4, neighbours="add_remove", **kw)
        want = dpselect.quantiles(vals, [0.1, 0.5, 0.9], epsilon=1.0, counts=cnt, rng=4, neighbours="add_remove", **kw)
        assert got.tolist() == want.tolist()
    for kw, match in ((dict(bounds=None), "monoton"), (dict(bounds=(0.0, 50.0), method="joint"), "sensitivity 3"),
                      (dict(bounds=(0.0, 50.0)), "neighbours must be")):
        nb = "add_remove" if "neighbours must" not in match else "both"
        with pytest.raises(ValueError, match=match):
            dq(da.from_array(x, chunks=200), [0.5], epsilon=1.0, neighbours=nb, **kw)
