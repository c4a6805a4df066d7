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

# The submodules read the constants above: they are imported after them.
from .data import cart_groups, configured, make_data, topology  # noqa: E402
from .decoding import decode, objective_of, rates_of, tree_of  # noqa: E402
from .model import build_model  # noqa: E402
from .start import warm_start  # noqa: E402

__all__ = ["KEY", "CITATION", "SENSE", "FEATURES", "OBJECTIVE", "SKELETON", "HYPERPARAMETERS", "CHOICES",
           "CONFIGURATIONS", "SIDE_CONSTRAINTS", "IMPROVEMENTS", "POSITIVE", "SAMPLE_WEIGHT", "build_model",
           "make_data", "topology", "cart_groups", "configured", "decode", "tree_of", "objective_of", "rates_of",
           "warm_start"]
