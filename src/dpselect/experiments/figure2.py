"""Paper Figure 2: u_agg = 3·TPR + 2·TNR on held-out data for DP-MOET-Agg (global, local), NODP-MOET-Agg
and LocalDiffPID3.

Setting (paper Sec. 6.4): p = 100, s = 20, k = 2, d = 3, d_max = 5, o = 1, w = (3, 2),
ε in {0.01, 0.05, 0.1, 0.5, 1, 2}, NLTCS / Adult / ACS. The paper states neither the split nor the number
of runs nor LocalDiffPID3's depth: we use a random 70/30 train/test split per run (``--test-fraction``),
``--runs`` runs (default 50) and LocalDiffPID3 of depth ``--diffpid3-depth`` (default 5 = d_max) with
10 bins for numeric attributes and, as its public size bound N for ΔIG, the dataset's published size (paper
Sec. 6.3 / thesis Sec. 7.4: NLTCS 21,574, Adult 45,222, ACS 47,461; :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`).
Adult is scaled by its public schema (:data:`dpselect.tabular.ADULT_NUMERIC_BOUNDS`). NODP-MOET-Agg does
not depend on ε: it runs once per run and its value is written under every ε. Budget convention of DP-MOET:
``--budget`` (default "even").
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import add_common_arguments, check_datasets, markdown_table, pyplot, run_jobs, summarise, write_csv

NAME = "figure2"
DESCRIPTION = "Paper Fig. 2: held-out 3·TPR + 2·TNR of DP-MOET-Agg global/local, NODP-MOET-Agg, LocalDiffPID3"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0)
DATASETS = ("nltcs", "adult", "acs")
METHODS = ("agg-global", "agg-local", "nodp-agg", "local-diffpid3")
WEIGHTS = (3.0, 2.0)
PAPER_TEXT = ("DP-MOET-Agg_local reaches a higher fitness than the other private methods and the fitness of "
              "NODP-MOET-Agg at ε = 0.5; it improves on LocalDiffPID3 by 21% on Adult and 6% on NLTCS; on ACS "
              "LocalDiffPID3 is better for ε > 0.5 while DP-MOET-Agg_local is better for ε < 0.5.")

_DATA: dict = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, runs=50, epsilons=EPSILONS, datasets=DATASETS)
    parser.add_argument("--budget", choices=("even", "paper-code"), default="even",
                        help="DP-MOET privacy budget split (default even)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--test-fraction", type=float, default=0.3, help="held-out share (default 0.3)")
    parser.add_argument("--diffpid3-depth", type=int, default=5, help="LocalDiffPID3 depth (default 5)")
    for flag, default, what in (("--population", 100, "p"), ("--selection", 20, "s"), ("--generations", 2, "k"),
                                ("--depth", 3, "d"), ("--max-depth", 5, "d_max"), ("--output", 1, "o")):
        parser.add_argument(flag, type=int, default=default, help=f"{what} (default {default})")


def _data(name):
    if name not in _DATA:
        from ..apps.dpmoet import CompressedTable
        from ..tabular import load_tabular
        data = load_tabular(name)
        _DATA[name] = (data, CompressedTable.from_data(data))
    return _DATA[name]


def uagg(tree, test) -> float:
    from ..trees import predict_many

    pred = predict_many([tree], test.X)[0].astype(bool)
    y = test.y.astype(bool)
    return WEIGHTS[0] * float(pred[y].mean()) + WEIGHTS[1] * float((~pred[~y]).mean())


def uagg_diffpid3(tree, test) -> float:
    pred = tree.predict(test).astype(bool)
    y = test.y.astype(bool)
    return WEIGHTS[0] * float(pred[y].mean()) + WEIGHTS[1] * float((~pred[~y]).mean())


def _task(job) -> list[dict]:
    from ..apps.diffpid3 import local_diffpid3
    from ..apps.dpmoet import dp_moet, nodp_moet
    from ..datasets import PUBLIC_TABLE_SIZE

    di, name, run_, seed, epsilons, settings, test_fraction, pid3_depth = job
    data, _ = _data(name)
    train, test = data.train_test_split(test_fraction, rng=np.random.default_rng([seed, di, run_, 99]))
    rows = []
    from ..apps.dpmoet import CompressedTable

    comp = CompressedTable.from_data(train)  # once per run: shared by NODP and every private run
    ref = nodp_moet(train, approach="agg", weights=WEIGHTS, rng=np.random.default_rng([seed, di, run_, 0]),
                    compressed=comp, **settings)
    v_ref = uagg(ref.trees[0], test)
    for ei, eps in enumerate(epsilons):
        vals = {"nodp-agg": v_ref}
        for mi, method in enumerate(("agg-global", "agg-local")):
            res = dp_moet(train, eps, approach="agg", sensitivity=method.split("-")[1], weights=WEIGHTS,
                          rng=np.random.default_rng([seed, di, run_, 1 + mi, ei]), compressed=comp, **settings)
            vals[method] = uagg(res.trees[0], test)
        tree = local_diffpid3(train, eps, pid3_depth, n_max=PUBLIC_TABLE_SIZE[name],
                              rng=np.random.default_rng([seed, di, run_, 3, ei]))
        vals["local-diffpid3"] = uagg_diffpid3(tree, test)
        for method in METHODS:
            rows.append({"dataset": name, "method": method, "epsilon": eps, "run": run_, "metric": "uagg",
                         "value": vals[method], "budget": settings["budget"]})
    return rows


def run(args: argparse.Namespace) -> int:
    names = check_datasets(args.datasets, DATASETS)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    settings = dict(population=args.population, selection=args.selection, generations=args.generations,
                    depth=args.depth, max_depth=args.max_depth, output=args.output, budget=args.budget)
    jobs = [(DATASETS.index(n), n, r, args.seed, list(args.epsilons), settings, args.test_fraction,
             args.diffpid3_depth) for n in names for r in range(args.runs)]
    rows, wall = run_jobs(_task, jobs, NAME, processes=args.jobs, quiet=args.quiet)
    order = {(n, m, e): i for i, (n, m, e) in enumerate((n, m, e) for n in names for m in METHODS for e in args.epsilons)}
    rows.sort(key=lambda r: (order[(r["dataset"], r["method"], r["epsilon"])], r["run"]))
    write_csv(out / f"{NAME}.csv", rows, extra_columns=("budget",))
    summ = summarise(rows, keys=("dataset", "method", "epsilon"))
    s = settings
    lines = ["# Figure 2 (paper Sec. 6.4): held-out u_agg = 3·TPR + 2·TNR (max 5)", "",
             f"Settings: p = {s['population']}, s = {s['selection']}, k = {s['generations']}, d = {s['depth']}, "
             f"d_max = {s['max_depth']}, o = {s['output']}; DP-MOET budget split '{s['budget']}'; "
             f"LocalDiffPID3 depth {args.diffpid3_depth}, 10 bins; random {1 - args.test_fraction:.0%}/"
             f"{args.test_fraction:.0%} train/test split per run; {args.runs} runs per cell, seed {args.seed}, "
             f"{args.jobs} processes. Wall time {wall:.0f} s.", "",
             f"Paper (Fig. 2 is a plot only; its text): {PAPER_TEXT}", ""]
    for n in names:
        table = [(e, *[summ[(n, m, e)][0] for m in METHODS]) for e in args.epsilons]
        lines += [f"## {n}", "", markdown_table(("ε", *[f"ours {m}" for m in METHODS]), table), ""]
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
    for ax, n in zip(axes[0], names):
        for method, style in zip(METHODS, ("o-", "s-", "k--", "^-")):
            ax.plot(args.epsilons, [summ[(n, method, e)][0] for e in args.epsilons], style, label=method)
        ax.set_xscale("log")
        ax.set_title(n)
        ax.set_xlabel("ε")
        ax.set_ylabel("held-out 3·TPR + 2·TNR")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{NAME}.png", dpi=120)
    plt.close(fig)
    print(f"wrote {out / (NAME + '.csv')}, {out / (NAME + '.md')}, {out / (NAME + '.png')} ({wall:.0f} s)")
    return 0
