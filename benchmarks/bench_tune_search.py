"""Private hyperparameter search on Adult (issue 25 target 2): ``PrivateSearchCV`` against two baselines.

Adult (45,222 records) split 0.7/0.3 with ``train_test_split(0.3, rng=0)``, every public quantity given
(the schema's [0, 1] scaling and category codes, ``classes``, ``n_max = 50,000``). ``DiffPID3Classifier``
searched over ``depth`` in 2..4, ``mechanism`` in {exponential, local dampening, shifted local dampening}
and ``budget_split`` in {0.25, 0.5, 0.75} (the fraction of each level's ε/(d + 1) spent on the nodes' noisy
counts, the rest on the split or the leaf's class counts): 27 configurations, the issue's depth / mechanism /
budget split (depths 5-6 cost 3-14 s a fit on Adult, out of reach of a 50-seed run on two shared cores).
``bins`` is fixed at the default 10 (an earlier version of this benchmark, before ``budget_split``
existed, searched bins in {5, 10, 20} as its third axis).
Each procedure is (ε, δ)-DP on the training part (add/remove one record) at the same (ε, δ):

* **search**: ``PrivateSearchCV(..., epsilon=ε, delta=δ, method="truncated_negative_binomial", eta=0.5,
  mean_runs=10, validation_fraction=0.2)``: per-run ε from ``dpselect.tune.tuning_privacy``;
* **(a) composed grid**: k = 10 configurations drawn in advance from the same distributions (per seed,
  independently of the data), each fitted at ε/k on the training part of a Bernoulli(0.2) split, one
  picked by the exponential mechanism (ε, monotone accuracy counts of sensitivity 1) on the validation
  part (parallel composition: max(ε, ε) = ε; optimal composition would give ε0 = 0.1006 instead of 0.1
  at ε = 1, δ = 1e-5, not worth a column);
* **(b) hand-picked**: the single configuration chosen in advance (the middle of the space: depth 3, local
  dampening, budget split 0.5, 10 bins, the estimator's defaults), fitted at the full ε on the whole
  training part (the same configuration as before ``budget_split`` was searched). (Nine single fits at
  ε = 0.3 were seen while timing, before this choice was fixed; they favoured depth 2, which was not
  taken.)

Test accuracy on the 30% test part, mean over seeds with a 95% interval of the mean (1.96 standard
errors), and the paired differences search − (a) and search − (b) with their 95% intervals.

Run: ``python benchmarks/bench_tune_search.py [--seeds 50] [--epsilons 0.5,1,2] [--processes 1]``
(writes its section of benchmarks/RESULTS.md). One (ε, seed) job is about 20 fits (E[K] = 10 search runs,
10 grid fits, 1 hand-picked fit): 50 seeds x 3 ε take about 16 min on an otherwise idle 2-core machine with
``--processes 2`` (35 min for 30 seeds when the cores were shared with four other jobs).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from _common import host_header, record  # noqa: E402

import dpselect  # noqa: E402
from dpselect.datasets import data_path  # noqa: E402
from dpselect.sklearn import DiffPID3Classifier, PrivateSearchCV  # noqa: E402

DELTA = 1e-5
MEAN_RUNS = 10
K = 10
SPACE = {"depth": [2, 3, 4], "mechanism": ["exponential", "local_dampening", "shifted_local_dampening"],
         "budget_split": [0.25, 0.5, 0.75]}                    # bins: the default 10 throughout
HAND = {"depth": 3, "mechanism": "local_dampening", "bins": 10, "budget_split": 0.5}

_DATA: dict = {}


def _data():
    if not _DATA:
        data = dpselect.datasets.load_adult(data_path("tabular"))
        train, test = data.train_test_split(0.3, rng=0)
        cats = {j: list(range(int(data.n_values[j]))) for j in np.flatnonzero(data.categorical)}
        _DATA.update(train=train, test=test,
                     public=dict(feature_bounds=(0.0, 1.0), categories=cats, classes=[0, 1], n_max=50_000))
    return _DATA


def search(eps: float, seed: int) -> tuple[float, float, float]:
    d = _data()
    s = PrivateSearchCV(DiffPID3Classifier(**d["public"]), SPACE, epsilon=eps, delta=DELTA,
                        method="truncated_negative_binomial", eta=0.5, mean_runs=MEAN_RUNS, random_state=seed)
    s.fit(d["train"].X, d["train"].y)
    return s.score(d["test"].X, d["test"].y), s.run_epsilon_, s.privacy_.epsilon(DELTA)


def composed_grid(eps: float, seed: int) -> float:
    d = _data()
    rng = np.random.default_rng([seed, 1])
    names = sorted(SPACE)
    grid = [{k: SPACE[k][int(rng.integers(len(SPACE[k])))] for k in names} for _ in range(K)]
    X, y = d["train"].X, d["train"].y
    valid = rng.random(len(y)) < 0.2
    models = [DiffPID3Classifier(epsilon=eps / K, random_state=int(rng.integers(2**63 - 1)), **p, **d["public"])
              .fit(X[~valid], y[~valid]) for p in grid]
    counts = np.array([np.count_nonzero(m.predict(X[valid]) == y[valid]) for m in models], dtype=np.float64)
    pick = int(dpselect.exponential(counts, epsilon=eps, sensitivity=1.0, monotonic=True, rng=rng))
    return models[pick].score(d["test"].X, d["test"].y)


def hand_picked(eps: float, seed: int) -> float:
    d = _data()
    m = DiffPID3Classifier(epsilon=eps, random_state=seed, **HAND, **d["public"]).fit(d["train"].X, d["train"].y)
    return m.score(d["test"].X, d["test"].y)


def job(args: tuple[float, int]) -> tuple[float, int, float, float, float, float, float]:
    eps, seed = args
    acc_s, run_eps, cert = search(eps, seed)
    return eps, seed, acc_s, composed_grid(eps, seed), hand_picked(eps, seed), run_eps, cert


def ci(x: np.ndarray) -> str:
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return f"{x.mean():.4f} ± {half:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--epsilons", default="0.5,1,2")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip()     # the code that runs
    d = _data()
    t0 = time.perf_counter()
    DiffPID3Classifier(epsilon=1.0, random_state=0, **HAND, **d["public"]).fit(d["train"].X, d["train"].y)
    t_fit = time.perf_counter() - t0
    # search: E[K] = 10 fits on 80% of the training part; (a): 10 fits; (b): 1 fit
    est = t_fit * (0.8 * MEAN_RUNS + 0.8 * K + 1) * len(epsilons) * args.seeds / args.processes
    print(f"one fit (depth 3, LD, budget split 0.5, 10 bins, {len(d['train'].y)} records): {t_fit:.2f} s; "
          f"estimated total {est / 60:.1f} min", flush=True)
    jobs = [(e, s) for e in epsilons for s in range(args.seeds)]
    t0 = time.perf_counter()
    if args.processes > 1:
        import multiprocessing as mp
        rows = []
        with mp.get_context("fork").Pool(args.processes) as pool:
            for i, row in enumerate(pool.imap_unordered(job, jobs, chunksize=1)):
                rows.append(row)
                if i % 10 == 9:
                    print(f"  {i + 1}/{len(jobs)} jobs, {time.perf_counter() - t0:.0f} s", flush=True)
    else:
        rows = []
        for j in jobs:
            rows.append(job(j))
            if j[1] % 10 == 9:
                print(f"  ε = {j[0]}: {j[1] + 1} seeds, {time.perf_counter() - t0:.0f} s", flush=True)
    wall = time.perf_counter() - t0
    R = np.array(rows)
    lines = ["## Private hyperparameter search on Adult (`bench_tune_search.py`, issue 25)", "",
             host_header(protocol=False), "",
             "An accuracy benchmark: the wall times below are context, not a timed ratio.", "",
             f"`python benchmarks/bench_tune_search.py --seeds {args.seeds} --epsilons {args.epsilons} "
             f"--processes {args.processes}` at commit {commit} ({wall / 60:.1f} min wall, one fit "
             f"{t_fit:.2f} s). DiffPID3Classifier on Adult (train/test 0.7/0.3, public schema), searched over "
             "depth 2-4 x {EM, LD, SLD} x budget split {0.25, 0.5, 0.75}, bins 10; δ = 1e-5. Test accuracy, mean over "
             f"{args.seeds} seeds ± the 95% interval of the mean (1.96 s.e.). Search: PrivateSearchCV, truncated "
             "negative binomial (η = 0.5), mean 10 runs, validation 0.2. (a): a grid of 10 configurations drawn "
             "in advance, ε/10 each, picked by the exponential mechanism on validation accuracy counts. (b): "
             "depth 3, LD, budget split 0.5, 10 bins (the middle of the space) chosen in advance, at the full ε.", "",
             "| ε | per-run ε (search) | certified ε at δ = 1e-5 | search | (a) composed grid | (b) hand-picked "
             "| search − (a) | search / (a) | search wins over (a) | search − (b) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for e in epsilons:
        r = R[R[:, 0] == e]
        s, a, b = r[:, 2], r[:, 3], r[:, 4]
        lines.append(f"| {e:g} | {r[0, 5]:.4f} | {r[:, 6].max():.4f} | {ci(s)} | {ci(a)} | {ci(b)} | {ci(s - a)} | "
                     f"{s.mean() / a.mean():.3f} | {int(np.sum(s > a))}/{len(s)} | {ci(s - b)} |")
    md = "\n".join(lines)
    if args.no_record:
        print(md)
    else:
        record("tune_search", md)


if __name__ == "__main__":
    main()
