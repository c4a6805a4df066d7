"""No silent reuse of recorded results: a campaign reuses a run only when it was recorded by the
same odtk code and solver version (the others are run again, their old rows kept in the table
``superseded``), and the example scripts start from an empty database unless ``--resume``.
"""
from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

import test_hostile_inputs as hostile
from odtk.exceptions import ConfigError
from odtk.experiments import load_grid
from odtk.experiments.store import COLUMNS, ResultStore
from odtk.experiments.worker import code_version
from odtk.solvers import solver_status
from test_campaign_faults import instant_runs, tiny_grid  # noqa: F401 (fixtures)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))
import _common  # noqa: E402  (the examples' helpers, beside the scripts)

TWO_SOLVERS = [{"model": "cp", "depth": 1}, {"model": "flowoct", "depth": 1}]  # no solver; HiGHS


def rows(db: Path, table: str = "runs") -> dict[str, dict]:
    """Run id → row of ``table`` (one row per id)."""
    with closing(sqlite3.connect(db)) as connection:
        cursor = connection.execute(f"SELECT * FROM {table}")
        names = [column[0] for column in cursor.description]
        return {row["id"]: row for row in (dict(zip(names, values)) for values in cursor.fetchall())}


def set_version(db: Path, method: str, column: str, value: str | None) -> None:
    with closing(sqlite3.connect(db)) as connection:
        connection.execute(f"UPDATE runs SET {column} = ? WHERE method = ?", (value, method))
        connection.commit()


# --------------------------------------------------------------------------- campaigns
def test_runs_record_the_odtk_code_and_solver_version_that_made_them(tmp_path):
    """Real worker processes: each row names this odtk code and the solver's version ("" for
    odtk's own search); running the grid again reuses both runs."""
    grid, db = tiny_grid(tmp_path, methods=TWO_SOLVERS), tmp_path / "r.sqlite"
    first = hostile.odtk("experiment", "run", grid, "--db", db)
    assert first.exit_code == 0 and "tiny: 2 runs, 0 already recorded, 2 done, 0 failed" in first.stdout, first.output
    recorded = {row["method"]: (row["odtk_version"], row["solver_version"]) for row in rows(db).values()}
    assert recorded == {"cp": (code_version(), ""), "flowoct": (code_version(), solver_status("highs").version)}
    again = hostile.odtk("experiment", "run", grid, "--db", db)
    assert again.exit_code == 0 and "tiny: 2 runs, 2 already recorded, 0 done, 0 failed" in again.stdout, again.output


@pytest.mark.parametrize(("column", "value"), [("odtk_version", "0.0.1+0123456789ab"), ("odtk_version", None),
                                               ("solver_version", "0.9.0")])
def test_a_run_of_another_version_is_run_again_and_its_old_row_kept(tmp_path, instant_runs, column, value):
    """A run recorded by another odtk code (or by an odtk that did not record it, None) or
    another solver version is run again; the summary line says so; the old row moves whole to
    ``superseded`` and ``runs`` (what reports read) holds the new one alone."""
    grid, db = tiny_grid(tmp_path, methods=TWO_SOLVERS), tmp_path / "r.sqlite"
    assert hostile.odtk("experiment", "run", grid, "--db", db).exit_code == 0
    set_version(db, "flowoct", column, value)
    old = next(row for row in rows(db).values() if row["method"] == "flowoct")
    instant_runs.started.clear()
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 0, run.output
    assert ("tiny: 2 runs, 1 already recorded, 1 recorded by another odtk or solver version run again (the rows "
            "they replace are kept in the table superseded), 1 done, 0 failed") in run.stdout
    assert [started["method"] for started in instant_runs.started] == ["flowoct"]
    (kept,) = rows(db, "superseded").values()
    assert {name: kept[name] for name in COLUMNS} == old and kept["superseded"]
    now = rows(db)[old["id"]]
    assert (now["odtk_version"], now["solver_version"]) == (code_version(), solver_status("highs").version)
    assert len(ResultStore(db).frame()) == 2  # one row per run for the report
    instant_runs.started.clear()
    again = hostile.odtk("experiment", "run", grid, "--db", db)
    assert "tiny: 2 runs, 2 already recorded, 0 done, 0 failed" in again.stdout and not instant_runs.started


def test_a_database_of_an_odtk_without_versions_gains_them_and_its_runs_run_again(tmp_path, instant_runs):
    """A database written before runs carried versions: its rows are kept (in ``superseded``)
    and its runs computed again, none reused."""
    db = tmp_path / "old.sqlite"
    older = {name: kind for name, kind in COLUMNS.items() if name not in ("odtk_version", "solver_version")}
    grid = tiny_grid(tmp_path)
    with closing(sqlite3.connect(db)) as connection:
        connection.execute(f"CREATE TABLE runs ({', '.join(f'{c} {t}' for c, t in older.items())})")
        for run in load_grid(grid).runs:
            connection.execute("INSERT INTO runs (id, method, depth, status, attempts) VALUES (?, 'cp', ?, 'done', 1)",
                               (run["id"], run["depth"]))
        connection.commit()
    run = hostile.odtk("experiment", "run", grid, "--db", db)
    assert run.exit_code == 0 and "tiny: 2 runs, 0 already recorded, 2 recorded by another" in run.stdout, run.output
    assert len(instant_runs.started) == 2 and len(rows(db, "superseded")) == 2
    assert {row["odtk_version"] for row in rows(db).values()} == {code_version()}


