"""``dpselect-reproduce`` (``python -m dpselect_reproductions``): one-line errors, the skeleton's output contract,
the guard of committed results, worker processes and Ctrl-C."""
import argparse
import importlib
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpselect import cli
from dpselect_reproductions import main

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and ": error: " in lines[0]
    return lines[0]


def _run_module(args, **env):
    return subprocess.run([sys.executable, "-m", "dpselect_reproductions", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


def _parser():
    from dpselect_reproductions import REPRODUCTIONS

    return cli._build_parser("dpselect-reproduce", REPRODUCTIONS, "")


def test_module_entry_point_help_and_no_name():
    out = _run_module(["--help"])
    assert out.returncode == 0 and "table2" in out.stdout and "binary-demo" in out.stdout
    out = _run_module([])
    assert out.returncode == 2 and _one_error_line(out.stderr) == (
        "dpselect-reproduce: error: a COMMAND is required, one of thesis-figure17, table2, figure3, thesis-figure20, "
        "table1, figure2, quantiles, thesis-figures23-25, binary-demo (see 'dpselect-reproduce --help')")


@pytest.mark.parametrize("argv, line", [
    (["binary-demo", "--n", "0"], "dpselect-reproduce binary-demo: error: --n "),
    (["table2", "--graph", "/nonexistent/g.txt"], "dpselect-reproduce table2: error: --graph "),
])
def test_commands_option_errors_exit_2(capsys, argv, line):
    # the commands raise SystemExit("error: ..."); the CLI gives them the common one-line form and status 2
    assert main(argv) == 2
    assert _one_error_line(capsys.readouterr().err).startswith(line)


def test_commands_option_errors_exit_2_subprocess():
    out = _run_module(["binary-demo", "--n", "0"])
    assert out.returncode == 2 and _one_error_line(out.stderr).startswith("dpselect-reproduce binary-demo: error: --n ")


# -- issue 12: the reproduction skeleton, its output contract and matplotlib as an optional extra -----
def _karate_file(tmp_path):
    import networkx as nx

    path = tmp_path / "karate.txt"
    path.write_text("\n".join(f"{u} {v}" for u, v in nx.karate_club_graph().edges()) + "\n")
    return path


def test_reproduction_without_matplotlib_writes_csv_and_md(tmp_path, capsys, monkeypatch):
    from dpselect_reproductions._common import NO_PLOT

    argv = ["figure3", "--runs", "2", "--epsilons", "1,100", "--graph", str(_karate_file(tmp_path)),
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
    assert stdout.count(NO_PLOT) == 1 and "pip install dpselect-reproductions[plot]" in NO_PLOT
    assert "| 100 |" in (out / "figure3.md").read_text()


def test_worker_processes_do_not_change_the_numbers(tmp_path, capsys):
    path = _karate_file(tmp_path)
    csvs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["thesis-figure20", "--runs", "3", "--epsilons", "1,1000", "--ks", "2", "--graph",
                     str(path), "--max-degree", "33", "--jobs", jobs, "--out", str(out)]) == 0
        csvs.append((out / "thesis-figure20.csv").read_text())
        err = capsys.readouterr().err
        assert "thesis-figure20 [" in err and " 8/8 " in err           # progress: 1 graph x 1 k x 4 mech. x 2 ε
    assert csvs[0] == csvs[1] and csvs[0].count("\n") == 1 + 3 * 4 * 2


def test_run_jobs_keeps_job_order_with_processes():
    from dpselect_reproductions._common import run_jobs

    jobs = [5, 3, 0, 4, 1, 2]
    serial, _ = run_jobs(math.factorial, jobs, "t", processes=1, quiet=True)
    pooled, _ = run_jobs(math.factorial, jobs, "t", processes=2, quiet=True)
    assert serial == pooled == [120, 6, 1, 24, 1, 2]


def test_out_contract_command_and_no_smaller_overwrite(tmp_path, capsys):
    from dpselect_reproductions._common import recorded_size

    out = tmp_path / "f17"
    argv = ["thesis-figure17", "--runs", "3", "--epsilons", "1,100", "--datasets", "hepth", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["thesis-figure17.csv", "thesis-figure17.md", "thesis-figure17.png"]
    md = (out / "thesis-figure17.md").read_text()
    assert (f"Command: `dpselect-reproduce thesis-figure17 --runs 3 --epsilons 1,100 --datasets hepth --out {out}`"
            in md)
    assert recorded_size(out / "thesis-figure17.md") == 3 * 2 * 1
    before = (out / "thesis-figure17.csv").read_text()
    capsys.readouterr()
    assert main(["thesis-figure17", "--runs", "2", "--epsilons", "1,100", "--datasets", "hepth",
                 "--quiet", "--out", str(out)]) == 2
    assert "holds a larger run (size 6) than this one (size 4); pass --force" in _one_error_line(capsys.readouterr().err)
    assert (out / "thesis-figure17.csv").read_text() == before                # refused before writing anything
    assert main(["thesis-figure17", "--runs", "2", "--epsilons", "1,100", "--datasets", "hepth",
                 "--quiet", "--force", "--out", str(out)]) == 0
    assert recorded_size(out / "thesis-figure17.md") == 4


def test_committed_results_have_commands_and_are_not_overwritten_by_defaults(tmp_path, capsys):
    import shutil

    from dpselect_reproductions import REPRODUCTIONS
    from dpselect_reproductions._common import DEFAULT_OUT, recorded_size

    results = RESULTS
    names = sorted(REPRODUCTIONS)
    variants = {"quantiles-add-remove": "quantiles"}    # a second committed run of one reproduction (its option)
    assert sorted(p.name for p in results.iterdir() if p.is_dir()) == sorted([*names, *variants])
    for folder in sorted([*names, *variants]):
        name = variants.get(folder, folder)
        command = (results / folder / "COMMAND.md").read_text()
        # the command that made it, as the reproductions' own command (the library's CLI has no reproduce)
        assert f"python -m dpselect_reproductions {name}" in command, folder
        assert "dpselect reproduce" not in command and "dpselect binary-demo" not in command, folder
        assert recorded_size(results / folder / f"{name}.md") > 0, folder   # the guard knows every committed run
    parser = _parser()
    assert parser.parse_args(["binary-demo"]).out == DEFAULT_OUT != Path("results/binary-demo")
    # the default binary-demo (full hypercube only up to n = 12) pointed at the committed run is refused
    shutil.copy(results / "binary-demo" / "binary-demo.md", tmp_path / "binary-demo.md")
    assert main(["binary-demo", "--out", str(tmp_path), "--quiet"]) == 2
    assert "holds a larger run" in _one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["binary-demo.md"]


def test_binary_demo_has_one_module():
    import importlib.util

    # one home: the reproductions' module (the library has neither an alias nor an experiments package)
    assert importlib.util.find_spec("dpselect_reproductions.binary_demo") is not None
    assert importlib.util.find_spec("dpselect.binary_demo") is None
    assert importlib.util.find_spec("dpselect.experiments") is None


# -- issue 21: equal-size runs, bad --out before the work --------------------------------------------
def test_equal_size_run_is_refused_without_force(tmp_path, capsys):
    out = tmp_path / "f17"
    argv = ["thesis-figure17", "--runs", "2", "--epsilons", "1", "--datasets", "hepth", "--quiet",
            "--out", str(out)]
    assert main(argv) == 0
    before = (out / "thesis-figure17.csv").read_text()
    (out / "thesis-figure17.csv").write_text("marker")
    capsys.readouterr()
    assert main(argv) == 2            # the README's own command pointed at results/ no longer overwrites them
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect-reproduce thesis-figure17: error: {out / 'thesis-figure17.md'} holds a run of the same size "
        "(2); pass --force to overwrite it or choose another --out")
    assert (out / "thesis-figure17.csv").read_text() == "marker"
    assert main([*argv, "--force"]) == 0
    assert (out / "thesis-figure17.csv").read_text() == before


@pytest.mark.parametrize("kind", ["file", "parent-file", "unwritable"])
def test_bad_out_is_refused_before_the_work(tmp_path, capsys, monkeypatch, kind):
    from dpselect_reproductions import _common

    def no_work(*a, **k):
        raise AssertionError("the computation started")

    monkeypatch.setattr(_common, "run_jobs", no_work)
    f = tmp_path / "afile"
    f.write_text("x")
    out = {"file": f, "parent-file": f / "sub" / "dir", "unwritable": tmp_path / "ro" / "new"}[kind]
    if kind == "unwritable":
        (tmp_path / "ro").mkdir()
        real = os.access
        from dpselect import _output    # the check the demo shares

        monkeypatch.setattr(_output.os, "access", lambda p, m: False if str(p).endswith("ro") else real(p, m))
    argv = ["figure3", "--runs", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    prefix = "dpselect-reproduce figure3: error: --out "
    assert line == prefix + {
        "file": f"{f} is a file, not a directory; choose a directory",
        "parent-file": f"{out}: {f} is a file, not a directory; choose another --out",
        "unwritable": f"{out}: {tmp_path / 'ro'} is not writable; choose another --out"}[kind]
    assert not (tmp_path / "ro" / "new").exists()


# -- issue 33: empty runs, --out '', a CSV without its .md, Ctrl-C with worker processes ------------------
@pytest.mark.parametrize("argv, line", [
    (["--methods", ""], "--methods must name at least one method, got none"),
    (["--methods", " , "], "--methods must name at least one method, got none"),
    (["--neighbours", "add_remove", "--methods", "joint"],
     "--methods joint leaves no method under --neighbours add_remove (joint, unbounded are refused there, "
     "recursive-relative, recursive-relative-grid are recursive itself); choose from recursive, auto, independent, "
     "recursive-grid, independent-grid, auto-grid, default"),
])
def test_an_empty_run_is_refused_before_the_work(tmp_path, capsys, monkeypatch, argv, line):
    from dpselect_reproductions import _common

    def no_work(*a, **k):
        raise AssertionError("the computation started")

    monkeypatch.setattr(_common, "run_jobs", no_work)
    out = tmp_path / "q"
    assert main(["quantiles", "--runs", "1", "--quiet", "--out", str(out), *argv]) == 2
    cap = capsys.readouterr()
    assert _one_error_line(cap.err) == f"dpselect-reproduce quantiles: error: {line}" and cap.out == ""
    assert not out.exists()


def test_every_methods_list_either_runs_a_method_or_is_refused(capsys):
    # exhaustive over every subset of dpselect's methods (and the empty one) and both neighbour models: the
    # checks refuse exactly the lists that would leave the run with no method of dpselect's
    from itertools import combinations

    from dpselect_reproductions import quantiles as q

    parser = _parser()
    seen = {True: 0, False: 0}
    for size in range(len(q.METHODS) + 1):
        for subset in combinations(q.METHODS, size):
            for nb in q.NEIGHBOURS:
                args = parser.parse_args(["quantiles", "--neighbours", nb, "--methods", ",".join(subset)])
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
        main(["thesis-figure17", "--runs", "1", "--epsilons", "1", "--datasets", "hepth", "--quiet",
              "--out", out])
    assert exc.value.code == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect-reproduce thesis-figure17: error: argument --out: must name a directory, got {out!r} (use --out . "
        "for the current directory) (see 'dpselect-reproduce thesis-figure17 --help')")
    assert list(tmp_path.iterdir()) == []
    assert _parser().parse_args(["figure3", "--out", "."]).out == Path(".")   # said so: kept


def test_a_csv_without_its_md_is_not_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "f17"
    out.mkdir()
    (out / "thesis-figure17.csv").write_text("someone's results")
    argv = ["thesis-figure17", "--runs", "1", "--epsilons", "1", "--datasets", "hepth", "--quiet",
            "--out", str(out)]
    assert main(argv) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        f"dpselect-reproduce thesis-figure17: error: {out / 'thesis-figure17.csv'} exists without its "
        "thesis-figure17.md (a run of unknown size); pass --force to overwrite it or choose another --out")
    assert sorted(p.name for p in out.iterdir()) == ["thesis-figure17.csv"]
    assert (out / "thesis-figure17.csv").read_text() == "someone's results"
    assert main([*argv, "--force"]) == 0
    assert (out / "thesis-figure17.csv").read_text().startswith("dataset,method,epsilon,run,metric,value")


_INTERRUPTED = r'''
import sys, time
import dpselect_reproductions
from dpselect_reproductions import figure3
from dpselect_reproductions._common import run_jobs

def run(args):
    print("pool", flush=True)
    run_jobs(time.sleep, [60, 60, 60], "t", processes=2, quiet=True)   # jobs far longer than the test
    return 0

figure3.run = run
sys.exit(dpselect_reproductions.main(["figure3"]))
'''


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C reaches a POSIX process group")
@pytest.mark.parametrize("delay", [0.3, 2.5])   # while the workers start up (imports), and while they work
def test_ctrl_c_with_worker_processes_is_one_line_and_130(delay):
    import signal
    import time

    import dpselect_reproductions

    # the dpselect and reproductions under test, in the workers too
    src = [str(Path(m.__file__).resolve().parents[1]) for m in (cli, dpselect_reproductions)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*src, os.environ.get("PYTHONPATH", "")])}
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
    assert err == "dpselect-reproduce figure3: error: interrupted\n"           # no traceback from any worker
    assert time.perf_counter() - t0 < 40                            # the jobs in flight were not waited for
    for _ in range(50):                                             # and no worker outlives the command
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("a worker process outlived the interrupted command")


@pytest.mark.parametrize("name, defaults", [
    ("thesis-figure17", {"runs": 10_000}), ("table2", {"runs": 500}), ("figure3", {"runs": 500}),
    ("thesis-figure20", {"runs": 100}), ("table1", {"runs": 500}), ("figure2", {"runs": 50}),
    ("quantiles", {"runs": 20, "ms": [3, 9, 99], "baselines": []}), ("thesis-figures23-25", {"runs": 1}),
    ("binary-demo", {"n": 20})])
def test_add_arguments_gives_the_papers_defaults(name, defaults):
    from dpselect_reproductions import REPRODUCTIONS

    parser = argparse.ArgumentParser()
    importlib.import_module(REPRODUCTIONS[name]).add_arguments(parser)
    args = vars(parser.parse_args([]))
    assert {k: args[k] for k in defaults} == defaults
