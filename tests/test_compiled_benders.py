"""BendersOCT's master compiled from arrays (:mod:`odtk.compiled.benders`) is the Pyomo model's:
the same standard form, the same cuts at the same point (rows on the compiled route), and the
same optimum of the whole cut loop, FlowOCT's."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn import generate_standard_repn

from compiled_forms import binary_data, both_routes
from odtk.compiled.benders import CutRows
from odtk.decomposition import solve_with_cuts
from odtk.formulations import benders, flowoct
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, solve_instance, solver_status


def _load(instances, rng: np.random.Generator, n: int = 1, fractional: bool = False) -> None:
    """The same point in every instance: an integral random tree below node n (each n ∈ B
    splits or predicts), or random fractional b, w; then random g."""
    first = instances[0]
    if n == 1:
        for instance in instances:
            for var in (*instance.b.values(), *instance.p.values(), *instance.w.values()):
                var.set_value(0)
    if fractional:
        for name in ("b", "w"):
            keys = list(getattr(first, name).keys())
            values = rng.random(len(keys)) * (rng.random(len(keys)) < 0.6)
            for instance in instances:
                for key, value in zip(keys, values):
                    getattr(instance, name)[key].set_value(float(value), skip_validation=True)
    elif n in first.B and rng.random() < 0.75:
        f = int(rng.integers(len(first.F)))
        for instance in instances:
            instance.b[n, f].set_value(1)
        _load(instances, rng, 2 * n)
        _load(instances, rng, 2 * n + 1)
    else:
        k = int(rng.integers(len(first.K)))
        for instance in instances:
            instance.p[n].set_value(1)
            instance.w[n, k].set_value(1)
    if n == 1:
        g = rng.choice([0.0, 0.5, 1.0], len(first.I))
        for instance in instances:
            for i in first.I:
                instance.g[i].set_value(float(g[i]))


def _pyomo_cut(cut) -> tuple[dict, float]:
    """A Pyomo inequality ``lhs <= rhs`` as ({variable name: coefficient}, rhs) of ``Σ ≤ rhs``."""
    repn = generate_standard_repn(cut.args[0] - cut.args[1])
    return {v.name: c for v, c in zip(repn.linear_vars, repn.linear_coefs)}, -repn.constant


def _compiled_cut(row, names: list[str]) -> tuple[dict, float]:
    columns, coefficients, rhs = row
    assert len(set(columns.tolist())) == len(columns)  # each variable once
    return {names[j]: c for j, c in zip(columns.tolist(), coefficients.tolist())}, rhs


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("fractional", [False, True])
def test_the_cuts_at_a_point_are_the_same_on_both_routes(depth, fractional):
    rng = np.random.default_rng(depth)
    X, y = binary_data(40, 5, 3, seed=depth)
    pyomo_instance, compiled = both_routes(benders, X, y, tree_skeleton(depth), 3)
    names = compiled.column_names()
    separate = benders.separate_fractional if fractional else benders.separate
    found = 0
    for _ in range(10):
        _load([pyomo_instance, compiled], rng, fractional=fractional)
        expected, got = separate(pyomo_instance), separate(compiled)
        assert list(got) == list(expected)
        for i, cut in expected.items():
            assert _compiled_cut(got[i], names) == _pyomo_cut(cut)
        found += len(got)
    assert found > 0


def _flowoct_optimum(X, y, depth: int, lam: float, weight) -> float:
    _, compiled = both_routes(flowoct, X, y, tree_skeleton(depth), 2, lam=lam, sample_weight=weight)
    outcome = solve_instance(compiled, "highs")
    assert outcome.termination == "optimal"
    return outcome.objective


CASES = [(24, 4, 1, 0.0, False, 0), (24, 4, 2, 0.0, False, 1), (24, 4, 2, 0.1, True, 2)]


@pytest.mark.parametrize("solver_name, rows, features, depth, lam, weighted, seed",
                         [(solver, *case) for solver in ("highs", "cbc") for case in CASES]
                         + [("highs", 16, 3, 3, 0.05, False, 3)])  # CBC's loop at depth 3 takes minutes
def test_the_cut_loop_reaches_flowocts_optimum_on_both_routes(solver_name, rows, features, depth, lam, weighted,
                                                              seed):
    if not solver_status(solver_name).available:
        pytest.skip(f"{solver_name} not installed")
    X, y = binary_data(rows, features, 2, seed)
    weight = np.random.default_rng(seed).integers(1, 4, len(y)).astype(float) if weighted else None
    objectives = []
    for instance in both_routes(benders, X, y, tree_skeleton(depth), 2, lam=lam, sample_weight=weight):
        outcome, report = solve_with_cuts(instance, benders, solver_name, SolverOptions(time_limit=60))
        assert outcome.termination == "optimal"
        assert outcome.objective == pytest.approx(pyo.value(instance.objective))  # the loop's solution is loaded
        assert not benders.separate(instance)
        assert report.cuts == len(instance.cuts)
        objectives.append(outcome.objective)
    assert isinstance(instance.cuts, CutRows) and all(isinstance(cut, tuple) for cut in instance.cuts)
    assert objectives == pytest.approx([_flowoct_optimum(X, y, depth, lam, weight)] * 2, abs=1e-6)


def test_the_compiled_master_on_every_solver(solver):
    """Lazy callbacks (Gurobi, CPLEX) and the iterative loop take the compiled instance's rows."""
    X, y = binary_data(24, 4, 2, seed=5)
    _, compiled = both_routes(benders, X, y, tree_skeleton(2), 2, lam=0.05)
    outcome, report = solve_with_cuts(compiled, benders, solver, SolverOptions(time_limit=60))
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(_flowoct_optimum(X, y, 2, 0.05, None), abs=1e-6)
    assert not benders.separate(compiled)
    assert report.cuts == len(compiled.cuts) > 0
