"""IBM CPLEX through the cplex package's matrix API."""
from __future__ import annotations

import importlib
import time
from typing import Any, Callable

import numpy as np

from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error
from odtk.solvers.standard_form import LazyRow, StandardForm

BACKEND = "cplex"


def refused_for_size(exc: Exception) -> bool:
    """True when ``exc`` is CPLEX refusing a model as too large for its licence."""
    return len(exc.args) > 2 and exc.args[2] == 1016


def over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    cplex = importlib.import_module("cplex")
    problem = quiet_cplex(cplex)
    problem.variables.add(obj=[1.0] * (spec.size_limit["variables"] + 1))
    try:
        problem.solve()
    except cplex.exceptions.CplexSolverError as exc:
        return refused_for_size(exc)
    finally:
        problem.end()
    return False


def quiet_cplex(cplex_module, log: bool = False):
    problem = cplex_module.Cplex()
    if not log:
        for setter in (problem.set_results_stream, problem.set_log_stream,
                       problem.set_warning_stream, problem.set_error_stream):
            setter(None)
    return problem


def _set_cplex_parameter(problem, dotted: str, value: Any) -> None:
    target = problem.parameters
    for part in dotted.split("."):
        target = getattr(target, part)
    target.set(value)


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import cplex

    start = time.perf_counter()
    problem = quiet_cplex(cplex, options.log)
    try:
        for key, value in options.native(spec).items():
            _set_cplex_parameter(problem, key, value)
        inf = cplex.infinity
        problem.variables.add(
            obj=form.c.tolist(),
            lb=np.maximum(form.col_lower, -inf).tolist(),
            ub=np.minimum(form.col_upper, inf).tolist(),
            types="".join("I" if i else "C" for i in form.integer),
        )
        problem.objective.set_offset(form.offset)
        problem.objective.set_sense(problem.objective.sense.maximize if form.maximize
                                    else problem.objective.sense.minimize)
        A = form.A.tocsr()
        rows = [cplex.SparsePair(A.indices[A.indptr[r]:A.indptr[r + 1]].tolist(),
                                 A.data[A.indptr[r]:A.indptr[r + 1]].tolist())
                for r in range(A.shape[0])]
        equal = form.row_lower == form.row_upper
        upper_only = np.isinf(form.row_lower)
        senses = "".join(np.where(equal, "E", np.where(upper_only, "L", "G")))
        rhs = np.where(upper_only, form.row_upper, form.row_lower).tolist()
        problem.linear_constraints.add(lin_expr=rows, senses=senses, rhs=rhs)
        if form.start is not None:
            known = np.flatnonzero(~np.isnan(form.start))
            problem.MIP_starts.add(cplex.SparsePair(known.tolist(), form.start[known].tolist()),
                                   problem.MIP_starts.effort_level.auto)
        if form.cutoff is not None:
            cutoffs = problem.parameters.mip.tolerances
            (cutoffs.lowercutoff if form.maximize else cutoffs.uppercutoff).set(form.cutoff)
        if form.lazy:
            problem.register_callback(_cplex_lazy_callback(cplex)).separate = form.lazy
        if form.user_cuts:
            problem.register_callback(_cplex_user_cut_callback(cplex)).separate = form.user_cuts
        handoff = time.perf_counter() - start
        try:
            problem.solve()
        except cplex.exceptions.CplexSolverError as exc:
            if refused_for_size(exc):
                raise licence_error(spec, form.size, refused=True) from None
            raise
        return _cplex_outcome(problem, form, handoff)
    finally:
        problem.end()


def _cplex_lazy_callback(cplex_module) -> type:
    """CPLEX lazy-constraint callback class adding the rows its ``separate`` returns."""

    class LazyCuts(cplex_module.callbacks.LazyConstraintCallback):
        separate: Callable[[np.ndarray], list[LazyRow]]

        def __call__(self) -> None:
            for indices, coefficients, rhs in self.separate(np.asarray(self.get_values())):
                self.add(constraint=cplex_module.SparsePair(indices.tolist(), coefficients.tolist()),
                         sense="L", rhs=rhs)

    return LazyCuts


def _cplex_user_cut_callback(cplex_module) -> type:
    """CPLEX user-cut callback class adding, at every node's relaxation, the rows its
    ``separate`` returns."""

    class UserCuts(cplex_module.callbacks.UserCutCallback):
        separate: Callable[[np.ndarray], list[LazyRow]]

        def __call__(self) -> None:
            for indices, coefficients, rhs in self.separate(np.asarray(self.get_values())):
                self.add(cut=cplex_module.SparsePair(indices.tolist(), coefficients.tolist()),
                         sense="L", rhs=rhs)

    return UserCuts


def _cplex_outcome(problem, form: StandardForm, handoff: float) -> dict:
    solution = problem.solution
    status = solution.get_status()
    codes = solution.status
    optimal = {codes.MIP_optimal, codes.optimal_tolerance, codes.optimal}
    timed_out = {codes.MIP_time_limit_feasible, codes.MIP_time_limit_infeasible,
                 codes.abort_time_limit}
    infeasible = {codes.MIP_infeasible, codes.infeasible, codes.MIP_infeasible_or_unbounded}
    interrupted = {codes.abort_user, codes.MIP_abort_feasible, codes.MIP_abort_infeasible}
    termination = ("optimal" if status in optimal else "time_limit" if status in timed_out
                   else "infeasible" if status in infeasible
                   else "interrupted" if status in interrupted else "error")
    has_solution = solution.is_primal_feasible()
    values = np.asarray(solution.get_values()) if has_solution else None
    bound = None
    if has_solution:
        bound = solution.MIP.get_best_objective() if form.integer.any() else solution.get_objective_value()
    return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                message=solution.get_status_string(status),
                nodes=solution.progress.get_num_nodes_processed() if form.integer.any() else None)
