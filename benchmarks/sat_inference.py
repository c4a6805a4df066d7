"""odtk's DT_depth and DT_size (SAT inference) on the datasets of the paper, beside its figures.

F. Avellaneda, "Efficient Inference of Optimal Decision Trees", AAAI 2020, ran ``DT_depth`` (the
smallest depth k of a tree that classifies every training example correctly) and ``DT_size``
(the fewest nodes n at that depth) on the Verwer & Zhang datasets, five train/test splits each,
and reported averages over the splits (Table 3; S and B from Table 4), and on the "Car" dataset,
whole (Table 2). This script runs ``odtk.solve("sat-depth")`` and ``odtk.solve("sat-size")`` on
the same splits (bundled under ``consistent/``: iris, monk1, monk2, monk3, wine, balance-scale)
and on the paper's "Car" (no splits, so no test accuracy), and prints, one row per dataset,
odtk's averages beside the paper's: S (the paper's count of examples; odtk: training rows of a
split), B (Boolean features), the CPU time of the search beside the paper's time (odtk's wall
time, binarisation and verification included, in the CSV), test accuracy on the matching test
split, k, n, and odtk's SAT calls ("rounds") and examples encoded ("expl", the examples
Algorithm 3 added). Averages are over the runs that proved their tree optimal; "done" counts
them. The paper's times are for MiniSat on an Intel i7-2600K.

The paper's "Car" (Table 2, the dataset of Bessiere et al. and Narodytska et al., the authors'
``data/car.csv``) has two classes: unacc against acc, good and vgood together. It is
``consistent/car`` (UCI car-evaluation, 1728 rows, six ordered attributes) with its classes
merged so; the authors' file lacks the first UCI row, hence the paper's "1727 examples". With
the four UCI classes no depth-8 tree exists (the search proves depth 8 unsatisfiable and goes
on to depth 9, far beyond the paper's minutes), so the two classes are what makes Table 2's
k = 8 and its times comparable.

Binarisation is that of the authors' code (``thresholds="values"``): every ordered column, an
integer-coded attribute as much as a measurement, becomes one Boolean feature ``x > v`` per
distinct training value v but the largest. The paper's B counts one Boolean ``x ≥ v`` for every
value v, the smallest included (its Example 1; the authors' code when the paper appeared): the
same thresholds plus one always-true column per attribute, so B = 21 for car (15 here), 20 for
balance-scale (16) and 17 for monks (11). An always-true column sends every example the same
way: a smallest tree never tests it, so it changes neither k nor n, and on car it changes
neither the time nor the examples encoded much. One-hot columns, as many, would change the
trees: one-hot monks give k 4 / n 13 (monk1), k 5.2 (monk2), k 4 / n 21.8 (monk3), against Table
3's 4.4 / 17, 5.8 and 4.8 / 23.4. odtk fits the encoding on each training split, so its B can
differ from the paper's. Caveat: the balance-scale training splits contain duplicated rows that
also occur in the test splits.

Speed options (off by default, the paper's algorithm): ``--examples-per-round N`` adds up to N
misclassified examples per SAT call, ``--keep-examples`` starts depth k + 1 with the examples
depth k needed.

Every returned tree must classify all its training rows (``train_accuracy == 1.0``) and on each
split DT_size's proven tree must have DT_depth's proven depth and at most its nodes; otherwise a
``MISMATCH`` line and exit status 1. Per-run rows go to ``--output-dir`` (default
``benchmarks/results``) as ``sat_inference.csv``, rewritten after every run; progress lines go
to stderr.

    python benchmarks/sat_inference.py [--quick] [--datasets iris monk1 …] [--splits 0 1 2 3 4]
        [--time-limit 1800] [--solver minisat22] [--encoding incremental]
        [--examples-per-round 1] [--keep-examples] [--output-dir …]

The datasets run in the order iris, monk1, monk2, monk3, wine, car, balance-scale: the slowest
last. iris to wine take about 3 CPU minutes in all (monk2's DT_size about 25 s a split); car
takes about 130 CPU seconds for DT_depth and 215 for DT_size (the paper: 127 s and 217 s), and
a balance-scale split about 60 and 380 (the paper: 50 s and 183 s). ``--time-limit`` counts
wall-clock seconds (default 1800 per call), so raise it on a busy machine. ``--quick``
(iris, monk1 and monk3, split 0, 20 s limit) takes a few seconds; options given explicitly
override its choices.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset, read_csv
from odtk.exceptions import OdtkError, SolveError


@dataclass(frozen=True)
class Paper:
    """One row of the paper's table (averages over the five splits)."""

    examples: int
    booleans: int
    depth_seconds: float
    depth_accuracy: float
    k: float
    n: float
    size_seconds: float
    size_accuracy: float


