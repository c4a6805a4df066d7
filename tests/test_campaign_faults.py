"""Campaign faults: what ``odtk experiment run`` does when its scheduler, database, workers or
grid go wrong. Each fault ends in one line naming the problem and the fix, a fitting exit
code and a database that holds every finished run once and nothing else; a plain re-run
then finishes the campaign, computing each missing run once.

=====================================================  ===================================================
fault                                                  tested in
=====================================================  ===================================================
the Dask scheduler killed while runs are in flight     test_killed_dask_scheduler_keeps_finished_runs_and_
                                                       a_rerun_computes_the_rest_once
a run listed twice (a seed, a depth, a dataset, a      test_runs_listed_twice_in_a_grid_are_computed_once
method entry given twice)
a registered solver that is not installed              test_solver_that_is_not_installed_is_refused_
                                                       before_any_run_starts
``--db`` a symlink to /dev/null, or the grid file      test_results_database_that_is_no_database_file_
                                                       is_refused
the database deleted while a campaign runs             test_database_deleted_while_a_campaign_runs_is_
                                                       one_line_and_not_begun_again
another application's file moved over the database    test_database_replaced_by_another_file_while_a_
while a campaign runs                                  campaign_runs_is_left_untouched
the grid edited between an interrupted campaign and    test_grid_edited_between_an_interrupted_campaign_
its resume                                             and_its_resume
claims left by a campaign killed with SIGKILL, and     test_claims_of_a_dead_campaign_are_recomputed_
claims of one still running                            and_of_a_live_one_left
SIGTERM to the runner during a solve                   test_sigterm_stops_a_campaign_at_once_and_records_
                                                       nothing_under_way
a worker killed with SIGKILL during its solve          test_worker_killed_mid_run_fails_its_run_ends_its_
                                                       solver_and_retry_computes_it
every run of a campaign failing, with reasons of      test_campaign_whose_every_run_fails_is_one_line_
several lines                                          and_exit_code_1
=====================================================  ===================================================
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

import test_hostile_inputs as hostile
from fake_solvers import fake_cbc, fake_registry
from odtk.experiments import load_grid, parse_grid, runner
from odtk.experiments.store import this_process
from odtk.experiments.worker import now
from odtk.solvers import registry, solver_status
from test_experiments import (HANG, HANG_STOP, ROWS, _stat, cmdline, frame_of, kill_all, marked, needs_proc,
                              odtk_command, private_tmp, row_count, started, wait_gone, wait_unmarked, write_yaml)

needs_cbc = pytest.mark.skipif(not solver_status("cbc").available,
                               reason=f"cbc not installed: {solver_status('cbc').detail}")


def error_line(stderr: str, campaign: str) -> str:
    """The one line of ``stderr`` that is not a finished run's progress line (no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.strip().splitlines() if not line.startswith(f"{campaign} ")]
    assert len(lines) == 1 and lines[0].startswith("odtk: error: "), stderr
    return lines[0]


def gated_cbc(folder: Path) -> tuple[Path, Path, Path]:
    """A CBC that, while the file HOLD exists, logs its process id to HELD and waits; then runs
    the real CBC. Returns the registry naming it ``gatecbc``, HOLD and HELD."""
    import cbcbox

    hold, held = folder / "HOLD", folder / "HELD"
    gate = fake_cbc(folder / "gatecbc", f'if [ -e "{hold}" ]; then echo $$ >> "{held}"; fi\n'
                                        f'while [ -e "{hold}" ]; do sleep 0.1; done\n'
                                        f'exec "{cbcbox.cbc_bin_path()}" "$@"')
    return fake_registry(folder, gatecbc=gate), hold, held


def wait_for(condition, what: str, process: subprocess.Popen | None = None) -> None:
    """Wait until ``condition()`` holds (HANG_STOP only stops a hung test); fails early when
    ``process`` ends first."""
    deadline = time.monotonic() + HANG_STOP
    while not condition():
        assert process is None or process.poll() is None, f"ended before {what}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def tiny_grid(folder: Path, **changes: Any) -> Path:
    """A grid of cp runs at depths 1 and 2 on 30 rows of monk1 (``changes`` replace its keys)."""
    return write_yaml(folder / "grid.yaml", {
        "name": "tiny", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}],
        "methods": [{"model": "cp", "depth": [1, 2]}], "selection": {"retrain": False}, **changes})


