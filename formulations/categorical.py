"""Categorical trees with combinatorial branching: formulation (8) of Günlük et al.

Citation: O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal Decision
Trees for Categorical Data via Integer Programming", J. Global Optimization 81 (2021).

Binary classification on groups of one-hot columns: every original feature g is a group
J(g) of 0/1 columns (a categorical value, a numeric bin, or the two values of a 0/1 column);
every row has exactly one 1 per group. A node k of a fixed topology picks one group (v) and
a subset of its values (z); a row whose value is in the subset goes left, else right. The
topology's decision nodes whose children are both leaves ("last-level" nodes, K_L) carry a
negative left leaf and a positive right leaf (the paper's odd and even leaves), so the last
test decides the class. A row is correct at leaf b (c^i_b > 0) only if it goes towards b at
every ancestor of b. ::

    max  Σ_{i∈N+} Σ_{b∈B+} c^i_b + C Σ_{i∈N−} Σ_{b∈B−} c^i_b                      (8a)
    s.t. Σ_{g∈G} v^k_g = 1                                 k ∈ K                   (1)
         z^k_j ≤ v^k_{g(j)}                                 j ∈ J, k ∈ K            (2)
         L(i, k) = Σ_{j: x^i_j = 1} z^k_j                                           (3)
         R(i, k) = 1 − L(i, k)                                                     (4)
         c^i_b ≤ L(i, k)                                    b ∈ L(k), k ∈ K, i      (5)
         c^i_b ≤ R(i, k)                                    b ∈ R(k), k ∈ K, i      (6)
         Σ_{b∈B} c^i_b = 1                                  i ∈ I                   (7)
         v, z, c binary

Improvements, each a switch (defaults = all on):

* ``inequalities="strong"`` (§4.3.1): the subtree sums (11) Σ_{b∈L(k)} c^i_b ≤ L(i, k) and
  (12) Σ_{b∈R(k)} c^i_b ≤ R(i, k) replace (5)–(6); (7) is dropped (their sum at the root
  bounds Σ_b c^i_b by 1, and the objective does the rest).
* ``anchors="on"`` (§4.3.2): (13) z^k_{a(g)} = v^k_g at internal nodes with symmetric
  subtrees (K_mirror) — the first value a(g) of the chosen group always goes left, which
  removes the mirror image (subset ↔ complement with the subtrees swapped). ``"w"``: the
  alternative of §4.4 and §4.5 instead, w^k_g = 1 at the same nodes for the groups that have
  a w (there categorical groups without one get no symmetry breaking). ``"off"``: neither.
  Both keep every tree because every allowed test's complement is allowed; only odtk's own
  ``max_card_ordinal`` breaks that, so the groups it bounds get no symmetry breaking.
* ``projection="on"`` (§4.3.3): (14) only c^i_b with class(b) = class(i) exist; (7) is
  deleted (with (14) it would read "= 1" on half the leaves, which is not valid).
* ``integrality="relaxed"`` (§4.3.3–4.3.4, Proposition 3): c continuous, and of v and z only
  z of internal nodes integer. ``"full"`` keeps (8)'s v, z, c ∈ {0, 1}. Proposition 3 is
  proven for (8); odtk declares v and z integer wherever it does not hold: with the rate
  constraint (15), which couples the last-level nodes; with §4.5's constraints, whose
  right-hand sides do not scale with v (at v^k_g = ½, z^k = (½, ½, 0, …) meets Σz ≤ max.card
  = 1: on a 24-row instance the relaxed model reports 18.25 for an optimum of 18); with
  odtk's ``max_card_ordinal``; and with (9)–(10) on ordered groups.

``configuration`` names one of the paper's five configurations of §5.1 (Tables 2–3), which
sets the switches above (``CONFIGURATIONS``): ``"nothing"`` (anchors off, integrality full,
inequalities weak), ``"no-anchor"`` (relaxation and strengthening only), ``"no-relax"``
(anchors and strengthening), ``"no-strength"`` (anchors and relaxation) and ``"all"``; the
projection (14) stays on in all five, as in the paper. The default ``"custom"`` leaves the
switches as given. A switch moved off its default to a value the configuration contradicts
is an error; one left at its default is set by the configuration.

Extensions:

* §4.4, ordered groups (numeric bins, ``numeric="ordinal"``): w^k_g = 1 makes z increasing
  (the left subset is a suffix: a "≥" test), 0 decreasing (a prefix: "≤")::

      z^k_j ≥ z^k_{j+1} − w^k_g   and   z^k_{j+1} ≥ z^k_j − (1 − w^k_g)   consecutive bins j, j+1.

  ``numeric="categorical"`` drops them: bins are unordered values (§5.3's "c").
* §4.5, ``max_card`` = m: every categorical (not ordered) group with ``|J(g)|`` > m gets a binary
  w^k_g and ::

      Σ_{j∈J(g)} z^k_j ≤ m + (|J(g)| − m)(1 − w^k_g),   Σ_{j∈J(g)} z^k_j ≥ (|J(g)| − m) − (|J(g)| − m) w^k_g,

  so at most m values go left (w = 1) or at most m go right (w = 0). Ordered groups are not
  bound. ``max_card_ordinal="on"`` is odtk's own, not the paper's (off by
  default): ordered groups with more than m bins get Σ_{j∈J(g)} z^k_j ≤ m·v^k_g,
  at most m bins left.
* ``min_leaf`` = m (odtk's own, not the paper's; scikit-learn's ``min_samples_leaf``, default 1):
  every leaf receives at least m training rows. Formulation (8) has no variable for "row i
  reaches leaf b" — c^i_b only says row i is classified correctly there, and (14) drops it for
  the leaves of the other class — so odtk adds a continuous r^i_b ∈ [0, 1] for the pairs
  (i, b) without a c^i_b (the set CR), bounded like (11)–(12) by
  Σ_{b∈L(k)} r^i_b ≤ L(i, k) and Σ_{b∈R(k)} r^i_b ≤ R(i, k), and ::

      Σ_{i: (i,b)∈CI} c^i_b + Σ_{i: (i,b)∈CR} r^i_b ≥ m                          b ∈ B.

  Both c and r are at most 1 only where row i reaches b, and can reach 1 there, so a tree
  meets the rows exactly when each of its leaves holds at least m rows. Skipped (no CR, no
  rows) when m ≤ 1, so the default leaves the optimum and the model unchanged; with m > 1 an
  optimum can only fall (a test sending no value left empties a leaf and is then excluded), and
  v and the last-level z are kept integer (Proposition 3 is not proven with these rows).
* (9) Σ_{j∈J(g)} z^k_j ≥ v^k_g and (10) Σ_{j∈J(g)} z^k_j ≤ (``|J(g)|`` − 1) v^k_g
  (``proper_subsets="on"``): every test sends some value each way. The paper states them and
  does not use them.
* §4.6: ``rate="sensitivity"`` maximises (16) Σ_{i∈N+} Σ_{b∈B+} c^i_b (divided by ``|N+|``)
  subject to (15) Σ_{i∈N−} Σ_{b∈B−} c^i_b ≥ ``⌈min_rate · |N−|⌉``; ``rate="specificity"`` swaps
  the classes.
* §5.1, ``feature_selection="cart"``: v^k_g = 0 for the groups that a CART with default
  settings (scikit-learn's: no depth limit) never splits on, fitted on a random sample of
  ``selection_share`` (0.9) of the rows (``cart_groups``). §5.7 makes "sure that at least 4
  features are selected": if CART uses fewer than ``min_groups`` (4), the unused groups with
  the best single split (largest Gini decrease of one column on the sample) are added.

Departures from the paper that remain:

* Changing the optimum of a feature-selected model only (which groups it may use): the paper
  ran rpart (R) with its defaults — subset splits on whole factors, minsplit 20, pruned at
  cp = 0.01 — where odtk runs scikit-learn's CART on the one-hot columns grown until its
  leaves are pure, which usually splits on more groups (a weaker restriction, so an optimum
  at least as high when its groups include rpart's); the paper's sample is 90 % of the whole
  data set (its ODTs train on min(90 %, 600) rows), odtk's 90 % of the rows it is given,
  drawn with seed 0; and the paper does not say how it reached "at least 4": the top-up
  rule above is odtk's.
* Not changing the optimal trees: (16) is reported as a rate (divided by ``|N+|`` or ``|N−|``), not a
  count; (15)'s right-hand side is ``⌈β·|N−|⌉`` (the paper's text writes ``⌈(1 − 0.95)|I−|⌉`` for a
  guaranteed specificity of 0.95, which would guarantee 5 %); the topology ``imbalanced``
  (``odtk.skeletons``) is the mirror image of Figure 3's (the long branch on the right, the
  paper's on the left; ``depth-2.5`` is the paper's), which leaves the optimum unchanged
  because every allowed test's complement is allowed (except under ``max_card_ordinal``),
  and moves where anchors apply; ordered bins come from odtk's encoder (decile cuts moved to
  the nearest midpoint between values, one bin per value for ten values or fewer;
  ``max_thresholds`` sets the count), a change of data, not of model; a test that sends no
  value left is dropped from the decoded tree.
* Sample weights (odtk's, ``sample_weight``; param ``weight[i]`` = ω_i, default 1): row i's
  c^i_b counts ω_i times in the objective — (8a) becomes Σ_{i∈N+} ω_i Σ_{b∈B+} c^i_b +
  C Σ_{i∈N−} ω_i Σ_{b∈B−} c^i_b (the paper's "weighted sum of c" with a weight per row,
  not only per class) and (16) the weighted rate, divided by Σ_{i∈N+} ω_i (or N−'s). The
  rate constraint (15) keeps counting rows, ``⌈β·|N−|⌉``, like every side constraint. The
  weights are in the objective only, so Proposition 3 (a statement on the extreme points
  of the feasible set) holds as before.
* Speed only: Proposition 3 is not used where it fails (above), so models with ``max_card``
  on categorical groups branch on the last-level z too (the paper does not say what it
  relaxed in its max.card runs, Table 6).

Symbols → Pyomo components: I, N+ / N− (sets I, I_pos, I_neg); J, G, J(g) (J, G, J_g[g]);
{j: x^i_j = 1} (X1[i]); K, K_I, K_L (K, K_internal, K_last); B, B+ / B− (B, B_pos, B_neg);
L(k), R(k) (L[k], R[k]); c^i_b over the pairs CI; v, z, w (v[k,g], z[k,j], w[k,g] over G_w:
the ordered groups G_ordinal and §4.5's G_card); C (class_weight); max.card (max_card); ω_i (weight[i]);
odtk's r^i_b (r over CR), m (min_leaf).
"""
from __future__ import annotations

