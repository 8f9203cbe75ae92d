"""Issue 10, part 3: the optimal binary extension keeps its tails (log space), verifies privacy on the
log-probabilities and samples exactly from them."""
import math
import time
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpselect.binary import (BinaryMechanism, DatasetGraph, DPPair, induced_bounds, optimal_extension,
                             optimal_mechanism, optimal_probability)
from dpselect.binary import _logspace as ls
from dpselect._exact_random import less_than_exp
from dpselect.binary import bernoulli_log
from dpselect.binary.extension import resolve_privacy

getcontext().prec = 80
MASK = (1 << 64) - 1


# --------------------------------------------------------------------------- exact reference
def ref_chain(a0, epsilons, delta=0.0):
    """Iterate U_e exactly-enough (80 digits) from Pr[M = j] = a0 along edges with the given epsilons.

    Carries (A, C) = (a, 1 - a) separately, so tails far below 1e-80 keep their relative precision:
    the multiplicative piece a' = e^eps a + delta (where 1 - a' is never tiny), the complement piece
    1 - a' = e^-eps (1 - a - delta), clamped at a' = 1.
    """
    A = Decimal(a0)
    C = 1 - A
    D = Decimal(delta)
    out = [(A, C)]
    for eps in epsilons:
        e = Decimal(eps).exp()
        if C <= D and D > 0:
            A, C = Decimal(1), Decimal(0)
        elif e * A + D <= 1 - (C - D) / e:
            A = e * A + D
            C = 1 - A
        else:
            C = (C - D) / e
            A = 1 - C
        out.append((A, C))
    return out


def dlog(x):
    return -math.inf if x == 0 else float(x.ln())


def dlog1m(c):
    """log(1 - c) to full relative precision also for c below the working precision."""
    if c < Decimal("1e-30"):
        return float(-(c + c * c / 2))
    return float((1 - c).ln())


def rel(a, b):
    return abs(a - b) / abs(b)


def path_setup(n=2000, eps=0.5):
    h = n // 2
    E = [(i, i + 1) for i in range(n - 1)]
    T = {i: int(i < h) for i in range(n)}
    a = math.exp(eps) / (1 + math.exp(eps))          # balanced boundary value
    return E, T, {h - 1: a, h: 1 - a}, h, a


# --------------------------------------------------------------------------- the path of issue 10
def test_path_2000_tails_are_exact_on_both_sides():
    eps = 0.5
    E, T, partial, h, a = path_setup(2000, eps)
    mech = optimal_mechanism(E, T, partial, epsilon=eps)
    lp = mech.log_prob
    # T = 0 side: Pr[M = 0] = U^d(1 - (1 - a)), Pr[M = 1] = (1 - a) e^{-eps d} (tau = 0 at the balanced value)
    right = ref_chain(Decimal(1) - Decimal(1 - a), [eps] * (h - 1))
    left = ref_chain(a, [eps] * (h - 1))               # T = 1 side, outward from h - 1
    worst_float = worst_log = 0.0
    tiny = 0
    for d in range(h):
        for v, (A, C), small in ((h + d, right[d], 1), (h - 1 - d, left[d], 0)):
            # A = Pr[M = T(v)], C = Pr[M = 1 - T(v)] = the small side
            assert C > 0
            got_small = mech.probability(v, small)
            assert 0.0 < got_small
            worst_float = max(worst_float, rel(got_small, float(C)))
            worst_log = max(worst_log, rel(lp[v, small], dlog(C)), rel(lp[v, 1 - small], dlog1m(C)))
            tiny += C < Decimal(2) ** -53
    assert tiny == 2 * 928                     # where the float extension returned exactly 0 and 1
    assert worst_float <= 1e-9 and worst_log <= 1e-12, (worst_float, worst_log)
    assert np.all(np.isfinite(lp)) and np.all(lp < 0)          # no probability is exactly 0 or 1
    # the float output: Pr[M = 1] is positive and exact where it is small
    ext = optimal_extension(E, T, partial, epsilon=eps)
    p1 = np.array([ext[i] for i in range(2000)])
    assert p1.min() > 0
    exact = np.array([float(right[i - h][1]) for i in range(h, 2000)])
    assert np.max(np.abs(p1[h:] - exact) / exact) <= 1e-9
    assert p1[1999] == pytest.approx((1 - a) * math.exp(-eps * 999), rel=1e-12)
    # the log output, dict form, and the heap reference agree
    logs = optimal_extension(E, T, partial, epsilon=eps, output="log")
    assert logs[1999] == tuple(lp[1999])
    heap = optimal_mechanism(E, T, partial, epsilon=eps, method="heap").log_prob
    np.testing.assert_allclose(heap, lp, rtol=1e-13)
    assert mech.violations() == []


