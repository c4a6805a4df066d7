"""Section 4 of Aghaei, Gómez & Vayanos: FlowOCT and Benders against OCT and BinOCT.

Reruns the experiment of S. Aghaei, A. Gómez, P. Vayanos, "Learning Optimal Classification
Trees: Strong Max-Flow Formulations" (arXiv:2002.09142), as the paper and the authors' code
set it up:

* Data: the eight datasets of Table 1 (``flowoct/<name>``, binarised by the authors).
* Samples: five. Sample s draws, with random state 41, 23, 45, 36 or 19, scikit-learn's
  shuffled, unstratified ``train_test_split``: 25 % test, then 33 % of the rest validation,
  the remaining 50 % training (the authors' code; the training sizes of their logs agree).
* In-sample (Figure 3): FlowOCT (formulation (1)), Benders (problem (8)) and OCT (Bertsimas &
  Dunn on binary data, with the paper's branching constraint (3): ``branching="disaggregated"``)
  solve every dataset, depth 2–5, sample and λ ∈ {0, 0.1, …, 0.9} on the training set; BinOCT
  (Verwer & Zhang), which has no λ, solves each once, as a λ = 0 instance. Panels (a) λ = 0
  and (b) λ > 0 count the instances each method solves to optimality within a share of the
  time limit (solver seconds); ``t_ref_s`` is when a method has solved as many as the
  reference (BinOCT in (a), OCT in (b)) solves within the limit, ``speedup`` the limit over
  that time — the paper's "30×" and "50×". Panel (c) shows the mean optimality gap per size
  2^d·|I|. The gap is the paper's: relative to the incumbent's misclassification objective
  (1−λ)·misclassified + λ·splits, which the authors minimised, i.e. (bound − objective) /
  ((1−λ)|I| − objective) in odtk's maximisation; a solve without a tree counts as 100 %.
* Out-of-sample (Table 2): per dataset, depth, sample and method, the λ with the best
  validation accuracy (ties: the larger λ, as in the authors' logs) is trained again on
  training + validation; the table shows the mean test accuracy (%) over the samples.
* ``agree``: at equal λ the four objectives are the same ((1−λ)·correct − λ·splits), so no
  method's bound (its optimum, if proven) may lie below a tree another method found on the
  same instance; "NO" marks a method that breaks this, and the script then exits with 1.

Beside odtk's rows: ``paper`` rows hold the counts and times the Figure 3 text quotes (the
instance counts 160 and 1440 follow from the setup), ``Table2`` rows the paper's Table 2, and
``logs`` rows the authors' raw per-run results of the journal version ("Strong Optimal
Classification Trees", arXiv:2103.15965; same code, splits and grid, later runs; bundled as
``flowoct/paper_results``), restricted to the datasets, depths, samples and λ run here.

The paper used Gurobi 8.1 on one core with one hour per solve. Here ``--solver`` picks any
registered MILP solver (one thread) and ``--time-limit`` defaults to 10 s, so the default run
(two datasets, depth 2, one sample, λ ∈ {0, 0.5}) finishes in a few minutes with HiGHS;
``--full`` runs the whole grid with the paper's hour. Every finished solve is recorded in a
results database (the SQLite store of ``odtk experiment``; ``odtk experiment report DB`` plots
it): a new ``benchmarks/results/flowoct_paper-YYYYmmdd-HHMMSS.sqlite`` per run, or ``--db``.
Only ``--resume`` reuses one (``--db``, else the newest default), so that a killed run resumes
where it stopped, and only for solves made by the same odtk code, options and solver version;
the script says how many solves it computed and how many came from earlier runs.

Run:  python examples/flowoct_paper.py
      python examples/flowoct_paper.py --full --solver gurobi --db flowoct_full.sqlite
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import odtk
from _common import accuracy, contradicted, load_rows, print_table, quiet, results_database, reuse_line
from odtk.datasets import Dataset
from odtk.datasets.catalog import data_dir
from odtk.exceptions import OdtkError
from odtk.experiments.grid import finish_run
from odtk.experiments.runner import pending
from odtk.experiments.store import ResultStore
from odtk.solvers import require_solver

CAMPAIGN = "flowoct-paper"
SEEDS = (41, 23, 45, 36, 19)  # random states of the five samples, in the authors' order
SPLIT = ["train_test_split", 0.25, 0.33]  # test share, then validation share of the rest
TABLE_1 = {  # |I|, |F|, |K| of the paper's datasets
    "monk3": (122, 15, 2), "monk1": (124, 15, 2), "monk2": (169, 15, 2), "house-votes-84": (232, 16, 2),
    "balance-scale": (625, 20, 3), "tic-tac-toe": (958, 27, 2), "car_evaluation": (1728, 20, 4),
    "kr-vs-kp": (3196, 38, 2)}
METHODS = {"oct": "OCT", "binoct": "BinOCT", "flowoct": "FlowOCT", "benders": "Benders"}  # Table 2 order
LOG_NAMES = {"oct": "OCT", "binoct": "BinOCT", "flowoct": "FlowOCT", "benders": "BendersOCT"}
OPTIONS = {"oct": {"branching": "disaggregated"}}  # the paper's OCT: constraint (3)
TABLE_2 = {  # out-of-sample accuracy (%): OCT, BinOCT, FlowOCT, Benders
    ("monk3", 2): (92.3, 92.3, 92.3, 92.3), ("monk3", 3): (83.2, 91, 91, 91),
    ("monk3", 4): (91, 85.2, 92.3, 91), ("monk3", 5): (87.1, 87.7, 92.3, 91.6),
    ("monk1", 2): (71, 72.3, 72.3, 71), ("monk1", 3): (83.2, 82.6, 81.3, 81.3),
    ("monk1", 4): (100, 99.4, 100, 100), ("monk1", 5): (93.5, 96.8, 100, 100),
    ("monk2", 2): (56.7, 49.8, 56.7, 56.7), ("monk2", 3): (62.3, 58.1, 63.7, 63.3),
    ("monk2", 4): (59.5, 60.5, 58.6, 64.2), ("monk2", 5): (63.3, 55.8, 62.3, 61.9),
    ("house-votes-84", 2): (79.3, 96.2, 97.2, 97.2), ("house-votes-84", 3): (97.2, 94.1, 97.2, 97.2),
    ("house-votes-84", 4): (96.9, 94.8, 96.9, 95.5), ("house-votes-84", 5): (95.2, 93.1, 96.9, 97.2),
    ("balance-scale", 2): (68.7, 67.9, 68.7, 68.7), ("balance-scale", 3): (69, 71.5, 69.8, 71),
    ("balance-scale", 4): (68.5, 73.9, 73.2, 71.7), ("balance-scale", 5): (65.7, 75.3, 71.6, 76.8),
    ("tic-tac-toe", 2): (66.7, 65.9, 66.7, 66.7), ("tic-tac-toe", 3): (68.1, 72.2, 68.5, 72.6),
    ("tic-tac-toe", 4): (70.4, 80.3, 68.7, 77.1), ("tic-tac-toe", 5): (69.7, 78.9, 66.3, 79.3),
    ("car_evaluation", 2): (76.5, 76.5, 76.5, 76.5), ("car_evaluation", 3): (73.3, 78.4, 76.7, 79.1),
    ("car_evaluation", 4): (75.2, 80.3, 71.6, 79.7), ("car_evaluation", 5): (74.8, 81.3, 61.6, 80.5),
    ("kr-vs-kp", 2): (73.7, 87.2, 70.5, 87.2), ("kr-vs-kp", 3): (69.3, 87.8, 61.2, 89.9),
    ("kr-vs-kp", 4): (64.7, 90.8, 54.3, 91), ("kr-vs-kp", 5): (62.7, 87.1, 45.8, 86.7)}
PAPER_LIMIT = 3600.0
FIGURE_3 = {  # panel: (λ = 0?, reference method, instances, {method: (solved, t_ref seconds)}) from §4's text
    "a": (True, "binoct", 160, {"binoct": (79, math.nan), "benders": (math.nan, 140.0)}),
    "b": (False, "oct", 1440, {"oct": (666, math.nan), "benders": (math.nan, 70.0)}),
}
LOG_OPTIMAL = {2, 101, 102}  # Gurobi OPTIMAL; CPLEX (BinOCT) optimal, optimal within tolerance
MARKS = (0.01, 0.1)  # profile points as shares of the time limit (the limit is the last point)


def odtk_name(name: str) -> str:
    return "flowoct/" + name.replace("_", "-")


@functools.lru_cache(maxsize=8)
def sample(name: str, seed: int, rows: int | None) -> dict[str, Dataset]:
    """One sample's training, validation, test and training + validation sets, drawn as the
    authors' code draws them (of ``rows`` random rows if given)."""
    data = load_rows(odtk_name(name), seed, rows)
    rest, test = train_test_split(np.arange(data.n_rows), test_size=SPLIT[1], random_state=seed)
    train, val = train_test_split(rest, test_size=SPLIT[2], random_state=seed)
    return {"grid": data.subset(train), "validation": data.subset(val), "test": data.subset(test),
            "retrain": data.subset(rest)}


