"""The abstract ODD model: sets, parameters, variables, objective (18) and constraints (1)–(20).

Every component's ``doc`` names the paper's equation it states, or "(odtk)" for a row of odtk's
own; the package docstring maps the symbols and lists the departures.
"""
from __future__ import annotations

import pyomo.environ as pyo

from . import A_BOUND, B_BOUND


def build_model() -> pyo.AbstractModel:
    """The abstract ODD model (1)–(20)."""
    m = pyo.AbstractModel(name="ODD")
    _sets(m)
    _params(m)
    _variables(m)
    m.objective = pyo.Objective(
        rule=_objective, sense=pyo.minimize,
        doc="(18) error rate (weighted by ω) plus α times the share of active non-root nodes")
    _flow_constraints(m)
    _topology_constraints(m)
    _split_constraints(m)
    _extension_constraints(m)
    return m


def _sets(m: pyo.AbstractModel) -> None:
    m.I = pyo.Set(ordered=True, doc="training samples")
    m.J = pyo.Set(ordered=True, doc="features (scaled to [0, 1])")
    m.L = pyo.Set(ordered=True, doc="internal layers 0 … D-1")
    m.V = pyo.Set(ordered=True, doc="internal nodes, numbered layer by layer")
    m.VL = pyo.Set(m.L, within=m.V, ordered=True, doc="internal nodes V_l of layer l")
    m.C = pyo.Set(ordered=True, doc="class terminals, one per class")
    m.N = pyo.Set(initialize=lambda m: [*m.V, *m.C], ordered=True, doc="all nodes V ∪ C")
    m.A = pyo.Set(within=m.V * m.N, ordered=True, doc="candidate arcs (u, v)")
    m.OUT = pyo.Set(m.V, within=m.N, ordered=True, doc="heads v of the arcs leaving u")
    m.IN = pyo.Set(m.N, within=m.V, ordered=True, doc="tails u of the arcs entering v")
    m.ORDER = pyo.Set(within=m.V * m.V, doc="consecutive nodes u < v of a layer l ≥ 1, for (12)")
    m.SIBLINGS = pyo.Set(within=m.V * m.V, doc="tree mode: the children (2s+1, 2s+2) of every s")
    m.GROUPS = pyo.Set(doc="subgroups {1, 2} (g₁, g₂) when fairness is on, else empty")
    m.FAIR = pyo.Set(m.GROUPS, within=m.I, doc="samples of subgroup g in the fairness population")


def _params(m: pyo.AbstractModel) -> None:
    m.root = pyo.Param(within=m.V, doc="root node r")
    m.x = pyo.Param(m.I, m.J, within=pyo.Reals, doc="feature value x_ij")
    m.phi = pyo.Param(m.I, m.C, within=pyo.Binary, doc="φ_iv: 1 if terminal v's class is not y_i")
    m.weight = pyo.Param(m.I, within=pyo.NonNegativeReals, default=1.0,
                         doc="ω_i: weight of sample i in (18) (1 unless sample weights are given)")
    m.cls = pyo.Param(m.C, within=pyo.NonNegativeIntegers, doc="class of terminal v")
    m.alpha = pyo.Param(within=pyo.NonNegativeReals, doc="regulariser α on active nodes")
    m.epsilon = pyo.Param(within=pyo.PositiveReals, doc="split strictness ε")
    m.univariate = pyo.Param(within=pyo.Boolean, doc="one feature per split, (15)–(16)")
    m.domain = pyo.Param(within=pyo.Any,
                         doc="split domain: 'box' (a ∈ [−1, 1]^p) or 'l1' (‖a‖₁ ≤ 1)")
    m.tree = pyo.Param(within=pyo.Boolean, doc="tree mode: arcs fixed to the tree, (7) as an equality")
    m.strengthening = pyo.Param(within=pyo.Any,
                                doc="'on': odtk's optimum-preserving strengthening; 'off': the paper's model")
    m.U = pyo.Set(initialize=lambda m: list(m.V) if pyo.value(m.univariate) else [],
                  within=m.V, doc="nodes restricted to univariate splits")
    m.big_m_neg = pyo.Param(
        m.I, initialize=lambda m, i: _reach(m, i) + B_BOUND + pyo.value(m.epsilon),
        doc="M⁻_i = max (a·x_i + ε − b) over the bounds of a and b, for (13)")
    m.big_m_pos = pyo.Param(m.I, initialize=lambda m, i: _reach(m, i) + B_BOUND,
                            doc="M⁺_i = max (b − a·x_i) over the bounds of a and b, for (14)")
    m.xi = pyo.Param(within=pyo.UnitInterval, doc="fairness ratio ξ (0 when off)")
    m.fairness_form = pyo.Param(within=pyo.Any, doc="'counts' (the paper's (19)) or 'rates'")
    m.positive = pyo.Param(within=m.C, doc="terminal of the positive class, for (19)")
    m.max_nodes = pyo.Param(within=pyo.NonNegativeIntegers, doc="at most this many active nodes")
    m.min_samples = pyo.Param(within=pyo.NonNegativeReals,
                              doc="S: samples through every active node (0 when off)")
    m.min_leaf = pyo.Param(within=pyo.NonNegativeIntegers, default=1,
                           doc="m: samples on each side of every active node (off at 1)")


