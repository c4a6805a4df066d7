"""Compiled inner loops of the AND/OR tree search in :mod:`odtk.engines.cp_search`.

Why compiled, and why numba: a depth-4 search visits 10^4–10^6 OR nodes and runs the depth-2
counting solver at most of them; the work per node is a few hundred to a few thousand integer
operations, so in Python the interpreter's overhead per node, not the arithmetic, sets the
time (measured with numpy-vectorised counting: 3.4× STreeD's C++ time at depth 3 and 7.5× at
depth 4 in geometric mean, up to 72×). numba compiles these plain Python functions with LLVM
at first use (about two minutes of CPU, once) and caches the machine code on disk
(``cache=True``); it ships binary wheels (numba, llvmlite) for Linux, macOS and Windows, so
``pip install`` needs no C compiler. Cython would need one on every machine that installs odtk
from source, or per-platform wheels built and published by odtk. No function here recurses:
numba's on-disk cache does not reload recursive functions safely.

Data layout: a cover (the samples satisfying an itemset) is an array of row indices; the
features are a transposed 0/1 matrix ``Xt[f, r]`` and, per row, the list of features equal to 1
(``row_ptr``/``row_features``). Itemsets (*branches*) are keyed exactly by their sorted
literals ``2f + v`` packed into two 64-bit words.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit, objmode, types
from numba.extending import intrinsic
from numba.typed import Dict

KEY_TYPE = types.UniTuple(types.int64, 2)
ENTRY_TYPE = types.UniTuple(types.int64, 3)  # (lower bound, error or -1, root feature or -1)
ARCHIVE = 4  # covers kept per depth for the similarity bound
INF = 1 << 40
CLOCK_EVERY = 64  # split evaluations between two reads of the clock
# the columns of ``Data.frame``: an open OR node's state
(POS, LEN, PHASE, FEATURE, BUDGET, BEST, BEST_FEATURE, FAILED, BOUND, KEY_LOW, KEY_HIGH, ERROR0,
 BOUND1, SLOT1) = range(14)
FIELDS = 14


class Data(NamedTuple):
    """The training data, the options and the search's work buffers (one search)."""

    Xt: np.ndarray            # uint8 [m, n]
    y: np.ndarray             # int64 [n]
    row_ptr: np.ndarray       # int64 [n + 1]
    row_features: np.ndarray  # int64: features equal to 1, row by row
    n_classes: int
    min_support: int
    counting_depth: int
    use_cache: bool
    use_bounds: bool
    use_similarity: bool      # sound only when min_support == 1
    literal_bits: int
    time_limit: float
    pairs: np.ndarray         # int32 [3, C, m, m]: the pair counts of a node and of two children
    active: np.ndarray        # int64 [3, m]: the features each slot of ``pairs`` counts
    active_len: np.ndarray    # int64 [3]
    packed: np.ndarray        # uint64 [C, m, words]: a cover's columns as bitsets, per class
    columns: np.ndarray       # uint64 [words, m]: the active ones of a class, word by word
    cover_bits: np.ndarray    # uint64 [words]: a cover as a bitset over all rows
    archive: np.ndarray       # uint64 [depth + 1, ARCHIVE, words]
    archive_bound: np.ndarray  # int64 [depth + 1, ARCHIVE], -1 when empty
    archive_next: np.ndarray  # int64 [depth + 1]: the slot to overwrite next
    paths: np.ndarray         # int64 [depth + 2, depth + 1]: sorted literals per level
    stats: np.ndarray         # int64 [5]: nodes, timed out, root error, root feature, splits tried
    clock: np.ndarray         # float64 [1]: the deadline
    rows_at: np.ndarray       # int64 [depth + 2, n]: the cover of the node open at each level
    size_at: np.ndarray       # int64 [depth + 2]: its size
    order_at: np.ndarray      # int64 [depth + 1, m]: its features in the order tried
    frame: np.ndarray         # int64 [depth + 2, FIELDS]: its search state (columns below)
    scratch: np.ndarray       # int64 [n]: the x_f = 1 side while both children are bounded


