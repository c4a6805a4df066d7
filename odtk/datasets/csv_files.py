"""CSV files split by ``pandas.read_csv`` (C parser): :func:`read_table` into a
:class:`~odtk.datasets.adapters.Table`, :func:`read_csv` into a DataFrame and :func:`from_csv` into
a validated :class:`~odtk.datasets.adapters.Dataset`.

The text is decoded (UTF-8, or UTF-8 / UTF-16 with a byte-order mark), its separator detected,
its size, width and quoting checked before pandas splits it. pandas' numbers and booleans are
kept where texts cannot matter; other columns are typed from their distinct texts (numbers,
booleans, else text, with pandas' missing-value words missing). Ragged rows and each row's line
come from counts, or from a vectorised scan of the bytes when the file has quotes, blank lines
or short rows. Every reading problem is a one-line :class:`~odtk.exceptions.DataError`.
"""
from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
import re
import warnings
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.datasets.adapters import Dataset, Table, from_dataframe, preview_names
from odtk.datasets.encoders import MAX_CATEGORIES
from odtk.exceptions import DataError, OdtkWarning
from odtk.files import read_regular
from odtk.warn import warn

if TYPE_CHECKING:
    import pandas as pd

BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
BLANK = " \t\r\n"  # a line of only these (but the separator) is blank: pandas skips it
NON_BLANK = re.compile(r"[^ \t\r\n]")
DELIMITERS = ",;\t| "  # the separators read_csv detects
BOOLEANS = {text: value for value in (True, False) for text in (str(value), str(value).upper(), str(value).lower())}
# the values a CSV reader takes as missing (pandas' defaults)
MISSING = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
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


def _header(text: str) -> tuple[int, str]:
    """The first non-blank line of ``text`` and its number."""
    first = NON_BLANK.search(text)
    start = max(text.rfind("\n", 0, first.start()), text.rfind("\r", 0, first.start())) + 1 if first else 0
    end = min((k for k in (text.find("\n", start), text.find("\r", start)) if k >= 0), default=len(text))
    before = text[:start]
    return before.count("\n") + before.count("\r") - before.count("\r\n") + 1, text[start:end]


