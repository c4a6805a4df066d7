"""The abstract model (8): sets, parameters, variables, objective (8a) or (16) and constraints.

Every switchable part of the paper is here — (1)–(7), the strong inequalities (11)–(12), the
anchors (13), §4.4's ordered groups, §4.5's cardinality, (9)–(10), (15) — and odtk's leaf size;
each component's ``doc`` names its equation. ``make_data`` sets the switches.
"""
from __future__ import annotations

import pyomo.environ as pyo


def build_model() -> pyo.AbstractModel:
    """The abstract model (8) with every switchable part; ``make_data`` sets the switches."""
    m = pyo.AbstractModel(name="CategoricalTree")
    _sets_and_params(m)
    _variables(m)
    m.objective = pyo.Objective(rule=_objective, sense=pyo.maximize,
                                doc="(8a) weighted correct rows, or (16) one class's rate")
    _tree_constraints(m)
    _path_constraints(m)
    _ordered_groups(m)
    _cardinality(m)
    _extensions(m)
    _leaf_size(m)
    return m


def _sets_and_params(m: pyo.AbstractModel) -> None:
    m.I = pyo.Set(ordered=True, doc="training rows")
    m.I_pos = pyo.Set(within=m.I, ordered=True, doc="N+: positive rows")
    m.I_neg = pyo.Set(within=m.I, ordered=True, doc="N−: negative rows")
    m.J = pyo.Set(ordered=True, doc="one-hot columns (values)")
    m.G = pyo.Set(ordered=True, doc="groups (original features)")
    m.J_g = pyo.Set(m.G, within=m.J, ordered=True, doc="values J(g) of group g, in order")
    m.G_ordinal = pyo.Set(within=m.G, doc="§4.4: groups whose values are ordered bins")
    m.G_allowed = pyo.Set(within=m.G, doc="groups a node may choose (§5.1 feature selection)")
    m.G_removed = pyo.Set(within=m.G, initialize=lambda m: [g for g in m.G if g not in m.G_allowed],
                          doc="§5.1: groups left out by feature selection")
    m.G_card = pyo.Set(within=m.G_allowed, doc="§4.5: categorical groups with |J(g)| > max.card")
    m.G_one_sided = pyo.Set(within=m.G_ordinal, doc="odtk's max_card_ordinal: ordered groups with "
                            "more than max.card bins, at most max.card of them left")
    m.G_w = pyo.Set(within=m.G, initialize=lambda m: [*m.G_ordinal, *m.G_card],
                    doc="groups with a variable w: §4.4's ordered groups and §4.5's bounded ones")
    m.G_symmetric = pyo.Set(within=m.G, doc="groups whose allowed subsets are closed under "
                            "complement, so symmetry breaking keeps every tree")
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
    m.CR = pyo.Set(dimen=2, doc="odtk's min_leaf: pairs (i, b) without a c^i_b, given an r^i_b "
                   "(empty unless min_leaf > 1)")
    m.min_leaf = pyo.Param(within=pyo.NonNegativeIntegers, default=1,
                           doc="odtk's min_leaf: training rows every leaf receives, at least")
    m.class_weight = pyo.Param(within=pyo.NonNegativeReals, default=1.0, doc="C in (8a)")
    m.weight = pyo.Param(m.I, within=pyo.NonNegativeReals, default=1.0,
                         doc="ω_i: weight of row i in (8a) and (16) (1 unless sample weights are given)")
    m.min_count = pyo.Param(within=pyo.NonNegativeIntegers, default=0,
                            doc="(15) right-classified rows of the other class, at least")
    m.max_card = pyo.Param(within=pyo.NonNegativeIntegers, default=0, doc="§4.5: max.card")
    m.group_of = pyo.Param(m.J, within=m.G, doc="g(j): the group of value j")
    m.child = pyo.Param(m.K, ["left", "right"], within=pyo.Any, doc="the left and right child of k")
    m.switch = pyo.Param(pyo.Any, within=pyo.Any, doc="the CHOICES: improvements, extensions, rate")
    m.relaxed = pyo.Param(within=pyo.Boolean, doc="Proposition 3 applies: v and last-level z continuous")


def _variables(m: pyo.AbstractModel) -> None:
    m.v = pyo.Var(m.K, m.G, domain=_v_domain, bounds=(0, 1), doc="(1) group g is tested at node k")
    m.z = pyo.Var(m.K, m.J, domain=_z_domain, bounds=(0, 1), doc="(2) value j goes left at node k")
    m.w = pyo.Var(m.K, m.G_w, domain=pyo.Binary,
                  doc="§4.4: 1 = '≥' test (z increasing), 0 = '≤'; §4.5: 1 = at most max.card "
                      "values go left, 0 = at most max.card go right")
    m.c = pyo.Var(m.CI, domain=_c_domain, bounds=(0, 1), doc="row i is classified correctly at leaf b")
    m.r = pyo.Var(m.CR, domain=pyo.Reals, bounds=(0, 1),
                  doc="odtk's min_leaf: row i reaches leaf b (the pairs without a c^i_b)")


