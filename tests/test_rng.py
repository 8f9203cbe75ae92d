"""rng arguments follow numpy SPEC 7: anything numpy.random.default_rng accepts."""
import numpy as np
import pytest

import dpselect
from dpselect._rng import check_rng

U = np.array([0.0, 1.0, 2.0, 2.0, -3.0, 5.0])


def test_every_spec7_seed_form_gives_the_same_stream_as_default_rng():
    for seed in (7, [7, 8], np.random.SeedSequence(7), np.random.PCG64(7)):
        ref = np.random.default_rng(seed if not isinstance(seed, np.random.PCG64) else np.random.PCG64(7))
        got = check_rng(seed if not isinstance(seed, np.random.PCG64) else np.random.PCG64(7))
        assert got.integers(0, 2 ** 62, size=5).tolist() == ref.integers(0, 2 ** 62, size=5).tolist()
    g = np.random.default_rng(3)
    assert check_rng(g) is g


def test_selectors_accept_every_seed_form_and_are_reproducible():
    a = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, size=50, rng=np.random.SeedSequence(11))
    b = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, size=50, rng=np.random.default_rng(np.random.SeedSequence(11)))
    c = dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, size=50, rng=np.random.PCG64(np.random.SeedSequence(11)))
    assert a.tolist() == b.tolist() == c.tolist()


@pytest.mark.parametrize("bad", ["x", 1.5, -1, [1, -2], True])
def test_bad_rng_is_a_clear_error(bad):
    with pytest.raises((TypeError, ValueError), match="rng must be"):
        check_rng(bad)
