"""COIN-OR CBC (the binary shipped by cbcbox) on an MPS file written by HiGHS.

CBC runs as a child process in a temporary folder that is removed however the solve ends (a
result, an error, a signal). odtk reads CBC's log line by line as it comes: the incumbent, the
best possible bound and the node count go to the budget's progress (``budget.report``) and, with
``options.log``, every line to the log. Meanwhile odtk waits inside ``budget.waiting()``,
looking every :data:`~odtk.solvers.isolated.POLL` seconds at the budget's stop rule (a signal,
its deadline) and at the time limit plus :data:`~odtk.solvers.isolated.GRACE`. To stop CBC it
sends SIGINT, on which CBC ends its search within milliseconds and writes its best solution
(measured: cbcbox's CBC heads it "Stopped on iterations"; a SIGINT that comes before CBC's search
starts is lost, so it is sent again every POLL seconds), and kills a CBC that has not ended after
:data:`STOP_WAIT` seconds (its log's bound is kept). The solution is returned as
``interrupted`` (a signal) or ``time_limit``. CBC stays in odtk's process group (what ends the
group ends CBC), but while odtk catches SIGHUP CBC ignores it: a hang-up stops CBC through odtk,
which keeps its solution. CBC catches SIGINT even where it is ignored; where odtk ignores it (in
the background of a script) CBC runs in a session of its own, so that a Ctrl-C meant for the
script's foreground jobs does not stop it.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from odtk.exceptions import ConfigError, SolverUnavailableError
from odtk.solvers.highs import write_mps
from odtk.solvers.isolated import GRACE, POLL, Watch
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, parameter_error
from odtk.solvers.standard_form import FEASIBILITY_TOLERANCE, StandardForm, model_violation

BACKEND = "cbc"
# seconds CBC has, after the first SIGINT, to write its solution and end (it takes 0.2-0.5 s on a
# loaded 2-core machine; 1 s once ran out under a full test run's load, its solution lost)
STOP_WAIT = 5.0
PROBE_SECONDS = 5.0  # seconds CBC has to answer ``-quit`` (it takes milliseconds)
# CBC's reply to a parameter it does not have or a value it refuses, as it reads its command line
# (recent builds; CBC 2.10 says "No match for")
_COMPLAINT = re.compile(r"Unrecognized parameter|Illegal (?:parameter value|keyword)|was provided for .* valid "
                        r"range|Multiple matches for|No match for")
log = logging.getLogger(__name__)


def cbc_binary(spec: SolverSpec) -> str:
    """The CBC binary: the registry's ``executable``, else the one cbcbox ships. A user-named one
    that cannot run is a SolverUnavailableError (installing cbcbox would not help)."""
    if spec.executable:
        path = shutil.which(spec.executable)
        if path is None:
            raise SolverUnavailableError(f"the CBC binary {spec.executable} (the registry's executable) "
                                         f"{_unrunnable(Path(spec.executable))}")
        return path
    cbcbox = importlib.import_module("cbcbox")
    path = cbcbox.cbc_bin_path()
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError("the cbcbox package has no runnable CBC binary")
    return path


def _unrunnable(path: Path) -> str:
    """Why ``path``, which the search for a program did not find runnable, cannot be run."""
    if path.is_dir():
        return "is a folder, not a program; name the CBC binary itself"
    if path.exists():
        return "is not executable; make it so (chmod +x) or name another binary"
    where = "on the PATH" if os.sep not in str(path) else "there"
    return f"is missing (no such file {where}); correct the path in the solver registry"


def version(spec: SolverSpec) -> str:
    """The version CBC's banner gives (else the cbcbox package's); a CBC that does not answer
    ``-quit`` within :data:`PROBE_SECONDS` is a SolverUnavailableError."""
    binary = cbc_binary(spec)
    with subprocess.Popen([binary, "-quit"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True) as probe:
        try:
            stdout, _ = probe.communicate(timeout=PROBE_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(probe.pid, signal.SIGKILL)  # its children too, which may hold the pipe open
            probe.communicate()
            raise SolverUnavailableError(f"the CBC binary {binary} did not answer within {PROBE_SECONDS:g} s "
                                         "(asked for its version with -quit); check that the registry's "
                                         "executable is CBC") from None
    first = stdout.strip().splitlines()[0] if stdout.strip() else ""
    match = re.search(r"CBC\s+(.*?)\s+[—-]", first)
    return match.group(1) if match else importlib.metadata.version("cbcbox")


# the first line of CBC's solution file; after SIGINT cbcbox's CBC writes "Stopped on iterations"
_CBC_STATUS = {"Optimal": "optimal", "Stopped on time": "time_limit", "Infeasible": "infeasible",
               "Integer infeasible": "infeasible", "Stopped on ctrl-c": "interrupted",
               "Stopped on iterations": "interrupted"}
# the summary of CBC's log: why it stopped (a node limit, which its solution file heads "Stopped on
# iterations" as it does a SIGINT) and, when it stopped before proving optimality, its bound ("Lower
# bound:" when it minimises, "Upper bound:" when it maximises; in the objective's own sense)
_NODE_LIMIT = re.compile(r"^Result - Stopped on node limit", re.MULTILINE)
_STATED_BOUND = re.compile(r"^(?:Lower|Upper) bound:\s*(\S+)", re.MULTILINE)


def stated_node_limit(log: str) -> bool:
    """Whether CBC's log says it stopped at its node limit (``maxNodes``)."""
    return _NODE_LIMIT.search(log) is not None


