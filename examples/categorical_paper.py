"""Günlük et al.'s categorical trees: the paper's tables beside odtk's numbers, row by row.

Günlük, Kalagnanam, Li, Menickelly & Scheinberg, "Optimal Decision Trees for Categorical Data via
Integer Programming" (J. Global Optimization 81, 2021), formulation (8) = ``odtk.solve("categorical")``.
Every row prints the paper's value (transcribed from its text, labelled with the table number)
beside odtk's, measured here:

    Table 2   the five configurations of §5.1 (``configuration=``: nothing, no-anchor, no-relax,
              no-strength, all; projection (14) on in all), depth 3, 200 random rows:
              "seconds/LPs" (paper: CPLEX LPs; odtk: the solver's branch-and-bound nodes;
              "*" = time limit reached; in the other tables "*" = no tree within it).
    Table 3   the same at the paper's per-dataset sample sizes (flag ``--tables 3``).
    Table 6   mush: simple (max_card=1) / comb-con (max_card=2) / comb-unc branching, depth 2
              and 3: "train (test)" accuracy in %.
    Table 7   bc: scores as ordered bins ("n", §4.4) or as categories ("c"): "train (test)/seconds".
    Table 8   accuracy by topology (depth-2, depth-2.5, depth-3, imbalanced), no feature
              selection, and CART of depth 3 fitted on the 90 %: "train (test)".
    Table 13  topology chosen on validation rows, CART feature selection (§5.1), vs an unpruned
              CART on the 90 %: "test accuracy / leaves".
    Table 14  bc, maximum specificity (TNR) subject to sensitivity (TPR) ≥ β (§4.6, positive =
              malignant): "TPR/TNR" on training and test rows.

Protocol (the paper's §5.4): per seed, 10 % of the rows are held out for testing; the ODT trains
on min(90 %, 600) rows, CART on the whole 90 %. Averages over ``--seeds`` seeds (paper: 5 for
Tables 6–8 and 13, 30 for Table 14). Table 13 picks the topology with the best mean accuracy on
the 90 % rows the ODT did not train on (paper: the same for bc, krkp, mush, ttt; 5-fold
cross-validation on the smaller sets) and reports that topology's trees (the paper retrains
once more). odtk's CART is scikit-learn's on the one-hot columns (the paper's is rpart), and
its feature selection fits CART on 90 % of the ODT's training rows (the paper's on 90 % of the
data).

Time limits are scaled down for a 2-core machine and equal across configurations (paper: 3 h
on 8 cores with CPLEX for Tables 2–3, 30 min for Tables 6–8 and 13): ``--time-limit`` per solve;
the output repeats it. Default: a few minutes (one seed, fewer datasets, topologies and β).
Full run: ``--full`` (5 seeds, 30 for Table 14, every dataset and topology, 600 s per solve).

Datasets and which bundled file matches the paper's Table 1 (rows, features, groups):

    bc       uci/breast-cancer-wisconsin: 699 rows (paper 695), nine 1–10 scores = 90 ordered bins
             in 9 groups; positive = benign (65 %) for accuracy, malignant for Table 14.
    krkp     binary/kr-vs-kp, 3196 rows, 73 one-hot columns regrouped into the 36 attributes.
    mush     binary/mushroom, 8124 rows, 119 one-hot columns regrouped into 21 attributes (the
             paper's 111 columns in 20 groups drop two attributes it does not name).
    ttt      binary/tic-tac-toe, 958 rows, 27 columns = 9 squares of 3 values.
    monks-1  uci/monks1 (556 rows: the 124 training rows and the 432 test rows) without
             duplicates: the full 432-row set, its one-hot columns decoded back to 6 attributes
             (17 values); the class is column 0 (see DATASETS.md).
    votes    binary/vote, 435 rows, 48 columns = 16 votes of y / n / ?.
    heart    flowoct/spect, 267 rows, 22 binary features (44 values), 79 % positive
             (``uci/spect-heart`` has the class as feature 0 and is not used).

a1a, heloc and student are not bundled; their rows are left out.

Run:  python examples/categorical_paper.py
      python examples/categorical_paper.py --full --solver gurobi
      python examples/categorical_paper.py --tables 2 3 --time-limit 1800 --datasets bc ttt
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import odtk
from _common import one_hot, quiet
from odtk.datasets import Dataset, from_dataframe, load_dataset
from odtk.exceptions import OdtkError

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
TABLE7 = {  # bc, numeric "n" / categorical "c": train (test)/seconds by topology (30 min limit)
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


# ----------------------------------------------------------------------- data (Table 1)
def regrouped(name: str) -> Dataset:
    """A binarised file whose one-hot columns come in contiguous blocks with exactly one 1 per
    row and block, as one categorical feature per block (its value: the hot column's position)."""
    data = load_dataset(name)
    X = data.features.to_numpy(dtype=int)
    blocks, start = [], 0
    while start < X.shape[1]:
        stop = start + 1
        while X[:, start:stop].sum(axis=1).min() < 1:
            stop += 1
        if X[:, start:stop].sum(axis=1).max() != 1:
            raise ValueError(f"{name}: columns {start}–{stop - 1} are not one attribute's one-hot")
        blocks.append((start, stop))
        start = stop
    frame = pd.DataFrame({f"a{k}": X[:, a:b].argmax(axis=1).astype(str) for k, (a, b) in enumerate(blocks)})
    return from_dataframe(frame.assign(y=data.target.to_numpy()), "y", name=name)


def monks1_full() -> Dataset:
    """uci/monks1 without duplicate rows (the full 432-row MONK-1 set), attributes decoded from
    their one-hot columns with one level dropped (``a1_2``, ``a1_3`` → attribute ``a1``)."""
    data = load_dataset("uci/monks1")
    features = data.features.assign(y=data.target).drop_duplicates()
    frame = pd.DataFrame(index=features.index)
    for column in data.features.columns:
        attribute, _, value = column.partition("_")
        hot = features[column].astype(int).to_numpy()
        current = frame.get(attribute, pd.Series("0", index=frame.index))
        frame[attribute] = np.where(hot == 1, value or "1", current)
    frame = frame.astype(str).reset_index(drop=True)
    return from_dataframe(frame.assign(y=features["y"].to_numpy()), "y", name="monks-1")


DATASETS: dict[str, Callable[[], Dataset]] = {
    "bc": lambda: load_dataset("uci/breast-cancer-wisconsin"),
    "krkp": lambda: regrouped("binary/kr-vs-kp"), "mush": lambda: regrouped("binary/mushroom"),
    "ttt": lambda: regrouped("binary/tic-tac-toe"), "monks-1": monks1_full,
    "votes": lambda: regrouped("binary/vote"), "heart": lambda: load_dataset("flowoct/spect")}
MALIGNANT = "malignant"  # bc's class of malignant tumours (34.5 % of the rows)


def split(data: Dataset, seed: int, cap: int = 600) -> tuple[Dataset, Dataset, Dataset]:
    """(ODT training rows: min(90 %, cap), the other 90 % rows, the 10 % test rows)."""
    order = np.random.default_rng(seed).permutation(data.n_rows)
    pool, test = order[:int(0.9 * data.n_rows)], order[int(0.9 * data.n_rows):]
    return data.subset(pool[:cap]), data.subset(pool[cap:]), data.subset(test)


def pooled(train: Dataset, rest: Dataset) -> Dataset:
    """The whole 90 %: the ODT's rows and the others."""
    frame = pd.concat([train.features, rest.features], ignore_index=True)
    target = pd.concat([train.target, rest.target], ignore_index=True)
    return Dataset(train.name, frame, target, train.kinds) if rest.n_rows else train


# ----------------------------------------------------------------------- measuring
def accuracy(model: odtk.TrainedModel, data: Dataset) -> float:
    return float(np.mean(model.predict(data.features) == data.target.to_numpy(dtype=object)))


def leaves(result: odtk.SolveResult) -> int:
    graph = result.model.graph.graph
    return sum(1 for node in graph if graph.out_degree(node) == 0)


def fit(train: Dataset, topology: str, args: argparse.Namespace, **options) -> odtk.SolveResult | None:
    """One ODT; None (and a line on stdout) if odtk gives up."""
    try:
        return odtk.solve("categorical", train, skeleton=topology, solver=args.solver,
                          time_limit=args.time_limit, threads=1, seed=0, warm_start=None, **options)  # as the paper
    except OdtkError as exc:
        print(f"odtk: {train.name} {topology} {options}: {exc}")
        return None


def cart_fit(train: Dataset, depth: int | None, seed: int) -> tuple[DecisionTreeClassifier, pd.DataFrame]:
    X = one_hot(train)
    return DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, train.target), X


