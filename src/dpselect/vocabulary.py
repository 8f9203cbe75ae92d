"""One vocabulary for the whole package: mechanism names and their short aliases.

Every function that takes a selection mechanism takes ``mechanism=`` with one of :data:`MECHANISMS` (the
read-only view of :mod:`dpselect.registry`, name -> spec); the short aliases EM, PF, RNM, LD and SLD are
accepted case-insensitively. Older spellings of some
functions (``local=True``, ``sensitivity="local"``, ``"global"/"local"/"shifted"``) keep working for one
release with a ``DeprecationWarning`` (:func:`deprecated`).
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
import warnings
from typing import Any, Callable, Iterable, Literal, Mapping, TypeVar

import numpy as np

__all__ = ["MECHANISMS", "GLOBAL_MECHANISMS", "LOCAL_MECHANISMS", "ALIASES", "MechanismName", "check_mechanism",
           "deprecated", "renamed", "keyword_only"]

#: Global-sensitivity mechanisms built in (a number Δu as sensitivity); every registered one:
#: ``dpselect.registry.names(kind="global")``.
GLOBAL_MECHANISMS = ("exponential", "permute_and_flip", "report_noisy_max")
#: Local-sensitivity mechanisms built in (a SensitivityFunction as sensitivity); every registered one:
#: ``dpselect.registry.names(kind="local")``.
LOCAL_MECHANISMS = ("local_dampening", "shifted_local_dampening")

# The one store of the mechanism registry (dpselect.registry fills it and owns the specs; it lives here so
# that the names can be checked without importing anything above this module).
_MECHANISM_TABLE: dict[str, Any] = {}
_ALIAS_TABLE: dict[str, str] = {}
#: Every registered selection mechanism: a read-only mapping canonical name -> ``dpselect.registry.Mechanism``
#: (``dpselect.MECHANISMS``). Iterating gives the canonical names; ``name in MECHANISMS`` tests one.
MECHANISMS: Mapping[str, Any] = types.MappingProxyType(_MECHANISM_TABLE)
#: Short aliases (case-insensitive) -> canonical names (read-only; ``dpselect.registry.register`` adds to it).
ALIASES: Mapping[str, str] = types.MappingProxyType(_ALIAS_TABLE)

#: The names and upper-case aliases of the built-in mechanisms, for type hints (a test checks it against the
#: registry).
MechanismName = Literal["exponential", "permute_and_flip", "report_noisy_max", "local_dampening",
                        "shifted_local_dampening", "EM", "PF", "RNM", "LD", "SLD"]


def __getattr__(name: str) -> Any:
    # ``Mechanism`` was the Literal's name until this release; dpselect.Mechanism is now the registry's spec.
    if name == "Mechanism":
        warnings.warn("dpselect.vocabulary.Mechanism is deprecated and will be removed in the next release; use "
                      "dpselect.vocabulary.MechanismName (the Literal of mechanism names)", DeprecationWarning,
                      stacklevel=2)
        return MechanismName
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_mechanism(value: Any, name: str = "mechanism", allowed: Iterable[str] | None = None) -> str:
    """The canonical name of ``value`` (a name or an alias, any case), which must be in ``allowed``
    (default: every registered mechanism, :data:`MECHANISMS`).

    >>> check_mechanism("SLD")
    'shifted_local_dampening'
    >>> check_mechanism("Exponential", allowed=GLOBAL_MECHANISMS)
    'exponential'
    """
    allowed = tuple(_MECHANISM_TABLE if allowed is None else allowed)
    if not isinstance(value, str):
        spec_name = getattr(value, "name", None)
        if isinstance(spec_name, str) and _MECHANISM_TABLE.get(spec_name) is value:   # a registered spec
            value = spec_name
        else:
            raise TypeError(f"{name} must be a string, one of {', '.join(allowed)}, got {type(value).__name__}")
    key = value.strip().lower()
    canon = _ALIAS_TABLE.get(key, key)
    if canon not in allowed:
        short = [a.upper() for a, c in _ALIAS_TABLE.items() if c in allowed]
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


def renamed(new_value: Any, old_value: Any, *, where: str, new: str, old: str, default: Any = None,
            stacklevel: int = 4) -> Any:
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


def _is_labelled(x: Any) -> bool:
    """True for a pandas Series or DataFrame (duck-typed: an ``index`` attribute that is not a method, and
    ``to_numpy``), without importing pandas."""
    return hasattr(x, "to_numpy") and hasattr(x, "index") and not callable(getattr(x, "index"))


def _by_column(value: Any, columns: list, name: str) -> Any:
    """``value`` in column order when it is keyed by the objectives' names (a mapping or a Series)."""
    if _is_labelled(value) and getattr(value, "ndim", 1) == 1:
        value = dict(zip(value.index.tolist(), value.to_numpy().tolist()))
    if not isinstance(value, Mapping):
        return value
    missing = [c for c in columns if c not in value]
    extra = [c for c in value if c not in columns]
    if missing or extra:
        what = f"has no entry for column {missing[0]!r}" if missing else f"names unknown column {extra[0]!r}"
        raise ValueError(f"{name} {what}: it must be keyed by the DataFrame's columns {columns}")
    return [value[c] for c in columns]


