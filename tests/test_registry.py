"""The mechanism registry (issue 23, item 1): a mechanism is a value.

The contract every registered mechanism meets is in ``tests/test_contract.py``
(``check_registered_contract``); here: lookups, the read-only mapping, the guarantees as values, the
capability queries the applications use, the Literal of names, and the recipe for adding a mechanism
(a toy one registered, used by the contract and by applications, then removed).
"""
from __future__ import annotations

import math
import pathlib
import re
import types
import warnings
from fractions import Fraction
from typing import get_args

import numpy as np
import pytest

import dpselect
from dpselect.quantiles import median_distribution, median_rank
from dpselect import registry
from dpselect._rng import check_rng
from dpselect._validation import check_k, check_positive, check_utilities
from dpselect.accounting import AdaptiveBoundedRangeComposition, BoundedRange, NonPrivate, PureDP, PureDPComposition
from dpselect.registry import Mechanism, get_mechanism, names
from dpselect.typing import MechanismName
from dpselect.vocabulary import ALIASES, GLOBAL_MECHANISMS, LOCAL_MECHANISMS, selection_result

from test_contract import check_registered_contract

BUILTIN = ("exponential", "permute_and_flip", "report_noisy_max", "local_dampening", "shifted_local_dampening")


def test_builtin_registry_and_lookup():
    assert registry.BUILTIN == BUILTIN and tuple(dpselect.MECHANISMS)[:5] == BUILTIN
    assert dpselect.MECHANISMS is registry.MECHANISMS is dpselect.vocabulary.MECHANISMS
    assert isinstance(dpselect.MECHANISMS, types.MappingProxyType)
    with pytest.raises(TypeError):
        dpselect.MECHANISMS["x"] = dpselect.MECHANISMS["exponential"]  # type: ignore[index]
    assert "exponential" in dpselect.MECHANISMS and "EM" not in dpselect.MECHANISMS   # keys are canonical
    short = {"em": "exponential", "pf": "permute_and_flip", "rnm": "report_noisy_max", "ld": "local_dampening",
             "sld": "shifted_local_dampening"}
    assert dict(ALIASES) == short
    for alias, name in short.items():
        spec = dpselect.MECHANISMS[name]
        assert spec.name == name and spec.aliases == (alias,)
        for spelling in (name, name.upper(), alias, alias.upper(), f" {alias.capitalize()} "):
            assert get_mechanism(spelling) is spec
        assert get_mechanism(spec) is spec
    assert [dpselect.MECHANISMS[n].kind for n in BUILTIN] == ["global"] * 3 + ["local"] * 2
    with pytest.raises(ValueError, match=r"mechanism must be one of exponential, .* got 'laplace'"):
        get_mechanism("laplace")
    with pytest.raises(TypeError, match="mechanism must be a string"):
        get_mechanism(3)   # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"method must be one of exponential \(or EM\), got 'LD'"):
        get_mechanism("LD", allowed=("exponential",), name="method")


def test_literal_matches_the_registry():
    """dpselect.typing.MechanismName spells every built-in canonical name and upper-case alias, nothing else."""
    want = {n for n in BUILTIN} | {a.upper() for n in BUILTIN for a in dpselect.MECHANISMS[n].aliases}
    assert set(get_args(MechanismName)) == want and len(get_args(MechanismName)) == len(want)
    with pytest.raises(AttributeError):   # the Literal's old name went before the first release
        dpselect.vocabulary.Mechanism
    with pytest.raises(AttributeError):
        dpselect.vocabulary.no_such_name


