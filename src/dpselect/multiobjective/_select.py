"""PrivPareto and PrivAgg (paper Def. 4.1 / 4.2, 5.1 / 5.2): a registered single-objective mechanism run on
the Pareto score or on the aggregate, and their exact output distributions."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._boundary import charge, check_accountant
from ..accounting.accountant import Accountant, Event
from .._dominance import count_dominating
from .._rng import check_rng
from .._validation import check_bool, check_choice, check_int, check_k, check_positive
from ..registry import get_mechanism
from ..sensitivity import SensitivityFunction
from ..typing import RngLike
from ..vocabulary import check_mechanism, probabilities_result, selection_result
from ..dampening import DEFAULT_MAX_STEPS
from ._aggregate import _aggregate
from ._pareto_score import Sensitivities, _as_functions, _check_sensitivities, _matrix, _pareto_sf

# Single-objective mechanisms PrivPareto and PrivAgg can use: every registered one (dpselect.MECHANISMS; short
# aliases EM, PF, RNM, LD, SLD accepted case-insensitively), with the keyword options of its spec
# (``Mechanism.options``) plus ``exact`` (default True: floating-point-safe sampling, see dpselect.sampling),
# which the *_probabilities functions ignore (exact closed forms either way).


def _resolve_mechanism(mechanism, sens: list, options: dict) -> str:
    if mechanism is None:
        mechanism = "exponential" if all(not isinstance(s, SensitivityFunction) for s in sens) else "local_dampening"
    mechanism = check_mechanism(mechanism)
    allowed = get_mechanism(mechanism).options + ("exact",)
    for key in options:
        if key in ("k", "rng", "weights", "base_measure", "epsilon", "sensitivity", "sensitivity_function",
                   "utilities"):
            raise TypeError(f"{key!r} cannot be passed as a mechanism option here")
        if key not in allowed:
            raise TypeError(f"mechanism {mechanism!r} takes the options {', '.join(allowed) or 'none'}, "
                            f"got unexpected option {key!r}")
    return mechanism


def _check_option_values(spec, n: int, options: dict, base_measure) -> None:
    """Refuse bad option values before the budget is charged (the mechanism checks them again when it runs:
    a refusal there would come after the charge, spending budget on a release that never happens)."""
    from ..mechanisms import DIRECTIONS, _check_copies, _check_weights
    noise = check_choice(options["noise"], "noise", spec.noises) if "noise" in options else (
        spec.noises[0] if spec.noises else "gumbel")
    for key in ("monotonic", "exact"):
        if key in options:
            check_bool(options[key], key)
    if "direction" in options:
        check_choice(options["direction"], "direction", DIRECTIONS)
    if "max_steps" in options:
        check_int(options["max_steps"], "max_steps", minimum=1)
    if base_measure is not None:
        _check_copies(_check_weights(base_measure, n), noise)


def _event(name: str, spec, eps: float, k: int, options: dict) -> Event:
    return Event(name, eps, k, options=(("mechanism", spec.name), *sorted(options.items())))


def _nonprivate(options: dict) -> str | None:
    """Why the release is not private (``exact=False``: float sampling), or None."""
    return "exact=False" if options.get("exact") is False else None


def _select(mechanism: str, u: np.ndarray, eps: float, sensitivity, k: int, rng, options: dict, base_measure=None):
    if base_measure is not None:
        options = {**options, "base_measure": base_measure}
    # k = 1 asked as k=None: one int index back (an int k returns an array)
    return get_mechanism(mechanism).select(u, epsilon=eps, sensitivity=sensitivity, k=None if k == 1 else k, rng=rng,
                                           **options)


def _probabilities(mechanism: str, u: np.ndarray, eps: float, sensitivity, options: dict,
                   base_measure=None) -> np.ndarray:
    if base_measure is not None:
        # every *_probabilities takes the base measure as its sampler reads it (and refuses it likewise)
        options = {**options, "base_measure": base_measure}
    return get_mechanism(mechanism).probabilities(u, epsilon=eps, sensitivity=sensitivity, **options)


def _shift_cap(spec, options: dict) -> int | None:
    """For shifted local dampening: the public distance from which δ^PS is forced to its bound where it
    does not saturate earlier, max(max_steps, DEFAULT_MAX_STEPS) (its shift was refused there: an error
    that depended on the objectives' range); None for the other mechanisms."""
    if spec.score != "shifted":
        return None
    max_steps = options.get("max_steps", DEFAULT_MAX_STEPS)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)):
        return DEFAULT_MAX_STEPS   # the mechanism option check refuses it before anything runs
    return max(int(max_steps), DEFAULT_MAX_STEPS)


