"""The standard form every native backend receives, compiled by Pyomo, and checks on solutions."""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# largest violation of a row, bound or integrality accepted in a solver's solution (Gurobi's
# default integrality tolerance; the other solvers' tolerances are tighter)
FEASIBILITY_TOLERANCE = 1e-5


@dataclass(frozen=True)
class ModelSize:
    """Size of the model handed to the solver."""

    variables: int
    integer_variables: int
    constraints: int
    nonzeros: int


LazyRow = tuple[np.ndarray, np.ndarray, float]  # Σ coefficients · x[indices] ≤ rhs


@dataclass(frozen=True)
class CompressedMatrix:
    """A sparse matrix as its compressed arrays, column-wise (``format`` "csc") or row-wise
    ("csr"), read by the backends as they read scipy's arrays: what a solver process receives,
    so that it need not import scipy."""

    format: str
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        return len(self.data)


@dataclass
class StandardForm:
    """``max/min c·x + offset`` s.t. ``row_lower <= A x <= row_upper``, bounds, integrality."""

    c: np.ndarray
    offset: float
    A: Any  # scipy.sparse.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    maximize: bool
    columns: Any  # Pyomo's variables (a list), or a compiled instance's Columns
    cutoff: float | None = None  # a solution must be at least this good (objective units)
    start: np.ndarray | None = None  # warm-start values (NaN where a variable has none)
    # lazy constraints: solution vector → violated rows (column indices, coefficients, upper rhs)
    lazy: Callable[[np.ndarray], list[LazyRow]] | None = None
    # user cuts: values of a relaxation → violated valid inequalities (same row format)
    user_cuts: Callable[[np.ndarray], list[LazyRow]] | None = None
    # called with every MIP solution the solver finds (solvers with a solution callback)
    on_solution: Callable[[np.ndarray], None] | None = None
    # solve in a child process that can always be stopped (HiGHS, SCIP; odtk.solvers.isolated),
    # where the form needs no callback of this process
    isolate: bool = False

    @property
    def size(self) -> ModelSize:
        return ModelSize(len(self.c), int(self.integer.sum()), self.A.shape[0], int(self.A.nnz))

    @functools.cached_property
    def row_scale(self) -> np.ndarray:
        """Each row's largest coefficient (at least 1): row violations are measured against it."""
        if not self.A.shape[0]:
            return np.ones(0)
        return np.maximum(abs(self.A).max(axis=1).toarray().ravel(), 1.0)


def portable(form: StandardForm, layout: str) -> StandardForm:
    """``form`` without what ties it to this process (its Pyomo columns, callbacks, a kept
    solver model), its matrix as a :class:`CompressedMatrix` in ``layout`` ("csc" or "csr")."""
    A = form.A if form.A.format == layout else (form.A.tocsc() if layout == "csc" else form.A.tocsr())
    fields = {f.name: getattr(form, f.name) for f in dataclasses.fields(StandardForm)}
    return StandardForm(**{**fields, "A": CompressedMatrix(layout, A.data, A.indices, A.indptr, A.shape), "columns": [],
                           "lazy": None, "user_cuts": None, "on_solution": None, "isolate": False})


def to_standard_form(instance) -> StandardForm:
    """The standard form of ``instance``: a compiled instance's own (a copy rows can be
    appended to), or a concrete Pyomo instance compiled with Pyomo's standard-form compiler."""
    if (compiled := getattr(instance, "form", None)) is not None:
        return dataclasses.replace(compiled)
    import pyomo.environ as pyo
    from pyomo.common.gc_manager import PauseGC
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    with PauseGC():
        repn = LinearStandardFormCompiler().write(instance, mixed_form=True, set_sense=None)
    n_rows, n_cols = repn.A.shape
    rhs = np.asarray(repn.rhs, dtype=float)
    kind = np.fromiter((row.bound_type for row in repn.rows), dtype=int, count=n_rows)
    row_lower = np.where(kind <= 0, rhs, -np.inf)  # bound_type -1: >=, 0: ==, 1: <=
    row_upper = np.where(kind >= 0, rhs, np.inf)
    lower = np.array([-np.inf if v.lb is None else v.lb for v in repn.columns], dtype=float)
    upper = np.array([np.inf if v.ub is None else v.ub for v in repn.columns], dtype=float)
    integer = np.array([v.is_integer() for v in repn.columns], dtype=bool)
    objective = repn.objectives[0]
    c = repn.c.toarray().ravel() if repn.c.shape[0] else np.zeros(n_cols)
    offset = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
    return StandardForm(c, offset, repn.A.tocsc(), row_lower, row_upper, lower, upper, integer,
                        objective.sense == pyo.maximize, list(repn.columns))


