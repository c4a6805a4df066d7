"""The solver registry (``solvers.yaml``), the backends it names, and what is installed.

Each entry of the registry names a *backend*: a module of this package that declares
``BACKEND = "<name>"`` and offers ``solve(form, spec, options) -> dict`` (``None`` for SAT
solvers, reached by the clause models instead), and may offer ``version(spec)``,
``refused_for_size(exc)`` and ``over_limit_rejected(spec)``. A new backend is one new module
here plus its entries in ``solvers.yaml``.
"""
from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata
import importlib.resources
import os
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import yaml

from odtk.exceptions import ConfigError, LicenceLimitError, SolverUnavailableError
from odtk.files import read_regular
from odtk.solvers.options import OPTION_NAMES, SolverOptions
from odtk.solvers.standard_form import ModelSize

CAPABILITIES = ("lazy_callbacks", "user_cuts", "warm_start", "persistent", "cutoff")
KINDS = ("milp", "sat")
# the options every entry of a kind must map to a native parameter, else they would be dropped: a
# MILP solver is given odtk's time limit, gap, threads and seed (its log is switched by the backend
# itself where it has no mapping). A SAT solver is given none: odtk stops each python-sat query at
# its deadline, a SAT answer has no gap, and python-sat runs one thread without a seed.
REQUIRED_OPTIONS = {"milp": ("time_limit", "mip_gap", "threads", "seed"), "sat": ()}
SAT_OPTIONS = ("time_limit",)  # what a SAT entry may map (odtk's own deadline, for the listing)
_REQUIRED_KEYS = {"description", "package", "install", "backend", "pyomo", "licence",
                  "options", "capabilities"}
_OPTIONAL_KEYS = {"size_limit", "kind", "executable", "settings"}
LICENCES = ("open", "size-limited")
PYOMO_KEYS = ("oneshot", "persistent")


@functools.cache
def backends() -> dict[str, ModuleType]:
    """The backend modules of this package, by the name ``solvers.yaml`` gives them."""
    found = {}
    for info in pkgutil.iter_modules(importlib.import_module("odtk.solvers").__path__):
        module = importlib.import_module(f"odtk.solvers.{info.name}")
        if hasattr(module, "BACKEND"):
            found[module.BACKEND] = module
    return found


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
    # native parameters set for one model (its --model name), e.g. {"odd": {"mip_lp_solver": "ipm"}}
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def limit(self) -> dict[str, int]:
        """The size limit of a size-limited licence: variables and constraints."""
        if self.size_limit is None:
            raise ConfigError(f"solver {self.name!r}: a size-limited licence needs a size_limit in the registry.")
        return self.size_limit


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
    _check_settings(entry.get("settings", {}), where)
    if entry.get("kind", "milp") not in KINDS:
        raise ConfigError(f"{where}: kind {entry['kind']!r} is not one of {KINDS}.")
    if entry["backend"] not in backends():
        raise ConfigError(f"{where}: backend {entry['backend']!r} is not one of {tuple(backends())}.")
    _check_options(entry["options"], entry.get("kind", "milp"), where)
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


def _check_options(options: Any, kind: str, where: str) -> None:
    """``options`` maps odtk's option names to distinct native parameter names, and maps every
    one that a solver of ``kind`` must be given (:data:`REQUIRED_OPTIONS`)."""
    allowed = OPTION_NAMES if kind == "milp" else SAT_OPTIONS
    if not isinstance(options, dict) or set(options) - set(allowed) or not all(
        isinstance(native, str) and native.strip() for native in options.values()
    ):
        raise ConfigError(f"{where}: options may only name {allowed}, each mapped to the solver's "
                          "own parameter name.")
    missing = [name for name in REQUIRED_OPTIONS[kind] if name not in options]
    if missing:
        raise ConfigError(f"{where}: options do not map {', '.join(missing)}, so odtk could not pass "
                          f"{'them' if len(missing) > 1 else 'it'} on; add the solver's own parameter name "
                          f"for each, e.g. options: {{{missing[0]}: <its name>}}.")
    shared = sorted({native for native in options.values() if list(options.values()).count(native) > 1})
    if shared:
        raise ConfigError(f"{where}: options map several of odtk's options to {shared[0]}; give each its own "
                          "parameter.")


