"""Random number generator handling (one place, scikit-learn style ``random_state`` semantics)."""
from __future__ import annotations

import numbers
import numpy as np

from .typing import RngLike  # the one public spelling, for the package's modules


def check_rng(rng: RngLike) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``rng`` (numpy SPEC 7).

    Accepts anything ``numpy.random.default_rng`` accepts: ``None`` (fresh OS entropy), an int seed
    >= 0 (or a sequence of them), a ``SeedSequence``, a ``BitGenerator`` or a ``Generator`` (used as
    is). numpy's global random state is never touched.

    >>> bool(check_rng(np.random.SeedSequence(1)).integers(10) == check_rng(1).integers(10))
    True
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (np.random.BitGenerator, np.random.SeedSequence)):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng must be an int seed >= 0, a SeedSequence, a BitGenerator or a Generator, got {rng!r}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, (list, tuple)) and rng and all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                                                      and int(x) >= 0 for x in rng):
        return np.random.default_rng([int(x) for x in rng])
    raise TypeError(
        "rng must be None, an int seed >= 0 (or a sequence of them), a numpy SeedSequence, BitGenerator or "
        f"Generator, got {type(rng).__name__}"
    )