def run_spec(phase: str, name: str, seed: int, depth: int, method: str, lam: float,
             args: argparse.Namespace) -> dict:
    """One solve as a run of the results database (its id hashes these parameters)."""
    options = {**OPTIONS.get(method, {}), **({} if method == "binoct" else {"lam": lam})}
    return finish_run({"campaign": CAMPAIGN, "phase": phase, "dataset": odtk_name(name), "rows": args.rows,
                       "seed": seed, "split": SPLIT, "method": method, "solver": args.solver, "depth": depth,
                       "skeleton": None, "options": options, "settings": {}, "time_limit": args.time_limit,
                       "threads": 1})


def execute(run: dict, sets: dict[str, Dataset]) -> dict:
    """Solve ``run`` on its phase's data; its results row (status "failed" if odtk gives up)."""
    data = sets[run["phase"]]
    row = {**run, "n_train": data.n_rows, "n_val": sets["validation"].n_rows, "n_test": sets["test"].n_rows}
    try:
        result = odtk.solve(run["method"], data, depth=run["depth"], solver=run["solver"],
                            time_limit=run["time_limit"], threads=run["threads"], warm_start=None,  # as the paper
                            **run["options"])
    except OdtkError as exc:
        return {**row, "status": "failed", "message": str(exc)}
    return {**row, **(result.size.__dict__ if result.size else {}), "status": "done",
            "termination": result.termination, "objective": result.objective, "bound": result.bound,
            "gap": result.gap, "build_time": result.build_time, "solve_time": result.solve_time,
            "wall_time": result.wall_time, "train_accuracy": result.train_accuracy,
            "val_accuracy": accuracy(result, sets["validation"]) if run["phase"] == "grid" else None,
            "test_accuracy": accuracy(result, sets["test"]), "model": json.dumps(result.model.to_dict())}


