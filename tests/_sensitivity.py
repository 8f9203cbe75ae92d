"""A helper shared by tests/test_dampening.py and tests/test_dampening_buffers.py: a SensitivityFunction from a
per-candidate rule ``get(t, idx)``, in each of the three call conventions the dampening walk must handle."""
import numpy as np

from dpselect import SensitivityFunction

__all__ = ["sf_from_rule"]


def sf_from_rule(get, n, delta_max, *, mode="candidates", name=None):
    """δ(x, t, r) = get(t, r) for n candidates. mode: "candidates" (fn(t, candidates=None)), "full" (only
    fn(t), every candidate at once) or "elementwise" (fn(t, candidates) with t an array beside candidates)."""
    if mode == "full":
        def fn(t):
            return get(t, np.arange(n))
    else:
        def fn(t, candidates=None):
            return get(t, np.arange(n) if candidates is None else candidates)
    kw = {} if name is None else {"name": name}
    return SensitivityFunction(fn, delta_max, n_candidates=n, elementwise=(mode == "elementwise"), **kw)
