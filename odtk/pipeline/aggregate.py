"""Stage 1, continued, for the MILPs: rows the MILP cannot tell apart become one weighted row.

Two rows whose encoded features (the matrix the MILP reads), class and protected group coincide
take the same path through every tree or diagram and are classified alike. Every MILP counts
rows in its objective through the per-row weight ω_i (``sample_weight``), so such rows are
merged into one row whose weight is their number, or the sum of their sample weights: the same
optimum from fewer rows, hence fewer variables and constraints. The starts (CART, the CP search,
ODD's heuristic, the categorical model's greedy tree) see the merged rows with their weights.

Rows are kept apart where a constraint counts rows, not weights (a merged row would count once):

- OCT: ``min_leaf`` above 1 ((24.12) counts the rows of a leaf; ``min_leaf`` 0 or 1 only says
  whether a leaf is empty, which merging keeps);
- ODD: ``fairness`` ((19) counts the rows of each subgroup), stability, ``min_samples`` and
  ``min_share`` ((20) counts the rows through a node), and ``min_leaf`` above 1 (it counts the
  rows on each side of a node);
- categorical: ``min_rate`` (a ``rate`` other than ``"accuracy"``: (15) counts rows),
  ``min_leaf`` above 1 (counts a leaf's rows) and ``feature_selection="cart"`` (CART on a
  random share of the rows picks the groups).

FlowOCT, BendersOCT and BinOCT have no such constraint. The decoded model is scored and
self-checked on the original rows (:meth:`DistinctRows.score`).
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from odtk.models import DecisionGraph
from odtk.pipeline.encode import Problem


class DistinctRows(Problem):
    """``problem`` with its distinct rows, each weighted by the rows (or weights) it stands for.

    ``X``, ``y``, ``weights`` and ``extra`` (with the protected group) hold the distinct rows,
    in the order they first appear; ``inverse[i]`` is the distinct row of original row ``i``;
    ``original`` is the problem as encoded; ``counts`` are the whole-number weights (the number
    of rows each stands for) when no sample weights were given, else None.
    """

    def __init__(self, problem: Problem, first: np.ndarray, inverse: np.ndarray):
        vars(self).update(vars(problem))
        self.original, self.inverse = problem, inverse
        given = problem.weights.get("sample_weight")
        weight = np.bincount(inverse, weights=given, minlength=len(first))
        self.counts = None if given is not None else weight
        self.X, self.y = problem.X[first], problem.y[first]
        self.weights = {"sample_weight": weight}
        self.extra = {**problem.extra, **self.weights}
        if "group" in problem.extra:
            self.extra["group"] = np.asarray(problem.extra["group"])[first]

    def score(self, graph: DecisionGraph, skeleton: nx.DiGraph, hyper: dict) -> tuple[float, float]:
        """(objective, training accuracy) on the original rows, each classified as its distinct row."""
        predicted = graph.predict_index(self.X)[self.inverse]
        original = self.original
        objective = self.module.objective_of(graph.graph, predicted, original.y, skeleton, **hyper,
                                             **original.weights)
        return objective, float(np.mean(predicted == original.y))


def rows_kept_apart(key: str, hyper: dict[str, Any]) -> list[str]:
    """The options of model ``key`` set in ``hyper`` whose constraints count rows, not weights."""
    counting = {
        "oct": {"min_leaf": hyper.get("min_leaf", 1) > 1},
        "odd": {**{name: hyper.get(name) is not None for name in ("fairness", "min_samples", "min_share")},
                "min_leaf": hyper.get("min_leaf", 1) > 1},
        "categorical": {"min_rate": hyper.get("rate", "accuracy") != "accuracy",
                        "feature_selection": hyper.get("feature_selection") == "cart",
                        "min_leaf": hyper.get("min_leaf", 1) > 1},
    }.get(key, {})
    return [name for name, on in counting.items() if on]


def distinct_rows(problem: Problem, hyper: dict[str, Any]) -> Problem:
    """``problem``'s rows merged where their encoded features, class and group coincide
    (a :class:`DistinctRows`), or ``problem`` itself where an option counts rows
    (:func:`rows_kept_apart`) or the model takes no sample weights."""
    module = problem.module
    if not getattr(module, "SAMPLE_WEIGHT", False) or rows_kept_apart(module.KEY, hyper):
        return problem
    first, inverse = merge_keys(problem.X, problem.y, problem.extra.get("group"))
    return DistinctRows(problem, first, inverse)


def merge_keys(X: np.ndarray, y: np.ndarray, group: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse): the first row of each distinct (features, class, group), in the order
    they appear, and for every row the position of its distinct row in ``first``."""
    columns = [np.asarray(X, dtype=float).reshape(len(y), -1), np.asarray(y, dtype=float).reshape(-1, 1)]
    if group is not None:
        columns.append(np.asarray(group, dtype=float).reshape(len(y), -1))
    _, first, inverse = np.unique(np.hstack(columns), axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return first[order], position[inverse.reshape(-1)]
