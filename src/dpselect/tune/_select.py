"""``select_private_candidate`` and ``tuning_privacy``: the driver of private selection from private candidates."""
from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from .._boundary import charge, check_accountant
from ..accounting.accountant import Event
from .._exact_random import next_word
from .._rng import check_rng
from ..typing import RngLike
from .._validation import check_choice, short_repr
from ._privacy import METHODS, TuningGuarantee, procedure_guarantee
from ._stopping import _Law, make_law

__all__ = ["TuneResult", "select_private_candidate", "tuning_privacy"]


@dataclass(frozen=True)
class TuneResult:
    """What a private selection from private candidates releases.

    The number of runs and the losing runs are *not* part of the result: the analyses do not cover them.

    Attributes
    ----------
    candidate : object or None
        The candidate of the best run (highest score; the earliest run among equal scores), or of the first
        run whose score reached the threshold (``"liu_talwar_threshold"``); None when nothing is released
        (``"poisson"`` drew no run, no run reached the threshold, or every run failed with a NaN score).
    score : float or None
        The score of that run (the analyses cover the pair (score, candidate)); None with ``candidate``.
    privacy : TuningGuarantee
        The certified guarantee of the whole procedure (``.epsilon(delta)``; ``.composable()`` to charge).
    method : str
        The method used.

    Examples
    --------
    >>> from dpselect.tune import select_private_candidate
    >>> res = select_private_candidate(lambda g: (1.0, "a"), run_privacy=0.5, method="liu_talwar", rng=0)
    >>> res.candidate, res.score, round(res.privacy.epsilon(), 3), res.method
    ('a', 1.0, 1.315, 'liu_talwar')
    """

    candidate: Any
    score: Optional[float]
    privacy: TuningGuarantee
    method: str


def _check_mean(mean_runs: Any, method: str) -> float:
    if isinstance(mean_runs, bool) or not isinstance(mean_runs, numbers.Real):
        raise TypeError(f"mean_runs must be a number, got {short_repr(mean_runs)}")
    m = float(mean_runs)
    lo_ok = m > 0.0 if method == "poisson" else m > 1.0
    top = 500.0 if method == "poisson" else 1e4         # Poisson: e^-μ stays a normal float in the sampler
    if not (math.isfinite(m) and lo_ok and m <= top):
        need = "> 0" if method == "poisson" else "> 1"
        raise ValueError(f"mean_runs (the expected number of runs) must be a finite number {need} and <= {top:g} "
                         f"for method={method!r}, got {short_repr(mean_runs)}")
    return m


def _check_eta(eta: Any, method: str) -> float:
    if isinstance(eta, bool) or not isinstance(eta, numbers.Real):
        raise TypeError(f"eta must be a number, got {short_repr(eta)}")
    e = float(eta)
    if method == "truncated_negative_binomial" and not (math.isfinite(e) and e > -1.0 and e != 0.0 and e <= 1e3):
        raise ValueError(f"eta (the shape of the truncated negative binomial) must be in (-1, 1000] and not 0 "
                         f"(eta = 0 is method='logarithmic', eta = 1 method='geometric'), got {short_repr(eta)}")
    return e


def _prepare(run_privacy: Any, method: Any, mean_runs: Any, eta: Any) -> tuple[str, _Law, TuningGuarantee]:
    m = check_choice(method, "method", METHODS)
    mean = _check_mean(mean_runs, m)
    e = _check_eta(eta, m) if m == "truncated_negative_binomial" else 0.0
    try:
        return _prepared(run_privacy, m, mean, e)
    except TypeError as err:
        if "unhashable" not in str(err):
            raise
        law = make_law(m, mean, e)
        return m, law, procedure_guarantee(run_privacy, m, law)


@functools.lru_cache(maxsize=256)
def _prepared(run_privacy: Any, m: str, mean: float, e: float) -> tuple[str, _Law, TuningGuarantee]:
    """The law and the guarantee, computed once per (guarantee value, method, mean, η): values are frozen."""
    law = make_law(m, mean, e)
    return m, law, procedure_guarantee(run_privacy, m, law)


