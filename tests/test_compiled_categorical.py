"""The categorical model's two routes to the standard form (Pyomo's compiler and
:mod:`odtk.compiled.categorical`) give the same model and the same optimum, under every option
that adds or changes rows, and ``decode`` and ``warm_start`` read the compiled instance as they
read the Pyomo one. Instances are the DataFrames a user would pass (``random_frame``: groups of
strings and of integers), encoded as ``odtk.solve`` encodes them."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from compiled_forms import assert_same_form, assert_same_optimum, both_routes
from odtk.formulations import categorical
from odtk.pipeline.categorical_start import categorical_start
from odtk.solvers import solve_instance

from test_categorical_start import random_frame, setup

OPTIONS = {  # every switch and parameter that adds, drops or changes rows, columns or costs
    "default": {},
    **{f"configuration={name}": {"configuration": name} for name in categorical.CONFIGURATIONS},
    "anchors=w": {"anchors": "w"},
    "anchors=off": {"anchors": "off"},
    "projection=off": {"projection": "off"},
    "projection=off,weak": {"projection": "off", "inequalities": "weak", "anchors": "off"},
    "integrality=full": {"integrality": "full"},
    "numeric=categorical": {"numeric": "categorical"},
    "proper_subsets": {"proper_subsets": "on"},
    "max_card=1": {"max_card": 1},
    "max_card=2,anchors=w,weak": {"max_card": 2, "anchors": "w", "inequalities": "weak"},
    "max_card_ordinal": {"max_card": 1, "max_card_ordinal": "on"},
    "sensitivity": {"rate": "sensitivity", "min_rate": 0.8},
    "specificity,proper,projection=off": {"rate": "specificity", "min_rate": 0.7, "proper_subsets": "on",
                                          "projection": "off"},
    "feature_selection": {"feature_selection": "cart", "min_groups": 2, "selection_share": 0.7},
    "class_weight=2.5": {"class_weight": 2.5},
    "class_weight=0": {"class_weight": 0.0},
    "min_leaf=3": {"min_leaf": 3},
    "min_leaf=3,projection=off,weak": {"min_leaf": 3, "projection": "off", "inequalities": "weak", "anchors": "off"},
}
SKELETONS = ("depth-2", "depth-2.5", "imbalanced")


def routes(seed: int, skeleton: str, rows: int = 30, weighted: bool = False, n_values: tuple = (5, 4, 6),
           **options):
    """(problem, topology, options, Pyomo instance, compiled instance) of a random frame, as
    ``odtk.solve`` encodes it."""
    weight = np.random.default_rng(seed).integers(0, 4, rows).astype(float) if weighted else None
    problem, shape, hyper = setup(random_frame(seed, rows, n_values), skeleton, sample_weight=weight, **options)
    return (problem, shape, hyper,
            *both_routes(categorical, problem.X, problem.y, shape, len(problem.classes), **hyper, **problem.extra))


@pytest.mark.parametrize("skeleton", SKELETONS)
@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_routes_give_the_same_form(options, skeleton):
    *_, pyomo_instance, compiled = routes(1, skeleton, **options)
    assert_same_form(pyomo_instance, compiled)


@pytest.mark.parametrize("options", [{}, {"rate": "sensitivity", "min_rate": 0.6}, {"class_weight": 1.5}],
                         ids=["accuracy", "sensitivity", "class_weight"])
@pytest.mark.parametrize("seed", [3, 4])
def test_weighted_routes_give_the_same_form(seed, options):
    *_, pyomo_instance, compiled = routes(seed, "depth-2.5", weighted=True, **options)
    assert_same_form(pyomo_instance, compiled)


@pytest.mark.parametrize("options", [{}, {"max_card": 1, "proper_subsets": "on", "anchors": "w"}],
                         ids=["default", "max_card,proper,anchors=w"])
def test_routes_give_the_same_form_when_feature_selection_removes_groups(options):
    *_, pyomo_instance, compiled = routes(1, "depth-2.5", n_values=(5, 4, 6, 3, 2, 4), feature_selection="cart",
                                          min_groups=1, selection_share=0.5, **options)
    assert list(compiled.G_removed) == [2, 4]
    assert_same_form(pyomo_instance, compiled)


def test_depth_3_routes_give_the_same_form():
    *_, pyomo_instance, compiled = routes(7, "depth-3", rows=24, proper_subsets="on", max_card=2)
    assert_same_form(pyomo_instance, compiled)


@pytest.mark.parametrize("options", [{}, {"configuration": "nothing"}, {"max_card": 1, "anchors": "w"},
                                     {"rate": "specificity", "min_rate": 0.6}],
                         ids=["default", "nothing", "max_card", "specificity"])
def test_routes_give_the_same_optimum_and_the_compiled_tree_has_it(options):
    problem, shape, hyper, pyomo_instance, compiled = routes(3, "depth-2", rows=20, weighted=True, **options)
    optimum = assert_same_optimum(pyomo_instance, compiled)
    fresh = categorical.build_model().create_instance(
        categorical.make_data(problem.X, problem.y, shape, 2, **hyper, **problem.extra))
    categorical.warm_start(fresh, categorical.decode(compiled), problem.X)  # the decoded tree, loaded back
    assert pyo.value(fresh.objective) == pytest.approx(optimum, abs=1e-6)


@pytest.mark.parametrize("skeleton", ["depth-2.5", "imbalanced"])
@pytest.mark.parametrize("options", [{}, {"anchors": "w", "max_card": 2}, {"configuration": "nothing"},
                                     {"numeric": "categorical", "projection": "off"}],
                         ids=["default", "anchors=w,max_card", "nothing", "categorical,projection=off"])
def test_warm_start_and_decode_read_the_compiled_instance_as_the_pyomo_one(options, skeleton):
    problem, shape, hyper, pyomo_instance, compiled = routes(3, skeleton, **options)
    tree = categorical_start(problem, shape, hyper, 0)
    for instance in (pyomo_instance, compiled):
        categorical.warm_start(instance, tree, problem.X)
    value_of = dict(zip(compiled.column_names(), compiled.values))
    assert {var.name: var.value for var in pyomo_instance.component_data_objects(pyo.Var)} == value_of
    form = compiled.form
    activity = form.A @ compiled.values
    assert np.all(activity >= form.row_lower - 1e-9) and np.all(activity <= form.row_upper + 1e-9)
    assert form.c @ compiled.values + form.offset == pytest.approx(pyo.value(pyomo_instance.objective), abs=1e-9)
    assert (set(categorical.decode(compiled).edges(data="outcome"))
            == set(categorical.decode(pyomo_instance).edges(data="outcome")))


def test_a_solved_compiled_instance_decodes_to_a_tree_of_its_objective():
    problem, shape, hyper, _, compiled = routes(5, "imbalanced", rows=20)
    outcome = solve_instance(compiled, "highs")
    assert outcome.termination == "optimal"
    objective, _ = problem.score(problem.graph(categorical.decode(compiled)), shape, hyper)
    assert objective == pytest.approx(outcome.objective, abs=1e-6)
