"""The package is typed: py.typed ships, every public signature has hints, and mypy is clean on src/ (the CI's mypy
step in .ci/run checks that, once, outside the unit tests: issue 33; tests/test_ci.py checks the wiring)."""
import importlib
import inspect
import pkgutil
import re
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


# a private class named in an annotation (e.g. `_Grouped`, `mod._Spec`): users cannot import or check it
_PRIVATE_CLASS = re.compile(r"\b_[A-Z]")


def test_no_private_names_in_public_signatures():
    import importlib
    import inspect
    import pkgutil

    import dpselect

    bad = []
    for info in pkgutil.walk_packages(dpselect.__path__, "dpselect."):
        if info.name.startswith(("dpselect.dask", "dpselect.sklearn")) or any(
                part.startswith("_") for part in info.name.split(".")[1:]):
            continue     # optional extras; private modules (their public names are re-exported and checked there)
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
                    if p.name.startswith("_") or _PRIVATE_CLASS.search(str(p.annotation)):
                        bad.append(f"{info.name}.{name}: {p.name}")
                if _PRIVATE_CLASS.search(str(sig.return_annotation)):
                    bad.append(f"{info.name}.{name} -> {sig.return_annotation}")
    assert not bad, bad




def _src_trees():
    import ast

    for path in sorted((ROOT / "src" / "dpselect").rglob("*.py")):
        yield path.relative_to(ROOT / "src"), ast.parse(path.read_text())


def _names_in(node) -> set:
    import ast

    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _is_delta(name: str) -> bool:
    return name == "delta" or name.startswith("delta_")


def _described(doc: str, param: str) -> list:
    """The lines of a docstring that describe ``param``: its numpydoc entry, else every prose line naming it."""
    import re

    lines = doc.splitlines()
    for i, ln in enumerate(lines):
        if re.match(rf"\s*{param}\s*:", ln):
            indent = len(ln) - len(ln.lstrip())
            out = [ln]
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                out.append(nxt)
            return out
    return [ln for ln in lines if re.search(rf"\b{param}\b", ln) and not ln.lstrip().startswith((">>>", "..."))]


def test_delta_is_never_the_sensitivity():
    """`delta` names the DP δ only; the sensitivity Δu is `sensitivity` (or `sens`): a parameter named delta*
    is never documented as a sensitivity or used as ε's divisor, and no delta* name is bound to a sensitivity."""
    import ast
    import re

    as_sensitivity = re.compile(r"sensitiv|Δu|eps(ilon)?\s*/\s*\(?\s*delta", re.IGNORECASE)
    bad = []
    for rel, tree in _src_trees():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
                doc = ast.get_docstring(node) or ""
                for p in filter(_is_delta, params):
                    bad += [f"{rel}:{node.lineno} {node.name}({p}): {ln.strip()}" for ln in _described(doc, p)
                            if as_sensitivity.search(ln)]
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                if any(n.startswith("eps") for n in _names_in(node.left)) and any(map(_is_delta,
                                                                                      _names_in(node.right))):
                    bad.append(f"{rel}:{node.lineno} ε divided by a delta: {ast.unparse(node)}")
            targets: list = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            elif isinstance(node, ast.keyword) and node.arg is not None:
                targets, value = [ast.Name(node.arg)], node.value
            for t in targets:
                names = [n.id for n in ast.walk(t) if isinstance(n, ast.Name)] + [
                    n.attr for n in ast.walk(t) if isinstance(n, ast.Attribute)]
                if any(map(_is_delta, names)) and any("sensitivity" in n for n in _names_in(value)):
                    bad.append(f"{rel}:{node.lineno} {ast.unparse(t)} = {ast.unparse(value)}")
    assert not bad, "delta used for the sensitivity Δu:\n" + "\n".join(bad)
