"""Depth-limited optimal classification trees by AND/OR search with caching and bounds.

Citation: H. Verhaeghe, S. Nijssen, G. Pesant, C.-G. Quimper, P. Schaus, "Learning optimal
decision trees using constraint programming", Constraints 25 (2020) 226–250.

Problem: on binary features, a tree of depth at most ``D`` whose leaves each cover at least
``N_min`` training samples (the CoverSize constraint), with the fewest misclassified samples.

The search runs over itemsets — the decisions ``x_f = 0`` / ``x_f = 1`` on the path to a node;
an itemset's *cover* is the set of samples satisfying all of them (a bitset):

* **OR node** (an itemset with ``d`` levels left): a leaf predicting the majority class
  (error = cover size − majority count), or a split on a feature not yet on the path. Features
  are tried in order of their one-split error; the upper bound ``ub`` is tightened by the best
  tree found, and a split must strictly beat the leaf it replaces (no useless nodes).
* **AND node** (a split on ``f``): the left child (``x_f = 0``) is solved first under
  ``ub − lb(right)``; the right child only if the left fits, under ``ub − error(left)``.
* **Cache**, keyed by the itemset as a set (so the order of decisions does not matter): the
  optimal sub-tree and its error, or a lower bound when no sub-tree exists under a given bound.
* **Counting at the bottom**: sub-problems with at most ``counting_depth`` (1 or 2) levels left
  are solved exactly by counting class frequencies for every feature (or pair of features) at
  once with numpy — the same trees the search would enumerate, scored in bulk.
  ``counting_depth=0`` searches down to single leaves.

A time limit stops the search and returns the best tree found with a proven lower bound.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import networkx as nx
import numpy as np
from threadpoolctl import threadpool_limits

KEY = "cp"
VARIANTS: dict[str, dict] = {"cp": {}}  # the --model keys this engine answers, with their settings
CITATION = ("Verhaeghe, Nijssen, Pesant, Quimper & Schaus, Learning optimal decision trees "
            "using constraint programming, Constraints 25 (2020) 226-250")
SENSE = "minimize"
FEATURES = "binary"
OBJECTIVE = "misclassified training rows, minimised"
SKELETON = "tree"
HYPERPARAMETERS = {"min_support": (1, 1_000_000_000, 1)}
CHOICES = {"counting_depth": (2, 1, 0)}
SIDE_CONSTRAINTS = ("min_support",)
SOLVER = "odtk-search"

Tree = tuple  # ("leaf", class) or (feature, tree for x_f = 0, tree for x_f = 1)


class InvalidOptions(ValueError):
    """The options leave no tree to search (e.g. a leaf support above the sample count)."""


@dataclass(frozen=True)
class SearchOutcome:
    """The best tree found, its training error, a proven lower bound and search statistics."""

    tree: Tree
    error: int
    lower_bound: int
    status: str  # "optimal" or "time_limit"
    search_nodes: int
    cache_size: int
    seconds: float

    @property
    def objective(self) -> int:
        return self.error


@dataclass
class _Entry:
    """What the cache knows of an itemset: its optimal tree, or only a lower bound."""

    tree: Tree | None
    error: int | None
    lower_bound: float


def search(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_support: int = 1,
           counting_depth: int = 2, time_limit: float | None = None) -> SearchOutcome:
    """The minimum-error tree of depth ≤ ``depth`` with ≥ ``min_support`` samples per leaf."""
    if len(y) < min_support:
        raise InvalidOptions(f"min_support={min_support} exceeds the {len(y)} training samples; "
                         "lower it.")
    start = time.perf_counter()
    deadline = start + time_limit if time_limit is not None else float("inf")
    depth = depth if X.shape[1] else 0  # nothing to test: the tree is a leaf
    engine = _Search(np.asarray(X, dtype=bool), np.asarray(y), n_classes, min_support,
                     counting_depth, deadline)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: threads only cost
        tree, error, lower_bound = engine.solve(frozenset(), engine.everything, depth, float("inf"))
    lower_bound = max(int(np.ceil(lower_bound - 1e-9)), conflict_bound(X, y))
    status = "optimal" if error <= lower_bound else "time_limit"
    return SearchOutcome(tree, int(error), min(lower_bound, int(error)), status, engine.nodes,
                         len(engine.cache), time.perf_counter() - start)


def conflict_bound(X: np.ndarray, y: np.ndarray) -> int:
    """Errors no tree avoids: samples with equal features but a minority label among them."""
    _, rows = np.unique(np.asarray(X, dtype=bool), axis=0, return_inverse=True)
    counts = np.zeros((rows.max() + 1, int(np.max(y)) + 1), dtype=int)
    np.add.at(counts, (rows.ravel(), np.asarray(y)), 1)
    return int((counts.sum(axis=1) - counts.max(axis=1)).sum())


class _Search:
    """One search: the data as bitsets and per-class arrays, the cache and the counters."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, min_support: int,
                 counting_depth: int, deadline: float):
        self.n, self.m = X.shape
        self.min_support = min_support
        self.counting_depth = counting_depth
        self.deadline = deadline
        self.nbytes = (self.n + 7) // 8
        self.everything = (1 << self.n) - 1
        self.ones = [self._bits(X[:, f]) for f in range(self.m)]
        self.classes = [self._bits(y == c) for c in range(n_classes)]
        self.rows_of_class = [np.flatnonzero(y == c) for c in range(n_classes)]
        self.X_of_class = [np.ascontiguousarray(X[rows], dtype=np.float32) for rows in self.rows_of_class]
        self.cache: dict[frozenset, _Entry] = {}
        self.pair_counts: dict[frozenset, np.ndarray] = {}  # for the children being searched
        self.nodes = 0
        self.timed_out = False

    @staticmethod
    def _bits(mask: np.ndarray) -> int:
        return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")

    def _class_rows(self, cover: int) -> list[np.ndarray]:
        """Per class, the rows of X (as float32) in ``cover``."""
        raw = np.frombuffer(cover.to_bytes(self.nbytes, "little"), dtype=np.uint8)
        mask = np.unpackbits(raw, bitorder="little", count=self.n).view(bool)
        return [X[mask[rows]] for X, rows in zip(self.X_of_class, self.rows_of_class)]

    # ------------------------------------------------------------------ OR nodes
    def solve(self, itemset: frozenset, cover: int, depth: int,
              ub: float) -> tuple[Tree | None, int | None, float]:
        """(optimal tree if its error is < ``ub`` else None, its error, a lower bound)."""
        entry = self.cache.get(itemset)
        if entry is not None and entry.tree is not None:
            return (entry.tree if entry.error < ub else None), entry.error, entry.lower_bound
        if entry is not None and entry.lower_bound >= ub:
            return None, None, entry.lower_bound
        self.nodes += 1
        counts = [(cover & members).bit_count() for members in self.classes]
        leaf_error = sum(counts) - max(counts)
        leaf = ("leaf", counts.index(max(counts)))
        if depth == 0 or leaf_error == 0 or sum(counts) < 2 * self.min_support:
            tree, error, lower_bound, exact = leaf, leaf_error, leaf_error, True
        elif depth <= self.counting_depth:
            tree, error = self._counted(cover, depth, np.array(counts), itemset)
            lower_bound, exact = error, True
        else:
            tree, error, lower_bound, exact = self._or_node(itemset, cover, depth, ub, leaf, leaf_error)
        if exact:  # an OR node's tree, when found, is optimal: pruning only drops worse ones
            self.cache[itemset] = _Entry(tree, error, lower_bound)
        return (tree if tree is not None and error < ub else None), error, lower_bound

    def _or_node(self, itemset: frozenset, cover: int, depth: int, ub: float, leaf: Tree,
                 leaf_error: int) -> tuple[Tree | None, int | None, float, bool]:
        """Try the leaf, then every useful split; returns (tree, error, lower bound, complete)."""
        best, best_error = (leaf, leaf_error) if leaf_error < ub else (None, None)
        ub = min(ub, leaf_error)  # a split must beat the leaf it replaces
        lower_bound = float(leaf_error)
        parent_pairs = None
        for f in self._features_by_error(itemset, cover):
            if time.perf_counter() > self.deadline or self.timed_out:
                self.timed_out = True
                return best, best_error, 0.0, False  # untried features: nothing proven
            right = cover & self.ones[f]
            left = cover ^ right
            if left.bit_count() < self.min_support or right.bit_count() < self.min_support:
                continue
            left_key, right_key = itemset | {2 * f}, itemset | {2 * f + 1}
            if depth == 3 and self.counting_depth == 2:
                parent_pairs = self._share_pair_counts(cover, parent_pairs, left_key, left,
                                                       right_key, right)
            right_known = self.cache.get(right_key)
            right_lb = right_known.lower_bound if right_known else 0.0
            left_tree, left_error, left_lb = self.solve(left_key, left, depth - 1, ub - right_lb)
            if left_tree is None:
                lower_bound = min(lower_bound, left_lb + right_lb)
                continue
            right_tree, right_error, right_lb = self.solve(right_key, right, depth - 1, ub - left_error)
            lower_bound = min(lower_bound, left_lb + right_lb)
            if right_tree is not None:
                best, best_error = (f, left_tree, right_tree), left_error + right_error
                ub = best_error
                if best_error == 0:
                    break
        if self.timed_out:
            return best, best_error, 0.0, False
        return best, best_error, lower_bound, True

    def _features_by_error(self, itemset: frozenset, cover: int) -> list[int]:
        """Features not on the path, best single split first."""
        rows = self._class_rows(cover)
        counts = np.array([len(r) for r in rows], dtype=np.float32)
        ones = np.array([r.sum(axis=0) for r in rows])
        errors = _error(ones) + _error(counts[:, None] - ones)
        used = {literal >> 1 for literal in itemset}
        return [int(f) for f in np.argsort(errors, kind="stable") if f not in used]

    # ------------------------------------------------------------------ counting
    def _pairs(self, cover: int) -> np.ndarray:
        """``[c, f, g]``: samples of class c in ``cover`` with x_f = 1 and x_g = 1."""
        return np.array([rows.T @ rows for rows in self._class_rows(cover)])

    def _share_pair_counts(self, cover: int, parent: np.ndarray | None, left_key: frozenset,
                           left: int, right_key: frozenset, right: int) -> np.ndarray | None:
        """Count pairs on the smaller child only; the other child's are the parent's minus those."""
        self.pair_counts.clear()
        if left_key in self.cache and right_key in self.cache:
            return parent
        parent = self._pairs(cover) if parent is None else parent
        small_key, small, large_key = ((left_key, left, right_key)
                                       if left.bit_count() <= right.bit_count() else
                                       (right_key, right, left_key))
        self.pair_counts[small_key] = self._pairs(small)
        self.pair_counts[large_key] = parent - self.pair_counts[small_key]
        return parent

    def _counted(self, cover: int, depth: int, counts: np.ndarray,
                 itemset: frozenset) -> tuple[Tree, int]:
        """The optimal tree of depth ≤ ``depth`` (1 or 2) by counting, and its error."""
        allowed = np.ones(self.m, dtype=bool)
        allowed[[literal >> 1 for literal in itemset]] = False
        if depth == 1:
            ones = np.array([rows.sum(axis=0) for rows in self._class_rows(cover)])
            return _best_stump(counts, ones, allowed, self.min_support)
        pairs = self.pair_counts.pop(itemset, None)
        if pairs is None:
            pairs = self._pairs(cover)
        return _best_depth_two(counts, pairs, allowed, self.min_support)


