"""Stopping a solve: in a child process that can always be ended, or in this one through the
solver's callbacks.

HiGHS consults its interrupt callbacks in its simplex, interior point and branch and bound, but
not in its presolve nor in the MIP's root LP, and does not look at its time limit there either:
on a FlowOCT of 4.4 M non-zeros, given 20 s, it presolved for 78 s before the first callback
(122 s given 40 s); on one of 0.1 M the first came after 11 s; a SIGTERM in the root LP took
11–19 s to act, one in an early branch and bound 20 s. A solve that needs no callback of this
process (``StandardForm.isolate``, see :func:`wanted`) therefore runs in a child process:

* the child (:func:`serve`) imports numpy, the solver library and the backend module only; it
  receives the standard form through a pipe, runs the backend's ``solve`` there and streams
  back each solution the solver finds and its progress (bound, nodes; at most one report per
  :data:`REPORT_SECONDS`); it dies with its parent (``PR_SET_PDEATHSIG`` on Linux, and the
  end of the pipe everywhere);
* the parent (:func:`solve`) waits inside ``budget.waiting()``, polling every :data:`POLL`
  seconds for messages, the budget's stop rule (a signal, the deadline) and the time limit plus
  :data:`GRACE`. On a stop it kills the child at once (asking first would wait for the
  callbacks that do not come in those phases), reaps it and returns the best solution
  streamed, with the last bound, as ``interrupted`` (a signal) or ``time_limit``.

A solve that needs this process (lazy rows, user cuts, a solution callback, a kept HiGHS model)
runs here under a :class:`Watch`: its callbacks stop the solver when the budget says so (any
signal, the deadline) or, without a budget, on Ctrl-C, and report its progress.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.solvers.standard_form import StandardForm, portable

if TYPE_CHECKING:
    from odtk.solvers.options import SolverOptions
    from odtk.solvers.registry import SolverSpec

GRACE = 0.5  # seconds a solver may run past its time limit before its process is ended
POLL = 0.1  # seconds between looks at the budget while the child solves
REPORT_SECONDS = 0.25  # at most one progress report per this many seconds (incumbents: each)
_ENTRY = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from odtk.solvers.isolated import serve; serve()"


def wanted(form: StandardForm) -> bool:
    """True when ``form`` asks for a child process and needs no callback of this one."""
    return (form.isolate and os.name == "posix" and bool(sys.executable)
            and form.lazy is None and form.user_cuts is None and form.on_solution is None)


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions, module: str, layout: str) -> dict:
    """``module.solve(form, spec, options)`` in a child process, which receives the form's matrix
    in ``layout`` ("csc" or "csr"); what it returns, or, when the solve is stopped, the best
    solution it streamed (``termination`` "interrupted" or "time_limit")."""
    began = time.monotonic()
    budget = options.budget
    limit = None if options.time_limit is None else began + options.time_limit
    followed = _Followed(form, budget)
    with (budget.waiting() if budget is not None else contextlib.nullcontext()), _Child() as child:
        try:
            child.send((module, portable(form, layout), spec, replace(options, budget=None), limit))
            followed.follow(child, None if limit is None else limit + GRACE, spec.name)
        except KeyboardInterrupt:  # Ctrl-C without a budget: this solve's stop
            if budget is not None:
                raise
            followed.stopped = ("interrupted", "stopped by SIGINT")
        if followed.result is None:
            child.end(followed.take)
    return followed.raw(began)


class _Followed:
    """What the child streamed: the best solution, the last bound and node count, its result."""

    def __init__(self, form: StandardForm, budget: Any):
        self.form, self.budget = form, budget
        self.values: np.ndarray | None = None
        self.objective: float | None = None
        self.bound: float | None = None
        self.nodes: int | None = None
        self.ready: float | None = None  # when the child had the form
        self.result: dict | None = None
        self.stopped: tuple[str, str] | None = None  # termination and message, if stopped

    def follow(self, child: _Child, hard_limit: float | None, name: str) -> None:
        """Take the child's messages until its result, or until it must stop."""
        while self.result is None and self.stopped is None:
            running = child.read(self.take, POLL)
            if self.result is not None:
                return
            if not running:
                self.stopped = ("error", f"the {name} process ended without a result ({child.cause()})")
            elif self.budget is not None and self.budget.stop_requested:
                self.stopped = ("interrupted", f"stopped by {signal.Signals(self.budget.signal).name}")
            elif self.budget is not None and self.budget.expired():
                self.stopped = ("time_limit", "stopped at the end of the time budget")
            elif hard_limit is not None and time.monotonic() >= hard_limit:
                self.stopped = ("time_limit", f"stopped: {name} ran {GRACE:g} s past its time limit")

    def take(self, kind: str, payload: Any) -> None:
        """One message of the child."""
        if kind == "ready":
            self.ready = time.monotonic()
        elif kind == "incumbent":
            objective = float(self.form.c @ payload + self.form.offset)
            if self.objective is None or (objective > self.objective if self.form.maximize
                                          else objective < self.objective):
                self.values, self.objective = payload, objective
                _report(self.budget, incumbent=objective)
        elif kind == "progress":
            self.bound = payload.get("bound", self.bound)
            self.nodes = payload.get("nodes", self.nodes)
            _report(self.budget, **payload)
        elif kind == "result":
            self.result = payload
        elif kind == "error":
            raise payload

    def raw(self, began: float) -> dict:
        """The backend's answer: the child's result, else what it had streamed when stopped."""
        transfer = (self.ready or time.monotonic()) - began  # start-up and hand-off of the form
        if self.result is not None:
            return {**self.result, "handoff": self.result["handoff"] + transfer}
        assert self.stopped is not None, "the wait ends with a result or a reason to stop"
        termination, message = self.stopped
        return dict(termination=termination, values=self.values, bound=self.bound, handoff=transfer,
                    message=message, nodes=self.nodes)


