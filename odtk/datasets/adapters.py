"""The :class:`Dataset` container, its adapter from DataFrames, and :class:`Table`: named
columns held without pandas, which a trained model predicts on. CSV files are read in
:mod:`odtk.datasets.csv_files`."""
from __future__ import annotations

import csv
import io
import sys
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.datasets.dates import check_dates
from odtk.exceptions import DataError

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("binary", "numeric", "categorical")
# a target with a different value in every one of more rows than this is refused: an identifier or
# a measured quantity chosen by mistake (a toy set may well have one row per class)
UNIQUE_TARGET_ROWS = 10


@dataclass(frozen=True, eq=False)
class Table:
    """Rows as named 1-D numpy arrays of equal length, held without pandas.

    :func:`~odtk.datasets.csv_files.read_table` returns one; a fitted encoder and a trained model
    read rows from it, from a DataFrame, a mapping of names to values or a 2-D array. ``labels``
    names each row in messages (a CSV file's lines, a frame's index; positions when None) and
    ``label_name`` says what a label is (``line``, ``row``).
    """

    columns: dict[str, np.ndarray]
    n_rows: int
    labels: Any = None
    label_name: Hashable = "row"

    def __len__(self) -> int:
        return self.n_rows

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame indexed by its row labels."""
        import pandas as pd

        index = pd.RangeIndex(self.n_rows) if self.labels is None else pd.Index(self.labels)
        return pd.DataFrame(self.columns, index=index.rename(self.label_name))

    def text(self, name: str) -> np.ndarray:
        """The values of column ``name`` as text (a missing value as ``nan``)."""
        return np.array([str(value) for value in self.columns[name].tolist()], dtype=object)

    def to_csv(self, **extra: Any) -> str:
        """The table as CSV text (no row labels; a missing value empty), with the columns of
        ``extra`` (name → one value per row) added or replacing those of the same name."""
        columns = {**self.columns, **{name: np.asarray(values, dtype=object) for name, values in extra.items()}}
        cells = [[_cell(value) for value in values.tolist()] for values in columns.values()]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(zip(*cells))
        return out.getvalue()


def _cell(value: Any) -> str:
    """A value as written to CSV: a missing value (None, NaN) empty, others as ``str``."""
    return "" if value is None or value != value else str(value)


def as_table(data: Any, names: list[str], complete: Collection[str] | None = None) -> Table:
    """The columns ``names`` of ``data`` — a :class:`Table`, a DataFrame, a :class:`Dataset`, a
    mapping of names to values, or a 2-D array whose columns are ``names`` in order — each
    present, and those of ``complete`` (default: all) without missing values (else a one-line
    DataError)."""
    complete = set(names if complete is None else complete)
    if isinstance(data, Dataset):
        data = data.features
    if is_frame(data):
        return _frame_table(data, names, complete)
    if isinstance(data, np.ndarray) and data.ndim == 2:
        if data.shape[1] != len(names):
            raise DataError(f"Expected {len(names)} feature columns as in training, got {data.shape[1]}; pass the "
                            "same feature columns as in training.")
        table = Table({name: data[:, j] for j, name in enumerate(names)}, data.shape[0])
    elif isinstance(data, Table):
        table = data
    elif isinstance(data, Mapping):
        columns = {str(name): np.asarray(values) for name, values in data.items()}
        table = Table(columns, len(next(iter(columns.values()), ())))
    else:
        raise DataError(f"Expected a DataFrame, a Table, a mapping of columns or a 2-D array, got "
                        f"{type(data).__name__}.")
    _present(table.columns, names)
    for name in filter(complete.__contains__, names):
        _complete(missing_mask(table.columns[name]), name, table)
    return Table({name: table.columns[name] for name in names}, table.n_rows, table.labels, table.label_name)


def is_frame(data: Any) -> bool:
    """Whether ``data`` is a pandas DataFrame (without importing pandas)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def _frame_table(frame: pd.DataFrame, names: list[str], complete: Collection[str]) -> Table:
    """The columns ``names`` of a DataFrame (renamed to text) as a Table labelled by its index,
    those of ``complete`` checked for missing values."""
    frame = frame.rename(columns=str) if not all(isinstance(c, str) for c in frame.columns) else frame
    _present(frame.columns, names)
    table = Table({}, len(frame), frame.index, frame.index.name or "row")
    for name in names:
        column = frame[name]
        values = column.to_numpy()
        if name in complete:
            _complete(np.isnan(values) if values.dtype.kind == "f" else
                      None if values.dtype.kind in "biu" else column.isna().to_numpy(), name, table)
        table.columns[name] = values
    return table