import math
from collections.abc import Set
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
from sklearn.tree import DecisionTreeClassifier

KEY = "categorical"
CITATION = ("Günlük, Kalagnanam, Li, Menickelly & Scheinberg, Optimal Decision Trees for "
            "Categorical Data via Integer Programming, formulation (8)")
SENSE = "maximize"
FEATURES = "onehot"
OBJECTIVE = ("correct positives + class_weight × correct negatives (or the chosen rate), "
             "maximised")
SKELETON = "topology"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS = {"class_weight": (0.0, 1e6, 1.0), "max_card": (1, 10**6, None),
                   "min_rate": (0.0, 1.0, None), "min_groups": (1, 10**6, 4),
                   "selection_share": (0.01, 1.0, 0.9), "min_leaf": (0, 10**6, 1)}
CHOICES: dict[str, tuple] = {
    "inequalities": ("strong", "weak"), "anchors": ("on", "off", "w"), "projection": ("on", "off"),
    "integrality": ("relaxed", "full"), "numeric": ("ordinal", "categorical"),
    "proper_subsets": ("off", "on"), "rate": ("accuracy", "sensitivity", "specificity"),
    "feature_selection": ("all", "cart"), "max_card_ordinal": ("off", "on"),
    "configuration": ("custom", "all", "nothing", "no-anchor", "no-relax", "no-strength"),
}
# §5.1, Tables 2–3: the paper's five named configurations of anchoring (13), relaxation
# (Proposition 3) and strengthening (11)–(12); the projection (14) is on in all five.
CONFIGURATIONS: dict[str, dict[str, str]] = {
    "all": {"anchors": "on", "integrality": "relaxed", "inequalities": "strong", "projection": "on"},
    "nothing": {"anchors": "off", "integrality": "full", "inequalities": "weak", "projection": "on"},
    "no-anchor": {"anchors": "off", "integrality": "relaxed", "inequalities": "strong", "projection": "on"},
    "no-relax": {"anchors": "on", "integrality": "full", "inequalities": "strong", "projection": "on"},
    "no-strength": {"anchors": "on", "integrality": "relaxed", "inequalities": "weak", "projection": "on"},
}
SIDE_CONSTRAINTS = ("max_card", "max_card_ordinal", "min_leaf", "min_rate", "proper_subsets")
IMPROVEMENTS = {"inequalities": ("strong", "weak"), "anchors": ("on", "off"),
                "projection": ("on", "off"), "integrality": ("relaxed", "full")}  # (on, off)
