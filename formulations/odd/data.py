"""ODD's data: ``make_data`` turns a skeleton, samples and options into Pyomo data.

The skeleton's layers become the node sets and candidate arcs; the options are checked here,
with the stability bound S of (20), the fairness groups of (19) and the sample weights.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from . import CHOICES, FAIRNESS_POPULATION, POSITIVE_CLASS


def make_data(X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int, *,
              alpha: float = 0.01, epsilon: float = 1e-4, univariate: bool = False,
              tree: bool = False, domain: str = "box", fairness: str | None = None,
              fairness_form: str = "rates", xi: float | None = None, max_nodes: int | None = None,
              min_samples: int | None = None, min_share: float | None = None,
              group: np.ndarray | None = None, strengthening: str = "on",
              sample_weight: np.ndarray | None = None, min_leaf: int = 1) -> dict:
    """Pyomo data for ``create_instance``: ``X`` scaled to [0, 1] (n × p), ``y`` in ``0..n_classes-1``.

    ``skeleton`` is a layered diagram skeleton (``odtk.skeletons.diagram_skeleton``);
    ``group`` (0/1 per sample: g₁ = the 1s, g₂ = the 0s; or n × 2 0/1 columns g₁, g₂) is
    used only when ``fairness`` is on. S of (20) is ``min_samples`` or ``min_share`` · n;
    ``min_leaf`` is the least number of samples on each side of an active node (1: off).
    ``sample_weight`` weighs each sample's error in (18) (default 1; a positive total).
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=int)
    if n_classes < 2:
        raise ValueError(f"ODD needs at least two classes, got {n_classes}.")
    layers = _layers(skeleton)
    if tree and [len(nodes) for nodes in layers] != [2**l for l in range(len(layers))]:
        raise ValueError("tree=True needs a skeleton that doubles at every layer (1-2-4-…).")
    if domain not in CHOICES["domain"]:
        raise ValueError(f"domain must be 'box' or 'l1'; got {domain!r}.")
    if strengthening not in CHOICES["strengthening"]:
        raise ValueError(f"strengthening must be 'on' or 'off'; got {strengthening!r}.")
    terminals = [len(skeleton) + k for k in range(n_classes)]  # the terminal of class k
    samples = range(X.shape[0])
    return {None: {
        **_skeleton_data(layers, terminals, tree),
        "I": {None: list(samples)},
        "J": {None: list(range(X.shape[1]))},
        "x": {(i, j): float(X[i, j]) for i in samples for j in range(X.shape[1])},
        "phi": {(i, t): int(y[i] != k) for i in samples for k, t in enumerate(terminals)},
        "alpha": {None: float(alpha)},
        "epsilon": {None: float(epsilon)},
        "univariate": {None: bool(univariate)},
        "domain": {None: domain},
        "tree": {None: bool(tree)},
        "strengthening": {None: strengthening},
        "positive": {None: terminals[POSITIVE_CLASS]},
        "max_nodes": {None: len(skeleton) if max_nodes is None else int(max_nodes)},
        "min_samples": {None: _stability_bound(len(y), min_samples, min_share)},
        "min_leaf": {None: int(min_leaf)},
        **_fairness_data(y, n_classes, fairness, fairness_form, xi, group),
        **_weight_data(sample_weight),
    }}


def _weight_data(sample_weight: np.ndarray | None) -> dict:
    """The param ``weight`` when sample weights are given (else its default 1 stands)."""
    if sample_weight is None:
        return {}
    if not np.sum(sample_weight) > 0:
        raise ValueError("sample_weight must give some sample a positive weight: (18) divides by "
                         "their total.")
    return {"weight": dict(enumerate(map(float, sample_weight)))}


def _stability_bound(n: int, min_samples: int | None, min_share: float | None) -> float:
    """S of (20): a count of samples, or a share of the n training samples (0 when off)."""
    if min_samples is not None and min_share is not None:
        raise ValueError("Give the stability bound S once: min_samples (a count) "
                         "or min_share (a share of n).")
    if min_share is not None:
        if not 0 <= min_share <= 1:
            raise ValueError(f"min_share is a share of the samples, from 0 to 1; got {min_share!r}.")
        return float(min_share) * n
    return 0.0 if min_samples is None else float(int(min_samples))


