"""``odtk.solve``: the one entry point behind the estimators, the CLI and experiments.

It validates and encodes the data, builds the formulation's Pyomo instance from
its abstract model, hands it to the chosen solver, decodes the learned model,
and checks that the decoded model reproduces the objective the solver reported.
Models with a constructive heuristic (ODD) can run it alone, the MILP alone, or
both: the heuristic diagram then warm-starts the MILP and its value is the cutoff.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import signal
import sys
import threading
import time
import warnings
from types import ModuleType
from typing import Any, Callable

try:
    import resource
except ImportError:  # Windows: no address-space limits to honour
    resource = None

import networkx as nx
import numpy as np
import pandas as pd
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from sklearn.preprocessing import LabelEncoder
from sklearn.tree import DecisionTreeClassifier

from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset
from odtk.decomposition import solve_with_cuts
from odtk.engines import cp_search, sat_inference
from odtk.exceptions import ConfigError, DataError, OdtkWarning, SelfCheckError, SolveError
from odtk.formulations import benders, binoct, categorical, flowoct, odd
from odtk.formulations import oct as bertsimas_dunn_oct
from odtk.heuristics import construct_diagram
from odtk.models import DecisionGraph, TrainedModel, heap_tree, nested_tree, sklearn_tree
from odtk.oracles import MilpOracle
from odtk.results import SolveResult
from odtk.skeletons import SHAPES, diagram_skeleton, parse_widths, topology_skeleton, tree_skeleton
from odtk.solvers import SolverOptions, SolverOutcome, get_spec, require_solver, solve_instance
from odtk.solvers.options import MAX_SECONDS

FORMULATIONS: dict[str, ModuleType] = {
    module.KEY: module for module in (benders, binoct, bertsimas_dunn_oct, categorical, flowoct, odd)}
ENGINES: dict[str, ModuleType] = {  # odtk's own searches: no MILP formulation
    key: module for module in (cp_search, sat_inference) for key in module.VARIANTS}
DEFAULT_SOLVER = "highs"
HEURISTICS: dict[str, Callable] = {"odd": construct_diagram}  # model key → step-1 heuristic
STRATEGIES = ("milp", "heuristic", "both")
SELF_CHECK_TOLERANCE = 1e-4
WARM_STARTS = ("cart", "best")  # named starting trees; "best" also runs the CP search
CP_START_SECONDS = 10.0
LARGE_BINARY = 1000  # binary features beyond which a MILP build warns
BYTES_PER_CELL = 1000  # MILP build memory per row × node × column, at most (measured: 125–700)


def available_models() -> list[str]:
    """Keys accepted by ``solve(model=...)`` and ``odtk solve --model``."""
    return sorted({**FORMULATIONS, **ENGINES})


def _formulation(model: str) -> ModuleType:
    module = FORMULATIONS.get(model) or ENGINES.get(model)
    if module is None:
        raise ConfigError(f"Unknown model {model!r}. Known models: {', '.join(available_models())}.")
    return module


def model_options(model: str) -> dict[str, Any]:
    """The options of ``model`` (its hyper-parameters and choices) with their defaults."""
    return _defaults(_formulation(model))


def takes_warm_start(model: str) -> bool:
    """Whether ``model`` is a MILP on binary features that starts from a given tree."""
    return _starts_from_tree(_formulation(model))


def _starts_from_tree(module: ModuleType) -> bool:
    return module.FEATURES == "binary" and hasattr(module, "warm_start")


def check_options(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against ``model``'s (ConfigError naming the problem), with defaults."""
    return _hyperparameters(_formulation(model), options)


def _defaults(module: ModuleType) -> dict[str, Any]:
    return {**{name: spec[2] for name, spec in module.HYPERPARAMETERS.items()},
            **{name: allowed[0] for name, allowed in module.CHOICES.items()}}


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


