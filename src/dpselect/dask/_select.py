"""Private selection over dask arrays and DataFrames: a noisy top-k per partition, then an exact reduce.

The law of every selector here is the in-memory selector's (:mod:`dpselect.mechanisms`), exactly.

Design
------
Every selector is a noisy maximum: output the index of the largest ``a_r + N_r`` (top-k: the k largest
in order; exponential / Laplace noise top-k: k rounds with fresh noise on the remaining candidates),
with N_r = F⁻¹(U_r) for a uniform U_r whose bits are drawn lazily (:mod:`dpselect.sampling`).

1. **Partition step** (on the workers, one task per block/partition). The block's scores and their
   rigorous error bounds are formed exactly as in memory; each candidate gets its *first 64-bit word*
   of U_r. Float enclosures of ``a_r + N_r`` over the 64-bit cell (the sampler's stages 1 and 2, no
   refinement) keep every candidate whose upper bound reaches the k-th largest lower bound of the
   block: a **superset of the block's true top-k**, usually exactly k candidates. Nothing is decided
   here, so no extra bits are drawn on the workers.
2. **Reduce** (on the client, over the union of the shortlists: about k per partition). The exact
   sampler :func:`dpselect.sampling.noisy_top_k` runs on the union with the carried first words as
   its first 64 bits; where two candidates of different partitions are too close for 64 bits, it
   refines them exactly (decimal arithmetic, more bits from the caller's generator) as it would in
   memory.

Why this is exact: the global top-k is contained in the union, since a candidate among the k largest
overall is among the k largest of its block and hence in that block's superset; the reduce computes
the exact top-k of the infinitely precise values ``a_r + F⁻¹(U_r)`` of that union, where every U_r is
a uniform whose first word was drawn on a worker and whose further bits (if any) are fresh, independent
bits: the same random variable. Peeled top-k (exponential / Laplace noise, k rounds of fresh noise):
each block draws k word vectors, and in round j keeps the superset of its top j (at most j − 1 of its
candidates were removed before round j, so its best remaining one is among its top j); the reduce
peels round by round on those supersets.

Random bits. With a ``PCG64`` / ``PCG64DXSM`` generator (``rng=`` an int seed, ``None``, or such a
Generator) and a dask array of known chunk sizes, candidate r takes word r of the generator's stream
(the block starting at offset o advances a copy of the generator by o), then the reduce continues the
stream after word n (k·n for peeled top-k): **the same bits as the in-memory selector**, which is
therefore reproduced draw for draw whenever no refinement is needed (the probability of a refinement is
about 1e-14 per draw). Otherwise (DataFrames/Series, whose partition lengths are not known before the
pass, or other bit generators) the partitions draw from independent child streams of a
``SeedSequence`` seeded from the generator: a different stream, the same law.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence, cast

import numpy as np
from numpy.typing import ArrayLike

from .._boundary import charge_selection, topk_budget
from .._exact_random import words
from .._rng import check_rng
from ..accounting.accountant import Accountant
from ..typing import RngLike
from ..vocabulary import selection_result
from .._validation import check_bool, check_choice, check_int, check_k, check_positive
from ..dampening import DEFAULT_MAX_STEPS, check_sensitivity_function, dampen_exact, dampen_with_error
from ..mechanisms import _check_call, _check_copies, _check_weights, scaled_scores
from ..sampling import NOISES, noisy_top_k, shortlist_top_k
from ..sensitivity import SensitivityFunction

__all__ = ["exponential", "permute_and_flip", "report_noisy_max", "local_dampening", "NOISES"]

_OFFSET_BITGENS = (np.random.PCG64, np.random.PCG64DXSM)  # advance(d) skips exactly d 64-bit words


# ---------------------------------------------------------------------------------------------
# random bits
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Streams:
    """Where block p's words come from (picklable: shipped to the workers).

    ``offset``: a copy of a PCG64-family generator advanced to the block's global position (word
    ``round·n + offset + i`` for the block's i-th candidate in round ``round``); ``spawn``: child p of a
    SeedSequence, its rounds drawn one after another.
    """

    mode: str
    bitgen: str = ""
    state: Any = None
    n: int = 0
    entropy: tuple[int, ...] = ()

    def words(self, p: int, offset: int, size: int, rounds: int) -> list[np.ndarray]:
        if self.mode == "offset":
            out = []
            for j in range(rounds):
                bg = getattr(np.random, self.bitgen)()
                bg.state = self.state
                bg.advance(j * self.n + offset)
                out.append(_draw(np.random.Generator(bg), size))
            return out
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(self.entropy), spawn_key=(p,))))
        return [_draw(gen, size) for _ in range(rounds)]


# the sampler's own call (sampling._bits64): one raw 64-bit output per word
_draw = words


def _plan_streams(gen: np.random.Generator, n_known: int | None, rounds: int) -> _Streams:
    bg = gen.bit_generator
    if n_known is not None and isinstance(bg, _OFFSET_BITGENS):
        st = _Streams("offset", type(bg).__name__, bg.state, n_known)
        bg.advance(rounds * n_known)  # the reduce continues the stream after the partitions' words
        return st
    entropy = tuple(int(x) for x in gen.integers(0, 2 ** 63, size=4, dtype=np.int64))
    return _Streams("spawn", entropy=entropy)


class _Replay:
    """A generator whose first ``integers`` call returns given 64-bit words, later calls the real one's.

    :func:`dpselect.sampling.noisy_top_k` draws one 64-bit word per candidate first (its documented
    contract: ``rng`` is anything with the Generator's ``integers``), then 64 more bits at a time for
    the candidates it must refine. Replaying the words drawn on the workers makes it continue exactly
    where the partitions stopped.
    """

    def __init__(self, first: np.ndarray, rest: np.random.Generator):
        self._first: np.ndarray | None = np.asarray(first, dtype=np.uint64)
        self._rest = rest

    def as_generator(self) -> np.random.Generator:
        """Typed as the Generator the sampler expects; it only calls ``integers`` (its documented contract)."""
        return cast(np.random.Generator, self)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        if self._first is not None:
            first, self._first = self._first, None
            if size != first.shape[0] or np.dtype(dtype) != np.uint64:
                raise RuntimeError("dpselect.dask: the exact sampler's first draw is not one 64-bit word per "
                                   "candidate; dpselect.sampling changed its contract")
            return first.copy()
        return self._rest.integers(low, high, size=size, dtype=dtype, endpoint=endpoint)


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------
def _dask_modules() -> tuple[Any, Any]:
    import dask.array as da
    import dask.dataframe as dd

    return da, dd


@dataclass
class _Blocks:
    parts: list[Any]            # Delayed blocks (numpy arrays, pandas Series or DataFrames)
    offsets: list[int] | None   # global offset of each block (dask arrays of known chunks)
    n: int | None               # total number of candidates when known
    labelled: bool              # results are index labels (Series/DataFrame), else int positions
    column: str | None          # DataFrame: the utility column


def _blocks(utilities: Any, utility: str | None, name: str = "utilities") -> _Blocks:
    da, dd = _dask_modules()
    if isinstance(utilities, da.Array):
        if utilities.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {utilities.shape}")
        if utility is not None:
            raise TypeError("utility= names a DataFrame column; a dask array holds the utilities itself")
        chunks = utilities.chunks[0]
        parts = list(utilities.to_delayed().ravel())
        if all(isinstance(c, (int, np.integer)) and not math.isnan(c) for c in chunks):
            offsets = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64)
            return _Blocks(parts, [int(o) for o in offsets[:-1]], int(offsets[-1]), False, None)
        return _Blocks(parts, None, None, False, None)
    if isinstance(utilities, dd.Series):
        if utility is not None:
            raise TypeError("utility= names a DataFrame column; a dask Series holds the utilities itself")
        return _Blocks(list(utilities.to_delayed()), None, None, True, None)
    if isinstance(utilities, dd.DataFrame):
        if utility is None:
            raise TypeError(f"{name} is a dask DataFrame: name its utility column with utility=")
        if utility not in utilities.columns:
            raise ValueError(f"utility={utility!r} is not a column of {name} (columns: {list(utilities.columns)})")
        return _Blocks(list(utilities.to_delayed()), None, None, True, utility)
    raise TypeError(
        f"{name} must be a dask array, a dask Series or a dask DataFrame (with utility=), got "
        f"{type(utilities).__name__}; for in-memory arrays use the selectors of dpselect itself"
    )


def _values(block: Any, column: str | None) -> np.ndarray:
    """The utilities of one block as float64, checked finite like ``check_utilities``."""
    raw = block[column] if column is not None else block
    arr = np.asarray(raw)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"utilities must be real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"utilities must be real, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError("utilities must be 1-D (a block is not)")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        # which candidate, its value and its block's size are private: the message names none of them
        raise ValueError("utilities must be finite (a partition holds NaN or inf)")
    return arr


# ---------------------------------------------------------------------------------------------
# the partition step
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Spec:
    eps: float
    sensitivity: float
    mult: int
    k: int
    noise: str
    peel: bool
    streams: _Streams
    column: str | None
    sf_factory: Callable[[Any], SensitivityFunction] | None = None
    max_steps: int = DEFAULT_MAX_STEPS


def _partition(block: Any, p: int, offset: int, spec: _Spec, w: np.ndarray | None = None) -> dict[str, Any]:
    """One block: its scores, its first words and its shortlists (one per round); ``w`` its base measure."""
    u = _values(block, spec.column)
    n = u.shape[0]
    out: dict[str, Any] = {"p": p, "n": n, "gs": None}
    if n == 0:
        out.update(rows=np.empty(0, np.int64), s=np.empty(0), s_err=None, rounds=[], carry=None, labels=None, w=w)
        return out
    if spec.sf_factory is not None:
        sf = _sf_of(spec.sf_factory, block, n)
        out["gs"] = sf.global_sensitivity
        s, s_err_arr = dampen_with_error(u, sf, max_steps=spec.max_steps)
        s_err: Any = s_err_arr
    else:
        s, s_err = u, 0.0
    with np.errstate(over="ignore", under="ignore"):  # overflow to −inf is "below −DBL_MAX" (handled)
        a, err, _ = scaled_scores(s, s_err, spec.eps, spec.sensitivity, spec.mult)
    rounds = spec.k if spec.peel else 1
    words = spec.streams.words(p, offset, n, rounds)
    lists = []
    for j, m in enumerate(words):
        kk = min(j + 1 if spec.peel else spec.k, n)
        lists.append((shortlist_top_k(a, err, m, kk, spec.noise, weights=w), m))
    rows = np.unique(np.concatenate([idx for idx, _ in lists]))
    out["rows"] = rows
    out["w"] = None if w is None else w[rows]
    out["s"] = s[rows]
    out["s_err"] = None if np.ndim(s_err) == 0 else np.asarray(s_err)[rows]
    out["rounds"] = [(np.searchsorted(rows, idx), m[idx]) for idx, m in lists]
    out["labels"] = np.asarray(block.index[rows]) if hasattr(block, "index") else None
    if spec.sf_factory is None:
        out["carry"] = None
    else:
        out["carry"] = block.iloc[rows] if hasattr(block, "iloc") else np.asarray(block)[rows]
    return out


def _sf_of(factory: Callable[[Any], SensitivityFunction], block: Any, n: int) -> SensitivityFunction:
    sf = factory(block)
    if not isinstance(sf, SensitivityFunction) or sf.n_candidates != n:
        # the partition's size is not named (check_sensitivity_function's message would)
        raise TypeError("sensitivity_function(partition) must return a dpselect.SensitivityFunction for exactly "
                        f"that partition's rows, got {type(sf).__name__}" + (
                            " for another number of rows" if isinstance(sf, SensitivityFunction) else ""))
    return check_sensitivity_function(sf, n, name="sensitivity_function(partition)")


# ---------------------------------------------------------------------------------------------
# the reduce
# ---------------------------------------------------------------------------------------------
def _concat(items: Sequence[Any]) -> Any:
    if not items:
        return None
    if hasattr(items[0], "iloc"):
        import pandas as pd

        return pd.concat(list(items))
    return np.concatenate(items)


def _reduce(results: list[dict[str, Any]], spec: _Spec, k_arg: int | None, gen: np.random.Generator,
            offsets: list[int] | None) -> tuple[list[int], list[int], Any]:
    """Exact top-k of the union of the shortlists. Returns (picked positions into the union, their
    global positions (arrays) and the union's labels)."""
    results = sorted(results, key=lambda r: r["p"])
    n = sum(r["n"] for r in results)
    if n == 0:
        raise ValueError("utilities must not be empty (no candidate to select)")
    k = check_k(1 if k_arg is None else k_arg, n)
    if spec.sf_factory is not None:
        gss = {r["gs"] for r in results if r["gs"] is not None}
        if len(gss) > 1:  # the values come from private partitions: not named
            raise ValueError("sensitivity_function must give one global sensitivity for every partition (two "
                             "partitions gave different ones)")
    live = [r for r in results if r["n"] > 0]
    sizes = [r["rows"].shape[0] for r in live]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    s = np.concatenate([r["s"] for r in live])
    if spec.sf_factory is None:
        s_err: Any = 0.0
    else:
        s_err = np.concatenate([r["s_err"] if r["s_err"] is not None else np.zeros(len(r["rows"])) for r in live])
    if offsets is None:  # chunk sizes unknown before the pass: from the block sizes seen in it
        offsets = [0] * (max(r["p"] for r in results) + 1)
        acc = 0
        for r in results:
            offsets[r["p"]] = acc
            acc += r["n"]
    glob = np.concatenate([offsets[r["p"]] + r["rows"] for r in live])
    wu = None if live[0]["w"] is None else np.concatenate([r["w"] for r in live])
    labels = _concat([r["labels"] for r in live]) if live[0]["labels"] is not None else None
    with np.errstate(over="ignore", under="ignore"):
        a, err, S = scaled_scores(s, s_err, spec.eps, spec.sensitivity, spec.mult)
    exact_s = _exact_scores(live, s, spec)
    factor = Fraction(spec.eps) / (Fraction(spec.sensitivity) * spec.mult)
    cache: dict[int, Fraction] = {}

    def exact_score(i: int) -> Fraction:
        if i not in cache:
            cache[i] = factor * (exact_s(i) - Fraction(S))
        return cache[i]

    if n == 1:  # one candidate: the output is 0 whatever the mechanism
        return [0], [int(glob[0])], labels
    if not spec.peel:
        pos = np.concatenate([starts[t] + live[t]["rounds"][0][0] for t in range(len(live))])
        words = np.concatenate([live[t]["rounds"][0][1] for t in range(len(live))])
        order = np.argsort(pos, kind="stable")
        pos, words = pos[order], words[order]
        top = noisy_top_k(a[pos], None if err is None else err[pos], k=k, rng=_Replay(words, gen).as_generator(),
                          noise=spec.noise, exact_score=lambda j: exact_score(int(pos[j])),
                          base_measure=None if wu is None else wu[pos])
        picks = [int(pos[j]) for j in top]
        return picks, [int(glob[i]) for i in picks], labels
    picked: set[int] = set()
    picks = []
    for j in range(k):
        pos = np.concatenate([starts[t] + live[t]["rounds"][j][0] for t in range(len(live))
                              if len(live[t]["rounds"]) > j])
        words = np.concatenate([live[t]["rounds"][j][1] for t in range(len(live)) if len(live[t]["rounds"]) > j])
        keep = np.asarray([int(i) not in picked for i in pos], dtype=bool)
        pos, words = pos[keep], words[keep]
        order = np.argsort(pos, kind="stable")
        pos, words = pos[order], words[order]

        def ex(i: int, pos: np.ndarray = pos) -> Fraction:
            return exact_score(int(pos[i]))

        top = noisy_top_k(a[pos], None if err is None else err[pos], k=1, rng=_Replay(words, gen).as_generator(),
                          noise=spec.noise, exact_score=ex, base_measure=None if wu is None else wu[pos])
        pick = int(pos[int(top[0])])
        picked.add(pick)
        picks.append(pick)
    return picks, [int(glob[i]) for i in picks], labels


def _exact_scores(live: list[dict[str, Any]], s: np.ndarray, spec: _Spec) -> Callable[[int], Fraction]:
    """Candidate i of the union -> its exact score s (utility, or dampened utility) as a Fraction."""
    factory = spec.sf_factory
    if factory is None:
        return lambda i: Fraction(float(s[i]))
    state: dict[str, Any] = {}

    def exact(i: int) -> Fraction:
        if "sf" not in state:
            carry = _concat([r["carry"] for r in live])
            u = _values(carry, spec.column)
            state["u"] = u
            # δ(t, r) depends on candidate r's own row only, so the function evaluated on the carried
            # rows gives every carried candidate the δ values it had in its partition
            state["sf"] = _sf_of(factory, carry, u.shape[0])
        return dampen_exact(float(state["u"][i]), state["sf"], i, max_steps=spec.max_steps)

    return exact


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------
def _release(name: str, utilities: Any, *, utility: str | None, eps: float, sensitivity: float, monotonic: bool,
             noise: str, k: Any, delta: Any, base_measure: Any, rng: Any, exact: Any, size: Any, accountant: Any,
             sf_factory: Callable[[Any], SensitivityFunction] | None = None,
             max_steps: int = DEFAULT_MAX_STEPS) -> Any:
    """A public selector after its checks of ε and the sensitivity: the rest checked by the core's checks (the
    in-memory selector's messages), the core's charge (:func:`dpselect._boundary.charge_selection`: the same
    guarantee and label as the in-memory call), then the selection."""
    blocks = _blocks(utilities, utility)
    kk = 1 if k is None else check_int(k, "k", minimum=1)
    if blocks.n is not None:
        if blocks.n == 0:
            raise ValueError("utilities must not be empty (no candidate to select)")
        kk = check_k(kk, blocks.n)
    w = _base_measure(base_measure, blocks, noise)
    d, exact, size, gen = _check_call(k, kk, delta, exact, size, rng, accountant)
    if not exact:
        raise ValueError("dpselect.dask samples exactly only (exact=True): the partition step and the reduce have "
                         "no float sampler")
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=noise == "gumbel")
    options: dict[str, Any] = {"noise": noise} if name == "report_noisy_max" else {}
    charge_selection(accountant, name, eps, k=None if k is None else kk, size=size, delta=d, **options)
    return _execute(blocks, eps=eps_pick, sensitivity=sensitivity, mult_per_pick=1 if monotonic else 2, k=k,
                    split=split, noise=noise, rng=gen, sf_factory=sf_factory, max_steps=max_steps, weights=w,
                    size=size)


def _base_measure(base_measure: Any, blocks: _Blocks, noise: str) -> np.ndarray | None:
    """The checked base measure (public: read in full, checked as in memory), or None."""
    if base_measure is None:
        return None
    if blocks.offsets is None or blocks.labelled:
        raise TypeError("base_measure needs utilities given as a dask array of known chunk sizes (one w per "
                        "position); a Series or DataFrame has no positions before the pass")
    if hasattr(base_measure, "compute"):
        base_measure = base_measure.compute()
    assert blocks.n is not None
    return _check_copies(_check_weights(base_measure, blocks.n), noise)


def _execute(blocks: _Blocks, *, eps: float, sensitivity: float, mult_per_pick: int, k: int | None, noise: str,
             rng: Any, split: int | None = None, sf_factory: Callable[[Any], SensitivityFunction] | None = None,
             max_steps: int = DEFAULT_MAX_STEPS, eager: bool = False, weights: np.ndarray | None = None,
             size: int | None = None, one_pass: bool = False) -> Any:
    """Select on checked, charged arguments (:func:`_positions`; ``size`` runs one after another on the same
    generator: the law of ``size`` calls); labelled inputs give the labels at the selected positions. Each pick
    runs with ε-budget ``eps / split`` (default ``k``: ε/k).

    With a DataFrame / Series the number of candidates is known only after the partition step, so ``k``
    larger than it, or a non-finite utility, is refused after the charge (the budget is then spent and
    nothing released: conservative). ``one_pass``: the k largest of one noise draw per candidate whatever the
    noise (one-shot top-k; by default exponential and Laplace noise get fresh noise per pick)."""
    gen = check_rng(rng)
    runs = []
    for _ in range(1 if size is None else size):
        found: dict[str, Any] = {}
        out = _positions(blocks, eps=eps, sensitivity=sensitivity, mult_per_pick=mult_per_pick, k=k, split=split,
                         noise=noise, gen=gen, sf_factory=sf_factory, max_steps=max_steps, eager=eager,
                         weights=weights, found=found, one_pass=one_pass)
        if blocks.labelled:
            labels = found["labels"]
            if isinstance(out, np.ndarray):
                out = np.asarray([labels[int(i)] for i in out])
            else:
                out = labels[out].item() if isinstance(labels[out], np.generic) else labels[out]
        runs.append(out)
    if size is None:
        return runs[0]
    return np.asarray(runs) if blocks.labelled else np.asarray(runs, dtype=np.int64)


@selection_result
def _positions(blocks: _Blocks, *, eps: float, sensitivity: float, mult_per_pick: int, k: int | None,
               split: int | None, noise: str, gen: np.random.Generator,
               sf_factory: Callable[[Any], SensitivityFunction] | None, max_steps: int, eager: bool,
               weights: np.ndarray | None, found: dict[str, Any], one_pass: bool = False) -> Any:
    """Plan the random streams, run the partition step on every block (dask tasks, or directly on
    in-memory blocks with ``eager``: the tests' fast path through the same code) and reduce. Returns the
    global positions (arrays) or the positions into ``found["labels"]`` (Series / DataFrames), in the one
    return convention (:func:`dpselect.vocabulary.selection_result`)."""
    kk = 1 if k is None else int(k)
    peel = noise != "gumbel" and kk > 1 and not one_pass
    rounds = kk if peel else 1
    streams = _plan_streams(gen, blocks.n if blocks.offsets is not None else None, rounds)
    spec = _Spec(eps, sensitivity, mult_per_pick * (kk if split is None else split), kk, noise, peel, streams,
                 blocks.column, sf_factory, max_steps)
    offsets = blocks.offsets if blocks.offsets is not None else [0] * len(blocks.parts)
    ends = offsets[1:] + [weights.shape[0]] if weights is not None else []   # (a base measure: known offsets)
    ws = [None if weights is None else weights[offsets[p]:ends[p]] for p in range(len(blocks.parts))]
    if eager:
        results = [_partition(b, p, offsets[p], spec, ws[p]) for p, b in enumerate(blocks.parts)]
    else:
        import dask

        task = dask.delayed(_partition, pure=True)
        results = list(dask.compute(*[task(b, p, offsets[p], spec, ws[p]) for p, b in enumerate(blocks.parts)]))
    picks, glob, labels = _reduce(results, spec, k, gen, blocks.offsets)
    if blocks.labelled:
        found["labels"] = labels
        idx = picks
    else:
        idx = glob
    return int(idx[0]) if k is None else idx


# ---------------------------------------------------------------------------------------------
# public selectors
# ---------------------------------------------------------------------------------------------
def exponential(
    utilities: Any,
    *,
    epsilon: float,
    sensitivity: float,
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    utility: str | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    """The exponential mechanism over a dask array, Series or DataFrame column: candidate r with
    probability ∝ exp(ε·u(r)/(2Δu)) (ε·u/Δu with ``monotonic=True``).

    Privacy: ε-DP (ε-bounded range) under any neighbour model for which ``sensitivity`` bounds the change
    of every utility (the same guarantee, law and keywords as :func:`dpselect.exponential`). The output law
    is exactly the in-memory one (a Gumbel top-k per partition, then an exact reduce: see
    :mod:`dpselect.dask._select`); with a dask array and an int seed the very same candidates as
    ``dpselect.exponential`` on the computed array. The dask workers see the raw utilities: only the
    returned value is private.

    Parameters
    ----------
    utilities : dask.array.Array, dask.dataframe.Series or dask.dataframe.DataFrame
        The candidates' utilities: a 1-D dask array (the result is global positions), a Series (the result
        is index labels) or a DataFrame with ``utility=`` naming the column (index labels).
    epsilon : float
        Privacy budget, > 0 (ε/k per pick with an int ``k``).
    sensitivity : float
        Δu, the global sensitivity of the utilities.
    k : int, optional
        Number of distinct candidates. Omitted: one, returned as an ``int`` position or one label; any
        int ``k`` (1 included) returns an array of shape (k,) in the order picked.
    utility : str, optional
        With a DataFrame: the name of the utility column.
    rng : seed, Generator or None
        Glossary: [rng][glossary-rng]. A PCG64 generator on a dask array of known chunks gives the in-memory selector's
        bits (module docstring).
    monotonic : bool, default False
        All utilities move in the same direction between neighbours: ε·u/Δu instead of ε·u/(2Δu).
    delta, base_measure, exact, size
        As for :func:`dpselect.exponential` (top-k δ, base measure, exact sampling, ``size=N`` draws), with the
        exceptions of :mod:`dpselect.dask`: ``base_measure`` needs a dask array of known chunks, ``exact=False``
        is refused, ``size=N`` makes N passes.
    accountant : dpselect.Accountant, optional
        Charged exactly what :func:`dpselect.exponential` charges for the same arguments (the same guarantee and
        label), after the arguments are checked and before any random bit is drawn. With a Series or
        DataFrame the number of candidates is known only after the partition pass: ``k`` above it (or a
        non-finite utility) is then refused after the charge.

    Returns
    -------
    int, label or numpy.ndarray
        ``k`` omitted: the selected candidate's global position (a dask array) or index label (Series,
        DataFrame). Any int ``k``: an array of shape (k,) of them (int64 positions, or labels).

    Examples
    --------
    >>> import dask.array as da, numpy as np, dpselect
    >>> u = da.from_array(np.array([1.0, 5.0, 2.0, 4.0]), chunks=2)
    >>> exponential(u, epsilon=1e6, sensitivity=1.0, rng=0)
    1
    >>> exponential(u, epsilon=1e6, sensitivity=1.0, k=1, rng=0)
    array([1])
    >>> exponential(u, epsilon=1.0, sensitivity=1.0, k=2, rng=7).tolist() == dpselect.exponential(
    ...     u.compute(), epsilon=1.0, sensitivity=1.0, k=2, rng=7).tolist()
    True
    """
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    return _release("exponential", utilities, utility=utility, eps=eps, sensitivity=sens, noise="gumbel",
                    monotonic=check_bool(monotonic, "monotonic"), k=k, delta=delta, base_measure=base_measure,
                    rng=rng, exact=exact, size=size, accountant=accountant)


def report_noisy_max(
    utilities: Any,
    *,
    epsilon: float,
    sensitivity: float,
    noise: str = "laplace",
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    utility: str | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    """Report-noisy-max over a dask array, Series or DataFrame column: argmax_r u(r) + noise of
    scale 2Δu/ε (Δu/ε with ``monotonic=True``).

    ``noise="gumbel"`` is the exponential mechanism, ``"exponential"`` permute-and-flip, ``"laplace"`` the
    classic report-noisy-max. An int ``k``: k rounds of fresh noise on the remaining candidates, ε/k each.
    Privacy: ε-DP under the utility's neighbour model (Δu its global sensitivity), exactly the law of
    :func:`dpselect.report_noisy_max`.

    Parameters
    ----------
    utilities, epsilon, sensitivity, k, utility, rng
        As for :func:`dpselect.dask.exponential`.
    noise : {"laplace", "gumbel", "exponential"}, default "laplace"
    monotonic, delta, base_measure, exact, size, accountant
        As for :func:`dpselect.dask.exponential`, whose in-memory counterpart is here :func:`dpselect.report_noisy_max`.

    Returns
    -------
    int, label or numpy.ndarray
        As :func:`dpselect.dask.exponential` returns.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> u = da.from_array(np.array([1.0, 5.0, 2.0]), chunks=1)
    >>> report_noisy_max(u, epsilon=1e6, sensitivity=1.0, rng=0)
    1
    >>> report_noisy_max(u, epsilon=1e6, sensitivity=1.0, k=2, rng=0).shape
    (2,)
    """
    noise = check_choice(noise, "noise", NOISES)
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    return _release("report_noisy_max", utilities, utility=utility, eps=eps, sensitivity=sens, noise=noise,
                    monotonic=check_bool(monotonic, "monotonic"), k=k, delta=delta, base_measure=base_measure,
                    rng=rng, exact=exact, size=size, accountant=accountant)


def permute_and_flip(
    utilities: Any,
    *,
    epsilon: float,
    sensitivity: float,
    k: int | None = None,
    delta: float = 0.0,
    monotonic: bool = False,
    base_measure: ArrayLike | None = None,
    utility: str | None = None,
    rng: RngLike = None,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    """Permute-and-flip (McKenna & Sheldon 2020) over a dask array, Series or DataFrame column.

    Its output law is that of report-noisy-max with exponential noise of scale 2Δu/ε (Ding et al. 2021),
    which is how it is sampled, as in memory (:func:`dpselect.permute_and_flip`): per-partition
    exponential-noise top-k, then the exact reduce. Privacy: ε-DP under the utility's neighbour model.
    An int ``k``: k picks on the remaining candidates, ε/k each.

    Parameters
    ----------
    utilities, epsilon, sensitivity, k, utility, rng
        As for :func:`dpselect.dask.exponential`.
    monotonic, delta, base_measure, exact, size, accountant
        As for :func:`dpselect.dask.exponential`, whose in-memory counterpart is here :func:`dpselect.permute_and_flip`.

    Returns
    -------
    int, label or numpy.ndarray
        As :func:`dpselect.dask.exponential` returns.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> permute_and_flip(da.from_array(np.array([1.0, 5.0, 2.0]), chunks=2), epsilon=1e6, sensitivity=1.0,
    ...                  rng=0)
    1
    """
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    return _release("permute_and_flip", utilities, utility=utility, eps=eps, sensitivity=sens, noise="exponential",
                    monotonic=check_bool(monotonic, "monotonic"), k=k, delta=delta, base_measure=base_measure,
                    rng=rng, exact=exact, size=size, accountant=accountant)


def local_dampening(
    utilities: Any,
    *,
    epsilon: float,
    sensitivity_function: Callable[[Any], SensitivityFunction],
    k: int | None = None,
    delta: float = 0.0,
    base_measure: ArrayLike | None = None,
    utility: str | None = None,
    rng: RngLike = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    exact: bool = True,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    """Local dampening (thesis Def. 3.4.1) over a dask DataFrame, Series or array: candidate r
    with probability ∝ exp(ε·D(x, r)/2), D the dampening function of u under the sensitivity δ.

    Privacy: ε-DP (ε-bounded range, thesis Thm 3.5.1) when δ is admissible for u under the data's
    neighbour model, with exactly the law of :func:`dpselect.local_dampening`. An int ``k``: k distinct
    picks, ε/k each.

    Parameters
    ----------
    utilities, epsilon, k, utility, rng
        As for :func:`dpselect.dask.exponential`.
    sensitivity_function : callable
        ``partition -> SensitivityFunction``: it receives one partition (a pandas DataFrame with every
        per-candidate column, a pandas Series, or a numpy block) and returns δ(x, t, r) for that
        partition's rows. δ for a candidate must depend on that candidate's row only (e.g. δ from its
        degree column), and every partition must give the same global sensitivity; the reduce calls it
        again on the few rows it carries to get exact D values for near-ties.
    max_steps : int
        Bound on the dampening walk (as :func:`dpselect.local_dampening`).
    delta, base_measure, exact, size, accountant
        As for :func:`dpselect.dask.exponential`, whose in-memory counterpart is here :func:`dpselect.local_dampening`.

    Returns
    -------
    int, label or numpy.ndarray
        As :func:`dpselect.dask.exponential` returns.

    Examples
    --------
    >>> import dask.dataframe as dd, pandas as pd, dpselect
    >>> df = dd.from_pandas(pd.DataFrame({"u": [1.0, 9.0, 2.0]}, index=["a", "b", "c"]), npartitions=2)
    >>> local_dampening(df, utility="u", epsilon=50.0, rng=0,
    ...                 sensitivity_function=lambda part: dpselect.constant(len(part), 1.0))
    'b'
    >>> local_dampening(df, utility="u", epsilon=50.0, k=1, rng=0,
    ...                 sensitivity_function=lambda part: dpselect.constant(len(part), 1.0)).tolist()
    ['b']
    """
    eps = check_positive(epsilon, "epsilon")
    if isinstance(sensitivity_function, SensitivityFunction) or not callable(sensitivity_function):
        raise TypeError(
            "sensitivity_function must be a callable partition -> SensitivityFunction (δ for that partition's "
            f"rows), got {type(sensitivity_function).__name__}"
        )
    steps = check_int(max_steps, "max_steps", minimum=1)
    return _release("local_dampening", utilities, utility=utility, eps=eps, sensitivity=1.0, noise="gumbel",
                    monotonic=False, k=k, delta=delta, base_measure=base_measure, rng=rng, exact=exact, size=size,
                    accountant=accountant, sf_factory=sensitivity_function, max_steps=steps)

