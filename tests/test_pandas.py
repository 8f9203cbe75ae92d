"""pandas inputs: selections come back as index labels; DataFrame columns name the objectives."""
import subprocess
import sys

import numpy as np
import pytest

import dpselect
from dpselect.utilities.classification import tnr, tnr_sensitivity, tpr, tpr_sensitivity

pd = pytest.importorskip("pandas")

U = pd.Series([12.0, 40.0, 39.0, 3.0], index=["a", "b", "c", "d"])
SF = dpselect.constant(4, 1.0)
SELECTORS = {
    "exponential": lambda u, **kw: dpselect.exponential(u, epsilon=1e3, sensitivity=1.0, **kw),
    "permute_and_flip": lambda u, **kw: dpselect.permute_and_flip(u, epsilon=1e3, sensitivity=1.0, **kw),
    "report_noisy_max": lambda u, **kw: dpselect.report_noisy_max(u, epsilon=1e3, sensitivity=1.0, **kw),
    "local_dampening": lambda u, **kw: dpselect.local_dampening(u, epsilon=1e3, sensitivity_function=SF, **kw),
    "shifted_local_dampening": lambda u, **kw: dpselect.shifted_local_dampening(
        u, epsilon=1e3, sensitivity_function=SF, **kw),
}


@pytest.mark.parametrize("name", list(SELECTORS))
def test_series_gives_labels_in_every_shape(name):
    sel = SELECTORS[name]
    assert sel(U, rng=0) == "b"
    assert sel(U, k=1, rng=0).tolist() == ["b"]
    assert sel(U, k=2, rng=0).tolist() == ["b", "c"]
    assert sel(U, size=3, rng=0).tolist() == ["b"] * 3
    assert sel(U, size=2, k=2, rng=0).tolist() == [["b", "c"]] * 2
    # the same draws as the positions of the plain array
    plain = sel(U.to_numpy(), k=2, rng=5)
    assert sel(U, k=2, rng=5).tolist() == U.index[plain].tolist()


def test_integer_and_datetime_index_labels():
    u = pd.Series([1.0, 9.0, 2.0], index=[10, 20, 30])
    assert dpselect.exponential(u, epsilon=1e3, sensitivity=1.0, rng=0) == 20
    t = pd.Series([1.0, 9.0, 2.0], index=pd.date_range("2026-01-01", periods=3))
    assert dpselect.exponential(t, epsilon=1e3, sensitivity=1.0, rng=0) == pd.Timestamp("2026-01-02")


def test_base_measure_series_aligned_on_labels():
    u = pd.Series([0.0, 0.0, 0.0], index=["x", "y", "z"])
    bm = pd.Series([1e-12, 1.0, 1e-12], index=["z", "y", "x"])  # other order: aligned by label
    draws = dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, base_measure=bm, size=50, rng=0)
    assert set(draws.tolist()) == {"y"}
    with pytest.raises(ValueError, match="labels"):
        dpselect.exponential(u, epsilon=1.0, sensitivity=1.0, base_measure=pd.Series([1.0, 1.0, 1.0]))


def _classifier_frame():
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0] * 20)
    pred = np.array([[1, 1, 1, 1, 0, 0, 0, 0] * 20, [1, 0, 1, 0, 1, 0, 1, 0] * 20, [0, 0, 0, 0, 1, 1, 1, 1] * 20])
    U = pd.DataFrame({"tpr": tpr(y, pred), "tnr": tnr(y, pred)}, index=["tree", "coin", "inverse"])
    return y, pred, U


def test_dataframe_objectives_give_labels_and_columns_name_objectives():
    y, pred, U = _classifier_frame()
    sens = {"tnr": tnr_sensitivity(y, pred), "tpr": tpr_sensitivity(y, pred)}  # keyed by column, any order
    assert dpselect.multiobjective.priv_pareto(U, epsilon=50.0, sensitivities=sens, rng=0) == "tree"
    assert dpselect.multiobjective.priv_agg(U, {"tnr": 0.5, "tpr": 0.5}, epsilon=50.0, sensitivities=sens, rng=0) == "tree"
    V = pd.DataFrame({"tpr": [0.9, 0.1, 0.5], "tnr": [0.1, 0.9, 0.5]}, index=["p", "n", "m"])
    w = pd.Series({"tnr": 1.0, "tpr": 0.0})                                 # aligned by name, not position
    assert dpselect.multiobjective.priv_agg(V, w, epsilon=500.0, sensitivities=[1.0, 1.0], rng=0) == "n"
    assert dpselect.multiobjective.priv_agg(V, objective_weights={"tnr": 0.0, "tpr": 1.0}, epsilon=500.0,
                             sensitivities=[1.0, 1.0], k=2, rng=0).tolist() == ["p", "m"]
    top = dpselect.multiobjective.priv_pareto(U, epsilon=50.0, sensitivities=[1.0, 1.0], k=3, rng=0)
    assert sorted(top.tolist()) == ["coin", "inverse", "tree"]
    # positional arrays keep working unchanged with a DataFrame
    assert dpselect.multiobjective.priv_agg(U, [0.5, 0.5], epsilon=50.0, sensitivities=[1.0, 1.0], rng=0) == "tree"


def test_dataframe_name_errors():
    _, _, U = _classifier_frame()
    with pytest.raises(ValueError, match="no entry for column 'tnr'"):
        dpselect.multiobjective.priv_agg(U, {"tpr": 1.0}, epsilon=1.0, sensitivities=[1.0, 1.0])
    with pytest.raises(ValueError, match="unknown column 'f1'"):
        dpselect.multiobjective.priv_pareto(U, epsilon=1.0, sensitivities={"tpr": 1.0, "tnr": 1.0, "f1": 1.0})


