"""The results database: one SQLite file, one row per run, written whole or not at all.

Rows are keyed by the run's stable id. Writes are single transactions (``BEGIN IMMEDIATE``)
in WAL mode with a generous busy timeout, so several processes may record into the same
file at once; a finished run is never overwritten, a failed one is replaced when retried.
Each row names the odtk code and the solver version that made it: a run recorded again by
another odtk or solver version replaces its row, and the row replaced is kept, whole, in the
table ``superseded`` (with when it was superseded), so that ``runs`` holds one row per run for
reports and nothing recorded is lost.
A campaign *claims* its runs (table ``claims``: run id, owner, lease expiry; see
:mod:`odtk.experiments.claims`) before it starts them, so that two campaigns on one database
never compute a run twice; recording a run ends its claim, and a stale claim (its lease
expired, or its owner process ended on this host) may be taken by any campaign. A write that
finds another writer holding the file says so in a line and waits up to ``BUSY_SECONDS``. A
database deleted or replaced while in use is a one-line error: it is neither begun again empty
nor is the file found in its place written to. A database that cannot be written (a read-only
file, folder or file system) is refused for campaigns and still read for reports.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from odtk.exceptions import DataError, OdtkWarning
from odtk.experiments.claims import LEASE_SECONDS, Claim, this_process

BUSY_SECONDS = 120  # how long a write waits for another process holding the file
NOTICE_SECONDS = 2  # a write waiting longer than this for the file says so

# column → SQLite type; the order is the table's
COLUMNS: dict[str, str] = {
    "id": "TEXT PRIMARY KEY",      # stable hash of the run's parameters
    "campaign": "TEXT",            # the grid's name
    "phase": "TEXT",               # "grid" or "retrain" (the selected setting on train + validation)
    "dataset": "TEXT",
    "rows": "INTEGER",             # rows sampled from the dataset (NULL: all)
    "seed": "INTEGER",             # split (and solver) seed
    "method": "TEXT",              # model key, e.g. flowoct
    "solver": "TEXT",
    "depth": "INTEGER",
    "skeleton": "TEXT",
    "options": "TEXT",             # JSON of the model's options given in the grid
    "time_limit": "REAL",
    "threads": "INTEGER",
    "status": "TEXT",              # "done" or "failed"
    "termination": "TEXT",         # optimal, time_limit, heuristic, … (done runs)
    "message": "TEXT",             # why a run failed
    "objective": "REAL",
    "bound": "REAL",
    "gap": "REAL",
    "build_time": "REAL",
    "solve_time": "REAL",
    "wall_time": "REAL",
    "cpu_time": "REAL",            # CPU seconds of the solve (its process and child processes)
    "variables": "INTEGER",
    "integer_variables": "INTEGER",
    "constraints": "INTEGER",
    "nonzeros": "INTEGER",
    "n_train": "INTEGER",
    "n_val": "INTEGER",
    "n_test": "INTEGER",
    "train_accuracy": "REAL",
    "val_accuracy": "REAL",
    "test_accuracy": "REAL",
    "model": "TEXT",               # the learned model as odtk's JSON model file
    "steps": "TEXT",               # JSON of the training steps (heuristic, milp, search: value, status, …)
    "attempts": "INTEGER",
    "started": "TEXT",             # ISO 8601, UTC
    "finished": "TEXT",
    "worker": "TEXT",              # host:pid that ran it
    "odtk_version": "TEXT",        # the odtk code that ran it (odtk.experiments.worker.code_version)
    "solver_version": "TEXT",      # the solver's version ("" for odtk's own searches)
}
VERSIONS = ("odtk_version", "solver_version")
# added to databases written before they existed (NULL for old runs)
LATER_COLUMNS = ("steps", *VERSIONS, "cpu_time")
_UPSERT = (
    f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
    f"ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{name} = excluded.{name}" for name in COLUMNS if name not in ("id", "attempts"))
    + ", attempts = runs.attempts + 1 WHERE runs.status != 'done'"
)
# rows replaced by a run of another version, each with when it was (several per run id)
_SUPERSEDED_TABLE = ("CREATE TABLE IF NOT EXISTS superseded ("
                     + ", ".join(f"{name} {kind.removesuffix(' PRIMARY KEY')}" for name, kind in COLUMNS.items())
                     + ", superseded TEXT)")
_SUPERSEDE = (f"INSERT INTO superseded ({', '.join(COLUMNS)}, superseded) "
              f"SELECT {', '.join(COLUMNS)}, datetime('now') FROM runs WHERE id = ?")


@dataclass(frozen=True)
class Recorded:
    """What the database holds of a run: its status and the versions that made it (None:
    recorded by an odtk that did not say)."""

    status: str
    odtk_version: str | None
    solver_version: str | None


class ResultStore:
    """A results database file (created on first use; ``read_only``: for reports, its tables
    are neither created nor altered)."""

    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = Path(path)
        self._identity: tuple[int, int] | None = None  # the file's device and inode, once opened
        if not self.path.parent.is_dir():
            raise DataError(f"Folder {self.path.parent} does not exist; create it first.")
        if self.path.exists() and not self.path.is_file():
            raise DataError(f"{self.path} is not a regular file; choose another --db file.")
        self._mode = "rw"
        if read_only:
            self._mode = _reading_mode(self.path)
        else:
            _refuse_read_only(self.path)
        try:
            self._refuse_foreign()
            if not read_only:
                self._create()
            with self._raw() as db:
                known = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        except sqlite3.DatabaseError as exc:
            if _locked(exc):
                raise DataError(_still_locked(self.path)) from None
            raise DataError(f"{self.path} is not an odtk results database ({exc}); "
                            "choose another --db file.") from None
        missing = set(COLUMNS) - known
        if known - set(COLUMNS) or not missing <= set(LATER_COLUMNS):
            raise DataError(f"{self.path} holds no 'runs' table of odtk's layout; choose another --db file.")
        self._absent = [name for name in LATER_COLUMNS if name in missing]
        if self._absent and not read_only:
            self._add_columns()
        self._identity = _identity(self.path)

    def _refuse_foreign(self) -> None:
        """DataError for an SQLite file holding other tables and no ``runs``: another
        application's database, left as it is (neither switched to WAL nor given a table)."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self._raw() as db:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "runs" not in tables:
            raise DataError(f"{self.path} is another application's database (tables {', '.join(sorted(tables))}) "
                            "with no 'runs' table; choose another --db file.")

    def _add_columns(self) -> None:
        """Add the later columns a database written by an older odtk lacks (another process
        opening it at the same time may have added them already)."""
        with self._raw() as db:
            for name in self._absent:
                try:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {name} {COLUMNS[name]}")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):
                        raise
        self._absent = []

    @contextmanager
    def _raw(self) -> Iterator[sqlite3.Connection]:
        """A connection to the file as it is: never creates it (a database deleted while a
        campaign runs is not silently begun again empty), nor opens another file moved to its
        path (SQLite would apply the database's write-ahead log to it)."""
        if self._identity is not None and _identity(self.path) != self._identity:
            raise DataError(_moved(self.path))
        with closing(_open(f"{self.path.absolute().as_uri()}?mode={self._mode}")) as db:
            yield db

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection whose database errors (a full disk, a damaged file) are one-line DataErrors."""
        try:
            with self._raw() as db:
                yield db
        except sqlite3.DatabaseError as exc:
            moved = _identity(self.path) != self._identity
            raise DataError(_moved(self.path) if moved else _database_problem(self.path, exc)) from None

    def _create(self) -> None:
        """WAL mode and the runs table. SQLite answers "locked" at once, without waiting, when
        two processes switch a new file to WAL together (two campaigns starting): retry."""
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                with closing(_open(f"{self.path.absolute().as_uri()}?mode=rwc")) as db:
                    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        db.execute("PRAGMA journal_mode=WAL")
                    db.execute(f"CREATE TABLE IF NOT EXISTS runs ({', '.join(f'{c} {t}' for c, t in COLUMNS.items())})")
                    db.execute("CREATE TABLE IF NOT EXISTS claims "
                               "(id TEXT PRIMARY KEY, owner TEXT, claimed TEXT, expires REAL)")
                    if "expires" not in {row[1] for row in db.execute("PRAGMA table_info(claims)")}:
                        db.execute("ALTER TABLE claims ADD COLUMN expires REAL")  # claims of an odtk without leases
                    db.execute(_SUPERSEDED_TABLE)
                return
            except sqlite3.OperationalError as exc:
                if not (_locked(exc) or "duplicate column" in str(exc)) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def record(self, row: dict[str, Any]) -> None:
        """Write one run in a single transaction: a finished run of the same versions is kept as
        it is; a run recorded by another odtk or solver version is moved to ``superseded``."""
        values = [_plain(row.get(name)) for name in COLUMNS]
        values[list(COLUMNS).index("attempts")] = 1
        with self._transaction() as db:
            found = db.execute(f"SELECT {', '.join(VERSIONS)} FROM runs WHERE id = ?", (row["id"],)).fetchone()
            if found is not None and found != tuple(row.get(name) for name in VERSIONS):
                db.execute(_SUPERSEDE, (row["id"],))
                db.execute("DELETE FROM runs WHERE id = ?", (row["id"],))
            db.execute(_UPSERT, values)
            db.execute("DELETE FROM claims WHERE id = ?", (row["id"],))

    def claim(self, ids: Iterable[str], owner: str | None = None, lease: float = LEASE_SECONDS) -> list[str]:
        """Claim the runs ``ids`` for ``owner`` (default: this process) for ``lease`` seconds, in
        one transaction; returns those claimed, leaving out the runs another live campaign holds."""
        owner = owner or this_process()
        claimed, now = [], time.time()
        with self._transaction() as db:
            held = {claim.id: claim for claim in _claims(db)}
            for run_id in ids:
                holder = held.get(run_id)
                if holder is None or holder.owner == owner or holder.stale(now):
                    db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, datetime('now'), ?)",
                               (run_id, owner, now + lease))
                    claimed.append(run_id)
        return claimed

    def renew(self, owner: str | None = None, lease: float = LEASE_SECONDS) -> None:
        """Extend the leases of ``owner``'s claims (default: this process) to ``lease`` seconds from now."""
        with self._transaction() as db:
            db.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, owner or this_process()))

    def release(self, owner: str | None = None) -> None:
        """End the claims of ``owner`` (default: this process) on runs it did not record."""
        with self._transaction() as db:
            db.execute("DELETE FROM claims WHERE owner = ?", (owner or this_process(),))

    def release_claims(self, everything: bool = False) -> tuple[list[tuple[Claim, str]], list[Claim]]:
        """End the stale claims (with ``everything``, all claims) in one transaction; returns
        the claims ended, each with why it was stale ("released by hand" under ``everything``),
        and the claims kept."""
        ended, kept, now = [], [], time.time()
        with self._transaction() as db:
            for claim in _claims(db):
                why = "released by hand" if everything else claim.stale(now)
                if why:
                    db.execute("DELETE FROM claims WHERE id = ?", (claim.id,))
                    ended.append((claim, why))
                else:
                    kept.append(claim)
        return ended, kept

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            self._begin(db)
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:  # SQLite may have rolled back already (a full disk)
                    db.execute("ROLLBACK")
                raise

    def _begin(self, db: sqlite3.Connection) -> None:
        """Take the write lock; when another writer holds it past NOTICE_SECONDS, say so in a
        line (an OdtkWarning) and wait for it up to BUSY_SECONDS in all."""
        db.execute(f"PRAGMA busy_timeout = {int(NOTICE_SECONDS * 1000)}")
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise
            warnings.warn(f"waiting for the lock on {self.path} held by another writer "
                          f"(up to {BUSY_SECONDS:g} s)…", OdtkWarning, stacklevel=2)
            db.execute(f"PRAGMA busy_timeout = {int(max(BUSY_SECONDS - NOTICE_SECONDS, 0) * 1000)}")
            db.execute("BEGIN IMMEDIATE")
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")

    def statuses(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """Run id → status ("done" / "failed") of the recorded runs (of ``ids`` if given)."""
        with self._connect() as db:
            found = dict(db.execute("SELECT id, status FROM runs"))
        return found if ids is None else {i: found[i] for i in ids if i in found}

    def recorded(self, ids: Iterable[str]) -> dict[str, Recorded]:
        """Run id → what the database holds of it, for the runs of ``ids`` recorded."""
        wanted = set(ids)
        with self._connect() as db:
            found = db.execute(f"SELECT id, status, {', '.join(VERSIONS)} FROM runs").fetchall()
        return {run_id: Recorded(*rest) for run_id, *rest in found if run_id in wanted}

    def frame(self) -> pd.DataFrame:
        """Every recorded run as a DataFrame (``options`` stays JSON text)."""
        with self._connect() as db:
            cursor = db.execute("SELECT * FROM runs ORDER BY campaign, phase, dataset, seed, method, id")
            rows = cursor.fetchall()
        frame = pd.DataFrame.from_records(rows, columns=[column[0] for column in cursor.description],
                                          coerce_float=True)
        return frame.assign(**{name: None for name in self._absent})


def _open(uri: str) -> sqlite3.Connection:
    """An SQLite connection in autocommit mode that waits for other writers."""
    return sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None)


