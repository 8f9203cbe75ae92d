"""True positive rate and true negative rate of several classifiers, with exact sensitivity functions.

Candidates are classifiers; the private data are the labelled records they are evaluated on.
Neighbour model: **add or remove one record**. Both rates have global sensitivity 1.

Element local sensitivity of TPR (paper Sec. 6.2.3, corrected)
--------------------------------------------------------------
For one classifier let TP and FN be its true positives and false negatives, P = TP + FN,
M = max(TP, FN), m = min(TP, FN). Within distance t of x, the largest change of TPR = TP/P caused by
one more record is

* 1 (= Δ) when P − t <= 2 (a dataset with one or two positives is reachable, where one record moves
  the rate by up to 1);
* M / ((P − t)(P − t − 1)) for t <= m: remove the smaller group first; one more removal from the
  larger group, or an addition to the smaller, then moves the rate by at most M/((P−t)(P−t−1));
* min(1, 1/(M − (t − m) − 1)) for t > m: the smaller group is gone, the rate is 0 or 1, and removing
  records of the larger group shrinks it to M − (t − m) positives.

The formula printed in the paper is **not** admissible: for TP = 4, FN = 1 it gives 0.05 at t = 0,
but removing the false negative moves TPR from 0.8 to 1, a change of 0.2. The test suite keeps the
printed version as a case the admissibility checker must reject; the exact one above passes the
checker on every dataset with fewer than 15 positives and distances below 10.

Convention for P = 0 (no positive record): TPR = 0 (nothing detected) and δ = 1 at every distance,
since adding one positive can move the rate to 1. TNR is the same with TN, FP and N.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..sensitivity import SensitivityFunction

__all__ = [
    "confusion_counts", "tpr", "tnr", "rate_sensitivity", "tpr_sensitivity", "tnr_sensitivity",
    "rate_values",
]


def _check_labels(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    yt = np.asarray(y_true)
    yp = np.asarray(y_pred)
    if yt.ndim != 1:
        raise ValueError(f"y_true must be 1-D (one label per record), got a {yt.ndim}-D array")
    if yp.ndim == 1:
        yp = yp[None, :]
    if yp.ndim != 2 or yp.shape[1] != yt.shape[0]:
        # the number of records can be private: the message names no size
        raise ValueError("y_pred must have shape (n_classifiers, n_records), one prediction per record of y_true")
    for name, a in (("y_true", yt), ("y_pred", yp)):
        if a.size and not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name} must contain only binary labels 0/1 (or booleans)")
    return yt.astype(bool), yp.astype(bool)


def confusion_counts(y_true: ArrayLike, y_pred: ArrayLike) -> dict[str, np.ndarray]:
    """TP, FN, TN, FP of every classifier (rows of ``y_pred``) as int64 arrays.

    Parameters
    ----------
    y_true, y_pred : array_like of shapes (n_records,) and (n_classifiers, n_records) or (n_records,)
        The true and the predicted binary labels (0/1 or booleans), one row of ``y_pred`` per classifier (a
        1-D array is one classifier).

    Returns
    -------
    dict of str to ndarray of shape (n_classifiers,)
        ``{"TP": ..., "FN": ..., "TN": ..., "FP": ...}``, int64 counts per classifier.

    Raises
    ------
    ValueError
        ``y_true`` is not 1-D, ``y_pred`` has the wrong shape, or a label is not binary.

    Examples
    --------
    >>> c = confusion_counts([1, 1, 0], [[1, 0, 0], [1, 1, 1]])
    >>> c["TP"].tolist(), c["FN"].tolist(), c["TN"].tolist(), c["FP"].tolist()
    ([1, 2], [1, 0], [1, 0], [0, 1])
    """
    yt, yp = _check_labels(y_true, y_pred)
    pos = int(yt.sum())
    neg = yt.shape[0] - pos
    tp = (yp & yt).sum(axis=1).astype(np.int64)
    tn = (~yp & ~yt).sum(axis=1).astype(np.int64)
    return {"TP": tp, "FN": pos - tp, "TN": tn, "FP": neg - tn}


def _rate(hit: np.ndarray, miss: np.ndarray) -> np.ndarray:
    total = hit + miss
    return np.divide(hit, total, out=np.zeros(hit.shape, dtype=np.float64), where=total > 0)


def tpr(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    """TP / P for every classifier (0 when there is no positive record). Global sensitivity 1.

    The true positive rate, a utility of the classifiers under add/remove one record; its exact element
    local sensitivity is :func:`tpr_sensitivity`.

    Parameters
    ----------
    y_true, y_pred : array_like of shapes (n_records,) and (n_classifiers, n_records) or (n_records,)
        The true and the predicted binary labels, one row of ``y_pred`` per classifier.

    Returns
    -------
    ndarray of shape (n_classifiers,)
        The rates, float64 in [0, 1].

    Examples
    --------
    >>> tpr([1, 1, 0, 0], [[1, 0, 0, 1], [1, 1, 1, 1]]).tolist()
    [0.5, 1.0]
    """
    c = confusion_counts(y_true, y_pred)
    return _rate(c["TP"], c["FN"])


def tnr(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    """TN / N for every classifier (0 when there is no negative record). Global sensitivity 1.

    The true negative rate, a utility of the classifiers under add/remove one record; its exact element
    local sensitivity is :func:`tnr_sensitivity`.

    Parameters
    ----------
    y_true, y_pred : array_like of shapes (n_records,) and (n_classifiers, n_records) or (n_records,)
        The true and the predicted binary labels, one row of ``y_pred`` per classifier.

    Returns
    -------
    ndarray of shape (n_classifiers,)
        The rates, float64 in [0, 1].

    Examples
    --------
    >>> tnr([1, 1, 0, 0], [[1, 0, 0, 1], [1, 1, 1, 1]]).tolist()
    [0.5, 0.0]
    """
    c = confusion_counts(y_true, y_pred)
    return _rate(c["TN"], c["FP"])


def rate_values(hit: ArrayLike, miss: ArrayLike, t: ArrayLike) -> np.ndarray:
    """δ(x, t, r) of the rate hit/(hit + miss) under add/remove-one-record (module docstring).

    ``hit``, ``miss`` and ``t`` broadcast against each other (a column of counts against a row of
    distances gives a table); every entry is the same float expression whatever the shapes.

    Parameters
    ----------
    hit : array_like
        The counts in the numerator (TP for the TPR, TN for the TNR), >= 0.
    miss : array_like
        The other counts of the denominator (FN, resp. FP), >= 0.
    t : array_like
        The distances, >= 0.

    Returns
    -------
    ndarray
        float64, of the broadcast shape of ``hit``, ``miss`` and ``t``; no validation is done.

    Examples
    --------
    >>> rate_values([[4], [1]], [[1], [1]], [0, 1, 2, 3]).tolist()    # two classifiers, t = 0..3
    [[0.2, 0.3333333333333333, 0.5, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    hit = np.asarray(hit, dtype=np.float64)
    miss = np.asarray(miss, dtype=np.float64)
    big = np.maximum(hit, miss)
    small = np.minimum(hit, miss)
    P = big + small
    if P.size > 1 and P.ndim == 2 and 1 in P.shape and P.min() == P.max():
        # a column of classifiers on the same records (TP + FN = P for all): P − t and everything computed
        # from it alone is one row over the distances, the same floats as the full table would hold
        P = P.flat[0]
    rem = P - t
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if big.size and np.size(t) and max(float(np.max(P)), float(np.max(np.abs(t)))) < _EXACT:
            # counts and distances below 2^52: every sum and difference of them is an exact float, so
            # big − (t − small) − 1 is the float rem − 1, and where rem > 2 the minimum with 1 is 1/(rem − 1)
            # itself: the same floats as the general expression below, with fewer passes over the table
            r1 = rem - 1.0
            out = np.where(t <= small, big / (rem * r1), 1.0 / r1)
        else:
            out = np.where(t <= small, big / (rem * (rem - 1.0)), np.minimum(1.0, 1.0 / (big - (t - small) - 1.0)))
    low = rem <= 2    # δ = 1 there; elsewhere rem > 2, so no value kept above is NaN or inf
    if np.any(low):
        out[np.broadcast_to(low, out.shape)] = 1.0
    return out


#: Below this, integer counts and distances and their sums/differences are exact float64 values.
_EXACT = 2.0 ** 52


def rate_sensitivity(hit: ArrayLike, miss: ArrayLike, *, name: str = "rate") -> SensitivityFunction:
    """The exact element local sensitivity of hit / (hit + miss) as a SensitivityFunction (Δ = 1).

    Admissible under add/remove one record (checked exhaustively in the tests).

    Parameters
    ----------
    hit : array_like of int, shape (n_candidates,)
        The counts in the numerator of each candidate's rate, >= 0.
    miss : array_like of int, shape (n_candidates,)
        The other counts of each denominator, >= 0.
    name : str, default "rate"
        The name of the sensitivity function (keyword-only).

    Returns
    -------
    SensitivityFunction
        ``δ(t)`` of shape (n_candidates,) given by :func:`rate_values`, global sensitivity 1, saturating at
        distance max(hit + miss).

    Raises
    ------
    ValueError
        ``hit`` and ``miss`` are not 1-D of equal shape, or hold a negative count.

    Examples
    --------
    >>> rate_sensitivity([4], [1])(0).tolist()     # TP = 4, FN = 1: removing the FN moves TPR by 0.2
    [0.2]
    >>> rate_sensitivity([4, 2], [1, 2])(1).shape
    (2,)
    """
    hit = np.asarray(hit, dtype=np.int64)
    miss = np.asarray(miss, dtype=np.int64)
    if hit.shape != miss.shape or hit.ndim != 1:
        raise ValueError("hit and miss must be 1-D arrays of equal shape")   # counts per candidate: no sizes named
    if (hit < 0).any() or (miss < 0).any():
        raise ValueError("hit and miss counts must be >= 0")

    def fn(t, candidates=None):
        if candidates is None:
            return rate_values(hit, miss, t)
        return rate_values(hit[candidates], miss[candidates], t)

    def block(t0, t1, candidates):
        return rate_values(hit[None, candidates], miss[None, candidates], np.arange(t0, t1)[:, None])

    sat = int((hit + miss).max()) if hit.size else 0
    return SensitivityFunction(fn, 1.0, n_candidates=hit.shape[0], saturation_distance=sat, name=name,
                               elementwise=True, block=block)


def tpr_sensitivity(y_true: ArrayLike, y_pred: ArrayLike) -> SensitivityFunction:
    """Admissible sensitivity function of :func:`tpr` (add/remove one record, Δ = 1).

    Parameters
    ----------
    y_true, y_pred : array_like of shapes (n_records,) and (n_classifiers, n_records) or (n_records,)
        The true and the predicted binary labels, one row of ``y_pred`` per classifier.

    Returns
    -------
    SensitivityFunction
        The exact element local sensitivity (:func:`rate_sensitivity` of TP, FN), values of shape
        (n_classifiers,).

    Examples
    --------
    >>> tpr_sensitivity([1, 1, 1, 1, 1, 0], [[1, 1, 1, 1, 0, 0]])(0).tolist()
    [0.2]
    """
    c = confusion_counts(y_true, y_pred)
    return rate_sensitivity(c["TP"], c["FN"], name="tpr")


def tnr_sensitivity(y_true: ArrayLike, y_pred: ArrayLike) -> SensitivityFunction:
    """Admissible sensitivity function of :func:`tnr` (add/remove one record, Δ = 1).

    Parameters
    ----------
    y_true, y_pred : array_like of shapes (n_records,) and (n_classifiers, n_records) or (n_records,)
        The true and the predicted binary labels, one row of ``y_pred`` per classifier.

    Returns
    -------
    SensitivityFunction
        The exact element local sensitivity (:func:`rate_sensitivity` of TN, FP), values of shape
        (n_classifiers,).

    Examples
    --------
    >>> tnr_sensitivity([0, 0, 0, 0, 0, 1], [[0, 0, 0, 0, 1, 1]])(0).tolist()
    [0.2]
    """
    c = confusion_counts(y_true, y_pred)
    return rate_sensitivity(c["TN"], c["FP"], name="tnr")
