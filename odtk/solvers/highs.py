"""HiGHS through highspy's matrix API."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from odtk.solvers import isolated
from odtk.solvers.isolated import Watch
from odtk.solvers.options import OPTIMALITY_TOLERANCE, SolverOptions
from odtk.solvers.registry import SolverSpec, parameter_error
from odtk.solvers.standard_form import StandardForm

BACKEND = "highspy"
KEEPS_GROWING_MODEL = True  # one HiGHS model serves every solve of a GrowingForm
log = logging.getLogger(__name__)


@dataclass(eq=False)
class GrowingForm(StandardForm):
    """A standard form whose rows only grow between solves (a cut loop, rows added by
    ``standard_form.append_rows``). HiGHS keeps one model for it (``highs``) and adds the rows
    appended since its last solve instead of building the model again; other backends read the
    whole form at each solve."""

    highs: Any = field(default=None, repr=False)

    @classmethod
    def of(cls, form: StandardForm) -> GrowingForm:
        return cls(**{f.name: getattr(form, f.name) for f in fields(StandardForm)})


def highs_lp(form: StandardForm, minimize_only: bool = False):
    """The standard form as a ``highspy.HighsLp`` (``minimize_only`` negates a maximisation)."""
    import highspy

    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(form.c), form.A.shape[0]
    flip = -1.0 if (minimize_only and form.maximize) else 1.0
    lp.col_cost_ = flip * form.c
    lp.offset_ = flip * form.offset
    lp.col_lower_, lp.col_upper_ = form.col_lower, form.col_upper
    lp.row_lower_, lp.row_upper_ = form.row_lower, form.row_upper
    A = form.A if form.A.format == "csc" else form.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    kinds = np.array([highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger], dtype=object)
    lp.integrality_ = kinds[np.asarray(form.integer, dtype=np.intp)].tolist()
    if form.maximize and not minimize_only:
        lp.sense_ = highspy.ObjSense.kMaximize
    return lp


def write_mps(form: StandardForm, path: str, minimize_only: bool = False) -> None:
    """``form`` as a free-format MPS file at ``path``, written by HiGHS (17 significant digits;
    columns ``c<j>`` in order, rows ``r<i>``), for the solvers that read files natively."""
    writer = new_highs()
    writer.passModel(highs_lp(form, minimize_only))
    writer.writeModel(path)


def new_highs(log: bool = False):
    """A ``highspy.Highs`` object; HiGHS 1.16 prints its banner on file descriptor 1 when the
    first one of a process is made, before any option can be set: silenced unless ``log``."""
    import highspy

    if log:
        return highspy.Highs()
    with silenced_descriptors():
        highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    return highs


@contextlib.contextmanager
def silenced_descriptors():
    """Point file descriptors 1 and 2 at /dev/null (C libraries write there, not to sys.stdout);
    a descriptor that is closed stays closed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.flush()
    null = os.open(os.devnull, os.O_WRONLY)  # first: it may take the number of a closed descriptor
    saved = {}
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            saved[fd] = os.dup(fd)
    try:
        for fd in saved:
            os.dup2(null, fd)
        yield
    finally:
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """HiGHS through its matrix API, in a child process where the form allows it
    (:mod:`odtk.solvers.isolated`). HiGHS 1.16 can return the MIP start itself as its optimal
    solution after improving the start's image in the presolved model (the values it returns then
    score less than the objective it reports): such a solve is run again without the start."""
    if isolated.wanted(form):
        return isolated.solve(form, spec, options, __name__, "csc")
    start = time.perf_counter()
    raw = _run_highs(form, spec, options, form.start)
    if raw.pop("start_returned"):
        log.info("HiGHS returned its MIP start instead of its optimum; solving again without the start")
        again = _run_highs(form, spec, options.less(time.perf_counter() - start), None)
        again.pop("start_returned")
        raw = {**again, "handoff": raw["handoff"] + again["handoff"]}
    return raw


