"""DiffPID3 family (thesis Ch. 7, Alg. 4)."""
from __future__ import annotations

import functools
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpselect.trees._diffpid3 as dp
from dpselect.trees import dampen_ig, diffpid3, discretise, ig_shift
from dpselect.accounting import PureDP, PureDPComposition
from dpselect.audit import exact_dp_audit
from dpselect.dampening import dampen, dampen_exact, dampen_with_error, shift_total_exact, shift_totals_with_error
from dpselect.datasets import PUBLIC_TABLE_SIZE
from dpselect.mechanisms import (
    exponential_probabilities,
    local_dampening_probabilities,
    report_noisy_max_probabilities,
    shifted_local_dampening_probabilities,
)
from dpselect.experiments import data_path
from dpselect.experiments._data import load_tabular
from dpselect.tabular import load_nltcs, load_table
from dpselect.utilities.information_gain import (
    IGTables,
    _f_table,
    ig_count_tables,
    ig_global_sensitivity,
    ig_sensitivity,
    ig_shift_with_error,
)


def random_tables(rng, n_attr=4):
    return [rng.integers(0, 25, size=(int(rng.integers(1, 4)), 2)) for _ in range(n_attr)]


# -- the previous implementation (DiffPID3's own float loops, replaced by the core engine), as reference --
def old_local_sensitivity(it, ts):
    """δ(T, t, A) for t in ts, shape (len(ts), n_attributes): the previous formula, literally."""
    tt = np.asarray(ts, dtype=np.int64)[:, None]
    ai, bi = it.a.astype(np.int64), it.b.astype(np.int64)
    F = _f_table(int(ai.max(initial=0)) + int(tt.max(initial=0)) + 2)
    ap = ai + tt
    v0 = np.where(bi >= 1, F[ap - 1] - F[np.maximum(bi - 1, 0)], F[ap])
    u_mid = np.minimum(np.maximum(bi - 1, 0), tt)
    v1 = np.where(bi >= 1, F[np.maximum(ai + tt - 2 * u_mid - 1, 0)] - F[np.maximum(bi - u_mid - 1, 0)], 0.0)
    return np.maximum.reduceat(np.maximum(v0, v1), it.starts, axis=1)


def old_dampen_ig(it, n_max):
    """The previous dampen_ig: D with the distance as a numpy axis in chunks (float loop, no error bound)."""
    u = it.utilities()
    delta_max = ig_global_sensitivity(n_max)
    mag = np.abs(u)
    out = np.zeros(u.shape[0])
    active = np.flatnonzero(mag > 0)
    b = np.zeros(active.size)
    t0, size = 0, 64
    while active.size:
        if t0 >= n_max:
            out[active] = t0 + (mag[active] - b) / delta_max
            break
        t1 = min(t0 + size, n_max)
        d = np.minimum(old_local_sensitivity(it, np.arange(t0, t1))[:, active], delta_max)
        cum = b[None, :] + np.cumsum(d, axis=0)
        inside = mag[active][None, :] < cum
        hit = inside.any(axis=0)
        if hit.any():
            i = inside.argmax(axis=0)[hit]
            cols = np.flatnonzero(hit)
            b_i = cum[i, cols] - d[i, cols]
            out[active[cols]] = t0 + i + (mag[active[cols]] - b_i) / d[i, cols]
        b = cum[-1, ~hit]
        active = active[~hit]
        t0, size = t1, min(2 * size, 4096)
    return np.copysign(out, u)


def old_shift_direct(it, n_max):
    """The previous reference shift: Σ_{t < N} (ΔIG − min(ΔIG, δ(T, t, A))) over every distance."""
    delta_max = ig_global_sensitivity(n_max)
    g = np.zeros(it.n_attributes)
    for t0 in range(0, n_max, 8192):
        d = np.minimum(old_local_sensitivity(it, np.arange(t0, min(t0 + 8192, n_max))), delta_max)
        g += (delta_max - d).sum(axis=0)
    return g


def split_nodes(name, epsilon=2.0, depth=5, rng=0):
    """(tables, N) of every split of a LocalDiffPID3 tree on a dataset (the nodes a real run meets)."""
    seen = []
    real = dp._select_split

    def spy(tabs, mech, eps, n_max, gen):
        seen.append((tabs, n_max))
        return real(tabs, mech, eps, n_max, gen)

    dp._select_split = spy
    try:
        diffpid3(load_tabular(name), epsilon=epsilon, depth=depth, mechanism="LD", n_max=PUBLIC_TABLE_SIZE[name], rng=rng)
    finally:
        dp._select_split = real
    return seen


