"""The nodes of a decision graph: the attributes each may carry, checked, and as JSON values.

A node carries exactly one of a ``feature``, a hyperplane (``weights`` and ``threshold``), a
``subset`` of one-hot columns or a ``label`` (see :mod:`odtk.models`); :func:`check_node` refuses
any other node, and its arcs, as a :class:`~odtk.exceptions.ModelFileError`.
"""
from __future__ import annotations

import math
import reprlib
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from odtk.exceptions import ModelFileError

NODE_KEYS = ("feature", "weights", "threshold", "label", "subset")


def plain_attr(key: str, value: Any) -> Any:
    """Node attributes as JSON values: indices as int, hyperplanes as floats."""
    if key == "subset":
        return [int(v) for v in value]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [float(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value)
    return int(value)


def check_node(node, attrs: dict, outs: list, n_features: int, n_classes: int) -> None:
    """A ModelFileError unless ``node`` (``attrs``, its arcs ``outs`` as (outcome, child)) is a
    valid test or leaf."""
    kinds = [k for k in ("feature", "weights", "label", "subset") if k in attrs]
    if len(kinds) != 1 or (("weights" in attrs) != ("threshold" in attrs)):
        raise ModelFileError(f"Node {node} must carry exactly one of: a feature, a hyperplane "
                             "(weights and threshold), a subset of one-hot columns, or a label.")
    if "label" in attrs:
        if not (is_index(attrs["label"]) and 0 <= attrs["label"] < n_classes) or outs:
            raise ModelFileError(f"Node {node} predicts class {attrs['label']!r}, which does not exist "
                                 f"(classes 0..{n_classes - 1}), or has children.")
        return
    outcomes = [outcome for outcome, _ in outs]
    if None in outcomes or sorted(outcomes) != [False, True]:
        raise ModelFileError(f"Node {node} tests a feature but lacks its two outgoing arcs.")
    if "feature" in attrs and not (is_index(attrs["feature"]) and 0 <= attrs["feature"] < n_features):
        raise ModelFileError(f"Node {node} tests feature {attrs['feature']!r}, which does not exist.")
    if "subset" in attrs:
        check_subset(node, attrs["subset"], n_features)
    if "weights" in attrs and len(attrs["weights"]) != n_features:
        raise ModelFileError(f"Node {node} has {len(attrs['weights'])} weights for {n_features} features.")
    if "weights" in attrs and not all(map(is_number, [*attrs["weights"], attrs["threshold"]])):
        raise ModelFileError(f"Node {node} has a hyperplane whose weights or threshold are not finite numbers.")


def check_subset(node, subset: Any, n_features: int) -> None:
    """A ModelFileError unless ``subset`` lists existing columns, each once."""
    if not isinstance(subset, (list, tuple, np.ndarray)) or len(subset) == 0 \
            or not all(is_index(j) and 0 <= j < n_features for j in subset):
        raise ModelFileError(f"Node {node} tests a subset of columns {reprlib.repr(subset)} that is empty or "
                             f"names columns that do not exist (columns 0..{n_features - 1}).")
    twice = first_repeat(subset)
    if twice is not None:
        raise ModelFileError(f"Node {node} tests the subset of columns {reprlib.repr(list(subset))}, which lists "
                             f"column {twice} more than once.")


def first_repeat(values: Iterable[Hashable]) -> Hashable | None:
    """The first of ``values`` that repeats an earlier one (None if they are distinct)."""
    seen: set = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def is_index(value: Any) -> bool:
    """A whole number (not a boolean)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    """A finite int or float (not a boolean; not an int beyond floating point)."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, (bool, np.bool_)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False

