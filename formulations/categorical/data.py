"""The categorical tree's data: ``make_data`` turns a topology, one-hot rows and options into Pyomo data.

Also the topology's node sets (``topology``), §5.1's feature selection (``cart_groups``), the
named configurations (``configured``) and the group roles that decide where Proposition 3 applies.
"""
from __future__ import annotations

import math

import networkx as nx
import numpy as np
from sklearn.tree import DecisionTreeClassifier

from . import CHOICES, CONFIGURATIONS, KEY, POSITIVE


def topology(skeleton: nx.DiGraph) -> tuple[list, list, list, dict, dict, dict]:
    """(internal nodes, last-level nodes, leaves, L(k), R(k), children) of a tree skeleton
    whose arcs carry ``side`` ("left"/"right"); raises ValueError unless leaves come in
    sibling pairs."""
    decision = [n for n in nx.topological_sort(skeleton) if skeleton.out_degree(n) > 0]
    if not decision:
        raise ValueError(f"Model {KEY!r} needs at least one test: use depth 1 or more, or a named topology.")
    children = {k: {d["side"]: c for _, c, d in skeleton.out_edges(k, data=True)} for k in decision}
    last = [k for k in decision if all(skeleton.out_degree(c) == 0 for c in children[k].values())]
    for k in decision:
        if set(children[k]) != {"left", "right"}:
            raise ValueError(f"Node {k} of the topology needs one left and one right child.")
        if k not in last and any(skeleton.out_degree(c) == 0 for c in children[k].values()):
            raise ValueError(f"Node {k} has a leaf and a decision child; in this model leaves come "
                             "in pairs below a last-level node (negative left, positive right).")
    leaves = [c for k in last for c in (children[k]["left"], children[k]["right"])]
    left = {k: [b for b in leaves if b == children[k]["left"] or b in nx.descendants(skeleton, children[k]["left"])]
            for k in decision}
    right = {k: [b for b in leaves if b == children[k]["right"] or b in nx.descendants(skeleton, children[k]["right"])]
             for k in decision}
    return [k for k in decision if k not in last], last, leaves, left, right, children


def _shape(skeleton: nx.DiGraph, node) -> str:
    """The shape of the subtree below ``node`` as a string, e.g. ``(()())`` for one split."""
    sides = {side: child for _, child, side in skeleton.out_edges(node, data="side")}
    return "" if not sides else f"({_shape(skeleton, sides['left'])})({_shape(skeleton, sides['right'])})"


def _symmetric(skeleton: nx.DiGraph, children: dict) -> bool:
    """True when the two subtrees below a node have the same shape, so they can swap."""
    return _shape(skeleton, children["left"]) == _shape(skeleton, children["right"])


def cart_groups(X: np.ndarray, y: np.ndarray, groups: list[list[int]], min_groups: int = 4,
                share: float = 0.9, seed: int = 0) -> list[int]:
    """Section 5.1: the groups a scikit-learn CART with default settings (no depth limit)
    splits on, fitted on a random sample of ``share`` of the rows; topped up to ``min_groups``
    (§5.7: "at least 4 features") by the unused groups with the best single split."""
    rows = np.random.default_rng(seed).permutation(len(y))[:max(1, round(share * len(y)))]
    X, y = X[rows].astype(float), y[rows]
    used = DecisionTreeClassifier(random_state=seed).fit(X, y).tree_.feature
    columns = set(used[used >= 0].tolist())
    chosen = [g for g, members in enumerate(groups) if columns & set(members)]
    others = sorted((g for g in range(len(groups)) if g not in chosen),
                    key=lambda g: -_best_split_gain(X[:, groups[g]], y))
    return sorted(chosen + others[:max(0, min_groups - len(chosen))])