def record(runs: list[dict], sets: dict[str, Dataset], store: ResultStore, counter: dict) -> None:
    """Solve and record the runs the database does not hold yet (or holds from another odtk or
    solver version); progress on stderr."""
    todo, other = pending(runs, store, retry_failed=False)
    counter["seen"] += len(runs) - len(todo)
    counter["other"] += other
    for run in todo:
        counter["seen"] += 1
        row = execute(run, sets)
        store.record(row)
        counter["ran"] += 1
        lam = run["options"].get("lam", 0.0)
        print(f"[{counter['seen']}/{counter['total']}] {run['dataset']} depth {run['depth']} "
              f"seed {run['seed']} {METHODS[run['method']]} λ={lam:g} ({run['phase']}): "
              f"{row.get('termination', row.get('message'))}", file=sys.stderr, flush=True)


def chosen(store: ResultStore, grid: list[dict]) -> dict[str, float]:
    """Per method, the λ of its grid runs with the best validation accuracy (ties: the larger λ)."""
    frame = store.frame()
    done = frame[frame["id"].isin([run["id"] for run in grid]) & (frame["status"] == "done")]
    best: dict[str, tuple[float, float]] = {}
    for _, row in done.iterrows():
        lam = json.loads(row["options"]).get("lam", 0.0)
        key = (row["val_accuracy"], lam)
        if row["method"] not in best or key > best[row["method"]]:
            best[row["method"]] = key
    return {method: lam for method, (_, lam) in best.items()}


def blocks(args: argparse.Namespace) -> Iterator[tuple[str, int, int]]:
    """(dataset, depth, seed) in the order they run: small datasets and depths first."""
    for name in args.datasets:
        for depth in args.depths:
            for seed in args.seeds:
                yield name, depth, seed


def run_all(args: argparse.Namespace, store: ResultStore) -> tuple[list[str], dict[str, int]]:
    """Every grid solve and retraining; returns the run ids and the counts of solves ("ran":
    solved now, "other": of those, recorded before by another odtk or solver version)."""
    grid_size = 1 + (len(METHODS) - 1) * len(args.lambdas)
    counter = {"seen": 0, "ran": 0, "other": 0, "total": len(list(blocks(args))) * (grid_size + len(METHODS))}
    ids = []
    for name, depth, seed in blocks(args):
        sets = sample(name, seed, args.rows)
        grid = [run_spec("grid", name, seed, depth, method, lam, args)
                for method in METHODS for lam in ([0.0] if method == "binoct" else args.lambdas)]
        record(grid, sets, store, counter)
        retrain = [run_spec("retrain", name, seed, depth, method, lam, args)
                   for method, lam in chosen(store, grid).items()]
        record(retrain, sets, store, counter)
        ids += [run["id"] for run in grid + retrain]
    return ids, counter