def claims_of(db: Path) -> dict[str, str]:
    """Run id → owner of the claims in ``db``."""
    with closing(sqlite3.connect(db)) as connection:
        return dict(connection.execute("SELECT id, owner FROM claims"))


def without(files: dict[str, bytes | None], *names: str) -> dict[str, bytes | None]:
    """A folder snapshot leaving out the results database's files."""
    return {name: data for name, data in files.items() if not name.startswith(names)}


@pytest.fixture
def instant_runs(monkeypatch) -> SimpleNamespace:
    """Runs finish at once in the runner's process (a done row, validation accuracy 1): the
    campaign machinery around them is the real one. ``started`` lists the runs started, in
    order; a test may set ``on_start(run)`` to act as a run starts (a mapping it returns
    changes the row)."""
    runs = SimpleNamespace(started=[], on_start=lambda run: None)

    def run_at_once(run: dict[str, Any], workers: runner.Workers | None = None) -> dict[str, Any]:
        runs.started.append(run)
        changes = runs.on_start(run) or {}
        return {**run, "status": "done", "termination": "optimal", "val_accuracy": 1.0,
                "started": now(), "finished": now(), **changes}

    monkeypatch.setattr(runner, "run_isolated", run_at_once)
    return runs


@pytest.fixture
def use_registry(monkeypatch) -> Iterator[Callable[[Path], None]]:
    """A function making ``$ODTK_SOLVERS`` name a registry file for the in-process runs of
    the test (the registry is read afresh, and again after the test)."""
    def use(path: Path) -> None:
        monkeypatch.setenv("ODTK_SOLVERS", str(path))
        registry.cache_clear()

    yield use
    monkeypatch.undo()
    registry.cache_clear()


# --------------------------------------------------------------------------- grids and databases
def test_runs_listed_twice_in_a_grid_are_computed_once(tmp_path, instant_runs):
    """A seed, a depth and a dataset each given twice: one run, computed and recorded once."""
    monk1 = {"name": "flowoct/monk1", "rows": ROWS}
    raw = {"name": "twice", "datasets": [monk1, monk1], "seeds": [0, 0],
           "methods": [{"model": "cp", "depth": [1, 1]}, {"model": "cp", "depth": 1}], "selection": {"retrain": False}}
    assert len(parse_grid(raw).runs) == 1
    db = tmp_path / "r.sqlite"
    run = hostile.odtk("experiment", "run", write_yaml(tmp_path / "grid.yaml", raw), "--db", db)
    assert run.exit_code == 0, run.output
    assert "twice: 1 runs, 0 already recorded, 1 done, 0 failed" in run.stdout
    assert len(instant_runs.started) == 1
    frame = frame_of(db)
    assert len(frame) == 1 and list(frame["attempts"]) == [1]


def test_solver_that_is_not_installed_is_refused_before_any_run_starts(tmp_path, instant_runs, use_registry):
    """A registered solver whose binary is missing, among highs: one line naming it and the
    fix; no run started or recorded (each would fail, and stay failed on a plain re-run)."""
    solvers = fake_registry(tmp_path, nocbc=tmp_path / "missing-cbc")
    grid = tiny_grid(tmp_path, solvers=["highs", "nocbc"], methods=[{"model": "flowoct", "depth": 1}])
    db = tmp_path / "r.sqlite"
    before = hostile.snapshot(tmp_path)
    use_registry(solvers)
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    hostile.assert_refused(run, "'nocbc' is not available", "missing-cbc", "install it or remove it from the grid")
    assert instant_runs.started == [] and row_count(db) == 0
    assert without(hostile.snapshot(tmp_path), db.name) == before


@pytest.mark.parametrize("target, fix", [("/dev/null", "choose another --db file"),
                                         ("grid.yaml", "give them different file names")],
                         ids=["symlink-to-dev-null", "the-grid-file"])
def test_results_database_that_is_no_database_file_is_refused(tmp_path, target, fix, instant_runs):
    grid = tiny_grid(tmp_path)
    db = tmp_path / "r.sqlite"
    db.symlink_to(target if target.startswith("/") else tmp_path / target)
    hostile.assert_refused_untouched(tmp_path, ["experiment", "run", grid, "--db", db], "r.sqlite", fix)
    assert instant_runs.started == []


