"""An independent oracle: enumerate every classification tree of small depth.

Trees may stop early (a label at any depth), splits test one binary feature
(left: 0, right: 1), and the objective is FlowOCT's
``(1 - λ) · correct − λ · splits``. Nothing here uses odtk's formulations.
"""
from __future__ import annotations

import itertools

import numpy as np


def all_trees(X: np.ndarray, n_classes: int, depth: int,
              rows: np.ndarray | None = None) -> list[tuple[np.ndarray, int, int]]:
    """Every tree of depth ≤ ``depth``, as (predictions on X, number of splits, samples of
    ``rows`` (default: all) in its smallest leaf)."""
    n = X.shape[0]
    rows = np.ones(n, dtype=bool) if rows is None else rows
    trees = [(np.full(n, k), 0, int(rows.sum())) for k in range(n_classes)]
    if depth == 0:
        return trees
    for f in range(X.shape[1]):
        goes_right = X[:, f] == 1
        lefts = all_trees(X, n_classes, depth - 1, rows & ~goes_right)
        rights = all_trees(X, n_classes, depth - 1, rows & goes_right)
        for (left, s_left, m_left), (right, s_right, m_right) in itertools.product(lefts, rights):
            trees.append((np.where(goes_right, right, left), 1 + s_left + s_right, min(m_left, m_right)))
    return trees


def best_objective(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, lam: float) -> float:
    """The optimal FlowOCT objective by exhaustive enumeration."""
    return max((1 - lam) * int((pred == y).sum()) - lam * splits
               for pred, splits, _ in all_trees(X, n_classes, depth))


def min_error(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_leaf: int = 1) -> int:
    """The fewest misclassifications of a tree whose every leaf holds ≥ ``min_leaf`` samples."""
    return min(int((pred != y).sum()) for pred, _, smallest in all_trees(X, n_classes, depth)
               if smallest >= min_leaf)


def fewest_leaves_of_a_perfect_tree(X: np.ndarray, y: np.ndarray, depth: int,
                                    rows: np.ndarray | None = None) -> float:
    """Leaves of the smallest tree of depth ≤ ``depth`` classifying ``rows`` without error
    (inf if none), trying every feature at every node."""
    rows = np.ones(len(y), dtype=bool) if rows is None else rows
    if len(set(y[rows])) <= 1:
        return 1
    if depth == 0:
        return float("inf")
    return min(fewest_leaves_of_a_perfect_tree(X, y, depth - 1, rows & (X[:, f] == 0))
               + fewest_leaves_of_a_perfect_tree(X, y, depth - 1, rows & (X[:, f] == 1))
               for f in range(X.shape[1]))


def best_value(tests: np.ndarray, y: np.ndarray, n_classes: int, depth: int, lam: float = 0.0,
               min_leaf: int = 1, rows: np.ndarray | None = None, sample_weight: np.ndarray | None = None) -> float:
    """The best ``(1 - λ) · correct − λ · splits`` of a tree of depth ≤ ``depth`` whose every
    leaf holds ≥ ``min_leaf`` of ``rows`` (−inf if none), by recursion over the rows reaching
    each node: a node is the better of a leaf and every split on a column of the 0/1 ``tests``.
    With ``sample_weight``, ``correct`` is the weight of the rows classified right."""
    rows = np.ones(len(y), dtype=bool) if rows is None else rows
    counts = np.bincount(y[rows], weights=None if sample_weight is None else sample_weight[rows], minlength=n_classes)
    value = (1 - lam) * counts.max() if rows.sum() >= min_leaf else -np.inf
    if depth == 0:
        return value
    for f in range(tests.shape[1]):
        goes_right = tests[:, f].astype(bool)
        split = (best_value(tests, y, n_classes, depth - 1, lam, min_leaf, rows & ~goes_right, sample_weight)
                 + best_value(tests, y, n_classes, depth - 1, lam, min_leaf, rows & goes_right, sample_weight))
        value = max(value, split - lam)
    return value



def best_correct_by_splits(tests: np.ndarray, y: np.ndarray, n_classes: int, depth: int,
                           weight: np.ndarray | None = None, size: np.ndarray | None = None,
                           min_leaf: float = 0) -> np.ndarray:
    """``C[s]``: the largest weight of correctly classified rows of a tree of depth ≤ ``depth``
    with exactly ``s`` splits (s = 0 … 2^depth − 1), −inf where no such tree exists.

    Every leaf predicts its rows' heaviest class (``weight``, default 1 a row) and must hold a
    ``size`` (default 1 a row) of at least ``min_leaf``; a split tests a column of the 0/1
    ``tests`` (left: 0, right: 1), and either side may be empty when ``min_leaf`` is 0. Every
    objective of a tree that counts its correct rows and its splits is a function of ``C``:
    FlowOCT's is ``max_s (1 − λ) C[s] − λ s``. The recursion is over the rows reaching each
    node, memoised on them."""
    weight = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=float)
    size = np.ones(len(y)) if size is None else np.asarray(size, dtype=float)
    columns = np.asarray(tests, dtype=bool).T
    memo: dict[tuple[bytes, int], np.ndarray] = {}

    def best(rows: np.ndarray, levels: int) -> np.ndarray:
        key = (rows.tobytes(), levels)
        if key not in memo:
            value = np.full(2**levels, -np.inf)
            if size[rows].sum() >= min_leaf:
                value[0] = np.bincount(y[rows], weights=weight[rows], minlength=n_classes).max()
            for goes_right in columns if levels > 0 else ():
                below = _max_plus(best(rows & ~goes_right, levels - 1), best(rows & goes_right, levels - 1))
                value[1:] = np.maximum(value[1:], below)
            memo[key] = value
        return memo[key]

    return best(np.ones(len(y), dtype=bool), depth)


def _max_plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``out[s] = max_{i + j = s} a[i] + b[j]``: the best of two subtrees with s splits in all."""
    out = np.full(len(a) + len(b) - 1, -np.inf)
    for i, value in enumerate(a):
        out[i:i + len(b)] = np.maximum(out[i:i + len(b)], value + b)
    return out
