"""Issue 33 (outside review, round 4) on dpselect.sklearn: what a fit or a search releases.

The released winner holds nothing that seeded its noise (item 1); a search, and the estimators' fit,
complete on every dataset of a small public domain, and what they raise or warn does not depend on the
records (items 2(c), 2(d), 9); every argument is checked before the accountant is charged (item 8); a
refused fit leaves the estimator as it was (item 9); a tiny epsilon costs bounded work (the 1e-12 hang).
"""
import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest

import dpselect
from dpselect.accounting import Guarantee, PureDP

sklearn = pytest.importorskip("sklearn")

from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from dpselect.sklearn import DiffPID3Classifier, DPMOETClassifier, PrivateSearchCV  # noqa: E402
from dpselect.sklearn import _search  # noqa: E402
from dpselect.tabular import load_table  # noqa: E402

LEAK = dpselect.PrivacyLeakWarning


class Centroid(ClassifierMixin, BaseEstimator):
    """docs/search.md's user estimator (nearest noisy centroid, ε-DP on [0, 1]^p, labels {0, 1})."""

    def __init__(self, epsilon=1.0, split=0.5, random_state=None):
        self.epsilon, self.split, self.random_state = epsilon, split, random_state

    def privacy_guarantee(self) -> Guarantee:
        return PureDP(self.epsilon)

    def fit(self, X, y):
        X, y = np.clip(np.asarray(X, dtype=float), 0, 1), np.asarray(y)
        rng, p = np.random.default_rng(self.random_state), X.shape[1]
        self.classes_ = np.array([0, 1])
        count = [np.sum(y == c) + rng.laplace(0, 1 / (self.split * self.epsilon)) for c in self.classes_]
        sums = [X[y == c].sum(0) + rng.laplace(0, p / ((1 - self.split) * self.epsilon), p) for c in self.classes_]
        self.centroids_ = np.array([s / max(n, 1.0) for s, n in zip(sums, count)])
        return self

    def predict(self, X):
        d = ((np.asarray(X, dtype=float)[:, None] - self.centroids_[None]) ** 2).sum(2)
        return self.classes_[d.argmin(1)]


class KeepsSeed(Centroid):
    def fit(self, X, y):
        self.seed_ = self.random_state          # a fitted attribute holding the seed of its noise
        return super().fit(X, y)


class KeepsGenerator(Centroid):
    def fit(self, X, y):
        super().fit(X, y)
        self.rng_ = np.random.default_rng(self.random_state)
        return self


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    return X, (X[:, 0] > 0.5).astype(int)


def tree(**kw):
    return DiffPID3Classifier(n_max=50, feature_bounds=(0, 1), classes=[0, 1], **kw)


def moet(**kw):
    return DPMOETClassifier(population=4, selection=2, generations=1, depth=1, max_depth=2, output=1,
                            feature_bounds=(0, 1), classes=[0, 1], **kw)


# ---------------------------------------------------------------------------------------------------
# item 1: the winner holds nothing that seeded its noise
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,grid", [(Centroid, {"split": [0.3, 0.7]}), (tree, {"depth": [1, 2]}),
                                       (moet, {"depth": [0, 1]})], ids=["centroid", "diffpid3", "dpmoet"])
def test_winner_holds_no_seed(make, grid):
    X, y = data(40)
    s = PrivateSearchCV(make(), grid, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=3).fit(X, y)
    w = s.best_estimator_
    assert w.get_params()["random_state"] is None
    # nothing reachable from the winner (or the search) is a generator or an int of a run's seed size
    assert _search._random_state_in(w, None, "w", set()) is None
    assert _search._random_state_in(s.__dict__, None, "s", set()) is None


def test_refit_with_the_released_params_does_not_reproduce_the_model():
    """The review's attack: refit on the training part with the released parameters. With the seed
    released (the old code) the refit reproduced the released centroids exactly."""
    X, y = data(12)
    s = PrivateSearchCV(Centroid(), {"split": [0.5]}, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=7).fit(X, y)
    train = ~(np.random.default_rng(7).random(12) < 0.2)     # the split: the search's first draw after the charge
    refits = [clone(s.best_estimator_).fit(X[train], y[train]).centroids_ for _ in range(3)]
    assert not any(np.array_equal(r, s.best_estimator_.centroids_) for r in refits)


