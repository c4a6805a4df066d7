"""Tree and diagram skeletons as ``networkx.DiGraph``.

A skeleton fixes the nodes a model may use; the formulations derive their index
sets from it. Node ids are deterministic and every node carries a ``layer``
attribute (the root is layer 0).

* :func:`tree_skeleton` — a complete binary tree of depth ``d`` in heap order:
  the root is 1 and node ``n`` has children ``2n`` (left) and ``2n + 1``
  (right); arcs carry ``side="left"`` / ``side="right"``.
* :func:`diagram_skeleton` — layered internal nodes of the given widths, numbered
  0, 1, … layer by layer, with an arc from every node of a layer to every node
  of the next.
* :func:`topology_skeleton` — any binary tree (arcs with ``side``), by name, by depth or
  as a user's ``networkx.DiGraph``.
"""
from __future__ import annotations

import networkx as nx

from odtk.exceptions import SkeletonError

EXAMPLE = "1-2-4-8"
MAX_DEPTH = 12
# Named topologies as nested splits: "split" has two leaves, ("split", left, right) two subtrees.
Shape = str | tuple
SHAPES: dict[str, Shape] = {
    "depth-2": ("split", "split", "split"),
    "depth-2.5": ("split", ("split", "split", "split"), "split"),
    "depth-3": ("split", ("split", "split", "split"), ("split", "split", "split")),
    "imbalanced": ("split", "split", ("split", "split", ("split", "split", "split"))),
}


def tree_skeleton(depth: int) -> nx.DiGraph:
    """Complete binary tree of ``depth`` split levels (``depth=0`` is a single leaf)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise SkeletonError(
            f"Tree depth must be a whole number from 0 to {MAX_DEPTH}, got {depth!r}. "
            "Example: --depth 3."
        )
    graph = nx.DiGraph(kind="tree", depth=depth)
    for node in range(1, 2 ** (depth + 1)):
        graph.add_node(node, layer=node.bit_length() - 1)
    for node in range(1, 2**depth):
        graph.add_edge(node, 2 * node, side="left")
        graph.add_edge(node, 2 * node + 1, side="right")
    return graph


def parse_widths(text: str) -> list[int]:
    """Parse and validate a width string such as ``"1-2-4-8"``."""
    parts = str(text).strip().split("-")
    try:
        widths = [int(p) for p in parts]
    except ValueError:
        raise SkeletonError(
            f"Skeleton {text!r} is not a dash-separated list of whole numbers. "
            f"Example: {EXAMPLE}."
        ) from None
    if len(widths) > MAX_DEPTH:
        raise SkeletonError(f"Skeleton {text!r} has {len(widths)} layers; at most {MAX_DEPTH} are supported. "
                            f"Example: {EXAMPLE}.")
    if any(w <= 0 for w in widths):
        raise SkeletonError(f"Skeleton {text!r} has a width below 1. Example: {EXAMPLE}.")
    if widths[0] != 1:
        raise SkeletonError(
            f"Skeleton {text!r} must start with a single root (width 1). Example: {EXAMPLE}."
        )
    for layer, (width, following) in enumerate(zip(widths, widths[1:])):
        if following > 2 * width:
            raise SkeletonError(
                f"Skeleton {text!r}: layer {layer + 1} has {following} nodes but layer {layer} "
                f"can feed at most {2 * width}. Example: {EXAMPLE}."
            )
    return widths


def diagram_skeleton(widths: str | list[int]) -> nx.DiGraph:
    """Layered diagram skeleton of internal nodes, e.g. ``diagram_skeleton("1-2-4-8")``."""
    if not isinstance(widths, str):
        widths = "-".join(str(w) for w in widths)
    sizes = parse_widths(widths)
    graph = nx.DiGraph(kind="diagram", widths=sizes)
    layers: list[list[int]] = []
    next_id = 0
    for layer, width in enumerate(sizes):
        layers.append(list(range(next_id, next_id + width)))
        graph.add_nodes_from(layers[-1], layer=layer)
        next_id += width
    for upper, lower in zip(layers, layers[1:]):
        graph.add_edges_from((u, v) for u in upper for v in lower)
    return graph



def topology_skeleton(spec: str | nx.DiGraph | None, depth: int | None = None) -> nx.DiGraph:
    """A binary tree topology: a name from :data:`SHAPES`, a tree depth, or a DiGraph.

    Named shapes and depths are numbered in heap order (root 1, children 2n and 2n + 1).
    A given DiGraph must be a rooted tree whose split nodes have one ``side="left"`` and one
    ``side="right"`` arc; it is copied.
    """
    if isinstance(spec, nx.DiGraph):
        graph = _checked_topology(spec)
    elif spec is None:
        graph = tree_skeleton(depth if depth is not None else -1)
        graph.graph["name"] = f"depth-{depth}"
    elif spec in SHAPES:
        graph = nx.DiGraph()
        _add_shape(graph, SHAPES[spec], 1)
        graph.graph["name"] = spec
    else:
        raise SkeletonError(f"Unknown topology {spec!r}; use one of {', '.join(SHAPES)}, a depth, "
                            "or a networkx.DiGraph with side='left'/'right' arcs.")
    graph.graph.update(kind="topology", depth=nx.dag_longest_path_length(graph))
    if depth is not None and graph.graph["depth"] != depth:
        raise SkeletonError(f"depth={depth} contradicts the topology {graph.graph['name']!r} "
                            f"of depth {graph.graph['depth']}; give one of them.")
    return graph


def _add_shape(graph: nx.DiGraph, shape: Shape, node: int) -> None:
    graph.add_node(node, layer=node.bit_length() - 1)
    below = ("leaf", "leaf") if shape == "split" else shape[1:]
    for child, side, sub in ((2 * node, "left", below[0]), (2 * node + 1, "right", below[1])):
        graph.add_edge(node, child, side=side)
        if sub == "leaf":
            graph.add_node(child, layer=child.bit_length() - 1)
        else:
            _add_shape(graph, sub, child)


def _checked_topology(given: nx.DiGraph) -> nx.DiGraph:
    if len(given) == 0 or not nx.is_arborescence(given):
        raise SkeletonError("A topology must be a non-empty rooted tree (networkx arborescence).")
    for node in given:
        sides = sorted(side for *_, side in given.out_edges(node, data="side"))
        if sides not in ([], ["left", "right"]):
            raise SkeletonError(f"Node {node!r} of the topology needs no children or exactly one "
                                f"side='left' and one side='right' child, got sides {sides}.")
    graph = given.copy()
    graph.graph["name"] = given.graph.get("name", f"custom ({len(given)} nodes)")
    return graph
