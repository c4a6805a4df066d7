"""Decision graphs as text: an indented tree, the text of each test and Graphviz DOT source.

:class:`GraphText` renders a :class:`~odtk.models.DecisionGraph` (which inherits it), with the
samples through each node and each leaf's classes when given, and with a fitted encoder in
the original features' units and values (:func:`original_scale` undoes min-max scaling).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from odtk.datasets.encoders import FeatureEncoder

Unscale = tuple[np.ndarray, np.ndarray]  # per encoded column: x_scaled = (x - offset) / scale


class GraphText:
    """Text and DOT rendering of a decision graph: the mixin reads its ``graph`` (networkx),
    ``root``, ``feature_names`` and ``class_names``."""

    def to_text(self, counts: dict | None = None, encoder: FeatureEncoder | None = None,
                mix: dict | None = None) -> str:
        """Indented rendering; in a diagram a node reached again is referred to by id.

        ``counts`` (from :meth:`~odtk.models.DecisionGraph.sample_counts`) adds the share of
        samples through each node; ``mix`` (from :meth:`~odtk.models.DecisionGraph.class_counts`)
        adds each leaf's training rows per class and how many it misclassifies; the fitted
        ``encoder`` prints tests in the original features' units and values. A terminal shared by
        several arcs shows its rows once.
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
