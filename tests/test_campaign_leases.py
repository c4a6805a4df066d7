"""Campaigns that cannot stall or repeat work: leased claims across hosts, releasing claims by
hand, Dask results released once recorded, a locked database, read-only places, ``--jobs``
above the cores and ``--db`` naming the grid file.

Two hosts are played by one machine through ``$ODTK_HOST``; read-only file systems are
read-only bind mounts in a mount namespace of their own (``unshare -m``). The tests wait for
events (claims renewed, rows recorded, leases past), never assert on how long anything took.

=====================================================  ===================================================
fault                                                  tested in
=====================================================  ===================================================
a campaign killed on one host, its claims left         test_campaign_killed_on_one_host_is_finished_by_
                                                       another_after_its_lease
a claim whose process id now names a later process     test_claim_of_an_ended_process_whose_pid_was_
                                                       reused_is_taken_at_once
claims to release by hand                              test_release_frees_stale_claims_and_all_with_all
Dask workers killed twice during a campaign            test_dask_workers_killed_twice_recompute_no_
                                                       recorded_run
a database another writer keeps locked                 test_locked_database_says_it_waits_and_names_the_
                                                       writer_as_the_cause
                                                       test_campaign_waiting_for_a_lock_goes_on_once_it_
                                                       is_released
a new --db in a read-only folder; a database on a      test_read_only_places_are_named_and_a_read_only_
read-only file system                                  database_is_still_reported
--jobs above the usable cores                          test_jobs_above_the_cores_are_capped_with_a_
                                                       warning_unless_forced
--db naming the grid file                              test_db_that_is_the_grid_file_is_refused
=====================================================  ===================================================
"""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
import uuid
from collections import Counter
from contextlib import closing
from pathlib import Path

import pytest

import test_hostile_inputs as hostile
from odtk.experiments import load_grid, runner
from odtk.experiments.claims import this_process
from odtk.experiments.store import ResultStore
from test_campaign_faults import (claims_of, gated_cbc, instant_runs, needs_cbc, tiny_grid,  # noqa: F401 (fixtures)
                                 use_registry, wait_for)
from test_experiment_report import _row
from test_experiments import (HANG_STOP, frame_of, kill_all, marked, needs_proc, odtk_command, private_tmp,
                              row_count, started, wait_unmarked)

LEASE = 3  # s: the shortest lease (a heartbeat every second)


def expiries(db: Path) -> list[float]:
    """The lease expiry times of the claims in ``db``."""
    with closing(sqlite3.connect(db)) as connection:
        return [expires for (expires,) in connection.execute("SELECT expires FROM claims")]


# --------------------------------------------------------------------------- leases across hosts
@needs_cbc
@needs_proc
@pytest.mark.slow
def test_campaign_killed_on_one_host_is_finished_by_another_after_its_lease(tmp_path, instant_runs, use_registry):
    """Host alpha holds its run at a gated CBC past several leases: its heartbeat keeps the
    claim, and host beta leaves the run to it. Alpha is then killed with its whole process
    group (as a host going down): beta still leaves the run while the lease lasts, and once
    it has expired computes it, recording it once."""
    registry, hold, held = gated_cbc(tmp_path)
    grid = tiny_grid(tmp_path, solvers=["gatecbc"], guard=HANG_STOP, methods=[{"model": "flowoct", "depth": 1}])
    db, marker = tmp_path / "r.sqlite", uuid.uuid4().hex
    env = {**os.environ, "ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker, "ODTK_HOST": "alpha",
           "TMPDIR": private_tmp(tmp_path)}
    use_registry(registry)
    hold.touch()
    alpha = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db, "--lease", LEASE),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
    beta = {"ODTK_HOST": "beta"}
    try:
        wait_for(lambda: started(held), "held a run at the gate", alpha)
        first = expiries(db)
        wait_for(lambda: time.time() > first[0] + 1 and expiries(db) != first, "renewed past the lease", alpha)
        while_alive = hostile.odtk("experiment", "run", grid, "--db", db, env=beta)
        assert while_alive.exit_code == 0, while_alive.output
        assert "1 under way in another campaign, 0 done" in while_alive.stdout
        os.killpg(alpha.pid, signal.SIGKILL)
        alpha.communicate()
        before_expiry = hostile.odtk("experiment", "run", grid, "--db", db, env=beta)
        assert "1 under way in another campaign, 0 done" in before_expiry.stdout, before_expiry.output
    finally:
        kill_all(marked(marker))
        assert not wait_unmarked(marker), "a process of the killed host is still running"
        hold.unlink()
    assert instant_runs.started == [] and row_count(db) == 0
    wait_for(lambda: time.time() > max(expiries(db)), "the lease expired")
    after = hostile.odtk("experiment", "run", grid, "--db", db, env=beta)
    assert after.exit_code == 0 and "tiny: 1 runs, 0 already recorded, 1 done, 0 failed" in after.stdout, after.output
    (row,) = frame_of(db).itertuples()
    assert len(instant_runs.started) == 1 and row.status == "done" and row.attempts == 1
    assert claims_of(db) == {}


