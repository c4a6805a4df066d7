"""Both routes to the standard form give the same model and the same optimum (issue: compiled
instances). Random instances of every formulation with a compiler, under every option that
adds or changes rows."""
from __future__ import annotations

import numpy as np
import pytest

from compiled_forms import assert_same_form, assert_same_optimum, binary_data, both_routes
from odtk.formulations import benders, flowoct
from odtk.skeletons import tree_skeleton


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("lam", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("module", [flowoct, benders], ids=["flowoct", "benders-master"])
def test_flowoct_and_benders_routes_give_the_same_form(module, depth, lam, weighted):
    X, y = binary_data(25, 4, 3, seed=depth)
    weight = np.random.default_rng(1).integers(0, 4, len(y)).astype(float) if weighted else None
    assert_same_form(*both_routes(module, X, y, tree_skeleton(depth), 3, lam=lam, sample_weight=weight))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flowoct_routes_give_the_same_optimum(seed):
    X, y = binary_data(20, 4, 2, seed)
    assert_same_optimum(*both_routes(flowoct, X, y, tree_skeleton(2), 2, lam=0.1))


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_sat_clause_routes_give_the_same_model(depth):
    """The SAT inference's clauses (1)–(10) for three rows of three classes, with an assumption as a
    unit clause: the Pyomo feasibility model and the compiled one are the same model, infeasible
    at depth 1 (two leaves) on both routes; deeper, the compiled one's solution (read by
    ``true_variables``) satisfies every clause."""
    from odtk.compiled.sat_clauses import compile_clauses, true_variables
    from odtk.engines.sat_encoding import PerfectTreeClauses
    from odtk.formulations import sat_clauses
    from odtk.solvers import solve_instance

    X, y = np.array([[0, 1, 0, 1], [1, 0, 1, 1], [1, 1, 0, 0]]), [0, 1, 2]
    encoding = PerfectTreeClauses(depth, 4, 3)
    blocks = list(encoding.one_feature_per_node())
    for i in range(len(y)):
        blocks += encoding.add_example(i, X[i], y[i])
    blocks += encoding.leaf_counter()
    blocks.append(np.array(encoding.at_most_leaves(3)).reshape(-1, 1))
    clauses = [clause for block in blocks for clause in block.tolist()]
    pyomo_instance = sat_clauses.build_model().create_instance(sat_clauses.make_data(clauses, encoding.variables))
    compiled = compile_clauses(blocks, encoding.variables)
    assert_same_form(pyomo_instance, compiled)
    if depth == 1:
        assert {solve_instance(instance, "highs").termination for instance in (pyomo_instance, compiled)} == {
            "infeasible"}
        return
    assert assert_same_optimum(pyomo_instance, compiled) == 0.0
    true = true_variables(compiled)
    assert all(any((literal > 0) == (abs(literal) in true) for literal in clause) for clause in clauses)
