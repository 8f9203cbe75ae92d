"""Private top-k most frequent items from a dask DataFrame of (user, item) rows."""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Hashable, Sequence

import numpy as np

from .._boundary import charge, check_accountant
from ..accounting.neighbours import USER_ADD_REMOVE
from .._rng import check_rng
from ..accounting.accountant import Accountant, Event
from ..typing import RngLike
from .._validation import check_bool, check_choice, check_int, check_k, check_positive
from ..exceptions import _release_scope, warn_public_from_data
from ..registry import get_mechanism, names
from ..sampling import NOISES
from ..topk import _charge, _check_app_method, _draw

__all__ = ["frequent_items", "bounded_item_counts"]

_USER_KEY = "__dpselect_user__"   # the canonical user id column added for the shuffle and the bound
_ITEM_KEY = "__dpselect_item__"   # the item key column: the only item data that travels through the shuffle


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 in which every input bit affects every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _number_key(v: Any) -> str | None:
    """The key of a number by its exact value (Python's ``==`` across int, float, Fraction, Decimal, complex and
    numpy scalars); None for a NaN of any type (a missing id)."""
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        re, im = _number_key(v.real), _number_key(v.imag)
        if re is None or im is None:
            return None
        return re if im == "i:0" else f"c:{re},{im}"
    if isinstance(v, numbers.Integral):
        return f"i:{int(v)}"
    try:
        if v != v:                          # NaN of any type
            return None
        if v in (math.inf, -math.inf):
            return "inf:+" if v > 0 else "inf:-"
        q = Fraction(v) if not isinstance(v, numbers.Rational) else Fraction(int(v.numerator), int(v.denominator))
    except (TypeError, ValueError, OverflowError):   # a Number that is not a real value Fraction reads
        return f"o:{type(v).__module__}.{type(v).__qualname__}:{v!r}"
    return f"i:{q.numerator}" if q.denominator == 1 else f"q:{q.numerator}/{q.denominator}"


def _canonical_id(v: Any) -> str | None:
    """One string per id *value* (Python's ``==``), None for a missing one.

    Numbers compare by exact value across types: 7, 7.0, ``np.int8(7)``, ``Fraction(7)``, ``Decimal(7)``,
    ``complex(7)`` and True-as-1 are one id; 0.5 and ``Fraction(1, 2)`` one; 0.1 and ``Decimal('0.1')`` two (unequal
    values). A numpy scalar is the Python number it holds (``Decimal(7) == np.int8(7)`` is False in Python, a
    numpy quirk; here they are one id). A string never equals a number: 7 and ``'7'`` are two ids. Missing:
    None, NaN (any type), NaT, pd.NA.
    """
    import pandas as pd

    if isinstance(v, np.generic):          # a numpy scalar is the Python number it holds (exactly)
        v = v.item()
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, numbers.Number):
        return _number_key(v)
    if isinstance(v, str):
        return "s:" + v
    if isinstance(v, bytes):
        return "b:" + v.hex()
    if isinstance(v, tuple):   # element by element, as tuples compare: (1, 2) and (1.0, Decimal(2)) are equal
        return "t:(" + ",".join(_canonical_id(x) or "m:" for x in v) + ")"
    try:
        if v is None or bool(pd.isna(v)):
            return None
    except (TypeError, ValueError):        # list-likes: not a missing scalar
        pass
    return f"o:{type(v).__module__}.{type(v).__qualname__}:{v!r}"


def _keys(col: Any) -> Any:
    """A column's values as shuffle-safe keys equal exactly for equal values: object columns (mixed types, which
    neither arrow nor the row hash take) to :func:`_canonical_id` strings, floats with −0.0 as 0.0, bools as
    ints, anything else as is. Missing values stay missing."""
    if col.dtype == object:
        return col.map(_canonical_id).astype(object)
    if col.dtype.kind == "f":
        return col + 0.0
    if col.dtype.kind == "b":
        return col.astype(np.int64)
    return col


