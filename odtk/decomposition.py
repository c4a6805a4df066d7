"""Lazy cuts for decomposition formulations (BendersOCT) on every solver.

A formulation with a ``separate(instance) -> {key: violated inequality}`` function and a
ConstraintList ``cuts`` is solved by one of two schemes (on a compiled instance, whose
inequalities are rows (columns, coefficients, rhs), ``cuts`` is a list of rows with ``add``):

* ``lazy`` (solvers with lazy-constraint callbacks: Gurobi, CPLEX): one branch and bound;
  at every new incumbent the solver's callback loads it into the instance, separates, and
  adds the violated cuts as lazy constraints. The cuts are kept in ``cuts`` afterwards.
* ``iterative`` (HiGHS, CBC): solve the master, separate at its integral solution (HiGHS: at
  every MIP solution it found on the way, through its solution callback), add every violated
  cut, make the held solution feasible again (``repair``) and re-solve warm-started from the
  best repaired solution so far, until no cut is violated. The master is a relaxation, so each
  round's bound is valid and the last round, with no violated cut, is optimal. Where the time
  limit ends the loop first, the best repaired solution of all rounds is returned as an
  unproven incumbent with the loop's best bound. Through the native hand-off the instance is
  compiled once and the cuts become rows appended to that standard form (HiGHS keeps one model
  and adds them; CBC re-reads the grown form); through the Pyomo hand-off every round compiles
  the instance again. The cuts are also kept in ``cuts``.

Both schemes answer a stop (``options.budget``: a signal, its deadline). The lazy scheme's solver
returns its incumbent, which meets every cut. The iterative loop looks at the budget between
rounds, and a signal that ends a master solve (the solver returns) or arrives in the loop's own
Python code (:class:`~odtk.budget.Stopped`) ends the loop: the best repaired solution of all
rounds is returned as ``interrupted`` (``time_limit`` at the deadline) with the loop's bound.
Progress goes to the budget: the rounds and cuts, the loop's best repaired objective and bound
(a master's own incumbents are not reported: they may violate cuts not found yet).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables

from odtk.budget import BudgetView, Stopped
from odtk.solvers import (SolverOptions, SolverOutcome, backends, check_licence, get_spec, require_solver,
                          solve_instance, to_standard_form, verified_termination)
from odtk.solvers.highs import GrowingForm
from odtk.solvers.isolated import Watch
from odtk.solvers.solve import checked_outcome
from odtk.solvers.standard_form import append_rows, lazy_rows, load_values


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
    """One branch and bound with the cuts separated in the solver's lazy-constraint callback
    at integral solutions and, where the solver takes user cuts and the formulation separates
    fractional points (``separate_fractional``), at the relaxations of its nodes too. Every
    cut added is kept in ``cuts`` afterwards."""
    added: list = []
    watch = Watch(options.budget)

    def recorded(separate: Callable[[object], dict]) -> Callable[[], list]:
        def found() -> list:
            cuts = list(separate(instance).values())
            added.extend(cuts)
            watch.report(cuts=len(added))
            return cuts

        return found

    fractional: Callable[[object], dict] | None = getattr(module, "separate_fractional", None)
    if not get_spec(solver).capabilities["user_cuts"]:
        fractional = None  # the solver takes no user cuts: lazy constraints only
    outcome = solve_instance(instance, solver, options, warm_start=warm_start, lazy=recorded(module.separate),
                             user_cuts=None if fractional is None else recorded(fractional))
    for cut in added:
        instance.cuts.add(cut)
    return outcome, CutReport("lazy", len(added), 1)


def _solve_iterative(instance, module: ModuleType, solver: str, options: SolverOptions,
                     handoff: str, warm_start: bool) -> tuple[SolverOutcome, CutReport]:
    """Repeated master solves, each adding the cuts violated by the previous solution, until none
    is violated, the time is up or a stop is asked for."""
    began = time.perf_counter()
    deadline = None if options.time_limit is None else began + options.time_limit
    budget = options.budget
    master = _OneModel(instance, solver) if handoff == "native" else _Recompiled(instance, solver, handoff)
    master_options = options if budget is None else dataclasses.replace(
        options, budget=BudgetView(budget, ("incumbent",)))
    warm_start_capable = handoff == "native" and get_spec(solver).capabilities["warm_start"]
    loop = _Loop(module.SENSE)
    start = _values(master.columns) if warm_start else None
    outcome, violated = None, None
    seen: dict = {}  # cuts violated by the MIP solutions met during the round under way

    def remember_separated() -> None:
        _remember(module.separate(instance), seen)

    try:
        while True:
            remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.01)
            seen.clear()
            outcome = master.solve(dataclasses.replace(master_options, time_limit=remaining), start,
                                   remember_separated)
            loop.count(outcome)
            if not outcome.has_solution:
                violated = None
                break
            violated = module.separate(instance)
            if violated:
                _remember(violated, seen)
                master.add(list(seen.values()))
                loop.cuts += len(seen)
            module.repair(instance, violated)
            loop.offer(_values(master.columns), pyo.value(instance.objective))
            loop.report(budget)
            out_of_time = deadline is not None and time.perf_counter() >= deadline
            if (not violated or out_of_time or outcome.termination != "optimal"
                    or (budget is not None and budget.should_stop())):
                break
            start = loop.best if warm_start_capable else None
    except Stopped:  # a signal in the loop's own code: the best repaired solution so far, if any
        if loop.best is None or outcome is None:  # a best solution comes from a solved master
            raise
    report = CutReport(master.scheme, loop.cuts, loop.rounds)
    return _result(loop, outcome, violated, master, solver, options, time.perf_counter() - began), report


class _OneModel:
    """The master compiled once; each round's cuts become rows appended to that standard form."""

    def __init__(self, instance, solver: str) -> None:
        began = time.perf_counter()
        self.instance, self.spec, self.solver = instance, require_solver(solver), solver
        self.form = GrowingForm.of(to_standard_form(instance))
        self.columns = self.form.columns
        self.compile_time = time.perf_counter() - began  # counted with the first round's hand-off
        self.pending: list = []
        self.to_rows = lazy_rows(self.form, lambda: self.pending)
        backend = backends()[self.spec.backend]
        self.scheme = (f"iterative (one {solver} model, rows added)" if getattr(backend, "KEEPS_GROWING_MODEL", False)
                       else f"iterative (rows added to one standard form, read anew by {solver} each round)")

    def add(self, cuts: list) -> None:
        """The inequalities ``cuts`` (Pyomo's, or a compiled instance's rows) as rows of the form and in
        the instance's ``cuts``."""
        self.pending = cuts
        append_rows(self.form, self.to_rows(_values(self.columns)))
        for cut in cuts:
            self.instance.cuts.add(cut)

    def solve(self, options: SolverOptions, start: np.ndarray | None,
              on_solution: Callable[[], None]) -> SolverOutcome:
        """One solve of the form as it stands, checked as ``solve_instance`` checks its solves;
        the solution (if any) is loaded into the instance."""
        form, spec = self.form, self.spec
        form.start = start

        def loaded_then_called(values: np.ndarray) -> None:
            load_values(form, values)
            on_solution()

        form.on_solution = loaded_then_called
        check_licence(spec, form.size)
        began = time.perf_counter()
        raw = backends()[spec.backend].solve(form, spec, options)
        compile_time, self.compile_time = self.compile_time, 0.0
        return checked_outcome(form, spec, options, raw, time.perf_counter() - began, compile_time)


