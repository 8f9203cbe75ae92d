"""Paper Table 1: mean metric C(NODP-MOET-Pareto output, DP-MOET-Pareto output), global and local.

Setting (paper Sec. 6.3): p = 30, s = 3, k = 3 generations, d = 4, d_max = 10, o = 3, objectives TPR
and TNR on the whole table, ε in {0.01, 0.05, 0.1, 0.5, 1, 2, 5}, 500 runs, NLTCS / Adult / ACS. In
each run one NODP-MOET-Pareto output X' (its own seed, shared by both methods and every ε of that run)
is compared with one DP-MOET-Pareto output X'' per method and ε: C(X', X'') = share of X'' strictly
dominated by a member of X'. Budget convention: ``--budget`` (default "even": ε split over the k + 1
selection rounds and their picks; "paper-code": ε/k per round, k − 1 generations). Runs are spread over
``--jobs`` processes.

``--protocol paper-code`` runs the authors' published code's protocol instead, quirk by quirk
(:mod:`dpselect.experiments.paper_code`; ``--quirks`` / ``--without`` switch single quirks). It is for
reproduction only: with some quirks (stale cached δ, the code's float sampling) the selections are not
the ε-DP mechanisms dpselect guarantees.
"""
from __future__ import annotations

import argparse
from typing import Any, Sequence, cast

import numpy as np

from ..trees import CompressedTable, dp_moet, metric_c, nodp_moet
from ..vocabulary import MechanismName
from . import paper_code as pc
from ._common import Reproduction, Result, add_common_arguments, line_panels, markdown_table
from ._data import load_tabular

__all__ = ["NAME", "DESCRIPTION", "EPSILONS", "DATASETS", "METHODS", "MECHANISM", "PAPER", "MOET_FLAGS",
    "add_moet_arguments", "moet_settings", "moet_settings_text", "load_table", "protocol_report",
    "REPRODUCTION", "add_arguments", "run"]

NAME = "table1"
DESCRIPTION = "Paper Table 1: metric C of DP-MOET-Pareto global/local against NODP-MOET-Pareto (NLTCS, Adult, ACS)"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0)
DATASETS = ("nltcs", "adult", "acs")
METHODS = ("pareto-global", "pareto-local")
#: the mechanism of each method (global sensitivity: exponential mechanism; local: local dampening)
MECHANISM: dict[str, MechanismName] = {"global": "exponential", "local": "local_dampening"}
# paper Table 1: (MO_g, MO_l) per dataset and ε
PAPER = {
    "nltcs": {0.01: (0.48, 0.45), 0.05: (0.48, 0.35), 0.1: (0.48, 0.25), 0.5: (0.48, 0.13), 1.0: (0.48, 0.12),
              2.0: (0.48, 0.11), 5.0: (0.48, 0.10)},
    "adult": {0.01: (0.21, 0.18), 0.05: (0.20, 0.14), 0.1: (0.22, 0.10), 0.5: (0.19, 0.07), 1.0: (0.19, 0.08),
              2.0: (0.21, 0.07), 5.0: (0.20, 0.08)},
    "acs": {0.01: (0.28, 0.25), 0.05: (0.28, 0.19), 0.1: (0.28, 0.15), 0.5: (0.28, 0.12), 1.0: (0.28, 0.11),
            2.0: (0.28, 0.10), 5.0: (0.28, 0.10)},
}
#: DP-MOET settings (flag, paper symbol, attribute) shared with figure2
MOET_FLAGS = (("--population", "p", "population"), ("--selection", "s", "selection"),
              ("--generations", "k", "generations"), ("--depth", "d", "depth"), ("--max-depth", "d_max", "max_depth"),
              ("--output", "o", "output"))

_DATA: dict = {}


