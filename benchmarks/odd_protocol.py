"""ODD on the paper's protocol: how often the MILP proves or improves the heuristic's diagram.

Florio et al. (Table 1) train on 50 % of each dataset, run the constructive heuristic for 60 s
(step 1), then the MILP for 600 s on one thread with the heuristic's diagram as start and
cutoff (step 2), and count per skeleton and α the runs (54 datasets × 5 seeds × univariate and
multivariate splits = 540) where the MILP proved the optimum, and where it only improved the
heuristic's objective. This script runs that protocol with odtk on a fixed set of small
datasets (at most 200 training rows), skeleton I (1-2-4-8) and its tree, and prints odtk's
shares beside the paper's.

Each solver configuration (``--configs``) runs every instance in the same run, one after the
other: ``defaults`` is the solver with no parameter of odtk's registry set for ODD, ``registry``
is odtk's default (the ``settings`` of ``solvers.yaml`` for ODD), and ``NAME:KEY=VALUE,…`` sets
the solver's own parameters KEY for ODD (e.g. ``ipm:mip_lp_solver=ipm``). Per run: status, heuristic
objective, MILP objective and bound, B&B nodes (a run that ends at 0 nodes spent its budget in
presolve and the root) and CPU seconds of odtk's process and its solver process. Exit status 1
when two configurations' proven optima differ.

    python benchmarks/odd_protocol.py [--quick] [--solver highs] [--datasets …] [--alphas 0.01 0.1 1]
        [--seeds 0 1] [--splits multivariate univariate] [--heuristic-time 60] [--time-limit 600]
        [--configs defaults registry NAME:KEY=VALUE,…] [--csv PATH]

The full protocol (7 datasets × 2 skeletons × 3 α × 2 seeds × 2 split types × 2 configurations,
660 s each) needs about 50 hours of one core; ``--quick`` (3 datasets, skeleton I, α ∈ {0.1, 1},
seed 0, multivariate, 5 s + 60 s) about 15 minutes.
"""
from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from sklearn.model_selection import train_test_split

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import OdtkWarning

DATASETS = ["uci/iris", "uci/fertility-diagnosis", "uci/habermans-survival", "uci/hayes-roth",
            "uci/hepatitis", "uci/echocardiogram", "uci/wine"]
QUICK = {"datasets": ["uci/iris", "uci/hayes-roth", "uci/habermans-survival"], "alphas": [0.1, 1.0], "seeds": [0],
         "splits": ["multivariate"], "skeletons": ["I"], "heuristic_time": 5.0, "time_limit": 60.0}
SKELETONS = {"I": ("1-2-4-8", False), "I (tree)": ("1-2-4-8", True)}
# Table 1 of the paper: runs out of 540 that proved the optimum / only improved the heuristic's diagram
PAPER = {("I", 0.01): (152, 35), ("I", 0.1): (155, 91), ("I", 0.2): (162, 134), ("I", 0.5): (179, 202),
         ("I", 1.0): (225, 202), ("I (tree)", 0.01): (155, 30), ("I (tree)", 0.1): (158, 98),
         ("I (tree)", 0.2): (163, 131), ("I (tree)", 0.5): (177, 208), ("I (tree)", 1.0): (225, 207)}
