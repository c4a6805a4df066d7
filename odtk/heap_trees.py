"""Univariate trees as heap-ordered ``networkx`` graphs: root 1, the ``outcome=False`` child of
n is 2n and the ``outcome=True`` child 2n + 1. They are built from a tree graph, from the nested
tuples the search engines return, or from a fitted scikit-learn tree, and start or answer the
models that take binary features.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from odtk.exceptions import DataError

if TYPE_CHECKING:
    import networkx as nx


def heap_tree(graph: nx.DiGraph) -> nx.DiGraph:
    """A copy of a univariate tree renumbered in heap order: root 1, the ``outcome=False``
    child of n is 2n and the ``outcome=True`` child 2n+1."""
    import networkx as nx

    root = next(n for n in graph if graph.in_degree(n) == 0)
    tree, stack = nx.DiGraph(), [(root, 1)]
    while stack:
        node, position = stack.pop()
        attrs = graph.nodes[node]
        if "label" in attrs:
            tree.add_node(position, label=int(attrs["label"]))
            continue
        if "feature" not in attrs:
            raise DataError(f"Node {node} is a hyperplane split; only trees on binary features "
                            "can start these models.")
        tree.add_node(position, feature=int(attrs["feature"]))
        for _, child, outcome in graph.out_edges(node, data="outcome"):
            tree.add_edge(position, 2 * position + int(outcome), outcome=outcome)
            stack.append((child, 2 * position + int(outcome)))
    return tree



def nested_tree(tree: tuple) -> nx.DiGraph:
    """A tree given as nested tuples — ``("leaf", class)`` or ``(feature, tree for x_f = 0,
    tree for x_f = 1)``, as the search engines return them — in heap order."""
    import networkx as nx

    graph, stack = nx.DiGraph(), [(tree, 1)]
    while stack:
        node, position = stack.pop()
        if node[0] == "leaf":
            graph.add_node(position, label=int(node[1]))
            continue
        graph.add_node(position, feature=int(node[0]))
        for outcome, child in ((False, node[1]), (True, node[2])):
            graph.add_edge(position, 2 * position + outcome, outcome=outcome)
            stack.append((child, 2 * position + outcome))
    return graph



def sklearn_tree(estimator) -> nx.DiGraph:
    """A fitted scikit-learn decision tree on 0/1 features as a heap-ordered tree graph
    (its ``x <= 0.5`` branch is ``outcome=False``; labels are class positions)."""
    import networkx as nx

    structure = estimator.tree_
    tree, stack = nx.DiGraph(), [(0, 1)]
    while stack:
        node, position = stack.pop()
        left, right = structure.children_left[node], structure.children_right[node]
        if left < 0:
            tree.add_node(position, label=int(np.argmax(structure.value[node][0])))
            continue
        tree.add_node(position, feature=int(structure.feature[node]))
        for child, outcome in ((left, False), (right, True)):
            tree.add_edge(position, 2 * position + int(outcome), outcome=outcome)
            stack.append((child, 2 * position + int(outcome)))
    return tree

