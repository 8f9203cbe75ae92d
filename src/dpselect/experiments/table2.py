"""Paper Table 2: metric C of DP-MOTkIN-Pareto (global and local) against the non-private top-k.

Setting (paper Sec. 7.4): objectives degree and egocentric density, k = 3 picks with ε/k each,
ε in {0.1, 0.5, 1, 2, 5, 10, 20, 50}, 500 runs, Enron and GitHub (DBLP is not available offline; pass
any edge-list path to ``--datasets`` to run it). Metric C (paper Def. 6.3) = fraction of the private
picks dominated by at least one node of the non-private top-k (k times the largest Pareto score on the
remaining nodes). Lower is better. Thousands of nodes tie at Pareto score 0 and the paper does not say
how it breaks ties, so every run is scored against two reference sets: metric ``C`` breaks ties
towards the node that dominates the most others (then the smallest id), metric ``C-index-ties``
towards the smallest node id.

``--egodensity`` picks the egocentric-density formula: ``paper`` (Eq. 2: 2e/(d(d−1)), 0 for d < 2),
``code`` (the paper's published code: e/(d(d−1)), degree-1 nodes 1), or ``both`` (default). The
sensitivity function is the paper's δ^egodensity in both cases (admissible for both, see
:mod:`dpselect.utilities.graph`).

Every selection is exactly PrivPareto with k = 3 (scores and δ^PS recomputed on the remaining nodes);
the ε-independent dampened scores are cached per picked prefix (:class:`MotkinSampler`), and the
samplers per worker process, so one job is one (graph, formula, method, ε) cell with all its runs.

``--protocol paper-code`` runs the authors' published code's protocol instead, quirk by quirk
(:mod:`dpselect.experiments.paper_code`): the code's density formula (``--egodensity`` is then set by
the ``ed-formula`` quirk), the k picks from one fixed score vector, the reference
``argsort(score)[::-1][:k]``, the code's δ^egodensity and δ^PS, D(0) = first t with δ > 0, its float
sampling path with failed runs counted as C = 0. For reproduction only: the code's δ^egodensity is
smaller than the admissible one and its float sampling is not exact, so these selections are not the
ε-DP mechanism dpselect guarantees.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..graphs import MotkinSampler, metric_c, top_k_pareto
from ..datasets import load_dataset_graph
from ..graphs import GRAPH_DATASETS, Graph
from ..multiobjective import pareto_score
from ..utilities.graph import egocentric_density
from . import paper_code as pc
from ._common import Reproduction, Result, add_common_arguments, markdown_table, pyplot
from ._data import load_graph

__all__ = ["NAME", "DESCRIPTION", "EPSILONS", "METHODS", "VARIANTS", "PAPER", "graph_source",
    "load_graph_dataset", "cached_graph", "cached", "add_graph_argument", "graph_sources", "graph_datasets",
    "pareto_front_mask", "REPRODUCTION", "add_arguments", "run"]

NAME = "table2"
DESCRIPTION = "Paper Table 2: metric C of DP-MOTkIN-Pareto global/local vs the non-private top-k (Enron, GitHub)"
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
METHODS = ("pareto-global", "pareto-local")
VARIANTS = ("paper", "code")
# Paper Table 2: epsilon -> (MOT_global, MOT_local)
PAPER = {
    "github": {0.1: (0.20, 0.15), 0.5: (0.21, 0.00), 1.0: (0.22, 0.00), 2.0: (0.18, 0.00), 5.0: (0.16, 0.00),
               10.0: (0.10, 0.00), 20.0: (0.05, 0.00), 50.0: (0.00, 0.00)},
    "enron": {0.1: (0.41, 0.41), 0.5: (0.39, 0.41), 1.0: (0.42, 0.39), 2.0: (0.34, 0.38), 5.0: (0.33, 0.30),
              10.0: (0.22, 0.16), 20.0: (0.15, 0.07), 50.0: (0.07, 0.00)},
    "dblp": {0.1: (0.07, 0.08), 0.5: (0.09, 0.09), 1.0: (0.09, 0.08), 2.0: (0.09, 0.08), 5.0: (0.08, 0.07),
             10.0: (0.07, 0.06), 20.0: (0.07, 0.05), 50.0: (0.05, 0.00)},
}

_CACHE: dict = {}  # per worker process: graphs, samplers, reference sets


# -- graph datasets (shared with figure3 and thesis-figure20) ----------------------------------------
def graph_source(name: str) -> tuple[str, str]:
    """(label, source) for ``enron``/``github`` or an edge-list path (label = lower-case file stem).

    Parameters
    ----------
    name : str
        A key of :data:`dpselect.graphs.GRAPH_DATASETS` or an existing edge-list path (``SystemExit``
        otherwise).

    Returns
    -------
    (str, str)
        The label of the rows and the source to load.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "Toy.txt"
    >>> _ = path.write_text("0 1\\n1 2\\n")
    >>> graph_source("enron"), graph_source(str(path))[0]
    (('enron', 'enron'), 'toy')
    """
    if name in GRAPH_DATASETS:
        return name, name
    p = Path(name)
    if not p.exists():
        raise SystemExit(f"error: unknown dataset {name!r}: use {', '.join(GRAPH_DATASETS)} or an edge-list path "
                         "(e.g. a SNAP DBLP file)")
    return p.stem.lower(), str(p)


def load_graph_dataset(name: str) -> tuple[str, Graph]:
    """(label, graph) for ``enron``/``github`` or an edge-list path (label = lower-case file stem).

    A shipped graph has its published node set (:func:`dpselect.experiments._data.load_graph`); an
    edge-list path is read with :func:`dpselect.datasets.load_dataset_graph` (node set from the edges).

    Parameters
    ----------
    name : str
        As in :func:`graph_source`.

    Returns
    -------
    (str, Graph)

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "Toy.txt"
    >>> _ = path.write_text("0 1\\n1 2\\n")
    >>> load_graph_dataset(str(path))
    ('toy', Graph('Toy.txt', n_nodes=3, n_edges=2, max_degree=2))
    """
    label, source = graph_source(name)
    return label, load_graph(source) if source in GRAPH_DATASETS else load_dataset_graph(Path(source))


def cached_graph(source: str) -> Graph:
    """The graph of a source from :func:`graph_sources`, loaded once per process.

    Parameters
    ----------
    source : str
        A source of :func:`graph_source`.

    Returns
    -------
    Graph
        The same object on every call in a process.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "Toy.txt"
    >>> _ = path.write_text("0 1\\n1 2\\n")
    >>> cached_graph(str(path)) is cached_graph(str(path))
    True
    """
    key = ("graph", source)
    if key not in _CACHE:
        _CACHE[key] = load_graph_dataset(source)[1]
    return _CACHE[key]


def cached(key: tuple, make: Callable[[], Any]) -> Any:
    """``make()`` once per process and ``key``.

    Parameters
    ----------
    key : tuple
        The cache key (shared by every caller in the process).
    make : callable
        Builds the value, called only on the first request of ``key``.

    Returns
    -------
    object
        The cached value.

    Examples
    --------
    >>> cached(("doc-example",), lambda: [1, 2]) is cached(("doc-example",), lambda: [3])
    True
    """
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def add_graph_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--graph PATH`` (repeatable): edge-list files to run on besides (or instead of) --datasets.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Extended in place.

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_graph_argument(parser)
    >>> [str(p) for p in parser.parse_args(["--graph", "a.txt", "--graph", "b.csv"]).graph]
    ['a.txt', 'b.csv']
    """
    parser.add_argument("--graph", action="append", type=Path, default=[], metavar="PATH",
                        help="an edge-list file to run on (repeatable; case-preserving, unlike --datasets; "
                             "replaces the default datasets unless --datasets is given)")


