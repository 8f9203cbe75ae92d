"""Issue 26: error of m private quantiles at once on the seven DPBench 1-D histograms.

Data: each DPBench 1-D histogram (4,096 bins, :func:`~dpselect_reproductions.thesis_figure17.load_histogram`)
is a database whose records are the bin indices 0..4095 (bin ``k`` holds ``hist[k]`` records of value
``k``). The bounded methods get the public bounds ``(0, 4096)``: bin ``k`` is the interval ``[k, k + 1)``,
so a released value ``v`` falls in bin ``floor(v)``; ``bounds=None`` (the unbounded method) is given no
bound at all. Everything runs on the grouped data: the 4,096 bin values with ``counts=`` the histogram
(empty bins included, so that the public grid, not the data, fixes ``len(values)``).

Metric: for m evenly spaced quantiles ``q_i = i / (m + 1)``, i = 1..m, and released values
``v_i``, ``rank(v) = #{records <= v}`` and the error of one run is the mean over i of
``|rank(v_i) - q_i n| / n``. The CSV holds it (metric ``error``) and its **excess** over the best value
the bins allow (metric ``excess``): the minimum of ``|rank(v) - q_i n| / n`` over the candidate values, the
4,096 bins (a value in bin k has rank ``hist[0] + ... + hist[k]``), averaged over i (:func:`rank_floor`).
A bounded method's output lies in a bin, so its excess is >= 0; only an unbounded output below every
record (rank 0) could beat the floor (negative excess).

Methods: dpselect's ``joint``, ``recursive``, ``auto``, ``independent`` (interval exponential mechanism at
ε/m per quantile, the classic baseline, dpselect's own) and ``unbounded`` (``bounds=None``), all from
:func:`dpselect.quantiles`; and the discrete variants on the public grid of the 4,096 bin values
(``candidates=np.arange(4096)`` instead of the bounds: every output is a bin value, chosen by the window
utility that lets a bin holding an atom be optimal for every q inside it): ``recursive-grid``,
``independent-grid`` and ``auto-grid``. Their seeds take method indices after the baselines', so adding
them changed no other row. ``recursive-relative`` and ``recursive-relative-grid``: the recursive method with
``targets="relative"`` (each subproblem's own share λ·n_S at ε/(2L·μ), about ε/L per release instead of
ε/(2L − 1); seeds after the grid methods'); under add/remove they are ``recursive`` itself and are dropped.
``--baselines opendp,diffprivlib`` adds rows of third-party libraries when they import (a benchmark-only
environment, ``benchmarks/requirements-quantiles.txt``; never a dpselect dependency):

* ``opendp``: OpenDP 0.16 ``make_private_quantile`` called m times at ε/m each, candidates the 4,096 bin
  values, ``vector_domain(atom_domain(T=int), size=n)`` with ``symmetric_distance`` at ``d_in = 2``: a
  replaced record is one deletion plus one insertion at known size, i.e. ε-DP for replace-one neighbours as
  dpselect. The measurement is OpenDP's own composition ``make_quantile_score_candidates >> noisy max``; to
  keep the cost independent of n (PATENT has 27.9 million records) the scores are computed from the
  histogram by OpenDP's formula (:func:`opendp_scores`, checked equal to OpenDP's transformation by the
  benchmark and the tests) and OpenDP's ``make_noisy_max`` measurement, at the scale and with the
  privacy map of ``make_private_quantile``, selects the candidate. OpenDP draws from its own generator,
  which cannot be seeded: **its rows are not reproducible** (every other row is, bit for bit).
* ``diffprivlib``: ``diffprivlib.tools.quantile(records, qs, epsilon=ε, bounds=(0, 4096))`` (ε split
  evenly, m independent interval exponential mechanisms). It needs the records one by one (a Python list
  of n utilities per quantile): it is run only where ``n * m <= --diffprivlib-budget``; a call that
  raises or returns NaN is recorded as such (``status``), not dropped silently.

Neighbour model (``--neighbours``, default ``replace_one``). ``--neighbours add_remove`` runs every method
under add/remove-one neighbours (n private): dpselect's methods with ``neighbours="add_remove"`` (``joint``
and ``unbounded`` are refused there and dropped from the run, with a line in the report); OpenDP's
``make_private_quantile`` on the *unsized* domain ``vector_domain(atom_domain(T=int))`` with its privacy map
at ``d_in = 1`` (one record added or removed), the scale searched per level (its map depends on the level
there: 2·max(α, 1 − α)/scale), and the scores of that domain (OpenDP's level granularity 1/10,000 when n is
unknown: :func:`opendp_scores` with ``sized=False``); diffprivlib unchanged (its exponential mechanism on
the interval utility −|#{x <= v} − q·n| has sensitivity 1 when a record is added or removed, so its
quantile is ε-DP under add/remove: read from diffprivlib 0.6.6's code, ``Exponential(sensitivity=1,
utility=-|arange(k + 1) - quant·k|)`` with k = n; it is also ε-DP under replace-one). The title says the model.
"""
from __future__ import annotations

import argparse
import math
import re
import shlex
import subprocess
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import numpy as np

from ._common import Reproduction, Result, add_common_arguments, line_panels, markdown_table, parse_int_list
from .thesis_figure17 import load_histogram

