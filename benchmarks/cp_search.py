"""odtk's CP AND/OR search against STreeD, pydl8.5 (and the tree MILPs) on the DL8 / CP4IM datasets.

The search engine ``odtk.engines.cp_search`` (Verhaeghe et al., Constraints 2020), STreeD
(``pystreed.STreeDClassifier``, misclassifications with no complexity cost) and pydl8.5
(``DL85Classifier``) solve the same problem: the tree of depth ≤ d with at least
``--min-support`` samples per leaf and the fewest training errors, on 0/1 features. All three
run on the full bundled ``binary/`` datasets (every column 0/1, classes mapped to 0..k-1) at
each depth with the same time limit, one after the other in this process. ``seconds`` is the
CPU time of the call (``time.process_time``; every tool runs on one thread) and the ratios
are odtk / STreeD and odtk / pydl8.5 (times below 1 ms count as 1 ms). A first small search loads odtk's compiled code
before any timing. ``--counting-depth`` (0, 1, 2) sets how many bottom levels odtk solves by bulk
counting; ``--no-cache`` and ``--no-bounds`` switch off its cache and its bounds (the paper's
ablations).

Second part (``--milp``, on by default): on a few small datasets at depths 2–3, FlowOCT,
BendersOCT, OCT and BinOCT through ``odtk.solve`` on HiGHS (λ = 0, one thread): status,
training errors (n − objective, as their objective counts the correct samples), time
(hand-off + solve, what the limit governs; the Pyomo build is excluded) and its ratio to the
search's time. A ``cp`` row runs the search through ``odtk.solve``, whose feature encoding
must keep these 0/1 columns as they are: its proven optimum must be the engine's.

Checks (a loud ``MISMATCH`` line and exit status 1): proven optima of odtk, STreeD, pydl8.5
and the MILPs are equal, no incumbent beats a proven optimum and odtk's lower bound does not
exceed one. The summary gives per depth the instances each tool proved optimal, the share
odtk proved within the limit (beside the paper's "roughly 75 %"), the geometric means of the
time ratios over the instances both tools proved and the MILPs' solved counts, and lists the
instances where odtk took more than 3× STreeD's time. Outputs in ``--output-dir`` (default
``benchmarks/results``): ``cp_search.csv`` and ``cp_search_milp.csv``, rewritten after every run.

    python benchmarks/cp_search.py [--quick] [--datasets binary/vote …] [--depths 2 3 4]
        [--time-limit 60] [--min-support 1] [--counting-depth 2] [--no-cache] [--no-bounds]
        [--no-milp] [--milp-datasets …] [--milp-depths 2 3] [--milp-time-limit 30] [--output-dir …]

The default run (depths 2–4) takes 10–15 minutes, mostly STreeD, pydl8.5 and odtk on the
largest sets at depth 4 (ionosphere, pendigits, splice-1) and the MILPs, most of which reach
their limit. ``--quick`` (small datasets at depths 2–3, short limits, two MILP datasets at
depth 2) takes under a minute; options given explicitly override its choices. pystreed and
pydl8.5 are benchmark-only dependencies (``pip install pystreed pydl8.5``); the MILP part
needs ``--min-support 1``.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import list_datasets, load_dataset
from odtk.engines.cp_search import search
from odtk.exceptions import OdtkError, SolveError

MODELS = ["cp", "flowoct", "benders", "oct", "binoct"]  # "cp": the search through odtk.solve
SLOW = 3.0  # list the instances where odtk takes more than SLOW × STreeD's time
FLOOR = 1e-3  # in the ratios, CPU times below a millisecond count as one (the clock's noise)
PAPER_PROVEN = 75  # "optimality on roughly 75% of the instances within the time limit" (the paper's experiments)
DEFAULTS = {"datasets": [info.name for info in list_datasets()
                         if info.collection == "binary" and info.kind == "binary"],
            "depths": [2, 3, 4], "time_limit": 60.0, "milp_depths": [2, 3], "milp_time_limit": 30.0,
            "milp_datasets": ["binary/zoo-1", "binary/hepatitis", "binary/lymph"]}
QUICK = {"datasets": ["binary/zoo-1", "binary/lymph", "binary/hepatitis", "binary/primary-tumor",
                      "binary/soybean", "binary/vote", "binary/tic-tac-toe"],
         "depths": [2, 3], "time_limit": 10.0, "milp_depths": [2], "milp_time_limit": 5.0,
         "milp_datasets": ["binary/zoo-1", "binary/hepatitis"]}
COLUMNS = ["dataset", "rows", "features", "depth", "min_support", "counting_depth", "cache", "bounds",
           "odtk_error", "odtk_bound", "odtk_seconds", "odtk_status", "search_nodes", "cache_size",
           "streed_error", "streed_seconds", "streed_optimal", "dl85_error", "dl85_seconds",
           "dl85_timeout", "ratio_streed", "ratio", "agree"]
MILP_COLUMNS = ["dataset", "rows", "depth", "model", "status", "objective", "errors", "seconds",
                "build_time", "wall_time", "cp_error", "cp_status", "cp_seconds", "ratio", "check",
                "message"]
HEADER = (f"{'dataset':24} {'rows':>5} {'feat':>4} {'d':>2} | {'odtk':>5} {'seconds':>8} {'status':10} "
          f"{'nodes':>8} {'cache':>8} | {'streed':>6} {'seconds':>8} {'optimal':7} | {'dl85':>5} "
          f"{'seconds':>8} {'timeout':7} | {'/streed':>7} {'/dl85':>7}  agree")
MILP_HEADER = (f"{'dataset':24} {'rows':>5} {'d':>2} {'model':8} {'status':11} {'errors':>6} "
               f"{'cp':>5} {'seconds':>8} {'ratio':>9}  check")


# --------------------------------------------------------------------------- arguments
def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The options; ``--quick`` changes the defaults of those not given."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="small datasets and limits, about a minute")
    parser.add_argument("--datasets", nargs="+", help="0/1 datasets (default: all of binary/)")
    parser.add_argument("--depths", nargs="+", type=int)
    parser.add_argument("--time-limit", type=float, help="seconds per run, for odtk, STreeD and pydl8.5")
    parser.add_argument("--min-support", type=int, default=1, help="samples per leaf, at least")
    parser.add_argument("--counting-depth", type=int, default=2, choices=[0, 1, 2],
                        help="bottom levels odtk solves by bulk counting")
    parser.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True,
                        help="odtk's cache (--no-cache: the paper's ablation)")
    parser.add_argument("--bounds", action=argparse.BooleanOptionalAction, default=True,
                        help="odtk's bounds (--no-bounds: the paper's ablation)")
    parser.add_argument("--milp", action=argparse.BooleanOptionalAction, default=True,
                        help="also run FlowOCT, BendersOCT, OCT and BinOCT on HiGHS")
    parser.add_argument("--milp-datasets", nargs="+")
    parser.add_argument("--milp-depths", nargs="+", type=int)
    parser.add_argument("--milp-time-limit", type=float, help="seconds per MILP run")
    parser.add_argument("--output-dir", type=Path, default=Path("benchmarks/results"))
    parser.set_defaults(**(QUICK if "--quick" in argv else DEFAULTS))
    return parser.parse_args(argv)


def require_peers() -> None:
    """Exit 1 with a one-line message when STreeD or pydl8.5 is missing."""
    for module, package in (("pystreed", "pystreed"), ("pydl85", "pydl8.5")):
        try:
            __import__(module)
        except ImportError:
            print(f"{package} is not installed (a benchmark-only dependency): pip install {package}",
                  file=sys.stderr)
            sys.exit(1)


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The 0/1 feature matrix and the classes as 0..k-1; exit if a feature is not 0/1."""
    try:
        dataset = load_dataset(name)
    except OdtkError as exc:
        sys.exit(f"error: {one_line(exc)}")
    X = dataset.features.to_numpy()
    if not np.isin(X, (0, 1)).all():
        sys.exit(f"error: {name} has features that are not 0/1; pick datasets under binary/.")
    _, y = np.unique(dataset.target.to_numpy(), return_inverse=True)
    return X.astype(np.int32), y


