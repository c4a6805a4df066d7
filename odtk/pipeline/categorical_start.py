"""The categorical model's start: a good feasible tree of its topology, found in a moment.

Günlük et al.'s trees test "group g in S" at every node of a fixed topology whose leaves come
in pairs below the last-level nodes (left negative, right positive), so the last test on a
row's path decides its class. Trees are grown top down, each node on the rows it receives:

- at a last-level node, the best allowed test, exactly: the rows' worth is a sum over the
  values of the tested group, so a categorical group's best subset of each size holds the
  values whose negative rows outweigh their positive ones most, and an ordered group's best
  test is one of its prefixes or suffixes;
- at an internal node, the allowed test whose two sides one more test each classifies best (a
  one-step look-ahead; a categorical group's candidates are the first values in decreasing
  share of negative worth, the order in which a two-class node's best two-way partition is a
  prefix), or, for the second tree, the test of scikit-learn's CART of the topology's depth
  fitted on the same encoding (a categorical group's one-hot columns, an ordered group's bin
  index) in the orientation the look-ahead prefers.

Every test is one the model allows (feature selection's groups, an ordered group's prefixes
and suffixes, ``max_card``, ``max_card_ordinal``, ``proper_subsets``), read from the model's
own data, so the tree loads as a feasible MIP start
(:func:`odtk.formulations.categorical.warm_start` mirrors a test that symmetry breaking
forbids). The better tree by the model's ``objective_of`` is the start. With ``rate`` set,
the rows of the rated class are worth their share of its weight and the other class's rows a
price raised step by step (``RATE_PRICES``), then bisected towards the lowest that meets (15);
the best tree that meets it is kept. With odtk's ``min_leaf`` above 1, only a tree whose every
leaf receives that many rows is a start; when no grown tree does, there is none (the MILP
starts without one rather than from a tree it must reject).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier

from odtk.exceptions import ConfigError
from odtk.pipeline.encode import Problem

RATE_PRICES = (0.0, 0.25, 1.0, 4.0, 16.0, 1e4)  # the other class's total worth over the rated class's
RATE_REFINEMENTS = 4  # bisections between the last price short of (15) and the first that meets it
LOOKAHEAD_ROWS = 4000  # an internal node with more rows chooses its test on a sample of this many


@dataclass(frozen=True)
class _Rules:
    """The topology and the tests the model allows, read from its Pyomo data."""

    groups: list[list[int]]
    allowed: list[int]  # §5.1: the groups feature selection keeps
    ordered: frozenset  # §4.4: prefixes and suffixes of bins
    card: frozenset  # §4.5: at most max_card values left or at most max_card right
    one_sided: frozenset  # max_card_ordinal: at most max_card bins left
    max_card: int
    proper: bool  # (9)–(10): some value each way
    root: Any
    child: dict  # (node, "left" / "right") → child
    last: frozenset  # K_L: the nodes whose children are leaves
    positive: frozenset  # B+: the positive leaves

    def sizes(self, g: int) -> np.ndarray:
        """The numbers of values a test on group ``g`` may send left, ascending."""
        n, m = len(self.groups[g]), self.max_card
        size = np.arange(n + 1)
        allowed = np.ones(n + 1, dtype=bool)
        if g in self.card:
            allowed &= (size <= m) | (size >= n - m)
        if g in self.one_sided:
            allowed &= size <= m
        if self.proper:
            allowed &= (size > 0) & (size < n)
        return size[allowed]


def categorical_start(problem: Problem, shape: nx.DiGraph, hyper: dict, seed: int | None) -> nx.DiGraph | None:
    """The best of the grown trees, in :func:`~odtk.formulations.categorical.decode`'s format
    (to be wrapped by ``problem.graph``): among those meeting the rate constraint (15), the
    highest objective; if none meets it, the one closest to it. None when ``min_leaf`` is above 1
    and no grown tree gives every leaf that many rows."""
    module = problem.module
    try:
        data = module.make_data(problem.X, problem.y, shape, len(problem.classes), **hyper, **problem.extra)[None]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    rules = _rules_of(problem.extra["groups"], data)
    X = (np.asarray(problem.X) > 0.5).astype(np.float32)  # sums that only rank tests: float32 is ample
    codes = np.column_stack([X[:, columns].argmax(axis=1) for columns in rules.groups])
    positive = problem.y == module.POSITIVE
    weight = problem.weights.get("sample_weight", np.ones(len(positive)))
    rate = data["switch"]["rate"]
    rated = positive if rate == "sensitivity" else ~positive
    unrated = ~rated if rate != "accuracy" else np.zeros_like(rated)
    best, best_key = None, None  # the best tree and its (leaves filled, −shortfall of (15), objective)

    def grown(worth: np.ndarray) -> bool:
        """Grow both trees for rows of this worth, keep the best; True if one meets (15)."""
        nonlocal best, best_key
        grower = _Grower(rules, X, codes, positive, worth, seed or 0)
        cart = _cart(rules, X, codes, problem.y, worth, shape.graph["depth"], seed or 0)
        met = False
        for guide in (None, cart) if cart is not None else (None,):
            tree = module.tree_of(grower.grow(guide), rules.root, rules.child, rules.positive)
            graph = problem.graph(tree)
            correct = graph.predict_index(problem.X) == problem.y
            shortfall = max(0, data["min_count"][None] - int(correct[unrated].sum()))
            key = (_leaves_filled(graph, problem.X, len(data["B"][None]), data["min_leaf"][None]),
                   -shortfall, problem.score(graph, shape, hyper)[0])
            if best_key is None or key > best_key:
                best, best_key = tree, key
            met |= shortfall == 0
        return met

    if rate == "accuracy":
        grown(np.where(positive, weight, data["class_weight"][None] * weight))
    else:
        share = weight / max(float(weight[rated].sum()), 1e-12)
        others = max(int(unrated.sum()), 1)
        _price_search(lambda price: grown(np.where(rated, share, price / others)))
    return best if best_key is not None and best_key[0] else None


def _leaves_filled(graph: Any, X: np.ndarray, n_leaves: int, min_leaf: int) -> bool:
    """True when ``min_leaf`` ≤ 1 or each of the topology's ``n_leaves`` leaves receives at least
    ``min_leaf`` rows of ``X`` (a test the tree dropped leaves a leaf empty)."""
    if min_leaf <= 1:
        return True
    _, counts = np.unique(graph.leaves(X), return_counts=True)
    return len(counts) == n_leaves and int(counts.min()) >= min_leaf


def _price_search(grown_at: Callable[[float], bool]) -> None:
    """Grow trees at the other class's prices ``RATE_PRICES`` until they meet (15), then
    bisect (geometrically) ``RATE_REFINEMENTS`` times towards the lowest price that does."""
    low = None
    for high in RATE_PRICES:
        if grown_at(high):
            break
        low = high
    else:
        return
    if low is None:  # the rated class alone meets (15)
        return
    low = max(low, high / 16)
    for _ in range(RATE_REFINEMENTS):
        middle = float(np.sqrt(low * high))
        low, high = (low, middle) if grown_at(middle) else (middle, high)


def _rules_of(groups: list[list[int]], data: dict) -> _Rules:
    members = {name: frozenset(data[name][None]) for name in ("G_ordinal", "G_card", "G_one_sided")}
    return _Rules(groups=groups, allowed=list(data["G_allowed"][None]), ordered=members["G_ordinal"],
                  card=members["G_card"], one_sided=members["G_one_sided"], max_card=data["max_card"][None],
                  proper=data["switch"]["proper_subsets"] == "on", root=data["K"][None][0],
                  child=data["child"], last=frozenset(data["K_last"][None]),
                  positive=frozenset(data["B_pos"][None]))


def _cart(rules: _Rules, X: np.ndarray, codes: np.ndarray, y: np.ndarray, worth: np.ndarray, depth: int,
          seed: int) -> Any:
    """scikit-learn's CART of ``depth`` on the allowed groups (one-hot columns, an ordered
    group's bin index), rows weighed by their worth, and each design column's (group, value:
    None for a bin index); None when no row is worth anything."""
    if not worth.sum() > 0:
        return None
    columns: list[np.ndarray] = []
    meaning: list[tuple[int, int | None]] = []
    for g in rules.allowed:
        if g in rules.ordered:
            columns.append(codes[:, g])
            meaning.append((g, None))
        else:
            columns += [X[:, j] for j in rules.groups[g]]
            meaning += [(g, v) for v in range(len(rules.groups[g]))]
    tree = DecisionTreeClassifier(max_depth=depth, random_state=seed)
    return tree.fit(np.column_stack(columns), y, sample_weight=worth).tree_, meaning


class _Grower:
    """Grows a tree of the topology top down; rows are worth ``worth`` when classified right."""

    def __init__(self, rules: _Rules, X: np.ndarray, codes: np.ndarray, positive: np.ndarray, worth: np.ndarray,
                 seed: int):
        self.rules, self.X, self.codes, self.sparse = rules, X, codes, sp.csr_array(X)
        self.rng = np.random.default_rng(seed)
        self.pos, self.neg = (np.where(side, worth, 0).astype(X.dtype) for side in (positive, ~positive))

    def grow(self, cart: Any = None) -> dict:
        """Decision node → the columns its test sends left; guided by ``cart`` (see :func:`_cart`)."""
        tests, stack = {}, [(self.rules.root, np.arange(len(self.X)), 0 if cart is not None else None)]
        while stack:
            k, rows, node = stack.pop()
            last = k in self.rules.last
            g, mask, below = (*self._last_test(rows), None) if last else self._internal_test(rows, cart, node)
            tests[k] = [self.rules.groups[g][v] for v in np.flatnonzero(mask)]
            if last:
                continue
            left = mask[self.codes[rows, g]]
            stack += [(self.rules.child[k, "left"], rows[left], below[0]),
                      (self.rules.child[k, "right"], rows[~left], below[1])]
        return tests

    def _options(self, g: int, key: np.ndarray) -> np.ndarray:
        """Candidate left subsets of group ``g`` as masks (C, K, |J(g)|): an ordered group's
        prefixes and suffixes, a categorical group's first values in decreasing ``key`` (C,
        |J(g)|), of every allowed size."""
        sizes, n = self.rules.sizes(g), len(self.rules.groups[g])
        if g in self.rules.ordered:
            position = np.arange(n)
            masks = np.concatenate([position < sizes[:, None], position >= n - sizes[:, None]])
            return np.broadcast_to(masks, (len(key), *masks.shape))
        rank = np.argsort(np.argsort(-key, axis=1, kind="stable"), axis=1)
        return rank[:, None, :] < sizes[None, :, None]

    def _last_scores(self, pos: np.ndarray, neg: np.ndarray, keep: bool = False) -> tuple[np.ndarray, tuple]:
        """For rows of column sums of positive and negative worth (C, J): the worth classified
        right by the best last-level test, and (``keep``) that test of the first row."""
        gain = neg - pos  # a value's worth gained by sending it left (negative leaf)
        best, test = np.full(len(gain), -np.inf), None
        for g in self.rules.allowed:
            columns = self.rules.groups[g]
            masks = self._options(g, gain[:, columns])
            if masks.shape[1] == 0:
                continue
            gains = (masks * gain[:, None, columns]).sum(axis=2)
            if keep and gains[0].max() > best[0]:
                test = (g, masks[0, gains[0].argmax()])
            best = np.maximum(best, gains.max(axis=1))
        scores = pos[:, self.rules.groups[0]].sum(axis=1) + np.where(np.isfinite(best), best, 0.0)
        return scores, test or self._nothing_left()

    def _nothing_left(self) -> tuple:
        """The test sending every row right, where the model allows no test at all."""
        g = self.rules.allowed[0]
        return g, np.zeros(len(self.rules.groups[g]), dtype=bool)

    def _last_test(self, rows: np.ndarray) -> tuple:
        sums = [self.X[rows].T @ worth[rows] for worth in (self.pos, self.neg)]
        return self._last_scores(sums[0][None], sums[1][None], keep=True)[1]

    def _internal_test(self, rows: np.ndarray, cart: Any, node: int | None) -> tuple:
        """(group, mask of values left, the CART nodes below) of the best candidate test."""
        if len(rows) > LOOKAHEAD_ROWS:
            rows = np.sort(self.rng.choice(rows, LOOKAHEAD_ROWS, replace=False))
        Xr = self.sparse[rows]
        joint = [(Xr.T @ Xr.multiply(worth[rows, None])).toarray() for worth in (self.pos, self.neg)]
        totals = [np.diag(matrix) for matrix in joint]  # column sums
        candidates = (self._cart_options(cart, node) if node is not None else []) or [
            (g, masks, [(None, None)] * len(masks)) for g, masks in self._all_options(totals)]
        if not candidates:  # no allowed test (proper subsets of one-value groups): every row right
            return *self._nothing_left(), (None, None)
        left = [np.concatenate([masks.astype(matrix.dtype) @ matrix[self.rules.groups[g]]
                                for g, masks, _ in candidates])
                for matrix in joint]
        score = self._last_scores(left[0], left[1])[0] + self._last_scores(totals[0] - left[0], totals[1] - left[1])[0]
        flat = [(g, mask, below) for g, masks, belows in candidates for mask, below in zip(masks, belows)]
        return flat[int(score.argmax())]

    def _all_options(self, totals: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
        """Every allowed group's candidate masks (K, |J(g)|)."""
        options = []
        for g in self.rules.allowed:
            pos, neg = (total[self.rules.groups[g]] for total in totals)
            share = np.divide(neg, pos + neg, out=np.full(len(pos), 0.5), where=pos + neg > 0)
            masks = self._options(g, share[None])[0]
            if len(masks):
                options.append((g, masks))
        return options

    def _cart_options(self, cart: tuple, node: int) -> list[tuple]:
        """CART's split at ``node`` as (group, masks, CART nodes below), in each allowed orientation."""
        tree, meaning = cart
        if tree.children_left[node] < 0:
            return []
        g, value = meaning[tree.feature[node]]
        n = len(self.rules.groups[g])
        mask = np.arange(n) <= tree.threshold[node] if value is None else np.arange(n) != value
        children = (tree.children_left[node], tree.children_right[node])
        sizes = self.rules.sizes(g)
        return [(g, left[None], [below]) for left, below in ((mask, children), (~mask, children[::-1]))
                if left.sum() in sizes]
