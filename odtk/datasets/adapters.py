"""The :class:`Dataset` container, adapters from DataFrames and CSV files, and :class:`Table`:
named columns read without pandas, which a trained model predicts on."""
from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
import re
import sys
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.exceptions import DataError
from odtk.files import read_regular

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("binary", "numeric", "categorical")
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
BLANK = " \t\r\n"  # a line of only these (but the separator) is blank: pandas skips it
DELIMITERS = ",;\t| "  # the separators read_csv detects
BOOLEANS = {text: value for value in (True, False) for text in (str(value), str(value).upper(), str(value).lower())}
# the values a CSV reader takes as missing (pandas' defaults)
MISSING = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
BULK_CHARACTERS = 4 * 2**20  # files from this size are split by pandas' C parser when plain (see read_table)
PLAIN_NUMBER = frozenset("0123456789+-.eE \t")  # the characters of a number written without words
NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?)\s*", re.IGNORECASE | re.ASCII)
# a target with a different value in every one of more rows than this is refused: an identifier or
# a measured quantity chosen by mistake (a toy set may well have one row per class)
UNIQUE_TARGET_ROWS = 10
MAX_COLUMNS = 10_000  # each column is a feature of the model; reading takes about 1 ms per column
MAX_VALUES = 20_000_000  # rows × columns; a value read as text takes some 60 bytes of memory
SNIFF_CHARS = 2**16  # the separator is detected in the header's first characters


@dataclass(frozen=True, eq=False)
class Table:
    """Rows as named 1-D numpy arrays of equal length, held without pandas.

    :func:`read_table` returns one; a fitted encoder and a trained model read rows from it, from
    a DataFrame, a mapping of names to values or a 2-D array. ``labels`` names each row in
    messages (a CSV file's lines, a frame's index; positions when None) and ``label_name`` says
    what a label is (``line``, ``row``).
    """

    columns: dict[str, np.ndarray]
    n_rows: int
    labels: Any = None
    label_name: str = "row"

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


def as_table(data: Any, names: list[str]) -> Table:
    """The columns ``names`` of ``data`` — a :class:`Table`, a DataFrame, a :class:`Dataset`, a
    mapping of names to values, or a 2-D array whose columns are ``names`` in order — each
    present and without missing values (else a one-line DataError)."""
    if isinstance(data, Dataset):
        data = data.features
    if is_frame(data):
        return _frame_table(data, names)
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
    for name in names:
        _complete(missing_mask(table.columns[name]), name, table)
    return Table({name: table.columns[name] for name in names}, table.n_rows, table.labels, table.label_name)


def is_frame(data: Any) -> bool:
    """Whether ``data`` is a pandas DataFrame (without importing pandas)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


def _frame_table(frame: pd.DataFrame, names: list[str]) -> Table:
    """The columns ``names`` of a DataFrame (renamed to text) as a Table labelled by its index."""
    frame = frame.rename(columns=str) if not all(isinstance(c, str) for c in frame.columns) else frame
    _present(frame.columns, names)
    table = Table({}, len(frame), frame.index, frame.index.name or "row")
    for name in names:
        column = frame[name]
        values = column.to_numpy()
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


def first_row(mask: Any, table: Table | None = None) -> str:
    """``"N rows (first: line L)"`` for the rows where ``mask`` holds: a boolean Series, its rows
    named by its index (the file line for :func:`read_csv` frames, else the row label), or a
    boolean array, its rows named by ``table``'s labels (by position without them)."""
    if hasattr(mask, "index"):
        table, mask = Table({}, len(mask), mask.index, mask.index.name or "row"), mask.to_numpy()
    mask = np.asarray(mask, dtype=bool)
    first = int(np.argmax(mask))
    label = first if table is None or table.labels is None else table.labels[first]
    return f"{int(mask.sum())} rows (first: {'row' if table is None else table.label_name} {label})"


