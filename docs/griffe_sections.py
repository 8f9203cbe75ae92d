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