def _prepare(objectives, epsilon, sensitivities, mechanism, options):
    M = _matrix(objectives, min_rows=2)
    n, m = M.shape
    eps = check_positive(epsilon, "epsilon")
    sens = _check_sensitivities(sensitivities, m, n)
    mechanism = _resolve_mechanism(mechanism, sens, options)
    if get_mechanism(mechanism).score == "shifted":
        for i, sf in enumerate(sens):
            if isinstance(sf, SensitivityFunction) and sf.saturation_distance is None:
                raise ValueError(
                    f"shifted_local_dampening needs bounded sensitivity functions, but sensitivities[{i}] "
                    f"({sf.name!r}) has no saturation_distance: use sensitivities[{i}].bounded(database_size)"
                )
    return M, n, m, eps, sens, mechanism


@selection_result
def priv_pareto(objectives: ArrayLike, *, epsilon: float, sensitivities: Sensitivities, mechanism: str | None = None,
                k: int | None = None,
                rng: RngLike = None, accountant: Accountant | None = None, **options) -> int | np.ndarray:
    """PrivPareto (paper Def. 4.1 / 4.2): privately select candidate(s) close to the Pareto front.

    Runs a single-objective mechanism on the Pareto score PS with

    * the global sensitivity n − 1 (``mechanism`` "exponential" [default when ``sensitivities`` are all
      numbers], "permute_and_flip", "report_noisy_max"), or
    * the sensitivity function δ^PS built from the per-objective sensitivity functions
      (``mechanism`` "local_dampening" [default when any entry is a SensitivityFunction] or
      "shifted_local_dampening"; global sensitivities given as numbers are then used as constant
      functions).

    Parameters
    ----------
    objectives : array of shape (n, m)
        Objective values u_i(x, r), one row per candidate (n >= 2), all maximised.
    epsilon : float
        Privacy budget, > 0 (split evenly over the k picks). Keyword-only, like every argument after
        ``objectives``.
    sensitivities : list, one entry per objective
        Global sensitivities Δu_i (numbers) or admissible SensitivityFunctions δ_i.
    mechanism : str, optional
        One of :data:`MECHANISMS` or a short alias (EM, PF, RNM, LD, SLD; any case).
    k : int, optional
        Number of distinct candidates (omitted: one). ``k > 1``: k sequential picks with ε/k each; after each pick the
        Pareto scores and δ^PS (and the global sensitivity n' − 1) are **recomputed on the remaining
        candidates**, so domination by already selected candidates no longer counts.
    rng : Generator, int or None
    accountant : dpselect.Accountant, optional
        Charged the guarantee of the whole call, ``get_mechanism(mechanism).privacy(epsilon, k=k)`` (k adaptive
        picks of ε/k) (glossary: [accountant][glossary-accountant]).
    **options
        Passed to the mechanism: ``monotonic`` (exponential, permute_and_flip, report_noisy_max),
        ``noise`` (report_noisy_max), ``direction`` (shifted_local_dampening), ``max_steps`` (local ones).

    Returns
    -------
    int or numpy.ndarray of int64
        ``k`` omitted: one candidate index (an ``int``). Any int ``k`` (1 included): an array of shape
        (k,), the indices in the order picked. With a pandas DataFrame as ``objectives``: its index
        labels instead of positions.

    Privacy
    -------
    ε-DP under the neighbour model of the sensitivities: each pick is the chosen mechanism on PS with
    a valid (global or admissible local) sensitivity over a candidate set fixed by earlier outputs
    (sequential composition over the k picks).

    Examples
    --------
    >>> U = [[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]]
    >>> priv_pareto(U, epsilon=100.0, sensitivities=[1.0, 1.0], rng=0) in (0, 1)   # the front is {a, b}
    True
    >>> out = priv_pareto(U, epsilon=100.0, sensitivities=[1.0, 1.0], k=2, rng=0)
    >>> out.shape, out.dtype, sorted(out.tolist())
    ((2,), dtype('int64'), [0, 1])
    >>> priv_pareto(U, epsilon=100.0, sensitivities=[1.0, 1.0], k=1, rng=0).shape
    (1,)
    """
    M, n, m, eps, sens, mechanism = _prepare(objectives, epsilon, sensitivities, mechanism, options)
    k = check_k(1 if k is None else k, n)
    gen = check_rng(rng)
    acc = check_accountant(accountant)
    spec = get_mechanism(mechanism)
    local = spec.kind == "local"
    sfs = _as_functions(sens, n) if local else []
    # local mechanisms complete on every dataset: local dampening's walk is clipped at max_steps, shifted
    # local dampening's δ^PS is forced to its bound from a public distance on (_shift_cap)
    cap = _shift_cap(spec, options)
    _check_option_values(spec, n, options, None)
    # the k picks are k adaptive releases of ε/k (a last pick fixed by the earlier ones costs nothing: charging
    # it too is conservative)
    charge(acc, spec.privacy(eps, k=k, **options), label=f"priv_pareto(mechanism={spec.name!r}, k={k})",
           event=_event("priv_pareto", spec, eps, k, options), nonprivate=_nonprivate(options),
           neighbours=None)   # the sensitivities' relation: the caller's claim under the accountant's
    remaining = np.arange(n)
    picks: list[int] = []
    for _ in range(k):
        if remaining.size == 1:  # fixed by the earlier (public) picks: no budget needed
            picks.append(int(remaining[0]))
            break
        sub = M[remaining]
        ps = -count_dominating(sub, strict=True)
        if local:
            sens_k: float | SensitivityFunction = _pareto_sf(sub, sfs, None if remaining.size == n else remaining,
                                                             cap)
        else:
            sens_k = float(remaining.size - 1)
        j = int(_select(mechanism, ps.astype(np.float64), eps / k, sens_k, 1, gen, options))
        picks.append(int(remaining[j]))
        remaining = np.delete(remaining, j)
    return picks[0] if k == 1 else np.asarray(picks, dtype=np.int64)