def tuning_privacy(run_privacy: Any, *, method: str, mean_runs: float, eta: float = 0.5) -> TuningGuarantee:
    """The certified guarantee of :func:`select_private_candidate` (its ``TuneResult.privacy``), without running.

    Use it to choose the per-run budget: the guarantee grows with the run's and with ``mean_runs``.

    Parameters
    ----------
    run_privacy : float or Guarantee
        The guarantee of one run: a float ε (pure ε-DP), ``PureDP``, ``ApproxDP(ε, δ)``,
        ``GaussianMechanism(σ)``, ``ZCDP``, an ``RDP`` curve, or any guarantee value with an RDP curve.
    method : {"liu_talwar", "liu_talwar_threshold", "geometric", "logarithmic", "truncated_negative_binomial", \
"poisson"}
        The law of the number of runs and its analysis (see ``docs/tuning.md``).
    mean_runs : float
        The expected number of runs E[K] (> 1, at most 10^4; for ``"poisson"`` > 0, at most 500).
    eta : float, default 0.5
        The shape η of ``"truncated_negative_binomial"``, in (−1, ∞) \\ {0}; ignored by the other methods.

    Returns
    -------
    TuningGuarantee
        ``.epsilon(delta)``: the smallest ε the valid analyses certify at δ.

    Raises
    ------
    ValueError
        A bad method, mean or η; a Liu–Talwar method on a run that is not pure / (ε, δ)-DP.
    TypeError
        ``run_privacy`` is neither a number nor a guarantee value.

    Examples
    --------
    >>> from dpselect.accounting import GaussianMechanism
    >>> g = tuning_privacy(1.0, method="liu_talwar", mean_runs=10.0)
    >>> g.pure_epsilon, round(g.epsilon(0.0), 3)           # Liu & Talwar: 3ε; privacy profile: lower
    (3.0, 2.593)
    >>> round(tuning_privacy(1.0, method="truncated_negative_binomial", mean_runs=10.0, eta=0.5).epsilon(0.0), 3)
    2.3
    >>> gm = GaussianMechanism(3.7306)                     # (1, 1e-5)-DP
    >>> round(tuning_privacy(gm, method="logarithmic", mean_runs=10.0).epsilon(1e-5), 2)
    1.51
    """
    return _prepare(run_privacy, method, mean_runs, eta)[2]


#: The one message of a malformed run output. It names neither the run's index nor what it returned: both
#: depend on the data (which of the K runs misbehaves, and its output, are outputs of private runs).
_BAD_RUN_OUTPUT = ("run(rng) must return a (score, candidate) tuple whose score is a real number (int or float, "
                   "not bool); a run returned something else (which run, and what it returned, are not shown: "
                   "they depend on the data)")


def _check_run_output(out: Any) -> tuple[float, Any]:
    """``(score, candidate)`` of one run, the score as a float; NaN is kept (a failed run, never the best)."""
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(_BAD_RUN_OUTPUT)
    score, cand = out
    if isinstance(score, (bool, np.bool_)) or not isinstance(score, numbers.Real):
        raise TypeError(_BAD_RUN_OUTPUT)
    try:
        s = float(score)
    except (TypeError, ValueError, OverflowError):   # a Real whose float() fails (a huge Fraction, ...)
        raise TypeError(_BAD_RUN_OUTPUT) from None
    return s, cand


def _child(root: int, index: int) -> np.random.Generator:
    """The generator of run ``index``: a function of the root entropy and the index only (so of neither the
    worker count nor the order in which runs finish)."""
    return np.random.default_rng(np.random.SeedSequence(entropy=root, spawn_key=(index,)))


