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
