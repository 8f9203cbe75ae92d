"""``dpselect demo``: the selection mechanisms on small real examples.

1. NLTCS (21,574 survey records): privately pick the one-attribute rule that best detects the class
   (true positive rate; add/remove-one-record DP), with every mechanism's pick and exact probabilities.
2. Enron email graph: private top-k influential nodes, local versus global sensitivity (edge-DP).
3. HEPTH (DPBench): a private median (an ε-DP value) versus the thesis' record selection.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from . import mechanisms as mech
from ._rng import check_rng
from ._validation import check_positive
from .graphs._demo import influential_demo_table
from .quantiles._median import histogram_groups, median, median_error, median_probabilities
from .datasets import PUBLIC_GRAPH_MAX_DEGREE
from .experiments._common import check_out_dir, pyplot
from .experiments._data import data_path, load_graph
from .tabular import load_nltcs
from .utilities.classification import tpr, tpr_sensitivity

__all__ = ["DESCRIPTION", "add_arguments", "run"]

DESCRIPTION = "show private selection on real data: mechanisms, exact probabilities, local vs global"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``dpselect demo`` to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``demo`` subcommand's parser (:func:`dpselect.cli.main` builds it).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="dpselect demo")
    >>> add_arguments(parser)
    >>> args = parser.parse_args(["--epsilon", "0.5", "--skip-graph"])
    >>> args.seed, args.epsilon, args.k, args.plot, args.skip_graph
    (0, 0.5, 3, None, True)
    """
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy budget ε of each demo (default 1)")
    parser.add_argument("--k", type=int, default=3, help="number of influential nodes (default 3)")
    parser.add_argument("--plot", type=Path, default=None, help="also write a PNG of the selection probabilities")
    parser.add_argument("--skip-graph", action="store_true", help="skip the Enron part (about 10 s)")


def _rule_selection(epsilon: float, rng: np.random.Generator) -> tuple[list[str], np.ndarray, dict[str, np.ndarray]]:
    data = load_nltcs(data_path("tabular", "nltcs.dat"))
    X = data.X.astype(np.int8)
    # Candidate r: "predict positive when attribute r is 1". Public candidates; private records.
    preds = X.T
    u = tpr(data.y, preds)
    sf = tpr_sensitivity(data.y, preds)
    sld = sf.bounded(data.n_records)
    probs = {
        "EM": mech.exponential_probabilities(u, epsilon=epsilon, sensitivity=1.0),
        "PF": mech.permute_and_flip_probabilities(u, epsilon=epsilon, sensitivity=1.0),
        "LD": mech.local_dampening_probabilities(u, epsilon=epsilon, sensitivity_function=sf),
        "SLD": mech.shifted_local_dampening_probabilities(u, epsilon=epsilon, sensitivity_function=sld),
    }
    picks = {
        "EM": mech.exponential(u, epsilon=epsilon, sensitivity=1.0, rng=rng),
        "PF": mech.permute_and_flip(u, epsilon=epsilon, sensitivity=1.0, rng=rng),
        "RNM-Laplace": mech.report_noisy_max(u, epsilon=epsilon, sensitivity=1.0, rng=rng),
        "LD": mech.local_dampening(u, epsilon=epsilon, sensitivity_function=sf, rng=rng),
        "SLD": mech.shifted_local_dampening(u, epsilon=epsilon, sensitivity_function=sld, rng=rng),
    }
    order = np.argsort(-u, kind="stable")
    print(f"== 1. NLTCS ({data.n_records:,} records): which attribute best detects '{data.label_name}'? ==")
    print(f"   utility: true positive rate of 'predict positive iff attribute = 1' (Δ = 1); "
          f"ε = {epsilon:g}, add/remove-one-record DP")
    print(f"   {'attribute':<12} {'TPR':>6} {'δ(x,0)':>9} " + " ".join(f"{'P_' + m:>8}" for m in probs))
    for r in order[:6]:
        print(f"   {data.feature_names[r]:<12} {u[r]:6.3f} {sf(0)[r]:9.2e} "
              + " ".join(f"{probs[m][r]:8.4f}" for m in probs))
    print(f"   ... ({len(u) - 6} more)")
    best = int(order[0])
    print("   picked: " + ", ".join(f"{m} -> {data.feature_names[int(p)]}" for m, p in picks.items()))
    print(f"   P(pick the best rule '{data.feature_names[best]}'): "
          + ", ".join(f"{m} {probs[m][best]:.3f}" for m in probs)
          + "  (global sensitivity 1 vs local ~1/#positives)\n")
    return data.feature_names, u, probs


