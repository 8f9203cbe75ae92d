"""Deprecations in one place: old spellings that keep working for one release.

Every deprecated spelling of a public call is handled here, by a decorator applied to the public
function, never inside it: the wrapper translates the old spelling into the new one and warns with
:class:`DpselectDeprecationWarning` at ``stacklevel=2``, so the warning always names the line of the
user's call (the wrapper is the frame right below it), whatever calls what inside the package. There is
no frame walking and no stack level to count by hand.

* :func:`renamed_parameter` -- a keyword renamed (``weights=`` -> ``base_measure=``);
* :func:`keyword_only` -- parameters that were positional and are keyword-only now;
* :func:`renamed_values` -- old values of a parameter (``mechanism="global"`` -> ``"exponential"``);
* :func:`deprecated_values` -- values of a parameter that go, with nothing to translate them to
  (``DPMOETClassifier(budget="paper-code")``);
* :func:`replaced_parameter` -- a parameter replaced by another one (``local=True`` ->
  ``mechanism="local_dampening"``);
* :func:`renamed_function` -- a function's old name (``ig_sensitivity_function`` -> ``ig_sensitivity``);
* :func:`old_call_form` -- a whole call form replaced by another (``metric_c(objectives, reference,
  selected)``).

:data:`NOT_PASSED` is the sentinel default of a deprecated parameter that stays in a signature, so that
"not passed" differs from an explicit ``None``. Every old spelling goes in :data:`REMOVED_IN`.

>>> @renamed_parameter(old="weights", new="base_measure")
... def select(u, *, base_measure=None):
...     return base_measure
>>> import warnings
>>> with warnings.catch_warnings(record=True) as rec:
...     warnings.simplefilter("always")
...     select([1.0], weights=[2.0])
[2.0]
>>> print(rec[0].message)
select(weights=...) is deprecated and will be removed in dpselect 0.2.0; use base_measure=...
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Mapping, TypeVar

__all__ = ["REMOVED_IN", "NOT_PASSED", "DpselectDeprecationWarning", "deprecation", "renamed_parameter",
           "keyword_only", "renamed_values", "deprecated_values", "replaced_parameter", "old_call_form", "renamed_function"]

#: The release in which every deprecated spelling of this release goes (the package is 0.1.0).
REMOVED_IN = "0.2.0"

F = TypeVar("F", bound=Callable[..., Any])


class _NotPassed:
    """Type of :data:`NOT_PASSED` (one instance)."""

    _instance: "_NotPassed | None" = None

    def __new__(cls) -> "_NotPassed":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<not passed>"

    def __reduce__(self) -> str:
        return "NOT_PASSED"


#: Sentinel default of a deprecated parameter: "not passed", as opposed to an explicit ``None``.
NOT_PASSED: Any = _NotPassed()


class DpselectDeprecationWarning(DeprecationWarning):
    """A spelling of dpselect that still works in this release and is removed in :data:`REMOVED_IN`.

    A subclass of :class:`DeprecationWarning` (filters and ``pytest.warns(DeprecationWarning)`` see it).
    """


def deprecation(old: str, new: str) -> DpselectDeprecationWarning:
    """The warning for the old spelling ``old`` replaced by ``new``; its message names :data:`REMOVED_IN`.

    Issue it from a decorator's wrapper only: ``warnings.warn(deprecation(old, new), stacklevel=2)``.

    >>> str(deprecation("f(x=...)", "f(y=...)"))
    'f(x=...) is deprecated and will be removed in dpselect 0.2.0; use f(y=...)'
    """
    return DpselectDeprecationWarning(f"{old} is deprecated and will be removed in dpselect {REMOVED_IN}; use {new}")


Step = Callable[[tuple, dict], "tuple[tuple, dict, DpselectDeprecationWarning | None]"]


def _compat_wrapper(fn: F, step: Step) -> F:
    """``fn`` wrapped so that ``step`` translates each call's old spelling (and says which warning to issue).

    Stacked compat decorators share one wrapper (the steps run outermost first), so every warning is
    issued from the frame right below the user's call: ``stacklevel=2``, fixed. Compat decorators go
    outermost, above any other decorator of the public function.
    """
    steps: list[Step] | None = getattr(fn, "_compat_steps", None)
    if steps is not None:
        steps.insert(0, step)
        return fn
    steps = [step]

    @functools.wraps(fn)
    def _compat(*args: Any, **kwargs: Any) -> Any:
        for translate in steps:
            args, kwargs, warning = translate(args, kwargs)
            if warning is not None:
                warnings.warn(warning, stacklevel=2)
        return fn(*args, **kwargs)

    _compat._compat_steps = steps  # type: ignore[attr-defined]
    return _compat  # type: ignore[return-value]


def _name(fn: Callable[..., Any]) -> str:
    return fn.__qualname__.replace(".__init__", "")


def _positional_index(fn: Callable[..., Any], name: str) -> int | None:
    """Position of parameter ``name`` among ``fn``'s positional parameters (None: keyword-only or absent)."""
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        if p.name == name:
            return i
    return None


