"""The differential check: solve a case (:mod:`differential_cases`), judge the result against
the oracle, and say what is wrong in a reproducer of a few lines of Python.

For each solve:

* a result called ``optimal`` has the oracle's optimum (within 1e-6 · max(1, |optimum|), the
  tolerance of odtk's own test of a claimed optimum);
* its bound is on the right side of the optimum, whatever the termination (above it for a
  maximised objective, below for a minimised one), and its objective not beyond it;
* the decoded model, re-scored here from its predictions on the raw rows (also after a JSON
  round trip) by the objective's documented definition, reproduces the objective, within the
  depth and the leaf sizes asked for;
* a solve with a generous time limit is proven optimal;
* the only exceptions are documented one-line odtk errors where no model exists (the oracle
  agrees) or where a tiny time limit left none; a LicenceLimitError (a free, size-limited
  Gurobi or CPLEX build) skips the solve.
"""
from __future__ import annotations

import math
import re
import time
import traceback
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field

import networkx as nx
import numpy as np
import pytest

import odtk
from differential_cases import MINIMISED, SAT_MODELS, TARGET, Case, categorical_objective, draw, tree_objective
from odtk.exceptions import LicenceLimitError, OdtkError, SolveError
from odtk.models import TrainedModel

KINDS = ("wrong optimum", "bound", "model", "unproven", "error")  # what a solve can get wrong
COLUMNS = ("solves", "optimal", "agree", *KINDS, "refused", "limited", "skipped", "seconds")


@dataclass
class Record:
    """What one solve gave and what is wrong with it (``problems``: (kind, text) pairs)."""

    cell: str
    seed: list[int]
    outcome: str  # the termination, or "refused" (a documented error), "error" or "skipped"
    optimum: float | None
    objective: float | None = None
    bound: float | None = None
    limited: bool = False
    seconds: float = 0.0
    problems: list[list[str]] = field(default_factory=list)
    reproducer: str = ""


def tolerance(value: float) -> float:
    return 1e-6 * max(1.0, abs(value))


def check(case: Case) -> Record:
    """Solve ``case`` and judge what comes back."""
    record = Record(case.cell, list(case.seed), "", case.optimum, limited=case.limited)
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the result's status and gap say the same
            result = odtk.solve(case.model, case.frame, **case.call())
    except LicenceLimitError:
        record.outcome = "skipped"
    except Exception as error:  # judged below: every other exception is a finding
        record.outcome = _judge_error(case, error, record)
    else:
        record.outcome, record.objective, record.bound = result.termination, result.objective, result.bound
        try:
            _judge_result(case, result, record)
        except Exception as error:  # the returned model cannot be read back
            record.problems.append(["model", f"re-scoring its model raised {type(error).__name__}: {error}"])
    record.seconds = time.perf_counter() - started
    if record.problems:
        record.reproducer = reproducer(case, "; ".join(text for _, text in record.problems))
    return record


def _judge_error(case: Case, error: Exception, record: Record) -> str:
    message = str(error)
    documented = isinstance(error, OdtkError) and "\n" not in message
    if documented and case.refusal and re.search(case.refusal, message):
        return "refused"
    if documented and case.limited and isinstance(error, SolveError) and "time limit" in message:
        return "refused"  # no model within a tiny time limit
    where = traceback.extract_tb(error.__traceback__)[-1]
    origin = "" if isinstance(error, OdtkError) else f" (raised at {where.filename}:{where.lineno})"
    expected = "" if case.optimum is None else f"; the oracle's optimum is {case.optimum:g}"
    record.problems.append(["error", f"{type(error).__name__}: {message}{origin}{expected}"])
    return "error"


