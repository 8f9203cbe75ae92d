"""Public type aliases of dpselect's signatures.

>>> import numpy as np
>>> from dpselect.typing import RngLike
>>> def draw(rng: RngLike = None) -> int: ...
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

__all__ = ["RngLike"]

#: What every ``rng=`` of dpselect accepts (numpy SPEC 7, what ``numpy.random.default_rng`` accepts):
#: ``None`` (fresh OS entropy), an int seed >= 0 or a sequence of them, a ``SeedSequence``, a
#: ``BitGenerator`` or a ``Generator`` (used as is).
RngLike = Union[None, int, Sequence[int], np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]
