"""Private model selection: choose among already-fitted classifiers on a private validation set."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .._boundary import charge, check_accountant
from ..accounting.neighbours import ADD_REMOVE
from .._rng import check_rng
from .._validation import check_k, check_positive
from ..accounting.accountant import Accountant, Event
from ..multiobjective._select import priv_agg, priv_pareto
from ..registry import Mechanism, get_mechanism
from ..sensitivity import SensitivityFunction
from ..utilities.classification import rate_sensitivity
from ..typing import MechanismName, RngLike
from ..vocabulary import APPROACHES, check_approach, selection_result

__all__ = ["select_model", "model_objectives", "OBJECTIVES", "APPROACHES"]

#: The objectives :func:`select_model` knows, all rates of hits among records (maximised).
OBJECTIVES = ("tpr", "tnr", "accuracy")


def _objective_names(objectives: Any) -> list[str]:
    if isinstance(objectives, str):
        objectives = (objectives,)
    try:
        names = [str(o).strip().lower() for o in objectives]
    except TypeError:
        raise TypeError(f"objectives must be a sequence of names from {OBJECTIVES}, got "
                        f"{type(objectives).__name__}") from None
    if not names:
        raise ValueError(f"objectives must name at least one of {OBJECTIVES}")
    bad = [o for o in names if o not in OBJECTIVES]
    if bad:
        raise ValueError(f"unknown objective {bad[0]!r}: choose from {', '.join(OBJECTIVES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"objectives name one objective twice: {names}")
    return names


#: The labels of the public boolean convention (positive 1 / True), usable without ``pos_label``.
_BOOLEAN_LABELS = (0, 1)


def _labels(values: Any, name: str) -> np.ndarray:
    """``values`` as an array of labels; missing labels (NaN, None, pandas NA) and ragged rows refused."""
    raw = values.to_numpy() if hasattr(values, "to_numpy") else values
    try:
        arr = np.asarray(raw)
    except ValueError:
        arr = None
    if arr is None or (arr.dtype == object and arr.ndim == 1 and any(np.ndim(r) > 0 for r in arr)):
        # (the rows' lengths are the number of records, private: not named)
        raise ValueError(f"{name} must be a rectangular array (one row of n_records labels per model), got rows of "
                         "different lengths")
    if arr.dtype.kind == "f":
        missing = np.isnan(arr)
    elif arr.dtype.kind == "O":
        missing = np.frompyfunc(_is_missing, 1, 1)(arr).astype(bool) if arr.size else np.zeros(arr.shape, bool)
    else:
        missing = np.zeros(arr.shape, bool)
    if missing.any():
        # the position of a private record: not named
        raise ValueError(f"{name} holds a missing label (NaN/None); "
                         "every record needs a label (drop or impute with a public rule first)")
    if arr.dtype.kind in "cmM":
        raise TypeError(f"{name} must hold class labels (numbers, booleans or strings), got dtype {arr.dtype}")
    return arr


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)
    except (TypeError, ValueError):  # pandas.NA
        return True


def _check_pos_label(pos_label: Any) -> Any:
    if pos_label is None:
        return None
    if isinstance(pos_label, np.generic):
        pos_label = pos_label.item()
    if not isinstance(pos_label, (bool, int, float, str)):
        raise TypeError(f"pos_label must be one label (a number, a boolean or a string), got {pos_label!r}")
    if isinstance(pos_label, float) and pos_label != pos_label:
        raise ValueError("pos_label must not be NaN")
    return pos_label


def _binary(arr: np.ndarray, pos_label: Any, name: str) -> np.ndarray:
    """Positive (True) / negative of every label: ``== pos_label``, or the boolean convention 0/1."""
    is_text = arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.size
                                         and any(isinstance(v, (str, bytes)) for v in arr.ravel().tolist()))
    if pos_label is None:
        if is_text or not (arr.dtype == bool or np.isin(arr, _BOOLEAN_LABELS).all()):
            # a record's label: not named
            raise ValueError(f"{name} holds a label outside 0/1 and False/True: pass pos_label= "
                             "(the public positive class; every other label is negative)")
        return np.asarray(arr == 1, dtype=bool)
    if is_text != isinstance(pos_label, str):
        raise ValueError(f"pos_label={pos_label!r} cannot equal a label of {name} "
                         f"({'strings' if is_text else 'numbers or booleans'}): no record would be positive")
    return np.asarray(arr == pos_label, dtype=bool)


def model_objectives(y: ArrayLike, predictions: ArrayLike, objectives: Sequence[str] = ("tpr", "tnr"), *,
                     pos_label: Any = None) -> tuple[np.ndarray, list[SensitivityFunction]]:
    """The objective values of every model and their sensitivity functions (add/remove one record).

    ``predictions`` has one row of predicted labels per model, ``y`` the true labels. Without
    ``pos_label`` the labels must be 0/1 or False/True (1/True positive; any other label, a string
    included, is a ``ValueError`` asking for ``pos_label``); with ``pos_label`` a label equal to it is
    positive and every other label negative (a multi-class ``y`` is then scored one-vs-rest: stated,
    not guessed). Missing labels (NaN, None) and ragged ``predictions`` are refused. Returns ``(U, sensitivities)``: ``U[r, i]`` is
    objective i of model r, and ``sensitivities[i]`` its exact element local sensitivity
    (:func:`dpselect.utilities.classification.rate_sensitivity`).

    Every objective is a rate hit / (hit + miss): TPR = TP / (TP + FN), TNR = TN / (TN + FP), accuracy =
    correct / (correct + wrong). Adding or removing one record changes exactly one of (hit, miss) by one
    (for TPR and TNR, a record of the other class changes neither), so the three share one sensitivity
    function, the exact element local sensitivity of such a rate; its global sensitivity is 1 (from an
    empty set of records to one record). The test suite checks the accuracy case by brute force with
    :func:`dpselect.audit.check_admissibility`.

    Not private by itself (exact rates of the records): :func:`select_model` feeds it to a selection.

    Parameters
    ----------
    y : array-like, shape (n_records,)
        The true labels.
    predictions : array-like, shape (n_models, n_records) or (n_records,)
        One row of predicted labels per model.
    objectives : sequence of {"tpr", "tnr", "accuracy"}
    pos_label : label, optional
        The public positive class (see above).

    Returns
    -------
    (U, sensitivities) : (numpy.ndarray of shape (n_models, len(objectives)), list of SensitivityFunction)

    Examples
    --------
    >>> U, sens = model_objectives([1, 1, 0, 0], [[1, 1, 0, 1], [1, 0, 0, 0]], ("tpr", "accuracy"))
    >>> U.tolist(), [s(0).tolist() for s in sens]
    ([[1.0, 0.75], [0.5, 0.75]], [[1.0, 1.0], [0.25, 0.25]])
    """
    names = _objective_names(objectives)
    pos_label = _check_pos_label(pos_label)
    ya = _labels(y, "y")
    if ya.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per record), got shape {ya.shape}")
    yt = _binary(ya, pos_label, "y")
    yp = _binary(_labels(predictions, "predictions"), pos_label, "predictions")
    if yp.ndim == 1:
        yp = yp[None, :]
    if yp.ndim != 2 or yp.shape[1] != yt.shape[0]:
        # n_records is private: the message names no size
        raise ValueError("predictions must have shape (n_models, n_records), one row per model and one column per "
                         "record of y")
    n_pos = int(np.count_nonzero(yt))
    n_neg = yt.shape[0] - n_pos
    # TP and TN of every model from two row sums (predicted positives overall and among the positive records)
    tp = yp[:, yt].sum(axis=1, dtype=np.int64) if n_pos else np.zeros(yp.shape[0], np.int64)
    n_pred_pos = yp.sum(axis=1, dtype=np.int64)
    tn = n_neg - (n_pred_pos - tp)
    counts = {"tpr": (tp, n_pos - tp), "tnr": (tn, n_neg - tn), "accuracy": (tp + tn, yt.shape[0] - tp - tn)}
    U = np.empty((yp.shape[0], len(names)))
    sens = []
    for i, name in enumerate(names):
        hit, miss = counts[name]
        total = hit + miss
        U[:, i] = np.divide(hit, total, out=np.zeros(hit.shape), where=total > 0)
        sens.append(rate_sensitivity(hit, miss, name=name))
    return U, sens


def _weighted_rates(weights: np.ndarray, sfs: list[SensitivityFunction]) -> SensitivityFunction:
    """δ^agg = Σ_i |w_i| δ_i (paper Thm 5.4) of rate sensitivity functions, evaluated elementwise.

    The values of :func:`dpselect.weighted_sum`; declared ``elementwise`` (every δ_i is), so the dampening
    walks evaluate blocks of distances per call: a rate's δ is ~1/n, and the walk to the utilities of
    45,222 records takes thousands of distances.
    """
    aw = np.abs(np.asarray(weights, dtype=np.float64))
    keep = [i for i in range(len(sfs)) if aw[i] > 0]

    def fn(t: Any, candidates: Any = None) -> np.ndarray:
        if np.ndim(t) == 0:
            parts = [aw[i] * sfs[i](int(t), candidates) for i in keep]
        else:
            parts = [aw[i] * sfs[i].at(t, candidates) for i in keep]
        return np.sum(parts, axis=0)

    sats = [sfs[i].saturation_distance for i in keep]
    sat = None if any(x is None for x in sats) else max(int(x or 0) for x in sats)
    return SensitivityFunction(fn, float(sum(aw[i] * sfs[i].global_sensitivity for i in keep)),
                               n_candidates=sfs[0].n_candidates, saturation_distance=sat, name="weighted_rates",
                               elementwise=True)


def _predictions(estimators: Any, X: Any, predictions: Any) -> tuple[np.ndarray | list, list | None]:
    """The (n_models, n_records) predictions and the models' labels (keys of a mapping) or None."""
    labels = None
    models: Any = estimators
    if isinstance(estimators, Mapping):
        labels = list(estimators.keys())
        models = list(estimators.values())
    if predictions is not None:
        P = _labels(predictions, "predictions")
        if P.ndim == 1:
            P = P[None, :]
        if models is not None and len(models) != P.shape[0]:
            raise ValueError(f"predictions has {P.shape[0]} rows but {len(models)} estimators were given")
        return P, labels
    if models is None:
        raise TypeError("select_model needs estimators (with X) or predictions")
    if X is None:
        raise TypeError("select_model needs X (the private validation features) to predict, or predictions=")
    models = list(models)
    for i, m in enumerate(models):
        if not hasattr(m, "predict"):
            raise TypeError(f"estimators[{i}] has no predict method (a fitted classifier is needed), got "
                            f"{type(m).__name__}")
    preds = [np.asarray(m.predict(X)) for m in models]
    if len({p.shape for p in preds}) > 1:
        raise ValueError("the estimators' predictions differ in shape (each must predict one label per record of X)")
    return preds, labels


