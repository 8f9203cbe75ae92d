"""dpselect.dask: no error raised after the data are read names a private quantity (issue 33, 2(d)).

A generator over the error classes of ``dpselect.dask`` that depend on the data: for each, every dataset of a
small exhaustive domain that triggers it (all sizes up to 2 or 3, both neighbour models: a dataset and each of its
add/remove and replace-one neighbours are in the domain) raises, and all raise **one** message, so no message can
tell two neighbours apart. Where the data cannot fail any more (records outside public quantile bins, rows of any
user id), every dataset of the domain completes.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import dpselect  # noqa: E402
import dpselect.dask as D  # noqa: E402


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks",
                          "dataframe.convert-string": False}):
        yield


def _datasets(values, max_size, keep):
    """Every tuple over ``values`` of size 1..max_size that ``keep`` accepts (all the add/remove and replace-one
    neighbours within the domain are in it too)."""
    return [t for n in range(1, max_size + 1) for t in itertools.product(values, repeat=n) if keep(t)]


def _messages(call, datasets):
    """The set of 'Type: message' over the datasets; every dataset must raise."""
    seen = set()
    for data in datasets:
        try:
            call(data)
        except (TypeError, ValueError) as exc:
            seen.add(f"{type(exc).__name__}: {exc}")
        else:
            raise AssertionError(f"{data!r} did not raise")
    return seen


def _one_message(call, datasets, must_contain):
    seen = _messages(call, datasets)
    assert len(seen) == 1, sorted(seen)[:4]
    assert must_contain in next(iter(seen))


NONFINITE = _datasets([0.0, 1.5, np.nan, np.inf, -np.inf], 3, lambda t: not np.all(np.isfinite(t)))


def _array(t):
    return da.from_array(np.asarray(t, dtype=float), chunks=2)


def _series(t):
    return dd.from_pandas(pd.Series(np.asarray(t, dtype=float), index=[f"c{i}" for i in range(len(t))]),
                          npartitions=2)


@pytest.mark.parametrize("kind", ["array", "series", "frame"])
def test_selectors_non_finite_utility_one_message(kind):
    """Was 'the utility of 'c1' is nan' (which candidate, and its value)."""
    def call(t):
        if kind == "array":
            return D.exponential(_array(t), epsilon=1.0, sensitivity=1.0, rng=0)
        if kind == "series":
            return D.report_noisy_max(_series(t), epsilon=1.0, sensitivity=1.0, rng=0)
        return D.permute_and_flip(_series(t).to_frame("u"), utility="u", epsilon=1.0, sensitivity=1.0, rng=0)

    _one_message(call, NONFINITE, "utilities must be finite")


def test_local_dampening_sensitivity_errors_one_message():
    """A δ whose global sensitivity differs between partitions (was: the two values, read from private rows), and
    a δ for the wrong number of rows (was: the partition's size)."""
    vals = _datasets([0.0, 1.0, 2.0], 3, lambda t: len(t) >= 2 and t[0] != t[1])

    def gs_from_data(blk):  # a (wrong) δ whose global sensitivity is read from the partition
        return dpselect.constant(len(blk), 1.0 + float(np.max(blk)))

    def call(t):
        return D.local_dampening(da.from_array(np.asarray(t), chunks=1), epsilon=1.0, rng=0,
                                 sensitivity_function=gs_from_data)

    _one_message(call, vals, "one global sensitivity for every partition")

    def call_size(t):
        return D.local_dampening(_series(t), epsilon=1.0, rng=0,
                                 sensitivity_function=lambda blk: dpselect.constant(len(blk) + 1, 1.0))

    _one_message(call_size, _datasets([0.0, 1.0], 3, lambda t: True), "that partition's rows")


def _edges(pairs, dtype=None):
    frame = pd.DataFrame({"source": [a for a, _ in pairs], "target": [b for _, b in pairs]})
    return dd.from_pandas(frame.astype(dtype) if dtype else frame, npartitions=2)


def test_degree_errors_one_message():
    """Was: the edge '(1, 3)' outside the node set, the non-integer endpoint '0.5' / 'nan', the uint64 id."""
    graphs = _datasets([(0, 3), (3, 1), (1, 0), (3, 3), (4, 3)], 2, lambda t: any(3 in e for e in t))
    _one_message(lambda g: D.degree(_edges(g), n_nodes=3).compute(), graphs, "outside the public node set")
    bad = _datasets([0.0, 1.0, 0.5, np.nan], 2, lambda t: any(v != round(v) if v == v else True for v in t))
    _one_message(lambda t: D.degree(_edges([(0.0, v) for v in t]), n_nodes=2).compute(), bad,
                 "must hold integer node ids")
    big = [(2 ** 63,), (2 ** 64 - 1,), (0, 2 ** 63 + 5)]
    _one_message(lambda t: D.degree(_edges([(0, v) for v in t], dtype=np.uint64), n_nodes=2).compute(), big,
                 "must hold int64 node ids")


def test_max_degree_and_pareto_errors_one_message():
    """Was: 'a node has degree 4' (the graph's maximum degree) and 'objectives[1, 0] = nan' (an entry, its value),
    numpy's 'could not convert string to float: ...' (a record)."""
    degs = _datasets([1, 2, 3, 4], 3, lambda t: max(t) > 2)
    _one_message(lambda t: D.max_degree(dd.from_pandas(pd.Series(t), npartitions=2), max_degree=2), degs,
                 "a node has a larger degree")
    pts = _datasets([0.0, 1.0, np.nan, np.inf], 2, lambda t: not np.all(np.isfinite(t)))

    def pareto(t):
        frame = pd.DataFrame({"a": np.asarray(t, dtype=float), "b": np.arange(len(t), dtype=float)})
        return D.pareto_score(dd.from_pandas(frame, npartitions=2)).compute()

    _one_message(pareto, pts, "objectives must be finite")
    words = _datasets(["x", "1.5", "nan?"], 2, lambda t: any(not v.replace(".", "").isdigit() for v in t))
    _one_message(lambda t: D.pareto_score(dd.from_pandas(pd.DataFrame({"a": pd.Series(t, dtype=object),
                                                                        "b": 1.0}), npartitions=1)).compute(),
                 words, "objectives must hold real numbers")


def test_quantiles_errors_one_message_and_bins_complete_everywhere():
    """Non-finite records: one message. Records outside the public bins (was: '2 value(s) of series lie outside
    the bins', a private count): every dataset of the domain completes."""
    _one_message(lambda t: D.quantiles(_array(t), [0.5], epsilon=1.0, rng=0), NONFINITE,
                 "series must hold finite values")
    for t in _datasets([-5.0, 0.0, 15.0, 50.0], 3, lambda t: True):
        for nb in ("replace_one", "add_remove"):
            out = D.quantiles(_series(t), [0.5], epsilon=1.0, bins=[0.0, 10.0, 20.0], bounds=(0.0, 20.0),
                              neighbours=nb, rng=0)
            assert out.shape == (1,) and 0.0 <= out[0] <= 20.0


def test_frequent_items_complete_on_every_dataset_of_a_mixed_domain():
    """Rows of any user id (numbers of several types, a string, missing ids) and items in or out of the public
    domain: every dataset completes, with a domain label; without rows of any item (items= omitted) one message."""
    from decimal import Decimal

    ids = [7, Decimal(7), "7", None]
    rowsets = _datasets(list(itertools.product(ids, ["a", (1, 2)])), 2, lambda t: t[0][0] != "7")
    for rows in rowsets:
        frame = pd.DataFrame({"user": pd.Series([u for u, _ in rows], dtype=object),
                              "item": pd.Series([i for _, i in rows], dtype=object)})
        got = D.frequent_items(dd.from_pandas(frame, npartitions=2), epsilon=1.0, contributions=1,
                               items=["a", (1, 2), 2.5], rng=0)
        assert got in ("a", (1, 2), 2.5)
    none = _datasets([None, np.nan], 2, lambda t: True)
    _one_message(lambda t: D.frequent_items(dd.from_pandas(pd.DataFrame({"user": pd.Series(t, dtype=object),
                                                                          "item": ["a"] * len(t)}), npartitions=1),
                                            epsilon=1.0, contributions=1, rng=0), none, "rows has no item")


def test_frequent_items_leak_warning_one_message():
    """items= omitted: the PrivacyLeakWarning named the number of items seen (a private count); now one message."""
    import warnings

    seen = set()
    for t in _datasets(["a", "b", "c"], 3, lambda t: True):
        frame = pd.DataFrame({"user": np.arange(len(t)), "item": list(t)})
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            D.frequent_items(dd.from_pandas(frame, npartitions=2), epsilon=1.0, contributions=1, rng=0)
        seen |= {str(x.message) for x in w if issubclass(x.category, dpselect.PrivacyLeakWarning)}
    assert len(seen) == 1, sorted(seen)
    few = _datasets(["a", "b"], 2, lambda t: True)    # one or two items seen, k = 3: one message

    def call(t):
        frame = pd.DataFrame({"user": np.arange(len(t)), "item": list(t)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpselect.PrivacyLeakWarning)
            D.frequent_items(dd.from_pandas(frame, npartitions=2), epsilon=1.0, contributions=1, k=3, rng=0)

    _one_message(call, few, "k=3 is more than the number of items seen")
