"""Günlük et al.'s categorical trees: the paper's tables beside odtk's numbers, row by row.

Günlük, Kalagnanam, Li, Menickelly & Scheinberg, "Optimal Decision Trees for Categorical Data via
Integer Programming" (J. Global Optimization 81, 2021), formulation (8) = ``odtk.solve("categorical")``.
Every row prints the paper's value (transcribed from its text, labelled with the table number)
beside odtk's, measured here:

    Table 2   the five configurations of §5.1 (``configuration=``: nothing, no-anchor, no-relax,
              no-strength, all; projection (14) on in all), depth 3, the paper's 200 random rows
              (quick: 100 of bc): "seconds/LPs" (paper: CPLEX LPs; odtk: CPU seconds of
              odtk and its solver / the solver's branch-and-bound nodes).
    Table 3   the same at the paper's per-dataset sample sizes (flag ``--tables 3``).
    Table 6   mush: simple (max_card=1) / comb-con (max_card=2) / comb-unc branching, depth 2
              and 3: "train (test)" accuracy in %.
    Table 7   bc with CART feature selection (§5.1, as the paper's: its n rows equal its Table 9's):
              scores as ordered bins ("n", §4.4) or as categories ("c"): "train (test)/seconds".
    Table 8   accuracy by topology (depth-2, depth-2.5, depth-3, imbalanced), no feature
              selection, and CART of depth 3 fitted on the 90 %: "train (test)".
    Table 13  topology chosen on validation rows, CART feature selection (§5.1), vs CART pruned
              as rpart prunes (cost-complexity pruning, ``ccp_alpha`` chosen on the validation
              rows, refitted on the 90 %): "test accuracy / leaves".
    Table 14  bc, maximum specificity (TNR) subject to sensitivity (TPR) ≥ β (§4.6, positive =
              malignant): "TPR/TNR" on training then test rows.

Every odtk cell shows its status ("optimal", or how many of its solves were proven) and its
largest relative gap; a value not proven is marked ``†``. The output ends with one line per claim
of the paper: agrees, disagrees (with odtk's numbers beside the paper's) or not shown at this scale.

Protocol (the paper's §5.4): per seed, 10 % of the rows are held out for testing; the ODT trains
on min(90 %, 600) rows, CART on the whole 90 %. Averages over ``--seeds`` seeds (paper: 5 for
Tables 6–8 and 13, 30 for Table 14). Table 13 picks the topology with the best mean accuracy on
the 90 % rows the ODT did not train on (paper: the same for bc, krkp, mush, ttt; 5-fold
cross-validation on the smaller sets) and reports that topology's trees (the paper retrains
once more). odtk's CART is scikit-learn's on the one-hot columns (the paper's is rpart), and
its feature selection fits CART on 90 % of the ODT's training rows (the paper's on 90 % of the
data).

Default (quick) mode: only cells odtk proves optimal with HiGHS on a 2-core machine, about 4 CPU
minutes in all: depth 2, one seed, bc ttt monks-1 votes heart mush; Table 2 on a 100-row sample
of bc without no-strength (``--configurations``; HiGHS needs minutes there); Tables 6 and 14 on
min(90 %, 200) training rows (``--cap``; paper 600); β in {1, 0.98, 0.95}. Each solve may take
3600 s, far more than it needs (under 30 CPU s each), so that a loaded machine cannot turn a
proven cell into a time-limited one. Depth 2.5, 3 and imbalanced at the paper's sizes take
minutes to hours each: ``--full`` (every dataset, topology, configuration and β, 5 seeds, 30
for Table 14, the paper's 200-row samples and 600 rows, 1800 s per solve as the paper's 30 min;
cells still open at the limit are marked). ``--time-limit`` sets the limit.

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
      python examples/categorical_paper.py --tables 2 3 --time-limit 10800 --datasets bc ttt
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import odtk
from _common import one_hot, pruned_cart, quiet
from categorical_tables import (BETAS, CONFIGURATIONS, LEGEND, TABLE2, TABLE3, TABLE6, TABLE7, TABLE8, TABLE13,
                                TABLE14, TOPOLOGIES, Solve, claim_lines, cpu_seconds, mean, pct, row)
from odtk.datasets import Dataset, from_dataframe, load_dataset
from odtk.exceptions import OdtkError

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


def fit(train: Dataset, topology: str, args: argparse.Namespace, **options) -> Solve:
    """One ODT and its CPU seconds; a progress line on stderr; no result (and a line on stdout)
    if odtk gives up."""
    start = cpu_seconds()
    try:
        result = odtk.solve("categorical", train, skeleton=topology, solver=args.solver,
                            time_limit=args.time_limit, threads=1, seed=0, warm_start=None, **options)  # as the paper
    except OdtkError as exc:
        print(f"odtk: {train.name} {topology} {options}: {exc}")
        result = None
    solve = Solve(result, cpu_seconds() - start)
    ended = "no tree" if result is None else result.termination
    print(f"{train.name} {train.n_rows} rows {topology} {options}: {ended}, {solve.cpu:.1f} CPU s", file=sys.stderr)
    return solve


def scored(solves: list[Solve], test: list[Dataset]) -> dict[str, list[float]]:
    """Train and test accuracy, CPU seconds and leaves of the solves that found a tree."""
    pairs = [(s, data) for s, data in zip(solves, test) if s.result is not None]
    return {"train": [s.result.train_accuracy for s, _ in pairs],
            "test": [accuracy(s.result.model, d) for s, d in pairs],
            "cpu": [s.cpu for s, _ in pairs], "leaves": [leaves(s.result) for s, _ in pairs]}


def odt_row(table: int, dataset: str, setting: str, paper: str, solves: list[Solve], test: list[Dataset],
            seconds: bool = False) -> dict:
    """A "train (test)" row (with "/CPU seconds" if ``seconds``) of one cell."""
    s = scored(solves, test)
    text = pct(s["train"], s["test"]) + (f"/{mean(s['cpu']):.1f}" if seconds else "")
    return row(table, dataset, setting, paper, text, solves, **{k: mean(v) for k, v in s.items()})


def cart_scores(train: Dataset, test: Dataset, depth: int | None, seed: int) -> tuple[float, float, int]:
    """CART's (train accuracy, test accuracy, leaves)."""
    X = one_hot(train)
    tree = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, train.target)
    return (tree.score(X, train.target), tree.score(one_hot(test, X), test.target), int(tree.get_n_leaves()))


