"""Learned trees and diagrams: prediction, text/DOT export, JSON files.

A :class:`DecisionGraph` wraps the ``networkx.DiGraph`` a formulation decodes.
Every node carries exactly one of:

* ``feature`` — index of an encoded 0/1 column: the sample follows the arc whose
  ``outcome`` equals ``x[feature] == 1``;
* ``weights`` and ``threshold`` — a hyperplane over the encoded columns: the
  sample follows the arc whose ``outcome`` equals ``weights · x >= threshold``;
* ``subset`` — indices of one-hot columns of one feature: the sample follows the arc whose
  ``outcome`` equals "one of these columns is 1" (its value is in the subset);
* ``label`` — index of the predicted class (a leaf or class terminal).

A tree is the special case where every node has one parent; diagrams may merge paths.
Rows are routed on arrays compiled once from the graph (a :class:`Router`), level by level,
never by walking the graph; a graph read from a file builds its ``networkx`` form only when
asked, so predicting needs neither networkx nor pandas.

A :class:`TrainedModel` adds what prediction on raw data needs (the fitted
feature encoder and the original class labels) and is what ``--output`` saves.
"""
from __future__ import annotations

import json
import os
import reprlib
import secrets
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.exceptions import DataError, ModelFileError, OdtkError
from odtk.files import read_regular

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

    from odtk.datasets.encoders import FeatureEncoder, Rows

Unscale = tuple[np.ndarray, np.ndarray]  # per encoded column: x_scaled = (x - offset) / scale
Arcs = dict[tuple[Any, Any], Any]  # (from, to) → outcome
FILE_FORMAT = "odtk-model"
FILE_VERSION = 1
MAX_NODES = 2**18  # read from a model file at most: a tree of depth 12, the deepest odtk learns, has 8,191
BLOCK = 8192  # rows routed at once
LOOKUP_TESTS = 16  # up to this many tests (a tree of depth 4, a 1-2-4-8 diagram), leaves are looked up


