"""The :class:`Dataset` container and adapters from DataFrames and CSV files."""
from __future__ import annotations

import codecs
import csv
import io
import os
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from odtk.exceptions import DataError
from odtk.files import read_regular

KINDS = ("binary", "numeric", "categorical")
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
BLANK = " \t\r\n"  # a line of only these (but the separator) is blank: pandas skips it
DELIMITERS = ",;\t| "  # the separators read_csv detects
BOOLEANS = {text: value for value in (True, False) for text in (str(value), str(value).upper(), str(value).lower())}
# a target with a different value in every one of more rows than this is refused: an identifier or
# a measured quantity chosen by mistake (a toy set may well have one row per class)
UNIQUE_TARGET_ROWS = 10
MAX_COLUMNS = 10_000  # each column is a feature of the model; reading takes about 1 ms per column
MAX_VALUES = 20_000_000  # rows × columns; a value read as text takes some 60 bytes of memory
SNIFF_CHARS = 2**16  # the separator is detected in the header's first characters


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


def first_row(mask: pd.Series) -> str:
    """``"N rows (first: line L)"`` for the rows where ``mask`` holds, named by the index
    (the file line for :func:`read_csv` frames, else the row label)."""
    return f"{int(mask.sum())} rows (first: {mask.index.name or 'row'} {mask.index[mask.to_numpy()][0]})"


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


