"""BendersOCT: lazily separated min-cut cuts reach FlowOCT's and brute force's optimum."""
from __future__ import annotations

import dataclasses

import networkx as nx
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
    for cut in cuts.values():  # each cut is the zero-capacity cut of the sample's path
        assert pyo.value(cut.args[1]) == 0


def _reference_separate(instance, tolerance: float = 1e-6) -> dict:
    """Proposition 1 sample by sample: walk each path, sum its leaving arcs' capacities."""
    split = {n: next((f for f in instance.F if pyo.value(instance.b[n, f]) > 0.5), None) for n in instance.B}
    cuts = {}
    for i in instance.I:
        label, ones, n, arcs = pyo.value(instance.y[i]), set(instance.F1[i]), 1, []
        while True:
            arcs.append(instance.w[n, label])
            if n in instance.L or split[n] is None:
                arcs += [] if n in instance.L else [instance.b[n, f] for f in instance.F]
                break
            going_right = split[n] in ones
            arcs += [instance.b[n, f] for f in (instance.F0[i] if going_right else instance.F1[i])]
            n = 2 * n + going_right
        g = pyo.value(instance.g[i])
        if g > tolerance and pyo.value(sum(arcs)) < g - tolerance:
            cuts[i] = instance.g[i] <= sum(arcs)
    return cuts


def _random_tree(instance, rng: np.random.Generator, n: int = 1) -> None:
    """Load a random integral tree below node n: each n ∈ B splits or predicts."""
    if n in instance.B and rng.random() < 0.75:
        instance.b[n, int(rng.integers(len(instance.F)))].set_value(1)
        _random_tree(instance, rng, 2 * n)
        _random_tree(instance, rng, 2 * n + 1)
    else:
        instance.p[n].set_value(1)
        instance.w[n, int(rng.integers(len(instance.K)))].set_value(1)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_separation_matches_a_sample_by_sample_reference_on_random_trees(depth):
    rng = np.random.default_rng(depth)
    X, y = _binary(depth, n=40, p=5, k=3)
    instance = _instance(X, y, depth, 0.0, k=3)
    for _ in range(20):
        for var in instance.component_data_objects(pyo.Var):
            var.set_value(0)
        _random_tree(instance, rng)
        for i in instance.I:
            instance.g[i].set_value(float(rng.choice([0.0, 0.5, 1.0])))
        cuts, reference = benders.separate(instance), _reference_separate(instance)
        assert list(cuts) == list(reference)
        assert [str(cut) for cut in cuts.values()] == [str(cut) for cut in reference.values()]
        assert list(benders.separate_fractional(instance)) == list(cuts)  # the same samples


def _min_cut(instance, i) -> float:
    """The minimum s–t cut of sample i's flow graph at the held values, by networkx."""
    graph, label, ones = nx.DiGraph(), pyo.value(instance.y[i]), set(instance.F1[i])
    graph.add_edge("s", 1, capacity=1.0)
    for n in instance.N:
        graph.add_edge(n, "t", capacity=instance.w[n, label].value)
    for n in instance.B:
        for child, side in ((2 * n, False), (2 * n + 1, True)):
            capacity = sum(instance.b[n, f].value for f in instance.F if (f in ones) == side)
            graph.add_edge(n, child, capacity=capacity)
    return nx.minimum_cut_value(graph, "s", "t")


@pytest.mark.parametrize("depth", [1, 2])
def test_fractional_separation_finds_every_min_cut_below_g(depth):
    rng = np.random.default_rng(10 + depth)
    X, y = _binary(depth, n=25, p=4)
    instance = _instance(X, y, depth, 0.0)
    for _ in range(5):
        for var in (*instance.b.values(), *instance.w.values()):
            var.set_value(float(rng.random() * (rng.random() < 0.6)), skip_validation=True)
        for i in instance.I:
            instance.g[i].set_value(1.0)
        cuts = benders.separate_fractional(instance)
        values = {i: _min_cut(instance, i) for i in instance.I}
        assert sorted(cuts) == [i for i in instance.I if values[i] < 1.0 - 1e-6]
        for i, cut in cuts.items():
            assert pyo.value(cut.args[1]) == pytest.approx(values[i])


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
