"""The checks of the private data of the quantile functions, with messages that name no private quantity.

The records (``values``) and their multiplicities (``counts``) are the private input: an error raised while
reading them is a release. So these checks say which *rule* is broken and never which record, where it sits,
its value, a count or the number of records (n is private under add/remove). What they
refuse is outside the public domain of every release (a NaN record (±inf is read as ±DBL_MAX), a negative count, more than
:data:`MAX_RECORDS` records), so a refusal happens only on inputs that are not datasets of the domain.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__: list[str] = []

#: Most records one release may hold (the public domain's size cap): the rank distances
#: |16·rank − round(16·λ·n_S)| <= 16n of the recursive method's relative targets (and |2·rank − round(2·q·n)|
#: <= 2n of the others, the unbounded searches' thresholds q·n) stay exact in float64, and int64 sums of the
#: counts cannot wrap.
MAX_RECORDS = 2 ** 49


#: The smallest ε/(64·(m + 1)) accepted: every budget a release splits ε into (per quantile, per level, per
#: bound search and its noise halves) is at least that, so none underflows to 0 after the charge.
MIN_SHARE = 2.0 ** -1000


def check_share(epsilon: float, m: int) -> None:
    """ValueError (public: ε and m) when ε is so small that a per-release budget would underflow to 0 (a
    release at ε = 0 is refused by the mechanism, after the charge; AboveThreshold's noise at ε = 0 never ends)."""
    if epsilon / (64.0 * (m + 1)) < MIN_SHARE:
        raise ValueError(f"epsilon is too small for {m} release(s): epsilon/(64·({m} + 1)) must be at least "
                         f"2**-1000, got epsilon={epsilon!r} (the per-release budgets would underflow to 0)")


def check_values(values: Any, name: str = "values") -> np.ndarray:
    """``values`` as a 1-D float64 array of finite numbers (±inf read as ±DBL_MAX), possibly empty (0 records
    is a dataset).

    TypeError/ValueError with a public message: the rule only (no value, index or size is named)."""
    try:
        arr = np.asarray(values)
    except Exception:   # ragged input: numpy's message would print the shapes (sizes of private data)
        raise TypeError(f"{name} must be a 1-D array of finite real numbers") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        # the dtype is not named either: a string dtype such as '<U21' carries a record's length
        raise TypeError(f"{name} must be a 1-D array of real numbers (ints or floats)")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array with {arr.ndim} dimensions")
    arr = arr.astype(np.float64, copy=False)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must be real numbers: NaN records are refused (which one is not said: the "
                         "records are private)")
    if np.isinf(arr).any():
        # ±inf is an ordered value: mapped to ±DBL_MAX, record by record (a map of each record alone keeps
        # every guarantee), so it is then clipped into the bounds like any other record outside them, as
        # dpselect.median does; a refusal here would depend on the data
        arr = np.clip(arr, -np.finfo(np.float64).max, np.finfo(np.float64).max)
    return arr


def check_counts(counts: Any, size: int) -> np.ndarray:
    """``counts`` (one multiplicity per value, ``size`` of them) as int64, each >= 0, the total checked
    exactly to be <= :data:`MAX_RECORDS` (no wrapping sum; all zero is allowed: 0 records is a dataset).

    TypeError/ValueError with a public message: the rule only (no count, index, total or length is named)."""
    rule = f"counts must be a 1-D array of integers >= 0, one per value, summing to at most 2**49 = {MAX_RECORDS}"
    try:
        c = np.asarray(counts)
    except Exception:
        raise TypeError(rule) from None
    if c.ndim != 1 or c.shape[0] != size:
        raise ValueError(f"{rule} (counts has another shape than values)")
    if c.dtype == object:
        items = c.tolist()
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
            raise TypeError(f"{rule} (a count is not an integer)")
        exact = [int(v) for v in items]      # Python ints beyond int64: checked exactly
        if any(v < 0 for v in exact):
            raise ValueError(f"{rule} (a count is negative)")
        if sum(exact) > MAX_RECORDS:
            raise ValueError(f"{rule} (their sum is larger)")
        return np.array(exact, dtype=np.int64)
    if np.issubdtype(c.dtype, np.floating):
        if not np.all(np.isfinite(c)) or not np.all(c == np.round(c)):
            raise TypeError(f"{rule} (a count is not an integer)")
    elif not np.issubdtype(c.dtype, np.integer):      # bool, complex, strings: not counts
        raise TypeError(f"{rule} (counts has a non-integer dtype)")
    if np.any(c < 0):                                 # on the given dtype: nothing wrapped by a cast first
        raise ValueError(f"{rule} (a count is negative)")
    # each count <= MAX and the float sum <= 2·MAX before the exact int64 sum (which then cannot wrap)
    if c.size and (np.any(c > MAX_RECORDS) or float(c.astype(np.float64).sum()) > 2.0 * MAX_RECORDS):
        raise ValueError(f"{rule} (their sum is larger)")
    out = c.astype(np.int64)
    if int(out.sum()) > MAX_RECORDS:
        raise ValueError(f"{rule} (their sum is larger)")
    return out
