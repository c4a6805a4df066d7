"""BendersOCT: the Benders decomposition of FlowOCT with lazily separated min-cut cuts.

Citation: S. Aghaei, A. Gómez, P. Vayanos, "Strong Optimal Classification Trees"
(arXiv:2103.15965), problem (8) and Proposition 1. The tree variables are those of
FlowOCT; each sample's max-flow sub-problem is replaced by one variable g^i (sample i
is classified correctly) bounded by the capacity of every s–t cut of its flow graph.

    max  (1-λ) Σ_i g^i  −  λ Σ_{n∈B} Σ_f b_{nf}                                     (8.1)
    s.t. g^i ≤ Σ_{(n1,n2)∈C(S)} c^i_{n1,n2}(b, w)     i ∈ I, S an s–t cut  (lazily)    (8.2)
         Σ_f b_{nf} + p_n + Σ_{m∈A(n)} p_m = 1        n ∈ B                           (8.3)
         p_n + Σ_{m∈A(n)} p_m = 1                     n ∈ L                           (8.4)
         Σ_k w_{nk} = p_n                             n ∈ B∪L                         (8.5)
         g^i ≤ 1                                      i ∈ I                           (8.6)
         b, p, w ∈ {0,1}                                                              (8.7)

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

Deviation: none in the model; g is continuous in [0, 1] (integral at an optimum).
"""
from __future__ import annotations

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
