"""The categorical paper's values, odtk's cells beside them, and the closing claim lines.

Not a script: ``examples/categorical_paper.py`` measures the tables with these helpers. A cell
is one setting averaged over seeds; its status says how many of its solves were proven optimal
and its gap is the largest relative gap among them, so a cell that time-limited cannot pass for
a proven number (its value is marked with ``†``).
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import odtk

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


# ----------------------------------------------------------------------- one solve, one cell
@dataclass(frozen=True)
class Solve:
    """One ODT solve: its result (None when odtk gave up) and the CPU seconds it took."""

    result: odtk.SolveResult | None
    cpu: float


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (the isolated solver)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def found(solves: Sequence[Solve]) -> list[Solve]:
    """The solves that returned a tree."""
    return [solve for solve in solves if solve.result is not None]


def status(solves: Sequence[Solve]) -> dict[str, str]:
    """A cell's ``status`` ("optimal", or "k/n optimal" with the other terminations) and ``gap``."""
    results = [solve.result for solve in found(solves)]
    proven = sum(result.optimal for result in results)
    others = Counter(result.termination for result in results if not result.optimal)
    others.update({"no tree": len(solves) - len(results)})
    text = "optimal" if proven == len(solves) else ", ".join(
        [f"{proven}/{len(solves)} optimal"] + [f"{count} {name}" for name, count in others.items() if count])
    gaps = [result.gap for result in results if result.gap is not None]
    return {"status": text, "gap": f"{100 * max(gaps):.2f}%" if gaps else "-"}


def proven(solves: Sequence[Solve]) -> bool:
    """True when every solve of the cell returned a proven optimum."""
    return bool(solves) and all(solve.result is not None and solve.result.optimal for solve in solves)


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


# ----------------------------------------------------------------------- the paper's claims
def claim_lines(rows: list[dict]) -> list[str]:
    """One line per claim of the paper: agrees, disagrees (by how much), or not shown at this scale."""
    checks = [("§5.1, Tables 2-3: all improvements (anchors, relaxation, strengthening) solve faster "
               "than none", configurations_claim),
              ("§5.2, Table 6: on mush combinatorial branching beats simple branching", branching_claim),
              ("§5.3, Table 7: ordered bins (n) test better and solve faster than categories (c)", ordered_claim),
              ("§5.4, Table 8: the ODT tests better than CART of depth 3 (by more than 1 point on 4 of 7 "
               "datasets, worse on heart)", cart8_claim),
              ("§5.6, Table 13: the ODT tests better than pruned CART or has fewer leaves", cart13_claim),
              ("§5.7, Table 14: lowering the sensitivity floor β raises specificity, with TPR ≥ β in "
               "training", rate_claim)]
    lines = ["Claims of the paper (odtk's proven cells above; \"not shown\": the cells it needs were not run "
             "or not proven):"]
    for text, check in checks:
        verdict, detail = check(rows)
        lines.append(f"- {text}: {verdict}{f' ({detail})' if detail else ''}")
    return lines


def numbers(rows: list[dict], table: int | tuple[int, ...], dataset: str | None = None,
            setting: str | None = None) -> list[dict]:
    """The kept numbers of the proven rows of ``table`` (and ``dataset``, ``setting``) that have
    some: a claim is judged on proven cells only (an unproven cell's tree and time say nothing
    of the optimum)."""
    tables = (table,) if isinstance(table, int) else table
    return [r["_numbers"] | {"dataset": r["dataset"], "setting": r["setting"], "proven": r["_proven"]}
            for r in rows if r["table"] in tables and r["_numbers"] and r["_proven"]
            and dataset in (None, r["dataset"]) and setting in (None, r["setting"])]


def verdict(agree: list[tuple[str, bool]]) -> str:
    """"agrees" when every (label, agrees) comparison agrees, "disagrees on <labels>" when some
    do not, "not shown at this scale" without any."""
    if not agree:
        return "not shown at this scale"
    against = [label for label, agrees in agree if not agrees]
    return f"disagrees on {', '.join(against)}" if against else "agrees"


def configurations_claim(rows: list[dict]) -> tuple[str, str]:
    """All vs Nothing: CPU seconds; a ratio within ``NOISE`` is a tie (load moves CPU times a little)."""
    agree, parts = [], []
    for nothing in numbers(rows, (2, 3)):
        if not nothing["setting"].endswith("nothing"):
            continue
        every = numbers(rows, (2, 3), nothing["dataset"], nothing["setting"].replace("nothing", "all"))
        if not every:
            continue
        ratio = nothing["cpu"] / max(every[0]["cpu"], 1e-9)
        counted = not 1 / NOISE < ratio < NOISE
        parts.append(f"{nothing['dataset']} {nothing['setting'].rsplit(',', 1)[0]}: {nothing['cpu']:.1f} → "
                     f"{every[0]['cpu']:.1f} CPU s, {ratio:.1f}× faster{'' if counted else ' (a tie)'}; "
                     f"paper {nothing['paper_ratio']:.1f}×")
        if counted:
            agree.append((nothing["dataset"], ratio >= NOISE))
    return verdict(agree), "; ".join(parts)


