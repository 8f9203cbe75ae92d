"""Tabular loaders: real row counts, label columns, scaling, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpselect import PrivacyLeakWarning

from dpselect.datasets import PUBLIC_TABLE_SIZE
from dpselect.datasets import data_path
from dpselect.tabular import (
    TabularData,
    load_acs,
    load_adult,
    load_dat,
    load_nltcs,
    load_table,
)


@pytest.fixture(autouse=True)
def _no_leak_warning():
    """The shipped loaders read only public schemas: a PrivacyLeakWarning is an error here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        yield


def test_nltcs_real_counts_and_label_column():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    assert d.n_records == PUBLIC_TABLE_SIZE["nltcs"]
    assert (d.n_records, d.n_features) == (21574, 15)
    raw = np.loadtxt(data_path("tabular", "nltcs.dat"), dtype=np.int64)
    assert np.array_equal(d.y, raw[:, 13])                 # 0-based column 13
    assert np.array_equal(d.X, np.delete(raw, 13, axis=1))
    assert int(d.y.sum()) == 8697
    other = load_nltcs(data_path("tabular", "nltcs.dat"), label_column=0)
    assert np.array_equal(other.y, raw[:, 0]) and other.feature_names[0] == "a1"


def test_acs_real_counts_and_13th_from_end():
    d = load_acs(data_path("tabular", "acs.dat"))
    assert (d.n_records, d.n_features) == (47461, 22) and d.n_records == PUBLIC_TABLE_SIZE["acs"]
    raw = np.loadtxt(data_path("tabular", "acs.dat"), dtype=np.int64)
    assert np.array_equal(d.y, raw[:, -13]) and np.array_equal(d.y, raw[:, 10])
    assert np.array_equal(load_acs(data_path("tabular", "acs.dat"), label_column=10).y, d.y)
    assert d.label_name == "a10"


def test_adult_merge_drop_missing_scale():
    d = load_adult(data_path("tabular"))
    assert (d.n_records, d.n_features) == (45222, 12) and d.n_records == PUBLIC_TABLE_SIZE["adult"]
    assert int(d.y.sum()) == 11208                          # >50K incl. the test file's ">50K."
    num = ~d.categorical
    assert num.sum() == 4 and d.categorical.sum() == 8
    assert d.feature_names[:4] == ["age", "capital_gain", "capital_loss", "hours_per_week"]
    assert np.allclose(d.X[:, num].min(axis=0), 0) and np.allclose(d.X[:, num].max(axis=0), 1)
    # first record of adult.data: age 39 with min 17 and max 90
    assert d.X[0, 0] == pytest.approx((39 - 17) / (90 - 17))
    cats = dict(zip(d.feature_names, d.categories))
    assert "?" not in cats["workclass"] and len(cats["native_country"]) == 41
    assert d.n_values[d.feature_names.index("sex")] == 2
    assert cats["workclass"][2] == "Never-worked" and d.n_values[d.feature_names.index("workclass")] == 8
    assert not (d.X[:, d.feature_names.index("workclass")] == 2).any()  # Never-worked never occurs


def test_loaders_take_a_path():
    # issue 23 item 5 / issue 35: the loaders take a path (dpselect.datasets.data_path finds the project's copy);
    # the path-less calls and the by-name loaders of before 0.1.0 are gone
    import dpselect.datasets
    import dpselect.tabular

    for loader, param in ((load_nltcs, "path"), (load_acs, "path"), (load_adult, "directory")):
        with pytest.raises(TypeError, match=rf"missing 1 required positional argument: '{param}'"):
            loader()
    for module, name in ((dpselect.tabular, "load_tabular"), (dpselect.datasets, "dataset_root"),
                         (dpselect.datasets, "dataset_path"), (dpselect.datasets, "_shared_copy")):
        assert not hasattr(module, name) and name not in module.__all__, name
    assert load_nltcs(data_path("tabular", "nltcs.dat")).n_records == 21574


