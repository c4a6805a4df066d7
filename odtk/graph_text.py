"""Decision graphs as text: an indented tree, the text of each test and Graphviz DOT source.

:class:`GraphText` renders a :class:`~odtk.models.DecisionGraph` (which inherits it), with the
samples through each node and each leaf's classes when given, and with a fitted encoder in
the original features' units and values (:func:`original_scale` undoes min-max scaling).
Every text a user gave (class labels, feature names, category values) goes through
:func:`isolated`, so that it cannot reorder the numbers drawn beside it.
"""
from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import networkx as nx

    from odtk.datasets.encoders import FeatureEncoder

Unscale = tuple[np.ndarray, np.ndarray]  # per encoded column: x_scaled = (x - offset) / scale
# Unicode bidirectional classes: embeddings, overrides, isolates and paragraph breaks, which
# reach past the text holding them, are shown escaped; right-to-left text is isolated.
ESCAPED = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI", "B"})
RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})
FSI, PDI = "\u2068", "\u2069"  # first strong isolate … pop directional isolate


def isolated(text: Any) -> str:
    """``text`` as odtk shows it beside its own words and numbers (on the terminal, in DOT and in
    pictures): each bidirectional control character and line break escaped (``\\u202e``,
    ``\\n``), so none is hidden and none reorders what follows (a right-to-left override would
    show the count 17 as 71), and text holding right-to-left characters wrapped in a Unicode
    isolate (FSI … PDI), so that it reads in its own direction without moving its neighbours.
    Other text is returned unchanged."""
    shown = "".join(char.encode("unicode_escape").decode("ascii")
                    if unicodedata.bidirectional(char) in ESCAPED else char for char in str(text))
    if any(unicodedata.bidirectional(char) in RIGHT_TO_LEFT for char in shown):
        return f"{FSI}{shown}{PDI}"
    return shown


class GraphText:
    """Text and DOT rendering of a decision graph: the mixin reads its ``graph`` (networkx),
    ``root``, ``feature_names`` and ``class_names``."""

    root: Any
    feature_names: list[str]
    class_names: list[str]

    if TYPE_CHECKING:
        @property
        def graph(self) -> nx.DiGraph: ...

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
            if mix is None or not counts or "label" not in attrs or counts[node] == 0:
                return ""
            per_class = ", ".join(f"{isolated(name)}: {int(c)}" for name, c in zip(self.class_names, mix[node]))
            return f"; {counts[node] - int(mix[node][attrs['label']])} misclassified; by class {per_class}"

        def describe(node) -> str:
            attrs = self.graph.nodes[node]
            if "label" in attrs:
                label = isolated(self.class_names[attrs["label"]])
                if node in expanded:
                    return f"predict {label}  [node {node}, counted above]"
                if self.graph.in_degree(node) > 1:
                    expanded.add(node)
                return f"predict {label}  [node {node}]{share(node)}"
            if node in expanded:
                return f"go to node {node} (above)"
            return f"[node {node}] {self.test_text(node, encoder)} ?{share(node)}"

        def walk(node, indent: str) -> list[str]:
            if "label" in self.graph.nodes[node] or node in expanded:
                return []
            expanded.add(node)
            lines = []
            arcs: list[tuple[Any, Any, bool]] = sorted(self.graph.out_edges(node, data="outcome"),
                                                       key=lambda e: self.answer(node, e[2]))
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
            return isolated(self.feature_names[attrs["feature"]])
        if "subset" in attrs:
            if encoder is not None:
                return isolated(encoder.subset_text(attrs["subset"]))
            return " or ".join(isolated(self.feature_names[j]) for j in attrs["subset"])
        weights, threshold = np.asarray(attrs["weights"], dtype=float), float(attrs["threshold"])
        if encoder is not None:
            scale, offset = original_scale(encoder)
            weights, threshold = weights / scale, threshold + float(weights @ (offset / scale))
        largest = float(np.abs(weights).max())
        if largest > 0:  # a positive factor changes nothing but makes the weights readable
            weights, threshold = weights / largest, threshold / largest
        terms = [f"{w:+.4g}·{isolated(self.feature_names[j])}" for j, w in enumerate(weights) if w != 0]
        if len(terms) == 1:  # read as an upper bound, as threshold tests are (see ``answer``)
            j = int(np.flatnonzero(weights)[0])
            side = "<" if weights[j] > 0 else "<="
            return f"{isolated(self.feature_names[j])} {side} {threshold / weights[j]:.6g}"
        return f"{' '.join(terms) or '0'} >= {threshold:.6g}"

    def to_dot(self, counts: dict | None = None, encoder: FeatureEncoder | None = None) -> str:
        """Graphviz DOT source (with sample counts per node when ``counts`` is given)."""
        out = ["digraph odtk {", "  node [shape=box];"]
        for node, attrs in self.graph.nodes(data=True):
            text = (f"predict {isolated(self.class_names[attrs['label']])}" if "label" in attrs
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
