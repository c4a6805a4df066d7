"""The CP paper's AND/OR search against exhaustive enumeration and the MILP formulations."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import odtk
from odtk.cli import main
from odtk.datasets import load_dataset
from odtk.engines import cp_search
from odtk.estimators import OptimalTreeClassifier
from odtk.exceptions import ConfigError
from odtk.heap_trees import nested_tree
from odtk.solvers import solver_status

from brute_force import min_error


def _random_data(seed: int, rows: int = 12, features: int = 4, classes: int = 2):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (rows, features)), rng.integers(0, classes, rows)


def _subset(name: str, rows: int, seed: int = 1) -> pd.DataFrame:
    """A seeded random sample of a bundled dataset, target in column ``y``."""
    data = load_dataset(name)
    chosen = np.random.default_rng(seed).permutation(len(data.target))[:rows]
    frame = data.features.iloc[chosen].reset_index(drop=True)
    return frame.assign(y=data.target.iloc[chosen].to_numpy())


@pytest.mark.parametrize("counting_depth", [0, 1, 2])
@pytest.mark.parametrize("seed", range(12))
def test_optimal_error_equals_brute_force(seed, counting_depth):
    classes = 2 + seed % 2
    X, y = _random_data(seed, rows=8 + seed, classes=classes)
    for depth in (1, 2):
        for min_support in (1, 2, 3):
            found = cp_search.search(X, y, classes, depth, min_support, counting_depth)
            assert found.status == "optimal"
            assert found.error == found.lower_bound == min_error(X, y, classes, depth, min_support)


@pytest.mark.parametrize("min_support", [1, 3])
def test_solve_reports_the_optimum_with_search_statistics(min_support):
    X, y = _random_data(7, rows=30, features=5, classes=3)
    result = odtk.solve("cp", (X, y), depth=2, min_support=min_support)
    assert result.optimal and result.solver == cp_search.SOLVER
    assert result.objective == result.bound == min_error(X, y, 3, 2, min_support)
    assert result.objective == np.sum(result.model.predict(pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]))
                                      != y)
    step = result.steps["search"]
    assert step["search_nodes"] >= 1 and step["cache_size"] >= 1
    counts = result.model.graph.sample_counts(result.model.encoder.transform(
        odtk.api.as_dataset((X, y))))
    leaves = [n for n, attrs in result.model.graph.graph.nodes(data=True) if "label" in attrs]
    assert all(counts[leaf] >= min_support for leaf in leaves)


@pytest.mark.parametrize("name, rows, seed, depth", [
    ("flowoct/monk1", 60, 1, 2), ("flowoct/monk3", 60, 1, 2), ("flowoct/balance-scale", 60, 1, 2),
    ("flowoct/house-votes-84", 60, 1, 2), ("flowoct/monk1", 60, 2, 3), ("flowoct/balance-scale", 30, 1, 3)])
@pytest.mark.slow
def test_equals_flowoct_optimum(name, rows, seed, depth):
    frame = _subset(name, rows, seed)
    search = odtk.solve("cp", frame, target="y", depth=depth)
    flow = odtk.solve("flowoct", frame, target="y", depth=depth, solver="highs", lam=0.0)
    assert search.optimal and flow.optimal
    assert search.objective == flow.n_samples - flow.objective


@pytest.mark.skipif(not solver_status("gurobi").available, reason="gurobipy is not installed")
@pytest.mark.slow
def test_equals_benders_on_gurobi_at_depth_three():
    frame = _subset("flowoct/monk2", 30)
    search = odtk.solve("cp", frame, target="y", depth=3)
    benders = odtk.solve("benders", frame, target="y", depth=3, solver="gurobi")
    assert benders.optimal and search.objective == benders.n_samples - benders.objective


def test_tree_warm_starts_a_milp():
    frame = _subset("flowoct/monk1", 60)
    search = odtk.solve("cp", frame, target="y", depth=2)
    flow = odtk.solve("flowoct", frame, target="y", depth=2, warm_start=search)
    assert flow.steps["warm_start"]["objective"] == flow.n_samples - search.objective
    assert flow.steps["warm_start"]["warm_start"] is True
    assert flow.optimal and flow.objective == flow.n_samples - search.objective


@pytest.mark.parametrize("cache, bounds", [(True, True), (False, True), (True, False), (False, False)])
@pytest.mark.parametrize("seed", range(6))
def test_ablations_keep_the_optimum(seed, cache, bounds):
    classes, min_support = 2 + seed % 2, 1 + seed % 3
    X, y = _random_data(seed, rows=20 + seed, features=4, classes=classes)
    for depth in (1, 2):
        optimum = min_error(X, y, classes, depth, min_support)
        for counting_depth in (0, 2):
            found = cp_search.search(X, y, classes, depth, min_support, counting_depth,
                                     cache=cache, bounds=bounds)
            assert found.status == "optimal" and found.error == optimum


def test_counting_kernels_and_ablations_agree_on_a_real_dataset():
    data = load_dataset("binary/hepatitis")
    X, y = data.features.to_numpy(), np.unique(data.target, return_inverse=True)[1]
    for min_support in (1, 5):
        errors = {(depth, cache, bounds): cp_search.search(X, y, 2, 3, min_support, depth,
                                                           cache=cache, bounds=bounds).error
                  for depth in (0, 1, 2) for cache in (True, False) for bounds in (True, False)}
        assert len(set(errors.values())) == 1


def test_ablation_switches_are_model_options():
    X, y = _random_data(4, rows=30, features=5)
    result = odtk.solve("cp", (X, y), depth=2, cache=False, bounds=False)
    assert result.optimal and result.objective == min_error(X, y, 2, 2, 1)
    assert result.hyperparameters["cache"] is False and result.hyperparameters["bounds"] is False


def test_ablation_switches_on_the_command_line():
    ran = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "binary/vote", "--depth", "2",
                                    "--no-cache", "--no-bounds"])
    assert ran.exit_code == 0, ran.output
    assert "'cache': False, 'bounds': False" in ran.output and "cache size 0" in ran.output
    default = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "binary/vote", "--depth", "2"])
    assert "'cache': True, 'bounds': True" in default.output
    assert default.output.split("objective")[1].split()[0] == ran.output.split("objective")[1].split()[0]


def test_cache_is_keyed_by_the_set_of_decisions():
    """Every itemset is expanded once, whatever order its decisions were taken in."""
    X, y = _random_data(3, rows=40, features=5)
    found = cp_search.search(X, y, 2, 3, counting_depth=0)
    itemsets = sum(math.comb(5, size) * 2**size for size in range(4))  # 131; 571 if ordered
    assert found.status == "optimal"
    assert found.cache_size <= itemsets


def _walk(graph, node, path, X, y, rows):
    """Check the no-useless-node rules below ``node``; returns the sub-tree's errors."""
    attrs = graph.nodes[node]
    majority_errors = rows.sum() - np.bincount(y[rows]).max() if rows.any() else 0
    if "label" in attrs:
        return int((y[rows] != attrs["label"]).sum())
    feature = attrs["feature"]
    assert feature not in path, "a feature is repeated on a path"
    errors = 0
    for _, child, outcome in graph.out_edges(node, data="outcome"):
        side = rows & (X[:, feature] == int(outcome))
        assert side.any(), "a split leaves a child empty"
        errors += _walk(graph, child, path | {feature}, X, y, side)
    assert errors < majority_errors, "a split does not reduce the error of its leaf"
    return errors


