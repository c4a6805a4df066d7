"""Compiled inner loops of the AND/OR tree search in :mod:`odtk.engines.cp_search`.

Why compiled, and why numba: a depth-4 search visits 10^4–10^6 OR nodes and runs the depth-2
counting solver at most of them; the work per node is a few hundred to a few thousand integer
operations, so in Python the interpreter's overhead per node, not the arithmetic, sets the
time (measured with numpy-vectorised counting: 3.4× STreeD's C++ time at depth 3 and 7.5× at
depth 4 in geometric mean, up to 72×). numba compiles these plain Python functions with LLVM
at first use (about 16 s of CPU, once) and caches the machine code on disk
(``cache=True``: next to this file, else in the user's cache folder, else in a folder of the
temporary directory, see :func:`_cached`); it ships binary wheels (numba, llvmlite) for
Linux, macOS and Windows, so ``pip install`` needs no C compiler. Cython would need one on
every machine that installs odtk from source, or per-platform wheels built and published by
odtk. No function here recurses: numba's on-disk cache does not reload recursive functions
safely.

What the compile time depends on: numba compiles each function on its own, with a copy of the
code of all it calls (linked in, optimised and translated to machine code again), so the time
grows with the number of functions times the size of what they call. Hence a function called
from one place is inlined there (``inline="always"``): the counting solvers are reached from
the two functions Python calls, :func:`advance` and :func:`grow`, through no other compiled
function. The compiled functions take only the arrays they use, in a few small tuples (every
array passed costs code at every call); the compiled code never reads the clock (``objmode``)
but a stop flag (below); the cache is a hash table in an array, not numba's typed dictionary;
arrays are copied by loops, not slice assignment (whose error handling costs seconds to
compile); and no function is called with a literal ``int`` argument, for which numba compiles
a separate copy (the constants passed are ``np.int64``). :func:`prepare` compiles every
kernel for the argument types :func:`make_data` gives (or loads it from the cache) before a
search starts its clock: compilation never counts against a time limit.

Stopping: the kernels are compiled without the GIL (``nogil``), so a search runs in a worker
thread while the calling thread waits and stays free to run signal handlers
(:mod:`odtk.engines.cp_search`). Between two split attempts :func:`advance` reads two flags
written by other threads: the stop signal's number (``Budget.flag``) and ``state[HALT]``, set
at the deadline. Either winds the search up: it returns the best tree found and a lower bound.

Memory: :func:`footprint` gives the bytes the arrays of a search take; the cache table grows
by doubling up to ``max_table_rows`` (:func:`table_rows_within`), past which the search stops
as at a time limit (``Data.full``).

Data layout: a cover (the samples satisfying an itemset) is an array of row indices; the
features are a transposed 0/1 matrix ``Xt[f, r]`` and, per row, the list of features equal to 1
(``row_ptr``/``row_features``). Itemsets (*branches*) are keyed exactly by their sorted
literals ``2f + v`` packed into two 64-bit words.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

ARCHIVE = 4  # covers kept per depth for the similarity bound
INF = 1 << 40
# pair-count slots: a depth-3 node's, then its smaller and larger child's
PARENT, SMALLER, LARGER = np.int64(0), np.int64(1), np.int64(2)
VARYING = np.int64(-1)  # count the features not constant on the cover (see _count_pairs)
# the columns of ``Frames.frame``: an open OR node's state
(POS, LEN, PHASE, FEATURE, BUDGET, BEST, BEST_FEATURE, FAILED, BOUND, KEY_LOW, KEY_HIGH, ERROR0,
 BOUND1, SLOT1, SIZE, SIZE1) = range(16)
FIELDS = 16
# the entries of ``Frames.state``; HALT is written by another thread (non-zero: stop)
(NODES, TIMED_OUT, ROOT_ERROR, ROOT_FEATURE, CACHED, STEP, LEVEL, UB, OUT_ERROR,
 OUT_BOUND, HALT) = range(11)
STATE = 11
FLAG_AT, HALT_AT = np.int64(0), np.int64(HALT)  # where the flags written by other threads are
OPEN, TAKE, TRY = range(3)  # the next step: open a node, take a child's result, try a split
DONE, FULL = range(2)  # what :func:`advance` returns
# the columns of the cache table: a branch's key, lower bound, optimal errors (-1: unknown) and
# root split
T_LOW, T_HIGH, T_BOUND, T_ERROR, T_FEATURE = range(5)
# the cache table's hash: odd 64-bit multipliers of the key's two words
HASH_LOW, HASH_HIGH = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)
TABLE_ROWS = 1 << 12  # the table's first size; it doubles when two thirds full
MAX_TABLE_ROWS = 1 << 26  # 2.5 GiB, 44 M sub-trees (a 60 s search stores up to about 4 M)
ROW_BLOCK = 1 << 12  # rows turned into feature lists at a time (bounds make_data's temporaries)


def _cached(function):
    """``njit(cache=True, nogil=True)``; where numba finds no writable cache folder (a read-only
    install and home), a folder of the temporary directory; else no cache."""
    compile_ = njit(cache=True, nogil=True)
    try:
        return compile_(function)
    except RuntimeError:  # numba: "cannot cache function …: no locator available"
        pass
    previous = numba.config.CACHE_DIR
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
    numba.config.CACHE_DIR = os.path.join(tempfile.gettempdir(), f"odtk-numba-cache-{user}")
    try:
        return compile_(function)
    except RuntimeError:
        return njit(nogil=True)(function)
    finally:
        numba.config.CACHE_DIR = previous


# Functions called from Python get a CPython wrapper (which releases the GIL) and are cached on
# disk, with the code of all they call; the others need neither, and those called from one
# place are inlined there.
entry = _cached
inner = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
inlined = njit(inline="always")


class Samples(NamedTuple):
    """The training data, by feature and by row."""

    Xt: np.ndarray            # uint8 [m, n]
    y: np.ndarray             # int64 [n]: classes 0..k-1
    row_ptr: np.ndarray       # int64 [n + 1]
    row_features: np.ndarray  # int64: features equal to 1, row by row


class Options(NamedTuple):
    """The search's settings."""

    n_classes: int
    min_support: int
    counting_depth: int
    use_cache: bool
    use_bounds: bool
    use_similarity: bool  # sound only when min_support == 1
    literal_bits: int
    paper: bool  # the paper's search alone (cp_search's ``search="paper"``)


