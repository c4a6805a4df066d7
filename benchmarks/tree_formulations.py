"""Performance profile of the tree formulations: BendersOCT, FlowOCT, OCT and BinOCT.

Reproduces in kind Figure 3 of Aghaei, Gómez & Vayanos, "Strong Optimal Classification
Trees" (arXiv:2103.15965): the number of instances solved to optimality as a function of
time. An instance is a (dataset, depth, λ); every model is run on every instance with
``odtk.solve`` on the seeded 50 % training split of the paper's binarised datasets, at a
fixed time limit, on each requested solver. BinOCT has no λ and is only run at λ = 0.

What is measured: status, objective, bound, gap, and ``time`` = hand-off + solve seconds
(what the time limit governs; Pyomo build time is excluded but kept in the CSV with the
wall time). For ``benders`` also the number of cuts and of master solves (rounds: lazy
cuts in one branch and bound on Gurobi/CPLEX, an iterative cut loop on HiGHS/CBC).

Outputs, in ``--output-dir`` (default ``benchmarks/results``):

* ``tree_formulations.csv`` — one row per run (rewritten after every run);
* ``tree_formulations_<solver>.png`` — the profile: x = time (log scale, up to the limit),
  y = instances solved to optimality within that time, one step curve per model.

Checks: all runs that reached "optimal" on the same (dataset, depth, λ) — on any solver —
must agree on the objective, no incumbent may beat that optimum and no bound may fall
below it; a loud ``MISMATCH`` line is printed otherwise. The closing summary gives, per
solver and model, the instances solved and the mean time of the solved ones, and says
whether the paper's ordering benders ≥ flowoct ≥ oct (in instances solved) holds.

    python benchmarks/tree_formulations.py [--datasets flowoct/monk1 …] [--depths 2 3 4]
        [--lambdas 0 0.1] [--models benders flowoct oct binoct] [--solvers highs gurobi]
        [--time-limit 60] [--threads 1] [--seed 0] [--output-dir benchmarks/results] [--no-plot]

The full default run (8 datasets × 3 depths × (2 λ × 3 models + BinOCT) = 168 runs per
solver, 60 s each) is long: about 2.5 hours per solver on HiGHS with one thread (at most
168 × ~65 s ≈ 3 h), since most runs beyond depth 2 hit the limit; Gurobi and CPLEX under
their size-limited free licences are quicker, as every model over the limit fails at once.
The plot needs matplotlib (a benchmark-only dependency: ``pip install matplotlib``);
``--no-plot`` runs without it.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
import warnings
from itertools import product
from pathlib import Path
from typing import Any

import pandas as pd

import odtk
from odtk.datasets import Dataset, load_dataset, train_val_test_split
from odtk.exceptions import OdtkError, SolveError

DATASETS = ["flowoct/monk1", "flowoct/monk2", "flowoct/monk3", "flowoct/house-votes-84",
            "flowoct/balance-scale", "flowoct/tic-tac-toe", "flowoct/car-evaluation", "flowoct/kr-vs-kp"]
MODELS = ["benders", "flowoct", "oct", "binoct"]
NO_LAMBDA = {"binoct"}  # models without λ: run at λ = 0 only, comparable there only
ORDERING = ["benders", "flowoct", "oct"]  # the paper's ordering in instances solved
FAILED = ("error", "no solution")  # rows that carry the error message
TOLERANCE = 1e-6
COLUMNS = ["dataset", "n", "depth", "lam", "model", "solver", "status", "objective", "bound", "gap",
           "time", "cuts", "rounds", "build_time", "wall_time", "message"]
HEADER = (f"{'dataset':24} {'n':>5} {'d':>2} {'λ':>4} {'model':8} {'solver':7} {'status':11} "
          f"{'objective':>10} {'bound':>10} {'gap':>7} {'time':>7} {'cuts':>6} {'rounds':>6}")


# --------------------------------------------------------------------------- arguments
def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--lambdas", nargs="+", type=float, default=[0.0, 0.1])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--solvers", nargs="+", default=["highs"],
                        help=f"any of the installed solvers: {', '.join(odtk.available_solvers())}")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--threads", type=int, default=1, help="solver threads (0: solver default)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the 50%% training split and the solvers")
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG profiles")
    return parser.parse_args(argv)


def require_matplotlib() -> None:
    """Exit 1 with a one-line message when a plot is requested but matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib is not installed: pip install matplotlib, or run with --no-plot.", file=sys.stderr)
        sys.exit(1)


