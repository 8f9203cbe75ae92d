"""The reproduction skeleton: one :class:`Reproduction` description per table or figure, one :func:`run`.

A reproduction module holds only what is specific to it: its settings (flags and defaults), its
paper's numbers, its per-run function and its report and figure layout, gathered in a
:class:`Reproduction`. Everything else lives here: the common flags, the dataset check, the job loop
(:func:`run_jobs`: serial, or ``concurrent.futures`` worker processes, same numbers either way), the CSV,
the markdown header (title, exact command, settings, number of runs, wall time), the figures and the
output contract.

Output contract of every reproduction ``NAME`` run with ``--out DIR``:

* ``DIR/NAME.csv``: long format, one row per (dataset, method, epsilon, run, metric) with at least
  the columns ``dataset, method, epsilon, run, metric, value`` (extra columns such as ``k`` or
  ``depth`` come after them);
* ``DIR/NAME.md``: our means beside the paper's numbers, with the exact command, the settings and the
  number of runs;
* ``DIR/NAME.png`` (``DIR/NAME-<part>.png`` where a reproduction draws several figures). Figures need
  matplotlib (``pip install dpselect-reproductions[plot]``); without it the CSV and the markdown are still written.

The default ``DIR`` is ``dpselect-results`` (never the committed ``results/``), and a run refuses to
overwrite a run of the same or a larger size in ``DIR`` (the size is recorded in the markdown) unless
``--force`` is given (a ``NAME.csv`` without its ``NAME.md``, a run of unknown size, too). An empty ``--out``
is refused (``--out .`` names the current directory). An ``--out`` that cannot be written (a file, or a parent that is a file or read-only)
is refused before any work.
"""
from __future__ import annotations

import argparse
import csv
import math
import multiprocessing as mp
import re
import signal
import threading
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from dpselect._output import check_out_dir, pyplot

from ._progress import Progress

if TYPE_CHECKING:
    from matplotlib.figure import Figure

BASE_COLUMNS = ("dataset", "method", "epsilon", "run", "metric", "value")
#: Where a reproduction writes when no ``--out`` is given (not the committed ``results/``).
DEFAULT_OUT = Path("dpselect-results")
#: What a run prints when matplotlib is missing.
NO_PLOT = "matplotlib is not installed: PNG figures skipped (they need `pip install dpselect-reproductions[plot]`)"
_SIZE_MARK = re.compile(r"<!-- dpselect run size: (\d+) -->")


# -- arguments --------------------------------------------------------------------------------------
def parse_float_list(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not math.isfinite(v) or v <= 0 for v in vals):
        raise argparse.ArgumentTypeError(f"epsilons must be finite numbers > 0, got {text!r}")
    return vals


def parse_int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def parse_name_list(text: str) -> list[str]:
    vals = [x.strip().lower() for x in text.split(",") if x.strip()]
    if not vals:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of names, got {text!r}")
    return vals