def stated_bound(log: str) -> float | None:
    """The bound CBC's log states for a search it stopped before proving optimality, or None."""
    match = _STATED_BOUND.search(log)
    return None if match is None else _number(match.group(1))


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """CBC on an MPS file. Its preprocessing now and then returns a solution that violates the
    model ("possible tolerance issue" in its log): CBC then solves again without it, in the time
    left; a stopped solve keeps no such solution."""
    began = time.perf_counter()
    raw = _run_cbc(form, spec, options, preprocess=True)
    if raw["values"] is not None and model_violation(form, raw["values"]) > FEASIBILITY_TOLERANCE:
        if raw["termination"] in ("interrupted", "time_limit"):
            return {**raw, "values": None, "message": f"{raw['message']}; its solution violates the model"}
        log.info("CBC's solution violates the model; solving again without preprocessing")
        raw = _run_cbc(form, spec, options.less(time.perf_counter() - began), preprocess=False)
    return raw


def _run_cbc(form: StandardForm, spec: SolverSpec, options: SolverOptions, preprocess: bool) -> dict:
    binary = cbc_binary(spec)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="odtk-cbc-") as tmp:
        mps, sol = Path(tmp, "model.mps"), Path(tmp, "model.sol")
        write_mps(form, str(mps), minimize_only=True)  # CBC reads MPS as minimisation
        handoff = time.perf_counter() - start
        options = options.less(handoff)  # the hand-off counts against the limit
        args = [binary, str(mps)]
        given = options.native(spec, fit)
        for key, value in given.items():
            args += [f"-{key}", str(value)]
        args += _cbc_start_and_cutoff(form, Path(tmp))
        args += [] if preprocess else ["-preprocess", "off"]
        args += ["-solve", "-solu", str(sol)]
        run = _CbcRun(form, options)
        returncode = run.run(args)
        if run.complaint is not None:
            raise _refused(spec, given, run.complaint)
        if run.stopped is not None:
            return run.stopped_outcome(sol, form, handoff)
        if returncode != 0 or not sol.exists():
            return dict(termination="error", values=None, bound=run.progress.bound, handoff=handoff,
                        message=_cbc_failure(returncode, run.lines))
        return _cbc_outcome(sol.read_text(errors="replace"), run.stdout, form, handoff)


