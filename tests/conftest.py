"""Shared fixtures: every registered MILP solver (skipped with the reason when missing), a
progress reporter that keeps every report, and a temporary folder of in-process solves."""
from __future__ import annotations

import signal
import tempfile
from pathlib import Path

import pytest

from odtk.progress import Progress
from odtk.solvers import registry, solver_status

# A suite started in the background of a script inherits Ctrl-C (SIGINT) ignored, and so would
# every odtk process the tests start; the Ctrl-C tests need Python's own handler in those.
signal.signal(signal.SIGINT, signal.default_int_handler)


def _solver_params() -> list:
    params = []
    for name, spec in registry().items():
        if spec.kind != "milp":
            continue
        status = solver_status(name)
        marks = [] if status.available else [pytest.mark.skip(reason=f"{name} not installed: {status.detail}")]
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.fixture(params=_solver_params())
def solver(request) -> str:
    """Name of an installed MILP solver (one test per registered MILP solver)."""
    return request.param


def pytest_addoption(parser) -> None:
    parser.addoption("--agreement-examples", type=int, default=None, metavar="N",
                     help="Agreement harness: N fresh random instances per test and solver "
                          "(default: the fixed, derandomised CI counts).")


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
