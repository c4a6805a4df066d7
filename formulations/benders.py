"""BendersOCT: the Benders decomposition of FlowOCT with lazily separated min-cut cuts.

Citation: S. Aghaei, A. Gómez, P. Vayanos, "Learning Optimal Classification Trees: Strong
Max-Flow Formulations" (arXiv:2002.09142), §3: problem (8) and Proposition 1, with the
pruning variables p of the journal version ("Strong Optimal Classification Trees",
arXiv:2103.15965). Equation numbers below are arXiv:2002.09142's. The tree variables are
those of FlowOCT; each sample's max-flow sub-problem (6) is replaced by one variable g^i
(sample i is classified correctly) bounded by the capacity of every s–t cut of its flow
graph, the min-cut dual (7).

    max  (1-λ) Σ_i g^i  −  λ Σ_{n∈B} Σ_f b_{nf}                                     (8.1)
    s.t. g^i ≤ Σ_{(n1,n2)∈C(S)} c^i_{n1,n2}(b, w)     i ∈ I, S an s–t cut  (lazily)    (8.2)
         Σ_f b_{nf} + p_n + Σ_{m∈A(n)} p_m = 1        n ∈ B               (for 8.3)
         p_n + Σ_{m∈A(n)} p_m = 1                     n ∈ L               (for 8.4)
         Σ_k w_{nk} = p_n                             n ∈ B∪L             (for 8.3–8.4)
         g^i ≤ 1                                      i ∈ I                           (8.5)
         b ∈ {0,1} (8.6),  w ∈ {0,1} (8.7),  p ∈ {0,1}

The three rows on p replace the paper's (8.3) Σ_f b_{nf} + Σ_k w_{nk} = 1 (n ∈ B) and
(8.4) Σ_k w_{nk} = 1 (n ∈ L), which are FlowOCT's (1.2)–(1.3): p_n = 1 when node n
predicts (one label), and below a node that predicts every node is empty (no split, no
label). The paper's rows admit the same trees; below a node that predicts they still make
each node split or predict, where no sample arrives, which never raises the objective. The
``doc=`` labels of the Pyomo components keep the journal version's numbers: (8.3)–(8.5)
on the three rows on p, (8.6) on g^i ≤ 1 and (8.7) on the integrality of b, p, w.

Capacities of sample i's flow graph: c(s,1) = 1, c(n,l(n)) = Σ_{f: x^i_f=0} b_{nf},
c(n,r(n)) = Σ_{f: x^i_f=1} b_{nf}, c(n,t) = w_{n,y^i}.

Separation (Proposition 1, O(depth) per sample): at an integral (b, p, w), follow
sample i from the root along its tests to the node that predicts. If that node does not
predict y^i, the nodes on the path form a cut S of capacity 0 whose arcs leave the path:
each path node's arc to the sink and its arc to the child the sample does not take (at
the last node both child arcs, Σ_f b_{nf}). The cut g^i ≤ (those capacities) is violated
whenever g^i > 0. Cuts are added to the ConstraintList ``cuts`` by the caller — inside
the solver's branch and bound, or between re-solves — until none is violated.

Symbols → Pyomo components: as in :mod:`flowoct` (sets I, F, K, B, L, N, A, F0, F1;
params y, lam; vars b, p, w), plus var g[i] and the ConstraintList cuts.

Deviations: p for (8.3)–(8.4), as above; g is continuous in [0, 1] (integral at an optimum).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from . import flowoct

KEY = "benders"
CITATION = ("Aghaei, Gómez & Vayanos, Strong Optimal Classification Trees, BendersOCT "
            "problem (8) with the cuts of Proposition 1")
SENSE = "maximize"
FEATURES = "binary"
SKELETON = "tree"
HYPERPARAMETERS = flowoct.HYPERPARAMETERS
CHOICES: dict[str, tuple] = {}
SIDE_CONSTRAINTS: tuple[str, ...] = ()

make_data = flowoct.make_data
decode = flowoct.decode
objective_of = flowoct.objective_of


def build_model() -> pyo.AbstractModel:
    """The abstract master problem (8) with an empty cut list (8.2)."""
    m = pyo.AbstractModel(name="BendersOCT")
    flowoct.sets_and_params(m)
    flowoct.tree_variables(m, numbers=("8.7", "8.7", "8.7"))
    m.g = pyo.Var(m.I, bounds=(0, 1), doc="(8.6) g^i: sample i is classified correctly")
    m.objective = pyo.Objective(
        rule=lambda m: (1 - m.lam) * sum(m.g[i] for i in m.I)
        - m.lam * sum(m.b[n, f] for n in m.B for f in m.F),
        sense=pyo.maximize, doc="(8.1) correctly classified samples minus λ times splits")
    flowoct.tree_constraints(m, numbers=("8.3", "8.4", "8.5"))
    m.cuts = pyo.ConstraintList(doc="(8.2) min-cut inequalities, separated lazily")
    return m


def separate(instance, tolerance: float = 1e-6) -> dict:
    """Violated cuts (8.2) at the integral solution held by ``instance`` (Proposition 1).

    Returns {sample i: the inequality g^i ≤ Σ capacities of the arcs leaving its path}.
    """
    split = {n: next((f for f in instance.F if pyo.value(instance.b[n, f]) > 0.5), None)
             for n in instance.B}
    cuts = {}
    for i in instance.I:
        if pyo.value(instance.g[i]) <= tolerance:
            continue
        capacities = _path_cut(instance, i, split)
        if pyo.value(sum(capacities)) < pyo.value(instance.g[i]) - tolerance:
            cuts[i] = instance.g[i] <= sum(capacities)
    return cuts


def _path_cut(m, i, split: dict) -> list:
    """Capacities of the arcs leaving sample i's path through the tree whose node n
    splits on feature ``split[n]`` (None: n predicts)."""
    label = pyo.value(m.y[i])
    ones = set(m.F1[i])
    n, capacities = m.N.first(), []
    while True:
        capacities.append(m.w[n, label])
        if n in m.L:
            return capacities
        if split[n] is None:  # n predicts: the sample stops here, both child arcs are cut
            return capacities + [m.b[n, f] for f in m.F]
        if split[n] in ones:
            capacities += [m.b[n, f] for f in m.F0[i]]
            n = flowoct.right(n)
        else:
            capacities += [m.b[n, f] for f in m.F1[i]]
            n = flowoct.left(n)


def repair(instance, violated: dict) -> None:
    """After adding ``violated`` cuts, the held solution with g^i = 0 for their samples is feasible."""
    for i in violated:
        instance.g[i].set_value(0.0)


def warm_start(instance, graph, X) -> None:
    """Set ``b``, ``p``, ``w`` to the tree ``graph`` (heap node ids) and g^i to whether it
    classifies row i of ``X`` correctly."""
    for i, path in enumerate(flowoct.load_tree(instance, graph, X)):
        instance.g[i].set_value(float(graph.nodes[path[-1]]["label"] == pyo.value(instance.y[i])))


# --------------------------------------------------------------------------- fractional points
@dataclass(frozen=True)
class _FlowGraphs:
    """What every sample's flow graph needs, gathered once per instance."""

    nodes: list  # N in heap order (a child's id is larger than its parent's)
    branching: list  # B
    features: list  # F
    ones: np.ndarray  # |I| × |F|: x^i_f = 1
    label: np.ndarray  # per sample, the position of y^i in K
    b: list  # per n ∈ B, its b[n, f] in the order of F
    w: list  # per n ∈ N, its w[n, k] in the order of K


