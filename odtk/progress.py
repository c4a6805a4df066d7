"""Progress of a solve: one status line on a terminal, or a line per step when asked.

Stages, solver callbacks and searches report to the :class:`Progress` of their
:class:`~odtk.budget.Budget` (``budget.report(incumbent=…, bound=…, nodes=…)``). On a
terminal (``mode="auto"`` with standard error a TTY, or ``"bar"``) a status line on standard
error shows the phase, the time spent and the budget, the incumbent, the bound, the gap and
the nodes, refreshed every second by a thread (tqdm draws it) and gone when the solve ends.
``mode="lines"`` (``--verbose``, ``verbose=True``) prints a line per step instead, beside the
solver's own log; ``mode="off"`` (``--quiet``, and ``"auto"`` without a terminal) prints nothing,
as does every mode when standard error is closed.
"""
from __future__ import annotations

import math
import sys
import threading
from typing import TYPE_CHECKING, Any

from odtk.exceptions import ConfigError

if TYPE_CHECKING:
    from tqdm import tqdm

MODES = ("auto", "bar", "lines", "off")
REFRESH_SECONDS = 1.0
_active: Progress | None = None  # the status line on screen, if any (see :func:`write_line`)


class Progress:
    """Where a solve's progress goes (see the module docstring for ``mode``)."""

    def __init__(self, mode: str = "off", stream: Any = None):
        check_mode(mode)
        self.stream = stream if stream is not None else sys.stderr
        if self.stream is None:  # no standard error (closed): nowhere to report
            mode = "off"
        elif mode == "auto":
            mode = "bar" if _is_terminal(self.stream) else "off"
        self.mode = mode
        self.fields: dict[str, Any] = {}
        self.phase_name = ""
        self._unsaid: str | None = None  # a phase set by a signal handler, for ``lines`` mode to print
        self._budget = None
        self._lock = threading.Lock()
        self._bar: tqdm | None = None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, budget) -> None:
        """Begin reporting for ``budget`` (called by the budget itself)."""
        global _active
        self._budget = budget
        if self.mode != "bar" or self._bar is not None:
            return
        from tqdm import tqdm

        self._bar = tqdm(total=None, bar_format="{desc}", file=self.stream, leave=False, dynamic_ncols=True)
        _active = self
        self._thread = threading.Thread(target=self._refresh_loop, name="odtk-progress", daemon=True)
        self._thread.start()

    def phase(self, name: str) -> None:
        """The stage now running (encoding, heuristic, build, hand-off, solve, …)."""
        with self._lock:
            changed = name != self.phase_name
            self.phase_name = name
        if changed and self.mode == "lines":
            self._line(name)
        self._draw()

    def phase_from_signal(self, name: str) -> None:
        """Set the phase without the lock and without writing: all a signal handler may do, since
        the code it interrupts may hold the lock or be writing to the stream. The status line
        shows it at its next refresh; ``lines`` mode prints it at the next step or at the end."""
        self.phase_name = name
        self._unsaid = name

    def update(self, **fields: Any) -> None:
        """New figures: ``incumbent``, ``bound``, ``gap``, ``nodes`` or any other."""
        with self._lock:
            self.fields.update({k: v for k, v in fields.items() if v is not None})
        self._draw()

    def note(self, message: str) -> None:
        """A finished step worth a line of its own (``lines`` mode only)."""
        if self.mode == "lines":
            self._line(message)

    def close(self) -> None:
        """Remove the status line and stop its thread."""
        global _active
        self._say_unsaid()
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * REFRESH_SECONDS)
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
        if _active is self:
            _active = None

    def status(self) -> str:
        """The status line's text."""
        with self._lock:
            fields = dict(self.fields)
            phase = self.phase_name
        parts = [f"odtk {phase}"] if phase else ["odtk"]
        if self._budget is not None:
            limit = "" if self._budget.seconds is None else f" / {self._budget.seconds:.0f}s"
            parts.append(f"{self._budget.elapsed():.0f}s{limit}")
        for name in ("incumbent", "bound"):
            if isinstance(fields.get(name), (int, float)) and math.isfinite(fields[name]):
                parts.append(f"{name} {fields[name]:.6g}")
        gap = fields.get("gap")
        if gap is None and "incumbent" in fields and "bound" in fields:
            gap = _gap(fields["incumbent"], fields["bound"])
        if gap is not None:
            parts.append(f"gap {100 * gap:.1f}%")
        for name in ("nodes", "rounds", "cuts", "searched"):
            if name in fields:
                parts.append(f"{name} {fields[name]:,}" if isinstance(fields[name], int) else f"{name} {fields[name]}")
        return "  ".join(parts)

    def _draw(self) -> None:
        self._say_unsaid()
        with self._lock:
            bar = self._bar
        if bar is not None:
            text = self.status()
            with self._lock:
                if self._bar is not None:
                    self._bar.set_description_str(text, refresh=True)

    def _say_unsaid(self) -> None:
        unsaid, self._unsaid = self._unsaid, None
        if unsaid is not None and self.mode == "lines":
            self._line(unsaid)

    def _refresh_loop(self) -> None:
        while not self._stopped.wait(REFRESH_SECONDS):
            self._draw()

    def _line(self, message: str) -> None:
        print(f"odtk: {message}", file=self.stream, flush=True)

    def write(self, line: str) -> None:
        """Print ``line`` above the status line (which is drawn again below it)."""
        with self._lock:
            if self._bar is not None:
                self._bar.clear()
            print(line, file=self.stream, flush=True)
            if self._bar is not None:
                self._bar.refresh()


def check_mode(mode: Any) -> None:
    """A ConfigError unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise ConfigError(f"progress must be one of {', '.join(map(repr, MODES))}; got {mode!r}.")


def write_line(line: str, stream: Any = None) -> None:
    """Print ``line`` on standard error without breaking a status line that is on screen; with
    standard error closed (``sys.stderr`` None) or failing, the line is dropped, never printed on
    standard output."""
    if _active is not None:
        _active.write(line)
        return
    stream = stream if stream is not None else sys.stderr
    try:
        if stream is not None:
            print(line, file=stream, flush=True)
    except OSError:  # standard error cannot be written: the exit code alone tells what happened
        pass


def _gap(incumbent: float, bound: float) -> float | None:
    if not (math.isfinite(incumbent) and math.isfinite(bound)):
        return None
    return abs(bound - incumbent) / max(abs(incumbent), 1e-10)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