class PairCounts(NamedTuple):
    """Work buffers of the depth-2 counting solver: three slots of pair counts."""

    pairs: np.ndarray       # int32 [3, C, m, m]: per slot, class, and pair of active features
    active: np.ndarray      # int64 [3, m]: the features each slot counts
    active_len: np.ndarray  # int64 [3]
    packed: np.ndarray      # uint64 [C, m, words]: a cover's columns as bitsets, per class
    columns: np.ndarray     # uint64 [words, m]: the active ones of a class, word by word


class Archive(NamedTuple):
    """Recently solved covers per depth with their lower bounds, for the similarity bound."""

    covers: np.ndarray  # uint64 [depth + 1, ARCHIVE, words]
    bounds: np.ndarray  # int64 [depth + 1, ARCHIVE], -1 when empty
    next: np.ndarray    # int64 [depth + 1]: the slot to overwrite next
    bits: np.ndarray    # uint64 [words]: a cover as a bitset over all rows


class Frames(NamedTuple):
    """The search's state: the OR node open at each level, counters and where it stands."""

    frame: np.ndarray     # int64 [depth + 2, FIELDS]: the node's state (columns above)
    paths: np.ndarray     # int64 [depth + 2, depth + 1]: its branch, sorted literals
    rows_at: np.ndarray   # int64 [depth + 2, n]: its cover (``frame[SIZE]`` rows)
    ones_at: np.ndarray   # int64 [depth + 1, n]: the x_f = 1 side of the split it tries
    order_at: np.ndarray  # int64 [depth + 1, m]: its features in the order tried
    state: np.ndarray     # int64 [STATE]: the entries above


@dataclass
class Data:
    """One search: the training data, its options and work buffers."""

    samples: Samples
    options: Options
    pairs: PairCounts
    archive: Archive
    frames: Frames
    table: np.ndarray  # int64 [rows, 5]: the cache, open addressing (columns above)
    flag: np.ndarray   # int64 [1]: non-zero (a stop signal's number) stops the search
    max_table_rows: int = MAX_TABLE_ROWS
    full: bool = False  # the search stopped because the cache table could not grow
    first: int = -1     # errors of the first incumbent (the greedy tree, or the root's leaf)

    @property
    def search_nodes(self) -> int:
        """The OR nodes the search expanded."""
        return int(self.frames.state[NODES])

    def halt(self) -> None:
        """Make the running search wind up (from another thread, as at a time limit)."""
        self.frames.state[HALT] = 1

    def incumbent(self) -> int | None:
        """Errors of the best tree found so far, read while the search runs (None before the
        first)."""
        if self.first < 0:
            return None
        root = self.frames.frame[0]
        return int(min(self.first, root[BEST])) if root[LEN] > 0 and root[BEST] >= 0 else self.first


def make_data(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_support: int,
              counting_depth: int, cache: bool, bounds: bool, flag: np.ndarray | None = None,
              max_table_rows: int = MAX_TABLE_ROWS, paper: bool = False) -> Data:
    """The search's inputs from a 0/1 matrix and classes 0..k-1; ``flag``: an int64 array whose
    first entry stops the search when another thread makes it non-zero. ``paper``: the paper's
    search alone — features in index order, the first child under the node's budget, only
    optima cached, no similarity bound and no greedy incumbent."""
    n, m = X.shape
    # plain ints: numba compiles a copy of a kernel per argument type (np.int32 and the like)
    n_classes, depth, min_support = int(n_classes), int(depth), int(min_support)
    counting_depth = int(counting_depth)
    words = (n + 63) // 64
    Xt = np.ascontiguousarray(np.asarray(X).T, dtype=np.uint8)
    row_ptr, row_features = _feature_lists(X)
    samples = Samples(Xt, y.astype(np.int64), row_ptr, row_features)
    options = Options(n_classes, min_support, counting_depth, bool(cache), bool(bounds),
                      bool(bounds) and min_support == 1 and not paper, int(2 * m + 1).bit_length(),
                      bool(paper))
    width = m if counting_depth == 2 else 0
    pairs = PairCounts(np.zeros((3, n_classes, width, width), dtype=np.int32),
                       np.zeros((3, m), dtype=np.int64), np.zeros(3, dtype=np.int64),
                       np.zeros((n_classes, width, words if width else 0), dtype=np.uint64),
                       np.zeros((words if width else 0, width), dtype=np.uint64))
    archive = Archive(np.zeros((depth + 1, ARCHIVE, words), dtype=np.uint64),
                      np.full((depth + 1, ARCHIVE), -1, dtype=np.int64),
                      np.zeros(depth + 1, dtype=np.int64), np.zeros(words, dtype=np.uint64))
    frames = Frames(np.zeros((depth + 2, FIELDS), dtype=np.int64),
                    np.zeros((depth + 2, depth + 1), dtype=np.int64),
                    np.zeros((depth + 2, n), dtype=np.int64),
                    np.zeros((depth + 1, n), dtype=np.int64),
                    np.zeros((depth + 1, m), dtype=np.int64), np.zeros(STATE, dtype=np.int64))
    table = np.full((TABLE_ROWS, 5), -1, dtype=np.int64)
    flag = np.zeros(1, dtype=np.int64) if flag is None else flag
    return Data(samples, options, pairs, archive, frames, table, flag, max(max_table_rows, TABLE_ROWS))


