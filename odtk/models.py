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

A :class:`TrainedModel` adds what prediction on raw data needs (the fitted
feature encoder and the original class labels) and is what ``--output`` saves.
"""
from __future__ import annotations

import json
import os
import reprlib
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from odtk.datasets import FeatureEncoder
from odtk.exceptions import DataError, ModelFileError, OdtkError
from odtk.files import read_regular

Unscale = tuple[np.ndarray, np.ndarray]  # per encoded column: x_scaled = (x - offset) / scale
FILE_FORMAT = "odtk-model"
FILE_VERSION = 1
MAX_NODES = 2**18  # read from a model file at most: a tree of depth 12, the deepest odtk learns, has 8,191


class DecisionGraph:
    """A decoded tree or diagram over encoded binary features."""

    def __init__(self, graph: nx.DiGraph, feature_names: list[str], class_names: list[str]):
        roots = [n for n in graph if graph.in_degree(n) == 0]
        if len(roots) != 1 or not nx.is_directed_acyclic_graph(graph):
            raise ModelFileError("A decision graph needs exactly one root and no cycles.")
        if len(set(class_names)) != len(class_names):
            raise ModelFileError(f"The class names {reprlib.repr(list(class_names))} repeat; each class needs "
                                 "its own name.")
        for node, attrs in graph.nodes(data=True):
            _check_node(node, attrs, graph, len(feature_names), len(class_names))
        self.graph = graph
        self.root = roots[0]
        self.feature_names = list(feature_names)
        self.class_names = list(class_names)

    @property
    def n_splits(self) -> int:
        """Number of nodes that test something (feature or hyperplane)."""
        return sum(1 for _, a in self.graph.nodes(data=True) if "label" not in a)

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path."""
        return nx.dag_longest_path_length(self.graph)

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Class index for every row of the encoded matrix ``X``."""
        return self._route(X)[0]

    def sample_counts(self, X: np.ndarray) -> dict:
        """How many rows of ``X`` pass through each node (the fragmentation view)."""
        return {node: len(rows) for node, rows in self.node_rows(X).items()}

    def node_rows(self, X: np.ndarray) -> dict:
        """The indices of the rows of ``X`` that pass through each node."""
        return self._route(X)[1]

    def _route(self, X: np.ndarray) -> tuple[np.ndarray, dict]:
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != len(self.feature_names):
            raise DataError(f"Expected {len(self.feature_names)} encoded columns, got shape {X.shape}.")
        at = {self.root: np.arange(X.shape[0])}
        reached = {node: np.arange(0) for node in self.graph}
        prediction = np.full(X.shape[0], -1, dtype=int)
        for node in nx.topological_sort(self.graph):
            rows = at.pop(node, None)
            if rows is None:
                continue
            reached[node] = rows
            attrs = self.graph.nodes[node]
            if "label" in attrs:
                prediction[rows] = attrs["label"]
                continue
            if "feature" in attrs:
                goes_true = X[rows, attrs["feature"]] > 0.5
            elif "subset" in attrs:
                goes_true = (X[np.ix_(rows, attrs["subset"])] > 0.5).any(axis=1)
            else:
                goes_true = X[rows] @ np.asarray(attrs["weights"], dtype=float) >= attrs["threshold"]
            for _, child, data in self.graph.out_edges(node, data=True):
                chosen = rows[goes_true == data["outcome"]]
                at[child] = np.concatenate([at[child], chosen]) if child in at else chosen
        return prediction, reached

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
        graph = nx.DiGraph()
        for node in data["nodes"]:
            if not _is_index(node["id"]) or node["id"] in graph:
                raise ModelFileError(f"node id {node['id']!r} is not a whole number used once")
            graph.add_node(node["id"], **{k: v for k, v in node.items() if k != "id"})
        for arc in data["arcs"]:
            ends = (arc["from"], arc["to"])
            if not all(_is_index(end) and end in graph for end in ends):
                raise ModelFileError(f"arc {ends[0]!r} -> {ends[1]!r} joins a node that is not in the file")
            if not isinstance(arc["outcome"], bool):
                raise ModelFileError(f"arc {ends[0]} -> {ends[1]} has outcome {arc['outcome']!r}, not true or false")
            graph.add_edge(*ends, outcome=arc["outcome"])
        return cls(graph, list(data["feature_names"]), list(data["class_names"]))


NODE_KEYS = ("feature", "weights", "threshold", "label", "subset")


def heap_tree(graph: nx.DiGraph) -> nx.DiGraph:
    """A copy of a univariate tree renumbered in heap order: root 1, the ``outcome=False``
    child of n is 2n and the ``outcome=True`` child 2n+1."""
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


def _check_node(node, attrs: dict, graph: nx.DiGraph, n_features: int, n_classes: int) -> None:
    kinds = [k for k in ("feature", "weights", "label", "subset") if k in attrs]
    if len(kinds) != 1 or (("weights" in attrs) != ("threshold" in attrs)):
        raise ModelFileError(f"Node {node} must carry exactly one of: a feature, a hyperplane "
                             "(weights and threshold), a subset of one-hot columns, or a label.")
    if "label" in attrs:
        if not (_is_index(attrs["label"]) and 0 <= attrs["label"] < n_classes) or graph.out_degree(node):
            raise ModelFileError(f"Node {node} predicts class {attrs['label']!r}, which does not exist "
                                 f"(classes 0..{n_classes - 1}), or has children.")
        return
    if sorted(d["outcome"] for *_, d in graph.out_edges(node, data=True)) != [False, True]:
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

    def predict(self, features: pd.DataFrame) -> np.ndarray:
        """Original class labels for raw feature rows (columns as in training)."""
        index = self.graph.predict_index(self.encoder.transform(features))
        return np.asarray(self.classes, dtype=object)[index]

    def to_text(self, features: pd.DataFrame | None = None, target: Any = None) -> str:
        """The graph in original feature units, with sample shares when ``features`` is given
        and each leaf's rows per class and misclassified when ``target`` is given too."""
        if features is None:
            return self.graph.to_text(None, self.encoder)
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
            encoder = FeatureEncoder.from_dict(data["encoder"])
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