class Router:
    """A decision graph compiled to arrays that route rows level by level.

    Nodes are numbered in topological order (the root is 0; ``ids`` holds their ids in the
    graph). The tests read the encoded columns ``columns`` only: a row's test outcomes are
    one matrix (:meth:`outcomes`: feature tests, then subset tests, then hyperplanes), node k
    reads its column ``test[k]`` and goes to ``child[2 k + outcome]``. A leaf's children are
    itself, so ``depth`` steps take every row to its leaf; ``label`` is each leaf's class
    (-1 for tests).
    """

    def __init__(self, order: list, nodes: dict[Any, dict], outs: dict[Any, list], n_features: int):
        index = {node: k for k, node in enumerate(order)}
        kinds = {kind: [node for node in order if kind in nodes[node]] for kind in ("feature", "subset", "weights")}
        hyperplanes = [np.asarray(nodes[node]["weights"], dtype=float) for node in kinds["weights"]]
        read = {nodes[node]["feature"] for node in kinds["feature"]}.union(
            *(nodes[node]["subset"] for node in kinds["subset"]), *(np.flatnonzero(w) for w in hyperplanes))
        self.columns = np.array(sorted(int(j) for j in read), dtype=np.intp)
        place = np.full(n_features, -1, dtype=np.intp)
        place[self.columns] = np.arange(len(self.columns))
        self.features = place[[nodes[node]["feature"] for node in kinds["feature"]]]
        self.subsets = [place[list(nodes[node]["subset"])] for node in kinds["subset"]]
        self.weights = np.stack(hyperplanes, axis=1)[self.columns] if hyperplanes else np.zeros((len(self.columns), 0))
        self.thresholds = np.array([nodes[node]["threshold"] for node in kinds["weights"]], dtype=float)
        self.weighed = np.flatnonzero(self.weights.any(axis=1))  # the columns some hyperplane reads
        self.ids = np.empty(len(order), dtype=object)
        self.ids[:] = order
        if all(_is_index(node) for node in order):
            self.ids = self.ids.astype(np.intp)
        self.test = np.zeros(len(order), dtype=np.intp)
        self.test[[index[node] for kind in kinds.values() for node in kind]] = np.arange(sum(map(len, kinds.values())))
        self.child = np.repeat(np.arange(len(order)), 2)
        self.label = np.full(len(order), -1, dtype=np.intp)
        height = np.zeros(len(order), dtype=np.intp)
        for k in reversed(range(len(order))):
            node = order[k]
            if "label" in nodes[node]:
                self.label[k] = nodes[node]["label"]
            for outcome, child in outs[node]:
                self.child[2 * k + int(outcome)] = index[child]
                height[k] = max(height[k], height[index[child]] + 1)
        self.depth = int(height[0]) if len(order) else 0

    @property
    def test_count(self) -> int:
        """The number of test nodes."""
        return len(self.features) + len(self.subsets) + self.weights.shape[1]

    def outcomes(self, X: np.ndarray) -> np.ndarray:
        """Every test's answer (columns as ``test`` numbers them; column-major) for the rows of
        ``X``, which holds the encoded columns ``columns``."""
        n_features, n_subsets = len(self.features), len(self.subsets)
        taken = np.empty((len(X), self.test_count), dtype=bool, order="F")
        if n_features:
            np.greater(X[:, self.features], 0.5, out=taken[:, :n_features])
        for t, members in enumerate(self.subsets, n_features):
            np.any(X[:, members] > 0.5, axis=1, out=taken[:, t])
        if self.weights.shape[1]:
            np.greater_equal(self._hyperplanes(X), self.thresholds, out=taken[:, n_features + n_subsets:])
        return taken

    def _hyperplanes(self, X: np.ndarray) -> np.ndarray:
        """``X @ weights`` summed column by column in a fixed order (column-major), so a row's
        value depends on the row alone, however many rows come with it (no BLAS threads)."""
        values = np.zeros((len(X), self.weights.shape[1]), order="F")
        term = np.empty_like(values)
        for j in self.weighed:
            values += np.multiply(X[:, j:j + 1], self.weights[j], out=term)
        return values

    def path(self, X: np.ndarray) -> list[np.ndarray]:
        """The node (index) of every row of ``X`` (columns ``columns``) at each level: the root,
        then ``depth`` steps (a row that reached its leaf stays there)."""
        at = [np.zeros(len(X), dtype=np.intp)]
        if self.depth:
            flat, rows = self.outcomes(X).ravel(order="F"), np.arange(len(X))
            for _ in range(self.depth):
                at.append(self.child[2 * at[-1] + flat[self.test[at[-1]] * len(X) + rows]])
        return at

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """The node index of the leaf each row of ``X`` (columns ``columns``) reaches: with at
        most LOOKUP_TESTS tests, looked up from the row's answers to all of them at once."""
        if self.lookup is None:
            return self.path(X)[-1]
        if len(X) <= BLOCK:
            return self.lookup[np.einsum("ij,j->i", self.outcomes(X).view(np.uint8), self.bits)]
        leaves = np.empty(len(X), dtype=np.intp)
        for start in range(0, len(X), BLOCK):  # temporaries that stay in cache
            leaves[start:start + BLOCK] = self.leaves(X[start:start + BLOCK])
        return leaves

    @cached_property
    def lookup(self) -> np.ndarray | None:
        """The leaf of every combination of test answers (bit t of its index: test t's answer),
        when there are at most LOOKUP_TESTS tests; else None."""
        tests = self.test_count
        if not 0 < tests <= LOOKUP_TESTS:
            return None
        self.bits = (1 << np.arange(tests)).astype(np.uint16)  # a row's answers → its index
        codes = np.arange(2**tests)
        answers = (codes[:, None] >> np.arange(tests)[None, :]) & 1
        at = np.zeros(len(codes), dtype=np.intp)
        for _ in range(self.depth):
            at = self.child[2 * at + answers[codes, self.test[at]]]
        return at


