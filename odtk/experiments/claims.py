"""Who holds a run of a results database: owners, leases and the heartbeat that renews them.

A campaign claims its runs before it starts them (:meth:`ResultStore.claim
<odtk.experiments.store.ResultStore.claim>`). Each claim names its owner, ``host:pid@start``
(``start``: the process's start time as the kernel counts it, so that a later process given
the same id is not taken for the owner), and carries a *lease*: an expiry time that the owner's
heartbeat pushes forward every third of the lease while the campaign runs. A claim is *stale*,
and any campaign may take it, once its lease has expired (its owner was killed, or its host
went down) or, on the owner's own host, as soon as the owner process has ended. Leases compare
the clocks of the hosts sharing a database: keep them synchronised (NTP).

The host name is the system's, or ``$ODTK_HOST`` when set (to tell apart containers that share
a host name, or to play two hosts in a test).
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from odtk.experiments.store import ResultStore

LEASE_SECONDS = 300.0  # how long a claim outlives its owner's last heartbeat


@dataclass(frozen=True)
class Claim:
    """A claim on a run: its id, its owner and when its lease expires (Unix time; None: a
    claim written by an odtk without leases)."""

    id: str
    owner: str
    expires: float | None

    def stale(self, now: float | None = None) -> str | None:
        """Why the claim may be taken ("lease expired", "owner ended"), or None while its
        owner may still be running it."""
        if self.expires is None or self.expires < (time.time() if now is None else now):
            return "lease expired"
        return None if owner_alive(self.owner) else "owner ended"


def host_name() -> str:
    """This host's name for claims and rows: ``$ODTK_HOST`` if set, else the system's."""
    return os.environ.get("ODTK_HOST") or socket.gethostname()


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None when not
    known here."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def this_process() -> str:
    """This process as the owner of claims: ``host:pid@start`` (``host:pid`` without /proc)."""
    start = _start_time(os.getpid())
    return f"{host_name()}:{os.getpid()}" + (f"@{start}" if start else "")


def owner_alive(owner: str) -> bool:
    """Whether a claim's owner may still run: a process of this host that exists (and started
    when the owner did), or any process of another host (which this one cannot see)."""
    host, _, process = owner.rpartition(":")
    pid, _, start = process.partition("@")
    if host != host_name() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _start_time(int(pid)) in (start, None)


@contextmanager
def heartbeat(store: ResultStore, lease: float, owner: str | None = None) -> Iterator[None]:
    """Renew the leases of ``owner``'s claims (default: this process) every third of ``lease``
    seconds while the block runs. A renewal that fails (the database locked or gone) is tried
    again at the next beat: the campaign itself reports what is wrong with the database."""
    owner = owner or this_process()
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease / 3):
            try:
                store.renew(owner, lease)
            except Exception:  # noqa: BLE001  (the campaign's own writes report the cause)
                continue

    threading.Thread(target=beat, name="odtk-lease", daemon=True).start()
    try:
        yield
    finally:  # a renewal still under way finds no claim left to renew
        stop.set()
