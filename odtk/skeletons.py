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
"""
from __future__ import annotations

import networkx as nx

from odtk.exceptions import SkeletonError

EXAMPLE = "1-2-4-8"
MAX_DEPTH = 12


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

