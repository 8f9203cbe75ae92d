"""The dampening walk's buffers (issue 38, memory follow-up): the walk reuses its arrays and skips the
index arrays when every candidate is active, without changing any output bit. The digests below were
computed with the walk before that change (commit 40adb32) and are frozen here: D and err of
dampen_with_error, D of dampen and (G, err) of shift_totals_with_error on random inputs (negative
utilities, zeros, huge, tiny and subnormal values, values near DBL_MAX) for several sensitivity functions
(constant, full-only, candidates, elementwise, bounded, slow ones that reach the far probe or the walk
limit, zero δ(0), random non-monotone tables), with and without zero utilities (with none, the walk takes
its path without index arrays). Every digest was computed by the code of 40adb32 (a detached checkout)."""
import hashlib
import tracemalloc

import numpy as np
import pytest

import dpselect
from dpselect import SensitivityFunction
from dpselect.dampening import dampen, dampen_with_error, shift_totals_with_error

from _sensitivity import sf_from_rule  # tests/_sensitivity.py

N = 3000


def _utilities(seed: int, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, size=n)
    pick = rng.random(n)
    u[pick < 0.08] = 0.0
    u[(pick >= 0.08) & (pick < 0.12)] = np.round(u[(pick >= 0.08) & (pick < 0.12)])           # integers
    u[(pick >= 0.12) & (pick < 0.15)] = 0.1 * rng.integers(-50, 50, size=int(((pick >= 0.12) & (pick < 0.15)).sum()))
    special = np.array([1e300, -1e300, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324,
                        1e-310, 2.0 ** -1022, 3.0, -3.0, 0.3, -0.3, 1e16, -1e16])
    u[rng.choice(n, size=special.size, replace=False)] = special
    return u


def _per_candidate_sf(seed: int, n: int, *, mode: str, delta: float = 1.0):
    """δ(x, t, r) = min(Δ, scale_r / (deg_r − t − 2)) style (ego-like, with non-integer values), Δ where
    deg_r − t − 2 <= 0; zero at t = 0 for some candidates."""
    rng = np.random.default_rng(seed)
    deg = np.minimum(np.floor(rng.pareto(1.5, size=n) * 3 + 1), 400).astype(np.int64)
    scale = rng.choice([0.1, 0.3, 1.0, 2.0], size=n)
    zero0 = rng.random(n) < 0.1

    def get(t, idx):
        t = np.asarray(t)
        rem = deg[idx] - t - 2
        v = np.where(rem > 0, np.minimum(delta, scale[idx] / np.maximum(rem, 1)), delta)
        return np.where((t == 0) & zero0[idx], 0.0, v)

    return sf_from_rule(get, n, delta, mode=mode)


def _table_sf(seed: int, n: int, *, mode: str, T: int = 12, delta: float = 1.0):
    rng = np.random.default_rng(seed)
    tab = rng.choice([0.0, 0.1, 0.25, 0.3, 0.7, 1.0], size=(n, T), p=[0.1, 0.3, 0.1, 0.3, 0.15, 0.05])

    def get(t, idx):
        t = np.asarray(t)
        return np.where(t < T, tab[idx, np.minimum(t, T - 1)], delta)

    return sf_from_rule(get, n, delta, mode=mode)


def _slow_sf(n: int, *, mode: str, step: float = 2.0 ** -10):
    """δ = step (below Δ = 1) at every t: no saturation, the walk reaches the far probe and its limit."""
    if mode == "full":
        def fn(t):
            return np.full(n, step)
    else:
        def fn(t, candidates=None):
            return np.full(np.broadcast_shapes(np.shape(t), (n,) if candidates is None else np.shape(candidates)),
                           step)
    return SensitivityFunction(fn, 1.0, n_candidates=n, elementwise=(mode == "elementwise"))


