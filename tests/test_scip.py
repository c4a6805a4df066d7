"""SCIP (PySCIPOpt): lazy rows in a constraint handler at integral points only, user cuts in a
separator, BendersOCT as one branch and cut, odtk's options as SCIP parameters, Ctrl-C and
errors raised inside its callbacks."""
from __future__ import annotations

import os
import signal

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import odtk
from odtk.decomposition import solve_with_cuts
from odtk.formulations import benders
from odtk.skeletons import tree_skeleton
from odtk.solvers import SolverOptions, StandardForm, backends, get_spec, solver_status

pytestmark = pytest.mark.skipif(not solver_status("scip").available, reason="scip not installed")

# max c·x  s.t.  a·x <= 13,  x binary (six columns): its LP optimum is fractional after SCIP's
# presolve. The lazy rows HIDDEN cut off its optimum (26, at x2 = x3 = x5 = 1).
COST, WEIGHT, CAPACITY = np.array([12.0, 11, 10, 9, 8, 7]), np.array([7.0, 6, 5, 5, 4, 3]), 13.0
HIDDEN = [(np.array(pair), np.array([1.0, 1.0]), 1.0) for pair in ([2, 3], [0, 5], [1, 4])]


def _knapsack(**kwargs) -> StandardForm:
    n = len(COST)
    return StandardForm(c=COST, offset=0.0, A=sp.csc_array(WEIGHT[None, :]), row_lower=np.array([-np.inf]),
                        row_upper=np.array([CAPACITY]), col_lower=np.zeros(n), col_upper=np.ones(n),
                        integer=np.ones(n, dtype=bool), maximize=True, columns=[None] * n, **kwargs)


def _best(cutoff: float = np.inf) -> float:
    """Brute force: the best objective meeting the capacity and the hidden rows, under ``cutoff``."""
    points = np.array(np.meshgrid(*[[0.0, 1.0]] * len(COST))).reshape(len(COST), -1).T
    fits = [x for x in points if WEIGHT @ x <= CAPACITY and not _hidden_rows_violated(x)]
    return max(COST @ x for x in fits if COST @ x <= cutoff)


def _hidden_rows_violated(values: np.ndarray) -> list:
    return [row for row in HIDDEN if row[1] @ values[row[0]] > row[2] + 1e-9]


def _solve(form: StandardForm, options: SolverOptions | None = None) -> dict:
    return backends()["pyscipopt"].solve(form, get_spec("scip"), options or SolverOptions())


def test_lazy_rows_are_asked_for_at_integral_points_only():
    seen = []

    def lazy(values: np.ndarray) -> list:
        seen.append(values.copy())
        return _hidden_rows_violated(values)

    raw = _solve(_knapsack(lazy=lazy))
    assert _best() < 26.0 and raw["termination"] == "optimal" and raw["bound"] == pytest.approx(_best())
    assert COST @ raw["values"] == pytest.approx(_best())
    assert not _hidden_rows_violated(raw["values"])
    assert seen and all(np.allclose(v, np.round(v)) for v in seen)


def test_user_cuts_are_asked_for_at_fractional_points_and_tighten_the_relaxation():
    seen = []

    def user_cuts(values: np.ndarray) -> list:
        seen.append(values.copy())
        return _hidden_rows_violated(values)  # valid here: the lazy rows hold at every solution

    raw = _solve(_knapsack(lazy=_hidden_rows_violated, user_cuts=user_cuts))
    assert raw["termination"] == "optimal" and raw["bound"] == pytest.approx(_best())
    assert any(not np.allclose(v, np.round(v)) for v in seen)


def test_an_error_inside_a_callback_is_raised_after_the_solve():
    def broken(values: np.ndarray) -> list:
        raise ValueError("separation failed")

    with pytest.raises(ValueError, match="separation failed"):
        _solve(_knapsack(lazy=broken))


def test_ctrl_c_inside_the_solve_stops_scip_as_interrupted():
    def interrupt(values: np.ndarray) -> list:
        os.kill(os.getpid(), signal.SIGINT)  # SCIP's own handler catches it during the solve
        return _hidden_rows_violated(values)

    assert _solve(_knapsack(lazy=interrupt))["termination"] == "interrupted"


def test_cutoff_and_partial_warm_start():
    assert _solve(_knapsack(cutoff=26.5))["termination"] == "infeasible"  # nothing beats 26.5
    start = np.array([1.0, np.nan, 0.0, np.nan, 1.0, np.nan])
    raw = _solve(_knapsack(start=start))
    assert raw["termination"] == "optimal" and raw["bound"] == pytest.approx(26.0)


def test_options_reach_scips_parameters(monkeypatch):
    import pyscipopt

    made = []

    class Recorded(pyscipopt.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(pyscipopt, "Model", Recorded)
    options = SolverOptions(time_limit=7, mip_gap=0.25, threads=100, seed=2**31 - 1)
    _solve(_knapsack(), options)
    model = made[-1]
    assert model.getParam("limits/time") == 7 and model.getParam("limits/gap") == 0.25
    assert model.getParam("parallel/maxnthreads") == 64  # SCIP's largest
    assert model.getParam("randomization/randomseedshift") == 2**31 - 1  # odtk's largest seed
    assert model.getParam("display/verblevel") == 0
    _solve(_knapsack(), SolverOptions(log=True))
    assert made[-1].getParam("display/verblevel") == 4


def test_bendersoct_is_one_branch_and_cut_reaching_flowocts_optimum(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (30, 5))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(30) < 0.2).astype(int)
    data = benders.make_data(X, y, tree_skeleton(2), 2, lam=0.02)
    calls = {"fractional": 0}
    real = benders.separate_fractional

    def counted(instance, *args):
        calls["fractional"] += 1
        return real(instance, *args)

    monkeypatch.setattr(benders, "separate_fractional", counted)
    instance = benders.build_model().create_instance(data)
    outcome, report = solve_with_cuts(instance, benders, "scip", SolverOptions(time_limit=120))
    frame = pd.DataFrame(X).assign(y=y)
    reference = odtk.solve("flowoct", frame, target="y", depth=2, lam=0.02, solver="scip")
    assert outcome.termination == "optimal" and outcome.objective == pytest.approx(reference.objective, abs=1e-6)
    assert report.scheme == "lazy" and report.rounds == 1 and report.cuts == len(instance.cuts) > 0
    assert calls["fractional"] > 0  # cuts separated at fractional node relaxations too
    assert not benders.separate(instance)
