"""Encoding raw feature columns into the 0/1 or [0, 1] matrices the formulations use.

:meth:`FeatureEncoder.transform` reads rows from a DataFrame, a :class:`~odtk.datasets.Table`,
a mapping of column names to values or a 2-D array, needs pandas only for a DataFrame, and
computes only the encoded columns asked for: a trained model encodes just what it tests.
"""
from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.datasets.adapters import Dataset, Table, as_table, first_row, infer_kinds, is_frame
from odtk.exceptions import ConfigError, DataError, ModelFileError, OdtkWarning
from odtk.model_checks import saved_params
from odtk.warn import warn

if TYPE_CHECKING:
    import pandas as pd

MODES = ("binary", "scaled", "onehot")
THRESHOLDS = ("auto", "midpoints", "quantiles", "values")
DEFAULT_QUANTILES = 10
DEFAULT_BINS = 10  # one-hot mode: deciles
MAX_CATEGORIES = 1000  # each category is a 0/1 column of the model
Rows = Any  # a DataFrame, Dataset, Table, mapping of column name to values, or 2-D array (see as_table)


def _frame(data: Dataset | pd.DataFrame) -> pd.DataFrame:
    """The feature frame of ``data``, its column names as text."""
    if isinstance(data, Dataset):
        return data.features
    if is_frame(data):
        return data.rename(columns=str)
    raise DataError(f"Expected a Dataset or a DataFrame, got {type(data).__name__}.")


def _numbers(table: Table, name: str, missing_ok: bool = False) -> np.ndarray:
    """Column ``name`` of ``table`` as finite float64 values (NaN too where ``missing_ok``);
    else a one-line DataError."""
    values = table.columns[name]
    try:
        numbers = values.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        raise DataError(f"Column {name!r} must be numeric as in training but has non-numeric "
                        "values; convert or drop them.") from None
    if values.dtype.kind in "iu" and len(values) and np.abs(numbers).max() >= 2**53 \
            and len(np.unique(numbers)) < len(np.unique(values)):
        raise DataError(f"Column {name!r} holds integers beyond 2^53 that floating point cannot tell "
                        "apart; declare it categorical (--categorical / categorical=[...]) or subtract a "
                        "common offset from it.")
    if not np.isfinite(numbers).all():
        bad = np.isinf(numbers)
        if not bad.any() and missing_ok:
            return numbers
        what = "infinite values" if bad.any() else "missing values"
        bad = bad if bad.any() else np.isnan(numbers)
        advice = "drop those rows or replace the values" if what[0] == "i" else "drop or impute them first"
        raise DataError(f"Column {name!r} has {what} in {first_row(bad, table)}; {advice}.")
    return numbers


def _categories(values: np.ndarray, name: str) -> list:
    """The distinct values of a categorical column, sorted (by ``repr`` if they do not compare)."""
    import pandas as pd

    distinct = pd.unique(values).tolist()
    if len(distinct) > MAX_CATEGORIES:
        raise DataError(f"Categorical column {name!r} has {len(distinct)} distinct values; at most "
                        f"{MAX_CATEGORIES} are supported, as each becomes a 0/1 column of the model. Drop "
                        "the column if it identifies rows, or merge rare values into fewer categories.")
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=repr)


def _warn_unseen(table: Table, name: str, texts: np.ndarray, unseen: np.ndarray) -> None:
    """An OdtkWarning naming the categories of column ``name`` not seen in training."""
    if unseen.any():
        values = reprlib.repr(sorted(set(texts[unseen].tolist())))
        warn(f"Column {name!r} has {int(unseen.sum())} row(s) with categories not seen in "
             f"training ({values}, first in {first_row(unseen, table)}): "
             "they match no category, so every test on the column answers no for them.",
             OdtkWarning)


