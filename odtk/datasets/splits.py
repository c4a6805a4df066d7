"""Seeded train / validation / test splits of a :class:`~odtk.datasets.Dataset`."""
from __future__ import annotations

import math

import numpy as np
from sklearn.model_selection import train_test_split

from odtk.datasets.adapters import Dataset
from odtk.exceptions import DataError


def _check_fractions(fractions: tuple[float, float, float]) -> tuple[float, float, float]:
    try:
        values = tuple(float(f) for f in fractions)
    except (TypeError, ValueError):
        values = ()
    if len(values) != 3 or values[0] <= 0 or min(values[1:]) < 0 or not math.isclose(sum(values), 1.0):
        raise DataError(f"fractions must be (train, validation, test) with train > 0, "
                        f"validation and test >= 0 and a sum of 1; got {fractions!r}.")
    return values


def _split(rows: np.ndarray, labels: np.ndarray, second: float, seed: int, stratify: bool) -> list[np.ndarray]:
    if stratify:
        try:
            return train_test_split(rows, test_size=second, random_state=seed, stratify=labels[rows])
        except ValueError:  # a class too rare to stratify: fall back to a plain split
            pass
    try:
        return train_test_split(rows, test_size=second, random_state=seed)
    except ValueError:
        raise DataError(f"{len(rows)} rows are too few for the requested split fractions; "
                        "use more data or larger fractions.") from None


def train_val_test_split(ds: Dataset, fractions: tuple[float, float, float] = (0.5, 0.25, 0.25), seed: int = 0,
                         stratify: bool = True) -> tuple[Dataset, Dataset, Dataset]:
    """Split ``ds`` into train, validation and test sets (deterministic for a given ``seed``).

    Splits are stratified by class when every class is frequent enough, else plain.
    A validation or test fraction of 0 gives an empty validation or test set
    (``(1, 0, 0)``: every row trains).
    """
    train, val, test = _check_fractions(fractions)
    labels = ds.target.to_numpy()
    if test == 0:
        rest, test_rows = np.arange(ds.n_rows), np.array([], dtype=int)
    else:
        rest, test_rows = _split(np.arange(ds.n_rows), labels, test, seed, stratify)
    if val == 0:
        train_rows, val_rows = rest, np.array([], dtype=int)
    else:
        train_rows, val_rows = _split(rest, labels, val / (train + val), seed, stratify)
    return ds.subset(np.sort(train_rows)), ds.subset(np.sort(val_rows)), ds.subset(np.sort(test_rows))
