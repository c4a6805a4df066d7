"""Model files are checked for meaning, not only shape: an edit that keeps a file well formed but
changes what it predicts is refused in one line naming the field and the node or column.

Model files come from ``odtk solve ... --output`` on small CSVs: an ODD diagram over scaled
numbers (with a constant column, whose scaling ``[5, 5]`` is legitimately degenerate), a tree of
the categorical model (subset tests over one-hot columns) and a FlowOCT tree (threshold and
one-hot columns). Each file also stores its training summary: the training rows per leaf and
class, which a loaded model checks against its leaves.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_hostile_inputs import assert_refused_untouched, odtk

from odtk.datasets import FeatureEncoder, read_csv
from odtk.exceptions import ModelFileError
from odtk.models import TrainedModel

COLOURS = ["red", "green", "blue", "white"]
ROWS = 40
SOLVES = {
    "odd": ["--skeleton", "1", "--strategy", "heuristic", "--heuristic-time", "0.2"],
    "categorical": ["--skeleton", "depth-2"],
    "flowoct": ["--depth", "2"],
}


def _data(model: str) -> pd.DataFrame:
    """ODD: y is high when v >= 20 (c is constant); the others: y is yes for red or green."""
    i = np.arange(ROWS)
    if model == "odd":
        return pd.DataFrame({"v": i, "w": i * 7 % 13, "c": 5, "y": np.where(i >= 20, "high", "low")})
    colour = np.array(COLOURS)[i % 4]
    return pd.DataFrame({"colour": colour, "shape": np.where(i % 3, "round", "square"), "v": i % 9,
                         "y": np.where(np.isin(colour, ["red", "green"]), "yes", "no")})


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, tuple[str, Path]]:
    """Model → (its saved file's text, its training CSV)."""
    folder = tmp_path_factory.mktemp("meaning")
    files = {}
    for model, shape in SOLVES.items():
        _data(model).to_csv(folder / f"{model}.csv", index=False)
        run = odtk("solve", "--model", model, *shape, "--csv", folder / f"{model}.csv", "--target", "y",
                   "--time-limit", 60, "--output", folder / f"{model}.json")
        assert run.exit_code == 0, run.output
        files[model] = ((folder / f"{model}.json").read_text(), folder / f"{model}.csv")
    return files


def _accuracy(model: TrainedModel, csv: Path) -> float:
    data = read_csv(csv)
    return float(np.mean(model.predict(data.drop(columns="y")).astype(str) == data["y"].astype(str)))


def _nodes(model: dict, kind: str) -> list[dict]:
    """The nodes of a saved model carrying ``kind`` (feature, subset, weights or label)."""
    return [node for node in model["graph"]["nodes"] if kind in node]


def _refused(tmp_path: Path, text: str, csv: Path, *words: str) -> None:
    """``odtk predict`` refuses the model file ``text`` in one line holding ``words``, writing nothing,
    and the Python API raises a ModelFileError."""
    (tmp_path / "m.json").write_text(text)
    args = ["predict", "--model-file", tmp_path / "m.json", "--csv", csv, "--output", tmp_path / "p.csv"]
    assert_refused_untouched(tmp_path, args, "m.json", *words, "re-train the model (`odtk solve ... --output`)")
    with pytest.raises(ModelFileError):
        TrainedModel.load(tmp_path / "m.json")


def _edited(text: str, change: Callable[[dict], object]) -> str:
    model = json.loads(text)
    change(model)
    return json.dumps(model)


def test_saved_models_predict_their_training_rows_and_store_their_summary(saved):
    """What the other tests edit: each file as saved loads, predicts every training row right and
    stores each leaf's training rows per class; ODD's constant column is saved as the degenerate
    scaling [5, 5], which no hyperplane weighs."""
    for text, csv in saved.values():
        data = json.loads(text)
        assert _accuracy(TrainedModel.from_dict(data), csv) == 1.0
        training = data["training"]
        assert training["rows"] == training["correct"] == ROWS
        assert sum(sum(leaf["class_counts"]) for leaf in training["leaves"]) == ROWS
        assert sorted(leaf["node"] for leaf in training["leaves"]) == sorted(n["id"] for n in _nodes(data, "label"))
    assert json.loads(saved["odd"][0])["encoder"]["params"]["c"] == [5, 5]


def test_a_degenerate_scaling_a_hyperplane_reads_is_refused(tmp_path, saved):
    """Scaling [3, 3] (min = max) for the column ODD's hyperplane weighs encodes every value as 0:
    the model would predict one class for every row."""
    text, csv = saved["odd"]
    (node,) = [node for node in _nodes(json.loads(text), "weights") if node["weights"][0] != 0]
    damaged = _edited(text, lambda m: m["encoder"]["params"].update(v=[3, 3]))
    _refused(tmp_path, damaged, csv, "encoder column 'v'", "[3, 3]", "min = max", f"node {node['id']} weighs it")


def test_a_subset_test_repeating_a_column_is_refused(tmp_path, saved):
    text, csv = saved["categorical"]
    node = _nodes(json.loads(text), "subset")[0]
    repeated = [node["subset"][0], *node["subset"]]

    def repeat(model: dict) -> None:
        next(n for n in model["graph"]["nodes"] if n["id"] == node["id"])["subset"] = repeated

    _refused(tmp_path, _edited(text, repeat), csv, f"Node {node['id']}", str(repeated),
             f"lists column {repeated[0]} more than once")


def _set(model: dict, kind: str, **values: object) -> None:
    """Give the first node carrying ``kind`` the entries ``values`` (dropping its test)."""
    node = _nodes(model, kind)[0]
    for key in ("feature", "subset", "weights", "threshold"):
        node.pop(key, None)
    node.update(values)


def _first_leaf(model: dict) -> dict:
    return model["training"]["leaves"][0]


def _columns(model: dict, prefix: str) -> list[int]:
    return [j for j, name in enumerate(model["graph"]["feature_names"]) if name.startswith(prefix)]


def _flip_a_leaf(model: dict) -> None:
    """Change the class of a leaf that holds more rows of one class than of the other."""
    counts = {leaf["node"]: leaf["class_counts"] for leaf in model["training"]["leaves"]}
    node = next(n for n in _nodes(model, "label") if len(set(counts[n["id"]])) > 1)
    node["label"] = 1 - node["label"]


def _rename_params(model: dict) -> None:
    model["encoder"]["params"]["colours"] = model["encoder"]["params"].pop("colour")


EDITS: dict[str, tuple[str, Callable[[dict], object], list[str]]] = {
    "subset-empty": ("categorical", lambda m: _set(m, "subset", subset=[]), ["subset of columns []", "empty"]),
    "subset-two-features": ("categorical", lambda m: _set(m, "subset", subset=[_columns(m, "colour=")[0],
                                                                               _columns(m, "shape=")[0]]),
                            ["more than one feature", "'colour'", "'shape'"]),
    "subset-not-one-hot": ("flowoct", lambda m: _set(m, "feature", subset=_columns(m, "v")[:2]),
                           ["subset of column 'v'", "does not one-hot encode"]),
    "feature-test-on-a-scaled-column": ("odd", lambda m: _set(m, "weights", feature=0),
                                        ["tests column 'v' as 0/1", "scales it to [0, 1]"]),
    "category-twice": ("flowoct", lambda m: m["encoder"]["params"]["colour"].__setitem__(1, "blue"),
                       ["'colour'", "category 'blue' twice"]),
    "category-nan": ("flowoct", lambda m: m["encoder"]["params"]["colour"].__setitem__(1, float("nan")),
                     ["'colour'", "not a list of category values"]),
    "kinds-and-params-apart": ("flowoct", _rename_params, ["kinds and params do not name the same columns"]),
    "threshold-beyond-floating-point": ("flowoct", lambda m: m["encoder"]["params"]["v"].__setitem__(-1, 10**400),
                                        ["'v'", "increasing finite thresholds"]),
    "class-nan": ("flowoct", lambda m: (m["classes"].__setitem__(0, float("nan")),
                                        m["graph"]["class_names"].__setitem__(0, "nan")),
                  ["classes", "not all text or finite numbers"]),
    "class-names-as-text": ("flowoct", lambda m: m["graph"].update(class_names="".join(m["graph"]["class_names"])),
                            ["must be lists"]),
    "arc-twice": ("flowoct", lambda m: m["graph"]["arcs"].append(dict(m["graph"]["arcs"][0])), ["is listed twice"]),
    "leaf-class-changed": ("flowoct", _flip_a_leaf, ["('label')", "'training.correct'", "a leaf's class was changed"]),
    "leaf-counts-changed": ("categorical", lambda m: _first_leaf(m)["class_counts"].__setitem__(0, 99),
                            ["'training.rows'"]),
    "leaf-counts-negative": ("flowoct", lambda m: _first_leaf(m)["class_counts"].__setitem__(0, -1),
                             ["class_counts", "whole numbers of rows"]),
    "leaf-counts-short": ("odd", lambda m: _first_leaf(m)["class_counts"].pop(), ["class_counts", "not 2 whole"]),
    "leaf-missing": ("flowoct", lambda m: m["training"]["leaves"].pop(), ["'training.leaves'", "lacks leaf"]),
    "leaf-twice": ("flowoct", lambda m: m["training"]["leaves"].append(_first_leaf(m)), ["lists leaf", "twice"]),
    "leaf-not-a-leaf": ("flowoct", lambda m: _first_leaf(m).update(node=_nodes(m, "feature")[0]["id"]),
                        ["is not a leaf of its graph"]),
    "correct-beyond-rows": ("flowoct", lambda m: m["training"].update(correct=ROWS + 1), ["correct <= rows"]),
    "training-not-a-mapping": ("flowoct", lambda m: m.update(training=[1, 2]), ["'training'"]),
}


@pytest.mark.parametrize("model, change, words", EDITS.values(), ids=EDITS.keys())
def test_edits_that_change_the_meaning_are_refused(tmp_path, saved, model, change, words):
    text, csv = saved[model]
    _refused(tmp_path, _edited(text, change), csv, *words)


def test_an_entry_named_twice_is_refused(tmp_path, saved):
    """JSON readers keep the last of two equal keys without a word: ``"v": [..], "v": [..]``."""
    text, csv = saved["flowoct"]
    twice = text.replace('"params": {', '"params": {"v": [0.5], ', 1)
    assert json.loads(twice)["encoder"]["params"]["v"] != [0.5]
    _refused(tmp_path, twice, csv, "names the entry 'v' twice")


def test_files_without_a_training_summary_still_load(tmp_path, saved):
    """Files saved before the summary existed load and predict as before."""
    for text, csv in saved.values():
        model = json.loads(text)
        model.pop("training")
        (tmp_path / "m.json").write_text(json.dumps(model))
        loaded = TrainedModel.load(tmp_path / "m.json")
        assert loaded.training is None and "training" not in loaded.to_dict()
        assert _accuracy(loaded, csv) == _accuracy(TrainedModel.from_dict(json.loads(text)), csv)


def test_encoder_files_are_checked_alone_too():
    encoder = FeatureEncoder("onehot").fit(_data("flowoct").drop(columns="y"))
    saved = encoder.to_dict()
    saved["params"]["colour"] = ["red", "red", "blue", "white"]
    with pytest.raises(ModelFileError, match="'colour' lists the category 'red' twice"):
        FeatureEncoder.from_dict(saved)
