"""ODD (:mod:`odtk.formulations.odd`) compiled from arrays: the objective (18) and the rows
(1)–(20) with the strengthening S1–S3, block by block, in the model's own terms.

Every block of rows is stated once for a template (one sample, or the skeleton) and repeated
over the samples by :func:`block_rows`: row ``s · count + t`` is template row ``t`` of copy
``s``. The side constraints — fairness (19), parsimony, stability (20) and the leaf size — are stated from
``make_data``'s sets and parameters, which hold their options.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder
from odtk.compiled.instance import ArrayInstance, OrderedSet
from odtk.formulations.odd import A_BOUND, B_BOUND

# peak build memory per row × node × (column + class), at most (measured: 570 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 700


@dataclass
class Skeleton:
    """The skeleton's sets as arrays: nodes are ids 0 … |V|-1 (internal, the root first) then
    |V| … |V|+|C|-1 (terminals); arc ``a`` is ``(tail[a], head[a])`` in the order of A."""

    n_internal: int
    n_terminals: int
    layer: np.ndarray  # layer of every internal node
    tail: np.ndarray
    head: np.ndarray
    order: list  # ORDER: consecutive nodes (u, v) of a layer, for (12)
    siblings: list  # SIBLINGS: tree children (2s+1, 2s+2)

    @property
    def inner(self) -> np.ndarray:
        """The arcs into internal nodes."""
        return np.flatnonzero(self.head < self.n_internal)

    @property
    def outer(self) -> np.ndarray:
        """The arcs into terminals."""
        return np.flatnonzero(self.head >= self.n_internal)


def block_rows(form: FormBuilder, count: int, terms: list, lower=-np.inf, upper=np.inf,
               copies: int = 1) -> None:
    """``copies`` × ``count`` rows: each term ``(t, columns, coefficient)`` puts, in copy s,
    ``columns[s, k]`` with ``coefficient[s, k]`` in template row ``t[k]`` (columns and
    coefficients broadcast to copies × len(t): a 1-d array is the same in every copy).
    ``lower`` and ``upper`` broadcast to copies × count."""
    base = np.arange(copies)[:, None] * count
    row, column, coefficient = [], [], []
    for t, columns, coef in terms:
        t = np.asarray(t, dtype=np.int64).ravel()
        shape = (copies, len(t))
        row.append((base + t).ravel())
        column.append(np.broadcast_to(columns, shape).ravel())
        coefficient.append(np.broadcast_to(np.asarray(coef, dtype=float), shape).ravel())
    total = copies * count
    form.rows(np.concatenate(row), np.concatenate(column), np.concatenate(coefficient),
              np.broadcast_to(lower, (copies, count)).ravel(), np.broadcast_to(upper, (copies, count)).ravel(),
              count=total)


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int, *,
                     alpha: float = 0.01, epsilon: float = 1e-4, univariate: bool = False,
                     tree: bool = False, domain: str = "box", strengthening: str = "on",
                     sample_weight: np.ndarray | None = None, **side: object) -> ArrayInstance:
    """The ODD instance of ``make_data``'s arguments (and its ``data``), compiled; ``side``
    holds the side constraints' arguments, which ``data`` states (fairness, ``xi``, ``group``,
    ``fairness_form``, ``max_nodes``, ``min_samples``, ``min_share``, ``min_leaf``)."""
    sets = data[None]
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    strong = strengthening == "on"
    nodes, terminals = sets["V"][None], sets["C"][None]
    arcs = np.asarray(sets["A"][None], dtype=np.int64).reshape(-1, 2)
    layer = np.empty(len(nodes), dtype=np.int64)
    for l, members in sets["VL"].items():
        layer[members] = l
    graph = Skeleton(len(nodes), len(terminals), layer, arcs[:, 0], arcs[:, 1], sets["ORDER"][None],
                     sets["SIBLINGS"][None])
    samples, features, layers = range(n), range(p), sets["L"][None]
    units = list(nodes) if univariate else []
    arc_keys = [tuple(arc) for arc in arcs.tolist()]

    form = FormBuilder(maximize=False)
    root = np.arange(len(nodes)) == 0
    d = form.variables("d", nodes, lower=root.astype(float), integer=strong)
    y_neg = form.keyed_variables("y_neg", arc_keys, integer=True)
    y_pos = form.keyed_variables("y_pos", arc_keys, integer=True)
    w_neg = form.variables("w_neg", samples, nodes)
    w_pos = form.variables("w_pos", samples, nodes)
    w_term = form.variables("w_term", samples, terminals, integer=strong)
    flow_keys = [(i, u, v) for i in samples for u, v in arc_keys]
    z_neg = form.keyed_variables("z_neg", flow_keys).reshape(n, len(arc_keys))
    z_pos = form.keyed_variables("z_pos", flow_keys).reshape(n, len(arc_keys))
    lam = form.variables("lam", samples, layers, integer=True)
    a_plus = form.variables("a_plus", nodes, features, upper=A_BOUND)
    a_minus = form.variables("a_minus", nodes, features, upper=A_BOUND)
    b = form.variables("b", nodes, lower=-B_BOUND, upper=B_BOUND)
    e = form.variables("e", units, features, integer=True)

    _objective(form, y, n_classes, sample_weight, alpha, d, w_term)
    _flow_rows(form, graph, strong, d, w_neg, w_pos, w_term, z_neg, z_pos, lam)
    _topology_rows(form, graph, tree, d, y_neg, y_pos, z_neg, z_pos)
    # R_i (odd.model._reach): ‖x_i‖₁ on the box, ‖x_i‖_∞ under ‖a‖₁ ≤ 1 or with univariate splits
    reach = np.abs(X).sum(axis=1) if domain == "box" and not univariate else np.abs(X).max(axis=1, initial=0.0)
    big_m_neg, big_m_pos = A_BOUND * reach + B_BOUND + epsilon, A_BOUND * reach + B_BOUND
    _split_rows(form, X, epsilon, big_m_neg, big_m_pos, d, w_neg, w_pos, a_plus, a_minus, b)
    _domain_rows(form, domain, strong, univariate, d, a_plus, a_minus, b, e)
    _extension_rows(form, sets, d, w_neg, w_pos, w_term)
    extra: dict[str, Any] = {"N": OrderedSet([*nodes, *terminals]), "U": OrderedSet(units)}
    if "weight" not in sets:
        extra["weight"] = dict.fromkeys(samples, 1.0)
    return form.instance(data, extra)


def _objective(form: FormBuilder, y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None,
               alpha: float, d: np.ndarray, w_term: np.ndarray) -> None:
    """(18): Σ_i ω_i Σ_v φ_iv w_iv / Σ_i ω_i + α / |V_I| Σ_{v ∈ V_I} d_v."""
    y = np.asarray(y, dtype=np.int64)
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    phi = y[:, None] != np.arange(n_classes)
    form.objective(w_term, (weight[:, None] * phi).ravel() / weight.sum())
    if len(d) > 1:
        form.objective(d[1:], alpha / (len(d) - 1))


def _flow_rows(form: FormBuilder, graph: Skeleton, strong: bool, d: np.ndarray, w_neg: np.ndarray,
               w_pos: np.ndarray, w_term: np.ndarray, z_neg: np.ndarray, z_pos: np.ndarray,
               lam: np.ndarray) -> None:
    """(1)–(5) and (17), and S3's w⁻_iu + w⁺_iu ≤ d_u: one copy per sample."""
    n = len(w_neg)
    nodes = np.arange(graph.n_internal)
    inner, outer = graph.inner, graph.outer
    into = [(graph.head[inner], z[:, inner], -1.0) for z in (z_neg, z_pos)]
    block_rows(form, graph.n_internal, [(nodes, w_neg, 1.0), (nodes, w_pos, 1.0), *into],  # (1)
               np.where(nodes == 0, 1.0, 0.0), np.where(nodes == 0, 1.0, 0.0), copies=n)
    for w, z in ((w_neg, z_neg), (w_pos, z_pos)):  # (2), (3)
        block_rows(form, graph.n_internal, [(nodes, w, 1.0), (graph.tail, z, -1.0)], 0.0, 0.0, copies=n)
    n_layers = lam.shape[1]
    block_rows(form, n_layers, [(graph.layer, w_neg, 1.0), (np.arange(n_layers), lam, 1.0)],  # (4)
               upper=1.0, copies=n)
    block_rows(form, n_layers, [(graph.layer, w_pos, 1.0), (np.arange(n_layers), lam, -1.0)],  # (5), S2
               0.0 if strong else -np.inf, 0.0, copies=n)
    reach = [(graph.head[outer] - graph.n_internal, z[:, outer], -1.0) for z in (z_neg, z_pos)]
    block_rows(form, graph.n_terminals, [(np.arange(graph.n_terminals), w_term, 1.0), *reach],  # (17)
               0.0, 0.0, copies=n)
    if strong:  # S3
        block_rows(form, graph.n_internal, [(nodes, w_neg, 1.0), (nodes, w_pos, 1.0), (nodes, d, -1.0)],
                   upper=0.0, copies=n)