def _present(columns: Iterable[str], names: list[str]) -> None:
    """A DataError naming the first of ``names`` not among ``columns``."""
    absent = [name for name in names if name not in columns]
    if absent:
        raise DataError(f"Column {absent[0]!r} used in training is missing from the data; "
                        "pass the same feature columns as in training.")


def missing_mask(values: np.ndarray) -> np.ndarray | None:
    """Where ``values`` are missing (NaN or None); None for a dtype that cannot miss values."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.fromiter((value is None or value != value for value in values.tolist()), bool, len(values))
    return None


def _complete(missing: np.ndarray | None, name: str, table: Table) -> None:
    """A DataError if column ``name`` of ``table`` misses values where ``missing`` holds."""
    if missing is not None and missing.any():
        raise DataError(f"Column {name!r} has missing values in {first_row(missing, table)}; "
                        "drop or impute them first.")


@dataclass(frozen=True, eq=False)
class Dataset:
    """Raw features, original class labels and the kind of every feature column.

    ``kinds`` maps each feature column to ``"binary"`` (values in {0, 1}),
    ``"numeric"`` or ``"categorical"``. Build one with :func:`from_dataframe`,
    :func:`~odtk.datasets.csv_files.from_csv` or :func:`~odtk.datasets.load_dataset`.
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
    import pandas as pd

    declared = set(categorical)
    kinds = {}
    for name in features.columns:
        column = features[name]
        if name in declared or not pd.api.types.is_numeric_dtype(column):
            kinds[name] = "categorical"
        elif _zero_one(column):
            kinds[name] = "binary"
        else:
            kinds[name] = "numeric"
    return kinds


def _zero_one(column: pd.Series) -> bool:
    """Whether every value of a numeric column is 0 or 1."""
    values = column.to_numpy()
    if values.dtype.kind in "biuf":
        return bool(((values == 0) | (values == 1)).all())
    return bool(column.isin((0, 1)).all())


def preview_names(names: Iterable, limit: int = 5) -> str:
    """The first ``limit`` names, quoted and joined by commas (``...`` after them if there are more)."""
    names = [repr(str(n)) for n in names]
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _target_column(df: pd.DataFrame, target: Hashable) -> Hashable:
    if target in df.columns:
        return target
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if -df.shape[1] <= target < df.shape[1]:
            return df.columns[int(target)]
        raise DataError(f"Target position {target} is out of range for {df.shape[1]} columns; "
                        f"use 0..{df.shape[1] - 1} or a negative position.")
    raise DataError(f"Target column {target!r} not found; available columns: {preview_names(df.columns)}. "
                    "Pass one of them as target.")


def _check_frame(df: pd.DataFrame, name: str) -> None:
    if df.columns.duplicated().any():
        dups = df.columns[df.columns.duplicated()].unique()
        raise DataError(f"Data '{name}' has duplicate column names {preview_names(dups)}; rename them to be unique.")
    if df.shape[1] == 0:
        raise DataError(f"Data '{name}' has no columns; it needs feature columns and a target column.")
    if len(df) == 0:
        raise DataError(f"Data '{name}' has no rows; provide at least one example per class.")
    missing = df.isna()
    if missing.to_numpy().any():
        j = int(missing.to_numpy().any(axis=0).nonzero()[0][0])
        raise DataError(f"Column {str(df.columns[j])!r} of '{name}' has missing values in "
                        f"{first_row(missing.iloc[:, j])}; drop those rows or impute the values first.")
    numeric = df.select_dtypes("number")
    if numeric.shape[1]:
        infinite = numeric.apply(np.isinf)
        if infinite.to_numpy().any():
            j = int(infinite.to_numpy().any(axis=0).nonzero()[0][0])
            raise DataError(f"Column {str(numeric.columns[j])!r} of '{name}' has infinite values in "
                            f"{first_row(infinite.iloc[:, j])}; drop those rows or replace the values (a "
                            "number beyond ±1.8e308 reads as infinite).")


