"""The computational improvements of the categorical tree MIP, in the shape of the paper's Table 2.

Günlük, Kalagnanam, Li, Menickelly & Scheinberg, "Optimal Decision Trees for Categorical Data via
Integer Programming" (J. Global Optimization 81, 2021) strengthen formulation (8) four ways, each
a switch of ``odtk.solve("categorical", …)`` listed in ``categorical.IMPROVEMENTS`` as (on, off):
the subtree inequalities (11)–(12) (``inequalities`` strong | weak), the anchors (13) (``anchors``),
the projection (14) (``projection``) and Proposition 3's relaxed integrality (``integrality``
relaxed | full). Every instance (dataset, topology) is solved with the configurations

    None             all four off
    +strong, +anchors, +projection, +relaxed       one improvement on, the others off
    All-strong, All-anchors, All-projection, All-relaxed   one off, the others on
    All              all four on (odtk's defaults)

on the whole dataset (binary classification: accuracy, class weight 1), one solver thread, one
time limit. Every dataset runs at ``depth-2`` (3 decision nodes, 4 leaves); the other topologies
(default ``depth-3``: 7 decision nodes, 8 leaves) only on ``--deep-datasets`` (default monk1,
monk3, hayes-roth, where "All" proves depth-3 in about 12 s; on monk2 and the larger datasets
even "All" reaches a 60 s limit, and running them all would take well over an hour).

Table: status, objective (correctly classified rows), gap, ``seconds`` (the solver's own run
time, without the Pyomo build and the hand-off), branch-and-bound nodes and the model's
variables / integer variables. Summary per configuration: instances proved optimal, the
geometric mean of the time ratio to "None" and to "All" over the instances both proved (times
below 0.01 s count as 0.01 s), total nodes, and total nodes over the instances every
configuration proved.

The summary also lists where an improvement hurt: the configuration without it ("None" for
"+x", "All-x" for "All") proved optimality and the one with it did not, or took longer.

Check: on every instance, all proven optima must agree, no incumbent may beat a proven optimum
and no bound may fall below it; otherwise a loud ``MISMATCH`` line and exit status 1.

Datasets (binary targets; the one class singled out is the positive class):

    monk1, monk2, monk3  flowoct/monk<k>-categorical as they are (6 categorical features).
    car            UCI car evaluation, "unacc" vs the rest, a 300-row stratified sample:
                   on all 1728 rows "None" reaches 60 s at depth-2 (see ``car``).
    balance-scale  uci/balance-scale, the four integer features as categories, "L" vs the rest.
    hayes-roth     uci/hayes-roth, the four integer features as categories, class 1 vs the rest.
    voting         uci/congressional-voting, 16 0/1 votes (groups of two values).
    breast-cancer  uci/breast-cancer-wisconsin, nine integer scores 1–10 kept numeric: odtk's
                   one-hot encoding makes each an ordered group of bins (the paper's section
                   4.4; at most 10 bins between deciles, here one bin per score).
    tic-tac-toe    flowoct/tic-tac-toe, the 27 one-hot columns back to 9 squares of b/o/x.

    python benchmarks/categorical_improvements.py [--quick] [--datasets monk1 car …]
        [--topologies depth-2 depth-3] [--deep-datasets monk1 monk3 hayes-roth | all]
        [--configs None All …] [--time-limit 60] [--solver highs] [--csv PATH]

The paper's own five configurations of Tables 2–3 (``configuration=`` of ``odtk.solve``; the
projection (14) on in all five): ``--configs Nothing No-Anchor No-Relax No-Strength All``.

The default run (9 datasets at depth-2 and 3 at depth-3, 10 configurations: 120 runs) takes
45–60 minutes. ``--quick`` (monk1 and monk3, depth-2, None / +strong / All, 10 s) takes seconds;
options given explicitly override its choices. The CSV has one row per run; read it with
``pd.read_csv(path, keep_default_na=False, na_values=[""])``, or pandas takes the configuration
"None" for a missing value.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import odtk
from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset
from odtk.exceptions import OdtkError, SolveError
from odtk.formulations.categorical import IMPROVEMENTS

SHORT = {"inequalities": "strong", "anchors": "anchors", "projection": "projection",
         "integrality": "relaxed"}  # the name of each improvement in the configurations
ON = {name: on for name, (on, off) in IMPROVEMENTS.items()}
OFF = {name: off for name, (on, off) in IMPROVEMENTS.items()}
CONFIGS: dict[str, dict[str, str]] = {
    "None": OFF,
    **{f"+{SHORT[name]}": {**OFF, name: ON[name]} for name in IMPROVEMENTS},
    **{f"All-{SHORT[name]}": {**ON, name: OFF[name]} for name in IMPROVEMENTS},
    "All": ON,
}
IMPROVEMENT_CONFIGS = list(CONFIGS)  # the default run
PAPER_CONFIGS = {"Nothing": "nothing", "No-Anchor": "no-anchor", "No-Relax": "no-relax",
                 "No-Strength": "no-strength"}  # §5.1's named ones ("All" is the same as above)
CONFIGS.update({label: {"configuration": name} for label, name in PAPER_CONFIGS.items()})
SAMPLE_SEED = 0
MIN_SECONDS = 0.01  # a floor for the time ratios: solver times of a few ms are noise
TOLERANCE = 1e-6
COLUMNS = ["dataset", "n", "groups", "values", "topology", "config", "status", "objective", "bound",
           "gap", "seconds", "nodes", "variables", "integer_variables", "constraints", "nonzeros",
           "build_time", "wall_time", "message"]
HEADER = (f"{'dataset':14} {'n':>4} {'groups':>6} {'topology':9} {'config':15} {'status':11} "
          f"{'objective':>9} {'gap':>7} {'seconds':>8} {'nodes':>8} {'vars/int':>13}")


# --------------------------------------------------------------------------- datasets
def relabel(dataset: Dataset, positive: str, names: dict[Any, str] | None = None) -> Dataset:
    """``dataset`` with its classes (codes replaced by ``names`` if given) recoded to
    ``positive`` vs ``not <positive>``; features kept with their kinds."""
    labels = dataset.target if names is None else dataset.target.map(names)
    if labels.isna().any():
        raise ValueError(f"{dataset.name}: class codes {sorted(set(dataset.target) - set(names))} unnamed")
    binary = labels.where(labels == positive, f"not {positive}")
    return Dataset(dataset.name, dataset.features, binary.rename("class"), dict(dataset.kinds))


def as_categories(name: str) -> Dataset:
    """The bundled dataset ``name`` with every feature declared categorical."""
    dataset = load_dataset(name)
    frame = dataset.features.assign(target=dataset.target)
    return from_dataframe(frame, "target", categorical=list(frame.columns[:-1]), name=name)


def from_one_hot(features: pd.DataFrame, separator: str, dropped: dict[str, str]) -> pd.DataFrame:
    """Categorical columns from one-hot columns named ``<feature><separator><value>`` (the value
    after the last separator); a row without a 1 in a group has the value ``dropped[feature]``
    (the level the encoding dropped)."""
    out = {}
    for feature in dict.fromkeys(column.rsplit(separator, 1)[0] for column in features.columns):
        group = [column for column in features.columns if column.rsplit(separator, 1)[0] == feature]
        values = np.array([column.rsplit(separator, 1)[1] for column in group] + [dropped.get(feature, "")])
        ones = features[group].to_numpy()
        if (ones.sum(axis=1) > 1).any() or (feature not in dropped and (ones.sum(axis=1) != 1).any()):
            raise ValueError(f"group {feature!r} is not one-hot")
        out[feature] = values[np.where(ones.any(axis=1), ones.argmax(axis=1), len(group))]
    return pd.DataFrame(out)


def stratified_sample(dataset: Dataset, rows: int, seed: int = SAMPLE_SEED) -> Dataset:
    """``rows`` rows drawn without replacement, each class in proportion, with a fixed seed."""
    rng = np.random.default_rng(seed)
    shares = dataset.target.value_counts(normalize=True)
    picks = [rng.choice(np.flatnonzero(dataset.target == label), round(share * rows), replace=False)
             for label, share in shares.items()]
    return dataset.subset(np.sort(np.concatenate(picks)))


def monk(k: int) -> Callable[[], tuple[Dataset, Any]]:
    """MONK's problem k (124 / 169 / 122 training rows), categorical, class 1 positive."""
    return lambda: (load_dataset(f"flowoct/monk{k}-categorical"), 1)


