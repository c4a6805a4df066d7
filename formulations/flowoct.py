"""FlowOCT: the strong max-flow formulation of optimal classification trees.

Citation: S. Aghaei, A. Gómez, P. Vayanos, "Learning Optimal Classification Trees: Strong
Max-Flow Formulations" (arXiv:2002.09142), formulation (1) and the cuts (4) of its §2.2.3,
with the pruning variables ``p`` of the journal version ("Strong Optimal Classification
Trees", arXiv:2103.15965). Equation numbers below are those of arXiv:2002.09142: (1.1)–(1.13)
count the objective and the constraints of formulation (1) in the order printed there.

Every sample ``i`` is a unit of flow from a source ``s`` into the root; at a
branching node it continues to the child selected by the tested binary
feature, and it may leave to the sink ``t`` only at a node that predicts its
class. The number of samples that reach the sink is the number of training
samples classified correctly. ::

    max  (1-λ) Σ_i Σ_{n∈B∪L} z^i_{n,t}  −  λ Σ_{n∈B} Σ_f b_{nf}                    (1.1)
    s.t. Σ_f b_{nf} + p_n + Σ_{m∈A(n)} p_m = 1                  n ∈ B               (1.2, with p)
         p_n + Σ_{m∈A(n)} p_m = 1                               n ∈ L               (1.3, with p)
         Σ_k w_{nk} = p_n                                       n ∈ B∪L             (1.2–1.3, with p)
         z^i_{a(n),n} = z^i_{n,l(n)} + z^i_{n,r(n)} + z^i_{n,t}  n ∈ B, i ∈ I        (1.4)
         z^i_{a(n),n} = z^i_{n,t}                               n ∈ L, i ∈ I        (1.5)
         z^i_{s,1} ≤ 1                                          i ∈ I               (1.6)
         z^i_{n,l(n)} ≤ Σ_{f: x^i_f = 0} b_{nf}                  n ∈ B, i ∈ I        (1.7)
         z^i_{n,r(n)} ≤ Σ_{f: x^i_f = 1} b_{nf}                  n ∈ B, i ∈ I        (1.8)
         z^i_{n,t} ≤ w_{n,y^i}                                  n ∈ B∪L, i ∈ I      (1.9)
         b ∈ {0,1} (1.10),  w ∈ {0,1} (1.11),  p ∈ {0,1},  z ∈ [0,1] ((1.12)–(1.13) relaxed)

The journal version's pruning variables ``p`` (p_n = 1: node n predicts) replace this
paper's (1.2) Σ_f b_{nf} + Σ_k w_{nk} = 1 (n ∈ B) and (1.3) Σ_k w_{nk} = 1 (n ∈ L); see
"Deviation" below for what this changes and why the optimum does not change.

As the paper notes, the flow variables ``z`` may be relaxed to [0, 1]: for
integral ``b``, ``p``, ``w`` every sample has a single path and the max-flow is
integral.

Symbols → Pyomo components::

    I, F, K, B, L         sets I, F, K, B, L (nodes in heap order: root 1, children 2n, 2n+1)
    A(n)                  indexed set A[n], the ancestors of n
    {f: x^i_f = 0 / 1}    indexed sets F0[i], F1[i] (the data x enters only through them)
    y^i, λ, ω_i           params y[i], lam, weight[i] (sample weights, default 1)
    b_{nf}, p_n, w_{nk}   vars b[n,f], p[n], w[n,k]
    z^i_{a(n),n}          var z[i,n]  (flow on the arc into n; for the root, from the source)
    z^i_{n,t}             var z_sink[i,n]

Cuts (4), option ``cuts`` (§2.2.3). For n ∈ B whose children are leaves, f ∈ F and a set H
of samples with x^i_f = 1 and pairwise different classes, ::

    Σ_{i∈H} z^i_{n,l(n)} ≤ 1 − b_{nf}                                                (4)

holds at every integral solution: if b_{nf} = 1 no sample of H goes left (1.7), and if
b_{nf} = 0 at most one of them reaches the sink at the leaf l(n), which predicts one class.
odtk adds its mirror image for the right branch, ::

    Σ_{i∈H'} z^i_{n,r(n)} ≤ 1 − b_{nf}     H' ⊆ {i: x^i_f = 0}, classes pairwise different   (4′)

(odtk's own; valid by the same argument: if b_{nf} = 1 then Σ_{g∈F1[i]} b_{ng} = 0 for every
i ∈ H' by (1.2, with p), so (1.8) keeps H' out of r(n); otherwise the leaf r(n) predicts one
class and (1.5), (1.9), (1.2–1.3, with p) let at most one sample of H' through it).
:func:`separate_cuts` finds a most violated (4) and (4′) for every (n, f) exactly: per class,
the sample of the largest flow into the child. With ``cuts="on"`` the solver adds them inside
branch and bound where it takes user cuts (Gurobi, CPLEX), else in a root cut loop over
HiGHS's LP relaxation before the branch and bound (``odtk.solvers.root_cuts``).
The default is ``cuts="off"``, by measurement (``benchmarks/flowoct_cuts.py``): the LP
optimum HiGHS returns at the root rarely violates (4)/(4′) and the cuts never moved the root
bound on monk1–3 (all rows, depths 2–3, λ ∈ {0, 0.1}; at most 4 cuts found per instance);
inside branch and bound (30-row samples of monk1–3 and car evaluation, within the free
licences) the cuts made the solves slower: geometric-mean time ratio on/off 1.69 on Gurobi
(15 instances) and 4.87 on CPLEX (8 instances), with node counts both up and down. On all
of car evaluation (depth 2) the root loop lowered HiGHS's LP bound by 0.2 % (1695.5 → 1692.4,
820 cuts in 52 s), and the 60-s solve then ended with a worse incumbent than without cuts.

Deviation: (1.2)–(1.3) are stated with the journal version's ``p`` as above, not as printed in
this paper. As printed, every node below a predicting node must still split or predict (its b
and w are free, and a split there costs λ in (1.1) though no sample reaches it); with ``p``
everything below a predicting node is zero. Effect on the optimum: none — the optimal value and
the trees it decodes to are the same, because each form's solutions map to the other's with the
same flows z and an objective at least as large. Paper → ``p``: set p_n = 1 at each predicting
node no ancestor of which predicts and zero b, w below it; no flow reaches there ((1.2) leaves
the predicting node no split, so (1.7)–(1.8) hold its child arcs at 0), and dropping splits
only raises (1.1). ``p`` → paper: raise w_{n,k} by Σ_{m∈A(n)} p_m for one class k; then
Σ_f b_{nf} + Σ_k w_{nk} = 1 on B and Σ_k w_{nk} = 1 on L, and raising w only relaxes (1.9). The
second map holds for fractional values too, so the ``p`` form's LP relaxation is at least as
tight as the paper's; with no dangling nodes it also has fewer equivalent solutions. What
changes is the search, not the answer. A tree of depth 0 (a single leaf) is allowed; then B is
empty. odtk's option ``sample_weight`` gives sample i a weight ω_i ≥ 0 (param ``weight[i]``,
default 1) multiplying its flows z^i_{n,t} in (1.1), which then counts the weight of the
correctly classified samples.
"""
from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from .heap_trees import check_start, paths

