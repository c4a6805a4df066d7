"""Decision graphs: routing, rendering, JSON round trips."""
from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from odtk.datasets import FeatureEncoder, from_dataframe
from odtk.exceptions import ModelFileError
from odtk.models import DecisionGraph, TrainedModel


def _diagram() -> DecisionGraph:
    """x0 ? (x1 ? A : B) : (x1 ? A : C) with the two x1 tests merged where possible."""
    g = nx.DiGraph()
    g.add_node(0, feature=0)
    g.add_node(1, feature=1)
    g.add_node(2, feature=1)
    g.add_node(3, label=0)
    g.add_node(4, label=1)
    g.add_node(5, label=2)
    g.add_edges_from([(0, 1, {"outcome": False}), (0, 2, {"outcome": True}),
                      (1, 3, {"outcome": True}), (1, 4, {"outcome": False}),
                      (2, 3, {"outcome": True}), (2, 5, {"outcome": False})])
    return DecisionGraph(g, ["x0", "x1"], ["A", "B", "C"])


def test_routing_through_a_diagram():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    assert _diagram().predict_index(X).tolist() == [1, 0, 2, 0]


def test_text_rendering_mentions_every_node_once_and_refers_back():
    text = _diagram().to_text()
    assert text.splitlines()[0] == "[node 0] x0 ?"
    assert text.count("predict A") == 2 and "predict C  [node 5]" in text
    assert "digraph" in _diagram().to_dot()


@pytest.mark.parametrize("breakage", ["cycle", "two_roots", "no_label", "one_arc", "bad_feature", "bad_label"])
def test_malformed_graphs_are_refused(breakage):
    g = _diagram().graph.copy()
    if breakage == "cycle":
        g.add_edge(3, 0, outcome=True)
    elif breakage == "two_roots":
        g.add_node(9, label=0)
    elif breakage == "no_label":
        del g.nodes[5]["label"]
    elif breakage == "bad_feature":
        g.nodes[2]["feature"] = 2
    elif breakage == "bad_label":
        g.nodes[5]["label"] = -1
    else:
        g.remove_edge(2, 5)
    with pytest.raises(ModelFileError):
        DecisionGraph(g, ["x0", "x1"], ["A", "B", "C"])


@pytest.mark.parametrize("labels", [[3, 7, 3, 7, 7, 3], ["no", "yes", "no", "yes", "yes", "no"]])
def test_trained_model_json_round_trip(tmp_path, labels):
    frame = pd.DataFrame({"size": [1.0, 2.5, 3.0, 4.5, 5.0, 0.5], "kind": list("abcabc"),
                          "label": labels})
    data = from_dataframe(frame, "label")
    encoder = FeatureEncoder().fit(data)
    g = nx.DiGraph()
    g.add_node(1, feature=encoder.columns_.index("size<=2.75"))
    g.add_node(2, label=1)
    g.add_node(3, label=0)
    g.add_edges_from([(1, 2, {"outcome": True}), (1, 3, {"outcome": False})])
    classes = sorted(set(labels))
    model = TrainedModel(DecisionGraph(g, encoder.columns_, [str(c) for c in classes]),
                         encoder, classes, "flowoct", "label")
    model.save(tmp_path / "m.json")
    loaded = TrainedModel.load(tmp_path / "m.json")
    assert list(loaded.predict(data.features)) == list(model.predict(data.features))
    assert list(model.predict(data.features)) == [classes[1] if s <= 2.75 else classes[0]
                                                  for s in frame["size"]]
    with pytest.raises(Exception, match="already exists"):
        model.save(tmp_path / "m.json")
    edited = json.loads((tmp_path / "m.json").read_text())
    edited["classes"] = edited["classes"][:1]
    (tmp_path / "e.json").write_text(json.dumps(edited))
    with pytest.raises(ModelFileError, match="inconsistent"):
        TrainedModel.load(tmp_path / "e.json")


def test_hyperplane_nodes_route_and_round_trip():
    g = nx.DiGraph()
    g.add_node(0, weights=[0.5, -0.5], threshold=0.1)
    g.add_node(1, label=0)
    g.add_node(2, label=1)
    g.add_edges_from([(0, 1, {"outcome": False}), (0, 2, {"outcome": True})])
    graph = DecisionGraph(g, ["a", "b"], ["no", "yes"])
    X = np.array([[1.0, 0.0], [0.0, 0.0], [0.6, 0.2], [0.0, 1.0]])  # a·x = 0.5, 0, 0.2, -0.5
    assert graph.predict_index(X).tolist() == [1, 0, 1, 0]
    assert graph.predict_index(np.array([[0.25, 0.0]])).tolist() == [1]  # on the threshold: yes
    assert "+1·a -1·b >= 0.2" in graph.to_text()  # printed with the largest |weight| scaled to 1
    again = DecisionGraph.from_dict(json.loads(json.dumps(graph.to_dict())))
    assert again.predict_index(X).tolist() == graph.predict_index(X).tolist()
    g.nodes[0]["weights"] = [1.0]
    with pytest.raises(ModelFileError, match="weights"):
        DecisionGraph(g, ["a", "b"], ["no", "yes"])


def test_sample_shares_and_original_units():
    frame = pd.DataFrame({"length": [1.0, 3.0, 5.0, 9.0], "label": [0, 0, 1, 1]})
    data = from_dataframe(frame, "label")
    encoder = FeatureEncoder(mode="scaled").fit(data)  # length 1..9 → (x - 1) / 8
    g = nx.DiGraph()
    g.add_node(0, weights=[1.0], threshold=0.5)  # scaled 0.5 = length 5
    g.add_node(1, label=0)
    g.add_node(2, label=1)
    g.add_edges_from([(0, 1, {"outcome": False}), (0, 2, {"outcome": True})])
    model = TrainedModel(DecisionGraph(g, encoder.columns_, ["0", "1"]), encoder, [0, 1], "odd")
    text = model.to_text(data.features)
    assert "length < 5 ?  (4 samples, 100.0%)" in text  # w·x >= b read as an upper bound, negated
    assert "no:  predict 1  [node 2]  (2 samples, 50.0%)" in text
    assert model.graph.sample_counts(encoder.transform(data.features)) == {0: 4, 1: 2, 2: 2}
    counts = model.graph.sample_counts(encoder.transform(data.features))
    dot = model.graph.to_dot(counts, encoder)
    assert 'n0 [label="length < 5 ?\\n4 samples, 100.0%"]' in dot
    assert 'n0 -> n2 [label="no"]' in dot
    assert 'n2 [label="predict 1\\n2 samples, 50.0%"]' in dot
