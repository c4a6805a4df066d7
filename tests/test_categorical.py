"""Günlük et al.'s categorical trees (``odtk.solve("categorical", ...)``) against the
exhaustive oracle in ``subset_trees.py``.

Each random instance becomes a DataFrame a user would pass: a categorical group is a column
of strings ``v0, v1, ...``, an ordinal group an integer column ``10, 20, ...`` (few distinct
values, so the one-hot encoder gives one bin per value, in order), and the class column
``y`` holds ``bad`` (the positive class, which sorts first, so ``positive_class`` matters)
or ``good``. The oracle enumerates every tree of the topology; the MILP must match it
whatever the improvement switches, and its trees must predict, print and save in the
user's own vocabulary.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass
from functools import cache

import networkx as nx
import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from click.testing import CliRunner
from sklearn.tree import DecisionTreeClassifier

import odtk
from odtk.cli import main
from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset, read_csv
from odtk.exceptions import ConfigError, DataError, OdtkWarning, SkeletonError, SolveError
from odtk.formulations import categorical
from odtk.models import TrainedModel
from odtk.skeletons import topology_skeleton

from subset_trees import best_score, random_instance, rate_frontier

POS, NEG = "bad", "good"
D2 = ("node", "last", "last")
ORACLE_TOPOLOGY = {"depth-2": D2, "depth-2.5": ("node", D2, "last"),
                   "imbalanced": ("node", "last", ("node", "last", D2))}
ALL_OFF = {"inequalities": "weak", "anchors": "off", "projection": "off", "integrality": "full"}

# --------------------------------------------------------------------------- helpers
@dataclass(frozen=True)
class Instance:
    """Oracle data (values, positive, ordinal, n_values) and the same rows as a DataFrame."""

    values: np.ndarray
    positive: np.ndarray
    ordinal: list[bool]
    n_values: list[int]
    frame: pd.DataFrame

    @property
    def features(self) -> pd.DataFrame:
        return self.frame.drop(columns="y")

    @property
    def dataset(self) -> Dataset:
        return from_dataframe(self.frame, "y")


def make_instance(values: np.ndarray, positive: np.ndarray, ordinal: list[bool],
                  frame: pd.DataFrame | None = None) -> Instance:
    """Values renumbered to those present (the encoder has a column or bin only for these);
    ``frame`` defaults to groups ``g0, g1, ...`` of strings ``v<k>`` or integers ``10·(k+1)``."""
    values = np.column_stack([np.unique(column, return_inverse=True)[1] for column in values.T])
    if frame is None:
        frame = pd.DataFrame({f"g{g}": 10 * (values[:, g] + 1) if flag else [f"v{k}" for k in values[:, g]]
                              for g, flag in enumerate(ordinal)})
        frame["y"] = np.where(positive, POS, NEG)
    instance = Instance(values, np.asarray(positive, dtype=bool), list(ordinal),
                        [int(column.max()) + 1 for column in values.T], frame)
    encoder = FeatureEncoder(mode="onehot").fit(instance.dataset)
    assert [len(columns) for columns in encoder.groups_.values()] == instance.n_values
    assert [kind == "numeric" for kind in encoder.kinds_.values()] == instance.ordinal
    return instance


@cache
def random_case(seed: int, rows: int | None = None, n_values: tuple = (), ordinal_share: float | None = None
                ) -> Instance:
    """Seeded instance: 20–34 rows, 3 groups of 2–4 values; for odd seeds each group is
    ordinal with probability 0.6 (seeds 1, 3 and 7 get some)."""
    rows = rows or 20 + 2 * seed
    n_values = list(n_values) or [2 + (seed + g) % 3 for g in range(3)]
    share = (0.0 if seed % 2 == 0 else 0.6) if ordinal_share is None else ordinal_share
    return make_instance(*random_instance(seed, rows, n_values, share))


def solve(data, skeleton="depth-2", positive_class=POS, **options) -> odtk.SolveResult:
    data = data.dataset if isinstance(data, Instance) else data
    result = odtk.solve("categorical", data, skeleton=skeleton, positive_class=positive_class, **options)
    assert result.optimal
    return result


def oracle(instance: Instance, skeleton="depth-2", positive_class=POS, class_weight=1.0,
           max_card=None, proper_subsets="off", numeric="ordinal", max_card_ordinal="off",
           min_leaf=1, **_improvements) -> float:
    """The best TP + C·TN over all trees of the topology, with odtk's options translated."""
    topology = ORACLE_TOPOLOGY.get(skeleton, skeleton)
    positive = instance.positive if positive_class == POS else ~instance.positive
    ordinal = instance.ordinal if numeric == "ordinal" else [False] * len(instance.ordinal)
    return best_score(instance.values, positive, topology, instance.n_values, ordinal, C=class_weight,
                      max_card=max_card, proper=proper_subsets == "on",
                      max_card_ordinal=max_card_ordinal == "on", min_leaf=min_leaf)


def single_group(column: list, labels: list) -> Instance:
    """One feature ``g0`` (ordinal if its values are numbers) and the class column ``y``."""
    frame = pd.DataFrame({"g0": column, "y": labels})
    values = np.unique(column, return_inverse=True)[1][:, None]
    return make_instance(values, frame["y"].to_numpy() == POS, [pd.api.types.is_numeric_dtype(frame["g0"])], frame)