# --------------------------------------------------------------------------- results
def results(store: ResultStore, ids: list[str]) -> pd.DataFrame:
    """This invocation's recorded runs, with λ, the paper's dataset name and the paper's gap."""
    frame = store.frame()
    frame = frame[frame["id"].isin(ids)].copy()
    frame["lam"] = [json.loads(options).get("lam", 0.0) for options in frame["options"]]
    frame["name"] = [name.split("/")[-1] for name in frame["dataset"]]
    frame["name"] = frame["name"].replace({"car-evaluation": "car_evaluation"})
    frame["paper_gap"] = [paper_gap(row) for _, row in frame.iterrows()]
    return frame


def paper_gap(row: pd.Series) -> float:
    """The gap on the misclassification objective (1−λ)·misclassified + λ·splits, in %."""
    if row["status"] != "done":
        return 100.0
    if row["bound"] is None or pd.isna(row["bound"]):
        return math.nan
    loss = (1 - row["lam"]) * row["n_train"] - row["objective"]
    excess = max(row["bound"] - row["objective"], 0.0)
    if loss <= 1e-9:
        return 0.0 if excess <= 1e-6 else 100.0
    return 100.0 * excess / loss


def load_logs(name: str, args: argparse.Namespace) -> pd.DataFrame:
    """The authors' journal-version runs (``train`` or ``test``) on this invocation's grid."""
    with (data_dir() / "flowoct" / "paper_results" / f"{name}.csv").open("rb") as handle:
        logs = pd.read_csv(handle)
    logs["depth"] = pd.to_numeric(logs["depth"])
    logs["name"] = logs["dataset"].replace({"car-evaluation": "car_evaluation"})
    logs["method"] = logs["approach"].map({log: key for key, log in LOG_NAMES.items()})
    samples = [SEEDS.index(seed) + 1 for seed in args.seeds]
    return logs[logs["name"].isin(args.datasets) & logs["depth"].isin(args.depths)
                & pd.to_numeric(logs["sample"]).isin(samples)]


def t_ref(times: np.ndarray, count: float) -> float:
    """When ``count`` instances are solved, given the sorted solve times (NaN if never)."""
    return float(times[int(count) - 1]) if 0 < count <= len(times) else math.nan


def profile_row(source: str, method: str, times: np.ndarray, instances: int, limit: float,
                reference: float) -> dict:
    """One row of a Figure 3(a)/(b) panel from the sorted solve times of the solved instances."""
    when = t_ref(times, reference)
    return {"source": source, "method": METHODS[method], "limit_s": limit, "instances": instances,
            **{f"{mark:.0%}": int((times <= mark * limit).sum()) for mark in MARKS},
            "solved": len(times), "t_ref_s": when, "speedup": speedup(limit, when)}


def speedup(limit: float, when: float) -> str:
    """The time limit over ``when``, as the paper states it ("30×"); "-" if undefined."""
    return f"{limit / when:.0f}×" if when > 0 else "-"


def odtk_times(runs: pd.DataFrame) -> np.ndarray:
    solved = runs[(runs["status"] == "done") & (runs["termination"] == "optimal")]
    return np.sort(solved["solve_time"].to_numpy(dtype=float))


def agreement(grid: pd.DataFrame) -> set[str]:
    """Methods whose bound lies below another method's tree on an instance of equal λ."""
    bad = set()
    done = grid[grid["status"] == "done"]
    for _, same in done.groupby(["name", "seed", "depth", "lam"]):
        bounds = [row["bound"] if pd.notna(row["bound"]) else
                  row["objective"] if row["termination"] == "optimal" else math.inf
                  for _, row in same.iterrows()]
        for method, broken in zip(same["method"], contradicted(list(zip(same["objective"], bounds)))):
            if broken:
                bad.add(method)
    return bad