def out_dir(text: str) -> Path:
    """The ``--out`` type: a directory name; an empty one is refused (``Path("")`` is the current directory,
    where a run would write unasked: ``--out .`` says so)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must name a directory, got {text!r} (use --out . for the current "
                                         "directory)")
    return Path(text)


def add_output_arguments(parser: argparse.ArgumentParser, *, seed: int = 0) -> None:
    """--out --force --seed --quiet: the flags of every reproduction and demo writing results."""
    parser.add_argument("--out", type=out_dir, default=DEFAULT_OUT,
                        help=f"output directory: writes OUT/<name>.csv, .md, .png (default {DEFAULT_OUT}/)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite a run of the same or a larger size already in --out (refused otherwise)")
    parser.add_argument("--seed", type=int, default=seed, help=f"base random seed (default {seed})")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_common_arguments(parser: argparse.ArgumentParser, *, runs: int, epsilons: Sequence[float],
                         datasets: Sequence[str], seed: int = 0, jobs: int | None = None) -> None:
    """The flags every reproduction takes: --runs --epsilons --datasets --out --force --seed --quiet
    (and --jobs when ``jobs`` is given: its default number of worker processes)."""
    parser.add_argument("--runs", type=int, default=runs, help=f"repetitions per setting (default {runs})")
    parser.add_argument("--epsilons", type=parse_float_list, default=list(epsilons),
                        help="comma-separated privacy budgets (default: the paper's)")
    parser.add_argument("--datasets", type=parse_name_list, default=list(datasets),
                        help=f"comma-separated dataset names (default: {','.join(datasets)})")
    add_output_arguments(parser, seed=seed)
    if jobs is not None:
        parser.add_argument("--jobs", type=int, default=jobs,
                            help=f"worker processes (default {jobs}; the numbers do not depend on it)")


def check_datasets(names: Iterable[str], allowed: Iterable[str]) -> list[str]:
    allowed = list(allowed)
    names = list(names)
    bad = [n for n in names if n not in allowed]
    if bad:
        raise SystemExit(f"error: unknown dataset(s) {', '.join(bad)}; choose from {', '.join(allowed)}")
    return names


# -- tables -----------------------------------------------------------------------------------------
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


def summarise(rows: list[dict], keys: Sequence[str] = ("dataset", "method", "epsilon", "metric")
              ) -> dict[tuple, tuple[float, float, int]]:
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


def order_rows(rows: list[dict], **orders: Sequence) -> list[dict]:
    """Rows sorted by the position of their values in ``orders`` (column -> values in order), then run."""
    pos = {col: {v: i for i, v in enumerate(vals)} for col, vals in orders.items()}
    return sorted(rows, key=lambda r: (*(pos[c][r[c]] for c in orders), r["run"]))


# -- figures ----------------------------------------------------------------------------------------
def line_panels(plt: ModuleType,
                panels: Sequence[tuple[str, Sequence[tuple[str, Sequence[float], Sequence[float], dict]]]], *,
                ncols: int | None = None, xlabel: str = "ε", ylabel: str = "", logx: bool = True,
                ylim: tuple[float, float] | None = None, legend: str = "first",
                size: tuple[float, float] = (4.2, 3.4)) -> Figure:
    """One figure of line panels: ``panels`` = [(title, [(label, x, y, matplotlib kwargs), ...]), ...]."""
    n = len(panels)
    ncols = ncols or n
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    for i, (title, lines) in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        for label, x, y, kw in lines:
            ax.plot(x, y, label=label, **kw)
        if logx:
            ax.set_xscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if legend == "all":
            ax.legend(fontsize=7)
    if legend == "first" and n:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


# -- the job loop -----------------------------------------------------------------------------------
def _context():
    """The multiprocessing context of the worker pool: ``spawn`` exists on every platform and does not
    inherit locks or threads of the parent (``fork`` does neither on Windows nor safely with threads)."""

    return mp.get_context("spawn")


_SIGMASK = hasattr(signal, "pthread_sigmask")   # POSIX; elsewhere Ctrl-C is not sent to the workers alike


def _ignore_interrupts() -> None:
    """Worker initializer: Ctrl-C goes to the whole process group, and only the parent answers it (one
    ``interrupted`` line, exit 130, workers stopped); a worker would print a traceback of its own. The
    worker was started with SIGINT blocked (see :func:`_submit_all`): ignore it (dropping one pending since
    start-up), then unblock it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _SIGMASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _submit_all(pool: ProcessPoolExecutor, task: Callable, jobs: list) -> dict:
    """Submit every job (this is when the workers are spawned) with SIGINT blocked in this thread: a spawned
    worker inherits the mask, so a Ctrl-C during its start-up (imports, before its initializer runs)
    stays pending there instead of printing a traceback; in the parent it stays pending too and is raised
    as KeyboardInterrupt as soon as the mask is restored (never lost)."""
    block = _SIGMASK and threading.current_thread() is threading.main_thread()
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return {pool.submit(task, job): i for i, job in enumerate(jobs)}
    finally:
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now: an interrupted or failed run must not wait
    for the jobs in flight (they can take minutes)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(5)


def run_jobs(task: Callable, jobs: list, label: str, *, processes: int = 1,
             quiet: bool = False) -> tuple[list[Any], float]:
    """Run ``task(job)`` over ``jobs`` with a progress bar; return the results **in job order** and the
    wall time in seconds.

    ``processes > 1`` runs them in a :class:`concurrent.futures.ProcessPoolExecutor` (spawned workers;
    ``task`` and the jobs must be picklable: a module-level function and plain data). Every job carries
    its own seeds, so the results do not depend on ``processes``. ``processes == 1`` runs them in order
    in this process. The workers ignore Ctrl-C: the parent gets the KeyboardInterrupt, ends the workers
    at once and re-raises it (the command line prints one line and exits with 130).
    """

    t0 = time.perf_counter()
    results: list[Any] = [None] * len(jobs)
    with Progress(len(jobs), label, enabled=not quiet) as bar:
        if processes > 1 and len(jobs) > 1:
            pool = ProcessPoolExecutor(max_workers=min(processes, len(jobs)), mp_context=_context(),
                                       initializer=_ignore_interrupts)
            try:
                futures = _submit_all(pool, task, jobs)
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update()
            except BaseException:
                _stop(pool)
                raise
            pool.shutdown()
        else:
            for i, job in enumerate(jobs):
                results[i] = task(job)
                bar.update()
    return results, time.perf_counter() - t0


