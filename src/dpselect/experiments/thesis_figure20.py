"""Thesis Figure 20: accuracy of PrivTopk (EBC) with EM, PF, LD and SLD, k in {5, 10, 20}.

Setting (thesis Sec. 6.5): egocentric betweenness centrality, k picks with B/k each, B (= ε) in
[1e-3, 1e4], 100 runs, Enron and GitHub (DBLP: pass an edge-list path). Accuracy =
|retrieved ∩ true top-k| / k. EM and PF use ΔEBC = max(D(D−1)/4, D); LD and SLD use the bounded δ^EBC
of thesis Def. 6.3.1. D is the public bound on the maximum degree, passed explicitly: the thesis' values
(Sec. 6.5, Δ(G) of each SNAP graph: Enron 1,383, DBLP 343, GitHub 9,458;
:data:`dpselect.datasets.PUBLIC_GRAPH_MAX_DEGREE`) for a graph of that name, ``--max-degree`` for any
other graph (required there: the maximum degree of the private graph is not public).

The thesis prints Figure 20 only as a plot; the markdown quotes its text beside our means and
reports, per method, the smallest ε reaching mean accuracy >= 0.9.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from ..graphs import recall, top_k_ebc
from ..graphs import PRIV_TOPK_MECHANISMS, PrivTopkScores, prepare_priv_topk, priv_topk
from ..datasets import PUBLIC_GRAPH_MAX_DEGREE
from ..graphs import GRAPH_DATASETS, Graph
from ._common import Reproduction, Result, add_common_arguments, line_panels, markdown_table, parse_int_list
from .table2 import add_graph_argument, cached, cached_graph, graph_sources

__all__ = ["NAME", "DESCRIPTION", "EPSILONS", "METHODS", "THESIS_TEXT", "published_max_degree", "setup",
    "REPRODUCTION", "add_arguments", "run"]

NAME = "thesis-figure20"
DESCRIPTION = "Thesis Fig. 20: PrivTopk accuracy with EBC for EM, PF, LD, SLD, k in {5, 10, 20}"
EPSILONS = tuple(float(f"{10.0 ** e:.6g}") for e in np.arange(-3, 4.5, 0.5))
METHODS = tuple(PRIV_TOPK_MECHANISMS)
THESIS_TEXT = ("EM and PF have low accuracy for low B (ΔEBC = 22,361,076.5 for GitHub; the thesis quotes "
               "477,826.5 for DBLP and 29,326.5 for Enron, which are swapped: D = 1,383 (Enron) gives "
               "477,826.5 and D = 343 (DBLP) 29,326.5). LD suffers from the inversion problem; SLD reaches "
               "the same accuracy with 3 to 4 orders of magnitude less budget than EM and 2 to 4 less than PF. "
               "All methods get worse as k grows.")


def published_max_degree(label: str, args: argparse.Namespace | None = None) -> tuple[int, str]:
    """(D, where it comes from) for the graph ``label``: ``--max-degree`` if given, else the thesis' value.

    D is a public bound on the maximum degree, never read from the graph (``SystemExit`` for a graph
    without a published value and no ``--max-degree``).

    Parameters
    ----------
    label : str
        The graph's label (``enron``, ``dblp``, ``github`` have published values).
    args : argparse.Namespace, optional
        Parsed flags; its ``max_degree`` (``--max-degree``) wins when given.

    Returns
    -------
    (int, str)
        D and its source.

    Examples
    --------
    >>> import argparse
    >>> published_max_degree("enron"), published_max_degree("toy", argparse.Namespace(max_degree=5))
    ((1383, 'thesis Sec. 6.5'), (5, '--max-degree'))
    """

    given = getattr(args, "max_degree", None) if args is not None else None
    if given is not None:
        if given < 1:
            raise SystemExit(f"error: --max-degree must be >= 1, got {given}")
        return int(given), "--max-degree"
    if label in PUBLIC_GRAPH_MAX_DEGREE:
        return PUBLIC_GRAPH_MAX_DEGREE[label], "thesis Sec. 6.5"
    raise SystemExit(f"error: graph {label!r} needs --max-degree D, a public bound on its maximum degree chosen "
                     f"without looking at the graph (the thesis' values: "
                     f"{', '.join(f'{k} {v}' for k, v in PUBLIC_GRAPH_MAX_DEGREE.items())})")


def setup(label: str, graph: Graph, args: argparse.Namespace | None = None) -> PrivTopkScores:
    """EBC scores of ``graph`` with the public maximum-degree bound (no PrivacyLeakWarning).

    Parameters
    ----------
    label : str
        The graph's label, for :func:`published_max_degree`.
    graph : Graph
    args : argparse.Namespace, optional
        Parsed flags (``--max-degree``).

    Returns
    -------
    PrivTopkScores
        :func:`dpselect.prepare_priv_topk` of ``graph`` with ``max_degree=D``.

    Examples
    --------
    >>> import argparse
    >>> from dpselect.graphs import from_edges
    >>> scores = setup("toy", from_edges([0, 1], [1, 2], n_nodes=3), argparse.Namespace(max_degree=2))
    >>> scores.utilities.tolist(), scores.max_degree
    ([0.0, 1.0, 0.0], 2)
    """
    D, _ = published_max_degree(label, args)
    return prepare_priv_topk(graph, max_degree=D)


def _scores(source: str, D: int) -> tuple[PrivTopkScores, float]:
    def make():
        t0 = time.perf_counter()
        scores = prepare_priv_topk(cached_graph(source), max_degree=D)
        scores.dampened()
        scores.shifted()
        return scores, time.perf_counter() - t0

    return cached(("ebc", source, D), make)


def _task(job):
    """All runs of one (graph, k, mechanism, ε) cell; the graph's first cell adds its note."""

    di, label, source, D, D_from, ki, k, mi, mech, ei, eps, seed, runs = job
    scores, secs = _scores(source, D)
    ref = cached(("ebc-top", source, D, k), lambda: top_k_ebc(scores, k=k))
    rows = []
    for run_ in range(runs):
        sel = priv_topk(scores, k=k, epsilon=eps, mechanism=mech, rng=np.random.default_rng([seed, di, ki, mi, ei, run_]))
        rows.append({"dataset": label, "method": mech, "epsilon": eps, "run": run_, "metric": "accuracy",
                     "value": recall(ref, sel), "k": k})
    if ki or mi or ei:
        return rows
    return rows, (f"- {label}: D = {scores.max_degree} (public bound, {D_from}; the graph's maximum degree is "
                  f"{cached_graph(source).max_degree}), ΔEBC = {scores.global_sensitivity:,.1f}, max EBC = "
                  f"{scores.utilities.max():,.1f}; EBC + LD/SLD scores in {secs:.1f} s")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce thesis-figure20`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce thesis-figure20 --help`` lists the flags).

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args([]).runs
    100
    """
    add_common_arguments(parser, runs=100, epsilons=EPSILONS, datasets=tuple(GRAPH_DATASETS), jobs=1)
    add_graph_argument(parser)
    parser.add_argument("--ks", type=parse_int_list, default=[5, 10, 20], help="comma-separated k values (default 5,10,20)")
    parser.add_argument("--max-degree", type=int, default=None, metavar="D",
                        help="public bound on the maximum degree of a --graph file (default for enron, github, "
                             "dblp: the thesis' value; required for other graphs)")


def _graphs(args) -> list:
    """(label, source, D, where D comes from): fails on a missing public bound before any work."""
    return [(label, source, *published_max_degree(label, args)) for label, source in graph_sources(args)]


def _jobs(args, graphs) -> list:
    return [(di, label, source, D, D_from, ki, k, mi, mech, ei, eps, args.seed, args.runs)
            for di, (label, source, D, D_from) in enumerate(graphs) for ki, k in enumerate(args.ks)
            for mi, mech in enumerate(METHODS) for ei, eps in enumerate(args.epsilons)]


def _report(res: Result) -> list[str]:
    summ = res.summary("dataset", "k", "method", "epsilon")
    eps, ks = res.args.epsilons, res.args.ks
    lines = [f"Thesis (Fig. 20 is a plot only; its text): {THESIS_TEXT}", ""]
    for ds in res.labels():
        for k in ks:
            table = [(e, *[summ[(ds, k, m, e)][0] for m in METHODS]) for e in eps]
            lines += [f"## {ds}, k = {k}", "", markdown_table(("ε", *METHODS), table), ""]
        first = []
        for k in ks:
            row = [k]
            for m in METHODS:
                ok = [e for e in eps if summ[(ds, k, m, e)][0] >= 0.9]
                row.append(f"{min(ok):g}" if ok else f"> {max(eps):g}")
            first.append(row)
        lines += [f"### {ds}: smallest ε with mean accuracy >= 0.9", "", markdown_table(("k", *METHODS), first), ""]
    return lines + ["## Graphs", ""] + res.notes


def _figures(res: Result, plt) -> dict:
    summ = res.summary("dataset", "k", "method", "epsilon")
    eps = res.args.epsilons
    panels = [(f"{ds}, k = {k}", [(m, eps, [summ[(ds, k, m, e)][0] for e in eps], {"marker": mk})
                                  for m, mk in zip(METHODS, "osv^")]) for ds in res.labels() for k in res.args.ks]
    return {"": line_panels(plt, panels, ncols=len(res.args.ks), ylabel="accuracy", ylim=(-0.02, 1.02), legend="all")}


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION, title="Thesis Figure 20 (Sec. 6.5): mean accuracy of PrivTopk with EBC",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures,
    settings=lambda res: f"k in {res.args.ks} (ε/k per pick);", datasets=_graphs, extra_columns=("k",),
    paper_runs="thesis: 100",
    size=lambda args, graphs: args.runs * len(args.epsilons) * len(graphs) * len(args.ks),
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
