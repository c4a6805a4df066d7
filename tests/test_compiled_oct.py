"""OCT's compiler (:mod:`odtk.compiled.oct`) and its Pyomo model give the same standard form
and the same optimum, under every option that adds or changes rows."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.tree import DecisionTreeClassifier

from compiled_forms import assert_same_form, assert_same_optimum, both_routes
from odtk.formulations import oct
from odtk.heap_trees import sklearn_tree
from odtk.skeletons import tree_skeleton
from test_compiled import binary_data


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("lam", [0.0, 0.3])
@pytest.mark.parametrize("min_leaf", [1, 3])
@pytest.mark.parametrize("branching", ["aggregated", "disaggregated"])
@pytest.mark.parametrize("weighted", [False, True])
def test_oct_routes_give_the_same_form(depth, lam, min_leaf, branching, weighted):
    X, y = binary_data(18, 4, 3, seed=depth)
    weight = np.random.default_rng(1).integers(0, 4, len(y)).astype(float) if weighted else None
    assert_same_form(*both_routes(oct, X, y, tree_skeleton(depth), 3, lam=lam, min_leaf=min_leaf,
                                  branching=branching, sample_weight=weight))


def test_oct_without_a_leaf_minimum_has_no_row_24_12():
    X, y = binary_data(12, 3, 2, seed=5)
    pyomo_instance, compiled = both_routes(oct, X, y, tree_skeleton(2), 2, min_leaf=0)
    assert_same_form(pyomo_instance, compiled)
    with_minimum = both_routes(oct, X, y, tree_skeleton(2), 2, min_leaf=1)[1]
    assert compiled.form.A.shape[0] == with_minimum.form.A.shape[0] - len(compiled.L)


@pytest.mark.parametrize("branching", ["aggregated", "disaggregated"])
@pytest.mark.parametrize("seed", [0, 1])
def test_oct_routes_give_the_same_optimum(branching, seed):
    X, y = binary_data(20, 4, 2, seed)
    weight = np.random.default_rng(seed).random(len(y)) + 0.5 if seed else None
    assert_same_optimum(*both_routes(oct, X, y, tree_skeleton(2), 2, lam=0.1, min_leaf=2, branching=branching,
                                     sample_weight=weight))


def test_the_compiled_optimum_decodes_to_a_tree_whose_warm_start_attains_it():
    X, y = binary_data(20, 4, 2, seed=3)
    pyomo_instance, compiled = both_routes(oct, X, y, tree_skeleton(2), 2, lam=0.1)
    optimum = assert_same_optimum(pyomo_instance, compiled)
    tree = oct.decode(compiled)
    compiled.clear_values()
    oct.warm_start(compiled, tree, X)
    form, values = compiled.form, compiled.values
    activity = form.A @ values
    assert not np.isnan(values).any()
    assert np.all(activity >= form.row_lower - 1e-9) and np.all(activity <= form.row_upper + 1e-9)
    assert form.c @ values + form.offset == pytest.approx(optimum)


@pytest.mark.parametrize("branching", ["aggregated", "disaggregated"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_warm_start_loads_the_same_values_on_both_routes(branching, weighted):
    X, y = binary_data(30, 4, 3, seed=4)
    weight = np.random.default_rng(4).integers(0, 4, len(y)).astype(float) if weighted else None
    tree = sklearn_tree(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y, sample_weight=weight))
    pyomo_instance, compiled = both_routes(oct, X, y, tree_skeleton(3), 3, lam=0.2, branching=branching,
                                           sample_weight=weight)
    for instance in (pyomo_instance, compiled):
        oct.warm_start(instance, tree, X)
    expected = {var.name: var.value for var in pyomo_instance.component_data_objects(pyo.Var)}
    assert dict(zip(compiled.column_names(), compiled.values.tolist())) == expected
    form, values = compiled.form, compiled.values
    activity = form.A @ values
    assert np.all(activity >= form.row_lower - 1e-9) and np.all(activity <= form.row_upper + 1e-9)
    assert form.c @ values + form.offset == pytest.approx(pyo.value(pyomo_instance.objective))
