"""Exact (floating-point-safe) sampling: dpselect.sampling and the selectors' exact=True default."""
import decimal
import math
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect import mechanisms, sampling
from dpselect.sampling import _BULK_HI, _BULK_LO, _BULK_TAU, _float_enclosure, _py_enclosure, noisy_top_k

U64 = 1 << 64


class ScriptedBits:
    """Stand-in for a numpy Generator that hands out scripted 64-bit words, in order."""

    def __init__(self, words):
        self.words = [int(w) for w in words]
        self.used = 0

    def integers(self, low, high, size=None, dtype=None, endpoint=False):
        assert low == 0 and high == U64 - 1 and endpoint and dtype == np.uint64
        if self.used + size > len(self.words):
            raise AssertionError("scripted bits exhausted")
        out = np.array(self.words[self.used:self.used + size], dtype=np.uint64)
        self.used += size
        return out


# ---------------------------------------------------------------------------------------------
# (i) a neighbouring pair on which the float path has an impossible output, and the exact one not
# ---------------------------------------------------------------------------------------------
class GridUniform:
    """rng.random() returning the 53-bit grid point j·2^-53 (what the float path draws)."""

    def __init__(self, j):
        self.j = j

    def random(self, *a, **k):
        return self.j * 2.0 ** -53


def _float_path_probability_of_last(u, eps, sens):
    """P(output = last candidate) of the exact=False exponential mechanism, by enumerating its
    53-bit uniforms from the top (the output is monotone in the uniform, so we stop at the first miss)."""
    factor = eps / (2.0 * sens)
    count, j = 0, 2 ** 53 - 1
    while mechanisms._sample(np.asarray(u, dtype=float), factor, None, 1, GridUniform(j)) == len(u) - 1:
        count += 1
        j -= 1
        assert count < 10_000
    return Fraction(count, 2 ** 53)


@pytest.fixture
def scripted_ok(monkeypatch):
    """Let the selectors take a ScriptedBits object where they take a Generator."""
    orig = mechanisms.check_rng
    monkeypatch.setattr(mechanisms, "check_rng", lambda r: r if isinstance(r, ScriptedBits) else orig(r))


def test_float_path_makes_an_output_impossible_on_x_but_not_on_its_neighbour(scripted_ok):
    # Δu = 10, ε = 10: x and y differ by 10 in candidate 1's utility, a legal neighbouring pair.
    x, y, eps, sens = [0.0, -80.0], [0.0, -70.0], 10.0, 10.0
    px = _float_path_probability_of_last(x, eps, sens)
    py = _float_path_probability_of_last(y, eps, sens)
    assert px == 0 and py > 0          # infinite privacy loss of the float path
    assert py == Fraction(6, 2 ** 53)  # float total 1 + 3·2^-52: the top 6 grid points of U map to it
    # The exact law: e^-40 / (1 + e^-40) on x, within e^ε of y's.
    ex = dpselect.exponential_probabilities(x, epsilon=eps, sensitivity=sens)[1]
    ey = dpselect.exponential_probabilities(y, epsilon=eps, sensitivity=sens)[1]
    assert ex > 0 and math.isclose(ex, math.exp(-40) / (1 + math.exp(-40)), rel_tol=1e-12)
    assert abs(math.log(ey / ex)) <= eps + 1e-9
    # ... and the exact sampler does output candidate 1 on x when its uniform is close enough to 1
    # (U_0 = 1/2, U_1 = 1 − 2^-63: Gumbel noises 0.37 and 43.67 against scores 0 and −40).
    assert dpselect.exponential(x, epsilon=eps, sensitivity=sens, rng=ScriptedBits([1 << 63, U64 - 2])) == 1
    assert dpselect.exponential(x, epsilon=eps, sensitivity=sens, rng=ScriptedBits([1 << 63, U64 - (1 << 20)])) == 0


# ---------------------------------------------------------------------------------------------
# (ii) refinement against exact comparisons, adversarial near-ties, scripted bits
# ---------------------------------------------------------------------------------------------
def _ref_noise(U: decimal.Decimal, noise: str, ctx) -> decimal.Decimal:
    """Independent reference: the inverse CDFs in plain decimal arithmetic at high precision."""
    one = decimal.Decimal(1)  # (only ctx methods: Decimal operators round to the thread's 28 digits)
    if noise == "gumbel":
        return ctx.minus(ctx.ln(ctx.minus(ctx.ln(U))))
    if noise == "exponential":
        return ctx.minus(ctx.ln(ctx.subtract(one, U)))
    if U < decimal.Decimal("0.5"):
        return ctx.ln(ctx.multiply(2, U))
    return ctx.minus(ctx.ln(ctx.multiply(2, ctx.subtract(one, U))))


