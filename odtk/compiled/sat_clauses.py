"""A clause set's 0/1 feasibility model (:mod:`odtk.formulations.sat_clauses`) compiled from arrays.

Clause c, ∨_{v∈P} v ∨ ∨_{v∈N} ¬v, is the row Σ_{v∈P} x_v − Σ_{v∈N} x_v ≥ 1 − |N| (the model's
covering row with its constants moved to the right); x_v is column v − 1. The clauses come as
integer arrays of DIMACS literals, a clause per row and no variable twice in a clause, as
:mod:`odtk.engines.sat_encoding` makes them; their literals, one after the other, are the row-wise
matrix itself, so that millions of clauses compile in about a second (Pyomo takes minutes).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from odtk.compiled.instance import ArrayInstance, Columns, VarBlock
from odtk.solvers.standard_form import StandardForm

# peak memory per literal of a query through HiGHS, this process's and the solver's (the matrix,
# its copy sent to the solver, the solver's model and presolve), at most (measured: 400–620 on
# the SAT encoding's clause sets of 0.5–1.6 M clauses); the SAT inference's memory rule reads it
# (odtk.oracles.MilpOracle.footprint)
BYTES_PER_LITERAL = 650


def compile_clauses(blocks: Sequence[np.ndarray], n_variables: int) -> ArrayInstance:
    """The feasibility model of the clauses in ``blocks`` (2-d arrays of literals, a clause per
    row) over the variables 1 … ``n_variables``; its ``x[v]`` as in the Pyomo model."""
    literals = np.concatenate([block.ravel() for block in blocks])
    widths = np.concatenate([np.full(len(block), block.shape[1]) for block in blocks])
    negated = np.concatenate([np.count_nonzero(block < 0, axis=1) for block in blocks])
    starts = np.concatenate([[0], np.cumsum(widths)])
    A = sp.csr_array((np.sign(literals).astype(float), np.abs(literals) - 1, starts), shape=(len(widths), n_variables))
    values = np.full(n_variables, np.nan)
    form = StandardForm(np.zeros(n_variables), 0.0, A, 1.0 - negated, np.full(len(widths), np.inf),
                        np.zeros(n_variables), np.ones(n_variables), np.ones(n_variables, dtype=bool), False,
                        Columns(values))
    variables = list(range(1, n_variables + 1))
    return ArrayInstance(form, {"x": VarBlock("x", 0, values, sets=(variables,))}, {None: {"V": {None: variables}}})


def true_variables(instance: ArrayInstance) -> set[int]:
    """The variables set to true in a solved compiled instance."""
    return set((np.flatnonzero(np.nan_to_num(instance.values) > 0.5) + 1).tolist())
