"""dpselect._exact_random: the one implementation of the exact-randomness primitives (issue 23 item 5).

Exact checks: the bit conventions pinned word for word, Bernoulli and uniform laws by enumerating the
leading bits of the uniform (each branch's probability is a power of two), decisions against exact
rationals, and the callers sharing these very functions."""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest

from dpselect import _exact_random as er
from dpselect import sampling
from dpselect.quantiles import _median as median
from dpselect.binary import bernoulli
from dpselect.dask import _select

M64 = 1 << 64


class Words:
    """A word source that returns scripted 64-bit words (both call styles of the module)."""

    def __init__(self, seq):
        self.seq = list(seq)
        self.used = 0

    def next(self) -> int:
        self.used += 1
        return self.seq.pop(0)

    def integers(self, low, high=None, size=None, dtype=None, endpoint=False):
        return np.asarray([self.next() for _ in range(size)], dtype=np.uint64)

    def draw(self, size: int) -> np.ndarray:
        return self.integers(0, size=size)


def test_one_implementation_shared_by_the_callers():
    assert sampling._bits64 is er.words
    assert sampling.laplace_below is er.laplace_below
    assert sampling._Dec is er.Dec
    assert bernoulli.exact_less_than_exp is er.less_than_exp
    assert bernoulli._words_from is er.words_drawer
    assert _select._draw is er.words
    assert median._bernoulli is er.bernoulli_rational_bytes
    assert median._uniform_float is er.uniform_float_bytes


def test_words_convention_is_one_raw_output_per_word():
    assert er.words(np.random.default_rng(0), 3).tolist() == [11749869230777074271, 4976686463289251617,
                                                             755828109848996024]
    raw = np.random.PCG64(np.random.SeedSequence(0)).random_raw(3).tolist()
    assert er.words(np.random.default_rng(0), 3).tolist() == raw
    g = np.random.Generator(np.random.MT19937(1))
    assert er.next_word(g) == 0x3D9CE975E6A50CD2
    draw = er.words_drawer(np.random.default_rng(0))
    assert draw(2).tolist() == raw[:2]


def test_bytes_convention_pinned_and_where_it_differs_from_words():
    g = np.random.default_rng(0)
    assert [er.next_word_bytes(g) for _ in range(2)] == [11749869230777074271, 4976686463289251617]
    # MT19937: halves swapped; a pending 32-bit half: shifted. Merging the conventions would change outputs.
    assert er.next_word_bytes(np.random.Generator(np.random.MT19937(1))) == 0xE6A50CD23D9CE975
    a, b = np.random.default_rng(0), np.random.default_rng(0)
    a.integers(0, 2 ** 32, dtype=np.uint32)
    b.integers(0, 2 ** 32, dtype=np.uint32)
    assert er.next_word_bytes(a) != er.next_word(b)


@pytest.mark.parametrize("p", [Fraction(3, 8), Fraction(1, 2), Fraction(0), Fraction(1), Fraction(5, 4)])
def test_bernoulli_rational_dyadic_law_by_enumerating_leading_bits(p):
    # p = c/8: the first 3 bits of U decide; each pattern has probability 1/8, whatever the other bits
    trues = 0
    for top in range(8):
        for low in (1, 12345, (1 << 61) - 1):     # (low = 0 can sit on p's expansion: a second word)
            w = Words([(top << 61) | low])
            out = er.bernoulli_rational(p, w.next)
            assert w.used == (0 if p >= 1 else 1)
            trues += out
    assert Fraction(trues, 24) == min(p, Fraction(1))


def test_bernoulli_rational_non_dyadic_is_u_below_p():
    p = Fraction(1, 3)
    digit = (M64 - 1) // 3                     # 0x5555...: every 64-bit digit of 1/3
    assert er.bernoulli_rational(p, Words([digit - 1]).next) is True
    assert er.bernoulli_rational(p, Words([digit + 1]).next) is False
    w = Words([digit, digit, digit - 1])
    assert er.bernoulli_rational(p, w.next) is True and w.used == 3
    # P(True) = Σ_k P(first k − 1 words equal the digits) P(k-th below) = (digit/2^64) / (1 − 2^-64) = 1/3
    assert Fraction(digit, M64) / (1 - Fraction(1, M64)) == p
    # random words: the answer is U < p with U's consumed words read exactly
    g = np.random.default_rng(3)
    for _ in range(200):
        q = Fraction(int(g.integers(1, 1000)), int(g.integers(1000, 2000)))
        w = Words([int(x) for x in er.words(g, 4)])
        seq = list(w.seq)
        out = er.bernoulli_rational(q, w.next)
        u = sum(Fraction(x, M64 ** (i + 1)) for i, x in enumerate(seq[:w.used]))
        assert out == (u + Fraction(1, M64 ** w.used) <= q) and (out or u >= q)


