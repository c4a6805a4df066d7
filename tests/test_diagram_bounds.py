"""The subset and univariate tree bounds (odtk.pipeline.diagram_bounds) against ODD's exact optimum.

The oracle is the full MILP solved to proven optimality (``strategy="milp"``, no time limit) on
tiny random instances: grid features (so rows repeat), two or three noisy classes, no weights,
whole-number weights or fractional ones, box and univariate splits, a few in tree mode or under
the l1 domain. Every instance is built as ``odtk.solve`` builds it (encoded, duplicates merged).
"""
from __future__ import annotations

import os
import signal

import networkx as nx
import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

import odtk
from odtk.budget import Budget, stop_on_signals
from odtk.formulations import odd
from odtk.models import DecisionGraph
from odtk.pipeline.aggregate import distinct_rows
from odtk.pipeline.diagram_bounds import margin_breakers, subset_bound, tree_bound
from odtk.pipeline.encode import Problem, as_dataset, group_vector, sample_weight_of
from odtk.pipeline.methods import hyperparameters, method, skeleton_of
from odtk.progress import Progress
from odtk.solvers import SolverOptions

from feasibility import assert_feasible
from test_odd import _fair_data, _parity

TOLERANCE = 1e-6
SEEDS = range(20)  # even seeds univariate, odd seeds box