# ----------------------------------------------------------------------- tables
def table_configurations(table: int, args: argparse.Namespace) -> list[dict]:
    """Tables 2 and 3: every named configuration on one random sample (Table 2: ``args.rows2``'s)."""
    rows = []
    for name in [name for name in args.datasets if name in (args.rows2 if table == 2 else TABLE3)]:
        size, paper = (args.rows2[name], TABLE2[name]) if table == 2 else TABLE3[name]
        data = DATASETS[name]()
        sample = data.subset(np.sort(np.random.default_rng(0).permutation(data.n_rows)[:size]))
        seconds = [float(v.split("/")[0].replace("*", "10800")) for v in paper.split()]
        for configuration, value in zip(CONFIGURATIONS, paper.split()):
            if configuration not in args.configurations:
                continue
            solve = fit(sample, args.depth2, args, configuration=configuration)
            nodes = None if solve.result is None else solve.result.steps["milp"].get("nodes")
            text = "*" if solve.result is None else f"{solve.cpu:.1f}/{'-' if nodes is None else nodes}"
            rows.append(row(table, name, f"{size} rows {args.depth2}, {configuration}", value, text, [solve],
                            cpu=solve.cpu, paper_ratio=seconds[0] / seconds[-1]))
    return rows


def table6(args: argparse.Namespace) -> list[dict]:
    """Table 6: simple, comb-con and comb-unc branching on mush (600 rows)."""
    if "mush" not in args.datasets:
        return []
    splits = [split(DATASETS["mush"](), seed, args.cap) for seed in range(args.seeds)]
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for label, max_card, paper in zip(("simple", "comb-con", "comb-unc"), (1, 2, None), TABLE6[topology]):
            solves = [fit(train, topology, args, max_card=max_card) for train, _, _ in splits]
            rows.append(odt_row(6, "mush", f"{topology} {label}", paper, solves, [t for _, _, t in splits]))
    return rows


def table7(args: argparse.Namespace) -> list[dict]:
    """Table 7: bc's scores as ordered bins ("n") or unordered categories ("c"), feature selection on."""
    if "bc" not in args.datasets:
        return []
    splits = [split(DATASETS["bc"](), seed) for seed in range(args.seeds)]
    rows = []
    for code, numeric in (("n", "ordinal"), ("c", "categorical")):
        for topology in args.topologies:
            solves = [fit(train, topology, args, numeric=numeric, feature_selection="cart") for train, _, _ in splits]
            rows.append(odt_row(7, "bc", f"{topology} {code}", TABLE7[code][TOPOLOGIES.index(topology)], solves,
                                [t for _, _, t in splits], seconds=True))
    return rows


