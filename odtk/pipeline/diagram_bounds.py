"""Two valid lower bounds on ODD's objective (18), found apart from the full MILP.

Both bound the optimum of the whole problem from below; each is named (``SUBSET``, ``TREE``)
so that a solve can combine them with the MILP's own bound, the best being the largest.
Write f(D) = (1/W) Σ_i ω_i err_i(D) + α k(D) / |V_I| for diagram D, W = Σ_i ω_i its rows' total
weight and k(D) its active non-root nodes.

**Subset bound** (:func:`subset_bound`, every domain, tree mode too). Solve ODD on a subset S of
the rows, each row at its full-problem weight: since odtk divides the error by the total weight,
S is solved with α' = α W / W_S, whose objective f_S times W_S / W is
(1/W) Σ_{i∈S} ω_i err_i + α k / |V_I| ≤ f(D) for every diagram D (the terms left out are ≥ 0).
So (W_S / W) × (the solver's bound on S) is a lower bound on the full optimum, proven or not.
S grows as in the SAT paper's incremental example generation (Avellaneda, AAAI 2020,
Algorithm 3): from a small stratified subset, each round adds rows the round's sub-diagram
misclassifies or whose split margin ε it breaks (:func:`margin_breakers`), heaviest first, until
a round is not proven in the time left, or no such row is left outside S: the sub-diagram is then
a model of the MILP on every row whose objective equals the bound (a proof of its optimality when
no side constraint was dropped), and no larger S can raise the bound. Each round starts from the
diagram that scores best on S among those that fit it (the given start, the earlier sub-diagrams,
ODD's heuristic run on S), with its objective as cutoff, as every MILP step does.
Side constraints: parsimony (``max_nodes``) does not look at rows and is kept. Fairness (19),
stability (20) and the leaf size count rows over the whole data: a diagram meeting them on all
rows may break them on S (a subgroup's rate, a node's rows), so S's feasible set would not
contain the full one and its optimum would bound nothing. They are therefore dropped on S, which
makes each round a relaxation of the full problem: the bound stays valid (weaker), but the
sub-diagrams may break them, and no incumbent is returned then.

**Univariate tree bound** (:func:`tree_bound`, ``univariate=True`` only). A univariate split
a_j x_j ≥ b with margin ε sends the rows of a node to its sides by a threshold on x_j, so every
such partition is one of a midpoint threshold (or sends every row one way). A diagram of D
internal layers with k active non-root nodes unfolds into a tree of the same splits whose paths
pass at most one node per layer and the root plus at most k others: depth ≤ min(D, k + 1). Hence
f(D) ≥ E*(min(D, k + 1)) / W + α k / |V_I|, E*(d) the fewest weighted errors of a depth-d tree
over every midpoint threshold, and the bound is the minimum of this over k (k ≤ ``max_nodes`` − 1
when parsimony is set): the least over d = 1 … D of E*(d) / W + α (d − 1) / |V_I|. E*(d) comes
from odtk's CP search (depth = the levels of splits) or, where it does not finish, its proven
lower bound; as E* does not grow with d, each depth's bound also bounds the shallower ones. The
CP search counts rows, so weights must be whole numbers (merged rows' are: their number of rows;
other weights give no bound). Side constraints only remove diagrams: the bound stays valid.

Time and signals: each function runs within ``budget`` (the solve's :class:`~odtk.budget.Budget`,
at most ``seconds`` of it) or a number of seconds (a budget of its own, stopped by SIGINT, SIGTERM
and SIGHUP while it runs). A signal stops the running solve or search, which keeps its bound; the
best bound so far is returned with termination ``interrupted`` and the budget stays stopped, for
the caller to end. The figures of the inner solves (on S, or errors of trees) are not the
diagram's: they are kept off the status line, and their stages are shown as ``subset bound:
solving`` and so on.
"""
from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import networkx as nx
import numpy as np
import pandas as pd

from odtk.budget import Budget, BudgetView, Stopped, stop_on_signals
from odtk.datasets import FeatureEncoder
from odtk.exceptions import ConfigError, OdtkWarning, SolveError
from odtk.models import DecisionGraph
from odtk.pipeline import milp
from odtk.pipeline.check import refuting
from odtk.pipeline.encode import Problem
from odtk.pipeline.methods import defaults, side_constraints_on
from odtk.pipeline.start import Start, heuristic, majority_leaf
from odtk.solvers import SolverOptions

