"""Every model with its default options, as a user runs it: does each run answer within its budget?

Every model of ``odtk.api.available_models()`` on HiGHS, CBC and SCIP (the CP search, which
takes no solver, and the SAT models, which default to a SAT solver, run once with their
default) × three data sets, each split 75 / 25 stratified (seed 0) into CSV files:

- ``uci/iris`` (150 rows, 4 numeric columns, 3 classes; the categorical model, which learns
  binary classifiers, is left out);
- ``breast-cancer-400``: 400 rows drawn (stratified, seed 0) from scikit-learn's breast cancer,
  its first ten named columns and the class as text (``malignant`` / ``benign``);
- ``breast-cancer-2000``: 2,000 rows drawn with replacement (seed 0) from all 569, so test rows
  may repeat training rows (its test accuracy is not a generalisation estimate).

Each run is a subprocess ``odtk solve --model M --csv train.csv --target T [shape] [--solver S]
--output run.json`` with every other option at its default (the 60 s budget included). The shape
is the only option given: ``--depth 2`` for the trees (FlowOCT, BendersOCT, OCT, BinOCT, CP),
``--skeleton 1-2-4-8`` for ODD, ``--skeleton depth-2`` for the categorical model, nothing for the
SAT models (they choose their depth). Wall seconds and CPU seconds (user + system of the odtk
process and the solver processes it waited for, from ``os.wait4``) are measured per run; status,
objective, bound and gap are read from the summary odtk prints, training accuracy too, and test
accuracy from the saved model on the test rows. Exit status 1 on any error, or any run whose wall
time exceeds the budget + max(2 s, 5 %).

``--signals`` instead stops ``odtk solve`` with SIGINT, SIGTERM and SIGHUP in each phase and
each installed solver (the cases of ``tests/test_signals.py``, from ``_signals.py``) and prints
the seconds from the signal to the exit, with what broke the promise (exit status 1 then).

    python benchmarks/defaults.py [--datasets …] [--models …] [--solvers highs cbc scip] [--jobs 1]
                                  [--budget 60] [--cache DIR]
    python benchmarks/defaults.py --signals [--solvers …] [--phases …] [--signal-names SIGINT …]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

import _signals

MILP_SOLVERS = ("highs", "cbc", "scip")
DATASETS = ("uci/iris", "breast-cancer-400", "breast-cancer-2000")
TARGET = "class"
SHAPES = {"odd": ("--skeleton", "1-2-4-8"), "categorical": ("--skeleton", "depth-2"), "sat-depth": (),
          "sat-size": ()}  # every other model: --depth 2
BINARY_ONLY = ("categorical",)
ENGINES = ("cp", "sat-depth", "sat-size")  # no MILP solver by default: run once
BUDGET = 60.0  # odtk's default time limit, seconds


def slack(budget: float) -> float:
    """The time a run may take beyond its budget."""
    return max(2.0, 0.05 * budget)


# -------------------------------------------------------------------------------------- data
def full_frame(name: str) -> pd.DataFrame:
    """The data set ``name`` as one frame with named columns and the class as text in ``class``."""
    if name.startswith("uci/"):
        from odtk.datasets import load_dataset

        dataset = load_dataset(name)
        return dataset.features.assign(**{TARGET: dataset.target.astype(str).to_numpy()})
    from sklearn.datasets import load_breast_cancer

    cancer = load_breast_cancer(as_frame=True)
    frame = cancer.data.iloc[:, :10].assign(**{TARGET: cancer.target_names[cancer.target]})
    if name == "breast-cancer-400":
        frame, _ = train_test_split(frame, train_size=400, stratify=frame[TARGET], random_state=0)
        return frame.reset_index(drop=True)
    if name == "breast-cancer-2000":
        return frame.sample(2000, replace=True, random_state=0).reset_index(drop=True)
    raise SystemExit(f"defaults.py: unknown data set {name!r}; choose from {', '.join(DATASETS)}.")


def split(name: str, cache: Path) -> tuple[Path, Path]:
    """Training and test CSV files of ``name`` (75 / 25, stratified, seed 0), written once."""
    train, test = (cache / f"{name.replace('/', '-')}-{part}.csv" for part in ("train", "test"))
    if not (train.exists() and test.exists()):
        frame = full_frame(name)
        cache.mkdir(parents=True, exist_ok=True)
        parts = train_test_split(frame, test_size=0.25, stratify=frame[TARGET], random_state=0)
        for path, part in zip((train, test), parts):
            part.to_csv(path.with_suffix(".partial"), index=False)
            path.with_suffix(".partial").replace(path)
    return train, test


# -------------------------------------------------------------------------------------- runs
def plan(models: list[str], solvers: list[str], datasets: list[str]) -> list[tuple[str, str, str]]:
    """(data set, model, solver) of every run; ``-`` for a model's default solver."""
    runs = []
    for dataset in datasets:
        classes = full_frame(dataset)[TARGET].nunique()
        for model in models:
            if model in BINARY_ONLY and classes != 2:
                continue
            for solver in ("-",) if model in ENGINES else solvers:
                runs.append((dataset, model, solver))
    return runs


