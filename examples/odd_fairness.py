"""ODD with demographic parity, in kind: accuracy against group fairness.

Reproduces in kind the fairness extension of Florio, Martins, Schiffer, Serra & Vidal,
"Optimal Decision Diagrams for Classification" (AAAI 2023, arXiv:2205.14500). The paper's
constraint (19) is a *count* form: g₁'s number of samples predicted positive is at least ξ
times g₂'s, one way, for "a binary classification dataset in which outcome 1 is the most
desirable" (class 1, the positive class, is the outcome a group should not be denied).
odtk's default, used here, is the *rate* form, odtk's own: each group's positive-prediction
rate is at least ξ times the other's, both ways (``--form counts`` runs the paper's (19)).
An unconstrained diagram is compared with diagrams trained under demographic parity (all
samples) for each ξ, and optionally under equal opportunity (the rate among true
positives). Reported: training and test accuracy, and the ratio min/max of the groups'
positive-prediction rates over all samples (``dp_*``, what demographic parity bounds in the
rate form) and over the true positives (``eo_*``, what equal opportunity bounds), on the
training and test splits.

Data: ``binary/compas`` (ProPublica COMPAS recidivism, 27 named binary features), protected
column ``Gender=Male``. Its class 1 is "re-offended within two years"; the desirable outcome,
which (19) takes as class 1, is not re-offending, so the script relabels the target: the
``--desirable`` label (COMPAS: 0) becomes class 1 (the positive class) and the other class 0;
the output's title says which. Its 7,214 rows are too many for a MILP in minutes, so ``--rows``
(default 200) rows are drawn at random with the seed, then split 50/50 into train and test (no
validation: nothing is tuned). The constrained MILPs get no heuristic warm start (the heuristic
ignores (19)); with short time limits all results are incumbents, see ``status`` and ``gap``
(with 400 rows and 30 s, HiGHS's constrained incumbents are often worse than a constant
classifier). Hyperplane splits on 100 training rows overfit: expect test accuracy well below
training accuracy.

Run:  python examples/odd_fairness.py
      python examples/odd_fairness.py --rows 1000 --skeleton 1-2-2 --univariate --xis 0.7 0.8 0.9 0.95 \\
             --equal-opportunity --time-limit 600 --solver gurobi
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import odtk
from _common import accuracy, gap, load_split, print_table, quiet, solve_row
from odtk.datasets import Dataset

MEANINGS = {"binary/compas": {"0": "did not re-offend within two years", "1": "re-offended within two years"}}


def rate_ratio(predicted: np.ndarray, group: np.ndarray, positive) -> float:
    """min/max of the two groups' positive-prediction rates (1 when neither gets positives)."""
    rates = [np.mean(predicted[group == value] == positive) for value in np.unique(group)]
    if len(rates) != 2:
        return float("nan")  # a group is absent from these rows
    return 1.0 if max(rates) == 0 else float(min(rates) / max(rates))


def fairness(result: odtk.SolveResult, data: Dataset, groups: str, positive, split: str) -> dict:
    """Demographic-parity and equal-opportunity ratios of ``result`` on ``data``."""
    predicted = result.model.predict(data.features)
    group = data.features[groups].to_numpy()
    actual = data.target.to_numpy(dtype=object) == positive
    return {f"dp_{split}": rate_ratio(predicted, group, positive),
            f"eo_{split}": rate_ratio(predicted[actual], group[actual], positive)}


def desirable_positive(data: Dataset, desirable: str) -> Dataset:
    """``data`` with class 1 for the ``desirable`` label and 0 for the other: ODD's class 1 is
    the positive class of (19), which the paper takes to be the desirable outcome."""
    labels = data.target.astype(str)
    return Dataset(data.name, data.features, (labels == desirable).astype(int), dict(data.kinds))


def check_desirable(data: Dataset, desirable: str) -> None:
    """One line and a non-zero exit unless ``data`` has two classes, ``desirable`` among them."""
    classes = [str(label) for label in data.classes]
    if len(classes) != 2 or desirable not in classes:
        sys.exit(f"odd_fairness.py: error: --desirable {desirable} must name one of the two classes of "
                 f"{data.name} (it has {', '.join(classes)}); give the label of the desirable outcome.")


