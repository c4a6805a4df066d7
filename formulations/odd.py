"""ODD: optimal decision diagrams for classification.

Citation: A. M. Florio, P. Martins, M. Schiffer, T. Serra, T. Vidal, "Optimal
Decision Diagrams for Classification", AAAI 2023 (arXiv:2205.14500), MILP
(1)–(18) with the fairness (19) and stability (20) extensions. Equation numbers
are those of the paper; where it leaves room, the authors' public code decides.

The skeleton has layers V_0 = {r}, V_1, …, V_{D-1} of internal nodes V (ids 0, 1, …
layer by layer) and one class terminal per class, C (the terminal of class k is
node ``|V|`` + k). Candidate arcs A: from every node of V_l to every node of V_{l+1}
and to every terminal (the last layer reaches the terminals only). An active
internal node u has one arc per side; sample i follows the positive side iff
a_u·x_i ≥ b_u and the negative side iff a_u·x_i + ε ≤ b_u. Features are in [0, 1]. ::

    min  (1/n) Σ_i Σ_{v∈C} φ_iv w_iv  +  (α/|V_I|) Σ_{v∈V_I} d_v    V_I = V \\ {r}    (18)
    s.t. w⁻_iv + w⁺_iv = Σ_{u:(u,v)∈A} (z⁻_iuv + z⁺_iuv)   (= 1 at v = r)        (1)
         w⁻_iu = Σ_v z⁻_iuv,   w⁺_iu = Σ_v z⁺_iuv                                (2), (3)
         Σ_{u∈V_l} w⁻_iu ≤ 1 − λ_il,   Σ_{u∈V_l} w⁺_iu ≤ λ_il                      (4), (5)
         Σ_v y⁻_uv = d_u = Σ_v y⁺_uv                        u ∈ V                  (6)
         d_v ≤ Σ_u (y⁻_uv + y⁺_uv)                          v ∈ V_I                (7)
         y⁻_uv + y⁺_uv ≤ d_v   (d_v = 1 for v ∈ C)          (u, v) ∈ A             (8)
         z⁺_iuv ≤ y⁺_uv,   z⁻_iuv ≤ y⁻_uv                                          (9), (10)
         y⁻_uv + Σ_{w ≤ v} y⁺_uw ≤ 1                         (u, v) ∈ A             (11)
         Σ_w (y⁻_wu + y⁺_wu) ≥ Σ_w (y⁻_wv + y⁺_wv)     u < v consecutive in V_l, l ≥ 1  (12)
         a_u·x_i + ε ≤ b_u + M⁻_i (1 − w⁻_iu)                                       (13)
         a_u·x_i ≥ b_u − M⁺_i (1 − w⁺_iu)                                           (14)
         univariate: Σ_j e_uj = 1,  |a_uj| ≤ e_uj,  e ∈ {0,1}                      (15), (16)
         w_iv = Σ_u (z⁻_iuv + z⁺_iuv)                        v ∈ C                  (17)
         y, λ ∈ {0,1};  d, w, z ∈ [0,1];  a_u ∈ [−1, 1]^p,  b_u ∈ [−1, 1]
         (a = a⁺ − a⁻ with a⁺, a⁻ ∈ [0, 1])

φ_iv (mismatch penalty) is 1 if terminal v's class differs from sample i's class,
else 0, so the first term of (18) is the training error rate. (11) orders the two
arcs of a node: its negative child has a smaller id than its positive child (a
split and its mirror image are the same split). (12) orders the nodes of a layer by
non-increasing in-degree, so the inactive nodes come last.

Options:

* ``domain``: ``"box"`` (default, the paper's a_u ∈ [−1, 1]^p) or ``"l1"`` (the authors'
  code: ‖a_u‖₁ ≤ 1, a smaller set of splits at margin ε, so the optimum can be worse).
* ``tree=True`` (optimal decision *tree* on a skeleton of widths 1-2-4-…): the topology
  is fixed to the tree — node s's only candidate internal children are 2s+1 and 2s+2 (arcs
  to terminals stay free, so branches can end early) — (7) becomes an equality, (12) is
  dropped, since node positions are no longer interchangeable, and d_{2s+2} ≤ d_{2s+1}
  puts a lone internal child at 2s+1 (proof at ``_sibling_order``).
* fairness (19), positive class 1, two subgroups g₁, g₂ given as a 0/1 vector (g₁: the 1s,
  g₂: the 0s) or as an n × 2 0/1 matrix (columns g₁, g₂, which may overlap). The population
  P is all samples (demographic parity), those with y = 1 (equal opportunity) or those with
  y = 0 (predictive equality); P_g = P ∩ g. ``fairness_form``:
  ``"counts"`` (the paper's (19)): Σ_{i∈P_g₁} w_{i,c⁺} ≥ ξ Σ_{i∈P_g₂} w_{i,c⁺}, one way;
  ``"rates"`` (default): n_h Σ_{i∈P_g} w_{i,c⁺} ≥ ξ n_g Σ_{i∈P_h} w_{i,c⁺} for
  {g, h} = {g₁, g₂}, n_g = ``|P_g|``: each group's positive-prediction rate is at least ξ
  times the other's.
* ``strengthening``: ``"on"`` (default) adds S1–S3 below, which keep the optimum and speed
  up open solvers; ``"off"`` builds exactly the model above.

  - S1: d and w_iv (v ∈ C) are binary. At integral y and λ they are 0/1 already (d_u =
    Σ_v y⁻_uv by (6); a sample's unit flow leaves each node it reaches on the side λ gives
    and along the node's one arc of that side), so no feasible point is lost; solvers then
    know that (18) moves in steps (``1/n``, ``α/|V_I|``) and prune nodes whose bound is within a step.
  - S2: (5) as the equality λ_il = Σ_{u∈V_l} w⁺_iu. λ_il enters (4)–(5) only, and is free
    exactly when sample i reaches no node of layer l; λ_il = 0 then keeps the point feasible
    with the same objective, so solvers no longer branch on λ of samples that stopped earlier.
  - S3: inactive nodes carry no flow and a zero split: w⁻_iu + w⁺_iu ≤ d_u, ``|b_u|`` ≤ d_u,
    a⁺_uj + a⁻_uj ≤ d_u (box), ‖a_u‖₁ ≤ d_u (l1), Σ_j e_uj = d_u in (15). An inactive node
    has no entering arc (8), hence no flow ((9)–(10), (1)); (13)–(14) are then slack and
    a_u, b_u, e_u appear in no other row, so zero loses nothing; a⁺_uj + a⁻_uj ≤ 1 at an
    active node drops only representations of a_uj that min(a⁺_uj, a⁻_uj) = 0 also gives.
* parsimony (unnumbered in the paper): Σ_{v∈V} d_v ≤ max_nodes, the root included.
* stability (20): Σ_i (w⁻_iv + w⁺_iv) ≥ S d_v for every internal node v, root included;
  S is ``min_samples`` (a count) or ``min_share`` · n (a share of n, as in the paper's
  Table 2: 0.05n–0.20n).
* leaf size (odtk's, not the paper's; ``min_leaf`` = m, default 1, scikit-learn's
  ``min_samples_leaf``): Σ_i w⁻_iv ≥ m d_v and Σ_i w⁺_iv ≥ m d_v for every internal node v,
  root included — a split is made only if it leaves at least m training rows on each side.
  Skipped when m ≤ 1, so the default changes nothing; above 1 it only removes the diagrams
  whose splits leave fewer than m rows on a side (the optimum can rise, never fall). Like (20)
  it counts rows, not sample weights.
* sample weights (odtk's, not the paper's; ``sample_weight``, param ``weight[i]`` = ω_i,
  default 1): the error term of (18) becomes the weighted error rate
  (1/Σ_i ω_i) Σ_i ω_i Σ_{v∈C} φ_iv w_iv, which is (18) when every ω_i = 1 and the error
  rate of the data with sample i repeated ω_i times for integer weights; α keeps its
  meaning. The paper weighs no sample, so the side constraints keep counting rows:
  fairness (19) compares counts or rates of rows and stability (20)'s S is a number of rows
  (``min_share`` · n with n = ``|I|``), as is the leaf size m.

Symbols → Pyomo components::

    i, j, l                   sets I (samples), J (features), L (internal layers)
    V, V_l, r, C, A           sets V, VL[l], param root, sets C, A (pairs (u, v))
    arcs out of u / into v    indexed sets OUT[u], IN[v]
    x_ij, φ_iv, class of v    params x[i,j], phi[i,v], cls[v]
    ω_i                       param weight[i] (sample weight, 1 unless given)
    α, ε, M⁻_i, M⁺_i          params alpha, epsilon, big_m_neg[i], big_m_pos[i]
    S1–S3 on or off           param strengthening ('on' | 'off')
    w⁻_iu, w⁺_iu, w_iv        vars w_neg[i,u], w_pos[i,u], w_term[i,v]
    z⁻_iuv, z⁺_iuv            vars z_neg[i,u,v], z_pos[i,u,v]
    λ_il, d_u, y⁻_uv, y⁺_uv    vars lam[i,l], d[u], y_neg[u,v], y_pos[u,v]
    a⁺, a⁻, b, e              vars a_plus[u,j], a_minus[u,j], b[u], e[u,j] (u ∈ U: univariate)
    ξ, S, max_nodes, m        params xi, min_samples, max_nodes, min_leaf; param positive
    g₁, g₂ (within P)         sets GROUPS = {1, 2}, FAIR[g]; param fairness_form
    siblings 2s+1, 2s+2       set SIBLINGS (tree mode)

Departures from the paper and choices:

* (13)–(14) are big-M constraints, not indicator constraints: native indicators do not
  pass through Pyomo's solver interfaces or the standard-form hand-off, so big-M is
  used for every solver. M is derived per sample from the bounds (see ``_reach``):
  M⁻_i = R_i + 1 + ε and M⁺_i = R_i + 1 with R_i = max ``|a·x_i|`` = ‖x_i‖₁ on the box
  (≤ p), ‖x_i‖_∞ under ‖a‖₁ ≤ 1 or with univariate splits (≤ 1). Both are attained at
  feasible points (a node sending all samples positive with a_j = 1 on x_i's support, resp.
  its largest x_ij, and b = −1; for M⁺ the mirror, all negative with b = 1), so no smaller
  M is valid for these bounds and ``strengthening`` leaves it as it is.
* By default (``strengthening="on"``) the model adds S1–S3 (see Options): d and the
  terminal flows w_iv are binary, (5) is an equality, and inactive nodes get (odtk) rows
  that zero their flow and split. None of them changes the optimum (each cuts off only
  points that have an equally good copy meeting it; proofs under Options), only the solve
  time. ``strengthening="off"`` is the paper's model as above.
* ``domain="l1"`` is the authors' ‖a‖₁ ≤ 1 (stated with (13)); the default is the paper's box.
* Univariate splits use binaries e_uj with a_uj ∈ [−1, 1] (the authors' code uses
  a ∈ {−1, 0, 1}); the negative coefficient lets (11) mirror a split. Mirroring
  (a, b) → (−a, ε − b) keeps b ∈ [−1, 1] unless b < −1 + ε, which needs a negative sample
  with a·x < −1 and so only the box allows: there (11)–(12) may cut a split, as in the paper.
* d is continuous in [0, 1] (integral through (6)); the root is fixed active by its bounds.
* (12) is stated for consecutive nodes of a layer, which implies it for every pair, and
  from layer 1 on (the paper starts at layer 2; layer 1 is as interchangeable).
* Tree mode fixes the candidate arcs to the tree, states (7) as an equality and adds
  d_{2s+2} ≤ d_{2s+1}; the authors' code keeps all arcs and caps the in-degree at 1,
  which describes the same trees with more binaries.
* Fairness defaults to the rate form (both directions, rates within groups); the paper's
  (19) is ``fairness_form="counts"``. Equal opportunity and predictive equality are
  either form on the samples with y = 1 and y = 0.
* Stability (20) is stated on w⁻ + w⁺ (the flow through v, which is the paper's inflow
  for v ≠ r) and includes the root, so S > n is infeasible. The authors' code has
  neither fairness, parsimony nor stability.
* Decoding uses the threshold b − ε/2, midway in the gap the model leaves, so every
  training sample follows the side the flow variables give it despite solver tolerances
  as long as ε exceeds them (odtk checks every sample's path against ``flow_rows``).
* ε = 1e-4 as in the paper and the authors' code; α defaults to 0.01 (their optimiser
  defaults to 0, their example uses 0.1).
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo

KEY = "odd"
CITATION = ("Florio, Martins, Schiffer, Serra & Vidal, Optimal Decision Diagrams for "
            "Classification (AAAI 2023), MILP (1)–(20)")
SENSE = "minimize"
FEATURES = "scaled"
BYTES_PER_CELL = 3000  # build memory per row × node × column (measured: 2,700), see odtk.api
OBJECTIVE = ("training error rate + α × (internal nodes − 1) / (skeleton nodes − 1), "
             "minimised")
SKELETON = "diagram"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
SAMPLE_WEIGHT = True  # make_data and objective_of take per-sample weights
HYPERPARAMETERS = {
    "alpha": (0.0, 1.0, 0.01),
    "epsilon": (1e-7, 0.1, 1e-4),
    "xi": (0.0, 1.0, None),
    "max_nodes": (1, 10**6, None),
    "min_samples": (1, 10**6, None),
    "min_share": (0.0, 1.0, None),
    "min_leaf": (1, 10**6, 1),
}
CHOICES = {
    "domain": ("box", "l1"),
    "univariate": (False, True),
    "tree": (False, True),
    "fairness": (None, "demographic_parity", "equal_opportunity", "predictive_equality"),
    "fairness_form": ("rates", "counts"),
    "strengthening": ("on", "off"),
}
# options whose constraints a diagram built without them (e.g. by a heuristic) may violate
SIDE_CONSTRAINTS = ("fairness", "max_nodes", "min_samples", "min_share", "min_leaf")
FAIRNESS_POPULATION = {"demographic_parity": None, "equal_opportunity": 1, "predictive_equality": 0}
POSITIVE_CLASS = 1
A_BOUND = 1.0  # bound on |a_uj| (box) or on ‖a_u‖₁ (l1)
B_BOUND = 1.0  # bound on |b_u|


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


# --------------------------------------------------------------------------- data
def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int, *,
              alpha: float = 0.01, epsilon: float = 1e-4, univariate: bool = False,
              tree: bool = False, domain: str = "box", fairness: str | None = None,
              fairness_form: str = "rates", xi: float | None = None, max_nodes: int | None = None,
              min_samples: int | None = None, min_share: float | None = None,
              group: np.ndarray | None = None, strengthening: str = "on",
              sample_weight: np.ndarray | None = None, min_leaf: int = 1) -> dict:
    """Pyomo data for ``create_instance``: ``X`` scaled to [0, 1] (n × p), ``y`` in ``0..n_classes-1``.

    ``skeleton`` is a layered diagram skeleton (``odtk.skeletons.diagram_skeleton``);
    ``group`` (0/1 per sample: g₁ = the 1s, g₂ = the 0s; or n × 2 0/1 columns g₁, g₂) is
    used only when ``fairness`` is on. S of (20) is ``min_samples`` or ``min_share`` · n;
    ``min_leaf`` is the least number of samples on each side of an active node (1: off).
    ``sample_weight`` weighs each sample's error in (18) (default 1; a positive total).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=int)
    if n_classes < 2:
        raise ValueError(f"ODD needs at least two classes, got {n_classes}.")
    layers = _layers(skeleton)
    if tree and [len(nodes) for nodes in layers] != [2**l for l in range(len(layers))]:
        raise ValueError("tree=True needs a skeleton that doubles at every layer (1-2-4-…).")
    if domain not in CHOICES["domain"]:
        raise ValueError(f"domain must be 'box' or 'l1'; got {domain!r}.")
    if strengthening not in CHOICES["strengthening"]:
        raise ValueError(f"strengthening must be 'on' or 'off'; got {strengthening!r}.")
    terminals = [len(skeleton) + k for k in range(n_classes)]  # the terminal of class k
    samples = range(X.shape[0])
    return {None: {
        **_skeleton_data(layers, terminals, tree),
        "I": {None: list(samples)},
        "J": {None: list(range(X.shape[1]))},
        "x": {(i, j): float(X[i, j]) for i in samples for j in range(X.shape[1])},
        "phi": {(i, t): int(y[i] != k) for i in samples for k, t in enumerate(terminals)},
        "alpha": {None: float(alpha)},
        "epsilon": {None: float(epsilon)},
        "univariate": {None: bool(univariate)},
        "domain": {None: domain},
        "tree": {None: bool(tree)},
        "strengthening": {None: strengthening},
        "positive": {None: terminals[POSITIVE_CLASS]},
        "max_nodes": {None: len(skeleton) if max_nodes is None else int(max_nodes)},
        "min_samples": {None: _stability_bound(len(y), min_samples, min_share)},
        "min_leaf": {None: int(min_leaf)},
        **_fairness_data(y, n_classes, fairness, fairness_form, xi, group),
        **_weight_data(sample_weight),
    }}


