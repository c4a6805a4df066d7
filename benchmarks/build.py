"""The cost of building each formulation's standard form, and of handing it to each solver.

Each case (formulation, shape, training rows) and route is built in a fresh subprocess, so its
peak memory is its own. In CPU seconds (``time.process_time``) of the same run: the compiled
route (``make_data`` + ``odtk.compiled.compile_instance``), the Pyomo route (``make_data`` +
``create_instance`` with the collector paused + ``to_standard_form``; skipped where the
estimate from the case's previous size passes ``--cap-gb`` or ``--cap-seconds``, and for ODD
above 3,000 rows), a numpy baseline (``scipy.sparse.csc_array`` from the final matrix's
triplets in row order, taken outside the timing, plus copies of the bound, cost and
integrality arrays: the least a build of that matrix costs), and the hand-offs of the form
(the compiled one, else Pyomo's): HiGHS ``passModel``, SCIP through an MPS file, SCIP one
PySCIPOpt expression per row (the previous route, up to 3,000 rows), CBC's MPS file.

A build's peak memory is the peak resident set during it (``VmHWM``, the counter ``ru_maxrss``
reports, restarted before the build through ``/proc/self/clear_refs``) minus the resident set
before it (after ``gc.collect`` and ``malloc_trim``), per non-zero of the form.

Data (seed 0): the binarised ``flowoct/kr-vs-kp`` (one-hot for the categorical tree); for ODD
the first ten columns of scikit-learn's breast cancer scaled to [0, 1]; rows drawn without
replacement up to the dataset's size, with replacement beyond. Both routes' sizes (rows,
columns, non-zeros) are compared on 200 rows before timing and at every size: MISMATCH and
exit status 1 if they differ.

    python benchmarks/build.py [--quick] [--rows 1000 3000 10000] [--models flowoct-2 …]
                               [--cap-gb 4] [--cap-seconds 300] [--csv PATH]
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import gc
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import scipy.sparse as sp

CASES = {  # name → (formulation, skeleton)
    "flowoct-2": ("flowoct", 2), "flowoct-3": ("flowoct", 3), "benders-2": ("benders", 2),
    "oct-2": ("oct", 2), "binoct-2": ("binoct", 2), "categorical-2": ("categorical", "depth-2"),
    "odd-1-2-4-8": ("odd", "1-2-4-8"),
}
ROWS = [1000, 3000, 10000]
CHECK_ROWS = 200
ODD_PYOMO_MAX_ROWS = 3000
SCIP_ROWS_MAX_ROWS = 3000
CSV_PATH = Path(__file__).parent / "results" / "build.csv"
HANDOFF_KEYS = ("numpy", "highs", "scip_mps", "scip_rows", "cbc_mps")
SIZE_KEYS = ("rows", "cols", "nnz")
RATIO_KEYS = ("compiled+highs/numpy+highs", "pyomo/compiled", "scip_mps/highs", "scip_rows/highs")


# --------------------------------------------------------------------------- data
def _sample(n_total: int, rows: int, seed: int = 0) -> np.ndarray:
    """Row indices: without replacement up to ``n_total``, with replacement beyond."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, rows, replace=rows > n_total))


def _module(key: str) -> ModuleType:
    """The formulation ``odtk.formulations.<key>``."""
    return importlib.import_module(f"odtk.formulations.{key}")


def _tree_data(mode: str) -> tuple[np.ndarray, np.ndarray, Any]:
    """kr-vs-kp encoded in ``mode`` ("binary" or "onehot"), its class codes and the encoder."""
    from sklearn.preprocessing import LabelEncoder

    from odtk.datasets import FeatureEncoder, load_dataset

    dataset = load_dataset("flowoct/kr-vs-kp")
    encoder = FeatureEncoder(mode=mode).fit(dataset)
    return encoder.transform(dataset), LabelEncoder().fit_transform(dataset.target), encoder