def one_line(exc: BaseException) -> str:
    """The exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


# --------------------------------------------------------------------------- runs
def run_odtk(X: np.ndarray, y: np.ndarray, depth: int, args: argparse.Namespace) -> dict[str, Any]:
    """odtk's search, its CPU time around the call."""
    start = time.process_time()
    found = search(X, y, int(y.max()) + 1, depth, min_support=args.min_support,
                   counting_depth=args.counting_depth, time_limit=args.time_limit,
                   cache=args.cache, bounds=args.bounds)
    return {"odtk_error": found.error, "odtk_bound": found.lower_bound,
            "odtk_seconds": time.process_time() - start, "odtk_status": found.status,
            "search_nodes": found.search_nodes, "cache_size": found.cache_size}


def run_streed(X: np.ndarray, y: np.ndarray, depth: int, args: argparse.Namespace) -> dict[str, Any]:
    """STreeD's fit (misclassifications, no complexity cost), its CPU time around the call."""
    from pystreed import STreeDClassifier

    classifier = STreeDClassifier(max_depth=depth, max_num_nodes=2**depth - 1, cost_complexity=0.0,
                                  min_leaf_node_size=args.min_support, time_limit=args.time_limit)
    start = time.process_time()
    classifier.fit(X, y)
    seconds = time.process_time() - start
    feasible = classifier.fit_result.is_feasible()
    return {"streed_error": int(np.sum(classifier.predict(X) != y)) if feasible else None,
            "streed_seconds": seconds, "streed_optimal": bool(classifier.fit_result.is_optimal())}