_flow_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _graphs(instance) -> _FlowGraphs:
    if instance not in _flow_graphs:
        features, classes, samples = list(instance.F), list(instance.K), list(instance.I)
        ones = np.array([[f in set(instance.F1[i]) for f in features] for i in samples], dtype=float)
        label = np.array([classes.index(pyo.value(instance.y[i])) for i in samples])
        _flow_graphs[instance] = _FlowGraphs(
            list(instance.N), list(instance.B), features, ones.reshape(len(samples), len(features)),
            label, [[instance.b[n, f] for f in features] for n in instance.B],
            [[instance.w[n, k] for k in classes] for n in instance.N])
    return _flow_graphs[instance]


def separate_fractional(instance, tolerance: float = 1e-6) -> dict:
    """Violated cuts (8.2) at the (possibly fractional) values held by ``instance``.

    Sample i's flow graph is a tree below s, so its minimum s–t cut follows from the leaves
    up: with the node in the source set, its subtree costs c(n,t) plus, per child, the
    cheaper of cutting the arc to it and the child's own subtree. Returns {sample i: g^i ≤
    the capacity of that cut} for every i whose g^i exceeds the cut's value by ``tolerance``.
    """
    graphs = _graphs(instance)
    g = np.array([instance.g[i].value or 0.0 for i in instance.I])
    split = {n: np.array([v.value or 0.0 for v in row]) for n, row in zip(graphs.branching, graphs.b)}
    capacity = {}  # (n, child) -> per-sample capacity of the arc n → child
    for n, values in split.items():
        capacity[n, flowoct.left(n)] = values @ (1.0 - graphs.ones.T)
        capacity[n, flowoct.right(n)] = values @ graphs.ones.T
    sink = {n: np.array([v.value or 0.0 for v in row])[graphs.label] for n, row in zip(graphs.nodes, graphs.w)}
    subtree = {}  # n -> per-sample capacity of the cheapest cut of n's subtree with n in S
    for n in reversed(graphs.nodes):
        subtree[n] = sink[n] + sum((np.minimum(capacity[n, c], subtree[c]) for c in _children(n, split)),
                                   start=np.zeros(len(g)))
    root = graphs.nodes[0]
    violated = np.flatnonzero(g > subtree[root] + tolerance)
    samples = list(instance.I)
    return {samples[i]: instance.g[samples[i]] <= sum(_cut_arcs(graphs, i, root, capacity, subtree))
            for i in violated.tolist()}


def _children(n, split: dict) -> tuple:
    return (flowoct.left(n), flowoct.right(n)) if n in split else ()


def _cut_arcs(graphs: _FlowGraphs, i: int, n, capacity: dict, subtree: dict) -> list:
    """Capacities (Pyomo expressions) of the arcs of sample i's cheapest cut below n, n in S."""
    arcs = [graphs.w[graphs.nodes.index(n)][graphs.label[i]]]
    if n not in graphs.branching:
        return arcs
    b = graphs.b[graphs.branching.index(n)]
    for child, side in ((flowoct.left(n), 0.0), (flowoct.right(n), 1.0)):
        if capacity[n, child][i] <= subtree[child][i]:  # cut the arc n → child
            arcs += [b[j] for j in np.flatnonzero(graphs.ones[i] == side).tolist()]
        else:
            arcs += _cut_arcs(graphs, i, child, capacity, subtree)
    return arcs
