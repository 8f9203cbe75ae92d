import subprocess
import sys

import pytest

from dpselect.cli import main


def test_demo_runs_end_to_end(capsys, tmp_path):
    assert main(["demo", "--plot", str(tmp_path / "demo.png")]) == 0
    out = capsys.readouterr().out
    assert "NLTCS (21,574 records)" in out
    assert "Enron email graph (36,692 nodes, 183,831 edges)" in out
    assert "DP-MOTkIN-Agg local" in out and "HEPTH" in out
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_bad_epsilon_is_reported(capsys):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0, got -1"):
        main(["demo", "--epsilon", "-1", "--skip-graph"])


def test_module_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "dpselect", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "reproduce" in out.stdout and "demo" in out.stdout