__all__ = ["NAME", "DESCRIPTION", "DATASETS", "EPSILONS", "MS", "METHODS", "BASELINES", "BOUNDS", "NEIGHBOURS", "DEFAULT",
           "default_verdict",
           "grouped", "quantile_levels", "rank_floor", "rank_errors", "opendp_scores", "REPRODUCTION",
           "add_arguments", "run", "render"]

NAME = "quantiles"
DESCRIPTION = "Rank error of m private quantiles at once on the DPBench 1-D histograms (issues 26 and 36)"
DATASETS = ("hepth", "adultfrank", "medcost", "nettrace", "searchlogs", "income", "patent")
EPSILONS = (0.01, 0.1, 1.0)
MS = (3, 9, 99)
METHODS = ("joint", "recursive", "auto", "independent", "unbounded", "recursive-grid", "independent-grid",
           "auto-grid", "recursive-relative", "recursive-relative-grid", "default")
BASELINES = ("opendp", "diffprivlib")
#: the method index in the seeds: the grid methods come after the baselines (the rows of the others unchanged)
_SEED_ORDER = ("joint", "recursive", "auto", "independent", "unbounded", "opendp", "diffprivlib",
               "recursive-grid", "independent-grid", "auto-grid", "recursive-relative", "recursive-relative-grid",
               "default")
#: dpselect's methods on the public grid of bin values: ``candidates=`` instead of ``bounds=``
GRID_SUFFIX = "-grid"
#: the neighbour models of ``--neighbours`` (the first is the default)
NEIGHBOURS = ("replace_one", "add_remove")
#: the recursive method with ``targets="relative"``: ``method="recursive-relative"`` (and ``-grid``)
RELATIVE_SUFFIX = "-relative"
#: dpselect's methods refused under add/remove (dropped from an add_remove run)
_REFUSED_ADD_REMOVE = ("joint", "unbounded")
#: dpselect's methods that are ``recursive`` itself under add/remove (relative targets are its default there)
_SAME_ADD_REMOVE = ("recursive-relative", "recursive-relative-grid")
#: what a user gets with no method named (issue 36): ``quantiles(values, qs, epsilon=..., bounds=BOUNDS)`` with the
#: records as integers (the bin indices, int64): the integer grid 0..4096 by default
DEFAULT = "default"
#: public bounds of the bounded methods: bin k is [k, k + 1)
BOUNDS = (0.0, 4096.0)
_N_BINS = 4096


