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
(Gurobi 9.1 on one thread in the paper; here any registered solver). The default is a quick
mode that proves: two small datasets (iris and echocardiogram, 60 random rows each, seed 0),
every skeleton, α and split type, one deterministic start of the heuristic and a generous
120 s limit per MILP that these solves need a few CPU seconds of (HiGHS proved all 108 runs in
6.5 CPU-minutes in total, measured; with ``--jobs 2`` roughly half that in wall time), so that
a loaded machine changes no status. At this scale only iris passes the paper's selection rule
(echocardiogram's diagrams have one node), so Figures 2–3 and Table 2 rest on one instance
per split type and most claims print "not shown at this scale". Larger instances, where runs end at the limit as in the paper, belong to ``--paper``
or to ``--datasets``/``--rows``/``--seeds`` with longer limits.

Every table shows per cell whether the runs behind it are proven (status and gap, or counts
of open and failed runs); failed runs are listed by name. The output ends with one line per
claim of the paper: agrees, disagrees (by how much) or not shown at this scale. Ctrl-C stops
the campaign with one line; the runs recorded so far stay in the database.

Run:  python examples/odd_paper.py
      python examples/odd_paper.py --paper --solver gurobi --jobs 10 --db odd_full.sqlite
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

import odtk
from _common import add_database_options, print_table, results_database, reuse_line
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
PAPER = {"heuristic_time": 60.0, "time_limit": 600.0, "seeds": [0, 1, 2, 3, 4], "rows": None}
QUICK = {"heuristic_time": 0.001, "time_limit": 120.0, "seeds": [0], "rows": 60,  # the first heuristic start only
         "datasets": ["uci/iris", "uci/echocardiogram"]}
MARGINAL = 0.02  # Table 2: an accuracy loss of at most 2 points counts as the paper's "marginal"
COMPARABLE = 0.02  # Figures 2-3: mean accuracies within 2 points count as "comparable"


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
        args.recorded += len(campaign.runs) - total  # recorded before: skipped

        def finished(row: dict) -> None:
            args.recorded += 1
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
    frame["gap"] = pd.to_numeric(frame["gap"]).where(~frame["proven"], 0.0)
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
        rows += [odtk_row | unfinished(ours), paper_row]
    return rows


def unfinished(runs: pd.DataFrame) -> dict:
    """``open``: runs done without proof, ``failed``: runs that ended without a model,
    ``max_gap``: the largest gap of the done runs (0 when all are proven)."""
    done = runs["status"] == "done"
    return {"open": int((done & ~runs["proven"]).sum()), "failed": int((~done).sum()),
            "max_gap": runs.loc[done, "gap"].max() if done.any() else np.nan}


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
                     "paper_imp_pct": 100 * improved / paper_runs, "better_pct": 100 * at["better"].mean(),
                     **unfinished(at)})
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
        for model, suffix in (("ODD", ""), ("ODT", "_odt")):
            proven = f"{int(group['proven' + suffix].sum())}/{len(group)}"
            rows.append({"split": split_type, "model": model, "datasets": datasets, "selected_by": selection,
                         "instances": len(group), **quartiles(group["test_accuracy" + suffix]),
                         "proven": proven, "max_gap": group["gap" + suffix].max(), "paper": FIGURES[split_type]})
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
                     "odt_wins": int(np.sum(odt > odd + 1e-12)),
                     "proven": f"{int((group['proven'] & group['proven_odt']).sum())}/{len(group)}",
                     "paper": FIGURES[split_type]})
    return rows


# --------------------------------------------------------------------------- Table 2
def label(share: float) -> str:
    """Table 2's column of a share: S0 (no stability), S0.05n, …"""
    return "S0" if share == 0 else f"S{share:g}n"


def stability_cells(group: pd.DataFrame, stable: pd.DataFrame, shares: list[float]) -> pd.DataFrame:
    """One row per chosen ODD of ``group`` (one split type): per share (0: the chosen ODD itself)
    its run's test accuracy, status, proof and gap; NaN where no run is recorded."""
    key, fields = ["dataset", "seed"], ["test_accuracy", "status", "proven", "gap"]
    cells = group[key + fields].rename(columns={f: f"{f}@0" for f in fields})
    for share in shares:
        runs = stable.loc[stable["share"] == share, key + fields]
        cells = cells.merge(runs.rename(columns={f: f"{f}@{share}" for f in fields}), on=key, how="left")
    return cells


