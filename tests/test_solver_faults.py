"""Solver faults through ``odtk solve``: a one-line message naming the problem and its fix, exit
code 1 (130 for Ctrl-C), and no trace in the files asked for. Every run asks for a new --output
file and, with --force, a --dot file that exists already: a fault must leave no file behind and
the existing one byte for byte as it was.

The catalogue; each case runs on every installed solver it applies to.

1. Time limit.
   a. No incumbent: "no feasible solution within the time limit", "raise --time-limit".
      test_time_limit_without_an_incumbent
   b. An incumbent: the result says time_limit, with a bound, a gap and a "not proven optimal"
      warning; the command exits 0, prints the status and the gap, and saves the model (on
      HiGHS only: what it prints does not depend on the solver).
      test_time_limit_with_an_incumbent_returns_it_with_its_gap,
      test_cli_saves_a_time_limited_incumbent
2. Licence size limit (Gurobi and CPLEX pip licences).
   a. A model over the registry's size_limit is refused before solving, naming the limit, a
      full licence and --solver highs.
      test_model_over_the_registered_licence_limit; also (API only)
      test_flowoct.py::test_instance_over_a_free_licence_gives_one_line
   b. The licence itself refuses the model (the registry's limit above the licence's, or none
      registered), through either hand-off.
      test_licence_refusing_the_model
3. Missing solver: a CBC ``executable`` that does not exist and a Python package that does not
   import ("not available", the install command; ``odtk solvers`` lists them as missing), a name
   not in the registry (the known names).
   test_missing_solver; also test_cli.py::test_solver_not_installed,
   test_api.py::test_missing_solver_says_how_to_install, test_cli.py::test_bad_solve_arguments
4. The solver process fails (CBC, the solver run as a separate process).
   a. A real CBC killed mid-solve (SIGKILL from outside): named, and its temporary folder gone.
      test_cbc_killed_mid_solve
   b. CBC dying of a signal: test_cbc_dying_of_a_signal (SIGKILL, SIGTERM); SIGSEGV and a hanging
      CBC in campaigns: test_experiments.py::test_crashing_and_hanging_solvers_fail_their_runs_only
   c. CBC exiting 0 with an empty, garbage, unreadable or truncated solution file: refused,
      never decoded into a model. test_damaged_cbc_solution_file
5. Infeasible side constraints: "infeasible", every constraint set, "relax". ODD min_samples
   above the number of samples, alone and with max_nodes and fairness (the default strategy:
   the heuristic's diagram breaks them, so the MILP runs without its start); categorical
   min_rate out of reach. ODD max_nodes with fairness alone is never infeasible: the root alone
   with one class on both sides meets both.
   test_infeasible_side_constraints; also (API)
   test_odd_api.py::test_more_samples_per_node_than_samples_is_a_one_line_solve_error,
   test_categorical.py::test_unattainable_rate_is_a_solve_error_naming_min_rate
6. Ctrl-C during the solve (SIGINT to the process group, as a terminal sends it): the solver
   stops on it (the solve ends as interrupted, its best model shown), "odtk: interrupted by SIGINT",
   exit 130, no temporary file left.
   test_ctrl_c_during_the_solve
7. SIGTERM to odtk alone during a CBC solve: "odtk: interrupted by SIGTERM", exit 143, CBC stopped with
   odtk, no temporary file left.
   test_sigterm_during_a_cbc_solve_stops_cbc_and_removes_its_files

The tests assert what happened, never how long it took; HANG_STOP only stops a test that hangs.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

import odtk
from odtk.cli import main
from odtk.exceptions import SelfCheckError
from odtk.solvers import get_spec, registry, solver_status

from fake_solvers import bundled_entries, fake_cbc, fake_registry, write_registry
from test_categorical import COLOUR_SIZE, POS
from test_odd_api import _fair_frame

KEPT = b"digraph kept {}\n"  # the --dot file that exists before each run
# every solver finds a tree at once, and needs seconds (HiGHS and CBC minutes) to prove one optimal
LONG = ["--model", "binoct", "--dataset", "flowoct/monk2", "--depth", "2"]
# every split must send 20 samples each way: HiGHS and CBC need over a second for a first point;
# built through Pyomo, whose build outlasts 0.01 s (the compiled build can take less)
SPLIT_20_20 = ["--model", "odd", "--dataset", "flowoct/monk1", "--skeleton", "1-2", "--strategy", "milp",
               "--min-samples", "20", "--handoff", "pyomo"]
# Gurobi and CPLEX find a first point of any model their free licences take within milliseconds:
# only a zero time limit stops them before their first heuristic
NO_INCUMBENT = {"highs": (SPLIT_20_20, "0.01"), "cbc": (SPLIT_20_20, "0.01"),
                "gurobi": (LONG, "0.01"), "cplex": (LONG, "0.01"), "scip": (LONG, "0.01")}
OVER_LICENCE = ["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "2"]  # 1802 variables

needs_cbc = pytest.mark.skipif(not solver_status("cbc").available,
                               reason=f"cbc not installed: {solver_status('cbc').detail}")
HANG_STOP = 600  # s: only reached when an awaited event never comes (a hung test)


# --------------------------------------------------------------------------- helpers
@pytest.fixture
def out(tmp_path) -> Path:
    """The folder the runs save into, holding the existing --dot file only."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "m.dot").write_bytes(KEPT)
    return folder


