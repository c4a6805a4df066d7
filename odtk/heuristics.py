"""Constructive multi-start heuristic for decision diagrams.

Step 1 of the two-step training of Florio, Martins, Schiffer, Serra & Vidal,
"Optimal Decision Diagrams for Classification" (AAAI 2023), section "Training
Strategy". Each start builds a diagram layer by layer:

1. every node of the layer takes the univariate split of least weighted entropy
   (``x_j >= t`` goes to the positive side, ``t`` the upper sample's value, with
   consecutive values at least ``EPSILON`` apart so the MILP's strict margin holds);
   a flow that is pure, or that no split separates, goes to its majority-class terminal
   without taking a place in the next layer;
2. while the flows leaving the layer outnumber the next layer's width, the pair
   whose merge increases the weighted entropy least is merged, never both sides of
   one node (if only those remain, the flow with fewer minority samples goes to its
   terminal); flows leaving the last internal layer go to majority-class terminals;
3. bottom up, a node whose two arcs both reach terminals is removed (each incoming
   flow then goes to its majority-class terminal) when that does not worsen (18).

The first start splits on all features, later ones on a random subset of
``feature_fraction`` of them at every split; the best diagram by objective (18),
misclassified / n + α · (active internal nodes other than the root) / (|V_I| − 1),
is returned. With ``sample_weight`` every count above — class counts of the entropies,
majorities, errors and n — is a total weight (unit weights give the same diagrams). The result
follows the decoded-graph convention of :mod:`odtk.models`.

Inside a solve the starts also end at the solve budget's deadline or on a signal: the budget is
looked at before every split and merge, so a start in progress is dropped within one of them and
the best diagram of the finished starts is returned (``status`` says why it ended).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from odtk.budget import Budget, Stopped
from odtk.exceptions import DataError

EPSILON = 1e-4  # least gap between the two sides of a split, as in the MILP
REPORT_SECONDS = 0.5  # progress goes to the budget at most this often

Target = tuple[str, int]  # ("node", node id) or ("leaf", class index)
Arc = tuple[int, bool]  # (node id, outcome)


@dataclass(frozen=True)
class HeuristicResult:
    """Best diagram found: decoded graph, objective (18) and its parts, effort spent."""

    graph: nx.DiGraph
    objective: float
    misclassified: float  # the misclassified rows' total weight (their count without weights)
    active_nodes: int
    starts: int
    seconds: float
    status: str = "done"  # "done" (its own limits), "time_limit" (the solve's deadline) or "interrupted"


@dataclass
class _Node:
    layer: int
    feature: int
    threshold: float
    flows: dict[bool, np.ndarray]  # training samples leaving by each outcome
    arcs: dict[bool, Target] = field(default_factory=dict)


@dataclass
class _Flow:
    arcs: list[Arc]  # the arcs this flow arrives by (empty for the root)
    samples: np.ndarray


def construct_diagram(X: np.ndarray, y: np.ndarray, widths: list[int], n_classes: int, *,
                      alpha: float = 0.01, time_budget: float = 5.0, max_starts: int | None = None,
                      feature_fraction: float = 0.6, seed: int = 0,
                      sample_weight: np.ndarray | None = None, budget: Budget | None = None) -> HeuristicResult:
    """Best diagram of several constructive starts within ``time_budget`` seconds.

    ``X`` holds features scaled to [0, 1], ``y`` class indices ``0..n_classes-1`` and
    ``widths`` the maximum number of internal nodes per layer (root first); ``sample_weight``
    (non-negative, not all zero) weighs the rows in every count. ``budget`` (the solve's
    :class:`~odtk.budget.Budget`) stops the starts early, within one split, at its deadline or on a
    signal, and receives the best objective and the number of starts (``incumbent``, ``rounds``);
    the best diagram so far is returned then (the majority class alone if no start has ended).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=int)
    if X.ndim != 2 or len(X) == 0 or len(X) != len(y):
        raise DataError(f"Need a non-empty 2-D X with one label per row; got {X.shape} and {y.shape}.")
    if y.min() < 0 or y.max() >= n_classes:
        raise DataError(f"Labels must be class indices 0..{n_classes - 1}.")
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    onehot = np.eye(n_classes)[y] * weight[:, None]  # each row's weight in its class's column
    total = onehot.sum()
    n_features = X.shape[1]
    subset_size = max(1, int(n_features * feature_fraction))
    penalty = alpha / max(sum(widths) - 1, 1)
    watch = _Watch(budget)
    best: tuple[float, dict[int, _Node]] = (_misclassified({}, onehot) / total, {})  # the root alone
    starts = 0
    try:
        while (max_starts is None or starts < max_starts) and (
                starts == 0 or time.perf_counter() - started < time_budget):
            subset = None if starts == 0 else subset_size
            nodes = _construct(X, y, onehot, widths, subset, rng, watch)
            _prune(nodes, onehot, len(widths), penalty * total)
            value = _misclassified(nodes, onehot) / total + penalty * max(len(nodes) - 1, 0)
            if starts == 0 or value < best[0]:
                best = value, nodes
            starts += 1
            watch.report(best[0], starts, force=starts == 1)
    except (_Halt, Stopped):
        watch.halted()
    watch.report(best[0], starts, force=True)
    value, nodes = best
    graph = _to_graph(nodes, onehot, n_features, len(widths))
    internal = sum(1 for _, attrs in graph.nodes(data=True) if "label" not in attrs)
    return HeuristicResult(graph, value, _misclassified(nodes, onehot), internal, starts,
                           time.perf_counter() - started, watch.status)


