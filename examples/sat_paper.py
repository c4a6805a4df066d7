"""DT_depth and DT_size: the smallest trees consistent with the training data, by SAT, as campaigns.

Reproduces the experiments of F. Avellaneda, "Efficient Inference of Optimal Decision Trees"
(AAAI 2020): DT_depth finds the smallest depth k of a tree that classifies every training
example correctly, DT_size the fewest nodes n of such a tree at depth k, both by SAT calls on a
growing subset of the examples (Algorithm 3). Every search is a run of an ``odtk experiment``
campaign (models ``sat-depth`` and ``sat-size``, MiniSat 2.2 through python-sat) on features
binarised as the authors' code does (``thresholds: values``: ``x > v`` for every distinct
training value v of an ordered column but the largest; the same k, n and examples encoded as
``sat_inference.search`` on ``FeatureEncoder(thresholds="values")``). Three tables and a figure,
each beside the paper's values:

* Table 1, "Mouse" (``consistent/mouse``, 70 rows, 45 Boolean features): CPU seconds, examples
  encoded (expl), k and n on the whole dataset (``split: [1, 0, 0]``), and the mean test
  accuracy of 10-fold cross-validation (``split: {folds: 10}``, seeds 0–9 per shuffle;
  ``--repeats`` shuffles, the paper averages 100).
* Table 2, "Car" (``consistent/car`` with the paper's two classes, unacc against acc, good
  and vgood, written as a CSV file beside the database; 15 Boolean features here, 21 in the
  paper, whose encoding adds an always-true column per attribute): the same columns; its
  cross-validation (``--car-folds``) takes hours.
* Table 3, the Verwer & Zhang datasets: each bundled training part (``consistent/*.trainS.csv``)
  as a CSV dataset, the test accuracy of its tree computed here on the bundled test part;
  averages over the splits that both searches proved (``proven``) of S (training rows), k, n,
  test accuracy, CPU seconds and examples encoded, with Table 3's BinOCT*, CART and OCT
  accuracies (the best of depths 2–4, from Verwer and Zhang) beside. ``paper_S`` is Table 4's
  |E|, the examples of the dataset as the paper counts them, not of a training split.
* Figure 2, random generator trees (``sat_figure2``: its data drawn as the paper describes it,
  one CSV file per generator beside the database): mean CPU seconds and the share of inferred
  trees equivalent to the generator against the number of examples, for DT_depth, DT_size and
  a C4.5 stand-in for J48, as a table and a PNG (``--figure``; never overwritten without
  ``--force``).

n is the paper's node count, every node: DT_depth's perfect tree, 2^(k+1) − 1 (Table 1's 31,
Table 2's 511); DT_size's proven fewest nodes of a tree of minimum depth, 2B − 1 for B leaves.
Accuracies are those of odtk's tree (the perfect tree of the last SAT answer simplified: leaves
no training row reaches removed, one-class subtrees merged; ``n_simpl`` its nodes). Times: CPU
seconds of the search (``cpu_sec``, SAT solver included) beside the paper's (MiniSat on an
Intel i7-2600K; another machine). ``consistent`` is "yes" when every tree classifies all its
training rows and DT_size's tree has DT_depth's depth; otherwise "NO" and exit status 1. Every
table shows per cell whether its searches are proven; the last lines give one verdict per
claim of the paper. Each invocation starts a new results database (``--db``, default
``benchmarks/results/sat_paper-YYYYmmdd-HHMMSS.sqlite``); ``--resume`` reuses the runs of one
made by the same odtk code and solver version, so that a killed run resumes.

The default is a quick mode that proves every search (Tables 1 and 3 on iris, monk1 and monk3,
Figure 2 with 8 generators at 5 sizes: 132 runs, 401 CPU seconds measured, about 3 s per run of
which 2 s start the run's process and import odtk; 3.5 minutes on an idle 2-core machine).
``--full`` is the paper's whole protocol: Tables 1–3 on all its bundled datasets, Table 1's
cross-validation shuffled 100 times and Table 2's 10 times, Figure 2 with 1000 generators at
16 sizes from 50 to 3000 examples, and a generous 3600 s per search (the paper gives no limit;
its slowest search took 217 s): 34,264 runs, about 40 CPU-hours, so 40 / C hours on C cores.
The estimate: 3 s per run of Tables 1 and 3 and of Figure 2 (measured in the quick mode), 62
CPU seconds for a balance-scale DT_depth search (measured), and Car's and balance-scale's other
searches scaled from the paper's times by that run's ratio to the paper's (1.2): Figure 2 about
28 hours, Table 2 about 11, the rest about 2.
On a cluster, start a Dask scheduler and workers (``dask scheduler``; ``dask worker
tcp://HOST:8786 --nthreads 1`` per core; each run is one process on one core) on machines that
share this folder (the CSV files beside the database are read by the workers), then run it;
after a kill, the same command with ``--resume`` finishes the runs not recorded.

Run:  python examples/sat_paper.py
      python examples/sat_paper.py --tables 3 --datasets iris monk1 monk2 monk3 wine balance-scale
      python examples/sat_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db sat_full.sqlite
      python examples/sat_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db sat_full.sqlite --resume
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import odtk
import sat_figure2 as figure2
from _common import (add_campaign_options, add_database_options, print_table, quiet, results_database, reuse_line,
                     run_grid, stopped)
from odtk.datasets import Dataset, load_dataset
from odtk.datasets.catalog import data_dir
from odtk.exceptions import OdtkError
from odtk.experiments.grid import Grid, csv_data, parse_grid
from odtk.experiments.store import ResultStore
from odtk.experiments.worker import splits
from odtk.files import check_writable, write_atomic
from odtk.models import TrainedModel
from odtk.plotting import pyplot
from sat_claims import TABLE1, TABLE2, TABLE3, verdicts

MODELS = {"DT_depth": "sat-depth", "DT_size": "sat-size"}
SETTINGS = {"thresholds": "values"}  # as FeatureEncoder(thresholds="values")
WHOLE = {"mouse": ("Table 1", TABLE1), "car": ("Table 2", TABLE2)}
QUICK = {"tables": ["1", "3", "fig2"], "datasets": ["iris", "monk1", "monk3"], "repeats": 1, "car_folds": 0,
         "car_repeats": 1, "generators": 8, "examples": [50, 100, 200, 400, 1800], "time_limit": 600.0}
FULL = {"tables": ["1", "2", "3", "fig2"], "datasets": list(TABLE3), "repeats": 100, "car_folds": 10,
        "car_repeats": 10, "generators": 1000, "time_limit": 3600.0,
        "examples": [50, 100, 150, 200, 300, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000]}


# --------------------------------------------------------------------------- the campaigns
def grid(name: str, datasets: list, seeds: list[int], split, args: argparse.Namespace, **extra) -> Grid:
    """Both searches on ``datasets`` × ``seeds`` with ``split``, binarised as the authors' code."""
    methods = [{"model": model, "solvers": [args.solver], "settings": SETTINGS} for model in MODELS.values()]
    return parse_grid({"name": name, "datasets": datasets, "seeds": seeds, "split": split, "methods": methods,
                       "time_limit": args.time_limit, "selection": {"retrain": False}, **extra}, "sat_paper")