def _cases():
    """(name, utilities, sensitivity function, max_steps)."""
    out = []
    for seed in (1, 2):
        u = _utilities(seed)
        out += [
            (f"constant 1 s{seed}", u, dpselect.constant(N, 1.0), 1_000_000),
            (f"constant 0.1 s{seed}", u, dpselect.constant(N, 0.1), 1_000_000),
            (f"constant 3 s{seed}", u, dpselect.constant(N, 3.0), 1_000_000),
            (f"stepped full s{seed}", u, SensitivityFunction(lambda t: np.full(N, [0.1, 0.3, 0.7, 1.0][min(t, 3)]), 1.0),
             1_000_000),
            (f"stepped bounded s{seed}", u, SensitivityFunction(
                lambda t: np.full(N, [0.1, 0.3, 0.7, 0.9][min(t, 3)]), 1.0).bounded(40), 1_000_000),
        ]
        for mode in ("full", "candidates", "elementwise"):
            out += [
                (f"ego {mode} s{seed}", u, _per_candidate_sf(seed, N, mode=mode), 1_000_000),
                (f"ego {mode} Δ=2.5 s{seed}", u * 0.01, _per_candidate_sf(seed + 10, N, mode=mode, delta=2.5), 300),
                (f"table {mode} s{seed}", u * 0.01, _table_sf(seed, N, mode=mode), 1_000_000),
                (f"slow {mode} s{seed}", u * 1e-3, _slow_sf(N, mode=mode), 3000),
                (f"slow {mode} short s{seed}", u * 1e-3, _slow_sf(N, mode=mode), 7),
            ]
        mask = np.random.default_rng(seed).random(N) < 0.3   # δ = 0 at every t for these, 0.5 for the others

        def zero_fn(t, candidates=None, mask=mask):
            return np.where(mask if candidates is None else mask[candidates], 0.0, 0.5)

        zb = SensitivityFunction(zero_fn, 1.0, n_candidates=N)
        zb.far_probe = False
        zb.zero_below = lambda limit, mask=mask: mask
        out.append((f"zero_below s{seed}", u * 1e-2, zb, 50))
    for seed in (4, 5):   # no zero utility: the walk without index arrays (every candidate active)
        u = _utilities(seed)
        u[u == 0] = np.where(np.arange(N)[u == 0] % 2, 0.7, -0.4)
        out += [
            (f"no zero constant 1 s{seed}", u, dpselect.constant(N, 1.0), 1_000_000),
            (f"no zero constant 0.1 s{seed}", u, dpselect.constant(N, 0.1), 1_000_000),
            (f"no zero stepped full s{seed}", u * 0.1, SensitivityFunction(
                lambda t: np.full(N, [0.1, 0.3, 0.7, 1.0][min(t, 3)]), 1.0), 1_000_000),
            (f"no zero ego full s{seed}", u, _per_candidate_sf(seed, N, mode="full"), 1_000_000),
            (f"no zero ego candidates s{seed}", u * 0.01, _per_candidate_sf(seed, N, mode="candidates"), 1_000_000),
            (f"no zero table candidates s{seed}", u * 0.01, _table_sf(seed, N, mode="candidates"), 1_000_000),
            (f"no zero slow candidates s{seed}", u * 1e-3, _slow_sf(N, mode="candidates"), 3000),
            (f"no zero slow full short s{seed}", u * 1e-3, _slow_sf(N, mode="full"), 7),
        ]
    u = _utilities(3)
    out.append(("all positive constant", np.abs(u) + 1.0, dpselect.constant(N, 1.0), 1_000_000))
    out.append(("all zero", np.zeros(N), dpselect.constant(N, 1.0), 1_000_000))
    return out


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        assert a.dtype == np.float64
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _outputs(name, u, sf, max_steps):
    D, err = dampen_with_error(u, sf, max_steps=max_steps)
    D0 = dampen(u, sf, max_steps=max_steps)
    G, gerr = shift_totals_with_error(sf, N, max_steps=max_steps)
    return _digest(D, err), _digest(D0), _digest(G, gerr)


