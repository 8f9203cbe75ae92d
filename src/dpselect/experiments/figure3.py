"""Paper Figure 3: recall of DP-MOTkIN-Agg (global and local) for the top-5 aggregate nodes.

Setting (paper Sec. 7.5): u_agg = 1·degree + 100·egocentric density, k = 5 picks with ε/k each,
ε in {0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 20, 100}, 500 runs, Enron and GitHub (DBLP: pass an edge-list
path). Recall = |private picks ∩ non-private top-5| / 5. Global: exponential mechanism with
Δ = 1·1 + 100·1 = 101; local: local dampening with δ^agg = δ^degree + 100·δ^egodensity.
``--egodensity code`` uses the paper code's egocentric-density formula (see table2).

``--quirks agg-delta-ed`` (or ``--protocol paper-code``, which adds ``delta-code``) runs the local method with the
published code's sensitivity instead (:mod:`dpselect.experiments.paper_code`): ``topk/topk_weighted.py``
passes δ^egodensity as the first δ of its ``DeltaWeighted``, which advances it twice per step and never uses
δ^degree: δ^agg(t) = 100·δ^ED(2t) + 1·δ^ED(2t + 1). Reproduction only (not ε-DP). With the same seeds as our
protocol, so a quirk's effect is a paired difference. The code's float sampling and argsort reference are not
modelled here.

The paper prints Figure 3 only as a plot; the markdown quotes its text (Sec. 7.5) beside our means.
"""
from __future__ import annotations

import argparse

import numpy as np

from ..graphs import recall, top_k_aggregate
from ..graphs import MotkinSampler
from ..graphs import GRAPH_DATASETS
from . import paper_code as pc
from ._common import Reproduction, Result, add_common_arguments, line_panels, markdown_table
from .table2 import add_graph_argument, cached, cached_graph, graph_sources

__all__ = ["NAME", "DESCRIPTION", "EPSILONS", "METHODS", "PAPER_TEXT", "REPRODUCTION", "add_arguments", "run"]

NAME = "figure3"
DESCRIPTION = "Paper Fig. 3: recall of DP-MOTkIN-Agg global/local (w_degree=1, w_egodensity=100, k=5)"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 100.0)
METHODS = ("agg-global", "agg-local")
PAPER_TEXT = ("DP-MOTkIN-Agg_local obtains perfect recall with a low privacy budget, ε <= 1 for Enron and "
              "GitHub (ε <= 5 for DBLP, recall 0.71 at ε = 1 there); DP-MOTkIN-Agg_global needs 1 to 2 "
              "orders of magnitude more budget for the same recall.")


def _sampler(source: str, method: str, variant: str, weights: tuple, quirks: tuple = ()):
    if quirks and method == "agg-local":
        def make():
            base = _sampler(source, method, variant, weights)
            return pc.TopkAggQuirks(base.U, cached_graph(source).degrees, weights, quirks=quirks)

        return cached(("agg-quirks", source, variant, weights, quirks), make)
    return cached(("agg-sampler", source, method, variant, weights), lambda: MotkinSampler(
        cached_graph(source), "agg", mechanism="local_dampening" if method == "agg-local" else "exponential",
        variant=variant, objective_weights=weights))


def _task(job):
    """All runs of one (graph, method, ε) cell; the graph's first cell adds the reference set note."""

    di, label, source, mi, method, ei, eps, seed, runs, k, weights, variant = job[:12]
    quirks = tuple(job[12]) if len(job) > 12 else ()
    s = _sampler(source, method, variant, weights, quirks)
    U = _sampler(source, method, variant, weights).U
    ref = top_k_aggregate(U, k=k, objective_weights=weights)
    rows = []
    for run_ in range(runs):
        sel = s.sample(k=k, epsilon=eps, rng=np.random.default_rng([seed, di, mi, ei, run_]))
        rows.append({"dataset": label, "method": method, "epsilon": eps, "run": run_, "metric": "recall",
                     "value": recall(ref, sel), "k": k})
    if mi or ei:
        return rows
    agg = U @ np.asarray(weights)
    ids = cached_graph(source).node_ids
    return rows, (f"- {label}: non-private top-{k} node ids {', '.join(str(int(x)) for x in ids[ref])}, u_agg = "
                  f"{', '.join(f'{agg[r]:.1f}' for r in ref)} (next: {np.sort(agg)[-k - 1]:.1f})")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce figure3`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce figure3 --help`` lists the flags).

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
    parser.add_argument("--k", type=int, default=5, help="nodes per selection (default 5)")
    parser.add_argument("--weights", type=float, nargs=2, default=(1.0, 100.0), metavar=("W_DEGREE", "W_EGODENSITY"),
                        help="aggregation weights (default 1 100)")
    parser.add_argument("--egodensity", choices=("paper", "code"), default="paper",
                        help="egocentric density formula (default paper)")
    pc.add_protocol_arguments(parser, pc.FIGURE3_QUIRKS)


def _jobs(args, graphs) -> list:
    quirks = pc.resolve_quirks(args, pc.FIGURE3_QUIRKS)
    return [(di, label, source, mi, method, ei, eps, args.seed, args.runs, args.k, tuple(args.weights), args.egodensity,
             quirks)
            for di, (label, source) in enumerate(graphs) for mi, method in enumerate(METHODS)
            for ei, eps in enumerate(args.epsilons)]


def _settings(res: Result) -> str:
    a = res.args
    quirks = pc.resolve_quirks(a, pc.FIGURE3_QUIRKS)
    return (f"u_agg = {a.weights[0]:g}·degree + {a.weights[1]:g}·egodensity (egocentric density formula: "
            f"{a.egodensity}), k = {a.k} (ε/k per pick)"
            + (f"; local method with quirks {', '.join(quirks)} (reproduction only, not ε-DP)" if quirks else "")
            + ";")


def _report(res: Result) -> list[str]:
    summ = res.summary("dataset", "method", "epsilon")
    lines = [f"Paper (Fig. 3 is a plot only; its text): {PAPER_TEXT}", ""]
    for ds in res.labels():
        table = [(eps, *[summ[(ds, m, eps)][0] for m in METHODS]) for eps in res.args.epsilons]
        lines += [f"## {ds}", "", markdown_table(("ε", *[f"ours {m}" for m in METHODS]), table), ""]
    return lines + ["## Reference sets", ""] + res.notes


def _figures(res: Result, plt) -> dict:
    summ = res.summary("dataset", "method", "epsilon")
    eps = res.args.epsilons
    panels = [(ds, [(m, eps, [summ[(ds, m, e)][0] for e in eps], {"marker": mk}) for m, mk in zip(METHODS, "os")])
              for ds in res.labels()]
    return {"": line_panels(plt, panels, ylabel="mean recall", ylim=(-0.02, 1.02), legend="all", size=(5, 3.8))}


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION, title=lambda args: f"Figure 3 (paper Sec. 7.5): mean recall of DP-MOTkIN-Agg, top-{args.k}",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures, settings=_settings,
    datasets=graph_sources, extra_columns=("k",), paper_runs="paper: 500",
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
