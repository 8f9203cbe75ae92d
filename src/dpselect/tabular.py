"""Tabular datasets with a binary class label: NLTCS, ACS, Adult and any CSV / DataFrame-like table.

Every loader returns a :class:`TabularData`: a float64 feature matrix ``X`` of shape (n, p) in which a
*numeric* column holds values scaled to [0, 1] and a *categorical* column holds integer codes
0 .. n_values-1 (stored as floats), plus the binary label vector ``y`` (int8, 1 = positive class). This is
the representation :mod:`dpselect.trees` and :mod:`dpselect.trees._diffpid3` consume.

The loaders take the path of the files, which are read in place; the project's copy is found by the
reproduction layer (:func:`dpselect.experiments.data_path`, e.g. ``data_path("tabular", "nltcs.dat")``).

Public schema. The privacy proofs of the trees treat the *encoding* as public: the range a numeric
column is scaled by and the list of categories of a categorical column. Read from the private records
(the column's own minimum and maximum, the categories that happen to occur) they leak: one record with
a new maximum moves every scaled value. :func:`load_table` therefore takes them as parameters
(``feature_bounds``, ``categories``); a column left out falls back to the data with a
:class:`~dpselect.PrivacyLeakWarning`, and a value outside the given bounds or categories is a
``ValueError``. The shipped loaders pass public schemas: the ``.domain`` files of NLTCS and ACS, and for
Adult the categories of ``adult.names`` and the ranges of :data:`ADULT_NUMERIC_BOUNDS`.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ._rng import check_rng
from .typing import RngLike
from ._validation import check_int
from .exceptions import warn_public_from_data

__all__ = [
    "TabularData",
    "load_nltcs",
    "load_acs",
    "load_adult",
    "load_dat",
    "load_table",
    "TABULAR_DATASETS",
    "ADULT_NUMERIC_BOUNDS",
    "ADULT_CATEGORIES",
    "ADULT_NUMERIC",
    "ADULT_CATEGORICAL",
]

#: lower-case names of the papers' tables (the reproductions' ``--datasets``)
TABULAR_DATASETS = ("nltcs", "adult", "acs")


@dataclass
class TabularData:
    """A table of predictors and a binary class label.

    The loaders (:func:`load_table`, :func:`load_nltcs`, :func:`load_acs`, :func:`load_adult`,
    :func:`load_dat`) build it with a public encoding; the constructor checks the encoding (``ValueError``
    naming the column) and does not scale or code anything itself. A table of 0 records is valid: under
    add/remove-one it neighbours every one-record table, and a private fit on it releases like on any other.

    Parameters
    ----------
    X : array-like, shape (n, p)
        Numeric columns already scaled to [0, 1], categorical columns as integer codes.
    y : array-like of 0/1, shape (n,)
        The class label.
    feature_names : list of str, length p
    categorical : array-like of bool, shape (p,)
    n_values : array-like of int, shape (p,)
        Number of categories of a categorical column (>= 1), 0 for a numeric column.
    categories : list, optional
        Original values of every categorical column (default: the codes 0 .. n_values[i]-1).
    name : str, default "table"
    label_name : str, default "label"

    Attributes
    ----------
    X : ndarray, shape (n, p), float64
        Numeric columns scaled to [0, 1]; categorical columns hold integer codes 0 .. n_values[i]-1.
    y : ndarray, shape (n,), int8
        The class label, 1 for the positive class and 0 otherwise.
    feature_names : list of str
    categorical : ndarray of bool, shape (p,)
        True where column i is categorical.
    n_values : ndarray of int64, shape (p,)
        Number of categories of a categorical column, 0 for a numeric column.
    categories : list
        ``categories[i]`` lists the original values of categorical column i (code k means
        ``categories[i][k]``), ``None`` for a numeric column.
    name : str
    label_name : str

    Examples
    --------
    >>> import numpy as np
    >>> t = TabularData(np.array([[0.0, 1], [0.5, 0], [1.0, 1]]), [1, 0, 1], ["x", "c"], [False, True], [0, 2])
    >>> t.n_records, t.n_features, t.categories
    (3, 2, [None, [0, 1]])
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    categorical: np.ndarray
    n_values: np.ndarray
    categories: list = field(default_factory=list)
    name: str = "table"
    label_name: str = "label"

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=np.float64)
        self.y = np.ascontiguousarray(self.y, dtype=np.int8)
        self.categorical = np.asarray(self.categorical, dtype=bool)
        self.n_values = np.asarray(self.n_values, dtype=np.int64)
        if self.X.ndim != 2:
            raise ValueError(f"X must be 2-D (records x features), got shape {self.X.shape}")
        n, p = self.X.shape
        # 0 records is a table like any other: under add/remove-one it neighbours every one-record table, and
        # a private fit on it must release (from its law on the empty table), not fail
        if p == 0:
            raise ValueError("the table has no predictor column")
        if self.y.shape != (n,):
            raise ValueError(f"y must have one label per record ({n}), got shape {self.y.shape}")
        if not np.isin(self.y, (0, 1)).all():
            raise ValueError("y must be binary (0/1)")
        if self.categorical.shape != (p,) or self.n_values.shape != (p,) or len(self.feature_names) != p:
            raise ValueError("feature_names, categorical and n_values must have one entry per column of X")
        bad = ~np.isfinite(self.X)
        if bad.any():
            r, c = (int(i[0]) for i in np.nonzero(bad))
            raise ValueError(f"X must be finite (drop or impute missing values first): X[{r}, {c}] "
                             f"(column {self.feature_names[c]!r}) is {self.X[r, c]}")
        cat = self.categorical
        if cat.any():
            nv = self.n_values[cat]
            if (nv < 1).any():
                c = int(np.flatnonzero(cat)[np.argmax(nv < 1)])
                raise ValueError(f"n_values[{c}] (categorical column {self.feature_names[c]!r}) must be >= 1, "
                                 f"got {int(self.n_values[c])}")
            Xc = self.X[:, cat]
            wrong = (Xc < 0) | (Xc >= nv) | (Xc != np.floor(Xc))
            if wrong.any():
                r, j = (int(i[0]) for i in np.nonzero(wrong))
                c = int(np.flatnonzero(cat)[j])
                raise ValueError(f"categorical column {self.feature_names[c]!r} must hold integer codes "
                                 f"0 .. n_values[{c}] - 1 = {int(self.n_values[c]) - 1}, got X[{r}, {c}] = {Xc[r, j]}")
        if (~cat).any():
            Xn = self.X[:, ~cat]
            wrong = (Xn < 0) | (Xn > 1)
            if wrong.any():
                r, j = (int(i[0]) for i in np.nonzero(wrong))
                c = int(np.flatnonzero(~cat)[j])
                raise ValueError(f"numeric column {self.feature_names[c]!r} must be scaled to [0, 1], got "
                                 f"X[{r}, {c}] = {Xn[r, j]} (load_table scales by feature_bounds)")
        if not self.categories:
            self.categories = [list(range(int(k))) if c else None for c, k in zip(self.categorical, self.n_values)]

    @property
    def n_records(self) -> int:
        """Number of records n (``int``).

        >>> TabularData([[0.0], [1.0]], [0, 1], ["x"], [False], [0]).n_records
        2
        """
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of predictor columns p (``int``).

        >>> TabularData([[0.0], [1.0]], [0, 1], ["x"], [False], [0]).n_features
        1
        """
        return int(self.X.shape[1])

    def subset(self, rows: np.ndarray) -> "TabularData":
        """The records ``rows`` (an index or boolean array), same columns and encodings.

        Parameters
        ----------
        rows : array-like of int or bool
            Record indices, or a mask of length n.

        Returns
        -------
        TabularData
            A new table of ``len(rows)`` (or ``rows.sum()``) records.

        Examples
        --------
        >>> import numpy as np
        >>> t = TabularData(np.array([[0.0, 1], [0.5, 0], [1.0, 1]]), [1, 0, 1], ["x", "c"], [False, True], [0, 2])
        >>> t.subset([0, 2]).y.tolist()
        [1, 1]
        """
        rows = np.asarray(rows)
        return TabularData(self.X[rows], self.y[rows], list(self.feature_names), self.categorical.copy(),
                           self.n_values.copy(), list(self.categories), self.name, self.label_name)

    def train_test_split(self, test_fraction: float = 0.3, *, rng: RngLike = None) -> tuple["TabularData", "TabularData"]:
        """A random split into a training and a held-out table (``rng`` as everywhere).

        Parameters
        ----------
        test_fraction : float in (0, 1), default 0.3
            Share of the records in the held-out table (rounded; neither part may be empty).
        rng : RngLike, optional
            Seed or generator (numpy SPEC 7).

        Returns
        -------
        (TabularData, TabularData)
            ``(train, test)``, each in the original record order.

        Examples
        --------
        >>> t = TabularData([[0.0], [0.2], [0.4], [0.6], [0.8], [1.0]], [0, 1] * 3, ["x"], [False], [0])
        >>> train, test = t.train_test_split(0.5, rng=0)
        >>> train.n_records, test.n_records
        (3, 3)
        """
        if not 0 < test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
        gen = check_rng(rng)
        perm = gen.permutation(self.n_records)
        n_test = int(round(test_fraction * self.n_records))
        if n_test == 0 or n_test == self.n_records:
            raise ValueError(f"test_fraction={test_fraction} leaves an empty part of {self.n_records} records")
        return self.subset(np.sort(perm[n_test:])), self.subset(np.sort(perm[:n_test]))

    def folds(self, n_folds: int = 10, *, rng: RngLike = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """``n_folds`` (train_index, test_index) pairs of a shuffled k-fold cross-validation.

        Parameters
        ----------
        n_folds : int, default 10
            Number of folds, 2 .. n_records.
        rng : RngLike, optional
            Seed or generator (numpy SPEC 7).

        Returns
        -------
        list of (numpy.ndarray, numpy.ndarray)
            ``n_folds`` pairs of sorted record indices; the test parts partition the records.

        Examples
        --------
        >>> t = TabularData([[0.0], [0.2], [0.4], [0.6]], [0, 1, 0, 1], ["x"], [False], [0])
        >>> [(len(tr), len(te)) for tr, te in t.folds(2, rng=0)]
        [(2, 2), (2, 2)]
        """
        k = check_int(n_folds, "n_folds", minimum=2, maximum=self.n_records)
        perm = check_rng(rng).permutation(self.n_records)
        parts = np.array_split(perm, k)
        return [(np.sort(np.concatenate(parts[:i] + parts[i + 1:])), np.sort(parts[i])) for i in range(k)]

    def __repr__(self) -> str:
        return (f"TabularData({self.name!r}, {self.n_records} records, {self.n_features} features "
                f"({int(self.categorical.sum())} categorical), label {self.label_name!r}, "
                f"{int(self.y.sum())} positive)")


# -- .dat + .domain (NLTCS, ACS) -----------------------------------------------------------------------

def _read_domain(path: Path) -> list[list[str]]:
    doms = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] != "D" or len(parts) < 2:
            raise ValueError(f"{path}:{lineno}: expected 'D v1 v2 ...' (a discrete column), got {line!r}")
        doms.append(parts[1:])
    if not doms:
        raise ValueError(f"{path}: empty domain file")
    return doms


def load_dat(dat: str | Path, domain: str | Path, *, label_column: int, positive: Any = 1,
             name: str | None = None) -> TabularData:
    """Load a whitespace-separated ``.dat`` file of discrete columns described by a ``.domain`` file.

    Parameters
    ----------
    dat, domain : path
        The data (one record per line, no header) and its domain (one line ``D v1 v2 ...`` per column).
    label_column : int
        **0-based** index of the class column; negative values count from the end as in Python
        (-1 is the last column).
    positive : value, default 1
        The class value treated as positive (label 1); the label must be binary.
    name : str, optional

    Returns
    -------
    TabularData
        Every other column becomes a categorical predictor with the codes of its domain.

    Examples
    --------
    >>> from dpselect.experiments import data_path
    >>> d = load_dat(data_path("tabular", "nltcs.dat"), data_path("tabular", "nltcs.domain"),
    ...              label_column=13)
    >>> d.n_records, d.n_features
    (21574, 15)
    """
    dat, domain = Path(dat), Path(domain)
    if not dat.exists():
        raise FileNotFoundError(f"dataset file not found: {dat}")
    if not domain.exists():
        raise FileNotFoundError(f"domain file not found: {domain}")
    doms = _read_domain(domain)
    ncol = len(doms)
    lc = check_int(label_column, "label_column", minimum=-ncol, maximum=ncol - 1)
    lc = lc % ncol
    raw = np.loadtxt(dat, dtype=str, ndmin=2)
    if raw.size == 0:
        raise ValueError(f"{dat}: no records")
    if raw.shape[1] != ncol:
        raise ValueError(f"{dat}: {raw.shape[1]} columns but {domain} describes {ncol}")
    codes = np.empty(raw.shape, dtype=np.int64)
    for i, dom in enumerate(doms):
        lookup = {v: k for k, v in enumerate(dom)}
        col = raw[:, i]
        uniq, inv = np.unique(col, return_inverse=True)
        bad = [u for u in uniq if u not in lookup]
        if bad:
            raise ValueError(f"{dat}: column {i} has value {bad[0]!r} outside its domain {dom}")
        codes[:, i] = np.array([lookup[u] for u in uniq], dtype=np.int64)[inv]
    label_dom = doms[lc]
    if len(label_dom) != 2:
        raise ValueError(f"label column {lc} must be binary, its domain is {label_dom}")
    pos = str(positive)
    if pos not in label_dom:
        raise ValueError(f"positive={positive!r} is not a value of label column {lc} (domain {label_dom})")
    y = (codes[:, lc] == label_dom.index(pos)).astype(np.int8)
    keep = [i for i in range(ncol) if i != lc]
    X = codes[:, keep].astype(np.float64)
    return TabularData(X, y, [f"a{i}" for i in keep], np.ones(len(keep), bool),
                       np.array([len(doms[i]) for i in keep]), [list(doms[i]) for i in keep],
                       name or dat.stem, f"a{lc}")


def load_nltcs(path: str | Path, *, label_column: int = 13) -> TabularData:
    """NLTCS (National Long Term Care Survey): 21,574 records, 16 binary attributes.

    The class is column ``label_column`` (default 13, **0-based**: the 14th column of ``nltcs.dat``),
    the one the papers' experiments predict; the other 15 binary columns are categorical predictors.
    Neither the paper (Sec. 6.3) nor the thesis (Sec. 7.4) says whether "column 13" is 0- or 1-based;
    we read it as a Python (0-based) index, as in the papers' Python code. Pass another index to
    predict another attribute.

    ``path`` is the ``.dat`` file (its ``.domain`` must sit beside it).

    Parameters
    ----------
    path : str or path-like
        The ``nltcs.dat`` file.
    label_column : int, default 13
        0-based (or negative) index of the class column.

    Returns
    -------
    TabularData
        21,574 records, 15 categorical predictors (2 values each), public encoding from the ``.domain`` file.

    Examples
    --------
    >>> from dpselect.experiments import data_path
    >>> d = load_nltcs(data_path("tabular", "nltcs.dat"))
    >>> d.n_records, d.n_features, int(d.y.sum())
    (21574, 15, 8697)
    """
    dat = Path(path)
    return load_dat(dat, dat.with_suffix(".domain"), label_column=label_column, name="nltcs")


def load_acs(path: str | Path, *, label_column: int = -13) -> TabularData:
    """ACS (American Community Survey, IPUMS 2013-2014): 47,461 records, 23 binary attributes.

    The class is the 13th column from the end (``label_column=-13``, a Python negative index: column
    10 of 0..22), as in the papers' experiments; the other 22 columns are categorical predictors. Pass
    another (0-based or negative) index to predict another attribute.

    ``path`` is the ``.dat`` file (its ``.domain`` must sit beside it).

    Parameters
    ----------
    path : str or path-like
        The ``acs.dat`` file.
    label_column : int, default -13
        0-based or negative index of the class column.

    Returns
    -------
    TabularData
        47,461 records, 22 categorical predictors, public encoding from the ``.domain`` file.

    Examples
    --------
    >>> from dpselect.experiments import data_path
    >>> d = load_acs(data_path("tabular", "acs.dat"))
    >>> d.n_records, d.n_features
    (47461, 22)
    """
    dat = Path(path)
    return load_dat(dat, dat.with_suffix(".domain"), label_column=label_column, name="acs")


# -- general CSV / DataFrame-like ---------------------------------------------------------------------

def _is_number(s: str) -> bool:
    try:
        v = float(s)
    except ValueError:
        return False
    return math.isfinite(v)


def load_table(data: str | Path | Mapping[str, Sequence] | Any, label: str, *,
               positive: Any = None, features: Sequence[str] | None = None,
               categorical: Sequence[str] | None = None, numeric: Sequence[str] | None = None,
               missing: Sequence[str] = ("?", ""), feature_bounds: Mapping[str, tuple[float, float]] | None = None,
               categories: Mapping[str, Sequence] | None = None, name: str | None = None,
               delimiter: str = ",") -> TabularData:
    """Load any table with a named binary label column: a CSV file, a dict of columns or a DataFrame.

    Parameters
    ----------
    data : path, mapping or DataFrame-like
        A CSV file with a header line; a mapping column name -> sequence; or any object with
        ``.columns`` and ``[name]`` column access (pandas, polars).
    label : str
        Name of the class column. It must take exactly two values after dropping missing rows.
    positive : value, optional
        The class value mapped to 1. Default: for values {0, 1} (or {"0", "1"}, booleans) the value 1,
        otherwise the lexicographically larger of the two values.
    features : list of str, optional
        Predictor columns (default: every column but the label).
    categorical, numeric : list of str, optional
        Force a column's kind. A column named in ``feature_bounds`` is numeric and one named in
        ``categories`` categorical; otherwise a column whose values all parse as numbers is numeric,
        anything else categorical.
    missing : values treated as missing; rows holding one in a used column are dropped. ``None``, NaN
        and pandas' ``NA`` / ``NaT`` cells of a DataFrame or mapping are always missing.
    feature_bounds : mapping name -> (lo, hi)
        **Public** range of each numeric column (from its documented schema, not from the data):
        values are scaled to [0, 1] by (v − lo) / (hi − lo). A value outside [lo, hi] is clipped into
        it (a refusal would depend on the data). A numeric column left out is scaled by its own
        minimum and maximum, with a :class:`~dpselect.PrivacyLeakWarning`.
    categories : mapping name -> list of values
        **Public** list of the values of each categorical column, and of the label's two values
        (``categories[label]``; the default ``positive`` is then its second entry); code k means ``categories[name][k]``
        and ``n_values`` is its length (values not occurring in the data still count). A value not in
        the list is a ``ValueError`` naming ``categories[name]``. A categorical column left out gets
        the sorted values occurring in the data, with a :class:`~dpselect.PrivacyLeakWarning`. A
        label left out is read from the data, with a :class:`~dpselect.PrivacyLeakWarning` on every
        table (whatever values it holds: a warning on some tables only would depend on the records):
        values 0/1 (or False/True, in any of the spellings "0", "1", "0.0", "1.0", "True", "true",
        "False", "false") follow the boolean convention (1/True positive; a table holding one class only
        loads), other values must then take exactly two values. Give ``categories[label]`` to load
        without the warning.
    name : str, optional
    delimiter : str
        CSV field separator (fields are stripped of surrounding spaces).

    Returns
    -------
    TabularData

    Raises
    ------
    ValueError
        Unknown column names, a non-binary label, a table with no record left, a value outside its
        public bounds or categories.

    Examples
    --------
    >>> t = load_table({"age": [20, 40, 60], "job": ["a", "b", "a"], "y": ["no", "yes", "no"]}, "y",
    ...                feature_bounds={"age": (0, 100)}, categories={"job": ["a", "b", "c"], "y": ["no", "yes"]})
    >>> t.X.tolist(), t.y.tolist(), t.categorical.tolist(), t.n_values.tolist()
    ([[0.2, 0.0], [0.4, 1.0], [0.6, 0.0]], [0, 1, 0], [False, True], [0, 3])
    """
    cols = _columns_of(data, delimiter)
    feats = _feature_columns(cols, label, features, categorical, numeric)
    bounds = _check_bounds(feature_bounds, cols)
    cat_lists = _check_categories(categories, cols)
    forced_num = set(numeric or []) | set(bounds)
    forced_cat = set(categorical or []) | set(cat_lists)
    both = forced_cat & forced_num
    if both:
        raise ValueError(f"column(s) {sorted(both)} cannot be both categorical (categorical= / categories=) and "
                         "numeric (numeric= / feature_bounds=)")
    strs = _complete_rows(cols, feats + [label], missing)
    y = _encode_label(strs[label], label, positive, cat_lists.get(label))
    X = np.empty((y.size, len(feats)))
    is_cat = np.zeros(len(feats), dtype=bool)
    nvals = np.zeros(len(feats), dtype=np.int64)
    cats: list = []
    for i, c in enumerate(feats):
        col = strs[c]
        if c in forced_num:
            kind_num = True
        elif c in forced_cat:
            kind_num = False
        else:
            kind_num = all(_is_number(v) for v in set(col.tolist()))
        if kind_num:
            X[:, i] = _encode_numeric(col, c, bounds.get(c))
            cats.append(None)
        else:
            X[:, i], values = _encode_categorical(col.astype(str), c, cat_lists.get(c))
            is_cat[i] = True
            nvals[i] = len(values)
            cats.append(values)
    return TabularData(X, y, feats, is_cat, nvals, cats, name or "table", label)


def _feature_columns(cols: Mapping[str, Sequence], label: str, features: Sequence[str] | None,
                     categorical: Sequence[str] | None, numeric: Sequence[str] | None) -> list[str]:
    """The predictor columns, after checking that every column named anywhere exists."""
    names = list(cols)
    if label not in cols:
        raise ValueError(f"label column {label!r} not found; columns are {names}")
    feats = [c for c in names if c != label] if features is None else list(features)
    for group, what in ((feats, "features"), (categorical or [], "categorical"), (numeric or [], "numeric")):
        bad = [c for c in group if c not in cols]
        if bad:
            raise ValueError(f"unknown column(s) in {what}: {bad}; columns are {names}")
    if label in feats:
        raise ValueError(f"the label column {label!r} cannot also be a feature")
    if not feats:
        raise ValueError("no feature column to predict from")
    return feats


def _complete_rows(cols: Mapping[str, Sequence], used: list[str], missing: Sequence[str]) -> dict[str, np.ndarray]:
    """The ``used`` columns as stripped strings, rows holding a ``missing`` value dropped."""
    n = len(cols[used[-1]])
    if n == 0:
        raise ValueError("the table is empty (0 records)")
    strs = {c: np.array([str(v).strip() for v in cols[c]], dtype=object) for c in used}
    for c in used:
        if len(strs[c]) != n:
            raise ValueError(f"column {c!r} has {len(strs[c])} values, the label has {n}")
    miss = list(set(missing))
    keep = np.ones(n, dtype=bool)
    for c in used:
        keep &= ~np.isin(strs[c], miss)
        keep &= ~np.fromiter((_is_null(v) for v in cols[c]), dtype=bool, count=n)
    if not keep.any():
        raise ValueError(f"no record left after dropping rows with missing values {sorted(miss)}")
    return {c: v[keep] for c, v in strs.items()}


def _is_null(v: Any) -> bool:
    """None, a float NaN (numpy's too) or pandas' NA / NaT: a missing cell of a DataFrame or a mapping."""
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN and NaT differ from themselves
    except (TypeError, ValueError):  # pandas.NA: its comparisons are NA, which has no truth value
        return True


_BOOLEAN_LABELS = {"0", "1", "0.0", "1.0", "True", "False", "true", "false"}


def _encode_label(lab: np.ndarray, label: str, positive: Any, domain: list[str] | None) -> np.ndarray:
    """The class column as 0/1 (int8). ``domain``: its public two values (``categories[label]``)."""
    if domain is not None:
        if len(domain) != 2:
            raise ValueError(f"categories[{label!r}] must list the label's two values, got {domain}")
        values = list(domain)
        if set(lab.tolist()) - set(values):
            # a record's label: not named
            raise ValueError(f"categories[{label!r}] must list every value of the label: a value is not one of "
                             f"{values}")
    else:
        values = sorted(set(lab.tolist()))
        # the label's values are part of the public schema; here they are read off the records, on every
        # table alike (a warning on some neighbours only, e.g. {"1", "2"} but not {"1"}, would itself depend
        # on the data); the message names no value
        warn_public_from_data(f"categories[{label!r}]", f"the values of column {label!r}", "load_table",
                              stacklevel=4)
        if set(values) <= _BOOLEAN_LABELS:
            # 0/1 or False/True: the boolean convention names both classes, whether or not both occur
            truth = {"1": True, "1.0": True, "True": True, "true": True}
            if positive is None:
                pos_true = True
            else:
                pos = str(positive).strip()
                if pos not in _BOOLEAN_LABELS:
                    raise ValueError(f"positive={positive!r} is not a value of label column {label!r}: its labels "
                                     "are 0/1 or False/True")
                pos_true = truth.get(pos, False)
            return (np.array([truth.get(v, False) for v in lab.tolist()], dtype=bool) == pos_true).astype(np.int8)
        if len(values) != 2:
            raise ValueError(f"label column {label!r} must be binary: give its two public values as "
                             f"categories[{label!r}] (one may be absent)")
    if positive is None:
        if set(values) <= _BOOLEAN_LABELS:
            pos = [v for v in values if v in ("1", "1.0", "True", "true")][0]
        else:
            pos = values[1] if domain is not None else max(values)
    else:
        pos = str(positive).strip()
        if pos not in values:
            raise ValueError(f"positive={positive!r} is not a value of label column {label!r}"
                             + (f" ({values})" if domain is not None else ""))   # values read off data: not named
    return (lab == pos).astype(np.int8)


def _encode_numeric(col: np.ndarray, c: str, bounds: tuple[float, float] | None) -> np.ndarray:
    """A numeric column scaled to [0, 1] by its public ``bounds`` (or, with a warning, its own range)."""
    try:
        v = col.astype(np.float64)
    except ValueError:
        raise ValueError(f"numeric column {c!r} holds non-numbers") from None
    if not np.isfinite(v).all():
        raise ValueError(f"numeric column {c!r} holds non-finite values")
    if bounds is not None:
        lo, hi = bounds
        # a record outside the public bounds is clipped into them (a refusal would depend on the data)
        v = np.clip(v, lo, hi)
    else:
        lo, hi = float(v.min()), float(v.max())
        warn_public_from_data(f"feature_bounds[{c!r}]", (lo, hi), "load_table", stacklevel=4)
    return np.zeros_like(v) if hi == lo else (v - lo) / (hi - lo)


def _encode_categorical(col: np.ndarray, c: str, values: list[str] | None) -> tuple[np.ndarray, list[str]]:
    """Codes of a categorical column in its public ``values`` (or, with a warning, the values it holds)."""
    uniq, inv = np.unique(col, return_inverse=True)
    if values is None:
        found = uniq.tolist()
        warn_public_from_data(f"categories[{c!r}]", found if len(found) <= 10 else f"{len(found)} values",
                              "load_table", stacklevel=4)
        return inv.ravel().astype(np.float64), found
    lookup = {x: k for k, x in enumerate(values)}
    if any(u not in lookup for u in uniq.tolist()):
        # a record's value: not named
        raise ValueError(f"categories[{c!r}] must list every value of the column: a value is not "
                         f"one of {values[:10]}{' ...' if len(values) > 10 else ''}")
    return np.array([lookup[u] for u in uniq.tolist()], dtype=np.float64)[inv.ravel()], list(values)


def _check_bounds(feature_bounds, cols) -> dict[str, tuple[float, float]]:
    if feature_bounds is None:
        return {}
    if not isinstance(feature_bounds, Mapping):
        raise TypeError(f"feature_bounds must be a mapping column -> (lo, hi), got {type(feature_bounds).__name__}")
    out = {}
    for c, b in feature_bounds.items():
        if c not in cols:
            raise ValueError(f"feature_bounds names unknown column {c!r}; columns are {list(cols)}")
        if isinstance(b, (str, bytes)) or any(isinstance(x, (str, bytes)) for x in (b if hasattr(b, "__iter__") else ())):
            raise TypeError(f"feature_bounds[{c!r}] must be a pair of numbers (lo, hi), got {b!r} (strings are not "
                            "read as numbers)")
        try:
            lo, hi = (float(x) for x in b)
        except (TypeError, ValueError):
            raise ValueError(f"feature_bounds[{c!r}] must be a pair of numbers (lo, hi), got {b!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise ValueError(f"feature_bounds[{c!r}] must be finite with lo <= hi, got {(lo, hi)}")
        out[c] = (lo, hi)
    return out


def _check_categories(categories, cols) -> dict[str, list[str]]:
    if categories is None:
        return {}
    if not isinstance(categories, Mapping):
        raise TypeError(f"categories must be a mapping column -> list of values, got {type(categories).__name__}")
    out = {}
    for c, vals in categories.items():
        if c not in cols:
            raise ValueError(f"categories names unknown column {c!r}; columns are {list(cols)}")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise TypeError(f"categories[{c!r}] must be a list of values, got {type(vals).__name__}")
        values = [str(v).strip() for v in vals]
        if not values:
            raise ValueError(f"categories[{c!r}] must not be empty")
        if len(set(values)) != len(values):
            raise ValueError(f"categories[{c!r}] lists a value twice: {values}")
        out[c] = values
    return out


def _columns_of(data, delimiter: str) -> dict[str, list]:
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.exists():
            raise FileNotFoundError(f"dataset file not found: {path}")
        with path.open(newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"{path}: empty file (no header line)") from None
            if len(set(header)) != len(header):
                raise ValueError(f"{path}: duplicate column names in header {header}")
            rows = [r for r in reader if r and any(x.strip() for x in r)]
        bad = next((i for i, r in enumerate(rows) if len(r) != len(header)), None)
        if bad is not None:
            raise ValueError(f"{path}: row {bad + 2} has {len(rows[bad])} fields, the header has {len(header)}")
        return {h: [r[i] for r in rows] for i, h in enumerate(header)}
    if isinstance(data, Mapping):
        return {str(k): list(v) for k, v in data.items()}
    if hasattr(data, "columns"):  # a DataFrame (pandas, polars): its columns by name, Python scalars
        cols = [str(c) for c in data.columns]
        if len(set(cols)) != len(cols):
            raise ValueError(f"duplicate column names in the DataFrame: {cols}")
        return {str(c): (data[c].tolist() if hasattr(data[c], "tolist") else list(data[c])) for c in data.columns}
    raise TypeError(f"data must be a CSV path, a mapping of columns or a DataFrame, got {type(data).__name__}")


# -- Adult --------------------------------------------------------------------------------------------

ADULT_NUMERIC = ("age", "capital_gain", "capital_loss", "hours_per_week")
ADULT_CATEGORICAL = ("workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
                     "native_country")

#: Public ranges of Adult's numeric columns, from its documentation rather than from the records:
#: ``age`` >= 17 and ``hours_per_week`` >= 1 by the extraction rule of ``adult.names``
#: ("AAGE>16 && HRSWK>0"); 90 and 99 are the top codes of the 1994 CPS public-use fields for age and
#: usual hours per week, 99,999 the top code of its five-digit capital-gain field. ``capital_loss`` has no
#: documented top code short of its five-digit field; 4,356 is the maximum of the published UCI release
#: (adult.data + adult.test, a public file), which is what the papers' min-max scaling used. All four equal
#: the minimum and maximum of the published release, so the reproductions scale exactly as the papers did.
ADULT_NUMERIC_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (17.0, 90.0),
    "capital_gain": (0.0, 99999.0),
    "capital_loss": (0.0, 4356.0),
    "hours_per_week": (1.0, 99.0),
}

#: Categories of Adult's categorical columns as listed in ``adult.names`` (the public schema), sorted so
#: that codes follow the values' alphabetical order. ``workclass`` keeps ``Never-worked`` although no
#: record without missing values has it.
ADULT_CATEGORIES: dict[str, list[str]] = {c: sorted(v) for c, v in {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
    "ltgt50k": ["<=50K", ">50K"],   # the class
}.items()}


def load_adult(directory: str | Path) -> TabularData:
    """UCI Adult: ``adult.data`` + ``adult.test`` merged, rows with ``?`` dropped: 45,222 records.

    Label: income ``>50K`` (1) versus ``<=50K`` (0); the trailing dot of the test file's labels is
    removed. 12 predictors as in the papers: ``age, capital_gain, capital_loss, hours_per_week`` numeric,
    scaled to [0, 1] by the public ranges :data:`ADULT_NUMERIC_BOUNDS`; ``workclass, education,
    marital_status, occupation, relationship, race, sex, native_country`` categorical with the categories of
    ``adult.names`` (:data:`ADULT_CATEGORIES`). ``fnlwgt`` (a sampling weight) and ``education_num`` (a
    recoding of ``education``) are left out. The first line of each file is a header line. Nothing is read
    from the records but the records: no :class:`~dpselect.PrivacyLeakWarning`.

    ``directory`` holds both files.

    Parameters
    ----------
    directory : str or path-like
        The directory holding ``adult.data`` and ``adult.test``.

    Returns
    -------
    TabularData
        45,222 records, 4 numeric and 8 categorical predictors, label ``>50K``.

    Examples
    --------
    >>> from dpselect.experiments import data_path
    >>> d = load_adult(data_path("tabular"))
    >>> d.n_records, d.n_features, int(d.y.sum())
    (45222, 12, 11208)
    """
    base = Path(directory)
    cols: dict[str, list] = {}
    for fname in ("adult.data", "adult.test"):
        path = base / fname
        c = _columns_of(path, ",")
        for k, v in c.items():
            cols.setdefault(k, []).extend(v)
    label = "ltgt50k"
    if label not in cols:
        raise ValueError(f"{base}: expected a header with the label column {label!r}, got {list(cols)}")
    cols[label] = [s.strip().rstrip(".") for s in cols[label]]
    return load_table(cols, label, positive=">50K", features=list(ADULT_NUMERIC + ADULT_CATEGORICAL),
                      feature_bounds=ADULT_NUMERIC_BOUNDS, categories=ADULT_CATEGORIES, name="adult")
