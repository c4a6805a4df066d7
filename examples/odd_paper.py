"""Florio et al., Optimal Decision Diagrams: Table 1, Figures 2–3 and Table 2 as a campaign.

Reruns the experiments of A. M. Florio, P. Martins, M. Schiffer, T. Serra, T. Vidal,
"Optimal Decision Diagrams for Classification" (AAAI 2023, arXiv:2205.14500) with the
paper's protocol:

* Data: the bundled ``uci/`` collection (the paper's 54 UCI datasets, features scaled to
  [0, 1] on the training rows). Each seed draws a plain random (unstratified) 50/25/25
  training / validation / test split.
* Training: Step 1, the constructive heuristic (60 s, random 60 % feature subsets, pruning),
  then Step 2, the MILP (1)–(18) with the heuristic's value as cutoff and its diagram as the
  start (600 s, one thread; odtk's limit counts building the MILP too, so Gurobi's 600 s in
  the paper are the solver's alone and odtk's solver gets 600 s less the build, about a
  second at these sizes; the optimum sought is the same). The model trained on the training
  set is scored on test.
* Calibration (Table 1): every dataset, seed, split type (multivariate, univariate),
  skeleton I–IV (``1-2-4-8``, ``1-2-4-4-4``, ``1-2-3-3-3-3``, ``1-2-2-2-2-2-2-2``, 15 internal
  nodes each as the text says; its listing of III and IV has 18 and 13) and I (tree) — the ODT:
  skeleton I with the topology fixed to the tree — and α ∈ {0.01, 0.1, 0.2, 0.5, 1}. A run is
  *proven optimal* when the MILP closes the gap (or proves that nothing beats the cutoff), and
  *improved* when it is not proven but ends below the heuristic's value. The paper's Table 1
  counts runs of both split types: 540 per cell (4,356 proven of 13,500 = 32 %, as its text
  says; the text's "270" counts one split type); its "improves in 58 %" is the Total column,
  7,776 of 13,500, so the two counts are disjoint, which is how odtk counts.
* Figures 2–3: per dataset, seed and split type, the ODD of the best skeleton and α on
  validation against the ODT (I (tree)) with its best α; test accuracy. The paper keeps the
  18 datasets where "optimal ODDs and ODTs can be consistently obtained" and both use at least
  two internal nodes (its supplement, which names them, is not at hand); odtk applies that
  rule to the datasets run (every seed proven optimal, ≥ 2 internal nodes), per split type, and
  falls back to all of them when none passes. The figures are plots with no numbers in the
  paper: their rows print the quartiles and the sorted-curve comparison beside the paper's
  statements, and ``figure_2.png`` (box plots of the ODTs' and ODDs' test accuracies) and
  ``figure_3.png`` (the same accuracies in ascending order) draw them, one panel per split
  type, unproven instances hollow (``examples/odd_figures.py``), into ``--figures DIR``
  (default: ``<database>-figures/`` beside the results database, a new numbered folder when
  that one holds figures; a figure file in ``--figures`` is replaced only with ``--force``).
* Table 2: on the same datasets, each seed's chosen skeleton and α trained again with the
  stability constraint (20) at S = 0.05n, 0.10n, 0.15n, 0.20n (``min_share``); mean test
  accuracy beside the paper's.

Every run is a run of an ``odtk experiment`` campaign: recorded in the results database as
it finishes, run by ``--jobs`` local processes or on a Dask cluster (``--executor dask
--scheduler ADDRESS``), and ``odtk experiment report DB`` plots the database. Each invocation
starts a new database (``benchmarks/results/odd_paper-YYYYmmdd-HHMMSS.sqlite``, or ``--db``);
only ``--resume`` reuses one (``--db``, else the newest default), so that a killed run resumes,
and only for runs made by the same odtk code, options and solver version; the script says how
many runs it computed and how many came from earlier runs.

``--paper`` is the paper's protocol in full: 54 datasets, 5 seeds, 60 s heuristic, 600 s MILP
(Gurobi 9.1 on one thread in the paper; here any registered solver). Its size: 54 datasets ×
5 seeds × 2 split types × 5 shapes (I–IV, I (tree)) × 5 α = 13,500 calibration runs of at most
60 + 600 s each, 2,475 CPU-hours, plus Table 2's 4 stability runs per kept dataset, seed and
split type (the paper keeps 18 datasets: 720 runs, 132 CPU-hours; all 54 at most: 396), so
at most about 2,600–2,900 CPU-hours; runs proven before the limit (a third in the paper) end
earlier, so expect some 1,800–2,000. Every run uses one thread, so CPU-hours are core-hours:
on a cluster of C cores, at most about 2,900 / C hours of wall time (29 h on 100 cores). On a
Dask cluster (every worker with this odtk checkout and the solver; the results database stays
on the machine running the script, which records every run as it finishes)::

    dask scheduler                                    # on the head node: tcp://HEAD:8786
    dask worker tcp://HEAD:8786 --nthreads 1 --nworkers CORES   # on each node: one run per core
    python examples/odd_paper.py --paper --solver gurobi --executor dask --scheduler tcp://HEAD:8786 \
           --db odd_full.sqlite
    # killed, or the scheduler lost? the same command with --resume computes only what is missing
    python examples/odd_paper.py --paper --solver gurobi --executor dask --scheduler tcp://HEAD:8786 \
           --db odd_full.sqlite --resume

The default is a quick mode that proves: three small datasets that pass the paper's selection
rule (iris, wine and seeds, 60 random rows each, seed 0), every skeleton, α and split type, one
deterministic start of the heuristic and a generous 120 s limit per MILP that these solves need
a few CPU seconds of, so that a loaded machine changes no status: HiGHS proved all 174 runs (150
calibration, 24 stability) in 10.2 CPU-minutes, measured, 4.1 of them in the solves and the rest
starting a worker process per run (with ``--jobs 2``, some 5–6 minutes on an idle 2-core
machine). On 30 training rows these datasets are separated by two internal nodes, so each
chosen ODD is the chosen ODT's diagram and Figures 2–3 print "not shown at this scale" (equally
accurate on every instance), as do Table 1's shares, which compare only over the paper's run
set (its 600 s end a third of its runs unproven, none here). Larger instances, where runs end at
the limit as in the paper, belong to ``--paper`` or to ``--datasets``/``--rows``/``--seeds``
with longer limits.

Every table shows per cell whether the runs behind it are proven (status and gap, or counts
of open and failed runs); failed runs are listed by name. The output ends with one line per
claim of the paper: agrees, disagrees (by how much) or not shown at this scale. Ctrl-C stops
the campaign with one line; the runs recorded so far stay in the database.

Run:  python examples/odd_paper.py
      python examples/odd_paper.py --resume        # the newest default database: only what is missing
      python examples/odd_paper.py --paper --solver gurobi --jobs 10 --db odd_full.sqlite
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

import odtk
from _common import (add_campaign_options, add_database_options, print_table, results_database, reuse_line, run_grid,
                     stopped)
from odd_claims import (ALPHAS, SHARES, SKELETONS, SPLITS, TREE, chosen_models, failures, figure_2, figure_3,
                        figure_claims, stability_claims, table_1, table_1_claims, table_1_shares, table_2)
from odd_figures import draw_figures, figures_folder
from odtk.datasets import list_datasets
from odtk.exceptions import OdtkError
from odtk.experiments.grid import Grid, parse_grid
from odtk.experiments.store import ResultStore
from odtk.models import TrainedModel
from odtk.solvers import require_solver

TREE_DEPTH = 4  # skeleton I as a tree: four layers of internal nodes
PAPER = {"heuristic_time": 60.0, "time_limit": 600.0, "seeds": [0, 1, 2, 3, 4], "rows": None}
QUICK = {"heuristic_time": 0.001, "time_limit": 120.0, "seeds": [0], "rows": 60,  # the first heuristic start only
         "datasets": ["uci/iris", "uci/wine", "uci/seeds"]}


# --------------------------------------------------------------------------- the campaign
def grid(name: str, datasets: list[str], seeds: list[int], methods: list[dict], args: argparse.Namespace) -> Grid:
    """A campaign grid of the paper's protocol (unstratified 50/25/25, one thread, no retraining)."""
    entries = [name if args.rows is None else {"name": name, "rows": args.rows} for name in datasets]
    return parse_grid({"name": name, "datasets": entries, "seeds": seeds, "split": [0.5, 0.25, 0.25],
                       "stratify": False, "solvers": [args.solver], "time_limit": args.time_limit,
                       "threads": 1, "methods": methods, "selection": {"retrain": False}}, "odd_paper")


