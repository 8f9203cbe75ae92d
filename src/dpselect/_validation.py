"""Argument checks shared by every public entry point.

Each check raises ``ValueError`` or ``TypeError`` whose message names the parameter, the value and the
rule, e.g. ``epsilon must be a finite number > 0, got -1``. Checks of arrays that may hold private data
(utilities, objective matrices, record values) name the parameter and the rule only: never an entry's
value or index, nor a size that could be private (an error message is a release).
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_positive(value: Any, name: str) -> float:
    """A finite real number > 0 (epsilon, sensitivities, bounds)."""
    if type(value) is not float and (isinstance(value, bool)
                                     or not isinstance(value, (numbers.Real, np.floating, np.integer))):
        raise TypeError(f"{name} must be a finite number > 0, got {short_repr(value)} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {short_repr(value)}")
    return v


def check_nonnegative(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a finite number >= 0, got {short_repr(value)} ({type(value).__name__})")
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {short_repr(value)}")
    return v


def check_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an int, got {short_repr(value)} ({type(value).__name__})")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be an int <= {maximum}, got {v}")
    return v


def _object_reals(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of real numbers (Python ints beyond int64, Fractions) as float64, so that whether a
    call is refused does not depend on how large a (possibly private) entry is; other arrays unchanged."""
    if arr.dtype != object or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                      for v in arr.ravel().tolist()):
        return arr
    try:
        return arr.astype(np.float64)
    except OverflowError:   # an int beyond the float range is ±inf, as float64 arithmetic would give
        return np.array([v if abs(v) < 2 ** 1024 else (np.inf if v > 0 else -np.inf)
                         for v in arr.ravel().tolist()], dtype=np.float64).reshape(arr.shape)


def check_utilities(utilities: Any, name: str = "utilities", *, finite: bool = True) -> np.ndarray:
    """A non-empty 1-D array of finite real numbers, returned as float64 (with ``finite=False``: any
    real numbers, ±inf included, but no NaN)."""
    try:
        arr = np.asarray(utilities)
    except Exception as exc:  # ragged input and the like
        raise TypeError(f"{name} must be a 1-D array of finite numbers: {exc}") from None
    if arr.dtype != np.float64:   # (float64, the common case, passes the dtype checks)
        arr = _object_reals(arr, name)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"{name} must be a 1-D array of real numbers, got dtype {arr.dtype}")
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got a {arr.ndim}-D array")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty (no candidate to select)")
    arr = arr.astype(np.float64, copy=False)
    if not finite:
        if np.isnan(arr).any():   # the entry's index may be private: not named
            raise ValueError(f"{name} must not hold NaN")
        return arr
    if not np.isfinite(arr).all():
        # the entry's index and value may be private: the message names neither
        raise ValueError(f"{name} must be finite: it holds a NaN or an infinite entry")
    return arr


def check_matrix(U: Any, name: str = "U", *, min_rows: int = 1) -> np.ndarray:
    """A finite (n, m) float64 matrix (candidates in rows, objectives in columns)."""
    try:
        arr = np.asarray(U)
    except Exception as exc:
        raise TypeError(f"{name} must be an (n, m) array of finite numbers: {exc}") from None
    arr = _object_reals(arr, name)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must be an (n, m) array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (candidates x objectives), got a {arr.ndim}-D array")
    if arr.shape[0] < min_rows or arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least {min_rows} rows and 1 column, got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        # the entry's position and value may be private: the message names neither
        raise ValueError(f"{name} must be finite: it holds a NaN or an infinite entry")
    return arr


def check_k(k: Any, n: int) -> int:
    return check_int(k, "k", minimum=1, maximum=n) if n >= 1 else check_int(k, "k", minimum=1)


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {short_repr(value)}")
    return value


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {short_repr(value)} ({type(value).__name__})")
    return bool(value)
