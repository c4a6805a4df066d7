""""optimal" means proven, and solvers are quiet unless asked.

A result is optimal only when the solver says so *and* its bound meets its objective within
the gap tolerance; the fake solvers below wrap each real backend and claim optimality with
a gap. Quietness is checked at the level of file descriptors 1 and 2, in fresh processes
(HiGHS 1.16 prints its banner once per process, from C++).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import odtk
import odtk.solvers as solvers
from odtk.solvers import pyomo_handoff
from odtk.exceptions import ConfigError, SolveError
from odtk.solvers import SolverOptions, verified_termination

# 3 features, 12 rows: depth 1 is solved in milliseconds by every solver (and fits the free licences)
SMALL = pd.DataFrame({"a": [0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1],
                      "b": [0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1],
                      "c": [1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1],
                      "y": [0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0]})


def _claiming_optimal_with_a_gap(monkeypatch, backend: str) -> None:
    """Wrap ``backend``'s solve: its optimal solution is returned, but with a bound 1 worse."""
    module = solvers.backends()[backend]
    real = module.solve

    def fake(form, spec, options):
        raw = real(form, spec, options)
        assert raw["termination"] == "optimal"
        raw["bound"] = float(form.c @ raw["values"] + form.offset) + (1.0 if form.maximize else -1.0)
        return raw

    monkeypatch.setattr(module, "solve", fake)


@pytest.mark.parametrize("model", ["flowoct", "benders"])
def test_a_claimed_optimum_with_a_gap_is_not_reported_optimal(solver, model, monkeypatch):
    _claiming_optimal_with_a_gap(monkeypatch, solvers.get_spec(solver).backend)
    with pytest.raises(SolveError, match=rf"{solver} reported an optimal solution of objective .* "
                                         r"with a bound of .*, 1 away .*not proven optimal"):
        odtk.solve(model, SMALL, target="y", depth=1, solver=solver)


def test_a_claimed_optimum_with_a_gap_through_pyomo_is_not_reported_optimal(solver, monkeypatch):
    real = pyomo_handoff.solve

    def fake(instance, form, spec, options):
        raw = real(instance, form, spec, options)
        raw["bound"] = float(form.c @ raw["values"] + form.offset) + 1.0  # FlowOCT maximises
        return raw

    monkeypatch.setattr(pyomo_handoff, "solve", fake)
    with pytest.raises(SolveError, match="not proven optimal"):
        odtk.solve("flowoct", SMALL, target="y", depth=1, solver=solver, handoff="pyomo")


@pytest.mark.parametrize("gap", [1, 2, 1e300])
def test_a_relative_gap_of_one_or_more_is_refused(gap):
    with pytest.raises(ConfigError, match="relative gap below 1"):
        SolverOptions(mip_gap=gap)


def test_the_requested_gap_is_the_tolerance():
    options = SolverOptions(mip_gap=0.1)
    # stopped within the gap asked for: not called optimal (the bound does not meet the objective)
    assert verified_termination("highs", "optimal", 100.0, 109.0, options, 1.0) == "gap_limit"
    assert verified_termination("highs", "optimal", 100.0, 100.0 + 5e-5, options, 1.0) == "optimal"
    with pytest.raises(SolveError, match="over the tolerance"):
        verified_termination("highs", "optimal", 100.0, 112.0, options, 1.0)
    # a tight absolute tolerance without a gap; an objective of 0 is not divided by
    assert verified_termination("highs", "optimal", 0.0, 5e-7, SolverOptions(), 1.0) == "optimal"
    with pytest.raises(SolveError):
        verified_termination("highs", "optimal", 0.0, 1e-3, SolverOptions(), 1.0)
    with pytest.raises(SolveError, match="with no bound"):
        verified_termination("highs", "optimal", 3.0, None, SolverOptions(), 1.0)
    # the time limit was spent: an unproven incumbent, as any time-limited result
    assert verified_termination("highs", "optimal", 100.0, 112.0, SolverOptions(time_limit=1), 1.5) == "time_limit"
    assert verified_termination("highs", "time_limit", 100.0, 150.0, SolverOptions(), 1.0) == "time_limit"


def test_without_a_gap_the_solver_is_asked_for_none():
    for name in ("highs", "cbc", "gurobi", "cplex"):
        spec = solvers.get_spec(name)
        assert SolverOptions().native(spec)[spec.options["mip_gap"]] == 0.0
        assert SolverOptions(mip_gap=0.05).native(spec)[spec.options["mip_gap"]] == 0.05


def test_highs_returning_its_start_instead_of_its_optimum_is_solved_again():
    """HiGHS 1.16 found on the agreement harness: after a BendersOCT round it returned the MIP
    start (objective 2) as optimal with a bound of 4; the loop then stopped at 2, optimum 3."""
    frame = pd.DataFrame({"x0": ["red", "red", "green", "red"], "x1": [0] * 4, "x2": [0] * 4,
                          "class": [0, 1, 1, 1]})
    result = odtk.solve("benders", frame, target="class", depth=2, lam=0.0, solver="highs")
    assert (result.termination, result.objective, result.bound) == ("optimal", 3.0, pytest.approx(3.0))


# --------------------------------------------------------------------------- quiet
API_SOLVE = """
import json, sys, pandas as pd, odtk
frame = pd.DataFrame(json.loads(sys.argv[1]))
for model in ("flowoct", "benders"):
    odtk.solve(model, frame, target="y", depth=1, solver=sys.argv[2], handoff=sys.argv[3])
"""

# click's runner takes what odtk prints through Python; a solver writing from C (or a child
# process) reaches the real descriptors, which the parent captures
CLI_SOLVE = """
import sys
from click.testing import CliRunner
from odtk.cli import main
result = CliRunner().invoke(main, sys.argv[2:])
open(sys.argv[1], "w").write(result.output)
sys.exit(result.exit_code)
"""


def _fresh_process(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("handoff", ["native", "pyomo"])
def test_an_api_solve_writes_nothing_to_file_descriptors_1_and_2(solver, handoff):
    run = _fresh_process(API_SOLVE, json.dumps(SMALL.to_dict(orient="list")), solver, handoff)
    assert run.returncode == 0, run.stderr
    assert (run.stdout, run.stderr) == ("", "")


def test_a_cli_solve_writes_only_odtks_own_lines(solver, tmp_path):
    csv = tmp_path / "small.csv"
    SMALL.to_csv(csv, index=False)
    printed = tmp_path / "printed.txt"
    run = _fresh_process(CLI_SOLVE, str(printed), "solve", "--model", "flowoct", "--csv", str(csv),
                         "--target", "y", "--depth", "1", "--solver", solver)
    assert run.returncode == 0, run.stderr
    assert (run.stdout, run.stderr) == ("", "")
    lines = printed.read_text().splitlines()
    assert "status      optimal" in lines and lines[0].startswith("[node 1]")
    assert not any(word in line for line in lines
                   for word in ("HiGHS", "Copyright", "Gurobi", "CPLEX", "Welcome", "licen"))


def test_log_shows_the_solvers_own_output():
    run = _fresh_process(API_SOLVE.replace('handoff=sys.argv[3])', 'handoff=sys.argv[3], verbose=True)'),
                         json.dumps(SMALL.to_dict(orient="list")), "highs", "native")
    assert run.returncode == 0, run.stderr
    assert "HiGHS" in run.stdout