def first_row(mask: Any, table: Table | None = None) -> str:
    """``"N rows (first: line L)"`` for the rows where ``mask`` holds: a boolean Series, its rows
    named by its index (the file line for :func:`~odtk.datasets.csv_files.read_csv` frames, else
    the row label), or a boolean array, its rows named by ``table``'s labels (by position without
    them)."""
    if hasattr(mask, "index"):
        table, mask = Table({}, len(mask), mask.index, mask.index.name or "row"), mask.to_numpy()
    mask = np.asarray(mask, dtype=bool)
    first = int(np.argmax(mask))
    label = first if table is None or table.labels is None else table.labels[first]
    count = int(mask.sum())
    return f"{count} row{'s' * (count != 1)} (first: {'row' if table is None else table.label_name} {label})"


def from_dataframe(df: pd.DataFrame, target: Hashable, *, categorical: Iterable[Hashable] | None = None,
                   name: str = "dataframe") -> Dataset:
    """Validate ``df`` and split it into features and target.

    ``target`` is a column name or, if it is an int that is not a column name, a
    position (negative allowed). Columns in ``categorical`` and non-numeric columns
    are categorical; numeric 0/1 columns are binary; other numeric columns numeric.
    Feature names are converted to strings; boolean columns to 0/1. A column of dates or times,
    or of ISO dates as text not declared categorical, is refused with the fix
    (:func:`~odtk.datasets.dates.check_dates`).
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise DataError(f"Expected a pandas DataFrame, got {type(df).__name__}; wrap the data in pd.DataFrame.")
    _check_frame(df, name)
    target_name = _target_column(df, target)
    categorical = [] if categorical is None else list(categorical)
    unknown = [c for c in categorical if c not in df.columns or c == target_name]
    if unknown:
        raise DataError(f"Categorical column(s) {preview_names(unknown)} are not feature columns of '{name}'; "
                        f"available: {preview_names(df.columns.drop([target_name]))}.")
    features = df.drop(columns=[target_name]).reset_index(drop=True)
    if features.shape[1] == 0:
        raise DataError(f"Data '{name}' has no feature columns besides the target {str(target_name)!r}; "
                        "add at least one feature column.")
    check_dates(features, f"'{name}'", [column for column in features.columns if column not in categorical])
    for column in features.select_dtypes("bool").columns:
        features[column] = features[column].astype(np.int64)
    labels = df[target_name].reset_index(drop=True)
    if labels.nunique() < 2:
        raise DataError(f"Target {str(target_name)!r} of '{name}' has a single class; a classifier needs "
                        "at least two classes: check that the target is the class column, or add rows of "
                        "another class.")
    if labels.nunique() == len(labels) > UNIQUE_TARGET_ROWS:  # an identifier or a measurement
        raise DataError(f"Target {str(target_name)!r} of '{name}' has a different value in each of its "
                        f"{len(labels)} rows, like an identifier or a measured quantity; choose the column "
                        "that holds the classes as target, or group the values into a few classes first.")
    kinds = infer_kinds(features, categorical)
    features.columns = [str(c) for c in features.columns]
    if features.columns.duplicated().any():
        raise DataError(f"Column names of '{name}' collide once converted to strings; rename them to be unique.")
    return Dataset(name, features, labels, {str(c): k for c, k in kinds.items()})
