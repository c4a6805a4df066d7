"""IBM CPLEX through the cplex package's matrix API.

CPLEX solves in this process; an informational callback, called at each node and regularly
between, watches the solve as Gurobi's does (:class:`~odtk.solvers.gurobi.CallbackWatch`): it
aborts CPLEX when the budget says so (a signal, its deadline) or the time limit plus GRACE has
passed, and reports the incumbent, bound and nodes. The lazy-row and user-cut callbacks consult
the watch too. The solution CPLEX holds at a stop is returned, as ``interrupted`` (a signal) or
``time_limit``.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from odtk.solvers.gurobi import CallbackWatch, bounded
from odtk.solvers.highs import write_mps
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error, parameter_error
from odtk.solvers.standard_form import LazyRow, StandardForm

BACKEND = "cplex"


def refused_for_size(exc: Exception) -> bool:
    """True when ``exc`` is CPLEX refusing a model as too large for its licence."""
    return len(exc.args) > 2 and exc.args[2] == 1016


def over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    cplex = importlib.import_module("cplex")
    problem = quiet_cplex(cplex)
    problem.variables.add(obj=[1.0] * (spec.limit["variables"] + 1))
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


def _parameter(problem, dotted: str) -> Any:
    """CPLEX's parameter of the dotted name (``mip.tolerances.mipgap``), or None."""
    target = problem.parameters
    for part in dotted.split("."):
        target = getattr(target, part, None)
    return target if hasattr(target, "set") else None


def has_parameter(name: str) -> bool:
    """Whether CPLEX has the parameter ``name`` (dotted)."""
    problem = quiet_cplex(importlib.import_module("cplex"))
    try:
        return _parameter(problem, name) is not None
    finally:
        problem.end()


def _set_options(cplex, problem, spec: SolverSpec, options: SolverOptions) -> None:
    """odtk's options under CPLEX's dotted names (``mip.tolerances.mipgap``), each checked: a
    parameter CPLEX does not have or a value it refuses is a one-line ConfigError."""
    for key, value in options.native(spec).items():
        target = _parameter(problem, key)
        if target is None:
            raise parameter_error(spec, key, value, "CPLEX has no parameter of this name")
        try:
            target.set(value)
        except (cplex.exceptions.CplexError, TypeError, ValueError) as exc:
            reason = " ".join(str(exc).split())
            raise parameter_error(spec, key, value, f"CPLEX refuses this value ({reason})") from None


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import cplex

    start = time.perf_counter()
    problem = quiet_cplex(cplex, options.log)
    try:
        _add_model(cplex, problem, form)
        handoff = time.perf_counter() - start
        options = options.less(handoff)  # the hand-off counts against the limit
        _set_options(cplex, problem, spec, options)
        watch = CallbackWatch(options)
        _register_callbacks(cplex, problem, form, watch)
        try:
            with watch.running():
                problem.solve()
        except cplex.exceptions.CplexSolverError as exc:
            if refused_for_size(exc):
                raise licence_error(spec, form.size, refused=True) from None
            raise
        return _cplex_outcome(problem, form, handoff, watch)
    finally:
        problem.end()


def _add_model(cplex, problem, form: StandardForm) -> None:
    """The columns, rows, objective, start and cutoff of ``form`` in ``problem``: the matrix read
    by CPLEX's own MPS reader from a file HiGHS writes (columns ``c<j>`` in order), not one
    Python pair per row."""
    with tempfile.TemporaryDirectory(prefix="odtk-cplex-") as folder:
        path = os.path.join(folder, "model.mps")
        write_mps(form, path)
        problem.read(path, "mps")
    if form.start is not None:
        known = np.flatnonzero(~np.isnan(form.start))
        problem.MIP_starts.add(cplex.SparsePair(known.tolist(), form.start[known].tolist()),
                               problem.MIP_starts.effort_level.auto)
    if form.cutoff is not None:
        cutoffs = problem.parameters.mip.tolerances
        (cutoffs.lowercutoff if form.maximize else cutoffs.uppercutoff).set(form.cutoff)


def _register_callbacks(cplex, problem, form: StandardForm, watch: CallbackWatch) -> None:
    """The watch's informational callback, and the lazy-row and user-cut callbacks ``form`` asks for."""
    problem.register_callback(_cplex_watch_callback(cplex)).watch = watch
    for separate, make in ((form.lazy, _cplex_lazy_callback), (form.user_cuts, _cplex_user_cut_callback)):
        if separate:
            callback = problem.register_callback(make(cplex))
            callback.separate, callback.watch = separate, watch


