"""OCT (Bertsimas & Dunn on binary features) against exhaustive enumeration and FlowOCT."""
from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.tree import DecisionTreeClassifier

from odtk.datasets import load_dataset
from odtk.formulations import flowoct, oct
from odtk.heap_trees import sklearn_tree
from odtk.models import DecisionGraph
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, solve_instance

from brute_force import all_trees, best_objective
from feasibility import assert_feasible

# (seed, samples, features, classes, depth, λ): small enough for the free Gurobi/CPLEX licences
RANDOM = [(0, 16, 4, 2, 1, 0.0), (1, 14, 3, 3, 2, 0.1), (2, 16, 4, 2, 2, 0.0), (3, 12, 4, 3, 2, 0.1)]


def _random(seed: int, n: int, p: int, k: int):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (n, p)), rng.integers(0, k, n)


def _slice(name: str, rows: int, features: int):
    ds = load_dataset(name)
    X = ds.features.iloc[:rows, :features].to_numpy().astype(int)
    labels, y = np.unique(ds.target.iloc[:rows].to_numpy(), return_inverse=True)
    return X, y, len(labels)


def _solve(module, X, y, n_classes, depth, solver="highs", **hyper):
    skeleton = tree_skeleton(depth)
    instance = module.build_model().create_instance(module.make_data(X, y, skeleton, n_classes, **hyper))
    outcome = solve_instance(instance, solver, SolverOptions(time_limit=60))
    return instance, outcome


def _decoded_objective(instance, X, y, n_classes, depth, lam):
    graph = oct.decode(instance)
    model = DecisionGraph(graph, [f"x{j}" for j in range(X.shape[1])], [str(k) for k in range(n_classes)])
    predicted = model.predict_index(X)
    return graph, oct.objective_of(graph, predicted, y, tree_skeleton(depth), lam=lam)


@pytest.mark.parametrize("seed,n,p,k,depth,lam", RANDOM)
def test_optimum_equals_exhaustive_enumeration(solver, seed, n, p, k, depth, lam):
    X, y = _random(seed, n, p, k)
    instance, outcome = _solve(oct, X, y, k, depth, solver, lam=lam)
    assert outcome.termination == "optimal"
    best = best_objective(X, y, k, depth, lam)
    assert outcome.objective == pytest.approx(best, abs=1e-6)
    graph, decoded = _decoded_objective(instance, X, y, k, depth, lam)
    assert decoded == pytest.approx(outcome.objective, abs=1e-6)  # odtk's self-check
    assert DecisionGraph(graph, [f"x{j}" for j in range(p)], [str(c) for c in range(k)]).depth <= depth


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_decoded_tree_reproduces_the_objective(depth):
    X, y = _random(7, 20, 4, 3)
    for lam in (0.0, 0.1, 0.4):
        instance, outcome = _solve(oct, X, y, 3, depth, lam=lam)
        _, decoded = _decoded_objective(instance, X, y, 3, depth, lam)
        assert decoded == pytest.approx(outcome.objective, abs=1e-6)
        assert decoded == pytest.approx(best_objective(X, y, 3, depth, lam), abs=1e-6)


def test_equals_flowoct_on_a_bundled_slice():
    X, y, n_classes = _slice("flowoct/monk1", 40, 6)
    _, ours = _solve(oct, X, y, n_classes, 2, lam=0.05)
    _, theirs = _solve(flowoct, X, y, n_classes, 2, lam=0.05)
    assert ours.termination == theirs.termination == "optimal"
    assert ours.objective == pytest.approx(theirs.objective, abs=1e-6)


