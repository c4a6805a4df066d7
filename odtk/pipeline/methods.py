"""Stage 0: which method a ``model`` key names, its checked options, skeleton, steps and solver.

A method is a formulation module (``formulations/``: a Pyomo model beside its paper) or one of
odtk's own engines (``odtk/engines/``). Each is imported only when a solve asks for it, so a CP
search never pays for Pyomo.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import networkx as nx

from odtk.exceptions import ConfigError
from odtk.skeletons import SHAPES, diagram_skeleton, parse_widths, topology_skeleton, tree_skeleton
from odtk.solvers import require_solver
from odtk.warn import warn

# --model key → the module that answers it (formulations: their KEY; engines: their VARIANTS)
MODULES: dict[str, str] = {
    "benders": "odtk.formulations.benders", "binoct": "odtk.formulations.binoct",
    "categorical": "odtk.formulations.categorical", "flowoct": "odtk.formulations.flowoct",
    "oct": "odtk.formulations.oct", "odd": "odtk.formulations.odd",
    "cp": "odtk.engines.cp_search",
    "sat-depth": "odtk.engines.sat_inference", "sat-size": "odtk.engines.sat_inference",
}
ENGINE_PACKAGE = "odtk.engines."
DEFAULT_SOLVER = "highs"
STRATEGIES = ("milp", "heuristic", "both")
HAS_HEURISTIC = ("odd",)  # models whose step 1 is a constructive heuristic (odtk.heuristics)


def available_models() -> list[str]:
    """Keys accepted by ``solve(model=...)`` and ``odtk solve --model``."""
    return sorted(MODULES)


def method(model: str) -> ModuleType:
    """The module of ``model`` (ConfigError naming the known models otherwise)."""
    if model not in MODULES:
        raise ConfigError(f"Unknown model {model!r}. Known models: {', '.join(available_models())}.")
    return importlib.import_module(MODULES[model])


def is_engine(module: ModuleType) -> bool:
    """True for odtk's own searches (no MILP formulation)."""
    return module.__name__.startswith(ENGINE_PACKAGE)


def engine_settings(model: str) -> dict[str, Any]:
    """The settings a variant key adds (``sat-depth``: minimise the depth)."""
    module = method(model)
    return dict(module.VARIANTS[model]) if is_engine(module) else {}


def defaults(module: ModuleType) -> dict[str, Any]:
    """The module's options with their defaults."""
    return {**{name: spec[2] for name, spec in module.HYPERPARAMETERS.items()},
            **{name: allowed[0] for name, allowed in module.CHOICES.items()}}


def starts_from_tree(module: ModuleType) -> bool:
    """Whether ``module`` is a MILP on binary features that starts from a given tree."""
    return module.FEATURES == "binary" and hasattr(module, "warm_start")


def hyperparameters(module: ModuleType, given: dict[str, Any]) -> dict[str, Any]:
    """Validate the formulation's options: numbers within their range, choices among theirs."""
    numeric, choices = module.HYPERPARAMETERS, module.CHOICES
    unknown = set(given) - set(numeric) - set(choices)
    if unknown:
        raise ConfigError(f"Model {module.KEY!r} has no option {sorted(unknown)}; "
                          f"its options: {', '.join([*numeric, *choices]) or 'none'}.")
    values = {name: given.get(name, spec[2]) for name, spec in numeric.items()}
    for name, value in values.items():
        low, high, default = numeric[name]
        if value is None and default is None:
            continue
        integral = isinstance(low, int) and not isinstance(low, bool)
        if (not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high
                or (integral and value != int(value))):
            kind = "whole number" if integral else "number"
            raise ConfigError(f"{name} must be a {kind} from {low} to {high}, got {value!r}.")
    for name, allowed in choices.items():
        values[name] = given.get(name, allowed[0])
        if values[name] not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {values[name]!r}.")
    return values


def side_constraints_on(module: ModuleType, hyper: dict[str, Any]) -> list[str]:
    """The side-constraint options set away from their default (which imposes nothing)."""
    default = defaults(module)
    return [name for name in module.SIDE_CONSTRAINTS if hyper.get(name) != default[name]]


