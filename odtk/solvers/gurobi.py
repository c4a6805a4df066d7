"""Gurobi through gurobipy's matrix API."""
from __future__ import annotations

import importlib
import time
from typing import Callable

import numpy as np

from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error
from odtk.solvers.standard_form import StandardForm

BACKEND = "gurobipy"


def refused_for_size(exc: Exception) -> bool:
    """True when ``exc`` is Gurobi refusing a model as too large for its licence."""
    return getattr(exc, "errno", None) == 10010


def over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    gp = importlib.import_module("gurobipy")
    with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as model:
        model.addVars(spec.size_limit["variables"] + 1)
        try:
            model.optimize()
        except gp.GurobiError as exc:
            return refused_for_size(exc)
    return False


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import gurobipy as gp

    start = time.perf_counter()
    with gp.Env(params={"OutputFlag": int(options.log)}) as env, gp.Model(env=env) as model:
        for key, value in options.native(spec).items():
            model.setParam(key, value)
        vtype = np.where(form.integer, gp.GRB.INTEGER, gp.GRB.CONTINUOUS)
        x = model.addMVar(len(form.c), lb=form.col_lower, ub=form.col_upper, obj=form.c, vtype=vtype)
        model.ObjCon = form.offset
        model.ModelSense = gp.GRB.MAXIMIZE if form.maximize else gp.GRB.MINIMIZE
        A = form.A.tocsr()
        equal = form.row_lower == form.row_upper
        upper_only = np.isinf(form.row_lower)
        sense = np.where(equal, "=", np.where(upper_only, "<", ">"))
        rhs = np.where(upper_only, form.row_upper, form.row_lower)
        model.addMConstr(A, x, sense, rhs)
        if form.start is not None:
            x.Start = np.where(np.isnan(form.start), gp.GRB.UNDEFINED, form.start)
        if form.cutoff is not None:
            model.Params.Cutoff = form.cutoff
        callback = _gurobi_callback(form, x.tolist()) if (form.lazy or form.user_cuts) else None
        if form.lazy:
            model.Params.LazyConstraints = 1
        if form.user_cuts:
            model.Params.PreCrush = 1  # cuts on the original model's variables
        handoff = time.perf_counter() - start
        try:
            model.optimize(callback)
        except gp.GurobiError as exc:
            if refused_for_size(exc):
                raise licence_error(spec, form.size, refused=True) from None
            raise
        if callback and callback.error:
            raise callback.error
        termination = {gp.GRB.OPTIMAL: "optimal", gp.GRB.TIME_LIMIT: "time_limit",
                       gp.GRB.INFEASIBLE: "infeasible", gp.GRB.INTERRUPTED: "interrupted",
                       gp.GRB.INF_OR_UNBD: "infeasible",
                       gp.GRB.CUTOFF: "infeasible"}.get(model.Status, "error")  # nothing beats the cutoff
        values = np.asarray(x.X) if model.SolCount > 0 else None
        bound = model.ObjBound if (model.IsMIP and values is not None) else (
            model.ObjVal if values is not None else None)
        return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                    message=f"Gurobi status {model.Status}",
                    nodes=int(model.NodeCount) if model.IsMIP else None)


def _gurobi_callback(form: StandardForm, columns: list) -> Callable:
    """Gurobi callback adding ``form.lazy``'s violated rows at every new incumbent (MIPSOL) and
    ``form.user_cuts``'s at every node whose relaxation is solved to optimality (MIPNODE)."""
    import gurobipy as gp

    def row(indices: np.ndarray, coefficients: np.ndarray, rhs: float):
        return gp.LinExpr(coefficients.tolist(), [columns[j] for j in indices]) <= rhs

    def callback(model, where) -> None:
        try:
            if where == gp.GRB.Callback.MIPSOL and form.lazy:
                for cut in form.lazy(np.asarray(model.cbGetSolution(columns))):
                    model.cbLazy(row(*cut))
            elif (where == gp.GRB.Callback.MIPNODE and form.user_cuts
                  and model.cbGet(gp.GRB.Callback.MIPNODE_STATUS) == gp.GRB.OPTIMAL):
                for cut in form.user_cuts(np.asarray(model.cbGetNodeRel(columns))):
                    model.cbCut(row(*cut))
        except Exception as exc:  # gurobipy swallows callback errors: stop and re-raise after
            callback.error = exc
            model.terminate()

    callback.error = None
    return callback
