"""dpselect.sklearn.PrivateSearchCV: the private randomized search, its estimator protocol and its checks."""

import numpy as np
import pytest
from scipy import stats

import dpselect
from dpselect.accounting import Guarantee, PureDP

sklearn = pytest.importorskip("sklearn")

from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from dpselect.sklearn import DiffPID3Classifier, DPMOETClassifier, PrivateSearchCV  # noqa: E402
from dpselect.sklearn import _search  # noqa: E402


def _has_tune() -> bool:
    try:
        from dpselect import tune
    except ImportError:
        return False
    return hasattr(tune, "select_private_candidate")


needs_tune = pytest.mark.skipif(not _has_tune(), reason="dpselect.tune (issue 25 item 1) not merged yet")


# ---------------------------------------------------------------------------------------------------
# a small DP estimator written by a user, following the protocol (the one of docs/search.md)
# ---------------------------------------------------------------------------------------------------
class DPCentroidClassifier(ClassifierMixin, BaseEstimator):
    """Nearest noisy class centroid; features in the public box [0, 1]^p, labels {0, 1}.

    Adding or removing one record changes one class count by 1 and that class's feature sums by at most
    p in L1: Laplace noise of scale 1/(split·ε) on the counts and p/((1 − split)·ε) on the sums makes
    ``fit`` ε-DP (add/remove one record). Float Laplace noise keeps the example short; production code
    samples noise exactly.
    """

    def __init__(self, epsilon=1.0, split=0.5, random_state=None):
        self.epsilon = epsilon
        self.split = split
        self.random_state = random_state

    def privacy_guarantee(self) -> Guarantee:        # the protocol: from the parameters alone
        return PureDP(self.epsilon)

    def fit(self, X, y):
        X = np.clip(np.asarray(X, dtype=float), 0.0, 1.0)
        y = np.asarray(y)
        rng = np.random.default_rng(self.random_state)
        p = X.shape[1]
        self.classes_ = np.array([0, 1])
        cents = []
        for c in self.classes_:
            count = np.sum(y == c) + rng.laplace(0.0, 1.0 / (self.split * self.epsilon))
            sums = X[y == c].sum(axis=0) + rng.laplace(0.0, p / ((1 - self.split) * self.epsilon), p)
            cents.append(sums / max(count, 1.0))
        self.centroids_ = np.array(cents)
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        d = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]


def blobs(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 3))
    y = (X[:, 0] + 0.1 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


def tree_search(**kw):
    args = dict(epsilon=1.0, delta=1e-5, mean_runs=3, random_state=0)
    args.update(kw)
    return PrivateSearchCV(DiffPID3Classifier(n_max=2000, feature_bounds=(0, 1), classes=[0, 1]),
                           {"depth": [1, 2, 3], "mechanism": ["exponential", "local_dampening"]}, **args)


# ---------------------------------------------------------------------------------------------------
# the protocol on dpselect's estimators: the declared guarantee is what fit charges
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda acc: DiffPID3Classifier(epsilon=0.9, depth=2, n_max=1500, feature_bounds=(0, 1), random_state=0,
                                   classes=[0, 1], accountant=acc),
    lambda acc: DiffPID3Classifier(epsilon=0.9, depth=2, n_max=1500, feature_bounds=(0, 1), random_state=0,
                                   budget_split=0.3, classes=[0, 1], accountant=acc),
    lambda acc: DPMOETClassifier(epsilon=0.9, population=6, generations=1, depth=1, max_depth=2, output=2,
                                 feature_bounds=(0, 1), random_state=0, classes=[0, 1], accountant=acc),
    lambda acc: DPMOETClassifier(epsilon=0.9, population=6, generations=2, depth=1, max_depth=2, output=1,
                                 mechanism="permute_and_flip", feature_bounds=(0, 1), random_state=0, classes=[0, 1],
                                 accountant=acc),
])
def test_declared_guarantee_is_the_charge(make):
    X, y = blobs(400)
    acc = dpselect.Accountant(epsilon=10.0)
    est = make(acc)
    declared = est.privacy_guarantee()
    est.fit(X, y)
    assert repr(acc.history[0].guarantee) == repr(declared)
    assert declared.epsilon(0.0) == pytest.approx(0.9, rel=1e-12)


