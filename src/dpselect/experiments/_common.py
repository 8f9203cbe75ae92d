"""Shared plumbing of the reproductions: arguments, the output contract, tables and figures.

Output contract of every reproduction ``NAME`` run with ``--out DIR``:

* ``DIR/NAME.csv``: long format, one row per (dataset, method, epsilon, run, metric) with at least
  the columns ``dataset, method, epsilon, run, metric, value`` (extra columns such as ``k`` or
  ``depth`` come after them);
* ``DIR/NAME.md``: our means beside the paper's numbers, with the settings and number of runs;
* ``DIR/*.png``: the figures.
"""
from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

BASE_COLUMNS = ("dataset", "method", "epsilon", "run", "metric", "value")


def parse_float_list(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not math.isfinite(v) or v <= 0 for v in vals):
        raise argparse.ArgumentTypeError(f"epsilons must be finite numbers > 0, got {text!r}")
    return vals


def parse_name_list(text: str) -> list[str]:
    vals = [x.strip().lower() for x in text.split(",") if x.strip()]
    if not vals:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of names, got {text!r}")
    return vals


def add_common_arguments(parser: argparse.ArgumentParser, *, runs: int, epsilons: Sequence[float],
                         datasets: Sequence[str], seed: int = 0) -> None:
    """The flags every reproduction takes: --runs --epsilons --datasets --out --seed --quiet."""
    parser.add_argument("--runs", type=int, default=runs, help=f"repetitions per setting (default {runs})")
    parser.add_argument("--epsilons", type=parse_float_list, default=list(epsilons),
                        help="comma-separated privacy budgets (default: the paper's)")
    parser.add_argument("--datasets", type=parse_name_list, default=list(datasets),
                        help=f"comma-separated dataset names (default: {','.join(datasets)})")
    parser.add_argument("--out", type=Path, default=Path("results"), help="output directory (default results/)")
    parser.add_argument("--seed", type=int, default=seed, help=f"base random seed (default {seed})")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def check_datasets(names: Iterable[str], allowed: Iterable[str]) -> list[str]:
    allowed = list(allowed)
    names = list(names)
    bad = [n for n in names if n not in allowed]
    if bad:
        raise SystemExit(f"error: unknown dataset(s) {', '.join(bad)}; choose from {', '.join(allowed)}")
    return names


def write_csv(path: Path, rows: list[dict], extra_columns: Sequence[str] = ()) -> Path:
    """Write long-format rows (dicts with BASE_COLUMNS and ``extra_columns``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(BASE_COLUMNS) + [c for c in extra_columns if c not in BASE_COLUMNS]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


def read_csv(path: Path) -> list[dict]:
    with Path(path).open() as fh:
        return list(csv.DictReader(fh))


def summarise(rows: list[dict], keys: Sequence[str] = ("dataset", "method", "epsilon", "metric")) -> dict:
    """Mean, standard deviation and count of ``value`` grouped by ``keys``."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in keys)].append(float(r["value"]))
    out = {}
    for key, vals in groups.items():
        a = np.asarray(vals)
        out[key] = (float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0, int(a.size))
    return out


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    def fmt(x):
        if isinstance(x, float):
            if math.isnan(x):
                return "–"
            return f"{x:.4g}"
        return str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def pyplot():
    """matplotlib's pyplot with the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def run_jobs(task, jobs: list, label: str, *, processes: int = 1, quiet: bool = False) -> tuple[list[dict], float]:
    """Run ``task(job) -> list of rows`` over ``jobs`` (in ``processes`` forked workers when > 1) with a
    progress bar; return all rows (in completion order) and the wall time in seconds."""
    import multiprocessing as mp
    import time

    from .._progress import Progress

    rows: list[dict] = []
    t0 = time.perf_counter()
    with Progress(len(jobs), label, enabled=not quiet) as bar:
        if processes > 1:
            with mp.get_context("fork").Pool(processes) as pool:
                for part in pool.imap_unordered(task, jobs):
                    rows += part
                    bar.update()
        else:
            for job in jobs:
                rows += task(job)
                bar.update()
    return rows, time.perf_counter() - t0