def test_general_table_from_dict_csv_and_dataframe_like(tmp_path):
    cols = {"age": [20, 40, 60, 30], "job": ["a", "b", "a", "?"], "y": ["no", "yes", "no", "yes"]}
    schema = dict(feature_bounds={"age": (0, 100)}, categories={"job": ["b", "a", "c"], "y": ["no", "yes"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # a full public schema: no warning
        t = load_table(cols, "y", **schema)
        p = tmp_path / "t.csv"
        p.write_text("age, job, y\n20, a, no\n40, b, yes\n60, a, no\n30, ?, yes\n")
        t2 = load_table(p, "y", **schema)

        class Frame:  # anything with .columns and column access
            columns = list(cols)

            def __getitem__(self, k):
                return cols[k]

        assert load_table(Frame(), "y", positive="no", **schema).y.tolist() == [1, 0, 1]
    assert t.n_records == 3                                 # the '?' row is dropped
    assert t.X.tolist() == [[0.2, 1.0], [0.4, 0.0], [0.6, 1.0]]  # codes follow the given category order
    assert t.n_values.tolist() == [0, 3] and t.categories[1] == ["b", "a", "c"]
    assert t.y.tolist() == [0, 1, 0]
    assert t2.X.tolist() == t.X.tolist() and t2.y.tolist() == t.y.tolist()
    # without the schema: the data's own min/max and categories, with a PrivacyLeakWarning each
    with pytest.warns(PrivacyLeakWarning) as rec:
        own = load_table(cols, "y")
    msgs = [str(w.message) for w in rec]
    assert any("feature_bounds['age']" in m and "(20.0, 60.0)" in m for m in msgs)
    assert any("categories['job']" in m for m in msgs)
    assert own.X.tolist() == [[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]] and own.n_values.tolist() == [0, 2]
    with pytest.warns(PrivacyLeakWarning, match=r"categories\['age'\]"):
        forced = load_table(cols, "y", categorical=["age"], categories={"job": ["a", "b"], "y": ["no", "yes"]})
    assert forced.categorical.tolist() == [True, True] and forced.n_values.tolist() == [3, 2]
    assert load_table(cols, "y", categories={"age": ["20", "40", "60"], "job": ["a", "b"], "y": ["no", "yes"]}).categorical.all()


def test_clear_errors(tmp_path):
    cols = {"a": [1, 2, 3], "y": [0, 1, 2]}
    with pytest.raises(ValueError, match="label column 'z' not found"):
        load_table(cols, "z")
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="must be binary"):
        load_table(cols, "y")
    with pytest.raises(ValueError, match="unknown column"):
        load_table({"a": [1, 2], "y": [0, 1]}, "y", features=["b"])
    with pytest.raises(ValueError, match="empty"):
        load_table({"a": [], "y": []}, "y")
    with pytest.raises(ValueError, match="no record left"):
        load_table({"a": ["?", "?"], "y": [0, 1]}, "y")
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="not a value"):
        load_table({"a": [1, 2], "y": [0, 1]}, "y", positive=5)
    with pytest.raises(FileNotFoundError):
        load_table(tmp_path / "missing.csv", "y")
    with pytest.raises(TypeError):
        load_table(42, "y")
    (tmp_path / "x.dat").write_text("0 1\n1 0\n")
    (tmp_path / "x.domain").write_text("D 0 1\nD 0 1 2\n")
    with pytest.raises(ValueError, match="must be binary"):
        load_dat(tmp_path / "x.dat", tmp_path / "x.domain", label_column=1)
    with pytest.raises(ValueError, match="label_column"):
        load_dat(tmp_path / "x.dat", tmp_path / "x.domain", label_column=5)
    # 0 records is a table of the add/remove domain like any other (a private fit on it must release)
    assert TabularData(np.zeros((0, 2)), np.zeros(0), ["a", "b"], [False, False], [0, 0]).n_records == 0


def test_splits_and_folds_partition():
    d = load_nltcs(data_path("tabular", "nltcs.dat"))
    tr, te = d.train_test_split(0.3, rng=0)
    assert tr.n_records + te.n_records == d.n_records and te.n_records == round(0.3 * d.n_records)
    folds = d.folds(10, rng=1)
    test_all = np.concatenate([te_ for _, te_ in folds])
    assert np.array_equal(np.sort(test_all), np.arange(d.n_records))
    for tr_i, te_i in folds:
        assert np.intersect1d(tr_i, te_i).size == 0 and tr_i.size + te_i.size == d.n_records


def test_label_domain_is_public_schema():
    cols = {"a": ["x", "y", "x"], "y": ["lo", "hi", "lo"]}
    schema = {"a": ["x", "y"]}
    with pytest.warns(PrivacyLeakWarning, match=r"categories\['y'\] .*the values of column 'y'") as rec:
        t = load_table(cols, "y", categories=schema)
    assert "hi" not in str(rec[0].message) and "lo'" not in str(rec[0].message)   # no value named
    assert t.y.tolist() == [1, 0, 1]                       # the larger value read: 'lo'
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        t = load_table(cols, "y", categories={**schema, "y": ["lo", "hi"]})   # positive: the second listed
        assert t.y.tolist() == [0, 1, 0]
    with pytest.warns(PrivacyLeakWarning, match=r"categories\['y'\]"):
        assert load_table({"a": ["x", "y"], "y": [0, 1]}, "y", categories=schema).y.tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"categories\['y'\] must list every value of the label: a value") as exc:
        load_table({"a": ["x", "y"], "y": ["lo", "mid"]}, "y", categories={**schema, "y": ["lo", "hi"]})
    assert "mid" not in str(exc.value)
    with pytest.raises(ValueError, match=r"categories\['y'\] must list the label's two values"):
        load_table(cols, "y", categories={**schema, "y": ["lo"]})


