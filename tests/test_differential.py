"""The differential check: every exact model, on every installed solver and both hand-off
routes, against a brute force of its own (issue 39).

Each test is a *cell* (model × solver × route) and runs seeded random cases
(:mod:`differential_cases`): tiny datasets of binary features (feature groups for the
categorical model), 2–3 classes, duplicated rows, label noise, integer and float sample weights,
and each model's options (λ, ``min_leaf``, α, ``min_support``, class weight, ``max_card``, the
start). Every result is judged as :mod:`differential` says: an ``optimal`` result has the
oracle's optimum, the bound is on the right side of it whatever the termination (a tenth of
the MILP cases run a larger instance under a tiny time limit for this), the model re-scored on
the raw rows reproduces the objective, and no exception but a documented one-line error arises
where no model exists. A failure lists every disagreement of the cell with a reproducer.

``make test`` runs a few fixed cases per cell (seed 39, a few hundred solves);
``make test-fuzz`` (``--fuzz-solves N --fuzz-seed S``) runs about N, prints the seed and ends
with a table: solves per cell, optimal, agreeing, each kind of finding.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import differential
import odtk
from brute_force import all_trees, best_correct_by_splits, fewest_leaves_of_a_perfect_tree
from differential_cases import MILP_MODELS, ROUTES, SAT_MODELS, TREE_MILPS, cell_name, draw
from odtk.exceptions import LicenceLimitError, SelfCheckError
from subset_trees import best_score, random_instance


def test_the_oracle_is_every_tree_enumerated():
    """C[s] of the recursion is the best weighted count of any enumerated tree with s splits
    whose every leaf holds min_leaf rows; sizes as whole-number weights are repeated rows."""
    rng = np.random.default_rng(39)
    for _ in range(150):
        n, p, k, depth = (int(v) for v in (rng.integers(1, 10), rng.integers(1, 4), rng.integers(2, 4),
                                           rng.integers(0, 3)))
        X, y = rng.integers(0, 2, (n, p)), rng.integers(0, k, n)
        weight, min_leaf = np.round(rng.uniform(0, 3, n), 2), int(rng.integers(0, 3))
        expected = np.full(2**depth, -np.inf)
        for predicted, splits, smallest in all_trees(X, k, depth):
            if smallest >= min_leaf:
                expected[splits] = max(expected[splits], float(np.dot(predicted == y, weight)))
        assert np.allclose(best_correct_by_splits(X, y, k, depth, weight, min_leaf=min_leaf), expected)
        counts = rng.integers(0, 3, n)
        repeated = best_correct_by_splits(np.repeat(X, counts, axis=0), np.repeat(y, counts), k, depth,
                                          min_leaf=min_leaf)
        assert np.array_equal(best_correct_by_splits(X, y, k, depth, counts, counts, min_leaf), repeated)
        perfect = [s for s, correct in enumerate(best_correct_by_splits(X, y, k, depth)) if correct == n]
        assert (perfect[0] + 1 if perfect else np.inf) == fewest_leaves_of_a_perfect_tree(X, y, depth)


def test_the_subset_oracle_weighs_rows_as_repeats():
    """best_score with whole-number weights is best_score on the rows repeated."""
    for seed in range(6):
        values, positive, ordinal = random_instance(seed, 12, [3, 2], 0.5)
        counts = np.random.default_rng(seed).integers(0, 3, 12)
        topology = ("node", "last", "last")
        assert best_score(values, positive, topology, [3, 2], ordinal, C=1.5, sample_weight=counts) == best_score(
            np.repeat(values, counts, axis=0), np.repeat(positive, counts), topology, [3, 2], ordinal, C=1.5)


# Where make test's fixed cases meet a defect being fixed elsewhere: each mark goes with its fix.
KNOWN_DEFECTS = {  # cells of the solves with a generous time limit: a deterministic failure, strict
    "categorical/cbc/native": "CBC prints its 'Lower bound:' to 6 significant digits: odtk reads the rounding as a "
                              "gap and refuses a proven optimum with a SolveError",
}
CBC_PYOMO_BOUND = ("CBC through Pyomo at a time limit reports its incumbent as the bound (a false bound); not "
                   "strict: whether CBC is stopped holding an incumbent depends on the machine's speed")
KNOWN_AT_A_TIME_LIMIT = {"flowoct/cbc/pyomo": CBC_PYOMO_BOUND, "oct/cbc/pyomo": CBC_PYOMO_BOUND,
                         "binoct/cbc/pyomo": CBC_PYOMO_BOUND}


def _expect_defect(request, differential, cell: str, limited: bool = False) -> None:
    """The xfail mark of a known defect, on make test's fixed cases only."""
    known = KNOWN_AT_A_TIME_LIMIT if limited else KNOWN_DEFECTS
    if differential.seed is None and cell in known:
        request.applymarker(pytest.mark.xfail(strict=not limited, reason=known[cell]))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("model", MILP_MODELS)
def test_milp_models_reach_the_oracle(request, model, solver, route, differential):
    _expect_defect(request, differential, cell_name(model, solver, route))
    differential.run(model, solver, route)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("model", TREE_MILPS)
def test_milp_bounds_hold_at_a_time_limit(request, model, solver, route, differential):
    """Larger instances under a tiny time limit: the bound is valid, whatever the termination."""
    _expect_defect(request, differential, cell_name(model, solver, route), limited=True)
    differential.run(model, solver, route, limited=True)


def test_cp_search_reaches_the_oracle(differential):
    differential.run("cp", None, None)


@pytest.mark.parametrize("model", SAT_MODELS)
def test_sat_inference_reaches_the_oracle(model, any_solver, differential):
    differential.run(model, any_solver, None)


def test_the_judge_names_every_kind_of_finding(monkeypatch):
    """A result altered after its solve: each alteration is the finding it should be."""
    case = next(c for c in (draw("flowoct", "highs", "native", (39, k)) for k in range(20))
                if not c.limited and c.options["lam"] > 0 and c.optimum > 1)
    solved = odtk.solve(case.model, case.frame, **case.call())
    assert differential.check(case).problems == []

    def kinds(**altered) -> set[str]:
        monkeypatch.setattr(differential.odtk, "solve", lambda *_, **__: dataclasses.replace(solved, **altered))
        record = differential.check(case)
        assert (case.cell in record.reproducer) == bool(record.problems)
        return {kind for kind, _ in record.problems}

    assert kinds(objective=case.optimum - 1) == {"wrong optimum", "model"}  # and its model scores otherwise
    assert kinds(objective=case.optimum - 1, termination="time_limit") == {"model", "unproven"}
    assert kinds(bound=case.optimum - 0.5) == {"bound"}
    assert kinds(bound=None) == {"bound"}

    def raising(error: Exception) -> str:
        def solve(*_, **__):
            raise error
        monkeypatch.setattr(differential.odtk, "solve", solve)
        record = differential.check(case)
        return record.outcome + ":" + ",".join(kind for kind, _ in record.problems)

    assert raising(LicenceLimitError("over the free licence")) == "skipped:"
    assert raising(SelfCheckError("Self-check failed")) == "error:error"
    assert raising(KeyError("x")) == "error:error"
