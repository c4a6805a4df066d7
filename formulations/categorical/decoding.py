"""Reading a solved categorical instance: the tree it learned and the objective of a tree.

``decode`` and ``tree_of`` build the tree from the left subsets of its tests; ``objective_of``
and ``rates_of`` evaluate (8a), or the rates of (15)–(16), for a tree's predictions.
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from . import POSITIVE


def decode(instance) -> nx.DiGraph:
    """The learned tree, in :func:`tree_of`'s format."""
    tests = {k: _left_values(instance, k) for k in instance.K}
    return tree_of(tests, instance.K.first(), instance.child, set(instance.B_pos))


def tree_of(tests: dict, root, child, positive_leaves: set) -> nx.DiGraph:
    """The tree whose decision node k sends the columns ``tests[k]`` left: a node carries
    ``subset`` (the values that go left, as column indices; the ``outcome=True`` arc) or
    ``label`` (0 negative, 1 positive: ``positive_leaves``). ``child[k, side]`` is the left or
    right child of k. A test that sends no value left is dropped (every row goes right)."""
    tree = nx.DiGraph()
    stack: list[tuple[Any, Any, bool | None]] = [(root, None, None)]
    while stack:
        node, parent, outcome = stack.pop()
        if node not in tests:
            tree.add_node(node, label=POSITIVE if node in positive_leaves else 1 - POSITIVE)
        else:
            subset = [int(j) for j in tests[node]]
            left, right = child[node, "left"], child[node, "right"]
            if not subset:
                stack.append((right, parent, outcome))
                continue
            tree.add_node(node, subset=subset)
            stack += [(left, node, True), (right, node, False)]
        if parent is not None:
            tree.add_edge(parent, node, outcome=outcome)
    return tree


def _left_values(instance, k) -> list[int]:
    group = max(instance.G_allowed, key=lambda g: pyo.value(instance.v[k, g]))
    scale = max(pyo.value(instance.v[k, group]), 1e-9)
    return [int(j) for j in instance.J_g[group] if pyo.value(instance.z[k, j]) > 0.5 * scale]


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 class_weight: float = 1.0, rate: str = "accuracy",
                 sample_weight: np.ndarray | None = None, **_: object) -> float:
    """Objective (8a), or the maximised rate of (15)/(16), of a tree predicting ``predicted``,
    each row weighed by ``sample_weight`` when given."""
    if rate != "accuracy":
        return rates_of(predicted, y, sample_weight)[rate]
    predicted, y = np.asarray(predicted), np.asarray(y)
    mass = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    correct = (predicted == y) * mass
    return float(correct[y == POSITIVE].sum() + class_weight * correct[y != POSITIVE].sum())


def rates_of(predicted: np.ndarray, y: np.ndarray,
             sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Sensitivity (positives predicted positive) and specificity (negatives predicted negative),
    of rows or, given ``sample_weight``, of their weight (1 for a class of no weight)."""
    predicted, y = np.asarray(predicted), np.asarray(y)
    mass = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    positive = y == POSITIVE

    def rate(rows: np.ndarray, hits: np.ndarray) -> float:
        total = mass[rows].sum()
        return float(np.dot(hits[rows], mass[rows]) / total) if total > 0 else 1.0

    return {"sensitivity": rate(positive, predicted == POSITIVE),
            "specificity": rate(~positive, predicted != POSITIVE)}
