"""The package's one vocabulary: mechanism names, aliases and the deprecation helper (dpselect.vocabulary)."""
from __future__ import annotations

import warnings

import pytest

from dpselect.vocabulary import (
    ALIASES,
    GLOBAL_MECHANISMS,
    LOCAL_MECHANISMS,
    MECHANISMS,
    check_mechanism,
    deprecated,
)


def test_names_and_aliases():
    assert MECHANISMS == GLOBAL_MECHANISMS + LOCAL_MECHANISMS
    assert set(ALIASES.values()) == set(MECHANISMS)
    for name in MECHANISMS:
        assert check_mechanism(name) == name
        assert check_mechanism(name.upper()) == name
    for alias, name in ALIASES.items():
        assert check_mechanism(alias) == name
        assert check_mechanism(alias.upper()) == name
        assert check_mechanism(f" {alias.capitalize()} ") == name


def test_rejects_unknown_and_disallowed():
    with pytest.raises(ValueError, match=r"mechanism must be one of .* got 'laplace'"):
        check_mechanism("laplace")
    with pytest.raises(ValueError, match=r"method must be one of exponential, permute_and_flip .*\(or EM, PF"):
        check_mechanism("LD", name="method", allowed=("exponential", "permute_and_flip"))
    with pytest.raises(TypeError, match="mechanism must be a string"):
        check_mechanism(3)


def test_deprecated_points_at_the_caller():
    def api():
        deprecated("api(old=1)", "new=1")

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        api()
    assert len(rec) == 1 and rec[0].category is DeprecationWarning
    assert "api(old=1) is deprecated" in str(rec[0].message) and "use new=1" in str(rec[0].message)
    assert rec[0].filename == __file__  # stacklevel: the warning names the caller's line, not the library's


def test_renamed():
    from dpselect.vocabulary import renamed

    def api(new=None, old=None):
        return renamed(new, old, where="api", new="new", old="old")

    assert api(new=1) == 1 and api() is None
    with pytest.warns(DeprecationWarning, match=r"api\(old=...\) is deprecated.*use new=..."):
        assert api(old=2) == 2
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both new and its deprecated spelling old"):
        api(new=1, old=2)


def test_docstring_examples():
    import doctest

    import dpselect.vocabulary as voc

    res = doctest.testmod(voc)
    assert res.attempted > 0 and res.failed == 0