def _run_all(run: Callable[[np.random.Generator], Any], k: int, root: int, n_jobs: Any,
             threshold: float | None) -> list[tuple[float, Any]]:
    """The runs in index order (all K of them; with a threshold, up to the first that reaches it)."""
    workers = 1
    parallel = None
    if n_jobs is not None and n_jobs != 1 and k > 1:
        try:
            import joblib
        except ImportError:                              # optional: the sklearn extra brings it
            warnings.warn("n_jobs needs joblib (pip install joblib); running the runs sequentially",
                          RuntimeWarning, stacklevel=3)
        else:
            parallel = joblib.Parallel(n_jobs=n_jobs)
            workers = max(1, int(joblib.effective_n_jobs(n_jobs)))
    results: list[tuple[float, Any]] = []
    step = max(1, k) if threshold is None else workers
    for start in range(0, k, step):
        idx = range(start, min(k, start + step))
        if parallel is not None and len(idx) > 1:
            import joblib
            outs = parallel(joblib.delayed(run)(_child(root, i)) for i in idx)
        else:
            outs = [run(_child(root, i)) for i in idx]
        for o in outs:
            s, c = _check_run_output(o)
            results.append((s, c))
            if threshold is not None and s >= threshold:   # False for NaN: a failed run never reaches it
                return results
    return results


