"""Multi-objective private selection: the Pareto score, its sensitivity function δ^PS, PrivPareto and
PrivAgg, in their global- and local-sensitivity versions (paper Sections 4 and 5).

Candidates are the rows of an (n, m) matrix ``U`` (``U[r, i] = u_i(x, r)``); every objective is
maximised. Privacy is ε-DP under the neighbour model for which the per-objective sensitivities were
derived (add/remove one record for TPR/TNR, add/remove one edge for the graph utilities, ...).

Definitions (paper Def. 4.3 and 4.5)
------------------------------------
* r' *dominates* r iff u_i(r') > u_i(r) for **every** objective i (strict).
* Pareto score PS(r) = −|{r' ≠ r : r' dominates r}|, in [−(n − 1), 0]; global sensitivity n − 1.
* With U_i^{±t}(r) = u_i(r) ± Σ_{j=0}^{t} δ_i(x, j, r) (note the cumulative sum over j):
  δ^PS(x, t, r) = |{r' ≠ r dominating r : ∃i U_i^{−t}(r') <= U_i^{+t}(r)}|
                + |{r' ≠ r not dominating r : ∀i U_i^{+t}(r') >= U_i^{−t}(r)}|.

Fast evaluation of δ^PS
-----------------------
Write H = U^{+t}, L = U^{−t}. If L(r') > H(r) in every coordinate then u(r') >= L(r') > H(r) >= u(r),
so r' dominates r; and if r' dominates r then H(r') >= u(r') > u(r) >= L(r). Hence the first set is
dom(r) minus {r' : L(r') > H(r) in every i}, the second is {r' ≠ r : H(r') >= L(r) in every i} minus
dom(r), and the dominance sets cancel:

    δ^PS(x, t, r) = #{r' : H(r') >= L(r) in every i} − 1 − #{r' : L(r') > H(r) in every i}

(the −1 removes r itself, which always satisfies H(r) >= L(r)). Both terms are dominance counts of
the shifted points, computed for all candidates at once in O(n log n) for m = 2
(:mod:`dpselect._dominance`); the tests compare this with a literal implementation of Def. 4.5.

Layout
------
The package splits by concern; this module is the public import path and re-exports every name (and
the internals the tests and benchmarks reach for):

* :mod:`._pareto_score` — PS and the δ^PS engine (:func:`pareto_score`, :func:`pareto_sensitivity`);
  its tuning constants (``_BLOCK_MAX_CANDIDATES``, ...) are read there, so patch them there;
* :mod:`._aggregate` — δ^agg (:func:`aggregate_sensitivity`) and the aggregate utility;
* :mod:`._select` — PrivPareto and PrivAgg and their exact output distributions;
* :mod:`._metric` — metric C (:func:`metric_c`).
"""
from __future__ import annotations

from ..vocabulary import GLOBAL_MECHANISMS, LOCAL_MECHANISMS, MECHANISMS  # noqa: F401 (re-exported)
from ._aggregate import _aggregate, _check_weights, aggregate_sensitivity  # noqa: F401
from ._metric import _indices, metric_c  # noqa: F401
from ._pareto_score import (  # noqa: F401 (internals re-exported for the tests and benchmarks)
    Sensitivities,
    _as_functions,
    _far_dominated,
    _check_sensitivities,
    _matrix,
    _pareto_sf,
    _pareto_shift,
    _ParetoDelta,
    _saturation,
    _Thresholds,
    pareto_score,
    pareto_sensitivity,
)
from ._select import (  # noqa: F401
    _prepare,
    _probabilities,
    _resolve_mechanism,
    _select,
    priv_agg,
    priv_agg_probabilities,
    priv_pareto,
    priv_pareto_probabilities,
)

__all__ = [
    "metric_c",
    "pareto_score",
    "pareto_sensitivity",
    "aggregate_sensitivity",
    "priv_pareto",
    "priv_agg",
    "priv_pareto_probabilities",
    "priv_agg_probabilities",
    "MECHANISMS",
]