def searched(frame: pd.DataFrame) -> pd.DataFrame:
    """Recorded runs with the paper's figures: status, k, n (every node), n_simpl, expl, CPU seconds."""
    steps = [json.loads(text)["search"] if isinstance(text, str) else {} for text in frame["steps"]]
    algorithm = {model: name for name, model in MODELS.items()}
    nodes = [None if not step else 2 ** (step["depth"] + 1) - 1 if model == "sat-depth" else int(objective)
             for step, model, objective in zip(steps, frame["method"], frame["objective"])]
    return frame.assign(
        algorithm=frame["method"].map(algorithm), k=[step.get("depth") for step in steps], n=nodes,
        state=np.where(frame["status"] == "done", frame["termination"].fillna("failed"), "failed"),
        n_simpl=[step.get("nodes") for step in steps], expl=[step.get("examples_encoded") for step in steps],
        cpu_sec=[step.get("cpu_seconds") for step in steps], consistent=frame["train_accuracy"] == 1)


def whole_rows(table: str, entry, rows: int, folds: int, repeats: int, store: ResultStore,
               args: argparse.Namespace) -> list[dict]:
    """Table 1 or 2: both searches on the whole dataset, then ``folds``-fold accuracy."""
    name, paper = WHOLE[table]
    whole = searched(run_grid(grid(f"sat-{table}", [entry], [0], [1, 0, 0], args), store, args))
    folded = (searched(run_grid(grid(f"sat-{table}-cv", [entry], list(range(folds * repeats)), {"folds": folds},
                                     args), store, args)) if folds else whole.iloc[:0])
    result = []
    for model, cited in paper.items():
        run = whole[whole["algorithm"] == model].iloc[0]
        cv = folded[folded["algorithm"] == model]
        result.append({"algorithm": model, "status": run["state"], "rows": rows, "paper_sec": cited.seconds,
                       "cpu_sec": run["cpu_sec"], "paper_expl": cited.expl, "expl": run["expl"],
                       "paper_k": cited.k, "k": run["k"], "paper_n": cited.n, "n": run["n"],
                       "n_simpl": run["n_simpl"], "paper_acc": cited.accuracy,
                       "acc": 100 * cv["test_accuracy"].mean() if len(cv) else math.nan,
                       "cv_proven": f"{int((cv['state'] == 'optimal').sum())}/{folds * repeats}",
                       "consistent": "yes" if run["consistent"] else "NO"})
    print_table(result, f"{name}: {table}, whole dataset; accuracy by {folds or 'no'}-fold cross-validation × "
                        f"{repeats}\n{WHOLE_COLUMNS}")
    print()
    return result