# ---------------------------------------------------------------------- counting kernels
def _error(counts: np.ndarray) -> np.ndarray:
    """Misclassifications of a leaf with class counts along axis 0 (its majority is right)."""
    if len(counts) == 2:
        return np.minimum(counts[0], counts[1])
    return counts.sum(axis=0) - counts.max(axis=0)


def _leaf(counts: np.ndarray) -> Tree:
    return ("leaf", int(np.argmax(counts)))


def _best_stump(counts: np.ndarray, ones: np.ndarray, allowed: np.ndarray,
                min_support: int) -> tuple[Tree, int]:
    """Best of the leaf and every single split; ``ones[c, f]``: class-c samples with x_f = 1."""
    zeros = counts[:, None] - ones
    valid = allowed & (ones.sum(axis=0) >= min_support) & (zeros.sum(axis=0) >= min_support)
    errors = np.where(valid, _error(zeros) + _error(ones), np.inf)
    leaf_error = int(_error(counts))
    f = int(np.argmin(errors))
    if errors[f] < leaf_error:
        return (f, _leaf(zeros[:, f]), _leaf(ones[:, f])), int(round(errors[f]))
    return _leaf(counts), leaf_error


def _best_depth_two(counts: np.ndarray, pairs: np.ndarray, allowed: np.ndarray,
                    min_support: int) -> tuple[Tree, int]:
    """Best tree of depth ≤ 2; ``pairs[c, f, g]``: class-c samples with x_f = 1 and x_g = 1."""
    ones = np.diagonal(pairs, axis1=1, axis2=2)            # [c, f]: x_f = 1
    zeros = counts[:, None] - ones                           # [c, f]: x_f = 0
    # the four cells below a split on f then g, indexed [c, f, g]
    one_one = pairs
    one_zero = ones[:, :, None] - pairs
    zero_one = ones[:, None, :] - pairs
    zero_zero = zeros[:, :, None] - zero_one
    left_tree, left_error = _best_child(zeros, zero_zero, zero_one, min_support)
    right_tree, right_error = _best_child(ones, one_zero, one_one, min_support)
    valid = allowed & (ones.sum(axis=0) >= min_support) & (zeros.sum(axis=0) >= min_support)
    totals = np.where(valid, left_error + right_error, np.inf)
    leaf_error = int(_error(counts))
    f = int(np.argmin(totals))
    if totals[f] < leaf_error:
        return (f, left_tree(f), right_tree(f)), int(round(totals[f]))
    return _leaf(counts), leaf_error