def _distinct(ordered: np.ndarray) -> np.ndarray:
    """The distinct values of the sorted array ``ordered`` (as ``np.unique`` finds them)."""
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def _same_split_midpoints(distinct: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The data midpoint that splits the sorted ``distinct`` values as each ``x <= t`` does (none
    if no value is on one side)."""
    below = np.searchsorted(distinct, thresholds, side="right") - 1  # distinct[below] <= t < the next
    below = below[(below >= 0) & (below < len(distinct) - 1)]
    return _midpoints(distinct)[below]


def _midpoints(distinct: np.ndarray) -> np.ndarray:
    """The midpoints of consecutive sorted distinct values, each ``a <= m < b`` so that
    ``x <= m`` splits them: halving first keeps ±1.8e308 finite, and where rounding reaches ``b``
    (neighbouring subnormal numbers) the midpoint is ``a``."""
    low, high = distinct[:-1], distinct[1:]
    middle = low / 2 + high / 2
    return np.where((low <= middle) & (middle < high), middle, low)


def _nearest(cuts: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The index of the element of the increasing ``cuts`` nearest to each target (the lower
    one on a tie)."""
    above = np.clip(np.searchsorted(cuts, targets), 1, len(cuts) - 1)
    below = above - 1
    return np.where(np.abs(cuts[below] - targets) <= np.abs(cuts[above] - targets), below, above)


class FeatureEncoder:
    """Scikit-learn-style encoder of raw features (fit on training data only).

    ``mode="binary"``: binary columns pass through; a numeric column becomes one 0/1
    column ``x <= t`` per threshold; a categorical column is one-hot encoded.
    Thresholds are the midpoints between consecutive distinct training values
    (``thresholds="midpoints"``, at most ``max_thresholds`` evenly spaced ones if
    given) or the midpoints nearest to ``max_thresholds`` (default 10) evenly
    spaced quantiles of the training values (``thresholds="quantiles"``).
    ``thresholds="auto"`` takes the quantile midpoints and adds the thresholds given to
    :meth:`fit` as ``keep`` (odtk gives those of scikit-learn's CART of the tree's depth),
    each moved to the data midpoint that splits the rows the same way.
    ``thresholds="values"`` encodes an ordered column as one 0/1 column ``x > v`` per
    distinct training value v but the largest (at most ``max_thresholds`` evenly
    spaced ones if given); it takes a categorical column whose values are all
    numbers (integer codes) as ordered, i.e. as a numeric column, in every mode.
    ``mode="scaled"``: numeric columns are min-max scaled to [0, 1] on the
    training data (new data clipped; a constant column maps to 0); binary
    columns pass through; categorical columns are one-hot encoded.
    ``mode="onehot"``: every feature becomes a group of 0/1 columns with exactly one 1
    per row — a categorical column one-hot, a binary column its two values, a numeric
    column its bins between ``max_thresholds`` (default 9: deciles) quantile thresholds.

    A category not seen in training encodes as an all-zero row of its one-hot group (every
    test on the column answers no), with an OdtkWarning naming the column and values.

    Fitted attributes: ``columns_`` (encoded column names), ``groups_`` (feature →
    indices of its encoded columns), ``kinds_`` (feature → kind) and ``params_``
    (feature → thresholds, categories or ``[min, max]``).
    """

    def __init__(self, mode: str = "binary", thresholds: str = "midpoints", max_thresholds: int | None = None):
        if mode not in MODES:
            raise ConfigError(f"Unknown encoder mode {mode!r}; use one of {', '.join(MODES)}.")
        if thresholds not in THRESHOLDS:
            raise ConfigError(f"Unknown thresholds {thresholds!r}; use one of {', '.join(THRESHOLDS)}.")
        if max_thresholds is not None and (not isinstance(max_thresholds, (int, np.integer)) or max_thresholds < 1):
            raise ConfigError(f"max_thresholds must be a positive integer or None, got {max_thresholds!r}.")
        self.mode = mode
        self.thresholds = thresholds
        self.max_thresholds = None if max_thresholds is None else int(max_thresholds)

    def fit(self, data: Dataset | pd.DataFrame, kinds: dict[str, str] | None = None,
            keep: dict[str, np.ndarray] | None = None) -> FeatureEncoder:
        """Learn thresholds, categories and ranges; DataFrame kinds are inferred when not given.
        ``keep`` (``thresholds="auto"``): numeric column → thresholds to add to the quantiles."""
        frame = _frame(data)
        if isinstance(data, Dataset):
            kinds = data.kinds
        kinds = {str(k): v for k, v in (kinds or infer_kinds(frame)).items()}
        if len(frame) == 0:
            raise DataError("Cannot fit the encoder on data without rows.")
        table = as_table(frame, list(kinds))
        self.kinds_ = {name: self._kind(table.columns[name], kind) for name, kind in kinds.items()}
        keep = keep or {}
        self.params_ = {name: self._fit_column(table, name, kind, keep.get(name, ()))
                        for name, kind in self.kinds_.items()}
        self._layout()
        return self

    def _kind(self, values: np.ndarray, kind: str) -> str:
        """``thresholds="values"``: a categorical column of numbers is ordered, so numeric."""
        if self.thresholds != "values" or kind != "categorical":
            return kind
        import pandas as pd

        return "numeric" if pd.notna(pd.to_numeric(values, errors="coerce")).all() else kind

    def _fit_column(self, table: Table, name: str, kind: str, keep: Any = ()) -> list:
        if kind == "categorical":
            return _categories(table.columns[name], name)
        if kind == "binary":
            return []
        if kind != "numeric":
            raise DataError(f"Unknown kind {kind!r} for column {name!r}; use binary, numeric or categorical.")
        values = _numbers(table, name)
        if self.mode == "scaled":
            low, high = float(values.min()), float(values.max())
            if not np.isfinite(high - low):
                raise DataError(f"Numeric column {name!r} spans {low:g} to {high:g}, a range too wide "
                                "to scale in floating point; divide the column by a large power of 10 first.")
            return [low, high]
        ordered = np.sort(values)
        distinct = _distinct(ordered)
        cuts = self._thresholds(ordered, distinct)
        if self.thresholds == "auto" and len(keep):
            cuts = np.union1d(cuts, _same_split_midpoints(distinct, np.asarray(keep, dtype=float)))
        return cuts.tolist()

    def _thresholds(self, ordered: np.ndarray, distinct: np.ndarray) -> np.ndarray:
        """The thresholds of a numeric column of sorted values ``ordered`` (``distinct`` of them)."""
        if self.thresholds == "values":  # x > v: every distinct value but the largest
            cuts, cap = distinct[:-1], self.max_thresholds
        else:
            cuts = _midpoints(distinct)
            cap = self.max_thresholds or (DEFAULT_BINS - 1 if self.mode == "onehot" else
                                          None if self.thresholds == "midpoints" else DEFAULT_QUANTILES)
        if cap is None or len(cuts) <= cap:
            return cuts
        if self.thresholds == "values" or self.thresholds == "midpoints" and self.mode != "onehot":
            picks = np.arange(1, cap + 1) * len(cuts) // (cap + 1)
        else:
            picks = _nearest(cuts, np.quantile(ordered, np.arange(1, cap + 1) / (cap + 1)))
        return cuts[np.unique(picks)]

    def _labels(self, name: str, kind: str, params: list) -> list[str]:
        if kind == "binary" and self.mode == "onehot":
            return [f"{name}=0", f"{name}=1"]
        if kind == "binary" or (kind == "numeric" and self.mode == "scaled"):
            return [name]
        if kind == "categorical":
            return [f"{name}={value}" for value in params]
        if self.mode == "onehot":
            edges = [f"{t:.6g}" for t in params]
            return ([f"{name}<={edges[0]}"] + [f"{a}<{name}<={b}" for a, b in zip(edges, edges[1:])]
                    + [f"{name}>{edges[-1]}"]) if edges else [f"{name}=any"]
        sign = ">" if self.thresholds == "values" else "<="
        short = [f"{name}{sign}{t:.6g}" for t in params]
        return short if len(set(short)) == len(short) else [f"{name}{sign}{t!r}" for t in params]

    def _layout(self) -> None:
        """Encoded column names and groups, and per encoded column its feature and place in the
        feature's group; the parameters as arrays for :meth:`transform`."""
        self.columns_: list[str] = []
        self.groups_: dict[str, list[int]] = {}
        for name, kind in self.kinds_.items():
            labels = self._labels(name, kind, self.params_[name])
            self.groups_[name] = list(range(len(self.columns_), len(self.columns_) + len(labels)))
            self.columns_ += labels
        self._owner = np.repeat(np.arange(len(self.groups_)), [len(g) for g in self.groups_.values()])
        self._place = np.concatenate([np.arange(len(g)) for g in self.groups_.values()] or [np.zeros(0, int)])
        self._plans: dict[bytes | None, dict] = {}
        self._binary = np.array([k for k, kind in enumerate(self.kinds_.values()) if kind == "binary"], dtype=np.intp)
        self._arrays = {name: _texts(params) if self.kinds_[name] == "categorical" else np.asarray(params, float)
                        for name, params in self.params_.items()}

    def transform(self, data: Rows, columns: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """Encode rows: int8 0/1 in binary and one-hot modes, float64 in [0, 1] in scaled mode.

        ``data``: a DataFrame or Dataset (columns by name), a :class:`~odtk.datasets.Table` or a
        mapping of column names to values, or a 2-D array whose columns are the training
        features in order. Every training column must be present and valid (no missing values,
        numbers where numeric, 0/1 where binary). ``columns`` (indices into ``columns_``) asks
        for those encoded columns only, in that order, as a column-major array; the others are
        not computed, and a feature none of whose columns is asked for may miss values.
        """
        self._check_fitted()
        plan = self._plan(columns)
        matrix = self._array(data)
        numbers = None if matrix is None else self._matrix(matrix)
        if matrix is None or numbers is None:
            table = as_table(data, list(self.kinds_), complete=plan)
            checked = {name: self._checked(table, name, kind, name in plan) for name, kind in self.kinds_.items()}
            read = {name: values for name, values in checked.items() if values is not None}
        else:
            table = Table({}, len(matrix))
            read = {name: np.ascontiguousarray((matrix if self.kinds_[name] == "categorical" else numbers)[:, k])
                    for k, name in enumerate(self.kinds_) if name in plan}
        across = columns is not None  # column-major: each encoded column filled as a row of a block
        out = np.empty((table.n_rows, len(self.columns_) if columns is None else len(columns)),
                       dtype=np.float64 if self.mode == "scaled" else np.int8, order="F" if across else "C")
        for name, (slots, places) in plan.items():
            values = read[name] if self.kinds_[name] != "categorical" else read[name].astype(str)
            block = self._encode(table, name, values[None, :] if across else values[:, None],
                                 places[:, None] if across else places[None, :])
            out[:, slots] = block.T if across else block
        return out

    def _check_fitted(self) -> None:
        if not hasattr(self, "kinds_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This FeatureEncoder is not fitted yet; call fit() first.")

    def _plan(self, columns: Sequence[int] | np.ndarray | None) -> dict[str, tuple[slice | np.ndarray, np.ndarray]]:
        """Per feature with encoded columns among ``columns`` (all when None): where they go in
        the output and their places in the feature's group (cached per ``columns``)."""
        key = None if columns is None else np.asarray(columns, dtype=np.intp).tobytes()
        plans = self._plans
        if key not in plans:
            wanted = np.arange(len(self.columns_)) if columns is None else np.asarray(columns, dtype=np.intp)
            plans[key] = {}
            for k, name in enumerate(self.kinds_):
                slots = np.flatnonzero(self._owner[wanted] == k)
                if len(slots):
                    contiguous = slots[-1] - slots[0] == len(slots) - 1
                    plans[key][name] = (slice(slots[0], slots[-1] + 1) if contiguous else slots,
                                        self._place[wanted[slots]])
        return plans[key]

    def _array(self, data: Rows) -> np.ndarray | None:
        """``data`` as one 2-D numeric array of the training columns in order, if it is one or a
        DataFrame of exactly those columns, all of numeric dtypes and none categorical."""
        if is_frame(data) and list(data.columns) == list(self.kinds_) and "categorical" not in self.kinds_.values() \
                and all(dtype.kind in "biuf" for dtype in data.dtypes):
            data = data.to_numpy()
        if isinstance(data, np.ndarray) and data.ndim == 2 and data.dtype.kind in "biuf" \
                and data.shape[1] == len(self.kinds_):
            return data
        return None

    def _matrix(self, data: np.ndarray) -> np.ndarray | None:
        """The 2-D numeric array ``data`` of the training columns as float64 when every value is
        valid for its column (finite; 0/1 where binary; integers floating point tells apart),
        checked at once; else None, to let the column-by-column checks name the problem."""
        if data.dtype.kind in "iu" and data.size and np.abs(data).max() >= 2**53:
            return None
        numbers = data.astype(np.float64, copy=False)
        if not np.isfinite(numbers).all():
            return None
        binary = numbers[:, self._binary] if len(self._binary) else None
        return None if binary is not None and not ((binary == 0) | (binary == 1)).all() else numbers

    def _checked(self, table: Table, name: str, kind: str, read: bool) -> np.ndarray | None:
        """Column ``name``'s values as the encoding reads them (numbers, or the raw values of a
        categorical column when ``read``); a one-line DataError if they do not fit its kind. A
        column not ``read`` may miss values (it is never encoded), not hold others."""
        if kind == "categorical":
            return table.columns[name] if read else None
        values = _numbers(table, name, missing_ok=not read)
        if kind == "binary":
            other = (values != 0) & (values != 1) & ~np.isnan(values)
            if other.any():
                raise DataError(f"Column {name!r} was binary (0/1) in training but has other values in "
                                f"{first_row(other, table)}; pass 0/1 values as in training.")
        return values

    def _encode(self, table: Table, name: str, values: np.ndarray, places: np.ndarray) -> np.ndarray:
        """The encoded columns at ``places`` of feature ``name``'s group for ``values``: one
        column per place for values as a column and places as a row, one row per place for
        values as a row and places as a column (whichever fills the output faster)."""
        kind, params = self.kinds_[name], self._arrays[name]
        if kind == "categorical":
            texts, of_category = params
            found = np.searchsorted(texts, values.ravel()).clip(0, max(len(texts) - 1, 0))
            known = texts[found] == values.ravel() if len(texts) else np.zeros(values.size, bool)
            _warn_unseen(table, name, values.ravel(), ~known)
            return of_category[places] == np.where(known, found, -1).reshape(values.shape)
        if kind == "binary":
            return places == values if self.mode == "onehot" else values
        if self.mode == "onehot":
            return places == np.searchsorted(params, values, side="left")
        if self.mode == "binary" and self.thresholds == "values":
            return params[places] < values
        if self.mode == "binary":
            return params[places] >= values
        low, high = params
        return np.clip((values - low) / (high - low), 0.0, 1.0) if high > low else np.zeros(values.shape)

    def subset_text(self, columns: list[int]) -> str:
        """A one-hot mode test "the value is in these columns" in the feature's own terms:
        ``odor in {almond, anise}``, ``age <= 37.5``, ``30 < age <= 40``."""
        name = next(n for n, members in self.groups_.items() if columns[0] in members)
        kind, params, first = self.kinds_[name], self.params_[name], self.groups_[name][0]
        positions = sorted(j - first for j in columns)
        if kind != "numeric":
            values = [(0, 1)[p] if kind == "binary" else params[p] for p in positions]
            return f"{name} = {values[0]}" if len(values) == 1 else \
                f"{name} in {{{', '.join(map(str, values))}}}"
        last = len(params)
        if positions == list(range(positions[0], positions[-1] + 1)):
            low = f"{params[positions[0] - 1]:.6g} < " if positions[0] > 0 else ""
            high = f" <= {params[positions[-1]]:.6g}" if positions[-1] < last else ""
            if not (low or high):
                return f"{name} is any number"
            return f"{name} > {params[positions[0] - 1]:.6g}" if not high else f"{low}{name}{high}"
        return " or ".join(self.subset_text([first + p]) for p in positions)

    def fit_transform(self, data: Dataset | pd.DataFrame, kinds: dict[str, str] | None = None) -> np.ndarray:
        """``fit`` then ``transform`` the same data."""
        return self.fit(data, kinds).transform(data)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description of the fitted encoder."""
        self._check_fitted()
        return {"mode": self.mode, "thresholds": self.thresholds, "max_thresholds": self.max_thresholds,
                "kinds": dict(self.kinds_), "params": {name: list(p) for name, p in self.params_.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureEncoder:
        """Rebuild a fitted encoder from :meth:`to_dict` output (a ModelFileError for parameters
        fitting cannot make, see :func:`odtk.model_checks.saved_params`)."""
        encoder = cls(data["mode"], data["thresholds"], data["max_thresholds"])
        kinds, params = data["kinds"], data["params"]
        if not (isinstance(kinds, dict) and isinstance(params, dict) and set(kinds) == set(params)):
            raise ModelFileError("its encoder's kinds and params do not name the same columns")
        encoder.kinds_ = {str(name): str(kind) for name, kind in kinds.items()}
        encoder.params_ = {name: saved_params(encoder.mode, name, kind, params[name])
                           for name, kind in encoder.kinds_.items()}
        encoder._layout()
        return encoder


def _texts(categories: list) -> tuple[np.ndarray, np.ndarray]:
    """Categories as compared (as text, as written: 1 read as a number matches the category "1"
    read as text): the distinct texts sorted, and each category's position among them."""
    texts, of_category = np.unique(np.array([str(c) for c in categories], dtype=str), return_inverse=True)
    return texts, of_category