@needs_tune
def test_search_over_budget_split_is_not_refused():
    # budget_split only divides the run's epsilon, which the search fixes: not a budget that depends on a
    # searched parameter (every configuration's guarantee is ε at δ = 0, up to rounding)
    X, y = blobs(600)
    acc = dpselect.Accountant(epsilon=1.5, delta=1e-5, mode="basic")
    s = PrivateSearchCV(DiffPID3Classifier(n_max=1000, feature_bounds=(0, 1), classes=[0, 1]),
                        {"budget_split": [0.25, 0.5, 0.75], "depth": [2, 3]}, epsilon=1.0, delta=1e-5, mean_runs=3,
                        random_state=0, accountant=acc).fit(X, y)
    assert s.best_params_ is None or s.best_params_["budget_split"] in (0.25, 0.5, 0.75)
    assert s.privacy_.epsilon(1e-5) <= 1.0 and len(acc.history) == 1
    if s.best_estimator_ is not None:
        assert s.best_estimator_.budget_split == s.best_params_["budget_split"]
        assert s.best_estimator_.predict(X).shape == (600,)
    for f in (0.25, 0.5, 0.75):
        g = DiffPID3Classifier(epsilon=s.run_epsilon_, depth=3, budget_split=f).privacy_guarantee()
        assert g.epsilon(0) == pytest.approx(s.run_epsilon_, rel=1e-14)


def test_declared_guarantee_checks_its_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        DiffPID3Classifier(epsilon=-1.0).privacy_guarantee()
    with pytest.raises(ValueError, match="depth"):
        DiffPID3Classifier(depth=-1).privacy_guarantee()
    with pytest.raises(ValueError, match="budget_split"):
        DiffPID3Classifier(budget_split=1.0).privacy_guarantee()


# ---------------------------------------------------------------------------------------------------
# the exact score noise
# ---------------------------------------------------------------------------------------------------
def test_score_noise_is_the_cores_discrete_laplace():
    """One exact discrete Laplace in the library (its law: tests/test_exact_random.py)."""
    from dpselect import _exact_random
    from dpselect.quantiles import _unbounded
    assert _search.discrete_laplace is _exact_random.discrete_laplace is _unbounded.discrete_laplace


# ---------------------------------------------------------------------------------------------------
# refusals (before anything is drawn or charged)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, err, match", [
    (lambda: PrivateSearchCV(DecisionTreeClassifier(), {"max_depth": [1, 2]}, epsilon=1.0),
     TypeError, "does not declare its privacy guarantee"),
    (lambda: PrivateSearchCV(DiffPID3Classifier, {"depth": [1]}, epsilon=1.0), TypeError, "instance"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": lambda: 3}, epsilon=1.0), TypeError, "callable"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1, abs]}, epsilon=1.0), TypeError, "callable"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"epsilon": [0.1, 1]}, epsilon=1.0), ValueError, "per-run budget"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"random_state": [1]}, epsilon=1.0), ValueError, "random_state"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"nope": [1]}, epsilon=1.0), ValueError, "not a parameter"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": []}, epsilon=1.0), TypeError, "non-empty"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), "depth", epsilon=1.0), TypeError, "param_distributions"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(accountant=dpselect.Accountant(epsilon=1.0)), {"depth": [1]},
                             epsilon=1.0), ValueError, "accountant"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=-1.0), ValueError, "epsilon"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=1.0, delta=2.0), ValueError, "delta"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=1.0, validation_fraction=1.0),
     ValueError, "validation_fraction"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=1.0, scoring="roc_auc"),
     ValueError, "scoring"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=1.0, mean_runs=0.5),
     ValueError, "mean_runs"),
    (lambda: PrivateSearchCV(DiffPID3Classifier(), {"depth": [1]}, epsilon=1.0, n_jobs=0), ValueError, "n_jobs"),
])
def test_refusals(make, err, match):
    X, y = blobs(100)
    with pytest.raises(err, match=match):
        make().fit(X, y)


