"""The categorical model's start: ``categorical.warm_start`` loads a tree of the topology as a
feasible MIP start whose objective is the tree's, and ``categorical_start`` grows such a tree
for every switch of the paper, so that a warm-started solve ends where a cold one does.

Random instances are DataFrames a user would pass (categorical groups of strings, ordinal
groups of integers, the class ``bad`` positive); the paper's data are the bundled sets the
categorical examples use.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

from odtk.datasets import Dataset, from_dataframe, load_dataset
from odtk.formulations import categorical
from odtk.pipeline.categorical_start import categorical_start
from odtk.pipeline.encode import Problem
from odtk.pipeline.methods import hyperparameters, method, side_constraints_on, skeleton_of
from odtk.pipeline.start import majority_leaf
from odtk.solvers import SolverOptions, solve_instance

from feasibility import assert_feasible
from subset_trees import random_instance

POS = "bad"
TOPOLOGIES = ("depth-2", "depth-2.5", "depth-3", "imbalanced")
SWITCHES = {  # the paper's switches and extensions, and odtk's own
    "default": {},
    **{f"configuration={name}": {"configuration": name} for name in categorical.CONFIGURATIONS},
    "anchors=w": {"anchors": "w"},
    "projection=off,weak": {"projection": "off", "inequalities": "weak", "anchors": "off"},
    "max_card=1": {"max_card": 1},
    "max_card=2,anchors=w": {"max_card": 2, "anchors": "w"},
    "max_card_ordinal": {"max_card": 1, "max_card_ordinal": "on"},
    "proper_subsets": {"proper_subsets": "on"},
    "numeric=categorical": {"numeric": "categorical"},
    "sensitivity": {"rate": "sensitivity", "min_rate": 0.8},
    "specificity": {"rate": "specificity", "min_rate": 0.7, "proper_subsets": "on"},
    "feature_selection": {"feature_selection": "cart", "min_groups": 2},
    "class_weight": {"class_weight": 2.5},
}


def random_frame(seed: int, rows: int = 30, n_values: tuple = (5, 4, 6), ordinal_share: float = 0.6) -> pd.DataFrame:
    """Random rows: a categorical group is a column of strings, an ordinal one of integers."""
    values, positive, ordinal = random_instance(seed, rows, list(n_values), ordinal_share)
    frame = pd.DataFrame({f"g{g}": 10 * (values[:, g] + 1) if flag else [f"v{k}" for k in values[:, g]]
                          for g, flag in enumerate(ordinal)})
    return frame.assign(y=np.where(positive, POS, "good"))


def setup(data: pd.DataFrame | Dataset, skeleton: str = "depth-2", positive_class=POS, sample_weight=None,
          **options) -> tuple[Problem, nx.DiGraph, dict]:
    """(problem, topology, options) as ``odtk.solve`` makes them."""
    module = method("categorical")
    hyper = hyperparameters(module, options)
    shape = skeleton_of(module, None, skeleton, hyper)
    dataset = data if isinstance(data, Dataset) else from_dataframe(data, "y")
    problem = Problem(module, dataset, "auto", None, None, positive_class, sample_weight, shape.graph["depth"], 0, None)
    return problem, shape, hyper


def instance_of(problem: Problem, shape: nx.DiGraph, hyper: dict):
    data = categorical.make_data(problem.X, problem.y, shape, len(problem.classes), **hyper, **problem.extra)
    return categorical.build_model().create_instance(data)


def loaded(problem: Problem, shape: nx.DiGraph, hyper: dict, tree: nx.DiGraph):
    """An instance holding ``tree``, checked: every constraint, bound and integrality holds, its
    objective is the tree's, and it decodes to a tree of the same predictions."""
    instance = instance_of(problem, shape, hyper)
    categorical.warm_start(instance, tree, problem.X)
    assert_feasible(instance)
    objective, _ = problem.score(problem.graph(tree), shape, hyper)
    assert pyo.value(instance.objective) == pytest.approx(objective, abs=1e-9)
    decoded = problem.graph(categorical.decode(instance))
    assert (decoded.predict_index(problem.X) == problem.graph(tree).predict_index(problem.X)).all()
    return instance, objective


def cold_and_warm(problem: Problem, shape: nx.DiGraph, hyper: dict) -> tuple[float, float, float]:
    """(start objective, optimum solved cold, optimum solved from the start with its cutoff)."""
    cold = solve_instance(instance_of(problem, shape, hyper), "highs", SolverOptions(time_limit=300))
    instance, start = loaded(problem, shape, hyper, categorical_start(problem, shape, hyper, 0))
    warm = solve_instance(instance, "highs", SolverOptions(time_limit=300), warm_start=True, cutoff=start - 1e-6)
    assert cold.termination == warm.termination == "optimal"
    return start, cold.objective, warm.objective


