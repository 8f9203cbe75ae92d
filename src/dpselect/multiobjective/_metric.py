"""Metric C of paper Def. 6.3: the fraction of one set of candidates dominated by another."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_matrix


def _indices(idx, name: str, n: int) -> np.ndarray:
    arr = np.asarray(idx)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"{name} must be a 1-D array of candidate indices (ints), got {_short_repr(idx)}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{name} must be indices in [0, {n}), got {arr.tolist()[:10]}")
    return arr.astype(np.intp)


def _short_repr(x) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def metric_c(reference: ArrayLike, candidates: ArrayLike, *, objectives: ArrayLike | None = None) -> float:
    """Metric C(X', X'') of paper Def. 6.3: fraction of X'' dominated by at least one member of X'.

    Domination is strict in every objective (the module's definition), all objectives maximised;
    0 = no member of X'' is dominated by a member of X' (best for X''). Two forms:

    * ``metric_c(reference, candidates)``: X' and X'' as (n', m) and (n'', m) arrays of objective values;
    * ``metric_c(reference, candidates, objectives=U)``: X' and X'' as index arrays into the rows of
      ``U`` (e.g. a non-private top-k and a private selection of nodes).

    Parameters
    ----------
    reference : array of shape (n', m), or 1-D int array with ``objectives``
        X': the set whose members may dominate.
    candidates : array of shape (n'', m), or 1-D int array with ``objectives``
        X'': the set measured (non-empty).
    objectives : array of shape (n, m), optional
        The objective values of all candidates; ``reference`` and ``candidates`` are then row indices.

    Returns
    -------
    float
        In [0, 1]: the fraction of X'' dominated by some member of X'. Not private (post-processing of
        released selections and of the data: an evaluation measure).

    Examples
    --------
    >>> metric_c(np.array([[0.9, 0.9]]), np.array([[0.5, 0.5], [0.95, 0.1]]))
    0.5
    >>> metric_c([0], [1, 2], objectives=np.array([[3, 3], [1, 1], [2, 4]]))
    0.5
    """
    if objectives is not None:
        U = check_matrix(objectives, "objectives")
        ref = _indices(reference, "reference", U.shape[0])
        sel = _indices(candidates, "candidates", U.shape[0])
        for name, arr in (("reference", ref), ("candidates", sel)):
            if arr.size == 0:
                raise ValueError(f"{name} must not be empty")
        A, B = U[ref], U[sel]
    else:
        A = check_matrix(reference, "reference")
        B = check_matrix(candidates, "candidates")
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"reference and candidates must be non-empty (n, m) arrays with equal m, got {A.shape}, "
                             f"{B.shape}")
    dominated = (A[:, None, :] > B[None, :, :]).all(axis=2).any(axis=0)
    return float(dominated.mean())
