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

Beside odtk's rows: ``paper`` rows hold the counts, times and speed-ups the Figure 3 text quotes
("30×" and "50×" as printed, though 3600 s over 140 s and 70 s make 26× and 51×; the instance
counts 160 and 1440 follow from the setup), ``Table2`` rows the paper's Table 2, and ``logs`` rows
the authors' raw per-run results of the journal version ("Strong Optimal Classification Trees",
arXiv:2103.15965; same code, splits and grid, later runs; bundled as ``flowoct/paper_results``),
restricted to the datasets, depths, samples and λ run here. A row's ``proven`` counts the solves
behind it proven optimal, ``max_gap_%`` is their largest gap, and ``*`` marks a cell with a solve
not proven optimal. odtk's and the logs' ``speedup`` is shown only where the reference leaves
instances unsolved, as in the paper (else any limit would make any figure).

The output ends with one line per claim of §4 — agrees, disagrees (by how much) or not shown at
this scale:

* FlowOCT and Benders solve more instances than OCT and BinOCT within the limit: in each panel,
  the fewer proven by FlowOCT and Benders against the more proven by OCT and BinOCT; not shown
  when every method proves every instance.
* the "30×" and "50×" speed-ups: shown only with the paper's hour and a reference that leaves
  instances unsolved; agrees when odtk's speed-up is at least the paper's.
* all methods prove the small instances (gap 0 %): the instances of the smallest size here.
* Benders does best on the largest instances (the smallest mean gap at the largest size, at most
  20 % at every size); not shown when every method proves the largest instances here.
* out-of-sample accuracy of FlowOCT and Benders comparable or better: each one's mean test
  accuracy at least OCT's and BinOCT's minus 1 point.

The paper used Gurobi 8.1 on one core with one hour per solve. Here ``--solver`` picks any
registered MILP solver (one thread). The default, quick run takes instances that HiGHS proves
in seconds of CPU — monk3 and monk1 at depth 2, samples 1–3, λ ∈ {0, 0.5}: 66 solves, about 5
CPU-minutes, the slowest 41 s of wall time on a machine loaded five times over — and gives each
solve 600 s, far more than any takes, so that load cannot turn a proof into a time-out: every
odtk cell of it is a proven optimum (monk2, whose solves took up to 270 s there, is left to
longer runs). Harder cells belong to longer runs (more datasets, depths, samples and λ by
option) and to ``--full``, the whole grid with the paper's hour. Every finished solve is
recorded in a results database (the SQLite store of ``odtk experiment``; ``odtk experiment
report DB`` plots it): a new ``benchmarks/results/flowoct_paper-YYYYmmdd-HHMMSS.sqlite`` per run,
or ``--db``. Only ``--resume`` reuses one (``--db``, else the newest default), so that a killed
run resumes where it stopped, and only for solves made by the same odtk code, options and solver
version; the script says how many solves it computed and how many came from earlier runs.

