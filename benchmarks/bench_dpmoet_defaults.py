"""Accuracy of ``DPMOETClassifier`` on Adult by selection approach (issue 21 item 13).

Adult (45,222 records) split 0.7/0.3 with ``train_test_split(0.3, rng=0)``; ``DPMOETClassifier`` with every
public quantity given (the schema's [0, 1] scaling and category codes), ε = 1 and the defaults otherwise,
``random_state`` 0-4; test accuracy against the constant predictor (always the majority class of the
test set). Not a timing benchmark: it prints mean, min and max over the seeds.

Run: ``python benchmarks/bench_dpmoet_defaults.py [--seeds 5]``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import dpselect  # noqa: E402
from dpselect.experiments import data_path  # noqa: E402
from dpselect.sklearn import DPMOETClassifier  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    data = dpselect.datasets.load_adult(data_path("tabular"))
    train, test = data.train_test_split(0.3, rng=0)
    cats = {j: list(range(int(data.n_values[j]))) for j in np.flatnonzero(data.categorical)}
    public = dict(feature_bounds=(0.0, 1.0), categories=cats, classes=[0, 1])
    const = max(test.y.mean(), 1 - test.y.mean())
    print(f"constant predictor: {const:.3f}")
    for name, kw in (("accuracy (default)", {}), ("pareto", {"approach": "pareto"}),
                     ("agg (3, 2)", {"approach": "agg"}),
                     ("accuracy, generations=10", {"generations": 10})):
        accs, t0 = [], time.perf_counter()
        for seed in range(args.seeds):
            clf = DPMOETClassifier(epsilon=1.0, random_state=seed, **public, **kw).fit(train.X, train.y)
            accs.append(clf.score(test.X, test.y))
        print(f"{name:26s} mean {np.mean(accs):.3f}  min {np.min(accs):.3f}  max {np.max(accs):.3f}  "
              f"({(time.perf_counter() - t0) / args.seeds:.1f} s a fit)", flush=True)


if __name__ == "__main__":
    main()
