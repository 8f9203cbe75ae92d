"""The package is typed: py.typed ships, every public signature has hints, and mypy is clean on src/."""
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

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


def test_mypy_is_clean_on_src():
    api = pytest.importorskip("mypy.api")
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "src" / "dpselect")])
    assert status == 0, out + err


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


def test_rng_like_is_one_public_type_mypy_accepts(tmp_path):
    api = pytest.importorskip("mypy.api")
    import dpselect.typing
    from dpselect import _rng

    assert _rng.RngLike is dpselect.typing.RngLike
    import os
    from pathlib import Path

    src = str(Path(dpselect.typing.__file__).resolve().parent.parent)  # the dpselect under test
    head = "import numpy as np\nimport dpselect\nfrom dpselect.typing import RngLike\n"
    good = (head + "r: RngLike = np.random.SeedSequence(1)\n"
            "dpselect.exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng=np.random.SeedSequence(1))\n"
            "dpselect.priv_agg([[1.0, 2.0]], [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], "
            "rng=np.random.PCG64(2))\n")
    bad = head + "dpselect.exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng='seed')\n"
    old_env = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = src
    try:
        results = []
        for name, text in (("good.py", good), ("bad.py", bad)):
            (tmp_path / name).write_text(text)
            results.append(api.run(["--no-incremental", "--cache-dir=/dev/null", "--python-version", "3.11",
                                    "--follow-imports=silent", str(tmp_path / name)]))
    finally:
        if old_env is None:
            os.environ.pop("MYPYPATH")
        else:
            os.environ["MYPYPATH"] = old_env
    (out, err, status), (bad_out, _, bad_status) = results
    assert status == 0, out + err
    assert bad_status == 1 and 'Argument "rng" to "exponential"' in bad_out, bad_out  # dpselect's annotations were checked