def _odd_data() -> tuple[np.ndarray, np.ndarray]:
    """The first ten columns of scikit-learn's breast cancer, scaled to [0, 1], and its classes."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :10]
    return (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0)), y


def arguments_of(case: str, rows: int) -> tuple[ModuleType, tuple, dict]:
    """The formulation of ``case`` and the arguments of its ``make_data`` on ``rows`` rows."""
    from odtk.skeletons import diagram_skeleton, topology_skeleton, tree_skeleton

    key, shape = CASES[case]
    if key == "odd":
        X, y = _odd_data()
        pick = _sample(len(y), rows)
        return _module(key), (X[pick], y[pick], diagram_skeleton(shape), 2), {}
    X, y, encoder = _tree_data("onehot" if key == "categorical" else "binary")
    pick = _sample(len(y), rows)
    if key == "categorical":
        extra = {"groups": list(encoder.groups_.values()),
                 "ordinal": [kind == "numeric" for kind in encoder.kinds_.values()]}
        return _module(key), (X[pick], y[pick], topology_skeleton(shape), 2), extra
    return _module(key), (X[pick], y[pick], tree_skeleton(shape), int(y.max()) + 1), {}


# --------------------------------------------------------------------------- measuring
def _status_bytes(field: str) -> int:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in bytes."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def _reset_peak() -> int:
    """Free what the collector and the allocator hold, restart the peak resident set (VmHWM,
    the counter ``ru_maxrss`` reports) from the resident set now, and return the latter."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    return _status_bytes("VmRSS")


def cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and the CPU seconds of this process it took."""
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def build_compiled(module: ModuleType, args: tuple, kwargs: dict):
    """The compiled route: ``make_data`` and ``compile_instance``; returns the form."""
    from odtk.compiled import compile_instance

    data = module.make_data(*args, **kwargs)
    return compile_instance(module, data, *args, **kwargs).form


def build_pyomo(module: ModuleType, args: tuple, kwargs: dict):
    """The reference route: ``make_data``, ``create_instance``, ``to_standard_form``."""
    from pyomo.common.gc_manager import PauseGC

    from odtk.solvers import to_standard_form

    data = module.make_data(*args, **kwargs)
    with PauseGC():
        instance = module.build_model().create_instance(data)
    return to_standard_form(instance)


def numpy_baseline(form) -> float:
    """CPU seconds to assemble ``form``'s matrix from its triplets (row order) and its arrays."""
    from odtk.solvers.standard_form import StandardForm

    coo = form.A.tocsr().tocoo()
    row, col, data, shape = coo.row.copy(), coo.col.copy(), coo.data.copy(), coo.shape
    arrays = (form.c, form.row_lower, form.row_upper, form.col_lower, form.col_upper, form.integer)
    del coo
    gc.collect()

    def assemble():
        A = sp.csc_array((data, (row, col)), shape=shape)
        c, rl, ru, cl, cu, integer = (np.array(a) for a in arrays)
        return StandardForm(c, form.offset, A, rl, ru, cl, cu, integer, form.maximize, [])

    return cpu(assemble)[1]


# --------------------------------------------------------------------------- hand-offs
def handoff_highs(form) -> float:
    """CPU seconds of odtk's hand-off to HiGHS: ``passModel(highs_lp(form))``."""
    from odtk.solvers import highs_lp, new_highs

    highs = new_highs()
    return cpu(lambda: highs.passModel(highs_lp(form)))[1]


def handoff_scip_mps(form) -> float:
    """CPU seconds of odtk's hand-off to SCIP: an MPS file written by HiGHS, read by SCIP."""
    from pyscipopt import Model

    from odtk.solvers.scip import _read_form

    model = Model()
    model.hideOutput()
    seconds = cpu(lambda: _read_form(model, form))[1]
    model.freeProb()
    return seconds


