"""DT_depth and DT_size, in kind: the smallest trees consistent with the training data, by SAT.

Reproduces in kind the experiment of F. Avellaneda, "Efficient Inference of Optimal Decision
Trees" (AAAI 2020): on the Verwer & Zhang datasets, DT_depth finds the smallest depth k of a
tree that classifies every training example correctly, and DT_size the fewest nodes n of such a
tree at depth k, both by SAT calls on a growing subset of the examples (Algorithm 3: examples
are added to the encoding only when the current tree misclassifies them). odtk runs them as
``odtk.solve("sat-depth")`` and ``odtk.solve("sat-size")`` (MiniSat 2.2 through python-sat) on
the training parts of the paper's five train/test splits (bundled under
``odtk/datasets/data/consistent/``) and prints per dataset odtk's averages over the calls that
proved their tree optimal (``proven``: the ``splits`` on which both did) beside the paper's
averages: training examples S, depth k (from DT_depth), nodes n
(from DT_size, leaves included), the examples each encoded in the end (``*_expl``, odtk only)
and the seconds per call (``*_sec``: odtk's wall time, encoding and checks included; the
paper's MiniSat times on an Intel i7-2600K). Monks are one-hot encoded (the paper's B Boolean
features), iris and wine thresholded at the midpoints of consecutive training values.

``consistent`` is "yes" when every tree classifies all its training rows and, on every split
both proved, DT_size's tree has DT_depth's depth; otherwise "NO" and exit status 1. The paper's
figures are from the README of the authors' repository (FlorentAvellaneda/InferDT); its S is
not always the size of these training splits, so k and n can differ.

Run:  python examples/sat_paper.py                       # iris, monk1, monk3: seconds
      python examples/sat_paper.py --datasets iris monk1 monk2 monk3 wine balance-scale --time-limit 300
      (about ten minutes for the first five; balance-scale reaches the limit on every call)
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import NamedTuple

import numpy as np
import pandas as pd

import odtk
from _common import print_table, quiet, solve_row
from odtk.datasets import Dataset, from_dataframe
from odtk.datasets.catalog import data_dir


class Paper(NamedTuple):
    """The paper's averages over five splits: S, k, n, and DT_depth's and DT_size's seconds."""

    examples: int
    k: float
    n: float
    depth_seconds: float
    size_seconds: float


PAPER = {  # Avellaneda (AAAI 2020), "Verwer and Zhang datasets"
    "iris": Paper(113, 3, 10.6, 0.018, 0.030),
    "monk1": Paper(124, 4.4, 17, 0.024, 0.080),
    "monk2": Paper(169, 5.8, 47.8, 0.190, 9.1),
    "monk3": Paper(92, 4.8, 23.4, 0.030, 0.210),
    "wine": Paper(178, 3, 7.8, 0.600, 1.2),
    "balance-scale": Paper(625, 8, 268, 50.0, 183.0),
}
ONE_HOT = {"monk1", "monk2", "monk3", "balance-scale"}  # attributes encoded one Boolean per value


def training_split(name: str, split: int) -> Dataset:
    """Training part ``split`` (0–4) of a bundled Verwer & Zhang dataset."""
    with (data_dir() / "consistent" / f"{name}.csv.train{split}.csv").open("rb") as handle:
        frame = pd.read_csv(handle)
    categorical = list(frame.columns[:-1]) if name in ONE_HOT else None
    return from_dataframe(frame, frame.columns[-1], categorical=categorical, name=f"{name}.train{split}")


def search(model: str, data: Dataset, args: argparse.Namespace) -> dict:
    """One DT_depth or DT_size call: status, depth, nodes, examples encoded, seconds."""
    result = odtk.solve(model, data, solver=args.solver, time_limit=args.time_limit)
    found = result.steps["search"]
    return {"status": result.termination, "depth": found["depth"], "nodes": found["nodes"],
            "expl": found["examples_encoded"], "seconds": result.wall_time,
            "consistent": result.train_accuracy == 1.0}


def mean(runs: list[dict], key: str) -> float:
    """Average of ``key`` over the proven runs (NaN if none)."""
    values = [run[key] for run in runs if run["status"] == "optimal"]
    return float(np.mean(values)) if values else math.nan


def dataset_row(name: str, args: argparse.Namespace) -> dict:
    """Both searches on every split of ``name``, averaged, beside the paper's averages."""
    depth_runs, size_runs, rows = [], [], []
    for split in args.splits:
        data = training_split(name, split)
        rows.append(data.n_rows)
        depth_runs.append(solve_row(lambda: search("sat-depth", data, args)))
        size_runs.append(solve_row(lambda: search("sat-size", data, args)))
    paper = PAPER[name]
    consistent = all(run.get("consistent", True) for run in depth_runs + size_runs) and all(
        a["depth"] == b["depth"] for a, b in zip(depth_runs, size_runs) if a["status"] == b["status"] == "optimal")
    return {"dataset": name, "splits": len(args.splits),
            "proven": sum(a["status"] == b["status"] == "optimal" for a, b in zip(depth_runs, size_runs)),
            "paper_S": paper.examples, "S": float(np.mean(rows)),
            "paper_k": paper.k, "k": mean(depth_runs, "depth"), "paper_n": paper.n, "n": mean(size_runs, "nodes"),
            "depth_expl": mean(depth_runs, "expl"), "size_expl": mean(size_runs, "expl"),
            "paper_depth_sec": paper.depth_seconds, "depth_sec": mean(depth_runs, "seconds"),
            "paper_size_sec": paper.size_seconds, "size_sec": mean(size_runs, "seconds"),
            "consistent": "yes" if consistent else "NO"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["iris", "monk1", "monk3"], choices=list(PAPER),
                        help="Verwer & Zhang datasets with bundled splits")
    parser.add_argument("--splits", nargs="+", type=int, default=[0, 1, 2, 3, 4], choices=range(5),
                        help="train/test splits to run")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per odtk.solve call")
    parser.add_argument("--solver", default="minisat22", help="SAT solver (a python-sat name) or a MILP solver")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    rows = [dataset_row(name, args) for name in args.datasets]
    print_table(rows, f"DT_depth and DT_size ({args.solver}): averages over the proven splits, "
                      f"{args.time_limit:g} s per call")
    return 1 if any(row["consistent"] == "NO" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
