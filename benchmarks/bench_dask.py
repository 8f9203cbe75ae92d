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
baselines. The record's protocol (``_common.interleaved``): the dask run and the in-memory run of a part are
timed in the same ``--rounds`` (>= 9) rounds, the order rotated each round; a ratio is the median of the
per-round ratios (per candidate or row), with the worst round beside it; the in-memory process reports its own
generation and selection times (its start-up excluded). Run: ``nice -n 5 python benchmarks/bench_dask.py``
(``--quick`` for a 100x smaller smoke run; at full size a round of each part takes ~5 min on 2 shared cores).
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

from _common import MIN_ROUNDS, host_header, interleaved, median, record

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


def _fresh_process_pool():
    """One spawned process per task (a fresh process each round, so that its peak RSS is that round's)."""
    return cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), max_tasks_per_child=1)


def _per_round(t_dask: list[float], n_big: int, mem: list[float], n_mem: int) -> tuple[float, float]:
    per = [(a / n_big) / (b / n_mem) for a, b in zip(t_dask, mem)]
    return median(per), max(per)


def em(n_big: int, n_mem: int, chunk: int, rounds: int) -> str:
    import dask.array as da

    import dpselect.dask as D

    cluster, client = _cluster()
    gen_t: list[float] = []
    sel_t: list[float] = []
    rss: list[float] = []
    picks = []
    load = [_load()]
    try:
        u = da.random.default_rng(0).standard_normal(n_big, chunks=chunk) * 100.0

        def dask_run() -> None:
            picks.append(D.exponential(u, epsilon=1.0, sensitivity=1.0, k=10, rng=0))

        def mem_run() -> None:
            with _fresh_process_pool() as ex:
                g, sel, r = ex.submit(_em_in_memory, n_mem, chunk).result()
            gen_t.append(g)
            sel_t.append(sel)
            rss.append(r)

        t = interleaved({"dask": dask_run, "mem": mem_run}, rounds=rounds, warmup=0)
        load.append(_load())
        peaks = sorted(client.run(_rss_mb).values())
    finally:
        client.close()
        cluster.close()
    assert all(len(set(p.tolist())) == 10 for p in picks)
    t_dask, t_gen, t_sel = median(t["dask"]), median(gen_t), median(sel_t)
    both = [a + b for a, b in zip(gen_t, sel_t)]
    r_mem, w_mem = _per_round(t["dask"], n_big, both, n_mem)
    r_sel, w_sel = _per_round(t["dask"], n_big, sel_t, n_mem)
    return "\n".join([
        f"### Top-10 exponential mechanism: {n_big:.0e} candidates on dask vs {n_mem:.0e} in memory",
        "",
        f"Medians of {rounds} interleaved rounds.",
        "",
        "| run | candidates | wall time | per candidate | peak RSS |",
        "|---|---|---|---|---|",
        f"| dask, 2 workers x 1 thread, chunks of {chunk:.0e} (lazy generation + selection) | {n_big:.0e} | "
        f"{t_dask:.1f} s | {t_dask / n_big * 1e9:.1f} ns | {peaks[0]:.0f} / {peaks[1]:.0f} MB per worker |",
        f"| in memory, 1 process: generation | {n_mem:.0e} | {t_gen:.1f} s | {t_gen / n_mem * 1e9:.1f} ns | |",
        f"| in memory, 1 process: `dpselect.exponential(k=10)` | {n_mem:.0e} | {t_sel:.1f} s | "
        f"{t_sel / n_mem * 1e9:.1f} ns | {max(rss):.0f} MB (whole process, largest round) |",
        "",
        f"Per candidate, dask (generation included, 2 processes) / in memory (generation + selection, 1 process): "
        f"**{r_mem:.2f}x** (worst round {w_mem:.2f}x); against the in-memory selection alone: **{r_sel:.2f}x** "
        f"(worst round {w_sel:.2f}x) (target: within 3x).",
        f"Load average (1 min) before / after the rounds: {' / '.join(load)} on 2 cores shared with other sessions.",
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
    from dpselect.dask._items import _ITEM_KEY, _USER_KEY, _bound_partition

    t0 = time.perf_counter()
    df = pd.concat([_rows_part(i, part_size) for i in range(n_parts)], ignore_index=True)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    keys = df.rename(columns={"user": _USER_KEY, "item": _ITEM_KEY})   # the columns the bound reads
    kept = _bound_partition(keys, CONTRIB, True, 12345)
    counts = kept[_ITEM_KEY].value_counts().reindex(np.arange(N_ITEMS), fill_value=0).to_numpy(np.float64)
    dpselect.exponential(counts, epsilon=1.0, sensitivity=1.0, monotonic=True, k=10, rng=0)
    t_sel = time.perf_counter() - t0
    return t_gen, t_sel, _rss_mb()


def frequent(n_parts_big: int, n_parts_mem: int, part_size: int, rounds: int) -> str:
    import dask.dataframe as dd

    import dpselect.dask as D

    n_big, n_mem = n_parts_big * part_size, n_parts_mem * part_size
    cluster, client = _cluster()
    gen_t: list[float] = []
    sel_t: list[float] = []
    rss: list[float] = []
    tops = []
    load = [_load()]
    try:
        rows = dd.from_map(_rows_part, range(n_parts_big), size=part_size, meta=_rows_part(0, 0))

        def dask_run() -> None:
            tops.append(D.frequent_items(rows, epsilon=1.0, contributions=CONTRIB, k=10, items=np.arange(N_ITEMS),
                                         rng=0))

        def mem_run() -> None:
            with _fresh_process_pool() as ex:
                g, sel, r = ex.submit(_fi_in_memory, n_parts_mem, part_size).result()
            gen_t.append(g)
            sel_t.append(sel)
            rss.append(r)

        t = interleaved({"dask": dask_run, "mem": mem_run}, rounds=rounds, warmup=0)
        load.append(_load())
        peaks = sorted(client.run(_rss_mb).values())
    finally:
        client.close()
        cluster.close()
    assert all(len(top) == 10 for top in tops)
    t_dask, t_gen, t_sel = median(t["dask"]), median(gen_t), median(sel_t)
    r_mem, w_mem = _per_round(t["dask"], n_big, [a + b for a, b in zip(gen_t, sel_t)], n_mem)
    return "\n".join([
        f"### Private top-10 frequent items: {n_big:.0e} (user, item) rows on dask vs {n_mem:.0e} in memory",
        "",
        f"{N_USERS:.0e} users, {N_ITEMS:.0e} items (Zipf 1.3), c = {CONTRIB} distinct items per user, ε = 1. "
        f"Medians of {rounds} interleaved rounds.",
        "",
        "| run | rows | wall time | per row | peak RSS |",
        "|---|---|---|---|---|",
        f"| dask: lazy generation, shuffle by user, bound, count, select | {n_big:.0e} | {t_dask:.1f} s | "
        f"{t_dask / n_big * 1e9:.0f} ns | {peaks[0]:.0f} / {peaks[1]:.0f} MB per worker |",
        f"| in memory: generation | {n_mem:.0e} | {t_gen:.1f} s | {t_gen / n_mem * 1e9:.0f} ns | |",
        f"| in memory: bound (same rule), count, `dpselect.exponential(k=10)` | {n_mem:.0e} | {t_sel:.1f} s | "
        f"{t_sel / n_mem * 1e9:.0f} ns | {max(rss):.0f} MB (whole process, largest round) |",
        "",
        f"Per row, dask / in memory (both including generation): **{r_mem:.2f}x** (worst round {w_mem:.2f}x; "
        "target: within 3x).",
        f"Load average (1 min) before / after the rounds: {' / '.join(load)}.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100x smaller (smoke run, not recorded)")
    ap.add_argument("--only", choices=("em", "frequent"))
    ap.add_argument("--rounds", type=int, default=MIN_ROUNDS, help=f"interleaved rounds (at least {MIN_ROUNDS})")
    args = ap.parse_args()
    if args.rounds < MIN_ROUNDS:
        ap.error(f"--rounds: the record's protocol needs at least {MIN_ROUNDS}")
    s = 100 if args.quick else 1
    parts = [host_header(), f"Shared machine; dask {__import__('dask').__version__}. Re-run: "
             "`nice -n 5 python benchmarks/bench_dask.py` (about 1.5 h at full size: 9 rounds of ~5 min per part)."]
    if args.only in (None, "em"):
        parts.append(em(10 ** 9 // s, 10 ** 8 // s, 10 ** 7 // s, args.rounds))
    if args.only in (None, "frequent"):
        parts.append(frequent(100 // (10 if args.quick else 1), 10 // (10 if args.quick else 1),
                              1_000_000 // (10 if args.quick else 1), args.rounds))
    text = "## Dask (`dpselect.dask`, benchmarks/bench_dask.py)\n\n" + "\n\n".join(parts)
    if args.quick:
        print(text)
    else:
        record("dask", text)


if __name__ == "__main__":
    main()
