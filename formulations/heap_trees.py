"""Checks and routing shared by the tree formulations' warm starts (heap-ordered trees: root 1, the
``outcome=False`` child of n is 2n, the ``outcome=True`` child 2n+1)."""
from __future__ import annotations

import networkx as nx
import numpy as np


def check_start(instance, graph: nx.DiGraph, X: np.ndarray) -> np.ndarray:
    """``X`` as an array, after checking that ``graph`` and ``X`` fit ``instance`` (sets I, F,
    K, B, L); raises ValueError naming the misfit."""
    X = np.asarray(X)
    check_tree(graph, set(instance.B), set(instance.L), set(instance.F), set(instance.K))
    if X.ndim != 2 or X.shape != (len(instance.I), len(instance.F)):
        raise ValueError(f"X has shape {X.shape}; the instance was built from "
                         f"{len(instance.I)} rows and {len(instance.F)} features.")
    return X


def check_tree(graph: nx.DiGraph, branching: set, leaves: set, features: set, classes: set) -> None:
    """ValueError unless ``graph`` is a heap-ordered tree that fits the skeleton."""
    depth = max(n.bit_length() for n in branching | leaves) - 1
    if 1 not in graph:
        raise ValueError("The tree needs its root at heap position 1.")
    for n, attrs in graph.nodes(data=True):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"Node {n!r} is not a heap position (a whole number from 1).")
        if int(n).bit_length() - 1 > depth:
            raise ValueError(f"Node {n} lies at depth {int(n).bit_length() - 1}; the tree is deeper "
                             f"than the instance's depth {depth}.")
        if n not in branching | leaves:
            raise ValueError(f"Node {n} is not a heap position of the skeleton.")
        if n > 1 and (n // 2 not in graph or "feature" not in graph.nodes[n // 2]):
            raise ValueError(f"Node {n} hangs below node {n // 2}, which is not a split of the tree.")
        children = {v: outcome for _, v, outcome in graph.out_edges(n, data="outcome")}
        if "feature" in attrs:
            if n not in branching:
                raise ValueError(f"Node {n} splits at the instance's last level; the tree is deeper "
                                 f"than the instance's depth {depth}.")
            if attrs["feature"] not in features:
                raise ValueError(f"Node {n} splits on feature {attrs['feature']!r}, which the "
                                 f"instance does not have (features 0..{len(features) - 1}).")
            if set(children) != {2 * n, 2 * n + 1} or children[2 * n] not in (False, None) \
                    or children[2 * n + 1] not in (True, None):
                raise ValueError(f"Split {n} needs the children {2 * n} (outcome False) and "
                                 f"{2 * n + 1} (outcome True) in heap order.")
        elif "label" in attrs:
            if attrs["label"] not in classes:
                raise ValueError(f"Leaf {n} predicts {attrs['label']!r}, which is not a class of the "
                                 f"instance (classes {sorted(classes)}).")
            if children:
                raise ValueError(f"Leaf {n} has children.")
        else:
            raise ValueError(f"Node {n} carries neither a feature nor a label.")


def paths(graph: nx.DiGraph, X: np.ndarray) -> list[list[int]]:
    """Every row's path of heap node ids from the root to its leaf."""
    found = []
    for row in np.asarray(X):
        path = [1]
        while "feature" in graph.nodes[path[-1]]:
            path.append(2 * path[-1] + int(row[graph.nodes[path[-1]]["feature"]] > 0.5))
        found.append(path)
    return found
