"""Experiment grids: a YAML file naming datasets, methods, hyper-parameters, seeds and solvers,
validated with one-line errors and expanded into runs with stable ids.

A grid file::

    name: trees-small
    datasets: [flowoct/monk1, {name: binary/hepatitis, rows: 80}]
    seeds: [0, 1]
    split: [0.5, 0.25, 0.25]          # train, validation, test
    stratify: true                    # false: plain random splits (as the ODD paper)
    solvers: [highs, cbc]
    time_limit: 10                    # seconds per solve
    threads: 1
    guard: 60                         # seconds beyond the time limit before a run is killed
    methods:
      - {model: flowoct, depth: [1, 2], options: {lam: [0, 0.1]}}
      - {model: cp, depth: [1, 2]}    # odtk's own search: no MILP solver
      - {model: odd, skeleton: [1-2], options: {alpha: [0.01, 0.1]}, settings: {heuristic_time: 1}}
    selection: {keep: [depth], retrain: true}

Lists are tried in every combination, each distinct run once (a value listed twice adds
nothing). A method's ``solvers`` / ``time_limit`` override the grid's; ``settings`` are fixed
``odtk.solve`` arguments (not tuned). ``selection``: per
dataset, seed, method and solver (and the fields in ``keep``), the setting with the best
validation accuracy is chosen and, with ``retrain``, trained again on train + validation.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import reprlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odtk import api
from odtk.datasets import load_dataset
from odtk.datasets.encoders import THRESHOLDS
from odtk.exceptions import ConfigError, OdtkError
from odtk.files import read_regular
from odtk.pipeline.methods import is_engine, method
from odtk.skeletons import MAX_DEPTH, SHAPES, parse_widths
from odtk.solvers import get_spec, parse_yaml
from odtk.solvers.options import MAX_SECONDS, MAX_SEED, MAX_THREADS

GRID_KEYS = {"name", "datasets", "seeds", "split", "stratify", "solvers", "time_limit", "threads", "guard",
             "methods", "selection"}
METHOD_KEYS = {"model", "depth", "skeleton", "options", "settings", "solvers", "time_limit"}
SETTINGS = {"strategy", "heuristic_time", "positive_class", "thresholds", "max_thresholds"}
SELECTION_KEYS = {"keep", "retrain"}
KEEPABLE = ("depth", "skeleton")
MAX_RUNS = 100_000  # runs in one campaign
IDENTITY = ("phase", "dataset", "rows", "seed", "split", "method", "solver", "depth", "skeleton",
            "options", "settings", "time_limit", "threads")  # what makes two runs the same run
# identity keys added later: part of the identity only when off their default, so that the
# ids of runs recorded before stay valid
LATER_IDENTITY = {"stratify": True}


@dataclass(frozen=True)
class Grid:
    """A validated grid: its name, runs (grid phase) and the selection rule."""

    name: str
    runs: list[dict[str, Any]]
    keep: tuple[str, ...]
    retrain: bool


def load_grid(path: str | Path) -> Grid:
    """Read, validate and expand a grid file; every problem is a one-line ConfigError."""
    path = Path(path)
    try:
        text = read_regular(path, "config").decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"Grid file {path} not found; check the path.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read grid file {path} ({exc.strerror}); give the grid's YAML file.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Cannot read grid file {path} ({exc}); save it as UTF-8 text.") from None
    return parse_grid(parse_yaml(text, f"Grid file {path}"), str(path))


def parse_grid(raw: Any, source: str = "grid") -> Grid:
    """Validate the grid mapping ``raw`` (as read from YAML) and expand it into runs."""
    spec = _mapping(raw, source, GRID_KEYS, required=("name", "datasets", "methods"))
    name = _text(spec["name"], f"{source}: name")
    seeds = [_whole(s, f"{source}: seeds", 0, MAX_SEED) for s in _listed(spec.get("seeds", [0]), f"{source}: seeds")]
    split = _split(spec.get("split", [0.5, 0.25, 0.25]), source)
    stratify = spec.get("stratify", True)
    if not isinstance(stratify, bool):
        raise ConfigError(f"{source}: stratify must be true or false, got {reprlib.repr(stratify)}.")
    common = {
        "solvers": _solvers(spec.get("solvers", ["highs"]), f"{source}: solvers"),
        "time_limit": _seconds(spec.get("time_limit", 60), f"{source}: time_limit"),
        "threads": _whole(spec.get("threads", 1), f"{source}: threads", 1, MAX_THREADS),
        "guard": _seconds(spec.get("guard", 60), f"{source}: guard"),
    }
    datasets = [_dataset(entry, source) for entry in _listed(spec["datasets"], f"{source}: datasets")]
    methods = [_method(entry, f"{source}: methods[{k}]", common)
               for k, entry in enumerate(_listed(spec["methods"], f"{source}: methods"))]
    selection = _mapping(spec.get("selection", {}), f"{source}: selection", SELECTION_KEYS)
    keep = selection.get("keep", [])
    keep = tuple(keep if isinstance(keep, list) else [keep])
    if not all(field in KEEPABLE for field in keep):
        raise ConfigError(f"{source}: selection.keep may hold {', '.join(KEEPABLE)}; got {list(keep)}.")
    retrain = selection.get("retrain", True)
    if not isinstance(retrain, bool):
        raise ConfigError(f"{source}: selection.retrain must be true or false, got {reprlib.repr(retrain)}.")
    _count(len(datasets) * len(seeds) * sum(map(len, methods)), source)
    runs = [finish_run({"phase": "grid", "campaign": name, "dataset": dataset, "rows": rows,
                        "seed": seed, "split": split, "stratify": stratify, **setting})
            for (dataset, rows), seed, method in itertools.product(datasets, seeds, methods)
            for setting in method]
    return Grid(name, _unique(runs), keep, retrain)


def _unique(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``runs`` without repeats (a value listed twice, a method entry given twice): the first
    of each id, so that one campaign never computes a run twice."""
    first: dict[str, dict[str, Any]] = {}
    for run in runs:
        first.setdefault(run["id"], run)
    return list(first.values())


