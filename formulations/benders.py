"""BendersOCT: the Benders decomposition of FlowOCT with lazily separated min-cut cuts.

Citation: S. Aghaei, A. Gómez, P. Vayanos, "Learning Optimal Classification Trees: Strong
Max-Flow Formulations" (arXiv:2002.09142), §3: problem (8) and Proposition 1, with the
pruning variables p of the journal version ("Strong Optimal Classification Trees",
arXiv:2103.15965). Equation numbers below are arXiv:2002.09142's. The tree variables are
those of FlowOCT; each sample's max-flow sub-problem (6) is replaced by one variable g^i
(sample i is classified correctly) bounded by the capacity of every s–t cut of its flow
graph, the min-cut dual (7). ::

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
``doc=`` labels of the Pyomo components carry these numbers too.
With FlowOCT's ``sample_weight`` option, g^i carries sample i's weight ω_i in (8.1).

Capacities of sample i's flow graph: c(s,1) = 1, c(n,l(n)) = Σ_{f: x^i_f=0} b_{nf},
c(n,r(n)) = Σ_{f: x^i_f=1} b_{nf}, c(n,t) = w_{n,y^i}.

Separation (Proposition 1, O(depth) per sample): at an integral (b, p, w), follow
sample i from the root along its tests to the node that predicts. If that node does not
predict y^i, the nodes on the path form a cut S of capacity 0 whose arcs leave the path:
each path node's arc to the sink and its arc to the child the sample does not take (at
the last node both child arcs, Σ_f b_{nf}). The cut g^i ≤ (those capacities) is violated
whenever g^i > 0. Cuts are added to the ConstraintList ``cuts`` by the caller — inside
the solver's branch and bound, or between re-solves — until none is violated. On a compiled
instance (:mod:`odtk.compiled.benders`) the same cuts come out as rows (columns,
coefficients, rhs), gathered for all violated samples at once.

Symbols → Pyomo components: as in :mod:`flowoct` (sets I, F, K, B, L, N, A, F0, F1;
params y, weight, lam; vars b, p, w), plus var g[i] and the ConstraintList cuts.

Deviations: p for (8.3)–(8.4), as above; g is continuous in [0, 1] (integral at an optimum).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr import LinearExpression

from . import flowoct

KEY = "benders"
CITATION = ("Aghaei, Gómez & Vayanos, Strong Optimal Classification Trees, BendersOCT "
            "problem (8) with the cuts of Proposition 1")
SENSE = "maximize"
OBJECTIVE = flowoct.OBJECTIVE
FEATURES = "binary"
SKELETON = "tree"
HYPERPARAMETERS = flowoct.HYPERPARAMETERS
CHOICES: dict[str, tuple] = {}
SIDE_CONSTRAINTS: tuple[str, ...] = ()
SAMPLE_WEIGHT = flowoct.SAMPLE_WEIGHT

make_data = flowoct.make_data
decode = flowoct.decode
objective_of = flowoct.objective_of


def build_model() -> pyo.AbstractModel:
    """The abstract master problem (8) with an empty cut list (8.2)."""
    m = pyo.AbstractModel(name="BendersOCT")
    flowoct.sets_and_params(m)
    flowoct.tree_variables(m, numbers=("8.6", "p binary", "8.7"))
    m.g = pyo.Var(m.I, bounds=(0, 1), doc="(8.5) g^i ≤ 1: sample i is classified correctly")
    m.objective = pyo.Objective(
        rule=lambda m: (1 - m.lam) * sum(m.weight[i] * m.g[i] for i in m.I)
        - m.lam * sum(m.b[n, f] for n in m.B for f in m.F),
        sense=pyo.maximize, doc="(8.1) correctly classified samples minus λ times splits")
    flowoct.tree_constraints(m, numbers=("8.3, with p", "8.4, with p", "8.3–8.4, with p"))
    m.cuts = pyo.ConstraintList(doc="(8.2) min-cut inequalities, separated lazily")
    return m


@dataclass(frozen=True)
class _FlowGraphs:
    """What separation reads of every sample's flow graph, gathered once per instance."""

    samples: list  # I
    nodes: list  # N in heap order (a child's id is larger than its parent's)
    branching: list  # B
    ones: np.ndarray  # |I| × |F|: 1.0 where x^i_f = 1
    label: np.ndarray  # per sample, the position of y^i in K
    position: np.ndarray  # heap id n → n's index in N
    row: np.ndarray  # heap id n → n's index in B, -1 for n ∈ L
    b: np.ndarray  # |B| × |F| variables b[n, f] (of a compiled instance: their columns)
    w: np.ndarray  # |N| × |K| variables w[n, k] (idem)
    g: np.ndarray  # g[i] per sample (idem)
    values: np.ndarray | None  # a compiled instance's value vector; None for Pyomo variables


