"""ODD through ``odtk.solve`` and the command line.

Tree mode against FlowOCT on bundled binary data, diagrams against trees, the
heuristic / MILP / both strategies, heuristic diagrams as warm starts, side
constraints through ``groups=``, the ``odtk solve`` command, and every solver.
The formulation-level checks live in test_odd.py; every instance here is tiny.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from click.testing import CliRunner

import odtk
from odtk.cli import main
from odtk.exceptions import ConfigError, DataError, SolveError
from odtk.formulations import odd
from odtk.heuristics import construct_diagram
from odtk.models import TrainedModel
from odtk.skeletons import diagram_skeleton, parse_widths

from test_flowoct import _slice
from test_heuristics import _load
from feasibility import assert_feasible
from test_odd import _checkerboard, _fair_data, _fewest_errors, _groups_3_and_9, _parity, _rates, _scaled

FAST = {"time_limit": 60, "heuristic_time": 0.3}  # a safety net, and a short heuristic step


def _errors(result) -> int:
    return round((1 - result.train_accuracy) * result.n_samples)


def _internal(result) -> list:
    graph = result.model.graph.graph
    return [v for v, attrs in graph.nodes(data=True) if "label" not in attrs]


# --------------------------------------------------------------------------- tree mode and diagrams
# (dataset, rows, binary columns): slices whose optimal depth-2 and depth-3 trees differ
# (2 → 1, 3 → 2 and 2 → 1 errors), so a wrong depth shows. At α = 0 a univariate 1-2-4
# diagram unfolds into a depth-3 tree, so tree mode itself is checked on parity below.
BINARY = [("flowoct/monk1", 13, (6, 7, 11, 13)), ("binary/vote", 10, (1, 2, 11, 13)),
          ("binary/primary-tumor", 10, (3, 4, 11, 14))]


def _columns(name: str, rows: int, columns: tuple) -> tuple[np.ndarray, np.ndarray]:
    X, y, _ = _slice(name, rows, max(columns) + 1)
    return X[:, list(columns)], y


@functools.cache
def _univariate_odd(case: tuple, **shape):
    """Optimal univariate ODD at α = 0 (MILP only) on a BINARY slice; shared by two tests."""
    return odtk.solve("odd", _columns(*case), alpha=0.0, univariate=True, strategy="milp",
                      time_limit=60, **shape)


@pytest.mark.parametrize("case", BINARY, ids=[name for name, *_ in BINARY])
@pytest.mark.parametrize("depth", [2, 3])
def test_depth_gives_an_optimal_tree_with_flowocts_error(case, depth):
    X, y = _columns(*case)
    result = _univariate_odd(case, depth=depth)
    reference = odtk.solve("flowoct", (X, y), depth=depth, lam=0.0)  # objective: correct predictions
    assert result.termination == reference.termination == "optimal"
    assert _errors(result) == len(y) - round(reference.objective)
    assert result.objective == pytest.approx(_errors(result) / len(y), abs=1e-9)  # α = 0: error rate
    assert result.hyperparameters["tree"] is True and result.hyperparameters["skeleton"] == (
        "1-2" if depth == 2 else "1-2-4")
    graph = result.model.graph
    assert graph.depth <= depth
    assert all(graph.graph.in_degree(v) <= 1 for v in _internal(result))  # a tree: no merges
    assert all(np.count_nonzero(graph.graph.nodes[v]["weights"]) <= 1 for v in _internal(result))


@pytest.mark.parametrize("case", BINARY, ids=[name for name, *_ in BINARY])
def test_diagram_1_2_4_is_never_worse_than_the_depth_3_tree(case):
    tree = _univariate_odd(case, depth=3)
    diagram = _univariate_odd(case, skeleton="1-2-4")
    assert diagram.termination == tree.termination == "optimal"
    assert diagram.hyperparameters["tree"] is False
    assert _errors(diagram) <= _errors(tree)
    assert diagram.objective <= tree.objective + 1e-9


def test_tree_mode_pays_for_the_subtrees_a_diagram_shares():
    """3-bit parity at α = 0.1: the depth-3 tree needs 7 nodes, the 1-2-4 diagram merges into 5."""
    X, y = _parity()
    tree = odtk.solve("odd", (X, y), depth=3, alpha=0.1, univariate=True, strategy="milp", time_limit=60)
    diagram = odtk.solve("odd", (X, y), skeleton="1-2-4", alpha=0.1, univariate=True, strategy="milp",
                         time_limit=60)
    assert tree.termination == diagram.termination == "optimal"
    assert tree.train_accuracy == diagram.train_accuracy == 1.0
    assert len(_internal(tree)) == 7 and tree.objective == pytest.approx(0.1 * 6 / 6)
    assert all(tree.model.graph.graph.in_degree(v) <= 1 for v in _internal(tree))
    assert len(_internal(diagram)) == 5 and diagram.objective == pytest.approx(0.1 * 4 / 6)
    assert any(diagram.model.graph.graph.in_degree(v) > 1 for v in _internal(diagram))


# --------------------------------------------------------------------------- strategies
NOISY = {"skeleton": "1-2-2", "alpha": 0.01, **FAST}


def _noisy(seed: int = 6) -> tuple[pd.DataFrame, np.ndarray]:
    """Ten samples on a grid; for seed 6 the MILP (0.005) beats the heuristic (0.1025)."""
    X, y = _scaled(seed, n=10)
    return pd.DataFrame(X, columns=["x0", "x1"]), y


@functools.cache
def _highs_optimum(seed: int) -> float:
    result = odtk.solve("odd", _noisy(seed), strategy="milp", **NOISY)
    assert result.termination == "optimal"
    return result.objective


def _objective_18(result, frame: pd.DataFrame, y: np.ndarray, widths: list[int], alpha: float) -> float:
    """(18) recomputed from the model's own predictions: error rate + α · non-root nodes / (|V| − 1)."""
    errors = np.count_nonzero(result.model.predict(frame).astype(int) != y)
    return errors / len(y) + alpha * max(len(_internal(result)) - 1, 0) / (sum(widths) - 1)