def _reach(m, i) -> float:
    """R_i = the largest |a·x_i| over the split domain, behind M⁻_i and M⁺_i.

    |a·x_i| ≤ Σ_j |a_j| |x_ij|. On the box (|a_j| ≤ 1) this is at most ‖x_i‖₁ (≤ p on
    [0, 1] features); with ‖a‖₁ ≤ 1, or one non-zero |a_j| ≤ e_j by (15)–(16), at most
    ‖x_i‖_∞ (≤ 1).
    With |b| ≤ 1, a·x_i + ε − b ≤ R_i + 1 + ε and b − a·x_i ≤ R_i + 1 at every feasible
    point, so (13)–(14) are slack when w⁻_iu = 0, resp. w⁺_iu = 0.
    """
    values = [abs(pyo.value(m.x[i, j])) for j in m.J]
    if pyo.value(m.domain) == "box" and not pyo.value(m.univariate):
        return A_BOUND * sum(values)
    return A_BOUND * max(values)


def _variables(m: pyo.AbstractModel) -> None:
    m.d = pyo.Var(m.V, bounds=lambda m, u: (1, 1) if u == pyo.value(m.root) else (0, 1),
                  domain=_integral_when_strengthened, doc="d_u: node u is active (the root always is)")
    m.y_neg = pyo.Var(m.A, domain=pyo.Binary, doc="y⁻_uv: negative arc of u goes to v")
    m.y_pos = pyo.Var(m.A, domain=pyo.Binary, doc="y⁺_uv: positive arc of u goes to v")
    m.w_neg = pyo.Var(m.I, m.V, bounds=(0, 1), doc="w⁻_iu: sample i leaves u on the negative side")
    m.w_pos = pyo.Var(m.I, m.V, bounds=(0, 1), doc="w⁺_iu: sample i leaves u on the positive side")
    m.w_term = pyo.Var(m.I, m.C, bounds=(0, 1), domain=_integral_when_strengthened,
                       doc="w_iv: sample i reaches terminal v")
    m.z_neg = pyo.Var(m.I, m.A, bounds=(0, 1), doc="z⁻_iuv: flow of i on the negative arc u→v")
    m.z_pos = pyo.Var(m.I, m.A, bounds=(0, 1), doc="z⁺_iuv: flow of i on the positive arc u→v")
    m.lam = pyo.Var(m.I, m.L, domain=pyo.Binary, doc="λ_il: sample i goes positive at layer l")
    m.a_plus = pyo.Var(m.V, m.J, bounds=(0, A_BOUND), doc="a⁺_uj: positive part of a_uj")
    m.a_minus = pyo.Var(m.V, m.J, bounds=(0, A_BOUND), doc="a⁻_uj: negative part of a_uj")
    m.b = pyo.Var(m.V, bounds=(-B_BOUND, B_BOUND), doc="b_u: intercept of the split")
    m.e = pyo.Var(m.U, m.J, domain=pyo.Binary, doc="e_uj: univariate split of u uses feature j")


def _strengthened(m) -> bool:
    return pyo.value(m.strengthening) == "on"


def _integral_when_strengthened(m, *_):
    """S1: d and w_term binary when strengthened (they are 0/1 at integral y and λ anyway)."""
    return pyo.Binary if _strengthened(m) else pyo.Reals


