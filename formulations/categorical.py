"""Categorical trees with combinatorial branching: formulation (8) of Günlük et al.

Citation: O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal Decision
Trees for Categorical Data via Integer Programming", J. Global Optimization 81 (2021).

Binary classification on groups of one-hot columns: every original feature g is a group
J_g of 0/1 columns (a categorical value, a numeric bin, or the two values of a 0/1 column);
every row has exactly one 1 per group. A node k of a fixed topology picks one group (v) and
a subset of its values (z); a row whose value is in the subset goes left, else right. The
topology's decision nodes whose children are both leaves ("last-level" nodes, K_L) carry a
negative left leaf and a positive right leaf, so the last test decides the class. A row is
correct at leaf b (c^i_b > 0) only if it goes towards b at every ancestor of b.

    max  Σ_{i∈N+} Σ_{b∈B+} c^i_b + C Σ_{i∈N−} Σ_{b∈B−} c^i_b                      (8a)
    s.t. Σ_{g∈G} v^k_g = 1                                 k ∈ K                   (1)
         z^k_j ≤ v^k_{g(j)}                                 j ∈ J, k ∈ K            (2)
         left(i, k)  = Σ_{j: x^i_j = 1} z^k_j                                       (3)
         right(i, k) = 1 − left(i, k)                                              (4)
         c^i_b ≤ left(i, k)                                 b ∈ L(k), k ∈ K, i      (5)
         c^i_b ≤ right(i, k)                                b ∈ R(k), k ∈ K, i      (6)
         Σ_{b∈B} c^i_b ≤ 1                                  i ∈ I                   (7)

Improvements, each a switch (defaults = all on):

* ``inequalities="strong"``: the subtree sums (11) Σ_{b∈L(k)} c^i_b ≤ left(i, k) and
  (12) Σ_{b∈R(k)} c^i_b ≤ right(i, k) replace (5)–(6); (7) is their sum at the root, dropped.
* ``anchors="on"``: (13) z^k_{a(g)} = v^k_g at internal nodes with symmetric subtrees
  (K_mirror) — the first value a(g) of the chosen group always goes left, which removes the
  mirror image (subset ↔ complement with the subtrees swapped). Not where the mirror image
  is another tree: at last-level nodes (their two leaves differ), below differently shaped
  subtrees, or with ``max_card`` (the complement may hold too many values).
* ``projection="on"``: (14) only c^i_b with class(b) = class(i) exist (the others are 0).
* ``integrality="relaxed"`` (Proposition 3): only z of internal nodes is integer; v, z at
  last-level nodes and c are continuous. For a fixed choice above it, a last-level node's
  objective is linear in (v, z) over the convex hull of "one group, any subset", so a vertex
  optimum is integral. ``"full"`` makes v and z integer. It is always used when the
  statement does not hold: with the rate constraint (16), which couples the last-level
  nodes, and for ordered groups with ``max_card`` or proper subsets, whose polytope has
  fractional vertices (z = (½, ½, 0) for max_card = 1).

Extensions:

* Section 4.4, ordered groups (numeric bins): w^k_g = 1 chooses the "≤" form (the left
  subset is a prefix of the bins), 0 the "≥" form (a suffix):
  z^k_{j+1} − z^k_j ≤ 1 − w^k_g and z^k_j − z^k_{j+1} ≤ w^k_g for consecutive bins j, j+1.
  With anchors off, nodes in K_mirror use the "≤" form only (w^k_g = 1), the alternative
  symmetry breaking: there the "≥" test is the same tree with its subtrees swapped.
  ``numeric="categorical"`` drops these constraints and treats bins as unordered values.
* Section 4.5: ``max_card`` bounds the values sent left, Σ_{j∈J_g} z^k_j ≤ max_card · v^k_g;
  ``proper_subsets="on"`` adds (9) Σ_{j∈J_g} z^k_j ≥ v^k_g and (10) Σ_{j∈J_g} z^k_j ≤
  (|J_g| − 1) v^k_g, so that every test sends some value each way.
* Section 4.6: ``rate="sensitivity"`` maximises (15) (1/|N+|) Σ_{i∈N+} Σ_b c^i_b subject to
  (16) Σ_{i∈N−} Σ_b c^i_b ≥ ⌈min_rate · |N−|⌉; ``rate="specificity"`` swaps the classes.
* ``feature_selection="cart"`` (section 5.1): only the groups a scikit-learn CART of the
  topology's depth splits on may be chosen.

Symbols → Pyomo components: I, N+ / N− (sets I, I_pos, I_neg); J, G, J_g (J, G, J_g[g]);
{j: x^i_j = 1} (X1[i]); K, K_I, K_L (K, K_internal, K_last); B, B+ / B− (B, B_pos, B_neg);
L(k), R(k) (L[k], R[k]); c^i_b over the pairs CI; v, z, w (v[k,g], z[k,j], w[k,g]);
C (class_weight).

The section 4.4–4.6 constraints and (9)–(10) are odtk's statements of what those parts of
the paper describe; the equation numbers follow the paper's numbering of formulation (8).
"""
from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pyomo.environ as pyo
from sklearn.tree import DecisionTreeClassifier

