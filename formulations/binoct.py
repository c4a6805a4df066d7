"""BinOCT: optimal classification trees by a binary linear program.

Citation: S. Verwer, Y. Zhang, "Learning Optimal Classification Trees Using a
Binary Linear Program Formulation", AAAI 2019 (33(01):1625–1632), in the form
the FlowOCT paper (Aghaei, Gómez & Vayanos, "Strong Optimal Classification
Trees", arXiv:2103.15965) compares against: binary 0/1 features, a complete
tree of depth D, maximise the number of correctly classified training samples.
Equation numbers (1)–(11) below count the objective, the constraints and the
variable domains in the order written here; they are not the paper's numbers.

Every branching node n (heap order: root 1, children 2n and 2n+1) tests exactly
one feature j (f_{n,j} = 1). BinOCT never routes a sample node by node; instead
a sample i is assigned to one leaf (l_{i,l} = 1) and the "path" constraints
forbid every leaf that contradicts a test on the way: if n tests j, no sample of
the group {i : x_ij = 1} may sit in a leaf of the left subtree of n, and no
sample of the group {i : x_ij = 0} in a leaf of the right subtree. Each such
constraint is one big-M row per (node, feature, group) whose M is the size of the
group, as in the paper. A leaf predicts one class (p_{l,c}); e_{l,c} counts the
samples of class c in leaf l when l does not predict c. ::

    max  |I| − Σ_{l∈L} Σ_{c∈K} e_{l,c}                                           (1)
    s.t. Σ_{j∈F} f_{n,j} = 1                                 n ∈ B                (2)
         Σ_{l∈L} l_{i,l} = 1                                 i ∈ I                (3)
         M¹_j f_{n,j} + Σ_{i∈I¹_j} Σ_{l∈LL(n)} l_{i,l} ≤ M¹_j   n ∈ B, j ∈ F         (4)
         M⁰_j f_{n,j} + Σ_{i∈I⁰_j} Σ_{l∈RL(n)} l_{i,l} ≤ M⁰_j   n ∈ B, j ∈ F         (5)
         Σ_{c∈K} p_{l,c} = 1                                 l ∈ L                (6)
         Σ_{i∈I_c} l_{i,l} − M_c p_{l,c} ≤ e_{l,c}             l ∈ L, c ∈ K         (7)
         f ∈ {0,1} (8),  p ∈ {0,1} (9),  l ∈ [0,1] (10),  e ≥ 0 (11)

with I^v_j = {i : x_ij = v} (the samples grouped by their value of feature j),
M^v_j = ``|I^v_j|``, I_c = {i : y_i = c}, M_c = ``|I_c|``, and LL(n), RL(n) the leaves
of the left and right subtrees of n. A sample goes left at n iff x_ij = 0
(the cut x_j ≤ 0.5). For integral f, (3)–(5) leave every sample exactly one
feasible leaf (the one its feature values lead to), so l is integral too, and
(7) with the minimisation of e makes Σ e the number of misclassified samples.

Symbols → Pyomo components::

    I, F, K, B, L           sets I (samples), F (features), K (classes), B (branching), L (leaves)
    LL(n), RL(n)            indexed sets LL[n], RL[n] (leaves under 2n and under 2n+1)
    I⁰_j, I¹_j, I_c         indexed sets I0[j], I1[j], IK[c] (the data enter only through them)
    M⁰_j, M¹_j, M_c         params M0[j], M1[j], MK[c] (group sizes, derived from the sets)
    f_{n,j}, l_{i,l}        vars f[n,j], l[i,l]
    p_{l,c}, e_{l,c}        vars p[l,c], e[l,c]

Deviations from the paper:

* Thresholds collapse. BinOCT picks, per node, a feature and a threshold among the
  feature's sorted values, encoded in binary by threshold variables t_{n,·}, with
  one path constraint per (node, feature, value interval) plus the constraints that
  keep the feature's smallest value left and its largest value right. On 0/1 data a
  feature has the single cut x_j ≤ 0.5: no t variable is left, the interval
  constraints vanish, and the smallest/largest-value constraints become (4)–(5).
* Objective: the paper minimises Σ e (misclassifications); odtk maximises
  ``|I|`` − Σ e (correctly classified samples, SENSE = "maximize") so that the value is
  comparable with FlowOCT at λ = 0. The optimal trees are the same.
* No λ and no early stopping: BinOCT has no split penalty (HYPERPARAMETERS is empty)
  and every branching node splits; a decoded tree is complete, and leaves under a
  split that does not help simply predict the same class. At λ = 0 this loses
  nothing against trees that stop early.
* l and e are continuous (l ∈ [0,1], e ≥ 0), as in the authors' implementation;
  both are integral at any integral (f, p).
* A constraint (4) or (5) whose group is empty (a feature constant on the training
  data) is 0 ≤ 0 and is left out.
* The authors' code adds optional extras (fixed top layers from CART, priorities,
  relaxed node constraints); none are part of this formulation. Depth 0 (a single
  leaf, B empty) is allowed.
* Sample weights (odtk's option ``sample_weight``, param ``weight[i]`` = ω_i, default 1):
  ``|I|`` in (1) becomes Σ_i ω_i, Σ_{i∈I_c} l_{i,l} in (7) becomes Σ_{i∈I_c} ω_i l_{i,l} and
  M_c = Σ_{i∈I_c} ω_i, so Σ e is the weight of the misclassified samples.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from .heap_trees import check_start

KEY = "binoct"
CITATION = ("Verwer & Zhang, Learning Optimal Classification Trees Using a Binary Linear "
            "Program Formulation, AAAI 2019 (binary features, as compared in FlowOCT)")
SENSE = "maximize"
OBJECTIVE = "correctly classified training rows (their total weight), maximised"
FEATURES = "binary"
SKELETON = "tree"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS: dict[str, tuple] = {}
CHOICES: dict[str, tuple] = {}
SIDE_CONSTRAINTS: tuple[str, ...] = ()
SAMPLE_WEIGHT = True  # make_data and objective_of take per-sample weights


def build_model() -> pyo.AbstractModel:
    """The abstract BinOCT model (1)–(11) on binary features."""
    m = pyo.AbstractModel(name="BinOCT")
    _sets_and_params(m)
    _variables(m)
    m.objective = pyo.Objective(rule=_objective, sense=pyo.maximize,
                                doc="(1) correctly classified samples: |I| minus the leaf errors")
    _constraints(m)
    return m


def _sets_and_params(m: pyo.AbstractModel) -> None:
    m.I = pyo.Set(ordered=True, doc="training samples")
    m.F = pyo.Set(ordered=True, doc="binary features")
    m.K = pyo.Set(ordered=True, doc="classes")
    m.B = pyo.Set(ordered=True, doc="branching nodes (heap order)")
    m.L = pyo.Set(ordered=True, doc="leaf nodes (heap order)")
    m.LL = pyo.Set(m.B, within=m.L, doc="LL(n): leaves of the left subtree of n (x_j = 0)")
    m.RL = pyo.Set(m.B, within=m.L, doc="RL(n): leaves of the right subtree of n (x_j = 1)")
    m.I0 = pyo.Set(m.F, within=m.I, doc="I⁰_j: samples with x_ij = 0")
    m.I1 = pyo.Set(m.F, within=m.I, doc="I¹_j: samples with x_ij = 1")
    m.IK = pyo.Set(m.K, within=m.I, doc="I_c: samples of class c")
    m.M0 = pyo.Param(m.F, initialize=lambda m, j: len(m.I0[j]), within=pyo.NonNegativeIntegers,
                     doc="M⁰_j = |I⁰_j|, big-M of (5)")
    m.M1 = pyo.Param(m.F, initialize=lambda m, j: len(m.I1[j]), within=pyo.NonNegativeIntegers,
                     doc="M¹_j = |I¹_j|, big-M of (4)")
    m.weight = pyo.Param(m.I, within=pyo.NonNegativeReals, default=1.0,
                         doc="weight ω_i of sample i (1 unless sample weights are given)")
    m.MK = pyo.Param(m.K, initialize=lambda m, c: sum(m.weight[i] for i in m.IK[c]),
                     within=pyo.NonNegativeReals, doc="M_c = Σ_{i∈I_c} ω_i (= |I_c|), big-M of (7)")


def _variables(m: pyo.AbstractModel) -> None:
    m.f = pyo.Var(m.B, m.F, domain=pyo.Binary, doc="(8) node n tests feature j")
    m.p = pyo.Var(m.L, m.K, domain=pyo.Binary, doc="(9) leaf l predicts class c")
    m.l = pyo.Var(m.I, m.L, bounds=(0, 1), doc="(10) sample i is assigned to leaf l")
    m.e = pyo.Var(m.L, m.K, domain=pyo.NonNegativeReals,
                  doc="(11) misclassified samples of class c in leaf l")


def _objective(m):
    return sum(m.weight[i] for i in m.I) - pyo.quicksum(m.e[l, c] for l in m.L for c in m.K)


def _left_path(m, n, j):
    if len(m.I1[j]) == 0 or len(m.LL[n]) == 0:
        return pyo.Constraint.Skip
    inside = pyo.quicksum(m.l[i, l] for i in m.I1[j] for l in m.LL[n])
    return m.M1[j] * m.f[n, j] + inside <= m.M1[j]


def _right_path(m, n, j):
    if len(m.I0[j]) == 0 or len(m.RL[n]) == 0:
        return pyo.Constraint.Skip
    inside = pyo.quicksum(m.l[i, l] for i in m.I0[j] for l in m.RL[n])
    return m.M0[j] * m.f[n, j] + inside <= m.M0[j]


def _leaf_error(m, l, c):
    if len(m.IK[c]) == 0:
        return pyo.Constraint.Skip
    return pyo.quicksum(m.weight[i] * m.l[i, l] for i in m.IK[c]) - m.MK[c] * m.p[l, c] <= m.e[l, c]


def _constraints(m: pyo.AbstractModel) -> None:
    m.one_feature = pyo.Constraint(
        m.B, doc="(2) every branching node tests exactly one feature",
        rule=lambda m, n: pyo.quicksum(m.f[n, j] for j in m.F) == 1)
    m.one_leaf = pyo.Constraint(
        m.I, doc="(3) every sample is assigned to exactly one leaf",
        rule=lambda m, i: pyo.quicksum(m.l[i, l] for l in m.L) == 1)
    m.left_path = pyo.Constraint(
        m.B, m.F, doc="(4) if n tests j, no sample with x_ij = 1 lies in a leaf left of n",
        rule=_left_path)
    m.right_path = pyo.Constraint(
        m.B, m.F, doc="(5) if n tests j, no sample with x_ij = 0 lies in a leaf right of n",
        rule=_right_path)
    m.one_class = pyo.Constraint(
        m.L, doc="(6) every leaf predicts exactly one class",
        rule=lambda m, l: pyo.quicksum(m.p[l, c] for c in m.K) == 1)
    m.leaf_error = pyo.Constraint(
        m.L, m.K, doc="(7) samples of class c in leaf l are errors unless l predicts c",
        rule=_leaf_error)


def _leaves_under(skeleton: nx.DiGraph, node: int) -> list[int]:
    below = nx.descendants(skeleton, node) | {node}
    return sorted(v for v in below if skeleton.out_degree(v) == 0)


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
              sample_weight: np.ndarray | None = None, **_) -> dict:
    """Pyomo data for ``create_instance``: ``X`` 0/1 (n × p), ``y`` in ``0..n_classes-1``,
    ``sample_weight`` each sample's weight in the objective (default 1).

    ``skeleton`` is a complete binary tree in heap order (``odtk.skeletons.tree_skeleton``).
    """
    X = np.asarray(X)
    y = np.asarray(y).astype(int)
    if X.shape[1] == 0:
        raise ValueError("BinOCT's complete tree tests a feature at every branching node, but no "
                         "feature varies in the training data; use flowoct for a single leaf.")
    branching = sorted(n for n in skeleton if skeleton.out_degree(n) > 0)
    leaves = sorted(n for n in skeleton if skeleton.out_degree(n) == 0)
    features = list(range(X.shape[1]))
    ones = X > 0.5
    return {None: {
        "I": {None: list(range(X.shape[0]))},
        "F": {None: features},
        "K": {None: list(range(n_classes))},
        "B": {None: branching},
        "L": {None: leaves},
        "LL": {n: _leaves_under(skeleton, _left(n)) for n in branching},
        "RL": {n: _leaves_under(skeleton, _right(n)) for n in branching},
        "I0": {j: np.flatnonzero(~ones[:, j]).tolist() for j in features},
        "I1": {j: np.flatnonzero(ones[:, j]).tolist() for j in features},
        "IK": {c: np.flatnonzero(y == c).tolist() for c in range(n_classes)},
        **({} if sample_weight is None else {"weight": dict(enumerate(map(float, sample_weight)))}),
    }}


def _left(n: int) -> int:
    return 2 * n


def _right(n: int) -> int:
    return 2 * n + 1


def decode(instance) -> nx.DiGraph:
    """The learned tree: nodes carry ``feature`` (test ``x_f == 1``) or ``label``.

    Arcs carry ``outcome``: ``False`` for the left child (``x_f = 0``), ``True``
    for the right child (``x_f = 1``). BinOCT trees are complete: every branching
    node of the skeleton splits.
    """
    tree = nx.DiGraph()
    branching = set(instance.B)
    stack = [min(list(instance.B) + list(instance.L))]
    while stack:
        n = stack.pop()
        if n in branching:
            feature = max(instance.F, key=lambda j: pyo.value(instance.f[n, j]))
            tree.add_node(n, feature=int(feature))
            for child, outcome in ((_left(n), False), (_right(n), True)):
                tree.add_edge(n, child, outcome=outcome)
                stack.append(child)
        else:
            label = max(instance.K, key=lambda c: pyo.value(instance.p[n, c]))
            tree.add_node(n, label=int(label))
    return tree


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 sample_weight: np.ndarray | None = None, **_) -> float:
    """Objective (1) of a decoded tree: the number (total weight) of correctly classified samples."""
    hits = np.asarray(predicted) == np.asarray(y)
    return float(hits.sum() if sample_weight is None else np.dot(hits, sample_weight))


# --------------------------------------------------------------------------- warm start
def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the tree ``graph`` routing the rows of ``X``.

    ``graph`` follows :func:`decode`'s convention with heap node ids (root 1, children
    2n for x_f = 0 and 2n+1 for x_f = 1); a leaf may sit above the last level. BinOCT
    trees are complete, so an early leaf t becomes a complete subtree whose branching
    nodes test the first feature and whose leaves all predict t's label: the predictions,
    and so the objective, stay those of ``graph``. ``X`` is the 0/1 matrix the instance
    was built from. Raises ValueError when the tree does not fit the skeleton (deeper
    than the instance, node ids off the heap, a label or feature the instance lacks) or
    ``X`` has the wrong shape.
    """
    X = check_start(instance, graph, X)
    branching, leaves = set(instance.B), set(instance.L)
    if branching and not len(instance.F):
        raise ValueError("The instance has no features to split on.")
    feature: dict[int, int] = {}  # the completed tree: every branching node tests a feature
    for n in sorted(branching):
        if n in graph and "feature" in graph.nodes[n]:
            feature[n] = int(graph.nodes[n]["feature"])
        else:
            feature[n] = int(instance.F.first())
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0)
    for n, j in feature.items():
        instance.f[n, j].set_value(1)
    for t in leaves:
        covering = t
        while covering not in graph:  # the early leaf this skeleton leaf completes
            covering //= 2
        instance.p[t, int(graph.nodes[covering]["label"])].set_value(1)
    predicted = {t: max(instance.K, key=lambda c: pyo.value(instance.p[t, c])) for t in leaves}
    for c in instance.K:
        for i in instance.IK[c]:
            t = 1
            while t in branching:
                t = _right(t) if X[i, feature[t]] > 0.5 else _left(t)
            instance.l[i, t].set_value(1)
            if predicted[t] != c:
                instance.e[t, c].set_value(pyo.value(instance.e[t, c]) + pyo.value(instance.weight[i]))
