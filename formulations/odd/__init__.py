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
  puts a lone internal child at 2s+1 (proof at ``model._sibling_order``).
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
  used for every solver. M is derived per sample from the bounds (see ``model._reach``):
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

# The submodules read the constants above: they are imported after them.
from .data import make_data  # noqa: E402
from .decoding import decode, flow_rows, objective_of  # noqa: E402
from .model import build_model  # noqa: E402
from .start import warm_start  # noqa: E402

__all__ = ["KEY", "CITATION", "SENSE", "FEATURES", "BYTES_PER_CELL", "OBJECTIVE", "SKELETON", "SAMPLE_WEIGHT",
           "HYPERPARAMETERS", "CHOICES", "SIDE_CONSTRAINTS", "FAIRNESS_POPULATION", "POSITIVE_CLASS", "A_BOUND",
           "B_BOUND", "build_model", "make_data", "decode", "flow_rows", "objective_of", "warm_start"]