def test_data_dependent_parameter_space_refused():
    """The data themselves (X, y, a view of X) are refused; a public value of one entry per record is not
    recognised any more (issue 33 item 2: a refusal that depends on the number of records is a release)."""
    X, y = blobs(100)
    n = len(y)
    for space in ({"feature_bounds": [X]}, {"classes": [y]}, {"feature_bounds": [X[:2, :]]},
                  {"feature_bounds": [{0: X[0]}]}, {"depth": stats.randint(y, 5)}):
        with pytest.raises(ValueError, match="holds the data itself"):
            PrivateSearchCV(DiffPID3Classifier(), space, epsilon=1.0, delta=1e-5).fit(X, y)
    for m in (n - 1, n, n + 1):     # the same answer whatever the number of records
        acc = dpselect.Accountant(epsilon=5.0, delta=1e-5, mode="basic")
        with pytest.raises(ValueError, match=r"feature_bounds must be \(lo, hi\)") as exc:
            PrivateSearchCV(DiffPID3Classifier(n_max=200, classes=[0, 1]), {"feature_bounds": [np.zeros((m, 2))]},
                            epsilon=1.0, delta=1e-5, accountant=acc).fit(X, y)
        assert str(n) not in str(exc.value).replace(f"({m}, 2)", "") and len(acc.history) == 0


# ---------------------------------------------------------------------------------------------------
# check_estimator-style checks
# ---------------------------------------------------------------------------------------------------
def test_params_round_trip_and_clone_shares_the_accountant():
    acc = dpselect.Accountant(epsilon=5.0, delta=1e-5)
    s = tree_search(accountant=acc)
    p = s.get_params()
    assert p["epsilon"] == 1.0 and p["estimator__depth"] == 5 and p["accountant"] is acc
    c = clone(s)
    assert c.accountant is acc and c.get_params(deep=False).keys() == p.keys() - {
        k for k in p if "__" in k}
    assert repr(c) == repr(s)
    c.set_params(epsilon=2.0, estimator__n_max=10)
    assert c.epsilon == 2.0 and c.estimator.n_max == 10 and s.epsilon == 1.0 and s.estimator.n_max == 2000


def test_not_fitted():
    X, _ = blobs(50)
    for method in ("predict", "predict_proba"):
        with pytest.raises(NotFittedError):
            getattr(tree_search(), method)(X)


def test_predict_proba_only_when_the_estimator_has_it():
    s = PrivateSearchCV(DPCentroidClassifier(), {"split": [0.5]}, epsilon=1.0)
    assert not hasattr(s, "predict_proba") and hasattr(tree_search(), "predict_proba")


@needs_tune
def test_fit_returns_self_and_releases_only_the_winner():
    X, y = blobs()
    s = tree_search(epsilon=4.0)
    assert s.fit(X, y) is s
    assert s.privacy_.epsilon(1e-5) <= 4.0
    assert set(s.best_params_) == {"depth", "mechanism"}
    res = s.cv_results_
    assert set(res) <= {"params", "param_depth", "param_mechanism", "mean_test_score", "rank_test_score"}
    assert all(len(v) == 1 for v in res.values())
    assert res["params"] == [s.best_params_] and res["rank_test_score"] == [1]
    assert s.best_estimator_.epsilon == s.run_epsilon_
    assert s.predict(X).shape == (len(y),) and s.predict_proba(X).shape == (len(y), 2)
    assert s.classes_.tolist() == [0, 1] and s.n_features_in_ == 3
    assert s.score(X, y) > 0.6


@needs_tune
def test_per_run_budget_is_the_largest_that_fits():
    from dpselect import tune
    X, y = blobs(300)
    for delta, method in ((1e-5, "truncated_negative_binomial"), (0.0, "liu_talwar")):
        s = tree_search(delta=delta, method=method).fit(X, y)
        e = s.run_epsilon_

        def whole(run_eps):
            return tune.tuning_privacy(PureDP(run_eps * (1 + 1e-12)), method=method, mean_runs=3, eta=0.5)
        assert whole(e).epsilon(delta) <= 1.0 < whole(e * (1 + 1e-6)).epsilon(delta)


@needs_tune
def test_same_int_rng_same_search_and_generator_consumed():
    X, y = blobs()
    a, b = tree_search(random_state=7).fit(X, y), tree_search(random_state=7).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_score_ == b.best_score_
    assert np.array_equal(a.predict(X), b.predict(X))
    g = np.random.default_rng(7)
    s = tree_search(random_state=g).fit(X, y)
    assert s.best_params_ is not None