class _Halt(Exception):
    """The solve's budget asks the heuristic to stop."""


class _Watch:
    """The solve's budget seen from the heuristic: whether to stop, and its progress reports."""

    def __init__(self, budget: Budget | None):
        self.budget, self.status, self.reported = budget, "done", -float("inf")

    def check(self) -> None:
        """Raise :class:`_Halt` when the budget says stop (a signal, or its deadline)."""
        if self.budget is not None and self.budget.should_stop():
            raise _Halt

    def report(self, objective: float, starts: int, force: bool = False) -> None:
        """The best objective and the starts so far, at most every ``REPORT_SECONDS``."""
        if self.budget is None:
            return
        now = time.perf_counter()
        if force or now - self.reported >= REPORT_SECONDS:
            self.reported = now
            self.budget.report(incumbent=objective, rounds=starts)

    def halted(self) -> None:
        self.status = "interrupted" if self.budget is None or self.budget.stop_requested else "time_limit"


def _features(n_features: int, subset: int | None, rng: np.random.Generator) -> np.ndarray:
    """All feature indices, or a sorted random subset of ``subset`` of them."""
    if subset is None:
        return np.arange(n_features)
    return np.sort(rng.choice(n_features, size=subset, replace=False))


def _construct(X: np.ndarray, y: np.ndarray, onehot: np.ndarray, widths: list[int],
               subset: int | None, rng: np.random.Generator, watch: _Watch) -> dict[int, _Node]:
    """One top-down pass: split every node of a layer, then fit its flows to the next width."""
    nodes: dict[int, _Node] = {}
    flows = [_Flow([], np.arange(len(y)))]
    for layer, width in enumerate(widths):
        flows, to_leaves = _fit_width(flows, width, onehot, watch)
        following = []
        for flow in flows:
            watch.check()
            split = _best_split(X, onehot, flow.samples, _features(X.shape[1], subset, rng))
            if split is None:
                to_leaves.append(flow)
                continue
            node_id = len(nodes)
            feature, threshold = split
            positive = X[flow.samples, feature] >= threshold
            nodes[node_id] = _Node(layer, feature, threshold,
                                   {True: flow.samples[positive], False: flow.samples[~positive]})
            _connect(nodes, flow.arcs, ("node", node_id))
            for outcome, part in nodes[node_id].flows.items():
                if _is_pure(y[part]):
                    nodes[node_id].arcs[outcome] = ("leaf", int(y[part[0]]))
                else:
                    following.append(_Flow([(node_id, outcome)], part))
        for flow in to_leaves:
            _connect(nodes, flow.arcs, ("leaf", _majority(onehot, flow.samples)))
        flows = following
    for flow in flows:  # leaving the last internal layer
        _connect(nodes, flow.arcs, ("leaf", _majority(onehot, flow.samples)))
    return nodes