class _Child:
    """A solver process in its own session with a pipe each way; on leaving the block it is
    killed if still running and reaped, and the pipes are closed, whatever happened."""

    def __enter__(self) -> _Child:
        to_child, from_child = os.pipe(), os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ENTRY, json.dumps(sys.path), str(os.getpid()), str(to_child[0]),
                 str(from_child[1])], pass_fds=(to_child[0], from_child[1]), stdin=subprocess.DEVNULL,
                start_new_session=True)  # signals to odtk's process group are odtk's to handle
        except BaseException:
            for fd in (*to_child, *from_child):
                os.close(fd)
            raise
        os.close(to_child[0])
        os.close(from_child[1])
        self.outbox = Connection(to_child[1], readable=False)
        self.inbox = Connection(from_child[0], writable=False)
        return self

    def __exit__(self, *exc_info) -> None:
        self.kill()
        self.outbox.close()
        self.inbox.close()

    def send(self, request: tuple) -> None:
        try:
            self.outbox.send(request)
        except BrokenPipeError:
            pass  # the child died at start: its end is read as such

    def read(self, take: Callable[[str, Any], None], timeout: float) -> bool:
        """Pass the messages that arrive within ``timeout`` (and all then waiting) to ``take``;
        False once the child's end of the pipe is closed."""
        try:
            while self.inbox.poll(timeout):
                take(*self.inbox.recv())
                timeout = 0
        except (EOFError, OSError):
            return False
        return True

    def end(self, take: Callable[[str, Any], None]) -> None:
        """Kill the child and pass on the messages it had written before."""
        self.kill()
        self.read(take, 0)

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)  # not yet reaped: the group is still its own
        self.process.wait()

    def cause(self) -> str:
        code = self.process.wait()
        return f"exit code {code}" if code >= 0 else f"killed by {signal.Signals(-code).name}"


def after_handoff(options: SolverOptions, seconds: float) -> SolverOptions:
    """``options`` for the solver once the hand-off took ``seconds``: under a budget (which covers
    everything) they come off the time limit; a bare time limit is the solver's own."""
    if options.budget is None or options.time_limit is None:
        return options
    return replace(options, time_limit=max(options.time_limit - seconds, 0.0))


def _report(budget: Any, **fields: Any) -> None:
    if budget is not None:
        budget.report(**fields)


# --------------------------------------------------------------------------- the child
def serve() -> None:
    """The child's entry point: ``argv`` holds the parent's pid and the two pipes' descriptors."""
    parent, inbox_fd, outbox_fd = (int(arg) for arg in sys.argv[2:5])
    _die_with(parent)
    stream = _Stream(Connection(outbox_fd, readable=False))
    try:
        inbox = Connection(inbox_fd, writable=False)
        module, form, spec, options, limit = inbox.recv()
        threading.Thread(target=_exit_at_end_of, args=(inbox,), daemon=True).start()
        stream.send("ready", None)
        form.on_solution = stream.incumbent
        options = replace(options, budget=stream,
                          time_limit=None if limit is None else max(limit - time.monotonic(), 0.0))
        result = importlib.import_module(module).solve(form, spec, options)
        _flush_output()  # the solver's log is complete before the parent, told, ends this process
        stream.send("result", result)
    except BaseException as exc:  # noqa: BLE001 - raised again in the parent
        _flush_output()
        stream.send("error", _portable(exc))
    finally:
        os._exit(0)  # without waiting for the solver's threads