def _weight_data(sample_weight: np.ndarray | None) -> dict:
    """The param ``weight`` when sample weights are given (else its default 1 stands)."""
    if sample_weight is None:
        return {}
    if not np.sum(sample_weight) > 0:
        raise ValueError("sample_weight must give some sample a positive weight: (18) divides by "
                         "their total.")
    return {"weight": dict(enumerate(map(float, sample_weight)))}


def _stability_bound(n: int, min_samples: int | None, min_share: float | None) -> float:
    """S of (20): a count of samples, or a share of the n training samples (0 when off)."""
    if min_samples is not None and min_share is not None:
        raise ValueError("Give the stability bound S once: min_samples (a count) "
                         "or min_share (a share of n).")
    if min_share is not None:
        if not 0 <= min_share <= 1:
            raise ValueError(f"min_share is a share of the samples, from 0 to 1; got {min_share!r}.")
        return float(min_share) * n
    return 0.0 if min_samples is None else float(int(min_samples))


def _skeleton_data(layers: list[list[int]], terminals: list[int], tree: bool) -> dict:
    """Node sets, candidate arcs (next layer — the two tree children in tree mode — or any
    terminal) and their incidence."""
    internal = [v for nodes in layers for v in nodes]
    arcs = [(u, v) for l, nodes in enumerate(layers) for u in nodes
            for v in [*_children(layers, l, u, tree), *terminals]]
    return {
        "L": {None: list(range(len(layers)))},
        "V": {None: internal},
        "VL": dict(enumerate(layers)),
        "C": {None: terminals},
        "A": {None: arcs},
        "OUT": {u: [v for uu, v in arcs if uu == u] for u in internal},
        "IN": {v: [u for u, vv in arcs if vv == v] for v in [*internal, *terminals]},
        "ORDER": {None: [] if tree else [pair for nodes in layers[1:] for pair in zip(nodes, nodes[1:])]},
        "SIBLINGS": {None: [(2 * s + 1, 2 * s + 2) for nodes in layers[:-1] for s in nodes]
                     if tree else []},
        "root": {None: layers[0][0]},
        "cls": {t: k for k, t in enumerate(terminals)},
    }