def rel(x, y):
    return float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-300)))


@pytest.mark.parametrize("name", ["nltcs", "acs", "adult"])
def test_core_engine_gives_the_old_d_and_g_on_real_nodes(name):
    nodes = split_nodes(name)
    assert len(nodes) >= {"nltcs": 20, "acs": 20, "adult": 100}[name]
    worst_d = worst_g = 0.0
    n_inf = n_all = 0
    for i, (it, N) in enumerate(nodes):
        u = it.utilities()
        sf = ig_sensitivity(it, N)
        D, d_err = dampen_with_error(u, sf)
        old_D = old_dampen_ig(it, N)
        worst_d = max(worst_d, rel(D, old_D))
        fin = np.isfinite(d_err)
        assert np.all(d_err[fin] <= 1e-13 * np.maximum(np.abs(D[fin]), 1.0))   # small: sampling rarely refines
        for r in np.flatnonzero(~fin):   # |u| on a breakpoint b(i) up to rounding: the exact value decides
            assert abs(float(dampen_exact(u[r], sf, r)) - D[r]) <= 1e-12 * abs(D[r])
        n_inf += int((~fin).sum())
        n_all += u.size
        if i % max(1, len(nodes) // 6) == 0:    # the shift sums ~N distances: a sample of the nodes
            G, g_err = ig_shift_with_error(it, N)
            worst_g = max(worst_g, rel(G, old_shift_direct(it, N)))
            assert np.all(g_err <= 1e-8 * np.maximum(G, 1.0))
    assert worst_d <= 1e-12 and worst_g <= 1e-12, (worst_d, worst_g)
    assert n_inf <= 0.01 * n_all   # Adult: 7 of 2,966 attributes


@pytest.mark.parametrize("name", ["nltcs", "adult"])
def test_exact_probabilities_match_the_old_laws(name):
    nodes = split_nodes(name)
    for it, N in nodes[:: max(1, len(nodes) // 2)][:2]:
        u = it.utilities()
        sf = ig_sensitivity(it, N)
        for eps in (0.05, 1.0):
            np.testing.assert_allclose(local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf),
                                       exponential_probabilities(old_dampen_ig(it, N), epsilon=eps, sensitivity=1.0),
                                       rtol=1e-9, atol=1e-300)
        eps = 0.5   # (the core's shifted probabilities walk every distance up to N: one budget)
        np.testing.assert_allclose(
            shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf, direction="increasing"),
            exponential_probabilities(u - old_shift_direct(it, N), epsilon=eps, sensitivity=ig_global_sensitivity(N)),
            rtol=1e-9, atol=1e-300)


def test_error_bounds_contain_the_exact_values():
    rng = np.random.default_rng(5)
    for _ in range(6):
        tabs = [rng.integers(0, int(rng.integers(2, 300)), size=(int(rng.integers(1, 4)), 2)) for _ in range(3)]
        it = IGTables(tabs)
        N = int(it.n_records + rng.integers(1, 3000))
        sf = ig_sensitivity(it, N)
        u = it.utilities()
        D, d_err = dampen_with_error(u, sf)
        G, g_err = ig_shift_with_error(it, N)
        Gc, gc_err = shift_totals_with_error(sf, 3)
        assert np.all(np.abs(G - Gc) <= g_err + gc_err)
        for r in range(3):
            assert abs(D[r] - float(dampen_exact(u[r], sf, r))) <= d_err[r]
            exact_g = shift_total_exact(sf, r)
            assert abs(G[r] - float(exact_g)) <= g_err[r]
            assert abs(float(exact_g - type(exact_g)(G[r]))) <= g_err[r]


def test_fast_dampening_and_shift_equal_core():
    rng = np.random.default_rng(3)
    for _ in range(15):
        tabs = random_tables(rng)
        it = IGTables(tabs)
        N = int(it.n_records + rng.integers(1, 60))
        sf = ig_sensitivity(tabs, n_max=N)
        u = it.utilities()
        np.testing.assert_array_equal(dampen_ig(it, N), dampen(u, sf))
        np.testing.assert_allclose(dampen_ig(it, N), old_dampen_ig(it, N), rtol=1e-12, atol=1e-12)
        G, g_err = ig_shift_with_error(it, N)
        Gc, gc_err = shift_totals_with_error(sf, len(tabs))
        assert np.all(np.abs(G - Gc) <= g_err + gc_err)
        np.testing.assert_allclose(ig_shift(it, N), Gc, rtol=1e-12, atol=1e-9)
        eps = 0.7
        np.testing.assert_allclose(exponential_probabilities(dampen_ig(it, N), epsilon=eps, sensitivity=1.0),
                                   local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf), rtol=1e-9)
        np.testing.assert_allclose(
            exponential_probabilities(u - ig_shift(it, N), epsilon=eps, sensitivity=ig_global_sensitivity(N)),
            shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf, direction="increasing"),
                                   rtol=1e-9)


