"""Minimum-depth and minimum-size consistent trees by incremental SAT.

Citation: F. Avellaneda, "Efficient Inference of Optimal Decision Trees", AAAI 2020
(algorithms ``DT_depth`` and ``DT_size``).

A *perfect* tree of depth k (every leaf at depth k, in heap order) must classify every
training example correctly; its encoding as clauses (1)–(10) over the variables X, F, C, U and
H is in :mod:`odtk.engines.sat_encoding`, and trees are nested tuples
(:mod:`odtk.engines.nested_trees`). Algorithm 3 adds examples lazily: solve, find a training
example the tree misclassifies, add its clauses only, repeat, keeping the solver and what it
learnt. The paper leaves open which misclassified example to add; odtk adds the first in row
order, the authors' code the first in class order (on the paper's car both need about 620
examples and the same time). ``DT_depth`` tries k = 1, 2, … until satisfiable, each depth with
a fresh solver and no example (as the authors' code does); ``DT_size`` then searches the number
of used leaves by dichotomy, on the solver of depth k, between 1 and the leaves of the best tree
found so far once simplified (the paper: 2^k; by Theorem 2 a tree with B leaves has a perfect
one with ≤ B used leaves, so the optimum is the same).

Two opt-in speed options depart from the paper (both off by default): ``examples_per_round=N``
adds up to N misclassified examples per SAT call instead of one, and ``keep_examples="on"``
starts depth k + 1 with the examples depth k needed. Both leave the optimum unchanged: the
search still stops only when a tree classifies every training example.

One departure makes the search *anytime* without changing the optimum: it starts from a
consistent tree, CART grown without a depth limit on the same binary features (on data where no
two equal rows disagree it classifies every row). Its depth bounds DT_depth from above: each
depth k found unsatisfiable proves the lower bound k + 1, and once that bound reaches the start's
depth the start is optimal and the remaining SAT call is skipped. DT_size minimises the size among
trees of the minimum depth (as the paper): the start is its answer until a SAT call finds a tree
of the minimum depth, and when the start itself has the minimum depth its leaves, not those of a
SAT answer, begin the dichotomy; its lower bound is 2d + 1 nodes for a proven depth d (a tree of
depth d has at least d + 1 leaves), then 2B + 1 once B leaves are proven too few. At the time
limit, or when the solve's budget is stopped by a signal, the search returns the best tree so far
with the status ``time_limit`` or ``interrupted`` and the proven bound; a start deeper than a
``depth`` cap is no answer. CART grows in a worker thread, past the deadline if need be; a
signal waits a second more for it, the only tree so far (:mod:`odtk.engines.sat_start`). A
depth whose clauses would break the memory rule or outlast the time left is not encoded
(:mod:`odtk.engines.sat_limits`): the search then returns its best tree with the status
``memory_limit`` or ``time_limit`` and says why. Only a SAT answer gives a perfect tree
(``SearchOutcome.perfect``): a start of depth d padded to one would have 2^(d+1) − 1 nodes
(:func:`~odtk.engines.nested_trees.perfect_copy` makes it).

Any backend answering ``solve(assumptions) -> set of true variables or None`` over DIMACS
clauses (:class:`Oracle`) works: a SAT solver from python-sat (kept between rounds), or a MILP
solver given the clauses as a feasibility model (``odtk.formulations.sat_clauses``, compiled
from the clause arrays by ``odtk.compiled.sat_clauses``).
"""
from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import networkx as nx
import numpy as np

from odtk.budget import Budget, Stopped
from odtk.engines.nested_trees import Tree, count_leaves, count_nodes, simplify, tree_depth
from odtk.engines.sat_encoding import CHUNK, PerfectTreeClauses, leaves_reached, perfect_tree
from odtk.engines.sat_limits import Backend, ClauseRoom, ClausesTooLarge
from odtk.engines.sat_start import grown_watched