def _children(layers: list[list[int]], l: int, u: int, tree: bool) -> list[int]:
    """Internal nodes that node u of layer l may point to."""
    if l + 1 == len(layers):
        return []
    return [2 * u + 1, 2 * u + 2] if tree else layers[l + 1]


def _layers(skeleton: nx.DiGraph) -> list[list[int]]:
    """Internal nodes of the skeleton, layer by layer; they must be numbered 0, 1, … in that order."""
    depth = 1 + max(layer for _, layer in skeleton.nodes(data="layer"))
    layers = [sorted(v for v, layer in skeleton.nodes(data="layer") if layer == l) for l in range(depth)]
    if [v for nodes in layers for v in nodes] != list(range(len(skeleton))):
        raise ValueError("ODD needs a diagram skeleton: internal nodes 0, 1, … layer by layer.")
    return layers


def _fairness_data(y: np.ndarray, n_classes: int, fairness: str | None, form: str,
                   xi: float | None, group: np.ndarray | None) -> dict:
    """GROUPS, FAIR, fairness_form and xi for (19); no groups when fairness is off."""
    if form not in CHOICES["fairness_form"]:
        raise ValueError(f"fairness_form must be 'rates' or 'counts'; got {form!r}.")
    off = {"GROUPS": {None: []}, "FAIR": {}, "xi": {None: 0.0}, "fairness_form": {None: form}}
    if fairness is None:
        if xi is not None:
            raise ValueError("xi is the fairness ratio: give it together with fairness=….")
        return off
    if fairness not in FAIRNESS_POPULATION:
        raise ValueError(f"fairness must be one of {', '.join(FAIRNESS_POPULATION)}; got {fairness!r}.")
    if n_classes != 2 or xi is None or group is None:
        raise ValueError(f"fairness={fairness!r} needs two classes, a ratio xi and a 0/1 group per sample.")
    label = FAIRNESS_POPULATION[fairness]
    population = np.ones(len(y), bool) if label is None else y == label
    members = _subgroups(np.asarray(group), len(y))
    return {**off, "GROUPS": {None: [1, 2]}, "xi": {None: float(xi)},
            "FAIR": {g: np.flatnonzero(population & members[:, g - 1]).tolist() for g in (1, 2)}}