def test_database_deleted_while_a_campaign_runs_is_one_line_and_not_begun_again(tmp_path, instant_runs):
    """Deleted as the second run starts: its row cannot be recorded. One line says so, and no
    new empty database appears in its place."""
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"
    instant_runs.on_start = lambda run: db.unlink() if len(instant_runs.started) == 2 else None
    before = hostile.snapshot(tmp_path)
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 1, run.output
    line = error_line(run.stderr, "tiny")
    assert "r.sqlite is gone" in line and "restore it" in line, line
    assert not db.exists()
    assert without(hostile.snapshot(tmp_path), db.name) == without(before, db.name)


def test_database_replaced_by_another_file_while_a_campaign_runs_is_left_untouched(tmp_path, instant_runs):
    """Another application's SQLite file moved over the database as the second run starts: one
    line, and that file is not written to."""
    grid, db, other = tiny_grid(tmp_path), tmp_path / "r.sqlite", tmp_path / "notes.sqlite"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.commit()
    notes = other.read_bytes()
    instant_runs.on_start = lambda run: other.replace(db) if len(instant_runs.started) == 2 else None
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 1, run.output
    line = error_line(run.stderr, "tiny")
    assert "r.sqlite was replaced by another file" in line and "put the database back" in line, line
    assert db.read_bytes() == notes


def test_grid_edited_between_an_interrupted_campaign_and_its_resume(tmp_path, instant_runs):
    """Interrupted after depth 1, then edited to depths 2 and 3: the resume computes those two
    once, and the depth-1 row of the first grid stays as it was."""
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"

    def interrupt(run: dict[str, Any]) -> None:
        if len(instant_runs.started) == 2:
            raise KeyboardInterrupt

    instant_runs.on_start = interrupt
    first = hostile.odtk("experiment", "run", grid, "--db", db)
    assert first.exit_code == 130, first.output
    assert first.stderr.strip().splitlines()[-1] == "odtk: interrupted by SIGINT", first.output
    before = frame_of(db)
    assert list(before["depth"]) == [1] and claims_of(db) == {}
    instant_runs.on_start = lambda _: None
    tiny_grid(tmp_path, methods=[{"model": "cp", "depth": [2, 3]}])
    resumed = hostile.odtk("experiment", "run", grid, "--db", db)
    assert resumed.exit_code == 0, resumed.output
    assert "tiny: 2 runs, 0 already recorded, 2 done, 0 failed" in resumed.stdout
    assert [run["depth"] for run in instant_runs.started] == [1, 2, 2, 3]
    after = frame_of(db).set_index("id")
    assert sorted(after["depth"]) == [1, 2, 3] and (after["attempts"] == 1).all()
    pd.testing.assert_frame_equal(after.loc[before["id"]], before.set_index("id"))


def test_claims_of_a_dead_campaign_are_recomputed_and_of_a_live_one_left(tmp_path, instant_runs):
    """Depth 1 claimed by a process that has ended (a campaign killed with SIGKILL), depth 2 by
    one still running: the first is computed, the second left to its owner and its claim kept."""
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"
    store = runner.ResultStore(db)
    ended = subprocess.Popen(["true"])
    ended.wait()
    host = this_process().rpartition(":")[0]
    dead, live = f"{host}:{ended.pid}", f"{host}:1"  # pid 1 runs as long as the machine
    shallow, deep = (run["id"] for run in load_grid(grid).runs)
    store.claim([shallow], owner=dead)
    store.claim([deep], owner=live)
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 0, run.output
    assert "tiny: 2 runs, 0 already recorded, 1 under way in another campaign, 1 done, 0 failed" in run.stdout
    assert [r["id"] for r in instant_runs.started] == [shallow]
    assert list(frame_of(db)["id"]) == [shallow] and claims_of(db) == {deep: live}


