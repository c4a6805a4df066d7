"""Stages 3–4 for the MILPs: build the formulation's instance, hand it to the solver, decode.

The build runs under the budget's deadline (an alarm stops a Pyomo build that would outlast
it); the solver gets what is left less a reserve for decoding and checking; the solve itself
runs where a signal can stop it (:mod:`odtk.solvers`), and what it had found comes back. When
the solver ends with nothing better than the start (the heuristic's diagram, the starting tree
or the majority leaf), the start is the result: proven optimal when the cut-off model is
infeasible, otherwise not proven. A solver that ends in an error still returns the start.
Every result is then checked against the models the solve holds (the start, the majority leaf):
the best of them is returned, a bound one of them beats is dropped, and a proof one of them
refutes is none (termination ``error``), after one more solve without the MIP start when the
proof came from it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGCCompanion

from odtk.budget import Budget
from odtk.compiled import compile_instance, has_compiler
from odtk.exceptions import ConfigError, OdtkWarning, SelfCheckError, SolveError
from odtk.models import DecisionGraph
from odtk.pipeline.check import PROOFS, better, check_routing, refuting, self_check
from odtk.pipeline.encode import Problem, check_model_size
from odtk.pipeline.methods import side_constraints_on
from odtk.pipeline.start import Start, majority_leaf
from odtk.solvers import SolverOptions, SolverOutcome, get_spec, solve_instance
from odtk.warn import warn

RESERVE_SHARE, RESERVE_SECONDS = 0.05, 0.5  # kept from the solver for decoding and checking


@dataclass
class MilpResult:
    """What the MILP step returns: the model, the solver's outcome (None if never solved), the
    termination, the model's objective and the bound (None: none stated, or one refuted)."""

    graph: DecisionGraph
    outcome: SolverOutcome | None
    build_time: float
    termination: str
    objective: float
    bound: float | None


class _BuildTimeout(BaseException):
    """Raised by the alarm when building a MILP outlasts the time limit (a BaseException, as
    KeyboardInterrupt is, so that Pyomo's ``except Exception`` does not turn it into another error)."""


