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
  falls back to all of them when none passes. The figures are plots: their rows print the
  quartiles and the sorted-curve comparison, beside the paper's statements.
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
(Gurobi 9.1 on one thread in the paper; here any registered solver). The default scales it
down to finish in minutes on a laptop: two small datasets, one seed, a 1 s heuristic and a 5 s
MILP limit, so far fewer runs are proven optimal than in the paper.

Run:  python examples/odd_paper.py
      python examples/odd_paper.py --paper --solver gurobi --jobs 10 --db odd_full.sqlite
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import odtk
from _common import print_table, results_database, reuse_line
from odtk.datasets import list_datasets
from odtk.exceptions import OdtkError
from odtk.experiments.grid import Grid, parse_grid
from odtk.experiments.runner import run_campaign
from odtk.experiments.store import ResultStore
from odtk.models import TrainedModel
from odtk.solvers import require_solver

SKELETONS = {"I": "1-2-4-8", "II": "1-2-4-4-4", "III": "1-2-3-3-3-3", "IV": "1-2-2-2-2-2-2-2"}
TREE, TREE_DEPTH = "I(tree)", 4  # skeleton I as a tree: four layers of internal nodes
ALPHAS = (0.01, 0.1, 0.2, 0.5, 1.0)
SHARES = (0.05, 0.10, 0.15, 0.20)
SPLITS = {"multivariate": False, "univariate": True}  # split type → the ``univariate`` option
PAPER_RUNS = 540  # per Table 1 cell: 54 datasets × 5 seeds × 2 split types
TABLE_1 = {  # skeleton: runs proven optimal per α, runs improved (not proven) per α
    "I": ((152, 155, 162, 179, 225), (35, 91, 134, 202, 202)),
    "II": ((150, 154, 162, 179, 227), (36, 91, 124, 194, 193)),
    "III": ((148, 152, 161, 177, 223), (38, 89, 129, 200, 205)),
    "IV": ((149, 156, 163, 178, 226), (62, 124, 150, 226, 221)),
    TREE: ((155, 158, 163, 177, 225), (30, 98, 131, 208, 207)),
}
TABLE_2 = {"multivariate": (0.828, 0.827, 0.823, 0.823), "univariate": (0.840, 0.838, 0.837, 0.835)}
FIGURES = {  # the paper's statements on Figures 2–3 (18 datasets × 5 seeds)
    "multivariate": "ODD>ODT",  # "ODDs show a higher accuracy", higher quartiles, curve above
    "univariate": "ODD≈ODT",    # "comparable accuracy"
}
PAPER = {"heuristic_time": 60.0, "time_limit": 600.0, "seeds": [0, 1, 2, 3, 4]}
SMALL = {"heuristic_time": 1.0, "time_limit": 5.0, "seeds": [0], "datasets": ["uci/soybean-small", "uci/iris"]}


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


def run(campaign: Grid, store: ResultStore, args: argparse.Namespace) -> pd.DataFrame:
    """Run the campaign's pending runs (progress on stderr) and return all its recorded rows."""
    def progress(phase: str, total: int):
        counter = iter(range(1, total + 1))

        def finished(row: dict) -> None:
            outcome = row.get("termination") or row.get("message", "")
            print(f"[{next(counter)}/{total}] {campaign.name} {row['dataset']} seed {row['seed']} "
                  f"{row['skeleton'] or 'tree'} {json.dumps(row['options'])}: {outcome}",
                  file=sys.stderr, flush=True)
        return finished

    report = run_campaign(campaign, store, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
                          progress=progress)
    args.counts.append((campaign.name, report))
    frame = store.frame()
    return described(frame[frame["id"].isin([r["id"] for r in campaign.runs])])


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
    frame["better"] = pd.to_numeric(frame["objective"]) < pd.to_numeric(frame["heuristic"]) - 1e-9
    frame["improved"] = ~frame["proven"] & frame["better"]
    return frame


