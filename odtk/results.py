"""The one result object every odtk method returns."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from odtk.models import TrainedModel
    from odtk.solvers import ModelSize


@dataclass(frozen=True)
class SolveResult:
    """Outcome of one solve, with the verified decoded model.

    ``termination`` is ``optimal`` (proven); ``gap_limit``, ``time_limit``, ``node_limit`` (a node
    limit set in the solver's registry settings) or ``memory_limit`` (the CP search): stopped there
    with the best model found, not proven; ``infeasible``; ``interrupted`` (a signal); ``error``
    (the solver failed, or claimed a proof that a model odtk holds refutes: the best model known,
    not proven); or ``heuristic`` (a heuristic model, nothing proven). ``objective`` is the
    incumbent's value in the formulation's own terms (re-computed from the decoded model and
    checked against the solver), ``bound`` the solver's best bound (the trivial one, the ideal
    objective of every row classified right, where the solver states none or one that a model odtk
    holds beats), ``gap`` their relative difference. ``n_samples`` counts the training rows;
    ``n_distinct`` the rows the MILP saw once rows alike in encoded features, class and group were
    merged into one weighted row (None where no merging ran). Times are in seconds: ``build_time``
    (Pyomo instance), ``handoff_time`` (compiling and passing it to the solver), ``solve_time``
    (both solves when a refuted proof from the MIP start was sought again without it, see
    ``steps["milp_with_start"]``), ``wall_time`` (all of it).
    """

    method: str
    solver: str
    solver_version: str
    termination: str
    objective: float
    bound: float | None
    gap: float | None
    build_time: float
    handoff_time: float
    solve_time: float
    wall_time: float
    size: ModelSize | None
    n_samples: int
    train_accuracy: float
    options: dict[str, Any]
    hyperparameters: dict[str, Any]
    model: TrainedModel = field(repr=False)
    message: str = ""
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    objective_meaning: str = ""  # what ``objective`` counts, and its sense
    n_distinct: int | None = None

    @property
    def optimal(self) -> bool:
        return self.termination == "optimal"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the model as its file representation)."""
        data = {k: v for k, v in asdict(self).items() if k not in ("model", "size")}
        data["size"] = asdict(self.size) if self.size else None
        data["model"] = self.model.to_dict()
        return data

    def summary(self) -> str:
        """A few readable lines: status, objective, bound, gap, solver and times."""
        gap = "n/a" if self.gap is None else f"{100 * self.gap:.2f}%"
        bound = "n/a" if self.bound is None or not math.isfinite(self.bound) else f"{self.bound:.6g}"
        size = ("no MILP solved" if self.size is None else
                f"{self.size.variables} variables ({self.size.integer_variables} integer), "
                f"{self.size.constraints} constraints, {self.size.nonzeros} non-zeros")
        lines = [
            f"method      {self.method}  {self.hyperparameters}",
            f"status      {self.termination}",
            f"objective   {self.objective:.6g}   bound {bound}   gap {gap}"
            + (f"\n            = {self.objective_meaning}" if self.objective_meaning else ""),
            f"accuracy    {self.train_accuracy:.4f} on {self.n_samples} training samples",
            *([] if self.n_distinct is None else
              [f"rows        {self.n_samples} → {self.n_distinct} distinct (weighted)"]),
            f"solver      {self.solver} {self.solver_version}  options {_readable(self.options)}",
            f"model size  {size}",
            f"time        build {self.build_time:.2f}s  hand-off {self.handoff_time:.2f}s  "
            f"solve {self.solve_time:.2f}s  wall {self.wall_time:.2f}s",
        ]
        for name, step in self.steps.items():
            value = "none" if step.get("objective") is None else f"{step['objective']:.6g}"
            note: dict[bool | None, str] = {True: ", the MILP's start",
                                            False: ", breaks a side constraint: not the MILP's start"}
            cuts = f", {step['cuts']} cuts in {step['rounds']} rounds ({step['scheme']})" if "cuts" in step else ""
            lines.append(f"step        {name}: objective {value} in {step['seconds']:.2f}s"
                         f"{note.get(step.get('warm_start'), '')}{cuts}{_statistics(step)}")
        return "\n".join(lines)


def _readable(options: dict[str, Any]) -> dict[str, Any]:
    """Options as printed: a float to 4 significant digits (the time left of a time limit)."""
    return {name: float(f"{value:.4g}") if isinstance(value, float) else value
            for name, value in options.items()}


def _statistics(step: dict[str, Any]) -> str:
    """A step's counters (search nodes, rounds, B&B nodes, training rates, …) for ``summary``."""
    reported = ("termination", "seconds", "objective", "bound", "warm_start", "cuts", "rounds",
                "scheme", "starts")
    return "".join(f", {name.replace('_', ' ')} {value:.4g}" if isinstance(value, float) else
                   f", {name.replace('_', ' ')} {value}" for name, value in step.items()
                   if name not in reported and value is not None)
