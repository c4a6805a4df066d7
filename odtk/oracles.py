"""MILP solvers as SAT oracles for the clause-based tree inference (``--model sat-*``)."""
from __future__ import annotations

import time

from pyomo.common.gc_manager import PauseGC

from odtk.budget import BudgetView
from odtk.engines.sat_inference import TimeLimitReached
from odtk.exceptions import SolveError
from odtk.formulations import sat_clauses
from odtk.solvers import SolverOptions, solve_instance


class MilpOracle:
    """Answers each satisfiability query by solving the clauses as a 0/1 feasibility model.

    The clauses seen so far are kept; every query builds a fresh instance (assumptions as unit
    clauses) and hands it to ``solver`` through the registry, so it works with any MILP solver.
    The solve's budget (``options.budget``) and the registry's settings for the model
    (``options.settings``) go with every query (the query's own incumbent, bound and nodes are
    not reported: they are not the search's): a query stopped by the budget, or by the deadline,
    raises :class:`TimeLimitReached` unless the solver had found an assignment.
    """

    def __init__(self, solver: str, options: SolverOptions, deadline: float):
        self.solver, self.options, self.deadline = solver, options, deadline
        self.clauses: list[list[int]] = []
        self.variables = 0

    def add_clauses(self, clauses: list[list[int]]) -> None:
        self.clauses.extend(clauses)
        self.variables = max([self.variables, *(abs(v) for clause in clauses for v in clause)])

    def solve(self, assumptions: list[int]) -> set[int] | None:
        remaining = self.deadline - time.monotonic()
        budget = self.options.budget
        if remaining <= 0 or (budget is not None and budget.should_stop()):
            raise TimeLimitReached
        clauses = self.clauses + [[literal] for literal in assumptions]
        with PauseGC():
            instance = sat_clauses.build_model().create_instance(
                sat_clauses.make_data(clauses, self.variables))
        limit = None if remaining == float("inf") else remaining
        quiet = None if budget is None else BudgetView(budget, ("incumbent", "bound", "gap", "nodes"))
        options = SolverOptions(time_limit=limit, threads=self.options.threads, seed=self.options.seed,
                                log=self.options.log, budget=quiet, settings=self.options.settings)
        outcome = solve_instance(instance, self.solver, options)
        if outcome.termination == "infeasible":
            return None
        if outcome.has_solution:  # any solution of the feasibility model answers the query
            return sat_clauses.true_variables(instance)
        if outcome.termination in ("time_limit", "interrupted"):
            raise TimeLimitReached
        raise SolveError(f"{self.solver} stopped without answering a SAT query "
                         f"({outcome.termination}: {outcome.message}).")
