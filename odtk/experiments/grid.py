"""Experiment grids: a YAML file naming datasets, methods, hyper-parameters, seeds and solvers,
validated with one-line errors and expanded into runs with stable ids.

A grid file::

    name: trees-small
    datasets: [flowoct/monk1, {name: binary/hepatitis, rows: 80}]
    seeds: [0, 1]
    split: [0.5, 0.25, 0.25]          # train, validation, test ([1, 0, 0]: the whole dataset trains)
    stratify: true                    # false: plain random splits (as the ODD paper)
    train_rows: 600                   # optional: at most this many training rows (drawn with the seed)
    solvers: [highs, cbc]
    time_limit: 10                    # seconds per solve
    threads: 1
    guard: 60                         # seconds beyond the time limit before a run is killed
    methods:
      - {model: flowoct, depth: [1, 2], options: {lam: [0, 0.1]}}
      - {model: cp, depth: [1, 2]}    # odtk's own search: no MILP solver
      - {model: odd, skeleton: [1-2], options: {alpha: [0.01, 0.1]}, settings: {heuristic_time: 1}}
    selection: {keep: [depth], retrain: true}

``split`` may instead be ``{test_size: 0.25, validation_size: 0.33}``: scikit-learn's
unstratified ``train_test_split`` twice with the run's seed as random state (test rows first,
then validation rows of the rest: the FlowOCT authors' samples), or ``{folds: 10}``: seed ``s``
tests on fold ``s % 10`` of a shuffled ``KFold`` (random state ``s // 10``) and trains on the
others. A dataset may be a CSV file: ``{name: mine, csv: data/mine.csv, target: class,
categorical: [colour]}`` (``categorical: true`` for every feature column); the file's digest is
part of each run's identity, so a changed file is never taken for the runs of the old one.

Lists are tried in every combination, each distinct run once (a value listed twice adds
nothing). A method's ``solvers`` / ``time_limit`` override the grid's; ``settings`` are fixed
``odtk.solve`` arguments (not tuned). ``selection``: per
dataset, seed, method and solver (and the fields in ``keep``), the setting with the best
validation accuracy is chosen (ties: the smaller depth, then the larger value of each option in
``prefer_larger``, then a fixed order) and, with ``retrain`` (the default when the split has a
validation part), trained again on train + validation.
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
from odtk.datasets import Dataset, from_dataframe, load_dataset, read_csv
from odtk.datasets.encoders import THRESHOLDS
from odtk.exceptions import ConfigError, OdtkError
from odtk.files import read_regular
from odtk.pipeline.methods import is_engine, method
from odtk.skeletons import MAX_DEPTH, SHAPES, parse_widths
from odtk.solvers import get_spec, parse_yaml
from odtk.solvers.options import MAX_SECONDS, MAX_SEED, MAX_THREADS

GRID_KEYS = {"name", "datasets", "seeds", "split", "stratify", "train_rows", "solvers", "time_limit", "threads",
             "guard", "methods", "selection"}
METHOD_KEYS = {"model", "depth", "skeleton", "options", "settings", "solvers", "time_limit"}
SETTINGS = {"strategy", "heuristic_time", "positive_class", "thresholds", "max_thresholds", "warm_start"}
WARM_STARTS = ("auto", "best", "cart", None)  # a grid names a warm start; None: none
SELECTION_KEYS = {"keep", "retrain", "prefer_larger"}
DATASET_KEYS = {"name", "rows", "csv", "target", "categorical"}
SPLIT_FORMS = "[train, validation, test] fractions, {test_size: T, validation_size: V} or {folds: K}"
KEEPABLE = ("depth", "skeleton")
MAX_RUNS = 100_000  # runs in one campaign
IDENTITY = ("phase", "dataset", "rows", "seed", "split", "method", "solver", "depth", "skeleton",
            "options", "settings", "time_limit", "threads")  # what makes two runs the same run
# identity keys added later: part of the identity only when off their default, so that the
# ids of runs recorded before stay valid
LATER_IDENTITY = {"stratify": True, "train_rows": None, "source": None}


@dataclass(frozen=True)
class Grid:
    """A validated grid: its name, runs (grid phase) and the selection rule."""

    name: str
    runs: list[dict[str, Any]]
    keep: tuple[str, ...]
    retrain: bool
    prefer_larger: tuple[str, ...] = ()


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
    return parse_grid(parse_yaml(text, f"Grid file {path}"), str(path), base=path.parent)


def parse_grid(raw: Any, source: str = "grid", base: Path | None = None) -> Grid:
    """Validate the grid mapping ``raw`` (as read from YAML) and expand it into runs; a CSV
    dataset's relative path is taken from ``base`` (the grid file's folder), else the current one."""
    spec = _mapping(raw, source, GRID_KEYS, required=("name", "datasets", "methods"))
    name = _text(spec["name"], f"{source}: name")
    seeds = [_whole(s, f"{source}: seeds", 0, MAX_SEED) for s in _listed(spec.get("seeds", [0]), f"{source}: seeds")]
    split = _split(spec.get("split", [0.5, 0.25, 0.25]), source)
    stratify = spec.get("stratify", not isinstance(split, dict))
    if not isinstance(stratify, bool):
        raise ConfigError(f"{source}: stratify must be true or false, got {reprlib.repr(stratify)}.")
    if stratify and isinstance(split, dict):
        raise ConfigError(f"{source}: a split {reprlib.repr(split)} is unstratified; drop stratify: true.")
    train_rows = spec.get("train_rows")
    if train_rows is not None:
        train_rows = _whole(train_rows, f"{source}: train_rows", 1)
    common = {
        "solvers": _solvers(spec.get("solvers", ["highs"]), f"{source}: solvers"),
        "time_limit": _seconds(spec.get("time_limit", 60), f"{source}: time_limit"),
        "threads": _whole(spec.get("threads", 1), f"{source}: threads", 1, MAX_THREADS),
        "guard": _seconds(spec.get("guard", 60), f"{source}: guard"),
    }
    datasets = [_dataset(entry, source, base) for entry in _listed(spec["datasets"], f"{source}: datasets")]
    methods = [_method(entry, f"{source}: methods[{k}]", common)
               for k, entry in enumerate(_listed(spec["methods"], f"{source}: methods"))]
    keep, retrain, prefer_larger = _selection(spec.get("selection", {}), source, _validates(split))
    _count(len(datasets) * len(seeds) * sum(map(len, methods)), source)
    runs = [finish_run({"phase": "grid", "campaign": name, **dataset, "seed": seed, "split": split,
                        "stratify": stratify, "train_rows": train_rows, **setting})
            for dataset, seed, method in itertools.product(datasets, seeds, methods)
            for setting in method]
    return Grid(name, _unique(runs), keep, retrain, prefer_larger)


def _selection(raw: Any, source: str, validates: bool) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """The selection rule: fields kept apart, whether to retrain (only with a validation part)
    and the options whose larger values win ties."""
    selection = _mapping(raw, f"{source}: selection", SELECTION_KEYS)
    keep = tuple(_listed(selection.get("keep", []), f"{source}: selection.keep") if selection.get("keep") else ())
    if not all(field in KEEPABLE for field in keep):
        raise ConfigError(f"{source}: selection.keep may hold {', '.join(KEEPABLE)}; got {list(keep)}.")
    retrain = selection.get("retrain", validates)
    if not isinstance(retrain, bool):
        raise ConfigError(f"{source}: selection.retrain must be true or false, got {reprlib.repr(retrain)}.")
    if retrain and not validates:
        raise ConfigError(f"{source}: selection.retrain needs a validation part in split; "
                          "give one or set retrain: false.")
    prefer = tuple(_text(n, f"{source}: selection.prefer_larger")
                   for n in (_listed(selection["prefer_larger"], f"{source}: selection.prefer_larger")
                             if "prefer_larger" in selection else []))
    return keep, retrain, prefer


def _validates(split: list[float] | dict[str, float]) -> bool:
    """Whether runs of ``split`` have validation rows to choose a setting on."""
    return split.get("validation_size", 0) > 0 if isinstance(split, dict) else split[1] > 0


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
    depths: list[int | None] = [_whole(d, f"{where}: depth", 0, MAX_DEPTH)
                                for d in _listed(spec.get("depth", [None]), f"{where}: depth")
                                if d is not None] or [None]
    skeletons: list[str | None] = [_skeleton(s, f"{where}: skeleton")
                                   for s in _listed(spec.get("skeleton", [None]), f"{where}: skeleton")
                                   if s is not None] or [None]
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
            raise ConfigError(f"{where}: {name} must be one of {', '.join(allowed)}, "
                              f"got {reprlib.repr(settings[name])}.")
    if settings.get("warm_start", "auto") not in WARM_STARTS:
        raise ConfigError(f"{where}: warm_start must be auto, best, cart or null (no warm start), "
                          f"got {reprlib.repr(settings['warm_start'])}.")
    if "heuristic_time" in settings:
        _seconds(settings["heuristic_time"], f"{where}: heuristic_time")
    if settings.get("max_thresholds") is not None:
        _whole(settings["max_thresholds"], f"{where}: max_thresholds", 1)
    if not isinstance(settings.get("positive_class", ""), (str, int, float)):
        raise ConfigError(f"{where}: positive_class must be one class label, "
                          f"got {reprlib.repr(settings['positive_class'])}.")
    return settings


def _dataset(entry: Any, source: str, base: Path | None) -> dict[str, Any]:
    """A dataset entry as the fields of its runs: ``dataset`` (and ``rows``); for a CSV file
    also its path, target, categorical columns and ``source`` (its digest, target and
    categorical columns: what makes it the same data)."""
    if isinstance(entry, str):
        entry = {"name": entry}
    spec = _mapping(entry, f"{source}: datasets", DATASET_KEYS, required=("name",))
    rows = spec.get("rows")
    if rows is not None:
        rows = _whole(rows, f"{source}: datasets.{spec['name']}.rows", 4)
    if "csv" in spec:
        return {**_csv_dataset(spec, f"{source}: datasets.{spec['name']}", base), "rows": rows}
    if set(spec) & {"target", "categorical"}:
        raise ConfigError(f"{source}: datasets.{spec['name']}: target and categorical go with csv: a bundled "
                          "dataset has its own.")
    try:
        dataset = load_dataset(_text(spec["name"], f"{source}: datasets"))
    except OdtkError as exc:
        raise ConfigError(f"{source}: datasets: {exc}") from None
    return {"dataset": dataset.name, "rows": rows}


def _csv_dataset(spec: dict[str, Any], where: str, base: Path | None) -> dict[str, Any]:
    """A CSV dataset entry, read once here so that a bad file is a one-line error now."""
    name = _text(spec["name"], where)
    path = ((base or Path.cwd()) / _text(spec["csv"], f"{where}.csv")).resolve()
    target = spec.get("target")
    if isinstance(target, bool) or not isinstance(target, (str, int)):
        raise ConfigError(f"{where}: give target, the class column of {path.name}.")
    categorical = spec.get("categorical", False)
    if not (isinstance(categorical, bool) or isinstance(categorical, list)):
        raise ConfigError(f"{where}.categorical must be true, false or a list of columns, "
                          f"got {reprlib.repr(categorical)}.")
    try:
        csv_data({"dataset": name, "csv": str(path), "target": target, "categorical": categorical})
    except OdtkError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return {"dataset": name, "csv": str(path), "target": target, "categorical": categorical,
            "source": {"digest": digest, "target": target, "categorical": categorical}}


def csv_data(run: dict[str, Any]) -> Dataset:
    """The CSV dataset a run names (its ``csv``, ``target`` and ``categorical`` fields)."""
    frame = read_csv(run["csv"])
    categorical = run["categorical"]
    if categorical is True:
        categorical = [column for column in frame.columns if column != run["target"]]
    return from_dataframe(frame, run["target"], categorical=categorical or None, name=run["dataset"])


def _solvers(raw: Any, where: str) -> list[str]:
    names = [_text(s, where) for s in _listed(raw, where)]
    for name in names:
        try:
            get_spec(name)
        except OdtkError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return names


def _split(raw: Any, source: str) -> list[float] | dict[str, float]:
    """Fractions [train, validation, test] (test 0: no test rows; [1, 0, 0]: in-sample), or a
    scikit-learn split ``{test_size, validation_size}``, or ``{folds: K}``."""
    if isinstance(raw, dict):
        if set(raw) == {"folds"}:
            return {"folds": _whole(raw["folds"], f"{source}: split.folds", 2, 1000)}
        if set(raw) == {"test_size", "validation_size"} and all(_is_number(v) for v in raw.values()) \
                and 0 < raw["test_size"] < 1 and 0 <= raw["validation_size"] < 1:
            return {key: float(value) for key, value in raw.items()}
    else:
        values = _listed(raw, f"{source}: split")
        if (len(values) == 3 and all(_is_number(v) for v in values) and values[0] > 0
                and min(values[1:]) >= 0 and math.isclose(sum(values), 1.0)):
            return [float(v) for v in values]
    raise ConfigError(f"{source}: split must be {SPLIT_FORMS} (fractions summing to 1 with train > 0, "
                      f"shares between 0 and 1, K ≥ 2), got {reprlib.repr(raw)}.")


def _mapping(raw: Any, where: str, allowed: set[str] | None, required: tuple[str, ...] = ()) -> dict:
    if not isinstance(raw, dict):
        got = "nothing" if raw is None else type(raw).__name__
        raise ConfigError(f"{where} must be a mapping (key: value), got {got}.")
    if allowed is not None and (unknown := sorted(set(map(str, raw)) - allowed)):
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