def panel(grid: pd.DataFrame, logs: pd.DataFrame, key: str, args: argparse.Namespace) -> list[dict]:
    """Figure 3(a) (λ = 0) or (b) (λ > 0): odtk's rows, the paper's quoted figures, the logs' rows."""
    zero, reference, paper_instances, quoted = FIGURE_3[key]
    methods = [m for m in METHODS if zero or m != "binoct"]  # BinOCT has no λ: not in (b)
    ours = grid[(grid["lam"] == 0) == zero]
    theirs = logs[(logs["lambda"] == 0) == zero]
    ours_ref = len(odtk_times(ours[ours["method"] == reference]))
    their_times = {m: np.sort(theirs[(theirs["method"] == m) & theirs["status"].isin(LOG_OPTIMAL)]
                              ["solving_time"].to_numpy(dtype=float)) for m in methods}
    bad = agreement(grid)
    rows = [{**profile_row("odtk", m, odtk_times(ours[ours["method"] == m]), int((ours["method"] == m).sum()),
                           args.time_limit, ours_ref), "agree": "NO" if m in bad else "yes"} for m in methods]
    for method, (solved, when) in quoted.items():
        rows.append({"source": "paper", "method": METHODS[method], "limit_s": PAPER_LIMIT,
                     "instances": paper_instances, "solved": solved, "t_ref_s": when,
                     "speedup": speedup(PAPER_LIMIT, when)})
    rows += [profile_row("logs", m, their_times[m], int((theirs["method"] == m).sum()), PAPER_LIMIT,
                         len(their_times[reference])) for m in methods]
    return rows


def gap_rows(grid: pd.DataFrame, logs: pd.DataFrame) -> list[dict]:
    """Figure 3(c): mean gap (%) per method and instance size 2^d·|I|, odtk's and the logs'."""
    pairs = []
    for (name, depth), ours in grid.groupby(["name", "depth"]):
        theirs = logs[(logs["name"] == name) & (logs["depth"] == depth)]
        pair = []
        for source, runs, rows, column, scale in (("odtk", ours, "n_train", "paper_gap", 1.0),
                                                  ("logs", theirs, "nrow", "gap", 100.0)):
            size = 2 ** int(depth) * int(runs[rows].iloc[0]) if len(runs) else math.nan
            means = {METHODS[m]: round(scale * runs.loc[runs["method"] == m, column].mean(), 1) for m in METHODS}
            pair.append({"size": size, "dataset": name, "depth": int(depth), "source": source, **means})
        pairs.append(pair)
    return [row for pair in sorted(pairs, key=lambda pair: pair[0]["size"]) for row in pair]


def table_2(retrained: pd.DataFrame, logs: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Table 2 row by row: odtk's mean test accuracy (%), the paper's, the logs'."""
    rows = []
    for name in args.datasets:
        for depth in args.depths:
            ours = retrained[(retrained["name"] == name) & (retrained["depth"] == depth)]
            theirs = logs[(logs["name"] == name) & (logs["depth"] == depth)]
            key = {"dataset": name, "depth": depth}
            rows.append({**key, "source": "odtk", "samples": ours["seed"].nunique(),
                         **{METHODS[m]: round(100 * ours.loc[ours["method"] == m, "test_accuracy"].mean(), 1)
                            for m in METHODS}})
            rows.append({**key, "source": "Table2", "samples": len(SEEDS),
                         **dict(zip(METHODS.values(), TABLE_2.get((name, depth), [math.nan] * 4)))})
            rows.append({**key, "source": "logs", "samples": theirs["sample"].nunique(),
                         **{METHODS[m]: round(100 * theirs.loc[theirs["method"] == m, "test_acc"].mean(), 1)
                            for m in METHODS}})
    return rows


def table_1(args: argparse.Namespace) -> list[dict]:
    """The datasets as bundled beside Table 1."""
    rows = []
    for name in args.datasets:
        data = load_rows(odtk_name(name), 0)
        paper = TABLE_1[name]
        rows.append({"dataset": name, "odtk": odtk_name(name), "rows": data.n_rows, "paper_rows": paper[0],
                     "features": data.n_features, "paper_features": paper[1],
                     "classes": data.target.nunique(), "paper_classes": paper[2]})
    return rows


# --------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="the paper's grid: all datasets, depths 2-5, five samples, every λ, 3600 s")
    parser.add_argument("--datasets", nargs="+", choices=list(TABLE_1), default=None,
                        help="Table 1 datasets (default: monk3 monk1; --full: all eight)")
    parser.add_argument("--depths", nargs="+", type=int, default=None, help="default: 2; --full: 2 3 4 5")
    parser.add_argument("--samples", nargs="+", type=int, choices=range(1, 6), default=None,
                        help="samples 1-5 (random states 41 23 45 36 19; default: 1; --full: all)")
    parser.add_argument("--lambdas", nargs="+", type=float, default=None,
                        help="λ grid, (1.1) (default: 0 0.5; --full: 0 0.1 … 0.9)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per solve (default: 10; --full: 3600, the paper's)")
    parser.add_argument("--solver", default="highs", help="a registered MILP solver: highs, cbc, gurobi, cplex, …")
    parser.add_argument("--rows", type=int, default=None,
                        help="draw this many random rows of each dataset before splitting (default: all)")
    parser.add_argument("--db", type=Path, default=None,
                        help="results database (folder created if missing; default: a new "
                             "benchmarks/results/flowoct_paper-YYYYmmdd-HHMMSS.sqlite); an existing one needs --resume")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the solves recorded in --db (default: the newest default database) by this odtk "
                             "code and solver version")
    args = parser.parse_args(argv)
    full = args.full
    args.datasets = args.datasets or (list(TABLE_1) if full else ["monk3", "monk1"])
    args.depths = args.depths or ([2, 3, 4, 5] if full else [2])
    args.seeds = [SEEDS[s - 1] for s in (args.samples or ([1, 2, 3, 4, 5] if full else [1]))]
    args.lambdas = args.lambdas or ([round(0.1 * j, 1) for j in range(10)] if full else [0.0, 0.5])
    args.time_limit = args.time_limit or (PAPER_LIMIT if full else 10.0)
    return args