def test_privacy_values():
    """The guarantee each mechanism gives (exactly audited in test_contract.py)."""
    got = {n: dpselect.MECHANISMS[n].privacy(0.5) for n in BUILTIN}
    assert got == {"exponential": BoundedRange(0.5), "permute_and_flip": PureDP(0.5), "report_noisy_max": PureDP(0.5),
                   "local_dampening": BoundedRange(0.5), "shifted_local_dampening": BoundedRange(0.5)}
    rnm = get_mechanism("RNM")
    assert [rnm.privacy(1.0, noise=z) for z in ("laplace", "gumbel", "exponential")] == \
        [PureDP(1.0), BoundedRange(1.0), PureDP(1.0)]
    assert [rnm.bounded_range(noise=z) for z in ("laplace", "gumbel", "exponential")] == [False, True, False]
    em = get_mechanism("EM")
    # options that do not change the guarantee are accepted and ignored; others are errors naming them
    assert em.privacy(1.0, monotonic=True, base_measure=[1, 2], rng=0) == BoundedRange(1.0)
    assert em.privacy(1.0, exact=False) == NonPrivate()     # float sampling is not ε-DP
    assert get_mechanism("SLD").privacy(1.0, direction="decreasing") == BoundedRange(1.0)
    with pytest.raises(TypeError, match="unexpected option 'noise'"):
        em.privacy(1.0, noise="gumbel")
    with pytest.raises(ValueError, match="noise must be one of 'laplace', 'gumbel', 'exponential', got 'cauchy'"):
        rnm.privacy(1.0, noise="cauchy")
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        em.privacy(-1.0)
    with pytest.raises(ValueError, match="k must be"):
        em.privacy(1.0, k=0)
    # k picks, ε/k each, adaptively (the candidate set depends on earlier picks): the composition values
    assert em.privacy(1.0, k=1) == BoundedRange(1.0)
    two = em.privacy(1.0, k=2)
    assert isinstance(two, AdaptiveBoundedRangeComposition) and (two.epsilon0, two.k) == (0.5, 2)
    assert get_mechanism("PF").privacy(1.0, k=2) == PureDPComposition(0.5, 2)
    assert get_mechanism("RNM").privacy(1.0, k=4, noise="gumbel").epsilon0 == 0.25
    three = get_mechanism("LD").privacy(1.0, k=3)
    assert Fraction(three.epsilon0) * 3 >= 1 and three.epsilon0 == math.nextafter(1 / 3, 1.0)   # rounded up
    assert two.epsilon(0.0) == 1.0 and two.epsilon(1e-6) < 1.0
    assert get_mechanism("PF").privacy(1.0, k=10).epsilon(1e-6) < 1.0


def test_neighbour_model_is_stated():
    for n in BUILTIN:
        spec = dpselect.MECHANISMS[n]
        assert ("sensitivity" in spec.neighbour_model) if spec.kind == "global" else ("admissible" in spec.neighbour_model)
        assert spec.description


def test_capability_queries_are_the_application_subsets():
    from dpselect.graphs import _motkin as motkin, _priv_topk as priv_topk
    from dpselect.quantiles import _median as median
    from dpselect.trees import _diffpid3 as diffpid3
    assert names(kind="global") == GLOBAL_MECHANISMS and names(kind="local") == LOCAL_MECHANISMS
    assert names(noise="gumbel") == ("exponential", "local_dampening", "shifted_local_dampening")
    assert names(cacheable=True) == LOCAL_MECHANISMS and names(score="dampened") == ("local_dampening",)
    assert median.MEDIAN_MECHANISMS == ("exponential", "local_dampening", "shifted_local_dampening")
    assert median.RANK_MECHANISMS == ("exponential", "permute_and_flip", "local_dampening", "shifted_local_dampening")
    assert priv_topk.TOPK_CANONICAL == median.RANK_MECHANISMS
    assert motkin.MOTKIN_MECHANISMS == ("exponential", "local_dampening")
    assert diffpid3.DIFFPID3_MECHANISMS == median.MEDIAN_MECHANISMS
    with pytest.raises(TypeError, match="unknown capability"):
        names(colour="red")
    with pytest.raises(ValueError, match="kind must be one of"):
        names(kind="both")


def test_select_prepared_is_select_with_cached_scores():
    u = np.array([3.0, 1.0, 2.0, 0.0, 2.5])
    sf = dpselect.SensitivityFunction(lambda t: np.minimum(1.0, 0.25 * (t + 1)) * np.ones(5), 1.0,
                                      saturation_distance=3)
    for name in LOCAL_MECHANISMS:
        spec = get_mechanism(name)
        cache = spec.prepare(u, sf)
        for k in (1, 3):
            a = spec.select(u, epsilon=2.0, sensitivity=sf, k=k, rng=7)
            b = spec.select_prepared(u, sf, cache, epsilon=2.0, k=k, rng=7)
            assert np.array_equal(np.atleast_1d(a), np.atleast_1d(b))
    with pytest.raises(TypeError, match="no cacheable scores"):
        get_mechanism("EM").prepare(u, sf)


def test_select_and_probabilities_check_their_options():
    em = get_mechanism("EM")
    with pytest.raises(TypeError, match="unexpected option 'direction'"):
        em.select([1.0, 2.0], epsilon=1.0, sensitivity=1.0, direction="increasing")
    with pytest.raises(TypeError, match="law of one pick: k= is not an option"):
        em.probabilities([1.0, 2.0], epsilon=1.0, sensitivity=1.0, k=2)
    with pytest.raises(TypeError, match="'sensitivity_function' is not an option"):
        get_mechanism("LD").select([1.0, 2.0], epsilon=1.0, sensitivity=None, sensitivity_function=None)
    assert em.probabilities([0.0, 0.0], epsilon=1.0, sensitivity=1.0, exact=False).tolist() == [0.5, 0.5]


