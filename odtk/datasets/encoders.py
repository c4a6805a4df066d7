"""Encoding raw feature columns into the 0/1 or [0, 1] matrices the formulations use."""
from __future__ import annotations

import reprlib
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from odtk.datasets.adapters import Dataset, first_row, infer_kinds
from odtk.exceptions import ConfigError, DataError, OdtkWarning

MODES = ("binary", "scaled", "onehot")
THRESHOLDS = ("auto", "midpoints", "quantiles", "values")
DEFAULT_QUANTILES = 10
DEFAULT_BINS = 10  # one-hot mode: deciles
MAX_CATEGORIES = 1000  # each category is a 0/1 column of the model


def _frame(data: Dataset | pd.DataFrame) -> pd.DataFrame:
    if isinstance(data, Dataset):
        return data.features
    if isinstance(data, pd.DataFrame):
        return data.rename(columns=str)
    raise DataError(f"Expected a Dataset or a DataFrame, got {type(data).__name__}.")


def _columns(frame: pd.DataFrame, names: list[str]) -> dict[str, pd.Series]:
    """The named columns, checked present and complete (in one pass over the frame)."""
    absent = [name for name in names if name not in frame.columns]
    if absent:
        raise DataError(f"Column {absent[0]!r} used in training is missing from the data; "
                        "pass the same feature columns as in training.")
    missing = frame[names].isna()
    if missing.to_numpy().any():
        name = missing.columns[missing.to_numpy().any(axis=0)][0]
        raise DataError(f"Column {name!r} has missing values in {first_row(missing[name])}; "
                        "drop or impute them first.")
    return {name: frame[name] for name in names}


def _numbers(column: pd.Series) -> np.ndarray:
    try:
        values = pd.to_numeric(column).to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"Column {column.name!r} must be numeric as in training but has non-numeric "
                        "values; convert or drop them.") from None
    if column.dtype.kind in "iu" and len(values) and np.abs(values).max() >= 2**53 \
            and len(np.unique(values)) < column.nunique():
        raise DataError(f"Column {column.name!r} holds integers beyond 2^53 that floating point cannot tell "
                        "apart; declare it categorical (--categorical / categorical=[...]) or subtract a "
                        "common offset from it.")
    infinite = np.isinf(values)
    if infinite.any():
        rows = first_row(pd.Series(infinite, index=column.index))
        raise DataError(f"Column {column.name!r} has infinite values in {rows}; drop those rows or replace the values.")
    return values


def _categories(column: pd.Series) -> list:
    values = column.unique().tolist()
    if len(values) > MAX_CATEGORIES:
        raise DataError(f"Categorical column {column.name!r} has {len(values)} distinct values; at most "
                        f"{MAX_CATEGORIES} are supported, as each becomes a 0/1 column of the model. Drop "
                        "the column if it identifies rows, or merge rare values into fewer categories.")
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


def _warn_unseen(column: pd.Series, unseen: np.ndarray) -> None:
    """An OdtkWarning naming the categories of ``column`` not seen in training."""
    if unseen.any():
        values = reprlib.repr(sorted(map(str, pd.unique(column[unseen]))))
        warnings.warn(f"Column {column.name!r} has {int(unseen.sum())} row(s) with categories not seen in "
                      f"training ({values}, first in {first_row(pd.Series(unseen, index=column.index))}): "
                      "they match no category, so every test on the column answers no for them.",
                      OdtkWarning, stacklevel=4)