def _run_highs(form: StandardForm, spec: SolverSpec, options: SolverOptions,
               mip_start: np.ndarray | None) -> dict:
    import highspy

    start = time.perf_counter()
    highs = _highs_model(form, options.log)
    if mip_start is not None:
        known = np.flatnonzero(~np.isnan(mip_start)).astype(np.int32)
        highs.setSolution(len(known), known, mip_start[known])
    else:
        highs.clearSolver()  # a kept model would start from its last solution
    if form.cutoff is not None:
        highs.setOptionValue("objective_bound", form.cutoff if not form.maximize else -form.cutoff)
    handoff = time.perf_counter() - start
    set_options(highs, spec, isolated.after_handoff(options, handoff))
    _run_watched(highs, form, Watch(options.budget))
    status = highs.getModelStatus()
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    termination = {
        highspy.HighsModelStatus.kOptimal: "optimal",
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
        highspy.HighsModelStatus.kInfeasible: "infeasible",
        highspy.HighsModelStatus.kInterrupt: "interrupted",
        highspy.HighsModelStatus.kSolutionLimit: "node_limit" if _at_node_limit(highs, info) else "error",
    }.get(status, "error")
    values = np.asarray(highs.getSolution().col_value) if has_solution else None
    bound = info.mip_dual_bound if form.integer.any() else info.objective_function_value
    scored = None if values is None else float(form.c @ values + form.offset)
    start_returned = (mip_start is not None and scored is not None and termination == "optimal"
                      and abs(scored - info.objective_function_value) > OPTIMALITY_TOLERANCE * max(1.0, abs(scored)))
    return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                message=highs.modelStatusToString(status), nodes=int(info.mip_node_count),
                start_returned=start_returned)


def _at_node_limit(highs, info) -> bool:
    """Whether the branch and bound used up ``mip_max_nodes`` (HiGHS's "solution limit" status
    stands for that limit, ``mip_max_leaves`` and ``mip_max_improving_sols`` alike)."""
    return info.mip_node_count >= highs.getOptionValue("mip_max_nodes")[1]


def fit(option: str, value: Any) -> Any:
    """An option's value as HiGHS takes it: the log switch is a boolean."""
    return bool(value) if option == "log" else value


def has_parameter(name: str) -> bool:
    """Whether HiGHS has the option ``name``."""
    import highspy

    return new_highs().getOptionType(name)[0] == highspy.HighsStatus.kOk


def set_options(highs, spec: SolverSpec, options: SolverOptions) -> None:
    """Set ``options`` under HiGHS's names on ``highs``, each checked: an option HiGHS does not
    have or a value it refuses is a one-line ConfigError."""
    import highspy

    for key, value in options.native(spec, fit).items():
        if highs.setOptionValue(key, value) == highspy.HighsStatus.kOk:
            continue
        known = highs.getOptionType(key)[0] == highspy.HighsStatus.kOk
        raise parameter_error(spec, key, value, "HiGHS refuses this value (see its option list for the type "
                              "and range)" if known else "HiGHS has no option of this name")


def _highs_model(form: StandardForm, log: bool):
    """A new HiGHS model of ``form``; for a :class:`GrowingForm`, its kept model with the rows
    appended since the last solve added."""
    highs = getattr(form, "highs", None)
    if highs is None:
        highs = new_highs(log)
        highs.passModel(highs_lp(form))
        if isinstance(form, GrowingForm):
            form.highs = highs
        return highs
    new = form.A[highs.getNumRow():].tocsr()
    if new.shape[0]:
        highs.addRows(new.shape[0], form.row_lower[-new.shape[0]:], form.row_upper[-new.shape[0]:],
                      new.nnz, new.indptr[:-1], new.indices, new.data)
    return highs


def _run_watched(highs, form: StandardForm, watch: Watch) -> None:
    """``highs.run()``, which ``watch`` stops through HiGHS's interrupt callbacks (HiGHS consults
    them in its simplex, interior point and branch and bound, not in presolve or the MIP's root
    LP), reporting the bound, incumbent and nodes, and passing each MIP solution to
    ``form.on_solution``."""
    def interrupt(event) -> None:
        if watch.should_stop():
            event.interrupt()

    def progress(event) -> None:
        out = event.data_out
        watch.report(bound=out.mip_dual_bound, incumbent=out.mip_primal_bound, nodes=out.mip_node_count)

    def improved(event) -> None:
        watch.report(force=True, incumbent=event.data_out.objective_function_value)

    def found(event) -> None:
        if form.on_solution is not None:
            form.on_solution(np.array(event.data_out.mip_solution))

    def watched(*steps: Callable) -> Callable:
        def callback(event) -> None:
            for step in steps:
                watch.call(step, event)
        return callback

    subscribed = [(highs.cbSimplexInterrupt, watched(interrupt)), (highs.cbIpmInterrupt, watched(interrupt)),
                  (highs.cbMipInterrupt, watched(progress, interrupt)),
                  (highs.cbMipImprovingSolution, watched(improved)), (highs.cbMipSolution, watched(found))]
    for callbacks, callback in subscribed:
        callbacks.subscribe(callback)
    try:
        with watch.running():
            highs.run()
    finally:
        for callbacks, callback in subscribed:  # a kept model runs again: no stale callbacks
            callbacks.unsubscribe(callback)