def _graph_part(epsilon: float, k: int, rng: np.random.Generator) -> None:
    t0 = time.perf_counter()
    g = load_graph("enron")
    print(f"== 2. Enron email graph ({g.n_nodes:,} nodes, {g.n_edges:,} edges): private top-{k} influential "
          f"nodes, ε = {epsilon:g} in total, edge-DP ==")
    # the public bound on the maximum degree (thesis Sec. 6.5), never read from the private graph
    table = influential_demo_table(g, k=k, epsilon=epsilon, rng=rng, max_degree=PUBLIC_GRAPH_MAX_DEGREE["enron"])
    print("   " + table.replace("\n", "\n   "))
    print(f"   (local = data-dependent sensitivity; recall against the matching non-private top-{k}; "
          f"{time.perf_counter() - t0:.1f} s)\n")


def _median_part(epsilon: float, rng: np.random.Generator) -> None:
    hist = np.load(data_path("dpbench1d", "HEPTH.n4096.npy"))
    values, counts, lam = histogram_groups(hist)
    true = float(values[np.searchsorted(np.cumsum(counts), (int(counts.sum()) + 1) // 2)])
    print(f"== 3. HEPTH ({int(counts.sum()):,} records, values in [0, {lam:g}]): private median, "
          f"replace-one-record DP ==")
    for eps in (epsilon / 10, epsilon):
        released = median_error(values, epsilon=eps, bound=lam, counts=counts)
        v, p = median_probabilities(values, epsilon=eps, bound=lam, counts=counts, mechanism="local_dampening")
        print(f"   ε = {eps:<5g} expected |private − true median|: dpselect.median {released:.2f}; "
              f"thesis LD record selection {float(p @ np.abs(v - true)):.2f} (its value is not private)")
    val = median(values, epsilon=epsilon, bound=lam, counts=counts, rng=rng)
    print(f"   one release at ε = {epsilon:g}: {val:.4f} (true median {true:g})\n")


def _plot(path: Path, names: list[str], u: np.ndarray, probs: dict[str, np.ndarray]) -> None:
    plt = pyplot()
    order = np.argsort(-u, kind="stable")
    fig, ax = plt.subplots(figsize=(8, 3.5))
    width = 0.8 / len(probs)
    for i, (m, p) in enumerate(probs.items()):
        ax.bar(np.arange(len(u)) + i * width, p[order], width, label=m)
    ax.set_xticks(np.arange(len(u)) + 0.4 - width / 2)
    ax.set_xticklabels([names[r] for r in order], rotation=60, fontsize=7)
    ax.set_ylabel("selection probability")
    ax.set_title("NLTCS: pick the attribute with the best TPR (attributes by decreasing TPR)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def _check_plot_path(path: Path) -> None:
    """Refuse an unwritable ``--plot`` before the demo runs (not after its 10 s of work)."""
    if path.is_dir():
        raise SystemExit(f"error: --plot {path} is a directory; give a file name such as {path / 'demo.png'}")
    check_out_dir(path.parent, flag="--plot", shown=path)


def run(args: argparse.Namespace) -> int:
    """Run the demo: print the three parts (and write the ``--plot`` PNG when asked).

    Each private pick or release printed is ``--epsilon``-DP on its own, under the neighbour model its part
    names (the demo compares mechanisms on the same data, so it spends ε per release, not ε in all); the
    exact probabilities, expected errors and non-private references printed next to them are computed from
    the data and are for illustration only. Needs the shared data directory (``DPSELECT_DATA``).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser that :func:`add_arguments` filled.

    Returns
    -------
    int
        The exit status, 0.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="dpselect demo")
    >>> add_arguments(parser)
    >>> run(parser.parse_args(["--epsilon", "0"]))   # refused before any data is read
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a finite number > 0, got 0.0
    """
    eps = check_positive(args.epsilon, "epsilon")
    if args.plot is not None:
        _check_plot_path(Path(args.plot))
    rng = check_rng(args.seed)
    names, u, probs = _rule_selection(eps, rng)
    if not args.skip_graph:
        _graph_part(eps, args.k, rng)
    _median_part(eps, rng)
    if args.plot is not None:
        _plot(args.plot, names, u, probs)
    return 0