def _aligned(value: Any, labels: Any, name: str) -> Any:
    """A per-candidate Series (e.g. a base measure) in the order of the candidates' index ``labels``."""
    if not _is_labelled(value):
        return value
    if getattr(value, "ndim", 1) != 1:
        raise TypeError(f"{name} must be one value per candidate, got a {type(value).__name__}")
    vals = dict(zip(value.index.tolist(), value.to_numpy().tolist()))
    if len(vals) != len(value) or set(vals) != set(labels.tolist()):
        raise ValueError(f"{name} is a Series: its index must hold the candidates' labels, each once")
    return np.asarray([vals[x] for x in labels.tolist()])


def _unlabel(sig: inspect.Signature, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict]:
    """Strip the pandas labels off the first argument (and align the arguments named by its labels)."""
    data = args[0]
    labels = data.index
    if not getattr(labels, "is_unique", True):
        dup = labels[labels.duplicated()].tolist()[0]
        raise ValueError(f"the {type(data).__name__}'s index holds the label {dup!r} more than once: a selected "
                         "label would not say which candidate was picked; make the labels unique (or use "
                         ".reset_index(drop=True) to select positions)")
    if getattr(data, "ndim", 1) == 2 and hasattr(data, "columns"):  # a DataFrame: columns name the objectives
        columns = data.columns.tolist()
        bound = sig.bind_partial(*args, **kwargs)
        for name in ("objective_weights", "sensitivities"):
            if bound.arguments.get(name) is not None:
                bound.arguments[name] = _by_column(bound.arguments[name], columns, name)
        args, kwargs = bound.args, dict(bound.kwargs)
    if kwargs.get("base_measure") is not None:
        kwargs["base_measure"] = _aligned(kwargs["base_measure"], labels, "base_measure")
    values = data.to_numpy()
    if values.dtype == object:
        # numbers stored as objects (e.g. a column that held None) are accepted; strings are refused, even
        # numeric-looking ones: converting text silently would hide a parsing problem (say "1,5" or
        # " 2") and text does not compare as numbers (pd.to_numeric states the conversion explicitly)
        text = [v for v in values.ravel().tolist() if isinstance(v, (str, bytes))]
        if text:
            raise TypeError(f"the {type(data).__name__} holds strings (e.g. {text[0]!r}), not numbers: utilities "
                            "must be numeric; convert explicitly (pandas.to_numeric) if they are numbers as text")
        values = values.astype(np.float64)
    return labels, (values,) + tuple(args[1:]), kwargs


def probabilities_result(fn: F) -> F:
    """Decorator of every ``*_probabilities`` function: pandas in, pandas out.

    When the first argument (utilities, or objectives) is a pandas Series or DataFrame, the arguments are
    unlabelled exactly as for the selectors (:func:`selection_result`: columns name the objectives, a
    ``base_measure`` Series is aligned on the index, duplicate index labels and text are refused), and
    the probabilities come back as a pandas Series indexed like the input (name ``"probability"``).
    Other inputs give the function's numpy array unchanged.

    >>> @probabilities_result
    ... def uniform(u):
    ...     return np.full(len(u), 1 / len(u))
    >>> uniform([3, 4]).tolist()
    [0.5, 0.5]
    """
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def _probabilities(*args: Any, **kwargs: Any) -> Any:
        if not (args and _is_labelled(args[0])):
            return fn(*args, **kwargs)
        labels, args, kwargs = _unlabel(sig, args, kwargs)
        out = fn(*args, **kwargs)
        pd = sys.modules.get("pandas")
        if pd is None or not isinstance(labels, pd.Index):  # duck-typed labels of another library: numpy out
            return out
        return pd.Series(out, index=labels, name="probability")

    return _probabilities  # type: ignore[return-value]


def selection_result(fn: F) -> F:
    """Decorator: the one return convention of every selector.

    ``k`` omitted (``None``) returns one ``int`` index (or, with ``size=N``, an (N,) int64 array of
    independent draws); any int ``k`` -- 1 included -- returns an int64 array of shape (k,)
    (with ``size=N``: (N, k)). The wrapped function may return an ``int`` for k = 1.

    **pandas**: when the first argument (the utilities, or the objectives of PrivPareto / PrivAgg) is a
    pandas Series or DataFrame, the selection is given as its index **labels** instead of positions: one
    label, or a numpy array of labels of the same shapes as above. With a DataFrame the columns name the
    objectives: ``objective_weights`` (a mapping or a Series) and ``sensitivities`` (a mapping) may be
    keyed by column name; a ``base_measure`` Series is aligned on the index. Refused: an index holding
    a label twice (the returned label would not say which candidate was picked) and utilities stored as
    text, numeric-looking strings included (silent conversion would hide a parsing problem; numbers
    with dtype object are accepted). pandas is recognised by duck typing and never imported here, so
    the core works without it.

    >>> @selection_result
    ... def pick(u, *, k=None, size=None):
    ...     return 2
    >>> pick([0, 1, 2]), pick([0, 1, 2], k=1).tolist()
    (2, [2])
    """
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def _selection(*args: Any, **kwargs: Any) -> Any:
        labels = None
        if args and _is_labelled(args[0]):
            labels, args, kwargs = _unlabel(sig, args, kwargs)
        out = fn(*args, **kwargs)
        if kwargs.get("k") is None:
            arr = out
        else:
            arr = np.atleast_1d(np.asarray(out, dtype=np.int64))
            if kwargs.get("size") is not None and arr.ndim == 1:
                arr = arr[:, None]
        if labels is None:
            return arr
        if isinstance(arr, np.ndarray):
            return labels.to_numpy()[arr]
        return labels[int(arr)]

    return _selection  # type: ignore[return-value]
