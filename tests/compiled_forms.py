"""The two routes to a standard form, compared: a formulation's Pyomo model compiled by Pyomo,
and its compiler's arrays (:mod:`odtk.compiled`).

Two forms are the same model when, after a canonical ordering, they have the same columns
(by variable name: bounds, integrality, objective coefficient), the same rows (each as its
bounds and its terms by variable name, signed so that its first term is positive) and the same
objective sense and constant. Fixed columns are folded into the rows' bounds and the constant,
and columns in no row and with no cost are left out, as Pyomo's compiler does.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from odtk.compiled import compile_instance, has_compiler
from odtk.solvers import solve_instance, to_standard_form

DIGITS = 9  # coefficients and bounds are compared rounded to this many decimals


def binary_data(rows: int, features: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random 0/1 features and classes 0 … classes-1."""
    rng = np.random.default_rng(seed)
    return (rng.random((rows, features)) > 0.5).astype(float), rng.integers(0, classes, rows)


def both_routes(module, *args, **kwargs):
    """``(Pyomo instance, compiled instance)`` of ``module.make_data(*args, **kwargs)``."""
    assert has_compiler(module), f"{module.KEY} has no compiler"
    data = module.make_data(*args, **kwargs)
    return module.build_model().create_instance(data), compile_instance(module, data, *args, **kwargs)


def canonical(form, names: list[str]) -> dict:
    """What makes ``form`` the model it is, free of the order of its rows and columns."""
    A = form.A.tocsc()
    lower, upper = form.row_lower.astype(float).copy(), form.row_upper.astype(float).copy()
    fixed = form.col_lower == form.col_upper
    shift = A[:, np.flatnonzero(fixed)] @ form.col_lower[fixed]
    lower, upper = lower - shift, upper - shift
    offset = float(form.offset + form.c[fixed] @ form.col_lower[fixed])
    used = (~fixed) & ((np.diff(A.indptr) > 0) | (form.c != 0))
    columns = {names[j]: (_round(form.col_lower[j]), _round(form.col_upper[j]), bool(form.integer[j]),
                          _round(form.c[j])) for j in np.flatnonzero(used)}
    A = A[:, np.flatnonzero(used)].tocsr()
    kept = [names[j] for j in np.flatnonzero(used)]
    rows = Counter()
    for r in range(A.shape[0]):
        start, end = A.indptr[r], A.indptr[r + 1]
        terms = sorted((kept[j], a) for j, a in zip(A.indices[start:end], A.data[start:end]) if a != 0)
        if not terms:
            continue
        sign = 1.0 if terms[0][1] > 0 else -1.0
        bounds = (lower[r], upper[r]) if sign > 0 else (-upper[r], -lower[r])
        rows[(_round(bounds[0]), _round(bounds[1]), tuple((name, _round(sign * a)) for name, a in terms))] += 1
    return {"maximize": bool(form.maximize), "offset": _round(offset), "columns": columns, "rows": rows}


def pyomo_names(form) -> list[str]:
    return [var.name for var in form.columns]


def compiled_names(instance) -> list[str]:
    return instance.column_names()


def assert_same_form(pyomo_instance, compiled) -> None:
    """The two routes' standard forms are the same model (see the module's docstring)."""
    expected = canonical(to_standard_form(pyomo_instance), pyomo_names(to_standard_form(pyomo_instance)))
    got = canonical(compiled.form, compiled_names(compiled))
    for key in ("maximize", "offset"):
        assert got[key] == expected[key], (key, got[key], expected[key])
    missing = expected["columns"].keys() - got["columns"].keys()
    extra = got["columns"].keys() - expected["columns"].keys()
    assert not missing and not extra, (f"columns only in the Pyomo form: {sorted(missing)[:5]}; "
                                       f"only compiled: {sorted(extra)[:5]}")
    differ = [name for name in expected["columns"] if expected["columns"][name] != got["columns"][name]]
    assert not differ, [(name, expected["columns"][name], got["columns"][name]) for name in differ[:5]]
    only_pyomo = expected["rows"] - got["rows"]
    only_compiled = got["rows"] - expected["rows"]
    assert not only_pyomo and not only_compiled, (
        f"{sum(only_pyomo.values())} rows only in the Pyomo form, e.g. {list(only_pyomo)[:2]}; "
        f"{sum(only_compiled.values())} only compiled, e.g. {list(only_compiled)[:2]}")


def assert_same_optimum(pyomo_instance, compiled, solver: str = "highs") -> float:
    """Both routes solved to optimality give the same objective; returns it."""
    objectives = []
    for instance in (pyomo_instance, compiled):
        outcome = solve_instance(instance, solver)
        assert outcome.termination == "optimal", outcome
        objectives.append(outcome.objective)
    assert abs(objectives[0] - objectives[1]) <= 1e-6 * max(1.0, abs(objectives[0])), objectives
    return objectives[0]


def _round(value: float) -> float:
    return float(np.round(value, DIGITS)) if np.isfinite(value) else float(value)