def test_path_heterogeneous_epsilon_and_delta_against_exact_iteration():
    rng = np.random.default_rng(11)
    n, h = 600, 300
    E = [(i, i + 1) for i in range(n - 1)]
    T = {i: int(i < h) for i in range(n)}
    eps = rng.uniform(0.2, 1.5, n - 1)
    # heterogeneous pure DP: Pr[M = 1] = 0.05 at h - 1 (true 1: multiplicative piece first), 0.04 at h
    partial = {h - 1: 0.05, h: 0.04}
    mech = optimal_mechanism(E, T, partial, epsilon=dict(zip(E, eps.tolist())))
    lp = mech.log_prob
    left = ref_chain(0.05, eps[:h - 1][::-1])          # edges h-2..0, walking left from h - 1
    right = ref_chain(Decimal(1) - Decimal(0.04), eps[h:])
    for d in range(h):
        for v, (A, C), T_v in ((h - 1 - d, left[d], 1), (h + d, right[d], 0)):
            assert rel(lp[v, T_v], dlog(A) if A < Decimal("0.5") else dlog1m(C)) <= 1e-12
            assert rel(lp[v, 1 - T_v], dlog(C)) <= 1e-12
            assert rel(mech.probability(v, 1 - T_v), float(C)) <= 1e-9
    assert mech.violations() == []
    # (eps, delta): the tail reaches 1 exactly after finitely many steps (the true optimum), not before
    delta = 1e-9
    mech = optimal_mechanism(E, T, partial, epsilon=0.5, delta=delta)
    lp = mech.log_prob
    right = ref_chain(Decimal(1) - Decimal(0.04), [0.5] * (h - 1), delta)
    for d in range(1, h):
        A, C = right[d]
        prevC = right[d - 1][1]
        v = h + d
        if C == 0:
            assert lp[v, 1] == -math.inf and lp[v, 0] == 0.0      # Pr[M = 0] = 1 exactly: so is the optimum
        elif (prevC - Decimal(delta)) / prevC > Decimal("1e-3"):  # away from the clamp's cancellation
            assert rel(lp[v, 1], dlog(C)) <= 1e-12
            assert rel(mech.probability(v, 1), float(C)) <= 1e-9
    assert sum(right[d][1] == 0 for d in range(h)) == int(np.sum(lp[h:, 1] == -np.inf)) > 0
    assert mech.violations() == []


def test_logspace_map_matches_exact_arithmetic():
    rng = np.random.default_rng(3)
    hi = rng.choice([-1, 1], 400) * 10 ** rng.uniform(-3, 3, 400)
    for eps, delta in ((0.5, 0.0), (2.0, 0.0), (0.3, 1e-6), (1.0, 0.05)):
        out, lo = ls.key_upper(hi, np.zeros_like(hi), eps, delta)
        for h, o, q in zip(hi.tolist(), out.tolist(), lo.tolist()):
            L = Decimal(h)
            a = 1 / (1 + (-L).exp())
            c = 1 / (1 + L.exp())
            e, D = Decimal(eps).exp(), Decimal(delta)
            a1, c2 = e * a + D, (c - D) / e
            if a1 <= 1 - c2:
                ref = (a1 / (1 - a1)).ln()
                cond = (c + (e - 1) * a + D) / (1 - a1)     # 1 - a' = c - (e^eps - 1) a - delta
            elif c2 <= 0:
                assert o == math.inf
                continue
            else:
                ref = ((1 - c2) / c2).ln()
                cond = (c + D) / (c - D)                    # 1 - a' = e^-eps (c - delta)
            # a few ulps of the result, times the condition number of the subtraction in 1 - a'
            tol = Decimal("4e-16") * max(1, abs(ref)) * max(1, cond)
            assert abs(Decimal(o) + Decimal(q) - ref) <= tol, (h, eps, delta)
            assert ls.key_upper_scalar(h, 0.0, eps, delta)[0] == pytest.approx(o, rel=1e-15, abs=1e-15)


