"""CSV files read without pandas: :func:`read_table` into a :class:`~odtk.datasets.adapters.Table`,
:func:`read_csv` into a DataFrame and :func:`from_csv` into a validated
:class:`~odtk.datasets.adapters.Dataset`.

The text is decoded (UTF-8, or UTF-8 / UTF-16 with a byte-order mark), its separator detected
and its size and width checked before any line is split; each column is then typed from its
text (numbers, booleans, else text, with pandas' missing-value words missing). Every reading
problem is a one-line :class:`~odtk.exceptions.DataError`.
"""
from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
import re
from collections.abc import Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.datasets.adapters import Dataset, Table, from_dataframe, preview_names
from odtk.exceptions import DataError, OdtkWarning
from odtk.files import read_regular
from odtk.warn import warn

if TYPE_CHECKING:
    import pandas as pd

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
MAX_COLUMNS = 10_000  # each column is a feature of the model; reading takes about 1 ms per column
MAX_VALUES = 20_000_000  # rows × columns; a value read as text takes some 60 bytes of memory
SNIFF_CHARS = 2**16  # the separator is detected in the header's first characters
GROUPED = re.compile(r"\s*-?\d{1,3}(,\d{3})+(\.\d+)?\s*")  # a number with thousands separators
BELOW_1000 = re.compile(r"\s*-?\d{1,3}(\.\d+)?\s*")  # written alike with or without them


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
        raise DataError(f"CSV file '{path}' has duplicate column names {preview_names(duplicates)}; "
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
    texts = dict(zip(header, zip(*rows) if rows else [()] * len(header)))
    columns = {name: _typed(column) for name, column in texts.items()}
    _read_thousands(columns, texts, path)
    return Table(columns, len(rows), np.asarray(lines, dtype=np.int64), "line")


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
    texts = {name: tuple(texts[name]) for name in checked}
    columns = {name: _typed(texts[name]) if name in checked else frame[name].to_numpy() for name in header}
    _read_thousands(columns, texts, path)
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


def _read_thousands(columns: dict[str, np.ndarray], texts: dict[str, Sequence[str]], path: Path) -> None:
    """Text columns of numbers with thousands separators (``"1,234"``, and plain numbers below
    1000) read as numbers in ``columns``, with a warning naming each, when the comma cannot be a
    decimal comma: a value of the column has a decimal point (``"1,234.5"``) or several groups
    (``"1,234,567"``), or another column has decimals with a point. Otherwise (``"1,500"`` may
    be 1.5) the column stays text, with a warning saying how to write it as numbers."""
    for name, values in columns.items():
        present = [text for text in texts.get(name, ()) if text not in MISSING]
        if values.dtype.kind != "O" or not all(GROUPED.fullmatch(text) or BELOW_1000.fullmatch(text)
                                               for text in present) or not any(map(GROUPED.fullmatch, present)):
            continue  # the first word ends the search
        example = next(text.strip() for text in present if GROUPED.fullmatch(text))
        numbers = _typed(tuple(text.replace(",", "") for text in texts[name]))
        if any("." in text or text.count(",") > 1 for text in present) or _decimal_point(columns, texts):
            if numbers.dtype.kind in "iuf":
                columns[name] = numbers
                warn(f"Column {name!r} of CSV file '{path}' is read as numbers written with thousands "
                     f"separators ({example!r} as {example.replace(',', '')}).", OdtkWarning)
        else:
            warn(f"Column {name!r} of CSV file '{path}' is read as text (categories): its values, such "
                 f"as {example!r}, may be numbers with thousands separators or with decimal commas; "
                 "write them without separators (1500, or 1.5) to use them as numbers.", OdtkWarning)


def _decimal_point(columns: dict[str, np.ndarray], texts: dict[str, Sequence[str]]) -> bool:
    """Whether a float column of the file has decimals written with a point (a column without
    ``texts`` was read by pandas' C parser, whose decimal mark is the point)."""
    return any(values.dtype.kind == "f" and (name not in texts or any("." in text for text in texts[name]))
               for name, values in columns.items())


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
