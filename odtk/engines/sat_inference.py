"""Minimum-depth and minimum-size consistent trees by incremental SAT.

Citation: F. Avellaneda, "Efficient Inference of Optimal Decision Trees", AAAI 2020
(algorithms ``DT_depth`` and ``DT_size``).

A *perfect* tree of depth k (every leaf at depth k; internal nodes 1 … 2^k − 1 in heap order,
the ``x_f = 1`` child of q is 2q + 1) must classify every training example correctly. Variables:

    X_{e,l}   bit l of the index of the leaf example e reaches (true: right, x_f = 1)
    F_{q,f}   internal node q tests feature f
    C_{q,c}   leaf q predicts class c (a leaf no example reaches may have no class)
    U_q       leaf q is used;  H_{q,j}   at least j of the leaves before q are used

Clauses:

    (1)  ∨_f F_{q,f}                                   every internal node tests a feature
    (2)  ¬F_{q,f} ∨ ¬F_{q,g}             f < g          … and only one
    (3)  path(e, q) ∨ ¬F_{q,f} ∨ X_{e,l}   e_f = 1      e goes right at q (level l) on a 1
    (4)  path(e, q) ∨ ¬F_{q,f} ∨ ¬X_{e,l}  e_f = 0      … and left on a 0
    (5)  path(e, q) ∨ C_{q,class(e)}                   the leaf e reaches predicts its class
    (6)  path(e, q) ∨ ¬C_{q,c}             c ≠ class(e) … and no other
    (7)  ¬C_{q,c} ∨ U_q                                a labelled leaf is used
    (8)  H_{0,0};  (9) ¬U_q ∨ ¬H_{q,j} ∨ H_{q+1,j+1};  (10) ¬H_{q,j} ∨ H_{q+1,j}
         and the assumption ¬H_{2^k, B+1}: at most B used leaves (Theorem 2: a consistent tree
         with B leaves, 2B − 1 nodes, exists iff a perfect one with ≤ B used leaves does)

where ``path(e, q)`` is the disjunction of literals false exactly when e's first bits lead to q.
Clauses (3)–(4) are generated per example by walking the tree as Algorithm 1 does, (5)–(6) as
Algorithm 2 does. Algorithm 3 adds examples lazily: solve, find a training example the tree
misclassifies, add its clauses only, repeat. ``DT_depth`` tries k = 1, 2, … until satisfiable;
``DT_size`` then searches the number of used leaves by dichotomy.

Any backend answering ``solve(assumptions) -> set of true variables or None`` over DIMACS
clauses works: a SAT solver from python-sat (kept between rounds), or a MILP solver given the
clauses as a feasibility model (``odtk.formulations.sat_clauses``).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

import networkx as nx
import numpy as np

KEY = "sat"
VARIANTS = {"sat-depth": {"minimize": "depth"}, "sat-size": {"minimize": "size"}}
CITATION = "Avellaneda, Efficient Inference of Optimal Decision Trees, AAAI 2020"
SENSE = "minimize"
FEATURES = "binary"
SKELETON = "search"  # the depth is found, not given (``depth`` caps it)
HYPERPARAMETERS: dict[str, tuple] = {}
CHOICES = {"encoding": ("incremental", "all-at-once")}
SIDE_CONSTRAINTS: tuple[str, ...] = ()
SOLVER = None  # answered by a registered SAT or MILP solver (an oracle), not an own engine
DEFAULT_SOLVER = "minisat22"
MAX_DEPTH = 12

Clause = list[int]
Tree = tuple  # ("leaf", class | None) or (feature, tree for x_f = 0, tree for x_f = 1)


class Oracle(Protocol):
    """A satisfiability backend over DIMACS-numbered variables."""

    def add_clauses(self, clauses: list[Clause]) -> None: ...

    def solve(self, assumptions: list[int]) -> set[int] | None: ...


class TimeLimitReached(Exception):
    """The backend ran out of time."""


class InvalidOptions(ValueError):
    """The options leave no tree to find (a depth cap below the minimum depth)."""


class InconsistentData(ValueError):
    """Two training rows (``rows``) have equal features and different classes."""

    def __init__(self, first: int, second: int):
        super().__init__(f"rows {first} and {second} have the same features but different classes")
        self.rows = (first, second)


@dataclass(frozen=True)
class SearchOutcome:
    """The smallest consistent tree found, how it was found and whether it is proven."""

    tree: Tree
    objective: int  # the depth (DT_depth) or the node count (DT_size)
    lower_bound: int | None
    status: str  # "optimal" or "time_limit"
    depth: int
    nodes: int
    rounds: int
    examples_encoded: int
    variables: int
    clauses: int
    seconds: float


def inconsistent_pair(X: np.ndarray, y: np.ndarray) -> tuple[int, int] | None:
    """Two rows with equal features and different classes, if any (no tree separates them)."""
    _, first, rows = np.unique(np.asarray(X, dtype=bool), axis=0, return_index=True,
                               return_inverse=True)
    rows = rows.ravel()
    clash = np.flatnonzero(np.asarray(y) != np.asarray(y)[first[rows]])
    return None if len(clash) == 0 else (int(first[rows[clash[0]]]), int(clash[0]))


class PerfectTreeClauses:
    """The clause set of a perfect tree of depth k, grown one example at a time."""

    def __init__(self, depth: int, n_features: int, n_classes: int):
        self.depth, self.n_features, self.n_classes = depth, n_features, n_classes
        self.n_leaves = 2**depth
        self.variables = 0
        self.F = {(q, f): self._new() for q in range(1, self.n_leaves) for f in range(n_features)}
        self.C = {(q, c): self._new() for q in range(self.n_leaves) for c in range(n_classes)}
        self.clauses: list[Clause] = []
        self.examples: list[int] = []
        self.counter: dict[tuple[int, int], int] = {}
        self._emit(self._one_feature_per_node())

    def _new(self) -> int:
        self.variables += 1
        return self.variables

    def _emit(self, clauses: list[Clause]) -> list[Clause]:
        self.clauses.extend(clauses)
        return clauses

    def _one_feature_per_node(self) -> list[Clause]:
        clauses = []
        for q in range(1, self.n_leaves):
            clauses.append([self.F[q, f] for f in range(self.n_features)])                    # (1)
            clauses.extend([-self.F[q, f], -self.F[q, g]] for f in range(self.n_features)    # (2)
                           for g in range(f + 1, self.n_features))
        return clauses

    def add_example(self, index: int, features: np.ndarray, label: int) -> list[Clause]:
        """Clauses (3)–(6) of one example; returns the new clauses."""
        bits = [self._new() for _ in range(self.depth)]  # X_{e,l}
        clauses: list[Clause] = []
        self._route(features, bits, clauses, [], 1, 0)
        self._label(label, bits, clauses, [], 0, 0)
        self.examples.append(index)
        return self._emit(clauses)

    def _route(self, features, bits, clauses, path, q, level) -> None:
        """Algorithm 1: at node q, a 1 sends the example right and a 0 left (3)–(4)."""
        if level == self.depth:
            return
        x = bits[level]
        for f in range(self.n_features):
            clauses.append([*path, -self.F[q, f], x if features[f] else -x])                # (3)/(4)
        self._route(features, bits, clauses, [*path, x], 2 * q, level + 1)      # left: x false
        self._route(features, bits, clauses, [*path, -x], 2 * q + 1, level + 1)  # right: x true

    def _label(self, label, bits, clauses, path, leaf, level) -> None:
        """Algorithm 2: the leaf the example reaches predicts its class and no other (5)–(6)."""
        if level == self.depth:
            clauses.append([*path, self.C[leaf, label]])                                     # (5)
            clauses.extend([*path, -self.C[leaf, c]] for c in range(self.n_classes) if c != label)  # (6)
            return
        x = bits[level]
        self._label(label, bits, clauses, [*path, x], 2 * leaf, level + 1)
        self._label(label, bits, clauses, [*path, -x], 2 * leaf + 1, level + 1)

    def leaf_counter(self) -> list[Clause]:
        """Clauses (7)–(10): U_q and the sequential counter H_{q,j} over the leaves."""
        used = [self._new() for _ in range(self.n_leaves)]
        clauses = [[-self.C[q, c], used[q]] for q in range(self.n_leaves)                    # (7)
                   for c in range(self.n_classes)]
        H = self.counter
        for q in range(self.n_leaves + 1):
            for j in range(q + 2):
                H[q, j] = self._new()
        clauses.append([H[0, 0]])                                                             # (8)
        for q in range(self.n_leaves):
            for j in range(q + 1):
                clauses.append([-used[q], -H[q, j], H[q + 1, j + 1]])                         # (9)
                clauses.append([-H[q, j], H[q + 1, j]])                                       # (10)
        return self._emit(clauses)

    def at_most_leaves(self, bound: int) -> list[int]:
        """The assumption ¬H_{2^k, B+1}: at most ``bound`` used leaves."""
        return [-self.counter[self.n_leaves, bound + 1]] if bound < self.n_leaves else []

    def decode(self, true: set[int]) -> Tree:
        """The perfect tree of a satisfying assignment (unlabelled leaves carry None)."""
        def node(q: int, level: int) -> Tree:
            if level == self.depth:
                leaf = q - self.n_leaves
                labels = [c for c in range(self.n_classes) if self.C[leaf, c] in true]
                return ("leaf", labels[0] if labels else None)
            feature = next(f for f in range(self.n_features) if self.F[q, f] in true)
            return (feature, node(2 * q, level + 1), node(2 * q + 1, level + 1))
        return node(1, 0)


class SatOracle:
    """A python-sat solver kept between rounds (incremental), with a wall-clock limit.

    Solvers python-sat can interrupt (MiniSat, Glucose, …) stop at the deadline; the others
    (CaDiCaL) are checked against it between queries.
    """

    def __init__(self, name: str, deadline: float):
        from pysat.solvers import Solver  # python-sat: the optional "sat" extra

        self.solver = Solver(name=name)
        self.deadline = deadline
        self.interruptible = not name.startswith("cadical")

    def add_clauses(self, clauses: list[Clause]) -> None:
        self.solver.append_formula(clauses)

    def solve(self, assumptions: list[int]) -> set[int] | None:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeLimitReached
        if self.interruptible and remaining < float("inf"):
            timer = threading.Timer(remaining, self.solver.interrupt)
            timer.start()
            try:
                answer = self.solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
            finally:
                timer.cancel()
                self.solver.clear_interrupt()
        else:
            answer = self.solver.solve(assumptions=assumptions)
        if answer is None:
            raise TimeLimitReached
        return {v for v in self.solver.get_model() if v > 0} if answer else None

    def close(self) -> None:
        self.solver.delete()


def search(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int | None = None,
           minimize: str = "depth", encoding: str = "incremental",
           oracle: Callable[[float], Oracle] | str = "minisat22",
           time_limit: float | None = None) -> SearchOutcome:
    """``DT_depth`` (``minimize="depth"``) or ``DT_size`` (``"size"``) on binary features.

    ``depth`` caps the depths tried; ``oracle`` is a python-sat solver name or a factory
    ``deadline -> Oracle``; ``encoding="all-at-once"`` encodes every example from the start.
    """
    X, y = np.asarray(X, dtype=bool), np.asarray(y)
    pair = inconsistent_pair(X, y)
    if pair is not None:
        raise InconsistentData(*pair)
    start = time.monotonic()
    deadline = start + time_limit if time_limit is not None else float("inf")
    make_oracle = (lambda limit: SatOracle(oracle, limit)) if isinstance(oracle, str) else oracle
    run = _Run(X, y, n_classes, encoding, make_oracle, deadline)
    try:
        found = run.min_depth(MAX_DEPTH if depth is None else depth)
        if minimize == "size":
            found = run.min_size(found)
    except TimeLimitReached:
        if run.best is None:
            raise
        found, run.status = run.best, "time_limit"
    finally:
        run.close()
    tree = simplify(found, X)
    depth, nodes = tree_depth(tree), count_nodes(tree)
    objective = nodes if minimize == "size" else depth
    return SearchOutcome(tree, objective, objective if run.status == "optimal" else None,
                         run.status, depth, nodes, run.rounds, len(run.clauses.examples),
                         run.clauses.variables, len(run.clauses.clauses), time.monotonic() - start)


class _Run:
    """One run of Algorithm 3 (with DT_depth / DT_size around it)."""

    def __init__(self, X, y, n_classes, encoding, make_oracle, deadline):
        self.X, self.y, self.n_classes = X, y, n_classes
        self.encoding, self.make_oracle, self.deadline = encoding, make_oracle, deadline
        self.oracle: Oracle | None = None
        self.clauses: PerfectTreeClauses | None = None
        self.rounds, self.status, self.best = 0, "optimal", None

    def min_depth(self, max_depth: int) -> Tree:
        """DT_depth: k = 1, 2, … until a consistent perfect tree exists."""
        for k in range(1, max_depth + 1):
            self._encode(k)
            tree = self._consistent([])
            if tree is not None:
                self.best = tree
                return tree
        raise InvalidOptions(f"No consistent tree of depth ≤ {max_depth}; raise depth (--depth).")

    def min_size(self, tree: Tree) -> Tree:
        """DT_size: dichotomy on the number of used leaves, at the minimum depth."""
        self.oracle.add_clauses(self.clauses.leaf_counter())
        low, high = 1, count_leaves(simplify(tree, self.X))
        while low < high:
            middle = (low + high) // 2
            found = self._consistent(self.clauses.at_most_leaves(middle))
            if found is None:
                low = middle + 1
            else:
                high, self.best = count_leaves(simplify(found, self.X)), found
        return self.best

    def _encode(self, depth: int) -> None:
        self.close()
        self.clauses = PerfectTreeClauses(depth, self.X.shape[1], self.n_classes)
        self.oracle = self.make_oracle(self.deadline)
        self.oracle.add_clauses(self.clauses.clauses)
        if self.encoding == "all-at-once":
            for i in range(len(self.y)):
                self.oracle.add_clauses(self.clauses.add_example(i, self.X[i], int(self.y[i])))

    def _consistent(self, assumptions: list[int]) -> Tree | None:
        """Algorithm 3: solve; while the tree misclassifies an example, add it and re-solve."""
        while True:
            self.rounds += 1
            true = self.oracle.solve(assumptions)
            if true is None:
                return None
            tree = self.clauses.decode(true)
            wrong = misclassified(tree, self.X, self.y)
            if wrong is None:
                return tree
            self.oracle.add_clauses(self.clauses.add_example(wrong, self.X[wrong], int(self.y[wrong])))

    def close(self) -> None:
        if self.oracle is not None and hasattr(self.oracle, "close"):
            self.oracle.close()


# ---------------------------------------------------------------------- reading trees
def predict(tree: Tree, X: np.ndarray) -> np.ndarray:
    """Class of every row (None for an unlabelled leaf)."""
    return np.array([_leaf_of(tree, row)[1] for row in np.asarray(X, dtype=bool)], dtype=object)


def _leaf_of(tree: Tree, row: np.ndarray) -> Tree:
    while tree[0] != "leaf":
        tree = tree[2] if row[tree[0]] else tree[1]
    return tree


def misclassified(tree: Tree, X: np.ndarray, y: np.ndarray) -> int | None:
    """The first training row the tree gets wrong, or None."""
    wrong = np.flatnonzero(predict(tree, X) != y)
    return int(wrong[0]) if len(wrong) else None


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


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 minimize: str = "depth", **options) -> float:
    """Depth (``DT_depth``) or node count (``DT_size``) of a tree; inf if it errs on the data."""
    if np.any(np.asarray(predicted) != np.asarray(y)):
        return float("inf")
    leaves = [n for n, attrs in tree.nodes(data=True) if "label" in attrs]
    if minimize == "size":
        return float(2 * len(leaves) - 1)
    return float(max(nx.shortest_path_length(tree, 1, leaf) for leaf in leaves))