def car() -> tuple[Dataset, str]:
    """UCI car evaluation, "unacc" (1210 of 1728) vs acc/good/vgood, 300 rows.

    Not flowoct/car-evaluation-categorical: its safety column codes med and high alike (two
    values instead of three), so 175 feature vectors carry two classes. uci/car-evaluation is
    one-hot with one level per attribute dropped (buying and maint: high, doors and persons: 2,
    lug_boot: big, safety: high); the dropped levels are restored here. Classes: acc 384,
    good 69, unacc 1210, vgood 65. On all 1728 rows at
    depth-2, "None" stops at 60 s with a 16 % gap ("All" proves in 13 s), so a stratified sample
    of 300 rows (seed 0) is used.
    """
    dataset = load_dataset("uci/car-evaluation")
    features = from_one_hot(dataset.features, "_", {"buying": "high", "maint": "high", "doors": "2",
                                                    "persons": "2", "lug_boot": "big", "safety": "high"})
    frame = features.assign(target=dataset.target)
    full = from_dataframe(frame, "target", categorical=list(features.columns), name="uci/car-evaluation")
    return stratified_sample(relabel(full, "unacc"), 300), "unacc"


def balance_scale() -> tuple[Dataset, str]:
    """UCI balance scale: left weight, left distance, right weight, right distance (1–5, stored
    as 0–4) as categories; "L" (288 of 625: the scale tips to the left) vs B and R, checked
    against the rule left weight × distance vs right's."""
    dataset = as_categories("uci/balance-scale")
    x = dataset.features.to_numpy(dtype=int) + 1
    tips = np.sign(x[:, 2] * x[:, 3] - x[:, 0] * x[:, 1]) + 1  # 0 left, 1 balanced, 2 right
    if not (tips == dataset.target.map({"L": 0, "B": 1, "R": 2}).to_numpy()).all():
        raise ValueError("uci/balance-scale: the classes do not follow the torque rule")
    return relabel(dataset, "L"), "L"


