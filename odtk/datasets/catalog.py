"""The bundled benchmark datasets: catalog, name resolution and loading.

The catalog (``data/catalog.csv``) records how to read each file and its shape,
so :func:`list_datasets` does not open the data files.
"""
from __future__ import annotations

import csv
import difflib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING

from odtk.exceptions import DataError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import pandas as pd

    from odtk.datasets.adapters import Dataset

SEPARATORS = {"comma": ",", "semicolon": ";", "space": r"\s+"}


@dataclass(frozen=True)
class DatasetInfo:
    """Summary of a bundled dataset; ``path`` is relative to the data directory."""

    name: str
    collection: str
    path: str
    n_rows: int
    n_features: int
    n_classes: int
    kind: str
    description: str


@dataclass(frozen=True)
class _Entry:
    """How to read one bundled file."""

    info: DatasetInfo
    sep: str
    header: bool
    target: str
    categorical: bool
    rename: dict[str, str]


def data_dir() -> Traversable:
    """The directory holding the bundled data files."""
    return files("odtk.datasets") / "data"


def _entry(row: dict[str, str]) -> _Entry:
    info = DatasetInfo(row["name"], row["collection"], row["path"], int(row["n_rows"]),
                       int(row["n_features"]), int(row["n_classes"]), row["kind"], row["description"])
    rename = dict(pair.split("=") for pair in row["rename"].split()) if row["rename"] else {}
    return _Entry(info, row["sep"], row["header"] == "yes", row["target"], row["categorical"] == "yes", rename)


@lru_cache(maxsize=1)
def _catalog() -> dict[str, _Entry]:
    with (data_dir() / "catalog.csv").open(encoding="utf-8", newline="") as handle:
        return {row["name"]: _entry(row) for row in csv.DictReader(handle)}


def list_datasets() -> list[DatasetInfo]:
    """Every bundled dataset, in catalog order."""
    return [entry.info for entry in _catalog().values()]


def resolve_name(name: str) -> str:
    """Canonical ``collection/name`` for ``name``; a bare name must be unique."""
    catalog = _catalog()
    key = str(name).strip().lower().replace("_", "-")
    if key in catalog:
        return key
    candidates = [full for full in catalog if full.split("/", 1)[1] == key]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise DataError(f"Dataset name '{name}' is ambiguous; use one of: {', '.join(candidates)}.")
    bare = {full.split("/", 1)[1] for full in catalog}
    close = difflib.get_close_matches(key, [*catalog, *sorted(bare)], n=5, cutoff=0.6)
    hint = f"close matches: {', '.join(close)}" if close else "no close matches"
    raise DataError(f"Unknown dataset '{name}'. Run `odtk datasets` to list them; {hint}.")


def _read(entry: _Entry) -> pd.DataFrame:
    import pandas as pd

    path = entry.info.path
    with (data_dir() / path).open("rb") as handle:
        frame = pd.read_csv(handle, sep=SEPARATORS[entry.sep], header=0 if entry.header else None,
                            encoding="utf-8-sig", compression="gzip" if path.endswith(".gz") else None)
    if not entry.header:
        frame.columns = ["class", *(f"f{j}" for j in range(frame.shape[1] - 1))]
    return frame.rename(columns=entry.rename)


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by canonical (``flowoct/monk1``) or unique bare name (``anneal``).

    Class labels stored as integral floats (``1.0``) are returned as integers.
    """
    import numpy as np
    import pandas as pd

    from odtk.datasets.adapters import from_dataframe

    entry = _catalog()[resolve_name(name)]
    frame = _read(entry)
    labels = frame[entry.target]
    if pd.api.types.is_float_dtype(labels) and np.array_equal(labels, labels.round()):
        frame[entry.target] = labels.astype(np.int64)
    categorical = frame.columns.drop(entry.target) if entry.categorical else None
    return from_dataframe(frame, entry.target, categorical=categorical, name=entry.info.name)