def _skeleton(module: ModuleType, depth: int | None, skeleton: str | nx.DiGraph | None,
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
        if widths != _tree_widths(depth):
            raise ConfigError(f"depth={depth} contradicts skeleton {skeleton!r}; give one of them.")
    if module.SKELETON == "search":  # the engine finds the depth; ``depth`` caps it
        if depth is not None:
            tree_skeleton(depth)  # the same checks as any tree depth
        return nx.DiGraph(kind="search", depth=depth)
    if module.SKELETON == "diagram":
        if skeleton is None and depth is None:
            raise ConfigError(f"Model {module.KEY!r} needs a skeleton, e.g. skeleton='1-2-4-8' "
                              "(--skeleton 1-2-4-8), or a tree depth.")
        if skeleton is None:
            hyper["tree"] = True
        return diagram_skeleton(skeleton or _tree_widths(depth))
    if skeleton is not None:
        widths = parse_widths(skeleton)
        if widths != _tree_widths(len(widths)):
            raise ConfigError(f"Model {module.KEY!r} learns trees: skeleton {skeleton!r} must double "
                              "at every layer (e.g. 1-2-4 is a tree of depth 3).")
        depth = len(widths)
    if depth is None:
        raise ConfigError(f"Model {module.KEY!r} needs a tree depth, e.g. depth=2 (--depth 2).")
    return tree_skeleton(depth)


def _tree_widths(depth: int) -> list[int]:
    return [2**layer for layer in range(depth)]


def _group_vector(dataset: Dataset, groups: str | list[str] | tuple[str, ...] | None,
                  module: ModuleType) -> np.ndarray | None:
    """The protected groups: from one column ``groups`` of two values, a 0/1 vector (1 = the
    second value in sorted order); from two 0/1 columns ``[g1, g2]``, their n × 2 memberships
    (two subgroups, which may overlap)."""
    if groups is None:
        return None
    if "fairness" not in module.CHOICES:
        raise ConfigError(f"Model {module.KEY!r} has no fairness constraints; drop groups=….")
    names = [groups] if isinstance(groups, str) else list(groups)
    if len(names) not in (1, 2):
        raise ConfigError(f"groups names one column or two subgroup columns; got {len(names)}.")
    for name in names:
        if name not in dataset.features.columns:
            raise DataError(f"Group column {name!r} not found among the features of '{dataset.name}'.")
    if len(names) == 2:
        return np.column_stack([_membership(dataset.features[name], name) for name in names])
    values = sorted(dataset.features[groups].unique().tolist(), key=str)
    if len(values) != 2:
        raise DataError(f"Group column {groups!r} must have exactly two values, found {len(values)}.")
    return (dataset.features[groups] == values[1]).to_numpy().astype(int)


def _membership(column: pd.Series, name: str) -> np.ndarray:
    """A subgroup column's 0/1 (or boolean) memberships."""
    if not column.isin([0, 1]).all():
        raise DataError(f"Subgroup column {name!r} must hold 0/1 (member or not) in every row.")
    return column.to_numpy().astype(int)


def _raise_for_termination(outcome: SolverOutcome, solver: str, options: SolverOptions,
                           constraints: list[str]) -> None:
    if outcome.termination == "infeasible":
        raise SolveError(f"{solver} proved the model infeasible: no model meets the side "
                         f"constraints ({', '.join(constraints) or 'none set'}); relax them.")
    if outcome.termination == "time_limit":
        raise SolveError(f"{solver} found no feasible solution within the time limit of "
                         f"{options.time_limit} s; raise --time-limit.")
    raise SolveError(f"{solver} stopped without a solution ({outcome.termination}: "
                     f"{outcome.message}); try another solver or pass --log to see its output.")


def _better(module: ModuleType, a: float, b: float) -> bool:
    """True when objective ``a`` is strictly better than ``b`` for the formulation's sense."""
    return a > b if module.SENSE == "maximize" else a < b


def _self_check(module: ModuleType, expected: float, outcome: SolverOutcome, solver: str,
                hyper: dict[str, Any]) -> float:
    """The decoded model's objective must match the solver's; returns the objective to report."""
    reported = outcome.objective
    tolerance = SELF_CHECK_TOLERANCE * max(1.0, abs(reported))
    if abs(expected - reported) <= tolerance:
        return expected
    if outcome.termination != "optimal" and (_better(module, expected, reported)
                                             or hyper.get("integrality") == "relaxed"):
        # an unproven incumbent whose flows were not maximal (the model is better), or whose
        # relaxed variables (categorical, Proposition 3) are fractional: the model is the truth
        return expected
    raise SelfCheckError(
        f"Self-check failed: the decoded model scores {expected:.6g} on the training data but "
        f"{solver} reported {reported:.6g}; tighten the solver's tolerances or report this model.")


def _check_routing(flows: dict, graph: DecisionGraph, X: np.ndarray, solver: str, hyper: dict) -> None:
    """The decoded model must send every training row through the nodes that the solver's flow
    variables send it through; a split margin within the solver's tolerances breaks this."""
    reached = graph.node_rows(X)
    stray = sorted({int(i) for node in flows.keys() | reached.keys()
                    for i in set(flows.get(node, ())).symmetric_difference(reached.get(node, ()))})
    if stray:
        fix = (f"raise epsilon (now {hyper['epsilon']:g}) above the solver's tolerances"
               if "epsilon" in hyper else "tighten the solver's tolerances")
        raise SelfCheckError(
            f"Self-check failed: {len(stray)} training row(s) (first: row {stray[0]}) take another "
            f"path through the decoded model than {solver}'s flow variables give them, as split "
            f"margins fall within the solver's tolerances; {fix}.")


def _progress(options: SolverOptions, message: str) -> None:
    """A line on standard error about a finished training step, when the log is on."""
    if options.log:
        print(f"odtk: {message}", file=sys.stderr, flush=True)


def _gap(objective: float, bound: float | None) -> float | None:
    if bound is None or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(abs(objective), 1e-10)


class _Problem:
    """Encoded training data and everything a formulation needs to be built."""

    def __init__(self, module: ModuleType, dataset: Dataset, thresholds: str,
                 max_thresholds: int | None, group: np.ndarray | None, positive_class: Any = None,
                 sample_weight: np.ndarray | None = None, depth: int | None = None, seed: int | None = None):
        self.module = module
        self.dataset = dataset
        self.classes = _class_order(module, LabelEncoder().fit(dataset.target).classes_, positive_class)
        self.y = pd.Index(self.classes).get_indexer(dataset.target)
        if len({str(c) for c in self.classes}) < len(self.classes):
            raise DataError(f"Target {dataset.target.name!r} has classes that read alike as text "
                            f"({', '.join(map(repr, self.classes))}); give each class a distinct label.")
        if thresholds == "auto":
            thresholds = getattr(module, "AUTO_THRESHOLDS", thresholds)
        self.encoder = FeatureEncoder(mode=module.FEATURES, thresholds=thresholds,
                                      max_thresholds=max_thresholds).fit(dataset)
        if thresholds == "auto" and module.FEATURES == "binary":
            keep = _cart_thresholds(dataset, self.encoder, self.y, depth, sample_weight, seed)
            self.encoder = FeatureEncoder(mode="binary", thresholds="auto",
                                          max_thresholds=max_thresholds).fit(dataset, keep=keep)
        _check_encoding_size(len(self.y), len(self.encoder.columns_))
        self.X = self.encoder.transform(dataset)
        _warn_if_large(module, self.X.shape)
        self.weights = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.extra = {**self.weights, **({} if group is None else {"group": group})}
        if module.FEATURES == "onehot":
            self.extra.update(groups=list(self.encoder.groups_.values()),
                              ordinal=[kind == "numeric" for kind in self.encoder.kinds_.values()])

    def graph(self, decoded: nx.DiGraph) -> DecisionGraph:
        return DecisionGraph(decoded, self.encoder.columns_, [str(c) for c in self.classes])

    def score(self, graph: DecisionGraph, skeleton: nx.DiGraph, hyper: dict) -> tuple[float, float]:
        """(objective re-computed from the graph's own predictions, training accuracy)."""
        predicted = graph.predict_index(self.X)
        objective = self.module.objective_of(graph.graph, predicted, self.y, skeleton, **hyper, **self.weights)
        return objective, float(np.mean(predicted == self.y))


def _cart_thresholds(dataset: Dataset, quantiles: FeatureEncoder, y: np.ndarray, depth: int | None,
                     sample_weight: np.ndarray | None, seed: int | None) -> dict[str, np.ndarray]:
    """Numeric column → the thresholds scikit-learn's CART of ``depth`` tests on it, CART being
    fitted on the raw numeric columns beside the quantile encoding of every column."""
    numeric = [name for name, kind in quantiles.kinds_.items() if kind == "numeric"]
    if not numeric:
        return {}
    raw = dataset.features[numeric].apply(pd.to_numeric).to_numpy(dtype=float)
    cart = DecisionTreeClassifier(max_depth=depth, random_state=seed or 0)
    cart.fit(np.hstack([raw, quantiles.transform(dataset)]), y, sample_weight=sample_weight)
    tested, threshold = cart.tree_.feature, cart.tree_.threshold
    return {name: threshold[tested == column] for column, name in enumerate(numeric)}


def _warn_if_large(module: ModuleType, shape: tuple[int, int]) -> None:
    """A warning when a MILP on binary features gets more columns than it usually solves."""
    if module.FEATURES == "binary" and module not in ENGINES.values() and shape[1] > LARGE_BINARY:
        warnings.warn(f"{shape[1]} binary features for {shape[0]} rows: the model may be too large to "
                      f"solve in reasonable time; thresholds='auto' (--thresholds auto) or max_thresholds "
                      f"keep about 10 thresholds per numeric feature.", OdtkWarning, stacklevel=3)


def _sample_weight(module: ModuleType, weights: Any, n_rows: int) -> np.ndarray | None:
    """The checked per-row weights, or ConfigError naming the models that take them."""
    if weights is None:
        return None
    if not getattr(module, "SAMPLE_WEIGHT", False):
        takers = sorted(key for key, m in {**FORMULATIONS, **ENGINES}.items() if getattr(m, "SAMPLE_WEIGHT", False))
        raise ConfigError(f"Model {module.KEY!r} takes no sample_weight; models that do: {', '.join(takers)}.")
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (n_rows,) or not np.isfinite(weights).all() or (weights < 0).any():
        raise DataError(f"sample_weight must hold one finite, non-negative number per row ({n_rows}); "
                        f"got shape {weights.shape}.")
    if not weights.sum() > 0:
        raise DataError("sample_weight must give some row a positive weight; all weights are zero.")
    return weights


def _class_order(module: ModuleType, classes: np.ndarray, positive_class: Any) -> np.ndarray:
    """The sorted class labels, or for a binary model ``[negative, positive_class]``."""
    if positive_class is None:
        return classes
    if not hasattr(module, "POSITIVE"):
        raise ConfigError(f"Model {module.KEY!r} has no positive class; drop positive_class=….")
    matches = [k for k, c in enumerate(classes) if c == positive_class or str(c) == str(positive_class)]
    if len(classes) != 2 or not matches:
        raise DataError(f"positive_class={positive_class!r} must be one of the two classes; "
                        f"the target has {', '.join(map(str, classes))}.")
    order = [1 - matches[0], matches[0]]  # [negative, positive]
    return classes[order if module.POSITIVE == 1 else order[::-1]]


def _heuristic(problem: _Problem, skeleton: nx.DiGraph, hyper: dict, budget: float,
               seed: int | None) -> tuple[DecisionGraph, dict]:
    """Step 1: the constructive heuristic, verified against its own re-evaluation."""
    found = HEURISTICS[problem.module.KEY](problem.X, problem.y, skeleton.graph["widths"],
                              len(problem.classes), alpha=hyper["alpha"],
                              time_budget=budget, seed=seed or 0, **problem.weights)
    graph = problem.graph(found.graph)
    objective, _ = problem.score(graph, skeleton, hyper)
    if abs(objective - found.objective) > 1e-9:
        raise SelfCheckError(f"Self-check failed: the heuristic reported {found.objective:.6g} but "
                             f"its diagram scores {objective:.6g}.")
    return graph, {"objective": objective, "seconds": found.seconds, "starts": found.starts}


def solve(model: str, data: Any, *, target: str | int | None = None, depth: int | None = None,
          skeleton: str | nx.DiGraph | None = None, solver: str | None = None,
          time_limit: float | None = None, mip_gap: float | None = None, threads: int | None = None,
          seed: int | None = None, log: bool = False, handoff: str = "native",
          thresholds: str = "midpoints", max_thresholds: int | None = None,
          groups: str | list[str] | None = None,
          strategy: str | None = None, heuristic_time: float = 5.0, warm_start: Any = None,
          positive_class: Any = None, sample_weight: Any = None, **hyperparameters: Any) -> SolveResult:
    """Learn an optimal tree or diagram with formulation ``model`` and return the verified result.

    ``data`` is a bundled dataset name, a :class:`~odtk.datasets.Dataset`, a DataFrame
    (with ``target``) or a tuple ``(X, y)``. Hyper-parameters are the formulation's own
    (FlowOCT: ``lam``; ODD: ``alpha``, ``epsilon``, ``univariate``, ``tree``, …; CP search:
    ``min_support``, ``counting_depth``; SAT inference: ``encoding``). ``solver`` defaults to
    HiGHS for the MILPs; the CP search (``model="cp"``) runs odtk's own engine and takes no
    solver; ``sat-depth`` / ``sat-size`` take a SAT solver (default ``minisat22``) or any MILP
    solver, and ``depth`` caps the depths they try.
    ``strategy`` (models with a heuristic): ``"heuristic"``, ``"milp"`` or ``"both"``
    (default). ``groups`` names the protected-group column (two values) for fairness
    constraints, or two 0/1 subgroup columns ``[g1, g2]``, which may overlap.
    ``warm_start`` (tree models on binary features): ``"cart"`` for scikit-learn's CART of the
    same depth, ``"best"`` for CART's tree or the CP search's (given at most 10 s), whichever
    scores better, or a tree learned on the same data (SolveResult, TrainedModel, DecisionGraph).
    ``thresholds``: ``"midpoints"`` (every one, or ``max_thresholds`` evenly spaced),
    ``"quantiles"``, ``"values"`` (``x > v``) or ``"auto"`` (quantiles plus CART's thresholds;
    every midpoint for the SAT models, which must classify every row); see
    :class:`~odtk.datasets.FeatureEncoder`.
    The categorical model (``model="categorical"``) learns binary classifiers on any topology:
    ``skeleton`` is one of ``depth-2``, ``depth-2.5``, ``depth-3``, ``imbalanced`` or a
    ``networkx.DiGraph``; ``positive_class`` names its positive class (default: the second
    in sorted order); its options are ``class_weight``, ``max_card`` (with ``max_card_ordinal``),
    ``rate`` with ``min_rate``, ``numeric``, ``feature_selection`` (with ``min_groups`` and
    ``selection_share``), the improvement switches and ``configuration``, one of the paper's
    named sets of them (``"all"``, ``"nothing"``, ``"no-anchor"``, ``"no-relax"``, ``"no-strength"``).
    ``sample_weight`` (the MILPs: FlowOCT, BendersOCT, BinOCT, OCT, ODD, categorical): a
    non-negative weight per training row, which multiplies the row's term in the objective
    (default: 1 each; ODD's error rate becomes the weighted error over the total weight); side
    constraints (OCT's ``min_leaf``, ODD's fairness and stability, the categorical ``min_rate``)
    keep counting rows; ODD's heuristic weighs its counts too. The CP search takes whole-number
    weights (a row of weight w counts as w rows, in ``min_support`` too).
    """
    wall = time.perf_counter()
    module = _formulation(model)
    hyper = _hyperparameters(module, hyperparameters)
    strategy = _strategy(module, strategy, hyper)
    solver = _solver_for(module, solver, mip_gap)
    hyper.update(ENGINES[model].VARIANTS[model] if model in ENGINES else {})
    options = SolverOptions(time_limit=time_limit, mip_gap=mip_gap, threads=threads, seed=seed, log=log)
    if isinstance(heuristic_time, bool) or not isinstance(heuristic_time, (int, float)) \
            or not 0 < heuristic_time <= MAX_SECONDS:
        raise ConfigError(f"heuristic_time (--heuristic-time) must be a number of seconds above 0 and at most "
                          f"{MAX_SECONDS:g}, got {heuristic_time!r}.")
    shape = _skeleton(module, depth, skeleton, hyper)
    if shape.graph["kind"] in ("tree", "search", "topology"):
        depth = shape.graph["depth"]
        skeleton = shape.graph.get("name", skeleton)
    else:
        skeleton = "-".join(map(str, shape.graph["widths"]))
    dataset = as_dataset(data, target)
    problem = _Problem(module, dataset, thresholds, max_thresholds, _group_vector(dataset, groups, module),
                       positive_class, _sample_weight(module, sample_weight, len(dataset.target)),
                       depth, seed)
    _progress(options, f"{len(problem.y)} rows encoded as {problem.X.shape[1]} {module.FEATURES} columns "
                       f"in {time.perf_counter() - wall:.1f}s")
    steps: dict[str, dict] = {}
    start_graph = None
    if strategy in ("heuristic", "both"):
        start_graph, steps["heuristic"] = _heuristic(problem, shape, hyper, heuristic_time, seed)
    if warm_start is not None:
        start_graph, steps["warm_start"] = _given_start(problem, warm_start, shape, hyper, seed)
    for name, step in steps.items():
        _progress(options, f"{name}: objective {step['objective']:.6g} in {step['seconds']:.1f}s")
    best, outcome, build_time = start_graph, None, 0.0
    termination = "heuristic"
    if model in ENGINES:
        best, termination = _search(problem, shape, hyper, solver, options, steps)
    elif strategy in ("milp", "both"):
        best, outcome, build_time, termination = _milp(problem, shape, hyper, solver, options,
                                                        handoff, start_graph, steps)
    objective, accuracy = problem.score(best, shape, hyper)
    if hasattr(module, "rates_of") and "milp" in steps:
        steps["milp"].update(module.rates_of(best.predict_index(problem.X), problem.y))
    trained = TrainedModel(best, problem.encoder, list(problem.classes), model,
                           target=str(dataset.target.name),
                           summary={"dataset": dataset.name, "skeleton": skeleton, "depth": depth, **hyper})
    bound = (outcome.bound if outcome and outcome.has_solution
             else steps.get("milp", steps.get("search", {})).get("bound"))
    return SolveResult(
        method=model, solver=solver if outcome or model in ENGINES else "heuristic",
        solver_version=outcome.version if outcome else "", termination=termination,
        objective=objective, bound=bound, gap=_gap(objective, bound), build_time=build_time,
        handoff_time=outcome.handoff_time if outcome else 0.0,
        solve_time=outcome.solve_time if outcome else steps.get("search", {}).get("seconds", 0.0),
        wall_time=time.perf_counter() - wall, size=outcome.size if outcome else None,
        n_samples=len(problem.y), train_accuracy=accuracy,
        options=outcome.native if outcome else {},
        hyperparameters={"skeleton": skeleton, "depth": depth, **hyper}, model=trained,
        message=outcome.message if outcome else "", steps=steps,
        objective_meaning=getattr(module, "OBJECTIVE", ""),
    )


def _solver_for(module: ModuleType, solver: str | None, mip_gap: float | None) -> str:
    """The solver a model runs on: HiGHS unless told for the MILPs, the engine's own name for
    a search of its own, and for the clause models a SAT solver (or any MILP solver)."""
    if module not in ENGINES.values():
        return solver or DEFAULT_SOLVER
    if mip_gap is not None:
        raise ConfigError(f"Model {module.KEY!r} always proves optimality; drop mip_gap (--gap).")
    if module.SOLVER is None:
        return require_solver(solver or module.DEFAULT_SOLVER).name
    if solver not in (None, module.SOLVER):
        raise ConfigError(f"Model {module.KEY!r} runs odtk's own search, not a MILP solver; "
                          f"drop solver={solver!r} (--solver).")
    return module.SOLVER


def _search(problem: _Problem, shape: nx.DiGraph, hyper: dict, solver: str,
            options: SolverOptions, steps: dict) -> tuple[DecisionGraph, str]:
    """Run a search engine, then check its tree scores what the engine reported."""
    module = problem.module
    backend = {}
    if module.SOLVER is None:  # the clause models ask a SAT solver, or a MILP solver, each query
        backend["oracle"] = solver if get_spec(solver).kind == "sat" else (
            lambda deadline: MilpOracle(solver, options, deadline))
    try:
        found = module.search(problem.X, problem.y, len(problem.classes), shape.graph["depth"],
                              time_limit=options.time_limit, **hyper, **backend, **problem.weights)
    except sat_inference.InconsistentData as exc:
        i, j = exc.rows
        first, second = problem.classes[problem.y[[i, j]]]
        raise DataError(f"No tree classifies the training data perfectly: rows {i} and {j} have the "
                        f"same features but classes {first} and {second}; remove one (or use finer "
                        "thresholds).") from None
    except sat_inference.TimeLimitReached:
        raise SolveError(f"No consistent tree found within the time limit of {options.time_limit} s; "
                         "raise --time-limit.") from None
    except module.InvalidOptions as exc:  # other errors are bugs: they keep their traceback
        raise ConfigError(str(exc)) from None
    graph = problem.graph(nested_tree(found.tree))
    objective, _ = problem.score(graph, shape, hyper)
    if objective != found.objective:
        raise SelfCheckError(f"Self-check failed: the search reported {found.objective} but its "
                             f"tree scores {objective:g} on the training data; report this model.")
    statistics = {name: value for name, value in dataclasses.asdict(found).items()
                  if name not in ("tree", "perfect", "objective", "lower_bound", "status", "seconds", "error")}
    steps["search"] = {"termination": found.status, "seconds": found.seconds, "objective": objective,
                       "bound": found.lower_bound, **statistics}
    if found.status != "optimal":
        warnings.warn(f"The search stopped at the time limit of {options.time_limit} s: the tree "
                      "is the best found, not proven optimal.", OdtkWarning, stacklevel=3)
    return graph, found.status


def _strategy(module: ModuleType, strategy: str | None, hyper: dict[str, Any]) -> str:
    """The training steps to run; the heuristic cannot honour side constraints."""
    has_heuristic = module.KEY in HEURISTICS
    chosen = strategy or ("both" if has_heuristic else "milp")
    if chosen not in STRATEGIES:
        raise ConfigError(f"Unknown strategy {chosen!r}; choose one of {', '.join(STRATEGIES)}.")
    if chosen != "milp" and not has_heuristic:
        raise ConfigError(f"Model {module.KEY!r} has no heuristic; use strategy 'milp'.")
    constrained = _side_constraints_on(module, hyper)
    if chosen == "heuristic" and constrained:
        raise ConfigError(f"The heuristic ignores {', '.join(constrained)}; use strategy 'milp' or 'both'.")
    return chosen


def _side_constraints_on(module: ModuleType, hyper: dict[str, Any]) -> list[str]:
    """The side-constraint options set away from their default (which imposes nothing)."""
    defaults = _defaults(module)
    return [name for name in module.SIDE_CONSTRAINTS if hyper.get(name) != defaults[name]]


def _satisfies_constraints(instance, tolerance: float = 1e-6) -> bool:
    """True when the values loaded into ``instance`` meet every active constraint."""
    for constraint in instance.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(constraint.body)
        if constraint.has_lb() and body < pyo.value(constraint.lower) - tolerance:
            return False
        if constraint.has_ub() and body > pyo.value(constraint.upper) + tolerance:
            return False
    return True


def _better_start(problem: _Problem, shape: nx.DiGraph, hyper: dict, cart: nx.DiGraph) -> nx.DiGraph:
    """CART's tree or the CP search's (run for at most CP_START_SECONDS), whichever scores better."""
    depth = shape.graph["depth"]
    found = cp_search.search(problem.X, problem.y, len(problem.classes), depth, time_limit=CP_START_SECONDS)
    searched = heap_tree(nested_tree(found.tree))
    scores = [problem.score(problem.graph(tree), shape, hyper)[0] for tree in (cart, searched)]
    better = scores[1] > scores[0] if problem.module.SENSE == "maximize" else scores[1] < scores[0]
    return searched if better else cart


def _free_memory() -> int | None:
    """Bytes of memory this process may still take: the system's free memory, and what is left
    under an address-space limit (``ulimit -v``); None where the system does not say."""
    sizes = []
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        sizes.append(os.sysconf("SC_AVPHYS_PAGES") * page)
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as statm:
                sizes.append(soft - int(statm.read().split()[0]) * page)
    except (AttributeError, NameError, ValueError, OSError):
        pass
    return min(sizes) if sizes else None


def _gigabytes(size: float) -> str:
    return f"{size / 2**30:.1f} GB"


def _check_encoding_size(rows: int, columns: int) -> None:
    """A DataError before encoding a matrix larger than the free memory."""
    free = _free_memory()
    if free is not None and rows * columns > free / 2:
        raise DataError(f"Encoding {rows:,} rows as {columns:,} binary columns needs "
                        f"{_gigabytes(rows * columns)}, more than half the {_gigabytes(free)} of free "
                        "memory; use fewer thresholds (thresholds='auto' / --thresholds auto, or "
                        "--max-thresholds 10) or a sample of the rows.")


def _check_model_size(problem: _Problem, shape: nx.DiGraph) -> None:
    """A DataError before building a MILP whose estimated memory exceeds the free memory.

    The formulations have a constraint per row and node over the columns, so their memory
    grows as rows × nodes × (columns + classes); ``BYTES_PER_CELL`` is the most measured per
    such cell (dense binary columns)."""
    free = _free_memory()
    rows, columns = problem.X.shape
    cells = rows * len(shape) * (columns + len(problem.classes))
    needed = cells * getattr(problem.module, "BYTES_PER_CELL", BYTES_PER_CELL)
    if free is not None and needed > free:
        raise DataError(f"The {problem.module.KEY} MILP for {rows:,} rows, {len(shape)} nodes and {columns:,} "
                        f"columns would need about {_gigabytes(needed)} of memory to build, more than the "
                        f"{_gigabytes(free)} free; use a sample of the rows, a smaller depth or skeleton, "
                        "fewer thresholds (--thresholds auto), or the CP search (--model cp).")


class _BuildTimeout(BaseException):
    """Raised by the alarm when building a MILP outlasts the time limit (a BaseException, as
    KeyboardInterrupt is, so that Pyomo's ``except Exception`` does not turn it into another error)."""


@contextlib.contextmanager
def _build_deadline(seconds: float | None):
    """Stop a MILP build that outlasts ``seconds`` with a one-line SolveError (in the main thread
    of a system with SIGALRM; elsewhere the build runs to its end, then the limit is checked)."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    if seconds is None or not hasattr(signal, "setitimer") or not in_main_thread:
        yield
        return

    fired = []

    def expire(*_):
        fired.append(True)
        raise _BuildTimeout

    def not_the_alarm(record: logging.LogRecord) -> bool:  # Pyomo logs the components it was building
        return "_BuildTimeout" not in record.getMessage()

    pyomo_log = logging.getLogger("pyomo.core")
    previous = signal.signal(signal.SIGALRM, expire)
    pyomo_log.addFilter(not_the_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except Exception:
        if fired:  # the alarm interrupted code that wrapped it in an error of its own
            raise _BuildTimeout from None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        pyomo_log.removeFilter(not_the_alarm)


def _after_build(options: SolverOptions, build_time: float) -> SolverOptions:
    """The options for the solver: the time limit covers building and solving the MILP."""
    if options.time_limit is None:
        return options
    remaining = options.time_limit - build_time
    if remaining <= 0:
        raise _BuildTimeout
    return dataclasses.replace(options, time_limit=remaining)


def _build_timed_out(start_graph: DecisionGraph | None, steps: dict, origin: str,
                     options: SolverOptions) -> tuple[DecisionGraph, SolverOutcome, float, str]:
    """The MILP step when building outlasted the time limit: the start, not proven, if any."""
    message = f"Building the MILP did not finish within the time limit of {options.time_limit:g}s"
    if start_graph is None:
        raise SolveError(f"{message}; raise --time-limit or make the model smaller (fewer rows, thresholds "
                         "or nodes).")
    warnings.warn(f"{message}: the {origin.replace('_', ' ')}'s model is returned, not proven optimal.",
                  OdtkWarning, stacklevel=4)
    steps["milp"] = {"termination": "time_limit", "seconds": 0.0, "objective": None, "bound": None}
    outcome = SolverOutcome(termination="time_limit", has_solution=False, objective=None, bound=None,
                            handoff_time=0.0, solve_time=0.0, size=None, version="", message=message)
    return start_graph, outcome, float(options.time_limit), "time_limit"


def _given_start(problem: _Problem, given: Any, shape: nx.DiGraph, hyper: dict,
                 seed: int | None) -> tuple[DecisionGraph, dict]:
    """The user's starting tree (``"cart"``, ``"best"`` or a tree learned on the same data), scored."""
    module = problem.module
    if not _starts_from_tree(module):
        raise ConfigError(f"Model {module.KEY!r} takes no warm_start tree; drop warm_start=….")
    start = time.perf_counter()
    if isinstance(given, str):
        if given not in WARM_STARTS:
            raise ConfigError(f"warm_start={given!r}: give one of {', '.join(WARM_STARTS)} or a learned tree.")
        cart = DecisionTreeClassifier(max_depth=shape.graph["depth"], random_state=seed or 0)
        tree = sklearn_tree(cart.fit(problem.X, problem.y, sample_weight=problem.weights.get("sample_weight")))
        if given == "best" and not problem.weights:
            tree = _better_start(problem, shape, hyper, tree)
    else:
        graph = getattr(getattr(given, "model", given), "graph", given)
        if (not isinstance(graph, DecisionGraph) or graph.feature_names != list(problem.encoder.columns_)
                or graph.class_names != [str(c) for c in problem.classes]):
            raise ConfigError("warm_start must be 'cart' or a tree learned on the same data and "
                              "binarisation (a SolveResult, TrainedModel or DecisionGraph).")
        given_depth = nx.dag_longest_path_length(graph.graph)
        if given_depth > shape.graph["depth"]:
            raise ConfigError(f"The warm_start tree does not fit this model: its depth {given_depth} exceeds "
                              f"depth {shape.graph['depth']}; start from a tree of depth ≤ {shape.graph['depth']}.")
        tree = heap_tree(graph.graph)
    chosen = problem.graph(tree)
    objective, _ = problem.score(chosen, shape, hyper)
    return chosen, {"objective": objective, "seconds": time.perf_counter() - start}


def _milp(problem: _Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions,
          handoff: str, start_graph: DecisionGraph | None, steps: dict):
    """Step 2: build, (warm-start,) solve, decode, self-check. Returns (graph, outcome, build s, status).

    ``start_graph`` (the heuristic's diagram or the user's tree, scored in ``steps``) starts
    the solver and its value is the cutoff.
    """
    module = problem.module
    _check_model_size(problem, shape)
    start = time.perf_counter()
    origin = "warm_start" if "warm_start" in steps else "heuristic"
    try:
        data = module.make_data(problem.X, problem.y, shape, len(problem.classes),
                                **hyper, **problem.extra)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    try:
        with PauseGC(), _build_deadline(options.time_limit):
            instance = module.build_model().create_instance(data)
        build_time = time.perf_counter() - start
        options = _after_build(options, build_time)
    except _BuildTimeout:
        return _build_timed_out(start_graph, steps, origin, options)
    _progress(options, f"built the MILP in {build_time:.1f}s; {solver} solving"
                       + (f" for at most {options.time_limit:.1f}s" if options.time_limit else "")
                       + " (its log follows: incumbent, bound, gap, elapsed time)")
    capabilities = get_spec(solver).capabilities
    cutoff = None
    if start_graph is not None:
        try:
            module.warm_start(instance, start_graph.graph, problem.X)
        except ValueError as exc:
            if origin == "warm_start":
                raise ConfigError(f"The warm_start tree does not fit this model: {exc}") from None
            raise SelfCheckError(f"Self-check failed: the heuristic diagram does not fit the MILP ({exc})") from None
        if _side_constraints_on(module, hyper) and not _satisfies_constraints(instance):
            start_graph = None  # the start breaks a side constraint: no start, no cutoff
        steps[origin]["warm_start"] = start_graph is not None
    start_value = steps[origin]["objective"] if start_graph is not None else None
    lazy_cuts = hasattr(module, "separate")  # BendersOCT: no cutoff on a master being cut
    if start_graph is not None and capabilities["cutoff"] and not lazy_cuts:
        cutoff = start_value + (1e-6 if module.SENSE == "minimize" else -1e-6)
    cut_report = None
    if lazy_cuts:
        outcome, cut_report = solve_with_cuts(instance, module, solver, options, handoff,
                                              warm_start=start_graph is not None)
    else:
        user_cuts: Callable[[], list] | None = None
        if hasattr(module, "separate_cuts") and hyper.get("cuts") == "on":
            in_tree = handoff == "native" and capabilities["user_cuts"]
            counts = {"scheme": "branch_and_bound" if in_tree else "root", "cuts": 0, "rounds": 0}

            def counted() -> list:  # separations (rounds) and the cuts they return
                found = module.separate_cuts(instance)
                counts["rounds"] += 1
                counts["cuts"] += len(found)
                return found

            user_cuts, cut_report = counted, counts
        outcome = solve_instance(instance, solver, options, handoff=handoff,
                                 warm_start=start_graph is not None and capabilities["warm_start"],
                                 cutoff=cutoff, user_cuts=user_cuts)
    steps["milp"] = {"termination": outcome.termination, "seconds": outcome.solve_time,
                     "objective": outcome.objective, "bound": outcome.bound, "nodes": outcome.nodes}
    if isinstance(cut_report, dict):
        steps["milp"]["user_cuts"] = cut_report
    elif cut_report is not None:
        steps["milp"].update(dataclasses.asdict(cut_report))
    if not outcome.has_solution:
        if start_graph is None or outcome.termination not in ("infeasible", "time_limit", "optimal"):
            _raise_for_termination(outcome, solver, options, [
                f"{name}={hyper[name]}" for name in _side_constraints_on(module, hyper)])
        # nothing beats the start: proven when the cut-off model is infeasible
        proven = outcome.termination in ("infeasible", "optimal")
        steps["milp"]["bound"] = start_value if proven else outcome.bound
        if not proven:
            warnings.warn(f"{solver} found nothing better than the {origin.replace('_', ' ')} within the "
                          "time limit: that model is returned, not proven optimal.", OdtkWarning, stacklevel=3)
        return start_graph, outcome, build_time, "optimal" if proven else "time_limit"
    graph = problem.graph(module.decode(instance))
    if hasattr(module, "flow_rows"):
        _check_routing(module.flow_rows(instance), graph, problem.X, solver, hyper)
    expected, _ = problem.score(graph, shape, hyper)
    _self_check(module, expected, outcome, solver, hyper)
    if outcome.termination != "optimal":
        warnings.warn(f"{solver} stopped with status {outcome.termination}: the model is feasible "
                      "but not proven optimal.", OdtkWarning, stacklevel=3)
    if start_graph is not None and _better(module, start_value, expected):
        return start_graph, outcome, build_time, outcome.termination
    return graph, outcome, build_time, outcome.termination
