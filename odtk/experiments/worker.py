"""One run in its own process, started by the runner through :data:`BOOTSTRAP`.

The runner starts a Python process per run in a new session (so a hung solver can be killed
with its children), hands it the run as JSON on stdin and reads the finished row from a
result file; a run that fails on purpose (an odtk error) still writes its row, with the
message. The row names the odtk code and the solver version that made it (:func:`code_version`;
the solver's as the solve reported it, else as the runner found it installed). Before anything
else, the process asks the kernel for SIGTERM when the runner dies and exits if the runner is
already gone; on SIGTERM it kills its whole process group (itself and any solver process it
started).
"""
from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
import resource
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import Dataset, load_dataset, train_val_test_split
from odtk.exceptions import OdtkError
from odtk.experiments.claims import host_name
from odtk.experiments.grid import csv_data
from odtk.files import write_atomic


def now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@functools.cache
def code_version() -> str:
    """odtk's version and a digest of the odtk code it runs (its Python files and solver
    registry, the formulations included), e.g. ``0.1.0+10bd9a8e23f3``: two runs share it only
    when made by the same code."""
    root = Path(odtk.__file__).resolve().parent
    sources = sorted((Path(folder, name).relative_to(root).as_posix()
                      for folder, _, names in os.walk(root, followlinks=True) if "__pycache__" not in folder
                      for name in names if name.endswith((".py", ".yaml"))))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.encode() + b"\0" + (root / source).read_bytes() + b"\0")
    return f"{odtk.__version__}+{digest.hexdigest()[:12]}"


def cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its finished child processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def solver_version(solver: str | None) -> str | None:
    """The version of the solver ``solver`` installed here ("" for odtk's own searches, which
    use none; None when it is not installed here)."""
    if not solver:
        return ""
    from odtk.solvers import solver_status

    return solver_status(solver).version


def splits(run: dict[str, Any]) -> tuple[Dataset, Dataset, Dataset]:
    """The run's seeded train / validation / test split (of ``rows`` sampled rows if given;
    at most ``train_rows`` training rows, drawn with the seed): fractions stratified by class unless the run says
    ``stratify: false``, scikit-learn's unstratified ``train_test_split`` twice, or a fold of a
    shuffled ``KFold`` (see :mod:`odtk.experiments.grid`)."""
    dataset = csv_data(run) if run.get("csv") else load_dataset(run["dataset"])
    if run.get("rows") and run["rows"] < dataset.n_rows:
        chosen = np.random.default_rng(run["seed"]).choice(dataset.n_rows, size=run["rows"], replace=False)
        dataset = dataset.subset(np.sort(chosen))
    split, seed = run["split"], run["seed"]
    if isinstance(split, dict):
        parts = _sklearn_parts(dataset.n_rows, split, seed)
        train, val, test = (dataset.subset(np.sort(rows)) for rows in parts)
    else:
        train, val, test = train_val_test_split(dataset, fractions=tuple(split), seed=seed,
                                                stratify=run.get("stratify", True))
    if run.get("train_rows") and run["train_rows"] < train.n_rows:
        kept = np.random.default_rng(seed).choice(train.n_rows, size=run["train_rows"], replace=False)
        train = train.subset(np.sort(kept))
    return train, val, test


