"""Warm start: every variable of an ODD instance set from a given diagram.

The diagram's nodes are placed on the skeleton so that the symmetry breaking (11)–(12) holds
and each split is re-fitted to the samples routed through it, meeting (13)–(14).
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from . import A_BOUND, B_BOUND
from .model import _strengthened


def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the diagram ``graph`` routing the rows of ``X``.

    ``graph`` follows the decoded convention (``weights``/``threshold`` or a binary
    ``feature`` per internal node, ``label`` at leaves), and its internal nodes carry
    ``layer``. Nodes are renumbered within their layer (in tree mode, to their tree
    positions) and splits mirrored so that (11)–(12) hold; each intercept is re-fitted to the samples routed through its
    node. Side constraints (tree mode, fairness, parsimony, stability, leaf size) are not checked.
    """
    X = np.asarray(X, dtype=float)
    ids = _placement(instance, graph)
    at, goes_true = _route(graph, X)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    if not _strengthened(instance):  # (15) holds at inactive nodes too
        for u in instance.U:
            instance.e[u, instance.J.first()].set_value(1)
    layer = {u: l for l in instance.L for u in instance.VL[l]}
    for node, attrs in graph.nodes(data=True):
        if "label" in attrs:
            for i in np.flatnonzero(at[node]):
                instance.w_term[i, ids[node]].set_value(1)
            continue
        children = {outcome: ids[v] for _, v, outcome in graph.out_edges(node, data="outcome")}
        direction = _direction(attrs, X.shape[1], bool(pyo.value(instance.univariate)), node,
                               pyo.value(instance.domain))
        positive = at[node] & goes_true[node]
        negative = at[node] & ~goes_true[node]
        if children[False] > children[True]:  # mirror the split so that (11) holds
            children, direction = {False: children[True], True: children[False]}, -direction
            positive, negative = negative, positive
        _set_node(instance, ids[node], layer[ids[node]], children, positive, negative,
                  _split(direction, X[positive], X[negative], pyo.value(instance.epsilon), node))


def _placement(instance, graph: nx.DiGraph) -> dict:
    """Model node id of every graph node: internal nodes by layer and in-degree (tree mode:
    by tree position), leaves by class."""
    root = [n for n in graph if graph.in_degree(n) == 0]
    if (len(root) != 1 or graph.nodes[root[0]].get("layer") != 0
            or len(nx.descendants(graph, root[0])) + 1 != len(graph)):
        raise ValueError("The diagram needs one root, at layer 0, from which every node is reachable.")
    by_layer: dict[int, list] = {}
    terminal = {int(instance.cls[t]): t for t in instance.C}
    ids = {}
    for node, attrs in graph.nodes(data=True):
        if "label" in attrs:
            if attrs["label"] not in terminal:
                raise ValueError(f"Leaf {node} predicts class {attrs['label']}, which does not exist.")
            ids[node] = terminal[attrs["label"]]
        elif attrs.get("layer") not in instance.L:
            raise ValueError(f"Internal node {node} needs a layer from 0 to {len(instance.L) - 1}.")
        else:
            by_layer.setdefault(attrs["layer"], []).append(node)
    ids.update(_tree_positions(instance, graph, root[0]) if pyo.value(instance.tree)
               else _layer_positions(instance, graph, by_layer))
    _check_arcs(instance, graph, ids)
    return ids


def _layer_positions(instance, graph: nx.DiGraph, by_layer: dict[int, list]) -> dict:
    """Internal nodes fill their layer's slots by non-increasing in-degree, as (12) asks."""
    ids: dict = {}
    for l, nodes in by_layer.items():
        slots = list(instance.VL[l])
        if len(nodes) > len(slots):
            raise ValueError(f"Layer {l} of the diagram has {len(nodes)} nodes; "
                             f"the skeleton has {len(slots)}.")
        ids.update(zip(sorted(nodes, key=graph.in_degree, reverse=True), slots))
    return ids


def _tree_positions(instance, graph: nx.DiGraph, root) -> dict:
    """Tree mode: the internal children of the node at position s take positions 2s+1, 2s+2."""
    ids, queue = {root: pyo.value(instance.root)}, [root]
    for node in queue:
        arcs = sorted(graph.out_edges(node, data="outcome"), key=lambda arc: arc[2])
        inner = [child for _, child, _ in arcs if "label" not in graph.nodes[child]]
        for k, child in enumerate(inner):
            layer = graph.nodes[child]["layer"]
            if child in ids or 2 * ids[node] + 1 + k not in instance.VL[layer]:
                raise ValueError(f"Node {child} breaks the tree skeleton (two parents, or not "
                                 "one layer below its parent); tree mode needs a tree.")
            ids[child] = 2 * ids[node] + 1 + k
            queue.append(child)
    return ids


