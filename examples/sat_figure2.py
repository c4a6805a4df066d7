"""Figure 2 of Avellaneda, "Efficient Inference of Optimal Decision Trees": the artificial data.

The paper draws 1000 random *generators*, decision trees of depth 5 over 10 Boolean features
and 2 classes, labels random examples with them and plots, against the number of examples, the
average time of DT_depth, DT_size and J48 (Weka's C4.5, post-pruning, MDL correction and the
minimum of examples per leaf turned off; solid lines) and the share of inferred trees
*equivalent* to their generator (dotted lines). Its data is not published; this module draws
it the same way:

* a generator is a perfect tree of depth 5 whose nodes test features drawn uniformly among
  those not tested above them, with uniformly random leaf classes, drawn again until its
  simplest form (one-class subtrees merged) still has depth 5 — the paper does not say how
  it draws them;
* the examples of generator g are uniform random Boolean vectors (seed g), labelled by it,
  written once (as many as the largest N); a run on N examples trains on N of them drawn at
  random (``train_rows: N``), which are N random examples as well;
* a tree is equivalent to its generator when both classify the 1024 Boolean vectors alike;
* J48 is not run (Weka is Java): :func:`c45` is C4.5 grown the same way (gain ratio among the
  tests with at least the average information gain, a node split while its examples disagree,
  an empty branch predicting its parent's majority), so its equivalence shares stand in for
  J48's, and its times, this module's numpy code, are not J48's.

The paper gives two numbers: J48 is equivalent in 80 % of cases at 1800 examples, and
DT_depth is faster than J48 beyond 1800 examples; both are drawn beside odtk's curves.
"""
from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pandas as pd

from odtk.datasets import Dataset
from odtk.engines.nested_trees import Tree, predict, simplify, tree_depth
from odtk.files import write_atomic

FEATURES, DEPTH = 10, 5
COLUMNS = [f"x{i}" for i in range(FEATURES)]
INPUTS = ((np.arange(2 ** FEATURES)[:, None] >> np.arange(FEATURES)) & 1).astype(bool)  # every vector
J48_SHARE, CROSSOVER = 80.0, 1800  # the paper: J48 80 % equivalent at 1800 examples; DT_depth faster beyond
PAPER_GENERATORS = 1000
ALGORITHMS = {"sat-depth": "DT_depth", "sat-size": "DT_size", "c45": "J48_stand-in"}  # no spaces: table cells
STYLE = {"sat-depth": "tab:blue", "sat-size": "tab:orange", "c45": "tab:green"}
PLATEAU = 90.0  # "enough examples": from the first N where the algorithm's share equivalent reaches this
FLAT = 1.5  # "almost constant": the mean CPU time varies by at most this factor on the plateau


def generator(seed: int) -> Tree:
    """The random generator tree ``seed`` (see the module's description)."""
    rng = np.random.default_rng(seed)

    def grow(depth: int, used: frozenset) -> Tree:
        if depth == 0:
            return ("leaf", int(rng.integers(2)))
        feature = int(rng.choice([f for f in range(FEATURES) if f not in used]))
        return (feature, grow(depth - 1, used | {feature}), grow(depth - 1, used | {feature}))
    while True:
        tree = grow(DEPTH, frozenset())
        if tree_depth(simplify(tree, INPUTS)) == DEPTH:
            return tree


def examples(seed: int, count: int) -> pd.DataFrame:
    """The first ``count`` examples of generator ``seed``: random vectors and its classes."""
    X = np.random.default_rng([seed, 1]).integers(0, 2, size=(count, FEATURES)).astype(bool)
    labels = predict(generator(seed), X).astype(int)
    return pd.DataFrame(X.astype(int), columns=COLUMNS).assign(target=labels)


