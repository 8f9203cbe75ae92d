"""Checked by mypy only (the CI's mypy step; never collected by pytest): the selectors' return types follow the
one return convention, through the public functions and the registry's specs. ``k`` omitted gives an ``int``, an
int ``k`` or ``size=`` an int64 array; the ``type: ignore`` lines are errors that ``warn_unused_ignores`` turns into
failures the day an annotation gets looser (an ``int`` result assigned to an array, say).
"""
from typing import assert_type

import numpy as np
import numpy.typing as npt

import dpselect
from dpselect.accounting import Guarantee
from dpselect.registry import get_mechanism
from dpselect.typing import MechanismName, Neighbours

U = [1.0, 5.0, 2.0]
SF = dpselect.constant(3, 1.0)


def _selectors() -> None:
    one: int = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0)
    one = dpselect.report_noisy_max(U, epsilon=1.0, sensitivity=1.0, noise="gumbel")
    one = dpselect.local_dampening(U, epsilon=1.0, sensitivity_function=SF)
    assert_type(dpselect.permute_and_flip(U, epsilon=1.0, sensitivity=1.0), int)
    assert_type(dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, k=2), npt.NDArray[np.int64])
    assert_type(dpselect.permute_and_flip(U, epsilon=1.0, sensitivity=1.0, size=4), npt.NDArray[np.int64])
    assert_type(dpselect.shifted_local_dampening(U, epsilon=1.0, sensitivity_function=SF, k=2, size=3),
                npt.NDArray[np.int64])
    k: int | None = None
    assert_type(dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, k=k), int | npt.NDArray[np.int64])
    print(one)


def _registry() -> None:
    spec = get_mechanism("EM")
    one: int = spec.select(U, epsilon=1.0, sensitivity=1.0, rng=0)
    assert_type(spec.select(U, epsilon=1.0, sensitivity=1.0, k=2), npt.NDArray[np.int64])
    assert_type(get_mechanism("LD").select(U, epsilon=1.0, sensitivity=SF, size=5), npt.NDArray[np.int64])
    assert_type(spec.probabilities(U, epsilon=1.0, sensitivity=1.0), npt.NDArray[np.float64])
    assert_type(spec.privacy(1.0, k=2), Guarantee)
    print(one)


def _names() -> None:
    m: MechanismName = "SLD"
    built_in: Neighbours = "edge_add_remove"
    own: Neighbours = "one_user_all_records"
    print(m, built_in, own)


def _refused() -> None:
    arr: np.ndarray = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0)  # type: ignore[assignment]
    idx: int = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, k=1)  # type: ignore[assignment]
    pick: int = get_mechanism("PF").select(U, epsilon=1.0, sensitivity=1.0, size=2)  # type: ignore[assignment]
    m: MechanismName = "em"  # type: ignore[assignment]
    print(arr, idx, pick, m)
