"""Random number generator handling (one place, scikit-learn style ``random_state`` semantics)."""
from __future__ import annotations

import numbers

import numpy as np

RNGLike = "np.random.Generator | int | None"


def check_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``rng``.

    ``None`` gives a fresh generator seeded from OS entropy, an int seeds a new PCG64 generator, a
    ``Generator`` is used as is. numpy's global random state is never touched.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng must be a numpy.random.Generator or an int seed >= 0, got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}"
    )