# -- the skeleton -----------------------------------------------------------------------------------
@dataclass
class Result:
    """What a run produced, handed to a reproduction's report and figures."""

    args: argparse.Namespace
    datasets: list            # the datasets (names or (label, source) pairs) the run covered
    rows: list[dict]          # the CSV rows
    notes: list               # the per-job notes, in job order (jobs returning no note are skipped)
    wall: float               # seconds

    def summary(self, *keys: str) -> dict[tuple, tuple[float, float, int]]:
        """Mean, std, count of ``value`` by ``keys``."""
        return summarise(self.rows, keys=keys)

    def labels(self) -> list[str]:
        """Dataset labels in the order of the rows."""
        return list(dict.fromkeys(r["dataset"] for r in self.rows))


def _no_settings(res: Result) -> str:
    return ""


@dataclass
class Reproduction:
    """What is specific to one table or figure. ``run(args)`` of the module is ``reproduction.run``.

    * ``name``, ``description`` (one line for ``--help``), ``title`` (the markdown heading, or a function
      of the arguments giving it);
    * ``add_arguments(parser)``: its flags (usually :func:`add_common_arguments` with the paper's
      defaults plus its own settings);
    * ``jobs(args, datasets) -> list``: the jobs, each plain data carrying its own seeds;
      ``task(job)``: the per-run function, a module-level function returning a list of CSV rows or
      ``(rows, note)``; notes reach the report in job order;
    * ``datasets(args)``: the checked datasets (default: ``args.datasets`` within ``allowed``);
    * ``settings(result) -> str``: the settings sentence of the markdown (the driver adds the number of
      runs, the seed, the worker processes and the wall time);
    * ``report(result) -> list of markdown lines``: our numbers beside the paper's;
    * ``figures(result, plt) -> {suffix: figure}``: saved as ``NAME{suffix}.png``;
    * ``size(args, datasets) -> int``: how large a run is (so that a smaller run never overwrites a
      larger one); default runs × ε values × datasets;
    * ``order``: optional columns to sort the rows by (``result -> {column: values in order}``).
    """

    name: str
    description: str
    title: str | Callable[[argparse.Namespace], str]
    add_arguments: Callable[[argparse.ArgumentParser], None]
    jobs: Callable[[argparse.Namespace, list], list]
    task: Callable[[Any], Any]
    report: Callable[[Result], list[str]]
    figures: Callable[[Result, Any], dict]
    settings: Callable[[Result], str] = _no_settings
    allowed: Sequence[str] = ()
    datasets: Callable[[argparse.Namespace], list] | None = None
    extra_columns: Sequence[str] = ()
    order: Callable[[argparse.Namespace, list], dict] | None = None
    size: Callable[[argparse.Namespace, list], int] | None = None
    runs_text: Callable[[Result], str] | None = None
    command: Callable[[argparse.Namespace], str] | None = None
    prog: str = "dpselect-reproduce"
    echo: bool = False          # print the markdown report to stdout
    paper_runs: str = ""        # e.g. "paper: 500"
    dpi: int = 120
    _parser: argparse.ArgumentParser | None = field(default=None, repr=False)

    # -- arguments
    def parser(self) -> argparse.ArgumentParser:
        if self._parser is None:
            p = argparse.ArgumentParser(prog=f"{self.prog} {self.name}", description=self.description)
            self.add_arguments(p)
            self._parser = p
        return self._parser

    def command_line(self, args: argparse.Namespace) -> str:
        """The exact command: ``PROG NAME`` with every option that differs from its default, and --out."""
        if self.command is not None:
            return self.command(args)
        parts = [f"{self.prog} {self.name}"]
        for act in self.parser()._actions:
            if not act.option_strings or act.dest in ("help", "quiet", "force", "out"):
                continue
            val = getattr(args, act.dest, act.default)
            if _same(val, act.default):
                continue
            flag = act.option_strings[-1]
            if isinstance(act, argparse._StoreTrueAction):
                parts.append(flag)
            elif isinstance(act, argparse._AppendAction):
                parts += [f"{flag} {_fmt(v)}" for v in val]
            elif act.nargs not in (None, "?") and isinstance(val, (list, tuple)):
                parts.append(f"{flag} {' '.join(_fmt(v) for v in val)}")
            else:
                parts.append(f"{flag} {_fmt(val)}")
        parts.append(f"--out {args.out}")
        return " ".join(parts)

    def markdown(self, result: Result, size: int) -> str:
        """The text of ``NAME.md`` for ``result`` (a run of ``size``): title, command, settings, report."""
        args = result.args
        processes = getattr(args, "jobs", 1)
        runs = self.runs_text(result) if self.runs_text is not None else (
            f"{args.runs} runs per cell" + (f" ({self.paper_runs})" if self.paper_runs else "")
            + f", seed {args.seed}")
        settings = self.settings(result)
        title = self.title(args) if callable(self.title) else self.title
        lines = [f"# {title}", "", f"Command: `{self.command_line(args)}`", "",
                 (f"Settings: {settings} " if settings else "")
                 + f"{runs}; {processes} worker process{'es' if processes > 1 else ''}. "
                 f"Wall time {result.wall:.0f} s.",
                 ""]
        lines += self.report(result)
        lines += ["", f"<!-- dpselect run size: {size} -->", ""]
        return "\n".join(lines)

    # -- the driver
    def run(self, args: argparse.Namespace) -> int:
        """Check, guard the output, run the jobs, write ``OUT/NAME.csv``, ``.md`` and the PNGs; return 0.

        This is ``run(args)`` of every reproduction module (``dpselect-reproduce NAME`` calls it). The
        flags are checked and the output directory guarded (a smaller or equal run never overwrites a
        larger one without ``--force``) before any work; each run draws from its own seed, so the numbers
        do not depend on ``--jobs``.

        Examples
        --------
        >>> import contextlib, io, os, tempfile
        >>> from dpselect_reproductions import thesis_figure17 as fig
        >>> out = tempfile.mkdtemp()
        >>> args = fig.REPRODUCTION.parser().parse_args(
        ...     ["--runs", "2", "--epsilons", "1", "--datasets", "hepth", "--out", out, "--quiet"])
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     status = fig.run(args)
        >>> status, sorted(f for f in os.listdir(out) if not f.endswith(".png"))
        (0, ['thesis-figure17.csv', 'thesis-figure17.md'])
        """
        if getattr(args, "runs", 1) < 1:
            raise SystemExit(f"error: --runs must be >= 1, got {args.runs}")
        datasets = self.datasets(args) if self.datasets is not None else check_datasets(args.datasets, self.allowed)
        out = Path(args.out)
        check_out_dir(out)
        size = self.size(args, datasets) if self.size is not None else _default_size(args, datasets)
        _guard(out / f"{self.name}.md", size, force=getattr(args, "force", False))
        jobs = self.jobs(args, datasets)
        processes = getattr(args, "jobs", 1)
        results, wall = run_jobs(self.task, jobs, self.name, processes=processes, quiet=args.quiet)
        rows: list[dict] = []
        notes: list = []
        for res in results:
            if isinstance(res, tuple):
                rows += res[0]
                notes.append(res[1])
            else:
                rows += res
        if self.order is not None:
            rows = order_rows(rows, **self.order(args, datasets))
        result = Result(args, datasets, rows, notes, wall)
        out.mkdir(parents=True, exist_ok=True)
        paths = [write_csv(out / f"{self.name}.csv", rows, extra_columns=self.extra_columns)]
        md = self.markdown(result, size)
        (out / f"{self.name}.md").write_text(md)
        paths.append(out / f"{self.name}.md")
        if self.echo:
            print(md)
        try:
            plt = pyplot()
        except ImportError:
            print(NO_PLOT)
        else:
            for suffix, fig in self.figures(result, plt).items():
                path = out / f"{self.name}{suffix}.png"
                fig.savefig(path, dpi=self.dpi)
                plt.close(fig)
                paths.append(path)
        print(f"wrote {', '.join(str(p) for p in paths)} ({wall:.0f} s)")
        return 0


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt(x) for x in v)
    return str(v)


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return a == b


