"""Thesis Figure 17: error of private median selection on DPBench 1-D data (PATENT, HEPTH, INCOME).

The thesis' methods select a *record* (:func:`dpselect.quantiles.median_rank`); their error is
|value of the selected record − true median|, but only the rank is private (releasing the record's
value is not ε-DP, see :func:`~dpselect.quantiles.median_rank`). The extra line ``interval`` is
:func:`dpselect.median`, which releases an ε-DP value (uniform in an interval between order statistics
chosen by local dampening on the rank utility): its error |released value − true median| is the same
metric, for a mechanism whose output may actually be published.

Error = |selected value − true median value| (in bin units: value of bin i is i, Λ = 4095). EM and LD:
exact expectation from the closed-form output probabilities (the CSV holds one row with ``run`` 0);
PF: one row per run (the thesis reports the mean of 10,000 runs). All mechanisms run on the distinct
values with their counts as base measure, which is exact (see :mod:`dpselect.quantiles._median`).

Besides the thesis' methods EM, PF and LD (LD with the exact element local sensitivity of
:mod:`dpselect.utilities.median`), the CSV has ``LD-thesis-delta``: local dampening with the
sensitivity printed in thesis Lemma 5.2.2 (clipped to Λ), to show how much of the gap to the thesis'
numbers comes from that looser formula. (Here the dampening function only needs δ(x, 0, r), because
δ(x, 0, r) >= |u(x, r)|.)
"""
from __future__ import annotations

import argparse
import decimal
from decimal import Decimal
from pathlib import Path

import numpy as np

from .. import mechanisms as dps
from ..quantiles import histogram_groups, median_distribution
from ..dampening import dampen
from ..utilities.median import grouped_database, interval_median_sensitivity
from ._common import Reproduction, Result, add_common_arguments, markdown_table
from ._data import data_path

__all__ = ["NAME", "DESCRIPTION", "DATASETS", "DEFAULT_DATASETS", "EPSILONS", "METHODS", "THESIS",
    "load_histogram", "thesis_delta0", "REPRODUCTION", "add_arguments", "run"]

NAME = "thesis-figure17"
DESCRIPTION = "Thesis Fig. 17: median selection error of EM, PF and LD on PATENT, HEPTH, INCOME"
DATASETS = ("patent", "hepth", "income", "adultfrank", "medcost", "nettrace", "searchlogs")
DEFAULT_DATASETS = ("patent", "hepth", "income")
EPSILONS = tuple(float(f"{10.0 ** e:.6g}") for e in np.linspace(-3, 3, 13))
METHODS = ("EM", "PF", "LD", "LD-thesis-delta", "interval")
# What the thesis says about Figure 17 (Sec. 5.3); it prints no table.
THESIS = {
    "patent": "mean reduction of 18% (LD vs EM and PF) over all ε, largest at high ε",
    "hepth": "reduction at most 12%, mean 4%",
    "income": "no reduction (LD = EM = PF: local sensitivity close to global)",
}


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect reproduce thesis-figure17`` to ``parser`` (``add_arguments`` of this module).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend, in place (``dpselect reproduce thesis-figure17 --help`` lists the flags).

    Returns
    -------
    None

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args([]).runs
    10000
    """
    add_common_arguments(parser, runs=10_000, epsilons=EPSILONS, datasets=DEFAULT_DATASETS, jobs=1)
    parser.add_argument("--bound", type=float, default=None,
                        help="Λ; bin i has value i·Λ/(bins−1) (default: Λ = bins − 1, values = bin indices)")


def load_histogram(name: str, path: Path | None = None) -> np.ndarray:
    """A DPBench 1-D histogram (4,096 bins) by lower-case name, or from an explicit path.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (read from ``data_path("dpbench1d", NAME.n4096.npy)`` when ``path`` is omitted).
    path : path-like, optional
        An ``.npy`` file holding the counts.

    Returns
    -------
    numpy.ndarray, shape (4096,)
        The count of every bin.

    Examples
    --------
    >>> h = load_histogram("hepth")
    >>> h.shape, int(h.sum())
    ((4096,), 347414)
    """
    p = Path(path) if path is not None else data_path("dpbench1d", f"{name.upper()}.n4096.npy")
    return np.load(p)


def thesis_delta0(values: np.ndarray, counts: np.ndarray, bound: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Thesis Lemma 5.2.2 as printed, per (value, side of m) group: (values, counts, δ(x, 0, ·), median).

    The printed formula depends on the sorted position i (i < m, i = m, i > m), so the median's value
    group is split in up to three. Clipped to Λ (thesis Lemma 3.2.2). The reproduction compares this
    printed δ with the exact one (it is not used by the library's median).

    Parameters
    ----------
    values : numpy.ndarray, shape (g,)
        Distinct values, increasing.
    counts : numpy.ndarray of int, shape (g,)
        Records per value (n = counts.sum()).
    bound : float
        Λ, the public upper end of the domain [0, Λ].

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray, float)
        Per group (at most 3g): its value, its record count, δ(x, 0, ·) of its records; and the median
        x_m, m = (n + 1) // 2.

    Examples
    --------
    >>> import numpy as np
    >>> v, c, d, m = thesis_delta0(np.array([1.0, 2.0, 4.0]), np.array([1, 1, 1]), 10.0)
    >>> v.tolist(), c.tolist(), d.tolist(), m
    ([1.0, 2.0, 4.0], [1, 1, 1], [9.0, 6.0, 6.0], 2.0)
    """
    cum = np.cumsum(counts)
    n = int(cum[-1])
    m = (n + 1) // 2

    def x(k: int) -> float:
        if k < 1:
            return 0.0
        if k > n:
            return float(bound)
        return float(values[int(np.searchsorted(cum, k))])

    xm, xp, xn = x(m), x(m + 1), x(m - 1)
    first = cum - counts + 1
    below = np.maximum(0, np.minimum(cum, m - 1) - first + 1)
    at = ((first <= m) & (m <= cum)).astype(np.int64)
    above = np.maximum(0, cum - np.maximum(first, m + 1) + 1)
    side = np.concatenate([np.full(values.size, -1), np.zeros(values.size, int), np.ones(values.size, int)])
    vals = np.concatenate([values, values, values])
    cnt = np.concatenate([below, at, above])
    keep = cnt > 0
    vals, cnt, side = vals[keep], cnt[keep], side[keep]
    p = np.where(side > 0, bound - vals, np.where(side == 0, bound - xp, bound + vals - 3 * xm + xp))
    q = np.where(side > 0, vals, np.where(side == 0, xn, 3 * xm - vals - xn))
    d = np.maximum.reduce([np.abs(xm - vals), np.full(vals.size, xp - xm), np.full(vals.size, xm - xn), p, q])
    return vals, cnt, np.minimum(d, bound), xm


