"""The authors' published code's protocol, quirk by quirk, for ``--protocol paper-code`` (reproduction only).

The paper (Sec. 6-7) was run with the public repository
``victorfarias/MultiObjetiveDifferentiallyPrivateSelection`` (Python + Cython). We read it (never copied
it) and list here every place where its protocol differs from the paper's text, which is what our
default protocol (``--protocol ours``) follows. Each difference is one *quirk* that can be switched on
alone (``--quirks NAME,...``) or together (``--protocol paper-code`` = every quirk that applies to the
reproduction, ``--without NAME,...`` to leave some out), so that a difference between our numbers and
the paper's can be attributed to the quirks one by one.

**Privacy.** Several quirks are *not* what dpselect's mechanisms guarantee, and a run with them is a
reproduction of a published number, never a private release:

* ``lru-cache`` reuses dampened scores computed with another population's sensitivity (stale δ): the
  selection is then not ε-DP;
* ``delta-code``, ``agg-delta-tpr`` and ``agg-delta-ed`` use the code's sensitivity functions;
  ``agg-delta-tpr`` ignores the TNR term, so it is not an upper bound of the local sensitivity of
  3·TPR + 2·TNR (not ε-DP), and ``agg-delta-ed`` likewise ignores the degree term of Figure 3's
  degree + 100·density;
  the code's δ^egodensity is smaller than the paper's admissible one for the paper's density formula;
* ``fp-raise`` samples with the code's float path (probabilities floored at e^-1416 of the maximum,
  float rounding): not the exact law that every selector of the library samples;
* ``failed-zero`` and ``nodp-argsort`` change only how results are scored.

Facts read from the code (paths in that repository), one per quirk:

============== =================================================================================
quirk          what the published code does
============== =================================================================================
budget         ``tree/pareto_tree_dp*.py``, ``tree/weighted_tree_dp*.py``: ε / n_iter per selection
               round, ``for i in range(n_iter - 1)`` generations (k − 1) plus the final selection
               (``--budget paper-code`` of :func:`dpselect.trees.dp_moet`).
ps-weak        ``pareto/pareto_score.pyx`` ``pareto_set_score`` (used by ``tree/pareto_tree.py``):
               r' counts against r when u_i(r') >= u_i(r) in *every* objective, equal rows included,
               so identical trees lower each other's score (paper Def. 4.3: strictly larger in every
               objective). The graph experiments use ``pareto_set_score2d`` (strict, as ours).
fixed-scores   ``dp_mechanisms/exponential_mechanism.py``: the s (or o, or k) picks of one selection
               are ``np.random.choice(n, p=probs, replace=False, size=k)`` on one score vector with
               ε_round / k per pick, i.e. the Pareto scores and δ^PS are *not* recomputed on the
               remaining candidates after each pick (ours recomputes them: top-k is k sequential picks).
nodp-argsort   ``tree/pareto_tree.py`` / ``tree/weighted_tree.py`` ``select``:
               ``np.argsort(fitness)[-m:]`` (fixed scores, ties by sort order) and
               ``topk/topk_pareto.py`` ``TopkPareto``: ``np.argsort(score)[::-1][:k]``; ours picks the
               best score repeatedly with scores recomputed and ties at random (trees) or by the
               dominance / index rules of table2.
one-stream     ``experiment_tree_pareto.py`` ``run_experiment``: ``reset_seed(i)`` then the
               non-private and then the private generator from the same global stream, for every
               ε: the private run starts from the same state for all ε and both methods.
global-sens    ``tree/pareto_tree_dp.py``: the global Pareto-score sensitivity is
               ``self.X.shape[0] - 1`` (number of *records* − 1), not |population| − 1.
delta-code     ``tree/delta_tpr.pyx`` / ``delta_tnr.pyx`` (max of six one-record differences at
               (tp', p') = (max(tp − max(t − fn, 0), 1), max(p − t, 1)), float32 arithmetic),
               ``pareto/pareto_delta.pyx`` ``delta_pareto_set_ls`` (strict comparisons), and
               ``local_sensitivity/egocentric_density.pyx`` (δ = 2/(d − t − 1) while d − t > 2,
               else 1).
dampen-zero    ``dp_mechanisms/local_dampening_cy.pyx`` ``D_``: for u = 0 the walk returns the first t
               with δ(x, t, r) > 0 (the literal Def. 3.3.1), ours returns 0.
agg-delta-tpr  ``dp_mechanisms/delta_weighted.pyx``: ``w1*delta1.compute_next() +
               w2*delta1.compute_next()``: δ^agg(t) = 3·δ^TPR(2t) + 2·δ^TPR(2t + 1), δ^TNR unused.
agg-delta-ed   the same ``DeltaWeighted`` in the top-k experiment (``topk/topk_weighted.py``
               ``TopKWeightedLocalDampening.execute``, lines 69-74, with ``experiment_topk_weighted.py``
               passing ``DeltaEd, DeltaDegree`` as ``Delta1, Delta2`` and w1 = w_ed = 100, w2 = w_deg = 1):
               δ^agg(t) = 100·δ^ED(2t) + 1·δ^ED(2t + 1), the density sensitivity twice and the degree
               one (1 for every t) never: the δ of u_agg = degree + 100·density is then no upper bound of
               its local sensitivity where δ^ED(2t + 1) < 1 (Figure 3; not ε-DP).
lru-cache      ``utils/utils.py`` ``cache_numpy_array`` on ``dp_mechanisms/local_dampening.py`` ``D``:
               an LRU of 50 entries per worker process keyed on the utility array's bytes only; a
               later population with equal utilities reuses dampened scores of another δ.
fp-raise       ``np.seterr(all='raise')`` at import of ``exponential_mechanism.py``; its float path
               (shift to 708, floor at −708, ``np.exp``, normalise with an mpmath fallback,
               ``np.random.choice``) raises ``FloatingPointError`` on an inexact subnormal result.
failed-zero    ``experiment_topk_pareto.py`` (and ``experiment_tree_pareto.py``): a run that raises
               is skipped but its slot of ``np.zeros(n_experiments)`` stays in the printed mean
               (C = 0). The CSV the notebooks tabulate logs only the runs that finished; in the tree
               experiment the skip branch itself fails (``_`` unbound / an array assigned to a float
               slot), so a failing run there stops the whole experiment.
fixed-split    ``experiment_tree_weighted.py`` + ``data/loader.py`` ``split_dataset``: one 67/33
               train/test split (``random_state=0``) for every run, 500 runs.
ed-formula     ``graph/ego_influence.py`` ``compute_ed_node``: e / (d(d − 1)), degree-1 nodes 1 (the
               ``code`` variant of :func:`dpselect.utilities.graph.egocentric_density`).
tree-depths    ``tree/decision_tree.py``: ``create_random_tree(depth)`` counts *levels* (depth 1 is a
               leaf), so the initial trees have d − 1 splits on every path and ``prune_tree(d_max)``
               keeps at most d_max − 1; ``tree/pareto_tree.py`` / ``weighted_tree.py``: crossover, prune,
               then ``mutate``, which replaces a node by a random subtree of
               ``root.max_depth − node.depth + 1`` levels, i.e. keeps the tree's current height (ours
               grows the new leaves down to d_max, Sec. 6.2.2).
============== =================================================================================

Not reproduced (no switch): the code's tree representation (bigtree nodes; the law of its random trees
is the same as ours), its global numpy stream
and ray scheduling (what it changes is the pairing of random numbers, not their law), and graph-tool's
vertex order (``nodp-argsort`` uses our node order, so its ties among Pareto-score-0 nodes can differ
from the authors').
"""
from __future__ import annotations