def finish_run(run: dict[str, Any]) -> dict[str, Any]:
    """``run`` with its id: a hash of the parameters that make it the same run."""
    identity = {key: run.get(key) for key in IDENTITY}
    identity |= {key: run[key] for key, default in LATER_IDENTITY.items() if run.get(key, default) != default}
    text = json.dumps(identity, sort_keys=True)
    return {**run, "id": hashlib.sha256(text.encode()).hexdigest()[:16]}


def _method(raw: Any, where: str, common: dict[str, Any]) -> list[dict[str, Any]]:
    """Every setting (shape × options × solver) of one method entry."""
    spec = _mapping(raw, where, METHOD_KEYS, required=("model",))
    model = spec["model"]
    if model not in api.available_models():
        raise ConfigError(f"{where}: unknown model {reprlib.repr(model)}; known: {', '.join(api.available_models())}.")
    depths = [_whole(d, f"{where}: depth", 0, MAX_DEPTH)
              for d in _listed(spec.get("depth", [None]), f"{where}: depth") if d is not None] or [None]
    skeletons = [_skeleton(s, f"{where}: skeleton")
                 for s in _listed(spec.get("skeleton", [None]), f"{where}: skeleton") if s is not None] or [None]
    options = _mapping(spec.get("options", {}), f"{where}: options", None)
    settings = _settings(spec.get("settings", {}), f"{where}: settings")
    names = sorted(options)
    values = [_listed(options[n], f"{where}: options.{n}") for n in names]
    _count(len(depths) * len(skeletons) * math.prod(map(len, values)), where)
    combos = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    for combo in combos:
        try:
            api.check_options(model, combo)
        except OdtkError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    solvers = (_solvers(spec["solvers"], f"{where}: solvers") if "solvers" in spec
               else common["solvers"] if not is_engine(method(model)) else [None])
    time_limit = _seconds(spec.get("time_limit", common["time_limit"]), f"{where}: time_limit")
    return [{"method": model, "solver": solver, "depth": depth, "skeleton": skeleton,
             "options": combo, "settings": settings, "time_limit": time_limit,
             "threads": common["threads"], "guard": common["guard"]}
            for depth, skeleton, combo, solver in itertools.product(depths, skeletons, combos, solvers)]