def _with_keys(part: Any, user: str, item: str) -> Any:
    """The partition as (user key, item key) rows (:func:`_keys`); rows without a user id dropped. The raw
    columns are left behind: only the keys travel through the shuffle."""
    import pandas as pd

    users = _keys(part[user])
    keep = users.notna().to_numpy()
    return pd.DataFrame({_USER_KEY: users.to_numpy()[keep], _ITEM_KEY: _keys(part[item]).to_numpy()[keep]},
                        index=part.index[keep])


def _bound_partition(part: Any, contributions: int, distinct: bool, salt: int) -> Any:
    """Keep at most ``contributions`` rows of each user (all of whose rows are in this partition).

    Rule: the user's (distinct) rows ordered by a keyed hash of (user, item), ties by the item itself; the
    first ``contributions`` are kept. The key is a secret salt drawn from ``rng``, so each user keeps an
    independent pseudo-random subset of their items (with the user left out of the hash every user would
    drop the same items). It reads the user's own rows only (and the salt), so adding or removing another
    user never changes what this user contributes.
    """
    import pandas as pd

    n = part.shape[0]
    if n == 0:
        return part[[_ITEM_KEY]]
    users, _ = pd.factorize(part[_USER_KEY])      # by value: equal ids share a code
    items = part[_ITEM_KEY].to_numpy()
    h = pd.util.hash_pandas_object(part[[_USER_KEY, _ITEM_KEY]], index=False).to_numpy(dtype=np.uint64)
    with np.errstate(over="ignore"):
        key = _splitmix64(h + np.uint64(salt))
    order = np.lexsort((key, users))
    u_s, k_s = users[order], key[order]
    same_user = np.empty(n, dtype=bool)
    same_user[0] = False
    same_user[1:] = u_s[1:] == u_s[:-1]
    same_key = np.zeros(n, dtype=bool)
    same_key[1:] = same_user[1:] & (k_s[1:] == k_s[:-1])
    i_s = items[order]
    if np.any(same_key[1:] & (i_s[1:] != i_s[:-1])):  # a hash collision between two items: ties by item
        # ranks of the item keys in a fixed order (not the partition's order of appearance, which other users'
        # rows would change); the keys of one column have one type
        icode, _ = pd.factorize(part[_ITEM_KEY], sort=True)
        order = np.lexsort((icode, key, users))
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
    return part[[_ITEM_KEY]].iloc[np.sort(order[keep])]


def _spellings(part: Any, item: str) -> Any:
    """The partition's (item key, item) pairs, one per key: the labels of the keys of an object item column."""
    import pandas as pd

    keys = _keys(part[item])
    frame = pd.DataFrame({"key": keys.to_numpy(), "label": part[item].to_numpy()})
    return frame[frame["key"].notna().to_numpy()].drop_duplicates("key")


def _relabel(counts: Any, *spellings: Any) -> Any:
    """Key -> count as item -> count: each key labelled by its first spelling (partition order)."""
    import pandas as pd

    firsts = pd.concat(list(spellings)).drop_duplicates("key").set_index("key")["label"]
    out = pd.Series(counts.to_numpy(), index=pd.Index(firsts.reindex(counts.index).to_numpy(), dtype=object),
                    name="count")
    out.index.name = counts.index.name
    return out


def _key_counts(rows: Any, c: int, user: str, item: str, distinct: bool, items: Any, gen: np.random.Generator
                ) -> tuple[Any, bool]:
    """Lazy item key -> bounded count, and whether the keys are :func:`_canonical_id` strings (an object item
    column) rather than the item values themselves. Draws the salt from ``gen``."""
    salt = int(gen.integers(0, 2 ** 63))
    frame = rows[[user, item]]
    if items is not None:
        frame = frame[frame[item].isin(list(_domain(items)))]
    keyed = frame[item].dtype == object
    meta = _with_keys(frame._meta, user, item)
    keys = frame.map_partitions(_with_keys, user, item, meta=meta)
    keys = keys.shuffle(on=_USER_KEY)  # every user's rows in one partition
    kept = keys.map_partitions(_bound_partition, c, distinct, salt, meta=meta[[_ITEM_KEY]])
    return kept[_ITEM_KEY].value_counts(), keyed


