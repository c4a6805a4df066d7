"""Running a campaign: every run in its own process, locally or on a Dask cluster, recorded
in the results database as it finishes.

A run that crashes, hangs past its guard (the solver's time limit plus ``guard`` seconds) or
raises is recorded as failed with the reason, and the campaign goes on. Re-running a grid
skips the runs already done (and the failed ones unless ``retry_failed``), so a campaign
killed midway finishes where it stopped; a run recorded by another odtk code or solver
version is run again (its old row kept, see :mod:`odtk.experiments.store`). Runs are claimed
in the database before they start, so a second campaign on the same database leaves them to
the first while the first's lease holds (:mod:`odtk.experiments.claims`). On Dask, each run's result is released as soon
as it is recorded, so that a worker lost later makes Dask compute no recorded run again. Ctrl-C stops the local
workers at once and records nothing of the runs under way; a lost Dask scheduler ends the
campaign with one line, the runs it did not finish left for the next run. A campaign none of
whose runs succeeds (a missing input, a broken install) ends with one line and an error once
its failures are recorded.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from odtk.exceptions import ConfigError, OdtkError, OdtkWarning, install_hint
from odtk.experiments.claims import LEASE_SECONDS, heartbeat
from odtk.experiments.grid import Grid, finish_run
from odtk.experiments.store import Recorded, ResultStore
from odtk.experiments.worker import BOOTSTRAP, CODE_ROOT, code_version, now, solver_version

EXECUTORS = ("local", "dask")
DASK_LOGGERS = ("distributed", "distributed.client", "distributed.core", "distributed.comm", "distributed.utils")


@dataclass
class CampaignReport:
    """What one ``run_campaign`` call did."""

    planned: int = 0
    skipped: int = 0
    elsewhere: int = 0  # claimed by another campaign that is still running
    other_version: int = 0  # recorded by another odtk or solver version: run again
    done: int = 0
    failed: int = 0
    first_failure: str | None = None  # the message of the first run that failed


class CampaignFailedError(OdtkError, RuntimeError):
    """Every run of a campaign failed: its rows are recorded, and the command fails."""


def guard_seconds(run: dict[str, Any]) -> float:
    """How long a run may take before it is killed: its time limit(s) plus the guard."""
    return run["time_limit"] + float(run["settings"].get("heuristic_time", 0)) + run["guard"]


class Workers:
    """The worker processes one runner has started, to stop them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()
        self._stopped = False

    def start(self, command: list[str], **options: Any) -> subprocess.Popen | None:
        """Start a worker, unless ``stop`` was called (then None)."""
        with self._lock:
            if self._stopped:
                return None
            process = subprocess.Popen(command, **options)
            self._live.add(process)
            return process

    def ended(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(process)

    def stop(self) -> None:
        """Kill every live worker with its solver processes; start no more."""
        with self._lock:
            self._stopped = True
            for process in self._live:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def run_isolated(run: dict[str, Any], workers: Workers | None = None) -> dict[str, Any] | None:
    """Run ``run`` in a fresh worker process (see :mod:`odtk.experiments.worker`) that imports
    the odtk this process runs; returns its row (None if ``workers`` was stopped before it
    started). The worker's temporary files live in a folder removed afterwards, also when the
    guard had to kill it; a solver left by a worker that died (killed by the system) is ended
    with it."""
    limit, started = guard_seconds(run), now()
    workers = workers or Workers()
    with tempfile.TemporaryDirectory(prefix="odtk-run-") as folder:
        result = Path(folder, "row.json")
        process = workers.start([sys.executable, "-c", BOOTSTRAP, str(result), str(os.getpid()), CODE_ROOT],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True, text=True, env={**os.environ, "TMPDIR": folder})
        if process is None:
            return None
        try:
            _, errors = process.communicate(json.dumps(run), timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return _failed(run, started, f"killed: no result within {limit:g} s (time limit "
                                         f"{run['time_limit']:g} s + guard {run['guard']:g} s)")
        finally:
            _end_group(process)
            workers.ended(process)
        if result.exists():
            return json.loads(result.read_text())
        code = process.returncode
        cause = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        last = (errors or "").strip().splitlines()[-1:] or ["no output"]
        return _failed(run, started, f"worker process died ({cause}): {last[0][:300]}")


def _end_group(process: subprocess.Popen) -> None:
    """Kill what is left of a worker's process group (a group outlives its leader while a
    member, such as the solver of a worker killed mid-run, still runs)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _failed(run: dict[str, Any], started: str | None, message: str) -> dict[str, Any]:
    return {**run, "status": "failed", "message": message, "started": started, "finished": now()}


def _local(runs: list[dict[str, Any]], jobs: int) -> Generator[dict[str, Any], None, None]:
    """Rows of ``runs`` as they finish, ``jobs`` at a time; when the caller stops early (Ctrl-C),
    no run starts any more and the running ones are killed."""
    workers, pool = Workers(), ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(run_isolated, run, workers) for run in runs]
        for future in as_completed(futures):
            row = future.result()
            if row is not None:  # None: the run never started, the workers being stopped
                yield row
    finally:
        workers.stop()
        pool.shutdown(wait=False, cancel_futures=True)


def _dask_client(scheduler: str):
    """A connected ``distributed.Client``; ConfigError when Dask is missing or unreachable."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(f"The Dask executor needs dask.distributed: {install_hint('experiments')}.") from None
    try:
        return Client(scheduler, timeout=30)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"Cannot reach the Dask scheduler at {scheduler!r} ({exc}); check --scheduler.") from None


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's client logs each failed reconnection with a traceback: the runner says it in one
    line instead."""
    loggers = [logging.getLogger(name) for name in DASK_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _dask(runs: list[dict[str, Any]], scheduler: str) -> Generator[dict[str, Any], None, None]:
    """Rows of ``runs`` computed on the cluster, as they finish. Each future is released as soon
    as its row is taken (recorded by the caller): a worker lost later holds no result that Dask
    would compute again."""
    from distributed import as_completed as dask_completed

    with _quiet_dask(), _dask_client(scheduler) as client:
        futures = {client.submit(run_isolated, run, key=f"odtk-run-{run['id']}", pure=False): run
                   for run in runs}
        try:
            for future in dask_completed(futures):
                run = futures.pop(future)
                try:
                    row = future.result()
                except CancelledError:  # the scheduler went away (even if back already): the run did not fail
                    raise ConfigError(_lost(scheduler)) from None
                except Exception as exc:  # the run's Dask worker died, or the scheduler is gone
                    if client.status != "running":
                        raise ConfigError(_lost(scheduler)) from None
                    row = _failed(run, None, f"Dask worker lost ({type(exc).__name__}: {exc})")
                future.release()
                del future
                yield row
        except BaseException:  # stopped early: the queued runs need not run
            if client.status == "running":
                client.cancel(list(futures))
            raise


def _lost(scheduler: str) -> str:
    """The one line for a scheduler that went away before its runs finished."""
    return (f"Lost the Dask scheduler at {scheduler!r}; the runs it had not finished are not recorded: "
            "run the campaign again to finish them.")


def require_solvers(runs: list[dict[str, Any]]) -> None:
    """ConfigError naming the first solver of ``runs`` that is not installed here (each of its
    runs would fail, and stay failed on a re-run without --retry-failed)."""
    from odtk.solvers import require_solver

    for name in dict.fromkeys(run["solver"] for run in runs if run["solver"]):
        try:
            require_solver(name)
        except OdtkError as exc:
            raise ConfigError(f"{str(exc).rstrip('.')}; no run was started: install it or remove it "
                              "from the grid.") from None


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def capped_jobs(jobs: int, executor: str = "local", force: bool = False) -> int:
    """``jobs``, or the usable cores when ``jobs`` asks for more local runs at once than there
    are cores (an OdtkWarning says so) unless ``force``."""
    cores = usable_cores()
    if executor != "local" or force or jobs <= cores:
        return jobs
    warnings.warn(f"--jobs {jobs} is more than the {cores} usable cores: running {cores} at once "
                  f"(--force-jobs runs {jobs}).", OdtkWarning, stacklevel=2)
    return cores


def check_lease(lease: float) -> None:
    """ConfigError unless ``lease`` is a number of seconds a heartbeat can keep renewed."""
    if isinstance(lease, bool) or not isinstance(lease, (int, float)) or not 3 <= lease < float("inf"):
        raise ConfigError(f"--lease must be a number of seconds of at least 3, got {lease!r}.")


def check_executor(executor: str, scheduler: str | None, jobs: int) -> None:
    """ConfigError unless the executor settings can work."""
    if executor not in EXECUTORS:
        raise ConfigError(f"Unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}.")
    if executor == "dask" and not scheduler:
        raise ConfigError("The Dask executor needs --scheduler ADDRESS (e.g. tcp://host:8786).")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"--jobs must be a whole number ≥ 1, got {jobs!r}.")
    if executor == "dask" and scheduler:
        _dask_client(scheduler).close()


def execute_runs(runs: list[dict[str, Any]], store: ResultStore, jobs: int = 1, executor: str = "local",
                 scheduler: str | None = None, progress: Callable[[dict], None] | None = None,
                 lease: float = LEASE_SECONDS) -> CampaignReport:
    """Claim ``runs`` for ``lease`` seconds, renewed while they run; run those no other live
    campaign holds and record each row as it arrives; the claims of runs not recorded (on
    Ctrl-C or an error) are given back."""
    report = CampaignReport(planned=len(runs))
    claimed = set(store.claim((run["id"] for run in runs), lease=lease))
    report.elsewhere = len(runs) - len(claimed)
    mine = [run for run in runs if run["id"] in claimed]
    try:
        with heartbeat(store, lease):
            _record(mine, store, report, jobs, executor, scheduler, progress)
    finally:
        store.release()
    return report


def _record(runs: list[dict[str, Any]], store: ResultStore, report: CampaignReport, jobs: int, executor: str,
            scheduler: str | None, progress: Callable[[dict], None] | None) -> None:
    """Compute ``runs`` and record each row as it arrives, counting it in ``report``."""
    if executor == "local":
        rows = _local(runs, jobs)
    else:
        assert scheduler, "check_executor asks the Dask executor for a scheduler"
        rows = _dask(runs, scheduler)
    with closing(rows):
        for row in rows:
            if row.get("message"):  # a failure's reason, on one line in the database and the log
                row = {**row, "message": " ".join(str(row["message"]).split())}
            store.record(row)
            if row["status"] == "done":
                report.done += 1
            else:
                report.failed += 1
                report.first_failure = report.first_failure or row.get("message")
            if progress:
                progress(row)


def pending(runs: list[dict[str, Any]], store: ResultStore, retry_failed: bool) -> tuple[list[dict[str, Any]], int]:
    """The runs still to do, each with the versions it is made with here (:func:`made_here`):
    never recorded, recorded by another odtk code or solver version, or failed when
    ``retry_failed``; and how many of them were recorded by another version."""
    runs = [made_here(run) for run in runs]
    known = store.recorded(run["id"] for run in runs)
    todo, other = [], 0
    for run in runs:
        found = known.get(run["id"])
        if found is not None and not _same_versions(found, run):
            other += 1
            todo.append(run)
        elif found is None or (retry_failed and found.status == "failed"):
            todo.append(run)
    return todo, other


def made_here(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` with the versions it is made with here: this odtk code, its solver as installed."""
    return {**run, "odtk_version": code_version(), "solver_version": solver_version(run["solver"])}


def _same_versions(found: Recorded, run: dict[str, Any]) -> bool:
    """Whether a recorded run was made by ``run``'s odtk code and solver version (a solver not
    installed here, such as a Dask cluster's, is taken as the one recorded)."""
    return found.odtk_version == run["odtk_version"] and run["solver_version"] in (None, found.solver_version)


def select(frame: pd.DataFrame, keep: tuple[str, ...] = (), prefer_larger: tuple[str, ...] = ()) -> pd.DataFrame:
    """Per campaign, dataset, seed, method and solver (and ``keep``), the grid run with the best
    validation accuracy; ties go to the smaller depth, then the larger value of each option in
    ``prefer_larger``, then the first setting in a fixed order (skeleton, options, id), so the
    choice never depends on timing."""
    done = frame[(frame["phase"] == "grid") & (frame["status"] == "done")].copy()
    if done.empty:
        return done
    done["_depth"] = done["depth"].fillna(-1)
    preferred = [f"_{name}" for name in prefer_larger]
    for name, column in zip(prefer_larger, preferred):
        done[column] = [json.loads(options or "{}").get(name) for options in done["options"]]
    ordered = done.sort_values(["val_accuracy", "_depth", *preferred, "skeleton", "options", "id"],
                               ascending=[False, True, *[False] * len(preferred), True, True, True],
                               na_position="last")
    groups = ["campaign", "dataset", "rows", "seed", "method", "solver", *keep]
    return ordered.groupby(groups, dropna=False, sort=True).head(1).drop(columns=["_depth", *preferred])


def retrain_runs(grid: Grid, store: ResultStore) -> list[dict[str, Any]]:
    """The selected settings of ``grid``'s recorded runs, to train again on train + validation."""
    ours = {run["id"]: run for run in grid.runs}
    frame = store.frame()
    chosen = select(frame[frame["id"].isin(ours)], grid.keep, grid.prefer_larger)
    return [finish_run({**{k: v for k, v in ours[i].items() if k != "id"}, "phase": "retrain"})
            for i in chosen["id"]]


def run_campaign(grid: Grid, store: ResultStore, jobs: int = 1, executor: str = "local",
                 scheduler: str | None = None, retry_failed: bool = False,
                 progress: Callable[[str, int], Callable[[dict], None]] | None = None,
                 lease: float = LEASE_SECONDS, force_jobs: bool = False) -> CampaignReport:
    """Run the grid's pending runs, then (with ``retrain``) its selected settings again.

    ``progress(phase, pending runs)`` is called as each phase starts and returns the function
    called with every finished row. The runs are claimed for ``lease`` seconds, renewed while
    the campaign runs (see :mod:`odtk.experiments.claims`). ``jobs`` above the usable cores is
    capped to them (with a warning) unless ``force_jobs``. CampaignFailedError when the runs of
    this call all failed and no run of the grid is done (the failures recorded).
    """
    check_executor(executor, scheduler, jobs)
    check_lease(lease)
    jobs = capped_jobs(jobs, executor, force_jobs)
    total = CampaignReport()
    phases = [("grid", lambda: grid.runs)]
    if grid.retrain:
        phases.append(("retrain", lambda: retrain_runs(grid, store)))
    for phase, runs_of in phases:
        if total.elsewhere:  # the selection needs every grid run: another campaign is still at it
            break
        runs = runs_of()
        todo, other = pending(runs, store, retry_failed)
        if executor == "local":  # a Dask cluster's workers have their own solvers
            require_solvers(todo)
        advance = progress(phase, len(todo)) if progress else None
        report = execute_runs(todo, store, jobs, executor, scheduler, advance, lease)
        total.planned += len(runs)
        total.skipped += len(runs) - len(todo)
        total.elsewhere += report.elsewhere
        total.other_version += other
        total.done += report.done
        total.failed += report.failed
        total.first_failure = total.first_failure or report.first_failure
    if total.failed and "done" not in store.statuses(run["id"] for run in grid.runs).values():
        first = (total.first_failure or "no message")[:300]
        raise CampaignFailedError(f"Every run of {grid.name} failed ({total.failed} recorded in {store.path}; "
                                  f"the first: {first}); fix the cause, then run the campaign again "
                                  "with --retry-failed.")
    return total
