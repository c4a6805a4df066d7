"""BinOCT against exhaustive enumeration, across solvers and against FlowOCT at λ = 0."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.tree import DecisionTreeClassifier

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import LicenceLimitError
from odtk.formulations import binoct
from odtk.heap_trees import sklearn_tree
from odtk.models import DecisionGraph
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, solve_instance

from brute_force import best_objective
from feasibility import assert_feasible

# (seed, rows, features, classes, depth): small random 0/1 instances
RANDOM = [(0, 16, 3, 2, 1), (1, 20, 4, 3, 1), (2, 14, 3, 2, 2), (3, 18, 4, 3, 2)]


def _random(seed: int, rows: int, features: int, classes: int):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(rows, features))
    y = rng.integers(0, classes, size=rows)
    y[:classes] = np.arange(classes)  # every class occurs
    return X, y


def _slice(name: str, rows: int, features: int):
    ds = load_dataset(name)
    X = ds.features.iloc[:rows, :features].to_numpy().astype(int)
    labels, y = np.unique(ds.target.iloc[:rows].to_numpy(), return_inverse=True)
    return X, y, len(labels)


def _solve(X, y, n_classes, depth, solver):
    """Solve BinOCT; on a free licence's size limit, retry on fewer rows (never skip)."""
    while True:
        instance = binoct.build_model().create_instance(
            binoct.make_data(X, y, tree_skeleton(depth), n_classes))
        try:
            outcome = solve_instance(instance, solver, SolverOptions(time_limit=60))
        except LicenceLimitError:
            assert len(y) > 4, "instance cannot be shrunk below the licence limit"
            X, y = X[: len(y) * 3 // 4], y[: len(y) * 3 // 4]
            continue
        return instance, outcome, X, y


def _check_decoded(instance, outcome, X, y, n_classes, depth):
    graph = binoct.decode(instance)
    model = DecisionGraph(graph, [f"x{j}" for j in range(X.shape[1])],
                          [str(c) for c in range(n_classes)])
    predicted = model.predict_index(X)
    assert model.depth == depth  # BinOCT trees are complete
    reported = binoct.objective_of(graph, predicted, y, tree_skeleton(depth))
    assert reported == pytest.approx(outcome.objective, abs=1e-6)
    assert reported == int((predicted == y).sum())


@pytest.mark.parametrize("seed,rows,features,classes,depth", RANDOM)
def test_optimum_equals_exhaustive_enumeration(solver, seed, rows, features, classes, depth):
    X, y = _random(seed, rows, features, classes)
    instance, outcome, X, y = _solve(X, y, classes, depth, solver)
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(best_objective(X, y, classes, depth, 0.0), abs=1e-6)
    _check_decoded(instance, outcome, X, y, classes, depth)


def test_duplicate_rows_with_conflicting_labels(solver):
    X, y = _random(7, 6, 3, 2)
    X = np.vstack([X, X, X[:3]])  # every row twice, three of them thrice
    y = np.concatenate([y, 1 - y, y[:3]])  # the copies disagree
    instance, outcome, X, y = _solve(X, y, 2, 2, solver)
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(best_objective(X, y, 2, 2, 0.0), abs=1e-6)
    _check_decoded(instance, outcome, X, y, 2, 2)


@pytest.mark.parametrize("name,rows,features,depth",
                         [("flowoct/monk1", 40, 6, 2), ("flowoct/hayes-roth", 36, 7, 1)])
def test_optimum_equals_flowoct_at_lambda_zero(name, rows, features, depth):
    X, y, n_classes = _slice(name, rows, features)
    instance, outcome, _, _ = _solve(X, y, n_classes, depth, "highs")
    flow = odtk.solve("flowoct", (X, y), depth=depth, lam=0.0, solver="highs")
    assert outcome.termination == flow.termination == "optimal"
    assert outcome.objective == pytest.approx(flow.objective, abs=1e-6)
    _check_decoded(instance, outcome, X, y, n_classes, depth)


def test_depth_zero_predicts_the_majority_class():
    X, y = _random(5, 12, 3, 3)
    instance, outcome, _, _ = _solve(X, y, 3, 0, "highs")
    assert outcome.objective == pytest.approx(np.bincount(y).max(), abs=1e-6)
    assert dict(binoct.decode(instance).nodes(data=True)) == {1: {"label": int(np.bincount(y).argmax())}}


def test_model_size_follows_the_formulation():
    X = np.array([[0, 1, 1], [1, 1, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]])  # feature 1 constant
    y = np.array([0, 1, 1, 0, 2])
    instance = binoct.build_model().create_instance(binoct.make_data(X, y, tree_skeleton(2), 3))
    n, features, branching, leaves, classes = 5, 3, 3, 4, 3
    assert len(instance.f) == branching * features
    assert len(instance.l) == n * leaves
    assert len(instance.p) == len(instance.e) == leaves * classes
    assert len(instance.one_leaf) == n
    # (5) leaves out the constant feature 1: its group {i : x_i1 = 0} is empty
    assert len(instance.left_path) == branching * features
    assert len(instance.right_path) == branching * (features - 1)
    assert list(instance.LL[1]) == [4, 5] and list(instance.RL[1]) == [6, 7]
    assert [instance.M1[j] for j in range(3)] == [2, 5, 3]
    for component in instance.component_objects():
        assert component.doc, f"{component.name} has no doc"
    assert binoct.HYPERPARAMETERS == {} and binoct.SENSE == "maximize"


# --------------------------------------------------------------------------- warm start
# (seed, rows, features, classes, depth): solved twice each, so kept tiny
WARM = [(0, 12, 3, 2, 1), (1, 12, 3, 3, 2), (2, 10, 3, 2, 3)]


def _instance(X, y, k, depth):
    return binoct.build_model().create_instance(binoct.make_data(X, y, tree_skeleton(depth), k))


def _predict(graph, X, k):
    return DecisionGraph(graph, [f"x{j}" for j in range(X.shape[1])], [str(c) for c in range(k)]).predict_index(X)


def _tree(nodes: dict) -> nx.DiGraph:
    """A heap-ordered tree from {node: {"feature": j} or {"label": c}}."""
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes.items())
    for n, attrs in nodes.items():
        if "feature" in attrs:
            graph.add_edge(n, 2 * n, outcome=False)
            graph.add_edge(n, 2 * n + 1, outcome=True)
    return graph