@probabilities_result
def priv_pareto_probabilities(objectives: ArrayLike, *, epsilon: float, sensitivities: Sensitivities,
                              mechanism: str | None = None,
                              **options) -> np.ndarray:
    """Exact output distribution of :func:`priv_pareto` with ``k`` omitted (one pick).

    Closed forms for "exponential", "permute_and_flip" (small n), "local_dampening" and
    "shifted_local_dampening"; "report_noisy_max" with Gumbel or exponential noise reduces to the first
    two, Laplace noise is integrated numerically (small n).

    Parameters
    ----------
    objectives, epsilon, sensitivities, mechanism, **options
        As in :func:`priv_pareto` (``exact`` is accepted and ignored: the probabilities are exact either
        way).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        P[priv_pareto(...) = r] for every candidate r (sums to 1). With a pandas DataFrame as ``objectives``:
        a Series indexed like it, named "probability".

    Examples
    --------
    >>> p = priv_pareto_probabilities([[3, 5], [5, 3], [4, 2], [2, 4], [1, 1]], epsilon=4.0, sensitivities=[1.0, 1.0])
    >>> p.round(3).tolist()         # exponential mechanism: ∝ exp(ε·PS/(2·4)), PS = 0, 0, -1, -1, -4
    [0.299, 0.299, 0.181, 0.181, 0.04]
    """
    M, n, m, eps, sens, mechanism = _prepare(objectives, epsilon, sensitivities, mechanism, options)
    ps = -count_dominating(M, strict=True)
    spec = get_mechanism(mechanism)
    if spec.kind == "local":
        sfs = _as_functions(sens, n)
        sens_k: float | SensitivityFunction = _pareto_sf(M, sfs, None, _shift_cap(spec, options))
    else:
        sens_k = float(n - 1)
    return _probabilities(mechanism, ps.astype(np.float64), eps, sens_k, options)


