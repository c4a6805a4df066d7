"""No optimum odtk can refute, and bounds only from what a solver states (issue 39).

1. SCIP 10.0.2, given odtk's start on OCT at depth 1 with float sample weights (CART's tree,
   which splits into two leaves of one class), proved that start optimal where the majority leaf
   scores better. The proof is refuted and sought again without the start: the brute-force
   optimum, proven.
   test_scips_false_proof_from_its_start_is_sought_again_without_it
2. The check on every solver (fake backends wrapping the real ones, as SCIP behaved): a proof
   from the start that the majority leaf refutes is sought again without the start; one that
   stays refuted returns the best model known, termination ``error``, the trivial bound and a
   warning naming the solver; on every route, a claim of infeasibility that the majority leaf
   refutes does too, and a bound that the solver's own incumbent beats is dropped.
   test_a_refuted_proof_from_the_start_is_sought_again_without_it,
   test_a_proof_that_stays_refuted_returns_the_best_model_known,
   test_a_refuted_claim_of_infeasibility_returns_the_best_model_known,
   test_a_bound_beaten_by_the_incumbent_is_dropped
3. Bounds at a time limit, on every solver and route: whatever the termination, the bound is on
   the right side of the brute-force optimum (Pyomo gave CBC's incumbent as its bound), so a
   ``time_limit`` result has a gap of 0 only when its bound is the optimum.
   test_a_bound_at_a_time_limit_is_never_beyond_the_optimum
"""
from __future__ import annotations

import numpy as np
import pytest

import odtk
import odtk.solvers as solvers
from brute_force import best_value
from odtk.exceptions import OdtkWarning
from odtk.solvers import pyomo_handoff

HANDOFFS = ["native", "pyomo"]
LAM = 0.16