# Avellaneda (AAAI 2020): S and B from Table 4, DT_depth's time, accuracy and k, DT_size's n, time
# and accuracy from Table 3; car from Table 2 (S and B from the text, accuracy by 10-fold
# cross-validation) and Table 2's k of DT_depth, n of DT_size.
PAPER = {
    "iris": Paper(113, 114, 0.018, 92.9, 3, 10.6, 0.030, 93.2),
    "monk1": Paper(124, 17, 0.024, 90.3, 4.4, 17, 0.080, 95.5),
    "monk2": Paper(169, 17, 0.190, 70.2, 5.8, 47.8, 9.1, 74.0),
    "monk3": Paper(92, 17, 0.030, 78.1, 4.8, 23.4, 0.210, 82.6),
    "wine": Paper(178, 1276, 0.600, 89.3, 3, 7.8, 1.2, 92.0),
    "balance-scale": Paper(625, 20, 50.0, 93.0, 8, 268, 183.0, 92.6),
    "car": Paper(1728, 21, 127.0, 98.8, 8, 143, 217.0, 98.8),
}
SPLIT_DIR = Path(odtk.datasets.__file__).parent / "data" / "consistent"
CAR = "consistent/car"  # run whole, no splits, with the paper's two classes
THRESHOLDS = "values"  # the authors' binarisation: x > v for every training value v but the largest
DATASETS = ["iris", "monk1", "monk2", "monk3", "wine", "car", "balance-scale"]  # slowest last
MODELS = ("sat-depth", "sat-size")  # DT_depth, DT_size
DEFAULTS = {"datasets": DATASETS, "splits": [0, 1, 2, 3, 4], "time_limit": 1800.0}
QUICK = {"datasets": ["iris", "monk1", "monk3"], "splits": [0], "time_limit": 20.0}
INTEGERS = ["split", "test_rows", "booleans", "depth", "nodes", "rounds", "examples_encoded",
            "variables", "clauses"]  # missing for some runs, so written as nullable integers
COLUMNS = ["dataset", "split", "model", "status", "train_rows", "test_rows", "booleans", "depth",
           "nodes", "rounds", "examples_encoded", "variables", "clauses", "search_seconds",
           "cpu_seconds", "wall_seconds", "train_accuracy", "test_accuracy", "check", "message"]


# --------------------------------------------------------------------------- arguments
def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The options; ``--quick`` changes the defaults of those not given."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="three small datasets, split 0, seconds")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS)
    parser.add_argument("--splits", nargs="+", type=int, choices=range(5), help="train/test splits 0..4")
    parser.add_argument("--time-limit", type=float, help="seconds per odtk.solve call")
    parser.add_argument("--solver", default="minisat22", help="SAT solver (python-sat name)")
    parser.add_argument("--encoding", default="incremental", choices=["incremental", "all-at-once"])
    parser.add_argument("--examples-per-round", type=int, default=1,
                        help="speed option: misclassified examples added per SAT call (paper: 1)")
    parser.add_argument("--keep-examples", action="store_true",
                        help="speed option: start depth k + 1 with the examples of depth k")
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results"))
    parser.set_defaults(**(QUICK if "--quick" in argv else DEFAULTS))
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- data
def read_split(name: str, part: str, split: int) -> Dataset:
    """The ``train`` or ``test`` part of a bundled split."""
    frame = read_csv(SPLIT_DIR / f"{name}.csv.{part}{split}.csv")
    return from_dataframe(frame, frame.columns[-1], name=f"{name}.{part}{split}")


def paper_car() -> Dataset:
    """The paper's "Car": ``consistent/car`` with two classes, unacc and acceptable (acc, good
    or vgood), as in the authors' ``data/car.csv``."""
    data = load_dataset(CAR)
    target = data.target.where(data.target == "unacc", "acceptable")
    return dataclasses.replace(data, name="car (2 classes)", target=target)


def instances(name: str, splits: list[int]) -> list[tuple[int | None, Dataset, Dataset | None]]:
    """(split, training data, test data) of every requested split; car: the whole dataset."""
    if name == "car":
        return [(None, paper_car(), None)]
    return [(i, read_split(name, "train", i), read_split(name, "test", i)) for i in splits]


