"""Solves in a child process (odtk.solvers.isolated): the same optimum as in this process, a stop
by the budget returns the incumbent the child had streamed, a solver that ignores its time limit
is killed, and no process is left behind, also when odtk itself is killed. In this process, a
signal stops a solve through the solver's callbacks, also with SIGINT ignored."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from odtk.budget import Budget, stop_on_signals
from odtk.progress import Progress
from odtk.solvers import SolverOptions, StandardForm, backends, get_spec, isolated, solver_status
from odtk.solvers.standard_form import model_violation

HANG_STOP = 120  # seconds: only stops a hung test
SOLVERS = [pytest.param(name, marks=pytest.mark.skipif(not solver_status(name).available,
                                                       reason=f"{name} not installed"))
           for name in ("highs", "scip")]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def market_split(rows: int, columns: int, seed: int) -> StandardForm:
    """min Σ_i (s⁺_i + s⁻_i)  s.t.  Σ_j a_ij x_j + s⁺_i − s⁻_i = ⌊Σ_j a_ij / 2⌋,  x binary, s ≥ 0:
    feasible from the start (x = 0), and, with a few rows of forty columns, a long branch and
    bound of small LPs."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(rows, columns)).astype(float)
    A = sp.hstack([sp.csc_array(a), sp.eye_array(rows), -sp.eye_array(rows)], format="csc")
    rhs = np.floor(a.sum(axis=1) / 2)
    n = columns + 2 * rows
    return StandardForm(c=np.r_[np.zeros(columns), np.ones(2 * rows)], offset=0.0, A=A, row_lower=rhs,
                        row_upper=rhs, col_lower=np.zeros(n),
                        col_upper=np.r_[np.ones(columns), np.full(2 * rows, np.inf)],
                        integer=np.r_[np.ones(columns, bool), np.zeros(2 * rows, bool)], maximize=False,
                        columns=[None] * n)


def random_form(seed: int) -> StandardForm:
    """A small random MILP, maximised: integers in [0, 3] and continuous columns in [0, 2] under
    packing rows (x = 0 is feasible)."""
    rng = np.random.default_rng(seed)
    rows, n = 4, 10
    A = sp.csc_array(rng.integers(0, 5, size=(rows, n)).astype(float))
    integer = np.arange(n) < 6
    return StandardForm(c=rng.normal(size=n), offset=1.5, A=A, row_lower=np.full(rows, -np.inf),
                        row_upper=rng.integers(4, 12, size=rows).astype(float), col_lower=np.zeros(n),
                        col_upper=np.where(integer, 3.0, 2.0), integer=integer, maximize=True, columns=[None] * n)


def solved(form: StandardForm, solver: str, isolate: bool, **options) -> dict:
    form.isolate = isolate
    spec = get_spec(solver)
    return backends()[spec.backend].solve(form, spec, SolverOptions(**options))


def children(pid: int | None = None) -> list[int]:
    """The child processes of ``pid`` (default: this process), running or not yet reaped."""
    pid = os.getpid() if pid is None else pid
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except OSError:
            continue  # ended meanwhile
    return found


@pytest.fixture
def left_behind():
    """The children of this process started during the test and still there: a helper other
    tests left (Dask's resource tracker lives as long as pytest) is not this test's."""
    before = set(children())
    return lambda: sorted(set(children()) - before)


def objective(form: StandardForm, values: np.ndarray) -> float:
    return float(form.c @ values + form.offset)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(3))
def test_the_child_and_this_process_find_the_same_optimum(solver, seed, left_behind):
    here = solved(random_form(seed), solver, isolate=False)
    form = random_form(seed)
    away = solved(form, solver, isolate=True)
    assert here["termination"] == away["termination"] == "optimal"
    assert objective(form, away["values"]) == pytest.approx(objective(form, here["values"]), abs=1e-6)
    assert away["bound"] == pytest.approx(here["bound"], abs=1e-6)
    assert model_violation(form, away["values"]) < 1e-6
    assert left_behind() == []


@pytest.mark.parametrize("isolate", [False, True])
def test_scip_keeps_its_dual_bound_without_a_solution(isolate):
    if not solver_status("scip").available:
        pytest.skip("scip not installed")
    form = market_split(rows=5, columns=40, seed=5)
    form.cutoff = 0.5  # only an exact split beats it: SCIP finds none in a minute (96,000 nodes)
    raw = solved(form, "scip", isolate, time_limit=1)
    assert raw["termination"] == "time_limit" and raw["values"] is None
    assert raw["bound"] is not None and -1e-6 <= raw["bound"] <= 0.5  # the optimum is at least the LP's 0


def recorded_incumbents(monkeypatch) -> list[float]:
    """The objectives of the solutions the parent receives from the child, in order."""
    seen: list[float] = []
    take = isolated._Followed.take

    def recording(self, kind, payload):
        if kind == "incumbent":
            seen.append(objective(self.form, payload))
        take(self, kind, payload)

    monkeypatch.setattr(isolated._Followed, "take", recording)
    return seen


