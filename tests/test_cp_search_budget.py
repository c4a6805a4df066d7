"""The CP search under a budget: compiled outside the limit, stopped by the deadline, a signal or
its memory with the best tree found, reporting its progress; its memory and thresholds sized
for large data."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pandas as pd
import pytest

from odtk.budget import Budget
from odtk.engines import cp_kernels, cp_search
from odtk.progress import Progress

from brute_force import min_error

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _hard(rows: int = 2000, features: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random labels: a depth-5 search on these runs for minutes."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (rows, features)), rng.integers(0, 2, rows)


def _errors(tree: tuple, X: np.ndarray, y: np.ndarray) -> int:
    """Misclassified rows of a nested tree (its depth ≤ 5 checked on the way)."""
    def predict(node: tuple, row: np.ndarray, depth: int) -> int:
        assert depth <= 5
        if node[0] == "leaf":
            return node[1]
        return predict(node[1 + int(row[node[0]])], row, depth + 1)
    return int(sum(predict(tree, row, 0) != label for row, label in zip(X, y)))


class Recorder(Progress):
    """A silent progress reporter keeping every update."""

    def __init__(self):
        super().__init__("off")
        self.updates: list[dict] = []

    def update(self, **fields):
        super().update(**fields)
        self.updates.append(fields)


def test_every_kernel_is_compiled_for_the_types_searches_pass():
    """Whatever the input's types, the search calls the kernels compiled before its clock."""
    X, y = _hard(60, 6)
    cp_search.search(X, y, 2, 2)
    before = [len(kernel.signatures) for kernel in cp_kernels.KERNELS]
    assert before == [1, 1, 1]
    cp_search.search(X.astype(np.int8), y.astype(np.uint8), np.int32(2), np.int64(3), np.int16(2),
                     counting_depth=np.int64(1), cache=np.bool_(False), bounds=np.bool_(True))
    cp_search.search(X.astype(bool), y, 2, 4, sample_weight=np.full(len(y), 2.0), time_limit=1)
    cp_search.search(np.asfortranarray(X), y + 1, 3, 3, counting_depth=0, bounds=False)
    assert [len(kernel.signatures) for kernel in cp_kernels.KERNELS] == before


def test_deadline_stops_with_the_best_tree_and_reports_progress():
    X, y = _hard()
    progress = Recorder()
    budget = Budget(0.5, progress)
    found = cp_search.search(X, y, 2, 5, budget=budget)
    assert found.status == "time_limit"
    assert found.error == _errors(found.tree, X, y)
    assert 0 <= found.lower_bound < found.error
    assert len(progress.updates) >= 2 and progress.updates[-1] == {
        "incumbent": found.error, "bound": found.lower_bound, "searched": found.search_nodes}
    assert progress.fields["searched"] >= 1


def test_a_stop_before_the_search_returns_the_greedy_tree_interrupted():
    X, y = _hard()
    budget = Budget(None)
    budget.request_stop(signal.SIGTERM)
    found = cp_search.search(X, y, 2, 5, budget=budget)
    assert found.status == "interrupted"
    assert found.error == _errors(found.tree, X, y) < min(np.bincount(y))
    assert found.lower_bound <= found.error


