"""The examples in the core modules' docstrings run and print what they say."""
import doctest
import importlib

import pytest

MODULES = ["dpselect.sensitivity", "dpselect.dampening", "dpselect.mechanisms", "dpselect.audit",
           "dpselect.utilities.classification", "dpselect.multiobjective"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