def test_grid_million_vertices_far_from_fixed_ones():
    eps, W = 0.5, 1000
    idx = np.arange(W * W).reshape(W, W)                      # vertex = (row y, column x)
    horiz = np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], axis=1)
    vert = np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], axis=1)
    edges = np.concatenate([horiz, vert])                     # an (E, 2) integer array (issue 13)
    col = np.tile(np.arange(W), W)
    T = (col <= 2).astype(np.int8)                            # a thin strip of 1s; most vertices far away
    fixed = idx[:, 2]
    a = 0.6                                                    # Pr[M = 1] on the fixed column
    t0 = time.perf_counter()
    mech = optimal_mechanism(edges, T, dict.fromkeys(fixed.tolist(), a), epsilon=eps)
    elapsed = time.perf_counter() - t0
    lp = mech.log_prob
    assert mech.graph.n == W * W and mech.graph.n_edges == 2 * W * (W - 1)
    assert np.all(np.isfinite(lp)) and np.all(lp < 0)          # nothing exactly 0 or 1
    # Pr[M = 0] = U^d(1 - a) at distance d = x - 2 on the 0 side; Pr[M = 1] = U^d(a) on the 1 side
    ref0 = ref_chain(Decimal(1) - Decimal(a), [eps] * (W - 3))
    ref1 = ref_chain(a, [eps] * 2)
    exp_small = np.array([dlog(ref1[2 - x][1]) if x <= 2 else dlog(ref0[x - 2][1]) for x in range(W)])
    exp_big = np.array([dlog1m(ref1[2 - x][1]) if x <= 2 else dlog1m(ref0[x - 2][1]) for x in range(W)])
    small = np.where(T == 1, lp[:, 0], lp[:, 1])
    big = np.where(T == 1, lp[:, 1], lp[:, 0])
    assert np.max(np.abs(small - exp_small[col]) / np.abs(exp_small[col])) <= 1e-12
    assert np.max(np.abs(big - exp_big[col]) / np.abs(exp_big[col])) <= 1e-12
    assert exp_small[-1] / math.log(10) < -200                 # Pr[M = 1] ~ 1e-217 at the far edge
    assert mech.prob_one[idx[500, -1]] == pytest.approx(math.exp(exp_small[-1]), rel=1e-9)
    assert elapsed < 60                                        # seconds; typically a few


