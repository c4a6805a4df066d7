"""One budget per solve: the deadline every stage shares, the stop rule, and where progress goes.

A :class:`Budget` is made when a solve starts (by ``odtk.solve``, or by the CLI before it
reads the data) and travels through every stage: encoding, starting trees, the heuristic,
the build, the hand-off, the solve, decoding and the self-check. A stage asks it for the
time left (:meth:`Budget.remaining`) and never reads the clock on its own, so the time limit
holds by construction and the summary can say where the time went (:attr:`Budget.spent`).

The stop rule lives here too. While :func:`stop_on_signals` is active, SIGINT, SIGTERM and
SIGHUP mark the budget stopped (:attr:`Budget.signal`, and :attr:`Budget.flag`, an array that
compiled code reads) and raise :class:`Stopped` in Python code, unless the main thread is only
waiting for a solver (:meth:`Budget.waiting`): the waiting loop then sees the flag, stops the
solver and keeps its best solution. Every stage that holds a model catches :class:`Stopped`
and returns that model, marked ``interrupted``.
"""
from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any, overload

import numpy as np

from odtk.exceptions import ConfigError

DEFAULT_TIME_LIMIT = 60.0  # seconds: every solve ends by default (None: no limit)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(BaseException):
    """A stop was asked for by a signal (a BaseException, as KeyboardInterrupt is, so that
    libraries' ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
        return 128 + self.signum


class Budget:
    """The time one solve may take, what each stage spent, and whether to stop now.

    Parameters
    ----------
    seconds : float or None
        Time for everything from the budget's creation to the result; None means no limit.
    progress : Progress, optional
        Where stages, incumbents and bounds are reported (:mod:`odtk.progress`).
    """

    def __init__(self, seconds: float | None = DEFAULT_TIME_LIMIT, progress: Any = None):
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not math.isfinite(seconds) or seconds <= 0):
            raise ConfigError(f"time_limit (--time-limit) must be a number of seconds above 0, or None "
                              f"(--time-limit none) for no limit; got {seconds!r}.")
        from odtk.progress import Progress

        self.seconds = None if seconds is None else float(seconds)
        self.started = time.monotonic()
        self.deadline = None if seconds is None else self.started + float(seconds)
        self.progress = progress if progress is not None else Progress()
        self.progress.start(self)
        self.flag = np.zeros(1, dtype=np.int64)  # the stop signal's number, read by compiled code
        self.signal: int | None = None
        self.spent: dict[str, float] = {}
        self._waiting = 0

    # -- time ------------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return time.monotonic() - self.started

    def remaining(self) -> float | None:
        """Seconds left (never negative); None without a limit."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.0)

    @overload
    def share(self, fraction: float, at_most: float) -> float: ...

    @overload
    def share(self, fraction: float, at_most: None = None) -> float | None: ...

    def share(self, fraction: float, at_most: float | None = None) -> float | None:
        """``fraction`` of the time left, capped at ``at_most`` (None: no limit, no cap)."""
        left = self.remaining()
        if left is None:
            return at_most
        return fraction * left if at_most is None else min(fraction * left, at_most)

    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    # -- stopping --------------------------------------------------------------------------
    def request_stop(self, signum: int) -> None:
        """Mark the budget stopped by signal ``signum`` (what the signal handlers call: it takes
        no lock, since the code a handler interrupts may hold it)."""
        if self.signal is None:
            self.signal = signum
            self.flag[0] = signum
            self.progress.phase_from_signal("stopping")

    @property
    def stop_requested(self) -> bool:
        """True once a signal asked to stop."""
        return self.signal is not None

    def should_stop(self) -> bool:
        """True when a signal asked to stop or the deadline has passed."""
        return self.signal is not None or self.expired()

    def check(self) -> None:
        """Raise :class:`Stopped` if a signal asked to stop (for loops in Python code)."""
        if self.signal is not None:
            raise Stopped(self.signal)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """While the main thread only waits for a solver, a signal sets the flag and raises
        nothing: the waiting loop polls :meth:`should_stop` and stops the solver itself."""
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1

    def _on_signal(self, signum: int, frame) -> None:
        first = self.signal is None
        self.request_stop(signum)
        if self._waiting and first:
            return
        raise Stopped(signum if self.signal is None else self.signal)

    # -- stages and progress ---------------------------------------------------------------
    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (added to :attr:`spent`) and show it as the current phase."""
        self.progress.phase(name)
        began = time.monotonic()
        try:
            yield
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.monotonic() - began

    @contextlib.contextmanager
    def excluded(self, name: str) -> Iterator[None]:
        """A stage whose time does not count against the limit (the deadline moves by it): once-per-
        machine work such as compiling the CP search's kernels, which must never change an answer.
        The phase it interrupts is shown again when it ends."""
        before = self.progress.phase_name
        self.progress.phase(name)
        began = time.monotonic()
        try:
            yield
        finally:
            took = time.monotonic() - began
            self.spent[name] = self.spent.get(name, 0.0) + took
            self.started += took
            if self.deadline is not None:
                self.deadline += took
            if self.signal is None:
                self.progress.phase(before)

    def report(self, **fields: Any) -> None:
        """Pass incumbent, bound, gap, nodes or other figures to the progress reporter."""
        self.progress.update(**fields)


class BudgetView:
    """The solve's budget as a sub-solve sees it: the same deadline, stop rule and waiting, but
    the progress fields named in ``hidden`` are not reported (a Benders master's incumbents may
    violate cuts not found yet, while its bound holds: the master is a relaxation; a SAT query's
    figures are not the search's)."""

    def __init__(self, budget: Any, hidden: tuple[str, ...]):
        self._budget, self._hidden = budget, hidden

    def __getattr__(self, name: str) -> Any:
        return getattr(self._budget, name)

    def report(self, **fields: Any) -> None:
        shown = {name: value for name, value in fields.items() if name not in self._hidden}
        if shown:
            self._budget.report(**shown)


@contextlib.contextmanager
def stop_on_signals(budget: Budget, signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[Budget]:
    """While the block runs, ``signals`` stop ``budget`` (in the main thread only; elsewhere
    the block runs unchanged). An ignored signal stays ignored, as POSIX asks (a shell starts
    background jobs with SIGINT ignored, ``nohup`` ignores SIGHUP): SIGTERM still stops them.
    SIGINT is taken only from Python's own handler, so a caller's handler keeps it."""
    if threading.current_thread() is not threading.main_thread():
        yield budget
        return
    previous = {}
    for signum in signals:
        current = signal.getsignal(signum)
        if current is signal.SIG_IGN or (signum == signal.SIGINT and current is not signal.default_int_handler):
            continue
        previous[signum] = current
        signal.signal(signum, budget._on_signal)
    try:
        yield budget
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