def _objective(m):
    """(18), its error term weighted: Σ_i ω_i Σ_v φ_iv w_iv / Σ_i ω_i (the error rate when ω = 1)."""
    total = sum(m.weight[i] for i in m.I)
    error = sum(m.weight[i] * m.phi[i, v] * m.w_term[i, v] for i in m.I for v in m.C) / total
    non_root = [v for v in m.V if v != pyo.value(m.root)]
    if not non_root:
        return error
    return error + m.alpha / len(non_root) * sum(m.d[v] for v in non_root)


def _inflow(m, i, v):
    return sum(m.z_neg[i, u, v] + m.z_pos[i, u, v] for u in m.IN[v])


def _indegree(m, v):
    return sum(m.y_neg[u, v] + m.y_pos[u, v] for u in m.IN[v])


def _flow_constraints(m: pyo.AbstractModel) -> None:
    m.flow_in = pyo.Constraint(
        m.I, m.V, doc="(1) the flow entering an internal node leaves it on one of its sides",
        rule=lambda m, i, v: m.w_neg[i, v] + m.w_pos[i, v] == (
            1 if v == pyo.value(m.root) else _inflow(m, i, v)))
    m.flow_neg = pyo.Constraint(
        m.I, m.V, doc="(2) negative-side flow leaves on negative arcs",
        rule=lambda m, i, u: m.w_neg[i, u] == sum(m.z_neg[i, u, v] for v in m.OUT[u]))
    m.flow_pos = pyo.Constraint(
        m.I, m.V, doc="(3) positive-side flow leaves on positive arcs",
        rule=lambda m, i, u: m.w_pos[i, u] == sum(m.z_pos[i, u, v] for v in m.OUT[u]))
    m.side_neg = pyo.Constraint(
        m.I, m.L, doc="(4) sample i goes negative at layer l only if λ_il = 0",
        rule=lambda m, i, l: sum(m.w_neg[i, u] for u in m.VL[l]) <= 1 - m.lam[i, l])
    m.side_pos = pyo.Constraint(
        m.I, m.L, rule=_side_pos,
        doc="(5) sample i goes positive at layer l only if λ_il = 1 (if and only if, strengthened)")
    m.terminal_flow = pyo.Constraint(
        m.I, m.C, doc="(17) flow reaching a class terminal",
        rule=lambda m, i, v: m.w_term[i, v] == _inflow(m, i, v))
    m.flow_at_active = pyo.Constraint(
        m.I, m.V, rule=_flow_at_active,
        doc="(odtk, strengthened) S3: flow passes active nodes only, w⁻_iu + w⁺_iu ≤ d_u")


def _side_pos(m, i, l):
    """(5); S2 states it as λ_il = Σ_{u∈V_l} w⁺_iu when strengthened.

    Valid: λ_il enters (4)–(5) only. A sample reaching layer l has λ_il equal to that sum
    already; one that does not leaves λ_il free, and λ_il = 0 keeps the point feasible with
    the same objective. So every feasible point has a copy meeting the equality.
    """
    positive = sum(m.w_pos[i, u] for u in m.VL[l])
    return positive == m.lam[i, l] if _strengthened(m) else positive <= m.lam[i, l]


def _flow_at_active(m, i, u):
    """S3 (strengthened): w⁻_iu + w⁺_iu ≤ d_u. Valid: an inactive node has no entering arc by
    (8), hence no inflow by (9)–(10), and (1) makes its flow zero (the root is active)."""
    if not _strengthened(m):
        return pyo.Constraint.Skip
    return m.w_neg[i, u] + m.w_pos[i, u] <= m.d[u]