@pytest.mark.parametrize("Est,where", [(KeepsSeed, "seed_"), (KeepsGenerator, "rng_")])
def test_estimator_keeping_its_seed_or_generator_is_refused(Est, where):
    X, y = data(30)
    with pytest.raises(RuntimeError, match=rf"holds a random state or the seed of its noise at \w+\.{where}"):
        PrivateSearchCV(Est(), {"split": [0.5]}, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=0).fit(X, y)


def test_parameters_fixing_the_noise_are_refused_before_the_charge():
    from sklearn.pipeline import Pipeline
    X, y = data(30)
    for est in (Pipeline([("c", Centroid(random_state=5))]), Centroid(split=np.random.default_rng(0))):
        acc = dpselect.Accountant(epsilon=10.0, delta=1e-3, mode="basic")
        est.epsilon = 1.0
        with pytest.raises((ValueError, TypeError)):
            PrivateSearchCV(est, {}, epsilon=1.0, delta=1e-6, random_state=0, accountant=acc).fit(X, y)
        assert len(acc.history) == 0


# ---------------------------------------------------------------------------------------------------
# items 2(c), 2(d), 9: every dataset of a tiny public domain (generator: all of them, n <= 3)
# ---------------------------------------------------------------------------------------------------
RECORDS = [(x, c) for x in (0.0, 1.0) for c in (0, 1)]
DOMAIN = [list(d) for n in range(4) for d in itertools.product(RECORDS, repeat=n)]   # 85 datasets


def arrays(d):
    return np.array([[x] for x, _ in d], dtype=float).reshape(len(d), 1), np.array([c for _, c in d], dtype=int)


def test_search_completes_on_every_tiny_dataset():
    """PrivateSearchCV used to refuse n < 2 and to fail when the split left a part empty (74 % at n = 2)."""
    for i, d in enumerate(DOMAIN):
        X, y = arrays(d)
        for est, grid in ((tree(), {"depth": [0, 1]}), (Centroid(), {"split": [0.5]})):
            s = PrivateSearchCV(est, grid, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=i).fit(X, y)
            assert s.best_estimator_.predict(np.array([[0.0], [1.0]])).shape == (2,)
            assert float(s.best_score_).is_integer()          # a noisy count (not the accuracy scale)


@pytest.mark.parametrize("make", [tree, moet], ids=["diffpid3", "dpmoet"])
def test_fit_completes_on_every_tiny_dataset_and_warns_alike(make):
    """0 records included; without classes, int labels warn on every dataset with one message."""
    messages = set()
    for i, d in enumerate(DOMAIN):
        X, y = arrays(d)
        assert make(random_state=i).fit(X, y).predict(np.array([[0.5]])).shape == (1,)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            fitted = make(random_state=i).set_params(classes=None).fit(X, y)
        assert fitted.classes_.tolist() == [0, 1]
        messages.add(tuple(sorted(str(w.message) for w in rec if issubclass(w.category, LEAK))))
    assert len(messages) == 1 and len(next(iter(messages))) == 1     # the same single warning everywhere


BAD_RECORDS = {"label": [(0.5, 5), (0.5, -1)]}
OUTSIDE_BOUNDS = [(7.5, 0), (-3.0, 1), (1.0 + 1e-9, 0)]


@pytest.mark.parametrize("make", [tree, moet], ids=["diffpid3", "dpmoet"])
def test_records_outside_the_bounds_are_clipped(make):
    """A value outside the public feature bounds is clipped into them (a refusal would depend on the data):
    the fit equals the fit on the clipped records, draw for draw."""
    grid = np.linspace(-0.5, 1.5, 9)[:, None]
    for d, r in itertools.product(DOMAIN[::7], OUTSIDE_BOUNDS):
        X, y = arrays(d + [r])
        a = make(random_state=0).fit(X, y)
        b = make(random_state=0).fit(np.clip(X, 0.0, 1.0), y)
        assert (a.predict(grid) == b.predict(grid)).all()


@pytest.mark.parametrize("make", [tree, moet], ids=["diffpid3", "dpmoet"])
def test_out_of_domain_errors_name_no_record(make):
    """A record outside the public classes: one message per kind, whatever the other records."""
    for kind, bad in BAD_RECORDS.items():
        messages = set()
        for d, r in itertools.product(DOMAIN[::7], bad):
            X, y = arrays(d + [r])
            est = make(random_state=0)
            with pytest.raises(ValueError) as exc:
                est.fit(X, y)
            messages.add(str(exc.value))
            assert not hasattr(est, "classes_")            # refused: nothing set
        assert len(messages) == 1, (kind, messages)
        message = messages.pop()
        assert not any(t in message for t in ("7.5", "-3", "1.000000001", "5", "-1")), message


