"""The SAT encoding of a perfect tree that classifies the training examples, and its decoding.

Citation: F. Avellaneda, "Efficient Inference of Optimal Decision Trees", AAAI 2020
(Algorithms 1 and 2, Theorem 2); the search that uses it is :mod:`odtk.engines.sat_inference`.

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
    (8)  ¬H_{q,j} ∨ H_{q+1,j};  (9) ¬U_q ∨ ¬H_{q,j} ∨ H_{q+1,j+1}   the counter over the leaves
    (10) H_{0,0} and the assumption ¬H_{2^k, B+1}: at most B used leaves (Theorem 2: a
         consistent tree with B leaves, 2B − 1 nodes, exists iff a perfect one with ≤ B used
         leaves does)

where ``path(e, q)`` is the disjunction of literals false exactly when e's first bits lead to q.
Clauses (3)–(4) are those Algorithm 1 generates per example, (5)–(6) those of Algorithm 2; each
family is built as one integer array (a row per clause) over blocks of consecutive variable
numbers, level by level, rather than by recursion. A satisfying assignment decodes to the
feature of every internal node and the class of every leaf (:meth:`PerfectTreeClauses.decode`),
read as a nested tree by :func:`perfect_tree`.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from odtk.engines.nested_trees import Tree

CHUNK = 100_000  # clauses handed to the backend at once: a stop is seen between two chunks


class PerfectTreeClauses:
    """The clause set of a perfect tree of depth k, grown one example at a time.

    Variables are numbered in blocks so that every clause family is built as one integer array
    (one row per clause): F_{q,f} is ``F[q - 1, f]``, C_{q,c} is ``C[q, c]``. Methods return
    the new clauses as such arrays and count them.
    """

    def __init__(self, depth: int, n_features: int, n_classes: int):
        self.depth, self.n_features, self.n_classes = depth, n_features, n_classes
        self.n_leaves = 2**depth
        self.variables = 0
        self.F = self._new((self.n_leaves - 1, n_features))
        self.C = self._new((self.n_leaves, n_classes))
        self.n_clauses = 0
        self.examples: list[int] = []
        self.counter: np.ndarray | None = None
        self.signs = [_path_signs(level) for level in range(depth + 1)]

    def _new(self, shape: tuple[int, ...]) -> np.ndarray:
        """A block of fresh variables of the given shape."""
        size = int(np.prod(shape))
        block = np.arange(self.variables + 1, self.variables + size + 1).reshape(shape)
        self.variables += size
        return block

    def _emit(self, blocks: list[np.ndarray]) -> list[np.ndarray]:
        self.n_clauses += sum(len(block) for block in blocks)
        return blocks

    def one_feature_per_node(self) -> Iterator[np.ndarray]:
        """Clauses (1)–(2), one node at a time, the pairs (2) (m² / 2 a node) in blocks of about
        ``CHUNK`` in the order f < g, f first."""
        yield from self._emit([self.F])                                                      # (1)
        for features in self.F:
            for first, second in _pairs(self.n_features, CHUNK):
                yield from self._emit([-np.stack([features[first], features[second]], axis=1)])  # (2)

    def feature_clauses(self) -> tuple[int, int]:
        """(clauses, literals) of (1)–(2), those :meth:`one_feature_per_node` makes."""
        nodes, m = self.n_leaves - 1, self.n_features
        pairs = m * (m - 1) // 2
        return nodes * (1 + pairs), nodes * (m + 2 * pairs)

    def example_clauses(self) -> tuple[int, int]:
        """(clauses, literals) of one example's (3)–(6), those :meth:`add_example` makes."""
        m, c, k = self.n_features, self.n_classes, self.depth
        tests = sum(2**level * m * (level + 2) for level in range(k))  # (3)/(4) at level l: l + 2 literals
        return (self.n_leaves - 1) * m + self.n_leaves * c, tests + self.n_leaves * c * (k + 1)

    def add_example(self, index: int, features: np.ndarray, label: int) -> list[np.ndarray]:
        """Clauses (3)–(6) of one example (Algorithms 1 and 2, level by level)."""
        bits = self._new((self.depth,))  # X_{e,l}
        ones = np.where(np.asarray(features, dtype=bool), 1, -1)
        blocks = []
        for level in range(self.depth):
            nodes = self.F[2**level - 1: 2**(level + 1) - 1]  # F_{q,·} of the nodes at this level
            path = np.repeat(self.signs[level] * bits[:level], self.n_features, axis=0)
            blocks.append(np.column_stack([path, -nodes.ravel(),                           # (3)/(4)
                                           np.tile(ones * bits[level], len(nodes))]))
        path = np.repeat(self.signs[self.depth] * bits, self.n_classes, axis=0)
        sign = np.where(np.arange(self.n_classes) == label, 1, -1)
        blocks.append(np.column_stack([path, (self.C * sign).ravel()]))                    # (5)/(6)
        self.examples.append(index)
        return self._emit(blocks)

    def leaf_counter(self) -> list[np.ndarray]:
        """Clauses (7)–(10): U_q and the sequential counter H_{q,j} (j ≤ q + 1) over the leaves."""
        leaves = self.n_leaves
        used = self._new((leaves,))
        rows, columns = np.nonzero(np.tri(leaves + 1, leaves + 2, 1, dtype=bool))
        H = self.counter = np.zeros((leaves + 1, leaves + 2), dtype=np.int64)
        H[rows, columns] = self._new((len(rows),))
        q, j = np.nonzero(np.tri(leaves, leaves + 1, dtype=bool))  # j ≤ q < 2^k
        return self._emit([
            np.column_stack([-self.C.ravel(), np.repeat(used, self.n_classes)]),            # (7)
            np.column_stack([-H[q, j], H[q + 1, j]]),                                        # (8)
            np.column_stack([-used[q], -H[q, j], H[q + 1, j + 1]]),                          # (9)
            np.array([[H[0, 0]]]),                                                           # (10)
        ])

    def at_most_leaves(self, bound: int) -> list[int]:
        """The assumption ¬H_{2^k, B+1} of (10): at most ``bound`` used leaves."""
        assert self.counter is not None, "leaf_counter() makes the counter first"
        return [-int(self.counter[self.n_leaves, bound + 1])] if bound < self.n_leaves else []

    def decode(self, true: set[int]) -> tuple[np.ndarray, np.ndarray]:
        """The perfect tree of a satisfying assignment: the feature of every internal node (heap
        order, node q at q − 1) and the class of every leaf (−1: unlabelled)."""
        value = np.zeros(self.variables + 1, dtype=bool)
        value[[v for v in true if v <= self.variables]] = True
        labelled = value[self.C]
        return value[self.F].argmax(axis=1), np.where(labelled.any(axis=1), labelled.argmax(axis=1), -1)


