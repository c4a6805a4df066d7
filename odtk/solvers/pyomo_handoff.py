"""The ``pyomo`` hand-off: the solver's own Pyomo interface (``pyomo.oneshot`` in the registry).

This route is the reference, not the one that answers a stop within seconds: the interface runs
the solver without odtk's callbacks, so a signal is seen when Python code runs again (a shell
interface such as CBC's waits in Python: the signal stops the wait and the solver process is
killed; an in-process solver is seen only when it returns, at its time limit). Whatever ends the
solve, the interface's temporary files are removed (Pyomo removes them only after a solve that
returns).
"""
from __future__ import annotations

import contextlib
import io
import math
import time
from collections.abc import Iterator

import numpy as np

from odtk.solvers.cbc import cbc_binary
from odtk.solvers.gurobi import bounded
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error, native_parameters, refused_for_size
from odtk.solvers.standard_form import StandardForm


def solve(instance, form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    start = time.perf_counter()
    kwargs = {"executable": cbc_binary(spec)} if spec.backend == "cbc" else {}
    solver = pyo.SolverFactory(spec.pyomo["oneshot"], **kwargs)
    for key, value in native_parameters(spec, options).items():
        if key != spec.options.get("log"):  # the log is the interface's tee
            solver.options[key.replace(".", "_")] = value
    quiet = contextlib.nullcontext() if options.log else contextlib.redirect_stderr(io.StringIO())
    try:
        with quiet, _temporary_files_removed():  # CPLEX writes its errors to stderr as well as raising them
            results = solver.solve(instance, load_solutions=False, tee=options.log)
    except Exception as exc:
        if refused_for_size(spec, exc):
            raise licence_error(spec, form.size, refused=True) from None
        raise
    elapsed = time.perf_counter() - start
    condition = results.solver.termination_condition
    termination = {TC.optimal: "optimal", TC.maxTimeLimit: "time_limit",
                   TC.infeasible: "infeasible", TC.userInterrupt: "interrupted"}.get(condition, "error")
    has_solution = len(results.solution) > 0
    if has_solution:
        instance.solutions.load_from(results)
    problem = results.problem
    bound = problem.upper_bound if form.maximize else problem.lower_bound
    bound = bounded(float(bound)) if bound is not None and not math.isnan(float(bound)) else None
    values = np.array([v.value if v.value is not None else 0.0 for v in form.columns]) if has_solution else None
    return dict(termination=termination, values=values, bound=bound, handoff=elapsed,
                message=str(condition), solve_inside_handoff=True)


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
