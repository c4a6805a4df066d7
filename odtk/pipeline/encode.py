"""Stage 1: the training data as arrays: classes, binary / scaled / one-hot features, thresholds.

``thresholds="auto"`` (the default) keeps what a model can work on within its budget: about ten
quantile thresholds per numeric column plus those scikit-learn's CART of the model's depth
tests (the SAT models, which must classify every row, keep every midpoint; the CP search keeps
every midpoint when their number fits its cap for the size of the data,
:func:`odtk.engines.cp_search.threshold_cap`, and caps the quantiles by it otherwise). The
papers' settings stay available by name (``"midpoints"``, ``"values"``, ``"quantiles"``).
"""
from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

if sys.platform != "win32":  # Windows: no address-space limits to honour
    import resource

import networkx as nx
import numpy as np
import pandas as pd

from odtk.datasets import Dataset, FeatureEncoder, from_dataframe, load_dataset
from odtk.datasets.encoders import DEFAULT_QUANTILES
from odtk.datasets.inputs import from_arrays
from odtk.exceptions import ConfigError, DataError, OdtkWarning
from odtk.models import DecisionGraph
from odtk.pipeline.methods import MODULES, is_engine, method
from odtk.warn import warn

LARGE_BINARY = 1000  # binary features beyond which a MILP build warns
BYTES_PER_CELL = 1000  # MILP build memory per row × node × column, at most (measured: 125–700)


def as_dataset(data: Any, target: str | int | None = None) -> Dataset:
    """A :class:`Dataset` from a bundled name, a Dataset, a DataFrame + target, or ``(X, y)``."""
    if isinstance(data, Dataset):
        return data
    if isinstance(data, str):
        return load_dataset(data)
    if isinstance(data, pd.DataFrame):
        if target is None:
            raise DataError("A DataFrame needs target=<column name> to say which column is the class.")
        return from_dataframe(data, target)
    if isinstance(data, tuple) and len(data) == 2:
        return from_arrays(*data)
    raise DataError(f"Cannot use data of type {type(data).__name__}; pass a dataset name, "
                    "a Dataset, a DataFrame with target=..., or a tuple (X, y).")


def group_vector(dataset: Dataset, groups: str | list[str] | tuple[str, ...] | None,
                  module: ModuleType) -> np.ndarray | None:
    """The protected groups: from one column ``groups`` of two values, a 0/1 vector (1 = the
    second value in sorted order); from two 0/1 columns ``[g1, g2]``, their n × 2 memberships
    (two subgroups, which may overlap)."""
    if groups is None:
        return None
    if "fairness" not in module.CHOICES:
        raise ConfigError(f"Model {module.KEY!r} has no fairness constraints; drop groups=….")
    names = [groups] if isinstance(groups, str) else list(groups)
    if len(names) not in (1, 2):
        raise ConfigError(f"groups names one column or two subgroup columns; got {len(names)}.")
    for name in names:
        if name not in dataset.features.columns:
            raise DataError(f"Group column {name!r} not found among the features of '{dataset.name}'.")
    if len(names) == 2:
        return np.column_stack([_membership(dataset.features[name], name) for name in names])
    values = sorted(dataset.features[groups].unique().tolist(), key=str)
    if len(values) != 2:
        raise DataError(f"Group column {groups!r} must have exactly two values, found {len(values)}.")
    return (dataset.features[groups] == values[1]).to_numpy().astype(int)


def _membership(column: pd.Series, name: str) -> np.ndarray:
    """A subgroup column's 0/1 (or boolean) memberships."""
    if not column.isin([0, 1]).all():
        raise DataError(f"Subgroup column {name!r} must hold 0/1 (member or not) in every row.")
    return column.to_numpy().astype(int)