def test_heuristic_strategy_solves_no_milp_and_reports_its_diagrams_objective():
    frame, y = _noisy()
    result = odtk.solve("odd", (frame, y), strategy="heuristic", **NOISY)
    assert (result.termination, result.solver) == ("heuristic", "heuristic")
    assert set(result.steps) == {"heuristic"} and result.steps["heuristic"]["starts"] >= 1
    assert result.size is None and result.bound is None and result.gap is None
    assert result.objective == pytest.approx(result.steps["heuristic"]["objective"], abs=1e-12)
    assert result.objective == pytest.approx(_objective_18(result, frame, y, [1, 2, 2], 0.01), abs=1e-12)
    encoded = result.model.encoder.transform(frame)
    assert odd.objective_of(result.model.graph.graph, result.model.graph.predict_index(encoded), y,
                            diagram_skeleton("1-2-2"), alpha=0.01) == pytest.approx(result.objective)
    assert result.train_accuracy == pytest.approx(np.mean(result.model.predict(frame).astype(int) == y))


def test_milp_strategy_runs_the_milp_alone():
    frame, y = _noisy()
    result = odtk.solve("odd", (frame, y), strategy="milp", **NOISY)
    assert set(result.steps) == {"milp"}
    assert result.termination == "optimal" and result.solver == "highs"
    assert result.objective == pytest.approx(result.bound, abs=1e-6)
    assert result.objective == pytest.approx(_objective_18(result, frame, y, [1, 2, 2], 0.01), abs=1e-9)


def test_both_improves_on_the_heuristic_up_to_the_milp_optimum():
    frame, y = _noisy()
    result = odtk.solve("odd", (frame, y), **NOISY)  # "both" is the default for ODD
    assert set(result.steps) == {"heuristic", "milp"} and result.solver == "highs"
    heuristic = result.steps["heuristic"]["objective"]
    assert result.bound - 1e-6 <= result.objective <= heuristic + 1e-9
    assert result.termination == "optimal"
    assert result.objective == pytest.approx(_highs_optimum(6), abs=1e-6)
    assert result.objective < heuristic - 1e-6  # on this data the MILP step pays off
    assert result.objective == pytest.approx(_objective_18(result, frame, y, [1, 2, 2], 0.01), abs=1e-9)