@pytest.mark.parametrize("seed,n,p,k,depth,lam", RANDOM)
def test_both_branching_forms_reach_the_exhaustive_optimum(solver, seed, n, p, k, depth, lam):
    """(24.8)–(24.9) and Aghaei et al.'s per-feature (3) admit the same trees: same proven optimum."""
    X, y = _random(seed, n, p, k)
    best = best_objective(X, y, k, depth, lam)
    for branching in oct.CHOICES["branching"]:
        instance, outcome = _solve(oct, X, y, k, depth, solver, lam=lam, branching=branching)
        assert outcome.termination == "optimal", branching
        assert outcome.objective == pytest.approx(best, abs=1e-6), branching
        _, decoded = _decoded_objective(instance, X, y, k, depth, lam)
        assert decoded == pytest.approx(outcome.objective, abs=1e-6), branching


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_disaggregated_equals_flowoct_on_a_bundled_slice(solver):
    X, y, n_classes = _slice("flowoct/monk2", 36, 7)
    for lam in (0.0, 0.2):
        _, ours = _solve(oct, X, y, n_classes, 2, solver, lam=lam, branching="disaggregated")
        _, theirs = _solve(flowoct, X, y, n_classes, 2, solver, lam=lam)
        assert ours.termination == theirs.termination == "optimal"
        assert ours.objective == pytest.approx(theirs.objective, abs=1e-6)


def test_disaggregated_rows_follow_constraint_3():
    X, y = _random(4, 9, 4, 2)
    instance = oct.build_model().create_instance(
        oct.make_data(X, y, tree_skeleton(2), 2, branching="disaggregated"))
    ones = X.sum(axis=1)
    left_pairs, right_pairs = len(instance.AL), len(instance.AR)  # 4 each at depth 2
    assert len(instance.route_left) == len(instance.route_right) == 0
    assert len(instance.left_feature) == left_pairs * ones.sum()  # one row per feature with x_ij = 1
    assert len(instance.right_feature) == right_pairs * (X.shape[1] - ones).sum()
    assert len(instance.left_split) == len(X) * left_pairs
    for i, t, a, j in instance.left_feature:
        assert X[i, j] == 1 and (t, a) in instance.AL
    with pytest.raises(ValueError, match="branching"):
        oct.make_data(X, y, tree_skeleton(1), 2, branching="other")


@pytest.mark.parametrize("branching", ["aggregated", "disaggregated"])
def test_nodes_below_a_non_splitting_node_collapse(branching):
    X, _ = _random(3, 12, 3, 2)
    y = np.where(X[:, 1] == 1, 1, 0)  # one split on feature 1 classifies everything
    instance, outcome = _solve(oct, X, y, 2, 2, lam=0.1, branching=branching)
    graph = oct.decode(instance)
    assert outcome.objective == pytest.approx(0.9 * 12 - 0.1)
    assert dict(graph.nodes(data=True)) == {1: {"feature": 1}, 2: {"label": 0}, 3: {"label": 1}}
    assert graph.edges[1, 2]["outcome"] is False and graph.edges[1, 3]["outcome"] is True

    single = np.zeros(12, dtype=int)  # one class only: no split pays for itself
    instance, outcome = _solve(oct, X, single + 1, 2, 2, lam=0.1, branching=branching)
    assert dict(oct.decode(instance).nodes(data=True)) == {1: {"label": 1}}
    assert outcome.objective == pytest.approx(0.9 * 12)


def test_min_leaf():
    X, y = _random(5, 14, 3, 2)
    _, loose = _solve(oct, X, y, 2, 2, min_leaf=0)
    assert loose.objective == pytest.approx(best_objective(X, y, 2, 2, 0.0), abs=1e-6)
    instance, strict = _solve(oct, X, y, 2, 2, min_leaf=5)
    assert strict.objective <= loose.objective + 1e-6
    counts = [sum(pyo.value(instance.z[i, t]) for i in instance.I) for t in instance.L]
    assert all(c < 0.5 or c > 4.5 for c in counts)
    with pytest.raises(ValueError, match="min_leaf"):
        oct.make_data(X, y, tree_skeleton(1), 2, min_leaf=15)


def test_model_size_follows_the_formulation():
    X, y = _random(0, 10, 3, 2)
    instance = oct.build_model().create_instance(oct.make_data(X, y, tree_skeleton(2), 2))
    n, branching, leaves, depth = 10, 3, 4, 2
    assert len(instance.a) == branching * 3 and len(instance.d) == branching
    assert len(instance.z) == n * leaves and len(instance.c) == leaves * 2
    assert len(instance.route_left) + len(instance.route_right) == n * leaves * depth
    assert len(instance.leaf_used) == n * leaves and len(instance.hierarchy) == branching - 1
    for component in instance.component_objects():
        assert component.doc, f"{component.name} has no doc"


