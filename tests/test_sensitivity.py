import numpy as np
import pytest

import dpselect
from dpselect import SensitivityFunction, constant, maximum, weighted_sum


def test_constant_and_weighted_sum():
    f = weighted_sum([3, -2], [constant(2, 1.0), constant(2, 0.5)])
    assert f.global_sensitivity == 4.0
    assert f(0).tolist() == [4.0, 4.0]