SUBSET, TREE = "subset", "tree"
HIDDEN = ("incumbent", "bound", "nodes", "searched", "rounds", "cuts")  # an inner solve's figures
ROW_COUNTING = ("fairness", "xi", "min_samples", "min_share", "min_leaf")  # dropped on a subset of the rows
FIRST_ROWS_PER_CLASS = 4  # the first subset: this many rows per class present (in proportion to weight)
GROWTH = 0.5  # a round adds at most this share of the subset's rows (at least one per class)
HEURISTIC_SECONDS = 0.1  # ODD's heuristic on each subset, for a start (at most half the time left)
MARGIN_TOLERANCE = 1e-9  # a split's margin may fall short of ε by this, as the warm start's refit allows


@dataclass(frozen=True)
class DiagramBound:
    """A valid lower bound on ODD's objective (18) for the whole problem, and how it was found.

    Attributes
    ----------
    name : str
        ``"subset"`` or ``"tree"``.
    value : float
        The bound: no diagram feasible for the problem scores below it.
    termination : str
        ``"optimal"`` (the method ran to its end: every tree search proven; the subset grown until
        its sub-diagram misclassified no other row and kept every split's margin on them),
        ``"time_limit"``, ``"interrupted"`` (a signal), ``"memory_limit"`` (a tree search would not
        fit in memory; ``steps["limit"]`` says why) or ``"error"`` (a subset solve's bound was
        refuted; the best bound before it is kept).
    seconds : float
        Wall seconds it took.
    graph : DecisionGraph or None
        The subset bound's best sub-diagram by its objective on every row, when it is feasible
        for the problem (no row-counting side constraint set); None otherwise.
    objective : float or None
        ``graph``'s objective (18) on every row.
    steps : dict
        What to record in ``result.steps``: each round (subset) or depth (tree).
    """

    name: str
    value: float
    termination: str
    seconds: float
    graph: DecisionGraph | None = None
    objective: float | None = None
    steps: dict[str, Any] = field(default_factory=dict)


class RowSubset(Problem):
    """``problem`` restricted to its rows ``rows`` (positions in ``problem.X``), each keeping its
    weight. Scores, hence the self-check of a solve on it, are on these rows."""

    def __init__(self, problem: Problem, rows: np.ndarray):
        vars(self).update(vars(problem))
        self.X, self.y = problem.X[rows], problem.y[rows]
        self.weights = {"sample_weight": row_weights(problem)[rows]}
        self.extra = {**problem.extra, **self.weights}
        if "group" in problem.extra:
            self.extra["group"] = np.asarray(problem.extra["group"])[rows]


def row_weights(problem: Problem) -> np.ndarray:
    """The weight of each of ``problem``'s rows (1 each without sample weights)."""
    given = problem.weights.get("sample_weight")
    return np.ones(len(problem.y)) if given is None else np.asarray(given, dtype=float)


class _Within(BudgetView):
    """A solve's budget as a bound sees it: the same stop rule, waiting and progress, a deadline at
    most ``seconds`` away (moving with the budget's excluded stages, as its own does), the inner
    solves' figures kept off the status line and their stages named after the bound."""

    remaining = Budget.remaining
    share = Budget.share
    expired = Budget.expired
    should_stop = Budget.should_stop

    def __init__(self, budget: Budget, seconds: float | None, name: str):
        super().__init__(budget, HIDDEN)
        self._offset = None if seconds is None else time.monotonic() + max(seconds, 0.0) - budget.started
        self._name = name

    @property
    def deadline(self) -> float | None:
        ends = [self._budget.deadline, None if self._offset is None else self._budget.started + self._offset]
        return min((end for end in ends if end is not None), default=None)

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return self._budget.stage(f"{self._name} bound: {name}")


@contextlib.contextmanager
def _within(budget: Budget | float | None, seconds: float | None, name: str) -> Iterator[Budget]:
    """The budget bound ``name`` runs under: ``budget`` (at most ``seconds`` of it), or a budget of
    ``budget`` seconds of its own (None: no limit) that signals stop while the bound runs."""
    if isinstance(budget, Budget):
        yield cast(Budget, _Within(budget, seconds, name))
        return
    own = Budget(budget)
    with stop_on_signals(own):
        yield cast(Budget, _Within(own, seconds, name))


def _ended(budget: Budget, finished: bool) -> str:
    """The termination of a bound that ran to its end (``finished``) or was stopped."""
    return "optimal" if finished else "interrupted" if budget.stop_requested else "time_limit"


