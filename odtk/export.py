"""A fitted odtk estimator as text in the layout of :func:`sklearn.tree.export_text`.

Each test prints as the two conditions its branches stand for, in the original features'
units and values: ``age <= 40.50`` / ``age >  40.50`` for a threshold (and a 0/1 feature, as
scikit-learn prints it: ``member <= 0.50``), ``colour == red`` / ``colour != red`` for a
one-hot column, ``colour in {red, blue}`` / ``colour not in {red, blue}`` for a subset, and
``1.00*height - 0.52*weight >= 12.30`` / ``… <  12.30`` for a hyperplane of a diagram (its
coefficients divided by the largest). A diagram is printed as the tree of its paths (a node
reached again is printed again).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from odtk.estimator_base import SolvedClassifier
from odtk.graph_text import original_scale

Branch = tuple[str, Any]  # (the condition it stands for, the child node)


def export_text(estimator: SolvedClassifier, *, feature_names: Any = None, class_names: Any = None,
                max_depth: int = 10, spacing: int = 3, decimals: int = 2, show_weights: bool = False) -> str:
    """The rules of a fitted odtk estimator, as :func:`sklearn.tree.export_text` prints a tree.

    Parameters
    ----------
    estimator : OptimalTreeClassifier, OptimalDiagramClassifier or CategoricalTreeClassifier
        A fitted odtk estimator.
    feature_names : array-like of shape (n_features,), default=None
        The input features' names; None: ``feature_names_in_`` when the estimator was fitted on a
        DataFrame, else ``feature_0``, ``feature_1``, … as scikit-learn names them.
    class_names : array-like of shape (n_classes,), default=None
        Names of the classes in the order of ``classes_``; None: ``classes_``.
    max_depth : int, default=10
        Only the first ``max_depth`` levels are printed; deeper branches are marked
        ``truncated branch of depth d``.
    spacing : int, default=3
        Number of spaces between edges.
    decimals : int, default=2
        Number of decimal digits of thresholds, coefficients and weights.
    show_weights : bool, default=False
        Print at each leaf the weighted training samples per class that reached it.

    Returns
    -------
    str
        The report, one line per branch and leaf.
    """
    if not isinstance(estimator, SolvedClassifier):
        raise TypeError(f"odtk.export_text prints a fitted odtk estimator, not {type(estimator).__name__}; "
                        "for scikit-learn's trees use sklearn.tree.export_text.")
    check_is_fitted(estimator)
    names = _names(estimator, feature_names)
    classes = list(estimator.classes_ if class_names is None else class_names)
    if len(classes) != len(estimator.classes_):
        raise ValueError(f"class_names must hold {len(estimator.classes_)} names, one per class; got {len(classes)}.")
    graph = estimator.graph_.graph
    lines: list[str] = []

    def leaf(parent: Any, node: Any, indent: str) -> None:
        weights = estimator.exit_weights((parent, node))
        shown = "[" + ", ".join(f"{w:.{decimals}f}" for w in weights) + "] " if show_weights else ""
        label = classes[estimator._position[graph.nodes[node]["label"]]]
        lines.append(f"{indent} {'weights: ' if show_weights else ''}{shown}class: {label}")

    def walk(parent: Any, node: Any, depth: int) -> None:
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        if "label" in graph.nodes[node]:
            leaf(parent, node, indent)
        elif depth > max_depth + 1:
            lines.append(f"{indent} truncated branch of depth {_height(graph, node)}")
        else:
            for condition, child in _branches(estimator, node, names, decimals):
                lines.append(f"{indent} {condition}")
                walk(node, child, depth + 1)

    walk(None, estimator.graph_.root, 1)
    return "\n".join(lines) + "\n"


def _names(estimator: SolvedClassifier, given: Any) -> list[str]:
    """The input features' names to print."""
    if given is None:
        fitted = getattr(estimator, "feature_names_in_", None)
        return [f"feature_{j}" for j in range(estimator.n_features_in_)] if fitted is None else list(fitted)
    names = [str(name) for name in given]
    if len(names) != estimator.n_features_in_:
        raise ValueError(f"feature_names must contain {estimator.n_features_in_} elements, got {len(names)}.")
    return names


def _height(graph: Any, node: Any) -> int:
    """The number of levels from ``node`` down to its deepest leaf, itself included."""
    children = list(graph.successors(node))
    return 1 + max((_height(graph, child) for child in children), default=0)


