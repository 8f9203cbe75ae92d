"""Paper Table 1: mean metric C(NODP-MOET-Pareto output, DP-MOET-Pareto output), global and local.

Setting (paper Sec. 6.3): p = 30, s = 3, k = 3 generations, d = 4, d_max = 10, o = 3, objectives TPR
and TNR on the whole table, ε in {0.01, 0.05, 0.1, 0.5, 1, 2, 5}, 500 runs, NLTCS / Adult / ACS. In
each run one NODP-MOET-Pareto output X' (its own seed, shared by both methods and every ε of that run)
is compared with one DP-MOET-Pareto output X'' per method and ε: C(X', X'') = share of X'' strictly
dominated by a member of X'. Budget convention: ``--budget`` (default "even": ε split over the k + 1
selection rounds and their picks; "paper-code": ε/k per round, k − 1 generations). Runs are spread over
``--jobs`` processes.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import add_common_arguments, check_datasets, markdown_table, pyplot, run_jobs, summarise, write_csv

NAME = "table1"
DESCRIPTION = "Paper Table 1: metric C of DP-MOET-Pareto global/local against NODP-MOET-Pareto (NLTCS, Adult, ACS)"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0)
DATASETS = ("nltcs", "adult", "acs")
METHODS = ("pareto-global", "pareto-local")
# paper Table 1: (MO_g, MO_l) per dataset and ε
PAPER = {
    "nltcs": {0.01: (0.48, 0.45), 0.05: (0.48, 0.35), 0.1: (0.48, 0.25), 0.5: (0.48, 0.13), 1.0: (0.48, 0.12),
              2.0: (0.48, 0.11), 5.0: (0.48, 0.10)},
    "adult": {0.01: (0.21, 0.18), 0.05: (0.20, 0.14), 0.1: (0.22, 0.10), 0.5: (0.19, 0.07), 1.0: (0.19, 0.08),
              2.0: (0.21, 0.07), 5.0: (0.20, 0.08)},
    "acs": {0.01: (0.28, 0.25), 0.05: (0.28, 0.19), 0.1: (0.28, 0.15), 0.5: (0.28, 0.12), 1.0: (0.28, 0.11),
            2.0: (0.28, 0.10), 5.0: (0.28, 0.10)},
}

_DATA: dict = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, runs=500, epsilons=EPSILONS, datasets=DATASETS)
    parser.add_argument("--budget", choices=("even", "paper-code"), default="even",
                        help="privacy budget split (default even; see dpselect.apps.dpmoet)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    for flag, default, what in (("--population", 30, "p"), ("--selection", 3, "s"), ("--generations", 3, "k"),
                                ("--depth", 4, "d"), ("--max-depth", 10, "d_max"), ("--output", 3, "o")):
        parser.add_argument(flag, type=int, default=default, help=f"{what} (default {default})")


def _settings(args) -> dict:
    return dict(population=args.population, selection=args.selection, generations=args.generations,
                depth=args.depth, max_depth=args.max_depth, output=args.output, budget=args.budget)


def _data(name):
    if name not in _DATA:
        from ..apps.dpmoet import CompressedTable
        from ..tabular import load_tabular
        data = load_tabular(name)
        _DATA[name] = (data, CompressedTable.from_data(data))
    return _DATA[name]


def _task(job) -> list[dict]:
    from ..apps.dpmoet import dp_moet, metric_c, nodp_moet

    di, name, run_, seed, epsilons, settings = job
    data, comp = _data(name)
    ref = nodp_moet(data, approach="pareto", rng=np.random.default_rng([seed, di, run_, 0]), compressed=comp,
                    **settings)
    rows = []
    for ei, eps in enumerate(epsilons):
        for mi, method in enumerate(METHODS):
            res = dp_moet(data, eps, approach="pareto", sensitivity=method.split("-")[1],
                          rng=np.random.default_rng([seed, di, run_, 1 + mi, ei]), compressed=comp, **settings)
            rows.append({"dataset": name, "method": method, "epsilon": eps, "run": run_, "metric": "C",
                         "value": metric_c(ref.objectives, res.objectives), "budget": settings["budget"]})
    return rows


def run(args: argparse.Namespace) -> int:
    names = check_datasets(args.datasets, DATASETS)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    settings = _settings(args)
    jobs = [(DATASETS.index(n), n, r, args.seed, list(args.epsilons), settings) for n in names for r in range(args.runs)]
    rows, wall = run_jobs(_task, jobs, NAME, processes=args.jobs, quiet=args.quiet)
    order = {(n, m, e): i for i, (n, m, e) in enumerate((n, m, e) for n in names for m in METHODS for e in args.epsilons)}
    rows.sort(key=lambda r: (order[(r["dataset"], r["method"], r["epsilon"])], r["run"]))
    write_csv(out / f"{NAME}.csv", rows, extra_columns=("budget",))
    summ = summarise(rows, keys=("dataset", "method", "epsilon"))
    s = settings
    lines = ["# Table 1 (paper Sec. 6.3): mean metric C(NODP-MOET-Pareto, DP-MOET-Pareto)", "",
             f"Settings: p = {s['population']}, s = {s['selection']}, k = {s['generations']}, d = {s['depth']}, "
             f"d_max = {s['max_depth']}, o = {s['output']}; objectives TPR and TNR on the whole table; budget split "
             f"'{s['budget']}' (see dpselect.apps.dpmoet); C uses strict domination; {args.runs} runs per cell "
             f"(paper: 500), seed {args.seed}, {args.jobs} processes. Wall time {wall:.0f} s.", ""]
    for n in names:
        table = []
        for e in args.epsilons:
            g = summ[(n, "pareto-global", e)]
            loc = summ[(n, "pareto-local", e)]
            pg, pl = PAPER.get(n, {}).get(e, (float("nan"), float("nan")))
            table.append((e, g[0], pg, loc[0], pl, f"{g[1] / np.sqrt(g[2]):.3f} / {loc[1] / np.sqrt(loc[2]):.3f}"))
        lines += [f"## {n}", "", markdown_table(("ε", "ours MO_g", "paper MO_g", "ours MO_l", "paper MO_l",
                                                  "std. err. g / l"), table), ""]
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
    for ax, n in zip(axes[0], names):
        for method, style in zip(METHODS, ("o-", "s-")):
            ax.plot(args.epsilons, [summ[(n, method, e)][0] for e in args.epsilons], style, label=f"ours {method}")
        for j, method in enumerate(METHODS):
            pts = [(e, PAPER[n][e][j]) for e in args.epsilons if e in PAPER.get(n, {})]
            if pts:
                ax.plot(*zip(*pts), "x--", alpha=0.6, label=f"paper {method}")
        ax.set_xscale("log")
        ax.set_title(n)
        ax.set_xlabel("ε")
        ax.set_ylabel("mean C (lower is better)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{NAME}.png", dpi=120)
    plt.close(fig)
    print(f"wrote {out / (NAME + '.csv')}, {out / (NAME + '.md')}, {out / (NAME + '.png')} ({wall:.0f} s)")
    return 0
