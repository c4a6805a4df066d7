"""Lazy cuts for decomposition formulations (BendersOCT) on every solver.

A formulation with a ``separate(instance) -> {key: violated inequality}`` function and a
ConstraintList ``cuts`` is solved by one of two schemes:

* ``lazy`` (solvers with lazy-constraint callbacks: Gurobi, CPLEX): one branch and bound;
  at every new incumbent the solver's callback loads it into the instance, separates, and
  adds the violated cuts as lazy constraints. The cuts are kept in ``cuts`` afterwards.
* ``iterative`` (HiGHS, CBC): solve the master, separate at its integral solution (HiGHS:
  at every MIP solution it found on the way, through its solution callback), add every
  violated cut, make the held solution feasible again (``repair``) and re-solve warm-started
  from it, until no cut is violated. The master is a relaxation, so each round's bound is
  valid and the last round, with no violated cut, is optimal. Where the time limit ends the
  loop first, the repaired solution is returned as an unproven incumbent.
"""
from __future__ import annotations

import dataclasses
import time
from types import ModuleType

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables

from odtk.solvers import SolverOptions, SolverOutcome, get_spec, solve_instance, verified_termination


@dataclasses.dataclass(frozen=True)
class CutReport:
    """How the cuts were generated: scheme, number of cuts and of master solves."""

    scheme: str
    cuts: int
    rounds: int


def solve_with_cuts(instance, module: ModuleType, solver: str, options: SolverOptions,
                    handoff: str = "native", warm_start: bool = False) -> tuple[SolverOutcome, CutReport]:
    """Solve ``instance`` of a lazy-cut formulation: lazily where the solver can, else iteratively.

    ``warm_start``: the values held by the instance (a feasible tree) start the first solve.
    """
    warm_start = warm_start and handoff == "native" and get_spec(solver).capabilities["warm_start"]
    if handoff == "native" and get_spec(solver).capabilities["lazy_callbacks"]:
        return _solve_lazy(instance, module, solver, options, warm_start)
    return _solve_iterative(instance, module, solver, options, handoff, warm_start)


def _solve_lazy(instance, module: ModuleType, solver: str, options: SolverOptions,
                warm_start: bool) -> tuple[SolverOutcome, CutReport]:
    """One branch and bound with the cuts separated in the solver's lazy-constraint callback."""
    added: list = []

    def separate() -> list:
        found = list(module.separate(instance).values())
        added.extend(found)
        return found

    outcome = solve_instance(instance, solver, options, warm_start=warm_start, lazy=separate)
    for cut in added:
        instance.cuts.add(cut)
    return outcome, CutReport("lazy", len(added), 1)


def _solve_iterative(instance, module: ModuleType, solver: str, options: SolverOptions,
                     handoff: str, warm_start: bool) -> tuple[SolverOutcome, CutReport]:
    """Repeated master solves, each adding the cuts violated by the previous solution."""
    began = time.perf_counter()
    deadline = None if options.time_limit is None else began + options.time_limit
    warm_start_capable = handoff == "native" and get_spec(solver).capabilities["warm_start"]
    sense = module.SENSE
    bound, cuts, rounds, handoff_time, solve_time = None, 0, 0, 0.0, 0.0
    warm = warm_start
    while True:
        remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.01)
        seen: dict = {}  # cuts violated by the MIP solutions met during this round
        outcome = solve_instance(instance, solver, dataclasses.replace(options, time_limit=remaining),
                                 handoff=handoff, warm_start=warm,
                                 on_solution=lambda: _remember(module.separate(instance), seen))
        rounds += 1
        handoff_time += outcome.handoff_time
        solve_time += outcome.solve_time
        bound = _tighter(bound, outcome.bound, sense)
        if not outcome.has_solution:
            return _with(outcome, bound, handoff_time, solve_time), CutReport("iterative", cuts, rounds)
        violated = module.separate(instance)
        if violated:
            _remember(violated, seen)
            for cut in seen.values():
                instance.cuts.add(cut)
            cuts += len(seen)
        module.repair(instance, violated)
        out_of_time = deadline is not None and time.perf_counter() >= deadline
        if not violated or out_of_time or outcome.termination != "optimal":
            objective = pyo.value(instance.objective)
            termination = outcome.termination if not violated else "time_limit"
            # the last master is optimal and cut-free: the loop's best bound must meet its objective
            termination = verified_termination(solver, termination, objective, bound, options,
                                               time.perf_counter() - began)
            return (_with(outcome, bound, handoff_time, solve_time, termination, objective),
                    CutReport("iterative", cuts, rounds))
        warm = warm_start_capable


def _remember(violated: dict, seen: dict) -> None:
    """Keep each distinct cut once, keyed by its sample and the variables it bounds with."""
    for key, cut in violated.items():
        seen.setdefault((key, tuple(sorted(id(v) for v in identify_variables(cut.args[1])))), cut)


def _tighter(old: float | None, new: float | None, sense: str) -> float | None:
    if old is None or new is None:
        return new if old is None else old
    return min(old, new) if sense == "maximize" else max(old, new)


def _with(outcome: SolverOutcome, bound, handoff_time: float, solve_time: float,
          termination: str | None = None, objective: float | None = None) -> SolverOutcome:
    """The last round's outcome with the loop's totals, best bound and final objective."""
    return dataclasses.replace(
        outcome, bound=bound, handoff_time=handoff_time, solve_time=solve_time,
        termination=termination or outcome.termination,
        objective=outcome.objective if objective is None else objective)