def add_moet_arguments(parser: argparse.ArgumentParser, defaults: tuple[int, ...], budget_help: str) -> None:
    """--budget and the DP-MOET sizes p, s, k, d, d_max, o with the paper's ``defaults``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Extended in place.
    defaults : tuple of 6 int
        The defaults of ``--population --selection --generations --depth --max-depth --output``.
    budget_help : str
        The help text of ``--budget``.

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_moet_arguments(parser, (30, 3, 3, 4, 10, 3), "privacy budget split")
    >>> args = parser.parse_args(["--generations", "5"])
    >>> args.population, args.generations, args.budget
    (30, 5, 'even')
    """
    parser.add_argument("--budget", choices=("even", "paper-code"), default="even", help=budget_help)
    for (flag, what, _), default in zip(MOET_FLAGS, defaults):
        parser.add_argument(flag, type=int, default=default, help=f"{what} (default {default})")


def moet_settings(args: argparse.Namespace) -> dict:
    """The keyword arguments of dp_moet / nodp_moet given by the flags.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed flags of :func:`add_moet_arguments`.

    Returns
    -------
    dict
        ``population, selection, generations, depth, max_depth, output, budget``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_moet_arguments(parser, (30, 3, 3, 4, 10, 3), "privacy budget split")
    >>> moet_settings(parser.parse_args([]))
    {'population': 30, 'selection': 3, 'generations': 3, 'depth': 4, 'max_depth': 10, 'output': 3, 'budget': 'even'}
    """
    return {attr: getattr(args, attr) for _, _, attr in MOET_FLAGS} | {"budget": args.budget}


def moet_settings_text(s: dict) -> str:
    """The DP-MOET sizes as the markdown's settings sentence states them.

    Parameters
    ----------
    s : dict
        :func:`moet_settings` of the flags.

    Returns
    -------
    str

    Examples
    --------
    >>> moet_settings_text({"population": 30, "selection": 3, "generations": 3, "depth": 4, "max_depth": 10,
    ...                     "output": 3})
    'p = 30, s = 3, k = 3, d = 4, d_max = 10, o = 3'
    """
    return ", ".join(f"{what} = {s[attr]}" for _, what, attr in MOET_FLAGS)


def load_table(name: str) -> tuple[Any, CompressedTable]:
    """(data, its CompressedTable), cached per worker process.

    Parameters
    ----------
    name : {"nltcs", "adult", "acs"}
        Loaded with :func:`dpselect.experiments._data.load_tabular` (the project's copy).

    Returns
    -------
    (TabularData, CompressedTable)
        The same objects on every call in a process.

    Examples
    --------
    >>> data, compressed = load_table("nltcs")
    >>> data.n_records, load_table("nltcs")[0] is data
    (21574, True)
    """
    if name not in _DATA:
        data = load_tabular(name)
        _DATA[name] = (data, CompressedTable.from_data(data))
    return _DATA[name]


def _task(job):
    """One run on one dataset: one NODP reference, then every method and ε.

    ``job`` = (dataset index, name, run, seed, epsilons, settings[, quirks]); with quirks (``--protocol
    paper-code``) the run follows :mod:`.paper_code` and also returns a note (failed runs, cache hits).
    """
    di, name, run_, seed, epsilons, settings = job[:6]
    quirks = tuple(job[6]) if len(job) > 6 else ()
    if quirks:
        return _task_quirks(di, name, run_, seed, epsilons, settings, quirks)
    data, comp = load_table(name)
    ref = nodp_moet(data, approach="pareto", rng=np.random.default_rng([seed, di, run_, 0]), compressed=comp,
                    **settings)
    rows = []
    for ei, eps in enumerate(epsilons):
        for mi, method in enumerate(METHODS):
            res = dp_moet(data, epsilon=eps, approach="pareto", mechanism=MECHANISM[method.split("-")[1]],
                          rng=np.random.default_rng([seed, di, run_, 1 + mi, ei]), compressed=comp,
                          exact_statistics=True, **settings)  # metric C needs them (not released)
            rows.append({"dataset": name, "method": method, "epsilon": eps, "run": run_, "metric": "C",
                         "value": metric_c(cast(np.ndarray, ref.objectives), cast(np.ndarray, res.objectives)), "budget": settings["budget"],
                         "protocol": "ours", "failed": 0})
    return rows


