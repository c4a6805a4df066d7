"""Draw a learned tree or diagram with matplotlib (no Graphviz needed)."""
from __future__ import annotations

import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
import pandas as pd

from odtk.datasets.adapters import is_frame
from odtk.datasets.encoders import FeatureEncoder
from odtk.exceptions import ConfigError, install_hint
from odtk.graph_text import isolated
from odtk.models import DecisionGraph, TrainedModel

if TYPE_CHECKING:
    from matplotlib.axes import Axes

WRAP = 26  # characters per line of a node's text


def pyplot() -> ModuleType:
    """matplotlib.pyplot, or a one-line ConfigError saying how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(f"Drawing (odtk.plot_tree, --png) needs matplotlib: {install_hint('experiments')} "
                          "(or pip install matplotlib).") from None
    return plt


def plot_tree(model: Any, ax: Axes | None = None, *, X: Any = None, y: Any = None,
              fontsize: float | None = None) -> Axes:
    """Draw ``model`` — a fitted odtk estimator, a :class:`~odtk.SolveResult`, a
    :class:`~odtk.models.TrainedModel` or a :class:`~odtk.models.DecisionGraph` — on ``ax``
    (a new figure's axes by default) and return the axes.

    Layers run top to bottom: a tree's nodes at their depth, a diagram's tests at their
    layer and its class terminals at the bottom. Tests read in the original units of the
    features (where the model has its encoder); arcs are labelled yes/no. Nodes show how many
    samples reach them, per class: an estimator's training samples, or the rows ``X`` with
    labels ``y`` when given (raw features, or encoded columns for a bare DecisionGraph).
    """
    plt = pyplot()
    graph, encoder, classes, counts = _parts(model, X, y)
    if ax is None:
        _, ax = plt.subplots(figsize=_figure_size(graph))
    size = fontsize or max(6.0, 10.0 - 0.15 * len(graph.graph))
    position = _layout(graph)
    colours = plt.get_cmap("tab10")
    boxes = {}
    for node, attrs in graph.graph.nodes(data=True):
        leaf = "label" in attrs
        text = (isolated(classes[attrs["label"]]) if leaf
                else textwrap.fill(graph.test_text(node, encoder) + " ?", WRAP))
        if counts is not None:
            text += "\n" + _count_text(counts[node], classes)
        face = colours(attrs["label"] % 10) if leaf else (1.0, 1.0, 1.0)
        x, y = position[node]
        boxes[node] = ax.text(x, y, text, fontsize=size, ha="center", va="center", zorder=3,
                              bbox={"boxstyle": "round,pad=0.4", "fc": face, "ec": "0.3"})
    for u, v, outcome in graph.graph.edges(data="outcome"):  # from the bottom of u's box to the top of v's
        ax.annotate("", xy=(0.5, 1), xycoords=boxes[v], xytext=(0.5, 0), textcoords=boxes[u],
                    arrowprops={"arrowstyle": "-|>", "color": "0.45", "shrinkA": 6, "shrinkB": 6})
        middle = (np.asarray(position[u]) + np.asarray(position[v])) / 2
        answer = graph.answer(u, outcome)
        ax.text(middle[0], middle[1], answer, fontsize=size * 0.85, ha="center", va="center", zorder=2,
                color="tab:green" if answer == "yes" else "tab:red", bbox={"fc": "white", "ec": "none", "pad": 0.5})
    ax.update_datalim(list(position.values()))  # texts and arrows do not widen the view
    ax.margins(0.15, 0.12)
    ax.autoscale_view()
    ax.set_axis_off()
    return ax


def _parts(model: Any, X: Any, y: Any) -> tuple[DecisionGraph, FeatureEncoder | None, list, dict | None]:
    """(graph, encoder or None, class labels by graph label index, per-node class counts or None)."""
    trained = getattr(model, "model_", getattr(model, "model", model))  # estimator, SolveResult
    if isinstance(trained, TrainedModel):
        graph, encoder, classes = trained.graph, trained.encoder, list(trained.classes)
    elif isinstance(trained, DecisionGraph):
        graph, encoder, classes = trained, None, list(trained.class_names)
    else:
        raise TypeError(f"plot_tree draws a fitted odtk estimator, a SolveResult, a TrainedModel or a "
                        f"DecisionGraph; got {type(model).__name__}.")
    if X is None:
        stored = getattr(model, "_node_counts", None)  # an estimator's training samples, classes_ order
        if stored is None:
            return graph, encoder, classes, None
        order = pd.Index(model.classes_).get_indexer(classes)
        return graph, encoder, classes, {node: values[order] for node, values in stored.items()}
    if y is None:
        raise ValueError("plot_tree counts the samples of X per class: pass their labels as y too.")
    encoded = np.asarray(X) if encoder is None else encoder.transform(X if is_frame(X) else np.asarray(X))
    labels = pd.Index([str(c) for c in classes]).get_indexer([str(c) for c in np.asarray(y)])
    if (labels < 0).any():
        raise ValueError(f"y holds labels the model does not know; its classes: {classes}.")
    return graph, encoder, classes, graph.class_counts(encoded, labels)


def _count_text(values: np.ndarray, classes: list) -> str:
    per_class = ", ".join(f"{isolated(c)}: {int(v)}" for c, v in zip(classes, values))
    return f"n = {int(values.sum())}\n" + textwrap.fill(per_class, WRAP)


def _layers(graph: DecisionGraph) -> dict:
    """Depth of each node (longest path from the root); a diagram's terminals at the bottom."""
    layer = {graph.root: 0}
    for node in nx.topological_sort(graph.graph):
        for child in graph.graph.successors(node):
            layer[child] = max(layer.get(child, 0), layer[node] + 1)
    if any(degree > 1 for _, degree in graph.graph.in_degree()):
        bottom = max(layer.values())
        layer.update({node: bottom for node, attrs in graph.graph.nodes(data=True) if "label" in attrs})
    return layer


def _layout(graph: DecisionGraph) -> dict:
    """Positions of the layered layout, each layer ordered as a "no"-first walk meets its nodes."""
    layer = _layers(graph)
    ordered = nx.DiGraph()
    ordered.add_nodes_from((node, {"layer": layer[node]}) for node in _walk(graph))
    position = nx.multipartite_layout(ordered, subset_key="layer", align="horizontal")
    return {node: (x, -y) for node, (x, y) in position.items()}


def _walk(graph: DecisionGraph) -> list:
    """The nodes in the order of a depth-first walk that takes every "no" arc first."""
    seen, order, stack = set(), [], [graph.root]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            order.append(node)
            arcs = sorted(graph.graph.out_edges(node, data="outcome"), key=lambda arc: graph.answer(node, arc[2]),
                          reverse=True)
            stack.extend(child for _, child, _ in arcs)  # "yes" below "no" on the stack
    return order


def _figure_size(graph: DecisionGraph) -> tuple[float, float]:
    layers = list(_layers(graph).values())
    return max(6.0, 2.4 * max(np.bincount(layers))), max(3.0, 1.8 * (max(layers) + 1))
