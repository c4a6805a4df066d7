"""Stages 3–5 for odtk's own engines: the CP search and the SAT inference, then their check.

An engine runs while the main thread waits (:meth:`~odtk.budget.Budget.waiting`): a signal
only marks the budget, the engine sees it and returns its best tree with the bound it proved.
"""
from __future__ import annotations

import dataclasses

import networkx as nx

from odtk.budget import Budget
from odtk.exceptions import ConfigError, DataError, OdtkWarning, SelfCheckError, SolveError
from odtk.heap_trees import nested_tree
from odtk.models import DecisionGraph
from odtk.pipeline.encode import Problem
from odtk.solvers import SolverOptions, get_spec
from odtk.warn import warn

REPORTED = ("tree", "perfect", "objective", "lower_bound", "status", "seconds", "error", "limit")


def run(problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions,
        steps: dict, budget: Budget) -> tuple[DecisionGraph, str]:
    """Run the engine, then check that its tree scores what the engine reported."""
    with budget.stage("searching"), budget.waiting():
        found = _found(problem, shape, hyper, solver, options, budget)
    with budget.stage("checking"), budget.waiting():
        graph = problem.graph(nested_tree(found.tree))
        objective, _ = problem.score(graph, shape, hyper)
    if objective != found.objective:
        raise SelfCheckError(f"Self-check failed: the search reported {found.objective} but its "
                             f"tree scores {objective:g} on the training data; report this model.")
    statistics = {field.name: getattr(found, field.name) for field in dataclasses.fields(found)
                  if field.name not in REPORTED}  # not asdict: it would copy every tree, node by node
    steps["search"] = {"termination": found.status, "seconds": found.seconds, "objective": objective,
                       "bound": found.lower_bound, **statistics}
    if found.status in ("time_limit", "memory_limit"):
        limit = "time limit" if found.status == "time_limit" else "memory it may take (its cache is full)"
        warn(getattr(found, "limit", "") or
             f"The search stopped at the {limit}: the tree is the best found, not proven optimal.", OdtkWarning)
    return graph, found.status


def _found(problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions,
           budget: Budget):
    """The engine's result (its own errors become one-line odtk errors)."""
    from odtk.engines import sat_inference

    module = problem.module
    backend = {}
    if module.SOLVER is None:  # the clause models ask a SAT solver, or a MILP solver, each query
        from odtk.oracles import MilpOracle

        milp_options = dataclasses.replace(options, budget=budget)
        backend["oracle"] = solver if get_spec(solver).kind == "sat" else (
            lambda deadline: MilpOracle(solver, milp_options, deadline))
    try:
        return module.search(problem.X, problem.y, len(problem.classes), shape.graph["depth"],
                             time_limit=budget.remaining(), budget=budget, **hyper, **backend, **problem.weights)
    except sat_inference.InconsistentData as exc:
        i, j = exc.rows
        first, second = problem.classes[problem.y[[i, j]]]
        raise DataError(f"No tree classifies the training data perfectly: rows {i} and {j} have the "
                        f"same features but classes {first} and {second}; remove one (or use finer "
                        "thresholds).") from None
    except sat_inference.TimeLimitReached:
        raise SolveError(f"No consistent tree of depth ≤ {shape.graph['depth']} found within the time limit; "
                         "raise --time-limit or --depth, or leave --depth out (a grown CART tree then "
                         "answers).") from None
    except sat_inference.ClausesTooLarge as exc:
        raise DataError(f"No consistent tree found: {exc}.") from None
    except module.InvalidOptions as exc:  # other errors are bugs: they keep their traceback
        raise ConfigError(str(exc)) from None