def _task_quirks(di, name, run_, seed, epsilons, settings, quirks):
    data, comp = load_table(name)
    settings = dict(settings) | ({"budget": "paper-code"} if "budget" in quirks else {})
    label = pc.protocol_label(quirks, pc.TABLE1_QUIRKS)
    before = pc.PROCESS_CACHE.counts()
    kw = dict(approach="pareto", weights=(3.0, 2.0), quirks=quirks, **settings)
    if "one-stream" in quirks:   # the code: reset_seed(run), the NODP run, then the private run, for every ε
        g0 = np.random.default_rng([seed, di, run_])
        ref = pc.moet_run(data, comp, epsilon=None, mechanism=None, rng=g0, **kw)
    else:
        ref = pc.moet_run(data, comp, epsilon=None, mechanism=None, rng=np.random.default_rng([seed, di, run_, 0]),
                          **kw)
    rows, failed = [], []
    for ei, eps in enumerate(epsilons):
        for mi, method in enumerate(METHODS):
            gen = pc.fork(g0) if "one-stream" in quirks else np.random.default_rng([seed, di, run_, 1 + mi, ei])
            try:
                res = pc.moet_run(data, comp, epsilon=eps, mechanism=MECHANISM[method.split("-")[1]], rng=gen, **kw)
                value, fail = metric_c(ref.objectives, res.objectives), 0
            except pc.FloatingPointFailure:
                failed.append((method, eps))
                if "failed-zero" not in quirks:
                    continue
                value, fail = 0.0, 1
            rows.append({"dataset": name, "method": method, "epsilon": eps, "run": run_, "metric": "C",
                         "value": value, "budget": settings["budget"], "protocol": label, "failed": fail})
    return rows, {"dataset": name, "failed": failed, "cache": pc.cache_note(pc.PROCESS_CACHE, before)}


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce table1`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce table1 --help`` lists the flags).

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args([]).runs
    500
    """
    add_common_arguments(parser, runs=500, epsilons=EPSILONS, datasets=DATASETS, jobs=2)
    add_moet_arguments(parser, (30, 3, 3, 4, 10, 3), "privacy budget split (default even; see dpselect.trees._dpmoet)")
    pc.add_protocol_arguments(parser, pc.TABLE1_QUIRKS)


def _jobs(args, names) -> list:
    settings = moet_settings(args)
    quirks = pc.resolve_quirks(args, pc.TABLE1_QUIRKS)
    return [(DATASETS.index(n), n, r, args.seed, list(args.epsilons), settings, quirks)
            for n in names for r in range(args.runs)]


def _settings(res: Result) -> str:
    quirks = pc.resolve_quirks(res.args, pc.TABLE1_QUIRKS)
    budget = "paper-code" if "budget" in quirks else res.args.budget
    return (f"{moet_settings_text(moet_settings(res.args))}; objectives TPR and TNR on the whole table; budget "
            f"split '{budget}' (see dpselect.trees._dpmoet); protocol {pc.protocol_label(quirks, pc.TABLE1_QUIRKS)}; "
            "C uses strict domination;")


def protocol_report(res: Result, applicable: Sequence[str]) -> list[str]:
    """The protocol paragraph and, with quirks, the failed runs and the dampening-cache counts (notes).

    Parameters
    ----------
    res : Result
        The collected runs (their notes carry the failed runs and the cache counts).
    applicable : sequence of str
        The quirks that apply to this reproduction (e.g. :data:`~dpselect.experiments.paper_code.TABLE1_QUIRKS`).

    Returns
    -------
    list of str
        Markdown lines; without quirks, the protocol paragraph and a blank line.

    Examples
    --------
    >>> import argparse
    >>> from dpselect.experiments import paper_code as pc
    >>> from dpselect.experiments._common import Result
    >>> args = argparse.Namespace(protocol="ours", quirks=None, without=None)
    >>> lines = protocol_report(Result(args, ["nltcs"], [], [], 0.0), pc.TABLE1_QUIRKS)
    >>> len(lines), lines[-1]
    (2, '')
    """
    quirks = pc.resolve_quirks(res.args, applicable)
    lines = [pc.protocol_text(quirks, applicable), ""]
    if not quirks:
        return lines
    failed: dict = {}
    cache = {"calls": 0, "hits": 0, "stale": 0}
    for note in res.notes:
        if not isinstance(note, dict):
            continue
        for m, e in note.get("failed", []):
            key = (note["dataset"], m, e)
            failed[key] = failed.get(key, 0) + 1
        for k in cache:
            cache[k] += note.get("cache", {}).get(k, 0)
    if "fp-raise" in quirks:
        if failed:
            how = "counted as C = 0" if "failed-zero" in quirks else "left out of the means"
            lines += [f"Runs failed by the code's float path ({how}): "
                      + "; ".join(f"{d} {m} ε = {e:g}: {n}" for (d, m, e), n in sorted(failed.items())) + ".", ""]
        else:
            lines += ["Runs failed by the code's float path (fp-raise): none.", ""]
    if "lru-cache" in quirks:
        lines += [f"Dampening cache (LRU 50 per worker process, keyed on the utilities' bytes): {cache['calls']} "
                  f"selections, {cache['hits']} hits, {cache['stale']} of them stale (another population's δ).", ""]
    return lines


def _report(res: Result) -> list[str]:
    summ = res.summary("dataset", "method", "epsilon")
    lines = protocol_report(res, pc.TABLE1_QUIRKS)
    for n in res.datasets:
        table = []
        for e in res.args.epsilons:
            nan = (float("nan"), 0.0, 1)
            g, loc = summ.get((n, "pareto-global", e), nan), summ.get((n, "pareto-local", e), nan)
            pg, pl = PAPER.get(n, {}).get(e, (float("nan"), float("nan")))
            table.append((e, g[0], pg, loc[0], pl, f"{g[1] / np.sqrt(g[2]):.3f} / {loc[1] / np.sqrt(loc[2]):.3f}"))
        lines += [f"## {n}", "", markdown_table(("ε", "ours MO_g", "paper MO_g", "ours MO_l", "paper MO_l",
                                                  "std. err. g / l"), table), ""]
    return lines


def _figures(res: Result, plt) -> dict:
    summ = res.summary("dataset", "method", "epsilon")
    eps = res.args.epsilons
    panels = []
    for n in res.datasets:
        lines: list[tuple[str, Any, Any, dict[str, Any]]] = [
            (f"ours {m}", eps, [summ.get((n, m, e), (float("nan"),))[0] for e in eps], {"marker": mk})
            for m, mk in zip(METHODS, "os")]
        for j, m in enumerate(METHODS):
            pts = [(e, PAPER[n][e][j]) for e in eps if e in PAPER.get(n, {})]
            if pts:
                x, y = zip(*pts)
                lines.append((f"paper {m}", x, y, {"marker": "x", "linestyle": "--", "alpha": 0.6}))
        panels.append((n, lines))
    return {"": line_panels(plt, panels, ylabel="mean C (lower is better)")}


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION,
    title="Table 1 (paper Sec. 6.3): mean metric C(NODP-MOET-Pareto, DP-MOET-Pareto)",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures, settings=_settings,
    allowed=DATASETS, extra_columns=("budget", "protocol", "failed"), paper_runs="paper: 500",
    order=lambda args, names: {"dataset": names, "method": METHODS, "epsilon": args.epsilons},
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
