"""The categorical paper's claims: one line per claim, judged on odtk's proven cells.

Not a script: ``examples/categorical_paper.py`` prints these lines under its tables. Each says
"agrees", "disagrees on ..." (odtk's numbers beside the paper's) or "not shown at this scale"
(the cells the claim needs were not run or not proven). CPU times are compared as ratios
(odtk's against the paper's), never as seconds against CPLEX's.
"""
from __future__ import annotations

import numpy as np

from categorical_tables import NOISE, TABLE4, TABLE5, TABLE6, TABLE8, TABLE9, TOPOLOGIES, paper_pct


def claim_lines(rows: list[dict]) -> list[str]:
    """One line per claim of the paper: agrees, disagrees (by how much), or not shown at this scale."""
    checks = [("§5.1, Tables 2-3: all improvements (anchors, relaxation, strengthening) solve faster "
               "than none", configurations_claim),
              ("§5.1, Table 4: solve time grows with the sample size", size_claim),
              ("§5.1, Table 4: solve time grows with the topology (depth 2, 2.5, 3, imbalanced)", topology_claim),
              ("§5.1, Table 5: feature selection cuts the solve time of Table 4", selection_time_claim),
              ("§5.2, Table 6: on mush combinatorial branching beats simple branching", branching_claim),
              ("§5.3, Table 7: ordered bins (n) test better and solve faster than categories (c)", ordered_claim),
              ("§5.4, Table 8: the ODT tests better than CART of depth 3 (by more than 1 point on 4 of 7 "
               "datasets, worse on heart)", cart8_claim),
              ("§5.4, Tables 8-9: feature selection lowers training accuracy and raises test accuracy",
               selection_accuracy_claim),
              ("§5.4, Tables 8 and 10: at depth 2 and 2.5 a 5-minute limit gives the 30-minute accuracy",
               short_limit_claim),
              ("§5.4, Tables 8 and 10: at depth 3 and imbalanced a 5-minute limit lowers the accuracy",
               deep_limit_claim),
              ("§5.4, Tables 10-11: at 5 minutes feature selection helps training and test accuracy",
               limited_selection_claim),
              ("§5.5, Table 12: more training rows narrow the gap between training and test accuracy", size12_claim),
              ("§5.6, Table 13: the ODT tests better than pruned CART or has fewer leaves", cart13_claim),
              ("§5.7: on 90 % of heloc (8884 rows) a depth-2 ODT with feature selection tests 71.6 %, CART "
               "71.0 %", lambda rows: ("not shown at this scale", "heloc is not bundled")),
              ("§5.8, Table 14: lowering the sensitivity floor β raises specificity, with TPR ≥ β in "
               "training", rate_claim)]
    lines = ["Claims of the paper (odtk's proven cells above; \"not shown\": the cells it needs were not run "
             "or not proven):"]
    for text, check in checks:
        verdict, detail = check(rows)
        lines.append(f"- {text}: {verdict}{f' ({detail})' if detail else ''}")
    return lines


