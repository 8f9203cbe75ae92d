"""How many threads the numpy/scipy kernels that release the GIL may use (EBC's block products, the
triangle listing's wedge checks)."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ._validation import check_int

T = TypeVar("T")
R = TypeVar("R")

#: Cap of the default: beyond a few threads these memory-bound kernels stop scaling.
MAX_DEFAULT_THREADS = 4


def resolve_threads(n_threads: int | None) -> int:
    """``n_threads`` checked (an int >= 1), or the default: the machine's cores, at most 4."""
    if n_threads is None:
        return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_THREADS))
    return check_int(n_threads, "n_threads", minimum=1)


def map_in_threads(fn: Callable[[T], R], items: Sequence[T], n_threads: int) -> list[R]:
    """``[fn(x) for x in items]``, computed by up to ``n_threads`` threads, results in the order of items."""
    if n_threads <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(min(n_threads, len(items))) as pool:
        return list(pool.map(fn, items))
