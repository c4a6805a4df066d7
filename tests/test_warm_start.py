"""Warm starts across methods: CART or another method's tree starts FlowOCT and BendersOCT."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from sklearn.tree import DecisionTreeClassifier

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import ConfigError
from odtk.formulations import benders, flowoct
from odtk.heap_trees import heap_tree, sklearn_tree
from odtk.models import DecisionGraph
from odtk.skeletons import tree_skeleton

from feasibility import assert_feasible


def _binary(seed: int, n: int = 30, p: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p))
    return X, ((X[:, 0] & X[:, 1]) | X[:, 2] & (rng.random(n) < 0.7)).astype(int)


def _predict(tree: nx.DiGraph, X) -> np.ndarray:
    return DecisionGraph(tree, [f"x{j}" for j in range(X.shape[1])], ["0", "1"]).predict_index(X)


@pytest.mark.parametrize("module", [flowoct, benders], ids=["flowoct", "benders"])
@pytest.mark.parametrize("depth, cart_depth", [(2, 2), (3, 2), (3, 3)])
def test_a_cart_tree_loads_as_a_feasible_start_with_its_own_objective(module, depth, cart_depth):
    X, y = _binary(depth + cart_depth)
    tree = sklearn_tree(DecisionTreeClassifier(max_depth=cart_depth, random_state=0).fit(X, y))
    skeleton = tree_skeleton(depth)
    instance = module.build_model().create_instance(module.make_data(X, y, skeleton, 2, lam=0.1))
    module.warm_start(instance, tree, X)
    assert_feasible(instance)
    expected = module.objective_of(tree, _predict(tree, X), y, skeleton, lam=0.1)
    assert pyo.value(instance.objective) == pytest.approx(expected)


def test_sklearn_and_heap_conversions_predict_like_the_originals():
    X, y = _binary(7)
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    tree = sklearn_tree(cart)
    assert (_predict(tree, X) == cart.predict(X)).all()
    shuffled = nx.relabel_nodes(tree, {n: f"node{n}" for n in tree})
    assert nx.utils.graphs_equal(heap_tree(shuffled), tree)


def test_a_too_deep_tree_is_refused():
    X, y = _binary(8)
    tree = sklearn_tree(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y))
    instance = flowoct.build_model().create_instance(flowoct.make_data(X, y, tree_skeleton(2), 2))
    with pytest.raises(ValueError, match="deeper"):
        flowoct.warm_start(instance, tree, X)


@pytest.fixture(scope="module")
def monk_slice():
    return load_dataset("flowoct/monk1").subset(np.arange(40))


@pytest.mark.parametrize("model", ["flowoct", "benders"])
def test_cart_and_cross_method_starts_reach_the_optimum_on_every_solver(solver, model, monk_slice):
    if model == "flowoct" and solver in ("gurobi", "cplex"):
        pytest.skip("FlowOCT on 40 rows at depth 2 exceeds the free licence")
    reference = odtk.solve("flowoct", monk_slice, depth=2, lam=0.05)
    from_cart = odtk.solve(model, monk_slice, depth=2, lam=0.05, solver=solver, warm_start="cart")
    from_other = odtk.solve(model, monk_slice, depth=2, lam=0.05, solver=solver, warm_start=reference)
    for result in (from_cart, from_other):
        assert result.termination == "optimal"
        assert result.objective == pytest.approx(reference.objective, abs=1e-6)
        assert result.steps["warm_start"]["warm_start"] is True
    assert from_other.steps["warm_start"]["objective"] == pytest.approx(reference.objective)
    assert from_cart.steps["warm_start"]["objective"] <= reference.objective + 1e-9


def test_bad_warm_starts_are_one_line_config_errors(monk_slice):
    other_data = odtk.solve("flowoct", load_dataset("flowoct/monk2").subset(np.arange(20)), depth=1)
    deep = odtk.solve("flowoct", monk_slice, depth=2)
    assert deep.model.graph.depth == 2  # the premise: too deep for depth 1
    for model, given, words in [("odd", "cart", "takes no warm_start"),
                                ("flowoct", "carts", "give one of cart, best"),
                                ("flowoct", other_data, "same data"),
                                ("flowoct", deep, "does not fit")]:
        options = {"skeleton": "1-2"} if model == "odd" else {"depth": 1}
        with pytest.raises(ConfigError, match=words) as error:
            odtk.solve(model, monk_slice, warm_start=given, **options)
        assert "\n" not in str(error.value)


def test_cli_starts_benders_from_a_saved_model_and_from_cart(tmp_path, monk_slice):
    from click.testing import CliRunner

    from odtk.cli import main

    csv = tmp_path / "monk.csv"
    monk_slice.features.assign(label=monk_slice.target.to_numpy()).to_csv(csv, index=False)
    runner = CliRunner()
    saved = tmp_path / "tree.json"
    common = ["solve", "--csv", str(csv), "--target", "label", "--depth", "2"]
    first = runner.invoke(main, [*common, "--model", "flowoct", "--output", str(saved)])
    assert first.exit_code == 0, first.output
    optimum = next(line for line in first.output.splitlines() if line.startswith("objective"))
    for start in (str(saved), "cart"):
        result = runner.invoke(main, [*common, "--model", "benders", "--warm-start", start])
        assert result.exit_code == 0, result.output
        assert "step        warm_start: objective" in result.output and "the MILP's start" in result.output
        objective = next(line for line in result.output.splitlines() if line.startswith("objective"))
        assert objective.split()[1] == optimum.split()[1]
    missing = runner.invoke(main, [*common, "--model", "benders", "--warm-start", str(tmp_path / "no.json")])
    assert missing.exit_code == 1 and "Traceback" not in missing.output


def test_a_start_that_breaks_a_constraint_is_not_used():
    rng = np.random.default_rng(3)
    X, y = rng.integers(0, 2, (30, 4)), rng.integers(0, 2, 30)
    plain = odtk.solve("oct", (X, y), depth=2, min_leaf=10)
    free = odtk.solve("oct", (X, y), depth=2)  # no leaf bound
    assert np.unique(free.model.graph.leaves(free.model.encoder.transform(X)), return_counts=True)[1].min() < 10
    started = odtk.solve("oct", (X, y), depth=2, min_leaf=10, warm_start=free)
    assert started.steps["warm_start"]["warm_start"] is False  # its leaves under 10 rows break min_leaf
    assert started.objective == pytest.approx(plain.objective) and started.termination == "optimal"
    cart = odtk.solve("oct", (X, y), depth=2, min_leaf=10, warm_start="cart")  # CART grown with that leaf bound
    assert cart.steps["warm_start"]["warm_start"] is True and cart.objective == pytest.approx(plain.objective)


def _breast_cancer(rows: int = 200):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X.iloc[:rows], y.iloc[:rows]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_auto_thresholds_keep_carts_tree_so_the_optimum_is_at_least_as_accurate(depth):
    X, y = _breast_cancer()
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    result = odtk.solve("cp", (X, y), depth=depth, thresholds="auto")
    quantiles = odtk.solve("cp", (X, y), depth=depth, thresholds="quantiles")
    assert result.termination == "optimal"
    assert len(result.model.encoder.columns_) < 20 * X.shape[1]  # about ten a feature, not 200
    assert result.train_accuracy >= cart.score(X, y) - 1e-12
    assert result.train_accuracy >= quantiles.train_accuracy  # a superset of the quantile thresholds


def test_auto_thresholds_split_the_rows_as_the_given_thresholds_do():
    from odtk.datasets import FeatureEncoder

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=300).round(2)})
    given = np.array([-0.123, 0.0, 0.004999, 1.5, -9.0, 9.0])  # the last two split off no row
    encoder = FeatureEncoder(thresholds="auto").fit(frame, keep={"x": given})
    encoded = encoder.transform(frame).astype(bool)
    columns = [encoded[:, j] for j in range(encoded.shape[1])]
    for threshold in given[:4]:
        assert any(np.array_equal(frame["x"].to_numpy() <= threshold, column) for column in columns)
    assert len(columns) <= 10 + 4


def test_best_start_is_the_cp_trees_when_it_beats_cart_and_bounds_a_timed_out_milp():
    X, y = _breast_cancer(300)
    searched = odtk.solve("cp", (X, y), depth=2, thresholds="auto")
    cart = odtk.solve("flowoct", (X, y), depth=2, thresholds="auto", warm_start="cart", time_limit=1)
    best = odtk.solve("flowoct", (X, y), depth=2, thresholds="auto", warm_start="best", time_limit=1)
    correct = round(searched.train_accuracy * len(y))
    assert best.steps["warm_start"]["objective"] == correct > cart.steps["warm_start"]["objective"]
    assert best.objective >= best.steps["warm_start"]["objective"]
