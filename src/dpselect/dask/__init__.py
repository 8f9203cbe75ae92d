"""Private selection on Dask: candidates and data that outgrow one machine (``pip install dpselect[dask]``).

The same mechanisms, keywords and exact output laws as the in-memory selectors, over dask arrays and
DataFrames (a noisy top-k per partition, then an exact reduce of about k candidates per partition):

* :func:`exponential`, :func:`permute_and_flip`, :func:`report_noisy_max`, :func:`local_dampening`;
* :func:`top_k`: :func:`dpselect.top_k` (peeling, joint, one-shot, gaps) with the same law;
* :func:`frequent_items`: private top-k most frequent items from (user, item) rows, each user's
  contribution bounded;
* :func:`quantiles`: private quantiles of a dask Series (exact distinct values or public bins, then
  the law of :func:`dpselect.quantiles`, bounded or unbounded);
* :func:`degree`, :func:`degree_sensitivity`, :func:`egocentric_density_sensitivity` (graph statistics
  from a dask edge list, for DP-MOTkIN) and :func:`pareto_score` (m = 2, out of core).

Every selector takes the in-memory selector's keywords with the same meaning, checks them with the same checks
(the same error messages) and charges ``accountant=`` exactly what the in-memory call charges (the same
guarantee and label), before any random bit is drawn; :func:`frequent_items` charges its selector's guarantee
the same way. The exceptions: ``utility=`` names a DataFrame's column; ``base_measure`` (one w per candidate)
needs utilities given as a dask array of known chunk sizes; ``exact=False`` (the in-memory float sampler) is
refused, as the partition step and the reduce sample exactly only; ``size=N`` makes N passes over the data (the
law of N calls); :func:`quantiles` takes no ``counts`` (the series holds the records) and its ``series`` in
place of ``values``.

The code runs on whatever dask scheduler is active: the local default, a ``distributed.LocalCluster``
or a real cluster (``distributed.Client("tcp://scheduler:8786")``); see docs/scale.md. The workers
see the raw data; only the value these functions return is differentially private.

Importing this module silences two routine INFO-grade messages that ``distributed``'s P2P shuffle logs at
WARNING level on every shuffle ("Shuffle ... initialized by task ..." and "... deactivated due to
stimulus ..."); its other shuffle warnings (restarts, failures) still show. See
:func:`quiet_routine_shuffle_logs`.
"""
from __future__ import annotations

try:
    import dask  # absolute import: the real dask, not this package
    import dask.array
    import dask.dataframe  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "dpselect.dask needs the optional dependencies dask[array,dataframe] and distributed: "
        "pip install 'dpselect[dask]'"
    ) from exc

from ._logs import quiet_routine_shuffle_logs
from ._graph import degree, degree_sensitivity, egocentric_density_sensitivity, max_degree, pareto_score
from ._items import bounded_item_counts, frequent_items
from ._quantiles import quantiles
from ._select import NOISES, exponential, local_dampening, permute_and_flip, report_noisy_max
from ._topk import top_k

quiet_routine_shuffle_logs()

__all__ = [
    "NOISES",
    "exponential",
    "permute_and_flip",
    "report_noisy_max",
    "local_dampening",
    "top_k",
    "frequent_items",
    "bounded_item_counts",
    "degree",
    "degree_sensitivity",
    "egocentric_density_sensitivity",
    "max_degree",
    "pareto_score",
    "quiet_routine_shuffle_logs",
    "quantiles",
]
