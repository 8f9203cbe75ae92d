"""Every public name has a numpy-standard docstring (issue 23 item 6).

For every public module of dpselect (no component of its dotted path starts with ``_``) and every
function or class of its ``__all__`` that dpselect defines, the docstring has the numpydoc sections

* "Parameters", naming every parameter of the signature (``self`` / ``cls`` aside) and nothing else, so a
  renamed parameter fails here until its description follows; a dataclass or named tuple may list its
  fields under "Attributes" instead;
* "Returns" for a function or method that returns something ("Yields" for a generator); classes are exempt;
* "Examples" with at least one ``>>>`` line (run by ``--doctest-modules``, so a stale example fails too).

A class is checked on its own docstring (its constructor's parameters) and on each public method it defines
(properties aside); an override without a docstring is checked on the docstring it inherits (as ``help()``
shows it), so a hook documented once on the base class is not repeated on every subclass. A name
re-exported by public modules is checked once: in the module that defines it when that module exports it,
else in the first public module that does (the package root first).
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap

import pytest

import dpselect

#: Public modules whose docstrings other engineers are still converting (issue 23 item 6). The set may
#: only shrink: remove a module when its names pass, never add one.
PENDING_MODULES: set[str] = set()

SECTION = re.compile(r"^(?P<name>[A-Z][A-Za-z ]*)\n-{3,}[ \t]*$", re.MULTILINE)
ITEM = re.compile(r"^(?P<names>\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split(".")[1:])


def _public_modules() -> list[str]:
    names = ["dpselect"]
    names += [m.name for m in pkgutil.walk_packages(dpselect.__path__, "dpselect.") if not _private(m.name)]
    return sorted(names)


MODULES = _public_modules()


def _home(obj: object, name: str, exporter: str) -> str | None:
    """The module a public name is checked in: where it is defined when that module exports it, else
    ``exporter`` (a private home, or a public one that does not list it)."""
    home = getattr(obj, "__module__", None) or ""
    if home != "dpselect" and not home.startswith("dpselect."):
        return None  # not defined by dpselect (a re-exported numpy type, say)
    if _private(home):
        return exporter
    try:
        listed = name in getattr(importlib.import_module(home), "__all__", ())
    except ImportError:
        listed = False
    return home if listed else exporter


def _names() -> list[tuple[str, str, object]]:
    """(module, qualified name, object) of every public function, class and public method, once each."""
    seen: dict[int, tuple[str, str, object]] = {}
    for modname in MODULES:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            home = _home(obj, name, modname)
            if home is None or home != modname:
                continue  # checked in the module that defines and exports it
            seen[id(obj)] = (home, name, obj)
    out = []
    for home, name, obj in seen.values():
        out.append((home, name, obj))
        if inspect.isclass(obj):
            for attr, raw in vars(obj).items():
                if attr.startswith("_"):
                    continue
                func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                if inspect.isfunction(func):
                    # as the class gives it: a classmethod bound (no cls), a docstring-less override
                    # inheriting its base's (inspect.getdoc)
                    out.append((home, f"{name}.{attr}", getattr(obj, attr)))
    return sorted(out, key=lambda t: (t[0], t[1]))


NAMES = _names()
CHECKED = [t for t in NAMES if t[0] not in PENDING_MODULES]


def sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of a (cleaned) docstring: header -> body ("" holds the summary part)."""
    out, last, start = {}, "", 0
    for m in SECTION.finditer(doc):
        out[last] = doc[start:m.start()]
        last, start = m.group("name").strip(), m.end()
    out[last] = doc[start:]
    return out


def documented_names(body: str) -> list[str]:
    """The parameter names listed in a Parameters / Attributes section (``a, b : int`` names two)."""
    names = []
    for line in textwrap.dedent(body).splitlines():
        if not line.strip() or line[0].isspace():
            continue
        m = ITEM.match(line.strip())
        if m:
            names += [n.strip().lstrip("*") for n in m.group("names").split(",")]
    return names


def _signature_params(obj: object, bound: bool) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    params = list(sig.parameters.values())
    if bound and params and params[0].name in ("self", "cls"):
        params = params[1:]
    return [p.name for p in params]


def _class_params(cls: type) -> list[str]:
    init = cls.__dict__.get("__init__") or next(
        (k.__dict__["__init__"] for k in cls.__mro__[1:] if "__init__" in k.__dict__), None)
    new = next((k.__dict__["__new__"] for k in cls.__mro__ if "__new__" in k.__dict__), None)
    defined_here = any(
        getattr(f, "__module__", "") and str(getattr(f, "__module__", "")).startswith("dpselect")
        for f in (init, new) if f is not None)
    if not (defined_here or dataclasses.is_dataclass(cls) or _is_namedtuple(cls)):
        return []  # the constructor of a builtin base (an exception, say): nothing to document
    return _signature_params(cls, bound=False)


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _returns_value(func) -> bool:
    ann = inspect.signature(func).return_annotation
    if ann is not inspect.Signature.empty:
        return ann not in (None, "None", type(None))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return True
    fn = tree.body[0]
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            return True
    return False


