"""Stopping CBC, Gurobi and CPLEX: by the budget, by its deadline, by a real signal.

What a user is promised, and these tests require, for each installed solver of the three:

- a solve whose budget is stopped (``budget.request_stop(SIGTERM)``, what the signal handler
  does) once the solver has an incumbent returns ``interrupted`` with that incumbent, which meets
  the model; stopped before it starts, it returns ``interrupted`` all the same;
- the budget's deadline stops a solve given no time limit of its own, as ``time_limit``;
- its progress (incumbent, bound, nodes) reaches the budget while it runs;
- SIGINT, SIGTERM and SIGHUP sent to a process solving under ``stop_on_signals`` end the solve
  with the incumbent, leave no solver process and no temporary file; with SIGINT ignored (a
  script's background job), SIGINT stays ignored and SIGTERM still stops it;
- CBC: no CBC process and no temporary folder remain after any stop, and a CBC that ignores its
  own time limit is ended at the limit plus a grace;
- BendersOCT's rounds on HiGHS and CBC: a stop between rounds, or a signal in the loop's own
  code, returns the best repaired solution as ``interrupted``, rounds and cuts reported; the root
  cut loop and the SAT models' MILP oracle answer the budget too.

The model is a market-split problem (6 rows, 50 binaries): every solver finds a first solution at
once and would need hours to prove one optimal, so a stop always comes mid-search. No duration is
asserted; HANG_STOP only ends a test that hangs.
"""
from __future__ import annotations

import inspect
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

import odtk.decomposition as decomposition
from odtk.budget import Budget, Stopped
from odtk.engines.sat_inference import TimeLimitReached
from odtk.formulations import benders, flowoct
from odtk.oracles import MilpOracle
from odtk.progress import Progress
from odtk.solvers import SolverOptions, registry, solve_instance, solver_status, to_standard_form
from odtk.solvers import cbc as cbc_backend
from odtk.solvers.cbc import CbcLog
from odtk.solvers.root_cuts import root_cut_loop
from odtk.solvers.standard_form import lazy_rows

from fake_solvers import fake_cbc, fake_registry
from test_benders import _binary, _instance as benders_instance
from test_flowoct_cuts import _instance as flowoct_instance, _random_data

SOLVERS = [pytest.param(name, marks=pytest.mark.skipif(not solver_status(name).available,
                                                       reason=f"{name} not installed"))
           for name in ("cbc", "gurobi", "cplex")]
HANG_STOP = 120  # s: only reached when an awaited event never comes (a hung test)