def weighted_correct(predicted, truth, class_weight=1.0, positive_class=POS) -> float:
    predicted, truth = np.asarray(predicted, dtype=object), np.asarray(truth, dtype=object)
    correct = predicted == truth
    return float(correct[truth == positive_class].sum() + class_weight * correct[truth != positive_class].sum())


def rates(predicted, truth) -> tuple[float, float]:
    """(sensitivity, specificity) of predictions against the true labels, POS positive."""
    predicted, truth = np.asarray(predicted, dtype=object), np.asarray(truth, dtype=object)
    return float(np.mean(predicted[truth == POS] == POS)), float(np.mean(predicted[truth == NEG] == NEG))


def tree_topology(spec) -> nx.DiGraph:
    """An oracle topology as a user's DiGraph with string node names and side='left'/'right'."""
    graph, counter = nx.DiGraph(), iter(range(100))

    def add(node, name):
        below = ("leaf", "leaf") if node == "last" else node[1:]
        for side, child in zip(("left", "right"), below):
            child_name = f"n{next(counter)}"
            graph.add_edge(name, child_name, side=side)
            if child != "leaf":
                add(child, child_name)

    add(spec, "root")
    return graph


def groups_in_tree(model: TrainedModel) -> set[str]:
    """The features the tree's nodes test."""
    group_of = {j: name for name, columns in model.encoder.groups_.items() for j in columns}
    return {group_of[j] for _, subset in model.graph.graph.nodes(data="subset") if subset for j in subset}


