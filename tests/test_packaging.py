"""The library never loads or imports the papers' reproductions (their own distribution, reproductions/), and
finds the data only where it is told or beside a checkout."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpselect.datasets

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "src" / "dpselect"
SRC = str(PKG.parent)

_LOADED = ("import sys, runpy\n{run}\n"
           "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'dpselect_reproductions' "
           "or m == 'dpselect.experiments' or m.startswith('dpselect.experiments.'))\n"
           "print('LOADED', bad)\n")


@pytest.mark.parametrize("run", [
    "import dpselect",
    # `python -m dpselect demo --help`: the whole command line is built, then argparse exits
    "sys.argv = ['dpselect', 'demo', '--help']\ntry:\n    runpy.run_module('dpselect', run_name='__main__')\n"
    "except SystemExit as e:\n    assert e.code == 0, e.code",
])
def test_the_library_loads_no_reproduction_code(run):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _LOADED.format(run=run)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "LOADED []"


def _reproduction_imports(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
        lines += [node.lineno for n in names if n.split(".")[0] == "dpselect_reproductions"]
    return lines


def test_no_library_module_imports_the_reproductions():
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PKG.rglob("*.py"))
           for line in _reproduction_imports(ast.parse(p.read_text(encoding="utf-8")))]
    assert bad == [], f"library modules importing the reproductions: {bad}"
    assert not (PKG / "experiments").exists()
    planted = ast.parse("import numpy\nfrom dpselect_reproductions._data import load_graph\n"
                        "def f():\n    import dpselect_reproductions\n")
    assert _reproduction_imports(planted) == [2, 4]    # the check sees both forms, at any depth


def test_the_library_wheel_finds_only_dpselect():
    import tomllib

    root = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert root["tool"]["setuptools"]["packages"]["find"] == {"where": ["src"], "include": ["dpselect*"]}
    rep = tomllib.loads((ROOT / "reproductions" / "pyproject.toml").read_text(encoding="utf-8"))
    assert rep["project"]["name"] == "dpselect-reproductions" and rep["project"]["dependencies"] == ["dpselect"]
    assert rep["project"]["scripts"] == {"dpselect-reproduce": "dpselect_reproductions:main"}
    assert {"reproductions/tests", "reproductions/src"} <= set(root["tool"]["pytest"]["ini_options"]["testpaths"])


def test_outside_a_checkout_the_data_root_says_to_set_dpselect_data(monkeypatch, tmp_path):
    # an installed wheel (site-packages) run from a directory with no shared/datasets above it
    monkeypatch.delenv("DPSELECT_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dpselect.datasets, "__file__", str(tmp_path / "site-packages" / "dpselect" / "datasets.py"))
    with pytest.raises(FileNotFoundError, match=r"^cannot find the datasets directory: set DPSELECT_DATA to the "
                                                r"directory holding tabular/, graphs/, dpbench1d/"):
        dpselect.datasets.data_root()
    monkeypatch.setenv("DPSELECT_DATA", str(tmp_path))
    assert dpselect.datasets.data_root() == tmp_path


def test_test_file_names_are_unique_across_the_two_distributions():
    # pytest imports test files by base name (rootdir conftest, no packages): a name in both folders would stop
    # the README's test command at collection
    ours = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    theirs = {p.name for p in (ROOT / "reproductions" / "tests").glob("test_*.py")}
    assert theirs and not ours & theirs, sorted(ours & theirs)