def fair_row(train: Dataset, test: Dataset, setting: dict, args: argparse.Namespace) -> dict:
    """Train one diagram under ``setting`` (no constraint, or fairness + xi) and measure it."""
    extra = {"groups": args.groups, "fairness_form": args.form, **setting} if setting else {}
    result = odtk.solve("odd", train, skeleton=args.skeleton, solver=args.solver, time_limit=args.time_limit,
                        heuristic_time=args.heuristic_time, seed=args.seed, alpha=args.alpha,
                        univariate=args.univariate, **extra)
    positive = 1  # ODD's positive class of (19): the desirable outcome (desirable_positive)
    return {"train_acc": result.train_accuracy, "test_acc": accuracy(result, test),
            **fairness(result, train, args.groups, positive, "train"),
            **fairness(result, test, args.groups, positive, "test"),
            "nodes": result.model.graph.n_splits, "gap": gap(result), "status": result.termination,
            "time_s": result.wall_time}


def settings(args: argparse.Namespace) -> list[dict]:
    """The unconstrained run, then every (fairness notion, ξ) pair asked for."""
    notions = ["demographic_parity"] + (["equal_opportunity"] if args.equal_opportunity else [])
    return [{}] + [{"fairness": notion, "xi": xi} for notion in notions for xi in args.xis]


def run(args: argparse.Namespace) -> list[dict]:
    """One row per setting, all trained on the same sampled training split."""
    train, _, test = load_split(args.dataset, args.seed, rows=args.rows, fractions=(0.5, 0.0, 0.5))
    check_desirable(train, args.desirable)
    train, test = desirable_positive(train, args.desirable), desirable_positive(test, args.desirable)
    rows = []
    for setting in settings(args):
        key = {"constraint": setting.get("fairness", "none"), "xi": setting.get("xi")}
        rows.append({**key, **solve_row(lambda: fair_row(train, test, setting, args))})
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--dataset", default="binary/compas", help="bundled two-class dataset")
    parser.add_argument("--groups", default="Gender=Male", help="two-valued protected feature column")
    parser.add_argument("--rows", type=int, default=200, help="random rows used (all if larger than the data)")
    parser.add_argument("--skeleton", default="1-2", help="diagram layer widths, root first")
    parser.add_argument("--desirable", default="0",
                        help="label of the desirable outcome, made the positive class 1 of (19) "
                             "(COMPAS: 0, did not re-offend within two years)")
    parser.add_argument("--form", choices=["rates", "counts"], default="rates",
                        help="rates: odtk's rate form, both ways; counts: the paper's (19), one way "
                             "(g1: rows whose --groups column is 1, g2: the others)")
    parser.add_argument("--xis", nargs="+", type=float, default=[0.8, 0.9], help="fairness ratios ξ")
    parser.add_argument("--equal-opportunity", action="store_true", help="also train under equal opportunity")
    parser.add_argument("--univariate", action="store_true", help="one feature per split instead of hyperplanes")
    parser.add_argument("--alpha", type=float, default=0.01, help="weight of the share of active nodes in (18)")
    parser.add_argument("--time-limit", type=float, default=30.0, help="MILP seconds per solve")
    parser.add_argument("--heuristic-time", type=float, default=2.0, help="heuristic seconds (unconstrained run)")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--seed", type=int, default=0, help="row sample, split, heuristic and solver seed")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    quiet()
    rows = run(args)
    meaning = MEANINGS.get(args.dataset, {}).get(args.desirable)
    form = ("the rate form (odtk's default; the paper's (19) is the count form)" if args.form == "rates"
            else "the count form, the paper's (19)")
    print_table(rows, f"ODD fairness on {args.dataset} ({args.rows} rows, groups {args.groups!r}), "
                      f"positive class 1 = {args.dataset}'s label {args.desirable} (the desirable outcome, as (19) "
                      f"assumes{': ' + meaning if meaning else ''}), {form}, "
                      f"skeleton {args.skeleton}, {args.solver}, {args.time_limit:g} s per solve, seed {args.seed}")


if __name__ == "__main__":
    main()