KEY = "flowoct"
CITATION = "Aghaei, Gómez & Vayanos, Strong Optimal Classification Trees, formulation (1)"
SENSE = "maximize"
OBJECTIVE = "(1 − λ) × correctly classified training rows − λ × splits, maximised"
FEATURES = "binary"
SKELETON = "tree"
# numeric hyper-parameters: (lowest, highest, default); choices: (default, *other allowed values)
HYPERPARAMETERS = {"lam": (0.0, 1.0, 0.0)}
CHOICES: dict[str, tuple] = {"cuts": ("off", "on")}  # cuts (4) and (4′); default: see above
SIDE_CONSTRAINTS: tuple[str, ...] = ()
SAMPLE_WEIGHT = True  # make_data and objective_of take per-sample weights


def build_model() -> pyo.AbstractModel:
    """The abstract FlowOCT model (1.1)–(1.13), with ``p`` in (1.2)–(1.3)."""
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
    m.weight = pyo.Param(m.I, within=pyo.NonNegativeReals, default=1.0,
                         doc="weight of sample i in (1.1) (1 unless sample weights are given)")
    m.lam = pyo.Param(within=pyo.UnitInterval, default=0.0, doc="regularisation weight λ")


def tree_variables(m: pyo.AbstractModel, numbers: tuple[str, str, str] = ("1.10", "p binary", "1.11")) -> None:
    """The tree's binaries ``b``, ``p``, ``w`` (integrality numbered ``numbers``)."""
    m.b = pyo.Var(m.B, m.F, domain=pyo.Binary, doc=f"({numbers[0]}) node n splits on feature f")
    m.p = pyo.Var(m.N, domain=pyo.Binary, doc=f"({numbers[1]}) node n predicts a class")
    m.w = pyo.Var(m.N, m.K, domain=pyo.Binary, doc=f"({numbers[2]}) node n predicts class k")


def _variables(m: pyo.AbstractModel) -> None:
    tree_variables(m)
    m.z = pyo.Var(m.I, m.N, bounds=(0, 1), doc="(1.12) relaxed: flow z^i_{a(n),n} on the arc into node n")
    m.z_sink = pyo.Var(m.I, m.N, bounds=(0, 1), doc="(1.13) relaxed: flow z^i_{n,t} from node n to the sink")


def left(n: int) -> int:
    """Left child (x_f = 0) of node n in heap order."""
    return 2 * n


def right(n: int) -> int:
    """Right child (x_f = 1) of node n in heap order."""
    return 2 * n + 1


def _objective(m):
    correct = sum(m.weight[i] * m.z_sink[i, n] for i in m.I for n in m.N)
    splits = sum(m.b[n, f] for n in m.B for f in m.F)
    return (1 - m.lam) * correct - m.lam * splits