def _identity(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` (None: no file there)."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def _moved(path: Path) -> str:
    """One line for a database deleted, moved or replaced while a campaign used it."""
    if not path.exists():
        return (f"The results database {path} is gone (deleted or moved while in use); restore it and run the "
                "campaign again (the runs finished since it went are not recorded).")
    return (f"The results database {path} was replaced by another file while in use; that file is left as it "
            "is: put the database back and run the campaign again (the runs finished since are not recorded).")


def _database_problem(path: Path, exc: sqlite3.DatabaseError) -> str:
    """One line on what went wrong with the results database and what to do."""
    text = str(exc)
    if "full" in text:
        return (f"Cannot write to the results database {path}: the disk is full ({text}); free space and "
                "run the campaign again (the runs recorded so far are kept).")
    if _locked(exc):
        return _still_locked(path)
    if "malformed" in text or "not a database" in text:
        return f"The results database {path} is damaged ({text}); restore it from a copy or choose another --db file."
    return f"Cannot use the results database {path} ({text}); check the file or choose another --db file."


def _claims(db: sqlite3.Connection) -> list[Claim]:
    """Every claim in the database."""
    return [Claim(*row) for row in db.execute("SELECT id, owner, expires FROM claims ORDER BY owner, id")]


def _locked(exc: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another process holding the file."""
    return "locked" in str(exc) or "busy" in str(exc)


def _still_locked(path: Path) -> str:
    """One line for a database another writer held past BUSY_SECONDS."""
    return (f"The results database {path} stayed locked by another writer for {BUSY_SECONDS:g} s (a program "
            "holding a transaction open on it); end that program's transaction, then run the command again "
            "(the runs recorded so far are kept).")


def _read_only_place(path: Path) -> str | None:
    """How ``path`` (a file or folder) is read-only ("on a read-only file system", "read-only"),
    or None when this process may write to it."""
    if os.access(path, os.W_OK):
        return None
    folder = path if path.is_dir() else path.parent
    return "on a read-only file system" if os.statvfs(folder).f_flag & os.ST_RDONLY else "read-only"


def _refuse_read_only(path: Path) -> None:
    """DataError when runs cannot be recorded at ``path``: the file, or its folder (where SQLite
    keeps its write-ahead log beside the database), cannot be written."""
    if path.exists() and (how := _read_only_place(path)):
        raise DataError(f"The results database {path} is {how}: runs cannot be recorded in it; copy it to a "
                        "folder you can write to and give that copy as --db (odtk experiment report reads it "
                        "where it is).")
    if how := _read_only_place(path.parent):
        raise DataError(f"The folder {path.parent.absolute()} is {how}: the results database {path.name} cannot be "
                        "written there; give --db a path in a folder you can write to.")


def _reading_mode(path: Path) -> str:
    """The URI mode for a report's reading: read-write where the file and its folder can be
    written (the last connection then merges and removes the ``-wal`` and ``-shm`` files, leaving
    the folder as it was), read-only where only the folder can, else immutable."""
    if os.access(path.parent, os.W_OK):
        return "rw" if os.access(path, os.W_OK) else "ro"
    return _immutable(path)


def _immutable(path: Path) -> str:
    """The URI mode for reading a database in a folder that cannot be written (SQLite cannot
    make the shared-memory file it needs to read a WAL database): as an immutable file. Warns
    when a write-ahead log holds runs that this way of reading cannot see."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        warnings.warn(f"{wal} holds runs not yet merged into {path.name}, which cannot be read in a read-only "
                      "folder: copy both files to a folder you can write to for a complete report.",
                      OdtkWarning, stacklevel=3)
    return "ro&immutable=1"


def _plain(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value