# -- the subset bound ---------------------------------------------------------------------------
def subset_bound(problem: Problem, shape: nx.DiGraph, hyper: dict[str, Any], solver: str,
                 options: SolverOptions, budget: Budget | float | None = None, *, seconds: float | None = None,
                 start: DecisionGraph | None = None, first_rows: int | None = None, seed: int = 0,
                 handoff: str = "native") -> DiagramBound | None:
    """The subset bound (module docstring): ODD solved on growing subsets of ``problem``'s rows.

    Parameters
    ----------
    problem, shape, hyper
        The ODD problem as the solve holds it (rows merged or not), its skeleton and options.
    solver, options, handoff
        The MILP solver of each subset solve and its options (their time limit is the budget's).
    budget, seconds
        The time it may take: the solve's Budget (at most ``seconds`` of it), or a number of seconds.
    start : DecisionGraph, optional
        A diagram feasible for the problem (e.g. the heuristic's), tried as each solve's MIP start.
    first_rows : int, optional
        Rows of the first subset, stratified by class (default: ``FIRST_ROWS_PER_CLASS`` per class);
        all rows or more: the full MILP.
    seed : int
        The order of rows of equal weight (:func:`row_order`); the heuristic's seed on each subset.

    Returns
    -------
    DiagramBound or None
        None when no solve ended with a bound (stopped first).
    """
    with _within(budget, seconds, SUBSET) as watch:
        growth = _Growth(problem, shape, hyper, solver, options, handoff, watch, start, seed)
        size = FIRST_ROWS_PER_CLASS * len(problem.classes) if first_rows is None else first_rows
        rows: np.ndarray | None = first_subset(problem, size, growth.order)
        try:
            while rows is not None and not watch.should_stop():
                rows = growth.round(rows)
        except Stopped:
            pass
        return growth.outcome()


def row_order(problem: Problem, seed: int) -> np.ndarray:
    """``problem``'s rows of positive weight, heaviest first, rows of equal weight in a seeded random
    order: the order in which the subset bound takes rows."""
    weight = row_weights(problem)
    order = np.random.default_rng(seed).permutation(len(weight))
    order = order[np.argsort(-weight[order], kind="stable")]
    return order[weight[order] > 0]


def first_subset(problem: Problem, size: int, order: np.ndarray) -> np.ndarray:
    """About ``size`` rows, the first in ``order`` of each class, each class present in proportion to
    its weight (at least one row); all the rows in ``order`` if there are no more."""
    weight, y = row_weights(problem), problem.y
    if size >= len(order):
        return np.sort(order)
    share = np.bincount(y, weights=weight, minlength=len(problem.classes)) / weight.sum()
    quota = np.where(share > 0, np.maximum(np.round(size * share), 1), 0).astype(int)
    return np.sort(np.concatenate([order[y[order] == k][:quota[k]] for k in range(len(quota))]))