def grouped(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The record values (the bin indices, as floats) and their counts, **empty bins included**.

    The values are the public grid (every bin), not the bins the data happens to fill: ``method="auto"``
    reads ``len(values)``, which must not depend on the data.

    Examples
    --------
    >>> import numpy as np
    >>> v, c = grouped(np.array([2, 0, 3]))
    >>> v.tolist(), c.tolist()
    ([0.0, 1.0, 2.0], [2, 0, 3])
    """
    hist = np.asarray(hist, dtype=np.int64)
    return np.arange(hist.size, dtype=np.float64), hist


def quantile_levels(m: int) -> np.ndarray:
    """The m evenly spaced levels ``i / (m + 1)``, i = 1..m.

    Examples
    --------
    >>> quantile_levels(3).tolist()
    [0.25, 0.5, 0.75]
    """
    return np.arange(1, m + 1) / (m + 1)


def _ranks(hist: np.ndarray, v: np.ndarray) -> np.ndarray:
    """rank(v) = #{records <= v} for the records 0..len(hist)-1 (any real v)."""
    cum = np.concatenate(([0], np.cumsum(np.asarray(hist, dtype=np.int64))))
    k = np.floor(np.asarray(v, dtype=np.float64))
    idx = np.clip(k, -1, len(hist) - 1).astype(np.int64) + 1
    return cum[idx]


def rank_errors(hist: np.ndarray, qs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``|rank(v_i) - q_i n| / n`` per quantile, ``rank(v) = #{records <= v}`` (records = bin indices).

    Examples
    --------
    >>> import numpy as np
    >>> rank_errors(np.array([1, 1, 2]), np.array([0.5, 0.5]), np.array([1.5, 2.0])).tolist()
    [0.0, 0.5]
    """
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    values = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(values)
    out = np.full(values.shape, np.nan)
    out[ok] = np.abs(_ranks(hist, values[ok]) - np.asarray(qs)[ok] * n) / n
    return out


def rank_floor(hist: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """The best error the bins allow per level: ``min over the bins k of |rank(k) - q n| / n``.

    The candidate values are the bins (the bin indices 0..len(hist)-1, or any value inside one); the value
    ``k`` has ``rank(k) = hist[0] + ... + hist[k]``. (Rank 0, below every record, is not a candidate.)

    Examples
    --------
    >>> import numpy as np
    >>> rank_floor(np.array([1, 1, 2]), np.array([0.5, 0.75, 0.125])).tolist()
    [0.0, 0.25, 0.125]
    """
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    ranks = np.unique(np.cumsum(hist))
    target = np.asarray(qs, dtype=np.float64) * n
    pos = np.clip(np.searchsorted(ranks, target), 1, ranks.size - 1)
    best = np.minimum(np.abs(ranks[pos] - target), np.abs(ranks[pos - 1] - target))
    return best / n


# -- OpenDP ----------------------------------------------------------------------------------------
def _alpha_fraction(alpha: float, n: int | None) -> tuple[int, int]:
    """OpenDP 0.16 ``score_candidates_constants`` at known size n (None: unknown size, granularity 1/10,000):
    (alpha_num, alpha_den)."""
    exact = Fraction(alpha)
    den_approx = (2**64 - 1) // n if n is not None else 10_000
    if exact.denominator < den_approx:
        return exact.numerator, exact.denominator
    return int(alpha * float(den_approx)), den_approx   # u64 cast of the float product: truncation


def opendp_scores(hist: np.ndarray, alpha: float, sized: bool = True) -> tuple[list[int], int]:
    """OpenDP 0.16's quantile scores of the 4,096 candidates 0..4095 (sized input) and their denominator.

    ``score(c) = |(den - num) #{x < c} - num #{x > c}|`` with ``num / den`` OpenDP's integer form of
    ``alpha`` at known size n (``make_quantile_score_candidates``); ``make_private_quantile`` selects the
    candidate of the smallest score by noisy max at ``scale * den``. The scores are Python ints (they may
    exceed 2**63). ``sized=False``: the unsized domain (add/remove runs), whose level OpenDP takes at
    granularity 1/10,000. The benchmark checks these against OpenDP's own transformation.

    Examples
    --------
    >>> import numpy as np
    >>> opendp_scores(np.array([1, 1, 2]), 0.5)
    ([3, 1, 2], 2)
    """
    hist = np.asarray(hist, dtype=np.int64)
    cum = np.cumsum(hist).tolist()
    n = cum[-1]
    num, den = _alpha_fraction(alpha, n if sized else None)
    lt = [0] + cum[:-1]
    return [abs((den - num) * a - num * (n - b)) for a, b in zip(lt, cum)], den


_OPENDP: dict[Any, Any] = {}


def _opendp_selector(n: int, m: int, eps: float):
    """OpenDP's noisy-max measurement with the scale of make_private_quantile at ε/m (replace-one: d_in = 2)."""
    key = (n, m, eps)
    if key not in _OPENDP:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        dom = dp.vector_domain(dp.atom_domain(T=int), size=n)
        unit = dp.m.make_private_quantile(dom, dp.symmetric_distance(), dp.max_divergence(), list(range(_N_BINS)),
                                          0.5, 1.0).map(2)
        scale = unit * m / eps
        meas = dp.m.make_private_quantile(dom, dp.symmetric_distance(), dp.max_divergence(), list(range(_N_BINS)),
                                          0.5, scale)
        while meas.map(2) > eps / m:
            scale = math.nextafter(scale, math.inf)
            meas = dp.m.make_private_quantile(dom, dp.symmetric_distance(), dp.max_divergence(),
                                              list(range(_N_BINS)), 0.5, scale)
        t = dp.t.make_quantile_score_candidates(dom, dp.symmetric_distance(), list(range(_N_BINS)), 0.5)
        _OPENDP[key] = (dp, t.output_domain, t.output_metric, scale)
    return _OPENDP[key]


def _opendp_selector_add_remove(m: int, eps: float, alpha: float):
    """The same on the unsized domain, privacy map at d_in = 1 (add/remove one record); the map depends on the
    level there, so the scale is searched per level."""
    key = ("add_remove", m, eps, alpha)
    if key not in _OPENDP:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        dom = dp.vector_domain(dp.atom_domain(T=int))

        def make(scale):
            return dp.m.make_private_quantile(dom, dp.symmetric_distance(), dp.max_divergence(), list(range(_N_BINS)),
                                              alpha, scale)
        scale = make(1.0).map(1) * m / eps
        while make(scale).map(1) > eps / m:
            scale = math.nextafter(scale, math.inf)
        t = dp.t.make_quantile_score_candidates(dom, dp.symmetric_distance(), list(range(_N_BINS)), alpha)
        _OPENDP[key] = (dp, t.output_domain, t.output_metric, scale)
    return _OPENDP[key]


def _opendp_quantiles(hist: np.ndarray, qs: np.ndarray, eps: float, add_remove: bool = False) -> np.ndarray:
    n = int(hist.sum())
    out = []
    for q in qs:
        if add_remove:
            dp, odom, ometric, scale = _opendp_selector_add_remove(len(qs), eps, float(q))
        else:
            dp, odom, ometric, scale = _opendp_selector(n, len(qs), eps)
        scores, den = _score_cache(hist, float(q), sized=not add_remove)
        key = ("noisy-max", scale * den) if not add_remove else ("noisy-max", "add_remove", scale * den)
        if key not in _OPENDP:
            _OPENDP[key] = dp.m.make_noisy_max(odom, ometric, dp.max_divergence(), scale * den, negate=True)
        out.append(float(_OPENDP[key](scores)))
    return np.asarray(out)


_SCORES: dict[Any, Any] = {}


def _score_cache(hist: np.ndarray, q: float, sized: bool = True):
    key = (int(hist.sum()), hist.tobytes().__hash__(), q) + (() if sized else ("unsized",))
    if key not in _SCORES:   # as a uint64 array (the scores are < 2**64): OpenDP converts it twice as fast
        scores, den = opendp_scores(hist, q, sized=sized)
        _SCORES[key] = (np.array(scores, dtype=np.uint64), den)
    return _SCORES[key]


def _diffprivlib_quantiles(records: np.ndarray, qs: np.ndarray, eps: float, seed: list[int]) -> np.ndarray:
    from diffprivlib.tools import quantile

    rs = np.random.RandomState(np.random.SeedSequence(seed).generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(quantile(records, qs, epsilon=eps, bounds=BOUNDS, random_state=rs), dtype=np.float64)


def _baselines_available(names) -> list[str]:
    ok = []
    for b in names:
        try:
            __import__("opendp" if b == "opendp" else "diffprivlib.tools")
        except Exception:
            continue
        ok.append(b)
    return ok


# -- the runs --------------------------------------------------------------------------------------
_HIST: dict[str, np.ndarray] = {}


def _hist(name: str) -> np.ndarray:
    if name not in _HIST:
        _HIST[name] = np.asarray(load_histogram(name), dtype=np.int64)
    return _HIST[name]


def _dpselect_quantiles(hist: np.ndarray, qs: np.ndarray, eps: float, method: str, rng,
                        neighbours: str = "replace_one") -> np.ndarray:
    from dpselect.quantiles import quantiles

    v, c = grouped(hist)
    nb = cast(Any, neighbours)
    grid = method.endswith(GRID_SUFFIX)
    base = method[:-len(GRID_SUFFIX)] if grid else method
    targets: Any = None
    if base.endswith(RELATIVE_SUFFIX):
        base, targets = base[:-len(RELATIVE_SUFFIX)], "relative"
    if grid:     # the public grid: the bin values themselves
        return np.asarray(quantiles(v, qs, epsilon=eps, candidates=v, method=cast(Any, base), counts=c, rng=rng,
                                    neighbours=nb, targets=targets))
    if method == "unbounded":
        return np.asarray(quantiles(v, qs, epsilon=eps, bounds=None, counts=c, rng=rng, neighbours=nb))
    if method == DEFAULT:    # no method named; the records are integers (bin indices), as a user holds them
        return np.asarray(quantiles(v.astype(np.int64), qs, epsilon=eps, bounds=BOUNDS, counts=c, rng=rng,
                                    neighbours=nb))
    return np.asarray(quantiles(v, qs, epsilon=eps, bounds=BOUNDS, method=cast(Any, base), counts=c, rng=rng,
                                neighbours=nb, targets=targets))


def _eps_key(eps: float) -> int:
    return int(round(eps * 10**9))


def _task(job):
    """One run on one dataset: every m, ε and method. Seeds: (seed, dataset, m, ε, method, run), global
    indices, so a cell's runs do not depend on the other cells of the command."""
    name, run_, seed, ms, epsilons, methods, baselines, dpl_budget, dpl_runs, m_runs = job[:10]
    neighbours = job[10] if len(job) > 10 else "replace_one"
    reused = job[11] if len(job) > 11 else {}      # --reuse: (m, ε, method) -> the committed rows of this run
    di = DATASETS.index(name)
    hist = _hist(name)
    n = int(hist.sum())
    rows: list[dict] = []
    records = None
    for m in ms:
        if run_ >= m_runs.get(m, run_ + 1):
            continue
        qs = quantile_levels(m)
        floor = float(np.mean(rank_floor(hist, qs)))
        for eps in epsilons:
            for method in [*methods, *baselines]:
                if (m, eps, method) in reused:
                    rows += reused[(m, eps, method)]
                    continue
                s = [seed, di, m, _eps_key(eps), _SEED_ORDER.index(method), run_]
                status = "ok"
                if method == "opendp":
                    vals = _opendp_quantiles(hist, qs, eps, add_remove=neighbours == "add_remove")
                elif method == "diffprivlib":
                    if n * m > dpl_budget or run_ >= dpl_runs:
                        continue
                    if records is None:
                        records = np.repeat(np.arange(_N_BINS), hist)
                    try:
                        vals = _diffprivlib_quantiles(records, qs, eps, s)
                    except Exception as exc:  # recorded as a result (it may crash)
                        vals, status = np.full(m, np.nan), f"raised {type(exc).__name__}"
                else:
                    vals = _dpselect_quantiles(hist, qs, eps, method, np.random.default_rng(s), neighbours)
                err = rank_errors(hist, qs, vals)
                if status == "ok" and np.isnan(err).any():
                    status = f"{int(np.isnan(err).sum())} NaN of {m}"
                e = float(np.mean(err))
                for metric, value in (("excess", e - floor), ("error", e)):
                    rows.append({"dataset": name, "method": method, "epsilon": eps, "run": run_, "metric": metric,
                                 "value": value, "m": m, "status": status})
    return rows


def _parse_m_runs(text: str) -> dict[int, int]:
    try:
        pairs = [x.split("=") for x in text.split(",") if x.strip()]
        out = {int(a): int(b) for a, b in pairs}
    except ValueError:
        raise SystemExit(f"error: --m-runs expects M=RUNS,... e.g. 99=5, got {text!r}") from None
    if any(r < 1 for r in out.values()):
        raise SystemExit(f"error: --m-runs needs RUNS >= 1, got {text!r}")
    return out


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect-reproduce quantiles`` to ``parser`` (``add_arguments`` of this module)."""
    add_common_arguments(parser, runs=20, epsilons=EPSILONS, datasets=DATASETS, jobs=1)
    parser.add_argument("--ms", type=parse_int_list, default=list(MS),
                        help="comma-separated numbers of quantiles m (default 3,9,99)")
    parser.add_argument("--methods", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                        default=list(METHODS), help=f"dpselect methods (default {','.join(METHODS)})")
    parser.add_argument("--baselines", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=[],
                        help="third-party baselines to add when importable: opendp,diffprivlib (default none)")
    parser.add_argument("--diffprivlib-budget", type=float, default=4e6,
                        help="run diffprivlib only where n * m <= this (default 4e6)")
    parser.add_argument("--m-runs", default="",
                        help="fewer runs for some m, e.g. 99=5: m = 99 only in runs 0-4 (default: every run)")
    parser.add_argument("--diffprivlib-runs", type=int, default=None,
                        help="run diffprivlib in the first this many runs only (default: every run)")
    parser.add_argument("--reuse", default=None,
                        help="a committed quantiles.csv: copy its rows (same seeds per row) for every method and "
                             "baseline not in --rerun, run only the --rerun ones")
    parser.add_argument("--rerun", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=[],
                        help="with --reuse: the methods (or baselines) whose rows are computed afresh")
    parser.add_argument("--neighbours", choices=NEIGHBOURS, default=NEIGHBOURS[0],
                        help="neighbour model of every method: replace_one (n public, the default) or add_remove "
                             "(n private; joint and unbounded are refused and dropped; OpenDP unsized at d_in = 1)")


def _check(args) -> None:
    bad = [m for m in args.methods if m not in METHODS] + [b for b in args.baselines if b not in BASELINES]
    if bad:
        raise SystemExit(f"error: unknown method(s) {', '.join(bad)}; choose from {', '.join(METHODS + BASELINES)}")
    if not args.methods:
        raise SystemExit("error: --methods must name at least one method, got none")
    if getattr(args, "neighbours", NEIGHBOURS[0]) == "add_remove":
        runs = [m for m in args.methods if m not in _REFUSED_ADD_REMOVE + _SAME_ADD_REMOVE]
        if not runs:   # every method would be dropped: an empty run, not a result
            usable = [m for m in METHODS if m not in _REFUSED_ADD_REMOVE + _SAME_ADD_REMOVE]
            raise SystemExit(f"error: --methods {','.join(args.methods)} leaves no method under --neighbours "
                             f"add_remove ({', '.join(_REFUSED_ADD_REMOVE)} are refused there, "
                             f"{', '.join(_SAME_ADD_REMOVE)} are recursive itself); choose from {', '.join(usable)}")
    if getattr(args, "reuse", None) is not None and not args.rerun:
        raise SystemExit("error: --reuse needs --rerun METHODS (the methods whose rows change)")
    if getattr(args, "rerun", None) and getattr(args, "reuse", None) is None:
        raise SystemExit("error: --rerun needs --reuse CSV")
    if not args.ms or any(m < 1 for m in args.ms):
        raise SystemExit(f"error: --ms must be integers >= 1, got {args.ms}")
    _parse_m_runs(args.m_runs)


def _reused(args) -> dict:
    """--reuse: the committed rows of every method not in --rerun, by (dataset, run) then (m, ε, method), with
    the column types of fresh rows (the value's text round-trips: the same CSV bytes)."""
    if getattr(args, "reuse", None) is None:
        return {}
    from ._common import read_csv

    out: dict = {}
    for r in read_csv(Path(args.reuse)):
        if r["method"] in args.rerun:
            continue
        row = {"dataset": r["dataset"], "method": r["method"], "epsilon": float(r["epsilon"]), "run": int(r["run"]),
               "metric": r["metric"], "value": float(r["value"]), "m": int(r["m"]), "status": r["status"]}
        assert repr(row["value"]) == r["value"] or r["value"] == "nan", r
        out.setdefault((row["dataset"], row["run"]), {}).setdefault((row["m"], row["epsilon"], row["method"]),
                                                                    []).append(row)
    return out


def _drop_for_model(args, methods: list) -> list:
    """Set ``args.refused`` and ``args.same`` (the methods an add/remove run drops); return the others."""
    add_remove = getattr(args, "neighbours", "replace_one") == "add_remove"
    args.refused = [m for m in methods if add_remove and m in _REFUSED_ADD_REMOVE]
    args.same = [m for m in methods if add_remove and m in _SAME_ADD_REMOVE]
    return [m for m in methods if m not in args.refused + args.same]


def _jobs(args, names) -> list:
    _check(args)
    reuse = _reused(args)
    rerun = set(getattr(args, "rerun", None) or ())
    # a baseline carried over from --reuse need not import here
    baselines = [b for b in args.baselines if reuse and b not in rerun] + [
        b for b in _baselines_available(args.baselines) if not reuse or b in rerun]
    baselines = [b for b in BASELINES if b in baselines]
    methods = list(args.methods)            # dpselect's own: always present (an error is an error, not a skipped row)
    args.unavailable = sorted(set(args.baselines) - set(baselines))
    if args.unavailable:
        print(f"not available in this environment, skipped: {', '.join(args.unavailable)}")
    add_remove = getattr(args, "neighbours", "replace_one") == "add_remove"
    methods = _drop_for_model(args, methods)
    if args.refused:
        print(f"refused under add/remove neighbours, dropped: {', '.join(args.refused)}")
    if args.same:
        print(f"the same law as recursive under add/remove neighbours, dropped: {', '.join(args.same)}")
    return [(n, r, args.seed, list(args.ms), list(args.epsilons), methods, baselines,
             args.diffprivlib_budget, args.runs if args.diffprivlib_runs is None else args.diffprivlib_runs,
             _parse_m_runs(args.m_runs), "add_remove" if add_remove else "replace_one", reuse.get((n, r), {}))
            for n in names for r in range(args.runs)]


def _commit() -> str:
    try:
        root = Path(__file__).resolve().parents[3]
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (sha or "unknown") + (" (with uncommitted changes)" if dirty else "")


def _settings(res: Result) -> str:
    model = ("add/remove-one neighbours (n private; OpenDP unsized at d_in = 1); "
             if getattr(res.args, "neighbours", "replace_one") == "add_remove" else "")
    return model + (f"m in {{{', '.join(str(m) for m in res.args.ms)}}}, q_i = i/(m+1); records = bin indices, bounds "
            f"(0, 4096) (bounded methods), none for `unbounded`, candidates 0..4095 for `*-grid`, int64 records with "
            f"bounds (0, 4096) for `default` (the integer grid 0..4096); methods "
            f"{', '.join(m for m in res.args.methods if m not in getattr(res.args, 'refused', []))}; baselines "
            f"{', '.join(res.args.baselines) or 'none'}; code at commit {getattr(res.args, 'made_at', None) or _commit()};")


def _ci(vals: np.ndarray) -> float:
    """Half-width of the 95% interval of the mean (normal approximation)."""
    return float(1.96 * vals.std(ddof=1) / math.sqrt(vals.size)) if vals.size > 1 else float("nan")


def _cells(rows: list[dict], metric: str = "excess") -> dict[tuple, np.ndarray]:
    cells: dict[tuple, list[float]] = {}
    for r in rows:
        if r["metric"] == metric:
            cells.setdefault((r["dataset"], int(r["m"]), float(r["epsilon"]), r["method"]), []).append(
                float(r["value"]))
    return {k: np.asarray(v) for k, v in cells.items()}


#: the baselines of the reading: the classic independent interval EM (dpselect's own) and the third-party ones
_BASE = ("independent", *BASELINES)
#: a floor tie: both means within this many records of the bins' best (a ratio there is within the noise)
FLOOR_TIE_RECORDS = 10
#: the reading's target (issue 36): the default at least this much lower than the best baseline ...
WIN_RATIO = 1.5
#: ... and no cell worse than 1/this of it (the floor ties excepted)
LOSS_RATIO = 1.2


def _plural(kind: str, count: int) -> str:
    return kind if count == 1 else {"loss": "losses"}.get(kind, kind + "s")


def default_verdict(default: float, best_base: float, n: int) -> tuple[str, float]:
    """The reading of one cell: ("win" | "tie" | "floor tie" | "loss", best baseline / default).

    win: the default >= 1.5x lower; loss: more than 1.2x higher; floor tie: both means within 10 records of
    the bins' best (n·excess <= 10); tie: anything else.

    Examples
    --------
    >>> default_verdict(1e-3, 3e-3, 10**6), default_verdict(3e-3, 1e-3, 10**6)[0], default_verdict(0.0, 0.0, 10)
    (('win', 3.0), 'loss', ('floor tie', 1.0))
    """
    ratio = best_base / default if default > 0 else (1.0 if best_base == 0 else math.inf)
    if default * n <= FLOOR_TIE_RECORDS and best_base * n <= FLOOR_TIE_RECORDS:
        return "floor tie", ratio
    if ratio >= WIN_RATIO:
        return "win", ratio
    if ratio < 1 / LOSS_RATIO:
        return "loss", ratio
    return "tie", ratio


def _bound_lines(cells: dict, datasets, m: int, e: float) -> list[str]:
    """What no rule can beat, for the reading: the best of dpselect's methods in each cell (picked AFTER
    seeing the errors, so not a default) counted as the default is, and the cells whose best baseline is
    already within the floor-tie distance of the bins' best (there a 1.5x win needs the baseline's few
    records to shrink by a third; at exactly 0 it is impossible)."""
    ours = [k for k in dict.fromkeys((*METHODS, DEFAULT)) if k not in _BASE
            and any(c[0] in datasets and c[1:] == (m, e, k) for c in cells)]
    wins, floor = [], []
    for d in datasets:
        base = [cells[(d, m, e, k)].mean() for k in _BASE if (d, m, e, k) in cells
                and np.isfinite(cells[(d, m, e, k)]).all()]
        mine = {k: cells[(d, m, e, k)].mean() for k in ours if (d, m, e, k) in cells
                and np.isfinite(cells[(d, m, e, k)]).all()}
        if not base or not mine:
            continue
        n = int(_hist(d).sum())
        best = min(mine, key=lambda k: mine[k])
        verdict, ratio = default_verdict(float(mine[best]), float(min(base)), n)
        if verdict == "win":
            wins.append(f"{d} {'∞' if math.isinf(ratio) else f'{ratio:.2f}x'} {best}")
        if min(base) * n <= FLOOR_TIE_RECORDS:
            floor.append(f"{d} {min(base) * n:.3g}")
    if not wins and not floor:
        return []
    return [f"  - bound, not a rule: the best of {len(ours)} dpselect methods in each cell (picked after seeing the "
            f"errors) wins on {len(wins)}" + (f" ({', '.join(wins)})" if wins else "")
            + (f"; the best baseline is within {FLOOR_TIE_RECORDS} records of the bins' best on {len(floor)} "
               f"({', '.join(floor)} records), where a {WIN_RATIO}x win means taking a third off those few records "
               "(at 0, impossible)" if floor else "") + "."]


def _report(res: Result) -> list[str]:
    cells = _cells(res.rows)
    statuses = sorted({(r["dataset"], r["method"], r["m"], r["epsilon"], r["status"]) for r in res.rows
                       if r["status"] != "ok"})
    methods = [m for m in (*METHODS, *BASELINES) if any(k[3] == m for k in cells)]
    lines = ["Mean **excess** rank error over the best value the bins allow (|rank(v) − q n| / n averaged over the "
             "m quantiles, minus its floor), ×10⁻³, ± the half-width of the 95% interval of the mean. "
             "`default`: what `quantiles(values, qs, epsilon=ε, bounds=(0, 4096))` gives with no method named, the "
             "records as integers (the integer grid by default). `best baseline / default`: the smaller mean of the "
             "baselines measured in this run (independent interval EM, and OpenDP / diffprivlib where run) over the "
             f"default's: a **win** at >= {WIN_RATIO}x, a **loss** below 1/{LOSS_RATIO}, a *floor tie* where both "
             f"are within {FLOOR_TIE_RECORDS} records of the bins' best. Only the `default` column is counted.",
             ""]
    summary = []
    for m in res.args.ms:
        table = []
        for e in res.args.epsilons:
            verdicts: dict[str, list[str]] = {}
            for d in res.datasets:
                v = cells.get((d, m, e, DEFAULT))
                base = {k: cells[(d, m, e, k)].mean() for k in _BASE if (d, m, e, k) in cells
                        and np.isfinite(cells[(d, m, e, k)]).all()}
                if v is None or not base:
                    continue
                best = min(base, key=lambda k: base[k])
                verdict, ratio = default_verdict(float(v.mean()), float(base[best]), int(_hist(d).sum()))
                verdicts.setdefault(verdict, []).append(f"{d} {ratio:.2f}x vs {best}")
            if verdicts:
                summary.append(f"* m = {m}, ε = {e:g}: " + "; ".join(
                    f"{len(verdicts[k])} {_plural(k, len(verdicts[k]))} ({', '.join(verdicts[k])})"
                    for k in ("win", "tie", "floor tie", "loss") if k in verdicts))
                summary += _bound_lines(cells, res.datasets, m, e)
        for d in res.datasets:
            for e in res.args.epsilons:
                row: list[Any] = [d, e]
                for meth in methods:
                    v = cells.get((d, m, e, meth))
                    row.append("–" if v is None else (f"{1e3 * v.mean():.3g} ± {1e3 * _ci(v):.2g}"
                                                      if np.isfinite(v).all() else "NaN"))
                ours = cells.get((d, m, e, DEFAULT))
                base_means = [cells[(d, m, e, k)].mean() for k in _BASE if (d, m, e, k) in cells
                              and np.isfinite(cells[(d, m, e, k)]).all()]
                if ours is None or not base_means:
                    row.append("–")
                else:
                    verdict, ratio = default_verdict(float(ours.mean()), float(min(base_means)), int(_hist(d).sum()))
                    row.append(f"{ratio:.3g}x" + ("" if verdict == "tie" else f" ({verdict})"))
                table.append(row)
        lines += [f"## m = {m}", "", markdown_table(("dataset", "ε", *methods, "best baseline / default"),
                                                     table), ""]
    lines += ["## The default against the best baseline", "",
              f"Win: >= {WIN_RATIO}x lower; loss: more than {LOSS_RATIO}x higher; floor tie: both within "
              f"{FLOOR_TIE_RECORDS} records of the bins' best; tie: the rest. Issue 36's target (m = 9, ε <= 0.1): "
              "6 wins of 7 and no loss at each ε.", ""] + summary + [""]
    if getattr(res.args, "reuse", None) is not None:
        kept = sorted({r["method"] for r in res.rows} - set(res.args.rerun))
        lines += [f"Run afresh: {', '.join(res.args.rerun)}. Carried over from `{res.args.reuse}` (`--reuse`: the "
                  f"same rows, each with its own seed, as that run made them; the wall time above is the fresh "
                  f"rows'): {', '.join(kept)}.", ""]
    if res.args.m_runs:
        lines += ["Fewer runs for: " + ", ".join(f"m = {m}: runs 0-{min(r, res.args.runs) - 1}"
                                                  for m, r in sorted(_parse_m_runs(res.args.m_runs).items())) + ".",
                  ""]
    if getattr(res.args, "refused", None):
        lines += [f"Refused under add/remove neighbours (no rows): {', '.join(res.args.refused)}.", ""]
    if getattr(res.args, "same", None):
        lines += [f"The same law as `recursive` (and `recursive-grid`) under add/remove neighbours, where the relative "
                  f"targets are the default (no rows): {', '.join(res.args.same)}.", ""]
    if getattr(res.args, "unavailable", None):
        lines += [f"Not available in the environment of this run (no rows): {', '.join(res.args.unavailable)}.", ""]
    if statuses:
        lines += ["Runs that did not return m finite values (recorded, excluded from nothing: their rows carry NaN):",
                  ""] + [f"* {d} {meth} m = {m} ε = {e}: {s}" for d, meth, m, e, s in statuses] + [""]
    if "diffprivlib" in res.args.baselines:
        runs = res.args.runs if res.args.diffprivlib_runs is None else min(res.args.runs, res.args.diffprivlib_runs)
        lines += [f"diffprivlib is run only where n · m <= {res.args.diffprivlib_budget:g} (it takes the records "
                  f"one by one; other cells show –), in runs 0-{runs - 1} ({runs} runs per cell).", ""]
    if "opendp" in res.args.baselines:
        lines += ["OpenDP rows come from OpenDP's own unseedable generator: not reproducible run for run.", ""]
    return lines


def _figures(res: Result, plt) -> dict:
    cells = _cells(res.rows)
    eps = res.args.epsilons
    methods = [m for m in (*METHODS, *BASELINES) if any(k[3] == m for k in cells)]
    style = {"joint": "o-", "recursive": "s-", "auto": "^-", "independent": "v--", "unbounded": "D-",
             "opendp": "x:", "diffprivlib": "+:", "recursive-grid": "s:", "independent-grid": "v:",
             "auto-grid": "^:", "recursive-relative": "P-", "recursive-relative-grid": "P:", "default": "*-"}
    panels = []
    for m in res.args.ms:
        for d in res.datasets:
            lines = []
            for meth in methods:
                y = [float(cells[(d, m, e, meth)].mean()) if (d, m, e, meth) in cells else float("nan") for e in eps]
                if not all(math.isnan(v) for v in y):
                    lines.append((meth, eps, y, {"linestyle": style[meth][1:], "marker": style[meth][0]}))
            panels.append((f"{d}, m = {m}", lines))
    fig = line_panels(plt, panels, ncols=len(res.datasets), ylabel="mean excess |rank error| / n",
                      size=(3.2, 2.8))
    for ax in fig.axes:
        ax.set_yscale("symlog", linthresh=1e-5)   # zero (and an unbounded value below the bins) stays visible
    fig.tight_layout()
    return {"": fig}


def _size(args, names) -> int:
    return int(args.runs) * len(args.epsilons) * len(args.ms) * max(len(names), 1)


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION,
    title=lambda args: "Excess rank error of m private quantiles on the DPBench 1-D histograms" + (
        ", add/remove-one neighbours" if getattr(args, "neighbours", "replace_one") == "add_remove" else ""),
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures, settings=_settings,
    allowed=DATASETS, extra_columns=("m", "status"), size=_size,
    order=lambda args, names: {"dataset": names, "m": args.ms, "epsilon": args.epsilons,
                               "method": [*METHODS, *BASELINES]},
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run


def render(directory: str | Path) -> Path:
    """Re-write ``DIRECTORY/quantiles.md`` from ``DIRECTORY/quantiles.csv``, running nothing; return its path.

    The command is read back from the markdown's ``Command:`` line, and so are the two facts a render cannot
    re-derive, the commit of the code that made the rows and the run's wall time; everything else (the
    settings, every mean, interval and ratio, the reading of the default) is computed from the CSV by the code
    of a run. The figure is not redrawn. For the committed ``results/quantiles*`` (a wording change of the
    report, say)::

        PYTHONPATH=$PWD/src:$PWD/reproductions/src python3 -m dpselect_reproductions.quantiles --render \\
            results/quantiles results/quantiles-add-remove

    Examples
    --------
    >>> import shutil, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> root = Path(__file__).resolve().parents[3] / "results" / "quantiles"
    >>> for f in ("quantiles.csv", "quantiles.md"):
    ...     _ = shutil.copy(root / f, d / f)
    >>> render(d).read_text() == (root / "quantiles.md").read_text()
    True
    """
    from ._common import check_datasets, read_csv

    directory = Path(directory)
    md = directory / f"{NAME}.md"
    text = md.read_text()
    command = re.search(r"^Command: `(.*)`$", text, re.M)
    made = re.search(r"code at commit (.+?);", text)
    wall = re.search(r"Wall time (\d+) s\.", text)
    if command is None or made is None or wall is None:
        raise SystemExit(f"error: {md} has no Command line, commit or wall time to render from")
    argv = shlex.split(command.group(1))
    if argv[:2] != ["dpselect-reproduce", NAME]:
        raise SystemExit(f"error: {md} is not the report of dpselect-reproduce {NAME}: {command.group(1)}")
    args = REPRODUCTION.parser().parse_args(argv[2:])
    args.made_at = made.group(1)
    rows = [{"dataset": r["dataset"], "method": r["method"], "epsilon": float(r["epsilon"]), "run": int(r["run"]),
             "metric": r["metric"], "value": float(r["value"]), "m": int(r["m"]), "status": r["status"]}
            for r in read_csv(directory / f"{NAME}.csv")]
    _drop_for_model(args, list(args.methods))
    present = {r["method"] for r in rows}
    args.unavailable = sorted(b for b in set(args.baselines) if b not in present)
    datasets = check_datasets(args.datasets, REPRODUCTION.allowed)
    result = Result(args, datasets, rows, [], float(wall.group(1)))
    md.write_text(REPRODUCTION.markdown(result, _size(args, datasets)))
    return md


if __name__ == "__main__":
    _p = argparse.ArgumentParser(prog="python -m dpselect_reproductions.quantiles",
                                 description="Re-render quantiles.md from quantiles.csv (see render()).")
    _p.add_argument("--render", nargs="+", required=True, metavar="DIR",
                    help="directories holding quantiles.csv and quantiles.md (from dpselect-reproduce quantiles)")
    for _d in _p.parse_args().render:
        print(f"wrote {render(_d)}")
