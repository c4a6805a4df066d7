"""Prediction on compiled arrays: the router sends every row where a walk along the graph does.

``walk`` below is the reference: one row at a time, node by node, reading the test each node
carries. Trees, ODD diagrams (multivariate and univariate hyperplanes on scaled features,
shared nodes), categorical subset tests and saved models are routed both ways and must agree
on every row, for the prediction, the rows through every node and along every arc.
"""
from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from odtk.datasets import FeatureEncoder, load_dataset, read_csv, read_table
from odtk.heuristics import construct_diagram
from odtk.models import DecisionGraph, TrainedModel


def walk(graph: nx.DiGraph, X: np.ndarray) -> tuple[list[int], list[list]]:
    """Per row of ``X``: its class and the nodes it visits, found by following the arcs."""
    root = next(node for node in graph if graph.in_degree(node) == 0)
    labels, paths = [], []
    for x in np.asarray(X, dtype=float):
        node, path = root, [root]
        while "label" not in graph.nodes[node]:
            attrs = graph.nodes[node]
            if "feature" in attrs:
                answer = x[attrs["feature"]] > 0.5
            elif "subset" in attrs:
                answer = any(x[j] > 0.5 for j in attrs["subset"])
            else:
                answer = sum(w * v for w, v in zip(attrs["weights"], x)) >= attrs["threshold"]
            node = next(child for _, child, outcome in graph.out_edges(node, data="outcome") if outcome == answer)
            path.append(node)
        labels.append(graph.nodes[node]["label"])
        paths.append(path)
    return labels, paths


def assert_routes_like_the_walk(graph: DecisionGraph, X: np.ndarray) -> None:
    """Prediction, leaves, rows per node and rows per arc all as ``walk`` finds them."""
    labels, paths = walk(graph.graph, X)
    assert graph.predict_index(X).tolist() == labels
    assert graph.leaves(X).tolist() == [path[-1] for path in paths]
    through = {node: [i for i, path in enumerate(paths) if node in path] for node in graph.graph}
    assert {node: rows.tolist() for node, rows in graph.node_rows(X).items()} == through
    along = {(u, v): [i for i, path in enumerate(paths) if (u, v) in zip(path, path[1:])]
             for u, v in graph.graph.edges}
    assert {arc: rows.tolist() for arc, rows in graph.arc_rows(X).items()} == along
    assert graph.sample_counts(X) == {node: len(rows) for node, rows in through.items()}
    assert graph.depth == nx.dag_longest_path_length(graph.graph)


def random_tree(rng: np.random.Generator, n_features: int, depth: int, n_classes: int) -> nx.DiGraph:
    """A random univariate tree, unbalanced (a branch stops early with probability 0.3)."""
    graph, ids = nx.DiGraph(), iter(range(10**6))

    def grow(level: int) -> int:
        node = next(ids)
        if level == depth or (level and rng.random() < 0.3):
            graph.add_node(node, label=int(rng.integers(n_classes)))
            return node
        graph.add_node(node, feature=int(rng.integers(n_features)))
        for outcome in (False, True):
            graph.add_edge(node, grow(level + 1), outcome=outcome)
        return node

    grow(0)
    return graph


def random_diagram(rng: np.random.Generator, n_features: int, widths: list[int], n_classes: int,
                   univariate: bool) -> nx.DiGraph:
    """A layered diagram whose nodes share children: hyperplanes over ``n_features`` scaled
    columns (one non-zero weight when ``univariate``), class terminals at the bottom."""
    layers = [[(level, k) for k in range(width)] for level, width in enumerate(widths)]
    terminals = [("class", k) for k in range(n_classes)]
    graph = nx.DiGraph()
    for level, layer in enumerate(layers):
        below = layers[level + 1] if level + 1 < len(layers) else terminals
        for node in layer:
            weights = np.zeros(n_features)
            chosen = rng.choice(n_features, 1 if univariate else min(3, n_features), replace=False)
            weights[chosen] = rng.normal(size=len(chosen))
            graph.add_node(node, weights=weights.tolist(), threshold=float(rng.normal(scale=0.3)))
            false_child, true_child = rng.choice(len(below), 2, replace=False)
            graph.add_edge(node, below[false_child], outcome=False)
            graph.add_edge(node, below[true_child], outcome=True)
    for k, node in enumerate(terminals):
        graph.add_node(node, label=k)
    unreachable = [node for node in graph if node != (0, 0) and graph.in_degree(node) == 0]
    while unreachable:  # drop what no arc reaches, so the root is the only node without parents
        graph.remove_nodes_from(unreachable)
        unreachable = [node for node in graph if node != (0, 0) and graph.in_degree(node) == 0]
    return nx.convert_node_labels_to_integers(graph)


