"""The documentation runs: every ```python block of README.md and docs/*.md, and the API reference build.

Each block is executed on its own, in a fresh namespace (so it must be self-contained: its imports and
data included), from the repository root. A block may be left out only with a reason its readers see: a
first line ``# docs-test: skip (<reason>)``, e.g. a full-scale run.
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[ \t]*$")
SKIP = re.compile(r"^#\s*docs-test:\s*skip\s*\((?P<reason>[^)]*\S[^)]*)\)\s*$")


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(first line number, code) of every ```python block, indentation of the fence removed."""
    blocks, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group("indent"), m.group("lang"), i + 1
        i += 1
        body = []
        while i < len(lines) and not (lines[i].strip() == "```" and lines[i].startswith(indent)):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        if lang == "python":
            blocks.append((start + 1, "\n".join(body) + "\n"))
    return blocks


CASES = [(p, line, code) for p in DOCS for line, code in python_blocks(p)]
#: Pages whose owner has not yet marked their not-runnable blocks (a 10^9-candidate run, a remote cluster);
#: their unmarked blocks are skipped with this reason until they carry '# docs-test: skip (...)'.
PENDING: dict[str, str] = {}


def _unmarked(path: Path) -> list[int]:
    """The lines of the python blocks of a page that carry no '# docs-test:' marker."""
    return [line for line, code in python_blocks(path) if not code.lstrip().startswith("# docs-test:")]


def test_pending_pages_are_live(monkeypatch):
    # an entry whose page is gone or has no unmarked block left is stale: remove it (it would excuse the next
    # unmarked block of that page)
    pages = {p.name: p for p in DOCS}
    stale = sorted(n for n in PENDING if n not in pages or not _unmarked(pages[n]))
    assert not stale, f"stale PENDING allowlist entries (nothing matches them any more; remove them): {stale}"
    if "glossary.md" not in PENDING:   # the glossary has no python block: an entry for it is stale
        monkeypatch.setitem(PENDING, "glossary.md", "planted")
        with pytest.raises(AssertionError, match="stale PENDING allowlist entries.*glossary.md"):
            test_pending_pages_are_live(monkeypatch)


def test_the_docs_have_python_blocks():
    assert len(CASES) >= 10
    assert {p.name for p, _, _ in CASES} >= {"README.md", "multiobjective.md", "graphs.md"}


@pytest.mark.parametrize("path,line,code", CASES, ids=[f"{p.name}:{line}" for p, line, _ in CASES])
def test_code_block_runs(path, line, code, monkeypatch, tmp_path):
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if first.startswith("# docs-test:"):
        m = SKIP.match(first)
        assert m, f"{path.name}:{line}: a skip marker needs a reason: '# docs-test: skip (<reason>)'"
        pytest.skip(f"{path.name}:{line}: {m.group('reason')}")
    if path.name in PENDING:
        pytest.skip(PENDING[path.name])
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__docs__"}
    exec(compile(code, f"{path.relative_to(ROOT)}:{line}", "exec"), namespace)


def test_skip_marker_parsing():
    assert SKIP.match("# docs-test: skip (full-scale run, 20 minutes)")
    assert not SKIP.match("# docs-test: skip ()")
    assert not SKIP.match("# docs-test: skip")


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="mkdocs / mkdocstrings not installed (pip install -e '.[docs]')")
def test_api_reference_builds_strict(tmp_path):
    """mkdocs + mkdocstrings build the site from the docstrings with warnings as errors."""
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    site = tmp_path / "site"
    assert (site / "api" / "index.html").exists()
    assert "select_model" in (site / "api" / "sklearn" / "index.html").read_text(encoding="utf-8")
    assert "not found among documentation files" not in out.stdout + out.stderr
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    # issue 21: the docstrings' Sphinx roles were shown as literal text (315 times); the griffe extension
    # turns them into cross-references (links where the target is documented, plain code otherwise)
    literal = [(p.relative_to(site), m) for p, html in pages.items() for m in ROLE_TEXT.findall(html)]
    assert not literal, f"{len(literal)} literal Sphinx roles, e.g. {literal[:5]}"
    api = "".join(html for p, html in pages.items() if "api" in p.parts)
    assert api.count('class="autorefs autorefs-internal"') >= 200
    # and no link of the site points to a file that is not in it
    assert not broken_links(site, pages), broken_links(site, pages)[:10]


ROLE_TEXT = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):(?:<code>|`)")
HREF = re.compile(r'<a [^>]*href="([^"#]*)(?:#[^"]*)?"')


def broken_links(site: Path, pages: dict) -> list[tuple[str, str]]:
    """(page, href) of every relative link of the built site whose target file does not exist."""
    bad = []
    for page, html in pages.items():
        for href in HREF.findall(html):
            if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("/"):
                continue
            target = (page.parent / href).resolve()
            if href.endswith("/") or target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append((str(page.relative_to(site)), href))
    return bad


def test_griffe_roles_to_refs():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import griffe_sections as gs
    finally:
        sys.path.pop(0)
    m = gs.ROLE.search("see :func:`~dpselect.quantiles.median` and")
    assert (m["role"], m["tilde"], m["text"]) == ("func", "~", "dpselect.quantiles.median")
    assert gs.ROLE.search(":py:meth:`fit <dpselect.sklearn.DPMOETClassifier.fit>`")["target"] == \
        "dpselect.sklearn.DPMOETClassifier.fit"
    assert gs.ROLE.search("a `:func:` b") is None


def test_api_reference_covers_every_public_name():
    import dpselect

    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "api").glob("*.md"))
    documented = set(re.findall(r"^:::\s*([\w.]+)", pages, flags=re.M))
    # a module page documents its members; a name is covered when it or a module exporting it is listed
    missing = [name for name in dpselect.__all__
               if not name.startswith("__") and f"dpselect.{name}" not in documented and not any(
                   d.startswith("dpselect.") and hasattr(_module(d), "__all__") and name in _module(d).__all__
                   for d in documented)]
    assert not missing, f"public names without an API reference entry: {missing}"


def _module(dotted: str):
    import importlib

    try:
        return importlib.import_module(dotted)
    except ImportError:
        return None


GLOSSARY = {"glossary-rng", "glossary-accountant", "glossary-neighbour-models", "glossary-public-quantities",
            "glossary-top-k-delta", "glossary-bounded-range", "glossary-exact", "glossary-top-k-method",
            "glossary-free-gaps"}
# the paragraphs the glossary holds, as they were pasted into docstrings before it (one line and a link now)
PASTED = ("records nothing and leaves", "leaves ``rng`` untouched", "A ``numpy.random.Generator`` (used as is)",
          "each pick runs with the largest ε0 for which", "As everywhere in dpselect (numpy SPEC 7)")


def test_glossary_entries_are_linked_from_the_docstrings_instead_of_pasted():
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\{#(glossary-[a-z-]+)\}", text)) == GLOSSARY
    assert "Glossary: glossary.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    sources = {p: p.read_text(encoding="utf-8") for p in (ROOT / "src" / "dpselect").rglob("*.py")}
    refs = {r for s in sources.values() for r in re.findall(r"\]\[(glossary-[a-z-]+)\]", s)}
    assert refs <= GLOSSARY, refs - GLOSSARY                      # every link names an entry
    assert {"glossary-rng", "glossary-accountant", "glossary-top-k-delta"} <= refs
    pasted = sorted(f"{p.relative_to(ROOT)}: {s!r}" for p, t in sources.items() for s in PASTED if s in t)
    assert not pasted, pasted
