"""The reproductions use the library as its users do: through public modules and names (``dpselect.graphs``,
``dpselect.trees``, ...), private ones only where the library has no public counterpart."""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "dpselect_reproductions"

# private library modules without a public counterpart: the dominance counts of the published code's δ^PS
# (paper_code) and the output checks and headless pyplot the driver shares with `dpselect demo`
PRIVATE_ALLOWED = {"dpselect._dominance", "dpselect._output"}


def _private_uses(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "dpselect":
            mod = node.module or ""
            private_mod = any(part.startswith("_") for part in mod.split(".")[1:])
            if private_mod and mod not in PRIVATE_ALLOWED:
                out.append(f"{node.lineno}: {mod}")
            out += [f"{node.lineno}: {mod}.{a.name}" for a in node.names
                    if a.name.startswith("_") and mod not in PRIVATE_ALLOWED]
        elif isinstance(node, ast.Import):
            out += [f"{node.lineno}: {a.name}" for a in node.names if a.name.split(".")[0] == "dpselect"
                    and any(part.startswith("_") for part in a.name.split(".")[1:])]
    return out


def test_the_reproductions_import_public_library_paths():
    bad = [f"{p.name}:{use}" for p in sorted(SRC.glob("*.py"))
           for use in _private_uses(ast.parse(p.read_text(encoding="utf-8")))]
    assert bad == [], f"private library imports where a public path exists: {bad}"
    planted = ast.parse("from dpselect.trees._diffpid3 import diffpid3\nfrom dpselect.graphs import _check\n"
                        "import dpselect.quantiles._median\nfrom dpselect._output import pyplot\n")
    assert _private_uses(planted) == ["1: dpselect.trees._diffpid3", "2: dpselect.graphs._check",
                                      "3: dpselect.quantiles._median"]