def from_dataframe(df: pd.DataFrame, target: Hashable, *, categorical: Iterable[Hashable] | None = None,
                   name: str = "dataframe") -> Dataset:
    """Validate ``df`` and split it into features and target.

    ``target`` is a column name or, if it is an int that is not a column name, a
    position (negative allowed). Columns in ``categorical`` and non-numeric columns
    are categorical; numeric 0/1 columns are binary; other numeric columns numeric.
    Feature names are converted to strings; boolean columns to 0/1.
    """
    import pandas as pd

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


def _rows(text: str, sep: str, path: Path) -> tuple[list[str], list[list[str]], list[int]]:
    """The header, the data rows (lists of fields; blank lines dropped) of the CSV ``text`` and
    the line of ``text`` on which each data row starts.

    Refuses unnamed and duplicate column names and rows whose number of fields differs from
    the header's.
    """
    lines = io.StringIO(text, newline="").readlines()
    reader = csv.reader(_narrow(lines, sep, path), delimiter=sep, strict=True)
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # a field may be the whole file
    header, rows, starts, end, blank = None, [], [], 0, BLANK.replace(sep, "")
    try:
        for fields in reader:
            start, end = end + 1, reader.line_num
            if start == end and not lines[start - 1].strip(blank):
                continue
            if header is None:
                header = _named(fields, path)
            elif len(fields) != len(header):
                raise DataError(f"Cannot parse CSV file '{path}': line {start} has {len(fields)} fields but "
                                f"the header has {len(header)}; give every row one value per column and "
                                f"quote values that contain {sep!r}.")
            else:
                rows.append(fields)
                starts.append(start)
    except csv.Error as exc:
        raise DataError(f"Cannot parse CSV file '{path}' at line {reader.line_num} ({exc}); check the "
                        "quoting: a value with a separator, quote or line break must be in double quotes, "
                        "with its quotes doubled.") from None
    finally:
        csv.field_size_limit(limit)
    if header is None:
        raise DataError(f"CSV file '{path}' has no header row; it needs a header row and data rows.")
    return header, rows, starts


def _named(header: list[str], path: Path) -> list[str]:
    """The header, if every column has a name of its own; else a DataError."""
    unnamed = [k for k, name in enumerate(header, 1) if not name.strip(BLANK)]
    if unnamed:
        raise DataError(f"CSV file '{path}' has no name for column {unnamed[0]} of its header (a "
                        "saved row index?); name every column, or save the data without the "
                        "index (to_csv(index=False)).")
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise DataError(f"CSV file '{path}' has duplicate column names {_preview(duplicates)}; "
                        "rename them to be unique.")
    return header