@needs_tune
def test_results_do_not_depend_on_n_jobs():
    joblib = pytest.importorskip("joblib")
    X, y = blobs(600)
    with joblib.parallel_config(backend="threading"):   # the same code path as processes, without their start-up
        fits = [tree_search(random_state=3, n_jobs=j, mean_runs=4).fit(X, y) for j in (None, 1, 3)]
    for f in fits[1:]:
        assert f.best_params_ == fits[0].best_params_ and f.best_score_ == fits[0].best_score_
        assert np.array_equal(f.predict(X), fits[0].predict(X))


@needs_tune
def test_accountant_charged_once_and_refusal_leaves_nothing():
    X, y = blobs(300)
    acc = dpselect.Accountant(epsilon=1.5, delta=1e-5, mode="basic")
    s = tree_search(accountant=acc).fit(X, y)
    assert [r.label for r in acc.history] == ["PrivateSearchCV.fit"]
    charged = acc.history[0].guarantee
    assert charged.delta_ == 1e-5 and charged.epsilon_ == s.privacy_.epsilon(1e-5) <= 1.0
    g = np.random.default_rng(11)
    state = g.bit_generator.state
    again = tree_search(accountant=acc, random_state=g)
    with pytest.raises(dpselect.BudgetExceededError):
        again.fit(X, y)
    assert not hasattr(again, "privacy_") and not hasattr(again, "best_estimator_")
    assert g.bit_generator.state == state and len(acc.history) == 1


@needs_tune
def test_a_user_estimator_following_the_protocol():
    X, y = blobs(2000)
    s = PrivateSearchCV(DPCentroidClassifier(), {"split": stats.uniform(0.2, 0.6)}, epsilon=1.0, delta=1e-5,
                        mean_runs=4, random_state=1).fit(X, y)
    assert 0.2 <= s.best_params_["split"] <= 0.8 and s.score(X, y) > 0.8


@needs_tune
def test_budget_that_depends_on_a_searched_parameter_is_refused_before_the_charge():
    class Leaky(DPCentroidClassifier):
        def privacy_guarantee(self):
            return PureDP(self.epsilon * (2 if self.split > 0.5 else 1))

    X, y = blobs(200)
    acc = dpselect.Accountant(epsilon=10.0, delta=1e-5)
    with pytest.raises(ValueError, match="must not depend on the searched parameters"):
        PrivateSearchCV(Leaky(split=0.3), {"split": [0.3, 0.7]}, epsilon=1.0, delta=1e-5, accountant=acc).fit(X, y)
    assert len(acc.history) == 0


def test_input_validation_messages():
    X, y = blobs(100)
    with pytest.raises(ValueError, match="their numbers of rows differ") as exc:
        tree_search().fit(X, y[:-1])
    assert "99" not in str(exc.value) and "100" not in str(exc.value)    # no size named
    assert tree_search().fit(X[:1], y[:1]).best_estimator_ is not None    # 1 record (0 too): a search like any
    with pytest.raises(ValueError, match="method must be one of"):
        tree_search(method="grid").fit(X, y)
    with pytest.raises(TypeError, match="rng must be"):
        tree_search(random_state="seed").fit(X, y)
    acc = dpselect.Accountant(epsilon=5.0, delta=1e-5, mode="basic")
    for kw in ({"method": "liu_talwar_threshold"}, {"threshold": 10.0}):
        with pytest.raises(ValueError, match="threshold"):
            tree_search(accountant=acc, **kw).fit(X, y)
    assert len(acc.history) == 0


@needs_tune
def test_known_threshold_may_release_nothing():
    X, y = blobs(300)
    s = tree_search(method="liu_talwar_threshold", threshold=10**6, delta=0.0).fit(X, y)   # unreachable
    assert s.best_estimator_ is None and s.best_params_ is None and s.cv_results_["params"] == []
    assert s.privacy_.epsilon(0.0) <= 1.0
    with pytest.raises(RuntimeError, match="released no candidate"):
        s.predict(X)
