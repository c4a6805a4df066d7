"""Solver registry: validation, availability, option translation, one-shot solves."""
from __future__ import annotations

import pyomo.environ as pyo
import pytest

from odtk.exceptions import ConfigError
from odtk.solvers import (SolverOptions, get_spec, load_registry, registry, solve_instance,
                          solver_status)


def test_bundled_registry_names_the_five_milp_and_three_sat_solvers():
    kinds = {name: spec.kind for name, spec in registry().items()}
    assert kinds == {"highs": "milp", "cbc": "milp", "gurobi": "milp", "cplex": "milp", "scip": "milp",
                     "minisat22": "sat", "glucose4": "sat", "cadical153": "sat"}
    assert get_spec("cbc").options["time_limit"] == "sec"
    assert get_spec("gurobi").size_limit == {"variables": 2000, "constraints": 2000}


def test_highs_is_always_available():
    status = solver_status("highs")
    assert status.available and status.version


def test_unknown_solver_lists_the_known_ones():
    with pytest.raises(ConfigError, match="Known solvers: cadical153, cbc, cplex, glucose4, gurobi, highs, minisat22"):
        get_spec("cplexx")


@pytest.mark.parametrize("text,problem", [
    ("highs: [1, 2]", "must be a mapping"),
    ("highs: {backend: highspy}", "missing keys"),
    ("- just\n- a list", "must map solver names"),
    ("x: !!python/object/apply:os.system ['true']", "not valid YAML"),
    ("x: {description: d, package: p, install: i, backend: nope, pyomo: {}, licence: open, "
     "options: {}, capabilities: {}}", "backend"),
    ("x: {description: d, package: p, install: i, backend: cbc, pyomo: {}, licence: open, "
     "options: {speed: fast}, capabilities: {}}", "options may only name"),
    ("x: {description: d, package: p, install: i, backend: highspy, pyomo: {}, licence: open, "
     "options: {}, capabilities: {}, settings: {odd: [ipm]}}", "settings must map model names"),
])
def test_malformed_registry_files_are_refused(tmp_path, text, problem):
    path = tmp_path / "solvers.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        load_registry(path)


def test_missing_registry_file(tmp_path):
    with pytest.raises(ConfigError, match="Cannot read"):
        load_registry(tmp_path / "nope.yaml")


def test_options_translate_to_native_names():
    options = SolverOptions(time_limit=5, mip_gap=0.01, threads=1, seed=3)
    assert options.native(get_spec("cbc")) == {"sec": 5, "ratioGap": 0.01, "threads": 1,
                                               "randomCbcSeed": 3, "log": 0}
    assert options.native(get_spec("highs"))["mip_rel_gap"] == 0.01
    with_settings = SolverOptions(time_limit=5, settings={"time_limit": 1, "mip_lp_solver": "ipm"})
    assert with_settings.native(get_spec("highs"))["time_limit"] == 5  # odtk's own options win
    assert with_settings.native(get_spec("highs"))["mip_lp_solver"] == "ipm"


@pytest.mark.parametrize("kwargs", [{"time_limit": -1}, {"mip_gap": "x"}, {"threads": 1.5},
                                    {"seed": -2}, {"time_limit": float("inf")}])
def test_bad_option_values(kwargs):
    with pytest.raises(ConfigError):
        SolverOptions(**kwargs)


def _knapsack() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 2.5))
    m.value = pyo.Objective(expr=5 * m.x[0] + 4 * m.x[1] + 3 * m.x[2] + 2 * m.x[3] + m.y + 1,
                            sense=pyo.maximize)
    m.weight = pyo.Constraint(expr=4 * m.x[0] + 3 * m.x[1] + 2 * m.x[2] + m.x[3] + m.y <= 6)
    m.pair = pyo.Constraint(expr=(1, m.x[0] + m.x[1], 2))
    m.tie = pyo.Constraint(expr=m.x[2] == m.x[3])
    return m


@pytest.mark.parametrize("handoff", ["native", "pyomo"])
def test_every_solver_solves_a_known_milp(solver, handoff):
    # optimum 10 at x = (0, 1, 1, 1), y = 0: value 4 + 3 + 2 + 1, weight 3 + 2 + 1 = 6
    m = _knapsack()
    outcome = solve_instance(m, solver, SolverOptions(time_limit=30), handoff=handoff)
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(10.0)
    assert pyo.value(m.value) == pytest.approx(10.0)
    assert outcome.size.variables == 5 and outcome.size.integer_variables == 4


def test_infeasible_model_is_reported(solver):
    m = _knapsack()
    m.impossible = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3)
    outcome = solve_instance(m, solver)
    assert outcome.termination == "infeasible" and not outcome.has_solution


def test_warm_start_and_cutoff(solver):
    m = _knapsack()
    for var, value in zip([*m.x.values(), m.y], [1, 0, 0, 0, 2]):  # feasible, value 8
        var.set_value(value)
    assert solve_instance(m, solver, warm_start=True).objective == pytest.approx(10.0)
    assert solve_instance(_knapsack(), solver, cutoff=9.5).objective == pytest.approx(10.0)
    beyond = solve_instance(_knapsack(), solver, cutoff=10.5)
    assert beyond.termination == "infeasible" and not beyond.has_solution