def _subgroups(group: np.ndarray, n: int) -> np.ndarray:
    """n × 2 membership of g₁, g₂: from a 0/1 vector (g₁ = the 1s, g₂ = the 0s) or from
    n × 2 0/1 columns."""
    if group.ndim == 1:
        group = np.column_stack([group == 1, group == 0]) if np.isin(group, (0, 1)).all() else group
    if group.shape != (n, 2) or not np.isin(group, (0, 1)).all():
        raise ValueError(f"group must hold 0 or 1 for each of the {n} samples "
                         "(or two 0/1 columns, subgroups g₁ and g₂).")
    return group.astype(bool)


# --------------------------------------------------------------------------- decoding
def decode(instance) -> nx.DiGraph:
    """The learned diagram: internal nodes carry ``weights``, ``threshold`` and ``layer``.

    A sample follows the arc with ``outcome=True`` iff ``weights · x >= threshold``
    (the positive side); terminals carry ``label``. Only nodes reachable from the root appear.
    """
    layer = {u: l for l in instance.L for u in instance.VL[l]}
    half_gap = pyo.value(instance.epsilon) / 2
    graph = nx.DiGraph()
    stack, seen = [pyo.value(instance.root)], set()
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u in instance.C:
            graph.add_node(u, label=int(instance.cls[u]))
            continue
        # a feature that is 0 on every row is in no constraint of the box domain: no value, weight 0
        weights = [_clean((instance.a_plus[u, j].value or 0.0) - (instance.a_minus[u, j].value or 0.0))
                   for j in instance.J]
        graph.add_node(u, weights=weights, threshold=pyo.value(instance.b[u]) - half_gap, layer=layer[u])
        for arcs, outcome in ((instance.y_neg, False), (instance.y_pos, True)):
            child = next(v for v in instance.OUT[u] if pyo.value(arcs[u, v]) > 0.5)
            graph.add_edge(u, child, outcome=outcome)
            stack.append(child)
    return graph


