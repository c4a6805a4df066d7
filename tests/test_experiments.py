"""Experiment campaigns end to end: real runs in worker processes, locally and on Dask, killed
and resumed, with crashing and hanging solvers, concurrent writers, grid validation and the
report. Every campaign goes through ``python -m odtk experiment`` as a user would run it.

The expensive campaign (56 grid runs + 20 retrain runs) runs once per module; the
kill-and-resume test resumes on a local Dask cluster, so one second campaign checks both
resuming and the Dask executor against the first.

The tests assert on events (rows recorded, processes gone, solver starts, attempts), never on
how long something took: they must pass on a small machine that other jobs load. The time
limits below (HANG_STOP, CAMPAIGN_HANG_STOP) only stop a test that hangs.
"""
from __future__ import annotations

import json
import multiprocessing
import multiprocessing.synchronize
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from odtk.cli import main
from odtk.datasets import load_dataset, train_val_test_split
from odtk.exceptions import ConfigError
from odtk.experiments import load_grid, parse_grid
from odtk.experiments.runner import retrain_runs
from odtk.experiments.store import COLUMNS, ResultStore
from odtk.experiments.worker import splits
from odtk.solvers import solver_status

from fake_solvers import fake_cbc, fake_registry

ROWS = 30               # rows sampled per dataset: a 14 / 8 / 8 train / validation / test split
TIME_LIMIT = 20
MAIN_GRID = {
    "name": "exp-main",
    "datasets": [{"name": "flowoct/monk1", "rows": ROWS}, {"name": "flowoct/monk3", "rows": ROWS}],
    "seeds": [0],
    "solvers": ["highs", "cbc"],
    "time_limit": TIME_LIMIT,
    "threads": 1,
    "methods": [
        {"model": "flowoct", "depth": [1, 2], "options": {"lam": [0, 0.5]}},
        {"model": "binoct", "depth": [1, 2]},
        {"model": "cp", "depth": [1, 2]},   # odtk's own search: one run per setting, no MILP solver
    ],
    "selection": {"retrain": True},
}
CP_RUNS = 2 * 1 * 2                              # datasets × seeds × cp depths
GRID_RUNS = 2 * 1 * (2 * 2 * 2 + 2 * 2) + CP_RUNS  # datasets × seeds × (flowoct + binoct settings), cp
GROUPS = 2 * 1 * (2 + 2 + 1)                     # (dataset, seed, method, solver) groups: retrain runs

HANG_STOP = 600              # s: only reached when an awaited event never comes (a hung test)
CAMPAIGN_HANG_STOP = 3600    # s: the same for a whole campaign run
HANG = "exec sleep 86400"    # a fake solver that hangs far beyond any HANG_STOP

needs_cbc = pytest.mark.skipif(not solver_status("cbc").available,
                               reason=f"cbc not installed: {solver_status('cbc').detail}")
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="process checks read /proc (Linux only)")


# --------------------------------------------------------------------------- helpers
def odtk_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "odtk", *map(str, args)]


def odtk(*args: str, env: dict | None = None, timeout: float = CAMPAIGN_HANG_STOP) -> subprocess.CompletedProcess:
    """Run ``python -m odtk`` as a user would (``timeout`` only stops a hung run)."""
    return subprocess.run(odtk_command(*args), capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def write_yaml(path: Path, content) -> Path:
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
    return path


def frame_of(db: Path) -> pd.DataFrame:
    return ResultStore(db).frame()


def row_count(db: Path) -> int:
    """Rows recorded so far, read without creating anything (0 before the runner made the table)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as connection:
            return connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def assert_one_line_error(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("odtk: error: "), stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def assert_same_objectives(frame: pd.DataFrame, reference: pd.DataFrame) -> None:
    """Same id → same objective, for every run solved to optimality in both databases."""
    merged = frame.merge(reference, on="id", suffixes=("", "_ref"), validate="one_to_one")
    assert len(merged) == len(reference)
    both = merged[merged["termination"].eq("optimal") & merged["termination_ref"].eq("optimal")]
    assert len(both) >= 0.9 * len(merged), "too few runs optimal in both campaigns to compare"
    differ = both[~np.isclose(both["objective"], both["objective_ref"], rtol=0, atol=1e-6)]
    assert differ.empty, differ[["id", "phase", "dataset", "seed", "method", "solver", "depth", "options",
                                 "objective", "objective_ref"]].to_string()


# processes, from /proc: a killed process may linger as a zombie until reaped, which counts as gone
def _stat(pid: int) -> tuple[str, int] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])  # state, parent pid


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in "ZX"


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def children(pid: int) -> list[int]:
    return [p for p in _pids() if (stat := _stat(p)) and stat[1] == pid and stat[0] not in "ZX"]


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def marked(marker: str) -> list[int]:
    """Live processes (not this one) whose environment carries ``ODTK_TEST_MARK=marker``."""
    needle = f"ODTK_TEST_MARK={marker}".encode()
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and alive(pid):
            found.append(pid)
    return found


def wait_unmarked(marker: str, timeout: float = HANG_STOP) -> list[int]:
    """Wait until no process carries ``marker`` (``timeout`` s only stop a hung test); returns
    those still alive."""
    deadline = time.monotonic() + timeout
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def wait_gone(pids, timeout: float = HANG_STOP) -> list[int]:
    """Wait for ``pids`` to end (``timeout`` s only stop a hung test); returns those still alive."""
    deadline = time.monotonic() + timeout
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def describe(pids) -> str:
    return "; ".join(f"{p}: {' '.join(cmdline(p))}" for p in pids)


def kill_all(pids) -> None:
    """Clean up processes this test started (by pid)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def started(log: Path) -> list[int]:
    """The process ids a fake solver wrote to ``log`` as it started (one line per start)."""
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def private_tmp(folder: Path) -> str:
    """A TMPDIR for a campaign's processes: what killed runs leave behind stays in the test's folder."""
    (folder / "tmp").mkdir(exist_ok=True)
    return str(folder / "tmp")


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def unreachable_scheduler(tmp_path_factory):
    """``--executor dask`` with a scheduler nobody listens on, started early in the background:
    it spends ~30 s waiting to connect, so it runs alongside the main campaign."""
    folder = tmp_path_factory.mktemp("unreachable")
    grid = write_yaml(folder / "grid.yaml", {"name": "nobody", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}],
                                             "methods": [{"model": "cp", "depth": 1}]})
    outcome = SimpleNamespace(db=folder / "r.sqlite")
    process = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", outcome.db,
                                            "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait() -> None:
        outcome.out, outcome.err = process.communicate()

    outcome.process, outcome.waiter = process, threading.Thread(target=wait, daemon=True)
    outcome.waiter.start()
    yield outcome
    if process.poll() is None:
        process.kill()
    outcome.waiter.join(HANG_STOP)


