"""BinOCT against exhaustive enumeration, across solvers and against FlowOCT at λ = 0."""
from __future__ import annotations

import numpy as np
import pytest

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import LicenceLimitError
from odtk.formulations import binoct
from odtk.models import DecisionGraph
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, solve_instance

from brute_force import best_objective

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
