"""Stop ``odtk solve`` with a signal in a chosen phase and record how it ends.

Shared by ``tests/test_signals.py`` (which asserts what a user is promised: the exit code, the
best model printed and saved, no process and no temporary file left) and
``benchmarks/defaults.py --signals`` (which prints the seconds from the signal to the exit).

A run starts ``python -m odtk solve ARGS --progress --output model.json`` in a session of its
own, with ``TMPDIR`` naming an empty folder and a variable ``ODTK_SIGNAL_RUN`` naming the run,
so that every process it starts can be found afterwards (by its session, or by that variable in
its environment when it started a session of its own); it reads the status line on standard error until the line
shows the phase, sends the signal (SIGINT to the process group, as a terminal's Ctrl-C does;
SIGTERM and SIGHUP to odtk alone, as ``kill`` does) and waits for the exit.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
# the phases in the order a solve goes through them (those of a step together: the solve step
# shows "solving" before and after its "hand-off")
PHASES = (("reading",), ("encoding",), ("starting tree",), ("heuristic",), ("building",),
          ("hand-off", "solving", "searching"), ("checking",), ("stopping",))
HANG_STOP = 60.0  # seconds: a run still alive after this is killed and reported as hung
IGNORED_PAUSE = 1.0  # seconds between the ignored SIGINT and the SIGTERM that must stop the run
BIG_ROWS, BIG_COLUMNS = 100_000, 50
BIG = "<100,000-row CSV>"  # stands in a case's arguments for the CSV that :func:`big_csv` writes
DEEP_ROWS, DEEP_SEED = 300, 65
DEEP = "<300-row CSV of a deep CART>"  # ... for the CSV that :func:`deep_cart_csv` writes
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclasses.dataclass(frozen=True)
class Case:
    """One phase of one solve to interrupt.

    ``solver`` names the solver (``-``: none) or what of it the case exercises; ``args`` follow
    ``odtk solve``; ``model`` says whether a model must be printed (True), must not be (False:
    none can exist yet) or may be (None: one may, depending on timing); ``signal`` is the one
    the tests send (the benchmark sends each); ``delay`` the seconds the status line must have
    shown the phase before the signal.
    """

    phase: str
    solver: str
    args: tuple[str, ...]
    model: bool | None
    signal: str = "SIGINT"
    delay: float = 0.5

    @property
    def name(self) -> str:
        return f"{self.phase}-{self.solver}".replace(" ", "-")


SAT_DEPTH = Case("searching", "sat-depth", ("--model", "sat-depth", "--csv", DEEP, "--target", "label",
                                           "--time-limit", "none"), True, "SIGTERM", delay=1.0)


@dataclasses.dataclass
class Outcome:
    """How one interrupted run ended."""

    returncode: int | None
    stdout: str
    stderr: str
    phases: list[str]
    phase_at_signal: str | None  # None: the run never showed the phase
    seconds: float | None  # from the (last) signal to the exit
    hung: bool
    leftover: list[str]  # processes of the run's session alive after it ended: "pid name"
    temporary: list[str]  # files and folders left in its TMPDIR
    saved: dict | None  # the --output file, if written

    @property
    def messages(self) -> list[str]:
        """Standard error without the status line: odtk's one-line messages."""
        return [seg for seg in _segments(self.stderr) if not _is_status(seg)]


