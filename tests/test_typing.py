"""The package is typed: py.typed ships, every public signature has hints, and mypy is clean on src/ (the CI's mypy
step in .ci/run checks that, once, outside the unit tests: issue 33; tests/test_ci.py checks the wiring)."""
import importlib
import inspect
import pkgutil
from pathlib import Path

import dpselect

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = {"dpselect.dask": "dask", "dpselect.sklearn": "sklearn"}


def _public_functions():
    for info in pkgutil.walk_packages(dpselect.__path__, "dpselect."):
        if any(info.name.startswith(p) and importlib.util.find_spec(dep) is None for p, dep in OPTIONAL.items()):
            continue
        mod = importlib.import_module(info.name)
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for name in names:
            obj = getattr(mod, name, None)
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                yield f"{mod.__name__}.{name}", obj
            elif inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__"):
                        yield f"{mod.__name__}.{name}.{k}", v


def test_py_typed_ships():
    assert (ROOT / "src" / "dpselect" / "py.typed").exists()
    assert 'dpselect = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_every_public_signature_has_type_hints():
    missing = []
    for qual, fn in _public_functions():
        sig = inspect.signature(inspect.unwrap(fn))
        bare = [p for p, v in sig.parameters.items() if p not in ("self", "cls")
                and v.annotation is inspect.Parameter.empty and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)]
        no_return = sig.return_annotation is inspect.Signature.empty and not qual.endswith(".__init__")
        if bare or no_return:
            missing.append(f"{qual}({', '.join(bare)}){' -> ?' if no_return else ''}")
    assert not missing, f"{len(missing)} public signatures lack type hints:\n" + "\n".join(missing)


def test_no_private_names_in_public_signatures():
    import importlib
    import inspect
    import pkgutil

    import dpselect

    bad = []
    for info in pkgutil.walk_packages(dpselect.__path__, "dpselect."):
        if info.name.startswith(("dpselect.dask", "dpselect.sklearn")):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            fns = [obj] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                fns = [v for k, v in vars(obj).items() if inspect.isfunction(v) and (k == "__init__" or k[0] != "_")]
            for fn in fns:
                try:
                    sig = inspect.signature(fn)
                except (TypeError, ValueError):
                    continue
                for p in sig.parameters.values():
                    if p.name.startswith("_") or "_GroupedMedian" in str(p.annotation):
                        bad.append(f"{info.name}.{name}: {p.name}")
                if "_GroupedMedian" in str(sig.return_annotation):
                    bad.append(f"{info.name}.{name} -> {sig.return_annotation}")
    assert not bad, bad