def _v_domain(m, k, g):
    return pyo.Reals if m.relaxed else pyo.Binary


def _z_domain(m, k, j):
    return pyo.Reals if m.relaxed and k not in m.K_internal else pyo.Binary


def _c_domain(m, i, b):
    """§4.3.3: c may be continuous once (v, z) are integral; ``integrality="full"`` keeps (8)'s c ∈ {0, 1}."""
    return pyo.Binary if m.switch["integrality"] == "full" else pyo.Reals


def _correct(m, rows, leaves):
    """Σ_{i∈rows} Σ_{b∈leaves} c^i_b: the correctly classified rows, counted (for (15))."""
    return sum(m.c[i, b] for i, b in m.CI if i in rows and b in leaves)


def _weighed(m, rows, leaves):
    """Σ_{i∈rows} ω_i Σ_{b∈leaves} c^i_b: the correctly classified rows, weighed (for (8a), (16))."""
    return sum(m.weight[i] * m.c[i, b] for i, b in m.CI if i in rows and b in leaves)


def _rate(m, rows, leaves):
    """(16): the weighed correct rows over the weight of ``rows`` (the rate when ω = 1)."""
    total = sum(m.weight[i] for i in rows)
    return _weighed(m, rows, leaves) / (total if total > 0 else 1)


def _objective(m):
    if m.switch["rate"] == "sensitivity":
        return _rate(m, m.I_pos, m.B_pos)
    if m.switch["rate"] == "specificity":
        return _rate(m, m.I_neg, m.B_neg)
    return _weighed(m, m.I_pos, m.B_pos) + m.class_weight * _weighed(m, m.I_neg, m.B_neg)


def _tree_constraints(m: pyo.AbstractModel) -> None:
    m.one_group = pyo.Constraint(
        m.K, doc="(1) every node tests one group",
        rule=lambda m, k: sum(m.v[k, g] for g in m.G) == 1)
    m.value_bound = pyo.Constraint(
        m.K, m.J, doc="(2) z^k_j ≤ v^k_g(j): only values of the chosen group go left",
        rule=lambda m, k, j: pyo.Constraint.Skip if _anchor(m, k, j) else m.z[k, j] <= m.v[k, m.group_of[j]])
    m.anchor = pyo.Constraint(
        m.K_mirror, m.G_symmetric, doc="(13) z^k_a(g) = v^k_g: the anchor a(g) goes left",
        rule=lambda m, k, g: m.z[k, m.J_g[g].first()] == m.v[k, g] if m.switch["anchors"] == "on"
        else pyo.Constraint.Skip)
    m.removed_group = pyo.Constraint(
        m.K, m.G_removed, doc="(§5.1) v^k_g = 0 for the groups feature selection leaves out",
        rule=lambda m, k, g: m.v[k, g] == 0)


def _anchor(m, k, j) -> bool:
    """True when (13) holds z^k_j at equality: j is the anchor (first value) of its group at k."""
    group = m.group_of[j]
    return (m.switch["anchors"] == "on" and k in m.K_mirror and group in m.G_symmetric
            and j == m.J_g[group].first())


def _path_constraints(m: pyo.AbstractModel) -> None:
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
        m.I, doc="(7) every row reaches one leaf (dropped with (11)–(12) and with (14))",
        rule=_one_leaf)


def _goes_left(m, k, i):
    """(3) L(i, k): 1 when row i's value of the tested group is in the left subset."""
    return sum(m.z[k, j] for j in m.X1[i])


def _path(m, k, i, leaves, left: bool, strong: bool):
    """Σ_{b∈leaves} c^i_b ≤ L(i, k) or R(i, k) (4): (11)/(12) for a subtree, (5)/(6) for a leaf."""
    reached = [m.c[i, b] for b in leaves if (i, b) in m.CI]
    if strong != (m.switch["inequalities"] == "strong") or not reached:
        return pyo.Constraint.Skip
    side = _goes_left(m, k, i) if left else 1 - _goes_left(m, k, i)
    return sum(reached) <= side


def _one_leaf(m, i):
    if m.switch["inequalities"] == "strong" or m.switch["projection"] == "on":
        return pyo.Constraint.Skip
    return sum(m.c[i, b] for b in m.B) == 1


