"""Shared fixtures: every registered MILP solver (skipped with the reason when missing), a
progress reporter that keeps every report, a temporary folder of in-process solves, and the
differential check's options, records (gathered from xdist's workers) and summary."""
from __future__ import annotations

import secrets
import signal
import tempfile
from pathlib import Path

import pytest

from odtk.progress import Progress
from odtk.solvers import registry, solver_status

# A suite started in the background of a script inherits Ctrl-C (SIGINT) ignored, and so would
# every odtk process the tests start; the Ctrl-C tests need Python's own handler in those.
signal.signal(signal.SIGINT, signal.default_int_handler)


def _solver_params(kinds: tuple[str, ...] = ("milp",)) -> list:
    params = []
    for name, spec in registry().items():
        if spec.kind not in kinds:
            continue
        status = solver_status(name)
        marks = [] if status.available else [pytest.mark.skip(reason=f"{name} not installed: {status.detail}")]
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.fixture(params=_solver_params())
def solver(request) -> str:
    """Name of an installed MILP solver (one test per registered MILP solver)."""
    return request.param


@pytest.fixture(params=_solver_params(("milp", "sat")))
def any_solver(request) -> str:
    """Name of an installed MILP or SAT solver (one test per registered solver)."""
    return request.param


def pytest_addoption(parser) -> None:
    parser.addoption("--agreement-examples", type=int, default=None, metavar="N",
                     help="Agreement harness: N fresh random instances per test and solver "
                          "(default: the fixed, derandomised CI counts).")
    parser.addoption("--fuzz-solves", type=int, default=None, metavar="N",
                     help="Differential check (tests/test_differential.py): about N solves from the seed "
                          "--fuzz-seed, shared among the model × solver × route cells, and a summary at the "
                          "end (default: the fixed cases of make test).")
    parser.addoption("--fuzz-seed", type=int, default=None, metavar="S",
                     help="Differential check: the seed of the --fuzz-solves run (default: a fresh one, printed).")


# ---------------------------------------------------------------- the differential check's records
RECORDS = pytest.StashKey[list]()
FUZZ_SEED = pytest.StashKey[int]()
FUZZ_CELLS = pytest.StashKey[int]()


def pytest_configure(config) -> None:
    config.stash[RECORDS] = []
    given = config.getoption("--fuzz-seed")
    if hasattr(config, "workerinput"):  # an xdist worker: the controller's seed
        config.stash[FUZZ_SEED] = config.workerinput["fuzz_seed"]
    else:
        config.stash[FUZZ_SEED] = given if given is not None else secrets.randbelow(10**6)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: every worker draws the controller's seed."""
    node.workerinput["fuzz_seed"] = node.config.stash[FUZZ_SEED]


def pytest_collection_finish(session) -> None:
    """The differential check's cells (model × solver × route) this session selected."""
    cells = {tuple(str(item.callspec.params.get(name)) for name in ("model", "solver", "any_solver", "route"))
             if hasattr(item, "callspec") else item.name
             for item in session.items if "differential" in getattr(item, "fixturenames", ())}
    session.config.stash[FUZZ_CELLS] = len(cells)


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["differential"] = session.config.stash[RECORDS]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist: the controller gathers the workers' records."""
    node.config.stash[RECORDS].extend(node.workeroutput.get("differential", []))


def pytest_report_header(config) -> str | None:
    if config.getoption("--fuzz-solves") is None:
        return None
    return (f"differential check: about {config.getoption('--fuzz-solves')} solves, seed "
            f"{config.stash[FUZZ_SEED]} (re-run: --fuzz-seed {config.stash[FUZZ_SEED]})")


def pytest_terminal_summary(terminalreporter, config) -> None:
    """The long run's table: solves per model × solver × route, and what disagreed."""
    records = config.stash[RECORDS]
    if config.getoption("--fuzz-solves") is None or not records:
        return
    from differential import summary

    terminalreporter.section("differential check")
    for line in summary(records, config.stash[FUZZ_SEED]):
        terminalreporter.write_line(line)


@pytest.fixture
def differential(request):
    """The differential check's plan: the fixed cases of make test, or the --fuzz-solves run."""
    from differential import Plan

    config = request.config
    solves = config.getoption("--fuzz-solves")
    return Plan(config.stash[FUZZ_SEED] if solves is not None else None, solves, config.stash[RECORDS],
                config.stash.get(FUZZ_CELLS, 1))


@pytest.fixture
def agreement_examples(request) -> int | None:
    """The ``--agreement-examples`` count, or None for the fixed CI counts."""
    return request.config.getoption("--agreement-examples")


class Recorder(Progress):
    """A silent progress reporter that keeps every report made to it."""

    def __init__(self):
        super().__init__("off")
        self.reports: list[dict] = []

    def update(self, **fields):
        self.reports.append(fields)
        super().update(**fields)


@pytest.fixture
def recorder() -> Recorder:
    """A :class:`Recorder`: the reports a search or heuristic makes."""
    return Recorder()


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """The temporary folder of in-process solves, to see what they leave behind."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
