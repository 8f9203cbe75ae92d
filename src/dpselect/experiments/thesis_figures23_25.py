"""Thesis Figures 23-25: 10-fold cross-validated accuracy of Global/Local/ShiftedLocal DiffPID3.

Setting (thesis Sec. 7.4): depth in {2, 5}, total budget B = ε in {0.01, 0.05, 0.1, 0.5, 1, 2},
NLTCS (Fig. 23), ACS (Fig. 24), Adult (Fig. 25). Alg. 4 budget B/(2(d+1)) per level; numeric attributes
in ``--bins`` equal bins (default 10; the thesis does not give b); ΔIG uses the dataset's published size as
the public bound N (thesis Sec. 7.4: NLTCS 21,574, ACS 47,461, Adult 45,222 records;
:data:`dpselect.datasets.PUBLIC_TABLE_SIZE`), which bounds every training fold. ``--runs R`` repeats the
whole 10-fold cross validation R times with different fold
assignments (default 1, as in the thesis: one 10-fold CV, mean over the 10 folds); the CSV has one row
per (repetition, fold) with ``run = repetition * 10 + fold``. One figure per dataset:
``OUT/thesis-figures23-25-<dataset>.png``.
"""
from __future__ import annotations

import argparse

import numpy as np

from ..trees import diffpid3
from ..datasets import PUBLIC_TABLE_SIZE
from ..vocabulary import MechanismName
from ._common import Reproduction, Result, add_common_arguments, line_panels, markdown_table, parse_int_list
from ._data import load_tabular

__all__ = ["NAME", "DESCRIPTION", "EPSILONS", "DATASETS", "FIGURE", "METHODS", "MECH", "PAPER_TEXT",
    "published_table_size", "REPRODUCTION", "add_arguments", "run"]

NAME = "thesis-figures23-25"
DESCRIPTION = "Thesis Figs. 23-25: 10-fold CV accuracy of Global/Local/ShiftedLocal DiffPID3, depth 2 and 5"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0)
DATASETS = ("nltcs", "acs", "adult")
FIGURE = {"nltcs": 23, "acs": 24, "adult": 25}
METHODS = ("global-diffpid3", "local-diffpid3", "shifted-local-diffpid3")
MECH: dict[str, MechanismName] = {"global-diffpid3": "exponential", "local-diffpid3": "local_dampening",
        "shifted-local-diffpid3": "shifted_local_dampening"}
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


def _data(name):
    if name not in _DATA:
        _DATA[name] = load_tabular(name)
    return _DATA[name]


def published_table_size(name: str) -> int:
    """The public bound N on table sizes for dataset ``name``: its published size (thesis Sec. 7.4).

    Parameters
    ----------
    name : {"nltcs", "acs", "adult"}
        A key of :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`.

    Returns
    -------
    int

    Examples
    --------
    >>> published_table_size("adult")
    45222
    """

    return PUBLIC_TABLE_SIZE[name]


def _task(job) -> list[dict]:
    """One test fold of one repetition: every depth, ε and method."""

    di, name, rep, fold, n_folds, seed, epsilons, depths, bins = job
    data = _data(name)
    train_idx, test_idx = data.folds(n_folds, rng=np.random.default_rng([seed, di, rep]))[fold]
    train, test = data.subset(train_idx), data.subset(test_idx)
    rows = []
    for depth in depths:
        for ei, eps in enumerate(epsilons):
            for mi, method in enumerate(METHODS):
                tree = diffpid3(train, epsilon=eps, depth=depth, mechanism=MECH[method], bins=bins, n_max=published_table_size(name),
                                rng=np.random.default_rng([seed, di, rep, fold, depth, ei, mi]))
                rows.append({"dataset": name, "method": method, "epsilon": eps, "run": rep * n_folds + fold,
                             "metric": "accuracy", "value": tree.accuracy(test), "depth": depth})
    return rows


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce thesis-figures23-25`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce thesis-figures23-25 --help`` lists the flags).

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args([]).runs
    1
    """
    add_common_arguments(parser, runs=1, epsilons=EPSILONS, datasets=DATASETS, jobs=2)
    parser.add_argument("--depths", type=parse_int_list, default=[2, 5], help="comma-separated tree depths (default 2,5)")
    parser.add_argument("--folds", type=int, default=10, help="cross-validation folds (default 10)")
    parser.add_argument("--bins", type=int, default=10, help="bins for numeric attributes (default 10)")


def _jobs(args, names) -> list:
    return [(DATASETS.index(n), n, rep, f, args.folds, args.seed, list(args.epsilons), list(args.depths), args.bins)
            for n in names for rep in range(args.runs) for f in range(args.folds)]


def _settings(res: Result) -> str:
    a = res.args
    return (f"depths {a.depths}, {a.bins} bins for numeric attributes, ε = total budget B (B/(2(d+1)) per level), "
            f"ΔIG with N = the published dataset size ({', '.join(f'{n} {published_table_size(n):,}' for n in res.datasets)}; "
            "thesis Sec. 7.4);")


def _runs_text(res: Result) -> str:
    a = res.args
    return (f"{a.folds}-fold cross validation x {a.runs} repetition(s) (mean over {a.folds * a.runs} test folds per "
            f"cell; thesis: 1 repetition), seed {a.seed}")


def _report(res: Result) -> list[str]:
    summ = res.summary("dataset", "depth", "method", "epsilon")
    lines = []
    for n in res.datasets:
        lines += [f"## {n} (thesis Figure {FIGURE[n]})", "", f"Thesis (figure is a plot only; its text): {PAPER_TEXT[n]}",
                  ""]
        for d in res.args.depths:
            table = [(e, *[summ[(n, d, m, e)][0] for m in METHODS]) for e in res.args.epsilons]
            lines += [f"### depth {d}", "", markdown_table(("ε", *[f"ours {m}" for m in METHODS]), table), ""]
    return lines


def _figures(res: Result, plt) -> dict:
    summ = res.summary("dataset", "depth", "method", "epsilon")
    eps = res.args.epsilons
    return {f"-{n}": line_panels(plt, [(f"{n}, depth {d} (thesis Fig. {FIGURE[n]})",
                                        [(m, eps, [summ[(n, d, m, e)][0] for e in eps], {"marker": mk})
                                         for m, mk in zip(METHODS, "os^")]) for d in res.args.depths],
                                 xlabel="ε (total budget B)", ylabel="accuracy")
            for n in res.datasets}


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION,
    title="Thesis Figures 23-25 (Sec. 7.4): cross-validated accuracy of the DiffPID3 family",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures, settings=_settings,
    runs_text=_runs_text, allowed=DATASETS, extra_columns=("depth",),
    order=lambda args, names: {"dataset": names, "depth": args.depths, "method": METHODS, "epsilon": args.epsilons},
    size=lambda args, names: args.runs * args.folds * len(args.depths) * len(args.epsilons) * len(names),
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
