import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpselect.demo
import dpselect.experiments._data
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
    assert out.returncode == 0 and "reproduce" in out.stdout and "demo" in out.stdout


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
    ([], "dpselect: error: a COMMAND is required, one of demo, binary-demo, reproduce (see 'dpselect --help')"),
    (["reproduce"], "dpselect reproduce: error: a NAME is required, one of thesis-figure17, table2, figure3, "
                    "thesis-figure20, table1, figure2, quantiles, thesis-figures23-25 (see 'dpselect reproduce --help')"),
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

    monkeypatch.setattr(dpselect.experiments._data, "data_root", no_root)
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


@pytest.mark.parametrize("argv, line", [
    (["binary-demo", "--n", "0"], "dpselect binary-demo: error: --n "),
    (["reproduce", "table2", "--graph", "/nonexistent/g.txt"], "dpselect reproduce table2: error: --graph "),
])
def test_commands_option_errors_exit_2(capsys, argv, line):
    # the commands raise SystemExit("error: ..."); the CLI gives them the common one-line form and status 2
    assert main(argv) == 2
    assert _one_error_line(capsys.readouterr().err).startswith(line)


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


def test_commands_option_errors_exit_2_subprocess():
    out = _run_module(["binary-demo", "--n", "0"])
    assert out.returncode == 2 and _one_error_line(out.stderr).startswith("dpselect binary-demo: error: --n ")


# -- issue 12: the reproduction skeleton, its output contract and matplotlib as an optional extra -----
def _karate_file(tmp_path):
    import networkx as nx

    path = tmp_path / "karate.txt"
    path.write_text("\n".join(f"{u} {v}" for u, v in nx.karate_club_graph().edges()) + "\n")
    return path


