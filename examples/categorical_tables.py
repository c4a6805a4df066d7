"""The categorical paper's values and odtk's cells beside them (the claims: ``categorical_claims``).

Not a script: ``examples/categorical_paper.py`` measures the tables with these helpers. A cell
is one setting averaged over seeds; its status says how many of its solves were proven optimal
and its gap is the largest relative gap among them, so a cell that time-limited cannot pass for
a proven number (its value is marked with ``†``).
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

import numpy as np

from categorical_campaign import Solve

TOPOLOGIES = ["depth-2", "depth-2.5", "depth-3", "imbalanced"]
CONFIGURATIONS = ["nothing", "no-anchor", "no-relax", "no-strength", "all"]
BETAS = [1.0, 0.995, 0.99, 0.985, 0.98, 0.97, 0.96, 0.95]

# ----------------------------------------------------------------------- the paper's values
TABLE2 = {  # depth 3, 200 rows: seconds/LPs for Nothing, No Anchor, No Relax, No Strength, All
    "bc": "2193/50075 405/118193 139/52375 188/18121 44/18660",
    "krkp": "5377/2766623 392/95623 3726/2702709 1434/291221 320/131274",
    "mush": "31/26 22/20 12/65 22/26 23/49",
    "ttt": "1837/1914999 346/169235 71/63109 175/28588 31/10737"}
TABLE3 = {  # depth 3 at (rows, the same five configurations)
    "bc": (300, "7766/1013135 5445/981711 223/64411 386/32262 349/53194"),
    "krkp": (400, "*/559764 6984/847235 7533/1289615 2936/97214 3693/719622"),
    "mush": (500, "151/37 41/0 55/1109 182/215 38/7"),
    "ttt": (300, "1394/404553 946/226864 424/88755 253/29869 35/12154")}
TABLE6 = {  # mush, 600 rows: simple, comb-con, comb-unc at depth 2 then depth 3
    "depth-2": ["95.8 (95.7)", "99.6 (99.4)", "99.6 (99.4)"],
    "depth-3": ["98.4 (97.7)", "99.9 (99.4)", "99.9 (99.3)"]}
TABLE7 = {  # bc with feature selection, numeric "n" / categorical "c": train (test)/seconds by topology
    "n": ["96.7 (96.6)/6", "97.5 (95.4)/70", "97.8 (96.2)/608", "97.8 (95.6)/1749"],
    "c": ["96.7 (96.0)/6", "97.8 (94.9)/272", "98.4 (94.7)/1800", "98.5 (95.5)/1800"]}
TABLE8 = {  # depth-2, depth-2.5, depth-3, imbalanced, CART-D3: train (test), no feature selection
    "bc": ["96.7 (96.6)", "97.5 (95.6)", "97.8 (94.9)", "97.9 (96.4)", "96.0 (94.6)"],
    "krkp": ["86.7 (87.0)", "93.2 (93.9)", "93.3 (93.9)", "94.1 (94.1)", "90.4 (90.3)"],
    "mush": ["99.6 (99.4)", "100.0 (99.5)", "100.0 (99.7)", "100.0 (99.6)", "99.4 (99.3)"],
    "ttt": ["71.8 (67.7)", "77.0 (72.7)", "79.3 (74.2)", "81.9 (79.5)", "75.3 (73.1)"],
    "monks-1": ["78.2 (74.1)", "84.1 (76.8)", "89.6 (82.3)", "100.0 (100.0)", "76.6 (76.8)"],
    "votes": ["96.2 (95.5)", "96.9 (93.6)", "97.4 (94.1)", "98.0 (95.0)", "95.7 (95.9)"],
    "heart": ["85.5 (88.1)", "88.6 (89.6)", "88.7 (89.6)", "90.7 (85.2)", "88.5 (91.1)"]}
SIZES4 = [100, 200, 300, 400, 500, 600]
TABLE4 = {  # seconds (* = over 2 h) to prove the optimum on 100-600 rows, without feature selection
    "krkp": {"depth-2": "3 7 10 11 16 24", "depth-2.5": "12 30 134 106 119 803",
             "depth-3": "268 663 2810 2267 4039 5837", "imbalanced": "359 3543 * * * *"},
    "bc": {"depth-2": "1 3 5 6 11 10", "depth-2.5": "4 30 56 98 173 199",
           "depth-3": "7 44 349 2644 1124 *", "imbalanced": "3 349 1842 4958 * *"}}
TABLE5 = {  # the same with CART feature selection
    "krkp": {"depth-2": "0 0 1 1 2 2", "depth-2.5": "1 2 3 5 9 9", "depth-3": "1 3 7 12 19 20",
             "imbalanced": "4 10 20 30 52 69"},
    "bc": {"depth-2": "0 1 1 1 2 4", "depth-2.5": "1 6 17 22 48 59", "depth-3": "1 4 6 11 22 32",
           "imbalanced": "2 5 11 19 47 54"}}
TABLE9 = {  # as Table 8, with feature selection
    "bc": ["96.7 (96.6)", "97.5 (95.4)", "97.8 (96.2)", "97.8 (95.6)", "96.0 (94.6)"],
    "krkp": ["86.7 (87.0)", "93.2 (93.9)", "93.2 (93.9)", "94.6 (93.8)", "90.4 (90.3)"],
    "mush": ["99.6 (99.4)", "99.9 (99.4)", "99.9 (99.4)", "100.0 (99.6)", "99.4 (99.3)"],
    "ttt": ["71.8 (67.7)", "77.0 (72.7)", "79.3 (74.2)", "81.9 (79.5)", "75.3 (73.1)"],
    "monks-1": ["78.2 (74.1)", "84.1 (76.8)", "89.6 (82.3)", "100.0 (100.0)", "76.6 (76.8)"],
    "votes": ["95.9 (95.5)", "96.3 (95.0)", "96.7 (95.0)", "97.3 (96.8)", "95.7 (95.9)"],
    "heart": ["85.5 (88.1)", "88.6 (90.4)", "88.6 (90.4)", "90.2 (88.9)", "88.5 (91.1)"]}
TABLE10 = {  # as Table 8, 5 minutes per solve
    "bc": ["96.7 (96.6)", "97.5 (95.6)", "97.7 (96.4)", "97.6 (96.2)", "96.0 (94.6)"],
    "krkp": ["86.7 (87.0)", "93.2 (93.9)", "92.1 (92.1)", "92.9 (92.9)", "90.4 (90.3)"],
    "mush": ["99.6 (99.4)", "100.0 (99.5)", "100.0 (99.7)", "100.0 (99.7)", "99.4 (99.3)"],
    "ttt": ["71.8 (67.7)", "77.0 (72.7)", "78.7 (74.0)", "77.5 (75.0)", "75.3 (73.1)"],
    "monks-1": ["78.2 (74.1)", "84.1 (76.8)", "89.6 (82.3)", "100.0 (100.0)", "76.6 (76.8)"],
    "votes": ["96.2 (95.5)", "96.9 (93.6)", "97.3 (94.5)", "97.5 (92.7)", "95.7 (95.9)"],
    "heart": ["85.5 (88.1)", "88.6 (89.6)", "88.7 (89.6)", "90.4 (88.1)", "88.5 (91.1)"]}
TABLE11 = {  # as Table 9, 5 minutes per solve
    "bc": ["96.7 (96.6)", "97.5 (95.4)", "97.7 (95.8)", "97.7 (95.2)", "96.0 (94.6)"],
    "krkp": ["86.7 (87.0)", "93.2 (93.9)", "93.2 (93.9)", "94.6 (93.8)", "90.4 (90.3)"],
    "mush": ["99.6 (99.4)", "99.9 (99.4)", "99.9 (99.4)", "99.9 (99.4)", "99.4 (99.3)"],
    "ttt": ["71.8 (67.7)", "77.0 (72.7)", "78.7 (74.0)", "77.5 (75.0)", "75.3 (73.1)"],
    "monks-1": ["78.2 (74.1)", "84.1 (76.8)", "89.6 (82.3)", "100.0 (100.0)", "76.6 (76.8)"],
    "votes": ["95.9 (95.5)", "96.3 (95.0)", "96.7 (95.0)", "97.3 (96.8)", "95.7 (95.9)"],
    "heart": ["85.5 (88.1)", "88.6 (90.4)", "88.6 (90.4)", "90.2 (88.9)", "88.5 (91.1)"]}
ACCURACY = {8: TABLE8, 9: TABLE9, 10: TABLE10, 11: TABLE11}  # "train (test)" by topology, then CART-D3
SIZES12 = [600, 1200, 1800, 2400]
TABLE12 = {  # feature selection, 30 min: "train (test)" at 600, 1200, 1800, 2400 training rows
    "krkp": {"depth-2": ["86.7 (87.0)", "86.8 (87.0)", "86.8 (87.1)", "86.8 (87.2)"],
             "depth-2.5": ["93.2 (93.9)", "93.8 (93.8)", "93.6 (94.0)", "93.7 (94.1)"],
             "depth-3": ["94.6 (93.8)", "93.8 (93.8)", "93.6 (94.0)", "93.7 (94.1)"],
             "imbalanced": ["93.2 (93.9)", "94.5 (93.7)", "94.2 (93.9)", "94.1 (94.1)"]},
    "mush": {"depth-2": ["99.6 (99.4)", "99.5 (99.4)", "99.4 (99.4)", "99.4 (99.4)"],
             "depth-2.5": ["99.6 (99.4)", "99.8 (99.5)", "99.7 (99.6)", "99.7 (99.6)"],
             "depth-3": ["100.0 (99.6)", "99.9 (99.6)", "99.9 (99.7)", "99.8 (99.8)"],
             "imbalanced": ["99.9 (99.4)", "100.0 (99.8)", "100.0 (100.0)", "100.0 (100.0)"]}}
TABLE13 = {  # ODT test accuracy / leaves, CART test accuracy / leaves
    "bc": ("96.0/4.8", "94.9/4.2"), "krkp": ("93.6/6.8", "96.6/9"), "mush": ("99.8/7.6", "99.3/3"),
    "ttt": ("81.0/8.0", "93.1/20.2"), "monks-1": ("100.0/8.0", "82.3/8.6"),
    "votes": ("95.7/7.2", "95.5/2.4"), "heart": ("89.6/7.2", "88.9/5")}
TABLE14 = {  # β: depth 2 (train TPR/TNR, test TPR/TNR), depth 3 (the same)
    1.0: ("100/79.6", "99.1/76.8", "100/91.6", "97.2/83.6"),
    0.995: ("99.5/85.4", "98.9/82.4", "99.5/94.6", "97.4/89.7"),
    0.99: ("99/89.5", "97.7/89.4", "99/97.2", "96.8/90.0"),
    0.985: ("98.5/92", "98.1/90.9", "98.5/97.2", "97.2/90.9"),
    0.98: ("98/92.7", "97.7/91.0", "98/98.7", "96.4/94.6"),
    0.97: ("97/95.8", "97.5/94.7", "97/99.4", "96.6/96.1"),
    0.96: ("96/97.3", "96.4/93.9", "96/99.9", "94.2/94.7"),
    0.95: ("95/98.4", "96.2/98.0", "95/100.0", "93.9/93.0")}

MARK = "†"
NOISE = 1.5  # CPU-time ratios between 1/NOISE and NOISE are ties: load moves CPU seconds too
LEGEND = (f"{MARK} = a solve of the cell was not proven optimal within the time limit (the value is "
          "its best tree; status and gap say how far); * = no tree within it. gap: the largest relative "
          "gap of the cell's solves; CART rows have none. Seconds are CPU seconds of odtk's process "
          "and its solver's.")


# ----------------------------------------------------------------------- one cell
def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (local runs' processes)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def found(solves: Sequence[Solve]) -> list[Solve]:
    """The solves that returned a tree."""
    return [solve for solve in solves if solve.termination is not None]


def status(solves: Sequence[Solve]) -> dict[str, str]:
    """A cell's ``status`` ("optimal", or "k/n optimal" with the other terminations) and ``gap``."""
    results = found(solves)
    proven = sum(result.optimal for result in results)
    others = Counter(result.termination for result in results if not result.optimal)
    others.update({"no tree": len(solves) - len(results)})
    text = "optimal" if proven == len(solves) else ", ".join(
        [f"{proven}/{len(solves)} optimal"] + [f"{count} {name}" for name, count in others.items() if count])
    gaps = [result.gap for result in results if result.gap is not None]
    return {"status": text, "gap": f"{100 * max(gaps):.2f}%" if gaps else "-"}


