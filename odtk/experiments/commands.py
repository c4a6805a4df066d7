"""The ``odtk experiment`` commands: run a grid, report on its results database."""
from __future__ import annotations

import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import click

from odtk.experiments.claims import LEASE_SECONDS


@click.group()
def experiment() -> None:
    """Run experiment grids and report on their results database."""


@experiment.command("run")
@click.argument("grid_file", type=click.Path(dir_okay=False))
@click.option("--db", type=click.Path(dir_okay=False), help="Results database (default: GRID with .sqlite).")
@click.option("--jobs", type=int, default=1, show_default=True, help="Runs at once (local executor).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="A local process pool, or a Dask cluster.")
@click.option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786.")
@click.option("--retry-failed", is_flag=True, help="Run the failed runs again.")
@click.option("--lease", type=float, default=LEASE_SECONDS, show_default=True,
              help="Seconds a run stays claimed after this campaign's last heartbeat (one every third of "
                   "it): how long another host waits for the runs of a campaign that was killed.")
@click.option("--force-jobs", is_flag=True, help="Run --jobs at once even above the usable cores.")
def experiment_run(grid_file: str, db: str | None, jobs: int, executor: str, scheduler: str | None,
                   retry_failed: bool, lease: float, force_jobs: bool) -> None:
    """Run every pending run of GRID_FILE and record it in the results database."""
    from odtk.experiments import ResultStore, load_grid, run_campaign
    from odtk.files import check_apart
    from odtk.experiments.runner import check_executor, check_lease

    check_executor(executor, scheduler, jobs)
    check_lease(lease)
    db_path = Path(db) if db else Path(grid_file).with_suffix(".sqlite")
    check_apart({"--db": db_path}, {"GRID_FILE": grid_file})
    grid = load_grid(grid_file)
    store = ResultStore(db_path)
    with ExitStack() as bars:
        def progress(phase: str, total: int):
            if not sys.stderr.isatty():  # a log file: one line per finished run
                return _run_lines(grid.name, phase, total)
            failed = [0]

            def failures(_: int | None) -> str | None:
                return f"{failed[0]} failed" if failed[0] else None

            bar = bars.enter_context(click.progressbar(
                length=total, label=f"{grid.name} {phase} runs", file=sys.stderr, show_eta=True,
                item_show_func=failures))

            def advance(row: dict) -> None:
                failed[0] += row["status"] != "done"
                bar.update(1)
            return advance

        report = run_campaign(grid, store, jobs=jobs, executor=executor, scheduler=scheduler,
                              retry_failed=retry_failed, progress=progress, lease=lease, force_jobs=force_jobs)
    elsewhere = f", {report.elsewhere} under way in another campaign" if report.elsewhere else ""
    again = (f", {report.other_version} recorded by another odtk or solver version run again (the rows they "
             "replace are kept in the table superseded)" if report.other_version else "")
    click.echo(f"{grid.name}: {report.planned} runs, {report.skipped} already recorded{again}{elsewhere}, "
               f"{report.done} done, {report.failed} failed -> {store.path}")
    if report.elsewhere:
        click.echo(f"odtk: the runs under way elsewhere are freed when their campaign ends or its lease expires; "
                   f"run the grid again then, or free them now with `odtk experiment release {store.path}`.",
                   err=True)


def _run_lines(campaign: str, phase: str, total: int):
    """Progress for a log: a line per finished run (its setting and outcome)."""
    finished = [0]

    def line(row: dict) -> None:
        finished[0] += 1
        shape = f"depth {row['depth']}" if row.get("depth") is not None else row.get("skeleton")
        options = [f"{key}={value}" for key, value in (row.get("options") or {}).items()]
        setting = [row["dataset"], f"seed {row['seed']}", row["method"], shape, *options, row.get("solver")]
        outcome = row.get("termination") if row["status"] == "done" else f"failed: {row.get('message', '')}"
        click.echo(f"{campaign} {phase} [{finished[0]}/{total}] {' '.join(str(p) for p in setting if p)}: {outcome}",
                   err=True)
    return line


@experiment.command("report")
@click.argument("db", type=click.Path(dir_okay=False, exists=True))
@click.option("--out", type=click.Path(file_okay=False), help="Folder for the report (default: DB name + _report).")
@click.option("--force", is_flag=True, help="Overwrite report files that exist.")
def experiment_report(db: str, out: str | None, force: bool) -> None:
    """Write tables (Markdown, CSV) and plots (PNG) from the results database DB alone."""
    from odtk.experiments.report import write_report

    folder = Path(out) if out else Path(db).with_name(Path(db).stem + "_report")
    for path in write_report(db, folder, force=force):
        click.echo(f"saved       {path}")


@experiment.command("release")
@click.argument("db", type=click.Path(dir_okay=False, exists=True))
@click.option("--all", "everything", is_flag=True,
              help="Release every claim, also those of campaigns that may still be running.")
def experiment_release(db: str, everything: bool) -> None:
    """Release the claims on runs of DB that no running campaign holds: their lease expired,
    or their campaign ended on this host (with --all: every claim), so that the next campaign
    runs them."""
    from odtk.experiments import ResultStore

    ended, kept = ResultStore(db).release_claims(everything)
    by_owner = Counter((claim.owner, why) for claim, why in ended)
    for (owner, why), count in by_owner.items():
        click.echo(f"released    {count} claim{'s' * (count != 1)} of {owner} ({why})")
    held = Counter(claim.owner for claim in kept)
    for owner, count in held.items():
        click.echo(f"kept        {count} claim{'s' * (count != 1)} of {owner} (lease current: its campaign may be "
                   "running; --all releases it)")
    click.echo(f"{db}: {len(ended)} claims released, {len(kept)} kept")
