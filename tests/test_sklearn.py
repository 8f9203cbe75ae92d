"""dpselect.sklearn: private model selection and the DiffPID3 / DP-MOET estimators."""
import warnings

import numpy as np
import pytest

import dpselect
from dpselect.audit import check_admissibility, exact_dp_audit
from dpselect.datasets import data_path
from dpselect.sklearn import model_objectives, select_model

sklearn = pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from sklearn.base import clone  # noqa: E402
from sklearn.dummy import DummyClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

from dpselect.sklearn import DiffPID3Classifier, DPMOETClassifier  # noqa: E402

from _helpers import neighbours, to_arrays, universe  # noqa: E402  (tests/_helpers.py, shared with test_classification.py)

# ---------------------------------------------------------------------------------------------------
# accuracy: its sensitivity function, checked by brute force (add/remove one record)
# ---------------------------------------------------------------------------------------------------


def objective(name):
    def u(x):
        return model_objectives(*to_arrays(x), (name,))[0][:, 0]

    def s(x):
        return model_objectives(*to_arrays(x), (name,))[1][0]
    return u, s


@pytest.mark.parametrize("name", ["accuracy", "tpr", "tnr"])
def test_objective_sensitivities_admissible_by_brute_force(name):
    u, s = objective(name)
    rep = check_admissibility(u, s, neighbours, universe(4), t_max=6)
    assert rep.ok, str(rep)
    assert rep.n_pairs > 1000


def test_accuracy_checker_is_not_vacuous():
    u, s = objective("accuracy")
    halved = lambda x: dpselect.SensitivityFunction(lambda t, f=s(x): f(t) / 2, 1.0)  # noqa: E731
    assert not check_admissibility(u, halved, neighbours, universe(3), t_max=3).ok


def test_accuracy_on_count_grid():
    # accuracy as a rate correct / (correct + wrong): every (correct, wrong) up to 14, distances < 10
    def acc(x):
        c, w = x
        return np.array([c / (c + w) if c + w else 0.0])

    def nb(x):
        c, w = x
        yield (c + 1, w)
        yield (c, w + 1)
        if c:
            yield (c - 1, w)
        if w:
            yield (c, w - 1)

    def sens(x):
        y = np.r_[np.ones(x[0] + x[1], int)]
        pred = np.r_[np.ones(x[0], int), np.zeros(x[1], int)][None, :]
        return model_objectives(y, pred, ("accuracy",))[1][0]

    grid = [(c, w) for c in range(15) for w in range(15)]
    rep = check_admissibility(acc, sens, nb, grid, t_max=10)
    assert rep.ok, str(rep)


PAIRS = [(x, y) for x in universe(2) for y in neighbours(x)]


@pytest.mark.parametrize("approach,mechanism", [("pareto", "LD"), ("aggregate", "LD"), ("aggregate", "EM"),
                                                ("pareto", "EM")])
def test_exact_dp_audit_of_select_model(approach, mechanism):
    eps = 1.0

    def probs(x):
        U, sens = model_objectives(*to_arrays(x), ("tpr", "accuracy"))
        s = sens if mechanism == "LD" else [1.0, 1.0]
        if approach == "pareto":
            return dpselect.multiobjective.priv_pareto_probabilities(U, epsilon=eps, sensitivities=s, mechanism=mechanism)
        return dpselect.multiobjective.priv_agg_probabilities(U, [0.5, 0.5], epsilon=eps, sensitivities=s, mechanism=mechanism)

    res = exact_dp_audit(probs, PAIRS, epsilon=eps)
    assert res.passed, f"worst log-ratio {res.worst_log_ratio} at {res.pair}"
    # select_model draws from exactly these laws
    y, P = to_arrays((3, 1, 0, 2, 1, 0, 2, 3))
    U, sens = model_objectives(y, P, ("tpr", "accuracy"))
    draws = select_model(y=y, predictions=P, epsilon=eps, objectives=("tpr", "accuracy"),
                         approach=approach, mechanism=mechanism, random_state=1)
    assert draws in (0, 1)


