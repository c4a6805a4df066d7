"""odtk's fixed costs: start-up, a tiny solve, a tiny prediction, and a fitted model's predict.

Printed, each the least of ``--repeat`` runs:

* CPU seconds (user + system, of a child process) of ``import odtk.api``, of ``odtk solve --model
  cp --depth 2`` on a 20-row CSV of four numeric columns (after one unmeasured run that fills the
  compile cache) and of ``odtk predict`` of the saved model on those 20 rows — each beside the bare
  interpreter's ``python -c pass``, and beyond it;
* the CPU time of one ``predict`` call of a fitted odtk model against scikit-learn's
  ``DecisionTreeClassifier(max_depth=3)`` fitted on the same rows, on 1 row and on 100,000 rows
  (ten float columns), as a ratio: odtk's CP tree of depth 3 and, with ``--diagram``, an
  ``OptimalDiagramClassifier`` (ODD, hyperplanes on scaled features), each through the
  estimator's ``predict`` and its :class:`~odtk.models.TrainedModel`'s on a numpy array and on
  a DataFrame (scikit-learn is given the array; ``n/a`` where an odtk lacks a path);
* the encoder: ``FeatureEncoder(thresholds="quantiles")`` fit + transform of 100,000 rows × 50
  float columns for each ``--max-thresholds``: CPU seconds and peak traced memory (tracemalloc).

    python benchmarks/fixed_costs.py [--repeat 3] [--diagram] [--max-thresholds 8 32]
"""
from __future__ import annotations

import argparse
import functools
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PYTHON = sys.executable
ODTK = [PYTHON, "-m", "odtk"]
BULK = 100_000


def child_cpu(command: list[str]) -> float:
    """CPU seconds (user + system) a child process running ``command`` used; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def least(repeat: int, command: list[str]) -> float:
    """The least CPU time of ``repeat`` runs of ``command``."""
    return min(child_cpu(command) for _ in range(repeat))


def rows(n: int, columns: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """``n`` rows of ``columns`` normal floats and a three-class label of a few of them."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, columns)).round(3), columns=[f"x{j}" for j in range(columns)])
    score = X["x0"] + 0.5 * X[f"x{min(1, columns - 1)}"]
    return X, np.where(score > 0.5, "high", np.where(score < -0.5, "low", "mid"))


def start_up(repeat: int) -> dict[str, float]:
    """CPU seconds of the interpreter, ``import odtk.api``, a 20-row solve and a 20-row prediction."""
    folder = Path(tempfile.mkdtemp(prefix="odtk-fixed-"))
    X, y = rows(20, 4)
    X.assign(label=y).to_csv(folder / "rows20.csv", index=False)
    solve = [*ODTK, "solve", "--model", "cp", "--csv", str(folder / "rows20.csv"), "--target", "label",
             "--depth", "2", "--output", str(folder / "model.json"), "--force"]
    child_cpu(solve)  # fills the compile cache
    return {"python -c pass": least(repeat, [PYTHON, "-c", "pass"]),
            "import odtk.api": least(repeat, [PYTHON, "-c", "import odtk.api"]),
            "odtk solve --model cp (20 rows)": least(repeat, solve),
            "odtk predict (20 rows)": least(repeat, [*ODTK, "predict", "--model-file", str(folder / "model.json"),
                                                     "--csv", str(folder / "rows20.csv")])}


def per_call(predict: Callable[[], Any], seconds: float = 0.5) -> float:
    """The median CPU seconds of one call of ``predict``, over calls filling about ``seconds``."""
    times = []
    stop = time.process_time() + seconds
    while time.process_time() < stop or len(times) < 5:
        start = time.process_time_ns()
        predict()
        times.append((time.process_time_ns() - start) / 1e9)
    return float(np.median(times))


def prediction(diagram: bool) -> list[tuple[str, float | None, float]]:
    """Per model, path and input size: odtk's and scikit-learn's CPU seconds per predict call
    (odtk's None where this odtk lacks the path)."""
    from sklearn.tree import DecisionTreeClassifier

    from odtk import OptimalDiagramClassifier, OptimalTreeClassifier

    X, y = rows(1000, 10)
    bulk, _ = rows(BULK, 10, seed=1)
    reference = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    models = {"tree (cp, depth 3)": OptimalTreeClassifier(model="cp", max_depth=3, time_limit=60)}
    if diagram:
        models["diagram (odd 1-2-4-8)"] = OptimalDiagramClassifier(heuristic_time=5, time_limit=10)
    out = []
    for name, estimator in models.items():
        estimator.fit(X.to_numpy(), y)
        for n in (1, BULK):
            array, frame = bulk.to_numpy()[:n], bulk.iloc[:n]
            theirs = per_call(functools.partial(reference.predict, array))
            paths = {"estimator.predict(array)": functools.partial(estimator.predict, array),
                     "TrainedModel.predict(array)": functools.partial(estimator.model_.predict, array),
                     "TrainedModel.predict(DataFrame)": functools.partial(estimator.model_.predict, frame)}
            for path, call in paths.items():
                try:
                    call()
                except Exception:  # an odtk without this path
                    out.append((f"{name}, {path}, {n:,} rows", None, theirs))
                    continue
                out.append((f"{name}, {path}, {n:,} rows", per_call(call), theirs))
    return out


def encoding(max_thresholds: list[int]) -> list[tuple[int, float, float]]:
    """Per cap: CPU seconds and peak traced MB of a quantile encoder's fit + transform of BULK × 50."""
    from odtk.datasets import FeatureEncoder

    X, _ = rows(BULK, 50, seed=2)
    X = X + np.random.default_rng(3).normal(scale=1e-6, size=X.shape)  # every value distinct
    out = []
    for cap in max_thresholds:
        start = time.process_time()
        FeatureEncoder("binary", "quantiles", cap).fit(X).transform(X)
        seconds = time.process_time() - start
        tracemalloc.start()
        FeatureEncoder("binary", "quantiles", cap).fit(X).transform(X)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        out.append((cap, seconds, peak))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--diagram", action="store_true", help="also an ODD diagram's predict")
    parser.add_argument("--max-thresholds", type=int, nargs="+", default=[8, 32])
    args = parser.parse_args()
    costs = start_up(args.repeat)
    bare = costs["python -c pass"]
    print(f"{'start-up (CPU s, least of ' + str(args.repeat) + ')':<42}{'total':>8}{'beyond python':>15}")
    for name, seconds in costs.items():
        print(f"{name:<42}{seconds:>8.3f}{seconds - bare:>15.3f}")
    print(f"\n{'predict (CPU s per call, median)':<66}{'odtk':>10}{'sklearn':>10}{'ratio':>8}")
    for name, mine, theirs in prediction(args.diagram):
        if mine is None:
            print(f"{name:<66}{'n/a':>10}{theirs:>10.2e}{'n/a':>8}")
        else:
            print(f"{name:<66}{mine:>10.2e}{theirs:>10.2e}{mine / theirs:>8.2f}")
    print(f"\n{'encoder, 100,000 x 50 floats, quantiles':<42}{'CPU s':>8}{'peak MB':>10}")
    for cap, seconds, peak in encoding(args.max_thresholds):
        print(f"{'max_thresholds=' + str(cap):<42}{seconds:>8.2f}{peak:>10.1f}")


if __name__ == "__main__":
    main()