# --------------------------------------------------------------------------- privacy verification
def test_verifier_flags_the_float_extension_and_other_mutations():
    eps = 0.5
    E, T, partial, h, a = path_setup(400, eps)
    mech = optimal_mechanism(E, T, partial, epsilon=eps)
    g, lp = mech.graph, mech.log_prob
    assert mech.violations() == []
    # (1) what the float extension returned: 1 - (1 - tiny) = 0 beyond ~2^-53 -> infinite privacy loss
    p1_float = 1.0 - np.exp(lp[:, 0])                          # "1 - Pr[M = T]" on the 0 side
    p1_float[:h] = mech.prob_one[:h]
    broken = BinaryMechanism(g, mech.true_values, p1_float, DPPair(epsilon=eps))
    assert broken.prob_one.min() == 0.0
    first_zero = int(np.flatnonzero(p1_float == 0.0)[0])
    # Pr[M(fz - 1) = 1] > 0 = Pr[M(fz) = 1]: reported as (fz, fz - 1), fz - 1 too likely given fz
    assert (first_zero, first_zero - 1) in broken.violations()
    assert len(broken.violations()) > 20           # and the cancellation in 1 - (1 - p) breaks many more
    # the old float check (absolute slack 1e-9 on probabilities) passed it
    px, py = p1_float[:-1], p1_float[1:]
    assert np.all(py <= np.minimum(np.exp(eps) * px, 1 - (1 - px) / np.exp(eps)) + 1e-9)
    # (2) the right mechanism at a smaller budget
    assert BinaryMechanism(g, mech.true_values, pair=DPPair(epsilon=eps / 2), log_prob=lp).violations()
    # (3) one vertex's small side pushed up by e^{3 eps}: exactly its two edges, in the right direction
    bad = lp.copy()
    v = 350
    bad[v, 1] += 3 * eps
    bad[v, 0] = math.log1p(-math.exp(bad[v, 1]))
    assert sorted(BinaryMechanism(g, mech.true_values, pair=DPPair(epsilon=eps), log_prob=bad).violations()) == \
        [(v - 1, v), (v + 1, v)]
    # (4) a tiny relative change below tol passes, one above it fails
    ok = lp.copy()
    ok[h + 1, 1] -= 1e-12
    assert BinaryMechanism(g, mech.true_values, pair=DPPair(epsilon=eps), log_prob=ok).violations() == []
    # (5) delta: an (eps, delta) mechanism is not pure-DP, and its check uses delta
    md = optimal_mechanism(E, T, partial, epsilon=eps, delta=1e-6)
    assert md.violations() == []
    assert BinaryMechanism(g, md.true_values, pair=DPPair(epsilon=eps), log_prob=md.log_prob).violations()
    # (6) heterogeneous: per-edge epsilons are read per edge
    eps_e = {e: (0.5 if i % 2 else 0.7) for i, e in enumerate(E)}
    mh = optimal_mechanism(E, T, partial, epsilon=eps_e)
    assert mh.violations() == []
    shrunk = resolve_privacy(g, {e: x * 0.9 for e, x in eps_e.items()})
    mixed = BinaryMechanism(g, mh.true_values, pair=shrunk, log_prob=mh.log_prob)
    assert mixed.violations()
    one_edge = resolve_privacy(g, {e: (x * 0.9 if e == (300, 301) else x) for e, x in eps_e.items()})
    assert BinaryMechanism(g, mh.true_values, pair=one_edge, log_prob=mh.log_prob).violations() == [(301, 300)]


# --------------------------------------------------------------------------- exact Bernoulli sampling
def test_bernoulli_frequencies_chi_square():
    ps = np.array([0.5, 0.3, 0.1, 0.01, 0.999])
    n = 40_000
    draws = bernoulli_log(np.repeat(np.log(ps), n), rng=12345).reshape(ps.size, n)
    ones = draws.sum(axis=1)
    stat = float(np.sum((ones - n * ps) ** 2 / (n * ps) + ((n - ones) - n * (1 - ps)) ** 2 / (n * (1 - ps))))
    assert stats.chi2.sf(stat, df=ps.size) > 1e-6, (ones, stat)
    assert bernoulli_log(np.full(1000, -1e-20), rng=1).sum() == 1000     # p = 1 - 1e-20
    assert bernoulli_log(np.full(1000, -800.0), rng=1).sum() == 0         # p = e^-800
    assert bernoulli_log([0.0, -np.inf], rng=1).tolist() == [1, 0]
    a = bernoulli_log(np.log(np.full(200, 0.4)), rng=np.random.default_rng(5))
    b = bernoulli_log(np.log(np.full(200, 0.4)), rng=np.random.default_rng(5))
    assert a.tolist() == b.tolist()
    with pytest.raises(ValueError, match="log_p"):
        bernoulli_log([0.5])


@pytest.mark.parametrize("bad", ["a", [0.0, "b"], None, [[0.0], [0.0, -1.0]], 1 + 2j])
def test_bernoulli_bad_log_p_named(bad):
    with pytest.raises(TypeError, match=r"log_p must be a float or an array of floats .* got "):
        bernoulli_log(bad, rng=0)
    with pytest.raises(ValueError, match=r"log_p must be log-probabilities \(<= 0, not NaN\), got nan"):
        bernoulli_log([-1.0, float("nan")], rng=0)


class Script:
    """A scripted bit source: fixed 64-bit words, counting how many were read."""

    def __init__(self, words):
        self.words, self.used = list(words), 0

    def __call__(self, size):
        out = np.array(self.words[self.used:self.used + size], dtype=np.uint64)
        self.used += size
        return out


