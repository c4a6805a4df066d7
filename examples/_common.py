"""Helpers shared by the example scripts: data, accuracies, tuning, CART, bound checks, tables,
the results database of a run and the campaigns it records.

Not a script; ``python examples/<script>.py`` puts this directory on ``sys.path``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import odtk
from odtk.datasets import Dataset, load_dataset, train_val_test_split
from odtk.exceptions import ConfigError, OdtkError
from odtk.experiments.grid import Grid
from odtk.experiments.runner import retrain_runs, run_campaign
from odtk.experiments.store import ResultStore

Fit = Callable[[float], odtk.SolveResult]
RESULTS = Path("benchmarks/results")  # the default databases' folder, from the repository root


def quiet() -> None:
    """Hide odtk's "feasible but not proven optimal" warnings: the tables show the status."""
    warnings.filterwarnings("ignore", message=".*not proven optimal.*")


def load_rows(name: str, seed: int, rows: int | None = None) -> Dataset:
    """A bundled dataset, or ``rows`` of its rows drawn at random with ``seed`` (kept in order)."""
    dataset = load_dataset(name)
    if rows is not None and rows < dataset.n_rows:
        chosen = np.random.default_rng(seed).choice(dataset.n_rows, size=rows, replace=False)
        dataset = dataset.subset(np.sort(chosen))
    return dataset


def load_split(name: str, seed: int, rows: int | None = None,
               fractions: tuple[float, float, float] = (0.5, 0.25, 0.25)) -> tuple[Dataset, Dataset, Dataset]:
    """The papers' seeded 50/25/25 split of a bundled dataset, optionally of ``rows`` random rows."""
    return train_val_test_split(load_rows(name, seed, rows), fractions=fractions, seed=seed)


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


def one_hot(data: Dataset, like: pd.DataFrame | None = None) -> pd.DataFrame:
    """``data``'s features for CART: categorical columns (integer-coded too) one-hot, the others
    as they are; with ``like``, reindexed to its columns (unseen values all zero)."""
    categorical = [column for column, kind in data.kinds.items() if kind == "categorical"]
    frame = pd.get_dummies(data.features, columns=categorical)
    return frame if like is None else frame.reindex(columns=like.columns, fill_value=0)


def cart_scores(train: Dataset, evaluated: Sequence[Dataset], depth: int, seed: int) -> tuple[list[float], int]:
    """CART of depth ``depth`` fitted on ``train``: (its accuracy on each of ``evaluated``, number of splits)."""
    X_train = one_hot(train)
    tree = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X_train, train.target)
    splits = int(tree.tree_.node_count - tree.get_n_leaves())
    return [float(tree.score(one_hot(data, X_train), data.target)) for data in evaluated], splits


def cart(train: Dataset, test: Dataset, depth: int, seed: int) -> tuple[float, int]:
    """CART baseline of depth ``depth``: (test accuracy, number of splits)."""
    (test_accuracy,), splits = cart_scores(train, [test], depth, seed)
    return test_accuracy, splits


def gap(result: odtk.SolveResult) -> float:
    """Relative gap, NaN when the solver gave no bound."""
    return math.nan if result.gap is None else round(result.gap, 4)


def proven_bound(result: odtk.SolveResult) -> float:
    """The bound ``result`` proves on its objective (a maximisation): the solver's bound, else
    the objective of a proven optimum, else +inf (nothing proven)."""
    if result.bound is not None:
        return result.bound
    return result.objective if result.optimal else math.inf


def contradicted(runs: Sequence[tuple[float, float]]) -> list[bool]:
    """Runs of several methods on one maximisation as (objective, proven bound) pairs: True for
    each run whose bound (its optimum, if proven) lies below an objective some run reached.
    A proven optimum that differs from another is contradicted. Slack: HiGHS's relative gap 1e-4."""
    if not runs:
        return []
    best = max(objective for objective, _ in runs)
    slack = 1e-4 * max(1.0, abs(best))
    return [bound < best - slack for _, bound in runs]