def test_noises_defined_once():
    from dpselect import mechanisms, sampling
    assert mechanisms.NOISES is sampling.NOISES == ("laplace", "gumbel", "exponential")
    pytest.importorskip("dask")
    from dpselect.dask import _select
    assert _select.NOISES is sampling.NOISES


def test_no_name_dispatch_outside_the_registry():
    """No ``mech == "..."`` comparison or ``getattr(dpselect, name)`` dispatch in the package outside registry.py."""
    root = pathlib.Path(dpselect.__file__).parent
    pattern = re.compile(r"""mech\w*\s*[!=]=\s*["']|getattr\(dpselect,""")
    hits = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py") if p.name != "registry.py"
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert hits == []


# -- the recipe: a new mechanism is one register() call ------------------------------------------------------
@selection_result
def _uniform(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True):
    """Toy: a uniform pick (∝ base measure), ignoring the data (0-DP, hence ε-BR for any ε)."""
    u = check_utilities(utilities)
    check_positive(epsilon, "epsilon")
    check_positive(sensitivity, "sensitivity")
    kk = check_k(1 if k is None else k, u.shape[0])
    w = np.ones(u.shape[0]) if base_measure is None else np.asarray(base_measure, dtype=np.float64)
    gen = check_rng(rng)
    rows = [gen.choice(u.shape[0], size=kk, replace=False, p=w / w.sum()) for _ in range(1 if size is None else size)]
    out = np.asarray(rows, dtype=np.int64)
    if size is None:
        return int(out[0, 0]) if kk == 1 else out[0]
    return out[:, 0] if kk == 1 else out


def _uniform_probabilities(utilities, *, epsilon, sensitivity, base_measure=None):
    u = check_utilities(utilities)
    check_positive(epsilon, "epsilon")
    w = np.ones(u.shape[0]) if base_measure is None else np.asarray(base_measure, dtype=np.float64)
    return w / w.sum()


UNIFORM = Mechanism("uniform", "global", _uniform, _uniform_probabilities, aliases=("unif",), noises=("gumbel",),
                    neighbour_model="any (the output ignores the data)", description="uniform selection (a toy)", guarantee=BoundedRange)


@pytest.fixture
def toy():
    registry.register(UNIFORM)
    try:
        yield UNIFORM
    finally:
        registry.unregister("uniform")


def test_a_registered_mechanism_works_everywhere(toy, freq):
    # the registry and the names
    assert get_mechanism("UNIF") is toy and dpselect.MECHANISMS["uniform"] is toy and "uniform" in dpselect.MECHANISMS
    assert names(kind="global")[-1] == "uniform" and dpselect.vocabulary.check_mechanism("Uniform") == "uniform"
    assert toy.privacy(1.0) == BoundedRange(1.0) and toy.privacy(1.0, k=2).k == 2
    # the one contract of every mechanism
    check_registered_contract(toy, freq, nontrivial=False)
    # applications that take any (global) mechanism: PrivPareto / PrivAgg, select_model, and the median (whose
    # subset is "Gumbel noise": a base measure may be any w > 0)
    U = [[3.0, 5.0], [5.0, 3.0], [1.0, 1.0]]
    assert dpselect.multiobjective.priv_agg_probabilities(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0],
                                           mechanism="uniform").tolist() == pytest.approx([1 / 3] * 3)
    gen = np.random.default_rng(5)
    freq([dpselect.multiobjective.priv_agg(U, [1.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0], mechanism="unif", rng=gen)
          for _ in range(600)], [1 / 3] * 3)
    assert dpselect.multiobjective.priv_pareto(U, epsilon=1.0, sensitivities=[1.0, 1.0], mechanism=toy, k=3, rng=0).shape == (3,)
    y = np.array([0, 1, 1, 0, 1, 0])
    from dpselect.sklearn import select_model

    picked = select_model(y=y, predictions=np.vstack([y, 1 - y]), epsilon=1.0,
                                   mechanism="uniform", random_state=0)
    assert picked in (0, 1)
    d = median_distribution([1.0, 2.0, 8.0], epsilon=1.0, bound=10.0, mechanism="uniform")
    assert d.pdf([0.5, 1.5, 5.0, 9.5]).tolist() == pytest.approx([0.1] * 4)    # uniform on [0, 10]
    assert 0.0 <= dpselect.median([1.0, 2.0, 8.0], epsilon=1.0, bound=10.0, mechanism="uniform", rng=1) <= 10.0


