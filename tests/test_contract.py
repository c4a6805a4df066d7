"""Every registered formulation follows the module contract of the design."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from odtk.datasets.encoders import MODES
from odtk.pipeline.methods import MODULES, is_engine, method

FORMULATIONS = {key: method(key) for key in MODULES if not is_engine(method(key))}
ENGINES = {key: method(key) for key in MODULES if is_engine(method(key))}


def test_every_model_key_is_its_modules_own():
    for key, module in {**FORMULATIONS, **ENGINES}.items():
        assert key == module.KEY or key in getattr(module, "VARIANTS", {}), key


@pytest.mark.parametrize("key", sorted(FORMULATIONS))
def test_module_surface(key):
    module = FORMULATIONS[key]
    assert module.KEY == key and module.CITATION and module.SENSE in ("minimize", "maximize")
    assert module.FEATURES in MODES
    for name in ("build_model", "make_data", "decode", "objective_of"):
        assert callable(getattr(module, name))
    for name, (low, high, default) in module.HYPERPARAMETERS.items():
        assert default is None or low <= default <= high, name
    assert not set(module.HYPERPARAMETERS) & set(module.CHOICES)


@pytest.mark.parametrize("key", sorted(FORMULATIONS))
def test_every_constraint_cites_its_equation(key):
    import pyomo.environ as pyo

    model = FORMULATIONS[key].build_model()
    constraints = list(model.component_objects(pyo.Constraint))
    assert constraints
    for component in [*constraints, *model.component_objects(pyo.Objective)]:
        # an equation number (or range), or the paper's section for constraints it states in words,
        # or "odtk" for a constraint of odtk's own; a note may follow a comma: "(1.2–1.3, with p)"
        assert re.match(r"\((\d+(\.\d+)?[a-z]?(–\d+(\.\d+)?)?|§\d+(\.\d+)?|§[A-Z][a-z]+|odtk)(, [^)]+)?\) ",
                        component.doc or ""), component.name
    for component in model.component_objects((pyo.Var, pyo.Set, pyo.Param)):
        assert component.doc, component.name


def sources(module) -> str:
    """The source of a formulation: its module, or every .py file of its package."""
    path = Path(module.__file__)
    files = sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    return "\n".join(file.read_text(encoding="utf-8") for file in files)


@pytest.mark.parametrize("key", sorted(FORMULATIONS))
def test_formulation_modules_import_nothing_else_from_odtk(key):
    source = sources(FORMULATIONS[key])
    assert not re.search(r"^\s*(from|import)\s+odtk", source, re.M)


@pytest.mark.parametrize("key", sorted(ENGINES))
def test_engine_surface(key):
    module = ENGINES[key]
    assert key in module.VARIANTS and module.CITATION and module.SENSE == "minimize"
    assert module.FEATURES == "binary" and module.SKELETON in ("tree", "search")
    assert module.SOLVER is not None or module.DEFAULT_SOLVER
    for name in ("search", "objective_of"):
        assert callable(getattr(module, name))
    assert issubclass(module.InvalidOptions, ValueError)
    for name, (low, high, default) in module.HYPERPARAMETERS.items():
        assert low <= default <= high, name
    source = open(module.__file__).read()
    # an engine may use the budget, the solvers' oracles and its own modules, never the solve pipeline
    imported = re.findall(r"^\s*(?:from|import)\s+(odtk[\w.]*)", source, re.M)
    assert all(name.startswith(("odtk.budget", "odtk.solvers", "odtk.engines")) for name in imported), imported
