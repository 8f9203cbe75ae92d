"""Thesis Figures 23-25: 10-fold cross-validated accuracy of Global/Local/ShiftedLocal DiffPID3.

Setting (thesis Sec. 7.4): depth in {2, 5}, total budget B = ε in {0.01, 0.05, 0.1, 0.5, 1, 2},
NLTCS (Fig. 23), ACS (Fig. 24), Adult (Fig. 25). Alg. 4 budget B/(2(d+1)) per level; numeric attributes
in ``--bins`` equal bins (default 10; the thesis does not give b); ΔIG uses the dataset's published size as
the public bound N (thesis Sec. 7.4: NLTCS 21,574, ACS 47,461, Adult 45,222 records;
:data:`dpselect.datasets.PUBLIC_TABLE_SIZE`), which bounds every training fold. ``--runs R`` repeats the
whole 10-fold cross validation R times with different fold
assignments (default 1, as in the thesis: one 10-fold CV, mean over the 10 folds); the CSV has one row
per (repetition, fold) with ``run = repetition * 10 + fold``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._common import add_common_arguments, check_datasets, markdown_table, pyplot, run_jobs, summarise, write_csv

NAME = "thesis-figures23-25"
DESCRIPTION = "Thesis Figs. 23-25: 10-fold CV accuracy of Global/Local/ShiftedLocal DiffPID3, depth 2 and 5"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0)
DATASETS = ("nltcs", "acs", "adult")
FIGURE = {"nltcs": 23, "acs": 24, "adult": 25}
METHODS = ("global-diffpid3", "local-diffpid3", "shifted-local-diffpid3")
MECH = {"global-diffpid3": "global", "local-diffpid3": "local", "shifted-local-diffpid3": "shifted"}
PAPER_TEXT = {
    "nltcs": "LocalDiffPID3 improves on GlobalDiffPID3 for almost every budget, up to 5%; ShiftedLocalDiffPID3 "
             "adds up to 1% over LocalDiffPID3.",
    "acs": "Inversion problem: at depth 2 LocalDiffPID3 picks the 1st and 3rd best attributes as B grows "
           "(sub-optimal); ShiftedLocalDiffPID3 suffers less at depth 5 and improves on GlobalDiffPID3 by up "
           "to 8%.",
    "adult": "LocalDiffPID3 improves only a little over GlobalDiffPID3; ShiftedLocalDiffPID3 improves on "
             "GlobalDiffPID3 by up to 4%.",
}

_DATA: dict = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser, runs=1, epsilons=EPSILONS, datasets=DATASETS)
    parser.add_argument("--depths", type=lambda s: [int(x) for x in s.split(",")], default=[2, 5],
                        help="comma-separated tree depths (default 2,5)")
    parser.add_argument("--folds", type=int, default=10, help="cross-validation folds (default 10)")
    parser.add_argument("--bins", type=int, default=10, help="bins for numeric attributes (default 10)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")


def _data(name):
    if name not in _DATA:
        from ..tabular import load_tabular
        _DATA[name] = load_tabular(name)
    return _DATA[name]


def public_n_max(name: str) -> int:
    """The public bound N on table sizes for dataset ``name``: its published size (thesis Sec. 7.4)."""
    from ..datasets import PUBLIC_TABLE_SIZE

    return PUBLIC_TABLE_SIZE[name]


def _task(job) -> list[dict]:
    from ..apps.diffpid3 import diffpid3

    di, name, rep, fold, n_folds, seed, epsilons, depths, bins = job
    data = _data(name)
    train_idx, test_idx = data.folds(n_folds, rng=np.random.default_rng([seed, di, rep]))[fold]
    train, test = data.subset(train_idx), data.subset(test_idx)
    rows = []
    for depth in depths:
        for ei, eps in enumerate(epsilons):
            for mi, method in enumerate(METHODS):
                tree = diffpid3(train, eps, depth, mechanism=MECH[method], bins=bins, n_max=public_n_max(name),
                                rng=np.random.default_rng([seed, di, rep, fold, depth, ei, mi]))
                rows.append({"dataset": name, "method": method, "epsilon": eps, "run": rep * n_folds + fold,
                             "metric": "accuracy", "value": tree.accuracy(test), "depth": depth})
    return rows


def run(args: argparse.Namespace) -> int:
    names = check_datasets(args.datasets, DATASETS)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(DATASETS.index(n), n, rep, f, args.folds, args.seed, list(args.epsilons), list(args.depths), args.bins)
            for n in names for rep in range(args.runs) for f in range(args.folds)]
    rows, wall = run_jobs(_task, jobs, NAME, processes=args.jobs, quiet=args.quiet)
    key = {(n, d, m, e): i for i, (n, d, m, e) in enumerate(
        (n, d, m, e) for n in names for d in args.depths for m in METHODS for e in args.epsilons)}
    rows.sort(key=lambda r: (key[(r["dataset"], r["depth"], r["method"], r["epsilon"])], r["run"]))
    write_csv(out / f"{NAME}.csv", rows, extra_columns=("depth",))
    summ = summarise(rows, keys=("dataset", "depth", "method", "epsilon"))
    lines = ["# Thesis Figures 23-25 (Sec. 7.4): cross-validated accuracy of the DiffPID3 family", "",
             f"Settings: {args.folds}-fold cross validation x {args.runs} repetition(s) (mean over "
             f"{args.folds * args.runs} test folds per cell), depths {args.depths}, {args.bins} bins for numeric "
             f"attributes, ε = total budget B (B/(2(d+1)) per level), ΔIG with N = the published dataset size "
             f"({', '.join(f'{n} {public_n_max(n):,}' for n in names)}; thesis Sec. 7.4); seed "
             f"{args.seed}, {args.jobs} processes. Wall time {wall:.0f} s.", ""]
    for n in names:
        lines += [f"## {n} (thesis Figure {FIGURE[n]})", "", f"Thesis (figure is a plot only; its text): {PAPER_TEXT[n]}", ""]
        for d in args.depths:
            table = [(e, *[summ[(n, d, m, e)][0] for m in METHODS]) for e in args.epsilons]
            lines += [f"### depth {d}", "", markdown_table(("ε", *[f"ours {m}" for m in METHODS]), table), ""]
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")
    plt = pyplot()
    for n in names:
        fig, axes = plt.subplots(1, len(args.depths), figsize=(4.2 * len(args.depths), 3.4), squeeze=False)
        for ax, d in zip(axes[0], args.depths):
            for method, style in zip(METHODS, ("o-", "s-", "^-")):
                ax.plot(args.epsilons, [summ[(n, d, method, e)][0] for e in args.epsilons], style, label=method)
            ax.set_xscale("log")
            ax.set_title(f"{n}, depth {d} (thesis Fig. {FIGURE[n]})")
            ax.set_xlabel("ε (total budget B)")
            ax.set_ylabel("accuracy")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"{NAME}-{n}.png", dpi=120)
        plt.close(fig)
    print(f"wrote {out / (NAME + '.csv')}, {out / (NAME + '.md')} and PNGs ({wall:.0f} s)")
    return 0
