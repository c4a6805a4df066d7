"""BinOCT's two routes to the standard form give the same model and the same optimum, and its
warm start and decoding read the compiled instance as they read the Pyomo one."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest

from compiled_forms import assert_same_form, assert_same_optimum, binary_data, both_routes
from odtk.formulations import binoct
from odtk.skeletons import tree_skeleton


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_binoct_routes_give_the_same_form(depth, classes, weighted):
    X, y = binary_data(25, 4, classes, seed=depth + 10 * classes)
    X[:, 0] = 1.0  # a constant feature: its left-path rows (empty group I⁰) are left out
    weight = np.random.default_rng(depth).integers(0, 4, len(y)).astype(float) if weighted else None
    assert_same_form(*both_routes(binoct, X, y, tree_skeleton(depth), classes, sample_weight=weight))


def test_binoct_routes_agree_when_a_class_has_no_samples():
    X, y = binary_data(15, 3, 2, seed=5)
    assert_same_form(*both_routes(binoct, X, y, tree_skeleton(2), 4))  # classes 2 and 3 absent


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binoct_routes_give_the_same_optimum(seed):
    X, y = binary_data(20, 4, 2 + seed % 2, seed)
    weight = np.random.default_rng(seed).random(len(y)) if seed == 2 else None
    assert_same_optimum(*both_routes(binoct, X, y, tree_skeleton(2), 2 + seed % 2, sample_weight=weight))


@pytest.mark.parametrize("weighted", [False, True])
def test_binoct_warm_start_sets_the_same_values_on_both_routes(weighted):
    """... and a feasible start, its errors e counted in sample weight."""
    X, y = binary_data(30, 4, 3, seed=7)
    weight = np.random.default_rng(3).integers(0, 4, len(y)).astype(float) if weighted else None
    graph = _stump(feature=2, labels=(0, 1))  # an early leaf: the start completes the depth-2 tree
    pyomo_instance, compiled = both_routes(binoct, X, y, tree_skeleton(2), 3, sample_weight=weight)
    for instance in (pyomo_instance, compiled):
        binoct.warm_start(instance, graph, X)
    for block in ("f", "p", "l", "e"):
        for key, var in getattr(pyomo_instance, block).items():
            assert getattr(compiled, block)[key].value == pytest.approx(pyo.value(var)), (block, key)
    assert dict(binoct.decode(compiled).nodes(data=True)) == dict(binoct.decode(pyomo_instance).nodes(data=True))
    values = compiled.values
    assert np.all(compiled.form.A @ values <= compiled.form.row_upper + 1e-9)
    assert np.all(compiled.form.A @ values >= compiled.form.row_lower - 1e-9)


def _stump(feature: int, labels: tuple[int, int]):
    graph = nx.DiGraph()
    graph.add_node(1, feature=feature)
    for child, outcome, label in ((2, False, labels[0]), (3, True, labels[1])):
        graph.add_node(child, label=label)
        graph.add_edge(1, child, outcome=outcome)
    return graph
