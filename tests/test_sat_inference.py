"""SAT inference of minimum-depth / minimum-size consistent trees (Avellaneda) against brute force."""
from __future__ import annotations

import importlib
import os
import re
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import odtk
from odtk.budget import Budget, Stopped, stop_on_signals
from odtk.cli import main
from odtk.engines import nested_trees, sat_encoding, sat_inference, sat_limits, sat_start
from odtk.estimators import OptimalTreeClassifier
from odtk.exceptions import DataError, install_hint
from odtk.experiments.grid import csv_data
from odtk.solvers import available_solvers, solver_status

from brute_force import fewest_leaves_of_a_perfect_tree

pytest.importorskip("pysat", reason="python-sat (the SAT solvers) is not installed: " + install_hint("sat"))

SAT_SOLVERS = [pytest.param(name, marks=[] if solver_status(name).available else
                            [pytest.mark.skip(reason=f"{name} not installed: python-sat missing")])
               for name in ("minisat22", "glucose4", "cadical153")]


def _consistent_data(seed: int, rows: int = 12, features: int = 4, classes: int = 2):
    """Small random 0/1 data whose duplicate rows share their class."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (rows, features))
    truth = {tuple(row): rng.integers(0, classes) for row in X}
    y = np.array([truth[tuple(row)] for row in X])
    if len(set(y)) < 2:
        y[0] = 1 - y[0]
        y[np.all(X == X[0], axis=1)] = y[0]
    return X, y


def _brute_force(X, y) -> tuple[int, int]:
    """(minimum depth of a perfect tree, fewest nodes of a perfect tree of that depth)."""
    for depth in range(1, X.shape[1] + 1):
        leaves = fewest_leaves_of_a_perfect_tree(X, y, depth)
        if leaves < float("inf"):
            return depth, 2 * int(leaves) - 1
    raise AssertionError("consistent data always has a perfect tree")


CASES = range(16)


def _case(seed: int):
    return _consistent_data(seed, rows=3 + seed)


def test_cases_reach_every_depth():
    assert {_brute_force(*_case(seed))[0] for seed in CASES} >= {1, 2, 3}


@pytest.mark.parametrize("seed", CASES)
@pytest.mark.parametrize("solver", SAT_SOLVERS)
def test_depth_and_size_equal_brute_force(seed, solver):
    X, y = _case(seed)
    depth, nodes = _brute_force(X, y)
    found_depth = sat_inference.search(X, y, 2, minimize="depth", oracle=solver)
    found_size = sat_inference.search(X, y, 2, minimize="size", oracle=solver)
    assert found_depth.depth == found_depth.objective == depth
    assert found_size.nodes == found_size.objective == nodes and found_size.depth <= depth
    for found in (found_depth, found_size):
        assert found.status == "optimal"
        assert list(nested_trees.predict(found.tree, X)) == list(y)


@pytest.mark.parametrize("seed", range(6))
def test_incremental_and_all_at_once_agree(seed):
    X, y = _consistent_data(100 + seed, rows=30, features=5, classes=3)
    for minimize in ("depth", "size"):
        lazy = sat_inference.search(X, y, 3, minimize=minimize, encoding="incremental")
        eager = sat_inference.search(X, y, 3, minimize=minimize, encoding="all-at-once")
        assert lazy.objective == eager.objective and lazy.depth == eager.depth
        assert eager.examples_encoded == len(y) >= lazy.examples_encoded


@pytest.mark.parametrize("model", ["sat-depth", "sat-size"])
def test_sat_and_milp_backends_agree(model, solver):
    X, y = _consistent_data(7, rows=8, features=3)
    expected = odtk.solve(model, (X, y), solver="minisat22")
    through_milp = odtk.solve(model, (X, y), solver=solver)
    assert through_milp.optimal and through_milp.solver == solver
    assert through_milp.objective == expected.objective  # the depth, or the node count


def test_result_reports_rounds_and_examples_and_classifies_every_row():
    data = odtk.datasets.load_dataset("consistent/monk1")
    result = odtk.solve("sat-size", "consistent/monk1")
    step = result.steps["search"]
    assert result.optimal and result.train_accuracy == 1.0
    assert result.objective == step["nodes"] == result.model.graph.n_splits * 2 + 1
    assert 0 < step["examples_encoded"] < len(data.target) and step["rounds"] > step["examples_encoded"]
    predicted = result.model.predict(data.features)
    assert np.array_equal(predicted.astype(str), data.target.astype(str).to_numpy())


def test_simplify_drops_unreached_leaves_and_collapses_one_class_subtrees():
    perfect = (0, (1, ("leaf", 1), ("leaf", 1)), (2, ("leaf", 0), (3, ("leaf", 0), ("leaf", 1))))
    X = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1, 1]])  # nobody reaches x0=1, x2=0
    shown = nested_trees.simplify(perfect, X)
    assert shown == (0, ("leaf", 1), (3, ("leaf", 0), ("leaf", 1)))
    assert nested_trees.count_nodes(shown) == 5
    assert list(nested_trees.predict(shown, X)) == list(nested_trees.predict(perfect, X))


def test_inconsistent_data_names_a_conflicting_pair(tmp_path):
    X = np.array([[0, 1], [1, 1], [0, 1]])
    y = np.array([0, 1, 1])
    with pytest.raises(DataError, match=r"rows 0 and 2 have the same features but classes 0 and 1"):
        odtk.solve("sat-depth", (X, y))
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(label=y)
    frame.to_csv(tmp_path / "clash.csv", index=False)
    out = CliRunner().invoke(main, ["solve", "--model", "sat-size", "--csv", str(tmp_path / "clash.csv"),
                                    "--target", "label"])
    assert out.exit_code == 1 and "rows 0 and 2" in out.output and "Traceback" not in out.output


def test_no_time_and_a_cap_below_the_start_leave_no_tree():
    X, y = np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0])  # depth 2 at least
    with pytest.raises(sat_inference.TimeLimitReached):
        sat_inference.search(X, y, 2, depth=1, time_limit=0.0)


def test_depth_cap_too_small_is_a_clear_error():
    with pytest.raises(odtk.exceptions.ConfigError, match=r"No consistent tree of depth ≤ 1"):
        odtk.solve("sat-depth", "consistent/monk1", depth=1)


def test_estimator_and_cli():
    X, y = _consistent_data(11, rows=20, features=4)
    clf = OptimalTreeClassifier(model="sat-size", max_depth=None).fit(X, y)
    assert clf.score(X, y) == 1.0
    out = CliRunner().invoke(main, ["solve", "--model", "sat-depth", "--dataset", "consistent/iris",
                                    "--solver", "glucose4"])
    assert out.exit_code == 0 and "examples encoded" in out.output and "optimal" in out.output


@pytest.mark.parametrize("model, solver, message", [
    ("flowoct", "minisat22", "is a SAT solver"),
    ("sat-depth", "kissat", "Unknown solver 'kissat'"),
    ("sat-depth", "minisat22 --gap 0.1", "always proves optimality"),
])
def test_solver_mix_ups_are_one_line_errors(model, solver, message):
    out = CliRunner().invoke(main, ["solve", "--model", model, "--dataset", "consistent/monk1",
                                    "--depth", "2", "--solver", *solver.split()])
    assert out.exit_code == 1 and message in out.output and "Traceback" not in out.output


def test_sat_solvers_are_listed_apart_from_milp_solvers():
    assert "minisat22" not in available_solvers()
    assert set(available_solvers("sat")) <= {"minisat22", "glucose4", "cadical153"}


def _ordered_frame(seed: int, rows: int = 14) -> pd.DataFrame:
    """Small data with an integer column, an integer-coded categorical column and a class."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 4, rows), "b": rng.integers(1, 4, rows)})
    truth = {key: rng.integers(0, 2) for key in zip(frame.a, frame.b)}
    return frame.assign(label=[truth[key] for key in zip(frame.a, frame.b)])