KEY = "categorical"
CITATION = ("Günlük, Kalagnanam, Li, Menickelly & Scheinberg, Optimal Decision Trees for "
            "Categorical Data via Integer Programming, formulation (8)")
SENSE = "maximize"
FEATURES = "onehot"
SKELETON = "topology"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS = {"class_weight": (0.0, 1e6, 1.0), "max_card": (1, 10**6, None),
                   "min_rate": (0.0, 1.0, None)}
CHOICES: dict[str, tuple] = {
    "inequalities": ("strong", "weak"), "anchors": ("on", "off"), "projection": ("on", "off"),
    "integrality": ("relaxed", "full"), "numeric": ("ordinal", "categorical"),
    "proper_subsets": ("off", "on"), "rate": ("accuracy", "sensitivity", "specificity"),
    "feature_selection": ("all", "cart"),
}
SIDE_CONSTRAINTS = ("max_card", "min_rate", "proper_subsets")
IMPROVEMENTS = {"inequalities": ("strong", "weak"), "anchors": ("on", "off"),
                "projection": ("on", "off"), "integrality": ("relaxed", "full")}  # (on, off)
POSITIVE = 1  # class index of the positive class; the negative class is 0


def build_model() -> pyo.AbstractModel:
    """The abstract model (8) with every switchable part; ``make_data`` sets the switches."""
    m = pyo.AbstractModel(name="CategoricalTree")
    _sets_and_params(m)
    _variables(m)
    m.objective = pyo.Objective(rule=_objective, sense=pyo.maximize,
                                doc="(8a) weighted correct rows, or (15) one class's rate")
    _tree_constraints(m)
    _path_constraints(m)
    _extensions(m)
    return m