def table8(args: argparse.Namespace) -> list[dict]:
    """Table 8: each topology without feature selection, and CART of depth 3."""
    rows = []
    for name in args.datasets:
        data = DATASETS[name]()
        splits = [split(data, seed) for seed in range(args.seeds)]
        for topology in args.topologies:
            solves = [fit(train, topology, args) for train, _, _ in splits]
            rows.append(odt_row(8, name, topology, TABLE8[name][TOPOLOGIES.index(topology)], solves,
                                [t for _, _, t in splits]))
        cart = [cart_scores(pooled(train, rest), test, 3, seed) for seed, (train, rest, test) in enumerate(splits)]
        train, test = [c[0] for c in cart], [c[1] for c in cart]
        rows.append(row(8, name, "CART-D3", TABLE8[name][4], pct(train, test), train=mean(train), test=mean(test)))
    return rows


def table13(args: argparse.Namespace) -> list[dict]:
    """Table 13: the topology best on validation rows (feature selection on), vs CART pruned on them."""
    rows = []
    for name in args.datasets:
        data = DATASETS[name]()
        splits = [validation_split(data, seed) for seed in range(args.seeds)]
        found = {topology: [fit(train, topology, args, feature_selection="cart") for train, _, _ in splits]
                 for topology in args.topologies}
        best = max(found, key=lambda t: mean(scored(found[t], [val for _, val, _ in splits])["test"]))
        odt = scored(found[best], [test for _, _, test in splits])
        rows.append(row(13, name, f"ODT ({best})", TABLE13[name][0],
                        f"{100 * mean(odt['test']):.1f}/{mean(odt['leaves']):.1f}", found[best],
                        test=mean(odt["test"]), leaves=mean(odt["leaves"])))
        cart = [pruned_cart(train, val, seed, refit=pooled(train, val)) for seed, (train, val, _) in enumerate(splits)]
        test = [tree.score(one_hot(t, X), t.target) for (tree, X), (_, _, t) in zip(cart, splits)]
        size = [int(tree.get_n_leaves()) for tree, _ in cart]
        rows.append(row(13, name, "CART pruned", TABLE13[name][1], f"{100 * mean(test):.1f}/{mean(size):.1f}",
                        test=mean(test), leaves=mean(size)))
    return rows


def validation_split(data: Dataset, seed: int) -> tuple[Dataset, Dataset, Dataset]:
    """(training, validation, test): the ODT's min(90 %, 600) rows and the rest of the 90 %; when
    that leaves fewer than a fifth of the 90 %, the training rows are the first four fifths."""
    pool = int(0.9 * data.n_rows)
    return split(data, seed, cap=min(600, int(0.8 * pool)))


def table14(args: argparse.Namespace) -> list[dict]:
    """Table 14: bc, maximum specificity subject to training sensitivity ≥ β (§4.6)."""
    if "bc" not in args.datasets:
        return []
    splits = [split(DATASETS["bc"](), seed, args.cap) for seed in range(args.seeds14)]
    rows = []
    for topology in [t for t in ("depth-2", "depth-3") if t in args.topologies]:
        for beta in args.betas:
            solves = [fit(train, topology, args, positive_class=MALIGNANT, rate="specificity", min_rate=beta)
                      for train, _, _ in splits]
            paper = TABLE14[beta][0 if topology == "depth-2" else 2: 2 if topology == "depth-2" else 4]
            rows.append(rate_row(f"{topology} β={beta:g}", " ".join(paper), solves, splits, beta))
    return rows


def rate_row(setting: str, paper: str, solves: list[Solve], splits: list[tuple[Dataset, ...]], beta: float) -> dict:
    """Table 14's row: mean "TPR/TNR" on training then test rows."""
    pairs = [(s.result.model, train, test) for s, (train, _, test) in zip(solves, splits) if s.result]
    if not pairs:
        return row(14, "bc", setting, paper, "*", solves)
    (train_tpr, train_tnr), test = (np.mean([rates(model, data[side]) for model, *data in pairs], axis=0)
                                    for side in (0, 1))
    text = f"{100 * train_tpr:.1f}/{100 * train_tnr:.1f} {100 * test[0]:.1f}/{100 * test[1]:.1f}"
    return row(14, "bc", setting, paper, text, solves, beta=beta, train_tpr=train_tpr, train_tnr=train_tnr)


