"""OCT: the optimal classification tree MIO of Bertsimas & Dunn, on binary features.

Citation: D. Bertsimas, J. Dunn, "Optimal classification trees", Machine Learning
106(7):1039–1082, 2017, problem (24) (the univariate OCT model), specialised to 0/1
features as S. Aghaei, A. Gómez, P. Vayanos do when they compare it with FlowOCT
("Learning Optimal Classification Trees: Strong Max-Flow Formulations", arXiv:2002.09142,
§2.2 and online companion A; journal version "Strong Optimal Classification Trees",
arXiv:2103.15965). Equation numbers (24.1)–(24.17) count the objective and the
constraints of problem (24) in the order printed in the paper; (3) is Aghaei et al.'s.

A complete binary tree of depth D has branching nodes B and leaves L (heap order: root
1, children 2t, 2t+1). Branching node t splits (d_t = 1) on the feature selected by
a_t; a sample goes left iff a_t·x_i < b_t, so a node that does not split (a_t = 0,
b_t = 0) sends every sample right. z_it assigns sample i to leaf t, l_t marks the
leaves that hold samples, c_kt gives leaf t the label k, and L_t counts the samples
leaf t misclassifies. With the objective convention of FlowOCT the model is ::

    max  (1-λ) Σ_{t∈L} (N_t − L_t)  −  λ Σ_{t∈B} d_t                                  (24.1)
    s.t. L_t ≥ N_t − N_kt − n (1 − c_kt)                   k ∈ K, t ∈ L              (24.2)
         L_t ≤ N_t − N_kt + n c_kt                         k ∈ K, t ∈ L              (24.3)
         L_t ≥ 0                                           t ∈ L                     (24.4)
         N_kt = Σ_{i: y_i = k} z_it                        k ∈ K, t ∈ L              (24.5)
         N_t = Σ_i z_it                                    t ∈ L                     (24.6)
         Σ_k c_kt = l_t                                    t ∈ L                     (24.7)
         z_it ≤ Σ_{j: x_ij = 0} a_jm                       i ∈ I, t ∈ L, m ∈ A_L(t)  (24.8)
         z_it ≤ 1 − Σ_{j: x_ij = 0} a_jm                   i ∈ I, t ∈ L, m ∈ A_R(t)  (24.9)
         Σ_{t∈L} z_it = 1                                  i ∈ I                     (24.10)
         z_it ≤ l_t                                        i ∈ I, t ∈ L              (24.11)
         Σ_i z_it ≥ N_min l_t                              t ∈ L                     (24.12)
         Σ_j a_jt = d_t                                    t ∈ B                     (24.13)
         (0 ≤ b_t ≤ d_t: b_t = d_t, see Deviations)        t ∈ B                     (24.14)
         d_t ≤ d_{p(t)}                                    t ∈ B \\ {1}               (24.15)
         z_it, l_t ∈ {0,1} (24.16);   a_jt, d_t ∈ {0,1} (24.17);   c_kt ∈ {0,1}

Here n = ``|I|`` (Σ_i ω_i with sample weights, see Deviations), A_L(t) / A_R(t) are the
ancestors of t whose left / right branch leads to t, and N_t − L_t is the number of samples
of leaf t that it classifies correctly (L_t = N_t − N_kt exactly for the chosen label k, by
(24.2)–(24.3)).

Branching constraints (option ``branching``). ``aggregated`` (the default) is (24.8)–(24.9)
above: one row per sample, leaf and ancestor. ``disaggregated`` is the form Aghaei et al.
compare FlowOCT with (their constraint (3), §2.2.2): one row per sample, leaf, ancestor
and feature the sample would be sent the wrong way by, ::

         z_it ≤ 1 − a_jm                i ∈ I, t ∈ L, m ∈ A_L(t), j: x_ij = 1      (3)
         z_it ≤ 1 − a_jm                i ∈ I, t ∈ L, m ∈ A_R(t), j: x_ij = 0      (3), mirrored
         z_it ≤ d_m                     i ∈ I, t ∈ L, m ∈ A_L(t)                   (24.8), a_m = 0

The last row is the part of (24.8) that (3) leaves out: a node that does not split
(a_m = 0, b_m = 0) sends no sample left. Both forms admit exactly the same integral trees;
the aggregated rows imply the disaggregated ones (Σ_{j: x_ij=0} a_jm = d_m − Σ_{j: x_ij=1}
a_jm ≤ 1 − a_jm for every j with x_ij = 1, and ≤ d_m), so the aggregated LP relaxation is
at least as tight. Aghaei et al. show that FlowOCT's (1.7)–(1.8) dominate (3).

Symbols → Pyomo components::

    I, J, K, B, L           sets I (samples), F (binary features), K, B, L (heap order)
    A_L(t), A_R(t)          set AL / AR of pairs (t, m), m a left / right ancestor of t
    rows of (3)             sets DL / DR of (i, t, m, j) (empty unless disaggregated)
    p(t)                    param parent[t] (t ∈ B \\ {1}, set BP)
    {j: x_ij = 0}, {j: x_ij = 1}   indexed sets F0[i] (the data x enter only through it), F1[i]
    {i: y_i = k}            indexed set IK[k]
    n, N_min, λ, ω_i        params n, min_leaf, lam, weight[i]; the option: param branching
    a_jt, d_t               vars a[t,j], d[t]
    z_it, l_t, c_kt         vars z[i,t], l[t], c[t,k]
    N_kt, N_t, L_t          vars Nk[t,k], Nt[t], Lt[t]

Deviations:

* Objective: the paper minimises (1/L̂) Σ_t L_t + α Σ_t d_t (L̂ the baseline error).
  Here, as in FlowOCT, (1−λ)·(correctly classified samples) − λ·(splits) is
  maximised; Σ_t (N_t − L_t) = n − Σ_t L_t, so for λ < 1 this is the paper's objective
  with α = λ / ((1−λ) L̂), up to sign and a constant.
* Binary features (as in Aghaei et al.): every split tests one 0/1 feature, left iff
  x_j = 0. The threshold is fixed to b_t = d_t (1 for a split, 0 otherwise), which
  satisfies (24.14) and removes b; with ε = 1 (the gap between distinct feature
  values) the paper's big-M split constraints a_m·(x_i + ε) ≤ b_m + (1 + ε_max)(1 − z_it)
  and a_m·x_i ≥ b_m − (1 − z_it) admit exactly the 0/1 points of (24.8)–(24.9), which
  are written without big-M: with Σ_j a_jm = d_m, Σ_{j: x_ij=0} a_jm = d_m − a_m·x_i.
  A node that does not split (d_m = 0) still sends every sample right, as in the paper.
* N_kt uses {i: y_i = k} for the paper's ½ Σ_i (1 + Y_ik) (Y_ik = ±1).
* N_min (``min_leaf``) defaults to 1: it only makes l_t = 1 exactly for non-empty leaves
  and excludes no tree, so the optimum is that of unrestricted trees of depth ≤ D.
* A tree of depth 0 (a single leaf) is allowed; then B is empty.
* Sample weights (odtk's option ``sample_weight``, param ``weight[i]`` = ω_i, default 1): the
  counts of the objective become weights, N_kt = Σ_{i: y_i = k} ω_i z_it in (24.5) and
  N_t = Σ_i ω_i z_it in (24.6), so L_t is the weight leaf t misclassifies and (24.1) the
  weight of the correctly classified samples; the big-M n of (24.2)–(24.3) becomes Σ_i ω_i
  (and the paper's L̂ the weighted baseline error). N_min keeps counting rows: (24.12) is
  stated on Σ_i z_it, as printed, not on N_t — the convention of scikit-learn's
  ``min_samples_leaf`` (rows), not of its ``min_weight_fraction_leaf``.

Decoding: the splits with d_t = 1 form a subtree containing the root (24.15); a
branching node with d_t = 0 becomes a leaf predicting the label of the leaf its
samples reach (its right-most descendant leaf). Leaves that no training sample
reaches (l_t = 0, no label) predict class 0.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from .heap_trees import check_start, paths

KEY = "oct"
CITATION = ("Bertsimas & Dunn, Optimal classification trees, Machine Learning 106 (2017), "
            "problem (24), on binary features as in Aghaei, Gómez & Vayanos")
SENSE = "maximize"
OBJECTIVE = "(1 − λ) × correctly classified training rows − λ × splits, maximised"
FEATURES = "binary"
SKELETON = "tree"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS = {"lam": (0.0, 1.0, 0.0), "min_leaf": (0, 1_000_000, 1)}
CHOICES: dict[str, tuple] = {"branching": ("aggregated", "disaggregated")}
# options whose constraints a start tree built without them (e.g. CART) may violate
SIDE_CONSTRAINTS = ("min_leaf",)
SAMPLE_WEIGHT = True  # make_data and objective_of take per-sample weights


def build_model() -> pyo.AbstractModel:
    """The abstract OCT model (24.1)–(24.17) on binary features."""
    m = pyo.AbstractModel(name="OCT")
    _sets_and_params(m)
    _variables(m)
    m.objective = pyo.Objective(rule=_objective, sense=pyo.maximize,
                                doc="(24.1) correctly classified samples minus λ times splits")
    _constraints(m)
    return m


def _sets_and_params(m: pyo.AbstractModel) -> None:
    m.I = pyo.Set(ordered=True, doc="training samples")
    m.F = pyo.Set(ordered=True, doc="binary features")
    m.K = pyo.Set(ordered=True, doc="classes")
    m.B = pyo.Set(ordered=True, doc="branching nodes (heap order)")
    m.L = pyo.Set(ordered=True, doc="leaf nodes (heap order)")
    m.BP = pyo.Set(within=m.B, ordered=True, doc="branching nodes other than the root")
    m.AL = pyo.Set(dimen=2, within=m.L * m.B, ordered=True,
                   doc="pairs (t, m): m ∈ A_L(t), leaf t lies in the left subtree of m")
    m.AR = pyo.Set(dimen=2, within=m.L * m.B, ordered=True,
                   doc="pairs (t, m): m ∈ A_R(t), leaf t lies in the right subtree of m")
    m.F0 = pyo.Set(m.I, within=m.F, doc="features with x_ij = 0")
    m.F1 = pyo.Set(m.I, within=m.F, initialize=lambda m, i: [j for j in m.F if j not in m.F0[i]],
                   doc="features with x_ij = 1")
    m.IK = pyo.Set(m.K, within=m.I, doc="samples of class k")
    m.parent = pyo.Param(m.BP, within=m.B, doc="parent p(t) of branching node t")
    m.weight = pyo.Param(m.I, within=pyo.NonNegativeReals, default=1.0,
                         doc="weight ω_i of sample i (1 unless sample weights are given)")
    m.n = pyo.Param(within=pyo.NonNegativeReals, initialize=lambda m: sum(m.weight[i] for i in m.I),
                    doc="n = Σ_i ω_i (= |I|), the big-M of (24.2)–(24.3)")
    m.min_leaf = pyo.Param(within=pyo.NonNegativeIntegers, default=1,
                           doc="N_min: fewest samples in a non-empty leaf")
    m.lam = pyo.Param(within=pyo.UnitInterval, default=0.0, doc="regularisation weight λ")
    m.branching = pyo.Param(within=pyo.Any, default="aggregated",
                            doc="branching constraints: aggregated (24.8)–(24.9) or disaggregated (3)")
    m.DL = pyo.Set(dimen=4, ordered=True, doc="rows (i, t, m, j) of (3): m ∈ A_L(t), x_ij = 1",
                   initialize=lambda m: _disaggregated(m, m.AL, m.F1))
    m.DR = pyo.Set(dimen=4, ordered=True, doc="rows (i, t, m, j) of mirrored (3): m ∈ A_R(t), x_ij = 0",
                   initialize=lambda m: _disaggregated(m, m.AR, m.F0))


def _disaggregated(m, pairs, features) -> list:
    """The rows (i, t, m, j) of (3) over ancestor ``pairs``, j in ``features[i]`` (none if aggregated)."""
    if m.branching.value != "disaggregated":
        return []
    return [(i, t, a, j) for i in m.I for t, a in pairs for j in features[i]]


def _variables(m: pyo.AbstractModel) -> None:
    m.a = pyo.Var(m.B, m.F, domain=pyo.Binary, doc="(24.17) a_jt: node t splits on feature j")
    m.d = pyo.Var(m.B, domain=pyo.Binary, doc="(24.17) d_t: node t splits")
    m.z = pyo.Var(m.I, m.L, domain=pyo.Binary, doc="(24.16) z_it: sample i is in leaf t")
    m.l = pyo.Var(m.L, domain=pyo.Binary, doc="(24.16) l_t: leaf t holds samples")
    m.c = pyo.Var(m.L, m.K, domain=pyo.Binary, doc="c_kt: leaf t predicts class k")
    m.Nk = pyo.Var(m.L, m.K, domain=pyo.NonNegativeReals,
                   doc="N_kt: samples (weight) of class k in leaf t")
    m.Nt = pyo.Var(m.L, domain=pyo.NonNegativeReals, doc="N_t: samples (weight) in leaf t")
    m.Lt = pyo.Var(m.L, domain=pyo.NonNegativeReals,
                   doc="(24.4) L_t: samples (weight) leaf t misclassifies")


def _objective(m):
    correct = sum(m.Nt[t] - m.Lt[t] for t in m.L)
    splits = sum(m.d[t] for t in m.B)
    return (1 - m.lam) * correct - m.lam * splits


def _constraints(m: pyo.AbstractModel) -> None:
    m.loss_lower = pyo.Constraint(
        m.L, m.K, doc="(24.2) L_t is at least the samples not of the predicted class",
        rule=lambda m, t, k: m.Lt[t] >= m.Nt[t] - m.Nk[t, k] - m.n * (1 - m.c[t, k]))
    m.loss_upper = pyo.Constraint(
        m.L, m.K, doc="(24.3) L_t is at most the samples not of the predicted class",
        rule=lambda m, t, k: m.Lt[t] <= m.Nt[t] - m.Nk[t, k] + m.n * m.c[t, k])
    m.class_count = pyo.Constraint(
        m.L, m.K, doc="(24.5) N_kt counts (weighs) the samples of class k in leaf t",
        rule=lambda m, t, k: m.Nk[t, k] == sum(m.weight[i] * m.z[i, t] for i in m.IK[k]))
    m.leaf_count = pyo.Constraint(
        m.L, doc="(24.6) N_t counts (weighs) the samples in leaf t",
        rule=lambda m, t: m.Nt[t] == sum(m.weight[i] * m.z[i, t] for i in m.I))
    m.one_label = pyo.Constraint(
        m.L, doc="(24.7) a leaf holding samples predicts exactly one class",
        rule=lambda m, t: sum(m.c[t, k] for k in m.K) == m.l[t])
    _branching(m)
    m.one_leaf = pyo.Constraint(
        m.I, doc="(24.10) every sample is in exactly one leaf",
        rule=lambda m, i: sum(m.z[i, t] for t in m.L) == 1)
    m.leaf_used = pyo.Constraint(
        m.I, m.L, doc="(24.11) samples only in leaves marked as holding samples",
        rule=lambda m, i, t: m.z[i, t] <= m.l[t])
    m.min_samples = pyo.Constraint(
        m.L, doc="(24.12) a leaf holding samples holds at least N_min of them (rows, unweighted)",
        rule=_min_samples)
    m.one_feature = pyo.Constraint(
        m.B, doc="(24.13) a splitting node tests exactly one feature",
        rule=lambda m, t: sum(m.a[t, j] for j in m.F) == m.d[t])
    m.hierarchy = pyo.Constraint(
        m.BP, doc="(24.15) a node splits only if its parent splits",
        rule=lambda m, t: m.d[t] <= m.d[m.parent[t]])


def _min_samples(m, t):
    """(24.12) Σ_i z_it ≥ N_min l_t: N_min counts rows, whatever the sample weights."""
    if pyo.value(m.min_leaf) == 0:
        return pyo.Constraint.Skip
    return sum(m.z[i, t] for i in m.I) >= m.min_leaf * m.l[t]


def _route_left(m, i, t, a):
    if m.branching.value != "aggregated":
        return pyo.Constraint.Skip
    return m.z[i, t] <= sum(m.a[a, j] for j in m.F0[i])


def _route_right(m, i, t, a):
    if m.branching.value != "aggregated":
        return pyo.Constraint.Skip
    return m.z[i, t] <= 1 - sum(m.a[a, j] for j in m.F0[i])


def _left_split(m, i, t, a):
    if m.branching.value != "disaggregated":
        return pyo.Constraint.Skip
    return m.z[i, t] <= m.d[a]


def _branching(m: pyo.AbstractModel) -> None:
    """The routing rows: (24.8)–(24.9) aggregated, or (3) per feature with (24.8) for a_m = 0."""
    m.route_left = pyo.Constraint(
        m.I, m.AL, rule=_route_left,
        doc="(24.8) a sample reaches a leaf left of ancestor m only if its split feature is 0")
    m.route_right = pyo.Constraint(
        m.I, m.AR, rule=_route_right,
        doc="(24.9) a sample reaches a leaf right of ancestor m unless its split feature is 0")
    m.left_split = pyo.Constraint(
        m.I, m.AL, rule=_left_split,
        doc="(24.8) with a_m = 0: a sample reaches a leaf left of ancestor m only if m splits")
    m.left_feature = pyo.Constraint(
        m.DL, doc="(3) a sample reaches a leaf left of ancestor m only if m splits on none of its 1-features",
        rule=lambda m, i, t, a, j: m.z[i, t] <= 1 - m.a[a, j])
    m.right_feature = pyo.Constraint(
        m.DR, doc="(3) mirrored: a sample reaches a leaf right of ancestor m only if m splits on none of "
                  "its 0-features", rule=lambda m, i, t, a, j: m.z[i, t] <= 1 - m.a[a, j])


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
              lam: float = 0.0, min_leaf: int = 1, branching: str = "aggregated",
              sample_weight: np.ndarray | None = None) -> dict:
    """Pyomo data for ``create_instance``: ``X`` 0/1 (n × p), ``y`` in ``0..n_classes-1``,
    ``sample_weight`` each sample's weight in the objective (default 1).

    ``skeleton`` is a complete binary tree in heap order (``odtk.skeletons.tree_skeleton``);
    ``branching`` is one of ``CHOICES["branching"]``; ``min_leaf`` counts rows.
    """
    X = np.asarray(X)
    y = np.asarray(y).astype(int)
    samples = list(range(X.shape[0]))
    if int(min_leaf) > len(samples):
        raise ValueError(f"min_leaf={min_leaf} exceeds the {len(samples)} training samples; "
                         "no tree can satisfy it.")
    if branching not in CHOICES["branching"]:
        raise ValueError(f"branching must be one of {', '.join(CHOICES['branching'])}; got {branching!r}.")
    splitting = sorted(n for n in skeleton if skeleton.out_degree(n) > 0)
    leaves = sorted(n for n in skeleton if skeleton.out_degree(n) == 0)
    left_pairs: list[tuple[int, int]] = []
    right_pairs: list[tuple[int, int]] = []
    for t in leaves:
        node = t
        while node > 1:  # walk up: node is the left (even) or right (odd) child of node // 2
            (right_pairs if node % 2 else left_pairs).append((t, node // 2))
            node //= 2
    zeros = X <= 0.5
    return {None: {
        "I": {None: samples},
        "F": {None: list(range(X.shape[1]))},
        "K": {None: list(range(n_classes))},
        "B": {None: splitting},
        "L": {None: leaves},
        "BP": {None: [t for t in splitting if t > 1]},
        "AL": {None: left_pairs},
        "AR": {None: right_pairs},
        "F0": {i: np.flatnonzero(zeros[i]).tolist() for i in samples},
        "IK": {k: np.flatnonzero(y == k).tolist() for k in range(n_classes)},
        "parent": {t: t // 2 for t in splitting if t > 1},
        "min_leaf": {None: int(min_leaf)},
        "lam": {None: float(lam)},
        "branching": {None: branching},
        **({} if sample_weight is None else {"weight": dict(enumerate(map(float, sample_weight)))}),
    }}


def _label(instance, t) -> int:
    """Class of leaf t (0 when no training sample reaches it and it carries none)."""
    if pyo.value(instance.l[t]) < 0.5:
        return 0
    return int(max(instance.K, key=lambda k: pyo.value(instance.c[t, k])))


def decode(instance) -> nx.DiGraph:
    """The learned tree: nodes carry ``feature`` (test ``x_f == 1``) or ``label``.

    Arcs carry ``outcome``: ``False`` for the left child (``x_f = 0``), ``True``
    for the right child (``x_f = 1``). Only nodes reachable from the root appear.
    """
    tree = nx.DiGraph()
    branching = set(instance.B)
    stack = [1]
    while stack:
        n = stack.pop()
        split = ([f for f in instance.F if pyo.value(instance.a[n, f]) > 0.5]
                 if n in branching and pyo.value(instance.d[n]) > 0.5 else [])
        if split:
            tree.add_node(n, feature=int(split[0]))
            for child, outcome in ((2 * n, False), (2 * n + 1, True)):
                tree.add_edge(n, child, outcome=outcome)
                stack.append(child)
        else:
            leaf = n
            while leaf in branching:  # a node that does not split sends every sample right
                leaf = 2 * leaf + 1
            tree.add_node(n, label=_label(instance, leaf))
    return tree


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 lam: float = 0.0, sample_weight: np.ndarray | None = None, **_) -> float:
    """Objective (24.1) of a decoded tree whose training predictions are ``predicted``
    (correct samples counted, or weighed by ``sample_weight``)."""
    hits = np.asarray(predicted) == np.asarray(y)
    correct = int(hits.sum()) if sample_weight is None else float(np.dot(hits, sample_weight))
    splits = sum(1 for _, attrs in tree.nodes(data=True) if "feature" in attrs)
    return (1 - lam) * correct - lam * splits


# --------------------------------------------------------------------------- warm start
def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the tree ``graph`` routing the rows of ``X``.

    ``graph`` follows :func:`decode`'s convention with heap node ids (root 1, children
    2n for x_f = 0 and 2n+1 for x_f = 1); a leaf may sit above the last level. Such an
    early leaf t becomes d = 0 (and a = 0) on t's branching descendants, which send its
    samples to the right-most skeleton leaf below t; the other leaves below t stay empty
    (l = 0, c = 0), as do leaves no sample reaches. ``X`` is the 0/1 matrix the instance
    was built from.

    (24.2)–(24.3) force a non-empty leaf to predict a (weighted) majority class of its
    samples: a leaf whose label is not one is loaded with the majority class instead (the
    smallest such index), so the loaded objective is then above the tree's ``objective_of``.
    (24.12) is not checked: with ``min_leaf`` > 1 a leaf holding fewer samples makes the
    start infeasible. Raises ValueError when the tree does not fit the skeleton (deeper
    than the instance, node ids off the heap, a label or feature the instance lacks) or
    ``X`` has the wrong shape.
    """
    X = check_start(instance, graph, X)
    branching = set(instance.B)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0)
    for n, attrs in graph.nodes(data=True):
        if "feature" in attrs:
            instance.d[n].set_value(1)
            instance.a[n, attrs["feature"]].set_value(1)
    y = {i: k for k in instance.K for i in instance.IK[k]}
    members: dict[int, list] = {}  # skeleton leaf -> samples
    label: dict[int, int] = {}  # skeleton leaf -> label of the tree leaf whose samples it holds
    for i, path in zip(instance.I, paths(graph, X)):
        n = t = path[-1]
        while t in branching:  # a node that does not split sends every sample right
            t = 2 * t + 1
        members.setdefault(t, []).append(i)
        label[t] = int(graph.nodes[n]["label"])
    for t, samples in members.items():
        counts = {k: 0.0 for k in instance.K}  # (24.5): the weight of each class in leaf t
        for i in samples:
            instance.z[i, t].set_value(1)
            counts[y[i]] += instance.weight[i]
        best = max(counts.values())
        k = label[t] if counts[label[t]] == best else next(k for k in instance.K if counts[k] == best)
        instance.l[t].set_value(1)
        instance.c[t, k].set_value(1)
        instance.Nt[t].set_value(sum(counts.values()))
        for kk, count in counts.items():
            instance.Nk[t, kk].set_value(count)
        instance.Lt[t].set_value(sum(counts.values()) - best)
