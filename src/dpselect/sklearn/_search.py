"""Private hyperparameter search: :class:`PrivateSearchCV`, a private ``RandomizedSearchCV``.

Every run of the search samples parameters from public distributions, fits a differentially private
estimator on the training part and scores it with a differentially private score on the validation part;
:func:`dpselect.tune.select_private_candidate` repeats the run a random number of times and releases the
best one, with the certified guarantee of the whole procedure.

The estimator protocol
----------------------
An estimator can be searched when it **declares its guarantee**:

* a constructor parameter ``epsilon`` (the per-run budget the search sets on every clone), and
* a method ``privacy_guarantee(self) -> dpselect.accounting.Guarantee``: the guarantee of one ``fit``
  with the current parameters, with respect to adding or removing one record of ``(X, y)``, computed
  from the parameters alone (never from data).

:class:`~dpselect.sklearn.DiffPID3Classifier` and :class:`~dpselect.sklearn.DPMOETClassifier` implement
it; ``docs/search.md`` shows a small DP estimator written by a user that follows it.
"""
from __future__ import annotations

import copy
import itertools
import math
import numbers
import random
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, indexable

from .._boundary import charge, check_accountant
from ..accounting.neighbours import ADD_REMOVE
from ..exceptions import _release_scope
from .._exact_random import discrete_laplace
from .._rng import check_rng
from ..accounting._numeric import check_delta
from ..accounting.guarantees import RDP, ApproxDP, Guarantee, PureDP
from .. import tune as _tune

__all__ = ["PrivateSearchCV"]

#: The score names PrivateSearchCV accepts (a DP score is a mechanism, not any function of the data).
SCORINGS = ("accuracy",)

# parameters the search sets itself (or refuses): never searched
_RESERVED = ("epsilon", "accountant", "random_state")

# a grid of lists at most this large is checked value by value before the accountant is charged
_CHECK_ALL_UP_TO = 4096


# ---------------------------------------------------------------------------------------------------
# the protocol and the parameter space
# ---------------------------------------------------------------------------------------------------
def _check_protocol(estimator: Any) -> None:
    """The estimator declares its guarantee (``privacy_guarantee()``, ``epsilon``); no accountant of its own."""
    if isinstance(estimator, type):
        raise TypeError(f"estimator must be an estimator instance, got the class {estimator.__name__}")
    if not hasattr(estimator, "get_params") or not hasattr(estimator, "fit"):
        raise TypeError(f"estimator must be a scikit-learn estimator (get_params, fit), got {type(estimator).__name__}")
    if not callable(getattr(estimator, "privacy_guarantee", None)) or "epsilon" not in estimator.get_params(deep=False):
        raise TypeError(f"estimator {type(estimator).__name__} does not declare its privacy guarantee: PrivateSearchCV "
                        "needs a DP estimator with a constructor parameter `epsilon` and a method "
                        "`privacy_guarantee()` returning a dpselect.accounting.Guarantee (see the "
                        "PrivateSearchCV docstring, 'The estimator protocol'); a non-private estimator cannot be "
                        "searched privately")
    if estimator.get_params(deep=False).get("accountant") is not None:
        raise ValueError("give the accountant to PrivateSearchCV(accountant=...), not to the estimator: the search "
                         "charges the whole procedure once (the estimator's own accountant would be charged by "
                         "every run)")


def _is_distribution(v: Any) -> bool:
    return hasattr(v, "rvs") and hasattr(v, "dist")     # a scipy.stats frozen distribution