@pytest.mark.parametrize("model, options, words", [
    ("odd", {"skeleton": "1-2", "strategy": "greedy"}, "Unknown strategy 'greedy'"),
    ("flowoct", {"depth": 2, "strategy": "heuristic"}, "has no heuristic"),
    ("flowoct", {"depth": 2, "strategy": "both"}, "has no heuristic"),
    ("odd", {"skeleton": "1-2", "strategy": "heuristic", "min_samples": 2}, "min_samples"),
    ("odd", {"skeleton": "1-2", "strategy": "heuristic", "max_nodes": 2}, "max_nodes"),
    ("odd", {"skeleton": "1-2", "strategy": "heuristic", "min_leaf": 2}, "min_leaf"),
])
def test_strategies_that_cannot_run_are_config_errors(model, options, words):
    X, y = _scaled(0, n=8)
    with pytest.raises(ConfigError) as error:
        odtk.solve(model, (X, y), **options)
    assert words in str(error.value) and "\n" not in str(error.value)


def _majority_only() -> tuple[np.ndarray, np.ndarray]:
    """Eight points on which the heuristic's best diagram is the majority class alone."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [0, 0], [1, 1], [0.5, 0.5], [0.2, 0.7]])
    return X, np.array([0, 0, 0, 0, 1, 1, 0, 0])


@pytest.mark.parametrize("strategy", ["heuristic", "both"])
@pytest.mark.parametrize("alpha", [0.0, 0.01])
def test_a_one_leaf_heuristic_diagram_is_a_valid_result(strategy, alpha):
    X, y = _majority_only()
    found = construct_diagram(X, y, [1, 2], 2, alpha=alpha, max_starts=5)
    assert found.active_nodes == 1 and found.misclassified == 2  # the root's constant test: the premise
    result = odtk.solve("odd", (X, y), skeleton="1-2", alpha=alpha, strategy=strategy, **FAST)
    if strategy == "heuristic":
        assert result.objective == pytest.approx(2 / 8)  # predict 0 everywhere: two errors, no other node
    else:
        milp = odtk.solve("odd", (X, y), skeleton="1-2", alpha=alpha, strategy="milp", **FAST)
        assert result.termination == "optimal"
        assert result.objective == pytest.approx(milp.objective, abs=1e-6)


# --------------------------------------------------------------------------- warm start from the heuristic
@functools.cache
def _merging_data() -> tuple[np.ndarray, np.ndarray, int]:
    """24 scaled rows of balance-scale (3 classes) on which narrow layers make the heuristic merge flows."""
    X, y, k = _load("uci/balance-scale")
    rows = np.random.default_rng(0).choice(len(y), 24, replace=False)
    return X[rows], y[rows], k


@pytest.mark.parametrize("skeleton, tree", [
    ("1-2", False), ("1-2-1", False), ("1-2-2", False), ("1-2-4", False), ("1-2-2-2", False),
    ("1-2", True), ("1-2-4", True)], ids=lambda v: {True: "tree", False: "diagram"}.get(v, v))
@pytest.mark.parametrize("alpha", [0.0, 0.1])
@pytest.mark.parametrize("univariate", [False, True], ids=["multivariate", "univariate"])
def test_heuristic_diagram_is_a_feasible_warm_start(skeleton, tree, alpha, univariate):
    X, y, k = _merging_data()
    widths = parse_widths(skeleton)
    found = construct_diagram(X, y, widths, k, alpha=alpha, max_starts=5)
    graph = found.graph
    assert found.active_nodes >= 1
    if alpha == 0 and skeleton in ("1-2-1", "1-2-2", "1-2-2-2"):  # premise: merged paths are exercised
        assert any(graph.in_degree(v) > 1 for v, a in graph.nodes(data=True) if "label" not in a)
    instance = odd.build_model().create_instance(odd.make_data(
        X, y, diagram_skeleton(skeleton), k, alpha=alpha, univariate=univariate, tree=tree))
    odd.warm_start(instance, graph, X)
    assert_feasible(instance)  # every active constraint within 1e-6, every variable within its bounds
    for var in instance.component_data_objects(pyo.Var):
        if var.is_integer():
            assert abs(var.value - round(var.value)) <= 1e-9, var.name
    assert pyo.value(instance.objective) == pytest.approx(found.objective, abs=1e-9)
    assert pyo.value(instance.objective) == pytest.approx(
        found.misclassified / len(y) + alpha * max(found.active_nodes - 1, 0) / (sum(widths) - 1), abs=1e-9)


# --------------------------------------------------------------------------- side constraints
FAIR = {"skeleton": "1-2", "univariate": True, **FAST}


def _fair_frame() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Features x0, x1, the 0/1 group column g and the class y (the accurate splits are unfair)."""
    X, y, group = _fair_data()
    return pd.DataFrame(X, columns=["x0", "x1"]).assign(g=group, y=y), y, group