KEY = "sat"
VARIANTS = {"sat-depth": {"minimize": "depth"}, "sat-size": {"minimize": "size"}}
CITATION = "Avellaneda, Efficient Inference of Optimal Decision Trees, AAAI 2020"
SENSE = "minimize"
FEATURES = "binary"
OBJECTIVE = "the depth (sat-depth) or node count (sat-size) of a tree classifying every row, minimised"
AUTO_THRESHOLDS = "midpoints"  # the tree must classify every row: keep all distinct values apart
SKELETON = "search"  # the depth is found, not given (``depth`` caps it)
HYPERPARAMETERS = {"examples_per_round": (1, 1_000_000, 1)}  # speed option; the paper adds one
CHOICES = {"encoding": ("incremental", "all-at-once"), "keep_examples": ("off", "on")}
SIDE_CONSTRAINTS: tuple[str, ...] = ()
SOLVER = None  # answered by a registered SAT or MILP solver (an oracle), not an own engine
DEFAULT_SOLVER = "minisat22"
MAX_DEPTH = 12  # the depths tried when there is no start and no cap
REPORT_SECONDS = 0.5  # progress goes to the budget at most this often (and on every new bound)


class Oracle(Backend, Protocol):
    """A satisfiability backend over DIMACS-numbered variables: ``add_clauses`` takes a 2-d array
    of literals, a clause per row, ``footprint`` the bytes it takes for that many clauses."""

    def solve(self, assumptions: list[int]) -> set[int] | None: ...


class TimeLimitReached(Exception):
    """The search (or its backend) must stop: its time is up, or a stop was asked for."""


class InvalidOptions(ValueError):
    """The options leave no tree to find (a depth cap below the minimum depth)."""


class InconsistentData(ValueError):
    """Two training rows (``rows``) have equal features and different classes."""

    def __init__(self, first: int, second: int):
        super().__init__(f"rows {first} and {second} have the same features but different classes")
        self.rows = (first, second)


@dataclass(frozen=True)
class SearchOutcome:
    """The smallest consistent tree found, how it was found and whether it is proven."""

    tree: Tree  # simplified (see ``simplify``)
    objective: int  # the depth (DT_depth) or the node count (DT_size)
    lower_bound: int  # proven: no tree the search looks for has a smaller objective
    status: str  # "optimal", "time_limit", "memory_limit" or "interrupted" (a signal)
    depth: int
    nodes: int
    rounds: int
    examples_encoded: int
    variables: int
    clauses: int
    seconds: float
    cpu_seconds: float  # of the whole process: the SAT solver runs in it
    # the perfect tree of the last satisfying assignment, before ``simplify``; None when the start is
    # the answer (padded to a perfect tree of its depth d it would have 2^(d+1) − 1 nodes)
    perfect: Tree | None
    source: str  # "sat" (a SAT answer) or "start" (the grown CART)
    limit: str  # what stopped the search before a proof, and the fix, when a rule of sat_limits did ("": none)


def inconsistent_pair(X: np.ndarray, y: np.ndarray) -> tuple[int, int] | None:
    """Two rows with equal features and different classes, if any (no tree separates them)."""
    _, first, rows = np.unique(np.asarray(X, dtype=bool), axis=0, return_index=True,
                               return_inverse=True)
    rows = rows.ravel()
    clash = np.flatnonzero(np.asarray(y) != np.asarray(y)[first[rows]])
    return None if len(clash) == 0 else (int(first[rows[clash[0]]]), int(clash[0]))