def test_module_contract():
    """The checks of test_contract.py, for this module before it is registered."""
    assert oct.KEY == "oct" and oct.CITATION and oct.SENSE == "maximize"
    assert oct.FEATURES == "binary" and oct.SKELETON == "tree"
    for name in ("build_model", "make_data", "decode", "objective_of"):
        assert callable(getattr(oct, name))
    for name, (low, high, default) in oct.HYPERPARAMETERS.items():
        assert default is None or low <= default <= high, name
    assert not set(oct.HYPERPARAMETERS) & set(oct.CHOICES)
    assert oct.CHOICES["branching"][0] == "aggregated"  # the default keeps the stronger rows
    model = oct.build_model()
    for component in [*model.component_objects(pyo.Constraint), *model.component_objects(pyo.Objective)]:
        assert re.match(r"\(\d+(\.\d+)?[a-z]?\) ", component.doc or ""), component.name
    for component in model.component_objects((pyo.Var, pyo.Set, pyo.Param)):
        assert component.doc, component.name
    assert not re.search(r"^\s*(from|import)\s+odtk", open(oct.__file__).read(), re.M)


# --------------------------------------------------------------------------- warm start
# (seed, samples, features, classes, depth, λ): solved twice each, so kept tiny
WARM = [(0, 12, 3, 2, 1, 0.0), (1, 12, 3, 3, 2, 0.1), (2, 10, 3, 2, 3, 0.0), (4, 10, 3, 2, 3, 0.1)]


def _warm_data(seed: int, n: int, p: int, k: int):
    X, y = _random(seed, n, p, k)
    y[:k] = np.arange(k)  # every class occurs (scikit-learn's labels are class positions)
    return X, y


def _instance(X, y, k, depth, **hyper):
    return oct.build_model().create_instance(oct.make_data(X, y, tree_skeleton(depth), k, **hyper))


def _predict(graph, X, k):
    return DecisionGraph(graph, [f"x{j}" for j in range(X.shape[1])], [str(c) for c in range(k)]).predict_index(X)


def _majority_labels(graph, X, y, k):
    """``graph`` with every leaf relabelled to a majority class of its samples (OCT's (24.2)–(24.3))."""
    graph = graph.copy()
    reached = {}
    for i, row in enumerate(X):
        n = 1
        while "feature" in graph.nodes[n]:
            n = 2 * n + int(row[graph.nodes[n]["feature"]])
        reached.setdefault(n, []).append(y[i])
    for n, labels in reached.items():
        counts = np.bincount(labels, minlength=k)
        if counts[graph.nodes[n]["label"]] < counts.max():
            graph.nodes[n]["label"] = int(counts.argmax())
    return graph


def _random_tree(rng, depth, p, k, stop=0.3, n=1):
    """A random heap-ordered tree of depth ≤ ``depth`` whose leaves may stop early."""
    graph = nx.DiGraph()
    graph.add_node(n, label=int(rng.integers(k)))
    if depth > 0 and not (n > 1 and rng.random() < stop):
        graph.nodes[n].clear()
        graph.nodes[n]["feature"] = int(rng.integers(p))
        for child, outcome in ((2 * n, False), (2 * n + 1, True)):
            graph.update(_random_tree(rng, depth - 1, p, k, stop, child))
            graph.add_edge(n, child, outcome=outcome)
    return graph


def _assert_loaded(instance, graph, X, y, k, depth, lam):
    """All constraints, bounds and integralities hold and the objective is the tree's."""
    assert_feasible(instance)
    expected = oct.objective_of(graph, _predict(graph, X, k), y, tree_skeleton(depth), lam=lam)
    assert pyo.value(instance.objective) == pytest.approx(expected, abs=1e-6)
    return expected


