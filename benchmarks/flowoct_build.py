"""How long odtk takes to hand FlowOCT to HiGHS, against a direct numpy/highspy build.

odtk's path builds a Pyomo instance (``make_data`` + ``create_instance``),
compiles it with Pyomo's standard-form compiler (``to_standard_form``) and
passes the matrices to HiGHS (``Highs.passModel(highs_lp(form))``). The
reference path builds the same model (constraints 1.2–1.10 of
``odtk.formulations.flowoct``) straight from the 0/1 data matrix with
vectorised numpy/scipy and passes it with ``Highs.passModel``. Both are run on
the binarised kr-vs-kp of the FlowOCT paper; the ratio of the two times is the
price of going through Pyomo.

Before timing, the two models are checked to be the same: equal numbers of
columns, rows, non-zeros and integer columns, and equal LP-relaxation and MIP
optima on small subsamples. The script exits with status 1 if they differ.

    python benchmarks/flowoct_build.py [--depths 3 4] [--rows N] [--repeat 1]
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import highspy
import numpy as np
import scipy.sparse as sp
from pyomo.common.gc_manager import PauseGC
from sklearn.preprocessing import LabelEncoder

from odtk.datasets import FeatureEncoder, load_dataset
from odtk.formulations import flowoct
from odtk.skeletons import tree_skeleton
from odtk.solvers import highs_lp, new_highs, to_standard_form

DATASET = "flowoct/kr-vs-kp"
LP_CHECK = (200, 2)  # (rows, depth) of the LP-relaxation check
MIP_CHECK = (40, 2)  # (rows, depth) of the MIP check
CHECK_LAMBDAS = (0.0, 0.1)
TOLERANCE = 1e-6

T = TypeVar("T")


# --------------------------------------------------------------------------- data
def load_data() -> tuple[np.ndarray, np.ndarray, int]:
    """The 0/1 feature matrix, class codes 0..K-1 and K of the binarised kr-vs-kp."""
    dataset = load_dataset(DATASET)
    X = FeatureEncoder().fit(dataset).transform(dataset)
    y = LabelEncoder().fit_transform(dataset.target)
    return X, y, int(y.max()) + 1


def subsample(X: np.ndarray, y: np.ndarray, rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` rows drawn without replacement (all rows if ``rows`` is not smaller)."""
    if rows >= len(y):
        return X, y
    pick = np.sort(np.random.default_rng(seed).choice(len(y), rows, replace=False))
    return X[pick], y[pick]


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and its wall-clock time in seconds."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


# --------------------------------------------------------------------------- odtk's path
def odtk_instance(X: np.ndarray, y: np.ndarray, depth: int, n_classes: int, lam: float = 0.0):
    """The concrete FlowOCT Pyomo instance, built with the garbage collector paused."""
    with PauseGC():
        data = flowoct.make_data(X, y, tree_skeleton(depth), n_classes, lam=lam)
        return flowoct.build_model().create_instance(data)


def odtk_highs(X: np.ndarray, y: np.ndarray, depth: int, n_classes: int,
               lam: float = 0.0) -> tuple[highspy.Highs, dict[str, float]]:
    """odtk's hand-off to HiGHS, with the time of each stage (build, compile, pass)."""
    instance, build = timed(lambda: odtk_instance(X, y, depth, n_classes, lam))
    form, compile_ = timed(lambda: to_standard_form(instance))
    highs = new_highs()
    _, pass_ = timed(lambda: highs.passModel(highs_lp(form)))
    return highs, {"build": build, "compile": compile_, "pass": pass_}


# --------------------------------------------------------------------------- direct path
@dataclass
class Matrix:
    """``max c·x`` s.t. ``row_lower <= A x <= row_upper``, ``0 <= x <= 1``, ``x_j`` integer where ``integer``."""

    c: np.ndarray
    integer: np.ndarray
    A: sp.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray


class _RowBlocks:
    """Constraint rows collected block by block as (row, column, value) triplets."""

    def __init__(self) -> None:
        self.n_rows = 0
        self.triplets: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.bounds: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, n_rows: int, terms: list[tuple[np.ndarray, np.ndarray, float]],
            lower: float, upper: float) -> None:
        """Add ``n_rows`` rows; each term gives block-local rows, columns and a coefficient."""
        for rows, cols, value in terms:
            rows, cols = np.broadcast_arrays(rows, cols)
            self.triplets.append((rows.ravel() + self.n_rows, cols.ravel(),
                                  np.full(rows.size, value)))
        self.bounds.append((np.full(n_rows, lower), np.full(n_rows, upper)))
        self.n_rows += n_rows

    def matrix(self, n_cols: int) -> tuple[sp.csc_array, np.ndarray, np.ndarray]:
        """The CSC matrix and the row bounds."""
        rows, cols, values = (np.concatenate(part) for part in zip(*self.triplets))
        A = sp.csc_array((values, (rows, cols)), shape=(self.n_rows, n_cols))
        lower, upper = (np.concatenate(part) for part in zip(*self.bounds))
        return A, lower, upper