def _best_split(X: np.ndarray, onehot: np.ndarray, samples: np.ndarray,
                features: np.ndarray) -> tuple[int, float] | None:
    """(feature, threshold) of least weighted entropy; ties go to the most balanced split.

    ``None`` when the samples are pure or no two consecutive values are ``EPSILON`` apart.
    """
    classes = onehot[samples]
    total = classes.sum(axis=0)
    if np.count_nonzero(total) < 2:
        return None
    values = X[np.ix_(samples, features)]
    order = np.argsort(values, axis=0, kind="stable")
    ordered = np.take_along_axis(values, order, axis=0)
    valid = ordered[:-1] <= ordered[1:] - EPSILON  # cut between rows r and r + 1
    if not valid.any():
        return None
    left = np.cumsum(classes[order], axis=0)[:-1]  # (m - 1) × features × classes
    cost = np.where(valid, _weighted_entropy(left) + _weighted_entropy(total - left), np.inf)
    lowest = cost.min()
    sizes = np.arange(1, len(samples))[:, None]
    smallest_side = np.minimum(sizes, len(samples) - sizes)
    balance = np.where(cost <= lowest + 1e-9 * (1 + lowest), smallest_side, -1)
    column, cut = np.unravel_index(np.argmax(balance.T), balance.T.shape)
    return int(features[column]), float(ordered[cut + 1, column])


def _fit_width(flows: list[_Flow], width: int, onehot: np.ndarray,
               watch: _Watch) -> tuple[list[_Flow], list[_Flow]]:
    """Merge flows greedily until ``width`` remain; returns (kept flows, flows sent to terminals).

    The pair of least entropy increase is merged first (smaller flows win ties); when
    only both sides of one node are left, the flow with fewest minority samples
    goes to its terminal instead.
    """
    flows = sorted(flows, key=lambda f: len(f.samples))
    to_leaves: list[_Flow] = []
    while len(flows) > width:
        watch.check()
        counts = np.array([onehot[f.samples].sum(axis=0) for f in flows])
        increase = (_weighted_entropy(counts[:, None] + counts[None, :])
                    - _weighted_entropy(counts)[:, None] - _weighted_entropy(counts)[None, :])
        parents = [{u for u, _ in f.arcs} for f in flows]
        allowed = np.array([[i < j and not parents[i] & parents[j] for j in range(len(flows))]
                            for i in range(len(flows))])
        if not allowed.any():
            to_leaves.append(flows.pop(int(np.argmin(counts.sum(axis=1) - counts.max(axis=1)))))
            continue
        i, j = np.unravel_index(np.argmin(np.where(allowed, increase, np.inf)), allowed.shape)
        merged = _Flow(flows[i].arcs + flows[j].arcs, np.concatenate([flows[i].samples, flows[j].samples]))
        flows = [f for k, f in enumerate(flows) if k not in (i, j)] + [merged]
    return flows, to_leaves


def _prune(nodes: dict[int, _Node], onehot: np.ndarray, n_layers: int, node_cost: float) -> None:
    """Bottom up, drop nodes feeding only terminals when that costs at most ``node_cost`` errors.

    A root whose two arcs reach the same terminal buys nothing and is dropped too.
    """
    for layer in range(n_layers - 1, 0, -1):
        for v in [v for v, node in nodes.items() if node.layer == layer]:
            if all(kind == "leaf" for kind, _ in nodes[v].arcs.values()):
                _prune_node(nodes, v, onehot, node_cost)
    if nodes and nodes[0].arcs[True] == nodes[0].arcs[False]:
        nodes.clear()