# --------------------------------------------------------------------------- runs
def runs(args: argparse.Namespace) -> list[tuple[str, int, float, str, str]]:
    """Every (dataset, depth, λ, model, solver) to run; λ-free models only at λ = 0."""
    return [(name, depth, lam, model, solver)
            for name, depth, lam, model, solver in product(args.datasets, args.depths, args.lambdas,
                                                           args.models, args.solvers)
            if model not in NO_LAMBDA or lam == 0]


def one_line(exc: BaseException) -> str:
    """The exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run_one(train: Dataset, depth: int, lam: float, model: str, solver: str,
            args: argparse.Namespace) -> dict[str, Any]:
    """One solve as a table row; odtk errors (and crashes) become a status and a message."""
    extra = {} if model in NO_LAMBDA else {"lam": lam}
    start = time.perf_counter()

    def failed(status: str, message: str) -> dict[str, Any]:
        seconds = time.perf_counter() - start
        return {"status": status, "time": seconds, "wall_time": seconds, "message": message}

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not proven optimal" is in the status column
            result = odtk.solve(model, train, depth=depth, solver=solver, time_limit=args.time_limit,
                                threads=args.threads or None, seed=args.seed, **extra)
    except SolveError as exc:
        return failed("no solution", one_line(exc))
    except OdtkError as exc:
        return failed("error", one_line(exc))
    except Exception as exc:  # noqa: BLE001 — a benchmark records crashes and goes on
        return failed("error", "crash " + one_line(exc))
    milp = result.steps.get("milp", {})
    return {"status": result.termination, "objective": result.objective, "bound": result.bound,
            "gap": result.gap, "time": result.handoff_time + result.solve_time, "cuts": milp.get("cuts"),
            "rounds": milp.get("rounds"), "build_time": result.build_time, "wall_time": result.wall_time,
            "message": result.message.strip().splitlines()[0] if result.message.strip() else ""}


def fmt(value: Any, spec: str) -> str:
    """``value`` formatted with ``spec``; a right-aligned '-' for missing values."""
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    return f"{'-':>{int(spec.split('.')[0].rstrip('d') or 1)}}" if missing else format(value, spec)


def print_row(row: dict[str, Any]) -> None:
    gap = None if row.get("gap") is None else 100 * row["gap"]
    note = f"  [{row['message']}]" if row["status"] in FAILED else ""
    print(f"{row['dataset']:24} {row['n']:>5} {row['depth']:>2} {row['lam']:>4g} {row['model']:8} "
          f"{row['solver']:7} {row['status']:11} {fmt(row.get('objective'), '10.4f')} "
          f"{fmt(row.get('bound'), '10.4f')} {fmt(gap, '6.2f')}{' ' if gap is None else '%'} "
          f"{fmt(row['time'], '7.2f')} {fmt(row.get('cuts'), '6d')} {fmt(row.get('rounds'), '6d')}{note}",
          flush=True)


def training_splits(names: list[str], seed: int) -> dict[str, Dataset]:
    """The seeded 50 % training split of every dataset; exit on an unknown name."""
    try:
        return {name: train_val_test_split(load_dataset(name), seed=seed)[0] for name in names}
    except OdtkError as exc:
        sys.exit(f"error: {one_line(exc)}")


def benchmark(args: argparse.Namespace, csv: Path) -> pd.DataFrame:
    """Run every combination, print a row per run and keep the CSV up to date."""
    rows: list[dict[str, Any]] = []
    splits = training_splits(args.datasets, args.seed)
    print(HEADER)
    for name, depth, lam, model, solver in runs(args):
        row = {"dataset": name, "n": splits[name].n_rows, "depth": depth, "lam": lam, "model": model,
               "solver": solver, **run_one(splits[name], depth, lam, model, solver, args)}
        print_row(row)
        rows.append(row)
        pd.DataFrame(rows).reindex(columns=COLUMNS).to_csv(csv, index=False)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


# --------------------------------------------------------------------------- checks
def check_agreement(table: pd.DataFrame) -> int:
    """Print MISMATCH lines where proven optima differ or a run beats one; return their number."""
    mismatches = 0
    for (name, depth, lam), group in table.groupby(["dataset", "depth", "lam"]):
        optimal = group[group.status == "optimal"]
        if optimal.empty:
            continue
        best, runs_ = optimal.objective.max(), " ".join(f"{r.model}/{r.solver}={r.objective:.6g}"
                                                        for r in optimal.itertuples())
        tol = TOLERANCE * max(1.0, abs(best))
        if optimal.objective.min() < best - tol:
            mismatches += 1
            print(f"!!! MISMATCH {name} depth {depth} λ {lam}: proven optima differ: {runs_}")
        for r in group.itertuples():
            if pd.notna(r.objective) and r.objective > best + tol:
                mismatches += 1
                print(f"!!! MISMATCH {name} depth {depth} λ {lam}: {r.model}/{r.solver} incumbent "
                      f"{r.objective:.6g} beats the proven optimum {best:.6g}")
            if pd.notna(r.bound) and r.bound < best - tol:
                mismatches += 1
                print(f"!!! MISMATCH {name} depth {depth} λ {lam}: {r.model}/{r.solver} bound "
                      f"{r.bound:.6g} is below the proven optimum {best:.6g}")
    return mismatches


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per solver and model: runs, instances solved to optimality, errors, mean time of the solved."""
    marked = table.assign(solved=table.status == "optimal", errors=table.status == "error")
    keys = ["solver", "model"]
    summary = marked.groupby(keys, sort=False).agg(runs=("solved", "size"), solved=("solved", "sum"),
                                                   errors=("errors", "sum"))
    summary["mean_time_solved"] = marked[marked.solved].groupby(keys, sort=False).time.mean()
    order = pd.MultiIndex.from_tuples(sorted(summary.index, key=lambda k: (
        list(table.solver.unique()).index(k[0]), MODELS.index(k[1]))), names=keys)
    return summary.reindex(order)