# --------------------------------------------------------------------------- Table 1
def table_1(runs: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Runs proven optimal / improved per skeleton and α: odtk's counts beside the paper's."""
    rows = []
    for shape in [*args.skeletons, TREE]:
        ours = runs[runs["shape"] == shape]
        paper_proven, paper_improved = TABLE_1[shape]
        paper = dict(zip(ALPHAS, zip(paper_proven, paper_improved)))
        odtk_row = {"skeleton": shape, "source": "odtk", "runs": len(ours) // len(args.alphas)}
        paper_row = {"skeleton": shape, "source": "Table1", "runs": PAPER_RUNS}
        for alpha in args.alphas:
            at = ours[ours["alpha"] == alpha]
            odtk_row |= {f"opt_{alpha:g}": int(at["proven"].sum()), f"imp_{alpha:g}": int(at["improved"].sum())}
            paper_row |= {f"opt_{alpha:g}": paper[alpha][0], f"imp_{alpha:g}": paper[alpha][1]}
        odtk_row["total"] = int(ours["proven"].sum() + ours["improved"].sum())
        paper_row["total"] = sum(paper[alpha][0] + paper[alpha][1] for alpha in args.alphas)
        rows += [odtk_row, paper_row]
    return rows


def table_1_shares(runs: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Per α, the share (%) of runs proven optimal and improved, all skeletons: odtk and paper;
    ``better_pct``: runs ending below the heuristic's value, proven or not (odtk only)."""
    shapes = [*args.skeletons, TREE]
    rows = []
    for k, alpha in enumerate(ALPHAS):
        if alpha not in args.alphas:
            continue
        at = runs[runs["alpha"] == alpha]
        proven = sum(TABLE_1[shape][0][k] for shape in shapes)
        improved = sum(TABLE_1[shape][1][k] for shape in shapes)
        paper_runs = PAPER_RUNS * len(shapes)
        rows.append({"alpha": alpha, "runs": len(at), "opt_pct": 100 * at["proven"].mean(),
                     "paper_opt_pct": 100 * proven / paper_runs, "imp_pct": 100 * at["improved"].mean(),
                     "paper_imp_pct": 100 * improved / paper_runs, "better_pct": 100 * at["better"].mean()})
    return rows


# --------------------------------------------------------------------------- Figures 2–3
def best(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, seed and split type, the done run with the best validation accuracy (ties:
    the larger α, then skeleton order I–IV)."""
    done = runs[runs["status"] == "done"].copy()
    done["_order"] = [list(SKELETONS).index(shape) if shape in SKELETONS else 0 for shape in done["shape"]]
    done = done.sort_values(["val_accuracy", "alpha", "_order"], ascending=[False, False, True])
    return done.groupby(["dataset", "seed", "split_type"], sort=True).head(1).drop(columns="_order")


def chosen_models(runs: pd.DataFrame, seeds: int) -> pd.DataFrame:
    """The selected ODD (best of I–IV and α) and ODT (I (tree), best α) per dataset, seed and
    split type. ``rule``: some dataset of the split type passes the paper's rule (on all
    ``seeds`` seeds, both proven optimal with ≥ 2 internal nodes); ``kept``: the pair is used
    (its dataset passes, or none of its split type does)."""
    odd, odt = best(runs[runs["shape"] != TREE]), best(runs[runs["shape"] == TREE])
    pairs = odd.merge(odt, on=["dataset", "seed", "split_type"], suffixes=("", "_odt"))
    good = pairs["proven"] & pairs["proven_odt"] & (pairs["nodes"] >= 2) & (pairs["nodes_odt"] >= 2)
    per_dataset = good.groupby([pairs["dataset"], pairs["split_type"]])
    passes = per_dataset.transform("all") & (per_dataset.transform("size") == seeds)
    rule = passes.groupby(pairs["split_type"]).transform("any")
    return pairs.assign(kept=passes | ~rule, rule=rule)


def quartiles(values: pd.Series) -> dict:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {"q1": q1, "median": median, "q3": q3, "mean": values.mean()}


def figure_2(pairs: pd.DataFrame) -> list[dict]:
    """Test-accuracy quartiles of the chosen ODDs and ODTs, per split type."""
    rows = []
    for split_type, group in pairs[pairs["kept"]].groupby("split_type", sort=False):
        datasets = group["dataset"].nunique()
        selection = "rule" if group["rule"].iloc[0] else "all"
        for model, column in (("ODD", "test_accuracy"), ("ODT", "test_accuracy_odt")):
            rows.append({"split": split_type, "model": model, "datasets": datasets, "selected_by": selection,
                         "instances": len(group), **quartiles(group[column]),
                         "paper": FIGURES[split_type]})
    return rows


def figure_3(pairs: pd.DataFrame) -> list[dict]:
    """Sorted test accuracies: the share of ranks where the ODD curve is not below the ODT's,
    and the instance-by-instance wins, per split type."""
    rows = []
    for split_type, group in pairs[pairs["kept"]].groupby("split_type", sort=False):
        odd, odt = group["test_accuracy"].to_numpy(), group["test_accuracy_odt"].to_numpy()
        rows.append({"split": split_type, "instances": len(group),
                     "odd_curve_above": float(np.mean(np.sort(odd) >= np.sort(odt) - 1e-12)),
                     "odd_wins": int(np.sum(odd > odt + 1e-12)), "ties": int(np.sum(np.isclose(odd, odt))),
                     "odt_wins": int(np.sum(odt > odd + 1e-12)), "paper": FIGURES[split_type]})
    return rows


# --------------------------------------------------------------------------- Table 2
def table_2(pairs: pd.DataFrame, stable: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Mean test accuracy with stability S = share · n, beside the paper's (S = 0: the chosen ODD)."""
    rows = []
    key = ["dataset", "seed", "split_type"]
    for split_type, group in pairs[pairs["kept"]].groupby("split_type", sort=False):
        row = {"split": split_type, "source": "odtk", "S0": group["test_accuracy"].mean()}
        paper = {"split": split_type, "source": "Table2", "S0": np.nan}
        for k, share in enumerate(SHARES):
            if share not in args.shares:
                continue
            runs = stable[(stable["share"] == share) & (stable["split_type"] == split_type)]
            runs = runs.merge(group[key], on=key)
            done = runs[runs["status"] == "done"]
            row[f"S{share:g}n"] = done["test_accuracy"].mean() if len(done) else np.nan
            row[f"runs{share:g}"] = f"{len(done)}/{len(runs)}"
            paper[f"S{share:g}n"], paper[f"runs{share:g}"] = TABLE_2[split_type][k], "-"
        rows += [row, paper]
    return rows


# --------------------------------------------------------------------------- script
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--paper", action="store_true",
                        help="the paper's protocol: every uci/ dataset, seeds 0-4, 60 s heuristic, 600 s MILP")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help=f"bundled datasets (default: {' '.join(SMALL['datasets'])}; --paper: all uci/)")
    parser.add_argument("--seeds", nargs="+", type=int, default=None, help="split seeds (default: 0; --paper: 0-4)")
    parser.add_argument("--skeletons", nargs="+", choices=list(SKELETONS), default=list(SKELETONS),
                        help="skeletons besides I (tree), which always runs")
    parser.add_argument("--alphas", nargs="+", type=float, choices=ALPHAS, default=list(ALPHAS), help="α grid")
    parser.add_argument("--splits", nargs="+", choices=list(SPLITS), default=list(SPLITS), help="split types")
    parser.add_argument("--shares", nargs="+", type=float, choices=SHARES, default=list(SHARES),
                        help="Table 2: S as a share of n")
    parser.add_argument("--heuristic-time", type=float, default=None, help="Step 1 seconds (default 1; --paper 60)")
    parser.add_argument("--time-limit", type=float, default=None, help="Step 2 seconds (default 5; --paper 600)")
    parser.add_argument("--rows", type=int, default=None, help="draw this many random rows of each dataset first")
    parser.add_argument("--solver", default="highs", help="a registered MILP solver: highs, cbc, scip, gurobi, …")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (local executor)")
    parser.add_argument("--executor", choices=["local", "dask"], default="local")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")
    parser.add_argument("--db", type=Path, default=None,
                        help="results database (folder created if missing; default: a new "
                             "benchmarks/results/odd_paper-YYYYmmdd-HHMMSS.sqlite); an existing one needs --resume")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the runs recorded in --db (default: the newest default database) by this odtk "
                             "code and solver version")
    args = parser.parse_args(argv)
    preset = PAPER if args.paper else SMALL
    uci = sorted((info.n_rows, info.name) for info in list_datasets() if info.collection == "uci")
    args.datasets = args.datasets or ([name for _, name in uci] if args.paper else SMALL["datasets"])
    args.seeds = args.seeds if args.seeds is not None else preset["seeds"]
    args.heuristic_time = args.heuristic_time or preset["heuristic_time"]
    args.time_limit = args.time_limit or preset["time_limit"]
    args.counts = []
    return args