@pytest.fixture(scope="module")
def main_campaign(tmp_path_factory, unreachable_scheduler):
    """The main grid run once, locally with --jobs 2 (checked by several tests)."""
    if not solver_status("cbc").available:
        pytest.skip(f"cbc not installed: {solver_status('cbc').detail}")
    folder = tmp_path_factory.mktemp("main")
    grid_file = write_yaml(folder / "grid.yaml", MAIN_GRID)
    db = folder / "results.sqlite"
    run = odtk("experiment", "run", grid_file, "--db", db, "--jobs", "2")
    assert run.returncode == 0, run.stderr
    return SimpleNamespace(grid_file=grid_file, grid=load_grid(grid_file), db=db, run=run, frame=frame_of(db))


@pytest.fixture(scope="module")
def fault_campaign(tmp_path_factory):
    """highs plus a CBC that dies of SIGSEGV and one that hangs, time limit 6 s (the starting tree
    comes first: the CP search's kernels load in 0.4 s of CPU, seconds on a loaded machine, and
    every run must reach its fake solver), guard 30 s (the guard clock also counts the worker's
    start-up, slow on a loaded machine: the hanging solver must have started before the guard
    kills its run); 60 s time limit for the healthy highs
    runs, which end as soon as they are solved. Each fake solver logs its process id as it starts."""
    if not solver_status("cbc").available:  # the fake entries are copies of the cbc entry (package cbcbox)
        pytest.skip(f"cbc not installed: {solver_status('cbc').detail}")
    folder = tmp_path_factory.mktemp("faults")
    logs = {name: folder / f"{name}.started" for name in ("crashcbc", "hangcbc")}
    registry = fake_registry(
        folder, crashcbc=fake_cbc(folder / "crashcbc", f'echo $$ >> "{logs["crashcbc"]}"\nkill -SEGV $$'),
        hangcbc=fake_cbc(folder / "hangcbc", f'echo $$ >> "{logs["hangcbc"]}"\n{HANG}'))
    grid_file = write_yaml(folder / "faults.yaml", {
        "name": "faults", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}], "seeds": [0],
        "solvers": ["crashcbc", "hangcbc"], "time_limit": 6, "guard": 30,
        "methods": [{"model": "flowoct", "depth": [1, 2], "solvers": ["highs"], "time_limit": 60},
                    {"model": "flowoct", "depth": [1, 2], "settings": {"warm_start": None}}],
        "selection": {"retrain": False}})
    marker = uuid.uuid4().hex
    env = {"ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker, "TMPDIR": private_tmp(folder)}
    db = folder / "faults.sqlite"
    run = odtk("experiment", "run", grid_file, "--db", db, "--jobs", "2", env=env)
    leftovers = wait_unmarked(marker)  # what the guard killed is gone once the kernel has reaped it
    yield SimpleNamespace(grid_file=grid_file, db=db, env=env, marker=marker, run=run, leftovers=leftovers,
                          frame=frame_of(db), tmp=Path(env["TMPDIR"]), tmp_left=sorted(os.listdir(env["TMPDIR"])),
                          logs=logs, started={name: started(log) for name, log in logs.items()})
    kill_all(marked(marker))


# --------------------------------------------------------------------------- 1. a local campaign
@pytest.mark.slow
@needs_cbc
def test_grid_campaign_runs_every_run_once_and_retrains_the_selection(main_campaign):
    grid, frame = main_campaign.grid, main_campaign.frame
    grid_ids = [run["id"] for run in grid.runs]
    assert len(grid_ids) == GRID_RUNS >= 25
    assert len(set(grid_ids)) == len(grid_ids), "two grid runs share an id"
    assert {run["method"] for run in grid.runs} == {"flowoct", "binoct", "cp"}
    assert {run["solver"] for run in grid.runs} == {"highs", "cbc", None}  # cp: no MILP solver
    assert (f"exp-main: {GRID_RUNS + GROUPS} runs, 0 already recorded, {GRID_RUNS + GROUPS} done, 0 failed"
            in main_campaign.run.stdout)

    assert frame["id"].is_unique
    assert len(frame) == GRID_RUNS + GROUPS
    assert (frame["status"] == "done").all(), frame.loc[frame["status"] != "done", ["id", "message"]]
    assert (frame["attempts"] == 1).all()
    assert (frame["campaign"] == "exp-main").all()
    grid_rows = frame[frame["phase"] == "grid"]
    assert sorted(grid_rows["id"]) == sorted(grid_ids)
    assert (grid_rows["n_train"] + grid_rows["n_val"] + grid_rows["n_test"] == ROWS).all()
    assert (grid_rows["n_val"] > 0).all()

    # one retrain row per (dataset, seed, method, solver), with the setting of best validation
    # accuracy (ties: smaller depth, then options, then id), trained on train + validation
    retrain = frame[frame["phase"] == "retrain"]
    key = ["dataset", "seed", "method", "solver"]
    assert len(retrain) == GROUPS == grid_rows[key].drop_duplicates().shape[0]
    assert not retrain.duplicated(key).any()
    assert sorted(retrain["id"]) == sorted(run["id"] for run in retrain_runs(grid, ResultStore(main_campaign.db)))
    for values, group in grid_rows.groupby(key):
        best = group.assign(_depth=group["depth"].fillna(-1)).sort_values(
            ["val_accuracy", "_depth", "options", "id"], ascending=[False, True, True, True]).iloc[0]
        (chosen,) = retrain[(retrain[key] == pd.Series(values, index=key)).all(axis=1)].itertuples()
        assert (chosen.depth, chosen.options) == (best["depth"], best["options"]), values
        assert chosen.n_train == best["n_train"] + best["n_val"] == group["n_train"].iloc[0] + group["n_val"].iloc[0]
        assert chosen.n_test == best["n_test"]
        assert pd.isna(chosen.val_accuracy) and 0 <= chosen.test_accuracy <= 1

    # a cross-check of the recorded results: both MILP solvers reach the same optimum
    milp = grid_rows[grid_rows["method"].isin(["flowoct", "binoct"]) & grid_rows["termination"].eq("optimal")]
    pairs = milp.pivot_table(index=["dataset", "seed", "method", "depth", "options"], columns="solver",
                             values="objective").dropna()
    assert len(pairs) >= 0.9 * (GRID_RUNS - CP_RUNS) / 2
    assert np.allclose(pairs["highs"], pairs["cbc"], atol=1e-6), pairs[~np.isclose(pairs["highs"], pairs["cbc"])]


# --------------------------------------------------------------------------- 8. the report
@pytest.mark.slow
@needs_cbc
def test_report_of_the_campaign_database(main_campaign, tmp_path):
    report = pytest.importorskip("odtk.experiments.report", reason="odtk/experiments/report.py not written yet")
    out = tmp_path / "report"
    run = odtk("experiment", "report", main_campaign.db, "--out", out)
    assert run.returncode == 0, run.stderr
    names = ["runs.csv", "summary.md", "summary.csv", "selection.md", "selection.csv", "failures.md",
             "profile.png", "gap_vs_size.png", "test_accuracy_box.png", "sorted_accuracy.png"]
    for name in names:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
        assert f"saved       {out / name}" in run.stdout
    for name in names[-4:]:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name

    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs["id"]) == sorted(main_campaign.frame["id"]) and "model" not in runs
    summary = pd.read_csv(out / "summary.csv")
    assert set(zip(summary["method"], summary["solver"])) == {
        ("flowoct", "highs"), ("flowoct", "cbc"), ("binoct", "highs"), ("binoct", "cbc"), ("cp", "odtk-search")}
    assert summary["runs"].sum() == summary["done"].sum() == GRID_RUNS + GROUPS
    selection = pd.read_csv(out / "selection.csv")
    assert len(selection) == GROUPS and (selection["test_source"] == "retrain").all()
    assert "none" in (out / "failures.md").read_text()

    # an existing report is never overwritten without --force
    again = CliRunner().invoke(main, ["experiment", "report", str(main_campaign.db), "--out", str(out)])
    assert again.exit_code == 1
    assert_one_line_error(again.stderr, "--force")
    written = report.write_report(main_campaign.db, out, force=True)
    assert sorted(path.name for path in written) == sorted(names)


