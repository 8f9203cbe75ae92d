"""Top-k selection with a choice of method: peeling, the joint exponential mechanism, one-shot noisy top-k.

:func:`top_k` releases an ordered sequence of k distinct candidates. The methods (each a :class:`TopKMethod`
value in :data:`TOPK_METHODS`, with its guarantee, neighbour model and exact law for small inputs):

* ``"peeling"``: k picks on the remaining candidates, ε/k each (or the per-pick ε0 of an (ε, δ) budget), with
  the noise of ``noise=``: Gumbel (the exponential mechanism, default), exponential (permute-and-flip) or
  Laplace (report-noisy-max). The same law and the same random stream as ``dpselect.exponential(..., k=)``,
  ``permute_and_flip(..., k=)`` and ``report_noisy_max(..., k=)``. Guarantee: the adaptive composition of the k
  picks (``AdaptiveBoundedRangeComposition`` for Gumbel noise, ``PureDPComposition`` otherwise): ε-DP at δ = 0.
* ``"joint"``: the joint exponential mechanism (Gillenwater, Joseph, Muñoz & Ribero Diaz, ICML 2022): one
  exponential mechanism over all ordered k-sequences, scored by the worst gap between the sequence's i-th count
  and the true i-th largest count, sampled exactly (:func:`dpselect.sampling.joint_top_k`). Pure ε-DP. It has
  no (ε, δ) version: ``delta > 0`` is refused (peeling is the method that turns a δ into a larger per-pick ε).
* ``"one_shot"``: one noisy pass, the k largest noisy scores in order. Gumbel noise (default) with scale
  2kΔ/ε: exactly the law of exponential-mechanism peeling at ε/k per pick (Durfee & Rogers, NeurIPS 2019), so
  the same guarantee, drawn with the same random words. Laplace noise with scale 2kΔ/ε (kΔ/ε with
  ``monotonic=True``): pure ε-DP (Ding, Wang, Zhang & Kifer, "Free gap information from the differentially
  private sparse vector and noisy max mechanisms", VLDB 2019, Noisy-Top-K-with-Gap; also Qiao, Su & Zhang,
  ICML 2021), and with ``gaps=True`` it also releases the noisy gaps between consecutive released items at no
  extra cost. Exponential noise is refused: no such result is known for a one-shot top-k with it.
* ``"auto"`` (default): a rule on public quantities only (:func:`_auto_method`): ``gaps=True`` → one-shot
  Laplace; δ = 0 and k >= 100 → joint; otherwise peeling (see ``docs/topk.md`` for the evidence).

Neighbour model: every guarantee holds for the neighbour model under which ``sensitivity`` (Δ) bounds the
change of every utility (and, with ``monotonic=True``, all changes are of one sign), as for the selectors.

Released gaps (``gaps=True``): the exact noisy gap g_j = X_{i_j} − X_{i_{j+1}} (utility units; i_{k+1} is the
(k+1)-th largest noisy value, so there are k gaps) is released as ``floor(g_j / h) · h`` on the power-of-two
grid h = 2^(⌊log2 b⌋ − 20), b = 2kΔ/ε (kΔ/ε monotonic) the Laplace scale: h depends on public inputs only, so
the rounding is post-processing of the exact ε-DP release; the floor is decided exactly (the noise values are
refined bit by bit until the gap's enclosure lies inside one grid cell), never from a float approximation of
the noise, so no output is possible on one dataset and impossible on a neighbour through rounding.

>>> import dpselect
>>> dpselect.top_k([1.0, 50.0, 3.0, 40.0], k=2, epsilon=1e3, sensitivity=1.0, rng=0).tolist()
[1, 3]
>>> r = dpselect.top_k([1.0, 50.0, 3.0, 40.0], k=2, epsilon=1e3, sensitivity=1.0, gaps=True, rng=0)
>>> r.indices.tolist(), r.gaps.shape, r.method
([1, 3], (2,), 'one_shot')
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping, overload

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from . import mechanisms as _m
from . import vocabulary as _voc
from ._boundary import charge, check_accountant, check_topk_delta, topk_budget
from ._rng import check_rng
from ._validation import check_bool, check_k, check_positive, check_utilities, short_repr
from .accounting.accountant import Accountant, Event
from .accounting.guarantees import Guarantee, PureDP
from .registry import get_mechanism
from .sampling import joint_probabilities, joint_top_k, noisy_top_k
from .sampling._joint import check_joint_domain
from .sampling._joint import _WORK_CAP as _JOINT_WORK_CAP
from .sampling._noise import _SMALL, _bits64
from .sampling._topk import _Refiner, _bulk_shortlist, _certify, _enclosed_shortlist
from .typing import IndexArray, RngLike

__all__ = ["top_k", "top_k_probabilities", "TopKGaps", "TopKMethod", "TOPK_METHODS", "METHODS", "GAP_GRID_BITS"]

#: The values of ``method=`` (``"auto"`` resolves to one of the others by :func:`_auto_method`).
METHODS = ("auto", "peeling", "joint", "one_shot")
#: Released gaps lie on the grid h = 2^(⌊log2 b⌋ − GAP_GRID_BITS), b the Laplace noise scale (public).
GAP_GRID_BITS = 20
#: ``top_k_probabilities`` enumerates every ordered k-sequence: at most this many.
LAW_MAX_SEQUENCES = 5040

# peeling: the mechanism each noise selects (the registry's names)
_PEELING = {"gumbel": "exponential", "exponential": "permute_and_flip", "laplace": "report_noisy_max"}
_GLOBAL_MODEL = ("any neighbour model under which `sensitivity` (Δ) bounds |u(x, r) − u(y, r)| for every "
                 "candidate r (with monotonic=True: all differences also of one sign)")


def _auto_method(k: int, d: int, epsilon: float, delta: float, gaps: bool) -> str:
    """The method ``method="auto"`` runs, from public quantities only (k, the number of candidates d, ε, δ).

    ``gaps=True``: one-shot Laplace (the only method here that releases gaps). Else the joint exponential
    mechanism for δ = 0 and k >= 100 (never worse than pure peeling and >= 1.5x better on most cells of the
    benchmark there; at k = 10 and 50 it lost on some data), and peeling otherwise (δ > 0 included: joint is
    pure ε only). ``d`` and ``epsilon`` are not used by today's rule; they are its inputs so that the rule can
    change without changing the callers.

    >>> _auto_method(10, 1000, 1.0, 0.0, False), _auto_method(200, 1000, 1.0, 0.0, False)
    ('peeling', 'joint')
    >>> _auto_method(200, 1000, 1.0, 1e-6, False), _auto_method(5, 10, 1.0, 0.0, True)
    ('peeling', 'one_shot')
    """
    if gaps:
        return "one_shot"
    if delta == 0.0 and k >= 100:
        return "joint"
    return "peeling"


@dataclass(frozen=True)
class TopKGaps:
    """What :func:`top_k` returns with ``gaps=True``: the indices and the noisy gaps after each of them.

    Attributes
    ----------
    indices : numpy.ndarray of int64, shape (k,)
        The candidates of the k largest noisy scores, largest first.
    gaps : numpy.ndarray of float64, shape (k,)
        ``gaps[j]``: the noisy score of ``indices[j]`` minus the next largest noisy score (of ``indices[j + 1]``,
        or of the (k+1)-th largest for ``j = k − 1``), in utility units, rounded down onto the grid ``grid``.
    grid : float
        The public grid step h (a power of two) of ``gaps``.
    method : str
        The method that ran (``"one_shot"``).

    Examples
    --------
    >>> r = TopKGaps(np.array([2, 0]), np.array([1.5, 0.25]), 0.25, "one_shot")
    >>> r.indices.tolist(), r.gaps.tolist()
    ([2, 0], [1.5, 0.25])
    """

    indices: IndexArray
    gaps: npt.NDArray[np.float64]
    grid: float
    method: str


# ---------------------------------------------------------------------------------------------
# the methods as values
# ---------------------------------------------------------------------------------------------
def _peeling_privacy(epsilon: float, k: int, delta: float, noise: str) -> Guarantee:
    name = _PEELING[noise]
    opts = {"noise": noise} if name == "report_noisy_max" else {}
    return get_mechanism(name).privacy(epsilon, k=k, delta=delta, **opts)


def _one_shot_privacy(epsilon: float, k: int, delta: float, noise: str) -> Guarantee:
    if noise == "gumbel":      # the law of exponential-mechanism peeling (Durfee & Rogers 2019): its guarantee
        return _peeling_privacy(epsilon, k, delta, "gumbel")
    return PureDP(epsilon)     # Laplace, scale 2kΔ/ε: ε-DP (Ding et al. 2019)


def _joint_privacy(epsilon: float, k: int, delta: float, noise: str) -> Guarantee:
    return PureDP(epsilon)


@dataclass(frozen=True)
class TopKMethod:
    """A top-k method as a value: its noises, its guarantee and its exact law (the small registry
    :data:`TOPK_METHODS`, next to :data:`dpselect.MECHANISMS`).

    A separate registry because a top-k method releases an ordered k-sequence: its law is over the
    n!/(n−k)! sequences, not the n candidates of a :class:`dpselect.registry.Mechanism`'s one-pick
    ``probabilities``, and its guarantee is not a k-fold composition of one pick's (joint, one-shot Laplace).

    Attributes
    ----------
    name : str
        The value of ``method=``.
    noises : tuple of str
        The noise families it takes (``()``: none; the first is the default).
    deltas : bool
        Whether ``delta > 0`` is accepted (an (ε, δ) budget) with some noise (one-shot: Gumbel only).
    gaps : bool
        Whether ``gaps=True`` is possible (with Laplace noise).
    neighbour_model : str
        Under which neighbour relation the guarantee holds.
    reference : str
        Where the guarantee is proven.
    privacy_fn : callable
        ``(epsilon, k, delta, noise) -> Guarantee`` (checked values).

    Examples
    --------
    >>> TOPK_METHODS["joint"].privacy(1.0, k=5)
    PureDP(epsilon=1.0)
    >>> TOPK_METHODS["one_shot"].privacy(1.0, k=2)
    AdaptiveBoundedRangeComposition(epsilon0=0.5, k=2, resolution=...)
    """

    name: str
    noises: tuple[str, ...]
    deltas: bool
    gaps: bool
    neighbour_model: str
    reference: str
    privacy_fn: Callable[[float, int, float, str], Guarantee]

    def _check_noise(self, noise: Any) -> str | None:
        """``noise`` checked for this method: None gives the default (the first of :attr:`noises`)."""
        if noise is None:
            return self.noises[0] if self.noises else None
        if not isinstance(noise, str) or noise not in self.noises:
            if not self.noises:
                raise ValueError(f"method={self.name!r} takes no noise= (it is one exponential mechanism over "
                                 f"the k-sequences), got noise={short_repr(noise)}")
            extra = (" (no one-shot top-k result is known for exponential noise: use method='peeling' for "
                     "permute-and-flip)" if self.name == "one_shot" and noise == "exponential" else "")
            raise ValueError(f"noise must be one of {', '.join(map(repr, self.noises))} for method={self.name!r}, "
                             f"got {short_repr(noise)}{extra}")
        return noise

    def privacy(self, epsilon: float, *, k: int, delta: float = 0.0, noise: str | None = None) -> Guarantee:
        """The guarantee of one :func:`top_k` call of this method, as a value (what an accountant charges).

        Parameters
        ----------
        epsilon : float
            The budget (> 0).
        k : int
            The number of released items (>= 1).
        delta : float, optional
            The top-k δ (only for methods with :attr:`deltas`).
        noise : str, optional
            The noise family (default: the method's first).

        Returns
        -------
        Guarantee
            Peeling and one-shot Gumbel: the adaptive composition of the k picks; joint and one-shot Laplace:
            ``PureDP(epsilon)``.

        Examples
        --------
        >>> TOPK_METHODS["one_shot"].privacy(1.0, k=3, noise="laplace")
        PureDP(epsilon=1.0)
        """
        eps = check_positive(epsilon, "epsilon")
        kk = check_k(k, 0)
        nz = self._check_noise(noise)
        d = _check_method_delta(self, delta, kk, nz)
        return self.privacy_fn(eps, kk, d, nz or "")

    def probabilities(self, utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
                      noise: str | None = None, delta: float = 0.0, monotonic: bool = False
                      ) -> tuple[IndexArray, npt.NDArray[np.float64]]:
        """The exact law of this method's k-sequence (small inputs): :func:`top_k_probabilities`.

        Parameters
        ----------
        utilities, k, epsilon, sensitivity, noise, monotonic
            As for :func:`top_k`.
        delta : float, optional
            The top-k δ, as for :func:`top_k`.

        Returns
        -------
        (sequences, probabilities)
            Every ordered k-sequence (int64, (m, k)) and its probability (float64, (m,)).

        Examples
        --------
        >>> seqs, p = TOPK_METHODS["peeling"].probabilities([0.0, 1.0], k=2, epsilon=1.0, sensitivity=1.0)
        >>> seqs.tolist(), round(float(p.sum()), 12)
        ([[0, 1], [1, 0]], 1.0)
        """
        return top_k_probabilities(utilities, k=k, epsilon=epsilon, sensitivity=sensitivity,
                                   method=self.name,  # type: ignore[arg-type]  # a TOPK_METHODS key
                                   noise=noise, delta=delta, monotonic=monotonic)


#: The top-k methods by name (read-only): ``method=`` of :func:`top_k`.
TOPK_METHODS: Mapping[str, TopKMethod] = MappingProxyType({
    "peeling": TopKMethod("peeling", ("gumbel", "exponential", "laplace"), True, False, _GLOBAL_MODEL,
                          "sequential (adaptive) composition of k ε0-DP picks; Gumbel: ε0-bounded range "
                          "(Dong, Durfee & Rogers 2020)", lambda e, k, d, n: _peeling_privacy(e, k, d, n)),
    "joint": TopKMethod("joint", (), False, False, _GLOBAL_MODEL,
                        "the exponential mechanism over ordered k-sequences (Gillenwater et al., ICML 2022)",
                        _joint_privacy),
    "one_shot": TopKMethod("one_shot", ("gumbel", "laplace"), True, True, _GLOBAL_MODEL,
                           "Gumbel: equal in law to exponential-mechanism peeling (Durfee & Rogers, NeurIPS 2019); "
                           "Laplace 2kΔ/ε: ε-DP with free gaps (Ding et al., VLDB 2019)", _one_shot_privacy),
})


def _check_method_delta(spec: TopKMethod, delta: Any, k: int, noise: str | None) -> float:
    """δ checked for the method: δ > 0 only where the guarantee is a composition of k picks (peeling, one-shot
    Gumbel), which a δ turns into a larger per-pick ε0; a ValueError for the pure methods."""
    d = check_topk_delta(delta, k)
    if d > 0.0 and not (spec.name == "peeling" or (spec.name == "one_shot" and noise == "gumbel")):
        what = "one-shot Laplace" if spec.name == "one_shot" else "the joint exponential mechanism"
        raise ValueError(f"delta must be 0 for method={spec.name!r}"
                         f"{' with noise=' + repr(noise) if noise else ''}: {what} is pure ε-DP and has no "
                         "(ε, δ) version here; use method='peeling' to spend a δ on a larger per-pick ε")
    return d


# ---------------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------------
def _exact_scores(u: np.ndarray, eps: float, sens: float, mult: int) -> tuple[np.ndarray, Any, Callable]:
    a, err, S = _m.scaled_scores(u, 0.0, eps, sens, mult)
    c = Fraction(eps) / (Fraction(sens) * mult)
    fS = Fraction(S)

    def exact_score(r: int) -> Fraction:
        return c * (Fraction(float(u[r])) - fS)

    return a, err, exact_score


def _one_shot_laplace(u: np.ndarray, eps: float, sens: float, k: int, monotonic: bool,
                      gen: np.random.Generator) -> IndexArray:
    """The k largest of u_r + Laplace(mult·Δ/ε), mult = k (monotonic) or 2k, in one pass, exactly."""
    if u.shape[0] == 1:
        return np.zeros(1, dtype=np.int64)
    mult = (1 if monotonic else 2) * k
    a, err, exact_score = _exact_scores(u, eps, sens, mult)
    return noisy_top_k(a, err, k=k, rng=gen, noise="laplace", exact_score=exact_score)


def _gap_grid(epsilon: float, sensitivity: float, k: int, monotonic: bool) -> int:
    """The exponent e of the public grid step h = 2^e of released gaps: e = ⌊log2 b⌋ − :data:`GAP_GRID_BITS`,
    b = mult·Δ/ε the Laplace scale (mult = k with ``monotonic``, else 2k), computed without overflow."""
    em, ee = math.frexp(epsilon)
    dm, de = math.frexp(sensitivity)
    _, be = math.frexp(dm * ((1 if monotonic else 2) * k) / em)   # b = bm·2^(be + de − ee), bm in [0.5, 1)
    return be + de - ee - 1 - GAP_GRID_BITS


def _one_shot_gaps(u: np.ndarray, eps: float, sens: float, k: int, monotonic: bool,
                   gen: np.random.Generator) -> tuple[IndexArray, npt.NDArray[np.float64], float]:
    """One-shot Laplace top-k with its k gaps (Ding et al. 2019), exactly: the order of the k + 1 largest noisy
    scores and the grid cell of each gap are decided on exact enclosures of the noise, refined until certain."""
    n = u.shape[0]
    mult = (1 if monotonic else 2) * k
    e = _gap_grid(eps, sens, k, monotonic)
    h = Fraction(2) ** e
    a, err, exact_score = _exact_scores(u, eps, sens, mult)
    # the grid in noise units: a gap of t·(cell) noise units is cell·h utility units (c = ε/(mult·Δ))
    t = Fraction(eps) / (Fraction(sens) * mult) * h
    kk = k + 1
    m = _bits64(gen, n)
    # stage 1 of the sampler (float64 in blocks, proven bounds) keeps the candidates that can be among the k + 1
    # largest; stage 2 encloses those at both ends of their 64-bit cells
    first = _bulk_shortlist(a, m, kk, "laplace", err) if n > _SMALL else np.arange(n)
    short, lo, hi = _enclosed_shortlist(a, err, first, m, kk, "laplace", None)
    ids = [int(r) for r in short]
    ref = Fraction(exact_score(ids[0]))
    R = _Refiner(gen, "laplace", exact_score, None, m, ref)
    dlo: dict[int, Fraction] = {}
    dhi: dict[int, Fraction] = {}

    def exact(r: int) -> None:   # the refiner's decimal enclosure of a_r − ref + N_r, as an absolute one
        lo_d, hi_d = R.interval(r)
        dlo[r], dhi[r] = Fraction(lo_d) + ref, Fraction(hi_d) + ref

    # first the rigorous float enclosures of stage 2 (exact as Fractions), the refiner only where they do not settle
    for r, lo_f, hi_f in zip(ids, lo.tolist(), hi.tolist()):
        if math.isfinite(lo_f) and math.isfinite(hi_f):
            dlo[r], dhi[r] = Fraction(lo_f), Fraction(hi_f)
        else:
            exact(r)
    refined: set[int] = set()
    for _ in range(100_000):
        picked, amb = _certify(ids, [dlo[r] for r in ids], [dhi[r] for r in ids], kk)
        if picked is None:
            more = sorted(amb)
        else:
            cells: list[int] = []
            more_set: set[int] = set()
            for j in range(k):
                p, q = picked[j], picked[j + 1]
                c_lo = math.floor((dlo[p] - dhi[q]) / t)
                if c_lo != math.floor((dhi[p] - dlo[q]) / t):
                    more_set.update((p, q))
                cells.append(c_lo)
            if not more_set:
                # cell·h as the nearest float (exact unless beyond float precision or range: post-processing)
                gaps = np.array([float(c * h) for c in cells], dtype=np.float64)
                return np.asarray(picked[:k], dtype=np.int64), gaps, float(h)
            more = sorted(more_set)
        R.extend([r for r in more if r in refined])   # 64 more bits where the exact enclosure did not settle it
        for r in more:
            exact(r)
            refined.add(r)
        if picked is None:   # drop the candidates that can no longer be among the k + 1 largest
            lk = sorted((dlo[r] for r in ids), reverse=True)[kk - 1]
            ids = [r for r in ids if not (dhi[r] < lk) or r in amb]
    raise RuntimeError("exact gap refinement did not converge")  # probability 2^-(64·100000)


def _joint(u: np.ndarray, eps: float, sens: float, k: int, monotonic: bool, gen: np.random.Generator) -> IndexArray:
    return np.asarray(joint_top_k(u, k=k, epsilon=eps, sensitivity=sens, monotonic=monotonic, rng=gen),
                      dtype=np.int64)


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {short_repr(method)}")
    return method


def _check_arguments(n: int | None, k: Any, epsilon: Any, sensitivity: Any, method: Any, noise: Any, delta: Any,
                     monotonic: Any, gaps: Any) -> tuple[int, float, float, str, str | None, float, bool, bool]:
    """Every argument of a top-k but the data checked (public inputs only in the messages), ``auto`` resolved:
    ``(k, ε, Δ, method, noise, δ, monotonic, gaps)``. ``n``: the number of candidates (None: not known yet,
    as for a dask Series; then k <= n is checked once it is)."""
    kk = check_k(k, n) if n is not None else check_k(k, 0)
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    method = _check_method(method)
    monotonic = check_bool(monotonic, "monotonic")
    gaps = check_bool(gaps, "gaps")
    d = check_topk_delta(delta, kk)
    if method == "auto":
        method = _auto_method(kk, n if n is not None else 0, eps, d, gaps)
    spec = TOPK_METHODS[method]
    if gaps:
        if not spec.gaps:
            raise ValueError(f"gaps=True needs method='one_shot' (or 'auto') with Laplace noise, got "
                             f"method={method!r}: only one-shot Laplace top-k releases its gaps for free")
        if noise is None:
            noise = "laplace"
        if noise != "laplace":
            raise ValueError(f"gaps=True needs noise='laplace' (Ding et al. 2019 release Laplace gaps), got "
                             f"noise={short_repr(noise)}")
        if n is not None:
            _check_gaps_k(kk, n)
    nz = spec._check_noise(noise)
    d = _check_method_delta(spec, d, kk, nz)
    if method == "joint" and n is not None and kk * n > _JOINT_WORK_CAP:   # public sizes, before the charge
        raise ValueError(f"k * the number of candidates must be at most {_JOINT_WORK_CAP:.0e} for method='joint' "
                         f"(the joint sampler's public work cap), got k = {kk} and {n} candidates; use "
                         "method='peeling' or 'one_shot'")
    return kk, eps, sens, method, nz, d, monotonic, gaps


def _check_gaps_k(k: int, n: int) -> None:
    if k >= n:
        raise ValueError(f"gaps=True needs k < the number of candidates ({n}): the k-th gap is to the "
                         f"(k+1)-th largest noisy score; got k={k}")


def _charge(accountant: Accountant | None, method: str, k: int, eps: float, noise: str | None, delta: float,
            gaps: bool, monotonic: bool, *, label: str | None = None, neighbours: str | None = None,
            nonprivate: str | None = None) -> None:
    """Charge the method's guarantee (:meth:`TopKMethod.privacy`) before anything is drawn."""
    if accountant is None:
        return
    g = TOPK_METHODS[method].privacy_fn(eps, k, delta, noise or "")
    opts: tuple = tuple(o for o in (("method", method), ("noise", noise), ("gaps", gaps) if gaps else None,
                                     ("monotonic", True) if monotonic else None) if o is not None)
    charge(accountant, g, label=label or _label(method, k, noise, delta, gaps), neighbours=neighbours,
           event=Event("top_k", eps, k, delta, None, opts), nonprivate=nonprivate)


def _draw(u: np.ndarray, k: int, eps: float, sens: float, method: str, noise: str | None, delta: float,
          monotonic: bool, gen: np.random.Generator) -> IndexArray:
    """The k-sequence of a checked, charged top-k without gaps (the in-memory law; also dask's for joint)."""
    if method == "joint":
        return _joint(u, eps, sens, k, monotonic, gen)
    if method == "one_shot" and noise == "laplace":
        return _one_shot_laplace(u, eps, sens, k, monotonic, gen)
    # peeling, and one-shot Gumbel (the same law: Durfee & Rogers; the same words: one Gumbel pass)
    noise_ = noise or "gumbel"
    eps_pick, split = topk_budget(eps, k, delta, bounded_range=noise_ == "gumbel")
    if noise_ == "gumbel":
        out = _m._exponential(u, eps_pick, split, sens, k, monotonic, None, gen, True, None)
    else:
        out = _m._report_noisy_max(u, eps_pick, split, sens, k, monotonic, None, gen, True, None, noise_)
    return np.atleast_1d(np.asarray(out, dtype=np.int64))


#: ``topk_method=`` of the applications (PrivTopk, DP-MOTkIN-Agg, dask frequent items).
APP_METHODS = ("peeling", "joint", "one_shot")


def _check_app_method(topk_method: Any, spec: Any, where: str) -> str:
    """``topk_method=`` of an application checked against its mechanism (a registry spec): ``"peeling"`` (the
    default, any mechanism) or ``"joint"`` / ``"one_shot"`` (one-shot Gumbel), which run on the utilities with a
    global sensitivity and Gumbel noise, so need the global Gumbel-noise mechanism (``mechanism="exponential"``,
    a capability query: ``kind == "global"`` and ``noises == ("gumbel",)``); anything else a ValueError (before
    any charge)."""
    if not isinstance(topk_method, str) or topk_method not in APP_METHODS:
        raise ValueError(f"topk_method must be one of {', '.join(map(repr, APP_METHODS))}, got "
                         f"{short_repr(topk_method)}")
    if topk_method != "peeling" and not (spec.kind == "global" and tuple(spec.noises) == ("gumbel",)):
        raise ValueError(f"{where}: topk_method={topk_method!r} needs mechanism='exponential', got {spec.name!r}: "
                         f"the {'joint exponential mechanism' if topk_method == 'joint' else 'one-shot Gumbel top-k'} "
                         "runs on the utilities with their global sensitivity (a local mechanism's dampened or "
                         "shifted scores have no such top-k here); use topk_method='peeling' with it")
    return topk_method


def _label(method: str, k: int, noise: str | None, delta: float, gaps: bool) -> str:
    parts = [f"method={method!r}", f"k={k}"]
    if noise is not None and not (method == "peeling" and noise == "gumbel") \
            and not (method == "one_shot" and noise == "gumbel"):
        parts.append(f"noise={noise!r}")
    if delta:
        parts.append(f"delta={delta!r}")
    if gaps:
        parts.append("gaps=True")
    return f"top_k({', '.join(parts)})"


@overload
def top_k(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
          method: Literal["auto", "peeling", "joint", "one_shot"] = "auto", noise: str | None = None,
          delta: float = 0.0, monotonic: bool = False, gaps: Literal[False] = False, rng: RngLike = None,
          accountant: Accountant | None = None) -> IndexArray: ...
@overload
def top_k(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
          method: Literal["auto", "peeling", "joint", "one_shot"] = "auto", noise: str | None = None,
          delta: float = 0.0, monotonic: bool = False, gaps: Literal[True], rng: RngLike = None,
          accountant: Accountant | None = None) -> TopKGaps: ...


def top_k(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
          method: Literal["auto", "peeling", "joint", "one_shot"] = "auto", noise: str | None = None,
          delta: float = 0.0, monotonic: bool = False, gaps: bool = False, rng: RngLike = None,
          accountant: Accountant | None = None) -> IndexArray | TopKGaps:
    """The k candidates of largest utility, in order, privately, by the method of ``method=``.

    Privacy (under any neighbour model for which ``sensitivity`` bounds the change of every utility; with
    ``monotonic=True`` all changes also of one sign): ``"peeling"`` and one-shot Gumbel: the adaptive
    composition of k ε/k picks (ε-DP; with ``delta > 0`` (ε, δ)-DP with the larger per-pick ε0);
    ``"joint"`` and one-shot Laplace (``gaps`` included): pure ε-DP. See the module docstring and
    :data:`TOPK_METHODS`.

    Parameters
    ----------
    utilities : array_like
        One finite utility per candidate (1-D); larger is better. A pandas Series selects its index labels
        (as the selectors do).
    k : int
        The number of candidates released (1 <= k <= n).
    epsilon : float
        The privacy budget of the call (> 0).
    sensitivity : float
        Δ (> 0): the most any utility changes between neighbouring datasets.
    method : {"auto", "peeling", "joint", "one_shot"}, optional
        The method (default ``"auto"``: decided from k, n, ε, δ and ``gaps`` only, never from the data;
        glossary: [top-k method][glossary-top-k-method]).
    noise : {"gumbel", "exponential", "laplace"}, optional
        Peeling: the noise of each pick (default Gumbel: the exponential mechanism; exponential:
        permute-and-flip; Laplace: report-noisy-max). One-shot: Gumbel (default) or Laplace. Joint: none.
    delta : float, optional
        An (ε, δ) budget (peeling and one-shot Gumbel only): each pick gets the per-pick ε0 of
        :func:`dpselect.accounting.per_pick_epsilon`. Refused (before any charge) for the pure methods
        (glossary: [top-k delta][glossary-top-k-delta]).
    monotonic : bool, optional
        True declares that all utilities move in the same direction between neighbours (noise scale halved).
    gaps : bool, optional
        True: one-shot Laplace, and also release the k noisy gaps (returns a :class:`TopKGaps`; glossary:
        [free gaps][glossary-free-gaps]).
    rng : RngLike, optional
        A seed or a ``numpy.random.Generator`` (glossary: [rng][glossary-rng]).
    accountant : Accountant, optional
        Charged the method's guarantee (:meth:`TopKMethod.privacy`) before anything is drawn (glossary:
        [accountant][glossary-accountant]).

    Returns
    -------
    numpy.ndarray of int64, shape (k,), or TopKGaps
        The released candidates, largest (noisy) first; with ``gaps=True`` a :class:`TopKGaps`.

    Raises
    ------
    ValueError
        A bad argument, a noise the method does not take, ``delta > 0`` for a pure method, ``gaps=True`` with
        another method or noise: all before any charge or random bit.

    Examples
    --------
    >>> import dpselect
    >>> u = [5.0, 1.0, 9.0, 7.0]
    >>> top_k(u, k=2, epsilon=1e3, sensitivity=1.0, method="peeling", rng=0).tolist()
    [2, 3]
    >>> acc = dpselect.Accountant(epsilon=2.0)
    >>> top_k(u, k=2, epsilon=1.0, sensitivity=1.0, method="one_shot", noise="laplace", rng=0,
    ...       accountant=acc).shape
    (2,)
    >>> acc.history[0].label, acc.history[0].guarantee
    ("top_k(method='one_shot', k=2, noise='laplace')", PureDP(epsilon=1.0))
    """
    labels = None
    if _voc._is_labelled(utilities):   # a pandas Series: its labels are released, as by the selectors
        if getattr(utilities, "ndim", 1) != 1:
            raise TypeError(f"utilities must be one value per candidate (1-D), got a {type(utilities).__name__}")
        labels, (utilities,), _ = _voc._unlabel(_TOPK_SIGNATURE, (utilities,), {})
    u = check_utilities(utilities)
    kk, eps, sens, meth, nz, d, monotonic, gaps = _check_arguments(u.shape[0], k, epsilon, sensitivity, method,
                                                                   noise, delta, monotonic, gaps)
    gen = check_rng(rng)
    check_accountant(accountant)
    if meth == "joint":   # the sampler's domain (like a non-finite utility), refused before the charge
        check_joint_domain(u)
    _charge(accountant, meth, kk, eps, nz, d, gaps, monotonic)
    if gaps:
        idx, gp, h = _one_shot_gaps(u, eps, sens, kk, monotonic, gen)
        return TopKGaps(idx if labels is None else labels.to_numpy()[idx], gp, h, meth)
    out = _draw(u, kk, eps, sens, meth, nz, d, monotonic, gen)
    return out if labels is None else labels.to_numpy()[out]


_TOPK_SIGNATURE = inspect.signature(top_k)


# ---------------------------------------------------------------------------------------------
# exact laws (small inputs)
# ---------------------------------------------------------------------------------------------
def _sequences(n: int, k: int) -> np.ndarray:
    import itertools
    count = math.perm(n, k)
    if count > LAW_MAX_SEQUENCES:
        raise ValueError(f"top_k_probabilities enumerates the {count} ordered {k}-sequences of {n} candidates; "
                         f"it is meant for at most {LAW_MAX_SEQUENCES}")
    return np.array(list(itertools.permutations(range(n), k)), dtype=np.int64).reshape(count, k)


def _peeling_law(u: np.ndarray, seqs: np.ndarray, pick: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """P(seq) = Π_j P(pick j = seq_j | the candidates not yet picked), ``pick(u_rest)`` one pick's law."""
    n = u.shape[0]
    out = np.ones(seqs.shape[0])
    cache: dict[tuple, np.ndarray] = {}
    for i, s in enumerate(seqs):
        taken: list[int] = []
        for r in s:
            rest = tuple(q for q in range(n) if q not in taken)
            if rest not in cache:
                cache[rest] = pick(u[list(rest)])
            out[i] *= cache[rest][rest.index(int(r))]
            taken.append(int(r))
    return out


def _noise_fns(noise: str) -> tuple[Callable, Callable, Callable]:
    """(pdf, cdf, survival) of unit noise."""
    if noise == "laplace":
        return (lambda z: 0.5 * np.exp(-np.abs(z)),
                lambda z: np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1 - 0.5 * np.exp(-np.maximum(z, 0.0))),
                lambda z: np.where(z < 0, 1 - 0.5 * np.exp(np.minimum(z, 0.0)), 0.5 * np.exp(-np.maximum(z, 0.0))))
    return (lambda z: np.exp(-z - np.exp(-z)), lambda z: np.exp(-np.exp(-z)), lambda z: -np.expm1(-np.exp(-z)))


def _one_shot_law(a: np.ndarray, seqs: np.ndarray, noise: str) -> np.ndarray:
    """P(the k largest of a_r + N_r are seq, in order) by Gauss-Legendre quadrature (k <= 2), to ~1e-12:
    k = 1: ∫ f(z − a_s) Π_{q≠s} F(z − a_q) dz; k = 2: ∫ f(z − a_{s2}) S(z − a_{s1}) Π_{q∉s} F(z − a_q) dz."""
    k = seqs.shape[1]
    if k > 2:
        raise ValueError(f"the exact one-shot law of non-Gumbel noise is integrated for k <= 2 only, got k={k}")
    pdf, cdf, sf = _noise_fns(noise)
    lo, hi = float(a.min()) - (60.0 if noise == "laplace" else 8.0), float(a.max()) + 60.0
    offsets = np.array([-8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0])
    pts = np.unique(np.clip(np.concatenate(((a[None, :] + offsets[:, None]).ravel(), [lo, hi])), lo, hi))
    cuts = np.unique(np.concatenate([np.linspace(x, y, max(1, int(math.ceil((y - x) / 0.5))) + 1)
                                     for x, y in zip(pts[:-1], pts[1:])]))
    x, wt = np.polynomial.legendre.leggauss(24)
    z = ((cuts[1:] - cuts[:-1])[:, None] * (x[None, :] + 1.0) / 2.0 + cuts[:-1, None]).ravel()
    dz = np.repeat((cuts[1:] - cuts[:-1]) / 2.0, x.size) * np.tile(wt, cuts.size - 1)
    F = cdf(z[None, :] - a[:, None])
    out = np.empty(seqs.shape[0])
    for i, s in enumerate(seqs):
        rest = np.ones(a.shape[0], dtype=bool)
        rest[s] = False
        val = pdf(z - a[s[-1]]) * np.prod(F[rest], axis=0)
        if k == 2:
            val = val * sf(z - a[s[0]])
        out[i] = float(val @ dz)
    return out


def top_k_probabilities(utilities: ArrayLike, *, k: int, epsilon: float, sensitivity: float,
                        method: Literal["peeling", "joint", "one_shot"] = "peeling", noise: str | None = None,
                        delta: float = 0.0, monotonic: bool = False
                        ) -> tuple[IndexArray, npt.NDArray[np.float64]]:
    """The exact law of :func:`top_k`'s released k-sequence (small inputs, for audits and tests).

    Peeling: the product of the k picks' laws on the remaining candidates (Gumbel: exponential mechanism,
    exponential: permute-and-flip, Laplace: report-noisy-max, each with its per-pick ε). One-shot Gumbel: the same
    product (Plackett–Luce; Durfee & Rogers 2019). One-shot Laplace: the order statistics of u + Laplace noise,
    integrated numerically (k <= 2). Joint: :func:`dpselect.sampling.joint_probabilities`. The guarantee of
    :meth:`TopKMethod.privacy` is a property of this law (audited exactly by ``tests/test_topk.py``). Not private:
    computed from the data.

    Parameters
    ----------
    utilities, k, epsilon, sensitivity, noise, monotonic
        As for :func:`top_k`.
    method : {"peeling", "joint", "one_shot"}, optional
        As for :func:`top_k`, not ``"auto"``.
    delta : float, optional
        The top-k δ, as for :func:`top_k`.

    Returns
    -------
    (sequences, probabilities)
        ``sequences``: int64 array (m, k) of every ordered k-sequence of distinct candidates (lexicographic);
        ``probabilities``: float64 (m,), summing to 1.

    Examples
    --------
    >>> seqs, p = top_k_probabilities([0.0, 0.0, 0.0], k=2, epsilon=1.0, sensitivity=1.0)
    >>> seqs.shape, np.allclose(p, 1 / 6)
    ((6, 2), True)
    """
    u = check_utilities(utilities)
    kk = check_k(k, u.shape[0])
    eps = check_positive(epsilon, "epsilon")
    sens = check_positive(sensitivity, "sensitivity")
    if method == "auto" or _check_method(method) == "auto":
        raise ValueError("top_k_probabilities needs a concrete method ('peeling', 'joint' or 'one_shot'), not 'auto'")
    monotonic = check_bool(monotonic, "monotonic")
    spec = TOPK_METHODS[method]
    nz = spec._check_noise(noise)
    d = _check_method_delta(spec, delta, kk, nz)
    seqs = _sequences(u.shape[0], kk)
    if method == "joint":
        pj = joint_probabilities(u, k=kk, epsilon=eps, sensitivity=sens, monotonic=monotonic)
        return seqs, _joint_as_sequences(pj, seqs)
    if method == "one_shot" and nz == "laplace":
        a = u * (eps / (sens * (1 if monotonic else 2) * kk))
        p = _one_shot_law(a, seqs, "laplace")
        return seqs, p / p.sum()
    noise_ = nz or "gumbel"
    eps_pick, split = topk_budget(eps, kk, d, bounded_range=noise_ == "gumbel")
    e0 = eps_pick / split
    if noise_ == "gumbel":
        def pick(v: np.ndarray) -> np.ndarray:
            return np.asarray(_m.exponential_probabilities(v, epsilon=e0, sensitivity=sens, monotonic=monotonic))
    elif noise_ == "exponential":
        def pick(v: np.ndarray) -> np.ndarray:
            return np.asarray(_m.permute_and_flip_probabilities(v, epsilon=e0, sensitivity=sens, monotonic=monotonic))
    else:
        def pick(v: np.ndarray) -> np.ndarray:
            return np.asarray(_m.report_noisy_max_probabilities(v, epsilon=e0, sensitivity=sens, monotonic=monotonic,
                                                                noise="laplace"))
    p = _peeling_law(u, seqs, pick)
    return seqs, p / p.sum()


def _joint_as_sequences(p: Mapping[tuple[int, ...], float], seqs: np.ndarray) -> np.ndarray:
    """joint_probabilities' answer (sequence -> probability) in the lexicographic order of ``seqs``."""
    return np.array([p.get(tuple(int(v) for v in s), 0.0) for s in seqs], dtype=np.float64)