def cart_scores(train: Dataset, test: Dataset, depth: int | None, seed: int) -> tuple[float, float, int]:
    """CART's (train accuracy, test accuracy, leaves)."""
    tree, X = cart_fit(train, depth, seed)
    return (tree.score(X, train.target), tree.score(one_hot(test, X), test.target), int(tree.get_n_leaves()))


def mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def pct(train: list[float], test: list[float]) -> str:
    """ "train (test)" in %; "*" when no solve found a tree within the time limit."""
    return f"{100 * mean(train):.1f} ({100 * mean(test):.1f})" if train else "*"


# ----------------------------------------------------------------------- tables
def table_configurations(table: int, args: argparse.Namespace) -> list[dict]:
    """Tables 2 and 3: every named configuration on one random sample, depth 3."""
    rows = []
    for name in args.datasets:
        if name not in TABLE2:
            continue
        size, paper = (200, TABLE2[name]) if table == 2 else TABLE3[name]
        data = DATASETS[name]()
        sample = data.subset(np.sort(np.random.default_rng(0).permutation(data.n_rows)[:size]))
        for configuration, value in zip(CONFIGURATIONS, paper.split()):
            result = fit(sample, "depth-3", args, configuration=configuration)
            rows.append(row(table, name, f"{size} rows, {configuration}", value, seconds_nodes(result)))
    return rows


