"""A griffe extension for the API reference (mkdocs.yml): numpydoc sections the docstrings leave implicit.

The docstrings are written for ``help()`` and doctest first. Two habits confuse a numpydoc parser, and
this extension makes them explicit before mkdocstrings renders, without changing any text:

* a doctest (``>>>``) outside an "Examples" section gets an "Examples" heading, so it is shown as code
  (not as markdown, where ``[a][b]`` would be a link);
* a paragraph that follows a "Parameters" / "Attributes" list without a heading gets a "Notes" heading
  (otherwise its first word would be read as a parameter name).
"""
from __future__ import annotations

import re
from typing import Any

from griffe import Extension

_ITEM = re.compile(r"^\*{0,2}[A-Za-z_]\w*(\s*,\s*\*{0,2}[A-Za-z_]\w*)*\s*(:.*)?$")
_LISTS = {"Parameters", "Other Parameters", "Attributes", "Keyword Arguments"}


def normalise(text: str) -> str:
    """``text`` with the implicit "Examples" and "Notes" headings added."""
    lines = text.split("\n")
    out: list[str] = []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and nxt.strip() and set(nxt.strip()) == {"-"} and not line.startswith(" "):
            section = line.strip()
            out += [line, nxt]
            i += 2
            continue
        starts_block = not out or not out[-1].strip()
        if line.startswith(">>>") and section != "Examples" and starts_block:
            out += ["Examples", "--------"]
            section = "Examples"
        elif (section in _LISTS and line.strip() and not line.startswith((" ", "\t")) and starts_block
              and not _ITEM.match(line.strip())):
            out += ["Notes", "-----"]
            section = "Notes"
        out.append(line)
        i += 1
    return "\n".join(out)


class ImplicitSections(Extension):
    """Adds the implicit numpydoc headings (see the module docstring) to every docstring."""

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = normalise(obj.docstring.value)


# -- Sphinx roles -----------------------------------------------------------------------------------
#: ``:func:`x```, ``:class:`~a.B```, ``:py:meth:`x <a.b>``` (the docstrings' Sphinx cross-references).
ROLE = re.compile(r":(?:py:)?(?P<role>func|meth|class|mod|attr|data|exc|obj|const|ref):"
                  r"`(?P<tilde>~?)(?P<text>[^`<]*?)\s*(?:<(?P<target>[^`>]+)>)?`")


def _lookup(pkg: Any, path: str) -> Any:
    """The object at the dotted ``path`` in ``pkg`` (or None)."""
    if path == pkg.path:
        return pkg
    if not path.startswith(pkg.path + "."):
        return None
    try:
        return pkg[path[len(pkg.path) + 1:]]
    except Exception:  # noqa: BLE001 -- a missing member or an alias that does not resolve: no link
        return None


def _target(obj: Any, pkg: Any, name: str) -> str:
    """The full path of ``name`` seen from ``obj`` (its scope, its parents', the package), else ``name``."""
    name = name.lstrip(".")
    head, _, rest = name.partition(".")
    scopes = []
    o = obj
    while o is not None:
        scopes.append(o)
        o = o.parent
    for scope in scopes:
        try:
            base = scope.resolve(head)
        except Exception:  # noqa: BLE001 -- griffe's NameResolutionError and the like: try the next scope
            continue
        full = f"{base}.{rest}" if rest else base
        found = _lookup(pkg, full)
        if found is not None:
            return getattr(found, "canonical_path", full) or full
    for full in (name, f"{pkg.path}.{name}"):
        found = _lookup(pkg, full)
        if found is not None:
            return getattr(found, "canonical_path", full) or full
    return name


def roles_to_refs(text: str, obj: Any, pkg: Any) -> str:
    """``text`` with every Sphinx role turned into an optional autorefs cross-reference: a link where the
    target is in the API reference, plain code otherwise (never a build error, never the literal role)."""

    def sub(m: re.Match) -> str:
        target = (m["target"] or m["text"]).strip()
        shown = m["text"].strip() or target
        if m["tilde"]:
            shown = shown.rsplit(".", 1)[-1]
        ident = _target(obj, pkg, target.lstrip("~"))
        return f'<autoref identifier="{ident}" optional><code>{shown}</code></autoref>'

    return ROLE.sub(sub, text)


class SphinxRoles(Extension):
    """Turns the Sphinx roles of every docstring of the package into cross-references (see
    :func:`roles_to_refs`); runs once the whole package is loaded, so names resolve across modules."""

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        seen: set[int] = set()

        def walk(o: Any) -> None:
            if id(o) in seen or getattr(o, "is_alias", False):
                return
            seen.add(id(o))
            if o.docstring is not None and ":" in o.docstring.value:
                o.docstring.value = roles_to_refs(o.docstring.value, o, pkg)
            for member in o.members.values():
                walk(member)

        walk(pkg)