def _judge_result(case: Case, result: odtk.SolveResult, record: Record) -> None:
    problems = record.problems
    if case.optimum is None:
        problems.append(["model", f"a {result.termination} model of objective {result.objective:g} where no "
                                  f"model exists (odtk documents the error /{case.refusal}/)"])
        return
    optimum, objective, tol = case.optimum, result.objective, tolerance(case.optimum)
    rescored, broken = rescore(case, result)
    problems += [["model", text] for text in broken]
    if not abs(rescored - objective) <= tolerance(objective):
        problems.append(["model", f"its model re-scores {rescored:.9g}, the result says {objective:.9g}"])
    minimised = case.model in MINIMISED
    if (objective < optimum - tol) if minimised else (objective > optimum + tol):
        problems.append(["model", f"objective {objective:.9g} beyond the optimum {optimum:.9g}"])
    if result.termination == "optimal" and not abs(objective - optimum) <= tol:
        problems.append(["wrong optimum", f"optimal {objective:.9g} but the oracle's optimum is {optimum:.9g}"])
    bound = result.bound
    if bound is None or not math.isfinite(bound) or ((bound > optimum + tol) if minimised else (bound < optimum - tol)):
        side = "at most" if minimised else "at least"
        problems.append(["bound", f"{result.termination}: bound {bound!r} where it must be {side} the optimum "
                                  f"{optimum:.9g}"])
    if not case.limited and result.termination != "optimal":
        problems.append(["unproven", f"{result.termination} (objective {objective:.9g}, bound {bound!r}) within "
                                     f"a {case.options['time_limit']:g} s limit, far above need"])


def rescore(case: Case, result: odtk.SolveResult) -> tuple[float, list[str]]:
    """The objective of the returned model from its predictions on the raw rows, by the
    documented definition, and what breaks the options (depth, leaf sizes, a JSON round trip)."""
    trained, features = result.model, case.features
    predicted = trained.predict(features)
    correct = predicted == case.frame[TARGET].to_numpy()
    graph: nx.DiGraph = trained.graph.graph
    broken = []
    if not np.array_equal(TrainedModel.from_dict(trained.to_dict()).predict(features), predicted):
        broken.append("its model predicts otherwise after a JSON round trip")
    depth = nx.dag_longest_path_length(graph)
    if depth > _depth_allowed(case):
        broken.append(f"its model has depth {depth}, more than {_depth_allowed(case)}")
    broken += _small_leaves(case, result)
    splits = sum(1 for node in graph if graph.out_degree(node) > 0)
    if case.model in SAT_MODELS:
        size = float(depth if case.model == "sat-depth" else graph.number_of_nodes())
        return (size if correct.all() else math.inf), broken
    if case.model == "categorical":
        return categorical_objective(case, correct), broken
    return tree_objective(case, float(case.weights[correct].sum()), splits), broken


def _depth_allowed(case: Case) -> int:
    """The depth of the case's tree skeleton, topology (categorical) or cap (SAT)."""
    return {"depth-2": 2, "depth-2.5": 3}.get(case.options.get("skeleton", ""), case.options.get("depth", 0))


def _small_leaves(case: Case, result: odtk.SolveResult) -> list[str]:
    """OCT's ``min_leaf`` rows in every leaf that holds rows; the CP search's ``min_support``
    weight and the categorical ``min_leaf`` rows in every leaf."""
    least = {"oct": "min_leaf", "cp": "min_support", "categorical": "min_leaf"}.get(case.model)
    if least is None or case.options.get(least, 1) <= 1:
        return []
    graph = result.model.graph
    reached = graph.leaves(result.model.encoder.transform(case.features))
    size = case.weights if case.model == "cp" else np.ones(len(reached))
    leaves = set(reached) if case.model == "oct" else {n for n in graph.graph if graph.graph.out_degree(n) == 0}
    held = {leaf: float(size[reached == leaf].sum()) for leaf in leaves}
    small = {leaf: value for leaf, value in held.items() if value < case.options[least]}
    return [f"leaves {small} hold less than {least}={case.options[least]}"] if small else []


