"""Collection rules for the docstring examples of ``src/dpselect`` (run with ``--doctest-modules``)."""
import importlib.util

# modules of optional integrations are collected only when their dependency is installed
_OPTIONAL = {"dask": "src/dpselect/dask/*", "sklearn": "src/dpselect/sklearn*"}
collect_ignore_glob = [glob for mod, glob in _OPTIONAL.items() if importlib.util.find_spec(mod) is None]