def market_split(rows: int = 6, columns: int = 50, seed: int = 0):
    """min Σ |slack| s.t. a_i · x + p_i - q_i = ⌊Σ a_i / 2⌋, x binary: x = 0 is feasible at once;
    proving an optimum takes a branch and bound of hours."""
    a = np.random.default_rng(seed).integers(0, 100, (rows, columns))
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(columns), domain=pyo.Binary)
    model.p = pyo.Var(range(rows), domain=pyo.NonNegativeReals)
    model.q = pyo.Var(range(rows), domain=pyo.NonNegativeReals)
    model.rows = pyo.Constraint(range(rows), rule=lambda m, i: sum(int(a[i, j]) * m.x[j] for j in range(columns))
                                + m.p[i] - m.q[i] == int(a[i].sum() // 2))
    model.objective = pyo.Objective(expr=sum(model.p[i] + model.q[i] for i in range(rows)))
    return model


class Recorded(Progress):
    """A progress reporter that keeps every update and says when an incumbent came."""

    def __init__(self):
        super().__init__("off")
        self.updates: list[dict] = []
        self.incumbent = threading.Event()

    def update(self, **fields) -> None:
        super().update(**fields)
        self.updates.append(fields)
        if fields.get("incumbent") is not None:
            self.incumbent.set()


def meets_the_model(instance, tolerance: float = 1e-6) -> bool:
    """True when the values loaded into ``instance`` meet its rows, bounds and integrality."""
    rows = all(abs(pyo.value(row.body) - pyo.value(row.upper)) <= tolerance
               for row in instance.component_data_objects(pyo.Constraint, active=True))
    return rows and all(v.lb - tolerance <= v.value <= (np.inf if v.ub is None else v.ub) + tolerance
                        and (not v.is_integer() or abs(v.value - round(v.value)) <= tolerance)
                        for v in instance.component_data_objects(pyo.Var))


@pytest.fixture
def cbc_processes(monkeypatch) -> list[subprocess.Popen]:
    """Every process the CBC backend starts."""
    started = []
    real = subprocess.Popen

    def recorded(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(cbc_backend.subprocess, "Popen", recorded)
    return started


def assert_nothing_left(solver: str, temp: Path, processes: list[subprocess.Popen]) -> None:
    assert os.listdir(temp) == [], "the solve left temporary files"
    if solver == "cbc":
        assert processes and all(process.returncode is not None for process in processes), "CBC still runs"


# --------------------------------------------------------------------------- the budget's stop
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_stop_returns_the_incumbent_marked_interrupted(solver, temp, cbc_processes):
    progress = Recorded()
    budget = Budget(None, progress)

    def stop_after_an_incumbent() -> None:
        if progress.incumbent.wait(HANG_STOP):
            budget.request_stop(signal.SIGTERM)

    threading.Thread(target=stop_after_an_incumbent, daemon=True).start()
    instance = market_split()
    outcome = solve_instance(instance, solver, SolverOptions(time_limit=3 * HANG_STOP, threads=1, budget=budget))
    assert outcome.termination == "interrupted" and outcome.has_solution, outcome
    assert meets_the_model(instance)
    assert outcome.objective == pytest.approx(pyo.value(instance.objective))
    assert outcome.bound is not None and outcome.bound <= outcome.objective + 1e-6  # proven: 0 ≤ optimum
    assert any("nodes" in update or "bound" in update for update in progress.updates)
    assert_nothing_left(solver, temp, cbc_processes)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_stop_before_the_solve_starts_returns_at_once(solver, temp, cbc_processes):
    budget = Budget(None, Progress("off"))
    budget.request_stop(signal.SIGINT)
    instance = market_split()
    outcome = solve_instance(instance, solver, SolverOptions(time_limit=3 * HANG_STOP, budget=budget))
    assert outcome.termination == "interrupted"
    assert not outcome.has_solution or meets_the_model(instance)
    assert_nothing_left(solver, temp, cbc_processes)


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_budgets_deadline_stops_a_solve_without_a_limit_of_its_own(solver, temp, cbc_processes):
    budget = Budget(2.0, Progress("off"))
    instance = market_split()
    outcome = solve_instance(instance, solver, SolverOptions(budget=budget))
    assert outcome.termination == "time_limit" and outcome.has_solution
    assert meets_the_model(instance)
    assert_nothing_left(solver, temp, cbc_processes)


@pytest.fixture
def never_ending_cbc(tmp_path, monkeypatch):
    """The registry's cbc is a stand-in that answers ``-quit`` and otherwise never ends."""
    monkeypatch.setenv("ODTK_SOLVERS", str(fake_registry(tmp_path, cbc=fake_cbc(tmp_path / "cbc", "exec sleep 86400"))))
    registry.cache_clear()
    solver_status.cache_clear()
    yield
    monkeypatch.delenv("ODTK_SOLVERS")
    registry.cache_clear()
    solver_status.cache_clear()


@pytest.mark.skipif(not solver_status("cbc").available, reason="cbc not installed")
def test_a_cbc_past_its_time_limit_is_ended(temp, cbc_processes, never_ending_cbc):
    """A CBC that ignores its time limit is stopped at the limit plus the grace: ``time_limit``,
    no solution, nothing left."""
    outcome = solve_instance(market_split(), "cbc", SolverOptions(time_limit=0.5))
    assert outcome.termination == "time_limit" and not outcome.has_solution
    assert "before it wrote a solution" in outcome.message
    assert_nothing_left("cbc", temp, cbc_processes)


# --------------------------------------------------------------------------- real signals
# a process solving the market split under stop_on_signals, as odtk's CLI does: it prints "solving"
# once its solver reported an incumbent, then one JSON line with the outcome
SOLVING = "import numpy as np\nimport pyomo.environ as pyo\n" + inspect.getsource(market_split) + textwrap.dedent("""
    import json, signal, sys
    from odtk.budget import Budget, stop_on_signals
    from odtk.progress import Progress
    from odtk.solvers import SolverOptions, solve_instance

    class Announcing(Progress):
        def update(self, **fields):
            super().update(**fields)
            if fields.get("incumbent") is not None and not getattr(self, "said", False):
                self.said = True
                print("solving", flush=True)

    if sys.argv[2] == "sigint-ignored":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    budget = Budget(3600, Announcing("off"))
    with stop_on_signals(budget):
        instance = market_split()
        outcome = solve_instance(instance, sys.argv[1], SolverOptions(time_limit=3000, threads=1, budget=budget))
    print(json.dumps({"termination": outcome.termination, "objective": outcome.objective, "signal": budget.signal}))
    print(outcome.message, file=sys.stderr)
    """)


def _line_within(stream, seconds: float) -> str:
    """The next line of ``stream``, or "" if none comes within ``seconds`` (a hung process)."""
    ready, _, _ = select.select([stream], [], [], seconds)
    return stream.readline() if ready else ""


def _solving_processes(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (CBC runs on files in it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("signals, to", [
    (["SIGINT"], "group"),  # Ctrl-C in a terminal reaches the whole process group
    (["SIGTERM"], "process"),  # kill, a service manager
    (["SIGHUP"], "group"),  # the terminal closed
    (["SIGINT", "SIGTERM"], "group"),  # a script's background job: SIGINT ignored, SIGTERM stops it
], ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGINT-ignored-then-SIGTERM"])
def test_a_signal_ends_the_solve_with_its_incumbent_and_leaves_nothing(solver, signals, to, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    ignored = len(signals) > 1
    process = subprocess.Popen([sys.executable, "-c", SOLVING, solver, "sigint-ignored" if ignored else "-"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               env={**os.environ, "TMPDIR": str(temp)})
    try:
        assert _line_within(process.stdout, HANG_STOP).strip() == "solving", "the solve never started"
        for name in signals:
            if to == "group":
                os.killpg(process.pid, getattr(signal, name))
            else:
                process.send_signal(getattr(signal, name))
            if name != signals[-1]:
                threading.Event().wait(0.5)  # the ignored signal arrives first
        out, errors = process.communicate(timeout=HANG_STOP)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, errors
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"termination": "interrupted", "objective": result["objective"],
                      "signal": int(getattr(signal, signals[-1]))}, result
    assert result["objective"] is not None, errors
    assert os.listdir(temp) == [], "temporary files were left behind"
    assert _solving_processes(temp) == [], "a solver process outlived the solve"


# --------------------------------------------------------------------------- cut loops and oracles
ITERATIVE = [pytest.param(name, marks=pytest.mark.skipif(not solver_status(name).available,
                                                         reason=f"{name} not installed"))
             for name in ("highs", "cbc")]


class StoppingAfterARound(Recorded):
    """Stops its budget when the first round is reported, as a signal then would."""

    def update(self, **fields) -> None:
        super().update(**fields)
        if fields.get("rounds") == 1:
            self._budget.request_stop(signal.SIGTERM)


def assert_repaired_and_interrupted(outcome, instance) -> None:
    assert outcome.termination == "interrupted" and outcome.has_solution
    assert not benders.separate(instance)  # the repaired solution, loaded: no cut violated
    assert outcome.objective == pytest.approx(pyo.value(instance.objective))
    assert outcome.bound >= outcome.objective - 1e-6  # a maximisation: the loop's bound is above


@pytest.mark.parametrize("solver", ITERATIVE)
def test_benders_rounds_stopped_between_two_return_the_repaired_incumbent(solver):
    progress = StoppingAfterARound()
    budget = Budget(None, progress)
    instance = benders_instance(*_binary(5, n=30, p=5), 2, 0.0)
    outcome, report = decomposition.solve_with_cuts(instance, benders, solver, SolverOptions(budget=budget))
    assert report.rounds == 1 and report.cuts > 0  # the first round found cuts: a second would follow
    assert_repaired_and_interrupted(outcome, instance)
    rounds = [update for update in progress.updates if "rounds" in update]
    assert rounds and rounds[0]["cuts"] == report.cuts and "incumbent" in rounds[0]


@pytest.mark.parametrize("solver", ITERATIVE)
def test_a_signal_in_the_benders_loop_returns_the_best_repaired_round(solver, monkeypatch):
    """The handler raises Stopped in the loop's Python code (here: repairing round 2's solution)."""
    budget = Budget(None, Progress("off"))
    real, calls = benders.repair, []

    def repair_then_signal(instance, violated) -> None:
        calls.append(1)
        if len(calls) == 2:
            budget.request_stop(signal.SIGTERM)
            raise Stopped(signal.SIGTERM)
        real(instance, violated)

    monkeypatch.setattr(benders, "repair", repair_then_signal)
    instance = benders_instance(*_binary(5, n=30, p=5), 2, 0.0)
    outcome, report = decomposition.solve_with_cuts(instance, benders, solver, SolverOptions(budget=budget))
    assert report.rounds == 2
    assert_repaired_and_interrupted(outcome, instance)


def test_a_signal_before_any_repaired_round_is_raised_again(monkeypatch):
    """With no repaired solution yet, the stop goes on to the caller (which holds the start)."""
    def signal_now(instance, violated) -> None:
        raise Stopped(signal.SIGTERM)

    monkeypatch.setattr(benders, "repair", signal_now)
    with pytest.raises(Stopped):
        decomposition.solve_with_cuts(benders_instance(*_binary(5, n=30, p=5), 2, 0.0), benders, "highs",
                                      SolverOptions(budget=Budget(None, Progress("off"))))


def test_the_root_cut_loop_reports_its_rounds_and_stops_with_the_budget():
    X, y = _random_data(7, 60, 6, 3)
    instance = flowoct_instance(X, y, 3, 2)
    progress = Recorded()
    form = to_standard_form(instance)
    form.user_cuts = lazy_rows(form, lambda: flowoct.separate_cuts(instance))
    report = root_cut_loop(form, budget=Budget(None, progress))
    assert report.rounds > 1 and report.cuts > 0
    assert progress.updates[-1] == {"bound": report.bounds[-1], "rounds": report.rounds, "cuts": report.cuts}
    stopped = Budget(None, Progress("off"))
    stopped.request_stop(signal.SIGINT)
    form = to_standard_form(instance)
    form.user_cuts = lazy_rows(form, lambda: flowoct.separate_cuts(instance))
    report = root_cut_loop(form, budget=stopped)
    assert report.rounds == report.cuts == 0


def test_the_milp_oracle_passes_the_budget_on_and_keeps_its_figures_to_itself():
    progress = Recorded()
    oracle = MilpOracle("highs", SolverOptions(budget=Budget(None, progress)), deadline=float("inf"))
    oracle.add_clauses([[1, 2], [-1, 2], [-2, 3]])
    assert {2, 3} <= oracle.solve([])
    assert not any({"incumbent", "bound", "nodes"} & set(update) for update in progress.updates)
    stopped = Budget(None, Progress("off"))
    stopped.request_stop(signal.SIGTERM)
    with pytest.raises(TimeLimitReached):
        MilpOracle("highs", SolverOptions(budget=stopped), deadline=float("inf")).solve([])


# --------------------------------------------------------------------------- CBC's log
def test_cbc_log_progress_in_both_log_formats():
    """The figures of CBC's log, in the model's sense (a maximisation's are negated back)."""
    recent = ["▶ Root LP relaxation",
              "✔ LP Optimal — Frac: 15/53 (28.3%)   Obj: -169   Iters: 186   Time: 0.022s",
              "✔ Root node heuristics — best -110 in 0.152s",
              "▶ Branch and bound",
              "     Nodes   OnTree  Depth         BestSol Method                 BestBound     Gap%   Time(s)",
              "         0        1      0               —                             -169        —      1.42",
              " ★       5        4      5            -112 rounding                    -169   50.89%      4.00",
              "      1102      132     18            -112                             -168.5   50.89%      5.10"]
    classic = ["Cbc0012I Integer solution of -110 found by feasibility pump after 0 iterations and 0 nodes",
               "Cbc0010I After 100 nodes, 22 on tree, -112 best solution, best possible -168.5 (1.23 seconds)"]
    for lines in (recent, classic):
        seen = CbcLog(maximize=True)
        figures = []
        for line in lines:
            if seen.read(line + "\n"):
                figures.append((seen.incumbent, seen.bound, seen.nodes))
        assert figures[-1] == (112.0, 168.5, 1102 if lines is recent else 100), figures
    empty = CbcLog(maximize=False)
    empty.read("Cbc0010I After 7 nodes, 3 on tree, 1e+50 best solution, best possible -5 (0.1 seconds)\n")
    assert (empty.incumbent, empty.bound, empty.nodes) == (None, -5.0, 7)