def named(graph: nx.DiGraph, n_features: int, n_classes: int) -> DecisionGraph:
    return DecisionGraph(graph, [f"x{j}" for j in range(n_features)], [f"c{k}" for k in range(n_classes)])


@pytest.mark.parametrize("seed", range(12))
def test_trees_route_like_the_walk(seed):
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(0, 6))
    graph = named(random_tree(rng, 7, depth, 3), 7, 3)
    X = rng.integers(0, 2, size=(300, 7)).astype(np.int8)
    assert_routes_like_the_walk(graph, X)


@pytest.mark.parametrize("univariate", [False, True], ids=["multivariate", "univariate"])
@pytest.mark.parametrize("seed", range(6))
def test_diagrams_with_shared_nodes_route_like_the_walk(seed, univariate):
    rng = np.random.default_rng(seed)
    graph = random_diagram(rng, 5, [1, 2, 3, 3], 3, univariate)
    assert any(graph.in_degree(node) > 1 for node in graph)  # paths merge
    X = rng.random((400, 5))
    assert_routes_like_the_walk(named(graph, 5, 3), X)


def test_many_rows_route_in_blocks_as_each_row_alone():
    """Rows are routed in blocks: across block boundaries every row goes where the walk sends it,
    and a row's class does not depend on the rows predicted with it."""
    rng = np.random.default_rng(7)
    graph = named(random_diagram(rng, 4, [1, 2, 4, 4], 2, univariate=False), 4, 2)
    X = rng.random((20_000, 4))
    labels = graph.predict_index(X)
    assert labels.tolist() == walk(graph.graph, X)[0]
    assert [int(graph.predict_index(X[i:i + 1])[0]) for i in range(0, 20_000, 997)] == labels[::997].tolist()


@pytest.mark.parametrize("skeleton", [[1, 2, 4, 8], [1, 2, 2, 2]])
def test_heuristic_diagrams_on_scaled_features_route_like_the_walk(skeleton):
    data = load_dataset("uci/wine")
    X = FeatureEncoder(mode="scaled").fit(data).transform(data)
    y = pd.Index(data.classes).get_indexer(data.target)
    found = construct_diagram(X, y, skeleton, 3, max_starts=3)
    assert_routes_like_the_walk(named(found.graph, X.shape[1], 3), X)


def test_subset_tests_route_like_the_walk():
    rng = np.random.default_rng(3)
    graph = nx.DiGraph()
    graph.add_node(0, subset=[0, 2])
    graph.add_node(1, subset=[3])
    graph.add_node(2, feature=5)
    graph.add_node(3, subset=[1, 3, 4])
    for node, label in ((4, 0), (5, 1), (6, 0), (7, 1), (8, 1)):
        graph.add_node(node, label=label)
    graph.add_edges_from([(0, 1, {"outcome": False}), (0, 2, {"outcome": True}), (1, 3, {"outcome": False}),
                          (1, 4, {"outcome": True}), (2, 5, {"outcome": False}), (2, 6, {"outcome": True}),
                          (3, 7, {"outcome": False}), (3, 8, {"outcome": True})])
    X = np.zeros((200, 6), dtype=np.int8)
    X[np.arange(200), rng.integers(0, 5, 200)] = 1  # one-hot group of five values
    X[:, 5] = rng.integers(0, 2, 200)
    X[:7, :5] = 0  # an unseen category: every subset test answers no
    assert_routes_like_the_walk(named(graph, 6, 2), X)


def test_a_lone_leaf_predicts_its_class_for_every_row():
    graph = nx.DiGraph()
    graph.add_node(4, label=1)
    assert_routes_like_the_walk(named(graph, 3, 2), np.zeros((5, 3)))


@pytest.fixture
def mixed() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.normal(40, 12, 120).round(1), "flag": rng.integers(0, 2, 120),
                         "colour": rng.choice(["red", "green", "blue", "1"], 120),
                         "count": rng.integers(0, 9, 120)})


ENCODINGS = [("binary", "quantiles", 6), ("binary", "midpoints", None), ("binary", "values", None),
             ("onehot", "quantiles", 4), ("scaled", "midpoints", None)]


