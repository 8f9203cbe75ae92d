"""The influential-nodes part of ``dpselect demo``: a small table of private picks against the truth."""
from __future__ import annotations

import copy
from typing import Any

from .._rng import check_rng
from ..typing import RngLike
from ._graph import Graph
from ..vocabulary import MechanismName
from ._baselines import metric_c, recall, top_k_aggregate, top_k_ebc, top_k_pareto
from ._motkin import check_graph, motkin_objectives
from ._motkin_sampler import MotkinSampler
from ._priv_topk import prepare_scores, priv_topk

__all__ = ["influential_demo_table"]


def influential_demo_table(graph: Graph, *, k: int = 3, epsilon: float = 1.0,
                           rng: RngLike = None, max_degree: int | None = None) -> str:
    """A small text table: private top-k influential nodes, local versus global sensitivity.

    Rows: the non-private top-k by aggregate (degree + 100·egocentric density) and by Pareto
    score, then DP-MOTkIN-Agg and DP-MOTkIN-Pareto, local and global, and PrivTopk-SLD/EM on EBC,
    each ε-edge-DP with the given total ε. Columns: the picked node ids and the recall against the
    matching non-private top-k. For the ``dpselect demo`` command. ``max_degree`` is PrivTopk's public
    bound on the maximum degree (see :func:`priv_topk`; omitted: the graph's own, with a
    :class:`~dpselect.PrivacyLeakWarning`).

    Parameters
    ----------
    graph : Graph
    k : int, default 3
    epsilon : float, default 1.0
        The total ε of **each** private row (the table makes one release per private row).
    rng : seed, Generator or None
    max_degree : int, optional

    Returns
    -------
    str
        The table, one line per row.

    Examples
    --------
    >>> from dpselect.graphs import from_edges
    >>> table = influential_demo_table(from_edges([0, 0, 0, 1, 4], [1, 2, 3, 2, 5], n_nodes=6), k=2,
    ...                                max_degree=5, rng=0)
    >>> "DP-MOTkIN-Agg" in table and "PrivTopk" in table
    True
    """
    g = check_graph(graph, "influential_demo_table", stacklevel=4)
    if not g.public_nodes:  # warned once above; the draws below run on the same node set and need not repeat it
        g = copy.copy(g)
        g.public_nodes = True
    gen = check_rng(rng)
    U, _ = motkin_objectives(g)
    ref_agg = top_k_aggregate(U, k=k)
    ref_par = top_k_pareto(U, k=k)
    pt = prepare_scores(g, max_degree, "influential_demo_table", stacklevel=5)
    ref_ebc = top_k_ebc(pt, k=k)
    rows: list[tuple[str, str, Any, float]] = [("top-k aggregate (non-private)", "-", ref_agg, 1.0),
            ("top-k Pareto score (non-private)", "-", ref_par, 1.0),
            ("top-k EBC (non-private)", "-", ref_ebc, 1.0)]
    motkin: tuple[tuple[MechanismName, str], ...] = (("local_dampening", "local"), ("exponential", "global"))
    for mech, tag in motkin:
        sel = MotkinSampler(g, "agg", mechanism=mech).sample(k=k, epsilon=epsilon, rng=gen)
        rows.append((f"DP-MOTkIN-Agg {tag}", f"{epsilon:g}", sel, recall(ref_agg, sel)))
        sel = MotkinSampler(g, "pareto", mechanism=mech).sample(k=k, epsilon=epsilon, rng=gen)
        rows.append((f"DP-MOTkIN-Pareto {tag} (C = {metric_c(ref_par, sel, objectives=U):.2f})", f"{epsilon:g}", sel,
                     recall(ref_par, sel)))
    topk: tuple[tuple[MechanismName, str], ...] = (("shifted_local_dampening", "SLD"), ("exponential", "EM"))
    for mech, tag in topk:
        sel = priv_topk(pt, k=k, epsilon=epsilon, mechanism=mech, rng=gen)
        rows.append((f"PrivTopk-{tag} (EBC)", f"{epsilon:g}", sel, recall(ref_ebc, sel)))
    w = max(len(r[0]) for r in rows)
    lines = [f"{'method':<{w}}  {'eps':>5}  {'node ids':<28} recall",
             f"{'-' * w}  {'-' * 5}  {'-' * 28} ------"]
    for name, eps, sel, rec in rows:
        ids = ", ".join(str(int(x)) for x in g.node_ids[sel])
        lines.append(f"{name:<{w}}  {eps:>5}  {ids:<28} {rec:.2f}")
    return "\n".join(lines)
