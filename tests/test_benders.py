"""BendersOCT: lazily separated min-cut cuts reach FlowOCT's and brute force's optimum."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

import odtk
import odtk.decomposition as decomposition
import odtk.solvers.highs as highs_backend
from odtk.datasets import load_dataset
from odtk.decomposition import solve_with_cuts
from odtk.exceptions import SolveError
from odtk.formulations import benders
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, get_spec, solver_status

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
    assert report.scheme == "lazy" if lazy else report.scheme.startswith("iterative (")
    assert report.rounds >= 1
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
    assert result.steps["milp"]["cuts"] > 0
    assert result.steps["milp"]["scheme"] == "iterative (one highs model, rows added)"
    assert result.steps["milp"]["rounds"] > 1  # HiGHS re-solves the master
    assert "cuts in" in result.summary()


@pytest.mark.filterwarnings("ignore:.*not proven optimal")
def test_time_limit_returns_a_repaired_incumbent_and_a_valid_bound():
    result = odtk.solve("benders", "flowoct/monk1", depth=3, lam=0.0, time_limit=3)
    optimum = 114  # FlowOCT's proven optimum on monk1 at depth 3 (HiGHS needs over a minute)
    assert result.termination == "time_limit"
    assert result.objective <= optimum <= result.bound + 1e-6


@pytest.mark.parametrize("solver_name", ["highs", "cbc"])
def test_the_iterative_scheme_compiles_once_and_adds_rows(solver_name, monkeypatch):
    if not solver_status(solver_name).available:
        pytest.skip(f"{solver_name} not installed")
    X, y = _binary(5, n=30, p=5)
    reference = odtk.solve("flowoct", pd.DataFrame(X).assign(y=y), target="y", depth=2, lam=0.0, solver=solver_name)
    compiled, grown, built = [], [], []
    monkeypatch.setattr(decomposition, "to_standard_form", _recording(decomposition.to_standard_form, compiled))
    monkeypatch.setattr(decomposition.GrowingForm, "of", _recording(decomposition.GrowingForm.of, grown))
    monkeypatch.setattr(highs_backend, "new_highs", _recording(highs_backend.new_highs, built))
    instance = _instance(X, y, 2, 0.0)
    outcome, report = solve_with_cuts(instance, benders, solver_name, SolverOptions(time_limit=60))
    assert outcome.termination == "optimal" and outcome.objective == pytest.approx(reference.objective)
    assert len(compiled) == 1 and report.rounds >= 2  # one compile serves every round
    form = grown[0]
    assert form.A.shape[0] == compiled[0].A.shape[0] + report.cuts == outcome.size.constraints
    assert report.cuts == len(instance.cuts) > 0
    if solver_name == "highs":  # one HiGHS model: built once, the cuts added as rows
        assert len(built) == 1 and form.highs.getNumRow() == form.A.shape[0]
        assert report.scheme == "iterative (one highs model, rows added)"
    else:
        assert report.scheme == "iterative (rows added to one standard form, read anew by cbc each round)"


def test_a_time_limit_returns_the_best_incumbent_of_all_rounds(monkeypatch):
    """The second master stops at the time limit holding a worse solution (g = 0) than the
    first round's repaired one: the loop returns that first one, with the loop's bound."""
    real = decomposition._OneModel.solve
    offered, bounds = [], []

    def worse_second_round(self, options, start, on_solution):
        outcome = real(self, options, start, on_solution)
        bounds.append(outcome.bound)
        if len(bounds) < 2:
            return outcome
        for i in self.instance.I:
            self.instance.g[i].set_value(0.0)
        return dataclasses.replace(outcome, termination="time_limit", objective=0.0)

    def recorded_offer(loop, values, objective):
        offered.append(objective)
        real_offer(loop, values, objective)

    real_offer = decomposition._Loop.offer
    monkeypatch.setattr(decomposition._OneModel, "solve", worse_second_round)
    monkeypatch.setattr(decomposition._Loop, "offer", recorded_offer)
    X, y = _binary(6, n=30, p=5)
    instance = _instance(X, y, 2, 0.0)
    outcome, report = solve_with_cuts(instance, benders, "highs", SolverOptions(time_limit=60))
    assert report.rounds == 2 and offered[1] == 0.0 < offered[0]
    assert outcome.termination == "time_limit" and outcome.has_solution
    assert outcome.objective == offered[0] == pytest.approx(pyo.value(instance.objective))  # loaded
    assert outcome.bound == min(bounds)
    assert not benders.separate(instance)


def test_the_cut_loop_checks_its_own_bound(monkeypatch):
    """Every round optimal, but the loop's best bound stays 1 away from its objective."""
    real = decomposition._OneModel.solve

    def apart(self, options, start, on_solution):
        outcome = real(self, options, start, on_solution)
        return dataclasses.replace(outcome, bound=outcome.bound + 1.0)

    monkeypatch.setattr(decomposition._OneModel, "solve", apart)
    X, y = _binary(7)
    with pytest.raises(SolveError, match="highs reported an optimal solution .* not proven optimal"):
        solve_with_cuts(_instance(X, y, 2, 0.0), benders, "highs", SolverOptions())


def _recording(function, calls: list):
    """``function`` that also appends each result to ``calls``."""
    def recorded(*args, **kwargs):
        calls.append(function(*args, **kwargs))
        return calls[-1]

    return recorded


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