def test_register_refuses_clashes_and_unregister_removes():
    with pytest.raises(ValueError, match="'exponential' is already registered"):
        registry.register(Mechanism("exponential", "global", _uniform, _uniform_probabilities, guarantee=BoundedRange))
    with pytest.raises(ValueError, match="'em' already names the mechanism 'exponential'"):
        registry.register(Mechanism("uniform", "global", _uniform, _uniform_probabilities, aliases=("EM",), guarantee=BoundedRange))
    with pytest.raises(TypeError, match="spec must be a dpselect.registry.Mechanism"):
        registry.register("uniform")   # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be one of"):
        Mechanism("uniform", "both", _uniform, _uniform_probabilities)   # type: ignore[arg-type]
    with pytest.raises(ValueError, match="noises must be"):
        Mechanism("uniform", "global", _uniform, _uniform_probabilities, noises=("cauchy",))
    registry.register(UNIFORM)
    registry.unregister("UNIF")
    assert "uniform" not in dpselect.MECHANISMS and "unif" not in ALIASES
    with pytest.raises(ValueError, match="mechanism must be one of"):
        get_mechanism("uniform")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tuple(dpselect.MECHANISMS) == BUILTIN


def test_select_prepared_refuses_the_options_it_would_drop():
    """accountant=, delta= and exact= are select's options; the cached path refuses them rather than ignore them."""
    import numpy as np
    import pytest
    from dpselect import Accountant
    from dpselect.registry import get_mechanism
    from dpselect.sensitivity import constant
    spec = get_mechanism("LD")
    u = np.array([1.0, 2.0, 3.0])
    sf = constant(3, 1.0)
    cache = spec.prepare(u, sf)
    assert np.asarray(spec.select_prepared(u, sf, cache, epsilon=1.0, k=2, rng=0)).shape == (2,)
    for bad in ({"accountant": Accountant(epsilon=1.0)}, {"delta": 1e-6}, {"exact": False}):
        with pytest.raises(TypeError, match="select_prepared does not take"):
            spec.select_prepared(u, sf, cache, epsilon=1.0, k=2, rng=0, **bad)


# -- issue 33: a user's selector through Mechanism.select ---------------------------------------------------
def _em_with_delta(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True,
                   delta=0.0):
    """A user's selector that takes delta= (top-k under (ε, δ)) but not accountant=: the exponential mechanism."""
    return dpselect.exponential(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, rng=rng, size=size,
                                delta=delta)


def _pf_with_delta(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True,
                   delta=0.0):
    return dpselect.permute_and_flip(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, rng=rng, size=size,
                                     delta=delta)


@pytest.mark.parametrize("selector, noise, e0", [(_em_with_delta, "gumbel", 0.24127169180497937),
                                                 (_pf_with_delta, "exponential", 0.12925693836590263)])
def test_user_selector_with_delta_is_charged_the_guarantee_it_runs_at(selector, noise, e0):
    """Item 6: ε = 1, k = 10, δ = 1e-3. The release runs each pick at per_pick_epsilon (0.2413 for the
    Gumbel family); the accountant was charged ε/k = 0.1 per pick. It is now charged exactly that guarantee."""
    spec = Mechanism("user_topk", "global", selector, dpselect.exponential_probabilities, noises=(noise,),
                     guarantee={noise: BoundedRange if noise == "gumbel" else PureDP})
    assert spec.accepts("delta") and "accountant" not in spec._takes
    acc = dpselect.Accountant(epsilon=2.0, delta=1e-3)
    u = np.arange(20.0)
    out = spec.select(u, epsilon=1.0, sensitivity=1.0, k=10, delta=1e-3, rng=0, accountant=acc)
    assert out.tolist() == selector(u, epsilon=1.0, sensitivity=1.0, k=10, delta=1e-3, rng=0).tolist()
    (rec,) = acc.history
    assert rec.guarantee == spec.privacy(1.0, k=10, delta=1e-3)
    assert rec.guarantee.epsilon0 == e0 and rec.guarantee.k == 10
    # the per-pick ε fits the composition's own (rounded-up) reading of the budget
    assert 0.99 < rec.guarantee.epsilon(1e-3) <= 1.0
    assert rec.label == "user_topk(k=10, delta=0.001)"
    spec.select(u, epsilon=0.5, sensitivity=1.0, k=4, size=3, rng=1, accountant=acc)     # size=: 3 top-4's
    assert acc.history[1].guarantee.k == 12 and acc.history[1].label == "user_topk(k=4, size=3)"


def _checked_pick(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True):
    """A user's selector: its own checks (a utility above 100 is refused), then one draw."""
    u = np.asarray(utilities, dtype=np.float64)
    if (u > 100).any():
        raise ValueError("utilities must be <= 100")
    gen = check_rng(rng)
    return int(gen.integers(len(u)))