def write_examples(folder: Path, seeds: list[int], count: int) -> dict[int, Path]:
    """One CSV file per generator with its first ``count`` examples; a file already holding
    them is left as it is (its digest then names the same runs)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for seed in seeds:
        path = folder / f"generator{seed}-{count}.csv"
        text = examples(seed, count).to_csv(index=False)
        if not path.exists() or path.read_text() != text:
            write_atomic(path, text, force=True)
        paths[seed] = path.resolve()
    return paths


def c45(X: np.ndarray, y: np.ndarray, parent: int = 0) -> Tree:
    """C4.5 grown without pruning on Boolean features and two classes (J48 as the paper ran it)."""
    if len(y) == 0:
        return ("leaf", parent)
    counts = np.bincount(y, minlength=2)
    majority = int(counts.argmax())
    ones = X.sum(axis=0)
    both = (ones > 0) & (ones < len(y))
    if counts.max() == len(y) or not both.any():
        return ("leaf", majority)
    positive = X[y == 1].sum(axis=0)
    remainder = (_entropy(positive, ones) * ones + _entropy(counts[1] - positive, len(y) - ones) * (len(y) - ones))
    gain = _entropy(counts[1], len(y)) - remainder / len(y)
    ratio = gain / np.where(both, _entropy(ones, len(y)), 1.0)
    candidates = both & (gain >= gain[both].mean() - 1e-3)  # Weka's tolerance
    feature = int(np.flatnonzero(candidates)[np.argmax(ratio[candidates])])
    right = X[:, feature]
    return (feature, c45(X[~right], y[~right], majority), c45(X[right], y[right], majority))


def _entropy(positive: np.ndarray | int, total: np.ndarray | int) -> np.ndarray:
    """Entropy (bits) of two classes with ``positive`` of ``total`` examples in the second."""
    positive, total = np.broadcast_arrays(np.asarray(positive, dtype=float), np.asarray(total, dtype=float))
    p = np.divide(positive, total, out=np.zeros(total.shape), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nan_to_num(p * np.log2(p)) - np.nan_to_num((1 - p) * np.log2(1 - p))


def stand_in(seed: int, train: Dataset) -> dict:
    """The C4.5 stand-in on a run's training rows of generator ``seed``: its CPU seconds and
    whether its tree is equivalent to the generator."""
    start = time.process_time()
    tree = c45(train.features[COLUMNS].to_numpy(dtype=bool), train.target.to_numpy(dtype=int))
    seconds = time.process_time() - start
    same = np.array_equal(predict(tree, INPUTS).astype(int), predict(generator(seed), INPUTS).astype(int))
    return {"method": "c45", "generator": seed, "examples": train.n_rows, "proven": True, "cpu_sec": seconds,
            "equivalent": bool(same)}


def equivalent(model, seed: int) -> bool:
    """Whether a trained odtk model classifies every Boolean vector as generator ``seed``."""
    predicted = model.predict(pd.DataFrame(INPUTS.astype(int), columns=COLUMNS))
    return bool(np.array_equal(predicted.astype(int), predict(generator(seed), INPUTS).astype(int)))


def points(records: pd.DataFrame) -> list[dict]:
    """Figure 2's plotted points: per algorithm and N, the mean CPU seconds and the share (%)
    of trees equivalent to their generator, with how many runs are proven."""
    rows = []
    for (method, count), group in records.groupby(["method", "examples"], sort=True):
        paper = J48_SHARE if method == "c45" and count == CROSSOVER else np.nan
        rows.append({"algorithm": ALGORITHMS[method], "examples": count, "generators": len(group),
                     "status": "heuristic" if method == "c45" else "optimal" if group["proven"].all() else "unproven",
                     "proven": "-" if method == "c45" else f"{int(group['proven'].sum())}/{len(group)}",
                     "cpu_sec": group["cpu_sec"].mean(), "equivalent_pct": 100 * group["equivalent"].mean(),
                     "paper_equivalent_pct": paper, "method": method})
    return rows


def plot(rows: list[dict], generators: int) -> bytes:
    """Figure 2 as a PNG: mean CPU seconds (solid, left) and % equivalent (dotted, right) per N."""
    from matplotlib.figure import Figure  # Agg canvas: no display, no pyplot state

    figure = Figure(figsize=(8, 5))
    times = figure.subplots()
    shares = times.twinx()
    frame = pd.DataFrame(rows)
    for method in ALGORITHMS:
        group = frame[frame["method"] == method]
        label = ALGORITHMS[method]
        times.plot(group["examples"], group["cpu_sec"], "-", color=STYLE[method], label=f"{label}: time")
        shares.plot(group["examples"], group["equivalent_pct"], ":", marker=".", color=STYLE[method],
                    label=f"{label}: % equivalent")
    shares.plot([CROSSOVER], [J48_SHARE], "*", color=STYLE["c45"], markersize=14,
                label=f"paper: J48 {J48_SHARE:g} % equivalent at {CROSSOVER}")
    times.axvline(CROSSOVER, color="grey", linestyle="--", linewidth=0.8,
                  label=f"paper: DT_depth faster than J48 beyond {CROSSOVER}")
    times.set(xlabel="learning examples", ylabel="mean CPU seconds (odtk's search; C4.5: numpy)", yscale="log",
              title=f"Figure 2 (Avellaneda 2020) with odtk: {generators} generators of depth {DEPTH}, "
                    f"{FEATURES} features (paper: {PAPER_GENERATORS})")
    shares.set(ylabel="% of trees equivalent to the generator", ylim=(-3, 103))
    handles = [h for axes in (times, shares) for h in axes.get_legend_handles_labels()[0]]
    times.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="center right")
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=150, bbox_inches="tight")
    return image.getvalue()


def verdicts(rows: list[dict], generators: int) -> list[str]:
    """One line per claim of Figure 2 (no times in them: they change with the machine's load)."""
    frame = pd.DataFrame(rows).set_index(["method", "examples"])
    counts = sorted(frame.index.get_level_values("examples").unique())
    share = frame["equivalent_pct"]
    lines = []
    for method in ("sat-depth", "sat-size"):
        behind = [(share[method, n] - share["c45", n], n) for n in counts if share[method, n] < share["c45", n]]
        detail = (f"{ALGORITHMS[method]} behind at N = {', '.join(f'{n} by {-d:.0f} points' for d, n in behind)}"
                  if behind else f"{ALGORITHMS[method]} at least as often equivalent at every N of {counts}")
        lines.append(f"claim: Figure 2: {ALGORITHMS[method]} needs fewer examples than J48 to infer the "
                     f"generators: {'disagrees' if behind else 'agrees'} ({detail}; J48: the C4.5 stand-in)")
    for method in ("sat-depth", "sat-size"):
        reached = [n for n in counts if share[method, n] >= PLATEAU]
        plateau = [n for n in counts if reached and n >= reached[0]]
        claim = f"claim: Figure 2: {ALGORITHMS[method]}'s time becomes almost constant once enough examples are given"
        if len(plateau) < 2:
            lines.append(f"{claim}: not shown at this scale (fewer than two N with ≥ {PLATEAU:g} % equivalent)")
            continue
        cpu = frame.loc[[(method, n) for n in plateau], "cpu_sec"]
        flat = cpu.max() <= FLAT * cpu.min()
        lines.append(f"{claim}: {'agrees' if flat else 'disagrees'} (mean CPU time within a factor {FLAT:g} "
                     f"from N = {plateau[0]} to {plateau[-1]}: {'yes' if flat else 'no'})")
    claim = f"claim: Figure 2: J48 is equivalent to the generators in {J48_SHARE:g} % of cases at {CROSSOVER} examples"
    reasons = ([f"{generators} generators, the paper {PAPER_GENERATORS}"] if generators < 100 else []) + (
        [] if CROSSOVER in counts else [f"no N = {CROSSOVER}"])
    if reasons:
        lines.append(f"{claim}: not shown at this scale ({'; '.join(reasons)})")
    else:
        ours = share["c45", CROSSOVER]
        lines.append(f"{claim}: {'agrees' if abs(ours - J48_SHARE) <= 10 else 'disagrees'} (C4.5 stand-in "
                     f"{ours:.0f} %, within 10 points: {'yes' if abs(ours - J48_SHARE) <= 10 else 'no'})")
    lines.append(f"claim: Figure 2: DT_depth is faster than J48 beyond {CROSSOVER} examples: not shown (J48 is "
                 "Weka's Java program; the stand-in's time is this script's numpy code)")
    return lines