def search(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int | None = None,
           minimize: str = "depth", encoding: str = "incremental",
           oracle: Callable[[float], Oracle] | str = "minisat22",
           time_limit: float | None = None, examples_per_round: int = 1,
           keep_examples: str = "off", budget: Budget | None = None) -> SearchOutcome:
    """``DT_depth`` (``minimize="depth"``) or ``DT_size`` (``"size"``) on binary features, anytime.

    ``depth`` caps the depths tried; ``oracle`` is a python-sat solver name or a factory
    ``deadline -> Oracle``; ``encoding="all-at-once"`` encodes every example from the start.
    Speed options (the paper's algorithm by default): ``examples_per_round`` misclassified
    examples are added per SAT call instead of one; ``keep_examples="on"`` encodes the examples
    of depth k again at depth k + 1 from the start.

    The search stops at ``time_limit`` seconds, or when ``budget`` (an :class:`~odtk.budget.Budget`)
    says so (its deadline, or a signal), and then returns the best consistent tree found with the
    status ``"time_limit"`` or ``"interrupted"`` and the proven lower bound, or with ``"memory_limit"``
    (or ``"time_limit"``) when the next depth's clauses would break a rule of
    :mod:`odtk.engines.sat_limits`. Progress goes to ``budget.report`` at least every
    ``REPORT_SECONDS``. :class:`TimeLimitReached`, :class:`~odtk.engines.sat_limits.ClausesTooLarge`
    (or, on a signal, :class:`~odtk.budget.Stopped`) is raised only when the search stops without
    any tree: before CART has grown, or when ``depth`` is below the start's depth and no SAT call
    has answered yet.
    """
    X, y = np.asarray(X, dtype=bool), np.asarray(y)
    pair = inconsistent_pair(X, y)
    if pair is not None:
        raise InconsistentData(*pair)
    clock, cpu = time.monotonic(), time.process_time()
    deadline = clock + time_limit if time_limit is not None else float("inf")
    if budget is not None and budget.deadline is not None:
        deadline = min(deadline, budget.deadline)
    run = _Run(X, y, n_classes, minimize, Speed(encoding, examples_per_round, keep_examples == "on"),
               deadline, budget)
    run.make_oracle = (lambda limit: _sat_oracle(oracle, limit, run.poll)) if isinstance(oracle, str) else oracle
    try:
        run.grow_start(depth)
        found_depth = run.min_depth(depth if depth is not None else
                                    MAX_DEPTH if run.start is None else tree_depth(run.start))
        if minimize == "size":
            run.min_size(found_depth)
    except (TimeLimitReached, ClausesTooLarge, Stopped) as stop:
        run.halted(stop)
    finally:
        run.close()
    run.report(force=True)
    return run.outcome(time.monotonic() - clock, time.process_time() - cpu)


def _sat_oracle(name: str, deadline: float, stop: Callable[[], bool]) -> Oracle:
    from odtk.solvers.sat import SatOracle  # python-sat: the optional "sat" extra

    return SatOracle(name, deadline, stop)