def hayes_roth() -> tuple[Dataset, str]:
    """UCI Hayes-Roth (160 rows: the training and test files): hobby, age, education and marital
    status (integer codes) as categories; class 1 (65 rows) vs 2 and 3 (stored as codes 0, 1, 2)."""
    dataset = as_categories("uci/hayes-roth")
    return relabel(dataset, "1", {0: "1", 1: "2", 2: "3"}), "1"


def voting() -> tuple[Dataset, str]:
    """UCI congressional voting records (435 rows, 16 yes/no votes; democrat 267, republican
    168): every vote a group of two values, republican positive."""
    dataset = load_dataset("uci/congressional-voting")
    return relabel(dataset, "republican"), "republican"


def breast_cancer() -> tuple[Dataset, str]:
    """UCI breast cancer Wisconsin (original; 699 rows, nine cytology scores 1–10 stored as 0–9,
    benign 458, malignant 241): numeric, so odtk's one-hot encoding makes every score an ordered
    group of bins (section 4.4; with ten values, one bin each); malignant positive."""
    dataset = load_dataset("uci/breast-cancer-wisconsin")
    return relabel(dataset, "malignant"), "malignant"


def tic_tac_toe() -> tuple[Dataset, str]:
    """UCI tic-tac-toe endgame (958 boards; 1 = "x wins", 626 rows): the nine squares of
    flowoct/tic-tac-toe, one-hot as V<square>.1/.2/.3 = blank/o/x (by the UCI value counts of
    the top-left square: b 205, o 335, x 418), as categories."""
    dataset = load_dataset("flowoct/tic-tac-toe")
    features = from_one_hot(dataset.features, ".", {})
    features = features.replace({"1": "b", "2": "o", "3": "x"})
    frame = features.assign(target=dataset.target)
    dataset = from_dataframe(frame, "target", categorical=list(features.columns), name="flowoct/tic-tac-toe")
    return relabel(dataset, "x wins", {0: "x loses", 1: "x wins"}), "x wins"


