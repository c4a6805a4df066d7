"""Trees as nested tuples, as the SAT inference finds and returns them: ``("leaf", class)``
(``class`` None for a leaf no row reaches) or ``(feature, tree for x_f = 0, tree for x_f = 1)``.

Their predictions, size and depth, the tree as shown (:func:`simplify`) and a tree padded to a
perfect one (:func:`perfect_copy`).
"""
from __future__ import annotations

import numpy as np

Tree = tuple  # ("leaf", class | None) or (feature, tree for x_f = 0, tree for x_f = 1)


def predict(tree: Tree, X: np.ndarray) -> np.ndarray:
    """Class of every row (None for an unlabelled leaf)."""
    return np.array([_leaf_of(tree, row)[1] for row in np.asarray(X, dtype=bool)], dtype=object)


def _leaf_of(tree: Tree, row: np.ndarray) -> Tree:
    while tree[0] != "leaf":
        tree = tree[2] if row[tree[0]] else tree[1]
    return tree


def simplify(tree: Tree, X: np.ndarray) -> Tree:
    """The tree as shown: leaves no row of ``X`` reaches lose their label, then unlabelled
    leaves drop out and sub-trees whose leaves all carry one class collapse into one leaf."""
    X = np.asarray(X, dtype=bool)
    return _collapse(tree, X, np.ones(len(X), dtype=bool))


def _collapse(tree: Tree, X: np.ndarray, rows: np.ndarray) -> Tree:
    if tree[0] == "leaf":
        return tree if rows.any() else ("leaf", None)
    goes_right = X[:, tree[0]]
    left = _collapse(tree[1], X, rows & ~goes_right)
    right = _collapse(tree[2], X, rows & goes_right)
    if left == ("leaf", None) or left == right and left[0] == "leaf":
        return right
    if right == ("leaf", None):
        return left
    return (tree[0], left, right)


def count_leaves(tree: Tree) -> int:
    return 1 if tree[0] == "leaf" else count_leaves(tree[1]) + count_leaves(tree[2])


def count_nodes(tree: Tree) -> int:
    return 2 * count_leaves(tree) - 1


def tree_depth(tree: Tree) -> int:
    return 0 if tree[0] == "leaf" else 1 + max(tree_depth(tree[1]), tree_depth(tree[2]))


def perfect_copy(tree: Tree, depth: int) -> Tree:
    """``tree`` as a perfect tree of ``depth``: a leaf above the last level becomes a test of
    feature 0 whose two children carry its class (``simplify`` gives ``tree`` back)."""
    if depth == 0:
        return tree
    if tree[0] == "leaf":
        tree = (0, tree, tree)
    return (tree[0], perfect_copy(tree[1], depth - 1), perfect_copy(tree[2], depth - 1))