@functools.cache
def _unconstrained_fair_frame():
    frame, *_ = _fair_frame()
    return odtk.solve("odd", frame, target="y", **FAIR)


def _predicted(result, frame: pd.DataFrame) -> np.ndarray:
    return result.model.predict(frame.drop(columns="y")).astype(int)


@pytest.mark.parametrize("fairness", ["demographic_parity", "equal_opportunity", "predictive_equality"])
def test_fairness_through_a_groups_column_binds_and_holds(fairness):
    frame, y, group = _fair_frame()
    free = _unconstrained_fair_frame()
    low, high = sorted(_rates(_predicted(free, frame), y, group, fairness))
    assert low < 0.8 * high  # the unconstrained optimum is unfair
    fair = odtk.solve("odd", frame, target="y", fairness=fairness, xi=0.8, groups="g", **FAIR)
    assert fair.termination == "optimal"
    assert fair.objective > free.objective + 1e-6  # the constraint binds
    low, high = sorted(_rates(_predicted(fair, frame), y, group, fairness))
    assert low >= 0.8 * high - 1e-9
    # the (unfair, better) heuristic diagram ran as step 1 but must not come back
    assert fair.steps["heuristic"]["objective"] < fair.objective
    assert fair.steps["heuristic"]["warm_start"] is False  # nor start the MILP
    assert fair.hyperparameters["fairness"] == fairness and fair.hyperparameters["xi"] == 0.8


@pytest.mark.parametrize("groups", ["a", ["a", "b"]], ids=["one-column", "two-subgroup-columns"])
def test_paper_count_fairness_through_groups(groups):
    X, y, group = _groups_3_and_9()
    frame = pd.DataFrame({"x0": X[:, 0], "a": group, "b": 1 - group, "y": y})
    fair = odtk.solve("odd", frame, target="y", alpha=0.0, fairness="demographic_parity",
                      fairness_form="counts", xi=0.8, groups=groups, skeleton="1-2", strategy="milp",
                      **FAST)
    members = np.column_stack([group == 1, group == 0])
    assert fair.termination == "optimal" and fair.hyperparameters["fairness_form"] == "counts"
    assert fair.objective == pytest.approx(_fewest_errors(y, members, 0.8, "counts") / len(y), abs=1e-9)
    assert _fewest_errors(_predicted(fair, frame), members, 0.8, "counts") == 0


def _checkerboard_frame() -> pd.DataFrame:
    X, y = _checkerboard()
    return pd.DataFrame(X, columns=["x0", "x1"]).assign(y=y)


@functools.cache
def _unconstrained_checkerboard():
    return odtk.solve("odd", _checkerboard_frame(), target="y", **FAIR)


def test_min_samples_keeps_enough_samples_at_every_reached_node():
    frame = _checkerboard_frame()
    free = _unconstrained_checkerboard()
    stable = odtk.solve("odd", frame, target="y", min_samples=6, **FAIR)
    assert stable.termination == "optimal" and stable.objective > free.objective + 1e-6
    counts = stable.model.graph.sample_counts(stable.model.encoder.transform(frame.drop(columns="y")))
    assert counts[stable.model.graph.root] == len(frame)
    assert all(counts[v] >= 6 for v in _internal(stable))
    free_counts = free.model.graph.sample_counts(free.model.encoder.transform(frame.drop(columns="y")))
    assert min(free_counts[v] for v in _internal(free)) < 6  # it binds