def tree_constraints(m: pyo.AbstractModel,
                     numbers: tuple[str, str, str] = ("1.2, with p", "1.3, with p", "1.2–1.3, with p")) -> None:
    """The tree structure on ``b``, ``p``, ``w``: (1.2), (1.3) with ``p`` (numbered ``numbers``)."""
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
              lam: float = 0.0, cuts: str = CHOICES["cuts"][0],
              sample_weight: np.ndarray | None = None) -> dict:
    """Pyomo data for ``create_instance``: ``X`` 0/1 (n × p), ``y`` in ``0..n_classes-1``,
    ``sample_weight`` each sample's weight in the objective (default 1).

    ``skeleton`` is a complete binary tree in heap order (``odtk.skeletons.tree_skeleton``).
    ``cuts`` (one of ``CHOICES["cuts"]``) acts at solve time and adds no data.
    """
    if cuts not in CHOICES["cuts"]:
        raise ValueError(f"cuts must be one of {', '.join(CHOICES['cuts'])}; got {cuts!r}.")
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
        **({} if sample_weight is None else {"weight": dict(enumerate(map(float, sample_weight)))}),
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
                 lam: float = 0.0, sample_weight: np.ndarray | None = None, **_) -> float:
    """Objective (1.1) of a decoded tree whose training predictions are ``predicted``."""
    hits = np.asarray(predicted) == np.asarray(y)
    correct = int(hits.sum()) if sample_weight is None else float(np.dot(hits, sample_weight))
    splits = sum(1 for _, attrs in tree.nodes(data=True) if "feature" in attrs)
    return (1 - lam) * correct - lam * splits


# --------------------------------------------------------------------------- cuts (4)
@dataclass(frozen=True)
class _CutData:
    """What the separation of (4) and (4′) reads, gathered once per instance."""

    nodes: list[int]  # n ∈ B whose children are leaves
    ones: np.ndarray  # x^i_f = 1, samples × features
    classes: list[np.ndarray]  # the samples of each class
    z_child: dict[tuple[int, int], list]  # (n, child) → z[i, child] for every sample i
    b: dict[int, list]  # n → b[n, f] for every feature f


_cut_data: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _gather(instance) -> _CutData:
    if (data := _cut_data.get(instance)) is not None:
        return data
    samples, features = list(instance.I), list(instance.F)
    column = {f: j for j, f in enumerate(features)}
    ones = np.zeros((len(samples), len(features)), dtype=bool)
    for r, i in enumerate(samples):
        ones[r, [column[f] for f in instance.F1[i]]] = True
    y = np.array([pyo.value(instance.y[i]) for i in samples])
    leaves = set(instance.L)
    nodes = [n for n in instance.B if left(n) in leaves and right(n) in leaves]
    data = _CutData(
        nodes, ones, [np.flatnonzero(y == k) for k in np.unique(y)],
        {(n, c): [instance.z[i, c] for i in samples] for n in nodes for c in (left(n), right(n))},
        {n: [instance.b[n, f] for f in features] for n in nodes})
    _cut_data[instance] = data
    return data


def _values(variables: Sequence | np.ndarray) -> np.ndarray:
    return np.fromiter((v.value or 0.0 for v in variables), dtype=float, count=len(variables))


def most_violated(flow: np.ndarray, allowed: np.ndarray, classes: list[np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per feature f, the left-hand side of a most violated (4): per class, the largest
    ``flow`` of a sample with ``allowed[i, f]``. Returns (values K × F, samples K × F);
    a class without a positive flow has value 0."""
    best = np.zeros((len(classes), allowed.shape[1]))
    rows = np.zeros((len(classes), allowed.shape[1]), dtype=np.int64)
    for k, members in enumerate(classes):
        if not len(members):
            continue
        held = np.where(allowed[members], np.maximum(flow[members], 0.0)[:, None], 0.0)
        top = held.argmax(axis=0)
        best[k] = held[top, np.arange(held.shape[1])]
        rows[k] = members[top]
    return best, rows


def separate_cuts(instance, tolerance: float = 1e-6) -> list:
    """Violated cuts (4) and (4′) at the values loaded into ``instance``, as Pyomo inequalities
    ``Σ_{i∈H} z[i, child] + b[n, f] <= 1``: for every n ∈ B with leaf children, child l(n)
    (samples with x_f = 1) or r(n) (x_f = 0) and f ∈ F, a most violated one when its
    violation exceeds ``tolerance`` and ``|H|`` ≥ 2 (with ``|H|`` = 1 it follows from (1.7)/(1.8)
    and (1.2, with p)). H takes per class the sample of the largest positive flow."""
    data = _gather(instance)
    features = list(instance.F)
    found = []
    for n in data.nodes:
        split = _values(data.b[n])
        for child, allowed in ((left(n), data.ones), (right(n), ~data.ones)):  # (4), (4′)
            z = data.z_child[n, child]
            best, rows = most_violated(_values(z), allowed, data.classes)
            members = best > 0
            violated = (best.sum(axis=0) + split - 1 > tolerance) & (members.sum(axis=0) >= 2)
            for j in np.flatnonzero(violated):
                held = rows[members[:, j], j]
                found.append(sum(z[r] for r in held) + instance.b[n, features[j]] <= 1)  # (4)/(4′)
    return found


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