DATASETS: dict[str, Callable[[], tuple[Dataset, Any]]] = {
    "monk1": monk(1), "monk2": monk(2), "monk3": monk(3), "hayes-roth": hayes_roth, "car": car,
    "balance-scale": balance_scale, "voting": voting, "breast-cancer": breast_cancer,
    "tic-tac-toe": tic_tac_toe,
}


def prepared(name: str) -> tuple[Dataset, Any, FeatureEncoder]:
    """The dataset, its positive class and odtk's one-hot encoding; exit unless two classes."""
    dataset, positive = DATASETS[name]()
    if len(dataset.classes) != 2 or positive not in dataset.classes:
        sys.exit(f"error: {name} has classes {dataset.classes}, not two with {positive!r}")
    return dataset, positive, FeatureEncoder(mode="onehot").fit(dataset)


# --------------------------------------------------------------------------- arguments
SHALLOW = "depth-2"  # every dataset runs at this topology; the others only on --deep-datasets
DEFAULTS = {"datasets": list(DATASETS), "topologies": [SHALLOW, "depth-3"], "configs": IMPROVEMENT_CONFIGS,
            "time_limit": 60.0, "deep_datasets": ["monk1", "monk3", "hayes-roth"]}
QUICK = {**DEFAULTS, "datasets": ["monk1", "monk3"], "topologies": [SHALLOW],
         "configs": ["None", "+strong", "All"], "time_limit": 10.0}


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The options; ``--quick`` changes the defaults of those not given."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="two datasets, depth-2, three configurations")
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS))
    parser.add_argument("--topologies", nargs="+", help="depth-2, depth-2.5, depth-3, imbalanced")
    parser.add_argument("--deep-datasets", nargs="+", choices=[*DATASETS, "all"],
                        help=f"the datasets also run at the topologies other than {SHALLOW} "
                             "(default: monk1 monk3 hayes-roth; all: every dataset)")
    parser.add_argument("--configs", nargs="+", choices=list(CONFIGS))
    parser.add_argument("--time-limit", type=float, help="solver seconds per run")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    parser.set_defaults(**(QUICK if "--quick" in argv else DEFAULTS))
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- runs
def one_line(exc: BaseException) -> str:
    """The exception's type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run(dataset: Dataset, positive: Any, topology: str, config: str,
        args: argparse.Namespace) -> dict[str, Any]:
    """One ``odtk.solve`` as a row; odtk errors (and crashes) become a status and a message."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not proven optimal" is in the status column
            result = odtk.solve("categorical", dataset, skeleton=topology, solver=args.solver,
                                time_limit=args.time_limit, threads=1, seed=0,
                                positive_class=positive, **CONFIGS[config])
    except SolveError as exc:
        return {"status": "no solution", "wall_time": time.perf_counter() - start, "message": one_line(exc)}
    except Exception as exc:  # noqa: BLE001 — a benchmark records crashes and goes on
        crash = "" if isinstance(exc, OdtkError) else "crash "
        return {"status": "error", "wall_time": time.perf_counter() - start, "message": crash + one_line(exc)}
    size = result.size
    return {"status": result.termination, "objective": result.objective, "bound": result.bound,
            "gap": result.gap, "seconds": result.solve_time, "nodes": result.steps["milp"]["nodes"],
            "variables": size.variables, "integer_variables": size.integer_variables,
            "constraints": size.constraints, "nonzeros": size.nonzeros,
            "build_time": result.build_time, "wall_time": result.wall_time, "message": ""}