def _check_arcs(instance, graph: nx.DiGraph, ids: dict) -> None:
    """Every node has a False and a True arc to distinct skeleton nodes along candidate arcs."""
    for node in graph:
        if "label" in graph.nodes[node]:
            continue
        arcs = {outcome: ids[v] for _, v, outcome in graph.out_edges(node, data="outcome")}
        if graph.out_degree(node) != 2 or set(arcs) != {False, True} or arcs[False] == arcs[True]:
            raise ValueError(f"Node {node} needs a False and a True arc to two different nodes "
                             "(leaves of one class count as the same node).")
        if any((ids[node], v) not in instance.A for v in arcs.values()):
            raise ValueError(f"Node {node} has an arc the skeleton does not allow (next layer or leaf only).")


def _route(graph: nx.DiGraph, X: np.ndarray) -> tuple[dict, dict]:
    """Rows reaching each node, and for internal nodes the rows' test outcomes."""
    at = {node: np.zeros(len(X), bool) for node in graph}
    at[next(n for n in graph if graph.in_degree(n) == 0)][:] = True
    goes_true = {}
    for node in nx.topological_sort(graph):
        attrs = graph.nodes[node]
        if "label" in attrs:
            continue
        if "feature" in attrs:
            goes_true[node] = X[:, attrs["feature"]] > 0.5
        else:
            goes_true[node] = X @ np.asarray(attrs["weights"], float) >= attrs["threshold"]
        for _, child, outcome in graph.out_edges(node, data="outcome"):
            at[child] |= at[node] & (goes_true[node] == outcome)
    return at, goes_true


def _direction(attrs: dict, n_features: int, univariate: bool, node, domain: str) -> np.ndarray:
    """The node's hyperplane direction at the domain's edge: ‖a‖_∞ = 1 (box), ‖a‖₁ = 1 (l1)."""
    if "feature" in attrs:
        return np.eye(n_features)[attrs["feature"]]
    weights = np.asarray(attrs["weights"], float)
    if univariate and np.count_nonzero(weights) > 1:
        raise ValueError(f"Node {node} splits on several features, but the model is univariate.")
    norm = np.abs(weights).max() if domain == "box" else np.abs(weights).sum()
    return weights * (A_BOUND / norm) if norm > 0 else weights


def _split(direction: np.ndarray, X_pos: np.ndarray, X_neg: np.ndarray, epsilon: float,
           node) -> tuple[np.ndarray, float]:
    """Hyperplane (a, b) meeting (13)–(14) for the routed samples; a = 0 when a side is empty.

    a = t · direction with the largest t ≤ 1 (the widest margin) that leaves room for b in [−1, 1].
    """
    if len(X_neg) == 0:
        return np.zeros_like(direction), 0.0
    if len(X_pos) == 0:
        return np.zeros_like(direction), epsilon
    low, high = float(np.max(X_neg @ direction)), float(np.min(X_pos @ direction))
    t = min(1.0, -B_BOUND / high if high < 0 else 1.0, (B_BOUND - epsilon) / low if low > 0 else 1.0)
    b = min(t * high, B_BOUND)
    if t <= 0 or t * low + epsilon > b + 1e-9:
        raise ValueError(f"Node {node} separates its samples by less than ε = {epsilon} "
                         "(after scaling its weights to the split domain).")
    return t * direction, b


def _set_node(instance, u: int, layer: int, children: dict, positive: np.ndarray,
              negative: np.ndarray, split: tuple[np.ndarray, float]) -> None:
    """Values of the variables of active node u and of the flows leaving it."""
    a, b = split
    instance.d[u].set_value(1)
    instance.y_neg[u, children[False]].set_value(1)
    instance.y_pos[u, children[True]].set_value(1)
    instance.b[u].set_value(b)
    for j in instance.J:
        instance.a_plus[u, j].set_value(max(a[j], 0.0))
        instance.a_minus[u, j].set_value(max(-a[j], 0.0))
    if u in instance.U:
        chosen = int(np.argmax(np.abs(a)))
        for j in instance.J:
            instance.e[u, j].set_value(int(j == chosen))
    for rows, w, z, side in ((negative, instance.w_neg, instance.z_neg, False),
                             (positive, instance.w_pos, instance.z_pos, True)):
        for i in np.flatnonzero(rows):
            w[i, u].set_value(1)
            z[i, u, children[side]].set_value(1)
            instance.lam[i, layer].set_value(int(side))