PAPER_RUNS = 540
BUILD_SECONDS = 5.0  # added to odtk's budget for encoding, building and checks: the MILP gets the rest
TOLERANCE = 1e-6


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small version (see the module's docstring)")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--datasets", nargs="+")
    parser.add_argument("--skeletons", nargs="+", choices=list(SKELETONS))
    parser.add_argument("--alphas", nargs="+", type=float)
    parser.add_argument("--seeds", nargs="+", type=int)
    parser.add_argument("--splits", nargs="+", choices=["multivariate", "univariate"])
    parser.add_argument("--heuristic-time", type=float)
    parser.add_argument("--time-limit", type=float, help="MILP seconds (the paper: 600)")
    parser.add_argument("--configs", nargs="+", default=["defaults", "registry"],
                        help="defaults, registry, or NAME:KEY=VALUE,… (the solver's parameters for ODD)")
    parser.add_argument("--csv", default=None, help="write the table here too")
    args = parser.parse_args(argv)
    full = {"datasets": DATASETS, "alphas": [0.01, 0.1, 1.0], "seeds": [0, 1], "splits": ["multivariate", "univariate"],
            "skeletons": list(SKELETONS), "heuristic_time": 60.0, "time_limit": 600.0}
    for key, value in (QUICK if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def training_rows(name: str, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The paper's training half of dataset ``name`` (stratified, seeded)."""
    dataset = load_dataset(name)
    X, y = dataset.features, np.asarray(dataset.target)
    counts = pd.Series(y).value_counts()
    stratify = y if counts.min() >= 2 else None
    X_train, _, y_train, _ = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=stratify)
    return X_train, y_train


def registry_file(folder: str, solver: str, config: str) -> str | None:
    """The registry of configuration ``config`` written into ``folder`` (None: the bundled one)."""
    if config == "registry":
        return None
    name, _, given = config.partition(":")
    if config != "defaults" and not given:
        raise SystemExit(f"--configs: {config!r} is not defaults, registry or NAME:KEY=VALUE,…")
    entries = yaml.safe_load((Path(odtk.__file__).parent / "solvers.yaml").read_text())
    for entry in entries.values():
        entry.get("settings", {}).pop("odd", None)
    if given:
        pairs = dict(pair.split("=", 1) for pair in given.split(","))
        entries[solver].setdefault("settings", {})["odd"] = {key: yaml.safe_load(value) for key, value in pairs.items()}
    path = os.path.join(folder, f"{name}.yaml")
    Path(path).write_text(yaml.safe_dump(entries))
    return path


def cpu_seconds() -> float:
    """CPU time of this process and of the solver processes it waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_run(case: dict, args: argparse.Namespace, registry: str | None) -> dict:
    """Step 1 (heuristic alone) then steps 1–2 (heuristic start and cutoff, MILP) on one case."""
    X, y = training_rows(case["dataset"], case["seed"])
    skeleton, tree = SKELETONS[case["skeleton"]]
    shape = dict(skeleton=skeleton, tree=tree, alpha=case["alpha"], univariate=case["split"] == "univariate",
                 seed=case["seed"], threads=1, heuristic_time=args.heuristic_time)
    if registry is None:
        os.environ.pop("ODTK_SOLVERS", None)
    else:
        os.environ["ODTK_SOLVERS"] = registry
    began = cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OdtkWarning)
        result = odtk.solve("odd", (X, y), solver=args.solver, strategy="both",
                            time_limit=args.heuristic_time + args.time_limit + BUILD_SECONDS, **shape)
    heuristic = result.steps.get("heuristic", {}).get("objective")
    milp = result.steps.get("milp", {})
    proven = result.termination == "optimal"
    improved = heuristic is not None and result.objective < heuristic - TOLERANCE
    return {**case, "rows": len(y), "status": result.termination, "heuristic": heuristic,
            "objective": result.objective, "bound": result.bound, "nodes": milp.get("nodes"),
            "proven": proven, "improved_only": improved and not proven, "cpu": round(cpu_seconds() - began, 1)}


def cases(args: argparse.Namespace) -> list[dict]:
    return [{"dataset": d, "skeleton": s, "alpha": a, "split": split, "seed": seed}
            for d in args.datasets for s in args.skeletons for a in args.alphas for split in args.splits
            for seed in args.seeds]


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration, skeleton and α: odtk's shares proven / improved beside the paper's."""
    rows = []
    for (config, skeleton, alpha), group in table.groupby(["config", "skeleton", "alpha"]):
        paper = PAPER.get((skeleton, alpha))
        rows.append({"config": config, "skeleton": skeleton, "alpha": alpha, "runs": len(group),
                     "proven": f"{group.proven.mean():.0%}", "improved only": f"{group.improved_only.mean():.0%}",
                     "0 nodes": f"{(group.nodes.fillna(0) == 0).mean():.0%}",
                     "paper proven": f"{paper[0] / PAPER_RUNS:.0%}" if paper else "–",
                     "paper improved only": f"{paper[1] / PAPER_RUNS:.0%}" if paper else "–",
                     "cpu (geo. mean s)": round(math.exp(np.log(group.cpu.clip(lower=0.1)).mean()), 1)})
    return pd.DataFrame(rows)


def mismatches(table: pd.DataFrame) -> list[str]:
    """Instances whose proven optima differ between configurations."""
    found = []
    keys = ["dataset", "skeleton", "alpha", "split", "seed"]
    for key, group in table[table.proven].groupby(keys):
        if group.objective.max() - group.objective.min() > TOLERANCE:
            found.append(f"MISMATCH {dict(zip(keys, key))}: proven optima {sorted(group.objective)}")
    return found


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    records = []
    with tempfile.TemporaryDirectory(prefix="odtk-odd-protocol-") as folder:
        registries = {config: registry_file(folder, args.solver, config) for config in args.configs}
        for n, case in enumerate(cases(args)):
            order = args.configs if n % 2 == 0 else list(reversed(args.configs))  # alternate who runs first
            for config in order:
                began = time.perf_counter()
                label = config.partition(":")[0]
                record = {"config": label, **one_run(case, args, registries[config])}
                records.append(record)
                print(f"{label:9} {case['dataset']:28} {case['skeleton']:8} α={case['alpha']:<5} {case['split'][:5]} "
                      f"seed {case['seed']}: {record['status']:10} heuristic {record['heuristic']:.4f} → "
                      f"{record['objective']:.4f} "
                      f"bound {record['bound'] if record['bound'] is not None else float('nan'):.4f} "
                      f"nodes {record['nodes']} cpu {record['cpu']} s (wall {time.perf_counter() - began:.0f} s)",
                      flush=True)
    table = pd.DataFrame(records)
    if args.csv:
        table.to_csv(args.csv, index=False)
    print()
    print(summary(table).to_string(index=False))
    problems = mismatches(table)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