@needs_proc
def test_claim_of_an_ended_process_whose_pid_was_reused_is_taken_at_once(tmp_path, instant_runs):
    """A claim of this host whose process id now belongs to another process (this test's,
    started at another time) is stale at once: its run is computed without waiting for the lease."""
    grid, db = tiny_grid(tmp_path, methods=[{"model": "cp", "depth": 1}]), tmp_path / "r.sqlite"
    (run,) = load_grid(grid).runs
    host, _, pid = this_process().partition("@")[0].rpartition(":")
    ResultStore(db).claim([run["id"]], owner=f"{host}:{pid}@1")  # pid alive, but started at tick 1
    result = hostile.odtk("experiment", "run", grid, "--db", db)
    assert result.exit_code == 0 and "1 runs, 0 already recorded, 1 done" in result.stdout, result.output
    assert [r["id"] for r in instant_runs.started] == [run["id"]] and claims_of(db) == {}


def test_release_frees_stale_claims_and_all_with_all(tmp_path, instant_runs):
    """Depth 1 claimed by a host whose lease expired, depth 2 by one whose lease holds:
    ``release`` frees the first and names both; ``--all`` frees the second; then a campaign
    computes both."""
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"
    shallow, deep = (run["id"] for run in load_grid(grid).runs)
    store = ResultStore(db)
    store.claim([shallow], owner="gone-host:41", lease=-60)
    store.claim([deep], owner="busy-host:42")
    stale = hostile.odtk("experiment", "release", db)
    assert stale.exit_code == 0, stale.output
    assert "released    1 claim of gone-host:41 (lease expired)" in stale.stdout
    assert "kept        1 claim of busy-host:42" in stale.stdout and "1 claims released, 1 kept" in stale.stdout
    assert claims_of(db) == {deep: "busy-host:42"}
    everything = hostile.odtk("experiment", "release", db, "--all")
    assert "released    1 claim of busy-host:42 (released by hand)" in everything.stdout, everything.output
    assert claims_of(db) == {}
    result = hostile.odtk("experiment", "run", grid, "--db", db)
    assert "2 runs, 0 already recorded, 2 done" in result.stdout and len(instant_runs.started) == 2, result.output


# --------------------------------------------------------------------------- Dask workers lost
def start_log(path: Path):
    """A Dask worker plugin appending ``key pid`` to ``path`` as each task starts executing
    (defined here, after Dask is imported: Dask is optional; sent to the workers by value)."""
    from distributed import WorkerPlugin

    class StartLog(WorkerPlugin):
        name = "odtk-test-start-log"

        def transition(self, key, start, finish, **kwargs) -> None:
            if finish == "executing":
                with open(path, "a") as log:
                    log.write(f"{key} {os.getpid()}\n")

    return StartLog()