POSITIVE = 1  # class index of the positive class; the negative class is 0
SAMPLE_WEIGHT = True  # make_data and objective_of take per-sample weights


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


# --------------------------------------------------------------------------- decoding
def decode(instance) -> nx.DiGraph:
    """The learned tree, in :func:`tree_of`'s format."""
    tests = {k: _left_values(instance, k) for k in instance.K}
    return tree_of(tests, instance.K.first(), instance.child, set(instance.B_pos))


def tree_of(tests: dict, root, child, positive_leaves: set) -> nx.DiGraph:
    """The tree whose decision node k sends the columns ``tests[k]`` left: a node carries
    ``subset`` (the values that go left, as column indices; the ``outcome=True`` arc) or
    ``label`` (0 negative, 1 positive: ``positive_leaves``). ``child[k, side]`` is the left or
    right child of k. A test that sends no value left is dropped (every row goes right)."""
    tree = nx.DiGraph()
    stack: list[tuple[Any, Any, bool | None]] = [(root, None, None)]
    while stack:
        node, parent, outcome = stack.pop()
        if node not in tests:
            tree.add_node(node, label=POSITIVE if node in positive_leaves else 1 - POSITIVE)
        else:
            subset = [int(j) for j in tests[node]]
            left, right = child[node, "left"], child[node, "right"]
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