def test_min_leaf_leaves_enough_rows_on_each_side_and_drops_a_start_that_does_not():
    frame = _checkerboard_frame()
    free = _unconstrained_checkerboard()
    encoded = free.model.encoder.transform(frame.drop(columns="y"))
    sides = {arc: len(rows) for arc, rows in free.model.graph.arc_rows(encoded).items()}
    assert min(sides.values()) < 5 and free.steps["heuristic"]["warm_start"] is True  # it binds
    bound = odtk.solve("odd", frame, target="y", min_leaf=5, **FAIR)
    assert bound.termination == "optimal" and bound.objective > free.objective + 1e-6
    sides = {arc: len(rows) for arc, rows in bound.model.graph.arc_rows(encoded).items()}
    assert min(sides.values()) >= 5, sides
    assert bound.steps["heuristic"]["objective"] < bound.objective  # so the heuristic's diagram breaks it
    assert bound.steps["heuristic"]["warm_start"] is False  # and starts nothing
    assert bound.n_distinct is None  # (the leaf size counts rows: none merged)
    assert bound.hyperparameters["min_leaf"] == 5


def test_max_nodes_caps_the_active_nodes():
    frame = _checkerboard_frame()
    assert len(_internal(_unconstrained_checkerboard())) == 3
    capped = odtk.solve("odd", frame, target="y", max_nodes=2, **FAIR)
    assert capped.termination == "optimal" and len(_internal(capped)) == 2
    assert capped.objective >= _unconstrained_checkerboard().objective - 1e-9


@pytest.mark.parametrize("strategy", ["milp", "both"])
def test_more_samples_per_node_than_samples_is_a_one_line_solve_error(strategy):
    frame = _checkerboard_frame()
    with pytest.raises(SolveError) as error:
        odtk.solve("odd", frame, target="y", min_samples=len(frame) + 1, strategy=strategy, **FAIR)
    assert "infeasible" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("model, options, error, words", [
    ("odd", {"fairness": "demographic_parity", "xi": 0.8, "groups": "h"}, DataError, "'h' not found"),
    ("odd", {"fairness": "demographic_parity", "xi": 0.8, "groups": "x0"}, DataError, "exactly two values"),
    ("flowoct", {"groups": "g"}, ConfigError, "no fairness"),
    ("odd", {"fairness": "demographic_parity", "xi": 0.8}, ConfigError, "group"),
    ("odd", {"fairness": "demographic_parity", "groups": "g"}, ConfigError, "xi"),
    ("odd", {"xi": 0.8}, ConfigError, "fairness"),
    ("odd", {"fairness": "demographic_parity", "xi": 1.5, "groups": "g"}, ConfigError, "xi must be"),
    ("odd", {"fairness": "equal_pay", "xi": 0.8, "groups": "g"}, ConfigError, "fairness must be one of"),
    ("odd", {"fairness": "demographic_parity", "xi": 0.8, "groups": "g", "strategy": "heuristic"},
     ConfigError, "fairness"),
    ("odd", {"min_samples": 0}, ConfigError, "min_samples"),
    ("odd", {"min_leaf": 0}, ConfigError, "min_leaf must be a whole number"),
    ("odd", {"min_leaf": 2.5}, ConfigError, "min_leaf must be a whole number"),
    ("odd", {"fairness": "demographic_parity", "xi": 0.8, "groups": ["g", "x0"]}, DataError, "0/1"),
    ("odd", {"fairness_form": "ratio"}, ConfigError, "fairness_form must be one of"),
    ("odd", {"domain": "l2"}, ConfigError, "domain must be one of"),
    ("odd", {"min_samples": 3, "min_share": 0.2}, ConfigError, "once"),
    ("odd", {"min_share": 0.2, "strategy": "heuristic"}, ConfigError, "min_share"),
])
def test_bad_side_constraints_are_typed_one_line_errors(model, options, error, words):
    frame, *_ = _fair_frame()
    shape = {"depth": 1} if model == "flowoct" else {"skeleton": "1-2", "strategy": "milp"}
    with pytest.raises(error) as raised:
        odtk.solve(model, frame, target="y", **{**shape, **options, **FAST})
    assert words in str(raised.value) and "\n" not in str(raised.value)


