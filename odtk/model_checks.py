"""What a model file must hold to mean, once loaded, what it meant when it was saved.

The shape of each part is checked where it is read (:func:`odtk.graph_nodes.check_node` for a
node, :meth:`odtk.models.DecisionGraph.from_dict` for the graph); this module checks the values
whose change would change predictions without changing the shape:

* :func:`saved_params` — one encoder column's saved thresholds, categories or scaling;
* :func:`check_tests` — every test reads its columns as the encoder encodes them: a feature
  test a 0/1 column, a subset test one-hot columns of one feature, a hyperplane no column whose
  scaling is degenerate (min = max: every value encodes as 0);
* :func:`training_summary` and :func:`check_training` — the class counts of the training rows
  in each leaf, saved with a model, and on load their agreement with the leaves' classes.

Each refusal is a :class:`~odtk.exceptions.ModelFileError` naming the field and the node or
column; :meth:`odtk.models.TrainedModel.from_dict` adds the fix.
"""
from __future__ import annotations

import reprlib
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.exceptions import ModelFileError
from odtk.graph_nodes import first_repeat, is_index, is_number

if TYPE_CHECKING:
    from odtk.datasets.encoders import FeatureEncoder
    from odtk.models import DecisionGraph

TRAINING_KEYS = {"rows", "correct", "leaves"}
LEAF_KEYS = {"node", "class_counts"}


def saved_params(mode: str, name: str, kind: str, params: Any) -> list:
    """The saved parameters of encoder column ``name`` if they are what fitting makes: none for a
    binary column, distinct categories, ``[min, max]`` (scaled mode) or increasing thresholds."""
    numbers = isinstance(params, list) and all(map(is_number, params))
    if kind == "binary":
        valid, expected = params == [], "no parameters"
    elif kind == "categorical":
        valid, expected = isinstance(params, list) and all(map(is_label, params)), "a list of category values"
    elif kind == "numeric" and mode == "scaled":
        valid, expected = numbers and len(params) == 2 and params[0] <= params[1], "[min, max]"
    elif kind == "numeric":
        valid, expected = numbers and all(np.diff(params) > 0), "increasing finite thresholds"
    else:
        raise ModelFileError(f"column {name!r} has unknown kind {kind!r}; kinds are binary, numeric, categorical")
    if not valid:
        raise ModelFileError(f"column {name!r} ({kind}) has parameters that are not {expected}")
    twice = first_repeat(map(str, params)) if kind == "categorical" else None
    if twice is not None:
        raise ModelFileError(f"column {name!r} lists the category {twice!r} twice (categories compare as text)")
    return list(params)


def is_label(value: Any) -> bool:
    """A class or category as a model file holds one: text, a boolean or a finite number."""
    return isinstance(value, (str, bool)) or is_number(value)


def check_tests(nodes: dict[Any, dict], encoder: FeatureEncoder) -> None:
    """A ModelFileError unless every test of ``nodes`` reads its encoded columns as ``encoder``
    encodes them."""
    owner = {j: name for name, group in encoder.groups_.items() for j in group}
    for node, attrs in nodes.items():
        if "feature" in attrs and _scaled(encoder, owner[attrs["feature"]]):
            raise ModelFileError(f"node {node} tests column {owner[attrs['feature']]!r} as 0/1 ('feature'), "
                                 "but the encoder scales it to [0, 1]")
        if "subset" in attrs:
            _check_subset(node, attrs["subset"], owner, encoder)
        if "weights" in attrs:
            for j in np.flatnonzero(np.asarray(attrs["weights"], dtype=float)):
                _check_weighed(node, owner[int(j)], encoder)


def _scaled(encoder: FeatureEncoder, name: str) -> bool:
    return encoder.mode == "scaled" and encoder.kinds_[name] == "numeric"


def _check_subset(node: Any, subset: list, owner: dict[int, str], encoder: FeatureEncoder) -> None:
    """A subset test reads one-hot columns of one feature."""
    names = sorted({owner[j] for j in subset})
    if len(names) > 1:
        raise ModelFileError(f"node {node} tests the columns {reprlib.repr(list(subset))} ('subset') of more "
                             f"than one feature ({', '.join(map(repr, names))}); a subset test reads one feature")
    if encoder.mode != "onehot" and encoder.kinds_[names[0]] != "categorical":
        raise ModelFileError(f"node {node} tests a subset of column {names[0]!r} ('subset'), which the encoder "
                             "does not one-hot encode")