def _check_settings(settings: Any, where: str) -> None:
    """``settings`` maps model names (as ``--model`` takes them) to native parameters and plain
    values (text, numbers, true/false); a name that is no model is refused, with the close ones."""
    if not isinstance(settings, dict) or not all(
        isinstance(model, str) and isinstance(native, dict)
        and all(isinstance(key, str) and isinstance(value, (str, int, float, bool)) for key, value in native.items())
        for model, native in settings.items()
    ):
        raise ConfigError(f"{where}: settings must map model names (as --model takes them) to the solver's own "
                          "parameters and their values, e.g. settings: {odd: {mip_lp_solver: ipm}}.")
    from odtk.pipeline.methods import available_models  # not at the top: the pipeline imports this package

    models = available_models()
    for model in settings:
        if model not in models:
            close = difflib.get_close_matches(model, models, n=2, cutoff=0.5)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            raise ConfigError(f"{where}: settings name a model {model!r} that odtk does not have{hint}; "
                              f"name each model as --model takes it: {', '.join(models)}.")


def load_registry(path: str | os.PathLike | None = None) -> dict[str, SolverSpec]:
    """Read and validate a solver registry (the bundled ``solvers.yaml`` by default)."""
    if path is None:
        source = "solvers.yaml"
        text = (importlib.resources.files("odtk") / "solvers.yaml").read_text()
    else:
        source = str(path)
        try:
            text = read_regular(path, "config").decode("utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"Cannot read solver registry {source}: {exc.strerror}; check the path "
                              "(given by $ODTK_SOLVERS).") from None
    raw = parse_yaml(text, f"Solver registry {source}")
    if raw == {}:
        raise ConfigError(f"Solver registry {source} lists no solvers; add at least one entry (copy one "
                          "from odtk's bundled solvers.yaml, e.g. highs), or unset $ODTK_SOLVERS to use "
                          "the bundled registry.")
    if not isinstance(raw, dict):
        got = "nothing" if raw is None else type(raw).__name__
        raise ConfigError(f"Solver registry {source} must map solver names to entries, got {got}; "
                          "copy the layout of odtk's bundled solvers.yaml.")
    return {name: _validate_entry(name, entry, source) for name, entry in raw.items()}


MAX_YAML_VALUES = 100_000  # values a configuration file may hold once its aliases are expanded