# --------------------------------------------------------------------------- command line
@pytest.fixture
def fair_csv(tmp_path):
    path = tmp_path / "fair.csv"
    _fair_frame()[0].to_csv(path, index=False)
    return path


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def _solve_args(csv, *more: str) -> list[str]:
    return ["solve", "--model", "odd", "--csv", str(csv), "--target", "y", "--time-limit", "60",
            "--heuristic-time", "0.3", *more]


def test_cli_solves_prints_shares_and_steps_and_saves_a_usable_model(tmp_path, fair_csv):
    dot, model = tmp_path / "d.dot", tmp_path / "m.json"
    run = _cli(*_solve_args(fair_csv, "--skeleton", "1-2-2", "--dot", str(dot), "--output", str(model)))
    assert run.exit_code == 0, run.output
    lines = run.stdout.splitlines()
    assert lines[0].startswith("[node 0]") and lines[0].endswith("(16 samples, 100.0%)")
    assert any("predict" in line and "samples," in line and "misclassified; by class" in line for line in lines)
    assert "status      optimal" in run.stdout
    assert any(line.startswith("step        heuristic: objective ") for line in lines)
    assert any(line.startswith("step        milp: objective ") for line in lines)
    assert dot.read_text().startswith("digraph") and "samples" in dot.read_text()
    accuracy = float(run.stdout.split("accuracy")[1].split()[0])

    predicted = _cli("predict", "--model-file", str(model), "--csv", str(fair_csv))
    assert predicted.exit_code == 0, predicted.output
    labels = predicted.stdout.split()
    frame, y, _ = _fair_frame()
    assert labels == [str(v) for v in TrainedModel.load(model).predict(frame.drop(columns="y"))]
    assert np.mean(np.array(labels, dtype=int) == y) == pytest.approx(accuracy, abs=1e-4)
    assert f"accuracy {accuracy:.4f} on 16 rows" in predicted.stderr


def test_cli_heuristic_strategy_overwrites_an_existing_dot_only_with_force(tmp_path, fair_csv):
    dot = tmp_path / "d.dot"
    dot.write_text("precious")
    refused = _cli(*_solve_args(fair_csv, "--skeleton", "1-2-2", "--strategy", "heuristic", "--dot", str(dot)))
    assert refused.exit_code == 1 and isinstance(refused.exception, SystemExit)
    assert refused.stderr.strip().splitlines() == [
        f"odtk: error: {dot} already exists; choose another name or pass --force to overwrite it."]
    assert dot.read_text() == "precious"

    run = _cli(*_solve_args(fair_csv, "--skeleton", "1-2-2", "--strategy", "heuristic", "--dot", str(dot),
                            "--force"))
    assert run.exit_code == 0, run.output
    assert "status      heuristic" in run.stdout and "no MILP solved" in run.stdout
    assert "step        heuristic: objective" in run.stdout and "step        milp" not in run.stdout
    assert dot.read_text().startswith("digraph")


def test_cli_fairness_flags_give_a_fair_saved_model(tmp_path, fair_csv):
    model = tmp_path / "fair.json"
    run = _cli(*_solve_args(fair_csv, "--skeleton", "1-2", "--univariate", "--fairness", "demographic_parity",
                            "--xi", "0.8", "--groups", "g", "--output", str(model)))
    assert run.exit_code == 0, run.output
    frame, y, group = _fair_frame()
    predicted = TrainedModel.load(model).predict(frame.drop(columns="y")).astype(int)
    low, high = sorted(_rates(predicted, y, group, "demographic_parity"))
    assert low >= 0.8 * high - 1e-9
    assert float(run.stdout.split("objective")[1].split()[0]) > _unconstrained_fair_frame().objective + 1e-6


@pytest.mark.parametrize("args, words", [
    (["--skeleton", "1-2", "--min-samples", "1000"], ["infeasible"]),
    (["--skeleton", "1-2", "--fairness", "demographic_parity", "--xi", "0.8", "--groups", "nope"],
     ["'nope' not found"]),
    (["--skeleton", "1-2", "--strategy", "heuristic", "--max-nodes", "2"], ["heuristic ignores max_nodes"]),
])
def test_cli_bad_or_infeasible_settings_give_one_line(fair_csv, args, words):
    run = _cli(*_solve_args(fair_csv, *args))
    assert run.exit_code == 1 and isinstance(run.exception, SystemExit), run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odtk: error: ")
    assert "Traceback" not in run.output
    for word in words:
        assert word in lines[0]