def _topology_constraints(m: pyo.AbstractModel) -> None:
    m.one_neg_arc = pyo.Constraint(
        m.V, doc="(6) an active node has exactly one negative arc",
        rule=lambda m, u: sum(m.y_neg[u, v] for v in m.OUT[u]) == m.d[u])
    m.one_pos_arc = pyo.Constraint(
        m.V, doc="(6) an active node has exactly one positive arc",
        rule=lambda m, u: sum(m.y_pos[u, v] for v in m.OUT[u]) == m.d[u])
    m.has_parent = pyo.Constraint(
        m.V, doc="(7) an active non-root node has an incoming arc (exactly one in tree mode)",
        rule=_has_parent)
    m.arc_to_active = pyo.Constraint(
        m.A, doc="(8) arcs enter active nodes only, and not both sides of a node into one",
        rule=lambda m, u, v: m.y_neg[u, v] + m.y_pos[u, v] <= (m.d[v] if v in m.V else 1))
    m.flow_on_neg_arc = pyo.Constraint(
        m.I, m.A, doc="(10) flow only on chosen negative arcs",
        rule=lambda m, i, u, v: m.z_neg[i, u, v] <= m.y_neg[u, v])
    m.flow_on_pos_arc = pyo.Constraint(
        m.I, m.A, doc="(9) flow only on chosen positive arcs",
        rule=lambda m, i, u, v: m.z_pos[i, u, v] <= m.y_pos[u, v])
    m.side_order = pyo.Constraint(
        m.A, doc="(11) symmetry breaking: the negative child has the smaller id",
        rule=lambda m, u, v: m.y_neg[u, v] + sum(m.y_pos[u, w] for w in m.OUT[u] if w <= v) <= 1)
    m.indegree_order = pyo.Constraint(
        m.ORDER, doc="(12) symmetry breaking: in-degree does not increase along a layer",
        rule=lambda m, u, v: _indegree(m, u) >= _indegree(m, v))
    m.sibling_order = pyo.Constraint(
        m.SIBLINGS, rule=_sibling_order,
        doc="(odtk, tree mode) symmetry breaking: a lone internal child sits at 2s+1, d_{2s+2} ≤ d_{2s+1}")


def _sibling_order(m, u, v):
    """d_v ≤ d_u for the children u = 2s+1, v = 2s+2 of s in tree mode (valid, see below).

    Validity: take a feasible point with d_v = 1, d_u = 0. (7) as an equality and (8) give v
    one arc, from s, and no active node below u. By (11) that arc is s's negative one (a
    positive arc to v needs a negative child < v, i.e. u, which (8) forbids), and s's
    positive arc goes to a terminal. Shift the subtree of v onto that of u — position
    q at depth k below v to q − 2^k, which maps children 2q+1, 2q+2 to the children of
    q − 2^k — keeping every split, arc side, λ and flow. Paths, predictions, the number of
    active nodes and the flow on each side of every node keep their values, so (18), (19), (20),
    parsimony and the leaf size do; (11) holds at s (u < every terminal) and, the shift preserving order
    within a layer, inside the subtree. Repeating top-down ends at a point meeting every
    d_{2s+2} ≤ d_{2s+1} with the same objective, so the optimum is unchanged.
    """
    return m.d[v] <= m.d[u]


def _has_parent(m, v):
    if v == pyo.value(m.root):
        return pyo.Constraint.Skip
    if pyo.value(m.tree):
        return m.d[v] == _indegree(m, v)
    return m.d[v] <= _indegree(m, v)


def _hyperplane(m, u, i):
    return sum((m.a_plus[u, j] - m.a_minus[u, j]) * m.x[i, j] for j in m.J)


def _split_constraints(m: pyo.AbstractModel) -> None:
    m.split_norm = pyo.Constraint(
        m.V, doc="(13) domain='l1': ‖a_u‖₁ ≤ 1 (the authors' code; the box needs only the bounds)",
        rule=_split_norm)
    m.split_neg = pyo.Constraint(
        m.I, m.V, doc="(13) negative side: a_u·x_i + ε ≤ b_u (big-M)",
        rule=lambda m, i, u: _hyperplane(m, u, i) + m.epsilon
        <= m.b[u] + m.big_m_neg[i] * (1 - m.w_neg[i, u]))
    m.split_pos = pyo.Constraint(
        m.I, m.V, doc="(14) positive side: a_u·x_i ≥ b_u (big-M)",
        rule=lambda m, i, u: _hyperplane(m, u, i) >= m.b[u] - m.big_m_pos[i] * (1 - m.w_pos[i, u]))
    m.one_feature = pyo.Constraint(
        m.U, doc="(15) a univariate split selects one feature (an active node's, strengthened)",
        rule=lambda m, u: sum(m.e[u, j] for j in m.J) == _active(m, u))
    m.selected_feature = pyo.Constraint(
        m.U, m.J, doc="(16) only the selected feature has a non-zero coefficient",
        rule=lambda m, u, j: m.a_plus[u, j] + m.a_minus[u, j] <= m.e[u, j])
    m.inactive_weight = pyo.Constraint(
        m.V, m.J, rule=_inactive_weight,
        doc="(odtk, strengthened) S3: box weights vanish at inactive nodes, a⁺_uj + a⁻_uj ≤ d_u")
    m.inactive_intercept = pyo.Constraint(
        m.V, [-1, 1], rule=_inactive_intercept,
        doc="(odtk, strengthened) S3: the intercept vanishes at inactive nodes, |b_u| ≤ d_u")