def _count(runs: int, where: str) -> None:
    """ConfigError when a grid expands to more runs than one campaign takes (checked before
    expanding, so a typo cannot fill the memory)."""
    if runs > MAX_RUNS:
        raise ConfigError(f"{where} expands to {runs:,} runs, over the {MAX_RUNS:,} one campaign takes; "
                          "split it into several grids.")


def _skeleton(raw: Any, where: str) -> str:
    """A skeleton: widths such as 1-2-4 (YAML reads a lone width as a number) or a topology name."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise ConfigError(f"{where} must be widths such as 1-2-4 or a topology name, got {reprlib.repr(raw)}.")
    text = str(raw)
    if text not in SHAPES:
        try:
            parse_widths(text)
        except OdtkError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return text


def _settings(raw: Any, where: str) -> dict[str, Any]:
    """The fixed ``odtk.solve`` arguments of a method, checked as ``odtk.solve`` would use them."""
    settings = _mapping(raw, where, SETTINGS)
    choices = {"strategy": api.STRATEGIES, "thresholds": THRESHOLDS}
    for name, allowed in choices.items():
        if name in settings and settings[name] not in allowed:
            raise ConfigError(f"{where}: {name} must be one of {', '.join(allowed)}, got {reprlib.repr(settings[name])}.")
    if "heuristic_time" in settings:
        _seconds(settings["heuristic_time"], f"{where}: heuristic_time")
    if settings.get("max_thresholds") is not None:
        _whole(settings["max_thresholds"], f"{where}: max_thresholds", 1)
    if not isinstance(settings.get("positive_class", ""), (str, int, float)):
        raise ConfigError(f"{where}: positive_class must be one class label, got {reprlib.repr(settings['positive_class'])}.")
    return settings


def _dataset(entry: Any, source: str) -> tuple[str, int | None]:
    if isinstance(entry, str):
        entry = {"name": entry}
    spec = _mapping(entry, f"{source}: datasets", {"name", "rows"}, required=("name",))
    try:
        dataset = load_dataset(_text(spec["name"], f"{source}: datasets"))
    except OdtkError as exc:
        raise ConfigError(f"{source}: datasets: {exc}") from None
    rows = spec.get("rows")
    if rows is not None:
        rows = _whole(rows, f"{source}: datasets.{dataset.name}.rows", 4)
    return dataset.name, rows


def _solvers(raw: Any, where: str) -> list[str]:
    names = [_text(s, where) for s in _listed(raw, where)]
    for name in names:
        try:
            get_spec(name)
        except OdtkError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return names


def _split(raw: Any, source: str) -> list[float]:
    values = _listed(raw, f"{source}: split")
    if (len(values) != 3 or not all(_is_number(v) for v in values) or values[0] <= 0 or values[2] <= 0
            or values[1] < 0 or not math.isclose(sum(values), 1.0)):
        raise ConfigError(f"{source}: split must be [train, validation, test] fractions summing to 1 "
                          f"with train and test > 0, got {reprlib.repr(raw)}.")
    return [float(v) for v in values]


def _mapping(raw: Any, where: str, allowed: set[str] | None, required: tuple[str, ...] = ()) -> dict:
    if not isinstance(raw, dict):
        got = "nothing" if raw is None else type(raw).__name__
        raise ConfigError(f"{where} must be a mapping (key: value), got {got}.")
    unknown = sorted(set(map(str, raw)) - allowed) if allowed is not None else []
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}.")
    missing = [key for key in required if key not in raw]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}.")
    return raw


def _listed(raw: Any, where: str) -> list:
    values = raw if isinstance(raw, list) else [raw]
    if not values:
        raise ConfigError(f"{where} is empty; give at least one value.")
    return values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any, where: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"≥ {low}"
        raise ConfigError(f"{where} must be a whole number {bounds}, got {reprlib.repr(value)}.")
    return value


def _seconds(value: Any, where: str) -> float:
    if not _is_number(value) or not 0 < value <= MAX_SECONDS:
        raise ConfigError(f"{where} must be a positive number of seconds up to {MAX_SECONDS:g}, "
                          f"got {reprlib.repr(value)}.")
    return float(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string, got {reprlib.repr(value)}.")
    return value