def flowoct_matrix(X: np.ndarray, y: np.ndarray, depth: int, n_classes: int,
                   lam: float = 0.0) -> Matrix:
    """FlowOCT (1.1)–(1.13) as matrices, vectorised over samples, features and nodes.

    Nodes are in heap order (root 1, children 2n and 2n+1); node n has index n-1.
    Columns: b[n,f] for branching n, then p[n], w[n,k], z[i,n] and z_sink[i,n] for all n.
    """
    n_samples, n_features = X.shape
    n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
    node = np.arange(1, n_nodes + 1)
    branch = node[:n_branch]
    sample = np.arange(n_samples)[:, None]
    p0 = n_branch * n_features
    w0 = p0 + n_nodes
    z0 = w0 + n_nodes * n_classes
    s0 = z0 + n_samples * n_nodes
    n_cols = s0 + n_samples * n_nodes

    def b(n: np.ndarray, f: np.ndarray) -> np.ndarray:
        return (n - 1) * n_features + f

    def z(i: np.ndarray, n: np.ndarray) -> np.ndarray:
        return z0 + i * n_nodes + n - 1

    def z_sink(i: np.ndarray, n: np.ndarray) -> np.ndarray:
        return s0 + i * n_nodes + n - 1

    rows = _RowBlocks()
    # (1.2)/(1.3): one row per node n: Σ_f b[n,f] (n branching) + p[n] + Σ_{ancestors} p = 1
    below = [node[node >> k > 0] for k in range(1, depth + 1)]  # nodes with a k-th ancestor
    ancestors = [(n - 1, p0 + (n >> k) - 1, 1.0) for k, n in enumerate(below, start=1)]
    rows.add(n_nodes, [(branch[:, None] - 1, b(branch[:, None], np.arange(n_features)), 1.0),
                       (node - 1, p0 + node - 1, 1.0), *ancestors], 1.0, 1.0)
    # (1.4)/(1.5): row (i, n): z[i,n] - z[i,2n] - z[i,2n+1] (n branching) - z_sink[i,n] = 0
    flow = sample * n_nodes + node - 1
    rows.add(n_samples * n_nodes, [(flow, z(sample, node), 1.0), (flow, z_sink(sample, node), -1.0),
                                   (flow[:, :n_branch], z(sample, 2 * branch), -1.0),
                                   (flow[:, :n_branch], z(sample, 2 * branch + 1), -1.0)], 0.0, 0.0)
    # (1.6): z[i,1] <= 1
    rows.add(n_samples, [(sample, z(sample, 1), 1.0)], -np.inf, 1.0)
    # (1.7)/(1.8): row (i, n) of side 0/1: z[i,2n+side] - Σ_{f: x_if = side} b[n,f] <= 0
    pair = sample * n_branch + branch - 1
    for side in (0, 1):
        i, f = np.nonzero(X == side)
        rows.add(n_samples * n_branch, [(pair, z(sample, 2 * branch + side), 1.0),
                                        (pair[i], b(branch, f[:, None]), -1.0)], -np.inf, 0.0)
    # (1.9): z_sink[i,n] - w[n,y_i] <= 0
    rows.add(n_samples * n_nodes, [(flow, z_sink(sample, node), 1.0),
                                   (flow, w0 + (node - 1) * n_classes + y[:, None], -1.0)], -np.inf, 0.0)
    # (1.10): Σ_k w[n,k] - p[n] = 0
    rows.add(n_nodes, [(node[:, None] - 1, w0 + (node[:, None] - 1) * n_classes + np.arange(n_classes), 1.0),
                       (node - 1, p0 + node - 1, -1.0)], 0.0, 0.0)

    c = np.zeros(n_cols)
    c[:p0] = -lam
    c[s0:] = 1.0 - lam
    integer = np.arange(n_cols) < z0
    return Matrix(c, integer, *rows.matrix(n_cols))


def pass_matrix(highs: highspy.Highs, m: Matrix) -> None:
    """Hand a :class:`Matrix` to HiGHS through the numpy overload of ``passModel``."""
    n_cols = len(m.c)
    highs.passModel(n_cols, m.A.shape[0], m.A.nnz, int(highspy.MatrixFormat.kColwise),
                    int(highspy.ObjSense.kMaximize), 0.0, m.c, np.zeros(n_cols), np.ones(n_cols),
                    m.row_lower, m.row_upper, m.A.indptr.astype(np.int32),
                    m.A.indices.astype(np.int32), m.A.data, m.integer.astype(np.int32))


def direct_highs(X: np.ndarray, y: np.ndarray, depth: int, n_classes: int,
                 lam: float = 0.0) -> tuple[highspy.Highs, float]:
    """The direct build and hand-off to HiGHS, and its time."""
    highs = new_highs()
    _, seconds = timed(lambda: pass_matrix(highs, flowoct_matrix(X, y, depth, n_classes, lam)))
    return highs, seconds