def test_a_proven_tree_is_optimal_even_when_a_stop_follows():
    X, y = _hard(30, 4)
    budget = Budget(None)
    found = cp_search.search(X, y, 2, 2, budget=budget)
    budget.request_stop(signal.SIGINT)
    assert found.status == "optimal" and found.error == min_error(X, y, 2, 2, 1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_running_search_with_its_best_tree(signum):
    """The kernel runs in a worker thread: the main thread's handler sets the flag it reads."""
    script = textwrap.dedent("""
        import json, sys, threading, time
        import numpy as np
        from odtk.budget import Budget, stop_on_signals
        from odtk.engines import cp_search
        rng = np.random.default_rng(0)
        X, y = rng.integers(0, 2, (2000, 40)), rng.integers(0, 2, 2000)
        cp_search.search(X[:50], y[:50], 2, 2)  # kernels loaded
        budget = Budget(None)
        def announce():
            while budget.progress.fields.get("searched", 0) < 1:
                time.sleep(0.01)
            print("searching", flush=True)
        threading.Thread(target=announce, daemon=True).start()
        with stop_on_signals(budget):
            found = cp_search.search(X, y, 2, 5, budget=budget)
        tree = found.tree
        def predict(node, row):
            return node[1] if node[0] == "leaf" else predict(node[1 + int(row[node[0]])], row)
        errors = int(sum(predict(tree, row) != label for row, label in zip(X, y)))
        print(json.dumps(dict(status=found.status, error=found.error, bound=found.lower_bound,
                              errors=errors, signal=budget.signal)), flush=True)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=ROOT)
    try:
        assert child.stdout.readline().strip() == "searching"
        child.send_signal(signum)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 0, err
    outcome = json.loads(out)
    assert outcome["status"] == "interrupted" and outcome["signal"] == signum
    assert outcome["error"] == outcome["errors"] and 0 <= outcome["bound"] < outcome["error"] < 1000


def test_a_full_cache_stops_the_search_with_its_best_tree(monkeypatch):
    X, y = _hard()
    need = cp_kernels.footprint(*X.shape, int(X.sum()), 2, 5, 2)
    # room for the arrays and the first table only: the table cannot grow
    monkeypatch.setattr(cp_search, "memory_available", lambda: (need + 200_000) / cp_search.MEMORY_SHARE)
    found = cp_search.search(X, y, 2, 5, time_limit=60)
    assert found.status == "memory_limit"
    assert found.cache_size <= 2 * cp_kernels.TABLE_ROWS / 3
    assert found.error == _errors(found.tree, X, y) and found.lower_bound <= found.error


def test_arrays_beyond_the_memory_are_a_one_line_error(monkeypatch):
    X, y = _hard(500, 300)
    monkeypatch.setattr(cp_search, "memory_available", lambda: 1_000_000)
    with pytest.raises(cp_search.InvalidOptions, match="needs about .* fewer thresholds per numeric column"):
        cp_search.search(X, y, 2, 3)


def test_memory_available_is_positive_and_bounded():
    available = cp_search.memory_available()
    assert 0 < available < 2**50


@pytest.mark.parametrize("seed", range(6))
def test_conflict_bound_counts_the_minority_of_identical_rows(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (300, 3 + 30 * (seed % 3)))[rng.integers(0, 300, 300)]
    X[:, X.shape[1] // 2:] = 0
    y = rng.integers(0, 2 + seed % 3, 300)
    groups: dict[bytes, list[int]] = {}
    for row, label in zip(X, y):
        groups.setdefault(row.tobytes(), []).append(label)
    expected = sum(len(labels) - np.bincount(labels).max() for labels in groups.values())
    assert cp_search.conflict_bound(np.asfortranarray(X), y) == expected


# --------------------------------------------------------------------------- compiling
FIRST_SEARCH = textwrap.dedent("""
    import json
    from odtk.budget import Budget
    from odtk.datasets import load_dataset
    from odtk.engines import cp_search
    from odtk.progress import Progress
    import numpy as np
    data = load_dataset("binary/tic-tac-toe")
    X, y = data.features.to_numpy(), np.unique(data.target, return_inverse=True)[1]
    budget = Budget(2.0, Progress("lines"))
    found = cp_search.search(X, y, 2, 3, time_limit=2.0, budget=budget)
    print(json.dumps(dict(status=found.status, error=found.error, tree=found.tree)))
""")


def _first_search(cache: str) -> tuple[dict, str]:
    """A new process's first search (2 s limit, budget of 2 s) with numba's cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    ran = subprocess.run([sys.executable, "-c", FIRST_SEARCH], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=900)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout), ran.stderr


@pytest.mark.slow
def test_an_empty_compile_cache_gives_the_same_proven_tree_as_a_filled_one(tmp_path):
    """Compiling (about 16 s of CPU, more than the limit) happens outside the limit."""
    first, notices = _first_search(str(tmp_path))
    assert "compiling the CP search (once per machine)" in notices and "compiled the CP search" in notices
    second, notices = _first_search(str(tmp_path))
    assert "compil" not in notices  # loaded from the cache
    assert first == second and first["status"] == "optimal"


def test_without_a_writable_cache_folder_the_kernels_cache_in_the_temporary_folder():
    """numba finds no folder (read-only install and home): odtk gives it one."""
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator,UserWideCacheLocator",
               XDG_CACHE_HOME="/proc/odtk-no-cache", HOME="/proc/odtk-no-home")
    script = "from odtk.engines import cp_kernels; print(cp_kernels.cache_folder())"
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith(os.path.join(tempfile.gettempdir(), "odtk-numba-cache"))


