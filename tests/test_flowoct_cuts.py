"""FlowOCT's cuts (4) and (4′): validity, exact separation, optima and root bounds."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.visitor import identify_variables

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import ConfigError
from odtk.formulations import flowoct
from odtk.skeletons import tree_skeleton
from odtk.solvers import solve_instance, to_standard_form
from odtk.solvers.root_cuts import root_cut_loop
from odtk.solvers.standard_form import lazy_rows

from brute_force import best_objective


def _random_data(seed: int, rows: int, features: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (rows, features)), rng.integers(0, classes, rows)


def _instance(X: np.ndarray, y: np.ndarray, classes: int, depth: int, lam: float = 0.0):
    return flowoct.build_model().create_instance(
        flowoct.make_data(X, y, tree_skeleton(depth), classes, lam=lam))


def _trees(node: int, depth: int, features: int, classes: int) -> list[nx.DiGraph]:
    """Every tree of depth ≤ ``depth`` rooted at heap node ``node`` (decode's convention)."""
    found = []
    for label in range(classes):
        leaf = nx.DiGraph()
        leaf.add_node(node, label=label)
        found.append(leaf)
    if depth == 0:
        return found
    below = [_trees(c, depth - 1, features, classes) for c in (flowoct.left(node), flowoct.right(node))]
    for f, left, right in itertools.product(range(features), *below):
        tree = nx.union(left, right)
        tree.add_node(node, feature=f)
        tree.add_edge(node, flowoct.left(node), outcome=False)
        tree.add_edge(node, flowoct.right(node), outcome=True)
        found.append(tree)
    return found


def _cut_sides(instance):
    """(n, child, f, samples allowed in H) for every cut family (4) (left) and (4′) (right)."""
    leaves = set(instance.L)
    for n in instance.B:
        if flowoct.left(n) in leaves and flowoct.right(n) in leaves:
            for f in instance.F:
                ones = [i for i in instance.I if f in instance.F1[i]]
                zeros = [i for i in instance.I if f not in instance.F1[i]]
                yield n, flowoct.left(n), f, ones
                yield n, flowoct.right(n), f, zeros


def _largest_lhs(instance, child: int, allowed: list, positive_only: bool = False,
                 at_least: int = 1) -> float:
    """max over H ⊆ allowed (classes pairwise different, |H| ≥ ``at_least``) of Σ_{i∈H} z[i, child],
    by enumerating every H; -inf when there is no such H."""
    flow = {i: pyo.value(instance.z[i, child]) for i in allowed}
    members = [i for i in allowed if flow[i] > 0 or not positive_only]
    by_class: dict = {}
    for i in members:
        by_class.setdefault(pyo.value(instance.y[i]), []).append(i)
    best = -np.inf
    for choice in itertools.product(*[[None, *rows] for rows in by_class.values()]):
        H = [i for i in choice if i is not None]
        if len(H) >= at_least:
            best = max(best, sum(flow[i] for i in H))
    return best


@pytest.mark.parametrize("seed,depth,rows,features", [(0, 1, 7, 3), (1, 1, 6, 2), (2, 2, 6, 2)])
def test_every_cut_holds_at_every_integral_tree(seed, depth, rows, features):
    X, y = _random_data(seed, rows, features, 3)
    instance = _instance(X, y, 3, depth)
    trees = _trees(1, depth, features, 3)
    assert len(trees) == (3 + features * 9 if depth == 1 else 3 + features * (3 + features * 9) ** 2)
    for tree in trees:
        flowoct.warm_start(instance, tree, X)
        for n, child, f, allowed in _cut_sides(instance):
            assert _largest_lhs(instance, child, allowed) <= 1 - pyo.value(instance.b[n, f]) + 1e-9
        assert flowoct.separate_cuts(instance) == []


def _cut_key(cut) -> tuple[int, int, int]:
    """(n, child, f) of a cut Σ z[i, child] + b[n, f] <= 1."""
    variables = list(identify_variables(cut.args[0]))
    (n, f), = [v.index() for v in variables if v.parent_component().name == "b"]
    children = {v.index()[1] for v in variables if v.parent_component().name == "z"}
    assert len(children) == 1 and len(variables) >= 3  # one child, |H| >= 2
    return n, children.pop(), f


@pytest.mark.parametrize("seed", range(6))
def test_separation_finds_the_most_violated_cut_of_every_node_and_feature(seed):
    X, y = _random_data(seed, 9, 3, 3)
    instance = _instance(X, y, 3, 2)
    rng = np.random.default_rng(100 + seed)
    for var in instance.z.values():
        var.set_value(float(rng.uniform(0, 1)) if rng.random() < 0.7 else 0.0)
    for var in instance.b.values():
        var.set_value(float(rng.uniform(0, 0.6)))
    found = {_cut_key(cut): pyo.value(cut.args[0]) - 1 for cut in flowoct.separate_cuts(instance)}
    expected = {}
    for n, child, f, allowed in _cut_sides(instance):
        violation = _largest_lhs(instance, child, allowed, positive_only=True, at_least=2) \
            + pyo.value(instance.b[n, f]) - 1
        if violation > 1e-6:
            expected[n, child, f] = violation
    assert expected  # the random values violate some cuts
    assert found.keys() == expected.keys()
    for key, violation in expected.items():
        assert found[key] == pytest.approx(violation, abs=1e-12)


def _monk_slice(rows: int = 24, features: int = 5):
    ds = load_dataset("flowoct/monk1")
    X = ds.features.iloc[:rows, :features].to_numpy().astype(int)
    labels, y = np.unique(ds.target.iloc[:rows].to_numpy(), return_inverse=True)
    return X, y, len(labels)


def test_optimum_is_the_same_with_cuts_on_and_off(solver):
    X, y, n_classes = _monk_slice()
    expected = best_objective(X, y, n_classes, 2, 0.05)
    for cuts in ("off", "on"):
        result = odtk.solve("flowoct", (X, y), depth=2, lam=0.05, solver=solver, cuts=cuts)
        assert result.termination == "optimal"
        assert result.objective == pytest.approx(expected, abs=1e-6)
        assert result.hyperparameters["cuts"] == cuts
        assert ("user_cuts" in result.steps["milp"]) == (cuts == "on")


def test_pyomo_handoff_runs_the_root_loop_and_leaves_the_instance_as_it_was():
    X, y = _random_data(7, 36, 5, 3)
    n_classes = 3
    instance = _instance(X, y, n_classes, 2)
    separated = []

    def separate() -> list:
        separated.append(flowoct.separate_cuts(instance))
        return separated[-1]

    before = len(list(instance.component_objects(pyo.Constraint)))
    outcome = solve_instance(instance, "highs", handoff="pyomo", user_cuts=separate)
    assert outcome.objective == pytest.approx(best_objective(X, y, n_classes, 2, 0.0), abs=1e-6)
    assert sum(map(len, separated)) > 0 and outcome.size.constraints > to_standard_form(instance).size.constraints
    assert len(list(instance.component_objects(pyo.Constraint))) == before


def test_root_cut_loop_never_raises_the_lp_bound():
    X, y = _random_data(7, 60, 6, 3)
    instance = _instance(X, y, 3, 2)
    optimum = best_objective(X, y, 3, 2, 0.0)
    form = to_standard_form(instance)
    rows_before = form.A.shape[0]
    form.user_cuts = lazy_rows(form, lambda: flowoct.separate_cuts(instance))
    report = root_cut_loop(form)
    assert report.cuts > 0 and form.A.shape[0] == rows_before + report.cuts
    assert report.bounds[0] == pytest.approx(_lp_bound(_instance(X, y, 3, 2)), abs=1e-6)
    assert all(later <= earlier + 1e-7 for earlier, later in zip(report.bounds, report.bounds[1:]))
    assert report.bounds[-1] >= optimum - 1e-6  # the cuts are valid: the bound stays a bound
    assert report.bounds[-1] < report.bounds[0] - 1e-3  # and here they tighten it


def _lp_bound(instance) -> float:
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(instance)
    return solve_instance(instance, "highs").objective


def test_unknown_cuts_value_is_refused():
    X, y, _ = _monk_slice()
    with pytest.raises(ConfigError, match="cuts must be one of"):
        odtk.solve("flowoct", (X, y), depth=1, cuts="sometimes")