@pytest.mark.parametrize("seed", range(6))
def test_value_thresholds_reach_the_brute_force_optimum(seed):
    frame = _ordered_frame(200 + seed)
    data = odtk.datasets.from_dataframe(frame, "label", categorical=["b"])
    X = odtk.datasets.FeatureEncoder(thresholds="values").fit(data).transform(data)
    depth, nodes = _brute_force(X, frame.label.to_numpy())
    found_depth = odtk.solve("sat-depth", data, thresholds="values")
    found_size = odtk.solve("sat-size", data, thresholds="values")
    assert found_depth.objective == depth and found_size.objective == nodes
    assert all(name.startswith(("a>", "b>")) for name in found_size.model.encoder.columns_)


@pytest.mark.parametrize("per_round, keep", [(1, "on"), (4, "off"), (1_000, "on")])
@pytest.mark.parametrize("seed", range(0, 16, 3))
def test_speed_options_keep_the_optimum(seed, per_round, keep):
    X, y = _case(seed)
    depth, nodes = _brute_force(X, y)
    for minimize, expected in (("depth", depth), ("size", nodes)):
        found = sat_inference.search(X, y, 2, minimize=minimize, examples_per_round=per_round,
                                     keep_examples=keep)
        assert found.objective == expected and found.status == "optimal"
        assert list(nested_trees.predict(found.tree, X)) == list(y)