def _sets_and_params(m: pyo.AbstractModel) -> None:
    m.I = pyo.Set(ordered=True, doc="training rows")
    m.I_pos = pyo.Set(within=m.I, ordered=True, doc="N+: positive rows")
    m.I_neg = pyo.Set(within=m.I, ordered=True, doc="N−: negative rows")
    m.J = pyo.Set(ordered=True, doc="one-hot columns (values)")
    m.G = pyo.Set(ordered=True, doc="groups (original features)")
    m.J_g = pyo.Set(m.G, within=m.J, ordered=True, doc="values J_g of group g, in order")
    m.G_ordinal = pyo.Set(within=m.G, doc="groups whose values are ordered bins")
    m.G_allowed = pyo.Set(within=m.G, doc="groups a node may choose (feature selection)")
    m.steps = pyo.Set(dimen=3, doc="(g, j, next j) for consecutive bins of an ordered group")
    m.X1 = pyo.Set(m.I, within=m.J, doc="values of row i: {j: x^i_j = 1}")
    m.K = pyo.Set(ordered=True, doc="decision nodes")
    m.K_internal = pyo.Set(within=m.K, ordered=True, doc="K_I: nodes with a decision child")
    m.K_mirror = pyo.Set(within=m.K_internal, doc="internal nodes where a test and its mirror "
                         "image (complement left, subtrees swapped) are the same tree")
    m.K_last = pyo.Set(within=m.K, ordered=True, doc="K_L: nodes whose children are leaves")
    m.B = pyo.Set(ordered=True, doc="leaves")
    m.B_pos = pyo.Set(within=m.B, doc="B+: positive (right) leaves")
    m.B_neg = pyo.Set(within=m.B, doc="B−: negative (left) leaves")
    m.L = pyo.Set(m.K, within=m.B, doc="L(k): leaves of the left subtree of k")
    m.R = pyo.Set(m.K, within=m.B, doc="R(k): leaves of the right subtree of k")
    m.KB_left = pyo.Set(dimen=2, initialize=lambda m: [(k, b) for k in m.K for b in m.L[k]],
                        doc="(k, b) with b ∈ L(k)")
    m.KB_right = pyo.Set(dimen=2, initialize=lambda m: [(k, b) for k in m.K for b in m.R[k]],
                         doc="(k, b) with b ∈ R(k)")
    m.CI = pyo.Set(dimen=2, doc="pairs (i, b) with a variable c^i_b ((14) drops wrong-class ones)")
    m.class_weight = pyo.Param(within=pyo.NonNegativeReals, default=1.0, doc="C in (8a)")
    m.min_count = pyo.Param(within=pyo.NonNegativeIntegers, default=0,
                            doc="(16) right-classified rows of the other class, at least")
    m.max_card = pyo.Param(within=pyo.NonNegativeIntegers, default=0,
                           doc="4.5: values sent left, at most (0: no bound)")
    m.group_of = pyo.Param(m.J, within=m.G, doc="g(j): the group of value j")
    m.child = pyo.Param(m.K, ["left", "right"], within=pyo.Any, doc="the left and right child of k")
    m.switch = pyo.Param(pyo.Any, within=pyo.Any, doc="the CHOICES: improvements, extensions, rate")
    m.relaxed = pyo.Param(within=pyo.Boolean, doc="Proposition 3 applies: v and last-level z continuous")


def _variables(m: pyo.AbstractModel) -> None:
    m.v = pyo.Var(m.K, m.G, domain=_v_domain, bounds=(0, 1), doc="(1) group g is tested at node k")
    m.z = pyo.Var(m.K, m.J, domain=_z_domain, bounds=(0, 1), doc="(2) value j goes left at node k")
    m.w = pyo.Var(m.K, m.G_ordinal, domain=pyo.Binary, doc="4.4: 1 = '≤' form, 0 = '≥' form")
    m.c = pyo.Var(m.CI, bounds=(0, 1), doc="row i is classified correctly at leaf b")


def _integral_everywhere(m) -> bool:
    return not m.relaxed


def _v_domain(m, k, g):
    return pyo.Binary if _integral_everywhere(m) else pyo.Reals


def _z_domain(m, k, j):
    return pyo.Binary if k in m.K_internal or _integral_everywhere(m) else pyo.Reals


def _correct(m, rows, leaves):
    return sum(m.c[i, b] for i, b in m.CI if i in rows and b in leaves)


def _objective(m):
    if m.switch["rate"] == "sensitivity":
        return _correct(m, m.I_pos, m.B_pos) / max(len(m.I_pos), 1)
    if m.switch["rate"] == "specificity":
        return _correct(m, m.I_neg, m.B_neg) / max(len(m.I_neg), 1)
    return _correct(m, m.I_pos, m.B_pos) + m.class_weight * _correct(m, m.I_neg, m.B_neg)


def _tree_constraints(m: pyo.AbstractModel) -> None:
    m.one_group = pyo.Constraint(
        m.K, doc="(1) every node tests one group",
        rule=lambda m, k: sum(m.v[k, g] for g in m.G_allowed) == 1)
    m.value_of_chosen_group = pyo.Constraint(
        m.K, m.G, doc="(2) only values of the chosen group go left; (13) the anchor always does",
        rule=_value_of_chosen_group)


