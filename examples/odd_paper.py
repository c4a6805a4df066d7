"""ODD accuracy experiment, in kind: optimal decision diagrams vs. optimal trees vs. CART.

Reproduces in kind the main comparison of Florio, Martins, Schiffer, Serra & Vidal,
"Optimal Decision Diagrams for Classification" (AAAI 2023, arXiv:2205.14500), run by the
authors' ``run_experiments.py``: on UCI datasets split 50/25/25, a diagram is trained on a
skeleton with the two-step method (constructive heuristic, then the MILP (1)–(18)
warm-started from it), for every α of a grid; α is chosen by validation accuracy and the
test accuracy reported. The optimal decision tree (ODT) with as many layers as the skeleton
(skeleton 1-2-2 ↔ tree 1-2-4) is tuned the same way, and CART of that depth is the greedy
baseline. Per model the table gives the active internal nodes (root included), the
heuristic's objective (18) next to the MILP's, the MILP bound and the final status.

The authors used skeletons 1-2-4-8, 1-2-4-4-4, 1-2-3-3-3-3 and 1-2-2-2-2-2-2-2, α ∈ {0.01,
0.1, 0.2, 0.5, 1}, multivariate and univariate splits, a 60 s heuristic and a long MILP
limit; the defaults here (skeleton 1-2-2, three α, short limits) finish in a few minutes.

Run:  python examples/odd_paper.py
      python examples/odd_paper.py --datasets uci/wine uci/ionosphere --skeleton 1-2-4-8 \\
             --alphas 0.01 0.1 0.2 0.5 1 --time-limit 600 --heuristic-time 60 --univariate
"""
from __future__ import annotations

import argparse
import math

import odtk
from _common import accuracy, cart, gap, load_split, print_table, quiet, solve_row, tune
from odtk.datasets import Dataset
from odtk.skeletons import parse_widths


def step_value(result: odtk.SolveResult, step: str) -> float:
    """Objective (18) found by one training step (NaN if it found none)."""
    value = result.steps.get(step, {}).get("objective")
    return math.nan if value is None else value


def odd_row(splits: tuple[Dataset, Dataset, Dataset], shape: dict, args: argparse.Namespace) -> dict:
    """Tune α for one diagram (``shape={'skeleton': …}``) or tree (``{'depth': d}``)."""
    train, val, test = splits

    def fit(alpha: float) -> odtk.SolveResult:
        return odtk.solve("odd", train, **shape, solver=args.solver, time_limit=args.time_limit,
                          heuristic_time=args.heuristic_time, seed=args.seed, alpha=alpha,
                          univariate=args.univariate)

    alpha, result, val_acc, grid_time = tune(fit, args.alphas, val)
    return {"alpha": alpha, "val_acc": val_acc, "test_acc": accuracy(result, test),
            "nodes": result.model.graph.n_splits, "heuristic": step_value(result, "heuristic"),
            "milp": step_value(result, "milp"), "bound": math.nan if result.bound is None else result.bound,
            "gap": gap(result), "status": result.termination, "time_s": result.wall_time, "grid_s": grid_time}


def run(args: argparse.Namespace) -> list[dict]:
    """ODD, ODT and CART rows per dataset."""
    layers = len(parse_widths(args.skeleton))
    tree = "-".join(str(2**layer) for layer in range(layers))
    rows = []
    for name in args.datasets:
        splits = load_split(name, args.seed)
        key = {"dataset": name, "n_train": splits[0].n_rows}
        for method, shape in (("ODD", {"skeleton": args.skeleton}), ("ODT", {"depth": layers})):
            row = solve_row(lambda: odd_row(splits, shape, args))
            rows.append({**key, "method": method, "shape": shape.get("skeleton", tree), **row})
        cart_acc, cart_splits = cart(splits[0], splits[2], layers, args.seed)
        rows.append({**key, "method": "CART", "shape": f"depth={layers}",
                     "test_acc": cart_acc, "nodes": cart_splits})
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["uci/iris", "uci/wine", "uci/seeds"],
                        help="bundled datasets (the uci/ collection is the paper's)")
    parser.add_argument("--skeleton", default="1-2-2", help="diagram layer widths, root first")
    parser.add_argument("--alphas", nargs="+", type=float, default=[0.01, 0.1, 0.5],
                        help="α grid (weight of the share of active nodes in (18))")
    parser.add_argument("--univariate", action="store_true", help="one feature per split instead of hyperplanes")
    parser.add_argument("--time-limit", type=float, default=20.0, help="MILP seconds per solve")
    parser.add_argument("--heuristic-time", type=float, default=2.0, help="heuristic seconds per solve")
    parser.add_argument("--solver", default="highs", help="highs, cbc, gurobi or cplex")
    parser.add_argument("--seed", type=int, default=0, help="split, heuristic, CART and solver seed")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    quiet()
    splits = "univariate" if args.univariate else "multivariate"
    print_table(run(args), f"ODD vs ODT vs CART ({splits} splits): α tuned on validation, {args.solver}, "
                           f"MILP {args.time_limit:g} s + heuristic {args.heuristic_time:g} s, seed {args.seed}")


if __name__ == "__main__":
    main()