_CACHE: dict = {}


def _groups(name: str, bound):
    """Everything ε-independent about one histogram, once per process."""

    if (name, bound) not in _CACHE:
        vals, counts, lam = histogram_groups(load_histogram(name), bound=bound)
        g = grouped_database(vals, lam, counts)
        _CACHE[(name, bound)] = (vals, counts, lam, g, thesis_delta0(vals, counts, lam))
    return _CACHE[(name, bound)]


def _expectation(scores: np.ndarray, eps: float, delta: float, weights, values) -> float:
    """Σ_r w_r·exp(c·(s_r − max s))·x_r / Σ_r w_r·exp(c·(s_r − max s)), c = ε/(2Δ), in decimal arithmetic
    at 40 significant digits from the float scores, weights and values: the same bits on every machine and
    numpy version (Python's decimal exp is correctly rounded and platform independent)."""
    ctx = decimal.Context(prec=40, Emin=-10**8, Emax=10**8)
    c = ctx.divide(Decimal(float(eps)), ctx.multiply(Decimal(2), Decimal(float(delta))))
    top = Decimal(float(np.max(scores)))
    num = den = Decimal(0)
    terms = zip(np.asarray(scores).tolist(), list(np.asarray(weights, dtype=object)), np.asarray(values).tolist())
    for s_r, w_r, x_r in terms:
        t = ctx.multiply(Decimal(w_r), ctx.exp(ctx.multiply(c, ctx.subtract(Decimal(s_r), top))))
        den = ctx.add(den, t)
        num = ctx.add(num, ctx.multiply(t, Decimal(x_r)))
    return float(ctx.divide(num, den))


def _interval_errors(lo: np.ndarray, hi: np.ndarray, center: float) -> np.ndarray:
    """E|V − center| for V uniform on [lo_j, hi_j) (the closed form of MedianDistribution.expected_abs_error)."""
    c = float(center)
    mid = (lo + hi) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = ((c - lo) ** 2 + (hi - c) ** 2) / (2.0 * (hi - lo))
    return np.where(c <= lo, mid - c, np.where(c >= hi, c - mid, inside))