class Problem:
    """Encoded training data and everything a formulation needs to be built."""

    counts: np.ndarray | None = None  # rows each row stands for, once duplicates are merged (no sample weights)

    def __init__(self, module: ModuleType, dataset: Dataset, thresholds: str,
                 max_thresholds: int | None, group: np.ndarray | None, positive_class: Any = None,
                 sample_weight: np.ndarray | None = None, depth: int | None = None, seed: int | None = None,
                 seconds: float | None = None):
        self.module = module
        self.dataset = dataset
        self.classes = _class_order(module, np.unique(dataset.target.to_numpy()), positive_class)
        self.y = pd.Index(self.classes).get_indexer(dataset.target)
        if len({str(c) for c in self.classes}) < len(self.classes):
            raise DataError(f"Target {dataset.target.name!r} has classes that read alike as text "
                            f"({', '.join(map(repr, self.classes))}); give each class a distinct label.")
        if thresholds == "auto":
            thresholds = getattr(module, "AUTO_THRESHOLDS", thresholds)
        if thresholds == "auto" and max_thresholds is None and hasattr(module, "threshold_cap"):
            kinds = list(dataset.kinds.values())
            cap = module.threshold_cap(len(dataset.target), kinds.count("numeric"), depth, seconds,
                                       n_classes=len(self.classes), n_binary=kinds.count("binary"))
            if _most_midpoints(dataset) <= cap:  # every midpoint fits: the exact encoding
                thresholds = "midpoints"
            else:
                max_thresholds = min(cap, DEFAULT_QUANTILES)  # as the MILPs': comparable optima
        self.encoder = FeatureEncoder(mode=module.FEATURES, thresholds=thresholds,
                                      max_thresholds=max_thresholds).fit(dataset)
        if thresholds == "auto" and module.FEATURES == "binary":
            keep = _cart_thresholds(dataset, self.encoder, self.y, depth, sample_weight, seed)
            self.encoder = FeatureEncoder(mode="binary", thresholds="auto",
                                          max_thresholds=max_thresholds).fit(dataset, keep=keep)
        check_encoding_size(len(self.y), len(self.encoder.columns_))
        self.X = self.encoder.transform(dataset)
        _warn_if_large(module, self.X.shape)
        self.weights: dict[str, Any] = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.extra: dict[str, Any] = {**self.weights, **({} if group is None else {"group": group})}
        if module.FEATURES == "onehot":
            self.extra.update(groups=list(self.encoder.groups_.values()),
                              ordinal=[kind == "numeric" for kind in self.encoder.kinds_.values()])

    def graph(self, decoded: nx.DiGraph) -> DecisionGraph:
        return DecisionGraph(decoded, self.encoder.columns_, [str(c) for c in self.classes])

    def score(self, graph: DecisionGraph, skeleton: nx.DiGraph, hyper: dict) -> tuple[float, float]:
        """(objective re-computed from the graph's own predictions, training accuracy)."""
        predicted = graph.predict_index(self.X)
        objective = self.module.objective_of(graph.graph, predicted, self.y, skeleton, **hyper, **self.weights)
        return objective, float(np.mean(predicted == self.y))


def _most_midpoints(dataset: Dataset) -> int:
    """The most midpoints any numeric column of ``dataset`` has (0 without numeric columns)."""
    numeric = [name for name, kind in dataset.kinds.items() if kind == "numeric"]
    return max((dataset.features[name].nunique() - 1 for name in numeric), default=0)


def _cart_thresholds(dataset: Dataset, quantiles: FeatureEncoder, y: np.ndarray, depth: int | None,
                     sample_weight: np.ndarray | None, seed: int | None) -> dict[str, np.ndarray]:
    """Numeric column → the thresholds scikit-learn's CART of ``depth`` tests on it, CART being
    fitted on the raw numeric columns beside the encoding of the other columns (a numeric
    column's quantile columns would only repeat thresholds CART finds on the column itself).
    A tree of depth 0, a single leaf, tests nothing: no thresholds to add."""
    numeric = [name for name, kind in quantiles.kinds_.items() if kind == "numeric"]
    if not numeric or depth == 0:
        return {}
    raw = dataset.features[numeric].apply(pd.to_numeric).to_numpy(dtype=float)
    fits = np.all(np.abs(raw) < np.finfo(np.float32).max, axis=0)  # CART computes in float32
    numeric, raw = [name for name, ok in zip(numeric, fits) if ok], raw[:, fits]
    if not numeric:
        return {}
    others = [k for name, kind in quantiles.kinds_.items() if kind != "numeric" for k in quantiles.groups_[name]]
    from sklearn.tree import DecisionTreeClassifier

    cart = DecisionTreeClassifier(max_depth=depth, random_state=seed or 0)
    encoded = quantiles.transform(dataset, columns=others) if others else np.zeros((len(y), 0))
    cart.fit(np.hstack([raw, encoded]), y, sample_weight=sample_weight)
    tested, threshold = cart.tree_.feature, cart.tree_.threshold
    return {name: threshold[tested == column] for column, name in enumerate(numeric)}


def _warn_if_large(module: ModuleType, shape: tuple[int, int]) -> None:
    """A warning when a MILP on binary features gets more columns than it usually solves."""
    if module.FEATURES == "binary" and not is_engine(module) and shape[1] > LARGE_BINARY:
        warn(f"{shape[1]} binary features for {shape[0]} rows: the model may be too large to "
             f"solve in reasonable time; thresholds='auto' (--thresholds auto) or max_thresholds "
             f"keep about 10 thresholds per numeric feature.", OdtkWarning)