def fmt(value: Any, spec: str) -> str:
    """``value`` formatted with ``spec``; a right-aligned '-' for missing values."""
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    return f"{'-':>{int(spec.split('.')[0].rstrip('dfg') or 1)}}" if missing else format(value, spec)


def print_row(row: dict[str, Any]) -> None:
    gap = None if row.get("gap") is None else 100 * row["gap"]
    size = f"{row['variables']}/{row['integer_variables']}" if row.get("variables") is not None else "-"
    note = f"  [{row['message']}]" if row["message"] else ""
    print(f"{row['dataset']:14} {row['n']:>4} {row['groups']:>6} {row['topology']:9} {row['config']:15} "
          f"{row['status']:11} {fmt(row.get('objective'), '9.0f')} {fmt(gap, '6.2f')}"
          f"{' ' if gap is None else '%'} {fmt(row.get('seconds'), '8.2f')} {fmt(row.get('nodes'), '8d')} "
          f"{size:>13}{note}", flush=True)


def deep(name: str, args: argparse.Namespace) -> bool:
    """Whether dataset ``name`` also runs at the topologies other than SHALLOW."""
    return "all" in (args.deep_datasets or []) or name in (args.deep_datasets or [])


def benchmark(args: argparse.Namespace) -> pd.DataFrame:
    """Every dataset × topology × configuration, a row each (and the CSV kept up to date)."""
    rows: list[dict[str, Any]] = []
    print(HEADER)
    for name in args.datasets:
        dataset, positive, encoder = prepared(name)
        base = {"dataset": name, "n": dataset.n_rows, "groups": len(encoder.groups_),
                "values": len(encoder.columns_)}
        for topology in [t for t in args.topologies if t == SHALLOW or deep(name, args)]:
            for config in args.configs:
                row = {**base, "topology": topology, "config": config,
                       **run(dataset, positive, topology, config, args)}
                print_row(row)
                rows.append(row)
                if args.csv:
                    pd.DataFrame(rows).reindex(columns=COLUMNS).to_csv(args.csv, index=False)
        print(flush=True)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


# --------------------------------------------------------------------------- checks and summary
def check_agreement(table: pd.DataFrame) -> int:
    """Print MISMATCH lines where proven optima differ, an incumbent beats one or a bound
    falls below one; return their number."""
    mismatches = 0
    for (name, topology), group in table.groupby(["dataset", "topology"], sort=False):
        optimal = group[group.status == "optimal"]
        if optimal.empty:
            continue
        best = optimal.objective.max()
        tol = TOLERANCE * max(1.0, abs(best))
        problems = []
        if optimal.objective.min() < best - tol:
            problems.append("proven optima differ: " + " ".join(
                f"{r.config}={r.objective:.6g}" for r in optimal.itertuples()))
        problems += [f"{r.config}: incumbent {r.objective:.6g} beats the proven optimum {best:.6g}"
                     for r in group.itertuples() if pd.notna(r.objective) and r.objective > best + tol]
        problems += [f"{r.config}: bound {r.bound:.6g} is below the proven optimum {best:.6g}"
                     for r in group.itertuples() if pd.notna(r.bound) and r.bound < best - tol]
        for problem in problems:
            print(f"!!! MISMATCH {name} {topology}: {problem}")
        mismatches += len(problems)
    return mismatches