def _default_size(args: argparse.Namespace, datasets: list) -> int:
    return int(getattr(args, "runs", 1)) * len(getattr(args, "epsilons", [1])) * max(len(datasets), 1)


def recorded_size(md: Path) -> int | None:
    """The run size recorded in a reproduction's markdown, or None."""
    try:
        m = _SIZE_MARK.search(Path(md).read_text())
    except OSError:
        return None
    return int(m.group(1)) if m else None


def _guard(md: Path, size: int, *, force: bool) -> None:
    """Refuse (before any work) to overwrite a run at least as large, or one of unknown size, unless ``force``.

    An equal size is refused too: the committed ``results/`` are runs of the command's defaults, and
    re-running that command with ``--out results/NAME`` must not replace them silently."""
    if force:
        return
    if not md.exists():
        csv_path = md.with_suffix(".csv")
        if csv_path.exists():   # results of unknown size (the markdown that records it is gone): refuse too
            raise SystemExit(f"error: {csv_path} exists without its {md.name} (a run of unknown size); pass --force "
                             "to overwrite it or choose another --out")
        return
    old = recorded_size(md)
    if old is None:
        raise SystemExit(f"error: {md} holds a run of unknown size; pass --force to overwrite it or choose "
                         "another --out")
    if old > size:
        raise SystemExit(f"error: {md} holds a larger run (size {old}) than this one (size {size}); pass --force "
                         "to overwrite it or choose another --out")
    if old == size:
        raise SystemExit(f"error: {md} holds a run of the same size ({size}); pass --force to overwrite it or "
                         "choose another --out")
