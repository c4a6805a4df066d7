"""FlowOCT against exhaustive enumeration and across solvers and hand-offs."""
from __future__ import annotations

import numpy as np
import pytest

import odtk
from odtk.datasets import load_dataset
from odtk.exceptions import LicenceLimitError, SelfCheckError
from odtk.formulations import flowoct
from odtk.skeletons import tree_skeleton
from odtk.solvers import solver_status

from brute_force import best_objective

# (dataset, rows, features): small slices of bundled binary datasets
SMALL = [("flowoct/monk1", 40, 6), ("flowoct/hayes-roth", 36, 7), ("binary/zoo-1", 40, 8)]


def _slice(name: str, rows: int, features: int):
    ds = load_dataset(name)
    X = ds.features.iloc[:rows, :features].to_numpy().astype(int)
    labels, y = np.unique(ds.target.iloc[:rows].to_numpy(), return_inverse=True)
    return X, y, len(labels)


@pytest.mark.parametrize("name,rows,features", SMALL)
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("lam", [0.0, 0.1, 0.4])
def test_optimum_equals_exhaustive_enumeration(name, rows, features, depth, lam):
    X, y, n_classes = _slice(name, rows, features)
    result = odtk.solve("flowoct", (X, y), depth=depth, lam=lam, solver="highs")
    assert result.termination == "optimal"
    assert result.objective == pytest.approx(best_objective(X, y, n_classes, depth, lam), abs=1e-6)
    assert result.model.graph.depth <= depth


def test_every_solver_reaches_the_same_optimum(solver):
    X, y, n_classes = _slice("flowoct/monk1", 24, 5)
    result = odtk.solve("flowoct", (X, y), depth=2, lam=0.05, solver=solver)
    assert result.size.variables <= 1000 and result.size.constraints <= 1000  # free licences
    assert result.termination == "optimal"
    assert result.objective == pytest.approx(best_objective(X, y, n_classes, 2, 0.05), abs=1e-6)
    assert result.solver == solver


def test_pyomo_handoff_agrees_with_native(solver):
    X, y, _ = _slice("flowoct/hayes-roth", 24, 5)
    native = odtk.solve("flowoct", (X, y), depth=2, solver=solver)
    through_pyomo = odtk.solve("flowoct", (X, y), depth=2, solver=solver, handoff="pyomo")
    assert through_pyomo.objective == pytest.approx(native.objective, abs=1e-6)


def test_tree_skeleton_string_equals_depth():
    X, y, _ = _slice("flowoct/monk1", 30, 6)
    by_skeleton = odtk.solve("flowoct", (X, y), skeleton="1-2")
    assert by_skeleton.hyperparameters["depth"] == 2
    assert by_skeleton.objective == pytest.approx(odtk.solve("flowoct", (X, y), depth=2).objective)


def test_decoded_tree_reproduces_the_reported_accuracy():
    X, y, _ = _slice("flowoct/monk1", 60, 15)
    result = odtk.solve("flowoct", (X, y), depth=2, solver="highs")
    predicted = result.model.graph.predict_index(X)
    assert result.objective == pytest.approx(int((predicted == y).sum()))
    assert result.train_accuracy == pytest.approx(np.mean(predicted == y))


@pytest.mark.parametrize("limited", ["gurobi", "cplex"])
def test_instance_over_a_free_licence_gives_one_line(limited):
    status = solver_status(limited)
    if status.licence != "size-limited":
        pytest.skip(f"{limited}: {status.licence} licence ({status.detail})")
    with pytest.raises(LicenceLimitError) as error:
        odtk.solve("flowoct", "flowoct/monk1", depth=3, solver=limited)
    message = str(error.value)
    assert "\n" not in message and "licence" in message and "limit" in message


def test_self_check_catches_a_wrong_report(monkeypatch):
    X, y, _ = _slice("flowoct/monk1", 20, 4)
    real = flowoct.objective_of
    monkeypatch.setattr(flowoct, "objective_of", lambda *args, **kw: real(*args, **kw) - 1.0)
    with pytest.raises(SelfCheckError, match="Self-check failed"):
        odtk.solve("flowoct", (X, y), depth=1, solver="highs")


def test_time_limit_without_incumbent_still_answers_with_the_majority_leaf():
    with pytest.warns(odtk.exceptions.OdtkWarning, match="not proven optimal"):
        result = odtk.solve("flowoct", "binary/kr-vs-kp", depth=4, solver="highs", time_limit=0.01,
                            warm_start=None)
    assert result.termination == "time_limit" and result.model.graph.graph.number_of_nodes() == 1
    assert result.bound == result.n_samples  # nothing proven: the ideal objective


def test_model_size_follows_the_formulation():
    X, y, n_classes = _slice("flowoct/monk1", 10, 3)
    instance = flowoct.build_model().create_instance(
        flowoct.make_data(X, y, tree_skeleton(2), n_classes))
    n, branching, nodes = 10, 3, 7
    assert len(instance.b) == branching * 3
    assert len(instance.z) == len(instance.z_sink) == n * nodes
    assert len(instance.flow_conservation) == n * branching
    assert len(instance.sink_capacity) == n * nodes
    for component in instance.component_objects():
        assert component.doc, f"{component.name} has no doc"