@contextlib.contextmanager
def _collection_paused():
    """No garbage collection while Pyomo builds (as Pyomo's ``PauseGC``), robust to the alarm:
    Pyomo's own ``PauseGC`` count, which an alarm between its steps leaves raised, is restored."""
    enabled, depth = gc.isenabled(), PauseGCCompanion._stack_depth
    gc.disable()
    try:
        yield
    finally:
        PauseGCCompanion._stack_depth = depth
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _build_deadline(seconds: float | None):
    """Stop a MILP build that outlasts ``seconds`` with a one-line SolveError (in the main thread
    of a system with SIGALRM; elsewhere the build runs to its end, then the limit is checked)."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    if seconds is None or not hasattr(signal, "setitimer") or not in_main_thread:
        yield
        return

    fired = []

    def expire(*_):
        fired.append(True)
        raise _BuildTimeout

    def not_the_alarm(record: logging.LogRecord) -> bool:  # Pyomo logs the components it was building
        return "_BuildTimeout" not in record.getMessage()

    pyomo_log = logging.getLogger("pyomo.core")
    previous = signal.signal(signal.SIGALRM, expire)
    pyomo_log.addFilter(not_the_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except Exception:
        if fired:  # the alarm interrupted code that wrapped it in an error of its own
            raise _BuildTimeout from None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        pyomo_log.removeFilter(not_the_alarm)


def _satisfies_constraints(instance, tolerance: float = 1e-6) -> bool:
    """True when the values loaded into ``instance`` meet every active constraint."""
    if (form := getattr(instance, "form", None)) is not None:  # a compiled instance
        activity = form.A @ np.nan_to_num(instance.values)
        return bool(np.all(activity >= form.row_lower - tolerance) and np.all(activity <= form.row_upper + tolerance))
    for constraint in instance.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(constraint.body)
        if constraint.has_lb() and body < pyo.value(constraint.lower) - tolerance:
            return False
        if constraint.has_ub() and body > pyo.value(constraint.upper) + tolerance:
            return False
    return True


def solver_options(options: SolverOptions, budget: Budget) -> SolverOptions:
    """``options`` with the time left, less the reserve for decoding and checking, as the limit."""
    left = budget.remaining()
    if left is None:
        return dataclasses.replace(options, budget=budget)
    reserve = max(RESERVE_SECONDS, RESERVE_SHARE * left)
    return dataclasses.replace(options, time_limit=max(left - reserve, 0.01), budget=budget)


def build(problem: Problem, shape: nx.DiGraph, hyper: dict, budget: Budget, handoff: str = "native"):
    """The formulation's instance, or None when building outlasted the budget: compiled from
    arrays (:mod:`odtk.compiled`) for the native hand-off where the formulation has a compiler,
    else built by Pyomo."""
    module = problem.module
    compiled = handoff == "native" and has_compiler(module)
    check_model_size(problem, shape, compiled)
    with budget.stage("building"):
        try:
            data = module.make_data(problem.X, problem.y, shape, len(problem.classes), **hyper, **problem.extra)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if compiled:
            instance = compile_instance(module, data, problem.X, problem.y, shape, len(problem.classes), **hyper,
                                        **problem.extra)
            return None if budget.expired() else instance
        left = budget.remaining()
        try:
            with _collection_paused(), _build_deadline(None if left is None else max(left, 1e-3)):
                instance = module.build_model().create_instance(data)
        except _BuildTimeout:
            return None
    return None if budget.expired() else instance


def run(problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions,
        handoff: str, start: Start, steps: dict, budget: Budget) -> MilpResult:
    """Build, (warm-start,) solve, decode and self-check; ``start`` is the model to beat. The result
    is checked against the models the solve holds (:func:`_checked`); a proof found from the MIP
    start that one of them refutes is sought once more without the start (SCIP 10 once proved its
    start optimal when the majority leaf scored better)."""
    began = time.perf_counter()
    instance = build(problem, shape, hyper, budget, handoff)
    build_time = time.perf_counter() - began
    if instance is None:
        return _build_timed_out(start, steps, build_time)
    budget.progress.note(f"built the MILP in {build_time:.1f}s; {solver} solving"
                         + (f" for at most {budget.remaining():.1f}s" if budget.remaining() is not None else ""))
    passed = handoff == "native" and _load_start(instance, problem, hyper, start, steps)  # pyomo: no MIP start
    known = _known_models(problem, shape, hyper, start, passed)
    found = _solved(instance, problem, shape, hyper, solver, options, handoff, start, passed, steps, budget,
                    build_time)
    rival = refuting(problem.module, found.termination, found.bound, [model.objective for model in known])
    if passed and rival is not None and found.termination in PROOFS:
        steps["milp_with_start"] = {**steps.pop("milp"), "refuted_by": _name(known[rival])}
        budget.progress.note(f"{solver}'s proof from the {_name(start)} is refuted by the "
                             f"{_name(known[rival])}: solving again without the start")
        again = _solved(instance, problem, shape, hyper, solver, options, handoff, start, False, steps, budget,
                        build_time, found)
        found = _timed_with(again, found) if again is not found else found
    return _checked(found, known, problem.module, solver, steps)


def _timed_with(again: MilpResult, first: MilpResult) -> MilpResult:
    """``again`` with the hand-off and solve times of the ``first`` solve added to its own."""
    assert again.outcome is not None and first.outcome is not None, "both were solved"
    outcome = dataclasses.replace(again.outcome, handoff_time=again.outcome.handoff_time + first.outcome.handoff_time,
                                  solve_time=again.outcome.solve_time + first.outcome.solve_time)
    return dataclasses.replace(again, outcome=outcome)


def _solved(instance, problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions,
            handoff: str, start: Start, passed: bool, steps: dict, budget: Budget, build_time: float,
            before: MilpResult | None = None) -> MilpResult:
    """One solve (from the start when ``passed``), decoded and self-checked; a solve that finds
    nothing keeps the start, or the result ``before`` it when it solves again."""
    with budget.stage("solving"):
        outcome, cut_report = _solve(instance, problem, hyper, solver, solver_options(options, budget), handoff,
                                     start if passed else None)
    steps["milp"] = {"termination": outcome.termination, "seconds": outcome.solve_time,
                     "objective": outcome.objective, "bound": outcome.bound, "nodes": outcome.nodes}
    if isinstance(cut_report, dict):
        steps["milp"]["user_cuts"] = cut_report
    elif cut_report is not None:
        steps["milp"].update(dataclasses.asdict(cut_report))
    with budget.stage("checking"), budget.waiting():
        if not outcome.has_solution:
            return before or _start_kept(problem, hyper, solver, outcome, start, passed, steps, build_time)
        return _decoded(instance, problem, shape, hyper, solver, outcome, build_time)


def _known_models(problem: Problem, shape: nx.DiGraph, hyper: dict, start: Start, passed: bool) -> list[Start]:
    """The models the solve holds that are models of the MILP: the start when it is the MIP start
    (it meets the side constraints) and, without side constraints, the start and the majority leaf."""
    if side_constraints_on(problem.module, hyper):
        return [start] if passed else []
    if start.origin == "leaf":
        return [start]
    graph, step = majority_leaf(problem, shape, hyper)
    return [start, Start(graph, "leaf", step["objective"])]


def _load_start(instance, problem: Problem, hyper: dict, start: Start, steps: dict) -> bool:
    """Load the start into the instance's variables; False when it is not a MIP start."""
    module = problem.module
    if not start.passed_to_solver:
        return False
    try:
        module.warm_start(instance, start.graph.graph, problem.X)
    except ValueError as exc:
        if start.origin == "warm_start":
            raise ConfigError(f"The warm_start tree does not fit this model: {exc}") from None
        raise SelfCheckError(f"Self-check failed: the heuristic diagram does not fit the MILP ({exc})") from None
    fits = not side_constraints_on(module, hyper) or _satisfies_constraints(instance)
    steps[start.origin]["warm_start"] = fits  # a start breaking a side constraint: no start, no cutoff
    return fits


