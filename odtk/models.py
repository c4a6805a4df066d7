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
Rows are routed on arrays compiled once from the graph (an :class:`odtk.routing.Router`),
level by level, never by walking the graph; a graph read from a file builds its ``networkx``
form only when asked, so predicting needs neither networkx nor pandas. The text and DOT
renderings come from :class:`odtk.graph_text.GraphText`.

A :class:`TrainedModel` adds what prediction on raw data needs (the fitted
feature encoder and the original class labels) and is what ``--output`` saves, with its
training summary (the training rows per leaf and class) when trained by odtk. Loading checks
what each value means, not only its shape (:mod:`odtk.model_checks`); files of version 1 saved
before the training summary existed load without it.
"""
from __future__ import annotations

import json
import os
import reprlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.exceptions import DataError, ModelFileError, OdtkError
from odtk.files import read_regular, write_atomic
from odtk.graph_nodes import NODE_KEYS, check_node, first_repeat, is_index, plain_attr
from odtk.graph_text import GraphText
from odtk.model_checks import check_tests, check_training, is_label
from odtk.routing import Arcs, Router, grouped_rows, topological_order

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

    from odtk.datasets.encoders import FeatureEncoder, Rows

FILE_FORMAT = "odtk-model"
FILE_VERSION = 1
MAX_NODES = 2**18  # read from a model file at most: a tree of depth 12, the deepest odtk learns, has 8,191


class DecisionGraph(GraphText):
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
        order = topological_order(nodes, arcs)
        if order is None:
            raise ModelFileError("A decision graph needs exactly one root and no cycles.")
        if len(set(class_names)) != len(class_names):
            raise ModelFileError(f"The class names {reprlib.repr(list(class_names))} repeat; each class needs "
                                 "its own name.")
        for node, attrs in nodes.items():
            check_node(node, attrs, outs[node], len(feature_names), len(class_names))
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
        rows = grouped_rows(path.T[changed.T], changed.sum(axis=0))
        return {node: rows.get(self._order_index[node], NO_ROWS) for node in self._nodes}

    def arc_rows(self, X: np.ndarray) -> dict:
        """The indices (ascending) of the rows of ``X`` that take each arc ``(from, to)``."""
        path = np.stack(self.router.path(self._read(X)))
        n = len(self._order)
        moved = (path[1:] != path[:-1]).T
        arcs = (path[:-1] * n + path[1:]).T[moved]
        index = self._order_index
        codes = {(u, v): index[u] * n + index[v] for u, v in self._arcs}
        rows = grouped_rows(arcs, moved.sum(axis=1))
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

    def class_counts(self, X: np.ndarray, y_index: np.ndarray) -> dict:
        """Per node, how many rows of ``X`` of each class (``y_index`` in 0..k-1; others not
        counted) pass through it."""
        k, y_index = len(self.class_names), np.asarray(y_index)
        return {node: np.bincount(y_index[rows][y_index[rows] >= 0], minlength=k)
                for node, rows in self.node_rows(X).items()}

    def saved_ids(self) -> dict[Any, int]:
        """Node → its id in a model file: the node itself when every node is a whole number, else
        its position (a topology given as a graph may name its nodes by text)."""
        nodes = list(self.graph.nodes)
        if all(isinstance(node, (int, np.integer)) for node in nodes):
            return {node: int(node) for node in nodes}
        return {node: position for position, node in enumerate(nodes)}

    def to_dict(self) -> dict[str, Any]:
        ids = self.saved_ids()
        return {
            "nodes": [{"id": ids[n], **{k: plain_attr(k, v) for k, v in a.items() if k in NODE_KEYS}}
                      for n, a in self.graph.nodes(data=True)],
            "arcs": [{"from": ids[u], "to": ids[v], "outcome": bool(d["outcome"])}
                     for u, v, d in self.graph.edges(data=True)],
            "feature_names": self.feature_names,
            "class_names": self.class_names,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecisionGraph:
        if not all(isinstance(data[key], list) for key in ("nodes", "arcs", "feature_names", "class_names")):
            raise ModelFileError("its graph's nodes, arcs, feature_names and class_names must be lists")
        if len(data["nodes"]) > MAX_NODES:
            raise ModelFileError(f"its graph has {len(data['nodes']):,} nodes, more than the {MAX_NODES:,} "
                                 "odtk reads (a tree of depth 12 has 8,191)")
        nodes: dict[Any, dict] = {}
        for node in data["nodes"]:
            if not is_index(node["id"]) or node["id"] in nodes:
                raise ModelFileError(f"node id {node['id']!r} is not a whole number used once")
            nodes[node["id"]] = {k: v for k, v in node.items() if k != "id"}
        arcs: Arcs = {}
        for arc in data["arcs"]:
            ends = (arc["from"], arc["to"])
            if not all(is_index(end) and end in nodes for end in ends):
                raise ModelFileError(f"arc {ends[0]!r} -> {ends[1]!r} joins a node that is not in the file")
            if not isinstance(arc["outcome"], bool):
                raise ModelFileError(f"arc {ends[0]} -> {ends[1]} has outcome {arc['outcome']!r}, not true or false")
            if ends in arcs:
                raise ModelFileError(f"arc {ends[0]} -> {ends[1]} is listed twice")
            arcs[ends] = arc["outcome"]
        return cls._of(nodes, arcs, data["feature_names"], data["class_names"])


NO_ROWS = np.zeros(0, dtype=np.intp)


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars, so labels serialise to JSON."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class TrainedModel:
    """A decision graph with its encoder and labels: predicts on raw data, saves to JSON.

    ``training`` (None for models from older files): the training rows, how many the graph
    classifies correctly and each leaf's rows per class (:func:`odtk.model_checks.training_summary`).
    """

    graph: DecisionGraph
    encoder: FeatureEncoder
    classes: list
    method: str
    target: str = "target"
    summary: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] | None = None

    def predict(self, features: Rows) -> np.ndarray:
        """Original class labels for raw feature rows (columns as in training; see
        :meth:`predict_index`)."""
        return np.asarray(self.classes, dtype=object)[self.predict_index(features)]

    def predict_index(self, features: Rows) -> np.ndarray:
        """The position in ``classes`` of the class predicted for each row of raw features: a
        DataFrame, a :class:`~odtk.datasets.Table`, a mapping of column names to values or a
        2-D array of the training columns in order. Only the encoded columns the graph tests
        are computed; every training column is still checked, but may miss values (NaN, an empty
        CSV field) where the graph tests none of its encoded columns."""
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
            **({} if self.training is None else {"training": self.training}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> TrainedModel:
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
            classes, summary, training = data["classes"], data.get("summary", {}), data.get("training")
            if not isinstance(classes, list) or graph.class_names != [str(c) for c in classes]:
                raise ModelFileError("inconsistent: its classes do not match the class names of its graph")
            if not all(map(is_label, classes)):
                raise ModelFileError(f"its classes {reprlib.repr(classes)} are not all text or finite numbers")
            if graph.feature_names != encoder.columns_:
                raise ModelFileError("inconsistent: the encoded columns of its graph do not match its encoder")
            check_tests(graph._nodes, encoder)
            if training is not None:
                labels = {node: attrs["label"] for node, attrs in graph._nodes.items() if "label" in attrs}
                check_training(training, labels, len(classes))
            if not isinstance(summary, dict):
                raise ModelFileError("its summary is not a mapping")
            if not all(isinstance(data[name], str) for name in ("method", "target")):
                raise ModelFileError("its method and target must be text")
            return cls(graph, encoder, classes, str(data["method"]), str(data["target"]), summary, training)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            if isinstance(exc, KeyError):
                reason = f"missing entry {exc}"
            elif isinstance(exc, OdtkError):
                reason = str(exc).rstrip(".")
            else:
                reason = f"{type(exc).__name__}: {exc}"
            raise ModelFileError(f"The model file is damaged or edited ({reason}); restore the saved file or "
                                 "re-train the model (`odtk solve ... --output`).") from None

    def save(self, path: str | os.PathLike, force: bool = False) -> None:
        """Write JSON atomically; refuse to overwrite an existing file unless ``force``."""
        write_atomic(path, json.dumps(self.to_dict(), indent=1), force=force)

    @classmethod
    def load(cls, path: str | os.PathLike) -> TrainedModel:
        try:
            text = read_regular(path, "model").decode("utf-8")
        except FileNotFoundError:
            raise ModelFileError(f"Model file {path} does not exist.") from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else exc
            raise ModelFileError(f"Cannot read model file {path} ({reason}); pass a model JSON saved by "
                                 "`odtk solve --output`.") from None
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as exc:
            raise ModelFileError(f"Model file {path} is not valid JSON (truncated?): {exc.msg} "
                                 f"at line {exc.lineno}; restore the saved file or re-train the model.") from None
        except RecursionError:
            raise ModelFileError(f"Model file {path} is nested far deeper than a saved model; restore the "
                                 "saved file or re-train the model.") from None
        except ModelFileError as exc:
            raise ModelFileError(f"Model file {path} is damaged or edited ({exc}); restore the saved file or "
                                 "re-train the model (`odtk solve ... --output`).") from None
        try:
            return cls.from_dict(data)
        except ModelFileError as exc:
            raise ModelFileError(f"{path}: {exc}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; a ModelFileError if it names an entry twice (which would be read
    as the last one silently)."""
    twice = first_repeat(key for key, _ in pairs)
    if twice is not None:
        raise ModelFileError(f"an object names the entry {twice!r} twice")
    return dict(pairs)


def _encoder(data: dict[str, Any]) -> FeatureEncoder:
    """A fitted encoder from its saved form."""
    from odtk.datasets.encoders import FeatureEncoder

    return FeatureEncoder.from_dict(data)
