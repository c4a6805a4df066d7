"""OCT (Bertsimas & Dunn on binary features) against exhaustive enumeration and FlowOCT."""
from __future__ import annotations

import re

import numpy as np
import pyomo.environ as pyo
import pytest

from odtk.datasets import load_dataset
from odtk.formulations import flowoct, oct
from odtk.models import DecisionGraph
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, solve_instance

from brute_force import best_objective

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


def test_nodes_below_a_non_splitting_node_collapse():
    X, _ = _random(3, 12, 3, 2)
    y = np.where(X[:, 1] == 1, 1, 0)  # one split on feature 1 classifies everything
    instance, outcome = _solve(oct, X, y, 2, 2, lam=0.1)
    graph = oct.decode(instance)
    assert outcome.objective == pytest.approx(0.9 * 12 - 0.1)
    assert dict(graph.nodes(data=True)) == {1: {"feature": 1}, 2: {"label": 0}, 3: {"label": 1}}
    assert graph.edges[1, 2]["outcome"] is False and graph.edges[1, 3]["outcome"] is True

    single = np.zeros(12, dtype=int)  # one class only: no split pays for itself
    instance, outcome = _solve(oct, X, single + 1, 2, 2, lam=0.1)
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
    model = oct.build_model()
    for component in [*model.component_objects(pyo.Constraint), *model.component_objects(pyo.Objective)]:
        assert re.match(r"\(\d+(\.\d+)?[a-z]?\) ", component.doc or ""), component.name
    for component in model.component_objects((pyo.Var, pyo.Set, pyo.Param)):
        assert component.doc, component.name
    assert not re.search(r"^\s*(from|import)\s+odtk", open(oct.__file__).read(), re.M)
