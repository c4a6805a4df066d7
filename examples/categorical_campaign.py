"""The categorical paper's ODT solves as one ``odtk experiment`` campaign, and its datasets.

Not a script: ``examples/categorical_paper.py`` asks :class:`Runs` for the cells of its tables
(a :class:`Cell`: dataset, topology, options, split, seeds), first to gather them all into one
campaign (every run in its own process, recorded in the results database as it finishes, on
local processes or Dask workers), then to read each cell's recorded runs as :class:`Solve`
rows. The datasets the script regroups (krkp, mush, ttt, votes, monks-1) are written once as
CSV files beside the database (``DB.data/``) and named in the grid as CSV datasets; bc and
heart are bundled files named as they are.

Datasets and which bundled file matches the paper's Table 1 (rows, features, groups):

    bc       uci/breast-cancer-wisconsin: 699 rows (paper 695), nine 1–10 scores = 90 ordered bins
             in 9 groups; positive = benign (65 %) for accuracy, malignant for Table 14.
    krkp     binary/kr-vs-kp, 3196 rows, 73 one-hot columns regrouped into the 36 attributes.
    mush     binary/mushroom, 8124 rows, 119 one-hot columns regrouped into 21 attributes (the
             paper's 111 columns in 20 groups drop two attributes it does not name).
    ttt      binary/tic-tac-toe, 958 rows, 27 columns = 9 squares of 3 values.
    monks-1  uci/monks1 (556 rows: the 124 training rows and the 432 test rows) without
             duplicates: the full 432-row set, its one-hot columns decoded back to 6 attributes
             (17 values); the class is column 0 (see DATASETS.md).
    votes    binary/vote, 435 rows, 48 columns = 16 votes of y / n / ?.
    heart    flowoct/spect, 267 rows, 22 binary features (44 values), 79 % positive
             (``uci/spect-heart`` has the class as feature 0 and is not used).

a1a, heloc and student (the paper's other datasets) are not bundled.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _common import run_grid
from odtk.datasets import Dataset, from_dataframe, load_dataset
from odtk.experiments.grid import Grid, parse_grid
from odtk.experiments.store import ResultStore
from odtk.experiments.worker import splits
from odtk.models import TrainedModel

TEST = {"test_size": 0.1, "validation_size": 0.0}  # 10 % test rows; the ODT trains on min(90 %, cap)
VALIDATION = {"test_size": 0.1, "validation_size": 0.2}  # the same test rows; a fifth of the 90 % validates


# ----------------------------------------------------------------------- data (the paper's Table 1)
def regrouped(name: str) -> Dataset:
    """A binarised file whose one-hot columns come in contiguous blocks with exactly one 1 per
    row and block, as one categorical feature per block (its value: the hot column's position)."""
    data = load_dataset(name)
    X = data.features.to_numpy(dtype=int)
    blocks, start = [], 0
    while start < X.shape[1]:
        stop = start + 1
        while X[:, start:stop].sum(axis=1).min() < 1:
            stop += 1
        if X[:, start:stop].sum(axis=1).max() != 1:
            raise ValueError(f"{name}: columns {start}–{stop - 1} are not one attribute's one-hot")
        blocks.append((start, stop))
        start = stop
    frame = pd.DataFrame({f"a{k}": X[:, a:b].argmax(axis=1).astype(str) for k, (a, b) in enumerate(blocks)})
    return from_dataframe(frame.assign(y=data.target.to_numpy()), "y", name=name)


def monks1_full() -> Dataset:
    """uci/monks1 without duplicate rows (the full 432-row MONK-1 set), attributes decoded from
    their one-hot columns with one level dropped (``a1_2``, ``a1_3`` → attribute ``a1``)."""
    data = load_dataset("uci/monks1")
    features = data.features.assign(y=data.target).drop_duplicates()
    frame = pd.DataFrame(index=features.index)
    for column in data.features.columns:
        attribute, _, value = column.partition("_")
        hot = features[column].astype(int).to_numpy()
        current = frame.get(attribute, pd.Series("0", index=frame.index))
        frame[attribute] = np.where(hot == 1, value or "1", current)
    frame = frame.astype(str).reset_index(drop=True)
    return from_dataframe(frame.assign(y=features["y"].to_numpy()), "y", name="monks-1")


BUNDLED = {"bc": "uci/breast-cancer-wisconsin", "heart": "flowoct/spect"}
REGROUPED: dict[str, Callable[[], Dataset]] = {
    "krkp": lambda: regrouped("binary/kr-vs-kp"), "mush": lambda: regrouped("binary/mushroom"),
    "ttt": lambda: regrouped("binary/tic-tac-toe"), "monks-1": monks1_full,
    "votes": lambda: regrouped("binary/vote")}
DATASETS = ["bc", "krkp", "mush", "ttt", "monks-1", "votes", "heart"]  # the paper's order
MALIGNANT = "malignant"  # bc's class of malignant tumours (34.5 % of the rows)


def dataset_entry(name: str, folder: Path) -> dict[str, Any]:
    """The grid's entry of dataset ``name``: a bundled name, or a CSV file of the regrouped
    dataset in ``folder`` (written when missing; every value categorical)."""
    if name in BUNDLED:
        return {"name": BUNDLED[name]}
    path = folder / f"{name}.csv"
    if not path.exists():  # written whole, then renamed: a killed script leaves no half file
        folder.mkdir(parents=True, exist_ok=True)
        data, part = REGROUPED[name](), path.with_suffix(".part")
        data.features.assign(y=data.target.to_numpy()).to_csv(part, index=False)
        part.replace(path)
    return {"name": name, "csv": str(path.resolve()), "target": "y", "categorical": True}


# ----------------------------------------------------------------------- cells and their runs
@dataclass(frozen=True)
class Cell:
    """One setting of a table, solved once per seed: ``split`` "test" (the ODT trains on
    min(90 %, ``cap``) rows, 10 % test), "validation" (the same, a fifth of the 90 % held for
    validation) or "sample" (in-sample on ``cap`` random rows); ``options`` as sorted pairs."""

    dataset: str
    topology: str
    seeds: int
    split: str = "test"
    cap: int = 600
    options: tuple[tuple[str, Any], ...] = ()
    time_limit: float | None = None  # None: the script's --time-limit
    positive_class: str | None = None

    def with_options(self, **options: Any) -> Cell:
        return Cell(self.dataset, self.topology, self.seeds, self.split, self.cap,
                    tuple(sorted(options.items())), self.time_limit, self.positive_class)


@dataclass(frozen=True)
class Solve:
    """One recorded ODT run of a cell: ``termination`` None when it found no tree (failed)."""

    termination: str | None
    gap: float | None
    cpu: float
    train: float | None = None
    val: float | None = None
    test: float | None = None
    leaves: int | None = None
    nodes: int | None = None
    model: TrainedModel | None = None

    @property
    def optimal(self) -> bool:
        return self.termination == "optimal"


def number(value: Any) -> float | None:
    """A recorded number; None for NULL."""
    return None if value is None or pd.isna(value) else float(value)


def recorded(row: pd.Series) -> Solve:
    """A run's recorded row as a :class:`Solve`."""
    if row["status"] != "done":
        return Solve(None, None, number(row["cpu_time"]) or 0.0)
    model = TrainedModel.from_dict(json.loads(row["model"]))
    graph = model.graph.graph
    nodes = json.loads(row["steps"] or "{}").get("milp", {}).get("nodes")
    return Solve(row["termination"], number(row["gap"]), float(row["cpu_time"]), number(row["train_accuracy"]),
                 number(row["val_accuracy"]), number(row["test_accuracy"]),
                 sum(1 for node in graph if graph.out_degree(node) == 0), nodes, model)


class Runs:
    """The cells the tables ask for: gathered while ``frame`` is None (each call returns no
    solves), then run as one campaign (:meth:`execute`), then read (each call returns the
    cell's solves, one per seed)."""

    def __init__(self, args: argparse.Namespace):
        self.args, self.folder = args, Path(f"{args.db}.data")
        self.grids: dict[Cell, Grid] = {}
        self.frame: pd.DataFrame | None = None

    def __call__(self, cell: Cell) -> list[Solve]:
        if cell not in self.grids:
            self.grids[cell] = self.grid(cell)
        if self.frame is None:
            return []
        return [recorded(self.frame.loc[run["id"]]) for run in self.grids[cell].runs]

    def grid(self, cell: Cell) -> Grid:
        """The cell's runs, one per seed."""
        args = self.args
        dataset = dataset_entry(cell.dataset, self.folder)
        sample = cell.split == "sample"
        settings = {"warm_start": None} | ({"positive_class": cell.positive_class} if cell.positive_class else {})
        return parse_grid({
            "name": "categorical-paper", "datasets": [{**dataset, "rows": cell.cap} if sample else dataset],
            "seeds": list(range(cell.seeds)), "stratify": False,
            "split": [1, 0, 0] if sample else VALIDATION if cell.split == "validation" else TEST,
            **({} if sample else {"train_rows": cell.cap}),
            "solvers": [args.solver], "time_limit": cell.time_limit or args.time_limit, "threads": 1,
            "methods": [{"model": "categorical", "skeleton": cell.topology,
                         "options": {key: [value] for key, value in cell.options}, "settings": settings}],
            "selection": {"retrain": False}}, "categorical_paper", base=self.folder)

    def execute(self, store: ResultStore) -> None:
        """Run every gathered cell's runs not yet recorded in ``store`` as one campaign."""
        runs = list({run["id"]: run for grid in self.grids.values() for run in grid.runs}.values())
        campaign = Grid("categorical-paper", runs, (), False)
        self.frame = run_grid(campaign, store, self.args).set_index("id")

    def data(self, cell: Cell, seed: int, whole: bool = False) -> tuple[Dataset, Dataset, Dataset]:
        """The (training, validation, test) rows of the cell's run of ``seed``; ``whole``: its
        training rows are the whole 90 % (as CART's), not the ODT's min(90 %, cap)."""
        run = (self.grids.get(cell) or self.grid(cell)).runs[seed]
        return splits({**run, "train_rows": None, "split": TEST} if whole else run)

    def cpu(self) -> float:
        """CPU seconds of the recorded solves of every cell read."""
        return float(self.frame["cpu_time"].fillna(0).sum()) if self.frame is not None else 0.0