def depth_of(topology) -> int:
    """Split levels of an oracle topology (odtk's depth)."""
    return 1 if topology == "last" else 1 + max(depth_of(topology[1]), depth_of(topology[2]))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m odtk`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "odtk", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=600)


def assert_one_line_error(run: subprocess.CompletedProcess, *words: str) -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odtk: error: "), run.stderr
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in lines[0]


# Colour and size decide the class together; a perfect depth-2 tree must test both.
COLOUR_SIZE = pd.DataFrame(
    [("red", 1, NEG), ("red", 2, POS), ("red", 3, POS), ("green", 1, POS), ("green", 2, NEG),
     ("green", 3, NEG), ("blue", 1, POS), ("blue", 2, NEG), ("blue", 3, NEG), ("red", 3, POS),
     ("blue", 1, POS), ("green", 2, NEG)], columns=["colour", "size", "y"])
COLOUR_SIZE_INSTANCE = make_instance(
    np.column_stack([COLOUR_SIZE["colour"].map({"blue": 0, "green": 1, "red": 2}), COLOUR_SIZE["size"] - 1]),
    (COLOUR_SIZE["y"] == POS).to_numpy(), [False, True], COLOUR_SIZE)


# --------------------------------------------------------------------------- optimum = oracle
@pytest.mark.parametrize("improvements", [pytest.param({}, id="all-on"), pytest.param(ALL_OFF, id="all-off")])
@pytest.mark.parametrize("seed", range(8))
def test_improvements_change_speed_never_the_optimum(seed, improvements):
    instance = random_case(seed)
    assert solve(instance, **improvements).objective == oracle(instance)


@pytest.mark.parametrize("switch", [*({name: value} for name, value in sorted(ALL_OFF.items())),
                                    {"anchors": "w"}], ids=lambda switch: "=".join(*switch.items()))
@pytest.mark.parametrize("seed", [3, 6])
def test_each_improvement_switched_off_alone_keeps_the_optimum(seed, switch):
    instance = random_case(seed)
    assert solve(instance, **switch).objective == oracle(instance)


@pytest.mark.parametrize("seed,options", [
    pytest.param(0, {"class_weight": 0.5}, id="C=0.5"),
    pytest.param(3, {"class_weight": 2.5}, id="C=2.5-ordinal"),
    pytest.param(3, {"class_weight": 2.5, "positive_class": NEG}, id="C=2.5-positive-good"),
    pytest.param(0, {"max_card": 1, "anchors": "off"}, id="max_card=1-anchors-off"),
    pytest.param(3, {"max_card": 1, "anchors": "off"}, id="max_card=1-anchors-off-ordinal"),
    pytest.param(0, {"max_card": 1}, id="max_card=1-defaults"),
    pytest.param(4, {"max_card": 1, "anchors": "w"}, id="max_card=1-anchors-w"),
    pytest.param(4, {"max_card": 1, **ALL_OFF}, id="max_card=1-all-off"),
    pytest.param(3, {"max_card": 1, "numeric": "categorical"}, id="max_card=1-bins-categorical"),
    pytest.param(3, {"max_card": 1, "max_card_ordinal": "on"}, id="max_card_ordinal-defaults"),
    pytest.param(3, {"max_card": 1, "max_card_ordinal": "on", "anchors": "w"}, id="max_card_ordinal-anchors-w"),
    pytest.param(7, {"max_card": 2, "max_card_ordinal": "on", **ALL_OFF}, id="max_card_ordinal-all-off"),
    pytest.param(7, {"max_card": 1, "proper_subsets": "on"}, id="max_card=1-proper-ordinal"),
    pytest.param(2, {"proper_subsets": "on"}, id="proper"),
    pytest.param(7, {"proper_subsets": "on", **ALL_OFF}, id="proper-ordinal-all-off"),
    pytest.param(3, {"numeric": "categorical"}, id="numeric-categorical"),
    pytest.param(7, {"numeric": "categorical", **ALL_OFF}, id="numeric-categorical-all-off"),
])
def test_extensions_reach_the_oracle_optimum(seed, options):
    instance = random_case(seed)
    assert solve(instance, **options).objective == oracle(instance, **options)


def test_numeric_as_categorical_can_beat_ordered_bins():
    """Unordered bins allow more tests, so on this instance the optimum differs: the
    ``numeric`` switch really changes the model."""
    instance = random_case(3)
    assert solve(instance, numeric="categorical").objective > solve(instance).objective


FOUR_ROWS_CATEGORICAL = (["v0", "v2", "v1", "v1"], [POS, NEG, NEG, NEG])
FOUR_ROWS_ORDINAL = ([10, 30, 40, 20], [POS, NEG, POS, POS])
ONE_SIDED = {"max_card_ordinal": "on"}


@pytest.mark.parametrize("rows,max_card,options,optimum", [
    pytest.param(FOUR_ROWS_CATEGORICAL, 1, {"anchors": "off"}, 4, id="categorical-anchors-off"),
    pytest.param(FOUR_ROWS_CATEGORICAL, 1, {}, 4, id="categorical"),
    pytest.param(FOUR_ROWS_ORDINAL, 2, {**ONE_SIDED, "integrality": "full"}, 4, id="one-sided-ordinal"),
    pytest.param(FOUR_ROWS_ORDINAL, 2, {**ONE_SIDED, "anchors": "w"}, 4, id="one-sided-ordinal-anchors-w"),
    pytest.param(FOUR_ROWS_ORDINAL, 2, {**ONE_SIDED, "anchors": "off"}, 4, id="one-sided-ordinal-anchors-off"),
    pytest.param(([30, 20, 20, 10], [POS, NEG, NEG, NEG]), 1, ONE_SIDED, 2, id="one-sided-ordinal-relaxed"),
    pytest.param(([30, 20, 20, 10], [POS, NEG, NEG, NEG]), 1, {}, 4, id="ordinal-free"),
])
def test_max_card_on_four_rows(rows, max_card, options, optimum):
    """One group, four rows, depth 2: the optimum is checked by hand. Categorical (three
    values, max_card 1): every subset has at most one value on one side (§4.5), e.g. v2 left
    at the root, then v1 left: all four right. Ordinal under odtk's one-sided
    ``max_card_ordinal``: 40 left at the root, then "≥ 30" left; its mirror image (10, 20, 30 left)
    has too many bins left, so neither anchors nor w = 1 may apply to that group. Last two:
    at most one bin left allows only 2 (10 left at the root, 30 right below), whereas the
    paper does not bound ordered groups ("≤ 20" left at the last level: all four)."""
    instance = single_group(*rows)
    assert oracle(instance, max_card=max_card, **options) == optimum
    assert solve(instance, max_card=max_card, **options).objective == optimum


MIRRORED_2_5 = ("node", "last", D2)


@pytest.mark.parametrize("skeleton,case,options", [
    pytest.param("depth-2.5", (0,), {"anchors": "off"}, id="depth-2.5-anchors-off"),
    pytest.param("depth-2.5", (0,), {}, id="depth-2.5-defaults"),
    pytest.param("imbalanced", (11, 18, (3, 3, 3), 0.0), {}, id="imbalanced"),
    pytest.param("imbalanced", (11, 18, (3, 3, 3), 0.0), ALL_OFF, id="imbalanced-all-off"),
    pytest.param("imbalanced", (3,), {"anchors": "off"}, id="imbalanced-ordinal"),
    pytest.param(MIRRORED_2_5, (1,), {}, id="digraph-ordinal"),
    pytest.param(MIRRORED_2_5, (0,), {"anchors": "off"}, id="digraph-anchors-off"),
])
def test_other_topologies_reach_the_oracle_optimum(tmp_path, skeleton, case, options):
    instance = random_case(*case)
    given = skeleton if isinstance(skeleton, str) else tree_topology(skeleton)
    result = solve(instance, skeleton=given, **options)
    assert result.objective == oracle(instance, skeleton=skeleton, **options)
    assert result.hyperparameters["depth"] == depth_of(ORACLE_TOPOLOGY.get(skeleton, skeleton))
    result.model.save(tmp_path / "m.json")  # a topology naming its nodes by text saves and loads
    loaded = TrainedModel.load(tmp_path / "m.json")
    assert list(loaded.predict(instance.features)) == list(result.model.predict(instance.features))


# --------------------------------------------------------------------------- predictions on raw data
@pytest.mark.parametrize("seed,class_weight", [(1, 1.0), (2, 3.0)])
def test_predictions_on_raw_data_reproduce_the_objective(tmp_path, seed, class_weight):
    instance = random_case(seed)
    result = solve(instance, class_weight=class_weight)
    truth = instance.frame["y"]
    expected = weighted_correct(result.model.predict(instance.features), truth, class_weight)
    assert result.objective == expected == oracle(instance, class_weight=class_weight)

    result.model.save(tmp_path / "model.json")
    loaded = TrainedModel.load(tmp_path / "model.json")
    assert list(loaded.predict(instance.features)) == list(result.model.predict(instance.features))

    instance.frame.to_csv(tmp_path / "rows.csv", index=False)
    from_file = read_csv(tmp_path / "rows.csv")
    assert weighted_correct(loaded.predict(from_file.drop(columns="y")), from_file["y"], class_weight) == expected


def test_unseen_category_goes_right():
    """A value never seen in training fails every subset test, so the row ends in the
    rightmost leaf, which is positive."""
    instance = random_case(0)  # three categorical groups
    model = solve(instance).model
    unseen = instance.features.iloc[:3].copy()
    unseen[:] = "never-seen"
    assert groups_in_tree(model)  # a tree with tests, not a lone leaf
    with pytest.warns(OdtkWarning, match="never-seen"):
        assert list(model.predict(unseen)) == [POS] * 3


# --------------------------------------------------------------------------- display
def test_text_and_dot_use_the_original_vocabulary():
    result = solve(COLOUR_SIZE_INSTANCE)
    assert result.objective == len(COLOUR_SIZE) == oracle(COLOUR_SIZE_INSTANCE)  # perfect tree
    features = COLOUR_SIZE.drop(columns="y")
    graph = result.model.graph
    dot = graph.to_dot(graph.sample_counts(result.model.encoder.transform(features)), result.model.encoder)
    for shown in (result.model.to_text(features), dot):
        assert re.search(r"colour (= (red|green|blue)|in \{(red|green|blue)(, (red|green|blue))+\}) \?", shown), shown
        assert re.search(r"size (<=|>) 1\.5 \?", shown), shown
        assert "colour=" not in shown and "size<=" not in shown  # not the one-hot column names
        assert f"predict {POS}" in shown and f"predict {NEG}" in shown


def test_cli_prints_saves_and_draws_the_tree(tmp_path):
    COLOUR_SIZE.assign(size=COLOUR_SIZE["size"] * 10).to_csv(tmp_path / "train.csv", index=False)
    run = CliRunner().invoke(main, [
        "solve", "--model", "categorical", "--csv", str(tmp_path / "train.csv"), "--target", "y",
        "--categorical", "size", "--skeleton", "depth-2", "--positive-class", POS,
        "--class-weight", "2", "--output", str(tmp_path / "m.json"), "--dot", str(tmp_path / "t.dot")])
    assert run.exit_code == 0, run.output
    assert "status      optimal" in run.stdout
    assert re.search(r"objective\s+18\b", run.stdout)  # 6 positives + 2 · 6 negatives, all right
    dot = (tmp_path / "t.dot").read_text()
    for shown in (run.stdout, dot):  # size declared categorical: value sets, not thresholds
        assert re.search(r"size (= \d0|in \{\d0, \d0\}) \?", shown), shown
    assert "sensitivity 1" in run.stdout and "specificity 1" in run.stdout
    predicted = CliRunner().invoke(main, ["predict", "--model-file", str(tmp_path / "m.json"),
                                          "--csv", str(tmp_path / "train.csv")])
    assert predicted.exit_code == 0 and predicted.stdout.split() == list(COLOUR_SIZE["y"])


# --------------------------------------------------------------------------- sensitivity / specificity
@pytest.mark.parametrize("rate,min_rate", [("sensitivity", 0.8), ("specificity", 0.7), ("sensitivity", 1.0)])
@pytest.mark.parametrize("seed", [0, 3])
def test_best_rate_subject_to_the_other_rate(seed, rate, min_rate):
    instance = random_case(seed)
    result = solve(instance, rate=rate, min_rate=min_rate)
    sensitivity, specificity = rates(result.model.predict(instance.features), instance.frame["y"])
    n_pos, n_neg = int(instance.positive.sum()), int((~instance.positive).sum())
    frontier = rate_frontier(instance.values, instance.positive, D2, instance.n_values, instance.ordinal)
    if rate == "sensitivity":
        assert round(specificity * n_neg) >= math.ceil(min_rate * n_neg)
        best = max(tp for tp, tn in frontier if tn >= math.ceil(min_rate * n_neg)) / n_pos
    else:
        assert round(sensitivity * n_pos) >= math.ceil(min_rate * n_pos)
        best = max(tn for tp, tn in frontier if tp >= math.ceil(min_rate * n_pos)) / n_neg
    achieved = sensitivity if rate == "sensitivity" else specificity
    assert result.objective == pytest.approx(best, abs=1e-9) and achieved == pytest.approx(best, abs=1e-9)
    step = result.steps["milp"]
    assert step["sensitivity"] == pytest.approx(sensitivity) and step["specificity"] == pytest.approx(specificity)


UNATTAINABLE = {"rate": "sensitivity", "min_rate": 1.0, "max_card": 1, "proper_subsets": "on"}


def test_unattainable_rate_is_a_solve_error_naming_min_rate(tmp_path):
    """Depth 1: every negative lies in the left leaf only if every colour (or size) goes left,
    which (10) forbids. (At depth 2 a perfect tree exists: max_card 1 does not bind three
    colours, and ordered sizes not at all.)"""
    frontier = rate_frontier(COLOUR_SIZE_INSTANCE.values, COLOUR_SIZE_INSTANCE.positive, "last",
                             COLOUR_SIZE_INSTANCE.n_values, COLOUR_SIZE_INSTANCE.ordinal, max_card=1, proper=True)
    assert max(tn for _, tn in frontier) < (~COLOUR_SIZE_INSTANCE.positive).sum()  # specificity 1 unreachable
    with pytest.raises(SolveError, match="min_rate") as raised:
        odtk.solve("categorical", COLOUR_SIZE_INSTANCE.dataset, depth=1, positive_class=POS, **UNATTAINABLE)
    assert "\n" not in str(raised.value)

    COLOUR_SIZE.to_csv(tmp_path / "train.csv", index=False)
    assert_one_line_error(run_cli(
        "solve", "--model", "categorical", "--csv", str(tmp_path / "train.csv"), "--target", "y",
        "--depth", "1", "--positive-class", POS, "--rate", "sensitivity", "--min-rate", "1.0",
        "--max-card", "1", "-o", "proper_subsets=on"), "min_rate")


# --------------------------------------------------------------------------- errors
def _digraph_with_a_lone_leaf() -> nx.DiGraph:
    graph = tree_topology(D2)
    graph.remove_nodes_from(list(nx.descendants(graph, "n0")))  # the left split becomes a leaf
    return graph


THREE_CLASSES = COLOUR_SIZE.assign(y=["a", "b", "c"] * 4)


@pytest.mark.parametrize("data,options,error,words", [
    pytest.param(THREE_CLASSES, {"positive_class": None}, ConfigError, "binary", id="three-classes"),
    pytest.param(THREE_CLASSES, {"positive_class": "a"}, DataError, "two classes", id="three-classes-positive"),
    pytest.param(COLOUR_SIZE, {"positive_class": "ugly"}, DataError, "positive_class='ugly'", id="no-such-class"),
    pytest.param(COLOUR_SIZE, {"rate": "sensitivity"}, ConfigError, "min_rate", id="rate-without-min_rate"),
    pytest.param(COLOUR_SIZE, {"min_rate": 0.5}, ConfigError, "min_rate", id="min_rate-without-rate"),
    pytest.param(COLOUR_SIZE, {"rate": "specificity", "min_rate": 1.5}, ConfigError, "min_rate", id="min_rate>1"),
    pytest.param(COLOUR_SIZE, {"rate": "balanced", "min_rate": 0.5}, ConfigError, "rate", id="bad-rate"),
    pytest.param(COLOUR_SIZE, {"skeleton": "depth-4"}, SkeletonError, "depth-4", id="bad-topology-name"),
    pytest.param(COLOUR_SIZE, {"skeleton": _digraph_with_a_lone_leaf()}, ConfigError,
                 "leaf and a decision child", id="digraph-leaf-beside-split"),
    pytest.param(COLOUR_SIZE, {"max_card": 0}, ConfigError, "max_card", id="max_card=0"),
    pytest.param(COLOUR_SIZE, {"skeleton": None, "depth": 0}, ConfigError, "at least one test", id="depth=0"),
])
def test_bad_input_is_a_one_line_error(data, options, error, words):
    call = {"skeleton": "depth-2", "positive_class": POS, **options}
    with pytest.raises(error) as raised:
        odtk.solve("categorical", data, target="y", **call)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_cli_rejects_more_than_two_classes(tmp_path):
    THREE_CLASSES.to_csv(tmp_path / "three.csv", index=False)
    assert_one_line_error(run_cli("solve", "--model", "categorical", "--csv", str(tmp_path / "three.csv"),
                                  "--target", "y", "--skeleton", "depth-2"), "binary", "3 classes")


# --------------------------------------------------------------------------- solvers, CART, B&B nodes
@pytest.mark.parametrize("seed", [1, 4])
def test_every_solver_reaches_the_oracle_optimum(solver, seed):
    instance = random_case(seed, rows=26)
    result = solve(instance, solver=solver)
    assert result.solver == solver
    assert result.objective == oracle(instance)


# --------------------------------------------------------------------------- §4.5 and §5.1 as the paper states them
ABC = (["a"] * 4 + ["b"] * 3 + ["c"] * 3, [POS] * 4 + [NEG] * 6)
BINS = ([10, 20, 30, 40] * 3, [POS if x >= 30 else NEG for x in [10, 20, 30, 40] * 3])
TWO_SIDED_CASES = {  # (random_case arguments, max_card) where the max_card rules bind
    "categorical": ((2, 24, (5, 6, 3), 0.0), 1),
    "categorical-2": ((7, 24, (5, 6, 3), 0.0), 1),
    "ordinal": ((0, 24, (5, 4, 6), 0.6), 1),
    "mixed": ((2, 24, (5, 4, 6), 0.6), 1),
}
SELECTION_CASE = (11, 24, (2,) * 6, 0.0)  # CART keeps five of six groups, and the optimum drops


def encoded(instance: Instance) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """One-hot X, 0/1 positive y and the column groups, as odtk encodes the instance."""
    encoder = FeatureEncoder(mode="onehot").fit(instance.dataset)
    return encoder.transform(instance.dataset), instance.positive.astype(int), list(encoder.groups_.values())


def test_max_card_bounds_both_sides_of_a_categorical_test(solver):
    """§4.5: with max_card 1, "x in {b, c}" (one value on the right) is allowed; the old
    one-sided bound (at most one value left) reached 7."""
    instance = single_group(*ABC)
    result = solve(instance, skeleton=None, depth=1, max_card=1, solver=solver)
    assert result.objective == oracle(instance, skeleton="last", max_card=1) == 10
    assert re.search(r"g0 in \{b, c\} \?", result.model.to_text(instance.features))


def test_max_card_does_not_bind_ordered_groups(solver):
    """§4.5 bounds categorical groups only: "x <= 25" sends two bins left. odtk's own
    max_card_ordinal=on bounds the bins left (its old behaviour): 9."""
    instance = single_group(*BINS)
    assert solve(instance, skeleton=None, depth=1, max_card=1, solver=solver).objective == 12
    one_sided = solve(instance, skeleton=None, depth=1, max_card=1, max_card_ordinal="on", solver=solver)
    assert one_sided.objective == oracle(instance, skeleton="last", max_card=1, max_card_ordinal="on") == 9
    assert oracle(instance, skeleton="last", max_card=1) == 12


def test_feature_selection_on_monk1_reaches_the_paper_optimum(solver):
    """§5.1: an unrestricted CART on 90 % of the rows keeps F0, F1 and F4 (monk1's class is
    "F0 = F1 or F4 = 1"), so depth 2 reaches 102/124 as with all groups (a depth-2 CART's
    {F0, F4}: 95)."""
    dataset = load_dataset("flowoct/monk1-categorical")
    encoder = FeatureEncoder(mode="onehot").fit(dataset)
    y = (dataset.target == sorted(dataset.target.unique())[1]).to_numpy().astype(int)
    kept = categorical.cart_groups(encoder.transform(dataset), y, list(encoder.groups_.values()))
    assert {"Feat_0", "Feat_1", "Feat_4"} <= {list(encoder.groups_)[g] for g in kept}
    result = odtk.solve("categorical", dataset, depth=2, feature_selection="cart", solver=solver)
    assert result.optimal and result.objective == 102


@pytest.mark.parametrize("name,options", [
    pytest.param("categorical", {}, id="categorical"),
    pytest.param("ordinal", {}, id="ordinal"),
    pytest.param("ordinal", {"max_card_ordinal": "on"}, id="ordinal-one-sided"),
    pytest.param("mixed", {}, id="mixed"),
])
def test_max_card_reaches_the_oracle_on_every_solver(solver, name, options):
    case, max_card = TWO_SIDED_CASES[name]
    instance = random_case(*case)
    expected = oracle(instance, max_card=max_card, **options)
    assert solve(instance, max_card=max_card, solver=solver, **options).objective == expected


SWITCHES = {"defaults": {}, "all-off": ALL_OFF, "anchors-off": {"anchors": "off"}, "anchors-w": {"anchors": "w"},
            "weak-with-(7)": {"inequalities": "weak", "projection": "off"}, "proper": {"proper_subsets": "on"},
            "depth-2.5": {"skeleton": "depth-2.5"}, "one-sided": {"max_card_ordinal": "on"},
            "one-sided-anchors-w": {"max_card_ordinal": "on", "anchors": "w"}}


@pytest.mark.parametrize("name,switches", [
    *((name, switches) for name in sorted(TWO_SIDED_CASES) for switches in ("defaults", "all-off")),
    *(("categorical", switches) for switches in ("anchors-off", "anchors-w", "weak-with-(7)", "proper")),
    *(("mixed", switches) for switches in ("anchors-w", "proper", "one-sided", "one-sided-anchors-w")),
    *(("ordinal", switches) for switches in ("anchors-off", "depth-2.5", "one-sided", "one-sided-anchors-w")),
])
def test_max_card_reaches_the_oracle_whatever_the_switches(name, switches):
    case, max_card = TWO_SIDED_CASES[name]
    instance, options = random_case(*case), SWITCHES[switches]
    bound = oracle(instance, max_card=max_card, **options)
    assert solve(instance, max_card=max_card, **options).objective == bound
    if not options:  # the instance tells the rules apart: §4.5 binds, or odtk's one-sided bins lose
        assert bound < oracle(instance) or bound > oracle(instance, max_card=max_card, max_card_ordinal="on")


def build(instance: Instance, **options) -> pyo.ConcreteModel:
    """The depth-2 model instance of ``instance`` with ``options``, unsolved."""
    X, y, groups = encoded(instance)
    data = categorical.make_data(X, y, topology_skeleton("depth-2"), 2, groups=groups,
                                 ordinal=instance.ordinal, **options)
    return categorical.build_model().create_instance(data)


@pytest.mark.parametrize("options,one_leaf,binary_c", [
    pytest.param({}, False, False, id="defaults"),
    pytest.param({"inequalities": "weak"}, False, False, id="weak-projected"),
    pytest.param({"inequalities": "weak", "projection": "off"}, True, False, id="weak-unprojected"),
    pytest.param({"projection": "off"}, False, False, id="strong-unprojected"),
    pytest.param(ALL_OFF, True, True, id="all-off"),
])
def test_constraint_7_and_binary_c_as_the_paper_has_them(options, one_leaf, binary_c):
    """(7) Σ_b c^i_b = 1 only without (11)–(12) and without (14); c ∈ {0, 1} unless relaxed (§4.3.4)."""
    model = build(random_case(1, rows=12), **options)
    rows = list(model.one_leaf.values())
    assert len(rows) == (12 if one_leaf else 0)
    assert all(row.equality and pyo.value(row.upper) == 1 for row in rows)
    assert all(c.is_binary() == binary_c for c in model.c.values())


def test_symmetry_breaking_keeps_to_groups_closed_under_complement():
    """With max_card, anchors (13) still apply to every group (§4.5 is two-sided); under odtk's
    one-sided max_card_ordinal neither anchors nor w = 1 apply to the ordered groups it bounds."""
    instance = random_case(*TWO_SIDED_CASES["mixed"][0])  # groups g0, g1 ordered (5, 4 bins), g2 categorical
    assert {g for _, g in build(instance, max_card=1).anchor} == {0, 1, 2}
    assert {g for _, g in build(instance, max_card=1, max_card_ordinal="on").anchor} == {2}
    assert {g for _, g in build(instance, max_card=1, anchors="w").w_symmetry} == {0, 1, 2}
    # g2's §4.5 w only: g0 and g1 are bounded one-sidedly
    assert {g for _, g in build(instance, max_card=1, max_card_ordinal="on", anchors="w").w_symmetry} == {2}


def test_cart_selection_is_an_unrestricted_cart_on_a_90_percent_sample():
    instance = random_case(*SELECTION_CASE)
    X, y, groups = encoded(instance)

    def used_by(rows: np.ndarray) -> list[int]:
        feature = DecisionTreeClassifier(random_state=0).fit(X[rows], y[rows]).tree_.feature  # no depth limit
        return [g for g, columns in enumerate(groups) if set(columns) & set(feature[feature >= 0])]

    assert categorical.cart_groups(X, y, groups, min_groups=1, share=1.0) == used_by(np.arange(len(y)))
    sample = np.random.default_rng(0).permutation(len(y))[:round(0.9 * len(y))]
    assert categorical.cart_groups(X, y, groups, min_groups=1) == used_by(sample)
    assert len(used_by(sample)) == 5


def test_cart_selection_tops_up_to_min_groups():
    """§5.7 keeps at least 4 features; CART needs one here (g0 decides the class), and the next
    group is the one whose best split is best (g1 agrees with g0 on 10 of 12 rows)."""
    g0 = np.array([0, 1] * 6)
    g1 = np.where(np.arange(12) < 2, 1 - g0, g0)
    g2 = np.array([0, 0, 1, 1, 2, 2] * 2)
    instance = make_instance(np.column_stack([g0, g1, g2]), g0 == 1, [False] * 3)
    X, y, groups = encoded(instance)
    assert [categorical.cart_groups(X, y, groups, min_groups=n) for n in (1, 2, 3, 4)] == [
        [0], [0, 1], [0, 1, 2], [0, 1, 2]]
    result = solve(instance, feature_selection="cart", min_groups=2)
    assert groups_in_tree(result.model) <= {"g0", "g1"}


def test_cart_feature_selection_keeps_to_the_selected_groups(solver):
    instance = random_case(*SELECTION_CASE)
    X, y, groups = encoded(instance)
    kept = categorical.cart_groups(X, y, groups, min_groups=1)
    result = solve(instance, feature_selection="cart", min_groups=1, solver=solver)
    assert groups_in_tree(result.model) <= {f"g{g}" for g in kept}
    only_kept = make_instance(instance.values[:, kept], instance.positive, [instance.ordinal[g] for g in kept])
    assert result.objective == oracle(only_kept) < oracle(instance)


def test_branch_and_bound_nodes_are_reported():
    result = solve(random_case(6))
    nodes = result.steps["milp"]["nodes"]
    assert isinstance(nodes, int) and nodes >= 0


# --------------------------------------------------------------------------- §5.1's named configurations
PAPER_CONFIGURATIONS = {  # §5.1: which of anchoring, relaxation and strengthening each one applies
    "nothing": (), "no-anchor": ("relax", "strength"), "no-relax": ("anchor", "strength"),
    "no-strength": ("anchor", "relax"), "all": ("anchor", "relax", "strength")}


@pytest.mark.parametrize("name,applied", PAPER_CONFIGURATIONS.items())
def test_named_configuration_sets_the_paper_switches(name, applied):
    defaults = {option: allowed[0] for option, allowed in categorical.CHOICES.items()}
    switch = categorical.configured({**defaults, "configuration": name})
    assert switch["anchors"] == ("on" if "anchor" in applied else "off")
    assert switch["integrality"] == ("relaxed" if "relax" in applied else "full")
    assert switch["inequalities"] == ("strong" if "strength" in applied else "weak")
    assert switch["projection"] == "on"


def test_named_configurations_reach_the_oracle_optimum(solver):
    instance = random_case(3)
    optimum = oracle(instance)
    for name in PAPER_CONFIGURATIONS:
        assert solve(instance, solver=solver, configuration=name).objective == optimum, name


@pytest.mark.parametrize("options", [{"configuration": "nothing", "anchors": "w"},
                                     {"configuration": "all", "inequalities": "weak"},
                                     {"configuration": "no-relax", "projection": "off"}])
def test_switch_contradicting_the_named_configuration_is_a_one_line_error(options):
    with pytest.raises(ConfigError, match="contradicts") as error:
        odtk.solve("categorical", random_case(0).dataset, skeleton="depth-2", positive_class=POS, **options)
    assert "\n" not in str(error.value)


def test_switch_agreeing_with_the_named_configuration_is_accepted():
    instance = random_case(0)
    assert solve(instance, configuration="no-strength", inequalities="weak").objective == oracle(instance)


# --------------------------------------------------------------------------- examples/categorical_paper.py
@pytest.mark.slow
def test_paper_script_prints_the_paper_value_beside_odtk(monkeypatch, capsys, tmp_path):
    """A small run of the paper script: every row of Tables 2, 8 and 14 carries the value
    transcribed from the paper next to odtk's measured one."""
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    monkeypatch.syspath_prepend(examples)
    import categorical_paper as script
    import categorical_tables as paper_values

    script.main(["--tables", "2", "8", "14", "--datasets", "bc", "--topologies", "depth-2",
                 "--time-limit", "1", "--betas", "1", "--db", str(tmp_path / "runs.sqlite")])
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("odtk:")]
    header = next(k for k, line in enumerate(lines) if line.split()[-4:] == ["paper", "odtk", "status", "gap"])
    assert any("up to 1 s per solve" in line for line in lines[:header])
    papers = {2: paper_values.TABLE2["bc"].split(), 8: [paper_values.TABLE8["bc"][0], paper_values.TABLE8["bc"][4]],
              14: [" ".join(paper_values.TABLE14[1.0][:2])]}
    measured = r"(\*|\d+(\.\d)?)/(\d+|-)|\d+\.\d \(\d+\.\d\)|(\d+\.\d/\d+\.\d ?)+|\*"  # *: no tree in 1 s
    status = r"( †)? +(optimal|\d+/\d+ optimal(, \d+ \w+( \w+)?)+|-) +(\d+\.\d\d%|-)"  # †: a solve not proven optimal
    rows = lines[header + 1:lines.index(next(line for line in lines if line.startswith("†")))]
    assert sorted({int(line.split()[0]) for line in rows}) == [2, 8, 14] and len(rows) >= 6
    for line in rows:
        table = int(line.split()[0])
        paper = next((value for value in papers[table] if f" {value} " in line), None)
        assert paper is not None and "bc" in line, line
        head, _, odtk_value = line.partition(f" {paper} ")
        assert head and re.fullmatch(rf" *({measured}){status}", odtk_value), line


# --------------------------------------------------------------------------- sample weights
def repeated(instance: Instance, counts: np.ndarray) -> Instance:
    """``instance`` with row i repeated ``counts[i]`` ≥ 1 times (the same values, so the same encoding)."""
    return make_instance(np.repeat(instance.values, counts, axis=0), np.repeat(instance.positive, counts),
                         instance.ordinal)


@pytest.mark.parametrize("seed,class_weight", [(0, 1.0), (3, 2.5)])
def test_integer_weights_reach_the_optimum_of_repeated_rows(seed, class_weight):
    instance = random_case(seed)
    counts = np.random.default_rng(seed).integers(1, 4, len(instance.positive))
    result = solve(instance, class_weight=class_weight, sample_weight=counts)
    assert result.objective == pytest.approx(oracle(repeated(instance, counts), class_weight=class_weight))
    predicted, truth = result.model.predict(instance.features), instance.frame["y"].to_numpy()
    correct = (predicted == truth) * counts
    expected = correct[truth == POS].sum() + class_weight * correct[truth == NEG].sum()
    assert result.objective == pytest.approx(expected)


def test_a_weighted_rate_weighs_its_class_and_min_rate_counts_rows():
    """Sensitivity weighted by integer weights on the positives is that of the positives repeated;
    (15) counts negative rows, so their weights change nothing."""
    instance, min_rate = random_case(2), 0.8
    rng = np.random.default_rng(2)
    positive = instance.positive
    counts = np.where(positive, rng.integers(1, 4, len(positive)), 1)
    n_neg = int((~positive).sum())
    rows = repeated(instance, counts)
    frontier = rate_frontier(rows.values, rows.positive, D2, rows.n_values, rows.ordinal)
    best = max(tp for tp, tn in frontier if tn >= math.ceil(min_rate * n_neg)) / counts[positive].sum()
    for weight in (counts, np.where(positive, counts, rng.uniform(0.2, 3, len(positive)))):
        result = solve(instance, rate="sensitivity", min_rate=min_rate, sample_weight=weight)
        predicted = result.model.predict(instance.features)
        assert result.objective == pytest.approx(best)
        sensitivity = weight[positive] @ (predicted[positive] == POS) / weight[positive].sum()
        assert result.objective == pytest.approx(sensitivity)
        assert (predicted[~positive] == NEG).sum() >= math.ceil(min_rate * n_neg)
    with pytest.raises(ConfigError, match="gives that class no weight"):
        odtk.solve("categorical", instance.dataset, skeleton="depth-2", positive_class=POS, rate="sensitivity",
                   min_rate=min_rate, sample_weight=np.where(positive, 0.0, 1.0))


# --------------------------------------------------------------------------- min_leaf (odtk's own)
@pytest.mark.parametrize("seed,options", [
    pytest.param(0, {"min_leaf": 5}, id="defaults"),
    pytest.param(3, {"min_leaf": 6}, id="ordinal"),
    pytest.param(4, {"min_leaf": 6, **ALL_OFF}, id="all-off"),
    pytest.param(5, {"min_leaf": 5, "projection": "off"}, id="projection-off"),
    pytest.param(7, {"min_leaf": 7, "max_card": 1}, id="max_card"),
])
def test_min_leaf_reaches_the_oracle_optimum_and_fills_every_leaf(seed, options):
    instance = random_case(seed)
    result = solve(instance, **options)
    assert result.objective == oracle(instance, **options) < oracle(instance)
    leaves, counts = np.unique(result.model.graph.leaves(result.model.encoder.transform(instance.features)),
                               return_counts=True)
    assert len(leaves) == 4 and counts.min() >= options["min_leaf"]


@pytest.mark.parametrize("seed", [0, 3])
def test_min_leaf_1_is_the_default_optimum(seed):
    instance = random_case(seed)
    assert solve(instance, min_leaf=1).objective == solve(instance).objective == oracle(instance)


@pytest.mark.slow
def test_estimator_min_samples_leaf_fills_every_leaf_of_a_depth_3_tree():
    """Whatever tree the solve returns (proven or stopped by the time limit) fills its leaves."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("pqrs"), 48), "b": rng.choice(list("xyz"), 48),
                      "c": rng.normal(size=48)})
    y = (rng.random(48) < 0.4).astype(int)
    estimator = odtk.CategoricalTreeClassifier(max_depth=3, random_state=0, min_samples_leaf=5,
                                               class_weight="balanced", bins=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OdtkWarning)  # a time limit reached is fine here
        fitted = estimator.fit(X, y)
    leaves, counts = np.unique(fitted.apply(X), return_counts=True)
    assert len(leaves) == 8 and counts.min() >= 5