@pytest.fixture
def use_registry(monkeypatch):
    """Switch to another solver registry file, as ``$ODTK_SOLVERS`` does, forgetting what was probed."""
    def use(path: Path) -> None:
        monkeypatch.setenv("ODTK_SOLVERS", str(path))
        registry.cache_clear()
        solver_status.cache_clear()

    yield use
    monkeypatch.undo()
    registry.cache_clear()
    solver_status.cache_clear()


def saving(out: Path) -> list[str]:
    return ["--output", str(out / "m.json"), "--dot", str(out / "m.dot"), "--force"]


def odtk_solve(out: Path, *args: str) -> Result:
    """``odtk solve ARGS --output m.json --dot m.dot --force`` with both files in ``out``."""
    return CliRunner().invoke(main, ["solve", *args, *saving(out)])


def assert_untouched(out: Path) -> None:
    assert sorted(os.listdir(out)) == ["m.dot"], "a file was left behind"
    assert (out / "m.dot").read_bytes() == KEPT, "the existing file was changed"


def assert_start_returned(run: Result, out: Path, *words: str) -> None:
    """The solver failed without a solution: exit 0, the starting tree shown and saved with
    status error, and one warning line naming ``words``."""
    assert run.exit_code == 0, run.output
    assert "status      error" in run.stdout and "step        warm_start" in run.stdout, run.stdout
    warning = [line for line in run.stderr.strip().splitlines() if "stopped without a solution" in line]
    assert len(warning) == 1 and warning[0].startswith("odtk: warning: "), run.stderr
    for word in words:
        assert word in warning[0], (word, warning[0])
    assert json.loads((out / "m.json").read_text())["summary"]["termination"] == "error"


def assert_fault(run: Result, out: Path, *words: str) -> None:
    """Exit code 1 and one line on stderr naming ``words``; no file written, none changed."""
    assert run.exit_code == 1 and isinstance(run.exception, SystemExit), run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odtk: error: "), run.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert_untouched(out)


def size_limited(name: str) -> None:
    """Skip unless solver ``name`` runs under a size-limited licence."""
    status = solver_status(name)
    if status.licence != "size-limited":
        pytest.skip(f"{name}: {status.licence} licence ({status.detail})")


def real_cbc_announcing_its_pid(folder: Path) -> tuple[Path, Path]:
    """A CBC that writes its process id to a file, then is the real CBC (same process)."""
    import cbcbox

    pid_file = folder / "cbc.pid"
    script = fake_cbc(folder / "cbc", f'echo $$ > "{pid_file}"\nexec "{cbcbox.cbc_bin_path()}" "$@"')
    return script, pid_file


