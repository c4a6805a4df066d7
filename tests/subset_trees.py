"""An independent oracle for categorical trees with subset tests and fixed leaf classes.

Each row has one value per feature *group*. Every node tests "value of group g is in S";
rows with the value in S go left, the others right. The allowed subsets follow the definitions
of Günlük et al.: S is a prefix or a suffix of an ordered (numeric) group's values (§4.4); with
``max_card`` m, a categorical group of more than m values sends at most m of them left or at
most m right (§4.5), and ordered groups are not bound (odtk's own ``max_card_ordinal`` bounds
them one-sidedly: at most m bins left). A topology is nested tuples:
``("node", left, right)`` for a split with decision children and ``"last"`` for a split
whose two children are leaves, the left leaf predicting negative and the right positive.
The score of a tree is (true positives) + C · (true negatives). Everything is found by
exhaustive enumeration; nothing here uses odtk.
"""
from __future__ import annotations

import itertools
from functools import cache

import numpy as np

Topology = str | tuple  # "last" or ("node", Topology, Topology)
Test = tuple[int, frozenset]  # (group, values that go left)


def subset_tests(n_values: list[int], ordinal: list[bool], max_card: int | None = None,
                 proper: bool = False, max_card_ordinal: bool = False) -> list[Test]:
    """Every allowed test (g, S): S is a prefix or suffix of 0..n-1 if group g is ordinal,
    within ``max_card`` as ``_size_allowed`` says, and 0 < |S| < n if ``proper``."""
    tests = []
    for g, n in enumerate(n_values):
        for size in range(n + 1):
            if not _size_allowed(size, n, ordinal[g], max_card, max_card_ordinal):
                continue
            if proper and not 0 < size < n:
                continue
            for S in map(frozenset, itertools.combinations(range(n), size)):
                if ordinal[g] and S not in (frozenset(range(size)), frozenset(range(n - size, n))):
                    continue
                tests.append((g, S))
    return tests


def _size_allowed(size: int, n: int, ordinal: bool, max_card: int | None, max_card_ordinal: bool) -> bool:
    """§4.5: a categorical group with n > m values sends at most m values left or at least
    n − m (at most m right); an ordered group is free, or with ``max_card_ordinal`` sends at
    most m bins left."""
    if max_card is None or n <= max_card:
        return True
    if ordinal:
        return not max_card_ordinal or size <= max_card
    return size <= max_card or size >= n - max_card


def _left_masks(values: np.ndarray, tests: list[Test]) -> list[np.ndarray]:
    """For each test, which rows (of all ``values``) go left."""
    return [np.isin(values[:, g], sorted(S)) for g, S in tests]


def best_score(values: np.ndarray, positive: np.ndarray, topology: Topology,
               n_values: list[int], ordinal: list[bool], C: float = 1.0,
               max_card: int | None = None, proper: bool = False, max_card_ordinal: bool = False,
               min_leaf: int = 1, sample_weight: np.ndarray | None = None) -> float:
    """The maximum of TP + C · TN over all trees of ``topology`` whose leaves each receive at
    least ``min_leaf`` rows when it is above 1 (−inf if none does), trying every allowed test
    at every node; with ``sample_weight`` each row counts its weight in TP and TN (and still
    one row in ``min_leaf``)."""
    lefts = _left_masks(values, subset_tests(n_values, ordinal, max_card, proper, max_card_ordinal))
    weight = np.ones(len(positive)) if sample_weight is None else np.asarray(sample_weight, dtype=float)

    @cache
    def best(node: Topology, rows: tuple[int, ...]) -> float:
        idx = np.array(rows, dtype=int)
        if node == "last":
            pos = positive[idx]
            return max((C * weight[idx][left[idx] & ~pos].sum() + weight[idx][~left[idx] & pos].sum()
                        for left in lefts if min_leaf <= 1 or min(left[idx].sum(), (~left[idx]).sum()) >= min_leaf),
                       default=-np.inf)
        _, left_child, right_child = node
        return max(best(left_child, tuple(idx[left[idx]]))
                   + best(right_child, tuple(idx[~left[idx]])) for left in lefts)

    return best(topology, tuple(range(len(positive))))


def rate_frontier(values: np.ndarray, positive: np.ndarray, topology: Topology,
                  n_values: list[int], ordinal: list[bool], max_card: int | None = None,
                  proper: bool = False, max_card_ordinal: bool = False) -> set[tuple[int, int]]:
    """Every achievable (true positives, true negatives) pair over all trees of ``topology``."""
    lefts = _left_masks(values, subset_tests(n_values, ordinal, max_card, proper, max_card_ordinal))

    @cache
    def pairs(node: Topology, rows: tuple[int, ...]) -> frozenset[tuple[int, int]]:
        idx = np.array(rows, dtype=int)
        if node == "last":
            pos = positive[idx]
            return frozenset((int((~left[idx] & pos).sum()), int((left[idx] & ~pos).sum()))
                             for left in lefts)
        _, left_child, right_child = node
        result = set()
        for left in lefts:
            left_pairs = pairs(left_child, tuple(idx[left[idx]]))
            right_pairs = pairs(right_child, tuple(idx[~left[idx]]))
            result |= {(tp1 + tp2, tn1 + tn2)
                       for (tp1, tn1), (tp2, tn2) in itertools.product(left_pairs, right_pairs)}
        return frozenset(result)

    return set(pairs(topology, tuple(range(len(positive)))))


def random_instance(seed: int, n_rows: int, n_values: list[int], ordinal_share: float = 0.0
                    ) -> tuple[np.ndarray, np.ndarray, list[bool]]:
    """Random (values, positive, ordinal): uniform values per group, labels with both classes
    present, and each group ordinal with probability ``ordinal_share``."""
    rng = np.random.default_rng(seed)
    values = np.column_stack([rng.integers(0, n, n_rows) for n in n_values])
    positive = rng.random(n_rows) < 0.5
    positive[:2] = [True, False]
    ordinal = [bool(flag) for flag in rng.random(len(n_values)) < ordinal_share]
    return values, positive, ordinal
