"""No optimum odtk can refute, and bounds only from what a solver states (issue 39).

3. Bounds at a time limit, on every solver and route: whatever the termination, the bound is on
   the right side of the brute-force optimum (Pyomo gave CBC's incumbent as its bound), so a
   ``time_limit`` result has a gap of 0 only when its bound is the optimum.
   test_a_bound_at_a_time_limit_is_never_beyond_the_optimum
"""
from __future__ import annotations

import numpy as np
import pytest

import odtk
from brute_force import best_value

HANDOFFS = ["native", "pyomo"]
LAM = 0.16


def optimum(X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, depth: int = 1, lam: float = LAM) -> float:
    return best_value(X, y, 2, depth, lam, sample_weight=weights)


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
