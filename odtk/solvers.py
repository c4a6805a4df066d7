"""The solver registry and the one place where odtk hands models to solvers.

``solvers.yaml`` (data) says how each solver is reached; this module probes
availability, translates odtk's normalised options (``time_limit``, ``mip_gap``,
``threads``, ``seed``, ``log``) to native names, and solves a Pyomo instance.

Two hand-offs exist:

* ``"native"`` (default, fastest): Pyomo's ``LinearStandardFormCompiler`` turns
  the instance into sparse matrices that go straight into the solver's matrix
  API (highspy, gurobipy, cplex); CBC reads an MPS file written by HiGHS.
* ``"pyomo"``: the solver's own Pyomo interface (``pyomo.oneshot`` in the registry).

Both load the solution back into the instance's variables, so formulations can
decode it the same way.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.resources
import io
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from odtk.exceptions import (
    ConfigError,
    LicenceLimitError,
    SolveError,
    SolverUnavailableError,
)

log = logging.getLogger(__name__)

OPTION_NAMES = ("time_limit", "mip_gap", "threads", "seed", "log")
CAPABILITIES = ("lazy_callbacks", "warm_start", "persistent", "cutoff")
BACKENDS = ("highspy", "gurobipy", "cplex", "cbc", "pysat")
KINDS = ("milp", "sat")
HANDOFFS = ("native", "pyomo")
TERMINATIONS = ("optimal", "time_limit", "infeasible", "interrupted", "error")
# largest violation of a row, bound or integrality accepted in a solver's solution (Gurobi's
# default integrality tolerance; the other solvers' tolerances are tighter)
FEASIBILITY_TOLERANCE = 1e-5
# a claimed optimum stands when its bound is within this of its objective (times max(1, |objective|)),
# beyond the requested relative gap: the solvers' absolute gap tolerances (HiGHS, CPLEX: 1e-6)
OPTIMALITY_TOLERANCE = 1e-6
_REQUIRED_KEYS = {"description", "package", "install", "backend", "pyomo", "licence",
                  "options", "capabilities"}
_OPTIONAL_KEYS = {"size_limit", "kind", "executable"}
LICENCES = ("open", "size-limited")
PYOMO_KEYS = ("oneshot", "persistent")


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class SolverSpec:
    """One entry of ``solvers.yaml``."""

    name: str
    description: str
    package: str
    install: str
    backend: str
    pyomo: dict[str, str | None]
    licence: str
    options: dict[str, str]
    capabilities: dict[str, bool]
    size_limit: dict[str, int] | None = None
    kind: str = "milp"
    executable: str | None = None  # backend cbc: the CBC binary (default: the one cbcbox ships)


def _validate_entry(name: Any, entry: Any, source: str) -> SolverSpec:
    where = f"{source}: solver {name!r}"
    if not isinstance(name, str):
        raise ConfigError(f"{where}: a solver name must be text, got {type(name).__name__}; quote it.")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a mapping of keys, got {type(entry).__name__}.")
    missing = sorted(_REQUIRED_KEYS - entry.keys())
    unknown = sorted(map(str, entry.keys() - _REQUIRED_KEYS - _OPTIONAL_KEYS))
    if missing or unknown:
        problems = [f"missing keys {missing}"] * bool(missing) + [f"unknown keys {unknown}"] * bool(unknown)
        raise ConfigError(f"{where} has {' and '.join(problems)}; allowed: "
                          f"{sorted(_REQUIRED_KEYS | _OPTIONAL_KEYS)}.")
    if entry.get("kind", "milp") not in KINDS:
        raise ConfigError(f"{where}: kind {entry['kind']!r} is not one of {KINDS}.")
    if entry["backend"] not in BACKENDS:
        raise ConfigError(f"{where}: backend {entry['backend']!r} is not one of {BACKENDS}.")
    options = entry["options"]
    if not isinstance(options, dict) or set(options) - set(OPTION_NAMES) or not all(
        isinstance(native, str) for native in options.values()
    ):
        raise ConfigError(f"{where}: options may only name {OPTION_NAMES}, each mapped to the solver's "
                          "own parameter name.")
    caps = entry["capabilities"]
    if not isinstance(caps, dict) or set(caps) != set(CAPABILITIES) or not all(
        isinstance(v, bool) for v in caps.values()
    ):
        raise ConfigError(f"{where}: capabilities must give true/false for each of {CAPABILITIES}.")
    executable = entry.get("executable")
    if executable is not None and (entry["backend"] != "cbc" or not isinstance(executable, str)):
        raise ConfigError(f"{where}: executable (a path to a CBC binary) applies to backend cbc only.")
    limit = entry.get("size_limit")
    if limit is not None and (
        not isinstance(limit, dict) or set(limit) != {"variables", "constraints"}
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in limit.values())
    ):
        raise ConfigError(f"{where}: size_limit needs positive integers 'variables' and 'constraints'.")
    texts = [key for key in ("description", "package", "install") if not isinstance(entry[key], str)]
    if texts:
        raise ConfigError(f"{where}: {', '.join(texts)} must be text, got {entry[texts[0]]!r}.")
    if entry["licence"] not in LICENCES:
        raise ConfigError(f"{where}: licence {entry['licence']!r} is not one of {LICENCES}.")
    pyomo = entry["pyomo"]
    if not isinstance(pyomo, dict) or set(pyomo) != set(PYOMO_KEYS) or not all(
        value is None or isinstance(value, str) for value in pyomo.values()
    ):
        raise ConfigError(f"{where}: pyomo must give an interface name or null for each of {PYOMO_KEYS}.")
    return SolverSpec(name=name, **entry)


def load_registry(path: str | os.PathLike | None = None) -> dict[str, SolverSpec]:
    """Read and validate a solver registry (the bundled ``solvers.yaml`` by default)."""
    if path is None:
        source = "solvers.yaml"
        text = (importlib.resources.files("odtk") / "solvers.yaml").read_text()
    else:
        source = str(path)
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError(f"Cannot read solver registry {source}: {exc.strerror}; check the path "
                              "(given by $ODTK_SOLVERS).") from None
    raw = parse_yaml(text, f"Solver registry {source}")
    if not isinstance(raw, dict) or not raw:
        got = "nothing" if raw is None else type(raw).__name__
        raise ConfigError(f"Solver registry {source} must map solver names to entries, got {got}; "
                          "copy the layout of odtk's bundled solvers.yaml.")
    return {name: _validate_entry(name, entry, source) for name, entry in raw.items()}


def parse_yaml(text: str, what: str) -> Any:
    """Plain YAML data (safe loading: no tag builds a Python object); else a one-line ConfigError."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        fix = ("odtk reads plain YAML only, so remove the tag" if isinstance(exc, yaml.constructor.ConstructorError)
               else "fix the syntax there")
        raise ConfigError(f"{what} is not valid YAML{line} ({' '.join(problem.split())}); {fix}.") from None