def seconds_nodes(result: odtk.SolveResult | None) -> str:
    if result is None:  # no incumbent within the limit (the line above says why)
        return "*/-"
    seconds = f"{result.solve_time:.1f}" if result.optimal else "*"
    nodes = result.steps["milp"].get("nodes")
    return f"{seconds}/{'-' if nodes is None else nodes}"


def table8(args: argparse.Namespace) -> list[dict]:
    """Table 8: each topology without feature selection, and CART of depth 3."""
    rows = []
    for name in args.datasets:
        data = DATASETS[name]()
        splits = [split(data, seed) for seed in range(args.seeds)]
        for topology in args.topologies:
            scores = [odt_scores(train, test, topology, args) for train, _, test in splits]
            rows.append(row(8, name, topology, TABLE8[name][TOPOLOGIES.index(topology)], pct(
                [s[0] for s in scores if s], [s[1] for s in scores if s])))
        cart = [cart_scores(pooled(train, rest), test, 3, seed) for seed, (train, rest, test) in enumerate(splits)]
        rows.append(row(8, name, "CART-D3", TABLE8[name][4], pct([c[0] for c in cart], [c[1] for c in cart])))
    return rows


def odt_scores(train: Dataset, test: Dataset, topology: str, args: argparse.Namespace,
               **options) -> tuple[float, float, float, int] | None:
    """(train accuracy, test accuracy, solve seconds, leaves) of one ODT, or None."""
    result = fit(train, topology, args, **options)
    if result is None:
        return None
    return result.train_accuracy, accuracy(result.model, test), result.solve_time, leaves(result)


def table13(args: argparse.Namespace) -> list[dict]:
    """Table 13: the topology best on validation rows (feature selection on), vs unpruned CART."""
    rows = []
    for name in args.datasets:
        data = DATASETS[name]()
        splits = [validation_split(data, seed) for seed in range(args.seeds)]
        found = {topology: [fit(train, topology, args, feature_selection="cart") for train, _, _ in splits]
                 for topology in args.topologies}
        best = max(found, key=lambda t: mean([accuracy(r.model, val) for r, (_, val, _) in zip(found[t], splits) if r]))
        chosen = [(r, test) for r, (_, _, test) in zip(found[best], splits) if r]
        odt = f"{100 * mean([accuracy(r.model, t) for r, t in chosen]):.1f}/{mean([leaves(r) for r, _ in chosen]):.1f}"
        cart = [cart_scores(pooled(train, val), test, None, seed) for seed, (train, val, test) in enumerate(splits)]
        rows.append(row(13, name, f"ODT ({best})", TABLE13[name][0], odt))
        rows.append(row(13, name, "CART", TABLE13[name][1],
                        f"{100 * mean([c[1] for c in cart]):.1f}/{mean([c[2] for c in cart]):.1f}"))
    return rows


def validation_split(data: Dataset, seed: int) -> tuple[Dataset, Dataset, Dataset]:
    """(training, validation, test): the ODT's min(90 %, 600) rows and the rest of the 90 %; when
    that leaves fewer than a fifth of the 90 %, the training rows are the first four fifths."""
    pool = int(0.9 * data.n_rows)
    return split(data, seed, cap=min(600, int(0.8 * pool)))


def table6(args: argparse.Namespace) -> list[dict]:
    """Table 6: simple, comb-con and comb-unc branching on mush (600 rows)."""
    if "mush" not in args.datasets:
        return []
    splits = [split(DATASETS["mush"](), seed) for seed in range(args.seeds)]
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for label, max_card, paper in zip(("simple", "comb-con", "comb-unc"), (1, 2, None), TABLE6[topology]):
            scores = [s for s in (odt_scores(train, test, topology, args, max_card=max_card)
                                  for train, _, test in splits) if s]
            rows.append(row(6, "mush", f"{topology} {label}", paper,
                            pct([s[0] for s in scores], [s[1] for s in scores])))
    return rows


