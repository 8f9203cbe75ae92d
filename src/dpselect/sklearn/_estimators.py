"""scikit-learn estimators around DiffPID3 and DP-MOET, with their public bounds as parameters."""
from __future__ import annotations

import contextlib
import copy
import numbers
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..trees import _diffpid3
from ..trees import _dpmoet
from ..trees._dpmoet import DEFAULT_WEIGHTS
from .._boundary import charge, check_accountant
from ..accounting.neighbours import ADD_REMOVE
from .._rng import check_rng
from ..accounting.accountant import Accountant
from ..accounting.guarantees import Guarantee
from .._validation import check_choice, check_int, check_positive
from ..exceptions import _release_scope, warn_public_from_data
from ..tabular import TabularData
from ..trees._tree import predict_many
from ..typing import MechanismName
from ..vocabulary import check_mechanism

__all__ = ["DiffPID3Classifier", "DPMOETClassifier", "EXPECTED_FAILED_CHECKS"]

#: The ``check_estimator`` checks the estimators fail on purpose, with the reason (pass it as
#: ``check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS)``).
EXPECTED_FAILED_CHECKS = {
    "check_classifiers_one_label": "an ε-DP fit on a y of one class must neither fail (an error that depends on "
                                   "the data is a release) nor can it promise to predict that class",
    "check_estimators_empty_data_messages": "an ε-DP fit on 0 records must release a model like on any other table (under "
                                   "add/remove-one the empty table is a neighbour of every one-record table: an "
                                   "error there would depend on the data)",
}
#: DPMOETClassifier's budget conventions (dp_moet's "paper-code" belongs to the reproductions).
_BUDGETS = ("even",)

#: The smallest budget DiffPID3 gives one node (its noisy count and its split selection): the smallest
#: normal float, 2**-1022. A smaller ε (a budget_split such as 5e-324, or a tiny epsilon over a deep tree)
#: would underflow to 0 or to a subnormal in the noise scales; it is refused before anything is charged.
MIN_NODE_EPSILON = 2.0 ** -1022

# scikit-learn's input-validation messages that name no record, no value and no size (kept as they are)
_PUBLIC_MESSAGE = re.compile(r"^(Input (X|y) contains (NaN|infinity)[^\n]*|Complex data not supported|"
                             r"Unknown label type: [a-z-]+\.[^\n]*|Sparse data was passed[^\n]*|"
                             r"[^\n]*requires y to be passed, but the target y is None[^\n]*|"
                             r"[^\n]*argument must be a string or a (real )?number, not '[A-Za-z_.]+'|"
                             r"Expected array-like \(array or non-string sequence\), got None)$")


def _public_input_error(exc: Exception, categories_given: bool) -> Exception:
    """scikit-learn's refusal of ``X``/``y`` re-raised with a message that names no record, value or size.

    Its own messages may quote the records ("Expected 2D array ... array=[1. 2.]", "could not convert
    string to float: 'Smith'") or the number of records ("inconsistent numbers of samples: [3, 2]"):
    an error message is a release, so only the type and a public description are kept.
    """
    first = str(exc).split("\n", 1)[0].strip()
    low = str(exc).lower()
    cls = type(exc) if isinstance(exc, (ValueError, TypeError)) else ValueError
    if _PUBLIC_MESSAGE.match(first):
        return cls(first)
    if "string" in low or "could not convert" in low:
        if categories_given:
            return cls("X holds a non-numeric value in a column not listed in categories=; list every string "
                       "column and its public values in categories={column: [...]}")
        return cls("X holds non-numeric values; declare every string column with categories={column: [its public "
                   "values]} (e.g. categories={'workclass': ['Private', 'State-gov', ...]}); the other columns "
                   "must be numbers")
    if "inconsistent numbers of samples" in low:
        return cls("X and y must have one row per record: their numbers of rows differ")
    if "expected 2d array" in low:
        return cls("Expected 2D array for X (one row per record, one column per feature), got a 1D or scalar "
                   "array: reshape it with array.reshape(-1, 1) (one feature) or array.reshape(1, -1) (one record)")
    if "0 feature(s)" in low:
        return cls("X has 0 features: at least 1 is required")
    return cls(f"scikit-learn refused X or y ({type(exc).__name__}); its message is withheld because it may quote "
               "the records or their number")

def _generator_source(random_state: Any) -> Any:
    """A zero-argument function giving ``random_state`` as a Generator, checked now without drawing from it
    (a legacy RandomState gives a seed drawn from it when the function is called): ``fit`` checks
    ``random_state`` before charging the accountant and draws only after the charge."""
    if isinstance(random_state, np.random.RandomState):
        return lambda: np.random.default_rng(int(random_state.randint(np.iinfo(np.int32).max)))
    try:
        gen = check_rng(random_state)
    except (TypeError, ValueError):
        raise TypeError("random_state must be None, an int seed >= 0 (or a sequence of them), a numpy "
                        "SeedSequence, BitGenerator, Generator or RandomState, got "
                        f"{random_state!r}") from None
    return lambda: gen


