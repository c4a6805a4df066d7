"""The bundled benchmark datasets: catalog, name resolution and loading.

The catalog (``data/catalog.csv``) records how to read each file and its shape,
so :func:`list_datasets` does not open the data files. Two of its columns name what
a file leaves numbered, both space-separated ``old=new`` pairs applied at load:
``rename`` renames columns (``3=petal_width``; ``0_*=buying_*`` renames every column
starting with ``0_``, keeping the rest of its name) and ``class_names`` names the
class labels (``0=setosa``). ``target`` is the class column's name after renaming.
"""
from __future__ import annotations

import csv
import difflib
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING

from odtk.exceptions import DataError

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

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
    rename: dict[str, str]  # old=new; a key ending in "*" renames every column with that prefix
    class_names: dict[str, str]  # label (as text) -> class name


def data_dir() -> Traversable:
    """The directory holding the bundled data files."""
    return files("odtk.datasets") / "data"


def _pairs(text: str, name: str, column: str) -> dict[str, str]:
    """The ``old=new`` pairs of a catalog cell (space-separated; names hold no spaces)."""
    pairs = {}
    for pair in text.split():
        old, equals, new = pair.partition("=")
        if not equals or not old or not new or "=" in new or old in pairs:
            raise ValueError(f"catalog.csv, {name}: bad {column} pair {pair!r}")
        if column == "rename" and old.endswith("*") != new.endswith("*"):
            raise ValueError(f"catalog.csv, {name}: prefix rename {pair!r} needs '*' on both sides")
        pairs[old] = new
    return pairs


def _entry(row: dict[str, str]) -> _Entry:
    info = DatasetInfo(row["name"], row["collection"], row["path"], int(row["n_rows"]),
                       int(row["n_features"]), int(row["n_classes"]), row["kind"], row["description"])
    return _Entry(info, row["sep"], row["header"] == "yes", row["target"], row["categorical"] == "yes",
                  _pairs(row["rename"], row["name"], "rename"), _pairs(row["class_names"], row["name"], "class_names"))


@lru_cache(maxsize=1)
def _catalog() -> dict[str, _Entry]:
    # typeshed's Traversable.open omits newline, which the paths of files() pass on to open().
    with (data_dir() / "catalog.csv").open(encoding="utf-8", newline="") as handle:  # type: ignore[call-overload]
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
    frame.columns = _renamed([str(c) for c in frame.columns], entry.rename)
    return frame


def _renamed(columns: list[str], rename: dict[str, str]) -> list[str]:
    """``columns`` renamed by ``rename``: exact names first, then ``prefix*=new*`` rules."""
    prefixes = [(old[:-1], new[:-1]) for old, new in rename.items() if old.endswith("*")]
    out = []
    for column in columns:
        if column in rename:
            column = rename[column]
        else:
            column = next((new + column[len(old):] for old, new in prefixes if column.startswith(old)), column)
        out.append(column)
    return out


def load_dataset(name: str) -> Dataset:
    """Load a bundled dataset by canonical (``flowoct/monk1``) or unique bare name (``anneal``).

    Class labels stored as integral floats (``1.0``) are returned as integers, or as the class
    names the catalog gives them (``uci/iris``: setosa, versicolor, virginica).
    """
    import numpy as np
    import pandas as pd

    from odtk.datasets.adapters import from_dataframe

    entry = _catalog()[resolve_name(name)]
    frame = _read(entry)
    labels = frame[entry.target]
    if pd.api.types.is_float_dtype(labels) and np.array_equal(labels, labels.round()):
        frame[entry.target] = labels = labels.astype(np.int64)
    if entry.class_names:
        names = labels.astype(str).map(entry.class_names)
        if names.isna().any():
            unnamed = sorted(set(labels[names.isna()].astype(str)))
            raise DataError(f"catalog.csv gives {entry.info.name} no class name for labels {', '.join(unnamed)}.")
        frame[entry.target] = names
    categorical = frame.columns.drop(entry.target) if entry.categorical else None
    return from_dataframe(frame, entry.target, categorical=categorical, name=entry.info.name)
