"""The effect of FlowOCT's cuts (4)/(4′) (``cuts="on"``) against ``cuts="off"``, same run.

For every (dataset, depth, λ) of the FlowOCT paper's binarised datasets:

* root: the LP-relaxation bound without cuts and after odtk's root cut loop (HiGHS), the cuts
  and rounds of the loop and its seconds;
* per solver, one ``odtk.solve`` with the cuts off and one with them on (same time limit,
  threads and seed): status, objective, bound, B&B nodes, solver seconds, and the ratios
  on/off of nodes and seconds. Gurobi and CPLEX runs over their free licences' size limit are
  skipped with the reason. Cuts are valid, so proven optima must agree (``MISMATCH`` and exit
  status 1 otherwise).

The summary gives per solver the geometric mean of the time ratio over the instances both
settings proved optimal. Timings are for comparison within this run only.

    python benchmarks/flowoct_cuts.py [--datasets …] [--depths 2 3] [--lambdas 0 0.1] [--rows N]
                                      [--solvers highs gurobi cplex] [--time-limit 60] [--csv PATH]
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import LicenceLimitError
from odtk.formulations import flowoct
from odtk.skeletons import tree_skeleton
from odtk.solvers import available_solvers, to_standard_form
from odtk.solvers.root_cuts import root_cut_loop
from odtk.solvers.standard_form import lazy_rows

DATASETS = ["flowoct/monk1", "flowoct/monk2", "flowoct/monk3", "flowoct/car_evaluation"]


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--lambdas", nargs="+", type=float, default=[0.0, 0.1])
    parser.add_argument("--solvers", nargs="+", default=["highs", "gurobi", "cplex"])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve")
    parser.add_argument("--threads", type=int, default=None,
                        help="solver threads (default: the solver's; HiGHS takes one value per process)")
    parser.add_argument("--rows", type=int, default=None,
                        help="a seeded random subsample of this many rows (Gurobi's and CPLEX's free licences)")
    parser.add_argument("--csv", default=None, help="write the table here too")
    return parser.parse_args(argv)


def data(name: str, rows: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    dataset = load_dataset(name)
    X = dataset.features.to_numpy().astype(int)
    labels, y = np.unique(dataset.target.to_numpy(), return_inverse=True)
    if rows is not None and rows < len(y):
        keep = np.sort(np.random.default_rng(0).choice(len(y), rows, replace=False))
        X, y = X[keep], y[keep]
    return X, y, len(labels)


def root_bounds(X: np.ndarray, y: np.ndarray, classes: int, depth: int, lam: float,
                time_limit: float) -> dict:
    """LP bound without cuts, after the root cut loop, and the loop's cuts, rounds, seconds."""
    instance = flowoct.build_model().create_instance(
        flowoct.make_data(X, y, tree_skeleton(depth), classes, lam=lam))
    form = to_standard_form(instance)
    form.user_cuts = lazy_rows(form, lambda: flowoct.separate_cuts(instance))
    report = root_cut_loop(form, deadline=time.perf_counter() + time_limit)
    return {"lp": report.bounds[0], "lp_cuts": report.bounds[-1], "root_cuts": report.cuts,
            "root_rounds": report.rounds, "root_s": report.seconds}


def solve(X: np.ndarray, y: np.ndarray, depth: int, lam: float, solver: str, cuts: str,
          args: argparse.Namespace) -> dict:
    try:
        result = odtk.solve("flowoct", (X, y), depth=depth, lam=lam, solver=solver, cuts=cuts,
                            time_limit=args.time_limit, threads=args.threads, seed=0)
    except LicenceLimitError as exc:
        return {"status": "skipped", "reason": str(exc).split(".")[0]}
    milp = result.steps["milp"]
    return {"status": result.termination, "objective": result.objective, "bound": milp["bound"],
            "nodes": milp["nodes"], "seconds": milp["seconds"],
            "cuts": milp.get("user_cuts", {}).get("cuts")}


def benchmark(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    solvers = [s for s in args.solvers if s in available_solvers()]
    for name in args.datasets:
        X, y, classes = data(name, args.rows)
        for depth in args.depths:
            for lam in args.lambdas:
                root = root_bounds(X, y, classes, depth, lam, args.time_limit)
                for solver in solvers:
                    off = solve(X, y, depth, lam, solver, "off", args)
                    on = solve(X, y, depth, lam, solver, "on", args)
                    row = {"dataset": name.split("/")[-1], "rows": len(y), "depth": depth, "lambda": lam,
                           "solver": solver, **root,
                           **{f"{k}_off": v for k, v in off.items()}, **{f"{k}_on": v for k, v in on.items()}}
                    if off["status"] != "skipped" and on["status"] != "skipped":
                        row["nodes_ratio"] = _ratio(on["nodes"], off["nodes"])
                        row["time_ratio"] = _ratio(on["seconds"], off["seconds"])
                    rows.append(row)
                    print(_line(row), flush=True)
    return pd.DataFrame(rows)


def _ratio(a, b) -> float:
    return float("nan") if a is None or b is None or b == 0 else a / b


def _line(row: dict) -> str:
    if row.get("status_off") == "skipped":
        return f"{row['dataset']:>15} d={row['depth']} λ={row['lambda']} {row['solver']}: skipped ({row['reason_off']})"
    return (f"{row['dataset']:>15} d={row['depth']} λ={row['lambda']} {row['solver']:>6}: "
            f"LP {row['lp']:.2f} → {row['lp_cuts']:.2f} ({row['root_cuts']} cuts, {row['root_rounds']} rounds, "
            f"{row['root_s']:.1f} s) | off {row['status_off']} {row['objective_off']} "
            f"nodes {row['nodes_off']} {row['seconds_off']:.1f} s | on {row['status_on']} {row['objective_on']} "
            f"nodes {row['nodes_on']} {row['seconds_on']:.1f} s cuts {row['cuts_on']} | "
            f"ratio nodes {row.get('nodes_ratio', float('nan')):.2f} time {row.get('time_ratio', float('nan')):.2f}")


def mismatches(table: pd.DataFrame) -> pd.DataFrame:
    if "status_on" not in table:
        return table.iloc[:0]
    both = table[(table.status_off == "optimal") & (table.status_on == "optimal")]
    return both[(both.objective_off - both.objective_on).abs() > 1e-6]


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    table = benchmark(args)
    if args.csv:
        table.to_csv(args.csv, index=False)
    for solver, group in table.groupby("solver"):
        if "time_ratio" not in group:
            continue
        proved = group[(group.get("status_off") == "optimal") & (group.get("status_on") == "optimal")]
        ratios = proved.time_ratio.dropna()
        mean = math.exp(np.log(ratios).mean()) if len(ratios) else float("nan")
        print(f"{solver}: {len(proved)} instances proved both ways; geometric-mean time ratio on/off {mean:.2f}")
    bad = mismatches(table)
    for _, row in bad.iterrows():
        print(f"MISMATCH {row.dataset} d={row.depth} λ={row['lambda']} {row.solver}: "
              f"{row.objective_off} vs {row.objective_on}")
    return 1 if len(bad) else 0


if __name__ == "__main__":
    sys.exit(main())