def _check_distributions(param_distributions: Any, estimator: Any) -> list[dict[str, Any]]:
    """``param_distributions`` as a non-empty list of dicts name -> list or frozen distribution (checked)."""
    if isinstance(param_distributions, Mapping):
        grids = [param_distributions]
    elif isinstance(param_distributions, (list, tuple)) and param_distributions and all(
            isinstance(g, Mapping) for g in param_distributions):
        grids = list(param_distributions)
    else:
        raise TypeError("param_distributions must be a dict parameter name -> list of values or scipy.stats frozen "
                        f"distribution (or a non-empty list of such dicts), got {type(param_distributions).__name__}")
    valid = estimator.get_params(deep=True)
    out = []
    for grid in grids:
        checked: dict[str, Any] = {}
        for name, values in grid.items():
            if not isinstance(name, str):
                raise TypeError(f"param_distributions keys must be parameter names (str), got {name!r}")
            if name in _RESERVED:
                raise ValueError(f"param_distributions must not hold {name!r}: PrivateSearchCV sets "
                                 + ("the per-run budget itself (from epsilon, delta, method and mean_runs)"
                                    if name == "epsilon" else
                                    "each run's random_state from its rng" if name == "random_state" else
                                    "no accountant on the runs (give accountant= to the search)"))
            if name not in valid:
                raise ValueError(f"param_distributions names {name!r}, which is not a parameter of "
                                 f"{type(estimator).__name__} (valid: {sorted(valid)[:20]})")
            if _is_distribution(values):
                checked[name] = values
                continue
            if callable(values):
                raise TypeError(f"param_distributions[{name!r}] is a callable: refused, a function may look at the "
                                "data; give a list of values or a scipy.stats frozen distribution")
            if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) or len(values) == 0:
                raise TypeError(f"param_distributions[{name!r}] must be a non-empty list of values or a scipy.stats "
                                f"frozen distribution, got {values!r}")
            vals = list(values)
            for v in vals:
                if callable(v) and not isinstance(v, type) and not hasattr(v, "get_params"):
                    raise TypeError(f"param_distributions[{name!r}] holds the callable {v!r}: refused, a function may "
                                    "look at the data (give its result as a value)")
            checked[name] = vals
        out.append(checked)
    return out


def _data_dependent(value: Any, X: Any, y: Any) -> bool:
    """Whether a parameter value is the data itself, or an array sharing its memory (a view of ``X``).

    (No test on sizes: refusing a value "of one entry per record" would make the refusal, a release,
    depend on the number of records, which is private under add/remove-one.)
    """
    if value is X or value is y:
        return True
    if isinstance(value, np.ndarray):
        return any(isinstance(d, np.ndarray) and np.may_share_memory(value, d) for d in (X, y))
    if isinstance(value, (list, tuple)):
        return any(_data_dependent(v, X, y) for v in value)
    if isinstance(value, Mapping):
        return any(_data_dependent(v, X, y) for v in value.values())
    return False


def _check_not_from_data(grids: list[dict[str, Any]], X: Any, y: Any) -> None:
    for grid in grids:
        for name, values in grid.items():
            items = ([*values.args, *values.kwds.values()] if _is_distribution(values) else values)
            for v in items:
                if _data_dependent(v, X, y):
                    raise ValueError(f"param_distributions[{name!r}] holds the data itself (X, y or a view of "
                                     "them): the parameter space must be public, fixed before looking at the data")


#: What holds or reproduces random bits: a released estimator must hold none of these
_RANDOM_TYPES: tuple[type, ...] = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                                   np.random.SeedSequence, random.Random)