def _cplex_watch_callback(cplex_module) -> type:
    """CPLEX informational callback class: stops CPLEX when its watch says so, reports progress."""

    class Watched(cplex_module.callbacks.MIPInfoCallback):
        watch: CallbackWatch
        best: float | None = None

        def __call__(self) -> None:
            if not self.watch.tick():
                return
            if self.watch.poll():
                self.abort()
                return
            incumbent = self.get_incumbent_objective_value() if self.has_incumbent() else None
            self.watch.report(incumbent, self.get_best_objective_value(), self.get_num_nodes(),
                              force=incumbent != self.best)
            self.best = incumbent

    return Watched


def _cplex_lazy_callback(cplex_module) -> type:
    """CPLEX lazy-constraint callback class adding the rows its ``separate`` returns."""

    class LazyCuts(cplex_module.callbacks.LazyConstraintCallback):
        separate: Callable[[np.ndarray], list[LazyRow]]
        watch: CallbackWatch

        def __call__(self) -> None:
            for indices, coefficients, rhs in _separated(self, self.separate, self.watch):
                self.add(constraint=cplex_module.SparsePair(indices.tolist(), coefficients.tolist()),
                         sense="L", rhs=rhs)

    return LazyCuts


def _cplex_user_cut_callback(cplex_module) -> type:
    """CPLEX user-cut callback class adding, at every node's relaxation, the rows its
    ``separate`` returns."""

    class UserCuts(cplex_module.callbacks.UserCutCallback):
        separate: Callable[[np.ndarray], list[LazyRow]]
        watch: CallbackWatch

        def __call__(self) -> None:
            for indices, coefficients, rhs in _separated(self, self.separate, self.watch):
                self.add(cut=cplex_module.SparsePair(indices.tolist(), coefficients.tolist()),
                         sense="L", rhs=rhs)

    return UserCuts


def _separated(callback, separate: Callable[[np.ndarray], list[LazyRow]], watch: CallbackWatch) -> list[LazyRow]:
    """The rows ``separate`` finds at the callback's point; none, and CPLEX aborted, when the
    watch says stop (an exception, which cannot cross CPLEX, is raised once it returns)."""
    found: list[LazyRow] = []
    if watch.call(lambda: found.extend(separate(np.asarray(callback.get_values())))):
        callback.abort()
        return []
    return found


def termination_of(solution) -> str:
    """odtk's termination for the status of CPLEX's ``solution`` (``problem.solution``)."""
    status, codes = solution.get_status(), solution.status
    optimal = {codes.MIP_optimal, codes.optimal_tolerance, codes.optimal}
    timed_out = {codes.MIP_time_limit_feasible, codes.MIP_time_limit_infeasible,
                 codes.abort_time_limit}
    node_limit = {codes.node_limit_feasible, codes.node_limit_infeasible}
    infeasible = {codes.MIP_infeasible, codes.infeasible, codes.MIP_infeasible_or_unbounded}
    interrupted = {codes.abort_user, codes.MIP_abort_feasible, codes.MIP_abort_infeasible}
    return ("optimal" if status in optimal else "time_limit" if status in timed_out
            else "node_limit" if status in node_limit else "infeasible" if status in infeasible
            else "interrupted" if status in interrupted else "error")


def _cplex_outcome(problem, form: StandardForm, handoff: float, watch: CallbackWatch) -> dict:
    from cplex.exceptions import CplexError

    solution = problem.solution
    status = solution.get_status()
    termination = termination_of(solution)
    has_solution = solution.is_primal_feasible()
    values = np.asarray(solution.get_values()) if has_solution else None
    bound = None  # kept without a solution too (a MIP's best bound)
    if form.integer.any():
        with contextlib.suppress(CplexError):  # no bound: the solve ended before one
            bound = solution.MIP.get_best_objective()
    elif has_solution:
        bound = solution.get_objective_value()
    return dict(termination=watch.termination(termination), values=values, bound=bounded(bound), handoff=handoff,
                message=solution.get_status_string(status) + (f" (stopped: {watch.stopped})" if watch.stopped else ""),
                nodes=solution.progress.get_num_nodes_processed() if form.integer.any() else None)