def flow_rows(instance) -> dict[int, list[int]]:
    """The samples the solver's flow variables send through each node: through an internal
    node u when w⁻_iu + w⁺_iu = 1, into a terminal v when w_iv = 1 (rounded at ½)."""
    rows = {u: [i for i in instance.I if pyo.value(instance.w_neg[i, u] + instance.w_pos[i, u]) > 0.5]
            for u in instance.V}
    rows.update({v: [i for i in instance.I if pyo.value(instance.w_term[i, v]) > 0.5] for v in instance.C})
    return rows


def _clean(value: float) -> float:
    """Solver noise below 1e-9 as an exact zero (keeps univariate splits univariate)."""
    return 0.0 if abs(value) < 1e-9 else float(value)


def objective_of(graph: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 alpha: float = 0.01, sample_weight: np.ndarray | None = None, **_: Any) -> float:
    """Objective (18) of a decoded diagram whose training predictions are ``predicted``; the
    error rate is weighted by ``sample_weight`` when given.

    The other hyper-parameters do not enter the objective.
    """
    error = float(np.average(np.asarray(predicted) != np.asarray(y), weights=sample_weight))
    non_root = len(skeleton) - 1
    if non_root == 0:
        return error
    internal = sum(1 for _, attrs in graph.nodes(data=True) if "label" not in attrs)
    return error + alpha * max(internal - 1, 0) / non_root


