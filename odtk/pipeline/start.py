"""Stage 2: an incumbent before the MILP starts, so that every solve has a model to return.

- The tree MILPs on binary features (FlowOCT, BendersOCT, OCT, BinOCT) start by default from
  the better of scikit-learn's CART of the same depth and the CP search's tree
  (``warm_start="best"``, the CP search given a share of the budget), or from ``"cart"`` or a
  tree the user learned on the same data.
- ODD starts from its constructive heuristic (step 1 of the paper), whose value is the cutoff.
- The categorical model starts from a tree of its topology grown greedily and from CART
  (:mod:`odtk.pipeline.categorical_start`).
- Every other MILP (ODD without its heuristic) holds at least the majority-class leaf,
  returned, not proven, when the solver finds nothing in time and no side constraint is set.

Each start is scored on the training data by the formulation's own objective (``steps``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import networkx as nx

from odtk.budget import Budget, BudgetView
from odtk.exceptions import ConfigError, SelfCheckError
from odtk.heap_trees import heap_tree, nested_tree, sklearn_tree
from odtk.models import DecisionGraph
from odtk.pipeline.encode import Problem
from odtk.pipeline.check import better
from odtk.pipeline.methods import starts_from_tree

WARM_STARTS = ("cart", "best")  # named starting trees; "best" also runs the CP search
CP_START_SHARE, CP_START_SECONDS = 0.2, 10.0  # the CP search's share of the budget left, and its cap
HEURISTIC_SHARE = 0.5  # ODD's heuristic takes at most this share of the budget left


@dataclass
class Start:
    """The model a MILP starts from: its graph, where it came from, and its objective."""

    graph: DecisionGraph
    origin: str  # "heuristic", "warm_start" or "leaf" (the majority class: never a MIP start)
    objective: float

    @property
    def passed_to_solver(self) -> bool:
        return self.origin != "leaf"


def default_start(problem: Problem) -> str | None:
    """The start a model takes when none is given: ``"best"`` for the tree MILPs, ``"topology"``
    for the categorical model (:func:`topology_start`), none for the others."""
    if starts_from_tree(problem.module):
        return "best"
    return "topology" if problem.module.SKELETON == "topology" else None


def topology_start(problem: Problem, shape: nx.DiGraph, hyper: dict, seed: int | None,
                   budget: Budget) -> tuple[DecisionGraph, dict] | None:
    """The categorical model's starting tree (:mod:`odtk.pipeline.categorical_start`), scored;
    None when no grown tree meets ``min_leaf``."""
    from odtk.pipeline.categorical_start import categorical_start

    began = time.perf_counter()
    with budget.stage("starting tree"):
        tree = categorical_start(problem, shape, hyper, seed)
        if tree is None:
            return None
        graph = problem.graph(tree)
        objective, _ = problem.score(graph, shape, hyper)
    budget.report(incumbent=objective)
    return graph, {"objective": objective, "seconds": time.perf_counter() - began}


def heuristic(problem: Problem, skeleton: nx.DiGraph, hyper: dict, seconds: float, seed: int | None,
              budget: Budget) -> tuple[DecisionGraph, dict]:
    """ODD's constructive heuristic for at most ``seconds`` (and its share of the budget),
    verified against its own re-evaluation; a signal stops it with its best diagram."""
    from odtk.heuristics import construct_diagram

    seconds = min(seconds, budget.share(HEURISTIC_SHARE) or seconds)
    with budget.stage("heuristic"), budget.waiting():
        found = construct_diagram(problem.X, problem.y, skeleton.graph["widths"], len(problem.classes),
                                  alpha=hyper["alpha"], time_budget=max(seconds, 1e-3), seed=seed or 0,
                                  budget=budget, **problem.weights)
    graph = problem.graph(found.graph)
    objective, _ = problem.score(graph, skeleton, hyper)
    if abs(objective - found.objective) > 1e-9:
        raise SelfCheckError(f"Self-check failed: the heuristic reported {found.objective:.6g} but "
                             f"its diagram scores {objective:.6g}.")
    budget.report(incumbent=objective)
    return graph, {"objective": objective, "seconds": found.seconds, "starts": found.starts}


def given_start(problem: Problem, given: Any, shape: nx.DiGraph, hyper: dict, seed: int | None,
                budget: Budget) -> tuple[DecisionGraph, dict]:
    """The starting tree (``"cart"``, ``"best"`` or a tree learned on the same data), scored."""
    module = problem.module
    if not starts_from_tree(module):
        raise ConfigError(f"Model {module.KEY!r} takes no warm_start tree; drop warm_start=….")
    began = time.perf_counter()
    with budget.stage("starting tree"):
        if isinstance(given, str):
            tree = _named_start(problem, given, shape, hyper, seed, budget)
        else:
            tree = heap_tree(_learned_tree(problem, given, shape).graph)
        chosen = problem.graph(tree)
        objective, _ = problem.score(chosen, shape, hyper)
    budget.report(incumbent=objective)
    return chosen, {"objective": objective, "seconds": time.perf_counter() - began}


def _named_start(problem: Problem, given: str, shape: nx.DiGraph, hyper: dict, seed: int | None,
                 budget: Budget) -> nx.DiGraph:
    """CART's tree of the model's depth, or (``"best"``) the better of it and the CP search's."""
    from sklearn.tree import DecisionTreeClassifier

    if given not in WARM_STARTS:
        raise ConfigError(f"warm_start={given!r}: give one of {', '.join(WARM_STARTS)} or a learned tree.")
    if problem.X.shape[1] == 0 or shape.graph["depth"] == 0:  # nothing to test, or no test: the majority leaf
        return majority_leaf(problem, shape, hyper)[0].graph
    leaf = max(hyper.get("min_leaf", 1), 1)  # OCT's leaf bound: CART's tree keeps it, the CP search's not
    cart = DecisionTreeClassifier(max_depth=shape.graph["depth"], min_samples_leaf=leaf, random_state=seed or 0)
    tree = sklearn_tree(cart.fit(problem.X, problem.y, sample_weight=problem.weights.get("sample_weight")))
    if given == "best" and leaf == 1 and (not problem.weights or problem.counts is not None):  # CP counts rows
        tree = _better_start(problem, shape, hyper, tree, budget)
    return tree


