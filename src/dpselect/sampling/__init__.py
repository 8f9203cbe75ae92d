"""Exact (floating-point-safe) noisy-max sampling with partially sampled random numbers.

Every selector in :mod:`dpselect.mechanisms` is a *noisy maximum*: it outputs the index (or the k
first indices, in order) of the largest values of ``X_r = a_r + N_r``, where ``a_r`` is a score
(ε·u(r)/(2Δu), ε·D(x, r)/2, ...) and the ``N_r`` are i.i.d. noise variates: Gumbel noise gives the
exponential mechanism (and, taking the k largest at once, k peeled exponential-mechanism picks),
exponential noise permute-and-flip, Laplace noise the classic report-noisy-max.

Sampling the noise in float64 and taking ``argmax`` is **not** exactly that mechanism: the float
noise takes finitely many values, so an output whose probability is below the float grid can be
impossible on a dataset x and possible on a neighbour y, an infinite privacy loss (Mironov 2012 for
Laplace, Ilvento 2020 for the exponential mechanism). Here each noise variate is N = F⁻¹(U) for a
uniform U whose binary expansion is drawn *lazily* from the generator's random bits: 64 bits first,
then 64 more at a time, only for the candidates whose order is not yet certain. Because N is a
monotone function of U, the bits drawn so far pin N to an interval, and the maximum is returned only
once those intervals (plus rigorous error bounds on the scores) prove it. The result is then exactly
the argmax of the infinitely precise ``a_r + F⁻¹(U_r)``: the output law equals the ideal mechanism's
for the inputs as given (floats read as exact rationals), using only random bits. This is the
"partially sampled random numbers" idea of OpenDP's Gumbel report-noisy-max.

How the certainty is reached, cheapest first:

1. float64 for every candidate, with a proven error bound per value (noise evaluated at the left
   end of its 64-bit cell; bounds derived in :func:`_stage1`), in blocks of 2^16 candidates. The
   ~n/2^19 cells with U within 2^-20 of 0 or 1, where one evaluation is not accurate enough, get the
   enclosures of step 2 at once and take part in the threshold like the others, so this step never
   gives up on the whole array. Almost always it alone certifies the answer: up to 2^16 candidates
   without a base measure, every word in the bulk and gaps beyond 4x the bound, it answers at once
   (:func:`_bulk_top`; steps 1-2 would certify the same picks from the same words).
2. For the few candidates that could still be in the answer: float64 at both ends of the 64-bit cell.
3. For candidates whose order is still uncertain (near-ties, ~1e-14 apart): exact scores (a
   ``fractions.Fraction`` from a callback) and the noise in ``decimal`` interval arithmetic at a
   precision that represents the uniform's bits exactly, adding 64 bits per round. The decimal
   module's ``ln``/``exp`` are correctly rounded, so widening each result by one unit in the last
   place gives a rigorous enclosure.

What is *not* covered: the time taken depends on the data (a timing side channel; see the README's
threat model), and the float error bounds assume numpy's ``log``/``log1p``/``expm1`` are accurate to a
few units in the last place (they are documented to be within 1-4 ulp; we allow ~9).

Layout
------
This package is the public import path; it re-exports every name (and the internals that the tests, the
median and :mod:`dpselect.dask` use). By concern:

* ``_noise`` — the noise families (:data:`NOISES`) and the enclosures of one noise variate, float and decimal;
* ``_topk`` — :func:`noisy_top_k` (one noise draw per candidate: stages 1-3 above) and ``shortlist_top_k``;
  the block size ``_CHUNK`` and the bulk bounds ``_BULK_*`` are read there (patch them there);
* ``_batch`` — :func:`noisy_top_k_batch`;
* ``_peel`` — :func:`noisy_top_k_peeled` (fresh noise per pick); its ``_PEEL_*`` switches and counters and
  ``_fallback_bits`` are read there.

:func:`laplace_below` and :func:`discrete_laplace` live in :mod:`dpselect._exact_random` with the other
exact-randomness primitives.
"""
from __future__ import annotations

from .._exact_random import Dec as _Dec, discrete_laplace, laplace_below  # noqa: F401 (re-exported)
from ._batch import noisy_top_k_batch
from ._joint import joint_probabilities, joint_top_k
from ._noise import (  # noqa: F401 (internals re-exported for the tests)
    _DBL_MAX,
    _REL,
    _TINY,
    NOISES,
    _bits64,
    _dec_noise_point,
    _float_enclosure,
    _py_enclosure,
)
from ._peel import (  # noqa: F401
    _PEEL_STATS,
    _fallback_bits,
    _noisy_top_k_peeled,
    _peel_lowered,
    noisy_top_k_peeled,
)
from ._topk import (  # noqa: F401
    _BULK_HI,
    _BULK_LO,
    _BULK_TAU,
    _Refiner,
    _bulk_shortlist,
    _certify,
    _enclosed_shortlist,
    _finish,
    _finish_sub,
    _refine,
    _round_out,
    _score_bounds,
    _stage1,
    noisy_top_k,
    shortlist_top_k,
)

__all__ = ["noisy_top_k", "joint_top_k", "joint_probabilities", "noisy_top_k_batch",
           "noisy_top_k_peeled", "laplace_below", "discrete_laplace", "NOISES"]
