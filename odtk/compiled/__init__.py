"""Formulations compiled from arrays into the standard form the solvers receive.

A formulation's Pyomo model (``odtk.formulations``) is its specification, beside its paper;
building it through Pyomo costs far more than the matrix it describes. A compiler here builds
the same standard form from ``make_data``'s arrays with a few numpy operations per block of
rows, and returns an :class:`~odtk.compiled.instance.ArrayInstance` that the formulation's
``decode``, ``warm_start`` and cut separation read as they read a Pyomo instance. The tests
prove both routes give the same standard form and the same optimum
(``tests/test_compiled.py``). The native hand-off uses a compiler where the formulation has
one; the Pyomo hand-off always builds the Pyomo instance.
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

from odtk.compiled.instance import ArrayInstance

HELPERS = ("builder", "instance")  # the modules here that compile no formulation


def has_compiler(module: ModuleType) -> bool:
    """True when the formulation ``module`` has a compiler: a module ``odtk.compiled.<KEY>``."""
    key = getattr(module, "KEY", None)
    return key is not None and key not in HELPERS and importlib.util.find_spec(f"odtk.compiled.{key}") is not None


def bytes_per_cell(module: ModuleType) -> float:
    """The compiled build's peak memory per row × node × (column + class) of ``module``."""
    return importlib.import_module(f"odtk.compiled.{module.KEY}").BYTES_PER_CELL


def compile_instance(module: ModuleType, data: dict, *args: Any, **kwargs: Any) -> ArrayInstance:
    """The compiled instance of ``module.make_data(*args, **kwargs)`` (whose result is ``data``)."""
    return importlib.import_module(f"odtk.compiled.{module.KEY}").compile_instance(data, *args, **kwargs)


__all__ = ["ArrayInstance", "bytes_per_cell", "compile_instance", "has_compiler"]
