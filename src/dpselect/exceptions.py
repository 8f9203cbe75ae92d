"""Warnings and errors specific to dpselect.

``PrivacyLeakWarning`` is emitted when a quantity that a privacy proof treats as *public* (a bound on
the values, a maximum degree, a database-size bound, a column range, a category count) was not given
by the caller and had to be read from the private data instead. The released output is then *not*
ε-DP as stated: the public quantity itself leaks, and the call charges its accountant
:class:`~dpselect.accounting.NonPrivate` (ε = ∞). Pass the quantity explicitly.

``BudgetExceededError`` is raised by :class:`dpselect.Accountant` when a release would spend more than the
budget; the release is refused before anything is drawn and nothing is recorded.
"""
from __future__ import annotations

import contextvars
import warnings

__all__ = ["PrivacyLeakWarning", "BudgetExceededError", "warn_public_from_data"]


class PrivacyLeakWarning(UserWarning):
    """A quantity the privacy proof treats as public was read from the private data.

    The released output is then *not* ε-DP as stated: the public quantity itself leaks. Emitted by
    :func:`warn_public_from_data`; pass the quantity explicitly (a value chosen without looking at the data)
    to silence it. A ``UserWarning``, so it is shown by default and can be turned into an error with
    ``warnings.simplefilter("error", PrivacyLeakWarning)``.

    Examples
    --------
    >>> issubclass(PrivacyLeakWarning, UserWarning)
    True
    """


class BudgetExceededError(RuntimeError):
    """A charge would take an :class:`~dpselect.Accountant` over its budget; it was refused, nothing was
    recorded. A state error, not a bad argument (hence ``RuntimeError``, not ``ValueError``): the same
    charge succeeds on an accountant with budget left.

    Parameters
    ----------
    message : str
        The error message.
    guarantee : guarantee value, optional
        What was charged (keyword-only, as are the next two).
    label : object, optional
        The label of the refused charge.
    spent : object, optional
        The accountant's spent value before the refused charge (unchanged by it).

    Examples
    --------
    >>> from dpselect.accounting import PureDP
    >>> err = BudgetExceededError("over budget", guarantee=PureDP(2.0), label="q1", spent=0.5)
    >>> isinstance(err, RuntimeError), err.label, err.spent
    (True, 'q1', 0.5)
    """

    def __init__(self, message: str, *, guarantee: object = None, label: object = None,
                 spent: object = None) -> None:
        super().__init__(message)
        self.guarantee, self.label, self.spent = guarantee, label, spent


def warn_public_from_data(quantity: str, value: object, where: str, *, stacklevel: int = 3) -> None:
    """Warn that ``quantity`` (e.g. ``"max_degree"``) was taken from the data as ``value`` in ``where``.

    Emits a :class:`PrivacyLeakWarning` whose message names the quantity, the value read and the function.

    Parameters
    ----------
    quantity : str
        The name of the public quantity (the parameter the caller should have passed).
    value : object
        The value read from the private data.
    where : str
        The public function that read it (prefixes the message).
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (keyword-only): 3 points at the caller of the public function
        that calls this helper.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_public_from_data("bound", 7.0, "median")
    >>> w[0].category.__name__
    'PrivacyLeakWarning'
    """
    _note_read_from_data(quantity)
    warnings.warn(
        f"{where}: {quantity} was not given and was read from the private data ({quantity} = {value!r}); "
        f"the result is not differentially private as stated. Pass {quantity}= explicitly (a public value "
        "chosen without looking at the data).",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )


#: The public quantities read from the data in the release running now (None outside one): appended by
#: :func:`warn_public_from_data`, read by that release's charge (``dpselect._boundary.charge``).
_READ_FROM_DATA: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("dpselect_read_from_data",
                                                                                  default=None)


class _release_scope:
    """The scope of one release: the quantities :func:`warn_public_from_data` reports in it, which make its
    charge ``NonPrivate``. A release nested in another reports them to the outer one too. (A class: every
    selector call enters one, and a generator-based context manager costs several times more.)

    Examples
    --------
    >>> import warnings
    >>> with _release_scope() as seen, warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     warn_public_from_data("bound", 7.0, "median")
    >>> seen
    ['bound']
    """

    __slots__ = ("_outer", "_seen", "_token")

    def __enter__(self) -> list[str]:
        self._outer = _READ_FROM_DATA.get()
        self._seen: list[str] = []
        self._token = _READ_FROM_DATA.set(self._seen)
        return self._seen

    def __exit__(self, *exc: object) -> None:
        _READ_FROM_DATA.reset(self._token)
        if self._outer is not None:
            self._outer.extend(self._seen)


def _note_read_from_data(quantity: str) -> None:
    """Record ``quantity`` as read from the data in the release running now (whatever the warning filters:
    that release's charge reads it). Every emitter of :class:`PrivacyLeakWarning` calls it."""
    seen = _READ_FROM_DATA.get()
    if seen is not None:
        seen.append(quantity)


def _read_from_data() -> str | None:
    """Why the release running now is not private (the quantities it read from the data), or None."""
    seen = _READ_FROM_DATA.get()
    return f"{', '.join(dict.fromkeys(seen))} read from the data" if seen else None