# --------------------------------------------------------------------------- 2 + 3. kill, resume on Dask
@pytest.mark.slow
@needs_cbc
@needs_proc
def test_killed_campaign_resumes_on_dask_with_the_same_rows(main_campaign, tmp_path):
    """SIGKILL the local runner midway, while every run in flight waits at the start of its CBC
    solve; check those workers end without writing their rows, then finish the campaign on a
    local Dask cluster: the rows equal the expected runs exactly and match the main campaign."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    import cbcbox

    db = tmp_path / "resumed.sqlite"
    marker = uuid.uuid4().hex
    # the real CBC behind a gate: while HOLD exists, a solve (not the -quit probe) writes its
    # process id to HELD and waits, so its worker is certainly in the middle of its run
    hold, held = tmp_path / "HOLD", tmp_path / "HELD"
    gate = tmp_path / "gated-cbc"
    gate.write_text(f'#!/bin/sh\nif [ "$1" != "-quit" ] && [ -e "{hold}" ]; then\n  echo $$ >> "{held}"\n'
                    f'  while [ -e "{hold}" ]; do sleep 0.1; done\nfi\nexec "{cbcbox.cbc_bin_path()}" "$@"\n')
    gate.chmod(0o755)
    registry = fake_registry(tmp_path, cbc=gate)
    # the same runs (a run's id does not depend on its guard), none killed by its guard while held
    grid_file = write_yaml(tmp_path / "grid.yaml", {**MAIN_GRID, "guard": HANG_STOP})
    runner = subprocess.Popen(odtk_command("experiment", "run", grid_file, "--db", db, "--jobs", "2"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker,
                                   "TMPDIR": private_tmp(tmp_path)})
    try:
        # once ≥ 5 rows are recorded, close the gate; as soon as every live worker is held there
        # (its run not recorded, and never to be: its CBC waits), kill the runner (a solver under
        # a killed runner: test_killed_runner_leaves_no_solver_running)
        deadline = time.monotonic() + HANG_STOP
        while True:
            assert runner.poll() is None, "the campaign finished before it could be killed"
            assert time.monotonic() < deadline, "no worker seen held at the gate"
            if not hold.exists() and row_count(db) >= 5:
                hold.touch()
            if hold.exists():
                workers = {p: cmdline(p) for p in children(runner.pid)}
                workers = {p: argv for p, argv in workers.items()
                           if any("odtk.experiments.worker" in part for part in argv)}
                gated = {stat[1]: pid for pid in started(held) if (stat := _stat(pid)) and stat[0] not in "ZX"}
                if workers and set(workers) <= set(gated):  # worker → its CBC held at the gate
                    break
            time.sleep(0.02)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(timeout=HANG_STOP)
        hold.unlink()  # open the gate: a worker that outlived its runner would now finish its run
        # a worker whose runner died is killed by the kernel (PR_SET_PDEATHSIG) with its solver,
        # before it writes its result
        survivors = wait_gone([*workers, *(gated[w] for w in workers)])
        assert not survivors, f"workers outlived their killed runner: {describe(survivors)}"
        results = [Path(workers[w][-2]) for w in workers]  # argv: … RESULT PID
        written = [str(path) for path in results if path.exists()]
        assert not written, f"workers finished their runs after the runner was killed: {written}"
        # ... and nothing the campaign started is left (a worker still starting up and CBC under
        # a killed worker: see the tests below)
        survivors = wait_unmarked(marker)
        assert not survivors, f"processes of the killed campaign still running: {describe(survivors)}"
    finally:
        kill_all(marked(marker))
        hold.unlink(missing_ok=True)
    before = frame_of(db)
    assert len(before) >= 5 and (before["status"] == "done").all()

    with dask.config.set({"distributed.admin.low-level-log-length": 100_000}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        resumed = odtk("experiment", "run", main_campaign.grid_file, "--db", db,
                       "--executor", "dask", "--scheduler", cluster.scheduler_address)
        on_dask = client.run_on_scheduler(
            lambda dask_scheduler: sorted({str(t[0]) for t in dask_scheduler.transition_log if t[2] == "memory"}))
    assert resumed.returncode == 0, resumed.stderr
    total = GRID_RUNS + GROUPS
    assert f"{total} runs, {len(before)} already recorded, {total - len(before)} done, 0 failed" in resumed.stdout

    after = frame_of(db)
    assert after["id"].is_unique
    assert sorted(after["id"]) == sorted(main_campaign.frame["id"])  # no run missing, none extra
    assert (after["status"] == "done").all() and (after["attempts"] == 1).all()
    kept = after.set_index("id").loc[before["id"], ["finished", "worker", "objective"]]
    pd.testing.assert_frame_equal(kept, before.set_index("id")[["finished", "worker", "objective"]])
    # every run not recorded before the kill went through the Dask cluster
    assert {f"odtk-run-{i}" for i in set(after["id"]) - set(before["id"])} <= set(on_dask)
    assert_same_objectives(after, main_campaign.frame)


@needs_proc
def test_killed_runner_leaves_no_solver_running(tmp_path):
    if not solver_status("cbc").available:
        pytest.skip("the fake CBC entry copies the cbc entry (package cbcbox)")
    registry = fake_registry(tmp_path, hangcbc=fake_cbc(tmp_path / "hangcbc", HANG))
    grid = write_yaml(tmp_path / "grid.yaml", {  # the guard never ends the run: the test kills the runner
        "name": "orphans", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}], "solvers": ["hangcbc"],
        "time_limit": 2, "guard": HANG_STOP,  # no warm start: the solver is called however slow the machine
        "methods": [{"model": "flowoct", "depth": 1, "settings": {"warm_start": None}}],
        "selection": {"retrain": False}})
    marker = uuid.uuid4().hex
    runner = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", tmp_path / "r.sqlite"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker,
                                   "TMPDIR": private_tmp(tmp_path)})
    try:
        deadline = time.monotonic() + HANG_STOP
        while not any(cmdline(p)[:1] == ["sleep"] for p in marked(marker)):
            assert runner.poll() is None and time.monotonic() < deadline, "the fake solver never started"
            time.sleep(0.05)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(timeout=HANG_STOP)
        survivors = wait_unmarked(marker)
        assert not survivors, f"left running after the runner was killed: {describe(survivors)}"
    finally:
        kill_all(marked(marker))


@needs_proc
def test_worker_whose_runner_died_during_start_up_does_not_run(tmp_path):
    run = parse_grid({"name": "race", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}],
                      "methods": [{"model": "cp", "depth": 1}]}).runs[0]
    result = tmp_path / "row.json"
    # a stand-in for the runner: starts the worker as run_isolated does and dies. The run reaches
    # the worker through a pipe whose writing end the test holds until the stand-in has ended, so
    # the worker cannot have its job before its runner is gone, however the machine schedules them.
    parent = textwrap.dedent("""
        import os, subprocess, sys
        from odtk.experiments.worker import BOOTSTRAP, CODE_ROOT
        worker = subprocess.Popen([sys.executable, "-c", BOOTSTRAP, sys.argv[1], str(os.getpid()), CODE_ROOT],
                                  stdin=int(sys.argv[2]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        print(worker.pid)
        """)
    job, hand_over = os.pipe()
    try:
        os.write(hand_over, json.dumps(run).encode())  # far less than a pipe holds
        try:
            stand_in = subprocess.run([sys.executable, "-c", parent, str(result), str(job)], pass_fds=[job],
                                      capture_output=True, text=True, timeout=HANG_STOP, check=True)
        finally:
            os.close(job)
        worker = int(stand_in.stdout)  # its runner has ended: subprocess.run has reaped it
    finally:
        os.close(hand_over)  # the worker, if it still runs, now reads its whole job
    try:
        assert not wait_gone([worker]), "the worker neither ran nor ended"
        assert not result.exists(), "the worker ran its job although its runner was already gone"
    finally:
        kill_all([worker])


@needs_proc
@pytest.mark.slow
def test_ctrl_c_stops_a_campaign_at_once_and_records_nothing_under_way(tmp_path):
    if not solver_status("cbc").available:
        pytest.skip("the fake CBC entry copies the cbc entry (package cbcbox)")
    log = tmp_path / "hangcbc.log"
    registry = fake_registry(tmp_path, hangcbc=fake_cbc(tmp_path / "hangcbc", f'echo $$ >> "{log}"\n{HANG}'))
    grid = write_yaml(tmp_path / "grid.yaml", {  # four runs, one at a time: each would hang until its guard
        "name": "stop", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}], "seeds": [0, 1],
        "solvers": ["hangcbc"], "time_limit": 2, "guard": HANG_STOP,
        "methods": [{"model": "flowoct", "depth": [1, 2], "settings": {"warm_start": None}}],
        "selection": {"retrain": False}})
    marker, db = uuid.uuid4().hex, tmp_path / "r.sqlite"
    runner = subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "ODTK_SOLVERS": str(registry), "ODTK_TEST_MARK": marker,
                                   "TMPDIR": private_tmp(tmp_path)})
    try:
        deadline = time.monotonic() + HANG_STOP
        while not started(log):
            assert runner.poll() is None and time.monotonic() < deadline, "the fake solver never started"
            time.sleep(0.05)
        runner.send_signal(signal.SIGINT)
        out, err = runner.communicate(timeout=HANG_STOP)  # the guard would take HANG_STOP per run
        assert runner.returncode == 130 and err.strip().splitlines()[-1] == "odtk: interrupted by SIGINT", err
        assert not wait_unmarked(marker), "a worker or solver outlived the interrupted campaign"
        assert len(started(log)) == 1, "runs queued behind the interrupted one were started"
        assert row_count(db) == 0
        with closing(sqlite3.connect(db)) as connection:  # its claims were given back
            assert connection.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    finally:
        kill_all(marked(marker))


@pytest.mark.slow
def test_two_identical_campaigns_compute_each_run_once(tmp_path):
    grid = write_yaml(tmp_path / "grid.yaml", {
        "name": "twice", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}], "seeds": [0, 1, 2],
        "solvers": ["highs"], "methods": [{"model": "flowoct", "depth": [1, 2]}], "selection": {"retrain": False}})
    db = tmp_path / "r.sqlite"
    processes = [subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [process.communicate(timeout=CAMPAIGN_HANG_STOP) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    done = [int(re.search(r"(\d+) done", out).group(1)) for out, _ in outputs]
    assert sum(done) == 6, outputs  # every run computed by one campaign, none by both
    frame = frame_of(db)
    assert len(frame) == 6 and (frame["status"] == "done").all() and (frame["attempts"] == 1).all()
    for (out, err), count in zip(outputs, done):
        assert count == 6 or f"{6 - count} under way in another campaign" in out, out
        progress = err.strip().splitlines()  # not a terminal: one line per finished run
        hint = [line for line in progress if line.startswith("odtk: the runs under way elsewhere are freed")]
        assert len(hint) == (count < 6), err  # runs left to the other campaign: how they are freed
        progress = [line for line in progress if line not in hint]
        assert len(progress) == count, err
        assert all(re.fullmatch(r"twice grid \[\d/\d\] flowoct/monk1 seed \d flowoct depth \d highs: optimal", line)
                   for line in progress), err


@pytest.mark.slow
def test_workers_import_odtk_as_the_runner_does(tmp_path):
    """A folder holding an ``odtk/`` package or a ``numpy.py`` is no module source for the workers."""
    folder = tmp_path / "work"
    (folder / "odtk").mkdir(parents=True)
    for name in ("odtk/__init__.py", "numpy.py"):
        (folder / name).write_text("raise ImportError('the wrong module was imported')\n")
    grid = write_yaml(folder / "grid.yaml", {
        "name": "path", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}],
        "methods": [{"model": "flowoct", "depth": 1}], "selection": {"retrain": False}})
    console = Path(sys.executable).with_name("odtk")  # the entry point, which does not put the folder on the path
    run = subprocess.run([str(console), "experiment", "run", grid.name], capture_output=True, text=True, cwd=folder,
                         timeout=CAMPAIGN_HANG_STOP)
    assert run.returncode == 0 and "1 done, 0 failed" in run.stdout, run.stdout + run.stderr


# --------------------------------------------------------------------------- 4 + 6. faults, re-runs
@needs_proc
@pytest.mark.slow
def test_crashing_and_hanging_solvers_fail_their_runs_only(fault_campaign):
    run, frame = fault_campaign.run, fault_campaign.frame
    assert run.returncode == 0, run.stderr
    assert "faults: 6 runs, 0 already recorded, 4 done, 2 failed" in run.stdout, \
        frame[["solver", "depth", "status", "message"]].to_string()
    assert len(frame) == 6 and frame["id"].is_unique
    by_solver = {solver: group for solver, group in frame.groupby("solver")}
    assert set(by_solver) == {"highs", "crashcbc", "hangcbc"}
    assert sorted(by_solver["highs"]["depth"]) == [1, 2]
    assert (by_solver["highs"]["status"] == "done").all() and (by_solver["highs"]["termination"] == "optimal").all()
    for row in by_solver["crashcbc"].itertuples():
        assert row.status == "failed"
        assert "code -11" in row.message or "SIGSEGV" in row.message, row.message
    for row in by_solver["hangcbc"].itertuples():  # odtk ended the hung solver at its limit: the start is kept
        assert row.status == "done" and row.termination == "time_limit", row
    # every run reached its fake solver once: the crashing one crashed, the hanging one hung
    # until odtk stopped it, and nothing of it is left running
    assert {name: len(pids) for name, pids in fault_campaign.started.items()} == {"crashcbc": 2, "hangcbc": 2}
    assert not fault_campaign.leftovers, f"left running: {describe(fault_campaign.leftovers)}"


@pytest.mark.slow
def test_runs_killed_by_the_guard_leave_no_temporary_files(fault_campaign):
    assert fault_campaign.run.returncode == 0
    assert fault_campaign.tmp_left == [], f"left in TMPDIR: {fault_campaign.tmp_left}"


@needs_proc
def test_rerun_skips_recorded_runs_and_retry_failed_runs_them_again(fault_campaign):
    before = frame_of(fault_campaign.db)
    again = odtk("experiment", "run", fault_campaign.grid_file, "--db", fault_campaign.db, env=fault_campaign.env)
    assert again.returncode == 0, again.stderr
    # nothing to do: no run executed, no solver started (the hanging one would wait for its
    # guard), no row written
    assert "faults: 6 runs, 6 already recorded, 0 done, 0 failed" in again.stdout
    assert {name: started(log) for name, log in fault_campaign.logs.items()} == fault_campaign.started
    pd.testing.assert_frame_equal(frame_of(fault_campaign.db), before)

    retry = odtk("experiment", "run", fault_campaign.grid_file, "--db", fault_campaign.db, "--jobs", "2",
                 "--retry-failed", env=fault_campaign.env)
    assert retry.returncode == 0, retry.stderr
    assert "faults: 6 runs, 4 already recorded, 0 done, 2 failed" in retry.stdout
    after = frame_of(fault_campaign.db).set_index("id")
    failed = before[before["status"] == "failed"]["id"]
    done = before[before["status"] == "done"]["id"]
    assert len(failed) == 2 and len(done) == 4
    assert (after.loc[failed, "attempts"] == 2).all() and (after.loc[failed, "status"] == "failed").all()
    assert (after.loc[failed, "finished"] >= before.set_index("id").loc[failed, "finished"]).all()
    assert after.loc[failed, "message"].str.contains("code -11|SIGSEGV").all()
    pd.testing.assert_frame_equal(after.loc[done], before.set_index("id").loc[done])
    for name, log in fault_campaign.logs.items():  # each failed run reached its fake solver once more
        again = 4 if name == "crashcbc" else 2
        assert len(started(log)) == again and started(log)[:2] == fault_campaign.started[name], name
    assert not wait_unmarked(fault_campaign.marker)


# --------------------------------------------------------------------------- 5. two writers
def _open_store(path: Path, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()
    ResultStore(path)


def test_processes_creating_one_database_at_once_all_succeed(tmp_path):
    """Campaigns started together on a new file: SQLite refuses a second simultaneous switch to
    WAL at once ("database is locked", no busy wait); every opener must still succeed."""
    context = multiprocessing.get_context("fork")
    for attempt in range(30):
        start = context.Barrier(4)
        openers = [context.Process(target=_open_store, args=(tmp_path / f"{attempt}.sqlite", start))
                   for _ in range(4)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join()
        assert [opener.exitcode for opener in openers] == [0] * 4, f"attempt {attempt}"


@pytest.mark.slow
def test_two_campaigns_write_into_one_database_at_once(tmp_path):
    db = tmp_path / "shared.sqlite"
    grids = []
    for name, dataset in [("writer-a", "flowoct/monk1"), ("writer-b", "flowoct/monk3")]:
        grids.append(write_yaml(tmp_path / f"{name}.yaml", {
            "name": name, "datasets": [{"name": dataset, "rows": ROWS}], "seeds": [0, 1], "solvers": ["highs"],
            "methods": [{"model": "cp", "depth": [1, 2]}, {"model": "flowoct", "depth": 1}],
            "selection": {"retrain": False}}))
    processes = [subprocess.Popen(odtk_command("experiment", "run", grid, "--db", db, "--jobs", "2"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for grid in grids]
    outputs = [process.communicate(timeout=CAMPAIGN_HANG_STOP) for process in processes]
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, err
        assert "6 runs, 0 already recorded, 6 done, 0 failed" in out
    expected = {run["id"]: grid.name for grid in map(load_grid, grids) for run in grid.runs}
    assert len(expected) == 12
    frame = frame_of(db)
    assert frame["id"].is_unique and dict(zip(frame["id"], frame["campaign"])) == expected
    assert (frame["status"] == "done").all() and (frame["attempts"] == 1).all()
    # the two campaigns did write at the same time: in the order written, their rows interleave
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        order = [name for (name,) in connection.execute("SELECT campaign FROM runs ORDER BY rowid")]
    first = {name: order.index(name) for name in ("writer-a", "writer-b")}
    last = {name: len(order) - 1 - order[::-1].index(name) for name in ("writer-a", "writer-b")}
    assert first["writer-a"] < last["writer-b"] and first["writer-b"] < last["writer-a"], order


# --------------------------------------------------------------------------- 7. grid validation
BASE = {"name": "bad", "datasets": [{"name": "flowoct/monk1", "rows": ROWS}],
        "methods": [{"model": "flowoct", "depth": 1}]}
BAD_GRIDS = {
    "unknown-top-level-key": ({**BASE, "colour": "red"}, ["unknown key", "colour"]),
    "unknown-method-key": ({**BASE, "methods": [{"model": "flowoct", "deep": 2}]}, ["unknown key", "deep"]),
    "unknown-model": ({**BASE, "methods": [{"model": "forest"}]}, ["unknown model", "forest"]),
    "unknown-solver": ({**BASE, "solvers": ["highs", "nosolver"]}, ["Unknown solver", "nosolver"]),
    "unknown-dataset": ({**BASE, "datasets": ["flowoct/nope"]}, ["Unknown dataset", "flowoct/nope"]),
    "bad-option-name": ({**BASE, "methods": [{"model": "flowoct", "options": {"alpha": [0.1]}}]}, ["alpha"]),
    "option-out-of-range": ({**BASE, "methods": [{"model": "flowoct", "options": {"lam": [0, 1.5]}}]},
                            ["lam", "1.5"]),
    "split-not-summing-to-1": ({**BASE, "split": [0.5, 0.3, 0.3]}, ["split", "summing to 1"]),
    "negative-time-limit": ({**BASE, "time_limit": -5}, ["time_limit", "-5"]),
    "stratify-not-a-switch": ({**BASE, "stratify": "no"}, ["stratify", "true or false"]),
    "seed-beyond-32-bits": ({**BASE, "seeds": [2**66]}, ["seeds", "from 0 to 2147483647"]),
    "threads-10000": ({**BASE, "threads": 10000}, ["threads", "from 1 to 1024"]),
    "time-limit-1e300": ({**BASE, "time_limit": 1e300}, ["time_limit", "up to 1e+07"]),
    "a-million-runs": ({**BASE, "seeds": list(range(1000)),
                        "methods": [{"model": "flowoct", "depth": 1,
                                     "options": {"lam": [k / 1000 for k in range(1000)]}}]},
                       ["1,000,000 runs", "split it into several grids"]),
    "options-product-explodes": ({**BASE, "methods": [{"model": "odd", "skeleton": "1-2", "options": {
        "alpha": [0.1] * 100, "epsilon": [0.001] * 100, "xi": [0.5] * 100}}]}, ["1,000,000 runs"]),
    "non-mapping-top-level": ([BASE], ["mapping"]),
}


@pytest.mark.parametrize("raw, words", BAD_GRIDS.values(), ids=BAD_GRIDS.keys())
def test_bad_grids_are_one_line_errors(tmp_path, raw, words):
    with pytest.raises(ConfigError) as api_error:
        parse_grid(raw)
    assert "\n" not in str(api_error.value) and all(word in str(api_error.value) for word in words)
    grid = write_yaml(tmp_path / "grid.yaml", raw)
    with pytest.raises(ConfigError):
        load_grid(grid)
    db = tmp_path / "r.sqlite"
    cli = CliRunner().invoke(main, ["experiment", "run", str(grid), "--db", str(db)])
    assert cli.exit_code == 1, cli.output
    assert_one_line_error(cli.stderr, *words)
    assert not db.exists(), "a rejected grid created the database"


def test_unstratified_splits_are_new_runs_and_recorded_ids_stay_valid():
    stratified, plain = parse_grid(BASE).runs[0], parse_grid({**BASE, "stratify": False}).runs[0]
    assert stratified["id"] == "64000302e96eafee"  # the id earlier versions recorded for this run
    assert parse_grid({**BASE, "stratify": True}).runs[0]["id"] == stratified["id"]
    assert plain["id"] != stratified["id"] and plain["stratify"] is False
    data = load_dataset("flowoct/monk1")
    data = data.subset(np.sort(np.random.default_rng(0).choice(data.n_rows, ROWS, replace=False)))
    for run, stratify in ((stratified, True), (plain, False)):
        expected = train_val_test_split(data, seed=0, stratify=stratify)
        assert [part.target.tolist() for part in splits(run)] == [part.target.tolist() for part in expected]


def test_database_of_an_earlier_version_gains_the_steps_column(tmp_path):
    db = tmp_path / "old.sqlite"
    older = {name: kind for name, kind in COLUMNS.items() if name != "steps"}
    with closing(sqlite3.connect(db)) as connection:
        connection.execute(f"CREATE TABLE runs ({', '.join(f'{c} {t}' for c, t in older.items())})")
        connection.execute("INSERT INTO runs (id, status) VALUES ('a', 'done')")
        connection.commit()
    before = db.read_bytes()
    frame = ResultStore(db, read_only=True).frame()  # a report reads it as it is
    assert db.read_bytes() == before and frame["steps"].isna().all() and list(frame["id"]) == ["a"]
    store = ResultStore(db)
    store.record({"id": "b", "status": "done", "steps": {"heuristic": {"objective": 0.25}}})
    frame = store.frame().set_index("id")
    assert pd.isna(frame.loc["a", "steps"]) and json.loads(frame.loc["b", "steps"])["heuristic"]["objective"] == 0.25


def test_grid_yaml_cannot_construct_python_objects(tmp_path):
    hacked = tmp_path / "hacked"
    grid = write_yaml(tmp_path / "grid.yaml", textwrap.dedent(f"""\
        name: !!python/object/apply:os.system ["echo hacked > {hacked}"]
        datasets: [flowoct/monk1]
        methods: [{{model: cp, depth: 1}}]
        """))
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_grid(grid)
    assert not hacked.exists()
    run = odtk("experiment", "run", grid, "--db", tmp_path / "r.sqlite")
    assert run.returncode == 1
    assert_one_line_error(run.stderr, "not valid YAML")
    assert not hacked.exists()


def test_missing_grid_file(tmp_path):
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(ConfigError, match="not found"):
        load_grid(missing)
    cli = CliRunner().invoke(main, ["experiment", "run", str(missing), "--db", str(tmp_path / "r.sqlite")])
    assert cli.exit_code == 1
    assert_one_line_error(cli.stderr, "not found", str(missing))


def test_dask_executor_needs_a_scheduler(tmp_path):
    grid = write_yaml(tmp_path / "grid.yaml", {**BASE, "methods": [{"model": "cp", "depth": 1}]})
    cli = CliRunner().invoke(main, ["experiment", "run", str(grid), "--db", str(tmp_path / "r.sqlite"),
                                    "--executor", "dask"])
    assert cli.exit_code == 1
    assert "Traceback" not in cli.stderr
    last = cli.stderr.strip().splitlines()[-1]
    assert last.startswith("odtk: error: ") and "--scheduler" in last, cli.stderr


@pytest.mark.slow
def test_unreachable_dask_scheduler_is_a_clear_error(unreachable_scheduler):
    unreachable_scheduler.waiter.join(HANG_STOP)
    assert not unreachable_scheduler.waiter.is_alive(), f"no answer within {HANG_STOP} s"
    out, err = unreachable_scheduler.out, unreachable_scheduler.err
    assert unreachable_scheduler.process.returncode == 1, out + err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("odtk: error: Cannot reach the Dask scheduler") and "tcp://127.0.0.1:9" in last, err
    # one connection attempt, given up at the client's 30 s connect timeout, before anything was created
    assert "after 30 s" in last, err
    assert not unreachable_scheduler.db.exists()
