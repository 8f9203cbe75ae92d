"""One release, one charge, one path: every dpselect.dask selector takes the in-memory selector's keywords, checks
them with the core's checks (the same messages), charges what the in-memory call charges (the same guarantee and
label) and, on a dask array with an int seed, releases what it releases. Fast: tiny arrays, the local scheduler."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")
import dask
import dask.array as da

import dpselect
import dpselect.dask as D

U = np.array([1.0, 5.0, 2.0, 4.0, 3.0, 0.5, 4.5])
SF = dpselect.constant(7, 1.0)
W = np.array([1.0, 2.0, 3.0, 1.0, 5.0, 2.0, 1.0])
SELECTORS = ["exponential", "permute_and_flip", "report_noisy_max", "local_dampening"]
#: keyword-only parameters of the in-memory function that its dask sibling does not take (each named in the
#: dpselect.dask docstring with its reason)
NOT_TAKEN = {"quantiles": {"counts"}}


def _kwonly(fn) -> set:
    return {p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}


def _pair(name, **kw):
    """(in-memory call, dask call) of selector ``name`` on U with these keywords."""
    sens = {"sensitivity_function": SF} if name == "local_dampening" else {"sensitivity": 1.0}
    d_sens = {"sensitivity_function": lambda part: dpselect.constant(len(part), 1.0)} if name == "local_dampening" \
        else sens
    mem = getattr(dpselect, name)
    dsk = getattr(D, name)
    return (lambda **extra: mem(U, **sens, **kw, **extra),
            lambda **extra: dsk(da.from_array(U, chunks=3), **d_sens, **kw, **extra))


def test_dask_selectors_take_the_in_memory_keywords():
    for name in SELECTORS + ["quantiles"]:
        missing = _kwonly(getattr(dpselect, name)) - _kwonly(getattr(D, name)) - NOT_TAKEN.get(name, set())
        assert not missing, (name, missing)
    for name, params in NOT_TAKEN.items():
        assert all(f"``{p}``" in D.__doc__ for p in params), name


CALLS = [dict(), dict(k=3), dict(k=3, delta=1e-6), dict(size=4), dict(k=2, size=3), dict(base_measure=W),
         dict(k=2, base_measure=W, delta=1e-3)]


@pytest.mark.parametrize("name", SELECTORS)
def test_dask_selectors_charge_and_release_as_in_memory(name):
    with dask.config.set(scheduler="synchronous"):
        for kw in CALLS + ([dict(monotonic=True, k=2)] if name != "local_dampening" else []) + (
                [dict(noise="gumbel", k=2), dict(noise="exponential", size=2)] if name == "report_noisy_max" else []):
            mem, dsk = _pair(name, epsilon=2.0, **kw)
            a, b = dpselect.Accountant(epsilon=50.0), dpselect.Accountant(epsilon=50.0)
            want, got = mem(rng=5, accountant=a), dsk(rng=5, accountant=b)
            assert [(r.label, r.guarantee) for r in a.history] == [(r.label, r.guarantee) for r in b.history], kw
            # one noisy max: the same words, hence the same picks (a peeled top-k, k rounds of fresh noise, draws
            # k·n words in dask and n + (n − 1) + ... in memory: the same law from another stream)
            noise = kw.get("noise", {"permute_and_flip": "exponential", "report_noisy_max": "laplace"}.get(name))
            if noise in (None, "gumbel") or kw.get("k", 1) == 1:
                assert np.array_equal(want, got), (kw, want, got)


BAD = [dict(epsilon=-1.0), dict(k=0), dict(k=8), dict(k=2.5), dict(delta=0.5), dict(k=2, delta=1.0),
       dict(monotonic="yes"), dict(base_measure=W[:3]), dict(base_measure=-W), dict(exact="no"), dict(size=0),
       dict(k=2, size=2 ** 28), dict(rng="seed"), dict(accountant="acc"), dict(noise="normal"),
       dict(base_measure=W / 2, noise="laplace")]


@pytest.mark.parametrize("name", SELECTORS)
def test_dask_selectors_refuse_as_in_memory(name):
    for kw in BAD:
        if ("noise" in kw and name != "report_noisy_max") or ("monotonic" in kw and name == "local_dampening"):
            continue
        mem, dsk = _pair(name, **{"epsilon": 1.0, **kw})
        with pytest.raises((TypeError, ValueError)) as want:
            mem()
        with pytest.raises(want.type, match=None) as got:
            dsk()
        assert str(got.value) == str(want.value), kw


def test_dask_top_k_under_epsilon_delta_runs_at_the_per_pick_epsilon():
    """delta > 0: each pick at ε0 = per_pick_epsilon (1.08 here, not ε/k = 0.33), as in memory, seed after seed."""
    with dask.config.set(scheduler="synchronous"):
        for name in ("exponential", "local_dampening"):
            mem, dsk = _pair(name, epsilon=2.0, k=6, delta=0.1)
            assert [mem(rng=s).tolist() for s in range(12)] == [dsk(rng=s).tolist() for s in range(12)], name


def test_dask_refuses_float_sampling_before_the_charge():
    acc = dpselect.Accountant(epsilon=1.0)
    with pytest.raises(ValueError, match=r"dpselect.dask samples exactly only \(exact=True\)"):
        D.exponential(da.from_array(U, chunks=3), epsilon=1.0, sensitivity=1.0, exact=False, accountant=acc)
    assert len(acc.history) == 0


def test_dask_quantiles_charge_and_refuse_as_in_memory():
    x = da.from_array(U, chunks=3)
    with dask.config.set(scheduler="synchronous"):
        for kw in (dict(bounds=(0.0, 10.0)), dict(bounds=(0.0, 10.0), method="recursive", neighbours="add_remove"),
                   dict(candidates=[0.0, 2.0, 4.0, 6.0])):
            nb = kw.get("neighbours", "replace_one")
            a, b = (dpselect.Accountant(epsilon=50.0, neighbours=nb), dpselect.Accountant(epsilon=50.0, neighbours=nb))
            want = dpselect.quantiles(U, [0.25, 0.5], epsilon=1.0, rng=3, accountant=a, **kw)
            got = D.quantiles(x, [0.25, 0.5], epsilon=1.0, rng=3, accountant=b, **kw)
            assert np.array_equal(want, got) and [(r.label, r.guarantee) for r in a.history] == [
                (r.label, r.guarantee) for r in b.history], kw
        for kw in (dict(epsilon=0.0), dict(qs=[1.5]), dict(bounds=(1.0, 0.0)), dict(method="best"),
                   dict(neighbours="any"), dict(candidates=[0.0, 1.0], bounds=(0.0, 1.0)),
                   dict(candidates=[0.0, 1.0], method="joint"), dict(accountant="acc")):
            args = {"qs": [0.5], "epsilon": 1.0, **kw}
            with pytest.raises((TypeError, ValueError)) as want:
                dpselect.quantiles(U, args.pop("qs"), **args)
            args = {"qs": [0.5], "epsilon": 1.0, **kw}
            with pytest.raises(want.type) as got:
                D.quantiles(x, args.pop("qs"), **args)
            assert str(got.value) == str(want.value), kw
