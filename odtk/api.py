"""``odtk.solve``: the one entry point behind the estimators, the CLI and experiments.

A solve runs as stages (:mod:`odtk.pipeline`): check the options, encode the data, find a
starting model, build and solve the MILP (or run odtk's own search), decode and self-check.
One :class:`~odtk.budget.Budget` covers all of them (60 s by default): every solve ends, and
its result is the best model found, with status, bound and gap. A signal (Ctrl-C; SIGTERM
and SIGHUP when the CLI runs it) stops the solve in any stage: the best model found so far is
returned with termination ``interrupted``.
"""
from __future__ import annotations

import signal
import time
from typing import Any

import networkx as nx

from odtk import _environment
from odtk.budget import DEFAULT_TIME_LIMIT, Budget, Stopped, stop_on_signals
from odtk.exceptions import ConfigError
from odtk.model_checks import training_summary
from odtk.models import DecisionGraph, TrainedModel
from odtk.pipeline import search
from odtk.pipeline.aggregate import distinct_rows
from odtk.pipeline.check import gap, honest_bound
from odtk.pipeline.encode import Problem, as_dataset, group_vector, sample_weight_of
from odtk.pipeline.methods import (STRATEGIES, available_models, defaults, engine_settings, hyperparameters,
                                   is_engine, method, skeleton_of, solver_for, starts_from_tree, strategy_of)
from odtk.pipeline.start import (WARM_STARTS, Start, default_start, given_start, heuristic, majority_leaf,
                                 topology_start)
from odtk.progress import Progress, check_mode
from odtk.results import SolveResult
from odtk.solvers import SolverOptions, SolverOutcome, model_settings
from odtk.solvers.options import MAX_SECONDS

# a setting's name elsewhere (scikit-learn, the CLI, older odtk) → odtk.solve's name and the CLI's flag
MISNAMED = {"gap": ("mip_gap", "--gap"), "log": ("verbose", "--verbose"), "max_depth": ("depth", "--depth"),
            "random_state": ("seed", "--seed"), "n_jobs": ("threads", "--threads")}

__all__ = ["DEFAULT_TIME_LIMIT", "STRATEGIES", "WARM_STARTS", "as_dataset", "available_models", "check_options",
           "model_options", "solve", "takes_warm_start"]


def model_options(model: str) -> dict[str, Any]:
    """The options of ``model`` (its hyper-parameters and choices) with their defaults."""
    return defaults(method(model))


def takes_warm_start(model: str) -> bool:
    """Whether ``model`` is a MILP on binary features that starts from a given tree."""
    return starts_from_tree(method(model))