# --------------------------------------------------------------------------- checks
def model_size(highs: highspy.Highs) -> tuple[int, int, int, int]:
    """Columns, rows, non-zeros and integer columns of the model held by ``highs``."""
    integer = sum(v == highspy.HighsVarType.kInteger for v in highs.getLp().integrality_)
    return highs.getNumCol(), highs.getNumRow(), highs.getNumNz(), integer


def optimum(highs: highspy.Highs, relax: bool) -> float:
    """Optimal objective of the model held by ``highs`` (of its LP relaxation if ``relax``)."""
    highs.setOptionValue("solve_relaxation", relax)
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS did not solve to optimality: {highs.modelStatusToString(highs.getModelStatus())}")
    return highs.getInfo().objective_function_value


def check_same_model(X: np.ndarray, y: np.ndarray, n_classes: int, depths: list[int]) -> bool:
    """Compare sizes (at every benchmark depth, on the LP-check rows) and optima; print each line."""
    ok = True

    def report(what: str, odtk_value, direct_value, same: bool) -> None:
        nonlocal ok
        ok &= same
        print(f"  {what:<38} odtk {odtk_value!s:<36} direct {direct_value!s:<36} {'ok' if same else 'DIFFER'}")

    rows, lp_depth = LP_CHECK
    Xs, ys = subsample(X, y, rows)
    for depth in sorted({lp_depth, *depths}):
        sizes = [model_size(fn(Xs, ys, depth, n_classes)[0]) for fn in (odtk_highs, direct_highs)]
        report(f"size d={depth} n={len(ys)} (cols,rows,nnz,int)", *sizes, sizes[0] == sizes[1])
    for (rows, depth), relax in ((LP_CHECK, True), (MIP_CHECK, False)):
        Xs, ys = subsample(X, y, rows)
        for lam in CHECK_LAMBDAS:
            values = [optimum(fn(Xs, ys, depth, n_classes, lam)[0], relax) for fn in (odtk_highs, direct_highs)]
            same = abs(values[0] - values[1]) <= TOLERANCE * max(1.0, abs(values[0]))
            report(f"{'LP' if relax else 'MIP'} optimum d={depth} n={rows} λ={lam}",
                   f"{values[0]:.6f}", f"{values[1]:.6f}", same)
    return ok


# --------------------------------------------------------------------------- timing
def time_depth(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, repeat: int) -> dict[str, float]:
    """Best-of-``repeat`` times of both paths at one depth, with the model size."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        gc.collect()
        highs, parts = odtk_highs(X, y, depth, n_classes)
        parts["odtk"] = sum(parts.values())
        size = {"cols": highs.getNumCol(), "rows": highs.getNumRow(), "nnz": highs.getNumNz()}
        del highs
        gc.collect()  # free the Pyomo instance now, not during the direct build
        _, parts["direct"] = direct_highs(X, y, depth, n_classes)
        best = {k: min(v, best.get(k, np.inf)) for k, v in parts.items()}
    return {"depth": depth, "samples": len(y), **size, **best}


def print_table(results: list[dict[str, float]]) -> None:
    """The timing table; times in seconds."""
    header = (f"{'depth':>5} {'samples':>7} {'rows':>8} {'cols':>8} {'nnz':>9} {'build':>8} "
              f"{'compile':>8} {'pass':>7} {'odtk':>8} {'direct':>7} {'odtk/direct':>11}")
    print(header)
    for r in results:
        print(f"{r['depth']:>5} {r['samples']:>7} {r['rows']:>8} {r['cols']:>8} {r['nnz']:>9} "
              f"{r['build']:>8.2f} {r['compile']:>8.2f} {r['pass']:>7.2f} {r['odtk']:>8.2f} "
              f"{r['direct']:>7.3f} {r['odtk'] / r['direct']:>11.1f}")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Check that both builds give the same model, then time them; 1 if the models differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=positive_int, nargs="+", default=[3, 4], help="tree depths (default 3 4)")
    parser.add_argument("--rows", type=positive_int, default=None, help="random subsample of rows (default all)")
    parser.add_argument("--repeat", type=positive_int, default=1, help="best of this many runs (default 1)")
    args = parser.parse_args(argv)

    X, y, n_classes = load_data()
    print(f"{DATASET}: {len(y)} rows, {X.shape[1]} binary features, {n_classes} classes")
    print("Same model? (sizes on the LP-check rows; optima of the LP relaxation and of the MIP)")
    if not check_same_model(X, y, n_classes, args.depths):
        print("The direct build differs from odtk's model.", file=sys.stderr)
        return 1
    if args.rows is not None:
        X, y = subsample(X, y, args.rows)
    results = [time_depth(X, y, n_classes, depth, args.repeat) for depth in args.depths]
    print(f"\nFlowOCT, λ=0, best of {args.repeat}; seconds; odtk = build + compile + pass")
    print_table(results)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