def _draws_then_fails(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None,
                      exact=True):
    gen = check_rng(rng)
    gen.random()
    raise RuntimeError("failed after drawing")


def test_user_selector_refusing_before_drawing_costs_nothing():
    """Item 8: the selector refuses on its own checks: nothing charged (it was charged first), rng untouched;
    a refused budget is refused before the selector runs; a selector that fails after drawing is charged."""
    spec = Mechanism("user_checked", "global", _checked_pick, dpselect.exponential_probabilities, guarantee=BoundedRange)
    acc = dpselect.Accountant(epsilon=1.0)
    gen = np.random.default_rng(4)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="<= 100"):
        spec.select([1.0, 200.0], epsilon=0.5, sensitivity=1.0, rng=gen, accountant=acc)
    assert acc.history == () and gen.bit_generator.state == state
    with pytest.raises(ValueError, match="<= 100"):                 # rng omitted: the same
        spec.select([1.0, 200.0], epsilon=0.5, sensitivity=1.0, accountant=acc)
    assert acc.history == ()
    assert spec.select([1.0, 2.0], epsilon=0.5, sensitivity=1.0, rng=gen, accountant=acc) in (0, 1)
    assert [r.guarantee for r in acc.history] == [BoundedRange(0.5)] and gen.bit_generator.state != state
    # over budget: refused before the selector runs
    calls = []
    spy = Mechanism("user_spy", "global", lambda u, **kw: calls.append(1) or 0, dpselect.exponential_probabilities, guarantee=BoundedRange)
    with pytest.raises(dpselect.BudgetExceededError):
        spy.select([1.0, 2.0], epsilon=0.75, sensitivity=1.0, rng=0, accountant=acc)
    assert calls == [] and len(acc.history) == 1
    # it drew, then failed: a release whose failure depends on the draw, so charged
    bad = Mechanism("user_fails", "global", _draws_then_fails, dpselect.exponential_probabilities, guarantee=BoundedRange)
    with pytest.raises(RuntimeError, match="failed after drawing"):
        bad.select([1.0, 2.0], epsilon=0.25, sensitivity=1.0, rng=0, accountant=acc)
    assert [r.guarantee for r in acc.history] == [BoundedRange(0.5), BoundedRange(0.25)]


#: (what a broken selector returns for k omitted, k = 2, size = 2 with k = 2) -> the exception it must raise
_BAD_RETURNS = {
    "nan": (float("nan"), [float("nan"), 1.0], [[0.0, float("nan")], [1.0, 0.0]]),
    "float": (1.0, np.array([0.0, 1.0]), np.zeros((2, 2))),
    "bool": (True, np.array([True, False]), np.ones((2, 2), dtype=bool)),
    "none": (None, None, None),
    "text": ("1", ["0", "1"], [["0", "1"], ["1", "0"]]),
    "shape": (np.array([1]), np.array([0, 1, 2]), np.array([0, 1])),
    "range": (7, np.array([0, 7]), np.array([[0, 1], [1, 7]])),
    "negative": (-1, np.array([-1, 0]), np.array([[0, 1], [-1, 0]])),
    "twice": (None, np.array([1, 1]), np.array([[0, 1], [2, 2]])),
}


def test_user_selector_output_is_checked_with_messages_naming_no_value():
    """Item 8: a NaN, a float, a wrong shape, an index out of range, a candidate twice: TypeError or ValueError.
    Generator: every bad return kind x the calls k omitted / k = 2 / size = 2, each on all 27 data sets of size 3
    over {0, 1, 2} (the return varied with the data); the message depends neither on the data nor on what was
    returned (one message per kind and call), and names no returned value."""
    import itertools
    acc = dpselect.Accountant(epsilon=1e6)
    for kind, returns in _BAD_RETURNS.items():
        for call, kw in enumerate(({}, {"k": 2}, {"k": 2, "size": 2})):
            if returns[call] is None and kind == "twice":
                continue
            messages = set()
            for data in itertools.product([0.0, 1.0, 2.0], repeat=3):
                def sel(u, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True,
                        out=returns[call]):
                    if kind == "range":                          # the bad index moves with the data
                        return out + int(u[0] == 2)
                    return out
                spec = Mechanism("user_broken", "global", sel, dpselect.exponential_probabilities, guarantee=BoundedRange)
                n_before = len(acc.history)
                with pytest.raises((TypeError, ValueError)) as info:
                    spec.select(list(data), epsilon=0.5, sensitivity=1.0, rng=0, accountant=acc, **kw)
                assert len(acc.history) == n_before + 1         # it ran: charged before its output is judged
                messages.add((type(info.value), str(info.value)))
            assert len(messages) == 1, (kind, call, messages)
            ((cls, msg),) = messages
            want = TypeError if kind in ("nan", "float", "bool", "none", "text") or (kind, call) == ("shape", 0) \
                else ValueError
            assert cls is want, (kind, call, msg)
            assert "user_broken" in msg and not re.search(r"\b(7|8|nan|NaN|True|None)\b", msg), msg
            if kind in ("range", "negative", "twice"):
                assert "not shown" in msg or "twice" in msg


