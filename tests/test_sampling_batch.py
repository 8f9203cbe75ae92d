"""Exact batches vectorised across draws (issue 38 item 2): ``noisy_top_k_batch`` answers most rows from one
float evaluation per candidate and sends the rest to the exact path of one draw, with the same words in the
same order, so a seeded batch gives the same picks as before (pinned digests) and has the same law (χ²)."""
import hashlib
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect.sampling import _batch, noisy_top_k_batch

# ---------------------------------------------------------------------------------------------
# the same seeded output as the exact path alone (main 546e316, before the vectorisation)
# ---------------------------------------------------------------------------------------------


def _digest(out):
    return hashlib.sha256(np.ascontiguousarray(out, dtype="<i8").tobytes()).hexdigest()[:16]


class TailWords:
    """A word source (``integers`` only, as dpselect.dask replays words) putting words in the tail cells."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)
        self.count = 0

    def integers(self, low, high, size=None, dtype=None, endpoint=False):
        w = self.g.integers(low, high, size=size, dtype=dtype, endpoint=endpoint)
        pos = np.arange(self.count, self.count + size)
        self.count += size
        w[pos % 37 == 0] >>= np.uint64(21)                      # U < 2^-43: lower tail
        up = pos % 37 == 18
        w[up] = ~(w[up] >> np.uint64(21))                       # U > 1 - 2^-43: upper tail
        return w


class TwinWords:
    """A word source giving candidate 3 the first word of candidate 5 in every 5th row of 12 words: with their
    exact tie (``_A``) those rows need more words, drawn in row order, to break it."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)

    def integers(self, low, high, size=None, dtype=None, endpoint=False):
        w = self.g.integers(low, high, size=size, dtype=dtype, endpoint=endpoint)
        if size >= 12:
            rows = w[:size - size % 12].reshape(-1, 12)
            rows[::5, 3] = rows[::5, 5]
        return w


_API = {"gumbel": dpselect.exponential, "exponential": dpselect.permute_and_flip,
        "laplace": lambda u, **kw: dpselect.report_noisy_max(u, noise="laplace", **kw)}
_U = np.random.default_rng(2024).normal(size=100) * 3
_A = np.round(np.random.default_rng(7).normal(size=12), 1)
_A[3] = _A[5] = _A.max()      # an exact tie at the top


def _case(name):
    kind, noise, kk = name.split("-")
    k = int(kk[1:])
    if kind == "api":
        return _API[noise](_U, epsilon=1.0, sensitivity=1.0, k=None if k == 1 else k, size=3000, rng=5)
    if kind == "damp":     # per-candidate score errors (dampened scores)
        sf = dpselect.SensitivityFunction(lambda t: np.minimum(1.0, np.linspace(0.1, 0.9, 100) * (t + 1)), 1.0)
        return dpselect.local_dampening(_U, epsilon=2.0, sensitivity_function=sf, k=None if k == 1 else k, size=1000,
                                        rng=8)
    if kind == "weights":  # a base measure: the exact path for every row
        return dpselect.exponential(_U, epsilon=1.0, sensitivity=1.0, base_measure=np.linspace(0.5, 2.0, 100),
                                    k=None if k == 1 else k, size=500, rng=6)
    peel = noise != "gumbel" and k > 1
    a = _A * 1e17 if kind == "huge" else _A   # huge ε/Δ: the float error of the scores dwarfs the noise

    def ex(r):
        return Fraction(float(a[r]))

    rng = {"err": lambda: np.random.default_rng(9), "tail": lambda: TailWords(3), "twin": lambda: TwinWords(5),
           "mt": lambda: np.random.Generator(np.random.MT19937(4)), "huge": lambda: np.random.default_rng(10)}[kind]()
    err = np.full(12, 0.05) if kind == "err" else None
    return noisy_top_k_batch(a, err, k, 200 if kind in ("err", "huge") else 400, rng, noise=noise, exact_score=ex,
                             peel=peel)