class _Recompiled:
    """The master through the Pyomo hand-off: every round compiles the instance with its cuts."""

    scheme = "iterative (the instance compiled again each round)"

    def __init__(self, instance, solver: str, handoff: str) -> None:
        self.instance, self.solver, self.handoff = instance, solver, handoff
        self.columns = list(instance.component_data_objects(pyo.Var))

    def add(self, cuts: list) -> None:
        for cut in cuts:
            self.instance.cuts.add(cut)

    def solve(self, options: SolverOptions, start: np.ndarray | None,
              on_solution: Callable[[], None]) -> SolverOutcome:
        if start is not None:
            _load(self.columns, start)
        return solve_instance(self.instance, self.solver, options, handoff=self.handoff,
                              warm_start=start is not None, on_solution=on_solution)


@dataclasses.dataclass
class _Loop:
    """What the rounds gathered: their best bound, best repaired incumbent, totals."""

    sense: str
    bound: float | None = None
    best: np.ndarray | None = None
    best_objective: float | None = None
    cuts: int = 0
    rounds: int = 0
    handoff_time: float = 0.0
    solve_time: float = 0.0
    nodes: int | None = None

    def count(self, outcome: SolverOutcome) -> None:
        self.rounds += 1
        self.handoff_time += outcome.handoff_time
        self.solve_time += outcome.solve_time
        self.bound = _tighter(self.bound, outcome.bound, self.sense)
        if outcome.nodes is not None:
            self.nodes = (self.nodes or 0) + outcome.nodes

    def report(self, budget: Any) -> None:
        """The loop's rounds, cuts, best repaired objective and bound to ``budget`` (if any)."""
        if budget is not None:
            budget.report(rounds=self.rounds, cuts=self.cuts, incumbent=self.best_objective, bound=self.bound)

    def offer(self, values: np.ndarray, objective: float) -> None:
        """Keep ``values`` if no worse than the best so far (a tie goes to the later round)."""
        worse = self.best_objective is not None and (
            objective < self.best_objective if self.sense == "maximize" else objective > self.best_objective)
        if not worse:
            self.best, self.best_objective = values, objective