def _skeleton_data(layers: list[list[int]], terminals: list[int], tree: bool) -> dict:
    """Node sets, candidate arcs (next layer — the two tree children in tree mode — or any
    terminal) and their incidence."""
    internal = [v for nodes in layers for v in nodes]
    arcs = [(u, v) for l, nodes in enumerate(layers) for u in nodes
            for v in [*_children(layers, l, u, tree), *terminals]]
    return {
        "L": {None: list(range(len(layers)))},
        "V": {None: internal},
        "VL": dict(enumerate(layers)),
        "C": {None: terminals},
        "A": {None: arcs},
        "OUT": {u: [v for uu, v in arcs if uu == u] for u in internal},
        "IN": {v: [u for u, vv in arcs if vv == v] for v in [*internal, *terminals]},
        "ORDER": {None: [] if tree else [pair for nodes in layers[1:] for pair in zip(nodes, nodes[1:])]},
        "SIBLINGS": {None: [(2 * s + 1, 2 * s + 2) for nodes in layers[:-1] for s in nodes]
                     if tree else []},
        "root": {None: layers[0][0]},
        "cls": {t: k for k, t in enumerate(terminals)},
    }


def _children(layers: list[list[int]], l: int, u: int, tree: bool) -> list[int]:
    """Internal nodes that node u of layer l may point to."""
    if l + 1 == len(layers):
        return []
    return [2 * u + 1, 2 * u + 2] if tree else layers[l + 1]


def _layers(skeleton: nx.DiGraph) -> list[list[int]]:
    """Internal nodes of the skeleton, layer by layer; they must be numbered 0, 1, … in that order."""
    depth = 1 + max(layer for _, layer in skeleton.nodes(data="layer"))
    layers = [sorted(v for v, layer in skeleton.nodes(data="layer") if layer == l) for l in range(depth)]
    if [v for nodes in layers for v in nodes] != list(range(len(skeleton))):
        raise ValueError("ODD needs a diagram skeleton: internal nodes 0, 1, … layer by layer.")
    return layers


def _fairness_data(y: np.ndarray, n_classes: int, fairness: str | None, form: str,
                   xi: float | None, group: np.ndarray | None) -> dict:
    """GROUPS, FAIR, fairness_form and xi for (19); no groups when fairness is off."""
    if form not in CHOICES["fairness_form"]:
        raise ValueError(f"fairness_form must be 'rates' or 'counts'; got {form!r}.")
    off = {"GROUPS": {None: []}, "FAIR": {}, "xi": {None: 0.0}, "fairness_form": {None: form}}
    if fairness is None:
        if xi is not None:
            raise ValueError("xi is the fairness ratio: give it together with fairness=….")
        return off
    if fairness not in FAIRNESS_POPULATION:
        raise ValueError(f"fairness must be one of {', '.join(FAIRNESS_POPULATION)}; got {fairness!r}.")
    if n_classes != 2 or xi is None or group is None:
        raise ValueError(f"fairness={fairness!r} needs two classes, a ratio xi and a 0/1 group per sample.")
    label = FAIRNESS_POPULATION[fairness]
    population = np.ones(len(y), bool) if label is None else y == label
    members = _subgroups(np.asarray(group), len(y))
    return {**off, "GROUPS": {None: [1, 2]}, "xi": {None: float(xi)},
            "FAIR": {g: np.flatnonzero(population & members[:, g - 1]).tolist() for g in (1, 2)}}


def _subgroups(group: np.ndarray, n: int) -> np.ndarray:
    """n × 2 membership of g₁, g₂: from a 0/1 vector (g₁ = the 1s, g₂ = the 0s) or from
    n × 2 0/1 columns."""
    if group.ndim == 1:
        group = np.column_stack([group == 1, group == 0]) if np.isin(group, (0, 1)).all() else group
    if group.shape != (n, 2) or not np.isin(group, (0, 1)).all():
        raise ValueError(f"group must hold 0 or 1 for each of the {n} samples "
                         "(or two 0/1 columns, subgroups g₁ and g₂).")
    return group.astype(bool)