def graph_sources(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(label, source) of the graphs named by --datasets plus those given with --graph, checked.

    When --graph is given and --datasets is left at its default (all shipped graphs), only the
    --graph files run.

    Parameters
    ----------
    args : argparse.Namespace
        With ``datasets`` and, optionally, ``graph`` (a missing file is a ``SystemExit``).

    Returns
    -------
    list of (str, str)
        (label, source) pairs, as :func:`graph_source` gives them.

    Examples
    --------
    >>> import argparse
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "Toy.txt"
    >>> _ = path.write_text("0 1\\n1 2\\n")
    >>> graph_sources(argparse.Namespace(datasets=list(GRAPH_DATASETS), graph=[path]))[0][0]
    'toy'
    """
    names = list(args.datasets)
    if getattr(args, "graph", None) and names == list(GRAPH_DATASETS):
        names = []
    out = [graph_source(d) for d in names]
    for p in getattr(args, "graph", []) or []:
        if not Path(p).exists():
            raise SystemExit(f"error: --graph file not found: {p}")
        out.append(graph_source(str(p)))
    return out


def graph_datasets(args: argparse.Namespace) -> list[tuple[str, Graph]]:
    """The graphs named by --datasets plus those given with --graph, loaded: [(label, graph)].

    Parameters
    ----------
    args : argparse.Namespace
        As in :func:`graph_sources`.

    Returns
    -------
    list of (str, Graph)
        Loaded once per process (:func:`cached_graph`).

    Examples
    --------
    >>> import argparse
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "Toy.txt"
    >>> _ = path.write_text("0 1\\n1 2\\n")
    >>> graph_datasets(argparse.Namespace(datasets=[], graph=[path]))
    [('toy', Graph('Toy.txt', n_nodes=3, n_edges=2, max_degree=2))]
    """
    return [(label, cached_graph(source)) for label, source in graph_sources(args)]


# -- table 2 ------------------------------------------------------------------------------------------
def _sampler(source: str, variant: str, method: str):
    return cached(("sampler", source, variant, method), lambda: MotkinSampler(
        cached_graph(source), "pareto", mechanism="local_dampening" if method == "pareto-local" else "exponential",
        variant=variant))


def _references(source: str, variant: str, k: int):
    def make():
        U = _sampler(source, variant, "pareto-local").U
        return U, top_k_pareto(U, k=k, tie_break="dominance"), top_k_pareto(U, k=k, tie_break="index")

    return cached(("refs", source, variant, k), make)


def _task(job):
    """All runs of one (graph, formula, method, ε) cell; the first cell of a graph and formula adds its note.

    ``job`` = (graph index, label, source, formula index, formula, method index, method, ε index, ε, seed,
    runs, k[, quirks]); with quirks the cell follows :mod:`.paper_code`."""
    di, label, source, vi, variant, mi, method, ei, eps, seed, runs, k = job[:12]
    quirks = tuple(job[12]) if len(job) > 12 else ()
    if quirks:
        return _task_quirks(job[:12], quirks)
    U, ref, ref_index = _references(source, variant, k)
    s = _sampler(source, variant, method)
    rows = []
    for run_ in range(runs):
        sel = s.sample(k=k, epsilon=eps, rng=np.random.default_rng([seed, di, vi, mi, ei, run_]))
        for metric, r in (("C", ref), ("C-index-ties", ref_index)):
            rows.append({"dataset": label, "method": method, "epsilon": eps, "run": run_, "metric": metric,
                         "value": metric_c(r, sel, objectives=U), "k": k, "egodensity": variant,
                         "protocol": "ours", "failed": 0})
    if mi or ei:
        return rows
    g = cached_graph(source)
    front = int(np.sum(_sampler(source, variant, "pareto-global").scores(())[1] == 0))  # PS = 0
    note = (f"- {label}, egodensity={variant}: {g.n_nodes} nodes, {g.n_edges} edges, Pareto front {front} nodes; "
            f"non-private top-{k} = node ids {', '.join(str(int(x)) for x in g.node_ids[ref])} "
            f"(degree, egodensity) = {', '.join(f'({U[r, 0]:.0f}, {U[r, 1]:.3f})' for r in ref)}; "
            f"with index ties: {', '.join(str(int(x)) for x in g.node_ids[ref_index])} = "
            f"{', '.join(f'({U[r, 0]:.0f}, {U[r, 1]:.3f})' for r in ref_index)}")
    return rows, note


def _quirk_setup(source: str, variant: str, method: str, quirks: tuple, k: int):
    """(U, reference, reference with index ties or None, sampler) of a graph under quirks, once per process."""
    def make():
        g = cached_graph(source)
        U = np.column_stack([g.degrees.astype(np.float64), egocentric_density(g, variant=variant)])
        dom, index = top_k_pareto(U, k=k, tie_break="dominance"), top_k_pareto(U, k=k, tie_break="index")
        refs: tuple[tuple[str, np.ndarray], ...]
        if "nodp-argsort" in quirks:   # C against the code's reference, and against ours for comparison
            refs = (("C", pc.topk_reference_argsort(U, k)), ("C-dominance-ties", dom), ("C-index-ties", index))
        else:
            refs = (("C", dom), ("C-index-ties", index))
        sampler = pc.TopkParetoQuirks(U, g.degrees, local=method == "pareto-local", quirks=quirks)
        return U, refs, sampler

    return cached(("quirks", source, variant, method, quirks, k), make)


def _task_quirks(job, quirks):
    di, label, source, vi, variant, mi, method, ei, eps, seed, runs, k = job
    U, refs, sampler = _quirk_setup(source, variant, method, quirks, k)
    ref = refs[0][1]
    plabel = pc.protocol_label(quirks, pc.TABLE2_QUIRKS)
    rows, failed = [], 0
    for run_ in range(runs):
        try:
            sel = sampler.sample(k=k, epsilon=eps, rng=np.random.default_rng([seed, di, vi, mi, ei, run_]))
        except pc.FloatingPointFailure:
            failed += 1
            if "failed-zero" not in quirks:
                continue
            sel = None
        for metric, r in refs:
            value = 0.0 if sel is None else metric_c(r, sel, objectives=U)
            rows.append({"dataset": label, "method": method, "epsilon": eps, "run": run_, "metric": metric,
                         "value": value, "k": k, "egodensity": variant, "protocol": plabel,
                         "failed": int(sel is None)})
    note = {"dataset": label, "failed": [(method, eps)] * failed}
    if not (mi or ei):
        g = cached_graph(source)
        front = int(np.sum(pareto_front_mask(U)))
        how = "argsort(score)[::-1][:k]" if "nodp-argsort" in quirks else "ties to the most dominating node"
        note["text"] = (f"- {label}, egodensity={variant}: {g.n_nodes} nodes, {g.n_edges} edges, Pareto front {front} "
                        f"nodes; non-private top-{k} ({how}) = node ids "
                        f"{', '.join(str(int(x)) for x in g.node_ids[ref])} (degree, egodensity) = "
                        f"{', '.join(f'({U[r, 0]:.0f}, {U[r, 1]:.3f})' for r in ref)}")
    return rows, note


def pareto_front_mask(U: np.ndarray) -> np.ndarray:
    """Nodes of Pareto score 0: those no other node strictly dominates (evaluation only, not private).

    Parameters
    ----------
    U : numpy.ndarray, shape (n, m)
        Objective values of the nodes (rows), all maximised.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> pareto_front_mask(np.array([[1.0, 2.0], [2.0, 1.0], [0.5, 0.5]])).tolist()
    [True, True, False]
    """
    return pareto_score(U) == 0


def _variants(args) -> tuple[str, ...]:
    quirks = pc.resolve_quirks(args, pc.TABLE2_QUIRKS) if hasattr(args, "protocol") else ()
    if quirks:   # the density formula is the ed-formula quirk's
        return ("code",) if "ed-formula" in quirks else ("paper",)
    return VARIANTS if args.egodensity == "both" else (args.egodensity,)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce table2`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce table2 --help`` lists the flags).

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
    add_common_arguments(parser, runs=500, epsilons=EPSILONS, datasets=tuple(GRAPH_DATASETS), jobs=1)
    add_graph_argument(parser)
    parser.add_argument("--k", type=int, default=3, help="nodes per selection (default 3)")
    parser.add_argument("--egodensity", choices=VARIANTS + ("both",), default="both",
                        help="egocentric density formula: paper, code (the paper's published code) or both "
                             "(with --protocol paper-code / --quirks: set by the ed-formula quirk)")
    pc.add_protocol_arguments(parser, pc.TABLE2_QUIRKS)


def _jobs(args, graphs) -> list:
    quirks = pc.resolve_quirks(args, pc.TABLE2_QUIRKS)
    return [(di, label, source, vi, variant, mi, method, ei, eps, args.seed, args.runs, args.k, quirks)
            for di, (label, source) in enumerate(graphs) for vi, variant in enumerate(_variants(args))
            for mi, method in enumerate(METHODS) for ei, eps in enumerate(args.epsilons)]


def _report(res: Result) -> list[str]:
    summ = res.summary("dataset", "egodensity", "method", "epsilon", "metric")
    quirks = pc.resolve_quirks(res.args, pc.TABLE2_QUIRKS)
    lines = ["Columns: ours (global / local) with the egocentric-density formula named in the heading, "
             "beside the paper's MOT_g / MOT_l. C: non-private top-k ties at Pareto score 0 broken towards "
             "the node dominating most others; C-index-ties: towards the smallest node id (see the reference "
             "sets at the end). Lower is better.", ""]
    if "nodp-argsort" in quirks:
        lines = ["Columns: ours (global / local) beside the paper's MOT_g / MOT_l; C against the published code's "
                 "reference argsort(score)[::-1][:k] (strict Pareto scores of all nodes, ties in our node order; "
                 "see the reference set at the end); C-index-ties / C-dominance-ties: against our two reference "
                 "sets (smallest id / most dominating node among the ties). Lower is better.", ""]
    lines = _protocol_lines(res) + lines
    nan = (float("nan"), 0.0, 0)
    for ds in res.labels():
        for variant in _variants(res.args):
            table = []
            for eps in res.args.epsilons:
                g, loc = (summ.get((ds, variant, m, eps, "C"), nan) for m in METHODS)
                gi, li = (summ.get((ds, variant, m, eps, "C-index-ties"), nan) for m in METHODS)
                gd, ld = (summ.get((ds, variant, m, eps, "C-dominance-ties"), nan) for m in METHODS)
                pg, pl = PAPER.get(ds, {}).get(eps, (float("nan"), float("nan")))
                se = max(v[1] / max(v[2], 1) ** 0.5 for v in (g, loc, gi, li, gd, ld))
                extra = (gd[0], ld[0]) if "nodp-argsort" in quirks else ()
                table.append((eps, g[0], loc[0], pg, pl, gi[0], li[0], *extra, f"{se:.3f}"))
            head = ("ε", "ours C global", "ours C local", "paper MOT_g", "paper MOT_l", "C-index-ties global",
                    "C-index-ties local") + (("C-dominance-ties global", "C-dominance-ties local")
                                             if "nodp-argsort" in quirks else ()) + ("max std. error",)
            lines += [f"## {ds}, egocentric density = {variant}", "", markdown_table(head, table), ""]
    notes = [n if isinstance(n, str) else n["text"] for n in res.notes if isinstance(n, str) or "text" in n]
    return lines + ["## Graphs and reference sets", ""] + notes


def _protocol_lines(res: Result) -> list[str]:
    quirks = pc.resolve_quirks(res.args, pc.TABLE2_QUIRKS)
    lines = [pc.protocol_text(quirks, pc.TABLE2_QUIRKS), ""]
    if "fp-raise" in quirks:
        failed: dict = {}
        for note in res.notes:
            if isinstance(note, dict):
                for m, e in note.get("failed", []):
                    key = (note["dataset"], m, e)
                    failed[key] = failed.get(key, 0) + 1
        how = "counted as C = 0" if "failed-zero" in quirks else "left out of the means"
        lines += ["Runs failed by the code's float path (" + how + "): "
                  + ("; ".join(f"{d} {m} ε = {e:g}: {n}" for (d, m, e), n in sorted(failed.items())) or "none")
                  + ".", ""]
    return lines


def _plot(out: Path, rows: list[dict], variants) -> None:
    """Re-draw ``OUT/table2.png`` from the rows of a ``table2.csv`` (``_common.read_csv``)."""
    plt = pyplot()
    fig = _figure(rows, variants, plt)
    fig.savefig(Path(out) / f"{NAME}.png", dpi=120)
    plt.close(fig)


def _figure(rows: list[dict], variants, plt):
    """Mean C per ε: one column per dataset, rows for metric C and C-index-ties, paper's values dotted."""
    summ: dict = {}
    for key, val in Result(argparse.Namespace(), [], rows, [], 0.0).summary(
            "metric", "dataset", "egodensity", "method", "epsilon").items():
        summ[key[:4] + (float(key[4]),)] = val
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    present = set(r["metric"] for r in rows)
    # with nodp-argsort (paper-code) metric C is scored against the code's reference, argsort of the scores;
    # the dominance-ties reference is then C-dominance-ties (the title had named a reference not plotted)
    argsort_ref = "C-dominance-ties" in present
    titles = {"C": ("the code's reference, argsort(score)[::-1][:k]" if argsort_ref
                    else "ties to the most dominating node"),
              "C-dominance-ties": "ties to the most dominating node", "C-index-ties": "ties to the smallest id"}
    metrics = [m for m in ("C", "C-dominance-ties", "C-index-ties") if m in present]
    fig, axes = plt.subplots(len(metrics), len(datasets), figsize=(5 * len(datasets), 3.6 * len(metrics)),
                             squeeze=False)
    for row, metric in enumerate(metrics):
        for ax, ds in zip(axes[row], datasets):
            for variant in variants:
                for method, marker in zip(METHODS, ("o", "s")):
                    keys = sorted((k for k in summ if k[:4] == (metric, ds, variant, method)), key=lambda k: k[4])
                    if keys:
                        ax.plot([k[4] for k in keys], [summ[k][0] for k in keys], marker=marker,
                                linestyle="-" if variant == "paper" else "--", label=f"{method} ({variant})")
            if ds in PAPER:
                eps = sorted(PAPER[ds])
                ax.plot(eps, [PAPER[ds][e][0] for e in eps], "k:", marker="o", alpha=0.5, label="paper global")
                ax.plot(eps, [PAPER[ds][e][1] for e in eps], "k:", marker="s", alpha=0.5, label="paper local")
            ax.set_xscale("log")
            ax.set_xlabel("ε")
            ax.set_ylabel(f"mean {metric}")
            ax.set_title(f"{ds}: {titles[metric]}", fontsize=10)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION,
    title=lambda args: f"Table 2 (paper Sec. 7.4): mean metric C, DP-MOTkIN-Pareto vs non-private top-{args.k}",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report,
    figures=lambda res, plt: {"": _figure(res.rows, _variants(res.args), plt)},
    settings=lambda res: (f"k = {res.args.k} (ε/k per pick); protocol "
                          f"{pc.protocol_label(pc.resolve_quirks(res.args, pc.TABLE2_QUIRKS), pc.TABLE2_QUIRKS)};"),
    datasets=graph_sources,
    extra_columns=("k", "egodensity", "protocol", "failed"), paper_runs="paper: 500",
    size=lambda args, graphs: args.runs * len(args.epsilons) * len(graphs) * len(_variants(args)),
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