def test_core_works_without_pandas_sklearn_tqdm():
    code = ("import sys; sys.modules['pandas'] = sys.modules['sklearn'] = sys.modules['tqdm'] = None;"
            "import dpselect, numpy as np;"
            "print(dpselect.exponential(np.array([1.0, 5.0]), epsilon=1e3, sensitivity=1.0, rng=0));"
            "import dpselect.sklearn as s; print(s.select_model(y=[1, 0] * 5, predictions=[[1, 0] * 5, "
            "[0, 1] * 5], epsilon=1.0, rng=0))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0"]


def test_load_table_takes_a_dataframe_with_missing_cells():
    df = pd.DataFrame({"age": [20, np.nan, 60, 35], "job": pd.Series(["a", "b", None, "a"], dtype="category"),
                       "n": pd.array([1, pd.NA, 3, 4], dtype="Int64"), "y": [True, False, True, False]})
    t = dpselect.datasets.load_table(df, "y", feature_bounds={"age": (0, 100), "n": (0, 10)}, categories={"job": ["a", "b"]})
    assert t.n_records == 2                               # rows with NaN / None / NA dropped
    assert t.X.tolist() == [[0.2, 0.0, 0.1], [0.35, 0.0, 0.4]] and t.y.tolist() == [1, 0]
    assert t.feature_names == ["age", "job", "n"] and t.categorical.tolist() == [False, True, False]
    # the same table as the dict of its columns
    d = dpselect.datasets.load_table({c: df[c].tolist() for c in df.columns}, "y", feature_bounds={"age": (0, 100), "n": (0, 10)},
                            categories={"job": ["a", "b"]})
    assert d.X.tolist() == t.X.tolist()
    with pytest.warns(dpselect.PrivacyLeakWarning, match="feature_bounds"):
        dpselect.datasets.load_table(df, "y", categories={"job": ["a", "b"]})
    with pytest.raises(ValueError, match="duplicate column"):
        dpselect.datasets.load_table(pd.DataFrame([[1, 2, 1]], columns=["a", "a", "y"]), "y")


# ---------------------------------------------------------------------------------------------------
# issue 21 item 12: ambiguous labels and text refused; probabilities keep the index
# ---------------------------------------------------------------------------------------------------
PROBABILITIES = {
    "exponential": lambda u, **kw: dpselect.exponential_probabilities(u, epsilon=1.0, sensitivity=1.0, **kw),
    "permute_and_flip": lambda u, **kw: dpselect.permute_and_flip_probabilities(u, epsilon=1.0, sensitivity=1.0,
                                                                                **kw),
    "report_noisy_max": lambda u, **kw: dpselect.report_noisy_max_probabilities(u, epsilon=1.0, sensitivity=1.0,
                                                                                **kw),
    "local_dampening": lambda u, **kw: dpselect.local_dampening_probabilities(u, epsilon=1.0,
                                                                              sensitivity_function=SF, **kw),
    "shifted_local_dampening": lambda u, **kw: dpselect.shifted_local_dampening_probabilities(
        u, epsilon=1.0, sensitivity_function=SF, **kw),
}


@pytest.mark.parametrize("name", list(PROBABILITIES))
def test_probabilities_of_a_series_are_a_series_indexed_like_it(name):
    fn = PROBABILITIES[name]
    shuffled = U.iloc[[2, 0, 3, 1]]
    p = fn(shuffled)
    assert isinstance(p, pd.Series) and p.index.tolist() == ["c", "a", "d", "b"]
    assert np.array_equal(p.to_numpy(), fn(shuffled.to_numpy()))      # the same numbers as the array form
    assert isinstance(fn(U.to_numpy()), np.ndarray)


def test_multiobjective_probabilities_of_a_dataframe_are_a_series():
    V = pd.DataFrame({"tpr": [0.9, 0.5, 0.1], "tnr": [0.2, 0.6, 0.95]}, index=["m1", "m2", "m3"])
    p = dpselect.multiobjective.priv_pareto_probabilities(V, epsilon=1.0, sensitivities={"tpr": 1.0, "tnr": 1.0})
    assert isinstance(p, pd.Series) and p.index.tolist() == ["m1", "m2", "m3"]
    q = dpselect.multiobjective.priv_agg_probabilities(V, {"tnr": 1.0, "tpr": 3.0}, epsilon=1.0, sensitivities=[1.0, 1.0])
    r = dpselect.multiobjective.priv_agg_probabilities(V.to_numpy(), [3.0, 1.0], epsilon=1.0, sensitivities=[1.0, 1.0])
    assert q.index.tolist() == ["m1", "m2", "m3"] and np.array_equal(q.to_numpy(), r)


@pytest.mark.parametrize("name", list(SELECTORS))
def test_duplicate_index_labels_are_refused(name):
    dup = pd.Series([12.0, 40.0, 39.0, 3.0], index=["a", "b", "b", "d"])
    with pytest.raises(ValueError, match="index holds the label 'b' more than once"):
        SELECTORS[name](dup, rng=0)
    with pytest.raises(ValueError, match="more than once"):
        PROBABILITIES[name](dup)
    assert SELECTORS[name](dup.reset_index(drop=True), rng=0) == 1


@pytest.mark.parametrize("name", list(SELECTORS))
def test_text_utilities_are_refused_numbers_as_objects_accepted(name):
    with pytest.raises(TypeError, match="holds strings"):
        SELECTORS[name](pd.Series(["12", "40", "39", "3"], index=list("abcd")), rng=0)
    with pytest.raises(TypeError, match="holds strings"):
        PROBABILITIES[name](pd.Series(["12", "40", "39", "3"], index=list("abcd")))
    assert SELECTORS[name](pd.Series([12, 40, 39, 3], index=list("abcd"), dtype=object), rng=0) == "b"