def _value_of_chosen_group(m, k, g):
    """(2) z^k_j ≤ v^k_g as one row per value, or (13) the anchor's z^k_a(g) = v^k_g."""
    if g not in m.G_allowed:
        return sum(m.z[k, j] for j in m.J_g[g]) + m.v[k, g] == 0
    anchored = m.switch["anchors"] == "on" and k in m.K_mirror
    return pyo.Constraint.Skip if not anchored else m.z[k, m.J_g[g].first()] == m.v[k, g]


def _path_constraints(m: pyo.AbstractModel) -> None:
    m.value_bound = pyo.Constraint(
        m.K, m.J, doc="(2) z^k_j ≤ v^k_g(j)", rule=_value_bound)
    m.left_subtree = pyo.Constraint(
        m.K, m.I, doc="(11) reach the left subtree's leaves only by going left",
        rule=lambda m, k, i: _path(m, k, i, m.L[k], left=True, strong=True))
    m.right_subtree = pyo.Constraint(
        m.K, m.I, doc="(12) reach the right subtree's leaves only by going right",
        rule=lambda m, k, i: _path(m, k, i, m.R[k], left=False, strong=True))
    m.left_leaf = pyo.Constraint(
        m.KB_left, m.I, doc="(5) reach a left leaf only by going left",
        rule=lambda m, k, b, i: _path(m, k, i, [b], left=True, strong=False))
    m.right_leaf = pyo.Constraint(
        m.KB_right, m.I, doc="(6) reach a right leaf only by going right",
        rule=lambda m, k, b, i: _path(m, k, i, [b], left=False, strong=False))
    m.one_leaf = pyo.Constraint(
        m.I, doc="(7) a row is correct at one leaf at most (implied by (11)–(12) at the root)",
        rule=lambda m, i: pyo.Constraint.Skip if m.switch["inequalities"] == "strong"
        else sum(m.c[i, b] for b in m.B if (i, b) in m.CI) <= 1)


def _value_bound(m, k, j):
    group = m.group_of[j]
    if group not in m.G_allowed:
        return pyo.Constraint.Skip
    if m.switch["anchors"] == "on" and k in m.K_mirror and j == m.J_g[group].first():
        return pyo.Constraint.Skip  # (13) holds it at equality
    return m.z[k, j] <= m.v[k, group]


def _goes_left(m, k, i):
    """(3) left(i, k): 1 when row i's value of the tested group is in the left subset."""
    return sum(m.z[k, j] for j in m.X1[i])


def _path(m, k, i, leaves, left: bool, strong: bool):
    """Σ_{b∈leaves} c^i_b ≤ left(i, k) or right(i, k): (11)/(12) for a subtree, (5)/(6) for a leaf."""
    reached = [m.c[i, b] for b in leaves if (i, b) in m.CI]
    if strong != (m.switch["inequalities"] == "strong") or not reached:
        return pyo.Constraint.Skip
    side = _goes_left(m, k, i) if left else 1 - _goes_left(m, k, i)
    return sum(reached) <= side


