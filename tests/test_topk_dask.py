"""dpselect.dask.top_k and frequent_items(topk_method=) (issue 37): the in-memory law of dpselect.top_k, the
same charge, the same refusals."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import dpselect  # noqa: E402
import dpselect.dask as D  # noqa: E402
from dpselect import topk as T  # noqa: E402
from dpselect._contract import chi2_pvalue  # noqa: E402

U = np.array([0.0, 1.0, 0.5, 0.8])


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.mark.parametrize("method,noise", [("peeling", "gumbel"), ("peeling", "laplace"), ("one_shot", "gumbel"),
                                          ("one_shot", "laplace"), ("joint", None)])
def test_dask_top_k_has_the_in_memory_law(method, noise):
    seqs, p = T.top_k_probabilities(U, k=2, epsilon=2.0, sensitivity=1.0, method=method, noise=noise)
    gen = np.random.default_rng(zlib.crc32(f"dask{method}{noise}".encode()))
    x = da.from_array(U, chunks=2)
    pos = {tuple(s): i for i, s in enumerate(seqs.tolist())}
    draws = [pos[tuple(D.top_k(x, k=2, epsilon=2.0, sensitivity=1.0, method=method, noise=noise, rng=gen).tolist())]
             for _ in range(300)]
    assert chi2_pvalue(draws, p) > 1e-6


def test_dask_top_k_charges_as_in_memory_and_labels():
    acc, ref = dpselect.Accountant(epsilon=10.0), dpselect.Accountant(epsilon=10.0)
    s = dd.from_pandas(pd.Series(U * 100, index=["a", "b", "c", "d"]), npartitions=2)
    out = D.top_k(s, k=2, epsilon=1.0, sensitivity=1.0, method="joint", rng=0, accountant=acc)
    assert out.tolist() == ["b", "d"]
    dpselect.top_k(U, k=2, epsilon=1.0, sensitivity=1.0, method="joint", rng=0, accountant=ref)
    assert [(h.label, h.guarantee) for h in acc.history] == [(h.label, h.guarantee) for h in ref.history]
    r = D.top_k(s, k=2, epsilon=1.0, sensitivity=1.0, gaps=True, rng=0, accountant=acc)
    assert r.indices.tolist() == ["b", "d"] and r.gaps.shape == (2,) and acc.history[-1].guarantee == dpselect.PureDP(1.0)
    # the gaps' law is the in-memory one: the same draw from the same seed on the gathered utilities
    x = da.from_array(U * 100, chunks=3)
    g1 = D.top_k(x, k=2, epsilon=1.0, sensitivity=1.0, gaps=True, rng=9)
    g2 = dpselect.top_k(U * 100, k=2, epsilon=1.0, sensitivity=1.0, gaps=True, rng=9)
    assert g1.indices.tolist() == g2.indices.tolist() and g1.gaps.tolist() == g2.gaps.tolist()


def test_dask_top_k_refuses_before_the_charge():
    acc = dpselect.Accountant(epsilon=10.0)
    with pytest.raises(ValueError, match="delta must be 0 for method='joint'"):
        D.top_k(da.from_array(U, chunks=2), k=2, epsilon=1.0, sensitivity=1.0, method="joint", delta=1e-6,
                accountant=acc)
    assert len(acc.history) == 0


@pytest.mark.parametrize("method", ["joint", "one_shot"])
def test_frequent_items_topk_method(method):
    df = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4, 5, 6], "item": ["a", "b", "a", "c", "a", "b", "c", "a", "b"]})
    rows = dd.from_pandas(df, npartitions=2)
    acc = dpselect.Accountant(epsilon=100.0, neighbours="user_add_remove")
    out = D.frequent_items(rows, epsilon=50.0, contributions=2, items=["a", "b", "c", "d"], k=2, rng=0,
                           topk_method=method, accountant=acc)
    assert out.tolist() == ["a", "b"]
    assert acc.history[0].label == "dask.frequent_items"
    assert acc.history[0].guarantee == T.TOPK_METHODS[method].privacy(50.0, k=2)
    with pytest.raises(ValueError, match="needs mechanism='exponential'"):
        D.frequent_items(rows, epsilon=1.0, contributions=2, items=["a", "b"], k=2, mechanism="PF",
                         topk_method=method, accountant=acc)
    assert len(acc.history) == 1


@pytest.mark.parametrize("noise", ["laplace", "gumbel"])
@pytest.mark.parametrize("chunks", [50, 7])
def test_dask_one_shot_is_the_in_memory_draw(noise, chunks):
    # one noise draw per candidate, the first words replayed in the global order: the same picks as in memory
    # for a seed, whatever the partitioning (a peeled pass would differ)
    u = np.random.default_rng(0).normal(size=50)
    x = da.from_array(u, chunks=chunks)
    for seed in range(8):
        got = D.top_k(x, k=5, epsilon=2.0, sensitivity=1.0, method="one_shot", noise=noise, rng=seed)
        assert got.tolist() == dpselect.top_k(u, k=5, epsilon=2.0, sensitivity=1.0, method="one_shot", noise=noise,
                                              rng=seed).tolist()