class DecisionGraph:
    """A decoded tree or diagram over encoded binary features."""

    def __init__(self, graph: nx.DiGraph, feature_names: list[str], class_names: list[str]):
        self._graph = graph
        arcs = {(u, v): outcome for u, v, outcome in graph.edges(data="outcome")}
        self._setup(dict(graph.nodes(data=True)), arcs, feature_names, class_names)

    @classmethod
    def _of(cls, nodes: dict[Any, dict], arcs: Arcs, feature_names: list[str],
            class_names: list[str]) -> DecisionGraph:
        """A decision graph of plain nodes (id → attributes) and arcs, its networkx form built
        when first asked for."""
        graph = cls.__new__(cls)
        graph._graph = None
        graph._setup(nodes, arcs, feature_names, class_names)
        return graph

    def _setup(self, nodes: dict[Any, dict], arcs: Arcs, feature_names: list[str], class_names: list[str]) -> None:
        outs: dict[Any, list] = {node: [] for node in nodes}
        for (u, v), outcome in arcs.items():
            outs[u].append((outcome, v))
        order = _topological(nodes, arcs)
        if order is None:
            raise ModelFileError("A decision graph needs exactly one root and no cycles.")
        if len(set(class_names)) != len(class_names):
            raise ModelFileError(f"The class names {reprlib.repr(list(class_names))} repeat; each class needs "
                                 "its own name.")
        for node, attrs in nodes.items():
            _check_node(node, attrs, outs[node], len(feature_names), len(class_names))
        self._nodes, self._arcs, self._outs, self._order = nodes, arcs, outs, order
        self.root = order[0]
        self.feature_names = list(feature_names)
        self.class_names = list(class_names)

    @property
    def graph(self) -> nx.DiGraph:
        """The graph as a ``networkx.DiGraph`` (nodes with their attributes, arcs with ``outcome``)."""
        if self._graph is None:
            import networkx as nx

            graph = nx.DiGraph()
            graph.add_nodes_from(self._nodes.items())
            graph.add_edges_from((u, v, {"outcome": outcome}) for (u, v), outcome in self._arcs.items())
            self._graph = graph
        return self._graph

    @cached_property
    def router(self) -> Router:
        """The graph compiled for routing (built on first use)."""
        return Router(self._order, self._nodes, self._outs, len(self.feature_names))

    @property
    def n_splits(self) -> int:
        """Number of nodes that test something (feature or hyperplane)."""
        return sum(1 for attrs in self._nodes.values() if "label" not in attrs)

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path."""
        return self.router.depth

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Class index for every row of the encoded matrix ``X``."""
        router = self.router
        return router.label[router.leaves(self._read(X))]

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """The id of the leaf or class terminal every row of the encoded matrix ``X`` reaches."""
        return self.router.ids[self.router.leaves(self._read(X))]

    def sample_counts(self, X: np.ndarray) -> dict:
        """How many rows of ``X`` pass through each node (the fragmentation view)."""
        return {node: len(rows) for node, rows in self.node_rows(X).items()}

    def node_rows(self, X: np.ndarray) -> dict:
        """The indices (ascending) of the rows of ``X`` that pass through each node."""
        path = np.stack(self.router.path(self._read(X)))
        changed = np.ones(path.shape, dtype=bool)
        changed[1:] = path[1:] != path[:-1]
        rows = _grouped(path.T[changed.T], changed.sum(axis=0))
        return {node: rows.get(self._order_index[node], NO_ROWS) for node in self._nodes}

    def arc_rows(self, X: np.ndarray) -> dict:
        """The indices (ascending) of the rows of ``X`` that take each arc ``(from, to)``."""
        path = np.stack(self.router.path(self._read(X)))
        n = len(self._order)
        moved = (path[1:] != path[:-1]).T
        arcs = (path[:-1] * n + path[1:]).T[moved]
        index = self._order_index
        codes = {(u, v): index[u] * n + index[v] for u, v in self._arcs}
        rows = _grouped(arcs, moved.sum(axis=1))
        return {arc: rows.get(code, NO_ROWS) for arc, code in codes.items()}

    @cached_property
    def _order_index(self) -> dict:
        return {node: k for k, node in enumerate(self._order)}

    def _read(self, X: np.ndarray) -> np.ndarray:
        """The columns of the encoded matrix ``X`` the graph reads (a DataError for a wrong shape)."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise DataError(f"Expected {len(self.feature_names)} encoded columns, got shape {X.shape}.")
        return X[:, self.router.columns]

    def to_text(self, counts: dict | None = None, encoder: FeatureEncoder | None = None,
                mix: dict | None = None) -> str:
        """Indented rendering; in a diagram a node reached again is referred to by id.

        ``counts`` (from :meth:`sample_counts`) adds the share of samples through each
        node; ``mix`` (from :meth:`class_counts`) adds each leaf's training rows per class and
        how many it misclassifies; the fitted ``encoder`` prints tests in the original
        features' units and values. A terminal shared by several arcs shows its rows once.
        """
        expanded: set = set()
        total = counts[self.root] if counts else 0

        def share(node) -> str:
            if not counts:
                return ""
            shared = " in all" if self.graph.in_degree(node) > 1 else ""
            percent = 100 * counts[node] / max(total, 1)
            return f"  ({counts[node]} samples{shared}, {percent:.1f}%{leaf_mix(node)})"

        def leaf_mix(node) -> str:
            attrs = self.graph.nodes[node]
            if mix is None or "label" not in attrs or counts[node] == 0:
                return ""
            per_class = ", ".join(f"{name}: {int(c)}" for name, c in zip(self.class_names, mix[node]))
            return f"; {counts[node] - int(mix[node][attrs['label']])} misclassified; by class {per_class}"

        def describe(node) -> str:
            attrs = self.graph.nodes[node]
            if "label" in attrs:
                if node in expanded:
                    return f"predict {self.class_names[attrs['label']]}  [node {node}, counted above]"
                if self.graph.in_degree(node) > 1:
                    expanded.add(node)
                return f"predict {self.class_names[attrs['label']]}  [node {node}]{share(node)}"
            if node in expanded:
                return f"go to node {node} (above)"
            return f"[node {node}] {self.test_text(node, encoder)} ?{share(node)}"

        def walk(node, indent: str) -> list[str]:
            if "label" in self.graph.nodes[node] or node in expanded:
                return []
            expanded.add(node)
            lines = []
            arcs = sorted(self.graph.out_edges(node, data="outcome"), key=lambda e: self.answer(node, e[2]))
            for k, (_, child, outcome) in enumerate(arcs):
                last = k == len(arcs) - 1
                answer = f"{self.answer(node, outcome)}: ".ljust(5)
                lines.append(f"{indent}{'└─ ' if last else '├─ '}{answer}{describe(child)}")
                lines += walk(child, indent + ("   " if last else "│  "))
            return lines

        return "\n".join([describe(self.root), *walk(self.root, "")])

    def class_counts(self, X: np.ndarray, y_index: np.ndarray) -> dict:
        """Per node, how many rows of ``X`` of each class (``y_index`` in 0..k-1; others not
        counted) pass through it."""
        k, y_index = len(self.class_names), np.asarray(y_index)
        return {node: np.bincount(y_index[rows][y_index[rows] >= 0], minlength=k)
                for node, rows in self.node_rows(X).items()}

    def answer(self, node, outcome: bool) -> str:
        """``"yes"`` or ``"no"``: the answer to the test as :meth:`test_text` prints it on the arc
        with ``outcome``. A one-feature hyperplane ``w·x >= b`` with w > 0 prints negated, as
        ``x < b/w``, so that every numeric test reads as an upper bound on its feature."""
        weights = self.graph.nodes[node].get("weights")
        negated = weights is not None and np.count_nonzero(weights) == 1 and float(np.max(weights)) > 0
        return "yes" if outcome != negated else "no"

    def test_text(self, node, encoder: FeatureEncoder | None = None) -> str:
        """The test of an internal node, e.g. ``age<=30.5``, ``+0.5·x1 -0.5·x3 >= 0.1`` or
        ``odor in {almond, anise}`` (with the ``encoder``; else the one-hot columns' names)."""
        attrs = self.graph.nodes[node]
        if "feature" in attrs:
            return self.feature_names[attrs["feature"]]
        if "subset" in attrs:
            if encoder is not None:
                return encoder.subset_text(attrs["subset"])
            return " or ".join(self.feature_names[j] for j in attrs["subset"])
        weights, threshold = np.asarray(attrs["weights"], dtype=float), float(attrs["threshold"])
        if encoder is not None:
            scale, offset = original_scale(encoder)
            weights, threshold = weights / scale, threshold + float(weights @ (offset / scale))
        largest = float(np.abs(weights).max())
        if largest > 0:  # a positive factor changes nothing but makes the weights readable
            weights, threshold = weights / largest, threshold / largest
        terms = [f"{w:+.4g}·{self.feature_names[j]}" for j, w in enumerate(weights) if w != 0]
        if len(terms) == 1:  # read as an upper bound, as threshold tests are (see ``answer``)
            j = int(np.flatnonzero(weights)[0])
            side = "<" if weights[j] > 0 else "<="
            return f"{self.feature_names[j]} {side} {threshold / weights[j]:.6g}"
        return f"{' '.join(terms) or '0'} >= {threshold:.6g}"

    def to_dot(self, counts: dict | None = None, encoder: FeatureEncoder | None = None) -> str:
        """Graphviz DOT source (with sample counts per node when ``counts`` is given)."""
        out = ["digraph odtk {", "  node [shape=box];"]
        for node, attrs in self.graph.nodes(data=True):
            text = (f"predict {self.class_names[attrs['label']]}" if "label" in attrs
                    else f"{self.test_text(node, encoder)} ?").replace("\\", "\\\\").replace('"', '\\"')
            if counts:
                text += f"\\n{counts[node]} samples, {100 * counts[node] / max(counts[self.root], 1):.1f}%"
            out.append(f'  n{node} [label="{text}"];')
        for u, v, data in self.graph.edges(data=True):
            out.append(f'  n{u} -> n{v} [label="{self.answer(u, data["outcome"])}"];')
        out.append("}")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": [{"id": int(n), **{k: _plain_attr(k, v) for k, v in a.items() if k in NODE_KEYS}}
                      for n, a in self.graph.nodes(data=True)],
            "arcs": [{"from": int(u), "to": int(v), "outcome": bool(d["outcome"])}
                     for u, v, d in self.graph.edges(data=True)],
            "feature_names": self.feature_names,
            "class_names": self.class_names,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "DecisionGraph":
        if len(data["nodes"]) > MAX_NODES:
            raise ModelFileError(f"its graph has {len(data['nodes']):,} nodes, more than the {MAX_NODES:,} "
                                 "odtk reads (a tree of depth 12 has 8,191)")
        nodes: dict[Any, dict] = {}
        for node in data["nodes"]:
            if not _is_index(node["id"]) or node["id"] in nodes:
                raise ModelFileError(f"node id {node['id']!r} is not a whole number used once")
            nodes[node["id"]] = {k: v for k, v in node.items() if k != "id"}
        arcs: Arcs = {}
        for arc in data["arcs"]:
            ends = (arc["from"], arc["to"])
            if not all(_is_index(end) and end in nodes for end in ends):
                raise ModelFileError(f"arc {ends[0]!r} -> {ends[1]!r} joins a node that is not in the file")
            if not isinstance(arc["outcome"], bool):
                raise ModelFileError(f"arc {ends[0]} -> {ends[1]} has outcome {arc['outcome']!r}, not true or false")
            arcs[ends] = arc["outcome"]
        return cls._of(nodes, arcs, list(data["feature_names"]), list(data["class_names"]))