def preamble(args: argparse.Namespace) -> None:
    scaled = ("the paper's" if (args.heuristic_time, args.time_limit) == (60, 600)
              else "scaled down from the paper's 60 s + 600 s, so fewer runs are proven optimal")
    rows = "all rows" if args.rows is None else f"{args.rows} random rows of each dataset (the paper: all)"
    print(f"Florio et al., Optimal Decision Diagrams — odtk {odtk.__version__}, {args.solver}, one thread, "
          f"heuristic {args.heuristic_time:g} s + MILP {args.time_limit:g} s per run ({scaled}; "
          f"the paper: Gurobi 9.1)")
    print(f"datasets {' '.join(args.datasets)}; seeds {' '.join(map(str, args.seeds))} (unstratified 50/25/25, "
          f"{rows}); α {' '.join(f'{a:g}' for a in args.alphas)}; skeletons {' '.join(args.skeletons)} + {TREE}")
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version)}")
    print("rows 'Table1'/'Table2': the paper's figures; 'paper' column: its statements on Figures 2-3\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        require_solver(args.solver)
        if args.db:
            args.db.parent.mkdir(parents=True, exist_ok=True)
        args.db = results_database(args.db, args.resume, "odd_paper")
        store = ResultStore(args.db)
        runs = run(calibration(args), store, args)
        pairs = chosen_models(runs, len(args.seeds))
        stable = run(stability(pairs[pairs["kept"]], args), store, args)
    except (OdtkError, OSError) as exc:
        print(f"odtk: {exc}", file=sys.stderr)
        return 2
    preamble(args)
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
    print_table(table_2(pairs, stable, args), "Table 2: mean test accuracy with stability (20), S = share · n "
                                              "(S0: without); runs done / run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
