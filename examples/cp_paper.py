"""CP search vs. DL8 and BinOCT: depth-limited optimal trees on the DL8 / CP4IM datasets, as a campaign.

Reproduces the comparison of Verhaeghe, Nijssen, Pesant, Quimper & Schaus, "Learning optimal
decision trees using constraint programming" (Constraints 25, 2020; the extended abstract in
the repository's papers): on binarised benchmark datasets (bundled as ``binary/``, the DL8 /
CP4IM collection), a tree of depth at most d with the fewest training misclassifications, on
the whole dataset (in-sample: no split). Two tables:

* **Methods**: the paper's search (odtk's engine with ``search="paper"``: its AND/OR search,
  cache and bounds, nothing odtk adds), odtk's own search (``odtk.solve("cp")``: the paper's
  plus the bounds, counting and ordering its module docstring lists), the paper's comparators
  DL8 and DL8.5 through pydl8.5 (DL8.5 is DL8's maintained successor; ``dl8`` is pydl8.5 with
  its upper bounds, similarity bounds, depth-2 counting and dynamic branching off: caching
  alone, as DL8) and, with ``--milps binoct``, BinOCT at λ = 0 without a warm start (off in the
  quick mode: HiGHS proves few of these instances within minutes; ``flowoct`` too, a MILP the
  paper did not run). pydl8.5 is optional: without it one line says how to install it and its
  columns are left out.
* **Ablation**: odtk's search, the paper's, the paper's without its cache (``cache=False``) and
  without its bounds (``bounds=False``: every child solved to optimality). The proven errors
  must be equal across variants; the search nodes (OR nodes expanded, deterministic) and CPU
  seconds show what each ingredient does.

Every odtk solve (the four search variants and the MILPs) is a run of an ``odtk experiment``
campaign (grid ``split: [1, 0, 0]``: in-sample), each in its own process, recorded in a results
database as it finishes, run by ``--jobs`` local processes or on a Dask cluster (``--executor
dask --scheduler ADDRESS``). Each invocation starts a new database
(``benchmarks/results/cp_paper-YYYYmmdd-HHMMSS.sqlite``, or ``--db``); ``--resume`` reuses one
(``--db``, else the newest default) for the runs made by the same odtk code, options and solver
version, so that a killed run resumes; the script says how many cells came from earlier runs.
pydl8.5 is a peer, not odtk: its solves run in this script's process, one after the other, after
the campaign; their cells are kept beside the database (``DB.pydl85.json``) and reused with
``--resume`` when made by the same pydl8.5 version and time limit.

Cells: ``*_err`` training errors, ``*_st`` status (``optimal`` proven; ``time_limit`` not;
``failed`` no model, the reason listed below the tables), ``*_gap`` the relative gap (0 when
proven), ``*_cpu`` CPU seconds (a CP search's ``cpu_seconds`` of the row's steps: the
process's CPU during the search; a MILP's ``cpu_time`` of the row: the solve, its solver's
processes included; pydl8.5's: this process's during ``fit``), ``*_nodes`` OR nodes of the CP
search (``search_nodes`` of the steps). numba compiles the CP kernels once per machine and
caches them on disk (``cache=True``); the script compiles them in this process before the
campaign (on Dask, in every worker too), so that no run compiles them; each run's process
still imports numba and loads the kernels from its cache, 0.5-1 s of CPU (measured per run: the
rows' ``cpu_time`` less ``cpu_seconds``, printed above the tables), as much as a whole depth-3
search of the quick mode, which is why no cell counts it. Per-solve time limits are wall-clock
and generous (``--time-limit``), so that load on the machine does not change a status; they
count from the start of ``odtk.solve`` in the run's process, the numba load included, so a
limit of a few seconds on a loaded machine can end a search before it starts. ``agree`` is
"NO" when a method's proven optimum differs from another's, or a proven bound is beaten; the
script then exits with status 1. The last lines give one verdict per claim of the paper's
section 5.

``--full`` is the paper's protocol as far as the extended abstract gives it: the 23 CP4IM
datasets bundled in ``binary/`` (its ``letter`` is not bundled; compas and fico are MurTree's,
not the paper's), depths 2, 3 and 4 and 600 s per solve (the abstract names neither; override
with ``--depths`` and ``--time-limit``), BinOCT on ``--solver``, DL8 and DL8.5. On a cluster:
start ``dask scheduler`` and ``dask worker tcp://HOST:8786 --nthreads 1`` on each machine (odtk
and pydl8.5 installed; one thread per worker: each run is one process on one core), then

    python examples/cp_paper.py --full --executor dask --scheduler tcp://HOST:8786 --db cp_full.sqlite

and after a kill the same command with ``--resume``. Its cost, estimated: about 18 CPU-hours
(±50 %) for 69 instances × 5 odtk runs and 2 pydl8.5 solves: BinOCT about 10 h (HiGHS did not
prove hepatitis at depth 2 in 20 s; taken as 600 s on all but ~10 depth-2 instances), the
paper's search and each of its two ablations about 2 h, DL8 about 1.5 h, odtk's search and
DL8.5 minutes. How: the paper's search measured on all 23 datasets at depths 2-3 (72 s of CPU
for the 19 proven at depth 3; ionosphere, pendigits, splice-1 and vehicle not proven in 120 s)
and at depth 4 on the 7 smallest (15-45x their depth-3 CPU), extrapolated with 35x and capped
at 600 s; the ablations and DL8 as the quick mode's ratios to it. pydl8.5's share (~1.7 h) runs
in the script's process after the campaign; the rest spreads over the Dask workers.

Run:  python examples/cp_paper.py                       # quick: about 3 min of CPU, every cell proven
      python examples/cp_paper.py --resume              # reuse the newest default database
      python examples/cp_paper.py --depths 2 3 4 --datasets binary/anneal binary/vote --milps binoct flowoct
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import time

import numpy as np

import odtk
from _common import (add_campaign_options, add_database_options, print_table, quiet, results_database, reuse_line,
                     run_grid, stopped)
from cp_claims import (COLUMNS, PYDL85_MISSING, VARIANTS, claims, failures, instance_rows, outside_search,
                       project)
from odtk.datasets import Dataset, list_datasets, load_dataset
from odtk.exceptions import OdtkError
from odtk.experiments.grid import Grid, parse_grid
from odtk.experiments.store import ResultStore
from odtk.solvers import require_solver

QUICK = ["binary/zoo-1", "binary/hepatitis", "binary/lymph", "binary/vote", "binary/heart-cleveland",
         "binary/tic-tac-toe", "binary/anneal"]
NOT_CP4IM = ("binary/compas", "binary/compas-binary", "binary/fico-binary")  # MurTree's, not the paper's
FULL = {"depths": [2, 3, 4], "time_limit": 600.0, "milps": ["binoct"]}
DL8_ALONE = {"use_ub": False, "similar_lb": False, "dynamic_branch": False, "similar_for_branching": False,
             "depth_two_special_algo": False}  # pydl8.5 reduced to DL8: caching, no bounds
PEERS = {"dl8": DL8_ALONE, "dl85": {}}
TINY = (np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 2, dtype=bool), np.array([0, 1, 1, 0] * 2))


# --------------------------------------------------------------------------- numba's kernels
def compile_seconds() -> float:
    """CPU seconds of numba compiling the CP kernels into its on-disk cache (first run on a
    machine) or loading them from it, and of odtk's first solve's imports, in this process."""
    began = time.process_time()
    odtk.solve("cp", TINY, depth=3)
    return time.process_time() - began


def compile_on_workers(scheduler: str) -> None:
    """Compile (or load) the CP kernels on every Dask worker, so that no run compiles them."""
    from distributed import Client

    with Client(scheduler, timeout=30) as client:
        client.run(odtk.solve, "cp", TINY, depth=3)


# --------------------------------------------------------------------------- the campaign
def grid(args: argparse.Namespace) -> Grid:
    """The campaign: every CP search variant and MILP on every dataset (whole: in-sample) and depth."""
    methods = [{"model": "cp", "depth": args.depths, "options": options} for options in VARIANTS.values()]
    methods += [{"model": milp, "depth": args.depths, "settings": {"warm_start": None}} for milp in args.milps]
    return parse_grid({"name": "cp-paper", "datasets": args.datasets, "seeds": [0], "split": [1, 0, 0],
                       "solvers": [args.solver], "time_limit": args.time_limit, "threads": 1,
                       "methods": methods, "selection": {"retrain": False}}, "cp_paper")


# --------------------------------------------------------------------------- pydl8.5, a peer
def has_pydl85() -> bool:
    try:
        import pydl85  # noqa: F401
    except ImportError:
        return False
    return True


def dl85_cells(data: Dataset, depth: int, options: dict, time_limit: float) -> dict:
    """pydl8.5 (DL8.5, or DL8 with ``DL8_ALONE``): errors, status, gap, CPU seconds, and
    (errors, proven lower bound) for the agreement check."""
    from pydl85 import DL85Classifier

    X, y = data.features.to_numpy().astype(np.int32), data.target.to_numpy()
    model = DL85Classifier(max_depth=depth, time_limit=int(time_limit), **options)
    began = time.process_time()
    model.fit(X, y)
    errors = int(round(model.error_))
    return {"err": errors, "st": "time_limit" if model.timeout_ else "optimal",
            "gap": float("nan") if model.timeout_ else 0.0, "cpu": time.process_time() - began,
            "check": [errors, 0 if model.timeout_ else errors]}


def peer_cells(args: argparse.Namespace) -> dict[tuple[str, int], dict]:
    """DL8 and DL8.5 on every instance, in this process; cells recorded in ``DB.pydl85.json``
    as they finish and reused from there with ``--resume``."""
    path = args.db.with_name(args.db.name + ".pydl85.json")
    known = json.loads(path.read_text()) if args.resume and path.exists() else {}
    version = importlib.metadata.version("pydl8.5")
    cells, args.peer_counts = {}, [0, 0]
    for name in args.datasets:
        data = None
        for depth in args.depths:
            for peer, options in PEERS.items():
                key = f"{name} depth {depth} {peer} limit {args.time_limit:g} s pydl8.5 {version}"
                args.peer_counts[0] += 1
                if key not in known:
                    data = data or load_dataset(name)
                    known[key] = dl85_cells(data, depth, options, args.time_limit)
                    args.peer_counts[1] += 1
                    path.write_text(json.dumps(known, indent=0))
                cells.setdefault((name, depth), {})[peer] = known[key]
    return cells


# --------------------------------------------------------------------------- script
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="the paper's protocol: every bundled CP4IM dataset, depths 2-4, 600 s, BinOCT")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="bundled binary datasets (default: seven small ones; --full: the 23 CP4IM sets)")
    parser.add_argument("--depths", nargs="+", type=int, default=None,
                        help="maximum tree depths (default 2 3; --full: 2 3 4)")
    parser.add_argument("--milps", nargs="*", default=None, choices=["binoct", "flowoct", "benders", "oct"],
                        help="MILP formulations to compare (BinOCT is the paper's; default none: on HiGHS "
                             "it proves few of these instances within minutes; --full: binoct)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="wall-clock seconds per solve (default 600: generous, so that load does not "
                             "change a status; --full: 600, the paper's)")
    parser.add_argument("--solver", default="highs", help="MILP solver: highs, cbc, gurobi or cplex")
    add_campaign_options(parser)
    add_database_options(parser, "cp_paper", "solves")
    args = parser.parse_args(argv)
    cp4im = [info.name for info in list_datasets() if info.collection == "binary" and info.name not in NOT_CP4IM]
    args.datasets = args.datasets or (cp4im if args.full else QUICK)
    args.depths = args.depths or (FULL["depths"] if args.full else [2, 3])
    args.milps = args.milps if args.milps is not None else (FULL["milps"] if args.full else [])
    args.time_limit = args.time_limit or FULL["time_limit"]
    args.counts, args.recorded = [], 0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet()
    dl85 = has_pydl85()
    try:
        if args.milps:
            require_solver(args.solver)
        args.db = results_database(args.db, args.resume, "cp_paper")
        compiled = compile_seconds()
        if args.executor == "dask" and args.scheduler:  # without one, the campaign says what is missing
            compile_on_workers(args.scheduler)
        frame = run_grid(grid(args), ResultStore(args.db), args)
        peers = peer_cells(args) if dl85 else {}
    except (OdtkError, OSError, KeyboardInterrupt) as exc:
        return stopped(exc, args, "solves")
    print(f"Verhaeghe et al., CP search — odtk {odtk.__version__}; datasets {' '.join(args.datasets)}; "
          f"depths {' '.join(map(str, args.depths))}; {args.time_limit:g} s (wall) per solve; in-sample")
    for name, report in args.counts:
        computed = report.done + report.failed
        print(f"campaign {name}: {reuse_line(args.db, report.planned, computed, report.other_version, 'solves')}")
    if dl85:
        total, computed = args.peer_counts
        print(f"pydl8.5 (in this process): {reuse_line(args.db, total, computed, 0, 'solves')}")
    else:
        print(PYDL85_MISSING)
    print(f"numba compiled or loaded the CP kernels in this process in {compiled:.1f} s of CPU, before the "
          f"campaign; CPU of the CP runs outside their search (numba's import and cached kernels' load, encoding), "
          f"counted in no cell: {outside_search(frame)}\n")
    features = {info.name: info.n_features for info in list_datasets()}
    order = [(name, depth) for name in args.datasets for depth in args.depths]
    rows = instance_rows(frame, peers, features, order)
    methods = ["paper", "odtk", *(PEERS if dl85 else []), *args.milps]
    print_table(project(rows, methods, ("err", "st", "gap", "cpu")),
                f"Methods: training errors, status, gap and CPU seconds, {args.time_limit:g} s (wall) per solve\n"
                f"{COLUMNS}")
    print()
    print_table(project(rows, list(VARIANTS), ("err", "st", "gap", "cpu", "nodes")),
                "Ablation: odtk's search, the paper's, the paper's without its cache, without its bounds")
    print()
    print("\n".join(failures(frame) or ["failed solves: none"]))
    print()
    for line in claims(rows, args, dl85):
        print(line)
    return 1 if any(row["agree"] == "NO" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
