"""Private model selection on Adult with scikit-learn models (dpselect.sklearn.select_model).

A common workflow: several classifiers are trained on data that may be used freely (here: one part of
Adult), and the best one must be chosen on a *private* validation set (another part). Evaluating every
model on the private set and reporting the best leaks the validation records; ``select_model`` chooses
with ε-DP instead (add/remove one validation record), by TPR and TNR (PrivPareto) or by a weighted sum.

Run: ``python examples/adult_model_selection.py`` (about a minute on a laptop).
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

import dpselect
from dpselect.datasets import PUBLIC_TABLE_SIZE
from dpselect.experiments import data_path  # the project's copy of the data (DPSELECT_DATA)
from dpselect.sklearn import DiffPID3Classifier, select_model


def main() -> None:
    data = dpselect.datasets.load_adult(data_path("tabular"))  # 45,222 records: numeric columns scaled, categorical as codes
    train, val = data.train_test_split(0.5, rng=0)
    categorical = np.flatnonzero(data.categorical)
    models = {
        "logistic regression": LogisticRegression(max_iter=1000),
        "naive Bayes": GaussianNB(),
        "decision tree (depth 3)": DecisionTreeClassifier(max_depth=3, random_state=0),
        "decision tree (depth 10)": DecisionTreeClassifier(max_depth=10, random_state=0),
        "random forest": RandomForestClassifier(n_estimators=50, max_depth=12, random_state=0, n_jobs=1),
        "gradient boosting": HistGradientBoostingClassifier(categorical_features=categorical, random_state=0),
        # a model that is itself ε-DP on its training set (public encoding: the schema of Adult)
        "DiffPID3 (ε = 1)": DiffPID3Classifier(
            epsilon=1.0, depth=5, n_max=PUBLIC_TABLE_SIZE["adult"], feature_bounds=(0.0, 1.0),
            categories={int(j): list(range(int(data.n_values[j]))) for j in categorical}, random_state=0),
    }
    for name, model in models.items():
        t0 = time.perf_counter()
        model.fit(train.X, train.y)
        print(f"fitted {name:26s} in {time.perf_counter() - t0:5.1f} s")

    # Non-private view, for comparison only (this is what must NOT be published)
    preds = np.stack([m.predict(val.X) for m in models.values()])
    U, _ = dpselect.sklearn.model_objectives(val.y, preds, ("tpr", "tnr", "accuracy"))
    print("\nvalidation (private) TPR / TNR / accuracy:")
    for name, row in zip(models, U):
        print(f"  {name:26s} {row[0]:.3f} / {row[1]:.3f} / {row[2]:.3f}")

    # ε-DP choices, each spending its own ε on the validation set
    for eps in (0.01, 0.1, 1.0):
        pareto = select_model(models, y=val.y, predictions=preds, epsilon=eps, rng=1)
        agg = select_model(models, y=val.y, predictions=preds, epsilon=eps, approach="aggregate",
                           objective_weights={"tpr": 0.5, "tnr": 0.5}, rng=1)
        acc = select_model(models, y=val.y, predictions=preds, epsilon=eps, objectives=("accuracy",), rng=1)
        print(f"ε = {eps:<5}: Pareto (TPR, TNR) -> {pareto}; balanced accuracy -> {agg}; accuracy -> {acc}")


if __name__ == "__main__":
    main()