@functools.cache
def registry() -> dict[str, SolverSpec]:
    """The registry in use, read once: the file named by ``$ODTK_SOLVERS``, else the bundled one."""
    return load_registry(os.environ.get("ODTK_SOLVERS") or None)


def get_spec(name: str, specs: dict[str, SolverSpec] | None = None) -> SolverSpec:
    """Look a solver up by name, with a helpful error for unknown names."""
    specs = registry() if specs is None else specs
    if name not in specs:
        raise ConfigError(f"Unknown solver {name!r}. Known solvers: {', '.join(sorted(specs))}.")
    return specs[name]


# --------------------------------------------------------------------------- availability
@dataclass(frozen=True)
class SolverStatus:
    """What ``odtk solvers`` prints for one solver."""

    name: str
    available: bool
    version: str | None
    licence: str  # "open", "full", "size-limited", or "missing"
    detail: str


def _cbc_binary(spec: SolverSpec) -> str:
    if spec.executable:
        path = shutil.which(spec.executable)
        if path is None:
            raise FileNotFoundError(f"the CBC binary {spec.executable} is missing or not executable")
        return path
    cbcbox = importlib.import_module("cbcbox")
    path = cbcbox.cbc_bin_path()
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError("the cbcbox package has no runnable CBC binary")
    return path


def _refused_for_size(spec: SolverSpec, exc: Exception) -> bool:
    """True when ``exc`` is the solver refusing a model as too large for its licence."""
    if spec.backend == "gurobipy":
        return getattr(exc, "errno", None) == 10010
    return spec.backend == "cplex" and len(exc.args) > 2 and exc.args[2] == 1016


def _over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    n = spec.size_limit["variables"] + 1
    if spec.backend == "gurobipy":
        gp = importlib.import_module("gurobipy")
        with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as model:
            model.addVars(n)
            try:
                model.optimize()
            except gp.GurobiError as exc:
                return _refused_for_size(spec, exc)
        return False
    cplex = importlib.import_module("cplex")
    problem = _quiet_cplex(cplex)
    problem.variables.add(obj=[1.0] * n)
    try:
        problem.solve()
    except cplex.exceptions.CplexSolverError as exc:
        return _refused_for_size(spec, exc)
    finally:
        problem.end()
    return False


def _version(spec: SolverSpec) -> str:
    if spec.backend == "pysat":
        return "python-sat " + importlib.import_module("pysat").__version__
    if spec.backend == "cbc":
        out = subprocess.run([_cbc_binary(spec), "-quit"], capture_output=True, text=True, timeout=30)
        first = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
        match = re.search(r"CBC\s+(.*?)\s+[—-]", first)
        return match.group(1) if match else importlib.metadata.version("cbcbox")
    return importlib.metadata.version(spec.package)


@functools.cache
def solver_status(name: str) -> SolverStatus:
    """Probe one solver (cached); never raises for an installed-or-not question."""
    spec = get_spec(name)
    try:
        importlib.import_module(spec.package)
        version = _version(spec)
        licence = "open"
        if spec.licence == "size-limited":
            licence = "size-limited" if _over_limit_rejected(spec) else "full"
    except Exception as exc:  # any failure to import or start means "not available"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return SolverStatus(name, False, None, "missing", f"{reason}; install with: {spec.install}")
    detail = spec.description
    if licence == "size-limited":
        limit = spec.size_limit
        detail += f" (limit {limit['variables']} variables, {limit['constraints']} constraints)"
    return SolverStatus(name, True, version, licence, detail)


