"""Reading a solved ODD instance: the diagram it learned, the flows, the objective (18).

``decode`` turns the variables into a diagram, ``flow_rows`` lists the samples the flow
variables send through each node, and ``objective_of`` evaluates (18) for a decoded diagram.
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo


def decode(instance) -> nx.DiGraph:
    """The learned diagram: internal nodes carry ``weights``, ``threshold`` and ``layer``.

    A sample follows the arc with ``outcome=True`` iff ``weights · x >= threshold``
    (the positive side); terminals carry ``label``. Only nodes reachable from the root appear.
    """
    layer = {u: l for l in instance.L for u in instance.VL[l]}
    half_gap = pyo.value(instance.epsilon) / 2
    graph = nx.DiGraph()
    stack, seen = [pyo.value(instance.root)], set()
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u in instance.C:
            graph.add_node(u, label=int(instance.cls[u]))
            continue
        # a feature that is 0 on every row is in no constraint of the box domain: no value, weight 0
        weights = [_clean((instance.a_plus[u, j].value or 0.0) - (instance.a_minus[u, j].value or 0.0))
                   for j in instance.J]
        graph.add_node(u, weights=weights, threshold=pyo.value(instance.b[u]) - half_gap, layer=layer[u])
        for arcs, outcome in ((instance.y_neg, False), (instance.y_pos, True)):
            child = next(v for v in instance.OUT[u] if pyo.value(arcs[u, v]) > 0.5)
            graph.add_edge(u, child, outcome=outcome)
            stack.append(child)
    return graph


def flow_rows(instance) -> dict[int, list[int]]:
    """The samples the solver's flow variables send through each node: through an internal
    node u when w⁻_iu + w⁺_iu = 1, into a terminal v when w_iv = 1 (rounded at ½)."""
    rows = {u: [i for i in instance.I if pyo.value(instance.w_neg[i, u] + instance.w_pos[i, u]) > 0.5]
            for u in instance.V}
    rows.update({v: [i for i in instance.I if pyo.value(instance.w_term[i, v]) > 0.5] for v in instance.C})
    return rows


def _clean(value: float) -> float:
    """Solver noise below 1e-9 as an exact zero (keeps univariate splits univariate)."""
    return 0.0 if abs(value) < 1e-9 else float(value)


def objective_of(graph: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 alpha: float = 0.01, sample_weight: np.ndarray | None = None, **_: Any) -> float:
    """Objective (18) of a decoded diagram whose training predictions are ``predicted``; the
    error rate is weighted by ``sample_weight`` when given.

    The other hyper-parameters do not enter the objective.
    """
    error = float(np.average(np.asarray(predicted) != np.asarray(y), weights=sample_weight))
    non_root = len(skeleton) - 1
    if non_root == 0:
        return error
    internal = sum(1 for _, attrs in graph.nodes(data=True) if "label" not in attrs)
    return error + alpha * max(internal - 1, 0) / non_root