def _case(seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray | None, str, dict]:
    """A tiny random instance: features on a 5-point grid, 2 or 3 noisy classes, weights none /
    whole numbers / fractions, skeleton 1-2 (in tree mode for seeds 4, 5, 12, 13) or 1-2-2, α 0.01 /
    0.1 / 0.3, splits univariate (even seeds) or multivariate on the box (l1 for seeds 7, 15)."""
    rng = np.random.default_rng(seed)
    n, classes = int(rng.integers(7, 11)), 2 + seed % 2
    X = rng.integers(0, 5, (n, 2)) / 4
    y = ((X[:, 0] + X[:, 1] * (1 + seed % 3) > 1).astype(int) + (rng.random(n) < 0.25)) % classes
    weights = [None, rng.integers(1, 4, n).astype(float), rng.uniform(0.5, 2.0, n)][seed % 3]
    given = {"univariate": seed % 2 == 0, "alpha": [0.01, 0.1, 0.3][seed % 3], "tree": seed % 8 in (4, 5),
             "domain": "l1" if seed % 8 == 7 else "box"}
    return pd.DataFrame(X, columns=["a", "b"]).assign(y=y), weights, ["1-2", "1-2-2"][seed % 4 // 2], given


def _problem(frame: pd.DataFrame, skeleton: str, weights=None, groups=None, **given):
    """(problem, skeleton graph, options) as ``odtk.solve`` holds them for the MILP."""
    module = method("odd")
    hyper = hyperparameters(module, given)
    dataset = as_dataset(frame, "y")
    problem = Problem(module, dataset, "auto", None, group_vector(dataset, groups, module),
                      sample_weight=sample_weight_of(module, weights, len(frame)))
    return distinct_rows(problem, hyper), skeleton_of(module, None, skeleton, hyper), hyper


def _optimum(frame: pd.DataFrame, skeleton: str, weights=None, **given) -> float:
    """The full MILP's proven optimum."""
    result = odtk.solve("odd", frame, target="y", skeleton=skeleton, strategy="milp", time_limit=None,
                        sample_weight=weights, **given)
    assert result.termination == "optimal"
    return result.objective


def _floor(hyper: dict, shape: nx.DiGraph) -> float:
    """The α-floor α / |V_I| (one non-root node, no error) that the MILP's first bounds stop at."""
    return hyper["alpha"] / (len(shape) - 1)


def _subset(problem, shape, hyper, **options):
    return subset_bound(problem, shape, hyper, "highs", SolverOptions(), **options)


@pytest.mark.parametrize("seed", SEEDS)
def test_bounds_never_exceed_the_exact_optimum(seed):
    frame, weights, skeleton, given = _case(seed)
    optimum = _optimum(frame, skeleton, weights, **given)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    found = _subset(problem, shape, hyper, first_rows=3, seed=seed)
    rounds = found.steps["rounds"]
    assert all(step["bound"] <= optimum + TOLERANCE for step in rounds)
    # no time limit: grown until its sub-diagram misclassifies no other row, hence optimal on every row
    assert found.termination == "optimal"
    assert found.value == pytest.approx(optimum, abs=TOLERANCE)
    assert found.objective == pytest.approx(optimum, abs=TOLERANCE)
    assert problem.score(found.graph, shape, hyper)[0] == pytest.approx(found.objective)
    tree = tree_bound(problem, shape, hyper)
    if given["univariate"] and (weights is None or np.array_equal(weights, np.round(weights))):
        assert tree is not None and tree.termination == "optimal"
        assert tree.value <= optimum + TOLERANCE
    else:
        assert tree is None  # multivariate splits, or weights the CP search cannot count


@pytest.mark.parametrize("seed", [1, 2])
def test_the_subset_bound_on_every_row_is_the_full_milp(seed):
    frame, weights, skeleton, given = _case(seed)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    found = _subset(problem, shape, hyper, first_rows=len(frame))
    assert [step["rows"] for step in found.steps["rounds"]] == [len(problem.y)]
    assert found.value == pytest.approx(_optimum(frame, skeleton, weights, **given), abs=TOLERANCE)


def test_both_bounds_rise_above_the_alpha_floor_on_parity():
    X, y = _parity()  # a depth-3 tree or 4 non-root nodes: no diagram with one node or none is exact
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    given = {"univariate": True, "alpha": 0.1}
    problem, shape, hyper = _problem(frame, "1-2-2", **given)
    optimum, floor = _optimum(frame, "1-2-2", **given), _floor(hyper, shape)
    tree = tree_bound(problem, shape, hyper)
    assert floor < tree.value <= optimum + TOLERANCE  # E*(3) = 0 with 2 nodes below the root at least
    assert tree.value == pytest.approx(2 * floor)
    first = _subset(problem, shape, hyper, first_rows=4).steps["rounds"][0]
    assert first["rows"] == 4 and floor < first["bound"] <= optimum + TOLERANCE


def test_row_counting_side_constraints_are_dropped_on_the_subset():
    frame, weights, skeleton, given = _case(3)
    given = {**given, "min_leaf": 2}
    optimum = _optimum(frame, skeleton, weights, **given)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    found = _subset(problem, shape, hyper, first_rows=3)
    assert found.steps["dropped"] == ["min_leaf"]
    assert found.value <= optimum + TOLERANCE
    assert found.graph is None and found.objective is None  # its sub-diagrams may break min_leaf


def test_fairness_is_dropped_and_both_bounds_hold():
    X, y, group = _fair_data()
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(g=group, y=y)
    given = {"univariate": True, "alpha": 0.1, "fairness": "demographic_parity", "xi": 0.9}
    optimum = odtk.solve("odd", frame, target="y", skeleton="1-2", strategy="milp", time_limit=None, groups="g",
                         **given).objective
    problem, shape, hyper = _problem(frame, "1-2", groups="g", **given)
    found = _subset(problem, shape, hyper, first_rows=4)
    assert found.steps["dropped"] == ["fairness"] and found.graph is None
    assert found.value <= optimum + TOLERANCE
    assert tree_bound(problem, shape, hyper).value <= optimum + TOLERANCE


def test_parsimony_is_kept_and_the_sub_diagram_is_a_model_of_the_full_milp():
    frame, weights, skeleton, given = _case(11)  # 1-2-2, fractional weights
    given = {**given, "max_nodes": 2}
    optimum = _optimum(frame, skeleton, weights, **given)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    found = _subset(problem, shape, hyper, first_rows=3)
    assert found.termination == "optimal" and found.value == pytest.approx(optimum, abs=TOLERANCE)
    internal = [v for v, attrs in found.graph.graph.nodes(data=True) if "label" not in attrs]
    assert len(internal) <= 2
    instance = odd.build_model().create_instance(
        odd.make_data(problem.X, problem.y, shape, len(problem.classes), **hyper, **problem.extra))
    odd.warm_start(instance, found.graph.graph, problem.X)
    assert_feasible(instance)
    assert pyo.value(instance.objective) == pytest.approx(found.objective, abs=TOLERANCE)


def test_the_tree_bound_takes_parsimony_into_account():
    X, y = _parity()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    given = {"univariate": True, "alpha": 0.1, "max_nodes": 2}  # depth ≤ 2: four of eight rows wrong at least
    problem, shape, hyper = _problem(frame, "1-2-2", **given)
    tree = tree_bound(problem, shape, hyper)
    assert tree.value == pytest.approx(0.5) and tree.value <= _optimum(frame, "1-2-2", **given) + TOLERANCE


def test_a_split_margin_narrower_than_epsilon_is_found():
    graph = nx.DiGraph()
    graph.add_node(0, weights=[0.5, 0.0], threshold=0.25, layer=0)
    graph.add_node(3, label=0)
    graph.add_node(4, label=1)
    graph.add_edges_from([(0, 3, {"outcome": False}), (0, 4, {"outcome": True})])
    X = np.array([[0.5, 0.0], [0.49995, 1.0], [0.2, 0.0], [0.9, 0.3]])  # 5e-5 apart in x0, 1e-4 asked
    breaking = margin_breakers(DecisionGraph(graph, ["a", "b"], ["0", "1"]), X, 1e-4, "box")
    assert breaking.tolist() == [True, True, False, False]


class _SignalAt(Progress):
    """Progress that sends this process SIGINT at the ``count``-th message starting with ``text``
    (a note or a phase), as Ctrl-C would at that moment."""

    def __init__(self, text: str, count: int = 1):
        super().__init__("off")
        self.text, self.left = text, count

    def _seen(self, message: str) -> None:
        if message.startswith(self.text):
            self.left -= 1
            if self.left == 0:
                os.kill(os.getpid(), signal.SIGINT)

    def note(self, message: str) -> None:
        self._seen(message)

    def phase(self, name: str) -> None:
        super().phase(name)
        self._seen(name)


def test_a_signal_in_the_second_subset_solve_returns_the_first_bound():
    frame, weights, skeleton, given = _case(2)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    budget = Budget(None, _SignalAt("built the MILP", count=2))
    with stop_on_signals(budget):
        found = _subset(problem, shape, hyper, budget=budget, first_rows=3)
    assert budget.stop_requested and found.termination == "interrupted"
    assert len(found.steps["rounds"]) == 1
    assert found.value <= _optimum(frame, skeleton, weights, **given) + TOLERANCE


def test_a_signal_in_the_second_tree_search_returns_the_first_depth():
    X, y = _parity()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    problem, shape, hyper = _problem(frame, "1-2-2", univariate=True, alpha=0.1)
    budget = Budget(None, _SignalAt("tree bound: depth 2"))
    with stop_on_signals(budget):
        tree = tree_bound(problem, shape, hyper, budget)
    assert budget.stop_requested and tree.termination == "interrupted"
    assert [step["depth"] for step in tree.steps["depths"]] == [1]
    assert tree.value == pytest.approx(_floor(hyper, shape))  # beyond depth 1 unknown: 0 errors, one node


def test_the_bound_keeps_within_its_share_of_the_budget():
    frame, weights, skeleton, given = _case(1)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    budget = Budget(None)
    assert _subset(problem, shape, hyper, budget=budget, seconds=0.0) is None  # no time for a first solve
    assert not budget.should_stop()


def test_the_subset_bound_holds_on_every_solver(solver):
    frame, weights, skeleton, given = _case(3)
    problem, shape, hyper = _problem(frame, skeleton, weights, **given)
    found = subset_bound(problem, shape, hyper, solver, SolverOptions(), first_rows=3)
    assert found.termination == "optimal"
    assert found.value == pytest.approx(_optimum(frame, skeleton, weights, **given), abs=TOLERANCE)