def _same_split_midpoints(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The data midpoint that splits ``values`` as each ``x <= t`` does (none if no row is on one side)."""
    distinct = np.unique(values)
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
        columns = _columns(frame, list(kinds))
        self.kinds_ = {name: self._kind(columns[name], kind) for name, kind in kinds.items()}
        keep = keep or {}
        self.params_ = {name: self._fit_column(columns[name], kind, keep.get(name, ()))
                        for name, kind in self.kinds_.items()}
        self._layout()
        return self

    def _kind(self, column: pd.Series, kind: str) -> str:
        """``thresholds="values"``: a categorical column of numbers is ordered, so numeric."""
        if self.thresholds != "values" or kind != "categorical":
            return kind
        numbers = pd.to_numeric(column, errors="coerce")
        return "numeric" if numbers.notna().all() else kind

    def _fit_column(self, column: pd.Series, kind: str, keep: Any = ()) -> list:
        if kind == "categorical":
            return _categories(column)
        if kind == "binary":
            return []
        if kind != "numeric":
            raise DataError(f"Unknown kind {kind!r} for column {column.name!r}; use binary, numeric or categorical.")
        values = _numbers(column)
        if self.mode == "scaled":
            low, high = float(values.min()), float(values.max())
            if not np.isfinite(high - low):
                raise DataError(f"Numeric column {column.name!r} spans {low:g} to {high:g}, a range too wide "
                                "to scale in floating point; divide the column by a large power of 10 first.")
            return [low, high]
        cuts = self._thresholds(values)
        if self.thresholds == "auto" and len(keep):
            cuts = np.union1d(cuts, _same_split_midpoints(values, np.asarray(keep, dtype=float)))
        return cuts.tolist()

    def _thresholds(self, values: np.ndarray) -> np.ndarray:
        distinct = np.unique(values)
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
            targets = np.quantile(values, np.arange(1, cap + 1) / (cap + 1))
            picks = np.abs(cuts[None, :] - targets[:, None]).argmin(axis=1)
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
        self.columns_: list[str] = []
        self.groups_: dict[str, list[int]] = {}
        for name, kind in self.kinds_.items():
            labels = self._labels(name, kind, self.params_[name])
            self.groups_[name] = list(range(len(self.columns_), len(self.columns_) + len(labels)))
            self.columns_ += labels

    def transform(self, data: Dataset | pd.DataFrame) -> np.ndarray:
        """Encode rows: int8 0/1 in binary and one-hot modes, float64 in [0, 1] in scaled mode."""
        if not hasattr(self, "kinds_"):
            raise NotFittedError("This FeatureEncoder is not fitted yet; call fit() first.")
        frame = _frame(data)
        columns = _columns(frame, list(self.kinds_))
        blocks = [self._encode(columns[name], kind, self.params_[name]) for name, kind in self.kinds_.items()]
        dtype = np.float64 if self.mode == "scaled" else np.int8
        return np.hstack(blocks).astype(dtype) if blocks else np.empty((len(frame), 0), dtype)

    def _encode(self, column: pd.Series, kind: str, params: list) -> np.ndarray:
        if kind == "categorical":
            # compared as text, as written: 1 read as a number matches the category "1" read as text
            matches = column.astype(str).to_numpy()[:, None] == np.array([str(p) for p in params])[None, :]
            _warn_unseen(column, ~matches.any(axis=1))
            return matches
        values = _numbers(column)[:, None]
        if kind == "binary":
            other = ~np.isin(values[:, 0], (0, 1))
            if other.any():
                raise DataError(f"Column {column.name!r} was binary (0/1) in training but has other values in "
                                f"{first_row(pd.Series(other, index=column.index))}; pass 0/1 values as in training.")
            return np.hstack([values == 0, values == 1]) if self.mode == "onehot" else values
        if self.mode == "onehot":
            bins = np.searchsorted(np.asarray(params, dtype=float), values[:, 0], side="left")
            return bins[:, None] == np.arange(len(params) + 1)[None, :]
        if self.mode == "binary" and self.thresholds == "values":
            return values > np.array(params)[None, :]
        if self.mode == "binary":
            return values <= np.array(params)[None, :]
        low, high = params
        return np.clip((values - low) / (high - low), 0.0, 1.0) if high > low else np.zeros_like(values)

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
        if not hasattr(self, "kinds_"):
            raise NotFittedError("This FeatureEncoder is not fitted yet; call fit() first.")
        return {"mode": self.mode, "thresholds": self.thresholds, "max_thresholds": self.max_thresholds,
                "kinds": dict(self.kinds_), "params": {name: list(p) for name, p in self.params_.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureEncoder:
        """Rebuild a fitted encoder from :meth:`to_dict` output."""
        encoder = cls(data["mode"], data["thresholds"], data["max_thresholds"])
        encoder.kinds_ = {str(name): str(kind) for name, kind in data["kinds"].items()}
        encoder.params_ = {name: encoder._saved_params(name, kind, data["params"][name])
                           for name, kind in encoder.kinds_.items()}
        encoder._layout()
        return encoder

    def _saved_params(self, name: str, kind: str, params: Any) -> list:
        """Saved parameters of one column if they are what :meth:`fit` makes; else a DataError."""
        numbers = isinstance(params, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in params)
        if kind == "binary":
            valid, expected = params == [], "no parameters"
        elif kind == "categorical":
            valid, expected = isinstance(params, list) and all(
                isinstance(v, (str, int, float)) for v in params), "a list of category values"
        elif kind == "numeric" and self.mode == "scaled":
            valid, expected = numbers and len(params) == 2 and params[0] <= params[1], "[min, max]"
        elif kind == "numeric":
            valid, expected = numbers and all(np.diff(params) > 0), "increasing finite thresholds"
        else:
            raise DataError(f"column {name!r} has unknown kind {kind!r}; kinds are binary, numeric, categorical")
        if not valid:
            raise DataError(f"column {name!r} ({kind}) has parameters that are not {expected}")
        return list(params)
