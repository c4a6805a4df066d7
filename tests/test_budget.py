"""The budget every solve runs under: a default limit, an answer at the limit, a stop that keeps
the best model, and bounds that never claim more than the ideal objective."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import odtk
from odtk.budget import DEFAULT_TIME_LIMIT, Budget, Stopped, stop_on_signals
from odtk.exceptions import ConfigError
from odtk.progress import Progress


def _scores_its_objective(result, data) -> bool:
    """The returned FlowOCT model (λ = 0), predicting its training data, has as many correct rows
    as the objective reported."""
    dataset = odtk.api.as_dataset(data)
    correct = np.sum(np.asarray(result.model.predict(dataset.features), dtype=str)
                     == dataset.target.astype(str).to_numpy())
    return correct == result.objective


def test_default_budget_is_finite_everywhere():
    import inspect

    assert inspect.signature(odtk.solve).parameters["time_limit"].default == DEFAULT_TIME_LIMIT
    for estimator in (odtk.OptimalTreeClassifier(), odtk.OptimalDiagramClassifier(),
                      odtk.CategoricalTreeClassifier()):
        assert estimator.time_limit == DEFAULT_TIME_LIMIT
    assert Budget().seconds == DEFAULT_TIME_LIMIT and Budget(None).remaining() is None


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), "10", True])
def test_bad_budget_is_one_clear_error(seconds):
    with pytest.raises(ConfigError, match="time_limit"):
        Budget(seconds)


def test_excluded_stage_moves_the_deadline():
    budget = Budget(100.0)
    before = budget.deadline
    with budget.excluded("compiling"):
        threading.Event().wait(0.05)
    assert budget.deadline - before >= 0.05
    assert budget.spent["compiling"] >= 0.05


def test_signal_marks_the_budget_and_raises_outside_waiting():
    budget = Budget(None)
    with stop_on_signals(budget, (signal.SIGTERM,)):
        with budget.waiting():
            signal.raise_signal(signal.SIGTERM)  # waiting: only marked
        assert budget.signal == signal.SIGTERM and budget.flag[0] == signal.SIGTERM
        with pytest.raises(Stopped) as stopped:
            signal.raise_signal(signal.SIGTERM)
    assert stopped.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


SIGNAL_WHILE_DRAWING = """
import io, os, signal
from odtk.budget import Budget, stop_on_signals
from odtk.progress import Progress

class Terminal(io.StringIO):
    armed = False

    def write(self, text):
        if self.armed:  # the signal comes while the status line is written, its lock held
            self.armed = False
            os.kill(os.getpid(), signal.SIGTERM)
        return super().write(text)

terminal = Terminal()
budget = Budget(None, Progress("bar", terminal))
with stop_on_signals(budget), budget.waiting():
    terminal.armed = True
    budget.report(incumbent=1.0)
budget.progress.close()
print(budget.signal, budget.progress.phase_name)
"""


def test_a_signal_while_the_status_line_is_written_marks_the_budget_and_does_not_hang():
    """A Ctrl-C that lands while a solver callback redraws the status line (its lock held) once
    deadlocked the handler, which redrew the line to show "stopping"."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_WHILE_DRAWING], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(int(signal.SIGTERM)), "stopping"]


def test_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        budget = Budget(None)
        with stop_on_signals(budget, (signal.SIGHUP,)):
            signal.raise_signal(signal.SIGHUP)
        assert budget.signal is None
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_stop_returns_the_best_model_so_far():
    """A stop during a long MILP solve returns the best model found, marked interrupted."""
    budget = Budget(None)
    timer = threading.Timer(3.0, budget.request_stop, args=(signal.SIGINT,))
    timer.start()
    try:
        result = odtk.solve("flowoct", "flowoct/monk1", depth=3, solver="highs", budget=budget)
    finally:
        timer.cancel()
    assert result.termination == "interrupted"
    assert result.steps["stopped"]["signal"] == "SIGINT"
    assert _scores_its_objective(result, "flowoct/monk1")
    assert result.objective >= result.steps["warm_start"]["objective"]  # never worse than the start


def test_bound_never_beyond_the_ideal_objective():
    result = odtk.solve("flowoct", "flowoct/monk1", depth=3, solver="highs", time_limit=4, warm_start=None)
    assert result.bound is not None and result.bound <= result.n_samples
    assert result.gap is not None and result.gap >= 0


def test_a_milp_that_finds_nothing_still_answers():
    """ODD's MILP alone on a skeleton it cannot solve in seconds: the majority leaf or better,
    not an exception."""
    result = odtk.solve("odd", "uci/iris", skeleton="1-2-4-8", strategy="milp", time_limit=4)
    assert result.termination in ("time_limit", "optimal")
    assert result.train_accuracy >= 1 / 3
    assert result.bound is not None and result.bound >= 0


def test_progress_line_shows_phase_budget_and_figures():
    progress = Progress("off")
    budget = Budget(30.0, progress)
    progress.phase("solving")
    budget.report(incumbent=10.0, bound=12.0, nodes=1234)
    line = progress.status()
    for part in ("odtk solving", "/ 30s", "incumbent 10", "bound 12", "gap 20.0%", "nodes 1,234"):
        assert part in line, line


def _odtk(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "odtk", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_cli_bad_time_limit_is_one_line(value):
    run = _odtk("solve", "--model", "cp", "--dataset", "flowoct/monk1", "--depth", "2", "--time-limit", value)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "--time-limit" in run.stderr


def test_cli_time_limit_none_means_no_limit():
    run = _odtk("solve", "--model", "cp", "--dataset", "flowoct/monk1", "--depth", "2", "--time-limit", "none")
    assert run.returncode == 0, run.stderr
    assert "status      optimal" in run.stdout


def test_an_alarm_inside_pyomos_gc_pause_leaves_no_broken_state():
    """The build's alarm can fire between two steps of Pyomo's ``PauseGC`` (its count raised, the
    pause not yet recorded): the build still ends as timed out, collection is back on, and the
    next Pyomo pause enters and exits in order."""
    import gc
    import time
    import types

    import networkx as nx
    from pyomo.common.gc_manager import PauseGC, PauseGCCompanion

    from odtk.pipeline import milp

    class Interrupted:
        def create_instance(self, data):
            PauseGCCompanion._stack_depth += 1  # PauseGC.__enter__'s first step
            time.sleep(5)  # its second step, the alarm firing before it

    module = types.SimpleNamespace(KEY="fake", make_data=lambda *args, **kwargs: {}, build_model=Interrupted)
    problem = types.SimpleNamespace(module=module, X=np.zeros((2, 1)), y=np.zeros(2), classes=[0, 1], extra={})
    depth = PauseGCCompanion._stack_depth
    with PauseGC():  # a caller's own pause around the solve
        assert milp.build(problem, nx.DiGraph([(0, 1)]), {}, Budget(0.2)) is None
    assert gc.isenabled() and PauseGCCompanion._stack_depth == depth