def read_table(path: str | os.PathLike, sep: str | None = None) -> Table:
    """Read a CSV file with a header row into a :class:`Table` (no pandas); ``sep=None`` detects
    the separator (comma if unsure).

    Values are kept as written: a column is numeric (int64, or float64) only if every value
    is a number in decimal or scientific notation (or ``inf``) and no two different texts are
    the same number (class labels ``01`` and ``1`` stay two classes), boolean if every value is
    True or False (any case), else text. Empty fields and pandas' missing-value words (``NA``,
    ``nan``, ``NULL``, …) are missing: NaN, or None in a text column.

    The file is UTF-8, or UTF-8 / UTF-16 with a byte-order mark, and may be gzip-compressed.
    The table's labels are the line of the file on which each row starts (``label_name``
    ``line``), so errors can point at it. Every reading problem, ragged rows and duplicate
    column names become a one-line :class:`DataError`.
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
    bulk = _bulk_table(text, sep, path)
    if bulk is not None:
        return bulk
    header, rows, lines = _rows(text, sep, path)
    fields = list(zip(*rows)) if rows else [()] * len(header)
    return Table({name: _typed(column) for name, column in zip(header, fields)}, len(rows),
                 np.asarray(lines, dtype=np.int64), "line")


def _bulk_table(text: str, sep: str, path: Path) -> Table | None:
    """A large plain CSV (no quotes, no blank or ragged lines) read by pandas' C parser: columns
    of decimals are numbers at once, whole-number columns are checked as :func:`read_table`
    checks them (``01`` and ``1`` stay two labels), others are typed from their text. None for a
    small file or one that is not plain, which the careful reader then reads or refuses."""
    if (len(text) < BULK_CHARACTERS or '"' in text or "\r" in text or "\n\n" in text or text[0] == "\n"
            or _header(text).count(sep) >= MAX_COLUMNS):  # too wide: the careful reader refuses it line by line
        return None
    import pandas as pd

    header = _named(next(csv.reader([_header(text)], delimiter=sep)), path)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, na_filter=False, engine="c")
    except (ValueError, pd.errors.ParserError):
        return None
    if list(frame.columns) != header or frame.isna().to_numpy().any():
        return None
    checked = [name for name in header if frame[name].dtype.kind not in "fb"]
    texts = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, na_filter=False, usecols=checked) if checked else {}
    columns = {name: _typed(tuple(texts[name])) if name in checked else frame[name].to_numpy() for name in header}
    return Table(columns, len(frame), np.arange(2, len(frame) + 2, dtype=np.int64), "line")


def read_csv(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV file as :func:`read_table` does, into a DataFrame whose index holds the line
    of the file on which each row starts (named ``line``)."""
    return read_table(path, sep).to_frame()


def _typed(texts: tuple[str, ...]) -> np.ndarray:
    """A column read as text (see :func:`read_table`): numbers, booleans, else the text, with
    NaN where a value is missing."""
    if texts and (numbers := _numbers(texts)) is not None and len(np.unique(numbers)) == len(set(texts)):
        return numbers  # the usual column: every value a number, none missing
    missing = np.fromiter((text in MISSING for text in texts), bool, len(texts))
    present = [text for text, gone in zip(texts, missing.tolist()) if not gone]
    if present and all(text in BOOLEANS for text in present):
        flags = [BOOLEANS[text] for text in present]
        return _spread(flags, missing) if missing.any() else np.array(flags, dtype=bool)
    if not texts:
        return np.array([], dtype=str)
    numbers = _numbers(present)
    if numbers is None or len(np.unique(numbers)) != len(set(present)):
        return _spread(present, missing)
    return _spread(numbers, missing, np.float64) if missing.any() else numbers


def _spread(values: Any, missing: np.ndarray, dtype: Any = object) -> np.ndarray:
    """``values`` where ``missing`` does not hold, NaN where it does."""
    out = np.full(len(missing), np.nan, dtype=dtype)
    out[~missing] = values
    return out


def _numbers(texts: Sequence[str]) -> np.ndarray | None:
    """``texts`` as int64 (all whole numbers that fit), else float64; None if one is not a number."""
    characters = set("".join(texts))
    if not characters <= PLAIN_NUMBER and not all(NUMBER.fullmatch(text) for text in texts):
        return None
    try:
        whole = characters <= PLAIN_NUMBER - set(".eE")
        for dtype in (np.int64, np.uint64) if whole and "-" not in characters else (np.int64,) if whole else ():
            with contextlib.suppress(OverflowError, ValueError):
                return np.array(texts, dtype=dtype)
        return np.array(texts, dtype=np.float64)
    except ValueError:  # misplaced signs or points: "1-2", "."
        return None


def from_csv(path: str | os.PathLike, target: Hashable, *, sep: str | None = None,
             categorical: Iterable[Hashable] | None = None, name: str | None = None) -> Dataset:
    """Read a CSV file (see :func:`read_csv`) and validate it as a :class:`Dataset`.

    ``name`` defaults to the file stem.
    """
    df = read_csv(path, sep)
    return from_dataframe(df, target, categorical=categorical, name=name or Path(path).stem)