def _extensions(m: pyo.AbstractModel) -> None:
    m.ordered_le = pyo.Constraint(
        m.K, m.steps, doc="(§4.4) '≤' form (w = 1): the left subset is a prefix of the bins",
        rule=lambda m, k, g, j, nxt: m.z[k, nxt] - m.z[k, j] <= 1 - m.w[k, g])
    m.ordered_ge = pyo.Constraint(
        m.K, m.steps, doc="(§4.4) '≥' form (w = 0): the left subset is a suffix of the bins",
        rule=lambda m, k, g, j, nxt: m.z[k, j] - m.z[k, nxt] <= m.w[k, g])
    m.ordered_symmetry = pyo.Constraint(
        m.K_mirror, m.G_ordinal, doc="(§4.4) without anchors, mirror nodes test '≤' only",
        rule=lambda m, k, g: pyo.Constraint.Skip if m.switch["anchors"] == "on" else m.w[k, g] == 1)
    m.max_card_bound = pyo.Constraint(
        m.K, m.G_allowed, doc="(§4.5) at most max_card values go left",
        rule=lambda m, k, g: pyo.Constraint.Skip if pyo.value(m.max_card) == 0
        else sum(m.z[k, j] for j in m.J_g[g]) <= m.max_card * m.v[k, g])
    m.some_value_left = pyo.Constraint(
        m.K, m.G_allowed, doc="(9) the chosen group sends some value left",
        rule=lambda m, k, g: pyo.Constraint.Skip if m.switch["proper_subsets"] == "off"
        else sum(m.z[k, j] for j in m.J_g[g]) >= m.v[k, g])
    m.some_value_right = pyo.Constraint(
        m.K, m.G_allowed, doc="(10) the chosen group sends some value right",
        rule=lambda m, k, g: pyo.Constraint.Skip if m.switch["proper_subsets"] == "off"
        else sum(m.z[k, j] for j in m.J_g[g]) <= (len(m.J_g[g]) - 1) * m.v[k, g])
    m.minimum_rate = pyo.Constraint(
        doc="(16) the other class's rate is at least min_rate",
        rule=lambda m: pyo.Constraint.Skip if m.switch["rate"] == "accuracy" else (
            _correct(m, m.I_neg, m.B_neg) if m.switch["rate"] == "sensitivity"
            else _correct(m, m.I_pos, m.B_pos)) >= m.min_count)


# --------------------------------------------------------------------------- data
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


def _cart_groups(X: np.ndarray, y: np.ndarray, groups: list[list[int]], depth: int) -> list[int]:
    """Section 5.1: the groups a scikit-learn CART of the same depth splits on."""
    used = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y).tree_.feature
    columns = set(used[used >= 0].tolist())
    chosen = [g for g, members in enumerate(groups) if columns & set(members)]
    return chosen or list(range(len(groups)))


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int, *,
              groups: list[list[int]], ordinal: list[bool], class_weight: float = 1.0,
              max_card: int | None = None, min_rate: float | None = None, **choices: str) -> dict:
    """Pyomo data: ``X`` one-hot 0/1 (one 1 per group and row), ``y`` in {0, 1} (1 positive).

    ``groups`` lists each group's column indices in order; ``ordinal[g]`` marks ordered bins.
    ``choices`` are the CHOICES (improvement switches and extensions), defaults as in CHOICES.
    """
    switch = {name: choices.get(name, allowed[0]) for name, allowed in CHOICES.items()}
    _check_problem(y, n_classes, switch, min_rate, groups)
    X, y = np.asarray(X) > 0.5, np.asarray(y)
    internal, last, leaves, left, right, children = topology(skeleton)
    rows = list(range(len(y)))
    positive_leaves = leaves[1::2]  # the right leaf of every last-level node
    leaf_class = {b: POSITIVE if b in positive_leaves else 1 - POSITIVE for b in leaves}
    pairs = [(i, b) for i in rows for b in leaves
             if switch["projection"] == "off" or leaf_class[b] == y[i]]
    ordered = [g for g, flag in enumerate(ordinal) if flag and switch["numeric"] == "ordinal"]
    allowed = (_cart_groups(X, y, groups, nx.dag_longest_path_length(skeleton))
               if switch["feature_selection"] == "cart" else list(range(len(groups))))
    other = int((y != POSITIVE).sum()) if switch["rate"] == "sensitivity" else int((y == POSITIVE).sum())
    restricted = max_card is not None or switch["proper_subsets"] == "on"
    relaxed = (switch["integrality"] == "relaxed" and switch["rate"] == "accuracy"
               and not (ordered and restricted))
    mirror = [] if max_card is not None else [k for k in internal if _symmetric(skeleton, children[k])]
    return {None: {
        "I": {None: rows}, "I_pos": {None: [i for i in rows if y[i] == POSITIVE]},
        "I_neg": {None: [i for i in rows if y[i] != POSITIVE]},
        "J": {None: list(range(X.shape[1]))}, "G": {None: list(range(len(groups)))},
        "J_g": dict(enumerate(groups)), "G_ordinal": {None: ordered}, "G_allowed": {None: allowed},
        "steps": {None: [(g, j, nxt) for g in ordered for j, nxt in zip(groups[g], groups[g][1:])]},
        "X1": {i: np.flatnonzero(X[i]).tolist() for i in rows},
        "K": {None: internal + last}, "K_internal": {None: internal}, "K_last": {None: last},
        "K_mirror": {None: mirror}, "relaxed": {None: relaxed},
        "B": {None: leaves}, "B_pos": {None: positive_leaves},
        "B_neg": {None: [b for b in leaves if b not in positive_leaves]},
        "L": left, "R": right, "CI": {None: pairs},
        "class_weight": {None: float(class_weight)},
        "min_count": {None: 0 if min_rate is None else math.ceil(min_rate * other - 1e-9)},
        "max_card": {None: max_card or 0},
        "child": {(k, side): c for k, sides in children.items() for side, c in sides.items()},
        "group_of": {j: g for g, members in enumerate(groups) for j in members}, "switch": switch,
    }}