NODE_KEYS = ("feature", "weights", "threshold", "label", "subset")
NO_ROWS = np.zeros(0, dtype=np.intp)


def _topological(nodes: dict, arcs: Arcs) -> list | None:
    """The nodes in a topological order from the one root; None without exactly one root or
    with a cycle."""
    parents = dict.fromkeys(nodes, 0)
    children: dict[Any, list] = {node: [] for node in nodes}
    for u, v in arcs:
        parents[v] += 1
        children[u].append(v)
    order = [node for node, count in parents.items() if count == 0]
    if len(order) != 1:
        return None
    for node in order:  # grows while it is read
        for child in children[node]:
            parents[child] -= 1
            if parents[child] == 0:
                order.append(child)
    return order if len(order) == len(nodes) else None


def _grouped(codes: np.ndarray, per_row: np.ndarray) -> dict[int, np.ndarray]:
    """Code → the rows (ascending) holding it, from ``codes`` listed row by row, ``per_row[i]`` of them for row i."""
    rows = np.repeat(np.arange(len(per_row)), per_row)
    order = np.argsort(codes, kind="stable")
    keys, starts = np.unique(codes[order], return_index=True)
    return dict(zip(keys.tolist(), np.split(rows[order], starts[1:])))


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


def original_scale(encoder: FeatureEncoder) -> Unscale:
    """Per encoded column (scale, offset) undoing min-max scaling (1, 0 for other columns)."""
    n = len(encoder.columns_)
    scale, offset = np.ones(n), np.zeros(n)
    if encoder.mode == "scaled":
        for name, kind in encoder.kinds_.items():
            if kind == "numeric":
                low, high = encoder.params_[name]
                (j,) = encoder.groups_[name]
                scale[j], offset[j] = (high - low) or 1.0, low
    return scale, offset