def test_campaign_whose_every_run_fails_is_one_line_and_exit_code_1(tmp_path, instant_runs):
    """Both runs fail (with reasons of two lines): their rows are recorded, each reason on one
    line, and one line gives the count, the first reason and the fix. Retried with one run
    succeeding, the campaign exits 0 as usual."""
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"
    instant_runs.on_start = lambda run: {"status": "failed", "message": f"no memory at depth {run['depth']}\nmore"}
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 1 and run.stdout == "", run.output
    line = error_line(run.stderr, "tiny")
    assert "Every run of tiny failed (2 recorded in" in line and "the first: no memory at depth 1 more)" in line
    assert "--retry-failed" in line
    frame = frame_of(db)
    assert sorted(frame["message"]) == ["no memory at depth 1 more", "no memory at depth 2 more"]
    assert (frame["status"] == "failed").all() and (frame["attempts"] == 1).all()

    instant_runs.on_start = lambda run: {"status": "failed", "message": "no memory"} if run["depth"] == 2 else None
    retry = hostile.odtk("experiment", "run", grid, "--db", db, "--retry-failed")
    assert retry.exit_code == 0 and "tiny: 2 runs, 0 already recorded, 1 done, 1 failed" in retry.stdout, retry.output
    assert sorted(frame_of(db)["status"]) == ["done", "failed"] and len(instant_runs.started) == 4


# --------------------------------------------------------------------------- the Dask scheduler
def dask_scheduler(folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen, subprocess.Popen, str]:
    """A ``dask scheduler`` and one single-threaded ``dask worker`` (so runs start in the order
    submitted), each in its own session; returns both and the scheduler's address."""
    dask = Path(sys.executable).with_name("dask")
    info = folder / "scheduler.json"
    options = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True,
               "env": env, "cwd": folder}
    scheduler = subprocess.Popen([dask, "scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", info],
                                 **options)
    wait_for(lambda: info.exists() and info.stat().st_size > 0, "wrote its address", scheduler)
    address = json.loads(info.read_text())["address"]
    worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                               "--death-timeout", "5"], **options)
    return scheduler, worker, address


@needs_cbc
@needs_proc
@pytest.mark.slow
def test_killed_dask_scheduler_keeps_finished_runs_and_a_rerun_computes_the_rest_once(tmp_path, instant_runs,
                                                                                       use_registry):
    """Three runs in order: cp (finishes), flowoct on a CBC held at its gate (in flight when the
    scheduler is SIGKILLed), cp at depth 2 (never started). The runner ends with one line and
    exit code 1, the finished run recorded and nothing else; a local re-run computes the other
    two, each once."""
    pytest.importorskip("distributed")
    registry, hold, held = gated_cbc(tmp_path)
    grid = write_yaml(tmp_path / "grid.yaml", {
        "name": "lost", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}], "guard": HANG_STOP,
        "methods": [{"model": "cp", "depth": 1}, {"model": "flowoct", "depth": 1, "solvers": ["gatecbc"]},
                    {"model": "cp", "depth": 2}], "selection": {"retrain": False}})
    db, marker = tmp_path / "r.sqlite", uuid.uuid4().hex
    env = {**os.environ, "ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker, "TMPDIR": private_tmp(tmp_path)}
    hold.touch()
    scheduler, worker, address = dask_scheduler(tmp_path, env)
    try:
        runner = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db, "--executor", "dask",
                                               "--scheduler", address),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        wait_for(lambda: row_count(db) == 1 and started(held), "held a run at the gate", runner)
        os.killpg(scheduler.pid, signal.SIGKILL)
        out, err = runner.communicate(timeout=HANG_STOP)
    finally:
        for process in (scheduler, worker):
            os.killpg(process.pid, signal.SIGKILL)
        kill_all(marked(marker))
        assert not wait_unmarked(marker), "a run of the killed cluster is still running"
        hold.unlink()
    assert runner.returncode == 1, out + err
    line = error_line(err, "lost")
    assert "Lost the Dask scheduler" in line and address in line and "run the campaign again" in line, line
    frame = frame_of(db)
    assert list(frame["status"]) == ["done"] and list(frame["depth"]) == [1] and list(frame["method"]) == ["cp"]

    use_registry(registry)
    again = hostile.odtk("experiment", "run", grid, "--db", db, "--jobs", "2")
    assert again.exit_code == 0, again.output
    assert "lost: 3 runs, 1 already recorded, 2 done, 0 failed" in again.stdout
    assert len(instant_runs.started) == 2
    after = frame_of(db)
    assert len(after) == 3 and after["id"].is_unique
    assert (after["status"] == "done").all() and (after["attempts"] == 1).all()
    assert sorted(zip(after["method"], after["depth"])) == [("cp", 1), ("cp", 2), ("flowoct", 1)]