def _check_weighed(node: Any, name: str, encoder: FeatureEncoder) -> None:
    """A hyperplane weighs no column whose scaling is degenerate (every value encodes as 0)."""
    if _scaled(encoder, name) and encoder.params_[name][0] == encoder.params_[name][1]:
        low, high = encoder.params_[name]
        raise ModelFileError(f"encoder column {name!r} is scaled by [{low!r}, {high!r}] (min = max, so every "
                             f"value encodes as 0), yet node {node} weighs it")


def training_summary(graph: DecisionGraph, X: np.ndarray, y_index: np.ndarray) -> dict[str, Any]:
    """The training rows (encoded ``X``, class indices ``y_index``) as a model file stores them:
    their number, how many the graph classifies correctly and each leaf's rows per class."""
    router = graph.router
    mix = graph.class_counts(X, y_index)
    leaves = [(node, label) for node, label in zip(router.ids.tolist(), router.label.tolist()) if label >= 0]
    ids = graph.saved_ids()
    return {"rows": int(len(y_index)), "correct": int(sum(mix[node][label] for node, label in leaves)),
            "leaves": [{"node": ids[node], "class_counts": [int(c) for c in mix[node]]} for node, _ in leaves]}


def check_training(training: Any, labels: dict[Any, int], n_classes: int) -> None:
    """A ModelFileError unless ``training`` (a :func:`training_summary` as saved) counts the rows
    of exactly the leaves ``labels`` (leaf → class) and their classes classify as many rows
    correctly as it records."""
    if not isinstance(training, dict) or set(training) != TRAINING_KEYS:
        raise ModelFileError("its training summary ('training') does not hold exactly rows, correct and leaves")
    rows, correct, leaves = training["rows"], training["correct"], training["leaves"]
    if not (is_index(rows) and is_index(correct) and 0 <= correct <= rows):
        raise ModelFileError(f"its training summary counts {correct!r} of {rows!r} rows correct "
                             "('training.correct', 'training.rows'), not whole numbers with correct <= rows")
    if not isinstance(leaves, list) or not all(isinstance(e, dict) and set(e) == LEAF_KEYS for e in leaves):
        raise ModelFileError("its training summary's leaves ('training.leaves') are not a list of node and "
                             "class_counts")
    counts = _leaf_counts(leaves, labels, n_classes)
    total = sum(map(sum, counts.values()))
    if total != rows:
        raise ModelFileError(f"its training summary counts {total} rows in its leaves but {rows} in all "
                             "('training.rows')")
    right = sum(mix[labels[node]] for node, mix in counts.items())
    if right != correct:
        raise ModelFileError(f"the classes of its leaves ('label') classify {right} of its {rows} training rows "
                             f"correctly, where its training summary records {correct} ('training.correct'): "
                             "a leaf's class was changed")


def _leaf_counts(leaves: list[dict], labels: dict[Any, int], n_classes: int) -> dict[Any, list[int]]:
    """Leaf → its rows per class, each leaf of the graph listed once with a count per class."""
    counts: dict[Any, list[int]] = {}
    for entry in leaves:
        node, mix = entry["node"], entry["class_counts"]
        if not is_index(node) or node not in labels:
            raise ModelFileError(f"its training summary lists node {node!r} ('training.leaves'), which is not a "
                                 "leaf of its graph")
        if node in counts:
            raise ModelFileError(f"its training summary lists leaf {node} twice ('training.leaves')")
        if not (isinstance(mix, list) and len(mix) == n_classes and all(is_index(c) and c >= 0 for c in mix)):
            raise ModelFileError(f"its training summary gives leaf {node} the class counts {reprlib.repr(mix)} "
                                 f"('class_counts'), not {n_classes} whole numbers of rows")
        counts[node] = mix
    missing = sorted(set(labels) - set(counts), key=repr)
    if missing:
        raise ModelFileError(f"its training summary ('training.leaves') lacks leaf {missing[0]}")
    return counts