def p_bits(log_p, nbits):
    """floor(exp(log_p) 2^nbits), exactly (the float log_p read as a rational)."""
    c = getcontext().copy()
    c.prec = nbits // 3 + 40
    return int(c.exp(Decimal(log_p)) * (Decimal(2) ** nbits))


@pytest.mark.parametrize("log_p", [math.log(0.3), -1e-12, -5.0, -40.0, -700.0, -800.0])
def test_bernoulli_refinement_against_exact_comparisons(log_p):
    for nw in (1, 2, 3, 4):          # U shares its first 64 (nw - 1) bits with p, then decides on word nw
        K = p_bits(log_p, 64 * nw)
        head = [(K >> (64 * (nw - 1 - i))) & MASK for i in range(nw - 1)]
        last = K & MASK
        for delta_w, expect in ((-1, 1), (+1, 0)):
            w = last + delta_w
            if not 0 <= w <= MASK:
                continue
            words = head + [w] + [0] * 4
            src = Script(words)
            got = bernoulli_log([log_p], bits=src)[0]
            # exact: U lies in [W / 2^{64 nw}, (W + 1) / 2^{64 nw}) with W the scripted prefix
            W = int("".join(f"{x:064b}" for x in head + [w]), 2)
            p_lo = Fraction(K, 1 << (64 * nw))
            assert (Fraction(W + 1, 1 << (64 * nw)) <= p_lo) == bool(expect)
            assert got == expect, (log_p, nw, delta_w)
            assert src.used == nw                                  # refined exactly as far as needed
    # the float fast path decides clear cases with one word
    p = math.exp(log_p)
    if p > 1e-12:
        k_yes = int(p * 2 ** 64 * (1 - 1e-9))
        k_no = math.ceil(p * 2 ** 64 * (1 + 1e-9))
        for k, expect in ((k_yes, 1), (k_no, 0)):
            if k > MASK:
                continue
            src = Script([k, 0, 0])
            assert bernoulli_log([log_p], bits=src)[0] == expect and src.used == 1


def test_exact_comparison_below_the_float_range():
    # p = e^-800 ~ 2^-1154.2 underflows float64; U = 0.000...(1152 zero bits) then a word below p's bits
    log_p = -800.0
    K = p_bits(log_p, 64 * 19)
    assert K >> 64 == 0 and K > 0                              # the first 18 words of p are zero
    res, used = less_than_exp(log_p, 0, Script([0] * 17 + [K - 1]))
    assert (res, used) == (1, 19)
    res, used = less_than_exp(log_p, 0, Script([0] * 17 + [K + 1]))
    assert (res, used) == (0, 19)


def test_mechanism_samples_from_the_log_form():
    eps = 0.5
    E, T, partial, h, a = path_setup(200, eps)
    mech = optimal_mechanism(E, T, partial, epsilon=eps)
    # a vertex with a moderate minority probability: chi-square against the exact law
    v = h + 3
    p1 = mech.probability(v, 1)
    draws = mech.sample_many([v] * 50_000, rng=2024)
    ones = int(draws.sum())
    stat = (ones - 50_000 * p1) ** 2 / (50_000 * p1 * (1 - p1))
    assert stats.chi2.sf(stat, df=1) > 1e-6
    # far tail: Pr[M = 1] ~ 1e-22 is never drawn here, but a scripted uniform below it would draw it
    far = 199
    assert mech.log_probability(far, 1) < math.log(1e-21)
    assert mech.sample_many([far] * 1000, rng=1).sum() == 0
    assert mech.sample(0, rng=3) in (0, 1)