def _learned_tree(problem: Problem, given: Any, shape: nx.DiGraph) -> DecisionGraph:
    """A tree the user learned on the same data and binarisation, checked to fit the model. A
    tree deeper than the model is refused as such first: with ``thresholds="auto"`` the
    binarisation follows the depth (CART's thresholds), so its columns differ too."""
    graph = getattr(getattr(given, "model", given), "graph", given)
    depth = shape.graph["depth"]
    given_depth = nx.dag_longest_path_length(graph.graph) if isinstance(graph, DecisionGraph) else None
    if given_depth is not None and given_depth > depth:
        raise ConfigError(f"The warm_start tree does not fit this model: its depth {given_depth} exceeds "
                          f"depth {depth}; start from a tree of depth ≤ {depth} learned on the same data, "
                          f"or solve at depth {given_depth} (--depth {given_depth}).")
    if (not isinstance(graph, DecisionGraph) or graph.feature_names != list(problem.encoder.columns_)
            or graph.class_names != [str(c) for c in problem.classes]):
        raise ConfigError("warm_start must be 'cart' or a tree learned on the same data and "
                          "binarisation (a SolveResult, TrainedModel or DecisionGraph).")
    return graph


def _better_start(problem: Problem, shape: nx.DiGraph, hyper: dict, cart: nx.DiGraph,
                  budget: Budget) -> nx.DiGraph:
    """CART's tree or the CP search's (given its share of the budget), whichever scores better."""
    from odtk.engines import cp_search

    seconds = budget.share(CP_START_SHARE, at_most=CP_START_SECONDS)
    quiet = BudgetView(budget, hidden=("incumbent", "bound", "searched"))  # errors, not the MILP's objective
    with budget.waiting():
        found = cp_search.search(problem.X, problem.y, len(problem.classes), shape.graph["depth"],
                                 time_limit=max(seconds, 1e-3), budget=quiet, sample_weight=problem.counts)
    searched = heap_tree(nested_tree(found.tree))
    scores = [problem.score(problem.graph(tree), shape, hyper)[0] for tree in (cart, searched)]
    return searched if better(problem.module, scores[1], scores[0]) else cart


def majority_leaf(problem: Problem, shape: nx.DiGraph, hyper: dict) -> tuple[DecisionGraph, dict]:
    """The one-leaf model predicting the (weighted) majority class: the start of last resort."""
    import numpy as np

    counts = np.bincount(problem.y, weights=problem.weights.get("sample_weight"), minlength=len(problem.classes))
    leaf = nx.DiGraph()
    leaf.add_node(1, label=int(np.argmax(counts)))
    graph = problem.graph(leaf)
    objective, _ = problem.score(graph, shape, hyper)
    return graph, {"objective": objective, "seconds": 0.0}