def proven(solves: Sequence[Solve]) -> bool:
    """True when every solve of the cell returned a proven optimum."""
    return bool(solves) and all(solve.optimal for solve in solves)


def marked(text: str, solves: Sequence[Solve]) -> str:
    """``text``, marked with ``†`` unless every solve of the cell was proven optimal."""
    return text if proven(solves) else f"{text} {MARK}"


def mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def pct(train: Sequence[float], test: Sequence[float]) -> str:
    """ "train (test)" in %; "*" when no solve found a tree."""
    return f"{100 * mean(train):.1f} ({100 * mean(test):.1f})" if len(train) else "*"


def row(table: int, dataset: str, setting: str, paper: str, measured: str,
        solves: Sequence[Solve] | None = None, **numbers: float) -> dict:
    """One printed row; ``solves`` (None for CART) give its status and gap; ``numbers`` are kept,
    unprinted, for the claim lines."""
    cell = {"status": "-", "gap": "-"} if solves is None else status(solves)
    measured = measured if solves is None else marked(measured, solves)
    return {"table": table, "dataset": dataset, "setting": setting, "paper": paper, "odtk": measured,
            **cell, "_numbers": numbers, "_proven": solves is None or proven(solves)}


def paper_pct(text: str) -> tuple[float, float]:
    """The paper's "train (test)" as two numbers."""
    train, test = text.replace("(", " ").replace(")", " ").split()[:2]
    return float(train), float(test)
