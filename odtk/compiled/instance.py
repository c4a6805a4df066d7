"""A compiled instance: the standard form built from arrays, read as a Pyomo instance is read.

A formulation's ``decode``, ``warm_start``, ``flow_rows`` and cut separation read a concrete
Pyomo instance: its sets and parameters (``instance.B``, ``instance.y[i]``), its variables'
values (``instance.b[n, f].value``, ``pyo.value(...)``) and, to state a cut, sums of its
variables (``sum(z[i] for i in H) + b[n, f] <= 1``). :class:`ArrayInstance` offers the same
reading over a :class:`~odtk.solvers.standard_form.StandardForm` compiled from arrays, with no
Pyomo component built: a variable is a view of one entry of a shared value vector
(:class:`Column`), a sum of them a :class:`Linear`, and an inequality of those the row
``(columns, coefficients, rhs)`` a solver's cut callback adds.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from odtk.solvers.standard_form import LazyRow, StandardForm


class Linear:
    """``Σ coefficient · column + constant`` over the columns of one compiled instance."""

    __slots__ = ("terms", "constant", "values")

    def __init__(self, terms: dict[int, float], constant: float, values: np.ndarray):
        self.terms, self.constant, self.values = terms, constant, values

    def _combined(self, other: Any, sign: float) -> Linear:
        terms = dict(self.terms)
        if isinstance(other, (Linear, Column)):
            other = other if isinstance(other, Linear) else other.as_linear()
            for column, coefficient in other.terms.items():
                terms[column] = terms.get(column, 0.0) + sign * coefficient
            return Linear(terms, self.constant + sign * other.constant, self.values)
        return Linear(terms, self.constant + sign * float(other), self.values)

    def __add__(self, other: Any) -> Linear:
        return self._combined(other, 1.0)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Linear:
        return self._combined(other, -1.0)

    def __rsub__(self, other: Any) -> Linear:
        return (-self)._combined(other, 1.0)

    def __mul__(self, factor: float) -> Linear:
        factor = float(factor)
        return Linear({j: factor * a for j, a in self.terms.items()}, factor * self.constant, self.values)

    __rmul__ = __mul__

    def __neg__(self) -> Linear:
        return self * -1.0

    def __le__(self, other: Any) -> LazyRow:
        """The row ``self - other <= 0`` as (columns, coefficients, rhs)."""
        difference = self - other
        columns = np.fromiter(difference.terms.keys(), dtype=np.int64, count=len(difference.terms))
        coefficients = np.fromiter(difference.terms.values(), dtype=float, count=len(difference.terms))
        return columns, coefficients, -difference.constant

    def __ge__(self, other: Any) -> LazyRow:
        return (-self) <= (-1.0 * other if not isinstance(other, (Linear, Column)) else -other)

    # read by pyo.value, as a Pyomo expression is
    def is_numeric_type(self) -> bool:
        return True

    def __call__(self, exception: bool = True) -> float | None:
        values = self.values[list(self.terms)]
        if np.isnan(values).any():
            return None
        return float(np.dot(values, list(self.terms.values())) + self.constant)


class Column:
    """One variable of a compiled instance: its entry ``index`` of the shared ``values``."""

    __slots__ = ("values", "column", "key", "block")

    def __init__(self, values: np.ndarray, column: int, key: Any, block: VarBlock | None):
        self.values, self.column, self.key, self.block = values, int(column), key, block

    @property
    def value(self) -> float | None:
        value = self.values[self.column]
        return None if np.isnan(value) else float(value)

    @value.setter
    def value(self, value: float | None) -> None:
        self.set_value(value)

    def set_value(self, value: float | None, skip_validation: bool = False) -> None:
        self.values[self.column] = np.nan if value is None else value

    def index(self) -> Any:
        return self.key

    @property
    def name(self) -> str:
        if self.block is None:
            return str(self.key)
        key = self.key if isinstance(self.key, tuple) else (self.key,)
        return f"{self.block.name}[{','.join(map(str, key))}]"

    def as_linear(self) -> Linear:
        return Linear({self.column: 1.0}, 0.0, self.values)

    def __add__(self, other: Any) -> Linear:
        return self.as_linear() + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Linear:
        return self.as_linear() - other

    def __rsub__(self, other: Any) -> Linear:
        return other - self.as_linear()

    def __mul__(self, factor: float) -> Linear:
        return self.as_linear() * factor

    __rmul__ = __mul__

    def __neg__(self) -> Linear:
        return -self.as_linear()

    def __le__(self, other: Any) -> LazyRow:
        return self.as_linear() <= other

    def __ge__(self, other: Any) -> LazyRow:
        return self.as_linear() >= other

    def is_numeric_type(self) -> bool:
        return True

    def __call__(self, exception: bool = True) -> float | None:
        return self.value


class VarBlock:
    """An indexed variable over the product of ``sets`` (or over the listed ``keys``): its
    columns are ``offset, offset + 1, …`` in the order of the product (of the keys)."""

    def __init__(self, name: str, offset: int, values: np.ndarray, sets: tuple[list, ...] | None = None,
                 keys: list | None = None):
        self.name, self.offset, self._array = name, offset, values
        self.sets, self._keys = sets, [] if keys is None else keys
        if sets is not None:
            self._position = [{member: k for k, member in enumerate(members)} for members in sets]
            sizes = [len(members) for members in sets]
            self._strides = [int(np.prod(sizes[k + 1:], dtype=np.int64)) for k in range(len(sizes))]
            self.size = int(np.prod(sizes, dtype=np.int64))
        elif keys is None:
            raise ValueError(f"variable {name!r} needs sets or keys")
        else:
            self._lookup: dict | None = None
            self.size = len(keys)

    def column_of(self, key: Any) -> int:
        """The column of the variable ``key`` (a KeyError when it has none)."""
        if self.sets is not None:
            parts = key if isinstance(key, tuple) else (key,)
            if len(parts) != len(self.sets):
                raise KeyError(key)
            return self.offset + sum(self._position[k][part] * self._strides[k] for k, part in enumerate(parts))
        if self._lookup is None:
            self._lookup = {k: self.offset + n for n, k in enumerate(self._keys)}
        return self._lookup[key]

    def __getitem__(self, key: Any) -> Column:
        return Column(self._array, self.column_of(key), key, self)

    def __contains__(self, key: Any) -> bool:
        try:
            self.column_of(key)
        except KeyError:
            return False
        return True

    def keys(self) -> Iterator:
        if self.sets is None:
            return iter(self._keys)
        if len(self.sets) == 1:
            return iter(self.sets[0])
        return itertools.product(*self.sets)

    __iter__ = keys

    def __len__(self) -> int:
        return self.size

    def values(self) -> Iterator[Column]:
        return (Column(self._array, self.offset + n, key, self) for n, key in enumerate(self.keys()))

    def items(self) -> Iterator[tuple[Any, Column]]:
        return ((key, Column(self._array, self.offset + n, key, self)) for n, key in enumerate(self.keys()))

    def set_values(self, value: float) -> None:
        """Every variable of the block to ``value`` at once."""
        self._array[self.columns] = value

    @property
    def columns(self) -> slice:
        """The block's columns of the standard form."""
        return slice(self.offset, self.offset + self.size)