# --------------------------------------------------------------------------- runs
def one_line(exc: BaseException) -> str:
    """The exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run(model: str, train: Dataset, test: Dataset | None, args: argparse.Namespace) -> dict[str, Any]:
    """One ``odtk.solve`` as a row; odtk errors become a status and a message."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not proven optimal" is in the status column
            result = odtk.solve(model, train, solver=args.solver, time_limit=args.time_limit,
                                thresholds=THRESHOLDS, encoding=args.encoding,
                                examples_per_round=args.examples_per_round,
                                keep_examples="on" if args.keep_examples else "off")
    except OdtkError as exc:
        return {"status": "no tree" if isinstance(exc, SolveError) else "error",
                "wall_seconds": time.perf_counter() - start, "message": one_line(exc)}
    search = result.steps["search"]
    accuracy = None if test is None else float(np.mean(result.model.predict(test.features)
                                                       == test.target.to_numpy()))
    return {"status": result.termination, "booleans": len(result.model.encoder.columns_),
            **{key: search[key] for key in ("depth", "nodes", "rounds", "examples_encoded",
                                            "variables", "clauses")},
            "search_seconds": search["seconds"], "cpu_seconds": search["cpu_seconds"],
            "wall_seconds": result.wall_time,
            "train_accuracy": result.train_accuracy, "test_accuracy": accuracy, "message": ""}