def handoff_scip_rows(form) -> float:
    """The previous SCIP route (before the MPS hand-off): one variable per column, one
    PySCIPOpt expression per row; a copy of its ``_add_columns`` and ``_add_rows``, kept here
    as a baseline."""
    from pyscipopt import Model
    from pyscipopt.scip import Expr, ExprCons, Term

    def previous_route(model) -> None:
        lower = np.where(np.isinf(form.col_lower), None, form.col_lower).tolist()
        upper = np.where(np.isinf(form.col_upper), None, form.col_upper).tolist()
        kinds = np.where(form.integer, "I", "C").tolist()
        columns = [model.addVar(vtype=kind, lb=lo, ub=up, obj=cost)
                   for kind, lo, up, cost in zip(kinds, lower, upper, form.c.tolist())]
        if form.offset:
            model.addObjoffset(form.offset)
        if form.maximize:
            model.setMaximize()
        A = form.A if form.A.format == "csr" else form.A.tocsr()
        terms = [Term(var) for var in columns]
        index, start, value = A.indices.tolist(), A.indptr.tolist(), A.data.tolist()
        row_lower = np.where(np.isinf(form.row_lower), None, form.row_lower).tolist()
        row_upper = np.where(np.isinf(form.row_upper), None, form.row_upper).tolist()
        for r in range(A.shape[0]):
            span = slice(start[r], start[r + 1])
            expression = Expr({terms[j]: a for j, a in zip(index[span], value[span])})
            model.addCons(ExprCons(expression, row_lower[r], row_upper[r]))

    model = Model()
    model.hideOutput()
    seconds = cpu(lambda: previous_route(model))[1]
    model.freeProb()
    return seconds


def handoff_cbc(form) -> float:
    """CPU seconds of writing the MPS file CBC reads."""
    from odtk.solvers.highs import write_mps

    with tempfile.TemporaryDirectory(prefix="odtk-build-") as folder:
        return cpu(lambda: write_mps(form, os.path.join(folder, "model.mps")))[1]


def handoffs(form, rows: int) -> dict[str, float]:
    """CPU seconds of every hand-off of ``form`` and of the numpy baseline."""
    times = {"numpy": numpy_baseline(form), "highs": handoff_highs(form), "scip_mps": handoff_scip_mps(form),
             "cbc_mps": handoff_cbc(form)}
    if rows <= SCIP_ROWS_MAX_ROWS:
        times["scip_rows"] = handoff_scip_rows(form)
    return times


# --------------------------------------------------------------------------- one case, in a subprocess
def worker(case: str, rows: int, route: str, with_handoffs: bool) -> dict:
    """Build ``case`` on ``rows`` rows by ``route`` ("compiled" or "pyomo"); its CPU seconds,
    peak memory, size, and (``with_handoffs``) the hand-offs of its form."""
    import pyomo.environ  # noqa: F401  (imported before the resident set is read)
    import odtk.compiled  # noqa: F401
    import odtk.solvers  # noqa: F401

    module, args, kwargs = arguments_of(case, rows)
    build = build_compiled if route == "compiled" else build_pyomo
    before = _reset_peak()
    form, seconds = cpu(lambda: build(module, args, kwargs))
    peak = _status_bytes("VmHWM") - before
    result = {"seconds": seconds, "peak": peak, **dict(zip(SIZE_KEYS, size_of(form)))}
    if with_handoffs:
        result.update(handoffs(form, rows))
    return result


def run_worker(case: str, rows: int, route: str, with_handoffs: bool) -> dict:
    """:func:`worker` in a fresh Python process."""
    command = [sys.executable, __file__, "--worker", case, str(rows), route, str(int(with_handoffs))]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{case} {rows} {route} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- checks and the run
def has_compiler(case: str) -> bool:
    from odtk.compiled import has_compiler as compiled

    return compiled(_module(CASES[case][0]))


def size_of(form) -> tuple[int, int, int]:
    """Rows, columns and non-zeros of a standard form."""
    return form.A.shape[0], len(form.c), int(form.A.nnz)


