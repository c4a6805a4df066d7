"""Helpers shared by the example scripts: splits, accuracies, tuning, CART, table output.

Not a script; ``python examples/<script>.py`` puts this directory on ``sys.path``.
"""
from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import odtk
from odtk.datasets import Dataset, load_dataset, train_val_test_split
from odtk.exceptions import OdtkError

Fit = Callable[[float], odtk.SolveResult]


def quiet() -> None:
    """Hide odtk's "feasible but not proven optimal" warnings: the tables show the status."""
    warnings.filterwarnings("ignore", message=".*not proven optimal.*")


def load_split(name: str, seed: int, rows: int | None = None,
               fractions: tuple[float, float, float] = (0.5, 0.25, 0.25)) -> tuple[Dataset, Dataset, Dataset]:
    """The papers' seeded 50/25/25 split of a bundled dataset, optionally of ``rows`` random rows."""
    dataset = load_dataset(name)
    if rows is not None and rows < dataset.n_rows:
        chosen = np.random.default_rng(seed).choice(dataset.n_rows, size=rows, replace=False)
        dataset = dataset.subset(np.sort(chosen))
    return train_val_test_split(dataset, fractions=fractions, seed=seed)


def accuracy(result: odtk.SolveResult, data: Dataset) -> float:
    """Share of ``data`` rows the learned model classifies correctly."""
    predicted = result.model.predict(data.features)
    return float(np.mean(predicted == data.target.to_numpy(dtype=object)))


def tune(fit: Fit, grid: Sequence[float], val: Dataset) -> tuple[float, odtk.SolveResult, float, float]:
    """Fit once per grid value; keep the best validation accuracy (ties: the later grid value).

    Returns (chosen value, its result, its validation accuracy, seconds spent on the whole grid).
    """
    start = time.perf_counter()
    best = None
    for value in grid:
        result = fit(value)
        score = accuracy(result, val)
        if best is None or score >= best[2]:
            best = (value, result, score)
    return (*best, time.perf_counter() - start)


def solve_row(fit: Callable[[], dict]) -> dict:
    """``fit()``'s table row; if odtk gives up, its one-line error on stderr and status "error"."""
    try:
        return fit()
    except OdtkError as exc:
        print(f"odtk: {exc}", file=sys.stderr)
        return {"status": "error"}


def cart(train: Dataset, test: Dataset, depth: int, seed: int) -> tuple[float, int]:
    """CART baseline of depth ``depth``: (test accuracy, number of splits)."""
    X_train = pd.get_dummies(train.features)
    X_test = pd.get_dummies(test.features).reindex(columns=X_train.columns, fill_value=0)
    tree = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X_train, train.target)
    splits = int(tree.tree_.node_count - tree.get_n_leaves())
    return float(tree.score(X_test, test.target)), splits


def gap(result: odtk.SolveResult) -> float:
    """Relative gap, NaN when the solver gave no bound."""
    return math.nan if result.gap is None else round(result.gap, 4)


def print_table(rows: list[dict], title: str) -> None:
    """Print ``rows`` as one aligned table (missing cells as '-', seconds to 0.1 s)."""
    columns = dict.fromkeys(key for row in sorted(rows, key=len, reverse=True) for key in row)
    frame = pd.DataFrame(rows, columns=list(columns))  # the fullest row sets the column order
    seconds = [column for column in frame.columns if column.endswith("_s")]
    frame[seconds] = frame[seconds].round(1)
    print(title)
    print(frame.to_string(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}"))
