"""ODD's strengthened MILP (``strengthening="on"``, the default) against the paper's model
(``strengthening="off"``), in the same run.

Instances: seeded samples of ``--rows`` rows (12–20) of several bundled UCI datasets, on the
skeletons 1-2-2 and 1-2-4, each dataset once univariate with α = 0 and once multivariate with
α = 0.01 per skeleton (24 instances by default). Each instance is solved by ``odtk.solve`` with
both forms on every requested solver, one after the other (the order alternates between
instances): the constructive heuristic runs first with ``--heuristic-time`` seconds (0, the
default, runs its one deterministic start, so both forms get the same start and cutoff), then
the MILP with ``--time-limit`` seconds. Printed per instance and solver: status, optimum and
solver seconds (Pyomo build and hand-off excluded) of both forms, B&B nodes, and the ratio
new / old.

The summary gives per solver the geometric mean of the time ratio new / old over all
instances, a solve that reaches the time limit counting as the time limit (an instance both
forms leave unsolved has ratio 1; the mean then understates the gain of a form that proves
what the other cannot), and over the instances both forms proved. The forms have the same
optimum: two proven optima that differ, or an incumbent better than the other form's proven
optimum, print ``MISMATCH`` and the exit status is 1.

    python benchmarks/odd_speed.py [--solvers highs cbc scip] [--datasets …] [--rows 16]
                                   [--skeletons 1-2-2 1-2-4] [--time-limit 120]
                                   [--heuristic-time 0] [--csv PATH]
"""
from __future__ import annotations

import argparse
import math
import sys
import warnings

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import Dataset, load_dataset
from odtk.exceptions import OdtkWarning
from odtk.solvers import available_solvers

DATASETS = ["uci/balance-scale", "uci/hayes-roth", "uci/blood-transfusion-service", "uci/monks2",
            "uci/habermans-survival", "uci/iris"]
SETTINGS = [{"univariate": True, "alpha": 0.0}, {"univariate": False, "alpha": 0.01}]
TOLERANCE = 1e-6


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solvers", nargs="+", default=["highs"])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--rows", type=int, default=16, help="rows sampled per instance (12–20)")
    parser.add_argument("--skeletons", nargs="+", default=["1-2-2", "1-2-4"])
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per solve")
    parser.add_argument("--heuristic-time", type=float, default=0.0,
                        help="heuristic seconds (0: its single deterministic start)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--csv", default=None, help="write the table here too")
    return parser.parse_args(argv)


def instances(args: argparse.Namespace) -> list[dict]:
    """(dataset sample, skeleton, setting) of every instance; sample k uses seed k."""
    found = []
    for seed, name in enumerate(args.datasets):
        full = load_dataset(name)
        rows = np.random.default_rng(seed).choice(full.n_rows, args.rows, replace=False)
        sample = full.subset(np.sort(rows))
        for skeleton in args.skeletons:
            for setting in SETTINGS:
                found.append({"dataset": name.split("/")[-1], "data": sample, "skeleton": skeleton, **setting})
    return found


def solve(data: Dataset, instance: dict, solver: str, strengthening: str, args: argparse.Namespace) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OdtkWarning)  # unproven results are reported in the table
        result = odtk.solve("odd", data, skeleton=instance["skeleton"], solver=solver,
                            univariate=instance["univariate"], alpha=instance["alpha"],
                            strengthening=strengthening, time_limit=args.time_limit,
                            threads=args.threads, seed=0, heuristic_time=args.heuristic_time)
    milp = result.steps["milp"]
    return {"status": result.termination, "objective": result.objective, "bound": milp["bound"],
            "nodes": milp["nodes"], "seconds": result.solve_time}


def benchmark(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    solvers = [s for s in args.solvers if s in available_solvers()]
    for number, instance in enumerate(instances(args)):
        for solver in solvers:
            order = ("off", "on") if number % 2 == 0 else ("on", "off")
            runs = {form: solve(instance["data"], instance, solver, form, args) for form in order}
            row = {key: value for key, value in instance.items() if key != "data"}
            row.update(solver=solver, rows=instance["data"].n_rows,
                       **{f"{key}_{form}": value for form, run in runs.items() for key, value in run.items()})
            row["ratio"] = capped(row["seconds_on"], args.time_limit) / capped(row["seconds_off"], args.time_limit)
            row["mismatch"] = mismatch(runs["off"], runs["on"])
            rows.append(row)
            print(line(row), flush=True)
    return pd.DataFrame(rows)


def capped(seconds: float, limit: float) -> float:
    return max(min(seconds, limit), 1e-3)


def mismatch(old: dict, new: dict) -> bool:
    """Two proven optima differ, or one form's incumbent beats the other's proven optimum."""
    for proven, other in ((old, new), (new, old)):
        if proven["status"] == "optimal" and other["objective"] < proven["objective"] - TOLERANCE:
            return True
    both = old["status"] == new["status"] == "optimal"
    return both and abs(old["objective"] - new["objective"]) > TOLERANCE


def line(row: dict) -> str:
    kind = "uni" if row["univariate"] else "multi"
    return (f"{row['dataset']:>24} {row['skeleton']:>6} {kind:>5} α={row['alpha']:<4} {row['solver']:>5}: "
            f"old {row['status_off']:>10} {row['objective_off']:.4f} {row['seconds_off']:7.1f} s "
            f"nodes {row['nodes_off']} | new {row['status_on']:>10} {row['objective_on']:.4f} "
            f"{row['seconds_on']:7.1f} s nodes {row['nodes_on']} | new/old {row['ratio']:.2f}"
            + ("  MISMATCH" if row["mismatch"] else ""))


def geometric_mean(values: pd.Series) -> float:
    return math.exp(np.log(values).mean()) if len(values) else float("nan")


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    table = benchmark(args)
    if args.csv:
        table.to_csv(args.csv, index=False)
    for solver, group in table.groupby("solver"):
        proved = group[(group.status_off == "optimal") & (group.status_on == "optimal")]
        print(f"{solver}: {len(group)} instances; proved old {int((group.status_off == 'optimal').sum())}, "
              f"new {int((group.status_on == 'optimal').sum())}; geometric-mean time ratio new/old "
              f"{geometric_mean(group.ratio):.2f} (time limit counted as its value), "
              f"{geometric_mean(proved.ratio):.2f} over the {len(proved)} both proved")
    bad = table[table.mismatch]
    for _, row in bad.iterrows():
        print(f"MISMATCH {row.dataset} {row.skeleton} univariate={row.univariate} α={row.alpha} "
              f"{row.solver}: old {row.objective_off} ({row.status_off}) vs new {row.objective_on} ({row.status_on})")
    if bad.empty:
        print("every optimum agrees")
    return 1 if len(bad) else 0


if __name__ == "__main__":
    sys.exit(main())
