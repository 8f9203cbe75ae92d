"""DiffPID3 family (thesis Ch. 7, Alg. 4)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpselect.apps.diffpid3 import (
    dampen_ig,
    diffpid3,
    discretise,
    global_diffpid3,
    ig_shift,
    local_diffpid3,
    shifted_local_diffpid3,
)
from dpselect.audit import exact_dp_audit
from dpselect.dampening import dampen, shift_totals
from dpselect.mechanisms import (
    exponential_probabilities,
    local_dampening_probabilities,
    shifted_local_dampening_probabilities,
)
from dpselect.tabular import load_nltcs, load_table
from dpselect.utilities.information_gain import IGTables, ig_count_tables, ig_global_sensitivity, ig_sensitivity_function


def random_tables(rng, n_attr=4):
    return [rng.integers(0, 25, size=(int(rng.integers(1, 4)), 2)) for _ in range(n_attr)]


def test_fast_dampening_and_shift_equal_core():
    rng = np.random.default_rng(3)
    for _ in range(15):
        tabs = random_tables(rng)
        it = IGTables(tabs)
        N = int(it.n_records + rng.integers(1, 60))
        sf = ig_sensitivity_function(tabs, n_max=N)
        u = it.utilities()
        np.testing.assert_allclose(dampen_ig(it, N), dampen(u, sf), rtol=1e-11, atol=1e-9)
        np.testing.assert_allclose(ig_shift(it, N), shift_totals(sf, len(tabs)), rtol=1e-11, atol=1e-9)
        eps = 0.7
        np.testing.assert_allclose(exponential_probabilities(dampen_ig(it, N), eps, 1.0),
                                   local_dampening_probabilities(u, eps, sf), rtol=1e-9)
        np.testing.assert_allclose(exponential_probabilities(u - ig_shift(it, N), eps, ig_global_sensitivity(N)),
                                   shifted_local_dampening_probabilities(u, eps, sf, direction="increasing"),
                                   rtol=1e-9)


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
            return exponential_probabilities(dampen_ig(it, N_MAX), eps, 1.0)
        if kind == "shifted":
            return exponential_probabilities(u - ig_shift(it, N_MAX), eps, ig_global_sensitivity(N_MAX))
        return exponential_probabilities(u, eps, ig_global_sensitivity(N_MAX))

    res = exact_dp_audit(prob, pairs(3), epsilon=eps)
    assert res.passed, (res.worst_log_ratio, res.pair)
    assert res.worst_log_ratio > 0.05  # the audit sees real differences


def test_audit_catches_overstated_dampening():
    # the tiny universe reaches a worst ratio of about 0.38·eps, so only a gross mutation (D x 4, i.e. a
    # sensitivity function 4x too small far from 0) must be caught
    eps = 1.0

    def prob(ds):
        return exponential_probabilities(4.0 * dampen_ig(tabs_of(ds), N_MAX), eps, 1.0)

    assert not exact_dp_audit(prob, pairs(3), epsilon=eps).passed


def test_huge_budget_gives_non_private_id3_on_nltcs():
    d = load_nltcs()
    codes, nv = discretise(d)
    root = int(np.argmax(IGTables(ig_count_tables(codes, d.y, nv)).utilities()))
    for mech in ("global", "local", "shifted"):
        tree = diffpid3(d, 1e7, 1, mechanism=mech, n_max=d.n_records, rng=1)
        assert tree.feature[0] == root
        # leaves: majority class of each side
        for v in range(2):
            side = d.y[codes[:, root] == v]
            assert tree.label[tree.first_child[0] + v] == int(side.mean() > 0.5)


def test_discretise_and_predict_tiny_table():
    t = load_table({"x": [0.0, 0.2, 0.6, 1.0] * 50, "c": ["a", "b", "a", "b"] * 50, "y": [0, 0, 1, 1] * 50}, "y",
                   numeric_bounds={"x": (0, 1)}, categories={"c": ["a", "b"]})
    codes, nv = discretise(t, bins=2)
    assert nv.tolist() == [2, 2]
    assert codes[:4].tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    tree = global_diffpid3(t, 1e6, 2, bins=2, n_max=200, rng=0)
    assert tree.feature[0] == 0
    assert tree.accuracy(t) == 1.0
    assert local_diffpid3(t, 1e6, 2, bins=2, n_max=200, rng=0).accuracy(t) == 1.0
    assert shifted_local_diffpid3(t, 1e6, 2, bins=2, n_max=200, rng=0).accuracy(t) == 1.0


def test_seeded_reproducible_and_bad_arguments():
    d = load_nltcs()
    a = local_diffpid3(d, 0.5, 3, n_max=21574, rng=7)
    b = local_diffpid3(d, 0.5, 3, n_max=21574, rng=7)
    assert np.array_equal(a.feature, b.feature) and np.array_equal(a.label, b.label)
    with pytest.raises(ValueError, match="mechanism"):
        diffpid3(d, 1.0, 2, mechanism="nope")
    with pytest.raises(ValueError, match="epsilon"):
        diffpid3(d, -1.0, 2)
    with pytest.raises(ValueError, match="depth"):
        diffpid3(d, 1.0, -1)


def test_envelope_shift_equals_direct_sum():
    from dpselect.apps.diffpid3 import _ig_shift_direct

    rng = np.random.default_rng(11)
    for _ in range(150):
        tabs = [rng.integers(0, int(rng.integers(1, 60)), size=(int(rng.integers(1, 5)), 2)) for _ in range(3)]
        it = IGTables(tabs)
        N = int(it.n_records + rng.integers(1, 400))
        np.testing.assert_allclose(ig_shift(it, N), _ig_shift_direct(it, N), rtol=1e-12, atol=1e-9)


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
    real = mech.exponential

    def spy(u, eps, sens, **kw):
        seen.append(eps)
        return real(u, eps, sens, **kw)

    monkeypatch.setattr(mech, "exponential", spy)
    d = load_nltcs()
    for m in ("global", "local", "shifted"):
        seen.clear()
        tree = diffpid3(d, 0.9, 2, mechanism=m, n_max=21574, rng=0)
        assert len(seen) == int((tree.feature >= 0).sum()) >= 1
        assert seen == [pytest.approx(0.9 / 6)] * len(seen)
