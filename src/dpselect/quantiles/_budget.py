"""The per-release ε of a split budget, rounded down so that k releases never exceed ε."""
from __future__ import annotations

import math
from fractions import Fraction

__all__: list[str] = []


def split_epsilon(epsilon: float, k: int) -> float:
    """The largest float ε0 <= ε/k (exactly: k·ε0 <= ε as rationals); ε itself for k = 1."""
    if k == 1:
        return float(epsilon)
    e0 = float(epsilon) / k
    while Fraction(e0) * k > Fraction(epsilon):
        e0 = math.nextafter(e0, 0.0)
    return e0