def branching_claim(rows: list[dict]) -> tuple[str, str]:
    """comb-unc vs simple on mush: training and test accuracy."""
    agree, parts = [], []
    for depth in ("depth-2", "depth-3"):
        simple, unc = numbers(rows, 6, "mush", f"{depth} simple"), numbers(rows, 6, "mush", f"{depth} comb-unc")
        if simple and unc:
            train, test = (100 * (unc[0][k] - simple[0][k]) for k in ("train", "test"))
            paper_train, paper_test = np.subtract(paper_pct(TABLE6[depth][2]), paper_pct(TABLE6[depth][0]))
            parts.append(f"{depth}: train {train:+.1f}, test {test:+.1f} points; paper "
                         f"{paper_train:+.1f}, {paper_test:+.1f}")
            agree.append((depth, train > 0 and test > 0))
    return verdict(agree), "; ".join(parts)


def ordered_claim(rows: list[dict]) -> tuple[str, str]:
    """n vs c on bc: test accuracy (a tie if equal) and CPU time (a tie within ``NOISE``)."""
    agree, parts = [], []
    for n in numbers(rows, 7):
        if not n["setting"].endswith(" n"):
            continue
        c = numbers(rows, 7, "bc", n["setting"][:-2] + " c")
        if c:
            test, ratio = 100 * (n["test"] - c[0]["test"]), c[0]["cpu"] / max(n["cpu"], 1e-9)
            parts.append(f"{n['setting'][:-2]}: test n − c {test:+.1f} points, c/n CPU {ratio:.1f}×")
            if abs(test) >= 0.05:
                agree.append((f"{n['setting'][:-2]} test", test > 0))
            if not 1 / NOISE < ratio < NOISE:
                agree.append((f"{n['setting'][:-2]} CPU", ratio >= NOISE))
    return verdict(agree), "; ".join(parts) + ("; paper depth-2 +0.6 points, 1.0×" if parts else "")


def cart8_claim(rows: list[dict]) -> tuple[str, str]:
    """Per dataset, the best topology shown vs CART-D3 on test accuracy, classed as the paper bolds
    (better by more than 1 point, within 1, worse by more than 1), beside the paper's class for the
    same topologies."""
    agree, parts = [], []
    for cart in numbers(rows, 8, setting="CART-D3"):
        odts = [r for r in numbers(rows, 8, cart["dataset"]) if r["setting"] != "CART-D3"]
        if odts:
            paper = TABLE8[cart["dataset"]]
            paper_diff = (max(paper_pct(paper[TOPOLOGIES.index(r["setting"])])[1] for r in odts)
                          - paper_pct(paper[4])[1])
            diff = 100 * (max(r["test"] for r in odts) - cart["test"])
            parts.append(f"{cart['dataset']} {diff:+.1f} (paper {paper_diff:+.1f})")
            agree.append((cart["dataset"], np.sign(np.trunc(diff)) == np.sign(np.trunc(paper_diff))))
    return verdict(agree), ("best topology shown − CART test points, the same class as the paper's "
                            "(more than 1 point either way, or within 1): " + ", ".join(parts)) if parts else ""


def cart13_claim(rows: list[dict]) -> tuple[str, str]:
    """Per dataset: the ODT's test accuracy ≥ pruned CART's, or fewer leaves."""
    agree, parts = [], []
    for odt in numbers(rows, 13):
        if not odt["setting"].startswith("ODT"):
            continue
        cart = numbers(rows, 13, odt["dataset"], "CART pruned")
        if cart:
            diff, leaves = 100 * (odt["test"] - cart[0]["test"]), odt["leaves"] - cart[0]["leaves"]
            parts.append(f"{odt['dataset']} {diff:+.1f} points, {leaves:+.1f} leaves")
            agree.append((odt["dataset"], diff >= 0 or leaves < 0))
    return verdict(agree), "ODT − pruned CART: " + ", ".join(parts) if parts else ""


def rate_claim(rows: list[dict]) -> tuple[str, str]:
    """Training TNR does not fall as β falls, and training TPR ≥ β, per topology."""
    agree, parts = [], []
    for topology in ("depth-2", "depth-3"):
        cells = sorted((r for r in numbers(rows, 14) if r["setting"].startswith(topology)),
                       key=lambda r: -r["beta"])
        if len(cells) >= 2:
            tnr = [r["train_tnr"] for r in cells]
            floor = all(r["train_tpr"] >= r["beta"] - 1e-9 for r in cells)
            parts.append(f"{topology} training TNR " + " → ".join(f"{100 * v:.1f}" for v in tnr)
                         + " for β " + " → ".join(f"{r['beta']:g}" for r in cells))
            agree.append((topology, floor and all(b >= a - 1e-9 for a, b in zip(tnr, tnr[1:]))))
    return verdict(agree), "; ".join(parts)
