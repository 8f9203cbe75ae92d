"""method="joint": JointExp (Gillenwater, Joseph & Kulesza, ICML 2021), sampled exactly.

The mechanism. With q_1 < ... < q_m (distinct, sorted), target ranks τ_i = round(2·q_i·n)/2 (the half-integer
grid of :mod:`._single`), τ_0 = 0, τ_(m+1) = n, gaps g_i = τ_i − τ_(i−1) >= 0, and o_0 = lo, o_(m+1) = hi,
the utility of a sorted vector lo <= o_1 <= ... <= o_m <= hi is

    u(o) = −Σ_{i=1}^{m+1} |#{x : o_(i−1) <= x < o_i} − g_i|      (the last gap closed at hi: [o_m, hi])

and the release has density ∝ exp(ε·u(o)/(2Δu)), Δu = 2, on that region (Lebesgue measure). Δu = 2 under
replace-one (n public): write R(v) = #{x < v}; a gap count is R(o_i) − R(o_(i−1)), and replacing x by y
changes R by −1 exactly on (x, y] (x < y), a contiguous block of the sorted o's, so exactly two gap counts
change, by 1 each (checked by brute force in tests/test_quantiles.py). The release is ε-bounded-range.

The sampler. The distinct values cut [lo, hi] into k intervals I_j = [z_j, z_(j+1)) of positive length with
R_j records below. Put output i in interval a_i (a non-decreasing path); then
u = −Σ |R_(a_i) − R_(a_(i−1)) − g_i| (R_(a_0) = 0, R_(a_(m+1)) = n), and the region of sorted vectors with
that path has volume ∏_j |I_j|^(c_j) / c_j! (c_j outputs in I_j: the uniform order statistics). So: draw a
path with probability ∝ w(path) = exp(ε·u/4)·∏_j |I_j|^(c_j)/c_j!, then c_j exact uniforms in each I_j,
sorted. The path is drawn by dynamic programming over states (interval a, run length r of the last outputs
in a): F_t(a, 1) = LSE_{b < a} [G_(t−1)(b) − E|R_a − R_b − g_t|] + log|I_a|, F_t(a, r) = F_(t−1)(a, r − 1)
− E·g_t + log(|I_a|/r), E = ε/4, G = LSE over r. The b-sum splits at R_a − R_b = g_t into a prefix
(of G + E·R) and a window (of G − E·R), both summed from a sparse table of log-sum-exp blocks (a tree of
depth log2 k, so no long running sums): O(k log k) per output,
O(m·k·log k + m²k) in all (PATENT, k = 4,097, m = 9: tens of milliseconds).

Exactness. The DP runs in float64; its path law q(path) is used as a *proposal*: each backward step is an
exact draw (the registry's exact exponential mechanism on the float log-weights ℓ, read as exact
rationals, so q(path) = ∏_s exp(ℓ_s[chosen]) / Σ_b exp(ℓ_s[b]) exactly). The proposed path is accepted with
probability exactly

    w(path) / (q(path) · exp(L̂ + Δ)),

L̂ the float log normaliser and Δ a bound on the accumulated float error, decided by an exact Bernoulli:
U < exp(Y) with Y = log w − log q − L̂ − Δ, first on a float enclosure of Y, and, when that cannot decide
(probability ~1e-9), on a decimal interval enclosure refined until it can. Accepted paths have law
w/Σw exactly, whatever the float errors, as long as Y <= 0 for every path; Y > 0 (the error bound wrong)
is detected and raises rather than bias the law.

Error bound Δ (stated here; the float work is a chain of sums of at most K = k·m terms, LSEs and a few
additions of values of magnitude at most B = the largest |value| met in the DP): every float operation has
relative error <= u = 2^-53 (numpy's exp and log: < 1 ulp, assumed as for libm); an LSE over K terms,
computed as M + log Σ exp(x − M), has absolute error <= u(2·745 + K + 4) + 2u·|result| (terms below e^-745
contribute at most K·2^-1074); a sparse-table range sum is a tree of at most 2·log2(k) + 2 pairwise
log-add-exps of values <= 2B, each adding <= 2u·2B; so one DP step adds at most 8u(B·(log2 k + 4) + K +
1500), and the m + 1 steps telescope into the comparison
of log w − log q with L̂. The backward pass makes at most 2m exact draws (a row by its float LSE over run lengths, then the
run length), each a further LSE. We take Δ = 64·(2m + 2)·u·(B·(log2 k + 8) + K + 2000), eight times that sum
(Δ ≈ 4e-5 on PATENT at ε = 1, m = 9: the acceptance rate is e^(−2Δ) ≈ 1; the measured error of the
proposal there is below 1e-11).
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from .._exact_random import Dec, next_word, uniform_float
from ..registry import get_mechanism
from ._single import intervals, target_twice

__all__: list[str] = []

_U = 2.0 ** -53
#: The largest public bound on the proposal's error Δ (:func:`delta_bound`) a joint release accepts: each
#: proposal is accepted with probability >= e^(−2Δ) >= e^-2, so the expected number of proposals is <= e^2.
#: Beyond it the rejection loop would run for ever in practice (ε = 1e300, or n ≈ 2^45 at ε = 1).
MAX_DELTA = 1.0


def delta_bound(epsilon: float, n: int, m: int) -> float:
    """A public upper bound on :class:`_Problem`'s error bound Δ for n records and m quantiles at ε.

    From the quantities Δ reads (see the module): B <= 2E·n + (m + 1)(746 + ln(m + 1) + ln(n + 2)) (E = ε/4;
    the utility is >= −2n, a log-length lies in [−745, 710], a path's log-volume adds at most m of them and
    −ln m!, and a DP entry sums at most (n + 1)^m paths), k <= n + 1 intervals and K = k·m. A function of ε, n
    and m only (n is public under replace-one, the only model of the joint method), monotone in each."""
    E = epsilon / 4.0
    k = n + 1
    B = 2.0 * E * n + (m + 1) * (746.0 + math.log(m + 1) + math.log(n + 2))
    return 64.0 * (2 * m + 2) * _U * (B * (math.log2(max(k, 2)) + 8) + k * m + 2000)


def check_joint_work(epsilon: float, n: int, m: int) -> None:
    """ValueError (before any charge) when :func:`delta_bound` exceeds :data:`MAX_DELTA`: the exact sampler's
    rejection loop would not end in practice. The message names ε and m (public), not n."""
    if not delta_bound(epsilon, n, m) <= MAX_DELTA:
        raise ValueError(
            f"method='joint' cannot sample at epsilon={epsilon!r} with m={m} quantile(s) on this many records: "
            "its exact sampler's float error grows with ε·n·m (roughly, ε·n·(m + 1)·(log2(n) + 8) must stay "
            "below 1.4e14, see dpselect.quantiles._joint.delta_bound); use method='independent' or "
            "'recursive', or a smaller epsilon")
#: Tests only: skip the float enclosure of the acceptance test and decide with the decimal one.
_FORCE_EXACT = False


def _lse(x: np.ndarray, axis: int | None = None) -> Any:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out.squeeze(axis) if axis is not None else float(out.reshape(()))


def _range_lse_table(x: np.ndarray) -> list[np.ndarray]:
    """Sparse table: level j holds LSE of x[i : i + 2^j] for every i with i + 2^j <= len(x)."""
    table = [x]
    j = 1
    while (1 << j) <= x.size:
        prev = table[-1]
        h = 1 << (j - 1)
        table.append(np.logaddexp(prev[: prev.size - h], prev[h:]))
        j += 1
    return table


def _range_lse(table: list[np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """LSE of x[lo_i : hi_i] for each i (−inf for an empty range), by disjoint power-of-two blocks."""
    res = np.full(lo.shape, -np.inf)
    pos = lo.copy()
    for j in range(len(table) - 1, -1, -1):
        step = 1 << j
        take = (hi - pos) >= step
        if take.any():
            level = table[j]
            idx = np.clip(pos, 0, level.size - 1)
            res = np.where(take, np.logaddexp(res, level[idx]), res)
            pos = pos + take * step
    return res


class _Problem:
    """The intervals, targets and float DP of one joint release."""

    def __init__(self, vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, eps: float, lo: float, hi: float,
                 sensitivity: float = 2.0, factorial: bool = True) -> None:
        self.n = n = int(cnt.sum()) if cnt.size else 0
        iv = intervals(vals, cnt, lo, hi, 0)
        self.lo, self.hi = iv.lo, iv.hi
        self.R = iv.rank.astype(np.int64)
        self.k = k = int(self.lo.size)
        self.m = m = int(len(qs))
        self.T = np.array([0] + [target_twice(float(q), n) for q in qs] + [2 * n], dtype=np.int64)
        self.g2 = np.diff(self.T)                    # 2·g_i, integers >= 0
        self.eps = float(eps)
        self.sensitivity = float(sensitivity)
        self.factorial = factorial
        self.E = self.eps / (2.0 * self.sensitivity)      # the exponent's factor: exp(E·u)
        self.loglen = np.log(self.hi - self.lo)
        self.logr = np.log(np.arange(1, m + 1, dtype=np.float64)) if factorial else np.zeros(m)
        Rf = self.R.astype(np.float64)
        E = self.E
        F: list[np.ndarray] = []
        B = float(np.max(np.abs(self.loglen))) + E * float(n) * 2 + float(self.logr[-1])
        g = self.g2 / 2.0
        f1 = np.full((k, 1), -np.inf)
        f1[:, 0] = -E * np.abs(Rf - g[0]) + self.loglen
        F.append(f1)
        for t in range(1, m):                          # output t + 1 (0-based t)
            prev = F[-1]
            G = _lse(prev, axis=1)
            gt = g[t]
            cur = np.full((k, t + 1), -np.inf)
            # b < a with R_a − R_b >= g_t: −E(R_a − g_t) + [G_b + E·R_b] (a prefix)
            # (ranges by the sparse table, not a running log-cumsum-exp: a tree of depth log2 k keeps the
            # float error O(u·B·log k) where a k-step accumulation could reach O(u·B·k))
            a_idx = np.arange(k)
            p1 = np.minimum(a_idx, np.searchsorted(self.R, self.R - gt, side="right"))
            part1 = _range_lse(_range_lse_table(G + E * Rf), np.zeros(k, dtype=np.int64), p1) - E * (Rf - gt)
            # p1 <= b < a: E(R_a − g_t) + [G_b − E·R_b] (a window)
            part2 = _range_lse(_range_lse_table(G - E * Rf), p1, a_idx) + E * (Rf - gt)
            cur[:, 0] = np.logaddexp(part1, part2) + self.loglen
            cur[:, 1:] = prev - E * gt + self.loglen[:, None] - self.logr[1: t + 1][None, :]
            F.append(cur)
            fin = cur[np.isfinite(cur)]
            B = max(B, float(np.max(np.abs(fin))) if fin.size else 0.0, float(np.max(np.abs(G[np.isfinite(G)]))))
        self.F = F
        self.last = F[-1] - E * np.abs(n - Rf - g[m])[:, None]
        B = max(B, float(np.max(np.abs(self.last[np.isfinite(self.last)]))))
        self.L_hat = _lse(self.last.ravel())
        self.B = B
        K = k * m
        self.Delta = 64.0 * (2 * m + 2) * _U * (B * (math.log2(max(k, 2)) + 8) + K + 2000)
        # the public bound the caller checked (check_joint_work) is above this one: B, k, K are each below theirs

    # -- the proposal ------------------------------------------------------------------------------
    def propose(self, gen: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray], list[int]]:
        """A path (a_1..a_m) from the float DP, with each step's candidate log-weights and the choice."""
        em = get_mechanism("exponential")
        m = self.m
        path = np.empty(m, dtype=np.int64)
        runs = np.empty(m, dtype=np.int64)
        steps: list[np.ndarray] = []
        chosen: list[int] = []

        def draw(logw: np.ndarray) -> int:
            ok = np.flatnonzero(np.isfinite(logw))
            sub = logw[ok]
            steps.append(sub)
            i = int(em.select(sub, epsilon=2.0, sensitivity=1.0, rng=gen))   # ∝ exp(sub), exactly
            chosen.append(i)
            return int(ok[i])

        def draw2(logw: np.ndarray) -> tuple[int, int]:
            """(row, column) in two exact draws: the row by its float LSE, then the column in the row."""
            row = draw(_lse(logw, axis=1))
            return row, draw(logw[row])

        a, r = draw2(self.last)
        path[m - 1], runs[m - 1] = a, r + 1
        E, Rf = self.E, self.R.astype(np.float64)
        for t in range(m - 1, 0, -1):                 # choose output t (0-based t − 1) given output t + 1
            a, r = int(path[t]), int(runs[t])
            if r >= 2:
                path[t - 1], runs[t - 1] = a, r - 1
                continue
            prev = self.F[t - 1]                      # shape (k, t)
            w = prev[:a] - E * np.abs(Rf[a] - Rf[:a] - self.g2[t] / 2.0)[:, None]
            b, rb = draw2(w)
            path[t - 1], runs[t - 1] = b, rb + 1
        return path, steps, chosen

    # -- the exact target weight -------------------------------------------------------------------
    def utility2(self, path: np.ndarray) -> int:
        """2·u(path), an integer."""
        R2 = np.concatenate(([0], 2 * self.R[path], [2 * self.n]))
        return -int(np.abs(np.diff(R2) - self.g2).sum())

    def log_volume_terms(self, path: np.ndarray) -> list[tuple[int, int]]:
        """(interval j, c_j) for the intervals of the path."""
        js, cs = np.unique(path, return_counts=True)
        return [(int(j), int(c)) for j, c in zip(js, cs)]

    def accept(self, path: np.ndarray, steps: list[np.ndarray], chosen: list[int], gen: np.random.Generator) -> bool:
        """Exactly Bernoulli(w(path) / (q(path)·exp(L̂ + Δ)))."""
        u2 = self.utility2(path)
        vol = self.log_volume_terms(path)
        # float enclosure of Y
        terms = [self.E * u2 / 2.0]
        for j, c in vol:
            terms.append(c * float(self.loglen[j]))
            if self.factorial:
                terms.append(-math.lgamma(c + 1))
        lse_err = 0.0
        for s, i in zip(steps, chosen):
            terms.append(-float(s[i]))
            v = _lse(s)
            terms.append(v)
            lse_err += _U * (2 * 745 + s.size + 4 + 2 * abs(v))
        terms += [-self.L_hat, -self.Delta]
        y = math.fsum(terms)
        err = 64 * _U * (sum(abs(t) for t in terms) + 100) + 8 * lse_err
        w1 = next_word(gen)
        if not _FORCE_EXACT:
            top = math.exp(y + err) * (1 + 8 * _U)
            bot = math.exp(y - err) * (1 - 8 * _U)
            if (w1 + 1) / 2.0 ** 64 <= bot:
                return True
            if w1 / 2.0 ** 64 >= top:
                return False
        return self._accept_exact(u2, vol, steps, chosen, w1, gen)

    def _y_enclosure(self, prec: int, u2: int, vol: list[tuple[int, int]], steps: list[np.ndarray],
                     chosen: list[int]) -> tuple[Decimal, Decimal]:
        D = Dec(prec)
        # exact rational part: E·u − Σ ℓ_s[chosen] − L̂ − Δ, with E = ε/(2Δu) read exactly
        E = Fraction(self.eps) / (2 * Fraction(self.sensitivity))
        rational = E * u2 / 2 - sum(Fraction(float(s[i])) for s, i in zip(steps, chosen))
        rational -= Fraction(self.L_hat) + Fraction(self.Delta)
        y = D.frac(rational)
        for j, c in vol:
            ln_len = D.ln(*D.frac(Fraction(float(self.hi[j])) - Fraction(float(self.lo[j]))))
            y = D.add(y, (D.down(D.ctx.multiply(ln_len[0], c)), D.up(D.ctx.multiply(ln_len[1], c))))
            if self.factorial:
                y = D.add(y, D.neg(D.ln(*D.frac(Fraction(math.factorial(c))))))
        cut = int(prec * 2.31) + 60           # terms below e^-cut (relative) are bounded, not summed
        for s in steps:
            M = float(np.max(s))
            keep = (s - M) >= -cut
            total: tuple[Decimal, Decimal] = (Decimal(0), Decimal(0))
            for v in s[keep]:
                e = D.exp(*D.frac(Fraction(float(v)) - Fraction(M)))
                total = D.add(total, e)
            rest = int((~keep).sum())
            if rest:
                bound = D.exp(*D.frac(Fraction(1 - cut)))[1]     # each left-out term < e^(1 − cut)
                total = (total[0], D.up(D.ctx.add(total[1], D.ctx.multiply(bound, rest))))
            ln_total = D.ln(*total)
            y = D.add(y, D.add(ln_total, D.frac(Fraction(M))))
        return y

    def _accept_exact(self, u2: int, vol: list[tuple[int, int]], steps: list[np.ndarray], chosen: list[int],
                      w1: int, gen: np.random.Generator) -> bool:
        prec, num, nbits = 40, w1, 64
        while True:
            ylo, yhi = self._y_enclosure(prec, u2, vol, steps, chosen)
            if ylo > 0:
                # (the log acceptance itself is not printed: it is a function of the records)
                raise RuntimeError("joint quantiles: the float error bound of the DP proposal was exceeded; "
                                   "refusing to sample a biased law")
            D = Dec(prec)
            elo, ehi = D.exp(ylo, yhi)
            p_lo, p_hi = Fraction(elo), Fraction(ehi)
            while True:
                u_lo, u_hi = Fraction(num, 1 << nbits), Fraction(num + 1, 1 << nbits)
                if u_hi <= p_lo:
                    return True
                if u_lo >= min(p_hi, Fraction(1)):
                    return False
                if p_hi - p_lo > u_hi - u_lo:
                    break
                num, nbits = (num << 64) | next_word(gen), nbits + 64
            prec *= 2

    # -- the release -------------------------------------------------------------------------------
    def sample(self, gen: np.random.Generator) -> np.ndarray:
        while True:
            path, steps, chosen = self.propose(gen)
            if self.accept(path, steps, chosen, gen):
                break
        out = np.empty(self.m, dtype=np.float64)
        i = 0
        for j, c in self.log_volume_terms(path):
            lo, hi = float(self.lo[j]), float(self.hi[j])
            u = sorted(uniform_float(lo, hi, lambda: next_word(gen)) for _ in range(c))
            out[i: i + c] = u
            i += c
        return out


def joint_quantiles(vals: np.ndarray, cnt: np.ndarray, qs: np.ndarray, *, epsilon: float, lo: float, hi: float,
                    gen: np.random.Generator) -> np.ndarray:
    """One value per entry of ``qs`` (distinct, sorted), sorted: the JointExp release at ε (ε-BR)."""
    if not hi > lo:
        return np.full(len(qs), float(lo))
    return _Problem(vals, cnt, qs, epsilon, lo, hi).sample(gen)

