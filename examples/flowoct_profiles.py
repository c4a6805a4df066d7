"""FlowOCT in-sample solve profiles, in kind: instances solved to optimality within time t.

Reproduces in kind the in-sample experiment of Aghaei, Gómez & Vayanos, "Strong Optimal
Classification Trees" (arXiv:2103.15965): every instance (dataset, depth, λ) is solved by FlowOCT
(formulation (1)), BendersOCT (its Benders decomposition), OCT (Bertsimas & Dunn) and BinOCT
(Verwer & Zhang, which has no λ: it runs once per dataset and depth and counts as the λ = 0
instance), and the paper plots how many instances each method solves to optimality within time
t. Here, per method: the instances run, those solved to optimality, those solved within each
time mark (solver seconds, as the paper's ``solving_time``; the time limit is always a mark), the
median solver time and the mean relative gap of the runs stopped at the limit with a tree.
``paper_*`` counts the paper's own runs of the same datasets, depths and λ (bundled
``flowoct/paper_results/train.csv``: five 50 % training samples per instance, Gurobi, or CPLEX
for BinOCT, one-hour limit): ``paper_n`` runs, ``paper_<t>s`` solved within each mark,
``paper_opt`` solved within the hour. Its instances are the training halves, odtk's the whole
datasets (or ``--rows`` random rows): odtk's are twice as large.

At equal λ the four objectives are the same ((1−λ)·correct samples − λ·splits; BinOCT's correct
samples at λ = 0), so the proven optima of an instance must agree: ``agree`` is "NO" for a method
whose bound (its optimum, if proven) lies below a tree another method found on the same instance,
and the script then exits with status 1.

The paper ran twelve datasets, depths 2–5, λ ∈ {0, 0.1, …, 0.9} and a one-hour limit; the
defaults (three small datasets, depths 2 and 3, λ = 0, 10 s) finish in a few minutes, and most
depth-3 solves stop at the limit.

Run:  python examples/flowoct_profiles.py
      python examples/flowoct_profiles.py --datasets flowoct/monk2 flowoct/spect flowoct/breast-cancer \\
             --depths 2 3 4 --lambdas 0 0.5 0.9 --marks 1 10 60 --time-limit 600 --solver gurobi
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys

import pandas as pd

import odtk
from _common import contradicted, load_rows, print_table, proven_bound, quiet, solve_row
from odtk.datasets import Dataset
from odtk.datasets.catalog import data_dir

METHODS = {"flowoct": "FlowOCT", "benders": "BendersOCT", "oct": "OCT", "binoct": "BinOCT"}  # odtk key → paper's name
PAPER_OPTIMAL = {2, 101, 102}  # Gurobi OPTIMAL; CPLEX MIP optimal, optimal within tolerance


def marks(args: argparse.Namespace) -> list[float]:
    """The time marks of the profile: those asked for below the limit, and the limit."""
    return sorted({mark for mark in args.marks if mark < args.time_limit} | {args.time_limit})


def paper_profile(method: str, args: argparse.Namespace) -> dict:
    """The paper's in-sample runs of ``method`` on the chosen datasets, depths and λ, counted."""
    with (data_dir() / "flowoct" / "paper_results" / "train.csv").open("rb") as handle:
        runs = pd.read_csv(handle)
    lambdas = [0.0] if method == "binoct" else args.lambdas
    runs = runs[(runs["approach"] == METHODS[method]) & runs["lambda"].isin(lambdas)
                & runs["dataset"].isin([name.split("/")[-1] for name in args.datasets])
                & runs["depth"].astype(str).isin([str(depth) for depth in args.depths])]
    solved = runs[runs["status"].isin(PAPER_OPTIMAL)]
    return {"paper_n": len(runs),
            **{f"paper_{mark:g}s": int((solved["solving_time"] <= mark).sum()) for mark in marks(args)},
            "paper_opt": len(solved)}


def solve_run(method: str, data: Dataset, depth: int, lam: float, args: argparse.Namespace) -> dict:
    """One solve as a record: status, solver seconds, objective, bound and gap."""
    extra = {} if method == "binoct" else {"lam": lam}
    result = odtk.solve(method, data, depth=depth, solver=args.solver, time_limit=args.time_limit,
                        seed=args.seed, **extra)
    return {"status": result.termination, "seconds": result.solve_time, "objective": result.objective,
            "bound": proven_bound(result), "gap": result.gap}


def run_all(args: argparse.Namespace) -> list[dict]:
    """Every method on every instance; BinOCT once per dataset and depth (its λ is 0)."""
    runs = []
    for name in args.datasets:
        data = load_rows(name, args.seed, args.rows)
        for depth in args.depths:
            for method in METHODS:
                for lam in [0.0] if method == "binoct" else args.lambdas:
                    record = solve_row(lambda: solve_run(method, data, depth, lam, args))
                    runs.append({"method": method, "instance": (name, depth, lam), **record})
    return runs


def check(runs: list[dict]) -> None:
    """Mark every run whose bound another method's tree beats on the same instance."""
    solved = [run for run in runs if run["status"] != "error"]
    for instance in {run["instance"] for run in solved}:
        same = [run for run in solved if run["instance"] == instance]
        for run, bad in zip(same, contradicted([(run["objective"], run["bound"]) for run in same])):
            run["contradicted"] = bad


def profile(method: str, runs: list[dict], args: argparse.Namespace) -> dict:
    """The table row of one method."""
    mine = [run for run in runs if run["method"] == method]
    optimal = [run["seconds"] for run in mine if run["status"] == "optimal"]
    gaps = [run["gap"] for run in mine if run["status"] == "time_limit" and run["gap"] is not None]
    seconds = [run["seconds"] for run in mine if "seconds" in run]
    return {"method": METHODS[method], "instances": len(mine), "optimal": len(optimal),
            **{f"in_{mark:g}s": sum(time <= mark for time in optimal) for mark in marks(args)},
            "median_s": statistics.median(seconds) if seconds else math.nan,
            "gap_unsolved": statistics.mean(gaps) if gaps else math.nan, **paper_profile(method, args),
            "agree": "NO" if any(run.get("contradicted") for run in mine) else "yes"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--datasets", nargs="+",
                        default=["flowoct/monk1", "flowoct/monk3", "flowoct/house-votes-84"],
                        help="bundled binarised datasets (the flowoct/ collection is the paper's)")
    parser.add_argument("--rows", type=int, default=None, help="solve on this many random rows (default: all)")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3], help="tree depths")
    parser.add_argument("--lambdas", nargs="+", type=float, default=[0.0],
                        help="λ values; λ weighs splits against correct samples, (1.1)")
    parser.add_argument("--marks", nargs="+", type=float, default=[1.0, 5.0],
                        help="time marks in seconds (the time limit is always one)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--seed", type=int, default=0, help="row sample and solver seed")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    runs = run_all(args)
    check(runs)
    rows = [profile(method, runs, args) for method in METHODS]
    data = "all rows" if args.rows is None else f"{args.rows} random rows"
    print_table(rows, f"In-sample solve profiles ({data}, λ {' '.join(f'{lam:g}' for lam in args.lambdas)}): "
                      f"{args.solver}, {args.time_limit:g} s per solve, seed {args.seed}")
    return 1 if any(row["agree"] == "NO" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