def model_violation(form: StandardForm, values: np.ndarray) -> float:
    """The largest violation by ``values`` of a row (relative to its largest coefficient, at
    least 1), a bound or integrality of ``form``."""
    activity = form.A @ values
    rows = np.maximum(form.row_lower - activity, activity - form.row_upper) / form.row_scale
    bounds = np.maximum(form.col_lower - values, values - form.col_upper)
    fractional = np.abs(values - np.round(values))[form.integer]
    return float(max(rows.max(initial=0.0), bounds.max(initial=0.0), fractional.max(initial=0.0)))


def load_values(form: StandardForm, values: np.ndarray) -> None:
    """``values`` into the variables of ``form`` (a compiled form's vector at once)."""
    if (held := getattr(form.columns, "values", None)) is not None:
        held[:] = values
        return
    for var, value in zip(form.columns, values):
        var.set_value(float(value), skip_validation=True)


def held_values(form: StandardForm) -> np.ndarray:
    """The values the variables of ``form`` hold now (NaN where a variable has none)."""
    if (held := getattr(form.columns, "values", None)) is not None:
        return held.copy()
    return np.array([np.nan if v.value is None else v.value for v in form.columns], dtype=float)


def append_rows(form: StandardForm, rows: list[LazyRow]) -> None:
    """Add the inequalities ``rows`` (Σ coefficients · x[indices] ≤ rhs) to ``form``'s A."""
    import scipy.sparse as sp

    if not rows:
        return
    indices = np.concatenate([r[0] for r in rows])
    data = np.concatenate([r[1] for r in rows])
    row_of = np.repeat(np.arange(len(rows)), [len(r[0]) for r in rows])
    added = sp.csc_array((data, (row_of, indices)), shape=(len(rows), form.A.shape[1]))
    form.A = sp.vstack([form.A, added], format="csc")
    form.row_lower = np.concatenate([form.row_lower, np.full(len(rows), -np.inf)])
    form.row_upper = np.concatenate([form.row_upper, [r[2] for r in rows]])
    form.__dict__.pop("row_scale", None)  # recomputed with the new rows


def lazy_rows(form: StandardForm, separate: Callable[[], list]) -> Callable[[np.ndarray], list[LazyRow]]:
    """Wrap ``separate`` (reads the instance's values, returns violated inequalities
    ``expression <= constant``: Pyomo's, or a compiled instance's rows) as a callback on solution vectors of ``form``
    (lazy rows at incumbents or user cuts at fractional points)."""
    from pyomo.repn import generate_standard_repn

    compiled = hasattr(form.columns, "values")  # its cuts are rows already
    column = {} if compiled else {id(var): j for j, var in enumerate(form.columns)}

    def rows(values: np.ndarray) -> list[LazyRow]:
        load_values(form, values)
        found = []
        for cut in separate():
            if compiled:  # a row (columns, coefficients, rhs) of the compiled instance's sums
                found.append(cut)
                continue
            lhs, rhs = cut.args  # lhs <= rhs
            repn = generate_standard_repn(lhs - rhs)
            indices = np.fromiter((column[id(v)] for v in repn.linear_vars), dtype=np.int64)
            found.append((indices, np.asarray(repn.linear_coefs, dtype=float), -float(repn.constant)))
        return found

    return rows