def _plain_attr(key: str, value: Any) -> Any:
    """Node attributes as JSON values: indices as int, hyperplanes as floats."""
    if key == "subset":
        return [int(v) for v in value]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [float(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value)
    return int(value)


def _check_node(node, attrs: dict, outs: list, n_features: int, n_classes: int) -> None:
    """A ModelFileError unless ``node`` (``attrs``, its arcs ``outs`` as (outcome, child)) is a
    valid test or leaf."""
    kinds = [k for k in ("feature", "weights", "label", "subset") if k in attrs]
    if len(kinds) != 1 or (("weights" in attrs) != ("threshold" in attrs)):
        raise ModelFileError(f"Node {node} must carry exactly one of: a feature, a hyperplane "
                             "(weights and threshold), a subset of one-hot columns, or a label.")
    if "label" in attrs:
        if not (_is_index(attrs["label"]) and 0 <= attrs["label"] < n_classes) or outs:
            raise ModelFileError(f"Node {node} predicts class {attrs['label']!r}, which does not exist "
                                 f"(classes 0..{n_classes - 1}), or has children.")
        return
    outcomes = [outcome for outcome, _ in outs]
    if None in outcomes or sorted(outcomes) != [False, True]:
        raise ModelFileError(f"Node {node} tests a feature but lacks its two outgoing arcs.")
    if "feature" in attrs and not (_is_index(attrs["feature"]) and 0 <= attrs["feature"] < n_features):
        raise ModelFileError(f"Node {node} tests feature {attrs['feature']!r}, which does not exist.")
    if "subset" in attrs and not all(_is_index(j) and 0 <= j < n_features for j in attrs["subset"]):
        raise ModelFileError(f"Node {node} tests a subset of columns that do not exist.")
    if "weights" in attrs and len(attrs["weights"]) != n_features:
        raise ModelFileError(f"Node {node} has {len(attrs['weights'])} weights for {n_features} features.")
    if "weights" in attrs and not all(map(_is_number, [*attrs["weights"], attrs["threshold"]])):
        raise ModelFileError(f"Node {node} has a hyperplane whose weights or threshold are not finite numbers.")


def _is_index(value: Any) -> bool:
    """A whole number (not a boolean)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    """A finite int or float (not a boolean)."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and bool(np.isfinite(value)))


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars, so labels serialise to JSON."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class TrainedModel:
    """A decision graph with its encoder and labels: predicts on raw data, saves to JSON."""

    graph: DecisionGraph
    encoder: FeatureEncoder
    classes: list
    method: str
    target: str = "target"
    summary: dict[str, Any] = field(default_factory=dict)

    def predict(self, features: Rows) -> np.ndarray:
        """Original class labels for raw feature rows (columns as in training; see
        :meth:`predict_index`)."""
        return np.asarray(self.classes, dtype=object)[self.predict_index(features)]

    def predict_index(self, features: Rows) -> np.ndarray:
        """The position in ``classes`` of the class predicted for each row of raw features: a
        DataFrame, a :class:`~odtk.datasets.Table`, a mapping of column names to values or a
        2-D array of the training columns in order. Only the encoded columns the graph tests
        are computed (every training column is still checked)."""
        router = self.graph.router
        return router.label[router.leaves(self.encoder.transform(features, router.columns))]

    def to_text(self, features: pd.DataFrame | None = None, target: Any = None) -> str:
        """The graph in original feature units, with sample shares when ``features`` is given
        and each leaf's rows per class and misclassified when ``target`` is given too."""
        if features is None:
            return self.graph.to_text(None, self.encoder)
        import pandas as pd

        encoded = self.encoder.transform(features)
        mix = None
        if target is not None:
            labels = [str(c) for c in self.classes]
            mix = self.graph.class_counts(encoded, pd.Index(labels).get_indexer(pd.Series(target).astype(str)))
        return self.graph.to_text(self.graph.sample_counts(encoded), self.encoder, mix)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "method": self.method,
            "target": self.target,
            "classes": [_plain(c) for c in self.classes],
            "encoder": self.encoder.to_dict(),
            "graph": self.graph.to_dict(),
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "TrainedModel":
        if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
            raise ModelFileError("This is not an odtk model file (no 'format: odtk-model'); pass a file "
                                 "saved by `odtk solve --output`.")
        version = data.get("version")
        if isinstance(version, bool) or version != FILE_VERSION:
            raise ModelFileError(
                f"Model file version {version!r} is not supported (this odtk reads "
                f"version {FILE_VERSION}); re-train the model with this odtk.")
        try:
            graph = DecisionGraph.from_dict(data["graph"])
            encoder = _encoder(data["encoder"])
            classes, summary = data["classes"], data.get("summary", {})
            if not isinstance(classes, list) or graph.class_names != [str(c) for c in classes]:
                raise ModelFileError("inconsistent: its classes do not match the class names of its graph")
            if graph.feature_names != encoder.columns_:
                raise ModelFileError("inconsistent: the encoded columns of its graph do not match its encoder")
            if not isinstance(summary, dict):
                raise ModelFileError("its summary is not a mapping")
            if not all(isinstance(data[name], str) for name in ("method", "target")):
                raise ModelFileError("its method and target must be text")
            return cls(graph, encoder, classes, str(data["method"]), str(data["target"]), summary)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            if isinstance(exc, KeyError):
                reason = f"missing entry {exc}"
            elif isinstance(exc, OdtkError):
                reason = str(exc).rstrip(".")
            else:
                reason = f"{type(exc).__name__}: {exc}"
            raise ModelFileError(f"The model file is damaged or edited ({reason}); restore the saved file or "
                                 "re-train the model.") from None

    def save(self, path: str | os.PathLike, force: bool = False) -> None:
        """Write JSON atomically; refuse to overwrite an existing file unless ``force``."""
        write_atomic(path, json.dumps(self.to_dict(), indent=1), force=force)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TrainedModel":
        try:
            text = read_regular(path, "model").decode("utf-8")
        except FileNotFoundError:
            raise ModelFileError(f"Model file {path} does not exist.") from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else exc
            raise ModelFileError(f"Cannot read model file {path} ({reason}); pass a model JSON saved by "
                                 "`odtk solve --output`.") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelFileError(f"Model file {path} is not valid JSON (truncated?): {exc.msg} "
                                 f"at line {exc.lineno}; restore the saved file or re-train the model.") from None
        except RecursionError:
            raise ModelFileError(f"Model file {path} is nested far deeper than a saved model; restore the "
                                 "saved file or re-train the model.") from None
        try:
            return cls.from_dict(data)
        except ModelFileError as exc:
            raise ModelFileError(f"{path}: {exc}") from None


def _encoder(data: dict[str, Any]) -> FeatureEncoder:
    """A fitted encoder from its saved form."""
    from odtk.datasets.encoders import FeatureEncoder

    return FeatureEncoder.from_dict(data)


def check_writable(path: str | os.PathLike, force: bool = False) -> Path:
    """``path`` as a Path if a file may be written there; else a one-line DataError saying why."""
    path = Path(path)
    try:
        exists = path.exists()
        regular = path.is_file()
    except OSError as exc:
        raise DataError(f"Cannot write {path} ({exc.strerror}); choose another file name.") from None
    if exists and not regular:
        raise DataError(f"{path} is not a regular file (a device, pipe or folder); odtk does not replace it, "
                        "even with --force: choose a file name.")
    if exists and not force:
        raise DataError(f"{path} already exists; choose another name or pass --force to overwrite it.")
    if not path.parent.is_dir():
        raise DataError(f"There is no folder {path.parent}; create it first or choose another folder.")
    if not os.access(path.parent, os.W_OK):
        raise DataError(f"Folder {path.parent} is not writable; choose a folder you can write to.")
    return path


def write_atomic(path: str | os.PathLike, content: str | bytes, force: bool = False) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` via a temporary file in the same folder, so
    ``path`` never holds half a file; never silently overwrite (see :func:`check_writable`). The
    file gets the usual permissions (0666 less the umask). A failure leaves no temporary file
    and is a DataError."""
    path = check_writable(path, force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as stream:
            stream.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise DataError(f"Cannot write {path} ({exc.strerror or exc}); choose another file name or folder.") from None
    finally:
        tmp.unlink(missing_ok=True)