def _task(job):
    """One (dataset, ε): exact expected errors of EM, LD, LD-thesis-delta and interval, ``runs`` PF draws."""

    di, name, ei, eps, seed, runs, bound_arg = job
    vals, counts, bound, g, (tv, tc, td, tm) = _groups(name, bound_arg)
    sf = g.sensitivity_function()
    u = g.utilities()
    err = -u  # |value − median| per group
    w = counts.astype(np.float64)
    tu = -np.abs(tv - tm)
    p_em = dps.exponential_probabilities(u, epsilon=eps, sensitivity=bound, base_measure=w)
    p_ld = dps.local_dampening_probabilities(u, epsilon=eps, sensitivity_function=sf, base_measure=w)
    p_th = dps.exponential_probabilities(tu / td, epsilon=eps, sensitivity=1.0,
                                       base_measure=tc.astype(np.float64))
    # Exact expectations, formed in decimal arithmetic (below) rather than from the float probabilities:
    # np.exp / np.log are dispatched on the CPU's SIMD level and change between numpy versions, which moved
    # these rows in the last bit from one machine to the next. The float probabilities are
    # kept as a check (they agree to ~1e-13 relative; a larger gap is a bug).
    D_ld = dampen(u, sf)
    iv = g.intervals()
    D_iv = dampen(iv.utility, interval_median_sensitivity(iv))
    iv_lengths = [Decimal(h) - Decimal(lo) for lo, h in zip(iv.lo.tolist(), iv.hi.tolist())]
    exact = {
        "EM": _expectation(u, eps, bound, w, err),
        "LD": _expectation(D_ld, eps, 1.0, w, err),
        "LD-thesis-delta": _expectation(tu / td, eps, 1.0, tc, -tu),
        "interval": _expectation(D_iv, eps, 1.0, iv_lengths, _interval_errors(iv.lo, iv.hi, g.median)),
    }
    d_ld = median_distribution(vals, epsilon=eps, bound=bound, counts=counts)
    d_em = median_distribution(vals, epsilon=eps, bound=bound, counts=counts, mechanism="exponential")
    iv_err = d_ld.expected_abs_error(g.median)
    # the interval utility's δ is 1 everywhere: LD and EM give one law (checked here)
    em_vs_ld = abs(d_em.expected_abs_error(g.median) / iv_err - 1.0)
    floats = {"EM": p_em @ err, "LD": p_ld @ err, "LD-thesis-delta": p_th @ -tu, "interval": iv_err}
    for method, val in exact.items():
        if not np.isclose(val, floats[method], rtol=1e-6, atol=0.0):
            raise AssertionError(f"{name} ε={eps:g} {method}: exact {val!r} against float {floats[method]!r}")
    rows = [dict(dataset=name, method=method, epsilon=eps, run=0, metric="error", value=val)
            for method, val in exact.items()]
    rng = np.random.default_rng([seed, di, ei])
    pf = np.empty(runs)
    for r in range(runs):
        pf[r] = err[dps.permute_and_flip(u, epsilon=eps, sensitivity=bound, base_measure=w, rng=rng)]
    rows += [dict(dataset=name, method="PF", epsilon=eps, run=r, metric="error", value=float(val))
             for r, val in enumerate(pf)]
    return rows, (name, (g.n, vals.size, g.median, bound, float(sf(0).min()), float(td.min())), em_vs_ld)


def _jobs(args, names) -> list:
    return [(di, name, ei, eps, args.seed, args.runs, args.bound)
            for di, name in enumerate(names) for ei, eps in enumerate(args.epsilons)]


def _summary(res: Result) -> dict:
    return {key: mean for key, (mean, _, _) in res.summary("dataset", "method", "epsilon").items()}


def _info(res: Result) -> dict:
    info: dict = {}
    for name, facts, em_vs_ld in res.notes:
        info[name] = facts + (max(em_vs_ld, info[name][6]) if name in info else em_vs_ld,)
    return info


def _report(res: Result) -> list[str]:
    return _markdown(res.datasets, res.args, _summary(res), _info(res))


def _reduction(a: float, b: float) -> float:
    return 100.0 * (1.0 - a / b) if b > 0 else float("nan")