def _branches(estimator: SolvedClassifier, node: Any, names: list[str], decimals: int) -> list[Branch]:
    """The two branches of a test node, the lower (or "no") one first, as scikit-learn orders them."""
    graph = estimator.graph_.graph
    encoder = estimator.model_.encoder
    attrs = graph.nodes[node]
    child = {outcome: v for _, v, outcome in graph.out_edges(node, data="outcome")}
    rename = dict(zip(estimator._frame_columns(), names))
    if "weights" in attrs:
        return _hyperplane(attrs, encoder, names, decimals, child)
    if "subset" in attrs:
        feature = _feature_of(encoder, attrs["subset"][0])
        if encoder.kinds_[feature] != "categorical":  # bins of a number, or 0/1: the others are the rest
            others = [j for j in encoder.groups_[feature] if j not in set(attrs["subset"])]
            texts = [encoder.subset_text(list(columns)).replace(feature, rename[feature], 1)
                     for columns in (attrs["subset"], others)]
            return [(texts[0], child[True]), (texts[1], child[False])]
        values = ", ".join(str(encoder.params_[feature][j - encoder.groups_[feature][0]]) for j in attrs["subset"])
        return [(f"{rename[feature]} in {{{values}}}", child[True]),
                (f"{rename[feature]} not in {{{values}}}", child[False])]
    column = attrs["feature"]
    feature = _feature_of(encoder, column)
    name, kind = rename[feature], encoder.kinds_[feature]
    if kind == "categorical":
        value = encoder.params_[feature][column - encoder.groups_[feature][0]]
        return [(f"{name} != {value}", child[False]), (f"{name} == {value}", child[True])]
    if kind == "binary":
        return [(f"{name} <= {0.5:.{decimals}f}", child[False]), (f"{name} >  {0.5:.{decimals}f}", child[True])]
    cut = f"{encoder.params_[feature][column - encoder.groups_[feature][0]]:.{decimals}f}"
    if encoder.thresholds == "values":  # the column is x > v
        return [(f"{name} <= {cut}", child[False]), (f"{name} >  {cut}", child[True])]
    return [(f"{name} <= {cut}", child[True]), (f"{name} >  {cut}", child[False])]  # the column is x <= t


def _feature_of(encoder: Any, column: int) -> str:
    """The input feature an encoded column belongs to."""
    return next(name for name, members in encoder.groups_.items() if column in members)


def _hyperplane(attrs: dict, encoder: Any, names: list[str], decimals: int, child: dict) -> list[Branch]:
    """The branches of a hyperplane test ``a·x >= b`` in the original units, its coefficients
    divided by the largest; a test of one numeric feature reads as a bound on it."""
    weights, threshold = np.asarray(attrs["weights"], dtype=float), float(attrs["threshold"])
    scale, offset = original_scale(encoder)
    weights, threshold = weights / scale, threshold + float(weights @ (offset / scale))
    largest = float(np.abs(weights).max()) or 1.0
    weights, threshold = weights / largest, threshold / largest
    features = list(encoder.groups_)
    owner = {column: k for k, name in enumerate(features) for column in encoder.groups_[name]}
    labels = {j: names[owner[j]] if encoder.kinds_[features[owner[j]]] != "categorical"
              else f"[{names[owner[j]]} == {encoder.columns_[j].split('=', 1)[1]}]" for j in np.flatnonzero(weights)}
    if len(labels) == 1:  # w·x >= b with |w| = 1: x >= b, or x <= -b
        ((j, label),) = labels.items()
        kind = encoder.kinds_[features[owner[j]]]
        if kind != "numeric" and (weights[j] * 0 >= threshold) != (weights[j] >= threshold):  # 0/1 apart
            zero, one = child[bool(weights[j] * 0 >= threshold)], child[bool(weights[j] >= threshold)]
            if kind == "binary":
                return [(f"{label} <= {0.5:.{decimals}f}", zero), (f"{label} >  {0.5:.{decimals}f}", one)]
            return [(label[1:-1].replace(" == ", " != "), zero), (label[1:-1], one)]
        if weights[j] > 0:
            return [(f"{label} <  {threshold:.{decimals}f}", child[False]),
                    (f"{label} >= {threshold:.{decimals}f}", child[True])]
        return [(f"{label} <= {-threshold:.{decimals}f}", child[True]),
                (f"{label} >  {-threshold:.{decimals}f}", child[False])]
    terms = " ".join(f"{'-' if weights[j] < 0 else '+'} {abs(weights[j]):.{decimals}f}*{label}"
                     for j, label in labels.items())
    lhs = terms.removeprefix("+ ") or "0"
    return [(f"{lhs} <  {threshold:.{decimals}f}", child[False]), (f"{lhs} >= {threshold:.{decimals}f}", child[True])]
