"""Depth-limited optimal classification trees by AND/OR search with caching and bounds.

Citation: H. Verhaeghe, S. Nijssen, G. Pesant, C.-G. Quimper, P. Schaus, "Learning optimal
decision trees using constraint programming", Constraints 25 (2020) 226–250.

Problem: on binary features, a tree of depth at most ``D`` whose leaves each cover at least
``N_min`` training samples (the CoverSize constraint), with the fewest misclassified samples.

The search runs over itemsets — the decisions ``x_f = 0`` / ``x_f = 1`` on the path to a node;
an itemset's *cover* is the set of samples satisfying all of them:

* **OR node** (an itemset with ``d`` levels left): a leaf predicting the majority class, or a
  split on a feature, tried in order of their one-split error. A split must strictly beat the
  best tree so far, the leaf first (no useless nodes).
* **AND node** (a split on ``f``): the child ``x_f = 0`` is solved first under the budget
  ``ub − lb(x_f = 1)``, the other only if the first fits, under ``ub − error(x_f = 0)``.
* **Cache** (``cache=True``), keyed by the branch — the itemset as a set, so the order of the
  decisions does not matter: a node's optimal error and root split, or a lower bound when no
  tree fits a budget. Leaves, pure nodes and nodes too small to split are never stored.
* **Bounds** (``bounds=True``): the budgets above, the lower bounds of the cache, the
  similarity bound (a cover within ``k`` samples of one whose bound is ``b`` has bound ≥
  ``b − k``; only with ``min_support = 1``, where removing samples keeps a tree feasible) and a
  greedy tree as the first incumbent. ``bounds=False`` solves every child to optimality.
* **Counting at the bottom**: nodes with at most ``counting_depth`` (1 or 2) levels left are
  solved exactly from class counts per feature (or pair of features, as popcounts of bitsets;
  a depth-3 node counts one child and takes the other's counts by subtraction) — the same
  trees the search would enumerate. ``counting_depth=0`` searches down to single leaves.

The loops run compiled (:mod:`odtk.engines.cp_kernels`, which says why numba); their first
compilation on a machine (about 16 s of CPU, then loaded from numba's cache) happens before
the search's clock starts, outside any time limit (``Budget.excluded``), so it never changes an
answer. The search runs in a worker thread while the calling thread waits, reports progress
(incumbent, bound, search nodes) and watches the deadline and the stop signals of the solve's
:class:`~odtk.budget.Budget` (a root solved by counting, which nothing stops, runs in the
calling thread). A time limit, a signal or a full cache (:func:`memory_available`
bounds the search's memory) stops it with the best tree found and a proven lower bound; status
``time_limit``, ``interrupted`` or ``memory_limit``. :func:`threshold_cap` sizes the numeric
thresholds of large data so that the search fits its time and memory.

Departures from the paper (section 4.2); none changes the optimum, since each only prunes
sub-trees that cannot beat the incumbent or scores the same trees another way:

* no CP solver: the search runs over the decisions directly, covers as row sets and bitsets,
  with the CoverSize constraint as the ``min_support`` test on each leaf's cover;
* the cache also stores lower bounds of branches where no tree fitted a budget (the paper
  stores optimal sub-trees only), and never stores leaves or pure nodes;
* the first child's budget is ``ub − lb(second child)``, not ``ub`` (the paper), and the
  similarity bound, the greedy incumbent and the feature order by one-split error are
  MurTree's / STreeD's, not the paper's (``bounds=False`` drops every bound: each child is
  solved to optimality);
* the bottom ``counting_depth`` levels are scored by counting, not enumerated node by node;
* whole-number ``sample_weight`` (odtk's): a row of weight w counts as w rows.

``search="paper"`` (CLI ``--paper-search``) drops every departure above but the first and the
last: features tried in index order, the first child under the node's budget and the second
under the budget less the first's errors, only optimal sub-trees cached, no similarity bound, no
greedy incumbent, no counting (``counting_depth`` is taken as 0) and no conflict bound on the
status; ``cache`` and ``bounds`` then switch the paper's own cache and budgets off, as in its
ablation. The same optimum, found more slowly.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

log = logging.getLogger(__name__)

KEY = "cp"
VARIANTS: dict[str, dict] = {"cp": {}}  # the --model keys this engine answers, with their settings
CITATION = ("Verhaeghe, Nijssen, Pesant, Quimper & Schaus, Learning optimal decision trees "
            "using constraint programming, Constraints 25 (2020) 226-250")
SENSE = "minimize"
FEATURES = "binary"
OBJECTIVE = "misclassified training rows, minimised"
SKELETON = "tree"
HYPERPARAMETERS = {"min_support": (1, 1_000_000_000, 1)}
CHOICES = {"counting_depth": (2, 1, 0), "cache": (True, False), "bounds": (True, False),
           "search": ("odtk", "paper")}
SIDE_CONSTRAINTS = ("min_support",)
SOLVER = "odtk-search"
SAMPLE_WEIGHT = True  # whole-number weights: a row of weight w counts as w rows (search, objective_of)
MAX_WEIGHTED_ROWS = 10_000_000  # the rows the search sees, weights expanded

MAX_DEPTH = 20  # the tree is built in heap order: 2^(depth + 1) slots
COMPILING = "compiling the CP search (once per machine)"
POLL_SECONDS = 0.2  # how often the waiting thread reports progress and looks at the deadline
MEMORY_SHARE = 0.5  # of the memory free, the most a search's arrays and cache take
# threshold_cap's model of an exhaustive search (CPU seconds, measured on make_classification
# data of 400–100,000 rows at depths 2–4): per pair of features and row counted, and per pair
# of features and class scored by the depth-2 solver
PAIR_ROW_SECONDS, PAIR_CLASS_SECONDS = 1e-11, 1e-10
DATA_BYTES = 1 << 30  # threshold_cap: the search's arrays and the encoded copies, at most
# threshold_cap's floor, where the search will not finish in time: at depth 4 on 100,000 rows,
# 4 thresholds per column gave a better tree at the limit than 2, 8, 16 or 32 (measured)
MIN_THRESHOLDS = 4
UNLIMITED_SECONDS = 600.0  # threshold_cap without a time limit sizes the search for this
# threshold_cap's ceiling: from 16–32 quantiles per column to 64–512, the optimal trees measured
# (depths 2–3, 400–100,000 rows) had 0.2–5 % fewer errors, for 4–100 times the time
MAX_THRESHOLDS = 32
Tree = tuple  # ("leaf", class) or (feature, tree for x_f = 0, tree for x_f = 1)


class InvalidOptions(ValueError):
    """The options leave no tree to search (e.g. a leaf support above the sample count)."""


@dataclass(frozen=True)
class SearchOutcome:
    """The best tree found, its training error, a proven lower bound and search statistics."""

    tree: Tree
    error: int
    lower_bound: int
    status: str  # "optimal", "time_limit", "interrupted" (a stop signal) or "memory_limit"
    search_nodes: int
    cache_size: int  # sub-trees stored for reuse (0 with ``cache=False``)
    seconds: float
    cpu_seconds: float  # of the process during the search (the kernels' compile or load excluded)

    @property
    def objective(self) -> int:
        return self.error


def search(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_support: int = 1,
           counting_depth: int = 2, time_limit: float | None = None, cache: bool = True,
           bounds: bool = True, sample_weight: np.ndarray | None = None,
           budget: Any = None, search: str = "odtk") -> SearchOutcome:
    """The minimum-error tree of depth ≤ ``depth`` with ≥ ``min_support`` samples per leaf;
    ``cache`` and ``bounds`` switch the cache and the bounds off for ablations, ``search="paper"``
    runs the paper's search alone (module docstring). Whole-number
    ``sample_weight``: a row of weight w counts as w rows, in the errors and in ``min_support``.

    The search stops at ``time_limit`` seconds after its start, at the deadline of ``budget``
    (an :class:`odtk.budget.Budget`) or when the budget's stop flag is set (a signal), with the
    best tree found; it reports its progress to the budget. Compiling the kernels (once per
    machine) happens first and counts against neither."""
    if sample_weight is not None:
        X, y = _repeated(X, y, sample_weight)
    if len(y) < min_support:
        raise InvalidOptions(f"min_support={min_support} exceeds the {len(y)} training samples; "
                             "lower it.")
    kernels = _kernels(budget)
    start, cpu_start = time.perf_counter(), time.process_time()
    stop_at = _deadline(time_limit, budget)
    X = np.asarray(X, dtype=bool)
    depth = min(depth, X.shape[1])  # a path tests each feature at most once
    if depth > min(MAX_DEPTH, kernels.max_path_length(X.shape[1])):
        raise InvalidOptions(f"depth={depth} is deeper than this search handles with "
                             f"{X.shape[1]} features; lower it.")
    if search not in CHOICES["search"]:
        raise InvalidOptions(f"search={search!r}: choose 'odtk' (default) or 'paper' (the paper's search alone).")
    paper = search == "paper"
    counting_depth = 0 if paper else counting_depth
    table_rows = _memory_plan(X, n_classes, depth, counting_depth)
    conflicts = conflict_bound(X, y) if depth > counting_depth and not paper else 0  # a counted root is proven
    data = kernels.make_data(X, np.asarray(y), n_classes, depth, min_support, counting_depth,
                             bool(cache), bool(bounds), None if budget is None else budget.flag,
                             table_rows, paper)
    error, bound, features, labels, cache_size = _run(kernels, data, depth, stop_at, budget, conflicts)
    lower_bound = min(max(bound, conflicts), error)
    status = "optimal" if lower_bound >= error else (
        "interrupted" if budget is not None and budget.stop_requested
        else "memory_limit" if data.full else "time_limit")
    if budget is not None:
        budget.report(incumbent=error, bound=lower_bound, searched=data.search_nodes)
    return SearchOutcome(_nested(features, labels, 1), error, lower_bound, status,
                         data.search_nodes, cache_size if cache else 0, time.perf_counter() - start,
                         time.process_time() - cpu_start)


_prepared = False  # the kernels were compiled or loaded in this process


def _kernels(budget: Any):
    """:mod:`odtk.engines.cp_kernels`, every kernel compiled (outside ``budget``'s time limit)
    or loaded from numba's cache, once per process; Stopped if a signal comes while compiling
    (a search stopped while loading returns its first tree)."""
    global _prepared
    from . import cp_kernels  # numba's import and compilation wait until a search

    if _prepared:
        return cp_kernels
    compiling = not cp_kernels.cached()  # else a load of about 0.4 s of CPU, like an import
    if compiling:
        log.info("%s: about 16 s of CPU; cached in %s", COMPILING, cp_kernels.cache_folder())
    began = time.process_time()
    if compiling and budget is not None:  # a stop ends the wait; loading is too short to stop
        with budget.excluded(COMPILING):
            compiled = _in_worker(cp_kernels.prepare, budget, lambda: _checked(budget))
    else:
        compiled = _in_worker(cp_kernels.prepare, budget, lambda: POLL_SECONDS)
    if compiled:
        message = (f"compiled the CP search in {time.process_time() - began:.0f} s of CPU, outside the "
                   f"time limit; cached in {cp_kernels.cache_folder() or 'no folder (not writable)'}")
        log.info(message)
        if budget is not None:
            budget.progress.note(message)
    _prepared = True
    return cp_kernels


def _checked(budget: Any) -> float:
    """POLL_SECONDS, after raising Stopped if a signal asked ``budget`` to stop."""
    if budget is not None:
        budget.check()
    return POLL_SECONDS


def _deadline(time_limit: float | None, budget: Any) -> float | None:
    """The ``time.monotonic()`` at which the search stops: ``time_limit`` from now or the
    budget's deadline, whichever comes first (None: neither)."""
    ends = [] if time_limit is None else [time.monotonic() + max(float(time_limit), 0.0)]
    if budget is not None and budget.deadline is not None:
        ends.append(budget.deadline)
    return min(ends, default=None)


def _run(kernels, data, depth: int, stop_at: float | None, budget: Any,
         bound: int) -> tuple[int, int, np.ndarray, np.ndarray, int]:
    """:func:`cp_kernels.run` in a worker thread: halted at ``stop_at`` or on a stop signal (it
    then keeps its best tree), reporting the incumbent, ``bound`` and the search nodes. A root
    solved by counting runs in this thread, as nothing stops it (the kernels read the stop
    flags between split attempts) and it has nothing to report before its end; within
    ``budget.waiting()``, so that a first signal only marks the budget, as with a worker."""
    if depth <= data.options.counting_depth:
        with budget.waiting() if budget is not None else contextlib.nullcontext():
            return kernels.run(data, depth)

    def watch() -> float:
        if budget is not None:
            budget.report(incumbent=data.incumbent(), bound=bound, searched=data.search_nodes)
        left = None if stop_at is None else stop_at - time.monotonic()
        if (left is not None and left <= 0) or (budget is not None and budget.stop_requested):
            data.halt()
            return POLL_SECONDS
        return POLL_SECONDS if left is None else min(POLL_SECONDS, left)

    return _in_worker(lambda: kernels.run(data, depth), budget, watch, data.halt)


def _in_worker(work: Callable[[], Any], budget: Any, watch: Callable[[], float],
               halt: Callable[[], None] | None = None) -> Any:
    """``work()`` in a worker thread (the kernels release the GIL) while this thread waits in
    ``budget.waiting()``, free to run signal handlers, and calls ``watch()`` before each wait
    (it returns the seconds to wait next, and may raise). When an exception ends the wait (a
    second signal, Ctrl-C without a budget) ``halt()`` stops the worker, which is awaited; without
    ``halt`` the worker is left to finish on its own."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="odtk-cp-search", daemon=True)
    with budget.waiting() if budget is not None else contextlib.nullcontext():
        worker.start()
        try:
            while worker.is_alive():
                worker.join(watch())
        except BaseException:
            if halt is not None:
                halt()
                worker.join()
            raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _memory_plan(X: np.ndarray, n_classes: int, depth: int, counting_depth: int) -> int:
    """The cache table's most rows within MEMORY_SHARE of the memory free; InvalidOptions when
    the search's arrays alone do not fit."""
    from . import cp_kernels

    n, m = X.shape
    need = cp_kernels.footprint(n, m, int(np.count_nonzero(X)), n_classes, depth, counting_depth)
    room = MEMORY_SHARE * memory_available()
    if need > room:
        raise InvalidOptions(f"The CP search needs about {need / 2**30:.1f} GB for {n:,} rows and {m:,} "
                             f"binary features, more than the {room / 2**30:.1f} GB it may take; use fewer "
                             "thresholds per numeric column (max_thresholds, --max-thresholds).")
    return cp_kernels.table_rows_within(room - need)


def memory_available() -> int:
    """Bytes this process can still allocate: the memory the system reports available (Linux's
    MemAvailable, else half the physical memory), within a cgroup's limit and an address-space
    limit (RLIMIT_AS) if set."""
    free = _meminfo("/proc/meminfo", "MemAvailable:")
    if free is None:
        try:
            free = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
        except (ValueError, OSError, AttributeError):
            free = 4 << 30
    limits = [free, _cgroup_room()]
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limits.append(soft - _address_space())
    except (ImportError, OSError, ValueError):
        pass
    return max(min(limit for limit in limits if limit is not None), 0)


def _meminfo(path: str, field: str) -> int | None:
    """A ``field: … kB`` line of ``path`` in bytes (None if absent); one unbuffered read of the
    whole file (a search reads it every call)."""
    try:
        with open(path, "rb", buffering=0) as file:
            text = b"\n" + file.read()
        start = text.index(b"\n" + field.encode()) + len(field) + 1
        return int(text[start:text.index(b"\n", start)].split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def _cgroup_room() -> int | None:
    """What this process's cgroup (v2) still allows, None without a limit."""
    try:
        with open("/sys/fs/cgroup/memory.max") as limit, open("/sys/fs/cgroup/memory.current") as used:
            text = limit.read().strip()
            return None if text == "max" else int(text) - int(used.read())
    except (OSError, ValueError):
        return None


def _address_space() -> int:
    """This process's virtual memory size in bytes (0 where unknown)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _repeated(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row repeated as often as its whole-number weight (the search counts rows)."""
    counts = np.asarray(sample_weight, dtype=float)
    if not np.array_equal(counts, np.round(counts)):
        raise InvalidOptions("The CP search takes whole-number sample weights (a row of weight w counts "
                             "as w rows); round or rescale them, or use a MILP model.")
    if counts.sum() > MAX_WEIGHTED_ROWS:
        raise InvalidOptions(f"The sample weights add up to {counts.sum():.0f} rows, more than the CP "
                             f"search's {MAX_WEIGHTED_ROWS:,}; divide them by a common factor.")
    counts = counts.astype(np.int64)
    return np.repeat(np.asarray(X), counts, axis=0), np.repeat(np.asarray(y), counts)


def _nested(features: np.ndarray, labels: np.ndarray, node: int) -> Tree:
    """The tree in heap order (``features[node]`` -1 at a leaf) as nested tuples."""
    if features[node] < 0:
        return ("leaf", int(labels[node]))
    return (int(features[node]), _nested(features, labels, 2 * node),
            _nested(features, labels, 2 * node + 1))


def threshold_cap(n_rows: int, n_numeric: int, depth: int, seconds: float | None,
                  n_classes: int = 2, n_binary: int = 0) -> int:
    """Thresholds per numeric column for the CP search on ``n_rows`` rows of
    ``n_numeric`` numeric and ``n_binary`` 0/1 columns, ``seconds`` being the time the search
    may take (None: UNLIMITED_SECONDS): the most, up to MAX_THRESHOLDS, whose search at
    ``depth`` runs to its proof within ``seconds`` of CPU by the (cautious) model of
    :func:`search_seconds` and whose arrays with the encoded data take at most DATA_BYTES and
    MEMORY_SHARE of the memory free; at least MIN_THRESHOLDS if the memory allows (a search
    that will not finish then returns its best tree at the limit).

    :mod:`odtk.pipeline.encode` keeps every midpoint when no column has more than the cap, and
    this many quantiles (at most ten) otherwise.

    For 100,000 rows of 50 float columns and 50 s: 32 at depths 1 and 2, 9 at depth 3 (proven
    in 25 CPU s), 4 at depth 4 and deeper (the best tree at the limit)."""
    if n_numeric < 1:
        return MIN_THRESHOLDS
    seconds = UNLIMITED_SECONDS if seconds is None else float(seconds)
    room = min(DATA_BYTES, MEMORY_SHARE * memory_available())

    def fits(k: int, timed: bool) -> bool:
        m = k * n_numeric + n_binary
        nbytes = _arrays_bytes(n_rows, m, n_classes, depth) + 2 * n_rows * m  # the encoded copies
        return nbytes <= room and (not timed or search_seconds(n_rows, m, n_classes, depth) <= seconds)

    low, high = 1, max(min(n_rows - 1, MAX_THRESHOLDS), 1)  # no more than there are midpoints
    while low < high:  # the most k that fits; time and memory grow with k
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle, True) else (low, middle - 1)
    floor = next((k for k in range(MIN_THRESHOLDS, 1, -1) if fits(k, False)), 1)
    return max(low, floor)


def search_seconds(n_rows: int, m: int, n_classes: int, depth: int) -> float:
    """CPU seconds of an exhaustive search (no bound prunes) on ``m`` binary features: a
    depth-2 node on r rows counts its m² feature pairs over r rows and scores m² · classes
    pairs; a depth-d node (d ≥ 3) tries m splits, counting the smaller child of each, down to
    (2m)^(d−2) depth-2 nodes on n / 2^(d−2) rows each."""
    if depth <= 1:
        return PAIR_ROW_SECONDS * m * n_rows
    scoring = PAIR_CLASS_SECONDS * n_classes * m**2
    if depth == 2:
        return PAIR_ROW_SECONDS * m**2 * n_rows + scoring
    return PAIR_ROW_SECONDS * float(m) ** depth * n_rows / 2 + float(2 * m) ** (depth - 2) * scoring


def _arrays_bytes(n_rows: int, m: int, n_classes: int, depth: int) -> int:
    """Bytes of a search's arrays (:func:`cp_kernels.footprint`) for threshold features, of which
    half the entries are 1."""
    from . import cp_kernels

    return cp_kernels.footprint(n_rows, m, n_rows * m // 2, n_classes, depth, 2)


def conflict_bound(X: np.ndarray, y: np.ndarray) -> int:
    """Errors no tree avoids: samples with equal features but a minority label among them."""
    packed = np.packbits(np.asarray(X, dtype=bool), axis=1)  # a row's features as bytes
    width = packed.shape[1]
    if width <= 8:  # as one integer per row
        packed = np.pad(packed, ((0, 0), (0, 8 - width)))
    keys = np.ascontiguousarray(packed).view(np.uint64 if width <= 8 else np.dtype((np.void, width))).ravel()
    _, rows = np.unique(keys, return_inverse=True)
    y = np.asarray(y, dtype=np.int64)
    classes = int(y.max()) + 1
    counts = np.bincount(rows.ravel() * classes + y, minlength=(rows.max() + 1) * classes)
    counts = counts.reshape(-1, classes)
    return int((counts.sum(axis=1) - counts.max(axis=1)).sum())


def objective_of(tree: nx.DiGraph, predicted: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph,
                 sample_weight: np.ndarray | None = None, **hyperparameters) -> float:
    """Training misclassifications (their total weight) of a decoded tree whose predictions
    are ``predicted``."""
    wrong = np.asarray(predicted) != np.asarray(y)
    return float(wrong.sum() if sample_weight is None else np.dot(wrong, sample_weight))