def run_starts(log: Path) -> list[tuple[str, int]]:
    """(run id, Dask worker pid) per run start, in order."""
    lines = log.read_text().split("\n") if log.exists() else []
    return [(key.removeprefix("odtk-run-"), int(pid)) for key, pid in (line.split() for line in lines if line)]


@pytest.mark.slow
def test_dask_workers_killed_twice_recompute_no_recorded_run(tmp_path):
    """Eight cp runs on two single-threaded Dask workers; twice, a worker that computed a
    recorded run is killed. Every run is recorded once, and no run recorded before a kill
    starts again after it (Dask forgets a result once odtk has recorded it)."""
    distributed = pytest.importorskip("distributed")
    import dask

    grid = tiny_grid(tmp_path, seeds=[0, 1, 2, 3])
    db, log = tmp_path / "r.sqlite", tmp_path / "starts.log"
    config = {"distributed.scheduler.work-stealing": False, "distributed.scheduler.allowed-failures": 10}
    with dask.config.set(config), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.register_plugin(start_log(log))
        campaign = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db, "--executor", "dask",
                                                 "--scheduler", cluster.scheduler_address),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        kills = [kill_a_worker_of_recorded_runs(db, log, rows, campaign) for rows in (2, 5)]
        out, err = campaign.communicate(timeout=HANG_STOP)
    assert campaign.returncode == 0 and "tiny: 8 runs, 0 already recorded, 8 done, 0 failed" in out, out + err
    frame = frame_of(db)
    assert len(frame) == 8 and frame["id"].is_unique and (frame["attempts"] == 1).all()
    starts = Counter(run for run, _ in run_starts(log))
    for recorded, starts_then in kills:
        again = {run: starts[run] - starts_then[run] for run in recorded if starts[run] != starts_then[run]}
        assert not again, f"recorded runs started again after a worker was killed: {again}"


def kill_a_worker_of_recorded_runs(db: Path, log: Path, rows: int,
                                   campaign: subprocess.Popen) -> tuple[set[str], Counter]:
    """Once ``rows`` runs are recorded, SIGKILL a live Dask worker that started one of them;
    returns the runs recorded then and the starts of each run counted then."""
    wait_for(lambda: row_count(db) >= rows, f"recorded {rows} runs", campaign)
    recorded = set(frame_of(db)["id"])
    starts = run_starts(log)
    (pid,) = [pid for run, pid in starts if run in recorded and _alive(pid)][-1:]
    os.kill(pid, signal.SIGKILL)
    return recorded, Counter(run for run, _ in starts)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --------------------------------------------------------------------------- a locked database
@pytest.fixture
def locked_db(tmp_path, monkeypatch):
    """An odtk database whose write lock another connection holds (short waits for the test)."""
    from odtk.experiments import store

    db = tmp_path / "r.sqlite"
    ResultStore(db)
    monkeypatch.setattr(store, "BUSY_SECONDS", 3)
    monkeypatch.setattr(store, "NOTICE_SECONDS", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield db, holder
    holder.close()


def test_locked_database_says_it_waits_and_names_the_writer_as_the_cause(tmp_path, locked_db, instant_runs):
    db, _ = locked_db
    result = hostile.odtk("experiment", "run", tiny_grid(tmp_path), "--db", db)
    assert result.exit_code == 1 and "Traceback" not in result.stderr, result.output
    waiting, error = result.stderr.strip().splitlines()
    assert waiting == f"odtk: warning: waiting for the lock on {db} held by another writer (up to 3 s)…"
    assert error.startswith(f"odtk: error: The results database {db} stayed locked by another writer for 3 s")
    assert "end that program's transaction, then run the command again" in error
    assert instant_runs.started == [] and row_count(db) == 0


def test_campaign_waiting_for_a_lock_goes_on_once_it_is_released(tmp_path, locked_db, instant_runs, monkeypatch):
    """The other writer commits as the waiting line appears: the campaign then runs as usual."""
    from odtk import cli

    db, holder = locked_db
    shown = cli._show_warning

    def show_then_release(*args) -> None:
        shown(*args)
        if holder.in_transaction:
            holder.execute("COMMIT")

    monkeypatch.setattr(cli, "_show_warning", show_then_release)
    result = hostile.odtk("experiment", "run", tiny_grid(tmp_path), "--db", db)
    assert result.exit_code == 0 and "2 runs, 0 already recorded, 2 done" in result.stdout, result.output
    assert result.stderr.count("waiting for the lock") == 1 and row_count(db) == 2


# --------------------------------------------------------------------------- read-only places
def read_only_odtk(folder: Path, *args: object) -> subprocess.CompletedProcess:
    """``python -m odtk args`` with ``folder`` mounted read-only for it alone."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
    return subprocess.run(["unshare", "-m", "sh", "-c", script, folder, *odtk_command(*args)],
                          capture_output=True, text=True, timeout=HANG_STOP)


@pytest.fixture
def read_only_mounts(tmp_path) -> None:
    """Skip unless this process may mount in a namespace of its own."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0"',
                            tmp_path], capture_output=True, text=True)
    if probe.returncode:
        pytest.skip(f"no read-only bind mounts here: {probe.stderr.strip()}")