PINNED = {
    "api-gumbel-k1": "1417bf8cdc396b52",
    "api-gumbel-k3": "b40adc608e424bdb",
    "api-exponential-k1": "bd3ffe662f48d6b0",
    "api-exponential-k3": "e367ced6ea72de36",
    "api-laplace-k1": "6e7a4dd7bcccdd04",
    "api-laplace-k3": "e367ced6ea72de36",
    "err-gumbel-k1": "f5002fd249e48f7c",
    "err-gumbel-k3": "e7da35ccb8366c12",
    "err-exponential-k1": "45ed13b3d9e88473",
    "err-exponential-k3": "6cb37cc877035333",
    "err-laplace-k1": "8dbbbb3d981b650e",
    "err-laplace-k3": "63834184de4d1f52",
    "tail-gumbel-k1": "265746ac387feeef",
    "tail-gumbel-k3": "37612c29a3c49ff7",
    "tail-exponential-k1": "31e89f811e9ff58c",
    "tail-exponential-k3": "7205b1139f902991",
    "tail-laplace-k1": "31e89f811e9ff58c",
    "tail-laplace-k3": "c7a2ddec87e51af9",
    "twin-gumbel-k1": "4e5f9c74b8cb7f6b",
    "twin-gumbel-k3": "da87741cb0bf2490",
    "twin-exponential-k1": "6c1bbfb3d6845599",
    "twin-exponential-k3": "356c9dc8cce10736",
    "twin-laplace-k1": "f0435f996a7e4985",
    "twin-laplace-k3": "4bf6e7e7dc54eed6",
    "mt-gumbel-k1": "970c7b3e3c63c8fb",
    "mt-gumbel-k3": "93c439d8a7c49dc5",
    "mt-exponential-k1": "ff77f964a8282fc6",
    "mt-exponential-k3": "1bd446382ca71b40",
    "mt-laplace-k1": "d937ff2e523743fb",
    "mt-laplace-k3": "089085f260239321",
    "huge-gumbel-k1": "105651bd7deaf0e8",
    "huge-gumbel-k3": "c75c4ab3900959d5",
    "huge-exponential-k1": "105651bd7deaf0e8",
    "huge-exponential-k3": "e902b03d8773e760",
    "huge-laplace-k1": "105651bd7deaf0e8",
    "huge-laplace-k3": "e902b03d8773e760",
    "damp-gumbel-k1": "145d6f91799b12d7",
    "damp-gumbel-k3": "6b02a0fad43d90a9",
    "weights-gumbel-k1": "d6ba1d38e524f99f",
    "weights-gumbel-k3": "2a2b03f9c3de864a",
}


@pytest.mark.parametrize("block", [None, 40])
@pytest.mark.parametrize("name", sorted(PINNED))
def test_seeded_batch_is_unchanged(monkeypatch, name, block):
    """Every noise and k, through the selectors and the sampler (score errors, tail words, MT19937, huge ε/Δ
    with exact ties): the picks of the exact path alone, also in blocks of 40 words (one row at a time)."""
    if block is not None:
        monkeypatch.setattr(_batch, "_BLOCK_WORDS", block)
    assert _digest(_case(name)) == PINNED[name]