def _check_problem(y: np.ndarray, n_classes: int, switch: dict, min_rate: float | None,
                   groups: list[list[int]]) -> None:
    if n_classes != 2:
        raise ValueError(f"Model {KEY!r} learns binary classifiers but the target has {n_classes} "
                         "classes; recode it to two classes (e.g. one class against the rest).")
    if (switch["rate"] == "accuracy") != (min_rate is None):
        raise ValueError("rate='sensitivity' or 'specificity' needs min_rate (the other class's "
                         "rate, at least), and min_rate needs one of them.")
    if not groups:
        raise ValueError(f"Model {KEY!r} needs at least one feature group.")


# --------------------------------------------------------------------------- decoding
def decode(instance) -> nx.DiGraph:
    """The learned tree: a node carries ``subset`` (the values that go left, as column
    indices; the ``outcome=True`` arc) or ``label`` (0 negative, 1 positive). A test that
    sends no value left is dropped (every row goes right)."""
    tree, stack = nx.DiGraph(), [(instance.K.first(), None, None)]
    while stack:
        node, parent, outcome = stack.pop()
        if node in instance.B:
            tree.add_node(node, label=POSITIVE if node in instance.B_pos else 1 - POSITIVE)
        else:
            subset = _left_values(instance, node)
            left, right = instance.child[node, "left"], instance.child[node, "right"]
            if not subset:
                stack.append((right, parent, outcome))
                continue
            tree.add_node(node, subset=subset)
            stack += [(left, node, True), (right, node, False)]
        if parent is not None:
            tree.add_edge(parent, node, outcome=outcome)
    return tree


def _left_values(instance, k) -> list[int]:
    group = max(instance.G_allowed, key=lambda g: pyo.value(instance.v[k, g]))
    scale = max(pyo.value(instance.v[k, group]), 1e-9)
    return [int(j) for j in instance.J_g[group] if pyo.value(instance.z[k, j]) > 0.5 * scale]


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 class_weight: float = 1.0, rate: str = "accuracy", **_: object) -> float:
    """Objective (8a), or the maximised rate of (15)/(16), of a tree predicting ``predicted``."""
    rates = rates_of(predicted, y)
    if rate != "accuracy":
        return rates[rate]
    predicted, y = np.asarray(predicted), np.asarray(y)
    correct = predicted == y
    return float(correct[y == POSITIVE].sum() + class_weight * correct[y != POSITIVE].sum())


def rates_of(predicted: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Sensitivity (positives predicted positive) and specificity (negatives predicted negative)."""
    predicted, y = np.asarray(predicted), np.asarray(y)
    positive = y == POSITIVE
    return {"sensitivity": float(np.mean(predicted[positive] == POSITIVE)) if positive.any() else 1.0,
            "specificity": float(np.mean(predicted[~positive] != POSITIVE)) if (~positive).any() else 1.0}
