"""Gurobi through gurobipy's matrix API.

Gurobi solves in this process and calls back into Python often (at each poll of its presolve,
simplex, barrier and branch and bound), always in the thread that called ``optimize``: its
callback is where the solve is watched (:class:`CallbackWatch`). The callback stops Gurobi
(``model.terminate()``) when the budget says so (a signal, its deadline) or the time limit plus
:data:`~odtk.solvers.isolated.GRACE` has passed, reports the incumbent, bound and nodes, and adds
the lazy rows and user cuts. The solution Gurobi holds at a stop is returned, as
``interrupted`` (a signal) or ``time_limit``.
"""
from __future__ import annotations

import contextlib
import importlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from odtk.solvers.isolated import GRACE, Watch
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, licence_error, parameter_error
from odtk.solvers.standard_form import StandardForm

BACKEND = "gurobipy"
NO_BOUND = 1e20  # a bound at least this large is a solver's infinity: no bound
# seconds between two looks of the callbacks at the stop rule and the progress: Gurobi calls back
# thousands of times a second, and a look at each call cost 18 % more CPU time on a MIP of 35,000
# nodes (with this spacing 4–11 %, about what an empty callback costs)
CHECK_SECONDS = 0.02


def refused_for_size(exc: Exception) -> bool:
    """True when ``exc`` is Gurobi refusing a model as too large for its licence."""
    return getattr(exc, "errno", None) == 10010


def over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    gp = importlib.import_module("gurobipy")
    with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as model:
        model.addVars(spec.limit["variables"] + 1)
        try:
            model.optimize()
        except gp.GurobiError as exc:
            return refused_for_size(exc)
    return False


class CallbackWatch:
    """What the callbacks of a solver running in this process (Gurobi, CPLEX) consult: the solve's
    :class:`~odtk.solvers.isolated.Watch` (the budget's stop rule, progress) and the time limit
    plus GRACE. Both solvers take SIGINT for themselves while they solve, even where it is
    ignored: the first callback gives it back to the handler in place before, so that every
    signal takes the budget's path (or stays ignored)."""

    def __init__(self, options: SolverOptions):
        self.watch = Watch(options.budget)
        self.limit = None if options.time_limit is None else time.monotonic() + options.time_limit + GRACE
        self.stopped: str | None = None  # "interrupted" or "time_limit" once a callback stopped the solver
        self._ctrl_c: Any = None  # SIGINT's handler before the solve, until given back
        self._next = -math.inf  # when the next look is due (:meth:`tick`)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """While the solver runs (see :meth:`Watch.running`)."""
        with self.watch.running():
            if threading.current_thread() is threading.main_thread():
                self._ctrl_c = signal.getsignal(signal.SIGINT)
            yield

    def tick(self) -> bool:
        """True when a look at the stop rule and the progress is due (the first call, then once
        every CHECK_SECONDS)."""
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + CHECK_SECONDS
        return True

    def poll(self) -> bool:
        """At each callback: SIGINT given back (the first time), and True when the solver must
        stop now (:attr:`stopped` says why)."""
        if self._ctrl_c is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._ctrl_c)
            self._ctrl_c = None
        if self.stopped is None:
            if self.watch.should_stop():
                budget = self.watch.budget
                interrupted = self.watch.pressed or self.watch.raised is not None or budget.stop_requested
                self.stopped = "interrupted" if interrupted else "time_limit"
            elif self.limit is not None and time.monotonic() >= self.limit:
                self.stopped = "time_limit"
        return self.stopped is not None

    def call(self, callback: Callable, *args: Any) -> bool:
        """``callback(*args)`` (an exception is kept and raised once the solver returns); True
        when the solver must stop now."""
        self.watch.call(callback, *args)
        return self.poll()

    def report(self, incumbent: float | None, bound: float | None, nodes: int, force: bool = False) -> None:
        """Progress to the budget, the solver's infinities left out (see :meth:`Watch.report`)."""
        self.watch.report(force=force, incumbent=bounded(incumbent), bound=bounded(bound), nodes=nodes)

    def termination(self, said: str) -> str:
        """The termination of the solve: why a callback stopped it, else what the solver ``said``
        ("interrupted" without a callback's stop is Ctrl-C, caught by the solver before its
        first callback: the budget is told)."""
        budget = self.watch.budget
        if self.stopped is None and said == "interrupted" and budget is not None and not budget.stop_requested:
            budget.request_stop(signal.SIGINT)
        return self.stopped or said


def bounded(value: float | None) -> float | None:
    """``value`` if it is a finite bound or objective (solvers give ±1e75, ±1e100 or ∞ for none)."""
    return None if value is None or not abs(value) < NO_BOUND else float(value)


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import gurobipy as gp

    start = time.perf_counter()
    with gp.Env(params={"OutputFlag": int(options.log)}) as env, gp.Model(env=env) as model:
        x = _add_model(gp, model, form)
        if form.lazy:
            model.Params.LazyConstraints = 1
        if form.user_cuts:
            model.Params.PreCrush = 1  # cuts on the original model's variables
        handoff = time.perf_counter() - start
        options = options.less(handoff)  # the hand-off counts against the limit
        _set_options(gp, model, spec, options)
        watch = CallbackWatch(options)
        try:
            with watch.running():
                model.optimize(_gurobi_callback(form, x.tolist(), watch))
        except gp.GurobiError as exc:
            if refused_for_size(exc):
                raise licence_error(spec, form.size, refused=True) from None
            raise
        return _outcome(gp, model, x, watch, handoff)