def test_sklearn_messages_quoting_the_records_are_withheld():
    est = tree()
    for X, y, quoted in ((np.array([3.25, 4.5]), [0, 1], "3.25"),                     # 1-D X: sklearn prints it
                         (np.array([["Smith", 0.1]], dtype=object), [1], "Smith"),      # could not convert 'Smith'
                         (np.zeros((3, 1)), [0, 1], "3")):                              # sizes [3, 2]
        with pytest.raises(ValueError) as exc:
            est.fit(X, y)
        assert quoted not in str(exc.value) and exc.value.__cause__ is None and exc.value.__suppress_context__


def test_load_table_label_warns_on_every_table_alike():
    messages = set()
    for n in range(1, 4):
        for labels in itertools.product(["0", "1", "2"], repeat=n):
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                try:
                    load_table({"a": [0.5] * n, "y": list(labels)}, "y", feature_bounds={"a": (0, 1)})
                except ValueError as exc:
                    messages.add(("error", str(exc)))
            messages.add(("warn", tuple(str(w.message) for w in rec if issubclass(w.category, LEAK))))
    warns = [m for m in messages if m[0] == "warn"]
    assert len(warns) == 1 and len(warns[0][1]) == 1 and "categories['y']" in warns[0][1][0]
    assert len(messages) <= 2          # at most one error message, naming no value


# ---------------------------------------------------------------------------------------------------
# item 8: every argument checked before the charge
# ---------------------------------------------------------------------------------------------------
X40, Y40 = data(40)
REFUSED = [
    ({"bins": [0]}, X40, Y40), ({"bins": [4, 0]}, X40, Y40), ({"mechanism": ["bogus"]}, X40, Y40),
    ({"mechanism": ["exponential", "bogus"]}, X40, Y40), ({"depth": [-1]}, X40, Y40),
    ({"budget_split": [5e-324]}, X40, Y40), ({"budget_split": [0.5, 1.0]}, X40, Y40),
    ({"feature_bounds": [(1, 0)]}, X40, Y40),
    ({"classes": [["a", "b"]]}, X40, Y40), ({"n_max": [10]}, X40, Y40),
    ([{"depth": [1]}, {"bins": [0]}], X40, Y40),
    ({"depth": [1]}, X40[:, 0], Y40), ({"depth": [1]}, X40, Y40[:-1]),
    ({"depth": [1]}, X40, Y40 + 2), ({"depth": [1]}, np.where(X40 > 0.9, np.nan, X40), Y40),
]


@pytest.mark.parametrize("grid,X,y", REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_refused_before_the_charge(grid, X, y):
    acc = dpselect.Accountant(epsilon=10.0, delta=1e-3, mode="basic")
    gen = np.random.default_rng(0)
    state = copy.deepcopy(gen.bit_generator.state)
    with pytest.raises((ValueError, TypeError)):
        PrivateSearchCV(tree(), grid, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=gen, accountant=acc).fit(X, y)
    assert len(acc.history) == 0 and gen.bit_generator.state == state


def test_tiny_node_budget_refused_before_the_charge():
    acc = dpselect.Accountant(epsilon=10.0, mode="basic")
    X, y = data(20)
    with pytest.raises(ValueError, match="MIN_NODE_EPSILON"):
        tree(budget_split=5e-324, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="MIN_NODE_EPSILON"):
        tree(epsilon=1e-307, depth=5, accountant=acc).fit(X, y)
    assert len(acc.history) == 0


# ---------------------------------------------------------------------------------------------------
# item 9: a refused fit leaves the estimator as it was
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [tree, moet], ids=["diffpid3", "dpmoet"])
def test_refused_fit_leaves_the_estimator_as_it_was(make):
    X, y = data(40)
    fresh = make(random_state=0)
    with pytest.raises(ValueError):
        fresh.fit(X, y + 5)                                  # labels outside the public classes
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    fitted = make(random_state=0).fit(X, y)
    before = {k: repr(v) for k, v in vars(fitted).items()}
    acc = dpselect.Accountant(epsilon=1e-3)
    for bad in (lambda e: e.fit(X, np.where(y == 1, "yes", "no")),          # labels outside classes
                lambda e: e.set_params(classes=None).fit(np.c_[X, X], np.full(40, 7)),     # one label read
                lambda e: e.set_params(accountant=acc).fit(np.c_[X, X], y)):  # the budget refuses the charge
        with pytest.raises((ValueError, dpselect.BudgetExceededError)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LEAK)
                bad(fitted)
        state = {k: repr(v) for k, v in vars(fitted).items() if k not in ("classes", "accountant")}
        assert state == {k: v for k, v in before.items() if k not in ("classes", "accountant")}
        fitted.set_params(classes=[0, 1], accountant=None)


