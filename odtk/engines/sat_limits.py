"""How large a clause set the SAT inference may build: its memory rule and the time building takes.

The search (:mod:`odtk.engines.sat_inference`) hands each depth's clauses to a fresh backend in
chunks of ``CHUNK``, consulting the budget between two. :class:`ClauseRoom` keeps two rules:

* **memory**: the clauses one backend holds may take at most ``MEMORY_SHARE`` of the memory
  free when the search starts (:func:`~odtk.engines.cp_search.memory_available`: the system's
  available memory, within a cgroup's and an address-space limit), as the backend estimates
  them (``Oracle.footprint``: measured bytes per clause and per literal; learnt clauses and the
  rest of the process come on top, hence the share). A depth whose clauses (1)–(2), with the
  examples encoded from the start, would exceed it is not begun; each later example is counted
  before it is handed over.
* **time**: a depth whose clauses cannot be handed over in the time left, at the rate measured
  so far in the search, is not begun.

Either raises :class:`ClausesTooLarge`, naming the size and the fix; the search then returns its
best tree (status ``memory_limit`` or ``time_limit``).
"""
from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from odtk.engines.cp_search import memory_available

MEMORY_SHARE = 0.5  # of the memory free when the search starts, the most one backend's clauses take
FIX = "use fewer thresholds (max_thresholds / --max-thresholds: a node's clauses grow with the square of the columns)"


class Backend(Protocol):
    """What the rules need of a backend (:class:`~odtk.engines.sat_inference.Oracle`)."""

    def add_clauses(self, clauses: np.ndarray) -> None: ...

    def footprint(self, clauses: int, literals: int) -> float: ...


class ClausesTooLarge(Exception):
    """The next clauses would break the memory rule (``status`` "memory_limit") or outlast the
    time left ("time_limit"): ``reason`` says how, ``fix`` what to change."""

    def __init__(self, status: str, reason: str, fix: str):
        super().__init__(f"{reason}; {fix}")
        self.status, self.reason, self.fix = status, reason, fix


class ClauseRoom:
    """The memory a search's backend may fill and the rate at which clauses are handed to it."""

    def __init__(self, room: float | None = None):
        self.room = MEMORY_SHARE * memory_available() if room is None else room
        self.held = (0, 0)  # clauses and literals the current backend holds
        self.handed, self.seconds = 0, 0.0  # clauses handed in the whole search, and the time it took

    def begin(self, backend: Backend, depth: int, clauses: int, literals: int, left: float) -> None:
        """A fresh backend for depth ``depth``, which is to receive ``clauses`` clauses of
        ``literals`` literals first; raises :class:`ClausesTooLarge` if they break a rule."""
        self.held = (0, 0)
        need = backend.footprint(clauses, literals)
        if need > self.room:
            raise ClausesTooLarge("memory_limit", f"the {clauses:,} clauses of depth {depth} need about "
                                  f"{need / 2**30:.1f} GB, more than the {self.room / 2**30:.1f} GB the search "
                                  f"may take ({MEMORY_SHARE:.0%} of the memory free)", FIX)
        if self.handed and clauses * self.seconds / self.handed > left:
            raise ClausesTooLarge("time_limit", f"handing the {clauses:,} clauses of depth {depth} to the solver "
                                  f"would take about {clauses * self.seconds / self.handed:.0f} s, more than the "
                                  f"{left:.1f} s left", f"raise the time limit (--time-limit) or {FIX}")

    def hand(self, backend: Backend, chunk: np.ndarray, depth: int) -> None:
        """Add ``chunk`` (a clause per row) to ``backend`` if it keeps within the memory rule."""
        clauses, literals = self.held[0] + len(chunk), self.held[1] + chunk.size
        need = backend.footprint(clauses, literals)
        if need > self.room:
            raise ClausesTooLarge("memory_limit", f"the clauses of depth {depth} outgrew the "
                                  f"{self.room / 2**30:.1f} GB the search may take ({MEMORY_SHARE:.0%} of the memory "
                                  f"free) at {clauses:,} clauses", FIX)
        began = time.monotonic()
        backend.add_clauses(chunk)
        self.seconds += time.monotonic() - began
        self.handed += len(chunk)
        self.held = (clauses, literals)
