"""The differential check's cases: seeded random instances, the call that solves each, and its
optimum by an oracle that uses none of odtk's formulations.

A case is one ``odtk.solve`` call: a model, a solver and a hand-off route (a *cell*), a small
random dataset (binary features ``x0, x1, …``, 2–3 classes, duplicated rows, label noise; for
the categorical model, feature groups of 2–4 values), the model's options drawn at random
(depth, λ, ``min_leaf``, α, ``min_support``, class weight, ``max_card``, integer or float
sample weights, the start) and what must come out: the optimum of the brute force
(:func:`brute_force.best_correct_by_splits`, :func:`subset_trees.best_score`), or, where no model
exists, the documented one-line error. Each objective below is written from its model's
documented definition, once, and gives both the oracle's optimum (over every tree) and the
re-scoring of the model a solve returns (:mod:`differential`).

Everything about a case comes from its seed ``(base, k)`` and its cell, so a case is re-drawn
by :func:`draw` alone; :func:`differential.reproducer` also prints it as plain Python.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brute_force import best_correct_by_splits
from subset_trees import best_score

TARGET = "class"
TREE_MILPS = ("flowoct", "benders", "oct", "binoct", "odd")
MILP_MODELS = (*TREE_MILPS, "categorical")
SAT_MODELS = ("sat-depth", "sat-size")
ROUTES = ("native", "pyomo")
MINIMISED = ("odd", "cp", "sat-depth", "sat-size")
GENEROUS_LIMIT = 300.0  # seconds: far above what these instances need (well under one)
TIME_LIMITED_SHARE = 0.1  # of the MILP cases: a tiny time limit on a larger instance (the bound's side)
# rows (before repeats) by depth, for ODD (the slowest) and the other models: solved in well under a second
ROWS = {False: {1: (4, 40), 2: (4, 24), 3: (4, 14)}, True: {1: (4, 30), 2: (4, 14), 3: (4, 8)}}
LABELS = ("no", "yes", "maybe")
TOPOLOGIES: dict[int | str, str | tuple] = {1: "last", "depth-2": ("node", "last", "last"),
              "depth-2.5": ("node", ("node", "last", "last"), "last")}  # subset_trees' nested tuples
# the documented one-line errors where no model exists
NO_PERFECT_TREE = "No consistent tree of depth|No tree classifies"
NO_MODEL = {"cp": "exceeds the", "categorical": "infeasible|no model meeting",
            "sat-depth": NO_PERFECT_TREE, "sat-size": NO_PERFECT_TREE}


@dataclass
class Case:
    """One solve to check: ``odtk.solve(model, frame, target="class", **options)``.

    ``optimum`` is the oracle's (None where no model exists: ``refusal`` is then the pattern
    of the documented error); ``limited``: a tiny time limit, where only the bound's side and
    the model's own score are checked."""

    model: str
    solver: str | None
    route: str | None
    seed: tuple[int, int]
    frame: pd.DataFrame
    options: dict[str, Any]
    optimum: float | None
    limited: bool = False
    refusal: str | None = None

    @property
    def cell(self) -> str:
        return cell_name(self.model, self.solver, self.route)

    @property
    def features(self) -> pd.DataFrame:
        return self.frame.drop(columns=TARGET)

    @property
    def weights(self) -> np.ndarray:
        given = self.options.get("sample_weight")
        return np.ones(len(self.frame)) if given is None else np.asarray(given, dtype=float)

    def call(self) -> dict[str, Any]:
        """The keyword arguments of ``odtk.solve`` after the model and the frame."""
        solver = {} if self.solver is None else {"solver": self.solver}
        route = {} if self.route is None else {"handoff": self.route}
        return {"target": TARGET, **solver, **route, **self.options}


def cell_name(model: str, solver: str | None, route: str | None) -> str:
    """``model/solver/route``, ``-`` for no solver choice (the CP search) or no route (the engines)."""
    return "/".join(part or "-" for part in (model, solver, route))


def cell_rng(model: str, solver: str | None, route: str | None, seed: tuple[int, int]) -> np.random.Generator:
    """The random stream of case ``seed = (base, k)`` of a cell: the same on every machine."""
    return np.random.default_rng([seed[0], zlib.crc32(cell_name(model, solver, route).encode()), seed[1]])


def draw(model: str, solver: str | None, route: str | None, seed: tuple[int, int]) -> Case:
    """Case ``seed`` of the cell (model, solver, route), with its oracle's optimum."""
    rng = cell_rng(model, solver, route, seed)
    if model == "categorical":
        return _categorical_case(rng, Case(model, solver, route, seed, pd.DataFrame(), {}, None))
    if model in SAT_MODELS:
        return _sat_case(rng, Case(model, solver, route, seed, pd.DataFrame(), {}, None))
    limited = model in TREE_MILPS and rng.random() < TIME_LIMITED_SHARE
    depth = int(rng.choice([2, 3], p=[0.3, 0.7])) if limited else int(rng.choice([1, 2, 3], p=[0.4, 0.45, 0.15]))
    rows, features = ((40, 70), (6, 9)) if limited else (ROWS[model == "odd"][depth], (1, 5))
    frame = binary_frame(rng, rows, features)
    case = Case(model, solver, route, seed, frame, {"depth": depth}, None, limited)
    _tree_options(rng, case)
    _tree_optimum(case)
    return case


