"""Where the real data lives, and the one rule for finding it.

The project's data sits in ``shared/datasets/`` beside the project checkout (``../shared/datasets``
from the project root). Loaders accept any explicit path too; ``DPSELECT_DATA`` overrides the default
root. Files are read in place and never copied into the project.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["dataset_root", "dataset_path"]


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