def calibration(args: argparse.Namespace) -> Grid:
    """Table 1's runs: skeletons I–IV and I (tree) × α × split type, every dataset and seed."""
    options = {"alpha": args.alphas, "univariate": [SPLITS[s] for s in args.splits]}
    settings = {"heuristic_time": args.heuristic_time}
    methods = [{"model": "odd", "skeleton": [SKELETONS[k] for k in args.skeletons], "options": options,
                "settings": settings},
               {"model": "odd", "depth": TREE_DEPTH, "options": options, "settings": settings}]
    return grid("odd-paper", args.datasets, args.seeds, methods, args)


def stability(chosen: pd.DataFrame, args: argparse.Namespace) -> Grid:
    """Table 2's runs: each chosen ODD (dataset, seed, split type) again with S = share · n."""
    runs = []
    for _, row in chosen.iterrows():
        options = {"alpha": [row["alpha"]], "univariate": [SPLITS[row["split_type"]]], "min_share": args.shares}
        method = {"model": "odd", "skeleton": [row["skeleton"]], "options": options,
                  "settings": {"heuristic_time": args.heuristic_time}}
        runs += grid("odd-paper-stability", [row["dataset"]], [int(row["seed"])], [method], args).runs
    return Grid("odd-paper-stability", runs, (), False)