import argparse
from collections import OrderedDict
from typing import Any, Callable, Sequence, cast

import numpy as np
from numpy.typing import ArrayLike

from dpselect._dominance import count_with_orders
from dpselect.accounting import Accountant, NonPrivate
from dpselect.dampening import dampen
from dpselect.mechanisms import exponential
from dpselect.multiobjective import pareto_score, pareto_sensitivity
from dpselect.registry import get_mechanism, names
from dpselect.sensitivity import SensitivityFunction, constant, weighted_sum
from dpselect.trees import MOETResult, TreeSpace, crossover, dp_moet, mutate, nodp_moet, prune, random_population
from dpselect.utilities.classification import rate_sensitivity
from dpselect.utilities.graph import egocentric_density_sensitivity
from dpselect.vocabulary import check_approach

__all__ = ["PROTOCOLS", "QUIRKS", "TABLE1_QUIRKS", "FIGURE2_QUIRKS", "TABLE2_QUIRKS", "FIGURE3_QUIRKS",
    "PRIVACY_NOTE", "add_protocol_arguments", "resolve_quirks", "protocol_label", "protocol_text",
    "metric_c_weak", "pareto_score_weak", "code_rate_delta", "code_rate_sensitivity",
    "first_twice_sensitivity", "code_egodensity_sensitivity", "CodeParetoSensitivity",
    "dampen_blocks", "dampen_code_pareto", "first_positive_step", "dampen_quirk",
    "DampenCache", "PROCESS_CACHE", "FloatingPointFailure", "code_exponential", "rates",
    "nodp_select_quirks", "private_select_quirks", "moet_run", "cache_note", "TopkParetoQuirks",
    "topk_reference_argsort", "TopkAggQuirks"]

PROTOCOLS = ("ours", "paper-code")

#: every quirk with a one-line description (the module docstring has the facts and file paths)
QUIRKS: dict[str, str] = {
    "budget": "ε/k per selection round over k rounds counting the final one (k − 1 generations)",
    "ps-weak": "Pareto score counts candidates >= in every objective, equal ones included",
    "fixed-scores": "the picks of one selection from one score vector (no recomputation after a pick)",
    "nodp-argsort": "non-private selection/reference = argsort of the fixed scores (ties by sort order)",
    "one-stream": "non-private and private runs from one seed per run, shared by every ε and method",
    "global-sens": "global Pareto-score sensitivity = number of records − 1",
    "delta-code": "the code's δ^TPR/δ^TNR, δ^PS (strict comparisons) and δ^egodensity",
    "dampen-zero": "D(0) = first t with δ > 0 (literal Def. 3.3.1) instead of 0",
    "agg-delta-tpr": "δ^agg(t) = 3·δ^TPR(2t) + 2·δ^TPR(2t+1) (δ^TNR unused)",
    "agg-delta-ed": "δ^agg(t) = 100·δ^egodensity(2t) + 1·δ^egodensity(2t+1) (δ^degree unused)",
    "lru-cache": "dampened scores cached (LRU 50 per process) on the utilities' bytes only: stale δ",
    "fp-raise": "the code's float sampling path; an inexact subnormal raises and the run fails",
    "failed-zero": "a failed run counts as C = 0 (else it is left out)",
    "fixed-split": "one 67/33 train/test split (seed 0) for every run",
    "ed-formula": "egocentric density e/(d(d−1)), degree-1 nodes 1 (the code's formula)",
    "tree-depths": "depths count levels (initial d − 1 and max d_max − 1 splits), crossover-prune-mutate, "
                   "mutation keeps the tree's height",
}

TABLE1_QUIRKS = ("budget", "tree-depths", "ps-weak", "fixed-scores", "nodp-argsort", "one-stream", "global-sens",
                 "delta-code", "dampen-zero", "lru-cache", "fp-raise", "failed-zero")
FIGURE2_QUIRKS = ("budget", "tree-depths", "nodp-argsort", "delta-code", "agg-delta-tpr", "lru-cache", "fp-raise",
                  "fixed-split")
TABLE2_QUIRKS = ("ed-formula", "fixed-scores", "nodp-argsort", "delta-code", "dampen-zero", "fp-raise", "failed-zero")
#: Figure 3: only the sensitivity quirks (its float sampling and argsort reference are not modelled)
FIGURE3_QUIRKS = ("delta-code", "agg-delta-ed")

#: quirks that take the selection off dpselect's exact mechanisms
_SELECTION_QUIRKS = frozenset({"ps-weak", "fixed-scores", "nodp-argsort", "global-sens", "delta-code",
                               "dampen-zero", "agg-delta-tpr", "agg-delta-ed", "lru-cache", "fp-raise"})

PRIVACY_NOTE = ("`--protocol paper-code` (or any `--quirks`) runs the published code's protocol for "
                "reproduction only: with lru-cache (stale δ), agg-delta-tpr, agg-delta-ed, delta-code (the code's "
                "δ^egodensity) or fp-raise (float sampling) the selections are not the ε-DP mechanisms "
                "dpselect guarantees.")


# -- arguments --------------------------------------------------------------------------------------
def _quirk_list(text: str) -> list[str]:
    names = [x.strip().lower() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in QUIRKS and n not in ("all", "none")]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown quirk(s) {', '.join(bad)}; choose from {', '.join(QUIRKS)}")
    return names


def add_protocol_arguments(parser: argparse.ArgumentParser, applicable: Sequence[str]) -> None:
    """--protocol, --quirks, --without (the quirks that apply: ``applicable``).

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_protocol_arguments(parser, TABLE1_QUIRKS)
    >>> parser.parse_args([]).protocol, parser.parse_args(["--protocol", "paper-code"]).protocol
    ('ours', 'paper-code')
    """
    names = ", ".join(applicable)
    parser.add_argument("--protocol", choices=PROTOCOLS, default="ours",
                        help="ours (default: the paper's text) or paper-code: the published code's protocol "
                             f"with every quirk that applies here ({names}); for reproduction only, NOT the "
                             "ε-DP guarantee of dpselect's mechanisms (stale cached δ, the code's sensitivity "
                             "functions and float sampling; see dpselect_reproductions.paper_code)")
    parser.add_argument("--quirks", type=_quirk_list, default=None, metavar="LIST",
                        help=f"exactly these quirks on top of our protocol (comma-separated, 'all' or 'none'; "
                             f"applicable: {names}); overrides --protocol")
    parser.add_argument("--without", type=_quirk_list, default=[], metavar="LIST",
                        help="quirks to leave out of --protocol paper-code / --quirks")