def available_solvers(kind: str = "milp") -> list[str]:
    """Names of the registered solvers of ``kind`` (milp or sat) that are installed and start."""
    return [name for name, spec in registry().items()
            if spec.kind == kind and solver_status(name).available]


def require_solver(name: str) -> SolverSpec:
    """The spec of an installed solver, or a clear error saying how to install it."""
    spec = get_spec(name)
    status = solver_status(name)
    if not status.available:
        raise SolverUnavailableError(f"Solver {name!r} is not available: {status.detail}.")
    return spec


# --------------------------------------------------------------------------- outcome
@dataclass(frozen=True)
class SolverOptions:
    """odtk's normalised solver options (``None`` = solver default)."""

    time_limit: float | None = None
    mip_gap: float | None = None
    threads: int | None = None
    seed: int | None = None
    log: bool = False

    def __post_init__(self) -> None:
        for name in ("time_limit", "mip_gap"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value >= 0
                                          and math.isfinite(value)):
                raise ConfigError(f"{name} must be a non-negative number, got {value!r}.")
        for name in ("threads", "seed"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ConfigError(f"{name} must be a non-negative whole number, got {value!r}.")

    def native(self, spec: SolverSpec) -> dict[str, Any]:
        """The options that are set, under the solver's native names. Without ``mip_gap`` the
        solver is asked for a zero relative gap: odtk calls a result optimal only when its
        bound meets its objective (:func:`verified_termination`)."""
        values = {k: getattr(self, k) for k in OPTION_NAMES if k != "log"}
        values["mip_gap"] = self.mip_gap or 0.0
        out = {spec.options[k]: v for k, v in values.items() if v is not None and k in spec.options}
        if "log" in spec.options:
            out[spec.options["log"]] = int(self.log)
        return out


@dataclass(frozen=True)
class ModelSize:
    """Size of the model handed to the solver."""

    variables: int
    integer_variables: int
    constraints: int
    nonzeros: int


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

    A claimed optimum stands only when ``bound`` meets ``objective`` within the requested gap
    (``options.mip_gap``, relative) plus :data:`OPTIMALITY_TOLERANCE`; otherwise it is a
    ``time_limit`` result when the time limit was spent, and an error naming the disagreement
    when it was not.
    """
    if termination != "optimal" or objective is None:
        return termination
    scale = max(1.0, abs(objective))
    allowed = (options.mip_gap or 0.0) * max(abs(objective), abs(bound or 0.0)) + OPTIMALITY_TOLERANCE * scale
    if bound is not None and math.isfinite(bound) and abs(bound - objective) <= allowed:
        return termination
    if options.time_limit is not None and seconds >= options.time_limit:
        return "time_limit"
    gap = "no bound" if bound is None or not math.isfinite(bound) else (
        f"a bound of {bound:.10g}, {abs(bound - objective):.3g} away (over the tolerance of {allowed:.3g})")
    raise SolveError(f"{solver} reported an optimal solution of objective {objective:.10g} with {gap}: "
                     f"the result is not proven optimal; try another solver, or pass --log to see "
                     f"{solver}'s own report.")


# --------------------------------------------------------------------------- standard form
LazyRow = tuple[np.ndarray, np.ndarray, float]  # Σ coefficients · x[indices] ≤ rhs


@dataclass
class StandardForm:
    """``max/min c·x + offset`` s.t. ``row_lower <= A x <= row_upper``, bounds, integrality."""

    c: np.ndarray
    offset: float
    A: Any  # scipy.sparse.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    maximize: bool
    columns: list
    cutoff: float | None = None  # a solution must be at least this good (objective units)
    start: np.ndarray | None = None  # warm-start values (NaN where a variable has none)
    # lazy constraints: solution vector → violated rows (column indices, coefficients, upper rhs)
    lazy: Callable[[np.ndarray], list[LazyRow]] | None = None
    # called with every MIP solution the solver finds (solvers with a solution callback)
    on_solution: Callable[[np.ndarray], None] | None = None

    @property
    def size(self) -> ModelSize:
        return ModelSize(len(self.c), int(self.integer.sum()), self.A.shape[0], int(self.A.nnz))

    @functools.cached_property
    def row_scale(self) -> np.ndarray:
        """Each row's largest coefficient (at least 1): row violations are measured against it."""
        if not self.A.shape[0]:
            return np.ones(0)
        return np.maximum(abs(self.A).max(axis=1).toarray().ravel(), 1.0)


def to_standard_form(instance) -> StandardForm:
    """Compile a concrete Pyomo instance with Pyomo's standard-form compiler."""
    import pyomo.environ as pyo
    from pyomo.common.gc_manager import PauseGC
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    with PauseGC():
        repn = LinearStandardFormCompiler().write(instance, mixed_form=True, set_sense=None)
    n_rows, n_cols = repn.A.shape
    rhs = np.asarray(repn.rhs, dtype=float)
    kind = np.fromiter((row.bound_type for row in repn.rows), dtype=int, count=n_rows)
    row_lower = np.where(kind <= 0, rhs, -np.inf)  # bound_type -1: >=, 0: ==, 1: <=
    row_upper = np.where(kind >= 0, rhs, np.inf)
    lower = np.array([-np.inf if v.lb is None else v.lb for v in repn.columns], dtype=float)
    upper = np.array([np.inf if v.ub is None else v.ub for v in repn.columns], dtype=float)
    integer = np.array([v.is_integer() for v in repn.columns], dtype=bool)
    objective = repn.objectives[0]
    c = repn.c.toarray().ravel() if repn.c.shape[0] else np.zeros(n_cols)
    offset = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
    return StandardForm(c, offset, repn.A.tocsc(), row_lower, row_upper, lower, upper, integer,
                        objective.sense == pyo.maximize, list(repn.columns))


def model_violation(form: StandardForm, values: np.ndarray) -> float:
    """The largest violation by ``values`` of a row (relative to its largest coefficient, at
    least 1), a bound or integrality of ``form``."""
    activity = form.A @ values
    rows = np.maximum(form.row_lower - activity, activity - form.row_upper) / form.row_scale
    bounds = np.maximum(form.col_lower - values, values - form.col_upper)
    fractional = np.abs(values - np.round(values))[form.integer]
    return float(max(rows.max(initial=0.0), bounds.max(initial=0.0), fractional.max(initial=0.0)))


def _load_values(form: StandardForm, values: np.ndarray) -> None:
    for var, value in zip(form.columns, values):
        var.set_value(float(value), skip_validation=True)


def lazy_rows(form: StandardForm, separate: Callable[[], list]) -> Callable[[np.ndarray], list[LazyRow]]:
    """Wrap ``separate`` (reads the instance's values, returns violated Pyomo inequalities
    ``expression <= constant``) as a callback on solution vectors of ``form``."""
    from pyomo.repn import generate_standard_repn

    column = {id(var): j for j, var in enumerate(form.columns)}

    def rows(values: np.ndarray) -> list[LazyRow]:
        _load_values(form, values)
        found = []
        for cut in separate():
            lhs, rhs = cut.args  # lhs <= rhs
            repn = generate_standard_repn(lhs - rhs)
            indices = np.fromiter((column[id(v)] for v in repn.linear_vars), dtype=np.int64)
            found.append((indices, np.asarray(repn.linear_coefs, dtype=float), -float(repn.constant)))
        return found

    return rows


# --------------------------------------------------------------------------- HiGHS
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
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = form.A.indptr
    lp.a_matrix_.index_ = form.A.indices
    lp.a_matrix_.value_ = form.A.data
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                       for i in form.integer]
    if form.maximize and not minimize_only:
        lp.sense_ = highspy.ObjSense.kMaximize
    return lp


