"""FlowOCT: the strong max-flow formulation of optimal classification trees.

Citation: S. Aghaei, A. Gómez, P. Vayanos, "Strong Optimal Classification Trees"
(arXiv:2103.15965; first circulated as "Learning Optimal Classification Trees:
Strong Max-Flow Formulations", arXiv:2002.09142), formulation (1). Equation
numbers (1.1)–(1.13) below count the objective and the constraints of that
formulation in the order printed in the paper.

Every sample ``i`` is a unit of flow from a source ``s`` into the root; at a
branching node it continues to the child selected by the tested binary
feature, and it may leave to the sink ``t`` only at a node that predicts its
class. The number of samples that reach the sink is the number of training
samples classified correctly.

    max  (1-λ) Σ_i Σ_{n∈B∪L} z^i_{n,t}  −  λ Σ_{n∈B} Σ_f b_{nf}                    (1.1)
    s.t. Σ_f b_{nf} + p_n + Σ_{m∈A(n)} p_m = 1                  n ∈ B               (1.2)
         p_n + Σ_{m∈A(n)} p_m = 1                               n ∈ L               (1.3)
         z^i_{a(n),n} = z^i_{n,l(n)} + z^i_{n,r(n)} + z^i_{n,t}  n ∈ B, i ∈ I        (1.4)
         z^i_{a(n),n} = z^i_{n,t}                               n ∈ L, i ∈ I        (1.5)
         z^i_{s,1} ≤ 1                                          i ∈ I               (1.6)
         z^i_{n,l(n)} ≤ Σ_{f: x^i_f = 0} b_{nf}                  n ∈ B, i ∈ I        (1.7)
         z^i_{n,r(n)} ≤ Σ_{f: x^i_f = 1} b_{nf}                  n ∈ B, i ∈ I        (1.8)
         z^i_{n,t} ≤ w_{n,y^i}                                  n ∈ B∪L, i ∈ I      (1.9)
         Σ_k w_{nk} = p_n                                       n ∈ B∪L             (1.10)
         w ∈ {0,1} (1.11),  b ∈ {0,1} (1.12),  p ∈ {0,1} (1.13),  z ∈ [0,1]

As the paper notes, the flow variables ``z`` may be relaxed to [0, 1]: for
integral ``b``, ``p``, ``w`` every sample has a single path and the max-flow is
integral.

Symbols → Pyomo components:

    I, F, K, B, L         sets I, F, K, B, L (nodes in heap order: root 1, children 2n, 2n+1)
    A(n)                  indexed set A[n], the ancestors of n
    {f: x^i_f = 0 / 1}    indexed sets F0[i], F1[i] (the data x enters only through them)
    y^i, λ                params y[i], lam
    b_{nf}, p_n, w_{nk}   vars b[n,f], p[n], w[n,k]
    z^i_{a(n),n}          var z[i,n]  (flow on the arc into n; for the root, from the source)
    z^i_{n,t}             var z_sink[i,n]

Deviation: none. A tree of depth 0 (a single leaf) is allowed; then B is empty.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from .heap_trees import check_start, paths

KEY = "flowoct"
CITATION = "Aghaei, Gómez & Vayanos, Strong Optimal Classification Trees, formulation (1)"
SENSE = "maximize"
FEATURES = "binary"
SKELETON = "tree"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS = {"lam": (0.0, 1.0, 0.0)}
CHOICES: dict[str, tuple] = {}
SIDE_CONSTRAINTS: tuple[str, ...] = ()


def build_model() -> pyo.AbstractModel:
    """The abstract FlowOCT model (1.1)–(1.13)."""
    m = pyo.AbstractModel(name="FlowOCT")
    sets_and_params(m)
    _variables(m)
    m.objective = pyo.Objective(rule=_objective, sense=pyo.maximize,
                                doc="(1.1) correctly classified samples minus λ times splits")
    _constraints(m)
    return m


def sets_and_params(m: pyo.AbstractModel) -> None:
    """Samples, features, classes, the tree's nodes and the data (shared with BendersOCT)."""
    m.I = pyo.Set(ordered=True, doc="training samples")
    m.F = pyo.Set(ordered=True, doc="binary features")
    m.K = pyo.Set(ordered=True, doc="classes")
    m.B = pyo.Set(ordered=True, doc="branching nodes")
    m.L = pyo.Set(ordered=True, doc="leaf nodes")
    m.N = pyo.Set(initialize=lambda m: list(m.B) + list(m.L), ordered=True, doc="B ∪ L")
    m.A = pyo.Set(m.N, within=m.N, doc="ancestors A(n) of node n")
    m.F0 = pyo.Set(m.I, within=m.F, doc="features with x^i_f = 0")
    m.F1 = pyo.Set(m.I, within=m.F, doc="features with x^i_f = 1")
    m.y = pyo.Param(m.I, within=m.K, doc="class y^i of sample i")
    m.lam = pyo.Param(within=pyo.UnitInterval, default=0.0, doc="regularisation weight λ")