# ---------------------------------------------------------------------------------------------
# the fast rows are the exact path's rows: random scores, errors and scales, stream included
# ---------------------------------------------------------------------------------------------
def _exact_path_only(monkeypatch):
    """Make every row take the exact path (what the batch ran before): one draw of size × n words a round."""
    def every_row(a, extra, want, size, rng, noise, taken, out, col):
        n = a.shape[0]
        return np.arange(size), _batch._bits64(rng, size * n).reshape(size, n)
    monkeypatch.setattr(_batch, "_fast_round", every_row)


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_fast_rows_match_the_exact_path(monkeypatch, noise):
    base = np.random.default_rng(31)
    fast_rows = 0
    for trial in range(30):
        n = int(base.integers(2, 160))
        k = int(base.integers(1, min(n, 4) + 1))
        peel = noise != "gumbel" and k > 1
        scale = [1.0, 0.05, 1e3, 1e13, 1e16][trial % 5]
        a = np.round(base.normal(size=n) * 3, 1) * scale       # ties, near-ties at the float error, none
        a += [0.0, 1e3, 1e6, 1e12, 1e14][trial // 5 % 5]   # large |a| near the top: float-level near-ties
        err = None if trial % 3 else base.random(n) * [0.0, 1e-9, 0.3][trial % 9 // 3]
        seed = int(base.integers(2 ** 31))
        size = int(base.integers(1, 90))

        def run():
            g = np.random.default_rng(seed)
            out = noisy_top_k_batch(a, err, k, size, g, noise=noise, exact_score=lambda r: Fraction(float(a[r])),
                                    peel=peel)
            return out, g.bit_generator.state

        calls = []
        orig = _batch._exact_rows
        with monkeypatch.context() as mp:
            mp.setattr(_batch, "_exact_rows", lambda *args: calls.append(args[3].size) or orig(*args))
            got, state = run()
        fast_rows += size * (k if peel else 1) - sum(calls)
        with monkeypatch.context() as mp:
            _exact_path_only(mp)
            want, want_state = run()
        assert got.tolist() == want.tolist() and state == want_state, (trial, n, k, scale)
    assert fast_rows > 600   # the comparison is not vacuous: most rows were answered by the fast pass


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
@pytest.mark.parametrize("wide", [False, True])
def test_certification_boundary(monkeypatch, noise, wide):
    """Two candidates whose float noisy values (as the fast pass evaluates them) are c·unit apart, c swept
    across the float error of the scores (relative model) or across per-candidate errors, exact scores at the
    edge of their bounds: the fast pass answers only what the exact path answers, from the same words."""
    from dpselect.sampling._topk import _bulk_noise_into
    answered = {True: 0, False: 0}
    seed = 0
    for scale in (1.0, 1e3, 1e8, 1e12):
        unit = 1e-13 * scale + 1e-9 if wide else 1e-15 * scale + 1e-13
        for c in np.geomspace(0.5, 50.0, 30):
            seed += 1
            m = np.random.default_rng(seed).bit_generator.random_raw(5).reshape(1, 5)
            g = np.empty((1, 5))
            _bulk_noise_into(m, np.zeros(5), noise, g)
            a = np.full(5, scale - 100.0)
            a[0] = scale
            a[1] = scale + (g[0, 0] - g[0, 1]) + c * unit
            err = np.full(5, unit) if wide else None
            # exact scores at the edge of the error bound, against candidate 1: it wins for c > ~2 only
            bound = [Fraction(unit) if wide else Fraction(1e-15) * abs(Fraction(float(v))) for v in a]
            exact = [Fraction(float(a[r])) + (-1 if r == 1 else 1) * Fraction(99, 100) * bound[r] for r in range(5)]

            def run():
                rng = np.random.default_rng(seed)
                out = noisy_top_k_batch(a, err, 1, 1, rng, noise=noise, exact_score=lambda r: exact[r])
                return out.tolist(), rng.bit_generator.state

            sizes = []
            orig = _batch._exact_rows
            with monkeypatch.context() as mp:
                mp.setattr(_batch, "_exact_rows", lambda *args: sizes.append(args[3].size) or orig(*args))
                got = run()
            with monkeypatch.context() as mp:
                _exact_path_only(mp)
                assert run() == got, (scale, c)
            answered[not sizes] += 1
    assert answered[True] > 10 and answered[False] > 10, answered


def test_rows_the_float_pass_cannot_prove_take_the_exact_path(monkeypatch):
    """Fallback forced: an exact tie at 5e16 (score error 50 >> the noise) sends every row to the exact path;
    words in the tail cells send their rows; the picks still follow the law (exact tie: a fair coin)."""
    sizes = []
    orig = _batch._exact_rows
    monkeypatch.setattr(_batch, "_exact_rows", lambda *args: sizes.append(args[3].size) or orig(*args))
    a = np.array([5e16, 5e16, 5e16 - 4096.0, 0.0])
    out = noisy_top_k_batch(a, None, 1, 300, np.random.default_rng(2), exact_score=lambda r: Fraction(float(a[r])))
    assert sizes == [300]
    c = np.bincount(out[:, 0], minlength=4)
    assert c[2] == c[3] == 0 and abs(c[0] - 150) < 45      # binomial(300, 1/2): 5.2 standard deviations
    sizes.clear()
    b = np.array([0.0, 3.0, 1.0, 2.5])
    tw = TailWords(1)
    pos = np.arange(74 * 4)
    tails = np.unique(pos[(pos % 37 == 0) | (pos % 37 == 18)] // 4)   # rows with a tail word
    out = noisy_top_k_batch(b, None, 1, 74, tw, exact_score=lambda r: Fraction(float(b[r])))
    assert tails.size == 16 and sizes == [16]
    assert out.shape == (74, 1) and tw.count == 74 * 4   # no refinement: the tail cells' enclosures decide


# ---------------------------------------------------------------------------------------------
# the law of the batch (χ²): every noise, k = 1 and k = 3, fast pass and fallback
# ---------------------------------------------------------------------------------------------
_PROBS = {"gumbel": dpselect.exponential_probabilities, "exponential": dpselect.permute_and_flip_probabilities,
          "laplace": lambda u, **kw: dpselect.report_noisy_max_probabilities(u, noise="laplace", **kw)}


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_batch_law_one_pick(freq, noise):
    u = np.round(np.random.default_rng(4).normal(size=30) * 2, 1)
    freq(_API[noise](u, epsilon=1.0, sensitivity=1.0, size=60_000, rng=12), _PROBS[noise](u, epsilon=1.0, sensitivity=1.0))


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_batch_law_three_picks(freq, noise):
    """k = 3 picks (ε/3 each): the Gumbel top 3 of one draw, peeled picks with fresh noise for the others;
    the ordered triple's law is the product of three one-pick laws on the remaining candidates."""
    u, eps = np.array([0.0, 1.0, 2.5, 2.5, 4.0, -1.0]), 3.0
    n = u.size
    exact = np.zeros(n ** 3)
    p1 = _PROBS[noise](u, epsilon=eps / 3, sensitivity=1.0)
    for i in range(n):
        r1 = [j for j in range(n) if j != i]
        p2 = _PROBS[noise](u[r1], epsilon=eps / 3, sensitivity=1.0)
        for jj, j in enumerate(r1):
            r2 = [h for h in r1 if h != j]
            p3 = _PROBS[noise](u[r2], epsilon=eps / 3, sensitivity=1.0)
            for hh, h in enumerate(r2):
                exact[(i * n + j) * n + h] = p1[i] * p2[jj] * p3[hh]
    picks = _API[noise](u, epsilon=eps, sensitivity=1.0, k=3, size=60_000, rng=13)
    freq((picks[:, 0] * n + picks[:, 1]) * n + picks[:, 2], exact)


@pytest.mark.parametrize("noise", ["gumbel", "exponential", "laplace"])
def test_batch_law_with_fallback(monkeypatch, freq, noise):
    """Score errors of 0.02 on exact scores a (unit noise; ε = 2, Δ = 1 in the selectors' scaling): near-ties
    go to the exact refinement, the rest to the fast pass; together the exact law of a."""
    sizes = []
    orig = _batch._exact_rows
    monkeypatch.setattr(_batch, "_exact_rows", lambda *args: sizes.append(args[3].size) or orig(*args))
    a = np.array([0.0, 1.0, 1.0, 1.5, -1.0])
    out = noisy_top_k_batch(a, 0.02, 1, 20_000, np.random.default_rng(14), noise=noise,
                            exact_score=lambda r: Fraction(float(a[r])))
    assert 100 < sum(sizes) < 2000
    freq(out[:, 0], _PROBS[noise](a, epsilon=2.0, sensitivity=1.0))