def _pairs(n: int, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The pairs f < g of 0 … n − 1 in row order (those of ``np.triu_indices(n, 1)``), as blocks
    of whole rows f with at most ``size`` pairs each (or one row)."""
    counts = np.arange(n - 1, 0, -1)  # the pairs of row f, for f = 0 … n − 2
    ends = np.cumsum(counts)
    starts = ends - counts
    row = 0
    while row < n - 1:
        last = max(int(np.searchsorted(ends, starts[row] + size, side="right")), row + 1)
        rows = np.arange(row, last)
        first = np.repeat(rows, counts[rows])
        yield first, first + 1 + np.arange(len(first)) - np.repeat(starts[rows] - starts[row], counts[rows])
        row = last


def _path_signs(level: int) -> np.ndarray:
    """Row i: the signs of X_{e,0} … X_{e,level−1} in path(e, q) for the i-th node q of the level
    (+ where q's ancestor went left, so the literal is false exactly on the path to q)."""
    index = np.arange(2**level)[:, None]
    shifts = np.arange(level - 1, -1, -1)[None, :]
    return np.where((index >> shifts) & 1, -1, 1)


def perfect_tree(features: np.ndarray, labels: np.ndarray) -> Tree:
    """The nested tuple of a decoded perfect tree (unlabelled leaves carry None)."""
    def node(q: int) -> Tree:
        if q > len(features):
            label = labels[q - len(features) - 1]
            return ("leaf", None if label < 0 else int(label))
        return (int(features[q - 1]), node(2 * q), node(2 * q + 1))
    return node(1)


def leaves_reached(features: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The leaf (0 … 2^k − 1) every row of ``X`` reaches in a decoded perfect tree."""
    q, rows = np.ones(len(X), dtype=np.int64), np.arange(len(X))
    for _ in range(len(features).bit_length()):  # the depth k: 2^k − 1 internal nodes
        q = 2 * q + X[rows, features[q - 1]]
    return q - len(features) - 1