def car_entry(folder: Path) -> dict:
    """Car with the paper's two classes (unacc, acceptable) as a CSV dataset written in ``folder``."""
    data = load_dataset("consistent/car")
    target = data.target.where(data.target == "unacc", "acceptable")
    text = data.features.assign(target=target.to_numpy()).to_csv(index=False)
    path = folder / "car-2classes.csv"
    folder.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text, force=True)
    return {"name": "car-2classes", "csv": str(path.resolve()), "target": "target"}


def part(name: str, kind: str, split: int) -> Path:
    """The bundled ``train`` or ``test`` part ``split`` (0–4) of a Verwer & Zhang dataset."""
    return data_dir() / "consistent" / f"{name}.csv.{kind}{split}.csv"


def tree_accuracy(row: pd.Series, test: Dataset) -> float:
    """Accuracy (%) on ``test`` of the tree recorded in ``row``."""
    model = TrainedModel.from_dict(json.loads(row["model"]))
    return 100 * float(np.mean(model.predict(test.features) == test.target.to_numpy(dtype=object)))


def split_rows(store: ResultStore, args: argparse.Namespace) -> list[dict]:
    """Table 3: both searches on every bundled training part, averaged per dataset, beside the paper."""
    entries = [{"name": f"{name}.train{s}", "csv": str(part(name, "train", s)), "target": "target"}
               for name in args.datasets for s in args.splits]
    runs = searched(run_grid(grid("sat-table3", entries, [0], [1, 0, 0], args), store, args))
    result = []
    for name in args.datasets:
        per_split = {}
        for s in args.splits:
            at = runs[runs["dataset"] == f"{name}.train{s}"].set_index("algorithm")
            test = csv_data({"dataset": name, "csv": part(name, "test", s), "target": "target", "categorical": False})
            per_split[s] = {model: {**at.loc[model], "acc": tree_accuracy(at.loc[model], test)
                                    if at.loc[model, "state"] != "failed" else math.nan} for model in MODELS}
        result.append(split_row(name, per_split))
    print_table(result, f"Table 3: averages over the proven splits ({args.solver})\n{SPLIT_COLUMNS}")
    print()
    return result