def wait_for(ready, alive, what: str, timeout: float = HANG_STOP) -> None:
    """Wait until ``ready()``, failing if ``alive()`` turns false first (``timeout`` s only stop a
    hung test)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert alive() and time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)


# --------------------------------------------------------------------------- 1. time limit
def test_time_limit_without_an_incumbent_still_answers(solver, out):
    """No start asked for and no time to find anything: the majority-class leaf is the answer,
    flagged as not proven, saved as asked, never an error."""
    args, limit = NO_INCUMBENT[solver]
    run = odtk_solve(out, *args, "--solver", solver, "--time-limit", limit, "--warm-start", "none")
    assert run.exit_code == 0, run.output
    assert "status      time_limit" in run.stdout and "predict" in run.stdout
    assert "not proven optimal" in run.stderr and "Traceback" not in run.stderr
    assert json.loads((out / "m.json").read_text())["summary"]["termination"] == "time_limit"


def test_time_limit_with_an_incumbent_returns_it_with_its_gap(solver):
    with pytest.warns(UserWarning, match="not proven optimal"):
        result = odtk.solve("binoct", "flowoct/monk2", depth=2, solver=solver, time_limit=1)
    assert result.termination == "time_limit" and not result.optimal
    assert result.objective < result.bound <= result.n_samples  # correctly classified samples
    assert result.gap == pytest.approx((result.bound - result.objective) / result.objective)


def test_cli_saves_a_time_limited_incumbent(out):
    run = odtk_solve(out, *LONG, "--time-limit", "1")
    assert run.exit_code == 0, run.output
    assert "status      time_limit" in run.stdout
    assert run.stderr.strip() == "odtk: warning: highs stopped with status time_limit: the model is " \
                                 "feasible but not proven optimal."
    assert float(re.search(r"gap (\d+\.\d+)%", run.stdout).group(1)) > 0
    assert json.loads((out / "m.json").read_text())["format"] == "odtk-model"
    assert (out / "m.dot").read_text().startswith("digraph") and (out / "m.dot").read_bytes() != KEPT


@needs_cbc
def test_heuristic_kept_at_the_time_limit_is_flagged(out):
    """ODD's MILP finds nothing better than the heuristic's cutoff in time (CBC returns no
    solution then; HiGHS returns the start itself), or the time limit ends while the MILP is
    being built: the heuristic's diagram is returned as not proven optimal, and the CLI says so."""
    with pytest.warns(UserWarning, match="heuristic.* not proven optimal"):
        result = odtk.solve("odd", "uci/iris", skeleton="1-2-4", heuristic_time=0.5, time_limit=0.05,
                            solver="cbc")
    assert result.termination == "time_limit"
    assert result.objective == result.steps["heuristic"]["objective"]
    run = odtk_solve(out, "--model", "odd", "--dataset", "uci/iris", "--skeleton", "1-2-4",
                     "--heuristic-time", "0.5", "--time-limit", "0.05", "--solver", "cbc")
    assert run.exit_code == 0 and "status      time_limit" in run.stdout
    assert "odtk: warning: " in run.stderr and "not proven optimal" in run.stderr


def test_unproven_incumbent_with_relaxed_variables_reports_its_tree():
    """Categorical incumbents (Proposition 3 relaxes c) may score fractional rows: at a time
    limit the decoded tree's own objective is reported; a proven optimum must still agree."""
    from odtk.pipeline.check import self_check
    from odtk.pipeline.methods import method
    from odtk.solvers import SolverOutcome

    categorical = method("categorical")
    stopped = SolverOutcome(termination="time_limit", has_solution=True, objective=76.5, bound=80.0,
                            handoff_time=0.0, solve_time=1.0, size=None, version="", message="")
    assert self_check(categorical, 62.0, stopped, "gurobi", {"integrality": "relaxed"}) == 62.0
    with pytest.raises(SelfCheckError, match="scores 62 .* reported 76.5"):
        self_check(categorical, 62.0, stopped, "gurobi", {"integrality": "full"})
    proven = dataclasses.replace(stopped, termination="optimal")
    with pytest.raises(SelfCheckError):
        self_check(categorical, 62.0, proven, "gurobi", {"integrality": "relaxed"})


# --------------------------------------------------------------------------- 2. licence size limit
@pytest.mark.parametrize("limited", ["gurobi", "cplex"])
def test_model_over_the_registered_licence_limit(limited, out):
    size_limited(limited)
    limit = get_spec(limited).size_limit
    run = odtk_solve(out, *OVER_LICENCE, "--solver", limited)
    assert_fault(run, out, f"limit of {limit['variables']} variables and {limit['constraints']} constraints",
                 f"a full {limited} licence", "--solver highs")