def ordering_holds(summary: pd.DataFrame, solver: str) -> str:
    """Whether benders ≥ flowoct ≥ oct in instances solved on ``solver`` (over the models run)."""
    rows = summary.loc[solver]
    present = [m for m in ORDERING if m in rows.index]
    if len(present) < 2:
        return "ordering n/a (fewer than two of benders, flowoct, oct run)"
    chain = " ≥ ".join(f"{m} ({rows.solved[m]})" for m in present)
    holds = all(rows.solved[a] >= rows.solved[b] for a, b in zip(present, present[1:]))
    errors = [f"{m} {rows.errors[m]}" for m in present if rows.errors[m]]
    caveat = f" (caution, runs with errors: {', '.join(errors)})" if errors else ""
    return f"{chain}: {'holds' if holds else 'DOES NOT HOLD'}{caveat}"


# --------------------------------------------------------------------------- plot
def plot_profile(table: pd.DataFrame, solver: str, time_limit: float, path: Path) -> None:
    """Step curves of the instances solved to optimality within time t, one per model."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    runs_ = table[table.solver == solver]
    solved = runs_[runs_.status == "optimal"]
    low = min(solved.time.min() / 2, time_limit / 100) if len(solved) else time_limit / 100
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for model, group in runs_.groupby("model", sort=False):
        times = sorted(group[group.status == "optimal"].time)
        errors = int((group.status == "error").sum())
        ax.step([low, *times, max([time_limit, *times])], [0, *range(1, len(times) + 1), len(times)],
                where="post", linewidth=2,
                label=f"{model} ({len(times)}/{len(group)}" + (f", {errors} errors)" if errors else ")"))
    instances = runs_.groupby(["dataset", "depth", "lam"]).ngroups
    ax.set(xscale="log", xlim=(low, time_limit * 1.05), ylim=(0, None), xlabel="time (s)",
           ylabel="instances solved to optimality",
           title=f"{solver}: {instances} instances (dataset × depth × λ), limit {time_limit:g} s")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axvline(time_limit, color="grey", linestyle=":", linewidth=1)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", title="model (solved/runs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    unknown = sorted(set(args.solvers) - set(odtk.available_solvers()))
    if unknown:
        sys.exit(f"error: solver(s) {', '.join(unknown)} not available; installed: "
                 f"{', '.join(odtk.available_solvers())}")
    if not args.no_plot:
        require_matplotlib()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    csv = args.output_dir / "tree_formulations.csv"
    start = time.perf_counter()
    table = benchmark(args, csv)
    print(f"\n{len(table)} runs in {time.perf_counter() - start:.0f} s; table: {csv}")
    mismatches = check_agreement(table)
    print(f"objectives: {'all proven optima agree' if not mismatches else f'{mismatches} MISMATCH(ES)'}")
    summary = summarize(table)
    print("\n" + summary.to_string(float_format=lambda v: f"{v:.2f}"))
    for solver in args.solvers:
        print(f"{solver}: {ordering_holds(summary, solver)}")
        if not args.no_plot:
            path = args.output_dir / f"tree_formulations_{solver}.png"
            plot_profile(table, solver, args.time_limit, path)
            print(f"{solver}: profile {path}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