def split_row(name: str, per_split: dict[int, dict[str, dict]]) -> dict:
    """One dataset's row of Table 3: means over the splits both searches proved."""
    proven = [s for s, runs in per_split.items() if all(run["state"] == "optimal" for run in runs.values())]
    consistent = all(bool(run["consistent"]) for runs in per_split.values() for run in runs.values()) and all(
        per_split[s]["DT_depth"]["k"] == per_split[s]["DT_size"]["k"] for s in proven)

    def mean(model: str, key: str) -> float:
        values = [float(per_split[s][model][key]) for s in proven]
        return float(np.mean(values)) if values else math.nan
    paper = TABLE3[name]
    return {"dataset": name, "splits": len(per_split), "proven": len(proven), "paper_S": paper.examples,
            "S": mean("DT_depth", "n_train"), "paper_k": paper.k, "k": mean("DT_depth", "k"),
            "paper_n": paper.n, "n": mean("DT_size", "n"), "paper_depth_acc": paper.depth_accuracy,
            "depth_acc": mean("DT_depth", "acc"), "paper_size_acc": paper.size_accuracy,
            "size_acc": mean("DT_size", "acc"), "binoct_acc": paper.binoct, "cart_acc": paper.cart,
            "oct_acc": paper.oct, "paper_depth_sec": paper.depth_seconds, "depth_cpu_sec": mean("DT_depth", "cpu_sec"),
            "paper_size_sec": paper.size_seconds, "size_cpu_sec": mean("DT_size", "cpu_sec"),
            "depth_expl": mean("DT_depth", "expl"), "size_expl": mean("DT_size", "expl"),
            "consistent": "yes" if consistent else "NO"}


def figure_rows(folder: Path, store: ResultStore, args: argparse.Namespace) -> list[dict]:
    """Figure 2: both searches on N examples of every generator, for each N, and the C4.5 stand-in."""
    seeds = list(range(args.generators))
    paths = figure2.write_examples(folder, seeds, max(args.examples))
    entries = [{"name": f"generator{seed}", "csv": str(path), "target": "target"} for seed, path in paths.items()]
    records = []
    for count in args.examples:
        campaign = grid(f"sat-figure2-{count}", entries, [0], [1, 0, 0], args, train_rows=count)
        runs = searched(run_grid(campaign, store, args)).set_index("id")
        for run in campaign.runs:
            row, seed = runs.loc[run["id"]], int(run["dataset"].removeprefix("generator"))
            records.append({"method": run["method"], "generator": seed, "examples": count,
                            "proven": row["state"] == "optimal", "cpu_sec": row["cpu_sec"],
                            "equivalent": row["state"] != "failed" and figure2.equivalent(
                                TrainedModel.from_dict(json.loads(row["model"])), seed)})
            if run["method"] == "sat-depth":  # the stand-in on the same examples
                records.append({**figure2.stand_in(seed, splits(run)[0]), "examples": count})
    points = figure2.points(pd.DataFrame(records))
    print_table([{k: v for k, v in p.items() if k != "method"} for p in points],
                f"Figure 2: {args.generators} random generators of depth {figure2.DEPTH} (the paper: "
                f"{figure2.PAPER_GENERATORS}); mean CPU seconds and % of trees equivalent to the generator\n"
                f"{FIGURE_COLUMNS}")
    write_atomic(args.figure, figure2.plot(points, args.generators), force=args.force)
    print(f"\nfigure written to {args.figure}\n")
    return points


WHOLE_COLUMNS = ("columns: paper_* the paper's value; status odtk's search (optimal = proven); rows the dataset's; "
                 "cpu_sec CPU seconds of the search (paper: another machine); expl examples encoded; k depth; n every "
                 "node of the paper's tree (DT_depth: the perfect tree, DT_size: the proven fewest); n_simpl nodes "
                 "of odtk's tree; acc its mean test accuracy (%) over the folds, cv_proven folds proven")
SPLIT_COLUMNS = ("columns: paper_* Table 3's value (paper_S: Table 4's |E|, the dataset's examples as the paper "
                 "counts them, not comparable with S); S training rows of a split; proven splits where both "
                 "searches proved their optimum (the averages are over these); k DT_depth's minimum depth; n "
                 "DT_size's proven fewest nodes (every node, 2B - 1 for B leaves); *_acc test accuracy (%) of "
                 "odtk's tree; *_cpu_sec CPU seconds of the search; *_expl examples encoded")
FIGURE_COLUMNS = ("columns: status optimal when every search of the point is proven (heuristic: C4.5, nothing to "
                  "prove), proven how many; cpu_sec mean "
                  "CPU seconds (C4.5: this script's numpy code, not Weka's J48); equivalent_pct trees classifying "
                  "all 1024 Boolean vectors as their generator; paper_equivalent_pct the paper's number")


