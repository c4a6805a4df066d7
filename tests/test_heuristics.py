"""The constructive multi-start heuristic for decision diagrams."""
from __future__ import annotations

import itertools
import signal
import threading
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
from sklearn.preprocessing import LabelEncoder

from odtk import heuristics
from odtk.budget import Budget
from odtk.datasets import FeatureEncoder, load_dataset
from odtk.heuristics import EPSILON, construct_diagram
from odtk.models import DecisionGraph
from odtk.skeletons import parse_widths

SKELETONS = ["1-2-4-8", "1-2-2-2", "1-2-3-3"]


def _load(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    ds = load_dataset(name)
    X = FeatureEncoder(mode="scaled").fit(ds).transform(ds)
    y = LabelEncoder().fit_transform(ds.target)
    return X, y, int(y.max()) + 1


@pytest.fixture(scope="module", params=["uci/iris", "uci/wine"])
def data(request) -> tuple[np.ndarray, np.ndarray, int]:
    return _load(request.param)


def _decision_graph(graph: nx.DiGraph, X: np.ndarray, n_classes: int) -> DecisionGraph:
    return DecisionGraph(graph, [f"x{j}" for j in range(X.shape[1])], [str(k) for k in range(n_classes)])


def _objective(graph: nx.DiGraph, X, y, n_classes: int, widths: list[int], alpha: float) -> float:
    """Objective (18) recomputed from predictions."""
    errors = np.count_nonzero(_decision_graph(graph, X, n_classes).predict_index(X) != y)
    active = sum(1 for _, a in graph.nodes(data=True) if "label" not in a)
    return errors / len(y) + alpha * max(active - 1, 0) / (sum(widths) - 1)


def _internal(graph: nx.DiGraph) -> list[int]:
    return [v for v, a in graph.nodes(data=True) if "label" not in a]


@pytest.mark.parametrize("skeleton", SKELETONS)
def test_objective_matches_reevaluation(data, skeleton):
    X, y, k = data
    widths = parse_widths(skeleton)
    result = construct_diagram(X, y, widths, k, alpha=0.05, max_starts=5)
    assert result.objective == pytest.approx(_objective(result.graph, X, y, k, widths, 0.05))
    assert result.misclassified == np.count_nonzero(_decision_graph(result.graph, X, k).predict_index(X) != y)
    assert result.active_nodes == len(_internal(result.graph))
    assert result.starts == 5


def test_sample_weights_weigh_every_count(data):
    X, y, k = data
    widths = [1, 2, 4]
    unweighted = construct_diagram(X, y, widths, k, alpha=0.05, max_starts=3, seed=1)
    ones = construct_diagram(X, y, widths, k, alpha=0.05, max_starts=3, seed=1, sample_weight=np.ones(len(y)))
    assert nx.utils.graphs_equal(unweighted.graph, ones.graph) and ones.objective == unweighted.objective
    weight = np.random.default_rng(0).uniform(0, 3, len(y))
    weighted = construct_diagram(X, y, widths, k, alpha=0.05, max_starts=3, seed=1, sample_weight=weight)
    wrong = _decision_graph(weighted.graph, X, k).predict_index(X) != y
    assert weighted.misclassified == pytest.approx(weight @ wrong)
    active = len(_internal(weighted.graph))
    assert weighted.objective == pytest.approx(weight @ wrong / weight.sum() + 0.05 * (active - 1) / 6)
    heavy = np.where(y == 0, 1000.0, 1.0)  # class 0 outweighs all others: no row of it misclassified
    first = construct_diagram(X, y, [1, 2], k, alpha=0.0, max_starts=1, sample_weight=heavy)
    assert not (_decision_graph(first.graph, X, k).predict_index(X) != y)[y == 0].any()


@pytest.mark.parametrize("skeleton", SKELETONS)
def test_structure_follows_skeleton(data, skeleton):
    X, y, k = data
    widths = parse_widths(skeleton)
    graph = construct_diagram(X, y, widths, k, alpha=0.0, max_starts=5).graph
    internal = _internal(graph)
    assert internal == list(range(len(internal)))
    layers = [graph.nodes[v]["layer"] for v in internal]
    assert layers == sorted(layers) and layers[0] == 0
    for layer, width in enumerate(widths):
        assert layers.count(layer) <= width
    for v, attrs in graph.nodes(data=True):
        if "label" in attrs:
            assert v == len(internal) + attrs["label"] and attrs["layer"] == len(widths)
            continue
        assert sorted(d["outcome"] for *_, d in graph.out_edges(v, data=True)) == [False, True]
        for _, child in graph.out_edges(v):
            assert "label" in graph.nodes[child] or graph.nodes[child]["layer"] == attrs["layer"] + 1


def test_splits_keep_epsilon_margin(data):
    X, y, k = data
    graph = construct_diagram(X, y, [1, 2, 4, 8], k, max_starts=5).graph
    at = {0: np.arange(len(y))}
    for v in nx.topological_sort(graph):
        attrs, rows = graph.nodes[v], at.pop(v, np.array([], dtype=int))
        if "label" in attrs:
            continue
        weights, threshold = np.asarray(attrs["weights"]), attrs["threshold"]
        assert sorted(weights.tolist()) == [0.0] * (len(weights) - 1) + [1.0]
        score = X[rows] @ weights
        positive = score >= threshold
        assert np.all(score[~positive] <= threshold - EPSILON)
        for _, child, d in graph.out_edges(v, data=True):
            chosen = rows[positive == d["outcome"]]
            at[child] = np.concatenate([at.get(child, np.array([], dtype=int)), chosen])


def test_single_split_separates():
    rng = np.random.default_rng(1)
    X = rng.random((60, 3))
    y = (X[:, 1] >= 0.5).astype(int)
    result = construct_diagram(X, y, [1, 2, 4, 8], 2, max_starts=3)
    assert (result.misclassified, result.active_nodes) == (0, 1)
    assert result.objective == 0.0


def test_xor_needs_two_layers():
    X = np.repeat([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], 10, axis=0)
    y = np.repeat([0, 1, 1, 0], 10)
    result = construct_diagram(X, y, [1, 2], 2, alpha=0.0, max_starts=1)
    assert result.misclassified == 0 and result.active_nodes == 3


def test_more_starts_never_worse(data):
    X, y, k = data
    one = construct_diagram(X, y, [1, 2, 3, 3], k, max_starts=1, seed=3)
    many = construct_diagram(X, y, [1, 2, 3, 3], k, max_starts=20, seed=3)
    assert many.objective <= one.objective


def test_deterministic_for_a_seed(data):
    X, y, k = data
    a, b = (construct_diagram(X, y, [1, 2, 4, 8], k, max_starts=10, seed=7) for _ in range(2))
    assert a.objective == b.objective
    assert nx.utils.graphs_equal(a.graph, b.graph)


def test_large_alpha_prunes_to_root(data):
    X, y, k = data
    result = construct_diagram(X, y, [1, 2, 4, 8], k, alpha=100.0, max_starts=3)
    assert result.active_nodes <= 1
    assert result.objective == pytest.approx(_objective(result.graph, X, y, k, [1, 2, 4, 8], 100.0))


def test_pruning_grows_with_alpha(data):
    X, y, k = data
    results = [construct_diagram(X, y, [1, 2, 4, 8], k, alpha=alpha, max_starts=1)
               for alpha in (0.0, 0.05, 0.5)]
    nodes = [r.active_nodes for r in results]
    errors = [r.misclassified for r in results]
    assert nodes == sorted(nodes, reverse=True) and errors == sorted(errors)
    assert nodes[0] > nodes[-1]


def test_degenerate_inputs():
    X = np.zeros((5, 2))
    pure = construct_diagram(X, np.zeros(5, dtype=int), [1, 2], 2, max_starts=1)
    assert pure.active_nodes == 1 and pure.misclassified == 0  # the root's constant test
    assert _decision_graph(pure.graph, X, 2).predict_index(X).tolist() == [0] * 5
    mixed = construct_diagram(X, np.array([0, 1, 1, 0, 1]), [1, 2], 2, max_starts=1)
    assert mixed.active_nodes == 1 and mixed.misclassified == 2


def test_narrow_layers_never_merge_both_sides():
    X = np.repeat([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], 10, axis=0)
    y = np.repeat([0, 1, 2, 0], 10)
    result = construct_diagram(X, y, [1, 1, 1], 3, alpha=0.0, max_starts=1)
    _decision_graph(result.graph, X, 3)
    assert (result.misclassified, result.active_nodes) == (10, 2)


def test_time_budget_bounds_the_starts(monkeypatch):
    """Starts go on while the budget lasts, read on a fake clock that advances 0.1 s a reading:
    the start at 0 s, the checks at 0.1 s and 0.2 s pass a 0.25 s budget, the one at 0.3 s ends it."""
    readings = itertools.count(0.0, 0.1)
    monkeypatch.setattr(heuristics, "time", SimpleNamespace(perf_counter=lambda: next(readings)))
    X, y, k = _load("uci/iris")
    result = construct_diagram(X, y, [1, 2, 4, 8], k, time_budget=0.25)
    assert result.starts == 3 and result.seconds == pytest.approx(0.4)


def test_a_stop_from_another_thread_returns_the_best_diagram_so_far(recorder):
    X, y, k = _load("uci/wine")
    budget = Budget(None, recorder)
    timer = threading.Timer(0.5, budget.request_stop, [signal.SIGTERM])
    timer.start()
    try:
        result = construct_diagram(X, y, [1, 2, 4, 8], k, time_budget=600.0, budget=budget)
    finally:
        timer.cancel()
    assert result.status == "interrupted" and result.starts >= 1
    assert result.objective == pytest.approx(_objective(result.graph, X, y, k, [1, 2, 4, 8], 0.01))
    assert recorder.reports[-1] == {"incumbent": result.objective, "rounds": result.starts}
    incumbents = [report["incumbent"] for report in recorder.reports]
    assert incumbents == sorted(incumbents, reverse=True)  # the best so far only improves


@pytest.mark.parametrize("seconds, status", [(None, "interrupted"), (1e-6, "time_limit")])
def test_stopped_before_a_start_ends_the_majority_class_answers(seconds, status):
    X, y, k = _load("uci/iris")
    budget = Budget(seconds)
    if seconds is None:
        budget.request_stop(signal.SIGINT)
    result = construct_diagram(X, y, [1, 2, 4, 8], k, budget=budget)
    assert (result.status, result.starts, result.active_nodes) == (status, 0, 1)
    assert result.objective == pytest.approx(_objective(result.graph, X, y, k, [1, 2, 4, 8], 0.01))
    assert result.misclassified == len(y) - np.bincount(y).max()


def test_without_a_stop_the_heuristic_ends_by_its_own_limits():
    X, y, k = _load("uci/iris")
    result = construct_diagram(X, y, [1, 2, 4, 8], k, max_starts=3, budget=Budget(None))
    assert result.status == "done" and result.starts == 3
