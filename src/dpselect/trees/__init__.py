"""Private decision trees: DP-MOET (paper Sec. 6) and DiffPID3 (thesis Ch. 7), with their tree representation.

* :func:`dp_moet` / :func:`nodp_moet` -- evolutionary multi-objective trees chosen by PrivPareto or PrivAgg
  (neighbours: add/remove one record; ``epsilon`` for the whole run);
* :func:`diffpid3` -- an ID3 tree whose splits are chosen by information gain (:func:`information_gain`,
  local sensitivity :func:`ig_sensitivity`), B-DP under add/remove one record;
* :class:`Tree`, :class:`TreeSpace`, :func:`predict_many` -- flat-array binary trees and vectorised
  prediction; :class:`TabularData` -- the encoded table both consume (loaders in :mod:`dpselect.datasets`).

>>> import dpselect
>>> data = dpselect.datasets.load_table({"x": [0, 1] * 50, "y": [0, 1] * 50}, "y", categories={"x": [0, 1], "y": [0, 1]})
>>> tree = dpselect.trees.diffpid3(data, epsilon=50.0, depth=1, n_max=100, rng=0)
>>> tree.predict(data).shape
(100,)
"""
from __future__ import annotations

from ..tabular import TabularData
from ..utilities.information_gain import ig_sensitivity, information_gain
from ._diffpid3 import DIFFPID3_MECHANISMS, DiffPID3Tree, dampen_ig, diffpid3, discretise, ig_shift
from ._dpmoet import APPROACHES, BUDGETS, CompressedTable, MOETResult, dp_moet, metric_c, nodp_moet
from ._tree import Tree, TreeSpace, crossover, mutate, predict_many, prune, random_population, random_tree

__all__ = [
    "Tree", "TreeSpace", "predict_many", "random_tree", "random_population", "crossover", "mutate", "prune",
    "dp_moet", "nodp_moet", "metric_c", "MOETResult", "CompressedTable", "APPROACHES", "BUDGETS",
    "diffpid3", "DiffPID3Tree", "discretise", "dampen_ig", "ig_shift", "DIFFPID3_MECHANISMS",
    "information_gain", "ig_sensitivity", "TabularData",
]