def renamed_parameter(*, old: str, new: str) -> Callable[[F], F]:
    """Decorator: the keyword ``old`` is the deprecated spelling of ``fn``'s parameter ``new``.

    ``old=value`` is passed on as ``new=value`` with a :class:`DpselectDeprecationWarning`; passing both
    spellings is a ``TypeError``. ``old`` must not be a parameter of ``fn`` any more.
    """
    def decorate(fn: F) -> F:
        params = inspect.signature(fn).parameters
        if new not in params or old in params:
            raise TypeError(f"renamed_parameter: {fn.__qualname__} must have parameter {new!r} and not {old!r}")
        pos = _positional_index(fn, new)
        where = _name(fn)

        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            if old not in kwargs:
                return args, kwargs, None
            if new in kwargs or (pos is not None and len(args) > pos):
                raise TypeError(f"{where}() got both {new} and its deprecated spelling {old}; pass {new} only")
            kwargs[new] = kwargs.pop(old)
            return args, kwargs, deprecation(f"{where}({old}=...)", f"{new}=...")

        return _compat_wrapper(fn, step)

    return decorate


def keyword_only(*names: str) -> Callable[[F], F]:
    """Decorator: the keyword-only parameters ``names`` were positional until this release.

    Positional use keeps working for one release: extra positional arguments are passed as these
    keywords, in this order, with a :class:`DpselectDeprecationWarning` naming the caller's line.

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
        qual = _name(fn)

        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            if len(args) <= n_pos:
                return args, kwargs, None
            extra = args[n_pos:]
            if len(extra) > len(names):
                raise TypeError(f"{qual}() takes {n_pos} positional argument{'s' if n_pos != 1 else ''} "
                                f"(then keywords: {', '.join(names)}, ...), got {len(args)}")
            moved = names[:len(extra)]
            for name in moved:
                if name in kwargs:
                    raise TypeError(f"{qual}() got multiple values for argument {name!r}")
            kwargs.update(zip(moved, extra))
            return args[:n_pos], kwargs, deprecation(f"passing {', '.join(moved)} positionally to {qual}()",
                                                     f"keywords ({', '.join(f'{m}=...' for m in moved)})")

        return _compat_wrapper(fn, step)

    return decorate


def renamed_values(param: str, mapping: Mapping[str, Any]) -> Callable[[F], F]:
    """Decorator: the string values ``mapping`` keys (any case) of ``param`` are deprecated spellings.

    Such a value is passed on as ``mapping[value]`` with a :class:`DpselectDeprecationWarning`.

    >>> @renamed_values("mechanism", {"global": "exponential"})
    ... def fit(data, mechanism="exponential"):
    ...     return mechanism
    >>> fit(None, mechanism="exponential")
    'exponential'
    """
    table = {k.lower(): v for k, v in mapping.items()}

    def decorate(fn: F) -> F:
        pos = _positional_index(fn, param)
        where = _name(fn)

        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            if param in kwargs:
                value = kwargs[param]
            elif pos is not None and len(args) > pos:
                value = args[pos]
            else:
                return args, kwargs, None
            if not (isinstance(value, str) and value.strip().lower() in table):
                return args, kwargs, None
            new = table[value.strip().lower()]
            if param in kwargs:
                kwargs[param] = new
            else:
                args = args[:pos] + (new,) + args[pos + 1:]  # type: ignore[operator]
            return args, kwargs, deprecation(f"{where}({param}={value!r})", f"{param}={new!r}")

        return _compat_wrapper(fn, step)

    return decorate


def deprecated_values(param: str, values: Mapping[str, str]) -> Callable[[F], F]:
    """Decorator: the string values ``values`` keys of the keyword ``param`` go in :data:`REMOVED_IN`.

    They keep working unchanged for one release, with a :class:`DpselectDeprecationWarning` saying what
    to use instead (``values[value]``).

    >>> @deprecated_values("budget", {"paper-code": "the reproductions"})
    ... def fit(*, budget="even"):
    ...     return budget
    >>> fit(budget="even")
    'even'
    """
    def decorate(fn: F) -> F:
        where = _name(fn)

        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            value = kwargs.get(param)
            if isinstance(value, str) and value in values:
                return args, kwargs, deprecation(f"{where}({param}={value!r})", values[value])
            return args, kwargs, None

        return _compat_wrapper(fn, step)

    return decorate


def replaced_parameter(old: str, new: str, convert: Callable[[Any], Any],
                       conflict: Callable[[Any, Any], bool] | None = None) -> Callable[[F], F]:
    """Decorator: the keyword ``old`` is replaced by ``new=convert(value)`` (deprecated spelling).

    With both passed (``new`` not None), ``conflict(old_value, new_value)`` true is a ``ValueError`` (the
    old spelling contradicts the new one); otherwise ``new`` wins, with the warning. Without ``conflict``
    passing both is a ``TypeError``. ``convert`` validates the old value (its errors propagate).

    >>> @replaced_parameter("local", "mechanism", lambda v: "local_dampening" if v else "exponential")
    ... def pick(g, *, mechanism="local_dampening"):
    ...     return mechanism
    >>> pick(None)
    'local_dampening'
    """
    def decorate(fn: F) -> F:
        params = inspect.signature(fn).parameters
        if new not in params or old in params:
            raise TypeError(f"replaced_parameter: {fn.__qualname__} must have parameter {new!r} and not {old!r}")
        where = _name(fn)

        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            if old not in kwargs:
                return args, kwargs, None
            value = kwargs.pop(old)
            implied = convert(value)
            if kwargs.get(new) is not None:
                if conflict is None:
                    raise TypeError(f"{where}() got both {new} and its deprecated spelling {old}; pass {new} only")
                if conflict(value, kwargs[new]):
                    raise ValueError(f"{old}={value!r} (deprecated) contradicts {new}={kwargs[new]!r}; "
                                     f"pass {new} only")
                implied = kwargs[new]
            kwargs[new] = implied
            return args, kwargs, deprecation(f"{where}({old}={value!r})", f"{new}={implied!r}")

        return _compat_wrapper(fn, step)

    return decorate


def old_call_form(matches: Callable[..., bool], convert: Callable[..., tuple[tuple, dict]], *, old: str,
                  new: str) -> Callable[[F], F]:
    """Decorator: calls for which ``matches(*args, **kwargs)`` are in a deprecated form.

    They are rewritten by ``convert(*args, **kwargs) -> (args, kwargs)`` into the new form, with a
    :class:`DpselectDeprecationWarning` saying ``old`` -> ``new``.

    >>> @old_call_form(lambda *a, **k: len(a) == 3, lambda u, a, b, **k: ((a, b), {**k, "objectives": u}),
    ...                old="f(u, a, b)", new="f(a, b, objectives=u)")
    ... def f(a, b, *, objectives=None):
    ...     return a, b, objectives
    >>> f(1, 2, objectives=0)
    (1, 2, 0)
    """
    def decorate(fn: F) -> F:
        def step(args: tuple, kwargs: dict) -> tuple[tuple, dict, DpselectDeprecationWarning | None]:
            if not matches(*args, **kwargs):
                return args, kwargs, None
            args, kwargs = convert(*args, **kwargs)
            return args, kwargs, deprecation(old, new)

        return _compat_wrapper(fn, step)

    return decorate


def renamed_function(fn: F, old: str) -> F:
    """``fn`` under its deprecated name ``old``: calling it warns, then calls ``fn``.

    >>> def ig_sensitivity(x): return x
    >>> ig_sensitivity_function = renamed_function(ig_sensitivity, "ig_sensitivity_function")
    >>> ig_sensitivity_function.__name__
    'ig_sensitivity_function'
    """
    new = _name(fn)

    @functools.wraps(fn)
    def _old_name(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(deprecation(f"{old}()", f"{new}()"), stacklevel=2)
        return fn(*args, **kwargs)

    _old_name.__name__ = _old_name.__qualname__ = old
    _old_name.__doc__ = f"Deprecated name of :func:`{fn.__module__}.{new}` (removed in {REMOVED_IN})."
    return _old_name  # type: ignore[return-value]