@pytest.mark.parametrize("mode, thresholds, cap", ENCODINGS)
def test_encoding_some_columns_equals_those_columns_of_the_whole(mixed, mode, thresholds, cap):
    encoder = FeatureEncoder(mode, thresholds, cap).fit(mixed)
    whole = encoder.transform(mixed)
    rng = np.random.default_rng(1)
    for columns in ([], [0], sorted(rng.choice(whole.shape[1], 5, replace=False)), rng.permutation(whole.shape[1])):
        part = encoder.transform(mixed, columns)
        assert part.dtype == whole.dtype and part.tolist() == whole[:, columns].tolist()


@pytest.mark.parametrize("mode, thresholds, cap", ENCODINGS)
def test_saved_models_predict_on_every_kind_of_rows_like_the_walk(tmp_path, mixed, mode, thresholds, cap):
    """A model saved and loaded predicts what the walk on the whole encoding predicts, from a
    DataFrame, a CSV read as a Table or a frame, a mapping and a 2-D array alike."""
    encoder = FeatureEncoder(mode, thresholds, cap).fit(mixed)
    encoded = encoder.transform(mixed)
    rng = np.random.default_rng(2)
    n = encoded.shape[1]
    if mode == "scaled":
        graph = random_diagram(rng, n, [1, 2, 2], 3, univariate=False)
    else:
        graph = random_tree(rng, n, 4, 3)
    model = TrainedModel(DecisionGraph(graph, encoder.columns_, ["a", "b", "c"]), encoder,
                         ["a", "b", "c"], "test")
    model.save(tmp_path / "m.json")
    loaded = TrainedModel.load(tmp_path / "m.json")
    expected = np.asarray(["a", "b", "c"], dtype=object)[walk(graph, encoded)[0]].tolist()
    mixed.to_csv(tmp_path / "rows.csv", index=False)
    rows = {"frame": mixed, "table": read_table(tmp_path / "rows.csv"), "csv": read_csv(tmp_path / "rows.csv"),
            "mapping": {name: mixed[name].to_numpy() for name in mixed}, "array": mixed.to_numpy()}
    for kind, data in rows.items():
        assert loaded.predict(data).tolist() == expected, kind
    assert model.predict(mixed).tolist() == expected


def test_real_solves_route_like_the_walk(tmp_path):
    """Models odtk learns (a CP tree on binarised features, an ODD diagram on scaled ones)."""
    import odtk

    data = load_dataset("uci/iris")
    for result in (odtk.solve("cp", data, depth=3),
                   odtk.solve("odd", data, skeleton="1-2-2", strategy="heuristic", heuristic_time=1)):
        model = result.model
        model.save(tmp_path / f"{result.method}.json")
        loaded = TrainedModel.load(tmp_path / f"{result.method}.json")
        encoded = model.encoder.transform(data.features)
        assert_routes_like_the_walk(loaded.graph, encoded)
        labels = walk(model.graph.graph, encoded)[0]
        assert loaded.predict(data.features).tolist() == [model.classes[k] for k in labels]


def test_predicting_from_a_csv_needs_neither_networkx_nor_scikit_learn(tmp_path, mixed):
    """Loading a saved model and predicting on a CSV read as a Table imports neither networkx,
    scikit-learn nor SciPy (pandas reads the CSV)."""
    encoder = FeatureEncoder("binary", "quantiles", 4).fit(mixed)
    graph = random_tree(np.random.default_rng(5), len(encoder.columns_), 3, 2)
    TrainedModel(DecisionGraph(graph, encoder.columns_, ["no", "yes"]), encoder, ["no", "yes"], "test").save(
        tmp_path / "m.json")
    mixed.to_csv(tmp_path / "rows.csv", index=False)
    script = ("import sys; from odtk.models import TrainedModel; from odtk.datasets import read_table; "
              f"model = TrainedModel.load({str(tmp_path / 'm.json')!r}); "
              f"table = read_table({str(tmp_path / 'rows.csv')!r}); "
              "print(list(model.predict(table))); "
              "print([name for name in ('networkx', 'sklearn', 'scipy') if name in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    predicted, imported = done.stdout.splitlines()
    assert json.loads(imported.replace("'", '"')) == []
    expected = TrainedModel.load(tmp_path / "m.json").predict(mixed).tolist()
    assert json.loads(predicted.replace("'", '"')) == expected
