"""Günlük et al.'s categorical trees: the paper's tables beside odtk's numbers, row by row.

Günlük, Kalagnanam, Li, Menickelly & Scheinberg, "Optimal Decision Trees for Categorical Data via
Integer Programming" (J. Global Optimization 81, 2021), formulation (8) = ``odtk.solve("categorical")``.
Every row prints the paper's value (transcribed from its text, labelled with the table number)
beside odtk's, measured here:

    Table 2   the five configurations of §5.1 (``configuration=``: nothing, no-anchor, no-relax,
              no-strength, all; projection (14) on in all), depth 3, in-sample on the paper's 200
              random rows (quick: 100 of bc): "seconds/LPs" (paper: CPLEX LPs; odtk: CPU
              seconds of the solve / the solver's branch-and-bound nodes).
    Table 3   the same at the paper's per-dataset sample sizes (flag ``--tables 3``).
    Table 4   krkp and bc: CPU seconds to prove each topology on 100-600 training rows (``--sizes``;
              one sample each, as the paper's); a1a is not bundled.
    Table 5   the same with CART feature selection (§5.1).
    Table 6   mush: simple (max_card=1) / comb-con (max_card=2) / comb-unc branching, depth 2
              and 3: "train (test)" accuracy in %.
    Table 7   bc with CART feature selection (§5.1, as the paper's: its n rows equal its Table 9's):
              scores as ordered bins ("n", §4.4) or as categories ("c"): "train (test)/seconds".
    Table 8   accuracy by topology (depth-2, depth-2.5, depth-3, imbalanced), no feature
              selection, and CART of depth 3 fitted on the 90 %: "train (test)".
    Table 9   the same with CART feature selection; Tables 10 and 11: 8 and 9 with 300 s per
              solve (the paper's 5 minutes; "not shown" where no solve of the cell was stopped).
    Table 12  krkp and mush, feature selection, 600-2400 training rows (``--sizes12``); a1a and
              heloc are not bundled.
    Table 13  topology chosen on validation rows, CART feature selection (§5.1), vs CART pruned
              as rpart prunes (cost-complexity pruning, ``ccp_alpha`` chosen on the validation
              rows, refitted on the 90 %): "test accuracy / leaves".
    Table 14  bc, maximum specificity (TNR) subject to sensitivity (TPR) ≥ β (§4.6, positive =
              malignant): "TPR/TNR" on training then test rows.
    §5.7      heloc (a depth-2 tree on 8884 rows) is not bundled: one claim line says so.

Every odtk cell shows its status ("optimal", or how many of its solves were proven) and its
largest relative gap; a value not proven is marked ``†``. The output ends with one line per claim
of the paper: agrees, disagrees (with odtk's numbers beside the paper's) or not shown at this
scale. CPU times are compared as ratios (odtk's between two cells against the paper's), never
as seconds against CPLEX's.

Protocol (the paper's §5.4): per seed, 10 % of the rows are held out for testing; the ODT trains
on min(90 %, 600) random rows of the rest, CART on the whole 90 %. Averages over ``--seeds``
seeds (paper: 5 for Tables 6-13, 30 for Table 14). Table 13 holds a fifth of the 90 % out for
validation (the same test rows), trains on min(the other four fifths, 600) and picks the
topology with the best mean validation accuracy (paper: the 90 % rows not trained on for bc,
krkp, mush, ttt; 5-fold cross-validation on the smaller sets), reporting that topology's trees
(the paper retrains once more). odtk's CART is scikit-learn's on the one-hot columns (the
paper's is rpart), and its feature selection fits CART on 90 % of the ODT's training rows (the
paper's on 90 % of the data). Datasets: see ``categorical_campaign`` (a1a, heloc and student
are not bundled; their rows are left out).

Every ODT solve is a run of one ``odtk experiment`` campaign (``categorical_campaign``), each in
its own process, recorded in a results database as it finishes, run by ``--jobs`` local
processes or on a Dask cluster (``--executor dask --scheduler ADDRESS``); the tables are
computed from the recorded rows. Each invocation starts a new database
(``benchmarks/results/categorical_paper-YYYYmmdd-HHMMSS.sqlite``, or ``--db``); ``--resume``
reuses one (``--db``, else the newest default) for the runs made by the same odtk code, options
and solver version, so that a killed run resumes; the script says how many runs came from
earlier ones. CART baselines run in this process. The CPU seconds of a cell are its runs'
(``cpu_time``: the solve, its solver's processes included, not the run's process start).

Default (quick) mode: only cells odtk proves optimal with HiGHS on a 2-core machine, about 10 CPU
minutes in all (measured on a loaded machine, run starts included): depth 2, one seed,
bc ttt monks-1 votes heart mush; Table 2 on a 100-row sample of bc without no-strength
(``--configurations``; HiGHS needs minutes there); Tables 4-5 on 100, 300 and 600 rows; Tables
10-11 on monks-1, votes and heart; Table 12 on 600 and 1200; Tables 6 and 14 on min(90 %, 200)
training rows (``--cap``; paper 600); β in {1, 0.98} (β = 0.95 alone takes about 2 CPU minutes).
Each solve may take 3600 s (Tables 10-11: 300 s), far more than it needs (under a minute each),
so that a loaded machine cannot turn a proven cell into a time-limited one. Depth 2.5, 3 and
imbalanced at the paper's sizes take minutes to hours each: ``--full`` (every dataset, topology,
size, configuration and β, 5 seeds, 30 for Table 14, the paper's 200-row samples and 600 rows,
1800 s per solve as the paper's 30 min; cells still open at the limit are marked). ``--time-limit`` sets the limit.

``--full`` on a cluster: start ``dask scheduler`` and, on each machine (odtk and HiGHS
installed, this folder shared: the workers read the CSV files beside the database), ``dask
worker tcp://HOST:8786 --nthreads 1`` per core (each run is one process on one core), then

    python examples/categorical_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db cat_full.sqlite

and after a kill the same command with ``--resume``. Its cost, estimated: about 300 CPU-hours,
i.e. 300 / C hours of wall time on C worker cores (±50 %; at most 620 if every solve ran to its
limit), for 1470 runs (Tables 2, 4-14: 20, 48, 48, 30, 40, 132, 132, 140, 140, 120, 140,
480; runs shared by two tables counted once): Table 14 ~120 h (depth 3 taken at its 1800 s
limit), Tables 8, 12 and 13 ~50, ~30 and ~20 h (depth 2.5, 3 and imbalanced taken at the limit
without feature selection, at a third of it with), the others 3-18 h each. Not measured: only
the depth-2 runs were (the quick mode: under a minute each, a few hours of the total).

Run:  python examples/categorical_paper.py
      python examples/categorical_paper.py --resume           # reuse the newest default database
      python examples/categorical_paper.py --full --solver gurobi --jobs 8
      python examples/categorical_paper.py --tables 2 3 --time-limit 10800 --datasets bc ttt
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from _common import (add_campaign_options, add_database_options, one_hot, pruned_cart, quiet, results_database,
                     reuse_line, stopped)
from categorical_campaign import DATASETS, MALIGNANT, Cell, Runs, Solve
from categorical_claims import claim_lines
from categorical_tables import (ACCURACY, BETAS, CONFIGURATIONS, LEGEND, SIZES4, SIZES12, TABLE2, TABLE3, TABLE4,
                                TABLE5, TABLE6, TABLE7, TABLE12, TABLE13, TABLE14, TOPOLOGIES, cpu_seconds, mean, pct,
                                row)
from odtk.datasets import Dataset
from odtk.exceptions import OdtkError
from odtk.experiments.store import ResultStore
from odtk.models import TrainedModel


SHORT_LIMIT = 300.0  # Tables 10-11: the paper's 5 minutes per solve


# ----------------------------------------------------------------------- measuring
def scored(solves: list[Solve], key: str = "test") -> dict[str, list[float]]:
    """Train and ``key`` ("test" or "val") accuracy, CPU seconds and leaves of the solves that found a tree."""
    kept = [s for s in solves if s.termination is not None]
    return {"train": [s.train for s in kept], key: [getattr(s, key) for s in kept],
            "cpu": [s.cpu for s in kept], "leaves": [s.leaves for s in kept]}


def odt_row(table: int, dataset: str, setting: str, paper: str, solves: list[Solve], seconds: bool = False) -> dict:
    """A "train (test)" row (with "/CPU seconds" if ``seconds``) of one cell."""
    s = scored(solves)
    text = pct(s["train"], s["test"]) + (f"/{mean(s['cpu']):.1f}" if seconds else "")
    return row(table, dataset, setting, paper, text, solves, **{k: mean(v) for k, v in s.items()})


def cart_row(table: int, name: str, paper: str, runs: Runs, cell: Cell) -> dict:
    """CART of depth 3 fitted on the whole 90 % of each seed's split, tested on its 10 %."""
    scores = []
    for seed in range(cell.seeds):
        (train, _, _), (_, _, test) = runs.data(cell, seed, whole=True), runs.data(cell, seed)
        X = one_hot(train)
        tree = DecisionTreeClassifier(max_depth=3, random_state=seed).fit(X, train.target)
        scores.append((tree.score(X, train.target), tree.score(one_hot(test, X), test.target)))
    train, test = [s[0] for s in scores], [s[1] for s in scores]
    return row(table, name, "CART-D3", paper, pct(train, test), train=mean(train), test=mean(test))