@pytest.mark.parametrize("handoff", ["native", "pyomo"])
@pytest.mark.parametrize("registered", ["limit-above-the-licence", "no-limit"])
@pytest.mark.parametrize("limited", ["gurobi", "cplex"])
def test_licence_refusing_the_model(limited, registered, handoff, out, use_registry, tmp_path):
    size_limited(limited)
    entries = bundled_entries()
    if registered == "no-limit":
        del entries[limited]["size_limit"]
        entries[limited]["licence"] = "open"
    else:
        entries[limited]["size_limit"] = {"variables": 10_000, "constraints": 10_000}
    use_registry(write_registry(tmp_path / "solvers.yaml", entries))
    run = odtk_solve(out, *OVER_LICENCE, "--solver", limited, "--handoff", handoff)
    assert_fault(run, out, f"the installed {limited} licence refuses", f"a full {limited} licence",
                 "--solver highs")


# --------------------------------------------------------------------------- 3. missing solver
@pytest.mark.parametrize("case", ["cbc-binary", "python-package", "unregistered"])
def test_missing_solver(case, out, use_registry, tmp_path):
    entries = bundled_entries()
    entries["cbc"]["executable"] = str(tmp_path / "no-such-cbc")
    entries["myhighs"] = {**entries["highs"], "package": "odtk_no_such_package",
                          "install": "pip install odtk-no-such-package"}
    use_registry(write_registry(tmp_path / "solvers.yaml", entries))
    name, words = {
        "cbc-binary": ("cbc", [f"the CBC binary {tmp_path / 'no-such-cbc'} (the registry's executable) is missing",
                               "correct the path"]),
        "python-package": ("myhighs", ["No module named 'odtk_no_such_package'",
                                       "install with: pip install odtk-no-such-package"]),
        "unregistered": ("cplexx", ["Unknown solver 'cplexx'", "Known solvers:", "highs"]),
    }[case]
    run = odtk_solve(out, "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--solver", name)
    if case == "unregistered":
        assert_fault(run, out, *words)
        return
    assert_fault(run, out, f"Solver {name!r} is not available", *words)
    listing = CliRunner().invoke(main, ["solvers"])
    assert listing.exit_code == 0
    assert next(line for line in listing.stdout.splitlines() if line.startswith(f"{name} ")).split()[2] == "missing"


# --------------------------------------------------------------------------- 4. the CBC process fails
@needs_cbc
def test_cbc_killed_mid_solve(out, temp, use_registry, tmp_path):
    script, pid_file = real_cbc_announcing_its_pid(tmp_path)
    use_registry(fake_registry(tmp_path, cbc=script))
    runs = []
    solving = threading.Thread(target=lambda: runs.append(
        odtk_solve(out, *LONG, "--solver", "cbc", "--time-limit", "60")))
    solving.start()
    try:
        wait_for(pid_file.exists, solving.is_alive, "the CBC start")
        time.sleep(0.5)  # into the solve
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
    finally:
        solving.join(HANG_STOP)
    assert_start_returned(runs[0], out, "cbc stopped without a solution", "the CBC process was killed by SIGKILL",
                          "try another solver")
    assert os.listdir(temp) == [], "CBC's temporary files were left behind"


@needs_cbc
@pytest.mark.parametrize("name", ["SIGKILL", "SIGTERM"])
def test_cbc_dying_of_a_signal(name, out, temp, use_registry, tmp_path):
    use_registry(fake_registry(tmp_path, cbc=fake_cbc(tmp_path / "cbc", f"kill -{name[3:]} $$")))
    run = odtk_solve(out, "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--solver", "cbc")
    assert_start_returned(run, out, f"the CBC process was killed by {name}", "try another solver")
    assert os.listdir(temp) == []


def _damaged(content: str) -> str:
    """Shell lines writing ``content`` (printf format) as the solution file, CBC's last argument."""
    return f"for solution; do :; done\nprintf '{content}' > \"$solution\""