def _decode(raw: bytes, path: Path) -> str:
    """The text of a CSV file: UTF-8, or UTF-8 / UTF-16 with a byte-order mark."""
    encoding = next((name for bom, name in BOMS if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].decode(encoding, errors="replace").count("\n") + 1
        raise DataError(f"CSV file '{path}' is not {encoding.removesuffix('-sig').upper()} text: byte "
                        f"0x{raw[exc.start]:02x} on line {line} cannot be decoded; save the file as UTF-8 "
                        "(e.g. 'CSV UTF-8' in a spreadsheet) and try again.") from None
    text = text.lstrip("\ufeff")  # byte-order marks written more than once, which pandas would skip
    if "\x00" in text:
        raise DataError(f"CSV file '{path}' contains NUL characters (UTF-16 without a byte-order mark, or "
                        "not a text file); save it as UTF-8 and try again.")
    return text


def _header(text: str) -> str:
    """The first non-blank line of ``text``."""
    return next(line for line in io.StringIO(text, newline="") if line.strip(BLANK))


def _separator(text: str) -> str:
    """The delimiter :class:`csv.Sniffer` finds in the first non-blank line; a comma if none."""
    try:
        return csv.Sniffer().sniff(_header(text)[:SNIFF_CHARS], delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def _check_size(text: str, sep: str, path: Path) -> None:
    """Refuses, before any line is split into values, a file of more than MAX_VALUES values
    (lines × header columns; a header too wide is refused line by line by :func:`_narrow`)."""
    lines, columns = text.count("\n") + 1, _header(text).count(sep) + 1
    if columns <= MAX_COLUMNS and lines * columns > MAX_VALUES:
        raise DataError(f"CSV file '{path}' has about {lines:,} lines of {columns:,} columns, more than the "
                        f"{MAX_VALUES:,} values odtk reads; take a sample of the rows or keep fewer columns.")


def _check_width(line: str, number: int, sep: str, path: Path) -> None:
    """Refuses line ``number`` if it holds more than MAX_COLUMNS values (by its separators)."""
    if line.count(sep) >= MAX_COLUMNS:
        raise DataError(f"CSV file '{path}' has {line.count(sep) + 1:,} columns on line {number}, more than the "
                        f"{MAX_COLUMNS:,} odtk reads; keep the columns that matter, as each is a feature of "
                        "the model.")


def _narrow(lines: list[str], sep: str, path: Path) -> Iterator[str]:
    """The ``lines``, each checked by :func:`_check_width` before the csv module splits it."""
    for number, line in enumerate(lines, 1):
        _check_width(line, number, sep, path)
        yield line


def _rows(text: str, sep: str, path: Path) -> tuple[str, list[int]]:
    """The CSV ``text`` rewritten with every field quoted and blank lines dropped, and the line of
    ``text`` on which each data row starts.

    The rewritten text gives pandas one unambiguous reading (the same values and types).
    Refuses duplicate column names (pandas would rename them) and rows whose number of
    fields differs from the header's (pandas would shift or pad them).
    """
    lines = io.StringIO(text, newline="").readlines()
    reader = csv.reader(_narrow(lines, sep, path), delimiter=sep, strict=True)
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # a field may be the whole file
    rewritten = io.StringIO()
    writer = csv.writer(rewritten, delimiter=sep, quoting=csv.QUOTE_ALL)
    header, starts, end, blank = None, [], 0, BLANK.replace(sep, "")
    try:
        for fields in reader:
            start, end = end + 1, reader.line_num
            if start == end and not lines[start - 1].strip(blank):
                continue
            if header is None:
                header = fields
                unnamed = [k for k, name in enumerate(fields, 1) if not name.strip(BLANK)]
                if unnamed:
                    raise DataError(f"CSV file '{path}' has no name for column {unnamed[0]} of its header (a "
                                    "saved row index?); name every column, or save the data without the "
                                    "index (to_csv(index=False)).")
                duplicates = sorted({name for name in fields if fields.count(name) > 1})
                if duplicates:
                    raise DataError(f"CSV file '{path}' has duplicate column names {_preview(duplicates)}; "
                                    "rename them to be unique.")
            elif len(fields) != len(header):
                raise DataError(f"Cannot parse CSV file '{path}': line {start} has {len(fields)} fields but "
                                f"the header has {len(header)}; give every row one value per column and "
                                f"quote values that contain {sep!r}.")
            else:
                starts.append(start)
            writer.writerow(fields)
    except csv.Error as exc:
        raise DataError(f"Cannot parse CSV file '{path}' at line {reader.line_num} ({exc}); check the "
                        "quoting: a value with a separator, quote or line break must be in double quotes, "
                        "with its quotes doubled.") from None
    finally:
        csv.field_size_limit(limit)
    return rewritten.getvalue(), starts


def read_csv(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV file with a header row; ``sep=None`` detects the separator (comma if unsure).

    Values are kept as written: a column is numeric only if every value is a number and no two
    different texts are the same number (class labels ``01`` and ``1`` stay two classes).

    The file is UTF-8, or UTF-8 / UTF-16 with a byte-order mark, and may be gzip-compressed. The frame's index holds the
    line of the file on which each row starts (named ``line``), so errors can point at it.
    Every reading problem, ragged rows and duplicate column names become a one-line :class:`DataError`.
    """
    path = Path(path)
    try:
        text = _decode(read_regular(path, "csv"), path)
    except FileNotFoundError:
        raise DataError(f"CSV file '{path}' not found; check the path.") from None
    except OSError as exc:
        raise DataError(f"Cannot read CSV file '{path}' ({exc.strerror}); check the path.") from None
    if not text.strip():
        raise DataError(f"CSV file '{path}' is empty; it needs a header row and data rows.")
    sep = sep or _separator(text)
    if len(sep) != 1:
        raise DataError(f"The separator must be one character, got {sep!r}; pass e.g. ',' or ';'.")
    _check_size(text, sep, path)
    rewritten, lines = _rows(text, sep, path)
    frame = pd.read_csv(io.StringIO(rewritten), sep=sep, dtype=str)
    frame = frame.apply(_typed)
    frame.index = pd.Index(lines, name="line")
    return frame


def _typed(column: pd.Series) -> pd.Series:
    """A column read as text, as numbers when every value is one and no two different texts
    are the same number (``01`` and ``1``, or integers beyond what a float tells apart stay
    text, as written), as booleans when every value is True or False; else the text."""
    present = column.dropna()
    if present.isin(BOOLEANS).all() and len(present):
        return column.map(BOOLEANS, na_action="ignore")
    numbers = pd.to_numeric(column, errors="coerce")
    if numbers.notna().sum() != len(present) or numbers.nunique() != present.nunique():
        return column
    return numbers


def from_csv(path: str | os.PathLike, target: Hashable, *, sep: str | None = None,
             categorical: Iterable[Hashable] | None = None, name: str | None = None) -> Dataset:
    """Read a CSV file (see :func:`read_csv`) and validate it as a :class:`Dataset`.

    ``name`` defaults to the file stem.
    """
    df = read_csv(path, sep)
    return from_dataframe(df, target, categorical=categorical, name=name or Path(path).stem)
