"""Dask benchmarks (issue 14): selection and frequent items beyond one process's comfortable memory.

1. Top-10 exponential mechanism over 10^9 candidates generated lazily in chunks of 10^7 (8 GB of
   float64 utilities, never materialised) on a ``distributed.LocalCluster`` of 2 worker processes
   (1 thread each), against the in-memory ``dpselect.exponential`` on 10^8 candidates (generated the
   same way, in one array) in the same run. Target: within 3x per candidate.
2. Private top-10 frequent items over 10^8 (user, item) rows (10^7 users, 10^5 items with a Zipf law,
   each user bounded to c = 5 distinct items), generated lazily in partitions of 10^6 rows, against the
   same rule in memory (pandas/numpy on one frame of 10^7 rows, then ``dpselect.exponential``).

Wall times are for the whole computation, generation included; "peak RSS" is the maximum resident set
of each worker process (``getrusage``) on a fresh cluster, and of a fresh process for the in-memory
baselines. Run: ``nice -n 5 python benchmarks/bench_dask.py`` (``--quick`` for a 100x smaller smoke run).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import resource
import time
import warnings

import numpy as np

from _common import machine, record

N_ITEMS = 100_000
N_USERS = 10_000_000
CONTRIB = 5


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cluster():
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               memory_limit="8GiB", silence_logs=50)
        return cluster, Client(cluster)


# -- 1. exponential mechanism --------------------------------------------------------------------------
def _em_in_memory(n: int, chunk: int) -> tuple[float, float, float]:
    import dpselect

    t0 = time.perf_counter()
    u = np.random.default_rng(0).standard_normal(n) * 100.0
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, k=10, rng=0)
    t_sel = time.perf_counter() - t0
    return t_gen, t_sel, _rss_mb()


def em(n_big: int, n_mem: int, chunk: int) -> str:
    import dask.array as da

    import dpselect.dask as D

    cluster, client = _cluster()
    try:
        u = da.random.default_rng(0).standard_normal(n_big, chunks=chunk) * 100.0
        load = [_load()]
        t0 = time.perf_counter()
        picks = D.exponential(u, epsilon=1.0, sensitivity=1.0, k=10, rng=0)
        t_dask = time.perf_counter() - t0
        load.append(_load())
        peaks = sorted(client.run(_rss_mb).values())
    finally:
        client.close()
        cluster.close()
    assert len(set(picks.tolist())) == 10
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        t_gen, t_sel, rss_mem = ex.submit(_em_in_memory, n_mem, chunk).result()
    load.append(_load())
    per_dask = t_dask / n_big
    per_mem = (t_gen + t_sel) / n_mem
    per_sel = t_sel / n_mem
    return "\n".join([
        f"### Top-10 exponential mechanism: {n_big:.0e} candidates on dask vs {n_mem:.0e} in memory",
        "",
        "| run | candidates | wall time | per candidate | peak RSS |",
        "|---|---|---|---|---|",
        f"| dask, 2 workers x 1 thread, chunks of {chunk:.0e} (lazy generation + selection) | {n_big:.0e} | "
        f"{t_dask:.1f} s | {per_dask * 1e9:.1f} ns | {peaks[0]:.0f} / {peaks[1]:.0f} MB per worker |",
        f"| in memory, 1 process: generation | {n_mem:.0e} | {t_gen:.1f} s | {t_gen / n_mem * 1e9:.1f} ns | |",
        f"| in memory, 1 process: `dpselect.exponential(k=10)` | {n_mem:.0e} | {t_sel:.1f} s | "
        f"{per_sel * 1e9:.1f} ns | {rss_mem:.0f} MB (whole process) |",
        "",
        f"Per candidate, dask (generation included, 2 processes) / in memory (generation + selection, 1 process): "
        f"**{per_dask / per_mem:.2f}x**; against the in-memory selection alone: **{per_dask / per_sel:.2f}x** "
        "(target: within 3x).",
        f"Load average (1 min) before / after the dask run / after the in-memory run: {' / '.join(load)} "
        "on 2 cores shared with other sessions.",
    ])


# -- 2. frequent items ----------------------------------------------------------------------------------
def _rows_part(i: int, size: int = 1_000_000):
    import pandas as pd

    g = np.random.default_rng([7, i])
    return pd.DataFrame({"user": g.integers(0, N_USERS, size),
                         "item": np.minimum(g.zipf(1.3, size) - 1, N_ITEMS - 1)})


def _fi_in_memory(n_parts: int, part_size: int) -> tuple[float, float, float]:
    import pandas as pd

    import dpselect
    from dpselect.dask._items import _bound_partition

    t0 = time.perf_counter()
    df = pd.concat([_rows_part(i, part_size) for i in range(n_parts)], ignore_index=True)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    kept = _bound_partition(df, "user", "item", CONTRIB, True, 12345)
    counts = kept["item"].value_counts().reindex(np.arange(N_ITEMS), fill_value=0).to_numpy(np.float64)
    dpselect.exponential(counts, epsilon=1.0, sensitivity=1.0, monotonic=True, k=10, rng=0)
    t_sel = time.perf_counter() - t0
    return t_gen, t_sel, _rss_mb()


def frequent(n_parts_big: int, n_parts_mem: int, part_size: int) -> str:
    import dask.dataframe as dd

    import dpselect.dask as D

    n_big, n_mem = n_parts_big * part_size, n_parts_mem * part_size
    cluster, client = _cluster()
    try:
        rows = dd.from_map(_rows_part, range(n_parts_big), size=part_size, meta=_rows_part(0, 0))
        load = [_load()]
        t0 = time.perf_counter()
        top = D.frequent_items(rows, epsilon=1.0, contributions=CONTRIB, k=10, items=np.arange(N_ITEMS), rng=0)
        t_dask = time.perf_counter() - t0
        load.append(_load())
        peaks = sorted(client.run(_rss_mb).values())
    finally:
        client.close()
        cluster.close()
    assert len(top) == 10
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        t_gen, t_sel, rss_mem = ex.submit(_fi_in_memory, n_parts_mem, part_size).result()
    load.append(_load())
    per_dask = t_dask / n_big
    per_mem = (t_gen + t_sel) / n_mem
    return "\n".join([
        f"### Private top-10 frequent items: {n_big:.0e} (user, item) rows on dask vs {n_mem:.0e} in memory",
        "",
        f"{N_USERS:.0e} users, {N_ITEMS:.0e} items (Zipf 1.3), c = {CONTRIB} distinct items per user, ε = 1.",
        "",
        "| run | rows | wall time | per row | peak RSS |",
        "|---|---|---|---|---|",
        f"| dask: lazy generation, shuffle by user, bound, count, select | {n_big:.0e} | {t_dask:.1f} s | "
        f"{per_dask * 1e9:.0f} ns | {peaks[0]:.0f} / {peaks[1]:.0f} MB per worker |",
        f"| in memory: generation | {n_mem:.0e} | {t_gen:.1f} s | {t_gen / n_mem * 1e9:.0f} ns | |",
        f"| in memory: bound (same rule), count, `dpselect.exponential(k=10)` | {n_mem:.0e} | {t_sel:.1f} s | "
        f"{t_sel / n_mem * 1e9:.0f} ns | {rss_mem:.0f} MB (whole process) |",
        "",
        f"Per row, dask / in memory (both including generation): **{per_dask / per_mem:.2f}x** (target: within 3x).",
        f"Load average (1 min) before / after the dask run / after the in-memory run: {' / '.join(load)}.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100x smaller (smoke run, not recorded)")
    ap.add_argument("--only", choices=("em", "frequent"))
    args = ap.parse_args()
    s = 100 if args.quick else 1
    parts = [f"Machine: {machine()}, shared; dask {__import__('dask').__version__}."]
    if args.only in (None, "em"):
        parts.append(em(10 ** 9 // s, 10 ** 8 // s, 10 ** 7 // s))
    if args.only in (None, "frequent"):
        parts.append(frequent(100 // (10 if args.quick else 1), 10 // (10 if args.quick else 1),
                              1_000_000 // (10 if args.quick else 1)))
    text = "## Dask (`dpselect.dask`, benchmarks/bench_dask.py)\n\n" + "\n\n".join(parts)
    if args.quick:
        print(text)
    else:
        record("dask", text)


if __name__ == "__main__":
    main()