def new_highs(log: bool = False):
    """A ``highspy.Highs`` object; HiGHS 1.16 prints its banner on file descriptor 1 when the
    first one of a process is made, before any option can be set: silenced unless ``log``."""
    import highspy

    if log:
        return highspy.Highs()
    with _silenced_descriptors():
        highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    return highs


@contextlib.contextmanager
def _silenced_descriptors():
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


def _solve_highs(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """HiGHS through its matrix API. HiGHS 1.16 can return the MIP start itself as its optimal
    solution after improving the start's image in the presolved model (the values it returns then
    score less than the objective it reports): such a solve is run again without the start."""
    start = time.perf_counter()
    raw = _run_highs(form, spec, options, form.start)
    if raw.pop("start_returned"):
        log.info("HiGHS returned its MIP start instead of its optimum; solving again without the start")
        left = None if options.time_limit is None else max(options.time_limit - (time.perf_counter() - start), 0.0)
        again = _run_highs(form, spec, replace(options, time_limit=left), None)
        again.pop("start_returned")
        raw = {**again, "handoff": raw["handoff"] + again["handoff"]}
    return raw


def _run_highs(form: StandardForm, spec: SolverSpec, options: SolverOptions,
               mip_start: np.ndarray | None) -> dict:
    import highspy

    start = time.perf_counter()
    highs = new_highs(options.log)
    for key, value in options.native(spec).items():
        highs.setOptionValue(key, bool(value) if key == "output_flag" else value)
    highs.passModel(highs_lp(form))
    if mip_start is not None:
        known = np.flatnonzero(~np.isnan(mip_start)).astype(np.int32)
        highs.setSolution(len(known), known, mip_start[known])
    if form.cutoff is not None:
        highs.setOptionValue("objective_bound", form.cutoff if not form.maximize else -form.cutoff)
    if form.on_solution is not None:
        highs.cbMipSolution.subscribe(lambda event: form.on_solution(np.array(event.data_out.mip_solution)))
    handoff = time.perf_counter() - start
    _run_interruptibly(highs)
    status = highs.getModelStatus()
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    termination = {
        highspy.HighsModelStatus.kOptimal: "optimal",
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
        highspy.HighsModelStatus.kInfeasible: "infeasible",
        highspy.HighsModelStatus.kInterrupt: "interrupted",
    }.get(status, "error")
    values = np.asarray(highs.getSolution().col_value) if has_solution else None
    bound = info.mip_dual_bound if form.integer.any() else info.objective_function_value
    scored = None if values is None else float(form.c @ values + form.offset)
    start_returned = (mip_start is not None and scored is not None and termination == "optimal"
                      and abs(scored - info.objective_function_value) > OPTIMALITY_TOLERANCE * max(1.0, abs(scored)))
    return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                message=highs.modelStatusToString(status), nodes=int(info.mip_node_count),
                start_returned=start_returned)