Run:  python examples/flowoct_paper.py
      python examples/flowoct_paper.py --full --solver gurobi --db flowoct_full.sqlite
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
from collections.abc import Iterator

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import odtk
from _common import (accuracy, add_database_options, contradicted, load_rows, print_table, quiet, results_database,
                     reuse_line)
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
FIGURE_3 = {  # panel: (λ = 0?, reference, instances, {method: (solved, t_ref seconds, speed-up)}) from §4's text
    "a": (True, "binoct", 160, {"binoct": (79, math.nan, "-"), "benders": (math.nan, 140.0, "30×")}),
    "b": (False, "oct", 1440, {"oct": (666, math.nan, "-"), "benders": (math.nan, 70.0, "50×")}),
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
    """This invocation's recorded runs, with λ, the paper's dataset name, the paper's gap (%) and
    whether each run is proven optimal."""
    frame = store.frame()
    frame = frame[frame["id"].isin(ids)].copy()
    frame["lam"] = [json.loads(options).get("lam", 0.0) for options in frame["options"]]
    frame["name"] = [name.split("/")[-1] for name in frame["dataset"]]
    frame["name"] = frame["name"].replace({"car-evaluation": "car_evaluation"})
    frame["gap_pct"] = [paper_gap(row) for _, row in frame.iterrows()]
    frame["proven"] = (frame["status"] == "done") & (frame["termination"] == "optimal")
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
    """The authors' journal-version runs (``train`` or ``test``) on this invocation's grid, with
    the columns of :func:`results` that the tables read."""
    with (data_dir() / "flowoct" / "paper_results" / f"{name}.csv").open("rb") as handle:
        logs = pd.read_csv(handle)
    logs["depth"] = pd.to_numeric(logs["depth"])
    logs["name"] = logs["dataset"].replace({"car-evaluation": "car_evaluation"})
    logs["method"] = logs["approach"].map({log: key for key, log in LOG_NAMES.items()})
    logs = logs.assign(lam=logs["lambda"], n_train=logs["nrow"], solve_time=logs["solving_time"],
                       gap_pct=100 * logs["gap"], proven=logs["status"].isin(LOG_OPTIMAL),
                       test_accuracy=logs["test_acc"], seed=pd.to_numeric(logs["sample"]))
    samples = [SEEDS.index(seed) + 1 for seed in args.seeds]
    return logs[logs["name"].isin(args.datasets) & logs["depth"].isin(args.depths) & logs["seed"].isin(samples)]


def t_ref(times: np.ndarray, count: float) -> float:
    """When ``count`` instances are solved, given the sorted solve times (NaN if never)."""
    return float(times[int(count) - 1]) if 0 < count <= len(times) else math.nan


def speedup(limit: float, when: float) -> str:
    """The time limit over ``when``, as the paper states it ("30×"); "-" if undefined."""
    return f"{limit / when:.0f}×" if when > 0 else "-"


def solved_times(runs: pd.DataFrame) -> np.ndarray:
    return np.sort(runs.loc[runs["proven"], "solve_time"].to_numpy(dtype=float))


def cell(values: pd.Series, proven: pd.Series) -> str:
    """A table cell: the mean of ``values`` to 0.1, ``*`` unless every run of ``proven`` is proven
    optimal; "-" without values."""
    return "-" if values.dropna().empty else f"{values.mean():.1f}" + ("" if proven.all() else "*")


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


def panel_methods(key: str) -> list[str]:
    """The methods of Figure 3(a) (all four) or (b) (BinOCT, which has no λ, left out)."""
    return [method for method in METHODS if FIGURE_3[key][0] or method != "binoct"]


def panel_runs(runs: pd.DataFrame, key: str) -> pd.DataFrame:
    """The runs of Figure 3(a) (λ = 0) or (b) (λ > 0)."""
    return runs[((runs["lam"] == 0) == FIGURE_3[key][0]) & runs["method"].isin(panel_methods(key))]


def profile_rows(source: str, runs: pd.DataFrame, key: str, limit: float) -> list[dict]:
    """One source's rows of a Figure 3(a)/(b) panel: per method, instances solved to optimality
    within shares of ``limit``, the largest gap, and when it has solved as many as the reference
    solves within the limit; the speed-up only if the reference leaves instances unsolved."""
    runs = panel_runs(runs, key)
    reference = runs[runs["method"] == FIGURE_3[key][1]]
    count = int(reference["proven"].sum())
    rows = []
    for method in panel_methods(key):
        mine = runs[runs["method"] == method]
        times = solved_times(mine)
        when = t_ref(times, count)
        rows.append({"source": source, "method": METHODS[method], "limit_s": limit, "instances": len(mine),
                     **{f"{mark:.0%}": int((times <= mark * limit).sum()) for mark in MARKS},
                     "solved": len(times), "max_gap_%": round(mine["gap_pct"].max(), 1), "t_ref_s": when,
                     "speedup": speedup(limit, when) if count < len(reference) else "-"})
    return rows


def panel(grid: pd.DataFrame, logs: pd.DataFrame, key: str, args: argparse.Namespace) -> list[dict]:
    """Figure 3(a) or (b): odtk's rows, the paper's quoted figures, the logs' rows."""
    bad = agreement(grid)
    rows = [{**row, "agree": "NO" if method in bad else "yes"}
            for method, row in zip(panel_methods(key), profile_rows("odtk", grid, key, args.time_limit))]
    for method, (solved, when, quoted) in FIGURE_3[key][3].items():
        rows.append({"source": "paper", "method": METHODS[method], "limit_s": PAPER_LIMIT,
                     "instances": FIGURE_3[key][2], "solved": solved, "t_ref_s": when, "speedup": quoted})
    return rows + profile_rows("logs", logs, key, PAPER_LIMIT)


def size(runs: pd.DataFrame) -> pd.Series:
    """Each run's instance size 2^d·|I|, the x-axis of Figure 3(c)."""
    return 2 ** runs["depth"].astype(int) * runs["n_train"].astype(int)


def status_columns(runs: pd.DataFrame) -> dict:
    """How many of ``runs`` are proven optimal, and their largest gap (%)."""
    return {"proven": f"{int(runs['proven'].sum())}/{len(runs)}", "max_gap_%": round(runs["gap_pct"].max(), 1)}


def gap_rows(grid: pd.DataFrame, logs: pd.DataFrame) -> list[dict]:
    """Figure 3(c): mean gap (%) per method and instance size 2^d·|I|, odtk's and the logs'."""
    pairs = []
    for (name, depth), ours in grid.groupby(["name", "depth"]):
        theirs = logs[(logs["name"] == name) & (logs["depth"] == depth)]
        pairs.append([{"size": size(runs).iloc[0] if len(runs) else math.nan, "dataset": name,
                       "depth": int(depth), "source": source, **status_columns(runs),
                       **{METHODS[m]: cell(runs.loc[runs["method"] == m, "gap_pct"],
                                           runs.loc[runs["method"] == m, "proven"]) for m in METHODS}}
                      for source, runs in (("odtk", ours), ("logs", theirs))])
    return [row for pair in sorted(pairs, key=lambda pair: pair[0]["size"]) for row in pair]


def table_2(frame: pd.DataFrame, logs: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Table 2 row by row: odtk's mean test accuracy (%) (``*``: a grid or retraining run of that
    method not proven), the paper's, the logs'."""
    rows = []
    for name in args.datasets:
        for depth in args.depths:
            key = {"dataset": name, "depth": depth}
            behind = frame[(frame["name"] == name) & (frame["depth"] == depth)]  # grid and retraining
            rows.append({**key, "source": "odtk", **accuracies(behind[behind["phase"] == "retrain"], behind)})
            rows.append({**key, "source": "Table2", "samples": len(SEEDS),
                         **{METHODS[m]: f"{v:g}" for m, v in zip(METHODS, TABLE_2.get((name, depth), ["-"] * 4))}})
            theirs = logs[(logs["name"] == name) & (logs["depth"] == depth)]
            rows.append({**key, "source": "logs", **accuracies(theirs, theirs)})
    return rows


def accuracies(runs: pd.DataFrame, behind: pd.DataFrame) -> dict:
    """One source's Table 2 cells: samples, status of the runs ``behind`` them, mean test accuracy."""
    return {"samples": runs["seed"].nunique(), **status_columns(behind),
            **{METHODS[m]: cell(100 * runs.loc[runs["method"] == m, "test_accuracy"],
                                behind.loc[behind["method"] == m, "proven"]) for m in METHODS}}


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


# --------------------------------------------------------------------------- the paper's claims
NEW, OLD = ("flowoct", "benders"), ("oct", "binoct")
COMPARABLE = 1.0  # accuracy points by which FlowOCT or Benders may trail and still be "comparable"


def claims(frame: pd.DataFrame, args: argparse.Namespace) -> list[str]:
    """One line per claim of §4: agrees, disagrees (by how much) or not shown at this scale."""
    grid = frame[frame["phase"] == "grid"]
    lines = [solved_claim(grid), *(speedup_claim(grid, key, args) for key in FIGURE_3),
             small_claim(grid), large_claim(grid), accuracy_claim(frame)]
    return [f"{claim} — {verdict}" for claim, verdict in lines]


def solved_claim(grid: pd.DataFrame) -> tuple[str, str]:
    claim = "FlowOCT and Benders solve more instances than OCT and BinOCT within the limit (Figure 3(a), (b))"
    counts, margins = [], []
    for key in FIGURE_3:
        runs = panel_runs(grid, key)
        solved = {m: int(runs.loc[runs["method"] == m, "proven"].sum()) for m in panel_methods(key)}
        counts.append(f"({key}) " + ", ".join(f"{METHODS[m]} {n}" for m, n in solved.items())
                      + f" of {(runs['method'] == 'flowoct').sum()}")
        margins.append(min(solved[m] for m in NEW) - max(solved[m] for m in OLD if m in solved))
    counts = "; ".join(counts)
    if grid["proven"].all():
        return claim, f"not shown at this scale: every method proves every instance ({counts})"
    if min(margins) >= 0 and max(margins) > 0:
        return claim, f"agrees ({counts})"
    fewer = f"solves {-min(margins)} fewer than" if min(margins) < 0 else "solves none more than"
    return claim, f"disagrees: FlowOCT or Benders {fewer} OCT or BinOCT ({counts})"


def speedup_claim(grid: pd.DataFrame, key: str, args: argparse.Namespace) -> tuple[str, str]:
    reference, quoted = FIGURE_3[key][1], FIGURE_3[key][3]["benders"]
    claim = (f"Benders solves in {quoted[1]:g} s as many instances as {METHODS[reference]} in the {PAPER_LIMIT:g} s "
             f"limit, a \"{quoted[2]}\" speed-up (Figure 3({key}))")
    runs = panel_runs(grid, key)
    ref = runs[runs["method"] == reference]
    if args.time_limit < PAPER_LIMIT:
        return claim, f"not shown at this scale: it needs the paper's {PAPER_LIMIT:g} s, here {args.time_limit:g} s"
    if ref.empty or ref["proven"].all():
        return claim, f"not shown at this scale: {METHODS[reference]} proves all {len(ref)} instances, no speed-up"
    when = t_ref(solved_times(runs[runs["method"] == "benders"]), ref["proven"].sum())
    ours = speedup(args.time_limit, when)
    if ours != "-" and float(ours[:-1]) >= float(quoted[2][:-1]):
        return claim, f"agrees: odtk's Benders {ours}"
    return claim, f"disagrees: odtk's Benders {ours} against the paper's {quoted[2]}"


def small_claim(grid: pd.DataFrame) -> tuple[str, str]:
    claim = "all methods prove the small instances (gap 0 %) (Figure 3(c))"
    smallest = grid[size(grid) == size(grid).min()]
    unproven = sorted({METHODS[m] for m in smallest.loc[~smallest["proven"], "method"]})
    where = f"size {size(smallest).iloc[0]}, {len(smallest)} instances"
    return claim, (f"agrees ({where})" if not unproven else
                   f"disagrees: {', '.join(unproven)} leave {(~smallest['proven']).sum()} unproven ({where})")


def large_claim(grid: pd.DataFrame) -> tuple[str, str]:
    claim = "Benders does best on the largest instances: the smallest gaps, at most 20 % at any size (Figure 3(c))"
    largest = grid[size(grid) == size(grid).max()]
    where = f"size {size(largest).iloc[0]}; the paper's reach 2^5·1605 = 51360, kr-vs-kp at depth 5"
    if largest["proven"].all():
        return claim, f"not shown at this scale: every method proves the largest instances here ({where})"
    means = largest.groupby("method")["gap_pct"].mean()
    worst = grid[grid["method"] == "benders"].groupby(size(grid))["gap_pct"].mean().max()
    text = ", ".join(f"{METHODS[m]} {means[m]:.1f} %" for m in METHODS if m in means)
    if means.get("benders", math.inf) <= means.min() and worst <= 20:
        return claim, f"agrees ({text}; {where})"
    return claim, (f"disagrees: Benders' largest mean gap at any size {worst:.1f} % ({text}, "
                   f"mean gaps at the largest size, {where})")


def accuracy_claim(frame: pd.DataFrame) -> tuple[str, str]:
    claim = "out-of-sample accuracy of FlowOCT and Benders comparable to or better than OCT's and BinOCT's (Table 2)"
    retrained = frame[frame["phase"] == "retrain"]
    means = 100 * retrained.groupby("method")["test_accuracy"].mean()
    if not set(METHODS) <= set(means.index):
        return claim, "not shown at this scale: no retrained tree of every method"
    text = ", ".join(f"{METHODS[m]} {means[m]:.1f} %" for m in METHODS) + f", mean of {len(retrained) // 4} trees each"
    text += "" if frame["proven"].all() else "; not all solves proven"
    trail = max(means[list(OLD)].max() - means[m] for m in NEW)
    if trail <= COMPARABLE:
        return claim, f"agrees ({text})"
    return claim, f"disagrees: FlowOCT or Benders trails by {trail:.1f} points ({text})"


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
                        help="samples 1-5 (random states 41 23 45 36 19; default: 1 2 3; --full: all)")
    parser.add_argument("--lambdas", nargs="+", type=float, default=None,
                        help="λ grid, (1.1) (default: 0 0.5; --full: 0 0.1 … 0.9)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per solve (default: 600, far beyond what the default's solves need; "
                             "--full: 3600, the paper's)")
    parser.add_argument("--solver", default="highs", help="a registered MILP solver: highs, cbc, gurobi, cplex, …")
    parser.add_argument("--rows", type=int, default=None,
                        help="draw this many random rows of each dataset before splitting (default: all)")
    add_database_options(parser, "flowoct_paper", "solves")
    args = parser.parse_args(argv)
    full = args.full
    args.datasets = args.datasets or (list(TABLE_1) if full else ["monk3", "monk1"])
    args.depths = args.depths or ([2, 3, 4, 5] if full else [2])
    args.seeds = [SEEDS[s - 1] for s in (args.samples or ([1, 2, 3, 4, 5] if full else [1, 2, 3]))]
    args.lambdas = args.lambdas or ([round(0.1 * j, 1) for j in range(10)] if full else [0.0, 0.5])
    args.time_limit = args.time_limit or (PAPER_LIMIT if full else 600.0)
    return args