def parse_yaml(text: str, what: str) -> Any:
    """Plain YAML data (safe loading: no tag builds a Python object); else a one-line
    ConfigError. Aliases are fine, but not a file that expands into more than
    ``MAX_YAML_VALUES`` values (an alias bomb), which odtk would otherwise walk for ever."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        fix = ("odtk reads plain YAML only, so remove the tag" if isinstance(exc, yaml.constructor.ConstructorError)
               else "fix the syntax there")
        raise ConfigError(f"{what} is not valid YAML{line} ({' '.join(problem.split())}); {fix}.") from None
    except RecursionError:
        raise ConfigError(f"{what} nests its values too deeply to read; flatten it.") from None
    try:
        too_large = _expanded_size(data, {}) > MAX_YAML_VALUES
    except RecursionError:
        raise ConfigError(f"{what} nests its values too deeply to read; flatten it.") from None
    if too_large:
        raise ConfigError(f"{what} expands (through its aliases) into more than {MAX_YAML_VALUES:,} values; "
                          "write the values out, or split the file.")
    return data


def _expanded_size(value: Any, known: dict[int, int]) -> int:
    """How many values ``value`` holds with every alias written out, counted once per shared
    object (linear in the file, however many times its parts are repeated)."""
    if not isinstance(value, (list, dict)):
        return 1
    if id(value) not in known:
        known[id(value)] = 0  # a self-referencing alias counts as one value
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        known[id(value)] = min(1 + sum(_expanded_size(item, known) for item in items), MAX_YAML_VALUES + 1)
    return known[id(value)]


@functools.cache
def registry() -> dict[str, SolverSpec]:
    """The registry in use, read once: the file named by ``$ODTK_SOLVERS``, else the bundled one."""
    return load_registry(os.environ.get("ODTK_SOLVERS") or None)


def native_parameters(spec: SolverSpec, options: SolverOptions) -> dict[str, Any]:
    """The native parameters odtk sets on ``spec``'s solver for ``options``: the model's
    ``settings``, then odtk's options under their native names, each as the backend passes it
    (its ``fit(option, value)``, e.g. SCIP's verbosity for the log switch)."""
    return options.native(spec, getattr(backends()[spec.backend], "fit", None))


def parameter_error(spec: SolverSpec, key: str, value: Any, reason: str) -> ConfigError:
    """The one-line error for a native parameter ``key`` (set to ``value``; None: not yet given
    one) that ``spec``'s solver refused for ``reason``, naming where the parameter comes from and
    where to correct it."""
    source = next((f" (odtk's {name})" for name, native in spec.options.items() if native == key),
                  " (from its settings)")
    shown = key if value is None else f"{key}={value!r}"
    return ConfigError(f"{spec.name} refuses the parameter {shown}{source}: {reason}; correct it in "
                       "the solver registry (solvers.yaml, or the file $ODTK_SOLVERS names).")


def check_parameter_names(spec: SolverSpec, names: Iterable[str] = ()) -> None:
    """Where ``spec``'s solver is installed and its backend can look names up (``has_parameter``;
    CBC's are checked as it reads its command line), a ConfigError for the first of its entry's
    native option names, then of ``names``, that the solver does not have: before anything runs."""
    has_parameter = getattr(backends()[spec.backend], "has_parameter", None)
    if has_parameter is None or not solver_status(spec.name).available:
        return
    for key in [*spec.options.values(), *names]:
        if not _known(spec.backend, key):
            raise parameter_error(spec, key, None, "the solver has no parameter of this name")


@functools.cache
def _known(backend: str, key: str) -> bool:
    """Whether the solver of ``backend`` has the parameter ``key`` (asked once per name)."""
    return backends()[backend].has_parameter(key)


def model_settings(solver: str, model: str) -> dict[str, Any]:
    """The native parameters the registry sets on ``solver`` for ``model`` (its ``--model`` name,
    e.g. ``sat-depth``; none when the registry does not list the solver); where the solver is
    installed, each of these and of its options' native names is first looked up in it
    (:func:`check_parameter_names`), so that a misspelt one stops a solve before its data is read."""
    spec = registry().get(solver)
    if spec is None:
        return {}
    settings = dict(spec.settings.get(model, {}))
    check_parameter_names(spec, settings)
    return settings


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


def refused_for_size(spec: SolverSpec, exc: Exception) -> bool:
    """True when ``exc`` is the solver refusing a model as too large for its licence."""
    return getattr(backends()[spec.backend], "refused_for_size", lambda exc: False)(exc)


def over_limit_rejected(spec: SolverSpec) -> bool:
    """True when a trivial model just over the registry's size limit is refused."""
    return backends()[spec.backend].over_limit_rejected(spec)


def _version(spec: SolverSpec) -> str:
    version = getattr(backends()[spec.backend], "version", None)
    return version(spec) if version else importlib.metadata.version(spec.package)


@functools.cache
def solver_status(name: str) -> SolverStatus:
    """Probe one solver (cached); never raises for an installed-or-not question."""
    spec = get_spec(name)
    try:
        importlib.import_module(spec.package)
        version = _version(spec)
        licence = "open"
        if spec.licence == "size-limited":
            licence = "size-limited" if over_limit_rejected(spec) else "full"
    except Exception as exc:  # any failure to import or start means "not available"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        # a SolverUnavailableError is about what the registry names (a user's binary): installing
        # the package would not help
        advice = "" if isinstance(exc, SolverUnavailableError) else f"; install with: {spec.install}"
        return SolverStatus(name, False, None, "missing", reason + advice)
    detail = spec.description
    if licence == "size-limited":
        limit = spec.limit
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
    check_parameter_names(spec)
    return spec


# --------------------------------------------------------------------------- entry point
def licence_error(spec: SolverSpec, size: ModelSize, refused: bool = False) -> LicenceLimitError:
    """The model is over the registry's size limit, or (``refused``) the solver's licence refused it."""
    if refused:
        over = f"which the installed {spec.name} licence refuses as over its size limit"
    else:
        over = (f"over the {spec.name} size-limited licence's limit of {spec.limit['variables']} "
                f"variables and {spec.limit['constraints']} constraints")
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
        raise licence_error(spec, size)