def _flush_output() -> None:
    """Flush Python's and the C library's buffered output (a solver's log to a pipe or file)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if sys.platform != "win32":
        import ctypes

        ctypes.CDLL(None).fflush(None)


def _die_with(parent: int) -> None:
    """End this process when the parent ends: the kernel's parent-death signal on Linux (the
    end of the pipe, :func:`_exit_at_end_of`, everywhere)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before
        os._exit(1)


def _exit_at_end_of(inbox: Connection) -> None:
    """Wait for the parent's end of the pipe to close (the parent is gone): then exit at once."""
    with contextlib.suppress(EOFError, OSError):
        while True:
            inbox.recv()
    os._exit(1)


def _portable(exc: BaseException) -> BaseException:
    """``exc``, or a RuntimeError saying what it was when it cannot be pickled."""
    import pickle

    try:
        pickle.dumps(exc)
        return exc
    except Exception:  # noqa: BLE001 - any failure to pickle
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class _Stream:
    """The child's stand-in for the solve's budget: reports and solutions go to the parent, which
    decides when to stop (by ending this process)."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.lock = threading.Lock()  # solver callbacks may come from several threads

    def send(self, kind: str, payload: Any) -> None:
        try:
            with self.lock:
                self.connection.send((kind, payload))
        except OSError:  # the parent is gone
            os._exit(1)

    def incumbent(self, values: np.ndarray) -> None:
        self.send("incumbent", values)

    def report(self, **fields: Any) -> None:
        """Progress without the incumbent: the parent shows the objective of the solutions it
        receives, so the line never shows one a stop would lose."""
        fields.pop("incumbent", None)
        self.send("progress", fields)

    def should_stop(self) -> bool:
        return False

    def waiting(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()


# --------------------------------------------------------------------------- in this process
class Watch:
    """What a solver's callbacks consult in this process: whether to stop (the budget's stop
    rule; without a budget, Ctrl-C in the main thread), and where progress goes."""

    def __init__(self, budget: Any):
        self.budget = budget
        self.raised: BaseException | None = None  # raised in a callback, raised again after the solve
        self.pressed = False  # Ctrl-C without a budget
        self._reported = -math.inf

    def should_stop(self) -> bool:
        return (self.pressed or self.raised is not None
                or (self.budget is not None and self.budget.should_stop()))

    def report(self, force: bool = False, **fields: float | None) -> None:
        """Pass the finite ``fields`` to the budget, at most once per :data:`REPORT_SECONDS`
        unless ``force`` (a new incumbent)."""
        now = time.monotonic()
        if self.budget is None or not (force or now - self._reported >= REPORT_SECONDS):
            return
        self._reported = now
        self.budget.report(**{k: v for k, v in fields.items() if v is not None and math.isfinite(v)})

    def call(self, callback: Callable, *args: Any) -> bool:
        """``callback(*args)`` from inside the solver, which an exception must not cross (it is
        kept and raised once the solver has returned); True when the solver should stop."""
        try:
            callback(*args)
        except BaseException as exc:  # noqa: BLE001 - raised again by running()
            if self.raised is None:
                self.raised = exc
        return self.should_stop()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """While the solver runs: a signal only marks the budget (``budget.waiting()``), or,
        without a budget, Ctrl-C in the main thread marks this watch; an exception kept by
        :meth:`call` is raised after."""
        with self._signals():
            yield
        if self.raised is not None:
            raise self.raised

    def _signals(self) -> contextlib.AbstractContextManager:
        if self.budget is not None:
            return self.budget.waiting()
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            return contextlib.nullcontext()  # only the main thread sees signals; keep another handler
        return _handled(signal.SIGINT, lambda signum, frame: setattr(self, "pressed", True))


@contextlib.contextmanager
def _handled(signum: int, handler: Callable) -> Iterator[None]:
    previous = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, previous)
