"""Small exact selections keep their seeded outputs and their random stream: 2,000 seeded draws per selector at
n = 20 and n = 100 (and ties, and k = 3), with the generator's next word, against digests recorded before the
small-call fast path existed."""
from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest

import dpselect

SELECTORS = {
    "exponential": lambda u, g, k: dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, k=k, rng=g),
    "permute_and_flip": lambda u, g, k: dpselect.permute_and_flip(u, epsilon=1.0, sensitivity=1.0, k=k, rng=g),
    "report_noisy_max": lambda u, g, k: dpselect.report_noisy_max(u, epsilon=1.0, sensitivity=1.0, k=k, rng=g,
                                                                  noise="laplace"),
}

DIGESTS = {
    ("exponential", 20): "829135e238a73c22",
    ("exponential", 100): "dafcbc2d78cde4fe",
    ("permute_and_flip", 20): "2978866be124b868",
    ("permute_and_flip", 100): "d948a38764f21d4a",
    ("report_noisy_max", 20): "0876ae2156aacf0c",
    ("report_noisy_max", 100): "d948a38764f21d4a",   # Laplace's top is Exponential − ln 2 above U = 1/2: same picks
}


def _digest(name: str, n: int) -> str:
    r = np.random.default_rng(n)
    h = hashlib.sha256()
    for u, k, draws in ((r.random(n) * 10.0, None, 2000), (r.integers(0, 4, n).astype(float), None, 200),
                        (r.random(n) * 1e6, None, 200), (r.random(n) * 3.0, 3, 200)):
        g = np.random.default_rng(7)
        out = np.asarray([SELECTORS[name](u, g, k) for _ in range(draws)], dtype=np.int64)
        h.update(out.tobytes())
        h.update(int(g.integers(1 << 62)).to_bytes(8, "little"))   # the stream: the same words consumed
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(SELECTORS))
@pytest.mark.parametrize("n", [20, 100])
def test_seeded_draws_unchanged(name: str, n: int) -> None:
    assert _digest(name, n) == DIGESTS[name, n]


class _Scripted:
    """A Generator whose first draw has word 0 replaced by ``w0`` and word 1 by word 0 (``tie``)."""

    def __init__(self, seed: int, w0: int | None, tie: bool) -> None:
        self.g, self.w0, self.tie, self.first = np.random.default_rng(seed), w0, tie, True

    def integers(self, *args, **kwargs):
        out = self.g.integers(*args, **kwargs)
        if self.first:
            self.first = False
            if self.w0 is not None:
                out[0] = self.w0
            if self.tie:
                out[1] = out[0]
        return out


def _tail_digest(noise: str) -> str:
    from fractions import Fraction

    from dpselect.sampling import noisy_top_k

    h = hashlib.sha256()
    for n in (20, 100):
        a = np.linspace(0.0, 3.0, n)
        a[1] = a[0] = 3.0
        for seed in range(20):
            for w0, tie in ((5, False), ((1 << 64) - 7, False), (None, True)):
                g = _Scripted(seed, w0, tie)
                for k in (1, 3):
                    out = noisy_top_k(a, None, k=k, rng=g, noise=noise,
                                      exact_score=lambda r: Fraction(float(a[r])))
                    h.update(np.asarray(out, dtype=np.int64).tobytes())
                    g.first = True
                h.update(int(g.g.integers(1 << 62)).to_bytes(8, "little"))
    return h.hexdigest()[:16]


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_words_the_float_values_cannot_settle_go_to_the_exact_stages(noise: str) -> None:
    # a word in a tail (U < 2^-20 or > 1 − 2^-20) or two equal scores with equal words: the exact stages take
    # the words already drawn and draw only their own refinement bits (digests recorded before the fast path)
    assert _tail_digest(noise) == {"gumbel": "0b573563edcba9c8", "exponential": "6d08536d109f555a",
                                  "laplace": "aa4f028077ad9095"}[noise]


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64,
                                           np.random.MT19937])
def test_words_are_the_generators_full_range_integers(bit_generator) -> None:
    # the raw-output shortcut gives the words, and leaves the state, of integers(0, 2^64 − 1) exactly
    from dpselect._exact_random import U64_MAX, words

    g1, g2 = np.random.Generator(bit_generator(5)), np.random.Generator(bit_generator(5))
    for n in (1, 3, 20, 100):
        w = words(g1, n)
        assert w.dtype == np.uint64
        assert w.tolist() == g2.integers(0, U64_MAX, size=n, dtype=np.uint64, endpoint=True).tolist()
    g1.random(3), g2.random(3)
    assert g1.integers(1 << 62) == g2.integers(1 << 62)


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_bulk_top_answers_only_beyond_four_error_bounds(noise: str) -> None:
    # equal words: the noisy values differ by the score gap alone; 1e-12 is inside 4e(x) (~5e-10), 1e-6 beyond
    from dpselect.sampling._topk import _bulk_top

    w = np.full(4, 3 << 62, dtype=np.uint64)
    for k in (1, 3):
        assert _bulk_top(np.array([0.0, 1e-12, -1.0, -2.0]), w, k, noise) is None
        assert _bulk_top(np.array([0.0, 1e-6, -1.0, -2.0]), w, k, noise).tolist() == [1, 0, 2][:k]
    tail = w.copy()
    tail[3] = 5   # a word outside the bulk: never answered here
    assert _bulk_top(np.array([0.0, 1e-6, -1.0, -2.0]), tail, 1, noise) is None
    with warnings.catch_warnings():   # scores below −DBL_MAX (−inf) go to the exact stages, silently
        warnings.simplefilter("error")
        assert _bulk_top(np.array([0.0, -np.inf, -np.inf, -np.inf]), w, 1, noise) is None
        assert _bulk_top(np.array([0.0, -1.0, -np.inf, -np.inf]), w, 3, noise) is None