def _topology_rows(form: FormBuilder, graph: Skeleton, tree: bool, d: np.ndarray, y_neg: np.ndarray,
                   y_pos: np.ndarray, z_neg: np.ndarray, z_pos: np.ndarray) -> None:
    """(6)–(12) and, in tree mode, d_{2s+2} ≤ d_{2s+1}."""
    nodes, arcs = np.arange(graph.n_internal), np.arange(len(graph.tail))
    inner = graph.inner
    for y_side in (y_neg, y_pos):  # (6)
        block_rows(form, graph.n_internal, [(graph.tail, y_side, 1.0), (nodes, d, -1.0)], 0.0, 0.0)
    if graph.n_internal > 1:  # (7), the root has none
        parent = [(graph.head[inner] - 1, y_side[inner], -1.0) for y_side in (y_neg, y_pos)]
        block_rows(form, graph.n_internal - 1, [(nodes[1:] - 1, d[1:], 1.0), *parent],
                   0.0 if tree else -np.inf, 0.0)
    block_rows(form, len(arcs), [(arcs, y_neg, 1.0), (arcs, y_pos, 1.0), (inner, d[graph.head[inner]], -1.0)],
               upper=np.where(graph.head < graph.n_internal, 0.0, 1.0))  # (8)
    n = len(z_neg)
    for z, y_side in ((z_neg, y_neg), (z_pos, y_pos)):  # (10), (9)
        block_rows(form, len(arcs), [(arcs, z, 1.0), (arcs, y_side, -1.0)], upper=0.0, copies=n)
    later, earlier = np.nonzero((graph.tail[:, None] == graph.tail) & (graph.head[:, None] >= graph.head))
    block_rows(form, len(arcs), [(arcs, y_neg, 1.0), (later, y_pos[earlier], 1.0)], upper=1.0)  # (11)
    if graph.order:  # (12)
        terms = []
        for k, pair in enumerate(graph.order):
            for node, sign in zip(pair, (1.0, -1.0)):
                entering = np.flatnonzero(graph.head == node)
                terms += [(np.full(len(entering), k), y_side[entering], sign) for y_side in (y_neg, y_pos)]
        block_rows(form, len(graph.order), terms, lower=0.0)
    if graph.siblings:
        first, second = np.asarray(graph.siblings, dtype=np.int64).T
        rows = np.arange(len(first))
        block_rows(form, len(first), [(rows, d[second], 1.0), (rows, d[first], -1.0)], upper=0.0)