@dataclass(frozen=True)
class Speed:
    """How examples enter the encoding: all at once, or lazily (Algorithm 3) with its options."""

    encoding: str = "incremental"
    per_round: int = 1
    keep: bool = False


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small clause lists are made."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Run:
    """One run of Algorithm 3 (with DT_depth / DT_size around it): the best tree so far, the
    proven bounds, and when to stop."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, minimize: str, speed: Speed,
                 deadline: float, budget: Budget | None):
        self.X, self.y, self.n_classes, self.minimize = X, y, n_classes, minimize
        self.speed, self.deadline, self.budget = speed, deadline, budget
        self.make_oracle: Callable[[float], Oracle] | None = None
        self.oracle: Oracle | None = None
        self.clauses: PerfectTreeClauses | None = None
        self.room = ClauseRoom()
        self.rounds, self.status, self.limit, self.reported = 0, "optimal", "", -float("inf")
        self.start: Tree | None = None  # the grown CART (grow_start)
        self.best: Tree | None = None  # the best tree, from the start or from a SAT answer
        self.source = "start"
        self.incumbent: int | None = None  # the best tree's objective
        self.depth_bound = 0  # proven: no consistent tree is shallower
        self.leaf_bound = 1  # proven (DT_size, at the minimum depth): no tree has fewer leaves

    def grow_start(self, cap: int | None) -> None:
        """The start: CART grown on the training rows (:func:`~odtk.engines.sat_start.grown_watched`),
        unless deeper than the ``cap``; then :class:`TimeLimitReached` if the search must stop."""
        start = grown_watched(self.X, self.y, self.budget)
        if start is not None and cap is not None and tree_depth(start) > cap:
            start = None  # deeper than the cap: not an answer
        self.start = self.best = start
        self.incumbent = None if start is None else self.objective(start)
        if self.poll():
            raise TimeLimitReached

    # -- DT_depth and DT_size ----------------------------------------------------------------
    def min_depth(self, max_depth: int) -> int:
        """DT_depth: k = 1, 2, … until a consistent perfect tree exists, or until the start's
        depth is proven minimal; returns the minimum depth."""
        start_depth = None if self.start is None else tree_depth(self.start)
        while start_depth is None or self.depth_bound < start_depth:
            k = max(self.depth_bound, 1)
            if k > max_depth:
                raise InvalidOptions(f"No consistent tree of depth ≤ {max_depth}; raise depth (--depth).")
            self._encode(k)
            tree = self._consistent([])
            if tree is not None:
                self.depth_bound = k
                self._record(tree)
                return k
            self.depth_bound = k + 1
            self._note(f"no consistent tree of depth {k}")
        return start_depth

    def min_size(self, depth: int) -> None:
        """DT_size: dichotomy on the number of used leaves at the minimum depth, between 1 and
        the leaves of the best tree."""
        assert self.best is not None, "min_depth found a tree first"
        low, high = 1, count_leaves(simplify(self.best, self.X))
        if low >= high:
            return
        clauses = self.clauses
        if clauses is None or clauses.depth != depth:
            clauses = self._encode(depth)  # the start has the minimum depth: no SAT call has used it yet
        self._add(clauses.leaf_counter())
        while low < high:
            middle = (low + high) // 2
            found = self._consistent(clauses.at_most_leaves(middle))
            if found is None:
                low = self.leaf_bound = middle + 1
                self._note(f"no consistent tree of depth {depth} with {middle} leaves or fewer")
            else:
                high = count_leaves(simplify(found, self.X))
                self._record(found)

    # -- Algorithm 3 and the encoding --------------------------------------------------------
    def _consistent(self, assumptions: list[int]) -> Tree | None:
        """Algorithm 3: solve; while the tree misclassifies examples, add one (or
        ``per_round``) of them and re-solve."""
        oracle, clauses = self.oracle, self.clauses
        assert oracle is not None and clauses is not None, "_encode made them"
        while True:
            if self.poll():
                raise TimeLimitReached
            self.rounds += 1
            true = oracle.solve(assumptions)
            if true is None:
                return None
            features, labels = clauses.decode(true)
            wrong = np.flatnonzero(labels[leaves_reached(features, self.X)] != self.y)
            if len(wrong) == 0:
                return perfect_tree(features, labels)
            self._add_examples(clauses, wrong[:self.speed.per_round])

    def _add(self, blocks: Iterable[np.ndarray]) -> None:
        """Hand clause arrays to the backend in chunks of at most ``CHUNK`` clauses, looking
        whether to stop, and keeping the memory rule, between two."""
        oracle, clauses = self.oracle, self.clauses
        assert oracle is not None and clauses is not None, "_encode made them"
        with _collector_paused():
            for block in blocks:
                for first in range(0, len(block), CHUNK):
                    if self.poll():
                        raise TimeLimitReached
                    self.room.hand(oracle, block[first:first + CHUNK], clauses.depth)

    def _add_examples(self, clauses: PerfectTreeClauses, rows: Iterable[int]) -> None:
        self._add(block for i in rows
                  for block in clauses.add_example(int(i), self.X[i], int(self.y[i])))

    def _encode(self, depth: int) -> PerfectTreeClauses:
        """A fresh backend with (1)–(2) at depth k, and the examples the options ask for, unless
        they would break a rule of :mod:`~odtk.engines.sat_limits`; the new clauses."""
        assert self.make_oracle is not None, "solve_sat sets it"
        kept = self.clauses.examples if self.clauses is not None and self.speed.keep else []
        examples = range(len(self.y)) if self.speed.encoding == "all-at-once" else kept
        self.close()
        self.clauses = clauses = PerfectTreeClauses(depth, self.X.shape[1], self.n_classes)
        self.oracle = self.make_oracle(self.deadline)
        (first, first_literals), (each, each_literals) = clauses.feature_clauses(), clauses.example_clauses()
        self.room.begin(self.oracle, depth, first + len(examples) * each,
                        first_literals + len(examples) * each_literals, self.deadline - time.monotonic())
        self._add(clauses.one_feature_per_node())
        self._add_examples(clauses, examples)
        return clauses

    def close(self) -> None:
        if self.oracle is not None and hasattr(self.oracle, "close"):
            self.oracle.close()
        self.oracle = None

    # -- the best tree, the bound, stopping and progress ---------------------------------------
    def objective(self, tree: Tree) -> int:
        """Depth (DT_depth) or node count (DT_size) of ``tree`` as shown."""
        shown = simplify(tree, self.X)
        return count_nodes(shown) if self.minimize == "size" else tree_depth(shown)

    def bound(self) -> int:
        """The proven lower bound on the objective: a tree of depth d has at least d + 1 leaves."""
        if self.minimize == "size":
            return max(2 * self.depth_bound + 1, 2 * self.leaf_bound - 1)
        return self.depth_bound

    def _record(self, tree: Tree) -> None:
        self.best, self.source, self.incumbent = tree, "sat", self.objective(tree)
        self._note(f"consistent tree of {self.minimize} {self.incumbent}")

    def _note(self, message: str) -> None:
        if self.budget is not None:
            self.budget.progress.note(f"{message} ({self.rounds} SAT calls)")
        self.report(force=True)

    def report(self, force: bool = False) -> None:
        """Incumbent, bound and SAT calls to the budget's progress, at most every REPORT_SECONDS."""
        now = time.monotonic()
        if self.budget is None or not force and now - self.reported < REPORT_SECONDS:
            return
        self.reported = now
        self.budget.report(incumbent=self.incumbent, bound=self.bound(), rounds=self.rounds)

    def poll(self) -> bool:
        """True when the search must stop (its deadline, or the budget's); reports progress."""
        self.report()
        return time.monotonic() >= self.deadline or (self.budget is not None and self.budget.should_stop())

    def halted(self, stop: BaseException) -> None:
        """The search stopped early: keep the best tree, or raise if there is none."""
        signal = stop.signum if isinstance(stop, Stopped) else self.budget.signal if self.budget else None
        if self.best is None or self.incumbent is None:  # set together by grow_start and _record
            raise stop if signal is None or isinstance(stop, Stopped) else Stopped(signal)
        if self.bound() >= self.incumbent:
            self.status = "optimal"
        elif signal is not None:
            self.status = "interrupted"
        elif isinstance(stop, ClausesTooLarge):
            self.status = stop.status
            self.limit = (f"The search stopped: {stop.reason}. The tree is the best found, not proven optimal; "
                          f"{stop.fix}.")
        else:
            self.status = "time_limit"

    def outcome(self, seconds: float, cpu_seconds: float) -> SearchOutcome:
        best, incumbent = self.best, self.incumbent
        assert best is not None and incumbent is not None, "halted() raises when no tree was found"
        tree = simplify(best, self.X)
        clauses = self.clauses
        return SearchOutcome(tree, incumbent, self.bound(), self.status, tree_depth(tree), count_nodes(tree),
                             self.rounds, len(clauses.examples) if clauses else 0,
                             clauses.variables if clauses else 0, clauses.n_clauses if clauses else 0,
                             seconds, cpu_seconds, best if self.source == "sat" else None, self.source,
                             self.limit)


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 minimize: str = "depth", **options) -> float:
    """Depth (``DT_depth``) or node count (``DT_size``) of a tree; inf if it errs on the data."""
    if np.any(np.asarray(predicted) != np.asarray(y)):
        return float("inf")
    leaves = [n for n, attrs in tree.nodes(data=True) if "label" in attrs]
    if minimize == "size":
        return float(2 * len(leaves) - 1)
    return float(max(nx.shortest_path_length(tree, 1, leaf) for leaf in leaves))
