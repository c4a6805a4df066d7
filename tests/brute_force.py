"""An independent oracle: enumerate every classification tree of small depth.

Trees may stop early (a label at any depth), splits test one binary feature
(left: 0, right: 1), and the objective is FlowOCT's
``(1 - λ) · correct − λ · splits``. Nothing here uses odtk's formulations.
"""
from __future__ import annotations

import itertools

import numpy as np


def all_trees(X: np.ndarray, n_classes: int, depth: int) -> list[tuple[np.ndarray, int]]:
    """Every tree of depth ≤ ``depth``, as (predictions on X, number of splits)."""
    n = X.shape[0]
    trees = [(np.full(n, k), 0) for k in range(n_classes)]
    if depth == 0:
        return trees
    smaller = all_trees(X, n_classes, depth - 1)
    for f in range(X.shape[1]):
        goes_right = X[:, f] == 1
        for (left, s_left), (right, s_right) in itertools.product(smaller, repeat=2):
            trees.append((np.where(goes_right, right, left), 1 + s_left + s_right))
    return trees


def best_objective(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, lam: float) -> float:
    """The optimal FlowOCT objective by exhaustive enumeration."""
    return max((1 - lam) * int((pred == y).sum()) - lam * splits
               for pred, splits in all_trees(X, n_classes, depth))