# --------------------------------------------------------------------------- the start loads
@pytest.mark.parametrize("skeleton", TOPOLOGIES)
@pytest.mark.parametrize("switches", SWITCHES.values(), ids=SWITCHES.keys())
@pytest.mark.parametrize("seed", [1, 3])
def test_start_loads_as_a_feasible_point_of_its_objective(seed, switches, skeleton):
    problem, shape, hyper = setup(random_frame(seed), skeleton, **switches)
    _, objective = loaded(problem, shape, hyper, categorical_start(problem, shape, hyper, seed))
    if not side_constraints_on(problem.module, hyper):  # else the majority leaf may not be a tree of the model
        assert objective >= majority_leaf(problem, shape, hyper)[1]["objective"]


def test_sample_weights_weigh_the_start_as_the_model_does():
    frame = random_frame(5, rows=40)
    weights = np.random.default_rng(5).uniform(0.5, 3.0, len(frame))
    for options in ({}, {"rate": "sensitivity", "min_rate": 0.6}):
        problem, shape, hyper = setup(frame, "depth-3", sample_weight=weights, **options)
        loaded(problem, shape, hyper, categorical_start(problem, shape, hyper, 0))


@pytest.mark.parametrize("name", ["uci/breast-cancer-wisconsin", "flowoct/monk1-categorical", "flowoct/spect"])
@pytest.mark.parametrize("skeleton", ["depth-2", "depth-3"])
def test_start_on_the_paper_data_is_feasible_and_no_worse_than_the_majority(name, skeleton):
    problem, shape, hyper = setup(load_dataset(name), skeleton, positive_class=None)
    _, objective = loaded(problem, shape, hyper, categorical_start(problem, shape, hyper, 0))
    assert objective >= majority_leaf(problem, shape, hyper)[1]["objective"]  # spect's depth-2 optimum is the majority


# --------------------------------------------------------------------------- a warm solve ends where a cold one does
@pytest.mark.parametrize("skeleton,switches", [
    ("depth-2", {}), ("depth-2.5", {}), ("imbalanced", {"anchors": "w"}), ("depth-2", {"max_card": 1}),
    ("depth-2.5", {"configuration": "nothing"}), ("depth-2", {"rate": "sensitivity", "min_rate": 0.8}),
])
@pytest.mark.parametrize("seed", [0, 7])
def test_warm_started_solve_reaches_the_cold_optimum(seed, skeleton, switches):
    problem, shape, hyper = setup(random_frame(seed, rows=20, n_values=(3, 4, 3)), skeleton, **switches)
    start, cold, warm = cold_and_warm(problem, shape, hyper)
    assert warm == pytest.approx(cold, abs=1e-6) and start <= cold + 1e-9


def test_warm_started_solve_on_monk1_reaches_the_cold_optimum():
    problem, shape, hyper = setup(load_dataset("flowoct/monk1-categorical"), "depth-2", positive_class=None)
    start, cold, warm = cold_and_warm(problem, shape, hyper)
    assert warm == pytest.approx(cold, abs=1e-6) and start <= cold + 1e-9


# --------------------------------------------------------------------------- warm_start's contract
def random_tree(rng: np.random.Generator, problem: Problem, shape: nx.DiGraph, hyper: dict) -> nx.DiGraph:
    """A tree with a random allowed test at every node of the topology (with an empty or a
    full subset now and then), in decode's format."""
    data = categorical.make_data(problem.X, problem.y, shape, 2, **hyper, **problem.extra)[None]
    groups, ordered = problem.extra["groups"], set(data["G_ordinal"][None])
    tests = {}
    for k in data["K"][None]:
        g = int(rng.choice(data["G_allowed"][None]))
        n = len(groups[g])
        size = int(rng.integers(0, n + 1))
        if g in ordered:
            chosen = range(size) if rng.random() < 0.5 else range(n - size, n)
        else:
            chosen = rng.choice(n, size, replace=False)
        tests[k] = [groups[g][v] for v in sorted(chosen)]
    return categorical.tree_of(tests, data["K"][None][0], data["child"], set(data["B_pos"][None]))


@pytest.mark.parametrize("skeleton", TOPOLOGIES)
@pytest.mark.parametrize("switches", [{}, {"anchors": "w"}, {"configuration": "nothing"}, {"numeric": "categorical"}],
                         ids=["anchors", "w", "nothing", "categorical"])