def preamble(args: argparse.Namespace, counter: dict[str, int], total: int, frame: pd.DataFrame) -> None:
    limit = ("the paper's" if args.time_limit == PAPER_LIMIT
             else f"not the paper's {PAPER_LIMIT:g} s: claims that need it are not shown")
    rows = ("all rows" if args.rows is None else
            f"{args.rows} random rows of each dataset (the paper's and the logs' rows: all)")
    print(f"Aghaei, Gómez & Vayanos, Section 4 — odtk {odtk.__version__}, {args.solver}, one thread, "
          f"{args.time_limit:g} s per solve ({limit}; the paper: Gurobi 8.1, one core)")
    print(f"datasets {' '.join(args.datasets)}; depths {' '.join(map(str, args.depths))}; samples with "
          f"random states {' '.join(map(str, args.seeds))}; λ {' '.join(f'{lam:g}' for lam in args.lambdas)}; "
          f"{rows}")
    print(reuse_line(args.db, total, counter["ran"], counter["other"], "solves"))
    cpu = sum(os.times()[:4])
    print(f"{int(frame['proven'].sum())} of {len(frame)} solves proven optimal, the slowest in "
          f"{frame['solve_time'].max():.1f} s of the {args.time_limit:g} s limit; CPU {cpu:.0f} s (this process and "
          "its solver processes). '*': a cell with a solve not proven optimal; proven: solves proven optimal of "
          "those behind the row; max_gap_%: their largest gap")
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
    grid = frame[frame["phase"] == "grid"]
    train_logs, test_logs = load_logs("train", args), load_logs("test", args)
    train_logs = train_logs[train_logs["lambda"].isin(args.lambdas) | (train_logs["method"] == "binoct")]
    preamble(args, counter, len(ids), frame)
    print_table(table_1(args), "Table 1: datasets (odtk's bundled copies beside the paper's sizes)")
    print()
    print_table(panel(grid, train_logs, "a", args),
                "Figure 3(a): λ = 0, instances solved to optimality within 1 %, 10 %, 100 % of the limit; "
                "t_ref_s: seconds to solve as many as BinOCT solves in the limit; speedup: the limit over "
                "Benders' t_ref_s, defined when BinOCT leaves instances unsolved")
    if (grid["lam"] > 0).any():
        print()
        print_table(panel(grid, train_logs, "b", args),
                    "Figure 3(b): λ > 0, instances solved to optimality within 1 %, 10 %, 100 % of the limit; "
                    "t_ref_s: seconds to solve as many as OCT solves in the limit; speedup: the limit over "
                    "Benders' t_ref_s, defined when OCT leaves instances unsolved")
    print()
    print_table(gap_rows(grid, train_logs),
                "Figure 3(c): mean optimality gap (%) by size 2^d·|I|; the paper: all 0 % on small "
                "instances, Benders at most 20 % at any size, BinOCT mostly 100 % on large ones")
    print()
    print_table(table_2(frame, test_logs, args),
                "Table 2: out-of-sample accuracy (%), λ tuned on validation, retrained on training + validation, "
                "mean over samples")
    print("\nClaims of the paper (§4), at this run's scale:")
    print("\n".join(claims(frame, args)))
    return 1 if agreement(grid) else 0


if __name__ == "__main__":
    sys.exit(main())
