"""dpselect.dask: the law of every distributed selector is the in-memory one (issue 14).

* Bit for bit: on a dask array with an int seed (PCG64), every candidate draws the same 64-bit word
  as in memory, so the distributed selectors return exactly what ``dpselect.<selector>`` returns on
  the computed array, over many seeds and chunkings (and leave the generator in the same state).
* In law: DataFrames/Series use independent per-partition streams; χ² tests at α = 1e-6 against the
  exact ``*_probabilities`` (k = 1) and their sequential products (peeled top-k), with one candidate
  per partition; and a forced 64-bit tie across partitions, which the reduce must refine exactly.
* Frequent items, degrees and the Pareto score against their in-memory counterparts.

The cluster is a ``distributed.LocalCluster`` with 2 worker processes; the many-draw χ² tests run the
same partition and reduce code in-process (``eager``), since a cluster round trip per draw would take
minutes.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import dpselect  # noqa: E402
import dpselect.dask as D  # noqa: E402
from dpselect.dask import _select  # noqa: E402
from dpselect.utilities.graph import egocentric_density_sensitivity  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
        cl = distributed.Client(cluster)
    yield cl
    cl.close()
    cluster.close()


def test_real_dask_is_imported():
    assert dask.__name__ == "dask" and "dpselect" not in dask.__file__
    assert D.__name__ == "dpselect.dask"


# ------------------------------------------------------------------------------------------------
# bit-for-bit equality with the in-memory selectors (dask arrays, PCG64)
# ------------------------------------------------------------------------------------------------
U = np.random.default_rng(1).normal(size=2000) * 3.0


def _deg(u):
    return (np.abs(u) * 10).astype(np.int64)


CASES = [
    ("exponential", {}, None), ("exponential", {}, 5), ("exponential", {"monotonic": True}, 2),
    ("permute_and_flip", {}, None), ("report_noisy_max", {"noise": "laplace"}, None),
    ("report_noisy_max", {"noise": "gumbel"}, 3), ("report_noisy_max", {"noise": "exponential"}, None),
]


def test_bit_equality_with_in_memory_on_cluster(client):
    for chunks in (173,):
        x = da.from_array(U, chunks=chunks)
        for name, kw, k in CASES:
            for seed in range(1):
                got = getattr(D, name)(x, epsilon=1.0, sensitivity=1.0, k=k, rng=seed, **kw)
                want = getattr(dpselect, name)(U, epsilon=1.0, sensitivity=1.0, k=k, rng=seed, **kw)
                assert type(got) is type(want)
                assert np.array_equal(got, want), (name, kw, k, chunks, seed)
        # local dampening: δ per block from a per-candidate quantity
        for k in (None, 3):
            got = D.local_dampening(x, epsilon=2.0, k=k, rng=5,
                                    sensitivity_function=lambda blk: egocentric_density_sensitivity(_deg(blk)))
            want = dpselect.local_dampening(U, epsilon=2.0, k=k, rng=5,
                                            sensitivity_function=egocentric_density_sensitivity(_deg(U)))
            assert np.array_equal(got, want)


def test_bit_equality_many_seeds_and_stream_continues():
    x = da.from_array(U[:600], chunks=37)
    with dask.config.set(scheduler="sync"):
        for seed in range(12):
            for k in (None, 4):
                g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
                assert np.array_equal(D.exponential(x, epsilon=0.5, sensitivity=1.0, k=k, rng=g1),
                                      dpselect.exponential(U[:600], epsilon=0.5, sensitivity=1.0, k=k, rng=g2))
                assert g1.integers(1 << 62) == g2.integers(1 << 62)  # same words consumed
            g1 = np.random.Generator(np.random.PCG64DXSM(seed))
            g2 = np.random.Generator(np.random.PCG64DXSM(seed))
            assert D.report_noisy_max(x, epsilon=0.5, sensitivity=1.0, rng=g1) == dpselect.report_noisy_max(
                U[:600], epsilon=0.5, sensitivity=1.0, rng=g2)


def test_bit_equality_extreme_values():
    u = np.array([1e300, -1e300, 0.0, 1e300, 5e-324, -7.0, 1e300 * (1 - 2 ** -52)] * 7)
    x = da.from_array(u, chunks=5)
    with dask.config.set(scheduler="sync"):
        for eps in (1e-300, 1.0, 1e300):
            for seed in range(4):
                for k in (None, 3):
                    assert np.array_equal(D.exponential(x, epsilon=eps, sensitivity=1.0, k=k, rng=seed),
                                          dpselect.exponential(u, epsilon=eps, sensitivity=1.0, k=k, rng=seed))
                assert D.permute_and_flip(x, epsilon=eps, sensitivity=3.0, rng=seed) == dpselect.permute_and_flip(
                    u, epsilon=eps, sensitivity=3.0, rng=seed)


# ------------------------------------------------------------------------------------------------
# exact law: χ² against exact probabilities, one candidate per partition (in-process, same code)
# ------------------------------------------------------------------------------------------------
SMALL = np.array([0.0, 1.0, 2.5, 1.0, -1.0])


def _split_blocks(u, sizes):
    """numpy blocks of unknown offsets: the per-partition streams (the DataFrame/Series design)."""
    cut = np.concatenate([[0], np.cumsum(sizes)])
    return _select._Blocks([u[a:b] for a, b in zip(cut[:-1], cut[1:])], None, None, False, None)


def _draws(n_draws, seed, **kw):
    gen = np.random.default_rng(seed)
    blocks = _split_blocks(SMALL, [1, 1, 1, 1, 1])
    return [_select._execute(blocks, rng=gen, eager=True, **kw) for _ in range(n_draws)]


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_law_k1_many_partitions(noise, freq):
    draws = _draws(1500, 11, eps=1.5, delta=1.0, mult_per_pick=2, k=None, noise=noise)
    probs = dpselect.report_noisy_max_probabilities(SMALL, epsilon=1.5, sensitivity=1.0, noise=noise)
    freq(draws, probs)


def _peeled_probs(prob_fn, u, eps, k):
    """Exact law of k peeled picks, ε/k each: the product of the k = 1 laws on the remaining candidates."""
    n = len(u)
    out = {}

    def rec(prefix, p):
        if len(prefix) == k:
            out[tuple(prefix)] = p
            return
        rest = [i for i in range(n) if i not in prefix]
        q = prob_fn(u[rest], eps / k)
        for j, i in enumerate(rest):
            rec(prefix + [i], p * q[j])

    rec([], 1.0)
    return out


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_law_top2_many_partitions(noise, freq):
    draws = _draws(1500, 12, eps=2.0, delta=1.0, mult_per_pick=2, k=2, noise=noise)
    exact = _peeled_probs(lambda v, e: dpselect.report_noisy_max_probabilities(v, epsilon=e, sensitivity=1.0,
                                                                              noise=noise), SMALL, 2.0, 2)
    cells = sorted(exact)
    index = {c: i for i, c in enumerate(cells)}
    freq([index[tuple(int(v) for v in d)] for d in draws], [exact[c] for c in cells])


def test_law_local_dampening_split(freq):
    u = np.array([6.5, 6.5, 0.0, 3.0, 5.0])
    deg = np.array([3, 9, 1, 5, 7])
    frame = pd.DataFrame({"u": u, "degree": deg})
    parts = [frame.iloc[[0, 1]], frame.iloc[[2]], frame.iloc[[3, 4]]]
    blocks = _select._Blocks(parts, None, None, True, "u")
    gen = np.random.default_rng(13)
    fac = lambda part: egocentric_density_sensitivity(part["degree"].to_numpy())  # noqa: E731
    draws = [_select._execute(blocks, eps=1.0, delta=1.0, mult_per_pick=2, k=None, noise="gumbel", rng=gen,
                              sf_factory=fac, eager=True) for _ in range(600)]
    probs = dpselect.local_dampening_probabilities(u, epsilon=1.0,
                                                   sensitivity_function=egocentric_density_sensitivity(deg))
    freq(draws, probs)


def test_reduce_refines_a_cross_partition_tie(monkeypatch, freq):
    """Every candidate gets the same first word in its own partition: equal utilities tie at 64 bits, so
    only the reduce's exact refinement (more bits, decimal arithmetic) can decide. By symmetry the
    output is uniform."""
    def same_words(self, p, offset, size, rounds):
        return [np.full(size, np.uint64(0x9E3779B97F4A7C15), dtype=np.uint64) for _ in range(rounds)]

    monkeypatch.setattr(_select._Streams, "words", same_words)
    u = np.zeros(4)
    gen = np.random.default_rng(14)
    for noise in ("gumbel", "laplace"):
        draws = [_select._execute(_split_blocks(u, [1, 1, 1, 1]), eps=1.0, delta=1.0, mult_per_pick=2, k=None,
                                  noise=noise, rng=gen, eager=True) for _ in range(120)]
        freq(draws, np.full(4, 0.25))


def test_series_labels_and_dataframe_column(client):
    s = dd.from_pandas(pd.Series([1.0, 9.0, 2.0, 8.5], index=["a", "b", "c", "d"]), npartitions=3)
    assert D.exponential(s, epsilon=1e6, sensitivity=1.0, rng=0) == "b"
    assert D.exponential(s, epsilon=1e6, sensitivity=1.0, k=2, rng=0).tolist() == ["b", "d"]
    df = s.to_frame("u")
    assert D.report_noisy_max(df, utility="u", epsilon=1e6, sensitivity=1.0, k=3, noise="exponential",
                              rng=1).tolist() == ["b", "d", "c"]


# ------------------------------------------------------------------------------------------------
# argument validation: the in-memory vocabulary and messages
# ------------------------------------------------------------------------------------------------
def test_validation_matches_in_memory():
    x = da.from_array(np.array([1.0, 2.0, 3.0]), chunks=2)
    u = np.array([1.0, 2.0, 3.0])
    with dask.config.set(scheduler="sync"):
        for kw in ({"epsilon": -1.0}, {"epsilon": float("nan")}, {"sensitivity": 0.0}, {"k": 0}, {"k": 4},
                   {"k": 1.5}, {"monotonic": "yes"}, {"rng": -3}, {"epsilon": True}):
            args = {"epsilon": 1.0, "sensitivity": 1.0, **kw}
            with pytest.raises((TypeError, ValueError)) as want:
                dpselect.exponential(u, **args)
            with pytest.raises(want.type, match=str(want.value).split(",")[0][:30].replace("(", r"\(")):
                D.exponential(x, **args)
        with pytest.raises(ValueError, match="noise must be one of"):
            D.report_noisy_max(x, epsilon=1.0, sensitivity=1.0, noise="cauchy")
        with pytest.raises(ValueError, match="must be finite"):
            D.exponential(da.from_array(np.array([1.0, np.nan])), epsilon=1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="must not be empty"):
            D.exponential(da.from_array(np.zeros(0)), epsilon=1.0, sensitivity=1.0)
        with pytest.raises(TypeError, match="dask array"):
            D.exponential(u, epsilon=1.0, sensitivity=1.0)
        with pytest.raises(TypeError, match="callable partition"):
            D.local_dampening(x, epsilon=1.0, sensitivity_function=dpselect.constant(3, 1.0))
        with pytest.raises(TypeError, match="utility="):
            D.exponential(dd.from_pandas(pd.DataFrame({"u": u}), npartitions=1), epsilon=1.0, sensitivity=1.0)
        with pytest.raises(ValueError, match="k must be an int <= 3"):
            D.exponential(dd.from_pandas(pd.Series(u), npartitions=2), epsilon=1.0, sensitivity=1.0, k=4)
        assert isinstance(D.exponential(x, epsilon=1.0, sensitivity=1.0, rng=0), int)
        one = D.exponential(x, epsilon=1.0, sensitivity=1.0, k=1, rng=0)   # any int k: an array, as in memory
        assert one.dtype == np.int64 and one.tolist() == [D.exponential(x, epsilon=1.0, sensitivity=1.0, rng=0)]
        out = D.exponential(x, epsilon=1.0, sensitivity=1.0, k=3, rng=0)
        assert out.dtype == np.int64 and sorted(out.tolist()) == [0, 1, 2]
        # every SPEC 7 rng form
        for r in (None, 3, [1, 2], np.random.SeedSequence(3), np.random.PCG64(3), np.random.default_rng(3),
                  np.random.Generator(np.random.MT19937(3))):
            assert D.exponential(x, epsilon=1.0, sensitivity=1.0, rng=r) in (0, 1, 2)


# ------------------------------------------------------------------------------------------------
# frequent items
# ------------------------------------------------------------------------------------------------
def _rows(seed, users, n_rows, n_items=12):
    g = np.random.default_rng(seed)
    return pd.DataFrame({"user": g.choice(users, size=n_rows),
                         "item": np.array([f"i{j}" for j in range(n_items)])[
                             np.minimum(g.zipf(1.6, size=n_rows) - 1, n_items - 1)]})


def test_bounded_counts_rule_reads_each_users_rows_only(client):
    x = _rows(1, np.arange(0, 40), 600)
    y = _rows(2, np.arange(40, 60), 300)
    both = pd.concat([x, y], ignore_index=True).sample(frac=1.0, random_state=3)

    def counts(df, nparts, c, distinct=True):
        return D.bounded_item_counts(dd.from_pandas(df, npartitions=nparts), contributions=c, distinct=distinct,
                                     rng=7)

    for c, distinct in ((2, True), (3, False)):
        cx, cy, cxy = dask.compute(counts(x, 3, c, distinct), counts(y, 2, c, distinct),
                                   counts(both, 5, c, distinct))
        # one user's kept rows do not depend on the others (nor on the partitioning)
        assert cxy.sort_index().to_dict() == cx.add(cy, fill_value=0).astype(np.int64).sort_index().to_dict()
        per_user = x.drop_duplicates() if distinct else x
        assert cx.sum() == per_user.groupby("user").size().clip(upper=c).sum()
    # unbounded and distinct: the number of users per item
    ref = x.drop_duplicates().groupby("item").size()
    assert counts(x, 3, 100).compute().sort_index().to_dict() == ref.sort_index().to_dict()


def test_frequent_items_law_and_domain():
    df = _rows(4, np.arange(30), 400)
    rows = dd.from_pandas(df, npartitions=3)
    domain = [f"i{j}" for j in range(14)]  # two items nobody holds
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpselect.PrivacyLeakWarning)
        for seed in range(2):
            got = D.frequent_items(rows, epsilon=1.0, contributions=3, k=3, items=domain, rng=seed)
            # the same law and bits as the in-memory selector on the bounded counts (after the salt draw)
            gen = np.random.default_rng(seed)
            cnt = D.bounded_item_counts(rows, contributions=3, items=domain, rng=gen).compute()
            u = cnt.reindex(domain, fill_value=0).to_numpy(float)
            want = dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, monotonic=True, k=3, rng=gen)
            assert got.tolist() == [domain[i] for i in want]
        users_per_item = df.drop_duplicates().groupby("item").size()
        best = D.frequent_items(rows, epsilon=1e9, contributions=50, items=domain, rng=0)
        assert users_per_item[best] == users_per_item.max()
        assert D.frequent_items(rows, epsilon=1e9, contributions=50, items=domain, mechanism="RNM", rng=0,
                                distinct=False) == df.groupby("item").size().idxmax()
    with pytest.warns(dpselect.PrivacyLeakWarning, match="items"):
        assert D.frequent_items(rows, epsilon=1.0, contributions=2, mechanism="PF", rng=0) in domain
    with pytest.raises(ValueError, match="contributions must be an int >= 1"):
        D.frequent_items(rows, epsilon=1.0, contributions=0, items=domain)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        D.frequent_items(rows, epsilon=1.0, contributions=1, items=domain, mechanism="LD")


def _counts(df, c, nparts=2, rng=0, **kw):
    return D.bounded_item_counts(dd.from_pandas(df, npartitions=nparts), contributions=c, rng=rng, **kw).compute()


def test_rows_without_a_user_id_are_dropped_never_counted():
    """Issue 21 P7: ten NaN-user rows with c = 1 counted 10; None ids raised. Now such rows reach no count, so the
    counts equal those of the data without them (the output does not depend on them)."""
    assert _counts(pd.DataFrame({"user": [np.nan] * 10, "item": ["a"] * 10}), 1).to_dict() == {}
    base = pd.DataFrame({"user": [1, 1, 2, 3, 3, 3], "item": ["a", "b", "a", "c", "a", "b"]})
    want = _counts(base, 2).sort_index().to_dict()
    for missing in (None, np.nan, pd.NA):
        extra = pd.DataFrame({"user": [missing] * 7, "item": ["z", "a", "a", "b", "z", "z", "c"]})
        both = pd.concat([base.astype({"user": object}), extra], ignore_index=True)
        got = _counts(both, 2)
        assert got.sort_index().to_dict() == want and "z" not in got.index
    floats = base.astype({"user": float})
    floats.loc[len(floats)] = [np.nan, "z"]
    assert _counts(floats, 2).sort_index().to_dict() == want


def test_user_ids_are_compared_by_value():
    """Issue 21 P7: 1 and '1' counted as one user, 2 and 2.0 as two (dask's string conversion of object columns).
    By value: 2, 2.0, np.int8(2), True-as-1 are one user; 1 and '1' two; -0.0 and 0.0 one."""
    mixed = pd.DataFrame({"user": [1, "1", 2, 2.0, np.int8(2), -0.0, 0.0],
                          "item": ["a", "a", "b", "b", "b", "c", "c"]})
    with dask.config.set({"dataframe.convert-string": False}):   # keep the object column as given
        assert _counts(mixed, 5).sort_index().to_dict() == {"a": 2, "b": 1, "c": 1}
        assert _counts(mixed, 5, distinct=False).sort_index().to_dict() == {"a": 2, "b": 3, "c": 2}
    floats = pd.DataFrame({"user": [2.0, 2.0, -0.0, 0.0], "item": ["a", "a", "b", "b"]})
    assert _counts(floats, 1, distinct=False).sort_index().to_dict() == {"a": 1, "b": 1}


def test_contribution_bound_samples_per_user():
    """Issue 21 item 8: 1,000 users hold 'popular' and x0..x19; c = 2 keeps 2 of each user's 21 items. With the
    user left out of the hash every user kept the same two items ('popular' counted 1..919 across rng 0..5)."""
    items = ["popular"] + [f"x{j}" for j in range(20)]
    df = pd.DataFrame({"user": np.repeat(np.arange(1000), 21), "item": np.tile(items, 1000)})
    rows = dd.from_pandas(df, npartitions=4)
    for r in range(3):
        cnt = D.bounded_item_counts(rows, contributions=2, rng=r).compute().reindex(items, fill_value=0)
        assert cnt.sum() == 2000
        # each count ~ Binomial(1000, 2/21): mean 95.2, sd 9.3; a common choice would put 1000 on two items
        assert cnt.between(95 - 45, 95 + 45).all(), cnt.to_dict()
        pairs = D.bounded_item_counts(rows, contributions=2, rng=r)   # the same rng draws the same salt
        assert pairs.compute().reindex(items).tolist() == cnt.tolist()


def test_frequent_items_noise_and_items_errors():
    rows = dd.from_pandas(pd.DataFrame({"user": [1, 2], "item": ["a", "b"]}), npartitions=1)
    kw = dict(epsilon=1.0, contributions=1, items=["a", "b"], rng=0)
    with pytest.raises(ValueError, match=r"noise='gumbel' applies only to mechanism='report_noisy_max'"):
        D.frequent_items(rows, noise="gumbel", **kw)
    with pytest.raises(ValueError, match=r"noise='laplace' applies only to mechanism='report_noisy_max'"):
        D.frequent_items(rows, mechanism="PF", noise="laplace", **kw)
    with pytest.raises(ValueError, match="noise must be one of 'laplace', 'gumbel', 'exponential', got 'x'"):
        D.frequent_items(rows, mechanism="RNM", noise="x", **kw)
    # report-noisy-max honours noise: the same draw as the in-memory selector with that noise
    for noise in ("laplace", "gumbel", "exponential"):
        gen = np.random.default_rng(3)
        D.bounded_item_counts(rows, contributions=1, items=["a", "b"], rng=gen)   # the salt draw
        want = dpselect.report_noisy_max([1.0, 1.0], epsilon=1.0, sensitivity=1.0, monotonic=True, noise=noise,
                                         rng=gen)
        assert D.frequent_items(rows, epsilon=1.0, contributions=1, items=["a", "b"], mechanism="RNM", noise=noise,
                                rng=3) == ["a", "b"][want]
    kw.pop("items")
    for items, exc, msg in (("ab", TypeError, "items must be a list-like .* got str 'ab'"),
                            (5, TypeError, "items must be a list-like .* got int 5"),
                            (["a", "a"], ValueError, "items must not repeat an item, got 'a' twice"),
                            ([], ValueError, "items must not be empty"),
                            (["a", None], ValueError, "items must not hold a missing value")):
        with pytest.raises(exc, match=msg):
            D.frequent_items(rows, items=items, **kw)
    with pytest.raises(TypeError, match="items must be a list-like"):
        D.bounded_item_counts(rows, contributions=1, items="ab")


def test_frequent_items_on_cluster(client):
    df = _rows(5, np.arange(50), 2000)
    got = D.frequent_items(dd.from_pandas(df, npartitions=4), epsilon=1e9, contributions=20, k=2,
                           items=[f"i{j}" for j in range(12)], rng=1)
    users_per_item = df.drop_duplicates().groupby("item").size()
    assert sorted(users_per_item[got].tolist()) == sorted(users_per_item.nlargest(2).tolist())


# ------------------------------------------------------------------------------------------------
# graph statistics and the Pareto score
# ------------------------------------------------------------------------------------------------
def test_degree_and_sensitivities_match_in_memory(client):
    g = np.random.default_rng(6)
    u, v = g.integers(0, 60, 500), g.integers(0, 60, 500)  # self-loops and repeated edges included
    nodes = np.arange(65)  # five isolated nodes
    edges = dd.from_pandas(pd.DataFrame({"source": u, "target": v}), npartitions=4)
    graph = dpselect.graphs.from_edges(u, v, nodes=nodes, warn=False)
    deg = D.degree(edges, nodes=nodes).compute()
    ref = pd.Series(dpselect.utilities.graph.degree(graph).astype(np.int64), index=graph.node_ids)
    assert deg.sort_index().to_dict() == ref.sort_index().to_dict()
    with pytest.warns(dpselect.PrivacyLeakWarning, match="nodes"):
        seen = D.degree(edges).compute()
    assert seen.sort_index().to_dict() == ref[ref > 0].sort_index().to_dict()
    d = deg.sort_index().to_numpy()
    frame = pd.DataFrame({"degree": d})
    for t in (0, 3, 9):
        assert np.array_equal(D.egocentric_density_sensitivity(frame)(t),
                              dpselect.utilities.graph.egocentric_density_sensitivity(d)(t))
        assert np.array_equal(D.degree_sensitivity(frame)(t), dpselect.utilities.graph.degree_sensitivity(d)(t))
    assert D.max_degree(deg, max_degree=int(d.max())) == int(d.max())
    with pytest.raises(ValueError, match="max_degree"):
        D.max_degree(deg, max_degree=int(d.max()) - 1)
    with pytest.warns(dpselect.PrivacyLeakWarning, match="max_degree") as rec:   # omitted: read from the data
        line = sys._getframe().f_lineno + 1
        assert D.max_degree(deg) == int(d.max())
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)   # the warning names the user's line
    # local dampening on the degree frame with the degree-based δ (δ = 1: the exponential mechanism)
    dframe = dd.from_pandas(deg.sort_index().to_frame("degree").astype(float), npartitions=3)
    assert D.local_dampening(dframe, utility="degree", epsilon=1e6, sensitivity_function=D.degree_sensitivity,
                             rng=0) == int(np.argmax(d))


def _edges(u, v, nparts=2):
    return dd.from_pandas(pd.DataFrame({"source": u, "target": v}), npartitions=nparts)


def test_degree_public_node_set_is_enforced():
    """Issue 21 item 11: nodes [0, 1] with edges (0,1), (1,2) gave {0: 1, 1: 2}; NaN ids were cast to int64."""
    with pytest.raises(ValueError, match=r"edge \(1, 2\) has an endpoint outside the public node set "
                                         r"\(nodes=/n_nodes=, 2 nodes\)"):
        D.degree(_edges([0, 1], [1, 2]), nodes=[0, 1]).compute()
    with pytest.raises(ValueError, match="edge .* outside the public node set"):
        D.degree(_edges([0, 1], [1, 2]), n_nodes=2).compute()
    assert D.degree(_edges([0, 1], [1, 2]), n_nodes=4).compute().sort_index().to_dict() == {0: 1, 1: 2, 2: 1, 3: 0}
    assert D.degree(_edges([0.0, 1.0], [1.0, 2.0]), nodes=[2.0, 1, 0]).compute().sort_index().to_dict() == \
        {0: 1, 1: 2, 2: 1}
    with pytest.raises(ValueError, match=r"target='target' must hold integer node ids, got nan \(a missing"):
        D.degree(_edges([0.0, 1.0], [1.0, np.nan]), nodes=[0, 1, 2]).compute()
    with pytest.raises(ValueError, match=r"source='source' must hold integer node ids, got 0.5"):
        D.degree(_edges([0.5, 1.0], [1.0, 2.0]), n_nodes=3).compute()
    with pytest.raises(ValueError, match="not both"):
        D.degree(_edges([0], [1]), nodes=[0, 1], n_nodes=2)


def test_degree_string_ids_are_clear_errors():
    """Issue 21 item 14: string node ids and a string nodes= name the parameter."""
    with pytest.raises(TypeError, match=r"source='source' must be a column of integer node ids, got dtype"):
        D.degree(_edges(["a", "b"], ["b", "c"]), nodes=[0, 1])
    with pytest.raises(TypeError, match=r"nodes must hold integer node ids \(int64\), got dtype <U1 \(e.g. 'a'\)"):
        D.degree(_edges([0], [1]), nodes=["a", "b"])
    with pytest.raises(TypeError, match="nodes must be a list-like of integer node ids, got str 'ab'"):
        D.degree(_edges([0], [1]), nodes="ab")
    with pytest.raises(ValueError, match="nodes must not repeat a node id, got 1 twice"):
        D.degree(_edges([0], [1]), nodes=[0, 1, 1])
    with pytest.raises(ValueError, match="n_nodes must be an int >= 1"):
        D.degree(_edges([0], [1]), n_nodes=0)


def test_routine_shuffle_logs_are_filtered_others_kept():
    import logging

    from dpselect.dask._logs import _ROUTINE, SHUFFLE_LOGGER

    log = logging.getLogger(SHUFFLE_LOGGER)

    def rec(msg, args):
        return logging.LogRecord(SHUFFLE_LOGGER, logging.WARNING, __file__, 0, msg, args, None)

    assert not log.filter(rec(_ROUTINE[0], ("id", ("shuffle-transfer-id", 0), "tcp://w")))
    assert not log.filter(rec(_ROUTINE[1], ("id", "task-finished-1")))
    assert log.filter(rec("Shuffle %s restarted due to stimulus '%s", ("id", "x")))
    D.quiet_routine_shuffle_logs(False)
    try:
        assert log.filter(rec(_ROUTINE[1], ("id", "task-finished-1")))
    finally:
        D.quiet_routine_shuffle_logs()


def test_shuffles_on_a_cluster_log_no_routine_warnings(client, capfd):
    import logging

    handler_records = []

    class Keep(logging.Handler):
        def emit(self, record):
            handler_records.append(record)

    log = logging.getLogger("distributed.shuffle._scheduler_plugin")
    level, h = log.level, Keep(logging.DEBUG)
    log.setLevel(logging.DEBUG)
    log.addHandler(h)
    try:
        df = _rows(7, np.arange(30), 300)
        D.frequent_items(dd.from_pandas(df, npartitions=3), epsilon=1.0, contributions=2,
                         items=[f"i{j}" for j in range(12)], rng=0)
        D.degree(_edges([0, 1, 2], [1, 2, 0]), n_nodes=3).compute()
    finally:
        log.removeHandler(h)
        log.setLevel(level)
    assert [r.getMessage() for r in handler_records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize("nparts", [1, 6])
def test_pareto_score_equals_in_memory_with_ties(nparts):
    g = np.random.default_rng(nparts)
    for n, hi in ((200, 6), (300, 40)):
        U = g.integers(0, hi, size=(n, 2)).astype(float)
        frame = dd.from_pandas(pd.DataFrame(U, columns=["a", "b"]), npartitions=nparts)
        got = D.pareto_score(frame).compute().sort_index().to_numpy()
        assert np.array_equal(got, dpselect.pareto_score(U))


def test_pareto_score_on_cluster(client):
    U = np.random.default_rng(9).integers(0, 9, size=(400, 2)).astype(float)
    frame = dd.from_pandas(pd.DataFrame(U, columns=["x", "y"], index=np.arange(400) * 3), npartitions=5)
    got = D.pareto_score(frame, columns=["x", "y"]).compute().sort_index().to_numpy()
    assert np.array_equal(got, dpselect.pareto_score(U))
    with pytest.raises(ValueError, match="two objective columns"):
        D.pareto_score(dd.from_pandas(pd.DataFrame({"a": [1.0]}), npartitions=1))


def test_same_output_as_in_memory_for_any_words(monkeypatch):
    """For a fixed vector of first words (here with many extreme cells: U within 2^-64 of 0 or 1, where
    the float bounds are loose, and repeated words), the distributed path returns exactly what the
    in-memory exact sampler returns on the same words, for every chunking."""
    from fractions import Fraction

    from dpselect.mechanisms import scaled_scores
    from dpselect.sampling import noisy_top_k

    g = np.random.default_rng(15)
    extremes = np.array([0, 1, (1 << 44) - 1, (1 << 64) - 1, (1 << 64) - (1 << 44), 1 << 63, 12345],
                        dtype=np.uint64)
    u = np.round(g.normal(size=300) * 2.0, 1)  # many equal utilities
    for trial in range(40):
        words = g.integers(0, np.iinfo(np.uint64).max, size=u.size, dtype=np.uint64, endpoint=True)
        hit = g.random(u.size) < 0.1
        words[hit] = g.choice(extremes, size=int(hit.sum()))
        k = (1, 4)[trial % 2]
        a, err, S = scaled_scores(u, 0.0, 1.0, 1.0, 2 * k)

        def exact(r):
            return Fraction(1, 2 * k) * (Fraction(float(u[r])) - Fraction(S))

        rest = np.random.default_rng(trial)
        rest.bit_generator.advance(u.size)  # the distributed path continues the stream after the n words
        want = noisy_top_k(a, err, k=k, rng=_select._Replay(words, rest), noise="gumbel", exact_score=exact).tolist()
        monkeypatch.setattr(_select._Streams, "words",
                            lambda self, p, offset, size, rounds, w=words: [w[offset:offset + size]])
        chunks = (7, 50, 300)[trial % 3]
        blocks = _select._Blocks([u[i:i + chunks] for i in range(0, u.size, chunks)],
                                 list(range(0, u.size, chunks)), u.size, False, None)
        got = _select._execute(blocks, eps=1.0, delta=1.0, mult_per_pick=2, k=k, noise="gumbel",
                               rng=np.random.default_rng(trial), eager=True)
        assert np.atleast_1d(got).tolist() == want, (trial, chunks)


def test_unknown_chunk_sizes_give_global_positions(client):
    u = np.arange(50.0)
    x = da.from_array(u, chunks=7)
    y = x[x > 9]  # unknown chunk sizes: per-partition streams, positions from the sizes seen
    assert np.isnan(y.chunks[0][0])
    assert D.exponential(y, epsilon=1e6, sensitivity=1.0, k=3, rng=0).tolist() == [39, 38, 37]