# ---------------------------------------------------------------------------------------------------
# select_model
# ---------------------------------------------------------------------------------------------------
Y = np.array([1, 1, 1, 0, 0, 0] * 100)
GOOD = np.array([1, 1, 1, 0, 0, 0] * 100)
BAD = 1 - GOOD
SKEWED = np.ones_like(GOOD)


def test_select_model_predictions_and_estimators_agree():
    preds = np.stack([BAD, GOOD, SKEWED])
    assert select_model(y=Y, predictions=preds, epsilon=5.0, random_state=0) == 1
    out = select_model(y=Y, predictions=preds, epsilon=5.0, k=2, random_state=0)
    assert out.dtype == np.int64 and out.shape == (2,) and out[0] == 1
    X = np.arange(Y.size)[:, None]
    models = [DummyClassifier(strategy="constant", constant=c).fit(X, Y) for c in (0, 1)]
    a = select_model(models, X, Y, epsilon=1.0, objectives=["tnr"], random_state=3)
    b = select_model(models, None, Y, predictions=[m.predict(X) for m in models], epsilon=1.0, objectives=["tnr"],
                     random_state=3)
    assert a == b


def test_select_model_mapping_returns_names_and_every_mechanism_runs():
    preds = np.stack([BAD, GOOD, SKEWED])
    named = dict(zip(["bad", "good", "skewed"], [None] * 3))
    for mech in dpselect.vocabulary.MECHANISMS:
        for approach in ("pareto", "aggregate"):
            out = select_model(named, None, Y, predictions=preds, epsilon=20.0, mechanism=mech, approach=approach,
                               random_state=0)
            # Pareto: "skewed" (TPR 1, TNR 0) is not strictly dominated by "good" (1, 1): both on the front
            assert out in (("good", "skewed") if approach == "pareto" else ("good",)), (mech, approach)
    ks = select_model(named, None, Y, predictions=preds, epsilon=20.0, k=3, random_state=0)
    assert sorted(ks.tolist()) == ["bad", "good", "skewed"]


def test_select_model_objective_weights_and_labels():
    preds = np.stack([BAD, GOOD, SKEWED])
    # all weight on TPR: the always-positive model ties the good one on TPR; zero weight on TNR
    out = select_model(y=Y, predictions=preds, epsilon=50.0, approach="aggregate",
                       objective_weights={"tpr": 1.0}, random_state=0, k=2)
    assert set(out.tolist()) == {1, 2}
    ylab = np.where(Y == 1, ">50K", "<=50K")
    plab = np.where(preds == 1, ">50K", "<=50K")
    assert select_model(y=ylab, predictions=plab, epsilon=5.0, pos_label=">50K", random_state=0) == 1
    assert select_model(y=pd.Series(ylab), predictions=pd.DataFrame(plab), epsilon=5.0,
                        pos_label=">50K", random_state=0) == 1


def test_select_model_errors():
    preds = np.stack([BAD, GOOD])
    with pytest.raises(ValueError, match="unknown objective"):
        select_model(y=Y, predictions=preds, epsilon=1.0, objectives=("f1",))
    with pytest.raises(ValueError, match="approach"):
        select_model(y=Y, predictions=preds, epsilon=1.0, approach="lexicographic")
    with pytest.raises(ValueError, match="aggregate"):
        select_model(y=Y, predictions=preds, epsilon=1.0, objective_weights=[1, 1])
    with pytest.raises(ValueError, match="n_records"):
        select_model(y=Y[:10], predictions=preds, epsilon=1.0)
    with pytest.raises(ValueError, match="at least 2 models"):
        select_model(y=Y, predictions=preds[:1], epsilon=1.0)
    with pytest.raises(TypeError, match="predict"):
        select_model([object(), object()], np.zeros((Y.size, 1)), Y, epsilon=1.0)
    with pytest.raises(TypeError, match="needs X"):
        select_model([DummyClassifier()], None, Y, epsilon=1.0)
    with pytest.raises(ValueError, match="mechanism"):
        select_model(y=Y, predictions=preds, epsilon=1.0, mechanism="laplace")