def test_split_selection_frequencies_match_exact_probabilities():
    from scipy.stats import chisquare

    from dpselect.mechanisms import dampened_select, shifted_select

    it = IGTables([np.array([[30, 10], [5, 55]]), np.array([[20, 20], [15, 45]]), np.array([[25, 25], [10, 40]])])
    N, eps, n = 1000, 0.4, 20_000
    sf = ig_sensitivity(it, N)
    u = it.utilities()
    D, D_err = dampen_with_error(u, sf)
    G, G_err = ig_shift_with_error(it, N)
    for mech, p, draw in (
        ("local_dampening", local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf),
         lambda gen, size=None: dampened_select(u, sf, D, D_err, eps, 1, gen, size=size)),
        ("shifted_local_dampening", shifted_local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf),
         lambda gen, size=None: shifted_select(u, sf, G, G_err, eps, 1, gen, direction="increasing", size=size)),
    ):
        # _select_split is the cached selector on the node's D (or G): the same draw from the same bits ...
        for seed in range(40):
            assert dp._select_split(it, mech, eps, N, np.random.default_rng(seed)) == \
                int(draw(np.random.default_rng(seed)))
        # ... whose law is checked on a batch of draws (size=, one vectorised call)
        counts = np.bincount(draw(np.random.default_rng(42), size=n), minlength=3)
        assert p.min() > 0.03   # a real spread, so the test can see a wrong law
        assert chisquare(counts, p * n).pvalue > 1e-6, (mech, counts, p)


# exact DP audit of one split selection over all tiny tables with add/remove-one-record neighbours
DOMS = (2, 2, 3)
TYPES = list(itertools.product(range(2), range(2), range(3), range(2)))
N_MAX = 6


def tabs_of(ds):
    arr = np.array(ds, dtype=np.int64).reshape(-1, 4)
    return IGTables(ig_count_tables(arr[:, :3], arr[:, 3], DOMS))


def pairs(max_size):
    for n in range(max_size):
        for ds in itertools.combinations_with_replacement(TYPES, n):
            for r in TYPES:
                yield ds, tuple(sorted(ds + (r,)))


@pytest.mark.parametrize("kind", ["local", "shifted", "global"])
def test_exact_dp_audit_of_split_selection(kind):
    eps = 1.0

    def prob(ds):
        it = tabs_of(ds)
        u = it.utilities()
        if kind == "local":
            return local_dampening_probabilities(u, epsilon=eps,
                                                 sensitivity_function=ig_sensitivity(it, N_MAX))
        if kind == "shifted":
            return exponential_probabilities(u - ig_shift(it, N_MAX), epsilon=eps,
                                             sensitivity=ig_global_sensitivity(N_MAX))
        return exponential_probabilities(u, epsilon=eps, sensitivity=ig_global_sensitivity(N_MAX))

    res = exact_dp_audit(prob, pairs(3), epsilon=eps)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.05  # the audit sees real differences


def test_audit_catches_overstated_dampening():
    # the tiny universe reaches a worst ratio of about 0.38·eps, so only a gross mutation (D x 4, i.e. a
    # sensitivity function 4x too small far from 0) must be caught
    eps = 1.0

    def prob(ds):
        return exponential_probabilities(4.0 * dampen_ig(tabs_of(ds), N_MAX), epsilon=eps, sensitivity=1.0)

    assert not exact_dp_audit(prob, pairs(3), epsilon=eps).passed