# --------------------------------------------------------------------------- script
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--full", action="store_true", help="the paper's whole protocol (see the description)")
    parser.add_argument("--tables", nargs="+", choices=["1", "2", "3", "fig2"], default=None,
                        help="the paper's tables and Figure 2 (default: 1 3 fig2; --full: all)")
    parser.add_argument("--datasets", nargs="+", default=None, choices=list(TABLE3),
                        help="Table 3: Verwer & Zhang datasets (default: iris monk1 monk3; --full: all six)")
    parser.add_argument("--splits", nargs="+", type=int, default=[0, 1, 2, 3, 4], choices=range(5),
                        help="Table 3: train/test splits to run")
    parser.add_argument("--folds", type=int, default=10, help="Table 1: cross-validation folds")
    parser.add_argument("--repeats", type=int, default=None, help="Table 1: shuffled cross-validations "
                        "(default 1; --full: 100)")
    parser.add_argument("--car-folds", type=int, default=None, help="Table 2: cross-validation folds "
                        "(default 0: none; --full: 10, shuffled 10 times)")
    parser.add_argument("--generators", type=int, default=None, help="Figure 2: generators (default 8; --full: 1000)")
    parser.add_argument("--examples", nargs="+", type=int, default=None,
                        help="Figure 2: numbers of examples (default 50 100 200 400 1800; --full: 16 from 50 to 3000)")
    parser.add_argument("--figure", type=Path, default=None,
                        help="Figure 2's PNG (default: beside the database, <database>-figure2.png)")
    parser.add_argument("--force", action="store_true", help="overwrite --figure if it exists")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per search (default 600, generous: the quick searches take about a second "
                             "of CPU each, so load does not change a status; --full: 3600)")
    parser.add_argument("--solver", default="minisat22", help="SAT solver (a python-sat name)")
    add_campaign_options(parser)
    add_database_options(parser, "sat_paper", "runs")
    args = parser.parse_args(argv)
    preset = FULL if args.full else QUICK
    for key, value in preset.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    args.counts, args.recorded = [], 0
    return args


def figure_path(args: argparse.Namespace) -> Path:
    """``--figure`` (checked writable), else the first free ``<database>-figure2[-N].png``."""
    if args.figure is not None:
        return check_writable(args.figure, args.force)
    stem = args.db.with_suffix("")
    number = 0
    while (path := Path(f"{stem}-figure2{f'-{number}' if number else ''}.png")).exists():
        number += 1
    return path


def tables(store: ResultStore, args: argparse.Namespace) -> tuple[dict[str, list[dict]], list[dict]]:
    """Run and print the tables asked for; their rows by table ("mouse", "car", "splits") and Figure 2's points."""
    folder = args.db.with_name(f"{args.db.stem}-data")
    rows, points = {}, []
    if "1" in args.tables:
        rows["mouse"] = whole_rows("mouse", "consistent/mouse", load_dataset("consistent/mouse").n_rows,
                                   args.folds, args.repeats, store, args)
    if "2" in args.tables:
        rows["car"] = whole_rows("car", car_entry(folder), load_dataset("consistent/car").n_rows, args.car_folds,
                                 args.car_repeats, store, args)
    if "3" in args.tables:
        rows["splits"] = split_rows(store, args)
    if "fig2" in args.tables:
        points = figure_rows(folder, store, args)
    return rows, points


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    try:
        if "fig2" in args.tables:
            pyplot()  # a missing matplotlib is one line before any search
        args.db = results_database(args.db, args.resume, "sat_paper")
        args.figure = figure_path(args)
        print(f"Avellaneda, Efficient Inference of Optimal Decision Trees — odtk {odtk.__version__}, {args.solver}, "
              f"{args.time_limit:g} s per search ({'--full: the paper has no limit' if args.full else 'quick mode'})\n")
        rows, points = tables(ResultStore(args.db), args)
    except (OdtkError, OSError, KeyboardInterrupt) as exc:
        return stopped(exc, args)
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version)}")
    print("\nClaims of the paper (agrees / disagrees by how much / not shown at this scale):")
    lines = verdicts(rows) + (figure2.verdicts(points, args.generators) if points else
                              ["claim: Figure 2: not shown at this scale (--tables without fig2)"])
    print("\n".join(lines))
    return 1 if any(row["consistent"] == "NO" for table in rows.values() for row in table) else 0


if __name__ == "__main__":
    sys.exit(main())