def _split_rows(form: FormBuilder, X: np.ndarray, epsilon: float, big_m_neg: np.ndarray,
                big_m_pos: np.ndarray, d: np.ndarray, w_neg: np.ndarray, w_pos: np.ndarray,
                a_plus: np.ndarray, a_minus: np.ndarray, b: np.ndarray) -> None:
    """(13)–(14) with big-M: one copy per sample."""
    n, p = X.shape
    nodes = np.arange(len(d))
    weights = np.repeat(nodes, p)
    x = np.tile(X, (1, len(nodes)))  # x[i, u·p + j] = x_ij
    hyperplane = [(weights, a_plus.ravel(), x), (weights, a_minus.ravel(), -x), (nodes, b, -1.0)]
    block_rows(form, len(nodes), [*hyperplane, (nodes, w_neg, big_m_neg[:, None])],  # (13)
               upper=(big_m_neg - epsilon)[:, None], copies=n)
    block_rows(form, len(nodes), [*hyperplane, (nodes, w_pos, -big_m_pos[:, None])],  # (14)
               lower=-big_m_pos[:, None], copies=n)


def _domain_rows(form: FormBuilder, domain: str, strong: bool, univariate: bool, d: np.ndarray,
                 a_plus: np.ndarray, a_minus: np.ndarray, b: np.ndarray, e: np.ndarray) -> None:
    """The split's domain: ‖a_u‖₁ ≤ 1 (l1), (15)–(16) (univariate) and S3's zero split at
    inactive nodes."""
    nodes = np.arange(len(d))
    n_features = a_plus.shape[1]
    weights = np.repeat(nodes, n_features)
    activity = [(nodes, d, -1.0)] if strong else []  # S3: ≤ d_u instead of ≤ 1
    if domain == "l1":
        block_rows(form, len(nodes), [(weights, a_plus.ravel(), 1.0), (weights, a_minus.ravel(), 1.0), *activity],
                   upper=0.0 if strong else A_BOUND)
    if univariate:
        block_rows(form, len(nodes), [(weights, e.ravel(), 1.0), *activity],  # (15)
                   0.0 if strong else 1.0, 0.0 if strong else 1.0)
        cells = np.arange(a_plus.size)
        block_rows(form, a_plus.size, [(cells, a_plus.ravel(), 1.0), (cells, a_minus.ravel(), 1.0),  # (16)
                                       (cells, e.ravel(), -1.0)], upper=0.0)
    if not strong:
        return
    if domain == "box" and not univariate:  # S3: a⁺_uj + a⁻_uj ≤ d_u
        cells = np.arange(a_plus.size)
        block_rows(form, a_plus.size, [(cells, a_plus.ravel(), 1.0), (cells, a_minus.ravel(), 1.0),
                                       (cells, d[weights], -A_BOUND)], upper=0.0)
    for sign in (1.0, -1.0):  # S3: ±b_u ≤ d_u
        block_rows(form, len(nodes), [(nodes, b, sign), (nodes, d, -B_BOUND)], upper=0.0)