def solve(dataset: str, model: str, solver: str, cache: Path, folder: Path, budget: float) -> dict:
    """Run one ``odtk solve`` in ``folder`` and measure it; a row of the table."""
    train, test = split(dataset, cache)
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / "run.json"
    command = [sys.executable, "-m", "odtk", "solve", "--model", model, "--csv", str(train), "--target", TARGET,
               *SHAPES.get(model, ("--depth", "2")), *(() if solver == "-" else ("--solver", solver)),
               *(() if budget == BUDGET else ("--time-limit", str(budget))), "--output", str(output), "--force"]
    with open(folder / "stdout.txt", "w+") as stdout, open(folder / "stderr.txt", "w+") as stderr:
        began = time.monotonic()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, cwd=folder)
        _, status, usage = os.wait4(process.pid, 0)  # this child's CPU, and that of the solvers it reaped
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - began
        stdout.seek(0)
        stderr.seek(0)
        printed, errors = stdout.read(), stderr.read()
    row = {"model": model, "solver": solver, "data": dataset, "wall s": wall, "CPU s": usage.ru_utime + usage.ru_stime,
           **summary(printed)}
    if process.returncode != 0 or not output.exists():
        last = errors.strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
        return {**row, "status": "error", "error": f"exit code {process.returncode}: {last[0]}"}
    row["test acc"] = test_accuracy(output, test)
    if wall > budget + slack(budget):
        row["error"] = f"overrun: {wall:.1f} s > {budget:g} s + {slack(budget):g} s"
    return row


def summary(printed: str) -> dict:
    """Status, objective, bound, gap and training accuracy from the summary ``odtk solve`` prints."""
    found = {}
    patterns = {"status": r"^status\s+(\S+)", "objective": r"^objective\s+(\S+)", "bound": r"\bbound (\S+)",
                "gap": r"\bgap (\S+)", "train acc": r"^accuracy\s+(\S+) on"}
    for name, pattern in patterns.items():
        match = re.search(pattern, printed, re.MULTILINE)
        found[name] = match.group(1) if match else ""
    found["train acc"] = float(found["train acc"]) if found["train acc"] else None
    return found


def test_accuracy(model_file: Path, test: Path) -> float:
    """Accuracy of a saved model on the test CSV, read as ``odtk predict`` reads it."""
    import numpy as np

    from odtk.datasets import read_csv
    from odtk.models import TrainedModel

    frame = read_csv(test)
    labels = TrainedModel.load(model_file).predict(frame.drop(columns=[TARGET]))
    return float(np.mean(frame[TARGET].astype(str).to_numpy() == np.asarray([str(v) for v in labels])))