# ---------------------------------------------------------------------------------------------------
# the hang: PrivateSearchCV(epsilon=1e-12)
# ---------------------------------------------------------------------------------------------------
def test_tiny_epsilon_noise_costs_bounded_work(monkeypatch):
    """The score's discrete Laplace counted one exact Bernoulli(e^-ε) trial per unit of magnitude (~1/ε =
    1e12 trials at ε = 1e-12); the core's galloping sampler takes O(log 1/ε)."""
    from dpselect import _exact_random
    calls = {"n": 0}

    def counting(real):
        def f(*a, **k):
            calls["n"] += 1
            if calls["n"] > 20_000:
                raise RuntimeError("unbounded work")
            return real(*a, **k)
        return f

    monkeypatch.setattr(_exact_random, "bernoulli_log", counting(_exact_random.bernoulli_log))
    rng = np.random.default_rng(0)
    draws = [_search.discrete_laplace(1e-12, rng) for _ in range(50)]
    assert calls["n"] < 50 * 200
    assert np.median(np.abs(draws)) > 1e10                    # the scale is ~1/ε
    X, y = data(30)
    s = PrivateSearchCV(tree(), {"depth": [1]}, epsilon=1e-12, delta=1e-6, mean_runs=2, random_state=0).fit(X, y)
    assert s.best_estimator_ is not None and s.privacy_.epsilon(1e-6) <= 1e-12


# ---------------------------------------------------------------------------------------------------
# item 3: a fitted search holding an accountant pickles (the accountant keeps one budget and its history)
# ---------------------------------------------------------------------------------------------------
def test_fitted_search_with_an_accountant_pickles():
    acc = dpselect.Accountant(epsilon=5.0, delta=1e-5, mode="basic")
    X, y = data(40)
    s = PrivateSearchCV(tree(), {"depth": [1]}, epsilon=1.0, delta=1e-6, mean_runs=2, random_state=0, accountant=acc).fit(X, y)
    back = pickle.loads(pickle.dumps(s))
    assert back.accountant.spent().epsilon(1e-5) == pytest.approx(acc.spent().epsilon(1e-5))
    assert len(back.accountant.history) == len(acc.history) == 1
    assert (back.predict(X) == s.predict(X)).all()


def test_select_model_errors_name_no_record_position_or_size():
    """select_model (ε-DP in the validation records): a missing or foreign label, or predictions of the wrong
    shape, give one message per kind whatever the records (it named the position, the label, n_records)."""
    from dpselect.sklearn import select_model
    messages: dict[str, set] = {"missing": set(), "foreign": set(), "shape": set(), "ragged": set()}
    for n in range(1, 4):
        for y in itertools.product([0, 1], repeat=n):
            for i in range(n):
                for kind, bad in (("missing", np.nan), ("foreign", 2)):
                    yy = np.array(y, dtype=float)
                    yy[i] = bad
                    with pytest.raises(ValueError) as exc:
                        select_model(y=yy, predictions=[list(y), list(y)], epsilon=1.0, random_state=0)
                    messages[kind].add(str(exc.value))
            with pytest.raises(ValueError) as exc:
                select_model(y=list(y), predictions=[list(y) + [0], list(y) + [1]], epsilon=1.0, random_state=0)
            messages["shape"].add(str(exc.value))
            with pytest.raises(ValueError) as exc:
                select_model(y=list(y), predictions=[list(y), list(y) + [1]], epsilon=1.0, random_state=0)
            messages["ragged"].add(str(exc.value))
    assert all(len(m) == 1 for m in messages.values()), messages