def _solve(instance, problem: Problem, hyper: dict, solver: str, options: SolverOptions, handoff: str,
           start: Start | None):
    """The solver's outcome and the cut report (BendersOCT's rounds, FlowOCT's user cuts)."""
    from odtk.decomposition import solve_with_cuts

    module = problem.module
    capabilities = get_spec(solver).capabilities
    if hasattr(module, "separate"):  # BendersOCT: no cutoff on a master being cut
        return solve_with_cuts(instance, module, solver, options, handoff, warm_start=start is not None)
    cutoff = None
    if start is not None and capabilities["cutoff"]:
        cutoff = start.objective + (1e-6 if module.SENSE == "minimize" else -1e-6)
    user_cuts, cut_report = _user_cuts(instance, module, hyper, handoff, capabilities)
    outcome = solve_instance(instance, solver, options, handoff=handoff,
                             warm_start=start is not None and capabilities["warm_start"],
                             cutoff=cutoff, user_cuts=user_cuts)
    return outcome, cut_report


def _user_cuts(instance, module, hyper: dict, handoff: str, capabilities: dict
               ) -> tuple[Callable[[], list] | None, dict | None]:
    """FlowOCT's cuts (``cuts="on"``), counted: separations (rounds) and the cuts they return."""
    if not (hasattr(module, "separate_cuts") and hyper.get("cuts") == "on"):
        return None, None
    in_tree = handoff == "native" and capabilities["user_cuts"]
    counts: dict[str, Any] = {"scheme": "branch_and_bound" if in_tree else "root", "cuts": 0, "rounds": 0}

    def counted() -> list:
        found = module.separate_cuts(instance)
        counts["rounds"] += 1
        counts["cuts"] += len(found)
        return found

    return counted, counts


def _build_timed_out(start: Start, steps: dict, build_time: float) -> MilpResult:
    """The MILP step when building outlasted the budget: the start, not proven."""
    warn(f"Building the MILP did not finish within the time limit: the {_name(start)} is returned, "
         "not proven optimal; raise --time-limit or make the model smaller (fewer rows, thresholds "
         "or nodes).", OdtkWarning)
    steps["milp"] = {"termination": "time_limit", "seconds": 0.0, "objective": None, "bound": None}
    return MilpResult(start.graph, None, build_time, "time_limit", start.objective, None)


