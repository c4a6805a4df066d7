"""MILP solvers as SAT oracles for the clause-based tree inference (``--model sat-*``)."""
from __future__ import annotations

import time

import numpy as np

from odtk.budget import BudgetView
from odtk.compiled import sat_clauses
from odtk.engines.sat_inference import TimeLimitReached
from odtk.exceptions import SolveError
from odtk.solvers import SolverOptions, solve_instance


class MilpOracle:
    """Answers each satisfiability query by solving the clauses as a 0/1 feasibility model.

    The clauses seen so far are kept as arrays; every query compiles a fresh instance from them
    (the model of ``odtk.formulations.sat_clauses``, built from arrays by
    :mod:`odtk.compiled.sat_clauses`, so that no Pyomo build holds a stop back; assumptions as
    unit clauses) and hands it to ``solver`` through the registry, so it works with any MILP
    solver. The solve's budget (``options.budget``) and the registry's settings for the model
    (``options.settings``) go with every query (the query's own incumbent, bound and nodes are
    not reported: they are not the search's): a query stopped by the budget, or by the deadline,
    raises :class:`TimeLimitReached` unless the solver had found an assignment.
    """

    def __init__(self, solver: str, options: SolverOptions, deadline: float):
        self.solver, self.options, self.deadline = solver, options, deadline
        self.blocks: list[np.ndarray] = []
        self.variables = 0

    def add_clauses(self, clauses: np.ndarray) -> None:
        """Keep the clauses of a 2-d array of literals, a clause per row."""
        block = np.asarray(clauses, dtype=np.int32)
        self.blocks.append(block)
        self.variables = max(self.variables, int(np.abs(block).max(initial=0)))

    def footprint(self, clauses: int, literals: int) -> float:
        """Bytes a query over ``clauses`` clauses of ``literals`` literals takes, the solver's included."""
        return sat_clauses.BYTES_PER_LITERAL * literals

    def solve(self, assumptions: list[int]) -> set[int] | None:
        self._time_left()
        units = np.asarray(assumptions, dtype=np.int32).reshape(-1, 1)
        variables = max(self.variables, int(np.abs(units).max(initial=0)))
        instance = sat_clauses.compile_clauses([*self.blocks, units], variables)
        remaining = self._time_left()  # again: millions of clauses take seconds to compile
        limit = None if remaining == float("inf") else remaining
        budget = self.options.budget
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

    def _time_left(self) -> float:
        """The seconds left for the query; :class:`TimeLimitReached` when it must stop."""
        remaining = self.deadline - time.monotonic()
        budget = self.options.budget
        if remaining <= 0 or (budget is not None and budget.should_stop()):
            raise TimeLimitReached
        return remaining