def check_sizes(cases: list[str]) -> bool:
    """Both routes' sizes on ``CHECK_ROWS`` rows, for the cases with a compiler; prints each."""
    ok = True
    for case in cases:
        if not has_compiler(case):
            continue
        module, args, kwargs = arguments_of(case, CHECK_ROWS)
        compiled, pyomo = size_of(build_compiled(module, args, kwargs)), size_of(build_pyomo(module, args, kwargs))
        same = compiled == pyomo
        ok &= same
        print(f"  {case:<14} compiled {compiled}  Pyomo {pyomo}  {'same' if same else 'MISMATCH'}")
    return ok


def pyomo_capped(case: str, rows: int, previous: dict | None, nnz: int | None, caps: tuple[float, float]) -> bool:
    """Whether the Pyomo route would pass the memory or time cap, estimated linearly from the
    case's previous size (by non-zeros where known, else by rows)."""
    if CASES[case][0] == "odd" and rows > ODD_PYOMO_MAX_ROWS:
        return True
    if previous is None or "pyomo_s" not in previous:
        return False
    scale = nnz / previous["nnz"] if nnz and previous.get("nnz") else rows / previous["samples"]
    return (previous["pyomo_peak"] * scale > caps[0] * 2**30) or (previous["pyomo_s"] * scale > caps[1])


def measure(case: str, rows: int, previous: dict | None, caps: tuple[float, float]) -> dict:
    """Every measurement of one case at one size; exits with 1 if the routes' sizes differ."""
    record: dict[str, Any] = {"case": case, "samples": rows, "compiler": has_compiler(case)}
    if record["compiler"]:
        compiled = run_worker(case, rows, "compiled", True)
        record.update(compiled_s=compiled.pop("seconds"), compiled_peak=compiled.pop("peak"), **compiled)
    if pyomo_capped(case, rows, previous, record.get("nnz"), caps):
        return {**record, "pyomo_capped": True}
    pyomo = run_worker(case, rows, "pyomo", not record["compiler"])
    sizes = [tuple(r[k] for k in SIZE_KEYS) for r in (record, pyomo)] if record["compiler"] else []
    if sizes and sizes[0] != sizes[1]:
        print(f"MISMATCH {case} at {rows} rows: compiled {sizes[0]}, Pyomo {sizes[1]} (rows, columns, non-zeros)")
        sys.exit(1)
    return {**record, "pyomo_s": pyomo.pop("seconds"), "pyomo_peak": pyomo.pop("peak"), **pyomo}

# --------------------------------------------------------------------------- report
def ratios(r: dict) -> dict[str, float | None]:
    """The ratios of one record (None where a part is missing)."""
    def ratio(top: float | None, bottom: float | None) -> float | None:
        return top / bottom if top is not None and bottom else None

    highs, compiled = r.get("highs"), r.get("compiled_s")
    compiled_highs = None if compiled is None or highs is None else compiled + highs
    numpy_highs = None if highs is None else r["numpy"] + highs
    return dict(zip(RATIO_KEYS, (ratio(compiled_highs, numpy_highs), ratio(r.get("pyomo_s"), compiled),
                                 ratio(r.get("scip_mps"), highs), ratio(r.get("scip_rows"), highs))))


