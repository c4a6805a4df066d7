"""The :class:`Dataset` container and adapters from DataFrames and CSV files."""
from __future__ import annotations

import csv
import os
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from odtk.exceptions import DataError

KINDS = ("binary", "numeric", "categorical")


@dataclass(frozen=True, eq=False)
class Dataset:
    """Raw features, original class labels and the kind of every feature column.

    ``kinds`` maps each feature column to ``"binary"`` (values in {0, 1}),
    ``"numeric"`` or ``"categorical"``. Build one with :func:`from_dataframe`,
    :func:`from_csv` or :func:`~odtk.datasets.load_dataset`.
    """

    name: str
    features: pd.DataFrame
    target: pd.Series
    kinds: dict[str, str]

    @property
    def n_rows(self) -> int:
        return len(self.features)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    @property
    def classes(self) -> list:
        """Sorted distinct target labels."""
        return sorted(self.target.unique().tolist())

    @property
    def kind(self) -> str:
        """``"binary"``, ``"numeric"``, ``"categorical"`` or ``"mixed"``."""
        return overall_kind(self.kinds.values())

    def subset(self, rows: np.ndarray) -> Dataset:
        """The dataset restricted to ``rows`` (positions or a boolean mask), index reset."""
        rows = np.asarray(rows)
        return Dataset(self.name, self.features.iloc[rows].reset_index(drop=True),
                       self.target.iloc[rows].reset_index(drop=True), dict(self.kinds))


def overall_kind(kinds: Iterable[str]) -> str:
    """Summarise column kinds: binary if all binary, else the single non-binary kind, else mixed."""
    others = set(kinds) - {"binary"}
    if not others:
        return "binary"
    return others.pop() if len(others) == 1 else "mixed"


def infer_kinds(features: pd.DataFrame, categorical: Iterable[Hashable] = ()) -> dict[str, str]:
    """Kind of every column: declared or non-numeric → categorical, 0/1 → binary, else numeric."""
    declared = set(categorical)
    kinds = {}
    for name in features.columns:
        column = features[name]
        if name in declared or not pd.api.types.is_numeric_dtype(column):
            kinds[name] = "categorical"
        elif column.isin((0, 1)).all():
            kinds[name] = "binary"
        else:
            kinds[name] = "numeric"
    return kinds


def _preview(names: Iterable, limit: int = 5) -> str:
    names = [repr(str(n)) for n in names]
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _target_column(df: pd.DataFrame, target: Hashable) -> Hashable:
    if target in df.columns:
        return target
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if -df.shape[1] <= target < df.shape[1]:
            return df.columns[target]
        raise DataError(f"Target position {target} is out of range for {df.shape[1]} columns; "
                        f"use 0..{df.shape[1] - 1} or a negative position.")
    raise DataError(f"Target column {target!r} not found; available columns: {_preview(df.columns)}. "
                    "Pass one of them as target.")


def _check_frame(df: pd.DataFrame, name: str) -> None:
    if df.columns.duplicated().any():
        dups = df.columns[df.columns.duplicated()].unique()
        raise DataError(f"Data '{name}' has duplicate column names {_preview(dups)}; rename them to be unique.")
    if df.shape[1] == 0:
        raise DataError(f"Data '{name}' has no columns; it needs feature columns and a target column.")
    if len(df) == 0:
        raise DataError(f"Data '{name}' has no rows; provide at least one example per class.")
    missing = df.isna().sum()
    if missing.any():
        column = missing.index[missing.to_numpy().nonzero()[0][0]]
        raise DataError(f"Column {str(column)!r} of '{name}' has missing values in {missing[column]} rows; "
                        "drop those rows or impute the values first.")
    numeric = df.select_dtypes("number")
    if numeric.shape[1]:
        infinite = np.isinf(numeric.to_numpy(dtype=float)).sum(axis=0)
        if infinite.any():
            j = int(infinite.nonzero()[0][0])
            raise DataError(f"Column {str(numeric.columns[j])!r} of '{name}' has infinite values in "
                            f"{infinite[j]} rows; drop those rows or replace the values.")


def from_dataframe(df: pd.DataFrame, target: Hashable, *, categorical: Iterable[Hashable] | None = None,
                   name: str = "dataframe") -> Dataset:
    """Validate ``df`` and split it into features and target.

    ``target`` is a column name or, if it is an int that is not a column name, a
    position (negative allowed). Columns in ``categorical`` and non-numeric columns
    are categorical; numeric 0/1 columns are binary; other numeric columns numeric.
    Feature names are converted to strings; boolean columns to 0/1.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"Expected a pandas DataFrame, got {type(df).__name__}; wrap the data in pd.DataFrame.")
    _check_frame(df, name)
    target_name = _target_column(df, target)
    categorical = [] if categorical is None else list(categorical)
    unknown = [c for c in categorical if c not in df.columns or c == target_name]
    if unknown:
        raise DataError(f"Categorical column(s) {_preview(unknown)} are not feature columns of '{name}'; "
                        f"available: {_preview(df.columns.drop(target_name))}.")
    features = df.drop(columns=[target_name]).reset_index(drop=True)
    if features.shape[1] == 0:
        raise DataError(f"Data '{name}' has no feature columns besides the target {str(target_name)!r}; "
                        "add at least one feature column.")
    for column in features.select_dtypes("bool").columns:
        features[column] = features[column].astype(np.int64)
    labels = df[target_name].reset_index(drop=True)
    if labels.nunique() < 2:
        raise DataError(f"Target {str(target_name)!r} of '{name}' has a single class; a classifier needs "
                        "at least two classes.")
    kinds = infer_kinds(features, categorical)
    features.columns = [str(c) for c in features.columns]
    if features.columns.duplicated().any():
        raise DataError(f"Column names of '{name}' collide once converted to strings; rename them to be unique.")
    return Dataset(name, features, labels, {str(c): k for c, k in kinds.items()})


def _read_csv(path: Path, sep: str | None) -> pd.DataFrame:
    if sep is not None:
        return pd.read_csv(path, sep=sep, encoding="utf-8-sig")
    try:
        return pd.read_csv(path, sep=None, engine="python", encoding="utf-8-sig")
    except csv.Error:  # the sniffer found no separator, e.g. a single column
        return pd.read_csv(path, encoding="utf-8-sig")


def read_csv(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV file with a header row; ``sep=None`` detects the separator (comma if unsure).

    A UTF-8 byte-order mark is ignored. Every reading problem becomes a one-line :class:`DataError`.
    """
    path = Path(path)
    try:
        if path.is_file() and path.stat().st_size == 0:
            raise pd.errors.EmptyDataError
        return _read_csv(path, sep)
    except FileNotFoundError:
        raise DataError(f"CSV file '{path}' not found; check the path.") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"CSV file '{path}' is empty; it needs a header row and data rows.") from None
    except (pd.errors.ParserError, csv.Error, UnicodeDecodeError, OSError) as exc:
        reason = " ".join(str(exc).split())
        raise DataError(f"Cannot parse CSV file '{path}' ({reason}); check the separator, quoting "
                        "and that every row has as many fields as the header.") from None


def from_csv(path: str | os.PathLike, target: Hashable, *, sep: str | None = None,
             categorical: Iterable[Hashable] | None = None, name: str | None = None) -> Dataset:
    """Read a CSV file (see :func:`read_csv`) and validate it as a :class:`Dataset`.

    ``name`` defaults to the file stem.
    """
    df = read_csv(path, sep)
    return from_dataframe(df, target, categorical=categorical, name=name or Path(path).stem)