def test_reproduction_without_matplotlib_writes_csv_and_md(tmp_path, capsys, monkeypatch):
    from dpselect.experiments._common import NO_PLOT

    argv = ["reproduce", "figure3", "--runs", "2", "--epsilons", "1,100", "--graph", str(_karate_file(tmp_path)),
            "--quiet", "--out"]
    assert main([*argv, str(tmp_path / "with")]) == 0
    assert (tmp_path / "with" / "figure3.png").stat().st_size > 1000
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "matplotlib", None)        # `import matplotlib` fails
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    out = tmp_path / "without"
    assert main([*argv, str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["figure3.csv", "figure3.md"]
    rows = list(__import__("csv").DictReader((out / "figure3.csv").open()))
    assert len(rows) == 2 * 2 * 2 and {r["metric"] for r in rows} == {"recall"}
    assert {float(r["value"]) for r in rows} <= {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}
    assert (out / "figure3.csv").read_text() == (tmp_path / "with" / "figure3.csv").read_text()  # same numbers
    stdout = capsys.readouterr().out
    assert stdout.count(NO_PLOT) == 1 and "pip install dpselect[plot]" in NO_PLOT
    assert "| 100 |" in (out / "figure3.md").read_text()


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


def test_worker_processes_do_not_change_the_numbers(tmp_path, capsys):
    path = _karate_file(tmp_path)
    csvs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["reproduce", "thesis-figure20", "--runs", "3", "--epsilons", "1,1000", "--ks", "2", "--graph",
                     str(path), "--max-degree", "33", "--jobs", jobs, "--out", str(out)]) == 0
        csvs.append((out / "thesis-figure20.csv").read_text())
        err = capsys.readouterr().err
        assert "thesis-figure20 [" in err and " 8/8 " in err           # progress: 1 graph x 1 k x 4 mech. x 2 ε
    assert csvs[0] == csvs[1] and csvs[0].count("\n") == 1 + 3 * 4 * 2


def test_run_jobs_keeps_job_order_with_processes():
    from dpselect.experiments._common import run_jobs

    jobs = [5, 3, 0, 4, 1, 2]
    serial, _ = run_jobs(math.factorial, jobs, "t", processes=1, quiet=True)
    pooled, _ = run_jobs(math.factorial, jobs, "t", processes=2, quiet=True)
    assert serial == pooled == [120, 6, 1, 24, 1, 2]


def test_out_contract_command_and_no_smaller_overwrite(tmp_path, capsys):
    from dpselect.experiments._common import recorded_size

    out = tmp_path / "f17"
    argv = ["reproduce", "thesis-figure17", "--runs", "3", "--epsilons", "1,100", "--datasets", "hepth", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["thesis-figure17.csv", "thesis-figure17.md", "thesis-figure17.png"]
    md = (out / "thesis-figure17.md").read_text()
    assert (f"Command: `dpselect reproduce thesis-figure17 --runs 3 --epsilons 1,100 --datasets hepth --out {out}`"
            in md)
    assert recorded_size(out / "thesis-figure17.md") == 3 * 2 * 1
    before = (out / "thesis-figure17.csv").read_text()
    capsys.readouterr()
    assert main(["reproduce", "thesis-figure17", "--runs", "2", "--epsilons", "1,100", "--datasets", "hepth",
                 "--quiet", "--out", str(out)]) == 2
    assert "holds a larger run (size 6) than this one (size 4); pass --force" in _one_error_line(capsys.readouterr().err)
    assert (out / "thesis-figure17.csv").read_text() == before                # refused before writing anything
    assert main(["reproduce", "thesis-figure17", "--runs", "2", "--epsilons", "1,100", "--datasets", "hepth",
                 "--quiet", "--force", "--out", str(out)]) == 0
    assert recorded_size(out / "thesis-figure17.md") == 4


def test_committed_results_have_commands_and_are_not_overwritten_by_defaults(tmp_path, capsys):
    import shutil
    from pathlib import Path

    from dpselect.experiments import REPRODUCTIONS
    from dpselect.experiments._common import DEFAULT_OUT, recorded_size

    results = Path(__file__).resolve().parents[1] / "results"
    names = sorted([*REPRODUCTIONS, "binary-demo"])
    variants = {"quantiles-add-remove": "quantiles"}    # a second committed run of one reproduction (its option)
    assert sorted(p.name for p in results.iterdir() if p.is_dir()) == sorted([*names, *variants])
    for folder in sorted([*names, *variants]):
        name = variants.get(folder, folder)
        command = (results / folder / "COMMAND.md").read_text()
        assert f"dpselect {'' if name == 'binary-demo' else 'reproduce '}{name}" in command
        assert recorded_size(results / folder / f"{name}.md") > 0, folder   # the guard knows every committed run
    parser = cli._build_parser()
    assert parser.parse_args(["binary-demo"]).out == DEFAULT_OUT != Path("results/binary-demo")
    # the default binary-demo (full hypercube only up to n = 12) pointed at the committed run is refused
    shutil.copy(results / "binary-demo" / "binary-demo.md", tmp_path / "binary-demo.md")
    assert main(["binary-demo", "--out", str(tmp_path), "--quiet"]) == 2
    assert "holds a larger run" in _one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["binary-demo.md"]


def test_binary_demo_has_one_module():
    import importlib.util

    # dpselect.binary_demo was an alias of the reproduction's module: removed before the first release
    assert importlib.util.find_spec("dpselect.experiments.binary_demo") is not None
    assert importlib.util.find_spec("dpselect.binary_demo") is None


# -- issue 21: equal-size runs, bad --out before the work, demo --seed ---------------------------------
def test_equal_size_run_is_refused_without_force(tmp_path, capsys):
    out = tmp_path / "f17"
    argv = ["reproduce", "thesis-figure17", "--runs", "2", "--epsilons", "1", "--datasets", "hepth", "--quiet",
            "--out", str(out)]
    assert main(argv) == 0
    before = (out / "thesis-figure17.csv").read_text()
    (out / "thesis-figure17.csv").write_text("marker")
    capsys.readouterr()
    assert main(argv) == 2            # the README's own command pointed at results/ no longer overwrites them
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect reproduce thesis-figure17: error: {out / 'thesis-figure17.md'} holds a run of the same size "
        "(2); pass --force to overwrite it or choose another --out")
    assert (out / "thesis-figure17.csv").read_text() == "marker"
    assert main([*argv, "--force"]) == 0
    assert (out / "thesis-figure17.csv").read_text() == before


@pytest.mark.parametrize("kind", ["file", "parent-file", "unwritable"])
def test_bad_out_is_refused_before_the_work(tmp_path, capsys, monkeypatch, kind):
    from dpselect.experiments import _common

    def no_work(*a, **k):
        raise AssertionError("the computation started")

    monkeypatch.setattr(_common, "run_jobs", no_work)
    f = tmp_path / "afile"
    f.write_text("x")
    out = {"file": f, "parent-file": f / "sub" / "dir", "unwritable": tmp_path / "ro" / "new"}[kind]
    if kind == "unwritable":
        (tmp_path / "ro").mkdir()
        real = os.access
        monkeypatch.setattr(_common.os, "access", lambda p, m: False if str(p).endswith("ro") else real(p, m))
    argv = ["reproduce", "figure3", "--runs", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    prefix = "dpselect reproduce figure3: error: --out "
    assert line == prefix + {
        "file": f"{f} is a file, not a directory; choose a directory",
        "parent-file": f"{out}: {f} is a file, not a directory; choose another --out",
        "unwritable": f"{out}: {tmp_path / 'ro'} is not writable; choose another --out"}[kind]
    assert not (tmp_path / "ro" / "new").exists()


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


# -- issue 33: empty runs, --out '', a CSV without its .md, Ctrl-C with worker processes ------------------
@pytest.mark.parametrize("argv, line", [
    (["--methods", ""], "--methods must name at least one method, got none"),
    (["--methods", " , "], "--methods must name at least one method, got none"),
    (["--neighbours", "add_remove", "--methods", "joint"],
     "--methods joint leaves no method under --neighbours add_remove (joint, unbounded are refused there, "
     "recursive-relative, recursive-relative-grid are recursive itself); choose from recursive, auto, independent, "
     "recursive-grid, independent-grid, auto-grid"),
])
def test_an_empty_run_is_refused_before_the_work(tmp_path, capsys, monkeypatch, argv, line):
    from dpselect.experiments import _common

    def no_work(*a, **k):
        raise AssertionError("the computation started")

    monkeypatch.setattr(_common, "run_jobs", no_work)
    out = tmp_path / "q"
    assert main(["reproduce", "quantiles", "--runs", "1", "--quiet", "--out", str(out), *argv]) == 2
    cap = capsys.readouterr()
    assert _one_error_line(cap.err) == f"dpselect reproduce quantiles: error: {line}" and cap.out == ""
    assert not out.exists()


def test_every_methods_list_either_runs_a_method_or_is_refused(capsys):
    # exhaustive over every subset of dpselect's methods (and the empty one) and both neighbour models: the
    # checks refuse exactly the lists that would leave the run with no method of dpselect's
    from itertools import combinations

    from dpselect.experiments import quantiles as q

    parser = cli._build_parser()
    seen = {True: 0, False: 0}
    for size in range(len(q.METHODS) + 1):
        for subset in combinations(q.METHODS, size):
            for nb in q.NEIGHBOURS:
                args = parser.parse_args(["reproduce", "quantiles", "--neighbours", nb, "--methods", ",".join(subset)])
                try:
                    cli._check_common_options(args)
                    q._check(args)
                except (cli.UsageError, SystemExit):
                    refused = True
                else:
                    refused = False
                    jobs = q._jobs(args, ["adult"])
                    assert all(job[5] for job in jobs), (subset, nb)      # job[5]: the methods each job runs
                    assert len(jobs) == args.runs
                dropped = set(q._REFUSED_ADD_REMOVE + q._SAME_ADD_REMOVE) if nb == "add_remove" else set()
                assert refused == (not set(subset) - dropped), (subset, nb)
                seen[refused] += 1
    capsys.readouterr()
    # refused: {} under replace_one, and under add_remove every subset of its 4 dropped methods ({} included)
    n = len(q.METHODS)
    assert len(q._REFUSED_ADD_REMOVE + q._SAME_ADD_REMOVE) == 4 and seen == {True: 1 + 2 ** 4, False: 2 * 2 ** n - 1 - 2 ** 4}


@pytest.mark.parametrize("out", ["", " ", "\t"])
def test_an_empty_out_is_refused(capsys, tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "thesis-figure17", "--runs", "1", "--epsilons", "1", "--datasets", "hepth", "--quiet",
              "--out", out])
    assert exc.value.code == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect reproduce thesis-figure17: error: argument --out: must name a directory, got {out!r} (use --out . "
        "for the current directory) (see 'dpselect reproduce thesis-figure17 --help')")
    assert list(tmp_path.iterdir()) == []
    assert cli._build_parser().parse_args(["reproduce", "figure3", "--out", "."]).out == Path(".")   # said so: kept


def test_a_csv_without_its_md_is_not_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "f17"
    out.mkdir()
    (out / "thesis-figure17.csv").write_text("someone's results")
    argv = ["reproduce", "thesis-figure17", "--runs", "1", "--epsilons", "1", "--datasets", "hepth", "--quiet",
            "--out", str(out)]
    assert main(argv) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect reproduce thesis-figure17: error: {out / 'thesis-figure17.csv'} exists without its "
        "thesis-figure17.md (a run of unknown size); pass --force to overwrite it or choose another --out")
    assert sorted(p.name for p in out.iterdir()) == ["thesis-figure17.csv"]
    assert (out / "thesis-figure17.csv").read_text() == "someone's results"
    assert main([*argv, "--force"]) == 0
    assert (out / "thesis-figure17.csv").read_text().startswith("dataset,method,epsilon,run,metric,value")


_INTERRUPTED = r'''
import sys, time
from dpselect import cli, demo
from dpselect.experiments._common import run_jobs

def run(args):
    print("pool", flush=True)
    run_jobs(time.sleep, [60, 60, 60], "t", processes=2, quiet=True)   # jobs far longer than the test
    return 0

demo.run = run
sys.exit(cli.main(["demo"]))
'''


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C reaches a POSIX process group")
@pytest.mark.parametrize("delay", [0.3, 2.5])   # while the workers start up (imports), and while they work
def test_ctrl_c_with_worker_processes_is_one_line_and_130(delay):
    import signal
    import time

    src = str(Path(cli.__file__).resolve().parents[1])     # the dpselect under test, in the workers too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    try:
        assert proc.stdout.readline() == "pool\n"
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)      # what Ctrl-C in a terminal does: the whole process group
        _, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert err == "dpselect demo: error: interrupted\n"           # no traceback from any worker
    assert time.perf_counter() - t0 < 40                            # the jobs in flight were not waited for
    for _ in range(50):                                             # and no worker outlives the command
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("a worker process outlived the interrupted command")