def run_all(runs: list[tuple[str, str, str]], cache: Path, jobs: int, budget: float) -> pd.DataFrame:
    """Every run (``jobs`` at once), as a table in the order planned."""
    work = Path(tempfile.mkdtemp(prefix="odtk-defaults-"))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(solve, dataset, model, solver, cache,
                               work / f"{dataset.replace('/', '-')}-{model}-{solver}", budget)
                   for dataset, model, solver in runs]
        rows = []
        for future in futures:
            rows.append(future.result())
            print(_line(rows[-1]), file=sys.stderr, flush=True)
    print(f"runs kept in {work}", file=sys.stderr)
    return pd.DataFrame(rows)


def _display(table: pd.DataFrame) -> pd.DataFrame:
    """The table as text: numbers to 3 significant digits, nothing for a missing value."""
    return table.map(lambda v: "" if v is None or v != v else f"{v:.3g}" if isinstance(v, float) else str(v))


def _line(row: dict) -> str:
    shown = {key: (f"{value:.3g}" if isinstance(value, float) else value) for key, value in row.items()}
    return " ".join(f"{key}={value}" for key, value in shown.items() if value not in ("", None))


# ----------------------------------------------------------------------------------- signals
def signal_table(solvers: list[str], phases: list[str] | None, names: list[str], cache: Path) -> pd.DataFrame:
    """Each case of ``_signals.cases`` × each signal in ``names``: seconds from signal to exit."""
    rows = []
    for case in _signals.cases(solvers):
        if phases and case.phase not in phases:
            continue
        for name in names:
            with tempfile.TemporaryDirectory(prefix="odtk-signal-") as work:
                outcome = _signals.run(case, Path(work), cache, name)
            broken = _signals.problems(outcome, case, name)
            reached = outcome.phase_at_signal is not None
            rows.append({"phase": case.phase, "solver": case.solver, "signal": name,
                         "exit": outcome.returncode if reached else None,
                         "seconds": outcome.seconds, "model shown": "status      interrupted" in outcome.stdout,
                         "problems": "; ".join(broken)})
            print(_line(rows[-1]), file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    from odtk.api import available_models
    from odtk.solvers import solver_status

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--models", nargs="+", default=available_models(), choices=available_models())
    parser.add_argument("--solvers", nargs="+",
                        help="MILP solvers (default highs cbc scip; --signals: those and gurobi, cplex if installed)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (each run's wall time grows with it)")
    parser.add_argument("--budget", type=float, default=BUDGET, help="--time-limit of each run (default: odtk's)")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "odtk-benchmarks", help="where the data sets' CSV files are written")
    parser.add_argument("--signals", action="store_true", help="time signal-to-exit per phase and solver instead")
    parser.add_argument("--phases", nargs="+", help="--signals: only these phases")
    parser.add_argument("--signal-names", nargs="+", default=list(_signals.SIGNALS), choices=_signals.SIGNALS)
    args = parser.parse_args(argv)
    everyone = [s for s in (*MILP_SOLVERS, "gurobi", "cplex") if solver_status(s).available]
    solvers = args.solvers or (everyone if args.signals else list(MILP_SOLVERS))
    missing = [s for s in solvers if not solver_status(s).available]
    if missing:
        parser.error(f"solver(s) not installed: {', '.join(missing)}")
    pd.set_option("display.width", 250, "display.max_columns", 20, "display.max_colwidth", 120)
    if args.signals:
        table = signal_table(solvers, args.phases, args.signal_names, args.cache)
        print(_display(table).to_string(index=False))
        return int(bool(table["problems"].astype(bool).any()))
    table = run_all(plan(args.models, solvers, args.datasets), args.cache, args.jobs, args.budget)
    columns = ["model", "solver", "data", "wall s", "CPU s", "status", "objective", "bound", "gap", "train acc",
               "test acc", "error"]
    print(_display(table.reindex(columns=columns)).to_string(index=False))
    failed = table["error"].fillna("").astype(bool) if "error" in table else pd.Series(False, index=table.index)
    print(f"\n{len(table)} runs, {int(failed.sum())} errors or overruns (budget {args.budget:g} s + "
          f"{slack(args.budget):g} s)")
    return int(failed.any())


if __name__ == "__main__":
    sys.exit(main())