def bounded_item_counts(rows: Any, *, contributions: int, user: str = "user", item: str = "item",
                        distinct: bool = True, items: Sequence[Hashable] | None = None,
                        rng: RngLike = None,
                        ) -> Any:
    """Lazy dask Series item -> count after bounding every user's contribution to ``contributions`` rows.

    ``distinct=True`` counts each (user, item) pair once (the number of users per item); else rows.
    ``items``: the public candidate domain; rows of other items are dropped *before* the bounding. Not
    private by itself (exact counts): feed it to a selector, as :func:`frequent_items` does.

    Users and items are compared by value, as Python's ``==``: numbers by their exact value across types
    (7, 7.0, ``np.int8(7)``, ``Fraction(7)``, ``Decimal(7)``, ``complex(7)`` and True are one user; 0.1 and
    ``Decimal('0.1')`` two), a string never equal to a number (7 and ``'7'`` are two users). An object column
    of mixed types is shuffled as one canonical key per value (its raw values never cross the shuffle, so
    mixed types and unhashable-by-arrow values survive it), and the counts are labelled by one spelling of
    each item seen (the first, in partition order). Dask turns object columns into text when the DataFrame
    is made (``dataframe.convert-string``, on by default): the ids are then strings before dpselect sees
    them ('7' and '7.0' two users, 7 and '7' one); give ids one type or turn that option off. A row
    whose user id is missing (None, NaN of any type, NaT, ``pd.NA``) belongs to no user the bound could count,
    so it is dropped before the bound: it never reaches a count, and the output does not depend on such rows
    (an error would: a crash that depends on the data is itself a release). Each user keeps the first
    ``contributions`` of their (distinct) rows in the order of a hash of (user, item) keyed by a secret
    salt drawn from ``rng``: an independent pseudo-random choice per user, that reads that user's rows only.

    Parameters
    ----------
    rows : dask.dataframe.DataFrame
        (user, item) rows.
    contributions : int
        c >= 1.
    user, item : str
        The column names.
    distinct : bool, default True
    items : list-like, optional
        The public candidate domain.
    rng : seed, Generator or None
        Draws the secret salt.

    Returns
    -------
    dask.dataframe.Series
        Lazy, item -> bounded count.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> rows = dd.from_pandas(pd.DataFrame({"user": [1, 1, 1, 2], "item": ["a", "b", "a", "a"]}), npartitions=2)
    >>> bounded_item_counts(rows, contributions=5, rng=0).compute().sort_index().to_dict()
    {'a': 2, 'b': 1}
    """
    _check_rows(rows, user, item)
    c = check_int(contributions, "contributions", minimum=1)
    distinct = check_bool(distinct, "distinct")
    gen = check_rng(rng)
    counts, keyed = _key_counts(rows, c, user, item, distinct, items, gen)
    if not keyed:
        return counts.rename_axis(item).rename("count")
    import dask
    import dask.dataframe as dd
    import pandas as pd

    frame = rows[[user, item]]
    spellings = [dask.delayed(_spellings)(part, item) for part in frame.to_delayed()]
    meta = pd.Series(np.zeros(0, dtype=np.int64), index=pd.Index([], dtype=object, name=item), name="count")
    return dd.from_delayed([dask.delayed(_relabel)(counts, *spellings)], meta=meta, verify_meta=False)


def _check_rows(rows: Any, user: str, item: str) -> None:
    """``rows`` a dask DataFrame holding the two distinct columns ``user`` and ``item``."""
    import dask.dataframe as dd

    if not isinstance(rows, dd.DataFrame):
        raise TypeError(f"rows must be a dask DataFrame of (user, item) rows, got {type(rows).__name__}")
    for name, col in (("user", user), ("item", item)):
        if col not in rows.columns:
            raise ValueError(f"{name}={col!r} is not a column of rows (columns: {list(rows.columns)})")
    if user == item:
        raise ValueError(f"user and item must be two different columns, got {user!r} for both")