class OrderedSet(list):
    """A Pyomo ordered set's reading: a list with ``first``, ``last`` and a fast ``in``."""

    def first(self) -> Any:
        return self[0]

    def last(self) -> Any:
        return self[-1]

    def __contains__(self, member: Any) -> bool:
        if not hasattr(self, "_members"):
            self._members = frozenset(self)
        return member in self._members


class Columns:
    """The form's columns, as the Pyomo compiler lists its variables: ``len``, indexing and
    iteration give :class:`Column` views; ``values`` is the vector they share."""

    def __init__(self, values: np.ndarray):
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, j: int) -> Column:
        return Column(self.values, j, j, None)

    def __iter__(self) -> Iterator[Column]:
        return (Column(self.values, j, j, None) for j in range(len(self.values)))


class ArrayInstance:
    """A compiled instance: ``form`` (its ``columns`` a :class:`Columns` over ``values``), the
    variables as :class:`VarBlock` attributes, and the sets and parameters of ``make_data``'s
    data (``{None: {name: {None: value} or {index: value}}}``) with ``extra`` ones (defaults,
    derived sets) as attributes: a one-member ``{None: …}`` entry is the value itself (a list
    an :class:`OrderedSet`), an indexed entry a dict."""

    if TYPE_CHECKING:  # the sets, parameters and variables are attributes named by the model
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

    def __init__(self, form: StandardForm, blocks: dict[str, VarBlock], data: dict, extra: dict | None = None):
        self.form, self.blocks = form, blocks
        self.values = form.columns.values
        for name, entry in {**data[None], **(extra or {})}.items():
            setattr(self, name, _component(entry))
        for name, block in blocks.items():
            setattr(self, name, block[()] if block.sets == () else block)  # a scalar variable: its Column

    def component_data_objects(self, ctype: Any = None, active: bool | None = None, **_: Any) -> Iterator[Column]:
        """Every variable (as Pyomo lists a model's VarData); an instance has no other data objects."""
        import pyomo.environ as pyo

        if ctype is not pyo.Var:
            raise TypeError("A compiled instance lists its variables only (component_data_objects(pyo.Var)).")
        return itertools.chain.from_iterable(block.values() for block in self.blocks.values())

    def column_names(self) -> list[str]:
        """Every column's variable name, as Pyomo names it (``b[1,0]``), in column order."""
        names = [""] * len(self.values)
        for block in self.blocks.values():
            for column in block.values():
                names[column.column] = column.name
        return names

    def component(self, name: str) -> Any:
        return getattr(self, name, None)

    def clear_values(self) -> None:
        """Every variable without a value (NaN), as a freshly built instance."""
        self.values[:] = np.nan


def _component(entry: Any) -> Any:
    if isinstance(entry, dict) and list(entry) == [None]:
        value = entry[None]
        return OrderedSet(value) if isinstance(value, (list, tuple, range)) else value
    return entry