def _run_interruptibly(highs) -> None:
    """``highs.run()``, which Ctrl-C stops: HiGHS runs no Python code, so SIGINT only marks the
    solve here, and HiGHS's interrupt callbacks (Python code in this thread) then stop it."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        highs.run()  # only the main thread sees SIGINT; keep any other handler in place
        return
    pressed = threading.Event()

    def interrupt(event) -> None:
        if pressed.is_set():
            event.interrupt()

    for callback in (highs.cbSimplexInterrupt, highs.cbIpmInterrupt, highs.cbMipInterrupt):
        callback.subscribe(interrupt)
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.set())
    try:
        highs.run()
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# --------------------------------------------------------------------------- Gurobi
def _solve_gurobi(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import gurobipy as gp

    start = time.perf_counter()
    with gp.Env(params={"OutputFlag": int(options.log)}) as env, gp.Model(env=env) as model:
        for key, value in options.native(spec).items():
            model.setParam(key, value)
        vtype = np.where(form.integer, gp.GRB.INTEGER, gp.GRB.CONTINUOUS)
        x = model.addMVar(len(form.c), lb=form.col_lower, ub=form.col_upper, obj=form.c, vtype=vtype)
        model.ObjCon = form.offset
        model.ModelSense = gp.GRB.MAXIMIZE if form.maximize else gp.GRB.MINIMIZE
        A = form.A.tocsr()
        equal = form.row_lower == form.row_upper
        upper_only = np.isinf(form.row_lower)
        sense = np.where(equal, "=", np.where(upper_only, "<", ">"))
        rhs = np.where(upper_only, form.row_upper, form.row_lower)
        model.addMConstr(A, x, sense, rhs)
        if form.start is not None:
            x.Start = np.where(np.isnan(form.start), gp.GRB.UNDEFINED, form.start)
        if form.cutoff is not None:
            model.Params.Cutoff = form.cutoff
        callback = _gurobi_lazy_callback(form, x.tolist()) if form.lazy else None
        if callback:
            model.Params.LazyConstraints = 1
        handoff = time.perf_counter() - start
        try:
            model.optimize(callback)
        except gp.GurobiError as exc:
            if _refused_for_size(spec, exc):
                raise _licence_error(spec, form.size, refused=True) from None
            raise
        if callback and callback.error:
            raise callback.error
        termination = {gp.GRB.OPTIMAL: "optimal", gp.GRB.TIME_LIMIT: "time_limit",
                       gp.GRB.INFEASIBLE: "infeasible", gp.GRB.INTERRUPTED: "interrupted",
                       gp.GRB.INF_OR_UNBD: "infeasible",
                       gp.GRB.CUTOFF: "infeasible"}.get(model.Status, "error")  # nothing beats the cutoff
        values = np.asarray(x.X) if model.SolCount > 0 else None
        bound = model.ObjBound if (model.IsMIP and values is not None) else (
            model.ObjVal if values is not None else None)
        return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                    message=f"Gurobi status {model.Status}",
                    nodes=int(model.NodeCount) if model.IsMIP else None)


def _gurobi_lazy_callback(form: StandardForm, columns: list) -> Callable:
    """Gurobi callback adding ``form.lazy``'s violated rows at every new incumbent (MIPSOL)."""
    import gurobipy as gp

    def callback(model, where) -> None:
        if where != gp.GRB.Callback.MIPSOL:
            return
        try:
            values = np.asarray(model.cbGetSolution(columns))
            for indices, coefficients, rhs in form.lazy(values):
                model.cbLazy(gp.LinExpr(coefficients.tolist(), [columns[j] for j in indices]) <= rhs)
        except Exception as exc:  # gurobipy swallows callback errors: stop and re-raise after
            callback.error = exc
            model.terminate()

    callback.error = None
    return callback


# --------------------------------------------------------------------------- CPLEX
def _quiet_cplex(cplex_module, log: bool = False):
    problem = cplex_module.Cplex()
    if not log:
        for setter in (problem.set_results_stream, problem.set_log_stream,
                       problem.set_warning_stream, problem.set_error_stream):
            setter(None)
    return problem


def _set_cplex_parameter(problem, dotted: str, value: Any) -> None:
    target = problem.parameters
    for part in dotted.split("."):
        target = getattr(target, part)
    target.set(value)