# --------------------------------------------------------------------------- processes
@needs_cbc
@needs_proc
def test_sigterm_stops_a_campaign_at_once_and_records_nothing_under_way(tmp_path):
    """As Ctrl-C: the runner ends with 'odtk: interrupted by SIGTERM' (128 + 15), the run under way is
    neither finished nor recorded, no queued run starts and no process of it is left."""
    log = tmp_path / "hangcbc.log"
    solvers = fake_registry(tmp_path, hangcbc=fake_cbc(tmp_path / "hangcbc", f'echo $$ >> "{log}"\n{HANG}'))
    grid = tiny_grid(tmp_path, seeds=[0, 1], solvers=["hangcbc"], time_limit=2, guard=HANG_STOP,
                     methods=[{"model": "flowoct", "depth": 1}])
    db, marker = tmp_path / "r.sqlite", uuid.uuid4().hex
    env = {**os.environ, "ODTK_SOLVERS": str(solvers), "ODTK_TEST_MARK": marker, "TMPDIR": private_tmp(tmp_path)}
    before = hostile.snapshot(tmp_path)  # with TMPDIR empty: the run's temporary files are removed
    campaign = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for(lambda: started(log), "started the hanging solver", campaign)
        campaign.send_signal(signal.SIGTERM)
        out, err = campaign.communicate(timeout=HANG_STOP)
        assert campaign.returncode == 128 + signal.SIGTERM, out + err
        assert "Traceback" not in err and err.strip().splitlines() == ["odtk: interrupted by SIGTERM"], err
        assert not wait_unmarked(marker), "a worker or solver outlived the terminated campaign"
    finally:
        kill_all(marked(marker))
    assert len(started(log)) == 1 and row_count(db) == 0 and claims_of(db) == {}
    assert without(hostile.snapshot(tmp_path), db.name, log.name) == before


def worker_of(pid: int) -> int:
    """The odtk worker process that ``pid`` runs under."""
    while pid > 1 and "from odtk.experiments.worker import main" not in " ".join(cmdline(pid)):
        pid = _stat(pid)[1]
    assert pid > 1, "no odtk worker above the solver"
    return pid


@needs_cbc
@needs_proc
def test_worker_killed_mid_run_fails_its_run_ends_its_solver_and_retry_computes_it(tmp_path, instant_runs,
                                                                                      use_registry):
    """The worker SIGKILLed (as by the out-of-memory killer) while its CBC waits at the gate:
    the run is recorded failed naming the signal, the orphaned solver is ended at once (not at
    its time limit), a plain re-run leaves the run and --retry-failed computes it once more."""
    solvers, hold, held = gated_cbc(tmp_path)
    grid = tiny_grid(tmp_path, solvers=["gatecbc"], guard=HANG_STOP, methods=[{"model": "flowoct", "depth": 1}])
    db, marker = tmp_path / "r.sqlite", uuid.uuid4().hex
    hold.touch()
    campaign = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "ODTK_SOLVERS": str(solvers), "ODTK_TEST_MARK": marker,
                                     "TMPDIR": private_tmp(tmp_path)})
    try:
        wait_for(lambda: started(held), "held a run at the gate", campaign)
        os.kill(worker_of(started(held)[0]), signal.SIGKILL)
        out, err = campaign.communicate(timeout=HANG_STOP)
        assert not wait_gone(started(held)), "the killed worker's solver is still running"
    finally:
        kill_all(marked(marker))
        hold.unlink()
    assert campaign.returncode == 1 and out == "", out + err
    line = error_line(err, "tiny")
    assert "Every run of tiny failed (1 recorded" in line and "signal SIGKILL" in line, line
    (failed,) = frame_of(db).itertuples()
    assert failed.status == "failed" and "worker process died (signal SIGKILL)" in failed.message, failed.message

    use_registry(solvers)
    plain = hostile.odtk("experiment", "run", grid, "--db", db)
    assert plain.exit_code == 0 and "1 runs, 1 already recorded, 0 done, 0 failed" in plain.stdout, plain.output
    retry = hostile.odtk("experiment", "run", grid, "--db", db, "--retry-failed")
    assert retry.exit_code == 0 and "1 runs, 0 already recorded, 1 done, 0 failed" in retry.stdout, retry.output
    (computed,) = frame_of(db).itertuples()
    assert len(instant_runs.started) == 1
    assert (computed.status, computed.attempts, computed.id) == ("done", 2, failed.id)

