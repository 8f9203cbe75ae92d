"""The CI entry point (.ci/run): the README's test command, then mypy once as its own step (issue 33: mypy ran
twice inside the unit tests, 20-24 s each), ruff, and the wheel check (.ci/wheel_check). Every step runs; the
exit status is the first failure's. Checked
with a stand-in ``python3`` on PATH that records its arguments, so nothing is installed and mypy never runs.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / ".ci" / "run"

STUB = """#!/usr/bin/env bash
echo "$*" >> "$CI_LOG"
case "$*" in
  "-m pip"*) exit "${PIP_RC:-0}" ;;
  "-m pytest"*) exit "${PYTEST_RC:-0}" ;;
  "-m mypy"*) exit "${MYPY_RC:-0}" ;;
  "-m ruff"*) exit "${RUFF_RC:-0}" ;;
  ".ci/wheel_check"*) exit "${WHEEL_RC:-0}" ;;
esac
exit 99
"""


def _readme_test_command() -> str:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    lines = [ln for b in blocks for ln in b.splitlines() if ln.endswith("python3 -m pytest")]
    assert len(lines) == 1, lines
    return lines[0]


def test_ci_runs_the_readme_test_command_verbatim():
    # one pip call installs the library and the reproductions (their own distribution, reproductions/)
    assert _readme_test_command() == ('python3 -m pip install -e ".[test]" -e "./reproductions[plot]" && '
                                      'python3 -m pytest')
    assert _readme_test_command() in RUN.read_text(encoding="utf-8")


def test_mypy_runs_in_ci_not_in_pytest():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = cfg["tool"]["mypy"]
    assert mypy["files"] == ["src/dpselect", "reproductions/src/dpselect_reproductions", "tests/typecheck"]
    assert mypy["warn_unused_ignores"] is True
    # the typed-usage file relies on warn_unused_ignores: its str seed must be an error mypy reports
    assert '# type: ignore[arg-type]' in (ROOT / "tests" / "typecheck" / "rng_like.py").read_text(encoding="utf-8")
    uses = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "tests").glob("test_*.py"))
            if re.search(r"mypy\.api|\bapi\.run\(", p.read_text(encoding="utf-8"))]
    assert uses == [], f"mypy runs inside the unit tests: {uses}"


def test_ruff_and_build_are_in_the_test_extra_and_ruff_is_configured():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    test = " ".join(cfg["project"]["optional-dependencies"]["test"])
    assert "ruff>=0.6" in test and "build" in test
    lint = cfg["tool"]["ruff"]["lint"]
    assert {"E", "F", "W", "RUF100", "PGH004"} <= set(lint["select"]) and not lint.get("ignore")


STEPS = ["pip", "pytest", "mypy", "ruff", "wheel_check"]


@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
@pytest.mark.parametrize("rcs, want_calls, want_rc", [
    ((0, 0, 0, 0, 0), STEPS, 0),
    ((0, 1, 0, 0, 0), STEPS, 1),                  # the tests failed: the other steps still run, the tests' status
    ((0, 0, 2, 0, 0), STEPS, 2),                  # only mypy failed: its status
    ((0, 5, 2, 0, 0), STEPS, 5),                  # both failed: the first failure's status
    ((3, 0, 0, 0, 0), ["pip", "mypy", "ruff", "wheel_check"], 3),   # the install failed: no tests, the rest runs
    ((0, 0, 0, 4, 0), STEPS, 4),                  # only ruff failed
    ((0, 0, 0, 0, 6), STEPS, 6),                  # only the wheel check failed
    ((0, 0, 2, 4, 6), STEPS, 2),
])
def test_every_step_runs_and_the_first_failure_is_the_status(tmp_path, rcs, want_calls, want_rc):
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "python3"
    stub.write_text(STUB)
    stub.chmod(0o755)
    log = tmp_path / "log"
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "CI_LOG": str(log),
           **{f"{name}_RC": str(rc) for name, rc in zip(("PIP", "PYTEST", "MYPY", "RUFF", "WHEEL"), rcs)}}
    done = subprocess.run(["bash", str(RUN)], env=env, capture_output=True, text=True, timeout=30)
    calls = log.read_text().splitlines()
    assert [c.split()[1] if c.startswith("-m ") else Path(c.split()[0]).name for c in calls] == want_calls, calls
    assert calls[0] == "-m pip install -e .[test] -e ./reproductions[plot]"
    assert calls[-3:] == ["-m mypy --config-file pyproject.toml", "-m ruff check", ".ci/wheel_check"]
    assert done.returncode == want_rc, done.stderr


def test_the_readme_outputs_are_ignored_by_git():
    # what the README's own commands write in the repository root must not show up as untracked files:
    # each reproduce example's --out, the default output directory, and `mkdocs build`'s site/
    import shutil

    from dpselect_reproductions._common import DEFAULT_OUT

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", text, re.S))
    outs = sorted(set(re.findall(r"--out (\S+)", blocks)))
    assert outs == ["my-figure17", "my-run"], outs
    site = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "site_dir" not in site    # mkdocs' default, site/
    paths = [f"{p}/results.csv" for p in [*outs, str(DEFAULT_OUT), "site"]]
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index", *paths], capture_output=True,
                          text=True, timeout=30)
    assert sorted(done.stdout.split()) == sorted(paths), done.stdout + done.stderr


def test_every_reproduce_example_of_the_readme_states_its_cost():
    # the first example was a 26-minute run with no word of its cost (issue 33)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Reproducing the papers"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [ln for ln in block.splitlines() if ln.strip()]
    assert len(commands) >= 4
    untimed = [ln for ln in commands if not re.search(r"#\s*(\d+|½|\d+½) (s|min)\b", ln)]
    assert untimed == [], f"README reproduce examples without their cost: {untimed}"


def test_the_quick_start_installs_in_a_virtual_environment():
    # PEP 668 systems refuse `pip install` outside a virtual environment: the quick start says where to install
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text[text.index("## Getting started (quick start)"):text.index("## Single-objective selection")]
    prose = " ".join(quick.split())
    assert "in a virtual environment" in prose and "`python3 -m venv .venv && . .venv/bin/activate`" in prose
    # the block holds exactly the two commands: demo, then tests (what .ci/run runs)
    block = [ln for ln in re.search(r"```bash\n(.*?)```", quick, re.S).group(1).splitlines() if ln.strip()]
    assert block == ["python3 -m pip install -e . && python3 -m dpselect demo",
                     'python3 -m pip install -e ".[test]" -e "./reproductions[plot]" && python3 -m pytest']