def _solve_cplex(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import cplex

    start = time.perf_counter()
    problem = _quiet_cplex(cplex, options.log)
    try:
        for key, value in options.native(spec).items():
            _set_cplex_parameter(problem, key, value)
        inf = cplex.infinity
        problem.variables.add(
            obj=form.c.tolist(),
            lb=np.maximum(form.col_lower, -inf).tolist(),
            ub=np.minimum(form.col_upper, inf).tolist(),
            types="".join("I" if i else "C" for i in form.integer),
        )
        problem.objective.set_offset(form.offset)
        problem.objective.set_sense(problem.objective.sense.maximize if form.maximize
                                    else problem.objective.sense.minimize)
        A = form.A.tocsr()
        rows = [cplex.SparsePair(A.indices[A.indptr[r]:A.indptr[r + 1]].tolist(),
                                 A.data[A.indptr[r]:A.indptr[r + 1]].tolist())
                for r in range(A.shape[0])]
        equal = form.row_lower == form.row_upper
        upper_only = np.isinf(form.row_lower)
        senses = "".join(np.where(equal, "E", np.where(upper_only, "L", "G")))
        rhs = np.where(upper_only, form.row_upper, form.row_lower).tolist()
        problem.linear_constraints.add(lin_expr=rows, senses=senses, rhs=rhs)
        if form.start is not None:
            known = np.flatnonzero(~np.isnan(form.start))
            problem.MIP_starts.add(cplex.SparsePair(known.tolist(), form.start[known].tolist()),
                                   problem.MIP_starts.effort_level.auto)
        if form.cutoff is not None:
            cutoffs = problem.parameters.mip.tolerances
            (cutoffs.lowercutoff if form.maximize else cutoffs.uppercutoff).set(form.cutoff)
        if form.lazy:
            problem.register_callback(_cplex_lazy_callback(cplex)).separate = form.lazy
        handoff = time.perf_counter() - start
        try:
            problem.solve()
        except cplex.exceptions.CplexSolverError as exc:
            if _refused_for_size(spec, exc):
                raise _licence_error(spec, form.size, refused=True) from None
            raise
        return _cplex_outcome(problem, form, handoff)
    finally:
        problem.end()


def _cplex_lazy_callback(cplex_module) -> type:
    """CPLEX lazy-constraint callback class adding the rows its ``separate`` returns."""

    class LazyCuts(cplex_module.callbacks.LazyConstraintCallback):
        separate: Callable[[np.ndarray], list[LazyRow]]

        def __call__(self) -> None:
            for indices, coefficients, rhs in self.separate(np.asarray(self.get_values())):
                self.add(constraint=cplex_module.SparsePair(indices.tolist(), coefficients.tolist()),
                         sense="L", rhs=rhs)

    return LazyCuts


def _cplex_outcome(problem, form: StandardForm, handoff: float) -> dict:
    solution = problem.solution
    status = solution.get_status()
    codes = solution.status
    optimal = {codes.MIP_optimal, codes.optimal_tolerance, codes.optimal}
    timed_out = {codes.MIP_time_limit_feasible, codes.MIP_time_limit_infeasible,
                 codes.abort_time_limit}
    infeasible = {codes.MIP_infeasible, codes.infeasible, codes.MIP_infeasible_or_unbounded}
    interrupted = {codes.abort_user, codes.MIP_abort_feasible, codes.MIP_abort_infeasible}
    termination = ("optimal" if status in optimal else "time_limit" if status in timed_out
                   else "infeasible" if status in infeasible
                   else "interrupted" if status in interrupted else "error")
    has_solution = solution.is_primal_feasible()
    values = np.asarray(solution.get_values()) if has_solution else None
    bound = None
    if has_solution:
        bound = solution.MIP.get_best_objective() if form.integer.any() else solution.get_objective_value()
    return dict(termination=termination, values=values, bound=bound, handoff=handoff,
                message=solution.get_status_string(status),
                nodes=solution.progress.get_num_nodes_processed() if form.integer.any() else None)


# --------------------------------------------------------------------------- CBC
_CBC_STATUS = {"Optimal": "optimal", "Stopped on time": "time_limit", "Infeasible": "infeasible",
               "Integer infeasible": "infeasible", "Stopped on ctrl-c": "interrupted"}


def _solve_cbc(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """CBC on an MPS file. Its preprocessing now and then returns a solution that violates the
    model ("possible tolerance issue" in its log): CBC then solves again without it."""
    raw = _run_cbc(form, spec, options, preprocess=True)
    if raw["values"] is not None and model_violation(form, raw["values"]) > FEASIBILITY_TOLERANCE:
        log.info("CBC's solution violates the model; solving again without preprocessing")
        raw = _run_cbc(form, spec, options, preprocess=False)
    return raw


def _run_cbc(form: StandardForm, spec: SolverSpec, options: SolverOptions, preprocess: bool) -> dict:
    binary = _cbc_binary(spec)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="odtk-cbc-") as tmp:
        mps, sol = Path(tmp, "model.mps"), Path(tmp, "model.sol")
        writer = new_highs()
        writer.passModel(highs_lp(form, minimize_only=True))  # CBC reads MPS as minimisation
        writer.writeModel(str(mps))
        handoff = time.perf_counter() - start
        args = [binary, str(mps)]
        # CBC reports its bound and node count only with its log on: keep it on, show it with options.log
        for key, value in {**options.native(spec), "log": 1}.items():
            args += [f"-{key}", str(value)]
        args += _cbc_start_and_cutoff(form, Path(tmp))
        args += [] if preprocess else ["-preprocess", "off"]
        args += ["-solve", "-solu", str(sol)]
        run = subprocess.run(args, capture_output=True, text=True)
        if options.log:
            log.info(run.stdout)
        if run.returncode != 0 or not sol.exists():
            return dict(termination="error", values=None, bound=None, handoff=handoff,
                        message=_cbc_failure(run))
        return _cbc_outcome(sol.read_text(errors="replace"), run.stdout, form, handoff)


def _cbc_failure(run: subprocess.CompletedProcess) -> str:
    """Why CBC left no solution file: the signal that killed it, or its exit code and last words."""
    if run.returncode < 0:
        try:
            cause = signal.Signals(-run.returncode).name
        except ValueError:
            cause = f"signal {-run.returncode}"
        return f"the CBC process was killed by {cause}"
    tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"CBC exited with code {run.returncode}: {tail[0]}"


def _cbc_start_and_cutoff(form: StandardForm, folder: Path) -> list[str]:
    """CBC arguments for a warm start (a solution file) and a cutoff, in its minimisation terms."""
    args = []
    sign = -1.0 if form.maximize else 1.0
    if form.start is not None:
        known = np.flatnonzero(~np.isnan(form.start))
        lines = [f"{j} c{j} {form.start[j]:.12g}" for j in known]
        start = folder / "start.sol"
        start.write_text("Stopped on iterations - objective value 0\n" + "\n".join(lines) + "\n")
        args += ["-mipStart", str(start)]
    if form.cutoff is not None:
        args += ["-cutoff", repr(sign * form.cutoff)]
    return args


def _cbc_outcome(solution: str, stdout: str, form: StandardForm, handoff: float) -> dict:
    lines = solution.splitlines()
    if not lines:
        return dict(termination="error", values=None, bound=None, handoff=handoff,
                    message="CBC wrote an empty solution file")
    head = lines[0]
    state = head.split(" - ")[0].strip()
    termination = next((v for k, v in _CBC_STATUS.items() if state.startswith(k)), "error")
    sign = -1.0 if form.maximize else 1.0
    values = None
    # "Stopped on time (... no integer solution ...)": the values are a relaxation, not a solution
    if ("objective value" in head and "no integer solution" not in head
            and termination in ("optimal", "time_limit", "interrupted")):
        values = _cbc_values(lines, form)
        if values is None:
            return dict(termination="error", values=None, bound=None, handoff=handoff,
                        message=f"CBC's solution file is damaged: its values do not give the "
                                f"objective of its first line {head[:80]!r}")
    bound_match = re.search(r"Lower bound:\s*(\S+)", stdout)
    bound = None
    if bound_match:  # printed when CBC stops early (and by some builds at an optimum)
        bound = sign * float(bound_match.group(1))  # CBC's objective includes the MPS offset
    elif termination == "optimal" and values is not None:
        bound = float(form.c @ values + form.offset)
    nodes = re.search(r"Enumerated nodes:\s*(\d+)", stdout)
    message = head if termination != "error" else f"CBC's solution file reads {head[:80]!r}"
    return dict(termination=termination, values=values, bound=bound, handoff=handoff, message=message,
                nodes=int(nodes.group(1)) if nodes else None)


def _cbc_values(lines: list[str], form: StandardForm) -> np.ndarray | None:
    """The values of a CBC solution file (nonzero columns as ``index name value``), or None when
    a line does not parse or the values do not give the objective its first line reports."""
    values = np.zeros(len(form.c))
    try:
        reported = float(lines[0].split()[-1])
        for line in lines[1:]:
            parts = line.split()
            if len(parts) >= 3 and parts[0].isdigit():
                values[int(parts[0])] = float(parts[2])
    except (ValueError, IndexError):
        return None
    sign = -1.0 if form.maximize else 1.0  # CBC minimises; its objective includes the MPS offset
    scale = 1.0 + float(np.abs(form.c) @ np.abs(values))  # the file rounds values to 8 digits
    return values if abs(sign * reported - float(form.c @ values + form.offset)) <= 1e-6 * scale else None


_NATIVE: dict[str, Callable[[StandardForm, SolverSpec, SolverOptions], dict]] = {
    "highspy": _solve_highs, "gurobipy": _solve_gurobi, "cplex": _solve_cplex, "cbc": _solve_cbc,
}


# --------------------------------------------------------------------------- Pyomo hand-off
def _solve_pyomo(instance, form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    start = time.perf_counter()
    kwargs = {"executable": _cbc_binary(spec)} if spec.backend == "cbc" else {}
    solver = pyo.SolverFactory(spec.pyomo["oneshot"], **kwargs)
    for key, value in options.native(spec).items():
        if key not in ("output_flag", "OutputFlag", "log", "mip.display"):
            solver.options[key.replace(".", "_")] = value
    quiet = contextlib.nullcontext() if options.log else contextlib.redirect_stderr(io.StringIO())
    try:
        with quiet:  # CPLEX writes its errors to stderr as well as raising them
            results = solver.solve(instance, load_solutions=False, tee=options.log)
    except Exception as exc:
        if _refused_for_size(spec, exc):
            raise _licence_error(spec, form.size, refused=True) from None
        raise
    elapsed = time.perf_counter() - start
    condition = results.solver.termination_condition
    termination = {TC.optimal: "optimal", TC.maxTimeLimit: "time_limit",
                   TC.infeasible: "infeasible", TC.userInterrupt: "interrupted"}.get(condition, "error")
    has_solution = len(results.solution) > 0
    if has_solution:
        instance.solutions.load_from(results)
    problem = results.problem
    bound = problem.upper_bound if form.maximize else problem.lower_bound
    bound = float(bound) if bound is not None and math.isfinite(float(bound)) else None
    values = np.array([v.value if v.value is not None else 0.0 for v in form.columns]) if has_solution else None
    return dict(termination=termination, values=values, bound=bound, handoff=elapsed,
                message=str(condition), solve_inside_handoff=True)


# --------------------------------------------------------------------------- entry point
def _licence_error(spec: SolverSpec, size: ModelSize, refused: bool = False) -> LicenceLimitError:
    """The model is over the registry's size limit, or (``refused``) the solver's licence refused it."""
    if refused:
        over = f"which the installed {spec.name} licence refuses as over its size limit"
    else:
        over = (f"over the {spec.name} size-limited licence's limit of {spec.size_limit['variables']} "
                f"variables and {spec.size_limit['constraints']} constraints")
    return LicenceLimitError(
        f"The model has {size.variables} variables and {size.constraints} constraints, {over}; "
        f"use a smaller instance (fewer samples or depth), a full {spec.name} licence, "
        f"or another solver (e.g. --solver highs)."
    )


def check_licence(spec: SolverSpec, size: ModelSize) -> None:
    """Raise a one-line error when the model exceeds a size-limited licence."""
    if solver_status(spec.name).licence != "size-limited" or not spec.size_limit:
        return
    if size.variables > spec.size_limit["variables"] or size.constraints > spec.size_limit["constraints"]:
        raise _licence_error(spec, size)


def solve_instance(instance, solver: str, options: SolverOptions | None = None,
                   handoff: str = "native", warm_start: bool = False,
                   cutoff: float | None = None, lazy: Callable[[], list] | None = None,
                   on_solution: Callable[[], None] | None = None) -> SolverOutcome:
    """Solve a concrete Pyomo instance; the solution (if any) is loaded into its variables.

    ``warm_start`` passes the values the instance's variables hold now as a MIP start;
    ``cutoff`` asks only for solutions at least as good as that objective value; ``lazy``
    (solvers with lazy-constraint callbacks) is called at every incumbent, with the
    incumbent loaded into the instance, and returns the violated inequalities to add;
    ``on_solution`` (HiGHS) is called with every MIP solution found loaded into the instance.
    A solver stopped by Ctrl-C raises KeyboardInterrupt, as Python code does.
    """
    options = options or SolverOptions()
    if get_spec(solver).kind != "milp":
        raise ConfigError(f"{solver} is a SAT solver: it runs --model sat-depth / sat-size only; "
                          f"choose a MILP solver ({', '.join(available_solvers())}).")
    if handoff not in HANDOFFS:
        raise ConfigError(f"Unknown hand-off {handoff!r}; choose one of {', '.join(HANDOFFS)}.")
    spec = require_solver(solver)
    start = time.perf_counter()
    form = to_standard_form(instance)
    if warm_start:
        form.start = np.array([np.nan if v.value is None else v.value for v in form.columns], dtype=float)
    form.cutoff = cutoff
    if lazy is not None:
        if handoff != "native" or not spec.capabilities["lazy_callbacks"]:
            raise ConfigError(f"{solver} takes no lazy constraints through the {handoff} hand-off.")
        form.lazy = lazy_rows(form, lazy)
    if on_solution is not None:
        def loaded_then_called(values: np.ndarray) -> None:
            _load_values(form, values)
            on_solution()

        form.on_solution = loaded_then_called
    compile_time = time.perf_counter() - start
    check_licence(spec, form.size)
    start = time.perf_counter()
    if handoff == "pyomo":
        if warm_start or cutoff is not None:
            raise ConfigError("Warm starts and cutoffs use the native hand-off; drop handoff='pyomo'.")
        raw = _solve_pyomo(instance, form, spec, options)
    else:
        raw = _NATIVE[spec.backend](form, spec, options)
    if raw["termination"] == "interrupted":  # the solver stopped on Ctrl-C: so does the caller
        raise KeyboardInterrupt
    total = time.perf_counter() - start
    values = raw["values"]
    if values is not None and (violation := model_violation(form, values)) > FEASIBILITY_TOLERANCE:
        raw.update(termination="error", message=(
            f"{solver} returned a solution that violates the model by {violation:.2g}, over the "
            f"tolerance of {FEASIBILITY_TOLERANCE:g}"))
        values = None
    objective = None
    if values is not None:
        _load_values(form, values)
        objective = float(form.c @ values + form.offset)
    raw["termination"] = verified_termination(solver, raw["termination"], objective, raw["bound"],
                                              options, total)
    handoff_time = compile_time + (0.0 if raw.get("solve_inside_handoff") else raw["handoff"])
    solve_time = total - (0.0 if raw.get("solve_inside_handoff") else raw["handoff"])
    return SolverOutcome(
        termination=raw["termination"], has_solution=values is not None, objective=objective,
        bound=raw["bound"], handoff_time=handoff_time, solve_time=solve_time, size=form.size,
        version=solver_status(solver).version or "", message=raw["message"],
        native=options.native(spec), nodes=raw.get("nodes"),
    )
