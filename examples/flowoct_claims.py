"""The figures and claims of Aghaei, Gómez & Vayanos (§4), for ``examples/flowoct_paper.py``.

The paper's own numbers (Table 1's sizes, Table 2's accuracies, the counts, times and speed-ups
its text quotes on Figure 3), the authors' per-run logs of the journal version (bundled as
``flowoct/paper_results``), the measures the tables and claims share (the paper's gap, instance
size, the Figure 3 panels, cross-method agreement), and one verdict per claim of §4: agrees,
disagrees (by how much) or not shown at this scale.

Not a script; ``python examples/flowoct_paper.py`` puts this directory on ``sys.path``.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from _common import contradicted
from odtk.datasets.catalog import data_dir

SEEDS = (41, 23, 45, 36, 19)  # random states of the five samples, in the authors' order
TABLE_1 = {  # |I|, |F|, |K| of the paper's datasets
    "monk3": (122, 15, 2), "monk1": (124, 15, 2), "monk2": (169, 15, 2), "house-votes-84": (232, 16, 2),
    "balance-scale": (625, 20, 3), "tic-tac-toe": (958, 27, 2), "car_evaluation": (1728, 20, 4),
    "kr-vs-kp": (3196, 38, 2)}
METHODS = {"oct": "OCT", "binoct": "BinOCT", "flowoct": "FlowOCT", "benders": "Benders"}  # Table 2 order
LOG_NAMES = {"oct": "OCT", "binoct": "BinOCT", "flowoct": "FlowOCT", "benders": "BendersOCT"}
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
NEW, OLD = ("flowoct", "benders"), ("oct", "binoct")
COMPARABLE = 1.0  # accuracy points by which FlowOCT or Benders may trail and still be "comparable"


# --------------------------------------------------------------------------- measures
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
    the columns of the script's results frame that the tables read."""
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


def size(runs: pd.DataFrame) -> pd.Series:
    """Each run's instance size 2^d·|I|, the x-axis of Figure 3(c)."""
    return 2 ** runs["depth"].astype(int) * runs["n_train"].astype(int)


def t_ref(times: np.ndarray, count: float) -> float:
    """When ``count`` instances are solved, given the sorted solve times (NaN if never)."""
    return float(times[int(count) - 1]) if 0 < count <= len(times) else math.nan


def speedup(limit: float, when: float) -> str:
    """The time limit over ``when``, as the paper states it ("30×"); "-" if undefined."""
    return f"{limit / when:.0f}×" if when > 0 else "-"


def solved_times(runs: pd.DataFrame) -> np.ndarray:
    return np.sort(runs.loc[runs["proven"], "solve_time"].to_numpy(dtype=float))


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


# --------------------------------------------------------------------------- the paper's claims
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