def _separator(text: str) -> str:
    """The delimiter :class:`csv.Sniffer` finds in the first non-blank line; a comma if none."""
    try:
        return csv.Sniffer().sniff(_header(text)[1][:SNIFF_CHARS], delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def _check_size(text: str, sep: str, path: Path) -> None:
    """Refuses, before any line is split into values, a header of more than MAX_COLUMNS values
    and a file of more than MAX_VALUES values (lines × header columns)."""
    number, header = _header(text)
    _check_width(header.count(sep) + 1, number, path)
    lines, columns = text.count("\n") + 1, header.count(sep) + 1
    if lines * columns > MAX_VALUES:
        raise DataError(f"CSV file '{path}' has about {lines:,} lines of {columns:,} columns, more than the "
                        f"{MAX_VALUES:,} values odtk reads; take a sample of the rows or keep fewer columns.")


def _check_width(columns: int, line: int, path: Path) -> None:
    """Refuses line ``line`` if it holds more than MAX_COLUMNS values."""
    if columns > MAX_COLUMNS:
        raise DataError(f"CSV file '{path}' has {columns:,} columns on line {line}, more than the "
                        f"{MAX_COLUMNS:,} odtk reads; keep the columns that matter, as each is a feature of "
                        "the model.")


def _quoting_error(path: Path, line: int, problem: str) -> DataError:
    return DataError(f"Cannot parse CSV file '{path}' at line {line} ({problem}); check the quoting: a value "
                     "with a separator, quote or line break must be in double quotes, with its quotes doubled.")


def _records(text: bytes, sep: str, path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The line of ``text`` (UTF-8) on which each record (a line, or several joined by a quoted line
    break) starts, whether it is blank (pandas skips it) and its number of fields.

    Refuses quotes placed where pandas and the csv module would read them differently: a
    quote opens a value (after a separator or a line break) and closes it (before one),
    inside a quoted value it is doubled, and every quoted value ends.
    """
    data = np.frombuffer(text, np.uint8)
    quotes = np.flatnonzero(data == ord('"'))
    breaks = np.flatnonzero(data == ord("\n"))
    lone = np.flatnonzero(data == ord("\r"))
    lone = lone[np.append(data, 0)[lone + 1] != ord("\n")]  # old Mac line ends
    breaks = np.union1d(breaks, lone) if lone.size else breaks
    _check_quotes(data, quotes, breaks, sep, path)
    ends = breaks[np.searchsorted(quotes, breaks) % 2 == 0]  # line breaks outside quoted values
    starts = np.concatenate([[0], ends + 1])
    starts = starts[starts < len(data)]
    seps = np.flatnonzero(data == ord(sep))
    seps = seps[np.searchsorted(quotes, seps) % 2 == 0]
    fields = np.bincount(np.searchsorted(ends, seps), minlength=len(starts))[:len(starts)] + 1
    blank = BLANK.replace(sep, "").encode()
    maybe = np.flatnonzero(np.isin(data[starts], np.frombuffer(blank, np.uint8)))  # a blank record starts so
    stops = np.append(ends + 1, len(data))
    empty = np.zeros(len(starts), bool)
    empty[maybe] = [not data[starts[k]:stops[k]].tobytes().strip(blank) for k in maybe.tolist()]
    return np.searchsorted(breaks, starts) + 1, empty, fields


def _check_quotes(data: np.ndarray, quotes: np.ndarray, breaks: np.ndarray, sep: str, path: Path) -> None:
    """Refuses the first misplaced quote (see :func:`_records`), naming its line."""
    if not quotes.size:
        return
    edges = np.frombuffer(f"{sep}\n\r\"".encode(), np.uint8)
    padded = np.concatenate([[ord("\n")], data, [ord("\n")]])
    opening = np.arange(len(quotes)) % 2 == 0
    neighbour = np.where(opening, padded[quotes], padded[quotes + 2])  # before an opening, after a closing quote
    misplaced = np.flatnonzero(~np.isin(neighbour, edges))
    if misplaced.size:
        line = int(np.searchsorted(breaks, quotes[misplaced[0]])) + 1
        raise _quoting_error(path, line, "a quote inside a value that does not start with one"
                             if opening[misplaced[0]] else "a value goes on after its closing quote")
    if len(quotes) % 2:
        raise _quoting_error(path, int(np.searchsorted(breaks, quotes[-1])) + 1, "a quoted value never ends")


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


def _split(text: bytes, sep: str, path: Path) -> tuple[list[str], pd.DataFrame, np.ndarray]:
    """The header, the rows of ``text`` (UTF-8) as pandas' C parser reads them (columns numbered;
    blank lines skipped, every value kept as written but numbers and booleans) and the line on
    which each row starts; refuses rows with more or fewer fields than the header."""
    import pandas as pd

    plain = b'"' not in text and text.count(b"\r") == text.count(b"\r\n")
    records = None if plain else _records(text, sep, path)
    try:
        header = list(_read(text, sep, header=None, nrows=1, dtype=object).iloc[0])
        frame = _read(text, sep, header=0, names=range(len(_named(header, path))), index_col=False)
    except DataError:
        raise
    except pd.errors.ParserError as exc:
        raise _ragged(str(exc), records, sep, path) from None
    except (ValueError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"Cannot parse CSV file '{path}' ({exc}); save it as plain CSV with one header row.") \
            from None
    lines = text.count(b"\n") + (not text.endswith(b"\n"))
    if plain and lines == len(frame) + 1 and text.count(sep.encode()) == (len(header) - 1) * lines:
        return header, frame, np.arange(2, lines + 1, dtype=np.int64)  # no blank, short or quoted line
    starts, blank, fields = records if records is not None else _records(text, sep, path)
    starts, fields = starts[~blank], fields[~blank]
    if len(starts) != len(frame) + 1:
        raise _quoting_error(path, 1, "its records and pandas' rows disagree")
    short = np.flatnonzero(fields != len(header))
    if short.size:
        raise _ragged(f"Expected {len(header)} fields in line {starts[short[0]]}, saw {fields[short[0]]}", None,
                      sep, path)
    return header, frame, starts[1:].astype(np.int64)


def _read(text: bytes, sep: str, **options: Any) -> pd.DataFrame:
    """``pandas.read_csv`` of ``text`` (UTF-8) by the C parser, without turning words into missing
    values."""
    import pandas as pd

    with warnings.catch_warnings():  # fields beyond the header, which _split refuses as a ragged row
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        return pd.read_csv(io.BytesIO(text), sep=sep, na_filter=False, engine="c", skip_blank_lines=True,
                           **options)


def _texts(text: bytes, sep: str, frame: pd.DataFrame) -> dict[int, np.ndarray]:
    """The columns of ``frame`` typed from their texts by :func:`_typed`: those pandas reads as
    neither numbers nor booleans, and the numbers of at most MAX_CATEGORIES distinct values (class
    labels and categories, whose texts ``01`` and ``1`` stay apart), read as text again."""
    import pandas as pd

    texts: dict[int, np.ndarray] = {}
    again: list[int] = []
    for k in range(frame.shape[1]):  # the columns are numbered 0, 1, … (see _split)
        column = frame[k]
        if column.dtype.kind == "b" or (column.dtype.kind in "iuf" and len(pd.unique(column)) > MAX_CATEGORIES):
            continue  # pandas' booleans, or a numeric feature
        if column.dtype.kind not in "iuf" and pd.api.types.infer_dtype(column, skipna=False) == "string":
            texts[k] = column.to_numpy(dtype=object)
        else:  # few numbers, or integers beyond 64 bits, which pandas keeps as Python ints
            again.append(k)
    if again:
        read = _read(text, sep, header=0, names=frame.columns, index_col=False, usecols=again, dtype=object)
        texts.update({k: read[k].to_numpy(dtype=object) for k in again})
    return texts


def _ragged(message: str, records: tuple[np.ndarray, np.ndarray, np.ndarray] | None, sep: str,
            path: Path) -> DataError:
    """pandas' message on a row with more (or fewer) fields than the header as a one-line
    DataError, at the line of the file where the row starts (pandas counts the lines of a quoted
    value as one)."""
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if found is None:
        return _quoting_error(path, 1, message.removeprefix("Error tokenizing data. C error: ").strip())
    header, line, fields = map(int, found.groups())
    if records is not None:
        line = int(records[0][line - 1])
    _check_width(fields, line, path)
    return DataError(f"Cannot parse CSV file '{path}': line {line} has {fields} fields but the header has "
                     f"{header}; give every row one value per column and quote values that contain {sep!r}.")


def read_table(path: str | os.PathLike, sep: str | None = None) -> Table:
    """Read a CSV file with a header row into a :class:`Table`, split by pandas' C parser;
    ``sep=None`` detects the separator (comma if unsure).

    Values are kept as written: a column is numeric (int64, or float64) only if every value
    is a number in decimal or scientific notation (or ``inf``) and, when it holds at most
    ``MAX_CATEGORIES`` (1,000) distinct numbers, no two different texts are the same number
    (class labels ``01`` and ``1``, or ``1.0`` and ``1``, stay two classes; a column of more
    distinct numbers can only be a numeric feature), boolean if every value is ``True`` or
    ``False`` (or in upper or lower case), else text. Empty fields and pandas' missing-value
    words (``NA``, ``nan``, ``NULL``, …) are missing: NaN.

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
    if len(sep.encode()) != 1:
        raise DataError(f"The separator must be one ASCII character, got {sep!r}; pass e.g. ',', ';' or '|'.")
    _check_size(text, sep, path)
    data = text.encode()
    header, frame, lines = _split(data, sep, path)
    texts = {header[k]: values for k, values in _texts(data, sep, frame).items()}
    columns = {name: _typed(texts[name]) if name in texts else frame[k].to_numpy() for k, name in enumerate(header)}
    _read_thousands(columns, texts, path)
    return Table(columns, len(lines), lines, "line")


def read_csv(path: str | os.PathLike, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV file as :func:`read_table` does, into a DataFrame whose index holds the line
    of the file on which each row starts (named ``line``)."""
    return read_table(path, sep).to_frame()


def _typed(texts: np.ndarray) -> np.ndarray:
    """A column read as text (see :func:`read_table`): numbers, booleans, else the text, with
    NaN where a value is missing. Each distinct text is typed once."""
    import pandas as pd

    if not len(texts):
        return np.array([], dtype=str)
    codes, uniques = pd.factorize(texts)
    numbers = _numbers(uniques)
    if numbers is not None:  # the usual column: every value a number, none missing
        return numbers[codes] if len(pd.unique(numbers)) == len(uniques) else texts
    gone = pd.Index(uniques).isin(MISSING)
    missing = gone[codes] if gone.any() else None
    present = uniques[~gone]
    if present.size and pd.Index(present).isin(BOOLEANS).all():
        flags = np.array([BOOLEANS.get(text, False) for text in uniques])
        return flags[codes] if missing is None else _blank(flags.astype(object)[codes], missing)
    numbers = _numbers(present)
    if numbers is None or len(pd.unique(numbers)) != len(present):  # "01" and "1": two labels, as text
        return texts if missing is None else _blank(texts.copy(), missing)
    if missing is None:
        return numbers[codes]
    values = np.full(len(uniques), np.nan)
    values[~gone] = numbers
    return values[codes]


def _blank(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """``values`` with NaN where ``missing`` holds."""
    values[missing] = np.nan
    return values


def _read_thousands(columns: dict[str, np.ndarray], texts: dict[str, np.ndarray], path: Path) -> None:
    """Text columns of numbers with thousands separators (``"1,234"``, and plain numbers below
    1000) read as numbers in ``columns``, with a warning naming each, when the comma cannot be a
    decimal comma: a value of the column has a decimal point (``"1,234.5"``) or several groups
    (``"1,234,567"``), or another column has decimals with a point. Otherwise (``"1,500"`` may
    be 1.5) the column stays text, with a warning saying how to write it as numbers."""
    import pandas as pd

    for name, values in columns.items():
        if values.dtype.kind != "O":
            continue
        present = [text for text in pd.unique(texts[name]) if text not in MISSING]
        if not all(GROUPED.fullmatch(text) or BELOW_1000.fullmatch(text) for text in present) \
                or not any(map(GROUPED.fullmatch, present)):
            continue  # the first word ends the search
        example = next(text.strip() for text in present if GROUPED.fullmatch(text))
        numbers = _typed(np.array([text.replace(",", "") for text in texts[name]], dtype=object))
        if any("." in text or text.count(",") > 1 for text in present) or _decimal_point(columns, texts):
            if numbers.dtype.kind in "iuf":
                columns[name] = numbers
                warn(f"Column {name!r} of CSV file '{path}' is read as numbers written with thousands "
                     f"separators ({example!r} as {example.replace(',', '')}).", OdtkWarning)
        else:
            warn(f"Column {name!r} of CSV file '{path}' is read as text (categories): its values, such "
                 f"as {example!r}, may be numbers with thousands separators or with decimal commas; "
                 "write them without separators (1500, or 1.5) to use them as numbers.", OdtkWarning)


def _decimal_point(columns: dict[str, np.ndarray], texts: dict[str, np.ndarray]) -> bool:
    """Whether a float column of the file has decimals written with a point (a column without
    ``texts`` was read by pandas, whose decimal mark is the point)."""
    return any(values.dtype.kind == "f" and (name not in texts or any("." in text for text in texts[name]))
               for name, values in columns.items())


def _numbers(texts: Sequence[str] | np.ndarray) -> np.ndarray | None:
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