def test_user_selector_good_output_in_the_convention():
    """What passes the output check is returned in dpselect's convention (an int; int64 arrays)."""
    def sel(u, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True):
        if k is None and size is None:
            return np.int32(2)
        return np.tile(np.arange(k or 1, dtype=np.int32), (size or 1, 1)).reshape((() if size is None else (size,)) + (() if k is None else (k,)))
    spec = Mechanism("user_ok", "global", sel, dpselect.exponential_probabilities, guarantee=BoundedRange)
    u = [1.0, 2.0, 3.0]
    one = spec.select(u, epsilon=1.0, sensitivity=1.0)
    assert type(one) is int and one == 2
    top = spec.select(u, epsilon=1.0, sensitivity=1.0, k=3)
    assert top.dtype == np.int64 and top.tolist() == [0, 1, 2]
    assert spec.select(u, epsilon=1.0, sensitivity=1.0, k=2, size=2).tolist() == [[0, 1], [0, 1]]
    assert spec.select(u, epsilon=1.0, sensitivity=1.0, size=2).tolist() == [0, 0]


def test_aliases_as_one_string_is_one_alias():
    """Item 9: Mechanism(aliases='ty') was ('t', 'y')."""
    spec = Mechanism("toy_alias", "global", _uniform, _uniform_probabilities, aliases="TY", guarantee=BoundedRange)
    assert spec.aliases == ("ty",)
    registry.register(spec)
    try:
        assert get_mechanism("Ty") is spec and "t" not in ALIASES and "y" not in ALIASES
    finally:
        registry.unregister("toy_alias")
    assert Mechanism("toy_alias", "global", _uniform, _uniform_probabilities, aliases=["a1", "A2"], guarantee=BoundedRange).aliases == ("a1", "a2")
    for bad in (3, ("ok", 3), ("",)):
        with pytest.raises(TypeError, match="aliases must be"):
            Mechanism("toy_alias", "global", _uniform, _uniform_probabilities, aliases=bad, guarantee=BoundedRange)


def test_user_selector_charges_generator():
    """Generators for items 6 and 8. (a) Every k in 2..5, δ in {0, 1e-6, 1e-3}, both families, size omitted
    or 2: the charge is the registry's guarantee of the call, the one the release runs at. (b) Every data set
    of size 1..3 over {0, 50, 200}: a refusal on the selector's own check (a value above 100) costs nothing
    and leaves the generator untouched; an accepted call is charged once."""
    import itertools
    from dpselect._boundary import repeated
    for selector, noise in ((_em_with_delta, "gumbel"), (_pf_with_delta, "exponential")):
        spec = Mechanism("user_topk", "global", selector, dpselect.exponential_probabilities, noises=(noise,),
                     guarantee={noise: BoundedRange if noise == "gumbel" else PureDP})
        for k, delta, size in itertools.product(range(2, 6), (0.0, 1e-6, 1e-3), (None, 2)):
            acc = dpselect.Accountant(epsilon=10.0, delta=0.1, mode="fixed")
            spec.select(np.arange(6.0), epsilon=1.0, sensitivity=1.0, k=k, delta=delta, size=size, rng=k,
                        accountant=acc)
            (rec,) = acc.history
            assert rec.guarantee == repeated(spec.privacy(1.0, k=k, delta=delta), 1 if size is None else size)
    spec = Mechanism("user_checked", "global", _checked_pick, dpselect.exponential_probabilities, guarantee=BoundedRange)
    for n in (1, 2, 3):
        for data in itertools.product([0.0, 50.0, 200.0], repeat=n):
            acc = dpselect.Accountant(epsilon=1.0)
            gen = np.random.default_rng(n)
            state = gen.bit_generator.state
            refused = max(data) > 100
            try:
                spec.select(list(data), epsilon=0.5, sensitivity=1.0, rng=gen, accountant=acc)
            except ValueError as exc:
                assert refused and str(exc) == "utilities must be <= 100"
            assert len(acc.history) == (0 if refused else 1)
            assert gen.bit_generator.state == state or not refused     # (one candidate: no bit drawn either)


