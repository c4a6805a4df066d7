"""Depth-limited optimal classification trees by AND/OR search with caching and bounds.

Citation: H. Verhaeghe, S. Nijssen, G. Pesant, C.-G. Quimper, P. Schaus, "Learning optimal
decision trees using constraint programming", Constraints 25 (2020) 226–250.

Problem: on binary features, a tree of depth at most ``D`` whose leaves each cover at least
``N_min`` training samples (the CoverSize constraint), with the fewest misclassified samples.

The search runs over itemsets — the decisions ``x_f = 0`` / ``x_f = 1`` on the path to a node;
an itemset's *cover* is the set of samples satisfying all of them:

* **OR node** (an itemset with ``d`` levels left): a leaf predicting the majority class, or a
  split on a feature, tried in order of their one-split error. A split must strictly beat the
  best tree so far, the leaf first (no useless nodes).
* **AND node** (a split on ``f``): the child ``x_f = 0`` is solved first under the budget
  ``ub − lb(x_f = 1)``, the other only if the first fits, under ``ub − error(x_f = 0)``.
* **Cache** (``cache=True``), keyed by the branch — the itemset as a set, so the order of the
  decisions does not matter: a node's optimal error and root split, or a lower bound when no
  tree fits a budget. Leaves, pure nodes and nodes too small to split are never stored.
* **Bounds** (``bounds=True``): the budgets above, the lower bounds of the cache, the
  similarity bound (a cover within ``k`` samples of one whose bound is ``b`` has bound ≥
  ``b − k``; only with ``min_support = 1``, where removing samples keeps a tree feasible) and a
  greedy tree as the first incumbent. ``bounds=False`` solves every child to optimality.
* **Counting at the bottom**: nodes with at most ``counting_depth`` (1 or 2) levels left are
  solved exactly from class counts per feature (or pair of features, as popcounts of bitsets;
  a depth-3 node counts one child and takes the other's counts by subtraction) — the same
  trees the search would enumerate. ``counting_depth=0`` searches down to single leaves.

The loops run compiled (:mod:`odtk.engines.cp_kernels`, which says why numba). A time limit
stops the search and returns the best tree found with a proven lower bound.

Departures from the paper (section 4.2); none changes the optimum, since each only prunes
sub-trees that cannot beat the incumbent or scores the same trees another way:

* no CP solver: the search runs over the decisions directly, covers as row sets and bitsets,
  with the CoverSize constraint as the ``min_support`` test on each leaf's cover;
* the cache also stores lower bounds of branches where no tree fitted a budget (the paper
  stores optimal sub-trees only), and never stores leaves or pure nodes;
* the first child's budget is ``ub − lb(second child)``, not ``ub`` (the paper), and the
  similarity bound, the greedy incumbent and the feature order by one-split error are
  MurTree's / STreeD's, not the paper's (``bounds=False`` drops every bound: each child is
  solved to optimality);
* the bottom ``counting_depth`` levels are scored by counting, not enumerated node by node;
* whole-number ``sample_weight`` (odtk's): a row of weight w counts as w rows.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import networkx as nx
import numpy as np

KEY = "cp"
VARIANTS: dict[str, dict] = {"cp": {}}  # the --model keys this engine answers, with their settings
CITATION = ("Verhaeghe, Nijssen, Pesant, Quimper & Schaus, Learning optimal decision trees "
            "using constraint programming, Constraints 25 (2020) 226-250")
SENSE = "minimize"
FEATURES = "binary"
OBJECTIVE = "misclassified training rows, minimised"
SKELETON = "tree"
HYPERPARAMETERS = {"min_support": (1, 1_000_000_000, 1)}
CHOICES = {"counting_depth": (2, 1, 0), "cache": (True, False), "bounds": (True, False)}
SIDE_CONSTRAINTS = ("min_support",)
SOLVER = "odtk-search"
SAMPLE_WEIGHT = True  # whole-number weights: a row of weight w counts as w rows (search, objective_of)
MAX_WEIGHTED_ROWS = 10_000_000  # the rows the search sees, weights expanded

MAX_DEPTH = 20  # the tree is built in heap order: 2^(depth + 1) slots
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
    cache_size: int  # sub-trees stored for reuse (0 with ``cache=False``)
    seconds: float

    @property
    def objective(self) -> int:
        return self.error


def search(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_support: int = 1,
           counting_depth: int = 2, time_limit: float | None = None, cache: bool = True,
           bounds: bool = True, sample_weight: np.ndarray | None = None) -> SearchOutcome:
    """The minimum-error tree of depth ≤ ``depth`` with ≥ ``min_support`` samples per leaf;
    ``cache`` and ``bounds`` switch the cache and the bounds off for ablations. Whole-number
    ``sample_weight``: a row of weight w counts as w rows, in the errors and in ``min_support``."""
    from . import cp_kernels  # numba's import and compilation wait until a search

    if sample_weight is not None:
        X, y = _repeated(X, y, sample_weight)
    if len(y) < min_support:
        raise InvalidOptions(f"min_support={min_support} exceeds the {len(y)} training samples; "
                             "lower it.")
    start = time.perf_counter()
    X = np.asarray(X, dtype=bool)
    depth = min(depth, X.shape[1])  # a path tests each feature at most once
    if depth > min(MAX_DEPTH, cp_kernels.max_path_length(X.shape[1])):
        raise InvalidOptions(f"depth={depth} is deeper than this search handles with "
                             f"{X.shape[1]} features; lower it.")
    data = cp_kernels.make_data(X, np.asarray(y), n_classes, depth, min_support, counting_depth,
                                bool(cache), bool(bounds), time_limit)
    error, bound, features, labels, cache_size = cp_kernels.run(data, depth)
    lower_bound = min(max(int(bound), conflict_bound(X, y)), int(error))
    status = "optimal" if lower_bound >= error else "time_limit"
    return SearchOutcome(_nested(features, labels, 1), int(error), lower_bound, status,
                         data.search_nodes, int(cache_size) if cache else 0, time.perf_counter() - start)


def _repeated(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row repeated as often as its whole-number weight (the search counts rows)."""
    counts = np.asarray(sample_weight, dtype=float)
    if not np.array_equal(counts, np.round(counts)):
        raise InvalidOptions("The CP search takes whole-number sample weights (a row of weight w counts "
                             "as w rows); round or rescale them, or use a MILP model.")
    if counts.sum() > MAX_WEIGHTED_ROWS:
        raise InvalidOptions(f"The sample weights add up to {counts.sum():.0f} rows, more than the CP "
                             f"search's {MAX_WEIGHTED_ROWS:,}; divide them by a common factor.")
    counts = counts.astype(np.int64)
    return np.repeat(np.asarray(X), counts, axis=0), np.repeat(np.asarray(y), counts)


def _nested(features: np.ndarray, labels: np.ndarray, node: int) -> Tree:
    """The tree in heap order (``features[node]`` -1 at a leaf) as nested tuples."""
    if features[node] < 0:
        return ("leaf", int(labels[node]))
    return (int(features[node]), _nested(features, labels, 2 * node),
            _nested(features, labels, 2 * node + 1))


def conflict_bound(X: np.ndarray, y: np.ndarray) -> int:
    """Errors no tree avoids: samples with equal features but a minority label among them."""
    _, rows = np.unique(np.asarray(X, dtype=bool), axis=0, return_inverse=True)
    counts = np.zeros((rows.max() + 1, int(np.max(y)) + 1), dtype=int)
    np.add.at(counts, (rows.ravel(), np.asarray(y)), 1)
    return int((counts.sum(axis=1) - counts.max(axis=1)).sum())


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 sample_weight: np.ndarray | None = None, **hyperparameters) -> float:
    """Training misclassifications (their total weight) of a decoded tree whose predictions
    are ``predicted``."""
    wrong = np.asarray(predicted) != np.asarray(y)
    return float(wrong.sum() if sample_weight is None else np.dot(wrong, sample_weight))