def _extension_rows(form: FormBuilder, sets: dict, d: np.ndarray, w_neg: np.ndarray, w_pos: np.ndarray,
                   w_term: np.ndarray) -> None:
    """The rows of (19), parsimony, (20) and the leaf size that ``sets`` (``make_data``'s data)
    switches on."""
    if sets["GROUPS"][None]:
        positive = w_term[:, sets["C"][None].index(sets["positive"][None])]
        _fairness_rows(form, sets["fairness_form"][None], sets["xi"][None],
                       {g: np.asarray(sets["FAIR"][g], dtype=np.int64) for g in (1, 2)}, positive)
    max_nodes = sets["max_nodes"][None]
    if max_nodes < len(d):  # parsimony: Σ_v d_v ≤ max_nodes
        form.rows(np.zeros(len(d)), d, 1.0, upper=float(max_nodes), count=1)
    bound = sets["min_samples"][None]
    if bound != 0:  # (20): Σ_i (w⁻_iv + w⁺_iv) ≥ S d_v
        n, n_nodes = w_neg.shape
        row = np.repeat(np.arange(n_nodes), n)
        form.rows(np.concatenate([row, row, np.arange(n_nodes)]),
                  np.concatenate([w_neg.T.ravel(), w_pos.T.ravel(), d]),
                  np.concatenate([np.ones(2 * row.size), np.full(n_nodes, -float(bound))]), lower=0.0,
                  count=n_nodes)
    leaf = sets["min_leaf"][None]
    if leaf > 1:  # leaf size: Σ_i w⁻_iv ≥ m d_v, then Σ_i w⁺_iv ≥ m d_v, node by node
        n, n_nodes = w_neg.shape
        row = np.repeat(2 * np.arange(n_nodes), n)
        nodes = 2 * np.arange(n_nodes)
        form.rows(np.concatenate([row, row + 1, nodes, nodes + 1]),
                  np.concatenate([w_neg.T.ravel(), w_pos.T.ravel(), d, d]),
                  np.concatenate([np.ones(2 * row.size), np.full(2 * n_nodes, -float(leaf))]), lower=0.0,
                  count=2 * n_nodes)


def _fairness_rows(form: FormBuilder, fairness_form: str, xi: float, fair: dict[int, np.ndarray],
                   positive: np.ndarray) -> None:
    """(19) on the positive-class flows ``positive[i]``: g₁'s count ≥ ξ g₂'s ("counts"), or
    |P_h| Σ_{P_g} ≥ ξ |P_g| Σ_{P_h} for both orders of {g, h} = {1, 2} ("rates")."""
    pairs = [(1, 2)] if fairness_form == "counts" else [(1, 2), (2, 1)]
    for g, h in pairs:
        scale = (1.0, 1.0) if fairness_form == "counts" else (len(fair[h]), len(fair[g]))
        form.rows(np.zeros(len(fair[g]) + len(fair[h])), np.concatenate([positive[fair[g]], positive[fair[h]]]),
                  np.concatenate([np.full(len(fair[g]), float(scale[0])), np.full(len(fair[h]), -xi * scale[1])]),
                  lower=0.0, count=1)