def check_options(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against ``model``'s (ConfigError naming the problem), with defaults."""
    return hyperparameters(method(model), options)


class _Best:
    """The best model a solve holds so far, and what it is: what a stop returns."""

    def __init__(self) -> None:
        self.graph: DecisionGraph | None = None
        self.termination = "heuristic"
        self.outcome: SolverOutcome | None = None
        self.bound: float | None = None  # the MILP's checked bound (None: none stated, or one refuted)
        self.build_time = 0.0

    def hold(self, graph: DecisionGraph, termination: str) -> None:
        self.graph, self.termination = graph, termination


def solve(model: str, data: Any, *, target: str | int | None = None, depth: int | None = None,
          skeleton: str | nx.DiGraph | None = None, solver: str | None = None,
          time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None, threads: int | None = None,
          seed: int | None = None, verbose: bool = False, handoff: str = "native",
          thresholds: str = "auto", max_thresholds: int | None = None,
          groups: str | list[str] | None = None,
          strategy: str | None = None, heuristic_time: float = 5.0, warm_start: Any = "auto",
          positive_class: Any = None, sample_weight: Any = None, progress: str = "off",
          budget: Budget | None = None, **hyperparameters: Any) -> SolveResult:
    """Learn an optimal tree or diagram with formulation ``model`` and return the verified result.

    ``data`` is a bundled dataset name, a :class:`~odtk.datasets.Dataset`, a DataFrame
    (with ``target``) or a tuple ``(X, y)`` as scikit-learn takes them (:mod:`odtk.datasets.inputs`:
    ``X`` a DataFrame, a 2-D array or a scipy sparse matrix, made dense; ``y`` a label per row, or
    one column with scikit-learn's ``DataConversionWarning``); a column of dates is refused with
    the fix (convert it to numbers, or drop it). Hyper-parameters are the formulation's own
    (FlowOCT: ``lam``; ODD: ``alpha``, ``epsilon``, ``univariate``, ``tree``, …; CP search:
    ``min_support``, ``counting_depth``; SAT inference: ``encoding``). ``solver`` defaults to
    HiGHS for the MILPs; the CP search (``model="cp"``) runs odtk's own engine and takes no
    solver; ``sat-depth`` / ``sat-size`` take a SAT solver (default ``minisat22``) or any MILP
    solver, and ``depth`` caps the depths they try.

    ``mip_gap``, ``threads``, ``seed`` and ``verbose`` are the command line's ``--gap``,
    ``--threads``, ``--seed`` and ``--verbose``; their other spellings (``gap``, ``log``,
    ``max_depth``, ``random_state``, ``n_jobs``) raise a ConfigError naming the right one.
    ``time_limit`` (default 60 s; None for no limit) covers the whole call: encoding, starting
    models, heuristic, build, hand-off, solve, decoding and checks. At the limit the result is
    the best model found (termination ``time_limit``), with its bound and gap; Ctrl-C returns
    it too (termination ``interrupted``). ``progress``: ``"off"`` (default), ``"auto"`` (a
    status line when standard error is a terminal), ``"bar"`` or ``"lines"``; ``verbose=True``
    prints a line per step and the solver's log. ``budget`` (instead of ``time_limit``): a
    :class:`~odtk.budget.Budget` made earlier, e.g. before reading the data.

    ``strategy`` (models with a heuristic): ``"heuristic"``, ``"milp"`` or ``"both"``
    (default). ``groups`` names the protected-group column (two values) for fairness
    constraints, or two 0/1 subgroup columns ``[g1, g2]``, which may overlap.
    ``warm_start`` (tree models on binary features): ``"auto"`` (default: ``"best"``), ``"best"``
    for scikit-learn's CART of the same depth or the CP search's tree (given a share of the
    budget, at most 10 s), whichever scores better, ``"cart"``, ``None`` (no start), or a tree
    learned on the same data (SolveResult, TrainedModel, DecisionGraph).
    ``thresholds``: ``"auto"`` (default: about ten quantiles plus CART's thresholds, capped for
    the CP search by the data's size; every midpoint for the SAT models, which must classify every
    row), ``"midpoints"`` (every one, or ``max_thresholds`` evenly spaced), ``"quantiles"`` or
    ``"values"`` (``x > v``); see :class:`~odtk.datasets.FeatureEncoder`.
    The categorical model (``model="categorical"``) learns binary classifiers on any topology:
    ``skeleton`` is one of ``depth-2``, ``depth-2.5``, ``depth-3``, ``imbalanced`` or a
    ``networkx.DiGraph``; ``positive_class`` names its positive class (default: the second
    in sorted order); its options are ``class_weight``, ``max_card`` (with ``max_card_ordinal``),
    ``rate`` with ``min_rate``, ``min_leaf`` (rows every leaf receives, at least), ``numeric``,
    ``feature_selection`` (with ``min_groups`` and ``selection_share``), the improvement
    switches and ``configuration``, one of the paper's named sets of them (``"all"``,
    ``"nothing"``, ``"no-anchor"``, ``"no-relax"``, ``"no-strength"``).
    ``sample_weight`` (the MILPs: FlowOCT, BendersOCT, BinOCT, OCT, ODD, categorical): a
    non-negative weight per training row, which multiplies the row's term in the objective
    (default: 1 each; ODD's error rate becomes the weighted error over the total weight); side
    constraints (OCT's ``min_leaf``, ODD's fairness, stability and ``min_leaf``, the categorical ``min_rate``)
    keep counting rows; ODD's heuristic weighs its counts too. The CP search takes whole-number
    weights (a row of weight w counts as w rows, in ``min_support`` too).
    The MILPs see rows alike in encoded features, class and group once, weighted by their number
    (or summed weights): the same optimum from fewer rows (``n_distinct`` of the result), except
    with the options whose constraints count rows (:mod:`odtk.pipeline.aggregate`). The model is
    scored on every row.
    """
    _environment.warn_set_aside()
    _check_names(hyperparameters)
    check_mode(progress)  # checked even where verbose=True overrides it
    if budget is None:
        budget = Budget(time_limit, Progress("lines" if verbose else progress))
        owned = True
    else:
        owned = False
    try:
        with stop_on_signals(budget, (signal.SIGINT,)):
            return _solve(model, data, target, depth, skeleton, solver, mip_gap, threads, seed, verbose, handoff,
                          thresholds, max_thresholds, groups, strategy, heuristic_time, warm_start,
                          positive_class, sample_weight, hyperparameters, budget)
    finally:
        if owned:
            budget.progress.close()


def _solve(model, data, target, depth, skeleton, solver, mip_gap, threads, seed, verbose, handoff, thresholds,
           max_thresholds, groups, strategy, heuristic_time, warm_start, positive_class, sample_weight,
           given, budget: Budget) -> SolveResult:
    wall = time.perf_counter()
    module = method(model)
    hyper = hyperparameters(module, given)
    strategy = strategy_of(module, strategy, hyper)
    solver = solver_for(module, solver, mip_gap, threads)
    hyper.update(engine_settings(model))
    options = SolverOptions(time_limit=budget.seconds, mip_gap=mip_gap, threads=threads, seed=seed, log=verbose,
                            settings=model_settings(solver, model))
    _check_heuristic_time(heuristic_time)
    shape = skeleton_of(module, depth, skeleton, hyper)
    if shape.graph["kind"] in ("tree", "search", "topology"):
        depth = shape.graph["depth"]
        skeleton = shape.graph.get("name", skeleton)
    else:
        skeleton = "-".join(map(str, shape.graph["widths"]))
    with budget.stage("encoding"):
        dataset = as_dataset(data, target)
        problem = Problem(module, dataset, thresholds, max_thresholds, group_vector(dataset, groups, module),
                          positive_class, sample_weight_of(module, sample_weight, len(dataset.target)),
                          depth, seed, budget.remaining())
    budget.progress.note(f"{len(problem.y)} rows encoded as {problem.X.shape[1]} {module.FEATURES} columns "
                         f"in {time.perf_counter() - wall:.1f}s")
    rows = problem if is_engine(module) else distinct_rows(problem, hyper)
    if rows is not problem:
        budget.progress.note(f"{len(problem.y)} rows merged into {len(rows.y)} distinct weighted rows")
    steps: dict[str, dict] = {}
    best = _Best()
    try:
        _train(rows, shape, hyper, solver, options, handoff, strategy, heuristic_time, warm_start, seed,
               steps, best, budget)
    except Stopped as stop:
        if best.graph is None:
            signum = stop.signum if budget.signal is None else budget.signal
            raise KeyboardInterrupt if signum == signal.SIGINT else Stopped(signum) from None
        best.termination = "interrupted"
    if budget.stop_requested and best.termination not in ("interrupted",):
        best.termination = "interrupted"
    return _result(model, module, problem, dataset, shape, hyper, solver, skeleton, depth, steps, best, wall, budget,
                   None if rows is problem else len(rows.y))


def _train(problem: Problem, shape: nx.DiGraph, hyper: dict, solver: str, options: SolverOptions, handoff: str,
           strategy: str, heuristic_time: float, warm_start: Any, seed: int | None, steps: dict, best: _Best,
           budget: Budget) -> None:
    """Start, then search or solve; ``best`` holds the best model at every moment."""
    model = problem.module.KEY
    if is_engine(problem.module):
        if warm_start not in (None, "auto"):
            raise ConfigError(f"Model {model!r} takes no warm_start tree; drop warm_start=….")
        graph, termination = search.run(problem, shape, hyper, solver, options, steps, budget)
        best.hold(graph, termination)
        return
    start = _start(problem, shape, hyper, strategy, heuristic_time, warm_start, seed, steps, best, budget)
    if strategy == "heuristic" or budget.stop_requested:  # a signal during the start: return the start
        return
    from odtk.pipeline import milp  # Pyomo: only for the MILPs

    found = milp.run(problem, shape, hyper, solver, options, handoff, start, steps, budget)
    best.hold(found.graph, found.termination)
    best.outcome, best.bound, best.build_time = found.outcome, found.bound, found.build_time


def _start(problem: Problem, shape: nx.DiGraph, hyper: dict, strategy: str, heuristic_time: float,
           warm_start: Any, seed: int | None, steps: dict, best: _Best, budget: Budget) -> Start:
    """The model the MILP starts from (and the result of ``strategy="heuristic"``)."""
    if warm_start == "auto":
        warm_start = default_start(problem)
    origin = "leaf"
    if strategy in ("heuristic", "both"):
        graph, steps["heuristic"] = heuristic(problem, shape, hyper, heuristic_time, seed, budget)
        origin = "heuristic"
    if warm_start == "topology":
        started = topology_start(problem, shape, hyper, seed, budget)
        if started is not None:  # None: no grown tree meets min_leaf, the MILP starts without one
            graph, steps["warm_start"] = started
            origin = "warm_start"
    elif warm_start is not None:
        graph, steps["warm_start"] = given_start(problem, warm_start, shape, hyper, seed, budget)
        origin = "warm_start"
    if origin == "leaf":
        graph, step = majority_leaf(problem, shape, hyper)
    else:
        step = steps[origin]
        budget.progress.note(f"{origin.replace('_', ' ')}: objective {step['objective']:.6g} in {step['seconds']:.1f}s")
    best.hold(graph, "heuristic" if origin == "heuristic" else "time_limit")
    return Start(graph, origin, step["objective"])


def _result(model: str, module, problem: Problem, dataset, shape: nx.DiGraph, hyper: dict, solver: str,
            skeleton, depth, steps: dict, best: _Best, wall: float, budget: Budget,
            distinct: int | None) -> SolveResult:
    """The verified result of the solve, from the best model held, scored on the original rows
    (``distinct``: the rows the MILP saw once duplicates were merged, None if none were)."""
    graph = best.graph
    assert graph is not None, "solve holds a start model before anything can stop it"
    objective, accuracy = problem.score(graph, shape, hyper)
    if hasattr(module, "rates_of") and "milp" in steps:
        steps["milp"].update(module.rates_of(graph.predict_index(problem.X), problem.y))
    outcome = best.outcome
    if "milp" in steps:
        bound = honest_bound(module, best.bound, problem.y, shape, hyper, problem.weights)
    else:
        bound = steps.get("search", {}).get("bound")
    trained = TrainedModel(graph, problem.encoder, list(problem.classes), model,
                           target=str(dataset.target.name),
                           summary={"dataset": dataset.name, "skeleton": skeleton, "depth": depth, **hyper,
                                    "termination": best.termination, "objective": objective, "bound": bound},
                           training=training_summary(graph, problem.X, problem.y))
    if budget.signal is not None:
        steps["stopped"] = {"signal": signal.Signals(budget.signal).name, "objective": objective,
                            "seconds": budget.elapsed()}
    return SolveResult(
        method=model, solver=solver if outcome or is_engine(module) else "heuristic",
        solver_version=outcome.version if outcome else "", termination=best.termination,
        objective=objective, bound=bound, gap=gap(objective, bound),
        build_time=best.build_time or budget.spent.get("building", 0.0),  # stopped while building: so far
        handoff_time=outcome.handoff_time if outcome else 0.0,
        solve_time=outcome.solve_time if outcome else steps.get("search", {}).get("seconds", 0.0),
        wall_time=time.perf_counter() - wall, size=outcome.size if outcome else None,
        n_samples=len(problem.y), n_distinct=distinct, train_accuracy=accuracy,
        options=outcome.native if outcome else {},
        hyperparameters={"skeleton": skeleton, "depth": depth, **hyper}, model=trained,
        message=outcome.message if outcome else "", steps=steps,
        objective_meaning=getattr(module, "OBJECTIVE", ""),
    )


def _check_names(given: dict[str, Any]) -> None:
    """A ConfigError for a setting given under another vocabulary's name (``gap=``: ``mip_gap=``)."""
    for name, (right, flag) in MISNAMED.items():
        if name in given:
            raise ConfigError(f"odtk.solve has no option {name!r}; write {right}=… (the CLI's {flag}).")


def _check_heuristic_time(seconds: Any) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_SECONDS:
        raise ConfigError(f"heuristic_time (--heuristic-time) must be a number of seconds above 0 and at most "
                          f"{MAX_SECONDS:g}, got {seconds!r}.")