def preamble(args: argparse.Namespace, counter: dict[str, int], total: int) -> None:
    limit = ("the paper's" if args.time_limit == PAPER_LIMIT
             else f"scaled down from the paper's {PAPER_LIMIT:g} s, so fewer instances are solved")
    rows = ("all rows" if args.rows is None else
            f"{args.rows} random rows of each dataset (the paper's and the logs' rows: all)")
    print(f"Aghaei, Gómez & Vayanos, Section 4 — odtk {odtk.__version__}, {args.solver}, one thread, "
          f"{args.time_limit:g} s per solve ({limit}; the paper: Gurobi 8.1, one core)")
    print(f"datasets {' '.join(args.datasets)}; depths {' '.join(map(str, args.depths))}; samples with "
          f"random states {' '.join(map(str, args.seeds))}; λ {' '.join(f'{lam:g}' for lam in args.lambdas)}; "
          f"{rows}")
    print(reuse_line(args.db, total, counter["ran"], counter["other"], "solves"))
    print("rows 'paper'/'Table2': the paper's own figures; rows 'logs': the authors' journal-version "
          "runs (flowoct/paper_results, 3600 s), same datasets, depths, samples and λ\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    try:
        require_solver(args.solver)
        if args.db:
            args.db.parent.mkdir(parents=True, exist_ok=True)
        args.db = results_database(args.db, args.resume, "flowoct_paper")
        store = ResultStore(args.db)
    except (OdtkError, OSError) as exc:
        print(f"odtk: {exc}", file=sys.stderr)
        return 2
    ids, counter = run_all(args, store)
    frame = results(store, ids)
    grid, retrained = frame[frame["phase"] == "grid"], frame[frame["phase"] == "retrain"]
    train_logs, test_logs = load_logs("train", args), load_logs("test", args)
    train_logs = train_logs[train_logs["lambda"].isin(args.lambdas) | (train_logs["method"] == "binoct")]
    preamble(args, counter, len(ids))
    print_table(table_1(args), "Table 1: datasets (odtk's bundled copies beside the paper's sizes)")
    print()
    print_table(panel(grid, train_logs, "a", args),
                "Figure 3(a): λ = 0, instances solved to optimality within 1 %, 10 %, 100 % of the limit; "
                "t_ref_s: seconds to solve as many as BinOCT solves in the limit")
    if (grid["lam"] > 0).any():
        print()
        print_table(panel(grid, train_logs, "b", args),
                    "Figure 3(b): λ > 0, instances solved to optimality within 1 %, 10 %, 100 % of the limit; "
                    "t_ref_s: seconds to solve as many as OCT solves in the limit")
    print()
    print_table(gap_rows(grid, train_logs),
                "Figure 3(c): mean optimality gap (%) by size 2^d·|I|; the paper: all 0 % on small "
                "instances, Benders at most 20 % at any size, BinOCT mostly 100 % on large ones")
    print()
    print_table(table_2(retrained, test_logs, args),
                "Table 2: out-of-sample accuracy (%), λ tuned on validation, retrained on training + validation, "
                "mean over samples")
    return 1 if agreement(grid) else 0


if __name__ == "__main__":
    sys.exit(main())