def _ordered_groups(m: pyo.AbstractModel) -> None:
    m.ordered_decreasing = pyo.Constraint(
        m.K, m.steps, doc="(§4.4) z^k_j ≥ z^k_j+1 − w^k_g: with w = 0 the left subset is a prefix ('≤')",
        rule=lambda m, k, g, j, nxt: m.z[k, j] >= m.z[k, nxt] - m.w[k, g])
    m.ordered_increasing = pyo.Constraint(
        m.K, m.steps, doc="(§4.4) z^k_j+1 ≥ z^k_j − (1 − w^k_g): with w = 1 it is a suffix ('≥')",
        rule=lambda m, k, g, j, nxt: m.z[k, nxt] >= m.z[k, j] - (1 - m.w[k, g]))
    m.w_symmetry = pyo.Constraint(
        m.K_mirror, m.G_w, doc="(§4.4) and §4.5: anchors='w' breaks symmetry by w^k_g = 1 instead of (13)",
        rule=lambda m, k, g: m.w[k, g] == 1 if m.switch["anchors"] == "w" and g in m.G_symmetric
        else pyo.Constraint.Skip)


def _cardinality(m: pyo.AbstractModel) -> None:
    m.card_left = pyo.Constraint(
        m.K, m.G_card, doc="(§4.5) Σ_J(g) z^k_j ≤ max.card + (|J(g)| − max.card)(1 − w^k_g)",
        rule=lambda m, k, g: _chosen_values(m, k, g) <= m.max_card + _spare(m, g) * (1 - m.w[k, g]))
    m.card_right = pyo.Constraint(
        m.K, m.G_card, doc="(§4.5) Σ_J(g) z^k_j ≥ (|J(g)| − max.card) − (|J(g)| − max.card) w^k_g",
        rule=lambda m, k, g: _chosen_values(m, k, g) >= _spare(m, g) - _spare(m, g) * m.w[k, g])
    m.card_one_sided = pyo.Constraint(
        m.K, m.G_one_sided, doc="(§4.5) odtk's own max_card_ordinal, not the paper's: "
                                "Σ_J(g) z^k_j ≤ max.card · v^k_g on an ordered group",
        rule=lambda m, k, g: _chosen_values(m, k, g) <= m.max_card * m.v[k, g])


def _chosen_values(m, k, g):
    """Σ_{j∈J(g)} z^k_j: how many values of group g go left at node k."""
    return sum(m.z[k, j] for j in m.J_g[g])


def _spare(m, g) -> int:
    """|J(g)| − max.card."""
    return len(m.J_g[g]) - pyo.value(m.max_card)


def _extensions(m: pyo.AbstractModel) -> None:
    m.some_value_left = pyo.Constraint(
        m.K, m.G_allowed, doc="(9) the chosen group sends some value left",
        rule=lambda m, k, g: pyo.Constraint.Skip if m.switch["proper_subsets"] == "off"
        else _chosen_values(m, k, g) >= m.v[k, g])
    m.some_value_right = pyo.Constraint(
        m.K, m.G_allowed, doc="(10) the chosen group sends some value right",
        rule=lambda m, k, g: pyo.Constraint.Skip if m.switch["proper_subsets"] == "off"
        else _chosen_values(m, k, g) <= (len(m.J_g[g]) - 1) * m.v[k, g])
    m.minimum_rate = pyo.Constraint(
        doc="(15) the other class's correct rows, at least ⌈min_rate · its rows⌉",
        rule=lambda m: pyo.Constraint.Skip if m.switch["rate"] == "accuracy" else (
            _correct(m, m.I_neg, m.B_neg) if m.switch["rate"] == "sensitivity"
            else _correct(m, m.I_pos, m.B_pos)) >= m.min_count)


def _leaf_size(m: pyo.AbstractModel) -> None:
    m.reach_left = pyo.Constraint(
        m.K, m.I, doc="(odtk, min_leaf) Σ_{b∈L(k)} r^i_b ≤ L(i, k)",
        rule=lambda m, k, i: _reach(m, k, i, m.L[k], left=True))
    m.reach_right = pyo.Constraint(
        m.K, m.I, doc="(odtk, min_leaf) Σ_{b∈R(k)} r^i_b ≤ R(i, k)",
        rule=lambda m, k, i: _reach(m, k, i, m.R[k], left=False))
    m.leaf_size = pyo.Constraint(
        m.B, doc="(odtk, min_leaf) Σ_i c^i_b + Σ_i r^i_b ≥ min_leaf: the rows leaf b receives",
        rule=lambda m, b: pyo.Constraint.Skip if pyo.value(m.min_leaf) <= 1 else (
            sum(m.c[i, b] for i in m.I if (i, b) in m.CI)
            + sum(m.r[i, b] for i in m.I if (i, b) in m.CR) >= m.min_leaf))


def _reach(m, k, i, leaves, left: bool):
    """Σ_{b∈leaves} r^i_b ≤ L(i, k) or R(i, k), where row i has some r^i_b there."""
    reached = [m.r[i, b] for b in leaves if (i, b) in m.CR]
    if not reached:
        return pyo.Constraint.Skip
    return sum(reached) <= (_goes_left(m, k, i) if left else 1 - _goes_left(m, k, i))
