"""The tables and claim verdicts of ``examples/cp_paper.py`` (Verhaeghe et al., CP search).

Not a script: ``cp_paper.py`` imports it. It turns the campaign's recorded rows (one per odtk
solve) and the pydl8.5 cells into one row per instance (dataset, depth), checks that the proven
optima agree, and judges each claim of the paper's section 5 on those rows.
"""
from __future__ import annotations

import argparse
import json
import math

import pandas as pd

# the paper's search and its ablation, then odtk's (``odtk.solve("cp", ...)`` options)
VARIANTS = {"paper": {"search": "paper"}, "odtk": {}, "paper_nocache": {"search": "paper", "cache": False},
            "paper_nobounds": {"search": "paper", "bounds": False}}
PYDL85_MISSING = "pydl8.5 is not installed: the DL8 / DL8.5 columns are left out (pip install pydl8.5)"
PAPER_PROVEN = 75  # % of instances proven within the time limit ("roughly 75%")
PROVEN_SLACK = 10  # points from it that still count as "roughly"
COLUMNS = ("columns: *_err training errors; *_st status (optimal: proven; time_limit: not; failed: no model); "
           "*_gap relative gap (0: proven); *_cpu CPU seconds of the solve (CP: of the search, numba's "
           "compile and load excluded); *_nodes OR nodes the CP search expanded; agree: the proven optima agree")
_NAMES = {json.dumps(options, sort_keys=True): name for name, options in VARIANTS.items()}


def variant(method: str, options: str) -> str:
    """The column prefix of a recorded run: a CP search variant's name, else the MILP's."""
    return _NAMES[json.dumps(json.loads(options), sort_keys=True)] if method == "cp" else method


def odtk_cells(row: pd.Series) -> tuple[dict, tuple[int, float] | None]:
    """One recorded odtk solve's cells (errors, status, gap, CPU seconds, search nodes) and
    (errors, proven lower bound on the errors) for the agreement check; None when it failed.
    A CP search's CPU is its ``cpu_seconds`` (the search alone: numba's kernels were loaded
    before), a MILP's the row's ``cpu_time`` (the solve, its solver processes included)."""
    name = variant(row["method"], row["options"])
    if row["status"] != "done":
        return {f"{name}_st": "failed"}, None
    n = int(row["n_train"])
    errors = round(n * (1 - float(row["train_accuracy"])))
    proven = row["termination"] == "optimal"
    bound = row["bound"] if row["bound"] is not None and not pd.isna(row["bound"]) else None
    if row["method"] != "cp" and bound is not None:
        bound = n - bound  # a MILP's bound is on the correctly classified samples
    lower = errors if proven else max(bound or 0, 0)
    gap = 0.0 if proven else (math.nan if row["gap"] is None or pd.isna(row["gap"]) else float(row["gap"]))
    cells = {f"{name}_err": errors, f"{name}_st": row["termination"], f"{name}_gap": gap,
             f"{name}_cpu": float(row["cpu_time"])}
    if row["method"] == "cp":
        search = json.loads(row["steps"])["search"]
        cells |= {f"{name}_cpu": search["cpu_seconds"], f"{name}_nodes": search["search_nodes"]}
    return cells, (errors, lower)


def outside_search(frame: pd.DataFrame) -> str:
    """The CPU seconds the CP runs spent outside the search (``cpu_time`` less the search's
    ``cpu_seconds``: importing numba, loading the kernels from its cache, encoding, checking),
    which no cell counts: median and range over the runs done."""
    done = frame[(frame["method"] == "cp") & (frame["status"] == "done")]
    if done.empty:
        return "no CP run done"
    spent = [float(run["cpu_time"]) - json.loads(run["steps"])["search"]["cpu_seconds"] for _, run in done.iterrows()]
    return f"median {pd.Series(spent).median():.2f} s, {min(spent):.2f}-{max(spent):.2f} s over {len(spent)} runs"


def disagreement(checks: list[tuple[int, float]]) -> bool:
    """(errors, proven lower bound) per method: a proven bound above another's errors."""
    return bool(checks) and max(bound for _, bound in checks) > min(errors for errors, _ in checks) + 1e-6


def instance_rows(frame: pd.DataFrame, peers: dict[tuple[str, int], dict], features: dict[str, int],
                  order: list[tuple[str, int]]) -> list[dict]:
    """One row per instance (dataset, depth) in ``order``: every odtk solve of ``frame`` and the
    pydl8.5 cells of ``peers`` side by side, and whether their proven optima agree."""
    rows = []
    for dataset, depth in order:
        runs = frame[(frame["dataset"] == dataset) & (frame["depth"] == depth)]
        row = {"dataset": dataset.removeprefix("binary/"), "depth": depth,
               "rows": int(runs["n_train"].max()) if runs["n_train"].notna().any() else None,
               "features": features[dataset]}
        checks = []
        for _, run in runs.iterrows():
            cells, check = odtk_cells(run)
            row.update(cells)
            checks += [check] if check else []
        for name, cells in peers.get((dataset, depth), {}).items():
            row.update({f"{name}_{key}": value for key, value in cells.items() if key != "check"})
            checks.append(tuple(cells["check"]))
        row["agree"] = "NO" if disagreement(checks) else "yes"
        rows.append(row)
    return rows