def run_dl85(X: np.ndarray, y: np.ndarray, depth: int, args: argparse.Namespace) -> dict[str, Any]:
    """pydl8.5's fit, its CPU time around the call; no error when it found no tree."""
    from pydl85 import DL85Classifier

    classifier = DL85Classifier(max_depth=depth, min_sup=args.min_support, time_limit=args.time_limit)
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):  # its "no tree found" notices
        classifier.fit(X, y)
    seconds = time.process_time() - start
    error = None if classifier.tree_ is None else int(classifier.error_)
    return {"dl85_error": error, "dl85_seconds": seconds, "dl85_timeout": bool(classifier.timeout_)}


def contradictions(proven: dict[str, int], incumbents: dict[str, int | None],
                   bounds: dict[str, int]) -> list[str]:
    """What contradicts the proven optima: unequal optima, better incumbents, higher bounds."""
    if not proven:
        return []
    best = min(proven.values())
    found = [f"proven optima differ: {proven}"] if max(proven.values()) != best else []
    found += [f"{tool} found {value} errors, below the proven optimum {best}"
              for tool, value in incumbents.items() if value is not None and value < best]
    found += [f"{tool}'s lower bound {value} exceeds the proven optimum {best}"
              for tool, value in bounds.items() if value > best]
    return found


def dl85_proved(row: dict[str, Any] | pd.Series) -> bool:
    """pydl8.5 returned a tree before its time limit: an optimal one."""
    return not row["dl85_timeout"] and pd.notna(row["dl85_error"])


def compare(row: dict[str, Any]) -> list[str]:
    """Contradictions between odtk, STreeD and pydl8.5 on one instance."""
    proven = {"odtk": row["odtk_error"]} if row["odtk_status"] == "optimal" else {}
    if row["streed_optimal"]:
        proven["STreeD"] = row["streed_error"]
    if dl85_proved(row):
        proven["pydl8.5"] = row["dl85_error"]
    incumbents = {"odtk": row["odtk_error"], "STreeD": row["streed_error"], "pydl8.5": row["dl85_error"]}
    return contradictions(proven, incumbents, {"odtk": row["odtk_bound"]})


def run_milp(name: str, depth: int, model: str, args: argparse.Namespace) -> dict[str, Any]:
    """One ``odtk.solve`` as a row; odtk errors become a status and a message."""
    extra = ({"counting_depth": args.counting_depth, "cache": args.cache, "bounds": args.bounds}
             if model == "cp" else {"solver": "highs", "threads": 1})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not proven optimal" is in the status column
            result = odtk.solve(model, name, depth=depth, time_limit=args.milp_time_limit, **extra)
    except OdtkError as exc:
        return {"status": "no solution" if isinstance(exc, SolveError) else "error", "message": one_line(exc)}
    # the search's objective counts errors; the MILPs' at λ = 0 count correct samples (BinOCT too)
    errors = round(result.objective) if model == "cp" else result.n_samples - round(result.objective)
    return {"status": result.termination, "objective": result.objective, "errors": errors,
            "seconds": result.handoff_time + result.solve_time, "build_time": result.build_time,
            "wall_time": result.wall_time, "message": ""}


def check_milp(row: dict[str, Any]) -> list[str]:
    """Contradictions between a MILP (or ``cp`` through odtk.solve) and the direct search."""
    proven = {"search": row["cp_error"]} if row["cp_status"] == "optimal" else {}
    if row["status"] == "optimal":
        proven[row["model"]] = row["errors"]
    return contradictions(proven, {"search": row["cp_error"], row["model"]: row.get("errors")}, {})


