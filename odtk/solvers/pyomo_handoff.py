"""The ``pyomo`` hand-off: the solver's own Pyomo interface (``pyomo.oneshot`` in the registry).

This route is the reference, not the one that answers a stop within seconds: the interface runs
the solver without odtk's callbacks, so a signal is seen when Python code runs again (a shell
interface such as CBC's waits in Python: the signal stops the wait and the solver process is
killed; an in-process solver is seen only when it returns, at its time limit). Whatever ends the
solve, the interface's temporary files are removed (Pyomo removes them only after a solve that
returns). Bounds are the solver's own: Pyomo's results give them, but for a CBC run stopped early
they give the incumbent, and CBC's log (kept in a temporary folder) gives its bound instead.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from odtk.solvers.cbc import cbc_binary, stated_bound
from odtk.solvers.cplex import termination_of as cplex_termination
from odtk.solvers.gurobi import bounded
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error, native_parameters, refused_for_size
from odtk.solvers.standard_form import StandardForm

# the node-limit parameters of the solvers whose Pyomo interfaces report a node limit as an iteration limit
_NODE_LIMITS = {"mip_max_nodes", "limits/nodes", "limits/totalnodes"}


def solve(instance, form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import pyomo.environ as pyo
    from pyomo.opt import SolverStatus

    start = time.perf_counter()
    kwargs = {"executable": cbc_binary(spec)} if spec.backend == "cbc" else {}
    solver = pyo.SolverFactory(spec.pyomo["oneshot"], **kwargs)
    given = native_parameters(spec, options)
    for key, value in given.items():
        if key != spec.options.get("log"):  # the log is the interface's tee
            solver.options[key.replace(".", "_")] = value
    quiet = contextlib.nullcontext() if options.log else contextlib.redirect_stderr(io.StringIO())
    with tempfile.TemporaryDirectory(prefix="odtk-pyomo-") as folder:
        log_file = os.path.join(folder, "cbc.log")  # CBC's own log, which states its bound
        try:
            with quiet, _temporary_files_removed():  # CPLEX writes its errors to stderr as well as raising them
                results = solver.solve(instance, load_solutions=False, tee=options.log,
                                       **({"logfile": log_file} if spec.backend == "cbc" else {}))
        except Exception as exc:
            if refused_for_size(spec, exc):
                raise licence_error(spec, form.size, refused=True) from None
            raise
        log = Path(log_file).read_text(errors="replace") if os.path.exists(log_file) else ""
    elapsed = time.perf_counter() - start
    condition = results.solver.termination_condition
    termination = _termination(condition, solver, spec, given)
    has_solution = len(results.solution) > 0
    if has_solution:
        if termination == "node_limit":  # cplex_direct calls CPLEX's node limit an error: Pyomo would not load it
            results.solver.status = SolverStatus.aborted
        instance.solutions.load_from(results)
    values = np.array([v.value if v.value is not None else 0.0 for v in form.columns]) if has_solution else None
    return dict(termination=termination, values=values, bound=_bound(results, form, spec, termination, log),
                handoff=elapsed, message=str(condition), solve_inside_handoff=True)


def _termination(condition, solver, spec: SolverSpec, given: dict) -> str:
    """odtk's termination for Pyomo's termination ``condition``. Pyomo reports a node limit as
    ``maxEvaluations`` (Gurobi, CBC), as an iteration limit (HiGHS, SCIP: a node limit when their
    settings set one) or, for CPLEX, as an error: CPLEX's own status then says."""
    from pyomo.opt import TerminationCondition as TC

    if condition == TC.maxEvaluations or (condition == TC.maxIterations and given.keys() & _NODE_LIMITS):
        return "node_limit"
    if condition == TC.error and spec.backend == "cplex":
        return cplex_termination(solver._solver_model.solution)  # the interface's CPLEX problem
    return {TC.optimal: "optimal", TC.maxTimeLimit: "time_limit", TC.infeasible: "infeasible",
            TC.userInterrupt: "interrupted"}.get(condition, "error")


def _bound(results, form: StandardForm, spec: SolverSpec, termination: str, log: str) -> float | None:
    """The solver's own bound: Pyomo's results give it, except for a CBC that stopped early, for
    which they give the incumbent; CBC's log then states its bound (none: no bound)."""
    problem = results.problem
    bound = problem.upper_bound if form.maximize else problem.lower_bound
    if spec.backend == "cbc" and termination != "optimal":
        bound = stated_bound(log)
    return bounded(float(bound)) if bound is not None and not math.isnan(float(bound)) else None


@contextlib.contextmanager
def _temporary_files_removed() -> Iterator[None]:
    """Pyomo's temporary files of the block removed however it ends: the contexts an interface
    pushed and did not pop (it pops them only after a solve that returns) are popped too."""
    from pyomo.common.tempfiles import TempfileManager

    ours = TempfileManager.push()
    try:
        yield
    finally:
        while TempfileManager.pop(remove=True) is not ours:
            pass