_flow_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _graphs(instance) -> _FlowGraphs:
    """The flow graphs' data of ``instance``, gathered on the first call (cached weakly)."""
    if (graphs := _flow_graphs.get(instance)) is not None:
        return graphs
    samples, features, classes = list(instance.I), list(instance.F), list(instance.K)
    nodes, branching = list(instance.N), list(instance.B)
    column = {f: j for j, f in enumerate(features)}
    ones = np.zeros((len(samples), len(features)))
    for r, i in enumerate(samples):
        ones[r, [column[f] for f in instance.F1[i]]] = 1.0
    position, row = np.full(max(nodes) + 1, -1), np.full(max(nodes) + 1, -1)
    position[nodes], row[branching] = np.arange(len(nodes)), np.arange(len(branching))
    if hasattr(instance, "form"):  # compiled: each variable block's columns, shaped by its sets
        b, w, g = [np.arange(var.columns.start, var.columns.stop).reshape([len(s) for s in var.sets])
                   for var in (instance.b, instance.w, instance.g)]
        values = instance.values
    else:
        b, w, g = (_table(instance.b, branching, features), _table(instance.w, nodes, classes),
                   _table(instance.g, samples))
        values = None
    graphs = _FlowGraphs(
        samples, nodes, branching, ones, np.array([classes.index(pyo.value(instance.y[i])) for i in samples]),
        position, row, b, w, g, values)
    _flow_graphs[instance] = graphs
    return graphs


def _table(var, rows: list, columns: list | None = None) -> np.ndarray:
    """The variables var[r, c] as a len(rows) × len(columns) object array (var[r]: a vector)."""
    table = np.empty(len(rows) if columns is None else (len(rows), len(columns)), dtype=object)
    for j, r in enumerate(rows):
        table[j] = var[r] if columns is None else [var[r, c] for c in columns]
    return table