# --------------------------------------------------------------------------- printing
def fmt(value: Any, spec: str) -> str:
    """``value`` formatted with ``spec``; a right-aligned '-' for missing values."""
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    return f"{'-':>{int(spec.split('.')[0].rstrip('dfg') or 1)}}" if missing else format(value, spec)


def print_row(row: dict[str, Any]) -> None:
    print(f"{row['dataset']:24} {row['rows']:>5} {row['features']:>4} {row['depth']:>2} | "
          f"{row['odtk_error']:>5} {row['odtk_seconds']:8.2f} {row['odtk_status']:10} "
          f"{row['search_nodes']:>8} {row['cache_size']:>8} | {fmt(row['streed_error'], '6d')} "
          f"{row['streed_seconds']:8.2f} {str(row['streed_optimal']):7} | {fmt(row['dl85_error'], '5d')} "
          f"{row['dl85_seconds']:8.2f} {str(row['dl85_timeout']):7} | {row['ratio_streed']:7.2f} "
          f"{row['ratio']:7.2f}  {row['agree']}", flush=True)


def print_milp_row(row: dict[str, Any]) -> None:
    note = f"  [{row['message']}]" if row["message"] else ""
    print(f"{row['dataset']:24} {row['rows']:>5} {row['depth']:>2} {row['model']:8} {row['status']:11} "
          f"{fmt(row.get('errors'), '6d')} {row['cp_error']:>5} {fmt(row.get('seconds'), '8.2f')} "
          f"{fmt(row.get('ratio'), '9.1f')}  {row['check']}{note}", flush=True)


def label(problems: list[str], proven_by_all: bool) -> str:
    """'MISMATCH' on a contradiction, 'yes' when all proved the same optimum, else '-'."""
    return "MISMATCH" if problems else "yes" if proven_by_all else "-"


def shout(problems: list[str], where: str) -> None:
    for problem in problems:
        print(f"!!! MISMATCH {where}: {problem}", flush=True)


# --------------------------------------------------------------------------- benchmark
def search_part(args: argparse.Namespace, data: dict[str, tuple[np.ndarray, np.ndarray]],
                csv: Path) -> pd.DataFrame:
    """odtk against STreeD and pydl8.5 on every dataset and depth, a row each."""
    rows: list[dict[str, Any]] = []
    search(np.eye(4, dtype=int), np.arange(4) % 2, 2, 2)  # load the compiled code before timing
    print(HEADER)
    for name, (X, y) in data.items():
        for depth in args.depths:
            row = {"dataset": name, "rows": X.shape[0], "features": X.shape[1], "depth": depth,
                   "min_support": args.min_support, "counting_depth": args.counting_depth,
                   "cache": args.cache, "bounds": args.bounds, **run_odtk(X, y, depth, args),
                   **run_streed(X, y, depth, args), **run_dl85(X, y, depth, args)}
            row["ratio_streed"] = max(row["odtk_seconds"], FLOOR) / max(row["streed_seconds"], FLOOR)
            row["ratio"] = max(row["odtk_seconds"], FLOOR) / max(row["dl85_seconds"], FLOOR)
            problems = compare(row)
            row["agree"] = label(problems, row["odtk_status"] == "optimal" and row["streed_optimal"]
                                 and dl85_proved(row))
            print_row(row)
            shout(problems, f"{name} depth {depth}")
            rows.append(row)
            pd.DataFrame(rows, columns=COLUMNS).to_csv(csv, index=False)
    return pd.DataFrame(rows, columns=COLUMNS)


def milp_part(args: argparse.Namespace, searched: pd.DataFrame, csv: Path) -> pd.DataFrame:
    """The search through odtk.solve and the four MILPs on the MILP datasets and depths."""
    rows: list[dict[str, Any]] = []
    print(f"\n{MILP_HEADER}")
    for name in args.milp_datasets:
        X, y = load_binary(name)
        for depth in args.milp_depths:
            cp = searched[(searched.dataset == name) & (searched.depth == depth)]
            cp = cp.iloc[0].to_dict() if len(cp) else run_odtk(X, y, depth, args)
            for model in MODELS:
                row = {"dataset": name, "rows": len(y), "depth": depth, "model": model,
                       **run_milp(name, depth, model, args), "cp_error": cp["odtk_error"],
                       "cp_status": cp["odtk_status"], "cp_seconds": cp["odtk_seconds"]}
                row["ratio"] = row.get("seconds", math.nan) / row["cp_seconds"]
                problems = check_milp(row)
                row["check"] = label(problems, row["status"] == row["cp_status"] == "optimal")
                print_milp_row(row)
                shout(problems, f"{name} depth {depth} {model}")
                rows.append(row)
                pd.DataFrame(rows, columns=MILP_COLUMNS).to_csv(csv, index=False)
    return pd.DataFrame(rows, columns=MILP_COLUMNS)