# ----------------------------------------------------------------------- tables
def table_configurations(table: int, args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Tables 2 and 3: every named configuration on one random sample (Table 2: ``args.rows2``'s), in-sample."""
    rows = []
    for name in [name for name in args.datasets if name in (args.rows2 if table == 2 else TABLE3)]:
        size, paper = (args.rows2[name], TABLE2[name]) if table == 2 else TABLE3[name]
        seconds = [float(v.split("/")[0].replace("*", "10800")) for v in paper.split()]
        for configuration, value in zip(CONFIGURATIONS, paper.split()):
            if configuration not in args.configurations:
                continue
            solves = runs(Cell(name, args.depth2, 1, "sample", size).with_options(configuration=configuration))
            found = [s for s in solves if s.termination is not None]
            text = (f"{found[0].cpu:.1f}/{'-' if found[0].nodes is None else found[0].nodes}" if found else "*")
            rows.append(row(table, name, f"{size} rows {args.depth2}, {configuration}", value, text, solves,
                            cpu=mean([s.cpu for s in found]), paper_ratio=seconds[0] / seconds[-1]))
    return rows


def table6(args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Table 6: simple, comb-con and comb-unc branching on mush (min(90 %, cap) rows)."""
    if "mush" not in args.datasets:
        return []
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for label, max_card, paper in zip(("simple", "comb-con", "comb-unc"), (1, 2, None), TABLE6[topology]):
            solves = runs(Cell("mush", topology, args.seeds, cap=args.cap).with_options(max_card=max_card))
            rows.append(odt_row(6, "mush", f"{topology} {label}", paper, solves))
    return rows


def table7(args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Table 7: bc's scores as ordered bins ("n") or unordered categories ("c"), feature selection on."""
    if "bc" not in args.datasets:
        return []
    rows = []
    for code, numeric in (("n", "ordinal"), ("c", "categorical")):
        for topology in args.topologies:
            solves = runs(Cell("bc", topology, args.seeds).with_options(numeric=numeric, feature_selection="cart"))
            rows.append(odt_row(7, "bc", f"{topology} {code}", TABLE7[code][TOPOLOGIES.index(topology)], solves,
                                seconds=True))
    return rows


def table_times(table: int, args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Tables 4 (no feature selection) and 5 (CART feature selection): CPU seconds of each
    topology on ``args.sizes`` training rows of krkp and bc (one sample, seed 0, as the paper's)."""
    rows, paper = [], TABLE4 if table == 4 else TABLE5
    selection = {"feature_selection": "cart"} if table == 5 else {}
    for name in [name for name in ("krkp", "bc") if name in args.datasets45]:
        for topology in args.topologies:
            for size in args.sizes:
                solves = runs(Cell(name, topology, 1, cap=size).with_options(**selection))
                found = [s for s in solves if s.termination is not None]
                seconds = paper[name][topology].split()[size // 100 - 1]
                text = f"{found[0].cpu:.1f}" if found else "*"
                rows.append(row(table, name, f"{topology} {size} rows", seconds, text, solves,
                                cpu=mean([s.cpu for s in found]), size=size, topology=topology))
    return rows


def table_accuracy(table: int, args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Tables 8-11: each topology without (8, 10) or with (9, 11) feature selection, at
    ``--time-limit`` (8, 9; the paper's 30 minutes) or 5 minutes (10, 11), and CART of depth 3."""
    rows, paper = [], ACCURACY[table]
    selection = {"feature_selection": "cart"} if table in (9, 11) else {}
    limit = SHORT_LIMIT if table in (10, 11) else None
    for name in args.datasets10 if table in (10, 11) else args.datasets:
        for topology in args.topologies:
            solves = runs(Cell(name, topology, args.seeds, time_limit=limit).with_options(**selection))
            rows.append(odt_row(table, name, topology, paper[name][TOPOLOGIES.index(topology)], solves))
        rows.append(cart_row(table, name, paper[name][4], runs, Cell(name, args.topologies[0], args.seeds)))
    return rows


def table12(args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Table 12: krkp and mush with feature selection on ``args.sizes12`` training rows."""
    rows = []
    for name in [name for name in ("krkp", "mush") if name in args.datasets12]:
        for topology in args.topologies:
            for size in args.sizes12:
                solves = runs(Cell(name, topology, args.seeds, cap=size).with_options(feature_selection="cart"))
                s = scored(solves)
                rows.append(row(12, name, f"{topology} {size} rows", TABLE12[name][topology][SIZES12.index(size)],
                                pct(s["train"], s["test"]), solves, train=mean(s["train"]), test=mean(s["test"]),
                                size=size, topology=topology))
    return rows


def table13(args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Table 13: the topology best on validation rows (feature selection on), vs CART pruned on them."""
    rows = []
    for name in args.datasets:
        cells = {topology: Cell(name, topology, args.seeds, "validation").with_options(feature_selection="cart")
                 for topology in args.topologies}
        found = {topology: runs(cell) for topology, cell in cells.items()}
        best = max(found, key=lambda t: mean(scored(found[t], "val")["val"]))
        odt = scored(found[best])
        rows.append(row(13, name, f"ODT ({best})", TABLE13[name][0],
                        f"{100 * mean(odt['test']):.1f}/{mean(odt['leaves']):.1f}", found[best],
                        test=mean(odt["test"]), leaves=mean(odt["leaves"])))
        test, size = [], []
        for seed in range(args.seeds):
            train, val, held = runs.data(cells[best], seed)
            tree, X = pruned_cart(train, val, seed, refit=runs.data(cells[best], seed, whole=True)[0])
            test.append(tree.score(one_hot(held, X), held.target))
            size.append(int(tree.get_n_leaves()))
        rows.append(row(13, name, "CART pruned", TABLE13[name][1], f"{100 * mean(test):.1f}/{mean(size):.1f}",
                        test=mean(test), leaves=mean(size)))
    return rows


def table14(args: argparse.Namespace, runs: Runs) -> list[dict]:
    """Table 14: bc, maximum specificity subject to training sensitivity ≥ β (§4.6)."""
    if "bc" not in args.datasets:
        return []
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for beta in args.betas:
            cell = Cell("bc", topology, args.seeds14, cap=args.cap, positive_class=MALIGNANT)
            solves = runs(cell.with_options(rate="specificity", min_rate=beta))
            paper = TABLE14[beta][0 if topology == "depth-2" else 2: 2 if topology == "depth-2" else 4]
            rows.append(rate_row(f"{topology} β={beta:g}", " ".join(paper), solves, runs, cell, beta))
    return rows


def rate_row(setting: str, paper: str, solves: list[Solve], runs: Runs, cell: Cell, beta: float) -> dict:
    """Table 14's row: mean "TPR/TNR" on training then test rows."""
    pairs = [(s.model, runs.data(cell, seed)) for seed, s in enumerate(solves) if s.model is not None]
    if not pairs:
        return row(14, "bc", setting, paper, "*", solves)
    (train_tpr, train_tnr), test = (np.mean([rates(model, data[side]) for model, data in pairs], axis=0)
                                    for side in (0, 2))
    text = f"{100 * train_tpr:.1f}/{100 * train_tnr:.1f} {100 * test[0]:.1f}/{100 * test[1]:.1f}"
    return row(14, "bc", setting, paper, text, solves, beta=beta, train_tpr=train_tpr, train_tnr=train_tnr)


def rates(model: TrainedModel, data: Dataset) -> tuple[float, float]:
    predicted, truth = model.predict(data.features), data.target.to_numpy(dtype=object)
    positive = truth == MALIGNANT
    return float(np.mean(predicted[positive] == MALIGNANT)), float(np.mean(predicted[~positive] != MALIGNANT))


TABLES: dict[int, Callable[[argparse.Namespace, Runs], list[dict]]] = {
    **{n: lambda args, runs, n=n: table_configurations(n, args, runs) for n in (2, 3)},
    **{n: lambda args, runs, n=n: table_times(n, args, runs) for n in (4, 5)},
    6: table6, 7: table7, **{n: lambda args, runs, n=n: table_accuracy(n, args, runs) for n in ACCURACY},
    12: table12, 13: table13, 14: table14}


# ----------------------------------------------------------------------- command line
SMALL = ["monks-1", "votes", "heart"]  # the quick mode's Tables 10-11: solves of seconds
QUICK = {"datasets": ["bc", "ttt", "monks-1", "votes", "heart", "mush"], "topologies": ["depth-2"],
         "seeds": 1, "seeds14": 1, "betas": [1.0, 0.98], "time_limit": 3600.0, "depth2": "depth-3", "cap": 200,
         "rows2": {"bc": 100}, "sizes": [100, 300, 600], "sizes12": [600, 1200], "datasets10": SMALL,
         "configurations": ["nothing", "no-anchor", "no-relax", "all"]}
FULL = {"datasets": DATASETS, "topologies": TOPOLOGIES, "seeds": 5, "seeds14": 30, "betas": BETAS,
        "time_limit": 1800.0, "depth2": "depth-3", "cap": 600,
        "rows2": dict.fromkeys(TABLE2, 200), "sizes": SIZES4, "sizes12": SIZES12, "datasets10": DATASETS,
        "configurations": CONFIGURATIONS}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tables", nargs="+", type=int, choices=list(TABLES),
                        default=[n for n in TABLES if n != 3])
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS),
                        help=f"default: {' '.join(QUICK['datasets'])}; Tables 4-5 take krkp and bc of them (default "
                        f"both), Table 12 krkp and mush, Tables 10-11 {' '.join(SMALL)} (--full: all)")
    parser.add_argument("--topologies", nargs="+", choices=TOPOLOGIES, help="default: depth-2")
    parser.add_argument("--seeds", type=int, help="seeds of Tables 6-13 (default 1; Tables 4-5: one sample)")
    parser.add_argument("--seeds14", type=int, help="seeds of Table 14 (default 1)")
    parser.add_argument("--betas", nargs="+", type=float, choices=BETAS, help="default: 1 0.98")
    parser.add_argument("--rows2", type=int, help="rows of Table 2's samples, each of its datasets (default: "
                        "100 of bc; with --full the paper's 200 of bc, krkp, mush, ttt)")
    parser.add_argument("--configurations", nargs="+", choices=CONFIGURATIONS,
                        help="configurations of Tables 2-3 (default: all but no-strength, which HiGHS does not prove "
                        "in minutes even on 100 rows)")
    parser.add_argument("--sizes", nargs="+", type=int, choices=SIZES4,
                        help="training rows of Tables 4-5 (default 100 300 600; --full: 100 to 600)")
    parser.add_argument("--sizes12", nargs="+", type=int, choices=SIZES12,
                        help="training rows of Table 12 (default 600 1200; --full: 600 to 2400)")
    parser.add_argument("--depth2", choices=TOPOLOGIES, help="topology of Tables 2-3 (default depth-3, the paper's)")
    parser.add_argument("--time-limit", type=float,
                        help="seconds per solve (default 3600, far above what the quick cells need; 1800 with "
                        "--full); Tables 10-11: 300")
    parser.add_argument("--cap", type=int, help="training rows of Tables 6 and 14: min(90 %%, cap) (default 200; "
                        "the paper's 600 with --full)")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--full", action="store_true",
                        help="every dataset, topology and β; 5 seeds (30 for Table 14); 1800 s per solve")
    add_campaign_options(parser)
    add_database_options(parser, "categorical_paper", "runs")
    args = parser.parse_args(argv)
    args.counts, args.recorded = [], 0
    args.datasets45, args.datasets12 = ([name for name in paper if args.datasets is None or name in args.datasets]
                                        for paper in (("krkp", "bc"), ("krkp", "mush")))
    args.datasets10 = [name for name in (FULL if args.full else QUICK)["datasets10"]
                       if args.datasets is None or name in args.datasets]
    if args.rows2 is not None:
        args.rows2 = dict.fromkeys(TABLE2, args.rows2)
    for key, value in (FULL if args.full else QUICK).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    start = cpu_seconds()
    try:
        args.db = results_database(args.db, args.resume, "categorical_paper")
        runs = Runs(args)
        for table in args.tables:  # gathers the cells the tables need
            TABLES[table](args, runs)
        runs.execute(ResultStore(args.db))
        rows = [r for table in args.tables for r in TABLES[table](args, runs)]
    except (OdtkError, OSError, KeyboardInterrupt) as exc:
        return stopped(exc, args)
    print(f"Günlük et al. (2021) beside odtk: {args.solver}, 1 thread, up to {args.time_limit:g} s per solve "
          f"(Tables 10-11: {SHORT_LIMIT:g} s; paper: CPLEX, 8 cores, 3 h for Tables 2-3, 2 h for 4-5, 30 min for "
          "6-9 and 12-13, 5 min for 10-11), "
          f"{args.seeds} seed(s), {args.seeds14} for Table 14; Tables 6 and 14 train on min(90 %, {args.cap}) "
          "rows (paper: 600)")
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version)}")
    shown = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    print(pd.DataFrame(shown).to_string(index=False))
    print(LEGEND)
    print(f"{sum(not r['_proven'] for r in rows)} of {len(rows)} rows not proven; "
          f"{runs.cpu():.0f} CPU s in the runs' solves (computed now or earlier), "
          f"{cpu_seconds() - start:.0f} CPU s in this process and the local runs' processes")
    print("\n".join(claim_lines(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