def test_clause_arrays_match_the_paper_recursion():
    """(3)–(6) built level by level equal the clauses of Algorithms 1 and 2 walked recursively."""
    clauses = sat_encoding.PerfectTreeClauses(depth=3, n_features=4, n_classes=3)
    features, label = np.array([1, 0, 0, 1]), 2
    built = {tuple(sorted(row)) for block in clauses.add_example(0, features, label) for row in block.tolist()}
    bits = [clauses.variables - 2, clauses.variables - 1, clauses.variables]  # X_{e,0..2}
    expected = set()

    def walk(path: list[int], q: int, level: int) -> None:  # Algorithm 1, then 2 at the leaves
        if level == 3:
            leaf = q - 8
            expected.update(tuple(sorted([*path, int(clauses.C[leaf, c]) * (1 if c == label else -1)]))
                            for c in range(3))
            return
        x = bits[level]
        expected.update(tuple(sorted([*path, -int(clauses.F[q - 1, f]), x if features[f] else -x]))
                        for f in range(4))
        walk([*path, x], 2 * q, level + 1)
        walk([*path, -x], 2 * q + 1, level + 1)

    walk([], 1, 0)
    assert built == expected and clauses.n_clauses == len(expected)


def test_cpu_time_and_perfect_tree_are_reported():
    X, y = _case(9)
    found = sat_inference.search(X, y, 2, minimize="depth")
    assert found.cpu_seconds >= 0.0
    assert nested_trees.count_nodes(found.perfect) == 2 ** (found.depth + 1) - 1
    assert nested_trees.simplify(found.perfect, X) == found.tree


def test_cli_value_thresholds_and_speed_options():
    out = CliRunner().invoke(main, ["solve", "--model", "sat-size", "--dataset", "consistent/monk1",
                                    "--thresholds", "values", "-o", "examples_per_round=5",
                                    "-o", "keep_examples=on"])
    paper_faithful = odtk.solve("sat-size", "consistent/monk1", thresholds="values")
    assert out.exit_code == 0, out.output
    assert re.search(r"Feat_\d>\d ?", out.output) and f"objective {paper_faithful.objective:g} " in out.output


@pytest.fixture
def sat_paper():
    """The example script reproducing the paper's tables, as a module."""
    examples = Path(__file__).resolve().parents[1] / "examples"
    sys.path.insert(0, str(examples))
    try:
        yield importlib.import_module("sat_paper")
    finally:
        sys.path.remove(str(examples))


@pytest.mark.slow
def test_paper_example_main_runs_small(capsys, sat_paper, tmp_path):
    assert sat_paper.main(["--tables", "1", "3", "--datasets", "iris", "--splits", "0", "--folds", "2",
                           "--db", str(tmp_path / "runs.sqlite")]) == 0
    printed = capsys.readouterr().out
    assert "Table 1: mouse" in printed and "Table 3" in printed
    mouse = [line.split() for line in printed.splitlines() if line.lstrip().startswith("DT_")]
    assert [row[0] for row in mouse] == ["DT_depth", "DT_size"] and all(row[-1] == "yes" for row in mouse)


def test_paper_car_has_the_papers_two_classes(sat_paper, tmp_path):
    entry = sat_paper.car_entry(tmp_path)
    car = csv_data({"dataset": entry["name"], "csv": entry["csv"], "target": entry["target"], "categorical": False})
    assert car.n_rows == 1728 and car.target.value_counts().to_dict() == {"unacc": 1210, "acceptable": 518}