def test_select_model_fast_on_adult_scale():
    import time
    rng = np.random.default_rng(0)
    n = 45222
    y = (rng.random(n) < 0.25).astype(np.int8)
    P = (rng.random((100, n)) < rng.uniform(0.1, 0.9, (100, 1))).astype(np.int8)
    select_model(y=y, predictions=P, epsilon=1.0, random_state=0)
    t0 = time.perf_counter()
    select_model(y=y, predictions=P, epsilon=1.0, random_state=0)
    assert time.perf_counter() - t0 < 3.0  # 1 s target on an idle machine (benchmarks/bench_sklearn.py)


# ---------------------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------------------
def blobs(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, (n, 3))
    y = ((X[:, 0] > 5) ^ (rng.random(n) < 0.05)).astype(int)
    return X, y


@pytest.mark.parametrize("est", [DiffPID3Classifier(n_max=1000), DPMOETClassifier(population=10, generations=1)],
                         ids=["DiffPID3Classifier", "DPMOETClassifier"])
def test_check_estimator(est):
    from dpselect.sklearn import EXPECTED_FAILED_CHECKS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpselect.PrivacyLeakWarning)
        results = check_estimator(est, on_fail=None, on_skip=None, expected_failed_checks=EXPECTED_FAILED_CHECKS)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed, failed
    # fit on one class completes (no data-dependent error); whether the noisy model then predicts that one
    # class everywhere (the check's demand) is left to the noise: passed or expected failure, both fine
    assert {r["status"] for r in results if r["check_name"] == "check_classifiers_one_label"} <= {"passed", "xfail"}
    tags = est.__sklearn_tags__()
    assert tags.classifier_tags.poor_score and not tags.classifier_tags.multi_class


class StrictDiffPID3(DiffPID3Classifier):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = False
        return tags