# -- issue 34 item 2: no trust by default ------------------------------------------------------------------
def _argmax(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True):
    """A deterministic argmax (not private at all): the issue's second bad example."""
    u = np.asarray(utilities, dtype=np.float64)
    best = int(np.argmax(u))
    if size is None:
        return best if k is None else np.arange(best, best + k) % u.size
    return np.full(size, best, dtype=np.int64) if k is None else np.tile(np.arange(best, best + k) % u.size, (size, 1))


def _argmax_probabilities(utilities, *, epsilon, sensitivity, base_measure=None, monotonic=False):
    return np.eye(len(utilities))[int(np.argmax(np.asarray(utilities, dtype=np.float64)))]


def _pf_wrapper(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True,
                monotonic=False):
    """The issue's first bad example: a user's wrapper of permute-and-flip (pure ε-DP, not ε-BR)."""
    return dpselect.permute_and_flip(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, rng=rng, size=size,
                                     base_measure=base_measure, exact=exact, monotonic=monotonic)


def test_a_mechanism_without_a_guarantee_is_refused():
    """Mechanism(...) certified BoundedRange(ε) when no guarantee was given; now a TypeError saying what to pass."""
    with pytest.raises(TypeError, match=r"'user_pf' declares no privacy guarantee \(none is assumed\): pass "
                                        r"guarantee=PureDP .* or guarantee=BoundedRange .*dpselect.registry.check"):
        Mechanism("user_pf", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities, options=("monotonic",))
    with pytest.raises(TypeError, match="declares no privacy guarantee"):          # declaring a noise is not one
        Mechanism("user_pf", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities, noises=("exponential",))
    for bad in ("BoundedRange", BoundedRange(1.0), dpselect.accounting.ZCDP, {"gumbel": BoundedRange},
                {"exponential": BoundedRange, "gumbel": PureDP}):
        with pytest.raises(TypeError, match="guarantee of mechanism 'user_pf'"):
            Mechanism("user_pf", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities,
                      noises=("exponential",), guarantee=bad)
    spec = Mechanism("user_pf", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities,
                     noises=("exponential",), guarantee={"exponential": PureDP}, options=("monotonic",))
    assert spec.privacy(0.1) == PureDP(0.1) and spec.privacy(1.0, k=2) == PureDPComposition(0.5, 2)
    # the built-ins declare theirs: the values every application charged so far are unchanged
    got = {n: dpselect.MECHANISMS[n].privacy(0.5) for n in BUILTIN}
    assert got == {"exponential": BoundedRange(0.5), "permute_and_flip": PureDP(0.5), "report_noisy_max": PureDP(0.5),
                   "local_dampening": BoundedRange(0.5), "shifted_local_dampening": BoundedRange(0.5)}
    rnm = get_mechanism("RNM")
    assert [rnm.privacy(0.5, noise=n) for n in rnm.noises] == [PureDP(0.5), BoundedRange(0.5), PureDP(0.5)]
    assert all(dpselect.MECHANISMS[n].guarantee is not None for n in BUILTIN)


def _capability_queries() -> dict:
    from dpselect.graphs import _motkin as motkin, _priv_topk as priv_topk
    from dpselect.quantiles import _median as median
    from dpselect.trees import _diffpid3 as diffpid3
    return {"names(noise='gumbel')": names(noise="gumbel"), "median": median._value_mechanisms(),
            "median_rank": median._rank_mechanisms(), "diffpid3": diffpid3._split_mechanisms(),
            "motkin": motkin._sampler_mechanisms(), "priv_topk": priv_topk._topk_mechanisms(),
            "names(noise='exponential')": names(noise="exponential")}


def test_a_user_mechanism_reaches_capability_queries_only_by_declaring_them():
    """The deterministic argmax declared BR(1) reached the median (and names(noise='gumbel')) through the default
    noises=('gumbel',). Without noises= it reaches none of the queries that rely on a noise family; declared,
    it reaches exactly those of that family."""
    before = _capability_queries()
    assert "exponential" in before["median"] and "permute_and_flip" in before["median_rank"]
    plain = registry.register(Mechanism("user_argmax", "global", _argmax, _argmax_probabilities,
                                        guarantee=BoundedRange))
    try:
        assert plain.noises == () and plain.noise is None and not plain.accepts("noise")
        assert _capability_queries() == before
        with pytest.raises(ValueError, match=r"mechanism='user_argmax' is not available for median: .* "
                                             r"user_argmax \(declares no noise family\)"):
            dpselect.median([1.0, 2.0, 8.0], epsilon=1.0, bound=10.0, mechanism="user_argmax", rng=0)
        with pytest.raises(ValueError, match="mechanism must be one of"):
            median_rank([1.0, 2.0, 8.0], epsilon=1.0, bound=10.0, mechanism="user_argmax", rng=0)
    finally:
        registry.unregister("user_argmax")
    declared = registry.register(Mechanism("user_gumbel", "global", _argmax, _argmax_probabilities,
                                           noises=("gumbel",), guarantee=BoundedRange))
    try:
        after = _capability_queries()
        assert {k for k in after if after[k] != before[k]} == {"names(noise='gumbel')", "median", "median_rank",
                                                               "diffpid3", "motkin", "priv_topk"}
        assert all(after[k] == before[k] + ("user_gumbel",) for k in after if after[k] != before[k])
        assert declared.noise == "gumbel"
    finally:
        registry.unregister("user_gumbel")