FROZEN: dict[str, tuple[str, str, str]] = {
    'constant 1 s1': ('a666b262412b2e63', 'a6c328f2f7336768', 'bb918147fe10391b'),
    'constant 0.1 s1': ('12f6d49fbdff6e19', '82aed54e0f5e1651', 'bb918147fe10391b'),
    'constant 3 s1': ('4c152f181fa842a6', 'a01bfb5aaca7c0fd', 'bb918147fe10391b'),
    'stepped full s1': ('52146119d5d1f943', '717a56d4218ec13e', '3e379dc9fcfa463a'),
    'stepped bounded s1': ('d9fb5d69c2b52da2', 'f66e281cff185309', '28a81b29dc4ad9fc'),
    'ego full s1': ('c3ab29471209d710', '34bacd3c7e65c50a', '56abf258d155a123'),
    'ego full Δ=2.5 s1': ('d9fc3df9fb5bd1ee', 'ac2ae62ee07343b0', '3d0d18e59ec7e8f5'),
    'table full s1': ('5258a7cc96de74b2', 'bbe07b28eb566611', '4f520cffde8bb93c'),
    'slow full s1': ('7d9d423f50a93ac0', '47287b58fd266eb2', 'a77f90ecf57a41d3'),
    'slow full short s1': ('d6e307de7e1bf798', '5861d7257749a3b1', 'c09999e646b6b73b'),
    'ego candidates s1': ('c3ab29471209d710', '34bacd3c7e65c50a', '56abf258d155a123'),
    'ego candidates Δ=2.5 s1': ('d9fc3df9fb5bd1ee', 'ac2ae62ee07343b0', '3d0d18e59ec7e8f5'),
    'table candidates s1': ('5258a7cc96de74b2', 'bbe07b28eb566611', '4f520cffde8bb93c'),
    'slow candidates s1': ('7d9d423f50a93ac0', '47287b58fd266eb2', 'a77f90ecf57a41d3'),
    'slow candidates short s1': ('d6e307de7e1bf798', '5861d7257749a3b1', 'c09999e646b6b73b'),
    'ego elementwise s1': ('b2f6b27e404c3b2a', '5d59637851cf3346', '6dc08a2447f1e3c6'),
    'ego elementwise Δ=2.5 s1': ('c7675db19e8d3944', '4fd3ae43211117c0', '1b0869c34ad22729'),
    'table elementwise s1': ('d6b65332ad019e7b', '0a1e2979a5b68168', '463cbee5ea112963'),
    'slow elementwise s1': ('7d9d423f50a93ac0', '47287b58fd266eb2', 'a77f90ecf57a41d3'),
    'slow elementwise short s1': ('d6e307de7e1bf798', '5861d7257749a3b1', 'c09999e646b6b73b'),
    'zero_below s1': ('0328dd74078e61ca', 'f4ee2e14aff8eeb2', '8906efc4dfc91ab4'),
    'constant 1 s2': ('e5b352e03ac305d8', '601f318c78b58f5f', 'bb918147fe10391b'),
    'constant 0.1 s2': ('3ed37f629ebf0acd', '7c5da5c1fadbd722', 'bb918147fe10391b'),
    'constant 3 s2': ('e1d1fa8a75cb1e36', 'b0097c253060b0a1', 'bb918147fe10391b'),
    'stepped full s2': ('17536795f9c5b832', 'b30ad61a03453359', '3e379dc9fcfa463a'),
    'stepped bounded s2': ('3f7d4c2b7b97c5c7', '5c1024a5f46f5715', '28a81b29dc4ad9fc'),
    'ego full s2': ('302ef9701c37e94d', 'bac713073348f47d', 'e622f6f014b01abd'),
    'ego full Δ=2.5 s2': ('57734dfe904c311d', '939db259a571f2c7', 'ba1cbe6da6fe3b5f'),
    'table full s2': ('ff9485968948cf42', 'fd73d6a3dfdb4d50', '35b77e7365bbe016'),
    'slow full s2': ('6c95521d2a2d914d', '82e9eb3176704743', 'a77f90ecf57a41d3'),
    'slow full short s2': ('1a4134f3c1a8a980', 'edf31b6e9f71284d', 'c09999e646b6b73b'),
    'ego candidates s2': ('302ef9701c37e94d', 'bac713073348f47d', 'e622f6f014b01abd'),
    'ego candidates Δ=2.5 s2': ('57734dfe904c311d', '939db259a571f2c7', 'ba1cbe6da6fe3b5f'),
    'table candidates s2': ('ff9485968948cf42', 'fd73d6a3dfdb4d50', '35b77e7365bbe016'),
    'slow candidates s2': ('6c95521d2a2d914d', '82e9eb3176704743', 'a77f90ecf57a41d3'),
    'slow candidates short s2': ('1a4134f3c1a8a980', 'edf31b6e9f71284d', 'c09999e646b6b73b'),
    'ego elementwise s2': ('9f5cf8589f1d639b', '9ea7b5a424d1b21c', '45b686f96653e6ef'),
    'ego elementwise Δ=2.5 s2': ('dd4d776d44c9ba54', '91449ecb74bf7c1c', '303c069f3b1615de'),
    'table elementwise s2': ('41b406b864206244', '6f9a3ff58905b74e', 'faf8fbeeb646445b'),
    'slow elementwise s2': ('6c95521d2a2d914d', '82e9eb3176704743', 'a77f90ecf57a41d3'),
    'slow elementwise short s2': ('1a4134f3c1a8a980', 'edf31b6e9f71284d', 'c09999e646b6b73b'),
    'zero_below s2': ('e50b20cc283c24ac', '08fc028faccbe67c', '6dba6e8eae855ce8'),
    'no zero constant 1 s4': ('d5ecde023fe54a5e', '54209618c0173405', 'bb918147fe10391b'),
    'no zero constant 0.1 s4': ('25e48935dcf8145b', '2fb2b570363809f8', 'bb918147fe10391b'),
    'no zero stepped full s4': ('65c677289a04ff38', 'f00171ec29132679', '3e379dc9fcfa463a'),
    'no zero ego full s4': ('a1675ff1084096b1', '6dde20aea489d257', '91a3ea1e6607a9e6'),
    'no zero ego candidates s4': ('cb0b812b66eb5b95', 'ee96f1479214c8a0', '91a3ea1e6607a9e6'),
    'no zero table candidates s4': ('56c9df8bb1648b42', '4a80e672883e40a2', '5271c97c744be016'),
    'no zero slow candidates s4': ('dc0ffd087cc86aff', 'af0cfa7c8347148d', 'a77f90ecf57a41d3'),
    'no zero slow full short s4': ('bf5f30d0d78a8c18', 'bec33177596f9359', 'c09999e646b6b73b'),
    'no zero constant 1 s5': ('f91a7b879311a08f', '4a7899ecf225976b', 'bb918147fe10391b'),
    'no zero constant 0.1 s5': ('6d0ba66e165f1aa7', '4732d3362f628de2', 'bb918147fe10391b'),
    'no zero stepped full s5': ('722ebc8e99453e85', 'fbaba861819cc424', '3e379dc9fcfa463a'),
    'no zero ego full s5': ('e2f8512ddb49044e', 'bf6ebc2d13452808', 'bef9bcdf427c3e0f'),
    'no zero ego candidates s5': ('22e0915b51a0b8ab', '8f5f7d0da5f316c2', 'bef9bcdf427c3e0f'),
    'no zero table candidates s5': ('67682e66932ee104', 'df06fe48768aba46', '0711cbae34f43fd6'),
    'no zero slow candidates s5': ('11de7414c4030c58', 'b15b9c270aff555a', 'a77f90ecf57a41d3'),
    'no zero slow full short s5': ('16dbe435cdb661ef', 'c94307c2590b1900', 'c09999e646b6b73b'),
    'all positive constant': ('ae983263120757c3', '51474cf52b0fd0ea', 'bb918147fe10391b'),
    'all zero': ('bb918147fe10391b', '151ff79f29e96d21', 'bb918147fe10391b'),
}