def test_without_the_poor_score_tag_only_the_accuracy_check_fails():
    """The one thing the tags declare: check_classifiers_train's accuracy threshold (ε-DP noise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(StrictDiffPID3(n_max=1000), on_fail=None, on_skip=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert "check_classifiers_train" in failed and failed <= {"check_classifiers_train", "check_classifiers_one_label",
                                                              "check_estimators_empty_data_messages"}


def test_diffpid3_classifier_public_bounds_and_no_warning():
    X, y = blobs()
    clf = DiffPID3Classifier(epsilon=8.0, depth=1, n_max=5000, feature_bounds=(0, 10), classes=[0, 1],
                             random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpselect.PrivacyLeakWarning)
        clf.fit(X, y)
    assert clf.score(X, y) > 0.85
    proba = clf.predict_proba(X[:5])
    assert proba.shape == (5, 2) and np.allclose(proba.sum(axis=1), 1)
    assert (clf.predict(X) == clf.classes_[proba_argmax(clf, X)]).all()
    # every bound read from the data warns, one per quantity
    for kwargs in ({"n_max": None}, {"feature_bounds": None}):
        with pytest.warns(dpselect.PrivacyLeakWarning):
            clone(clf).set_params(**kwargs).fit(X, y)
    with pytest.warns(dpselect.PrivacyLeakWarning, match="classes"):
        clone(clf).set_params(classes=None).fit(X, np.where(y == 1, "yes", "no"))
    # training values outside the public bounds are clipped into them (a refusal would depend on the data):
    # the same model as on the clipped table, draw for draw
    a = clone(clf).set_params(feature_bounds=(0, 5)).fit(X, y)
    b = clone(clf).set_params(feature_bounds=(0, 5)).fit(np.clip(X, 0, 5), y)
    grid = np.linspace(-1, 8, 19)[:, None] * np.ones((1, X.shape[1]))
    assert (a.predict(grid) == b.predict(grid)).all() and (X > 5).any()
    with pytest.raises(ValueError, match="n_max"):
        clone(clf).set_params(n_max=100).fit(X, y)
    # prediction clips values outside the public range
    assert clf.predict(np.array([[-5.0, 0, 0], [50.0, 0, 0]])).shape == (2,)


def proba_argmax(clf, X):
    return np.argmax(clf.predict_proba(X), axis=1)


def test_diffpid3_classifier_budget_split_stored_checked_in_fit_and_default_unchanged():
    X, y = blobs(800)
    bad = DiffPID3Classifier(budget_split=1.5)        # stored as given (sklearn), checked in fit
    assert bad.budget_split == 1.5 and bad.get_params()["budget_split"] == 1.5
    acc = dpselect.Accountant(epsilon=5.0)
    with pytest.raises(ValueError, match="budget_split"):
        DiffPID3Classifier(n_max=1000, feature_bounds=(0, 10), budget_split=1.5, accountant=acc).fit(X, y)
    assert len(acc.history) == 0                      # nothing charged
    base = dict(epsilon=1.0, depth=3, n_max=1000, feature_bounds=(0, 10), random_state=3, classes=[0, 1])
    a = DiffPID3Classifier(**base).fit(X, y).tree_
    b = DiffPID3Classifier(**base, budget_split=0.5).fit(X, y).tree_
    assert a.feature.tolist() == b.feature.tolist() and a.label.tolist() == b.label.tolist()
    c = DiffPID3Classifier(**base, budget_split=0.8, accountant=acc).fit(X, y)
    g = acc.history[-1].guarantee
    assert repr(g) == repr(c.privacy_guarantee()) and g.epsilon(0) == pytest.approx(1.0, rel=1e-15)
    assert g.epsilon(0) >= 1.0


def test_estimators_same_seed_same_model_and_params_round_trip():
    X, y = blobs(800)
    for est in (DiffPID3Classifier(epsilon=1.0, depth=2, n_max=1000, feature_bounds=(0, 10), random_state=7),
                DPMOETClassifier(epsilon=1.0, population=10, generations=1, depth=2, max_depth=3,
                                 feature_bounds=(0, 10), random_state=7)):
        a = clone(est).fit(X, y).predict(X)
        b = clone(est).fit(X, y).predict(X)
        assert (a == b).all()
        params = est.get_params()
        assert clone(est).set_params(**params).get_params() == params


def test_dataframe_with_categories_in_a_pipeline():
    data = dpselect.datasets.load_adult(data_path("tabular"))
    df = pd.DataFrame(data.X[:3000, :6], columns=data.feature_names[:6])
    df["workclass"] = [data.categories[4][int(c)] for c in data.X[:3000, 4]]
    y = np.where(data.y[:3000] == 1, ">50K", "<=50K")
    bounds = {c: (0.0, 1.0) for c in ["age", "capital_gain", "capital_loss", "hours_per_week", "education"]}
    cats = {"workclass": dpselect.tabular.ADULT_CATEGORIES["workclass"]}
    df = df.drop(columns=["education"])
    bounds.pop("education")
    for Est, extra in ((DiffPID3Classifier, {"n_max": 45222, "depth": 3}),
                       (DPMOETClassifier, {"population": 10, "generations": 1})):
        pipe = make_pipeline(FunctionTransformer(lambda d: d), Est(epsilon=1.0, feature_bounds=bounds,
                                                                   categories=cats, classes=["<=50K", ">50K"],
                                                                   random_state=0, **extra))
        with warnings.catch_warnings():
            warnings.simplefilter("error", dpselect.PrivacyLeakWarning)
            pipe.fit(df, y)
        assert set(pipe.predict(df)) <= {"<=50K", ">50K"}
        assert 0.0 <= pipe.score(df, y) <= 1.0
        est = pipe[-1]
        assert list(est.feature_names_in_) == list(df.columns) and est.categorical_.tolist()[-1]
        bad = df.copy()
        bad.loc[0, "workclass"] = "Astronaut"
        with pytest.raises(ValueError, match="public categories"):
            pipe.predict(bad)


def test_select_model_among_estimators_is_a_dataframe_workflow():
    X, y = blobs(1200)
    train, val = slice(0, 600), slice(600, None)
    models = {d: DiffPID3Classifier(epsilon=4.0, depth=d, n_max=1000, feature_bounds=(0, 10), random_state=d)
              .fit(X[train], y[train]) for d in (0, 1, 2)}
    pick = select_model(models, pd.DataFrame(X[val]), pd.Series(y[val]), epsilon=1.0, objectives=("accuracy",),
                        random_state=0)
    assert pick in models


def test_aggregate_fast_path_has_priv_aggs_law():
    """select_model's PrivAgg uses an elementwise δ^agg (for speed): the same law as dpselect.multiobjective.priv_agg."""
    from dpselect.sklearn._select import _weighted_rates

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 200)
    P = np.where(rng.random((6, 200)) < rng.uniform(0.5, 0.95, (6, 1)), y, 1 - y)
    U, sfs = model_objectives(y, P, ("tpr", "tnr", "accuracy"))
    w = np.array([0.5, -0.25, 1.0])
    fast = _weighted_rates(w, sfs)
    ref = dpselect.weighted_sum(w, sfs)
    for t in (0, 3, 50, 500):
        assert np.allclose(fast(t), ref(t))
    idx = np.array([0, 2, 5, 1])
    assert np.allclose(fast.at(np.array([0, 7, 70, 700]), idx),
                       [ref(t)[i] for t, i in zip([0, 7, 70, 700], idx)])
    a = dpselect.local_dampening_probabilities(U @ w, epsilon=1.0, sensitivity_function=fast)
    b = dpselect.multiobjective.priv_agg_probabilities(U, w, epsilon=1.0, sensitivities=sfs, mechanism="LD")
    assert np.allclose(a, b, rtol=1e-12, atol=1e-15)
    a = dpselect.shifted_local_dampening_probabilities(U @ w, epsilon=1.0, sensitivity_function=fast)
    b = dpselect.multiobjective.priv_agg_probabilities(U, w, epsilon=1.0, sensitivities=sfs, mechanism="SLD")
    assert np.allclose(a, b, rtol=1e-9, atol=1e-15)


