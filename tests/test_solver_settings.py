"""Every setting reaches its solver or stops the run with one line; the CBC probe is bounded.

The cases:

1. A registry entry whose option names a parameter its solver does not have (``time_limit:
   time_limt``), or whose model settings name an unknown parameter or give a value the solver
   refuses: one line naming the solver, the parameter and solvers.yaml, on the CLI and through
   ``odtk.solve``, on every installed MILP solver.
   test_a_misspelt_option_stops_the_cli_run, test_a_refused_parameter_is_one_config_error
2. An entry that does not map the time limit, gap, threads or seed, and an empty registry: refused
   when the registry loads, naming the solver and the field (a SAT entry maps none of them).
   test_an_entry_missing_a_setting_is_refused_when_the_registry_loads,
   test_sat_entries_map_no_gap_threads_or_seed, test_an_empty_registry_says_it_lists_no_solvers
3. What each solver was given: ``result.options`` (native names and values as set, the model's
   settings included) and a line of ``odtk solve -v``.
   test_result_options_are_what_the_solver_was_given, test_verbose_solve_lists_what_the_solver_was_given
4. The CBC probe: a user-named CBC that hangs is given up after PROBE_SECONDS and left running
   nowhere; a user-named binary that is missing, not executable or a folder is named as such,
   without the pip advice, which is given only when the shipped binary is missing.
   test_a_hanging_user_cbc_is_given_up_within_the_probe_time,
   test_an_unrunnable_user_cbc_gets_no_pip_advice, test_a_missing_shipped_cbc_gets_the_pip_advice
5. A node limit set in an entry's settings (HiGHS ``mip_max_nodes``, SCIP ``limits/nodes``, Gurobi
   ``NodeLimit``, CPLEX ``mip.limits.nodes``, CBC ``maxNodes``), through either hand-off: reported
   as ``node_limit`` (it was ``error``, or for CPLEX through Pyomo a traceback), with the model found
   so far, not proven, and a bound on the right side of the brute-force optimum.
   test_a_node_limit_in_the_settings_is_reported_as_one
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odtk
from brute_force import best_value
from fake_solvers import bundled_entries, fake_registry, write_registry
from odtk.exceptions import ConfigError, OdtkWarning, SolverUnavailableError
from odtk.solvers import cbc, load_registry, registry, require_solver, solver_status

# per solver: a parameter it has, with a value it refuses (none of them is one of odtk's options)
REFUSED_VALUE = {"highs": ("presolve", "sometimes"), "cbc": ("maxNodes", "many"), "scip": ("limits/nodes", "many"),
                 "gurobi": ("NodeLimit", -5), "cplex": ("mip.limits.nodes", -5)}
REGISTRY_WORDS = "solver registry (solvers.yaml, or the file $ODTK_SOLVERS names)"
NODE_LIMIT = {"highs": "mip_max_nodes", "cbc": "maxNodes", "scip": "limits/nodes", "gurobi": "NodeLimit",
              "cplex": "mip.limits.nodes"}  # per solver: its parameter limiting the branch-and-bound nodes


def odtk_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m odtk ARGS`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "odtk", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def assert_one_line(run: subprocess.CompletedProcess, *words: str) -> str:
    """``run`` failed with exit code 1 and one line holding ``words``; that line."""
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1 and lines[0].startswith("odtk: error: "), run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def use_registry(monkeypatch):
    """Make ``entries`` (or a registry file) the registry in use, as ``$ODTK_SOLVERS`` does."""
    def use(entries: dict | Path, folder: Path) -> Path:
        path = entries if isinstance(entries, Path) else write_registry(folder / "solvers.yaml", entries)
        monkeypatch.setenv("ODTK_SOLVERS", str(path))
        registry.cache_clear()
        solver_status.cache_clear()
        return path

    yield use
    monkeypatch.undo()
    registry.cache_clear()
    solver_status.cache_clear()


@pytest.fixture(scope="module")
def tiny() -> pd.DataFrame:
    """20 rows of 3 binary features (the size-limited licences take a depth-1 FlowOCT of them)."""
    rows = [(i % 2, (i // 2) % 2, (i // 4) % 2) for i in range(20)]
    frame = pd.DataFrame(rows, columns=["a", "b", "c"])
    frame["y"] = frame["a"] ^ (frame.index % 7 == 0)
    return frame


def entry(solver: str, **changes) -> dict:
    """The bundled entry of ``solver`` with ``changes``."""
    return {**bundled_entries()[solver], **changes}


# --------------------------------------------------------------------------- 1. refused parameters
def test_a_misspelt_option_stops_the_cli_run(tmp_path):
    highs = entry("highs")
    highs["options"] = {**highs["options"], "time_limit": "time_limt"}
    path = write_registry(tmp_path / "solvers.yaml", {"highs": highs})
    run = odtk_cli("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1",
                   "--time-limit", "5", "--output", str(tmp_path / "m.json"), env={"ODTK_SOLVERS": str(path)})
    assert_one_line(run, "highs refuses the parameter time_limt (odtk's time_limit)",
                    "the solver has no parameter of this name", "solvers.yaml")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("case", ["option-name", "setting-name", "setting-value"])
def test_a_refused_parameter_is_one_config_error(solver, case, tiny, tmp_path, use_registry):
    changed = entry(solver)
    if case == "option-name":
        misspelt = changed["options"]["time_limit"] + "x"
        changed["options"] = {**changed["options"], "time_limit": misspelt}
        parameter, source = misspelt, "odtk's time_limit"
    elif case == "setting-name":
        parameter, source = "odtkNoSuchParameter", "from its settings"
        changed["settings"] = {"flowoct": {parameter: 1}}
    else:
        parameter, value = REFUSED_VALUE[solver]
        changed["settings"], source = {"flowoct": {parameter: value}}, "from its settings"
    use_registry({solver: changed}, tmp_path)
    with pytest.raises(ConfigError) as raised:
        odtk.solve("flowoct", (tiny[["a", "b", "c"]], tiny["y"]), depth=1, solver=solver, time_limit=30)
    message = str(raised.value)
    assert f"{solver} refuses the parameter {parameter}" in message and source in message
    assert REGISTRY_WORDS in message and "\n" not in message


# --------------------------------------------------------------------------- 2. refused when loading
@pytest.mark.parametrize("field", ["time_limit", "mip_gap", "threads", "seed"])
def test_an_entry_missing_a_setting_is_refused_when_the_registry_loads(field, tmp_path):
    highs = entry("highs")
    highs["options"] = {name: native for name, native in highs["options"].items() if name != field}
    path = write_registry(tmp_path / "solvers.yaml", {"highs": highs})
    with pytest.raises(ConfigError, match=f"solver 'highs': options do not map {field}, so odtk could not pass"):
        load_registry(path)
    listing = odtk_cli("solvers", env={"ODTK_SOLVERS": str(path)})
    assert_one_line(listing, "solver 'highs'", f"do not map {field}")


def test_two_options_on_one_parameter_are_refused(tmp_path):
    highs = entry("highs")
    highs["options"] = {**highs["options"], "threads": "random_seed"}
    with pytest.raises(ConfigError, match="several of odtk's options to random_seed"):
        load_registry(write_registry(tmp_path / "solvers.yaml", {"highs": highs}))


def test_sat_entries_map_no_gap_threads_or_seed(tmp_path):
    """A SAT solver is stopped by odtk at its deadline and has no gap, threads or seed: its entry
    loads without them, and one that maps them (they would be dropped) is refused."""
    sat = entry("minisat22", options={})
    assert load_registry(write_registry(tmp_path / "ok.yaml", {"minisat22": sat}))["minisat22"].options == {}
    sat["options"] = {"time_limit": "time_limit", "threads": "threads"}
    with pytest.raises(ConfigError, match=r"options may only name \('time_limit',\)"):
        load_registry(write_registry(tmp_path / "bad.yaml", {"minisat22": sat}))


def test_an_empty_registry_says_it_lists_no_solvers(tmp_path, use_registry):
    path = tmp_path / "solvers.yaml"
    path.write_text("{}\n")
    words = ["lists no solvers", "add at least one entry", "unset $ODTK_SOLVERS"]
    assert_one_line(odtk_cli("solvers", env={"ODTK_SOLVERS": str(path)}), *words)
    use_registry(path, tmp_path)
    with pytest.raises(ConfigError) as raised:
        odtk.solve("flowoct", "flowoct/monk1", depth=1)
    assert all(word in str(raised.value) for word in words) and "got dict" not in str(raised.value)


# --------------------------------------------------------------------------- 3. what was given
def test_result_options_are_what_the_solver_was_given(tiny, tmp_path, use_registry):
    """Native names and values as set: the model's settings, odtk's options in the form the
    solver takes them (SCIP: at most 64 threads; CBC: its log always on, for its bound)."""
    highs = entry("highs", settings={"flowoct": {"mip_lp_solver": "ipm"}})
    use_registry({**bundled_entries(), "highs": highs}, tmp_path)
    data = (tiny[["a", "b", "c"]], tiny["y"])
    result = odtk.solve("flowoct", data, depth=1, solver="highs", time_limit=30, threads=1, seed=7)
    given = dict(result.options)
    assert 0 < given.pop("time_limit") <= 30
    assert given == {"mip_lp_solver": "ipm", "mip_rel_gap": 0.0, "threads": 1, "random_seed": 7,
                     "output_flag": False}
    if solver_status("scip").available:
        scip = odtk.solve("flowoct", data, depth=1, solver="scip", time_limit=30, threads=100).options
        assert scip["parallel/maxnthreads"] == 64 and scip["display/verblevel"] == 0
    if solver_status("cbc").available:
        assert odtk.solve("flowoct", data, depth=1, solver="cbc", time_limit=30).options["log"] == 1


def test_verbose_solve_lists_what_the_solver_was_given():
    run = odtk_cli("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1",
                   "--threads", "1", "--seed", "7", "-v")
    assert run.returncode == 0, run.stderr
    line = next((line for line in run.stderr.splitlines() if line.startswith("highs was given ")), None)
    assert line is not None, run.stderr
    assert {"mip_rel_gap=0", "threads=1", "random_seed=7", "output_flag=True"} <= set(line.split()[3:])
    assert any(word.startswith("time_limit=") for word in line.split())


# --------------------------------------------------------------------------- 4. the CBC probe
@pytest.mark.skipif(not solver_status("cbc").available, reason="cbc not installed")
def test_a_hanging_user_cbc_is_given_up_within_the_probe_time(tmp_path):
    """A user-named CBC that never answers: one line saying so (no pip advice), within about
    PROBE_SECONDS, and neither the script nor its child is left running."""
    pids = tmp_path / "pids"
    hanging = tmp_path / "cbc"
    hanging.write_text(f'#!/bin/sh\necho $$ >> "{pids}"\nsleep 86400 &\necho $! >> "{pids}"\nwait\n')
    hanging.chmod(0o755)
    path = fake_registry(tmp_path, cbc=hanging)
    run = odtk_cli("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1",
                   "--solver", "cbc", env={"ODTK_SOLVERS": str(path)})
    line = assert_one_line(run, "Solver 'cbc' is not available", f"the CBC binary {hanging} did not answer "
                           f"within {cbc.PROBE_SECONDS:g} s", "executable is CBC")
    assert "pip install" not in line
    deadline = time.monotonic() + 10  # the group is killed at once; give the kernel a moment
    while any(Path(f"/proc/{pid}").exists() for pid in pids.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids.read_text().split() if Path(f"/proc/{pid}").exists()
            and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
    assert not left, f"left running: {left}"


@pytest.mark.parametrize("case", ["missing", "not-executable", "folder", "not-on-path"])
def test_an_unrunnable_user_cbc_gets_no_pip_advice(case, tmp_path, use_registry):
    binary = {"missing": tmp_path / "no-such-cbc", "not-executable": tmp_path / "cbc.sh",
              "folder": tmp_path, "not-on-path": Path("odtk-no-such-cbc")}[case]
    if case == "not-executable":
        binary.write_text("#!/bin/sh\n")
    reason = {"missing": "is missing (no such file there)", "not-executable": "is not executable",
              "folder": "is a folder, not a program", "not-on-path": "is missing (no such file on the PATH)"}[case]
    use_registry(fake_registry(tmp_path, cbc=binary), tmp_path)
    with pytest.raises(SolverUnavailableError) as raised:
        require_solver("cbc")
    assert f"the CBC binary {binary} (the registry's executable) {reason}" in str(raised.value)
    assert "pip install" not in str(raised.value)


@pytest.mark.skipif(not solver_status("cbc").available, reason="cbc not installed")
def test_a_missing_shipped_cbc_gets_the_pip_advice(monkeypatch, tmp_path, use_registry):
    import cbcbox

    use_registry(bundled_entries(), tmp_path)
    monkeypatch.setattr(cbcbox, "cbc_bin_path", lambda: str(tmp_path / "gone" / "cbc"))
    with pytest.raises(SolverUnavailableError,
                       match='no runnable CBC binary; install with: pip install "odtk\\[cbc\\]", or in a clone'):
        require_solver("cbc")


# --------------------------------------------------------------------------- 5. node limits
@pytest.mark.parametrize("handoff", ["native", "pyomo"])
def test_a_node_limit_in_the_settings_is_reported_as_one(solver, handoff, tmp_path, use_registry):
    """One node for an OCT at depth 2 that every solver branches on: the model found so far."""
    use_registry({solver: entry(solver, settings={"oct": {NODE_LIMIT[solver]: 1}})}, tmp_path)
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, size=(36, 6)), rng.integers(0, 2, size=36)
    with pytest.warns(OdtkWarning, match="not proven optimal"):
        result = odtk.solve("oct", (X, y), depth=2, solver=solver, handoff=handoff, warm_start=None)
    assert result.termination == "node_limit" and not result.optimal, result.message
    best = best_value(X, y, 2, 2)
    assert result.objective <= best + 1e-6 <= result.bound + 2e-6