# --------------------------------------------------------------------------- instances
def binary_frame(rng: np.random.Generator, rows: tuple[int, int], features: tuple[int, int],
                 consistent: bool = False) -> pd.DataFrame:
    """0/1 columns ``x0, …`` (one at least varies), a random class for each distinct row with
    label noise (``consistent``: none), some rows repeated, 2–3 classes as numbers or text."""
    n, p = int(rng.integers(*rows, endpoint=True)), int(rng.integers(*features, endpoint=True))
    X = (rng.random((n, p)) < rng.uniform(0.15, 0.85, p)).astype(int)
    if (X == X[0]).all():
        X[-1, 0] = 1 - X[0, 0]
    k = int(rng.integers(2, 4))
    rule = {key: int(rng.integers(k)) for key in map(tuple, X)}  # equal rows, equal class
    y = np.array([rule[tuple(row)] for row in X])
    if not consistent:
        noisy = rng.random(n) < rng.uniform(0, 0.25)
        y[noisy] = rng.integers(0, k, noisy.sum())
    repeated = rng.integers(0, n, int(rng.integers(0, n // 3 + 2)))
    X, y = np.vstack([X, X[repeated]]), np.concatenate([y, y[repeated]])
    if len(set(y)) < 2:  # a second class: every row alike the first (not all are) changes class
        y[(X == X[0]).all(axis=1)] = (y[0] + 1) % k
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame[TARGET] = [LABELS[c] for c in y] if rng.random() < 0.3 else y
    return frame


def draw_weights(rng: np.random.Generator, n: int, integral: bool = False) -> list | None:
    """None (two times in five; half of the time with ``integral``), whole numbers 0–4 (zeros
    in a third of the draws), or floats 0–3 to three decimals; the first row weighs 1 at least."""
    kind = rng.choice(["none", "integers", "floats"], p=[0.4, 0.3, 0.3] if not integral else [0.5, 0.5, 0])
    if kind == "none":
        return None
    if kind == "integers":
        weights = rng.integers(0, 5, n) if rng.random() < 0.3 else rng.integers(1, 5, n)
    else:
        weights = np.round(rng.uniform(0.0, 3.0, n), 3)
    weights[0] = max(weights[0], 1)
    return weights.tolist()


def class_codes(frame: pd.DataFrame) -> tuple[np.ndarray, int]:
    """The target as class indices (sorted labels) and the number of classes."""
    classes, codes = np.unique(frame[TARGET].astype(str), return_inverse=True)
    return codes, len(classes)


# --------------------------------------------------------------------------- trees on binary features
def _tree_options(rng: np.random.Generator, case: Case) -> None:
    """The options of a tree model beside its depth: λ, ``min_leaf``, α, ``min_support``, sample
    weights, the start and the time limit."""
    model, options = case.model, case.options
    if model in ("flowoct", "benders", "oct"):
        options["lam"] = 0.0 if rng.random() < 0.4 else round(float(rng.uniform(0, 0.6)), 3)
    if model == "oct":
        options["min_leaf"] = int(rng.choice([0, 1, 1, 2, 3]))
    if model == "odd":
        options.update(tree=True, univariate=True, strategy=str(rng.choice(["milp", "both"])),
                       alpha=float(rng.choice([0.0, 0.01, round(float(rng.uniform(0, 0.5)), 3)])))
        if options["strategy"] == "both":
            options["heuristic_time"] = 0.2
    if model == "cp":
        options["min_support"] = int(rng.choice([1, 1, 2, 3, 5]))
    weights = draw_weights(rng, len(case.frame), integral=model == "cp")
    if weights is not None:
        options["sample_weight"] = weights
    if model in ("flowoct", "benders", "oct", "binoct"):
        start = rng.choice(["auto", "none", "cart"], p=[0.5, 0.3, 0.2])
        if start != "auto":
            options["warm_start"] = None if start == "none" else str(start)
    options["time_limit"] = round(float(rng.uniform(1.0, 2.5)), 2) if case.limited else GENEROUS_LIMIT


def _tree_optimum(case: Case) -> None:
    """The oracle's optimum of a tree model over every tree of the case's depth."""
    X = case.features.to_numpy()
    y, k = class_codes(case.frame)
    depth, weights = case.options["depth"], case.weights
    if case.model == "oct":
        best = best_correct_by_splits(X, y, k, depth, weights, min_leaf=case.options["min_leaf"])
    elif case.model == "cp":
        best = best_correct_by_splits(X, y, k, depth, weights, size=weights, min_leaf=case.options["min_support"])
    else:
        best = best_correct_by_splits(X, y, k, depth, weights)
    values = [tree_objective(case, correct, splits) for splits, correct in enumerate(best) if correct > -np.inf]
    if values:
        case.optimum = float(min(values) if case.model in MINIMISED else max(values))
    else:
        case.refusal = NO_MODEL[case.model]


def tree_objective(case: Case, correct: float, splits: int) -> float:
    """The objective of a tree with ``splits`` splits classifying rows of weight ``correct``
    right, as each model's documentation defines it."""
    options, total = case.options, case.weights.sum()
    if case.model in ("flowoct", "benders", "oct"):
        return (1 - options["lam"]) * correct - options["lam"] * splits
    if case.model == "binoct":
        return correct
    if case.model == "cp":
        return total - correct
    non_root = 2 ** options["depth"] - 2  # ODD: (18) with α × (internal nodes − 1) / (skeleton nodes − 1)
    penalty = options["alpha"] * max(splits - 1, 0) / non_root if non_root else 0.0
    return (total - correct) / total + penalty


# --------------------------------------------------------------------------- SAT inference
def _sat_case(rng: np.random.Generator, case: Case) -> Case:
    """Consistent data (a tenth not: the documented refusal), a depth cap of 2–4, the smallest
    perfect tree's depth (sat-depth) or nodes at that depth (sat-size)."""
    consistent = rng.random() >= 0.1
    case.frame = binary_frame(rng, (4, 12), (2, 5), consistent=consistent)
    if not consistent:
        i = int(rng.integers(len(case.frame)))
        case.frame = pd.concat([case.frame, case.frame.iloc[[i]]], ignore_index=True)
        labels = sorted(set(case.frame[TARGET]), key=str)
        case.frame.loc[len(case.frame) - 1, TARGET] = next(c for c in labels if c != case.frame[TARGET][i])
    case.options = {"depth": int(rng.integers(2, 5)), "time_limit": GENEROUS_LIMIT}
    X, (y, k) = case.features.to_numpy(), class_codes(case.frame)
    for depth in range(1, case.options["depth"] + 1):
        best = best_correct_by_splits(X, y, k, depth)
        if best.max() == len(y):
            splits = int(np.flatnonzero(best == len(y))[0])
            case.optimum = float(depth if case.model == "sat-depth" else 2 * splits + 1)
            return case
    case.refusal = NO_MODEL[case.model]
    return case


# --------------------------------------------------------------------------- categorical trees
def _categorical_case(rng: np.random.Generator, case: Case) -> Case:
    """Groups of 2–4 values (each ordered with probability 0.4: numbers, else text), a binary
    class, the options of Günlük et al.'s model and the subset-tree oracle's optimum."""
    n = int(rng.integers(6, 21))
    topology = list(TOPOLOGIES)[int(rng.choice(len(TOPOLOGIES), p=[0.3, 0.5, 0.2]))]
    n_values = [int(v) for v in rng.integers(2, 5, 1 if topology == "depth-2.5" else int(rng.integers(1, 4)))]
    n_values += [2] if topology == "depth-2.5" else []
    values = np.column_stack([np.concatenate([np.arange(m), rng.integers(0, m, n - m)]) for m in n_values])
    ordinal = [bool(flag) for flag in rng.random(len(n_values)) < 0.4]
    positive = rng.random(n) < rng.uniform(0.2, 0.8)
    positive[:2] = [True, False]
    frame = pd.DataFrame({f"g{g}": 10 * (values[:, g] + 1) if flag else [f"v{v}" for v in values[:, g]]
                          for g, flag in enumerate(ordinal)})
    frame[TARGET] = np.where(positive, "pos", "neg")
    case.frame = frame
    case.options = {("depth" if topology == 1 else "skeleton"): topology, "positive_class": "pos",
                    "class_weight": 1.0 if rng.random() < 0.5 else round(float(rng.uniform(0.2, 3.0)), 2),
                    "time_limit": GENEROUS_LIMIT}
    max_card = rng.choice([0, 0, 1, 2])
    if max_card:
        case.options["max_card"] = int(max_card)
    if rng.random() < 0.2:
        case.options["min_leaf"] = int(rng.integers(2, 4))
    if rng.random() < 0.3:
        case.options["warm_start"] = None
    weights = draw_weights(rng, n)
    if weights is not None:
        case.options["sample_weight"] = weights
    optimum = best_score(values, positive, TOPOLOGIES[topology], n_values, ordinal, C=case.options["class_weight"],
                         max_card=case.options.get("max_card"), min_leaf=case.options.get("min_leaf", 1),
                         sample_weight=case.weights)
    if optimum > -np.inf:
        case.optimum = float(optimum)
    else:
        case.refusal = NO_MODEL["categorical"]
    return case


def categorical_objective(case: Case, correct: np.ndarray) -> float:
    """Correct positives + class_weight × correct negatives, each row counted by its weight."""
    positive = case.frame[TARGET].to_numpy() == "pos"
    weights = case.weights * correct
    return float(weights[positive].sum() + case.options["class_weight"] * weights[~positive].sum())