def _random_tree(rng, depth, p, k, stop=0.3, n=1):
    """A random heap-ordered tree of depth ≤ ``depth`` whose leaves may stop early."""
    if depth == 0 or (n > 1 and rng.random() < stop):
        return {n: {"label": int(rng.integers(k))}}
    return {n: {"feature": int(rng.integers(p))}, **_random_tree(rng, depth - 1, p, k, stop, 2 * n),
            **_random_tree(rng, depth - 1, p, k, stop, 2 * n + 1)}


def _assert_loaded(instance, graph, X, y, k, depth):
    """All constraints, bounds and integralities hold and the objective is the tree's."""
    assert_feasible(instance)
    for var in instance.component_data_objects(pyo.Var):  # l and e are whole numbers too, at a tree
        assert abs(var.value - round(var.value)) <= 1e-6, var.name
    expected = binoct.objective_of(graph, _predict(graph, X, k), y, tree_skeleton(depth))
    assert pyo.value(instance.objective) == pytest.approx(expected, abs=1e-6)
    return expected


@pytest.mark.parametrize("seed,rows,features,classes,depth", WARM)
def test_warm_start_loads_feasible_trees(seed, rows, features, classes, depth):
    X, y = _random(seed, rows, features, classes)
    solved = _instance(X, y, classes, depth)
    cold = solve_instance(solved, "highs", SolverOptions(time_limit=60))
    assert cold.termination == "optimal"
    rng = np.random.default_rng(seed)
    cart = sklearn_tree(DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y))
    trees = {"decoded": binoct.decode(solved), "cart": cart, "leaf": _tree({1: {"label": 1}}),
             "stump": _tree({1: {"feature": features - 1}, 2: {"label": 1}, 3: {"label": 0}}),
             **{f"random{i}": _tree(_random_tree(rng, depth, features, classes)) for i in range(4)}}
    if depth >= 2:
        trees["early"] = _tree({1: {"feature": 0}, 2: {"label": 1}, 3: {"feature": 1},
                                6: {"label": 0}, 7: {"label": 1}})
    for name, graph in trees.items():
        instance = _instance(X, y, classes, depth)
        binoct.warm_start(instance, graph, X)
        value = _assert_loaded(instance, graph, X, y, classes, depth)
        completed = binoct.decode(instance)  # complete, with the same predictions
        assert len(completed) == 2 ** (depth + 1) - 1
        assert (_predict(completed, X, classes) == _predict(graph, X, classes)).all(), name
        if name == "decoded":  # round trip
            assert value == pytest.approx(cold.objective, abs=1e-6)
            assert nx.utils.graphs_equal(completed, graph)
    instance = _instance(X, y, classes, depth)
    binoct.warm_start(instance, cart, X)
    warm = solve_instance(instance, "highs", SolverOptions(time_limit=60), warm_start=True)
    assert warm.termination == "optimal"
    assert warm.objective == pytest.approx(cold.objective, abs=1e-6)


def test_warm_start_completes_early_leaves():
    X, y = _random(4, 12, 3, 2)
    instance = _instance(X, y, 2, 3)
    binoct.warm_start(instance, _tree({1: {"feature": 2}, 2: {"label": 0}, 3: {"label": 1}}), X)
    assert [max(instance.F, key=lambda j: pyo.value(instance.f[n, j])) for n in instance.B] == [2, 0, 0, 0, 0, 0, 0]
    assert [max(instance.K, key=lambda c: pyo.value(instance.p[t, c])) for t in instance.L] == [0] * 4 + [1] * 4


def test_warm_start_rejects_trees_that_do_not_fit():
    X, y = _random(0, 8, 3, 2)
    instance = _instance(X, y, 2, 1)
    deep = _tree({1: {"feature": 0}, 2: {"feature": 1}, 3: {"label": 0}, 4: {"label": 0}, 5: {"label": 1}})
    with pytest.raises(ValueError, match="deeper than the instance's depth 1"):
        binoct.warm_start(instance, deep, X)
    with pytest.raises(ValueError, match="not a split"):
        binoct.warm_start(instance, _tree({1: {"label": 0}, 3: {"label": 1}}), X)
    with pytest.raises(ValueError, match="not a class"):
        binoct.warm_start(instance, _tree({1: {"feature": 0}, 2: {"label": 0}, 3: {"label": 2}}), X)
    with pytest.raises(ValueError, match="feature 3"):
        binoct.warm_start(instance, _tree({1: {"feature": 3}, 2: {"label": 0}, 3: {"label": 1}}), X)
    with pytest.raises(ValueError, match="shape"):
        binoct.warm_start(instance, _tree({1: {"label": 0}}), X[:, :2])