def problems(rows: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with one split's runs: a tree erring on training rows, or DT_size's
    proven tree at another depth than DT_depth's or with more nodes."""
    found = [f"{model}: training accuracy {row['train_accuracy']:.4f}, not 1"
             for model, row in rows.items() if "train_accuracy" in row and row["train_accuracy"] != 1.0]
    depth, size = rows["sat-depth"], rows["sat-size"]
    if depth["status"] == size["status"] == "optimal":
        if size["depth"] != depth["depth"]:
            found.append(f"DT_size depth {size['depth']} differs from DT_depth's k = {depth['depth']}")
        if size["nodes"] > depth["nodes"]:
            found.append(f"DT_size has {size['nodes']} nodes, DT_depth's tree {depth['nodes']}")
    return found


def run_dataset(name: str, args: argparse.Namespace, table: list[dict[str, Any]], csv: Path) -> int:
    """Both models on every split of ``name``, appended to ``table``; returns the mismatches."""
    mismatches = 0
    for split, train, test in instances(name, args.splits):
        booleans = len(FeatureEncoder(thresholds=THRESHOLDS).fit(train).columns_)  # also for runs without a tree
        base = {"dataset": name, "split": split, "train_rows": train.n_rows,
                "test_rows": None if test is None else test.n_rows, "booleans": booleans}
        rows = {model: {**base, "model": model, **run(model, train, test, args)} for model in MODELS}
        found = problems(rows)
        for row in rows.values():
            row["check"] = "MISMATCH" if found else "ok"
            progress(row)
        for problem in found:
            print(f"!!! MISMATCH {name} split {split}: {problem}", flush=True)
        mismatches += len(found)
        table.extend(rows.values())
        frame(table).to_csv(csv, index=False)
    return mismatches


def frame(table: list[dict[str, Any]]) -> pd.DataFrame:
    """The runs as a DataFrame, integer columns as integers."""
    return pd.DataFrame(table, columns=COLUMNS).astype({column: "Int64" for column in INTEGERS})


def progress(row: dict[str, Any]) -> None:
    """One line per run on stderr."""
    detail = (row["message"] if row["message"] else
              f"depth {row['depth']} nodes {row['nodes']} rounds {row['rounds']} "
              f"expl {row['examples_encoded']} cpu {row['cpu_seconds']:.2f} s wall {row['wall_seconds']:.2f} s")
    print(f"  {row['dataset']} split {row['split']} {row['model']}: {row['status']}, {detail}",
          file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- table
@dataclass(frozen=True)
class Column:
    """A metric of the table: a paper cell and an odtk cell, or an odtk cell only."""

    title: str
    width: int
    paper: bool = True

    @property
    def cells(self) -> list[str]:
        return ["paper", "odtk"] if self.paper else ["odtk"]

    @property
    def span(self) -> int:
        return len(self.cells) * (self.width + 1) - 1


BLOCKS = {
    "": [Column("S", 5), Column("B", 6)],
    "DT_depth": [Column("done", 4, False), Column("cpu", 7), Column("acc %", 5), Column("k", 5),
                 Column("rounds", 6, False), Column("expl", 5, False)],
    "DT_size": [Column("done", 4, False), Column("cpu", 7), Column("acc %", 5), Column("n", 5),
                Column("rounds", 6, False), Column("expl", 5, False)],
}
NAME_WIDTH = 14


def line(name: str, blocks: list[list[str]]) -> str:
    """A table line: ``name`` and every block's cells, right-aligned to their widths."""
    parts = []
    for cells, columns in zip(blocks, BLOCKS.values()):
        widths = [column.width for column in columns for _ in column.cells]
        parts.append(" ".join(f"{cell:>{width}}" for cell, width in zip(cells, widths)))
    return f"{name:{NAME_WIDTH}}" + " | ".join(parts)


def header() -> str:
    """Three lines: block titles, metric titles, paper / odtk."""
    spans = [sum(c.span for c in columns) + len(columns) - 1 for columns in BLOCKS.values()]
    titles = " | ".join(f"{title:^{span}}" for title, span in zip(BLOCKS, spans))
    metrics = [" ".join(f"{c.title:{'^' if c.paper else '>'}{c.span}}" for c in columns)
               for columns in BLOCKS.values()]
    cells = [[cell for c in columns for cell in c.cells] for columns in BLOCKS.values()]
    lines = [" " * NAME_WIDTH + titles, " " * NAME_WIDTH + " | ".join(metrics), line("dataset", cells)]
    return "\n".join(text.rstrip() for text in lines)


def number(value: float | None) -> str:
    """A count or mean: whole numbers without decimals, others with one; '-' if missing."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.0f}" if value == round(value) else f"{value:.1f}"


def duration(seconds: float | None) -> str:
    """Seconds as the paper writes them: 18 ms, 9.1 s, 183 s."""
    if seconds is None or math.isnan(seconds):
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"


def percent(value: float | None) -> str:
    """A percentage with one decimal; '-' if missing."""
    return "-" if value is None or math.isnan(value) else f"{value:.1f}"


def model_cells(runs: pd.DataFrame, model: str, paper: Paper | None) -> list[str]:
    """done, time, accuracy, k or n (paper, odtk), rounds and expl of one model's runs."""
    mine = runs[runs.model == model]
    proven = mine[mine.status == "optimal"]
    mean = {key: proven[key].astype(float).mean() if len(proven) else None
            for key in ("cpu_seconds", "test_accuracy", "depth", "nodes", "rounds", "examples_encoded")}
    size = model == "sat-size"
    if paper is None:
        seconds = accuracy = optimum = None
    elif size:
        seconds, accuracy, optimum = paper.size_seconds, paper.size_accuracy, paper.n
    else:
        seconds, accuracy, optimum = paper.depth_seconds, paper.depth_accuracy, paper.k
    ours = 100 * mean["test_accuracy"] if mean["test_accuracy"] is not None else None
    return [f"{len(proven)}/{len(mine)}", duration(seconds), duration(mean["cpu_seconds"]),
            percent(accuracy), percent(ours), number(optimum), number(mean["nodes" if size else "depth"]),
            number(mean["rounds"]), number(mean["examples_encoded"])]


def table_row(name: str, runs: pd.DataFrame) -> str:
    """One dataset: the paper's figures beside odtk's averages over the proven runs."""
    paper = PAPER.get(name)
    data = [number(paper.examples if paper else None), number(runs.train_rows.mean()),
            number(paper.booleans if paper else None), number(runs.booleans.astype(float).mean())]
    return line(name, [data, model_cells(runs, "sat-depth", paper), model_cells(runs, "sat-size", paper)])


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    csv = args.output_dir / "sat_inference.csv"
    start = time.perf_counter()
    print(f"solver {args.solver}, encoding {args.encoding}, examples per round "
          f"{args.examples_per_round}, keep examples {'on' if args.keep_examples else 'off'}, "
          f"thresholds {THRESHOLDS}, time limit {args.time_limit:g} s, splits {' '.join(map(str, args.splits))}\n")
    print(header(), flush=True)
    table: list[dict[str, Any]] = []
    mismatches = 0
    for name in args.datasets:
        mismatches += run_dataset(name, args, table, csv)
        runs = frame(table)
        print(table_row(name, runs[runs.dataset == name]), flush=True)
    runs = frame(table)
    print(f"\n{len(runs)} runs in {time.perf_counter() - start:.0f} s; table: {csv}")
    print(runs.groupby("model", sort=False).status.value_counts().unstack(fill_value=0).to_string())
    if mismatches:
        print(f"\n{mismatches} MISMATCH(ES)")
        return 1
    print("\nchecks: every tree classifies its training rows; DT_size keeps DT_depth's k")
    return 0


if __name__ == "__main__":
    sys.exit(main())
