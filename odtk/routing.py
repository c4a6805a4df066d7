"""Rows routed through a decision graph on arrays compiled once, level by level.

A :class:`Router` numbers the nodes in a topological order (:func:`topological_order`) and
takes a block of encoded rows to their leaves by array lookups, never by walking the graph;
with few tests a row's leaf is looked up from its answers to all of them at once.
:func:`grouped_rows` turns the nodes (or arcs) rows pass through into the rows of each.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from odtk.graph_nodes import is_index

Arcs = dict[tuple[Any, Any], Any]  # (from, to) → outcome
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
        if all(is_index(node) for node in order):
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



def topological_order(nodes: dict, arcs: Arcs) -> list | None:
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



def grouped_rows(codes: np.ndarray, per_row: np.ndarray) -> dict[int, np.ndarray]:
    """Code → the rows (ascending) holding it, from ``codes`` listed row by row, ``per_row[i]`` of them for row i."""
    rows = np.repeat(np.arange(len(per_row)), per_row)
    order = np.argsort(codes, kind="stable")
    keys, starts = np.unique(codes[order], return_index=True)
    return dict(zip(keys.tolist(), np.split(rows[order], starts[1:])))