def tree_variables(m: pyo.AbstractModel, numbers: tuple[str, str, str] = ("1.12", "1.13", "1.11")) -> None:
    """The tree's binaries ``b``, ``p``, ``w`` (integrality numbered ``numbers``)."""
    m.b = pyo.Var(m.B, m.F, domain=pyo.Binary, doc=f"({numbers[0]}) node n splits on feature f")
    m.p = pyo.Var(m.N, domain=pyo.Binary, doc=f"({numbers[1]}) node n predicts a class")
    m.w = pyo.Var(m.N, m.K, domain=pyo.Binary, doc=f"({numbers[2]}) node n predicts class k")


def _variables(m: pyo.AbstractModel) -> None:
    tree_variables(m)
    m.z = pyo.Var(m.I, m.N, bounds=(0, 1), doc="flow z^i_{a(n),n} on the arc into node n")
    m.z_sink = pyo.Var(m.I, m.N, bounds=(0, 1), doc="flow z^i_{n,t} from node n to the sink")


def left(n: int) -> int:
    """Left child (x_f = 0) of node n in heap order."""
    return 2 * n


def right(n: int) -> int:
    """Right child (x_f = 1) of node n in heap order."""
    return 2 * n + 1


def _objective(m):
    correct = sum(m.z_sink[i, n] for i in m.I for n in m.N)
    splits = sum(m.b[n, f] for n in m.B for f in m.F)
    return (1 - m.lam) * correct - m.lam * splits


def tree_constraints(m: pyo.AbstractModel, numbers: tuple[str, str, str] = ("1.2", "1.3", "1.10")) -> None:
    """The tree structure on ``b``, ``p``, ``w``: (1.2), (1.3), (1.10) (numbered ``numbers``)."""
    m.branch_or_predict = pyo.Constraint(
        m.B, doc=f"({numbers[0]}) a branching node splits or predicts, unless an ancestor predicts",
        rule=lambda m, n: sum(m.b[n, f] for f in m.F) + m.p[n] + sum(m.p[a] for a in m.A[n]) == 1)
    m.leaf_predicts = pyo.Constraint(
        m.L, doc=f"({numbers[1]}) a leaf predicts unless an ancestor predicts",
        rule=lambda m, n: m.p[n] + sum(m.p[a] for a in m.A[n]) == 1)
    m.one_label = pyo.Constraint(
        m.N, doc=f"({numbers[2]}) a predicting node carries exactly one class",
        rule=lambda m, n: sum(m.w[n, k] for k in m.K) == m.p[n])