def _aggregate_weights(objective_weights: Any, names: list[str]) -> np.ndarray:
    """The w_i of PrivAgg, one per objective (default 1/m), checked: finite, not all 0, finite Σ|w_i|."""
    if objective_weights is None:
        w = np.full(len(names), 1.0 / len(names))
    elif isinstance(objective_weights, Mapping):
        unknown = [o for o in objective_weights if str(o).lower() not in names]
        if unknown:
            raise ValueError(f"objective_weights names {unknown[0]!r}, which is not one of the objectives {names}")
        try:
            lower = {str(o).lower(): float(v) for o, v in objective_weights.items()}
        except (TypeError, ValueError):
            raise TypeError(f"objective_weights must map objectives to numbers, got "
                            f"{dict(objective_weights)!r}") from None
        w = np.array([lower.get(o, 0.0) for o in names])
    else:
        if isinstance(objective_weights, (str, bytes)):
            raise TypeError(f"objective_weights must be numbers, one per objective, got {objective_weights!r}")
        try:
            w = np.asarray(objective_weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"objective_weights must be numbers, one per objective, got "
                            f"{objective_weights!r}") from None
        if w.shape != (len(names),):
            raise ValueError(f"objective_weights must give one weight per objective ({len(names)}), "
                             f"got {list(np.ravel(w))}")
    if not np.all(np.isfinite(w)) or not np.any(w != 0):
        raise ValueError(f"objective_weights must be finite and not all zero, got {w.tolist()}")
    with np.errstate(over="ignore"):
        total = float(np.sum(np.abs(w)))
    if not np.isfinite(total):
        # the aggregate's sensitivity Σ|w_i|·1 (and the aggregate itself) must be a finite float
        raise ValueError(f"objective_weights must have a finite sum of absolute values (the aggregate's "
                         f"sensitivity Σ|w_i|), got {w.tolist()}; scale them down (only their ratios matter)")
    return w