def _reference_order(scores, streams, noise, k):
    """Top-k order of score + noise with U_r = 0.(stream_r bits), if decisive at that many bits."""
    ctx = decimal.Context(prec=600, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    lo, hi = [], []
    for f, words in zip(scores, streams):
        m = 0
        for w in words:
            m = (m << 64) | w
        nb = 64 * len(words)
        a = ctx.divide(decimal.Decimal(f.numerator), decimal.Decimal(f.denominator))
        lo.append(ctx.add(a, _ref_noise(ctx.divide(decimal.Decimal(m), decimal.Decimal(1 << nb)), noise, ctx)))
        hi.append(ctx.add(a, _ref_noise(ctx.divide(decimal.Decimal(m + 1), decimal.Decimal(1 << nb)), noise, ctx)))
    order = sorted(range(len(scores)), key=lambda i: lo[i], reverse=True)
    for p in range(k):
        if any(hi[order[q]] >= lo[order[p]] for q in range(p + 1, len(order))):
            return None
    return order[:k]


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_refinement_matches_exact_comparisons_on_adversarial_near_ties(noise, monkeypatch):
    streams_holder = {}

    def extend(self, rs):  # refinement words come from each candidate's own scripted stream
        for r in rs:
            m, nb = self.state(r)
            w = streams_holder["s"][r][nb // 64]
            self.bits[r] = ((m << 64) | w, nb + 64)

    monkeypatch.setattr(sampling._Refiner, "extend", extend)
    rng = np.random.default_rng(2024)
    checked = 0
    for trial in range(70):
        n = int(rng.integers(2, 6))
        k = int(rng.integers(1, n + 1))
        # exact scores equal or 2^-90·j apart: far below float resolution
        base = Fraction(int(rng.integers(-3, 4)))
        scores = [base + Fraction(int(rng.integers(-2, 3)), 2 ** 90) for _ in range(n)]
        first = int(rng.integers(1 << 62, 3 << 62, dtype=np.uint64))
        streams = []
        for r in range(n):
            w1 = first + int(rng.integers(0, 2))       # equal or adjacent first words
            w2 = int(rng.integers(0, 3)) << 62        # few distinct second words: deeper ties
            streams.append([w1, w2] + [int(x) for x in rng.integers(0, U64 - 1, size=4, dtype=np.uint64,
                                                                     endpoint=True)])
        expected = _reference_order(scores, streams, noise, k)
        if expected is None:
            continue
        streams_holder["s"] = streams
        got = noisy_top_k(np.array([float(s) for s in scores]), np.full(n, 1e-15), k=k, rng=ScriptedBits([s[0] for s in streams]), noise=noise,
                          exact_score=lambda r, scores=scores: scores[r])
        assert got.tolist() == expected, (trial, scores, streams)
        checked += 1
    assert checked >= 55


def test_equal_scores_identical_first_words_decided_by_later_bits():
    # Two candidates, same score, same first 64 bits: the one with the larger next word wins.
    for noise in ("gumbel", "exponential", "laplace"):
        w = 0x8000_0000_1234_5678
        got = noisy_top_k(np.zeros(2), 0.0, k=1, rng=ScriptedBits([w, w, 5, 9]), noise=noise,
                          exact_score=lambda r: Fraction(0))
        assert got.tolist() == [1]
        got = noisy_top_k(np.zeros(2), 0.0, k=2, rng=ScriptedBits([w, w, 9, 5]), noise=noise,
                          exact_score=lambda r: Fraction(0))
        assert got.tolist() == [0, 1]


# ---------------------------------------------------------------------------------------------
# float enclosures are rigorous
# ---------------------------------------------------------------------------------------------
_EDGE = [0, 1, 2, 3, (1 << 44) - 1, 1 << 44, (1 << 63) - 2, (1 << 63) - 1, 1 << 63, (1 << 63) + 1,
         U64 - (1 << 44), U64 - 3, U64 - 2, U64 - 1]


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
@pytest.mark.parametrize("w", [None, 0.37, 3.0, 1e6])
def test_float_enclosures_contain_the_exact_noise_over_the_cell(noise, w):
    ctx = decimal.Context(prec=80, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    rng = np.random.default_rng(5)
    ms = _EDGE + [int(x) for x in rng.integers(0, U64 - 1, size=60, dtype=np.uint64, endpoint=True)]
    m = np.array(ms, dtype=np.uint64)
    weights = None if w is None else np.full(m.size, w)
    lo, hi = _float_enclosure(m, noise, weights)
    for i, mi in enumerate(ms):
        for end, bound, cmp in ((mi, lo[i], "lo"), (mi + 1, hi[i], "hi")):
            U = ctx.divide(decimal.Decimal(end), decimal.Decimal(U64))
            if w is not None:
                U = ctx.exp(ctx.divide(ctx.ln(U), decimal.Decimal(w))) if U > 0 else U
            if U == 0:  # F⁻¹(0) = −inf, except exponential noise: 0
                v = decimal.Decimal(0) if noise == "exponential" else decimal.Decimal("-Infinity")
                assert decimal.Decimal(float(bound)) <= v if cmp == "lo" else True
                continue
            if U == 1:
                assert bound == math.inf if cmp == "hi" else True
                continue
            v = _ref_noise(U, noise, ctx)
            if cmp == "lo":
                assert decimal.Decimal(float(bound)) <= v, (mi, noise, w)
            else:
                assert decimal.Decimal(float(bound)) >= v, (mi, noise, w)
        py_lo, py_hi = _py_enclosure(mi, noise, w)
        assert py_lo == pytest.approx(lo[i], rel=1e-14, abs=1e-14) or (py_lo == lo[i])
        assert py_hi == pytest.approx(hi[i], rel=1e-14, abs=1e-14) or (py_hi == hi[i])


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_bulk_error_bound_of_one_float_evaluation(noise):
    # the stage-1 bound: float noise at fl(m)·2^-64 within _BULK_TAU + 1e-15·|N| of the exact noise at
    # both ends of the cell, for every bulk cell (random ones and the bulk's edges)
    ctx = decimal.Context(prec=60, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    rng = np.random.default_rng(9)
    m = rng.integers(int(_BULK_LO), int(_BULK_HI), size=200, dtype=np.uint64)
    m = np.concatenate([m, np.array([_BULK_LO, _BULK_HI - np.uint64(1), 1 << 63, (1 << 63) - 1], dtype=np.uint64)])
    a = np.zeros(m.size)
    short = sampling._bulk_shortlist(a, m, m.size, noise)  # k = n: every candidate kept
    assert short.size == m.size
    uf = m.astype(np.float64) * 2.0 ** -64
    g = {"gumbel": -np.log(-np.log(uf)), "exponential": -np.log1p(-uf),
         "laplace": np.where(uf < 0.5, np.log(2 * uf), -np.log(2 * (1 - uf)))}[noise]
    for mi, gi in zip(m.tolist(), g.tolist()):
        for end in (mi, mi + 1):
            exact = _ref_noise(ctx.divide(decimal.Decimal(end), decimal.Decimal(U64)), noise, ctx)
            assert abs(ctx.subtract(decimal.Decimal(gi), exact)) <= decimal.Decimal(_BULK_TAU + 1e-15 * abs(gi))


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_fast_shortlist_and_generic_path_agree_draw_by_draw(noise):
    # Same random bits, three certification paths (relative-error shortlist, per-candidate-error
    # shortlist, enclosures of every candidate):
    # both return the exact top k of the same realised noise, so they must agree on every draw.
    base = np.random.default_rng(3)
    for trial in range(40):
        n = int(base.integers(40, 400))
        k = int(base.integers(1, 6))
        a = -np.round(base.exponential(3.0, size=n), 1)  # many exact ties
        a -= a.max()
        seed = int(base.integers(0, 2 ** 31))
        ex = lambda r, a=a: Fraction(float(a[r]))  # noqa: E731
        fast = noisy_top_k(a, None, k=k, rng=np.random.default_rng(seed), noise=noise, exact_score=ex)
        err = 1e-15 * np.abs(a) + 1e-300
        with_err = noisy_top_k(a, err, k=k, rng=np.random.default_rng(seed), noise=noise, exact_score=ex)
        gen = np.random.default_rng(seed)  # same bits, no shortlist: both cell ends for every candidate
        m = sampling._bits64(gen, n)
        full = sampling._finish(a, err, np.arange(n), m, k, gen, noise, ex, None)
        assert fast.tolist() == with_err.tolist() == full.tolist()


# ---------------------------------------------------------------------------------------------
# (iii) chi-square of every exact selector against its exact probabilities
# ---------------------------------------------------------------------------------------------
U = np.array([0.0, 1.0, 2.0, 2.0, -3.0, 5.0])


def test_exact_selectors_match_exact_probabilities(freq):
    rng = np.random.default_rng(77)
    N = 60_000
    d = dpselect
    freq(d.exponential(U, epsilon=1.0, sensitivity=1.0, size=N, rng=rng), d.exponential_probabilities(U, epsilon=1.0, sensitivity=1.0))
    freq(d.permute_and_flip(U, epsilon=1.0, sensitivity=1.0, size=N, rng=rng), d.permute_and_flip_probabilities(U, epsilon=1.0, sensitivity=1.0))
    freq(d.report_noisy_max(U, epsilon=1.0, sensitivity=1.0, size=N, rng=rng),
         d.report_noisy_max_probabilities(U, epsilon=1.0, sensitivity=1.0))
    freq(d.report_noisy_max(U, epsilon=1.0, sensitivity=1.0, noise="gumbel", size=N, rng=rng),
         d.exponential_probabilities(U, epsilon=1.0, sensitivity=1.0))
    w = np.array([1.0, 0.25, 2.0, 3.5, 1.0, 0.125])
    freq(d.exponential(U, epsilon=1.0, sensitivity=1.0, base_measure=w, size=N, rng=rng),
         d.exponential_probabilities(U, epsilon=1.0, sensitivity=1.0, base_measure=w))
    sf = dpselect.SensitivityFunction(lambda t: np.minimum(1.0, np.array([0.2, 0.3, 0.5, 0.5, 0.1, 0.7]) * (t + 1)),
                                      1.0)
    freq(d.local_dampening(U, epsilon=1.0, sensitivity_function=sf, size=N, rng=rng),
         d.local_dampening_probabilities(U, epsilon=1.0, sensitivity_function=sf))
    for direction in ("increasing", "decreasing"):
        freq(d.shifted_local_dampening(U, epsilon=1.0, sensitivity_function=sf, direction=direction, size=N, rng=rng),
             d.shifted_local_dampening_probabilities(U, epsilon=1.0, sensitivity_function=sf, direction=direction))
    # single draws follow the same law as the batch
    freq([d.exponential(U, epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(6000)], d.exponential_probabilities(U, epsilon=1.0, sensitivity=1.0))


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_exact_top2_is_two_peeled_picks(freq, noise):
    u, eps = np.array([0.0, 1.0, 2.5, 4.0]), 2.0
    n = u.size
    probs = {"gumbel": dpselect.exponential_probabilities,
             "exponential": dpselect.permute_and_flip_probabilities,
             "laplace": lambda v, epsilon, sensitivity: dpselect.report_noisy_max_probabilities(
                 v, epsilon=epsilon, sensitivity=sensitivity, noise="laplace")}[noise]
    p1 = probs(u, epsilon=eps / 2, sensitivity=1.0)
    exact = np.zeros(n * n)
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        p2 = probs(u[rest], epsilon=eps / 2, sensitivity=1.0)
        for jj, j in enumerate(rest):
            exact[i * n + j] = p1[i] * p2[jj]
    picks = dpselect.report_noisy_max(u, epsilon=eps, sensitivity=1.0, noise=noise, k=2, size=40_000, rng=11)
    freq(picks[:, 0] * n + picks[:, 1], exact)
    single = np.array([dpselect.report_noisy_max(u, epsilon=eps, sensitivity=1.0, noise=noise, k=2, rng=s) for s in range(3000)])
    freq(single[:, 0] * n + single[:, 1], exact)


@pytest.mark.parametrize("noise", ["exponential", "laplace"])
@pytest.mark.parametrize("shift", [-6.0, 3.0, 12.0])
def test_lazy_peeled_top_k_is_the_peeling_definition(freq, noise, shift):
    """noisy_top_k_peeled (head, revealed tail candidates, walls, fallback) against the law of k sequential
    exact picks with fresh noise on the remaining candidates (issue 16). The water level is moved so
    that every regime is used: everything in the head (−6), most candidates revealed from the tail (3),
    and the wall above every revealed value so that most picks fall back (12); the default level is
    used by the selectors (test_exact_top2_is_two_peeled_picks) and below."""
    a = np.array([0.0, 0.5, 1.0, 3.0, 3.2])
    n = a.size
    probs = {"exponential": dpselect.permute_and_flip_probabilities,
             "laplace": lambda v, epsilon, sensitivity: dpselect.report_noisy_max_probabilities(
                 v, epsilon=epsilon, sensitivity=sensitivity, noise="laplace")}[noise]
    p1 = probs(a, epsilon=2.0, sensitivity=1.0)        # scores a = ε u / (2Δ) with ε = 2, Δ = 1
    exact = np.zeros(n * n)
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        p2 = probs(a[rest], epsilon=2.0, sensitivity=1.0)
        for jj, j in enumerate(rest):
            exact[i * n + j] = p1[i] * p2[jj]
    rng = np.random.default_rng(int(shift * 10) + 100)
    draws = np.array([sampling._noisy_top_k_peeled(a, None, 2, rng, noise=noise,
                                                   exact_score=lambda r: Fraction(float(a[r])), level_shift=shift)
                      for _ in range(2500)])
    assert all(len(set(d)) == 2 for d in draws.tolist())
    freq(draws[:, 0] * n + draws[:, 1], exact)


def test_lazy_peeled_top_k_on_many_candidates_first_pick_and_distinct():
    """Large inputs: picks are distinct, and the first pick's law on near-ties matches the exact one
    (grouped by score class)."""
    n = 20_000
    a = np.where(np.arange(n) < 50, 2.0, 0.0) + np.arange(n) * 1e-12
    rng = np.random.default_rng(3)
    firsts = []
    for _ in range(300):
        out = sampling.noisy_top_k_peeled(a, None, 10, rng, noise="exponential",
                                          exact_score=lambda r: Fraction(float(a[r])))
        assert len(set(out.tolist())) == 10
        firsts.append(int(out[0] < 50))
    # P(first pick among the 50 high ones) for exponential noise, by permute-and-flip on two classes
    p_high = 50 * np.exp(2.0) / (50 * np.exp(2.0) + (n - 50))   # lower bound of the exact value (PF >= EM)
    assert np.mean(firsts) > p_high - 0.1


# ---------------------------------------------------------------------------------------------
# extreme but valid inputs: the mathematically right answer, never NaN or IndexError
# ---------------------------------------------------------------------------------------------
def test_extreme_inputs_sample_and_have_finite_probabilities():
    d = dpselect
    for f in (d.exponential, d.permute_and_flip, d.report_noisy_max):
        assert f([0.0], epsilon=1e10, sensitivity=1e-300, rng=0) == 0
        assert f([1.7e308, -1.7e308], epsilon=1e300, sensitivity=1e-300, rng=0) == 0  # factor overflows: argmax
        out = f([1.7e308, -1.7e308], epsilon=1e-300, sensitivity=1e300, size=4000, rng=0)  # underflows: a fair coin
        assert 1800 < np.bincount(out, minlength=2)[0] < 2200
    assert d.exponential_probabilities([0.0], epsilon=1e10, sensitivity=1e-300).tolist() == [1.0]
    assert d.exponential_probabilities([1.7e308, -1.7e308], epsilon=1e-300, sensitivity=1e300).tolist() == [0.5, 0.5]
    assert d.exponential_probabilities([1.7e308, -1.7e308], epsilon=1e300, sensitivity=1e-300).tolist() == [1.0, 0.0]
    # D(x, 0) = 2e308 overflows float64; the sampler uses the exact value
    with np.errstate(over="ignore"):
        assert d.local_dampening([1e308, 1.0], epsilon=1.0, sensitivity_function=d.constant(2, 0.5), rng=0) == 0
        assert d.local_dampening([1.0, 1e308, 1e308], epsilon=1.0, sensitivity_function=d.constant(3, 0.5), k=3, rng=0)[2] == 0


def test_exact_and_float_paths_agree_in_law_and_exact_false_still_works():
    assert dpselect.exponential([1.0, 5.0, 2.0], epsilon=1e6, sensitivity=1.0, exact=False, rng=0) == 1
    assert dpselect.permute_and_flip(U, epsilon=1.0, sensitivity=1.0, exact=False, size=5, rng=0).shape == (5,)
    with pytest.raises(TypeError, match="exact"):
        dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, exact="yes")
    with pytest.raises(TypeError, match="exact"):  # checked before the one-candidate shortcut too
        dpselect.exponential([1.0], epsilon=1.0, sensitivity=1.0, exact="yes")
    with pytest.raises(ValueError, match="size"):
        dpselect.local_dampening([1.0], epsilon=1.0, sensitivity_function=dpselect.constant(1, 1.0), size=0)
    with pytest.raises(ValueError, match="size"):
        dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, size=0)
    assert dpselect.exponential(U, epsilon=1.0, sensitivity=1.0, k=3, size=7, rng=0).shape == (7, 3)


def test_huge_candidate_sets_are_certified_without_refinement(monkeypatch):
    calls = []
    orig = sampling._topk._refine

    def spy(*a, **k):
        calls.append(1)
        return orig(*a, **k)

    monkeypatch.setattr(sampling._topk, "_refine", spy)
    u = np.random.default_rng(0).normal(size=200_000) * 30
    for k in (1, 10):
        dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, k=k, rng=1)
    assert len(calls) == 0


def test_laplace_below_is_bernoulli_of_the_laplace_cdf(freq):
    from dpselect.sampling import laplace_below

    rng = np.random.default_rng(21)
    for x, b in ((-2.0, 1.0), (0.0, 3.0), (0.75, 0.5), (Fraction(-1, 3), 1.0)):
        z = float(x) / b
        F = 0.5 * math.exp(z) if z < 0 else 1 - 0.5 * math.exp(-z)
        draws = [int(laplace_below(x, b, rng)) for _ in range(6000)]
        freq(draws, [1 - F, F])
    # far tails: possible, exactly, when the uniform is small enough (scripted bits)
    assert laplace_below(-40.0, 1.0, ScriptedBits([0, 0])) is True        # U < 2^-128 < e^-40/2
    assert laplace_below(-40.0, 1.0, ScriptedBits([1 << 20])) is False
    assert laplace_below(40.0, 1.0, ScriptedBits([U64 - 1, U64 - 1])) is False


def test_cached_dampened_and_shifted_selection_equal_the_selectors_bit_for_bit():
    # PrivTopk and DP-MOTkIN cache D / G and call dampened_select / shifted_select: same law and, for
    # the same random bits, the same answer as local_dampening / shifted_local_dampening.
    from dpselect.dampening import dampen_with_error, shift_totals_with_error

    u = np.array([3.0, 2.5, 2.5, 0.1, 7.0, 1.0 / 3.0] * 10)
    sf = dpselect.SensitivityFunction(lambda t: np.minimum(1.0, (0.1 + 0.05 * np.arange(60) % 0.7) * (t + 1)), 1.0)
    D, err = dampen_with_error(u, sf)
    G, gerr = shift_totals_with_error(sf, u.size)
    for seed in range(25):
        for k in (1, 3):
            a = mechanisms.dampened_select(u, sf, D, err, 0.7, k, np.random.default_rng(seed))
            b = dpselect.local_dampening(u, epsilon=0.7, sensitivity_function=sf, k=k, rng=seed)
            assert np.array_equal(np.atleast_1d(a), np.atleast_1d(b))
            a = mechanisms.shifted_select(u, sf, G, gerr, 0.7, k, np.random.default_rng(seed))
            b = dpselect.shifted_local_dampening(u, epsilon=0.7, sensitivity_function=sf, k=k, rng=seed)
            assert np.array_equal(np.atleast_1d(a), np.atleast_1d(b))


# ---------------------------------------------------------------------------------------------
# issue 22: stage 1 never gives up on the whole array; same seeds -> same picks as before
# ---------------------------------------------------------------------------------------------
# Picks of the sampler before issue 22 (commit a55fc30), on inputs where its stage 1 gave up and enclosed
# every candidate: a bulk narrowed to U in [2^-5, 1 - 2^-5) (1/16 of the cells above or below it, so
# near-ties put more than 8 of them on top at n = 600), and scripted first words with 60 of 300 cells
# above the real bulk. Blocked peeling (levels without a sort) against the same commit's noisy_top_k_peeled.
_PICKS_NARROW_BULK = {('near', 'exponential', 1, 'err'): [[530], [186], [398], [156]],
 ('near', 'exponential', 1, 'rel'): [[530], [186], [398], [156]],
 ('near', 'exponential', 4, 'err'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                     [156, 532, 303, 595]],
 ('near', 'exponential', 4, 'rel'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                     [156, 532, 303, 595]],
 ('near', 'gumbel', 1, 'err'): [[530], [186], [398], [156]],
 ('near', 'gumbel', 1, 'rel'): [[530], [186], [398], [156]],
 ('near', 'gumbel', 4, 'err'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                [156, 532, 303, 595]],
 ('near', 'gumbel', 4, 'rel'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                [156, 532, 303, 595]],
 ('near', 'laplace', 1, 'err'): [[530], [186], [398], [156]],
 ('near', 'laplace', 1, 'rel'): [[530], [186], [398], [156]],
 ('near', 'laplace', 4, 'err'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                 [156, 532, 303, 595]],
 ('near', 'laplace', 4, 'rel'): [[530, 26, 308, 77], [186, 108, 537, 416], [398, 450, 405, 222],
                                 [156, 532, 303, 595]],
 ('normal', 'exponential', 1, 'err'): [[349], [186], [398], [156]],
 ('normal', 'exponential', 1, 'rel'): [[349], [186], [398], [156]],
 ('normal', 'exponential', 4, 'err'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                       [156, 532, 595, 260]],
 ('normal', 'exponential', 4, 'rel'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                       [156, 532, 595, 260]],
 ('normal', 'gumbel', 1, 'err'): [[349], [186], [398], [156]],
 ('normal', 'gumbel', 1, 'rel'): [[349], [186], [398], [156]],
 ('normal', 'gumbel', 4, 'err'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                  [156, 532, 595, 260]],
 ('normal', 'gumbel', 4, 'rel'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                  [156, 532, 595, 260]],
 ('normal', 'laplace', 1, 'err'): [[349], [186], [398], [156]],
 ('normal', 'laplace', 1, 'rel'): [[349], [186], [398], [156]],
 ('normal', 'laplace', 4, 'err'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                   [156, 532, 595, 260]],
 ('normal', 'laplace', 4, 'rel'): [[349, 26, 530, 308], [186, 221, 383, 393], [398, 405, 222, 450],
                                   [156, 532, 595, 260]]}
_PICKS_TAIL_WORDS = {('exponential', 1): [[165], [202], [269], [295]],
 ('exponential', 3): [[165, 120, 203], [202, 132, 60], [269, 141, 177], [295, 284, 83]],
 ('gumbel', 1): [[165], [202], [269], [295]],
 ('gumbel', 3): [[165, 120, 203], [202, 132, 60], [269, 141, 177], [295, 284, 83]],
 ('laplace', 1): [[165], [202], [269], [295]],
 ('laplace', 3): [[165, 120, 203], [202, 132, 60], [269, 141, 177], [295, 284, 83]]}
_PICKS_PEELED = {('near', 'exponential', 'err', 0.0): [[139, 2003, 1127, 2537, 627], [2317, 337, 2590, 4362, 297],
                                       [4094, 889, 186, 2645, 960]],
 ('near', 'exponential', 'err', 4.0): [[3393, 425, 177, 129, 4882], [1062, 832, 604, 863, 64],
                                       [2636, 2886, 3367, 1852, 409]],
 ('near', 'exponential', 'rel', 0.0): [[139, 2003, 1127, 2537, 627], [2317, 337, 2590, 4362, 297],
                                       [4094, 889, 186, 2645, 960]],
 ('near', 'exponential', 'rel', 4.0): [[3393, 425, 177, 129, 4882], [1062, 832, 604, 863, 64],
                                       [2636, 2886, 3367, 1852, 409]],
 ('near', 'laplace', 'err', 0.0): [[533, 3330, 1634, 4108, 1533], [782, 3504, 1715, 139, 2015],
                                   [847, 4652, 372, 1802, 1569]],
 ('near', 'laplace', 'err', 4.0): [[3411, 443, 195, 147, 985], [1062, 1664, 604, 1727, 64],
                                   [393, 2904, 1870, 427, 4761]],
 ('near', 'laplace', 'rel', 0.0): [[533, 3330, 1634, 4108, 1533], [782, 3504, 1715, 139, 2015],
                                   [847, 4652, 372, 1802, 1569]],
 ('near', 'laplace', 'rel', 4.0): [[3411, 443, 195, 147, 985], [1062, 1664, 604, 1727, 64],
                                   [393, 2904, 1870, 427, 4761]],
 ('steps', 'exponential', 'err', 0.0): [[4106, 1897, 2512, 4039, 3115], [3370, 3378, 3297, 685, 4172],
                                        [2609, 2733, 3193, 3086, 4959]],
 ('steps', 'exponential', 'err', 4.0): [[2129, 1653, 1218, 269, 137], [907, 1247, 35, 4419, 3256],
                                        [788, 1238, 4147, 354, 4671]],
 ('steps', 'exponential', 'rel', 0.0): [[4106, 1897, 2512, 4039, 3115], [3370, 3378, 3297, 685, 4172],
                                        [2609, 2733, 3193, 3086, 4959]],
 ('steps', 'exponential', 'rel', 4.0): [[2129, 1653, 1218, 269, 137], [907, 1247, 35, 4419, 3256],
                                        [788, 1238, 4147, 354, 4671]],
 ('steps', 'laplace', 'err', 0.0): [[2323, 101, 843, 4302, 2326], [2749, 4582, 3138, 572, 983],
                                    [3903, 452, 3130, 4211, 2590]],
 ('steps', 'laplace', 'err', 4.0): [[2129, 3397, 2468, 271, 138], [1850, 1283, 80, 3294, 532],
                                    [788, 1238, 4147, 830, 4673]],
 ('steps', 'laplace', 'rel', 0.0): [[2323, 101, 843, 4302, 2326], [2749, 4582, 3138, 572, 983],
                                    [3903, 452, 3130, 4211, 2590]],
 ('steps', 'laplace', 'rel', 4.0): [[2129, 3397, 2468, 271, 138], [1850, 1283, 80, 3294, 532],
                                    [788, 1238, 4147, 830, 4673]]}


def _narrow_inputs():
    g = np.random.default_rng(2024)
    n = 600
    near = 5.0 + g.random(n) * 1e-9
    norm = g.normal(size=n)
    return {"near": near - near.max(), "normal": norm - norm.max()}


def _tail_words(seed, n):
    """Scripted first words (and spare words for refinement): 60 cells above the bulk, 10 below it."""
    g = np.random.default_rng(seed)
    w = g.integers(0, U64 - 1, size=n + 4000, dtype=np.uint64, endpoint=True)
    hi = g.choice(n, size=60, replace=False)
    w[hi] = np.uint64(U64 - 1) - g.integers(0, 1 << 44, size=60, dtype=np.uint64)
    lo = g.choice(n, size=10, replace=False)
    w[lo] = g.integers(0, 1 << 44, size=10, dtype=np.uint64)
    return w


def _shortlist_sizes(monkeypatch):
    sizes = []
    orig = sampling._topk._finish_sub
    monkeypatch.setattr(sampling._topk, "_bulk_top", lambda *args: None)   # stage 1 itself, not the shortcut

    def spy(a, a_err, short, *rest):
        sizes.append((short.size, a.shape[0]))
        return orig(a, a_err, short, *rest)

    monkeypatch.setattr(sampling._topk, "_finish_sub", spy)
    return sizes


@pytest.mark.parametrize("chunk", [None, 64])
def test_stage_one_keeps_the_previous_picks_where_it_used_to_give_up(monkeypatch, chunk):
    monkeypatch.setattr(sampling._topk, "_BULK_LO", np.uint64(1 << 59))
    monkeypatch.setattr(sampling._topk, "_BULK_HI", np.uint64(U64 - (1 << 59)))
    if chunk is not None:   # blocks much smaller than n: the running threshold and its compaction
        monkeypatch.setattr(sampling._topk, "_CHUNK", chunk)
    sizes = _shortlist_sizes(monkeypatch)
    for uname, a in _narrow_inputs().items():
        for noise in ("gumbel", "exponential", "laplace"):
            for k in (1, 4):
                for errname in ("rel", "err"):
                    err = None if errname == "rel" else 1e-15 * np.abs(a) + 1e-300
                    ex = lambda r, a=a: Fraction(float(a[r]))  # noqa: E731
                    got = [noisy_top_k(a, err, k=k, rng=np.random.default_rng(s), noise=noise, exact_score=ex).tolist()
                           for s in range(4)]
                    assert got == _PICKS_NARROW_BULK[(uname, noise, k, errname)], (uname, noise, k, errname)
    # ~37 of the 600 cells lie outside the narrowed bulk; the shortlist never holds the whole array
    assert len(sizes) == 96 and max(s for s, _ in sizes) <= 60


def test_stage_one_keeps_the_previous_picks_on_many_above_bulk_cells(monkeypatch):
    sizes = _shortlist_sizes(monkeypatch)
    n = 300
    a = -np.random.default_rng(7).random(n) * 1e-9
    ex = lambda r: Fraction(float(a[r]))  # noqa: E731
    for noise in ("gumbel", "exponential", "laplace"):
        for k in (1, 3):
            got = [noisy_top_k(a, None, k=k, rng=ScriptedBits(_tail_words(s, n)), noise=noise, exact_score=ex).tolist()
                   for s in range(4)]
            assert got == _PICKS_TAIL_WORDS[(noise, k)], (noise, k)
    assert len(sizes) == 24 and max(s for s, _ in sizes) <= 75   # the 70 cells outside the bulk at most


def test_blocked_peeling_keeps_the_previous_picks(monkeypatch):
    # the fallback as it was (a scan of every candidate); the refined one is compared with it below
    monkeypatch.setattr(sampling._peel, "_PEEL_FULL_FALLBACK", True)
    monkeypatch.setattr(sampling._topk, "_CHUNK", 512)
    monkeypatch.setattr(sampling._peel, "_PEEL_BLOCK", 64)
    fallbacks = []
    orig = sampling._peel._fallback_bits
    monkeypatch.setattr(sampling._peel, "_fallback_bits", lambda *a: fallbacks.append(1) or orig(*a))
    g = np.random.default_rng(11)
    n = 5000
    us = {"near": 5.0 + g.random(n) * 1e-9, "steps": np.round(g.normal(size=n) * 3)}
    for uname, u in us.items():
        a = (u - u.max()) * 0.1
        ex = lambda r, a=a: Fraction(float(a[r]))  # noqa: E731
        for noise in ("exponential", "laplace"):
            for errname in ("rel", "err"):
                err = None if errname == "rel" else 1e-15 * np.abs(a) + 1e-300
                for shift in (0.0, 4.0):   # 4: a raised water level, so the rare fallback runs
                    got = [sampling._noisy_top_k_peeled(a, err, 5, np.random.default_rng(s), noise=noise, exact_score=ex,
                                                        level_shift=shift).tolist() for s in range(3)]
                    assert got == _PICKS_PEELED[(uname, noise, errname, shift)], (uname, noise, errname, shift)
    assert len(fallbacks) > 20   # the rare path (lowered water level) is among the compared draws


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_first_words_drawn_in_blocks_are_one_draw_of_n(monkeypatch, noise):
    # A Generator's words are drawn block by block inside stage 1; given the same words at once (the
    # path dpselect.dask replays), the picks and the generator's state afterwards are the same.
    monkeypatch.setattr(sampling._topk, "_CHUNK", 100)
    a = -np.round(np.random.default_rng(4).exponential(2.0, size=1000), 1)
    ex = lambda r: Fraction(float(a[r]))  # noqa: E731
    for seed in range(5):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        p1 = noisy_top_k(a, None, k=3, rng=r1, noise=noise, exact_score=ex)
        p2 = noisy_top_k(a, None, k=3, rng=r2, noise=noise, exact_score=ex, bits=sampling._bits64(r2, a.size))
        assert p1.tolist() == p2.tolist()
        assert r1.integers(0, 1 << 62) == r2.integers(0, 1 << 62)


def _grouped_noisy_max(a, sizes, noise):
    """P(the argmax of a_r + N_r is in group g): sizes[g] candidates with score a[g], N unit exponential or
    Laplace noise, by quadrature of n_g f(x − a_g) Π_h F(x − a_h)^(n_h − [h = g])."""
    from scipy import integrate

    if noise == "exponential":
        def logf(z):
            return -z if z >= 0 else -math.inf

        def logF(z):
            return math.log1p(-math.exp(-z)) if z > 0 else -math.inf
    else:
        def logf(z):
            return -abs(z) - math.log(2.0)

        def logF(z):
            return z - math.log(2.0) if z < 0 else math.log1p(-0.5 * math.exp(-z))
    top = max(a) + math.log(sum(sizes))
    out = []
    for g in range(len(a)):
        def integrand(x, g=g):
            s = logf(x - a[g]) + sum((sizes[h] - (h == g)) * logF(x - a[h]) for h in range(len(a)))
            return math.exp(s) if s > -745 else 0.0
        lo = min(a) - 40 if noise == "laplace" else max(a)
        v = integrate.quad(integrand, lo, top + 40, points=[top - 5, top, top + 5], limit=400, epsabs=1e-13,
                           epsrel=1e-11)[0]
        out.append(sizes[g] * v)
    return np.array(out)


def test_grouped_quadrature_matches_the_exact_probabilities():
    u = np.array([0.0] * 5 + [1.0] * 3 + [2.5] * 2)
    for noise, f in (("exponential", dpselect.permute_and_flip_probabilities),
                     ("laplace", dpselect.report_noisy_max_probabilities)):
        p = f(u, epsilon=1.0, sensitivity=1.0)
        grouped = np.array([p[:5].sum(), p[5:8].sum(), p[8:].sum()])
        assert np.abs(_grouped_noisy_max([0.0, 0.5, 1.25], [5, 3, 2], noise) - grouped).max() < 1e-11


def test_default_samplers_match_the_law_when_above_bulk_cells_win(freq):
    """10^6 candidates in three utility classes (0, 1, 2): most winners' first words lie above the bulk
    (U > 1 − 2^-20), which stage 1 used to give up on. Class frequencies of the exact defaults against the
    exact class probabilities."""
    n = 1_000_000
    sizes = [700_000, 250_000, 50_000]
    cls = np.repeat([0, 1, 2], sizes)
    u = cls.astype(np.float64)
    p_em = dpselect.exponential_probabilities(u, epsilon=1.0, sensitivity=1.0)
    laws = {
        dpselect.exponential: np.array([p_em[cls == c].sum() for c in range(3)]),
        dpselect.permute_and_flip: _grouped_noisy_max([0.0, 0.5, 1.0], sizes, "exponential"),
        dpselect.report_noisy_max: _grouped_noisy_max([0.0, 0.5, 1.0], sizes, "laplace"),
    }
    above = 0
    for f, law in laws.items():
        draws = [int(f(u, epsilon=1.0, sensitivity=1.0, rng=1000 + s)) for s in range(100)]
        if f is dpselect.exponential:
            for s, r in enumerate(draws[:20]):
                above += int(sampling._bits64(np.random.default_rng(1000 + s), n)[r] >= _BULK_HI)
        freq(cls[draws], law)
    assert above >= 10   # the first 20 winners: most above the bulk


def test_one_exact_draw_holds_little_more_than_the_scores():
    # issue 22 item 2: no n-sized index array or temporaries beyond the scaled scores (n float64) and the
    # peeling levels (n int8); numpy's argmax(u + gumbel) holds one n-sized float64 array
    import tracemalloc

    n = 2_000_000
    u = np.random.default_rng(0).normal(size=n)
    for f, k in ((dpselect.exponential, 1), (dpselect.exponential, 10), (dpselect.permute_and_flip, 1),
                 (dpselect.report_noisy_max, 10)):
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        f(u, epsilon=1.0, sensitivity=1.0, k=k, rng=0)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        assert peak < 1.5 * 8 * n, (f.__name__, k, peak / 8 / n)


@pytest.mark.parametrize("w", [5e-324, 1e-310, 1e-300, 0.37, 1.0, 3.0, 1e300, 1.7e308])
def test_weighted_gumbel_enclosures_hold_for_every_weight(w):
    """Issue 21 P4: Gumbel noise under a base measure w is Gumbel + ln w (ln(U)/w overflowed below ~1e-307,
    -inf + inf in the enclosure); the scalar and the vectorised enclosures contain the exact value
    −ln(−ln U) + ln w at both cell ends (decimal reference at 60 digits)."""
    ctx = decimal.Context(prec=60)
    lw = ctx.ln(decimal.Decimal(w))
    rng = np.random.default_rng(11)
    words = [0, 1, 2 ** 20, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 2 ** 30, 2 ** 64 - 1] + \
        [int(x) for x in rng.integers(0, 2 ** 64 - 1, size=40, dtype=np.uint64)]
    vlo, vhi = _float_enclosure(np.asarray(words, dtype=np.uint64), "gumbel", np.full(len(words), w))
    for i, m in enumerate(words):
        lo, hi = _py_enclosure(m, "gumbel", w)
        for end, bound, side in ((m, lo, "lo"), (m + 1, hi, "hi")):
            if end == 0 or end == 2 ** 64:
                continue
            u = ctx.divide(decimal.Decimal(end), decimal.Decimal(2 ** 64))
            exact = ctx.add(ctx.ln(ctx.ln(u).copy_negate()).copy_negate(), lw)
            assert math.isfinite(bound)
            if side == "lo":
                assert decimal.Decimal(bound) <= exact and decimal.Decimal(float(vlo[i])) <= exact
            else:
                assert decimal.Decimal(bound) >= exact and decimal.Decimal(float(vhi[i])) >= exact


def test_far_scores_take_the_cheap_enclosure_first():
    """Issue 21 item 15: scores beyond 1e40 noise units get one 50-digit enclosure before any full-precision
    ln; the picks are the exact law's (order of scores 1e600 apart is certain)."""
    R = sampling._Refiner(np.random.default_rng(0), "gumbel", lambda r: Fraction(-10 ** 600) * r, None,
                          np.array([2 ** 62, 2 ** 63, 2 ** 61], dtype=np.uint64), Fraction(-10 ** 600))
    lo, hi = R.interval(2)
    assert 2 in R.coarse and 2 in R.pending
    assert lo < -Fraction(10 ** 599) and hi < -Fraction(10 ** 599) * 9
    R.extend([2])                       # a coarse enclosure draws no more bits
    assert R.state(2) == (2 ** 61, 64)
    lo2, hi2 = R.interval(2)           # the full one next, from the same bits, inside the coarse one
    assert lo <= lo2 <= hi2 <= hi and (hi2 - lo2) < (hi - lo)


def _enclosure_misses(a, err, n_lo, n_hi):
    """Entries where _score_bounds + _round_out fail to contain [a − err + n_lo, a + err + n_hi] (Fractions)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s_lo, s_hi = sampling._score_bounds(a, err)
        lo, hi = sampling._round_out(s_lo + n_lo, s_hi + n_hi)
    bad = []
    for i in range(a.size):
        ai, ei = float(a[i]), float(err[i])
        if math.isfinite(ai) and math.isfinite(ei):
            x_lo = Fraction(ai) - Fraction(ei) + Fraction(float(n_lo[i]))
            x_hi = Fraction(ai) + Fraction(ei) + Fraction(float(n_hi[i]))
        elif ai == -math.inf and math.isfinite(ei):   # "below −DBL_MAX": only the upper end is known
            x_lo = None
            x_hi = -Fraction(sampling._DBL_MAX) + Fraction(ei) + Fraction(float(n_hi[i]))
        else:
            x_lo = x_hi = None
        if x_lo is not None and not (lo[i] == -math.inf or Fraction(float(lo[i])) <= x_lo):
            bad.append((i, "lo"))
        if x_hi is not None and not (hi[i] == math.inf or Fraction(float(hi[i])) >= x_hi):
            bad.append((i, "hi"))
    return bad


def test_score_bounds_hold_when_a_huge_error_cancels_with_the_noise():
    """a = 2^-60 with err = 1 + 2^-52: a + err rounds down to 1 + 2^-52, and a noise bound of −(1 + 2^-52)
    cancels it to exactly 0, where the relative widening of the last addition adds nothing: the old
    enclosure's upper end was 0 < 2^-60 (and its lower end 0 > −2^-60 on the mirrored case)."""
    a = np.array([2.0 ** -60, -(2.0 ** -60)])
    err = np.full(2, 1.0 + 2.0 ** -52)
    n_hi = np.array([-(1.0 + 2.0 ** -52), 0.0])
    n_lo = np.array([0.0, 1.0 + 2.0 ** -52])
    assert _enclosure_misses(a, err, n_lo, n_hi) == []
    with np.errstate(invalid="ignore", over="ignore"):
        s_lo, s_hi = sampling._score_bounds(a, err)
        lo, hi = sampling._round_out(s_lo + n_lo, s_hi + n_hi)
    assert hi[0] > 0 and lo[1] < 0


def test_score_bounds_enclose_on_random_extreme_inputs():
    """Enclosure property of _score_bounds + _round_out against Fractions: scores and errors from 5e-324 to
    DBL_MAX (either much larger than the other), noise bounds chosen to cancel the float bounds to near 0
    (the worst case for a relative widening), plus ±inf / −inf-below-DBL_MAX conventions."""
    rng = np.random.default_rng(2122)
    n = 3000
    mag = lambda e: np.ldexp(rng.uniform(1, 2, n), e)   # noqa: E731
    a = mag(rng.integers(-1074, 1023, n)) * rng.choice([-1.0, 1.0], n)
    err = mag(rng.integers(-1074, 1023, n))
    small = rng.random(n) < 0.5                         # half the errors far above |a| (and vice versa)
    with np.errstate(over="ignore"):
        err[small] = np.abs(a[small]) * np.ldexp(1.0, rng.integers(20, 80, small.sum()))
    err = np.minimum(err, sampling._DBL_MAX / 4)
    with np.errstate(over="ignore"):
        base_lo, base_hi = a - err, a + err
    jitter = np.ldexp(1.0, rng.integers(-1074, 0, n)) * rng.choice([-1.0, 0.0, 1.0], n)
    n_lo = -base_lo + jitter
    n_hi = -base_hi - jitter
    a[:10] = -np.inf
    err[10:15] = np.inf
    assert _enclosure_misses(a, err, n_lo, n_hi) == []


# ---------------------------------------------------------------------------------------------
# issue 22 item 1: the peeled pick's fallback lowers the levels instead of scanning all n
# ---------------------------------------------------------------------------------------------
def _peel_stats(monkeypatch):
    stats = {"refined": 0, "full": 0, "examined": 0}
    monkeypatch.setattr(sampling._peel, "_PEEL_STATS", stats)
    return stats


def _pair_law(a, noise, first_min=0.02):
    """Exact law of 2 peeled picks as bins i·n + j, for the first picks of probability >= first_min; the
    other first picks are one bin, n²."""
    probs = {"exponential": dpselect.permute_and_flip_probabilities,
             "laplace": lambda v, epsilon, sensitivity: dpselect.report_noisy_max_probabilities(
                 v, epsilon=epsilon, sensitivity=sensitivity, noise="laplace")}[noise]
    n = a.size
    p1 = probs(a, epsilon=2.0, sensitivity=1.0)        # scores a = ε u / (2Δ) with ε = 2, Δ = 1
    exact = np.zeros(n * n + 1)
    firsts = np.flatnonzero(p1 >= first_min)
    for i in firsts.tolist():
        rest = np.delete(np.arange(n), i)
        exact[i * n + rest] = p1[i] * probs(a[rest], epsilon=2.0, sensitivity=1.0)
    exact[n * n] = 1.0 - p1[firsts].sum()
    return exact, firsts


@pytest.mark.parametrize("noise,shift,mark_min", [("exponential", 3.0, 256), ("laplace", 8.0, 256),
                                                   ("exponential", 8.0, 2)])
def test_peeled_fallback_by_lowered_levels_is_the_peeling_law(monkeypatch, freq, noise, shift, mark_min):
    """Every pick that falls back (raised water level: the head and revealed values stay below the walls)
    is finished by _peel_lowered; its picks follow the exact law of 2 peeled picks (χ² over the pairs).
    mark_min = 2: the lowering gives up part-way (cap n/16 = 6 marks) and the scan of all candidates
    finishes with the words drawn so far, at the lowered levels: the same law."""
    stats = _peel_stats(monkeypatch)
    monkeypatch.setattr(sampling._peel, "_PEEL_MARK_MIN", mark_min)
    g = np.random.default_rng(2)
    a = np.concatenate(([3.0, 2.6, 2.2, 2.0], g.normal(size=96) * 0.5))
    ex = lambda r: Fraction(float(a[r]))  # noqa: E731
    rng = np.random.default_rng(int(shift) + mark_min)
    draws = np.array([sampling._noisy_top_k_peeled(a, None, 2, rng, noise=noise, exact_score=ex, level_shift=shift)
                      for _ in range(1500)])
    assert (draws[:, 0] != draws[:, 1]).all()
    exact, firsts = _pair_law(a, noise)
    assert firsts.size >= 4
    n = a.size
    freq(np.where(np.isin(draws[:, 0], firsts), draws[:, 0] * n + draws[:, 1], n * n), exact)
    assert stats["refined"] > 500
    if mark_min == 2:
        assert stats["full"] > 50      # the part-way give-up was exercised
    else:
        assert stats["full"] == 0


@pytest.mark.parametrize("noise", ["exponential", "laplace"])
def test_peeled_fallback_examines_a_few_candidates_not_n(monkeypatch, noise):
    """At n = 400,000 with the water level raised so that most picks fall back, no pick scans the candidates:
    _fallback_bits (the words of every tail candidate) is never called, and the candidates examined per
    fallback pick are a few dozen (the old fallback examined n)."""
    stats = _peel_stats(monkeypatch)
    calls = []
    monkeypatch.setattr(sampling._peel, "_fallback_bits", lambda *args: calls.append(1))
    n = 400_000
    a = np.random.default_rng(5).normal(size=n)
    ex = lambda r: Fraction(float(a[r]))  # noqa: E731
    for s in range(4):
        out = sampling._noisy_top_k_peeled(a, None, 10, np.random.default_rng(s), noise=noise, exact_score=ex,
                                           level_shift=4.0)
        assert len(set(out.tolist())) == 10
    assert calls == [] and stats["full"] == 0
    assert stats["refined"] >= 20
    assert stats["examined"] / stats["refined"] < 200      # vs n = 400,000 per fallback before


def test_peeled_picks_without_fallback_are_unchanged(monkeypatch):
    """Same seeds, same picks: a draw in which no pick falls back is identical with the lowered-levels
    fallback and with the previous scan of all candidates (the fallback changes only the draws it finishes)."""
    stats = _peel_stats(monkeypatch)
    n = 20_000
    a = np.random.default_rng(8).normal(size=n)
    ex = lambda r: Fraction(float(a[r]))  # noqa: E731
    same = fell = 0
    for noise in ("exponential", "laplace"):
        for s in range(30):
            before = stats["refined"]
            new = sampling._noisy_top_k_peeled(a, None, 10, np.random.default_rng(s), noise=noise, exact_score=ex,
                                               level_shift=1.0)
            monkeypatch.setattr(sampling._peel, "_PEEL_FULL_FALLBACK", True)
            old = sampling._noisy_top_k_peeled(a, None, 10, np.random.default_rng(s), noise=noise, exact_score=ex,
                                               level_shift=1.0)
            monkeypatch.setattr(sampling._peel, "_PEEL_FULL_FALLBACK", False)
            if stats["refined"] == before:
                assert new.tolist() == old.tolist()
                same += 1
            else:
                fell += 1
    assert same >= 10 and fell >= 5