def resolve_quirks(args: argparse.Namespace, applicable: Sequence[str]) -> tuple[str, ...]:
    """The quirks a run uses, in the order of ``applicable``; SystemExit for one that does not apply.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_protocol_arguments(parser, TABLE2_QUIRKS)
    >>> resolve_quirks(parser.parse_args([]), TABLE2_QUIRKS)
    ()
    >>> resolve_quirks(parser.parse_args(["--protocol", "paper-code"]), TABLE2_QUIRKS) == TABLE2_QUIRKS
    True
    """
    chosen = getattr(args, "quirks", None)
    if chosen is None:
        on = set(applicable) if getattr(args, "protocol", "ours") == "paper-code" else set()
    elif "all" in chosen:
        on = set(applicable)
    else:
        on = {q for q in chosen if q != "none"}
    bad = sorted((on | set(getattr(args, "without", []) or [])) - set(applicable) - {"all", "none"})
    if bad:
        raise SystemExit(f"error: quirk(s) {', '.join(bad)} do not apply here; applicable: {', '.join(applicable)}")
    on -= set(getattr(args, "without", []) or [])
    return tuple(q for q in applicable if q in on)


def protocol_label(quirks: Sequence[str], applicable: Sequence[str]) -> str:
    """"ours", "paper-code", or the quirk list (for the CSV and the markdown).

    Examples
    --------
    >>> protocol_label((), TABLE2_QUIRKS), protocol_label(TABLE2_QUIRKS, TABLE2_QUIRKS)
    ('ours', 'paper-code')
    >>> protocol_label(("fixed-scores",), TABLE2_QUIRKS)
    'fixed-scores'
    """
    if not quirks:
        return "ours"
    if set(quirks) == set(applicable):
        return "paper-code"
    return "+".join(quirks)


def protocol_text(quirks: Sequence[str], applicable: Sequence[str]) -> str:
    """Markdown lines describing the protocol of a run.

    Examples
    --------
    >>> protocol_text((), TABLE1_QUIRKS)
    "Protocol: ours (the paper's text)."
    """
    if not quirks:
        return "Protocol: ours (the paper's text)."
    lines = [f"Protocol: **{protocol_label(quirks, applicable)}** (the published code's quirks, "
             "see `dpselect_reproductions.paper_code`):", ""]
    lines += [f"* `{q}`: {QUIRKS[q]}" for q in quirks]
    off = [q for q in applicable if q not in quirks]
    if off:
        lines += ["", f"Quirks off: {', '.join(off)}."]
    return "\n".join(lines + ["", f"**Not a private release.** {PRIVACY_NOTE}"])


# -- the metric -------------------------------------------------------------------------------------
def metric_c_weak(reference: ArrayLike, candidates: ArrayLike) -> float:
    """Metric C with *weak* Pareto domination (>= in every objective, > in one) -- what the issue thought
    Def. 4.3 says. Neither the paper (Def. 4.3: strictly larger in every objective) nor the published code
    (``pareto/pareto_metrics.py``: ``(x' < x) & (y' < y)``) uses it; :func:`dpselect.trees.metric_c` (strict
    in every objective) is the metric of both. For comparison only.

    Examples
    --------
    >>> metric_c_weak([[0.9, 0.5]], [[0.5, 0.5], [0.95, 0.1]])
    0.5
    """
    A = np.asarray(reference, dtype=np.float64)
    B = np.asarray(candidates, dtype=np.float64)
    ge = (A[:, None, :] >= B[None, :, :]).all(axis=2)
    gt = (A[:, None, :] > B[None, :, :]).any(axis=2)
    return float((ge & gt).any(axis=0).mean())


# -- scores -----------------------------------------------------------------------------------------
def pareto_score_weak(U: ArrayLike) -> np.ndarray:
    """The code's tree Pareto score: −#{r' ≠ r : u_i(r') >= u_i(r) for every i} (equal rows count).

    Examples
    --------
    >>> pareto_score_weak([[1, 1], [1, 1], [2, 0]]).tolist()
    [-1.0, -1.0, 0.0]
    """
    M = np.asarray(U, dtype=np.float64)
    ge = (M[None, :, :] >= M[:, None, :]).all(axis=2)   # ge[r, r'] = r' >= r everywhere
    return (1 - ge.sum(axis=1)).astype(np.float64)


