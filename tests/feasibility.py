"""Check that the values loaded into a Pyomo instance form a feasible solution."""
from __future__ import annotations

import pyomo.environ as pyo


def assert_feasible(instance, integral: bool = True, tolerance: float = 1e-6) -> None:
    """Every active constraint and variable bound holds; integer variables hold whole numbers."""
    for con in instance.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        assert not con.has_lb() or body >= pyo.value(con.lower) - tolerance, con.name
        assert not con.has_ub() or body <= pyo.value(con.upper) + tolerance, con.name
    for var in instance.component_data_objects(pyo.Var):
        assert var.value is not None, var.name
        assert var.lb is None or var.value >= var.lb - tolerance, var.name
        assert var.ub is None or var.value <= var.ub + tolerance, var.name
        assert not (integral and var.is_integer()) or abs(var.value - round(var.value)) <= tolerance, var.name