# ---------------------------------------------------------------------------------------------------
# issue 21: what a fitted estimator holds, data-independent errors, select_model's labels
# ---------------------------------------------------------------------------------------------------
def _fitted_state(est):
    """Every attribute of a fitted estimator but the released model, as comparable Python values."""
    out = {}
    for name, value in vars(est).items():
        if name in ("trees_", "tree_"):
            continue
        if name == "result_":
            value = {k: v for k, v in vars(value).items() if k != "trees"}
        out[name] = repr(value)
    return out


@pytest.mark.parametrize("Est,extra", [(DiffPID3Classifier, {"n_max": 100, "depth": 2}),
                                       (DPMOETClassifier, {"population": 10, "generations": 2, "depth": 2,
                                                           "max_depth": 3})], ids=["DiffPID3", "DPMOET"])
def test_fitted_estimator_holds_nothing_exact_about_the_records(Est, extra):
    """P5: neighbours (one record removed) give fitted objects that differ only in the released model; the
    old DPMOETClassifier.result_ kept the exact training TPR/TNR (e.g. 30/34 vs 29/33) of every tree."""
    X, y = blobs(60, seed=2)
    est = Est(epsilon=1.0, feature_bounds=(0, 10), classes=[0, 1], random_state=5, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpselect.PrivacyLeakWarning)
        a = clone(est).fit(X, y)
        b = clone(est).fit(X[1:], y[1:])
    assert _fitted_state(a) == _fitted_state(b)
    if Est is DPMOETClassifier:
        assert a.result_.objectives is None and a.result_.history == []


@pytest.mark.parametrize("Est,extra", [(DiffPID3Classifier, {"n_max": 100, "depth": 2}),
                                       (DPMOETClassifier, {"population": 10, "generations": 1, "depth": 2,
                                                           "max_depth": 3})], ids=["DiffPID3", "DPMOET"])