@selection_result
def _select_positions(U: np.ndarray, sfs: list[SensitivityFunction], *, spec: Mechanism, pareto: bool,
                      w: np.ndarray | None, epsilon: float, k: int | None, rng: np.random.Generator) -> Any:
    """The selected models' positions, on checked values (the one return convention applied here)."""
    sens: list[Any] = list(sfs) if spec.kind == "local" else [1.0] * U.shape[1]
    if pareto:
        return priv_pareto(U, epsilon=epsilon, sensitivities=sens, mechanism=spec.name, k=k, rng=rng)
    assert w is not None
    if spec.kind == "local":
        # PrivAgg (paper Def. 5.2): the local mechanism on U @ w with δ^agg (here elementwise, for speed)
        return spec.select(U @ w, epsilon=epsilon, sensitivity=_weighted_rates(w, sfs), k=k, rng=rng)
    return priv_agg(U, w, epsilon=epsilon, sensitivities=sens, mechanism=spec.name, k=k, rng=rng)


def select_model(estimators: Sequence[Any] | Mapping[Any, Any] | None = None, X: ArrayLike | None = None,
                 y: ArrayLike | None = None, *,
                 epsilon: float, objectives: Sequence[str] = ("tpr", "tnr"),
                 approach: Literal["pareto", "aggregate"] = "pareto", mechanism: MechanismName | None = None,
                 objective_weights: Sequence[float] | Mapping[str, float] | None = None, k: int | None = None,
                 random_state: RngLike = None, predictions: ArrayLike | None = None, pos_label: Any = None,
                 accountant: Accountant | None = None) -> Any:
    """Privately select the best of several already-fitted classifiers on a private validation set.

    Every model predicts the private records ``(X, y)``; its objectives (TPR, TNR, accuracy: rates of
    hits among records, all maximised) are computed from the confusion counts, and one model (or ``k``)
    is chosen by PrivPareto (``approach="pareto"``: close to the Pareto front of the objectives) or by
    PrivAgg (``approach="aggregate"``: the largest Σ_i w_i·objective_i), with

    * a local mechanism ("local_dampening" [default] or "shifted_local_dampening"): the exact element
      local sensitivity of each rate (:func:`model_objectives`), δ^PS or δ^agg built from them;
    * a global one ("exponential", "permute_and_flip", "report_noisy_max"): global sensitivity 1 per rate.

    Parameters
    ----------
    estimators : sequence or mapping of fitted classifiers
        Anything with ``predict(X)``. A mapping ``name -> estimator`` makes the selection return names.
        Omitted when ``predictions`` are given: ``select_model(y=y, predictions=P, epsilon=...)``.
    X : array-like or DataFrame, shape (n_records, n_features)
        The private validation features (omitted when ``predictions`` are given).
    y : array-like, shape (n_records,)
        The private validation labels.
    epsilon : float
        Privacy budget (ε/k per pick when ``k > 1``).
    objectives : sequence of {"tpr", "tnr", "accuracy"}
        The objectives, in this order (the columns of PrivPareto / PrivAgg). One objective: the model
        with the largest value is selected by the chosen mechanism (``approach`` does not matter).
    approach : {"pareto", "aggregate"}
        "agg" is an alias of "aggregate".
    mechanism : str, optional
        One of :data:`dpselect.vocabulary.MECHANISMS` or an alias (EM, PF, RNM, LD, SLD). Default
        "local_dampening".
    objective_weights : sequence or mapping name -> weight, optional
        The w_i of ``approach="aggregate"`` (default: equal weights 1/m). Not used by "pareto".
    k : int, optional
        Number of distinct models (omitted: one).
    random_state : seed, Generator or None
        Glossary: [rng][glossary-rng] (scikit-learn's name, as everywhere in :mod:`dpselect.sklearn`).
    predictions : array-like, shape (n_models, n_records), optional
        Precomputed ``estimator.predict(X)`` rows, one per model (skips the predictions: the fast path).
    pos_label : label, optional
        The public positive class; every other label is negative (a multi-class ``y`` is scored
        one-vs-rest). Omitted: the labels must be 0/1 or False/True, 1/True positive; other labels
        (strings, 2, ...) are a ``ValueError`` asking for ``pos_label``. NaN/None labels are refused.
    accountant : dpselect.Accountant, optional
        Charged ``mechanism.privacy(epsilon, k=k)`` under the label ``"select_model"`` after the models'
        objectives are computed (glossary: [accountant][glossary-accountant]).

    Returns
    -------
    int, label or numpy.ndarray
        ``k`` omitted: the position of the selected model in ``estimators`` (an ``int``; with a mapping,
        its key). An int ``k`` (1 included): an array of k of them in the order picked (int64 positions,
        or an object array of keys).

    Privacy
    -------
    ε-DP with respect to **adding or removing one record** of the validation set ``(X, y)``, provided
    that the candidate models do not depend on the validation set (fit them on other data) and that a
    model's prediction for a record depends on that record only (true of ``predict`` of every
    scikit-learn classifier). The objectives are rates whose exact element local sensitivity is
    admissible under this neighbour model, so local dampening and shifted local dampening are ε-DP; the
    global mechanisms use the global sensitivity 1 of each rate. Which models were offered, their
    number and ``pos_label`` are public. Only the selection is released: reporting the chosen model's
    validation score would spend more budget.

    Examples
    --------
    >>> y = [1, 1, 1, 0, 0, 0] * 50
    >>> preds = [[1, 1, 1, 0, 0, 0] * 50, [1, 1, 0, 0, 0, 1] * 50, [0, 0, 0, 1, 1, 1] * 50]
    >>> select_model(y=y, predictions=preds, epsilon=1.0, random_state=0)
    0
    >>> from sklearn.dummy import DummyClassifier
    >>> X = [[0]] * 300
    >>> models = {"ones": DummyClassifier(strategy="constant", constant=1).fit(X, y),
    ...           "zeros": DummyClassifier(strategy="constant", constant=0).fit(X, y)}
    >>> select_model(models, X, y, epsilon=1.0, objectives=["tnr"], random_state=0)
    'zeros'
    >>> select_model(y=y, predictions=preds, epsilon=1.0, k=2, random_state=0).tolist()   # any int k: an array
    [0, 1]
    """
    names = _objective_names(objectives)
    if y is None:
        raise TypeError("select_model() missing required argument: 'y' (the private validation labels)")
    approach_key = check_approach(approach)
    spec = get_mechanism("local_dampening" if mechanism is None else mechanism)
    eps = check_positive(epsilon, "epsilon")
    acc = check_accountant(accountant)
    P, labels = _predictions(estimators, X, predictions)
    U, sfs = model_objectives(y, P, names, pos_label=pos_label)
    n_models = U.shape[0]
    if n_models < 2:
        raise ValueError(f"select_model needs at least 2 models to choose from, got {n_models}")
    kk = None if k is None else check_k(k, n_models)
    pareto = approach_key == "pareto" and len(names) > 1
    if pareto and objective_weights is not None:
        raise ValueError("objective_weights apply to approach='aggregate' only")
    w = None if pareto else _aggregate_weights(objective_weights, names)
    gen = check_rng(random_state)
    charge(acc, spec.privacy(eps, k=kk), label="select_model", neighbours=ADD_REMOVE,
           event=Event("select_model", eps, kk, options=(("mechanism", spec.name),)))
    out = _select_positions(U, sfs, spec=spec, pareto=pareto, w=w, epsilon=eps, k=kk, rng=gen)
    if labels is None:
        return out
    if kk is None:
        return labels[out]
    arr = np.empty(out.shape[0], dtype=object)
    arr[:] = [labels[int(i)] for i in out]
    return arr