def _start_kept(problem: Problem, hyper: dict, solver: str, outcome: SolverOutcome, start: Start,
                passed: bool, steps: dict, build_time: float) -> MilpResult:
    """The solver found nothing (better than the start's cutoff): the start is the result. A claim
    of infeasibility without a cutoff and without side constraints is left to :func:`_checked`."""
    constraints = [f"{name}={hyper[name]}" for name in side_constraints_on(problem.module, hyper)]
    if constraints and not passed and outcome.termination == "infeasible":
        raise SolveError(f"{solver} proved the model infeasible: no model meets the side "
                         f"constraints ({', '.join(constraints)}); relax them.")
    if constraints and not passed and outcome.termination != "interrupted":
        raise SolveError(f"{solver} found no model meeting the side constraints ({', '.join(constraints)}) "
                         f"within {_limit(outcome.termination)}; raise {_raised(outcome.termination)} or relax them.")
    proven = passed and outcome.termination in ("infeasible", "optimal")  # the cut-off model is empty
    steps["milp"]["bound"] = start.objective if proven else outcome.bound
    termination = "optimal" if proven else outcome.termination
    if termination == "error":
        warn(f"{solver} stopped without a solution ({outcome.message}): the {_name(start)} is "
             "returned, not proven optimal; try another solver or pass --log to see its output.",
             OdtkWarning)
    elif not proven and termination not in ("interrupted", "infeasible"):
        warn(f"{solver} found nothing better than the {_name(start)} within {_limit(termination)}: that "
             "model is returned, not proven optimal.", OdtkWarning)
    return MilpResult(start.graph, outcome, build_time, termination, start.objective,
                      start.objective if proven else outcome.bound)


def _decoded(instance, problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, outcome: SolverOutcome,
             build_time: float) -> MilpResult:
    """The solver's model decoded and self-checked."""
    module = problem.module
    graph = problem.graph(module.decode(instance))
    if hasattr(module, "flow_rows"):
        check_routing(module.flow_rows(instance), graph, problem.X, solver, hyper)
    expected, _ = problem.score(graph, shape, hyper)
    self_check(module, expected, outcome, solver, hyper)
    if outcome.termination not in ("optimal", "interrupted"):
        warn(f"{solver} stopped with status {outcome.termination}: the model is feasible "
             "but not proven optimal.", OdtkWarning)
    return MilpResult(graph, outcome, build_time, outcome.termination, expected, outcome.bound)


def _checked(found: MilpResult, known: list[Start], module, solver: str, steps: dict) -> MilpResult:
    """``found`` against the models the solve holds (``known``): the best of them is returned when it
    scores better than ``found``'s model. A bound that one of them (or ``found``'s model) beats is
    false: no bound is reported (the result takes the trivial one, the ideal), and a proof (optimal, within
    the gap, infeasible) it refutes is none: termination ``error``. Either way a warning names the
    solver and the model."""
    models = [(found.objective, f"model {solver} returned", found.graph),
              *((model.objective, _name(model), model.graph) for model in known)]
    objective, _, graph = models[0]
    for score, _, other in models[1:]:
        if better(module, score, objective):
            objective, graph = score, other
    rival = refuting(module, found.termination, found.bound, [score for score, _, _ in models])
    if rival is None:
        return dataclasses.replace(found, graph=graph, objective=objective)
    score, name, _ = models[rival]
    steps["milp"]["refuted_by"] = name
    if found.termination in PROOFS:
        claim = ("the model infeasible" if found.termination == "infeasible"
                 else f"a bound of {found.bound:.10g} ({found.termination})")
        warn(f"{solver} claimed {claim}, but the {name} scores {score:.10g}: {solver}'s proof is false; the "
             f"best model known is returned, not proven optimal (termination error); try another solver.",
             OdtkWarning)
        termination = "error"
    else:
        warn(f"{solver} reported a bound of {found.bound:.10g}, but the {name} scores {score:.10g}: the bound "
             "is false; the trivial bound (the ideal objective) is reported.", OdtkWarning)
        termination = found.termination
    outcome = found.outcome and dataclasses.replace(found.outcome, message=f"{found.outcome.message}; "
                                                    f"refuted by the {name} ({score:.10g})")
    return MilpResult(graph, outcome, found.build_time, termination, objective, None)


def _limit(termination: str) -> str:
    """The limit a solve stopped at, in words."""
    return "its node limit" if termination == "node_limit" else "the time limit"


def _raised(termination: str) -> str:
    """How to raise the limit a solve stopped at."""
    return "the node limit in the solver's settings" if termination == "node_limit" else "--time-limit"


def _name(start: Start) -> str:
    return {"heuristic": "heuristic's diagram", "warm_start": "starting tree",
            "leaf": "majority-class leaf"}[start.origin]