def table_2(pairs: pd.DataFrame, stable: pd.DataFrame, args: argparse.Namespace) -> list[dict]:
    """Mean test accuracy with stability S = share · n beside the paper's (S0: the chosen ODD
    without it). Every column averages the same chosen ODDs: those whose runs are done in every
    column (``averaged``); ``failed``: chosen ODDs left out because a run of theirs failed (or is
    not recorded); ``proven``: cells averaged that are proven optimal; ``max_gap``: their largest gap."""
    shares = [share for share in SHARES if share in args.shares]
    rows = []
    for split_type, group in pairs[pairs["kept"]].groupby("split_type", sort=False):
        cells = stability_cells(group, stable[stable["split_type"] == split_type], shares)
        done = (cells[[f"status@{share}" for share in [0, *shares]]] == "done").all(axis=1)
        averaged = cells[done]
        proven = averaged[[f"proven@{share}" for share in [0, *shares]]].astype(bool).to_numpy()
        gaps = averaged[[f"gap@{share}" for share in [0, *shares]]].to_numpy(dtype=float)
        row = {"split": split_type, "source": "odtk"}
        row |= {label(share): averaged[f"test_accuracy@{share}"].mean() for share in [0, *shares]}
        rows.append(row | {"averaged": len(averaged), "failed": int((~done).sum()),
                           "proven": f"{proven.sum()}/{proven.size}", "max_gap": gaps.max() if gaps.size else np.nan})
        paper = dict(zip(SHARES, TABLE_2[split_type]))
        rows.append({"split": split_type, "source": "Table2", "S0": np.nan,
                     **{label(share): paper[share] for share in shares}})
    return rows


def failures(*frames: pd.DataFrame) -> list[str]:
    """One line per run that ended without a model: what it was and why."""
    lines = []
    for frame in frames:
        for _, row in frame[frame["status"] != "done"].iterrows():
            stability = f", S = {row['share']:g}n" if row["share"] else ""
            lines.append(f"failed: {row['dataset']} seed {row['seed']} {row['split_type']} {row['shape']} "
                         f"α {row['alpha']:g}{stability}: {row['message']}")
    return lines or ["failed runs: none"]


# --------------------------------------------------------------------------- the paper's claims
def paper_scale(args: argparse.Namespace) -> bool:
    """Whether the run set is the paper's: every uci/ dataset whole, five seeds, 600 s."""
    uci = {info.name for info in list_datasets() if info.collection == "uci"}
    return uci <= set(args.datasets) and len(args.seeds) >= 5 and args.rows is None and args.time_limit >= 600


def points(values: list[float]) -> str:
    return "/".join(f"{value:.1f}" for value in values) + " %"


def table_1_claims(runs: pd.DataFrame, args: argparse.Namespace) -> list[str]:
    """Table 1's claims: the share proven per α, its rise with α, the share improved by Step 2."""
    rows = table_1_shares(runs, args)
    ours, paper = [row["opt_pct"] for row in rows], [row["paper_opt_pct"] for row in rows]
    total = 100 * (runs["proven"] | runs["improved"]).mean()
    paper_total = sum(row["paper_opt_pct"] + row["paper_imp_pct"] for row in rows) / len(rows)
    alphas = "/".join(f"{row['alpha']:g}" for row in rows)
    drops = [(a["alpha"], b["alpha"], a["opt_pct"] - b["opt_pct"]) for a, b in zip(rows, rows[1:])]
    if len(rows) < 2:
        trend = "not shown (one α run)"
    elif max(ours) - min(ours) < 1e-9:
        trend = "not shown at this scale (the same share at every α)"
    elif max(drop for *_, drop in drops) <= 1e-9:
        trend = "agrees"
    else:
        low, high, drop = max(drops, key=lambda d: d[2])
        trend = f"disagrees: falls by {drop:.1f} points from α {low:g} to α {high:g}"
    return [f"Table 1, runs proven optimal per α {alphas}: paper {points(paper)}, odtk {points(ours)}: "
            + share_verdict(max(abs(o - p) for o, p in zip(ours, paper)), args),
            f"Table 1, the share proven rises with α (difficulty falls as α grows): {trend}",
            f"Table 1, Step 2 proves or improves the heuristic's diagram: paper {paper_total:.1f} % of runs, "
            f"odtk {total:.1f} %: " + share_verdict(abs(total - paper_total), args)]


