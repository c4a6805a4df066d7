"""SCIP through PySCIPOpt: the standard form read by SCIP's own MPS reader, lazy constraints in
a constraint handler, user cuts in a separator, both calling odtk's callbacks from inside one
search.

PySCIPOpt adds a constraint only as a Python expression, a row at a time (3–22× the CPU of
HiGHS's ``passModel`` on the forms of ``benchmarks/build.py``, 0.1–4 M non-zeros); SCIP's own C
reader takes the form from an MPS file that HiGHS's C writer makes (17 significant digits):
5–17× ``passModel``, faster than row by row on the largest forms. Either way SCIP builds its
variables and constraints where HiGHS copies three arrays.
"""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from odtk.solvers import isolated
from odtk.solvers.highs import silenced_descriptors
from odtk.solvers.isolated import Watch
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec, parameter_error
from odtk.solvers.standard_form import LazyRow, StandardForm

BACKEND = "pyscipopt"
_VERBOSE = 4  # SCIP's default display/verblevel, used when the log is asked for
_MAX_THREADS = 64  # the largest value of parallel/maxnthreads
_TERMINATION = {"optimal": "optimal", "gaplimit": "optimal", "timelimit": "time_limit", "nodelimit": "node_limit",
                "totalnodelimit": "node_limit", "infeasible": "infeasible", "inforunbd": "infeasible",
                "userinterrupt": "interrupted"}


def version(spec: SolverSpec) -> str:
    """The version of the SCIP library PySCIPOpt embeds."""
    from pyscipopt import Model

    model = Model()
    return f"{model.getMajorVersion()}.{model.getMinorVersion()}.{model.getTechVersion()}"


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """SCIP, in a child process where the form allows it (:mod:`odtk.solvers.isolated`)."""
    if isolated.wanted(form):
        return isolated.solve(form, spec, options, __name__, "csc")
    from pyscipopt import Model

    start = time.perf_counter()
    model = Model()
    model.hideOutput(not options.log)
    columns = _read_form(model, form)
    if form.start is not None:
        _add_start(model, columns, form.start)
    if form.cutoff is not None:
        model.setObjlimit(form.cutoff)
    watch = Watch(options.budget)
    if form.lazy is not None:
        _include_lazy_rows(model, form.lazy, columns, watch)
    if form.user_cuts is not None:
        _include_user_cuts(model, form.user_cuts, columns, watch)
    _include_watch(model, form, columns, watch)
    model.setParam("misc/catchctrlc", False)  # Ctrl-C reaches the watch instead
    handoff = time.perf_counter() - start
    _set_options(model, spec, isolated.after_handoff(options, handoff))
    try:
        with watch.running():
            model.optimizeNogil()  # other threads (the progress line) run meanwhile
        return _outcome(model, form, columns, handoff)
    finally:
        model.freeProb()  # now: the callbacks hold the model in a reference cycle


def fit(option: str, value: Any) -> Any:
    """An option's value in SCIP's range: the log switch becomes SCIP's verbosity, threads are at
    most 64, a seed is taken modulo 2^31."""
    return {"log": lambda: _VERBOSE * value, "threads": lambda: min(value, _MAX_THREADS),
            "seed": lambda: value % 2**31}.get(option, lambda: value)()


def has_parameter(name: str) -> bool:
    """Whether SCIP has the parameter ``name``."""
    from pyscipopt import Model

    model = Model()
    model.hideOutput()
    try:
        model.getParam(name)
    except KeyError:
        return False
    return True


def _set_options(model, spec: SolverSpec, options: SolverOptions) -> None:
    """odtk's options under SCIP's names, each checked: a parameter SCIP does not have or a value
    it refuses is a one-line ConfigError (SCIP's own report of it, on standard error, silenced)."""
    for key, value in options.native(spec, fit).items():
        try:
            with silenced_descriptors():
                model.setParam(key, value)
        except KeyError:
            raise parameter_error(spec, key, value, "SCIP has no parameter of this name") from None
        except (ValueError, TypeError, LookupError) as exc:
            raise parameter_error(spec, key, value, f"SCIP refuses this value ({exc})") from None