# --------------------------------------------------------------------------- warm start
def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the diagram ``graph`` routing the rows of ``X``.

    ``graph`` follows the decoded convention (``weights``/``threshold`` or a binary
    ``feature`` per internal node, ``label`` at leaves), and its internal nodes carry
    ``layer``. Nodes are renumbered within their layer (in tree mode, to their tree
    positions) and splits mirrored so that (11)–(12) hold; each intercept is re-fitted to the samples routed through its
    node. Side constraints (tree mode, fairness, parsimony, stability, leaf size) are not checked.
    """
    X = np.asarray(X, dtype=float)
    ids = _placement(instance, graph)
    at, goes_true = _route(graph, X)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    if not _strengthened(instance):  # (15) holds at inactive nodes too
        for u in instance.U:
            instance.e[u, instance.J.first()].set_value(1)
    layer = {u: l for l in instance.L for u in instance.VL[l]}
    for node, attrs in graph.nodes(data=True):
        if "label" in attrs:
            for i in np.flatnonzero(at[node]):
                instance.w_term[i, ids[node]].set_value(1)
            continue
        children = {outcome: ids[v] for _, v, outcome in graph.out_edges(node, data="outcome")}
        direction = _direction(attrs, X.shape[1], bool(pyo.value(instance.univariate)), node,
                               pyo.value(instance.domain))
        positive = at[node] & goes_true[node]
        negative = at[node] & ~goes_true[node]
        if children[False] > children[True]:  # mirror the split so that (11) holds
            children, direction = {False: children[True], True: children[False]}, -direction
            positive, negative = negative, positive
        _set_node(instance, ids[node], layer[ids[node]], children, positive, negative,
                  _split(direction, X[positive], X[negative], pyo.value(instance.epsilon), node))


def _placement(instance, graph: nx.DiGraph) -> dict:
    """Model node id of every graph node: internal nodes by layer and in-degree (tree mode:
    by tree position), leaves by class."""
    root = [n for n in graph if graph.in_degree(n) == 0]
    if (len(root) != 1 or graph.nodes[root[0]].get("layer") != 0
            or len(nx.descendants(graph, root[0])) + 1 != len(graph)):
        raise ValueError("The diagram needs one root, at layer 0, from which every node is reachable.")
    by_layer: dict[int, list] = {}
    terminal = {int(instance.cls[t]): t for t in instance.C}
    ids = {}
    for node, attrs in graph.nodes(data=True):
        if "label" in attrs:
            if attrs["label"] not in terminal:
                raise ValueError(f"Leaf {node} predicts class {attrs['label']}, which does not exist.")
            ids[node] = terminal[attrs["label"]]
        elif attrs.get("layer") not in instance.L:
            raise ValueError(f"Internal node {node} needs a layer from 0 to {len(instance.L) - 1}.")
        else:
            by_layer.setdefault(attrs["layer"], []).append(node)
    ids.update(_tree_positions(instance, graph, root[0]) if pyo.value(instance.tree)
               else _layer_positions(instance, graph, by_layer))
    _check_arcs(instance, graph, ids)
    return ids


def _layer_positions(instance, graph: nx.DiGraph, by_layer: dict[int, list]) -> dict:
    """Internal nodes fill their layer's slots by non-increasing in-degree, as (12) asks."""
    ids: dict = {}
    for l, nodes in by_layer.items():
        slots = list(instance.VL[l])
        if len(nodes) > len(slots):
            raise ValueError(f"Layer {l} of the diagram has {len(nodes)} nodes; "
                             f"the skeleton has {len(slots)}.")
        ids.update(zip(sorted(nodes, key=graph.in_degree, reverse=True), slots))
    return ids


