"""Checked by mypy, never imported or collected by pytest: the CI's mypy step (.ci/run) reads this file with
src/dpselect ([tool.mypy] files in pyproject.toml). ``RngLike`` is one public type that mypy accepts for every
numpy SPEC 7 seed, and dpselect's annotations are really checked: a ``str`` seed is an error, which the
``type: ignore`` below silences; were the annotation to accept it, the ignore would go unused and
``warn_unused_ignores`` would fail the step. (Moved from tests/test_compat.py: mypy ran inside pytest.)
"""
import numpy as np

import dpselect
from dpselect.typing import RngLike


def _accepted() -> None:
    r: RngLike = np.random.SeedSequence(1)
    dpselect.exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng=np.random.SeedSequence(1))
    dpselect.exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng=r)
    dpselect.multiobjective.priv_agg([[1.0, 2.0]], [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], rng=np.random.PCG64(2))


def _refused() -> None:
    dpselect.exponential([1.0, 2.0], epsilon=1.0, sensitivity=1.0, rng="seed")  # type: ignore[arg-type]