def _feature_lists(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``row_ptr`` (int64) and ``row_features`` (int32): the features equal to 1, row by row,
    found a block of rows at a time (the temporaries stay small)."""
    n, m = X.shape
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    row_features = np.empty(np.count_nonzero(X), dtype=np.int32)
    done = 0
    for start in range(0, n, ROW_BLOCK):
        block = X[start:start + ROW_BLOCK]
        row_ptr[start + 1:start + 1 + len(block)] = np.count_nonzero(block, axis=1)
        places = np.flatnonzero(block)  # row-major: row by row, features in order
        row_features[done:done + len(places)] = places % m
        done += len(places)
    return np.cumsum(row_ptr), row_features


def footprint(n: int, m: int, ones: int, n_classes: int, depth: int, counting_depth: int) -> int:
    """Bytes the arrays of a search take (:func:`make_data`; the cache table at its first size)
    for ``n`` rows, ``m`` features of which ``ones`` entries are 1, at most ``depth`` levels."""
    words, width = (n + 63) // 64, (m if counting_depth == 2 else 0)
    samples = m * n + 16 * n + 4 * ones
    pairs = 12 * n_classes * width**2 + 8 * (n_classes + 1) * width * words
    search = 8 * (2 * depth + 3) * n + 8 * (depth + 1) * (m + ARCHIVE * words)
    return samples + pairs + search + 40 * TABLE_ROWS


def table_rows_within(nbytes: float) -> int:
    """The cache table's most rows (a power of two) whose growth from half their number fits
    in ``nbytes``, at most MAX_TABLE_ROWS."""
    rows = TABLE_ROWS
    while 2 * rows <= MAX_TABLE_ROWS and 1.5 * 40 * 2 * rows <= nbytes:
        rows *= 2
    return rows


def max_path_length(m: int) -> int:
    """The longest branch two packed 64-bit words can key with ``m`` features."""
    return 2 * (63 // int(2 * m + 1).bit_length())


# --------------------------------------------------------------------------- the driver
def prepare() -> bool:
    """Compile every kernel a search calls for the argument types :func:`make_data` gives, or
    load it from numba's cache; True if anything was compiled."""
    X = np.array([[0, 0, 1, 1], [0, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 0]] * 3, dtype=bool)
    y = np.array([0, 1, 1, 0] * 2 + [1, 0, 0, 1])
    data = make_data(X, y, 2, 3, 1, 2, True, True)
    run(data, 3)
    rehash(data.table, np.full((2 * len(data.table), 5), -1, dtype=np.int64))
    return any(kernel.stats.cache_misses for kernel in KERNELS)


def cached() -> bool:
    """Whether numba's cache holds current machine code of every kernel (False if unsure)."""
    try:
        return all(kernel._cache._cache_file._load_index() for kernel in KERNELS)
    except (AttributeError, OSError, EOFError, ValueError):
        return False


def cache_folder() -> str | None:
    """Where numba caches the kernels' machine code (None: not cached)."""
    return advance.stats.cache_path


def run(data: Data, depth: int) -> tuple[int, int, np.ndarray, np.ndarray, int]:
    """Search from the root: (errors, lower bound, features and labels in heap order, cache
    size). The greedy tree is the first incumbent when bounds are on and the root is not
    solved by counting."""
    state = data.frames.state
    state[ROOT_ERROR] = -1
    size = 2 ** (depth + 1)
    features, labels = np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64)
    ub = len(data.samples.y) - np.bincount(data.samples.y).max() + 1  # the leaf's errors + 1
    greedy = (data.options.use_bounds and not data.options.paper
              and depth > data.options.counting_depth)  # else counted at once
    if greedy:
        ub = _grow(data, depth, -2, True, features, labels)
    data.first = ub if greedy else ub - 1
    error, bound = _search(data, depth, ub)
    timed_out = state[TIMED_OUT] == 1
    if timed_out and 0 <= state[ROOT_ERROR] < ub:
        error = state[ROOT_ERROR]
    if error >= 0:
        root_feature = state[ROOT_FEATURE] if timed_out else -2
        error = _grow(data, depth, root_feature, False, features, labels)
    else:
        error = ub
        if not timed_out:
            bound = max(bound, ub)
    return int(error), int(bound), features, labels, int(state[CACHED])


def _search(data: Data, depth: int, ub: int) -> tuple[int, int]:
    """(errors of the optimal tree if they are < ``ub`` else -1, a lower bound) at the root:
    :func:`advance` until done, the cache table grown whenever it is full."""
    frames, state = data.frames, data.frames.state
    frames.rows_at[0] = np.arange(frames.rows_at.shape[1])
    frames.frame[0, SIZE] = frames.rows_at.shape[1]
    state[STEP], state[LEVEL], state[UB] = OPEN, 0, ub
    while advance(data.samples, data.options, data.pairs, data.archive, data.frames, data.table,
                  depth, data.flag) == FULL:
        _grow_table(data)
    return int(state[OUT_ERROR]), int(state[OUT_BOUND])


def _grow_table(data: Data) -> None:
    """Double the cache table; past ``max_table_rows``, or without the memory, wind the search
    up as at a time limit (``data.full``)."""
    rows = 2 * len(data.table)
    if rows <= data.max_table_rows:
        try:
            table = np.full((rows, 5), -1, dtype=np.int64)
        except MemoryError:
            pass
        else:
            rehash(data.table, table)
            data.table = table
            return
    data.full = True
    data.frames.state[TIMED_OUT] = 1


def _grow(data: Data, depth: int, root_feature: int, greedy: bool, features: np.ndarray,
          labels: np.ndarray) -> int:
    """:func:`grow` on ``data``."""
    return int(grow(data.samples, data.options, data.pairs, data.frames.paths, data.table, depth,
                    np.int64(root_feature), bool(greedy), features, labels))