def described(frame: pd.DataFrame) -> pd.DataFrame:
    """Recorded runs with their α, split type, skeleton label, heuristic value and node count."""
    frame = frame.copy()
    options = [json.loads(text) for text in frame["options"]]
    frame["alpha"] = [o["alpha"] for o in options]
    frame["split_type"] = ["univariate" if o.get("univariate") else "multivariate" for o in options]
    frame["share"] = [o.get("min_share", 0.0) for o in options]
    names = {widths: key for key, widths in SKELETONS.items()}
    frame["shape"] = [TREE if pd.isna(skeleton) else names.get(skeleton, skeleton) for skeleton in frame["skeleton"]]
    frame["heuristic"] = [json.loads(text or "{}").get("heuristic", {}).get("objective")
                          if isinstance(text, str) else None for text in frame["steps"]]
    frame["nodes"] = [TrainedModel.from_dict(json.loads(text)).graph.n_splits if isinstance(text, str) else None
                      for text in frame["model"]]
    frame["proven"] = (frame["status"] == "done") & (frame["termination"] == "optimal")
    frame["gap"] = pd.to_numeric(frame["gap"]).where(~frame["proven"], 0.0)
    frame["better"] = pd.to_numeric(frame["objective"]) < pd.to_numeric(frame["heuristic"]) - 1e-9
    frame["improved"] = ~frame["proven"] & frame["better"]
    return frame


# --------------------------------------------------------------------------- script
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--paper", action="store_true",
                        help="the paper's protocol: every uci/ dataset, seeds 0-4, 60 s heuristic, 600 s MILP")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help=f"bundled datasets (default: {' '.join(QUICK['datasets'])}; --paper: all uci/)")
    parser.add_argument("--seeds", nargs="+", type=int, default=None, help="split seeds (default: 0; --paper: 0-4)")
    parser.add_argument("--skeletons", nargs="+", choices=list(SKELETONS), default=list(SKELETONS),
                        help="skeletons besides I (tree), which always runs")
    parser.add_argument("--alphas", nargs="+", type=float, choices=ALPHAS, default=list(ALPHAS), help="α grid")
    parser.add_argument("--splits", nargs="+", choices=list(SPLITS), default=list(SPLITS), help="split types")
    parser.add_argument("--shares", nargs="+", type=float, choices=SHARES, default=list(SHARES),
                        help="Table 2: S as a share of n")
    parser.add_argument("--heuristic-time", type=float, default=None,
                        help="Step 1 seconds (default 0.001: its first start only; --paper 60)")
    parser.add_argument("--time-limit", type=float, default=None, help="Step 2 seconds (default 120; --paper 600)")
    parser.add_argument("--rows", type=int, default=None,
                        help="draw this many random rows of each dataset first (default 60; 0 and --paper: all)")
    parser.add_argument("--solver", default="highs", help="a registered MILP solver: highs, cbc, scip, gurobi, …")
    add_campaign_options(parser)
    add_database_options(parser, "odd_paper", "runs")
    parser.add_argument("--figures", type=Path, default=None,
                        help="folder for figure_2.png and figure_3.png (created if missing; default: "
                             "<database>-figures beside the results database, numbered anew if it holds figures)")
    parser.add_argument("--force", action="store_true", help="replace figure files already in --figures")
    args = parser.parse_args(argv)
    preset = PAPER if args.paper else QUICK
    uci = sorted((info.n_rows, info.name) for info in list_datasets() if info.collection == "uci")
    args.datasets = args.datasets or ([name for _, name in uci] if args.paper else QUICK["datasets"])
    args.rows = preset["rows"] if args.rows is None else (args.rows or None)
    args.seeds = args.seeds if args.seeds is not None else preset["seeds"]
    args.heuristic_time = args.heuristic_time or preset["heuristic_time"]
    args.time_limit = args.time_limit or preset["time_limit"]
    args.counts, args.recorded = [], 0
    return args