def has_parameter(name: str) -> bool:
    """Whether Gurobi has the parameter ``name``."""
    gp = importlib.import_module("gurobipy")
    with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as model:
        return model.getParamInfo(name) is not None


def _set_options(gp, model, spec: SolverSpec, options: SolverOptions) -> None:
    """odtk's options under Gurobi's names, each checked: a parameter Gurobi does not have or a
    value it refuses is a one-line ConfigError."""
    for key, value in options.native(spec).items():
        try:
            model.setParam(key, value)
        except (gp.GurobiError, TypeError, ValueError) as exc:
            raise parameter_error(spec, key, value, f"Gurobi says: {exc}") from None


def _add_model(gp, model, form: StandardForm):
    """The columns, rows, objective, start and cutoff of ``form`` in ``model``; the columns."""
    vtype = np.where(form.integer, gp.GRB.INTEGER, gp.GRB.CONTINUOUS)
    x = model.addMVar(len(form.c), lb=form.col_lower, ub=form.col_upper, obj=form.c, vtype=vtype)
    model.ObjCon = form.offset
    model.ModelSense = gp.GRB.MAXIMIZE if form.maximize else gp.GRB.MINIMIZE
    equal = form.row_lower == form.row_upper
    upper_only = np.isinf(form.row_lower)
    sense = np.where(equal, "=", np.where(upper_only, "<", ">"))
    rhs = np.where(upper_only, form.row_upper, form.row_lower)
    model.addMConstr(form.A.tocsr(), x, sense, rhs)
    if form.start is not None:
        x.Start = np.where(np.isnan(form.start), gp.GRB.UNDEFINED, form.start)
    if form.cutoff is not None:
        model.Params.Cutoff = form.cutoff
    return x


def _outcome(gp, model, x, watch: CallbackWatch, handoff: float) -> dict:
    """The solve's result: Gurobi's best solution and best bound (kept without a solution too;
    with a cutoff and nothing better, the cutoff)."""
    said = {gp.GRB.OPTIMAL: "optimal", gp.GRB.TIME_LIMIT: "time_limit", gp.GRB.NODE_LIMIT: "node_limit",
            gp.GRB.INFEASIBLE: "infeasible", gp.GRB.INTERRUPTED: "interrupted",
            gp.GRB.INF_OR_UNBD: "infeasible",
            gp.GRB.CUTOFF: "infeasible"}.get(model.Status, "error")  # nothing beats the cutoff
    values = np.asarray(x.X) if model.SolCount > 0 else None
    bound = None
    with contextlib.suppress(gp.GurobiError, AttributeError):  # no bound: the solve ended before one
        bound = model.ObjBound if model.IsMIP else (model.ObjVal if values is not None else None)
    return dict(termination=watch.termination(said), values=values, bound=bounded(bound), handoff=handoff,
                message=f"Gurobi status {model.Status}" + (f" (stopped: {watch.stopped})" if watch.stopped else ""),
                nodes=int(model.NodeCount) if model.IsMIP else None)


def _gurobi_callback(form: StandardForm, columns: list, watch: CallbackWatch) -> Callable:
    """Gurobi callback: ``form.lazy``'s violated rows at every new incumbent (MIPSOL) and
    ``form.user_cuts``'s at every node whose relaxation is solved to optimality (MIPNODE); at the
    other calls, when a look is due, the watch (stop, progress)."""
    import gurobipy as gp

    where_ = gp.GRB.Callback
    best = [None]

    def row(indices: np.ndarray, coefficients: np.ndarray, rhs: float):
        return gp.LinExpr(coefficients.tolist(), [columns[j] for j in indices]) <= rhs

    def progress(model) -> None:
        incumbent = model.cbGet(where_.MIP_OBJBST)
        watch.report(incumbent, model.cbGet(where_.MIP_OBJBND), int(model.cbGet(where_.MIP_NODCNT)),
                     force=incumbent != best[0])
        best[0] = incumbent

    def separate(model, where) -> None:
        if where == where_.MIPSOL and form.lazy is not None:
            for cut in form.lazy(np.asarray(model.cbGetSolution(columns))):
                model.cbLazy(row(*cut))
        elif form.user_cuts is not None and model.cbGet(where_.MIPNODE_STATUS) == gp.GRB.OPTIMAL:
            for cut in form.user_cuts(np.asarray(model.cbGetNodeRel(columns))):
                model.cbCut(row(*cut))

    def callback(model, where) -> None:
        if (where == where_.MIPSOL and form.lazy) or (where == where_.MIPNODE and form.user_cuts):
            stop = watch.call(separate, model, where)  # gurobipy swallows callback errors: kept
        elif watch.tick():
            stop = watch.poll()
            if not stop and where == where_.MIP:
                progress(model)
        else:
            return
        if stop:
            model.terminate()

    return callback
