"""The ``pyomo`` hand-off: the solver's own Pyomo interface (``pyomo.oneshot`` in the registry)."""
from __future__ import annotations

import contextlib
import io
import math
import time

import numpy as np

from odtk.solvers.cbc import cbc_binary
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error, refused_for_size
from odtk.solvers.standard_form import StandardForm


def solve(instance, form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    start = time.perf_counter()
    kwargs = {"executable": cbc_binary(spec)} if spec.backend == "cbc" else {}
    solver = pyo.SolverFactory(spec.pyomo["oneshot"], **kwargs)
    for key, value in options.native(spec).items():
        if key != spec.options.get("log"):  # the log is the interface's tee
            solver.options[key.replace(".", "_")] = value
    quiet = contextlib.nullcontext() if options.log else contextlib.redirect_stderr(io.StringIO())
    try:
        with quiet:  # CPLEX writes its errors to stderr as well as raising them
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
    bound = float(bound) if bound is not None and math.isfinite(float(bound)) else None
    values = np.array([v.value if v.value is not None else 0.0 for v in form.columns]) if has_solution else None
    return dict(termination=termination, values=values, bound=bound, handoff=elapsed,
                message=str(condition), solve_inside_handoff=True)