# ---------------------------------------------------------------- anytime: start, bound, stop
def _breast_cancer(rows: int = 398, max_thresholds: int | None = None):
    """A user's numeric data: ten named columns of scikit-learn's breast cancer, a 398-row sample,
    text labels, every midpoint a binary feature (the SAT models' default; 3,613 of them)."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.frame.iloc[:, :10].assign(diagnosis=np.where(bunch.target == 1, "benign", "malignant"))
    frame = frame.sample(398, random_state=0).iloc[:rows]
    data = odtk.datasets.from_dataframe(frame, "diagnosis")
    X = odtk.datasets.FeatureEncoder(thresholds="midpoints", max_thresholds=max_thresholds).fit(data).transform(data)
    return X.astype(bool), (data.target == "benign").to_numpy().astype(int)


@pytest.fixture(scope="module")
def breast_cancer():
    return _breast_cancer()


def _assert_consistent_with_its_bound(found, X, y, minimize):
    assert list(nested_trees.predict(found.tree, X)) == list(y)  # every training row
    assert found.objective == (found.nodes if minimize == "size" else found.depth)
    assert 0 <= found.lower_bound <= found.objective


@pytest.mark.parametrize("minimize", ["depth", "size"])
def test_a_short_limit_answers_the_start_with_its_bound(breast_cancer, minimize):
    X, y = breast_cancer
    found = sat_inference.search(X, y, 2, minimize=minimize, time_limit=1.0)
    assert found.status == "time_limit" and found.source == "start"
    _assert_consistent_with_its_bound(found, X, y, minimize)
    assert found.perfect is None  # only a SAT answer is a perfect tree


@pytest.mark.parametrize("minimize", ["depth", "size"])
def test_the_start_keeps_the_optimum_of_the_search_without_it(monkeypatch, minimize):
    X, y = _breast_cancer(rows=100, max_thresholds=4)
    start = sat_start.grown_cart(X, y)
    started = sat_inference.search(X, y, 2, minimize=minimize)
    monkeypatch.setattr(sat_start, "grown_cart", lambda X, y: None)  # the paper's search alone
    paper = sat_inference.search(X, y, 2, minimize=minimize)
    assert started.status == paper.status == "optimal"
    assert started.objective == started.lower_bound == paper.objective
    assert nested_trees.tree_depth(start) > paper.depth  # the start was not the answer already
    _assert_consistent_with_its_bound(started, X, y, minimize)


SEED_CART_OPTIMAL = 7  # a case whose grown CART has the minimum depth


def test_a_start_of_the_minimum_depth_is_proven_without_its_sat_call():
    X, y = _case(SEED_CART_OPTIMAL)
    depth, _ = _brute_force(X, y)
    start = sat_start.grown_cart(X.astype(bool), y)
    assert nested_trees.tree_depth(start) == depth
    found = sat_inference.search(X, y, 2, minimize="depth")
    assert found.objective == found.lower_bound == depth and found.status == "optimal"
    assert found.source == "start" and found.tree == nested_trees.simplify(start, X)
    assert found.perfect is None  # padded to a perfect tree it would be perfect_copy(start, depth)


@pytest.mark.parametrize("oracle", SAT_SOLVERS)
def test_a_stop_from_another_thread_returns_the_best_tree(oracle, recorder):
    """Stopped in a SAT call: four thresholds a column keep the encoding small, the calls long."""
    X, y = _breast_cancer(max_thresholds=4)
    budget = Budget(None, recorder)
    timer = threading.Timer(1.0, budget.request_stop, [signal.SIGTERM])
    timer.start()
    try:
        found = sat_inference.search(X, y, 2, oracle=oracle, budget=budget)
    finally:
        timer.cancel()
    assert found.status == "interrupted"
    _assert_consistent_with_its_bound(found, X, y, "depth")
    assert all(report["bound"] <= report["incumbent"] for report in recorder.reports)
    assert recorder.reports[-1] == {"incumbent": found.objective, "bound": found.lower_bound, "rounds": found.rounds}


def test_a_signal_in_the_main_thread_returns_the_best_tree(breast_cancer):
    """Outside ``Budget.waiting`` the signal raises in the search's own thread (here while it hands
    the clauses of 3,613 features to the solver): the search still answers its best tree."""
    X, y = breast_cancer
    budget = Budget(None)
    timer = threading.Timer(1.0, os.kill, [os.getpid(), signal.SIGTERM])
    with stop_on_signals(budget):
        timer.start()
        try:
            found = sat_inference.search(X, y, 2, minimize="size", budget=budget)
        finally:
            timer.cancel()
    assert found.status == "interrupted" and budget.signal == signal.SIGTERM
    _assert_consistent_with_its_bound(found, X, y, "size")


# ---------------------------------------------------------------- the contract of every solve (issue 39)
def test_a_signal_while_cart_grows_answers_cart_interrupted(monkeypatch):
    """SIGTERM while scikit-learn grows the start once escaped from its fit as a traceback: the
    start grows on (a signal only marks the budget) and is the answer, marked interrupted."""
    from sklearn.tree import DecisionTreeClassifier

    X, y = _case(9)
    fit = DecisionTreeClassifier.fit

    def signalled(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # the signal arrives as CART starts to grow
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(DecisionTreeClassifier, "fit", signalled)
    budget = Budget(None)
    with stop_on_signals(budget):
        found = sat_inference.search(X, y, 2, budget=budget)
    assert found.status == "interrupted" and found.source == "start" and found.rounds == 0
    _assert_consistent_with_its_bound(found, X, y, "depth")


def test_a_signal_does_not_wait_for_a_cart_that_keeps_growing(monkeypatch):
    """A CART that does not grow within START_GRACE of the signal is left behind: no tree, Stopped."""
    from sklearn.tree import DecisionTreeClassifier

    X, y = _case(9)
    release = threading.Event()

    def endless(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        release.wait(600)  # until the test ends
        raise RuntimeError("released")

    monkeypatch.setattr(DecisionTreeClassifier, "fit", endless)
    budget = Budget(None)
    try:
        with stop_on_signals(budget), pytest.raises(Stopped):
            sat_inference.search(X, y, 2, budget=budget)
    finally:
        release.set()


def test_clauses_beyond_the_memory_rule_are_not_built(breast_cancer, monkeypatch):
    """3,613 binary columns: depth 1's 6.5 million clauses (2) exceed a 64 MB memory: the search
    answers its start, marked memory_limit, and says why, without handing over a clause."""
    X, y = breast_cancer
    monkeypatch.setattr(sat_limits, "memory_available", lambda: 64 * 2**20)
    for minimize in ("depth", "size"):
        found = sat_inference.search(X, y, 2, minimize=minimize)
        assert found.status == "memory_limit" and found.source == "start" and found.rounds == 0
        assert f"the {3613 * 3612 // 2 + 1:,} clauses of depth 1 need about" in found.limit  # (1) and (2)
        assert "--max-thresholds" in found.limit
        _assert_consistent_with_its_bound(found, X, y, minimize)


def test_clauses_beyond_the_memory_rule_without_a_tree_are_a_one_line_error(monkeypatch):
    """Capped below the start's depth, the search has no tree to answer: a DataError naming the size."""
    monkeypatch.setattr(sat_limits, "memory_available", lambda: 2**10)
    with pytest.raises(DataError, match=r"No consistent tree found: the [\d,]+ clauses of depth 1 need about .* "
                                         r"use fewer thresholds"):
        odtk.solve("sat-depth", "consistent/monk1", depth=1)


def test_a_depth_that_cannot_be_handed_over_in_the_time_left_is_not_begun():
    """At the rate measured so far (a million clauses a second), 3 million clauses need 3 s."""
    from odtk.solvers.sat import SatOracle

    room = sat_limits.ClauseRoom(room=2**40)
    room.handed, room.seconds = 1_000_000, 1.0
    backend = SatOracle("minisat22")
    try:
        room.begin(backend, 2, 3_000_000, 6_000_000, left=10.0)
        with pytest.raises(sat_limits.ClausesTooLarge, match=r"3,000,000 clauses of depth 2 .* about 3 s, more "
                                                             r"than the 2\.0 s left") as refused:
            room.begin(backend, 2, 3_000_000, 6_000_000, left=2.0)
    finally:
        backend.close()
    assert refused.value.status == "time_limit"
