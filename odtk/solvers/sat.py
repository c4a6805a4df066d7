"""SAT solvers of python-sat: the clause models (``sat-depth`` / ``sat-size``) call them directly,
through :class:`SatOracle`, which stops a query when asked.

Each query runs in a worker thread while the calling thread waits for it, looking every
``WATCH_SECONDS`` whether to stop (the search's deadline, a signal noted by the solve's budget):
Python runs signal handlers in the main thread only, so a main thread stuck in the solver's C
code would notice nothing. MiniSat-like solvers (MiniSat, Glucose) release the interpreter while
they search and are stopped with python-sat's ``interrupt``; CaDiCaL cannot be interrupted and
holds the interpreter, so it searches in slices of conflicts of about ``SLICE_SECONDS`` each
(learnt clauses are kept between slices) and the query stops between two slices.

:meth:`SatOracle.footprint` estimates the memory the solver takes for the clauses it holds
(``MEMORY``), for the search's memory rule (:mod:`odtk.engines.sat_inference`).
"""
from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable

import numpy as np

from odtk.engines.sat_inference import TimeLimitReached
from odtk.engines.sat_start import WATCH_SECONDS
from odtk.solvers.registry import SolverSpec

BACKEND = "pysat"
solve = None  # not a MILP backend
SLICE_SECONDS = 0.2  # CaDiCaL: the time one slice of conflicts aims at
FIRST_SLICE = 2_000  # CaDiCaL: the conflicts of the first slice (then scaled to SLICE_SECONDS)
UNINTERRUPTIBLE = ("cadical", "lingeling")  # python-sat cannot interrupt these
# bytes per clause and per literal a solver holds, at most (measured on the SAT encoding's
# clause sets with python-sat 1.8: MiniSat 43, Glucose 51, CaDiCaL 81 a two-literal clause, and
# 4.4, 4.5 and 5.7 each literal more); other solvers are counted as CaDiCaL
MEMORY = {"minisat": (40, 5), "glucose": (50, 5), "cadical": (85, 6)}


def version(spec: SolverSpec) -> str:
    return "python-sat " + importlib.import_module("pysat").__version__


class SatOracle:
    """A python-sat solver kept between rounds (incremental) that stops when asked.

    Parameters
    ----------
    name : str
        A python-sat solver name (``minisat22``, ``glucose4``, ``cadical153``, …).
    deadline : float
        ``time.monotonic()`` value at which a query stops (``inf``: none).
    stop : callable, optional
        Called about every ``WATCH_SECONDS`` while a query runs, in the calling thread; a true
        answer stops the query. :meth:`solve` then raises :class:`TimeLimitReached`.
    """

    def __init__(self, name: str, deadline: float = float("inf"), stop: Callable[[], bool] | None = None):
        from pysat.solvers import Solver  # python-sat: the optional "sat" extra

        self.solver = Solver(name=name)
        self.deadline = deadline
        self.stop = stop if stop is not None else (lambda: False)
        self.interruptible = not name.startswith(UNINTERRUPTIBLE)
        self.conflicts = FIRST_SLICE
        self.memory = next((cost for prefix, cost in MEMORY.items() if name.startswith(prefix)), MEMORY["cadical"])
        # the worker's state, guarded: a query the caller gave up before it began never begins
        self._guard = threading.Lock()
        self._began = self._cancelled = False
        self._done, self._halt = threading.Event(), threading.Event()

    def add_clauses(self, clauses: np.ndarray) -> None:
        """Add the clauses of a 2-d array of literals, a clause per row."""
        self.solver.append_formula(clauses.tolist())

    def footprint(self, clauses: int, literals: int) -> float:
        """Bytes the solver takes for ``clauses`` clauses of ``literals`` literals in all."""
        per_clause, per_literal = self.memory
        return per_clause * clauses + per_literal * literals

    def solve(self, assumptions: list[int]) -> set[int] | None:
        """The true variables of a model under ``assumptions``, or None if there is none."""
        if self._stopping():
            raise TimeLimitReached
        answer: dict[str, bool | None] = {}
        self._began = self._cancelled = False
        self._done.clear()
        self._halt.clear()
        try:
            threading.Thread(target=self._query, args=(assumptions, answer), name="odtk-sat", daemon=True).start()
            while not self._done.wait(WATCH_SECONDS):
                if self._stopping():
                    self._interrupt()
        finally:  # also when a signal raised here: the solver is left to nobody else
            self._finish()
        if answer.get("result") is None:
            raise TimeLimitReached
        return {v for v in self.solver.get_model() if v > 0} if answer["result"] else None

    def close(self) -> None:
        self._finish()
        self.solver.delete()

    def _stopping(self) -> bool:
        return time.monotonic() >= self.deadline or self.stop()

    def _query(self, assumptions: list[int], answer: dict) -> None:
        """The worker: one query, whole (interruptible solvers) or in slices of conflicts."""
        with self._guard:
            if self._cancelled:
                return
            self._began = True
        try:
            if self.interruptible:
                answer["result"] = self.solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
                return
            while not self._halt.is_set():
                self.solver.conf_budget(self.conflicts)
                began = time.monotonic()
                answer["result"] = self.solver.solve_limited(assumptions=assumptions)
                if answer["result"] is not None:
                    return
                self._rescale(time.monotonic() - began)
        finally:
            self._done.set()

    def _rescale(self, took: float) -> None:
        """CaDiCaL: the conflicts of the next slice, so that a slice takes about SLICE_SECONDS."""
        if took < SLICE_SECONDS / 2:
            self.conflicts *= 2
        elif took > 2 * SLICE_SECONDS:
            self.conflicts = max(self.conflicts // 2, 100)

    def _interrupt(self) -> None:
        self._halt.set()
        if self.interruptible:
            self.solver.interrupt()

    def _finish(self) -> None:
        """Wait for a query that began (stopping it), cancel one that did not, clear the interrupt."""
        with self._guard:
            self._cancelled = True
            began = self._began
        while began and not self._done.is_set():
            self._interrupt()
            self._done.wait(WATCH_SECONDS)
        if self.interruptible:
            self.solver.clear_interrupt()