def share_verdict(difference: float, args: argparse.Namespace) -> str:
    """Shares of runs compare only on the paper's run set (within 5 points: agrees)."""
    if not paper_scale(args):
        return ("not shown at this scale (the paper's shares are over its 54 datasets × 5 seeds with 600 s; "
                "these runs are chosen to be proven)")
    return "agrees (within 5 points)" if difference <= 5 else f"disagrees by {difference:.1f} points"


def figure_claims(pairs: pd.DataFrame, args: argparse.Namespace) -> list[str]:
    """Figures 2–3: multivariate ODDs more accurate than ODTs; univariate ones comparable."""
    lines = []
    for split_type in args.splits:
        group = pairs[pairs["kept"] & (pairs["split_type"] == split_type)]
        claim = ("ODDs more accurate than ODTs" if FIGURES[split_type] == "ODD>ODT"
                 else f"ODDs and ODTs comparable (means within {100 * COMPARABLE:g} points)")
        odd, odt = group["test_accuracy"].to_numpy(), group["test_accuracy_odt"].to_numpy()
        lead = 100 * (odd.mean() - odt.mean()) if len(group) else 0.0
        if len(group) == 0:
            verdict = "not shown (no dataset and seed with both an ODD and an ODT)"
        elif np.allclose(odd, odt):
            verdict = f"not shown at this scale (ODD and ODT equally accurate on all {len(group)} instances)"
        elif FIGURES[split_type] == "ODD>ODT":
            verdict = "agrees" if lead > 0 else f"disagrees by {-lead:.1f} points"
        else:
            verdict = "agrees" if abs(lead) <= 100 * COMPARABLE else f"disagrees by {abs(lead) - 100 * COMPARABLE:.1f} points"
        lines.append(f"Figures 2-3, {split_type}: {claim}: odtk ODD − ODT mean test accuracy {lead:+.1f} points "
                     f"over {len(group)} instances: {verdict}")
    return lines


def stability_claims(rows: list[dict]) -> list[str]:
    """Table 2: more stable ODDs at a marginal loss of test accuracy (≤ MARGINAL)."""
    lines = []
    for row in (row for row in rows if row["source"] == "odtk"):
        strongest = [column for column in row if column.startswith("S") and column != "S0"][-1]
        loss = 100 * (row["S0"] - row[strongest])
        if not row["averaged"]:
            verdict = f"not shown at this scale (no chosen ODD finished every column; {row['failed']} failed)"
        elif loss <= 100 * MARGINAL:
            verdict = "agrees"
        else:
            verdict = f"disagrees by {loss - 100 * MARGINAL:.1f} points"
        paper = 100 * (TABLE_2[row["split"]][-1] - TABLE_2[row["split"]][0])
        lines.append(f"Table 2, {row['split']}: stability costs at most {100 * MARGINAL:g} points of test accuracy "
                     f"(paper S0.05n → S0.2n: {paper:+.1f}): odtk S0 → {strongest} {0.0 - loss:+.1f} points over "
                     f"{row['averaged']} chosen ODDs: {verdict}")
    return lines


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
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (local executor)")
    parser.add_argument("--executor", choices=["local", "dask"], default="local")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")
    add_database_options(parser, "odd_paper", "runs")
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


def preamble(args: argparse.Namespace) -> None:
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
    except KeyboardInterrupt:
        print(f"interrupted: {args.recorded} runs recorded in {args.db}; run again with --resume to continue",
              file=sys.stderr)
        return 130
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
