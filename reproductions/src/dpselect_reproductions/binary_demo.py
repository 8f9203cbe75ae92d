"""``dpselect-reproduce binary-demo``: the optimal binary mechanism for a threshold query, end to end.

Datasets are all ``2^n`` datasets of ``n`` records with one binary attribute (the hypercube ``{0,1}^n``,
neighbours differ in one record), the query is "is the count of ones >= theta?". The optimal mechanism
fixes the balanced boundary value ``alpha* = (e^eps + delta)/(e^eps + 1)`` on the boundary datasets
(counts ``theta - 1`` and ``theta``) and extends it optimally (paper 002, Thm 1 / Cor. 2). It is compared, at
the same epsilon, with randomized response on the true answer and with Laplace noise on the count followed
by thresholding at ``theta - 1/2``.

Symmetry: the query, the boundary and the partial mechanism depend on a dataset only through its count, and
a dataset of count ``c`` is at distance ``|c - c'|`` from the nearest dataset of count ``c'``, so the strongest
induced bounds only depend on the count: the extension is computed on the quotient path ``0 - 1 - ... - n``.
For ``n <= --full-max-n`` it is also computed on the full hypercube and the two are compared.

Output (the reproductions' contract): ``OUT/binary-demo.csv``, ``.md`` and ``.png``; the committed run is
``results/binary-demo`` (its ``COMMAND.md`` has the command).
"""
from __future__ import annotations

import argparse
import math
import time
from types import ModuleType

import numpy as np
from numpy.typing import ArrayLike

from dpselect.binary import BinaryMechanism, DatasetGraph, balanced_boundary_value, balanced_probability, optimal_mechanism

from ._common import Reproduction, Result, add_output_arguments, line_panels, markdown_table, parse_float_list

__all__ = ["NAME", "DESCRIPTION", "count_path_mechanism", "hypercube_graph", "hypercube_mechanism",
    "randomized_response_correct", "laplace_threshold_correct", "REPRODUCTION", "add_arguments", "run"]