def skeleton_of(module: ModuleType, depth: int | None, skeleton: str | nx.DiGraph | None,
                hyper: dict[str, Any]) -> nx.DiGraph:
    """The skeleton of a tree model (depth, or widths 1-2-4-…), of a diagram model (widths)
    or of a topology model (a depth, a shape name or a DiGraph).

    For a diagram model, ``depth=d`` means the tree skeleton 1-2-…-2^(d-1) in tree mode.
    """
    if module.SKELETON == "topology":
        if skeleton is None and depth is None:
            raise ConfigError(f"Model {module.KEY!r} needs a depth (--depth 2) or a topology "
                              f"(--skeleton {'|'.join(SHAPES)}).")
        return topology_skeleton(skeleton, depth)
    if isinstance(skeleton, nx.DiGraph):
        raise ConfigError(f"Model {module.KEY!r} takes a skeleton string, not a graph.")
    if skeleton is not None and depth is not None:
        widths = parse_widths(skeleton)
        if widths != tree_widths(depth):
            raise ConfigError(f"depth={depth} contradicts skeleton {skeleton!r}; give one of them.")
    if module.SKELETON == "search":  # the engine finds the depth; ``depth`` caps it
        if depth is not None:
            tree_skeleton(depth)  # the same checks as any tree depth
        return nx.DiGraph(kind="search", depth=depth)
    if module.SKELETON == "diagram":
        if skeleton:
            return diagram_skeleton(skeleton)
        if depth is None:
            raise ConfigError(f"Model {module.KEY!r} needs a skeleton, e.g. skeleton='1-2-4-8' "
                              "(--skeleton 1-2-4-8), or a tree depth.")
        if depth == 0:
            raise ConfigError(f"Model {module.KEY!r} takes depth 1 or more (a diagram has at least its root), "
                              "got depth 0; give depth=1 (--depth 1) or more, or a skeleton such as 1-2.")
        if skeleton is None:
            hyper["tree"] = True
        return diagram_skeleton(tree_widths(depth))
    if skeleton is not None:
        widths = parse_widths(skeleton)
        if widths != tree_widths(len(widths)):
            raise ConfigError(f"Model {module.KEY!r} learns trees: skeleton {skeleton!r} must double "
                              "at every layer (e.g. 1-2-4 is a tree of depth 3).")
        depth = len(widths)
    if depth is None:
        raise ConfigError(f"Model {module.KEY!r} needs a tree depth, e.g. depth=2 (--depth 2).")
    return tree_skeleton(depth)


def tree_widths(depth: int) -> list[int]:
    """The layer widths 1-2-4-… of a complete tree of ``depth``."""
    return [2**layer for layer in range(depth)]


def strategy_of(module: ModuleType, strategy: str | None, hyper: dict[str, Any]) -> str:
    """The training steps to run; the heuristic cannot honour side constraints."""
    has_heuristic = module.KEY in HAS_HEURISTIC
    chosen = strategy or ("both" if has_heuristic else "milp")
    if chosen not in STRATEGIES:
        raise ConfigError(f"Unknown strategy {chosen!r}; choose one of {', '.join(STRATEGIES)}.")
    if chosen != "milp" and not has_heuristic:
        raise ConfigError(f"Model {module.KEY!r} has no heuristic; use strategy 'milp'.")
    constrained = side_constraints_on(module, hyper)
    if chosen == "heuristic" and constrained:
        raise ConfigError(f"The heuristic ignores {', '.join(constrained)}; use strategy 'milp' or 'both'.")
    return chosen


def solver_for(module: ModuleType, solver: str | None, mip_gap: float | None, threads: int | None = None) -> str:
    """The solver a model runs on: HiGHS unless told for the MILPs, the engine's own name for
    a search of its own, and for the clause models a SAT solver (or any MILP solver).

    A search of odtk's own and the SAT solvers run on one thread: ``threads`` above one is
    reported with a warning (a campaign may give one value to every model), never dropped silently.
    """
    if not is_engine(module):
        return solver or DEFAULT_SOLVER
    if mip_gap is not None:
        raise ConfigError(f"Model {module.KEY!r} always proves optimality; drop mip_gap (--gap).")
    if module.SOLVER is None:
        spec = require_solver(solver or module.DEFAULT_SOLVER)
        if spec.kind == "sat":
            _one_thread(f"The SAT solver {spec.name!r}", threads)
        return spec.name
    if solver not in (None, module.SOLVER):
        raise ConfigError(f"Model {module.KEY!r} runs odtk's own search, not a MILP solver; "
                          f"drop solver={solver!r} (--solver).")
    _one_thread(f"Model {module.KEY!r} (odtk's own search)", threads)
    return module.SOLVER


def _one_thread(who: str, threads: int | None) -> None:
    """Warn that ``threads`` above one has no effect on ``who``."""
    if threads is not None and threads > 1:
        warn(f"{who} runs on one thread; threads={threads} (--threads) has no effect.",
             UserWarning)

