"""ODD's two routes to the standard form give the same model and the same optimum, under every
option that adds or changes rows; decode, flow_rows and warm_start read the compiled instance
as they read the Pyomo one."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest

from compiled_forms import assert_same_form, assert_same_optimum, both_routes
from odtk.formulations import odd
from odtk.models import DecisionGraph
from odtk.skeletons import diagram_skeleton
from odtk.solvers import solve_instance


def scaled_data(rows: int, features: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features in [0, 1] (some on a grid, so that ties and zeros occur) and random labels."""
    rng = np.random.default_rng(seed)
    X = rng.random((rows, features))
    X[: rows // 2] = np.round(X[: rows // 2] * 4) / 4
    y = rng.integers(0, classes, rows)
    y[:classes] = np.arange(classes)  # every class occurs
    return X, y


def routes(skeleton: str, rows: int = 14, features: int = 2, classes: int = 2, seed: int = 0, **hyper):
    X, y = scaled_data(rows, features, classes, seed)
    return both_routes(odd, X, y, diagram_skeleton(skeleton), classes, **hyper)


SKELETONS = ["1", "1-2", "1-2-2", "1-2-4", "1-1-2"]
SPLITS = [{}, {"univariate": True}, {"domain": "l1"}, {"domain": "l1", "univariate": True}]


@pytest.mark.parametrize("skeleton", SKELETONS)
@pytest.mark.parametrize("split", SPLITS, ids=["box", "univariate", "l1", "l1-univariate"])
@pytest.mark.parametrize("strengthening", ["on", "off"])
def test_diagram_routes_give_the_same_form(skeleton, split, strengthening):
    assert_same_form(*routes(skeleton, features=3, classes=3, seed=len(skeleton), strengthening=strengthening,
                             alpha=0.05, epsilon=1e-3, **split))


@pytest.mark.parametrize("skeleton", ["1-2", "1-2-4"])
@pytest.mark.parametrize("univariate", [False, True])
@pytest.mark.parametrize("strengthening", ["on", "off"])
def test_tree_mode_routes_give_the_same_form(skeleton, univariate, strengthening):
    assert_same_form(*routes(skeleton, classes=3, seed=3, tree=True, univariate=univariate,
                             strengthening=strengthening))


@pytest.mark.parametrize("fairness", ["demographic_parity", "equal_opportunity", "predictive_equality"])
@pytest.mark.parametrize("form", ["rates", "counts"])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fairness_routes_give_the_same_form(fairness, form, overlapping):
    rng = np.random.default_rng(7)
    group = rng.integers(0, 2, (16, 2)) if overlapping else rng.integers(0, 2, 16)
    assert_same_form(*routes("1-2-2", rows=16, seed=5, fairness=fairness, fairness_form=form, xi=0.8,
                             group=group))


@pytest.mark.parametrize("side", [{"max_nodes": 2}, {"max_nodes": 7}, {"min_samples": 3}, {"min_share": 0.25},
                                  {"max_nodes": 3, "min_samples": 2, "strengthening": "off"},
                                  {"min_leaf": 3}, {"min_leaf": 2, "min_samples": 5, "strengthening": "off"}],
                         ids=["parsimony", "parsimony-slack", "stability-count", "stability-share", "both-off",
                              "leaf-size", "leaf-size-stability-off"])
def test_side_constraint_routes_give_the_same_form(side):
    assert_same_form(*routes("1-2-4", seed=2, **side))


@pytest.mark.parametrize("tree", [False, True])
def test_weighted_routes_give_the_same_form(tree):
    weight = np.random.default_rng(4).integers(0, 4, 14).astype(float)
    weight[0] = 2.5
    assert_same_form(*routes("1-2-4" if tree else "1-2-2", seed=4, alpha=0.0 if tree else 0.3, tree=tree,
                             sample_weight=weight))


@pytest.mark.parametrize("hyper", [{"alpha": 0.1}, {"univariate": True, "tree": True, "alpha": 0.0},
                                   {"domain": "l1", "strengthening": "off"},
                                   {"fairness": "demographic_parity", "xi": 0.9, "group": np.arange(12) % 2},
                                   {"min_samples": 4, "max_nodes": 2}, {"min_leaf": 3}],
                         ids=["box", "tree", "l1-off", "fairness", "side", "leaf-size"])
def test_routes_give_the_same_optimum(hyper):
    skeleton = "1-2" if hyper.get("tree") else "1-2-2"
    assert_same_optimum(*routes(skeleton, rows=12, seed=1, **hyper))


def _predict(graph, X: np.ndarray) -> np.ndarray:
    names = [f"x{j}" for j in range(X.shape[1])]
    return DecisionGraph(graph, names, ["0", "1", "2"]).predict_index(X)


@pytest.mark.parametrize("univariate", [False, True])
def test_decode_and_flow_rows_read_the_solved_compiled_instance(univariate):
    X, y = scaled_data(12, 2, 3, seed=6)
    _, compiled = both_routes(odd, X, y, diagram_skeleton("1-2"), 3, alpha=0.1, univariate=univariate)
    outcome = solve_instance(compiled, "highs")
    assert outcome.termination == "optimal"
    graph = odd.decode(compiled)
    predicted = _predict(graph, X)
    assert odd.objective_of(graph, predicted, y, diagram_skeleton("1-2"), alpha=0.1) == pytest.approx(
        outcome.objective, abs=1e-6)
    flows = odd.flow_rows(compiled)
    for node, attrs in graph.nodes(data=True):
        if "label" in attrs:
            assert sorted(flows[node]) == np.flatnonzero(predicted == attrs["label"]).tolist()
    if univariate:
        assert all(np.count_nonzero(attrs["weights"]) <= 1 for _, attrs in graph.nodes(data=True)
                   if "weights" in attrs)


def _chain() -> nx.DiGraph:
    """Three univariate splits, one per layer, each ending one branch (a tree and a diagram)."""
    g = nx.DiGraph()
    g.add_node("root", weights=[1.0, 0.0], threshold=0.5, layer=0)
    g.add_node("A", weights=[0.0, 1.0], threshold=0.5, layer=1)
    g.add_node("B", weights=[1.0, 0.0], threshold=0.25, layer=2)
    for k in range(3):
        g.add_node(f"class {k}", label=k)
    g.add_edges_from([("root", "A", {"outcome": False}), ("root", "class 2", {"outcome": True}),
                      ("A", "class 1", {"outcome": False}), ("A", "B", {"outcome": True}),
                      ("B", "class 0", {"outcome": False}), ("B", "class 1", {"outcome": True})])
    return g


@pytest.mark.parametrize("hyper", [{}, {"strengthening": "off", "univariate": True}, {"tree": True},
                                   {"domain": "l1"}], ids=["diagram", "univariate-off", "tree", "l1"])
def test_warm_start_sets_the_same_values_on_both_routes(hyper):
    X, y = scaled_data(14, 2, 3, seed=8)
    skeleton = diagram_skeleton("1-2-4" if hyper.get("tree") else "1-2-2")
    pyomo_instance, compiled = both_routes(odd, X, y, skeleton, 3, alpha=0.1, **hyper)
    for instance in (pyomo_instance, compiled):
        odd.warm_start(instance, _chain(), X)
    expected = {var.name: var.value for var in pyomo_instance.component_data_objects(pyo.Var)}
    got = {var.name: var.value for var in compiled.component_data_objects(pyo.Var)}
    assert got == expected
    form = compiled.form
    activity = form.A @ compiled.values
    assert np.all(activity >= form.row_lower - 1e-9) and np.all(activity <= form.row_upper + 1e-9)
    assert float(form.c @ compiled.values + form.offset) == pytest.approx(pyo.value(pyomo_instance.objective))
    predicted = _predict(_chain(), X)
    assert pyo.value(pyomo_instance.objective) == pytest.approx(
        odd.objective_of(_chain(), predicted, y, skeleton, alpha=0.1))
