"""odtk's normalised solver options and what a solve returns, with the test of a claimed optimum."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from odtk.exceptions import ConfigError, SolveError
from odtk.solvers.standard_form import ModelSize

if TYPE_CHECKING:
    from odtk.solvers.registry import SolverSpec

OPTION_NAMES = ("time_limit", "mip_gap", "threads", "seed", "log")
MAX_SECONDS = 1e7        # a time limit beyond 115 days is a typo (no limit: leave it out)
MAX_THREADS = 1024
MAX_SEED = 2**31 - 1     # the solvers' seeds are 32-bit signed integers
# a solve's end: proven optimal; stopped within the gap asked for, at the time limit, at the memory limit (the CP
# search) or at a node limit of the solver's settings (each returning the best model found, not proven); proven
# infeasible; stopped by a signal; or an error of the solver (the best model odtk holds returned, not proven)
TERMINATIONS = ("optimal", "gap_limit", "time_limit", "node_limit", "memory_limit", "infeasible", "interrupted",
                "error")
# a claimed optimum stands when its bound is within this of its objective (times max(1, |objective|)),
# beyond the requested relative gap: the solvers' absolute gap tolerances (HiGHS, CPLEX: 1e-6)
OPTIMALITY_TOLERANCE = 1e-6


@dataclass(frozen=True)
class SolverOptions:
    """odtk's normalised solver options (``None`` = solver default)."""

    time_limit: float | None = None
    mip_gap: float | None = None
    threads: int | None = None
    seed: int | None = None
    log: bool = False
    # the solve's Budget (odtk.budget): backends poll it to stop on a signal and report progress
    budget: Any = field(default=None, compare=False, repr=False)
    # native parameters of the solver for this model (its registry entry's settings), set first
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("time_limit", "mip_gap"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value >= 0
                                          and math.isfinite(value)):
                raise ConfigError(f"{name} must be a non-negative number, got {value!r}.")
        if self.time_limit is not None and self.time_limit > MAX_SECONDS:
            raise ConfigError(f"time_limit (--time-limit) must be at most {MAX_SECONDS:g} s, got {self.time_limit!r}; "
                              "use --time-limit none (time_limit=None) for no limit.")
        if self.mip_gap is not None and self.mip_gap >= 1:
            raise ConfigError(f"mip_gap (--gap) is a relative gap below 1, e.g. 0.01 for 1 %; got {self.mip_gap!r}.")
        for name, highest in (("threads", MAX_THREADS), ("seed", MAX_SEED)):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or not 0 <= value <= highest):
                raise ConfigError(f"{name} (--{name}) must be a whole number from 0 to {highest}, got {value!r}.")

    def less(self, seconds: float) -> SolverOptions:
        """These options with ``seconds`` taken off the time limit (never below 0)."""
        if self.time_limit is None:
            return self
        return replace(self, time_limit=max(self.time_limit - seconds, 0.0))

    def native(self, spec: SolverSpec, fit: Callable[[str, Any], Any] | None = None) -> dict[str, Any]:
        """The options that are set, under the solver's native names, after the model's
        ``settings`` (which they override); ``fit(option, value)`` gives a value in the form the
        solver takes. The log switch is 0 or 1. Without ``mip_gap`` the solver is asked for a zero
        relative gap: odtk calls a result optimal only when its bound meets its objective
        (:func:`verified_termination`)."""
        values = {name: getattr(self, name) for name in OPTION_NAMES}
        values.update(mip_gap=self.mip_gap or 0.0, log=int(self.log))
        out = {spec.options[name]: value if fit is None else fit(name, value)
               for name, value in values.items() if value is not None and name in spec.options}
        return {**self.settings, **out}


@dataclass(frozen=True)
class SolverOutcome:
    """What came back from one solve, before decoding."""

    termination: str
    has_solution: bool
    objective: float | None
    bound: float | None
    handoff_time: float
    solve_time: float
    size: ModelSize
    version: str
    message: str = ""
    native: dict[str, Any] = field(default_factory=dict)
    nodes: int | None = None  # branch-and-bound nodes, where the solver reports them


def verified_termination(solver: str, termination: str, objective: float | None, bound: float | None,
                         options: SolverOptions, seconds: float) -> str:
    """The status to report for a solve the solver ended with ``termination``.

    A claimed optimum stands only when ``bound`` meets ``objective`` within
    :data:`OPTIMALITY_TOLERANCE`; within the requested gap (``options.mip_gap``, relative) it is
    ``gap_limit`` (stopped at the gap asked for, not proven optimal); otherwise it is a
    ``time_limit`` result when the time limit was spent, and an error naming the disagreement
    when it was not.
    """
    if termination != "optimal" or objective is None:
        return termination
    scale = max(1.0, abs(objective))
    proven = OPTIMALITY_TOLERANCE * scale
    allowed = (options.mip_gap or 0.0) * max(abs(objective), abs(bound or 0.0)) + proven
    if bound is not None and math.isfinite(bound) and abs(bound - objective) <= allowed:
        return termination if abs(bound - objective) <= proven else "gap_limit"
    if options.time_limit is not None and seconds >= options.time_limit:
        return "time_limit"
    gap = "no bound" if bound is None or not math.isfinite(bound) else (
        f"a bound of {bound:.10g}, {abs(bound - objective):.3g} away (over the tolerance of {allowed:.3g})")
    raise SolveError(f"{solver} reported an optimal solution of objective {objective:.10g} with {gap}: "
                     f"the result is not proven optimal; try another solver, or pass --log to see "
                     f"{solver}'s own report.")