@pytest.mark.parametrize("labels", [[0, 1, 1], ["0", "1", "1"], [False, True, True], ["false", "true", "true"]])
def test_boolean_label_with_one_class_absent_loads_like_its_neighbour(labels):
    """P6: 0/1 labels follow the boolean convention; the neighbour without its one negative record loads too.
    Read off the records (no categories['y']), they warn on every table alike (issue 33 item 9)."""
    cols = {"a": [0.1, 0.5, 0.9], "y": labels}
    with pytest.warns(PrivacyLeakWarning, match=r"categories\['y'\]") as rec:
        full = load_table(cols, "y", feature_bounds={"a": (0, 1)})
        drop = load_table({"a": cols["a"][1:], "y": labels[1:]}, "y", feature_bounds={"a": (0, 1)})
        neg = load_table({"a": cols["a"][:1], "y": labels[:1]}, "y", feature_bounds={"a": (0, 1)})
        flipped = load_table({"a": cols["a"][1:], "y": labels[1:]}, "y", feature_bounds={"a": (0, 1)}, positive=0)
    assert len({str(w.message) for w in rec}) == 1 and len(rec) == 4
    assert full.y.tolist() == [0, 1, 1] and drop.y.tolist() == [1, 1] and neg.y.tolist() == [0]
    assert flipped.y.tolist() == [0, 0]


def test_labels_read_from_the_data_warn_and_name_categories():
    import dpselect
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match=r"categories\['y'\]"):
        load_table({"a": [0.1, 0.2], "y": ["no", "no"]}, "y", feature_bounds={"a": (0, 1)})
    with pytest.warns(dpselect.PrivacyLeakWarning, match=r"categories\['y'\]"):
        load_table({"a": [0.1, 0.2], "y": ["no", "yes"]}, "y", feature_bounds={"a": (0, 1)})
    one = load_table({"a": [0.1, 0.2], "y": ["no", "no"]}, "y", feature_bounds={"a": (0, 1)},
                     categories={"y": ["no", "yes"]})
    assert one.y.tolist() == [0, 0]


@pytest.mark.parametrize("bounds", ["01", ("0", "1"), b"01"])
def test_feature_bounds_refuse_strings(bounds):
    with pytest.raises(TypeError, match=r"feature_bounds\['a'\] must be a pair of numbers"):
        load_table({"a": [0.1], "y": [1]}, "y", feature_bounds={"a": bounds})