def table7(args: argparse.Namespace) -> list[dict]:
    """Table 7: bc's scores as ordered bins ("n") or as unordered categories ("c")."""
    if "bc" not in args.datasets:
        return []
    splits = [split(DATASETS["bc"](), seed) for seed in range(args.seeds)]
    rows = []
    for code, numeric in (("n", "ordinal"), ("c", "categorical")):
        for topology in args.topologies:
            scores = [s for s in (odt_scores(train, test, topology, args, numeric=numeric)
                                  for train, _, test in splits) if s]
            odtk_value = f"{pct([s[0] for s in scores], [s[1] for s in scores])}/{mean([s[2] for s in scores]):.0f}"
            rows.append(row(7, "bc", f"{topology} {code}", TABLE7[code][TOPOLOGIES.index(topology)], odtk_value))
    return rows


def table14(args: argparse.Namespace) -> list[dict]:
    """Table 14: bc, maximum specificity subject to training sensitivity ≥ β (§4.6)."""
    if "bc" not in args.datasets:
        return []
    splits = [split(DATASETS["bc"](), seed) for seed in range(args.seeds14)]
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for beta in args.betas:
            rates = [r for r in (rate_pair(train, test, topology, beta, args) for train, _, test in splits) if r]
            paper = TABLE14[beta][0 if topology == "depth-2" else 2: 2 if topology == "depth-2" else 4]
            for side, value in enumerate(paper):
                measured = np.mean([r[side] for r in rates], axis=0) if rates else None
                rows.append(row(14, "bc", f"{topology} β={beta:g} {('train', 'test')[side]}", value,
                                "*" if measured is None else f"{100 * measured[0]:.1f}/{100 * measured[1]:.1f}"))
    return rows


def rate_pair(train: Dataset, test: Dataset, topology: str, beta: float, args: argparse.Namespace):
    """((train TPR, TNR), (test TPR, TNR)) of the tree with the best specificity at TPR ≥ β."""
    result = fit(train, topology, args, positive_class=MALIGNANT, rate="specificity", min_rate=beta)
    if result is None:
        return None
    return tuple(rates(result.model, data) for data in (train, test))


def rates(model: odtk.TrainedModel, data: Dataset) -> tuple[float, float]:
    predicted, truth = model.predict(data.features), data.target.to_numpy(dtype=object)
    positive = truth == MALIGNANT
    return float(np.mean(predicted[positive] == MALIGNANT)), float(np.mean(predicted[~positive] != MALIGNANT))


def row(table: int, dataset: str, setting: str, paper: str, measured: str) -> dict:
    return {"table": table, "dataset": dataset, "setting": setting, "paper": paper, "odtk": measured}


TABLES: dict[int, Callable[[argparse.Namespace], list[dict]]] = {
    2: lambda args: table_configurations(2, args), 3: lambda args: table_configurations(3, args),
    6: table6, 7: table7, 8: table8, 13: table13, 14: table14}


# ----------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tables", nargs="+", type=int, choices=list(TABLES), default=[2, 6, 7, 8, 13, 14])
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), help="default: bc ttt monks-1 votes heart")
    parser.add_argument("--topologies", nargs="+", choices=TOPOLOGIES, help="default: depth-2 depth-3")
    parser.add_argument("--seeds", type=int, help="seeds of Tables 6–8 and 13 (default 1)")
    parser.add_argument("--seeds14", type=int, help="seeds of Table 14 (default 1)")
    parser.add_argument("--betas", nargs="+", type=float, choices=BETAS, help="default: 1 0.98 0.95")
    parser.add_argument("--time-limit", type=float, help="seconds per solve (default 5)")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--full", action="store_true",
                        help="every dataset, topology and β; 5 seeds (30 for Table 14); 600 s per solve")
    args = parser.parse_args(argv)
    full = {"datasets": list(DATASETS), "topologies": TOPOLOGIES, "seeds": 5, "seeds14": 30,
            "betas": BETAS, "time_limit": 600.0}
    short = {"datasets": ["bc", "ttt", "monks-1", "votes", "heart"], "topologies": ["depth-2", "depth-3"],
             "seeds": 1, "seeds14": 1, "betas": [1.0, 0.98, 0.95], "time_limit": 5.0}
    for key, value in (full if args.full else short).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    quiet()
    start, rows = time.perf_counter(), []
    for table in args.tables:
        rows += TABLES[table](args)
    print(f"Günlük et al. (2021) beside odtk: {args.solver}, 1 thread, {args.time_limit:g} s per solve "
          f"(paper: CPLEX, 8 cores, 3 h for Tables 2-3, 30 min for Tables 6-8 and 13), "
          f"{args.seeds} seed(s), {args.seeds14} for Table 14")
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