def _public_classes(classes: Any) -> np.ndarray:
    """The ``classes`` parameter as a sorted array of two distinct labels (a clear error otherwise)."""
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise TypeError(f"classes must be a sequence of the two public class labels [negative, positive], "
                        f"got {classes!r}")
    vals = list(classes)
    if len(vals) != 2 or len(set(vals)) != 2:
        raise ValueError(f"classes must be the two public class labels, got {vals}")
    if any(isinstance(v, float) and v != v for v in vals):
        raise ValueError(f"classes must not hold NaN, got {vals}")
    try:
        return np.sort(np.asarray(vals))
    except TypeError:
        raise TypeError(f"classes must be two labels of one comparable type, got {vals}") from None


class _PublicSchemaClassifier(ClassifierMixin, BaseEstimator):
    """Shared encoding: X (array or DataFrame) -> a :class:`~dpselect.tabular.TabularData` on public bounds."""

    epsilon: float
    feature_bounds: Any
    categories: Any
    classes: Any
    random_state: Any

    accountant: Any

    # -- scikit-learn protocol ------------------------------------------------------------------------
    def __sklearn_clone__(self) -> Any:
        # clone() deep-copies every parameter; a privacy budget must be shared, never copied (a copy would
        # hand the same privacy loss a second budget, and the accountant's lock cannot be copied anyway):
        # the clone is made with accountant=None and then given the same accountant object.
        shallow = copy.copy(self)
        shallow.accountant = None
        new = super(_PublicSchemaClassifier, shallow).__sklearn_clone__()
        new.accountant = self.accountant
        return new

    def _charge(self, guarantee: Any) -> None:
        """Charge one ``fit`` to the shared accountant (label ``"<class name>.fit"``), before any random bit."""
        charge(check_accountant(self.accountant), guarantee, label=f"{type(self).__name__}.fit", neighbours=ADD_REMOVE)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False   # binary trees (TPR/TNR, two-class leaves)
        tags.classifier_tags.poor_score = True     # ε-DP noise: no accuracy promise on tiny data sets
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = self.categories is not None
        return tags

    # -- fitting ------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _as_before_on_error(self) -> Iterator[None]:
        """A ``fit`` that does not complete (refused arguments, refused charge, interrupt) leaves the
        estimator as it was: no new ``classes_`` or ``feature_bounds_`` over an old model. It is also the
        scope of the release: a public quantity read from the data makes the charge ``NonPrivate``."""
        before = dict(self.__dict__)
        try:
            with _release_scope():
                yield
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:  # pragma: no cover - overridden
        """Every check of ``fit`` on ``(X, y)``: ``(plan, generator source)``; nothing drawn or charged."""
        raise NotImplementedError

    def _release(self, plan: Any, gen: np.random.Generator) -> None:  # pragma: no cover - overridden
        """The randomised part of ``fit`` on a checked plan (sets the fitted model)."""
        raise NotImplementedError

    def check_fit(self, X: ArrayLike, y: ArrayLike) -> None:
        """Check ``X``, ``y`` and the parameters as ``fit`` would, and change nothing.

        Raises what ``fit`` would raise before charging its accountant (and warns as it would); charges
        nothing, draws nothing and leaves the estimator as it was. :class:`~dpselect.sklearn.PrivateSearchCV`
        calls it for every configuration of a list grid before charging the search.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)
        y : array-like, shape (n_records,)

        Examples
        --------
        >>> import numpy as np
        >>> clf = DiffPID3Classifier(bins=0, n_max=10, feature_bounds=(0, 1), classes=[0, 1])
        >>> try:
        ...     clf.check_fit(np.zeros((3, 2)), [0, 1, 1])
        ... except ValueError as exc:
        ...     print(str(exc)[:24])
        bins must be an int >= 1
        >>> hasattr(clf, "classes_")
        False
        """
        before = dict(self.__dict__)
        try:
            self._prepare(X, y)
        finally:
            self.__dict__.clear()
            self.__dict__.update(before)

    # -- encoding -----------------------------------------------------------------------------------------
    def _column_index(self, key: Any, what: str) -> int:
        names = getattr(self, "feature_names_in_", None)
        if isinstance(key, str):
            if names is None or key not in list(names):
                raise ValueError(f"{what} names feature {key!r}, which is not a column of X "
                                 f"({'no column names' if names is None else list(names)})")
            return list(names).index(key)
        if isinstance(key, (numbers.Integral, np.integer)) and not isinstance(key, bool):
            if not 0 <= int(key) < self.n_features_in_:
                raise ValueError(f"{what} names feature {int(key)}, outside 0 .. {self.n_features_in_ - 1}")
            return int(key)
        raise TypeError(f"{what} keys must be column indices or names, got {key!r}")

    def _schema(self, X: np.ndarray) -> None:
        """Fix the public encoding at fit: categorical columns, category lists, numeric bounds."""
        p = X.shape[1]
        cats: dict[int, list] = {}
        if self.categories is not None:
            if not isinstance(self.categories, Mapping):
                raise TypeError("categories must be a mapping feature (index or name) -> list of its public values, "
                                f"got {type(self.categories).__name__}")
            for key, values in self.categories.items():
                vals = list(values)
                if not vals or len(set(vals)) != len(vals):
                    raise ValueError(f"categories[{key!r}] must list distinct values, got {vals}")
                cats[self._column_index(key, "categories")] = vals
        categorical = np.zeros(p, dtype=bool)
        categorical[list(cats)] = True
        numeric = np.flatnonzero(~categorical)
        bounds = np.full((p, 2), np.nan)
        fb = self.feature_bounds
        if fb is not None:
            if isinstance(fb, Mapping):
                for key, b in fb.items():
                    bounds[self._column_index(key, "feature_bounds")] = self._pair(b, key)
            else:
                if isinstance(fb, (str, bytes)):
                    raise TypeError(f"feature_bounds must be (lo, hi), one (lo, hi) per feature or a mapping "
                                    f"feature -> (lo, hi), got the string {fb!r}")
                try:
                    arr = np.asarray(fb, dtype=np.float64)
                except (TypeError, ValueError):
                    raise TypeError(f"feature_bounds must be (lo, hi), one (lo, hi) per feature or a mapping "
                                    f"feature -> (lo, hi) of numbers, got {fb!r}") from None
                if arr.shape == (2,):
                    bounds[numeric] = self._pair(arr, "all")
                elif arr.shape == (p, 2):
                    for j in numeric:
                        bounds[j] = self._pair(arr[j], int(j))
                else:
                    raise ValueError(f"feature_bounds must be (lo, hi), one (lo, hi) per feature (shape ({p}, 2)) "
                                     f"or a mapping feature -> (lo, hi), got shape {arr.shape}")
        values = {j: self._numeric_column(X, int(j)) for j in numeric}
        missing = [int(j) for j in numeric if np.isnan(bounds[j]).any()]
        if missing:
            # an empty column has no range: (0, 0) (the fit is not private anyway, the warning says so)
            lo = np.array([values[j].min() if values[j].size else 0.0 for j in missing])
            hi = np.array([values[j].max() if values[j].size else 0.0 for j in missing])
            bounds[missing, 0], bounds[missing, 1] = lo, hi
            # frames: warn_public_from_data, _schema, _validate_fit, _prepare, fit / check_fit, the user's call
            warn_public_from_data("feature_bounds", f"the range of column(s) {missing[:10]}",
                                  type(self).__name__ + ".fit", stacklevel=6)
        # a record outside its column's public bounds is clipped into them when encoded (as the quantiles do):
        # a refusal would depend on the data (one record past a bound decides it), a clip is a fixed map of
        # each record, so neighbouring tables stay neighbours and the fit's guarantee holds as stated
        self.categorical_ = categorical
        self.feature_bounds_ = bounds
        self.categories_ = [cats.get(j) for j in range(p)]

    def _numeric_column(self, X: np.ndarray, j: int) -> np.ndarray:
        """Column j as floats; a column of strings asks for ``categories`` (the schema declares it)."""
        try:
            return np.asarray(X[:, j], dtype=np.float64)
        except (TypeError, ValueError):
            names = getattr(self, "feature_names_in_", None)
            name = repr(str(names[j])) if names is not None else str(j)
            raise ValueError(f"column {name} of X holds non-numbers; list a categorical column and its public "
                             f"values in categories={{{name}: [...]}}") from None

    @staticmethod
    def _pair(b: Any, key: Any) -> np.ndarray:
        if isinstance(b, (str, bytes)):
            raise TypeError(f"feature_bounds[{key!r}] must be a pair of numbers (lo, hi), got the string {b!r}")
        try:
            arr = np.asarray(b, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"feature_bounds[{key!r}] must be a pair of numbers (lo, hi), got {b!r}") from None
        if arr.shape != (2,) or not np.all(np.isfinite(arr)) or arr[0] > arr[1]:
            raise ValueError(f"feature_bounds[{key!r}] must be finite (lo, hi) with lo <= hi, got {b!r}")
        return arr

    def _encode(self, X: np.ndarray, *, fitting: bool) -> np.ndarray:
        """X scaled to [0, 1] (numeric, clipped into the public bounds) and as category codes (categorical)."""
        out = np.empty(X.shape, dtype=np.float64)
        for j in range(X.shape[1]):
            cats = self.categories_[j]
            if cats is None:
                col = self._numeric_column(X, j)
                if not np.all(np.isfinite(col)):
                    raise ValueError("Input X contains NaN or infinity")
                lo, hi = self.feature_bounds_[j]
                scaled = np.zeros_like(col) if hi == lo else (col - lo) / (hi - lo)
                out[:, j] = np.clip(scaled, 0.0, 1.0)
            else:
                lookup = {v: k for k, v in enumerate(cats)}
                col = X[:, j]
                codes = np.empty(col.shape[0], dtype=np.float64)
                for i, v in enumerate(col.tolist()):
                    code = lookup.get(v)
                    if code is None:
                        # the value is a record's (or a test row's): not named
                        raise ValueError(f"column {j} holds a value that is not one of its public categories "
                                         f"{cats[:10]}")
                    codes[i] = code
                out[:, j] = codes
        return out

    def _validate_fit(self, X: ArrayLike, y: ArrayLike) -> tuple[TabularData, Any]:
        """The training table on the public encoding, and a function giving the Generator (see
        :func:`_generator_source`: nothing is drawn before the accountant is charged).

        Sets the fitted encoding (``classes_``, ``n_features_in_``, ...); ``fit`` and ``check_fit`` restore
        the estimator when they do not complete. 0 records are a table like any other.
        """
        kwargs: dict[str, Any] = {} if self.categories is None else {"dtype": None, "ensure_all_finite": False}
        try:
            Xv, yv = validate_data(self, X, y, ensure_min_samples=0, **kwargs)
            # with public classes, a label outside them is the one refusal (one message, whatever the other
            # labels: "multiclass" or "continuous" would say more about the records)
            y_type = "binary" if self.classes is not None else (check_classification_targets(yv) or
                                                                 type_of_target(yv, input_name="y"))
        except (ValueError, TypeError) as exc:
            raise _public_input_error(exc, self.categories is not None) from None
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        if self.classes is None:
            if yv.dtype == bool:
                # a boolean y: its type, not its values, names the two classes
                classes = np.array([False, True])
            else:
                present = np.unique(yv)
                # 0/1 labels (or none): the boolean convention gives both classes, whether or not both occur;
                # other labels: those present. Either way read off the records, so it warns on every table
                # (a warning on some neighbours only would itself depend on the data)
                classes = (np.array([0, 1]).astype(yv.dtype) if set(present.tolist()) <= {0, 1} else present)
                # frames: warn_public_from_data, _validate_fit, _prepare, fit / check_fit, the user's call
                warn_public_from_data("classes", "the labels of y", type(self).__name__ + ".fit", stacklevel=5)
                if classes.size != 2:
                    raise ValueError("y holds one class only and classes was not given; pass classes=[negative, "
                                     "positive] (public) to train on a table where one may be absent")
        else:
            classes = _public_classes(self.classes)
            if (~np.isin(yv, classes)).any():
                # the label is a record's: not named
                raise ValueError(f"y holds a label that is not one of classes {classes.tolist()}")
        self.classes_ = classes
        self._schema(Xv)
        Xs = self._encode(Xv, fitting=True)
        y01 = (np.asarray(yv) == classes[1]).astype(np.int8)
        names = getattr(self, "feature_names_in_", None)
        feature_names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(Xs.shape[1])]
        n_values = np.array([0 if c is None else len(c) for c in self.categories_], dtype=np.int64)
        data = TabularData(Xs, y01, feature_names, self.categorical_, n_values,
                           [None if c is None else list(c) for c in self.categories_], "sklearn", "y")
        return data, _generator_source(self.random_state)

    def _validate_predict(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self)
        if self.categories is None:
            try:
                Xv = validate_data(self, X, reset=False)
            except ValueError as exc:
                if "string" in str(exc).lower():
                    raise ValueError(f"X holds non-numeric values ({exc}); the model was fitted without "
                                     "categories=, so every column must be numeric") from exc
                raise
        else:
            Xv = validate_data(self, X, reset=False, dtype=None, ensure_all_finite=False)
        return self._encode(Xv, fitting=False)

    def _positive_fraction(self, Xs: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        """Pr[class 1] per encoded row: the fitted private model's answer (each estimator defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define _positive_fraction (the base class has no model)")

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_`` (see the class docstring).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)

        Returns
        -------
        numpy.ndarray of float64, shape (n_records, 2)

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).uniform(0, 10, (300, 2)); y = (X[:, 0] > 5).astype(int)
        >>> DiffPID3Classifier(epsilon=5.0, depth=1, n_max=300, feature_bounds=(0, 10),
        ...                    random_state=0).fit(X, y).predict_proba(X[:3]).shape
        (3, 2)
        """
        p1 = self._positive_fraction(self._validate_predict(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The predicted class of every record (a label of ``classes_``).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)

        Returns
        -------
        numpy.ndarray, shape (n_records,)

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).uniform(0, 10, (300, 2)); y = (X[:, 0] > 5).astype(int)
        >>> DiffPID3Classifier(epsilon=5.0, depth=1, n_max=300, feature_bounds=(0, 10),
        ...                    random_state=0).fit(X, y).predict(X[:3]).shape
        (3,)
        """
        p1 = self._positive_fraction(self._validate_predict(X))
        return self.classes_[(p1 > 0.5).astype(np.intp)]


class DiffPID3Classifier(_PublicSchemaClassifier):
    """A DiffPID3 decision tree (thesis Alg. 4) as a scikit-learn classifier: ε-DP training.

    :func:`dpselect.trees.diffpid3` grows a multiway ID3 tree whose splits are chosen by the
    exponential mechanism, local dampening or shifted local dampening on information gain, with noisy
    counts at the nodes and noisy class counts at the leaves.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total privacy budget of the training run.
    depth : int, default 5
        Maximum depth.
    mechanism : {"exponential", "local_dampening", "shifted_local_dampening"}, default "local_dampening"
        Split selection (aliases EM, LD, SLD).
    bins : int, default 10
        Equal-width bins of every numeric feature (after scaling by ``feature_bounds``).
    budget_split : float, default 0.5
        The fraction f, 0 < f < 1, of each level's budget ε/(d + 1) spent on the nodes' noisy counts; the
        rest, (1 − f)·ε/(d + 1), goes to the split selection or the leaf's noisy class counts (0.5: the
        thesis's even split). Public; checked in ``fit`` (a ``ValueError`` before any budget is charged).
        It only divides ``epsilon``, so :class:`~dpselect.sklearn.PrivateSearchCV` may search it.
    n_max : int, optional
        **Public** upper bound on the number of training records (e.g.
        :data:`dpselect.datasets.PUBLIC_TABLE_SIZE`), for ΔIG and the saturation of the local sensitivity.
        Omitted: the training set's size, with a :class:`~dpselect.PrivacyLeakWarning`.
    feature_bounds : (lo, hi), array of shape (n_features, 2) or mapping feature -> (lo, hi), optional
        **Public** range of the numeric features, used to scale them to [0, 1] (and to bin them). A
        value outside (training or predict time) is clipped into it: a refusal would depend on the data. Omitted (for
        some or all features): the training data's own minimum and maximum, with a
        :class:`~dpselect.PrivacyLeakWarning`.
    categories : mapping feature (index or column name) -> list of values, optional
        The categorical features and their **public** lists of values; every other feature is numeric.
        Values not in the list are a ``ValueError``.
    classes : pair of labels, optional
        The two **public** class labels (the larger one, after sorting, is the positive class); ``y``
        may hold only one of them. Omitted: a boolean ``y`` gives ``[False, True]`` (its dtype names the
        classes, nothing is read from its values); any other ``y`` is read, with a
        :class:`~dpselect.PrivacyLeakWarning` on every table alike: 0/1 when ``y`` holds only such labels
        (the boolean convention: a ``y`` without positives, or without negatives, trains as well),
        otherwise the labels present (a ``ValueError`` asking for ``classes`` when ``y`` then holds one
        label): a warning on some neighbours only ({1, 2} but not {1}) would itself depend on the data.
        With ``classes`` given, a label outside them is the one refusal.
    random_state : int, Generator, RandomState or None
        Seed of the training randomness (numpy SPEC 7; a legacy ``RandomState`` gives a seed).

        ``X`` may be an array or a DataFrame; string columns must be declared in ``categories`` (a
        ``ValueError`` naming ``categories`` otherwise).
    accountant : dpselect.Accountant, optional
        Every ``fit`` is charged to it, under the label ``"DiffPID3Classifier.fit"``, what the DiffPID3 proof
        certifies (:func:`dpselect.trees.diffpid3`: ``PureDPComposition(ε/(2(d + 1)), 2(d + 1))`` with
        ``budget_split = 0.5``, ``PureDP(ε)`` with another split), before anything is drawn; a refused fit leaves
        the estimator unfitted (glossary: [accountant][glossary-accountant]). ``sklearn.base.clone`` (and so
        ``GridSearchCV``, ``cross_val_score``) gives every clone **the same accountant object**, never a copy: all
        their fits are charged to one budget.

    Attributes
    ----------
    tree_ : dpselect.trees.DiffPID3Tree
    classes_, n_features_in_, feature_names_in_ (DataFrame input), categorical_, feature_bounds_,
    categories_ : the public encoding used.

    Privacy
    -------
    ``fit`` is ε-DP with respect to adding or removing one record of ``(X, y)``, when ``n_max``,
    ``feature_bounds``, ``categories`` and ``classes`` are public (given, not read from the data; each one
    read from the data emits a :class:`~dpselect.PrivacyLeakWarning`). ``predict`` and ``predict_proba``
    are post-processing of the released tree. ``predict_proba`` is one-hot: a leaf releases a class,
    not class frequencies. The fitted object holds the released tree and the public encoding only
    (no count, rate or score of the training records). ``fit`` completes on every table of the public
    domain (values inside the public bounds and categories, at most ``n_max`` records, labels in
    ``classes``), one class absent and the empty table (0 records) included: no error depends on the
    records beyond that domain, and no message names a record's value, a label or a number of records.
    A ``fit`` that does not complete (refused arguments, a refused charge) leaves the estimator as it
    was; ``check_fit(X, y)`` runs the same checks and changes nothing.

    **What is not private around it.** The guarantee covers one ``fit`` on ``(X, y)``, nothing that
    looks at the same records outside it: scikit-learn's ``GridSearchCV`` / ``cross_val_score`` choose
    or report by accuracy computed on those records (that choice and those scores are not ε-DP; use
    :func:`dpselect.sklearn.select_model` on held-out data, and count each fit's ε), and a preprocessing
    step *fitted* on the records in a ``Pipeline`` (``StandardScaler``, ``OneHotEncoder`` learning its
    categories, an imputer's means) releases statistics of them: give such transformers public
    parameters, or use only stateless ones.

    scikit-learn compatibility
    --------------------------
    Passes every check of ``sklearn.utils.estimator_checks.check_estimator`` but two, with two tags
    declaring what a randomised ε-DP binary classifier cannot do. The two are listed in
    :data:`EXPECTED_FAILED_CHECKS` (to pass as ``expected_failed_checks``):
    ``check_estimators_empty_data_messages`` demands an error from ``fit`` on 0 records, which under
    add/remove-one neighbours every one-record table (an error there would depend on the data); and
    ``check_classifiers_one_label`` demands an error, or predictions all equal to the one class, after
    ``fit`` on a ``y`` of one class; an error would depend on the data (not ε-DP) and an ε-DP model
    cannot promise the predictions. The tags: ``classifier_tags.poor_score = True``, because ``check_classifiers_train`` demands a
    training accuracy of 0.83 (0.83 on ``make_blobs``) and a tree whose every split and leaf is chosen
    with ε = 1 on the checks' 30-300 records does not reach it (it fails that check, three times, without
    the tag: the noise is the price of privacy at that size, not a bug), and
    ``classifier_tags.multi_class = False`` (binary trees; the check that multiclass targets are refused
    with "Only binary classification is supported" runs and passes). ``input_tags.allow_nan = False``.
    There is no ``sample_weight``: weighting a record would change the add/remove-one-record neighbour
    model.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, (2000, 3)); y = (X[:, 0] > 5).astype(int)
    >>> clf = DiffPID3Classifier(epsilon=2.0, depth=2, n_max=2000, feature_bounds=(0, 10), random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    >>> DiffPID3Classifier(epsilon=2.0, depth=2, budget_split=0.3, n_max=2000, feature_bounds=(0, 10),
    ...                    random_state=0).fit(X, y).score(X, y) > 0.5
    True
    """

    def __init__(self, *, epsilon: float = 1.0, depth: int = 5, mechanism: MechanismName = "local_dampening", bins: int = 10,
                 n_max: int | None = None, feature_bounds: Any = None, categories: Mapping | None = None,
                 classes: Sequence | None = None, random_state: Any = None,
                 accountant: Accountant | None = None, budget_split: float = 0.5) -> None:
        self.epsilon = epsilon
        self.depth = depth
        self.mechanism = mechanism
        self.bins = bins
        self.budget_split = budget_split
        self.n_max = n_max
        self.feature_bounds = feature_bounds
        self.categories = categories
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: ArrayLike, y: ArrayLike) -> "DiffPID3Classifier":
        """Train the tree on the private records ``(X, y)`` (ε-DP, add/remove one record).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)
        y : array-like, shape (n_records,)
            Two classes (see ``classes``).

        Returns
        -------
        DiffPID3Classifier
            ``self``, fitted (``tree_``); ``accountant`` (if any) charged once.

        Examples
        --------
        >>> import dpselect
        >>> import numpy as np
        >>> X = np.random.default_rng(0).uniform(0, 10, (300, 2)); y = (X[:, 0] > 5).astype(int)
        >>> acc = dpselect.Accountant(epsilon=1.0)
        >>> clf = DiffPID3Classifier(epsilon=0.5, depth=1, n_max=300, feature_bounds=(0, 10), classes=[0, 1],
        ...                          random_state=0, accountant=acc).fit(X, y)
        >>> clf.tree_.n_nodes > 0, [r.label for r in acc.history]
        (True, ['DiffPID3Classifier.fit'])
        """
        with self._as_before_on_error():
            plan, source = self._prepare(X, y)
            self._charge(plan.guarantee)
            self._release(plan, source())
        return self

    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:
        data, source = self._validate_fit(X, y)
        # stacklevel 6: warn, public_n_max, _plan, _prepare, fit / check_fit, the user's call
        plan = _diffpid3._plan(data, self.epsilon, self.depth, self.mechanism, self.bins, self.n_max,
                               "DiffPID3Classifier.fit", stacklevel=6, budget_split=self.budget_split)
        if min(plan.eps_count, plan.eps_select) < MIN_NODE_EPSILON:
            raise ValueError(f"epsilon={self.epsilon!r}, depth={self.depth!r} and budget_split={self.budget_split!r} "
                             f"give a node budget of {min(plan.eps_count, plan.eps_select):.3g}, below "
                             "MIN_NODE_EPSILON = 2**-1022 (its noise scale would overflow): raise epsilon or move "
                             "budget_split away from 0 and 1")
        return plan, source

    def _release(self, plan: Any, gen: np.random.Generator) -> None:
        self.tree_ = _diffpid3._grow(plan, gen)

    def privacy_guarantee(self) -> Guarantee:
        """The guarantee of one ``fit`` at the current parameters (the protocol of
        :class:`~dpselect.sklearn.PrivateSearchCV`), from the parameters alone.

        Returns
        -------
        dpselect.accounting.Guarantee
            ``PureDPComposition(epsilon / (2(depth + 1)), 2(depth + 1))`` (ε at δ = 0) with
            ``budget_split = 0.5``, ``PureDP(epsilon)`` (rounded up) with another split, with respect to
            adding or removing one record of ``(X, y)``; what ``fit`` charges.

        Examples
        --------
        >>> DiffPID3Classifier(epsilon=1.2, depth=2).privacy_guarantee()
        PureDPComposition(epsilon0=0.19999999999999998, k=6)
        >>> DiffPID3Classifier(epsilon=1.2, depth=2, budget_split=0.25).privacy_guarantee()
        PureDP(epsilon=1.2)
        """
        eps = check_positive(self.epsilon, "epsilon")
        d = check_int(self.depth, "depth", minimum=0)
        return _diffpid3._diffpid3_guarantee(eps, d, _diffpid3._check_budget_split(self.budget_split))

    def _positive_fraction(self, Xs: np.ndarray) -> np.ndarray:
        codes = np.empty(Xs.shape, dtype=np.int64)
        cat = self.categorical_
        codes[:, cat] = Xs[:, cat].astype(np.int64)
        b = int(self.tree_.bins)
        codes[:, ~cat] = np.minimum(np.floor(Xs[:, ~cat] * b), b - 1).astype(np.int64)
        return self.tree_.predict_codes(codes).astype(np.float64)


class DPMOETClassifier(_PublicSchemaClassifier):
    """DP-MOET (paper Alg. 1) as a scikit-learn classifier: evolved decision trees selected with ε-DP.

    :func:`dpselect.trees.dp_moet` evolves a population of random binary decision trees and
    selects them privately on the training data: by the number of records they classify correctly
    (``approach="accuracy"``, the default), or by (TPR, TNR) with PrivPareto or PrivAgg as in the paper;
    the ``output`` trees of the last selection vote (``predict_proba`` is the fraction of them
    predicting the positive class; ``output=1`` keeps one tree).

    Parameters
    ----------
    epsilon : float, default 1.0
        Total privacy budget of the run.
    approach : {"accuracy", "pareto", "aggregate"}, default "accuracy"
        "accuracy": the count of correctly classified training records (sensitivity 1), what the
        classifier is scored by. The paper's "pareto" (PrivPareto on TPR, TNR) and "agg" (PrivAgg on
        w_TPR·TPR + w_TNR·TNR) select for the TPR/TNR trade-off, not for accuracy: "pareto" picks
        trees anywhere on the front, "always positive" included. docs/trees.md has their test accuracies
        on Adult (``benchmarks/bench_dpmoet_defaults.py``): "accuracy" is the best of the three there.
    mechanism : str, default "local_dampening"
        Any selection mechanism or alias (EM, PF, RNM, LD, SLD). With "accuracy" a local mechanism
        has the exponential mechanism's law (the count's sensitivity is the constant 1).
    objective_weights : (w_TPR, w_TNR), default (3, 2)
        For ``approach="aggregate"`` (alias "agg") only.
    population, selection, generations, depth, max_depth, output : int
        p, s, k, d, d_max, o of Alg. 1 (defaults: the paper's 30, 3, 3, 4, 10, 3).
    budget : {"even"}
        The budget convention (the published code's, a reproduction setting, is not offered here).
    feature_bounds, categories, classes, random_state
        As in :class:`DiffPID3Classifier` (the public encoding; no size bound is needed: TPR and TNR
        have global sensitivity 1).
    accountant : dpselect.Accountant, optional
        Every ``fit`` is charged the whole run (:func:`dpselect.trees.dp_moet`'s guarantee) under the label
        ``"DPMOETClassifier.fit"``, before anything is drawn (glossary: [accountant][glossary-accountant]). Clones share
        the same accountant object, as in :class:`DiffPID3Classifier`.

    Attributes
    ----------
    trees_ : list of dpselect.trees.Tree
        The released trees.
    result_ : dpselect.trees.MOETResult
        The run's release: ``trees`` and the public settings. It holds **no** statistic of the training
        records (``objectives`` is ``None``, ``history`` empty): the exact training TPR/TNR of the trees
        are not covered by the guarantee (``dp_moet(..., exact_statistics=True)`` records them for
        experiments; never release such a result).
    classes_, n_features_in_, feature_names_in_, categorical_, feature_bounds_, categories_

    Privacy
    -------
    ``fit`` is ε-DP with respect to adding or removing one record of ``(X, y)`` when ``feature_bounds``,
    ``categories`` and ``classes`` are public (given, not read from the data, see
    :class:`DiffPID3Classifier`). Prediction is post-processing. The fitted object holds only the
    released trees and the public encoding. ``fit`` completes on every table of the public domain, one
    without positive or without negative records included (TPR or TNR is then 0 for every tree), the
    empty one too; as for :class:`DiffPID3Classifier`, a refused ``fit`` leaves the estimator as it was. As for
    :class:`DiffPID3Classifier`, grid search / cross-validation on the private records and
    preprocessing fitted on them are outside the guarantee.

    scikit-learn compatibility
    --------------------------
    As :class:`DiffPID3Classifier`: every check but the two of :data:`EXPECTED_FAILED_CHECKS` passes with the
    tags ``multi_class=False`` and ``poor_score=True`` (trees drawn at random and selected with ε = 1 on the
    checks' small data sets fail the accuracy threshold of ``check_classifiers_train`` without it).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (1000, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> clf = DPMOETClassifier(epsilon=5.0, population=10, generations=1, depth=2, max_depth=3, output=1,
    ...                        feature_bounds=(0, 1), random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, len(clf.trees_)
    ((2, 2), 1)
    """

    def __init__(self, *, epsilon: float = 1.0, approach: str = "accuracy", mechanism: MechanismName = "local_dampening",
                 objective_weights: Sequence[float] = DEFAULT_WEIGHTS, population: int = 30, selection: int = 3,
                 generations: int = 3, depth: int = 4, max_depth: int = 10, output: int = 3, budget: str = "even",
                 feature_bounds: Any = None, categories: Mapping | None = None, classes: Sequence | None = None,
                 random_state: Any = None, accountant: Accountant | None = None) -> None:
        self.epsilon = epsilon
        self.approach = approach
        self.mechanism = mechanism
        self.objective_weights = objective_weights
        self.population = population
        self.selection = selection
        self.generations = generations
        self.depth = depth
        self.max_depth = max_depth
        self.output = output
        self.budget = budget
        self.feature_bounds = feature_bounds
        self.categories = categories
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: ArrayLike, y: ArrayLike) -> "DPMOETClassifier":
        """Evolve and privately select trees on the private records ``(X, y)`` (ε-DP, add/remove one record).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_records, n_features)
        y : array-like, shape (n_records,)

        Returns
        -------
        DPMOETClassifier
            ``self``, fitted (``trees_``, ``result_``); ``accountant`` (if any) charged once.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).uniform(0, 10, (300, 2)); y = (X[:, 0] > 5).astype(int)
        >>> clf = DPMOETClassifier(epsilon=1.0, population=6, generations=1, depth=1, max_depth=2, output=1,
        ...                        feature_bounds=(0, 10), random_state=0).fit(X, y)
        >>> len(clf.trees_), clf.result_.objectives
        (1, None)
        """
        with self._as_before_on_error():
            plan, source = self._prepare(X, y)
            self._charge(plan.guarantee)
            self._release(plan, source())
        return self

    def _prepare(self, X: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:
        data, source = self._validate_fit(X, y)
        how = "local_dampening" if self.mechanism is None else check_mechanism(self.mechanism)
        check_choice(self.budget, "budget", _BUDGETS)
        plan = _dpmoet._moet_plan(data, self.epsilon, self.approach, how, weights=self.objective_weights,
                                  population=self.population, selection=self.selection,
                                  generations=self.generations, depth=self.depth, max_depth=self.max_depth,
                                  output=self.output, budget=self.budget)
        return plan, source

    def _release(self, plan: Any, gen: np.random.Generator) -> None:
        self.result_ = _dpmoet._evolve(plan, gen, exact_statistics=False)
        self.trees_ = list(self.result_.trees)

    def privacy_guarantee(self) -> Guarantee:
        """The guarantee of one ``fit`` at the current parameters (the protocol of
        :class:`~dpselect.sklearn.PrivateSearchCV`), from the parameters alone.

        Returns
        -------
        dpselect.accounting.Guarantee
            The sequential composition of the selection rounds that ``fit`` charges (ε at δ = 0, less at
            δ > 0), with respect to adding or removing one record of ``(X, y)``.

        Examples
        --------
        >>> DPMOETClassifier(epsilon=1.0, generations=3).privacy_guarantee().epsilon(0.0)
        1.0
        """
        how = "local_dampening" if self.mechanism is None else check_mechanism(self.mechanism)
        eps = check_positive(self.epsilon, "epsilon")
        p = check_int(self.population, "population", minimum=2)
        s = check_int(self.selection, "selection", minimum=2, maximum=p)
        k = check_int(self.generations, "generations", minimum=1)
        o = check_int(self.output, "output", minimum=1, maximum=p + s)
        check_choice(self.budget, "budget", _BUDGETS)
        n_gen, rounds = k, k + 1
        return _dpmoet._moet_guarantee(how, eps / rounds, [s] * n_gen + [o])

    def _positive_fraction(self, Xs: np.ndarray) -> np.ndarray:
        votes = predict_many(self.trees_, Xs)
        return np.asarray(votes, dtype=np.float64).mean(axis=0)
