"""The root cut loop: user cuts for solvers that take none inside their branch and bound.

Solve the LP relaxation of a standard form with HiGHS, ask ``form.user_cuts`` for the
inequalities its optimum violates, add them to the LP (HiGHS re-optimises from the previous
basis) and repeat until none is violated, the bound stops moving, a round cap or a deadline.
The violated rows found are then appended to the form's A, so the solver's branch and bound
starts from the strengthened relaxation. Cuts are valid for every integral solution: the
optimum is unchanged.

The loop answers the solve's budget: a stop (a signal, the deadline) ends it between two LP
solves or inside one (HiGHS's interrupt callbacks, while the main thread waits inside
``budget.waiting()``), keeping the cuts found so far; each round's LP bound, rounds and cuts go
to the budget's progress.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from odtk.solvers.highs import highs_lp, new_highs
from odtk.solvers.isolated import Watch
from odtk.solvers.standard_form import LazyRow, StandardForm, append_rows

MAX_ROUNDS = 50
STALL = 1e-6  # STALL_ROUNDS rounds moving the bound by less (relative, at least 1 absolute) end the loop
STALL_ROUNDS = 3  # the LP optimum is degenerate: a round of cuts may move the vertex and not the bound


@dataclass
class RootCutReport:
    """What the loop did: rows added, LP solves, and the LP bound after each solve."""

    cuts: int = 0
    rounds: int = 0
    bounds: list[float] = field(default_factory=list)
    seconds: float = 0.0


def root_cut_loop(form: StandardForm, max_rounds: int = MAX_ROUNDS, deadline: float | None = None,
                  budget: Any = None) -> RootCutReport:
    """Strengthen ``form`` (which has ``user_cuts``) with the cuts violated at its LP optima;
    ``deadline`` (``time.perf_counter()`` time) and ``budget`` (its stop rule) end the loop."""
    import highspy

    if form.user_cuts is None:
        raise ValueError("root_cut_loop needs a form with user_cuts")
    user_cuts = form.user_cuts
    started = time.perf_counter()
    report = RootCutReport()
    watch = Watch(budget)
    highs = new_highs()
    highs.setOptionValue("solver", "ipm")  # measured 2–3× faster than simplex on a first FlowOCT LP
    highs.passModel(highs_lp(replace(form, integer=np.zeros_like(form.integer))))
    for callbacks in (highs.cbSimplexInterrupt, highs.cbIpmInterrupt):
        callbacks.subscribe(lambda event: event.interrupt() if watch.should_stop() else None)
    added: list[LazyRow] = []
    while True:
        if deadline is not None:
            highs.setOptionValue("time_limit", max(deadline - time.perf_counter(), 0.0))
        with watch.running():
            highs.run()
        if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:  # stopped, infeasible, unbounded
            break
        report.rounds += 1
        report.bounds.append(highs.getInfo().objective_function_value + 0.0)
        watch.report(force=True, bound=report.bounds[-1], rounds=report.rounds, cuts=len(added))
        if report.rounds > max_rounds or _stalled(report.bounds, form.maximize) or watch.should_stop():
            break
        if deadline is not None and time.perf_counter() >= deadline:
            break
        rows = user_cuts(np.asarray(highs.getSolution().col_value))
        if not rows:
            break
        highs.setOptionValue("solver", "simplex")  # re-optimise from the last basis
        _add_to_highs(highs, rows)
        added.extend(rows)
    append_rows(form, added)
    report.cuts = len(added)
    report.seconds = time.perf_counter() - started
    if watch.pressed:  # Ctrl-C without a budget: the caller stops as Python code does
        raise KeyboardInterrupt
    return report


def _stalled(bounds: list[float], maximize: bool) -> bool:
    """True when the last ``STALL_ROUNDS`` rounds moved the bound by less than ``STALL``."""
    if len(bounds) <= STALL_ROUNDS:
        return False
    before = bounds[-1 - STALL_ROUNDS]
    moved = (before - bounds[-1]) if maximize else (bounds[-1] - before)
    return moved < STALL * max(1.0, abs(bounds[-1]))


def _add_to_highs(highs, rows: list[LazyRow]) -> None:
    starts = np.cumsum([0] + [len(r[0]) for r in rows[:-1]]).astype(np.int32)
    indices = np.concatenate([r[0] for r in rows]).astype(np.int32)
    values = np.concatenate([r[1] for r in rows]).astype(float)
    highs.addRows(len(rows), np.full(len(rows), -np.inf), np.array([r[2] for r in rows], dtype=float),
                  len(indices), starts, indices, values)