# --------------------------------------------------------------------------- solvers
@pytest.mark.parametrize("seed", [6, 5], ids=["milp-beats-heuristic", "heuristic-is-optimal"])
@pytest.mark.parametrize("strategy", ["milp", "both"])
def test_every_solver_reaches_the_highs_optimum(solver, seed, strategy):
    data = _noisy(seed)
    result = odtk.solve("odd", data, solver=solver, strategy=strategy, **NOISY)
    assert result.size.variables <= 1000 and result.size.constraints <= 1000  # free licences
    assert result.solver == solver and result.termination == "optimal"
    assert result.objective == pytest.approx(_highs_optimum(seed), abs=1e-6)
    assert set(result.steps) == ({"milp"} if strategy == "milp" else {"heuristic", "milp"})
    if strategy == "both":  # warm start and cut-off at the heuristic's value
        assert result.objective <= result.steps["heuristic"]["objective"] + 1e-9


def test_a_heuristic_diagram_meeting_the_side_constraints_starts_the_milp():
    frame = _checkerboard_frame()
    loose = odtk.solve("odd", frame, target="y", min_samples=1, max_nodes=7, **FAIR)
    assert loose.steps["heuristic"]["warm_start"] is True
    assert loose.objective == pytest.approx(_unconstrained_checkerboard().objective, abs=1e-6)
    assert "the MILP's start" in loose.summary()


# --------------------------------------------------------------------------- sample weights
def _weighted_18(result, frame: pd.DataFrame, y: np.ndarray, weight: np.ndarray, widths: list[int],
                 alpha: float) -> float:
    """(18) with the weighted error rate, from the model's own predictions."""
    wrong = result.model.predict(frame).astype(int) != y
    nodes = alpha * max(len(_internal(result)) - 1, 0) / (sum(widths) - 1)
    return float(weight @ wrong) / weight.sum() + nodes


def test_integer_weights_reach_the_optimum_of_repeated_rows():
    frame, y = _noisy()
    counts = np.random.default_rng(2).integers(0, 4, len(y))
    weighted = odtk.solve("odd", (frame, y), strategy="milp", sample_weight=counts, **NOISY)
    repeated = odtk.solve("odd", (frame.loc[frame.index.repeat(counts)], np.repeat(y, counts)),
                          strategy="milp", **NOISY)
    assert weighted.termination == repeated.termination == "optimal"
    assert weighted.objective == pytest.approx(repeated.objective, abs=1e-6)
    assert weighted.objective == pytest.approx(_weighted_18(weighted, frame, y, counts, [1, 2, 2], 0.01))


def test_the_heuristic_weighs_rows_and_starts_the_weighted_milp():
    frame, y = _noisy()
    weight = np.random.default_rng(5).uniform(0, 2, len(y))
    one_start = {**NOISY, "heuristic_time": 1e-6}  # the first start only: the same diagram every run
    start = odtk.solve("odd", (frame, y), strategy="heuristic", sample_weight=weight, **one_start)
    both = odtk.solve("odd", (frame, y), strategy="both", sample_weight=weight, **one_start)
    milp = odtk.solve("odd", (frame, y), strategy="milp", sample_weight=weight, **NOISY)
    assert start.objective == pytest.approx(_weighted_18(start, frame, y, weight, [1, 2, 2], 0.01))
    assert both.steps["heuristic"]["objective"] == pytest.approx(start.objective)
    assert both.objective == pytest.approx(milp.objective, abs=1e-6) and both.objective <= start.objective
    assert both.objective == pytest.approx(_weighted_18(both, frame, y, weight, [1, 2, 2], 0.01))
    with pytest.raises(DataError, match="all weights are zero"):
        odtk.solve("odd", (frame, y), strategy="milp", sample_weight=np.zeros(len(y)), **NOISY)