def _constraints(m: pyo.AbstractModel) -> None:
    tree_constraints(m)
    m.flow_conservation = pyo.Constraint(
        m.I, m.B, doc="(1.4) flow conservation at branching nodes",
        rule=lambda m, i, n: m.z[i, n] == m.z[i, left(n)] + m.z[i, right(n)] + m.z_sink[i, n])
    m.leaf_flow = pyo.Constraint(
        m.I, m.L, doc="(1.5) flow conservation at leaves",
        rule=lambda m, i, n: m.z[i, n] == m.z_sink[i, n])
    m.source_capacity = pyo.Constraint(
        m.I, doc="(1.6) at most one unit of flow per sample leaves the source",
        rule=lambda m, i: m.z[i, m.N.first()] <= 1)
    m.left_capacity = pyo.Constraint(
        m.I, m.B, doc="(1.7) flow goes left only if the split feature is 0",
        rule=lambda m, i, n: m.z[i, left(n)] <= sum(m.b[n, f] for f in m.F0[i]))
    m.right_capacity = pyo.Constraint(
        m.I, m.B, doc="(1.8) flow goes right only if the split feature is 1",
        rule=lambda m, i, n: m.z[i, right(n)] <= sum(m.b[n, f] for f in m.F1[i]))
    m.sink_capacity = pyo.Constraint(
        m.I, m.N, doc="(1.9) flow reaches the sink only where the sample's class is predicted",
        rule=lambda m, i, n: m.z_sink[i, n] <= m.w[n, m.y[i]])


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
              lam: float = 0.0) -> dict:
    """Pyomo data for ``create_instance``: ``X`` 0/1 (n × p), ``y`` in ``0..n_classes-1``.

    ``skeleton`` is a complete binary tree in heap order (``odtk.skeletons.tree_skeleton``).
    """
    X = np.asarray(X)
    branching = sorted(n for n in skeleton if skeleton.out_degree(n) > 0)
    leaves = sorted(n for n in skeleton if skeleton.out_degree(n) == 0)
    samples = list(range(X.shape[0]))
    features = list(range(X.shape[1]))
    ones = X > 0.5
    return {None: {
        "I": {None: samples},
        "F": {None: features},
        "K": {None: list(range(n_classes))},
        "B": {None: branching},
        "L": {None: leaves},
        "A": {n: sorted(nx.ancestors(skeleton, n)) for n in skeleton},
        "F0": {i: np.flatnonzero(~ones[i]).tolist() for i in samples},
        "F1": {i: np.flatnonzero(ones[i]).tolist() for i in samples},
        "y": {i: int(c) for i, c in enumerate(y)},
        "lam": {None: float(lam)},
    }}


def decode(instance) -> nx.DiGraph:
    """The learned tree: nodes carry ``feature`` (test ``x_f == 1``) or ``label``.

    Arcs carry ``outcome``: ``False`` for the left child (``x_f = 0``), ``True``
    for the right child (``x_f = 1``). Only nodes reachable from the root appear.
    """
    tree = nx.DiGraph()
    stack = [instance.N.first()]
    while stack:
        n = stack.pop()
        split = [f for f in instance.F if n in instance.B and pyo.value(instance.b[n, f]) > 0.5]
        if split:
            tree.add_node(n, feature=int(split[0]))
            for child, outcome in ((left(n), False), (right(n), True)):
                tree.add_edge(n, child, outcome=outcome)
                stack.append(child)
        else:
            label = max(instance.K, key=lambda k: pyo.value(instance.w[n, k]))
            tree.add_node(n, label=int(label))
    return tree


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 lam: float = 0.0) -> float:
    """Objective (1.1) of a decoded tree whose training predictions are ``predicted``."""
    correct = int((np.asarray(predicted) == np.asarray(y)).sum())
    splits = sum(1 for _, attrs in tree.nodes(data=True) if "feature" in attrs)
    return (1 - lam) * correct - lam * splits


# --------------------------------------------------------------------------- warm start
def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the tree ``graph`` routing the rows of ``X``.

    ``graph`` follows :func:`decode`'s convention with heap node ids (root 1, children
    2n for x_f = 0 and 2n+1 for x_f = 1); leaves may sit above the last level. A correctly
    classified sample sends one unit of flow along its path to the sink, the others none.
    """
    for var in (*instance.z.values(), *instance.z_sink.values()):
        var.set_value(0)
    for i, path in enumerate(load_tree(instance, graph, X)):
        if graph.nodes[path[-1]]["label"] == pyo.value(instance.y[i]):
            for n in path:
                instance.z[i, n].set_value(1)
            instance.z_sink[i, path[-1]].set_value(1)


def load_tree(instance, graph: nx.DiGraph, X: np.ndarray) -> list[list[int]]:
    """Set ``b``, ``p``, ``w`` to the tree ``graph``; returns every row's path through it.

    Raises ValueError when the tree or ``X`` does not fit the instance.
    """
    X = check_start(instance, graph, X)
    for var in (*instance.b.values(), *instance.p.values(), *instance.w.values()):
        var.set_value(0)
    for n, attrs in graph.nodes(data=True):
        if "feature" in attrs:
            instance.b[n, attrs["feature"]].set_value(1)
        else:
            instance.p[n].set_value(1)
            instance.w[n, attrs["label"]].set_value(1)
    return paths(graph, X)