@selection_result
def priv_agg(objectives: ArrayLike, objective_weights: ArrayLike, *, epsilon: float, sensitivities: Sensitivities,
             mechanism: str | None = None, k: int | None = None, rng: RngLike = None,
             base_measure: ArrayLike | None = None, accountant: Accountant | None = None,
             **options) -> int | np.ndarray:
    """PrivAgg (paper Def. 5.1 / 5.2): privately select candidate(s) maximising Σ_i w_i u_i.

    The aggregate utility u_agg = objectives @ objective_weights goes to a single-objective mechanism with global
    sensitivity Σ_i |w_i| Δu_i (Thm 5.3; "exponential" [default when ``sensitivities`` are all numbers],
    "permute_and_flip", "report_noisy_max") or with the sensitivity function
    δ^agg = Σ_i |w_i| δ_i (Thm 5.4; "local_dampening" [default when any entry is a SensitivityFunction]
    or "shifted_local_dampening"; numbers are then used as constant functions).

    Parameters
    ----------
    objectives : array of shape (n, m)
        Objective values, one row per candidate (n >= 2).
    objective_weights : array of shape (m,)
        The w_i: finite, not all zero (negative weights are allowed). Required.
    epsilon, sensitivities, mechanism, rng, accountant, **options
        As in :func:`priv_pareto` (keywords; ``epsilon`` and ``sensitivities`` are required).
    k : int, optional
        Omitted: one candidate. ``k > 1``: k distinct candidates, ε/k each (the aggregate does not depend on the remaining set).
    base_measure : array of shape (n,), optional
        A base measure on the candidates, passed to the mechanism (see :mod:`dpselect.mechanisms`).

    Returns
    -------
    int or numpy.ndarray of int64
        ``k`` omitted: one candidate index (an ``int``). Any int ``k`` (1 included): an array of shape
        (k,), the indices in the order picked. With a pandas DataFrame as ``objectives``: its index
        labels instead of positions.

    Privacy
    -------
    ε-DP under the neighbour model of the sensitivities.

    Examples
    --------
    >>> priv_agg([[0.9, 0.1], [0.6, 0.7], [0.2, 0.3]], [0.5, 0.5], epsilon=1000.0, sensitivities=[1.0, 1.0], rng=0)
    1
    >>> priv_agg([[0.9, 0.1], [0.6, 0.7], [0.2, 0.3]], [0.5, 0.5], epsilon=1000.0, sensitivities=[1.0, 1.0], k=2,
    ...          rng=0).tolist()
    [1, 0]
    """
    M, n, m, eps, sens, mechanism = _prepare(objectives, epsilon, sensitivities, mechanism, options)
    k = check_k(1 if k is None else k, n)
    u, sensitivity = _aggregate(M, objective_weights, sens, mechanism, n, m)
    gen = check_rng(rng)
    acc = check_accountant(accountant)
    spec = get_mechanism(mechanism)
    _check_option_values(spec, n, options, base_measure)
    charge(acc, spec.privacy(eps, k=k, **options), label=f"priv_agg(mechanism={spec.name!r}, k={k})",
           event=_event("priv_agg", spec, eps, k, options), nonprivate=_nonprivate(options), neighbours=None)
    out = _select(mechanism, u, eps, sensitivity, k, gen, options, base_measure)
    return int(out) if k == 1 else np.asarray(out, dtype=np.int64)


@probabilities_result
def priv_agg_probabilities(objectives: ArrayLike, objective_weights: ArrayLike, *, epsilon: float,
                           sensitivities: Sensitivities,
                           mechanism: str | None = None,
                           base_measure: ArrayLike | None = None, **options) -> np.ndarray:
    """Exact output distribution of :func:`priv_agg` with ``k`` omitted (one pick).

    Parameters
    ----------
    objectives, objective_weights, epsilon, sensitivities, mechanism, base_measure, **options
        As in :func:`priv_agg` (``exact`` is accepted and ignored).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        P[priv_agg(...) = r] for every candidate r (a pandas Series for a DataFrame input).

    Examples
    --------
    >>> priv_agg_probabilities([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0]).tolist()
    [0.5, 0.5]
    """
    M, n, m, eps, sens, mechanism = _prepare(objectives, epsilon, sensitivities, mechanism, options)
    u, sensitivity = _aggregate(M, objective_weights, sens, mechanism, n, m)
    return _probabilities(mechanism, u, eps, sensitivity, options, base_measure)
