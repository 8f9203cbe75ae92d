"""Private top-k most frequent items from a dask DataFrame of (user, item) rows."""
from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

from .._rng import check_rng
from .._validation import check_bool, check_int, check_positive
from ..exceptions import warn_public_from_data
from ..vocabulary import GLOBAL_MECHANISMS, check_mechanism

__all__ = ["frequent_items", "bounded_item_counts"]

_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: x -> x·_MIX is a bijection of uint64


def _bound_partition(part: Any, user: str, item: str, contributions: int, distinct: bool, salt: int) -> Any:
    """Keep at most ``contributions`` rows of each user (all of whose rows are in this partition).

    Rule: the user's (distinct) rows ordered by a salted hash of the item, ties by the item itself; the
    first ``contributions`` are kept. It reads the user's own rows only (and the public salt), so adding
    or removing another user never changes what this user contributes.
    """
    import pandas as pd

    n = part.shape[0]
    if n == 0:
        return part[[user, item]]
    users = part[user].to_numpy()
    items = part[item].to_numpy()
    h = pd.util.hash_pandas_object(part[item], index=False).to_numpy(dtype=np.uint64)
    with np.errstate(over="ignore"):
        key = (h ^ np.uint64(salt)) * _MIX
    order = np.lexsort((key, users))
    u_s, k_s = users[order], key[order]
    same_user = np.empty(n, dtype=bool)
    same_user[0] = False
    same_user[1:] = u_s[1:] == u_s[:-1]
    same_key = np.zeros(n, dtype=bool)
    same_key[1:] = same_user[1:] & (k_s[1:] == k_s[:-1])
    i_s = items[order]
    if np.any(same_key[1:] & (i_s[1:] != i_s[:-1])):  # a hash collision between two items: ties by item
        order = np.lexsort((items, key, users))
        u_s, k_s, i_s = users[order], key[order], items[order]
        same_user[1:] = u_s[1:] == u_s[:-1]
        same_key[1:] = same_user[1:] & (k_s[1:] == k_s[:-1])
    valid = np.ones(n, dtype=bool)
    if distinct:  # equal (user, item) rows are adjacent now: keep the first of each
        valid[1:] = ~(same_key[1:] & (i_s[1:] == i_s[:-1]))
    # rank of each valid row within its user: running count minus the count at the user's first row
    csum = np.cumsum(valid)
    starts = np.flatnonzero(~same_user)
    first = np.repeat(csum[starts] - valid[starts], np.diff(np.append(starts, n)))
    keep = valid & (csum - first <= contributions)
    return part[[user, item]].iloc[np.sort(order[keep])]


def bounded_item_counts(rows: Any, *, contributions: int, user: str = "user", item: str = "item",
                        distinct: bool = True, items: Sequence[Hashable] | None = None,
                        rng: np.random.Generator | np.random.BitGenerator | np.random.SeedSequence | int | None = None,
                        ) -> Any:
    """Lazy dask Series item -> count after bounding every user's contribution to ``contributions`` rows.

    ``distinct=True`` counts each (user, item) pair once (the number of users per item); else rows.
    ``items``: the public candidate domain; rows of other items are dropped *before* the bounding. Not
    private by itself (exact counts): feed it to a selector, as :func:`frequent_items` does.

    >>> import dask.dataframe as dd, pandas as pd
    >>> rows = dd.from_pandas(pd.DataFrame({"user": [1, 1, 1, 2], "item": ["a", "b", "a", "a"]}), npartitions=2)
    >>> bounded_item_counts(rows, contributions=5, rng=0).compute().sort_index().to_dict()
    {'a': 2, 'b': 1}
    """
    import dask.dataframe as dd
    import pandas as pd

    if not isinstance(rows, dd.DataFrame):
        raise TypeError(f"rows must be a dask DataFrame of (user, item) rows, got {type(rows).__name__}")
    for name, col in (("user", user), ("item", item)):
        if col not in rows.columns:
            raise ValueError(f"{name}={col!r} is not a column of rows (columns: {list(rows.columns)})")
    c = check_int(contributions, "contributions", minimum=1)
    distinct = check_bool(distinct, "distinct")
    gen = check_rng(rng)
    salt = int(gen.integers(0, 2 ** 63))
    frame = rows[[user, item]]
    if items is not None:
        frame = frame[frame[item].isin(list(pd.Index(items)))]
    frame = frame.shuffle(on=user)  # every user's rows in one partition
    meta = frame._meta[[user, item]]
    kept = frame.map_partitions(_bound_partition, user, item, c, distinct, salt, meta=meta)
    return kept[item].value_counts()


