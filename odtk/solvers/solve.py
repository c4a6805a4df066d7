"""``solve_instance``: a Pyomo instance to the chosen solver and its solution back."""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from odtk.exceptions import ConfigError
from odtk.solvers import pyomo_handoff
from odtk.solvers.options import SolverOptions, SolverOutcome, verified_termination
from odtk.solvers.registry import (available_solvers, backends, check_licence, get_spec, require_solver,
                                   solver_status)
from odtk.solvers.standard_form import FEASIBILITY_TOLERANCE, lazy_rows, load_values, model_violation, to_standard_form

HANDOFFS = ("native", "pyomo")


def solve_instance(instance, solver: str, options: SolverOptions | None = None,
                   handoff: str = "native", warm_start: bool = False,
                   cutoff: float | None = None, lazy: Callable[[], list] | None = None,
                   on_solution: Callable[[], None] | None = None) -> SolverOutcome:
    """Solve a concrete Pyomo instance; the solution (if any) is loaded into its variables.

    ``warm_start`` passes the values the instance's variables hold now as a MIP start;
    ``cutoff`` asks only for solutions at least as good as that objective value; ``lazy``
    (solvers with lazy-constraint callbacks) is called at every incumbent, with the
    incumbent loaded into the instance, and returns the violated inequalities to add;
    ``on_solution`` (HiGHS) is called with every MIP solution found loaded into the instance.
    A solver stopped by Ctrl-C raises KeyboardInterrupt, as Python code does.
    """
    options = options or SolverOptions()
    if get_spec(solver).kind != "milp":
        raise ConfigError(f"{solver} is a SAT solver: it runs --model sat-depth / sat-size only; "
                          f"choose a MILP solver ({', '.join(available_solvers())}).")
    if handoff not in HANDOFFS:
        raise ConfigError(f"Unknown hand-off {handoff!r}; choose one of {', '.join(HANDOFFS)}.")
    spec = require_solver(solver)
    start = time.perf_counter()
    form = to_standard_form(instance)
    if warm_start:
        form.start = np.array([np.nan if v.value is None else v.value for v in form.columns], dtype=float)
    form.cutoff = cutoff
    if lazy is not None:
        if handoff != "native" or not spec.capabilities["lazy_callbacks"]:
            raise ConfigError(f"{solver} takes no lazy constraints through the {handoff} hand-off.")
        form.lazy = lazy_rows(form, lazy)
    if on_solution is not None:
        def loaded_then_called(values: np.ndarray) -> None:
            load_values(form, values)
            on_solution()

        form.on_solution = loaded_then_called
    compile_time = time.perf_counter() - start
    check_licence(spec, form.size)
    start = time.perf_counter()
    if handoff == "pyomo":
        if warm_start or cutoff is not None:
            raise ConfigError("Warm starts and cutoffs use the native hand-off; drop handoff='pyomo'.")
        raw = pyomo_handoff.solve(instance, form, spec, options)
    else:
        raw = backends()[spec.backend].solve(form, spec, options)
    if raw["termination"] == "interrupted":  # the solver stopped on Ctrl-C: so does the caller
        raise KeyboardInterrupt
    total = time.perf_counter() - start
    values = raw["values"]
    if values is not None and (violation := model_violation(form, values)) > FEASIBILITY_TOLERANCE:
        raw.update(termination="error", message=(
            f"{solver} returned a solution that violates the model by {violation:.2g}, over the "
            f"tolerance of {FEASIBILITY_TOLERANCE:g}"))
        values = None
    objective = None
    if values is not None:
        load_values(form, values)
        objective = float(form.c @ values + form.offset)
    raw["termination"] = verified_termination(solver, raw["termination"], objective, raw["bound"],
                                              options, total)
    handoff_time = compile_time + (0.0 if raw.get("solve_inside_handoff") else raw["handoff"])
    solve_time = total - (0.0 if raw.get("solve_inside_handoff") else raw["handoff"])
    return SolverOutcome(
        termination=raw["termination"], has_solution=values is not None, objective=objective,
        bound=raw["bound"], handoff_time=handoff_time, solve_time=solve_time, size=form.size,
        version=solver_status(solver).version or "", message=raw["message"],
        native=options.native(spec), nodes=raw.get("nodes"),
    )
