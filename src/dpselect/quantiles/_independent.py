"""method="independent": each quantile by the interval mechanism at ε/m (the median's mechanism, any rank).

m distinct quantiles, each released by :func:`._single.single_quantile` with ε0 = ε/m (rounded down so that
m·ε0 <= ε). Each release is ε0-bounded-range under replace-one neighbours (n public); the m releases are a
batch fixed in advance, so the whole is ``BoundedRangeComposition(ε0, m)``: ε-DP, and tighter under
(ε, δ) (Dong, Durfee & Rogers 2020). For m = 1 and q = 1/2 it is :func:`dpselect.median` (same law, and the
same value for the same seed). On a public grid (``candidates=``) each release is
:func:`._grid.grid_quantile` at the same ε0, with the same guarantee (each is ε0-bounded-range, see :mod:`._grid`).
Under add/remove-one neighbours (``neighbours="add_remove"``, n private) the same releases are ε0-bounded-range
too (the target round(2qn)/2 moves by a value in [0, 1] in the ranks' direction: :mod:`._single`, :mod:`._grid`),
so the mechanism and the guarantee are unchanged.
"""
from __future__ import annotations

import numpy as np

from ..accounting.composition import BoundedRangeComposition
from ..accounting.guarantees import Guarantee
from ._budget import split_epsilon
from ._grid import grid_quantile
from ._single import single_quantile

__all__: list[str] = []


def independent_privacy(epsilon: float, m: int) -> Guarantee:
    """The guarantee of m independent interval releases at ε/m each (a batch: BoundedRangeComposition)."""
    return BoundedRangeComposition(split_epsilon(epsilon, m), m)


def independent_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float,
                          hi: float, gen: np.random.Generator) -> np.ndarray:
    """One value per entry of ``qs`` (distinct, sorted), each at ε/len(qs), in the order of ``qs``."""
    eps0 = split_epsilon(epsilon, len(qs))
    return np.array([single_quantile(vals, cnt, lo, hi, float(q), eps0, gen) for q in qs], dtype=np.float64)


def independent_grid_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float,
                               cands: np.ndarray, gen: np.random.Generator, utility: str = "window") -> np.ndarray:
    """One candidate per entry of ``qs`` (distinct, sorted), each by the grid release at ε/len(qs)
    (``utility`` one of :data:`._grid.UTILITIES`)."""
    eps0 = split_epsilon(epsilon, len(qs))
    return np.array([grid_quantile(vals, cnt, cands, float(q), eps0, gen, utility) for q in qs], dtype=np.float64)
