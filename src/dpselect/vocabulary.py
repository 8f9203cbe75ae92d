"""One vocabulary for the whole package: mechanism names and their short aliases.

Every function that takes a selection mechanism takes ``mechanism=`` with one of :data:`MECHANISMS`;
the short aliases EM, PF, RNM, LD and SLD are accepted case-insensitively. Older spellings of some
functions (``local=True``, ``sensitivity="local"``, ``"global"/"local"/"shifted"``) keep working for one
release with a ``DeprecationWarning`` (:func:`deprecated`).
"""
from __future__ import annotations

import warnings
from typing import Iterable, Literal

__all__ = ["MECHANISMS", "GLOBAL_MECHANISMS", "LOCAL_MECHANISMS", "ALIASES", "Mechanism", "check_mechanism",
           "deprecated", "renamed"]

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
    """Warn that the spelling ``old`` is deprecated in favour of ``new`` (removed in the next release)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                  DeprecationWarning, stacklevel=stacklevel)


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