def _tree_positions(instance, graph: nx.DiGraph, root) -> dict:
    """Tree mode: the internal children of the node at position s take positions 2s+1, 2s+2."""
    ids, queue = {root: pyo.value(instance.root)}, [root]
    for node in queue:
        arcs = sorted(graph.out_edges(node, data="outcome"), key=lambda arc: arc[2])
        inner = [child for _, child, _ in arcs if "label" not in graph.nodes[child]]
        for k, child in enumerate(inner):
            layer = graph.nodes[child]["layer"]
            if child in ids or 2 * ids[node] + 1 + k not in instance.VL[layer]:
                raise ValueError(f"Node {child} breaks the tree skeleton (two parents, or not "
                                 "one layer below its parent); tree mode needs a tree.")
            ids[child] = 2 * ids[node] + 1 + k
            queue.append(child)
    return ids


def _check_arcs(instance, graph: nx.DiGraph, ids: dict) -> None:
    """Every node has a False and a True arc to distinct skeleton nodes along candidate arcs."""
    for node in graph:
        if "label" in graph.nodes[node]:
            continue
        arcs = {outcome: ids[v] for _, v, outcome in graph.out_edges(node, data="outcome")}
        if graph.out_degree(node) != 2 or set(arcs) != {False, True} or arcs[False] == arcs[True]:
            raise ValueError(f"Node {node} needs a False and a True arc to two different nodes "
                             "(leaves of one class count as the same node).")
        if any((ids[node], v) not in instance.A for v in arcs.values()):
            raise ValueError(f"Node {node} has an arc the skeleton does not allow (next layer or leaf only).")