def _em_wrapper(utilities, *, epsilon, sensitivity, k=None, rng=None, size=None, base_measure=None, exact=True,
                monotonic=False):
    return dpselect.exponential(utilities, epsilon=epsilon, sensitivity=sensitivity, k=k, rng=rng, size=size,
                                base_measure=base_measure, exact=exact, monotonic=monotonic)


def test_check_passes_correct_user_mechanisms():
    em = Mechanism("user_em", "global", _em_wrapper, dpselect.exponential_probabilities, options=("monotonic",),
                   guarantee=BoundedRange)
    rep = registry.check(em)
    assert rep.passed and rep.failures == () and [v.options for v in rep.variants] == [{}, {"monotonic": True}]
    assert [v.claim for v in rep.variants] == [BoundedRange(1.0)] * 2
    assert [round(v.worst_range, 4) for v in rep.variants] == [1.0, 1.0]
    assert all(v.chi2_pvalue > 1e-6 for v in rep.variants)
    pf = Mechanism("user_pf", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities, options=("monotonic",),
                   guarantee=PureDP)
    rep = registry.check(pf, epsilon=0.5)
    assert rep.passed and [v.claim for v in rep.variants] == [PureDP(0.5)] * 2
    assert "check('user_pf'): passed" in str(rep)


def test_check_catches_the_issues_two_bad_mechanisms():
    """(1) permute-and-flip declared ε-BR: its log-ratio ranges over 1.5394 > ε = 1 (monotonic:
    1.6074); (2) a deterministic argmax declared BR(1): a log-ratio of inf; the same argmax with the
    exponential mechanism's law as its probability_fn: the χ² of its draws against that law fails."""
    pf_br = Mechanism("user_pf_br", "global", _pf_wrapper, dpselect.permute_and_flip_probabilities,
                      options=("monotonic",), guarantee=BoundedRange)
    with pytest.raises(registry.ContractError, match=r"breaks the declared BoundedRange\(epsilon=1.0\)") as info:
        registry.check(pf_br)
    rep = info.value.report
    assert not rep.passed and [round(v.worst_range, 4) for v in rep.variants] == [1.5394, 1.6074]
    assert all(not v.audit_passed and v.chi2_pvalue > 1e-6 for v in rep.variants)   # the draws do follow its law
    argmax = Mechanism("user_argmax", "global", _argmax, _argmax_probabilities, guarantee=BoundedRange)
    rep = registry.check(argmax, raise_on_failure=False)
    assert not rep.passed and rep.variants[0].worst_log_ratio == math.inf and rep.variants[0].chi2_pvalue > 1e-6
    liar = Mechanism("user_argmax_em_law", "global", _argmax, dpselect.exponential_probabilities,
                     guarantee=BoundedRange)
    rep = registry.check(liar, raise_on_failure=False)
    assert rep.variants[0].audit_passed and rep.variants[0].chi2_pvalue == 0.0
    assert rep.failures == ("default options: the selector's 3000 draws do not follow probability_fn (chi2 p = "
                            "0 <= alpha = 1e-06)",)
    # public arguments are checked first
    for kw, exc in (({"epsilon": 0.0}, ValueError), ({"draws": 10}, ValueError), ({"alpha": 1.0}, ValueError),
                    ({"raise_on_failure": 1}, TypeError)):
        with pytest.raises(exc):
            registry.check(argmax, **kw)
    with pytest.raises(TypeError, match="spec must be"):
        registry.check(42)   # type: ignore[arg-type]


def test_check_audits_local_mechanisms_on_the_capped_count_model():
    rep = registry.check("shifted_local_dampening")
    assert rep.passed and [v.options for v in rep.variants] == [{"direction": "increasing"},
                                                                 {"direction": "decreasing"}]
    ld = get_mechanism("LD")
    user_ld = Mechanism("user_ld", "local", ld.selector, ld.probability_fn, options=("max_steps",),
                      guarantee=BoundedRange)
    assert registry.check(user_ld).passed         # the user's spec of local dampening: audited like the built-in