# --------------------------------------------------------------------------- thresholds
@pytest.mark.parametrize("depth", [2, 3, 4])
def test_threshold_cap_sizes_a_large_search_for_its_time_and_memory(depth):
    """100,000 rows of 50 float columns in a 60 s budget: the proof fits the time where it can,
    and the arrays stay far below 4 GB."""
    k = cp_search.threshold_cap(100_000, 50, depth, 60.0)
    assert cp_search.MIN_THRESHOLDS <= k <= 100
    assert (cp_search.search_seconds(100_000, 50 * k, 2, depth) <= 60.0
            or k == cp_search.MIN_THRESHOLDS)
    assert cp_search._arrays_bytes(100_000, 50 * k, 2, depth) <= cp_search.DATA_BYTES


def test_threshold_cap_grows_with_time_and_shrinks_with_rows_and_depth():
    caps = [cp_search.threshold_cap(20_000, 10, 3, seconds) for seconds in (1, 10, 100)]
    assert caps == sorted(caps) and caps[0] < caps[-1]
    assert cp_search.threshold_cap(200_000, 10, 3, 10) <= cp_search.threshold_cap(20_000, 10, 3, 10)
    assert cp_search.threshold_cap(20_000, 10, 4, 10) <= cp_search.threshold_cap(20_000, 10, 3, 10)
    assert cp_search.threshold_cap(20_000, 10, 3, None) >= cp_search.threshold_cap(20_000, 10, 3, 100)
    assert cp_search.threshold_cap(30, 2, 2, 10) == 29  # every midpoint of 30 rows


def test_threshold_cap_gives_a_search_that_finishes():
    """Quantile thresholds from the cap for a 2 s search: the search proves its tree."""
    from sklearn.datasets import make_classification

    from odtk.datasets import FeatureEncoder

    X, y = make_classification(n_samples=20_000, n_features=10, n_informative=5, random_state=0)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(10)])
    k = cp_search.threshold_cap(len(frame), 10, 3, 2.0)
    encoder = FeatureEncoder("binary", "quantiles", k).fit(frame, {c: "numeric" for c in frame})
    encoded = encoder.transform(frame)
    found = cp_search.search(encoded, y, 2, 3, time_limit=600)
    assert found.status == "optimal" and encoded.shape[1] == 10 * k


def test_a_signal_while_compiling_stops_at_once(tmp_path):
    """Compiling cannot be halted: the search raises Stopped and leaves it to finish."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from odtk.budget import Budget, Stopped, stop_on_signals
        from odtk.engines import cp_search
        from odtk.progress import Progress
        budget = Budget(30, Progress("lines"))
        X = np.random.default_rng(0).integers(0, 2, (50, 6))
        try:
            with stop_on_signals(budget):
                cp_search.search(X, X[:, 0], 2, 3, budget=budget)
        except Stopped as stop:
            print("stopped", flush=True)
            sys.exit(stop.exit_code)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=ROOT, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    try:
        assert "compiling the CP search" in child.stderr.readline()
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 128 + signal.SIGTERM and out.strip() == "stopped", err
