"""Stage 5: the decoded model checked against what the solver or search reported.

Every solve is self-checked: the decoded model, re-scored on the training data, must reproduce
the objective the solver reported (:func:`self_check`), the rows must take the paths the
solver's flow variables gave them (:func:`check_routing`), no model the solve holds may beat
the solver's bound (:func:`refuting`: a proof odtk can refute is none), and a reported bound
never goes beyond the best objective any model could reach (:func:`honest_bound`), so the gap
means what it says.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import networkx as nx
import numpy as np

from odtk.exceptions import SelfCheckError
from odtk.models import DecisionGraph
from odtk.solvers import OPTIMALITY_TOLERANCE, SolverOutcome

SELF_CHECK_TOLERANCE = 1e-4
# the terminations that claim a proof: that no model beats the bound (optimal: the objective; within
# the gap asked for), or that no model exists
PROOFS = ("optimal", "gap_limit", "infeasible")


def better(module: ModuleType, a: float, b: float) -> bool:
    """True when objective ``a`` is strictly better than ``b`` for the formulation's sense."""
    return a > b if module.SENSE == "maximize" else a < b


def self_check(module: ModuleType, expected: float, outcome: SolverOutcome, solver: str,
                hyper: dict[str, Any]) -> float:
    """The decoded model's objective must match the solver's; returns the objective to report."""
    reported = outcome.objective
    assert reported is not None, "checked outcomes have a solution"
    tolerance = SELF_CHECK_TOLERANCE * max(1.0, abs(reported))
    if abs(expected - reported) <= tolerance:
        return expected
    if outcome.termination != "optimal" and (better(module, expected, reported)
                                             or hyper.get("integrality") == "relaxed"):
        # an unproven incumbent whose flows were not maximal (the model is better), or whose
        # relaxed variables (categorical, Proposition 3) are fractional: the model is the truth
        return expected
    raise SelfCheckError(
        f"Self-check failed: the decoded model scores {expected:.6g} on the training data but "
        f"{solver} reported {reported:.6g}; tighten the solver's tolerances or report this model.")


def refuting(module: ModuleType, termination: str, bound: float | None, scores: Sequence[float]) -> int | None:
    """Which of ``scores`` (the objectives of models the solve holds) refutes a result that ended
    with ``termination`` and ``bound``: the best of them, when it beats the bound by more than
    :data:`~odtk.solvers.OPTIMALITY_TOLERANCE` (times max(1, |bound|); a bound says that no model
    beats it) or, for a claim of infeasibility, in any case; None when none does."""
    if not scores:
        return None
    best = max(range(len(scores)), key=lambda i: scores[i] if module.SENSE == "maximize" else -scores[i])
    if termination == "infeasible":
        return best
    if bound is None:
        return None
    margin = OPTIMALITY_TOLERANCE * max(1.0, abs(bound))
    return best if better(module, scores[best], bound + (margin if module.SENSE == "maximize" else -margin)) else None


def check_routing(flows: dict, graph: DecisionGraph, X: np.ndarray, solver: str, hyper: dict) -> None:
    """The decoded model must send every training row through the nodes that the solver's flow
    variables send it through; a split margin within the solver's tolerances breaks this."""
    reached = graph.node_rows(X)
    stray = sorted({int(i) for node in flows.keys() | reached.keys()
                    for i in set(flows.get(node, ())).symmetric_difference(reached.get(node, ()))})
    if stray:
        fix = (f"raise epsilon (now {hyper['epsilon']:g}) above the solver's tolerances"
               if "epsilon" in hyper else "tighten the solver's tolerances")
        raise SelfCheckError(
            f"Self-check failed: {len(stray)} training row(s) (first: row {stray[0]}) take another "
            f"path through the decoded model than {solver}'s flow variables give them, as split "
            f"margins fall within the solver's tolerances; {fix}.")


def gap(objective: float, bound: float | None) -> float | None:
    if bound is None or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(abs(objective), 1e-10)


def honest_bound(module: ModuleType, bound: float | None, y: np.ndarray, skeleton: nx.DiGraph,
                 hyper: dict[str, Any], weights: dict[str, Any]) -> float | None:
    """``bound`` no better than the ideal objective: every row classified right with no split
    (FlowOCT: the rows' weight). A solver's bound beyond it (HiGHS reported 2618 for 398 rows),
    or no bound at all, only says the solver proved nothing sharper: the ideal is then the bound."""
    leaf = nx.DiGraph()
    leaf.add_node(1, label=0)
    ideal = module.objective_of(leaf, y, y, skeleton, **hyper, **weights)
    if bound is None or not math.isfinite(bound):
        return ideal
    return min(bound, ideal) if module.SENSE == "maximize" else max(bound, ideal)
