"""Columns of dates or times, refused in training data with the fix: odtk splits numbers and
one-hot encodes categories, and a date is neither until the user says which it is."""
from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING

from odtk.exceptions import DataError

if TYPE_CHECKING:  # pandas is imported where frames are checked: predicting from a CSV needs none
    import pandas as pd

# what pandas.api.types.infer_dtype calls a column of dates, times or durations
TEMPORAL = frozenset({"datetime64", "datetime", "date", "timedelta", "timedelta64", "time", "period"})
ISO_DATE = re.compile(r"\s*\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?\s*")
TO_NUMBERS = "convert it to numbers (e.g. days since a start date) or drop it"


def check_dates(frame: pd.DataFrame, source: str, text_columns: Collection = ()) -> None:
    """A DataError naming the first column of ``frame`` that holds dates or times (a datetime,
    timedelta or period dtype, or date objects), or, among ``text_columns``, ISO dates as text.

    Parameters
    ----------
    frame : pandas.DataFrame
        Feature columns.
    source : str
        How messages name the data (``X``, ``'file'``).
    text_columns : collection
        The columns whose text is checked for dates (those not declared categorical).
    """
    import pandas as pd

    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "biuf":
            continue
        kind = pd.api.types.infer_dtype(column, skipna=True)
        if kind in TEMPORAL:
            raise DataError(f"Column {str(name)!r} of {source} holds dates or times ({column.dtype}), which "
                            f"odtk cannot split on; {TO_NUMBERS}.")
        if name in text_columns and kind == "string" and _iso_dates(column):
            raise DataError(f"Column {str(name)!r} of {source} holds dates as text (e.g. "
                            f"{column.dropna().iloc[0]!r}), which odtk would read as unordered categories; "
                            f"{TO_NUMBERS}, or declare it categorical to use each date as a category "
                            f"(--categorical {name}; categorical=[{str(name)!r}] in from_csv, from_dataframe "
                            "and CategoricalTreeClassifier).")


def _iso_dates(column: pd.Series) -> bool:
    """Whether every present value of a text column is an ISO 8601 date (with or without a time)."""
    values = column.dropna().unique()
    return len(values) > 0 and all(ISO_DATE.fullmatch(value) for value in values)
