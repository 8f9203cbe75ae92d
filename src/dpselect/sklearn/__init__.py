"""dpselect for scikit-learn users (``pip install "dpselect[sklearn]"``).

* :func:`select_model`: private model selection. Given already-fitted classifiers and a private
  validation set, choose the best one (or ``k``) by TPR, TNR and/or accuracy with PrivPareto or
  PrivAgg, ε-DP with respect to adding or removing one validation record. It needs only the models'
  ``predict`` (or precomputed predictions), not scikit-learn itself.
* :class:`DiffPID3Classifier` and :class:`DPMOETClassifier`: the private decision trees of
  :mod:`dpselect.trees._diffpid3` and :mod:`dpselect.trees._dpmoet` as scikit-learn estimators
  (``fit/predict/predict_proba/score``, ``get_params/set_params``, usable in a ``Pipeline``), with the
  public bounds of their privacy proofs as constructor parameters. They need scikit-learn (>= 1.6).
* :class:`PrivateSearchCV`: a private ``RandomizedSearchCV``; every run fits a DP estimator that declares
  its guarantee (``privacy_guarantee()``) and scores it privately, :func:`dpselect.tune.select_private_candidate`
  keeps the best run; the whole search is (ε, δ)-DP (``privacy_``).

Budgets: ``select_model(..., accountant=acc)`` and the estimators' ``accountant=`` constructor parameter
charge a :class:`dpselect.Accountant` once per selection / per ``fit``, before any random bit is drawn
(a release the budget cannot pay raises :class:`dpselect.BudgetExceededError`). ``sklearn.base.clone``
gives every clone the same accountant object, so the fits of a ``cross_val_score`` or a grid search are
all charged to one budget.

Not private around them: cross-validated selection (``GridSearchCV``, ``cross_val_score``) on the
private records and preprocessing *fitted* on them (a scaler, an encoder learning categories) release
statistics of those records outside the ε of ``fit``; see the estimators' docstrings.
"""
from __future__ import annotations

from typing import Any

from ._select import APPROACHES, OBJECTIVES, model_objectives, select_model

__all__ = ["select_model", "model_objectives", "OBJECTIVES", "APPROACHES", "DiffPID3Classifier",
           "DPMOETClassifier", "EXPECTED_FAILED_CHECKS", "PrivateSearchCV"]

_ESTIMATORS = ("DiffPID3Classifier", "DPMOETClassifier", "EXPECTED_FAILED_CHECKS")


def __getattr__(name: str) -> Any:
    # the estimators need scikit-learn: imported on first use, so select_model works without it
    if name in _ESTIMATORS:
        try:
            from . import _estimators
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(f"dpselect.sklearn.{name} needs scikit-learn >= 1.6: pip install 'dpselect[sklearn]' "
                              f"({exc})") from exc
        return getattr(_estimators, name)
    if name == "PrivateSearchCV":
        try:
            from . import _search
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(f"dpselect.sklearn.{name} needs scikit-learn >= 1.6: pip install 'dpselect[sklearn]' "
                              f"({exc})") from exc
        return _search.PrivateSearchCV
    raise AttributeError(f"module 'dpselect.sklearn' has no attribute {name!r}")