def test_huge_budget_gives_non_private_id3_on_nltcs():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    codes, nv = discretise(d)
    root = int(np.argmax(IGTables(ig_count_tables(codes, d.y, nv)).utilities()))
    for mech in ("exponential", "local_dampening", "shifted_local_dampening"):
        tree = diffpid3(d, epsilon=1e7, depth=1, mechanism=mech, n_max=d.n_records, rng=1)
        assert tree.feature[0] == root and tree.mechanism == mech
        # leaves: majority class of each side
        for v in range(2):
            side = d.y[codes[:, root] == v]
            assert tree.label[tree.first_child[0] + v] == int(side.mean() > 0.5)


def test_mechanism_vocabulary_and_removed_names():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    for new, alias, old in (("exponential", "EM", "global"), ("local_dampening", "ld", "local"),
                            ("shifted_local_dampening", "Sld", "shifted")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # the package vocabulary warns about nothing
            a = diffpid3(d, epsilon=0.5, depth=2, mechanism=new, n_max=21574, rng=3)
            b = diffpid3(d, epsilon=0.5, depth=2, mechanism=alias, n_max=21574, rng=3)
        assert a.mechanism == b.mechanism == new and np.array_equal(a.feature, b.feature)
        # the spellings of before 0.1.0 are unknown values (no release ever took them)
        with pytest.raises(ValueError, match=rf"mechanism must be one of exponential, local_dampening, "
                                             rf"shifted_local_dampening \(or EM, LD, SLD\), got '{old}'"):
            diffpid3(d, epsilon=0.5, depth=2, mechanism=old, n_max=21574, rng=3)
    with pytest.raises(ValueError, match=r"mechanism must be one of exponential, local_dampening, "
                                         r"shifted_local_dampening \(or EM, LD, SLD\), got 'PF'"):
        diffpid3(d, epsilon=1.0, depth=2, mechanism="PF", n_max=21574)
    with pytest.raises(TypeError, match="mechanism must be a string"):
        diffpid3(d, epsilon=1.0, depth=2, mechanism=1, n_max=21574)


def test_discretise_and_predict_tiny_table():
    t = load_table({"x": [0.0, 0.2, 0.6, 1.0] * 50, "c": ["a", "b", "a", "b"] * 50, "y": [0, 0, 1, 1] * 50}, "y",
                   feature_bounds={"x": (0, 1)}, categories={"c": ["a", "b"]})
    codes, nv = discretise(t, bins=2)
    assert nv.tolist() == [2, 2]
    assert codes[:4].tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    tree = diffpid3(t, epsilon=1e6, depth=2, mechanism="exponential", bins=2, n_max=200, rng=0)
    assert tree.feature[0] == 0 and tree.mechanism == "exponential"
    assert tree.accuracy(t) == 1.0
    for m in ("local_dampening", "shifted_local_dampening"):
        assert diffpid3(t, epsilon=1e6, depth=2, mechanism=m, bins=2, n_max=200, rng=0).accuracy(t) == 1.0


def test_seeded_reproducible_and_bad_arguments():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    a = diffpid3(d, epsilon=0.5, depth=3, mechanism="local_dampening", n_max=21574, rng=7)
    b = diffpid3(d, epsilon=0.5, depth=3, mechanism="local_dampening", n_max=21574, rng=7)
    assert np.array_equal(a.feature, b.feature) and np.array_equal(a.label, b.label)
    with pytest.raises(ValueError, match="mechanism"):
        diffpid3(d, epsilon=1.0, depth=2, mechanism="nope")
    with pytest.raises(ValueError, match="epsilon"):
        diffpid3(d, epsilon=-1.0, depth=2)
    with pytest.raises(ValueError, match="depth"):
        diffpid3(d, epsilon=1.0, depth=-1)


def test_envelope_shift_equals_core_walk_within_bounds():
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(150):
        tabs = [rng.integers(0, int(rng.integers(1, 60)), size=(int(rng.integers(1, 5)), 2)) for _ in range(3)]
        it = IGTables(tabs)
        N = int(it.n_records + rng.integers(1, 400))
        G, g_err = ig_shift_with_error(it, N)
        Gc, gc_err = shift_totals_with_error(ig_sensitivity(it, N), 3)
        assert np.all(np.abs(G - Gc) <= g_err + gc_err)
        np.testing.assert_allclose(G, old_shift_direct(it, N), rtol=1e-12, atol=1e-9)
        worst = max(worst, float(np.max(g_err)))
    assert 0 < worst < 1e-8


def test_thesis_figures_smoke(tmp_path):
    import argparse
    import warnings

    from dpselect import PrivacyLeakWarning

    warnings.simplefilter("error", PrivacyLeakWarning)  # the papers' public values: no warning (pytest restores)

    from dpselect.experiments import _common, thesis_figures23_25 as tf

    p = argparse.ArgumentParser()
    tf.add_arguments(p)
    a = p.parse_args(["--runs", "1", "--folds", "2", "--epsilons", "1", "--datasets", "nltcs", "--depths", "2",
                      "--jobs", "1", "--quiet", "--out", str(tmp_path)])
    assert tf.run(a) == 0
    rows = _common.read_csv(tmp_path / "thesis-figures23-25.csv")
    assert len(rows) == 6 and {r["method"] for r in rows} == set(tf.METHODS)
    assert all(r["metric"] == "accuracy" and r["depth"] == "2" and 0.5 < float(r["value"]) <= 1 for r in rows)
    assert (tmp_path / "thesis-figures23-25-nltcs.png").exists()


def test_every_split_gets_budget_over_2_d_plus_1(monkeypatch):
    import dpselect.mechanisms as mech

    seen = []

    def spy(name, pos):
        real = getattr(mech, name)

        def f(*args, **kw):
            seen.append((name, kw["epsilon"] if "epsilon" in kw else args[pos]))
            return real(*args, **kw)
        monkeypatch.setattr(mech, name, f)

    # the registry's spec.select calls the checked entry point (validation once), not the public function
    spy("_exponential_entry", 1)
    spy("dampened_select", 4)
    spy("shifted_select", 4)
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    for m, fn in (("EM", "_exponential_entry"), ("LD", "dampened_select"), ("SLD", "shifted_select")):
        seen.clear()
        tree = diffpid3(d, epsilon=0.9, depth=2, mechanism=m, n_max=21574, rng=0)
        assert len(seen) == int((tree.feature >= 0).sum()) >= 1
        assert seen == [(fn, pytest.approx(0.9 / 6))] * len(seen)


def test_privacy_parameters_are_keyword_only():
    d = load_tabular("nltcs")
    for m in ("exponential", "local_dampening", "shifted_local_dampening"):
        with pytest.raises(TypeError, match=r"takes 1 positional argument but 3 "):
            diffpid3(d, 0.5, 2, mechanism=m, n_max=21574, rng=5)


# -- budget_split: the fraction of each level's budget B/(d + 1) spent on the noisy count --------------
# Exact law of a whole tree on the tiny universe above (attributes DOMS, records TYPES = (a0, a1, a2, y)):
# a reference model of _TreeBuilder (stop bit Laplace(1/ε_count) CDF, local dampening with ε_select, leaf
# report-noisy-max with Laplace noise and ε_select), tied to the code by a χ² test on real trees.
@functools.lru_cache(maxsize=None)
def _leaf_law(c0, c1, es):
    return tuple(report_noisy_max_probabilities(np.array([c0, c1], float), epsilon=es, sensitivity=1.0,
                                                noise="laplace", monotonic=True).tolist())


@functools.lru_cache(maxsize=None)
def _split_law(rows, attrs, es):
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    it = IGTables(ig_count_tables(arr[:, list(attrs)], arr[:, 3], [DOMS[a] for a in attrs], 2))
    return tuple(local_dampening_probabilities(it.utilities(), epsilon=es,
                                               sensitivity_function=ig_sensitivity(it, N_MAX)).tolist())


@functools.lru_cache(maxsize=None)
def _node_law(rows, attrs, left, ec, es):
    """{subtree: probability} of the subtree grown at a node holding ``rows`` (sorted record tuples)."""
    y = [r[3] for r in rows]
    lab = _leaf_law(y.count(0), y.count(1), es)
    if not attrs or left == 0:
        return {("leaf", c): lab[c] for c in range(2)}
    x = float(Fraction(math.sqrt(2) / 2 * max(DOMS[a] for a in attrs) * 2) - len(rows))   # threshold − n
    p_stop = 1 - 0.5 * math.exp(-x * ec) if x >= 0 else 0.5 * math.exp(x * ec)          # Laplace(1/ec) CDF
    out = {("leaf", c): p_stop * lab[c] for c in range(2)}
    ps = _split_law(rows, attrs, es)
    for i, a in enumerate(attrs):
        rest = tuple(b for b in attrs if b != a)
        subs = [_node_law(tuple(r for r in rows if r[a] == v), rest, left - 1, ec, es) for v in range(DOMS[a])]
        for combo in itertools.product(*(s.items() for s in subs)):
            out[("split", a) + tuple(k for k, _ in combo)] = (1 - p_stop) * ps[i] * math.prod(p for _, p in combo)
    return out


def _tree_law(ds, depth, ec, es):
    law = _node_law(tuple(sorted(ds)), (0, 1, 2), depth, ec, es)
    return np.array([law[k] for k in sorted(law, key=repr)])


def _tree_key(tree, node=0):
    f = int(tree.feature[node])
    if f < 0:
        return ("leaf", int(tree.label[node]))
    return ("split", f) + tuple(_tree_key(tree, int(tree.first_child[node]) + v) for v in range(DOMS[f]))


def test_budget_split_reference_law_matches_the_code():
    from collections import Counter

    from scipy.stats import chisquare

    ds = ((0, 1, 2, 1), (1, 0, 0, 0), (1, 1, 1, 1))
    cols = list(zip(*ds))
    t = load_table({"a": list(cols[0]), "b": list(cols[1]), "c": list(cols[2]), "y": list(cols[3])}, "y",
                   categories={"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]})
    B, f, n = 2.0, 0.2, 2500
    ec, es = dp._level_budgets(B, 1, f)
    assert (ec, es) == (pytest.approx(0.2), pytest.approx(0.8))
    law = _node_law(tuple(sorted(ds)), (0, 1, 2), 1, ec, es)
    keys = sorted(law, key=repr)
    gen = np.random.default_rng(1)
    seen = Counter(_tree_key(diffpid3(t, epsilon=B, depth=1, n_max=N_MAX, budget_split=f, rng=gen)) for _ in range(n))
    assert set(seen) <= set(keys) and len(keys) == 18
    p = np.array([law[k] for k in keys])
    assert chisquare([seen[k] for k in keys], p * n).pvalue > 1e-4
    # the swapped shares are a different law, which the same test sees
    swapped = _node_law(tuple(sorted(ds)), (0, 1, 2), 1, es, ec)
    assert chisquare([seen[k] for k in keys], np.array([swapped[k] for k in keys]) * n).pvalue < 1e-6


@pytest.mark.parametrize("f", [0.2, 0.8])
def test_exact_dp_audit_of_whole_tree_with_budget_split(f):
    # depth 1, every table of at most 3 records and its add/remove-one-record neighbours
    B = 2.0
    claim = dp._diffpid3_guarantee(B, 1, f).epsilon(0)
    assert B <= claim <= B * (1 + 1e-15)    # the parts' exact sum, rounded up: B, never below
    ec, es = dp._level_budgets(B, 1, f)
    res = exact_dp_audit(lambda ds: _tree_law(ds, 1, ec, es), pairs(3), epsilon=B)
    assert res.passed and 0.3 * B < res.worst_log_ratio <= B, (res.worst_log_ratio, res.pair)


def test_exact_audit_catches_a_wrong_budget_split_accounting():
    # depth 2, tables of at most 2 records: the right shares pass (worst about 0.59·B) ...
    B, f = 3.0, 0.8
    ec, es = dp._level_budgets(B, 2, f)
    ok = exact_dp_audit(lambda ds: _tree_law(ds, 2, ec, es), pairs(2), epsilon=B)
    assert ok.passed and 0.3 * B < ok.worst_log_ratio <= B, (ok.worst_log_ratio, ok.pair)
    # ... the split read as a fraction of the whole budget B instead of the level's B/(d + 1) (every level
    # spends B) is caught: about 1.75·B
    bad = exact_dp_audit(lambda ds: _tree_law(ds, 2, f * B, (1 - f) * B), pairs(2), epsilon=B)
    assert not bad.passed and bad.worst_log_ratio > 1.5 * B


@pytest.mark.parametrize("f", [0.2, 0.5, 0.8])
def test_budget_split_shares_reach_the_samplers(monkeypatch, f):
    """Per step: the stop bit's Laplace scale is 1/ε_count, the split and the leaf get ε_select, and the
    2(d + 1) parts add up to the charged guarantee (B). Giving the count the full level budget fails here."""
    import dpselect.mechanisms as mech

    seen = []
    real_below, real_rnm, real_ld = dp.laplace_below, mech.report_noisy_max, mech.dampened_select

    def below(x, scale, rng):
        seen.append(("count", 1.0 / scale))
        return real_below(x, scale, rng)

    def rnm(*args, **kw):
        seen.append(("leaf", kw["epsilon"]))
        return real_rnm(*args, **kw)

    def ld(*args, **kw):
        seen.append(("split", args[4]))
        return real_ld(*args, **kw)

    monkeypatch.setattr(dp, "laplace_below", below)
    monkeypatch.setattr(mech, "report_noisy_max", rnm)
    monkeypatch.setattr(mech, "dampened_select", ld)
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    B, depth = 0.9, 2
    tree = diffpid3(d, epsilon=B, depth=depth, n_max=21574, rng=0, budget_split=f)
    kinds = {k for k, _ in seen}
    assert kinds == {"count", "leaf", "split"} and len(seen) >= tree.n_nodes
    level = B / (depth + 1)
    for kind, eps in seen:
        want = f * level if kind == "count" else (1 - f) * level
        assert eps == pytest.approx(want, rel=1e-12), (kind, eps, want)
    ec, es = dp._level_budgets(B, depth, f)
    g = dp._diffpid3_guarantee(B, depth, f)
    assert g.epsilon(0) >= math.fsum([ec, es] * (depth + 1)) and g.epsilon(0) == pytest.approx(B, rel=1e-15)
    if f == 0.5:
        assert g == PureDPComposition(B / 6, 6)
    else:
        assert g == PureDP(g.epsilon(0))
    # a wrong accounting (the count given the whole level budget) is seen by the same check
    monkeypatch.setattr(dp, "_level_budgets", lambda e, dd, ff: (e / (dd + 1), (1 - ff) * e / (dd + 1)))
    seen.clear()
    diffpid3(d, epsilon=B, depth=depth, n_max=21574, rng=0, budget_split=f)
    assert any(k == "count" and e != pytest.approx(f * level, rel=1e-12) for k, e in seen)


#: diffpid3(NLTCS, epsilon=0.5, mechanism="local_dampening", depth=3, n_max=21574, rng=7) before budget_split existed (commit fcad35a)
TODAY_TREE = ([13, 14, 6, 11, 4, 1, 12, -1, -1, -1, -1, -1, -1, -1, -1], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])


def test_budget_split_default_is_todays_tree_and_bad_values():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    for m in ("EM", "LD", "SLD"):
        a = diffpid3(d, epsilon=0.7, depth=3, mechanism=m, n_max=21574, rng=11)
        b = diffpid3(d, epsilon=0.7, depth=3, mechanism=m, n_max=21574, rng=11, budget_split=0.5)
        assert a.feature.tolist() == b.feature.tolist() and a.label.tolist() == b.label.tolist()
    # today's tree, recorded before the parameter existed (local dampening, seed 7)
    t = diffpid3(d, epsilon=0.5, depth=3, mechanism="local_dampening", n_max=21574, rng=7, budget_split=0.5)
    assert (t.feature.tolist(), t.label.tolist()) == TODAY_TREE
    assert dp._diffpid3_guarantee(0.6, 2) == PureDPComposition(0.09999999999999999, 6)
    c = diffpid3(d, epsilon=0.7, depth=3, n_max=21574, rng=11, budget_split=0.25)
    assert c.n_nodes >= 1
    import dpselect

    acc = dpselect.Accountant(epsilon=1.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for bad, err in ((0.0, ValueError), (1.0, ValueError), (-0.1, ValueError), (float("nan"), ValueError),
                     (float("inf"), ValueError), (True, TypeError), ("0.3", TypeError)):
        with pytest.raises(err, match="budget_split"):
            diffpid3(d, epsilon=0.5, depth=2, mechanism="exponential", n_max=21574, rng=gen, accountant=acc,
                     budget_split=bad)
    assert len(acc.history) == 0 and gen.bit_generator.state == state
    for m in ("local_dampening", "shifted_local_dampening"):
        with pytest.raises(ValueError, match="budget_split"):
            diffpid3(d, epsilon=0.5, depth=2, mechanism=m, n_max=21574, budget_split=1.5)
