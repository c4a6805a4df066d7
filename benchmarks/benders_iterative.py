"""BendersOCT's iterative scheme against FlowOCT, on the solvers without lazy callbacks.

On HiGHS and CBC, BendersOCT is solved by repeated master solves (``odtk.decomposition``):
the instance is compiled once and each round's cuts become rows of that model (HiGHS keeps
one model; CBC re-reads the grown form). FlowOCT, the same problem in one MILP, is the
baseline measured in the same run: the table gives both CPU times (this process and its
children, so CBC's subprocess counts), their ratio Benders / FlowOCT, BendersOCT's rounds
and cuts, and per solver the geometric mean of the ratios. Both must reach the same proven
optimum (``MISMATCH`` and exit status 1 otherwise).

    python benchmarks/benders_iterative.py [--solvers highs cbc] [--datasets …] [--depths 2]
                                           [--lam 0.0] [--time-limit 600] [--repeat 1]
"""
from __future__ import annotations

import argparse
import math
import resource
import sys

import odtk
from odtk.solvers import solver_status

DATASETS = ("flowoct/monk1", "flowoct/house-votes-84")
TOLERANCE = 1e-6


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the CBC binary)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_solve(model: str, dataset: str, depth: int, args: argparse.Namespace, solver: str) -> dict:
    """The best CPU time of ``args.repeat`` solves, with the last solve's result."""
    best = math.inf
    for _ in range(args.repeat):
        began = cpu_seconds()
        result = odtk.solve(model, dataset, depth=depth, lam=args.lam, solver=solver,
                            time_limit=args.time_limit, threads=1)
        best = min(best, cpu_seconds() - began)
    milp = result.steps["milp"]
    return {"cpu": best, "termination": result.termination, "objective": result.objective,
            "rounds": milp.get("rounds"), "cuts": milp.get("cuts"), "scheme": milp.get("scheme")}


def row(solver: str, dataset: str, depth: int, args: argparse.Namespace) -> dict:
    flow = timed_solve("flowoct", dataset, depth, args, solver)
    benders = timed_solve("benders", dataset, depth, args, solver)
    proven = flow["termination"] == benders["termination"] == "optimal"
    agree = not proven or abs(flow["objective"] - benders["objective"]) <= TOLERANCE * max(1.0, abs(flow["objective"]))
    return {"solver": solver, "dataset": dataset.split("/")[-1], "depth": depth, "flow": flow,
            "benders": benders, "ratio": benders["cpu"] / flow["cpu"], "agree": agree}


def print_row(r: dict) -> None:
    flow, benders = r["flow"], r["benders"]
    note = "" if r["agree"] else "  MISMATCH"
    print(f"{r['solver']:6} {r['dataset']:15} {r['depth']:>5} {flow['termination']:>11} {flow['objective']:>9.2f} "
          f"{flow['cpu']:>8.2f} {benders['termination']:>11} {benders['objective']:>9.2f} {benders['cpu']:>8.2f} "
          f"{r['ratio']:>6.2f} {benders['rounds']:>6} {benders['cuts']:>5}{note}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solvers", nargs="+", default=["highs", "cbc"])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--depths", nargs="+", type=int, default=[2])
    parser.add_argument("--lam", type=float, default=0.0)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--repeat", type=int, default=1, help="solves per cell; the least CPU time counts")
    args = parser.parse_args(argv)
    solvers = [s for s in args.solvers if solver_status(s).available]
    print(f"{'solver':6} {'dataset':15} {'depth':>5} {'flow':>11} {'objective':>9} {'cpu s':>8} "
          f"{'benders':>11} {'objective':>9} {'cpu s':>8} {'ratio':>6} {'rounds':>6} {'cuts':>5}")
    rows = []
    for solver in solvers:
        for dataset in args.datasets:
            for depth in args.depths:
                rows.append(row(solver, dataset, depth, args))
                print_row(rows[-1])
    for solver in solvers:
        ratios = [r["ratio"] for r in rows if r["solver"] == solver]
        scheme = next(r["benders"]["scheme"] for r in rows if r["solver"] == solver)
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{solver}: Benders/FlowOCT CPU ratio, geometric mean {mean:.2f} over {len(ratios)} instances ({scheme})")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