def _sklearn_parts(n_rows: int, split: dict[str, Any], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row numbers (train, validation, test) of a ``{folds: K}`` or ``{test_size, validation_size}`` split."""
    from sklearn.model_selection import KFold, train_test_split

    rows = np.arange(n_rows)
    if "folds" in split:
        folds = KFold(split["folds"], shuffle=True, random_state=seed // split["folds"]).split(rows)
        train, test = list(folds)[seed % split["folds"]]
        return train, rows[:0], test
    rest, test = train_test_split(rows, test_size=split["test_size"], random_state=seed)
    if not split["validation_size"]:
        return rest, rows[:0], test
    train, val = train_test_split(rest, test_size=split["validation_size"], random_state=seed)
    return train, val, test


def _joined(first: Dataset, second: Dataset) -> Dataset:
    return Dataset(first.name, pd.concat([first.features, second.features], ignore_index=True),
                   pd.concat([first.target, second.target], ignore_index=True), dict(first.kinds))


def _accuracy(result: odtk.SolveResult, data: Dataset) -> float | None:
    if data.n_rows == 0:
        return None
    predicted = result.model.predict(data.features)
    return float(np.mean(predicted == data.target.to_numpy(dtype=object)))


def execute(run: dict[str, Any]) -> dict[str, Any]:
    """Train and evaluate one run; returns its results row (status "done" or "failed")."""
    row = {**run, "started": now(), "worker": f"{host_name()}:{os.getpid()}", "odtk_version": code_version()}
    start = time.perf_counter()
    try:
        train, val, test = splits(run)
        fit_on = train if run["phase"] == "grid" else _joined(train, val)
        cpu_start = cpu_seconds()
        result = odtk.solve(run["method"], fit_on, depth=run["depth"], skeleton=run["skeleton"],
                            solver=run["solver"], time_limit=run["time_limit"], threads=run["threads"],
                            seed=run["seed"], **run["settings"], **run["options"])
    except OdtkError as exc:
        return {**row, "status": "failed", "message": str(exc), "finished": now(),
                "wall_time": time.perf_counter() - start}
    if result.termination == "error":  # the solver failed: its start measures nothing of the method
        return {**row, "status": "failed", "message": f"{run['solver']} stopped without a solution ({result.message})",
                "finished": now(), "wall_time": time.perf_counter() - start}
    size = result.size.__dict__ if result.size else {}
    return {**row, **size, "status": "done", "termination": result.termination, "cpu_time": cpu_seconds() - cpu_start,
            "solver": result.solver, "solver_version": result.solver_version or run.get("solver_version"),
            "objective": result.objective, "bound": result.bound,
            "gap": result.gap, "build_time": result.build_time, "solve_time": result.solve_time,
            "wall_time": time.perf_counter() - start, "n_train": fit_on.n_rows, "n_val": val.n_rows,
            "n_test": test.n_rows, "train_accuracy": result.train_accuracy,
            "val_accuracy": _accuracy(result, val) if run["phase"] == "grid" else None,
            "test_accuracy": _accuracy(result, test),
            "model": json.dumps(result.model.to_dict()), "steps": json.dumps(result.steps, default=_plain),
            "finished": now()}


def _plain(value: Any) -> Any:
    """A JSON-able form of a step's value (numpy scalars as numbers, anything else as text)."""
    return value.item() if hasattr(value, "item") else str(value)


# the folder odtk is imported from: a worker imports odtk from there too
CODE_ROOT = str(Path(odtk.__file__).resolve().parent.parent)
# Run with ``python -c BOOTSTRAP RESULT_FILE RUNNER_PID CODE_ROOT`` (stdlib only until the runner
# is known to be alive, so that the guard against an orphaned run is armed before odtk loads).
# ``-c`` puts the current folder first on the import path: it is replaced by CODE_ROOT, so that
# a folder holding an ``odtk/`` or a ``numpy.py`` changes nothing.
BOOTSTRAP = """
import sys
if sys.path[:1] == [""]:
    del sys.path[0]
sys.path.insert(0, sys.argv[3])
import ctypes, os, signal
signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
try:
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: SIGTERM when the runner dies
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[2]):
    sys.exit("the runner is gone")
from odtk.experiments.worker import main
main(sys.argv[1])
"""


def main(result_file: str) -> None:
    """Read the run from stdin, execute it and write its row to ``result_file``."""
    warnings.simplefilter("ignore")
    run = json.loads(sys.stdin.read())
    try:
        row = execute(run)
    except Exception as exc:  # a bug: record it with its origin, never lose the campaign
        origin = traceback.extract_tb(exc.__traceback__)[-1]
        row = {**run, "status": "failed", "finished": now(),
               "message": f"internal error {type(exc).__name__}: {exc} "
                          f"({Path(origin.filename).name}:{origin.lineno})"}
    write_atomic(result_file, json.dumps(row), force=True)