def rates(model: odtk.TrainedModel, data: Dataset) -> tuple[float, float]:
    predicted, truth = model.predict(data.features), data.target.to_numpy(dtype=object)
    positive = truth == MALIGNANT
    return float(np.mean(predicted[positive] == MALIGNANT)), float(np.mean(predicted[~positive] != MALIGNANT))


TABLES: dict[int, Callable[[argparse.Namespace], list[dict]]] = {
    2: lambda args: table_configurations(2, args), 3: lambda args: table_configurations(3, args),
    6: table6, 7: table7, 8: table8, 13: table13, 14: table14}


# ----------------------------------------------------------------------- command line
QUICK = {"datasets": ["bc", "ttt", "monks-1", "votes", "heart", "mush"], "topologies": ["depth-2"],
         "seeds": 1, "seeds14": 1, "betas": [1.0, 0.98, 0.95], "time_limit": 3600.0, "depth2": "depth-3", "cap": 200,
         "rows2": {"bc": 100},
         "configurations": ["nothing", "no-anchor", "no-relax", "all"]}
FULL = {"datasets": list(DATASETS), "topologies": TOPOLOGIES, "seeds": 5, "seeds14": 30, "betas": BETAS,
        "time_limit": 1800.0, "depth2": "depth-3", "cap": 600,
        "rows2": dict.fromkeys(TABLE2, 200), "configurations": CONFIGURATIONS}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tables", nargs="+", type=int, choices=list(TABLES), default=[2, 6, 7, 8, 13, 14])
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), help=f"default: {' '.join(QUICK['datasets'])}")
    parser.add_argument("--topologies", nargs="+", choices=TOPOLOGIES, help="default: depth-2")
    parser.add_argument("--seeds", type=int, help="seeds of Tables 6–8 and 13 (default 1)")
    parser.add_argument("--seeds14", type=int, help="seeds of Table 14 (default 1)")
    parser.add_argument("--betas", nargs="+", type=float, choices=BETAS, help="default: 1 0.98 0.95")
    parser.add_argument("--rows2", type=int, help="rows of Table 2's samples, each of its datasets (default: "
                        "100 of bc; with --full the paper's 200 of bc, krkp, mush, ttt)")
    parser.add_argument("--configurations", nargs="+", choices=CONFIGURATIONS,
                        help="configurations of Tables 2-3 (default: all but no-strength, which HiGHS does not prove "
                        "in minutes even on 100 rows)")
    parser.add_argument("--depth2", choices=TOPOLOGIES, help="topology of Tables 2-3 (default depth-3, the paper's)")
    parser.add_argument("--time-limit", type=float,
                        help="seconds per solve (default 3600, far above what the quick cells need; 1800 with --full)")
    parser.add_argument("--cap", type=int, help="training rows of Tables 6 and 14: min(90 %%, cap) (default 200; "
                        "the paper's 600 with --full)")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--full", action="store_true",
                        help="every dataset, topology and β; 5 seeds (30 for Table 14); 1800 s per solve")
    args = parser.parse_args(argv)
    if args.rows2 is not None:
        args.rows2 = dict.fromkeys(TABLE2, args.rows2)
    for key, value in (FULL if args.full else QUICK).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    quiet()
    start, rows = cpu_seconds(), []
    for table in args.tables:
        rows += TABLES[table](args)
    print(f"Günlük et al. (2021) beside odtk: {args.solver}, 1 thread, up to {args.time_limit:g} s per solve "
          f"(paper: CPLEX, 8 cores, 3 h for Tables 2-3, 30 min for Tables 6-8 and 13), "
          f"{args.seeds} seed(s), {args.seeds14} for Table 14; Tables 6 and 14 train on min(90 %, {args.cap}) "
          "rows (paper: 600)")
    shown = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    print(pd.DataFrame(shown).to_string(index=False))
    print(LEGEND)
    print(f"{sum(not r['_proven'] for r in rows)} of {len(rows)} rows not proven; "
          f"{cpu_seconds() - start:.0f} CPU s in total")
    print("\n".join(claim_lines(rows)))


if __name__ == "__main__":
    main()
