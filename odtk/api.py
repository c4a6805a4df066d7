"""``odtk.solve``: the one entry point behind the estimators, the CLI and experiments.

It validates and encodes the data, builds the formulation's Pyomo instance from
its abstract model, hands it to the chosen solver, decodes the learned model,
and checks that the decoded model reproduces the objective the solver reported.
"""
from __future__ import annotations

import math
import time
import warnings
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
from pyomo.common.gc_manager import PauseGC
from sklearn.preprocessing import LabelEncoder

from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset
from odtk.exceptions import ConfigError, DataError, SelfCheckError, SolveError
from odtk.formulations import flowoct
from odtk.models import DecisionGraph, TrainedModel
from odtk.results import SolveResult
from odtk.skeletons import parse_widths, tree_skeleton
from odtk.solvers import SolverOptions, SolverOutcome, solve_instance

FORMULATIONS: dict[str, ModuleType] = {module.KEY: module for module in (flowoct,)}
SELF_CHECK_TOLERANCE = 1e-4


def available_models() -> list[str]:
    """Keys accepted by ``solve(model=...)`` and ``odtk solve --model``."""
    return sorted(FORMULATIONS)


def _formulation(model: str) -> ModuleType:
    if model not in FORMULATIONS:
        raise ConfigError(f"Unknown model {model!r}. Known models: {', '.join(available_models())}.")
    return FORMULATIONS[model]


def as_dataset(data: Any, target: str | int | None = None) -> Dataset:
    """A :class:`Dataset` from a bundled name, a Dataset, a DataFrame + target, or ``(X, y)``."""
    if isinstance(data, Dataset):
        return data
    if isinstance(data, str):
        return load_dataset(data)
    if isinstance(data, pd.DataFrame):
        if target is None:
            raise DataError("A DataFrame needs target=<column name> to say which column is the class.")
        return from_dataframe(data, target)
    if isinstance(data, tuple) and len(data) == 2:
        X, y = data
        frame = X.copy() if isinstance(X, pd.DataFrame) else pd.DataFrame(
            np.asarray(X), columns=[f"x{j}" for j in range(np.asarray(X).shape[1])])
        if len(frame) != len(y):
            raise DataError(f"X has {len(frame)} rows but y has {len(y)} labels; they must match.")
        frame["__target__"] = np.asarray(y)
        return from_dataframe(frame, "__target__", name="arrays")
    raise DataError(f"Cannot use data of type {type(data).__name__}; pass a dataset name, "
                    "a Dataset, a DataFrame with target=..., or a tuple (X, y).")


def _hyperparameters(module: ModuleType, given: dict[str, Any]) -> dict[str, Any]:
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


def _skeleton(module: ModuleType, depth: int | None, skeleton: str | None):
    """A tree model takes a depth, or a skeleton of internal-node widths 1-2-4-… (depth = layers)."""
    if skeleton is not None:
        widths = parse_widths(skeleton)
        if widths != [2**layer for layer in range(len(widths))]:
            raise ConfigError(f"Model {module.KEY!r} learns trees: skeleton {skeleton!r} must double "
                              "at every layer (e.g. 1-2-4 is a tree of depth 3).")
        if depth is not None and depth != len(widths):
            raise ConfigError(f"depth={depth} contradicts skeleton {skeleton!r} (a tree of depth "
                              f"{len(widths)}); give one of them.")
        depth = len(widths)
    if depth is None:
        raise ConfigError(f"Model {module.KEY!r} needs a tree depth, e.g. depth=2 (--depth 2).")
    return tree_skeleton(depth)


def _raise_for_termination(outcome: SolverOutcome, solver: str, options: SolverOptions) -> None:
    if outcome.has_solution:
        return
    if outcome.termination == "infeasible":
        raise SolveError(f"{solver} proved the model infeasible; relax the side constraints.")
    if outcome.termination == "time_limit":
        raise SolveError(f"{solver} found no feasible solution within the time limit of "
                         f"{options.time_limit} s; raise --time-limit.")
    raise SolveError(f"{solver} stopped without a solution ({outcome.termination}: "
                     f"{outcome.message}); try another solver or raise --log to see its output.")


