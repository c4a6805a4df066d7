"""SAT solvers of python-sat: the clause models (``sat-depth`` / ``sat-size``) call them directly."""
from __future__ import annotations

import importlib

from odtk.solvers.registry import SolverSpec

BACKEND = "pysat"
solve = None  # not a MILP backend


def version(spec: SolverSpec) -> str:
    return "python-sat " + importlib.import_module("pysat").__version__