def project(rows: list[dict], prefixes: list[str], suffixes: tuple[str, ...]) -> list[dict]:
    """The columns of ``rows`` for the methods ``prefixes`` with the cells ``suffixes``."""
    keys = ["dataset", "depth", "rows", "features"]
    return [{**{key: row[key] for key in keys},
             **{f"{p}_{s}": row.get(f"{p}_{s}") for p in prefixes for s in suffixes}, "agree": row["agree"]}
            for row in rows]


def failures(frame: pd.DataFrame) -> list[str]:
    """One line per odtk solve that ended without a model: what it was and why."""
    return [f"failed: {run['dataset']} depth {run['depth']} {variant(run['method'], run['options'])}: "
            f"{run['message']}" for _, run in frame[frame["status"] != "done"].iterrows()]


def faster(rows: list[dict], ours: str, theirs: str) -> tuple[int, int, int]:
    """Instances where ``ours`` took under half ``theirs``'s CPU, over twice, and neither
    (ties, or both under 0.05 s; a time-limited run counts as its limit's CPU or more)."""
    wins = losses = ties = 0
    for row in rows:
        a, b = row.get(f"{ours}_cpu"), row.get(f"{theirs}_cpu")
        if a is None or b is None:
            continue
        if max(a, b) < 0.05 or b / 2 <= a <= 2 * b:
            ties += 1
        elif a < b:
            wins += 1
        else:
            losses += 1
    return wins, losses, ties


def verdict(claim: str, agrees: bool | None, detail: str) -> str:
    word = "not shown at this scale" if agrees is None else "agrees" if agrees else "disagrees"
    return f"claim: {claim}: {word} ({detail})"


def shown(better: int, worse: int, agrees: bool) -> bool | None:
    """``agrees``, or None (not shown at this scale) when no instance tells the two apart."""
    return None if better == worse == 0 else agrees


def proven_claim(rows: list[dict], args: argparse.Namespace) -> str:
    """"Roughly 75 %" proven within the limit: judged on the paper's protocol (``--full``) only."""
    proven = sum(row.get("paper_st") == "optimal" for row in rows)
    share = 100 * proven / len(rows)
    claim = "the paper's search proves optimality on roughly 75 % of its instances within its time limit"
    if not args.full:
        return (f"claim: {claim}: not comparable (the paper's instance set and limit are not ours; here it proves "
                f"{proven} of {len(rows)} instances of --datasets × --depths within {args.time_limit:g} s)")
    off = abs(share - PAPER_PROVEN)
    return verdict(claim, off <= PROVEN_SLACK, f"{proven} of {len(rows)} instances, {share:.0f} %, within "
                   f"{args.time_limit:g} s" + (f": {off:.0f} points from 75 %" if off > PROVEN_SLACK else ""))


def claims(rows: list[dict], args: argparse.Namespace, dl85: bool) -> list[str]:
    """One line per claim of the paper's section 5 (results)."""
    lines = []
    for other, label in (("dl8", "DL8"), *(("binoct", "BinOCT"),) * ("binoct" in args.milps)):
        if other == "dl8" and not dl85:
            lines.append(verdict(f"the paper's search outperforms {label} on most instances", None, PYDL85_MISSING))
            continue
        wins, losses, ties = faster(rows, "paper", other)
        lines.append(verdict(f"the paper's search outperforms {label} on most instances",
                             shown(wins, losses, wins > (wins + losses + ties) / 2),
                             f"CPU under half {label}'s on {wins}, over twice on {losses}, within 2x or "
                             f"both under 0.05 s on {ties} of {len(rows)} instances"))
    if "binoct" not in args.milps:
        lines.append(verdict("the paper's search outperforms BinOCT on most instances", None,
                             "BinOCT runs with --milps binoct"))
    lines.append(proven_claim(rows, args))
    methods = [name for name in ("paper", "odtk", "dl8", "dl85", *args.milps) if any(f"{name}_err" in r for r in rows)]
    best = sum(row.get("paper_err") == min(row[f"{m}_err"] for m in methods if f"{m}_err" in row)
               for row in rows if "paper_err" in row)
    lines.append(verdict("the best tree found is the paper's search's in almost all cases", best == len(rows),
                         f"the fewest errors of {', '.join(methods)} on {best} of {len(rows)} instances"))
    small = [row for row in rows if row["depth"] == min(args.depths)]
    if dl85 and small:
        wins, losses, ties = faster(small, "dl8", "paper")
        lines.append(verdict("DL8 performs better on small instances", shown(wins, losses, wins > losses),
                             f"depth {min(args.depths)}: DL8's CPU under half the paper's search's on {wins}, "
                             f"over twice on {losses}, neither on {ties} of {len(small)}"))
    else:
        lines.append(verdict("DL8 performs better on small instances", None, PYDL85_MISSING))
    for name, ingredient in (("paper_nocache", "its cache"), ("paper_nobounds", "its bounds (cost pruning)")):
        both = [row for row in rows if row.get(f"{name}_st") == row.get("paper_st") == "optimal"]
        fewer = sum(row["paper_nodes"] < row[f"{name}_nodes"] for row in both)
        more = sum(row["paper_nodes"] > row[f"{name}_nodes"] for row in both)
        lines.append(verdict(f"{ingredient} save(s) the paper's search nodes", shown(fewer, more, fewer > more),
                             f"fewer nodes with it on {fewer}, more on {more}, as many on {len(both) - fewer - more} "
                             f"of {len(both)} instances proven by both"))
    return lines
