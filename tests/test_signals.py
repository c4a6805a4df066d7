"""SIGINT, SIGTERM and SIGHUP in each phase of ``odtk solve``, for each installed solver.

Every run is an ``odtk solve … --progress`` in a session of its own; the signal is sent once its
status line shows the phase (``benchmarks/_signals.py`` holds the cases and the runner, shared
with ``benchmarks/defaults.py --signals``). What a user is promised, and these tests require:

- the exit code 128 + the signal (130, 143, 129) and one line ``odtk: interrupted by SIG…``;
- the best model found so far printed, marked ``status      interrupted``, and saved where
  ``--output`` asked (nothing printed nor saved while no model exists, e.g. while reading);
- no process it started left running (a solver in a session of its own included) and no file
  left in its ``TMPDIR``;
- started with SIGINT ignored (a shell's background job), SIGINT stays ignored and SIGTERM or
  SIGHUP still stop it the same way;
- ``odtk.solve`` stopped by SIGINT returns its model with termination ``interrupted``.

Each case sends one signal, rotated so that each solver meets several. Timeouts only stop a
hang (60 s); no duration is asserted (``benchmarks/defaults.py --signals`` measures them).
Select the module alone with ``pytest tests/test_signals.py``.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _signals import SAT_DEPTH, Case, Outcome, cases, problems, run  # noqa: E402

from odtk.solvers import solver_status  # noqa: E402

SOLVERS = [name for name in ("highs", "cbc", "scip", "gurobi", "cplex") if solver_status(name).available]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Where the 100,000-row CSV is written once for the module."""
    return tmp_path_factory.mktemp("signal-data")


def assert_stopped(outcome: Outcome, case: Case, name: str) -> None:
    """The run ended on ``name`` as promised (see the module docstring)."""
    found = problems(outcome, case, name)
    assert found == [], f"{found}; stderr's last lines: {outcome.messages[-8:]}"


@pytest.mark.parametrize("case", [pytest.param(case, id=f"{case.name}-{case.signal}") for case in cases(SOLVERS)])
def test_a_signal_in_each_phase_ends_the_run_with_the_best_model(case, data, tmp_path):
    assert_stopped(run(case, tmp_path, data), case, case.signal)


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_sat_depth_stopped_in_its_search_saves_its_best_tree(name, data, tmp_path):
    """``sat-depth`` whose grown CART is 25 deep (issue 39): it once went on for minutes after the
    signal, padding that tree to a perfect one of 2^26 nodes, and saved nothing."""
    outcome = run(SAT_DEPTH, tmp_path, data, name)
    assert_stopped(outcome, SAT_DEPTH, name)
    summary = outcome.saved["summary"]
    assert 0 <= summary["bound"] <= summary["objective"], summary  # an honest bound on the depth


IGNORED = [Case("solving", "highs", ("--model", "flowoct", "--dataset", "uci/habermans-survival", "--depth", "3",
                                     "--solver", "highs"), True, "SIGTERM", delay=1.0),
           Case("searching", "cp", ("--model", "cp", "--dataset", "uci/ozone-eighthr", "--depth", "5"), True,
                "SIGHUP", delay=1.0)]


@pytest.mark.parametrize("case", [pytest.param(case, id=f"{case.name}-{case.signal}") for case in IGNORED])
def test_started_with_sigint_ignored_sigint_stays_ignored_and_sigterm_or_sighup_stop(case, data, tmp_path):
    """SIGINT first (ignored, as POSIX asks of a background job), then the case's signal."""
    outcome = run(case, tmp_path, data, ignore_sigint=True)
    assert_stopped(outcome, case, case.signal)
    assert "SIGINT" not in outcome.stderr


API_SCRIPT = textwrap.dedent("""
    import odtk
    result = odtk.solve("flowoct", "uci/habermans-survival", depth=3, solver="highs", time_limit=None,
                        progress="bar")
    print("termination", result.termination, "objective", result.objective, flush=True)
    """)


def test_sigint_to_odtk_solve_returns_the_model_marked_interrupted(data, tmp_path):
    case = Case("solving", "highs", (), True, delay=1.0)
    outcome = run(case, tmp_path, data, command=[sys.executable, "-c", API_SCRIPT])
    assert outcome.phase_at_signal == case.phase, outcome.phases
    assert outcome.returncode == 0 and "Traceback" not in outcome.stderr, outcome.stderr[-2000:]
    assert outcome.stdout.startswith("termination interrupted objective "), outcome.stdout
    assert outcome.leftover == [] and outcome.temporary == []
