"""The papers' tables and figures, reproducible with ``dpselect-reproduce NAME`` (``python -m dpselect_reproductions``).

Each entry of :data:`REPRODUCTIONS` maps a command name to the module implementing it. A module describes
itself as a :class:`~dpselect_reproductions._common.Reproduction` (``REPRODUCTION``: its settings, paper
numbers, per-run function and figure layout) and exports ``DESCRIPTION`` (one line), ``add_arguments(parser)``
and ``run(args) -> int``; :mod:`._common` holds the shared driver and the output contract, :mod:`._data`
loads the papers' datasets by name (:func:`load_tabular`, :func:`load_graph`). This distribution depends on
``dpselect``; the library never imports it.
"""
from __future__ import annotations

from ._data import load_graph, load_tabular

__all__ = ["REPRODUCTIONS", "load_graph", "load_tabular", "main"]

# name -> module (imported when the command line is built)
REPRODUCTIONS: dict[str, str] = {
    "thesis-figure17": "dpselect_reproductions.thesis_figure17",
    "table2": "dpselect_reproductions.table2",
    "figure3": "dpselect_reproductions.figure3",
    "thesis-figure20": "dpselect_reproductions.thesis_figure20",
    "table1": "dpselect_reproductions.table1",
    "figure2": "dpselect_reproductions.figure2",
    "quantiles": "dpselect_reproductions.quantiles",
    "thesis-figures23-25": "dpselect_reproductions.thesis_figures23_25",
    "binary-demo": "dpselect_reproductions.binary_demo",
}


def main(argv: list[str] | None = None) -> int:
    """Run ``dpselect-reproduce NAME [options]``; returns the exit status (0 success, 2 user error, 130 interrupted).

    The command line of :func:`dpselect.cli.main` over :data:`REPRODUCTIONS`: a user error is one line on
    stderr, ``dpselect-reproduce NAME: error: ...`` (``DPSELECT_TRACEBACK=1`` for the traceback).

    Examples
    --------
    >>> main(["table2", "--runs", "0"])     # refused before any work starts
    2
    """
    from dpselect.cli import main as cli_main

    return cli_main(argv, prog="dpselect-reproduce", commands=REPRODUCTIONS,
                    description="Reproduce a table or figure of the papers.")