def _prune_node(nodes: dict[int, _Node], v: int, onehot: np.ndarray, node_cost: float) -> None:
    """Send every flow into ``v`` to its majority-class terminal if that costs ≤ ``node_cost`` errors."""
    incoming = [(u, o) for u, node in nodes.items() for o, t in node.arcs.items() if t == ("node", v)]
    flows = {(u, o): nodes[u].flows[o] for u, o in incoming}
    labels = {arc: _majority(onehot, flow) for arc, flow in flows.items()}
    errors_now = sum(_errors(onehot, nodes[v].flows[o], k) for o, (_, k) in nodes[v].arcs.items())
    errors_after = sum(_errors(onehot, flow, labels[arc]) for arc, flow in flows.items())
    if errors_after - errors_now <= node_cost:
        for (u, o), label in labels.items():
            nodes[u].arcs[o] = ("leaf", label)
        del nodes[v]


def _misclassified(nodes: dict[int, _Node], onehot: np.ndarray) -> float:
    """Training errors of the diagram (of the majority class alone when it has no node)."""
    if not nodes:
        every_row = np.arange(len(onehot))
        return _errors(onehot, every_row, _majority(onehot, every_row))
    return sum(_errors(onehot, node.flows[o], k)
               for node in nodes.values() for o, (kind, k) in node.arcs.items() if kind == "leaf")


def _to_graph(nodes: dict[int, _Node], onehot: np.ndarray, n_features: int, n_layers: int) -> nx.DiGraph:
    """Decoded graph: internal ids 0..m-1 layer by layer, the terminal of class k is m + k.

    Splits are one-hot hyperplanes: ``x_j >= t`` follows the ``outcome=True`` arc. With no
    node left, the root (always active in the MILP) keeps a constant test ``0 >= 0`` that
    sends every sample to the majority class.
    """
    order = sorted(nodes, key=lambda v: (nodes[v].layer, v))
    new_id = {v: i for i, v in enumerate(order)}
    m = len(order)
    graph = nx.DiGraph()
    n_classes = onehot.shape[1]
    if not nodes:
        label = _majority(onehot, np.arange(len(onehot)))
        graph.add_node(0, layer=0, weights=[0.0] * n_features, threshold=0.0)
        for outcome, k in ((True, label), (False, (label + 1) % n_classes)):
            graph.add_node(1 + k, label=k, layer=n_layers)
            graph.add_edge(0, 1 + k, outcome=outcome)
        return graph
    for v in order:
        weights = [0.0] * n_features
        weights[nodes[v].feature] = 1.0
        graph.add_node(new_id[v], layer=nodes[v].layer, weights=weights, threshold=nodes[v].threshold)
    for v in order:
        for outcome, (kind, k) in nodes[v].arcs.items():
            target = new_id[k] if kind == "node" else m + k
            if kind == "leaf":
                graph.add_node(target, label=k, layer=n_layers)
            graph.add_edge(new_id[v], target, outcome=outcome)
    return graph


def _connect(nodes: dict[int, _Node], arcs: list[Arc], target: Target) -> None:
    for u, outcome in arcs:
        nodes[u].arcs[outcome] = target


def _weighted_entropy(counts: np.ndarray) -> np.ndarray:
    """n · H(p) over the last axis of class counts (natural log)."""
    total = counts.sum(axis=-1)
    return _xlogx(total) - _xlogx(counts).sum(axis=-1)


def _xlogx(values: np.ndarray) -> np.ndarray:
    return values * np.log(np.where(values > 0, values, 1))


def _majority(onehot: np.ndarray, samples: np.ndarray) -> int:
    """The class of greatest weight among ``samples`` (the first of a tie)."""
    return int(onehot[samples].sum(axis=0).argmax())


def _errors(onehot: np.ndarray, samples: np.ndarray, label: int) -> float:
    """The weight of the ``samples`` whose class is not ``label``."""
    counts = onehot[samples].sum(axis=0)
    return float(counts.sum() - counts[label])


def _is_pure(labels: np.ndarray) -> bool:
    return bool((labels == labels[0]).all())