# --------------------------------------------------------------------------- API details
def test_outputs_probability_bounds_and_input_rules():
    eps = 0.5
    E, T, partial, h, a = path_setup(200, eps)
    mech = optimal_mechanism(E, T, partial, epsilon=eps)
    lp0, lp1 = optimal_probability(E, T, partial, 199, epsilon=eps, check=False, output="log")
    assert (lp0, lp1) == pytest.approx(tuple(mech.log_prob[199]), rel=1e-14)
    assert optimal_probability(E, T, partial, 199, epsilon=eps) == mech.prob_one[199]
    assert optimal_probability(E, T, partial, h, epsilon=eps) == partial[h]       # given values unchanged
    b = induced_bounds(E, partial, epsilon=eps, colour=0, output="log")    # bounds Pr[M = 0] on the 0 side
    assert b[199] == pytest.approx(mech.log_prob[199, 0], rel=1e-14)
    assert induced_bounds(E, partial, epsilon=eps, colour=1)[0] == pytest.approx(mech.probability(0, 1),
                                                                                   rel=1e-14)
    assert mech.probability(0, 0) < 1e-20 and mech.prob_one[0] == 1.0   # float Pr[M = 1] rounds; the log form not
    with pytest.raises(ValueError, match="output"):
        optimal_extension(E, T, partial, epsilon=eps, output="odds")
    with pytest.raises(ValueError, match="tol"):
        mech.violations(tol=-1.0)
    with pytest.raises(ValueError, match="answer"):
        mech.log_probability(0, 2)
    # issue 11: a string epsilon that is not an attribute names epsilon and suggests a number
    with pytest.raises(ValueError, match=r"epsilon='1'.*epsilon=1\.0"):
        optimal_extension(E, T, partial, epsilon="1")
    # issue 13: an (E, 2) integer array is an edge list
    arr = np.array(E)
    assert optimal_extension(arr, T, partial, epsilon=eps) == optimal_extension(E, T, partial, epsilon=eps)
    with pytest.raises(TypeError, match=r"\(E, 2\) integer array"):
        optimal_extension(arr.astype(float), T, partial, epsilon=eps)
    with pytest.raises(ValueError, match=">= 0"):
        optimal_extension(np.array([[0, -1]]), {0: 1, -1: 1}, {}, epsilon=eps)
    # a mechanism from floats still works (prob_one), and from logs with checks
    g = DatasetGraph.from_arrays(3, [0, 1], [1, 2])
    with pytest.raises(ValueError, match="log_prob"):
        BinaryMechanism(g, [0, 0, 1], pair=DPPair(epsilon=1.0), log_prob=np.zeros((3, 3)))
    with pytest.raises(TypeError, match="prob_one"):
        BinaryMechanism(g, [0, 0, 1])


@pytest.mark.parametrize("hetero", [False, True])
def test_shift_regime_finish_matches_step_by_step_label_setting(hetero):
    # labels beyond log-odds 40 are finished by one shortest-path run; the heap reference applies U per arc
    from dpselect.binary.extension import _label_setting_batch, _label_setting_heap

    rng = np.random.default_rng(21)
    n = 3000
    u = rng.integers(0, n, 4 * n)
    v = (u + rng.integers(1, 6, u.size)) % n
    g = DatasetGraph.from_arrays(n, u, v)
    if hetero:
        eps = rng.uniform(0.2, 1.2, g.n_edges)
        eps[rng.random(g.n_edges) < 0.02] = 0.0                 # some pairs must be answered alike
        pair = resolve_privacy(g, eps)
    else:
        pair = DPPair(epsilon=0.7)
    src = np.array([0, 1500, 2200])
    keys = pair.source_keys(np.array([0.3, 0.05, 0.6]), 0)      # answer 0: labels grow towards 1
    lb, lob, ob, pb, rounds = _label_setting_batch(g, pair, src, keys)
    lh, loh, oh, ph, pops = _label_setting_heap(g, pair, src, keys)
    assert rounds < pops / 3                                    # the batch did finish by shortest paths
    assert np.nanmax(lb) > 100
    fin = np.isfinite(lh)
    np.testing.assert_array_equal(np.isfinite(lb), fin)
    np.testing.assert_allclose(lb[fin] + lob[fin], lh[fin] + loh[fin], rtol=1e-13, atol=1e-13)
    # every label's origin is a fixed vertex reached by following the predecessors
    for w in rng.choice(np.flatnonzero(fin), 50, replace=False).tolist():
        x = w
        while pb[x] >= 0:
            x = int(pb[x])
        assert x in src and ob[w] in (-1, x)