def print_table(rows: list[dict], title: str) -> None:
    """Print ``rows`` as one aligned table (missing cells as '-', seconds to 0.1 s)."""
    columns = dict.fromkeys(key for row in sorted(rows, key=len, reverse=True) for key in row)
    frame = pd.DataFrame(rows, columns=list(columns))  # the fullest row sets the column order
    seconds = [column for column in frame.columns if column.endswith("_s")]
    frame[seconds] = frame[seconds].round(1)
    print(title)
    print(frame.to_string(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}"))


def pruned_cart(train: Dataset, val: Dataset, seed: int,
                refit: Dataset | None = None) -> tuple[DecisionTreeClassifier, pd.DataFrame]:
    """CART pruned by cost complexity, as rpart prunes by cross-validation: the full tree on
    ``train``, its pruning path's ``ccp_alpha`` with the best accuracy on ``val`` (ties: the larger
    alpha, a smaller tree), fitted again with that alpha on ``refit`` (default ``train``).

    Returns the pruned tree and the one-hot columns it was fitted on (for ``one_hot(data, like)``).
    """
    X_train, X_val = one_hot(train), one_hot(val, one_hot(train))
    path = DecisionTreeClassifier(random_state=seed).cost_complexity_pruning_path(X_train, train.target)
    alphas = path.ccp_alphas
    scores = [DecisionTreeClassifier(random_state=seed, ccp_alpha=alpha).fit(X_train, train.target).score(
        X_val, val.target) for alpha in alphas]
    alpha = max(0.0, max(zip(scores, alphas))[1])  # the path's first alpha may be -1e-17
    final = train if refit is None else refit
    X_final = one_hot(final)
    return DecisionTreeClassifier(random_state=seed, ccp_alpha=alpha).fit(X_final, final.target), X_final


def add_database_options(parser: argparse.ArgumentParser, script: str, unit: str) -> None:
    """``--db`` and ``--resume`` of a script that records its ``unit`` ("solves", "runs") in a
    results database (see :func:`results_database`)."""
    parser.add_argument("--db", type=Path, default=None,
                        help=f"results database (folder created if missing; default: a new "
                             f"benchmarks/results/{script}-YYYYmmdd-HHMMSS.sqlite); an existing one needs --resume")
    parser.add_argument("--resume", action="store_true",
                        help=f"reuse the {unit} recorded in --db (default: the newest default database) by this "
                             "odtk code and solver version")


def results_database(db: Path | None, resume: bool, script: str) -> Path:
    """The results database of one run of ``script``, named on stdout: without ``resume``, an
    empty one (``db``, or a new ``RESULTS/<script>-YYYYmmdd-HHMMSS.sqlite``); with it, ``db``
    or the newest of those defaults, whose runs made by this odtk code and solver version are
    reused; ``db``'s folder is made if missing. ConfigError for an existing ``db`` without
    ``resume`` (it is never overwritten)."""
    if db is not None and db.exists() and not resume:
        raise ConfigError(f"{db} exists; add --resume to reuse its runs made by this odtk and solver version, "
                          "or give --db a new file.")
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    earlier = [] if db is not None or not resume else _defaults(script)
    path = db or (max(earlier)[-1] if earlier else _new_default(script))
    kept = resume and path.exists() and path.stat().st_size > 0
    print(f"results database {path} ({'resumed: runs of this odtk and solver version reused' if kept else 'new'})")
    return path


def _defaults(script: str) -> list[tuple[str, int, Path]]:
    """The default databases of ``script`` in RESULTS, as (time stamp, number, path)."""
    name = re.compile(rf"{re.escape(script)}-(\d{{8}}-\d{{6}})(?:-(\d+))?\.sqlite")
    found = [(name.fullmatch(path.name), path) for path in RESULTS.glob(f"{script}-*.sqlite")]
    return [(match[1], int(match[2] or 0), path) for match, path in found if match]


def _new_default(script: str) -> Path:
    """A new, empty default database of ``script`` (numbered when that second's name is taken)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for number in itertools.count():
        path = RESULTS / f"{script}-{stamp}{f'-{number}' if number else ''}.sqlite"
        try:
            path.open("x").close()
        except FileExistsError:
            continue
        return path


def reuse_line(db: Path, total: int, computed: int, other_version: int, unit: str = "runs") -> str:
    """How many of ``total`` cells were computed now and how many came from earlier runs in ``db``."""
    again = (f" ({other_version} recorded there by another odtk or solver version, computed again)"
             if other_version else "")
    return f"{computed} of {total} {unit} computed now{again}, {total - computed} from earlier runs in {db}"


def stopped(exc: BaseException, args: argparse.Namespace, unit: str = "runs") -> int:
    """The exit status of a paper script whose campaign stopped on ``exc``: 130 after Ctrl-C
    (``args.recorded`` ``unit`` kept in ``args.db`` and how to resume, on stderr), else 2 (odtk's
    one-line reason)."""
    if isinstance(exc, KeyboardInterrupt):
        print(f"interrupted: {args.recorded} {unit} recorded in {args.db}; run again with --resume to continue",
              file=sys.stderr)
        return 130
    print(f"odtk: {exc}", file=sys.stderr)
    return 2


def add_campaign_options(parser: argparse.ArgumentParser, jobs: int = 2) -> None:
    """``--jobs``, ``--executor`` and ``--scheduler`` of a script whose solves run as ``odtk
    experiment`` campaigns (see :func:`run_grid`)."""
    parser.add_argument("--jobs", type=int, default=jobs, help=f"runs at once (local executor; default {jobs})")
    parser.add_argument("--executor", choices=["local", "dask"], default="local",
                        help="local processes, or a Dask cluster's workers (with --scheduler)")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://head:8786")


def run_grid(grid: Grid, store: ResultStore, args: argparse.Namespace) -> pd.DataFrame:
    """Run ``grid``'s runs not yet recorded in ``store`` (``args.jobs``, ``args.executor``,
    ``args.scheduler``; a progress line per run on stderr) and return all its recorded rows
    (the retraining's too). Appends ``(grid.name, CampaignReport)`` to ``args.counts`` and counts
    the runs recorded, now or before, in ``args.recorded`` (both made by the caller)."""
    def progress(phase: str, total: int) -> Callable[[dict], None]:
        counter = iter(range(1, total + 1))
        args.recorded += len(grid.runs) - total if phase == "grid" else 0

        def finished(row: dict) -> None:
            args.recorded += 1
            shape = row["skeleton"] or (f"depth {row['depth']}" if row["depth"] is not None else "")
            outcome = row.get("termination") or row.get("message", "")
            print(f"[{next(counter)}/{total}] {grid.name} {phase} {row['dataset']} seed {row['seed']} "
                  f"{row['method']} {shape} {json.dumps(row['options'])}: {outcome}", file=sys.stderr, flush=True)
        return finished

    report = run_campaign(grid, store, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                          progress=progress)
    args.counts.append((grid.name, report))
    ours = [run["id"] for run in grid.runs + (retrain_runs(grid, store) if grid.retrain else [])]
    frame = store.frame()
    return frame[frame["id"].isin(ours)]