def reproducer(case: Case, finding: str) -> str:
    """A few lines of Python that re-run ``case``, headed by what went wrong."""
    columns = ", ".join(f"{name!r}: {case.frame[name].tolist()!r}" for name in case.frame.columns)
    arguments = ", ".join(f"{name}={value!r}" for name, value in case.call().items())
    limited = (f"\n# (under a time limit of {case.options['time_limit']:g} s: how far the solver gets depends on the "
               "machine)") if case.limited else ""
    return "\n".join([
        f"# {case.cell}, case {case.seed}: {finding}{limited}",
        f"# (re-drawn by differential_cases.draw({case.model!r}, {case.solver!r}, {case.route!r}, {case.seed!r}))",
        "import odtk, pandas as pd",
        f"frame = pd.DataFrame({{{columns}}})",
        f"result = odtk.solve({case.model!r}, frame, {arguments})",
        f"print(result.termination, result.objective, result.bound)  # the oracle's optimum: {case.optimum!r}",
    ])


# --------------------------------------------------------------------------- the plan
DEFAULT_SEED = 39  # make test's fixed cases (issue 39)
DEFAULT_CASES = {"milp": 4, "cp": 24, "sat": 2}  # per cell: a few hundred solves in all


@dataclass
class Plan:
    """Which cases each cell runs: make test's fixed ones (``seed`` None), or about ``solves``
    from ``seed`` shared among the ``cells`` the session selected; every record goes to ``records``."""

    seed: int | None
    solves: int | None
    records: list[dict]
    cells: int = 1

    def count(self, model: str) -> int:
        if self.solves is None:
            return DEFAULT_CASES["cp" if model == "cp" else "sat" if model in SAT_MODELS else "milp"]
        return max(1, math.ceil(self.solves / self.cells))

    def run(self, model: str, solver: str | None, route: str | None, limited: bool = False) -> list[Record]:
        """Check the cell's cases with a generous time limit (or, ``limited``, those with a tiny
        one); fail with the reproducer of every finding."""
        seed = DEFAULT_SEED if self.seed is None else self.seed
        cases = [draw(model, solver, route, (seed, k)) for k in range(self.count(model))]
        chosen = [case for case in cases if case.limited == limited]
        if not chosen:
            pytest.skip(f"no case of this cell drawn with a {'tiny' if limited else 'generous'} time limit")
        records = [check(case) for case in chosen]
        self.records.extend(asdict(record) for record in records)
        findings = [record.reproducer for record in records if record.problems]
        if findings:
            pytest.fail(f"{len(findings)} of {len(records)} solves disagree with the oracle:\n\n"
                        + "\n\n".join(findings), pytrace=False)
        return records


# --------------------------------------------------------------------------- the summary
def tally(records: list[dict]) -> dict[str, Counter]:
    """Per cell, the count of each column of :data:`COLUMNS`."""
    cells: dict[str, Counter] = {}
    for record in records:
        count = cells.setdefault(record["cell"], Counter())
        kinds = {kind for kind, _ in record["problems"]}
        count["solves"] += 1
        count["optimal"] += record["outcome"] == "optimal"
        count["agree"] += record["outcome"] == "optimal" and "wrong optimum" not in kinds
        count.update(kinds)
        count[record["outcome"]] += record["outcome"] in ("refused", "skipped")
        count["limited"] += record["limited"]
        count["seconds"] += record["seconds"]
    return cells


def summary(records: list[dict], seed: int) -> list[str]:
    """The table of :func:`tally` (a line per cell, then the totals) and every reproducer."""
    cells = tally(records)
    total: Counter = sum(cells.values(), Counter())
    width = max(len("model/solver/route"), *map(len, cells))
    lines = [f"differential check, seed {seed}: {total['solves']} solves in {len(cells)} cells",
             f"{'model/solver/route':<{width}}  " + "  ".join(COLUMNS)]
    for cell, count in [*sorted(cells.items()), ("total", total)]:
        lines.append(f"{cell:<{width}}  " + "  ".join(f"{round(count[column]):>{len(column)}}" for column in COLUMNS))
    findings = [record["reproducer"] for record in records if record["problems"]]
    return lines + ([f"{len(findings)} solves with findings, each with its reproducer:", *findings] if findings else [])