def big_csv(folder: Path) -> Path:
    """A CSV of 100,000 rows × 50 float columns and a text label, written once into ``folder``
    (a 10,000-row block repeated, so writing it is quick; reading it parses every row)."""
    path = folder / f"rows{BIG_ROWS}.csv"
    if path.exists():
        return path
    rng = np.random.default_rng(0)
    block = pd.DataFrame(rng.normal(size=(BIG_ROWS // 10, BIG_COLUMNS)).round(4) + 0.0,  # no "-0.0" beside "0.0"
                         columns=[f"x{i}" for i in range(BIG_COLUMNS)])
    block["label"] = np.where(block["x0"] + block["x1"] * block["x2"] > 0.3, "yes", "no")
    text = block.to_csv(index=False)
    header, body = text.split("\n", 1)
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(header + "\n" + body * 10)
    partial.replace(path)
    return path


def deep_cart_csv(folder: Path) -> Path:
    """A CSV of 300 rows × 6 random float columns (four decimals) and random 0/1 labels (seed 65),
    written once into ``folder``: by every midpoint 1,771 binary columns, on which the grown CART
    that starts the SAT models is 25 deep (they once padded it to a perfect tree of 2^26 nodes as
    their search ended, for minutes, whatever the time limit or a signal said)."""
    path = folder / f"deep-cart{DEEP_ROWS}.csv"
    if path.exists():
        return path
    rng = np.random.default_rng(DEEP_SEED)
    frame = pd.DataFrame(rng.random((DEEP_ROWS, 6)).round(4), columns=[f"x{i}" for i in range(6)])
    folder.mkdir(parents=True, exist_ok=True)
    frame.assign(label=rng.integers(0, 2, DEEP_ROWS)).to_csv(path, index=False)
    return path


def cases(solvers: list[str]) -> list[Case]:
    """The phases interrupted, for each installed solver in ``solvers``.

    Each instance makes its phase last several seconds: a 100,000-row CSV for reading and
    encoding, FlowOCT at depth 3 on ionosphere's 445 binary features for the starting trees, ODD
    with skeleton 1-2-4-8 for the heuristic, build and hand-off (both through Pyomo: the compiled
    build takes a second at most, the native hand-off copies its form), HiGHS's presolve on ODD with
    iris, FlowOCT at depth 3 on 306 numeric rows for the solvers' searches, BendersOCT at depth 3
    on monk2 for Gurobi and CPLEX (within their free licences), the CP search at depth 5, the
    SAT model's calls and ``sat-depth`` on :func:`deep_cart_csv`.
    """
    big = ("--csv", BIG, "--target", "label")
    odd_build = ("--model", "odd", "--dataset", "uci/banknote-authentication", "--skeleton", "1-2-4-8")
    flow = ("--model", "flowoct", "--dataset", "uci/habermans-survival", "--depth", "3")
    rotate = iter(SIGNALS * 10)
    found = [
        Case("reading", "-", ("--model", "cp", "--depth", "3", *big), False, next(rotate)),
        Case("encoding", "-", ("--model", "cp", "--depth", "3", *big), False, next(rotate)),
        Case("starting tree", "highs", ("--model", "flowoct", "--dataset", "binary/ionosphere", "--depth", "3",
                                        "--solver", "highs"), None, next(rotate)),
        Case("heuristic", "highs", ("--model", "odd", "--dataset", "uci/iris", "--skeleton", "1-2-4-8",
                                    "--solver", "highs"), None, next(rotate)),
        Case("building", "highs", (*odd_build, "--solver", "highs", "--handoff", "pyomo"), True, next(rotate)),
        Case("searching", "cp", ("--model", "cp", "--dataset", "uci/ozone-eighthr", "--depth", "5"), True,
             next(rotate), delay=1.0),
        Case("searching", "minisat22", ("--model", "sat-size", "--dataset", "flowoct/monk2"), True,
             next(rotate), delay=1.0),
        SAT_DEPTH,
    ]
    for solver in [s for s in ("highs", "cbc", "scip") if s in solvers]:
        found += [Case("hand-off", solver, (*odd_build, "--solver", solver, "--handoff", "pyomo"), True,
                       next(rotate)),
                  Case("solving", solver, (*flow, "--solver", solver), True, next(rotate), delay=1.0)]
    if "highs" in solvers:  # HiGHS's presolve of a 40,000-row MILP, where it long did not look at signals
        found.append(Case("solving", "highs-presolve", ("--model", "odd", "--dataset", "uci/iris", "--skeleton",
                                                        "1-2-4-8", "--solver", "highs"), True, next(rotate),
                          delay=2.0))
    for solver in [s for s in ("gurobi", "cplex") if s in solvers]:
        found.append(Case("solving", solver, ("--model", "benders", "--dataset", "flowoct/monk2", "--depth", "3",
                                              "--solver", solver), True, next(rotate), delay=1.0))
    return found


def run(case: Case, workdir: Path, data: Path, signal_name: str | None = None, ignore_sigint: bool = False,
        command: list[str] | None = None) -> Outcome:
    """Start ``case`` in ``workdir`` (its CSV written into ``data`` once), send ``signal_name``
    (default: the case's) once the phase shows, and wait. ``command`` replaces the ``odtk solve``
    command line (a script calling ``odtk.solve`` with a status line, say).

    With ``ignore_sigint`` odtk starts with SIGINT ignored (as a shell starts a background job):
    it is sent SIGINT first, then, ``IGNORED_PAUSE`` seconds later, ``signal_name`` (give
    SIGTERM or SIGHUP), which must be the one that stops it.
    """
    name = signal_name or case.signal
    temp, output = workdir / "tmp", workdir / "model.json"
    temp.mkdir(parents=True)
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONUNBUFFERED": "1", "ODTK_SIGNAL_RUN": token}
    args = [str(big_csv(data)) if arg == BIG else str(deep_cart_csv(data)) if arg == DEEP else arg
            for arg in case.args]
    command = command or [sys.executable, "-m", "odtk", "solve", *args, "--progress", "--output", str(output)]
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    with open(workdir / "stdout.txt", "w+") as stdout:
        process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   cwd=workdir, env=env, start_new_session=True, preexec_fn=ignore)
        watcher = _StatusWatcher(process)
        try:
            at_signal, seconds, hung = _interrupt(process, watcher, case, name, ignore_sigint)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            watcher.join()
        stdout.seek(0)
        printed = stdout.read()
    return Outcome(process.returncode, printed, watcher.text(), watcher.phases, at_signal, seconds, hung,
                   _left_behind(process.pid, token), _files_under(temp),
                   json.loads(output.read_text()) if output.exists() else None)


def _interrupt(process: subprocess.Popen, watcher: _StatusWatcher, case: Case, name: str,
               ignore_sigint: bool) -> tuple[str | None, float | None, bool]:
    """Wait until the status line has shown the phase for ``case.delay`` seconds, signal, wait
    for the exit: (the phase at the signal, seconds to the exit, hung)."""
    if not _in_phase(process, watcher, case):
        return None, None, False
    at_signal = watcher.phase
    if ignore_sigint:
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(IGNORED_PAUSE)
    sent = time.monotonic()
    if name == "SIGINT":  # Ctrl-C on a terminal: the whole foreground process group
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(getattr(signal, name))
    try:
        process.wait(HANG_STOP)
    except subprocess.TimeoutExpired:
        return at_signal, None, True
    return at_signal, time.monotonic() - sent, False


def _in_phase(process: subprocess.Popen, watcher: _StatusWatcher, case: Case) -> bool:
    """Wait until the status line has shown ``case.phase`` for ``case.delay`` seconds in a row;
    False if the run ends, goes past the phase or ``HANG_STOP`` passes first."""
    began, since = time.monotonic(), None
    while process.poll() is None and time.monotonic() - began < HANG_STOP:
        if _past(watcher.phase, case.phase):
            return False
        if watcher.phase == case.phase:
            since = since or time.monotonic()
            if time.monotonic() - since >= case.delay:
                return True
        else:
            since = None
        time.sleep(0.05)
    return False


def _past(phase: str, target: str) -> bool:
    """Whether a solve showing ``phase`` has gone beyond the step of ``target`` (see PHASES)."""
    step = {name: rank for rank, names in enumerate(PHASES) for name in names}
    return phase in step and step[phase] > step[target]


class _StatusWatcher:
    """Reads a process's standard error in a thread and follows the phase its status line shows."""

    def __init__(self, process: subprocess.Popen):
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self.phase = ""
        self.phases: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        pending = ""
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            with self._lock:
                self._chunks.append(chunk)
            pending += chunk.decode("utf-8", "replace")
            *done, pending = re.split(r"[\r\n]", pending)
            for segment in (_ANSI.sub("", s).strip() for s in done + [pending]):
                if _is_status(segment):
                    self._follow(segment)
        stream.close()

    def _follow(self, status: str) -> None:
        phase = status[len("odtk "):].split("  ")[0].strip() if status.startswith("odtk ") else ""
        if re.fullmatch(r"\d+s( / \d+s)?", phase):  # no phase yet: "odtk  3s / 60s"
            phase = ""
        if phase != self.phase:
            self.phase = phase
            self.phases.append(phase)

    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    def join(self) -> None:
        self._thread.join(timeout=5)


def _segments(text: str) -> list[str]:
    return [s for s in (_ANSI.sub("", part).strip() for part in re.split(r"[\r\n]", text)) if s]


def _is_status(segment: str) -> bool:
    """A status line reads ``odtk <phase>  <elapsed>s …``; odtk's messages read ``odtk: …``."""
    return segment == "odtk" or segment.startswith("odtk ")


def _left_behind(session: int, token: str, grace: float = 3.0) -> list[str]:
    """Processes (not zombies) of a run still alive ``grace`` seconds after it ended: those of
    its session or process group, and those whose environment names it (``ODTK_SIGNAL_RUN``).
    None may be: a solver left behind runs on with nobody to stop it."""
    marker = f"ODTK_SIGNAL_RUN={token}".encode()
    until = time.monotonic() + grace
    while True:
        alive = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                environment = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            command, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z" and (session in (int(fields[2]), int(fields[3])) or marker in environment):
                alive.append(f"{entry.name} {command}")
        if not alive or time.monotonic() > until:
            return alive
        time.sleep(0.1)


def _files_under(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def termination(saved: dict) -> str | None:
    """The termination a saved model file records (its result's, or its summary's)."""
    for part in ("result", "summary"):
        if isinstance(saved.get(part), dict) and "termination" in saved[part]:
            return saved[part]["termination"]
    return None


def problems(outcome: Outcome, case: Case, name: str) -> list[str]:
    """How the run broke what a user is promised after signal ``name`` (empty: it did not):
    exit code 128 + the signal and one line ``odtk: interrupted by SIG…``; the best model
    printed (``status      interrupted``) and saved to ``--output`` marked interrupted, or
    nothing at all while no model exists; no process of its session and no temporary file left."""
    if outcome.phase_at_signal != case.phase:
        return [f"the status line never showed {case.phase!r} for {case.delay} s (phases shown: {outcome.phases})"]
    if outcome.hung:
        return [f"still running {HANG_STOP:.0f} s after {name}"]
    found = []
    if outcome.returncode != 128 + getattr(signal, name):
        found.append(f"exit code {outcome.returncode}, not {128 + getattr(signal, name)}")
    said = [line for line in outcome.messages if line.startswith("odtk: interrupted")]
    if [line.split(":")[1].split()[-1] for line in said] != [name]:
        found.append(f"not one line 'odtk: interrupted by {name}…' on stderr: {outcome.messages[-3:]}")
    if "Traceback" in outcome.stderr + outcome.stdout:
        found.append("a traceback was printed")
    printed = "status      interrupted" in outcome.stdout.splitlines()
    if case.model is not None and printed != case.model:
        found.append("no model printed marked interrupted" if case.model else "a model printed before one can exist")
    if not printed and outcome.stdout:
        found.append(f"stdout holds no model marked interrupted: {outcome.stdout[-300:]!r}")
    if printed and (outcome.saved is None or termination(outcome.saved) != "interrupted"):
        found.append("the model printed was not saved to --output marked interrupted")
    if not printed and outcome.saved is not None:
        found.append("a model file was saved although no model was printed")
    if outcome.leftover:
        found.append(f"processes left: {outcome.leftover}")
    if outcome.temporary:
        found.append(f"temporary files left: {outcome.temporary[:5]}")
    return found