def problems(qualname: str, obj: object) -> list[str]:
    """What the docstring of ``obj`` lacks (empty when it is complete)."""
    if inspect.isclass(obj):   # its own docstring (getdoc would fall back to a base class's)
        doc = inspect.cleandoc(obj.__doc__ or "")
    else:                      # a method override without a docstring documents itself by its base's
        doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return ["no docstring"]
    secs = sections(doc)
    out = []
    if inspect.isclass(obj):
        params = _class_params(obj)
        listed_in = ("Parameters", "Attributes") if (dataclasses.is_dataclass(obj) or _is_namedtuple(obj)) \
            else ("Parameters",)
    else:
        params = _signature_params(obj, bound="." in qualname)
        listed_in = ("Parameters",)
    if params:
        present = [s for s in listed_in if s in secs]
        if not present:
            out.append(f"no {' / '.join(listed_in)} section (parameters {params})")
        else:
            documented = [n for s in present for n in documented_names(secs[s])]
            missing = [p for p in params if p not in documented]
            if missing:
                out.append(f"parameters not documented: {missing}")
            if "Parameters" in secs:
                extra = [n for n in documented_names(secs["Parameters"]) if n not in params]
                if extra:
                    out.append(f"documented parameters not in the signature: {extra}")
    if not inspect.isclass(obj):
        if inspect.isgeneratorfunction(obj):
            if "Yields" not in secs:
                out.append("no Yields section (a generator)")
        elif _returns_value(obj) and "Returns" not in secs:
            out.append("no Returns section")
    if "Examples" not in secs:
        out.append("no Examples section")
    elif not any(line.lstrip().startswith(">>>") for line in secs["Examples"].splitlines()):
        out.append("an Examples section without a >>> line")
    return out


def test_there_are_public_names_to_check():
    assert len(NAMES) >= 300   # the reproductions (their own distribution) are not counted
    assert len(CHECKED) >= 190   # accounting, binary, utilities, audit, exceptions


def test_pending_modules_exist():
    """The pending set names real public modules only (so it can only shrink as modules are converted)."""
    assert PENDING_MODULES <= set(MODULES), sorted(PENDING_MODULES - set(MODULES))


def test_pending_modules_still_have_problems(monkeypatch):
    """An entry whose names all pass is stale (it would excuse the next problem of that module): remove it."""
    stale = sorted(m for m in PENDING_MODULES if not any(problems(q, o) for mod, q, o in NAMES if mod == m))
    assert not stale, f"stale PENDING_MODULES allowlist entries (their docstrings pass; remove them): {stale}"
    if "dpselect.audit" not in PENDING_MODULES:    # audit's docstrings pass: an entry for it is stale
        monkeypatch.setattr(sys.modules[__name__], "PENDING_MODULES", PENDING_MODULES | {"dpselect.audit"})
        with pytest.raises(AssertionError, match="stale PENDING_MODULES allowlist entries.*dpselect.audit"):
            test_pending_modules_still_have_problems(monkeypatch)


@pytest.mark.parametrize("module,qualname,obj", CHECKED, ids=[f"{m}.{q}" for m, q, _ in CHECKED])
def test_numpy_docstring(module, qualname, obj):
    found = problems(qualname, obj)
    assert not found, f"{module}.{qualname}: " + "; ".join(found)


def test_the_checker_catches_what_it_should():
    def good(a: int, b: int = 1) -> int:
        """Sum.

        Parameters
        ----------
        a, b : int
            Terms.

        Returns
        -------
        int

        Examples
        --------
        >>> good(1)
        2
        """
        return a + b

    def stale(x: int) -> int:
        """Sum.

        Parameters
        ----------
        y : int
            Renamed since.

        Examples
        --------
        Nothing runs here.
        """
        return x

    def gen(n: int):
        """Count.

        Parameters
        ----------
        n : int
            How many.

        Returns
        -------
        int

        Examples
        --------
        >>> list(gen(2))
        [0, 1]
        """
        yield from range(n)

    assert problems("good", good) == []
    assert problems("stale", stale) == [
        "parameters not documented: ['x']", "documented parameters not in the signature: ['y']",
        "no Returns section", "an Examples section without a >>> line"]
    assert problems("gen", gen) == ["no Yields section (a generator)"]

    def old_name(x):
        """Deprecated name of :func:`good` (removed in 0.2.0)."""
        return good(x)

    # no exemption for a deprecated alias: the package keeps none (one spelling per concept)
    assert "no Parameters section (parameters ['x'])" in problems("old_name", old_name)