def frequent_items(
    rows: Any,
    *,
    epsilon: float,
    contributions: int,
    k: int | None = None,
    items: Sequence[Hashable] | None = None,
    user: str = "user",
    item: str = "item",
    distinct: bool = True,
    mechanism: str = "exponential",
    noise: str = "laplace",
    rng: np.random.Generator | np.random.BitGenerator | np.random.SeedSequence | int | None = None,
) -> Any:
    """Private top-k most frequent items of a dask DataFrame of (user, item) rows (ε-DP, user level).

    What it selects: the item (``k`` omitted) or the k items (an array, in the order picked) with the
    largest counts, where every user contributes at most ``contributions`` = c rows, chosen by a rule
    that reads that user's rows only (a salted hash of the item; the salt comes from ``rng``).

    Privacy: ε-DP for **add/remove one user** (all of that user's rows). With ``distinct=True`` (default)
    an item counts users, so one user moves each count by at most 1: Δu = 1 per item (the count vector
    moves by at most c in L1), and all counts move in the same direction (``monotonic``: ε·u/Δu). With
    ``distinct=False`` rows are counted and a user may put all c rows on one item: **Δu = c**. k picks
    cost ε/k each (ε in total). ``mechanism``: exponential (default), permute_and_flip or
    report_noisy_max (with ``noise=``), sampled exactly (:mod:`dpselect.sampling`).

    The candidate domain ``items`` is public: give it. When it is omitted, the items seen in the data
    are the candidates and :class:`dpselect.PrivacyLeakWarning` is emitted: an item that only one user
    holds can be released only when that user is present, which no ε covers. Reading the domain from
    the data is safe only when every item of the public domain is known to occur whatever any single
    user does (e.g. each item has a row from a public, non-private source), so that the items seen
    *are* the public domain.

    The counts (one number per item of the domain) are gathered on the client and selected there by the
    in-memory selector (the same law as :mod:`dpselect.dask`'s selectors).

    >>> import dask.dataframe as dd, pandas as pd
    >>> df = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4], "item": ["a", "b", "a", "c", "a", "b", "c"]})
    >>> rows = dd.from_pandas(df, npartitions=2)
    >>> frequent_items(rows, epsilon=1e6, contributions=2, items=["a", "b", "c", "d"], rng=0)
    'a'
    """
    import dpselect

    eps = check_positive(epsilon, "epsilon")
    mech = check_mechanism(mechanism, "mechanism", GLOBAL_MECHANISMS)
    if k is not None:
        check_int(k, "k", minimum=1)
    gen = check_rng(rng)
    c = check_int(contributions, "contributions", minimum=1)
    if items is not None:
        import pandas as pd

        domain = pd.Index(items)
        if domain.size == 0:
            raise ValueError("items must not be empty (no candidate to select)")
        if not domain.is_unique:
            raise ValueError("items must not repeat an item")
    counts = bounded_item_counts(rows, contributions=c, user=user, item=item, distinct=distinct, items=items,
                                 rng=gen).compute()
    if items is None:
        if counts.size == 0:
            raise ValueError("rows has no item: no candidate to select")
        warn_public_from_data("items (the candidate domain)", f"{counts.size} items seen in the data",
                              "dpselect.dask.frequent_items")
        domain = counts.index
    u = counts.reindex(domain, fill_value=0).to_numpy(dtype=np.float64)
    sens = 1.0 if distinct else float(c)
    kw: dict[str, Any] = {"epsilon": eps, "sensitivity": sens, "k": k, "monotonic": True, "rng": gen}
    if mech == "report_noisy_max":
        kw["noise"] = noise
    picked = getattr(dpselect, mech)(u, **kw)
    if k is None:  # one label; any int k (1 included) an array, as every selector
        lab = domain[int(picked)]
        return lab.item() if isinstance(lab, np.generic) else lab
    return np.asarray(domain[np.asarray(picked)])