@pytest.mark.parametrize("labels", ["01", "bool", "strings"])
def test_one_class_absent_fits_like_its_neighbour(Est, extra, labels):
    """P6: y with one negative vs its neighbour without it. Boolean labels need no classes (the dtype names
    them); 0/1 integers without classes follow the boolean convention, with a PrivacyLeakWarning on every
    table alike (issue 33 item 9: it used to warn on {1, 2} but not on its neighbour {1})."""
    X, _ = blobs(40, seed=3)
    y = np.ones(40, int)
    y[0] = 0
    classes = None
    if labels == "bool":
        y = y.astype(bool)
    elif labels == "strings":
        y = np.where(y == 1, "yes", "no")
        classes = ["no", "yes"]
    est = Est(epsilon=1.0, feature_bounds=(0, 10), classes=classes, random_state=0, **extra)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        present = clone(est).fit(X, y)
        absent = clone(est).fit(X[1:], y[1:])
        only_neg = clone(est).fit(X[:1], y[:1])
    leaks = [str(w.message) for w in rec if issubclass(w.category, dpselect.PrivacyLeakWarning)]
    assert leaks == ([] if labels != "01" else [leaks[0]] * 3) and (labels != "01" or "classes" in leaks[0])
    expected = {"01": [0, 1], "bool": [False, True], "strings": ["no", "yes"]}[labels]
    for fitted in (present, absent, only_neg):
        assert fitted.classes_.tolist() == expected
        assert set(fitted.predict(X).tolist()) <= set(expected)
        assert fitted.predict_proba(X).shape == (40, 2)


def test_labels_read_from_y_warn_and_one_string_label_asks_for_classes():
    X, y = blobs(50)
    est = DiffPID3Classifier(n_max=100, depth=1, feature_bounds=(0, 10), random_state=0)
    with pytest.warns(dpselect.PrivacyLeakWarning, match="classes"):
        clone(est).fit(X, np.where(y == 1, "b", "a"))
    with pytest.warns(dpselect.PrivacyLeakWarning), pytest.raises(ValueError, match=r"classes=\[negative, positive\]"):
        clone(est).fit(X, np.full(50, "a"))
    with pytest.warns(dpselect.PrivacyLeakWarning, match="classes"):
        assert clone(est).fit(X, y.astype(float)).classes_.tolist() == [0.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpselect.PrivacyLeakWarning)
        assert clone(est).fit(X, y.astype(bool)).classes_.tolist() == [False, True]


@pytest.mark.parametrize("params,exc,match", [
    ({"feature_bounds": {0: "ab"}}, TypeError, r"feature_bounds\[0\] must be a pair of numbers"),
    ({"feature_bounds": "ab"}, TypeError, "feature_bounds must be"),
    ({"feature_bounds": [("a", "b")] * 3}, TypeError, "feature_bounds must be"),
    ({"classes": 5}, TypeError, "classes must be a sequence"),
    ({"classes": "ab"}, TypeError, "classes must be a sequence"),
    ({"classes": [0, 0]}, ValueError, "classes must be the two public class labels"),
    ({"random_state": "x"}, TypeError, "random_state must be"),
    ({"random_state": -1}, TypeError, "random_state must be"),
    ({"budget_split": 0.0}, ValueError, r"budget_split must be a number in \(0, 1\)"),
    ({"budget_split": 1.0}, ValueError, "budget_split"),
    ({"budget_split": float("nan")}, ValueError, "budget_split"),
    ({"budget_split": "half"}, TypeError, "budget_split"),
])
def test_estimator_errors_name_their_parameter(params, exc, match):
    X, y = blobs(50)
    with pytest.raises(exc, match=match):
        DiffPID3Classifier(n_max=100, depth=1, **{"feature_bounds": (0, 10), **params}).fit(X, y)


def test_string_columns_without_categories_name_categories():
    df = pd.DataFrame({"job": ["a", "b"] * 20, "age": np.linspace(0, 1, 40)})
    y = np.tile([0, 1], 20)
    for Est in (DiffPID3Classifier, DPMOETClassifier):
        with pytest.raises(ValueError, match="categories="):
            Est(feature_bounds=(0, 1)).fit(df, y)
    clf = DiffPID3Classifier(n_max=100, depth=1, feature_bounds={"age": (0, 1)}, categories={"job": ["a", "b"]},
                             random_state=0).fit(df, y)
    assert clf.categorical_.tolist() == [True, False]
    two = df.assign(sex=["F", "M"] * 20)[["job", "sex", "age"]]
    with pytest.raises(ValueError, match=r"column 'sex' of X holds non-numbers.*categories=\{'sex'"):
        clone(clf).fit(two, y)


