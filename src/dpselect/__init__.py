"""dpselect: differentially private selection with global and local sensitivity."""
from __future__ import annotations

from ._version import __version__
from .exceptions import PrivacyLeakWarning  # noqa: E402
from .sensitivity import SensitivityFunction, constant, maximum, weighted_sum  # noqa: E402
from .dampening import dampen  # noqa: E402
from .mechanisms import (  # noqa: E402
    exponential,
    exponential_probabilities,
    local_dampening,
    local_dampening_probabilities,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max,
    report_noisy_max_probabilities,
    shifted_local_dampening,
    shifted_local_dampening_probabilities,
)
from . import audit  # noqa: E402
# The mechanism registry: imported before every module that takes ``mechanism=``, so that the
# built-in mechanisms are registered before any name is looked up.
from . import registry  # noqa: E402
from .registry import MECHANISMS, Mechanism, get_mechanism  # noqa: E402

__all__ = [
    "SensitivityFunction", "constant", "maximum", "weighted_sum", "dampen",
    "exponential", "exponential_probabilities", "permute_and_flip", "permute_and_flip_probabilities",
    "report_noisy_max", "report_noisy_max_probabilities", "local_dampening", "local_dampening_probabilities",
    "shifted_local_dampening", "shifted_local_dampening_probabilities", "audit", "__version__", "PrivacyLeakWarning",
    "registry", "Mechanism", "MECHANISMS", "get_mechanism",
]

from .apps.median import median, median_distribution, median_rank  # noqa: E402
from .utilities.median import median_sensitivity, median_utility  # noqa: E402

__all__ += ["median", "median_distribution", "median_rank", "median_utility", "median_sensitivity"]

from .quantiles import clipping_bounds, quantile, quantiles  # noqa: E402

__all__ += ["quantiles", "quantile", "clipping_bounds"]

from .multiobjective import (  # noqa: E402
    aggregate_sensitivity, pareto_score, pareto_sensitivity, priv_agg, priv_agg_probabilities, priv_pareto,
    priv_pareto_probabilities,
)

__all__ += ["pareto_score", "pareto_sensitivity", "aggregate_sensitivity", "priv_pareto", "priv_agg",
            "priv_pareto_probabilities", "priv_agg_probabilities"]

from .graphs import Graph, from_edges, from_networkx, load_dataset_graph, load_edge_list  # noqa: E402
from .apps.motkin import dp_motkin_agg, dp_motkin_pareto
from .apps.priv_topk import priv_topk  # noqa: E402

__all__ += ["Graph", "from_edges", "from_networkx", "load_edge_list", "load_dataset_graph",
            "dp_motkin_pareto", "dp_motkin_agg", "priv_topk"]

from .tabular import TabularData, load_acs, load_adult, load_nltcs, load_table  # noqa: E402
from .trees import Tree, TreeSpace, predict_many  # noqa: E402
from .apps.dpmoet import dp_moet, metric_c, nodp_moet  # noqa: E402
from .apps.diffpid3 import diffpid3  # noqa: E402
from .utilities.information_gain import information_gain, ig_sensitivity  # noqa: E402

__all__ += ["TabularData", "load_nltcs", "load_acs", "load_adult", "load_table", "Tree", "TreeSpace",
            "predict_many", "dp_moet", "nodp_moet", "metric_c", "diffpid3", "information_gain",
            "ig_sensitivity"]

# Private model selection needs only the models' predictions (no scikit-learn import); the estimators of
# dpselect.sklearn import scikit-learn on first use.
from .sklearn import select_model  # noqa: E402

__all__ += ["select_model"]

# Privacy accounting: a budget that refuses; every selector takes accountant=.
from .accounting import Accountant  # noqa: E402
from .exceptions import BudgetExceededError  # noqa: E402

__all__ += ["Accountant", "BudgetExceededError"]

# Private selection from private candidates: dpselect.tune.select_private_candidate.
from . import tune  # noqa: E402

__all__ += ["tune"]