def _best_child(child: np.ndarray, below_zero: np.ndarray, below_one: np.ndarray, min_support: int):
    """For every first split f, the best depth-1 sub-tree of one of its children.

    ``child[c, f]`` are the child's class counts, ``below_zero`` / ``below_one`` ``[c, f, g]``
    its grandchildren's after a second split on g. A second split on f itself or on a feature
    of the path leaves a grandchild empty, so it never beats the leaf and needs no mask.
    Returns (tree builder f → Tree, errors[f]).
    """
    split_errors = _error(below_zero) + _error(below_one)
    if min_support > 1:
        valid = (below_zero.sum(axis=0) >= min_support) & (below_one.sum(axis=0) >= min_support)
        split_errors = np.where(valid, split_errors, np.inf)
    g_best = np.argmin(split_errors, axis=1)
    split_best = split_errors[np.arange(len(g_best)), g_best]
    leaf_errors = _error(child)
    use_split = split_best < leaf_errors

    def tree(f: int) -> Tree:
        if not use_split[f]:
            return _leaf(child[:, f])
        g = int(g_best[f])
        return (g, _leaf(below_zero[:, f, g]), _leaf(below_one[:, f, g]))

    return tree, np.where(use_split, split_best, leaf_errors)


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 **hyperparameters) -> float:
    """Training misclassifications of a decoded tree whose predictions are ``predicted``."""
    return float(np.sum(np.asarray(predicted) != np.asarray(y)))