# --------------------------------------------------------------------------- primitives
@intrinsic
def _popcount(typingctx, x):
    """The number of set bits of a uint64 (LLVM's ctpop)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@intrinsic
def _shared(typingctx, array, index):
    """``array[index]`` of an int64 array, read from memory each time because another thread
    writes it (a relaxed atomic load)."""
    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        view = context.make_array(array_type)(context, builder, args[0])
        i = context.cast(builder, args[1], index_type, types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [i])
        return builder.load_atomic(pointer, "monotonic", 8)
    return types.int64(array, index), codegen


@inner
def _leaf(counts: np.ndarray) -> tuple[int, int]:
    """(errors, label) of a leaf with class counts ``counts``."""
    label = 0
    for c in range(1, len(counts)):
        if counts[c] > counts[label]:
            label = c
    return counts.sum() - counts[label], label


@inner
def _class_counts(y: np.ndarray, rows: np.ndarray, n_classes: int) -> np.ndarray:
    """The number of samples of each class in ``rows``."""
    counts = np.zeros(n_classes, dtype=np.int64)
    for r in rows:
        counts[y[r]] += 1
    return counts


@inner
def _single_counts(samples: Samples, rows: np.ndarray, n_classes: int) -> np.ndarray:
    """``ones[f, c]``: samples of class c in ``rows`` with x_f = 1."""
    ones = np.zeros((samples.Xt.shape[0], n_classes), dtype=np.int64)
    for r in rows:
        c = samples.y[r]
        for j in range(samples.row_ptr[r], samples.row_ptr[r + 1]):
            ones[samples.row_features[j], c] += 1
    return ones


@inlined
def _side(column: np.ndarray, rows: np.ndarray, value: int, out: np.ndarray) -> np.ndarray:
    """The rows of ``rows`` where ``column`` is ``value``, written into ``out``."""
    k = 0
    for r in rows:
        if column[r] == value:
            out[k] = r
            k += 1
    return out[:k]


@inlined
def _partition(column: np.ndarray, rows: np.ndarray, zeros: np.ndarray,
               ones: np.ndarray) -> tuple[int, int]:
    """Write the rows of ``rows`` where ``column`` is 0 into ``zeros``, the others into ``ones``;
    returns how many of each."""
    k0 = k1 = 0
    for r in rows:
        if column[r] == 0:
            zeros[k0] = r
            k0 += 1
        else:
            ones[k1] = r
            k1 += 1
    return k0, k1


@inner
def _trivial(min_support: int, size: int, leaf_error: int, depth: int) -> bool:
    """A node whose best tree is its leaf without search: no levels left, pure, or too small."""
    return depth == 0 or leaf_error == 0 or size < 2 * min_support


# --------------------------------------------------------------------------- counting solvers
@inner
def _split_error(min_support: int, total: np.ndarray, ones_of: np.ndarray) -> int:
    """Errors of the two leaves of a split, or INF if one holds fewer than min_support samples;
    ``total`` and ``ones_of`` are the class counts of the node and of its x_f = 1 side."""
    size = size_one = most_zero = most_one = 0
    for c in range(len(total)):
        size += total[c]
        size_one += ones_of[c]
        most_zero = max(most_zero, total[c] - ones_of[c])
        most_one = max(most_one, ones_of[c])
    if size_one < min_support or size - size_one < min_support:
        return INF
    return size - most_zero - most_one


@inner
def best_stump(samples: Samples, options: Options, rows: np.ndarray) -> tuple[int, int]:
    """(errors, feature) of the best tree of depth ≤ 1; feature -1 for the leaf."""
    counts = _class_counts(samples.y, rows, options.n_classes)
    best, _ = _leaf(counts)
    best_feature = -1
    ones = _single_counts(samples, rows, options.n_classes)
    for f in range(len(ones)):
        error = _split_error(options.min_support, counts, ones[f])
        if error < best:
            best, best_feature = error, f
    return best, best_feature


@inner
def _count_pairs(samples: Samples, pc: PairCounts, rows: np.ndarray, slot: int,
                 within: int) -> None:
    """``pairs[slot][c, i, j]``: samples of class c in ``rows`` with x_f = x_g = 1 for the i-th
    and j-th features f, g of ``active[slot]`` (popcounts of the cover's columns packed per
    class). That list is ``active[within]``, or if ``within`` is VARYING the features not
    constant on ``rows``."""
    C, m, _ = pc.packed.shape
    out, active = pc.pairs[slot], pc.active[slot]
    placed = np.zeros(C, dtype=np.int64)
    counts = _class_counts(samples.y, rows, C)
    for c in range(C):
        pc.packed[c, :, :(counts[c] + 63) >> 6] = 0
    for r in rows:
        c = samples.y[r]
        word, bit = placed[c] >> 6, np.uint64(1) << np.uint64(placed[c] & 63)
        placed[c] += 1
        for j in range(samples.row_ptr[r], samples.row_ptr[r + 1]):
            pc.packed[c, samples.row_features[j], word] |= bit
    length = _active_features(pc, counts, within, active)
    pc.active_len[slot] = length
    for c in range(C):
        words = (counts[c] + 63) >> 6
        columns = pc.columns[:words, :length]  # word-major: the inner loop runs over features
        for i in range(length):
            for w in range(words):
                columns[w, i] = pc.packed[c, active[i], w]
        for i in range(length):
            row = out[c, i, :length]
            row[:] = 0
            for w in range(words):
                word, column = columns[w, i], columns[w]
                for j in range(length):
                    row[j] += np.int32(_popcount(word & column[j]))


@inlined
def _active_features(pc: PairCounts, counts: np.ndarray, within: int, active: np.ndarray) -> int:
    """Write ``active[within]`` (``within`` ≥ 0) or the features neither all 0 nor all 1 in the
    packed cover into ``active``; returns how many."""
    if within >= 0:
        length = pc.active_len[within]
        for i in range(length):
            active[i] = pc.active[within, i]
        return length
    length = 0
    for f in range(pc.packed.shape[1]):
        ones = 0
        for c in range(len(counts)):
            for w in range((counts[c] + 63) >> 6):
                ones += _popcount(pc.packed[c, f, w])
        if 0 < ones < counts.sum():
            active[length] = f
            length += 1
    return length


@inlined
def _subtract_pairs(pc: PairCounts, target: int, whole: int, part: int) -> None:
    """``pairs[target]`` = ``pairs[whole]`` − ``pairs[part]``, both over ``active[whole]``: the
    counts of a cover's complement within a larger one."""
    length = pc.active_len[whole]
    pc.active_len[target] = length
    for i in range(length):
        pc.active[target, i] = pc.active[whole, i]
    for c in range(pc.pairs.shape[1]):
        for i in range(length):
            for j in range(length):
                pc.pairs[target, c, i, j] = pc.pairs[whole, c, i, j] - pc.pairs[part, c, i, j]


