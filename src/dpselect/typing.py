"""Public type aliases of dpselect's signatures.

* ``RngLike``: what every ``rng=`` accepts, normalised to a ``numpy.random.Generator`` once at the public
  boundary (a ``Generator`` is used as is, anything else goes through ``numpy.random.default_rng``).

>>> import numpy as np
>>> from dpselect.typing import RngLike
>>> def draw(rng: RngLike = None) -> int: ...
>>> import dpselect
>>> [dpselect.exponential([0.0, 50.0], epsilon=1.0, sensitivity=1.0, rng=r)
...  for r in (0, [1, 2], np.random.SeedSequence(3), np.random.PCG64(4), np.random.default_rng(5))]
[1, 1, 1, 1, 1]
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

__all__ = ["RngLike"]

#: What every ``rng=`` of dpselect accepts (numpy SPEC 7, what ``numpy.random.default_rng`` accepts):
#: ``None`` (fresh OS entropy), an int seed >= 0 or a sequence of them, a ``SeedSequence``, a
#: ``BitGenerator`` or a ``Generator`` (used as is).
RngLike = Union[None, int, Sequence[int], np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]