def make_data(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, min_support: int,
              counting_depth: int, cache: bool, bounds: bool, time_limit: float | None) -> Data:
    """The search's inputs from a 0/1 matrix and classes 0..k-1."""
    n, m = X.shape
    rows, features = np.nonzero(X)
    words = (n + 63) // 64
    literal_bits = int(2 * m + 1).bit_length()
    return Data(np.ascontiguousarray(X.T, dtype=np.uint8), y.astype(np.int64),
                np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64),
                features.astype(np.int64), n_classes, min_support, counting_depth, cache, bounds,
                bounds and min_support == 1, literal_bits,
                np.inf if time_limit is None else float(time_limit),
                np.zeros((3, n_classes, m, m) if counting_depth == 2 else (3, n_classes, 0, 0), dtype=np.int32),
                np.zeros((3, m), dtype=np.int64), np.zeros(3, dtype=np.int64),
                np.zeros((n_classes, m, words), dtype=np.uint64), np.zeros((words, m), dtype=np.uint64),
                np.zeros(words, dtype=np.uint64),
                np.zeros((depth + 1, ARCHIVE, words), dtype=np.uint64),
                np.full((depth + 1, ARCHIVE), -1, dtype=np.int64), np.zeros(depth + 1, dtype=np.int64),
                np.zeros((depth + 2, depth + 1), dtype=np.int64),
                np.zeros(5, dtype=np.int64), np.zeros(1), np.zeros((depth + 2, n), dtype=np.int64),
                np.zeros(depth + 2, dtype=np.int64), np.zeros((depth + 1, m), dtype=np.int64),
                np.zeros((depth + 2, FIELDS), dtype=np.int64), np.zeros(n, dtype=np.int64))


