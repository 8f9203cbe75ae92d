"""The papers' datasets: their loaders, and the **public facts** the privacy proofs use as public parameters.

The loaders read a path: tables (:func:`load_nltcs`, :func:`load_acs`, :func:`load_adult`, :func:`load_table`)
and edge lists (:func:`load_edge_list`, :func:`load_dataset_graph`). The public facts are recorded here, with
their sources, so that the reproductions pass them explicitly instead of reading them from the (private, in the
papers' model) records.

Finding the data is not the library's business: its loaders take a path, and the data-root discovery
(``DPSELECT_DATA`` or ``../shared/datasets``) lives in the reproduction layer,
:func:`dpselect.experiments.data_root` / :func:`dpselect.experiments.data_path`.
"""
from __future__ import annotations

from .graphs._graph import load_dataset_graph, load_edge_list
from .tabular import load_acs, load_adult, load_nltcs, load_table

__all__ = ["load_nltcs", "load_acs", "load_adult", "load_table", "load_edge_list", "load_dataset_graph",
           "PUBLIC_GRAPH_MAX_DEGREE", "PUBLIC_TABLE_SIZE"]

#: Public bound D on the maximum degree of the SNAP graphs, for ΔEBC and δ^EBC (edge-DP): the values the
#: thesis (Sec. 6.5, "Datasets", Δ(G)) states and uses for Enron, DBLP and GitHub. Each equals the
#: published graph's maximum degree (SNAP's statistics), so it bounds every degree of those files.
PUBLIC_GRAPH_MAX_DEGREE: dict[str, int] = {"enron": 1383, "dblp": 343, "github": 9458}

#: Public bound N on the number of records, for ΔIG = log2(N + 1) + 1/ln 2 (DiffPID3): the dataset sizes
#: the thesis (Sec. 7.4, "Datasets") and the paper (Sec. 6.3) publish -- NLTCS 21,574 individuals, ACS
#: 47,461 rows, Adult 45,222 records without missing values. A training fold is a subset, so N bounds it.
PUBLIC_TABLE_SIZE: dict[str, int] = {"nltcs": 21574, "acs": 47461, "adult": 45222}