@inner
def best_depth_two(min_support: int, counts: np.ndarray, pairs: np.ndarray,
                   active: np.ndarray) -> tuple[int, int]:
    """(errors, i) of the best tree of depth ≤ 2 from the pair counts over the features
    ``active`` (the others are constant on the cover): a root split on ``active[i]`` (-1: a
    leaf) with the best tree of depth ≤ 1 on each side (:func:`best_children`)."""
    if len(counts) == 2 and min_support == 1:
        return _best_depth_two_binary(counts, pairs, len(active))
    best, _ = _leaf(counts)
    best_i = -1
    for i in range(len(active)):
        error0, error1 = best_children(min_support, counts, pairs, len(active), i)
        if error0 + error1 < best:
            best, best_i = error0 + error1, i
    return best, best_i


@inlined
def best_children(min_support: int, counts: np.ndarray, pairs: np.ndarray, length: int,
                  i: int) -> tuple[int, int]:
    """Errors of the best tree of depth ≤ 1 on the x_f = 0 side of a split on the i-th active
    feature f, then on its x_f = 1 side; (INF, INF) if a side holds fewer than min_support
    samples."""
    C = pairs.shape[0]
    zero = np.empty(C, dtype=np.int64)
    one = np.empty(C, dtype=np.int64)
    cell = np.empty(C, dtype=np.int64)
    for c in range(C):
        one[c] = pairs[c, i, i]
        zero[c] = counts[c] - one[c]
    size, size_one = counts.sum(), one.sum()
    if size_one < min_support or size - size_one < min_support:
        return INF, INF
    error0, _ = _leaf(zero)
    error1, _ = _leaf(one)
    split0 = error0 > 0 and size - size_one >= 2 * min_support
    split1 = error1 > 0 and size_one >= 2 * min_support
    for j in range(length):
        if split0:
            for c in range(C):  # x_f = 0, x_g = 1
                cell[c] = pairs[c, j, j] - pairs[c, i, j]
            error0 = min(error0, _split_error(min_support, zero, cell))
        if split1:
            for c in range(C):  # x_f = 1, x_g = 1
                cell[c] = pairs[c, i, j]
            error1 = min(error1, _split_error(min_support, one, cell))
    return error0, error1


@inlined
def _best_depth_two_binary(counts: np.ndarray, pairs: np.ndarray, length: int) -> tuple[int, int]:
    """:func:`best_depth_two` for two classes and min_support 1, as min-reductions the compiler
    vectorises. A split leaving a side empty scores its leaf's errors: it never wins, needs no
    test."""
    first, second = pairs[0], pairs[1]
    best = min(counts[0], counts[1])
    best_i = -1
    ones_a = np.empty(length, dtype=np.int32)  # per active feature: x_g = 1, each class
    ones_b = np.empty(length, dtype=np.int32)
    for j in range(length):
        ones_a[j], ones_b[j] = first[j, j], second[j, j]
    for i in range(length):
        one_a, one_b = ones_a[i], ones_b[i]
        zero_a, zero_b = np.int32(counts[0]) - one_a, np.int32(counts[1]) - one_b
        error0, error1 = min(zero_a, zero_b), min(one_a, one_b)
        row_a, row_b = first[i], second[i]
        for j in range(length):
            both_a, both_b = row_a[j], row_b[j]
            a, b = ones_a[j] - both_a, ones_b[j] - both_b  # x_f = 0, x_g = 1
            error0 = min(error0, min(a, b) + min(zero_a - a, zero_b - b))
            error1 = min(error1, min(both_a, both_b) + min(one_a - both_a, one_b - both_b))
        if error0 + error1 < best:
            best, best_i = error0 + error1, i
    return best, best_i


@inner
def _feature_order(samples: Samples, options: Options, rows: np.ndarray, out: np.ndarray) -> int:
    """Write into ``out`` the features whose split leaves min_support samples on each side,
    by the errors of that single split, best first (ties by feature; the paper's search: by
    feature); returns how many."""
    counts = _class_counts(samples.y, rows, options.n_classes)
    ones = _single_counts(samples, rows, options.n_classes)
    errors = np.empty(len(ones), dtype=np.int64)
    if options.paper:
        valid = 0
        for f in range(len(errors)):
            if _split_error(options.min_support, counts, ones[f]) < INF:
                out[valid] = f
                valid += 1
        return valid
    first = np.zeros(len(rows) + 2, dtype=np.int64)  # counting sort: errors are ≤ len(rows)
    for f in range(len(errors)):
        errors[f] = _split_error(options.min_support, counts, ones[f])
        if errors[f] < INF:
            first[errors[f] + 1] += 1
    for e in range(1, len(first)):
        first[e] += first[e - 1]
    valid = first[-1]
    for f in range(len(errors)):
        if errors[f] < INF:
            out[first[errors[f]]] = f
            first[errors[f]] += 1
    return valid


# --------------------------------------------------------------------------- cache and bounds
@inner
def _key(path: np.ndarray, length: int, bits: int) -> tuple[int, int]:
    """The packed key of the sorted branch ``path[:length]``, ``bits`` per literal."""
    per_word = 63 // bits
    low = high = 0
    for i in range(length):
        word = (path[i] + 1) << (bits * (i % per_word))
        if i < per_word:
            low |= word
        else:
            high |= word
    return low, high


@inner
def _extend(paths: np.ndarray, level: int, literal: int) -> None:
    """``paths[level + 1]``: the sorted branch ``paths[level][:level]`` ∪ {literal}."""
    source, target = paths[level], paths[level + 1]
    i = 0
    for j in range(level):
        if source[j] > literal and i == j:
            target[i] = literal
            i += 1
        target[i] = source[j]
        i += 1
    if i == level:
        target[i] = literal


@inner
def _slot(table: np.ndarray, low: int, high: int) -> int:
    """The row of ``table`` holding the key (low, high), or else the empty row (high -1) where
    it belongs: open addressing with linear probing; the table is never full."""
    mask = len(table) - 1
    h = np.uint64(low) * HASH_LOW + np.uint64(high) * HASH_HIGH  # unsigned: wraps around
    i = np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))
    while table[i, T_HIGH] >= 0 and (table[i, T_HIGH] != high or table[i, T_LOW] != low):
        i = (i + 1) & mask
    return i


@inner
def _find(table: np.ndarray, low: int, high: int) -> int:
    """The row of ``table`` holding the key (low, high), or -1."""
    i = _slot(table, low, high)
    return i if table[i, T_HIGH] >= 0 else -1


