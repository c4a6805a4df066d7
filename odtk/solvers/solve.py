"""``solve_instance``: a Pyomo instance to the chosen solver and its solution back."""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from odtk.exceptions import ConfigError
from odtk.solvers import pyomo_handoff
from odtk.solvers.options import SolverOptions, SolverOutcome, verified_termination
from odtk.solvers.registry import (SolverSpec, available_solvers, backends, check_licence, get_spec,
                                   native_parameters, require_solver, solver_status)
from odtk.solvers.root_cuts import root_cut_loop
from odtk.solvers.standard_form import (FEASIBILITY_TOLERANCE, StandardForm, held_values, lazy_rows, load_values,
                                        model_violation, to_standard_form)

HANDOFFS = ("native", "pyomo")
log = logging.getLogger(__name__)


def solve_instance(instance, solver: str, options: SolverOptions | None = None,
                   handoff: str = "native", warm_start: bool = False,
                   cutoff: float | None = None, lazy: Callable[[], list] | None = None,
                   on_solution: Callable[[], None] | None = None,
                   user_cuts: Callable[[], list] | None = None) -> SolverOutcome:
    """Solve a concrete Pyomo instance; the solution (if any) is loaded into its variables.

    ``warm_start`` passes the values the instance's variables hold now as a MIP start;
    ``cutoff`` asks only for solutions at least as good as that objective value; ``lazy``
    (solvers with lazy-constraint callbacks) is called at every incumbent, with the
    incumbent loaded into the instance, and returns the violated inequalities to add;
    ``on_solution`` (HiGHS) is called with every MIP solution found loaded into the instance.
    ``user_cuts`` reads the (fractional) values loaded into the instance and returns violated
    valid inequalities: solvers with the ``user_cuts`` capability add them at branch-and-bound
    nodes through the native hand-off; otherwise a root cut loop (``root_cuts``) adds them to
    the model before the solve.
    HiGHS and SCIP solve in a child process where no callback needs this one
    (:mod:`odtk.solvers.isolated`). A solve stopped by a signal (``options.budget``'s stop rule,
    or Ctrl-C without a budget) returns its best solution with termination ``interrupted``.
    """
    options = options or SolverOptions()
    if get_spec(solver).kind != "milp":
        raise ConfigError(f"{solver} is a SAT solver: it runs --model sat-depth / sat-size only; "
                          f"choose a MILP solver ({', '.join(available_solvers())}).")
    if handoff not in HANDOFFS:
        raise ConfigError(f"Unknown hand-off {handoff!r}; choose one of {', '.join(HANDOFFS)}.")
    spec = require_solver(solver)
    start = time.perf_counter()
    if options.budget is not None:
        options.budget.progress.phase("hand-off")
    form = to_standard_form(instance)
    if warm_start:
        form.start = held_values(form)
    form.cutoff = cutoff
    form.isolate = True  # where the backend can and no callback below needs this process
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
    if handoff == "pyomo" and (warm_start or cutoff is not None):
        raise ConfigError("Warm starts and cutoffs use the native hand-off; drop handoff='pyomo'.")
    start = time.perf_counter()
    root_cuts: list = []  # Pyomo inequalities added by the root cut loop
    backend_options = options
    if user_cuts is not None:
        in_tree = handoff == "native" and spec.capabilities["user_cuts"]
        form.user_cuts = lazy_rows(form, user_cuts if in_tree else _recording(user_cuts, root_cuts))
        if not in_tree:
            deadline = None if options.time_limit is None else start + options.time_limit
            root_cut_loop(form, deadline=deadline, budget=options.budget)
            form.user_cuts = None  # the cuts found are rows of A now
            check_licence(spec, form.size)
            backend_options = _remaining(options, start)
    if handoff == "pyomo":
        with _constraints_added(instance, root_cuts):
            raw = pyomo_handoff.solve(instance, form, spec, backend_options)
    else:
        if options.budget is not None:
            options.budget.progress.phase("solving")
        raw = backends()[spec.backend].solve(form, spec, backend_options)
    return checked_outcome(form, spec, options, raw, time.perf_counter() - start, compile_time)


def checked_outcome(form: StandardForm, spec: SolverSpec, options: SolverOptions, raw: dict,
                    seconds: float, compile_time: float = 0.0) -> SolverOutcome:
    """What a backend returned for ``form`` (``raw``, after ``seconds``), checked: a solution
    must meet the model's rows, bounds and integrality (it is then loaded into the variables,
    also when the solve was interrupted or timed out), and "optimal" needs a bound that meets the
    objective. The native parameters the solver was given are logged (``--log``) and kept in the
    outcome (``native``; the time limit as before the hand-off's seconds came off it)."""
    given = native_parameters(spec, options)
    log.info("%s was given %s", spec.name, " ".join(f"{key}={value:g}" if isinstance(value, float)
                                                     else f"{key}={value}" for key, value in given.items()))
    values = raw["values"]
    if values is not None and (violation := model_violation(form, values)) > FEASIBILITY_TOLERANCE:
        raw.update(termination="error", message=(
            f"{spec.name} returned a solution that violates the model by {violation:.2g}, over the "
            f"tolerance of {FEASIBILITY_TOLERANCE:g}"))
        values = None
    objective = None
    if values is not None:
        load_values(form, values)
        objective = float(form.c @ values + form.offset)
    bound = raw["bound"] if raw["bound"] is not None and math.isfinite(raw["bound"]) else None  # infinite: none known
    termination = verified_termination(spec.name, raw["termination"], objective, bound, options, seconds)
    inside = raw.get("solve_inside_handoff")
    return SolverOutcome(
        termination=termination, has_solution=values is not None, objective=objective,
        bound=bound, handoff_time=compile_time + (0.0 if inside else raw["handoff"]),
        solve_time=seconds - (0.0 if inside else raw["handoff"]), size=form.size,
        version=solver_status(spec.name).version or "", message=raw["message"],
        native=given, nodes=raw.get("nodes"),
    )


def _recording(separate: Callable[[], list], into: list) -> Callable[[], list]:
    """``separate`` that also appends every inequality it returns to ``into``."""
    def recorded() -> list:
        found = separate()
        into.extend(found)
        return found

    return recorded


def _remaining(options: SolverOptions, started: float) -> SolverOptions:
    """``options`` with the time spent since ``started`` (the root cut loop) off the time limit."""
    if options.time_limit is None:
        return options
    left = max(options.time_limit - (time.perf_counter() - started), 0.01)
    return dataclasses.replace(options, time_limit=left)


@contextlib.contextmanager
def _constraints_added(instance, inequalities: list):
    """``instance`` with ``inequalities`` as an extra ConstraintList while the block runs."""
    if not inequalities:
        yield
        return
    import pyomo.environ as pyo

    name = "odtk_root_cuts"
    while instance.component(name) is not None:
        name += "_"
    instance.add_component(name, pyo.ConstraintList())
    for inequality in inequalities:
        instance.component(name).add(inequality)
    try:
        yield
    finally:
        instance.del_component(name)