def preamble(args: argparse.Namespace, *frames: pd.DataFrame) -> None:
    """The settings, the runs computed now and reused, the CPU time of the runs behind the
    tables (``frames``) and the figure files written."""
    scaled = ("the paper's" if (args.heuristic_time, args.time_limit) == (60, 600)
              else "not the paper's 60 s + 600 s")
    rows = "all rows" if args.rows is None else f"{args.rows} random rows of each dataset (the paper: all)"
    print(f"Florio et al., Optimal Decision Diagrams — odtk {odtk.__version__}, {args.solver}, one thread, "
          f"heuristic {args.heuristic_time:g} s + MILP {args.time_limit:g} s per run ({scaled}; "
          f"the paper: Gurobi 9.1)")
    print(f"datasets {' '.join(args.datasets)}; seeds {' '.join(map(str, args.seeds))} (unstratified 50/25/25, "
          f"{rows}); α {' '.join(f'{a:g}' for a in args.alphas)}; skeletons {' '.join(args.skeletons)} + {TREE}")
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version)}")
    cpu = sum(pd.to_numeric(frame["cpu_time"]).sum() for frame in frames)
    print(f"CPU time of these runs: {cpu / 60:.1f} minutes (their solves' processes, as recorded)")
    print(f"figures written: {', '.join(map(str, args.written))} (the rows of Figures 2-3 below, drawn)")
    print("rows 'Table1'/'Table2': the paper's figures; 'paper' column: its statements on Figures 2-3\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        require_solver(args.solver)
        args.db = results_database(args.db, args.resume, "odd_paper")
        args.figures = figures_folder(args.figures, args.db, args.force)  # refused now, not after the runs
        store = ResultStore(args.db)
        runs = described(run_grid(calibration(args), store, args))
        pairs = chosen_models(runs, len(args.seeds))
        stable = described(run_grid(stability(pairs[pairs["kept"]], args), store, args))
        args.written = draw_figures(pairs, args.splits, args.figures)
    except (OdtkError, OSError, KeyboardInterrupt) as exc:
        return stopped(exc, args)
    preamble(args, runs, stable)
    print_table(table_1(runs, args), "Table 1: runs proven optimal (opt_α) and improved on the heuristic "
                                     "without proof (imp_α), per skeleton and α")
    print()
    print_table(table_1_shares(runs, args), "Table 1 shares: % of runs proven optimal and improved, all skeletons")
    print()
    print_table(figure_2(pairs), "Figure 2: test accuracy of the ODD (best skeleton and α on validation) and the "
                                 "ODT (I(tree), best α); datasets selected by the paper's rule, else all")
    print()
    print_table(figure_3(pairs), "Figure 3: sorted test accuracies, share of ranks where ODD >= ODT; "
                                 "instance-by-instance wins")
    print()
    stability_table = table_2(pairs, stable, args)
    print_table(stability_table, "Table 2: mean test accuracy with stability (20), S = share · n (S0: without), "
                                 "every column over the same chosen ODDs (averaged; failed: left out)")
    print()
    print("\n".join(failures(runs, stable)))
    print()
    print("The paper's claims (agrees / disagrees by how much / not shown at this scale):")
    print("\n".join(table_1_claims(runs, args) + figure_claims(pairs, args) + stability_claims(stability_table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