# --------------------------------------------------------------------------- summary
def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per depth: instances, proved optimal by each tool, the share odtk proved, and the
    geometric-mean ratios to STreeD and to pydl8.5 over the instances both tools proved."""
    marked = table.assign(odtk=table.odtk_status == "optimal", streed=table.streed_optimal.astype(bool),
                          dl85=table.apply(dl85_proved, axis=1))
    summary = marked.groupby("depth").agg(instances=("odtk", "size"), odtk_optimal=("odtk", "sum"),
                                          streed_optimal=("streed", "sum"), dl85_optimal=("dl85", "sum"),
                                          mismatches=("agree", lambda a: int((a == "MISMATCH").sum())))
    summary["odtk_proven_%"] = 100 * summary.odtk_optimal / summary.instances
    for peer, ratio in (("streed", "ratio_streed"), ("dl85", "ratio")):
        both = marked[marked.odtk & marked[peer]]
        summary[f"geomean_{ratio}"] = both.groupby("depth")[ratio].apply(geomean)
    return summary


def geomean(values: pd.Series) -> float:
    return float(np.exp(np.log(values).mean()))


def summarize_milp(table: pd.DataFrame) -> pd.DataFrame:
    """Per depth and model: runs, solved to optimality, failed (error or no solution)."""
    marked = table.assign(solved=table.status == "optimal",
                          failed=table.status.isin(["error", "no solution"]))
    summary = marked.groupby(["depth", "model"], sort=False).agg(
        runs=("solved", "size"), solved=("solved", "sum"), failed=("failed", "sum"))
    summary["mean_time_solved"] = marked[marked.solved].groupby(["depth", "model"], sort=False).seconds.mean()
    return summary


def slow_instances(table: pd.DataFrame) -> pd.DataFrame:
    """The instances where odtk took more than SLOW × STreeD's time."""
    return table.loc[table.ratio_streed > SLOW, ["dataset", "depth", "odtk_seconds", "odtk_status",
                                                 "streed_seconds", "streed_optimal", "ratio_streed"]]


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    require_peers()
    data = {name: load_binary(name) for name in args.datasets}
    args.output_dir.mkdir(parents=True, exist_ok=True)
    csv, milp_csv = args.output_dir / "cp_search.csv", args.output_dir / "cp_search_milp.csv"
    start = time.perf_counter()
    print(f"time limit {args.time_limit:g} s, min support {args.min_support}, "
          f"counting depth {args.counting_depth}, cache {'on' if args.cache else 'off'}, "
          f"bounds {'on' if args.bounds else 'off'}; seconds are CPU time\n")
    table = search_part(args, data, csv)
    mismatches = int((table.agree == "MISMATCH").sum())
    milp = None
    if args.milp and args.min_support != 1:
        print("\nMILP part skipped: the MILPs have no minimum support; run with --min-support 1.")
    elif args.milp:
        milp = milp_part(args, table, milp_csv)
        mismatches += int((milp.check == "MISMATCH").sum())
    print(f"\n{len(table)} search instances{'' if milp is None else f' and {len(milp)} odtk.solve runs'} "
          f"in {time.perf_counter() - start:.0f} s; tables: {csv}{'' if milp is None else f', {milp_csv}'}")
    print(f"objectives: {'all proven optima agree' if not mismatches else f'{mismatches} MISMATCH(ES)'}")
    summary = summarize(table)
    print("\n" + summary.to_string(float_format=lambda v: f"{v:.2f}"))
    proven = 100 * (table.odtk_status == "optimal").mean()
    print(f"\nodtk proved {proven:.0f} % of the instances within the {args.time_limit:g} s limit "
          f"(the paper: roughly {PAPER_PROVEN} % of its instances within its limit)")
    if milp is not None:
        print("\n" + summarize_milp(milp).to_string(float_format=lambda v: f"{v:.2f}"))
    slow = slow_instances(table)
    print(f"\nodtk more than {SLOW:g}x slower than STreeD: {len(slow)} of {len(table)} instances"
          + ("" if slow.empty else "\n" + slow.to_string(index=False, float_format=lambda v: f"{v:.2f}")))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