def _result(loop: _Loop, last: SolverOutcome, violated: dict | None, master, solver: str,
            options: SolverOptions, seconds: float) -> SolverOutcome:
    """The loop's outcome: the best repaired incumbent (loaded into the instance), the loop's
    best bound and totals; "optimal" only when the last master is optimal and cut-free and the
    loop's bound meets its objective; "interrupted" when a signal ended the loop."""
    totals: dict[str, Any] = dict(bound=loop.bound, handoff_time=loop.handoff_time, solve_time=loop.solve_time,
                                  nodes=loop.nodes)
    stopped = last.termination in ("time_limit", "node_limit", "interrupted")
    if loop.best is None or (not last.has_solution and not stopped):
        return dataclasses.replace(last, **totals)
    _load(master.columns, loop.best)
    budget = options.budget
    proven = last.has_solution and not violated and last.termination == "optimal"
    if proven:
        termination = "optimal"
    elif last.termination == "interrupted" or (budget is not None and budget.stop_requested):
        termination = "interrupted"
    else:
        limit = "node_limit" if last.termination == "node_limit" else "time_limit"
        termination = limit if violated or not last.has_solution else last.termination
    termination = verified_termination(solver, termination, loop.best_objective, loop.bound, options, seconds)
    return dataclasses.replace(last, **totals, termination=termination, has_solution=True,
                               objective=loop.best_objective)


def _values(columns: list) -> np.ndarray:
    """The values the variables ``columns`` hold (NaN where none)."""
    return np.array([np.nan if v.value is None else v.value for v in columns], dtype=float)


def _load(columns: list, values: np.ndarray) -> None:
    for var, value in zip(columns, values):
        var.set_value(None if np.isnan(value) else float(value), skip_validation=True)


def _remember(violated: dict, seen: dict) -> None:
    """Keep each distinct cut once, keyed by its sample and the variables it bounds with."""
    for key, cut in violated.items():
        seen.setdefault((key, _support(cut)), cut)


def _support(cut) -> tuple:
    """The variables of a cut: a compiled instance's row (columns, coefficients, rhs) by its
    columns, a Pyomo inequality ``lhs <= rhs`` by those of its right-hand side."""
    if isinstance(cut, tuple):
        return tuple(sorted(cut[0].tolist()))
    return tuple(sorted(id(v) for v in identify_variables(cut.args[1])))


def _tighter(old: float | None, new: float | None, sense: str) -> float | None:
    if old is None or new is None:
        return new if old is None else old
    return min(old, new) if sense == "maximize" else max(old, new)