def test_select_model_labels_need_pos_label():
    """Item 9: string labels under the default scored every model TPR 0, TNR 1 (an all-wrong model won)."""
    y = np.array(["yes", "no"] * 100)
    right = y.copy()
    wrong = np.where(y == "yes", "no", "yes")
    with pytest.raises(ValueError, match="pos_label"):
        select_model(y=y, predictions=[wrong, right], epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match="pos_label=1 cannot equal a label of y"):
        select_model(y=y, predictions=[wrong, right], epsilon=1.0, pos_label=1, random_state=0)
    picks = [select_model(y=y, predictions=[wrong, right], epsilon=1.0, pos_label="yes", random_state=s)
             for s in range(10)]
    assert picks == [1] * 10
    U, _ = model_objectives(y, [wrong, right], pos_label="yes")
    assert U.tolist() == [[0.0, 0.0], [1.0, 1.0]]
    # booleans and 0/1 need no pos_label; 2 is outside that convention; one-vs-rest only when asked
    assert model_objectives([True, False], [[True, True]])[0].tolist() == [[1.0, 0.0]]
    with pytest.raises(ValueError, match="pos_label"):
        model_objectives([0, 1, 2], [[0, 1, 1]])
    assert model_objectives([0, 1, 2], [[0, 1, 1]], pos_label=2)[0].tolist() == [[0.0, 1.0]]


@pytest.mark.parametrize("y,preds,kw,exc,match", [
    ([0, 1, np.nan, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {}, ValueError, "y holds a missing label"),
    ([0, 1, 0, 1], [[0, 1, np.nan, 1], [1, 1, 1, 1]], {}, ValueError, "predictions holds a missing label"),
    ([0, 1, None, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {"pos_label": 1}, ValueError, "y holds a missing label"),
    ([0, 1, 0, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {"pos_label": [1]}, TypeError, "pos_label must be one label"),
    ([0, 1, 0, 1], [[0, 1, 1, 1], [1, 1, 1]], {}, ValueError, "predictions must be a rectangular"),
    ([0, 1, 0, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {"approach": "aggregate", "objective_weights": ["a", "b"]},
     TypeError, "objective_weights must be numbers"),
    ([0, 1, 0, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {"approach": "aggregate", "objective_weights": [1e308, 1e308]},
     ValueError, "objective_weights must have a finite sum"),
    ([0, 1, 0, 1], [[0, 1, 1, 1], [1, 1, 1, 1]], {"approach": "aggregate", "objective_weights": {"tpr": "a"}},
     TypeError, "objective_weights must map"),
])
def test_select_model_bad_inputs_name_the_parameter(y, preds, kw, exc, match):
    with pytest.raises(exc, match=match):
        select_model(y=y, predictions=preds, epsilon=1.0, random_state=0, **kw)


def test_dpmoet_classifier_default_beats_the_constant_predictor_on_adult():
    """Item 13: with the old default (approach="pareto") seed 0 scored 0.246 on Adult's test split (the
    constant predictor: 0.754); the default "accuracy" scores 0.756-0.772 over seeds 0-4."""
    data = dpselect.datasets.load_adult(data_path("tabular"))
    train, test = data.train_test_split(0.3, rng=0)
    cats = {j: list(range(int(data.n_values[j]))) for j in np.flatnonzero(data.categorical)}
    clf = DPMOETClassifier(feature_bounds=(0.0, 1.0), categories=cats, random_state=1).fit(train.X, train.y)
    constant = max(test.y.mean(), 1 - test.y.mean())
    assert clf.approach == "accuracy" and round(constant, 3) == 0.754
    assert round(clf.score(test.X, test.y), 3) == 0.763   # seed 1 (seed 0: 0.756)
