"""``dpselect.dask.top_k``: :func:`dpselect.top_k` over a dask array, Series or DataFrame column, with its law."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._boundary import check_accountant, topk_budget
from .._rng import check_rng
from ..accounting.accountant import Accountant
from ..topk import TopKGaps, _charge, _check_arguments, _check_gaps_k, _draw, _one_shot_gaps
from ..typing import RngLike
from .._validation import check_k
from ._select import _blocks, _execute, _values

__all__ = ["top_k"]


def _gather(blocks: Any) -> tuple[np.ndarray, Any]:
    """Every utility on the client (in block order) and the labels (None for a dask array)."""
    import dask

    parts = dask.compute(*blocks.parts)
    u = np.concatenate([_values(p, blocks.column) for p in parts]) if parts else np.empty(0)
    labels = np.concatenate([np.asarray(p.index) for p in parts]) if blocks.labelled and parts else None
    return u, labels


def top_k(utilities: Any, *, k: int, epsilon: float, sensitivity: float, method: str = "auto",
          noise: str | None = None, delta: float = 0.0, monotonic: bool = False, gaps: bool = False,
          utility: str | None = None, rng: RngLike = None, accountant: Accountant | None = None) -> Any:
    """:func:`dpselect.top_k` over a dask array, Series or DataFrame column (``utility=``): the same methods,
    checks, charge (guarantee and label) and law.

    Peeling and one-shot (Gumbel or Laplace) run as :mod:`dpselect.dask`'s selectors do: a noisy top-k per
    partition, then an exact reduce of the shortlists (one-shot: one noise draw per candidate for every
    noise). The joint mechanism and ``gaps=True`` need every utility (the joint law is over all sequences; the
    gaps' exact refinement over the k + 1 largest): the utilities (one float per candidate) are gathered on
    the client and drawn there by the in-memory sampler.

    Privacy: as :func:`dpselect.top_k` (the method's guarantee, under any neighbour model for which
    ``sensitivity`` bounds every utility's change).

    Parameters
    ----------
    utilities : dask array, Series or DataFrame
        The utilities (a DataFrame: its column ``utility``).
    k, epsilon, sensitivity, method, noise, monotonic, gaps, rng
        As for :func:`dpselect.top_k`.
    delta : float, optional
        The top-k δ, as for :func:`dpselect.top_k`.
    utility : str, optional
        A DataFrame's utility column.
    accountant : Accountant, optional
        Charged as :func:`dpselect.top_k` charges, before anything is drawn or computed.

    Returns
    -------
    numpy.ndarray or TopKGaps
        The k positions (a dask array) or labels (Series / DataFrame) in order; with ``gaps=True`` a
        :class:`dpselect.topk.TopKGaps` of them.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> u = da.from_array(np.array([1.0, 50.0, 3.0, 40.0]), chunks=2)
    >>> top_k(u, k=2, epsilon=1e3, sensitivity=1.0, rng=0).tolist()
    [1, 3]
    >>> top_k(u, k=2, epsilon=1e3, sensitivity=1.0, method="one_shot", noise="laplace", rng=0).tolist()
    [1, 3]
    """
    blocks = _blocks(utilities, utility)
    if blocks.n == 0:
        raise ValueError("utilities must not be empty (no candidate to select)")
    kk, eps, sens, meth, nz, d, monotonic, gaps = _check_arguments(blocks.n, k, epsilon, sensitivity, method, noise,
                                                                   delta, monotonic, gaps)
    gen = check_rng(rng)
    check_accountant(accountant)
    _charge(accountant, meth, kk, eps, nz, d, gaps, monotonic)
    if gaps or meth == "joint":
        u, labels = _gather(blocks)
        if blocks.n is None:   # known only now (a Series): refused after the charge, as dask's selectors do
            check_k(kk, u.shape[0])
            if gaps:
                _check_gaps_k(kk, u.shape[0])
        if gaps:
            idx, gp, h = _one_shot_gaps(u, eps, sens, kk, monotonic, gen)
            return TopKGaps(idx if labels is None else labels[idx], gp, h, meth)
        idx = _draw(u, kk, eps, sens, meth, nz, d, monotonic, gen)
        return idx if labels is None else labels[idx]
    mult = 1 if monotonic else 2
    if meth == "one_shot" and nz == "laplace":
        return _execute(blocks, eps=eps, sensitivity=sens, mult_per_pick=mult, k=kk, noise="laplace", rng=gen,
                        one_pass=True)
    noise_ = nz or "gumbel"
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=noise_ == "gumbel")
    return _execute(blocks, eps=eps_pick, sensitivity=sens, mult_per_pick=mult, k=kk, split=split, noise=noise_,
                    rng=gen)