def _best_split_gain(X: np.ndarray, y: np.ndarray) -> float:
    """The Gini decrease of the best split on one of the columns ``X`` (0 when none splits)."""
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y).tree_
    if tree.node_count < 3:
        return 0.0
    size = tree.weighted_n_node_samples
    return float(tree.impurity[0] - (size[1] * tree.impurity[1] + size[2] * tree.impurity[2]) / size[0])


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int, *,
              groups: list[list[int]], ordinal: list[bool], class_weight: float = 1.0,
              max_card: int | None = None, min_rate: float | None = None, min_groups: int = 4,
              selection_share: float = 0.9, sample_weight: np.ndarray | None = None,
              min_leaf: int = 1, **choices: str) -> dict:
    """Pyomo data: ``X`` one-hot 0/1 (one 1 per group and row), ``y`` in {0, 1} (1 positive).

    ``groups`` lists each group's column indices in order; ``ordinal[g]`` marks ordered bins.
    ``sample_weight`` weighs each row in (8a) and (16) (default 1); (15) counts rows, and so does
    ``min_leaf`` (every leaf receives at least this many rows; 0 and 1 add nothing).
    ``choices`` are the CHOICES (improvement switches and extensions), defaults as in CHOICES.
    """
    switch = configured({name: choices.get(name, allowed[0]) for name, allowed in CHOICES.items()})
    _check_problem(y, n_classes, switch, min_rate, groups, sample_weight)
    X, y = np.asarray(X) > 0.5, np.asarray(y)
    internal, last, leaves, left, right, children = topology(skeleton)
    rows = list(range(len(y)))
    positive_leaves = leaves[1::2]  # the right leaf of every last-level node
    leaf_class = {b: POSITIVE if b in positive_leaves else 1 - POSITIVE for b in leaves}
    pairs = [(i, b) for i in rows for b in leaves
             if switch["projection"] == "off" or leaf_class[b] == y[i]]
    allowed = (cart_groups(X, y, groups, min_groups, selection_share)
               if switch["feature_selection"] == "cart" else list(range(len(groups))))
    roles = _group_roles(groups, ordinal, allowed, max_card, switch)
    ordered = roles["G_ordinal"][None]
    other = int((y != POSITIVE).sum()) if switch["rate"] == "sensitivity" else int((y == POSITIVE).sum())
    return {None: {
        "I": {None: rows}, "I_pos": {None: [i for i in rows if y[i] == POSITIVE]},
        "I_neg": {None: [i for i in rows if y[i] != POSITIVE]},
        "J": {None: list(range(X.shape[1]))}, "G": {None: list(range(len(groups)))},
        "J_g": dict(enumerate(groups)), "G_allowed": {None: allowed}, **roles,
        "steps": {None: [(g, j, nxt) for g in ordered for j, nxt in zip(groups[g], groups[g][1:])]},
        "X1": {i: np.flatnonzero(X[i]).tolist() for i in rows},
        "K": {None: internal + last}, "K_internal": {None: internal}, "K_last": {None: last},
        "K_mirror": {None: [k for k in internal if _symmetric(skeleton, children[k])]},
        "relaxed": {None: _proposition_3_applies(switch, roles) and min_leaf <= 1},
        "B": {None: leaves}, "B_pos": {None: positive_leaves},
        "B_neg": {None: [b for b in leaves if b not in positive_leaves]},
        "L": left, "R": right, "CI": {None: pairs}, "min_leaf": {None: int(min_leaf)},
        "CR": {None: _unpaired(rows, leaves, pairs) if min_leaf > 1 else []},
        "class_weight": {None: float(class_weight)},
        "min_count": {None: 0 if min_rate is None else math.ceil(min_rate * other - 1e-9)},
        "max_card": {None: max_card or 0},
        "child": {(k, side): c for k, sides in children.items() for side, c in sides.items()},
        "group_of": {j: g for g, members in enumerate(groups) for j in members}, "switch": switch,
        **({} if sample_weight is None else {"weight": dict(enumerate(map(float, sample_weight)))}),
    }}


def _unpaired(rows: list, leaves: list, pairs: list) -> list:
    """odtk's min_leaf: the pairs (i, b) that (14) left without a c^i_b, in row order."""
    paired = set(pairs)
    return [(i, b) for i in rows for b in leaves if (i, b) not in paired]


def configured(switch: dict[str, str]) -> dict[str, str]:
    """``switch`` with the named ``configuration`` (§5.1) applied to the improvement switches;
    ValueError if a switch was moved off its default to a value the configuration contradicts."""
    preset = CONFIGURATIONS.get(switch["configuration"], {})
    for name, value in preset.items():
        if switch[name] not in (CHOICES[name][0], value):
            raise ValueError(f"configuration={switch['configuration']!r} sets {name}={value!r}, "
                             f"which contradicts {name}={switch[name]!r}; drop one of them.")
    return {**switch, **preset}


def _group_roles(groups: list[list[int]], ordinal: list[bool], allowed: list[int],
                 max_card: int | None, switch: dict) -> dict:
    """The sets of groups: ordered (§4.4), bounded by §4.5 (categorical groups with more than
    max_card values), bounded one-sidedly (odtk's max_card_ordinal) and the allowed groups
    whose tests are closed under complement (where symmetry breaking keeps every tree)."""
    ordered = [g for g, flag in enumerate(ordinal) if flag and switch["numeric"] == "ordinal"]
    bounded = [g for g in allowed if max_card is not None and len(groups[g]) > max_card]
    one_sided = [g for g in bounded if g in ordered and switch["max_card_ordinal"] == "on"]
    return {"G_ordinal": {None: ordered}, "G_card": {None: [g for g in bounded if g not in ordered]},
            "G_one_sided": {None: one_sided},
            "G_symmetric": {None: [g for g in allowed if g not in one_sided]}}


def _proposition_3_applies(switch: dict, roles: dict) -> bool:
    """Relax v and last-level z only where Proposition 3 is proven: not with (15), which
    couples the last-level nodes, nor with bounds on |subset| whose polytope has fractional
    vertices: §4.5 (z = (½, ½, 0) at v = ½ for max.card = 1), odtk's max_card_ordinal, and
    (9)–(10) on ordered groups."""
    proper_ordered = bool(roles["G_ordinal"][None]) and switch["proper_subsets"] == "on"
    bounded = roles["G_card"][None] or roles["G_one_sided"][None]
    return (switch["integrality"] == "relaxed" and switch["rate"] == "accuracy"
            and not (bounded or proper_ordered))


def _check_problem(y: np.ndarray, n_classes: int, switch: dict, min_rate: float | None,
                   groups: list[list[int]], sample_weight: np.ndarray | None) -> None:
    if n_classes != 2:
        raise ValueError(f"Model {KEY!r} learns binary classifiers but the target has {n_classes} "
                         "classes; recode it to two classes (e.g. one class against the rest).")
    if (switch["rate"] == "accuracy") != (min_rate is None):
        raise ValueError("rate='sensitivity' or 'specificity' needs min_rate (the other class's "
                         "rate, at least), and min_rate needs one of them.")
    if not groups:
        raise ValueError(f"Model {KEY!r} needs at least one feature group.")
    if switch["rate"] != "accuracy" and sample_weight is not None:
        rated = (np.asarray(y) == POSITIVE) == (switch["rate"] == "sensitivity")
        if not np.sum(np.asarray(sample_weight)[rated]) > 0:
            raise ValueError(f"rate={switch['rate']!r} is a weighted rate of one class, but "
                             "sample_weight gives that class no weight.")