_CASES = _cases()


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_outputs_match_the_walk_before_the_buffer_change(case):
    assert _outputs(*case) == FROZEN[case[0]]


def test_every_case_is_frozen():
    assert sorted(FROZEN) == sorted(c[0] for c in _CASES)


def _peak_bytes(fn) -> int:
    fn()   # warm (imports, caches)
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_constant_walk_peaks_at_about_two_arrays_of_n():
    """Every candidate resolved at t = 0 (a constant δ, no zero utility): |u| becomes D and δ(0) becomes err in
    place, so the peak is those two arrays of n floats and a few boolean masks (it was about 12 arrays: 935 MiB
    at n = 10^7); with a zero utility the index walk stays under 7 arrays (it was about 12)."""
    n = 200_000
    u = np.random.default_rng(5).normal(size=n) * 100.0
    sf = dpselect.constant(n, 1.0)
    array = 8 * n
    assert _peak_bytes(lambda: dampen_with_error(u, sf)) < 2.5 * array
    assert _peak_bytes(lambda: dampen(u, sf)) < 2.5 * array
    u[::100] = 0.0
    assert _peak_bytes(lambda: dampen_with_error(u, sf)) < 7 * array
    D, err = dampen_with_error(u, sf)
    assert np.array_equal(D, u) and np.array_equal(err == 0, u == 0)   # Δ = 1: D = u, err 0 exactly at u = 0