def _self_check(expected: float, outcome: SolverOutcome, solver: str) -> float:
    """The decoded model's objective must match the solver's; returns the objective to report."""
    reported = outcome.objective
    tolerance = SELF_CHECK_TOLERANCE * max(1.0, abs(reported))
    if abs(expected - reported) <= tolerance:
        return expected
    if outcome.termination != "optimal" and expected > reported:
        return expected  # an unproven incumbent whose flows were not maximal: the tree is better
    raise SelfCheckError(
        f"Self-check failed: the decoded model scores {expected:.6g} on the training data but "
        f"{solver} reported {reported:.6g}; tighten the solver's tolerances or report this model.")


def _gap(objective: float, bound: float | None) -> float | None:
    if bound is None or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(abs(objective), 1e-10)


def solve(model: str, data: Any, *, target: str | int | None = None, depth: int | None = None,
          skeleton: str | None = None, solver: str = "highs", time_limit: float | None = None,
          mip_gap: float | None = None, threads: int | None = None, seed: int | None = None,
          log: bool = False, handoff: str = "native", thresholds: str = "midpoints",
          max_thresholds: int | None = None, **hyperparameters: Any) -> SolveResult:
    """Learn an optimal tree with formulation ``model`` on ``data`` and return the verified result.

    ``data`` is a bundled dataset name, a :class:`~odtk.datasets.Dataset`, a DataFrame
    (with ``target``) or a tuple ``(X, y)``. Hyper-parameters are the formulation's own
    (FlowOCT: ``lam``). Numeric features are binarised at thresholds fitted on ``data``.
    """
    wall = time.perf_counter()
    module = _formulation(model)
    hyper = _hyperparameters(module, hyperparameters)
    options = SolverOptions(time_limit=time_limit, mip_gap=mip_gap, threads=threads, seed=seed, log=log)
    tree_shape = _skeleton(module, depth, skeleton)
    depth = tree_shape.graph["depth"]
    dataset = as_dataset(data, target)
    encoder = FeatureEncoder(mode=module.FEATURES, thresholds=thresholds,
                             max_thresholds=max_thresholds).fit(dataset)
    X = encoder.transform(dataset)
    labels = LabelEncoder().fit(dataset.target)
    y = labels.transform(dataset.target)

    start = time.perf_counter()
    with PauseGC():
        instance = module.build_model().create_instance(
            module.make_data(X, y, tree_shape, len(labels.classes_), **hyper))
    build_time = time.perf_counter() - start
    outcome = solve_instance(instance, solver, options, handoff=handoff)
    _raise_for_termination(outcome, solver, options)
    if outcome.termination != "optimal":
        warnings.warn(f"{solver} stopped with status {outcome.termination}: the tree is feasible "
                      "but not proven optimal.", stacklevel=2)

    graph = DecisionGraph(module.decode(instance), encoder.columns_,
                          [str(c) for c in labels.classes_])
    predicted = graph.predict_index(X)
    correct = int((predicted == y).sum())
    expected = module.objective_of(graph.graph, predicted, y, tree_shape, **hyper)
    objective = _self_check(expected, outcome, solver)
    trained = TrainedModel(graph, encoder, list(labels.classes_), model,
                           target=str(dataset.target.name),
                           summary={"dataset": dataset.name, "depth": depth, **hyper})
    return SolveResult(
        method=model, solver=solver, solver_version=outcome.version,
        termination=outcome.termination, objective=objective, bound=outcome.bound,
        gap=_gap(objective, outcome.bound), build_time=build_time,
        handoff_time=outcome.handoff_time, solve_time=outcome.solve_time,
        wall_time=time.perf_counter() - wall, size=outcome.size, n_samples=len(y),
        train_accuracy=correct / len(y), options=outcome.native,
        hyperparameters={"depth": depth, **hyper}, model=trained, message=outcome.message,
    )
