"""Where the real data lives, and the one rule for finding it.

The project's data sits in ``shared/datasets/`` beside the project checkout (``../shared/datasets``
from the project root). Loaders accept any explicit path too; ``DPSELECT_DATA`` overrides the default
root. Files are read in place and never copied into the project.

It also records the **public facts** about these datasets that the papers' privacy proofs use as public
parameters, with their sources, so that the reproductions pass them explicitly instead of reading them
from the (private, in the papers' model) records.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["dataset_root", "dataset_path", "PUBLIC_GRAPH_MAX_DEGREE", "PUBLIC_TABLE_SIZE"]

#: Public bound D on the maximum degree of the SNAP graphs, for ΔEBC and δ^EBC (edge-DP): the values the
#: thesis (Sec. 6.5, "Datasets", Δ(G)) states and uses for Enron, DBLP and GitHub. Each equals the
#: published graph's maximum degree (SNAP's statistics), so it bounds every degree of those files.
PUBLIC_GRAPH_MAX_DEGREE: dict[str, int] = {"enron": 1383, "dblp": 343, "github": 9458}

#: Public bound N on the number of records, for ΔIG = log2(N + 1) + 1/ln 2 (DiffPID3): the dataset sizes
#: the thesis (Sec. 7.4, "Datasets") and the paper (Sec. 6.3) publish -- NLTCS 21,574 individuals, ACS
#: 47,461 rows, Adult 45,222 records without missing values. A training fold is a subset, so N bounds it.
PUBLIC_TABLE_SIZE: dict[str, int] = {"nltcs": 21574, "acs": 47461, "adult": 45222}


def dataset_root() -> Path:
    """The directory holding ``tabular/``, ``graphs/`` and ``dpbench1d/``.

    Looked up in this order: ``$DPSELECT_DATA``; ``shared/datasets`` in the current directory or any
    parent; ``shared/datasets`` in a parent of the installed package (an editable install in a checkout).
    """
    env = os.environ.get("DPSELECT_DATA")
    if env:
        return Path(env).expanduser()
    starts = [Path.cwd(), Path(__file__).resolve().parent]
    for start in starts:
        for base in [start, *start.parents]:
            for cand in (base / "shared" / "datasets", base.parent / "shared" / "datasets"):
                if cand.is_dir():
                    return cand
    raise FileNotFoundError(
        "cannot find the datasets directory: set DPSELECT_DATA to it, or run from a checkout that has "
        "../shared/datasets beside it"
    )


def dataset_path(*parts: str) -> Path:
    """Path of a file under :func:`dataset_root`; ``FileNotFoundError`` naming it when absent."""
    path = dataset_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"dataset file not found: {path}")
    return path