def _read_form(model, form: StandardForm) -> list:
    """``form`` into ``model`` through an MPS file (HiGHS writes it, SCIP reads it); returns the
    SCIP variable of every column. SCIP orders its variables by type, so columns are found by
    their MPS names (HiGHS's ``c<j>``)."""
    from odtk.solvers.highs import write_mps

    with tempfile.TemporaryDirectory(prefix="odtk-scip-") as folder:
        path = os.path.join(folder, "model.mps")
        write_mps(form, path)
        model.readProblem(path)
    named = {var.name: var for var in model.getVars()}
    return [named.get(f"c{j}") or _missing_column(model, form, j) for j in range(len(form.c))]


def _missing_column(model, form: StandardForm, j: int):
    """Column ``j`` as a SCIP variable of its own, if the file did not define it."""
    lower, upper = (None if np.isinf(bound) else float(bound) for bound in (form.col_lower[j], form.col_upper[j]))
    return model.addVar(name=f"c{j}", vtype="I" if form.integer[j] else "C", lb=lower, ub=upper, obj=float(form.c[j]))


def _add_start(model, columns: list, start: np.ndarray) -> None:
    """The MIP start: a complete one is checked as it stands, a partial one completed by SCIP."""
    known = np.flatnonzero(~np.isnan(start))
    solution = model.createSol() if len(known) == len(start) else model.createPartialSol()
    for j in known.tolist():
        model.setSolVal(solution, columns[j], float(start[j]))
    model.addSol(solution)


def _outcome(model, form: StandardForm, columns: list, handoff: float) -> dict:
    status = model.getStatus()
    values = None
    if model.getNSols() > 0 and status != "infeasible":  # (with a cutoff, SCIP keeps worse solutions)
        best = model.getBestSol()
        values = np.array([model.getSolVal(best, var) for var in columns])
    bound = model.getDualbound()  # kept without a solution too (with a cutoff: nothing better exists)
    return dict(termination=_TERMINATION.get(status, "error"), values=values,
                bound=bound if abs(bound) < model.infinity() else None,
                handoff=handoff, message=f"SCIP status {status}",
                nodes=int(model.getNTotalNodes()) if form.integer.any() else None)


# --------------------------------------------------------------------------- callbacks
def _violated_rows(separate: Callable[[np.ndarray], list[LazyRow]], values: np.ndarray, watch: Watch,
                   model) -> list[LazyRow]:
    """``separate(values)``; an exception (which cannot cross SCIP's C callbacks) or the watch's
    stop rule stops the solve, the exception raised once SCIP returns."""
    found: list[LazyRow] = []
    if watch.call(lambda: found.extend(separate(values))):
        model.interruptSolve()
    return found


def _include_watch(model, form: StandardForm, columns: list, watch: Watch) -> None:
    """An event handler that stops SCIP when ``watch`` says so (checked at each presolve round,
    LP solved, node and solution), reports its bound, incumbent and nodes, and passes each new
    best solution to ``form.on_solution``."""
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    seen = (SCIP_EVENTTYPE.PRESOLVEROUND | SCIP_EVENTTYPE.LPSOLVED | SCIP_EVENTTYPE.NODEFOCUSED
            | SCIP_EVENTTYPE.BESTSOLFOUND)

    class Watched(Eventhdlr):
        def eventinit(self):
            self.model.catchEvent(seen, self)

        def eventexec(self, event):
            if watch.call(self._seen, event.getType()):
                self.model.interruptSolve()
            return {}

        def _seen(self, kind) -> None:
            if kind == SCIP_EVENTTYPE.BESTSOLFOUND:
                best = self.model.getBestSol()
                watch.report(force=True, incumbent=self.model.getSolObjVal(best))
                if form.on_solution is not None:
                    form.on_solution(np.array([self.model.getSolVal(best, var) for var in columns]))
            else:
                infinite = self.model.infinity()
                bound, incumbent = self.model.getDualbound(), self.model.getPrimalbound()
                watch.report(bound=bound if abs(bound) < infinite else None, nodes=self.model.getNNodes(),
                             incumbent=incumbent if abs(incumbent) < infinite else None)

    model.includeEventhdlr(Watched(), "odtk_watch", "odtk's stop rule, progress and solutions")


