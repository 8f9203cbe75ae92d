"""One vocabulary for the whole package: mechanism names and their short aliases.

Every function that takes a selection mechanism takes ``mechanism=`` with one of :data:`MECHANISMS` (the
read-only view of :mod:`dpselect.registry`, name -> spec); the short aliases EM, PF, RNM, LD and SLD are
accepted case-insensitively.
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
from typing import Any, Callable, Iterable, Mapping, TypeVar

import numpy as np

from .exceptions import _release_scope


__all__ = ["MECHANISMS", "GLOBAL_MECHANISMS", "LOCAL_MECHANISMS", "ALIASES", "check_mechanism",
           "APPROACHES", "APPROACH_ALIASES", "check_approach"]

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

def check_mechanism(value: Any, name: str = "mechanism", allowed: Iterable[str] | None = None) -> str:
    """The canonical name of ``value`` (a name or an alias, any case), which must be in ``allowed``
    (default: every registered mechanism, :data:`MECHANISMS`).

    Parameters
    ----------
    value : str or Mechanism
        A canonical name or an alias (any case, surrounding spaces ignored), or a registered
        :class:`~dpselect.registry.Mechanism` spec. Anything else is a ``TypeError``.
    name : str, optional
        The caller's parameter name, for messages.
    allowed : iterable of str, optional
        The canonical names accepted (an application's subset); another mechanism is a ``ValueError``
        naming ``name``, the value and the accepted names and aliases.

    Returns
    -------
    str
        The canonical name.

    Examples
    --------
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


#: How several objectives are combined into one selection: PrivPareto ("pareto") or PrivAgg ("aggregate").
APPROACHES = ("pareto", "aggregate")
#: Short aliases (case-insensitive) of the approaches.
APPROACH_ALIASES = {"agg": "aggregate"}


def check_approach(value: Any, name: str = "approach", allowed: Iterable[str] = APPROACHES) -> str:
    """The canonical name of the multi-objective approach ``value`` ("agg" is an alias of "aggregate").

    Parameters
    ----------
    value : str
        ``"pareto"``, ``"aggregate"`` or ``"agg"`` (any case, surrounding spaces ignored).
    name : str, optional
        The caller's parameter name, for messages.
    allowed : iterable of str, optional
        The canonical approaches accepted (default :data:`APPROACHES`); another value is a ``ValueError``
        naming ``name``, the value and the accepted approaches.

    Returns
    -------
    str
        The canonical name of the approach.

    Examples
    --------
    >>> check_approach("agg"), check_approach("Pareto")
    ('aggregate', 'pareto')
    """
    allowed = tuple(allowed)
    key = value.strip().lower() if isinstance(value, str) else value
    key = APPROACH_ALIASES.get(key, key)
    if key not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))} (or 'agg'), got {value!r}")
    return key


F = TypeVar("F", bound=Callable[..., Any])


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
        with _release_scope():     # a public quantity read from the data makes the call's charge NonPrivate
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
