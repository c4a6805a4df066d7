"""Build a standard form from arrays: blocks of variables, blocks of rows, a linear objective.

A compiler states a formulation as its Pyomo model does, block by block, but each block is a
few numpy operations over all its indices at once::

    form = FormBuilder(maximize=True)
    b = form.variables("b", B, F, integer=True)          # column ids, shape (|B|, |F|)
    form.rows(np.arange(len(B)).repeat(len(F)), b.ravel(), 1.0, lower=1.0, upper=1.0)
    form.objective(b.ravel(), -lam)
    instance = form.instance(data)

Rows are gathered as coordinates (row, column, coefficient) and summed into one sparse matrix
when the instance is made, so a variable twice in a row has the sum of its coefficients, as
Pyomo's compiler gives.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from odtk.compiled.instance import ArrayInstance, Columns, VarBlock
from odtk.solvers.standard_form import StandardForm

Bound = ArrayLike  # one value, or one per column or row


class FormBuilder:
    """Columns, rows and objective of a standard form, added block by block."""

    def __init__(self, maximize: bool):
        self.maximize = maximize
        self.blocks: dict[str, tuple] = {}  # name → (offset, sets, keys)
        self.n_columns = 0
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._integer: list[np.ndarray] = []
        self._row_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._row_lower: list[np.ndarray] = []
        self._row_upper: list[np.ndarray] = []
        self.n_rows = 0
        self._cost: list[tuple[np.ndarray, np.ndarray]] = []
        self.offset = 0.0

    # ------------------------------------------------------------------ columns
    def variables(self, name: str, *sets: Sequence, lower: Bound = 0.0, upper: Bound = 1.0,
                  integer: bool | np.ndarray = False) -> np.ndarray:
        """A variable indexed by the product of ``sets``: its column ids, shaped by the sets
        (a scalar variable when no set is given: a 0-d array). ``lower``, ``upper`` and
        ``integer`` are one value, or one per column (in the order of the product)."""
        shape = tuple(len(members) for members in sets)
        columns = self._add(name, int(np.prod(shape, dtype=np.int64)), lower, upper, integer,
                            (tuple(list(members) for members in sets), None))
        return columns.reshape(shape)

    def keyed_variables(self, name: str, keys: list, lower: Bound = 0.0, upper: Bound = 1.0,
                        integer: bool | np.ndarray = False) -> np.ndarray:
        """A variable indexed by the listed ``keys`` (a sparse index set): its column ids."""
        return self._add(name, len(keys), lower, upper, integer, (None, list(keys)))

    def _add(self, name: str, size: int, lower: Bound, upper: Bound, integer: bool | np.ndarray,
             index: tuple) -> np.ndarray:
        if name in self.blocks:
            raise ValueError(f"variable {name!r} is defined twice")
        offset = self.n_columns
        self.blocks[name] = (offset, *index)
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (size,)))
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (size,)))
        self._integer.append(np.broadcast_to(np.asarray(integer, dtype=bool), (size,)))
        self.n_columns += size
        return np.arange(offset, offset + size, dtype=np.int64)

    # ------------------------------------------------------------------ rows
    def rows(self, row: np.ndarray, column: np.ndarray, coefficient: Bound, lower: Bound = -np.inf,
             upper: Bound = np.inf, count: int | None = None) -> np.ndarray:
        """Add ``count`` rows ``lower <= Σ coefficient · x[column] <= upper`` given as
        coordinates: entry k is in row ``row[k]`` (0 … count-1) at ``column[k]``. ``count``
        defaults to the length of ``lower`` or ``upper`` when either is an array, else to
        ``row.max() + 1``. Returns the new rows' ids."""
        row = np.asarray(row, dtype=np.int64).ravel()
        column = np.asarray(column, dtype=np.int64).ravel()
        coefficient = np.broadcast_to(np.asarray(coefficient, dtype=float), column.shape)
        if count is None:
            sized = [np.shape(bound) for bound in (lower, upper) if np.ndim(bound)]
            count = sized[0][0] if sized else (int(row.max()) + 1 if len(row) else 0)
        if len(row) and (row.min() < 0 or row.max() >= count):
            raise ValueError("row indices must lie in 0 … count-1")
        self._row_parts.append((row + self.n_rows, column, coefficient))
        self._row_lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (count,)))
        self._row_upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (count,)))
        self.n_rows += count
        return np.arange(self.n_rows - count, self.n_rows)

    def dense_rows(self, columns: np.ndarray, coefficients: Bound, lower: Bound = -np.inf,
                   upper: Bound = np.inf) -> np.ndarray:
        """Add one row per row of the 2-d ``columns`` (rows × terms), with ``coefficients``
        broadcast to its shape; returns the new rows' ids."""
        columns = np.atleast_2d(np.asarray(columns, dtype=np.int64))
        coefficients = np.broadcast_to(np.asarray(coefficients, dtype=float), columns.shape)
        row = np.repeat(np.arange(columns.shape[0]), columns.shape[1])
        return self.rows(row, columns.ravel(), coefficients.ravel(), lower, upper, count=columns.shape[0])

    def capacity_rows(self, flow: np.ndarray, split: np.ndarray, chosen: np.ndarray, sign: float,
                      upper: float) -> np.ndarray:
        """Rows ``flow[i, p] + sign · Σ_{j: chosen[i, j]} split[p, j] <= upper`` for every sample
        i and pair p (``flow`` samples × pairs, ``split`` pairs × features, ``chosen`` samples ×
        features): a sample's flow through a branch held by the splits its values allow."""
        row_of = np.arange(flow.size).reshape(flow.shape)
        sample, feature = np.nonzero(chosen)
        split_rows = row_of[sample]  # (entries, pairs)
        split_columns = split.T[feature]  # (entries, pairs): split[p, j] for every pair p
        return self.rows(np.r_[row_of.ravel(), split_rows.ravel()], np.r_[flow.ravel(), split_columns.ravel()],
                         np.r_[np.ones(flow.size), np.full(split_rows.size, sign)], upper=upper, count=flow.size)

    # ------------------------------------------------------------------ objective
    def objective(self, column: np.ndarray, coefficient: Bound, offset: float = 0.0) -> None:
        """Add ``Σ coefficient · x[column] + offset`` to the objective."""
        column = np.asarray(column, dtype=np.int64).ravel()
        self._cost.append((column, np.broadcast_to(np.asarray(coefficient, dtype=float), column.shape)))
        self.offset += offset

    # ------------------------------------------------------------------ result
    def form(self) -> StandardForm:
        """The standard form (its columns a :class:`Columns` over a value vector of NaN)."""
        n = self.n_columns
        c = np.zeros(n)
        for column, coefficient in self._cost:
            np.add.at(c, column, coefficient)
        if self._row_parts:
            row, column, coefficient = (np.concatenate(part) for part in zip(*self._row_parts))
        else:
            row, column, coefficient = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        A = sp.csc_array((coefficient, (row, column)), shape=(self.n_rows, n))
        A.sum_duplicates()
        A.eliminate_zeros()
        self._row_parts = []  # the coordinates are the matrix now
        return StandardForm(
            c, float(self.offset), A, _joined(self._row_lower), _joined(self._row_upper), _joined(self._lower),
            _joined(self._upper), _joined(self._integer).astype(bool), self.maximize, Columns(np.full(n, np.nan)))

    def instance(self, data: dict, extra: dict | None = None) -> ArrayInstance:
        """The compiled instance: the form, its variables by name, ``data``'s sets and
        parameters and ``extra`` ones (see :class:`ArrayInstance`)."""
        form = self.form()
        values = form.columns.values
        blocks = {name: VarBlock(name, offset, values, sets=sets, keys=keys)
                  for name, (offset, sets, keys) in self.blocks.items()}
        return ArrayInstance(form, blocks, data, extra)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def positions(members: list, of: Any) -> np.ndarray:
    """The positions in ``members`` of each item of ``of``."""
    place = {member: k for k, member in enumerate(members)}
    return np.fromiter((place[item] for item in of), dtype=np.int64, count=len(of))
