import os
import subprocess
import sys

import pytest

import dpselect.datasets
import dpselect.demo
from dpselect import cli
from dpselect.cli import main


def test_demo_runs_end_to_end(capsys, tmp_path):
    assert main(["demo", "--plot", str(tmp_path / "demo.png")]) == 0
    out = capsys.readouterr().out
    assert "NLTCS (21,574 records)" in out
    assert "Enron email graph (36,692 nodes, 183,831 edges)" in out
    assert "DP-MOTkIN-Agg local" in out and "HEPTH" in out
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_module_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "dpselect", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "demo" in out.stdout and "reproduce" not in out.stdout


# -- issue 11: every user error is one `error:` line, exit status 2, no traceback ---------------------
def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and ": error: " in lines[0]
    return lines[0]


def _run_module(args, **env):
    return subprocess.run([sys.executable, "-m", "dpselect", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


def test_bad_epsilon_on_demo_subprocess():
    out = _run_module(["demo", "--epsilon", "-1", "--skip-graph"])
    assert out.returncode == 2 and out.stdout == ""
    assert _one_error_line(out.stderr) == "dpselect demo: error: --epsilon must be a finite number > 0, got -1.0"


@pytest.mark.parametrize("argv, line", [
    (["demo", "--epsilon", "nan"], "dpselect demo: error: --epsilon must be a finite number > 0, got nan"),
    (["demo", "--epsilon", "inf"], "dpselect demo: error: --epsilon must be a finite number > 0, got inf"),
    (["demo", "--epsilon", "0"], "dpselect demo: error: --epsilon must be a finite number > 0, got 0.0"),
    (["demo", "--k", "0"], "dpselect demo: error: --k must be an int >= 1, got 0"),
    (["demo", "--seed", "-3"], "dpselect demo: error: --seed must be an int >= 0, got -3"),
    ([], "dpselect: error: a COMMAND is required, one of demo (see 'dpselect --help')"),
])
def test_user_errors_return_2_with_one_line(capsys, argv, line):
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert _one_error_line(cap.err) == line


@pytest.mark.parametrize("argv, line", [
    (["demo", "--epsilon", "abc"],
     "dpselect demo: error: argument --epsilon: invalid float value: 'abc' (see 'dpselect demo --help')"),
    (["demo", "--bogus"], "dpselect: error: unrecognized arguments: --bogus (see 'dpselect --help')"),
    (["nope"], "dpselect: error: argument COMMAND: invalid choice: 'nope'"),
    (["reproduce"], "dpselect: error: argument COMMAND: invalid choice: 'reproduce'"),   # dpselect-reproduce's
    (["binary-demo"], "dpselect: error: argument COMMAND: invalid choice: 'binary-demo'"),
])
def test_parse_errors_are_one_line(capsys, argv, line):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert _one_error_line(capsys.readouterr().err).startswith(line)


def _data_tree(root):
    for sub in ("tabular", "graphs", "dpbench1d"):
        (root / sub).mkdir(parents=True)
    return root


def test_dpselect_data_one_level_too_high_subprocess(tmp_path):
    _data_tree(tmp_path / "datasets")
    out = _run_module(["demo", "--skip-graph"], DPSELECT_DATA=str(tmp_path))
    assert out.returncode == 2
    line = _one_error_line(out.stderr)
    assert line == (f"dpselect demo: error: dataset file not found: {tmp_path}/tabular/nltcs.dat; "
                    f"DPSELECT_DATA={tmp_path} points one level too high: set DPSELECT_DATA={tmp_path / 'datasets'}")


@pytest.mark.parametrize("layout, hint", [
    ("missing", "DPSELECT_DATA={p} does not exist: set DPSELECT_DATA to the directory holding tabular/, graphs/, "
                "dpbench1d/"),
    ("file", "DPSELECT_DATA={p} is a file, not a directory"),
    ("too_low", "DPSELECT_DATA={p} points one level too low: set DPSELECT_DATA={parent}"),
    ("two_high", "DPSELECT_DATA={p} points one level too high: set DPSELECT_DATA={p}/shared/datasets"),
    ("unrelated", "DPSELECT_DATA={p} holds none of tabular, graphs, dpbench1d: set DPSELECT_DATA to the directory "
                  "holding tabular/, graphs/, dpbench1d/"),
    ("incomplete", "DPSELECT_DATA={p} is a data directory but lacks this file: restore it there"),
])
def test_dpselect_data_diagnosis(capsys, monkeypatch, tmp_path, layout, hint):
    if layout == "missing":
        p = tmp_path / "nowhere"
    elif layout == "file":
        p = tmp_path / "file.txt"
        p.write_text("x")
    elif layout == "too_low":
        p = _data_tree(tmp_path / "datasets") / "graphs"
    elif layout == "two_high":
        _data_tree(tmp_path / "shared" / "datasets")
        p = tmp_path
    elif layout == "unrelated":
        p = tmp_path / "empty"
        p.mkdir()
    else:
        p = _data_tree(tmp_path / "datasets")
    monkeypatch.setenv("DPSELECT_DATA", str(p))
    assert main(["demo", "--skip-graph"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"dpselect demo: error: dataset file not found: {p}/tabular/nltcs.dat; ")
    assert hint.format(p=p, parent=p.parent) in line


def test_no_data_directory_at_all(capsys, monkeypatch):
    monkeypatch.delenv("DPSELECT_DATA", raising=False)

    def no_root():
        raise FileNotFoundError("cannot find the datasets directory: set DPSELECT_DATA to it, or run from a "
                                "checkout that has ../shared/datasets beside it")

    monkeypatch.setattr(dpselect.datasets, "data_root", no_root)
    assert main(["demo", "--skip-graph"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line == ("dpselect demo: error: cannot find the datasets directory: set DPSELECT_DATA to it, or run "
                    "from a checkout that has ../shared/datasets beside it")


def test_library_value_errors_and_os_errors_are_one_line(capsys, monkeypatch, tmp_path):
    def bad_run(args):
        raise ValueError("k must be an int <= 5, got 9\n(more detail)")

    monkeypatch.setattr(dpselect.demo, "run", bad_run)
    assert main(["demo"]) == 2
    assert _one_error_line(capsys.readouterr().err) == "dpselect demo: error: k must be an int <= 5, got 9 (more detail)"

    def write_fails(args):
        open(tmp_path / "no" / "such" / "dir.png", "w")

    monkeypatch.setattr(dpselect.demo, "run", write_fails)
    assert main(["demo"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line == (f"dpselect demo: error: cannot use {tmp_path}/no/such/dir.png: no such file or directory; "
                    "check the path given on the command line")


def test_interrupt_and_bugs(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(dpselect.demo, "run", interrupted)
    assert main(["demo"]) == 130
    assert _one_error_line(capsys.readouterr().err) == "dpselect demo: error: interrupted"

    def buggy(args):
        return None + 1

    monkeypatch.setattr(dpselect.demo, "run", buggy)
    with pytest.raises(TypeError):          # a bug keeps its traceback
        main(["demo"])

    def rejects(args):
        raise ValueError("epsilon must be a finite number > 0, got -1")

    monkeypatch.setattr(dpselect.demo, "run", rejects)
    monkeypatch.setenv("DPSELECT_TRACEBACK", "1")
    with pytest.raises(ValueError, match="got -1"):
        main(["demo"])


def test_describe_os_errors():
    assert cli._describe(PermissionError(13, "Permission denied", "/root/x")) == (
        "cannot use /root/x: permission denied; check the path given on the command line")
    assert cli._describe(RuntimeError("bug")) is None
    assert cli._describe(TypeError("bug")) is None


def test_missing_user_file_is_not_blamed_on_the_data_directory(capsys, monkeypatch, tmp_path):
    from dpselect.datasets import load_edge_list

    def run(args):
        load_edge_list(tmp_path / "mine.txt")

    monkeypatch.setattr(dpselect.demo, "run", run)
    assert main(["demo"]) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect demo: error: edge list file not found: {tmp_path / 'mine.txt'}; check the path given on the "
        "command line")


def test_systemexit_message_is_one_line(capsys, monkeypatch):
    def run(args):
        raise SystemExit("error: --n must be in 1..30,\n  got 0")

    monkeypatch.setattr(dpselect.demo, "run", run)
    assert main(["demo"]) == 2
    assert _one_error_line(capsys.readouterr().err) == "dpselect demo: error: --n must be in 1..30, got 0"


def test_explicit_exit_status_passes_through(monkeypatch):
    def run(args):
        raise SystemExit(3)

    monkeypatch.setattr(dpselect.demo, "run", run)
    with pytest.raises(SystemExit) as exc:
        main(["demo"])
    assert exc.value.code == 3


# -- the demo never needs matplotlib; a bad --plot is refused before the work; --seed -----------
def test_library_and_demo_never_import_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import importlib, pkgutil, warnings, dpselect\n"
            "warnings.simplefilter('ignore', DeprecationWarning)\n"
            "for m in pkgutil.walk_packages(dpselect.__path__, 'dpselect.'):\n"
            "    if m.name != 'dpselect.__main__': importlib.import_module(m.name)\n"
            "from dpselect.cli import main\n"
            "print('demo exit', main(['demo', '--skip-graph']))\n"
            "print('plot exit', main(['demo', '--skip-graph', '--plot', 'x.png']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "demo exit 0" in out.stdout and "plot exit 2" in out.stdout
    assert _one_error_line(out.stderr) == ("dpselect demo: error: PNG figures need matplotlib, which is not installed: "
                                           "pip install dpselect[plot]")


def test_demo_bad_plot_path_is_refused_before_the_work(tmp_path, capsys, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("the demo started")

    monkeypatch.setattr(dpselect.demo, "_rule_selection", no_work)
    f = tmp_path / "afile"
    f.write_text("x")
    assert main(["demo", "--skip-graph", "--plot", str(f / "demo.png")]) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect demo: error: --plot {f / 'demo.png'}: {f} is a file, not a directory; choose another --plot")
    assert main(["demo", "--skip-graph", "--plot", str(tmp_path)]) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect demo: error: --plot {tmp_path} is a directory; give a file name such as {tmp_path / 'demo.png'}")


def test_demo_seed_reaches_the_median(capsys):
    lines = []
    for seed in ("0", "1", "0"):
        assert main(["demo", "--skip-graph", "--seed", seed]) == 0
        lines.append([ln for ln in capsys.readouterr().out.splitlines() if "one release at" in ln][0])
    # seed 0 and seed 1 release different medians (it was always rng=0); the same seed the same value
    assert lines[0] == lines[2] != lines[1]
    assert lines[0].strip() == "one release at ε = 1: 2717.9235 (true median 2717)"
