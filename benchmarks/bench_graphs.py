"""Graph loading, triangles, EBC and one DP-MOTkIN-Pareto-local top-3 selection on Enron and GitHub.

Run: ``python benchmarks/bench_graphs.py`` (writes its section of benchmarks/RESULTS.md).
The record's protocol (``_common.interleaved``): per graph, every timing below in the same 9 rounds, the order
rotated each round; medians, and for the ratio (triangles by ``(A @ A) ∘ A`` against the oriented listing) the
median and worst per-round ratio. The public ``priv_pareto`` selection is shown beside the cached sampler the
reproductions use.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_time, host_header, interleaved, median, record, speedups  # noqa: E402

from dpselect import multiobjective as mo  # noqa: E402
from dpselect.graphs import MotkinSampler, dp_motkin_pareto, motkin_objectives  # noqa: E402
from dpselect_reproductions import load_graph  # noqa: E402
from dpselect.utilities.graph import ebc  # noqa: E402


def _once(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def synthetic_dblp_size(seed: int = 0):
    """A random graph of DBLP's size (317,080 nodes, ~1.05M edges, heavy-tailed degrees) with triadic
    closure for clustering: Chung-Lu edges, then ~35% more edges closing random wedges."""
    from dpselect.graphs import from_edges

    rng = np.random.default_rng(seed)
    n, m = 317_080, 780_000
    w = np.minimum((rng.pareto(2.2, n) + 1) * 2.5, 343)
    p = w / w.sum()
    base = from_edges(rng.choice(n, m, p=p), rng.choice(n, m, p=p), nodes=np.arange(n), warn=False)
    a = base.adjacency
    deg = base.degrees
    rows = rng.choice(n, 400_000, p=deg * (deg > 1) / np.sum(deg * (deg > 1)))
    i = a.indptr[rows] + (rng.random(rows.size) * deg[rows]).astype(np.int64)
    j = a.indptr[rows] + (rng.random(rows.size) * deg[rows]).astype(np.int64)
    e = base.edges()
    u = np.concatenate([e[:, 0], a.indices[i]])
    v = np.concatenate([e[:, 1], a.indices[j]])
    return from_edges(u, v, nodes=np.arange(n), name="synthetic DBLP-size", warn=False)


def main() -> None:
    rows = []
    for name in ("enron", "github"):
        g = load_graph(name)
        a = g.adjacency.astype(np.int64)

        def tri(g=g):
            g._triangles = None
            return g.triangles()

        U, sfs = motkin_objectives(g)

        def with_statistics(g=g):
            g._triangles = None  # recompute triangles, degrees' objectives and δ's
            return dp_motkin_pareto(g, k=3, epsilon=1.0, mechanism="local_dampening", rng=0)

        s = MotkinSampler(g, "pareto", mechanism="local_dampening")
        t_first, _ = _once(lambda s=s: s.scores(()))
        rng = np.random.default_rng(0)
        t = interleaved({
            "load": lambda name=name: load_graph(name),
            "aa": lambda a=a: np.asarray((a @ a).multiply(a).sum(axis=1)),
            "tri": tri,
            "ebc": lambda g=g: ebc(g),
            "sel": lambda U=U, sfs=sfs: mo.priv_pareto(U, epsilon=1.0, sensitivities=sfs, k=3, rng=0),
            "stats": with_statistics,
            "e2e": lambda name=name: dp_motkin_pareto(load_graph(name), k=3, epsilon=1.0,
                                                      mechanism="local_dampening", rng=0),
            "cached": lambda s=s, rng=rng: s.sample(k=3, epsilon=1.0, rng=rng),
        })
        rows.append((name, g.n_nodes, g.n_edges, g.max_degree, t, t_first))
    syn = synthetic_dblp_size()

    def syn_select():
        syn._triangles = None
        return dp_motkin_pareto(syn, k=10, epsilon=1.0, mechanism="local_dampening", rng=0)

    t_syn = interleaved({
        "tri": lambda: (setattr(syn, "_triangles", None), syn.triangles()),
        "ebc": lambda: ebc(syn),
        "sel": syn_select,
    })
    t_tri_syn, t_ebc_syn, t_sel_syn = (median(t_syn[k]) for k in ("tri", "ebc", "sel"))
    wall = "not yet run"
    md_path = Path(__file__).resolve().parents[1] / "results" / "table2" / "table2.md"
    if md_path.exists():
        m = re.search(r"Wall time (\d+) s", md_path.read_text())
        runs = re.search(r"(\d+) runs per cell", md_path.read_text())
        if m:
            wall = f"{m.group(1)} s ({runs.group(1) if runs else '?'} runs per cell, both egocentric-density variants)"
    lines = [
        "## Graphs and influential nodes (bench_graphs.py)", "",
        host_header(), "",
        "Median wall times over 9 interleaved rounds per graph (every column in every round); `ratio`: per-round "
        "(A@A)∘A time over the listing's time in the same round, median and worst round. Shared 2-core machine "
        "(other helpers' jobs running). Re-run: `python benchmarks/bench_graphs.py` (a few minutes).", "",
        "| graph | nodes | edges | max deg | load | triangles (A@A)∘A | triangles listing | ratio (median / worst) "
        "| EBC all nodes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, nodes, edges, dmax, t, _ in rows:
        med, worst = speedups(t, "aa", "tri")
        lines.append(f"| {name} | {nodes:,} | {edges:,} | {dmax:,} | {fmt_time(median(t['load']))} | "
                     f"{fmt_time(median(t['aa']))} | {fmt_time(median(t['tri']))} | {med:.0f}x / {worst:.0f}x | "
                     f"{fmt_time(median(t['ebc']))} |")
    lines += [
        "", "One DP-MOTkIN-Pareto-local top-3 selection (ε = 1; the paper's Cython code: ~770 s Enron, ~830 s GitHub "
        "on one core of this machine); `first scores` timed once:", "",
        "| graph | priv_pareto, statistics given | dp_motkin_pareto incl. statistics | incl. reading the file | "
        "sampler: first scores | sampler: one cached top-3 draw |",
        "|---|---|---|---|---|---|",
    ]
    for name, _, _, _, t, t_first in rows:
        lines.append(f"| {name} | {fmt_time(median(t['sel']))} | {fmt_time(median(t['stats']))} | "
                     f"{fmt_time(median(t['e2e']))} | {fmt_time(t_first)} | {fmt_time(median(t['cached']))} |")
    lines += ["", f"DBLP is not available offline; a synthetic graph of its size ({syn.n_nodes:,} nodes, "
              f"{syn.n_edges:,} edges, max degree {syn.max_degree}, {int(syn.triangles().sum()) // 3:,} triangles; "
              f"Chung-Lu plus triadic closure), medians of 9 interleaved rounds: triangles {fmt_time(t_tri_syn)}, EBC of "
              f"all nodes {fmt_time(t_ebc_syn)}, one DP-MOTkIN-Pareto-local top-10 selection incl. statistics "
              f"{fmt_time(t_sel_syn)}."]
    lines += ["", f"Full `dpselect-reproduce table2` (paper settings, 500 runs): wall time {wall}.", ""]
    record("graphs", "\n".join(lines))


if __name__ == "__main__":
    main()
