"""examples/sat_paper.py as campaigns: a small grid of the paper's protocol on a local Dask
cluster, its proven k and n against independent oracles, Figure 2's PNG, and a resumed run that
computes nothing again."""
from __future__ import annotations

import functools
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("pysat")
pytest.importorskip("matplotlib")

from odtk.datasets import FeatureEncoder, from_dataframe  # noqa: E402
from odtk.datasets.catalog import data_dir  # noqa: E402
from odtk.engines import nested_trees, sat_inference  # noqa: E402
from odtk.experiments.worker import splits  # noqa: E402

pytestmark = pytest.mark.slow  # a campaign on a local Dask cluster: a minute or more

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
import sat_figure2  # noqa: E402

# Table 3 on iris's first two bundled splits, Figure 2 with two generators at two sizes
ARGS = ("--tables", "3", "fig2", "--datasets", "iris", "--splits", "0", "1", "--generators", "2",
        "--examples", "30", "150", "--time-limit", "600")
RUNS = 2 * 2 + 2 * 2 * 2  # (Table 3 splits + Figure 2 instances) × (DT_depth, DT_size)


def run_script(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(EXAMPLES / "sat_paper.py"), *args], capture_output=True, text=True,
                          timeout=1800, cwd=ROOT)
    print(done.stdout)  # the tables and verdict lines, shown with pytest -s
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def blocks(stdout: str) -> dict[str, list[dict[str, str]]]:
    """The printed tables (title, legend, header, rows) by their title's first words."""
    found = {}
    for block in stdout.strip().split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) >= 4 and lines[1].startswith("columns:"):
            header = lines[2].split()
            cells = [line.split() for line in lines[3:]]
            assert all(len(row) == len(header) for row in cells), block
            found[lines[0].split(":")[0]] = [dict(zip(header, row)) for row in cells]
    return found


def claims(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("claim: ")]


def fewest_leaves(X: np.ndarray, y: np.ndarray, depth: int) -> float:
    """Brute force: the fewest leaves of a tree of depth ≤ ``depth`` classifying every row (inf: none)."""
    def bits(rows: np.ndarray) -> int:
        return sum(1 << int(i) for i in np.flatnonzero(rows))
    masks = [bits(X[:, f]) for f in range(X.shape[1])]
    classes = [bits(y == c) for c in np.unique(y)]

    @functools.cache
    def leaves(rows: int, left: int) -> float:
        if any(rows & members == rows for members in classes):
            return 1
        if left == 0:
            return float("inf")
        return min((leaves(rows & ~mask, left - 1) + leaves(rows & mask, left - 1)
                    for mask in masks if rows & mask and rows & ~mask), default=float("inf"))
    return leaves((1 << len(y)) - 1, depth)


def recorded(db: Path) -> pd.DataFrame:
    with sqlite3.connect(db) as connection:
        return pd.read_sql_query("SELECT * FROM runs", connection)


def test_small_grid_on_dask_and_resume(tmp_path: Path) -> None:
    db = tmp_path / "sat.sqlite"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        first = run_script(*ARGS, "--db", str(db), "--executor", "dask", "--scheduler", cluster.scheduler_address)
    tables = blocks(first.stdout)
    (iris,) = tables["Table 3"]
    assert iris["splits"] == iris["proven"] == "2" and iris["consistent"] == "yes"
    assert float(iris["k"]) == 3  # iris's minimum depth is the paper's on every split
    points = tables["Figure 2"]
    assert {(p["algorithm"], p["examples"]) for p in points} == {
        (name, n) for name in ("DT_depth", "DT_size", "J48_stand-in") for n in ("30", "150")}
    assert all(p["status"] == "optimal" and p["proven"] == "2/2" for p in points if p["algorithm"] != "J48_stand-in")
    figure = tmp_path / "sat-figure2.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = claims(first.stdout)
    assert len(lines) == 14 and all(  # Tables 1-3: 2 + 2 + 4 claims; Figure 2: 6
        re.search(r": (agrees|disagrees|not shown)", line) for line in lines)
    assert "claim: Figure 2: DT_depth needs fewer examples than J48" in first.stdout

    runs = recorded(db)
    assert len(runs) == RUNS and (runs["termination"] == "optimal").all()
    for _, run in runs.iterrows():
        step = json.loads(run["steps"])["search"]
        if run["dataset"].startswith("generator"):  # brute force on the run's training rows
            csv = tmp_path / "sat-data" / f"{run['dataset']}-150.csv"
            train, _, _ = splits({"dataset": run["dataset"], "csv": str(csv), "target": "target", "categorical": False,
                                  "rows": None, "seed": 0, "split": [1, 0, 0], "train_rows": run["n_train"]})
            X, y = train.features[sat_figure2.COLUMNS].to_numpy(dtype=bool), train.target.to_numpy(dtype=int)
            depth = next(d for d in range(6) if fewest_leaves(X, y, d) < float("inf"))
            assert step["depth"] == depth
            if run["method"] == "sat-size":
                assert run["objective"] == 2 * fewest_leaves(X, y, depth) - 1
        else:  # the direct search on the authors' binarisation (as the script did before its campaigns)
            name, split = run["dataset"].split(".train")
            train = from_dataframe(pd.read_csv(data_dir() / "consistent" / f"{name}.csv.train{split}.csv"), "target")
            classes, y = np.unique(train.target.to_numpy(), return_inverse=True)
            found = sat_inference.search(FeatureEncoder(thresholds="values").fit(train).transform(train), y,
                                         len(classes), minimize=run["method"].removeprefix("sat-"))
            perfect = found.perfect or nested_trees.perfect_copy(found.tree, found.depth)  # the start, padded
            nodes = nested_trees.count_nodes(perfect) if run["method"] == "sat-depth" else found.objective
            assert (step["depth"], step["examples_encoded"]) == (found.depth, found.examples_encoded)
            assert (2 ** (step["depth"] + 1) - 1 if run["method"] == "sat-depth" else run["objective"]) == nodes

    again = run_script(*ARGS, "--db", str(db), "--resume")
    counted = re.findall(r"^campaign (\S+): (\d+) of (\d+) runs computed now", again.stdout, re.MULTILINE)
    assert counted and all(now == "0" for _, now, _ in counted)
    assert sum(int(total) for *_, total in counted) == RUNS
    assert claims(again.stdout) == lines  # the same verdicts from the recorded runs
    assert (tmp_path / "sat-figure2-1.png").exists() and figure.exists()  # a new figure; the first kept
    assert len(recorded(db)) == RUNS
