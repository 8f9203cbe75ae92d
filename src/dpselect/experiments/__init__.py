"""The papers' tables and figures, reproducible from ``dpselect reproduce NAME``.

Each entry of :data:`REPRODUCTIONS` maps a reproduction name to the module implementing it. A module
describes itself as a :class:`~dpselect.experiments._common.Reproduction` (``REPRODUCTION``: its settings,
paper numbers, per-run function and figure layout) and exports ``DESCRIPTION`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; :mod:`._common` holds the shared driver and the output
contract, :mod:`._data` finds the data (:func:`data_root`, :func:`data_path`: ``DPSELECT_DATA`` or
``../shared/datasets``). :mod:`.binary_demo` (``dpselect binary-demo``) uses the same skeleton.
"""
from __future__ import annotations

from ._data import data_path, data_root

__all__ = ["REPRODUCTIONS", "data_root", "data_path"]

# name -> module (imported lazily so `dpselect --help` stays fast)
REPRODUCTIONS: dict[str, str] = {
    "thesis-figure17": "dpselect.experiments.thesis_figure17",
    "table2": "dpselect.experiments.table2",
    "figure3": "dpselect.experiments.figure3",
    "thesis-figure20": "dpselect.experiments.thesis_figure20",
    "table1": "dpselect.experiments.table1",
    "figure2": "dpselect.experiments.figure2",
    "quantiles": "dpselect.experiments.quantiles",
    "thesis-figures23-25": "dpselect.experiments.thesis_figures23_25",
}