def _values(graphs: _FlowGraphs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of g, b and w held by the instance (unset: 0)."""
    if graphs.values is not None:
        held = np.nan_to_num(graphs.values)
        return held[graphs.g], held[graphs.b], held[graphs.w]
    b, w = (flowoct._values(table.ravel()).reshape(table.shape) for table in (graphs.b, graphs.w))
    return flowoct._values(graphs.g), b, w


def _child_arcs(graphs: _FlowGraphs, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|B| × |I| capacities c^i(n, l(n)) = Σ_{x^i_f=0} b_nf and c^i(n, r(n)) = Σ_{x^i_f=1} b_nf."""
    return b @ (1.0 - graphs.ones.T), b @ graphs.ones.T


def _inequalities(graphs: _FlowGraphs, owners: list[np.ndarray], terms: list[np.ndarray]) -> dict:
    """{sample i: g^i ≤ Σ its arcs' capacities} from pieces of ``terms`` (variables of
    ``graphs``) and their ``owners`` (sample positions): the first piece each sample's g^i,
    the others its arcs, kept in their order. Pyomo inequalities, or rows of a compiled instance."""
    owner = np.concatenate(owners)
    order = np.argsort(owner, kind="stable")
    owner, term = owner[order], np.concatenate(terms)[order]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else np.zeros(0, dtype=np.int64)
    keys = [graphs.samples[i] for i in owner[starts].tolist()]
    groups = np.split(term, starts[1:])
    if graphs.values is None:
        return {key: group[0] <= LinearExpression(list(group[1:])) for key, group in zip(keys, groups)}
    coefficient = -np.ones(len(term))
    coefficient[starts] = 1.0
    return {key: (group, signs, 0.0) for key, group, signs in zip(keys, groups, np.split(coefficient, starts[1:]))}


# --------------------------------------------------------------------------- integral points
def separate(instance, tolerance: float = 1e-6) -> dict:
    """Violated cuts (8.2) at the integral solution held by ``instance`` (Proposition 1).

    Returns {sample i: the inequality g^i ≤ Σ capacities of the arcs leaving its path} for
    every i whose g^i exceeds that sum by ``tolerance`` (a compiled instance's: the row
    (columns, coefficients, rhs)); the sums and the inequalities of all samples are computed
    at once, the inequalities only for the violated samples.
    """
    graphs = _graphs(instance)
    g, b, w = _values(graphs)
    split = _split_features(b)
    violated = np.flatnonzero((g > tolerance) & (_path_capacity(graphs, split, b, w) < g - tolerance))
    return _inequalities(graphs, *_path_arcs(graphs, split, violated))


def _split_features(b: np.ndarray) -> np.ndarray:
    """Per n ∈ B, the index of the first f with b_nf = 1, or -1 when n splits on none (predicts)."""
    first = np.argmax(np.c_[b > 0.5, np.ones(len(b), dtype=bool)], axis=1)  # |F| when there is none
    return np.where(first < b.shape[1], first, -1)


def _walk(graphs: _FlowGraphs, split: np.ndarray, samples: np.ndarray):
    """The paths of ``samples`` (positions) through the tree whose n ∈ B splits on feature
    index ``split`` (-1: n predicts), one level per step: the samples still on their way, their
    node, its row in B (-1 in L), its split feature (-1: predicts, -2: n ∈ L) and whether
    they go right."""
    tests = np.append(split, -2)  # tests[row]: -2 for n ∈ L (row -1)
    node = np.full(len(samples), graphs.nodes[0])
    while len(samples):
        row = graphs.row[node]
        feature = tests[row]
        on = feature >= 0
        right = np.zeros(len(samples), dtype=bool)
        right[on] = graphs.ones[samples[on], feature[on]] > 0.5
        yield samples, node, row, feature, right
        samples, node = samples[on], 2 * node[on] + right[on]  # heap ids: r(n) = 2n + 1, l(n) = 2n


def _path_capacity(graphs: _FlowGraphs, split: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per sample, the capacity at ``b``, ``w`` of the arcs leaving its path through the tree
    whose n ∈ B splits on feature index ``split`` (-1: n predicts)."""
    left_arc, right_arc = _child_arcs(graphs, b)
    both = b.sum(axis=1)
    capacity = np.zeros(len(graphs.samples))
    for samples, node, row, feature, right in _walk(graphs, split, np.arange(len(graphs.samples))):
        capacity[samples] += w[graphs.position[node], graphs.label[samples]]  # c(n, t)
        stops = feature == -1  # n predicts: both child arcs leave the path
        capacity[samples[stops]] += both[row[stops]]
        on = feature >= 0
        samples, row, right = samples[on], row[on], right[on]
        capacity[samples] += np.where(right, left_arc[row, samples], right_arc[row, samples])
    return capacity


def _path_arcs(graphs: _FlowGraphs, split: np.ndarray, violated: np.ndarray) -> tuple[list, list]:
    """The ``violated`` samples' g^i and the capacities (variables) of the arcs leaving their
    paths, each sample's in path order, with their owners (see :func:`_inequalities`)."""
    owners, terms = [violated], [graphs.g[violated]]
    for samples, node, row, feature, right in _walk(graphs, split, violated):
        owners.append(samples)
        terms.append(graphs.w[graphs.position[node], graphs.label[samples]])  # c(n, t)
        # the arc to the child not taken (x^i_f on the other side), both child arcs where n predicts
        leaving = ((graphs.ones[samples] > 0.5) != right[:, None]) | (feature == -1)[:, None]
        sample, f = np.nonzero(leaving & (row >= 0)[:, None])
        owners.append(samples[sample])
        terms.append(graphs.b[row[sample], f])
    return owners, terms


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
def separate_fractional(instance, tolerance: float = 1e-6) -> dict:
    """Violated cuts (8.2) at the (possibly fractional) values held by ``instance``.

    Sample i's flow graph is a tree below s, so its minimum s–t cut follows from the leaves
    up: with the node in the source set, its subtree costs c(n,t) plus, per child, the
    cheaper of cutting the arc to it and the child's own subtree. Returns {sample i: g^i ≤
    the capacity of that cut} for every i whose g^i exceeds the cut's value by ``tolerance``
    (a compiled instance's: rows, as :func:`separate`).
    """
    graphs = _graphs(instance)
    g, b, w = _values(graphs)
    left_arc, right_arc = _child_arcs(graphs, b)
    capacity = {}  # (n, child) -> per-sample capacity of the arc n → child
    for r, n in enumerate(graphs.branching):
        capacity[n, flowoct.left(n)], capacity[n, flowoct.right(n)] = left_arc[r], right_arc[r]
    subtree: dict[int, np.ndarray] = {}  # n -> per-sample capacity of the cheapest cut of n's subtree with n in S
    for n in reversed(graphs.nodes):
        subtree[n] = w[graphs.position[n], graphs.label] + sum(
            (np.minimum(capacity[n, c], subtree[c]) for c in _children(graphs, n)), start=np.zeros(len(g)))
    violated = np.flatnonzero(g > subtree[graphs.nodes[0]] + tolerance)
    return _inequalities(graphs, *_cut_arcs(graphs, violated, capacity, subtree))


def _children(graphs: _FlowGraphs, n) -> tuple:
    return (flowoct.left(n), flowoct.right(n)) if graphs.row[n] >= 0 else ()


def _preorder(graphs: _FlowGraphs, n) -> list:
    """The nodes of n's subtree, depth first (n, its left subtree, its right subtree)."""
    return [n, *(m for child in _children(graphs, n) for m in _preorder(graphs, child))]


def _cut_arcs(graphs: _FlowGraphs, violated: np.ndarray, capacity: dict, subtree: dict) -> tuple[list, list]:
    """The ``violated`` samples' g^i and the capacities (variables) of the arcs of their
    cheapest cuts, each sample's depth first, with their owners (see :func:`_inequalities`)."""
    root = graphs.nodes[0]
    inside: dict[int, np.ndarray] = {root: violated}
    cutting: dict[int, np.ndarray] = {}  # node → the samples with it in S / with its arc in the cut
    owners, terms = [violated], [graphs.g[violated]]
    for n in _preorder(graphs, root):
        if n != root:  # the arc a(n) → n, cut: its b over the features that lead to n
            samples = cutting[n]
            sample, f = np.nonzero((graphs.ones[samples] > 0.5) == (n == flowoct.right(n // 2)))
            owners.append(samples[sample])
            terms.append(graphs.b[graphs.row[n // 2], f])
        samples = inside[n]
        owners.append(samples)
        terms.append(graphs.w[graphs.position[n], graphs.label[samples]])  # c(n, t)
        for child in _children(graphs, n):
            cut = capacity[n, child][samples] <= subtree[child][samples]
            cutting[child], inside[child] = samples[cut], samples[~cut]
    return owners, terms