@needs_cbc
@pytest.mark.parametrize("case, words", [
    ("empty", "CBC wrote an empty solution file"),
    ("garbage", "CBC's solution file reads 'solver exploded'"),
    ("unreadable-value", "CBC's solution file is damaged"),
    ("truncated", "CBC's solution file is damaged"),
    ("violating", "returned a solution that violates the model by 1"),
])
def test_damaged_cbc_solution_file(case, words, out, use_registry, tmp_path):
    import cbcbox

    action = {
        "empty": _damaged(""),
        "garbage": _damaged("solver exploded\\n"),
        "unreadable-value": _damaged("Optimal - objective value -91.00000000\\n     26 c26   one   0\\n"),
        # every variable 0: no sample flows from the source, against flow conservation
        "violating": _damaged("Optimal - objective value 0.00000000\\n"),
        # the real solution cut after two of its values
        "truncated": f'"{cbcbox.cbc_bin_path()}" "$@" > /dev/null || exit $?\n'
                     'for solution; do :; done\nhead -n 3 "$solution" > "$solution.cut"\n'
                     'mv "$solution.cut" "$solution"',
    }[case]
    use_registry(fake_registry(tmp_path, cbc=fake_cbc(tmp_path / "cbc", action)))
    run = odtk_solve(out, "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--solver", "cbc")
    assert_start_returned(run, out, "cbc stopped without a solution", words, "try another solver")


# --------------------------------------------------------------------------- 5. infeasible side constraints
@pytest.mark.parametrize("case", ["odd-min-samples", "odd-min-samples-max-nodes-fairness", "categorical-min-rate"])
def test_infeasible_side_constraints(case, solver, out, tmp_path):
    fair = tmp_path / "fair.csv"
    _fair_frame()[0].to_csv(fair, index=False)  # 16 samples
    colours = tmp_path / "colours.csv"
    COLOUR_SIZE.to_csv(colours, index=False)
    odd = ["--model", "odd", "--csv", str(fair), "--target", "y", "--skeleton", "1-2", "--univariate",
           "--heuristic-time", "0.3", "--min-samples", "17"]
    args, named = {
        "odd-min-samples": (odd, ["min_samples=17"]),
        "odd-min-samples-max-nodes-fairness": (
            [*odd, "--max-nodes", "1", "--fairness", "demographic_parity", "--xi", "0.8", "--groups", "g"],
            ["fairness=demographic_parity", "max_nodes=1", "min_samples=17"]),
        "categorical-min-rate": (
            ["--model", "categorical", "--csv", str(colours), "--target", "y", "--depth", "1",
             "--positive-class", POS, "--rate", "sensitivity", "--min-rate", "1.0", "--max-card", "1",
             "-o", "proper_subsets=on"],
            ["max_card=1", "min_rate=1.0", "proper_subsets=on"]),
    }[case]
    run = odtk_solve(out, *args, "--solver", solver, "--time-limit", "60")
    assert_fault(run, out, f"{solver} proved the model infeasible", *named, "relax them")


# --------------------------------------------------------------------------- 6. Ctrl-C
# printed (--log) once the solve runs with its Ctrl-C handling in place: HiGHS's "MIP has" comes
# from its run, after odtk's SIGINT handler is set (its banner comes before)
READY = {"highs": "MIP has", "gurobi": "Optimize a model", "cplex": "Version identifier",
         "scip": "presolving:"}

# ``python -m odtk ARGS`` that also writes, to the file named before ARGS, how each solve ended:
# the termination the solver's backend returned, or the exception that ended it
RECORDING = textwrap.dedent("""
    import runpy, sys
    from odtk import solvers
    record = sys.argv.pop(1)
    def recorded(backend):
        def solve(*args, **kwargs):
            ended = "unknown"
            try:
                raw = backend(*args, **kwargs)
                ended = raw["termination"]
                return raw
            except BaseException as exc:
                ended = f"raised {type(exc).__name__}"
                raise
            finally:
                with open(record, "a") as file:
                    file.write(ended + "\\n")
        return solve
    for module in solvers.backends().values():
        if module.solve is not None:
            module.solve = recorded(module.solve)
    runpy.run_module("odtk", run_name="__main__", alter_sys=True)
    """)