def sample_weight_of(module: ModuleType, weights: Any, n_rows: int) -> np.ndarray | None:
    """The checked per-row weights, or ConfigError naming the models that take them."""
    if weights is None:
        return None
    if not getattr(module, "SAMPLE_WEIGHT", False):
        takers = sorted(key for key in MODULES if getattr(method(key), "SAMPLE_WEIGHT", False))
        raise ConfigError(f"Model {module.KEY!r} takes no sample_weight; models that do: {', '.join(takers)}.")
    try:
        weights = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"sample_weight must hold one number per row ({n_rows}); it holds values that are no "
                        "numbers.") from None
    if weights.shape != (n_rows,):
        raise DataError(f"sample_weight must hold one finite, non-negative number per row ({n_rows}); "
                        f"got shape {weights.shape}.")
    bad = ~(weights >= 0) | np.isinf(weights)  # negative, NaN or infinite
    if bad.any():
        row, more = int(np.argmax(bad)), int(bad.sum()) - 1
        others = f" ({more} more row{'s' * (more != 1)} with a negative, missing or infinite weight)" * bool(more)
        raise DataError(f"sample_weight gives row {row} the weight {weights[row]:g}{others}; give every row a "
                        "finite weight of 0 or more (0 leaves the row out).")
    if not weights.sum() > 0:
        raise DataError("sample_weight must give some row a positive weight; all weights are zero.")
    return weights


def _class_order(module: ModuleType, classes: np.ndarray, positive_class: Any) -> np.ndarray:
    """The sorted class labels, or for a binary model ``[negative, positive_class]``."""
    if positive_class is None:
        return classes
    if not hasattr(module, "POSITIVE"):
        raise ConfigError(f"Model {module.KEY!r} has no positive class; drop positive_class=….")
    matches = [k for k, c in enumerate(classes) if c == positive_class or str(c) == str(positive_class)]
    if len(classes) != 2 or not matches:
        raise DataError(f"positive_class={positive_class!r} must be one of the two classes; "
                        f"the target has {', '.join(map(str, classes))}.")
    order = [1 - matches[0], matches[0]]  # [negative, positive]
    return classes[order if module.POSITIVE == 1 else order[::-1]]


def free_memory() -> int | None:
    """Bytes of memory this process may still take: the system's free memory, and what is left
    under an address-space limit (``ulimit -v``); None where the system does not say."""
    sizes = []
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        sizes.append(os.sysconf("SC_AVPHYS_PAGES") * page)
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as statm:
                sizes.append(soft - int(statm.read().split()[0]) * page)
    except (AttributeError, NameError, ValueError, OSError):
        pass
    return min(sizes) if sizes else None


def gigabytes(size: float) -> str:
    return f"{size / 2**30:.1f} GB"


def check_encoding_size(rows: int, columns: int) -> None:
    """A DataError before encoding a matrix larger than the free memory."""
    free = free_memory()
    if free is not None and rows * columns > free / 2:
        raise DataError(f"Encoding {rows:,} rows as {columns:,} binary columns needs "
                        f"{gigabytes(rows * columns)}, more than half the {gigabytes(free)} of free "
                        "memory; use fewer thresholds (thresholds='auto' / --thresholds auto, or "
                        "--max-thresholds 10) or a sample of the rows.")


def check_model_size(problem: Problem, shape: nx.DiGraph, compiled: bool = False) -> None:
    """A DataError before building a MILP whose estimated memory exceeds the free memory.

    The formulations have a constraint per row and node over the columns, so their memory
    grows as rows × nodes × (columns + classes); ``BYTES_PER_CELL`` is the most measured per
    such cell (dense binary columns) through Pyomo, or its compiler's when the instance is
    ``compiled`` from arrays (:func:`odtk.compiled.bytes_per_cell`)."""
    free = free_memory()
    rows, columns = problem.X.shape
    cells = rows * len(shape) * (columns + len(problem.classes))
    if compiled:
        from odtk.compiled import bytes_per_cell

        needed = cells * bytes_per_cell(problem.module)
    else:
        needed = cells * getattr(problem.module, "BYTES_PER_CELL", BYTES_PER_CELL)
    if free is not None and needed > free:
        raise DataError(f"The {problem.module.KEY} MILP for {rows:,} rows, {len(shape)} nodes and {columns:,} "
                        f"columns would need about {gigabytes(needed)} of memory to build, more than the "
                        f"{gigabytes(free)} free; use a sample of the rows, a smaller depth or skeleton, "
                        "fewer thresholds (--thresholds auto), or the CP search (--model cp).")