def select_private_candidate(run: Callable[[np.random.Generator], Any], *, run_privacy: Any,
                             method: str = "truncated_negative_binomial", mean_runs: float = 10.0,
                             eta: float = 0.5, threshold: float | None = None, rng: RngLike = None,
                             accountant: Any = None, n_jobs: int | None = None) -> TuneResult:
    """Private selection from private candidates: the best of a random number of private runs.

    Draws the number of runs K from the law of ``method`` (exactly, before any run and independently of the
    data), calls ``run`` K times with independent generators, and releases the (score, candidate) of the
    best run (highest score; the earliest among equal scores). With ``method="liu_talwar_threshold"`` it
    releases the first run whose score reaches ``threshold`` (nothing if none of the K runs does). K and
    the other runs are not released. Neighbour model: the run's (whatever ``run_privacy`` certifies).

    Guarantees (``docs/tuning.md``): Liu & Talwar (2019) random stopping on an ε-DP run, 3ε-DP; their
    known-threshold variant, 2ε-DP; Papernot & Steinke (2022) for the truncated negative binomial (η),
    logarithmic, geometric and Poisson laws from the run's RDP curve (pure (2 + η)ε for an ε-DP run); an
    (ε, δ)-DP run adds δ·E[K]. ``TuneResult.privacy.epsilon(delta)`` is the minimum of the valid analyses.

    Parameters
    ----------
    run : callable
        ``run(rng) -> (score, candidate)``: one private run (it must satisfy ``run_privacy`` on the data and
        use only ``rng`` for its randomness); the score is a real number (higher is better). A NaN score is a
        failed run: it is never the best and never reaches ``threshold``; when every run fails nothing is
        released (``candidate`` and ``score`` None), as when no run reaches the threshold.
    run_privacy : float or Guarantee
        The guarantee of one run: a float ε (pure ε-DP), ``PureDP``, ``ApproxDP(ε, δ)``,
        ``GaussianMechanism(σ)``, ``ZCDP`` or an ``RDP`` curve.
    method : {"truncated_negative_binomial", "logarithmic", "geometric", "poisson", "liu_talwar", \
"liu_talwar_threshold"}
        The law of K and its analysis. Default ``"truncated_negative_binomial"``.
    mean_runs : float, default 10.0
        E[K] (> 1, at most 10^4; for ``"poisson"`` > 0, at most 500). The law's parameter is solved from it in
        float and the guarantee is computed for that float, read as an exact rational.
    eta : float, default 0.5
        The shape η of ``"truncated_negative_binomial"`` in (−1, ∞) \\ {0}.
    threshold : float, optional
        The known threshold of ``"liu_talwar_threshold"`` (required there, refused elsewhere).
    rng : None, int, SeedSequence, BitGenerator or Generator
        The randomness: K is drawn from it (exactly), then 128 bits of root entropy; run i gets the
        generator of ``SeedSequence(root, spawn_key=(i,))``, so results do not depend on ``n_jobs``.
    accountant : Accountant, optional
        Charged ``privacy.composable()`` (glossary: [accountant][glossary-accountant]).
    n_jobs : int, optional
        Run the runs in parallel with joblib (optional dependency; sequential without it). None or 1:
        sequential.

    Returns
    -------
    TuneResult
        ``candidate``, ``score``, ``privacy`` (the certified guarantee) and ``method``.

    Raises
    ------
    TypeError
        ``run`` not callable; a bad ``run_privacy``, ``accountant`` or ``rng``; a run returning something
        other than (real score, candidate), with one fixed message (it names neither the run nor its output,
        which depend on the data).
    ValueError
        A bad method, mean, η, threshold or ``n_jobs``.
    BudgetExceededError
        The accountant refuses the charge.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.accounting import PureDP
    >>> def run(g):                                 # a toy 0.1-DP run: a noisy score of a random setting
    ...     lr = g.choice([0.01, 0.1, 1.0])
    ...     return float(-abs(np.log10(lr) + 1) + g.laplace(scale=10.0)), lr
    >>> res = select_private_candidate(run, run_privacy=PureDP(0.1), method="liu_talwar", mean_runs=5.0, rng=1)
    >>> res.candidate in (0.01, 0.1, 1.0), round(res.privacy.epsilon(0.0), 3)
    (True, 0.235)
    """
    if not callable(run):
        raise TypeError(f"run must be callable (rng -> (score, candidate)), got {short_repr(run)}")
    m, law, guarantee = _prepare(run_privacy, method, mean_runs, eta)
    if m == "liu_talwar_threshold":
        if threshold is None or isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) \
                or math.isnan(float(threshold)):
            raise ValueError(f"method='liu_talwar_threshold' needs threshold= (a number fixed before seeing the "
                             f"data), got {short_repr(threshold)}")
        thr: float | None = float(threshold)
    else:
        if threshold is not None:
            raise ValueError(f"threshold= is used by method='liu_talwar_threshold' only, got method={m!r}")
        thr = None
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                               or int(n_jobs) == 0):
        raise ValueError(f"n_jobs must be None or a non-zero int (joblib convention), got {short_repr(n_jobs)}")
    acc = check_accountant(accountant)
    gen = check_rng(rng)
    if acc is not None:     # run_privacy's relation: the caller's claim under the accountant's
        charge(acc, guarantee.composable(), label=f"select_private_candidate({m}, mean_runs={float(mean_runs)!r})",
               neighbours=None, event=Event("select_private_candidate", options=(
                   ("method", m), ("mean_runs", float(mean_runs)), ("base_run", run_privacy))))
    k = law.sample(gen)
    root = next_word(gen) << 64 | next_word(gen)      # the runs' seeds: drawn after K, from the same rng
    results = _run_all(run, k, root, n_jobs, thr)
    if thr is not None:
        if results and results[-1][0] >= thr:
            return TuneResult(results[-1][1], results[-1][0], guarantee, m)
        return TuneResult(None, None, guarantee, m)
    best = _best(results)
    if best is None:
        return TuneResult(None, None, guarantee, m)
    return TuneResult(results[best][1], results[best][0], guarantee, m)


def _best(results: list[tuple[float, Any]]) -> int | None:
    """The index of the best run: the highest score, the earliest among equal scores; None when no run has a
    score (no run, or every score NaN).

    A NaN score is a failed run, ordered below every score: it is never the best, so the release is a function
    of the runs' outputs under one fixed total order (what the analyses assume), and nothing about a failed
    run (its index, or that it failed) is released beyond that."""
    best = None
    for i, (s, _) in enumerate(results):
        if s == s and (best is None or s > results[best][0]):     # s == s: not NaN
            best = i
    return best