# --------------------------------------------------------------------------- the examples' database
@pytest.fixture
def results_folder(tmp_path, monkeypatch) -> Path:
    """The default databases' folder, in a fresh current folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path / _common.RESULTS


def test_each_run_of_a_script_gets_a_new_empty_database_unless_resumed(results_folder, capsys):
    first = _common.results_database(None, False, "odd_paper")
    second = _common.results_database(None, False, "odd_paper")
    assert first != second and first.parent == second.parent == _common.RESULTS
    assert all(re.fullmatch(r"odd_paper-\d{8}-\d{6}(-\d+)?\.sqlite", path.name) for path in (first, second))
    assert capsys.readouterr().out.splitlines() == [f"results database {first} (new)",
                                                    f"results database {second} (new)"]
    ResultStore(second).record({"id": "a", "status": "done"})
    assert _common.results_database(None, True, "odd_paper") == second  # the newest default
    assert "(resumed: runs of this odtk and solver version reused)" in capsys.readouterr().out


def test_resume_takes_the_newest_default_database_by_its_time_stamp(results_folder):
    results_folder.mkdir(parents=True)
    for name in ("odd_paper-20250101-000000-2.sqlite", "odd_paper-20250101-000000-10.sqlite",
                 "odd_paper-20240101-235959.sqlite", "odd_paper-mine.sqlite", "flowoct_paper-20260101-000000.sqlite"):
        (results_folder / name).touch()
    assert _common.results_database(None, True, "odd_paper").name == "odd_paper-20250101-000000-10.sqlite"
    assert _common.results_database(None, True, "cp_paper").name.startswith("cp_paper-")  # none yet: a new one


def test_an_existing_database_is_refused_without_resume_and_left_as_it_is(tmp_path):
    db = tmp_path / "runs.sqlite"
    ResultStore(db).record({"id": "a", "status": "done"})
    before = db.read_bytes()
    with pytest.raises(ConfigError, match=r"runs\.sqlite exists; add --resume to reuse its runs"):
        _common.results_database(db, False, "odd_paper")
    assert db.read_bytes() == before
    assert _common.results_database(db, True, "odd_paper") == db


def script(name: str, folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          timeout=600, cwd=folder)


@pytest.mark.parametrize("name", ["flowoct_paper.py", "odd_paper.py"])
def test_scripts_refuse_an_existing_database_without_resume(tmp_path, name):
    db = tmp_path / "runs.sqlite"
    ResultStore(db).record({"id": "a", "status": "done"})
    before = db.read_bytes()
    done = script(name, tmp_path, "--db", str(db))
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [f"odtk: {db} exists; add --resume to reuse its runs made by this "
                                                "odtk and solver version, or give --db a new file."]
    assert db.read_bytes() == before


def counts(stdout: str) -> tuple[str, str]:
    """The database line printed first and the line counting the solves computed now (without
    its "campaign NAME: " head)."""
    lines = stdout.splitlines()
    return lines[0], re.sub(r"^campaign \S+: ", "", next(line for line in lines if "computed now" in line))


@pytest.mark.slow
def test_flowoct_paper_reuses_solves_only_when_resumed_and_of_this_version(tmp_path):
    args = ("--datasets", "monk3", "--rows", "16", "--samples", "1", "--lambdas", "0", "--time-limit", "60")
    first = script("flowoct_paper.py", tmp_path, *args)
    opened, line = counts(first.stdout)
    db = re.fullmatch(r"results database (\S+) \(new\)", opened)[1]
    assert first.returncode == 0 and line == f"8 of 8 solves computed now, 0 from earlier runs in {db}", first.stderr
    second = script("flowoct_paper.py", tmp_path, *args)  # not resumed: a new database, nothing reused
    opened, line = counts(second.stdout)
    assert db not in opened and line.startswith("8 of 8 solves computed now, 0 from earlier runs in ")
    newest = opened.split()[2]
    resumed = script("flowoct_paper.py", tmp_path, *args, "--resume")
    assert counts(resumed.stdout) == (f"results database {newest} (resumed: runs of this odtk and solver version "
                                      "reused)", f"0 of 8 solves computed now, 8 from earlier runs in {newest}")
    set_version(tmp_path / newest, "flowoct", "solver_version", "0.9.0")
    other = script("flowoct_paper.py", tmp_path, *args, "--resume")
    assert counts(other.stdout)[1] == ("2 of 8 solves computed now (2 recorded there by another odtk or solver "
                                       f"version, computed again), 6 from earlier runs in {newest}")
