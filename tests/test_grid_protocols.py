"""The grid forms the papers' protocols need: scikit-learn's unstratified samples (FlowOCT),
cross-validation folds and in-sample runs (SAT, CP), capped training rows (categorical), CSV
datasets a script derives, no warm start, ties broken by the larger option value, and the CPU
seconds of each run; every form checked against the split drawn directly, and every bad form a
one-line error."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.model_selection import KFold, train_test_split

from odtk.datasets import load_dataset
from odtk.exceptions import ConfigError
from odtk.experiments import load_grid, parse_grid
from odtk.experiments.runner import select
from odtk.experiments.store import ResultStore
from odtk.experiments.worker import execute, splits

MONK1 = "flowoct/monk1"


def grid_of(**fields) -> dict:
    return {"name": "protocol", "datasets": [MONK1], "methods": [{"model": "cp", "depth": 1}], **fields}


def rows_of(part) -> set[tuple]:
    return set(map(tuple, part.features.assign(y=part.target).to_numpy().tolist()))


def test_scikit_learn_samples_are_the_flowoct_authors_draws():
    """25 % test, then 33 % of the rest validation, random state = seed, unstratified."""
    grid = parse_grid(grid_of(seeds=[41, 23], split={"test_size": 0.25, "validation_size": 0.33}))
    data = load_dataset(MONK1)
    for run in grid.runs:
        rest, test = train_test_split(np.arange(data.n_rows), test_size=0.25, random_state=run["seed"])
        train, val = train_test_split(rest, test_size=0.33, random_state=run["seed"])
        got = splits(run)
        for part, expected in zip(got, (train, val, test)):
            assert part.features.equals(data.subset(np.sort(expected)).features)
    assert grid.retrain and not grid.runs[0]["stratify"]


def test_folds_test_every_row_once_and_never_train_on_it():
    grid = parse_grid(grid_of(seeds=list(range(8)), split={"folds": 4}))
    data = load_dataset(MONK1)
    tested = []
    for run in grid.runs:
        train, val, test = splits(run)
        assert val.n_rows == 0 and train.n_rows + test.n_rows == data.n_rows
        repeat, fold = divmod(run["seed"], 4)
        expected = list(KFold(4, shuffle=True, random_state=repeat).split(np.arange(data.n_rows)))[fold][1]
        assert test.features.equals(data.subset(np.sort(expected)).features)
        tested += list(expected) if repeat == 0 else []
    assert sorted(tested) == list(range(data.n_rows))
    assert not grid.retrain  # no validation rows: nothing to choose on


def test_in_sample_runs_train_on_the_whole_dataset_and_cap_training_rows():
    whole = parse_grid(grid_of(split=[1, 0, 0]))
    train, val, test = splits(whole.runs[0])
    assert (train.n_rows, val.n_rows, test.n_rows) == (124, 0, 0)
    row = execute(whole.runs[0])
    assert row["status"] == "done" and row["test_accuracy"] is None and row["cpu_time"] > 0
    capped = parse_grid(grid_of(split=[0.9, 0, 0.1], stratify=False, train_rows=50, seeds=[3]))
    train, _, test = splits(capped.runs[0])
    full = splits({**capped.runs[0], "train_rows": None})[0]
    assert train.n_rows == 50 and rows_of(train) <= rows_of(full) and test.n_rows == 13
    assert capped.runs[0]["id"] != parse_grid(grid_of(split=[0.9, 0, 0.1], stratify=False, seeds=[3])).runs[0]["id"]


def test_a_csv_dataset_runs_and_a_changed_file_is_another_run(tmp_path):
    frame = load_dataset("flowoct/monk1-categorical")
    path = tmp_path / "data" / "monk.csv"
    path.parent.mkdir()
    frame.features.assign(label=frame.target).to_csv(path, index=False)
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(yaml.safe_dump(grid_of(datasets=[{"name": "monk", "csv": "data/monk.csv", "target": "label",
                                                           "categorical": True}], split=[1, 0, 0])))
    first = load_grid(grid_file).runs[0]  # the path is the grid file's folder's
    row = execute(first)
    assert row["status"] == "done" and row["n_train"] == 124 and row["dataset"] == "monk"
    reference = execute(parse_grid(grid_of(datasets=["flowoct/monk1-categorical"], split=[1, 0, 0])).runs[0])
    assert row["objective"] == reference["objective"]  # the same data read from the CSV file: the same optimum
    path.write_text(path.read_text().replace("\n1,", "\n2,", 1))
    assert load_grid(grid_file).runs[0]["id"] != first["id"]


def test_no_warm_start_reaches_the_solve():
    spec = {**grid_of(split=[1, 0, 0], time_limit=60),
            "methods": [{"model": "flowoct", "depth": 1, "settings": {"warm_start": None}}]}
    row = execute(parse_grid(spec).runs[0])
    assert row["status"] == "done" and "warm_start" not in json.loads(row["steps"])
    with_start = execute(parse_grid({**spec, "methods": [{"model": "flowoct", "depth": 1}]}).runs[0])
    assert "warm_start" in json.loads(with_start["steps"]) and with_start["objective"] == row["objective"]


def test_ties_go_to_the_larger_option_value_when_asked():
    frame = pd.DataFrame({"campaign": "c", "phase": "grid", "status": "done", "dataset": "d", "rows": None,
                          "seed": 0, "method": "flowoct", "solver": "highs", "depth": 2, "skeleton": None,
                          "val_accuracy": [0.8, 0.8, 0.7], "id": ["a", "b", "c"],
                          "options": [json.dumps({"lam": 0.1}), json.dumps({"lam": 0.5}), json.dumps({"lam": 0.9})]})
    assert select(frame)["id"].tolist() == ["a"]
    assert select(frame, prefer_larger=("lam",))["id"].tolist() == ["b"]


@pytest.mark.parametrize("fields, words", [
    ({"split": [1, 0, 0], "selection": {"retrain": True}}, "needs a validation part"),
    ({"split": {"folds": 1}}, "split.folds"),
    ({"split": {"test_size": 0.25}}, "split must be"),
    ({"split": {"folds": 3}, "stratify": True}, "unstratified"),
    ({"datasets": [{"name": "x", "csv": "missing.csv", "target": "y"}]}, "not found"),
    ({"datasets": [{"name": "x", "target": "y"}]}, "go with csv"),
    ({"methods": [{"model": "cp", "settings": {"warm_start": "yes"}}]}, "warm_start must be"),
    ({"train_rows": 0}, "train_rows"),
])
def test_bad_protocol_fields_are_one_line_errors(fields, words):
    with pytest.raises(ConfigError, match=words) as error:
        parse_grid(grid_of(**fields))
    assert "\n" not in str(error.value)


@pytest.mark.slow
def test_cli_runs_a_cross_validated_grid_and_records_cpu_seconds(tmp_path):
    grid_file = tmp_path / "cv.yaml"
    grid_file.write_text(yaml.safe_dump(grid_of(seeds=[0, 1, 2], split={"folds": 3})))
    run = subprocess.run([sys.executable, "-m", "odtk", "experiment", "run", str(grid_file), "--db",
                          str(tmp_path / "cv.sqlite")], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    frame = ResultStore(tmp_path / "cv.sqlite").frame()
    assert len(frame) == 3 and (frame["phase"] == "grid").all() and (frame["cpu_time"] > 0).all()
    assert frame["n_test"].sum() == 124 and frame["n_val"].eq(0).all()