def test_ctrl_c_during_the_solve(solver, out, tmp_path):
    """An hour's time limit, far beyond the wait for the process (which only stops a hung test):
    the solve can end early only on Ctrl-C, and what ended it is recorded."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "stdout.txt"
    record = tmp_path / "solves.txt"
    if solver == "cbc":  # CBC logs once it has finished: it announces its start in a file instead
        script, pid_file = real_cbc_announcing_its_pid(tmp_path)
        env["ODTK_SOLVERS"] = str(fake_registry(tmp_path, cbc=script))

    def solving() -> bool:
        return pid_file.exists() if solver == "cbc" else READY[solver] in log.read_text()

    with open(log, "w") as stdout, open(tmp_path / "stderr.txt", "w") as stderr:
        process = subprocess.Popen([sys.executable, "-c", RECORDING, str(record), "solve", *LONG, "--solver", solver,
                                    "--time-limit", "3600", "--log", *saving(out)],
                                   stdout=stdout, stderr=stderr, env=env, start_new_session=True)
    try:
        wait_for(solving, lambda: process.poll() is None, f"the start of {solver}'s solve")
        time.sleep(0.2)  # into the solve
        os.killpg(process.pid, signal.SIGINT)
        process.wait(HANG_STOP)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    errors = (tmp_path / "stderr.txt").read_text()
    assert process.returncode == 130, errors
    assert errors.strip().splitlines()[-1].startswith("odtk: interrupted by SIGINT") and "Traceback" not in errors
    ended = record.read_text().splitlines()
    # the solver stopped on Ctrl-C and said so, rather than ending its solve and leaving the
    # interrupt to be raised afterwards
    assert ended == ["interrupted"], f"{solver}'s solve ended as {ended}, not on Ctrl-C"
    assert "status      interrupted" in log.read_text()  # the best model so far, shown and saved
    assert json.loads((out / "m.json").read_text())["summary"]["termination"] == "interrupted"
    assert os.listdir(temp) == [], "temporary files were left behind"


@needs_cbc
def test_sigterm_during_a_cbc_solve_stops_cbc_and_removes_its_files(out, tmp_path):
    """SIGTERM to odtk alone (as a service manager or ``kill`` sends it): CBC, a child process,
    must not outlive odtk, nor its model files stay in the temporary folder."""
    temp, log = tmp_path / "temp", tmp_path / "cbc.pid"
    temp.mkdir()
    registry_file = fake_registry(tmp_path, cbc=fake_cbc(tmp_path / "cbc", f'echo $$ > "{log}"\nexec sleep 86400'))
    env = {**os.environ, "TMPDIR": str(temp), "ODTK_SOLVERS": str(registry_file)}
    process = subprocess.Popen([sys.executable, "-m", "odtk", "solve", *LONG, "--solver", "cbc", *saving(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        wait_for(log.exists, lambda: process.poll() is None, "the CBC start")
        cbc = int(log.read_text())
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=HANG_STOP)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 128 + signal.SIGTERM, errors
    assert errors.strip().splitlines()[-1].startswith("odtk: interrupted by SIGTERM"), errors
    with pytest.raises(ProcessLookupError):  # odtk killed and reaped CBC on the way out
        os.kill(cbc, 0)
    assert json.loads((out / "m.json").read_text())["summary"]["termination"] == "interrupted"
    assert os.listdir(temp) == [], "CBC's temporary files were left behind"


def test_a_build_outlasting_the_time_limit_returns_the_start_or_stops_in_one_line():
    """The time limit covers building the MILP (here through Pyomo: the compiled build of 20,000
    rows takes a fraction of a second): the start is returned as not proven optimal, with the
    trivial bound (every row right); without a start, the majority-class leaf."""
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (20_000, 30)), rng.integers(0, 2, 20_000)  # distinct rows: none merge
    with pytest.warns(UserWarning, match="Building the MILP did not finish within the time limit: "
                                         "the starting tree is returned, not proven optimal"):
        result = odtk.solve("flowoct", (X, y), depth=2, time_limit=0.5, warm_start="cart", handoff="pyomo")
    assert result.termination == "time_limit" and result.bound == len(y)
    assert result.objective == result.steps["warm_start"]["objective"]
    with pytest.warns(UserWarning, match="the majority-class leaf is returned"):
        result = odtk.solve("flowoct", (X, y), depth=2, time_limit=0.5, warm_start=None, handoff="pyomo")
    assert result.objective == max(np.bincount(y)) and result.model.graph.graph.number_of_nodes() == 1