def _route(graph: nx.DiGraph, X: np.ndarray) -> tuple[dict, dict]:
    """Rows reaching each node, and for internal nodes the rows' test outcomes."""
    at = {node: np.zeros(len(X), bool) for node in graph}
    at[next(n for n in graph if graph.in_degree(n) == 0)][:] = True
    goes_true = {}
    for node in nx.topological_sort(graph):
        attrs = graph.nodes[node]
        if "label" in attrs:
            continue
        if "feature" in attrs:
            goes_true[node] = X[:, attrs["feature"]] > 0.5
        else:
            goes_true[node] = X @ np.asarray(attrs["weights"], float) >= attrs["threshold"]
        for _, child, outcome in graph.out_edges(node, data="outcome"):
            at[child] |= at[node] & (goes_true[node] == outcome)
    return at, goes_true


def _direction(attrs: dict, n_features: int, univariate: bool, node, domain: str) -> np.ndarray:
    """The node's hyperplane direction at the domain's edge: ‖a‖_∞ = 1 (box), ‖a‖₁ = 1 (l1)."""
    if "feature" in attrs:
        return np.eye(n_features)[attrs["feature"]]
    weights = np.asarray(attrs["weights"], float)
    if univariate and np.count_nonzero(weights) > 1:
        raise ValueError(f"Node {node} splits on several features, but the model is univariate.")
    norm = np.abs(weights).max() if domain == "box" else np.abs(weights).sum()
    return weights * (A_BOUND / norm) if norm > 0 else weights


def _split(direction: np.ndarray, X_pos: np.ndarray, X_neg: np.ndarray, epsilon: float,
           node) -> tuple[np.ndarray, float]:
    """Hyperplane (a, b) meeting (13)–(14) for the routed samples; a = 0 when a side is empty.

    a = t · direction with the largest t ≤ 1 (the widest margin) that leaves room for b in [−1, 1].
    """
    if len(X_neg) == 0:
        return np.zeros_like(direction), 0.0
    if len(X_pos) == 0:
        return np.zeros_like(direction), epsilon
    low, high = float(np.max(X_neg @ direction)), float(np.min(X_pos @ direction))
    t = min(1.0, -B_BOUND / high if high < 0 else 1.0, (B_BOUND - epsilon) / low if low > 0 else 1.0)
    b = min(t * high, B_BOUND)
    if t <= 0 or t * low + epsilon > b + 1e-9:
        raise ValueError(f"Node {node} separates its samples by less than ε = {epsilon} "
                         "(after scaling its weights to the split domain).")
    return t * direction, b


def _set_node(instance, u: int, layer: int, children: dict, positive: np.ndarray,
              negative: np.ndarray, split: tuple[np.ndarray, float]) -> None:
    """Values of the variables of active node u and of the flows leaving it."""
    a, b = split
    instance.d[u].set_value(1)
    instance.y_neg[u, children[False]].set_value(1)
    instance.y_pos[u, children[True]].set_value(1)
    instance.b[u].set_value(b)
    for j in instance.J:
        instance.a_plus[u, j].set_value(max(a[j], 0.0))
        instance.a_minus[u, j].set_value(max(-a[j], 0.0))
    if u in instance.U:
        chosen = int(np.argmax(np.abs(a)))
        for j in instance.J:
            instance.e[u, j].set_value(int(j == chosen))
    for rows, w, z, side in ((negative, instance.w_neg, instance.z_neg, False),
                             (positive, instance.w_pos, instance.z_pos, True)):
        for i in np.flatnonzero(rows):
            w[i, u].set_value(1)
            z[i, u, children[side]].set_value(1)
            instance.lam[i, layer].set_value(int(side))