def geomean_ratio(table: pd.DataFrame, config: str, reference: str) -> tuple[float, int]:
    """Geometric mean of config's time / reference's over the instances both proved, and their number."""
    proved = table[table.status == "optimal"].assign(seconds=lambda t: t.seconds.clip(lower=MIN_SECONDS))
    times = proved.pivot_table(index=["dataset", "topology"], columns="config", values="seconds")
    if config not in times or reference not in times:
        return math.nan, 0
    both = pd.DataFrame({"mine": times[config], "theirs": times[reference]}).dropna()
    return (float(np.exp(np.log(both.mine / both.theirs).mean())) if len(both) else math.nan,
            len(both))


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: runs, proved optimal, errors, time ratios to None and All, nodes."""
    instances = table.groupby(["dataset", "topology"]).ngroups
    proved_by_all = table.groupby(["dataset", "topology"]).status.apply(lambda s: (s == "optimal").all()
                                                                        and len(s) == table.config.nunique())
    common = table.set_index(["dataset", "topology"]).index.isin(proved_by_all[proved_by_all].index)
    rows = []
    for config in table.config.unique():
        runs = table[table.config == config]
        to_none, n_none = geomean_ratio(table, config, "None")
        to_all, n_all = geomean_ratio(table, config, "All")
        rows.append({"config": config, "runs": len(runs), "optimal": int((runs.status == "optimal").sum()),
                     "errors": int(runs.status.isin(["error", "no solution"]).sum()),
                     "vs_None": to_none, "n_None": n_none, "vs_All": to_all, "n_All": n_all,
                     "nodes": int(runs.nodes.fillna(0).sum()),
                     "nodes_common": int(table[common & (table.config == config)].nodes.fillna(0).sum())})
    summary = pd.DataFrame(rows).set_index("config")
    summary.attrs["instances"], summary.attrs["common"] = instances, int(proved_by_all.sum())
    return summary


def slower(table: pd.DataFrame) -> list[str]:
    """Where adding an improvement to None, or keeping it in All, hurt: the configuration
    without it proved optimality and the one with it did not, or took more than 10 % and
    0.1 s longer."""
    runs = table.set_index(["dataset", "topology", "config"])
    found = []
    for name in IMPROVEMENTS:
        short = SHORT[name]
        for with_it, without in ((f"+{short}", "None"), ("All", f"All-{short}")):
            for (dataset, topology), group in table.groupby(["dataset", "topology"], sort=False):
                if not {with_it, without} <= set(group.config):
                    continue
                a, b = runs.loc[(dataset, topology, with_it)], runs.loc[(dataset, topology, without)]
                if b.status != "optimal" or (a.status == "optimal" and (
                        a.seconds <= 1.1 * b.seconds or a.seconds <= b.seconds + 0.1)):
                    continue
                found.append(f"{dataset} {topology}: {with_it} {a.status} {a.seconds:.2f} s "
                             f"vs {without} {b.status} {b.seconds:.2f} s")
    return found


# --------------------------------------------------------------------------- main
def plan(args: argparse.Namespace) -> str:
    """The first line: solver, limit, what None and All mean, where the deeper topologies run."""
    line = (f"solver {args.solver}, 1 thread, time limit {args.time_limit:g} s; "
            f"None = {' '.join(OFF.values())}, All = {' '.join(ON.values())}")
    deeper = [topology for topology in args.topologies if topology != SHALLOW]
    if deeper:
        names = [name for name in args.datasets if deep(name, args)]
        line += f"; {' '.join(deeper)} on {' '.join(names) or 'no dataset'}"
    return line


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.solver not in odtk.available_solvers():
        sys.exit(f"error: solver {args.solver} not available; "
                 f"installed: {', '.join(odtk.available_solvers())}")
    start = time.perf_counter()
    print(plan(args) + "\n")
    table = benchmark(args)
    print(f"{len(table)} runs in {time.perf_counter() - start:.0f} s"
          + (f"; table: {args.csv}" if args.csv else ""))
    mismatches = check_agreement(table)
    print(f"objectives: {'all proven optima agree' if not mismatches else f'{mismatches} MISMATCH(ES)'}")
    summary = summarize(table)
    print(f"\n{summary.attrs['instances']} instances, {summary.attrs['common']} proved by every "
          "configuration (nodes_common: their nodes); vs_None / vs_All: geometric-mean time ratio "
          "over the n_None / n_All instances both proved\n")
    print(summary.to_string(float_format=lambda v: f"{v:.2f}"))
    worse = slower(table)
    print("\nan improvement hurt (the run without it proved optimality, the run with it did not or "
          f"took >10 % and >0.1 s longer): {len(worse)}" + "".join(f"\n  {line}" for line in worse))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
