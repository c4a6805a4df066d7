"""BendersOCT: lazily separated min-cut cuts reach FlowOCT's and brute force's optimum."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import odtk
from odtk.datasets import load_dataset
from odtk.decomposition import solve_with_cuts
from odtk.formulations import benders
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, get_spec

from brute_force import best_objective


def _binary(seed: int, n: int = 14, p: int = 4, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p))
    y = ((X[:, 0] ^ X[:, 1]) | (rng.random(n) < 0.2)).astype(int) % k
    return X, y


def _instance(X, y, depth: int, lam: float, k: int = 2):
    return benders.build_model().create_instance(benders.make_data(X, y, tree_skeleton(depth), k, lam=lam))


@pytest.mark.parametrize("depth, lam, seed", [(1, 0.0, 0), (2, 0.0, 1), (2, 0.1, 2)])
def test_optimum_equals_brute_force_on_every_solver(solver, depth, lam, seed):
    X, y = _binary(seed)
    instance = _instance(X, y, depth, lam)
    outcome, report = solve_with_cuts(instance, benders, solver, SolverOptions(time_limit=60))
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(best_objective(X, y, 2, depth, lam), abs=1e-6)
    assert not benders.separate(instance)  # no cut is violated at termination
    lazy = get_spec(solver).capabilities["lazy_callbacks"]
    assert report.scheme == ("lazy" if lazy else "iterative") and report.rounds >= 1
    assert report.cuts == len(instance.cuts) > 0


def test_separation_cuts_exactly_the_misclassified_samples():
    X, y = _binary(3)
    instance = _instance(X, y, 1, 0.0)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0)
    instance.b[1, 0].set_value(1)  # root tests x0; left leaf predicts 0, right leaf predicts 1
    instance.p[2].set_value(1)
    instance.p[3].set_value(1)
    instance.w[2, 0].set_value(1)
    instance.w[3, 1].set_value(1)
    for i in instance.I:
        instance.g[i].set_value(1)
    cuts = benders.separate(instance)
    assert sorted(cuts) == [i for i in range(len(y)) if X[i, 0] != y[i]]
    for i, cut in cuts.items():  # each cut is the zero-capacity cut of the sample's path
        assert pyo.value(cut.args[1]) == 0


def test_api_result_passes_the_self_check_and_reports_its_cuts():
    data = load_dataset("flowoct/monk1").subset(np.arange(50))
    result = odtk.solve("benders", data, depth=2, lam=0.0)
    reference = odtk.solve("flowoct", data, depth=2, lam=0.0)
    assert result.termination == "optimal" and result.objective == pytest.approx(reference.objective)
    assert result.steps["milp"]["cuts"] > 0 and result.steps["milp"]["scheme"] == "iterative"
    assert result.steps["milp"]["rounds"] > 1  # HiGHS re-solves the master
    assert "cuts in" in result.summary()


@pytest.mark.filterwarnings("ignore:.*not proven optimal")
def test_time_limit_returns_a_repaired_incumbent_and_a_valid_bound():
    result = odtk.solve("benders", "flowoct/monk1", depth=3, lam=0.0, time_limit=3)
    optimum = 114  # FlowOCT's proven optimum on monk1 at depth 3 (HiGHS needs over a minute)
    assert result.termination == "time_limit"
    assert result.objective <= optimum <= result.bound + 1e-6


@pytest.mark.parametrize("solver_name", ["gurobi", "cplex"])
def test_lazy_callbacks_match_the_iterative_scheme(solver_name):
    if not odtk.solvers.solver_status(solver_name).available:
        pytest.skip(f"{solver_name} not installed")
    X, y = _binary(4, n=40, p=5)
    lazy = _instance(X, y, 2, 0.05)
    outcome, report = solve_with_cuts(lazy, benders, solver_name, SolverOptions(time_limit=60))
    iterative = _instance(X, y, 2, 0.05)
    reference, _ = solve_with_cuts(iterative, benders, "highs", SolverOptions(time_limit=60))
    assert report.scheme == "lazy" and outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(reference.objective, abs=1e-6)
    assert not benders.separate(lazy)  # the kept cuts hold at the final solution
