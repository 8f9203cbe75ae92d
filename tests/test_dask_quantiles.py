"""dpselect.dask.quantiles: a reduction to a grouped database, then the law of dpselect.quantiles (same seed,
same values), bounded and unbounded, exact distinct values or public bins."""
from __future__ import annotations

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import dpselect  # noqa: E402
import dpselect.dask as D  # noqa: E402
from dpselect.dask._quantiles import _summarise  # noqa: E402


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    return np.round(rng.lognormal(3.0, 1.0, size=n), 1)     # ties, heavy tail, positive


@pytest.mark.parametrize("bounds, method", [(None, "auto"), ((0.0, 5000.0), "independent"),
                                            ((0.0, 5000.0), "recursive")])
@pytest.mark.parametrize("kind", ["array", "series"])
def test_same_values_as_in_memory(bounds, method, kind):
    x = _data()
    qs = [0.9, 0.1, 0.5, 0.25]
    if kind == "array":
        s = da.from_array(x, chunks=700)
    else:
        s = dd.from_pandas(pd.Series(x), npartitions=7)
    v, c = np.unique(x, return_counts=True)
    for seed in range(3):
        out = D.quantiles(s, qs, epsilon=0.5, bounds=bounds, method=method, rng=seed)
        mem = dpselect.quantiles(v, qs, epsilon=0.5, bounds=bounds, method=method, counts=c, rng=seed)
        assert out.tolist() == mem.tolist()
    # the grouped summary is the data's own law: the raw in-memory call gives the same values too
    assert D.quantiles(s, qs, epsilon=0.5, bounds=bounds, method=method, rng=9).tolist() == \
        dpselect.quantiles(x, qs, epsilon=0.5, bounds=bounds, method=method, rng=9).tolist()


def test_public_bins():
    x = _data()
    edges = np.linspace(0.0, 4000.0, 4001)
    s = dd.from_pandas(pd.Series(x), npartitions=5)
    v, c = _summarise(s, edges)
    h, _ = np.histogram(x, bins=edges)
    assert v.tolist() == edges[:-1][h > 0].tolist() and c.tolist() == h[h > 0].tolist()
    out = D.quantiles(s, [0.5], epsilon=1.0, bins=edges, rng=1)
    assert out.tolist() == dpselect.quantiles(v, [0.5], epsilon=1.0, counts=c, rng=1).tolist()
    assert abs(out[0] - np.median(x)) < 2.0


def test_records_outside_the_bins_are_clipped_into_them():
    """Issue 33: a record outside the public bins raised, naming how many there were (a private count). Now it is
    clipped into the first or last bin, a fixed map of each record as the in-memory quantiles clip into ``bounds``:
    the release is dpselect.quantiles on the clipped records rounded down to the bin edges, for every seed."""
    x = _data(3000)                              # lognormal: about a third of the records above 30
    edges = np.linspace(5.0, 30.0, 26)
    s = dd.from_pandas(pd.Series(x), npartitions=4)
    v, c = _summarise(s, edges)
    clipped = np.clip(x, 5.0, 30.0)
    idx = np.minimum(np.searchsorted(edges, clipped, side="right") - 1, edges.size - 2)   # last bin closed
    rounded = edges[idx]
    want_v, want_c = np.unique(rounded, return_counts=True)
    assert v.tolist() == want_v.tolist() and c.tolist() == want_c.tolist()
    assert c[0] == np.count_nonzero(x < 6.0) and c[-1] == np.count_nonzero(x >= 29.0)
    for seed in range(3):
        for bounds in (None, (0.0, 40.0)):
            out = D.quantiles(s, [0.1, 0.5, 0.9], epsilon=1.0, bins=edges, bounds=bounds, rng=seed)
            assert out.tolist() == dpselect.quantiles(rounded, [0.1, 0.5, 0.9], epsilon=1.0, bounds=bounds,
                                                      rng=seed).tolist()


def test_accountant_and_validation():
    x = _data(500)
    s = da.from_array(x, chunks=100)
    acc = dpselect.Accountant(epsilon=1.0, neighbours="replace_one")
    D.quantiles(s, [0.5], epsilon=0.4, rng=0, accountant=acc)
    assert acc.history[-1].label == "quantiles" and acc.history[-1].guarantee == dpselect.accounting.PureDP(0.4)
    bad = da.from_array(np.array([1.0, np.nan, 2.0]), chunks=2)
    for call, exc in [(lambda: D.quantiles(s, [0.5], epsilon=-1.0, accountant=acc), ValueError),
                      (lambda: D.quantiles(s, [1.5], epsilon=0.1, accountant=acc), ValueError),
                      (lambda: D.quantiles(s, [0.5], epsilon=0.1, method="nope", accountant=acc), ValueError),
                      (lambda: D.quantiles(s, [0.5], epsilon=0.1, bins=[1.0], accountant=acc), ValueError),
                      (lambda: D.quantiles(x, [0.5], epsilon=0.1, accountant=acc), TypeError),
                      (lambda: D.quantiles(bad, [0.5], epsilon=0.1, accountant=acc), ValueError),
                      (lambda: D.quantiles(s, [0.5], epsilon=0.1, bounds=(-1e308, 1e308), accountant=acc),
                       ValueError)]:   # (values outside the bounds are clipped since issue 33; a too wide domain)
        with pytest.raises(exc):
            call()
    assert len(acc.history) == 1            # nothing refused was charged
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(dpselect.BudgetExceededError):
        D.quantiles(s, [0.5], epsilon=0.7, rng=gen, accountant=acc)
    assert gen.bit_generator.state == state


def test_values_outside_bounds_as_in_memory():
    """Values outside ``bounds`` are treated exactly as dpselect.quantiles treats them (the same values, or the
    same refusal), since the dask summary goes to it unchanged."""
    x = _data(400)
    s = da.from_array(x, chunks=100)
    for seed in range(2):
        try:
            want = dpselect.quantiles(x, [0.2, 0.5], epsilon=1.0, bounds=(0.0, 10.0), rng=seed).tolist()
        except ValueError as exc:
            with pytest.raises(ValueError) as got:
                D.quantiles(s, [0.2, 0.5], epsilon=1.0, bounds=(0.0, 10.0), rng=seed)
            assert type(got.value) is type(exc)
        else:
            assert D.quantiles(s, [0.2, 0.5], epsilon=1.0, bounds=(0.0, 10.0), rng=seed).tolist() == want