# -- the code's sensitivity functions ---------------------------------------------------------------
def code_rate_delta(hit: ArrayLike, total: ArrayLike, t: ArrayLike) -> np.ndarray:
    """The code's δ^TPR (``tree/delta_tpr.pyx``; δ^TNR is the same with TN, N): at distance t, with
    tp' = max(tp − max(t − (p − tp), 0), 1) and p' = max(p − t, 1), the largest change of tp'/p' by one
    of six one-record moves, computed in float32 as the Cython code does.

    Examples
    --------
    >>> round(float(code_rate_delta([4], [5], 0)[0]), 6)
    0.2
    """
    f = np.float32
    tp = np.asarray(hit, dtype=np.float64)
    p = np.asarray(total, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    tp_ = np.maximum(tp - np.maximum(tt - (p - tp), 0.0), 1.0).astype(f)
    p_ = np.maximum(p - tt, 1.0).astype(f)
    one = f(1.0)
    r = tp_ / p_
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.abs(r - (tp_ + one) / (p_ + one))
        f2 = np.abs(r - tp_ / (p_ + one))
        f3 = np.where((tp_ > 1) & (p_ > 1), np.abs(r - (tp_ - one) / (p_ - one)), f(0))
        f4 = np.where((p_ > 1) & (tp_ < p_), np.abs(r - tp_ / (p_ - one)), f(0))
        f5 = np.where((p_ > 0) & (tp_ > 0), np.abs(r - (tp_ - one) / p_), f(0))
        f6 = np.where((p_ > 0) & (tp_ < p_), np.abs(r - (tp_ + one) / p_), f(0))
    out = np.maximum.reduce([f1, f2, f3, f4, f5, f6]).astype(np.float64)
    return np.nan_to_num(out, nan=0.0, posinf=1.0)


def code_rate_sensitivity(hit: ArrayLike, total: ArrayLike, *, name: str = "rate-code") -> SensitivityFunction:
    """:func:`code_rate_delta` as a SensitivityFunction (Δ = 1), elementwise in t.

    Examples
    --------
    >>> sf = code_rate_sensitivity([4, 1], [5, 5])       # TP (or TN) and P (or N) of two trees
    >>> sf, sf(0).round(6).tolist()
    (SensitivityFunction(rate-code, global_sensitivity=1, n_candidates=2), [0.2, 0.2])
    """
    h = np.asarray(hit, dtype=np.float64)
    n = np.asarray(total, dtype=np.float64)

    def fn(t, candidates=None):
        idx = np.arange(h.size) if candidates is None else candidates
        return code_rate_delta(h[idx], n[idx], t)

    return SensitivityFunction(fn, 1.0, n_candidates=h.size, name=name, elementwise=True)


def first_twice_sensitivity(weights: ArrayLike, sf_first: SensitivityFunction, *,
                            name: str = "agg-first-twice") -> SensitivityFunction:
    """``DeltaWeighted.compute_next`` of the code: w1·δ1(2t) + w2·δ1(2t + 1) -- the first objective's δ
    advanced twice per step, the second objective's never used (``agg-delta-tpr``, ``agg-delta-ed``).
    ``weights`` = (w1, w2) in the code's order (the first objective's weight first). With δ1 = δ^TPR it is
    the code's δ^agg of ``dp_mechanisms/delta_weighted.pyx`` (not admissible for w1·TPR + w2·TNR: the TNR
    term's sensitivity is ignored; reproduction only).

    Examples
    --------
    >>> sf = code_rate_sensitivity([4, 1], [5, 5])       # TP (or TN) and P (or N) of two trees
    >>> agg = first_twice_sensitivity([3.0, 2.0], sf)
    >>> agg, agg(0).round(6).tolist()                    # 3·δ(0) + 2·δ(1)
    (SensitivityFunction(agg-first-twice, global_sensitivity=5, n_candidates=2), [1.1, 1.1])
    """
    w1, w2 = (abs(float(w)) for w in np.asarray(weights, dtype=np.float64).ravel())
    sf_tpr = sf_first
    n = sf_tpr.n_candidates

    def fn(t, candidates=None):
        idx = np.arange(cast(int, n)) if candidates is None else candidates
        tt = np.asarray(t)
        if tt.ndim == 0:
            tt = np.full(idx.size, int(tt))
        return w1 * sf_tpr.at(2 * tt, idx) + w2 * sf_tpr.at(2 * tt + 1, idx)

    return SensitivityFunction(fn, w1 + w2, n_candidates=n, name=name, elementwise=True)


def code_egodensity_sensitivity(degrees: ArrayLike) -> SensitivityFunction:
    """The code's δ^egodensity (``local_sensitivity/egocentric_density.pyx``): 2/(d − t − 1) while
    d − t > 2, else 1 (the paper's admissible one is min(1, 2/(d − t − 2))).

    Examples
    --------
    >>> sf = code_egodensity_sensitivity([5, 2])
    >>> sf(0).tolist(), sf(2).tolist()
    ([0.5, 1.0], [1.0, 1.0])
    """
    d = np.asarray(degrees, dtype=np.float64)

    def fn(t, candidates=None):
        dd = d if candidates is None else d[candidates]
        tt = np.asarray(t, dtype=np.float64)
        n_ = dd - tt
        with np.errstate(divide="ignore"):
            return np.where(n_ <= 2, 1.0, 2.0 / np.maximum(n_ - 1.0, 1e-300))

    return SensitivityFunction(fn, 1.0, n_candidates=d.size, name="egodensity-code", elementwise=True)


class _CodeParetoDelta:
    """The code's δ^PS (``pareto/pareto_delta.pyx``, ``delta_pareto_set_ls``) with running sums.

    With s_j = Σ_{τ<=t} δ_j(τ) per objective, r' ≠ r counts when r' strictly dominates r and
    u_i(r') − s_i(r') < u_i(r) + s_i(r) in some objective, or when r' does not strictly dominate r and
    u_i(r') + s_i(r') > u_i(r) − s_i(r) in every objective. When every s is > 0 (the code's δ are), this
    is #{r' ≠ r : H(r') > L(r) everywhere} − #{r' ≠ r : L(r') >= H(r) everywhere} (H, L = u ± s), which
    the large-n path counts in O(n log n).
    """

    def __init__(self, U: np.ndarray, sfs: list[SensitivityFunction]) -> None:
        self.U = np.asarray(U, dtype=np.float64)
        self.sfs = sfs
        self.t = -1
        self.cum = np.zeros_like(self.U)
        self.dom = (self.U[None, :, :] > self.U[:, None, :]).all(axis=2)   # dom[r, r']: r' dominates r

    def _counts_small(self, cum: np.ndarray) -> np.ndarray:
        """Counts for every candidate from running sums ``cum`` of shape (..., n, m) -> (..., n)."""
        H, L = self.U + cum, self.U - cum
        a = self.dom & (L[..., None, :, :] < H[..., :, None, :]).any(axis=-1)
        b = ~self.dom & (H[..., None, :, :] > L[..., :, None, :]).all(axis=-1)
        cnt = a | b
        n = self.U.shape[0]
        cnt[..., np.arange(n), np.arange(n)] = False
        return cnt.sum(axis=-1).astype(np.float64)

    def block(self, t0: int, B: int, prefix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """δ^PS at t0 .. t0 + B − 1 for every candidate, (B, n), from the sums ``prefix`` at t0 − 1;
        also returns the sums at t0 + B − 1."""
        n = self.U.shape[0]
        ts = np.repeat(np.arange(t0, t0 + B)[None, :], n, axis=0).ravel()
        idx = np.repeat(np.arange(n), B)
        steps = np.stack([sf.at(ts, idx).reshape(n, B).T for sf in self.sfs], axis=-1)   # (B, n, m)
        cum = prefix[None, :, :] + np.cumsum(steps, axis=0)
        return self._counts_small(cum), cum[-1]

    def __call__(self, t: int, candidates=None) -> np.ndarray:
        if t < self.t:
            self.t, self.cum = -1, np.zeros_like(self.U)
        while self.t < t:
            self.t += 1
            for i, sf in enumerate(self.sfs):
                self.cum[:, i] += sf(self.t)
        if self.U.shape[0] <= 400:
            out = self._counts_small(self.cum)
            return out if candidates is None else out[candidates]
        H, L = self.U + self.cum, self.U - self.cum
        qH, qL = (H, L) if candidates is None else (H[candidates], L[candidates])
        if not (self.cum > 0).all():
            raise ValueError("the code's δ^PS for large n needs positive running sums")
        first = count_with_orders(H, qL, True)[0]
        second = count_with_orders(L, qH, False)[0]
        return (first - 1 - second).astype(np.float64)   # r itself: H > L everywhere, never L >= H


class CodeParetoSensitivity(SensitivityFunction):
    """The code's δ^PS as a SensitivityFunction, keeping its state for the block walk of
    :func:`dampen_code_pareto`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.sensitivity import constant
    >>> sf = CodeParetoSensitivity(np.array([[1.0, 2.0], [2.0, 1.0], [0.5, 0.5]]), [constant(3, 1.0)] * 2)
    >>> sf, sf(0).tolist()
    (SensitivityFunction(pareto-code, global_sensitivity=2, n_candidates=3), [2.0, 2.0, 2.0])
    """

    def __init__(self, U: ArrayLike, sfs: list[SensitivityFunction]) -> None:
        M = np.asarray(U, dtype=np.float64)
        self.code_state = _CodeParetoDelta(M, sfs)
        state = self.code_state

        def fn(t, candidates=None):
            return state(t, candidates)

        super().__init__(fn, float(max(M.shape[0] - 1, 1)), n_candidates=M.shape[0], name="pareto-code")


def dampen_blocks(u: ArrayLike, block: Callable[[int, int], np.ndarray], *, zero: bool, max_steps: int = 1_000_000) -> np.ndarray:
    """D(x, r) from δ given in blocks (``block(t0, B)`` -> δ at t0 .. t0 + B − 1, shape (B, n)), as the
    code's ``D_`` walks it: D = i + (|u| − b(i))/δ(i) at the i with b(i) <= |u| < b(i + 1), sign of u;
    u = 0 gives the first t with δ > 0 when ``zero`` (the code), else 0 (ours).

    Examples
    --------
    >>> import numpy as np
    >>> dampen_blocks(np.array([0.0, 1.5]), lambda t0, B: np.ones((B, 2)), zero=False).tolist()
    [0.0, 1.5]
    """
    u = np.asarray(u, dtype=np.float64)
    a = np.abs(u)
    n = a.size
    D = np.zeros(n)
    active = (a > 0) | zero
    b = np.zeros(n)
    t0, B = 0, 64
    while active.any():
        if t0 >= max_steps:
            raise ValueError("dampening did not resolve within max_steps")
        d = block(t0, B)
        c = b[None, :] + np.cumsum(d, axis=0)            # b(t0 + j + 1)
        start = np.vstack([b[None, :], c[:-1]])           # b(t0 + j)
        hit = (start <= a) & (a < c) & active[None, :]
        done = hit.any(axis=0)
        if done.any():
            j = np.argmax(hit[:, done], axis=0)
            cols = np.flatnonzero(done)
            D[cols] = t0 + j + (a[cols] - start[j, cols]) / d[j, cols]
            active &= ~done
        b = c[-1]
        t0 += B
        B = min(2 * B, 4096)
    return np.copysign(D, u) if not zero else np.where(u < 0, -D, D)


def dampen_code_pareto(u: ArrayLike, sf: CodeParetoSensitivity, *, zero: bool) -> np.ndarray:
    """D of the Pareto score with the code's δ^PS (small n), walked in blocks of t.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.multiobjective import pareto_score
    >>> from dpselect.sensitivity import constant
    >>> U = np.array([[1.0, 2.0], [2.0, 1.0], [0.5, 0.5]])
    >>> dampen_code_pareto(pareto_score(U), CodeParetoSensitivity(U, [constant(3, 1.0)] * 2), zero=True).tolist()
    [0.0, 0.0, -1.0]
    """
    state = sf.code_state
    prefix = [np.zeros_like(state.U)]

    def block(t0: int, B: int) -> np.ndarray:
        d, prefix[0] = state.block(t0, B, prefix[0])
        return d

    return dampen_blocks(u, block, zero=zero)


def first_positive_step(sf: SensitivityFunction, candidates: np.ndarray, max_steps: int = 1_000_000) -> np.ndarray:
    """For each candidate, the first t with δ(x, t, r) > 0 (the code's D(0)).

    Examples
    --------
    >>> import numpy as np
    >>> sf = code_rate_sensitivity([4, 1], [5, 5])       # TP (or TN) and P (or N) of two trees
    >>> first_positive_step(sf, np.arange(2)).tolist()
    [0.0, 0.0]
    """
    out = np.zeros(candidates.size)
    active = np.arange(candidates.size)
    t = 0
    while active.size:
        if t >= max_steps:
            raise ValueError("δ stays 0 beyond max_steps")
        d = sf(t, candidates[active])
        done = d > 0
        out[active[done]] = t
        active = active[~done]
        t += 1
    return out


def dampen_quirk(u: ArrayLike, sf: SensitivityFunction, *, zero: bool) -> np.ndarray:
    """D(x, r) by :func:`dpselect.dampening.dampen`; with ``zero`` the code's D(0) = first t with δ > 0.

    Examples
    --------
    >>> import numpy as np
    >>> sf = code_rate_sensitivity([4, 1], [5, 5])       # TP (or TN) and P (or N) of two trees
    >>> dampen_quirk(np.array([0.0, 1.0]), sf, zero=True).round(4).tolist()
    [0.0, 3.4333]
    """
    u = np.asarray(u, dtype=np.float64)
    if isinstance(sf, CodeParetoSensitivity) and sf.n_candidates is not None and sf.n_candidates <= 400:
        return dampen_code_pareto(u, sf, zero=zero)
    D = dampen(u, sf)
    if zero:
        z = np.flatnonzero(u == 0)
        if z.size:
            D[z] = first_positive_step(sf, z)
    return D


class DampenCache:
    """The code's LRU of dampened scores: 50 entries, keyed on the utility array's bytes only.

    ``get(u, key_data, compute)`` returns the cached scores when u's bytes were seen (counting a *stale*
    hit when ``key_data`` -- what δ depends on -- differs), else computes and stores them.

    Examples
    --------
    >>> import numpy as np
    >>> cache = DampenCache()
    >>> cache.get(np.array([1.0, 2.0]), b"delta-a", lambda: np.array([10.0, 20.0])).tolist()
    [10.0, 20.0]
    >>> cache.get(np.array([1.0, 2.0]), b"delta-b", lambda: np.array([0.0, 0.0])).tolist()   # stale hit
    [10.0, 20.0]
    >>> cache.counts()
    {'calls': 2, 'hits': 1, 'stale': 1}
    """

    def __init__(self, size: int = 50) -> None:
        self.size = size
        self.store: OrderedDict[bytes, tuple[bytes, np.ndarray]] = OrderedDict()
        self.hits = 0
        self.stale = 0
        self.calls = 0

    def get(self, u: np.ndarray, key_data: bytes, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The cached scores of ``u`` (a copy), or ``compute()`` stored under u's bytes.

        Examples
        --------
        >>> import numpy as np
        >>> DampenCache().get(np.zeros(2), b"", lambda: np.ones(2)).tolist()
        [1.0, 1.0]
        """
        self.calls += 1
        key = np.ascontiguousarray(u, dtype=np.float64).tobytes()
        if key in self.store:
            self.store.move_to_end(key)
            data, D = self.store[key]
            self.hits += 1
            if data != key_data:
                self.stale += 1
            return D.copy()
        D = compute()
        self.store[key] = (key_data, D.copy())
        if len(self.store) > self.size:
            self.store.popitem(last=False)
        return D

    def counts(self) -> dict:
        """Calls, hits and stale hits so far.

        Examples
        --------
        >>> DampenCache().counts()
        {'calls': 0, 'hits': 0, 'stale': 0}
        """
        return {"calls": self.calls, "hits": self.hits, "stale": self.stale}


#: one cache per worker process, as the code's ray workers have
PROCESS_CACHE = DampenCache()


# -- the code's float sampling path -----------------------------------------------------------------
class FloatingPointFailure(RuntimeError):
    """A selection failed the way the published code fails (np.seterr(all='raise')).

    A :class:`RuntimeError` raised by :func:`code_exponential` and the ``fp-raise`` quirk.

    Examples
    --------
    >>> isinstance(FloatingPointFailure("underflow in exp"), RuntimeError)
    True
    """


def code_exponential(u: ArrayLike, epsilon: float, sensitivity: float, k: int, gen: np.random.Generator) -> np.ndarray:
    """The code's ``exponential_mechanism(u, ε, Δ, k)``: ε/k per pick, scores u·(ε/k)/(2Δ) shifted to a
    maximum of 708 and floored at −708, exp, normalised (exactly, in log space, where the plain division
    under/overflows: the code's mpmath fallback), then ``choice(n, p, replace=False, size=k)`` -- all
    under ``np.errstate(all='raise')``. Fewer than k non-zero probabilities: the k largest scores.
    Raises :class:`FloatingPointFailure` where the code raises.

    Examples
    --------
    >>> import numpy as np
    >>> code_exponential(np.array([0.0, 5.0, 10.0]), 100.0, 1.0, 2, np.random.default_rng(0)).tolist()
    [2, 1]
    """
    e = epsilon / k
    s = (np.asarray(u, dtype=np.float64) * e) / (2.0 * sensitivity)
    with np.errstate(all="raise"):
        try:
            v = s - (np.amax(s) - 708.0)
            v[v < -708] = -708
            exps = np.exp(v)
            try:
                probs = exps / np.sum(exps)
            except FloatingPointError:
                with np.errstate(all="ignore"):
                    m = np.max(v)
                    lse = m + np.log(np.sum(np.exp(v - m)))
                    probs = np.exp(v - lse)
            if np.count_nonzero(probs) >= k:
                return np.asarray(gen.choice(len(s), p=probs, replace=False, size=k), dtype=np.int64)
            return np.argsort(s)[-k:].astype(np.int64)
        except (FloatingPointError, ValueError) as exc:
            raise FloatingPointFailure(str(exc)) from exc


# -- selections with quirks (DP-MOET) ---------------------------------------------------------------
def rates(tp: ArrayLike, tn: ArrayLike, n_pos: int, n_neg: int) -> np.ndarray:
    """(TPR, TNR) rows of trees with ``tp`` true positives and ``tn`` true negatives (as DP-MOET computes them).

    Examples
    --------
    >>> rates([3, 1], [2, 4], 4, 5).tolist()
    [[0.75, 0.4], [0.25, 0.8]]
    """
    tpr = np.asarray(tp, dtype=np.float64) / n_pos
    tnr = np.asarray(tn, dtype=np.float64) / n_neg
    return np.column_stack([tpr, tnr])


def _ps(U: np.ndarray, weak: bool) -> np.ndarray:
    return pareto_score_weak(U) if weak else pareto_score(U).astype(np.float64)


def _rate_sfs(tp, tn, n_pos: int, n_neg: int, code: bool) -> list[SensitivityFunction]:
    tp = np.asarray(tp, dtype=np.int64)
    tn = np.asarray(tn, dtype=np.int64)
    if code:
        return [code_rate_sensitivity(tp, np.full(tp.size, n_pos), name="tpr-code"),
                code_rate_sensitivity(tn, np.full(tn.size, n_neg), name="tnr-code")]
    return [rate_sensitivity(tp, n_pos - tp, name="tpr"), rate_sensitivity(tn, n_neg - tn, name="tnr")]


def nodp_select_quirks(U: np.ndarray, approach: str, weights: Sequence[float], n_pick: int, gen: Any,
                       quirks: Sequence[str]) -> np.ndarray:
    """The non-private selection: with ``nodp-argsort`` the code's ``argsort(score)[-m:]`` on fixed scores,
    else the best (recomputed) score repeatedly with random ties; ``ps-weak`` picks the score.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[0.75, 0.4], [0.25, 0.8], [0.5, 0.5]])
    >>> nodp_select_quirks(U, "agg", (3, 2), 2, np.random.default_rng(0), ("nodp-argsort",)).tolist()
    [2, 0]
    """
    approach = "agg" if check_approach(approach) == "aggregate" else "pareto"  # "aggregate" too
    weak = "ps-weak" in quirks
    agg = U @ np.asarray(weights, float) if approach == "agg" else None
    if "nodp-argsort" in quirks:
        score = _ps(U, weak) if agg is None else agg
        return np.argsort(score)[-n_pick:].astype(np.int64)
    remaining = np.arange(U.shape[0])
    chosen = []
    for _ in range(n_pick):
        score = _ps(U[remaining], weak) if agg is None else agg[remaining]
        best = np.flatnonzero(score == score.max())
        pick = int(best[gen.integers(best.size)]) if best.size > 1 else int(best[0])
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64)


def private_select_quirks(tp: ArrayLike, tn: ArrayLike, n_pos: int, n_neg: int, *, approach: str, local: bool,
                          weights: Sequence[float], eps: float, n_pick: int, gen: np.random.Generator, quirks: Sequence[str], n_records: int,
                          cache: DampenCache | None = None) -> np.ndarray:
    """One private DP-MOET selection of ``n_pick`` trees with the given quirks (ε = the round's budget).

    ``n_records`` (the table's records) is the ``global-sens`` quirk's sensitivity + 1; ``cache`` is the
    ``lru-cache`` quirk's (default: this process's). Raises :class:`FloatingPointFailure` (``fp-raise``)
    where the code's float path raises.

    Examples
    --------
    >>> import numpy as np
    >>> private_select_quirks([3, 1, 2], [2, 4, 3], 4, 5, approach="pareto", local=False, weights=(3, 2), eps=1.0,
    ...                       n_pick=2, gen=np.random.default_rng(0), quirks=(), n_records=9).shape
    (2,)
    """
    approach = "agg" if check_approach(approach) == "aggregate" else "pareto"  # "aggregate" too
    q = set(quirks)
    tp = np.asarray(tp, dtype=np.int64)
    tn = np.asarray(tn, dtype=np.int64)
    U = np.column_stack([tp / n_pos, tn / n_neg]).astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    cache = PROCESS_CACHE if cache is None else cache

    def scores(rows: np.ndarray) -> tuple[np.ndarray, float]:
        Ur = U[rows]
        if approach == "agg":
            u = Ur @ w
            if not local:
                return u, float(np.abs(w).sum())
            sfs = _rate_sfs(tp[rows], tn[rows], n_pos, n_neg, "delta-code" in q)
            if "agg-delta-tpr" in q:
                sf = first_twice_sensitivity(w, sfs[0], name="agg-tpr-twice")
            else:
                sf = weighted_sum([abs(float(x)) for x in w], sfs)
        else:
            u = _ps(Ur, "ps-weak" in q)
            if not local:
                return u, float((n_records if "global-sens" in q else rows.size) - 1)
            sfs = _rate_sfs(tp[rows], tn[rows], n_pos, n_neg, "delta-code" in q)
            sf = CodeParetoSensitivity(Ur, sfs) if "delta-code" in q else pareto_sensitivity(Ur, sfs)

        def compute() -> np.ndarray:
            return dampen_quirk(u, sf, zero="dampen-zero" in q)

        if "lru-cache" in q:
            key_data = np.concatenate([tp[rows], tn[rows]]).tobytes()
            return cache.get(u, key_data, compute), 1.0
        return compute(), 1.0

    # agg scores do not depend on the remaining set: one draw of n_pick
    return _select(scores, U.shape[0], n_pick, eps, gen, fp_raise="fp-raise" in q,
                   fixed="fixed-scores" in q or approach == "agg")


def _select(scores: Callable[[np.ndarray], tuple[np.ndarray, float]], n: int, k: int, epsilon: float,
            gen: np.random.Generator, *, fp_raise: bool, fixed: bool) -> np.ndarray:
    """k of n candidates: with ``fixed`` one draw of k from the scores of all n (the code), else k picks
    with ε/k each, ``scores(remaining)`` recomputed after each pick; ``fp_raise``: the code's float path."""
    def draw(s: np.ndarray, sens: float, e: float, kk: int) -> np.ndarray:
        if fp_raise:
            return code_exponential(s, e, sens, kk, gen)
        if kk == 1:
            return np.array([exponential(s, epsilon=e, sensitivity=sens, rng=gen)], dtype=np.int64)
        return np.asarray(exponential(s, epsilon=e, sensitivity=sens, k=kk, rng=gen), dtype=np.int64)

    if fixed:
        return draw(*scores(np.arange(n)), epsilon, k)
    remaining = np.arange(n)
    chosen = []
    for _ in range(k):
        i = int(draw(*scores(remaining), epsilon / k, 1)[0])
        chosen.append(int(remaining[i]))
        remaining = np.delete(remaining, i)
    return np.array(chosen, dtype=np.int64)


def moet_run(data: Any, table: Any, *, epsilon: float | None, approach: str, mechanism: str | None,
             weights: Sequence[float], population: int, selection: int, generations: int, depth: int, max_depth: int,
             output: int, budget: str, rng: Any, quirks: Sequence[str], cache: DampenCache | None = None,
             accountant: Any = None) -> Any:
    """DP-MOET / NODP-MOET (``mechanism=None``) with the published code's quirks.

    Same random-number use as :func:`dpselect.trees.dp_moet` (trees, genetic operators); with no
    selection quirk it *is* ``dp_moet`` / ``nodp_moet`` (bit for bit). ``budget`` is "paper-code" when
    the ``budget`` quirk is on. ``table`` is ``CompressedTable.from_data(data)``; ``population`` ..
    ``output`` are Alg. 1's p, s, k, d, d_max, o. Returns a :class:`dpselect.trees.MOETResult`. An ``accountant`` is charged
    ``NonPrivate`` (the published code's protocol is a reproduction, not a private release).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.trees import CompressedTable, dp_moet
    >>> from dpselect.tabular import TabularData
    >>> X = np.random.default_rng(0).random((60, 2))
    >>> d = TabularData(X, (X[:, 0] > 0.5).astype(int), ["a", "b"], [False, False], [0, 0])
    >>> sizes = dict(population=6, selection=2, generations=1, depth=2, max_depth=3, output=2)
    >>> res = moet_run(d, CompressedTable.from_data(d), epsilon=1.0, approach="pareto", mechanism="local_dampening",
    ...                weights=(3, 2), budget="even", rng=0, quirks=(), **sizes)
    >>> ref = dp_moet(d, epsilon=1.0, approach="pareto", mechanism="local_dampening", rng=0, **sizes)
    >>> len(res.trees), all(a == b for a, b in zip(res.trees, ref.trees))    # no quirk: dp_moet itself
    (2, True)
    """
    _charge_protocol(accountant, f"moet_run(quirks={','.join(quirks)})")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    code_trees = "tree-depths" in quirks
    if not _SELECTION_QUIRKS & set(quirks) and not code_trees:
        if mechanism is None:
            return nodp_moet(data, approach=approach, objective_weights=weights, population=population,
                                    selection=selection, generations=generations, depth=depth, max_depth=max_depth,
                                    output=output, budget=budget, rng=gen, compressed=table)
        if epsilon is None:
            raise ValueError("epsilon is required for a private run (mechanism given)")
        return dp_moet(data, epsilon=epsilon, approach=approach, mechanism=cast(Any, mechanism),
                              objective_weights=weights, population=population, selection=selection,
                              generations=generations, depth=depth, max_depth=max_depth, output=output,
                              budget=budget, rng=gen, compressed=table,
                              exact_statistics=True)  # metric C is measured on them (never released)
    p, s, k, d, dmax, o = population, selection, generations, depth, max_depth, output
    n_gen, rounds = (k, k + 1) if budget == "even" else (k - 1, k)
    eps_round = None if epsilon is None else epsilon / rounds
    space = TreeSpace.from_data(data)
    # the published code runs the exponential mechanism on the scores (global) or on their dampened values
    spec = None if mechanism is None else get_mechanism(
        mechanism, allowed=names(noise="gumbel", where=lambda m: m.score in ("utility", "dampened")))
    local = spec is not None and spec.score == "dampened"
    n_records = int(table.n_pos + table.n_neg)

    def select(tp, tn, n_pick):
        if mechanism is None:
            return nodp_select_quirks(rates(tp, tn, table.n_pos, table.n_neg), approach, weights, n_pick, gen,
                                      quirks)
        return private_select_quirks(tp, tn, table.n_pos, table.n_neg, approach=approach, local=local,
                                     weights=weights, eps=cast(float, eps_round), n_pick=n_pick, gen=gen, quirks=quirks,
                                     n_records=n_records, cache=cache)

    if code_trees:   # the code's depths count levels: d − 1 and d_max − 1 splits
        d, dmax = max(d - 1, 0), max(dmax - 1, 0)

    def offspring(c):
        if code_trees:   # prune, then a mutation that keeps the tree's height
            c = prune(c, dmax, rng=gen)
            return mutate(c, space, int(c.depth), rng=gen)
        return prune(mutate(c, space, dmax, rng=gen), dmax, rng=gen)

    pop = random_population(space, p, d, rng=gen)
    tp, tn = table.counts(pop)
    for _ in range(n_gen):
        idx = select(tp, tn, s)
        pop = [pop[i] for i in idx]
        tp, tn = tp[idx], tn[idx]
        children: list = []
        for _ in range(p // 2):
            cur = pop + children
            i, j = gen.choice(len(cur), size=2, replace=False)
            c1, c2 = crossover(cur[i], cur[j], rng=gen)
            children += [offspring(c1), offspring(c2)]
        ctp, ctn = table.counts(children)
        pop = pop + children
        tp, tn = np.concatenate([tp, ctp]), np.concatenate([tn, ctn])
    idx = select(tp, tn, o)
    trees = [pop[i] for i in idx]
    how = "NODP" if mechanism is None else "DP"
    return MOETResult(trees, rates(tp[idx], tn[idx], table.n_pos, table.n_neg),
                             f"{how}-MOET-{approach.capitalize()}-paper-code", epsilon, budget, n_gen, [])


def _charge_protocol(accountant: Any, label: str) -> None:
    """The published code's protocol reproduces a number, it is never a private release: ε = ∞."""
    # non-private under every relation: charged under the accountant's own
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a dpselect.Accountant or None, got {type(accountant).__name__}")
    accountant.charge(NonPrivate(), label=f"{label}: non-private (paper-code protocol)")


def cache_note(cache: DampenCache, before: dict) -> dict[str, Any]:
    """The cache counts since ``before`` (a :meth:`DampenCache.counts`).

    Examples
    --------
    >>> import numpy as np
    >>> cache = DampenCache()
    >>> before = cache.counts()
    >>> _ = cache.get(np.zeros(2), b"", lambda: np.ones(2))
    >>> cache_note(cache, before)
    {'calls': 1, 'hits': 0, 'stale': 0}
    """
    now = cache.counts()
    return {k: now[k] - before[k] for k in now}


# -- DP-MOTkIN-Pareto with quirks (table2) ----------------------------------------------------------
class TopkParetoQuirks:
    """DP-MOTkIN-Pareto (global: EM on the Pareto score, Δ = n − 1; local: local dampening on δ^PS) with the
    published code's quirks, for repeated draws on one graph.

    ``U`` = (degree, egocentric density) per node (the density formula is the caller's: ``ed-formula``).
    With ``fixed-scores`` (the code) the k picks come from the scores of all nodes, computed once; without
    it, scores and δ^PS are recomputed on the remaining nodes after each pick (cached per picked prefix).

    Examples
    --------
    >>> from dpselect.graphs import from_edges, motkin_objectives
    >>> g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
    >>> U = motkin_objectives(g)[0]                          # (degree, egocentric density) per node
    >>> sampler = TopkParetoQuirks(U, g.degrees, local=False, quirks=("fixed-scores",))
    >>> sampler.sample(k=2, epsilon=1.0, rng=np.random.default_rng(0)).shape
    (2,)
    """

    def __init__(self, U: np.ndarray, degrees: np.ndarray, *, local: bool, quirks: Sequence[str]) -> None:
        self.U = np.asarray(U, dtype=np.float64)
        self.degrees = np.asarray(degrees, dtype=np.float64)
        self.local = local
        self.q = set(quirks)
        self.n = self.U.shape[0]
        code = "delta-code" in self.q
        self._ed = (code_egodensity_sensitivity(self.degrees) if code
                    else egocentric_density_sensitivity(np.asarray(degrees, dtype=np.int64)))
        self._deg = constant(self.n, 1.0)
        self._cache: dict[tuple, tuple[np.ndarray, float]] = {}

    def _sub_sf(self, sf: SensitivityFunction, rows: np.ndarray) -> SensitivityFunction:
        def fn(t, candidates=None):
            idx = rows if candidates is None else rows[candidates]
            return sf(int(t), idx)

        return SensitivityFunction(fn, sf.global_sensitivity, n_candidates=rows.size, name=sf.name)

    def scores(self, rows: np.ndarray) -> tuple[np.ndarray, float]:
        """(scores, sensitivity) of the nodes ``rows``: Pareto scores (global) or their dampened values.

        Examples
        --------
        >>> from dpselect.graphs import from_edges, motkin_objectives
        >>> g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
        >>> U = motkin_objectives(g)[0]                          # (degree, egocentric density) per node
        >>> s, sens = TopkParetoQuirks(U, g.degrees, local=False, quirks=()).scores(np.arange(5))
        >>> s.tolist(), sens
        ([0.0, 0.0, 0.0, -1.0, -3.0], 4.0)
        """
        key = tuple(rows.tolist()) if rows.size < self.n else ()
        if key in self._cache:
            return self._cache[key]
        Ur = self.U[rows]
        ps = pareto_score(Ur).astype(np.float64)
        if not self.local:
            out = (ps, float(rows.size - 1))
        else:
            if rows.size == self.n:
                sfs = [self._deg, self._ed]
            else:
                sfs = [self._sub_sf(self._deg, rows), self._sub_sf(self._ed, rows)]
            sf = CodeParetoSensitivity(Ur, sfs) if "delta-code" in self.q else pareto_sensitivity(Ur, sfs)
            out = (dampen_quirk(ps, sf, zero="dampen-zero" in self.q), 1.0)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = out
        return out

    def sample(self, *, k: int, epsilon: float, rng: np.random.Generator, accountant: Any = None) -> np.ndarray:
        """k node indices; :class:`FloatingPointFailure` where the code's float path (``fp-raise``) raises.
        An ``accountant`` is charged ``NonPrivate`` (the published code's protocol, not a private release).

        Examples
        --------
        >>> from dpselect.graphs import from_edges, motkin_objectives
        >>> g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
        >>> U = motkin_objectives(g)[0]                          # (degree, egocentric density) per node
        >>> TopkParetoQuirks(U, g.degrees, local=True, quirks=()).sample(k=2, epsilon=1.0,
        ...                                                               rng=np.random.default_rng(0)).shape
        (2,)
        """
        _charge_protocol(accountant, f"TopkParetoQuirks.sample(quirks={','.join(sorted(self.q))})")
        return _select(self.scores, self.n, k, epsilon, rng, fp_raise="fp-raise" in self.q,
                       fixed="fixed-scores" in self.q)


def topk_reference_argsort(U: np.ndarray, k: int) -> np.ndarray:
    """The code's non-private reference (``topk/topk_pareto.py`` ``TopkPareto``):
    ``np.argsort(score)[::-1][:k]`` on the strict Pareto scores of all nodes (numpy's default sort; ties in
    *our* node order, which need not be graph-tool's vertex order of the authors' graphml files).

    Examples
    --------
    >>> topk_reference_argsort(np.array([[1.0, 2.0], [2.0, 1.0], [0.5, 0.5]]), 2).tolist()
    [1, 0]
    """
    ps = pareto_score(np.asarray(U, dtype=np.float64)).astype(np.float64)
    return np.argsort(ps)[::-1][:k].astype(np.int64)


# -- DP-MOTkIN-Agg with quirks (figure3) ------------------------------------------------------------
class TopkAggQuirks:
    """DP-MOTkIN-Agg local (local dampening on u_agg = w_deg·degree + w_ed·density, ε/k per pick) with the
    sensitivity quirks of the published top-k code. With no quirk it draws exactly what
    :class:`dpselect.graphs.MotkinSampler` draws for the same seed (paired comparisons).

    ``agg-delta-ed``: δ^agg(t) = w_ed·δ^ED(2t) + w_deg·δ^ED(2t + 1) (the code's ``DeltaWeighted`` with
    ``Delta1`` = δ^ED); ``delta-code``: the code's δ^ED (2/(d − t − 1) while d − t > 2, else 1).

    Examples
    --------
    >>> from dpselect.graphs import from_edges, motkin_objectives
    >>> g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
    >>> U = motkin_objectives(g)[0]                          # (degree, egocentric density) per node
    >>> from dpselect.graphs import MotkinSampler
    >>> ours = MotkinSampler(g, "aggregate", objective_weights=(1.0, 100.0))
    >>> a = TopkAggQuirks(U, g.degrees, (1.0, 100.0), quirks=()).sample(k=2, epsilon=1.0, rng=np.random.default_rng(0))
    >>> a.tolist() == ours.sample(k=2, epsilon=1.0, rng=np.random.default_rng(0)).tolist()
    True
    """

    def __init__(self, U: np.ndarray, degrees: np.ndarray, weights: Sequence[float], *, quirks: Sequence[str]) -> None:
        from dpselect.dampening import dampen_with_error
        from dpselect.utilities.graph import degree_sensitivity

        q = set(quirks)
        w_deg, w_ed = (float(w) for w in weights)
        deg = np.asarray(degrees)
        self.u = np.asarray(U, dtype=np.float64) @ np.asarray([w_deg, w_ed], dtype=np.float64)
        sf_ed = (code_egodensity_sensitivity(deg) if "delta-code" in q
                 else egocentric_density_sensitivity(deg.astype(np.int64)))
        if "agg-delta-ed" in q:
            self.sf = first_twice_sensitivity((w_ed, w_deg), sf_ed, name="agg-ed-twice")
        else:
            self.sf = weighted_sum([w_deg, w_ed], [degree_sensitivity(deg.astype(np.int64)), sf_ed])
        self.D, self.err = dampen_with_error(self.u, self.sf)

    def sample(self, *, k: int, epsilon: float, rng: np.random.Generator, accountant: Any = None) -> np.ndarray:
        """k node indices in the order picked (ε/k per pick). An ``accountant`` is charged ``NonPrivate``
        (the published code's protocol, not a private release).

        Examples
        --------
        >>> from dpselect.graphs import from_edges, motkin_objectives
        >>> g = from_edges([0, 0, 0, 1, 3], [1, 2, 3, 2, 4], n_nodes=5)
        >>> U = motkin_objectives(g)[0]                          # (degree, egocentric density) per node
        >>> TopkAggQuirks(U, g.degrees, (1.0, 100.0), quirks=("delta-code",)).sample(
        ...     k=3, epsilon=1.0, rng=np.random.default_rng(0)).shape
        (3,)
        """
        from dpselect.mechanisms import dampened_select

        _charge_protocol(accountant, "TopkAggQuirks.sample")
        sel = dampened_select(self.u, self.sf, self.D, self.err, float(epsilon), k, rng)
        return np.atleast_1d(np.asarray(sel, dtype=np.int64))