class _CbcRun:
    """One CBC process: started, its log followed, waited for, and stopped when the budget says so
    or the time limit plus GRACE has passed (:attr:`stopped`: "interrupted" or "time_limit")."""

    def __init__(self, form: StandardForm, options: SolverOptions):
        self.watch = Watch(options.budget)
        self.show = options.log
        self.limit = None if options.time_limit is None else time.monotonic() + options.time_limit + GRACE
        self.progress = CbcLog(form.maximize)
        self.lines: list[str] = []
        self.stopped: str | None = None
        self.complaint: str | None = None  # CBC's reply refusing a parameter: it is stopped at once

    @property
    def stdout(self) -> str:
        return "".join(self.lines)

    def run(self, args: list[str]) -> int:
        """Run CBC with ``args`` to its end or to a stop; its exit code."""
        # CBC stops on SIGINT even where it is ignored: where this process ignores it, CBC runs in a
        # session of its own, out of reach of a Ctrl-C to the process group
        apart = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        process = subprocess.Popen(_hangup_ignored(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, encoding="utf-8", errors="replace",
                                   start_new_session=apart)
        reader = threading.Thread(target=self._follow, args=(process.stdout,), name="odtk-cbc-log", daemon=True)
        try:
            reader.start()
            with self.watch.running():
                self.stopped = self._wait(process)
                if self.stopped is not None:
                    _end(process)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            reader.join()
            if process.stdout is not None:  # a pipe: always, as Popen was asked for one
                process.stdout.close()
        if process.returncode < 0 and self.stopped is None:  # a signal to the process group
            self.stopped = self._reason()
        return process.returncode

    def _wait(self, process: subprocess.Popen) -> str | None:
        """Wait for CBC's end (None) or a reason to stop it."""
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(POLL)
                return None
            reason = self._reason()
            if reason is not None:
                return reason

    def _reason(self) -> str | None:
        """Why CBC must stop now: "refused" (it refused a parameter), "interrupted" (a signal),
        "time_limit" (the budget's deadline, or the time limit plus GRACE), else None."""
        if self.complaint is not None:
            return "refused"
        if self.watch.should_stop():
            budget = self.watch.budget
            return "interrupted" if self.watch.pressed or budget.stop_requested else "time_limit"
        if self.limit is not None and time.monotonic() >= self.limit:
            return "time_limit"
        return None

    def _follow(self, stream: IO[str]) -> None:
        """Read CBC's log to its end: keep it, report its progress, show it with ``options.log``."""
        for line in stream:
            self.lines.append(line)
            if self.complaint is None and _COMPLAINT.search(line):
                self.complaint = line.strip()
            if self.show:
                log.info(line.rstrip("\n"))
            if self.progress.read(line):
                self.watch.report(force=self.progress.improved, incumbent=self.progress.incumbent,
                                  bound=self.progress.bound, nodes=self.progress.nodes)

    def stopped_outcome(self, sol: Path, form: StandardForm, handoff: float) -> dict:
        """What a CBC that odtk stopped leaves: its solution file if it wrote one (read as CBC's
        result, under odtk's termination), else the bound and nodes of its log."""
        assert self.stopped is not None, "called once the run was stopped"
        reason = {"interrupted": f"stopped by {self._signal_name()}",
                  "time_limit": "stopped at the time limit"}[self.stopped]
        text = sol.read_text(errors="replace") if sol.exists() else ""
        raw = _cbc_outcome(text, self.stdout, form, handoff) if text.strip() else None
        if raw is None or raw["termination"] == "error":
            return dict(termination=self.stopped, values=None, bound=self.progress.bound, handoff=handoff,
                        message=f"CBC {reason} before it wrote a solution", nodes=self.progress.nodes)
        bound = raw["bound"] if raw["bound"] is not None else self.progress.bound
        return {**raw, "termination": self.stopped, "bound": bound, "message": f"CBC {reason}: {raw['message']}",
                "nodes": raw["nodes"] if raw["nodes"] is not None else self.progress.nodes}

    def _signal_name(self) -> str:
        budget = self.watch.budget
        return signal.Signals(budget.signal).name if budget is not None and budget.signal else "SIGINT"


def fit(option: str, value: Any) -> Any:
    """An option's value as CBC takes it: its log stays on (level 1), since CBC reports its bound
    and node count only in its log; odtk shows the log with ``options.log``."""
    return 1 if option == "log" else value


def _refused(spec: SolverSpec, given: dict[str, Any], complaint: str) -> Exception:
    """The one-line error for CBC's ``complaint`` about one of the parameters ``given``: the one
    it names (by name or value), else all of them."""
    named = [key for key in given if re.search(rf"\b{re.escape(key)}\b", complaint)] or [
        key for key, value in given.items() if re.search(rf"(?<!\S){re.escape(str(value))}\b", complaint)]
    if len(named) == 1:
        return parameter_error(spec, named[0], given[named[0]], f"CBC says {complaint!r}")
    listed = " ".join(f"-{key} {value}" for key, value in given.items())
    return ConfigError(f"{spec.name} refuses one of its parameters ({listed}): CBC says {complaint!r}; correct "
                       "it in the solver registry (solvers.yaml, or the file $ODTK_SOLVERS names).")


def _hangup_ignored(args: list[str]) -> list[str]:
    """``args`` run so that CBC ignores SIGHUP while this process catches it (it then stops CBC
    itself and keeps its solution); where this process would die of it, CBC does too."""
    handler = signal.getsignal(signal.SIGHUP) if hasattr(signal, "SIGHUP") else None
    if not callable(handler):
        return args
    return ["/bin/sh", "-c", 'trap "" HUP; exec "$0" "$@"', *args]


def _end(process: subprocess.Popen) -> None:
    """Ask CBC to stop with SIGINT (again every POLL seconds: one sent before its search starts is
    lost); kill it if it has not ended within STOP_WAIT seconds."""
    deadline = time.monotonic() + STOP_WAIT
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(POLL)
    if process.poll() is None:
        process.kill()


class CbcLog:
    """The progress in CBC's log lines: incumbent, best possible bound and nodes, in the model's
    own sense (CBC minimises, odtk negates a maximisation). Reads the tabular log of recent CBC
    builds (the branch-and-bound table, the root's heuristics and LP) and the ``Cbc0010I`` /
    ``Cbc0012I`` messages of CBC 2.10."""

    _LINES = (  # CBC 2.10's messages, then the recent builds' root summaries
        (re.compile(r"Cbc0010I After (\d+) nodes, \d+ on tree, (\S+) best solution, best possible (\S+)"),
         ("nodes", "incumbent", "bound")),
        (re.compile(r"Cbc00(?:12|04)I Integer solution of (\S+) found"), ("incumbent",)),
        (re.compile(r"Cbc0005I Partial search - best objective (\S+) \(best possible (\S+)\)"), ("incumbent", "bound")),
        (re.compile(r"^✔ (?:Feasibility pump|Root node heuristics) — best (\S+) in"), ("incumbent",)),
        (re.compile(r"^✔ LP Optimal — .*Obj: (\S+)"), ("bound",)),
    )
    _TABLE = re.compile(r"^\s*(?:★\s+)?(\d+)\s+\d+\s+\d+\s+(\S+)\s.*?(\S+)\s+(?:\S+%|—)\s+[\d.]+\s*$")

    def __init__(self, maximize: bool):
        self.sign = -1.0 if maximize else 1.0
        self.incumbent: float | None = None
        self.bound: float | None = None
        self.nodes: int | None = None
        self.improved = False
        self._in_tree = False

    def read(self, line: str) -> bool:
        """Take one log line; True when it holds figures (:attr:`improved`: a new incumbent)."""
        if line.startswith("▶ "):
            self._in_tree = line.startswith("▶ Branch and bound")
        found = self._table_row(line) if self._in_tree else None
        for pattern, names in self._LINES if found is None else ():
            match = pattern.search(line)
            if match:
                found = dict(zip(names, match.groups()))
                break
        if not found:
            return False
        return self._take(found)

    def _table_row(self, line: str) -> dict | None:
        match = self._TABLE.match(line)
        return None if match is None else dict(zip(("nodes", "incumbent", "bound"), match.groups()))

    def _take(self, found: dict[str, str]) -> bool:
        before = self.incumbent
        if "nodes" in found:
            self.nodes = int(found["nodes"])
        for name in ("incumbent", "bound"):
            value = _number(found.get(name))
            if value is not None:
                setattr(self, name, self.sign * value)
        self.improved = self.incumbent != before
        return True


def _number(text: str | None) -> float | None:
    """A finite objective value of CBC's log (None for a dash, an infinity or CBC's 1e50)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) < 1e20 else None


def _cbc_failure(returncode: int, lines: list[str]) -> str:
    """Why CBC left no solution file: the signal that killed it, or its exit code and last words."""
    if returncode < 0:
        try:
            cause = signal.Signals(-returncode).name
        except ValueError:
            cause = f"signal {-returncode}"
        return f"the CBC process was killed by {cause}"
    tail = [line.strip() for line in lines if line.strip()][-1:] or ["no output"]
    return f"CBC exited with code {returncode}: {tail[0]}"


def _cbc_start_and_cutoff(form: StandardForm, folder: Path) -> list[str]:
    """CBC arguments for a warm start (a solution file) and a cutoff, in its minimisation terms."""
    args = []
    sign = -1.0 if form.maximize else 1.0
    if form.start is not None:
        known = np.flatnonzero(~np.isnan(form.start))
        lines = [f"{j} c{j} {form.start[j]:.12g}" for j in known]
        start = folder / "start.sol"
        start.write_text("Stopped on iterations - objective value 0\n" + "\n".join(lines) + "\n")
        args += ["-mipStart", str(start)]
    if form.cutoff is not None:
        args += ["-cutoff", repr(sign * form.cutoff)]
    return args


def _cbc_outcome(solution: str, stdout: str, form: StandardForm, handoff: float) -> dict:
    lines = solution.splitlines()
    if not lines:
        return dict(termination="error", values=None, bound=None, handoff=handoff,
                    message="CBC wrote an empty solution file")
    head = lines[0]
    state = head.split(" - ")[0].strip()
    termination = next((v for k, v in _CBC_STATUS.items() if state.startswith(k)), "error")
    if termination == "interrupted" and stated_node_limit(stdout):  # a stop odtk makes: see stopped_outcome
        termination = "node_limit"
    sign = -1.0 if form.maximize else 1.0
    values = None
    # "Stopped on time (... no integer solution ...)": the values are a relaxation, not a solution
    if ("objective value" in head and "no integer solution" not in head
            and termination in ("optimal", "time_limit", "node_limit", "interrupted")):
        values = _cbc_values(lines, form)
        if values is None:
            return dict(termination="error", values=None, bound=None, handoff=handoff,
                        message=f"CBC's solution file is damaged: its values do not give the "
                                f"objective of its first line {head[:80]!r}")
    bound = None
    printed = stated_bound(stdout)  # "Lower bound:", as CBC minimises the file
    if printed is not None:
        bound = sign * printed  # CBC's objective includes the MPS offset
    elif termination == "optimal" and values is not None:
        bound = float(form.c @ values + form.offset)
    nodes = re.search(r"Enumerated nodes:\s*(\d+)", stdout)
    message = head if termination != "error" else f"CBC's solution file reads {head[:80]!r}"
    return dict(termination=termination, values=values, bound=bound, handoff=handoff, message=message,
                nodes=int(nodes.group(1)) if nodes else None)


def _cbc_values(lines: list[str], form: StandardForm) -> np.ndarray | None:
    """The values of a CBC solution file (nonzero columns as ``index name value``), or None when
    a line does not parse or the values do not give the objective its first line reports."""
    values = np.zeros(len(form.c))
    try:
        reported = float(lines[0].split()[-1])
        for line in lines[1:]:
            parts = line.split()
            if len(parts) >= 3 and parts[0].isdigit():
                values[int(parts[0])] = float(parts[2])
    except (ValueError, IndexError):
        return None
    sign = -1.0 if form.maximize else 1.0  # CBC minimises; its objective includes the MPS offset
    scale = 1.0 + float(np.abs(form.c) @ np.abs(values))  # the file rounds values to 8 digits
    return values if abs(sign * reported - float(form.c @ values + form.offset)) <= 1e-6 * scale else None