def _hand_made(depth, p):
    """Trees with early leaves (labels fixed later by _majority_labels)."""
    trees = [nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True})])]
    nx.set_node_attributes(trees[0], {1: {"feature": p - 1}, 2: {"label": 0}, 3: {"label": 1}})
    single = nx.DiGraph()
    single.add_node(1, label=1)
    trees.append(single)
    if depth >= 2:  # left leaf early, right subtree full
        tree = nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True}),
                           (3, 6, {"outcome": False}), (3, 7, {"outcome": True})])
        nx.set_node_attributes(tree, {1: {"feature": 0}, 2: {"label": 1}, 3: {"feature": 1},
                                      6: {"label": 0}, 7: {"label": 1}})
        trees.append(tree)
    return trees


@pytest.mark.parametrize("seed,n,p,k,depth,lam", WARM)
def test_warm_start_loads_feasible_trees(seed, n, p, k, depth, lam):
    X, y = _warm_data(seed, n, p, k)
    solved = _instance(X, y, k, depth, lam=lam)
    cold = solve_instance(solved, "highs", SolverOptions(time_limit=60))
    assert cold.termination == "optimal"
    rng = np.random.default_rng(seed)
    cart = sklearn_tree(DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y))
    trees = {"decoded": oct.decode(solved), "cart": cart,
             **{f"hand{i}": _majority_labels(t, X, y, k) for i, t in enumerate(_hand_made(depth, p))},
             **{f"random{i}": _majority_labels(_random_tree(rng, depth, p, k), X, y, k) for i in range(4)}}
    for name, graph in trees.items():
        for branching in oct.CHOICES["branching"]:
            instance = _instance(X, y, k, depth, lam=lam, branching=branching)
            oct.warm_start(instance, graph, X)
            value = _assert_loaded(instance, graph, X, y, k, depth, lam)
            if name == "decoded":  # round trip
                assert value == pytest.approx(cold.objective, abs=1e-6)
    instance = _instance(X, y, k, depth, lam=lam)
    oct.warm_start(instance, cart, X)
    warm = solve_instance(instance, "highs", SolverOptions(time_limit=60), warm_start=True)
    assert warm.termination == "optimal"
    assert warm.objective == pytest.approx(cold.objective, abs=1e-6)


def test_warm_start_relabels_minority_leaves():
    """(24.3) makes a leaf predict a majority class: a minority label is loaded as the majority."""
    X, y = _warm_data(5, 12, 3, 2)
    tree = nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True})])
    nx.set_node_attributes(tree, {1: {"feature": 0}, 2: {"label": 0}, 3: {"label": 0}})
    wrong = tree.copy()
    majority = _majority_labels(tree, X, y, 2)
    for n in (2, 3):  # the minority class in both leaves
        wrong.nodes[n]["label"] = 1 - majority.nodes[n]["label"]
    instance = _instance(X, y, 2, 2, lam=0.1)
    oct.warm_start(instance, wrong, X)
    _assert_loaded(instance, majority, X, y, 2, 2, 0.1)
    assert pyo.value(instance.objective) > oct.objective_of(wrong, _predict(wrong, X, 2), y,
                                                            tree_skeleton(2), lam=0.1)


def test_warm_start_early_leaf_routes_right():
    X, y = _warm_data(6, 12, 3, 2)
    tree = nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True})])
    nx.set_node_attributes(tree, {1: {"feature": 2}, 2: {"label": 0}, 3: {"label": 1}})
    tree = _majority_labels(tree, X, y, 2)
    instance = _instance(X, y, 2, 3)
    oct.warm_start(instance, tree, X)
    assert [pyo.value(instance.d[t]) for t in instance.B] == [1, 0, 0, 0, 0, 0, 0]
    left, right = (X[:, 2] == 0).sum(), (X[:, 2] == 1).sum()
    assert {t: pyo.value(instance.Nt[t]) for t in instance.L} == {
        8: 0, 9: 0, 10: 0, 11: left, 12: 0, 13: 0, 14: 0, 15: right}
    assert all(pyo.value(instance.l[t]) == 0 and pyo.value(instance.c[t, 0]) + pyo.value(instance.c[t, 1]) == 0
               for t in (8, 9, 10, 12, 13, 14))
    assert oct.decode(instance).nodes(data=True)[1] == tree.nodes(data=True)[1]


