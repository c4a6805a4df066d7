"""Section 4 of Aghaei, Gómez & Vayanos: FlowOCT and Benders against OCT and BinOCT.

Reruns the experiment of S. Aghaei, A. Gómez, P. Vayanos, "Learning Optimal Classification
Trees: Strong Max-Flow Formulations" (arXiv:2002.09142), as the paper and the authors' code
set it up, as one ``odtk experiment`` campaign:

* Data: the eight datasets of Table 1 (``flowoct/<name>``, binarised by the authors).
* Samples: five. Sample s draws, with random state 41, 23, 45, 36 or 19 (the campaign's
  seeds), scikit-learn's shuffled, unstratified ``train_test_split``: 25 % test, then 33 % of
  the rest validation, the remaining 50 % training (the grid's ``split: {test_size: 0.25,
  validation_size: 0.33}``, the authors' code; the training sizes of their logs agree).
* In-sample (Figure 3), the campaign's grid: FlowOCT (formulation (1)), Benders (problem (8)) and
  OCT (Bertsimas & Dunn on binary data, with the paper's branching constraint (3):
  ``branching="disaggregated"``) solve every dataset, depth 2–5, sample and λ ∈ {0, 0.1, …, 0.9}
  on the training set; BinOCT (Verwer & Zhang), which has no λ, solves each once, as a λ = 0
  instance; one thread, no warm start (``settings: {warm_start: null}``). Panels (a) λ = 0 and
  (b) λ > 0 count the instances each method solves to optimality within a share of the time
  limit (solver seconds); ``t_ref_s`` is when a method has solved as many as the reference
  (BinOCT in (a), OCT in (b)) solves within the limit, ``speedup`` the limit over that time —
  the paper's "30×" and "50×". Panel (c) shows the mean optimality gap per size 2^d·|I|. The gap
  is the paper's: relative to the incumbent's misclassification objective (1−λ)·misclassified +
  λ·splits, which the authors minimised, i.e. (bound − objective) / ((1−λ)|I| − objective) in
  odtk's maximisation; a solve without a tree counts as 100 %.
* Out-of-sample (Table 2), its retraining: per dataset, depth, sample and method, the
  λ with the best validation accuracy (ties: the larger λ, as in the authors' logs) is trained
  again on training + validation; the table shows the mean test accuracy (%) over the samples.
  (The campaign's ``selection: {keep: [depth], retrain: true, prefer_larger: [lam]}``.)
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
instances unsolved, as in the paper (else any limit would make any figure). The output ends with
one line per claim of §4 — agrees, disagrees (by how much) or not shown at this scale (see
``flowoct_claims.py``).

The paper used Gurobi 8.1 on one core with one hour per solve. Here ``--solver`` picks any
registered MILP solver (one thread). The default, quick run takes instances that HiGHS proves
in seconds of CPU — monk3 and monk1 at depth 2, samples 1–3, λ ∈ {0, 0.5}: 66 solves, about 5
CPU-minutes — and gives each solve 600 s, far more than any takes, so that load cannot turn a
proof into a time-out: every odtk cell of it is a proven optimum (monk2, whose solves took up
to 270 s on a loaded machine, is left to longer runs). Harder cells belong to longer runs (more
datasets, depths, samples and λ by option) and to ``--full``, the whole grid with the paper's
hour. Every solve runs in its own process, ``--jobs`` at a time, or on a Dask cluster
(``--executor dask --scheduler ADDRESS``), and is recorded in a results database as it finishes
(the SQLite store of ``odtk experiment``; ``odtk experiment report DB`` plots it): a new
``benchmarks/results/flowoct_paper-YYYYmmdd-HHMMSS.sqlite`` per run, or ``--db``. Only
``--resume`` reuses one (``--db``, else the newest default), so that a killed run resumes where
it stopped, and only for solves made by the same odtk code, options and solver version; the
script says how many solves it computed and how many came from earlier runs.

The full protocol on a cluster: start ``dask scheduler`` on HOST, on every node ``dask worker
tcp://HOST:8786 --nthreads 1 --nworkers N`` (one solve per worker thread, each with about the
paper's 4 GB; the nodes need odtk and the solver), then, on a machine that keeps the database,
``python examples/flowoct_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db
flowoct_full.sqlite``; after a kill (of the script, the scheduler or workers) the same command
with ``--resume`` computes only the solves not recorded. Its size: 8 datasets × 4 depths × 5
samples = 160 instances, each solved 31 times in the grid (OCT, FlowOCT, Benders × 10 λ, BinOCT
once) and 4 times retrained: 5,600 solves of at most an hour, so at most 5,600 CPU-hours per
core (one thread each; plus about 2 CPU-seconds per solve to start its process). The authors'
logs of the same grid with Gurobi sum 2,744 hours of solve time (a mean of 29 minutes, most
large instances ending at the hour); HiGHS proves fewer instances within the hour than Gurobi,
so expect 2,700–5,600 CPU-hours, e.g. 1–2.5 days of wall time on 100 single-thread workers.

Run:  python examples/flowoct_paper.py
      python examples/flowoct_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db flowoct_full.sqlite
      python examples/flowoct_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db flowoct_full.sqlite \
          --resume
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import pandas as pd

import odtk
from _common import (add_campaign_options, add_database_options, load_rows, print_table, quiet, results_database,
                     reuse_line, run_grid, stopped)
from flowoct_claims import (FIGURE_3, METHODS, PAPER_LIMIT, SEEDS, TABLE_1, TABLE_2, agreement, claims, load_logs,
                            panel_methods, panel_runs, paper_gap, size, solved_times, speedup, t_ref)
from odtk.exceptions import OdtkError
from odtk.experiments.grid import Grid, parse_grid
from odtk.experiments.store import ResultStore
from odtk.solvers import require_solver

CAMPAIGN = "flowoct-paper"
SPLIT = {"test_size": 0.25, "validation_size": 0.33}  # the authors' unstratified samples
OPTIONS = {"oct": {"branching": "disaggregated"}}  # the paper's OCT: constraint (3)
MARKS = (0.01, 0.1)  # profile points as shares of the time limit (the limit is the last point)


def odtk_name(name: str) -> str:
    return "flowoct/" + name.replace("_", "-")


# --------------------------------------------------------------------------- the campaigns
def campaign(args: argparse.Namespace) -> Grid:
    """The protocol as one campaign: every dataset, sample, depth, method and λ (BinOCT: none) on
    the training part; then per dataset, sample, method and depth the λ of the best validation
    accuracy (ties: the larger λ, as the authors) again on training + validation."""
    methods = [{"model": method, "depth": args.depths, "settings": {"warm_start": None},  # as the paper
                "options": {**OPTIONS.get(method, {}), **({} if method == "binoct" else {"lam": args.lambdas})}}
               for method in METHODS]
    return parse_grid({"name": CAMPAIGN, "datasets": [{"name": odtk_name(name), "rows": args.rows}
                                                      for name in args.datasets],
                       "seeds": args.seeds, "split": SPLIT, "solvers": [args.solver], "time_limit": args.time_limit,
                       "threads": 1, "methods": methods,
                       "selection": {"keep": ["depth"], "retrain": True, "prefer_larger": ["lam"]}}, CAMPAIGN)


def described(frame: pd.DataFrame) -> pd.DataFrame:
    """Recorded runs with λ, the paper's dataset name, the paper's gap (%) and whether each run
    is proven optimal."""
    frame = frame.copy()
    frame["lam"] = [json.loads(options).get("lam", 0.0) for options in frame["options"]]
    frame["name"] = [name.split("/")[-1] for name in frame["dataset"]]
    frame["name"] = frame["name"].replace({"car-evaluation": "car_evaluation"})
    frame["gap_pct"] = [paper_gap(row) for _, row in frame.iterrows()]
    frame["proven"] = (frame["status"] == "done") & (frame["termination"] == "optimal")
    return frame


# --------------------------------------------------------------------------- tables
def cell(values: pd.Series, proven: pd.Series) -> str:
    """A table cell: the mean of ``values`` to 0.1, ``*`` unless every run of ``proven`` is proven
    optimal; "-" without values."""
    return "-" if values.dropna().empty else f"{values.mean():.1f}" + ("" if proven.all() else "*")


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
            paper = [f"{v:g}" for v in TABLE_2[name, depth]] if (name, depth) in TABLE_2 else ["-"] * 4  # depths 2-5
            rows.append({**key, "source": "Table2", "samples": len(SEEDS), **dict(zip(METHODS.values(), paper))})
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
    add_campaign_options(parser)
    add_database_options(parser, "flowoct_paper", "solves")
    args = parser.parse_args(argv)
    full = args.full
    args.datasets = args.datasets or (list(TABLE_1) if full else ["monk3", "monk1"])
    args.depths = args.depths or ([2, 3, 4, 5] if full else [2])
    args.seeds = [SEEDS[s - 1] for s in (args.samples or ([1, 2, 3, 4, 5] if full else [1, 2, 3]))]
    args.lambdas = args.lambdas or ([round(0.1 * j, 1) for j in range(10)] if full else [0.0, 0.5])
    args.time_limit = args.time_limit or (PAPER_LIMIT if full else 600.0)
    args.counts, args.recorded = [], 0
    return args


def preamble(args: argparse.Namespace, frame: pd.DataFrame) -> None:
    limit = ("the paper's" if args.time_limit == PAPER_LIMIT
             else f"not the paper's {PAPER_LIMIT:g} s: claims that need it are not shown")
    rows = ("all rows" if args.rows is None else
            f"{args.rows} random rows of each dataset (the paper's and the logs' rows: all)")
    print(f"Aghaei, Gómez & Vayanos, Section 4 — odtk {odtk.__version__}, {args.solver}, one thread, "
          f"{args.time_limit:g} s per solve ({limit}; the paper: Gurobi 8.1, one core)")
    print(f"datasets {' '.join(args.datasets)}; depths {' '.join(map(str, args.depths))}; samples with "
          f"random states {' '.join(map(str, args.seeds))}; λ {' '.join(f'{lam:g}' for lam in args.lambdas)}; "
          f"{rows}")
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version, 'solves')}")
    print(f"{int(frame['proven'].sum())} of {len(frame)} solves proven optimal, the slowest in "
          f"{frame['solve_time'].max():.1f} s of the {args.time_limit:g} s limit; CPU {frame['cpu_time'].sum():.0f} s "
          "(the solves' processes). '*': a cell with a solve not proven optimal; proven: solves proven optimal of "
          "those behind the row; max_gap_%: their largest gap")
    print("rows 'paper'/'Table2': the paper's own figures; rows 'logs': the authors' journal-version "
          "runs (flowoct/paper_results, 3600 s), same datasets, depths, samples and λ\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    try:
        require_solver(args.solver)
        args.db = results_database(args.db, args.resume, "flowoct_paper")
        frame = described(run_grid(campaign(args), ResultStore(args.db), args))
    except (OdtkError, OSError, KeyboardInterrupt) as exc:
        return stopped(exc, args, "solves")
    grid = frame[frame["phase"] == "grid"]
    train_logs, test_logs = load_logs("train", args), load_logs("test", args)
    train_logs = train_logs[train_logs["lambda"].isin(args.lambdas) | (train_logs["method"] == "binoct")]
    preamble(args, frame)
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