@inner
def _store(table: np.ndarray, state: np.ndarray, low: int, high: int, bound: int, error: int,
           feature: int) -> None:
    """Record a node's optimum (error ≥ 0) or a lower bound; an optimum is never replaced."""
    i = _slot(table, low, high)
    if table[i, T_HIGH] >= 0:
        if table[i, T_ERROR] >= 0:
            return
        bound = max(bound, table[i, T_BOUND])
    else:
        table[i, T_LOW], table[i, T_HIGH] = low, high
        state[CACHED] += 1
    table[i, T_BOUND], table[i, T_ERROR], table[i, T_FEATURE] = bound, error, feature


@entry
def rehash(table: np.ndarray, larger: np.ndarray) -> None:
    """Copy the entries of ``table`` into the empty, larger table ``larger``."""
    for i in range(len(table)):
        if table[i, T_HIGH] >= 0:
            j = _slot(larger, table[i, T_LOW], table[i, T_HIGH])
            for column in range(table.shape[1]):
                larger[j, column] = table[i, column]


@inner
def _similarity_bound(options: Options, archive: Archive, rows: np.ndarray, depth: int) -> int:
    """max over recent covers A solved at ``depth`` of bound(A) − |A \\ rows|: removing a
    sample removes at most one error (MurTree's similarity lower bound)."""
    if not options.use_similarity:
        return 0
    bits = archive.bits
    bits[:] = 0
    for r in rows:
        bits[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    best = 0
    for k in range(ARCHIVE):
        bound = archive.bounds[depth, k]
        if bound <= best:
            continue
        archived = archive.covers[depth, k]
        removed = 0
        for w in range(len(bits)):
            removed += _popcount(archived[w] & ~bits[w])
        best = max(best, bound - removed)
    return best


@inner
def _archive(options: Options, archive: Archive, rows: np.ndarray, depth: int, bound: int) -> None:
    """Remember ``rows`` with its lower bound for the similarity bound at ``depth``."""
    if not options.use_similarity or bound <= 0:
        return
    k = archive.next[depth]
    archive.next[depth] = (k + 1) % ARCHIVE
    slot = archive.covers[depth, k]
    slot[:] = 0
    for r in rows:
        slot[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    archive.bounds[depth, k] = bound


@inner
def _known_bound(samples: Samples, options: Options, archive: Archive, table: np.ndarray,
                 low: int, high: int, rows: np.ndarray, depth: int) -> int:
    """A lower bound on the errors of the child with key (low, high): exact for a trivial
    child, else from the cache and the similarity bound."""
    leaf_error, _ = _leaf(_class_counts(samples.y, rows, options.n_classes))
    if _trivial(options.min_support, len(rows), leaf_error, depth):
        return leaf_error
    bound = 0
    i = _find(table, low, high) if options.use_cache else -1
    if i >= 0:
        bound = table[i, T_ERROR] if table[i, T_ERROR] >= 0 else table[i, T_BOUND]
    return max(bound, _similarity_bound(options, archive, rows, depth))


@inner
def _known(options: Options, table: np.ndarray, low: int, high: int) -> bool:
    """Whether the cache holds the optimum of the branch with key (low, high)."""
    i = _find(table, low, high) if options.use_cache else -1
    return i >= 0 and table[i, T_ERROR] >= 0


# --------------------------------------------------------------------------- the search
@entry
def advance(samples: Samples, options: Options, pc: PairCounts, archive: Archive, frames: Frames,
            table: np.ndarray, depth: int, flag: np.ndarray) -> int:
    """Run the depth-first AND/OR search (one open OR node per level, no recursion) from where
    ``frames.state`` says it stands. Returns DONE (the root's errors if < its budget else -1,
    and a lower bound, in ``state[OUT_ERROR]``, ``state[OUT_BOUND]``) or FULL when the table
    needs to grow before going on. Once ``flag[0]`` or ``state[HALT]`` is non-zero (written by
    another thread) the search tries no more splits: it winds up as at a time limit."""
    state, frame = frames.state, frames.frame
    step, level, ub, slot = state[STEP], state[LEVEL], state[UB], PARENT
    error = bound = state[OUT_ERROR]
    while True:
        left = depth - level
        if step == OPEN:
            settled, error, bound = _enter(samples, options, pc, archive, frames, table, level,
                                           left, ub, slot)
            step = TRY
            if settled:
                if level == 0:
                    break
                level, step = level - 1, TAKE
        elif step == TAKE:
            step = TRY
            if state[TIMED_OUT]:
                frame[level, PHASE] = 0
            elif _take(frame[level], error, bound):
                ub, slot = _open_second(options, frames, level)
                level, step = level + 1, OPEN
        elif frame[level, POS] < frame[level, LEN] and not _stopping(state, flag):
            # each step stores at most one entry, and there are fewer than 2 * depth + 4 of
            # them between two split attempts
            if 3 * (state[CACHED] + 2 * depth + 4) > 2 * len(table):
                state[STEP], state[LEVEL] = step, level
                return FULL
            tried, ub, slot = _open_split(samples, options, pc, archive, frames, table, level, left)
            if tried:
                level, step = level + 1, OPEN
        else:
            error, bound = _close(options, archive, frames, table, level, left)
            if level == 0:
                break
            level, step = level - 1, TAKE
    state[OUT_ERROR], state[OUT_BOUND] = error, bound
    return DONE


@inlined
def _stopping(state: np.ndarray, flag: np.ndarray) -> bool:
    """Whether the search winds up: it was told to (``state[TIMED_OUT]``), or another thread
    has set ``flag[0]`` or ``state[HALT]`` since."""
    if state[TIMED_OUT] == 0 and (_shared(flag, FLAG_AT) != 0 or _shared(state, HALT_AT) != 0):
        state[TIMED_OUT] = 1
    return state[TIMED_OUT] != 0


@inlined
def _enter(samples: Samples, options: Options, pc: PairCounts, archive: Archive, frames: Frames,
           table: np.ndarray, level: int, depth: int, ub: int, slot: int) -> tuple[bool, int, int]:
    """Open the OR node at ``level`` (cover ``rows_at[level]``, branch ``paths[level]``, ``depth``
    levels left) under ``ub``. Returns (True, errors of its optimal tree if < ``ub`` else -1,
    a lower bound) when settled at once — trivial, known, bounded or counted — else
    (False, 0, 0) with its frame set up. ``slot`` other than PARENT: ``pairs[slot]`` holds its
    pair counts."""
    frame = frames.frame[level]
    rows = frames.rows_at[level, :frame[SIZE]]
    leaf_error, _ = _leaf(_class_counts(samples.y, rows, options.n_classes))
    if _trivial(options.min_support, len(rows), leaf_error, depth):
        return True, (leaf_error if leaf_error < ub else -1), leaf_error
    low, high = _key(frames.paths[level], level, options.literal_bits)
    bound = 0
    i = _find(table, low, high) if options.use_cache else -1
    if i >= 0:
        if table[i, T_ERROR] >= 0:
            return True, (table[i, T_ERROR] if table[i, T_ERROR] < ub else -1), table[i, T_ERROR]
        bound = table[i, T_BOUND]
    if options.use_bounds:
        bound = max(bound, _similarity_bound(options, archive, rows, depth))
        if bound >= ub:
            return True, -1, bound
    if bound >= leaf_error:
        return True, (leaf_error if leaf_error < ub else -1), leaf_error
    frames.state[NODES] += 1
    if depth <= options.counting_depth:
        error, feature = _terminal(samples, options, pc, rows, depth, slot)
        _store(table, frames.state, low, high, error, error, feature)
        _archive(options, archive, rows, depth, error)
        return True, (error if error < ub else -1), error
    frame[POS], frame[PHASE], frame[BOUND], frame[KEY_LOW], frame[KEY_HIGH] = 0, 0, bound, low, high
    frame[LEN] = _feature_order(samples, options, rows, frames.order_at[level])
    frame[BEST], frame[BEST_FEATURE] = (leaf_error, -1) if leaf_error < ub else (-1, -1)
    frame[BUDGET] = min(ub, leaf_error) if options.use_bounds else leaf_error
    frame[FAILED] = leaf_error  # the least lower bound of the splits that did not fit
    if depth == 3 and options.counting_depth == 2:
        _count_pairs(samples, pc, rows, PARENT, VARYING)
    return False, 0, 0


@inlined
def _terminal(samples: Samples, options: Options, pc: PairCounts, rows: np.ndarray, depth: int,
              slot: int) -> tuple[int, int]:
    """(errors, root feature) of the best tree of depth ≤ ``depth`` (1 or 2) by counting;
    ``slot`` other than PARENT: ``pairs[slot]`` holds the rows' pair counts already."""
    if depth == 1:
        return best_stump(samples, options, rows)
    if slot == PARENT:
        slot = SMALLER
        _count_pairs(samples, pc, rows, slot, VARYING)
    active = pc.active[slot, :pc.active_len[slot]]
    counts = _class_counts(samples.y, rows, options.n_classes)
    error, i = best_depth_two(options.min_support, counts, pc.pairs[slot], active)
    return error, (active[i] if i >= 0 else -1)


@inlined
def _close(options: Options, archive: Archive, frames: Frames, table: np.ndarray, level: int,
           depth: int) -> tuple[int, int]:
    """Close the OR node at ``level``: store and return its (optimal errors or -1, bound)."""
    frame, state = frames.frame[level], frames.state
    if level == 0:
        state[ROOT_ERROR], state[ROOT_FEATURE] = frame[BEST], frame[BEST_FEATURE]
    if state[TIMED_OUT]:
        return -1, frame[BOUND]
    best = frame[BEST]  # -1, with BEST_FEATURE -1, when no tree fits the budget
    bound = best if best >= 0 else max(frame[FAILED], frame[BOUND])
    if best >= 0 or not options.paper:  # the paper caches optimal sub-trees only
        _store(table, state, frame[KEY_LOW], frame[KEY_HIGH], bound, best, frame[BEST_FEATURE])
    _archive(options, archive, frames.rows_at[level, :frame[SIZE]], depth, bound)
    return best, bound


@inlined
def _open_split(samples: Samples, options: Options, pc: PairCounts, archive: Archive,
                frames: Frames, table: np.ndarray, level: int, depth: int) -> tuple[bool, int, int]:
    """Try the next feature f of the node at ``level``: split its cover and bound its children.
    Returns (False, 0, 0) when their bounds exceed the budget, else (True, budget, pair-count
    slot) of the x_f = 0 child, set up at ``level + 1`` to be opened."""
    frame, paths = frames.frame[level], frames.paths
    f = frames.order_at[level, frame[POS]]
    frame[POS] += 1
    size0, size1 = _partition(samples.Xt[f], frames.rows_at[level, :frame[SIZE]],
                              frames.rows_at[level + 1], frames.ones_at[level])
    zero_rows, one_rows = frames.rows_at[level + 1, :size0], frames.ones_at[level, :size1]
    frames.frame[level + 1, SIZE], frame[SIZE1] = size0, size1
    _extend(paths, level, 2 * f + 1)
    low1, high1 = _key(paths[level + 1], level + 1, options.literal_bits)
    _extend(paths, level, 2 * f)  # last: the x_f = 0 child is opened first
    low0, high0 = _key(paths[level + 1], level + 1, options.literal_bits)
    bound1 = 0
    if options.use_bounds and not options.paper:
        bound0 = _known_bound(samples, options, archive, table, low0, high0, zero_rows, depth - 1)
        bound1 = _known_bound(samples, options, archive, table, low1, high1, one_rows, depth - 1)
        if bound0 + bound1 >= frame[BUDGET]:
            frame[FAILED] = min(frame[FAILED], bound0 + bound1)
            return False, 0, False
    frame[FEATURE], frame[PHASE], frame[BOUND1], frame[SLOT1] = f, 1, bound1, PARENT
    slot0 = PARENT
    if (depth == 3 and options.counting_depth == 2 and not _known(options, table, low0, high0)
            and not _known(options, table, low1, high1)):
        slot0 = _share_pairs(samples, pc, frame, zero_rows, one_rows)
    return True, (frame[BUDGET] - bound1 if options.use_bounds else INF), slot0


@inlined
def _open_second(options: Options, frames: Frames, level: int) -> tuple[int, int]:
    """Set up the x_f = 1 child of the split being tried at ``level`` at ``level + 1``;
    returns its (budget, pair-count slot)."""
    frame = frames.frame[level]
    frame[PHASE] = 2
    size = frame[SIZE1]
    for k in range(size):
        frames.rows_at[level + 1, k] = frames.ones_at[level, k]
    frames.frame[level + 1, SIZE] = size
    _extend(frames.paths, level, 2 * frame[FEATURE] + 1)
    return (frame[BUDGET] - frame[ERROR0] if options.use_bounds else INF), frame[SLOT1]


@inlined
def _share_pairs(samples: Samples, pc: PairCounts, frame: np.ndarray, zero_rows: np.ndarray,
                 one_rows: np.ndarray) -> int:
    """The pair-count slot of the x_f = 0 child of the split being tried at a depth-3 node
    whose state is ``frame``, that of the x_f = 1 child into ``frame[SLOT1]``, when neither
    child is known: count the smaller child, take the larger's as the node's counts minus
    those; PARENT — each child counts its own — if the larger fits one word per class, where
    counting costs less."""
    zero_smaller = len(zero_rows) <= len(one_rows)
    if len(one_rows if zero_smaller else zero_rows) <= 64:
        return PARENT
    _count_pairs(samples, pc, zero_rows if zero_smaller else one_rows, SMALLER, PARENT)
    _subtract_pairs(pc, LARGER, PARENT, SMALLER)
    frame[SLOT1] = LARGER if zero_smaller else SMALLER
    return SMALLER if zero_smaller else LARGER


@inlined
def _take(frame: np.ndarray, error: int, bound: int) -> bool:
    """Record the result of a child of the node whose state is ``frame``; True when the x_f = 1
    child is to be solved next."""
    if frame[PHASE] == 1:
        if error < 0:
            frame[FAILED] = min(frame[FAILED], bound + frame[BOUND1])
            frame[PHASE] = 0
            return False
        frame[ERROR0] = error
        return True
    frame[PHASE] = 0
    if error < 0:
        frame[FAILED] = min(frame[FAILED], frame[ERROR0] + bound)
    elif frame[ERROR0] + error < frame[BUDGET]:
        frame[BEST], frame[BEST_FEATURE] = frame[ERROR0] + error, frame[FEATURE]
        frame[BUDGET] = frame[BEST]
        if frame[BEST] <= frame[BOUND]:  # nothing can beat a tree meeting the lower bound
            frame[POS] = frame[LEN]
    return False


# --------------------------------------------------------------------------- trees
@entry
def grow(samples: Samples, options: Options, pc: PairCounts, paths: np.ndarray, table: np.ndarray,
         depth: int, root_feature: int, greedy: bool, features: np.ndarray,
         labels: np.ndarray) -> int:
    """Write a tree in heap order (features -1 at leaves) and return its errors, top down. A
    node with one level left splits on its best single split, with two and ``counting_depth``
    2 on the root of its best depth-2 tree (cached, else counted); a node with more levels on
    the cached root split of its branch (the root on ``root_feature`` if it is not -2), or if
    ``greedy`` on its best single split — and these splits are undone if they do not beat
    their leaf."""
    size = len(features)
    errors = np.zeros(size, dtype=np.int64)
    leaf_errors = np.zeros(size, dtype=np.int64)
    searched = np.zeros(size, dtype=np.bool_)
    features[:] = -1
    for node in range(1, size):
        if node > 1 and features[node >> 1] < 0:
            continue
        rows, level = _node_rows(samples, paths, node, features)
        leaf_errors[node], labels[node] = _leaf(_class_counts(samples.y, rows, options.n_classes))
        errors[node] = leaf_errors[node]
        left = depth - level
        if _trivial(options.min_support, len(rows), leaf_errors[node], left):
            continue
        if left == 1:
            _, features[node] = best_stump(samples, options, rows)
        elif left == 2 and options.counting_depth == 2:
            low, high = _key(paths[level], level, options.literal_bits)
            i = -1 if greedy else _find(table, low, high)
            if i >= 0 and table[i, T_ERROR] >= 0:  # counted by the search
                features[node] = table[i, T_FEATURE]
                continue
            _count_pairs(samples, pc, rows, SMALLER, VARYING)
            active = pc.active[SMALLER, :pc.active_len[SMALLER]]
            counts = _class_counts(samples.y, rows, options.n_classes)
            _, i = best_depth_two(options.min_support, counts, pc.pairs[SMALLER], active)
            features[node] = active[i] if i >= 0 else -1
        else:
            searched[node] = True
            if greedy:
                order = np.empty(samples.Xt.shape[0], dtype=np.int64)
                features[node] = order[0] if _feature_order(samples, options, rows, order) else -1
            elif node == 1 and root_feature != -2:
                features[node] = root_feature
            else:
                low, high = _key(paths[level], level, options.literal_bits)
                i = _find(table, low, high)
                features[node] = table[i, T_FEATURE] if i >= 0 else -1
    for node in range(size // 2 - 1, 0, -1):
        if features[node] >= 0:
            errors[node] = errors[2 * node] + errors[2 * node + 1]
            if searched[node] and errors[node] >= leaf_errors[node]:
                features[node], errors[node] = -1, leaf_errors[node]
    return errors[1]


@inlined
def _node_rows(samples: Samples, paths: np.ndarray, node: int,
               features: np.ndarray) -> tuple[np.ndarray, int]:
    """The cover of heap node ``node`` and its level; ``paths[level]`` becomes its branch."""
    rows = np.arange(samples.Xt.shape[1])
    level = 0
    while node >> (level + 1):
        level += 1
    for up in range(level):
        ancestor = node >> (level - up)
        side = (node >> (level - up - 1)) & 1
        f = features[ancestor]
        rows = _side(samples.Xt[f], rows, side, np.empty(len(rows), dtype=np.int64))
        _extend(paths, up, 2 * f + side)
    return rows, level


KERNELS = (advance, grow, rehash)  # the functions Python calls