def test_warm_start_rejects_trees_that_do_not_fit():
    X, y = _warm_data(0, 8, 3, 2)
    instance = _instance(X, y, 2, 1)
    deep = nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True}),
                       (2, 4, {"outcome": False}), (2, 5, {"outcome": True})])
    nx.set_node_attributes(deep, {1: {"feature": 0}, 2: {"feature": 1}, 3: {"label": 0},
                                  4: {"label": 0}, 5: {"label": 1}})
    with pytest.raises(ValueError, match="deeper than the instance's depth 1"):
        oct.warm_start(instance, deep, X)
    stray = nx.DiGraph()
    stray.add_nodes_from([(1, {"label": 0}), (3, {"label": 1})])
    with pytest.raises(ValueError, match="not a split"):
        oct.warm_start(instance, stray, X)
    for bad, match in (({"label": 2}, "not a class"), ({"feature": 3}, "feature 3")):
        tree = nx.DiGraph([(1, 2, {"outcome": False}), (1, 3, {"outcome": True})])
        nx.set_node_attributes(tree, {1: {"feature": 0}, 2: {"label": 0}, 3: {"label": 1}})
        tree.nodes[3 if "label" in bad else 1].update(bad)
        with pytest.raises(ValueError, match=match):
            oct.warm_start(instance, tree, X)
    with pytest.raises(ValueError, match="shape"):
        oct.warm_start(instance, stray.subgraph([1]).copy(), X[:, :2])


# --------------------------------------------------------------------------- sample weights
def test_sample_weight_optimum_equals_enumeration_and_the_decoded_tree():
    X, y = _random(7, 14, 3, 2)
    weight = np.random.default_rng(7).uniform(0, 3, 14)
    lam = 0.1
    instance, outcome = _solve(oct, X, y, 2, 2, lam=lam, sample_weight=weight)
    assert outcome.termination == "optimal"
    best = max((1 - lam) * float(weight @ (predicted == y)) - lam * splits
               for predicted, splits, _ in all_trees(X, 2, 2))
    assert outcome.objective == pytest.approx(best, abs=1e-6)
    graph = oct.decode(instance)
    decoded = oct.objective_of(graph, _predict(graph, X, 2), y, tree_skeleton(2), lam=lam,
                               sample_weight=weight)
    assert decoded == pytest.approx(outcome.objective, abs=1e-6)  # odtk's self-check, weighted


def test_min_leaf_counts_rows_not_weight():
    """Row 3 (weight 5) alone in a leaf meets N_min = 2 by weight but not by rows: no split."""
    X, y, weight = np.array([[0], [0], [0], [1]]), np.array([0, 0, 0, 1]), np.array([1.0, 1, 1, 5])
    instance, outcome = _solve(oct, X, y, 2, 1, min_leaf=2, sample_weight=weight)
    assert outcome.objective == pytest.approx(5)  # one leaf predicting class 1
    assert dict(oct.decode(instance).nodes(data=True)) == {1: {"label": 1}}
    _, free = _solve(oct, X, y, 2, 1, sample_weight=weight)
    assert free.objective == pytest.approx(8)


@pytest.mark.parametrize("branching", oct.CHOICES["branching"])
def test_warm_start_loads_weighted_counts(branching):
    X, y = _warm_data(3, 12, 3, 2)
    weight = np.random.default_rng(3).integers(0, 4, 12).astype(float)
    cart = sklearn_tree(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y, sample_weight=weight))
    instance = _instance(X, y, 2, 2, lam=0.1, branching=branching, sample_weight=weight)
    oct.warm_start(instance, cart, X)
    assert_feasible(instance)
    expected = oct.objective_of(cart, _predict(cart, X, 2), y, tree_skeleton(2), lam=0.1,
                                sample_weight=weight)
    assert pyo.value(instance.objective) == pytest.approx(expected, abs=1e-6)  # CART's: weighted majorities
