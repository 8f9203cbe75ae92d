"""What a command writing files needs, shared by ``dpselect demo`` and the reproductions' driver:
refuse an unwritable output directory before any work, and a headless pyplot."""
from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType


def pyplot() -> ModuleType:
    """matplotlib's pyplot with the headless Agg backend (an ImportError without matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_out_dir(out: Path, flag: str = "--out", *, shown: Path | None = None) -> None:
    """Refuse (before any work) an output directory that cannot be written: ``out`` or the nearest of its
    parents that exists is a file, or is not writable. (A run that fails only when it writes its results
    wastes its whole computation.) ``shown``: the path the user gave, when ``out`` is its directory."""
    out = Path(out)
    given = out if shown is None else Path(shown)
    base = out
    while not base.exists() and base.parent != base:
        base = base.parent
    if not base.exists():
        return
    if not base.is_dir():
        if base == given:
            raise SystemExit(f"error: {flag} {given} is a file, not a directory; choose a directory")
        raise SystemExit(f"error: {flag} {given}: {base} is a file, not a directory; choose another {flag}")
    if not os.access(base, os.W_OK | os.X_OK):
        raise SystemExit(f"error: {flag} {given}: {base} is not writable; choose another {flag}")