def test_read_only_places_are_named_and_a_read_only_database_is_still_reported(tmp_path, read_only_mounts):
    """A new database in a read-only folder, and a campaign on a database on a read-only file
    system: one line naming it as such, nothing written. The read-only database is still
    reported."""
    folder = tmp_path / "ro"
    folder.mkdir()
    grid = tiny_grid(tmp_path)
    store = ResultStore(folder / "r.sqlite")
    for seed in (0, 1):
        store.record(_row("grid", "a", seed, "flowoct", "highs", 0.5))
    del store
    before = hostile.snapshot(folder)
    new = read_only_odtk(folder, "experiment", "run", grid, "--db", folder / "new.sqlite")
    assert new.returncode == 1, new.stderr
    hostile.assert_error_line(new.stderr, f"folder {folder} is on a read-only file system", "new.sqlite",
                              "give --db a path in a folder you can write to")
    existing = read_only_odtk(folder, "experiment", "run", grid, "--db", folder / "r.sqlite")
    assert existing.returncode == 1, existing.stderr
    hostile.assert_error_line(existing.stderr, "r.sqlite is on a read-only file system", "copy it to a folder")
    reported = read_only_odtk(folder, "experiment", "report", folder / "r.sqlite", "--out", tmp_path / "report")
    assert reported.returncode == 0 and reported.stderr == "", reported.stderr
    assert (tmp_path / "report" / "runs.csv").read_text().count("\n") == 3
    assert hostile.snapshot(folder) == before


# --------------------------------------------------------------------------- options
def test_jobs_above_the_cores_are_capped_with_a_warning_unless_forced(tmp_path, instant_runs, monkeypatch):
    cores, pools = runner.usable_cores(), []
    local = runner._local
    monkeypatch.setattr(runner, "_local", lambda runs, jobs: pools.append(jobs) or local(runs, jobs))
    grid, db = tiny_grid(tmp_path), tmp_path / "r.sqlite"
    capped = hostile.odtk("experiment", "run", grid, "--db", db, "--jobs", 10000)
    assert capped.exit_code == 0 and pools == [cores], capped.output
    assert capped.stderr.splitlines()[0] == (f"odtk: warning: --jobs 10000 is more than the {cores} usable cores: "
                                     f"running {cores} at once (--force-jobs runs 10000).")
    forced = hostile.odtk("experiment", "run", grid, "--db", tmp_path / "forced.sqlite", "--jobs", 10000,
                          "--force-jobs")
    assert forced.exit_code == 0 and "warning" not in forced.stderr and pools == [cores, 10000], forced.output


def test_db_that_is_the_grid_file_is_refused(tmp_path, instant_runs):
    grid = tiny_grid(tmp_path)
    hostile.assert_refused_untouched(tmp_path, ["experiment", "run", grid, "--db", tmp_path / "." / "grid.yaml"],
                                     "--db and GRID_FILE name the same file", "different file names")
    assert instant_runs.started == []