def test_any_tree_of_the_topology_loads_mirrored_where_symmetry_breaking_asks(switches, skeleton):
    problem, shape, hyper = setup(random_frame(2, rows=26), skeleton, **switches)
    rng = np.random.default_rng(0)
    for _ in range(15):
        loaded(problem, shape, hyper, random_tree(rng, problem, shape, hyper))


def test_a_solved_tree_loads_back_with_its_objective():
    problem, shape, hyper = setup(random_frame(4, rows=24), "depth-2.5")
    solved = instance_of(problem, shape, hyper)
    outcome = solve_instance(solved, "highs", SolverOptions(time_limit=300))
    _, objective = loaded(problem, shape, hyper, categorical.decode(solved))
    assert objective == pytest.approx(outcome.objective, abs=1e-6)


SMALL = pd.DataFrame({"colour": list("rgbrgbrgbr"), "size": [1, 2, 3, 4, 1, 2, 3, 4, 1, 2], "shape": ["round"] * 10,
                      "y": [POS, "good", "good", POS, POS, "good", POS, "good", "good", POS]})


def _tree(nodes: dict, edges: list) -> nx.DiGraph:
    tree = nx.DiGraph()
    tree.add_nodes_from(nodes.items())
    tree.add_edges_from((a, b, {"outcome": outcome}) for a, b, outcome in edges)
    return tree


FOUR = {k: {"subset": [0]} for k in (1, 2, 3)} | {b: {"label": b % 2} for b in range(4, 8)}
FOUR_ARCS = [(k, 2 * k + side, not side) for k in (1, 2, 3) for side in (0, 1)]


@pytest.mark.parametrize("tree,words", [
    (_tree({2: {"subset": [0]}, 4: {"label": 0}, 5: {"label": 1}}, [(2, 4, True), (2, 5, False)]), "sits where"),
    (_tree({1: {"subset": [0]}, 2: {"label": 0}, 3: {"label": 1}}, [(1, 2, True), (1, 3, False)]), "needs a subset"),
    (_tree({**FOUR, 1: {"subset": [0, 5]}}, FOUR_ARCS), "2 groups"),
    (_tree({**FOUR, 5: {"label": 0}}, FOUR_ARCS), "predicts class 1"),
    (_tree({7: {"label": 0}}, []), "predicts class 1"),
    (_tree({**FOUR, 2: {"subset": [99]}}, FOUR_ARCS), "lacks"),
    (_tree({**FOUR, 3: {"subset": [7]}}, FOUR_ARCS), "feature selection left out"),
])
def test_a_tree_that_does_not_fit_is_a_value_error(tree, words):
    problem, shape, hyper = setup(SMALL, "depth-2", feature_selection="cart", min_groups=1)
    assert problem.extra["groups"][-1] == [7]  # "shape" has one value: CART never tests it
    with pytest.raises(ValueError, match=words):
        categorical.warm_start(instance_of(problem, shape, hyper), tree, problem.X)


def test_a_tree_whose_dropped_tests_send_every_row_right_loads():
    problem, shape, hyper = setup(SMALL, "depth-2")
    for tree in (_tree({3: {"subset": [0]}, 6: {"label": 0}, 7: {"label": 1}}, [(3, 6, True), (3, 7, False)]),
                 _tree({7: {"label": 1}}, []), _tree(FOUR, FOUR_ARCS)):
        loaded(problem, shape, hyper, tree)


def test_bins_neither_prefix_nor_suffix_and_a_wrong_shape_are_value_errors():
    frame = pd.DataFrame({"size": [1, 2, 3, 4] * 3, "y": [POS, "good", "good", POS] * 3})
    problem, shape, hyper = setup(frame, "depth-2")
    middle = {k: [1, 2] for k in (1, 2, 3)}
    children = {(k, s): 2 * k + (s == "right") for k in (1, 2, 3) for s in ("left", "right")}
    tree = categorical.tree_of(middle, 1, children, {5, 7})
    with pytest.raises(ValueError, match="neither a prefix nor a suffix"):
        categorical.warm_start(instance_of(problem, shape, hyper), tree, problem.X)
    with pytest.raises(ValueError, match="shape"):
        categorical.warm_start(instance_of(problem, shape, hyper), tree, problem.X[:, :2])


def test_a_model_that_allows_no_test_still_gets_a_tree():
    """Proper subsets of one-value groups: no test is allowed (the MILP is infeasible); the
    start sends every row right, to the last positive leaf, rather than failing."""
    frame = pd.DataFrame({"a": ["x"] * 6, "b": ["z"] * 6, "y": [POS, "good"] * 3})
    problem, shape, hyper = setup(frame, "depth-3", proper_subsets="on")
    tree = categorical_start(problem, shape, hyper, 0)
    assert list(tree.nodes(data=True)) == [(15, {"label": 1})]