class _Growth:
    """The rounds of the subset bound: the best bound so far, the diagrams that may start a round
    (the given start, the sub-diagrams), the best sub-diagram that fits every row, and the
    objectives of the models feasible for the relaxed problem that every round bounds (the given
    start and the majority leaf), which refute a false bound."""

    def __init__(self, problem: Problem, shape: nx.DiGraph, hyper: dict[str, Any], solver: str,
                 options: SolverOptions, handoff: str, budget: Budget, start: DecisionGraph | None, seed: int):
        self.problem, self.shape, self.hyper, self.seed = problem, shape, hyper, seed
        self.solver, self.options, self.handoff, self.budget = solver, options, handoff, budget
        self.weight, self.order = row_weights(problem), row_order(problem, seed)
        module = problem.module
        default = defaults(module)
        self.dropped = [name for name in side_constraints_on(module, hyper) if name in ROW_COUNTING]
        self.relaxed = {**hyper, **{name: default[name] for name in ROW_COUNTING}}
        self.starts = [] if start is None else [start]
        models = [*(graph for graph in self.starts if self._fits(graph, problem.X)),
                  majority_leaf(problem, shape, hyper)[0]]
        self.scores = [problem.score(graph, shape, hyper)[0] for graph in models]
        self.began = time.perf_counter()
        self.value: float | None = None
        self.best: tuple[float, DecisionGraph] | None = None  # the best sub-diagram fitting every row
        self.rounds: list[dict[str, Any]] = []
        self.finished = self.refuted = False

    def round(self, rows: np.ndarray) -> np.ndarray | None:
        """Solve ODD on ``rows``; the rows of the next round, or None when the growth ends."""
        began = time.perf_counter()
        share = self.weight[rows].sum() / self.weight.sum()
        found = self._solved(RowSubset(self.problem, rows), {**self.relaxed, "alpha": self.hyper["alpha"] / share})
        step: dict[str, Any] = {"rows": len(rows), "termination": "time_limit", "bound": None}
        self.rounds.append(step)
        if found is None:
            step["seconds"] = time.perf_counter() - began
            return None
        bound = None if found.bound is None else float(found.bound * share)
        objective = self.problem.score(found.graph, self.shape, self.hyper)[0]
        breaking = margin_breakers(found.graph, self.problem.X, self.hyper["epsilon"], self.hyper["domain"])
        if not breaking.any() and (self.best is None or objective < self.best[0]):
            self.best = (objective, found.graph)
        self.starts.append(found.graph)
        step.update(termination=found.termination, bound=bound, objective=objective, fits=not breaking.any(),
                    seconds=time.perf_counter() - began)
        if bound is not None and refuting(self.problem.module, "time_limit", bound, self.scores) is not None:
            self.refuted = step["refuted"] = True
            return None
        if bound is not None and (self.value is None or bound > self.value):
            self.value = bound
        if found.termination != "optimal":
            return None
        return self._grown(rows, (found.graph.predict_index(self.problem.X) != self.problem.y) | breaking)

    def _solved(self, subset: RowSubset, hyper: dict[str, Any]) -> milp.MilpResult | None:
        """The MILP on ``subset`` (its warnings are not the user's), started from the diagram that
        scores best on it among those that fit its rows (the known ones, the heuristic's on it),
        or from the next when one does not fit after all, the majority leaf last; None when the
        solver found no diagram within ``max_nodes`` in the time left."""
        graph, _ = heuristic(subset, self.shape, hyper, HEURISTIC_SECONDS, self.seed, self.budget)
        candidates = [graph for graph in [*self.starts, graph] if self._fits(graph, subset.X)]
        scored = sorted((subset.score(graph, self.shape, hyper)[0], k) for k, graph in enumerate(candidates))
        leaf, step = majority_leaf(subset, self.shape, hyper)
        starts = [*(Start(candidates[k], "warm_start", objective) for objective, k in scored),
                  Start(leaf, "leaf", step["objective"])]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OdtkWarning)
            for start in starts:
                try:
                    return milp.run(subset, self.shape, hyper, self.solver, self.options, self.handoff, start,
                                    {"warm_start": {}}, self.budget)
                except ConfigError:
                    if start.origin == "leaf":  # not a start that does not fit
                        raise
                except SolveError:
                    return None
        return None

    def _fits(self, graph: DecisionGraph, X: np.ndarray) -> bool:
        """Whether ``graph`` is a MIP start for the rows ``X``: a split (a leaf is none), at most
        ``max_nodes`` internal nodes, every split's margin kept."""
        internal = _internal_nodes(graph)
        return (0 < internal and (self.hyper["max_nodes"] is None or internal <= self.hyper["max_nodes"])
                and not margin_breakers(graph, X, self.hyper["epsilon"], self.hyper["domain"]).any())

    def _grown(self, rows: np.ndarray, conflicting: np.ndarray) -> np.ndarray | None:
        """``rows`` and the first ``conflicting`` rows outside them in the subset's row order; None
        when there are none (the sub-diagram is then optimal on every row of the relaxed problem,
        so no larger subset can raise the bound)."""
        outside = np.ones(len(self.weight), bool)
        outside[rows] = False
        wrong = self.order[(outside & conflicting)[self.order]]
        if not len(wrong):
            self.finished = True
            return None
        added = wrong[:max(len(self.problem.classes), int(GROWTH * len(rows)))]
        return np.sort(np.concatenate([rows, added]))

    def outcome(self) -> DiagramBound | None:
        """The best bound and, when feasible for the problem, the best sub-diagram; None without a bound."""
        if self.value is None:
            return None
        termination = "error" if self.refuted else _ended(self.budget, self.finished)
        graph, objective = (None, None) if self.best is None or self.dropped else (self.best[1], self.best[0])
        return DiagramBound(SUBSET, self.value, termination, time.perf_counter() - self.began, graph, objective,
                            {"bound": self.value, "termination": termination, "dropped": self.dropped,
                             "rounds": self.rounds})


def margin_breakers(graph: DecisionGraph, X: np.ndarray, epsilon: float, domain: str) -> np.ndarray:
    """Which rows of ``X`` break the margin ε of a split they pass: at each node, its direction
    scaled to the domain's edge (‖a‖_∞ = 1 on the box and for univariate splits, ‖a‖₁ = 1 under
    ``l1``), the rows of either side closer than ε to the other side's nearest row. Where no row
    does, every split fits (13)–(14) for its rows (the warm start refits it), and the diagram is a
    model of the MILP on these rows."""
    breaking = np.zeros(len(X), bool)
    for node, rows in graph.node_rows(X).items():
        attrs = graph.graph.nodes[node]
        weights = np.asarray(attrs.get("weights", ()), dtype=float)
        norm = np.abs(weights).sum() if domain == "l1" else np.abs(weights).max(initial=0.0)
        if not len(rows) or norm == 0:
            continue
        value = X[rows] @ (weights / norm)
        positive = value >= attrs["threshold"] / norm
        if positive.all() or not positive.any():
            continue
        low, high = value[~positive].max(), value[positive].min()
        near = np.where(positive, value < low + epsilon - MARGIN_TOLERANCE, value > high - epsilon + MARGIN_TOLERANCE)
        breaking[np.asarray(rows)[near]] = True
    return breaking