def _domain(items: Any) -> Any:
    """The public item domain as a pandas Index, checked (``items`` named in every message)."""
    import pandas as pd

    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__") or isinstance(items, dict):
        raise TypeError(f"items must be a list-like of the public candidate items (e.g. ['a', 'b']), got "
                        f"{type(items).__name__} {items!r}"[:200])
    domain = pd.Index(list(items))
    if domain.size == 0:
        raise ValueError("items must not be empty (no candidate to select)")
    if domain.hasnans:
        raise ValueError("items must not hold a missing value (None/NaN)")
    if not domain.is_unique:
        dup = domain[domain.duplicated()][0]
        raise ValueError(f"items must not repeat an item, got {dup!r} twice")
    return domain


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
    noise: str | None = None,
    rng: RngLike = None,
    accountant: Accountant | None = None,
    topk_method: str = "peeling",
) -> Any:
    """Private top-k most frequent items of a dask DataFrame of (user, item) rows (ε-DP, user level).

    What it selects: the item (``k`` omitted) or the k items (an array, in the order picked) with the
    largest counts, where every user contributes at most ``contributions`` = c rows, chosen by a rule
    that reads that user's rows only (a hash of (user, item) keyed by a secret salt drawn from ``rng``:
    a pseudo-random choice per user). User ids are compared by value and rows without a user id are
    dropped (see :func:`bounded_item_counts`).

    Privacy: ε-DP for **add/remove one user** (all of that user's rows). With ``distinct=True`` (default)
    an item counts users, so one user moves each count by at most 1: Δu = 1 per item (the count vector
    moves by at most c in L1), and all counts move in the same direction (``monotonic``: ε·u/Δu). With
    ``distinct=False`` rows are counted and a user may put all c rows on one item: **Δu = c**. k picks
    cost ε/k each (ε in total). ``mechanism``: exponential (default), permute_and_flip or
    report_noisy_max, sampled exactly (:mod:`dpselect.sampling`). ``noise`` (``"laplace"`` by default,
    ``"gumbel"``, ``"exponential"``) is report-noisy-max's noise; with another mechanism it is a
    ``ValueError`` (it would be ignored).

    The candidate domain ``items`` is public: give it. When it is omitted, the items seen in the data
    are the candidates and :class:`dpselect.PrivacyLeakWarning` is emitted: an item that only one user
    holds can be released only when that user is present, which no ε covers. Reading the domain from
    the data is safe only when every item of the public domain is known to occur whatever any single
    user does (e.g. each item has a row from a public, non-private source), so that the items seen
    *are* the public domain.

    The counts (one number per item of the domain) are gathered on the client and selected there by the
    in-memory selector (the same law as :mod:`dpselect.dask`'s selectors).

    Parameters
    ----------
    rows : dask.dataframe.DataFrame
        The private (user, item) rows.
    epsilon : float
        Privacy budget, > 0 (ε/k per pick with an int ``k``).
    contributions : int
        c >= 1, the most rows (distinct (user, item) pairs with ``distinct=True``) a user contributes.
    k : int, optional
        Number of items. Omitted: one item (its label); any int ``k`` (1 included): an array of k items in
        the order picked.
    items : list-like, optional
        The public candidate domain (see above); omitted: the items seen, with a ``PrivacyLeakWarning``.
    user, item : str
        The column names.
    distinct : bool, default True
        Count users per item (Δu = 1) or rows (Δu = c).
    mechanism : {"exponential", "permute_and_flip", "report_noisy_max"} or an alias
    noise : {"laplace", "gumbel", "exponential"}, optional
        report-noisy-max's noise only.
    rng : seed, Generator or None
        Draws the secret salt of the contribution bound, then the selection.
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon, k=k)`` (with ``noise=`` for report-noisy-max) under the label
        ``"dask.frequent_items"``, before anything is drawn, the salt included, or computed (glossary:
        [accountant][glossary-accountant]). The guarantee is for add/remove one user. With another
        ``topk_method``: that method's guarantee (``PureDP(ε)`` for joint), under the same label.
    topk_method : {"peeling", "joint", "one_shot"}, default "peeling"
        How the k items are drawn from the counts (glossary: [top-k method][glossary-top-k-method]): peeling
        (k picks of ε/k), or the joint exponential mechanism / one-shot Gumbel of :func:`dpselect.top_k` (the
        counts move one way: ``monotonic``), which need ``mechanism="exponential"``.

    Returns
    -------
    label or numpy.ndarray
        ``k`` omitted: one item. Any int ``k``: an array of shape (k,) of items in the order picked.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd
    >>> df = pd.DataFrame({"user": [1, 1, 2, 2, 3, 3, 4], "item": ["a", "b", "a", "c", "a", "b", "c"]})
    >>> rows = dd.from_pandas(df, npartitions=2)
    >>> frequent_items(rows, epsilon=1e6, contributions=2, items=["a", "b", "c", "d"], rng=0)
    'a'
    >>> frequent_items(rows, epsilon=1e6, contributions=2, items=["a", "b", "c", "d"], k=2, rng=0).tolist()
    ['a', 'b']
    """
    eps = check_positive(epsilon, "epsilon")
    # dask runs its own noisy max with the spec's noise: only mechanisms that declare one
    spec = get_mechanism(mechanism, allowed=names(kind="global", where=lambda m: bool(m.noises)))
    method = _check_app_method(topk_method, spec, "dask.frequent_items")
    if k is not None:
        check_int(k, "k", minimum=1)
    gen = check_rng(rng)
    c = check_int(contributions, "contributions", minimum=1)
    if items is not None:
        domain = _domain(items)
        if k is not None:
            check_k(k, len(domain))
    if spec.accepts("noise"):
        noise = spec.noise if noise is None else check_choice(noise, "noise", NOISES)
    elif noise is not None:
        raise ValueError(f"noise={noise!r} applies only to mechanism='report_noisy_max' (the noise of {spec.name!r} "
                         "is fixed by its definition); leave noise out or pass mechanism='report_noisy_max'")
    acc = check_accountant(accountant)
    _check_rows(rows, user, item)
    distinct = check_bool(distinct, "distinct")
    opts: dict[str, Any] = {"noise": noise} if spec.accepts("noise") else {}
    with _release_scope():
        if items is None:   # warned (and charged NonPrivate) before anything is computed or drawn
            # the warning names no count of the items seen (a private quantity)
            warn_public_from_data("items (the candidate domain)", "the items seen in the data",
                                  "dpselect.dask.frequent_items")
        if method == "peeling":
            charge(acc, spec.privacy(eps, k=k, **opts), label="dask.frequent_items", neighbours=USER_ADD_REMOVE,
                   event=Event("dask.frequent_items", eps, k, options=(("mechanism", spec.name), *opts.items())))
        else:
            _charge(acc, method, 1 if k is None else int(k), eps, "gumbel" if method == "one_shot" else None, 0.0,
                    False, True, label="dask.frequent_items", neighbours=USER_ADD_REMOVE)
    import pandas as pd

    if items is None:
        counts = bounded_item_counts(rows, contributions=c, user=user, item=item, distinct=distinct,
                                     rng=gen).compute()
        if counts.size == 0:
            raise ValueError("rows has no item: no candidate to select")
        if k is not None and k > counts.size:  # check_k's message would name how many items were seen
            raise ValueError(f"k={k} is more than the number of items seen in the data; give the public domain "
                             "items=")
        domain = counts.index
        keys = domain
    else:
        lazy, keyed = _key_counts(rows, c, user, item, distinct, items, gen)
        counts = lazy.compute()
        keys = pd.Index([_canonical_id(x) for x in domain], dtype=object) if keyed else domain
    u = counts.reindex(keys, fill_value=0).to_numpy(dtype=np.float64)
    sens = 1.0 if distinct else float(c)
    kw: dict[str, Any] = {"k": k, "rng": gen}
    if spec.accepts("monotonic"):   # counts move all one way (else the mechanism's general, larger, noise)
        kw["monotonic"] = True
    if spec.accepts("noise"):
        kw["noise"] = noise
    if method == "peeling":
        picked = spec.select(u, epsilon=eps, sensitivity=sens, **kw)
    else:   # the counts move one way between neighbours (add/remove one user): monotonic
        seq = _draw(u, 1 if k is None else int(k), eps, sens, method, "gumbel" if method == "one_shot" else None,
                    0.0, True, gen)
        picked = int(seq[0]) if k is None else seq
    if k is None:  # one label; any int k (1 included) an array, as every selector
        lab = domain[int(picked)]
        return lab.item() if isinstance(lab, np.generic) else lab
    return np.asarray(domain[np.asarray(picked)])