def _split_norm(m, u):
    """‖a_u‖₁ ≤ 1 (l1), ≤ d_u when strengthened (S3)."""
    if pyo.value(m.domain) == "box":
        return pyo.Constraint.Skip
    return sum(m.a_plus[u, j] + m.a_minus[u, j] for j in m.J) <= A_BOUND * _active(m, u)


def _active(m, u):
    """d_u when strengthened (S3: a zero split at inactive nodes), else 1."""
    return m.d[u] if _strengthened(m) else 1


def _inactive_weight(m, u, j):
    """S3 on the box (the l1 norm and (15)–(16) carry it otherwise): a⁺_uj + a⁻_uj ≤ d_u.

    Valid: an inactive node has no flow (see ``_flow_at_active``), so (13)–(14) are slack for
    every sample and a_u, b_u, e_u appear in no other row: zero keeps the point feasible with
    the same objective. At an active node, a⁺_uj + a⁻_uj ≤ 1 drops only the representations
    with a⁺_uj, a⁻_uj > 0 of a weight a_uj that min(a⁺_uj, a⁻_uj) = 0 also represents.
    """
    if not _strengthened(m) or pyo.value(m.domain) != "box" or u in m.U:
        return pyo.Constraint.Skip
    return m.a_plus[u, j] + m.a_minus[u, j] <= A_BOUND * m.d[u]


def _inactive_intercept(m, u, sign):
    """S3: ±b_u ≤ d_u (valid as for ``_inactive_weight``)."""
    if not _strengthened(m):
        return pyo.Constraint.Skip
    return sign * m.b[u] <= B_BOUND * m.d[u]


def _extension_constraints(m: pyo.AbstractModel) -> None:
    m.fairness = pyo.Constraint(m.GROUPS, rule=_fairness, doc=(
        "(19) fairness: g₁'s positive count is ≥ ξ times g₂'s (counts), or each group's "
        "positive rate ≥ ξ times the other's (rates)"))
    m.parsimony = pyo.Constraint(rule=_parsimony, doc=(
        "(§Discussion, unnumbered) parsimony: at most max_nodes active internal nodes"))
    m.stability = pyo.Constraint(m.V, rule=_stability, doc=(
        "(20) stability: at least S samples flow through every active node"))
    m.leaf_size = pyo.Constraint(m.V, [-1, 1], rule=_leaf_size, doc=(
        "(odtk) leaf size: at least m samples leave every active node on each side"))


def _fairness(m, g):
    h = 3 - g  # the other subgroup
    positives = {k: sum(m.w_term[i, m.positive] for i in m.FAIR[k]) for k in (g, h)}
    if pyo.value(m.fairness_form) == "counts":  # (19): one way, g₁ against g₂
        return positives[1] >= m.xi * positives[2] if g == 1 else pyo.Constraint.Skip
    return len(m.FAIR[h]) * positives[g] >= m.xi * len(m.FAIR[g]) * positives[h]


def _parsimony(m):
    if pyo.value(m.max_nodes) >= len(m.V):
        return pyo.Constraint.Skip
    return sum(m.d[v] for v in m.V) <= m.max_nodes


def _stability(m, v):
    if pyo.value(m.min_samples) == 0:
        return pyo.Constraint.Skip
    return sum(m.w_neg[i, v] + m.w_pos[i, v] for i in m.I) >= m.min_samples * m.d[v]


def _leaf_size(m, v, side):
    """Σ_i w⁻_iv ≥ m d_v (side −1) and Σ_i w⁺_iv ≥ m d_v (side 1); skipped when m ≤ 1."""
    if pyo.value(m.min_leaf) <= 1:
        return pyo.Constraint.Skip
    flow = m.w_neg if side < 0 else m.w_pos
    return sum(flow[i, v] for i in m.I) >= m.min_leaf * m.d[v]