def weighted_rows(seed: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 rows of 0/1 features, two classes and float weights on which SCIP 10.0.2 proved its start
    (objective 20.6598) optimal at depth 1 and λ = 0.16; the majority leaf scores 20.7776."""
    rng = np.random.default_rng(seed)
    columns = int(rng.integers(2, 7))
    X = rng.integers(0, 2, size=(40, columns))
    y = rng.integers(0, 2, size=40)
    return X, y, rng.lognormal(0, 0.7, size=40)


def optimum(X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, depth: int = 1, lam: float = LAM) -> float:
    return best_value(X, y, 2, depth, lam, sample_weight=weights)


def solve_weighted(solver: str, **options) -> odtk.SolveResult:
    X, y, w = weighted_rows()
    return odtk.solve("oct", (X, y), depth=1, lam=LAM, sample_weight=w, solver=solver, time_limit=None, **options)


def test_scips_false_proof_from_its_start_is_sought_again_without_it():
    pytest.importorskip("pyscipopt")
    X, y, w = weighted_rows()
    result = solve_weighted("scip")
    assert result.termination == "optimal"
    assert result.objective == pytest.approx(optimum(X, y, w)) and result.bound == pytest.approx(result.objective)
    # SCIP 10.0.2 proves its start optimal here: that proof is refuted and sought again without the
    # start (a SCIP without the defect needs no second solve)
    if "milp_with_start" in result.steps:
        first = result.steps["milp_with_start"]
        assert first["refuted_by"] == "majority-class leaf"
        assert first["objective"] == pytest.approx(result.steps["warm_start"]["objective"])
        assert first["objective"] < result.objective


def _the_start_claimed_optimal(monkeypatch, backend: str, also_without_it: bool = False) -> None:
    """Wrap ``backend``'s solve: given a MIP start, it returns the start as proven optimal;
    ``also_without_it``: without one it returns the start it was first given."""
    module = solvers.backends()[backend]
    real, given = module.solve, []

    def fake(form, spec, options):
        if form.start is not None:
            given.append(form.start.copy())
        elif not also_without_it:
            return real(form, spec, options)
        values = given[0]
        objective = float(form.c @ values + form.offset)
        return dict(termination="optimal", values=values, bound=objective, handoff=0.0, message="a false proof")

    monkeypatch.setattr(module, "solve", fake)


def test_a_refuted_proof_from_the_start_is_sought_again_without_it(solver, monkeypatch):
    _the_start_claimed_optimal(monkeypatch, solvers.get_spec(solver).backend)
    X, y, w = weighted_rows()
    result = solve_weighted(solver)
    assert result.termination == "optimal" and result.objective == pytest.approx(optimum(X, y, w))
    assert result.steps["milp_with_start"]["refuted_by"] == "majority-class leaf"


def test_a_proof_that_stays_refuted_returns_the_best_model_known(solver, monkeypatch):
    _the_start_claimed_optimal(monkeypatch, solvers.get_spec(solver).backend, also_without_it=True)
    X, y, w = weighted_rows()
    with pytest.warns(OdtkWarning, match=rf"{solver} claimed a bound of 20\.659.* but the majority-class leaf "
                                         rf"scores 20\.777.*proof is false.*not proven optimal"):
        result = solve_weighted(solver)
    assert result.termination == "error" and not result.optimal
    assert result.objective == pytest.approx(optimum(X, y, w))  # the majority leaf, the better model
    assert result.model.to_text().startswith("predict")
    assert result.bound == pytest.approx((1 - LAM) * w.sum()) and result.gap > 0  # the trivial bound
    assert "refuted by the majority-class leaf" in result.message


def _fake_route(monkeypatch, solver: str, handoff: str, outcome) -> None:
    """Make ``solver``'s ``handoff`` return ``outcome(real_result, form)``."""
    if handoff == "pyomo":
        real_handoff = pyomo_handoff.solve
        monkeypatch.setattr(pyomo_handoff, "solve", lambda instance, form, spec, options:
                            outcome(real_handoff(instance, form, spec, options), form))
    else:
        backend = solvers.backends()[solvers.get_spec(solver).backend]
        real_backend = backend.solve
        monkeypatch.setattr(backend, "solve", lambda form, spec, options:
                            outcome(real_backend(form, spec, options), form))


@pytest.mark.parametrize("handoff", HANDOFFS)
def test_a_refuted_claim_of_infeasibility_returns_the_best_model_known(solver, handoff, monkeypatch):
    _fake_route(monkeypatch, solver, handoff, lambda raw, form: {**raw, "termination": "infeasible", "values": None,
                                                                 "bound": None})
    X, y, w = weighted_rows()
    with pytest.warns(OdtkWarning, match=rf"{solver} claimed .* but the majority-class leaf scores .*proof is false"):
        result = solve_weighted(solver, handoff=handoff)
    assert result.termination == "error" and result.objective == pytest.approx(optimum(X, y, w))
    assert result.bound == pytest.approx((1 - LAM) * w.sum())


@pytest.mark.filterwarnings("ignore:.*feasible but not proven optimal")
@pytest.mark.parametrize("handoff", HANDOFFS)
def test_a_bound_beaten_by_the_incumbent_is_dropped(solver, handoff, monkeypatch):
    def below_the_incumbent(raw: dict, form) -> dict:
        incumbent = float(form.c @ raw["values"] + form.offset)
        return {**raw, "termination": "time_limit", "bound": incumbent - 1.0}  # OCT maximises

    _fake_route(monkeypatch, solver, handoff, below_the_incumbent)
    X, y, w = weighted_rows()
    with pytest.warns(OdtkWarning, match=rf"{solver} reported a bound of .* but the model {solver} returned scores "
                                         r".*the bound is false"):
        result = solve_weighted(solver, handoff=handoff, warm_start=None)
    assert result.termination == "time_limit" and result.objective == pytest.approx(optimum(X, y, w))
    assert result.bound == pytest.approx((1 - LAM) * w.sum())


@pytest.mark.filterwarnings("ignore:.*not proven optimal")
@pytest.mark.parametrize("model, lam", [("oct", 0.1), ("binoct", 0.0)])
@pytest.mark.parametrize("handoff", HANDOFFS)
def test_a_bound_at_a_time_limit_is_never_beyond_the_optimum(solver, handoff, model, lam):
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, size=(36, 8)), rng.integers(0, 2, size=36)
    best = optimum(X, y, depth=2, lam=lam)
    options = {"lam": lam} if model == "oct" else {}
    result = odtk.solve(model, (X, y), depth=2, solver=solver, handoff=handoff, time_limit=2, **options)
    assert result.objective <= best + 1e-6 <= result.bound + 2e-6, (result.termination, result.message)
    if result.termination == "time_limit" and result.gap == 0:
        assert result.bound == pytest.approx(best)
