"""``X`` and ``y`` as scikit-learn accepts them, for :func:`odtk.solve` and the estimators.

``X``: a DataFrame, a 2-D array or a scipy sparse matrix (made dense when that fits in memory);
``y``: a 1-D array or Series, or one column (an ``(n, 1)`` array or a one-column DataFrame, with
scikit-learn's ``DataConversionWarning``). Messages name ``X`` and ``y``.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from odtk.datasets.adapters import Dataset, first_row, from_dataframe
from odtk.datasets.dates import check_dates
from odtk.exceptions import DataError


def from_arrays(X: Any, y: Any, categorical: Iterable[Hashable] | None = None) -> Dataset:
    """The :class:`Dataset` ``arrays`` of features ``X`` and labels ``y``.

    Parameters
    ----------
    X : DataFrame, array-like of shape (n, m) or scipy sparse matrix
        Features; an array's columns are named ``x0``, ``x1``, …
    y : array-like of shape (n,) or (n, 1)
        Class labels.
    categorical : iterable, optional
        Columns of ``X`` to treat as categorical although their values are numbers.

    Returns
    -------
    Dataset
        Validated as :func:`~odtk.datasets.from_dataframe` does; its target is named ``y``
        (``y_`` … if ``X`` has a column ``y``).
    """
    frame = _frame(features(X))
    if y is None:
        raise DataError("y is None; pass the class labels as y, one per row of X.")
    y = labels(y)
    if len(frame) != len(y):
        raise DataError(f"X has {len(frame)} rows but y has {len(y)} labels; they must match.")
    declared = [] if categorical is None else list(categorical)
    check_dates(frame, "X", [column for column in frame.columns if column not in declared])
    target = "y"
    while target in frame.columns:
        target += "_"
    dataset = from_dataframe(frame.assign(**{target: y}), target, categorical=declared, name="X")
    return replace(dataset, name="arrays")


def features(X: Any) -> Any:
    """``X`` as given, or dense if sparse; a DataError if it has no columns or a column of dates.

    Parameters
    ----------
    X : DataFrame, array-like or scipy sparse matrix
        Features as a user passes them.

    Returns
    -------
    DataFrame or array-like
        ``X`` itself, or a sparse ``X`` as a dense array.
    """
    if sparse.issparse(X):
        X = dense(X)
    shape = _shape(X)
    if len(shape) == 2 and shape[1] == 0:
        raise DataError(f"X has no columns: 0 feature(s) (shape={shape}) while a minimum of 1 is required; "
                        "pass at least one feature column.")
    if isinstance(X, pd.DataFrame):
        check_dates(X, "X")
    return X


def dense(X: sparse.sparray | sparse.spmatrix) -> np.ndarray:
    """A sparse ``X`` as a dense array, or a DataError if that would take more than half the free
    memory (the bound the encoding stage keeps, :func:`odtk.pipeline.encode.check_encoding_size`).

    Parameters
    ----------
    X : scipy sparse matrix or array
        Two-dimensional.

    Returns
    -------
    numpy.ndarray
        The same values, zeros included.
    """
    from odtk.pipeline.encode import free_memory, gigabytes  # the stage that owns the memory bound

    rows, columns = X.shape
    needed = rows * columns * X.dtype.itemsize
    free = free_memory()
    if free is not None and needed > free / 2:
        raise DataError(f"X is a sparse matrix of {rows:,} × {columns:,} values; odtk learns on dense data, which "
                        f"would take {gigabytes(needed)}, more than half the {gigabytes(free)} of free memory; "
                        "pass a sample of the rows or fewer columns.")
    return X.toarray()


def labels(y: Any) -> Any:
    """``y`` as one label per row: a column (``(n, 1)``) made 1-D with scikit-learn's
    ``DataConversionWarning``; a DataError for more columns or a missing label.

    Parameters
    ----------
    y : array-like of shape (n,) or (n, 1)
        Class labels as a user passes them.

    Returns
    -------
    array-like of shape (n,)
        ``y`` itself if 1-D, else its one column as an array.
    """
    shape = _shape(y)
    if len(shape) == 2 and shape[1] == 1:
        from sklearn.utils.validation import column_or_1d  # scikit-learn's warning, only when needed

        y = column_or_1d(y, warn=True)
    elif len(shape) != 1:
        raise DataError(f"y must hold one class label per row; got shape {shape}. Pass one column of labels "
                        "(e.g. df['label'] or y.ravel()).")
    missing = pd.isna(np.asarray(y))
    if missing.any():
        where = pd.Series(missing, index=y.index if isinstance(y, pd.Series) else None)
        raise DataError(f"y has missing labels in {first_row(where)}; drop those rows or fill in their labels.")
    return y


def _frame(X: Any) -> pd.DataFrame:
    """``X`` as a DataFrame: itself, or a 2-D array's columns named ``x0``, ``x1``, …"""
    if isinstance(X, pd.DataFrame):
        return X
    values = np.asarray(X)
    if values.ndim != 2:
        raise DataError(f"X must be 2-D (rows × features); got shape {values.shape}. Pass X.reshape(-1, 1) "
                        "for a single feature.")
    return pd.DataFrame(values, columns=[f"x{j}" for j in range(values.shape[1])])


def _shape(values: Any) -> tuple[int, ...]:
    """The shape of an array-like (a list as numpy reads it)."""
    return tuple(values.shape) if hasattr(values, "shape") else np.asarray(values).shape