def _internal_nodes(graph: DecisionGraph) -> int:
    """The internal nodes of ``graph``, the root included (as ``max_nodes`` counts them)."""
    return sum(1 for _, attrs in graph.graph.nodes(data=True) if "label" not in attrs)


# -- the univariate tree bound ------------------------------------------------------------------
def tree_bound(problem: Problem, shape: nx.DiGraph, hyper: dict[str, Any], budget: Budget | float | None = None,
               *, seconds: float | None = None) -> DiagramBound | None:
    """The univariate tree bound (module docstring): min over d of E*(d) / W + α (d − 1) / |V_I|.

    Parameters
    ----------
    problem, shape, hyper
        The ODD problem as the solve holds it (rows merged or not), its skeleton and options.
    budget, seconds
        The time it may take: the solve's Budget (at most ``seconds`` of it), or a number of seconds.
        Each depth, from 1 up, gets an equal share of the time left.

    Returns
    -------
    DiagramBound or None
        None without ``univariate=True`` or with weights that are not whole numbers.
    """
    weight = row_weights(problem)
    if not hyper.get("univariate") or not np.array_equal(weight, np.round(weight)):
        return None
    from odtk.engines import cp_search

    began = time.perf_counter()
    layers = len(shape.graph["widths"])
    deepest = layers if hyper.get("max_nodes") is None else min(layers, int(hyper["max_nodes"]))
    common = int(np.gcd.reduce(weight.astype(np.int64)))  # errors scale with it: fewer repeated rows
    X = _thresholded(problem.X)
    lower: dict[int, int] = {}
    depths: list[dict[str, Any]] = []
    steps: dict[str, Any] = {"depths": depths}
    with _within(budget, seconds, TREE) as watch:
        try:
            for depth in range(1, deepest + 1):
                left = watch.remaining()
                with watch.stage(f"depth {depth}"):
                    found = cp_search.search(X, problem.y, len(problem.classes), depth,
                                             time_limit=None if left is None else left / (deepest - depth + 1),
                                             budget=watch, sample_weight=weight / common)
                lower[depth] = found.lower_bound * common
                depths.append({"depth": depth, "status": found.status, "lower_bound": lower[depth],
                               "error": found.error * common, "seconds": found.seconds})
                if watch.should_stop():
                    break
        except Stopped:
            pass
        except cp_search.InvalidOptions as exc:  # the arrays of a deeper search exceed the memory
            steps["limit"] = str(exc)
        finished = len(depths) == deepest and all(step["status"] == "optimal" for step in depths)
        termination = "memory_limit" if "limit" in steps else _ended(watch, finished)
    value = _tree_value(lower, deepest, float(weight.sum()), hyper["alpha"], len(shape) - 1)
    steps.update(bound=value, termination=termination)
    return DiagramBound(TREE, value, termination, time.perf_counter() - began, steps=steps)


def _thresholded(X: np.ndarray) -> np.ndarray:
    """``X`` as 0/1 columns ``x_j <= t``, one per midpoint t of column j's distinct values."""
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    encoder = FeatureEncoder(mode="binary", thresholds="midpoints")
    return encoder.fit(frame, kinds={name: "numeric" for name in frame.columns}).transform(frame)


def _tree_value(lower: dict[int, int], deepest: int, total: float, alpha: float, non_root: int) -> float:
    """min over d = 1 … ``deepest`` of E(d) / W + α (d − 1) / |V_I|, E(d) the largest proven lower
    bound on the errors at depth d or deeper (0 where none), W = ``total``, |V_I| = ``non_root``."""
    terms = []
    for depth in range(1, deepest + 1):
        errors = max((lower[d] for d in lower if d >= depth), default=0)
        terms.append(errors / total + (alpha * (depth - 1) / non_root if non_root else 0.0))
    return float(min(terms))


__all__ = ["DiagramBound", "RowSubset", "SUBSET", "TREE", "first_subset", "margin_breakers", "row_order",
           "row_weights", "subset_bound", "tree_bound"]