def stop_after_first_incumbent(budget: Budget, seen: list[float]) -> threading.Thread:
    """A timer thread: once the child has streamed a solution, stop the budget as SIGINT would."""
    def stop() -> None:
        deadline = time.monotonic() + HANG_STOP
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        budget.request_stop(signal.SIGINT)

    thread = threading.Thread(target=stop, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_stopped_solve_returns_the_incumbent_the_child_streamed(solver, monkeypatch, left_behind):
    seen = recorded_incumbents(monkeypatch)
    budget = Budget(None, Progress("off"))
    form = market_split(rows=5, columns=40, seed=1)
    stop_after_first_incumbent(budget, seen)
    raw = solved(form, solver, isolate=True, time_limit=3600, budget=budget)
    assert raw["termination"] == "interrupted" and raw["message"] == "stopped by SIGINT"
    assert seen and objective(form, raw["values"]) == min(seen)
    assert model_violation(form, raw["values"]) < 1e-6
    assert budget.progress.fields["incumbent"] <= seen[0]  # the progress line saw it
    assert left_behind() == []


def solve(form: StandardForm, spec, options: SolverOptions) -> dict:
    """A backend (run in the child, as ``test_isolated_solve.solve``) that ignores its time
    limit, as HiGHS does in presolve and in the MIP's root LP."""
    time.sleep(HANG_STOP)
    raise AssertionError("the child outlived its hard deadline")


def test_a_solver_that_runs_past_its_time_limit_is_killed(left_behind):
    form = random_form(0)
    raw = isolated.solve(form, get_spec("highs"), SolverOptions(time_limit=0.1), __name__, "csc")
    assert raw["termination"] == "time_limit" and "past its time limit" in raw["message"], raw["message"]
    assert raw["values"] is None and left_behind() == []


def test_an_interrupted_solve_instance_returns_the_incumbent_loaded(monkeypatch, left_behind):
    """Through ``solve_instance``: an interrupted solve is an outcome (not an exception) whose
    solution is loaded into the Pyomo instance."""
    import pyomo.environ as pyo

    from odtk.solvers import solve_instance

    form = market_split(rows=5, columns=40, seed=2)
    A, columns = form.A.toarray(), range(len(form.c))
    model = pyo.ConcreteModel()
    model.x = pyo.Var(columns, bounds=lambda m, j: (form.col_lower[j], form.col_upper[j]),
                      within=lambda m, j: pyo.Binary if form.integer[j] else pyo.NonNegativeReals)
    model.rows = pyo.Constraint(range(A.shape[0]), rule=lambda m, i: sum(
        A[i, j] * m.x[j] for j in columns if A[i, j]) == form.row_lower[i])
    model.objective = pyo.Objective(expr=sum(form.c[j] * model.x[j] for j in columns if form.c[j]))
    seen = recorded_incumbents(monkeypatch)
    budget = Budget(None, Progress("off"))
    stop_after_first_incumbent(budget, seen)
    outcome = solve_instance(model, "highs", SolverOptions(time_limit=3600, budget=budget))
    assert outcome.termination == "interrupted" and outcome.has_solution
    assert outcome.objective == pytest.approx(min(seen)) and pyo.value(model.objective) == pytest.approx(min(seen))
    assert left_behind() == []


@pytest.mark.parametrize("solver", SOLVERS)
def test_sigterm_stops_a_solve_in_this_process_with_sigint_ignored(solver, left_behind):
    """A solve that needs this process (a solution callback: it stays here even when asked to
    go) stops through the solver's callbacks on SIGTERM, as in a script's background job
    (SIGINT ignored)."""
    form = market_split(rows=5, columns=40, seed=3)
    found = []
    form.on_solution = found.append
    budget = Budget(None, Progress("off"))

    def terminate() -> None:
        deadline = time.monotonic() + HANG_STOP
        while not found and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stop_on_signals(budget):
            threading.Thread(target=terminate, daemon=True).start()
            raw = solved(form, solver, isolate=True, time_limit=3600, budget=budget)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert budget.signal == signal.SIGTERM and raw["termination"] == "interrupted"
    assert raw["values"] is not None and model_violation(form, raw["values"]) < 1e-6
    assert left_behind() == []


CHILD_OF_KILLED_PARENT = textwrap.dedent("""
    import sys
    sys.path[:0] = {path!r}
    from test_isolated_solve import market_split, solved
    solved(market_split(rows=6, columns=60, seed=4), {solver!r}, isolate=True, time_limit=3600)
    """)


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_child_dies_with_a_killed_parent(solver):
    script = CHILD_OF_KILLED_PARENT.format(path=[str(Path(__file__).parent), *sys.path], solver=solver)
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + HANG_STOP
        while not (grandchildren := children(parent.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert grandchildren, "the solver process did not start"
        parent.kill()
        parent.wait()
        while any(_alive(pid) for pid in grandchildren) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in grandchildren), "the solver process outlived odtk"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not reaped by its new parent, counts as gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