# --------------------------------------------------------------------------- warm start
def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the tree ``graph`` routing the rows of ``X``.

    ``graph`` follows :func:`decode`'s convention: the topology's node ids, a test's ``subset``
    (the columns that go left, all of one group) on its ``outcome=True`` arc, a leaf's ``label``
    the class the topology gives that leaf; a test absent from ``graph`` sends every row right
    (the first allowed group, no value left). Where symmetry breaking forbids a test — (13) at a
    node of K_mirror whose anchor goes right, or ``anchors="w"`` with w^k_g = 0 there — its
    mirror image is loaded instead (the complement goes left, the two subtrees swap): the same
    tree. c^i_b = 1 at the leaf b row i reaches, where the pair exists. Side constraints (§4.5,
    (9)–(10), (15)) are not enforced: a tree breaking one loads an infeasible point.

    Raises ValueError when ``graph`` does not fit the topology (a node off its position, a leaf
    of the other class, a test on several groups, on a group feature selection left out, or on
    an ordered group's bins that are neither a prefix nor a suffix) or ``X`` the instance.
    """
    X = np.asarray(X) > 0.5
    if X.shape != (len(instance.I), len(instance.J)):
        raise ValueError(f"X has shape {X.shape}; the instance was built from {len(instance.I)} rows "
                         f"and {len(instance.J)} one-hot columns.")
    tests = _tests_of(instance, graph)
    _break_symmetry(instance, tests)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0)
    for k, (group, subset) in tests.items():
        instance.v[k, group].set_value(1)
        for j in subset:
            instance.z[k, j].set_value(1)
        for g in instance.G_w:
            instance.w[k, g].set_value(_w_of(instance, g, subset) if g == group else 1)
    for b, rows in _leaf_rows(instance, tests, X).items():
        for i in rows.tolist():
            if (i, b) in instance.CI:
                instance.c[i, b].set_value(1)


def _tests_of(instance, graph: nx.DiGraph) -> dict:
    """Every decision node of the topology → (group, the columns that go left), from ``graph``."""
    roots = [n for n in graph if graph.in_degree(n) == 0]
    if len(roots) != 1:
        raise ValueError(f"The tree needs one root; it has {len(roots)}.")
    tests: dict = {}
    placed, stack = set(), [(instance.K.first(), roots[0])]
    while stack:
        k, n = stack.pop()
        if k in instance.B:
            if n is not None:
                _check_leaf(instance, graph, k, n)
                placed.add(n)
            continue
        left, right = instance.child[k, "left"], instance.child[k, "right"]
        if n is None or n != k:  # a test decode dropped: every row goes right
            tests[k] = (next(iter(instance.G_allowed)), frozenset())
            stack += [(left, None), (right, n)]
            continue
        arcs = {bool(outcome): c for _, c, outcome in graph.out_edges(k, data="outcome")}
        if not graph.nodes[k].get("subset") or graph.out_degree(k) != 2 or set(arcs) != {True, False}:
            raise ValueError(f"Node {k!r} is a test of the topology: the tree needs a subset there and "
                             "one outcome=True and one outcome=False arc.")
        tests[k] = _test_at(instance, k, graph.nodes[k]["subset"])
        placed.add(k)
        stack += [(left, arcs[True]), (right, arcs[False])]
    if placed != set(graph):
        raise ValueError(f"Nodes {sorted(map(str, set(graph) - placed))} of the tree are off the "
                         "topology's positions (a test dropped from the tree sends every row right).")
    return tests


def _check_leaf(instance, graph: nx.DiGraph, k, n) -> None:
    expected = POSITIVE if k in instance.B_pos else 1 - POSITIVE
    if n != k:
        raise ValueError(f"Node {n!r} of the tree sits where the topology has leaf {k!r}.")
    if graph.nodes[n].get("label") != expected:
        raise ValueError(f"Leaf {k!r} predicts {graph.nodes[n].get('label')!r} but the topology's leaf "
                         f"{k!r} predicts class {expected} (left leaves negative, right leaves positive).")


def _test_at(instance, k, subset) -> tuple:
    """(group, columns) of the test ``subset`` at node ``k``, checked to be one the model has."""
    columns = set(subset)
    if not columns <= set(instance.J):
        raise ValueError(f"Node {k!r} tests columns the instance lacks: {sorted(map(str, columns - set(instance.J)))}.")
    groups = {instance.group_of[j] for j in columns}
    if len(groups) != 1:
        raise ValueError(f"Node {k!r} tests columns of {len(groups)} groups; a test takes values of one group.")
    (group,) = groups
    values = list(instance.J_g[group])
    if group not in instance.G_allowed:
        raise ValueError(f"Node {k!r} tests group {group}, which feature selection left out.")
    if group in instance.G_ordinal and not (_is_end(values, columns) or _is_end(values[::-1], columns)):
        raise ValueError(f"Node {k!r} sends bins {sorted(columns)} of ordered group {group} left: neither a "
                         "prefix nor a suffix of its bins (§4.4).")
    return group, frozenset(int(j) for j in columns)


def _is_end(values: list, columns: Set) -> bool:
    """True when ``columns`` are the first ``len(columns)`` of ``values``."""
    return set(values[:len(columns)]) == columns


def _w_of(instance, group, subset: frozenset) -> int:
    """w^k_g of the group tested: §4.4's 1 for a suffix of the bins ('≥'), 0 for a prefix;
    §4.5's 1 when at most max.card values go left, 0 when at most max.card go right."""
    if group in instance.G_ordinal:
        return int(_is_end(list(instance.J_g[group])[::-1], subset))
    return int(len(subset) <= pyo.value(instance.max_card))


def _break_symmetry(instance, tests: dict) -> None:
    """Mirror, top down, every test that (13) or ``anchors="w"`` forbids at a node of K_mirror."""
    anchors = instance.switch["anchors"]
    for k in instance.K_internal:  # topological order: a node before its descendants
        group, subset = tests[k]
        if k not in instance.K_mirror or group not in instance.G_symmetric:
            continue
        if ((anchors == "on" and instance.J_g[group].first() not in subset)
                or (anchors == "w" and group in instance.G_w and not _w_of(instance, group, subset))):
            tests[k] = (group, frozenset(instance.J_g[group]) - subset)
            _swap(instance, tests, instance.child[k, "left"], instance.child[k, "right"])


def _swap(instance, tests: dict, a, b) -> None:
    """Exchange the tests of two subtrees of the same shape, node by corresponding node."""
    if a in instance.B:
        return
    tests[a], tests[b] = tests[b], tests[a]
    for side in ("left", "right"):
        _swap(instance, tests, instance.child[a, side], instance.child[b, side])


def _leaf_rows(instance, tests: dict, X: np.ndarray) -> dict:
    """Leaf → the rows of ``X`` (booleans) that reach it."""
    reach = {instance.K.first(): np.arange(len(X))}
    found: dict = {}
    for k in instance.K:  # internal nodes, then last-level ones: parents before children
        rows = reach.pop(k)
        left = X[np.ix_(rows, sorted(tests[k][1]))].any(axis=1)
        for side, part in (("left", rows[left]), ("right", rows[~left])):
            child = instance.child[k, side]
            (found if child in instance.B else reach)[child] = part
    return found


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 class_weight: float = 1.0, rate: str = "accuracy",
                 sample_weight: np.ndarray | None = None, **_: object) -> float:
    """Objective (8a), or the maximised rate of (15)/(16), of a tree predicting ``predicted``,
    each row weighed by ``sample_weight`` when given."""
    if rate != "accuracy":
        return rates_of(predicted, y, sample_weight)[rate]
    predicted, y = np.asarray(predicted), np.asarray(y)
    mass = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    correct = (predicted == y) * mass
    return float(correct[y == POSITIVE].sum() + class_weight * correct[y != POSITIVE].sum())


def rates_of(predicted: np.ndarray, y: np.ndarray,
             sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Sensitivity (positives predicted positive) and specificity (negatives predicted negative),
    of rows or, given ``sample_weight``, of their weight (1 for a class of no weight)."""
    predicted, y = np.asarray(predicted), np.asarray(y)
    mass = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    positive = y == POSITIVE

    def rate(rows: np.ndarray, hits: np.ndarray) -> float:
        total = mass[rows].sum()
        return float(np.dot(hits[rows], mass[rows]) / total) if total > 0 else 1.0

    return {"sensitivity": rate(positive, predicted == POSITIVE),
            "specificity": rate(~positive, predicted != POSITIVE)}
