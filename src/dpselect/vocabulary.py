"""One vocabulary for the whole package: mechanism names and their short aliases.

Every function that takes a selection mechanism takes ``mechanism=`` with one of :data:`MECHANISMS`;
the short aliases EM, PF, RNM, LD and SLD are accepted case-insensitively. Older spellings of some
functions (``local=True``, ``sensitivity="local"``, ``"global"/"local"/"shifted"``) keep working for one
release with a ``DeprecationWarning`` (:func:`deprecated`).
"""
from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Any, Callable, Iterable, Literal, TypeVar

import numpy as np

__all__ = ["MECHANISMS", "GLOBAL_MECHANISMS", "LOCAL_MECHANISMS", "ALIASES", "Mechanism", "check_mechanism",
           "deprecated", "renamed", "keyword_only"]

#: Global-sensitivity mechanisms (a number Δu as sensitivity).
GLOBAL_MECHANISMS = ("exponential", "permute_and_flip", "report_noisy_max")
#: Local-sensitivity mechanisms (a SensitivityFunction as sensitivity).
LOCAL_MECHANISMS = ("local_dampening", "shifted_local_dampening")
#: Every selection mechanism, by its one canonical name.
MECHANISMS = GLOBAL_MECHANISMS + LOCAL_MECHANISMS
#: Short aliases (case-insensitive) -> canonical names.
ALIASES = {"em": "exponential", "pf": "permute_and_flip", "rnm": "report_noisy_max", "ld": "local_dampening",
           "sld": "shifted_local_dampening"}

Mechanism = Literal["exponential", "permute_and_flip", "report_noisy_max", "local_dampening",
                    "shifted_local_dampening", "EM", "PF", "RNM", "LD", "SLD"]


def check_mechanism(value, name: str = "mechanism", allowed: Iterable[str] = MECHANISMS) -> str:
    """The canonical name of ``value`` (a name or an alias, any case), which must be in ``allowed``.

    >>> check_mechanism("SLD")
    'shifted_local_dampening'
    >>> check_mechanism("Exponential", allowed=GLOBAL_MECHANISMS)
    'exponential'
    """
    allowed = tuple(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(allowed)}, got {type(value).__name__}")
    key = value.strip().lower()
    canon = ALIASES.get(key, key)
    if canon not in allowed:
        short = [a.upper() for a, c in ALIASES.items() if c in allowed]
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (or {', '.join(short)}), got {value!r}")
    return canon


def deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that the spelling ``old`` is deprecated in favour of ``new`` (removed in the next release).

    ``stacklevel`` as in :func:`warnings.warn`, counted from this function; the wrappers that
    :func:`keyword_only` adds are not counted, so a warning raised inside a decorated function still
    names its caller's line.
    """
    frame = sys._getframe(1)  # the caller: stacklevel 2
    level, remaining = 2, stacklevel - 2
    while remaining > 0 and frame.f_back is not None:
        frame = frame.f_back
        level += 1
        if frame.f_code is not _KEYWORD_COMPAT_CODE:
            remaining -= 1
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                  DeprecationWarning, stacklevel=level)


def renamed(new_value, old_value, *, where: str, new: str, old: str, default=None, stacklevel: int = 4):
    """The value of a renamed argument: ``new_value``, or the deprecated spelling's ``old_value`` (warns).

    ``default`` is the new argument's default (passing both spellings is a ``TypeError``). With the
    default ``stacklevel`` the warning points at the caller of the function that calls ``renamed``.

    >>> renamed([1, 2], None, where="f", new="base_measure", old="weights")
    [1, 2]
    """
    if old_value is None:
        return new_value
    deprecated(f"{where}({old}=...)", f"{new}=...", stacklevel=stacklevel)
    if new_value is not default:
        raise TypeError(f"{where} got both {new} and its deprecated spelling {old}; pass {new} only")
    return old_value


F = TypeVar("F", bound=Callable[..., Any])


def keyword_only(*names: str) -> Callable[[F], F]:
    """Decorator: the keyword-only parameters ``names`` were positional until this release.

    Positional use keeps working for one release: extra positional arguments are passed as these
    keywords, in this order, with a ``DeprecationWarning`` naming the caller's line.

    >>> @keyword_only("epsilon")
    ... def select(u, *, epsilon):
    ...     return u, epsilon
    >>> select([1.0], epsilon=0.5)
    ([1.0], 0.5)
    """
    def decorate(fn: F) -> F:
        params = inspect.signature(fn).parameters.values()
        n_pos = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        kw_only = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
        missing = [n for n in names if n not in kw_only]
        if missing:
            raise TypeError(f"keyword_only: {fn.__qualname__} has no keyword-only parameter {missing[0]!r}")
        qual = fn.__qualname__

        @functools.wraps(fn)
        def _keyword_compat(*args, **kwargs):
            if len(args) > n_pos:
                extra = args[n_pos:]
                if len(extra) > len(names):
                    raise TypeError(f"{qual}() takes {n_pos} positional argument{'s' if n_pos != 1 else ''} "
                                    f"(then keywords: {', '.join(names)}, ...), got {len(args)}")
                moved = names[:len(extra)]
                for name in moved:
                    if name in kwargs:
                        raise TypeError(f"{qual}() got multiple values for argument {name!r}")
                deprecated(f"passing {', '.join(moved)} positionally to {qual}()",
                           f"keywords ({', '.join(f'{m}=...' for m in moved)})")
                kwargs.update(zip(moved, extra))
                args = args[:n_pos]
            return fn(*args, **kwargs)

        return _keyword_compat  # type: ignore[return-value]

    return decorate


def _compat_code():
    @keyword_only()
    def f(*, x=None):
        return x

    return f.__code__


_KEYWORD_COMPAT_CODE = _compat_code()


def selection_result(fn: F) -> F:
    """Decorator: the one return convention of every selector.

    ``k`` omitted (``None``) returns one ``int`` index (or, with ``size=N``, an (N,) int64 array of
    independent draws); any int ``k`` -- 1 included -- returns an int64 array of shape (k,)
    (with ``size=N``: (N, k)). The wrapped function may return an ``int`` for k = 1.

    >>> @selection_result
    ... def pick(u, *, k=None, size=None):
    ...     return 2
    >>> pick([0, 1, 2]), pick([0, 1, 2], k=1).tolist()
    (2, [2])
    """
    @functools.wraps(fn)
    def _selection(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if kwargs.get("k") is None:
            return out
        arr = np.asarray(out, dtype=np.int64)
        if kwargs.get("size") is None:
            return np.atleast_1d(arr)
        return arr[:, None] if arr.ndim == 1 else arr

    return _selection  # type: ignore[return-value]