def _random_state_in(obj: Any, seed: int | None, path: str, seen: set[int], depth: int = 0) -> str | None:
    """The path of a random state (a generator, or the int ``seed``) reachable from ``obj``, or None.

    Walks attributes, mappings, sequences and integer arrays (to a depth of 8: a fitted estimator's
    attributes and the objects they hold).
    """
    if depth > 8 or obj is None or isinstance(obj, (bool, str, bytes, float, complex, type)):
        return None
    if isinstance(obj, _RANDOM_TYPES):
        return path
    if isinstance(obj, numbers.Integral):
        return path if seed is not None and int(obj) == seed else None
    if isinstance(obj, np.ndarray):
        if seed is not None and obj.dtype.kind in "iu" and obj.size and bool(np.any(obj == seed)):
            return path
        if obj.dtype != object:
            return None
        return next((p for i, v in enumerate(obj.ravel().tolist())
                     if (p := _random_state_in(v, seed, f"{path}[{i}]", seen, depth + 1))), None)
    if id(obj) in seen or callable(obj) and not hasattr(obj, "__dict__"):
        return None
    seen.add(id(obj))
    if isinstance(obj, Mapping):
        items: Iterator[tuple[str, Any]] = ((f"{path}[{k!r}]", v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(obj))
    elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
        names = list(getattr(obj, "__dict__", {})) + [n for c in type(obj).__mro__
                                                      for n in getattr(c, "__slots__", ()) if isinstance(n, str)]
        items = ((f"{path}.{n}", getattr(obj, n, None)) for n in dict.fromkeys(names))
    else:
        return None
    return next((p for sub, v in items if (p := _random_state_in(v, seed, sub, seen, depth + 1))), None)


def _check_params_hold_no_random_state(estimator: Any) -> None:
    """Refuse a parameter that fixes the runs' noise (a nested ``random_state``, a generator): every run
    would draw the same noise, and the released winner would hold what seeded it."""
    params = estimator.get_params(deep=True)
    for name, value in params.items():
        if name == "random_state":
            continue          # the search sets it on every run, and resets it on the released winner
        if name.endswith("__random_state") and value is not None:
            raise ValueError(f"the estimator's parameter {name}={value!r} fixes the noise of every run (and the "
                             "released model would hold its seed): set it to None")
        found = _random_state_in(value, None, name, set())
        if found is not None:
            raise ValueError(f"the estimator's parameter {found} is a random generator: every run would draw "
                             "from a copy of it (the same noise), and the released model would hold it; give "
                             "the search random_state= instead")


def _list_configurations(grids: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Every configuration of grids of lists (at most ``_CHECK_ALL_UP_TO``), or None (distributions, or more)."""
    if not all(isinstance(v, list) for grid in grids for v in grid.values()):
        return None
    if sum(math.prod(len(v) for v in grid.values()) for grid in grids) > _CHECK_ALL_UP_TO:
        return None
    out: list[dict[str, Any]] = []
    for grid in grids:
        names = sorted(grid)
        out.extend(dict(zip(names, values)) for values in itertools.product(*(grid[k] for k in names)))
    return out


class _WarnOnce:
    """Re-emit the warnings of the configurations' checks once each (one PrivacyLeakWarning per quantity,
    not one per configuration)."""

    def __enter__(self) -> None:
        self._catch = warnings.catch_warnings(record=True)
        self._seen = self._catch.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc: Any) -> None:
        self._catch.__exit__(*exc)
        done = set()
        for w in self._seen:
            key = (w.category, str(w.message))
            if key not in done:
                done.add(key)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _sample(grids: list[dict[str, Any]], rng: np.random.Generator) -> dict[str, Any]:
    """One draw of the parameters (with the run's ``rng`` only): a grid, then every name in sorted order."""
    grid = grids[int(rng.integers(len(grids)))] if len(grids) > 1 else grids[0]
    params = {}
    for name in sorted(grid):
        values = grid[name]
        if _is_distribution(values):
            v = values.rvs(random_state=rng)
            params[name] = v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else (
                v.item() if isinstance(v, np.generic) else v)
        else:
            params[name] = values[int(rng.integers(len(values)))]
    return params


def _pure_epsilon(g: Guarantee) -> float:
    """ε of a guarantee as pure DP (inf when it is not pure)."""
    try:
        return float(g.epsilon(0.0))
    except (ValueError, ArithmeticError):
        return math.inf


def _run_guarantee(fit: Guarantee, score_epsilon: float) -> Guarantee:
    """The guarantee of one run: the fit on the training part and the score on the validation part.

    A record lands in one part only (the split is independent of the data), so the run is the max, not the
    sum, of the two (see :class:`PrivateSearchCV`, Privacy).
    """
    e = _pure_epsilon(fit)
    if math.isfinite(e):
        # a relative 1e-12 above: a sampled configuration's ε may differ from the declared one in the last bits
        return PureDP(max(e, score_epsilon) * (1 + 1e-12))
    if isinstance(fit, ApproxDP):
        return ApproxDP(max(fit.epsilon_, score_epsilon), fit.delta_)
    score = PureDP(score_epsilon)
    return RDP.from_function(lambda a: max(fit.rdp(a), score.rdp(a)))


def _covered(g: Guarantee, declared: Guarantee, fit_declared: Guarantee) -> bool:
    """Whether a sampled configuration's fit guarantee ``g`` is within the declared run guarantee."""
    if isinstance(declared, PureDP):
        return _pure_epsilon(g) <= declared.epsilon_
    return repr(g) == repr(fit_declared)


def _charged(whole: Guarantee, delta: float) -> Guarantee:
    """What the accountant is charged: the certified (ε, δ) at the user's δ.

    (``TuningGuarantee.composable()`` is the pure bound where one exists, which exceeds ε(δ) when δ > 0:
    a search tuned to (ε, δ) would not fit an accountant of budget (ε, δ).)
    """
    if delta == 0.0:
        return PureDP(whole.epsilon(0.0))
    return ApproxDP(whole.epsilon(delta), delta)


# ---------------------------------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------------------------------
class _Run:
    """One private run (picklable, for parallel workers): sample, fit on the training part, DP-score."""

    def __init__(self, base: Any, grids: list[dict[str, Any]], run_epsilon: float, declared: Guarantee,
                 fit_declared: Guarantee, Xt: Any, yt: Any, Xv: Any, yv: Any) -> None:
        self.base, self.grids, self.run_epsilon = base, grids, run_epsilon
        self.declared, self.fit_declared = declared, fit_declared
        self.Xt, self.yt, self.Xv, self.yv = Xt, yt, Xv, yv

    def __call__(self, rng: np.random.Generator) -> tuple[float, tuple[dict[str, Any], Any]]:
        params = _sample(self.grids, rng)
        est = clone(self.base)
        extra: dict[str, Any] = {"epsilon": self.run_epsilon}
        seed = None
        if "random_state" in est.get_params(deep=False):
            seed = int(rng.integers(np.iinfo(np.int64).max))
            extra["random_state"] = seed
        est.set_params(**params, **extra)
        g = est.privacy_guarantee()
        if not _covered(g, self.declared, self.fit_declared):
            # depends on the sampled parameters only (public randomness), never on the data
            raise RuntimeError(f"the parameters {params} give the estimator the guarantee {g!r}, more than the "
                               f"{self.fit_declared!r} the search declared for a run: the budget must not depend on "
                               "the searched parameters")
        try:
            est.fit(self.Xt, self.yt)
            # an empty validation part: 0 correct predictions, exactly (no predict on 0 rows)
            correct = 0 if _n_rows(self.yv) == 0 else int(np.count_nonzero(
                np.asarray(est.predict(self.Xv)) == np.asarray(self.yv)))
        except Exception as exc:
            # the estimator's own message may quote the training records or their number: an error message
            # is a release; its type only (a DP estimator's fit completes on every table, the empty one too)
            raise RuntimeError(f"{type(est).__name__}.fit or .predict raised {type(exc).__name__} on a part of the "
                               "split (its message is withheld: it may name the records or their number); a "
                               "searched estimator must fit on every table of the public domain, the empty one "
                               "included, and predict on every record") from None
        if seed is not None:
            # the released winner must hold nothing that seeded its noise: with the seed,
            # refitting on the training part reproduces the model, and membership can be read off it
            est.set_params(random_state=None)
        found = _random_state_in(est, seed, type(est).__name__, set())
        if found is not None:
            raise RuntimeError(f"the fitted {type(est).__name__} holds a random state or the seed of its noise at "
                               f"{found}: a released model must hold nothing that seeded its noise (keep the "
                               "generator local to fit, store no seed)")
        return float(correct + discrete_laplace(self.run_epsilon, rng)), (params, est)


def _n_rows(v: Any) -> int:
    return int(getattr(v, "shape", (len(v),))[0])


# ---------------------------------------------------------------------------------------------------
# the search
# ---------------------------------------------------------------------------------------------------
class PrivateSearchCV(BaseEstimator):
    """Private randomized hyperparameter search over a DP estimator (a private ``RandomizedSearchCV``).

    Selects **one privately trained model and its parameters** among a random number of runs; each run
    samples parameters from public distributions, fits ``estimator`` with differential privacy on the
    training part and scores it with a DP score on the validation part. Despite the ``CV`` (kept for
    scikit-learn's naming), there is **one holdout split, not cross-validation**: folds would put every record
    in several fits and scores, and each would cost budget.
    :func:`dpselect.tune.select_private_candidate` draws the number of runs (independently of the data,
    exactly) and keeps the best one. The whole search is (``epsilon``, ``delta``)-DP with respect to
    adding or removing one record of ``(X, y)``: ``privacy_`` is the certified guarantee.

    Parameters
    ----------
    estimator : estimator following the protocol
        A DP estimator that declares its guarantee: a constructor parameter ``epsilon`` and a method
        ``privacy_guarantee()`` returning a :class:`dpselect.accounting.Guarantee` for one ``fit`` at its
        current parameters (add/remove one record), computed from the parameters only.
        :class:`~dpselect.sklearn.DiffPID3Classifier` and :class:`~dpselect.sklearn.DPMOETClassifier` do.
        Its ``accountant`` must be None (give it to the search). Anything else is refused (TypeError).
    param_distributions : dict or list of dicts
        Parameter name -> list of values (drawn uniformly) or ``scipy.stats`` frozen distribution (drawn
        with its ``rvs``), as in ``RandomizedSearchCV``; a list of dicts picks one dict uniformly, then
        its values. Names may be nested (``"clf__depth"``). Refused: callables (a function may read the
        data), ``epsilon`` / ``random_state`` / ``accountant`` (the search sets them), and values that
        carry the data (X or y themselves, arrays with a dimension equal to the number of records).
    epsilon : float
        The total ε of the search (> 0).
    delta : float, default 0.0
        The total δ (``privacy_.epsilon(delta) <= epsilon``). With pure-DP runs δ = 0 is possible for every
        method with a pure bound (all but ``"poisson"``).
    method : str, default "truncated_negative_binomial"
        The law of the number of runs and its analysis (``dpselect.tune.METHODS``): Papernot–Steinke
        ``"truncated_negative_binomial"`` (η), ``"logarithmic"``, ``"geometric"``, ``"poisson"``, or
        Liu–Talwar ``"liu_talwar"`` / ``"liu_talwar_threshold"`` (with ``threshold``). For the pure-DP runs
        of DiffPID3 / DP-MOET with a mean of 10 runs, :func:`dpselect.tune.tuning_privacy` certifies about
        2.34 ε_run (truncated negative binomial, η = 0.5), 1.96 ε_run (logarithmic), 2.66 ε_run (geometric,
        Liu–Talwar), 2 ε_run (known threshold) and 6.0 ε_run (Poisson), at δ = 0 and at δ = 1e-5 alike.
    mean_runs : float, default 10.0
        The mean number of runs (public).
    eta : float, default 0.5
        η of the truncated negative binomial law.
    threshold : float, optional
        For the known-threshold variant: the noisy score (number of correct validation predictions) a run
        must reach.
    scoring : {"accuracy"}, default "accuracy"
        The DP score of a run: the number of correct predictions on the validation part plus exact
        discrete Laplace noise of parameter ε_run (sensitivity 1 when one record is added or removed).
    validation_fraction : float, default 0.2
        Each record goes to the validation part with this probability, independently of the data and of
        the other records (the same split for every run), in (0, 1).
    random_state : None, int or numpy.random.Generator
        The source of every random bit (split, number of runs, parameters, fits, noise); the same int gives
        the same search, whatever ``n_jobs``. The search object keeps it (a parameter): release
        ``best_estimator_`` / ``best_params_``, never a search fitted with an int ``random_state``, which replays
        every draw.
    accountant : dpselect.Accountant, optional
        Charged once per ``fit``, the search's (ε, δ) as certified: ``ApproxDP(privacy_.epsilon(delta), delta)``
        (``PureDP(privacy_.epsilon(0))`` when ``delta = 0``), label ``"PrivateSearchCV.fit"``, which an
        ``"adaptive"`` accountant takes only with ``approx_delta >= delta``; a refused charge leaves the search
        unfitted (glossary: [accountant][glossary-accountant]).
    n_jobs : int, optional
        Workers for the runs (joblib); the result does not depend on it.

    Attributes
    ----------
    best_estimator_ : estimator or None
        The winning run's model, **the privately trained one** (there is no refit: refitting on all the data
        would be a new, unaccounted release). None when the procedure released no candidate (the
        known-threshold variant may stop without one). Its ``random_state`` is ``None``: the seed of its
        noise is not released (with it a refit on the training part reproduces the model); a fitted model
        holding a generator or that seed in any attribute is refused with a ``RuntimeError``.
    best_params_ : dict or None
        The winner's sampled parameters (``epsilon`` is ``run_epsilon_``).
    best_score_ : float or None
        The winner's noisy score (number of correct validation predictions plus noise; the validation size
        is not released, the number of records being private) when the analysis of ``method`` covers it,
        else None. A **count** (e.g. 768.0), not an accuracy in [0, 1] as in scikit-learn's searches:
        rescaling would divide by the private validation size.
    cv_results_ : dict
        What may be released, and only that: the winner (``params``, ``param_<name>``,
        ``mean_test_score`` when covered, on the count scale of ``best_score_``, ``rank_test_score``), in
        lists of length 1. Never the losing runs, nor the number of runs.
    privacy_ : dpselect.accounting.Guarantee
        The certified guarantee of the whole search (its ``.epsilon(delta) <= epsilon``).
    run_epsilon_ : float
        The per-run budget: the largest ε (by bisection) whose whole-procedure guarantee
        (:func:`dpselect.tune.tuning_privacy`) fits (``epsilon``, ``delta``). Public (a function of the
        arguments only).
    classes_ : ndarray
        ``best_estimator_.classes_`` (classifiers).

    Privacy
    -------
    With respect to adding or removing one record of ``(X, y)``. The split puts each record in the
    validation part with probability ``validation_fraction``, independently of the data and of the
    other records, so the added record lands in exactly one part and the others are split as without it.
    Conditioned on the part it lands in, every run differs only through the fit (training part: the
    estimator's declared guarantee at ``run_epsilon_``) or only through the score (validation part:
    the score is ε_run-DP for any fixed model, the model being drawn with the same law): each run is
    **max**(fit, score)-DP, parallel composition, and so the whole procedure is ``tuning_privacy(max)``.
    The search is then a mixture over that part of two pairs each within the guarantee; (ε, δ), privacy
    profiles and Rényi divergence are (quasi-)convex, so the mixture keeps it. The parameters are drawn
    from public distributions with the run's generator, the number of runs independently of the data.
    ``fit`` completes on every table of the public domain, whatever its number of records (0 included):
    a part of the split may be empty (an empty validation part scores 0 correct predictions), and every
    argument (``X``, ``y``, each configuration of a list grid through the estimator's ``check_fit``) is
    checked before the accountant is charged; no message names a record, a value or a size.

    **What is not private** (outside ``privacy_``): preprocessing *fitted* on the records (a scaler, an
    encoder learning its categories, feature bounds read off the data, which the estimators report with a
    :class:`~dpselect.PrivacyLeakWarning`); choosing the grid, the estimator, ``epsilon`` or
    ``validation_fraction`` after looking at the data (or at the results of earlier searches on it:
    each search is a new release, charge them all to one accountant); ``score(X, y)`` on private data.
    The checks refuse only what can be seen: callables and values of one entry per record. A parameter
    list computed from the data (e.g. quantiles of a column) cannot be recognised: it is the user's
    promise that the space is public.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, (3000, 3)); y = (X[:, 0] > 5).astype(int)
    >>> search = PrivateSearchCV(DiffPID3Classifier(n_max=3000, feature_bounds=(0, 10)),
    ...                          {"depth": [1, 2, 3]}, epsilon=1.0, delta=1e-5, mean_runs=3, random_state=2).fit(X, y)
    >>> search.privacy_.epsilon(1e-5) <= 1.0, sorted(search.best_params_), list(search.cv_results_["rank_test_score"])
    (True, ['depth'], [1])
    >>> search.score(X, y) > 0.9
    True
    """

    def __init__(self, estimator: Any, param_distributions: Any, *, epsilon: float, delta: float = 0.0,
                 method: str = "truncated_negative_binomial", mean_runs: float = 10.0, eta: float = 0.5, threshold: float | None = None,
                 scoring: str = "accuracy", validation_fraction: float = 0.2, random_state: Any = None,
                 accountant: Any = None, n_jobs: int | None = None) -> None:
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.mean_runs = mean_runs
        self.eta = eta
        self.threshold = threshold
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs

    # -- scikit-learn protocol ------------------------------------------------------------------------
    def __sklearn_clone__(self) -> Any:
        # a budget is shared, never copied (as the estimators do): the clone gets the same accountant object
        shallow = copy.copy(self)
        shallow.accountant = None
        new = super(PrivateSearchCV, shallow).__sklearn_clone__()
        new.accountant = self.accountant
        return new

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import get_tags
        tags = super().__sklearn_tags__()
        try:
            inner = get_tags(self.estimator)
        except Exception:   # not an estimator: refused at fit
            return tags
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.input_tags = inner.input_tags
        tags.target_tags = inner.target_tags
        return tags

    @property
    def _estimator_type(self) -> Any:
        return getattr(self.estimator, "_estimator_type", None)

    # -- the budget ------------------------------------------------------------------------------------
    def _method(self) -> str:
        if self.method not in _tune.METHODS:
            raise ValueError(f"method must be one of {', '.join(_tune.METHODS)}, got {self.method!r}")
        t = self.threshold
        if self.method == "liu_talwar_threshold":
            if isinstance(t, bool) or not isinstance(t, numbers.Real) or math.isnan(float(t)):
                raise ValueError("method='liu_talwar_threshold' needs threshold= (a number of correct validation "
                                 f"predictions fixed before seeing the data), got {t!r}")
        elif t is not None:
            raise ValueError(f"threshold= is used by method='liu_talwar_threshold' only, got method={self.method!r}")
        return str(self.method)

    def _budget(self, method: str, delta: float, epsilon: float
                ) -> tuple[float, Guarantee, Guarantee, _tune.TuningGuarantee]:
        """``(run_epsilon, declared run guarantee, declared fit guarantee, whole-procedure guarantee)``."""
        def at(e: float) -> tuple[Guarantee, Guarantee, _tune.TuningGuarantee]:
            fit = clone(self.estimator).set_params(epsilon=e).privacy_guarantee()
            if not isinstance(fit, Guarantee):
                raise TypeError(f"{type(self.estimator).__name__}.privacy_guarantee() must return a "
                                f"dpselect.accounting.Guarantee, got {type(fit).__name__}")
            run = _run_guarantee(fit, e)
            whole = _tune.tuning_privacy(run, method=method, mean_runs=self.mean_runs, eta=self.eta)
            return fit, run, whole

        def fits(e: float) -> bool:
            return float(at(e)[2].epsilon(delta)) <= epsilon

        lo, hi = 0.0, epsilon
        if fits(hi):
            lo = hi
        else:
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if mid in (lo, hi):
                    break
                if fits(mid):
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-9 * hi:
                    break
        if lo <= 0.0 or not fits(lo):
            raise ValueError(f"no per-run budget fits (epsilon={epsilon}, delta={delta}) with method={method!r} and "
                             f"mean_runs={self.mean_runs}: "
                             + ("this method has no pure bound: give delta > 0" if delta == 0 else
                                "raise epsilon or delta, or lower mean_runs"))
        fit, run, whole = at(lo)
        return lo, run, fit, whole

    # -- fit -----------------------------------------------------------------------------------------
    def _check_params(self) -> tuple[float, float, float, list[dict[str, Any]]]:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not math.isfinite(eps) or eps <= 0:
            raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
        delta = check_delta(self.delta, "delta")
        f = self.validation_fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0.0 < float(f) < 1.0:
            raise ValueError(f"validation_fraction must be a number in (0, 1), got {f!r}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS} (a DP score is a mechanism; a callable or another "
                             f"metric is refused), got {self.scoring!r}")
        m = self.mean_runs
        if isinstance(m, bool) or not isinstance(m, numbers.Real) or not math.isfinite(m) or m <= 0:
            raise ValueError(f"mean_runs must be a finite number > 0 (> 1 but for 'poisson'), got {m!r}")
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, numbers.Integral)
                                        or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a non-zero int, got {self.n_jobs!r}")
        _check_protocol(self.estimator)
        grids = _check_distributions(self.param_distributions, self.estimator)
        return float(eps), delta, float(f), grids

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PrivateSearchCV":
        """Run the private search on the private records ``(X, y)``; ``privacy_`` is charged once.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)
        y : array-like, shape (n_records,)

        Returns
        -------
        PrivateSearchCV
            ``self``, fitted (``best_estimator_``, ``best_params_``, ``best_score_``, ``cv_results_``,
            ``privacy_``, ``run_epsilon_``).

        Examples
        --------
        >>> import dpselect, numpy as np
        >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
        >>> X = np.random.default_rng(1).uniform(0, 1, (500, 2)); y = (X[:, 1] > 0.5).astype(int)
        >>> acc = dpselect.Accountant(epsilon=2.0, delta=1e-5, mode="basic")
        >>> s = PrivateSearchCV(DiffPID3Classifier(n_max=500, feature_bounds=(0, 1), classes=[0, 1]), {"depth": [1, 2]},
        ...                     epsilon=1.0, delta=1e-6, mean_runs=2, random_state=0, accountant=acc).fit(X, y)
        >>> [r.label for r in acc.history]
        ['PrivateSearchCV.fit']
        """
        epsilon, delta, fraction, grids = self._check_params()
        method = self._method()
        _check_params_hold_no_random_state(self.estimator)
        try:
            X, y = indexable(X, y)
        except ValueError:
            # scikit-learn's message names both sizes (private under add/remove-one)
            raise ValueError("X and y must have one row per record: their numbers of rows differ") from None
        n = _n_rows(y)
        _check_not_from_data(grids, X, y)
        configs = _list_configurations(grids)
        acc = check_accountant(self.accountant)
        gen = check_rng(self.random_state) if not isinstance(self.random_state, np.random.Generator) else self.random_state
        run_eps, declared, fit_declared, whole = self._budget(method, delta, epsilon)
        # every configuration of a list grid (the base estimator otherwise) checked on (X, y) before anything
        # is charged or drawn: its guarantee, and what its fit would refuse (check_fit, when it has one)
        with _release_scope(), _WarnOnce():     # a quantity read from the data in a check: charged NonPrivate
            for params in (configs if configs is not None else [{}]):
                est = clone(self.estimator).set_params(**params, epsilon=run_eps)
                g = est.privacy_guarantee()
                if not _covered(g, declared, fit_declared):
                    raise ValueError(f"the parameters {params} give the estimator the guarantee {g!r}, more than "
                                     f"{fit_declared!r}: the budget must not depend on the searched parameters")
                if callable(getattr(est, "check_fit", None)):
                    est.check_fit(X, y)
            charge(acc, _charged(whole, delta), label="PrivateSearchCV.fit", neighbours=ADD_REMOVE)
        # ---- random bits from here on ----
        valid = gen.random(n) < fraction
        tr, va = np.flatnonzero(~valid), np.flatnonzero(valid)
        run = _Run(self.estimator, grids, run_eps, declared, fit_declared,
                   _safe_indexing(X, tr), _safe_indexing(y, tr), _safe_indexing(X, va), _safe_indexing(y, va))
        result = _tune.select_private_candidate(run, run_privacy=declared, method=method, mean_runs=self.mean_runs,
                                                eta=self.eta, threshold=self.threshold, rng=gen, n_jobs=self.n_jobs)
        cand = result.candidate
        self.privacy_ = getattr(result, "privacy", None) or whole
        self.run_epsilon_ = run_eps
        if cand is None:
            self.best_params_, self.best_estimator_, self.best_score_ = None, None, None
            self.cv_results_: dict[str, list] = {"params": [], "mean_test_score": [], "rank_test_score": []}
            return self
        params, est = cand
        self.best_params_ = dict(params)
        self.best_estimator_ = est
        self.best_score_ = None if result.score is None else float(result.score)
        res: dict[str, list] = {"params": [dict(params)]}
        for k, v in sorted(params.items()):
            res[f"param_{k}"] = [v]
        if self.best_score_ is not None:
            res["mean_test_score"] = [self.best_score_]
        res["rank_test_score"] = [1]
        self.cv_results_ = res
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        if hasattr(est, "feature_names_in_"):
            self.feature_names_in_ = est.feature_names_in_
        return self

    # -- prediction (post-processing of the released model) --------------------------------------------
    def _best(self) -> Any:
        check_is_fitted(self, "privacy_")
        if self.best_estimator_ is None:
            raise RuntimeError("the private search released no candidate (the known-threshold method stopped "
                               "without a run reaching the threshold): there is no model to predict with")
        return self.best_estimator_

    @property
    def classes_(self) -> np.ndarray:
        """The winner's ``classes_``.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
        >>> import numpy as np
        >>> X = np.random.default_rng(2).uniform(0, 1, (400, 2)); y = (X[:, 0] > 0.5).astype(int)
        >>> PrivateSearchCV(DiffPID3Classifier(n_max=400, feature_bounds=(0, 1)), {"depth": [1]}, epsilon=1.0,
        ...                 delta=1e-6, mean_runs=2, random_state=0).fit(X, y).classes_.tolist()
        [0, 1]
        """
        return self._best().classes_

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict with the winning, privately trained model (post-processing).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)

        Returns
        -------
        ndarray of shape (n_records,)

        Examples
        --------
        >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
        >>> import numpy as np
        >>> X = np.random.default_rng(3).uniform(0, 1, (400, 2)); y = (X[:, 0] > 0.5).astype(int)
        >>> s = PrivateSearchCV(DiffPID3Classifier(n_max=400, feature_bounds=(0, 1)), {"depth": [1, 2]},
        ...                     epsilon=2.0, delta=1e-6, mean_runs=2, random_state=0).fit(X, y)
        >>> s.predict(X[:3]).shape
        (3,)
        """
        return self._best().predict(X)

    def _has_proba(self) -> bool:
        return hasattr(self.estimator, "predict_proba")

    @available_if(_has_proba)
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities of the winning model (available when the estimator has ``predict_proba``).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)

        Returns
        -------
        ndarray of shape (n_records, n_classes)

        Examples
        --------
        >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
        >>> import numpy as np
        >>> X = np.random.default_rng(4).uniform(0, 1, (400, 2)); y = (X[:, 0] > 0.5).astype(int)
        >>> s = PrivateSearchCV(DiffPID3Classifier(n_max=400, feature_bounds=(0, 1)), {"depth": [1]},
        ...                     epsilon=1.0, delta=1e-6, mean_runs=2, random_state=0).fit(X, y)
        >>> s.predict_proba(X[:2]).shape
        (2, 2)
        """
        return self._best().predict_proba(X)

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """The winning model's ``score`` on ``(X, y)`` (accuracy for classifiers). Not private: use public or
        held-out test data.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)
        y : array-like, shape (n_records,)

        Returns
        -------
        float

        Examples
        --------
        >>> from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV
        >>> import numpy as np
        >>> X = np.random.default_rng(5).uniform(0, 1, (2000, 2)); y = (X[:, 0] > 0.5).astype(int)
        >>> s = PrivateSearchCV(DiffPID3Classifier(n_max=2000, feature_bounds=(0, 1)), {"depth": [1, 2]},
        ...                     epsilon=2.0, delta=1e-6, mean_runs=2, random_state=0).fit(X, y)
        >>> s.score(X, y) > 0.8
        True
        """
        return float(self._best().score(X, y))