@pytest.mark.parametrize("counting_depth", [0, 1, 2])
def test_no_useless_nodes(counting_depth):
    data = load_dataset("binary/vote")
    X, y = data.features.to_numpy(), np.unique(data.target, return_inverse=True)[1]
    found = cp_search.search(X, y, 2, 3, counting_depth=counting_depth)
    graph = nested_tree(found.tree)
    assert _walk(graph, 1, frozenset(), X, y, np.ones(len(y), dtype=bool)) == found.error


@pytest.fixture(scope="module")
def ionosphere_optimum() -> int:
    data = load_dataset("binary/ionosphere")
    X, y = data.features.to_numpy(), np.unique(data.target, return_inverse=True)[1]
    return cp_search.search(X, y, 2, 3).error


@pytest.mark.parametrize("limit", [0.001, 0.02, 0.1])
def test_time_limit_returns_a_valid_tree_and_a_sound_bound(limit, ionosphere_optimum):
    data = load_dataset("binary/ionosphere")
    optimum = ionosphere_optimum
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = odtk.solve("cp", "binary/ionosphere", depth=3, time_limit=limit)
    assert result.termination == "time_limit"
    assert any("not proven optimal" in str(w.message) for w in caught)
    predicted = result.model.predict(data.features)
    assert result.objective == np.sum(predicted.astype(str) != data.target.astype(str).to_numpy())
    assert result.model.graph.depth <= 3
    assert result.bound <= optimum <= result.objective
    assert result.steps["search"]["search_nodes"] >= 1


def test_conflicting_duplicates_give_the_anytime_bound():
    X = np.array([[0, 1], [0, 1], [0, 1], [1, 0]])
    y = np.array([0, 1, 1, 0])
    assert cp_search.conflict_bound(X, y) == 1
    found = cp_search.search(X, y, 2, 2, time_limit=0.0)
    assert found.lower_bound == 1 <= found.error


def test_estimator_and_cli():
    X, y = _random_data(5, rows=40, features=4)
    clf = OptimalTreeClassifier(model="cp", max_depth=2, min_samples_leaf=2).fit(X, y)
    assert clf.result_.objective == min_error(X, y, 2, 2, 2)
    assert clf.score(X, y) == pytest.approx(1 - clf.result_.objective / len(y))
    runner = CliRunner()
    out = runner.invoke(main, ["solve", "--model", "cp", "--dataset", "binary/vote", "--depth", "2",
                               "--min-support", "5"])
    assert out.exit_code == 0 and "search nodes" in out.output and "optimal" in out.output


@pytest.mark.parametrize("arguments, message", [
    (["--solver", "gurobi"], "runs odtk's own search"),
    (["--gap", "0.1"], "always proves optimality"),
    (["--min-support", "1000"], "exceeds the 435 training samples"),
    (["--warm-start", "cart"], "takes no warm_start"),
    (["--lambda", "0.1"], "has no option ['lam']"),
])
def test_bad_options_are_one_line_errors(arguments, message):
    out = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "binary/vote",
                                    "--depth", "2", *arguments])
    assert out.exit_code == 1 and message in out.output and "Traceback" not in out.output


@pytest.mark.parametrize("seed", range(4))
def test_whole_number_weights_count_as_repeated_rows(seed):
    X, y = _random_data(seed, rows=14, features=4)
    weight = np.random.default_rng(seed).integers(0, 4, len(y))
    result = odtk.solve("cp", (X, y), depth=2, sample_weight=weight)
    assert result.optimal
    assert result.objective == min_error(np.repeat(X, weight, axis=0), np.repeat(y, weight), 2, 2, 1)
    assert result.objective == np.dot(result.model.predict(pd.DataFrame(X).add_prefix("x")) != y, weight)


def test_fractional_weights_are_refused_by_the_search():
    X, y = _random_data(1, rows=10)
    with pytest.raises(ConfigError, match="whole-number sample weights"):
        odtk.solve("cp", (X, y), depth=1, sample_weight=np.full(10, 0.5))