def _markdown(names, args, summary, info) -> list[str]:
    eps = list(args.epsilons)
    lines = [
        "Error = |selected value − true median value| in bin units (value of bin i = i·Λ/(bins − 1)). "
        "EM, LD and LD-thesis-delta: exact expectation from the output probabilities; "
        f"PF: mean of {args.runs} runs (seed {args.seed}). Replace-one-record neighbours, values in [0, Λ]. "
        "LD uses the exact element local sensitivity (dpselect.utilities.median); LD-thesis-delta uses the "
        "δ(x, 0, i) printed in thesis Lemma 5.2.2 (clipped to Λ), a looser upper bound.",
        "",
        "EM, PF, LD and LD-thesis-delta select a **record** and are private only for its rank: publishing "
        "the selected record's value (whose error this figure measures, as the thesis does) is not ε-DP. "
        "**interval** is `dpselect.median`, which releases an ε-DP value: an interval between consecutive "
        "order statistics chosen by local dampening (rank utility −|j − n/2|, base measure = length), then "
        "a uniform value in it; exact expected |released value − true median|. Its element local "
        "sensitivity is 1 = Δ everywhere, so local dampening and the exponential mechanism give the same "
        "law (largest relative difference of the two exact errors below, per dataset).",
        "",
        markdown_table(
            ["dataset", "records", "distinct values", "median", "Λ", "min δ(x,0) exact", "min δ(x,0) printed",
             "interval: max rel. diff. of EM and LD errors"],
            [(n, *info[n][:6], f"{info[n][6]:.1e}") for n in names],
        ),
        "",
        "## Reduction of the error by LD (our means beside the thesis' text)",
        "",
    ]
    rows = []
    for n in names:
        red_em = [_reduction(summary[(n, "LD", e)], summary[(n, "EM", e)]) for e in eps]
        red_pf = [_reduction(summary[(n, "LD", e)], summary[(n, "PF", e)]) for e in eps]
        red_th = [_reduction(summary[(n, "LD-thesis-delta", e)], summary[(n, "EM", e)]) for e in eps]
        rows.append((n, float(np.mean(red_em)), float(np.max(red_em)), float(np.mean(red_pf)), float(np.max(red_pf)),
                     float(np.mean(red_th)), float(np.max(red_th)), THESIS.get(n, "–")))
    lines.append(markdown_table(
        ["dataset", "LD vs EM mean %", "LD vs EM max %", "LD vs PF mean %", "LD vs PF max %",
         "LD-thesis-delta vs EM mean %", "LD-thesis-delta vs EM max %", "thesis (Sec. 5.3)"], rows))
    lines += ["", f"Means over the {len(eps)} values of ε in [{min(eps):g}, {max(eps):g}] (log grid).", ""]
    lines += ["## The value-releasing median (interval) against the thesis' record selection (LD)", ""]
    lines.append(markdown_table(
        ["dataset"] + [f"ε = {e:g}: interval / LD" for e in eps[::3]],
        [(n, *[f"{summary[(n, 'interval', e)]:.3g} / {summary[(n, 'LD', e)]:.3g}" for e in eps[::3]])
         for n in names]))
    lines.append("")
    for n in names:
        lines += [f"## {n}", ""]
        lines.append(markdown_table(
            ["ε", "EM", "PF", "LD", "LD-thesis-delta", "interval", "LD vs EM %", "LD vs PF %"],
            [(f"{e:g}", summary[(n, "EM", e)], summary[(n, "PF", e)], summary[(n, "LD", e)],
              summary[(n, "LD-thesis-delta", e)], summary[(n, "interval", e)],
              _reduction(summary[(n, "LD", e)], summary[(n, "EM", e)]),
              _reduction(summary[(n, "LD", e)], summary[(n, "PF", e)])) for e in eps]))
        lines.append("")
    return lines


def _figure(plt, names, eps, summary):
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
    styles = {"EM": ("-", "C0"), "PF": (":", "C1"), "LD": ("--", "C2"), "LD-thesis-delta": ("-.", "C7"),
              "interval": ("-", "C3")}
    labels = {"EM": "EMMedianSelection (rank only)", "PF": "PFMedianSelection (rank only)",
              "LD": "LDMedianSelection (rank only)", "LD-thesis-delta": "LD, δ of printed Lemma 5.2.2",
              "interval": "dpselect.median (ε-DP value)"}
    for ax, n in zip(axes[0], names):
        for method in METHODS:
            ls, col = styles[method]
            ax.plot(eps, [summary[(n, method, e)] for e in eps], ls, color=col, label=labels[method],
                    lw=1.2 if method == "LD-thesis-delta" else 1.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_title(n.upper())
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("error |selected or released − median| (bins)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION, title="Thesis Figure 17: median selection error",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report,
    figures=lambda res, plt: {"": _figure(plt, res.datasets, res.args.epsilons, _summary(res))},
    allowed=DATASETS, paper_runs="thesis: 10,000 for PF; EM and LD exact",
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