def _include_lazy_rows(model, lazy: Callable[[np.ndarray], list[LazyRow]], columns: list,
                       watch: Watch) -> None:
    """A constraint handler enforcing ``lazy`` after integrality (negative priorities): it sees
    integral LP and pseudo solutions and every candidate incumbent, and adds the violated rows
    as constraints of the model. It locks every variable both ways, since its rows are unknown
    before the search, and SCIP's symmetry handling (which cannot see them) is off."""
    from pyscipopt import SCIP_RESULT, Conshdlr
    from pyscipopt.scip import quicksum

    class LazyRows(Conshdlr):
        def __init__(self) -> None:
            self.pending: list[LazyRow] = []  # found checking a candidate, added at the next enforcement

        def _values(self, solution=None) -> np.ndarray:
            return np.array([self.model.getSolVal(solution, var) for var in columns])

        def _enforce(self, solution=None) -> dict:
            rows = self.pending + _violated_rows(lazy, self._values(solution), watch, self.model)
            self.pending = []
            for indices, coefficients, rhs in rows:
                self.model.addCons(quicksum(a * columns[j] for j, a in zip(indices.tolist(), coefficients.tolist()))
                                   <= rhs, removable=False)
            return {"result": SCIP_RESULT.CONSADDED if rows else SCIP_RESULT.FEASIBLE}

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            rows = _violated_rows(lazy, self._values(solution), watch, self.model)
            self.pending = self.pending + rows
            return {"result": SCIP_RESULT.INFEASIBLE if rows else SCIP_RESULT.FEASIBLE}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def consenforelax(self, solution, constraints, nusefulconss, solinfeasible):
            return self._enforce(solution)

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            both = nlockspos + nlocksneg  # an original variable passes its locks to its transformed one
            for var in columns:
                self.model.addVarLocksType(var, locktype, both, both)

    model.includeConshdlr(LazyRows(), "odtk_lazy", "odtk's lazy constraints", enfopriority=-1,
                          chckpriority=-1, needscons=False)
    model.setParam("misc/usesymmetry", 0)


def _include_user_cuts(model, user_cuts: Callable[[np.ndarray], list[LazyRow]], columns: list,
                       watch: Watch) -> None:
    """A separator passing each node's LP solution to ``user_cuts`` and adding the violated
    inequalities it returns as (global, removable) cutting planes."""
    from pyscipopt import SCIP_RESULT, Sepa

    class UserCuts(Sepa):
        def sepaexeclp(self):
            values = np.array([self.model.getSolVal(None, var) for var in columns])
            added = 0
            for indices, coefficients, rhs in _violated_rows(user_cuts, values, watch, self.model):
                row = self.model.createEmptyRowSepa(self, "odtk_cut", lhs=None, rhs=rhs, local=False)
                self.model.cacheRowExtensions(row)
                for j, a in zip(indices.tolist(), coefficients.tolist()):
                    self.model.addVarToRow(row, columns[j], a)
                self.model.flushRowExtensions(row)
                if self.model.isCutEfficacious(row):
                    self.model.addCut(row)
                    added += 1
                self.model.releaseRow(row)
            return {"result": SCIP_RESULT.SEPARATED if added else SCIP_RESULT.DIDNOTFIND}

    model.includeSepa(UserCuts(), "odtk_user_cuts", "odtk's user cuts", priority=0, freq=1)