NAME = "binary-demo"
DESCRIPTION = ("optimal binary DP mechanism for a threshold query over all n-record binary datasets, vs "
               "randomized response and Laplace-then-threshold")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``dpselect-reproduce binary-demo`` to ``parser`` (``add_arguments`` of this module)."""
    parser.add_argument("--n", type=int, default=20, help="records per dataset (default 20; 1..30)")
    parser.add_argument("--theta", type=int, default=None, help="threshold, 1..n (default n // 2)")
    parser.add_argument("--epsilons", type=parse_float_list, default=[0.5, 1.0, 2.0],
                        help="comma-separated privacy budgets (default 0.5,1,2)")
    parser.add_argument("--delta", type=float, default=0.0, help="delta of the optimal mechanism (default 0)")
    parser.add_argument("--full-max-n", type=int, default=12,
                        help="also extend on the full hypercube (2^n vertices) when n <= this (default 12)")
    parser.add_argument("--samples", type=int, default=20000,
                        help="random datasets answered by sampling the mechanism (default 20000)")
    add_output_arguments(parser)


# ------------------------------------------------------------------ mechanisms
def count_path_mechanism(n: int, theta: int, epsilon: float, delta: float = 0.0) -> BinaryMechanism:
    """The optimal balanced mechanism on the count quotient: vertex ``c`` = all datasets with ``c`` ones.

    The path 0 − 1 − … − n of counts, with the balanced boundary value fixed on the counts θ − 1 and θ
    (:func:`dpselect.binary.balanced_boundary_value`); the threshold query is "count ≥ θ". The extension
    is (ε, δ)-DP for neighbours differing in one record (paper 002).

    Examples
    --------
    >>> m = count_path_mechanism(4, 2, 1.0)
    >>> m.log_prob.shape, [round(float(p), 4) for p in m.correct_probabilities]
    ((5, 2), [0.9011, 0.7311, 0.7311, 0.9011, 0.9636])
    """

    a = balanced_boundary_value(epsilon=epsilon, delta=delta)
    g = DatasetGraph.from_arrays(n + 1, np.arange(n), np.arange(1, n + 1))
    T = (np.arange(n + 1) >= theta).astype(np.int8)
    return optimal_mechanism(g, T, {theta - 1: 1.0 - a, theta: a}, epsilon=epsilon, delta=delta)


def hypercube_graph(n: int) -> tuple[DatasetGraph, np.ndarray]:
    """``{0,1}^n`` as a :class:`~dpselect.binary.DatasetGraph` (vertex = bit mask) and the counts.

    Examples
    --------
    >>> g, counts = hypercube_graph(3)
    >>> g, counts.tolist()
    (DatasetGraph(n=8, n_edges=12), [0, 1, 1, 2, 1, 2, 2, 3])
    """

    x = np.arange(1 << n, dtype=np.int64)
    us, vs = [], []
    for i in range(n):
        lo = x[(x >> i) & 1 == 0]
        us.append(lo)
        vs.append(lo | (1 << i))
    counts = np.zeros(1 << n, dtype=np.int64)
    for i in range(n):
        counts += (x >> i) & 1
    return DatasetGraph.from_arrays(1 << n, np.concatenate(us), np.concatenate(vs)), counts


def hypercube_mechanism(n: int, theta: int, epsilon: float, delta: float = 0.0, *,
                        graph: tuple[DatasetGraph, np.ndarray] | None = None) -> tuple[BinaryMechanism, np.ndarray]:
    """The optimal balanced mechanism on the full hypercube; returns ``(mechanism, counts)``.

    ``graph`` may pass a prebuilt ``hypercube_graph(n)`` (to reuse it across epsilons).

    Examples
    --------
    >>> mech, counts = hypercube_mechanism(3, 2, 1.0)
    >>> mech.log_prob.shape, counts.shape
    ((8, 2), (8,))
    """

    g, counts = hypercube_graph(n) if graph is None else graph
    a = balanced_boundary_value(epsilon=epsilon, delta=delta)
    T = (counts >= theta).astype(np.int8)
    bnd = np.flatnonzero((counts == theta) | (counts == theta - 1))
    partial = dict(zip(bnd.tolist(), np.where(counts[bnd] == theta, a, 1.0 - a).tolist()))
    return optimal_mechanism(g, T, partial, epsilon=epsilon, delta=delta), counts


def randomized_response_correct(epsilon: float) -> float:
    """Randomized response on the true answer: ``Pr[correct] = e^eps / (1 + e^eps)`` (pure epsilon-DP).

    Examples
    --------
    >>> round(randomized_response_correct(1.0), 4)
    0.7311
    """
    return math.exp(epsilon) / (1.0 + math.exp(epsilon))


def laplace_threshold_correct(distance: ArrayLike, epsilon: float) -> np.ndarray:
    """Laplace(1/eps) noise on the count (sensitivity 1), answer ``noisy >= theta - 1/2``: pure epsilon-DP.

    A dataset at distance ``d`` from the boundary has its count ``d + 1/2`` away from the cut, so
    ``Pr[correct] = 1 - exp(-eps (d + 1/2)) / 2``.

    Examples
    --------
    >>> laplace_threshold_correct([0, 1], 1.0).round(4).tolist()
    [0.6967, 0.8884]
    """
    d = np.asarray(distance, dtype=np.float64)
    return 1.0 - 0.5 * np.exp(-epsilon * (d + 0.5))


# ------------------------------------------------------------------ command
_CUBE: dict = {}


def _check(args: argparse.Namespace) -> list[str]:
    """Check the options (before any work); the one 'dataset' label."""
    n = int(args.n)
    if not 1 <= n <= 30:
        raise SystemExit(f"error: --n must be in 1..30, got {n}")
    theta = _theta(args)
    if not 1 <= theta <= n:
        raise SystemExit(f"error: --theta must be in 1..n = 1..{n} (both answers must occur), got {theta}")
    if not 0 <= args.delta < 1:
        raise SystemExit(f"error: --delta must be in [0, 1), got {args.delta}")
    if args.samples < 0:
        raise SystemExit(f"error: --samples must be >= 0, got {args.samples}")
    return [f"hypercube-n{n}-theta{theta}"]


def _theta(args: argparse.Namespace) -> int:
    return int(args.n) // 2 if args.theta is None else int(args.theta)


def _jobs(args: argparse.Namespace, datasets: list) -> list:
    # one job per ε, run in order in this process (the command has no --jobs): they share one generator,
    # as the committed results were drawn

    rng = np.random.default_rng(args.seed)   # --seed is an int >= 0 (checked by the command line)
    return [(datasets[0], int(args.n), _theta(args), eps, args.delta, args.full_max_n, args.samples, rng)
            for eps in args.epsilons]


def _task(job: tuple) -> tuple[list[dict], dict]:
    """One ε: the optimal mechanism on the count path (and the full hypercube), baselines, sampled check."""

    dataset, n, theta, eps, delta, full_max_n, samples, rng = job
    c = np.arange(n + 1)
    dist = np.where(c >= theta, c - theta, theta - 1 - c)
    weight = np.array([math.comb(n, int(k)) for k in c], dtype=np.float64)  # datasets per count
    t0 = time.perf_counter()
    mech = count_path_mechanism(n, theta, eps, delta)
    t_path = time.perf_counter() - t0
    opt = mech.correct_probabilities
    # Pr[wrong answer], exact also where it is below 1e-16 (kept in log space)
    wrong = np.exp(mech.log_prob[np.arange(n + 1), 1 - mech.true_values.astype(np.int64)])
    cor2 = np.asarray(balanced_probability(dist, epsilon=eps, delta=delta))
    rr = np.full(n + 1, randomized_response_correct(eps))
    lap = laplace_threshold_correct(dist, eps)
    check = None
    if n <= full_max_n:
        if n not in _CUBE:
            t0 = time.perf_counter()
            _CUBE[n] = (hypercube_graph(n), time.perf_counter() - t0)
        t0 = time.perf_counter()
        full, counts = hypercube_mechanism(n, theta, eps, delta, graph=_CUBE[n][0])
        t_full = time.perf_counter() - t0
        diff = float(np.max(np.abs(full.correct_probabilities - opt[counts])))
        ldiff = float(np.max(np.abs(full.log_prob - mech.log_prob[counts]) / np.abs(mech.log_prob[counts])))
        check = (eps, f"{1 << n}", f"{full.graph.n_edges}", f"{diff:.1e}", f"{ldiff:.1e}", f"{t_full:.2f} s",
                 f"{t_path * 1e3:.1f} ms")
    # end to end: answer random datasets by sampling the mechanism
    data_counts = rng.binomial(n, 0.5, size=samples)
    answers = mech.sample_many(data_counts.tolist(), rng=rng)
    emp = float(np.mean(answers == (data_counts >= theta))) if samples else float("nan")
    w = weight / weight.sum()
    exp_opt, exp_rr, exp_lap = float(w @ opt), float(w @ rr), float(w @ lap)
    summary = (eps, exp_opt, emp, exp_rr, exp_lap, float(opt.min()), float(rr.min()), float(lap.min()))
    rows, table = [], []
    for d in range(int(dist.max()) + 1):
        sel = dist == d
        k = int(np.flatnonzero(sel)[0])
        table.append((eps, d, ", ".join(str(int(x)) for x in c[sel]), int(weight[sel].sum()), float(opt[k]),
                      f"{float(wrong[k]):.4g}", float(cor2[k]), float(rr[k]), float(lap[k])))
        for meth, val in (("optimal", opt[k]), ("randomized_response", rr[k]), ("laplace_threshold", lap[k])):
            rows.append(dict(dataset=dataset, method=meth, epsilon=eps, run=0, metric="pr_correct",
                             value=float(val), distance=d))
    for meth, val in (("optimal", exp_opt), ("randomized_response", exp_rr), ("laplace_threshold", exp_lap),
                      ("optimal_sampled", emp)):
        rows.append(dict(dataset=dataset, method=meth, epsilon=eps, run=0, metric="expected_pr_correct",
                         value=val, distance=""))
    return rows, dict(summary=summary, table=table, check=check, t_graph=_CUBE[n][1] if check else 0.0)


def _command(args: argparse.Namespace) -> str:
    return (f"dpselect-reproduce binary-demo --n {args.n} --theta {_theta(args)} --epsilons "
            f"{','.join(f'{e:g}' for e in args.epsilons)} --delta {args.delta:g} --full-max-n {args.full_max_n} "
            f"--samples {args.samples} --seed {args.seed} --out {args.out}")


def _settings(res: Result) -> str:
    a, n, theta = res.args, res.args.n, _theta(res.args)
    return (f"all 2^{n} = {1 << n} datasets of {n} records with one binary attribute; neighbours differ "
            f"in one record. Query: count of ones ≥ {theta}. Optimal mechanism: balanced boundary value "
            f"α* = (e^ε + δ)/(e^ε + 1) on the datasets with count {theta - 1} and {theta}, extended optimally "
            f"(dpselect.binary, δ = {a.delta:g}). Baselines at the same ε (pure ε-DP): randomized response on "
            "the true answer, and Laplace(1/ε) noise on the count thresholded at θ − 1/2. All numbers are exact "
            "probabilities except the 'sampled' column;")


def _report(res: Result) -> list[str]:
    notes = res.notes
    checks = [nt["check"] for nt in notes if nt["check"] is not None]
    md = ["## Expected Pr[correct] over a uniformly random dataset, and the worst case", "",
          markdown_table(["ε", "optimal", "optimal (sampled)", "randomized response", "Laplace + threshold",
                          "worst optimal", "worst RR", "worst Laplace"], [nt["summary"] for nt in notes]), "",
          "## Pr[correct] by distance to the boundary", "",
          "Cor. 2 = paper 002's closed form for the balanced case (clamped at 1), which the general algorithm "
          "must match. 'optimal Pr[wrong]' = 1 − optimal, computed directly in log space (exact to a few ulps "
          "relative however small).", "",
          markdown_table(["ε", "distance d", "counts", "datasets", "optimal", "optimal Pr[wrong]", "Cor. 2",
                          "randomized response", "Laplace + threshold"], [r for nt in notes for r in nt["table"]]), ""]
    if checks:
        md += ["## Symmetry check: full hypercube vs the count quotient", "",
               f"The full hypercube graph was built once in {max(nt['t_graph'] for nt in notes):.1f} s; times "
               "below are the extension (both label-setting passes, checks and the privacy verification on every "
               "edge) on a 2-core machine shared with other jobs.", "",
               markdown_table(["ε", "vertices", "edges", "max abs difference",
                               "max rel. difference of log-probabilities", "full hypercube time",
                               "quotient time"], checks), ""]
    return md + [f"![Pr[correct] by distance]({NAME}.png)"]


def _figures(res: Result, plt: ModuleType) -> dict:
    curves: dict[str, dict] = {}
    for r in res.rows:
        if r["metric"] == "pr_correct":
            curves.setdefault(r["method"], {}).setdefault(r["epsilon"], []).append(r["value"])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = (("optimal", "optimal", {"marker": "o", "ms": 4}), ("laplace_threshold", "Laplace + threshold",
              {"linestyle": "--"}), ("randomized_response", "randomized response", {"linestyle": ":"}))
    lines = [(f"{label}, ε={eps:g}", range(len(ys)), ys, {"color": colours[i % len(colours)], **kw})
             for i, eps in enumerate(res.args.epsilons) for meth, label, kw in styles
             for ys in [curves[meth][eps]]]
    title = (f"Threshold query 'count ≥ {_theta(res.args)}' on {res.args.n}-record binary datasets"
             + (f", δ={res.args.delta:g}" if res.args.delta else ""))
    fig = line_panels(plt, [(title, lines)], xlabel="distance of the dataset to the boundary (records to change)",
                      ylabel="Pr[correct answer]", logx=False, size=(7, 4.5))
    ax = fig.axes[0]
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return {"": fig}


REPRODUCTION = Reproduction(
    name=NAME, description=DESCRIPTION, prog="dpselect-reproduce", echo=True,
    title=lambda args: f"binary-demo: optimal binary DP for a threshold query (n = {args.n}, θ = {_theta(args)})",
    add_arguments=_add_arguments, jobs=_jobs, task=_task, report=_report, figures=_figures, settings=_settings,
    datasets=_check, extra_columns=("distance",), command=_command, dpi=130,
    runs_text=lambda res: (f"one draw of the mechanism for each of {res.args.samples} datasets drawn uniformly at "
                           f"random per ε (the 'sampled' column), seed {res.args.seed}"),
    size=lambda args, _: len(args.epsilons) * (args.samples + ((1 << args.n) if args.n <= args.full_max_n else 0)),
)
add_arguments = REPRODUCTION.add_arguments
run = REPRODUCTION.run