def numbers(rows: list[dict], table: int | tuple[int, ...], dataset: str | None = None,
            setting: str | None = None, proven: bool = True) -> list[dict]:
    """The kept numbers of the proven rows of ``table`` (and ``dataset``, ``setting``) that have
    some: a claim is judged on proven cells only (an unproven cell's tree and time say nothing
    of the optimum), but for claims on time-limited solves (``proven`` False: every row)."""
    tables = (table,) if isinstance(table, int) else table
    return [r["_numbers"] | {"dataset": r["dataset"], "setting": r["setting"], "proven": r["_proven"]}
            for r in rows if r["table"] in tables and r["_numbers"] and (r["_proven"] or not proven)
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


# ----------------------------------------------------------------------- Tables 4, 5, 9-12
def paper_seconds(table: dict, dataset: str, topology: str, size: int) -> float:
    """A Table 4 / 5 time in seconds (NaN for "*": over the paper's 2 hours)."""
    value = table[dataset][topology].split()[size // 100 - 1]
    return float("nan") if value == "*" else float(value)


def times(rows: list[dict], table: int) -> dict[tuple[str, str], dict[int, dict]]:
    """Proven Table 4 / 5 cells as {(dataset, topology): {size: numbers}}."""
    cells: dict[tuple[str, str], dict[int, dict]] = {}
    for cell in numbers(rows, table):
        cells.setdefault((cell["dataset"], cell["topology"]), {})[cell["size"]] = cell
    return cells


def ratio_verdict(label: str, ratio: float, agree: list[tuple[str, bool]]) -> str:
    """Count a CPU ratio that should exceed 1 (a ratio within ``NOISE`` is a tie); its text."""
    counted = not 1 / NOISE < ratio < NOISE
    if counted:
        agree.append((label, ratio >= NOISE))
    return f"{ratio:.1f}×{'' if counted else ' (a tie)'}"


def size_claim(rows: list[dict]) -> tuple[str, str]:
    """Table 4: CPU at the largest proven size over CPU at the smallest, per dataset and topology."""
    agree, parts = [], []
    for (dataset, topology), by_size in times(rows, 4).items():
        if len(by_size) >= 2:
            small, large = min(by_size), max(by_size)
            ratio = by_size[large]["cpu"] / max(by_size[small]["cpu"], 1e-9)
            paper = paper_seconds(TABLE4, dataset, topology, large) / paper_seconds(TABLE4, dataset, topology, small)
            parts.append(f"{dataset} {topology} {small}→{large} rows: "
                         f"{ratio_verdict(f'{dataset} {topology}', ratio, agree)} CPU, paper {paper:.1f}×")
    return verdict(agree), "; ".join(parts)


def topology_claim(rows: list[dict]) -> tuple[str, str]:
    """Table 4: CPU of each topology over the previous one's, per dataset and size."""
    agree, parts, cells = [], [], times(rows, 4)
    for (dataset, topology), by_size in cells.items():
        before = TOPOLOGIES[TOPOLOGIES.index(topology) - 1] if topology != TOPOLOGIES[0] else None
        for size in sorted(set(by_size) & set(cells.get((dataset, before), {}))):
            ratio = by_size[size]["cpu"] / max(cells[(dataset, before)][size]["cpu"], 1e-9)
            paper = paper_seconds(TABLE4, dataset, topology, size) / paper_seconds(TABLE4, dataset, before, size)
            parts.append(f"{dataset} {size} rows {before}→{topology}: "
                         f"{ratio_verdict(f'{dataset} {size} {topology}', ratio, agree)}, paper {paper:.1f}×")
    return verdict(agree), "; ".join(parts)


def selection_time_claim(rows: list[dict]) -> tuple[str, str]:
    """Table 4's CPU over Table 5's, per proven cell of both."""
    agree, parts, selected = [], [], times(rows, 5)
    for (dataset, topology), by_size in times(rows, 4).items():
        for size in sorted(set(by_size) & set(selected.get((dataset, topology), {}))):
            ratio = by_size[size]["cpu"] / max(selected[(dataset, topology)][size]["cpu"], 1e-9)
            paper = (paper_seconds(TABLE4, dataset, topology, size)
                     / max(paper_seconds(TABLE5, dataset, topology, size), 0.5))  # the paper rounds to seconds
            parts.append(f"{dataset} {topology} {size} rows: "
                         f"{ratio_verdict(f'{dataset} {topology} {size}', ratio, agree)}, paper {paper:.0f}×")
    return verdict(agree), "; ".join(parts)


def matched(rows: list[dict], first: int, second: int, proven: bool = True) -> list[tuple[dict, dict]]:
    """Pairs of ODT cells of two accuracy tables (8-11) with the same dataset and topology."""
    return [(a, b) for a in numbers(rows, first, proven=proven) if a["setting"] in TOPOLOGIES
            for b in numbers(rows, second, a["dataset"], a["setting"], proven=proven)]


def paper_difference(pairs: list[tuple[dict, dict]], first: dict, second: dict) -> tuple[float, float]:
    """The paper's mean (train, test) difference second − first over the same cells."""
    values = [np.subtract(paper_pct(second[a["dataset"]][TOPOLOGIES.index(a["setting"])]),
                          paper_pct(first[a["dataset"]][TOPOLOGIES.index(a["setting"])])) for a, _ in pairs]
    return tuple(np.mean(values, axis=0)) if values else (float("nan"), float("nan"))


def selection_accuracy_claim(rows: list[dict]) -> tuple[str, str]:
    """Tables 8 vs 9: mean training and test accuracy with feature selection minus without."""
    pairs = matched(rows, 8, 9)
    if not pairs:
        return verdict([]), ""
    train, test = (100 * np.mean([b[k] - a[k] for a, b in pairs]) for k in ("train", "test"))
    paper_train, paper_test = paper_difference(pairs, TABLE8, TABLE9)
    agree = [(label, agrees) for label, diff, agrees in (("training", train, train < 0), ("test", test, test > 0))
             if abs(diff) >= 0.05]
    return verdict(agree), (f"{len(pairs)} cells, with − without: train {train:+.2f}, test {test:+.2f} points; "
                            f"paper {paper_train:+.2f}, {paper_test:+.2f} (equal within 0.05 points: a tie)")


def short_limit_claim(rows: list[dict]) -> tuple[str, str]:
    """Tables 8 vs 10 at depth 2 and 2.5: the same training accuracy when both cells are proven."""
    pairs = [(a, b) for a, b in matched(rows, 8, 10) if a["setting"] in ("depth-2", "depth-2.5")]
    agree = [(f"{a['dataset']} {a['setting']}", abs(a["train"] - b["train"]) < 5e-4) for a, b in pairs]
    return verdict(agree), ", ".join(f"{a['dataset']} {a['setting']} {100 * a['train']:.1f} vs "
                                     f"{100 * b['train']:.1f}" for a, b in pairs)


def deep_limit_claim(rows: list[dict]) -> tuple[str, str]:
    """Tables 8 vs 10 at depth 3 and imbalanced: lower training accuracy at 5 minutes, on the
    cells the 5-minute limit stopped (a proven 5-minute cell is the optimum: nothing to lose)."""
    pairs = [(a, b) for a, b in matched(rows, 8, 10, proven=False)
             if a["setting"] in ("depth-3", "imbalanced") and not b["proven"]]
    agree = [(f"{a['dataset']} {a['setting']}", b["train"] < a["train"]) for a, b in pairs]
    return verdict(agree), ", ".join(f"{a['dataset']} {a['setting']} train {100 * a['train']:.1f} → "
                                     f"{100 * b['train']:.1f}" for a, b in pairs)


def limited_selection_claim(rows: list[dict]) -> tuple[str, str]:
    """Tables 10 vs 11: on the cells the 5-minute limit stopped without feature selection,
    whether feature selection gives at least the training and test accuracy in most of them."""
    pairs = [(a, b) for a, b in matched(rows, 10, 11, proven=False) if not a["proven"]]
    if not pairs:
        return verdict([]), ""
    helped = sum(b["train"] >= a["train"] and b["test"] >= a["test"] for a, b in pairs)
    return verdict([("most cells", 2 * helped > len(pairs))]), f"{helped} of {len(pairs)} stopped cells helped"


def size12_claim(rows: list[dict]) -> tuple[str, str]:
    """Table 12: training − test accuracy at the largest proven size against the smallest."""
    agree, parts = [], []
    cells: dict[tuple[str, str], dict[int, dict]] = {}
    for cell in numbers(rows, 12):
        cells.setdefault((cell["dataset"], cell["topology"]), {})[cell["size"]] = cell
    for (dataset, topology), by_size in cells.items():
        if len(by_size) >= 2:
            small, large = (by_size[size] for size in (min(by_size), max(by_size)))
            gaps = [100 * (cell["train"] - cell["test"]) for cell in (small, large)]
            parts.append(f"{dataset} {topology} {min(by_size)}→{max(by_size)} rows: train − test "
                         f"{gaps[0]:+.1f} → {gaps[1]:+.1f} points")
            agree.append((f"{dataset} {topology}", abs(gaps[1]) <= abs(gaps[0]) + 0.05))
    return verdict(agree), "; ".join(parts)