COLUMNS = [  # (heading, width, cell of a record)
    ("case", 13, lambda r: r["case"]), ("samples", 7, lambda r: r["samples"]),
    ("rows", 7, lambda r: r.get("rows", "-")), ("cols", 7, lambda r: r.get("cols", "-")),
    ("nnz", 9, lambda r: r.get("nnz", "-")),
    ("compiled s", 11, lambda r: _seconds(r.get("compiled_s")) if r["compiler"] else "no compiler"),
    ("B/nnz", 11, lambda r: _per_nnz(r, "compiled_peak") if r["compiler"] else "no compiler"),
    ("Pyomo s", 14, lambda r: "skipped (cap)" if r.get("pyomo_capped") else _seconds(r.get("pyomo_s"))),
    ("B/nnz", 14, lambda r: "skipped (cap)" if r.get("pyomo_capped") else _per_nnz(r, "pyomo_peak")),
    ("numpy s", 7, lambda r: _seconds(r.get("numpy"))), ("HiGHS s", 7, lambda r: _seconds(r.get("highs"))),
    ("SCIP mps", 8, lambda r: _seconds(r.get("scip_mps"))), ("SCIP rows", 9, lambda r: _seconds(r.get("scip_rows"))),
    ("CBC mps", 7, lambda r: _seconds(r.get("cbc_mps"))),
    ("(C+H)/(N+H)", 11, lambda r: _times(ratios(r)["compiled+highs/numpy+highs"])),
    ("Pyomo/C", 7, lambda r: _times(ratios(r)["pyomo/compiled"])),
    ("SCIPmps/H", 9, lambda r: _times(ratios(r)["scip_mps/highs"])),
    ("SCIProws/H", 10, lambda r: _times(ratios(r)["scip_rows/highs"])),
]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _per_nnz(record: dict, key: str) -> str:
    return "-" if record.get(key) is None or not record.get("nnz") else f"{record[key] / record['nnz']:.0f}"


def print_table(records: list[dict]) -> None:
    """The table, one line per case and size."""
    print("  ".join(f"{heading:>{width}}" for heading, width, _ in COLUMNS))
    for record in records:
        print("  ".join(f"{cell(record)!s:>{width}}" for _, width, cell in COLUMNS))


def write_csv(records: list[dict], path: Path) -> None:
    """The measurements (seconds, bytes) and ratios, one line per case and size."""
    fields = ["case", "samples", "compiler", "rows", "cols", "nnz", "compiled_s", "compiled_peak", "pyomo_s",
              "pyomo_peak", "pyomo_capped", *HANDOFF_KEYS]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fields + list(RATIO_KEYS))
        writer.writeheader()
        for record in records:
            writer.writerow({**{k: record.get(k) for k in fields}, **ratios(record)})


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=ROWS, help="training rows (default 1000 3000 10000)")
    parser.add_argument("--models", nargs="+", default=list(CASES), choices=list(CASES), metavar="CASE",
                        help=f"cases (default all: {' '.join(CASES)})")
    parser.add_argument("--quick", action="store_true", help="1,000 rows only")
    parser.add_argument("--cap-gb", type=float, default=4.0, help="skip a Pyomo build estimated above this memory")
    parser.add_argument("--cap-seconds", type=float, default=300.0, help="… or above this CPU time")
    parser.add_argument("--csv", type=Path, default=CSV_PATH)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Check both routes' sizes, measure every case (each in subprocesses), print and save."""
    args = arguments(argv)
    if args.worker:
        case, rows, route, with_handoffs = args.worker
        print(json.dumps(worker(case, int(rows), route, bool(int(with_handoffs)))))
        return 0
    started = time.perf_counter()
    print(f"Same size from both routes on {CHECK_ROWS} rows (rows, columns, non-zeros):")
    if not check_sizes(args.models):
        return 1
    records = []
    for case in args.models:
        previous = None
        for rows in [1000] if args.quick else sorted(args.rows):
            previous = measure(case, rows, previous, (args.cap_gb, args.cap_seconds))
            records.append(previous)
            print(f"  measured {case} at {rows} rows", flush=True)
    print("\nCPU seconds (time.process_time), one run each; B/nnz: peak resident bytes of the build per "
          "non-zero;\n(C+H)/(N+H): (compiled + HiGHS hand-off) / (numpy baseline + HiGHS hand-off); "
          "Pyomo/C: Pyomo route / compiled route")
    print_table(records)
    write_csv(records, args.csv)
    print(f"\n{args.csv}; {time.perf_counter() - started:.0f} s wall in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