def max_path_length(m: int) -> int:
    """The longest branch two packed 64-bit words can key with ``m`` features."""
    return 2 * (63 // int(2 * m + 1).bit_length())


# --------------------------------------------------------------------------- primitives
@intrinsic
def _popcount(typingctx, x):
    """The number of set bits of a uint64 (LLVM's ctpop)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@njit(cache=True)
def _now() -> float:
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def _leaf(counts: np.ndarray) -> tuple[int, int]:
    """(errors, label) of a leaf with class counts ``counts``."""
    label = 0
    for c in range(1, len(counts)):
        if counts[c] > counts[label]:
            label = c
    return counts.sum() - counts[label], label


@njit(cache=True)
def _class_counts(data: Data, rows: np.ndarray) -> np.ndarray:
    counts = np.zeros(data.n_classes, dtype=np.int64)
    for r in rows:
        counts[data.y[r]] += 1
    return counts


@njit(cache=True)
def _single_counts(data: Data, rows: np.ndarray) -> np.ndarray:
    """``ones[c, f]``: samples of class c in ``rows`` with x_f = 1."""
    ones = np.zeros((data.n_classes, data.Xt.shape[0]), dtype=np.int64)
    for r in rows:
        c = data.y[r]
        for j in range(data.row_ptr[r], data.row_ptr[r + 1]):
            ones[c, data.row_features[j]] += 1
    return ones


# --------------------------------------------------------------------------- counting solvers
@njit(cache=True, inline="always")
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


@njit(cache=True)
def best_stump(data: Data, rows: np.ndarray) -> tuple[int, int]:
    """(errors, feature) of the best tree of depth ≤ 1; feature -1 for the leaf."""
    counts = _class_counts(data, rows)
    best, _ = _leaf(counts)
    best_feature = -1
    ones = _single_counts(data, rows)
    for f in range(ones.shape[1]):
        error = _split_error(data.min_support, counts, ones[:, f])
        if error < best:
            best, best_feature = error, f
    return best, best_feature


@njit(cache=True)
def _count_pairs(data: Data, rows: np.ndarray, slot: int, within: int) -> None:
    """``pairs[slot][c, i, j]``: samples of class c in ``rows`` with x_f = x_g = 1 for the i-th
    and j-th features f, g of ``active[slot]`` (popcounts of the cover's columns packed per
    class). That list is ``active[within]``, or if ``within`` is -1 the features not constant
    on ``rows``."""
    C, m, _ = data.packed.shape
    out, active = data.pairs[slot], data.active[slot]
    placed = np.zeros(C, dtype=np.int64)
    counts = _class_counts(data, rows)
    for c in range(C):
        data.packed[c, :, :(counts[c] + 63) >> 6] = 0
    for r in rows:
        c = data.y[r]
        word, bit = placed[c] >> 6, np.uint64(1) << np.uint64(placed[c] & 63)
        placed[c] += 1
        for j in range(data.row_ptr[r], data.row_ptr[r + 1]):
            data.packed[c, data.row_features[j], word] |= bit
    length = _active_features(data, counts, within, active)
    data.active_len[slot] = length
    for c in range(C):
        words = (counts[c] + 63) >> 6
        columns = data.columns[:words, :length]  # word-major: the inner loop runs over features
        for i in range(length):
            columns[:, i] = data.packed[c, active[i], :words]
        for i in range(length):
            row = out[c, i, :length]
            row[:] = 0
            for w in range(words):
                word, column = columns[w, i], columns[w]
                for j in range(length):
                    row[j] += np.int32(_popcount(word & column[j]))


@njit(cache=True)
def _active_features(data: Data, counts: np.ndarray, within: int, active: np.ndarray) -> int:
    """Write ``active[within]`` (``within`` ≥ 0) or the features neither all 0 nor all 1 in the
    packed cover into ``active``; returns how many."""
    if within >= 0:
        length = data.active_len[within]
        active[:length] = data.active[within, :length]
        return length
    length = 0
    for f in range(data.packed.shape[1]):
        ones = 0
        for c in range(len(counts)):
            for w in range((counts[c] + 63) >> 6):
                ones += _popcount(data.packed[c, f, w])
        if 0 < ones < counts.sum():
            active[length] = f
            length += 1
    return length


@njit(cache=True)
def _subtract_pairs(data: Data, target: int, whole: int, part: int) -> None:
    """``pairs[target]`` = ``pairs[whole]`` − ``pairs[part]``, both over ``active[whole]``: the
    counts of a cover's complement within a larger one."""
    length = data.active_len[whole]
    data.active[target, :length] = data.active[whole, :length]
    data.active_len[target] = length
    np.subtract(data.pairs[whole, :, :length, :length], data.pairs[part, :, :length, :length],
                data.pairs[target, :, :length, :length])


@njit(cache=True)
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
        error0, _, error1, _ = best_children(min_support, counts, pairs, len(active), i)
        if error0 + error1 < best:
            best, best_i = error0 + error1, i
    return best, best_i


@njit(cache=True)
def best_children(min_support: int, counts: np.ndarray, pairs: np.ndarray, length: int,
                  i: int) -> tuple[int, int, int, int]:
    """(errors, j) of the best tree of depth ≤ 1 on the x_f = 0 side of a split on the i-th
    active feature f, then on its x_f = 1 side: a split on the j-th active feature (-1: a
    leaf); (INF, -1, INF, -1) if a side holds fewer than min_support samples."""
    C = pairs.shape[0]
    zero = np.empty(C, dtype=np.int64)
    one = np.empty(C, dtype=np.int64)
    cell = np.empty(C, dtype=np.int64)
    for c in range(C):
        one[c] = pairs[c, i, i]
        zero[c] = counts[c] - one[c]
    size, size_one = counts.sum(), one.sum()
    if size_one < min_support or size - size_one < min_support:
        return INF, -1, INF, -1
    error0, _ = _leaf(zero)
    error1, _ = _leaf(one)
    j0 = j1 = -1
    split0 = error0 > 0 and size - size_one >= 2 * min_support
    split1 = error1 > 0 and size_one >= 2 * min_support
    for j in range(length):
        if split0:
            for c in range(C):  # x_f = 0, x_g = 1
                cell[c] = pairs[c, j, j] - pairs[c, i, j]
            error = _split_error(min_support, zero, cell)
            if error < error0:
                error0, j0 = error, j
        if split1:
            for c in range(C):  # x_f = 1, x_g = 1
                cell[c] = pairs[c, i, j]
            error = _split_error(min_support, one, cell)
            if error < error1:
                error1, j1 = error, j
    return error0, j0, error1, j1


@njit(cache=True)
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


@njit(cache=True)
def _terminal(data: Data, rows: np.ndarray, depth: int, slot: int) -> tuple[int, int]:
    """(errors, root feature) of the best tree of depth ≤ ``depth`` (1 or 2) by counting;
    ``slot`` > 0: ``pairs[slot]`` holds the rows' pair counts already."""
    if depth == 1:
        return best_stump(data, rows)
    if slot <= 0:
        slot = 1
        _count_pairs(data, rows, slot, -1)
    active = data.active[slot, :data.active_len[slot]]
    error, i = best_depth_two(data.min_support, _class_counts(data, rows), data.pairs[slot], active)
    return error, (active[i] if i >= 0 else -1)


# --------------------------------------------------------------------------- cache and bounds
@njit(cache=True)
def _key(data: Data, path: np.ndarray, length: int, literal: int) -> tuple[int, int]:
    """The packed key of the sorted branch ``path[:length]`` ∪ {literal} (-1: none)."""
    bits = data.literal_bits
    per_word = 63 // bits
    low = high = 0
    j = 0
    pending = literal >= 0
    for i in range(length + pending):
        if pending and (j == length or literal < path[j]):
            value, pending = literal, False
        else:
            value = path[j]
            j += 1
        word = (value + 1) << (bits * (i % per_word))
        if i < per_word:
            low |= word
        else:
            high |= word
    return low, high


@njit(cache=True)
def _extend(data: Data, level: int, literal: int) -> None:
    """``paths[level + 1]``: the sorted branch ``paths[level][:level]`` ∪ {literal}."""
    source, target = data.paths[level], data.paths[level + 1]
    i = 0
    for j in range(level):
        if source[j] > literal and i == j:
            target[i] = literal
            i += 1
        target[i] = source[j]
        i += 1
    if i == level:
        target[i] = literal


@njit(cache=True)
def _similarity_bound(data: Data, rows: np.ndarray, depth: int) -> int:
    """max over recent covers A solved at ``depth`` of bound(A) − |A \\ rows|: removing a
    sample removes at most one error (MurTree's similarity lower bound)."""
    if not data.use_similarity:
        return 0
    bits = data.cover_bits
    bits[:] = 0
    for r in rows:
        bits[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    best = 0
    for k in range(ARCHIVE):
        bound = data.archive_bound[depth, k]
        if bound <= best:
            continue
        archived = data.archive[depth, k]
        removed = 0
        for w in range(len(bits)):
            removed += _popcount(archived[w] & ~bits[w])
        best = max(best, bound - removed)
    return best


@njit(cache=True)
def _archive(data: Data, rows: np.ndarray, depth: int, bound: int) -> None:
    """Remember ``rows`` with its lower bound for the similarity bound at ``depth``."""
    if not data.use_similarity or bound <= 0:
        return
    k = data.archive_next[depth]
    data.archive_next[depth] = (k + 1) % ARCHIVE
    slot = data.archive[depth, k]
    slot[:] = 0
    for r in rows:
        slot[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    data.archive_bound[depth, k] = bound


@njit(cache=True)
def _known_bound(data: Data, cache, key: tuple[int, int], rows: np.ndarray, depth: int) -> int:
    """A lower bound on a child's errors: exact for a trivial child, else from the cache and
    the similarity bound."""
    leaf_error, _ = _leaf(_class_counts(data, rows))
    if _trivial(data, len(rows), leaf_error, depth):
        return leaf_error
    bound = 0
    if data.use_cache and key in cache:
        entry = cache[key]
        bound = entry[1] if entry[1] >= 0 else entry[0]
    return max(bound, _similarity_bound(data, rows, depth))


@njit(cache=True)
def _store(cache, key: tuple[int, int], bound: int, error: int, feature: int) -> None:
    """Record a node's optimum (error ≥ 0) or a lower bound; an optimum is never replaced."""
    if key in cache:
        old = cache[key]
        if old[1] >= 0:
            return
        bound = max(bound, old[0])
    cache[key] = (bound, error, feature)


@njit(cache=True)
def _out_of_time(data: Data) -> bool:
    if data.stats[1]:
        return True
    data.stats[4] += 1
    if data.stats[4] % CLOCK_EVERY == 1 and _now() > data.clock[0]:
        data.stats[1] = 1
    return data.stats[1] == 1


# --------------------------------------------------------------------------- the search
@njit(cache=True)
def _trivial(data: Data, size: int, leaf_error: int, depth: int) -> bool:
    """A node whose best tree is its leaf without search: no levels left, pure, or too small."""
    return depth == 0 or leaf_error == 0 or size < 2 * data.min_support


@njit(cache=True)
def _feature_order(data: Data, rows: np.ndarray, out: np.ndarray) -> int:
    """Write into ``out`` the features whose split leaves min_support samples on each side,
    by the errors of that single split, best first; returns how many."""
    counts = _class_counts(data, rows)
    ones = _single_counts(data, rows)
    errors = np.empty(ones.shape[1], dtype=np.int64)
    for f in range(ones.shape[1]):
        errors[f] = _split_error(data.min_support, counts, ones[:, f])
    valid = np.sum(errors < INF)
    out[:valid] = np.argsort(errors, kind="mergesort")[:valid]
    return valid


@njit(cache=True)
def _side(data: Data, rows: np.ndarray, f: int, value: int, out: np.ndarray) -> np.ndarray:
    """The rows of ``rows`` with x_f = ``value``, written into ``out``."""
    column = data.Xt[f]
    k = 0
    for r in rows:
        if column[r] == value:
            out[k] = r
            k += 1
    return out[:k]


@njit(cache=True)
def _rows(data: Data, level: int) -> np.ndarray:
    return data.rows_at[level, :data.size_at[level]]


@njit(cache=True)
def _enter(data: Data, cache, level: int, depth: int, ub: int, slot: int) -> tuple[bool, int, int]:
    """Open the OR node at ``level`` (cover ``rows_at[level]``, branch ``paths[level]``, ``depth``
    levels left) under ``ub``. Returns (True, errors of its optimal tree if < ``ub`` else -1,
    a lower bound) when settled at once — trivial, known, bounded or counted — else
    (False, 0, 0) with its frame set up. ``slot`` > 0: ``pairs[slot]`` holds its pair counts."""
    rows = _rows(data, level)
    leaf_error, _ = _leaf(_class_counts(data, rows))
    if _trivial(data, len(rows), leaf_error, depth):
        return True, (leaf_error if leaf_error < ub else -1), leaf_error
    low, high = _key(data, data.paths[level], level, -1)
    bound = 0
    if data.use_cache and (low, high) in cache:
        entry = cache[(low, high)]
        if entry[1] >= 0:
            return True, (entry[1] if entry[1] < ub else -1), entry[1]
        bound = entry[0]
    if data.use_bounds:
        bound = max(bound, _similarity_bound(data, rows, depth))
        if bound >= ub:
            return True, -1, bound
    if bound >= leaf_error:
        return True, (leaf_error if leaf_error < ub else -1), leaf_error
    data.stats[0] += 1
    if depth <= data.counting_depth:
        error, feature = _terminal(data, rows, depth, slot)
        _store(cache, (low, high), error, error, feature)
        _archive(data, rows, depth, error)
        return True, (error if error < ub else -1), error
    frame = data.frame[level]
    frame[POS], frame[PHASE], frame[BOUND], frame[KEY_LOW], frame[KEY_HIGH] = 0, 0, bound, low, high
    frame[LEN] = _feature_order(data, rows, data.order_at[level])
    frame[BEST], frame[BEST_FEATURE] = (leaf_error, -1) if leaf_error < ub else (-1, -1)
    frame[BUDGET] = min(ub, leaf_error) if data.use_bounds else leaf_error
    frame[FAILED] = leaf_error  # the least lower bound of the splits that did not fit
    if depth == 3 and data.counting_depth == 2:
        _count_pairs(data, rows, 0, -1)
    return False, 0, 0


@njit(cache=True)
def _close(data: Data, cache, level: int, depth: int) -> tuple[int, int]:
    """Close the OR node at ``level``: store and return its (optimal errors or -1, bound)."""
    frame = data.frame[level]
    if level == 0:
        data.stats[2], data.stats[3] = frame[BEST], frame[BEST_FEATURE]
    if data.stats[1]:
        return -1, frame[BOUND]
    key, rows = (frame[KEY_LOW], frame[KEY_HIGH]), _rows(data, level)
    if frame[BEST] >= 0:
        _store(cache, key, frame[BEST], frame[BEST], frame[BEST_FEATURE])
        _archive(data, rows, depth, frame[BEST])
        return frame[BEST], frame[BEST]
    failed = max(frame[FAILED], frame[BOUND])
    _store(cache, key, failed, -1, -1)
    _archive(data, rows, depth, failed)
    return -1, failed


@njit(cache=True)
def _open_split(data: Data, cache, level: int, depth: int) -> tuple[bool, bool, int, int]:
    """Try the next feature f of the node at ``level``: bound its children and open the
    x_f = 0 child. Returns (tried, child settled, its errors, its bound); tried is False when
    the children's bounds already exceed the budget."""
    frame = data.frame[level]
    f = data.order_at[level, frame[POS]]
    frame[POS] += 1
    rows = _rows(data, level)
    zero_rows = _side(data, rows, f, 0, data.rows_at[level + 1])
    one_rows = _side(data, rows, f, 1, data.scratch)
    data.size_at[level + 1] = len(zero_rows)
    path = data.paths[level]
    key0, key1 = _key(data, path, level, 2 * f), _key(data, path, level, 2 * f + 1)
    bound1 = 0
    if data.use_bounds:
        bound0 = _known_bound(data, cache, key0, zero_rows, depth - 1)
        bound1 = _known_bound(data, cache, key1, one_rows, depth - 1)
        if bound0 + bound1 >= frame[BUDGET]:
            frame[FAILED] = min(frame[FAILED], bound0 + bound1)
            return False, False, 0, 0
    slot0 = slot1 = 0
    if depth == 3 and data.counting_depth == 2:
        slot0, slot1 = _share_pairs(data, cache, key0, zero_rows, key1, one_rows)
    frame[FEATURE], frame[PHASE], frame[BOUND1], frame[SLOT1] = f, 1, bound1, slot1
    _extend(data, level, 2 * f)
    ub = frame[BUDGET] - bound1 if data.use_bounds else INF
    settled, error, bound = _enter(data, cache, level + 1, depth - 1, ub, slot0)
    return True, settled, error, bound


@njit(cache=True)
def _open_second(data: Data, cache, level: int, depth: int) -> tuple[bool, int, int]:
    """Open the x_f = 1 child of the split being tried at ``level``, as :func:`_enter`."""
    frame = data.frame[level]
    f = frame[FEATURE]
    frame[PHASE] = 2
    one_rows = _side(data, _rows(data, level), f, 1, data.rows_at[level + 1])
    data.size_at[level + 1] = len(one_rows)
    _extend(data, level, 2 * f + 1)
    ub = frame[BUDGET] - frame[ERROR0] if data.use_bounds else INF
    return _enter(data, cache, level + 1, depth - 1, ub, frame[SLOT1])


@njit(cache=True)
def _share_pairs(data: Data, cache, key0: tuple[int, int], zero_rows: np.ndarray,
                 key1: tuple[int, int], one_rows: np.ndarray) -> tuple[int, int]:
    """The pair-count slots of the two children of a depth-3 node: count the smaller child,
    take the larger's as the node's counts minus those; (0, 0) — each child counts its own —
    if a child is known or the larger fits one word per class, where counting costs less."""
    large = one_rows if len(zero_rows) <= len(one_rows) else zero_rows
    if len(large) <= 64:
        return 0, 0
    for key in (key0, key1):
        if data.use_cache and key in cache and cache[key][1] >= 0:
            return 0, 0
    _count_pairs(data, zero_rows if len(zero_rows) <= len(one_rows) else one_rows, 1, 0)
    _subtract_pairs(data, 2, 0, 1)
    return (1, 2) if len(zero_rows) <= len(one_rows) else (2, 1)


@njit(cache=True)
def _take(data: Data, level: int, error: int, bound: int) -> bool:
    """Record the result of a child of the node at ``level``; True when the x_f = 1 child
    is to be solved next."""
    frame = data.frame[level]
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


@njit(cache=True)
def search(data: Data, cache, depth: int, ub: int) -> tuple[int, int]:
    """(errors of the optimal tree if they are < ``ub`` else -1, a lower bound) at the root,
    by depth-first AND/OR search with one open OR node per level (no recursion)."""
    data.size_at[0] = data.Xt.shape[1]
    data.rows_at[0] = np.arange(data.Xt.shape[1])
    settled, error, bound = _enter(data, cache, 0, depth, ub, 0)
    if settled:
        return error, bound
    level, pending = 0, False
    while True:
        if pending:  # a child's result for the node at ``level``
            pending = False
            if data.stats[1]:
                data.frame[level, PHASE] = 0
            elif _take(data, level, error, bound):
                settled, error, bound = _open_second(data, cache, level, depth - level)
                pending = settled
                if not settled:
                    level += 1
                continue
        frame = data.frame[level]
        if frame[POS] < frame[LEN] and not data.stats[1] and not _out_of_time(data):
            tried, settled, error, bound = _open_split(data, cache, level, depth - level)
            pending = tried and settled
            if tried and not settled:
                level += 1
            continue
        error, bound = _close(data, cache, level, depth - level)
        if level == 0:
            return error, bound
        level, pending = level - 1, True


# --------------------------------------------------------------------------- trees
@njit(cache=True)
def _counted_tree(data: Data, rows: np.ndarray, depth: int, node: int, features: np.ndarray,
                  labels: np.ndarray) -> int:
    """Write the counting solvers' tree of depth ≤ ``depth`` (1 or 2) at heap index ``node``;
    returns its errors."""
    f = g0 = g1 = -1
    if depth == 1:
        _, f = best_stump(data, rows)
    else:
        _count_pairs(data, rows, 1, -1)
        active, counts = data.active[1, :data.active_len[1]], _class_counts(data, rows)
        _, i = best_depth_two(data.min_support, counts, data.pairs[1], active)
        if i >= 0:
            _, j0, _, j1 = best_children(data.min_support, counts, data.pairs[1], len(active), i)
            f, g0, g1 = active[i], (active[j0] if j0 >= 0 else -1), (active[j1] if j1 >= 0 else -1)
    if depth == 1 or f < 0:
        return _place(data, rows, f, node, features, labels)
    _place(data, rows, f, node, features, labels)
    error = 0
    for side, g in ((0, g0), (1, g1)):
        part = _side(data, rows, f, side, np.empty(len(rows), dtype=np.int64))
        error += _place(data, part, g, 2 * node + side, features, labels)
    return error


@njit(cache=True)
def _place(data: Data, rows: np.ndarray, f: int, node: int, features: np.ndarray,
           labels: np.ndarray) -> int:
    """Write a split on ``f`` with two leaves (``f`` = -1: a leaf) at heap index ``node``;
    returns its errors."""
    error, labels[node] = _leaf(_class_counts(data, rows))
    features[node] = f
    if f < 0:
        return error
    error = 0
    for side in range(2):
        part = _side(data, rows, f, side, np.empty(len(rows), dtype=np.int64))
        leaf_error, labels[2 * node + side] = _leaf(_class_counts(data, part))
        features[2 * node + side] = -1
        error += leaf_error
    return error


@njit(cache=True)
def _node_rows(data: Data, node: int, features: np.ndarray) -> tuple[np.ndarray, int]:
    """The cover of heap node ``node`` and its level; ``paths[level]`` becomes its branch."""
    rows = np.arange(data.Xt.shape[1])
    level = 0
    while node >> (level + 1):
        level += 1
    for up in range(level):
        ancestor = node >> (level - up)
        side = (node >> (level - up - 1)) & 1
        f = features[ancestor]
        rows = _side(data, rows, f, side, np.empty(len(rows), dtype=np.int64))
        _extend(data, up, 2 * f + side)
    return rows, level


@njit(cache=True)
def grow(data: Data, cache, depth: int, root_feature: int, features: np.ndarray,
         labels: np.ndarray) -> int:
    """Write a tree in heap order (features -1 at leaves) and return its errors. Nodes with
    more than ``counting_depth`` levels left split on the cached root split of their branch
    (the root on ``root_feature`` if it is not -2), or with no cache (``cache`` is None) on
    their best single split (a greedy tree); the bottom levels are counted. Splits that do not
    beat their leaf are undone."""
    size = len(features)
    errors = np.zeros(size, dtype=np.int64)
    leaf_errors = np.zeros(size, dtype=np.int64)
    searched = np.zeros(size, dtype=np.bool_)
    features[:] = -1
    for node in range(1, max(size // 2, 2)):  # the levels above the last (the root if depth 0)
        if node > 1 and (features[node >> 1] < 0 or not searched[node >> 1]):
            continue
        rows, level = _node_rows(data, node, features)
        leaf_errors[node], labels[node] = _leaf(_class_counts(data, rows))
        errors[node] = leaf_errors[node]
        left = depth - level
        if _trivial(data, len(rows), leaf_errors[node], left):
            continue
        if left <= max(data.counting_depth, 1):
            errors[node] = _counted_tree(data, rows, min(left, 2), node, features, labels)
            continue
        searched[node] = True
        if cache is None:
            order = np.empty(data.Xt.shape[0], dtype=np.int64)
            features[node] = order[0] if _feature_order(data, rows, order) else -1
        elif node == 1 and root_feature != -2:
            features[node] = root_feature
        else:
            key = _key(data, data.paths[level], level, -1)
            features[node] = cache[key][2] if key in cache else -1
    for node in range(size // 2 - 1, 0, -1):
        if searched[node] and features[node] >= 0:
            errors[node] = errors[2 * node] + errors[2 * node + 1]
            if errors[node] >= leaf_errors[node]:
                features[node], errors[node] = -1, leaf_errors[node]
    return errors[1]


@njit(cache=True)
def run(data: Data, depth: int) -> tuple[int, int, np.ndarray, np.ndarray, int]:
    """Search from the root: (errors, lower bound, features and labels in heap order, cache
    size). The greedy tree is the first incumbent when bounds are on."""
    data.clock[0] = _now() + data.time_limit
    data.stats[2] = -1
    cache = Dict.empty(key_type=KEY_TYPE, value_type=ENTRY_TYPE)
    size = 2 ** (depth + 1)
    features, labels = np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64)
    leaf_error, _ = _leaf(_class_counts(data, np.arange(data.Xt.shape[1])))
    ub = leaf_error + 1
    if data.use_bounds:
        ub = grow(data, None, depth, -2, features, labels)
    error, bound = search(data, cache, depth, ub)
    timed_out = data.stats[1] == 1
    if timed_out and 0 <= data.stats[2] < ub:
        error = data.stats[2]
    if error >= 0:
        error = grow(data, cache, depth, data.stats[3] if timed_out else -2, features, labels)
    else:
        error = ub
        if not timed_out:
            bound = max(bound, ub)
    return error, bound, features, labels, len(cache)
