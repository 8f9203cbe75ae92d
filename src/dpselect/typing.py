"""Public type aliases of dpselect's signatures.

* ``RngLike``: what every ``rng=`` accepts, normalised to a ``numpy.random.Generator`` once at the public
  boundary (a ``Generator`` is used as is, anything else goes through ``numpy.random.default_rng``).
* ``MechanismName``: the names and upper-case aliases of the built-in selection mechanisms (``mechanism=``).
* ``Neighbours``: the name of a neighbour relation, one of the built-in ``"add_remove"``, ``"replace_one"``,
  ``"edge_add_remove"``, ``"user_add_remove"`` or a user's own (any other ``str``).
* ``Selection``: what a selector returns for array input: an ``int`` with ``k`` omitted, else an int64 array.
* ``Selector``, ``ProbabilityFunction``: the callables a :class:`dpselect.registry.Mechanism` holds.

>>> import numpy as np
>>> from dpselect.typing import RngLike
>>> def draw(rng: RngLike = None) -> int: ...
>>> import dpselect
>>> [dpselect.exponential([0.0, 50.0], epsilon=1.0, sensitivity=1.0, rng=r)
...  for r in (0, [1, 2], np.random.SeedSequence(3), np.random.PCG64(4), np.random.default_rng(5))]
[1, 1, 1, 1, 1]
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, Union

import numpy as np
import numpy.typing as npt

__all__ = ["RngLike", "MechanismName", "Neighbours", "IndexArray", "Selection", "Selector", "ProbabilityFunction"]

#: What every ``rng=`` of dpselect accepts (numpy SPEC 7, what ``numpy.random.default_rng`` accepts):
#: ``None`` (fresh OS entropy), an int seed >= 0 or a sequence of them, a ``SeedSequence``, a
#: ``BitGenerator`` or a ``Generator`` (used as is).
RngLike = Union[None, int, Sequence[int], np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]

#: The names and upper-case aliases of the built-in mechanisms, for type hints (a test checks it against the
#: registry; a user's registered mechanism is passed by its name as a plain ``str``).
MechanismName = Literal["exponential", "permute_and_flip", "report_noisy_max", "local_dampening",
                        "shifted_local_dampening", "EM", "PF", "RNM", "LD", "SLD"]

#: A neighbour relation by name: the built-in ones are the literals (record add/remove, record replace-one,
#: edge add/remove, user add/remove: :mod:`dpselect.accounting.neighbours`); any other ``str`` names a user's own
#: relation, which matches only itself.
Neighbours = Union[Literal["add_remove", "replace_one", "edge_add_remove", "user_add_remove"], str]

#: Candidate positions: int64 indices (k picks in the order picked, or ``size`` draws).
IndexArray = npt.NDArray[np.int64]
#: A selector's result for array input: one ``int`` (``k`` omitted), else an :data:`IndexArray`.
Selection = Union[int, IndexArray]
#: A selector: ``(utilities, *, epsilon, sensitivity | sensitivity_function, k=None, rng=None, size=None,
#: ...)`` -> an integer index or an array of them (the keywords differ between mechanisms, hence ``...``).
Selector = Callable[..., Union[int, np.integer[Any], npt.NDArray[Any]]]
#: The exact law of one pick: ``(utilities, *, epsilon, sensitivity | sensitivity_function, ...)`` -> float64
#: probabilities of shape (n,).
ProbabilityFunction = Callable[..., npt.NDArray[np.float64]]