def test_bernoulli_rational_bytes_seeded():
    g = np.random.default_rng(5)
    draws = [er.bernoulli_rational_bytes(Fraction(1, 3), g) for _ in range(12)]
    g2 = np.random.default_rng(5)
    assert draws == [er.next_word_bytes(g2) < (M64 - 1) // 3 for _ in range(12)]


def test_uniform_float_law_by_enumerating_leading_bits():
    # [1, 1 + 4 ulp): rounding cells of 1, 1+u, 1+2u, 1+3u, 1+4u cover 1/8, 2/8, 2/8, 2/8, 1/8 of it; the
    # first 3 bits of U put it in one eighth, which rounds to one float (boundaries have measure zero)
    u = math.ulp(1.0)
    lo, hi = 1.0, 1.0 + 4 * u
    got = {}
    for top in range(8):
        for low in (1, 777, 1 << 60):
            w = Words([(top << 61) | low])
            f = er.uniform_float(lo, hi, w.next)
            assert w.used == 1
            got.setdefault(f, set()).add(top)
    assert {f: len(t) for f, t in got.items()} == {1.0: 1, 1.0 + u: 2, 1.0 + 2 * u: 2, 1.0 + 3 * u: 2,
                                                   1.0 + 4 * u: 1}
    # the first word on the tie 1 + u/2 (U in [1/8, 1/8 + 2^-64)): the cell's left end rounds to 1 (ties to
    # even), the rest to 1 + u, so a second word decides; just below the tie one word does
    w = Words([1 << 61, 5])
    assert er.uniform_float(lo, hi, w.next) == 1.0 + u and w.used == 2
    w = Words([(1 << 61) - 1])
    assert er.uniform_float(lo, hi, w.next) == 1.0 and w.used == 1


def test_uniform_float_bytes_seeded_matches_generic():
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert er.uniform_float_bytes(-2.0, 3.5, g1) == er.uniform_float(-2.0, 3.5, lambda: er.next_word_bytes(g2))


def test_less_than_exp_is_u_below_exp_exactly():
    ctx = decimal.Context(prec=200)
    g = np.random.default_rng(11)
    for log_p in (-1e-20, -0.5, math.log(0.5), -3.0, -745.0, -1e4):
        p = Fraction(ctx.exp(decimal.Decimal(log_p)))      # to 200 digits: far inside the decisions below
        for _ in range(30):
            w = Words([int(x) for x in er.words(g, 30)])
            seq = list(w.seq)
            first = w.next()
            out, used = er.less_than_exp(log_p, first, w.draw)
            u = sum(Fraction(x, M64 ** (i + 1)) for i, x in enumerate(seq[:used]))
            assert out == int(u < p) and (u + Fraction(1, M64 ** used) <= p or u >= p)
    assert er.less_than_exp(0.0, 5, Words([]).draw) == (1, 1)
    assert er.less_than_exp(-math.inf, 5, Words([]).draw) == (0, 1)
    # p = e^-1e4 ~ 1e-4343: U = 0 to 14,500 bits (227 zero words) is below it, U >= 2^-64 is not
    zeros = Words([0] * 300)
    assert er.less_than_exp(-1e4, 0, zeros.draw)[0] == 1 and zeros.used > 220
    assert er.less_than_exp(-1e4, 1, Words([]).draw) == (0, 1)


def test_laplace_below_exact_decisions():
    # F(0) = 1/2: the first bit of U (a first word next to 1/2 needs a second one: the enclosure of F is
    # widened by an ulp of its ~120 digits)
    assert er.laplace_below(0.0, 1.0, Words([(1 << 63) - 2])) is True
    assert er.laplace_below(0.0, 1.0, Words([(1 << 63) + 1])) is False
    assert er.laplace_below(0.0, 1.0, Words([(1 << 63) - 1, 0])) is True
    assert er.laplace_below(0.0, 1.0, Words([1 << 63, 1])) is False
    assert er.laplace_below(Fraction(0), 3.0, Words([M64 - 1])) is False
    # F(-800) = e^-800 / 2 ~ 1e-348: still possible (U = 0 to 19 words), and impossible once U >= 2^-64
    assert er.laplace_below(-800.0, 1.0, Words([0] * 40)) is True
    assert er.laplace_below(-800.0, 1.0, Words([1])) is False
    # F(800) = 1 − e^-800 / 2: False only for U within ~1e-348 of 1
    assert er.laplace_below(800.0, 1.0, Words([M64 - 2])) is True
    assert er.laplace_below(800.0, 1.0, Words([M64 - 1] * 40)) is False
    # the scale divides exactly: x / scale = 1 read as rationals (0.1 / 0.1), F(1) = 1 − e^-1/2 = 0.8160...
    f1 = 1 - math.exp(-1) / 2
    assert er.laplace_below(0.1, 0.1, Words([int(f1 * 2 ** 64) - 2 ** 20])) is True
    assert er.laplace_below(0.1, 0.1, Words([int(f1 * 2 ** 64) + 2 ** 20])) is False


def test_laplace_below_seeded_law():
    # P(Laplace(1) < 0.5) = 1 − e^-0.5 / 2 = 0.6967: 4000 seeded draws within 5 sigma
    g = np.random.default_rng(2)
    k = sum(er.laplace_below(0.5, 1.0, g) for _ in range(4000))
    p = 1 - math.exp(-0.5) / 2
    assert abs(k - 4000 * p) < 5 * math.sqrt(4000 * p * (1 - p))
