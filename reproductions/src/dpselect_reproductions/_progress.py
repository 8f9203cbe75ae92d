"""A minimal progress bar for long CLI runs (stderr, no dependency).

Kept hand-written rather than replaced by tqdm or rich: its one user is the reproduction
driver (``dpselect-reproduce``), which needs a bar on a terminal and, in logs of background runs, one
line per 5% rather than a carriage-return redraw per step; this class does both in 50 lines. tqdm would
be a new dependency of the core (or an optional one that changes the output by environment) for one
bar, and rich a much larger one; neither adds what the driver needs.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Context manager printing ``label [####    ] i/n  elapsed  eta`` to stderr.

    Silent when ``enabled`` is False or stderr is not a terminal and ``force`` is False
    (so logs of background runs get one line per 5% instead of a redraw per step).
    """

    def __init__(self, total: int, label: str = "", *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self._t0 = time.perf_counter()
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_pct = -1

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._draw(final=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            self._draw()

    def _draw(self, final: bool = False) -> None:
        frac = min(self.done / self.total, 1.0)
        pct = int(frac * 100)
        if not self._tty and not final and pct // 5 == self._last_pct // 5:
            return
        self._last_pct = pct
        el = time.perf_counter() - self._t0
        eta = el / frac - el if frac > 0 else float("nan")
        bar = "#" * int(frac * 30)
        line = f"{self.label} [{bar:<30}] {self.done}/{self.total} {el:7.1f}s eta {eta:7.1f}s"
        if self._tty:
            self.stream.write("\r" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
